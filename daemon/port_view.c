/* port_view: what the rest of the daemon reads of a port: its accessors,
 * its counters, status, devlink health, link and kernel-log views, its
 * host and application sources' JSON (port.h; port_int.h). */
#include "daemon/port.h"
#include "daemon/port_int.h"
#include "collectors/counters/ident.h"
#include "collectors/counters/src_app.h"
#include "collectors/counters/src_host.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

struct json_object *port_kmsg(const struct port *p)
{
	return p->kmsg;
}

struct json_object *port_app_json(const struct port *p, int with_text)
{
	struct port_src *ps = (struct port_src *)&p->src[SLOT_APP];
	struct json_object *o;

	if (p->state == PORT_UP && ps->open)
		return src_app_json(port_own_src(ps), with_text, PORT_APP_TEXT_MAX);
	o = json_object_new_object();
	jx_add_str(o, "note", "no application metrics");
	jx_add_str(o, "reason", p->state != PORT_UP ? "the port is down" :
		   ps->why[0] ? ps->why : "not opened");
	return o;
}

struct json_object *port_host_json(const struct port *p)
{
	struct port_src *ps = (struct port_src *)&p->src[SLOT_HOST];
	struct json_object *o;

	if (p->state == PORT_UP && ps->open)
		return src_host_json(port_own_src(ps));
	o = json_object_new_object();
	jx_add_str(o, "note", "no host resources");
	jx_add_str(o, "reason", p->state != PORT_UP ? "the port is down" :
		   ps->why[0] ? ps->why : "not opened");
	return o;
}

/* ---- accessors ---- */

const struct port_conf *port_conf(const struct port *p) { return &p->conf; }
const char *port_name(const struct port *p) { return p->conf.name; }
enum port_state port_state(const struct port *p) { return p->state; }
const char *port_reason(const struct port *p) { return p->state == PORT_DOWN ? p->reason : ""; }
int port_nsfd(const struct port *p) { return p->nsfd; }
int port_ifindex(const struct port *p) { return p->ifindex; }
enum profile port_profile(const struct port *p) { return p->profile; }
const struct ident *port_ident(const struct port *p) { return p->ident; }
struct recorder *port_recorder(const struct port *p) { return p->rec; }
unsigned long port_serial(const struct port *p) { return p->serial; }
unsigned long port_addr_gen(const struct port *p) { return p->addr_gen; }
uint64_t port_samples(const struct port *p) { return p->samples; }
uint64_t port_sample_cost_ns(const struct port *p) { return p->sample_cost_ns; }
uint64_t port_sample_cost_total_ns(const struct port *p) { return p->sample_cost_total_ns; }
unsigned port_nsrc(const struct port *p) { return p->nsrc; }

const char *port_rdma_dev(const struct port *p, unsigned *rdma_port)
{
	if (rdma_port)
		*rdma_port = p->rdma_port;
	return p->rdma_dev;
}

void port_set_disturbed(struct port *p, uint64_t mono_ns)
{
	p->disturbed_ns = mono_ns;
}

uint64_t port_disturbed(const struct port *p)
{
	return p->disturbed_ns;
}

const char *port_src_name(const struct port *p, unsigned i)
{
	return i < p->nsrc && p->src[i].s.ops ? p->src[i].s.ops->name : NULL;
}

int port_src_values(const struct port *p, unsigned i, const struct clayout **lay,
		    const uint64_t **vals, const char **why)
{
	const struct port_src *ps = i < p->nsrc ? &p->src[i] : NULL;

	if (why)
		*why = ps ? ps->why : "no such source";
	if (!ps || !ps->open || ps->failed || !ps->lay || !ps->vals)
		return -1;
	*lay = ps->lay;
	*vals = ps->vals;
	return 0;
}

struct json_object *port_counters_json(const struct port *p, int with_errors)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; p->state == PORT_UP && i < p->nsrc; i++) {
		const struct port_src *ps = &p->src[i];
		struct json_object *c = json_object_new_object();

		if (!ps->open) {
			json_object_put(c);
			continue;
		}
		if (ps->failed || !ps->lay || !ps->vals) {
			if (!with_errors) {
				json_object_put(c);
				continue;
			}
			jx_add_str(c, "error", ps->why);
		} else {
			for (unsigned k = 0; k < ps->lay->n; k++)
				jx_add_u64(c, ps->lay->names[k], ps->vals[k]);
		}
		json_object_object_add(o, ps->s.ops->name, c);
	}
	return o;
}

struct json_object *port_status_json(const struct port *p, uint64_t now)
{
	struct json_object *o = json_object_new_object();
	struct json_object *srcs = json_object_new_array();
	struct json_object *rec = json_object_new_object();
	unsigned n = rec_count(p->rec);

