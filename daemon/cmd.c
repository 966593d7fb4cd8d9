/* cmd: control commands over the daemon's handles. */
#include "daemon/cmd.h"
#include "collectors/counters/ident.h"
#include "daemon/forensic/forensic.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/runs.h"
#include "daemon/detect/stall.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct json_object *ok_reply(void)
{
	struct json_object *o = json_object_new_object();

	jx_add_bool(o, "ok", 1);
	return o;
}

static struct json_object *cmd_status(struct cmd_env *env, struct json_object *req)
{
	struct json_object *o = ok_reply(), *ports = json_object_new_array();
	uint64_t now = loop_mono_ns();

	(void)req;
	if (env->status)
		env->status(o, env->arg);
	for (unsigned i = 0; i < ports_count(env->ports); i++)
		json_object_array_add(ports, port_status_json(ports_at(env->ports, i), now));
	json_object_object_add(o, "ports", ports);
	jx_add_u64(o, "recorder_bytes", ports_rec_bytes(env->ports));
	if (env->stall) {
		json_object_object_add(o, "incidents", stall_incidents_json(env->stall));
		json_object_object_add(o, "flow_sources", stall_engines_json(env->stall));
	}
	return o;
}

static struct json_object *no_port(const struct cmd_env *env, const char *name)
{
	char list[512];

	return ctl_error("no port '%s' (configured: %s)", name,
			 ports_names(env->ports, list, sizeof(list)));
}

struct delta_ctx {
	struct json_object *obj;
	int changed_only;
};

static void delta_cb(const char *name, uint64_t delta, unsigned flags,
		     uint64_t last, void *arg)
{
	struct delta_ctx *dc = arg;
	struct json_object *c;

	if (dc->changed_only && !delta)
		return;
	c = json_object_new_object();
	jx_add_u64(c, "delta", delta);
	jx_add_u64(c, "value", last);
	if (flags & CNT_WRAPPED)
		jx_add_bool(c, "wrapped", 1);
	if (flags & CNT_RESET)
		jx_add_bool(c, "reset", 1);
	json_object_object_add(dc->obj, name, c);
}

static struct json_object *cmd_counters(struct cmd_env *env, struct json_object *req)
{
	struct json_object *jp, *jw, *jc, *o, *srcs;
	const struct rec_sample *last;
	struct recorder *rec;
	const char *name;
	double window = 0;
	int changed = 0;
	struct port *p;

	if (!json_object_object_get_ex(req, "port", &jp) ||
	    !json_object_is_type(jp, json_type_string))
		return ctl_error("counters: missing \"port\"");
	name = json_object_get_string(jp);
	p = ports_find(env->ports, name);
	if (!p)
		return no_port(env, name);
	if (json_object_object_get_ex(req, "window", &jw)) {
		window = json_object_get_double(jw);
		if (!(window >= 0) || window > 86400)
			return ctl_error("counters: window must be 0..86400 seconds");
	}
	if (json_object_object_get_ex(req, "changed", &jc))
		changed = json_object_get_boolean(jc);
	rec = port_recorder(p);
	last = rec_latest(rec);
	if (!last)
		return ctl_error("port %s has no samples yet (%s)", name,
				 port_state(p) == PORT_DOWN ? port_reason(p) : "starting");
	o = ok_reply();
	srcs = json_object_new_object();
	jx_add_str(o, "port", name);
	jx_add_str(o, "state", port_state_name(port_state(p)));
	jx_add_u64(o, "mono_ns", last->mono_ns);
	jx_add_u64(o, "real_ns", last->real_ns);
	if (window > 0 || changed) {
		unsigned first, lastidx, n;
		uint64_t from;

		if (window > 0) {
			uint64_t w = (uint64_t)llround(window * 1e9);

			from = last->mono_ns > w ? last->mono_ns - w : 0;
			n = rec_window(rec, from, last->mono_ns, &first, &lastidx);
		} else {
			n = rec_count(rec) >= 2 ? 2 : 1;
			lastidx = rec_count(rec) - 1;
			first = lastidx + 1 - n;
		}
		if (n < 2) {
			json_object_put(o);
			json_object_put(srcs);
			return ctl_error("port %s: fewer than two samples in the window", name);
		}
		jx_add_u64(o, "from_mono_ns", rec_get(rec, first)->mono_ns);
		jx_add_double(o, "span_s",
			      (double)(last->mono_ns - rec_get(rec, first)->mono_ns) / 1e9);
		for (unsigned s = 0; s < port_nsrc(p); s++) {
			struct delta_ctx dc = { NULL, changed };

			if (!port_src_name(p, s) || !last->part[s].lay)
				continue;
			dc.obj = json_object_new_object();
			rec_deltas(rec, s, first, lastidx, delta_cb, &dc);
			json_object_object_add(srcs, port_src_name(p, s), dc.obj);
		}
		jx_add_str(o, "mode", "deltas");
	} else {
		for (unsigned s = 0; s < port_nsrc(p); s++) {
			const struct rec_part *pt = &last->part[s];
			struct json_object *vals;

			if (!port_src_name(p, s) || !pt->lay)
				continue;
			vals = json_object_new_object();
			for (unsigned i = 0; i < pt->lay->n; i++)
				jx_add_u64(vals, pt->lay->names[i], pt->vals[i]);
			json_object_object_add(srcs, port_src_name(p, s), vals);
		}
		jx_add_str(o, "mode", "values");
	}
	json_object_object_add(o, "sources", srcs);
	return o;
}

