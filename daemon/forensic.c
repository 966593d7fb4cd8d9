/* forensic: the asynchronous investigation of an incident. */
#include "daemon/forensic.h"
#include "bundle/bundle.h"
#include "daemon/conf.h"
#include "daemon/facts.h"
#include "rules/rules.h"
#include "daemon/daemon.h"
#include "collectors/flow_sockdiag.h"
#include "collectors/ident.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/nl.h"
#include "daemon/port.h"
#include "probes/probe_cap.h"
#include "probes/probe_exec.h"
#include "probes/probe_journal.h"
#include "probes/probe_ping.h"
#include "probes/probe_threads.h"
#include "daemon/stall.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define KEEP 16
#define MAXP 2                  /* ports per investigation: a pair */
#define MAXOWN 8
#define MAXEXEC 8
#define THREAD_GAP_NS 100000000ull
#define MAX_SERIES 64

enum phase { PH_OBSERVE = 0, PH_CAPTURE, PH_PROMISC, PH_RECOVER, PH_WATCH, PH_DONE };
static const char *phase_name[] = { "observe", "capture", "promisc-capture", "recover",
				    "watch", "done" };

struct snapv {                  /* one reading of a port's sources */
	struct clayout *lay[REC_MAX_SRC];
	uint64_t *vals[REC_MAX_SRC];
};

struct inv {
	struct forensics *F;
	uint64_t id, incident_id;
	char ports[MAXP][32];
	unsigned nports;
	uint64_t open_ns, open_real_ns;
	struct json_object *rec, *steps;
	enum phase phase;
	int pending;
	/* observation window */
	struct loop_timer *tick;
	uint64_t win_start, win_end;
	struct snapv first[MAXP], prev[MAXP];
	struct json_object *series[MAXP];
	unsigned nsamples;
	int win_step;
	/* probes */
	struct probe_ping *ping[MAXP];
	int ping_step[MAXP];
	struct probe_cap *cap[MAXP];
	int cap_step[MAXP];
	struct probe_exec *exec[MAXEXEC];
	int exec_step[MAXEXEC];
	unsigned nexec, exec_left;
	int pids[MAXOWN];
	unsigned npids;
	struct probe_threads_snap th1[MAXOWN];
	struct loop_timer *timer;       /* thread gap, release watch */
	int th_step;
	uint64_t action_ns[3];          /* capture, promisc, reprogram starts */
	uint64_t release_ns;
	int done;
	char bundle[PATH_MAX];          /* written bundle, "" none */
	char pcap[MAXP * 2][PATH_MAX];  /* capture files to move into it */
	unsigned npcap;
};

struct forensics {
	struct daemon *d;
	struct inv *inv[KEEP];
	uint64_t ninv;
	int reprogramming;
	struct probe_exec *hook;
	struct { char port[32]; uint64_t at; } last_rp[32];
	unsigned nlast;
};

static struct port *port_of(struct inv *v, unsigned i)
{
	return daemon_port(v->F->d, v->ports[i]);
}

static double rel_ms(const struct inv *v, uint64_t t)
{
	return t >= v->open_ns ? (double)(t - v->open_ns) / 1e6 : -(double)(v->open_ns - t) / 1e6;
}

static int step_begin(struct inv *v, const char *name, const char *port)
{
	struct json_object *s = json_object_new_object();
	uint64_t now = loop_mono_ns();

	json_object_object_add(s, "step", json_object_new_string(name));
	if (port)
		json_object_object_add(s, "port", json_object_new_string(port));
	json_object_object_add(s, "start_mono_ns", json_object_new_uint64(now));
	json_object_object_add(s, "start_ms", json_object_new_double(rel_ms(v, now)));
	json_object_object_add(s, "outcome", json_object_new_string("running"));
	json_object_array_add(v->steps, s);
	return (int)json_object_array_length(v->steps) - 1;
}

static void step_end(struct inv *v, int idx, const char *outcome, const char *note)
{
	struct json_object *s = json_object_array_get_idx(v->steps, (size_t)idx);
	uint64_t now = loop_mono_ns();

	if (!s)
		return;
	json_object_object_add(s, "end_mono_ns", json_object_new_uint64(now));
	json_object_object_add(s, "end_ms", json_object_new_double(rel_ms(v, now)));
	json_object_object_add(s, "outcome", json_object_new_string(outcome));
	if (note && *note)
		json_object_object_add(s, "note", json_object_new_string(note));
}

static struct json_object *rec_array(struct inv *v, const char *key)
{
	struct json_object *a;

	if (!json_object_object_get_ex(v->rec, key, &a)) {
		a = json_object_new_array();
		json_object_object_add(v->rec, key, a);
	}
	return a;
}

/* ---- counters ---- */

static void snapv_free(struct snapv *s)
{
	for (unsigned i = 0; i < REC_MAX_SRC; i++) {
		clayout_unref(s->lay[i]);
		free(s->vals[i]);
		s->lay[i] = NULL;
		s->vals[i] = NULL;
	}
}

static void snapv_take(struct snapv *s, struct port *p)
{
	snapv_free(s);
	for (unsigned i = 0; i < p->nsrc; i++) {
		struct port_src *ps = &p->src[i];

		if (!ps->open || ps->failed || !ps->lay || !ps->vals)
			continue;
		s->vals[i] = malloc(ps->lay->n * sizeof(uint64_t) + 1);
		if (!s->vals[i])
			continue;
		memcpy(s->vals[i], ps->vals, ps->lay->n * sizeof(uint64_t));
		s->lay[i] = clayout_ref(ps->lay);
	}
}

static const char *srcname(const struct port *p, unsigned i)
{
	return p->src[i].s.ops ? p->src[i].s.ops->name : "?";
}

static struct json_object *counters_json(struct port *p)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < p->nsrc; i++) {
		struct port_src *ps = &p->src[i];
		struct json_object *c;

		if (!ps->open)
			continue;
		if (ps->failed || !ps->lay) {
			c = json_object_new_object();
			json_object_object_add(c, "error", json_object_new_string(ps->why));
		} else {
			c = json_object_new_object();
			for (unsigned k = 0; k < ps->lay->n; k++)
				json_object_object_add(c, ps->lay->names[k],
						       json_object_new_uint64(ps->vals[k]));
		}
		json_object_object_add(o, srcname(p, i), c);
	}
	return o;
}

