/* Unit tests for collectors/counters/counters.c: layouts and cnt_delta. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/counters/counters.h"

static const char *const names3[] = { "rx_packets", "rx_out_of_buffer",
				      "rx_discards_phy" };

static void clayout_new__names_copied__owned_and_widths(void **state)
{
	char a[] = "rx_a", b[] = "rx_b";
	const char *nm[] = { a, b };
	const uint8_t w[] = { CNT_W32, CNT_W64 };
	struct clayout *l = clayout_new(2, nm, w), *l64 = clayout_new(2, nm, NULL);

	(void)state;
	assert_non_null(l);
	assert_non_null(l64);
	strcpy(a, "XXXX");      /* the layout holds its own copies */
	assert_string_equal(l->names[0], "rx_a");
	assert_string_equal(l->names[1], "rx_b");
	assert_int_equal(l->n, 2);
	assert_int_equal(l->refs, 1);
	assert_int_equal(l->width[0], CNT_W32);
	assert_int_equal(l->width[1], CNT_W64);
	assert_int_equal(l64->width[0], CNT_W64);
	assert_int_equal(l64->width[1], CNT_W64);
	clayout_unref(l);
	clayout_unref(l64);
}

static void clayout_new__zero_names__empty_layout(void **state)
{
	struct clayout *l = clayout_new(0, NULL, NULL);

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->n, 0);
	assert_int_equal(clayout_find(l, "x"), -1);
	clayout_unref(l);
}

static void clayout_ref__two_holders__freed_after_last(void **state)
{
	struct clayout *l = clayout_new(3, names3, NULL);

	(void)state;
	assert_ptr_equal(clayout_ref(l), l);
	assert_int_equal(l->refs, 2);
	clayout_unref(l);
	assert_int_equal(l->refs, 1);
	/* Still usable by the remaining holder (ASan would catch a free). */
	assert_string_equal(l->names[2], "rx_discards_phy");
	clayout_unref(l);
	assert_null(clayout_ref(NULL));
	clayout_unref(NULL);
}

static void clayout_equal__names_order_width__compared(void **state)
{
	const char *swapped[] = { "rx_out_of_buffer", "rx_packets",
				  "rx_discards_phy" };
	const uint8_t w[] = { CNT_W64, CNT_W32, CNT_W64 };
	struct clayout *a = clayout_new(3, names3, NULL);
	struct clayout *b = clayout_new(3, names3, NULL);
	struct clayout *c = clayout_new(3, swapped, NULL);
	struct clayout *d = clayout_new(2, names3, NULL);
	struct clayout *e = clayout_new(3, names3, w);

	(void)state;
	assert_true(clayout_equal(a, a));
	assert_true(clayout_equal(a, b));
	assert_false(clayout_equal(a, c));
	assert_false(clayout_equal(a, d));
	assert_false(clayout_equal(d, a));
	assert_false(clayout_equal(a, e));
	assert_false(clayout_equal(a, NULL));
	assert_true(clayout_equal(NULL, NULL));
	clayout_unref(a);
	clayout_unref(b);
	clayout_unref(c);
	clayout_unref(d);
	clayout_unref(e);
}

static void clayout_find__present_absent__index_or_minus1(void **state)
{
	struct clayout *l = clayout_new(3, names3, NULL);

	(void)state;
	assert_int_equal(clayout_find(l, "rx_packets"), 0);
	assert_int_equal(clayout_find(l, "rx_discards_phy"), 2);
	assert_int_equal(clayout_find(l, "rx_packet"), -1);
	assert_int_equal(clayout_find(l, ""), -1);
	assert_int_equal(clayout_find(NULL, "rx_packets"), -1);
	clayout_unref(l);
}

