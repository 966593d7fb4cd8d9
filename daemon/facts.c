/* facts: investigation record -> rule facts. */
#include "daemon/facts.h"
#include "daemon/conf.h"
#include "daemon/daemon.h"
#include "collectors/ident.h"
#include "daemon/port.h"
#include "daemon/recorder.h"
#include "lib/util.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (o)
		json_object_object_get_ex(o, k, &v);
	return v;
}

static uint64_t u64(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return v ? (uint64_t)json_object_get_uint64(v) : 0;
}

const char *facts_counter_name(const char *source, const char *name, char *buf, size_t len)
{
	if (!strcmp(source, "netdev")) {
		snprintf(buf, len, "netdev/%s", name);
		return buf;
	}
	return name;
}

/* The recorder sample of port p taken last at or before t (NULL: none). */
static const struct rec_sample *sample_before(struct port *p, uint64_t t, unsigned *idx)
{
	unsigned f, l;

	if (!rec_window(p->rec, 0, t, &f, &l))
		return NULL;
	*idx = l;
	return rec_get(p->rec, l);
}

/* Counter deltas from recorder sample s to the snapshot values snap
 * ({source: {name: value}}), merged into one name space. */
static struct json_object *stall_deltas(struct port *p, const struct rec_sample *s,
					struct json_object *snap)
{
	struct json_object *out = json_object_new_object();

	for (unsigned i = 0; i < p->nsrc; i++) {
		const struct rec_part *pt = &s->part[i];
		struct json_object *vals;
		char nb[320];

		if (!pt->lay || !p->src[i].s.ops)
			continue;
		vals = get(snap, p->src[i].s.ops->name);
		if (!vals || get(vals, "error"))
			continue;
		for (unsigned k = 0; k < pt->lay->n; k++) {
			struct json_object *v = get(vals, pt->lay->names[k]);

			if (!v)
				continue;
			json_object_object_add(out, facts_counter_name(p->src[i].s.ops->name,
					       pt->lay->names[k], nb, sizeof(nb)),
				json_object_new_uint64(cnt_delta(pt->vals[k],
					(uint64_t)json_object_get_uint64(v), pt->lay->width[k], NULL)));
		}
	}
	return out;
}

struct bctx {
	struct json_object *out;
	const char *src;
};

static void base_cb(const char *name, uint64_t delta, unsigned flags, uint64_t last, void *arg)
{
	struct bctx *b = arg;
	char nb[320];

	(void)flags;
	(void)last;
	json_object_object_add(b->out, facts_counter_name(b->src, name, nb, sizeof(nb)),
			       json_object_new_uint64(delta));
}

static struct json_object *period(double span, struct json_object *counters)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "span_s", json_object_new_double(span));
	json_object_object_add(o, "counters", counters);
	return o;
}

static struct json_object *merged(struct json_object *bysrc)
{
	struct json_object *out = json_object_new_object();
	char nb[320];

	json_object_object_foreach(bysrc, src, vals) {
		if (!json_object_is_type(vals, json_type_object))
			continue;
		json_object_object_foreach(vals, name, v)
			json_object_object_add(out, facts_counter_name(src, name, nb, sizeof(nb)),
					       json_object_get(v));
	}
	return out;
}

