/* runs: benchmark runs, their certificates, and the policy the daemon's
 * interventions follow while one is open (runs.h). */
#include "daemon/runs.h"
#include "collectors/counters.h"
#include "daemon/conf.h"
#include "daemon/facts.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/stall.h"
#include "daemon/ctl.h"
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
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 32
#define SAMPLE_NS 1000000000ull         /* flows and deadlines looked at */

struct run_src {
	struct clayout *lay;
	uint64_t *vals;
};

struct run_port {
	char name[32];
	const char *profile;
	struct run_src src[REC_MAX_SRC];
	double gap_rate;                /* frames/s of port-vport gap before the run, -1 unknown */
};

struct run_event {
	uint64_t mono, real;
	char kind[24], port[32];
	int changed;
	char note[160];
};

struct run_inc {
	uint64_t incident, inv, mono, real;
	char port[32], verdict[48], bundle[256];
	int done;
};

struct run {
	struct run *next;
	char name[RUN_NAME_MAX + 1];
	char file[RUN_NAME_MAX + 32];   /* NAME@yyyymmddTHHMMSS.mmmZ */
	uid_t uid;
	int policy;
	uint64_t start_mono, start_real, end_mono, end_real, deadline;
	uint64_t cpu_start_ns, cpu_ns;
	struct json_object *labels, *status, *cert;
	char incomplete[256];
	struct run_port ports[MAX_PORTS];
	unsigned nports;
	struct run_event ev[RUNS_EVENTS_MAX];
	unsigned nev, ev_more, taints;
	struct run_inc inc[RUNS_INCIDENTS_MAX];
	unsigned ninc, inc_more;
	unsigned flows_max;
	uint64_t longest_wait_ns;
};

/* The writer: files of runs/ written (and removed) by a thread, in order. */
struct wjob {
	struct wjob *next;
	char name[RUN_NAME_MAX + 48];
	char *data;                     /* NULL: unlink name */
	size_t len;
	int sum;                        /* also name.sha256 */
};

struct runs {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	const struct conf *c;
	const struct rules *rules;
	struct loop_timer *tick;
	struct run *open, *closing;     /* closing: ended, waiting for bundles */
	unsigned nopen;
	struct json_object *kept[RUNS_KEEP];    /* certificates, newest at kept_next - 1 */
	unsigned kept_next;
	uint64_t words[RUN_WORDS];
	/* writer */
	pthread_t th;
	int th_ok, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wjob *head, *tail;
	int dirfd;
	char last_file[RUN_NAME_MAX + 32];      /* the newest file name given */
	unsigned same;                          /* and how many times in its ms */
};

/* ---- small helpers ---- */

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void utc(uint64_t real_ns, char *buf, size_t len, int compact)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;
	char s[32];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), compact ? "%Y%m%dT%H%M%S" : "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", s, (unsigned)(real_ns / 1000000ull % 1000));
}

static void add_time(struct json_object *o, const char *key, uint64_t real, uint64_t mono)
{
	struct json_object *t = json_object_new_object();
	char u[48];

	utc(real, u, sizeof(u), 0);
	jx_add_str(t, "utc", u);
	jx_add_u64(t, "real_ns", real);
	jx_add_u64(t, "mono_ns", mono);
	json_object_object_add(o, key, t);
}

static const char *policy_name(int p)
{
	return p == RUN_POLICY_RECOVER ? "recover" : "observe";
}

/* ---- the writer thread ---- */

static int write_sum(int dfd, const char *name, const char *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	char line[64 * 2 + RUN_NAME_MAX + 64], sname[RUN_NAME_MAX + 64];
	int k;

	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
		return -1;
	for (unsigned i = 0; i < n; i++)
		snprintf(line + 2 * i, 3, "%02x", md[i]);
	k = snprintf(line + 64, sizeof(line) - 64, "  %s\n", name);
	snprintf(sname, sizeof(sname), "%s.sha256", name);
	return fsu_replace_at(dfd, sname, line, (size_t)(64 + k), 0640);
}

