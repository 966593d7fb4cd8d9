/* threadjudge: the thread-stall decision. See threadjudge.h. */
#include "collectors/threadjudge.h"

#include <string.h>

/* Off-CPU time of kind k up to the sample's time: the closed spans, plus
 * the open one when it is of that kind. */
static uint64_t tj_off(const struct tj_sample *s, unsigned k)
{
	uint64_t v = s->off_ns[k];

	if (s->off_at_ns && s->off_state == k && s->at_ns > s->off_at_ns)
		v += s->at_ns - s->off_at_ns;
	return v;
}

static uint64_t tj_delta(const struct tj_sample *b, const struct tj_sample *c, unsigned k)
{
	uint64_t x = tj_off(b, k), y = tj_off(c, k);

	return y > x ? y - x : 0;
}

static int tj_voluntary(uint32_t off)
{
	return off == TW_OFF_SLEEP || off == TW_OFF_DISK;
}

void tj_judge(const struct tj_sample *base, const struct tj_sample *cur, uint64_t threshold_ns,
	      unsigned min_share_pct, uint64_t flows_wait_since_ns, uint64_t min_wait_ns,
	      struct tj_result *r)
{
	memset(r, 0, sizeof(*r));
	r->verdict = TJ_UNKNOWN;
	if (base && base->at_ns < cur->at_ns) {
		r->window_ns = cur->at_ns - base->at_ns;
		r->sleep_ns = tj_delta(base, cur, TW_OFF_SLEEP);
		r->disk_ns = tj_delta(base, cur, TW_OFF_DISK);
		r->preempt_ns = tj_delta(base, cur, TW_OFF_PREEMPT);
		r->nvcsw = cur->nvcsw > base->nvcsw ? cur->nvcsw - base->nvcsw : 0;
		r->nivcsw = cur->nivcsw > base->nivcsw ? cur->nivcsw - base->nivcsw : 0;
		r->share_pm = (unsigned)((r->sleep_ns + r->disk_ns) * 1000u / r->window_ns);
		if (r->share_pm > 1000)
			r->share_pm = 1000;
	}
	/* one sleep that has lasted the threshold says it alone */
	if (cur->off_at_ns && tj_voluntary(cur->off_state) && cur->at_ns > cur->off_at_ns &&
	    cur->at_ns - cur->off_at_ns > threshold_ns) {
		r->verdict = TJ_ONE_SLEEP;
		r->since_ns = cur->off_at_ns;
	} else if (r->window_ns && threshold_ns && r->window_ns >= threshold_ns) {
		if (r->share_pm >= min_share_pct * 10u) {
			r->verdict = TJ_ASLEEP;
			r->since_ns = base->at_ns;
		} else {
			r->verdict = TJ_RUNNING;
		}
	}
	/* blocked is a stall only while the process's flows wait, for long
	 * enough to be more than a request between two of the thread's naps */
	r->stalled = (r->verdict == TJ_ASLEEP || r->verdict == TJ_ONE_SLEEP) &&
		     flows_wait_since_ns && flows_wait_since_ns <= cur->at_ns &&
		     cur->at_ns - flows_wait_since_ns >= min_wait_ns;
}

const char *tj_verdict_name(enum tj_verdict v)
{
	switch (v) {
	case TJ_RUNNING: return "running";
	case TJ_UNKNOWN: return "unknown";
	case TJ_ASLEEP: return "asleep";
	case TJ_ONE_SLEEP: return "one-sleep";
	}
	return "?";
}

const char *tj_off_name(uint32_t off_state)
{
	static const char *const n[TW_OFF_N] = { "sleep", "disk", "preempted", "other" };

	return off_state < TW_OFF_N ? n[off_state] : "?";
}
