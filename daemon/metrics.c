/* metrics: Prometheus textfile of the daemon's counters, from the calls
 * of the code that acts and the flight recorders. */
#include "daemon/runs.h"
#include "daemon/metrics.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/facts.h"
#include "daemon/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/stall.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LABELS 32                   /* distinct verdicts, actions... per port */
#define HEALTHY_TAU_S 60.0              /* the healthy rate's time constant */

struct tally {
	char name[48];
	uint64_t n;
};

struct tallies {
	struct tally t[MAX_LABELS];
	unsigned n;
};

/* Signals folded into per-port totals (rules/00-signals.rules). */
enum { SIG_GAP, SIG_BUFFER, SIG_STEER_MISS, SIG_STEER_DISCARD, SIG_FABRIC, NSIG };
static const char *const sig_name[NSIG] = { "gap", "buffer_drops", "steer_misses",
					    "steer_discards", "fabric_errors" };

struct mport {
	char name[32];
	unsigned long serial;
	uint64_t last_mono;             /* the recorder sample folded last */
	double cum[NSIG];               /* signed running sums (a read may skew) */
	uint64_t out[NSIG];             /* what was exported: never decreases */
	int known[NSIG];
	double healthy_rate;
	int healthy_known, incident_since_fold;
	uint64_t cost_base_ns, cost_ns, samples_base, samples;
	uint64_t opened, suppressed, flow_stalls, released, closed;
	uint64_t recov_performed, recov_refused, recov_failed;
	struct tallies verdicts, releases;
	uint64_t last_incident_real_ns;
};

struct metrics {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	const struct conf *c;
	const struct rules *rules;
	const struct peers *peers;
	const struct runs *runs;
	struct loop_timer *timer;
	uint64_t interval_ns;
	char path[PATH_MAX];
	struct mport *mp;
	unsigned nmp;
	uint64_t start_real_ns;
	uint64_t reload_ok, reload_failed, bundles_written, bundles_failed, hook_dropped;
	struct tallies hooks;
	uint64_t incidents;
	char last_verdict[48], last_verdict_port[32];
	char last_err[300];
};

static void tally_add(struct tallies *ts, const char *name)
{
	if (!name || !*name)
		name = "unknown";
	for (unsigned i = 0; i < ts->n; i++)
		if (!strcmp(ts->t[i].name, name)) {
			ts->t[i].n++;
			return;
		}
	/* a bounded set of series: local rules may name many verdicts */
	if (ts->n == MAX_LABELS - 1)
		name = "other";
	if (ts->n < MAX_LABELS) {
		util_strlcpy(ts->t[ts->n].name, name, sizeof(ts->t[0].name));
		ts->t[ts->n++].n = 1;
	} else {
		ts->t[MAX_LABELS - 1].n++;
	}
}

static struct mport *mport_get(struct metrics *m, const char *name)
{
	struct mport *n;

	if (!name || !*name)
		return NULL;
	for (unsigned i = 0; i < m->nmp; i++)
		if (!strcmp(m->mp[i].name, name))
			return &m->mp[i];
	if (m->nmp >= 256)
		return NULL;
	n = realloc(m->mp, (m->nmp + 1) * sizeof(*n));
	if (!n)
		return NULL;
	m->mp = n;
	memset(&m->mp[m->nmp], 0, sizeof(m->mp[0]));
	util_strlcpy(m->mp[m->nmp].name, name, sizeof(m->mp[0].name));
	return &m->mp[m->nmp++];
}

/* ---- what happened: told by the code that acts (counts.h) ---- */

static void on_incident_opened(void *arg, const char *port, unsigned flows)
{
	struct mport *p = mport_get(arg, port);

	if (p) {
		p->opened++;
		p->incident_since_fold = 1;
		p->last_incident_real_ns = loop_real_ns();
		p->flow_stalls += flows;
	}
}

static void on_flow_stalled(void *arg, const char *port)
{
	struct mport *p = mport_get(arg, port);

	if (p)
		p->flow_stalls++;
}

static void on_incident_suppressed(void *arg, const char *port)
{
	struct mport *p = mport_get(arg, port);

	if (p) {
		p->suppressed++;
		p->flow_stalls++;
	}
}

