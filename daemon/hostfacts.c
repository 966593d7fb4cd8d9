/* hostfacts: the host source's counters over an incident's stall and
 * observation window as the figures the producer-stall verdicts name
 * (rules/facts.h FK_HOST_NUMS, FK_HOST_STRS; hostfacts.h). */
#include "daemon/hostfacts.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DISKS 64
#define MAX_PROCS 48

struct hdisk {
	char name[64];
	double reads, writes, read_ms, write_ms, io_ms;
};

/* a configured producer (producer.NAME.) or a flow owner (owner.PID.) */
struct hent {
	char id[64];
	int owner;
	double blkio, runq, throttled, cpu;
};

struct hsum {
	double psi[5];              /* io some, io full, cpu some, mem some, mem full */
	int have_psi[5];
	struct hdisk d[MAX_DISKS];
	unsigned nd;
	struct hent e[MAX_PROCS];
	unsigned ne;
};

static const char *const psi_keys[5] = {
	"host.psi.io.some_us", "host.psi.io.full_us", "host.psi.cpu.some_us",
	"host.psi.memory.some_us", "host.psi.memory.full_us",
};
static const char *const psi_facts[5] = {
	"io_some_pct", "io_full_pct", "cpu_some_pct", "mem_some_pct", "mem_full_pct",
};

static struct hdisk *disk_of(struct hsum *h, const char *name, size_t len)
{
	if (len >= sizeof(h->d[0].name))
		return NULL;
	for (unsigned i = 0; i < h->nd; i++)
		if (strlen(h->d[i].name) == len && !memcmp(h->d[i].name, name, len))
			return &h->d[i];
	if (h->nd == MAX_DISKS)
		return NULL;
	memcpy(h->d[h->nd].name, name, len);
	h->d[h->nd].name[len] = 0;
	return &h->d[h->nd++];
}

static struct hent *ent_of(struct hsum *h, const char *id, size_t len, int owner)
{
	if (len >= sizeof(h->e[0].id))
		return NULL;
	for (unsigned i = 0; i < h->ne; i++)
		if (h->e[i].owner == owner && strlen(h->e[i].id) == len && !memcmp(h->e[i].id, id, len))
			return &h->e[i];
	if (h->ne == MAX_PROCS)
		return NULL;
	memcpy(h->e[h->ne].id, id, len);
	h->e[h->ne].id[len] = 0;
	h->e[h->ne].owner = owner;
	return &h->e[h->ne++];
}

/* One counter's delta v into h. */
static void take(struct hsum *h, const char *name, double v)
{
	static const char *const pf[] = { ".blkio_delay_ns", ".run_delay_ns", ".throttled_ns",
					  ".cpu_ns" };
	size_t n = strlen(name);

	for (int i = 0; i < 5; i++)
		if (!strcmp(name, psi_keys[i])) {
			h->psi[i] += v;
			h->have_psi[i] = 1;
			return;
		}
	if (!strncmp(name, "host.disk.", 10)) {
		const char *dev = name + 10, *dot = strrchr(dev, '.');
		struct hdisk *d;

		if (!dot || dot == dev || !(d = disk_of(h, dev, (size_t)(dot - dev))))
			return;
		if (!strcmp(dot, ".reads"))
			d->reads += v;
		else if (!strcmp(dot, ".writes"))
			d->writes += v;
		else if (!strcmp(dot, ".read_ms"))
			d->read_ms += v;
		else if (!strcmp(dot, ".write_ms"))
			d->write_ms += v;
		else if (!strcmp(dot, ".io_ms"))
			d->io_ms += v;
		return;
	}
	for (int k = 0; k < 2; k++) {
		const char *pre = k ? "owner." : "producer.";
		size_t pl = strlen(pre);

		if (strncmp(name, pre, pl))
			continue;
		for (int i = 0; i < 4; i++) {
			size_t fl = strlen(pf[i]);
			struct hent *e;

			/* producer.NAME.psi.io.some_us ends in none of these */
			if (n <= pl + fl || strcmp(name + n - fl, pf[i]) ||
			    !(e = ent_of(h, name + pl, n - pl - fl, k)))
				continue;
			*(i == 0 ? &e->blkio : i == 1 ? &e->runq : i == 2 ? &e->throttled : &e->cpu) += v;
			return;
		}
	}
}