/* Deltas b - a per counter (by name), only those that moved unless all. */
static struct json_object *deltas_json(struct port *p, const struct snapv *a,
				       const struct snapv *b, int all)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < REC_MAX_SRC; i++) {
		struct json_object *c;

		if (!a->lay[i] || !b->lay[i])
			continue;
		c = json_object_new_object();
		for (unsigned k = 0; k < b->lay[i]->n; k++) {
			int j = a->lay[i] == b->lay[i] ? (int)k :
				clayout_find(a->lay[i], b->lay[i]->names[k]);
			uint64_t d;

			if (j < 0)
				continue;
			d = cnt_delta(a->vals[i][j], b->vals[i][k], b->lay[i]->width[k], NULL);
			if (d || all)
				json_object_object_add(c, b->lay[i]->names[k],
						       json_object_new_uint64(d));
		}
		json_object_object_add(o, srcname(p, i), c);
	}
	return o;
}

static void neigh_cb(const struct nl_neigh *n, void *arg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "addr", json_object_new_string(n->addr));
	json_object_object_add(o, "lladdr", json_object_new_string(n->lladdr));
	json_object_object_add(o, "state", json_object_new_string(nl_neigh_state_str(n->state)));
	json_object_array_add(arg, o);
}

static struct json_object *link_json(struct port *p)
{
	struct json_object *o = json_object_new_object();
	struct nl_link l;
	char err[256];

	if (nl_link_get(p->nsfd, p->conf.ifname, 0, &l, err, sizeof(err)) < 0) {
		json_object_object_add(o, "error", json_object_new_string(err));
		return o;
	}
	json_object_object_add(o, "ifindex", json_object_new_int(l.ifindex));
	json_object_object_add(o, "flags", json_object_new_int((int)l.flags));
	json_object_object_add(o, "up", json_object_new_boolean(!!(l.flags & IFF_UP)));
	json_object_object_add(o, "running", json_object_new_boolean(!!(l.flags & IFF_RUNNING)));
	json_object_object_add(o, "promisc", json_object_new_boolean(!!(l.flags & IFF_PROMISC)));
	json_object_object_add(o, "operstate", json_object_new_int(l.operstate));
	json_object_object_add(o, "mtu", json_object_new_int((int)l.mtu));
	return o;
}

static void snapshot_all(struct inv *v, const char *label)
{
	struct json_object *snap = json_object_new_object();
	uint64_t t0 = loop_mono_ns();
	int st = step_begin(v, label, NULL);

	json_object_object_add(snap, "started_after_open_us",
			       json_object_new_double((double)(t0 - v->open_ns) / 1e3));
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);
		struct json_object *po = json_object_new_object(), *nb;
		char err[256];

		if (!p)
			continue;
		port_sample(p, loop_mono_ns(), loop_real_ns(), 0);
		json_object_object_add(po, "state", json_object_new_string(port_state_name(p->state)));
		json_object_object_add(po, "counters", counters_json(p));
		if (p->state == PORT_UP && p->conf.ifname[0]) {
			json_object_object_add(po, "link", link_json(p));
			nb = json_object_new_array();
			if (nl_neigh_dump(p->nsfd, p->ifindex, neigh_cb, nb, err, sizeof(err)) < 0)
				json_object_object_add(po, "neighbours_error", json_object_new_string(err));
			json_object_object_add(po, "neighbours", nb);
		}
		if (!strcmp(label, "snapshot"))
			snapv_take(&v->first[i], p);
		json_object_object_add(snap, v->ports[i], po);
	}
	json_object_object_add(snap, "flows", stall_flows_json(v->F->d->stall, NULL, 0));
	json_object_object_add(v->rec, !strcmp(label, "snapshot") ? "snapshot" : "snapshot_after", snap);
	step_end(v, st, "ok", NULL);
}

/* ---- phases ---- */

static void advance(struct inv *v);

static void finish_one(struct inv *v)
{
	if (--v->pending <= 0)
		advance(v);
}

static void tick_cb(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;
	uint64_t now = loop_mono_ns();

	(void)t;
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);
		struct snapv cur = { 0 };

		if (!p || p->state != PORT_UP)
			continue;
		port_sample(p, now, loop_real_ns(), 0);
		snapv_take(&cur, p);
		if (v->prev[i].lay[0] || v->prev[i].lay[1] || v->prev[i].lay[2]) {
			if (json_object_array_length(v->series[i]) < MAX_SERIES) {
				struct json_object *e = json_object_new_object();

				json_object_object_add(e, "t_ms", json_object_new_double(rel_ms(v, now)));
				json_object_object_add(e, "moved", deltas_json(p, &v->prev[i], &cur, 0));
				json_object_array_add(v->series[i], e);
			}
			snapv_free(&v->prev[i]);
		}
		v->prev[i] = cur;
	}
	v->nsamples++;
	if (now >= v->win_end) {
		struct json_object *w = json_object_new_object();

		loop_timer_set(v->tick, 0, 0);
		json_object_object_add(w, "span_s", json_object_new_double(
			(double)(now - v->win_start) / 1e9));
		json_object_object_add(w, "samples", json_object_new_int((int)v->nsamples));
		for (unsigned i = 0; i < v->nports; i++) {
			struct port *p = port_of(v, i);
			struct json_object *po = json_object_new_object();

			if (!p)
				continue;
			json_object_object_add(po, "deltas", deltas_json(p, &v->first[i], &v->prev[i], 1));
			json_object_object_add(po, "series", json_object_get(v->series[i]));
			json_object_object_add(w, v->ports[i], po);
		}
		json_object_object_add(v->rec, "window", w);
		step_end(v, v->win_step, "ok", NULL);
		finish_one(v);
	}
}

static void ping_done(struct probe_ping *pp, void *arg)
{
	struct inv *v = arg;

	for (unsigned i = 0; i < v->nports; i++)
		if (v->ping[i] == pp) {
			const struct probe_ping_result *r = probe_ping_result(pp);
			struct json_object *o = json_object_new_object();
			struct port *p = port_of(v, i);
			char note[96];

			json_object_object_add(o, "from", json_object_new_string(v->ports[i]));
			json_object_object_add(o, "to", json_object_new_string(
				p && p->conf.peer[0] ? p->conf.peer : ""));
			json_object_object_add(o, "address", json_object_new_string(
				p ? p->conf.peer_address : ""));
			probe_ping_to_json(pp, o);
			json_object_array_add(rec_array(v, "pings"), o);
			snprintf(note, sizeof(note), "%u/%u replies", r->received, r->sent);
			step_end(v, v->ping_step[i], r->received ? "ok" : "no-reply", note);
		}
	finish_one(v);
}