static void *writer(void *arg)
{
	struct runs *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct wjob *j = r->head;

		if (!j) {
			if (r->stop)
				break;
			pthread_cond_wait(&r->cv, &r->mu);
			continue;
		}
		r->head = j->next;
		if (!r->head)
			r->tail = NULL;
		pthread_mutex_unlock(&r->mu);
		if (r->dirfd < 0)
			;
		else if (!j->data)
			unlinkat(r->dirfd, j->name, 0);
		else if (fsu_replace_at(r->dirfd, j->name, j->data, j->len, 0640) < 0 ||
			 (j->sum && write_sum(r->dirfd, j->name, j->data, j->len) < 0))
			log_warnx("runs: %s/%s/%s: %s", r->c->state_dir, RUNS_DIR, j->name,
				  strerror(errno));
		free(j->data);
		free(j);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* Queue a file (data taken over; NULL: remove it). Without the thread (it
 * could not start) the file is written here. */
static void put_file(struct runs *r, const char *name, char *data, size_t len, int sum)
{
	struct wjob *j = calloc(1, sizeof(*j));

	if (!j) {
		free(data);
		log_warnx("runs: %s not written: out of memory", name);
		return;
	}
	util_strlcpy(j->name, name, sizeof(j->name));
	j->data = data;
	j->len = len;
	j->sum = sum;
	if (!r->th_ok) {
		if (r->dirfd >= 0 && data)
			fsu_replace_at(r->dirfd, name, data, len, 0640);
		if (r->dirfd >= 0 && data && sum)
			write_sum(r->dirfd, name, data, len);
		if (r->dirfd >= 0 && !data)
			unlinkat(r->dirfd, name, 0);
		free(data);
		free(j);
		return;
	}
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = j;
	else
		r->head = j;
	r->tail = j;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void put_json(struct runs *r, const char *name, struct json_object *o, const char *first)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED);
	size_t fl = first ? strlen(first) + 1 : 0, n = strlen(s);
	char *buf = malloc(fl + n + 2);

	if (!buf) {
		log_warnx("runs: %s not written: out of memory", name);
		return;
	}
	if (first) {
		memcpy(buf, first, fl - 1);
		buf[fl - 1] = '\n';
	}
	memcpy(buf + fl, s, n);
	buf[fl + n] = '\n';
	put_file(r, name, buf, fl + n + 1, first != NULL);
}

/* ---- counters ---- */

static void snap_free(struct run *u)
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

static void snap_take(struct runs *r, struct run *u)
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

		if (!pt->lay || !src || !rp->src[k].lay)
			continue;
		for (unsigned c = 0; c < pt->lay->n; c++) {
			int at = (pt->lay == rp->src[k].lay) ? (int)c :
				 clayout_find(rp->src[k].lay, pt->lay->names[c]);
			uint64_t d;

			if (at < 0)
				continue;
			d = cnt_delta(rp->src[k].vals[at], pt->vals[c], pt->lay->width[c], NULL);
			cn = facts_counter_name(src, pt->lay->names[c], nb, sizeof(nb));
			jx_add_u64(all, cn, d);
			if (d && matters(cn)) {
				jx_add_u64(cnt, cn, d);
				note_moved(m, "port %s: %s +%.0f", rp->name, cn, (double)d);
			}
		}
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

