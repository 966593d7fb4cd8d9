/* daemon_cmds: the commands answered by the running daemon, each as aligned
 * text or (-j) JSON. */
#include "client/client.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct json_object *new_req(const char *cmd)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	return req;
}

/* Send req (consumed), check the reply, print it as JSON or with text();
 * returns the exit status. */
static int run(struct cli *c, struct json_object *req, void (*text)(struct json_object *))
{
	struct json_object *reply = cli_request(c, req);
	int rc;

	json_object_put(req);
	rc = cli_check_reply(reply);
	if (rc == EXIT_OK) {
		if (c->json)
			cli_print_json(reply);
		else
			text(reply);
	}
	json_object_put(reply);
	return rc;
}

static int no_args(struct cli *c)
{
	if (c->nargs)
		return cli_usage_error("%s: unexpected argument '%s'", c->cmd, c->args[0]);
	return EXIT_OK;
}

/* ---- status ---- */

/* The app source's endpoints (collectors/counters/src_app.h): one line each. */
static void print_endpoints(struct json_object *eps)
{
	for (size_t k = 0; k < jx_len(eps); k++) {
		struct json_object *e = json_object_array_get_idx(eps, k);

		printf("    app %s %s: %s, %s series, %s scrapes, %s errors, last %s ms",
		       jx_text(e, "name"), jx_text(e, "url"), jx_text(e, "state"),
		       jx_text(e, "series"), jx_text(e, "scrapes"), jx_text(e, "errors"),
		       jx_text(e, "last_duration_ms"));
		if (jx_text(e, "error")[0])
			printf(" (%s)", jx_text(e, "error"));
		printf("\n");
	}
}

static void print_incidents(struct json_object *incs)
{
	size_t n = jx_len(incs);

	if (!n)
		return;
	printf("\n%-5s %-10s %-10s %10s %6s %8s  %s\n", "ID", "PORT", "STATE", "DURATION",
	       "FLOWS", "SIBLINGS", "FIRST FLOW");
	for (size_t i = 0; i < n; i++) {
		struct json_object *inc = json_object_array_get_idx(incs, i);
		struct json_object *fl = jx_get(inc, "flows");
		struct json_object *f0 = jx_len(fl) ? json_object_array_get_idx(fl, 0) : NULL;

		printf("%-5s %-10s %-10s %8.0fms %6zu %8s  %s\n", jx_text(inc, "id"),
		       jx_text(inc, "port"), jx_text(inc, "state"),
		       json_object_get_double(jx_get(inc, "duration_ms")), jx_len(fl),
		       jx_text(inc, "siblings_progressing"), f0 ? jx_text(f0, "tuple") : "-");
	}
}

/* What watching costs: each flow source's share of one core (its polls'
 * CPU time over the last 10 s, the kernel's work included), the
 * detector's on their observations, and the daemon's own total. */
