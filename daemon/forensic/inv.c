/* inv: what every part of an investigation uses (forensic_int.h): the
 * phase machine that runs forensic.c's table, the timeline steps, the
 * ports, and the engines' own views. It calls the parts only through the
 * table, so the parts (observe.c, capture.c, release.c, peerwait.c) and
 * forensic.c call into it and never into each other in a circle. */
#include "daemon/forensic/forensic_int.h"
#include "daemon/conf.h"
#include "daemon/forensic/evid_flows.h"
#include "daemon/detect/incident.h"
#include "daemon/ports.h"
#include "daemon/record.h"
#include "daemon/detect/stall.h"
#include "daemon/forensic/timeline.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <limits.h>
#include <stdio.h>

/* ---- the phase machine ---- */

/* While nothing is pending the phase's done() says whether it is over;
 * the next one starts. A hold of one while start() or done() runs: a part
 * that reports back at once (synchronously) cannot end the phase under
 * them. */
static void settle(struct inv *v)
{
	while (!v->done && v->pending == 0) {
		const struct inv_phase *ph = &v->F->phases[v->phase];
		int over;

		v->pending = 1;
		over = !ph->done || ph->done(v);
		/* a done() that says "not over" but started nothing would
		 * wait for nothing: over */
		if (!over && v->pending <= 1)
			over = 1;
		if (over && v->phase + 1 < PH_N) {
			v->phase++;
			v->F->phases[v->phase].start(v);
		} else if (over) {
			v->done = 1;    /* the last phase ended */
		}
		v->pending--;
	}
}

void inv_phase_enter(struct inv *v, enum phase p)
{
	v->phase = p;
	v->pending = 1;
	v->F->phases[p].start(v);
	v->pending--;
	settle(v);
}

void inv_part_done(struct inv *v)
{
	if (v->pending > 0)
		v->pending--;
	settle(v);
}

void inv_phase_timer(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;
	const struct inv_phase *ph = &v->F->phases[v->phase];

	(void)t;
	if (!v->done && ph->on_timer)
		ph->on_timer(v);
}

const char *inv_phase_name(const struct inv *v)
{
	const struct inv_phase *ph = &v->F->phases[v->phase];

	if (v->done)
		return "done";
	return ph->label ? ph->label(v) : ph->name;
}

/* ---- helpers ---- */

struct port *inv_port(struct inv *v, unsigned i)
{
	return ports_find(v->F->ports, v->ports[i]);
}

double inv_rel_ms(const struct inv *v, uint64_t t)
{
	return steps_rel_ms(v->open_ns, t);
}

int inv_step_begin(struct inv *v, const char *name, const char *port)
{
	return steps_begin(v->steps, v->open_ns, loop_mono_ns(), name, port);
}

void inv_step_end(struct inv *v, int idx, const char *outcome, const char *note)
{
	steps_end(v->steps, v->open_ns, loop_mono_ns(), idx, outcome, note);
}

int inv_still_stalled(struct inv *v)
{
	struct incident *inc;

	if (!v->incident_id)
		return 1;       /* manual investigation: no incident to ask */
	inc = stall_incident(v->F->stall, v->incident_id);
	return inc && !incident_ended(inc);
}

/* ---- the engines' own views ---- */

void inv_take_engines(struct inv *v, int after)
{
	const char *names[MAXP];
	char spool[PATH_MAX + 8];

	if (v->engines[after])
		return;
	for (unsigned i = 0; i < v->nports; i++)
		names[i] = v->ports[i];
	snprintf(spool, sizeof(spool), "%s/work", v->F->c->state_dir);
	v->engines[after] = evid_flows_take(v->F->stall, v->incident_id, names, v->nports, v->rec,
					    after ? "after" : "at_stall", spool, v->id, &v->exec_left,
					    after ? v->engines[0] : NULL);
}

void inv_follow_engines(struct inv *v, struct incident *inc)
{
	const char *names[MAXP];

	if (!inc || v->engines[1] || !jx_get(v->rec, IR_SNAPSHOT))
		return;
	if (!v->engines[0]) {
		/* again only when flows joined since the last try (a mass
		 * stall's joins are many, its listed flows at most 64) */
		if (incident_nflows(inc) != v->engines_tried) {
			v->engines_tried = incident_nflows(inc);
			inv_take_engines(v, 0);
		}
		return;
	}
	for (unsigned i = 0; i < v->nports; i++)
		names[i] = v->ports[i];
	evid_flows_follow(v->engines[0], v->F->stall, inc, names, v->nports);
}

/* Joins come in bursts (a mass stall's are 100k over a few loop turns,
 * its listed flows the first 64): the engine views follow them once
 * after the burst, not once a join (a take with nothing to take yet
 * walks the flow table: 64 walks of 100k flows held the loop 2.4 s). */
#define FOLLOW_DELAY_NS 10000000ull

void inv_follow_cb(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;

	(void)t;
	v->follow_armed = 0;
	if (!v->done)
		inv_follow_engines(v, v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL);
}

void inv_follow_soon(struct inv *v)
{
	if (v->follow_armed)
		return;
	v->follow_armed = loop_timer_set(v->follow, FOLLOW_DELAY_NS, 0) == 0;
}
