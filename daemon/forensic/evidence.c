/* evidence: port readings as JSON for records and bundles. */
#include "daemon/forensic/evidence.h"
#include "collectors/counters/ident.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/rtnl.h"

#include <net/if.h>
#include <stdlib.h>
#include <string.h>

void evid_counters_free(struct evid_counters *s)
{
	for (unsigned i = 0; i < REC_MAX_SRC; i++) {
		clayout_unref(s->lay[i]);
		free(s->vals[i]);
		s->lay[i] = NULL;
		s->vals[i] = NULL;
	}
}

void evid_counters_take(struct evid_counters *s, const struct port *p)
{
	evid_counters_free(s);
	for (unsigned i = 0; i < port_nsrc(p) && i < REC_MAX_SRC; i++) {
		const struct clayout *lay;
		const uint64_t *vals;

		if (port_src_values(p, i, &lay, &vals, NULL) < 0)
			continue;
		s->vals[i] = malloc(lay->n * sizeof(uint64_t) + 1);
		if (!s->vals[i])
			continue;
		memcpy(s->vals[i], vals, lay->n * sizeof(uint64_t));
		s->lay[i] = clayout_ref((struct clayout *)lay);
	}
}

int evid_counters_any(const struct evid_counters *s)
{
	for (unsigned i = 0; i < REC_MAX_SRC; i++)
		if (s->lay[i])
			return 1;
	return 0;
}

struct json_object *evid_deltas_json(const struct port *p, const struct evid_counters *a,
				     const struct evid_counters *b, int all)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < REC_MAX_SRC; i++) {
		struct json_object *c;

		int *map;

		if (!a->lay[i] || !b->lay[i])
			continue;
		/* by a map of the names, not a search per counter: a layout
		 * that changed (an application's series) is not quadratic */
		if (!(map = clayout_map_new(a->lay[i], b->lay[i])))
			continue;
		c = json_object_new_object();
		for (unsigned k = 0; k < b->lay[i]->n; k++) {
			int j = map[k];
			uint64_t d;

			if (j < 0)
				continue;
			d = cnt_delta(a->vals[i][j], b->vals[i][k], b->lay[i]->width[k], NULL);
			if (d || all)
				jx_add_u64(c, b->lay[i]->names[k], d);
		}
		free(map);
		json_object_object_add(o, port_src_name(p, i) ? port_src_name(p, i) : "?", c);
	}
	return o;
}

struct json_object *evid_link_json(const struct port *p)
{
	struct json_object *o = json_object_new_object();
	struct nl_link l;
	char err[256];

	if (nl_link_get(port_nsfd(p), port_conf(p)->ifname, 0, &l, err, sizeof(err)) < 0) {
		jx_add_str(o, "error", err);
		return o;
	}
	jx_add_int(o, "ifindex", l.ifindex);
	jx_add_int(o, "flags", (int)l.flags);
	jx_add_bool(o, "up", l.flags & IFF_UP);
	jx_add_bool(o, "running", l.flags & IFF_RUNNING);
	jx_add_bool(o, "promisc", l.flags & IFF_PROMISC);
	jx_add_int(o, "operstate", l.operstate);
	jx_add_int(o, "mtu", (int)l.mtu);
	/* its changes in the recorder's last minute, the times of a flap */
	json_object_object_add(o, "events", port_link_events_json(p, loop_mono_ns() > 60000000000ull ?
								      loop_mono_ns() - 60000000000ull : 0));
	return o;
}

static void neigh_cb(const struct nl_neigh *n, void *arg)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "addr", n->addr);
	jx_add_str(o, "lladdr", n->lladdr);
	jx_add_str(o, "state", nl_neigh_state_str(n->state));
	json_object_array_add(arg, o);
}

struct json_object *evid_port_snapshot(struct port *p)
{
	struct json_object *po = json_object_new_object(), *nb;
	char err[256];

	port_sample(p, loop_mono_ns(), loop_real_ns(), 0);
	jx_add_str(po, IR_S_STATE, port_state_name(port_state(p)));
	json_object_object_add(po, IR_S_COUNTERS, port_counters_json(p, 1));
	json_object_object_add(po, IR_S_DEVLINK, port_devlink_json(p));
	json_object_object_add(po, IR_S_HOST, port_host_json(p));
	json_object_object_add(po, IR_S_APP, port_app_json(p, 1));
	if (port_state(p) == PORT_UP && port_conf(p)->ifname[0]) {
		json_object_object_add(po, IR_S_LINK, evid_link_json(p));
		nb = json_object_new_array();
		if (nl_neigh_dump(port_nsfd(p), port_ifindex(p), neigh_cb, nb, err, sizeof(err)) < 0)
			jx_add_str(po, "neighbours_error", err);
		json_object_object_add(po, IR_S_NEIGHBOURS, nb);
	}
	return po;
}

struct json_object *evid_recorder_json(const struct port *p, uint64_t from)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct recorder *rec = port_recorder(p);
	unsigned f, l, n = rec_window(rec, from, loop_mono_ns(), &f, &l);
	const struct rec_sample *prev = NULL;

	jx_add_str(o, "port", port_name(p));
	for (unsigned i = 0; n && i <= l - f; i++) {
		const struct rec_sample *s = rec_get(rec, f + i);
		struct json_object *e = json_object_new_object(), *src = json_object_new_object();

		jx_add_u64(e, "mono_ns", s->mono_ns);
		jx_add_u64(e, "real_ns", s->real_ns);
		for (unsigned k = 0; k < port_nsrc(p); k++) {
			const struct rec_part *pt = &s->part[k];
			const struct rec_part *pp = prev ? &prev->part[k] : NULL;
			struct json_object *c;

			if (!pt->lay || !port_src_name(p, k))
				continue;
			int *map = pp && pp->lay ? clayout_map_new(pp->lay, pt->lay) : NULL;

			c = json_object_new_object();
			for (unsigned j = 0; j < pt->lay->n; j++) {
				int pj = map ? map[j] : -1;

				if (pj >= 0 && pp->vals[pj] == pt->vals[j])
					continue;
				jx_add_u64(c, pt->lay->names[j], pt->vals[j]);
			}
			free(map);
			json_object_object_add(src, port_src_name(p, k), c);
		}
		json_object_object_add(e, prev ? "changed" : "values", src);
		json_object_array_add(arr, e);
		prev = s;
	}
	json_object_object_add(o, "samples", arr);
	return o;
}

struct json_object *evid_identity_json(const struct port *p)
{
	struct json_object *po = json_object_new_object();

	jx_add_str(po, "interface", port_conf(p)->ifname);
	jx_add_str(po, "netns", port_conf(p)->netns);
	jx_add_str(po, "profile", conf_profile_name(port_profile(p)));
	ident_to_json(port_ident(p), po);
	jx_add_str(po, "rdma_device", port_rdma_dev(p, NULL));
	/* the block devices' identity, the watched processes (src_host.h) */
	json_object_object_add(po, "host", port_host_json(p));
	return po;
}

void evid_devlink_refresh(struct port *p, int first)
{
	static const char *const only_vnic[] = { "vnic", NULL };

	port_devlink_refresh(p, first ? only_vnic : NULL);
}
