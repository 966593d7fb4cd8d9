/* peersnap: what this daemon does when a peer says "snapshot now": every
 * port's counters, link and flows at once, the threads of the processes
 * behind the notice's flows where this host has their other end, a second
 * reading after peer_window; then the facts of this host around the
 * notice (rules/facts.h, as for its own incidents), a bundle with verdict
 * "peer-snapshot" linked to the origin's incident, and the signed summary
 * the origin classifies with (peers_answer).
 *
 * A notice reads and records; it never starts a capture, a ping, a probe
 * or a reprogram, and changes nothing of a port. */
#include "daemon/forensic/peersnap.h"
#include "daemon/forensic/bundler.h"
#include "daemon/forensic/forensic.h"
#include "daemon/detect/stall.h"
#include "bundle/bundle.h"
#include "daemon/conf.h"
#include "daemon/forensic/evidence.h"
#include "daemon/forensic/facts.h"
#include "daemon/peers/peermsg.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/record.h"
#include "daemon/forensic/timeline.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_threads.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXPSNAP 8             /* snapshots under way at once */
#define MAXOWN 8               /* processes whose threads are read */

struct psnaps {
	const struct psnap_env *E;
	struct psnap *s[MAXPSNAP];
};

struct psnap {
	struct psnaps *P;
	char peer[32];
	uint64_t token;
	struct json_object *notice;
	uint64_t recv_mono, recv_real;
	char ports[BUNDLER_MAX_PORTS][32];
	unsigned nports;
	struct evid_counters first[BUNDLER_MAX_PORTS];
	struct json_object *rec, *steps;
	int pids[MAXOWN];
	unsigned npids;
	struct probe_threads_snap th1[MAXOWN];
	struct loop_timer *t;
	int win_step;
};

static void psnap_free(struct psnap *s)
{
	if (!s)
		return;
	loop_timer_free(s->t);
	for (unsigned i = 0; i < BUNDLER_MAX_PORTS; i++)
		evid_counters_free(&s->first[i]);
	for (unsigned i = 0; i < s->npids; i++)
		s->P->E->pr->threads_free(&s->th1[i]);
	json_object_put(s->notice);
	json_object_put(s->rec);
	free(s);
}

struct psnaps *psnaps_new(const struct psnap_env *env)
{
	struct psnaps *P = calloc(1, sizeof(*P));

	if (P)
		P->E = env;
	return P;
}

void psnaps_free(struct psnaps *P)
{
	if (!P)
		return;
	for (unsigned i = 0; i < MAXPSNAP; i++)
		psnap_free(P->s[i]);
	free(P);
}

void psnap_host_name(const struct psnap_env *E, char *buf, size_t len)
{
	if (E->peers && peers_host(E->peers) && peers_host(E->peers)[0])
		util_strlcpy(buf, peers_host(E->peers), len);
	else if (E->c->host_name[0])
		util_strlcpy(buf, E->c->host_name, len);
	else if (gethostname(buf, len - 1) < 0)
		util_strlcpy(buf, "this host", len);
	buf[len - 1] = 0;
}

static int step_begin(struct psnap *s, const char *name)
{
	return steps_begin(s->steps, s->recv_mono, loop_mono_ns(), name, NULL);
}

static void step_end(struct psnap *s, int idx, const char *outcome, const char *note)
{
	steps_end(s->steps, s->recv_mono, loop_mono_ns(), idx, outcome, note);
}

static int in_notice(struct json_object *notice, const char *tuple)
{
	struct json_object *fl = jx_arr(notice, "flows");

	for (size_t i = 0; i < jx_len(fl); i++)
		if (peermsg_same_conn(json_object_get_string(json_object_array_get_idx(fl, i)), tuple))
			return 1;
	return 0;
}

