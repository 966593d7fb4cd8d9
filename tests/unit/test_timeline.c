/* Unit tests: timeline, a record's steps (no I/O, the clock given). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <string.h>

#include "daemon/forensic/timeline.h"

#define MS 1000000ull

static const char *sget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

static double dget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : -1e9;
}

/* Two steps, the second with a port, ended out of order; times are from
 * the origin given, not from any clock of its own. */
static void steps__begin_end__times_from_the_origin(void **st)
{
	struct json_object *steps = json_object_new_array(), *a, *b;
	uint64_t t0 = 5000 * MS;
	int i, j;

	(void)st;
	i = steps_begin(steps, t0, t0 + 10 * MS, "snapshot", NULL);
	j = steps_begin(steps, t0, t0 + 12500000ull, "capture", "srv");
	assert_int_equal(i, 0);
	assert_int_equal(j, 1);
	a = json_object_array_get_idx(steps, 0);
	b = json_object_array_get_idx(steps, 1);
	assert_string_equal(sget(a, "outcome"), "running");
	assert_null(sget(a, "port"));
	assert_string_equal(sget(b, "port"), "srv");
	assert_float_equal(dget(b, "start_ms"), 12.5, 1e-9);
	steps_end(steps, t0, t0 + 300 * MS, j, "ok", "250 frames");
	steps_end(steps, t0, t0 + 400 * MS, i, "ok", "");
	assert_float_equal(dget(a, "end_ms"), 400.0, 1e-9);
	assert_null(sget(a, "note"));
	assert_string_equal(sget(b, "note"), "250 frames");
	assert_string_equal(sget(b, "outcome"), "ok");
	assert_int_equal(json_object_get_int64(json_object_object_get(b, "end_mono_ns")),
			 (int64_t)(t0 + 300 * MS));
	json_object_put(steps);
}

/* Before the origin (a peer's step begun before its notice's time): a
 * negative ms; an index that is not there changes nothing. */
static void steps__before_origin_and_bad_index(void **st)
{
	struct json_object *steps = json_object_new_array();
	uint64_t t0 = 5000 * MS;

	(void)st;
	steps_begin(steps, t0, t0 - 2 * MS, "early", NULL);
	assert_float_equal(dget(json_object_array_get_idx(steps, 0), "start_ms"), -2.0, 1e-9);
	assert_float_equal(steps_rel_ms(t0, t0 - 2 * MS), -2.0, 1e-9);
	steps_end(steps, t0, t0, 5, "ok", NULL);
	steps_end(steps, t0, t0, -1, "ok", NULL);
	assert_int_equal(json_object_array_length(steps), 1);
	assert_string_equal(sget(json_object_array_get_idx(steps, 0), "outcome"), "running");
	json_object_put(steps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steps__begin_end__times_from_the_origin),
		cmocka_unit_test(steps__before_origin_and_bad_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