static void print_cost(struct json_object *o)
{
	struct json_object *fs = jx_get(o, "flow_sources");
	struct json_object *cost = jx_get(fs, "cost"), *det = jx_get(fs, "detector");
	struct json_object *cpu = jx_get(o, "cpu");

	if (jx_len(cost)) {
		printf("\n%-12s %-8s %-12s %6s %10s %12s\n", "FLOWS", "SOURCE", "STATE",
		       "FLOWS", "CPU", "US/POLL");
		for (size_t i = 0; i < jx_len(cost); i++) {
			struct json_object *c = json_object_array_get_idx(cost, i);

			printf("%-12s %-8s %-12s %6s %9.4f%% %12s\n", cli_dash(jx_text(c, "port")),
			       jx_text(c, "source"), jx_text(c, "state"), cli_dash(jx_text(c, "flows")),
			       json_object_get_double(jx_get(c, "cpu_pct")), jx_text(c, "per_call_us"));
			if (jx_text(c, "error")[0])
				printf("  (%s)\n", jx_text(c, "error"));
		}
		/* the detector's work on the polls' observations, in none of the
		 * sources' figures (an older daemon sends none) */
		if (det)
			printf("%-12s %-8s %-12s %6s %9.4f%% %12s\n", "-", "detector", "-",
			       jx_text(fs, "flows"),
			       json_object_get_double(jx_get(det, "cpu_pct")),
			       jx_text(det, "per_call_us"));
		/* polls are planned (an older daemon polls at every interval) */
		if (jx_get(fs, "next_poll"))
			printf("flow polls: %s so far, the next in %.0f ms (%s)\n",
			       jx_text(fs, "polls"),
			       json_object_get_double(jx_get(jx_get(fs, "next_poll"), "in_ms")),
			       jx_text(jx_get(fs, "next_poll"), "why"));
	}
	/* engine threads (an older daemon sends nothing) */
	if (jx_get(fs, "thread_watch")) {
		struct json_object *tw = jx_get(fs, "thread_watch");

		if (json_object_get_boolean(jx_get(tw, "on"))) {
			printf("thread watch: on, %s process(es), %s thread(s) watched, %s stall(s) "
			       "called; kernel symbols: %s", jx_text(tw, "processes"),
			       jx_text(tw, "threads"), jx_text(tw, "stalls_called"),
			       jx_text(tw, "kernel_symbols"));
			if (jx_get(tw, "syscalls"))
				printf("; system calls: %s", jx_text(tw, "syscalls"));
			printf("\n");
		} else
			printf("thread watch: off (%s)\n", jx_text(tw, "why_off"));
	}
	if (cpu) {
		printf("\ndaemon: %.3f%% of one core since start (%.2f s of CPU), rss %.1f MiB",
		       json_object_get_double(jx_get(cpu, "pct_since_start")),
		       json_object_get_double(jx_get(cpu, "total_s")),
		       (double)jx_u64(cpu, "rss_kib") / 1024.0);
		if (jx_get(cpu, "wakeups_per_s"))       /* an older daemon has none */
			printf(", %.1f wakeups/s", json_object_get_double(jx_get(cpu, "wakeups_per_s")));
		printf("\n");
	}
}

