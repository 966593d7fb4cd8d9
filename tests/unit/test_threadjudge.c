/* Unit tests: threadjudge, the engine-thread stall decision, on fed samples
 * (no kernel): seed 001's sender (asleep 95% of 650 ms, 29,463 voluntary
 * switches), the busy poller, the healthy epoll sleeper, one long sleep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collectors/threads/threadjudge.h"

#define MS 1000000ull
#define T0 (1000000 * MS)

/* A thread that over [t0, t0 + span) sleeps off_pm per mille in n short
 * sleeps (woken to lose a lock again), read at the end while it happens to
 * be on CPU: the emulation's /proc snapshot saw state R. */
static struct tj_sample prior;  /* a threshold before b: serving (on CPU) */

static void starved(struct tj_sample *b, struct tj_sample *c, uint64_t span, unsigned off_pm,
		    uint64_t n)
{
	memset(b, 0, sizeof(*b));
	memset(c, 0, sizeof(*c));
	b->at_ns = T0;
	b->off_ns[TW_OFF_SLEEP] = 5 * MS;
	b->nvcsw = 100;
	prior = *b;
	prior.at_ns = T0 - 700 * MS;
	prior.off_ns[TW_OFF_SLEEP] = 0;
	prior.nvcsw = 90;
	*c = *b;
	c->at_ns = T0 + span;
	c->off_ns[TW_OFF_SLEEP] += span * off_pm / 1000;
	c->nvcsw += n;
	c->off_at_ns = 0;       /* running at the read */
}

/* The naive signature (what the landed snapshot judged by): the state at
 * one instant. It says "running" for the starved sender. */
static int naive_asleep(const struct tj_sample *c)
{
	return c->off_at_ns != 0 && c->off_state == TW_OFF_SLEEP;
}

static void tj_judge__seed001_starved_sender_running_at_read__asleep_and_stalled(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	starved(&b, &c, 649 * MS, 950, 29463);
	assert_false(naive_asleep(&c));         /* the snapshot's mistake */
	tj_judge(&prior, &b, &c, 500 * MS, 50, T0 + 10 * MS, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);
	assert_true(r.stalled);
	assert_int_equal(r.share_pm, 950);
	assert_int_equal(r.nvcsw, 29463);
	assert_int_equal(r.nivcsw, 0);
	assert_int_equal(r.since_ns, T0);
}

static void tj_judge__busy_poller__running(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	starved(&b, &c, 600 * MS, 0, 0);
	c.off_ns[TW_OFF_PREEMPT] += 200 * MS;   /* preempted: not its choice */
	c.nivcsw += 500;
	tj_judge(&prior, &b, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_RUNNING);
	assert_false(r.stalled);
	assert_int_equal(r.preempt_ns, 200 * MS);
	assert_int_equal(r.share_pm, 0);
}

static void tj_judge__epoll_sleeper_no_flow_waits__not_stalled(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	starved(&b, &c, 600 * MS, 990, 300);
	c.off_at_ns = c.at_ns - 3 * MS;         /* back in epoll_wait now */
	c.off_state = TW_OFF_SLEEP;
	tj_judge(&prior, &b, &c, 500 * MS, 50, 0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);
	assert_false(r.stalled);
	/* a request that arrived a moment ago is not a wait of the thread's */
	tj_judge(&prior, &b, &c, 500 * MS, 50, c.at_ns - 1 * MS, 50 * MS, &r);
	assert_false(r.stalled);
}

/* History every 50 ms from T0 - 1 s: on CPU until T0 + 100 ms, then in
 * one D sleep. */
static unsigned serving_then_one_sleep(struct tj_sample *h, struct tj_sample *c, uint64_t now)
{
	unsigned n = 0;

	for (uint64_t t = T0 - 1000 * MS; t <= now; t += 50 * MS, n++) {
		memset(&h[n], 0, sizeof(h[n]));
		h[n].at_ns = t;
		h[n].nvcsw = 10;
		if (t > T0 + 100 * MS) {
			h[n].off_at_ns = T0 + 100 * MS;
			h[n].off_state = TW_OFF_DISK;
		}
	}
	*c = h[n - 1];
	return n - 1;
}

static void tj_judge_hist__one_sleep_longer_than_threshold__one_sleep(void **st)
{
	struct tj_sample h[64], c;
	struct tj_result r;
	unsigned n;

	(void)st;
	n = serving_then_one_sleep(h, &c, T0 + 700 * MS);
	tj_judge_hist(h, n, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ONE_SLEEP);
	assert_true(r.stalled);
	assert_int_equal(r.since_ns, T0 + 100 * MS);
	assert_true(r.before_pm < 100);
	/* the same sleep, 300 ms in: the window holds 200 ms on CPU */
	n = serving_then_one_sleep(h, &c, T0 + 400 * MS);
	tj_judge_hist(h, n, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);         /* 60% asleep */
	n = serving_then_one_sleep(h, &c, T0 + 300 * MS);
	tj_judge_hist(h, n, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_RUNNING);        /* 40% */
	assert_false(r.stalled);
}

