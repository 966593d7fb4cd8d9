/* forensic: the asynchronous investigation of an incident. */
#include "daemon/forensic/forensic_int.h"
#include "collectors/flows/flow_sockdiag.h"
#include "daemon/forensic/bundler.h"
#include "daemon/conf.h"
#include "daemon/forensic/evid_flows.h"
#include "daemon/forensic/evidence.h"
#include "daemon/forensic/facts.h"
#include "daemon/detect/incident.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/record.h"
#include "daemon/forensic/recovery.h"
#include "daemon/runs.h"
#include "daemon/forensic/timeline.h"
#include "lib/jreap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_cap.h"
#include "probes/probe_exec.h"
#include "probes/probe_journal.h"
#include "probes/probe_ping.h"
#include "probes/probe_threads.h"
#include "probes/reprogram.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct forensic_probes forensic_real_probes = {
	.ping_start = probe_ping_start_opts,
	.ping_result = probe_ping_result,
	.ping_to_json = probe_ping_to_json,
	.ping_free = probe_ping_free,
	.cap_start = probe_cap_start,
	.cap_result = probe_cap_result,
	.cap_to_json = probe_cap_to_json,
	.cap_free = probe_cap_free,
	.exec_start = probe_exec_start,
	.exec_result = probe_exec_result,
	.exec_to_json = probe_exec_to_json,
	.exec_free = probe_exec_free,
	.threads_snapshot = probe_threads_snapshot,
	.threads_to_json = probe_threads_to_json,
	.threads_free = probe_threads_free,
	.inode_owner = sockdiag_inode_owner,
	.journal = probe_journal_excerpt,
	.reprogram = { reprogram_start, reprogram_result, reprogram_to_json, reprogram_free },
};

static void snapshot_all(struct inv *v, const char *label)
{
	struct json_object *snap = json_object_new_object();
	uint64_t t0 = loop_mono_ns();
	int st = inv_step_begin(v, label, NULL), first = !strcmp(label, "snapshot");

	json_object_object_add(snap, "started_after_open_us", jx_new_fixed((double)(t0 - v->open_ns) / 1e3, 1));
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = inv_port(v, i);

		if (!p)
			continue;
		evid_devlink_refresh(p, first);
		json_object_object_add(snap, v->ports[i], evid_port_snapshot(p));
		if (first)
			evid_counters_take(&v->first[i], p);
	}
	{
		/* stalled first; a mass stall is its count and the first
		 * STALL_FLOWS_LISTED, not 100k flows in every file */
		unsigned total = 0;

		json_object_object_add(snap, IR_S_FLOWS, stall_flows_json(v->F->stall, NULL, 0,
									  STALL_FLOWS_LISTED, &total));
		jx_add_u64(snap, IR_S_FLOWS_TOTAL, total);
	}
	json_object_object_add(v->rec, first ? IR_SNAPSHOT : IR_SNAPSHOT_AFTER, snap);
	if (first)
		inv_take_engines(v, 0);
	inv_step_end(v, st, "ok", NULL);
}

/* ---- phases ---- */

static void write_bundle(struct inv *v)
{
	struct bundler_inv in = { 0 };
	char err[512];

	in.rec = v->rec;
	in.id = v->id;
	in.incident_id = v->incident_id;
	in.open_ns = v->open_ns;
	in.open_real_ns = v->open_real_ns;
	for (unsigned i = 0; i < v->nports; i++) {
		in.port_names[i] = v->ports[i];
		in.ports[i] = inv_port(v, i);
	}
	in.nports = v->nports;
	in.rules = v->F->rules;
	for (unsigned i = 0; i < v->npcap && i < BUNDLER_MAX_PCAPS; i++)
		in.pcaps[in.npcap++] = v->pcap[i];
	/* the bundle names the run it fell in; the run's certificate names it */
	runs_annotate(v->F->runs, v->rec, v->open_ns);
	if (bundler_write(v->F->bundler, &in, v->bundle, sizeof(v->bundle), err, sizeof(err)) < 0)
		v->bundle[0] = 0;
	runs_bundle(v->F->runs, v->id, jx_str(jx_get(v->rec, IR_VERDICT), "verdict"),
		    v->bundle[0] ? v->bundle : NULL);
}