static void take_period(struct hsum *h, struct json_object *per)
{
	struct json_object *c = jx_obj(per, FK_COUNTERS);
	double v;

	if (!c)
		return;
	json_object_object_foreach(c, name, val) {
		if (strncmp(name, "host.", 5) && strncmp(name, "producer.", 9) &&
		    strncmp(name, "owner.", 6))
			continue;
		if (jx_num(val, &v) && v >= 0)
			take(h, name, v);
	}
}

static int has_host(struct json_object *per)
{
	return jx_get(jx_obj(per, FK_COUNTERS), "host.psi.io.some_us") ||
	       jx_get(jx_obj(per, FK_COUNTERS), "host.psi.cpu.some_us");
}

static struct json_object *find_by(struct json_object *arr, const char *key, const char *val)
{
	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		if (jx_str(x, key) && !strcmp(jx_str(x, key), val))
			return x;
	}
	return NULL;
}

static void add_str(struct json_object *o, const char *key, const char *v)
{
	if (v && *v)
		jx_add_str(o, key, v);
}

/* Is disk d one of the processes' (the producer's) open files' disks? */
static int held_by(const char *disk, struct json_object *procs)
{
	for (size_t i = 0; i < jx_len(procs); i++) {
		struct json_object *dv = jx_arr(json_object_array_get_idx(procs, i), "devices");

		for (size_t k = 0; k < jx_len(dv); k++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(dv, k)), disk))
				return 1;
	}
	return 0;
}

/* The disk the figures name: of the disks the producer's processes hold
 * files open on (procs), the busiest; else the host's busiest that was
 * busy at all. Busiest: the most time with I/O in flight, then the most
 * I/O completed. */
static void disk_figures(struct json_object *o, const struct hsum *h, double span,
			 struct json_object *ident, struct json_object *procs)
{
	const struct hdisk *b = NULL;
	struct json_object *dev;
	double ios;

	for (int pass = 0; pass < 2 && !b; pass++)
		for (unsigned i = 0; i < h->nd; i++) {
			const struct hdisk *d = &h->d[i];

			if (pass == 0 ? !held_by(d->name, procs) : !(d->io_ms > 0))
				continue;
			if (!b || d->io_ms > b->io_ms ||
			    (d->io_ms == b->io_ms && d->reads + d->writes > b->reads + b->writes))
				b = d;
		}
	if (!b)
		return;
	ios = b->reads + b->writes;
	jx_add_str(o, "disk", b->name);
	dev = find_by(jx_arr(ident, "devices"), "name", b->name);
	add_str(o, "disk_model", jx_str(dev, "model"));
	add_str(o, "disk_firmware", jx_str(dev, "firmware"));
	add_str(o, "disk_transport", jx_str(dev, "transport"));
	json_object_object_add(o, "disk_reads_s", jx_new_fixed(b->reads / span, 1));
	json_object_object_add(o, "disk_writes_s", jx_new_fixed(b->writes / span, 1));
	if (ios > 0)
		json_object_object_add(o, "disk_await_ms",
				       jx_new_fixed((b->read_ms + b->write_ms) / ios, 1));
	json_object_object_add(o, "disk_util_pct", jx_new_fixed(b->io_ms / (span * 10), 1));
	/* a cgroup's limit on the producer's I/O to that disk (host_disks.c
	 * host_proc_io_limits): the reads wait before the device, so its await
	 * stays low while the producer waits */
	for (size_t i = 0; i < jx_len(procs); i++) {
		struct json_object *lv = jx_arr(json_object_array_get_idx(procs, i), "io_limits");

		for (size_t k = 0; k < jx_len(lv); k++) {
			struct json_object *x = json_object_array_get_idx(lv, k);
			const char *cg = jx_str(x, "cgroup");

			if (!jx_str(x, "device") || strcmp(jx_str(x, "device"), b->name) ||
			    jx_get(o, "producer_io_limit"))
				continue;
			add_str(o, "producer_io_limit", jx_str(x, "limit"));
			/* a cgroup's name is its creator's (a delegated user's):
			 * only a short clean line reaches a verdict or a peer */
			if (cg && strlen(cg) <= 96) {
				char *c = util_utf8_clean(cg, strlen(cg));

				if (c && !strcmp(c, cg) && !strpbrk(c, "\t\n\r"))
					add_str(o, "producer_io_limit_cgroup", c);
				free(c);
			}
		}
	}
}

