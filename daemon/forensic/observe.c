/* observe: PH_OBSERVE, the observation window of an investigation (fast
 * sampling, kernel pings each way, engine threads twice, external
 * probes). */
#include "collectors/flows/flow_sockdiag.h"
#include "daemon/conf.h"
#include "daemon/forensic/forensic_int.h"
#include "daemon/detect/incident.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_exec.h"
#include "probes/probe_ping.h"
#include "probes/probe_threads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Port i's part of the window inside the stall, to until: how many of
 * its series' entries (each a tick's deltas, ending at its t_ms) end at or
 * before until, and (*at_ms) when its last such sample was taken; -1 when
 * it has none (its first sample came after until) or when its series is
 * full (the ticks past MAX_SERIES are in its deltas, not in the series:
 * they cannot be taken off). */
static long window_kept(const struct inv *v, unsigned i, uint64_t until, double *at_ms)
{
	size_t n = jx_len(v->series[i]), k;
	double u = inv_rel_ms(v, until);

	if (!v->t1[i] || v->t1[i] > until || n >= MAX_SERIES)
		return -1;
	*at_ms = inv_rel_ms(v, v->t1[i]);
	for (k = 0; k < n; k++) {
		double ms = jx_double(json_object_array_get_idx(v->series[i], k), "t_ms", 0);

		if (ms > u)
			break;
		*at_ms = ms;
	}
	return (long)k;
}

/* deltas (first sample to the last) less the series' entries from the
 * kept-th on (by index: no time read back through a double): the deltas
 * to the last kept sample. */
static void window_cut(struct json_object *deltas, struct json_object *series, size_t kept)
{
	for (size_t k = kept; k < jx_len(series); k++) {
		struct json_object *e = json_object_array_get_idx(series, k);

		json_object_object_foreach(jx_get(e, "moved"), src, mv) {
			struct json_object *d = jx_get(deltas, src);

			json_object_object_foreach(mv, name, x) {
				uint64_t have = jx_u64(d, name), less = (uint64_t)json_object_get_uint64(x);

				if (d && jx_get(d, name))
					jx_add_u64(d, name, have > less ? have - less : 0);
			}
		}
	}
}