/* An idle thread (the main thread in pthread_join, a helper) asleep since
 * long before, and an engine that sleeps in epoll_wait by design: asleep
 * before as after, never a stall, whatever the flows do. */
static void tj_judge_hist__asleep_before_too__sleeper_never_stalled(void **st)
{
	struct tj_sample h[64], c;
	struct tj_result r;
	unsigned n = 0;

	(void)st;
	for (uint64_t t = T0 - 1000 * MS; t <= T0 + 700 * MS; t += 50 * MS, n++) {
		memset(&h[n], 0, sizeof(h[n]));
		h[n].at_ns = t;
		h[n].off_at_ns = T0 - 5000 * MS;
		h[n].off_state = TW_OFF_SLEEP;
	}
	c = h[--n];
	tj_judge_hist(h, n, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_SLEEPER);
	assert_false(r.stalled);
	/* woken now and then, asleep 97% before and after */
	for (unsigned i = 0; i <= n; i++) {
		h[i].off_at_ns = 0;
		h[i].off_ns[TW_OFF_SLEEP] = (h[i].at_ns - (T0 - 1000 * MS)) * 97 / 100;
		h[i].nvcsw = i * 10;
	}
	c = h[n];
	tj_judge_hist(h, n, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_SLEEPER);
	assert_false(r.stalled);
	assert_true(r.before_pm >= 960);
}