/* Facts from the record, then the verdict from the rules. */
static void classify(struct inv *v)
{
	struct json_object *facts = facts_build(v->F->ports, v->rec), *verdict;

	if (v->F->rules)
		verdict = rules_classify(v->F->rules, facts);
	else {
		verdict = json_object_new_object();
		jx_add_str(verdict, "verdict", "unknown");
		jx_add_str(verdict, "explanation", "no rules are loaded");
	}
	json_object_object_add(v->rec, IR_FACTS, facts);
	json_object_object_add(v->rec, IR_VERDICT, verdict);
	log_warnx("investigation %" PRIu64 " (port %s): verdict %s: %s", v->id, v->ports[0],
		  jx_str(verdict, "verdict") ? jx_str(verdict, "verdict") : "?",
		  jx_str(verdict, "explanation") ? jx_str(verdict, "explanation") : "");
}

/* PH_PROBES: every step done and watched: the engines' view after it,
 * and the external probes still running (each has a timeout): their
 * output belongs in the bundle */
static void probes_start(struct inv *v)
{
	inv_take_engines(v, 1);
	if (v->exec_left) {
		v->pending++;
		loop_timer_set(v->timer, 100000000ull, 0);
	}
}

static void probes_timer(struct inv *v)
{
	if (v->exec_left)
		loop_timer_set(v->timer, 100000000ull, 0);
	else
		inv_part_done(v);
}

/* PH_PEERS: the view after, the journal, the release; then the peers'
 * summaries, within peer_wait of the notice */
static void peers_start(struct inv *v)
{
	const struct conf *c = v->F->c;
	struct json_object *j = NULL, *rel = json_object_new_object();
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	char err[256];
	int st;

	snapshot_all(v, "snapshot-after");
	st = inv_step_begin(v, "journal", NULL);
	if (v->F->pr->journal(c->journal_dir[0] ? c->journal_dir : NULL,
			      (v->open_real_ns / 1000) - 30000000ull, loop_real_ns() / 1000,
			      NULL, 200, 64 * 1024, &j, err, sizeof(err)) < 0 || !j) {
		inv_step_end(v, st, "failed", err);
	} else {
		int avail = !jx_get(j, "available") || jx_bool(j, "available");

		json_object_object_add(v->rec, IR_JOURNAL, j);
		inv_step_end(v, st, avail ? "ok" : "unavailable", avail ? NULL : "no journal available");
	}
	/* which action released the flows (release.c) */
	if (!(inc && incident_released(inc)))
		v->release_ns = 0;
	inv_release_json(v, rel);
	json_object_object_add(v->rec, IR_RELEASE, rel);
	if (inc)
		json_object_object_add(v->rec, IR_INCIDENT, incident_json(inc, loop_mono_ns()));
	if (!inv_peers_ready(v))
		v->pending++;   /* the wait: v->timer, or the last summary */
}

/* peer_wait is over */
static void peers_timer(struct inv *v)
{
	inv_part_done(v);
}

/* PH_DONE: every summary is in (or the wait is over): the verdict, the
 * bundle. */
static void conclude(struct inv *v)
{
	struct json_object *rel = jx_obj(v->rec, IR_RELEASE);

	if (v->done)
		return;
	inv_peers_done(v);
	classify(v);
	v->done = 1;
	/* the ports' next healthy baselines start after this (facts.c) */
	for (unsigned i = 0; i < v->nports; i++)
		if (inv_port(v, i))
			port_set_disturbed(inv_port(v, i), loop_mono_ns());
	jx_add_str(v->rec, IR_STATE, "complete");
	write_bundle(v);
	log_info("investigation %" PRIu64 " (incident %" PRIu64 ", port %s): complete, %s",
		 v->id, v->incident_id, v->ports[0], jx_text(rel, "action"));
}

/* The phases, in order (inv.c runs them; struct inv_phase says what
 * each entry does). A new phase is a file of its own and a row here. */
static const struct inv_phase phases[PH_N] = {
	[PH_OBSERVE] = { "observe", inv_observe_start, inv_observe_timer, NULL, NULL },
	[PH_CAPTURE] = { "capture", inv_capture_start, NULL, NULL, NULL },
	[PH_STEPS] = { "steps", inv_steps_start, inv_watch_expired, inv_steps_done,
		       inv_steps_label },
	[PH_PROBES] = { "probes", probes_start, probes_timer, NULL, NULL },
	[PH_PEERS] = { "peers", peers_start, peers_timer, NULL, NULL },
	[PH_DONE] = { "done", conclude, NULL, NULL, NULL },
};

