/* Unit tests: lib/jreap, JSON documents dropped a value at a time. A
 * large document, or one large member, is not dropped at the put, nor in
 * one turn, and is dropped wholly within the loop's next turns; documents
 * wait their turn
 * in order; without a reaper, past JREAP_MAX, or at jreap_free, a document
 * is dropped at once (ASan: nothing leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/jreap.h"
#include "lib/loop.h"

#define MS 1000000ull

/* members objects of width values each (an array under a key, and an
 * object of small members: both kinds taken apart) */
static struct json_object *doc(unsigned members, unsigned width)
{
	struct json_object *o = json_object_new_object();
	char key[32];

	for (unsigned i = 0; i < members; i++) {
		struct json_object *m = json_object_new_object(), *a = json_object_new_array();

		for (unsigned j = 0; j < width; j++)
			json_object_array_add(a, json_object_new_int64(j));
		json_object_object_add(m, "values", a);
		json_object_object_add(m, "name", json_object_new_string("a member"));
		snprintf(key, sizeof(key), "m%u", i);
		json_object_object_add(o, key, m);
	}
	return o;
}

/* Every value of o, o included (json null too). */
static size_t values(struct json_object *o)
{
	size_t n = 1;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			(void)k;
			n += values(v);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			n += values(json_object_array_get_idx(o, i));
	}
	return n;
}

static void stop(struct loop_timer *t, void *arg)
{
	(void)t;
	loop_stop(arg);
}

/* One turn of the reaper: a window at the end of the loop's next wakeup
 * (lib/loop.h loop_timer_set_window), the reaper's, stops the loop. */
static void one_turn(struct loop *l)
{
	struct loop_timer *t = loop_timer_new(l, stop, l);

	assert_int_equal(loop_timer_set_window(t, 0, 10000 * MS), 0);
	loop_run(l);
	loop_timer_free(t);
}

struct until_done {
	struct loop *l;
	struct jreap *r;
	unsigned checks;
};

static void stop_when_done(struct loop_timer *t, void *arg)
{
	struct until_done *u = arg;

	(void)t;
	if (!jreap_pending(u->r) || ++u->checks > 1000)
		loop_stop(u->l);
}

static void run_until_done(struct loop *l, struct jreap *r)
{
	struct until_done u = { l, r, 0 };
	struct loop_timer *t = loop_timer_new(l, stop_when_done, &u);

	loop_timer_set(t, 10 * MS, 10 * MS);
	loop_run(l);
	loop_timer_free(t);
}

/* 2,000 members of 100 values (some 200,000 values): nothing dropped at
 * the put; one turn drops some (32 at least) and not all (a quarter of a
 * millisecond); then all, and the document with them. The test holds a
 * reference to watch it emptied. */
static void jreap_put__large_document__dropped_over_turns(void **state)
{
	struct loop *l = loop_new();
	struct jreap *r = jreap_new(l, "reap");
	struct json_object *o = doc(2000, 100);
	size_t v0 = values(o), v1;

	(void)state;
	json_object_get(o);
	jreap_put(r, o);
	assert_int_equal(jreap_pending(r), 1);
	assert_int_equal(values(o), v0);        /* not at the put */
	one_turn(l);
	v1 = values(o);
	assert_true(v1 + 32 <= v0);             /* a turn came */
	assert_true(v1 > v0 / 2);               /* not all in a quarter ms */
	run_until_done(l, r);
	assert_int_equal(jreap_pending(r), 0);
	assert_int_equal(values(o), 1);         /* only the held root */
	assert_int_equal(json_object_put(o), 1);        /* the last reference */
	jreap_free(r);
	loop_free(l);
}

/* One member holding 200,000 values (a record's one large part): a turn
 * takes it apart, not whole. Fails a reaper that drops a member a step. */
