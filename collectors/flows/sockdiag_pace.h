/* sockdiag_pace: when sock_diag must read a watched socket again (its part
 * of collectors/flows/flowsrc.h's polling contract).
 *
 * The detector (daemon/detect/liveness.c) needs a kernel TCP socket's observation
 * only when it could change what it decides. A socket that owes nothing
 * (flow_obs_sock_waiting() false, collectors/flows/flows.h) may start to wait at
 * once, and that wait becomes a stall a threshold later at the earliest:
 * it is read again a threshold less one poll from now. A waiting socket is
 * read from a threshold less one poll after its wait began by the kernel's
 * own clocks (flow_obs_sock_wait_from()), every poll from then: the
 * detector dates the wait the same way or later, never earlier, so the
 * socket is read at the first poll at which the detector would call it
 * stalled, as if it were read every poll. A socket that moves is read
 * within every threshold-long span, so the detector's sibling counts (who
 * moved over the last threshold) see it. Progress since the last read
 * (bytes acknowledged or received, unread bytes read) starts a new wait;
 * without progress the earliest start seen is kept. Pure data and time,
 * tested alone. */
#ifndef NICSTALL_SOCKDIAG_PACE_H
#define NICSTALL_SOCKDIAG_PACE_H

#include <stdint.h>

#include "collectors/flows/flows.h"

struct sd_pace {
	uint64_t due_ns;        /* read at the first poll from then (0: the next) */
	uint64_t wait_from;     /* the wait's start, the earliest since it last
				 * moved; 0: not waiting */
	uint64_t tx_bytes, rx_bytes, unread;    /* at the last read */
	int seen;
};

/* A read of the socket at now gave o; stall_ns: the port's threshold,
 * poll_ns the detector's poll (a threshold of no more than a poll, or 0:
 * read at every poll). */
void sd_pace_read(struct sd_pace *p, const struct flow_obs *o, uint64_t now, uint64_t stall_ns,
		  uint64_t poll_ns);

/* And at the latest max_ns from now (0: no bound): the flow table forgets
 * a flow it has not seen for LIVENESS_GONE_NS, and with a threshold of
 * seconds and the dumps far apart nothing else would show it. */
static inline void sd_pace_cap(struct sd_pace *p, uint64_t now, uint64_t max_ns)
{
	if (max_ns && p->due_ns > now + max_ns)
		p->due_ns = now + max_ns;
}

/* Read it at the poll at now, or is it due within early_ns of it? */
static inline int sd_pace_due_within(const struct sd_pace *p, uint64_t now, uint64_t early_ns)
{
	return p->due_ns <= now + early_ns;
}

/* Read it at the poll at now? Half a poll early rather than a poll late. */
static inline int sd_pace_due(const struct sd_pace *p, uint64_t now, uint64_t poll_ns)
{
	return sd_pace_due_within(p, now, poll_ns / 2);
}

/* How early sock_diag reads a socket: half a threshold less a poll (or
 * half of max_ns, sd_pace_cap's bound, when less), or half a poll if
 * more. The detector plans its polls for the first socket
 * due (sockdiag_next_ns(), daemon/detect/stall_plan.c); reading at that poll every
 * socket due within this window keeps a port's sockets, and the ports, in
 * step, so the polls come about once a threshold less a poll. With half
 * a poll, sockets read at different polls stay apart and fall due one
 * after another, a poll every interval or two. Reading early never
 * delays a call (the detector dates a wait by the kernel's clocks); it
 * costs a read, and a socket's reads are still at least this far apart
 * less the window. */
static inline uint64_t sd_pace_early(uint64_t stall_ns, uint64_t poll_ns, uint64_t max_ns)
{
	uint64_t span = stall_ns > poll_ns ? stall_ns - poll_ns : 0;

	if (max_ns && max_ns < span)
		span = max_ns;
	return span / 2 > poll_ns / 2 ? span / 2 : poll_ns / 2;
}

#endif
