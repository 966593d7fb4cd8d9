/* bundler: an investigation's record -> an evidence bundle. */
#include "daemon/forensic/bundler.h"
#include "bundle/bundle.h"
#include "bundle/report.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/forensic/evid_devlink.h"
#include "daemon/forensic/evid_flows.h"
#include "daemon/forensic/evidence.h"
#include "daemon/port.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "probes/probe_exec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_FILES 64

struct bundler {
	struct loop *loop;
	const struct conf *c;
	struct probe_exec *hook;
	char running[PATH_MAX];                 /* the bundle the hook runs for */
	char *queue[BUNDLER_HOOK_QUEUE];        /* bundles waiting for the hook, oldest first */
	unsigned qhead, qlen;
};

struct bundler *bundler_new(struct loop *l, const struct conf *c)
{
	struct bundler *b = calloc(1, sizeof(*b));

	if (b) {
		b->loop = l;
		b->c = c;
	}
	return b;
}

static void hook_dropped(const char *path, const char *why)
{
	count_hook_dropped();
	log_event(LOG_EV_HOOK_DROPPED, LOG_WARNING,
		  LOG_FIELDS({ LF_BUNDLE, path }, { LF_REASON, why }),
		  "bundle_hook: not run for %s: %s", path, why);
}

void bundler_free(struct bundler *b)
{
	if (!b)
		return;
	/* never silently: each bundle that will not get its hook is named */
	/* a grace to clean up (nicstall-upload removes its packed copy); the
	 * stop waits at most this long, and probe_exec_free kills what is left */
	if (b->hook)
		hook_dropped(b->running, probe_exec_terminate(b->hook, BUNDLER_HOOK_STOP_MS) ?
			     "the daemon stopped while its hook ran (it ended on SIGTERM)" :
			     "the daemon stopped while its hook ran (killed: still there "
			     BUNDLER_HOOK_STOP_TEXT " after SIGTERM)");
	probe_exec_free(b->hook);
	for (; b->qlen; b->qlen--, b->qhead = (b->qhead + 1) % BUNDLER_HOOK_QUEUE) {
		hook_dropped(b->queue[b->qhead], "the daemon is stopping");
		free(b->queue[b->qhead]);
	}
	free(b);
}

void bundler_configure(struct bundler *b, const struct conf *c)
{
	b->c = c;
}

/* ---- the completion hook: one run at a time, the others queued ---- */

static void hook_next(struct bundler *b);

