/* capture: PH_CAPTURE, the plain captures on every port, and the
 * promiscuous capture a step of PH_STEPS runs on one (release.c). */
#include "daemon/forensic/capfilter.h"
#include "daemon/conf.h"
#include "daemon/forensic/forensic_int.h"
#include "daemon/detect/incident.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "daemon/runs.h"
#include "daemon/detect/stall.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_cap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* the incident's flows, each by direction, and ICMP (capfilter.h) */
static void capture_filter(struct inv *v, char *buf, size_t len)
{
	struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
	struct json_object *ij = inc ? incident_json(inc, loop_mono_ns()) : NULL;

	capfilter_build(jx_arr(ij, "flows"), buf, len);
	json_object_put(ij);
}

static void cap_done(struct probe_cap *pc, void *arg)
{
	struct inv *v = arg;
	const struct forensic_probes *pr = v->F->pr;

	for (unsigned i = 0; i < v->nports; i++)
		if (v->cap[i] == pc) {
			const struct probe_cap_result *r = pr->cap_result(pc);
			struct json_object *o = json_object_new_object();
			char note[128];

			jx_add_str(o, "port", v->ports[i]);
			pr->cap_to_json(pc, o);
			if (v->npcap < MAXP * 2 && r->path[0])
				util_strlcpy(v->pcap[v->npcap++], r->path, sizeof(v->pcap[0]));
			json_object_array_add(jx_array_at(v->rec, IR_CAPTURES), o);
			snprintf(note, sizeof(note), "%u frame%s, %s%s",
				 r->packets, r->packets == 1 ? "" : "s",
				 !strcmp(r->stop_reason, "duration") ? "ran its full time" :
				 !strcmp(r->stop_reason, "bytes") ? "stopped at its byte limit" :
				 !strcmp(r->stop_reason, "packets") ? "stopped at its frame limit" :
				 !strcmp(r->stop_reason, "cancelled") ? "cancelled" : "stopped on an error",
				 r->promisc_requested ? (r->transition ?
				 ", promiscuous transition" : ", no promiscuous transition") : "");
			inv_step_end(v, v->cap_step[i], r->error[0] ? "failed" : "ok",
				 r->error[0] ? r->error : note);
			pr->cap_free(pc);
			v->cap[i] = NULL;
		}
	inv_part_done(v);
}

int inv_start_captures(struct inv *v, int port, int promisc)
{
	const struct conf *c = v->F->c;
	char filter[8192], path[PATH_MAX + 128], dir[PATH_MAX + 16], err[256], derr[PATH_MAX + 160];
	char why[160];
	int started = 0, wfd;

	capture_filter(v, filter, sizeof(filter));
	/* the captures are work files of root's: only in a directory nobody
	 * else may write (fsu_private_dir), each made O_EXCL by probe_cap */
	snprintf(dir, sizeof(dir), "%s/work", c->state_dir);
	wfd = fsu_private_dir(dir, 0750, derr, sizeof(derr));
	if (wfd >= 0)
		close(wfd);
	else
		log_warnx("investigation %" PRIu64 ": no captures: %s", v->id, derr);
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = inv_port(v, i);

		if ((port >= 0 && (int)i != port) || !p || port_state(p) != PORT_UP ||
		    !port_conf(p)->ifname[0])
			continue;
		if (promisc && !port_conf(p)->promisc_capture)
			continue;
		if (promisc && !runs_allow(v->F->runs, !v->incident_id, why, sizeof(why))) {
			/* a benchmark run is open: no promiscuous transition */
			inv_step_end(v, inv_step_begin(v, "capture-promisc", v->ports[i]), "skipped", why);
			continue;
		}
		v->cap_step[i] = inv_step_begin(v, promisc ? "capture-promisc" : "capture", v->ports[i]);
		if (wfd < 0) {
			inv_step_end(v, v->cap_step[i], "failed", derr);
			continue;
		}
		snprintf(path, sizeof(path), "%s/inv%" PRIu64 "-%s-%s.pcap", dir, v->id,
			 v->ports[i], promisc ? "promisc" : "plain");
		v->pending++;           /* before: cap_done may come at once */
		v->cap[i] = v->F->pr->cap_start(v->F->loop, port_nsfd(p), port_conf(p)->ifname,
						filter, promisc, c->snaplen, c->capture_ns, 10000,
						8u << 20, path, cap_done, v, err, sizeof(err));
		if (!v->cap[i])
			v->pending--;
		if (v->cap[i]) {
			int tr = promisc && v->F->pr->cap_result(v->cap[i])->transition == 1;

			started++;
			runs_intervention(v->F->runs, promisc ? "promisc-capture" : "capture",
					  v->ports[i], loop_mono_ns(), promisc,
					  promisc ? (tr ? "promiscuous transition" :
						     "promiscuous requested, no transition") :
					  "capture without a mode change");
		} else
			inv_step_end(v, v->cap_step[i], "failed", err);
	}
	return started;
}

void inv_capture_start(struct inv *v)
{
	v->capture_ns = loop_mono_ns();
	inv_start_captures(v, -1, 0);
}
