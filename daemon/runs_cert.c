/* runs_cert: a run's counters at its start and their moves, and its
 * certificate built from its record. See runs.h and runs_int.h. */
#include "daemon/runs_int.h"
#include "collectors/counters/counters.h"
#include "daemon/conf.h"
#include "daemon/forensic/facts.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/detect/stall.h"
#include "daemon/ctl.h"
#include "lib/bgwrite.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "rules/rules.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void runs_utc(uint64_t real_ns, char *buf, size_t len, int compact)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), compact ? "%Y%m%dT%H%M%S" : "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", s, (unsigned)(real_ns / 1000000ull % 1000));
}

void runs_add_time(struct json_object *o, const char *key, uint64_t real, uint64_t mono)
{
	struct json_object *t = json_object_new_object();
	char u[48];

	runs_utc(real, u, sizeof(u), 0);
	jx_add_str(t, "utc", u);
	jx_add_u64(t, "real_ns", real);
	jx_add_u64(t, "mono_ns", mono);
	json_object_object_add(o, key, t);
}

const char *runs_policy_name(int p)
{
	return p == RUN_POLICY_RECOVER ? "recover" : "observe";
}

/* ---- counters ---- */

void runs_snap_free(struct run *u)
{
	for (unsigned i = 0; i < u->nports; i++)
		for (unsigned s = 0; s < REC_MAX_SRC; s++) {
			if (u->ports[i].src[s].lay)
				clayout_unref(u->ports[i].src[s].lay);
			free(u->ports[i].src[s].vals);
			u->ports[i].src[s].lay = NULL;
			u->ports[i].src[s].vals = NULL;
		}
}

static double signal_of(const struct runs *r, const char *profile, const char *sig,
			struct json_object *d)
{
	double v;

	return r->rules && d && rules_signal(r->rules, profile, sig, d, &v) == 0 ? v : -1;
}

/* The gap's rate over what the recorder holds before the run (seed 000:
 * a healthy port counts a few frames the vport never sees, e.g. LLDP the
 * firmware consumes). From the oldest and the newest sample only, so that
 * its cost does not grow with the recorder (run begin answers within
 * 10 ms with 8 ports of 751 counters); a source whose layout changed in
 * between is left out. */
static double gap_rate(const struct runs *r, const struct port *p, const char *profile)
{
	const struct recorder *rec = port_recorder(p);
	unsigned n = rec_count(rec);
	const struct rec_sample *a, *b;
	struct json_object *d;
	double g, span;

	if (n < 2 || !r->rules)
		return -1;
	a = rec_get(rec, 0);
	b = rec_get(rec, n - 1);
	span = (double)(b->mono_ns - a->mono_ns) / 1e9;
	d = json_object_new_object();
	for (unsigned k = 0; k < port_nsrc(p) && k < REC_MAX_SRC; k++) {
		const struct rec_part *pa = &a->part[k], *pb = &b->part[k];
		const char *src = port_src_name(p, k);
		char nb[320];

		if (!src || !pa->lay || !pb->lay ||
		    (pa->lay != pb->lay && !clayout_equal(pa->lay, pb->lay)))
			continue;
		for (unsigned c = 0; c < pb->lay->n; c++)
			jx_add_u64(d, facts_counter_name(src, pb->lay->names[c], nb, sizeof(nb)),
				   cnt_delta(pa->vals[c], pb->vals[c], pb->lay->width[c], NULL));
	}
	g = signal_of(r, profile, "gap", d);
	json_object_put(d);
	return g >= 0 && span > 0 ? g / span : -1;
}

void runs_snap_take(struct runs *r, struct run *u)
{
	u->nports = 0;
	for (unsigned i = 0; i < ports_count(r->ports) && u->nports < MAX_PORTS; i++) {
		struct port *p = ports_at(r->ports, i);
		const struct rec_sample *s = rec_latest(port_recorder(p));
		struct run_port *rp = &u->ports[u->nports++];

		memset(rp, 0, sizeof(*rp));
		util_strlcpy(rp->name, port_name(p), sizeof(rp->name));
		rp->profile = conf_profile_name(port_profile(p));
		rp->gap_rate = gap_rate(r, p, rp->profile);
		for (unsigned k = 0; s && k < port_nsrc(p) && k < REC_MAX_SRC; k++) {
			const struct rec_part *pt = &s->part[k];

			if (!pt->lay)
				continue;
			rp->src[k].vals = malloc(pt->lay->n * sizeof(uint64_t));
			if (!rp->src[k].vals)
				continue;
			memcpy(rp->src[k].vals, pt->vals, pt->lay->n * sizeof(uint64_t));
			rp->src[k].lay = clayout_ref(pt->lay);
		}
	}
}

/* The counters whose move a published number cannot ignore, by name, on
 * top of the signals of the rules (00-signals.rules): pause and PFC frames
 * and durations, link changes, FCS/CRC and symbol errors, buffer and
 * discard drops of every kind. */