static void print_status(struct json_object *o)
{
	struct json_object *ports = jx_get(o, "ports");
	size_t n = jx_len(ports);

	printf("nicstalld %s on %s, pid %s, up %.1f s\n", jx_text(o, "version"),
	       jx_text(o, "host"), jx_text(o, "pid"),
	       json_object_get_double(jx_get(o, "uptime_s")));
	printf("config %s, sampling every %.0f ms, horizon %.0f s, recorders %" PRIu64 " KiB\n",
	       jx_text(o, "config"), json_object_get_double(jx_get(o, "interval_ms")),
	       json_object_get_double(jx_get(o, "horizon_s")),
	       json_object_get_uint64(jx_get(o, "recorder_bytes")) / 1024);
	if (jx_u64(o, "watchdog_usec") || jx_text(o, "metrics_file")[0])
		printf("watchdog %s, metrics %s\n",
		       jx_u64(o, "watchdog_usec") ? "on" : "off", cli_dash(jx_text(o, "metrics_file")));
	if (jx_text(o, "last_reload_error")[0])
		printf("last reload failed: %s\n", jx_text(o, "last_reload_error"));
	printf("\n%-12s %-12s %-12s %-5s %-8s %-10s %-14s %8s %s\n", "PORT", "INTERFACE",
	       "NETNS", "STATE", "PROFILE", "DRIVER", "FIRMWARE", "SAMPLES", "RECORDER");
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(ports, i);
		struct json_object *rec = jx_get(p, "recorder"), *srcs = jx_get(p, "sources");
		char recs[96];

		snprintf(recs, sizeof(recs), "%s/%s samples, %.1f s, %" PRIu64 " KiB",
			 jx_text(rec, "samples"), jx_text(rec, "capacity"),
			 json_object_get_double(jx_get(rec, "span_s")),
			 json_object_get_uint64(jx_get(rec, "bytes")) / 1024);
		printf("%-12s %-12s %-12s %-5s %-8s %-10s %-14s %8s %s\n", jx_text(p, "name"),
		       cli_dash(jx_text(p, "interface")), cli_dash(jx_text(p, "netns")),
		       jx_text(p, "state"), jx_text(p, "profile"), cli_dash(jx_text(p, "driver")),
		       cli_dash(jx_text(p, "firmware")), jx_text(p, "samples"), recs);
		if (jx_text(p, "reason")[0])
			printf("  down: %s\n", jx_text(p, "reason"));
		if (jx_text(p, "psid")[0] || jx_text(p, "rdma_device")[0])
			printf("  psid %s, rdma %s%s%s\n", cli_dash(jx_text(p, "psid")),
			       cli_dash(jx_text(p, "rdma_device")),
			       jx_text(p, "rdma_port")[0] ? " port " : "", jx_text(p, "rdma_port"));
		for (size_t j = 0; j < jx_len(srcs); j++) {
			struct json_object *s = json_object_array_get_idx(srcs, j);

			printf("  source %-8s %-11s %5s counters", jx_text(s, "name"),
			       jx_text(s, "state"), jx_text(s, "counters"));
			if (jx_get(s, "cpu_pct"))
				printf("  cpu %.4f%% (%s us/read)",
				       json_object_get_double(jx_get(s, "cpu_pct")),
				       jx_text(s, "per_call_us"));
			if (jx_text(s, "error")[0])
				printf("  (%s)", jx_text(s, "error"));
			printf("\n");
			print_endpoints(jx_get(s, "endpoints"));
		}
		if (jx_get(rec, "cpu_pct"))
			printf("  recorder          cpu %.4f%% (%s us/sample)\n",
			       json_object_get_double(jx_get(rec, "cpu_pct")),
			       jx_text(rec, "per_call_us"));
	}
	print_cost(o);
	print_incidents(jx_get(o, "incidents"));
}

int cmd_status(struct cli *c)
{
	int rc = no_args(c);

	return rc ? rc : run(c, new_req("status"), print_status);
}

/* ---- counters, snapshot ---- */

/* Counters of sources ({source: {name: value | {delta, value, ...}}}). */
static void print_sources(struct json_object *srcs, int deltas)
{
	size_t w = 8;

	json_object_object_foreach(srcs, sn, sv) {
		(void)sn;
		if (!json_object_is_type(sv, json_type_object))
			continue;
		json_object_object_foreach(sv, cn, cv) {
			(void)cv;
			if (strlen(cn) > w)
				w = strlen(cn);
		}
	}
	json_object_object_foreach(srcs, sname, sval) {
		printf("[%s]\n", sname);
		if (!json_object_is_type(sval, json_type_object))
			continue;
		json_object_object_foreach(sval, cname, cval) {
			if (deltas)
				printf("  %-*s +%-19" PRIu64 " %20" PRIu64 "%s%s\n", (int)w, cname,
				       json_object_get_uint64(jx_get(cval, "delta")),
				       json_object_get_uint64(jx_get(cval, "value")),
				       jx_get(cval, "wrapped") ? "  (wrapped)" : "",
				       jx_get(cval, "reset") ? "  (reset)" : "");
			else if (json_object_is_type(cval, json_type_string))
				printf("  %-*s %s\n", (int)w, cname, json_object_get_string(cval));
			else
				printf("  %-*s %20" PRIu64 "\n", (int)w, cname,
				       json_object_get_uint64(cval));
		}
	}
}

static void print_counters(struct json_object *o)
{
	int deltas = !strcmp(jx_text(o, "mode"), "deltas");

	if (deltas)
		printf("port %s: deltas over %.3f s\n", jx_text(o, "port"),
		       json_object_get_double(jx_get(o, "span_s")));
	else
		printf("port %s: values\n", jx_text(o, "port"));
	print_sources(jx_get(o, "sources"), deltas);
}

