/* evid_devlink: devlink health in the bundle. */
#include "daemon/forensic/evid_devlink.h"
#include "collectors/counters/devlink_health.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/log.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

/* The reporters of a devlink_health object without their diagnose trees
 * (the manifest keeps GET fields; the trees are in devlink/PORT.json), and
 * the vnic diagnose's numeric leaves the rules read. */
static struct json_object *brief(struct json_object *dh)
{
	struct json_object *o = json_object_new_object(), *reps = json_object_new_array();
	struct json_object *arr = jx_arr(dh, "reporters");

	if (jx_str(dh, "note")) {
		jx_copy(o, "note", dh, "note");
		jx_copy(o, "reason", dh, "reason");
		json_object_put(reps);
		return o;
	}
	jx_copy(o, "handles", dh, "handles");
	jx_copy(o, "time_ns", dh, "time_ns");
	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *r = json_object_array_get_idx(arr, i), *b = json_object_new_object();

		json_object_object_foreach(r, k, v) {
			if (!strcmp(k, "diagnose"))
				continue;
			json_object_object_add(b, k, json_object_get(v));
		}
		json_object_array_add(reps, b);
	}
	json_object_object_add(o, "reporters", reps);
	return o;
}

static void dumps_of(struct port *p, const char *name, struct json_object *dh,
		     uint64_t stall_real_ns, evid_add_fn add, void *arg, struct json_object *rec_d)
{
	struct json_object *arr = jx_arr(dh, "reporters");
	struct src *s = port_devlink_src(p);

	for (size_t i = 0; s && i < jx_len(arr); i++) {
		struct json_object *r = json_object_array_get_idx(arr, i), *tree = NULL;
		struct json_object *e = json_object_new_object();
		const char *rep = jx_str(r, "name");
		char fn[160], err[256] = "";
		int retaken = 0;

		/* only a reporter whose GET showed a stored dump newer than the
		 * stall: DUMP_GET would take one where none is stored */
		if (!rep || !jx_get(r, "dump_time_ns") || jx_u64(r, "dump_time_ns") <= stall_real_ns) {
			json_object_put(e);
			continue;
		}
		if (src_devlink_health_dump(s, rep, stall_real_ns, EVID_DEVLINK_DUMP_MAX, &tree,
					    &retaken, err, sizeof(err)) < 0 || !tree) {
			jx_add_str(e, "skipped", err[0] ? err : "no dump");
		} else {
			snprintf(fn, sizeof(fn), "devlink/%s-dump-%s.json", name, rep);
			add(fn, tree, arg);
			json_object_put(tree);
			jx_add_str(e, "file", fn);
			if (retaken) {
				jx_add_bool(e, "retaken", 1);
				log_warnx("port %s: devlink health dump of %s was cleared and taken "
					  "again by the kernel between two requests", name, rep);
			}
		}
		json_object_object_add(rec_d, rep, e);
	}
}

struct json_object *evid_devlink_bundle(struct json_object *rec, const char *const *names,
					struct port *const *ports, unsigned n,
					uint64_t stall_real_ns, uint64_t from_mono_ns,
					uint64_t open_mono_ns, evid_add_fn add, void *arg)
{
	struct json_object *man = json_object_new_object();
	struct json_object *evs = json_object_new_object(), *dumps = json_object_new_object();

	for (unsigned i = 0; i < n; i++) {
		struct json_object *at = jx_get(jx_get(jx_get(rec, IR_SNAPSHOT), names[i]),
						IR_S_DEVLINK);
		struct json_object *af = jx_get(jx_get(jx_get(rec, IR_SNAPSHOT_AFTER), names[i]),
						IR_S_DEVLINK);
		struct json_object *file, *m, *ev, *d;
		char fn[96];

		if (!at && !af)
			continue;
		ev = ports[i] ? port_devlink_events_json(ports[i], from_mono_ns) :
				json_object_new_array();
		for (size_t k = 0; k < jx_len(ev); k++) {
			struct json_object *e = json_object_array_get_idx(ev, k);

			jx_add_double(e, "t_ms", ((double)jx_u64(e, "mono_ns") - (double)open_mono_ns) / 1e6);
		}
		file = json_object_new_object();
		json_object_object_add(file, "at_stall", json_object_get(at));
		json_object_object_add(file, "after", json_object_get(af));
		json_object_object_add(file, "events", json_object_get(ev));
		if (ports[i] && port_devlink_events_lost(ports[i]))
			jx_add_bool(file, "events_lost", 1);
		snprintf(fn, sizeof(fn), "devlink/%s.json", names[i]);
		m = json_object_new_object();
		if (at)
			json_object_object_add(m, "at_stall", brief(at));
		if (af)
			json_object_object_add(m, "after", brief(af));
		json_object_object_add(m, "events", json_object_get(ev));
		d = json_object_new_object();
		if (ports[i])
			dumps_of(ports[i], names[i], af ? af : at, stall_real_ns, add, arg, d);
		if (json_object_object_length(d)) {
			json_object_object_add(m, "dumps", json_object_get(d));
			json_object_object_add(file, "dumps", json_object_get(d));
		}
		json_object_object_add(dumps, names[i], d);
		add(fn, file, arg);
		json_object_put(file);
		jx_add_str(m, "file", fn);
		json_object_object_add(man, names[i], m);
		json_object_object_add(evs, names[i], ev);
	}
	json_object_object_add(rec, IR_DEVLINK_EVENTS, evs);
	json_object_object_add(rec, IR_DEVLINK_DUMPS, dumps);
	if (!json_object_object_length(man)) {
		json_object_put(man);
		return NULL;
	}
	return man;
}