/* Threads of the processes holding this host's end of the notice's flows. */
static void threads_first(struct psnap *s, struct json_object *flows)
{
	const struct forensic_probes *pr = s->P->E->pr;
	char err[256];

	for (size_t i = 0; i < jx_len(flows) && s->npids < MAXOWN; i++) {
		struct json_object *f = json_object_array_get_idx(flows, i);
		int pid = (int)jx_u64(f, "pid"), dup = 0;
		char comm[64];

		if (!in_notice(s->notice, jx_str(f, "tuple")))
			continue;
		if (!pid && jx_u64(f, "inode") &&
		    pr->inode_owner(jx_u64(f, "inode"), &pid, comm, sizeof(comm)) < 0)
			continue;
		for (unsigned k = 0; k < s->npids; k++)
			dup |= s->pids[k] == pid;
		if (pid <= 0 || dup)
			continue;
		if (pr->threads_snapshot(pid, &s->th1[s->npids], err, sizeof(err)) == 0)
			s->pids[s->npids++] = pid;
	}
}

/* The flows of the summary: counts by state, and a bounded list, the
 * notice's own connections first, then stalled, waiting, the rest. */
static struct json_object *summary_flows(struct psnap *s, struct json_object *flows)
{
	struct json_object *o = json_object_new_object(), *list = json_object_new_array();
	uint64_t n[3] = { 0 };
	size_t total = jx_len(flows);

	for (int pass = 0; pass < 4; pass++)
		for (size_t i = 0; i < total; i++) {
			struct json_object *f = json_object_array_get_idx(flows, i), *e;
			const char *st = jx_text(f, "state"), *tuple = jx_str(f, "tuple");
			int mine = in_notice(s->notice, tuple);
			int rank = mine ? 0 : !strcmp(st, "stalled") ? 1 : !strcmp(st, "waiting") ? 2 : 3;

			if (pass == 0)
				n[!strcmp(st, "stalled") ? 0 : !strcmp(st, "waiting") ? 1 : 2]++;
			if (rank != pass || json_object_array_length(list) >= PEERMSG_MAX_FLOWS)
				continue;
			e = json_object_new_object();
			jx_add_str(e, "tuple", tuple);
			jx_add_str(e, "state", st);
			jx_copy(e, "source", f, "source");
			if (jx_get(f, "waiting_ms"))
				jx_copy(e, "waiting_ms", f, "waiting_ms");
			jx_copy(e, "tx_msgs", f, "tx_msgs");
			jx_copy(e, "rx_msgs", f, "rx_msgs");
			jx_add_u64(e, "held", jx_u64(jx_get(f, "held"), "unsent") +
				   jx_u64(jx_get(f, "held"), "unread") + jx_u64(jx_get(f, "held"), "staged"));
			json_object_array_add(list, e);
		}
	jx_add_u64(o, "total", total);
	jx_add_u64(o, "stalled", n[0]);
	jx_add_u64(o, "waiting", n[1]);
	jx_add_u64(o, "idle", n[2]);
	json_object_object_add(o, "list", list);
	return o;
}

struct sigctx {
	const struct rules *r;
	const char *profile;
	struct json_object *counters, *out_sig, *out_cnt;
};

static void sig_cb(const char *name, void *arg)
{
	struct sigctx *x = arg;
	double v;

	if (rules_signal(x->r, x->profile, name, x->counters, &v) == 0)
		json_object_object_add(x->out_sig, name, jx_new_fixed(v, 6));
}

static void read_cb(const char *counter, struct json_object *value, void *arg)
{
	struct sigctx *x = arg;

	if (!jx_get(x->out_cnt, counter))
		json_object_object_add(x->out_cnt, counter, json_object_get(value));
}

/* One port of the summary from its facts: each period with the counters
 * the signals read and the signals' values. */
static struct json_object *summary_port(const struct rules *r, struct json_object *fp)
{
	static const char *const per[] = { FK_PER_STALL, FK_PER_WINDOW, FK_PER_BASELINE };
	struct json_object *o = json_object_new_object();
	const char *profile = jx_str(fp, FK_P_PROFILE);

	jx_add_str(o, FK_P_PROFILE, profile ? profile : "generic");
	for (int i = 0; i < 3; i++) {
		struct json_object *pi = jx_obj(fp, per[i]), *po;
		struct sigctx x;

		if (!pi)
			continue;
		po = json_object_new_object();
		x = (struct sigctx){ r, profile ? profile : "generic", jx_obj(pi, FK_COUNTERS),
				     json_object_new_object(), json_object_new_object() };
		jx_copy(po, FK_SPAN_S, pi, FK_SPAN_S);
		rules_signal_reads(r, x.profile, x.counters, read_cb, &x);
		rules_signals_each(r, x.profile, sig_cb, &x);
		json_object_object_add(po, FK_COUNTERS, x.out_cnt);
		json_object_object_add(po, FK_PE_SIGNALS, x.out_sig);
		json_object_object_add(o, per[i], po);
	}
	return o;
}