static void tj_judge__no_history_before__unknown(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	/* a thread first seen in the window: whether it served before is
	 * not known, so it is not judged */
	starved(&b, &c, 649 * MS, 950, 29463);
	tj_judge(NULL, &b, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	assert_false(r.stalled);
	assert_int_equal(r.share_pm, 950);
}

static void tj_judge__open_span_at_both_ends__counted_once(void **st)
{
	struct tj_sample b = { 0 }, c;
	struct tj_result r;

	(void)st;
	/* asleep since before the base, still asleep: only the part in the
	 * window counts */
	b.at_ns = T0;
	b.off_at_ns = T0 - 100 * MS;
	b.off_state = TW_OFF_SLEEP;
	c = b;
	c.at_ns = T0 + 300 * MS;
	tj_span(&b, &c, &r);
	assert_int_equal(r.sleep_ns, 300 * MS);
	assert_int_equal(r.share_pm, 1000);
}

static void tj_judge__window_shorter_than_threshold__unknown(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	starved(&b, &c, 200 * MS, 950, 9000);
	tj_judge(&prior, &b, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	assert_false(r.stalled);
	assert_int_equal(r.share_pm, 950);
}

static void tj_judge__counters_back_in_time__no_underflow(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	/* a reused tid read as the same thread: its counters restart */
	starved(&b, &c, 600 * MS, 0, 0);
	b.off_ns[TW_OFF_SLEEP] = 10000 * MS;
	b.nvcsw = 1000000;
	tj_judge(&prior, &b, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.sleep_ns, 0);
	assert_int_equal(r.nvcsw, 0);
	assert_int_equal(r.verdict, TJ_RUNNING);
}

/* Over a given span (the flows' 150 ms wait at a 100 ms threshold, read
 * after it, the thread running again): the span's verdict, not the last
 * threshold's. A thread that slept as much the threshold before the span
 * is a sleeper by design. */
static void tj_judge_span__wait_read_after__asleep_then_running_now(void **st)
{
	struct tj_sample b, c, now, hist[3];
	struct tj_result r;

	(void)st;
	starved(&b, &c, 150 * MS, 950, 1500);
	now = c;
	now.at_ns += 200 * MS;                  /* on CPU since the wait ended */
	hist[0] = prior;
	hist[1] = b;
	hist[2] = c;
	tj_judge_span(hist, 3, &b, &c, 100 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);
	assert_int_equal(r.window_ns, 150 * MS);
	assert_int_equal(r.share_pm, 950);
	assert_int_equal(r.nvcsw, 1500);
	/* the live judgement at the reading: the last threshold ran */
	tj_judge_hist(hist, 3, &now, 100 * MS, 50, 0, 0, &r);
	assert_int_equal(r.verdict, TJ_RUNNING);
	/* asleep as much before the span: it sleeps by design */
	hist[0].off_ns[TW_OFF_SLEEP] = 0;
	hist[1].off_ns[TW_OFF_SLEEP] = 700 * MS * 95 / 100;
	b = hist[1];
	c.off_ns[TW_OFF_SLEEP] = b.off_ns[TW_OFF_SLEEP] + 150 * MS * 95 / 100;
	tj_judge_span(hist, 3, &b, &c, 100 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_SLEEPER);
	/* no span, or one shorter than the threshold: no verdict */
	tj_judge_span(hist, 3, &c, &c, 100 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	tj_judge_span(hist, 3, &b, &c, 200 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	assert_int_equal(r.window_ns, 150 * MS);
}

/* The wait's readings when hist[0] stands for the watch's span on CPU
 * (a busy poller first seen when it blocked, 650 ms into the watch): the
 * sender blocked 50 us before the flows' source dated the wait (a clean
 * clone's test_threadpass lost "asleep" so, the span taken from the
 * watch's start: its 650 ms on CPU in it, no threshold before it). */
static void tj_wait_span__first_off_before_the_wait__span_from_then(void **st)
{
	struct tj_sample hist[20], cur, bs;
	const struct tj_sample *b, *c;
	struct tj_result r;
	uint64_t off_at = 650 * MS, since = off_at + 50000;
	unsigned n = 0;

	(void)st;
	memset(hist, 0, sizeof(hist));
	hist[n++].stack_id = -1;               /* the watch began: on CPU */
	/* a reading every 50 ms from 700 ms: asleep 90% of the time since
	 * it first went off, its counters from zero then */
	for (uint64_t t = 700 * MS; t <= 1500 * MS; t += 50 * MS, n++) {
		hist[n].at_ns = t;
		hist[n].off_ns[TW_OFF_SLEEP] = (t - off_at) * 9 / 10;
		hist[n].nvcsw = (t - off_at) / 100000;
	}
	cur = hist[n - 1];
	cur.at_ns += 200 * MS;                  /* on CPU since the wait ended */
	tj_wait_span(hist, n, &cur, off_at, since, 1500 * MS, &bs, &b, &c);
	assert_ptr_equal(b, &bs);
	assert_int_equal(b->at_ns, off_at);
	assert_ptr_equal(c, &hist[n - 1]);
	tj_judge_span(hist, n, b, c, 500 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);
	assert_int_equal(r.window_ns, 850 * MS);
	assert_int_equal(r.share_pm, 900);
	/* what hist[0]'s own time gives: the watch's span on CPU in it,
	 * and no reading a threshold before it (the failure: a share just
	 * over a half, no verdict) */
	tj_judge_span(hist, n, &hist[0], c, 500 * MS, 50, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	assert_int_equal(r.window_ns, 1500 * MS);
	assert_true(r.share_pm < 600);
	/* the wait dated before it blocked: from the wait's start */
	tj_wait_span(hist, n, &cur, off_at, off_at - 10 * MS, 0, &bs, &b, &c);
	assert_ptr_equal(b, &bs);
	assert_int_equal(b->at_ns, off_at - 10 * MS);
	assert_ptr_equal(c, &cur);
	/* a reading at or before the wait's start: that one, as it is */
	tj_wait_span(hist, n, &cur, off_at, 720 * MS, 1000 * MS, &bs, &b, &c);
	assert_ptr_equal(b, &hist[1]);
	assert_ptr_equal(c, &hist[7]);
	/* no span on CPU (first seen coming on): hist[0] as it is */
	tj_wait_span(hist, n, &cur, 0, since, 0, &bs, &b, &c);
	assert_ptr_equal(b, &hist[0]);
	/* a wait that began before the watch: the oldest reading */
	hist[0].at_ns = 100 * MS;
	tj_wait_span(hist, n, &cur, off_at, 50 * MS, 0, &bs, &b, &c);
	assert_ptr_equal(b, &hist[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tj_judge__seed001_starved_sender_running_at_read__asleep_and_stalled),
		cmocka_unit_test(tj_judge__busy_poller__running),
		cmocka_unit_test(tj_judge__epoll_sleeper_no_flow_waits__not_stalled),
		cmocka_unit_test(tj_judge_hist__one_sleep_longer_than_threshold__one_sleep),
		cmocka_unit_test(tj_judge_hist__asleep_before_too__sleeper_never_stalled),
		cmocka_unit_test(tj_judge__no_history_before__unknown),
		cmocka_unit_test(tj_judge__open_span_at_both_ends__counted_once),
		cmocka_unit_test(tj_judge__window_shorter_than_threshold__unknown),
		cmocka_unit_test(tj_judge__counters_back_in_time__no_underflow),
		cmocka_unit_test(tj_judge_span__wait_read_after__asleep_then_running_now),
		cmocka_unit_test(tj_wait_span__first_off_before_the_wait__span_from_then),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