static double waited(const struct hent *e)
{
	return e->blkio + e->runq + e->throttled;
}

/* The producer the figures name: the configured producer that waited most
 * (block I/O, run queue, throttling), else, when none waited, the flow
 * owner that did (a producer's process is often a flow owner as well: the
 * name the configuration gave it wins). */
static struct json_object *producer_figures(struct json_object *o, const struct hsum *h,
					    double span, struct json_object *ident)
{
	struct json_object *procs = json_object_new_array();
	const struct hent *bp = NULL, *bo = NULL, *b;
	char name[96];

	for (unsigned i = 0; i < h->ne; i++) {
		const struct hent *e = &h->e[i], **best = e->owner ? &bo : &bp;

		if (!*best || waited(e) > waited(*best))
			*best = e;
	}
	b = bp && (waited(bp) > 0 || !bo || waited(bo) == 0) ? bp : bo;
	if (!b)
		return procs;
	for (size_t i = 0; i < jx_len(jx_arr(ident, "processes")); i++) {
		struct json_object *x = json_object_array_get_idx(jx_arr(ident, "processes"), i);
		char pid[24];

		snprintf(pid, sizeof(pid), "%d", (int)jx_u64(x, "pid"));
		if (b->owner ? !strcmp(pid, b->id) : (jx_str(x, "producer") &&
						     !strcmp(jx_str(x, "producer"), b->id)))
			json_object_array_add(procs, json_object_get(x));
	}
	if (b->owner) {
		struct json_object *p = NULL;

		for (size_t i = 0; i < jx_len(jx_arr(ident, "processes")); i++) {
			struct json_object *x = json_object_array_get_idx(jx_arr(ident, "processes"), i);
			char pid[24];

			snprintf(pid, sizeof(pid), "%d", (int)jx_u64(x, "pid"));
			if (!strcmp(pid, b->id))
				p = x;
		}
		/* comm is the process's own choice (prctl PR_SET_NAME): only
		 * printable text reaches a summary and a peer, which refuses
		 * a control character */
		const char *comm = jx_str(p, "comm");
		char *c = comm ? util_utf8_clean(comm, strlen(comm)) : NULL;

		for (char *q = c; q && *q; q++)
			if (*q == '\t' || *q == '\n' || *q == '\r')
				*q = '?';
		snprintf(name, sizeof(name), "pid %s%s%s%s", b->id, c ? " (" : "", c ? c : "",
			 c ? ")" : "");
		free(c);
	} else {
		snprintf(name, sizeof(name), "%s", b->id);
	}
	jx_add_str(o, "producer", name);
	json_object_object_add(o, "producer_blkio_s", jx_new_fixed(b->blkio / 1e9, 2));
	json_object_object_add(o, "producer_blkio_pct", jx_new_fixed(b->blkio / (span * 1e7), 1));
	json_object_object_add(o, "producer_run_delay_s", jx_new_fixed(b->runq / 1e9, 2));
	json_object_object_add(o, "producer_run_delay_pct", jx_new_fixed(b->runq / (span * 1e7), 1));
	json_object_object_add(o, "producer_throttled_s", jx_new_fixed(b->throttled / 1e9, 2));
	json_object_object_add(o, "producer_throttled_pct",
			       jx_new_fixed(b->throttled / (span * 1e7), 1));
	json_object_object_add(o, "producer_cpu_pct", jx_new_fixed(b->cpu / (span * 1e7), 1));
	return procs;
}