/* "here: RDMA work 0 over the 40 ms window, fabric errors 0, ..." */
static void explain(struct psnap *s, struct json_object *sum, char *buf, size_t len)
{
	struct json_object *ports = jx_obj(sum, "ports");
	size_t off = 0;

	off += (size_t)snprintf(buf + off, len - off, "a snapshot for peer %s (host %s), whose "
				"incident %" PRIu64 " opened: ", s->peer,
				jx_text(s->notice, "origin"), jx_u64(s->notice, "incident"));
	if (!ports)
		return;
	json_object_object_foreach(ports, name, po) {
		struct json_object *w = jx_obj(jx_obj(po, FK_PER_WINDOW), FK_PE_SIGNALS);
		struct json_object *st = jx_obj(jx_obj(po, FK_PER_STALL), FK_PE_SIGNALS);

		if (off >= len - 1)
			break;
		char wv[32] = "unknown", ev[32] = "unknown";

		/* counts, printed as counts ("0", not "0.000000") */
		if (jx_get(w, "rdma_work"))
			snprintf(wv, sizeof(wv), "%.15g", json_object_get_double(jx_get(w, "rdma_work")));
		if (jx_get(st, "fabric_errors"))
			snprintf(ev, sizeof(ev), "%.15g",
				 json_object_get_double(jx_get(st, "fabric_errors")));
		off += (size_t)snprintf(buf + off, len - off, "%s: RDMA work %s in the window, "
					"fabric errors %s since the stall; ", name, wv, ev);
	}
	if (off < len - 1)
		snprintf(buf + off, len - off, "this host decides nothing, the origin classifies");
}