static void threads_second(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;
	struct json_object *arr = rec_array(v, "threads");

	(void)t;
	loop_timer_set(v->timer, 0, 0);
	for (unsigned i = 0; i < v->npids; i++) {
		struct probe_threads_snap second;
		struct json_object *o = json_object_new_object();
		char err[256];
		int ok = probe_threads_snapshot(v->pids[i], &second, err, sizeof(err)) == 0;

		probe_threads_to_json(&v->th1[i], ok ? &second : NULL, o);
		if (!ok)
			json_object_object_add(o, "second_error", json_object_new_string(err));
		json_object_array_add(arr, o);
		if (ok)
			probe_threads_free(&second);
		probe_threads_free(&v->th1[i]);
	}
	step_end(v, v->th_step, v->npids ? "ok" : "none", v->npids ? NULL :
		 "no process found for the stalled flows");
	finish_one(v);
}

static void exec_done(struct probe_exec *pe, void *arg)
{
	struct inv *v = arg;

	for (unsigned i = 0; i < v->nexec; i++)
		if (v->exec[i] == pe) {
			const struct probe_exec_result *r = probe_exec_result(pe);
			struct json_object *o = json_object_new_object();

			probe_exec_to_json(pe, o);
			json_object_array_add(rec_array(v, "probes"), o);
			step_end(v, v->exec_step[i], r->not_found ? "skipped" : r->timed_out ?
				 "timeout" : r->exited && r->status == 0 ? "ok" : "failed",
				 r->not_found ? "command not found" : NULL);
			probe_exec_free(pe);
			v->exec[i] = NULL;
		}
	if (v->exec_left)
		v->exec_left--;
}

static void start_observe(struct inv *v)
{
	const struct conf *c = v->F->d->conf;
	struct stall_owner own[MAXOWN];
	struct incident *inc = stall_incident(v->F->d->stall, v->incident_id);
	size_t n = inc ? stall_incident_owners(v->F->d->stall, inc, own, MAXOWN) : 0;
	char err[256];

	/* fast observation window */
	v->pending = 1;
	v->win_start = loop_mono_ns();
	v->win_end = v->win_start + c->observe_ns;
	v->win_step = step_begin(v, "observe", NULL);
	for (unsigned i = 0; i < v->nports; i++)
		v->series[i] = json_object_new_array();
	loop_timer_set(v->tick, c->observe_every_ns, c->observe_every_ns);

	/* kernel pings each way */
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);

		if (!p || !p->conf.peer_address[0] || !c->ping_count)
			continue;
		v->ping_step[i] = step_begin(v, "ping", v->ports[i]);
		v->ping[i] = probe_ping_start(v->F->d->loop, p->nsfd, p->conf.ifname,
					      p->conf.peer_address, c->ping_count,
					      c->observe_ns / (c->ping_count + 1),
					      c->observe_ns, ping_done, v, err, sizeof(err));
		if (v->ping[i])
			v->pending++;
		else
			step_end(v, v->ping_step[i], "failed", err);
	}

	/* engine threads: owners of the stalled connections, both ends */
	v->th_step = step_begin(v, "threads", NULL);
	for (size_t i = 0; i < n && v->npids < MAXOWN; i++) {
		int pid = own[i].pid, dup = 0;
		char comm[64];

		if (!pid && own[i].inode &&
		    sockdiag_inode_owner(own[i].inode, &pid, comm, sizeof(comm)) < 0)
			continue;
		for (unsigned j = 0; j < v->npids; j++)
			dup |= v->pids[j] == pid;
		if (!pid || dup)
			continue;
		if (probe_threads_snapshot(pid, &v->th1[v->npids], err, sizeof(err)) == 0)
			v->pids[v->npids++] = pid;
		else
			log_debug("investigation %" PRIu64 ": threads of %d: %s", v->id, pid, err);
	}
	v->pending++;
	loop_timer_set(v->timer, THREAD_GAP_NS, 0);

	/* external probes, in their port's namespace; not waited for */
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);

		for (unsigned k = 0; p && k < p->conf.nprobe && v->nexec < MAXEXEC; k++) {
			char **argv = NULL;
			int idx = (int)v->nexec;

			v->exec_step[idx] = step_begin(v, "probe", v->ports[i]);
			if (probe_exec_split(p->conf.probe[k], &argv, err, sizeof(err)) < 0) {
				step_end(v, v->exec_step[idx], "failed", err);
				continue;
			}
			v->exec[idx] = probe_exec_start(v->F->d->loop, (const char *const *)argv,
							p->nsfd, c->probe_timeout_ns, 64 * 1024,
							exec_done, v, err, sizeof(err));
			probe_exec_argv_free(argv);
			if (!v->exec[idx]) {
				step_end(v, v->exec_step[idx], "failed", err);
				continue;
			}
			v->nexec++;
			v->exec_left++;
		}
	}
}

/* "(tcp and host A and port P and host B and port Q) or ... or icmp" */
static void capture_filter(struct inv *v, char *buf, size_t len)
{
	struct incident *inc = stall_incident(v->F->d->stall, v->incident_id);
	struct json_object *ij = inc ? incident_json(inc) : NULL, *fl;
	size_t off = 0;

	buf[0] = 0;
	if (ij && json_object_object_get_ex(ij, "flows", &fl))
		for (size_t i = 0; i < json_object_array_length(fl) && off < len - 200; i++) {
			struct json_object *t;
			char proto[8], a[80], b[80], *pa, *pb;

			if (!json_object_object_get_ex(json_object_array_get_idx(fl, i), "tuple", &t))
				continue;
			if (sscanf(json_object_get_string(t), "%7s %79s -> %79s", proto, a, b) != 3)
				continue;
			pa = strrchr(a, ':');
			pb = strrchr(b, ':');
			if (!pa || !pb || (strcmp(proto, "tcp") && strcmp(proto, "udp")))
				continue;
			*pa++ = 0;
			*pb++ = 0;
			off += (size_t)snprintf(buf + off, len - off,
				"(%s and host %s and port %s and host %s and port %s) or ", proto,
				a[0] == '[' ? a + 1 : a, pa, b[0] == '[' ? b + 1 : b, pb);
		}
	json_object_put(ij);
	for (char *q = buf; (q = strchr(q, ']')); )
		memmove(q, q + 1, strlen(q));
	snprintf(buf + off, len - off, "icmp or icmp6");
}