static void keep_cert(struct runs *r, struct json_object *cert)
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
static struct json_object *build_cert(struct runs *r, struct run *u, int final)
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
		add_time(e, "opened", x->real, x->mono);
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
		add_time(e, "at", x->real, x->mono);
		json_object_object_add(e, "at_s", jx_new_fixed((double)(x->mono - u->start_mono) / 1e9, 3));
		jx_add_bool(e, "changed_system", x->changed);
		if (x->note[0])
			jx_add_str(e, "note", x->note);
		json_object_array_add(evs, e);
		if (x->changed && !taint1[0]) {
			utc(x->real, u8, sizeof(u8), 0);
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
	jx_add_str(o, "run_policy", policy_name(u->policy));
	json_object_object_add(o, "labels", json_object_get(u->labels));
	add_time(o, "start", u->start_real, u->start_mono);
	add_time(o, "end", u->end_real, u->end_mono);
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
		put_json(r, fname, o, run_word_name(w));
		snprintf(fname, sizeof(fname), "%s.open", u->file);
		put_file(r, fname, NULL, 0, 0);
	}
	keep_cert(r, o);
	return o;
}

static void run_free(struct run *u)
{
	if (!u)
		return;
	snap_free(u);
	json_object_put(u->labels);
	json_object_put(u->status);
	json_object_put(u->cert);
	free(u);
}

static int all_bundled(const struct run *u)
{
	for (unsigned i = 0; i < u->ninc; i++)
		if (!u->inc[i].done)
			return 0;
	return 1;
}

static void finish(struct runs *r, struct run *u)
{
	json_object_put(build_cert(r, u, 1));
	run_free(u);
}

/* End u (taken off the open list): its certificate now, or once its
 * incidents' bundles are in. Returns the certificate as it stands. */
static struct json_object *close_run(struct runs *r, struct run *u, const char *incomplete,
				     int wait)
{
	struct json_object *c;

	u->end_mono = loop_mono_ns();
	u->end_real = loop_real_ns();
	u->cpu_ns = cpu_ns() - u->cpu_start_ns;
	if (incomplete)
		util_strlcpy(u->incomplete, incomplete, sizeof(u->incomplete));
	if (wait && !all_bundled(u)) {
		u->deadline = u->end_mono + RUNS_BUNDLE_WAIT_NS;
		u->next = r->closing;
		r->closing = u;
		return build_cert(r, u, 0);
	}
	c = build_cert(r, u, 1);
	run_free(u);
	return c;
}

static struct run *unlink_open(struct runs *r, const char *name)
{
	for (struct run **pp = &r->open; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name)) {
			struct run *u = *pp;

			*pp = u->next;
			u->next = NULL;
			r->nopen--;
			return u;
		}
	return NULL;
}

/* ---- the tick: flows, deadlines ---- */

static void tick(struct loop_timer *t, void *arg)
{
	struct runs *r = arg;
	uint64_t now = loop_mono_ns(), longest = 0;
	unsigned n = 0;

	(void)t;
	if (r->open && r->stall)
		n = stall_longest_wait(r->stall, now, &longest);
	for (struct run *u = r->open; u; u = u->next) {
		if (n > u->flows_max)
			u->flows_max = n;
		if (longest > u->longest_wait_ns)
			u->longest_wait_ns = longest;
	}
	for (struct run *u = r->open, *next; u; u = next) {
		next = u->next;
		if (now - u->start_mono >= RUNS_MAX_DURATION_NS) {
			unlink_open(r, u->name);
			json_object_put(close_run(r, u, "never ended: open for an hour, the longest a "
						     "run may hold the daemon's interventions back", 1));
		}
	}
	for (struct run **pp = &r->closing; *pp;) {
		struct run *u = *pp;

		if (now < u->deadline) {
			pp = &u->next;
			continue;
		}
		*pp = u->next;
		finish(r, u);
	}
	if (!r->open && !r->closing)
		loop_timer_set(r->tick, 0, 0);
}

static void tick_arm(struct runs *r)
{
	loop_timer_set(r->tick, SAMPLE_NS / 4, SAMPLE_NS);
}

/* ---- requests ---- */

static struct json_object *open_names(const struct runs *r, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (const struct run *u = r->open; u && o + 1 < len; u = u->next)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", u->name);
	if (!r->open)
		util_strlcpy(buf, "none", len);
	return NULL;
}