/* ---- lifecycle ---- */

static void inv_free(struct inv *v)
{
	const struct forensic_probes *pr;

	if (!v)
		return;
	pr = v->F->pr;
	/* a reprogram it started may still be in its hold: it completes and
	 * restores the flag, but never calls back into this freed record */
	if (v->F->recovery)
		recovery_cancel(v->F->recovery, v);
	loop_timer_free(v->tick);
	loop_timer_free(v->timer);
	loop_timer_free(v->follow);
	for (unsigned i = 0; i < MAXP; i++) {
		if (v->ping[i])
			pr->ping_free(v->ping[i]);
		if (v->ping_mtu[i])
			pr->ping_free(v->ping_mtu[i]);
		if (v->cap[i])
			pr->cap_free(v->cap[i]);
		evid_counters_free(&v->first[i]);
		evid_counters_free(&v->prev[i]);
		json_object_put(v->series[i]);
	}
	for (unsigned i = 0; i < v->nexec; i++)
		if (v->exec[i])
			pr->exec_free(v->exec[i]);
	if (v->phase == PH_OBSERVE)
		for (unsigned i = 0; i < v->npids; i++)
			pr->threads_free(&v->th1[i]);
	evid_flows_free(v->engines[0]);
	evid_flows_free(v->engines[1]);
	/* its record a member a loop turn, not here: a whole one held the loop
	 * 2.4-10 ms, and the investigation that pushed it out of the kept
	 * ones (inv_start) waited that long for its first snapshot */
	jreap_put(v->F->reap, v->rec);
	free(v);
}

static struct inv *inv_new(struct forensics *F)
{
	struct inv *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->F = F;
	v->peers_step = -1;
	v->open_ns = loop_mono_ns();
	v->open_real_ns = loop_real_ns();
	v->rec = json_object_new_object();
	v->steps = json_object_new_array();
	if (!v->rec || !v->steps) {
		json_object_put(v->steps);
		inv_free(v);
		return NULL;
	}
	return v;
}

void forensic_host_name(const struct forensics *F, char *buf, size_t len)
{
	psnap_host_name(&F->psenv, buf, len);
}

static struct inv *inv_start(struct forensics *F, const char *port, uint64_t incident_id)
{
	struct port *p = ports_find(F->ports, port);
	struct inv *v = p ? inv_new(F) : NULL;
	char host[64];

	if (!v)
		return NULL;
	v->id = ++F->ninv;
	v->incident_id = incident_id;
	util_strlcpy(v->ports[v->nports++], port, sizeof(v->ports[0]));
	if (port_conf(p)->peer[0] && ports_find(F->ports, port_conf(p)->peer))
		util_strlcpy(v->ports[v->nports++], port_conf(p)->peer, sizeof(v->ports[0]));
	v->tick = loop_timer_new(F->loop, inv_tick, v);
	v->timer = loop_timer_new(F->loop, inv_phase_timer, v);
	v->follow = loop_timer_new(F->loop, inv_follow_cb, v);
	if (v->tick && v->timer && v->follow) {
		loop_timer_name(v->tick, "investigation");
		loop_timer_name(v->timer, "investigation");
		loop_timer_name(v->follow, "investigation");
	}
	if (!v->tick || !v->timer || !v->follow) {
		json_object_put(v->steps);
		inv_free(v);
		return NULL;
	}
	jx_add_u64(v->rec, IR_ID, v->id);
	json_object_object_add(v->rec, IR_INCIDENT, NULL);
	jx_add_u64(v->rec, IR_INCIDENT_ID, incident_id);
	jx_add_str(v->rec, IR_TRIGGER, incident_id ? "stall" : "manual");
	forensic_host_name(F, host, sizeof(host));
	jx_add_str(v->rec, IR_HOST, host);
	jx_add_str(v->rec, IR_PORT, port);
	jx_add_u64(v->rec, IR_OPENED_MONO, v->open_ns);
	jx_add_u64(v->rec, IR_OPENED_REAL, v->open_real_ns);
	jx_add_str(v->rec, IR_STATE, "running");
	json_object_object_add(v->rec, IR_STEPS, v->steps);
	inv_free(F->inv[(v->id - 1) % KEEP]);
	F->inv[(v->id - 1) % KEEP] = v;
	log_info("investigation %" PRIu64 " on port %s%s%s started", v->id, port,
		 v->nports > 1 ? " and " : "", v->nports > 1 ? v->ports[1] : "");
	/* the peers record the same moment: told before anything here */
	inv_notify_peers(v);
	snapshot_all(v, "snapshot");
	inv_phase_enter(v, PH_OBSERVE);
	return v;
}