int cmd_counters(struct cli *c)
{
	struct json_object *req;

	if (c->nargs != 1)
		return cli_usage_error(c->nargs ? "counters: one port at a time ('%s')" :
				       "counters: missing PORT%s", c->nargs ? c->args[1] : "");
	req = new_req("counters");
	json_object_object_add(req, "port", json_object_new_string(c->args[0]));
	if (c->opts & OPT_CHANGED)
		json_object_object_add(req, "changed", json_object_new_boolean(1));
	if (c->opts & OPT_WINDOW)
		json_object_object_add(req, "window", json_object_new_double(c->window));
	return run(c, req, print_counters);
}

/* The port's devlink health reporters, one line each (their diagnose
 * trees are in the JSON of -j), or why there are none. */
static void print_devlink_health(struct json_object *dh)
{
	struct json_object *reps = jx_arr(dh, "reporters");

	if (!dh)
		return;
	if (!jx_len(reps)) {
		const char *why = jx_text(dh, "reason");

		printf("  devlink health: none%s%s%s\n", why[0] ? " (" : "", why, why[0] ? ")" : "");
		return;
	}
	printf("  devlink health (%s):\n", cli_dash(jx_text(dh, "handles")));
	for (size_t i = 0; i < jx_len(reps); i++) {
		struct json_object *r = json_object_array_get_idx(reps, i);

		printf("    %-10s %-8s errors %s, recovers %s", jx_text(r, "name"),
		       jx_text(r, "state"), jx_text(r, "error_count"), jx_text(r, "recover_count"));
		if (jx_get(r, "grace_period_ms"))
			printf(", grace %s ms, auto-recover %s", jx_text(r, "grace_period_ms"),
			       jx_bool(r, "auto_recover") ? "on" : "off");
		if (jx_get(r, "auto_dump"))
			printf(", auto-dump %s", jx_bool(r, "auto_dump") ? "on" : "off");
		if (jx_u64(r, "dump_time_ns")) {
			time_t t = (time_t)(jx_u64(r, "dump_time_ns") / 1000000000ull);
			char when[32];

			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
			printf(", dump stored %s", when);
		}
		printf("\n");
		if (jx_text(r, "diagnose_error")[0])
			printf("      diagnose failed: %s\n", jx_text(r, "diagnose_error"));
	}
	if (jx_text(dh, "error")[0])
		printf("    last read failed: %s\n", jx_text(dh, "error"));
}

/* The host source's devices and processes (src_host_json()). */
static void print_host_resources(struct json_object *h)
{
	struct json_object *devs = jx_arr(h, "devices"), *procs = jx_arr(h, "processes");
	struct json_object *notes = jx_arr(h, "notes");

	if (!h)
		return;
	if (jx_text(h, "note")[0]) {
		printf("  host resources: none (%s)\n", jx_text(h, "reason"));
		return;
	}
	for (size_t i = 0; i < jx_len(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);

		printf("  disk %-10s %-6s model %s firmware %s%s%s, nr_requests %s\n",
		       jx_text(d, "name"), jx_text(d, "transport"), cli_dash(jx_text(d, "model")),
		       cli_dash(jx_text(d, "firmware")), jx_text(d, "serial_sha256")[0] ?
		       ", serial sha256 " : "", jx_text(d, "serial_sha256"),
		       cli_dash(jx_text(d, "nr_requests")));
	}
	for (size_t i = 0; i < jx_len(procs); i++) {
		struct json_object *q = json_object_array_get_idx(procs, i);

		printf("  process %s (%s): %s%s%s\n", jx_text(q, "pid"), jx_text(q, "comm"),
		       jx_text(q, "role"), jx_text(q, "producer")[0] ? " " : "",
		       jx_text(q, "producer"));
	}
	if (strcmp(jx_text(h, "delayacct"), "on"))
		printf("  %s\n", jx_text(h, "delayacct"));
	for (size_t i = 0; i < jx_len(notes); i++)
		printf("  host: %s\n", json_object_get_string(json_object_array_get_idx(notes, i)));
}