static void cap_done(struct probe_cap *pc, void *arg)
{
	struct inv *v = arg;

	for (unsigned i = 0; i < v->nports; i++)
		if (v->cap[i] == pc) {
			const struct probe_cap_result *r = probe_cap_result(pc);
			struct json_object *o = json_object_new_object();
			char note[128];

			json_object_object_add(o, "port", json_object_new_string(v->ports[i]));
			probe_cap_to_json(pc, o);
			if (v->npcap < MAXP * 2 && r->path[0])
				util_strlcpy(v->pcap[v->npcap++], r->path, sizeof(v->pcap[0]));
			json_object_array_add(rec_array(v, "captures"), o);
			snprintf(note, sizeof(note), "%u frames, %s%s", r->packets,
				 r->stop_reason, r->promisc_requested ? (r->transition ?
				 ", promiscuous transition" : ", no promiscuous transition") : "");
			step_end(v, v->cap_step[i], r->error[0] ? "failed" : "ok", r->error[0] ? r->error : note);
			probe_cap_free(pc);
			v->cap[i] = NULL;
		}
	finish_one(v);
}

static void start_captures(struct inv *v, int promisc)
{
	const struct conf *c = v->F->d->conf;
	char filter[2048], path[PATH_MAX + 128], dir[PATH_MAX + 16], err[256];

	capture_filter(v, filter, sizeof(filter));
	snprintf(dir, sizeof(dir), "%s/work", c->state_dir);
	mkdir(c->state_dir, 0750);
	mkdir(dir, 0750);
	v->action_ns[promisc ? 1 : 0] = loop_mono_ns();
	v->pending = 1;         /* released below, after every start */
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);

		if (!p || p->state != PORT_UP || !p->conf.ifname[0])
			continue;
		if (promisc && !p->conf.promisc_capture)
			continue;
		v->cap_step[i] = step_begin(v, promisc ? "capture-promisc" : "capture", v->ports[i]);
		snprintf(path, sizeof(path), "%s/inv%" PRIu64 "-%s-%s.pcap", dir, v->id,
			 v->ports[i], promisc ? "promisc" : "plain");
		v->cap[i] = probe_cap_start(v->F->d->loop, p->nsfd, p->conf.ifname, filter,
					    promisc, c->snaplen, c->capture_ns, 10000, 8u << 20,
					    path, cap_done, v, err, sizeof(err));
		if (v->cap[i])
			v->pending++;
		else
			step_end(v, v->cap_step[i], "failed", err);
	}
	finish_one(v);
}

static int still_stalled(struct inv *v)
{
	struct incident *inc;

	if (!v->incident_id)
		return 1;       /* manual investigation: no incident to ask */
	inc = stall_incident(v->F->d->stall, v->incident_id);
	return inc && !incident_ended(inc);
}

static int reprogram(struct forensics *F, struct port *p, struct json_object *o, int manual);

static void watch_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	advance(arg);
}

/* ---- the evidence bundle ---- */

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *x = NULL;

	if (o)
		json_object_object_get_ex(o, k, &x);
	return x;
}

static void hook_done(struct probe_exec *pe, void *arg)
{
	struct forensics *F = arg;
	const struct probe_exec_result *r = probe_exec_result(pe);

	if (r->not_found)
		log_warnx("bundle_hook: command not found: %s", F->d->conf->bundle_hook);
	else if (r->timed_out)
		log_warnx("bundle_hook: timed out and was killed");
	else if (r->exited && r->status == 0)
		log_info("bundle_hook: done (exit 0)");
	else
		log_warnx("bundle_hook: failed (%s %d)%s%.*s", r->signaled ? "signal" : "exit",
			  r->signaled ? r->signo : r->status, r->out_len ? ": " : "",
			  (int)(r->out_len > 200 ? 200 : r->out_len), r->out ? r->out : "");
	probe_exec_free(pe);
	F->hook = NULL;
}

static void run_hook(struct forensics *F, const char *path)
{
	char **argv = NULL, **full;
	char err[256];
	int argc;

	if (!F->d->conf->bundle_hook[0])
		return;
	if (F->hook) {
		log_warnx("bundle_hook: previous run still going; not run for %s", path);
		return;
	}
	argc = probe_exec_split(F->d->conf->bundle_hook, &argv, err, sizeof(err));
	if (argc < 0) {
		log_warnx("bundle_hook: %s", err);
		return;
	}
	full = calloc((size_t)argc + 2, sizeof(char *));
	if (!full) {
		probe_exec_argv_free(argv);
		return;
	}
	for (int i = 0; i < argc; i++)
		full[i] = argv[i];
	full[argc] = (char *)path;
	F->hook = probe_exec_start(F->d->loop, (const char *const *)full, -1,
				   F->d->conf->hook_timeout_ns, 16 * 1024, hook_done, F,
				   err, sizeof(err));
	if (!F->hook)
		log_warnx("bundle_hook: %s", err);
	free(full);
	probe_exec_argv_free(argv);
}

struct filelist {
	struct bundle_file f[64];
	char *owned[64];
	size_t n;
};

static void add_json(struct filelist *fl, const char *name, struct json_object *o)
{
	const char *s;

	if (!o || fl->n >= 64)
		return;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	fl->owned[fl->n] = strdup(s);
	if (!fl->owned[fl->n])
		return;
	fl->f[fl->n].name = strdup(name);
	fl->f[fl->n].data = fl->owned[fl->n];
	fl->f[fl->n].len = strlen(fl->owned[fl->n]);
	fl->n++;
}

static void add_text(struct filelist *fl, const char *name, char *text /* owned */)
{
	if (!text || fl->n >= 64) {
		free(text);
		return;
	}
	fl->owned[fl->n] = text;
	fl->f[fl->n].name = strdup(name);
	fl->f[fl->n].data = text;
	fl->f[fl->n].len = strlen(text);
	fl->n++;
}