/* The unit of a counter by its name's Prometheus suffix (base units:
 * "_seconds_total"; a site's own "_nanoseconds_total", as seed 004's
 * flare_engram_disk_wait_nanoseconds_total): seconds per count, 0 when it
 * is no time. name is the series key, labels after '{'. */
static double time_unit(const char *name)
{
	static const struct { const char *suf; double unit; } u[] = {
		{ "_nanoseconds_total", 1e-9 }, { "_microseconds_total", 1e-6 },
		{ "_milliseconds_total", 1e-3 }, { "_seconds_total", 1 },
	};
	size_t n = strcspn(name, "{");

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t l = strlen(u[i].suf);

		if (n >= l && !memcmp(name + n - l, u[i].suf, l))
			return u[i].unit;
	}
	return 0;
}

static int is_counter(const char *name)
{
	size_t n = strcspn(name, "{");

	return n > 6 && !memcmp(name + n - 6, "_total", 6);
}

/* An app counter's delta over the stall (and window) and the window alone
 * (-1: none there). */
static double app_delta(struct json_object *per, const char *key)
{
	double v;

	return jx_num(jx_get(jx_obj(per, FK_COUNTERS), key), &v) && v >= 0 ? v : -1;
}

/* The producer's application metrics over the stall (the app source's
 * counters app.EP.SERIES of endpoint EP: the producer's own, else the
 * port's), by the Prometheus conventions alone, no name known in advance:
 * of its counters (names ending in _total), the time counter (a unit
 * suffix) that grew most, as seconds and a share of the stall, and those
 * that moved at the healthy rate before and not at all in the observation
 * window's part inside the stall (its held period, when a stalled flow
 * moved again within the window and that part lasted HELD_MIN_S; else the
 * whole window; else the stall's period). app_said puts them in one line
 * for a verdict. */
