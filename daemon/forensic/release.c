/* release: the promiscuous steps of an investigation, port by port, the
 * watch for the release after each, and which action released the flows.
 *
 * Seed 000: a port's receive-filter state held the frames of established
 * bypass flows; making the port promiscuous (tcpdump) made the driver
 * reprogram its filters and released them. So, after the plain captures,
 * for each port in the order the evidence points (the gap between port and
 * vport beyond its healthy rate, the drop counters), first a promiscuous
 * capture, then a reprogram where the policy allows it; after each, watch
 * for the release as long as the stalled flows' own retries need to show it
 * (a release shows only when the sender tries again: TCP's next
 * retransmission from tcp_info, an engine's published retry time, else
 * release_wait), capped at release_wait_max; stop at the first release. */
#include "daemon/conf.h"
#include "daemon/forensic/facts.h"
#include "daemon/forensic/forensic_int.h"
#include "daemon/detect/incident.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "daemon/runs.h"
#include "daemon/forensic/recovery.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_cap.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *act_name(enum act_kind k)
{
	return k == ACT_PROMISC ? "promisc-capture" : "reprogram";
}

const char *inv_steps_label(const struct inv *v)
{
	if (v->cur < v->nact)
		return v->watching ? "watch" : act_name(v->act[v->cur].kind);
	return "watch";
}

/* ---- the order of the ports ---- */

static double sig(const struct rules *r, const char *profile, const char *name,
		  struct json_object *counters)
{
	double d;

	return r && counters && rules_signal(r, profile, name, counters, &d) == 0 ? d : 0;
}

/* What the evidence says of port p: frames counted at the port and not at
 * the vport beyond the healthy rate, and frames the card dropped, across
 * the stall and the observation window. */
static double port_score(const struct rules *r, struct json_object *pf, double *gap,
			 double *drops)
{
	const char *profile = jx_str(pf, FK_P_PROFILE);
	struct json_object *st = jx_get(jx_get(pf, FK_PER_STALL), FK_COUNTERS);
	struct json_object *wn = jx_get(jx_get(pf, FK_PER_WINDOW), FK_COUNTERS);
	struct json_object *bl = jx_get(jx_get(pf, FK_PER_BASELINE), FK_COUNTERS);
	double span = jx_double(jx_get(pf, FK_PER_STALL), FK_SPAN_S, 0) +
		      jx_double(jx_get(pf, FK_PER_WINDOW), FK_SPAN_S, 0);
	double bspan = jx_double(jx_get(pf, FK_PER_BASELINE), FK_SPAN_S, 0);
	static const char *const drop_sigs[] = { "buffer_drops", "steer_misses" };

	if (!profile)
		profile = "generic";
	*gap = sig(r, profile, "gap", st) + sig(r, profile, "gap", wn);
	if (bspan > 0)
		*gap -= sig(r, profile, "gap", bl) / bspan * span;
	*drops = 0;
	for (size_t i = 0; i < sizeof(drop_sigs) / sizeof(drop_sigs[0]); i++)
		*drops += sig(r, profile, drop_sigs[i], st) + sig(r, profile, drop_sigs[i], wn);
	return (*gap > 0 ? *gap : 0) + (*drops > 0 ? *drops : 0);
}

/* Can the port's counters tell frames lost before the vport at all (the
 * rules' gap signal has its counters: a card with port and vport
 * counters)? A veth or a driver without them cannot. */
static int gap_known(const struct rules *r, struct json_object *pf)
{
	const char *profile = jx_str(pf, FK_P_PROFILE);
	struct json_object *st = jx_get(jx_get(pf, FK_PER_STALL), FK_COUNTERS);
	double d;

	return r && st && rules_signal(r, profile ? profile : "generic", "gap", st, &d) == 0;
}

/* Did port i lose frames of the flows, by the evidence: a net gap or a
 * drop of at least one frame beyond the healthy rate, or counters that
 * cannot tell? A receive-filter action can only release frames the port
 * was losing. */
static int port_lost(const struct inv *v, unsigned i)
{
	return v->lost[i];
}

/* The facts of the record so far, with the incident's flows as they are
 * now (the record gets them for good at the end): the stall began when
 * its first flow started waiting. */
static struct json_object *inv_facts(struct inv *v)
{
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	struct json_object *f;