/* The recorder window of port p from `from` to now: the first sample's
 * values, then per sample only the counters that moved. */
static struct json_object *recorder_json(struct port *p, uint64_t from)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	unsigned f, l, n = rec_window(p->rec, from, loop_mono_ns(), &f, &l);
	const struct rec_sample *prev = NULL;

	json_object_object_add(o, "port", json_object_new_string(p->conf.name));
	for (unsigned i = 0; n && i <= l - f; i++) {
		const struct rec_sample *s = rec_get(p->rec, f + i);
		struct json_object *e = json_object_new_object(), *src = json_object_new_object();

		json_object_object_add(e, "mono_ns", json_object_new_uint64(s->mono_ns));
		json_object_object_add(e, "real_ns", json_object_new_uint64(s->real_ns));
		for (unsigned k = 0; k < p->nsrc; k++) {
			const struct rec_part *pt = &s->part[k];
			const struct rec_part *pp = prev ? &prev->part[k] : NULL;
			struct json_object *c;

			if (!pt->lay || !p->src[k].s.ops)
				continue;
			c = json_object_new_object();
			for (unsigned j = 0; j < pt->lay->n; j++) {
				int pj = pp && pp->lay ? (pp->lay == pt->lay ? (int)j :
					 clayout_find(pp->lay, pt->lay->names[j])) : -1;

				if (pj >= 0 && pp->vals[pj] == pt->vals[j])
					continue;
				json_object_object_add(c, pt->lay->names[j],
						       json_object_new_uint64(pt->vals[j]));
			}
			json_object_object_add(src, p->src[k].s.ops->name, c);
		}
		json_object_object_add(e, prev ? "changed" : "values", src);
		json_object_array_add(arr, e);
		prev = s;
	}
	json_object_object_add(o, "samples", arr);
	return o;
}

static struct json_object *ports_json(struct inv *v)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);
		struct json_object *po = json_object_new_object();

		if (!p)
			continue;
		json_object_object_add(po, "interface", json_object_new_string(p->conf.ifname));
		json_object_object_add(po, "netns", json_object_new_string(p->conf.netns));
		json_object_object_add(po, "profile", json_object_new_string(conf_profile_name(p->profile)));
		ident_to_json(p->ident, po);
		json_object_object_add(po, "rdma_device", json_object_new_string(p->rdma_dev));
		json_object_object_add(o, v->ports[i], po);
	}
	return o;
}

static void write_bundle(struct inv *v)
{
	const struct conf *c = v->F->d->conf;
	struct json_object *man = json_object_new_object(), *verdict = get(v->rec, "verdict");
	struct json_object *links = json_object_new_object(), *flows = json_object_new_object();
	struct filelist fl = { 0 };
	struct utsname u;
	char host[256] = "", name[256], path[PATH_MAX], err[512], kernel[400];
	const char *vname = verdict && get(verdict, "verdict") ?
			    json_object_get_string(get(verdict, "verdict")) : "unknown";
	uint64_t from;
	int rc;

	gethostname(host, sizeof(host) - 1);
	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.version);
	json_object_object_add(man, "trigger", json_object_get(get(v->rec, "trigger")));
	json_object_object_add(man, "host", json_object_new_string(host));
	json_object_object_add(man, "kernel", json_object_new_string(kernel));
	json_object_object_add(man, "nicstalld_version", json_object_new_string(NICSTALL_VERSION));
	json_object_object_add(man, "incident_id", json_object_new_uint64(v->incident_id));
	json_object_object_add(man, "investigation_id", json_object_new_uint64(v->id));
	json_object_object_add(man, "port", json_object_new_string(v->ports[0]));
	json_object_object_add(man, "opened_real_ns", json_object_new_uint64(v->open_real_ns));
	json_object_object_add(man, "ports", ports_json(v));
	json_object_object_add(man, "verdict", json_object_get(verdict));
	json_object_object_add(man, "facts", json_object_get(get(v->rec, "facts")));
	json_object_object_add(man, "release", json_object_get(get(v->rec, "release")));
	json_object_object_add(man, "steps", json_object_get(v->steps));

	add_json(&fl, "record.json", v->rec);
	add_json(&fl, "facts.json", get(v->rec, "facts"));
	add_json(&fl, "window.json", get(v->rec, "window"));
	add_json(&fl, "threads.json", get(v->rec, "threads"));
	add_json(&fl, "pings.json", get(v->rec, "pings"));
	add_json(&fl, "journal.json", get(v->rec, "journal"));
	json_object_object_add(flows, "at_open", json_object_get(get(get(v->rec, "snapshot"), "flows")));
	json_object_object_add(flows, "incident", json_object_get(get(get(v->rec, "incident"), "flows")));
	add_json(&fl, "flows.json", flows);
	json_object_put(flows);
	from = v->open_ns > 30000000000ull ? v->open_ns - 30000000000ull : 0;
	for (unsigned i = 0; i < v->nports; i++) {
		struct port *p = port_of(v, i);
		struct json_object *pj = get(get(v->rec, "snapshot"), v->ports[i]), *r;
		char fn[96];

		if (pj) {
			struct json_object *l = json_object_new_object();

			json_object_object_add(l, "link", json_object_get(get(pj, "link")));
			json_object_object_add(l, "neighbours", json_object_get(get(pj, "neighbours")));
			json_object_object_add(links, v->ports[i], l);
		}
		if (!p)
			continue;
		r = recorder_json(p, from);
		snprintf(fn, sizeof(fn), "recorder/%s.json", v->ports[i]);
		add_json(&fl, fn, r);
		json_object_put(r);
	}
	add_json(&fl, "links.json", links);
	json_object_put(links);
	for (size_t i = 0; get(v->rec, "probes") && i < json_object_array_length(get(v->rec, "probes")); i++) {
		struct json_object *pr = json_object_array_get_idx(get(v->rec, "probes"), i);
		char fn[64];
		char *txt;

		char cmdline[1024] = "";
		size_t off = 0;
		struct json_object *av = get(pr, "argv");

		for (size_t k = 0; av && json_object_is_type(av, json_type_array) &&
		     k < json_object_array_length(av) && off < sizeof(cmdline) - 1; k++)
			off += (size_t)snprintf(cmdline + off, sizeof(cmdline) - off, "%s%s",
				k ? " " : "", json_object_get_string(json_object_array_get_idx(av, k)));
		snprintf(fn, sizeof(fn), "probes/%zu.txt", i + 1);
		if (asprintf(&txt, "$ %s\n%s", cmdline,
			     get(pr, "output") ? json_object_get_string(get(pr, "output")) : "") > 0)
			add_text(&fl, fn, txt);
	}
	for (unsigned i = 0; i < v->npcap && fl.n < 64; i++) {
		char fn[PATH_MAX];
		const char *base = strrchr(v->pcap[i], '/');

		snprintf(fn, sizeof(fn), "captures/%s", base ? base + 1 : v->pcap[i]);
		fl.f[fl.n].name = strdup(fn);
		fl.f[fl.n].src_path = v->pcap[i];
		fl.n++;
	}
	add_text(&fl, "summary.txt", bundle_summary(man));

	bundle_name(name, sizeof(name), v->open_real_ns, host, v->ports[0], vname);
	rc = bundle_write(c->state_dir, name, man, fl.f, fl.n, 16u << 20, path, sizeof(path),
			  err, sizeof(err));
	if (rc < 0) {
		log_errx("incident %" PRIu64 ": bundle not written: %s (the record stays in memory: "
			 "nicstallctl incident show %" PRIu64 ")", v->incident_id, err, v->id);
		json_object_object_add(v->rec, "bundle_error", json_object_new_string(err));
	} else {
		util_strlcpy(v->bundle, path, sizeof(v->bundle));
		json_object_object_add(v->rec, "bundle", json_object_new_string(path));
		log_warnx("incident %" PRIu64 ": bundle %s (verdict %s)", v->incident_id, path, vname);
		for (unsigned i = 0; i < v->npcap; i++)
			unlink(v->pcap[i]);
		bundle_retention(c->state_dir, c->bundle_max_count, c->bundle_max_bytes);
		run_hook(v->F, path);
	}
	for (size_t i = 0; i < fl.n; i++) {
		free((char *)fl.f[i].name);
		free(fl.owned[i]);
	}
	json_object_put(man);
}