static void port_facts(struct daemon *d, struct json_object *rec, const char *name,
		       uint64_t stall_ns, struct json_object *ports)
{
	struct port *p = daemon_port(d, name);
	struct json_object *po = json_object_new_object(), *snap, *link, *win;
	const struct rec_sample *s;
	unsigned idx = 0;
	uint64_t snap_ns = u64(rec, "opened_mono_ns");

	if (!p)
		return;
	json_object_object_add(po, "profile", json_object_new_string(conf_profile_name(p->profile)));
	snap = get(get(get(rec, "snapshot"), name), "counters");
	link = get(get(get(rec, "snapshot"), name), "link");
	json_object_object_add(po, "driver", json_object_new_string(p->ident->driver));
	json_object_object_add(po, "firmware", json_object_new_string(p->ident->fw_version));
	json_object_object_add(po, "psid", json_object_new_string(p->ident->psid));
	if (link && get(link, "up"))
		json_object_object_add(po, "link_up", json_object_new_boolean(
			json_object_get_boolean(get(link, "up")) &&
			json_object_get_boolean(get(link, "running"))));
	/* across the stall: last sample before it began -> snapshot at t0 */
	s = snap ? sample_before(p, stall_ns, &idx) : NULL;
	if (s)
		json_object_object_add(po, "stall", period((double)(snap_ns - s->mono_ns) / 1e9,
							   stall_deltas(p, s, snap)));
	/* the healthy period before the stall */
	if (s && idx > 0) {
		unsigned f, l;
		uint64_t from = s->mono_ns > FACTS_BASELINE_NS ? s->mono_ns - FACTS_BASELINE_NS : 0;

		if (rec_window(p->rec, from, s->mono_ns, &f, &l) >= 2) {
			struct json_object *c = json_object_new_object();

			for (unsigned i = 0; i < p->nsrc; i++) {
				struct bctx b = { c, p->src[i].s.ops ? p->src[i].s.ops->name : "" };

				if (p->src[i].s.ops)
					rec_deltas(p->rec, i, f, l, base_cb, &b);
			}
			json_object_object_add(po, "baseline", period(
				(double)(rec_get(p->rec, l)->mono_ns - rec_get(p->rec, f)->mono_ns) / 1e9, c));
		}
	}
	win = get(get(rec, "window"), name);
	if (win)
		json_object_object_add(po, "window", period(
			json_object_get_double(get(get(rec, "window"), "span_s")),
			merged(get(win, "deltas"))));
	json_object_object_add(ports, name, po);
}

struct json_object *facts_build(struct daemon *d, struct json_object *rec)
{
	struct json_object *f = json_object_new_object(), *ports = json_object_new_object();
	struct json_object *inc = get(rec, "incident"), *fl = get(inc, "flows");
	struct json_object *flows = json_object_new_object(), *held = json_object_new_object();
	struct json_object *list = json_object_new_array(), *th = json_object_new_array();
	struct json_object *pings = json_object_new_array(), *caps = json_object_new_array();
	uint64_t stall_ns = u64(rec, "opened_mono_ns"), hu = 0, hr = 0, hs = 0;
	const char *port = json_object_get_string(get(rec, "port"));
	size_t n = fl ? json_object_array_length(fl) : 0;

	json_object_object_add(f, "schema", json_object_new_int(1));
	json_object_object_add(f, "port", json_object_new_string(port ? port : ""));
	/* the stall began when the first flow started waiting */
	for (size_t i = 0; i < n; i++) {
		uint64_t t = u64(json_object_array_get_idx(fl, i), "stalled_at_mono_ns");

		if (t && t < stall_ns)
			stall_ns = t;
	}
	json_object_object_foreach(get(rec, "snapshot"), pname, pv) {
		if (json_object_is_type(pv, json_type_object) && get(pv, "counters"))
			port_facts(d, rec, pname, stall_ns, ports);
	}
	json_object_object_add(f, "ports", ports);

	for (size_t i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(fl, i), *e = json_object_new_object();

		/* kernel TCP bytes not yet sent behind unacknowledged ones wait
		 * for the network, not for the engine: not held */
		uint64_t unsent = u64(x, "inflight") ? 0 : u64(x, "unsent");

		hu += unsent;
		hr += u64(x, "unread");
		hs += u64(x, "staged");
		json_object_object_add(e, "tuple", json_object_get(get(x, "tuple")));
		json_object_object_add(e, "src", json_object_get(get(x, "source")));
		json_object_object_add(e, "waited_ms", json_object_new_double(
			(double)(u64(rec, "opened_mono_ns") - u64(x, "stalled_at_mono_ns")) / 1e6));
		json_object_object_add(e, "unsent", json_object_new_uint64(unsent));
		if (u64(x, "inflight"))
			json_object_object_add(e, "inflight", json_object_new_uint64(u64(x, "inflight")));
		json_object_object_add(e, "unread", json_object_new_uint64(u64(x, "unread")));
		json_object_object_add(e, "staged", json_object_new_uint64(u64(x, "staged")));
		json_object_array_add(list, e);
	}
	json_object_object_add(held, "unsent", json_object_new_uint64(hu));
	json_object_object_add(held, "unread", json_object_new_uint64(hr));
	json_object_object_add(held, "staged", json_object_new_uint64(hs));
	json_object_object_add(flows, "stalled", json_object_new_int((int)n));
	json_object_object_add(flows, "progressing", json_object_get(get(inc, "siblings_progressing")));
	json_object_object_add(flows, "held", held);
	json_object_object_add(flows, "list", list);
	if (inc)
		json_object_object_add(f, "flows", flows);
	else
		json_object_put(flows);