struct json_object *runs_begin(struct runs *r, const char *name, struct json_object *labels,
			       uid_t uid)
{
	struct json_object *o, *lab = json_object_new_object();
	char err[320], names[512], u8[48], when[48];
	unsigned mine = 0, nl = 0;
	struct run *u, *old;
	uint64_t t0 = loop_mono_ns();

	if (run_name_check(name, err, sizeof(err)) < 0) {
		json_object_put(lab);
		return ctl_error("run begin: %s", err);
	}
	if (labels && !json_object_is_type(labels, json_type_object)) {
		json_object_put(lab);
		return ctl_error("run begin: \"labels\" must be an object of strings");
	}
	if (labels) {
		json_object_object_foreach(labels, k, v) {
			char kv[RUN_LABEL_KEY_MAX + RUN_LABEL_VALUE_MAX + 8];
			size_t kl;

			if (++nl > RUN_LABELS_MAX) {
				json_object_put(lab);
				return ctl_error("run begin: more than %d labels", RUN_LABELS_MAX);
			}
			if (!json_object_is_type(v, json_type_string) ||
			    strlen(k) > RUN_LABEL_KEY_MAX ||
			    json_object_get_string_len(v) > RUN_LABEL_VALUE_MAX) {
				json_object_put(lab);
				return ctl_error("run begin: label '%.64s': a string of at most %d "
						 "characters, under a key of at most %d",
						 k, RUN_LABEL_VALUE_MAX, RUN_LABEL_KEY_MAX);
			}
			snprintf(kv, sizeof(kv), "%s=%s", k, json_object_get_string(v));
			if (run_label_check(kv, &kl, err, sizeof(err)) < 0) {
				json_object_put(lab);
				return ctl_error("run begin: %s", err);
			}
			jx_add_str(lab, k, json_object_get_string(v));
		}
	}
	old = NULL;
	for (u = r->open; u; u = u->next)
		if (!strcmp(u->name, name))
			old = u;
		else if (u->uid == uid)
			mine++;
	if (old && old->uid != uid && uid != 0) {
		json_object_put(lab);
		return ctl_error("run begin: run '%s' is open and belongs to uid %u", name,
				 (unsigned)old->uid);
	}
	open_names(r, names, sizeof(names));
	if (!old && uid != 0 && mine >= RUNS_MAX_PER_UID) {
		json_object_put(lab);
		return ctl_error("run begin: uid %u has %u runs open, at most %d (open: %s); end "
				 "one first", (unsigned)uid, mine, RUNS_MAX_PER_UID, names);
	}
	if (!old && r->nopen >= RUNS_MAX_OPEN) {
		json_object_put(lab);
		return ctl_error("run begin: %u runs are open, at most %d (open: %s)", r->nopen,
				 RUNS_MAX_OPEN, names);
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		json_object_put(lab);
		return ctl_error("run begin: out of memory");
	}
	o = json_object_new_object();
	jx_add_bool(o, "ok", 1);
	if (old) {
		char why[200];
		struct json_object *c;

		utc(loop_real_ns(), when, sizeof(when), 0);
		snprintf(why, sizeof(why), "never ended: a new run named %s began at %s", name, when);
		unlink_open(r, name);
		c = close_run(r, old, why, 1);
		jx_add_str(o, "closed_incomplete", jx_str(c, "certificate"));
		json_object_put(c);
	}
	util_strlcpy(u->name, name, sizeof(u->name));
	u->uid = uid;
	u->policy = r->c->run_policy;
	u->labels = lab;
	u->start_mono = loop_mono_ns();
	u->start_real = loop_real_ns();
	u->cpu_start_ns = cpu_ns();
	utc(u->start_real, u8, sizeof(u8), 1);
	snprintf(u->file, sizeof(u->file), "%s@%s", name, u8);
	/* two runs of one name in one millisecond: never one file */
	if (!strcmp(u->file, r->last_file))
		snprintf(u->file, sizeof(u->file), "%s@%s-%u", name, u8, ++r->same + 1);
	else {
		util_strlcpy(r->last_file, u->file, sizeof(r->last_file));
		r->same = 0;
	}
	snap_take(r, u);
	u->next = r->open;
	r->open = u;
	r->nopen++;
	tick_arm(r);
	{
		/* found by the next start if this daemon dies during the run */
		struct json_object *st = json_object_new_object();
		char fn[RUN_NAME_MAX + 48];

		jx_add_str(st, "run", u->name);
		jx_add_str(st, "certificate", u->file);
		jx_add_u64(st, "uid", uid);
		jx_add_u64(st, "pid", (uint64_t)getpid());
		jx_add_str(st, "run_policy", policy_name(u->policy));
		json_object_object_add(st, "labels", json_object_get(lab));
		add_time(st, "start", u->start_real, u->start_mono);
		snprintf(fn, sizeof(fn), "%s.open", u->file);
		put_json(r, fn, st, NULL);
		json_object_put(st);
	}
	jx_add_str(o, "run", name);
	jx_add_str(o, "certificate", u->file);
	jx_add_str(o, "run_policy", policy_name(u->policy));
	add_time(o, "start", u->start_real, u->start_mono);
	json_object_object_add(o, "took_ms", jx_new_fixed((double)(loop_mono_ns() - t0) / 1e6, 3));
	return o;
}