static void on_flow_released(void *arg, const char *port, int closed)
{
	struct mport *p = mport_get(arg, port);

	if (p && closed)
		p->closed++;
	else if (p)
		p->released++;
}

static void on_reprogram(void *arg, const char *port, enum count_recov outcome)
{
	struct mport *p = mport_get(arg, port);

	if (!p)
		return;
	if (outcome == COUNT_RECOV_PERFORMED)
		p->recov_performed++;
	else if (outcome == COUNT_RECOV_FAILED)
		p->recov_failed++;
	else
		p->recov_refused++;
}

static void on_bundle(void *arg, const char *port, int ok, uint64_t incident,
		      const char *verdict, const char *action)
{
	struct metrics *m = arg;
	struct mport *p;

	if (ok)
		m->bundles_written++;
	else
		m->bundles_failed++;
	p = mport_get(m, port);
	/* an investigation of an incident (a manual bundle has none) */
	if (p && incident) {
		tally_add(&p->verdicts, verdict);
		tally_add(&p->releases, action);
		m->incidents++;
		util_strlcpy(m->last_verdict, verdict ? verdict : "unknown",
			     sizeof(m->last_verdict));
		util_strlcpy(m->last_verdict_port, p->name, sizeof(m->last_verdict_port));
	}
}

static void on_hook_result(void *arg, const char *outcome)
{
	struct metrics *m = arg;

	tally_add(&m->hooks, outcome);
}

static void on_hook_dropped(void *arg)
{
	struct metrics *m = arg;

	m->hook_dropped++;
}

static void on_reload(void *arg, int ok)
{
	struct metrics *m = arg;

	if (ok)
		m->reload_ok++;
	else
		m->reload_failed++;
}

static const struct counts_ops metrics_counts = {
	.incident_opened = on_incident_opened,
	.flow_stalled = on_flow_stalled,
	.incident_suppressed = on_incident_suppressed,
	.flow_released = on_flow_released,
	.reprogram = on_reprogram,
	.bundle = on_bundle,
	.hook_result = on_hook_result,
	.hook_dropped = on_hook_dropped,
	.reload = on_reload,
};

/* ---- the recorders, through the signals ---- */

static void fold_port(struct metrics *m, struct mport *e, const struct port *p)
{
	const struct recorder *rec = port_recorder(p);
	const struct rec_sample *last = rec_latest(rec);
	struct json_object *counters;
	unsigned f, l, n, fl[3] = { 0, 0, 0 };
	const char *profile;
	double span;

	if (e->serial != port_serial(p)) {      /* a new port object: its counts restart */
		e->cost_base_ns += e->cost_ns;
		e->samples_base += e->samples;
		e->cost_ns = e->samples = 0;
		e->serial = port_serial(p);
		e->last_mono = 0;
	}
	e->cost_ns = port_sample_cost_total_ns(p);
	e->samples = port_samples(p);
	if (!last || last->mono_ns <= e->last_mono)
		return;
	n = rec_window(rec, e->last_mono, last->mono_ns, &f, &l);
	if (n < 2) {
		e->last_mono = last->mono_ns;
		return;
	}
	span = (double)(rec_get(rec, l)->mono_ns - rec_get(rec, f)->mono_ns) / 1e9;
	e->last_mono = rec_get(rec, l)->mono_ns;
	if (!m->rules)
		return;
	counters = facts_window_deltas(p, f, l);
	profile = conf_profile_name(port_profile(p));
	if (m->stall)
		stall_flow_counts(m->stall, e->name, fl);
	for (int k = 0; k < NSIG; k++) {
		double v;

		if (rules_signal(m->rules, profile, sig_name[k], counters, &v) < 0 || !isfinite(v))
			continue;
		e->known[k] = 1;
		e->cum[k] += v;
		if (e->cum[k] > (double)e->out[k])
			e->out[k] = (uint64_t)e->cum[k];
		if (k == SIG_GAP && span > 0 && !fl[2] && !e->incident_since_fold) {
			double rate = v / span, a = 1.0 - exp(-span / HEALTHY_TAU_S);

			e->healthy_rate = e->healthy_known ? e->healthy_rate + a * (rate - e->healthy_rate)
							   : rate;
			e->healthy_known = 1;
		}
	}
	e->incident_since_fold = 0;
	json_object_put(counters);
}