static void print_snapshot(struct json_object *o)
{
	struct json_object *ports = jx_get(o, "ports");

	printf("snapshot of %s at %s (CLOCK_REALTIME ns)\n", jx_text(o, "host"), jx_text(o, "real_ns"));
	json_object_object_foreach(ports, name, p) {
		struct json_object *id = jx_get(p, "identity");

		printf("\nport %s: %s%s%s, %s, profile %s", name, cli_dash(jx_text(p, "interface")),
		       jx_text(p, "netns")[0] ? " in netns " : "", jx_text(p, "netns"),
		       jx_text(p, "state"), jx_text(p, "profile"));
		if (jx_text(id, "driver")[0])
			printf(", driver %s firmware %s", jx_text(id, "driver"),
			       cli_dash(jx_text(id, "firmware")));
		printf("\n");
		if (jx_text(p, "reason")[0])
			printf("  down: %s\n", jx_text(p, "reason"));
		print_sources(jx_get(p, "sources"), 0);
		print_devlink_health(jx_get(p, "devlink_health"));
		print_host_resources(jx_get(p, "host_resources"));
	}
}

static void print_manual_bundle(struct json_object *o)
{
	printf("bundle %s\n", jx_text(o, "bundle"));
}

int cmd_snapshot(struct cli *c)
{
	struct json_object *req = new_req("snapshot"), *ports = json_object_new_array();

	for (int i = 0; i < c->nargs; i++)
		json_object_array_add(ports, json_object_new_string(c->args[i]));
	if (c->nargs)
		json_object_object_add(req, "ports", ports);
	else
		json_object_put(ports);
	if (c->opts & OPT_BUNDLE)
		json_object_object_add(req, "bundle", json_object_new_boolean(1));
	return run(c, req, c->opts & OPT_BUNDLE ? print_manual_bundle : print_snapshot);
}

/* ---- flows ---- */

static void print_flows(struct json_object *o)
{
	struct json_object *fl = jx_get(o, "flows");
	size_t n = jx_len(fl), unverified = 0;

	printf("%-10s %-6s %-48s %-8s %10s %10s %10s %8s %8s %8s\n", "PORT", "SOURCE", "TUPLE",
	       "STATE", "AGE_MS", "TX", "RX", "UNSENT", "UNREAD", "STAGED");
	for (size_t i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(fl, i);
		struct json_object *h = jx_get(f, "held");

		const char *claim = jx_str(f, "claim");
		int unv = claim && strcmp(claim, "verified");

		printf("%-10s %-6s %-48s %-8s %10.0f %10s %10s %8s %8s %8s%s%s\n", jx_text(f, "port"),
		       jx_text(f, "source"), jx_text(f, "tuple"), jx_text(f, "state"),
		       json_object_get_double(jx_get(f, "progress_age_ms")), jx_text(f, "tx_msgs"),
		       jx_text(f, "rx_msgs"), jx_text(h, "unsent"), jx_text(h, "unread"),
		       jx_text(h, "staged"), unv ? "  " : "", unv ? claim : "");
		unverified += unv;
	}
	if (unverified)
		printf("(%zu flow%s an engine claims the kernel did not verify: shown, never "
		       "investigated)\n", unverified, unverified == 1 ? "" : "s");
	if (!n)
		printf("(no flows)\n");
	else if (jx_u64(o, "flows_total") > n)
		printf("(%" PRIu64 " more not listed: stalled first, then waiting, then the rest; "
		       "--limit N lists more)\n", jx_u64(o, "flows_total") - n);
}