static struct json_object *snapshot_port(struct port *p, uint64_t mono, uint64_t real)
{
	struct json_object *o = json_object_new_object(), *id;

	port_sample(p, mono, real, 0);
	jx_add_str(o, "interface", port_conf(p)->ifname);
	jx_add_str(o, "netns", port_conf(p)->netns);
	jx_add_str(o, "state", port_state_name(port_state(p)));
	if (port_state(p) == PORT_DOWN)
		jx_add_str(o, "reason", port_reason(p));
	jx_add_str(o, "profile", conf_profile_name(port_profile(p)));
	id = json_object_new_object();
	ident_to_json(port_ident(p), id);
	json_object_object_add(o, "identity", id);
	json_object_object_add(o, "sources", port_counters_json(p, 1));
	json_object_object_add(o, "devlink_health", port_devlink_json(p));
	/* the block devices' identity and the processes the host source reads */
	json_object_object_add(o, "host_resources", port_host_json(p));
	/* the application metrics' endpoints, their state (no page text) */
	json_object_object_add(o, "app_metrics", port_app_json(p, 0));
	return o;
}

static struct json_object *cmd_snapshot(struct cmd_env *env, struct json_object *req)
{
	struct json_object *jp, *o, *ports;
	uint64_t mono = loop_mono_ns(), real = loop_real_ns();
	char host[256] = "";

	if (json_object_object_get_ex(req, "ports", &jp)) {
		if (!json_object_is_type(jp, json_type_array))
			return ctl_error("snapshot: \"ports\" must be an array of names");
		for (size_t i = 0; i < json_object_array_length(jp); i++) {
			struct json_object *e = json_object_array_get_idx(jp, i);

			if (!json_object_is_type(e, json_type_string))
				return ctl_error("snapshot: port names must be strings");
			if (!ports_find(env->ports, json_object_get_string(e)))
				return no_port(env, json_object_get_string(e));
		}
	} else
		jp = NULL;
	{
		struct json_object *jb;

		if (json_object_object_get_ex(req, "bundle", &jb) && json_object_get_boolean(jb)) {
			const char *names[64];
			size_t n = 0;
			char path[4096], err[512];

			for (size_t i = 0; jp && i < json_object_array_length(jp) && n < 64; i++)
				names[n++] = json_object_get_string(json_object_array_get_idx(jp, i));
			if (forensic_manual_bundle(env->forensics, names, n, path, sizeof(path),
						   err, sizeof(err)) < 0)
				return ctl_error("snapshot --bundle: %s", err);
			o = ok_reply();
			jx_add_str(o, "bundle", path);
			return o;
		}
	}
	o = ok_reply();
	gethostname(host, sizeof(host) - 1);
	jx_add_str(o, "host", host);
	jx_add_u64(o, "mono_ns", mono);
	jx_add_u64(o, "real_ns", real);
	ports = json_object_new_object();
	for (unsigned i = 0; i < ports_count(env->ports); i++) {
		struct port *p = ports_at(env->ports, i);
		int want = !jp;

		for (size_t j = 0; jp && j < json_object_array_length(jp); j++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(jp, j)),
				    port_name(p)))
				want = 1;
		if (want)
			json_object_object_add(ports, port_name(p), snapshot_port(p, mono, real));
	}
	json_object_object_add(o, "ports", ports);
	return o;
}