static void finish(struct psnap *s)
{
	const struct psnap_env *F = s->P->E;
	struct json_object *facts, *sum, *verdict, *win, *flows, *tj;
	struct bundler_inv in = { 0 };
	uint64_t now = loop_mono_ns();
	char path[PATH_MAX] = "", err[512], note[2048];
	int st;

	/* the second reading: the window after the notice */
	win = json_object_new_object();
	json_object_object_add(win, "span_s", jx_new_fixed((double)(now - s->recv_mono) / 1e9, 6));
	for (unsigned i = 0; i < s->nports; i++) {
		struct port *p = ports_find(F->ports, s->ports[i]);
		struct evid_counters second = { 0 };
		struct json_object *pw;

		if (!p || !evid_counters_any(&s->first[i]))
			continue;
		port_sample(p, now, loop_real_ns(), 0);
		evid_counters_take(&second, p);
		pw = json_object_new_object();
		json_object_object_add(pw, "deltas", evid_deltas_json(p, &s->first[i], &second, 1));
		json_object_object_add(win, s->ports[i], pw);
		evid_counters_free(&second);
	}
	json_object_object_add(s->rec, IR_WINDOW, win);
	step_end(s, s->win_step, "ok", NULL);
	if (s->npids) {
		struct json_object *arr = json_object_new_array();

		st = step_begin(s, "threads");
		for (unsigned i = 0; i < s->npids; i++) {
			struct probe_threads_snap second;
			int ok = F->pr->threads_snapshot(s->pids[i], &second, err, sizeof(err)) == 0;

			tj = json_object_new_object();
			jx_add_int(tj, "pid", s->pids[i]);
			F->pr->threads_to_json(&s->th1[i], ok ? &second : NULL, tj);
			json_object_array_add(arr, tj);
			if (ok)
				F->pr->threads_free(&second);
		}
		json_object_object_add(s->rec, IR_THREADS, arr);
		step_end(s, st, "ok", NULL);
	}
	facts = facts_build(F->ports, s->rec);
	json_object_object_add(s->rec, IR_FACTS, facts);

	sum = json_object_new_object();
	jx_copy(sum, "origin", s->notice, "origin");
	jx_copy(sum, "incident", s->notice, "incident");
	jx_add_str(sum, "host", peers_host(F->peers));
	jx_add_u64(sum, "received_real_ns", s->recv_real);
	json_object_object_add(sum, "window_ms", jx_new_fixed((double)(now - s->recv_mono) / 1e6, 3));
	{
		struct json_object *ports = json_object_new_object(), *fports = jx_obj(facts, FK_PORTS);

		if (fports) {
			json_object_object_foreach(fports, name, fp)
				json_object_object_add(ports, name, summary_port(F->rules, fp));
		}
		json_object_object_add(sum, "ports", ports);
	}
	if (jx_obj(facts, FK_HOST))
		json_object_object_add(sum, FK_PE_RESOURCES, json_object_get(jx_obj(facts, FK_HOST)));
	flows = jx_get(jx_get(s->rec, IR_SNAPSHOT), IR_S_FLOWS);
	json_object_object_add(sum, "flows", summary_flows(s, flows));
	{
		struct json_object *open = json_object_new_array(), *incs = stall_incidents_json(F->stall);

		for (size_t i = 0; i < jx_len(incs); i++) {
			struct json_object *x = json_object_array_get_idx(incs, i);

			if (!strcmp(jx_text(x, "state"), "open") && json_object_array_length(open) < 8)
				json_object_array_add(open, json_object_new_uint64(jx_u64(x, "id")));
		}
		json_object_put(incs);
		json_object_object_add(sum, "incidents_open", open);
	}

	explain(s, sum, note, sizeof(note));
	verdict = json_object_new_object();
	jx_add_str(verdict, RK_VERDICT, BUNDLE_VERDICT_PEER);
	jx_add_str(verdict, RK_EXPLANATION, note);
	jx_add_str(verdict, RK_ACTION, "read this bundle beside the origin's bundle of the same "
		   "incident (its host and incident id: Peers above, manifest.json peer); the "
		   "origin's verdict decides");
	json_object_object_add(s->rec, IR_VERDICT, verdict);
	json_object_object_add(s->rec, "summary_sent", json_object_get(sum));
	jx_add_str(s->rec, IR_STATE, "complete");

	in.rec = s->rec;
	in.open_ns = s->recv_mono;
	in.open_real_ns = s->recv_real;
	for (unsigned i = 0; i < s->nports; i++) {
		in.port_names[i] = s->ports[i];
		in.ports[i] = ports_find(F->ports, s->ports[i]);
	}
	in.nports = s->nports;
	in.rules = F->rules;
	st = step_begin(s, "bundle");
	if (bundler_write(F->bundler, &in, path, sizeof(path), err, sizeof(err)) == 0) {
		const char *base = strrchr(path, '/');

		jx_add_str(sum, "bundle", base ? base + 1 : path);
	} else {
		jx_add_str(sum, "bundle_error", err);
	}
	step_end(s, st, path[0] ? "ok" : "failed", path[0] ? NULL : err);
	if (peers_answer(F->peers, s->token, sum) < 0)
		log_warnx("peer %s: the summary of incident %s:%" PRIu64 " was not sent", s->peer,
			  jx_text(s->notice, "origin"), jx_u64(s->notice, "incident"));
}

static void window_end(struct loop_timer *t, void *arg)
{
	struct psnap *s = arg;
	struct psnaps *P = s->P;

	(void)t;
	finish(s);
	for (unsigned i = 0; i < MAXPSNAP; i++)
		if (P->s[i] == s)
			P->s[i] = NULL;
	psnap_free(s);
}

