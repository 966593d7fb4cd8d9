/* Unit tests: the investigation's phase machine (daemon/forensic/inv.c) on a toy
 * table of phases, with no probe, port or record: what forensic.c's
 * phases[] relies on. Each phase is a row {name, start, on_timer, done,
 * label}; a part reports back with inv_part_done(); a phase whose done()
 * starts more parts stays; a part that reports back while its phase is
 * starting cannot end the phase under it; only the machine moves on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/forensic/forensic_int.h"
#include "lib/loop.h"

#define MS 1000000ull

static char trace[512];
static struct loop *L;

static void note(const char *what)
{
	size_t n = strlen(trace);

	snprintf(trace + n, sizeof(trace) - n, "%s%s", n ? " " : "", what);
}

/* a part that reports back from the loop after ms */
struct part {
	struct inv *v;
	struct loop_timer *t;
	const char *name;
};

static void part_cb(struct loop_timer *t, void *arg)
{
	struct part *p = arg;

	loop_timer_set(t, 0, 0);
	note(p->name);
	inv_part_done(p->v);
}

static struct part parts[8];
static unsigned nparts;

static void start_part(struct inv *v, const char *name, unsigned ms)
{
	struct part *p = &parts[nparts++];

	p->v = v;
	p->name = name;
	p->t = loop_timer_new(L, part_cb, p);
	v->pending++;
	loop_timer_set(p->t, ms * MS, 0);
}

/* PH_OBSERVE: two parts, the later ends it */
static void a_start(struct inv *v)
{
	note("a:start");
	start_part(v, "a1", 5);
	start_part(v, "a2", 10);
}

/* PH_CAPTURE: nothing to wait for; its done() says "not over" but
 * starts nothing: over all the same (not a machine that spins) */
static void b_start(struct inv *v)
{
	(void)v;
	note("b:start");
}

static int b_done(struct inv *v)
{
	(void)v;
	note("b:done");
	return 0;
}

/* PH_STEPS: done() starts one more part twice, then is over */
static unsigned c_rounds;

static void c_start(struct inv *v)
{
	note("c:start");
	start_part(v, "c0", 2);
}

static int c_done(struct inv *v)
{
	if (c_rounds == 2)
		return 1;
	c_rounds++;
	start_part(v, c_rounds == 1 ? "c1" : "c2", 2);
	return 0;
}

static const char *c_label(const struct inv *v)
{
	(void)v;
	return "toy-step";
}

/* PH_PROBES: its part reports back while it starts (a probe that fails at
 * once): the phase does not end under its start */
static void d_start(struct inv *v)
{
	note("d:start");
	v->pending++;
	inv_part_done(v);
	note(v->phase == PH_PROBES ? "d:still" : "d:LEFT");
	start_part(v, "d1", 2);
}

/* PH_PEERS: waits for its timer (v->timer, the phase's on_timer) */
static void e_start(struct inv *v)
{
	note("e:start");
	v->pending++;
	loop_timer_set(v->timer, 3 * MS, 0);
}

static void e_timer(struct inv *v)
{
	note("e:timer");
	inv_part_done(v);
}

/* PH_DONE */
static void f_start(struct inv *v)
{
	note("f:start");
	v->done = 1;
	loop_stop(L);
}

static const struct inv_phase toy[PH_N] = {
	[PH_OBSERVE] = { "a", a_start, NULL, NULL, NULL },
	[PH_CAPTURE] = { "b", b_start, NULL, b_done, NULL },
	[PH_STEPS] = { "c", c_start, NULL, c_done, c_label },
	[PH_PROBES] = { "d", d_start, NULL, NULL, NULL },
	[PH_PEERS] = { "e", e_start, e_timer, NULL, NULL },
	[PH_DONE] = { "f", f_start, NULL, NULL, NULL },
};

static void stop_after(struct loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	loop_stop(L);
}

static void phases__toy_table__each_row_in_order_parts_and_timers(void **st)
{
	struct forensics F = { 0 };
	struct inv *v = calloc(1, sizeof(*v));
	struct loop_timer *guard;

	(void)st;
	L = loop_new();
	F.loop = L;
	F.phases = toy;
	v->F = &F;
	v->timer = loop_timer_new(L, inv_phase_timer, v);
	guard = loop_timer_new(L, stop_after, NULL);
	loop_timer_set(guard, 2000 * MS, 0);    /* a machine that stalls */
	inv_phase_enter(v, PH_OBSERVE);
	assert_string_equal(inv_phase_name(v), "a");
	loop_run(L);
	assert_string_equal(trace, "a:start a1 a2 b:start b:done c:start c0 c1 c2 d:start d:still d1 "
			    "e:start e:timer f:start");
	assert_true(v->done);
	assert_int_equal(v->pending, 0);
	assert_string_equal(inv_phase_name(v), "done");
	for (unsigned i = 0; i < nparts; i++)
		loop_timer_free(parts[i].t);
	loop_timer_free(v->timer);
	loop_timer_free(guard);
	loop_free(L);
	free(v);
}

/* A row's label names the phase in status while it runs. */
static void phases__label__shown_while_it_runs(void **st)
{
	struct forensics F = { .phases = toy };
	struct inv v = { .F = &F, .phase = PH_STEPS };

	(void)st;
	assert_string_equal(inv_phase_name(&v), "toy-step");
	v.phase = PH_CAPTURE;
	assert_string_equal(inv_phase_name(&v), "b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(phases__toy_table__each_row_in_order_parts_and_timers),
		cmocka_unit_test(phases__label__shown_while_it_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