int cmd_flows(struct cli *c)
{
	struct json_object *req;

	if (c->nargs > 1)
		return cli_usage_error("flows: one port at a time ('%s')", c->args[1]);
	req = new_req("flows");
	if (c->nargs)
		json_object_object_add(req, "port", json_object_new_string(c->args[0]));
	if (c->opts & OPT_STALLED)
		json_object_object_add(req, "stalled", json_object_new_boolean(1));
	if (c->opts & OPT_LIMIT)
		json_object_object_add(req, "limit", json_object_new_int64(c->limit));
	return run(c, req, print_flows);
}

/* ---- incident ---- */

static void print_record(struct json_object *o)
{
	struct json_object *r = jx_get(o, "record"), *steps = jx_get(r, "steps");
	struct json_object *rel = jx_get(r, "release"), *v = jx_get(r, "verdict");

	printf("investigation %s (incident %s, trigger %s) on port %s: %s\n", jx_text(r, "id"),
	       jx_text(r, "incident_id"), jx_text(r, "trigger"), jx_text(r, "port"),
	       jx_text(r, "state"));
	printf("%10s %10s  %-16s %-8s %-10s %s\n", "START_MS", "END_MS", "STEP", "PORT",
	       "OUTCOME", "NOTE");
	for (size_t i = 0; i < jx_len(steps); i++) {
		struct json_object *s = json_object_array_get_idx(steps, i);

		printf("%10.1f %10.1f  %-16s %-8s %-10s %s\n",
		       json_object_get_double(jx_get(s, "start_ms")),
		       json_object_get_double(jx_get(s, "end_ms")), jx_text(s, "step"),
		       cli_dash(jx_text(s, "port")), jx_text(s, "outcome"), jx_text(s, "note"));
	}
	if (rel)
		printf("released: %s, action %s%s%s%s\n", jx_text(rel, "released"),
		       jx_text(rel, "action"), jx_get(rel, "after_ms") ? ", after " : "",
		       jx_text(rel, "after_ms"), jx_get(rel, "after_ms") ? " ms" : "");
	if (v)
		printf("verdict: %s\n", jx_text(v, "verdict"));
	if (jx_text(r, "bundle")[0])
		printf("bundle: %s\n", jx_text(r, "bundle"));
}

static void print_list(struct json_object *o)
{
	struct json_object *a = jx_get(o, "investigations");

	printf("%-6s %-9s %-12s %s\n", "ID", "INCIDENT", "PORT", "STATE");
	for (size_t i = 0; i < jx_len(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);

		printf("%-6s %-9s %-12s %s\n", jx_text(e, "id"),
		       jx_u64(e, "incident_id") ? jx_text(e, "incident_id") : "-",
		       jx_text(e, "port"), jx_text(e, "state"));
	}
	if (!jx_len(a))
		printf("(no investigations yet)\n");
}

int cmd_incident(struct cli *c)
{
	struct json_object *req;
	const char *sub = c->nargs ? c->args[0] : "";

	if (!strcmp(sub, "list")) {
		if (c->nargs > 1)
			return cli_usage_error("incident list: unexpected argument '%s'", c->args[1]);
		req = new_req("incident");
		json_object_object_add(req, "list", json_object_new_boolean(1));
		return run(c, req, print_list);
	}
	if (strcmp(sub, "show"))
		return cli_usage_error("incident: expected 'show [ID]' or 'list'%s%s%s",
				       *sub ? ", not '" : "", sub, *sub ? "'" : "");
	if (c->nargs > 2)
		return cli_usage_error("incident show: unexpected argument '%s'", c->args[2]);
	req = new_req("incident");
	if (c->nargs == 2) {
		uint64_t id;
		char e[128];

		if (util_parse_u64(c->args[1], &id, 1, INT64_MAX, e, sizeof(e)) < 0) {
			json_object_put(req);
			return cli_usage_error("incident show: '%s' is not an id (%s)", c->args[1], e);
		}
		json_object_object_add(req, "id", json_object_new_int64((int64_t)id));
	}
	return run(c, req, print_record);
}

/* ---- root's commands ---- */

static void print_started(struct json_object *o)
{
	printf("investigation %s started\n", jx_text(o, "id"));
}