/* Facts from the record, then the verdict from the rules. */
static void classify(struct inv *v)
{
	struct json_object *facts = facts_build(v->F->d, v->rec), *verdict, *x;

	if (v->F->d->rules)
		verdict = rules_classify(v->F->d->rules, facts);
	else {
		verdict = json_object_new_object();
		json_object_object_add(verdict, "verdict", json_object_new_string("unknown"));
		json_object_object_add(verdict, "explanation",
				       json_object_new_string("no rules are loaded"));
	}
	json_object_object_add(v->rec, "facts", facts);
	json_object_object_add(v->rec, "verdict", verdict);
	log_warnx("investigation %" PRIu64 " (port %s): verdict %s: %s", v->id, v->ports[0],
		  json_object_object_get_ex(verdict, "verdict", &x) ? json_object_get_string(x) : "?",
		  json_object_object_get_ex(verdict, "explanation", &x) ? json_object_get_string(x) : "");
}

static void finalize(struct inv *v)
{
	const struct conf *c = v->F->d->conf;
	struct json_object *j = NULL, *rel = json_object_new_object();
	struct incident *inc = stall_incident(v->F->d->stall, v->incident_id);
	char err[256];
	int st;
	static const char *acts[3] = { "capture", "promisc-capture", "reprogram" };

	snapshot_all(v, "snapshot-after");
	st = step_begin(v, "journal", NULL);
	if (probe_journal_excerpt(c->journal_dir[0] ? c->journal_dir : NULL,
				  (v->open_real_ns / 1000) - 30000000ull, loop_real_ns() / 1000,
				  NULL, 200, 64 * 1024, &j, err, sizeof(err)) < 0 || !j) {
		step_end(v, st, "failed", err);
	} else {
		struct json_object *av;
		int avail = !json_object_object_get_ex(j, "available", &av) ||
			    json_object_get_boolean(av);

		json_object_object_add(v->rec, "journal", j);
		step_end(v, st, avail ? "ok" : "unavailable", avail ? NULL : "no journal available");
	}
	/* which action released the flows */
	if (v->incident_id && inc && incident_released(inc)) {
		const char *action = "self";
		uint64_t from = v->open_ns;

		for (int k = 2; k >= 0; k--)
			if (v->action_ns[k] && v->action_ns[k] <= v->release_ns) {
				action = acts[k];
				from = v->action_ns[k];
				break;
			}
		json_object_object_add(rel, "released", json_object_new_boolean(1));
		json_object_object_add(rel, "action", json_object_new_string(action));
		json_object_object_add(rel, "after_ms", json_object_new_double(
			(double)(v->release_ns - from) / 1e6));
	} else {
		json_object_object_add(rel, "released", json_object_new_boolean(0));
		json_object_object_add(rel, "action", json_object_new_string("none"));
	}
	json_object_object_add(v->rec, "release", rel);
	if (inc)
		json_object_object_add(v->rec, "incident", incident_json(inc));
	classify(v);
	v->phase = PH_DONE;
	v->done = 1;
	json_object_object_add(v->rec, "state", json_object_new_string("complete"));
	write_bundle(v);
	log_info("investigation %" PRIu64 " (incident %" PRIu64 ", port %s): complete, %s",
		 v->id, v->incident_id, v->ports[0],
		 json_object_get_string(json_object_object_get(rel, "action")));
}

static void advance(struct inv *v)
{
	if (v->done)
		return;
	switch (v->phase) {
	case PH_OBSERVE:
		v->phase = PH_CAPTURE;
		start_captures(v, 0);
		return;
	case PH_CAPTURE:
		v->phase = PH_PROMISC;
		if (still_stalled(v)) {
			start_captures(v, 1);
			return;
		}
		/* fall through: nothing left to release */
		/* FALLTHROUGH */
	case PH_PROMISC:
		v->phase = PH_RECOVER;
		for (unsigned i = 0; i < v->nports && still_stalled(v); i++) {
			struct port *p = port_of(v, i);
			struct json_object *o;

			if (!p || !p->conf.recover)
				continue;
			o = json_object_new_object();
			v->action_ns[2] = loop_mono_ns();
			int st = step_begin(v, "reprogram", v->ports[i]);
			int rc = reprogram(v->F, p, o, 0);

			step_end(v, st, rc == 0 ? "ok" : "refused",
				 json_object_get_string(json_object_object_get(o, rc ? "error" : "sequence")));
			json_object_array_add(rec_array(v, "reprograms"), o);
			/* each allowed port of the pair in turn, never two at
			 * once: the drop may sit at either end */
		}
		v->phase = PH_WATCH;
		loop_timer_set(v->timer, still_stalled(v) ? v->F->d->conf->release_wait_ns : 1000000, 0);
		return;
	case PH_WATCH:
		if (v->exec_left) {
			/* external probes still running (each has a timeout):
			 * their output belongs in the bundle */
			loop_timer_set(v->timer, 100000000ull, 0);
			return;
		}
		finalize(v);
		return;
	default:
		return;
	}
}

