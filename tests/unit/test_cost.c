/* Unit tests: lib/cost (CPU time per unit of work, share of one core over
 * the last complete window). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <string.h>

#include "lib/cost.h"
#include "lib/json.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cost_pct__before_first_window__share_since_first_use),
		cmocka_unit_test(cost_pct__after_a_window__that_window_not_the_average),
		cmocka_unit_test(cost_pct__idle_stretch__shows_low_share),
		cmocka_unit_test(cost_cpu_ns__busy_loop__advances),
		cmocka_unit_test(cost_json__fields__present_and_numeric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
