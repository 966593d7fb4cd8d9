/* Unit tests: flight recorder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "collectors/counters.h"
#include "daemon/recorder.h"

static const char *names2[] = { "rx", "tx" };
static const uint8_t w32[] = { CNT_W32, CNT_W64 };

static void push(struct recorder *r, uint64_t t, struct clayout *l, uint64_t a, uint64_t b)
{
	uint64_t v[2] = { a, b };
	struct clayout *lays[1] = { l };
	const uint64_t *vals[1] = { v };

	assert_int_equal(rec_push(r, t, t + 1000, lays, vals), 0);
}

struct seen {
	char name[16][32];
	uint64_t delta[16], last[16];
	unsigned flags[16];
	int n;
};

static void seen_cb(const char *name, uint64_t d, unsigned f, uint64_t last, void *arg)
{
	struct seen *s = arg;

	strcpy(s->name[s->n], name);
	s->delta[s->n] = d;
	s->flags[s->n] = f;
	s->last[s->n] = last;
	s->n++;
}

static void rec_push__beyond_capacity__keeps_newest(void **state)
{
	struct recorder *r = rec_new(4, 1);
	struct clayout *l = clayout_new(2, names2, NULL);

	(void)state;
	for (uint64_t i = 1; i <= 10; i++)
		push(r, i * 100, l, i, i * 2);
	assert_int_equal(rec_count(r), 4);
	assert_int_equal(rec_get(r, 0)->mono_ns, 700);
	assert_int_equal(rec_latest(r)->mono_ns, 1000);
	assert_int_equal(rec_latest(r)->real_ns, 2000);
	assert_int_equal(rec_latest(r)->part[0].vals[1], 20);
	assert_null(rec_get(r, 4));
	assert_int_equal(l->refs, 5);   /* ours + 4 samples */
	assert_true(rec_bytes(r) >= 4 * 2 * sizeof(uint64_t));
	rec_free(r);
	assert_int_equal(l->refs, 1);
	clayout_unref(l);
}

static void rec_window__bounds__inclusive(void **state)
{
	struct recorder *r = rec_new(16, 1);
	struct clayout *l = clayout_new(2, names2, NULL);
	unsigned f, la;

	(void)state;
	for (uint64_t i = 1; i <= 10; i++)
		push(r, i * 100, l, i, i);
	assert_int_equal(rec_window(r, 250, 700, &f, &la), 5);
	assert_int_equal(rec_get(r, f)->mono_ns, 300);
	assert_int_equal(rec_get(r, la)->mono_ns, 700);
	assert_int_equal(rec_window(r, 2000, 3000, &f, &la), 0);
	assert_int_equal(rec_window(r, 0, 50, &f, &la), 0);
	assert_int_equal(rec_window(r, 1000, 1000, &f, &la), 1);
	rec_free(r);
	clayout_unref(l);
}

static void rec_deltas__wrap_and_reset_inside_window__summed_pairwise(void **state)
{
	struct recorder *r = rec_new(16, 1);
	struct clayout *l = clayout_new(2, names2, w32);
	struct seen s = { 0 };

	(void)state;
	push(r, 100, l, 0xFFFFFFF0ull, 1000);
	push(r, 200, l, 0x10, 1500);            /* rx wraps: +0x20 */
	push(r, 300, l, 0x20, 100);             /* tx resets: +100 */
	push(r, 400, l, 0x30, 150);
	assert_int_equal(rec_deltas(r, 0, 0, 3, seen_cb, &s), 2);
	assert_string_equal(s.name[0], "rx");
	assert_int_equal(s.delta[0], 0x20 + 0x10 + 0x10);
	assert_int_equal(s.flags[0], CNT_WRAPPED);
	assert_int_equal(s.last[0], 0x30);
	assert_string_equal(s.name[1], "tx");
	assert_int_equal(s.delta[1], 500 + 100 + 50);
	assert_int_equal(s.flags[1], CNT_RESET);
	rec_free(r);
	clayout_unref(l);
}

static void rec_deltas__layout_change__matched_by_name(void **state)
{
	static const char *names3[] = { "new", "tx", "rx" };
	struct recorder *r = rec_new(8, 1);
	struct clayout *a = clayout_new(2, names2, NULL);
	struct clayout *b = clayout_new(3, names3, NULL);
	struct seen s = { 0 };
	uint64_t v[3] = { 7, 30, 12 };
	struct clayout *lays[1] = { b };
	const uint64_t *vals[1] = { v };

	(void)state;
	push(r, 100, a, 10, 20);
	assert_int_equal(rec_push(r, 200, 200, lays, vals), 0);
	assert_int_equal(rec_deltas(r, 0, 0, 1, seen_cb, &s), 3);
	assert_string_equal(s.name[0], "new");
	assert_int_equal(s.delta[0], 0);        /* no earlier value */
	assert_string_equal(s.name[1], "tx");
	assert_int_equal(s.delta[1], 10);
	assert_string_equal(s.name[2], "rx");
	assert_int_equal(s.delta[2], 2);
	rec_free(r);
	clayout_unref(a);
	clayout_unref(b);
}

static void rec_deltas__failed_source_sample__skipped(void **state)
{
	struct recorder *r = rec_new(8, 1);
	struct clayout *l = clayout_new(2, names2, NULL);
	struct clayout *none[1] = { NULL };
	const uint64_t *nov[1] = { NULL };
	struct seen s = { 0 };

	(void)state;
	push(r, 100, l, 10, 10);
	assert_int_equal(rec_push(r, 200, 200, none, nov), 0);
	push(r, 300, l, 15, 12);
	assert_null(rec_get(r, 1)->part[0].lay);
	assert_int_equal(rec_deltas(r, 0, 0, 2, seen_cb, &s), 2);
	/* a failed read in between is bridged, not counted as zero */
	assert_int_equal(s.delta[0], 5);
	assert_int_equal(s.delta[1], 2);
	rec_free(r);
	clayout_unref(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rec_push__beyond_capacity__keeps_newest),
		cmocka_unit_test(rec_window__bounds__inclusive),
		cmocka_unit_test(rec_deltas__wrap_and_reset_inside_window__summed_pairwise),
		cmocka_unit_test(rec_deltas__layout_change__matched_by_name),
		cmocka_unit_test(rec_deltas__failed_source_sample__skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
