/* cmd: control commands over the daemon context. */
#include "daemon/cmd.h"
#include "daemon/conf.h"
#include "daemon/daemon.h"
#include "collectors/ident.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "daemon/port.h"
#include "daemon/recorder.h"
#include "daemon/stall.h"
#include "daemon/forensic.h"
#include "rules/rules.h"
#include "lib/util.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct json_object *ok_reply(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v ? v : ""));
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static const char *src_name(const struct port_src *ps)
{
	return ps->s.ops ? ps->s.ops->name : NULL;
}

static struct json_object *port_status(const struct daemon *d, struct port *p,
				       uint64_t now)
{
	struct json_object *o = json_object_new_object();
	struct json_object *srcs = json_object_new_array();
	struct json_object *rec = json_object_new_object();
	unsigned n = rec_count(p->rec);

	add_str(o, "name", p->conf.name);
	add_str(o, "interface", p->conf.ifname);
	add_str(o, "netns", p->conf.netns);
	add_str(o, "state", port_state_name(p->state));
	if (p->state == PORT_DOWN)
		add_str(o, "reason", p->reason);
	json_object_object_add(o, "since_s",
		json_object_new_double((double)(now - p->since_ns) / 1e9));
	json_object_object_add(o, "ifindex", json_object_new_int(p->ifindex));
	add_str(o, "profile", conf_profile_name(p->profile));
	add_str(o, "driver", p->ident->driver);
	add_str(o, "firmware", p->ident->fw_version);
	add_str(o, "psid", p->ident->psid);
	add_str(o, "bus_info", p->ident->bus_info);
	add_str(o, "rdma_device", p->rdma_dev);
	if (p->rdma_dev[0])
		json_object_object_add(o, "rdma_port", json_object_new_int((int)p->rdma_port));
	for (unsigned i = 0; i < p->nsrc; i++) {
		const struct port_src *ps = &p->src[i];
		struct json_object *s;

		if (!src_name(ps))
			continue;
		s = json_object_new_object();
		add_str(s, "name", src_name(ps));
		add_str(s, "state", !ps->open ? "unavailable" : ps->failed ? "error" : "ok");
		add_u64(s, "counters", ps->lay ? ps->lay->n : 0);
		add_u64(s, "reads", ps->reads);
		add_u64(s, "errors", ps->errors);
		if (ps->why[0])
			add_str(s, "error", ps->why);
		json_object_array_add(srcs, s);
	}
	json_object_object_add(o, "sources", srcs);
	add_u64(o, "samples", p->samples);
	add_u64(rec, "samples", n);
	add_u64(rec, "capacity", rec_capacity(p->rec));
	add_u64(rec, "bytes", rec_bytes(p->rec));
	json_object_object_add(rec, "span_s", json_object_new_double(n > 1 ?
		(double)(rec_latest(p->rec)->mono_ns - rec_get(p->rec, 0)->mono_ns) / 1e9 : 0));
	json_object_object_add(o, "recorder", rec);
	(void)d;
	return o;
}

static struct json_object *cmd_status(struct daemon *d, struct json_object *req)
{
	struct json_object *o = ok_reply(), *ports = json_object_new_array();
	uint64_t now = loop_mono_ns(), mem = 0;
	char host[256] = "";

	(void)req;
	gethostname(host, sizeof(host) - 1);
	add_str(o, "version", NICSTALL_VERSION);
	add_str(o, "host", host);
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "uptime_s",
			       json_object_new_double((double)(now - d->start_mono_ns) / 1e9));
	add_str(o, "config", d->conf_path);
	json_object_object_add(o, "interval_ms",
			       json_object_new_double((double)d->conf->interval_ns / 1e6));
	json_object_object_add(o, "horizon_s",
			       json_object_new_double((double)d->conf->horizon_ns / 1e9));
	add_str(o, "state_dir", d->conf->state_dir);
	add_str(o, "sysfs_root", d->sysfs_root);
	add_u64(o, "reloads", d->reloads);
	add_u64(o, "rules", d->rules ? rules_count(d->rules) : 0);
	if (d->last_reload_error[0])
		add_str(o, "last_reload_error", d->last_reload_error);
	for (unsigned i = 0; i < d->nports; i++) {
		json_object_array_add(ports, port_status(d, d->ports[i], now));
		mem += rec_bytes(d->ports[i]->rec);
	}
	json_object_object_add(o, "ports", ports);
	add_u64(o, "recorder_bytes", mem);
	if (d->stall) {
		json_object_object_add(o, "incidents", stall_incidents_json(d->stall));
		json_object_object_add(o, "flow_sources", stall_engines_json(d->stall));
	}
	return o;
}

static struct json_object *no_port(const struct daemon *d, const char *name)
{
	char list[512] = "";
	size_t off = 0;

