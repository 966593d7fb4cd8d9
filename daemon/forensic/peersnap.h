/* peersnap: this daemon's side of a peer's "snapshot now" notice: every
 * port's counters, link and flows at once, the threads behind the
 * notice's flows, a second reading after peer_window, then the facts, a
 * bundle with verdict "peer-snapshot" and the signed summary the origin
 * classifies with. It reads and records; it never captures, pings, probes
 * or reprograms. The forensic sequence owns it (forensic.c) and keeps its
 * environment current across reloads; nothing here calls back into it. */
#ifndef NICSTALL_PEERSNAP_H
#define NICSTALL_PEERSNAP_H

#include <stddef.h>
#include <stdint.h>

struct bundler;
struct conf;
struct forensic_probes;
struct json_object;
struct loop;
struct peers;
struct ports;
struct rules;
struct stall;

/* What a snapshot reads and writes with, owned by the caller for as long
 * as the snapshots live; c and rules are read at each use (a reload
 * changes them). */
struct psnap_env {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	struct bundler *bundler;
	const struct forensic_probes *pr;
	const struct conf *c;
	const struct rules *rules;
	struct peers *peers;            /* NULL: no peer daemons */
};

struct psnaps;

/* NULL: out of memory. env is kept, not copied. */
struct psnaps *psnaps_new(const struct psnap_env *env);
/* Every snapshot under way dropped, unfinished. */
void psnaps_free(struct psnaps *P);
/* A peer's notice (peers_notice_fn): a snapshot starts now, its second
 * reading after peer_window; at most 8 at once (a ninth is logged and
 * not acted on). */
void psnaps_notice(struct psnaps *P, const char *peer, struct json_object *notice,
		   uint64_t mono, uint64_t real, uint64_t token);
/* This host's name for peers and bundles: the peers' host, else
 * host_name, else gethostname(). */
void psnap_host_name(const struct psnap_env *E, char *buf, size_t len);

#endif
