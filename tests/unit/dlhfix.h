/* dlhfix: the recorded devlink health fixtures (tests/fixtures/devlink/,
 * written by `test_devlink_health --write-fixtures DIR`, one set for the
 * system tests by `--write-set`) and the helpers the devlink health unit
 * tests share: feeding replies, reading diagnose counters, opening the
 * source on a fixture set. */
#ifndef NICSTALL_TEST_DLHFIX_H
#define NICSTALL_TEST_DLHFIX_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"
#include "collectors/counters/devlink_health.h"

#include "dlhmodel.h"

struct json_object;

/* One file of a fixture set: its name, its comment, what builds it. */
struct fixfile {
	const char *name, *comment;
	void (*make)(struct buf *b, const struct card *c);
};

/* The sets: cx6dx-k6.8 and cx6dx-k5.15-novnic. */
struct fixset {
	const char *dir;
	const struct card *card;
	const struct fixfile *files;
};
extern const struct fixset dlf_sets[2];

/* Hostile replies: what a broken or malicious kernel (or a corrupted
 * recording) could hand over (FIXDIR/hostile/). */
struct hostile_fix {
	const char *name, *comment;
	void (*make)(struct buf *b);
};
extern const struct hostile_fix dlf_hostile[5];

/* the files of the sets, as the card answers */
void dlf_mk_family(struct buf *b, const struct card *c);
void dlf_mk_dev(struct buf *b, const struct card *c);
void dlf_mk_port(struct buf *b, const struct card *c);
void dlf_mk_health(struct buf *b, const struct card *c);
void dlf_mk_vnic(struct buf *b, const struct card *c);
void dlf_mk_rx(struct buf *b, const struct card *c);
void dlf_mk_fw(struct buf *b, const struct card *c);
void dlf_mk_fw_fatal(struct buf *b, const struct card *c);
void dlf_mk_rx_dump(struct buf *b, const struct card *c);

/* the hostile files */
void dlf_mk_truncated(struct buf *b);
void dlf_mk_garbage(struct buf *b);
void dlf_mk_hugelen(struct buf *b);
void dlf_mk_zerolen(struct buf *b);
void dlf_mk_open_fmsg(struct buf *b);

/* --write-fixtures ROOT, --write-set DIR [options]: 0 or an exit code */
int dlf_write_fixtures(const char *root);
int dlf_write_set(int argc, char **argv);

/* The working directory: the repository root (where FIXDIR is). */
void dlf_to_repo_root(void);
/* Feed one chunk in a buffer of exactly its size (ASan sees any
 * over-read); parse_reply feeds a whole reply and asserts it completes. */
int dlf_feed_exact(struct dlh_reply *r, const void *p, size_t len, uint32_t seq,
	       char *err, size_t errlen);
void dlf_parse_reply(const struct buf *b, int dump, struct dlh_reply *r);
/* A diagnose counter by name (fails the test when missing) / is it there. */
uint64_t dlf_diag_val(const struct dlh_diag *d, const char *name);
int dlf_diag_has(const struct dlh_diag *d, const char *name);
/* The fmsg of a DIAGNOSE reply for reporter rep: dlh_parse_fmsg's result
 * (-EAGAIN when the reply is not complete). */
int dlf_fmsg_of(const struct buf *b, const char *rep, struct dlh_diag *d,
	    struct json_object **tree, char *e, size_t elen);
int dlf_lay_find(const struct clayout *l, const char *name);
/* A copy of fixture set `set` in a new temp dir (to swap files), removed
 * by rm_set. */
void dlf_copy_set(const char *set, char *dir, size_t len);
void dlf_rm_set(const char *dir);
/* The devlink health source of port p0 opened on fixture dir (asserts). */
void dlf_open_fixture(struct src *s, const char *dir, const char *ifname,
		  const char *const *diag);

#endif