	if (!inc || jx_get(v->rec, IR_INCIDENT))
		return facts_build(v->F->ports, v->rec);
	json_object_object_add(v->rec, IR_INCIDENT, incident_json(inc, loop_mono_ns()));
	f = facts_build(v->F->ports, v->rec);
	json_object_object_del(v->rec, IR_INCIDENT);
	return f;
}

int inv_gap_marginal(struct inv *v)
{
	struct json_object *facts = inv_facts(v);
	double best = 0, gap, drops;
	int known = 0;

	for (unsigned i = 0; i < v->nports; i++) {
		struct json_object *pf = jx_get(jx_get(facts, FK_PORTS), v->ports[i]);

		gap = drops = 0;
		if (!pf || !gap_known(v->F->rules, pf))
			continue;
		known = 1;
		port_score(v->F->rules, pf, &gap, &drops);
		if (gap > best)
			best = gap;
	}
	json_object_put(facts);
	return known && best < 2;
}

static void plan_steps(struct inv *v)
{
	struct json_object *facts = inv_facts(v), *order = json_object_new_array();
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	double score[MAXP], gap[MAXP], drops[MAXP];
	unsigned idx[MAXP], counted;
	uint64_t retrans = 0;

	/* the flows' own retransmissions so far (0 flows: no count) */
	counted = inc ? stall_incident_retrans(v->F->stall, inc, &retrans) : 0;
	for (unsigned i = 0; i < v->nports; i++) {
		struct json_object *pf = jx_get(jx_get(facts, FK_PORTS), v->ports[i]);

		gap[i] = drops[i] = 0;
		score[i] = pf ? port_score(v->F->rules, pf, &gap[i], &drops[i]) : 0;
		/* counters that cannot tell a loss are no evidence against
		 * one: the port is planned as before (the record says why) */
		v->unknown_loss[i] = pf && !gap_known(v->F->rules, pf) && drops[i] < 1;
		/* as the rules count a loss (50-verdicts.rules port-drop): a
		 * gap of one frame alone is read skew between the two firmware
		 * queries, one beside a retransmission of the stalled flows is
		 * a loss (a reprogram planned and credited on a skew the
		 * summary called none disagreed with it) */
		v->lost[i] = v->unknown_loss[i] || gap[i] >= 2 || (gap[i] >= 1 && retrans >= 1) ||
			     drops[i] >= 1;
		idx[i] = i;
	}
	json_object_put(facts);
	/* highest score first; a tie keeps the incident's port first */
	for (unsigned i = 1; i < v->nports; i++)
		for (unsigned j = i; j > 0 && score[idx[j]] > score[idx[j - 1]]; j--) {
			unsigned t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	v->nact = 0;
	for (unsigned k = 0; k < v->nports; k++) {
		struct json_object *o = json_object_new_object();
		unsigned i = idx[k];
		struct port *p = inv_port(v, i);
		int policy = p && port_conf(p)->reprogram_without_loss;

		jx_add_str(o, "port", v->ports[i]);
		json_object_object_add(o, "gap", jx_new_fixed(gap[i], 1));
		json_object_object_add(o, "drops", jx_new_fixed(drops[i], 1));
		json_object_object_add(o, "score", jx_new_fixed(score[i], 1));
		if (v->unknown_loss[i])
			jx_add_str(o, "lost_frames", "unknown: its counters have no port/vport pair");
		else
			jx_add_bool(o, "lost_frames", port_lost(v, i));
		if (counted)
			jx_add_u64(o, "flows_retrans", retrans);
		v->act[v->nact++] = (struct action){ .kind = ACT_PROMISC, .port = i, .step = -1 };
		/* the reprogram acts on the port's receive filter: planned
		 * only where the port lost frames of the flows, or where the
		 * policy says so (and the record says that it did) */
		if (port_lost(v, i) || policy) {
			v->act[v->nact++] = (struct action){ .kind = ACT_REPROGRAM, .port = i,
							     .step = -1 };
			jx_add_str(o, "reprogram", v->unknown_loss[i] ?
				   "planned: the port's counters cannot tell whether it lost frames of the flows" :
				   port_lost(v, i) ? "planned: the port lost frames of the flows" :
				   "planned by policy (reprogram_without_loss = yes): the port lost no frame of the flows");
		} else
			jx_add_str(o, "reprogram", "not planned: the port lost no frame of the flows "
				   "(no gap between port and vport, no drop beyond the healthy rate)");
		json_object_array_add(order, o);
	}
	v->cur = 0;
	json_object_object_add(v->rec, IR_PORT_ORDER, order);
}

/* ---- the watch ---- */

struct due_ctx {
	const struct conf *c;
	uint64_t t;             /* the action took effect */
	uint64_t latest;        /* the last flow's next retry, plus margin */
	uint64_t due;           /* the last flow's next retry */
	int known;
};

/* The first retry of flow o after t: TCP backs off by doubling
 * (tcp_retransmit_timer: icsk_rto = min(icsk_rto << 1, TCP_RTO_MAX)). */
static void due_cb(const struct flow_obs *o, void *arg)
{
	struct due_ctx *d = arg;
	uint64_t due, rto = o->rto_ns, margin;

	if (!o->retry_due_ns) {
		due = d->t + d->c->release_wait_ns;
		margin = 0;
	} else {
		due = o->retry_due_ns;
		for (int i = 0; i < 12 && rto && due < d->t + 5000000ull; i++) {
			due += rto * 2;
			rto *= 2;
		}
		if (due < d->t)
			due = d->t;
		/* the timer wheel rounds every expiry up to the next boundary
		 * of its level (kernel/time/timer.c calc_index): up to one
		 * granularity late, at most 8/63 of the timeout
		 * (LVL_GRAN(n) / LVL_START(n)), 256 ms of a 3.2 s RTO at
		 * HZ=250. Each retry in the chain from the one the poll saw
		 * starts from the last one's real time, so their lateness
		 * adds up: under 16/63 of the last timeout in all. Then the
		 * ACK comes back and two polls see it, on a loaded host a
		 * little late (50 ms). */
		margin = (rto ? rto : o->rto_ns) * 16 / 63 + 2 * d->c->flow_interval_ns + 50000000ull;
		d->known = 1;
	}
	if (due + margin > d->latest)
		d->latest = due + margin;
	if (margin && due > d->due)
		d->due = due;
}

uint64_t inv_next_retry(struct inv *v, uint64_t t)
{
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	struct due_ctx d = { v->F->c, t, 0, 0, 0 };

	if (inc)
		stall_incident_flows(v->F->stall, inc, due_cb, &d);
	return d.known ? d.latest : 0;
}

static void arm_watch(struct inv *v, struct action *a)
{
	const struct conf *c = v->F->c;
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	struct due_ctx d = { c, a->effect_ns, a->effect_ns + c->release_wait_ns, 0, 0 };
	uint64_t now = loop_mono_ns(), cap = a->effect_ns + c->release_wait_max_ns;

	if (inc)
		stall_incident_flows(v->F->stall, inc, due_cb, &d);
	a->natural_ns = d.latest;
	a->deadline_ns = d.latest < cap ? d.latest : cap;
	a->capped = d.latest > cap;
	if (a->step >= 0) {
		struct json_object *s = json_object_array_get_idx(v->steps, (size_t)a->step);

		json_object_object_add(s, "watch_ms", jx_new_fixed(
			(double)(a->deadline_ns - a->effect_ns) / 1e6, 1));
		jx_add_str(s, "watch_for", d.known ? "the flows' next retry" :
			   "release_wait (no retry time known)");
		if (d.known)
			json_object_object_add(s, "retry_due_ms",
					       jx_new_fixed(inv_rel_ms(v, d.due), 1));
		if (a->capped)
			jx_add_bool(s, "watch_capped", 1);
	}
	v->watching = 1;
	v->pending++;
	loop_timer_set(v->timer, a->deadline_ns > now ? a->deadline_ns - now : 1, 0);
}

void inv_watch_expired(struct inv *v)
{
	if (!v->watching)
		return;
	v->watching = 0;
	inv_part_done(v);
}

void inv_released(struct inv *v)
{
	if (v->phase == PH_STEPS && v->watching) {
		loop_timer_set(v->timer, 0, 0);
		v->watching = 0;
		inv_part_done(v);
	}
}

/* ---- the steps ---- */

static void reprogram_done(struct json_object *o, int performed, void *arg)
{
	struct inv *v = arg;
	struct action *a = &v->act[v->cur];

	a->end_ns = loop_mono_ns();
	a->transition = performed;
	/* the driver acts on the first crossing; the hold ran meanwhile */
	a->effect_ns = jx_u64(o, "first_mono_ns") ? jx_u64(o, "first_mono_ns") : a->start_ns;
	inv_step_end(v, a->step, performed ? "ok" : jx_str(o, "refused") ? "no-transition" : "failed",
		     jx_str(o, "refused") ? jx_str(o, "refused") :
		     jx_str(o, "error") ? jx_str(o, "error") : jx_str(o, "sequence"));
	if (a->ran)
		runs_intervention(v->F->runs, "reprogram", v->ports[a->port], a->effect_ns,
				  performed || jx_u64(o, "first_mono_ns"),
				  performed ? jx_str(o, "sequence") : "no transition");
	json_object_array_add(jx_array_at(v->rec, IR_REPROGRAMS), o);
	if (performed && inv_still_stalled(v))
		arm_watch(v, a);
	inv_part_done(v);
}

/* Start act[v->cur]; 0 when it runs (its parts pending), -1 when
 * skipped. */
static int start_action(struct inv *v, struct action *a)
{
	struct port *p = inv_port(v, a->port);
	struct json_object *o;

	if (!p)
		return -1;
	a->start_ns = a->effect_ns = loop_mono_ns();
	if (a->kind == ACT_PROMISC) {
		if (!port_conf(p)->promisc_capture || port_state(p) != PORT_UP)
			return -1;
		if (!inv_start_captures(v, (int)a->port, 1))
			return -1;
		a->ran = 1;
		a->step = v->cap_step[a->port];
		/* the capture's open made the crossing (or did not: another
		 * holder, already promiscuous); the driver acts on it now */
		if (v->cap[a->port])
			a->transition = v->F->pr->cap_result(v->cap[a->port])->transition == 1;
		if (inv_still_stalled(v))
			arm_watch(v, a);
		return 0;
	}
	if (!port_conf(p)->recover)
		return -1;
	{
		char why[160];

		if (!runs_allow(v->F->runs, !v->incident_id, why, sizeof(why))) {
			/* a benchmark run is open: no reprogram */
			inv_step_end(v, inv_step_begin(v, "reprogram", v->ports[a->port]),
				     "skipped", why);
			return -1;
		}
	}
	o = json_object_new_object();
	a->step = inv_step_begin(v, "reprogram", v->ports[a->port]);
	a->ran = 1;
	v->pending++;           /* reprogram_done reports it */
	if (recovery_start(v->F->recovery, p, 0, o, reprogram_done, v) < 0) {
		v->pending--;
		a->end_ns = loop_mono_ns();
		inv_step_end(v, a->step, "refused", jx_str(o, "error"));
		json_object_array_add(jx_array_at(v->rec, IR_REPROGRAMS), o);
		return -1;
	}
	return 0;
}

/* From v->cur on, the first step that runs: 1, or 0 when none is left
 * or the flows were released. */
static int run_steps(struct inv *v)
{
	for (; v->cur < v->nact; v->cur++) {
		if (!inv_still_stalled(v))
			break;
		if (start_action(v, &v->act[v->cur]) == 0)
			return 1;
	}
	return 0;
}

void inv_steps_start(struct inv *v)
{
	plan_steps(v);
	v->cur = 0;
	run_steps(v);
}

int inv_steps_done(struct inv *v)
{
	if (v->cur < v->nact) {
		if (v->act[v->cur].kind == ACT_PROMISC && !v->act[v->cur].end_ns)
			v->act[v->cur].end_ns = loop_mono_ns();
		v->cur++;
	}
	/* every step done, or the flows released: on to the end */
	return !run_steps(v);
}

/* ---- attribution ---- */

static void action_json(struct inv *v, const struct action *a, struct json_object *arr)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "action", act_name(a->kind));
	jx_add_str(o, "port", v->ports[a->port]);
	json_object_object_add(o, "start_ms", jx_new_fixed(inv_rel_ms(v, a->start_ns), 3));
	json_object_object_add(o, "effect_ms", jx_new_fixed(inv_rel_ms(v, a->effect_ns), 3));
	if (a->deadline_ns)
		json_object_object_add(o, "watch_until_ms",
				       jx_new_fixed(inv_rel_ms(v, a->deadline_ns), 3));
	jx_add_bool(o, "transition", a->transition);
	if (a->capped)
		jx_add_bool(o, "watch_capped", 1);
	json_object_array_add(arr, o);
}

