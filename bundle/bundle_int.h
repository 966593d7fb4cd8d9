/* bundle_int: what the bundle modules share; private to bundle/ (the
 * public header is bundle.h).
 *
 *   write.c     names and their checks, bundle_write, bundle_cleanup
 *   list.c      the bundles directory: open, scan, bundle_list, bundle_retention
 *   verify.c    SHA-256, SHA256SUMS, bundle_verify
 *   manifest.c  bundle_load_manifest (schema), bundle_read_file
 *   summary.c   bundle_summary
 *   summary_engines.c  its lines of the readers of unmodified engines
 *   summary_devlink.c  its "Devlink health" section
 *   summary_peers.c    its "Peers" section
 *   summary_verdict.c  its verdict lines and classify --explain's terms
 *   summary_values.c   a manifest value for people
 *
 * Every file of a bundle is opened beneath the bundle's directory fd through
 * lib/fsutil.h (O_NOFOLLOW at every component, regular files only, bounded). */
#ifndef NICSTALL_BUNDLE_INT_H
#define NICSTALL_BUNDLE_INT_H

#include <stddef.h>
#include <stdio.h>

#include <openssl/evp.h>

struct json_object;

#define SUMS_NAME      "SHA256SUMS"
#define MANIFEST_NAME  "manifest.json"
#define TMP_PREFIX     ".tmp-"
#define MAX_DEPTH      16                /* directories inside a bundle */
#define MAX_ENTRIES    100000            /* files of a bundle, bundles of a directory */
#define SUMS_MAX       (8u << 20)
#define MANIFEST_MAX   (32u << 20)
#define HASH_MAX       (64ull << 30)
#define COPY_CHUNK     (64u << 10)

/* base.c: a relative path of components [A-Za-z0-9._-], none starting
 * with '.', at most BUNDLE_PATH_MAX; a bundle name: one such component of
 * at most BUNDLE_NAME_MAX; a character of one. */
int bi_valid_relpath(const char *p);
int bi_valid_name(const char *s);
int bi_name_char(char c);

/* base.c: "<state_dir>/bundles" (created when create is set); the fd, or
 * -errno with err. */
int bi_open_bundles(const char *state_dir, int create, char *err, size_t errlen);
/* list.c: the bundle directory names beneath bfd, sorted (oldest first):
 * the count (*out malloc'd) or -1. */
int bi_scan(int bfd, char ***out);
void bi_free_names(char **v, int n);

/* base.c: finish ctx into 64 hex digits; 0 or -1. */
int bi_sha256_final(EVP_MD_CTX *ctx, char hex[65]);

/* manifest.c: load and check "manifest.json" beneath dfd (see
 * bundle_load_manifest). */
int bi_load_manifest_at(int dfd, struct json_object **out, char *err, size_t errlen);

/* summary_values.c: a manifest value for people (numbers plainly, strings
 * cut, null as unknown); labels and keys in turn ({label, key, ..., NULL}). */
void bi_put_val(FILE *f, struct json_object *v);
void bi_put_line(FILE *f, struct json_object *o, const char *const *lk);
/* A number: an integer as one, else 4 significant digits at most; a
 * figure: a finite number, else "unknown". */
void bi_put_num(FILE *f, double d);
void bi_put_fig(FILE *f, double d);
/* v is there and not null. */
int bi_recorded(struct json_object *v);
/* "label value": a[akey] (the manifest), else b[bkey] (the facts). */
void bi_put_field(FILE *f, const char *label, struct json_object *a, const char *akey,
		  struct json_object *b, const char *bkey);
/* ": k = v, ..." of an object's members, at most max. */
void bi_put_values(FILE *f, struct json_object *vals, int max);

/* summary_verdict.c: the summary's verdict lines, what it is and what it
 * is not. */
void bi_sum_is(FILE *f, struct json_object *cls);
void bi_sum_not(FILE *f, struct json_object *cls);

/* "What it is not", one entry per verdict (several rules may name one):
 * what the rules' ruled_out sentences say, joined (text: a new string). */
enum { BI_NOT_RULED_OUT, BI_NOT_UNDECIDED, BI_NOT_ALSO_HELD };
struct bi_not {
	const char *verdict;    /* in the classification */
	int kind;               /* BI_NOT_* */
	char *text;
};
size_t bi_not_lines(struct json_object *classification, struct bi_not *out, size_t max);
void bi_not_free(struct bi_not *l, size_t n);
/* summary.c: "10.219.0.1 REACHABLE on server, ...": the ports' unicast
 * neighbour entries at the stall (a new string; NULL: none recorded). */
char *bi_neighbours(struct json_object *manifest);
/* summary_engines.c: the Evidence lines of manifest.engines. */
void bi_sum_engines(FILE *f, struct json_object *m);
/* summary_devlink.c: the "Devlink health" section (manifest.devlink). */
void bi_sum_devlink(FILE *f, struct json_object *m);
/* summary_peers.c: the "Peers" section (manifest.peers, manifest.peer). */
void bi_sum_peers(FILE *f, struct json_object *m);

#endif
