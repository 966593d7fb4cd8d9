/* Unit tests: lib/cost (CPU time per unit of work, share of one core over
 * the last complete window). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <string.h>
#include <time.h>

#include "lib/cost.h"
#include "lib/json.h"
#include "lib/loop.h"

#define MS 1000000ull
#define S 1000000000ull

static void cost_pct__before_first_window__share_since_first_use(void **state)
{
	struct cost c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_true(cost_pct(&c, 5 * S) == 0);
	cost_add(&c, 1 * MS, 100 * S);
	cost_add(&c, 1 * MS, 101 * S);
	/* 2 ms over the 2 s since the first use: 0.1 % */
	assert_float_equal(cost_pct(&c, 102 * S), 0.1, 1e-9);
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.cpu_ns, 2 * MS);
	assert_int_equal(c.max_ns, 1 * MS);
}

static void cost_pct__after_a_window__that_window_not_the_average(void **state)
{
	struct cost c;
	uint64_t t = 1000 * S;

	(void)state;
	memset(&c, 0, sizeof(c));
	/* a dear first window: 50 ms every second for 10 s (5 %) */
	for (int i = 0; i < 10; i++)
		cost_add(&c, 50 * MS, t + (uint64_t)i * S);
	/* then a cheap one: 1 ms a second (0.1 %) */
	for (int i = 10; i < 20; i++)
		cost_add(&c, 1 * MS, t + (uint64_t)i * S);
	cost_add(&c, 1 * MS, t + 20 * S);       /* rolls the second window */
	assert_float_equal(cost_pct(&c, t + 21 * S), 0.1, 1e-9);
	assert_int_equal(c.cpu_ns, 500 * MS + 11 * MS);
}

static void cost_pct__idle_stretch__shows_low_share(void **state)
{
	struct cost c;

	(void)state;
	memset(&c, 0, sizeof(c));
	cost_add(&c, 100 * MS, 10 * S);
	cost_add(&c, 100 * MS, 11 * S);
	/* nothing for a minute: the window running since 10 s is long over */
	assert_true(cost_pct(&c, 71 * S) < 0.34);
	assert_true(cost_pct(&c, 71 * S) > 0.32);     /* 200 ms over 61 s */
}

static void cost_cpu_ns__busy_loop__advances(void **state)
{
	volatile unsigned long x = 0;
	uint64_t a, b;

	(void)state;
	a = cost_cpu_ns();
	for (unsigned long i = 0; i < 20000000ul; i++)
		x += i;
	b = cost_cpu_ns();
	assert_true(a > 0);
	assert_true(b > a);
	assert_true(cost_rss_kib() > 0);
}

static void cost_json__fields__present_and_numeric(void **state)
{
	struct json_object *o = json_object_new_object();
	struct cost c;

	(void)state;
	memset(&c, 0, sizeof(c));
	cost_add(&c, 3000, 1 * S);
	cost_add(&c, 5000, 2 * S);
	cost_json(&c, 2 * S, o);
	assert_float_equal(jx_double(o, "per_call_us", -1), 4.0, 1e-9);
	assert_float_equal(jx_double(o, "max_us", -1), 5.0, 1e-9);
	assert_int_equal(jx_u64(o, "calls"), 2);
	assert_non_null(jx_get(o, "cpu_pct"));
	assert_non_null(jx_get(o, "cpu_ms"));
	json_object_put(o);
}

static void spin_cpu(uint64_t ns)
{
	uint64_t c0 = cost_cpu_ns();

	while (cost_cpu_ns() - c0 < ns)
		;
}

/* Units of a round are charged in proportion to their wall times, and
 * the shares add up to the round's CPU time. */