static struct json_object *cmd_flows(struct cmd_env *env, struct json_object *req)
{
	struct json_object *jp, *js, *o;
	const char *port = NULL;
	unsigned limit = STALL_FLOWS_LISTED, total = 0;
	int stalled = 0;

	if (json_object_object_get_ex(req, "port", &jp)) {
		if (!json_object_is_type(jp, json_type_string))
			return ctl_error("flows: \"port\" must be a string");
		port = json_object_get_string(jp);
		if (!ports_find(env->ports, port) && strcmp(port, "-"))
			return no_port(env, port);
	}
	if (json_object_object_get_ex(req, "stalled", &js))
		stalled = json_object_get_boolean(js);
	if (json_object_object_get_ex(req, "limit", &js)) {
		int64_t v = json_object_get_int64(js);

		if (!json_object_is_type(js, json_type_int) || v < 1 || v > 100000)
			return ctl_error("flows: \"limit\" must be an integer from 1 to 100000");
		limit = (unsigned)v;
	}
	o = ok_reply();
	/* bounded: a mass stall of 100k flows must not make a 40 MB reply
	 * (or hold the loop while it is built) */
	json_object_object_add(o, "flows", stall_flows_json(env->stall, port, stalled, limit,
							    &total));
	jx_add_u64(o, "flows_total", total);
	return o;
}

static const char *req_port(struct json_object *req)
{
	struct json_object *jp;

	if (!json_object_object_get_ex(req, "port", &jp) ||
	    !json_object_is_type(jp, json_type_string))
		return NULL;
	return json_object_get_string(jp);
}

static struct json_object *cmd_incident(struct cmd_env *env, struct json_object *req)
{
	struct json_object *jid, *o, *r;
	uint64_t id = 0;

	if (json_object_object_get_ex(req, "id", &jid)) {
		int64_t x = json_object_get_int64(jid);

		if (!json_object_is_type(jid, json_type_int) || x <= 0)
			return ctl_error("incident: \"id\" must be a positive integer");
		id = (uint64_t)x;
	}
	o = ok_reply();
	if (json_object_object_get_ex(req, "list", &jid) && json_object_get_boolean(jid)) {
		json_object_object_add(o, "investigations", forensic_list(env->forensics));
		return o;
	}
	r = forensic_record(env->forensics, id);
	if (!r) {
		json_object_put(o);
		return id ? ctl_error("no investigation %" PRIu64 " (kept: the last 16)", id) :
			    ctl_error("no investigation yet");
	}
	json_object_object_add(o, "record", r);
	return o;
}

static struct json_object *cmd_investigate(struct cmd_env *env, struct json_object *req)
{
	const char *port = req_port(req);
	char err[256];
	uint64_t id;
	struct json_object *o;

	if (!port)
		return ctl_error("investigate: missing \"port\"");
	if (!ports_find(env->ports, port))
		return no_port(env, port);
	if (forensic_investigate(env->forensics, port, &id, err, sizeof(err)) < 0)
		return ctl_error("investigate: %s", err);
	/* root asked: its promiscuous capture and reprogram run whatever the
	 * run_policy, and taint every open run */
	runs_intervention(env->runs, "investigate", port, loop_mono_ns(), 1,
			  "nicstallctl investigate by root");
	o = ok_reply();
	jx_add_u64(o, "id", id);
	return o;
}

static void recover_done(struct json_object *o, int performed, void *arg)
{
	uint64_t ticket = (uint64_t)(uintptr_t)arg;

	(void)performed;
	jx_add_bool(o, "ok", 1);
	ctl_reply_later(ticket, o);
}

/* The reprogram holds its state on a timer: the reply comes when it is
 * done (ctl_defer). */
static struct json_object *cmd_recover(struct cmd_env *env, struct json_object *req)
{
	const char *port = req_port(req);
	struct json_object *e;
	uint64_t ticket;

