/* Unit tests: threadjudge, the engine-thread stall decision, on fed samples
 * (no kernel): seed 001's sender (asleep 95% of 650 ms, 29,463 voluntary
 * switches), the busy poller, the healthy epoll sleeper, one long sleep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collectors/threadjudge.h"

#define MS 1000000ull
#define T0 (1000000 * MS)

/* A thread that over [t0, t0 + span) sleeps off_pm per mille in n short
 * sleeps (woken to lose a lock again), read at the end while it happens to
 * be on CPU: the emulation's /proc snapshot saw state R. */
static void starved(struct tj_sample *b, struct tj_sample *c, uint64_t span, unsigned off_pm,
		    uint64_t n)
{
	memset(b, 0, sizeof(*b));
	memset(c, 0, sizeof(*c));
	b->at_ns = T0;
	b->off_ns[TW_OFF_SLEEP] = 5 * MS;
	b->nvcsw = 100;
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
	tj_judge(&b, &c, 500 * MS, 50, T0 + 10 * MS, 50 * MS, &r);
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
	tj_judge(&b, &c, 500 * MS, 50, T0, 50 * MS, &r);
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
	tj_judge(&b, &c, 500 * MS, 50, 0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ASLEEP);
	assert_false(r.stalled);
	/* a request that arrived a moment ago is not a wait of the thread's */
	tj_judge(&b, &c, 500 * MS, 50, c.at_ns - 1 * MS, 50 * MS, &r);
	assert_false(r.stalled);
}

static void tj_judge__one_sleep_longer_than_threshold__one_sleep(void **st)
{
	struct tj_sample c = { 0 };
	struct tj_result r;

	(void)st;
	c.at_ns = T0 + 700 * MS;
	c.off_at_ns = T0 + 100 * MS;
	c.off_state = TW_OFF_DISK;
	/* no earlier sample (the thread was just found) */
	tj_judge(NULL, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_ONE_SLEEP);
	assert_true(r.stalled);
	assert_int_equal(r.since_ns, T0 + 100 * MS);
	/* the same sleep, shorter than the threshold: not yet known */
	c.at_ns = T0 + 400 * MS;
	tj_judge(NULL, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.verdict, TJ_UNKNOWN);
	assert_false(r.stalled);
}

static void tj_judge__open_span_at_both_ends__counted_once(void **st)
{
	struct tj_sample b = { 0 }, c;
	struct tj_result r;

	(void)st;
	/* asleep since before the base, still asleep, shorter than a
	 * threshold in all: only the part in the window counts */
	b.at_ns = T0;
	b.off_at_ns = T0 - 100 * MS;
	b.off_state = TW_OFF_SLEEP;
	c = b;
	c.at_ns = T0 + 300 * MS;
	tj_judge(&b, &c, 300 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.sleep_ns, 300 * MS);
	assert_int_equal(r.share_pm, 1000);
	assert_int_equal(r.verdict, TJ_ONE_SLEEP);
}

static void tj_judge__window_shorter_than_threshold__unknown(void **st)
{
	struct tj_sample b, c;
	struct tj_result r;

	(void)st;
	starved(&b, &c, 200 * MS, 950, 9000);
	tj_judge(&b, &c, 500 * MS, 50, T0, 50 * MS, &r);
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
	tj_judge(&b, &c, 500 * MS, 50, T0, 50 * MS, &r);
	assert_int_equal(r.sleep_ns, 0);
	assert_int_equal(r.nvcsw, 0);
	assert_int_equal(r.verdict, TJ_RUNNING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tj_judge__seed001_starved_sender_running_at_read__asleep_and_stalled),
		cmocka_unit_test(tj_judge__busy_poller__running),
		cmocka_unit_test(tj_judge__epoll_sleeper_no_flow_waits__not_stalled),
		cmocka_unit_test(tj_judge__one_sleep_longer_than_threshold__one_sleep),
		cmocka_unit_test(tj_judge__open_span_at_both_ends__counted_once),
		cmocka_unit_test(tj_judge__window_shorter_than_threshold__unknown),
		cmocka_unit_test(tj_judge__counters_back_in_time__no_underflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