static void cnt_delta__growth__difference_no_flags(void **state)
{
	unsigned fl = 99;

	(void)state;
	assert_int_equal(cnt_delta(100, 250, CNT_W64, &fl), 150);
	assert_int_equal(fl, 0);
	fl = 99;
	assert_int_equal(cnt_delta(100, 250, CNT_W32, &fl), 150);
	assert_int_equal(fl, 0);
	assert_true(cnt_delta(0, UINT64_MAX, CNT_W64, &fl) == UINT64_MAX);
	assert_int_equal(cnt_delta(1, 2, CNT_W64, NULL), 1);
}

static void cnt_delta__equal__zero_no_flags(void **state)
{
	unsigned fl = 99;

	(void)state;
	assert_int_equal(cnt_delta(12345, 12345, CNT_W64, &fl), 0);
	assert_int_equal(fl, 0);
	fl = 99;
	assert_int_equal(cnt_delta(0xFFFFFFFFu, 0xFFFFFFFFu, CNT_W32, &fl), 0);
	assert_int_equal(fl, 0);
}

static void cnt_delta__w32_wrap__distance_through_zero_wrapped(void **state)
{
	unsigned fl = 0;

	(void)state;
	assert_int_equal(cnt_delta(0xFFFFFFF0u, 0x10, CNT_W32, &fl), 0x20);
	assert_int_equal(fl, CNT_WRAPPED);
	assert_int_equal(cnt_delta(0xFFFFFFFFu, 0, CNT_W32, &fl), 1);
	assert_int_equal(fl, CNT_WRAPPED);
	/* flags may be NULL. */
	assert_int_equal(cnt_delta(0xFFFFFFF0u, 0x10, CNT_W32, NULL), 0x20);
}

static void cnt_delta__w32_small_drop__reset_current_value(void **state)
{
	unsigned fl = 0;

	(void)state;
	assert_int_equal(cnt_delta(1000, 10, CNT_W32, &fl), 10);
	assert_int_equal(fl, CNT_RESET);
	/* A drop of exactly half the range is not a wrap. */
	assert_int_equal(cnt_delta(1ull << 31, 0, CNT_W32, &fl), 0);
	assert_int_equal(fl, CNT_RESET);
}

static void cnt_delta__w64_decrease__reset_current_value(void **state)
{
	unsigned fl = 0;

	(void)state;
	assert_int_equal(cnt_delta(0xFFFFFFF0u, 0x10, CNT_W64, &fl), 0x10);
	assert_int_equal(fl, CNT_RESET);
	assert_int_equal(cnt_delta(UINT64_MAX, 5, CNT_W64, &fl), 5);
	assert_int_equal(fl, CNT_RESET);
}

static void cnt_delta__w32_above_2pow32_drops__reset_not_wrap(void **state)
{
	unsigned fl = 0;

	(void)state;
	/* Really a wider counter: a big drop is a reset, not a wrap. */
	assert_int_equal(cnt_delta(0x100000010ull, 0x10, CNT_W32, &fl), 0x10);
	assert_int_equal(fl, CNT_RESET);
	assert_int_equal(cnt_delta(0x500000000ull, 3, CNT_W32, &fl), 3);
	assert_int_equal(fl, CNT_RESET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clayout_new__names_copied__owned_and_widths),
		cmocka_unit_test(clayout_new__zero_names__empty_layout),
		cmocka_unit_test(clayout_ref__two_holders__freed_after_last),
		cmocka_unit_test(clayout_equal__names_order_width__compared),
		cmocka_unit_test(clayout_find__present_absent__index_or_minus1),
		cmocka_unit_test(cnt_delta__growth__difference_no_flags),
		cmocka_unit_test(cnt_delta__equal__zero_no_flags),
		cmocka_unit_test(cnt_delta__w32_wrap__distance_through_zero_wrapped),
		cmocka_unit_test(cnt_delta__w32_small_drop__reset_current_value),
		cmocka_unit_test(cnt_delta__w64_decrease__reset_current_value),
		cmocka_unit_test(cnt_delta__w32_above_2pow32_drops__reset_not_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