struct json_object *runs_end(struct runs *r, const char *name, uid_t uid,
			     struct json_object *status)
{
	struct json_object *o, *c;
	char err[320], names[512];
	uint64_t t0 = loop_mono_ns();
	struct run *u;

	if (run_name_check(name, err, sizeof(err)) < 0)
		return ctl_error("run end: %s", err);
	for (u = r->open; u; u = u->next)
		if (!strcmp(u->name, name))
			break;
	if (!u) {
		open_names(r, names, sizeof(names));
		return ctl_error("run end: no open run '%s' (open: %s)", name, names);
	}
	if (u->uid != uid && uid != 0)
		return ctl_error("run end: run '%s' belongs to uid %u", name, (unsigned)u->uid);
	if (status) {
		/* the client's word: only what nicstallctl sends, checked */
		struct json_object *st = json_object_new_object(), *v;
		const char *cmd = jx_str(status, "command");

		if ((v = jx_get(status, "exit")) && json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) >= 0 && json_object_get_int64(v) <= 255)
			jx_add_int(st, "exit", json_object_get_int64(v));
		if ((v = jx_get(status, "signal")) && json_object_is_type(v, json_type_int) &&
		    json_object_get_int64(v) > 0 && json_object_get_int64(v) < 128)
			jx_add_int(st, "signal", json_object_get_int64(v));
		if (cmd && strlen(cmd) <= RUN_LABEL_VALUE_MAX) {
			char kv[RUN_LABEL_VALUE_MAX + 16];
			size_t kl;

			/* printable ASCII, as a label's value */
			snprintf(kv, sizeof(kv), "command=%s", cmd);
			if (run_label_check(kv, &kl, err, sizeof(err)) == 0)
				jx_add_str(st, "command", cmd);
		}
		u->status = st;
	}
	unlink_open(r, name);
	c = close_run(r, u, NULL, 1);
	o = json_object_new_object();
	jx_add_bool(o, "ok", 1);
	json_object_object_add(o, "certificate", c);
	json_object_object_add(o, "took_ms", jx_new_fixed((double)(loop_mono_ns() - t0) / 1e6, 3));
	return o;
}

struct json_object *runs_show(struct runs *r, const char *name)
{
	char err[320];
	struct json_object *o;

