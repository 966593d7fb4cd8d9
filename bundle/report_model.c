/* report model: what every output is drawn from (see report_int.h): the
 * signals and the built-in copy of their definitions, the story of the
 * investigation (its steps, the stall, the release) on one time base, and
 * the panels' time ranges; rp_ctx_new puts them together with every port's
 * series (report_series.c). */
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* ---- the signals ---- */

const char *const rp_sig_label[NSIG] = {
	"port", "vport", "gap", "buffer drops", "steering misses", "fabric errors",
};

/* The shipped signal definitions (rules/00-signals.rules), used when the
 * caller has no rules loaded; tests/unit/test_report.c checks that they
 * give the same values as the shipped file. */
static const char builtin_signals[] =
"signal port_frames  mlx5 = rx_packets_phy\n"
"signal vport_frames mlx5 = rx_vport_unicast_packets + rx_vport_multicast_packets \\\n"
"    + rx_vport_broadcast_packets + rx_vport_rdma_unicast_packets \\\n"
"    + rx_vport_rdma_multicast_packets\n"
"signal buffer_drops mlx5 = rx_out_of_buffer + rx_discards_phy + sum(rx_prio*_discards) \\\n"
"    + sum(rx_prio*_buf_discard) + hw_counters/out_of_buffer\n"
"signal steer_misses mlx5 = rx_steer_missed_packets\n"
"signal fabric_errors mlx5 = hw_counters/local_ack_timeout_err \\\n"
"    + hw_counters/req_transport_retries_exceeded + hw_counters/req_cqe_error \\\n"
"    + link_down_events_phy + rx_crc_errors_phy + rx_symbol_err_phy \\\n"
"    + counters/link_downed + counters/symbol_error\n"
"signal port_frames  sfc = port_rx_unicast\n"
"signal vport_frames sfc = rx_unicast\n"
"signal buffer_drops sfc = port_rx_nodesc_drops + rx_nodesc_trunc + rx_noskb_drops \\\n"
"    + port_rx_overflow + rx_overflow + sum(port_rx_pm_discard_*)\n"
"signal steer_misses sfc = port_rx_dp_q_disabled_packets\n"
"signal fabric_errors sfc = port_rx_bad + rx_eth_crc_err + rx_bad\n"
"signal port_frames   generic = netdev/rx_packets\n"
"signal buffer_drops  generic = netdev/rx_missed_errors + netdev/rx_fifo_errors \\\n"
"    + netdev/rx_over_errors\n"
"signal fabric_errors generic = netdev/rx_crc_errors + netdev/rx_frame_errors\n"
"signal gap generic = port_frames - vport_frames\n"
"# the loader wants a rule: one that never matches\n"
"rule report-signals-only {\n    verdict unknown\n    require false\n}\n";

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static struct rules *builtin_rules(void)
{
	const char *names[1] = { "report-signals.rules" }, *texts[1] = { builtin_signals };
	struct rules *ru = NULL;

	if (rules_load_texts(names, texts, 1, &ru, quiet, NULL))
		return NULL;
	return ru;
}

/* ---- the story: time base, steps, stall, release ---- */

