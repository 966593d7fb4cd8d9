/* runs: benchmark runs, their certificates, and the policy the daemon's
 * interventions follow while one is open (runs.h). */
#include "daemon/runs.h"
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
#include "daemon/runs_int.h"

/* ---- small helpers ---- */

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void run_free(struct run *u)
{
	if (!u)
		return;
	runs_snap_free(u);
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
	json_object_put(runs_build_cert(r, u, 1));
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
		return runs_build_cert(r, u, 0);
	}
	c = runs_build_cert(r, u, 1);
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

		runs_utc(loop_real_ns(), when, sizeof(when), 0);
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
	runs_utc(u->start_real, u8, sizeof(u8), 1);
	snprintf(u->file, sizeof(u->file), "%s@%s", name, u8);
	/* two runs of one name in one millisecond: never one file */
	if (!strcmp(u->file, r->last_file))
		snprintf(u->file, sizeof(u->file), "%s@%s-%u", name, u8, ++r->same + 1);
	else {
		util_strlcpy(r->last_file, u->file, sizeof(r->last_file));
		r->same = 0;
	}
	runs_snap_take(r, u);
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
		jx_add_str(st, "run_policy", runs_policy_name(u->policy));
		json_object_object_add(st, "labels", json_object_get(lab));
		runs_add_time(st, "start", u->start_real, u->start_mono);
		snprintf(fn, sizeof(fn), "%s.open", u->file);
		bgw_put_json(r->w, fn, st, NULL);
		json_object_put(st);
	}
	jx_add_str(o, "run", name);
	jx_add_str(o, "certificate", u->file);
	jx_add_str(o, "run_policy", runs_policy_name(u->policy));
	runs_add_time(o, "start", u->start_real, u->start_mono);
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
			json_object_object_add(o, "certificate", runs_build_cert(r, u, 0));
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
	jx_add_str(o, "run_policy", runs_policy_name(r->c->run_policy));
	for (struct run *u = r->open; u; u = u->next) {
		struct json_object *e = json_object_new_object();

		jx_add_str(e, "run", u->name);
		jx_add_u64(e, "uid", u->uid);
		runs_add_time(e, "start", u->start_real, u->start_mono);
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
	jx_add_str(o, "run_policy", runs_policy_name(r->c->run_policy));
	for (const struct run *u = r->open; u; u = u->next)
		if (u->start_mono <= mono) {
			jx_add_str(o, "name", u->name);
			runs_add_time(o, "start", u->start_real, u->start_mono);
			break;
		}
	if (!jx_get(o, "name"))
		for (const struct run *u = r->closing; u; u = u->next)
			if (u->start_mono <= mono && mono <= u->end_mono) {
				jx_add_str(o, "name", u->name);
				runs_add_time(o, "start", u->start_real, u->start_mono);
				runs_add_time(o, "end", u->end_real, u->end_mono);
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

	if (bgw_dirfd(r->w) < 0 || (fd = dup(bgw_dirfd(r->w))) < 0)
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
		buf = fsu_read_at(bgw_dirfd(r->w), de->d_name, 65536, &len, &e);
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
		runs_add_time(cert, "closed", loop_real_ns(), loop_mono_ns());
		jx_add_str(cert, "note", "nothing of the run after the daemon stopped is known: "
			   "no counters, incidents or interventions are certified");
		jx_add_str(cert, "certificate", fn);
		jx_add_str(cert, "state", "written");
		{
			char cn[RUN_NAME_MAX + 56];

			snprintf(cn, sizeof(cn), "%s.cert", fn);
			bgw_put_json(r->w, cn, cert, "incomplete");
		}
		bgw_put(r->w, de->d_name, NULL, 0, 0);
		log_event(LOG_EV_RUN_FLAGGED, LOG_WARNING,
			  LOG_FIELDS({ "NICSTALL_RUN", name }, { LF_VERDICT, "incomplete" },
				     { LF_REASON, why }),
			  "run %s: incomplete: %s", name, why);
		r->words[RUN_INCOMPLETE]++;
		runs_keep_cert(r, cert);
		json_object_put(cert);
		json_object_put(st);
	}
	closedir(d);
}

struct runs *runs_new(struct loop *l, struct ports *ps, struct stall *st, const struct conf *c)
{
	struct runs *r = calloc(1, sizeof(*r));
	char dir[PATH_MAX + 8], err[PATH_MAX + 160];
	int fd;

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
	loop_timer_name(r->tick, "runs");
	snprintf(dir, sizeof(dir), "%s/%s", c->state_dir, RUNS_DIR);
	fd = fsu_private_dir(dir, 0750, err, sizeof(err));
	if (fd < 0)
		log_warnx("runs: no certificates will be written: %s", err);
	r->w = bgw_new(fd, dir);
	if (!r->w) {
		loop_timer_free(r->tick);
		free(r);
		return NULL;
	}
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
	bgw_free(r->w);
	for (unsigned i = 0; i < RUNS_KEEP; i++)
		json_object_put(r->kept[i]);
	loop_timer_free(r->tick);
	free(r);
}