void psnaps_notice(struct psnaps *P, const char *peer, struct json_object *notice,
		   uint64_t mono, uint64_t real, uint64_t token)
{
	const struct psnap_env *F = P->E;
	struct psnap *s = calloc(1, sizeof(*s));
	struct json_object *snap, *flows, *link;
	uint64_t stall_real = jx_u64(notice, "stall_real_ns");
	unsigned slot;
	int st;

	for (slot = 0; slot < MAXPSNAP && P->s[slot]; slot++)
		;
	if (!s || slot == MAXPSNAP || !F->peers) {
		log_warnx("peer %s: notice of incident %s:%" PRIu64 " not acted on: %d snapshots "
			  "for peers under way already", peer, jx_text(notice, "origin"),
			  jx_u64(notice, "incident"), MAXPSNAP);
		free(s);
		return;
	}
	s->P = P;
	util_strlcpy(s->peer, peer, sizeof(s->peer));
	s->token = token;
	s->notice = json_object_get(notice);
	s->recv_mono = mono;
	s->recv_real = real;
	s->rec = json_object_new_object();
	s->steps = json_object_new_array();
	s->t = loop_timer_new(F->loop, window_end, s);
	if (!s->t) {
		psnap_free(s);
		return;
	}
	loop_timer_name(s->t, "investigation");
	P->s[slot] = s;

	jx_add_str(s->rec, IR_TRIGGER, BUNDLE_VERDICT_PEER);
	{
		char host[64];

		psnap_host_name(F, host, sizeof(host));
		jx_add_str(s->rec, IR_HOST, host);
	}
	link = json_object_new_object();
	jx_add_str(link, MK_PE_ORIGIN_HOST, jx_text(notice, "origin"));
	jx_add_str(link, MK_PE_ORIGIN_PEER, peer);
	jx_add_u64(link, MK_PE_INCIDENT_ID, jx_u64(notice, "incident"));
	jx_add_u64(link, MK_PE_SENT_REAL_NS, jx_u64(notice, "sent_real_ns"));
	jx_add_u64(link, "stall_real_ns", stall_real);
	jx_add_u64(link, MK_PE_RECEIVED_REAL_NS, real);
	json_object_object_add(link, MK_PE_WINDOW_MS, jx_new_fixed((double)F->c->peer_window_ns / 1e6, 3));
	json_object_object_add(link, "ports", json_object_get(jx_get(notice, "ports")));
	json_object_object_add(link, "flows", json_object_get(jx_get(notice, "flows")));
	json_object_object_add(s->rec, IR_PEER, link);
	jx_add_u64(s->rec, IR_OPENED_MONO, mono);
	jx_add_u64(s->rec, IR_OPENED_REAL, real);
	/* the stall began at the origin's time, in this host's monotonic clock
	 * (within the clocks' skew, which the notice's window bounds) */
	if (stall_real && stall_real < real && real - stall_real < 600000000000ull &&
	    real - stall_real < mono)
		jx_add_u64(s->rec, IR_STALL_MONO, mono - (real - stall_real));
	json_object_object_add(s->rec, IR_STEPS, s->steps);

	/* every port, at once */
	st = step_begin(s, "snapshot");
	snap = json_object_new_object();
	for (unsigned i = 0; i < ports_count(F->ports) && s->nports < BUNDLER_MAX_PORTS; i++) {
		struct port *p = ports_at(F->ports, i);

		util_strlcpy(s->ports[s->nports], port_name(p), sizeof(s->ports[0]));
		json_object_object_add(snap, port_name(p), evid_port_snapshot(p));
		evid_counters_take(&s->first[s->nports], p);
		s->nports++;
	}
	if (s->nports)
		jx_add_str(s->rec, IR_PORT, s->ports[0]);
	{
		unsigned total = 0;

		flows = stall_flows_json(F->stall, NULL, 0, STALL_FLOWS_LISTED, &total);
		json_object_object_add(snap, IR_S_FLOWS, flows);
		jx_add_u64(snap, IR_S_FLOWS_TOTAL, total);
	}
	json_object_object_add(s->rec, IR_SNAPSHOT, snap);
	step_end(s, st, "ok", NULL);
	threads_first(s, flows);
	s->win_step = step_begin(s, "window");
	loop_timer_set(s->t, F->c->peer_window_ns, 0);
	log_info("peer %s: snapshot of %u port(s) for incident %s:%" PRIu64 " (%.1f ms after the "
		 "notice was sent)", peer, s->nports, jx_text(notice, "origin"),
		 jx_u64(notice, "incident"),
		 real > jx_u64(notice, "sent_real_ns") ?
		 (double)(real - jx_u64(notice, "sent_real_ns")) / 1e6 : 0.0);
}