static void app_figures(struct json_object *o, struct json_object *po, double span,
			const char *prod, const char *pname, struct json_object *app)
{
	struct json_object *st = jx_obj(po, FK_PER_STALL), *win = jx_obj(po, FK_PER_WINDOW);
	struct json_object *base = jx_obj(po, FK_PER_BASELINE), *ep = NULL;
	/* the window's part inside the stall, as producer-stall judges RDMA
	 * work (rules/50-verdicts.rules): the late message that ended the
	 * stall, after it, moved the producer's counters too */
	struct json_object *held = jx_obj(po, FK_PER_HELD);
	double bspan = jx_double(base, FK_SPAN_S, 0), best = 0, scale;
	const char *wait = NULL, *name;
	char pre[48], said[240], stopped[96];
	size_t pl, sl = 0;
	unsigned nstop = 0;

	if (!json_object_is_type(app, json_type_array))
		return;
	if (!(jx_double(held, FK_SPAN_S, 0) >= HELD_MIN_S))
		held = NULL;
	for (int k = 0; k < 2 && !ep; k++)
		ep = find_by(app, "name", k ? pname : prod ? prod : "");
	if (!ep || !(name = jx_str(ep, "name")))
		return;
	scale = jx_double(ep, "scale", 1);
	if (!(scale > 0))
		scale = 1;
	pl = (size_t)snprintf(pre, sizeof(pre), "app.%s.", name);
	if (pl >= sizeof(pre))
		return;
	stopped[0] = 0;
	json_object_object_foreach(jx_obj(st, FK_COUNTERS), key, val) {
		const char *series = key + pl;
		double d, w, b, unit;

		(void)val;
		if (strncmp(key, pre, pl) || !is_counter(series))
			continue;
		d = app_delta(st, key);
		w = app_delta(win, key);
		if (d < 0)
			continue;
		/* a time counter grows at most by the span for each thread
		 * that waits: past a thousand threads' worth it is a reset or
		 * a page that lies, not a figure */
		if ((unit = time_unit(series)) > 0 && (d + (w > 0 ? w : 0)) / scale * unit > best &&
		    (d + (w > 0 ? w : 0)) / scale * unit <= span * 1000) {
			best = (d + (w > 0 ? w : 0)) / scale * unit;
			wait = series;
		}
		b = app_delta(base, key);
		if (unit == 0 && bspan > 0 && b > 0 &&
		    (held ? app_delta(held, key) == 0 : win ? w == 0 : d == 0)) {
			int n = snprintf(stopped + sl, sizeof(stopped) - sl, "%s%s (was %.4g/s)",
					 sl ? ", " : "", series, b / scale / bspan);

			nstop++;
			/* whole entries only: a cut one could split a character */
			if (n > 0 && (size_t)n < sizeof(stopped) - sl)
				sl += (size_t)n;
			else
				stopped[sl] = 0;
		}
	}
	jx_add_str(o, "app_endpoint", name);
	said[0] = 0;
	if (wait && strlen(wait) <= 96) {
		jx_add_str(o, "app_wait", wait);
		json_object_object_add(o, "app_wait_s", jx_new_fixed(best, 2));
		json_object_object_add(o, "app_wait_pct", jx_new_fixed(best * 100 / span, 1));
		snprintf(said, sizeof(said), "%s rose %.2f s in %.1f s (%.1f%%)", wait, best, span,
			 best * 100 / span);
	}
	jx_add_int(o, "app_stopped_n", (int)nstop);
	if (nstop) {
		size_t l = strlen(said);

		snprintf(said + l, sizeof(said) - l, "%sstopped: %s", l ? "; " : "", stopped);
	}
	if (said[0])
		jx_add_str(o, "app_said", said);
}

struct json_object *hostfacts_build(struct json_object *ports, struct json_object *snapshot)
{
	struct json_object *o, *st = NULL, *win = NULL, *ident = NULL, *procs, *po_h = NULL;
	const char *pn_h = NULL;
	struct hsum *h;
	double span;

	json_object_object_foreach(ports, pname, po) {
		if (has_host(jx_obj(po, FK_PER_STALL))) {
			st = jx_obj(po, FK_PER_STALL);
			win = jx_obj(po, FK_PER_WINDOW);
			ident = jx_obj(jx_obj(snapshot, pname), IR_S_HOST);
			po_h = po;
			pn_h = pname;
			break;
		}
	}
	if (!st)
		return NULL;
	span = jx_double(st, FK_SPAN_S, 0) + (win ? jx_double(win, FK_SPAN_S, 0) : 0);
	if (!(span > 0) || !(h = calloc(1, sizeof(*h))))
		return NULL;
	take_period(h, st);
	if (win)
		take_period(h, win);
	o = json_object_new_object();
	json_object_object_add(o, "span_s", jx_new_sig(span, 4));
	for (int i = 0; i < 5; i++)
		if (h->have_psi[i])
			json_object_object_add(o, psi_facts[i], jx_new_fixed(h->psi[i] / (span * 1e4), 1));
	procs = producer_figures(o, h, span, ident);
	disk_figures(o, h, span, ident, procs);
	app_figures(o, po_h, span, jx_str(o, "producer"), pn_h,
		    jx_get(jx_obj(snapshot, pn_h), IR_S_APP));
	json_object_put(procs);
	free(h);
	return o;
}

struct json_object *hostfacts_rank(const char *name, int self, int answered,
				   struct json_object *figures)
{
	struct json_object *r = json_object_new_object();

