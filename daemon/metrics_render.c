/* metrics_render: the metrics as Prometheus' text exposition format
 * (metrics.h metrics_render): each port's series, the events, the
 * daemon's own, the runs and the peers (metrics_int.h). */
#include "daemon/metrics_int.h"
#include "daemon/conf.h"
#include "daemon/forensic/facts.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/runs.h"
#include "daemon/detect/stall.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

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
		struct mport *e = metrics_port(m, port_name(p));

		if (e)
			metrics_fold_port(m, e, p);
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