	if (run_name_check(name, err, sizeof(err)) < 0)
		return ctl_error("run show: %s", err);
	o = json_object_new_object();
	jx_add_bool(o, "ok", 1);
	for (struct run *u = r->closing; u; u = u->next)
		if (!strcmp(u->name, name)) {
			json_object_object_add(o, "certificate", build_cert(r, u, 0));
			return o;
		}
	for (unsigned i = 0; i < RUNS_KEEP; i++) {
		struct json_object *c = r->kept[(r->kept_next - 1 - i) % RUNS_KEEP];

		if (i < r->kept_next && c && !strcmp(jx_text(c, "run"), name)) {
			json_object_object_add(o, "certificate", json_object_get(c));
			return o;
		}
	}
	for (struct run *u = r->open; u; u = u->next)
		if (!strcmp(u->name, name)) {
			json_object_put(o);
			return ctl_error("run show: run '%s' is still open (nicstallctl run end %s)",
					 name, name);
		}
	json_object_put(o);
	return ctl_error("run show: no certificate of run '%s' among the last %d (the files are "
			 "in %s/%s)", name, RUNS_KEEP, r->c->state_dir, RUNS_DIR);
}

struct json_object *runs_list(struct runs *r)
{
	struct json_object *o = json_object_new_object(), *op = json_object_new_array();
	struct json_object *done = json_object_new_array();

	jx_add_bool(o, "ok", 1);
	jx_add_str(o, "run_policy", policy_name(r->c->run_policy));
	for (struct run *u = r->open; u; u = u->next) {
		struct json_object *e = json_object_new_object();

		jx_add_str(e, "run", u->name);
		jx_add_u64(e, "uid", u->uid);
		add_time(e, "start", u->start_real, u->start_mono);
		jx_add_u64(e, "incidents", u->ninc + u->inc_more);
		jx_add_u64(e, "interventions", u->nev + u->ev_more);
		json_object_array_add(op, e);
	}
	for (struct run *u = r->closing; u; u = u->next) {
		struct json_object *e = json_object_new_object();

		jx_add_str(e, "run", u->name);
		jx_add_str(e, "certificate", u->file);
		jx_add_str(e, "state", "pending");
		json_object_array_add(done, e);
	}
	for (unsigned i = 0; i < RUNS_KEEP && i < r->kept_next; i++) {
		struct json_object *c = r->kept[(r->kept_next - 1 - i) % RUNS_KEEP], *e;

		if (!c)
			continue;
		e = json_object_new_object();
		jx_copy(e, "run", c, "run");
		jx_copy(e, "certificate", c, "certificate");
		jx_copy(e, "word", c, "word");
		jx_copy(e, "reason", c, "reason");
		json_object_array_add(done, e);
	}
	json_object_object_add(o, "open", op);
	json_object_object_add(o, "ended", done);
	return o;
}

/* ---- what the daemon does ---- */

int runs_allow(const struct runs *r, int manual, char *why, size_t len)
{
	if (!r || !r->open || manual || r->c->run_policy == RUN_POLICY_RECOVER)
		return 1;
	snprintf(why, len, "run %s is open and run_policy = observe", r->open->name);
	return 0;
}

void runs_intervention(struct runs *r, const char *kind, const char *port, uint64_t mono,
		       int changed, const char *note)
{
	uint64_t real = loop_real_ns() - (loop_mono_ns() - mono);

	if (!r)
		return;
	for (struct run *u = r->open; u; u = u->next) {
		struct run_event *e;

		if (changed)
			u->taints++;
		if (u->nev >= RUNS_EVENTS_MAX) {
			u->ev_more++;
			continue;
		}
		e = &u->ev[u->nev++];
		e->mono = mono;
		e->real = real;
		util_strlcpy(e->kind, kind, sizeof(e->kind));
		util_strlcpy(e->port, port ? port : "", sizeof(e->port));
		e->changed = changed;
		util_strlcpy(e->note, note ? note : "", sizeof(e->note));
	}
}

