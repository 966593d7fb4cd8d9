/* stall_plan: when the next poll comes (stall.h stall_plan): each flow's
 * want and deadline as a poll observes it, then the earliest of those, a
 * source's own time, a refresh and the interval (stall_int.h; the
 * contract every source keeps: collectors/flows/flowsrc.h, the polling
 * contract). */
#include "daemon/detect/stall_int.h"
#include "daemon/conf.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/liveness.h"

#include <stdint.h>
#include <string.h>

/* A flow whose waits its source cannot date: a wait that began after a
 * poll is dated at the poll that sees it (liveness.c wait_start), so only
 * polls at every interval bound its call. An engine session that
 * publishes no times, or one whose wait was dated so before (bytes held
 * with no send since the last reply); a UDP flow of the tracker, whose
 * frames carry no request boundary (a reply and the next request between
 * two polls would hide the wait for the next reply, liveness.c). */
static int undated(const struct sflow *f, const struct flow_obs *o)
{
	if (o->src == FLOW_SRC_ENGINE)
		return f->undated_wait ||
		       (!o->last_tx_ns && !o->last_rx_ns &&
			(o->tx_msgs || o->rx_msgs || o->unsent || (o->state & 0x4u)));
	return o->src == FLOW_SRC_BPF && o->key.proto == 17;
}

/* A flow observed at now: when must the next poll come for it? */
void stall_plan_flow(struct stall *s, const struct sflow *f, const struct flow_obs *o,
		      uint64_t now, uint64_t th)
{
	uint64_t iv = s->c->flow_interval_ns, want_at, d;

	if (f->state == FLOW_STALLED) {
		stall_fast(s, WHY_STALLED);   /* its release, and the incident's */
		return;
	}
	if (undated(f, o))
		stall_fast(s, WHY_UNDATED);
	if (f->state != FLOW_WAITING)
		return;
	/* its want (a threshold less a poll into the wait, at least half a
	 * threshold), then its stall (strictly more than a threshold) */
	want_at = f->wait_since_ns + (th > 2 * iv ? th - iv : th / 2);
	d = now < want_at ? want_at : f->wait_since_ns + th + 1;
	if (d < s->plan_ns) {
		s->plan_ns = d;
		s->plan_why = now < want_at ? WHY_WANT : WHY_DEADLINE;
	}
}

uint64_t stall_plan(const struct stall *s, const char **why)
{
	uint64_t iv = s->c->flow_interval_ns, t0 = s->poll_t0;
	uint64_t src = flowsrcs_next_ns(s->srcs), refresh, next, floor;
	const char *w;
	int dl;

	if (s->repoll) {
		next = t0;
		w = WHY_WANT;
	} else if (s->fast || !src) {
		next = t0 + iv;
		w = s->fast ? s->fast_why : WHY_SOURCE;
	} else {
		refresh = flowsrcs_refresh_ns(s->min_th, iv);
		next = t0 + (refresh > iv ? refresh : iv);
		w = WHY_REFRESH;
		if (src < next) {
			next = src;
			w = WHY_SOURCE;
		}
		if (s->plan_ns < next) {
			next = s->plan_ns;
			w = s->plan_why;
		}
		/* no sooner than the interval after the last poll; a stall's
		 * own deadline no sooner than stall_min_gap() after it */
		dl = w && !strcmp(w, WHY_DEADLINE);
		floor = t0 + (dl ? stall_min_gap(iv) : iv);
		if (next < floor) {
			next = floor;
			if (!dl)
				w = WHY_INTERVAL;
		}
	}
	/* a poll handled for longer than the interval (in chunks): half an
	 * interval's rest after it, as the regular timer's next tick gave (a
	 * stall's deadline: stall_min_gap()) */
	dl = w && !strcmp(w, WHY_DEADLINE);
	floor = s->poll_end + (dl ? stall_min_gap(iv) : iv / 2);
	if (!s->repoll && next < floor) {
		next = floor;
		if (!dl)
			w = WHY_INTERVAL;
	}
	if (why)
		*why = w;
	return next;
}
