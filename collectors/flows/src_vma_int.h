/* src_vma_int.h: the VMA/XLIO source's state, shared by
 * src_vma.c (finding, reading and judging the statistics files, the
 * ops table) and src_vma_json.c (its evidence and status), private
 * to them; src_vma.c's table names the two views, nothing calls
 * back. */
#ifndef NICSTALL_FLOW_SRC_VMA_INT_H
#define NICSTALL_FLOW_SRC_VMA_INT_H

#include "collectors/flows/claimv.h"
#include "collectors/flows/vma_parse.h"
#include "collectors/flows/flowsrc.h"

#include <limits.h>
#include <stdint.h>

#define RESCAN_NS 2000000000ull
#define DEF_INTERVAL_NS 100000000ull
#define VS_LOG_NS 60000000000ull        /* one summary line per kind a minute */
#define VS_RECENT 32u                   /* refusals listed in status */
#define VS_REFUSED_MAX 32768u           /* refused names remembered */
#define VS_SOCKS_PER_UID 4096u
#define VS_SOCKS_TOTAL 16384u
#define VS_BYTES_PER_UID (8u << 20)     /* copied per poll (two copies a file) */
#define VS_BYTES_PER_POLL (32u << 20)
#define VS_CLAIMS_PER_SEC 64u

struct vsock {                  /* one socket of a file, across reads */
	struct flow_vma_sock s;
	struct flow_vma_track t;
	struct flow_obs o;
	int fresh;              /* o is from the last read */
	uint8_t claim;          /* enum flow_claim */
};

/* What a file looked like when it was refused: not again until it changes. */
struct vsig {
	uint64_t dev, ino, size, mtime_ns;
};

struct vfile {
	struct flow_vma_file *f;
	char path[PATH_MAX];
	const struct flow_vma_layout *lay;
	uint32_t nslots;
	struct vsock *socks;
	unsigned n, cap;
	unsigned torn, bad;     /* of the last read */
	unsigned verified, unverified;  /* claims of the last read */
	int refused;            /* its content was refused: sig holds it */
	struct vsig sig;
	uint64_t reads, bumps, errors, skipped;
	/* the last bump: the engine copies its counters on seeing it, so
	 * what a later read finds was copied after it (0: none yet) */
	uint64_t bump_ns;
	char err[256];          /* last error, "" */
};

struct refused {                /* a name not taken: (dir, pid) is the name */
	uint8_t used, k;
	int32_t pid;
	uint32_t gen;           /* the rescan that last saw it */
	struct vsig sig;
};

struct recent {
	char path[PATH_MAX];
	char why[256];
};

/* One summary line per VS_LOG_NS: the first event at once, the rest
 * counted and said in the next line. */
struct rlog {
	const char *what;       /* "statistics files refused" */
	uint64_t last_ns, total;
	unsigned pending;
	char example[400];
};

struct vsrc {
	char dir[2][PATH_MAX];  /* vmastat, xliostat */
	int ino, wd[2];
	struct vfile *files[FLOW_VMA_MAX_FILES];
	unsigned nfiles, rr;
	struct refused *refused;        /* open addressing, VS_REFUSED_MAX * 2 */
	unsigned nrefused;
	uint32_t gen;
	struct recent recent[VS_RECENT];
	unsigned nrecent, recent_at;
	struct rlog log_refused, log_claims;
	struct claimv *cv;
	struct flow_vma_buf buf;        /* the copies of every read */
	uint64_t interval_ns, last_read_ns, last_scan_ns;
	uint64_t evicted, deferred;     /* files made room for; reads put off */
	struct flow_vma_snap *snap;     /* scratch */
	unsigned *byslot, cap_byslot;   /* scratch: the last read's sockets by slot */
	uint64_t polls, cost_ns, last_cost_ns;
};

int vma_src_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg);
void vma_src_status(const struct flow_src *s, struct json_object *out);

#endif
