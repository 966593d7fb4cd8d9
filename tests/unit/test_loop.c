/* Unit tests: the event loop's timers with a window (lib/loop.h
 * loop_timer_set_window): fired at another wakeup once their earliest
 * time has come, and at their latest alone, never twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
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

struct woke { const char *name[LOOP_NAMES + 2]; uint64_t n[LOOP_NAMES + 2]; unsigned k; };

static void woke_cb(const char *name, uint64_t n, void *arg)
{
	struct woke *w = arg;

	if (w->k < LOOP_NAMES + 2) {
		w->name[w->k] = name;
		w->n[w->k++] = n;
	}
}

static uint64_t woken(const struct loop *l, const char *name)
{
	struct woke w = { .k = 0 };

	loop_woken_by(l, woke_cb, &w);
	for (unsigned i = 0; i < w.k; i++)
		if (!strcmp(w.name[i], name))
			return w.n[i];
	return UINT64_MAX;
}

/* Wakeups are counted by the name of what had events in them: two timers
 * of one name in one wakeup as one, a window fired at another's wakeup as
 * none of its own, the unnamed (and names past LOOP_NAMES) as "other"; a
 * wakeup with two names' events counts for both. The timers are due
 * before the loop runs: they are in its first wakeup together. */
static void woken_by__named_timers__counted_by_cause(void **state)
{
	struct loop *l = loop_new();
	struct loop_timer *a = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *b = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *w = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *u = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *guard = loop_timer_new(l, on_guard, l), *many[LOOP_NAMES + 1];
	static char names[LOOP_NAMES + 1][8];
	unsigned ticks[LOOP_NAMES + 1] = { 0 };
	struct timespec ts = { 0, 5 * MS };
	struct woke all = { .k = 0 };

	(void)state;
	assert_int_equal(loop_timer_name(a, "sweep"), 0);
	assert_int_equal(loop_timer_name(b, "sweep"), 0);
	assert_int_equal(loop_timer_name(w, "poll"), 0);
	assert_int_equal(loop_timer_name(guard, "guard"), 0);
	assert_int_equal(loop_fd_name(l, 12345, "nothing"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(loop_timer_set(a, 1, 0), 0);
	assert_int_equal(loop_timer_set(b, 1, 0), 0);
	assert_int_equal(loop_timer_set(u, 1, 0), 0);
	assert_int_equal(loop_timer_set_window(w, 1, 500 * MS), 0);
	assert_int_equal(loop_timer_set(guard, 30 * MS, 0), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(loop_wakeups(l), 2);
	assert_int_equal(woken(l, "sweep"), 1);
	assert_int_equal(woken(l, "other"), 1);
	assert_int_equal(woken(l, "poll"), 0);
	assert_int_equal(woken(l, "guard"), 1);
	loop_woken_by(l, woke_cb, &all);
	assert_int_equal(all.k, 4);
	assert_string_equal(all.name[0], "other");
	assert_string_equal(all.name[1], "sweep");
	/* a window whose latest comes with another's event: not its wakeup;
	 * alone at its latest: its own */
	for (int with = 1; with >= 0; with--) {
		if (with)
			assert_int_equal(loop_timer_set(a, 1, 0), 0);
		assert_int_equal(loop_timer_set_window(w, 1, 1), 0);
		assert_int_equal(loop_timer_set(guard, 30 * MS, 0), 0);
		nanosleep(&ts, NULL);
		assert_int_equal(loop_run(l), 0);
		assert_int_equal(woken(l, "sweep"), 2);
		assert_int_equal(woken(l, "poll"), with ? 0 : 1);
	}
	assert_int_equal(woken(l, "guard"), 3);
	/* past LOOP_NAMES names: "other" */
	for (unsigned i = 0; i < LOOP_NAMES + 1; i++) {
		many[i] = loop_timer_new(l, on_tick, &ticks[i]);
		snprintf(names[i], sizeof(names[i]), "n%u", i);
		assert_int_equal(loop_timer_name(many[i], names[i]), 0);
	}
	assert_int_equal(woken(l, "n0"), 0);
	assert_int_equal(woken(l, names[LOOP_NAMES]), UINT64_MAX);
	assert_int_equal(loop_timer_set(many[LOOP_NAMES], 1, 0), 0);
	assert_int_equal(loop_timer_set(guard, 30 * MS, 0), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(woken(l, "other"), 2);
	for (unsigned i = 0; i < LOOP_NAMES + 1; i++)
		loop_timer_free(many[i]);
	loop_timer_free(a);
	loop_timer_free(b);
	loop_timer_free(w);
	loop_timer_free(u);
	loop_timer_free(guard);
	loop_free(l);
}

struct at_wakeup { struct loop *l; uint64_t w; };

static void on_at_wakeup(struct loop_timer *t, void *arg)
{
	struct at_wakeup *a = arg;

	(void)t;
	a->w = loop_wakeups(a->l);
}

/* A window that rides one cause fires at that cause's wakeup, not at
 * another's in its window (which would move its next off the cause's
 * phase); riding any, at the first. */
static void ride__named_cause__fires_only_at_its_wakeups(void **state)
{
	struct loop *l = loop_new();
	struct at_wakeup at = { .l = l };
	struct loop_timer *w = loop_timer_new(l, on_at_wakeup, &at);
	struct loop_timer *ctl = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *sweep = loop_timer_new(l, on_tick, &(unsigned){ 0 });
	struct loop_timer *guard = loop_timer_new(l, on_guard, l);
	struct timespec ts = { 0, 5 * MS };

	(void)state;
	assert_int_equal(loop_timer_name(ctl, "control"), 0);
	assert_int_equal(loop_timer_ride(w, "sweep"), 0);       /* before its name is given */
	assert_int_equal(loop_timer_name(sweep, "sweep"), 0);
	for (int ride = 1; ride >= 0; ride--) {
		uint64_t w0 = loop_wakeups(l);

		if (!ride)
			assert_int_equal(loop_timer_ride(w, NULL), 0);
		at.w = 0;
		assert_int_equal(loop_timer_set_window(w, 1, 200 * MS), 0);
		assert_int_equal(loop_timer_set(ctl, 1, 0), 0);
		assert_int_equal(loop_timer_set(sweep, 30 * MS, 0), 0);
		assert_int_equal(loop_timer_set(guard, 60 * MS, 0), 0);
		nanosleep(&ts, NULL);
		assert_int_equal(loop_run(l), 0);
		/* the control timer's wakeup is the first, the sweep's the second */
		assert_int_equal(at.w - w0, ride ? 2 : 1);
	}
	loop_timer_free(w);
	loop_timer_free(ctl);
	loop_timer_free(sweep);
	loop_timer_free(guard);
	loop_free(l);
}

/* loop_wake_ns: a window that rides another timer's wakeup, after that
 * timer's 20 ms of work, reads the wakeup's start, not its own: at or
 * before the work began, 20 ms or more before the window's handler ran.
 * Fails a loop that gives the time of the call or of the last handler. */
struct wake_rec {
	struct loop *l;
	uint64_t work_at, work_wake, win_at, win_wake;
};

static void on_work(struct loop_timer *t, void *arg)
{
	struct wake_rec *w = arg;
	struct timespec d = { 0, 20 * 1000 * 1000 };

	(void)t;
	w->work_at = loop_mono_ns();
	w->work_wake = loop_wake_ns(w->l);
	nanosleep(&d, NULL);
}

static void on_win(struct loop_timer *t, void *arg)
{
	struct wake_rec *w = arg;

	(void)t;
	w->win_at = loop_mono_ns();
	w->win_wake = loop_wake_ns(w->l);
	loop_stop(w->l);
}

static void wake_ns__window_after_work__the_wakeups_start(void **state)
{
	struct loop *l = loop_new();
	struct wake_rec w = { .l = l };
	struct loop_timer *work = loop_timer_new(l, on_work, &w), *win = loop_timer_new(l, on_win, &w);
	uint64_t t0 = loop_mono_ns();

	(void)state;
	assert_int_equal(loop_wake_ns(l), 0);   /* no wakeup yet */
	assert_int_equal(loop_timer_set(work, 5 * MS, 0), 0);
	assert_int_equal(loop_timer_set_window(win, 1 * MS, 2000 * MS), 0);
	assert_int_equal(loop_run(l), 0);
	assert_true(w.work_at > 0 && w.win_at > 0);
	assert_true(w.win_at < t0 + 1000 * MS);         /* rode the work's wakeup */
	assert_int_equal(w.win_wake, w.work_wake);      /* the same wakeup */
	assert_true(w.work_wake >= t0 + 5 * MS && w.work_wake <= w.work_at);
	assert_true(w.win_at - w.win_wake >= 20 * MS);
	loop_timer_free(work);
	loop_timer_free(win);
	loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window__another_wakeup_after_earliest__fires_there_once),
		cmocka_unit_test(window__wakeup_before_earliest_only__fires_at_latest),
		cmocka_unit_test(window__set_plain_rearm_and_free),
		cmocka_unit_test(window__same_batch_free_and_stop),
		cmocka_unit_test(woken_by__named_timers__counted_by_cause),
		cmocka_unit_test(ride__named_cause__fires_only_at_its_wakeups),
		cmocka_unit_test(wake_ns__window_after_work__the_wakeups_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