static void hook_result(const char *path, const char *outcome, int pri, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void hook_result(const char *path, const char *outcome, int pri, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	count_hook_result(outcome);
	log_event(LOG_EV_HOOK_RESULT, pri, LOG_FIELDS({ LF_BUNDLE, path }, { LF_OUTCOME, outcome }),
		  "bundle_hook: %s (%s)", msg, path);
}

static void hook_done(struct probe_exec *pe, void *arg)
{
	struct bundler *b = arg;
	const struct probe_exec_result *r = probe_exec_result(pe);

	if (r->not_found)
		hook_result(b->running, "not-found", LOG_WARNING, "command not found: %s",
			    b->c->bundle_hook);
	else if (r->priv_failed)        /* never run: the step is named */
		hook_result(b->running, "failed", LOG_ERR, "%s", r->error);
	else if (r->timed_out)
		hook_result(b->running, "timeout", LOG_WARNING, "timed out and was killed");
	else if (r->exited && r->status == 0)
		hook_result(b->running, "ok", LOG_INFO, "done (exit 0)");
	else
		hook_result(b->running, "failed", LOG_WARNING, "failed (%s %d)%s%.*s",
			    r->signaled ? "signal" : "exit", r->signaled ? r->signo : r->status,
			    r->out_len ? ": " : "", (int)(r->out_len > 200 ? 200 : r->out_len),
			    r->out ? r->out : "");
	probe_exec_free(pe);
	b->hook = NULL;
	b->running[0] = '\0';
	hook_next(b);
}

/* Start the hook for path; 0 when it runs, -1 when it could not start
 * (logged). */
static int hook_start(struct bundler *b, const char *path)
{
	char **argv = NULL, **full;
	char err[256];
	int argc;

	if (access(path, F_OK) < 0) {
		hook_dropped(path, "the bundle was removed (retention) before its turn");
		return -1;
	}
	argc = probe_exec_split(b->c->bundle_hook, &argv, err, sizeof(err));
	if (argc < 0) {
		hook_result(path, "failed", LOG_WARNING, "%s", err);
		return -1;
	}
	full = calloc((size_t)argc + 2, sizeof(char *));
	if (!full) {
		probe_exec_argv_free(argv);
		hook_result(path, "failed", LOG_WARNING, "out of memory");
		return -1;
	}
	for (int i = 0; i < argc; i++)
		full[i] = argv[i];
	full[argc] = (char *)path;
	util_strlcpy(b->running, path, sizeof(b->running));
	/* unprivileged: hook_user, group hook_group (the bundles'), no
	 * capabilities (conf.c resolve_children) */
	b->hook = probe_exec_start(b->loop, (const char *const *)full, &b->c->hook_cred, -1,
				   b->c->hook_timeout_ns, 16 * 1024, hook_done, b,
				   err, sizeof(err));
	free(full);
	probe_exec_argv_free(argv);
	if (!b->hook) {
		hook_result(path, "failed", LOG_WARNING, "%s", err);
		b->running[0] = '\0';
		return -1;
	}
	return 0;
}

static void hook_next(struct bundler *b)
{
	while (!b->hook && b->qlen) {
		char *path = b->queue[b->qhead];

		b->qhead = (b->qhead + 1) % BUNDLER_HOOK_QUEUE;
		b->qlen--;
		if (!b->c->bundle_hook[0])
			hook_dropped(path, "bundle_hook was unset by a reload");
		else
			hook_start(b, path);
		free(path);
	}
}

static void run_hook(struct bundler *b, const char *path)
{
	char *copy;

	if (!b->c->bundle_hook[0])
		return;
	if (!b->hook && !b->qlen) {
		hook_start(b, path);
		return;
	}
	if (b->qlen >= BUNDLER_HOOK_QUEUE) {
		hook_dropped(path, "the hook queue is full (" BUNDLER_HOOK_QUEUE_TEXT
			     " bundles wait for the running hook)");
		return;
	}
	copy = strdup(path);
	if (!copy) {
		hook_dropped(path, "out of memory");
		return;
	}
	b->queue[(b->qhead + b->qlen) % BUNDLER_HOOK_QUEUE] = copy;
	b->qlen++;
	log_info("bundle_hook: queued for %s (%u waiting)", path, b->qlen);
}

/* ---- the files ---- */

struct filelist {
	struct bundle_file f[MAX_FILES];
	char *owned[MAX_FILES];
	size_t n;
};

static void add_json(struct filelist *fl, const char *name, struct json_object *o)
{
	const char *s;

	if (!o || fl->n >= MAX_FILES)
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
	if (!text || fl->n >= MAX_FILES) {
		free(text);
		return;
	}
	fl->owned[fl->n] = text;
	fl->f[fl->n].name = strdup(name);
	fl->f[fl->n].data = text;
	fl->f[fl->n].len = strlen(text);
	fl->n++;
}

static void add_probes(struct filelist *fl, struct json_object *probes)
{
	for (size_t i = 0; i < jx_len(probes); i++) {
		struct json_object *pr = json_object_array_get_idx(probes, i);
		struct json_object *av = jx_arr(pr, "argv");
		char fn[64], cmdline[1024] = "", *txt;
		size_t off = 0;

		for (size_t k = 0; k < jx_len(av) && off < sizeof(cmdline) - 1; k++)
			off += (size_t)snprintf(cmdline + off, sizeof(cmdline) - off, "%s%s",
				k ? " " : "", json_object_get_string(json_object_array_get_idx(av, k)));
		snprintf(fn, sizeof(fn), "probes/%zu.txt", i + 1);
		if (asprintf(&txt, "$ %s\n%s", cmdline, jx_text(pr, "output")) > 0)
			add_text(fl, fn, txt);
	}
}

static void add_json_cb(const char *name, struct json_object *o, void *arg)
{
	add_json(arg, name, o);
}

/* When the stall began: the earliest stalled flow's wait, else the open. */
static uint64_t stall_start_mono(const struct bundler_inv *in)
{
	struct json_object *fl = jx_arr(jx_get(in->rec, IR_INCIDENT), "flows");
	uint64_t t = in->open_ns;

	for (size_t i = 0; i < jx_len(fl); i++) {
		uint64_t s = jx_u64(json_object_array_get_idx(fl, i), "stalled_at_mono_ns");

		if (s && s < t)
			t = s;
	}
	return t;
}

/* A work file of the engines' evidence (an Onload stackdump), copied in. */
static void add_spooled(const char *path, const char *name, void *arg)
{
	struct filelist *fl = arg;

	if (fl->n >= MAX_FILES)
		return;
	fl->f[fl->n].name = strdup(name);
	fl->f[fl->n].src_path = path;
	fl->n++;
}

static void unlink_spooled(const char *path, const char *name, void *arg)
{
	(void)name;
	(void)arg;
	unlink(path);
}

/* report.html: the stall as a picture, from the same files (so it is
 * covered by SHA256SUMS like them). */
static void add_report(struct filelist *fl, struct json_object *man, const struct bundler_inv *in)
{
	struct report_opts ro = { .rules = in->rules };
	struct report *rep;
	char err[256], *html = NULL;

	rep = report_load_mem(man, fl->f, fl->n, err, sizeof(err));
	if (rep)
		html = report_html_string(rep, &ro, NULL);
	report_free(rep);
	if (html)
		add_text(fl, REPORT_NAME, html);
	else
		log_warnx("incident %" PRIu64 ": no report.html: %s", in->incident_id,
			  rep ? "out of memory" : err);
}

/* This host's name: host_name when set (peers know it by that), else the
 * system's. */
static void host_of(const struct conf *c, char *host, size_t len)
{
	if (c->host_name[0])
		util_strlcpy(host, c->host_name, len);
	else
		gethostname(host, len - 1);
}

/* What the journal gave (its lines are journal.json) and the kernel's
 * own lines the investigation kept: each reprogram's promiscuous-mode
 * lines (the kernel log that confirmed it), so that summary.txt says what
 * record.json holds. */
static void manifest_logs(struct json_object *man, const struct bundler_inv *in)
{
	struct json_object *rec = in->rec;
	struct json_object *j = jx_get(rec, IR_JOURNAL), *rp = jx_arr(rec, IR_REPROGRAMS);
	struct json_object *js = json_object_new_object(), *kl = json_object_new_array();

	if (j && json_object_is_type(j, json_type_object)) {
		jx_copy(js, MK_J_AVAILABLE, j, MK_J_AVAILABLE);
		jx_copy(js, "reason", j, "reason");
		if (jx_arr(j, MK_J_ENTRIES))
			jx_add_u64(js, "count", jx_len(jx_arr(j, MK_J_ENTRIES)));
		else if (jx_arr(j, MK_J_LINES))
			jx_add_u64(js, "count", jx_len(jx_arr(j, MK_J_LINES)));
		json_object_object_add(man, MK_JOURNAL, js);
	} else {
		json_object_put(js);
	}
	for (size_t i = 0; i < jx_len(rp); i++) {
		struct json_object *r = json_object_array_get_idx(rp, i);
		struct json_object *k = jx_obj(r, "kernel_log"), *e;

		if (!k || !jx_arr(k, "lines"))
			continue;
		e = json_object_new_object();
		jx_add_str(e, MK_KL_WHAT, jx_bool(k, "confirmed") ?
			   "the receive-filter reprogram, confirmed" :
			   "the receive-filter reprogram, not confirmed");
		jx_copy(e, "port", r, "port");
		jx_copy(e, MK_KL_LINES, k, "lines");
		json_object_array_add(kl, e);
	}
	/* each port's device lines, read when the port opened */
	for (unsigned i = 0; i < in->nports; i++) {
		struct json_object *k = in->ports[i] ? port_kmsg(in->ports[i]) : NULL, *e;

		if (!k)
			continue;
		e = json_object_new_object();
		jx_add_str(e, MK_KL_WHAT, "the device's lines since boot, read when the port opened");
		jx_add_str(e, "port", in->port_names[i]);
		jx_copy(e, MK_KL_LINES, k, "lines");
		jx_copy(e, "more", k, "more");
		jx_copy(e, "error", k, "error");
		json_object_array_add(kl, e);
	}
	if (json_object_array_length(kl))
		json_object_object_add(man, MK_KERNEL_LOG, kl);
	else
		json_object_put(kl);
}

static struct json_object *manifest(const struct bundler_inv *in, const char *host)
{
	struct json_object *man = json_object_new_object(), *ports = json_object_new_object();
	struct json_object *rec = in->rec;
	struct utsname u;
	char kernel[400];

	/* the release names the kernel; the version string ("#1 SMP
	 * PREEMPT_DYNAMIC @0": a build time of 0 on reproducible builds) is
	 * kept apart, for the record */
	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s %s", u.sysname, u.release);
	/* "trigger" first, "peer" second: retention reads only the first
	 * few KiB of a snapshot's manifest to tell its pool and its peer
	 * (bundle/list.c classify) */
	jx_copy(man, "trigger", rec, IR_TRIGGER);
	jx_copy(man, MK_PEER, rec, IR_PEER);
	jx_add_str(man, "host", host);
	jx_add_str(man, "kernel", kernel);
	jx_add_str(man, "kernel_build", u.version);
	jx_add_str(man, "nicstalld_version", NICSTALL_VERSION);
	jx_add_u64(man, "incident_id", in->incident_id);
	jx_add_u64(man, "investigation_id", in->id);
	jx_add_str(man, "port", in->port_names[0]);
	jx_add_u64(man, "opened_real_ns", in->open_real_ns);
	for (unsigned i = 0; i < in->nports; i++) {
		struct json_object *id, *nb, *keep;

		if (!in->ports[i])
			continue;
		id = evid_identity_json(in->ports[i]);
		/* the neighbour entries at the stall, unicast ones (what a
		 * failed resolution would show: "What it is not") */
		nb = jx_arr(jx_get(jx_get(rec, IR_SNAPSHOT), in->port_names[i]), IR_S_NEIGHBOURS);
		keep = json_object_new_array();
		for (size_t k = 0; k < jx_len(nb) && k < 32; k++) {
			struct json_object *e = json_object_array_get_idx(nb, k), *o;
			const char *st = jx_str(e, "state");

			if (!st || !strcmp(st, "NOARP") || !strcmp(st, "PERMANENT"))
				continue;
			o = json_object_new_object();
			jx_copy(o, "addr", e, "addr");
			jx_copy(o, "state", e, "state");
			json_object_array_add(keep, o);
		}
		json_object_object_add(id, MK_P_NEIGHBOURS, keep);
		json_object_object_add(ports, in->port_names[i], id);
	}
	json_object_object_add(man, "ports", ports);
	json_object_object_add(man, "verdict", json_object_get(jx_get(rec, IR_VERDICT)));
	json_object_object_add(man, "facts", json_object_get(jx_get(rec, IR_FACTS)));
	json_object_object_add(man, "release", json_object_get(jx_get(rec, IR_RELEASE)));
	json_object_object_add(man, "steps", json_object_get(jx_get(rec, IR_STEPS)));
	jx_copy(man, "run", rec, "run");        /* the benchmark run it fell in (runs.h) */
	if (jx_obj(rec, IR_PEERS)) {
		/* who was notified, who answered, after how long, their bundles;
		 * the summaries themselves are in peers.json */
		struct json_object *ps = json_object_new_object();

		json_object_object_foreach(jx_obj(rec, IR_PEERS), name, pv) {
			struct json_object *e = json_object_new_object();
			static const char *const keys[] = { MK_PS_ADDRESS, "port", MK_PS_HOST,
				MK_PS_NOTIFIED, MK_PS_ANSWERED, MK_PS_RTT_MS, MK_PS_AFTER_MS,
				MK_PS_BUNDLE, MK_PS_ERROR };

			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				jx_copy(e, keys[i], pv, keys[i]);
			json_object_object_add(ps, name, e);
		}
		json_object_object_add(man, MK_PEERS, ps);
	}
	if (jx_get(rec, IR_ENGINES))
		json_object_object_add(man, MK_ENGINES, json_object_get(jx_get(rec, IR_ENGINES)));
	manifest_logs(man, in);
	return man;
}

int bundler_write(struct bundler *b, const struct bundler_inv *in, char *path, size_t pathlen,
		  char *err, size_t errlen)
{
	const struct conf *c = b->c;
	struct json_object *rec = in->rec, *man;
	struct json_object *links = json_object_new_object(), *flows = json_object_new_object();
	const char *vname = jx_str(jx_get(rec, IR_VERDICT), "verdict");
	struct filelist fl = { 0 };
	char host[256] = "", name[256], e[512];
	uint64_t from;
	int rc;

	if (!vname)
		vname = "unknown";
	host_of(c, host, sizeof(host));
	man = manifest(in, host);
	{
		/* devlink health: its files, and its events and dumps into the
		 * record before record.json is written */
		uint64_t t0 = stall_start_mono(in);
		uint64_t real0 = in->open_real_ns - (in->open_ns - t0);
		struct json_object *dl = evid_devlink_bundle(rec, in->port_names, in->ports,
							     in->nports, real0,
							     t0 > 10000000000ull ? t0 - 10000000000ull : 0,
							     in->open_ns, add_json_cb, &fl);

		if (dl)
			json_object_object_add(man, MK_DEVLINK, dl);
	}
	add_json(&fl, "record.json", rec);
	add_json(&fl, "facts.json", jx_get(rec, IR_FACTS));
	add_json(&fl, "window.json", jx_get(rec, IR_WINDOW));
	add_json(&fl, "threads.json", jx_get(rec, IR_THREADS));
	add_json(&fl, "pings.json", jx_get(rec, IR_PINGS));
	add_json(&fl, "pings_mtu.json", jx_get(rec, IR_PINGS_MTU));
	add_json(&fl, "journal.json", jx_get(rec, IR_JOURNAL));
	add_json(&fl, "peers.json", jx_get(rec, IR_PEERS));
	json_object_object_add(flows, "at_open",
			       json_object_get(jx_get(jx_get(rec, IR_SNAPSHOT), IR_S_FLOWS)));
	json_object_object_add(flows, "incident",
			       json_object_get(jx_get(jx_get(rec, IR_INCIDENT), "flows")));
	add_json(&fl, "flows.json", flows);
	json_object_put(flows);
	from = in->open_ns > 30000000000ull ? in->open_ns - 30000000000ull : 0;
	for (unsigned i = 0; i < in->nports; i++) {
		struct json_object *pj = jx_get(jx_get(rec, IR_SNAPSHOT), in->port_names[i]), *r;
		char fn[96];

		if (pj) {
			struct json_object *l = json_object_new_object();

			json_object_object_add(l, "link", json_object_get(jx_get(pj, IR_S_LINK)));
			json_object_object_add(l, "neighbours",
					       json_object_get(jx_get(pj, IR_S_NEIGHBOURS)));
			json_object_object_add(links, in->port_names[i], l);
		}
		if (!in->ports[i])
			continue;
		r = evid_recorder_json(in->ports[i], from);
		snprintf(fn, sizeof(fn), "recorder/%s.json", in->port_names[i]);
		add_json(&fl, fn, r);
		json_object_put(r);
	}
	add_json(&fl, "links.json", links);
	json_object_put(links);
	add_probes(&fl, jx_get(rec, IR_PROBES));
	evid_flows_files(rec, add_spooled, &fl);
	add_json(&fl, "engines.json", jx_get(rec, IR_ENGINES));
	for (unsigned i = 0; i < in->npcap && fl.n < MAX_FILES; i++) {
		char fn[PATH_MAX];
		const char *base = strrchr(in->pcaps[i], '/');

		snprintf(fn, sizeof(fn), "captures/%s", base ? base + 1 : in->pcaps[i]);
		fl.f[fl.n].name = strdup(fn);
		fl.f[fl.n].src_path = in->pcaps[i];
		fl.n++;
	}
	add_text(&fl, "summary.txt", bundle_summary_rules(man, in->rules));
	add_report(&fl, man, in);

	bundle_name(name, sizeof(name), in->open_real_ns, host, in->port_names[0], vname);
	rc = bundle_write(c->state_dir, name, man, fl.f, fl.n, 16u << 20, path, pathlen,
			  e, sizeof(e));
	if (rc < 0) {
		count_bundle(in->port_names[0], 0, in->incident_id, vname,
			       jx_str(jx_get(rec, IR_RELEASE), "action"));
		log_event(LOG_EV_BUNDLE_FAILED, LOG_ERR,
			  LOG_FIELDS({ LF_PORT, in->port_names[0] },
				     { LF_INCIDENT, in->incident_id ? LOG_U64(in->incident_id) : NULL },
				     { LF_INVESTIGATION, LOG_U64(in->id) }, { LF_VERDICT, vname },
				     { LF_ACTION, jx_str(jx_get(rec, IR_RELEASE), "action") },
				     { LF_ERROR, e }),
			  "incident %" PRIu64 ": bundle not written: %s (the record stays in memory: "
			  "nicstallctl incident show %" PRIu64 ")", in->incident_id, e, in->id);
		jx_add_str(rec, IR_BUNDLE_ERROR, e);
		util_errf(err, errlen, "%s", e);
	} else {
		jx_add_str(rec, IR_BUNDLE, path);
		/* a peer's snapshot is of no incident of this host's */
		count_bundle(in->port_names[0], 1, jx_get(rec, IR_PEER) ? 0 : in->incident_id,
			       vname, jx_str(jx_get(rec, IR_RELEASE), "action"));
		if (jx_get(rec, IR_PEER))
			log_event(LOG_EV_BUNDLE_WRITTEN, LOG_WARNING,
				  LOG_FIELDS({ LF_PORT, in->port_names[0] }, { LF_VERDICT, vname },
					     { LF_BUNDLE, path }),
				  "incident %s:%" PRIu64 " of peer %s: bundle %s (verdict %s)",
				  jx_text(jx_get(rec, IR_PEER), MK_PE_ORIGIN_HOST),
				  jx_u64(jx_get(rec, IR_PEER), MK_PE_INCIDENT_ID),
				  jx_text(jx_get(rec, IR_PEER), MK_PE_ORIGIN_PEER), path, vname);
		else
			log_event(LOG_EV_BUNDLE_WRITTEN, LOG_WARNING,
				  LOG_FIELDS({ LF_PORT, in->port_names[0] },
					     { LF_INCIDENT, in->incident_id ? LOG_U64(in->incident_id) : NULL },
					     { LF_INVESTIGATION, LOG_U64(in->id) }, { LF_VERDICT, vname },
					     { LF_BUNDLE, path },
					     { LF_ACTION, jx_str(jx_get(rec, IR_RELEASE), "action") }),
				  "incident %" PRIu64 ": bundle %s (verdict %s)", in->incident_id, path, vname);
		for (unsigned i = 0; i < in->npcap; i++)
			unlink(in->pcaps[i]);
		evid_flows_files(rec, unlink_spooled, NULL);
		if (jx_get(rec, IR_PEER))
			bundle_retention(c->state_dir, BUNDLE_POOL_PEER, c->peer_bundle_max_count,
					 c->peer_bundle_max_bytes);
		else
			bundle_retention(c->state_dir, BUNDLE_POOL_OWN, c->bundle_max_count,
					 c->bundle_max_bytes);
		run_hook(b, path);
	}
	for (size_t i = 0; i < fl.n; i++) {
		free((char *)fl.f[i].name);
		free(fl.owned[i]);
	}
	json_object_put(man);
	return rc < 0 ? -1 : 0;
}
