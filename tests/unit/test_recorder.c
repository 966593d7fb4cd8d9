/* Unit tests: flight recorder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/counters/counters.h"
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

/* A source whose series come and go (an application's metrics): a new
 * layout at every sample, names in another order each time, some counters
 * reset. Every delta, flag and last value equals a plain search by name
 * over every sample (the definition), whatever the layout's map. */
#define CH_NAMES 300
#define CH_SAMPLES 40
struct chv { char name[32]; uint64_t delta, last; unsigned flags; };
struct chs { struct chv v[CH_NAMES]; unsigned n; };

static void ch_cb(const char *name, uint64_t d, unsigned f, uint64_t last, void *arg)
{
	struct chs *c = arg;

	assert_true(c->n < CH_NAMES);
	snprintf(c->v[c->n].name, sizeof(c->v[0].name), "%s", name);
	c->v[c->n].delta = d;
	c->v[c->n].flags = f;
	c->v[c->n].last = last;
	c->n++;
}

static void rec_deltas__churning_layouts__same_as_search_by_name(void **state)
{
	static char names[CH_NAMES][24];
	struct recorder *r = rec_new(CH_SAMPLES, 1);
	struct clayout *lay[CH_SAMPLES];
	uint64_t *val[CH_SAMPLES], level[CH_NAMES];
	struct chs got = { .n = 0 };
	unsigned seed = 7;

	(void)state;
	for (unsigned i = 0; i < CH_NAMES; i++) {
		snprintf(names[i], sizeof(names[i]), "app.series_%u", i);
		level[i] = i * 1000;
	}
	for (unsigned t = 0; t < CH_SAMPLES; t++) {
		const char *nm[CH_NAMES];
		uint8_t w[CH_NAMES];
		unsigned n = 0, rot = (t * 37) % CH_NAMES;
		struct clayout *lays[1];
		const uint64_t *vals[1];

		val[t] = calloc(CH_NAMES, sizeof(uint64_t));
		for (unsigned k = 0; k < CH_NAMES; k++) {
			unsigned i = (k + rot) % CH_NAMES;

			seed = seed * 1103515245u + 12345u;
			if ((seed >> 16) % 5 == 0)
				continue;               /* absent from this sample */
			level[i] = (seed >> 16) % 97 == 0 ? 3 : level[i] + (seed >> 20) % 50;
			nm[n] = names[i];
			w[n] = CNT_W64;
			val[t][n] = level[i];
			n++;
		}
		lay[t] = clayout_new(n, nm, w);
		assert_non_null(lay[t]);
		lays[0] = lay[t];
		vals[0] = val[t];
		assert_int_equal(rec_push(r, 1000 + t, 2000 + t, lays, vals), 0);
	}
	assert_int_equal(rec_deltas(r, 0, 0, CH_SAMPLES - 1, ch_cb, &got), lay[CH_SAMPLES - 1]->n);
	/* the definition: for each counter of the last layout, each sample's
	 * value found by name, deltas summed pair by pair */
	for (unsigned c = 0; c < got.n; c++) {
		uint64_t sum = 0, prev = 0;
		unsigned flags = 0, f;
		int have = 0;

		assert_string_equal(got.v[c].name, lay[CH_SAMPLES - 1]->names[c]);
		for (unsigned t = 0; t < CH_SAMPLES; t++) {
			int j = clayout_find(lay[t], got.v[c].name);

			if (j < 0)
				continue;
			if (have) {
				sum += cnt_delta(prev, val[t][j], CNT_W64, &f);
				flags |= f;
			}
			prev = val[t][j];
			have = 1;
		}
		assert_int_equal(got.v[c].delta, sum);
		assert_int_equal(got.v[c].flags, flags);
		assert_int_equal(got.v[c].last, val[CH_SAMPLES - 1][c]);
	}
	rec_free(r);
	for (unsigned t = 0; t < CH_SAMPLES; t++) {
		clayout_unref(lay[t]);
		free(val[t]);
	}
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
		cmocka_unit_test(rec_deltas__churning_layouts__same_as_search_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