/* After action a: did the frames its port was losing reach the vport again?
 * The port's counters over the recorder's samples from the first after the
 * action took effect to the last within VPORT_AFTER_NS of the release (the
 * rules' port_frames, vport_frames and gap signals), less the gap its
 * healthy rate explains (facts: its baseline; the firmware's own LLDP
 * frames): 1 when frames reached both and the rest is under 2 frames (read
 * skew), 0 when the port went on losing (2 or more: a receive filter that
 * was not the cause, or not mended by it), -1 when the counters cannot
 * tell (fewer than two samples, no port/vport pair, no frame at the
 * port). The figures go into o. */
#define VPORT_AFTER_NS 500000000ull
static int vport_after(const struct inv *v, const struct action *a, struct json_object *facts,
		       struct json_object *o)
{
	const struct port *p = inv_port((struct inv *)v, a->port);
	const struct recorder *r = p ? port_recorder(p) : NULL;
	struct json_object *d, *bl = jx_get(jx_get(jx_get(facts, FK_PORTS), v->ports[a->port]),
					    FK_PER_BASELINE);
	const char *profile;
	unsigned f, l;
	double pf, vf, gap, span, bspan = jx_double(bl, FK_SPAN_S, 0);
	int known;

	if (!r || rec_window(r, a->effect_ns, v->release_ns + VPORT_AFTER_NS, &f, &l) < 2)
		return -1;
	d = facts_window_deltas(p, f, l);
	profile = conf_profile_name(port_profile(p));
	known = v->F->rules && rules_signal(v->F->rules, profile, "gap", d, &gap) == 0;
	pf = sig(v->F->rules, profile, "port_frames", d);
	vf = sig(v->F->rules, profile, "vport_frames", d);
	json_object_put(d);
	if (!known || pf < 1)
		return -1;
	span = (double)(rec_get(r, l)->mono_ns - rec_get(r, f)->mono_ns) / 1e9;
	if (bspan > 0)
		gap -= sig(v->F->rules, profile, "gap", jx_get(bl, FK_COUNTERS)) / bspan * span;
	json_object_object_add(o, "port_frames", jx_new_fixed(pf, 0));
	json_object_object_add(o, "vport_frames", jx_new_fixed(vf, 0));
	json_object_object_add(o, "span_ms", jx_new_fixed(span * 1000, 1));
	return gap >= 2 ? 0 : 1;
}