	for (unsigned i = 0; i < d->nports && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", d->ports[i]->conf.name);
	return ctl_error("no port '%s' (configured: %s)", name,
			 d->nports ? list : "none");
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
	add_u64(c, "delta", delta);
	add_u64(c, "value", last);
	if (flags & CNT_WRAPPED)
		json_object_object_add(c, "wrapped", json_object_new_boolean(1));
	if (flags & CNT_RESET)
		json_object_object_add(c, "reset", json_object_new_boolean(1));
	json_object_object_add(dc->obj, name, c);
}

static struct json_object *cmd_counters(struct daemon *d, struct json_object *req)
{
	struct json_object *jp, *jw, *jc, *o, *srcs;
	const struct rec_sample *last;
	const char *name;
	double window = 0;
	int changed = 0;
	struct port *p;

	if (!json_object_object_get_ex(req, "port", &jp) ||
	    !json_object_is_type(jp, json_type_string))
		return ctl_error("counters: missing \"port\"");
	name = json_object_get_string(jp);
	p = daemon_port(d, name);
	if (!p)
		return no_port(d, name);
	if (json_object_object_get_ex(req, "window", &jw)) {
		window = json_object_get_double(jw);
		if (!(window >= 0) || window > 86400)
			return ctl_error("counters: window must be 0..86400 seconds");
	}
	if (json_object_object_get_ex(req, "changed", &jc))
		changed = json_object_get_boolean(jc);
	last = rec_latest(p->rec);
	if (!last)
		return ctl_error("port %s has no samples yet (%s)", name,
				 p->state == PORT_DOWN ? p->reason : "starting");
	o = ok_reply();
	srcs = json_object_new_object();
	add_str(o, "port", name);
	add_str(o, "state", port_state_name(p->state));
	add_u64(o, "mono_ns", last->mono_ns);
	add_u64(o, "real_ns", last->real_ns);
	if (window > 0 || changed) {
		unsigned first, lastidx, n;
		uint64_t from;

		if (window > 0) {
			uint64_t w = (uint64_t)llround(window * 1e9);

			from = last->mono_ns > w ? last->mono_ns - w : 0;
			n = rec_window(p->rec, from, last->mono_ns, &first, &lastidx);
		} else {
			n = rec_count(p->rec) >= 2 ? 2 : 1;
			lastidx = rec_count(p->rec) - 1;
			first = lastidx + 1 - n;
		}
		if (n < 2) {
			json_object_put(o);
			json_object_put(srcs);
			return ctl_error("port %s: fewer than two samples in the window", name);
		}
		json_object_object_add(o, "from_mono_ns",
				       json_object_new_uint64(rec_get(p->rec, first)->mono_ns));
		json_object_object_add(o, "span_s", json_object_new_double(
			(double)(last->mono_ns - rec_get(p->rec, first)->mono_ns) / 1e9));
		for (unsigned s = 0; s < p->nsrc; s++) {
			struct delta_ctx dc = { json_object_new_object(), changed };

			if (!src_name(&p->src[s]) || !last->part[s].lay) {
				json_object_put(dc.obj);
				continue;
			}
			rec_deltas(p->rec, s, first, lastidx, delta_cb, &dc);
			json_object_object_add(srcs, src_name(&p->src[s]), dc.obj);
		}
		add_str(o, "mode", "deltas");
	} else {
		for (unsigned s = 0; s < p->nsrc; s++) {
			const struct rec_part *pt = &last->part[s];
			struct json_object *vals;

			if (!src_name(&p->src[s]) || !pt->lay)
				continue;
			vals = json_object_new_object();
			for (unsigned i = 0; i < pt->lay->n; i++)
				add_u64(vals, pt->lay->names[i], pt->vals[i]);
			json_object_object_add(srcs, src_name(&p->src[s]), vals);
		}
		add_str(o, "mode", "values");
	}
	json_object_object_add(o, "sources", srcs);
	return o;
}

static struct json_object *snapshot_port(struct port *p, uint64_t mono, uint64_t real)
{
	struct json_object *o = json_object_new_object(), *srcs, *id;

