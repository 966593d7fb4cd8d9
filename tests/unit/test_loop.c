/* Unit tests: the event loop's timers with a window (lib/loop.h
 * loop_timer_set_window): fired at another wakeup once their earliest
 * time has come, and at their latest alone, never twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "lib/loop.h"

#define MS 1000000ull

struct rec {
	struct loop *l;
	unsigned fired;
	uint64_t at[8];
	unsigned stop_after;    /* stop the loop at this many fires */
	struct loop_timer *rearm;       /* a window set again from the handler */
};

static void on_fire(struct loop_timer *t, void *arg)
{
	struct rec *r = arg;

	if (r->fired < 8)
		r->at[r->fired] = loop_mono_ns();
	r->fired++;
	if (r->rearm == t && r->fired < r->stop_after)
		assert_int_equal(loop_timer_set_window(t, 0, 50 * MS), 0);
	if (r->fired >= r->stop_after)
		loop_stop(r->l);
}

/* The other wakeup: a timer of its own. */
static void on_tick(struct loop_timer *t, void *arg)
{
	unsigned *n = arg;

	(void)t;
	(*n)++;
}

static void on_guard(struct loop_timer *t, void *arg)
{
	(void)t;
	loop_stop(arg);
}

/* One window of [earliest, latest], one other wakeup at tick, a guard
 * that stops the loop: how many times each fired, and when the window
 * did (relative to its setting). */
struct one_run {
	unsigned ticks, fired;
	uint64_t at;
};

static struct one_run one_window(uint64_t earliest, uint64_t latest, uint64_t tick_at,
				 unsigned stop_after, uint64_t guard_at)
{
	struct loop *l = loop_new();
	struct rec r = { .l = l, .stop_after = stop_after };
	struct one_run out = { 0 };
	struct loop_timer *w, *tick, *guard;
	uint64_t t0;

	assert_non_null(l);
	w = loop_timer_new(l, on_fire, &r);
	tick = loop_timer_new(l, on_tick, &out.ticks);
	guard = loop_timer_new(l, on_guard, l);
	t0 = loop_mono_ns();
	assert_int_equal(loop_timer_set_window(w, earliest, latest), 0);
	assert_int_equal(loop_timer_set(tick, tick_at, 0), 0);
	assert_int_equal(loop_timer_set(guard, guard_at, 0), 0);
	assert_int_equal(loop_run(l), 0);
	out.fired = r.fired;
	out.at = r.fired ? r.at[0] - t0 : 0;
	loop_timer_free(w);
	loop_timer_free(tick);
	loop_timer_free(guard);
	loop_free(l);
	return out;
}

/* Another timer wakes the loop 30 ms on: a window of 20-1000 ms fires
 * then, and its timerfd does not fire again at 1000 ms. Fails a window
 * that only sets the timerfd (fired at 1000 ms), and one whose timerfd
 * stays armed (fired twice). */
static void window__another_wakeup_after_earliest__fires_there_once(void **state)
{
	struct one_run o;

	(void)state;
	o = one_window(20 * MS, 1000 * MS, 30 * MS, 100, 2000 * MS);
	assert_int_equal(o.ticks, 1);
	assert_int_equal(o.fired, 1);
	assert_true(o.at >= 30 * MS);
	assert_true(o.at < 1000 * MS);
}

/* A wakeup before the earliest time does not fire it; with none after,
 * it fires at its latest. */
static void window__wakeup_before_earliest_only__fires_at_latest(void **state)
{
	struct one_run o;

	(void)state;
	o = one_window(400 * MS, 500 * MS, 10 * MS, 1, 3000 * MS);
	assert_int_equal(o.ticks, 1);
	assert_int_equal(o.fired, 1);
	assert_true(o.at >= 500 * MS);
}

/* loop_timer_set() takes the window off: a plain timer is not fired by
 * another wakeup. A handler that sets its window again from the soft
 * path waits for a later wakeup (no loop of fires in one), and freeing a
 * timer with a window leaves the loop sound. */