/* ---- rendering ---- */

static void label_value(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(o, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", o);
		else
			fputc(*s, o);
	}
}

static void family(FILE *o, const char *name, const char *type, const char *help)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void port_series(FILE *o, const char *name, const char *port, const char *k1,
			const char *v1, const char *k2, const char *v2)
{
	fprintf(o, "%s{port=\"", name);
	label_value(o, port);
	fputc('"', o);
	if (k1) {
		fprintf(o, ",%s=\"", k1);
		label_value(o, v1);
		fputc('"', o);
	}
	if (k2) {
		fprintf(o, ",%s=\"", k2);
		label_value(o, v2);
		fputc('"', o);
	}
	fputs("} ", o);
}

static void num(FILE *o, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(o, "%.0f\n", v);
	else
		fprintf(o, "%.9g\n", v);
}

/* Only ports still configured are shown. */
static int shown(const struct metrics *m, const struct mport *e)
{
	return ports_find(m->ports, e->name) != NULL;
}

static void render_ports(struct metrics *m, FILE *o)
{
	static const char *const drop_kind[NSIG] = { NULL, "buffer", "steering-miss",
						     "steering-discard", "fabric-error" };
	static const char *const st_name[3] = { "idle", "waiting", "stalled" };

	family(o, "nicstalld_port_info", "gauge", "A watched port: interface, namespace, profile.");
	for (unsigned i = 0; i < ports_count(m->ports); i++) {
		const struct port *p = ports_at(m->ports, i);

		fputs("nicstalld_port_info{port=\"", o);
		label_value(o, port_name(p));
		fputs("\",interface=\"", o);
		label_value(o, port_conf(p)->ifname);
		fputs("\",netns=\"", o);
		label_value(o, port_conf(p)->netns);
		fputs("\",profile=\"", o);
		label_value(o, conf_profile_name(port_profile(p)));
		fputs("\"} 1\n", o);
	}
	family(o, "nicstalld_port_up", "gauge", "1 while the port is sampled, 0 while it is down.");
	for (unsigned i = 0; i < ports_count(m->ports); i++) {
		const struct port *p = ports_at(m->ports, i);

		port_series(o, "nicstalld_port_up", port_name(p), NULL, NULL, NULL, NULL);
		num(o, port_state(p) == PORT_UP);
	}
	family(o, "nicstalld_port_samples_total", "counter", "Counter readings of the port.");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i])) {
			port_series(o, "nicstalld_port_samples_total", m->mp[i].name, NULL, NULL, NULL, NULL);
			num(o, (double)(m->mp[i].samples_base + m->mp[i].samples));
		}
	family(o, "nicstalld_port_sample_seconds_total", "counter",
	       "Time spent reading the port's counter sources (the sample cost).");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i])) {
			port_series(o, "nicstalld_port_sample_seconds_total", m->mp[i].name, NULL, NULL,
				    NULL, NULL);
			num(o, (double)(m->mp[i].cost_base_ns + m->mp[i].cost_ns) / 1e9);
		}
	family(o, "nicstalld_port_frames_gap_total", "counter",
	       "Frames counted at the physical port and not at the vport (signal gap).");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i]) && m->mp[i].known[SIG_GAP]) {
			port_series(o, "nicstalld_port_frames_gap_total", m->mp[i].name, NULL, NULL,
				    NULL, NULL);
			num(o, (double)m->mp[i].out[SIG_GAP]);
		}
	family(o, "nicstalld_port_frames_gap_healthy_per_second", "gauge",
	       "The gap's rate learned while the port had no stalled flow (frames per second).");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i]) && m->mp[i].healthy_known) {
			port_series(o, "nicstalld_port_frames_gap_healthy_per_second", m->mp[i].name,
				    NULL, NULL, NULL, NULL);
			num(o, m->mp[i].healthy_rate);
		}
	family(o, "nicstalld_port_drops_total", "counter",
	       "Frames dropped or errored by the NIC, by kind (signals buffer_drops, "
	       "steer_misses, steer_discards, fabric_errors).");
	for (unsigned i = 0; i < m->nmp; i++)
		for (int k = SIG_BUFFER; k < NSIG && shown(m, &m->mp[i]); k++)
			if (m->mp[i].known[k]) {
				port_series(o, "nicstalld_port_drops_total", m->mp[i].name, "kind",
					    drop_kind[k], NULL, NULL);
				num(o, (double)m->mp[i].out[k]);
			}
	family(o, "nicstalld_port_flows", "gauge", "Flows watched on the port, by state.");
	for (unsigned i = 0; i < ports_count(m->ports) && m->stall; i++) {
		unsigned c[3];

		stall_flow_counts(m->stall, port_name(ports_at(m->ports, i)), c);
		for (int s = 0; s < 3; s++) {
			port_series(o, "nicstalld_port_flows", port_name(ports_at(m->ports, i)), "state",
				    st_name[s], NULL, NULL);
			num(o, c[s]);
		}
	}
}