static void print_reloaded(struct json_object *o)
{
	(void)o;
	printf("configuration reloaded\n");
}

static int one_port(struct cli *c, void (*text)(struct json_object *))
{
	struct json_object *req;

	if (c->nargs != 1)
		return cli_usage_error("%s: expected one PORT", c->cmd);
	req = new_req(c->cmd);
	json_object_object_add(req, "port", json_object_new_string(c->args[0]));
	return run(c, req, text);
}

int cmd_investigate(struct cli *c)
{
	return one_port(c, print_started);
}

/* The reply comes when the reprogram's hold ended (or it did not run):
 * "performed", the sequence, and whether the kernel log confirmed the
 * driver's work; or "refused" with the reason. A reprogram that did not
 * happen is a failure (exit 1), with -j too (the JSON says why). */
int cmd_recover(struct cli *c)
{
	struct json_object *req, *reply;
	int rc;

	if (c->nargs != 1)
		return cli_usage_error("recover: expected one PORT");
	req = new_req("recover");
	json_object_object_add(req, "port", json_object_new_string(c->args[0]));
	reply = cli_request(c, req);
	json_object_put(req);
	rc = cli_check_reply(reply);
	if (rc == EXIT_OK) {
		int performed = jx_bool(reply, "performed");

		if (c->json)
			cli_print_json(reply);
		else if (performed)
			printf("port %s: reprogrammed (%s)%s\n", jx_text(reply, "port"),
			       jx_text(reply, "sequence"),
			       jx_bool(jx_get(reply, "kernel_log"), "confirmed") ?
			       ", confirmed by the kernel log" : "");
		if (!performed) {
			if (!c->json)
				cli_error("port %s: no reprogram: %s", jx_text(reply, "port"),
					  jx_str(reply, "refused") ? jx_text(reply, "refused") :
					  jx_text(reply, "error"));
			rc = EXIT_FAIL;
		}
	}
	json_object_put(reply);
	return rc;
}

/* Synchronous: the reply comes when the daemon applied the file, or kept
 * the running one (ExecReload= of nicstalld.service relies on it). */
int cmd_reload(struct cli *c)
{
	int rc = no_args(c);

	return rc ? rc : run(c, new_req("reload"), print_reloaded);
}

/* ---- peers ---- */

/* The peer daemons (nicstalld.conf(5) [peer NAME]) as the daemon sees
 * them: its status's "peers" (daemon/peers/peers.c peers_status_json). */
/* "reason=N ..." of the non-zero counts of o (but skip's). */
static void counts_line(struct json_object *o, const char *skip, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, reason, v) {
		if (!json_object_is_type(v, json_type_int) || !jx_u64(o, reason) ||
		    !strcmp(reason, skip) || off >= len)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%" PRIu64, off ? " " : "", reason,
					jx_u64(o, reason));
	}
}