static void jreap_put__one_large_member__taken_apart_over_turns(void **state)
{
	struct loop *l = loop_new();
	struct jreap *r = jreap_new(l, NULL);
	struct json_object *o = json_object_new_object(), *big = json_object_new_array();
	size_t v0, v1;

	(void)state;
	for (int i = 0; i < 200000; i++)
		json_object_array_add(big, i % 1000 ? json_object_new_int(i) : NULL);
	json_object_object_add(o, "big", big);
	json_object_object_add(o, "small", json_object_new_string("s"));
	v0 = values(o);
	json_object_get(o);
	jreap_put(r, o);
	one_turn(l);
	v1 = values(o);
	assert_true(v1 + 32 <= v0);
	assert_true(v1 > v0 / 2);
	assert_non_null(json_object_object_get(o, "big"));      /* still there, smaller */
	run_until_done(l, r);
	assert_int_equal(values(o), 1);
	assert_int_equal(json_object_put(o), 1);
	jreap_free(r);
	loop_free(l);
}

/* Two documents: the first is taken apart before the second is touched;
 * an array document from its end. */
static void jreap_put__two_documents__in_order(void **state)
{
	struct loop *l = loop_new();
	struct jreap *r = jreap_new(l, NULL);
	struct json_object *a = doc(2000, 100), *b = json_object_new_array();
	size_t va, vb;

	(void)state;
	for (int i = 0; i < 1000; i++)
		json_object_array_add(b, doc(1, 10));
	va = values(a);
	vb = values(b);
	json_object_get(a);
	json_object_get(b);
	jreap_put(r, a);
	jreap_put(r, b);
	assert_int_equal(jreap_pending(r), 2);
	one_turn(l);
	assert_true(values(a) < va && values(a) > 1);
	assert_int_equal(values(b), vb);
	run_until_done(l, r);
	assert_int_equal(values(a), 1);
	assert_int_equal(values(b), 1);
	assert_int_equal(json_object_put(a), 1);
	assert_int_equal(json_object_put(b), 1);
	jreap_free(r);
	loop_free(l);
}

/* No reaper (out of memory at its start) or JREAP_MAX waiting: the
 * document is dropped at the put, whole; a scalar is a document too. */
static void jreap_put__no_reaper_or_full__dropped_at_once(void **state)
{
	struct loop *l = loop_new();
	struct jreap *r = jreap_new(l, NULL);
	struct json_object *o = doc(10, 10);

	(void)state;
	json_object_get(o);
	jreap_put(NULL, o);
	assert_int_equal(json_object_object_length(o), 10);    /* put, not taken apart */
	assert_int_equal(json_object_put(o), 1);
	jreap_put(NULL, NULL);
	jreap_put(r, NULL);
	assert_int_equal(jreap_pending(r), 0);
	for (int i = 0; i < JREAP_MAX; i++)
		jreap_put(r, json_object_new_string("waits"));
	assert_int_equal(jreap_pending(r), JREAP_MAX);
	o = doc(10, 10);
	json_object_get(o);
	jreap_put(r, o);
	assert_int_equal(jreap_pending(r), JREAP_MAX);
	assert_int_equal(json_object_put(o), 1);        /* the reaper's was dropped */
	run_until_done(l, r);
	assert_int_equal(jreap_pending(r), 0);
	jreap_free(r);
	loop_free(l);
}

/* jreap_free with documents waiting drops them (ASan's leak check). */
static void jreap_free__waiting__dropped(void **state)
{
	struct loop *l = loop_new();
	struct jreap *r = jreap_new(l, "reap");

	(void)state;
	jreap_put(r, doc(100, 100));
	jreap_put(r, doc(5, 5));
	assert_int_equal(jreap_pending(r), 2);
	jreap_free(r);
	jreap_free(NULL);
	loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jreap_put__large_document__dropped_over_turns),
		cmocka_unit_test(jreap_put__one_large_member__taken_apart_over_turns),
		cmocka_unit_test(jreap_put__two_documents__in_order),
		cmocka_unit_test(jreap_put__no_reaper_or_full__dropped_at_once),
		cmocka_unit_test(jreap_free__waiting__dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
