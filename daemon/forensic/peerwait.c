/* peerwait: the originating side of a peer snapshot. When an incident
 * opens, every peer is told (peers_notify) before this host touches
 * anything; their summaries are kept in the record as they come; before
 * the verdict the sequence waits, within peer_wait of the notice, for the
 * peers that have not answered yet, and names those it never heard from. */
#include "daemon/forensic/forensic_int.h"
#include "daemon/conf.h"
#include "daemon/detect/incident.h"
#include "daemon/peers/peers.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void inv_notify_peers(struct inv *v)
{
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	struct json_object *ij, *fl, *ports, *flows, *rec;
	uint64_t stall_mono = v->open_ns, stall_real;

	v->peers_step = -1;
	if (!inc || !peers_count(v->F->peers))
		return;
	ij = incident_json(inc, loop_mono_ns());
	fl = jx_arr(ij, "flows");
	ports = json_object_new_array();
	flows = json_object_new_array();
	for (unsigned i = 0; i < v->nports; i++)
		json_object_array_add(ports, json_object_new_string(v->ports[i]));
	for (size_t i = 0; i < jx_len(fl); i++) {
		struct json_object *f = json_object_array_get_idx(fl, i);
		uint64_t t = jx_u64(f, "stalled_at_mono_ns");

		if (jx_str(f, "tuple"))
			json_object_array_add(flows, json_object_new_string(jx_str(f, "tuple")));
		if (t && t < stall_mono)
			stall_mono = t;
	}
	stall_real = v->open_real_ns - (v->open_ns - stall_mono);
	rec = peers_notify(v->F->peers, v->incident_id, stall_real, ports, flows);
	if (rec)
		json_object_object_add(v->rec, IR_PEERS, rec);
	json_object_put(ports);
	json_object_put(flows);
	json_object_put(ij);
}

/* Notified peers, and how many of them answered. */
static unsigned count(struct inv *v, unsigned *answered)
{
	struct json_object *peers = jx_obj(v->rec, IR_PEERS);
	unsigned n = 0;

	*answered = 0;
	if (!peers)
		return 0;
	json_object_object_foreach(peers, name, pv) {
		(void)name;
		if (!jx_bool(pv, "notified"))
			continue;
		n++;
		*answered += jx_bool(pv, "answered");
	}
	return n;
}

int inv_peer_summary(struct inv *v, const char *peer, struct json_object *summary, double rtt_ms)
{
	struct json_object *pv = jx_obj(jx_obj(v->rec, IR_PEERS), peer);
	unsigned n, answered;

	if (!pv || jx_bool(pv, "answered"))
		return 0;
	jx_add_bool(pv, "answered", 1);
	json_object_object_add(pv, "rtt_ms", jx_new_fixed(rtt_ms, 3));
	json_object_object_add(pv, "after_ms", jx_new_fixed(inv_rel_ms(v, loop_mono_ns()), 3));
	jx_copy(pv, "host", summary, "host");
	jx_copy(pv, "bundle", summary, "bundle");
	json_object_object_add(pv, "summary", json_object_get(summary));
	n = count(v, &answered);
	return v->phase == PH_PEERS && answered == n;
}

int inv_peers_ready(struct inv *v)
{
	uint64_t deadline = v->open_ns + v->F->c->peer_wait_ns, now = loop_mono_ns();
	unsigned answered, n = count(v, &answered);

	if (!n)
		return 1;
	v->peers_step = inv_step_begin(v, "peers", NULL);
	if (answered == n || now >= deadline)
		return 1;
	loop_timer_set(v->timer, deadline - now, 0);
	return 0;
}

void inv_peers_done(struct inv *v)
{
	unsigned answered, n = count(v, &answered);
	char note[1024];
	size_t off;

	if (v->peers_step < 0 || !jx_obj(v->rec, IR_PEERS))
		return;
	loop_timer_set(v->timer, 0, 0);
	off = (size_t)snprintf(note, sizeof(note), "%u of %u answered", answered, n);
	json_object_object_foreach(jx_obj(v->rec, IR_PEERS), name, pv) {
		if (off >= sizeof(note) - 1)
			break;
		if (jx_bool(pv, "answered"))
			off += (size_t)snprintf(note + off, sizeof(note) - off, "; %s in %.1f ms", name,
						jx_double(pv, "rtt_ms", 0));
		else if (jx_bool(pv, "notified")) {
			jx_add_str(pv, "error", "not heard from within peer_wait");
			off += (size_t)snprintf(note + off, sizeof(note) - off, "; %s not heard from",
						name);
		} else
			off += (size_t)snprintf(note + off, sizeof(note) - off, "; %s not notified (%s)",
						name, jx_text(pv, "error"));
	}
	inv_step_end(v, v->peers_step, answered == n ? "ok" : "partial", note);
	if (answered < n)
		log_warnx("investigation %" PRIu64 " (incident %" PRIu64 "): %s", v->id,
			  v->incident_id, note);
	v->peers_step = -1;
	peers_forget(v->F->peers, v->incident_id);
}