static int matters(const char *name)
{
	/* frames for another host's MAC (a shared segment; a veth's peer):
	 * dropped by design, nothing lost (ip_rcv: PACKET_OTHERHOST) */
	if (strstr(name, "otherhost"))
		return 0;
	static const char *const pats[] = { "pause", "pfc", "link_down", "carrier_changes",
		"carrier_down", "fcs", "crc", "symbol", "out_of_buffer", "discard", "drop",
		"missed", "fifo", "over_errors", "frame_errors" };

	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(name, pats[i]))
			return 1;
	return 0;
}

static const char *const run_signals[] = { "gap", "buffer_drops", "steer_misses",
	"steer_discards", "fabric_errors", "host_drops", "rxq_recoveries", "rx_reporter_errors" };

struct moved {
	unsigned n;
	char first[400];
};

static void note_moved(struct moved *m, const char *fmt, const char *port, const char *what,
		       double v)
{
	if (!m->n++)
		snprintf(m->first, sizeof(m->first), fmt, port, what, v);
}

/* Port i's deltas since the run began: the signals and the counters that
 * matter, into o; what moved counted in m. */
static struct json_object *port_deltas(struct runs *r, struct run *u, unsigned i,
				       struct moved *m, double span)
{
	struct run_port *rp = &u->ports[i];
	struct port *p = ports_find(r->ports, rp->name);
	const struct rec_sample *s = p ? rec_latest(port_recorder(p)) : NULL;
	struct json_object *o = json_object_new_object(), *all = json_object_new_object();
	struct json_object *sig = json_object_new_object(), *cnt = json_object_new_object();

	jx_add_str(o, "profile", rp->profile);
	for (unsigned k = 0; s && k < port_nsrc(p) && k < REC_MAX_SRC; k++) {
		const struct rec_part *pt = &s->part[k];
		const char *src = port_src_name(p, k), *cn;
		char nb[320];

		/* the host's and the application's counters are not the
		 * NIC's: a disk's discards or an application's
		 * requests_dropped_total make no run anomalous */
		int nic, *map;

		if (!pt->lay || !src || !rp->src[k].lay)
			continue;
		nic = strcmp(src, "host") && strcmp(src, "app");
		if (!(map = clayout_map_new(rp->src[k].lay, pt->lay)))
			continue;
		for (unsigned c = 0; c < pt->lay->n; c++) {
			int at = map[c];
			uint64_t d;

			if (at < 0)
				continue;
			d = cnt_delta(rp->src[k].vals[at], pt->vals[c], pt->lay->width[c], NULL);
			cn = facts_counter_name(src, pt->lay->names[c], nb, sizeof(nb));
			jx_add_u64(all, cn, d);
			if (d && nic && matters(cn)) {
				jx_add_u64(cnt, cn, d);
				note_moved(m, "port %s: %s +%.0f", rp->name, cn, (double)d);
			}
		}
		free(map);
	}
	for (size_t k = 0; k < sizeof(run_signals) / sizeof(run_signals[0]); k++) {
		double v = signal_of(r, rp->profile, run_signals[k], all);

		if (v < 0)
			continue;
		json_object_object_add(sig, run_signals[k], jx_new_fixed(v, 0));
		if (!strcmp(run_signals[k], "gap")) {
			double base = rp->gap_rate > 0 ? rp->gap_rate * span : 0;

			json_object_object_add(o, "gap_expected", jx_new_fixed(base, 1));
			/* a gap beyond what the port showed before the run */
			if (v > base * 1.5 + 2)
				note_moved(m, "port %s: %s %.0f frames at the port not at the vport",
					   rp->name, "gap", v);
		} else if (v > 0 && !json_object_object_length(cnt))
			note_moved(m, "port %s: %s +%.0f", rp->name, run_signals[k], v);
	}
	json_object_put(all);
	json_object_object_add(o, "signals", sig);
	json_object_object_add(o, "counters", cnt);
	if (!s)
		jx_add_str(o, "note", "no sample at the end");
	return o;
}

/* ---- certificates ---- */

void runs_keep_cert(struct runs *r, struct json_object *cert)
{
	unsigned i = r->kept_next % RUNS_KEEP;

	json_object_put(r->kept[i]);
	r->kept[i] = json_object_get(cert);
	r->kept_next++;
}

static void flagged_event(const struct run *u, const char *word, const char *reason)
{
	log_event(LOG_EV_RUN_FLAGGED, LOG_WARNING,
		  LOG_FIELDS({ "NICSTALL_RUN", u->name }, { LF_VERDICT, word },
			     { LF_REASON, reason }),
		  "run %s: %s: %s", u->name, word, reason);
}

/* The certificate of u as it stands (final: its word counted, written). */
struct json_object *runs_build_cert(struct runs *r, struct run *u, int final)
{
	struct json_object *o = json_object_new_object(), *ports = json_object_new_object();
	struct json_object *incs = json_object_new_array(), *evs = json_object_new_array();
	struct json_object *flows = json_object_new_object();
	struct run_facts f = { 0 };
	struct moved m = { 0 };
	char reason[600], inc1[512] = "", taint1[512] = "", u8[48];
	double span = (double)(u->end_mono - u->start_mono) / 1e9;
	unsigned pending = 0;
	enum run_word w;