	if (!port)
		return ctl_error("recover: missing \"port\"");
	if (!ports_find(env->ports, port))
		return no_port(env, port);
	ticket = ctl_defer();
	e = forensic_recover(env->forensics, port, recover_done, (void *)(uintptr_t)ticket);
	if (!e)
		runs_intervention(env->runs, "recover", port, loop_mono_ns(), 1,
				  "nicstallctl recover by root: a reprogram");
	if (e) {
		struct json_object *x = ctl_error("recover: %s", jx_text(e, "error"));

		json_object_put(e);
		return x;
	}
	return NULL;
}

static struct json_object *cmd_reload(struct cmd_env *env, struct json_object *req)
{
	char err[512];

	(void)req;
	if (!env->reload || env->reload(env->arg, err, sizeof(err)) < 0)
		return ctl_error("%s", err);
	return ok_reply();
}

/* Each peer daemon: last contact, round trip, key state, what was refused. */
static struct json_object *cmd_peers(struct cmd_env *env, struct json_object *req)
{
	struct json_object *o = ok_reply(), *st;

	(void)req;
	if (!env->peers) {
		jx_add_str(o, "host", "");
		json_object_object_add(o, "peers", json_object_new_array());
		return o;
	}
	st = peers_status_json(env->peers);
	json_object_object_foreach(st, k, v)
		json_object_object_add(o, k, json_object_get(v));
	json_object_put(st);
	return o;
}

/* nicstallctl run: {"cmd": "run", "op": "begin"|"end"|"show"|"list",
 * "name": NAME, "labels": {K: V}, "status": {...}}. A run is a record, not
 * an action on a port: members of the group may keep them (runs.h bounds
 * them per uid). */
static struct json_object *cmd_run(struct cmd_env *env, struct json_object *req)
{
	const char *op = jx_str(req, "op"), *name = jx_str(req, "name");
	uid_t uid = ctl_peer_uid();

	if (!env->runs)
		return ctl_error("run: runs are not available");
	if (!op)
		return ctl_error("run: missing \"op\" (begin, end, show, list)");
	if (!strcmp(op, "list"))
		return runs_list(env->runs);
	if (strcmp(op, "begin") && strcmp(op, "end") && strcmp(op, "show"))
		return ctl_error("run: unknown op '%.32s' (begin, end, show, list)", op);
	if (jx_get(req, "name") && !name)
		return ctl_error("run %s: \"name\" must be a string", op);
	if (!name)
		return ctl_error("run %s: missing \"name\"", op);
	if (!strcmp(op, "show"))
		return runs_show(env->runs, name);
	if (uid == (uid_t)-1)
		return ctl_error("run %s: the client's uid is unknown", op);
	if (!strcmp(op, "begin"))
		return runs_begin(env->runs, name, jx_get(req, "labels"), uid);
	if (jx_get(req, "status") && !json_object_is_type(jx_get(req, "status"), json_type_object))
		return ctl_error("run end: \"status\" must be an object");
	return runs_end(env->runs, name, uid, jx_get(req, "status"));
}

static const struct {
	const char *name;
	int root_only;
	struct json_object *(*fn)(struct cmd_env *, struct json_object *);
} cmds[] = {
	{ "status", 0, cmd_status },
	{ "counters", 0, cmd_counters },
	{ "snapshot", 0, cmd_snapshot },        /* "bundle": root only, below */
	{ "flows", 0, cmd_flows },
	{ "incident", 0, cmd_incident },
	{ "investigate", 1, cmd_investigate },
	{ "recover", 1, cmd_recover },
	{ "reload", 1, cmd_reload },
	{ "peers", 0, cmd_peers },
	{ "run", 0, cmd_run },
};

struct json_object *cmd_dispatch(struct json_object *req, enum ctl_access access,
				 void *arg)
{
	struct json_object *jc;
	const char *name;

	if (!json_object_object_get_ex(req, "cmd", &jc) ||
	    !json_object_is_type(jc, json_type_string))
		return ctl_error("malformed request: missing \"cmd\"");
	name = json_object_get_string(jc);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, name))
			continue;
		if (cmds[i].root_only && access != CTL_ROOT)
			return ctl_error("%s: permission denied (root only)", name);
		if (cmds[i].fn == cmd_snapshot && access != CTL_ROOT &&
		    json_object_object_get_ex(req, "bundle", &jc) && json_object_get_boolean(jc))
			return ctl_error("snapshot --bundle: permission denied (root only)");
		return cmds[i].fn(arg, req);
	}
	return ctl_error("unknown command '%.64s'", name);
}