void forensic_on_incident(struct incident *inc, enum incident_event event, void *arg)
{
	struct forensics *F = arg;

	if (event == INCIDENT_OPEN) {
		struct inv *v = inv_start(F, incident_port(inc), incident_id(inc));

		runs_incident(F->runs, incident_id(inc), v ? v->id : 0, incident_port(inc));
		return;
	}
	for (unsigned i = 0; i < KEEP; i++) {
		struct inv *v = F->inv[i];

		if (v && v->incident_id == incident_id(inc) && !v->done) {
			if (event == INCIDENT_END && incident_released(inc) && !v->release_ns) {
				v->release_ns = loop_mono_ns();
				inv_released(v);
			}
			/* INCIDENT_JOIN: the flows join the running sequence;
			 * their processes' engine views too while it stalls,
			 * once the burst of joins is handled */
			if (event == INCIDENT_JOIN)
				inv_follow_soon(v);
		}
	}
}

int forensic_investigate(struct forensics *F, const char *port, uint64_t *id,
			 char *err, size_t errlen)
{
	struct inv *v;

	if (!ports_find(F->ports, port)) {
		util_errf(err, errlen, "no port '%s'", port);
		return -1;
	}
	v = inv_start(F, port, 0);
	if (!v) {
		util_errf(err, errlen, "out of memory");
		return -1;
	}
	*id = v->id;
	return 0;
}

int forensic_manual_bundle(struct forensics *F, const char *const *ports, size_t nports,
			   char *path, size_t pathlen, char *err, size_t errlen)
{
	struct inv *v = inv_new(F);
	struct json_object *verdict;
	char host[64];

	if (!v) {
		util_errf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nports && v->nports < MAXP; i++)
		util_strlcpy(v->ports[v->nports++], ports[i], sizeof(v->ports[0]));
	for (unsigned i = 0; !nports && i < ports_count(F->ports) && v->nports < MAXP; i++)
		util_strlcpy(v->ports[v->nports++], port_name(ports_at(F->ports, i)),
			     sizeof(v->ports[0]));
	jx_add_str(v->rec, IR_TRIGGER, "manual");
	forensic_host_name(F, host, sizeof(host));
	jx_add_str(v->rec, IR_HOST, host);
	jx_add_str(v->rec, IR_PORT, v->ports[0]);
	jx_add_u64(v->rec, IR_OPENED_MONO, v->open_ns);
	json_object_object_add(v->rec, IR_STEPS, v->steps);
	snapshot_all(v, "snapshot");
	verdict = json_object_new_object();
	jx_add_str(verdict, "verdict", "manual");
	jx_add_str(verdict, "explanation",
		   "a snapshot taken on request (nicstallctl snapshot --bundle), not a stall");
	json_object_object_add(v->rec, IR_VERDICT, verdict);
	json_object_object_add(v->rec, IR_FACTS, facts_build(F->ports, v->rec));
	jx_add_str(v->rec, IR_STATE, "complete");
	write_bundle(v);
	if (!v->bundle[0]) {
		const char *e = jx_str(v->rec, IR_BUNDLE_ERROR);

		util_errf(err, errlen, "%s", e ? e : "bundle not written");
		inv_free(v);
		return -1;
	}
	util_strlcpy(path, v->bundle, pathlen);
	inv_free(v);
	return 0;
}

struct json_object *forensic_recover(struct forensics *F, const char *port,
				    void (*done)(struct json_object *o, int performed, void *arg),
				    void *arg)
{
	struct port *p = ports_find(F->ports, port);
	struct json_object *o = json_object_new_object();

	if (!p) {
		jx_add_str(o, "error", "no such port");
		return o;
	}
	if (recovery_start(F->recovery, p, 1, o, done, arg) < 0)
		return o;
	return NULL;
}