static void cost_round__two_busy_units__shares_in_proportion(void **state)
{
	struct cost_round r;
	uint64_t a, b, sa, sb, c0, c1;

	(void)state;
	c0 = cost_cpu_ns();
	cost_round_start(&r);
	spin_cpu(4 * MS);
	a = cost_round_lap(&r);
	spin_cpu(12 * MS);
	b = cost_round_lap(&r);
	cost_round_stop(&r);
	c1 = cost_cpu_ns();
	sa = cost_round_share(&r, a);
	sb = cost_round_share(&r, b);
	assert_true(a >= 4 * MS && b >= 12 * MS);
	assert_true(sa <= a && sb <= b);
	/* never more than the round's CPU time, itself within what the
	 * thread spent around it */
	assert_true(sa + sb <= r.cpu);
	assert_true(r.cpu <= c1 - c0);
	assert_true(sa + sb >= 15 * MS);
	/* 1:3, when the thread was on the CPU for the round (a preemption of
	 * one unit alone lengthens its wall time, and so its share) */
	if (r.cpu >= r.wall - r.wall / 10)
		assert_true(sb > 2 * sa && sb < 4 * sa);
}

/* A unit off the CPU (here asleep; in the daemon, preempted) is not
 * charged its wall time: the round charges no more than its CPU time.
 * A naive per-unit wall time would charge the 30 ms sleep. */
static void cost_round__unit_off_cpu__round_charges_its_cpu_only(void **state)
{
	struct timespec ts = { 0, 30 * MS };
	struct cost_round r;
	uint64_t a, b;

	(void)state;
	cost_round_start(&r);
	spin_cpu(2 * MS);
	a = cost_round_lap(&r);
	nanosleep(&ts, NULL);
	b = cost_round_lap(&r);
	cost_round_stop(&r);
	assert_true(b >= 30 * MS);
	assert_true(r.cpu < r.wall);
	assert_true(cost_round_share(&r, a) + cost_round_share(&r, b) <= r.cpu);
	assert_true(cost_round_share(&r, b) < 10 * MS);
}

/* A unit that may sleep in the kernel (a firmware command; here a
 * nanosleep) is costed exactly and taken out of the round: the busy unit
 * beside it keeps its own CPU time. Shared by wall time, the sleeper
 * would take nearly all of it. */
static void cost_round_exact__sleeping_unit__others_keep_their_share(void **state)
{
	struct timespec ts = { 0, 30 * MS };
	struct cost_round r;
	uint64_t a, x, t0, t1;

	(void)state;
	t0 = loop_mono_ns();
	cost_round_start(&r);
	spin_cpu(4 * MS);
	a = cost_round_lap(&r);
	cost_round_exact_start(&r);
	nanosleep(&ts, NULL);
	x = cost_round_exact_stop(&r);
	cost_round_stop(&r);
	t1 = loop_mono_ns();
	assert_true(x < 5 * MS);
	/* the sleep is not the round's: the round's wall time leaves out at
	 * least the 30 ms slept, whatever else a loaded machine added (a
	 * bound from the test's own clock, not a threshold) */
	if (r.wall + 30 * MS > t1 - t0)
		fail_msg("round wall %llu ns, %llu ns from start to stop: the sleep was counted",
			 (unsigned long long)r.wall, (unsigned long long)(t1 - t0));
	assert_true(r.wall >= a);
	assert_true(cost_round_share(&r, a) >= 3 * MS);
	assert_true(cost_round_share(&r, a) <= r.cpu);
}

/* A round whose CPU reads more than its wall time (the clocks tick
 * apart) charges each unit its wall time, never more. */
static void cost_round_share__cpu_above_wall__wall_time(void **state)
{
	struct cost_round r = { .cpu = 12 * MS, .wall = 10 * MS };

	(void)state;
	assert_int_equal(cost_round_share(&r, 4 * MS), 4 * MS);
	r.cpu = 5 * MS;
	assert_int_equal(cost_round_share(&r, 4 * MS), 2 * MS);
	r.wall = 0;
	assert_int_equal(cost_round_share(&r, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cost_pct__before_first_window__share_since_first_use),
		cmocka_unit_test(cost_pct__after_a_window__that_window_not_the_average),
		cmocka_unit_test(cost_pct__idle_stretch__shows_low_share),
		cmocka_unit_test(cost_cpu_ns__busy_loop__advances),
		cmocka_unit_test(cost_json__fields__present_and_numeric),
		cmocka_unit_test(cost_round__two_busy_units__shares_in_proportion),
		cmocka_unit_test(cost_round__unit_off_cpu__round_charges_its_cpu_only),
		cmocka_unit_test(cost_round_exact__sleeping_unit__others_keep_their_share),
		cmocka_unit_test(cost_round_share__cpu_above_wall__wall_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