	jx_add_str(o, "name", p->conf.name);
	jx_add_str(o, "interface", p->conf.ifname);
	jx_add_str(o, "netns", p->conf.netns);
	jx_add_str(o, "state", port_state_name(p->state));
	if (p->state == PORT_DOWN)
		jx_add_str(o, "reason", p->reason);
	jx_add_double(o, "since_s", (double)(now - p->since_ns) / 1e9);
	jx_add_int(o, "ifindex", p->ifindex);
	jx_add_str(o, "profile", conf_profile_name(p->profile));
	jx_add_str(o, "driver", p->ident->driver);
	jx_add_str(o, "firmware", p->ident->fw_version);
	jx_add_str(o, "psid", p->ident->psid);
	jx_add_str(o, "bus_info", p->ident->bus_info);
	jx_add_str(o, "rdma_device", p->rdma_dev);
	if (p->rdma_dev[0])
		jx_add_int(o, "rdma_port", p->rdma_port);
	for (unsigned i = 0; i < p->nsrc; i++) {
		const struct port_src *ps = &p->src[i];
		struct json_object *s;

		if (!ps->s.ops)
			continue;
		s = json_object_new_object();
		jx_add_str(s, "name", ps->s.ops->name);
		jx_add_str(s, "state", !ps->open ? "unavailable" : ps->failed ? "error" : "ok");
		jx_add_u64(s, "counters", ps->lay ? ps->lay->n : 0);
		jx_add_u64(s, "reads", ps->reads);
		jx_add_u64(s, "errors", ps->errors);
		cost_json(&ps->cost, now, s);
		if (ps->why[0])
			jx_add_str(s, "error", ps->why);
		if (ps->open && src_shared_refs((struct src *)&ps->s))
			jx_add_u64(s, "shared_by_ports", src_shared_refs((struct src *)&ps->s));
		if (ps->open && p->kinds[i].json)
			p->kinds[i].json(p, ps, s);
		json_object_array_add(srcs, s);
	}
	json_object_object_add(o, "sources", srcs);
	jx_add_u64(o, "samples", p->samples);
	jx_add_u64(rec, "samples", n);
	jx_add_u64(rec, "capacity", rec_capacity(p->rec));
	jx_add_u64(rec, "bytes", rec_bytes(p->rec));
	cost_json(&p->rec_cost, now, rec);
	jx_add_double(rec, "span_s", n > 1 ?
		(double)(rec_latest(p->rec)->mono_ns - rec_get(p->rec, 0)->mono_ns) / 1e9 : 0);
	json_object_object_add(o, "recorder", rec);
	return o;
}

/* ---- devlink health for the evidence and the snapshot ---- */

struct src *port_devlink_src(struct port *p)
{
	return p->state == PORT_UP && p->src[SLOT_DEVLINK].open ? &p->src[SLOT_DEVLINK].s : NULL;
}

void port_devlink_refresh(struct port *p, const char *const *diagnose)
{
	struct src *s = port_devlink_src(p);

	if (s)
		src_devlink_health_refresh(s, diagnose);
}

struct json_object *port_devlink_json(const struct port *p)
{
	const struct port_src *ps = &p->src[SLOT_DEVLINK];
	const struct dlh_state *st = p->state == PORT_UP && ps->open ?
				     src_devlink_health_state(&ps->s) : NULL;
	struct json_object *o = json_object_new_object();

	if (st && dlh_state_to_json(st, o) == 0) {
		if (ps->failed)
			jx_add_str(o, "error", ps->why);
		return o;
	}
	jx_add_str(o, "note", "no devlink health");
	jx_add_str(o, "reason", p->state != PORT_UP ? "the port is down" :
		   ps->open ? (ps->why[0] ? ps->why : "not read yet") :
		   ps->why[0] ? ps->why : "not opened");
	return o;
}

struct json_object *port_devlink_events_json(const struct port *p, uint64_t since_mono_ns)
{
	struct json_object *a = json_object_new_array();
	uint64_t first = p->ndlev > DEVLINK_EVENTS ? p->ndlev - DEVLINK_EVENTS : 0;
	char hb[160];

	for (uint64_t i = first; i < p->ndlev; i++) {
		const struct dl_event *e = &p->dlev[i % DEVLINK_EVENTS];
		struct json_object *o;

		if (e->mono_ns < since_mono_ns)
			continue;
		o = json_object_new_object();
		jx_add_u64(o, "time_ns", e->real_ns);
		jx_add_u64(o, "mono_ns", e->mono_ns);
		jx_add_str(o, "port", p->conf.name);
		jx_add_str(o, "reporter", e->rep.name);
		jx_add_str(o, "handle", dlh_handle_str(&e->rep.h, hb, sizeof(hb)));
		jx_add_str(o, "state", e->rep.state ? "error" : "healthy");
		jx_add_u64(o, "error_count", e->rep.error_count);
		jx_add_u64(o, "recover_count", e->rep.recover_count);
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *port_link_events_json(const struct port *p, uint64_t since_mono_ns)
{
	struct json_object *a = json_object_new_array();
	unsigned n = p->nlev < PORT_LINK_EVENTS ? p->nlev : PORT_LINK_EVENTS;

	for (unsigned i = p->nlev - n; i < p->nlev; i++) {
		const unsigned k = i % PORT_LINK_EVENTS;
		struct json_object *e;

		if (p->lev[k].mono_ns < since_mono_ns)
			continue;
		e = json_object_new_object();
		jx_add_u64(e, "mono_ns", p->lev[k].mono_ns);
		jx_add_bool(e, "up", p->lev[k].flags & IFF_UP);
		jx_add_bool(e, "running", p->lev[k].flags & IFF_RUNNING);
		json_object_array_add(a, e);
	}
	return a;
}

int port_devlink_events_lost(const struct port *p)
{
	return p->dlev_lost;
}
