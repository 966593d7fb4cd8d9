/* stall_plan: when the next poll comes (stall.h stall_plan): each flow's
 * want and deadline as a poll observes it, then the earliest of those,
 * the sources' own times (a refresh among them) and STALL_IDLE_MAX_NS,
 * bounded by the interval (stall_int.h; the
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
	if (now >= want_at && d < s->dl_ns)
		s->dl_ns = d;
}

uint64_t stall_plan(const struct stall *s, const char **why)
{
	uint64_t iv = s->c->flow_interval_ns, t0 = s->poll_t0;
	uint64_t src = flowsrcs_next_ns(s->srcs), refresh, next, dl;
	const char *w;

	if (s->repoll) {
		next = t0;
		w = WHY_WANT;
	} else if (s->fast || !src) {
		next = t0 + iv;
		w = s->fast ? s->fast_why : WHY_SOURCE;
	} else {
		/* while nothing waits, when the sources ask: one that must be
		 * looked at asks a refresh from now (flowsrc.h); one the
		 * kernel wakes (the socket watch, sock_liveness = events), or
		 * with nothing to read, only for its own reasons; and the
		 * detector sleeps until then, STALL_IDLE_MAX_NS at the most
		 * (none asked, or none open) */
		refresh = flowsrcs_refresh_ns(s->min_th, iv);
		/* the sources date what they ask by the poll's start (t0);
		 * with none asking, the second counts from the wakeup the poll
		 * rode, so the sweep's work before it does not carry its window
		 * past the next sweep (stall_poll_woken), unless that leaves
		 * less than an interval after the poll */
		uint64_t idle0 = s->idle_t0 + STALL_IDLE_MAX_NS >= t0 + iv ? s->idle_t0 : t0;

		if (src <= t0 + STALL_IDLE_MAX_NS) {
			next = src;
			w = src == t0 + refresh ? WHY_REFRESH : WHY_SOURCE;
		} else {
			next = idle0 + STALL_IDLE_MAX_NS;
			w = WHY_IDLE;
		}
		if (s->plan_ns < next) {
			next = s->plan_ns;
			w = s->plan_why;
		}
		if (next < t0 + iv) {
			next = t0 + iv;
			w = WHY_INTERVAL;
		}
	}
	/* a poll handled for longer than the interval (in chunks): half an
	 * interval's rest after it, as the regular timer's next tick gave */
	if (!s->repoll && next < s->poll_end + iv / 2) {
		next = s->poll_end + iv / 2;
		w = WHY_INTERVAL;
	}
	/* a stall's own deadline, whatever else is planned: stall_min_gap()
	 * after the last poll at the soonest (half an interval's rest after
	 * one that took longer than that) */
	if (!s->repoll && s->dl_ns < next) {
		dl = stall_soonest(s, iv);
		if (dl < s->dl_ns)
			dl = s->dl_ns;
		if (dl < next) {
			next = dl;
			w = WHY_DEADLINE;
		}
	}
	if (why)
		*why = w;
	return next;
}

int stall_plan_window(const struct stall *s, uint64_t now, uint64_t next, const char *why,
		      int alone, uint64_t *early, uint64_t *late)
{
	/* a tenth can miss the sweep's phase at every second (the sweep one
	 * for every port, a second apart at the defaults); taken once, the
	 * sweep falls in every window after */
	uint64_t iv = s->c->flow_interval_ns, soon = s->poll_t0 + iv;

	if (!why || strcmp(why, WHY_IDLE) || next <= now + 1)
		return 0;
	if (soon < s->poll_end + iv / 2)
		soon = s->poll_end + iv / 2;
	/* its latest a flow_interval past the plan: nothing asked for it
	 * then, and the sweep due at that very time (the idle polls a second
	 * apart, as the sweeps are) lies inside, not in a race with it; nor
	 * is a sweep that came within a flow_interval after a lone poll,
	 * before the next window opened, missed at every second after */
	*late = next - now + iv;
	*early = alone ? iv : (next - now) - (next - now) / 10;
	if (now + *early < soon)
		*early = soon - now;
	if (*early > next - now)
		*early = next - now;    /* open by its plan's time */
	return 1;
}