#define PORT_COUNTER(fam, help, field)                                              \
	do {                                                                        \
		family(o, fam, "counter", help);                                    \
		for (unsigned i = 0; i < m->nmp; i++)                               \
			if (shown(m, &m->mp[i])) {                                  \
				port_series(o, fam, m->mp[i].name, NULL, NULL, NULL, NULL); \
				num(o, (double)m->mp[i].field);                     \
			}                                                           \
	} while (0)

static void render_events(struct metrics *m, FILE *o)
{
	PORT_COUNTER("nicstalld_port_flow_stalls_total", "Flows that stalled on the port.", flow_stalls);
	family(o, "nicstalld_port_flow_releases_total", "counter",
	       "Stalled flows that progressed again (released) or closed.");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i])) {
			port_series(o, "nicstalld_port_flow_releases_total", m->mp[i].name, "outcome",
				    "released", NULL, NULL);
			num(o, (double)m->mp[i].released);
			port_series(o, "nicstalld_port_flow_releases_total", m->mp[i].name, "outcome",
				    "closed", NULL, NULL);
			num(o, (double)m->mp[i].closed);
		}
	PORT_COUNTER("nicstalld_port_incidents_opened_total", "Incidents opened on the port.", opened);
	PORT_COUNTER("nicstalld_port_incidents_suppressed_total",
		     "Stalls not investigated (incident_cooldown, incidents_per_hour).", suppressed);
	family(o, "nicstalld_port_incidents_total", "counter",
	       "Investigated incidents by the verdict of the rules.");
	for (unsigned i = 0; i < m->nmp; i++)
		for (unsigned k = 0; k < m->mp[i].verdicts.n && shown(m, &m->mp[i]); k++) {
			port_series(o, "nicstalld_port_incidents_total", m->mp[i].name, "verdict",
				    m->mp[i].verdicts.t[k].name, NULL, NULL);
			num(o, (double)m->mp[i].verdicts.t[k].n);
		}
	family(o, "nicstalld_port_incident_releases_total", "counter",
	       "Investigated incidents by the action that released them (none: not released).");
	for (unsigned i = 0; i < m->nmp; i++)
		for (unsigned k = 0; k < m->mp[i].releases.n && shown(m, &m->mp[i]); k++) {
			port_series(o, "nicstalld_port_incident_releases_total", m->mp[i].name, "action",
				    m->mp[i].releases.t[k].name, NULL, NULL);
			num(o, (double)m->mp[i].releases.t[k].n);
		}
	family(o, "nicstalld_port_recoveries_total", "counter",
	       "Recovery actions by action and outcome (performed; refused: by policy or no "
	       "transition possible; failed: a step went wrong).");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i])) {
			port_series(o, "nicstalld_port_recoveries_total", m->mp[i].name, "action",
				    "reprogram", "outcome", "performed");
			num(o, (double)m->mp[i].recov_performed);
			port_series(o, "nicstalld_port_recoveries_total", m->mp[i].name, "action",
				    "reprogram", "outcome", "refused");
			num(o, (double)m->mp[i].recov_refused);
			port_series(o, "nicstalld_port_recoveries_total", m->mp[i].name, "action",
				    "reprogram", "outcome", "failed");
			num(o, (double)m->mp[i].recov_failed);
		}
	family(o, "nicstalld_port_last_incident_timestamp_seconds", "gauge",
	       "When the port's last incident opened (Unix time).");
	for (unsigned i = 0; i < m->nmp; i++)
		if (shown(m, &m->mp[i]) && m->mp[i].last_incident_real_ns) {
			port_series(o, "nicstalld_port_last_incident_timestamp_seconds", m->mp[i].name,
				    NULL, NULL, NULL, NULL);
			fprintf(o, "%.3f\n", (double)m->mp[i].last_incident_real_ns / 1e9);
		}
}