	port_sample(p, mono, real, 0);
	add_str(o, "interface", p->conf.ifname);
	add_str(o, "netns", p->conf.netns);
	add_str(o, "state", port_state_name(p->state));
	if (p->state == PORT_DOWN)
		add_str(o, "reason", p->reason);
	add_str(o, "profile", conf_profile_name(p->profile));
	id = json_object_new_object();
	ident_to_json(p->ident, id);
	json_object_object_add(o, "identity", id);
	srcs = json_object_new_object();
	for (unsigned s = 0; p->state == PORT_UP && s < p->nsrc; s++) {
		const struct port_src *ps = &p->src[s];
		struct json_object *vals;

		if (!ps->open)
			continue;
		if (ps->failed || !ps->lay || !ps->vals) {
			struct json_object *e = json_object_new_object();

			add_str(e, "error", ps->why);
			json_object_object_add(srcs, src_name(ps), e);
			continue;
		}
		vals = json_object_new_object();
		for (unsigned i = 0; i < ps->lay->n; i++)
			add_u64(vals, ps->lay->names[i], ps->vals[i]);
		json_object_object_add(srcs, src_name(ps), vals);
	}
	json_object_object_add(o, "sources", srcs);
	return o;
}

static struct json_object *cmd_snapshot(struct daemon *d, struct json_object *req)
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
			if (!daemon_port(d, json_object_get_string(e)))
				return no_port(d, json_object_get_string(e));
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
			if (forensic_manual_bundle(d->forensics, names, n, path, sizeof(path),
						   err, sizeof(err)) < 0)
				return ctl_error("snapshot --bundle: %s", err);
			o = ok_reply();
			add_str(o, "bundle", path);
			return o;
		}
	}
	o = ok_reply();
	gethostname(host, sizeof(host) - 1);
	add_str(o, "host", host);
	add_u64(o, "mono_ns", mono);
	add_u64(o, "real_ns", real);
	ports = json_object_new_object();
	for (unsigned i = 0; i < d->nports; i++) {
		struct port *p = d->ports[i];
		int want = !jp;

		for (size_t j = 0; jp && j < json_object_array_length(jp); j++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(jp, j)),
				    p->conf.name))
				want = 1;
		if (want)
			json_object_object_add(ports, p->conf.name, snapshot_port(p, mono, real));
	}
	json_object_object_add(o, "ports", ports);
	return o;
}

static struct json_object *cmd_flows(struct daemon *d, struct json_object *req)
{
	struct json_object *jp, *js, *o;
	const char *port = NULL;
	int stalled = 0;

	if (json_object_object_get_ex(req, "port", &jp)) {
		if (!json_object_is_type(jp, json_type_string))
			return ctl_error("flows: \"port\" must be a string");
		port = json_object_get_string(jp);
		if (!daemon_port(d, port) && strcmp(port, "-"))
			return no_port(d, port);
	}
	if (json_object_object_get_ex(req, "stalled", &js))
		stalled = json_object_get_boolean(js);
	o = ok_reply();
	json_object_object_add(o, "flows", stall_flows_json(d->stall, port, stalled));
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

static struct json_object *cmd_incident(struct daemon *d, struct json_object *req)
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
		json_object_object_add(o, "investigations", forensic_list(d->forensics));
		return o;
	}
	r = forensic_record(d->forensics, id);
	if (!r) {
		json_object_put(o);
		return id ? ctl_error("no investigation %" PRIu64 " (kept: the last 16)", id) :
			    ctl_error("no investigation yet");
	}
	json_object_object_add(o, "record", r);
	return o;
}

static struct json_object *cmd_investigate(struct daemon *d, struct json_object *req)
{
	const char *port = req_port(req);
	char err[256];
	uint64_t id;
	struct json_object *o;

	if (!port)
		return ctl_error("investigate: missing \"port\"");
	if (!daemon_port(d, port))
		return no_port(d, port);
	if (forensic_investigate(d->forensics, port, &id, err, sizeof(err)) < 0)
		return ctl_error("investigate: %s", err);
	o = ok_reply();
	add_u64(o, "id", id);
	return o;
}

static struct json_object *cmd_recover(struct daemon *d, struct json_object *req)
{
	const char *port = req_port(req);
	struct json_object *r, *e;

	if (!port)
		return ctl_error("recover: missing \"port\"");
	if (!daemon_port(d, port))
		return no_port(d, port);
	r = forensic_recover(d->forensics, port);
	if (json_object_object_get_ex(r, "error", &e)) {
		struct json_object *x = ctl_error("recover: %s", json_object_get_string(e));

		json_object_put(r);
		return x;
	}
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	return r;
}

static struct json_object *cmd_reload(struct daemon *d, struct json_object *req)
{
	char err[512];

	(void)req;
	if (daemon_reload(d, err, sizeof(err)) < 0)
		return ctl_error("%s", err);
	return ok_reply();
}

static const struct {
	const char *name;
	int root_only;
	struct json_object *(*fn)(struct daemon *, struct json_object *);
} cmds[] = {
	{ "status", 0, cmd_status },
	{ "counters", 0, cmd_counters },
	{ "snapshot", 0, cmd_snapshot },        /* "bundle": root only, below */
	{ "flows", 0, cmd_flows },
	{ "incident", 0, cmd_incident },
	{ "investigate", 1, cmd_investigate },
	{ "recover", 1, cmd_recover },
	{ "reload", 1, cmd_reload },
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