	jx_add_str(r, FK_RK_NAME, name);
	jx_add_bool(r, FK_RK_SELF, self);
	jx_add_bool(r, FK_RK_ANSWERED, answered);
	if (figures && answered) {
		json_object_object_foreach(figures, k, v)
			if (strcmp(k, FK_RK_NAME) && strcmp(k, FK_RK_SELF) && strcmp(k, FK_RK_ANSWERED))
				json_object_object_add(r, k, json_object_get(v));
	}
	return r;
}

/* How starved a rank's producer was: the largest of its block I/O,
 * run-queue and throttled shares and its host's memory-full share. The
 * rules name a rank by its largest wait (producer-stall-io only where
 * block I/O is it), so among the ranks a rule names this is its figure. */
static double starved(struct json_object *r)
{
	static const char *const k[] = { "producer_blkio_pct", "producer_run_delay_pct",
					 "producer_throttled_pct", "mem_full_pct" };
	double m = 0;

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (jx_double(r, k[i], 0) > m)
			m = jx_double(r, k[i], 0);
	return m;
}

static int rank_cmp(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a, *y = *(struct json_object *const *)b;
	double sx = starved(x), sy = starved(y);
	int ax = jx_bool(x, FK_RK_ANSWERED), ay = jx_bool(y, FK_RK_ANSWERED);
	const char *nx = jx_str(x, FK_RK_NAME), *ny = jx_str(y, FK_RK_NAME);

	if (ax != ay)
		return ay - ax;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (jx_bool(x, FK_RK_SELF) != jx_bool(y, FK_RK_SELF))
		return jx_bool(y, FK_RK_SELF) - jx_bool(x, FK_RK_SELF);
	return strcmp(nx ? nx : "", ny ? ny : "");
}

void hostfacts_order(struct json_object *ranks)
{
	if (json_object_is_type(ranks, json_type_array))
		json_object_array_sort(ranks, rank_cmp);
}

/* A figure of a peer's summary: a known key, a finite number >= 0 or a
 * short clean string. */
static int num_key(const char *k)
{
#define HF_IS(key) !strcmp(k, key) ||
	return FK_HOST_NUMS(HF_IS) 0;
}

static int str_key(const char *k)
{
	return FK_HOST_STRS(HF_IS) 0;
#undef HF_IS
}

struct json_object *hostfacts_read(struct json_object *in, const char **why)
{
	struct json_object *out;
	const char *w = NULL;
	size_t n = 0;

	if (!json_object_is_type(in, json_type_object)) {
		*why = "resources is not an object";
		return NULL;
	}
	out = json_object_new_object();
	json_object_object_foreach(in, k, v) {
		double d;

		if (++n > 64) {
			w = "resources holds more than 64 figures";
			break;
		}
		if (num_key(k)) {
			if (!(json_object_is_type(v, json_type_int) ||
			      json_object_is_type(v, json_type_double)) || !jx_num(v, &d) ||
			    d < 0 || d > 1e12) {
				w = "a figure of resources is not a number from 0 to 1e12";
				break;
			}
			json_object_object_add(out, k, json_object_get(v));
		} else if (str_key(k)) {
			const char *s = json_object_is_type(v, json_type_string) ?
					json_object_get_string(v) : NULL;
			char *c = s ? util_utf8_clean(s, strlen(s)) : NULL;
			/* app_said: the one line of several figures */
			int ok = s && strlen(s) <= (strcmp(k, "app_said") ? 96u : 239u) &&
				 (size_t)json_object_get_string_len(v) == strlen(s) &&
				 c && !strcmp(c, s) && !strpbrk(s, "\n\t\r");

			free(c);
			if (!ok) {
				w = "a name of resources is not a short line of text";
				break;
			}
			json_object_object_add(out, k, json_object_get(v));
		}
		/* a key this version does not know: left out */
	}
	if (w) {
		*why = w;
		json_object_put(out);
		return NULL;
	}
	return out;
}
