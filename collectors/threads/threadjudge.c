/* threadjudge: the thread-stall decision. See threadjudge.h. */
#include "collectors/threads/threadjudge.h"

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

static unsigned tj_share(const struct tj_sample *b, const struct tj_sample *c)
{
	uint64_t w = c->at_ns - b->at_ns, v;

	if (!w)
		return 0;
	v = (tj_delta(b, c, TW_OFF_SLEEP) + tj_delta(b, c, TW_OFF_DISK)) * 1000u / w;
	return v > 1000 ? 1000 : (unsigned)v;
}

void tj_span(const struct tj_sample *base, const struct tj_sample *cur, struct tj_result *r)
{
	memset(r, 0, sizeof(*r));
	r->verdict = TJ_UNKNOWN;
	if (!base || base->at_ns >= cur->at_ns)
		return;
	r->window_ns = cur->at_ns - base->at_ns;
	r->sleep_ns = tj_delta(base, cur, TW_OFF_SLEEP);
	r->disk_ns = tj_delta(base, cur, TW_OFF_DISK);
	r->preempt_ns = tj_delta(base, cur, TW_OFF_PREEMPT);
	r->nvcsw = cur->nvcsw > base->nvcsw ? cur->nvcsw - base->nvcsw : 0;
	r->nivcsw = cur->nivcsw > base->nivcsw ? cur->nivcsw - base->nivcsw : 0;
	r->share_pm = tj_share(base, cur);
}

void tj_judge(const struct tj_sample *prior, const struct tj_sample *base,
	      const struct tj_sample *cur, uint64_t threshold_ns, unsigned min_share_pct,
	      uint64_t flows_wait_since_ns, uint64_t min_wait_ns, struct tj_result *r)
{
	unsigned min_pm = min_share_pct * 10u;
	int one_sleep;

	tj_span(base, cur, r);
	if (!base || !prior || prior->at_ns >= base->at_ns || !threshold_ns)
		return;
	r->before_pm = tj_share(prior, base);
	/* one sleep that has lasted the threshold says it alone */
	one_sleep = cur->off_at_ns && tj_voluntary(cur->off_state) && cur->at_ns > cur->off_at_ns &&
		    cur->at_ns - cur->off_at_ns > threshold_ns;
	if (!one_sleep && r->window_ns < threshold_ns)
		return;
	if (!one_sleep && r->share_pm < min_pm) {
		r->verdict = TJ_RUNNING;
		return;
	}
	if (r->before_pm >= min_pm) {
		r->verdict = TJ_SLEEPER;        /* no change: it sleeps by design */
		return;
	}
	r->verdict = one_sleep ? TJ_ONE_SLEEP : TJ_ASLEEP;
	r->since_ns = one_sleep ? cur->off_at_ns : base->at_ns;
	/* blocked is a stall only while the process's flows wait, for long
	 * enough to be more than a request between two of the thread's naps */
	r->stalled = flows_wait_since_ns && flows_wait_since_ns <= cur->at_ns &&
		     cur->at_ns - flows_wait_since_ns >= min_wait_ns;
}

/* The newest of hist[0..n) at or before t (NULL: none that old). */
static const struct tj_sample *tj_at(const struct tj_sample *hist, unsigned n, uint64_t t)
{
	for (unsigned k = n; k-- > 0;)
		if (hist[k].at_ns <= t)
			return &hist[k];
	return NULL;
}

void tj_judge_hist(const struct tj_sample *hist, unsigned n, const struct tj_sample *cur,
		   uint64_t threshold_ns, unsigned min_share_pct, uint64_t flows_wait_since_ns,
		   uint64_t min_wait_ns, struct tj_result *r)
{
	const struct tj_sample *base = NULL, *prior = NULL;
	uint64_t end = cur->at_ns;

	/* in one long sleep: the window ends where the sleep began */
	if (cur->off_at_ns && tj_voluntary(cur->off_state) && cur->off_at_ns < cur->at_ns &&
	    cur->at_ns - cur->off_at_ns > threshold_ns)
		end = cur->off_at_ns + threshold_ns;
	if (end > threshold_ns)
		base = tj_at(hist, n, end - threshold_ns);
	if (base && base->at_ns > threshold_ns)
		prior = tj_at(hist, n, base->at_ns - threshold_ns);
	tj_judge(prior, base, cur, threshold_ns, min_share_pct, flows_wait_since_ns, min_wait_ns,
		 r);
	/* in one sleep as far back as its history goes: a sleeper */
	if (!base && end != cur->at_ns && n && hist[0].off_at_ns == cur->off_at_ns) {
		r->verdict = TJ_SLEEPER;
		r->stalled = 0;
	}
}

void tj_judge_span(const struct tj_sample *hist, unsigned n, const struct tj_sample *base,
		   const struct tj_sample *cur, uint64_t threshold_ns, unsigned min_share_pct,
		   struct tj_result *r)
{
	const struct tj_sample *prior = NULL;

	/* a span shorter than the threshold says nothing (as the live
	 * judgement's window) */
	if (!base || base->at_ns >= cur->at_ns || cur->at_ns - base->at_ns < threshold_ns) {
		tj_span(base, cur, r);
		return;
	}
	if (base->at_ns > threshold_ns)
		prior = tj_at(hist, n, base->at_ns - threshold_ns);
	/* the span is the window: as long as it is */
	tj_judge(prior, base, cur, cur->at_ns - base->at_ns, min_share_pct, 0, 0, r);
}

void tj_wait_span(const struct tj_sample *hist, unsigned n, const struct tj_sample *last,
		  uint64_t on_cpu_until, uint64_t since, uint64_t until, struct tj_sample *tmp,
		  const struct tj_sample **b, const struct tj_sample **c)
{
	uint64_t at;

	*b = n ? &hist[0] : last;
	*c = last;
	for (unsigned k = n; k-- > 0;)
		if (hist[k].at_ns <= since) {
			*b = &hist[k];
			break;
		}
	for (unsigned k = 0; until && k < n; k++)
		if (hist[k].at_ns >= until && hist[k].at_ns > (*b)->at_ns) {
			*c = &hist[k];
			break;
		}
	at = on_cpu_until && on_cpu_until < since ? on_cpu_until : since;
	if (n && *b == &hist[0] && on_cpu_until && hist[0].at_ns < at) {
		*tmp = hist[0];
		tmp->at_ns = at;
		*b = tmp;
	}
}

const char *tj_verdict_name(enum tj_verdict v)
{
	switch (v) {
	case TJ_RUNNING: return "running";
	case TJ_UNKNOWN: return "unknown";
	case TJ_ASLEEP: return "asleep";
	case TJ_ONE_SLEEP: return "one-sleep";
	case TJ_SLEEPER: return "sleeper";
	}
	return "?";
}

const char *tj_off_name(uint32_t off_state)
{
	static const char *const n[TW_OFF_N] = { "sleep", "disk", "preempted", "other" };

	return off_state < TW_OFF_N ? n[off_state] : "?";
}