void runs_incident(struct runs *r, uint64_t incident, uint64_t inv, const char *port)
{
	if (!r)
		return;
	for (struct run *u = r->open; u; u = u->next) {
		struct run_inc *x;

		if (u->ninc >= RUNS_INCIDENTS_MAX) {
			u->inc_more++;
			continue;
		}
		x = &u->inc[u->ninc++];
		memset(x, 0, sizeof(*x));
		x->incident = incident;
		x->inv = inv;
		x->mono = loop_mono_ns();
		x->real = loop_real_ns();
		util_strlcpy(x->port, port ? port : "", sizeof(x->port));
	}
}

static void set_bundle(struct run *u, uint64_t inv, const char *verdict, const char *bundle)
{
	for (unsigned i = 0; i < u->ninc; i++)
		if (u->inc[i].inv == inv && !u->inc[i].done) {
			u->inc[i].done = 1;
			util_strlcpy(u->inc[i].verdict, verdict ? verdict : "unknown",
				     sizeof(u->inc[i].verdict));
			util_strlcpy(u->inc[i].bundle, bundle ? bundle : "", sizeof(u->inc[i].bundle));
		}
}

void runs_bundle(struct runs *r, uint64_t inv, const char *verdict, const char *bundle)
{
	if (!r)
		return;
	for (struct run *u = r->open; u; u = u->next)
		set_bundle(u, inv, verdict, bundle);
	for (struct run **pp = &r->closing; *pp;) {
		struct run *u = *pp;

		set_bundle(u, inv, verdict, bundle);
		if (!all_bundled(u)) {
			pp = &u->next;
			continue;
		}
		*pp = u->next;
		finish(r, u);
	}
}

void runs_annotate(const struct runs *r, struct json_object *rec, uint64_t mono)
{
	struct json_object *o, *names;

	if (!r)
		return;
	names = json_object_new_array();
	for (const struct run *u = r->open; u; u = u->next)
		if (u->start_mono <= mono)
			json_object_array_add(names, json_object_new_string(u->file));
	for (const struct run *u = r->closing; u; u = u->next)
		if (u->start_mono <= mono && mono <= u->end_mono)
			json_object_array_add(names, json_object_new_string(u->file));
	if (!json_object_array_length(names)) {
		json_object_put(names);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "certificates", names);
	jx_add_str(o, "run_policy", policy_name(r->c->run_policy));
	for (const struct run *u = r->open; u; u = u->next)
		if (u->start_mono <= mono) {
			jx_add_str(o, "name", u->name);
			add_time(o, "start", u->start_real, u->start_mono);
			break;
		}
	if (!jx_get(o, "name"))
		for (const struct run *u = r->closing; u; u = u->next)
			if (u->start_mono <= mono && mono <= u->end_mono) {
				jx_add_str(o, "name", u->name);
				add_time(o, "start", u->start_real, u->start_mono);
				add_time(o, "end", u->end_real, u->end_mono);
				break;
			}
	json_object_object_add(rec, "run", o);
}

unsigned runs_open_count(const struct runs *r)
{
	return r ? r->nopen : 0;
}

const char *runs_open_name(const struct runs *r, unsigned i)
{
	for (const struct run *u = r ? r->open : NULL; u; u = u->next)
		if (!i--)
			return u->name;
	return NULL;
}

uint64_t runs_certificates(const struct runs *r, enum run_word w)
{
	return r && (unsigned)w < RUN_WORDS ? r->words[w] : 0;
}

/* ---- life ---- */

/* At start: the runs a previous daemon left open (their .open files) are
 * closed incomplete, with what the file says of them. */