static void render_daemon(struct metrics *m, FILE *o)
{
	struct rusage ru;
	static const char *const hook_outcomes[] = { "ok", "failed", "timeout", "not-found" };

	family(o, "nicstalld_build_info", "gauge", "The running nicstalld's version.");
	fputs("nicstalld_build_info{version=\"", o);
	label_value(o, NICSTALL_VERSION);
	fputs("\"} 1\n", o);
	family(o, "nicstalld_start_time_seconds", "gauge", "When the daemon started (Unix time).");
	fprintf(o, "nicstalld_start_time_seconds %.3f\n", (double)m->start_real_ns / 1e9);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		family(o, "nicstalld_cpu_seconds_total", "counter", "CPU time of the daemon, by mode.");
		fprintf(o, "nicstalld_cpu_seconds_total{mode=\"user\"} %.6f\n",
			(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6);
		fprintf(o, "nicstalld_cpu_seconds_total{mode=\"system\"} %.6f\n",
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
		family(o, "nicstalld_max_resident_memory_bytes", "gauge",
		       "The daemon's peak resident memory.");
		fprintf(o, "nicstalld_max_resident_memory_bytes %.0f\n", (double)ru.ru_maxrss * 1024.0);
	}
	family(o, "nicstalld_recorder_bytes", "gauge", "Memory held by the flight recorders.");
	fprintf(o, "nicstalld_recorder_bytes %" PRIu64 "\n", ports_rec_bytes(m->ports));
	family(o, "nicstalld_reloads_total", "counter", "Configuration reloads by outcome.");
	fprintf(o, "nicstalld_reloads_total{outcome=\"ok\"} %" PRIu64 "\n", m->reload_ok);
	fprintf(o, "nicstalld_reloads_total{outcome=\"failed\"} %" PRIu64 "\n", m->reload_failed);
	family(o, "nicstalld_bundles_total", "counter", "Evidence bundles by outcome.");
	fprintf(o, "nicstalld_bundles_total{outcome=\"written\"} %" PRIu64 "\n", m->bundles_written);
	fprintf(o, "nicstalld_bundles_total{outcome=\"failed\"} %" PRIu64 "\n", m->bundles_failed);
	family(o, "nicstalld_bundle_hook_runs_total", "counter", "bundle_hook runs by outcome.");
	for (size_t k = 0; k < sizeof(hook_outcomes) / sizeof(hook_outcomes[0]); k++) {
		uint64_t n = 0;

		for (unsigned i = 0; i < m->hooks.n; i++)
			if (!strcmp(m->hooks.t[i].name, hook_outcomes[k]))
				n = m->hooks.t[i].n;
		fprintf(o, "nicstalld_bundle_hook_runs_total{outcome=\"%s\"} %" PRIu64 "\n",
			hook_outcomes[k], n);
	}
	family(o, "nicstalld_bundle_hook_dropped_total", "counter",
	       "Bundles whose hook was not run (queue full, removed first, daemon stopping).");
	fprintf(o, "nicstalld_bundle_hook_dropped_total %" PRIu64 "\n", m->hook_dropped);
}

/* Per peer, from the same numbers as nicstallctl peers (peers_status_json):
 * the incidents whose notice it never answered, and the datagrams refused
 * by reason ("unanswered" is the first family, not a reason of the
 * second). */
/* Benchmark runs (runs.h): the open ones by name, certificates by word. */
static void render_runs(struct metrics *m, FILE *o)
{
	family(o, "nicstalld_run_info", "gauge",
	       "1 for each benchmark run open now (nicstallctl run begin), by its name.");
	for (unsigned i = 0; i < runs_open_count(m->runs); i++) {
		fputs("nicstalld_run_info{run=\"", o);
		label_value(o, runs_open_name(m->runs, i));
		fputs("\"} 1\n", o);
	}
	family(o, "nicstalld_run_certificates_total", "counter",
	       "Run certificates written, by their first word (clean, anomalous, tainted, "
	       "incomplete).");
	for (int w = 0; w < RUN_WORDS; w++)
		fprintf(o, "nicstalld_run_certificates_total{word=\"%s\"} %" PRIu64 "\n",
			run_word_name((enum run_word)w), runs_certificates(m->runs, (enum run_word)w));
}

static void render_peers(struct metrics *m, FILE *o)
{
	struct json_object *st = m->peers ? peers_status_json(m->peers) : NULL;
	struct json_object *arr = st ? jx_get(st, "peers") : NULL;
	size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;

	family(o, "nicstalld_peer_notices_unanswered_total", "counter",
	       "Incidents of this host whose snapshot notice the peer did not answer within "
	       "peer_wait (all attempts).");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct json_object *ref = jx_get(e, "refused");

		fputs("nicstalld_peer_notices_unanswered_total{peer=\"", o);
		label_value(o, jx_str(e, "name"));
		fprintf(o, "\"} %" PRIu64 "\n", jx_u64(ref, "unanswered"));
	}
	family(o, "nicstalld_peer_refused_total", "counter",
	       "Datagrams from or to the peer refused or lost, by reason: from its address "
	       "before they proved authentic (garbage, oversized, old_version, unknown_key_id, "
	       "wrong_recipient, verify_throttled, bad_signature, replayed), and its authentic "
	       "ones (bad_payload, rate_limited, over_budget, origin_is_this_host, send_failed, "
	       "stray_summary).");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		static const char *const parts[] = { "unauthenticated", "refused" };

		for (int k = 0; k < 2; k++) {
			struct json_object *ref = jx_get(e, parts[k]);

			if (!ref || !json_object_is_type(ref, json_type_object))
				continue;
			json_object_object_foreach(ref, reason, v) {
				if (!json_object_is_type(v, json_type_int) || !strcmp(reason, "unanswered") ||
				    !strcmp(reason, "signature_checks"))
					continue;
				fputs("nicstalld_peer_refused_total{peer=\"", o);
				label_value(o, jx_str(e, "name"));
				fputs("\",reason=\"", o);
				label_value(o, reason);
				fprintf(o, "\"} %" PRIu64 "\n", jx_u64(ref, reason));
			}
		}
	}
	family(o, "nicstalld_peer_signature_checks_total", "counter",
	       "HMACs computed for datagrams from the peer's address (bounded per address: "
	       "100 at once, then 1000 a second).");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		fputs("nicstalld_peer_signature_checks_total{peer=\"", o);
		label_value(o, jx_str(e, "name"));
		fprintf(o, "\"} %" PRIu64 "\n", jx_u64(jx_get(e, "unauthenticated"), "signature_checks"));
	}
	json_object_put(st);
}