static void window__set_plain_rearm_and_free(void **state)
{
	struct loop *l = loop_new();
	struct rec r = { .l = l, .stop_after = 100 };
	struct rec r2 = { .l = l, .stop_after = 100 };
	unsigned ticks = 0;
	struct loop_timer *w, *w2, *gone, *tick, *guard;
	uint64_t t0;

	(void)state;
	w = loop_timer_new(l, on_fire, &r);
	w2 = loop_timer_new(l, on_fire, &r2);
	gone = loop_timer_new(l, on_fire, &r);
	tick = loop_timer_new(l, on_tick, &ticks);
	guard = loop_timer_new(l, on_guard, l);
	r2.rearm = w2;
	t0 = loop_mono_ns();
	assert_int_equal(loop_timer_set_window(w, 1 * MS, 500 * MS), 0);
	assert_int_equal(loop_timer_set(w, 300 * MS, 0), 0);    /* plain now */
	assert_int_equal(loop_timer_set_window(w2, 0, 50 * MS), 0);
	assert_int_equal(loop_timer_set_window(gone, 1 * MS, 60 * MS), 0);
	loop_timer_free(gone);
	assert_int_equal(loop_timer_set(tick, 20 * MS, 20 * MS), 0);
	assert_int_equal(loop_timer_set(guard, 200 * MS, 0), 0);
	assert_int_equal(loop_run(l), 0);
	/* w: not fired by the ticks before the guard (its plain 300 ms) */
	assert_int_equal(r.fired, 0);
	/* w2: once a wakeup at most (the ticks' and its own) */
	assert_true(r2.fired >= 2);
	assert_true(r2.fired <= loop_wakeups(l));
	assert_true(loop_mono_ns() >= t0 + 200 * MS);
	assert_int_equal(loop_timer_set_window(w, 10 * MS, 5 * MS), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(loop_timer_set_window(w, 0, 0), -1);
	loop_timer_free(w);
	loop_timer_free(w2);
	loop_timer_free(tick);
	loop_timer_free(guard);
	loop_free(l);
}

/* Its timerfd ready in the same wakeup as another fd, the window due as
 * well: fired once. A handler on the soft path that frees another timer
 * with a window, and one fired by its timerfd that sets its window again
 * (earliest passed by the batch's end), fire no more than once a wakeup;
 * after loop_stop() no window fires. */
static void on_free_other(struct loop_timer *t, void *arg)
{
	struct loop_timer **other = arg;

	(void)t;
	loop_timer_free(*other);
	*other = NULL;
}

static void window__same_batch_free_and_stop(void **state)
{
	struct loop *l = loop_new();
	struct rec r = { .l = l, .stop_after = 1 };
	struct rec r2 = { .l = l, .stop_after = 100 };
	unsigned ticks = 0;
	struct loop_timer *w, *tick, *freer, *victim, *guard;

	(void)state;
	assert_non_null(l);
	w = loop_timer_new(l, on_fire, &r);
	tick = loop_timer_new(l, on_tick, &ticks);
	assert_int_equal(loop_timer_set_window(w, 1 * MS, 20 * MS), 0);
	assert_int_equal(loop_timer_set(tick, 20 * MS, 0), 0);
	{
		struct timespec ts = { 0, 60 * MS };

		nanosleep(&ts, NULL);   /* both timerfds expired */
	}
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(r.fired, 1);
	/* a soft handler freeing another windowed timer */
	victim = loop_timer_new(l, on_fire, &r2);
	freer = loop_timer_new(l, on_free_other, &victim);
	guard = loop_timer_new(l, on_guard, l);
	/* both due at the tick's wakeup; the freer looked at first (the
	 * last set is the first looked at) */
	assert_int_equal(loop_timer_set_window(victim, 30 * MS, 200 * MS), 0);
	assert_int_equal(loop_timer_set_window(freer, 1 * MS, 40 * MS), 0);
	assert_int_equal(loop_timer_set(tick, 35 * MS, 0), 0);
	assert_int_equal(loop_timer_set(guard, 300 * MS, 0), 0);
	assert_int_equal(loop_run(l), 0);
	assert_null(victim);
	assert_int_equal(r2.fired, 0);
	/* stopping: a window due at the stopping wakeup does not fire */
	r.fired = 0;
	r.stop_after = 100;
	assert_int_equal(loop_timer_set_window(w, 1 * MS, 500 * MS), 0);
	assert_int_equal(loop_timer_set(guard, 50 * MS, 0), 0);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(r.fired, 0);
	loop_timer_free(w);
	loop_timer_free(tick);
	loop_timer_free(freer);
	loop_timer_free(guard);
	loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window__another_wakeup_after_earliest__fires_there_once),
		cmocka_unit_test(window__wakeup_before_earliest_only__fires_at_latest),
		cmocka_unit_test(window__set_plain_rearm_and_free),
		cmocka_unit_test(window__same_batch_free_and_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
