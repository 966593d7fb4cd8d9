/* flow_live: liveness verdicts shared by the sources that watch unmodified
 * bypass engines (flow_onload, flow_vma, flow_rdmaqp).
 *
 * These engines publish cumulative counters, not "a request is
 * outstanding". Each source turns two successive snapshots of one socket or
 * queue pair into a verdict, with a small per-flow tracker that remembers
 * when the counters last moved on the daemon's CLOCK_MONOTONIC:
 *
 *   FAILED    the engine says the flow is broken (QP in ERR, socket error)
 *   HELD      the engine holds bytes that do not move: data ready and not
 *             consumed, or queued and not sent
 *   WAITING   something was sent since the peer was last heard from, and
 *             nothing has been heard since (unacknowledged bytes, a request
 *             without a reply, PSNs sent without PSNs received)
 *   PROGRESS  the counters moved since the previous snapshot
 *   IDLE      nothing outstanding, nothing moving
 *
 * A flow is stalled when its verdict has been WAITING, HELD or FAILED for
 * longer than the stall threshold: flow_live_stalled(). The stall detector
 * (daemon/detect/stall.c) applies the threshold; the sources only classify.
 *
 * Each source puts its verdict in the observation it emits (struct
 * flow_obs.live = verdict + 1, live_since_ns = bad_since_ns:
 * flow_live_obs_set()), and the detector (daemon/detect/liveness.c) follows it:
 * WAITING, HELD and FAILED are waiting, PROGRESS is progress. The source
 * kinds are FLOW_SRC_ONLOAD, FLOW_SRC_VMA and FLOW_SRC_RDMAQP of enum
 * flow_src_kind (collectors/flows/flows.h). */
#ifndef NICSTALL_FLOW_LIVE_H
#define NICSTALL_FLOW_LIVE_H

#include <stdint.h>

#include "collectors/flows/flows.h"

enum flow_live {
	FLOW_LIVE_IDLE = 0,
	FLOW_LIVE_PROGRESS,
	FLOW_LIVE_WAITING,
	FLOW_LIVE_HELD,
	FLOW_LIVE_FAILED,
};

/* "idle", "progress", "waiting", "held", "failed". */
const char *flow_live_name(enum flow_live v);

/* Cumulative counters of a flow, unwrapped to 64 bits, and when they last
 * moved. tx: what this end sent (bytes, packets or PSNs); rx: what it
 * received (bytes, packets or PSNs).
 *
 * Polling cannot see the order of a send and a receive that fall between
 * two snapshots, so "sent and not answered" is judged from the balance
 * tx - rx: a request/response flow swings between a low water mark (every
 * request answered) and above it (a request out). A flow whose counters
 * stopped with the balance above the lowest balance seen has a request
 * out. A flow whose counters moved since the previous snapshot is making
 * progress, whatever its balance. */
struct flow_live_track {
	uint64_t tx, rx;
	int64_t min_bal;        /* lowest tx - rx seen */
	uint64_t moved_ns;      /* last time tx or rx moved (first sight counts) */
	uint64_t bad_since_ns;  /* verdict WAITING/HELD/FAILED since, 0 when not */
	enum flow_live verdict;
	int init;
};

/* Widen a counter of `bits` bits (1..64) that may wrap: the distance from
 * the previous raw value, modulo 2^bits, added to *acc. A counter that went
 * back by more than half its range is taken as wrapped forward; *prev_raw
 * is updated. Returns the delta added. */
uint64_t flow_live_unwrap(uint64_t *acc, uint64_t *prev_raw, uint64_t raw, unsigned bits);

/* Feed one snapshot: tx/rx already unwrapped. Updates the balance and the
 * time; returns 1 when either counter moved since the previous call (0 on
 * the first call). */
int flow_live_update(struct flow_live_track *t, uint64_t tx, uint64_t rx, uint64_t now_ns);

/* Balance above its low water mark: more sent than the answered state. */
static inline int flow_live_outstanding(const struct flow_live_track *t)
{
	return t->init && (int64_t)(t->tx - t->rx) > t->min_bal;
}

/* Record the verdict of this snapshot: keeps bad_since_ns across polls
 * while the verdict stays WAITING/HELD/FAILED (a change among those three
 * keeps the older time). since_ns: when the condition began if the source
 * knows better than now (0: now). */
void flow_live_set(struct flow_live_track *t, enum flow_live v, uint64_t since_ns,
		   uint64_t now_ns);

/* Put t's verdict into the observation o (o->live, o->live_since_ns). */
void flow_live_obs_set(const struct flow_live_track *t, struct flow_obs *o);

/* The verdict an observation carries: FLOW_LIVE_* , or -1 when o has none. */
static inline int flow_live_of(const struct flow_obs *o)
{
	return o->live ? (int)o->live - 1 : -1;
}

/* Stalled: WAITING, HELD or FAILED for at least threshold_ns at now_ns. */
int flow_live_stalled(const struct flow_live_track *t, uint64_t now_ns, uint64_t threshold_ns);

/* 24-bit sequence arithmetic (InfiniBand PSNs): b - a modulo 2^24. */
static inline uint32_t flow_live_psn_sub(uint32_t b, uint32_t a)
{
	return (b - a) & 0xffffffu;
}

#endif