void inv_release_json(struct inv *v, struct json_object *rel)
{
	const struct action *k = NULL, *j = NULL, *first = NULL, *inert = NULL;
	struct json_object *acts = json_object_new_array(), *after = NULL, *still = NULL;
	struct json_object *facts = NULL;
	const struct action *losing = NULL;
	uint64_t r = v->release_ns;

	for (unsigned i = 0; i < v->nact; i++)
		if (v->act[i].ran) {
			action_json(v, &v->act[i], acts);
			if (!first)
				first = &v->act[i];
		}
	if (!r) {
		jx_add_bool(rel, "released", 0);
		jx_add_str(rel, "action", "none");
		json_object_object_add(rel, "actions", acts);
		return;
	}
	/* the candidates: actions that made a crossing the driver acts on
	 * before the release was seen, on a port that lost frames of the
	 * flows (a receive filter can only give back frames it was losing:
	 * an engine's held bytes that drain with no port losing any are the
	 * engine's); the last one, unless the one before it was still
	 * within the retry it waited for when its watch was cut */
	for (unsigned i = 0; i < v->nact; i++) {
		const struct action *a = &v->act[i];

		if (!a->ran || !a->transition || a->effect_ns > r)
			continue;
		if (!v->lost[a->port]) {
			inert = a;
			continue;
		}
		/* a filter action is the release only if the port's frames
		 * reached its vport again after it */
		{
			struct json_object *o = json_object_new_object();
			int got;

			if (!facts)
				facts = inv_facts(v);
			got = vport_after(v, a, facts, o);

			if (got == 0) {
				json_object_put(still);
				still = o;
				losing = a;
				continue;
			}
			json_object_put(after);
			after = got == 1 ? o : NULL;
			if (got != 1)
				json_object_put(o);
		}
		j = k;
		k = a;
	}
	jx_add_bool(rel, "released", 1);
	json_object_object_add(rel, "at_ms", jx_new_fixed(inv_rel_ms(v, r), 3));
	if (!k) {
		/* nothing that could act on the cause had run: the flows came
		 * back on their own (or during a capture without a mode
		 * change); the verdict of the evidence stands. Which came
		 * first, with both times. */
		char why[320];

		jx_add_str(rel, "action", "self");
		json_object_object_add(rel, "after_ms", jx_new_fixed(
			(double)(r - (v->capture_ns && v->capture_ns <= r ? v->capture_ns :
				      v->open_ns)) / 1e6, 3));
		if (losing) {
			snprintf(why, sizeof(why), "not credited to %s on %s (at +%.1f ms): port %s went "
				 "on losing frames before its vport after it (port +%.0f, vport +%.0f "
				 "in %.0f ms)", act_name(losing->kind), v->ports[losing->port],
				 inv_rel_ms(v, losing->effect_ns), v->ports[losing->port],
				 jx_double(still, "port_frames", 0), jx_double(still, "vport_frames", 0),
				 jx_double(still, "span_ms", 0));
			jx_add_str(rel, FK_R_NOT_CREDITED, why);
		} else if (inert) {
			snprintf(why, sizeof(why), "not credited to %s on %s (at +%.1f ms): port %s lost "
				 "no frame of the flows, so its receive filter held none of them",
				 act_name(inert->kind), v->ports[inert->port],
				 inv_rel_ms(v, inert->effect_ns), v->ports[inert->port]);
			jx_add_str(rel, FK_R_NOT_CREDITED, why);
		}
		if (first && first->effect_ns <= r)
			snprintf(why, sizeof(why), "the flows moved again at +%.1f ms, after the first "
				 "action (%s on %s at +%.1f ms)", inv_rel_ms(v, r),
				 act_name(first->kind), v->ports[first->port],
				 inv_rel_ms(v, first->effect_ns));
		else if (first)
			snprintf(why, sizeof(why), "the flows moved again at +%.1f ms, before the first "
				 "action (%s on %s at +%.1f ms)", inv_rel_ms(v, r),
				 act_name(first->kind), v->ports[first->port],
				 inv_rel_ms(v, first->effect_ns));
		else
			snprintf(why, sizeof(why), "the flows moved again at +%.1f ms, before any action "
				 "(none ran)", inv_rel_ms(v, r));
		jx_add_str(rel, FK_R_ORDER, why);
		if (first)
			json_object_object_add(rel, FK_R_FIRST_ACTION_MS,
					       jx_new_fixed(inv_rel_ms(v, first->effect_ns), 3));
	} else if (j && j->capped && r <= j->natural_ns) {
		char what[160];

		snprintf(what, sizeof(what), "ambiguous between %s on %s and %s on %s",
			 act_name(j->kind), v->ports[j->port], act_name(k->kind), v->ports[k->port]);
		jx_add_str(rel, "action", "ambiguous");
		jx_add_str(rel, "ambiguous", what);
		json_object_object_add(rel, "after_ms", jx_new_fixed((double)(r - j->effect_ns) / 1e6, 3));
		json_object_object_add(rel, "after_second_ms",
				       jx_new_fixed((double)(r - k->effect_ns) / 1e6, 3));
	} else {
		jx_add_str(rel, "action", act_name(k->kind));
		jx_add_str(rel, "port", v->ports[k->port]);
		json_object_object_add(rel, "after_ms", jx_new_fixed((double)(r - k->effect_ns) / 1e6, 3));
		/* what shows the filter was the cause: its port's frames
		 * counted at the vport again (absent: the counters cannot tell) */
		if (after)
			json_object_object_add(rel, FK_R_VPORT_AFTER, json_object_get(after));
	}
	json_object_put(after);
	json_object_put(still);
	json_object_put(facts);
	json_object_object_add(rel, "actions", acts);
}