	for (unsigned i = 0; i < u->nports; i++)
		json_object_object_add(ports, u->ports[i].name, port_deltas(r, u, i, &m, span));
	for (unsigned i = 0; i < u->ninc; i++) {
		struct json_object *e = json_object_new_object();
		const struct run_inc *x = &u->inc[i];

		jx_add_u64(e, "incident", x->incident);
		jx_add_u64(e, "investigation", x->inv);
		jx_add_str(e, "port", x->port);
		runs_add_time(e, "opened", x->real, x->mono);
		jx_add_str(e, "verdict", x->verdict[0] ? x->verdict : x->done ? "unknown" : "pending");
		if (x->bundle[0])
			jx_add_str(e, "bundle", x->bundle);
		else if (x->done)
			jx_add_str(e, "bundle_error", "no bundle was written");
		if (!x->done)
			pending++;
		json_object_array_add(incs, e);
	}
	if (u->ninc) {
		const struct run_inc *x = &u->inc[0];
		const char *b = strrchr(x->bundle, '/');

		snprintf(inc1, sizeof(inc1), "incident %" PRIu64 " opened on port %s (verdict %s, "
			 "bundle %s)", x->incident, x->port, x->verdict[0] ? x->verdict : "pending",
			 x->bundle[0] ? (b ? b + 1 : x->bundle) : x->done ? "none" : "pending");
	}
	for (unsigned i = 0; i < u->nev; i++) {
		struct json_object *e = json_object_new_object();
		const struct run_event *x = &u->ev[i];

		jx_add_str(e, "kind", x->kind);
		if (x->port[0])
			jx_add_str(e, "port", x->port);
		runs_add_time(e, "at", x->real, x->mono);
		json_object_object_add(e, "at_s", jx_new_fixed((double)(x->mono - u->start_mono) / 1e9, 3));
		jx_add_bool(e, "changed_system", x->changed);
		if (x->note[0])
			jx_add_str(e, "note", x->note);
		json_object_array_add(evs, e);
		if (x->changed && !taint1[0]) {
			runs_utc(x->real, u8, sizeof(u8), 0);
			snprintf(taint1, sizeof(taint1), "%s%s%s at %s (+%.3f s)%s%s", x->kind,
				 x->port[0] ? " of port " : "", x->port, u8,
				 (double)(x->mono - u->start_mono) / 1e9, x->note[0] ? ": " : "", x->note);
		}
	}
	f.incomplete = u->incomplete[0] ? u->incomplete : NULL;
	f.taints = u->taints;
	f.first_taint = taint1;
	f.incidents = u->ninc + u->inc_more;
	f.first_incident = inc1;
	f.moved = m.n;
	f.first_moved = m.first;
	w = run_verdict(&f, reason, sizeof(reason));
	jx_add_str(o, "word", run_word_name(w));
	jx_add_str(o, "reason", reason);
	jx_add_str(o, "run", u->name);
	jx_add_str(o, "certificate", u->file);
	jx_add_u64(o, "uid", (uint64_t)u->uid);
	jx_add_str(o, "run_policy", runs_policy_name(u->policy));
	json_object_object_add(o, "labels", json_object_get(u->labels));
	runs_add_time(o, "start", u->start_real, u->start_mono);
	runs_add_time(o, "end", u->end_real, u->end_mono);
	json_object_object_add(o, "duration_s", jx_new_fixed(span, 3));
	if (u->status)
		json_object_object_add(o, "command_status", json_object_get(u->status));
	json_object_object_add(o, "ports", ports);
	jx_add_u64(flows, "watched_max", u->flows_max);
	json_object_object_add(flows, "longest_wait_ms",
			       jx_new_fixed((double)u->longest_wait_ns / 1e6, 1));
	json_object_object_add(o, "flows", flows);
	json_object_object_add(o, "incidents", incs);
	if (u->inc_more)
		jx_add_u64(o, "incidents_not_listed", u->inc_more);
	json_object_object_add(o, "interventions", evs);
	if (u->ev_more)
		jx_add_u64(o, "interventions_not_listed", u->ev_more);
	json_object_object_add(o, "daemon_cpu_s", jx_new_fixed((double)u->cpu_ns / 1e9, 3));
	if (!final) {
		jx_add_str(o, "state", "pending");
		jx_add_u64(o, "bundles_pending", pending);
		return o;
	}
	jx_add_str(o, "state", "written");
	r->words[w]++;
	if (w == RUN_TAINTED || w == RUN_ANOMALOUS || w == RUN_INCOMPLETE)
		flagged_event(u, run_word_name(w), reason);
	else
		log_info("run %s: clean", u->name);
	{
		char fname[RUN_NAME_MAX + 48];

		snprintf(fname, sizeof(fname), "%s.cert", u->file);
		bgw_put_json(r->w, fname, o, run_word_name(w));
		snprintf(fname, sizeof(fname), "%s.open", u->file);
		bgw_put(r->w, fname, NULL, 0, 0);
	}
	runs_keep_cert(r, o);
	return o;
}