	/* threads: the second reading when there is one */
	for (size_t i = 0; get(rec, "threads") && i < json_object_array_length(get(rec, "threads")); i++) {
		struct json_object *pr = json_object_array_get_idx(get(rec, "threads"), i);
		struct json_object *ts = get(pr, "threads");

		for (size_t k = 0; ts && k < json_object_array_length(ts); k++) {
			struct json_object *t = json_object_array_get_idx(ts, k), *e = json_object_new_object();
			struct json_object *rd = get(t, "second") ? get(t, "second") : get(t, "first");
			struct json_object *st = get(rd, "stack");
			char stack[4096] = "";
			size_t off = 0;

			for (size_t j = 0; st && json_object_is_type(st, json_type_array) &&
			     j < json_object_array_length(st) && off < sizeof(stack) - 1; j++)
				off += (size_t)snprintf(stack + off, sizeof(stack) - off, "%s\n",
					json_object_get_string(json_object_array_get_idx(st, j)));
			json_object_object_add(e, "pid", json_object_get(get(pr, "pid")));
			json_object_object_add(e, "tid", json_object_get(get(t, "tid")));
			json_object_object_add(e, "comm", json_object_get(get(t, "comm")));
			json_object_object_add(e, "state", json_object_get(get(rd, "state")));
			json_object_object_add(e, "wchan", json_object_get(get(rd, "wchan")));
			json_object_object_add(e, "stack", json_object_new_string(stack));
			json_object_object_add(e, "syscall", json_object_get(get(rd, "syscall")));
			json_object_object_add(e, "vcsw_rate", json_object_get(get(t, "voluntary_switches_per_s")));
			json_object_object_add(e, "nvcsw_rate", json_object_get(get(t, "nonvoluntary_switches_per_s")));
			json_object_array_add(th, e);
		}
	}
	json_object_object_add(f, "threads", th);

	for (size_t i = 0; get(rec, "pings") && i < json_object_array_length(get(rec, "pings")); i++) {
		struct json_object *x = json_object_array_get_idx(get(rec, "pings"), i);
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "from", json_object_get(get(x, "from")));
		json_object_object_add(e, "to", json_object_get(get(x, "to")));
		json_object_object_add(e, "sent", json_object_get(get(x, "sent")));
		json_object_object_add(e, "received", json_object_get(get(x, "received")));
		json_object_array_add(pings, e);
	}
	if (get(rec, "pings"))
		json_object_object_add(f, "pings", pings);
	else
		json_object_put(pings);
	for (size_t i = 0; get(rec, "captures") && i < json_object_array_length(get(rec, "captures")); i++) {
		struct json_object *x = json_object_array_get_idx(get(rec, "captures"), i);
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "port", json_object_get(get(x, "port")));
		json_object_object_add(e, "promisc", json_object_get(get(x, "promisc_requested")));
		json_object_object_add(e, "frames", json_object_get(get(x, "packets")));
		json_object_object_add(e, "transition", json_object_get(get(x, "transition")));
		json_object_array_add(caps, e);
	}
	json_object_object_add(f, "captures", caps);
	if (get(rec, "release"))
		json_object_object_add(f, "release", json_object_get(get(rec, "release")));
	return f;
}