/* ---- reprogram ---- */

static int reprogram(struct forensics *F, struct port *p, struct json_object *o, int manual)
{
	const struct conf *c = F->d->conf;
	uint64_t now = loop_mono_ns();
	struct nl_link l;
	char err[256], msg[640], seq[128];
	unsigned orig, first, i;

	json_object_object_add(o, "port", json_object_new_string(p->conf.name));
	json_object_object_add(o, "manual", json_object_new_boolean(manual));
#define REFUSE(...) do { snprintf(msg, sizeof(msg), __VA_ARGS__); \
		json_object_object_add(o, "error", json_object_new_string(msg)); \
		log_warnx("port %s: reprogram refused: %s", p->conf.name, msg); return -1; } while (0)
	if (!p->conf.recover)
		REFUSE("recover = reprogram is not set for port %s", p->conf.name);
	if (p->state != PORT_UP || !p->conf.ifname[0])
		REFUSE("port %s is down (%s)", p->conf.name, p->reason);
	if (F->reprogramming)
		REFUSE("another reprogram is running");
	for (i = 0; i < F->nlast; i++)
		if (!strcmp(F->last_rp[i].port, p->conf.name) &&
		    now - F->last_rp[i].at < c->reprogram_every_ns)
			REFUSE("rate limit: last reprogram of %s %.1f s ago (reprogram_interval %.0f s)",
			       p->conf.name, (double)(now - F->last_rp[i].at) / 1e9,
			       (double)c->reprogram_every_ns / 1e9);
	if (nl_link_get(p->nsfd, p->conf.ifname, 0, &l, err, sizeof(err)) < 0)
		REFUSE("%s", err);
	if (!(l.flags & IFF_UP) || !(l.flags & IFF_RUNNING))
		REFUSE("link %s is down", p->conf.ifname);
	F->reprogramming = 1;
	orig = l.flags & IFF_PROMISC;
	first = orig ? 0 : IFF_PROMISC;
	snprintf(seq, sizeof(seq), "promisc %s then %s", first ? "on" : "off", first ? "off" : "on");
	json_object_object_add(o, "sequence", json_object_new_string(seq));
	json_object_object_add(o, "was_promisc", json_object_new_boolean(!!orig));
	json_object_object_add(o, "start_mono_ns", json_object_new_uint64(now));
	if (nl_link_set_flags(p->nsfd, l.ifindex, first, IFF_PROMISC, err, sizeof(err)) < 0 ||
	    nl_link_set_flags(p->nsfd, l.ifindex, orig, IFF_PROMISC, err, sizeof(err)) < 0) {
		nl_link_set_flags(p->nsfd, l.ifindex, orig, IFF_PROMISC, err, sizeof(err));
		F->reprogramming = 0;
		REFUSE("kernel refused: %s", err);
	}
	F->reprogramming = 0;
	json_object_object_add(o, "end_mono_ns", json_object_new_uint64(loop_mono_ns()));
	if (nl_link_get(p->nsfd, p->conf.ifname, 0, &l, err, sizeof(err)) == 0)
		json_object_object_add(o, "restored", json_object_new_boolean(
			(l.flags & IFF_PROMISC) == orig));
	for (i = 0; i < F->nlast; i++)
		if (!strcmp(F->last_rp[i].port, p->conf.name))
			break;
	if (i == F->nlast && F->nlast < 32)
		util_strlcpy(F->last_rp[F->nlast++].port, p->conf.name, sizeof(F->last_rp[0].port));
	if (i < 32)
		F->last_rp[i].at = now;
	log_info("port %s: receive filter reprogrammed (%s)", p->conf.name, seq);
	return 0;
#undef REFUSE
}

/* ---- lifecycle ---- */

static void inv_free(struct inv *v)
{
	if (!v)
		return;
	loop_timer_free(v->tick);
	loop_timer_free(v->timer);
	for (unsigned i = 0; i < MAXP; i++) {
		probe_ping_free(v->ping[i]);
		probe_cap_free(v->cap[i]);
		snapv_free(&v->first[i]);
		snapv_free(&v->prev[i]);
		json_object_put(v->series[i]);
	}
	for (unsigned i = 0; i < v->nexec; i++)
		probe_exec_free(v->exec[i]);
	if (v->phase == PH_OBSERVE)
		for (unsigned i = 0; i < v->npids; i++)
			probe_threads_free(&v->th1[i]);
	json_object_put(v->rec);
	free(v);
}

static void timer_dispatch(struct loop_timer *t, void *arg)
{
	struct inv *v = arg;

	if (v->phase == PH_OBSERVE)
		threads_second(t, arg);
	else
		watch_cb(t, arg);
}

static struct inv *inv_start(struct forensics *F, const char *port, uint64_t incident_id)
{
	struct inv *v = calloc(1, sizeof(*v));
	struct port *p = daemon_port(F->d, port);

