/* liveness: the detector's table of flows (struct livetab, named so
 * apart from the engines' shared-memory flow tables, nicstall-flowtab(7))
 * and each flow's state machine.
 *
 *   idle     nothing outstanding
 *   waiting  a request left and no reply came yet (or bytes sit unacked or
 *            unread in a socket queue)
 *   stalled  waiting longer than the port's threshold
 *   released progress after a stall (the stall's duration is recorded)
 *
 * Observations from every flow source (flows.h) are merged per (source,
 * tuple, session, port). Pure data and time: no I/O, the clock is passed
 * in, so the detector is tested alone. */
#ifndef NICSTALL_LIVENESS_H
#define NICSTALL_LIVENESS_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flows.h"

#define LIVENESS_GONE_NS 2000000000ull  /* unseen this long: the flow closed */

/* Limits, per source and per owner (the uid that wrote the table, owns the
 * socket), so that one writer's flood of flows costs only its own flows:
 * the other owners, and the other sources, keep being tracked. */
#define LIVENESS_MAX_ENGINE_FLOWS 262144        /* every engine table */
#define LIVENESS_MAX_ENGINE_PER_OWNER 131072    /* one uid's tables */
#define LIVENESS_MAX_SOCK_FLOWS 65536
#define LIVENESS_MAX_SOCK_PER_OWNER 32768
#define LIVENESS_MAX_BPF_FLOWS 65536            /* frames: no owner known */
#define LIVENESS_MAX_READER_FLOWS 65536         /* onload, vma, rdmaqp: each */
#define LIVENESS_MAX_OWNERS 4096                /* distinct (source, uid) */
/* The hash: SipHash-2-4 under a per-table random key (no writer can aim
 * its keys at one bucket), buckets doubling from 4096 with the flows. */
#define LIVENESS_MIN_BUCKETS 4096u
#define LIVENESS_MAX_BUCKETS (1u << 20)

enum flow_state { FLOW_IDLE = 0, FLOW_WAITING, FLOW_STALLED };

struct sflow {
	/* what a lookup compares, first: one cache line pair per flow looked
	 * at (100k flows are looked up on every poll) */
	struct sflow *next;
	uint64_t hash;                  /* keyed hash of (source, tuple, session, port) */
	char port[32];
	struct flow_obs obs;
	int owner;                      /* the flow table's owner entry, -1 none */
	enum flow_state state;
	uint64_t first_ns, seen_ns;
	uint64_t wait_since_ns, progress_ns, stalled_at_ns;
	uint32_t retrans_at_progress;   /* obs.retrans at the last progress */
	uint32_t retrans_wait;          /* retransmissions of the wait that the
					 * last progress ended */
	uint64_t tx_at_rx;              /* BPF: tx frames when rx last moved */
	uint64_t last_stall_ns;         /* duration of the last released stall */
	unsigned stalls;
	uint8_t undated_wait;           /* a wait of it was dated at the poll
					 * that saw it, for lack of a usable
					 * time of its source (wait_start) */
	uint64_t incident;              /* id of the incident it belongs to, 0 */
	uint8_t claim_held;             /* stalled while its claim was not
					 * verified: acted on once it is */
	/* the table's list of the flows kept as long as this one (by the
	 * time last looked up: livetab_expire() looks at its oldest only) */
	struct sflow *kprev, *knext;
	uint64_t touch_ns;
	uint8_t kclass;
};

/* What an observation did to its flow. */
enum flow_event { FLOW_EV_NONE = 0, FLOW_EV_STALLED, FLOW_EV_RELEASED };

struct livetab;

struct livetab *livetab_new(void);
void livetab_free(struct livetab *ft);
unsigned livetab_count(const struct livetab *ft);
/* The flow of o on port (created at now when create and within the limits
 * of its source and owner; NULL otherwise, and a refusal is counted). */
struct sflow *livetab_get(struct livetab *ft, const struct flow_obs *o, const char *port,
			  uint64_t now, int create);
/* Every flow, in no particular order: NULL starts, NULL ends. */
struct sflow *livetab_next(const struct livetab *ft, const struct sflow *prev);
/* Remove flows not seen for LIVENESS_GONE_NS (or their observation's
 * keep_ns, when longer); gone(f) runs before each is
 * freed. Returns how many were removed. Looks only at the flows of each
 * keep that were looked up longest ago (livetab_get with create keeps
 * them in that order), not at every flow. */
unsigned livetab_expire(struct livetab *ft, uint64_t now,
			void (*gone)(struct sflow *f, void *arg), void *arg);

/* Change the limits of one source (total flows, flows per owner uid; 0 per
 * owner: no owner limit). Flows already tracked stay. */
void livetab_set_limit(struct livetab *ft, enum flow_src_kind k, unsigned total,
		       unsigned per_owner);
/* What a source or one owner of it uses: flows tracked, its limit, and the
 * new flows refused since the table was made. uid_known = 0: the source as
 * a whole. */
struct livetab_use {
	enum flow_src_kind src;
	int uid_known;
	uint32_t uid;
	unsigned flows, limit;
	uint64_t refused;
};
typedef void (*livetab_use_fn)(const struct livetab_use *u, void *arg);
/* One call per source, then one per owner entry; only those that refused
 * flows when refused_only. */
void livetab_usage(const struct livetab *ft, int refused_only, livetab_use_fn fn, void *arg);
/* Every refusal so far (any source, any owner). */
uint64_t livetab_refused(const struct livetab *ft);
/* The hash's shape: buckets, and the longest chain of one bucket. */
unsigned livetab_buckets(const struct livetab *ft);
unsigned livetab_longest_chain(const struct livetab *ft);

/* Apply observation o at now. threshold_ns: the port's stall threshold;
 * poll_ns: the time since the detector's previous poll, at least its
 * interval (its polls are planned, not regular: a wait start the source
 * reports earlier than the last progress less that is not believed). */
enum flow_event flow_update(struct sflow *f, const struct flow_obs *o, uint64_t now,
			    uint64_t threshold_ns, uint64_t poll_ns);

/* Stall a waiting flow now, for a reason of the detector's own (its
 * process's engine thread is blocked: daemon/detect/threadpass.h), as flow_update
 * stalls one that waited its threshold. FLOW_EV_STALLED, or FLOW_EV_NONE
 * when it was not waiting. */
enum flow_event flow_stall_now(struct sflow *f);

/* "tcp 10.0.0.1:40000 -> 10.0.0.2:11111" as the owner sees it, and the same
 * with the endpoints in a fixed order (both ends of one connection, and
 * every source that sees it, give the same text). */
void flow_tuple(const struct sflow *f, char *buf, size_t len);
void flow_norm_tuple(const struct sflow *f, char *buf, size_t len);
/* The same normalisation on the binary key (no text made). */
void flow_norm_key(const struct flow_key *k, struct flow_key *out);
const char *flow_src_name(enum flow_src_kind k);
const char *flow_state_name(enum flow_state st);

#endif
