/* Unit tests: the test engines' round-trip histogram
 * (examples/nsengine_lathist.h), read back as percentiles by the bench's
 * perturbation pairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>

#include "examples/nsengine_lathist.h"

static struct lathist *lh_new(void)
{
	struct lathist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

/* Fine buckets: 25 ns wide, read back as their middle. */
static void lathist__microseconds__fine_bucket_middle(void **state)
{
	struct lathist *h = lh_new();

	(void)state;
	assert_true(lh_pct_us(h, 50) == 0);
	for (int i = 0; i < 1000; i++)
		lh_add(h, 7010);
	lh_add(h, 9000);
	assert_true(lh_pct_us(h, 50) > 7.0 && lh_pct_us(h, 50) < 7.025);
	assert_true(lh_pct_us(h, 99.9) < 7.025);
	assert_true(lh_pct_us(h, 100) > 9.0 && lh_pct_us(h, 100) < 9.025);
	free(h);
}

/* A tail past 200 us still moves the figure: 500 us and 5 ms read as
 * themselves (to 10 us), not as the 200 us a single overflow bucket gave,
 * so a pair whose tail went from 500 us to 5 ms shows it. */
static void lathist__tail_past_200us__still_measured(void **state)
{
	struct lathist *a = lh_new(), *b = lh_new();

	(void)state;
	for (int i = 0; i < 100; i++) {
		lh_add(a, 500000);
		lh_add(b, 5000000);
	}
	assert_true(lh_pct_us(a, 99) >= 500 && lh_pct_us(a, 99) <= 510);
	assert_true(lh_pct_us(b, 99) >= 5000 && lh_pct_us(b, 99) <= 5010);
	free(a);
	free(b);
}

/* Beyond the last coarse bucket: counted, read as 20 ms. */
static void lathist__beyond_20ms__last_bucket(void **state)
{
	struct lathist *h = lh_new();

	(void)state;
	lh_add(h, 30000000);
	lh_add(h, UINT64_MAX);
	assert_int_equal(h->n, 2);
	assert_true(lh_pct_us(h, 50) == LH_MAX_US);
	assert_true(LH_MAX_US == 20000.0);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lathist__microseconds__fine_bucket_middle),
		cmocka_unit_test(lathist__tail_past_200us__still_measured),
		cmocka_unit_test(lathist__beyond_20ms__last_bucket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