void inv_tick(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;
	uint64_t now = loop_mono_ns();

	(void)t;
	/* once a tick: stall_incident counts the siblings when they are due */
	inv_follow_engines(v, v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL);
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = inv_port(v, i);
		struct evid_counters cur = { 0 };

		if (!p || port_state(p) != PORT_UP)
			continue;
		port_sample(p, now, loop_real_ns(), 0);
		evid_counters_take(&cur, p);
		if (!v->t1[i])
			v->t1[i] = now;
		if (evid_counters_any(&v->prev[i])) {
			if (json_object_array_length(v->series[i]) < MAX_SERIES) {
				struct json_object *e = json_object_new_object();

				json_object_object_add(e, "t_ms", jx_new_fixed(inv_rel_ms(v, now), 3));
				json_object_object_add(e, "moved",
						       evid_deltas_json(p, &v->prev[i], &cur, 0));
				json_object_array_add(v->series[i], e);
			}
			evid_counters_free(&v->prev[i]);
		}
		v->prev[i] = cur;
	}
	v->nsamples++;
	if (now >= v->win_end) {
		struct json_object *w = json_object_new_object();
		struct incident *inc = v->incident_id ? stall_incident(v->F->stall, v->incident_id) : NULL;
		uint64_t retrans = 0, next;
		uint64_t moved = 0, until = inc ? incident_stalled_until(inc, &moved) : 0;
		unsigned known = inc ? stall_incident_retrans(v->F->stall, inc, &retrans) : 0;
		double held = -1, at;
		long kept[MAXP];
		int full = 0;

		json_object_object_add(w, "span_s", jx_new_fixed((double)(now - v->win_start) / 1e9, 6));
		jx_add_int(w, "samples", v->nsamples);
		/* A stalled flow moved again within the window: its part inside
		 * the stall (held), to its last sample before the detector's
		 * last look that saw that flow stalled, beside the whole */
		for (unsigned i = 0; i < v->nports; i++) {
			kept[i] = until ? window_kept(v, i, until, &at) : -1;
			full |= until && jx_len(v->series[i]) >= MAX_SERIES;
			if (kept[i] >= 0 && at > held)
				held = at;
		}
		if (until) {
			struct json_object *h = json_object_new_object();
			double w0 = inv_rel_ms(v, v->win_start);

			json_object_object_add(h, "stalled_until_ms", jx_new_fixed(inv_rel_ms(v, until), 3));
			if (held >= 0) {
				json_object_object_add(h, "span_s", jx_new_fixed(
					held > w0 ? (held - w0) / 1e3 : 0, 6));
				jx_add_str(h, "why", "a stalled flow moved again within the window: its "
					   "part inside the stall ends at its last sample before the last "
					   "look that saw that flow stalled (for a source read in dumps, "
					   "before that look's dump)");
			} else {
				jx_add_str(h, "why", full ? "a stalled flow moved again within the window, "
					   "but its series is full: the ticks after it cannot be taken off" :
					   moved >= v->win_start ? "a stalled flow moved again within the "
					   "window, but it was last known stalled before the window's first "
					   "sample (its source is read in dumps): no part of the window is "
					   "known to lie inside the stall" :
					   "a stalled flow moved again before the window's first sample: "
					   "no part of it is inside the stall");
			}
			json_object_object_add(w, "held", h);
			log_info("investigation %" PRIu64 ": a stalled flow was last known stalled %.0f ms "
				 "into the window, then moved: %s", v->id,
				 until > v->win_start ? (double)(until - v->win_start) / 1e6 : 0.0,
				 held >= 0 ? "the window's part inside the stall kept beside it" :
				 "no part of the window is inside the stall");
		}
		if (known) {
			struct json_object *fo = json_object_new_object();

			jx_add_u64(fo, "retrans", retrans);
			jx_add_int(fo, "counted", known);
			json_object_object_add(w, "flows", fo);
		}
		if (v->win_extended)
			jx_add_int(w, "extended", v->win_extended);
		for (unsigned i = 0; i < v->nports; i++) {
			struct port *p = inv_port(v, i);
			struct json_object *po = json_object_new_object(), *dl, *hd = NULL;

			if (!p) {
				json_object_put(po);
				continue;
			}
			dl = evid_deltas_json(p, &v->first[i], &v->prev[i], 1);
			json_object_object_add(po, "deltas", dl);
			if (kept[i] >= 0 && json_object_deep_copy(dl, &hd, NULL) == 0) {
				window_cut(hd, v->series[i], (size_t)kept[i]);
				json_object_object_add(po, "held_deltas", hd);
			}
			json_object_object_add(po, "series", json_object_get(v->series[i]));
			json_object_object_add(w, v->ports[i], po);
		}
		json_object_object_add(v->rec, IR_WINDOW, w);
		/* A frame lost in a stall is the sender's backed-off
		 * retransmission: one, or none, in the window is an ordinary
		 * outcome, and a gap of one frame is also what read skew
		 * makes. When the count is marginal, the window goes on until
		 * the stalled flows have tried again (at most twice, within
		 * release_wait_max), so that the verdict does not depend on
		 * where a retransmission fell. */
		if (v->win_extended < 2 && inv_still_stalled(v) && inv_gap_marginal(v) &&
		    (next = inv_next_retry(v, now)) > now &&
		    next - v->win_start <= v->F->c->release_wait_max_ns) {
			json_object_object_del(v->rec, IR_WINDOW);
			v->win_extended++;
			v->win_end = next;
			log_info("investigation %" PRIu64 ": fewer than 2 frames lost so far: the window "
				 "waits %.0f ms for the stalled flows' next retransmission", v->id,
				 (double)(next - now) / 1e6);
			return;
		}
		loop_timer_set(v->tick, 0, 0);
		inv_step_end(v, v->win_step, "ok", v->win_extended ?
			     "extended to the stalled flows' next retransmission" : NULL);
		inv_part_done(v);
	}
}

/* A kernel ping of port i ended: its record (under key, the small
 * echoes' or the don't-fragment ones at the MTU, which also keep the small
 * echo's size: facts ping_mtu) and its step's end. */