char *metrics_render(struct metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o;

	for (unsigned i = 0; i < ports_count(m->ports); i++) {
		const struct port *p = ports_at(m->ports, i);
		struct mport *e = mport_get(m, port_name(p));

		if (e)
			fold_port(m, e, p);
	}
	o = open_memstream(&buf, &len);
	if (!o)
		return NULL;
	render_daemon(m, o);
	render_ports(m, o);
	render_events(m, o);
	render_peers(m, o);
	render_runs(m, o);
	if (fclose(o) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the file ---- */

int metrics_write(struct metrics *m, char *err, size_t errlen)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *base, *slash;
	char *txt;
	int dfd, fd, rc = -1;

	if (!m->path[0]) {
		util_errf(err, errlen, "metrics_file is not set");
		return -1;
	}
	slash = strrchr(m->path, '/');
	base = slash + 1;
	snprintf(dir, sizeof(dir), "%.*s", slash == m->path ? 1 : (int)(slash - m->path), m->path);
	/* hidden and without ".prom": the textfile collector never reads it */
	if (!*base || snprintf(tmp, sizeof(tmp), ".%s.tmp", base) >= (int)sizeof(tmp)) {
		util_errf(err, errlen, "metrics_file %s: not a file name", m->path);
		return -1;
	}
	txt = metrics_render(m);
	if (!txt) {
		util_errf(err, errlen, "metrics: out of memory");
		return -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		util_errf(err, errlen, "metrics_file %s: directory %s: %s", m->path, dir,
			  strerror(errno));
		free(txt);
		return -1;
	}
	unlinkat(dfd, tmp, 0);          /* a leftover of a crash */
	fd = fsu_create_excl_at(dfd, tmp, 0644);
	if (fd < 0) {
		util_errf(err, errlen, "metrics_file %s/%s: %s", dir, tmp, strerror(errno));
		goto out;
	}
	/* readable by the collector's user whatever the daemon's umask */
	if (fchmod(fd, 0644) < 0 || fsu_write_all(fd, txt, strlen(txt)) < 0) {
		util_errf(err, errlen, "metrics_file %s/%s: %s", dir, tmp, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	if (close(fd) < 0 || renameat(dfd, tmp, dfd, base) < 0) {
		util_errf(err, errlen, "metrics_file %s: %s", m->path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	rc = 0;
out:
	close(dfd);
	free(txt);
	return rc;
}

static void tick(struct loop_timer *t, void *arg)
{
	struct metrics *m = arg;
	char err[300];

	(void)t;
	if (metrics_write(m, err, sizeof(err)) < 0) {
		/* said once, not every few seconds; again when it changes */
		if (strcmp(err, m->last_err))
			log_warnx("%s (retrying every %.0f s)", err, (double)m->interval_ns / 1e9);
		util_strlcpy(m->last_err, err, sizeof(m->last_err));
	} else if (m->last_err[0]) {
		log_info("metrics: writing %s again", m->path);
		m->last_err[0] = '\0';
	}
}

void metrics_configure(struct metrics *m, const struct conf *c)
{
	m->c = c;
	if (!strcmp(m->path, c->metrics_file) && m->interval_ns == c->metrics_interval_ns)
		return;
	if (m->path[0] && strcmp(m->path, c->metrics_file))
		unlink(m->path);        /* ours: no stale copy left for the collector */
	util_strlcpy(m->path, c->metrics_file, sizeof(m->path));
	m->interval_ns = c->metrics_interval_ns;
	m->last_err[0] = '\0';
	if (!m->path[0]) {
		loop_timer_set(m->timer, 0, 0);
		return;
	}
	loop_timer_set(m->timer, 1000000000ull < m->interval_ns ? 1000000000ull : m->interval_ns,
		       m->interval_ns);
	log_info("metrics: %s every %.0f s", m->path, (double)m->interval_ns / 1e9);
}

struct metrics *metrics_new(struct loop *l, struct ports *ps, struct stall *st,
			    const struct conf *c)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->loop = l;
	m->ports = ps;
	m->stall = st;
	m->start_real_ns = loop_real_ns();
	m->timer = loop_timer_new(l, tick, m);
	if (!m->timer) {
		free(m);
		return NULL;
	}
	metrics_configure(m, c);
	counts_set(&metrics_counts, m);
	return m;
}

void metrics_set_rules(struct metrics *m, const struct rules *r)
{
	m->rules = r;
}

void metrics_set_peers(struct metrics *m, const struct peers *p)
{
	m->peers = p;
}

void metrics_set_runs(struct metrics *m, const struct runs *r)
{
	m->runs = r;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	if (counts_is(m))
		counts_set(NULL, NULL);
	/* a stopped daemon exports nothing rather than numbers that look live */
	if (m->path[0])
		unlink(m->path);
	loop_timer_free(m->timer);
	free(m->mp);
	free(m);
}

void metrics_summary(struct metrics *m, char *buf, size_t len)
{
	unsigned up = 0, n = ports_count(m->ports), fl[3] = { 0, 0, 0 }, all = 0;

	for (unsigned i = 0; i < n; i++)
		up += port_state(ports_at(m->ports, i)) == PORT_UP;
	if (m->stall)
		stall_flow_counts(m->stall, NULL, fl);
	all = fl[0] + fl[1] + fl[2];
	snprintf(buf, len, "%u/%u port(s) up, %u flow(s) watched, %u stalled; %" PRIu64
		 " incident(s)%s%s%s%s", up, n, all, fl[2], m->incidents,
		 m->incidents ? ", last " : "", m->incidents ? m->last_verdict : "",
		 m->incidents ? " on " : "", m->incidents ? m->last_verdict_port : "");
}