struct json_object *forensic_record(struct forensics *F, uint64_t id)
{
	struct inv *v;

	if (!id)
		id = F->ninv;
	if (!id || id > F->ninv || F->ninv - id >= KEEP)
		return NULL;
	v = F->inv[(id - 1) % KEEP];
	if (!v)
		return NULL;
	if (!v->done)
		jx_add_str(v->rec, IR_PHASE, inv_phase_name(v));
	return json_object_get(v->rec);
}

struct json_object *forensic_list(struct forensics *F)
{
	struct json_object *a = json_object_new_array();

	for (uint64_t id = F->ninv > KEEP ? F->ninv - KEEP + 1 : 1; id <= F->ninv; id++) {
		struct inv *v = F->inv[(id - 1) % KEEP];
		struct json_object *o;

		if (!v)
			continue;
		o = json_object_new_object();
		jx_add_u64(o, "id", v->id);
		jx_add_u64(o, "incident_id", v->incident_id);
		jx_add_str(o, "port", v->ports[0]);
		jx_add_str(o, "state", v->done ? "complete" : inv_phase_name(v));
		json_object_array_add(a, o);
	}
	return a;
}

struct forensics *forensic_new(struct loop *l, struct ports *ps, struct stall *st,
			       const struct conf *c, const struct forensic_probes *probes)
{
	struct forensics *F = calloc(1, sizeof(*F));

	if (!F)
		return NULL;
	F->loop = l;
	F->ports = ps;
	F->stall = st;
	F->c = c;
	F->pr = probes ? probes : &forensic_real_probes;
	F->phases = phases;
	F->recovery = recovery_new(l, c, &F->pr->reprogram);
	F->bundler = bundler_new(l, c);
	F->psenv = (struct psnap_env){ .loop = l, .ports = ps, .stall = st, .bundler = F->bundler,
				       .pr = F->pr, .c = c };
	F->psnaps = psnaps_new(&F->psenv);
	F->reap = jreap_new(l, "investigation");
	if (!F->recovery || !F->bundler || !F->psnaps || !F->reap) {
		forensic_free(F);
		return NULL;
	}
	return F;
}

void forensic_configure(struct forensics *F, const struct conf *c)
{
	F->c = F->psenv.c = c;
	recovery_configure(F->recovery, c);
	bundler_configure(F->bundler, c);
}

void forensic_set_rules(struct forensics *F, const struct rules *r)
{
	F->rules = F->psenv.rules = r;
}

void forensic_set_runs(struct forensics *F, struct runs *r)
{
	F->runs = r;
}

void forensic_set_peers(struct forensics *F, struct peers *p)
{
	F->peers = F->psenv.peers = p;
}

void forensic_on_peer_notice(const char *peer, struct json_object *notice, uint64_t mono,
			     uint64_t real, uint64_t token, void *arg)
{
	struct forensics *F = arg;

	psnaps_notice(F->psnaps, peer, notice, mono, real, token);
}

void forensic_on_peer_summary(uint64_t incident_id, const char *peer, struct json_object *summary,
			      double rtt_ms, void *arg)
{
	struct forensics *F = arg;

	for (unsigned i = 0; i < KEEP; i++) {
		struct inv *v = F->inv[i];

		if (!v || v->incident_id != incident_id || !incident_id)
			continue;
		if (v->done) {
			log_info("peer %s: its summary of incident %" PRIu64 " came after the verdict "
				 "(peer_wait %.1f s)", peer, incident_id, (double)F->c->peer_wait_ns / 1e9);
			return;
		}
		if (inv_peer_summary(v, peer, summary, rtt_ms)) {
			loop_timer_set(v->timer, 0, 0);
			inv_part_done(v);       /* the wait's */
		}
		return;
	}
}

void forensic_free(struct forensics *F)
{
	if (!F)
		return;
	psnaps_free(F->psnaps);
	for (unsigned i = 0; i < KEEP; i++)
		inv_free(F->inv[i]);
	jreap_free(F->reap);
	bundler_free(F->bundler);
	recovery_free(F->recovery);
	free(F);
}