static void story_build(const struct report *r, struct story *s)
{
	struct json_object *steps = jx_arr(r->man, "steps"), *rel = jx_obj(r->man, "release");
	struct json_object *list = jx_arr(jx_obj(jx_obj(r->man, "facts"), FK_FLOWS), FK_F_LIST);
	double x, waited = NAN;

	memset(s, 0, sizeof(*s));
	if (!rel)
		rel = jx_obj(jx_obj(r->man, "facts"), FK_RELEASE);
	if (jx_num(jx_get(r->record, "opened_mono_ns"), &x) && x > 0) {
		s->open_mono_ns = x;
		s->has_mono = 1;
	}
	if (jx_num(jx_get(r->man, "opened_real_ns"), &x) && x > 0) {
		s->open_real_ns = x;
		s->has_real = 1;
	}
	for (size_t i = 0; i < jx_len(steps) && s->nst < RP_MAX_STEPS; i++) {
		struct json_object *o = json_object_array_get_idx(steps, i);
		struct step *p = &s->st[s->nst];
		double a, b, m;

		if (!jx_num(jx_get(o, "start_ms"), &a) || fabs(a) > 1e9)
			continue;
		p->name = jx_str(o, "step") ? jx_str(o, "step") : "step";
		p->port = jx_str(o, "port");
		p->outcome = jx_str(o, "outcome");
		p->note = jx_str(o, "note");
		p->t0 = a;
		p->has_t1 = jx_num(jx_get(o, "end_ms"), &b) && b >= a && b < 1e9;
		p->t1 = p->has_t1 ? b : a;
		p->idx = i;
		if (p->t1 > s->tmax)
			s->tmax = p->t1;
		if (!s->has_mono && jx_num(jx_get(o, "start_mono_ns"), &m) && m > 0) {
			s->open_mono_ns = m - a * 1e6;
			s->has_mono = 1;
		}
		if (!strcmp(p->name, "observe") && !s->has_win) {
			s->win_t0 = p->t0;
			s->win_t1 = p->t1;
			s->has_win = 1;
		}
		s->nst++;
	}
	/* the benchmark run it fell in: from its start to its end (or on) */
	{
		struct json_object *run = jx_get(r->man, "run");
		double a, b;

		if (s->has_mono && jx_str(run, "name") &&
		    jx_num(jx_get(jx_get(run, "start"), "mono_ns"), &a) && a > 0 &&
		    fabs((a - s->open_mono_ns) / 1e6) < 1e12) {
			s->has_run = 1;
			s->run_name = jx_str(run, "name");
			s->run_t0 = (a - s->open_mono_ns) / 1e6;
			s->run_ended = jx_num(jx_get(jx_get(run, "end"), "mono_ns"), &b) && b >= a &&
				       fabs((b - s->open_mono_ns) / 1e6) < 1e12;
			s->run_t1 = s->run_ended ? (b - s->open_mono_ns) / 1e6 : 1e12;
		}
	}
	/* the stall began when the first stalled flow began to wait */
	for (size_t i = 0; i < jx_len(list); i++)
		if (jx_num(jx_get(json_object_array_get_idx(list, i), FK_FL_WAITED_MS), &x) &&
		    fabs(x) < 1e9 && !(x <= waited))
			waited = x;
	if (isfinite(waited)) {
		s->has_stall = 1;
		s->stall_t0 = -waited;
	}
	/* the release: the releasing action's start plus after_ms */
	s->released = jx_bool(rel, "released");
	s->release_action = jx_str(rel, "action");
	if (s->released) {
		const char *a = s->release_action ? s->release_action : "";
		const char *stepname = !strcmp(a, "promisc-capture") ? "capture-promisc" : a;
		int last = !strcmp(a, "reprogram");     /* the daemon times the last one */
		double base = NAN;

		/* the delay after the action, as the release recorded it: the
		 * one figure summary.txt prints too */
		if (jx_num(jx_get(rel, "after_ms"), &x) && x >= 0 && x < 1e9) {
			s->after_ms = x;
			s->has_after = 1;
		}
		if (jx_num(jx_get(rel, "at_ms"), &x) && fabs(x) < 1e9) {
			s->release_t = x;
			s->has_release_t = 1;
		} else {
			for (size_t i = 0; i < s->nst; i++)
				if (!strcmp(s->st[i].name, stepname)) {
					base = s->st[i].t0;
					if (!last)
						break;
				}
			if (!isfinite(base) && !strcmp(a, "self"))
				base = 0;
			if (isfinite(base) && jx_num(jx_get(rel, "after_ms"), &x) && x >= 0 && x < 1e9) {
				s->release_t = base + x;
				s->after_ms = x;
				s->has_release_t = 1;
			}
		}
		if (s->has_release_t && s->release_t > s->tmax)
			s->tmax = s->release_t;
	}
	/* told in its place in time: before the first step that starts after it */
	s->release_before = SIZE_MAX;
	if (s->released && s->has_release_t)
		for (s->release_before = 0; s->release_before < s->nst &&
		     !(s->st[s->release_before].t0 > s->release_t); s->release_before++)
			;
	if (s->has_stall)
		s->stall_t1 = s->released && s->has_release_t ? s->release_t : s->tmax;
	if (s->has_stall && s->stall_t1 < s->stall_t0)
		s->stall_t1 = s->stall_t0;
}

/* ---- the context ---- */

/* The panels' ranges: the recorder's whole span, and the investigation
 * from the stall's start to the last step or the release. */
static void ranges(struct ctx *c)
{
	struct story *s = &c->s;
	double b0 = 0, b1 = s->tmax > 0 ? s->tmax : 1, pad;

	if (s->has_stall && s->stall_t0 < b0)
		b0 = s->stall_t0;
	pad = (b1 - b0) * 0.04;
	c->b0 = b0 - pad;
	c->b1 = b1 + pad;
	if (!(c->b1 > c->b0))
		c->b1 = c->b0 + 1;
	c->has_a = 0;
	for (size_t i = 0; i < c->np; i++)
		if (c->pd[i].has_rec && c->pd[i].nrec) {
			if (!c->has_a || c->pd[i].rec_t0 < c->a0)
				c->a0 = c->pd[i].rec_t0;
			if (!c->has_a || c->pd[i].rec_t1 > c->a1)
				c->a1 = c->pd[i].rec_t1;
			c->has_a = 1;
		}
	if (c->has_a && !(c->a1 > c->a0))
		c->a1 = c->a0 + 1;
}

struct ctx *rp_ctx_new(const struct report *r, const struct report_opts *o, FILE *f)
{
	static const struct report_opts none;
	struct ctx *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->r = r;
	c->o = o ? o : &none;
	c->ru = c->o->rules;
	if (!c->ru)
		c->ru = c->own = builtin_rules();
	story_build(r, &c->s);
	for (size_t i = 0; i < r->nports; i++)
		rp_pdata_build(r, i, c->ru, &c->s, &c->pd[c->np++]);
	ranges(c);
	return c;
}

void rp_ctx_free(struct ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->np; i++)
		rp_pdata_free(&c->pd[i]);
	rules_free(c->own);
	free(c);
}