static void ping_record(struct inv *v, unsigned i, struct probe_ping *pp, const char *key,
			int step, int mtu)
{
	const struct forensic_probes *pr = v->F->pr;
	const struct probe_ping_result *r = pr->ping_result(pp);
	struct json_object *o = json_object_new_object();
	struct port *p = inv_port(v, i);
	const char *addr = p ? port_conf(p)->peer_address : "";
	char note[320];

	jx_add_str(o, "from", v->ports[i]);
	jx_add_str(o, "to", p ? port_conf(p)->peer : "");
	jx_add_str(o, "address", addr);
	if (mtu)
		jx_add_int(o, "small_size", strchr(addr, ':') ? (int)PROBE_PING_DEF_SIZE_V6 :
			   (int)PROBE_PING_DEF_SIZE_V4);
	pr->ping_to_json(pp, o);
	json_object_array_add(jx_array_at(v->rec, key), o);
	if (mtu)
		snprintf(note, sizeof(note), "%u/%u replies of %d bytes, don't fragment%s%s",
			 r->received, r->sent, (int)jx_u64(o, "size"), r->error[0] ? ": " : "",
			 r->error);
	else
		snprintf(note, sizeof(note), "%u/%u replies", r->received, r->sent);
	inv_step_end(v, step, r->received ? "ok" : "no-reply", note);
}

static void ping_done(struct probe_ping *pp, void *arg)
{
	struct inv *v = arg;

	for (unsigned i = 0; i < v->nports; i++) {
		if (v->ping[i] == pp)
			ping_record(v, i, pp, IR_PINGS, v->ping_step[i], 0);
		if (v->ping_mtu[i] == pp)
			ping_record(v, i, pp, IR_PINGS_MTU, v->ping_mtu_step[i], 1);
	}
	inv_part_done(v);
}

/* The port's MTU as the snapshot read it (0: unknown). */
static unsigned snapshot_mtu(const struct inv *v, unsigned i)
{
	struct json_object *l = jx_get(jx_get(jx_get(v->rec, IR_SNAPSHOT), v->ports[i]), IR_S_LINK);

	return (unsigned)jx_u64(l, "mtu");
}

void inv_observe_timer(struct inv *v)
{
	const struct forensic_probes *pr = v->F->pr;
	struct json_object *arr = jx_array_at(v->rec, IR_THREADS);

	loop_timer_set(v->timer, 0, 0);
	for (unsigned i = 0; i < v->npids; i++) {
		struct probe_threads_snap second;
		struct json_object *o = json_object_new_object();
		char err[256];
		int ok = pr->threads_snapshot(v->pids[i], &second, err, sizeof(err)) == 0;

		struct json_object *w = stall_thread_evidence(v->F->stall, v->pids[i]);

		pr->threads_to_json(&v->th1[i], ok ? &second : NULL, o);
		if (!ok)
			jx_add_str(o, "second_error", err);
		if (w)          /* the kernel's account over the wait */
			json_object_object_add(o, "watch", w);
		json_object_array_add(arr, o);
		if (ok)
			pr->threads_free(&second);
		pr->threads_free(&v->th1[i]);
	}
	inv_step_end(v, v->th_step, v->npids ? "ok" : "none", v->npids ? NULL :
		 "no process found for the stalled flows");
	inv_part_done(v);
}

static void exec_done(struct probe_exec *pe, void *arg)
{
	struct inv *v = arg;
	const struct forensic_probes *pr = v->F->pr;

	for (unsigned i = 0; i < v->nexec; i++)
		if (v->exec[i] == pe) {
			const struct probe_exec_result *r = pr->exec_result(pe);
			struct json_object *o = json_object_new_object();

			pr->exec_to_json(pe, o);
			json_object_array_add(jx_array_at(v->rec, IR_PROBES), o);
			inv_step_end(v, v->exec_step[i], r->not_found ? "skipped" : r->timed_out ?
				 "timeout" : r->exited && r->status == 0 ? "ok" : "failed",
				 r->not_found ? "command not found" : r->priv_failed ? r->error : NULL);
			pr->exec_free(pe);
			v->exec[i] = NULL;
		}
	if (v->exec_left)
		v->exec_left--;
}