	if (!v || !p) {
		free(v);
		return NULL;
	}
	v->F = F;
	v->id = ++F->ninv;
	v->incident_id = incident_id;
	v->open_ns = loop_mono_ns();
	v->open_real_ns = loop_real_ns();
	util_strlcpy(v->ports[v->nports++], port, sizeof(v->ports[0]));
	if (p->conf.peer[0] && daemon_port(F->d, p->conf.peer))
		util_strlcpy(v->ports[v->nports++], p->conf.peer, sizeof(v->ports[0]));
	v->tick = loop_timer_new(F->d->loop, tick_cb, v);
	v->timer = loop_timer_new(F->d->loop, timer_dispatch, v);
	v->rec = json_object_new_object();
	v->steps = json_object_new_array();
	if (!v->tick || !v->timer || !v->rec) {
		inv_free(v);
		return NULL;
	}
	json_object_object_add(v->rec, "id", json_object_new_uint64(v->id));
	json_object_object_add(v->rec, "incident", NULL);
	json_object_object_add(v->rec, "incident_id", json_object_new_uint64(incident_id));
	json_object_object_add(v->rec, "trigger", json_object_new_string(incident_id ? "stall" : "manual"));
	json_object_object_add(v->rec, "port", json_object_new_string(port));
	json_object_object_add(v->rec, "opened_mono_ns", json_object_new_uint64(v->open_ns));
	json_object_object_add(v->rec, "opened_real_ns", json_object_new_uint64(v->open_real_ns));
	json_object_object_add(v->rec, "state", json_object_new_string("running"));
	json_object_object_add(v->rec, "steps", v->steps);
	inv_free(F->inv[(v->id - 1) % KEEP]);
	F->inv[(v->id - 1) % KEEP] = v;
	log_info("investigation %" PRIu64 " on port %s%s%s started", v->id, port,
		 v->nports > 1 ? " and " : "", v->nports > 1 ? v->ports[1] : "");
	snapshot_all(v, "snapshot");
	start_observe(v);
	return v;
}

void forensic_on_incident(struct incident *inc, enum incident_event event, void *arg)
{
	struct forensics *F = arg;

	if (event == INCIDENT_OPEN) {
		inv_start(F, incident_port(inc), incident_id(inc));
		return;
	}
	for (unsigned i = 0; i < KEEP; i++) {
		struct inv *v = F->inv[i];

		if (v && v->incident_id == incident_id(inc) && !v->done) {
			if (event == INCIDENT_END && incident_released(inc) && !v->release_ns)
				v->release_ns = loop_mono_ns();
			/* INCIDENT_JOIN: the flows join the running sequence */
		}
	}
}

int forensic_investigate(struct forensics *F, const char *port, uint64_t *id,
			 char *err, size_t errlen)
{
	struct inv *v;

	if (!daemon_port(F->d, port)) {
		snprintf(err, errlen, "no port '%s'", port);
		return -1;
	}
	v = inv_start(F, port, 0);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*id = v->id;
	return 0;
}

int forensic_manual_bundle(struct forensics *F, const char *const *ports, size_t nports,
			   char *path, size_t pathlen, char *err, size_t errlen)
{
	struct inv *v = calloc(1, sizeof(*v));
	struct json_object *verdict;

	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	v->F = F;
	v->open_ns = loop_mono_ns();
	v->open_real_ns = loop_real_ns();
	for (size_t i = 0; i < nports && v->nports < MAXP; i++)
		util_strlcpy(v->ports[v->nports++], ports[i], sizeof(v->ports[0]));
	for (unsigned i = 0; !nports && i < F->d->nports && v->nports < MAXP; i++)
		util_strlcpy(v->ports[v->nports++], F->d->ports[i]->conf.name, sizeof(v->ports[0]));
	v->rec = json_object_new_object();
	v->steps = json_object_new_array();
	json_object_object_add(v->rec, "trigger", json_object_new_string("manual"));
	json_object_object_add(v->rec, "port", json_object_new_string(v->ports[0]));
	json_object_object_add(v->rec, "opened_mono_ns", json_object_new_uint64(v->open_ns));
	json_object_object_add(v->rec, "steps", v->steps);
	snapshot_all(v, "snapshot");
	verdict = json_object_new_object();
	json_object_object_add(verdict, "verdict", json_object_new_string("manual"));
	json_object_object_add(verdict, "explanation", json_object_new_string(
		"a snapshot taken on request (nicstallctl snapshot --bundle), not a stall"));
	json_object_object_add(v->rec, "verdict", verdict);
	json_object_object_add(v->rec, "facts", facts_build(F->d, v->rec));
	json_object_object_add(v->rec, "state", json_object_new_string("complete"));
	write_bundle(v);
	if (!v->bundle[0]) {
		struct json_object *e = get(v->rec, "bundle_error");

		snprintf(err, errlen, "%s", e ? json_object_get_string(e) : "bundle not written");
		inv_free(v);
		return -1;
	}
	util_strlcpy(path, v->bundle, pathlen);
	inv_free(v);
	return 0;
}

struct json_object *forensic_recover(struct forensics *F, const char *port)
{
	struct port *p = daemon_port(F->d, port);
	struct json_object *o = json_object_new_object();

	if (!p) {
		json_object_object_add(o, "error", json_object_new_string("no such port"));
		return o;
	}
	reprogram(F, p, o, 1);
	return o;
}

struct json_object *forensic_record(struct forensics *F, uint64_t id)
{
	struct inv *v;

	if (!id)
		id = F->ninv;
	if (!id || id > F->ninv || F->ninv - id >= KEEP)
		return NULL;
	v = F->inv[(id - 1) % KEEP];
	if (!v)
		return NULL;
	if (!v->done) {
		struct json_object *ph = json_object_new_string(phase_name[v->phase]);

		json_object_object_add(v->rec, "phase", ph);
	}
	return json_object_get(v->rec);
}

struct json_object *forensic_list(struct forensics *F)
{
	struct json_object *a = json_object_new_array();

	for (uint64_t id = F->ninv > KEEP ? F->ninv - KEEP + 1 : 1; id <= F->ninv; id++) {
		struct inv *v = F->inv[(id - 1) % KEEP];
		struct json_object *o;

		if (!v)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_uint64(v->id));
		json_object_object_add(o, "incident_id", json_object_new_uint64(v->incident_id));
		json_object_object_add(o, "port", json_object_new_string(v->ports[0]));
		json_object_object_add(o, "state", json_object_new_string(v->done ? "complete" :
									  phase_name[v->phase]));
		json_object_array_add(a, o);
	}
	return a;
}

struct forensics *forensic_new(struct daemon *d)
{
	struct forensics *F = calloc(1, sizeof(*F));

	if (F)
		F->d = d;
	return F;
}

void forensic_free(struct forensics *F)
{
	if (!F)
		return;
	probe_exec_free(F->hook);
	for (unsigned i = 0; i < KEEP; i++)
		inv_free(F->inv[i]);
	free(F);
}