static void close_stale(struct runs *r)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (r->dirfd < 0 || (fd = dup(r->dirfd)) < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name), len;
		struct json_object *st = NULL, *cert;
		char name[RUN_NAME_MAX + 8], fn[RUN_NAME_MAX + 48], why[300], *buf;
		char *at;
		int e;

		if (n < 6 || strcmp(de->d_name + n - 5, ".open") || n - 5 >= sizeof(fn))
			continue;
		memcpy(fn, de->d_name, n - 5);
		fn[n - 5] = 0;
		at = strchr(fn, '@');
		if (!at || (size_t)(at - fn) > RUN_NAME_MAX || !util_valid_name(at + 1, 40))
			continue;
		memcpy(name, fn, (size_t)(at - fn));
		name[at - fn] = 0;
		if (run_name_check(name, why, sizeof(why)) < 0)
			continue;
		buf = fsu_read_at(r->dirfd, de->d_name, 65536, &len, &e);
		st = buf ? json_tokener_parse(buf) : NULL;
		free(buf);
		cert = json_object_new_object();
		snprintf(why, sizeof(why), "the daemon (pid %" PRIu64 ") stopped during the run "
			 "without ending it; closed when the daemon started again (pid %d)",
			 jx_u64(st, "pid"), (int)getpid());
		jx_add_str(cert, "word", "incomplete");
		jx_add_str(cert, "reason", why);
		jx_add_str(cert, "run", name);
		jx_copy(cert, "uid", st, "uid");
		jx_copy(cert, "run_policy", st, "run_policy");
		jx_copy(cert, "labels", st, "labels");
		jx_copy(cert, "start", st, "start");
		add_time(cert, "closed", loop_real_ns(), loop_mono_ns());
		jx_add_str(cert, "note", "nothing of the run after the daemon stopped is known: "
			   "no counters, incidents or interventions are certified");
		jx_add_str(cert, "certificate", fn);
		jx_add_str(cert, "state", "written");
		{
			char cn[RUN_NAME_MAX + 56];

			snprintf(cn, sizeof(cn), "%s.cert", fn);
			put_json(r, cn, cert, "incomplete");
		}
		put_file(r, de->d_name, NULL, 0, 0);
		log_event(LOG_EV_RUN_FLAGGED, LOG_WARNING,
			  LOG_FIELDS({ "NICSTALL_RUN", name }, { LF_VERDICT, "incomplete" },
				     { LF_REASON, why }),
			  "run %s: incomplete: %s", name, why);
		r->words[RUN_INCOMPLETE]++;
		keep_cert(r, cert);
		json_object_put(cert);
		json_object_put(st);
	}
	closedir(d);
}

struct runs *runs_new(struct loop *l, struct ports *ps, struct stall *st, const struct conf *c)
{
	struct runs *r = calloc(1, sizeof(*r));
	char dir[PATH_MAX + 8], err[PATH_MAX + 160];

	if (!r)
		return NULL;
	r->loop = l;
	r->ports = ps;
	r->stall = st;
	r->c = c;
	r->tick = loop_timer_new(l, tick, r);
	if (!r->tick) {
		free(r);
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s/%s", c->state_dir, RUNS_DIR);
	r->dirfd = fsu_private_dir(dir, 0750, err, sizeof(err));
	if (r->dirfd < 0)
		log_warnx("runs: no certificates will be written: %s", err);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->th_ok = pthread_create(&r->th, NULL, writer, r) == 0;
	if (!r->th_ok)
		log_warnx("runs: no writer thread; certificates are written by the loop");
	close_stale(r);
	return r;
}

void runs_configure(struct runs *r, const struct conf *c)
{
	r->c = c;
}

void runs_set_rules(struct runs *r, const struct rules *rules)
{
	r->rules = rules;
}

void runs_free(struct runs *r)
{
	if (!r)
		return;
	while (r->open) {
		struct run *u = r->open;

		r->open = u->next;
		r->nopen--;
		json_object_put(close_run(r, u, "never ended: the daemon stopped during the run", 0));
	}
	while (r->closing) {
		struct run *u = r->closing;

		r->closing = u->next;
		finish(r, u);
	}
	if (r->th_ok) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->th, NULL);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	if (r->dirfd >= 0)
		close(r->dirfd);
	for (unsigned i = 0; i < RUNS_KEEP; i++)
		json_object_put(r->kept[i]);
	loop_timer_free(r->tick);
	free(r);
}