static void start_threads(struct inv *v)
{
	const struct forensic_probes *pr = v->F->pr;
	struct stall_owner own[MAXOWN];
	struct incident *inc = stall_incident(v->F->stall, v->incident_id);
	size_t n = inc && v->incident_id ? stall_incident_owners(v->F->stall, inc, own, MAXOWN) : 0;
	char err[256];

	/* engine threads: owners of the stalled connections, both ends */
	v->th_step = inv_step_begin(v, "threads", NULL);
	for (size_t i = 0; i < n && v->npids < MAXOWN; i++) {
		int pid = own[i].pid, dup = 0;
		char comm[64];

		if (!pid && own[i].inode &&
		    pr->inode_owner(own[i].inode, &pid, comm, sizeof(comm)) < 0)
			continue;
		for (unsigned j = 0; j < v->npids; j++)
			dup |= v->pids[j] == pid;
		if (!pid || dup)
			continue;
		if (pr->threads_snapshot(pid, &v->th1[v->npids], err, sizeof(err)) == 0)
			v->pids[v->npids++] = pid;
		else
			log_debug("investigation %" PRIu64 ": threads of %d: %s", v->id, pid, err);
	}
	v->pending++;
	loop_timer_set(v->timer, THREAD_GAP_NS, 0);
}

/* External probes, in their port's namespace; not waited for. */
static void start_exec(struct inv *v)
{
	const struct conf *c = v->F->c;
	char err[256];

	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = inv_port(v, i);
		const struct port_conf *pc = p ? port_conf(p) : NULL;

		for (unsigned k = 0; pc && k < pc->nprobe && v->nexec < MAXEXEC; k++) {
			char **argv = NULL;
			int idx = (int)v->nexec;

			v->exec_step[idx] = inv_step_begin(v, "probe", v->ports[i]);
			if (probe_exec_split(pc->probe[k], &argv, err, sizeof(err)) < 0) {
				inv_step_end(v, v->exec_step[idx], "failed", err);
				continue;
			}
			/* probe_user's identity, no capabilities (or, with
			 * probe_user = root, the daemon's own) */
			v->exec[idx] = v->F->pr->exec_start(v->F->loop, (const char *const *)argv,
							    &c->probe_cred, port_nsfd(p), c->probe_timeout_ns,
							    64 * 1024, exec_done, v, err, sizeof(err));
			probe_exec_argv_free(argv);
			if (!v->exec[idx]) {
				inv_step_end(v, v->exec_step[idx], "failed", err);
				continue;
			}
			v->nexec++;
			v->exec_left++;
		}
	}
}

void inv_observe_start(struct inv *v)
{
	const struct conf *c = v->F->c;
	char err[256];

	/* fast observation window: a part, done at its end */
	v->pending++;
	v->win_start = loop_mono_ns();
	v->win_end = v->win_start + c->observe_ns;
	v->win_step = inv_step_begin(v, "observe", NULL);
	for (unsigned i = 0; i < v->nports; i++)
		v->series[i] = json_object_new_array();
	loop_timer_set(v->tick, c->observe_every_ns, c->observe_every_ns);

	/* kernel pings each way */
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = inv_port(v, i);

		if (!p || !port_conf(p)->peer_address[0] || !c->ping_count)
			continue;
		v->ping_step[i] = inv_step_begin(v, "ping", v->ports[i]);
		v->pending++;           /* before: ping_done may come at once */
		v->ping[i] = v->F->pr->ping_start(v->F->loop, port_nsfd(p), port_conf(p)->ifname,
						  port_conf(p)->peer_address, c->ping_count,
						  c->observe_ns / (c->ping_count + 1),
						  c->observe_ns, NULL, ping_done, v, err, sizeof(err));
		if (!v->ping[i]) {
			v->pending--;
			inv_step_end(v, v->ping_step[i], "failed", err);
		}
		/* the same path at the port's MTU, don't fragment (issue 35): a
		 * hop or a port that takes smaller frames drops the flows' large
		 * frames while the small echoes pass (ping -M do -s MTU-28) */
		if (c->ping_mtu && snapshot_mtu(v, i) > PROBE_PING_DEF_SIZE_V6) {
			struct probe_ping_opts o = { .size = snapshot_mtu(v, i), .df = 1 };

			v->ping_mtu_step[i] = inv_step_begin(v, "ping-mtu", v->ports[i]);
			v->pending++;
			v->ping_mtu[i] = v->F->pr->ping_start(v->F->loop, port_nsfd(p),
							      port_conf(p)->ifname,
							      port_conf(p)->peer_address, c->ping_count,
							      c->observe_ns / (c->ping_count + 1),
							      c->observe_ns, &o, ping_done, v,
							      err, sizeof(err));
			if (!v->ping_mtu[i]) {
				v->pending--;
				inv_step_end(v, v->ping_mtu_step[i], "failed", err);
			}
		}
	}
	start_threads(v);
	start_exec(v);
}