static void print_peers(struct json_object *o)
{
	struct json_object *arr = jx_arr(o, "peers");
	size_t n = jx_len(arr);

	printf("host %s, listening on %s%s%s, %" PRIu64 " datagram(s) from unknown senders\n",
	       cli_dash(jx_text(o, "host")), jx_bool(o, "open") ? jx_text(o, "listen") : "(no socket)",
	       jx_text(o, "netns")[0] ? " in netns " : "", jx_text(o, "netns"),
	       jx_u64(o, "unknown_senders"));
	if (jx_get(o, "snapshots_per_hour"))
		printf("peer snapshots: %" PRIu64 " in the last hour (at most %" PRIu64 "), %" PRIu64
		       " notice(s) refused over that budget\n", jx_u64(o, "snapshots_last_hour"),
		       jx_u64(o, "snapshots_per_hour"), jx_u64(o, "snapshots_over_budget"));
	for (size_t i = 0; i < jx_len(jx_arr(o, "unknown_sources")); i++) {
		struct json_object *u = json_object_array_get_idx(jx_arr(o, "unknown_sources"), i);

		printf("  from %s (no peer): %" PRIu64 " refused unauthenticated, the last %.1fs ago\n",
		       jx_text(u, "address"), jx_u64(u, "refused_unauthenticated"),
		       jx_double(u, "last_s", 0));
	}
	if (!n) {
		printf("(no peers configured)\n");
		return;
	}
	printf("\n%-12s %-12s %-22s %-10s %12s %10s %6s %8s %10s  %s\n", "PEER", "HOST", "ADDRESS",
	       "KEY", "LAST CONTACT", "RTT", "SENT", "ANSWERED", "UNANSWERED", "REFUSED");
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(arr, i);
		struct json_object *ref = jx_get(p, "refused");
		const char *ks = jx_text(jx_get(p, "key"), "state");
		size_t kl = strcspn(ks, ": ,"); /* its first word: ok, loaded */
		char addr[96], key[32], contact[32], rtt[32], refused[512], unauth[512];

		snprintf(addr, sizeof(addr), strchr(jx_text(p, "address"), ':') ? "[%s]:%s" : "%s:%s",
			 jx_text(p, "address"), jx_text(p, "port"));
		snprintf(key, sizeof(key), "%.*s", (int)kl, ks);
		if (jx_get(p, "last_contact_s"))
			snprintf(contact, sizeof(contact), "%.1fs ago", jx_double(p, "last_contact_s", 0));
		else
			snprintf(contact, sizeof(contact), "never");
		if (jx_get(p, "rtt_ms"))
			snprintf(rtt, sizeof(rtt), "%.1fms", jx_double(p, "rtt_ms", 0));
		else
			snprintf(rtt, sizeof(rtt), "-");
		counts_line(ref, "unanswered", refused, sizeof(refused));
		counts_line(jx_get(p, "unauthenticated"), "signature_checks", unauth, sizeof(unauth));
		printf("%-12s %-12s %-22s %-10s %12s %10s %6" PRIu64 " %8" PRIu64 " %10" PRIu64 "  %s\n",
		       jx_text(p, "name"), cli_dash(jx_text(p, "host")), addr, key, contact, rtt,
		       jx_u64(p, "notices_sent"), jx_u64(p, "summaries_received"),
		       jx_u64(ref, "unanswered"), refused[0] ? refused : "-");
		if (strncmp(ks, "ok", 2))
			printf("  key %s (%s): %s\n", jx_text(jx_get(p, "key"), "id"),
			       cli_dash(jx_text(jx_get(p, "key"), "file")), ks);
		if (jx_text(p, "last_error")[0])
			printf("  last error: %s\n", jx_text(p, "last_error"));
		if (unauth[0])
			/* anyone may have sent these: not the peer's state */
			printf("  from its address, refused before they proved authentic: %s "
			       "(%" PRIu64 " signature checks)%s\n", unauth,
			       jx_u64(jx_get(p, "unauthenticated"), "signature_checks"),
			       jx_u64(jx_get(p, "unauthenticated"), "bad_signature") ?
			       "; bad_signature: are the two key files the same, or is someone "
			       "else sending?" : "");
	}
}

int cmd_peers(struct cli *c)
{
	struct json_object *req, *reply, *ps;
	int rc = no_args(c);

	if (rc)
		return rc;
	req = new_req("status");
	reply = cli_request(c, req);
	json_object_put(req);
	rc = cli_check_reply(reply);
	if (rc == EXIT_OK) {
		/* a daemon without [peer] sections shows none */
		ps = jx_get(reply, "peers");
		if (!ps) {
			ps = json_object_new_object();
			jx_add_str(ps, "host", jx_text(reply, "host"));
			json_object_object_add(ps, "peers", json_object_new_array());
			json_object_object_add(reply, "peers", ps);
		}
		if (c->json)
			cli_print_json(ps);
		else
			print_peers(ps);
	}
	json_object_put(reply);
	return rc;
}
