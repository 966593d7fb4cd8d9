/* report: a bundle as a picture (see report.h).
 *
 * Time runs in milliseconds from the start of the investigation (the
 * reference of the manifest's steps[].start_ms). Rates are per second, from
 * per-interval counter deltas put through the rules' signals, so the page
 * says "port" and "vport" for every profile the rules know. */
#include "bundle/report.h"
#include "bundle/bundle.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RP_FILE_MAX     (64u << 20)     /* one JSON file read */
#define RP_MAX_PORTS    8
#define RP_MAX_SAMPLES  2000            /* recorder samples per port (the newest) */
#define RP_MAX_WIN      1000            /* observation-window samples per port */
#define RP_MAX_COUNTERS 4096            /* counters per port */
#define RP_MAX_STEPS    256
#define RP_MAX_FLOWS    64              /* rows of the flow table */
#define RP_MAX_LANES    16              /* flows drawn */
#define RP_MAX_THREADS  64
#define RP_MAX_NOT      64
#define RP_MAX_TERMS    32
#define RP_MAX_FILES    512
#define RP_MAX_SPARK    160             /* counters plotted per port */
#define RP_MAX_NAMED    2000            /* counters named per port */
#define RP_MAX_NOTES    16
#define RP_TEXT         240             /* characters of one string shown */
#define RP_SPARK_W      120             /* buckets of one counter's sparkline */
#define RP_PLOT_POINTS  600             /* intervals drawn per series and panel */

/* The signals the report draws, evaluated per interval. */
enum { S_PORT, S_VPORT, S_GAP, S_BUF, S_STEER, S_FABRIC, NSIG };
static const char *const sig_name[NSIG] = {
	"port_frames", "vport_frames", "gap", "buffer_drops", "steer_misses", "fabric_errors",
};
static const char *const sig_label[NSIG] = {
	"port", "vport", "gap", "buffer drops", "steering misses", "fabric errors",
};

/* The shipped signal definitions (rules/00-signals.rules), used when the
 * caller has no rules loaded; tests/unit/test_report.c checks that they
 * give the same values as the shipped file. */
static const char builtin_signals[] =
"signal port_frames  mlx5 = rx_packets_phy\n"
"signal vport_frames mlx5 = rx_vport_unicast_packets + rx_vport_multicast_packets \\\n"
"    + rx_vport_broadcast_packets + rx_vport_rdma_unicast_packets \\\n"
"    + rx_vport_rdma_multicast_packets\n"
"signal buffer_drops mlx5 = rx_out_of_buffer + rx_discards_phy + sum(rx_prio*_discards) \\\n"
"    + sum(rx_prio*_buf_discard) + hw_counters/out_of_buffer\n"
"signal steer_misses mlx5 = rx_steer_missed_packets\n"
"signal fabric_errors mlx5 = hw_counters/local_ack_timeout_err \\\n"
"    + hw_counters/req_transport_retries_exceeded + hw_counters/req_cqe_error \\\n"
"    + link_down_events_phy + rx_crc_errors_phy + rx_symbol_err_phy \\\n"
"    + counters/link_downed + counters/symbol_error\n"
"signal port_frames  sfc = port_rx_unicast\n"
"signal vport_frames sfc = rx_unicast\n"
"signal buffer_drops sfc = port_rx_nodesc_drops + rx_nodesc_trunc + rx_noskb_drops \\\n"
"    + port_rx_overflow + rx_overflow + sum(port_rx_pm_discard_*)\n"
"signal steer_misses sfc = port_rx_dp_q_disabled_packets\n"
"signal fabric_errors sfc = port_rx_bad + rx_eth_crc_err + rx_bad\n"
"signal port_frames   generic = netdev/rx_packets\n"
"signal buffer_drops  generic = netdev/rx_missed_errors + netdev/rx_fifo_errors \\\n"
"    + netdev/rx_over_errors\n"
"signal fabric_errors generic = netdev/rx_crc_errors + netdev/rx_frame_errors\n"
"signal gap generic = port_frames - vport_frames\n"
"# the loader wants a rule: one that never matches\n"
"rule report-signals-only {\n    verdict unknown\n    require false\n}\n";

/* ---- the loaded bundle ---- */

struct rp_file {
	char *name;
	long long bytes;        /* -1: not known */
	int truncated;
};

struct report {
	struct json_object *man, *record, *window, *flows, *threads;
	char *port[RP_MAX_PORTS];
	struct json_object *recorder[RP_MAX_PORTS];
	size_t nports;
	struct rp_file files[RP_MAX_FILES];
	size_t nfiles;
	char notes[RP_MAX_NOTES][200];
	size_t nnotes;
	char manifest_note[256];
};

static int safe_rel(const char *p);

typedef char *(*read_fn)(void *arg, const char *name, size_t *len, char *err, size_t errlen);

static void note(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nnotes >= RP_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

static struct json_object *parse_json(const char *txt, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error je;

	if (memchr(txt, '\0', len)) {
		util_errf(err, errlen, "not JSON text (holds a NUL byte)");
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, txt, (int)(len > INT32_MAX ? INT32_MAX : len));
	je = json_tokener_get_error(tok);
	if (!o || je != json_tokener_success) {
		util_errf(err, errlen, "not valid JSON at byte %zu: %s",
			  (size_t)json_tokener_get_parse_end(tok), json_tokener_error_desc(je));
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static struct json_object *load_json(struct report *r, read_fn rd, void *arg, const char *name)
{
	char err[200];
	size_t len = 0;
	char *txt = rd(arg, name, &len, err, sizeof(err));
	struct json_object *o;

	if (!txt) {
		note(r, "%s", err);
		return NULL;
	}
	o = parse_json(txt, len, err, sizeof(err));
	free(txt);
	if (!o)
		note(r, "%s: %s", name, err);
	return o;
}

static void add_file(struct report *r, const char *name, long long bytes, int truncated)
{
	if (!name || r->nfiles >= RP_MAX_FILES)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		if (!strcmp(r->files[i].name, name))
			return;
	r->files[r->nfiles].name = strndup(name, 1024);
	if (!r->files[r->nfiles].name)
		return;
	r->files[r->nfiles].bytes = bytes;
	r->files[r->nfiles].truncated = truncated;
	r->nfiles++;
}

static void add_port(struct report *r, const char *name)
{
	if (!name || r->nports >= RP_MAX_PORTS)
		return;
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->port[i], name))
			return;
	if ((r->port[r->nports] = strndup(name, 256)))
		r->nports++;
}

/* The manifest's files list (bundle_write adds it). */
static void add_manifest_files(struct report *r)
{
	struct json_object *fa = jx_arr(r->man, "files");

	for (size_t i = 0; i < jx_len(fa); i++) {
		struct json_object *o = json_object_array_get_idx(fa, i);
		double b;

		add_file(r, jx_str(o, "name"), jx_num(jx_get(o, "bytes"), &b) && b >= 0 &&
			 b < 1e18 ? (long long)b : -1, jx_bool(o, "truncated"));
	}
}

/* Everything but the file list, which the two loaders fill. */
static void load_common(struct report *r, read_fn rd, void *arg)
{
	struct json_object *facts = jx_obj(r->man, "facts");

	r->record = load_json(r, rd, arg, "record.json");
	r->window = load_json(r, rd, arg, "window.json");
	r->flows = load_json(r, rd, arg, "flows.json");
	r->threads = load_json(r, rd, arg, "threads.json");
	/* the stall's port first, then the manifest's, the facts' */
	add_port(r, jx_str(r->man, "port"));
	if (jx_obj(r->man, "ports")) {
		json_object_object_foreach(jx_obj(r->man, "ports"), k1, v1) {
			(void)v1;
			add_port(r, k1);
		}
	}
	if (jx_obj(facts, FK_PORTS)) {
		json_object_object_foreach(jx_obj(facts, FK_PORTS), k2, v2) {
			(void)v2;
			add_port(r, k2);
		}
	}
	for (size_t i = 0; i < r->nports; i++) {
		char fn[300];

		snprintf(fn, sizeof(fn), "recorder/%.250s.json", r->port[i]);
		r->recorder[i] = load_json(r, rd, arg, fn);
	}
}

struct dirctx {
	int dfd;
};

static char *dir_read(void *arg, const char *name, size_t *len, char *err, size_t errlen)
{
	struct dirctx *d = arg;

	return bundle_read_at(d->dfd, name, RP_FILE_MAX, len, err, errlen);
}

struct memctx {
	const struct bundle_file *f;
	size_t n;
};

static char *mem_read(void *arg, const char *name, size_t *len, char *err, size_t errlen)
{
	struct memctx *m = arg;

	if (!safe_rel(name)) {
		util_errf(err, errlen, "%.*s: not a relative path of [A-Za-z0-9._-] components",
			  BUNDLE_PATH_MAX, name);
		return NULL;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct bundle_file *f = &m->f[i];
		char *c;

		if (!f->name || strcmp(f->name, name))
			continue;
		if (!f->data) {
			util_errf(err, errlen, "%s: not in memory", name);
			return NULL;
		}
		if (f->len > RP_FILE_MAX) {
			util_errf(err, errlen, "%s: too large", name);
			return NULL;
		}
		c = malloc(f->len + 1);
		if (!c) {
			util_errf(err, errlen, "%s: out of memory", name);
			return NULL;
		}
		memcpy(c, f->data, f->len);
		c[f->len] = '\0';
		*len = f->len;
		return c;
	}
	util_errf(err, errlen, "%s: missing", name);
	return NULL;
}

static struct report *report_new(void)
{
	return calloc(1, sizeof(struct report));
}

struct report *report_load_dir(const char *path, char *err, size_t errlen)
{
	struct report *r = report_new();
	struct dirctx d;

	if (!r) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	if (bundle_load_manifest(path, &r->man, r->manifest_note, sizeof(r->manifest_note)) < 0) {
		util_errf(err, errlen, "%s", r->manifest_note);
		report_free(r);
		return NULL;
	}
	d.dfd = bundle_open(path, err, errlen);
	if (d.dfd < 0) {
		report_free(r);
		return NULL;
	}
	load_common(r, dir_read, &d);
	close(d.dfd);
	add_file(r, "manifest.json", -1, 0);
	add_file(r, "SHA256SUMS", -1, 0);
	add_manifest_files(r);
	return r;
}

struct report *report_load_mem(struct json_object *manifest, const struct bundle_file *files,
			       size_t nfiles, char *err, size_t errlen)
{
	struct report *r;
	struct memctx m = { files, nfiles };

	if (!manifest || !json_object_is_type(manifest, json_type_object)) {
		util_errf(err, errlen, "no manifest");
		return NULL;
	}
	r = report_new();
	if (!r) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	r->man = json_object_get(manifest);
	load_common(r, mem_read, &m);
	add_file(r, "manifest.json", -1, 0);
	add_file(r, "SHA256SUMS", -1, 0);
	add_manifest_files(r);
	for (size_t i = 0; i < nfiles; i++)
		add_file(r, files[i].name, files[i].data ? (long long)files[i].len : -1, 0);
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	json_object_put(r->man);
	json_object_put(r->record);
	json_object_put(r->window);
	json_object_put(r->flows);
	json_object_put(r->threads);
	for (size_t i = 0; i < r->nports; i++) {
		free(r->port[i]);
		json_object_put(r->recorder[i]);
	}
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i].name);
	free(r);
}

/* ---- output helpers ---- */

/* Text for HTML (element content and attribute values alike): valid UTF-8
 * passes, anything else, control and bidirectional-override characters
 * become U+FFFD, the five special characters become references; at most
 * max characters, then an ellipsis. */
static void esc_n(FILE *f, const char *s, size_t max)
{
	size_t chars = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		unsigned c = *p;
		size_t n = 1;

		if (chars++ >= max) {
			fputs("\xe2\x80\xa6", f);
			return;
		}
		if (c < 0x80) {
			switch (c) {
			case '&': fputs("&amp;", f); break;
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '"': fputs("&quot;", f); break;
			case '\'': fputs("&#39;", f); break;
			default:
				if (c < 0x20 && c != '\n' && c != '\t')
					fputs("\xef\xbf\xbd", f);
				else if (c == 0x7f)
					fputs("\xef\xbf\xbd", f);
				else
					fputc((int)c, f);
			}
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		else
			n = 0;
		for (size_t i = 1; n && i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				n = 0;
		if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
			n = 0;          /* overlong, surrogate */
		if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
			n = 0;
		/* U+202A..U+202E, U+2066..U+2069: reorder what follows on screen */
		if (n == 3 && c == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
					    (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
			n = 0;
		if (!n) {
			fputs("\xef\xbf\xbd", f);
			p++;
			/* skip the rest of a rejected sequence's continuation bytes */
			while ((*p & 0xc0) == 0x80)
				p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
}

static void esc(FILE *f, const char *s)
{
	esc_n(f, s, RP_TEXT);
}

/* A link target: the prefix and a checked relative path, percent-encoded
 * outside [A-Za-z0-9._~/-]. */
static void url(FILE *f, const char *prefix, const char *rel)
{
	static const char hex[] = "0123456789ABCDEF";

	for (int pass = 0; pass < 2; pass++)
		for (const unsigned char *p = (const unsigned char *)(pass ? rel : prefix);
		     p && *p; p++) {
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("._~/-", *p))
				fputc(*p, f);
			else
				fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
		}
}

/* A bundle path we link to: [A-Za-z0-9._-] components, none starting with
 * '.', no empty component (what bundle_write accepts). */
static int safe_rel(const char *p)
{
	size_t n = p ? strlen(p) : 0, comp = 0;

	if (!n || n > BUNDLE_PATH_MAX)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		char c = p[i];

		if (c == '/' || c == '\0') {
			if (!comp)
				return 0;
			comp = 0;
			continue;
		}
		if (!comp && c == '.')
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
		comp++;
	}
	return 1;
}

static int isnum(double v)
{
	return isfinite(v) && fabs(v) < 1e300;
}

/* A number for people: 3 significant digits and k/M/G/T. */
static const char *fnum(char *buf, size_t len, double v)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P", "E" };
	double a = fabs(v);
	int k = 0;

	if (!isnum(v)) {
		snprintf(buf, len, "not a number");
		return buf;
	}
	if (a < 1000) {
		if (a == floor(a))
			snprintf(buf, len, "%.0f", v);
		else
			snprintf(buf, len, "%.3g", v);
		return buf;
	}
	while (a >= 999.5 && k < 6) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	snprintf(buf, len, "%.3g%s", v, sfx[k]);
	return buf;
}

/* A number as the bundle has it, for tables: 6 significant digits. */
static const char *fplain(char *buf, size_t len, double v)
{
	if (!isnum(v))
		snprintf(buf, len, "not a number");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.6g", v);
	return buf;
}

/* A JSON value for people, escaped. */
static void put_val(FILE *f, struct json_object *v)
{
	char b[64];
	double x;

	if (!v || json_object_is_type(v, json_type_null)) {
		fputs("unknown", f);
		return;
	}
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", f);
		return;
	case json_type_int:
	case json_type_double:
		if (jx_num(v, &x))
			fputs(fplain(b, sizeof(b), x), f);
		else
			fputs("not a number", f);
		return;
	case json_type_string:
		esc(f, json_object_get_string(v));
		return;
	default:
		esc(f, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
		return;
	}
}

/* An SVG coordinate: finite and bounded whatever the data said. */
static double cl(double v)
{
	if (!isfinite(v))
		return 0;
	return v < -1e5 ? -1e5 : v > 1e5 ? 1e5 : v;
}

/* ---- the story: time base, steps, stall, release ---- */

struct step {
	const char *name, *port, *outcome, *note;
	double t0, t1;
	int has_t1;
	size_t idx;             /* in manifest.steps */
};

struct story {
	double open_mono_ns;    /* investigation start, CLOCK_MONOTONIC */
	int has_mono;
	double open_real_ns;
	int has_real;
	struct step st[RP_MAX_STEPS];
	size_t nst;
	double tmax;            /* end of the last step */
	int has_stall;
	double stall_t0, stall_t1;
	int released, has_release_t;
	double release_t, after_ms;
	const char *release_action;
	double win_t0, win_t1;  /* the observation step */
	int has_win;
};

static int is_action(const char *s)
{
	return s && (!strcmp(s, "ping") || !strcmp(s, "capture") || !strcmp(s, "capture-promisc") ||
		     !strcmp(s, "reprogram"));
}

static void story_build(const struct report *r, struct story *s)
{
	struct json_object *steps = jx_arr(r->man, "steps"), *rel = jx_obj(r->man, "release");
	struct json_object *list = jx_arr(jx_obj(jx_obj(r->man, "facts"), FK_FLOWS), FK_F_LIST);
	double x, waited = NAN;

	memset(s, 0, sizeof(*s));
	if (!rel)
		rel = jx_obj(jx_obj(r->man, "facts"), FK_RELEASE);
	if (jx_num(jx_get(r->record, "opened_mono_ns"), &x) && x > 0) {
		s->open_mono_ns = x;
		s->has_mono = 1;
	}
	if (jx_num(jx_get(r->man, "opened_real_ns"), &x) && x > 0) {
		s->open_real_ns = x;
		s->has_real = 1;
	}
	for (size_t i = 0; i < jx_len(steps) && s->nst < RP_MAX_STEPS; i++) {
		struct json_object *o = json_object_array_get_idx(steps, i);
		struct step *p = &s->st[s->nst];
		double a, b, m;

		if (!jx_num(jx_get(o, "start_ms"), &a) || fabs(a) > 1e9)
			continue;
		p->name = jx_str(o, "step") ? jx_str(o, "step") : "step";
		p->port = jx_str(o, "port");
		p->outcome = jx_str(o, "outcome");
		p->note = jx_str(o, "note");
		p->t0 = a;
		p->has_t1 = jx_num(jx_get(o, "end_ms"), &b) && b >= a && b < 1e9;
		p->t1 = p->has_t1 ? b : a;
		p->idx = i;
		if (p->t1 > s->tmax)
			s->tmax = p->t1;
		if (!s->has_mono && jx_num(jx_get(o, "start_mono_ns"), &m) && m > 0) {
			s->open_mono_ns = m - a * 1e6;
			s->has_mono = 1;
		}
		if (!strcmp(p->name, "observe") && !s->has_win) {
			s->win_t0 = p->t0;
			s->win_t1 = p->t1;
			s->has_win = 1;
		}
		s->nst++;
	}
	/* the stall began when the first stalled flow began to wait */
	for (size_t i = 0; i < jx_len(list); i++)
		if (jx_num(jx_get(json_object_array_get_idx(list, i), FK_FL_WAITED_MS), &x) &&
		    fabs(x) < 1e9 && !(x <= waited))
			waited = x;
	if (isfinite(waited)) {
		s->has_stall = 1;
		s->stall_t0 = -waited;
	}
	/* the release: the releasing action's start plus after_ms */
	s->released = jx_bool(rel, "released");
	s->release_action = jx_str(rel, "action");
	if (s->released) {
		const char *a = s->release_action ? s->release_action : "";
		const char *stepname = !strcmp(a, "promisc-capture") ? "capture-promisc" : a;
		int last = !strcmp(a, "reprogram");     /* the daemon times the last one */
		double base = NAN;

		if (jx_num(jx_get(rel, "at_ms"), &x) && fabs(x) < 1e9) {
			s->release_t = x;
			s->has_release_t = 1;
		} else {
			for (size_t i = 0; i < s->nst; i++)
				if (!strcmp(s->st[i].name, stepname)) {
					base = s->st[i].t0;
					if (!last)
						break;
				}
			if (!isfinite(base) && !strcmp(a, "self"))
				base = 0;
			if (isfinite(base) && jx_num(jx_get(rel, "after_ms"), &x) && x >= 0 && x < 1e9) {
				s->release_t = base + x;
				s->after_ms = x;
				s->has_release_t = 1;
			}
		}
		if (s->has_release_t && s->release_t > s->tmax)
			s->tmax = s->release_t;
	}
	if (s->has_stall)
		s->stall_t1 = s->released && s->has_release_t ? s->release_t : s->tmax;
	if (s->has_stall && s->stall_t1 < s->stall_t0)
		s->stall_t1 = s->stall_t0;
}

/* ---- per-port series ---- */

struct iv {                     /* one sampling interval */
	double t0, t1;          /* ms */
	double v[NSIG];         /* rates, per second */
	unsigned known;         /* bit per signal */
};

struct ctr {
	char *name;
	uint64_t cur;
	int have, moved;
	double rec_total, win_total;
	float spark[RP_SPARK_W];
};

struct pdata {
	const char *name, *profile;
	struct iv *rec, *win;
	size_t nrec, nwin;
	struct ctr *c;
	size_t nc;
	struct json_object *idx;        /* name -> index into c */
	struct json_object *zero;       /* name -> delta (0 but while one interval is evaluated) */
	struct json_object **cell;      /* c[i]'s value object in zero */
	size_t *touched;
	size_t ntouched;
	double rec_t0, rec_t1;          /* span of the recorder samples */
	int has_rec;
	double healthy_gap;             /* frames/s, learned before the stall */
	int has_healthy;
	double base_span;
	unsigned sig_known;             /* any interval knew the signal */
	double sig_max[NSIG], sig_min[NSIG];
};

static const char *merged_name(const char *src, const char *name, char *buf, size_t len)
{
	if (src && !strcmp(src, "netdev")) {
		snprintf(buf, len, "netdev/%s", name);
		return buf;
	}
	return name;
}

static int val_u64(struct json_object *v, uint64_t *out)
{
	double d;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i == INT64_MAX)
			*out = json_object_get_uint64(v);
		else if (i < 0)
			return 0;
		else
			*out = (uint64_t)i;
		return 1;
	}
	if (jx_num(v, &d) && d >= 0 && d < 1.8e19) {
		*out = (uint64_t)d;
		return 1;
	}
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Like the daemon's: a 32-bit counter that went down by more than half its
 * range wrapped; any other decrease is a reset (the value since it). */
static uint64_t cdelta(uint64_t prev, uint64_t cur)
{
	if (cur >= prev)
		return cur - prev;
	if (prev <= UINT32_MAX && prev - cur > (1ull << 31))
		return cur + (1ull << 32) - prev;
	return cur;
}

static long ctr_find(struct pdata *p, const char *name, int add)
{
	struct json_object *v;

	if (json_object_object_get_ex(p->idx, name, &v))
		return (long)json_object_get_int64(v);
	if (!add || p->nc >= RP_MAX_COUNTERS)
		return -1;
	if (!p->c) {
		p->c = calloc(RP_MAX_COUNTERS, sizeof(*p->c));
		p->cell = calloc(RP_MAX_COUNTERS, sizeof(*p->cell));
		p->touched = calloc(RP_MAX_COUNTERS, sizeof(*p->touched));
		if (!p->c || !p->cell || !p->touched)
			return -1;
	}
	p->c[p->nc].name = strdup(name);
	p->cell[p->nc] = json_object_new_uint64(0);
	if (!p->c[p->nc].name || !p->cell[p->nc]) {
		free(p->c[p->nc].name);
		json_object_put(p->cell[p->nc]);
		return -1;
	}
	json_object_object_add(p->zero, name, p->cell[p->nc]);
	json_object_object_add(p->idx, name, json_object_new_int64((int64_t)p->nc));
	return (long)p->nc++;
}

static void touch(struct pdata *p, long i, uint64_t d)
{
	uint64_t old = json_object_get_uint64(p->cell[i]);

	if (!old)
		p->touched[p->ntouched++] = (size_t)i;
	json_object_set_uint64(p->cell[i], old + d);
}

static void untouch(struct pdata *p)
{
	for (size_t i = 0; i < p->ntouched; i++)
		json_object_set_uint64(p->cell[p->touched[i]], 0);
	p->ntouched = 0;
}

static void eval(struct pdata *p, const struct rules *ru, struct iv *iv)
{
	double dt = (iv->t1 - iv->t0) / 1000.0;

	iv->known = 0;
	for (int k = 0; k < NSIG; k++) {
		double v;

		if (dt > 0 && rules_signal(ru, p->profile, sig_name[k], p->zero, &v) == 0 &&
		    isnum(v / dt)) {
			iv->v[k] = v / dt;
			iv->known |= 1u << k;
			if (!(p->sig_known & (1u << k)) || iv->v[k] > p->sig_max[k])
				p->sig_max[k] = iv->v[k];
			if (!(p->sig_known & (1u << k)) || iv->v[k] < p->sig_min[k])
				p->sig_min[k] = iv->v[k];
			p->sig_known |= 1u << k;
		}
	}
}

/* t in ms from the investigation start, of a recorder sample */
static int sample_t(const struct story *s, struct json_object *o, double *t)
{
	double m;

	if (s->has_mono && jx_num(jx_get(o, "mono_ns"), &m) && m > 0) {
		*t = (m - s->open_mono_ns) / 1e6;
		return fabs(*t) < 1e9;
	}
	if (s->has_real && jx_num(jx_get(o, "real_ns"), &m) && m > 0) {
		*t = (m - s->open_real_ns) / 1e6;
		return fabs(*t) < 1e9;
	}
	return 0;
}

/* One recorder sample's values ({source: {name: value}}) against the
 * previous ones: deltas into the interval being evaluated. */
static void rec_values(struct pdata *p, struct json_object *vals, int first, int bucket)
{
	json_object_object_foreach(vals, src, so) {
		if (!json_object_is_type(so, json_type_object))
			continue;
		json_object_object_foreach(so, cname, cv) {
			char nb[320];
			uint64_t v;
			long ci;

			if (!val_u64(cv, &v))
				continue;
			ci = ctr_find(p, merged_name(src, cname, nb, sizeof(nb)), 1);
			if (ci < 0)
				continue;
			if (p->c[ci].have && !first) {
				uint64_t d = cdelta(p->c[ci].cur, v);

				if (d) {
					touch(p, ci, d);
					p->c[ci].rec_total += (double)d;
					p->c[ci].spark[bucket] += (float)d;
					p->c[ci].moved = 1;
				}
			}
			p->c[ci].cur = v;
			p->c[ci].have = 1;
		}
	}
}

/* A window sample's deltas ({source: {name: delta}}); count only adds the
 * names (the window's totals: every counter, moved or not). */
static void win_deltas(struct pdata *p, struct json_object *mv, int count)
{
	json_object_object_foreach(mv, src, so) {
		if (!json_object_is_type(so, json_type_object))
			continue;
		json_object_object_foreach(so, cname, cv) {
			char nb[320];
			uint64_t d;
			long ci = ctr_find(p, merged_name(src, cname, nb, sizeof(nb)), 1);

			if (ci < 0 || !count || !val_u64(cv, &d) || !d)
				continue;
			touch(p, ci, d);
			p->c[ci].win_total += (double)d;
			p->c[ci].moved = 1;
		}
	}
}

static void pdata_recorder(struct pdata *p, const struct rules *ru, const struct story *s,
			   struct json_object *rec)
{
	struct json_object *sm = jx_arr(rec, "samples");
	size_t n = jx_len(sm), start = n > RP_MAX_SAMPLES ? n - RP_MAX_SAMPLES : 0;
	double prev_t = NAN, t, min_dt = 0;
	int first = 1;

	/* the span first, for the sparklines' buckets */
	for (size_t i = start; i < n; i++)
		if (sample_t(s, json_object_array_get_idx(sm, i), &t)) {
			if (!p->has_rec || t < p->rec_t0)
				p->rec_t0 = t;
			if (!p->has_rec || t > p->rec_t1)
				p->rec_t1 = t;
			p->has_rec = 1;
		}
	if (!p->has_rec)
		return;
	/* an interval much shorter than the sampling interval (the daemon
	 * samples once more for its snapshot) would turn one frame into a
	 * huge rate: such samples are merged into the next interval */
	{
		double prev = NAN, gaps[64];
		size_t ng = 0;

		for (size_t i = start; i < n && ng < 64; i++)
			if (sample_t(s, json_object_array_get_idx(sm, i), &t)) {
				if (isfinite(prev) && t > prev)
					gaps[ng++] = t - prev;
				prev = t;
			}
		if (ng) {
			qsort(gaps, ng, sizeof(gaps[0]), dbl_cmp);
			min_dt = gaps[ng / 2] / 4;
		}
	}
	p->rec = calloc(n - start + 1, sizeof(*p->rec));
	if (!p->rec)
		return;
	for (size_t i = start; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(sm, i);
		struct json_object *vals = jx_obj(o, "values") ? jx_obj(o, "values") : jx_obj(o, "changed");
		int bucket;

		if (!sample_t(s, o, &t) || (isfinite(prev_t) && t <= prev_t))
			continue;
		bucket = p->rec_t1 > p->rec_t0 ?
			 (int)((t - p->rec_t0) / (p->rec_t1 - p->rec_t0) * (RP_SPARK_W - 1)) : 0;
		if (bucket < 0)
			bucket = 0;
		if (bucket >= RP_SPARK_W)
			bucket = RP_SPARK_W - 1;
		if (vals)
			rec_values(p, vals, first, bucket);
		if (!first && isfinite(prev_t)) {
			struct iv *iv = &p->rec[p->nrec];

			if (t - prev_t < min_dt && i + 1 < n)
				continue;       /* the deltas stay for the next interval */
			iv->t0 = prev_t;
			iv->t1 = t;
			eval(p, ru, iv);
			p->nrec++;
		}
		untouch(p);
		prev_t = t;
		first = 0;
	}
}

static void pdata_window(struct pdata *p, const struct rules *ru, struct json_object *w)
{
	struct json_object *se = jx_arr(w, "series");
	size_t n = jx_len(se);
	double prev_t = NAN, step = 10;

	if (n > RP_MAX_WIN)
		n = RP_MAX_WIN;
	if (!n)
		return;
	p->win = calloc(n, sizeof(*p->win));
	if (!p->win)
		return;
	/* every counter of the window's totals first: moved or not, it is
	 * there (a signal of counters that did not move is 0, not unknown) */
	if (jx_obj(w, "deltas"))
		win_deltas(p, jx_obj(w, "deltas"), 0);
	if (n > 1) {
		double a, b;

		if (jx_num(jx_get(json_object_array_get_idx(se, 0), "t_ms"), &a) &&
		    jx_num(jx_get(json_object_array_get_idx(se, 1), "t_ms"), &b) && b > a && b - a < 1e6)
			step = b - a;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(se, i);
		struct json_object *mv = jx_obj(o, "moved");
		double t;

		if (!jx_num(jx_get(o, "t_ms"), &t) || fabs(t) > 1e9 || (isfinite(prev_t) && t <= prev_t))
			continue;
		if (mv)
			win_deltas(p, mv, 1);
		{
			struct iv *iv = &p->win[p->nwin++];

			iv->t0 = isfinite(prev_t) ? prev_t : t - step;
			iv->t1 = t;
			eval(p, ru, iv);
		}
		untouch(p);
		prev_t = t;
	}
}

static void pdata_build(const struct report *r, size_t pi, const struct rules *ru,
			const struct story *s, struct pdata *p)
{
	struct json_object *facts = jx_obj(r->man, "facts");
	struct json_object *fp = jx_obj(jx_obj(facts, FK_PORTS), r->port[pi]);
	struct json_object *mp = jx_obj(jx_obj(r->man, "ports"), r->port[pi]);
	struct json_object *base = jx_obj(fp, FK_PER_BASELINE);
	double g, span;

	memset(p, 0, sizeof(*p));
	p->name = r->port[pi];
	p->profile = jx_str(mp, "profile") ? jx_str(mp, "profile") :
		     jx_str(fp, FK_P_PROFILE) ? jx_str(fp, FK_P_PROFILE) : "generic";
	p->idx = json_object_new_object();
	p->zero = json_object_new_object();
	if (!p->idx || !p->zero)
		return;
	pdata_recorder(p, ru, s, r->recorder[pi]);
	pdata_window(p, ru, jx_obj(r->window, r->port[pi]));
	if (jx_obj(base, FK_COUNTERS) && jx_num(jx_get(base, FK_SPAN_S), &span) && span > 0 &&
	    rules_signal(ru, p->profile, "gap", jx_obj(base, FK_COUNTERS), &g) == 0 &&
	    isnum(g / span)) {
		p->healthy_gap = g / span;
		p->has_healthy = 1;
		p->base_span = span;
	}
}

static void pdata_free(struct pdata *p)
{
	for (size_t i = 0; i < p->nc; i++)
		free(p->c[i].name);
	free(p->c);
	free(p->cell);
	free(p->touched);
	free(p->rec);
	free(p->win);
	json_object_put(p->idx);
	json_object_put(p->zero);
}

/* ---- the rules for signals ---- */

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static struct rules *builtin_rules(void)
{
	const char *names[1] = { "report-signals.rules" }, *texts[1] = { builtin_signals };
	struct rules *ru = NULL;

	if (rules_load_texts(names, texts, 1, &ru, quiet, NULL))
		return NULL;
	return ru;
}

/* ---- HTML ---- */

struct ctx {
	FILE *f;
	const struct report *r;
	const struct report_opts *o;
	const struct rules *ru;
	struct story s;
	struct pdata pd[RP_MAX_PORTS];
	size_t np;
	double b0, b1;          /* investigation panel range, ms */
	double a0, a1;          /* recorder panel range, ms */
	int has_a;
	char hatch[48];         /* the stall pattern of the SVG being written */
};

static const char css[] =
"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
"color:#1b1b1b;background:#fff;margin:0 auto;max-width:1000px;padding:0 16px 40px}\n"
"h1{font-size:1.6em;margin:.8em 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .4em;"
"border-bottom:1px solid #bbb}h3{font-size:1.05em;margin:1.2em 0 .3em}\n"
".verdict{font-weight:700}.meta{color:#444;margin:.2em 0}.is{font-size:1.08em;"
"border-left:4px solid #1f5fa8;padding:.3em .7em;background:#f3f6fa}\n"
"table{border-collapse:collapse;margin:.4em 0;font-size:.92em}th,td{border:1px solid #bbb;"
"padding:3px 6px;text-align:left;vertical-align:top}th{background:#eee}\n"
"td.n{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:"
"'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}"
"td.w{overflow-wrap:normal;white-space:nowrap}\n"
"figure{margin:.6em 0}figcaption{font-size:.9em;color:#333}svg{max-width:100%;height:auto}\n"
"svg text{font:11px 'DejaVu Sans',sans-serif;fill:#222}svg .ax{stroke:#666;stroke-width:1}"
"svg .grid{stroke:#ddd;stroke-width:1}\n"
"svg .port{stroke:#1f5fa8;stroke-width:2;fill:none}svg .vport{stroke:#c2491d;stroke-width:2;"
"fill:none;stroke-dasharray:6 3}\n"
"svg .d3{stroke:#6a3d9a;stroke-width:1.5;fill:none;stroke-dasharray:2 2}svg .d4{stroke:#2e7d32;"
"stroke-width:1.5;fill:none;stroke-dasharray:8 2 2 2}svg .d5{stroke:#b00020;stroke-width:1.5;"
"fill:none;stroke-dasharray:10 4}\n"
"svg .gapl{stroke:#444;stroke-width:1.5;fill:none}svg .healthy{stroke:#2e7d32;stroke-width:1.5;"
"stroke-dasharray:5 4}svg .lane{fill:#f4f4f4}\n"
"svg .act{fill:#7a7a7a;stroke:#222;stroke-width:.5}svg .act.mine{fill:#222}"
"svg .rel{stroke:#2e7d32;stroke-width:2}svg .relm{fill:#2e7d32}\n"
"svg .wait{stroke:#8a1c1c;stroke-width:1}svg .spark{stroke:#1f5fa8;"
"stroke-width:1;fill:none}\n"
".note{color:#5a3b00;background:#fff6e0;padding:.3em .6em;border:1px solid #e0c070}\n"
".legend span{margin-right:1.2em;white-space:nowrap}.sw{display:inline-block;width:28px;"
"height:0;vertical-align:middle;margin-right:4px;border-top:2px solid #1f5fa8}\n"
".sw.v{border-top:2px dashed #c2491d}.sw.h{border-top:2px dashed #2e7d32}.sw.s{height:10px;"
"border:1px solid #8a1c1c;background:repeating-linear-gradient(45deg,#f2c4c4 0 3px,#fff 3px 6px)}\n"
"nav ul{columns:2;margin:.3em 0}.names{font-size:.85em;color:#333}\n"
"@media print{body{max-width:none;font-size:11pt;padding:0}nav{display:none}"
"h2{break-after:avoid}figure,table,tr{break-inside:avoid}a{color:#000}"
"a[href]::after{content:\" (\" attr(href) \")\";font-size:.85em}"
".is{background:none}details{display:block}}\n";

static void svg_defs(FILE *f, const char *id)
{
	fprintf(f, "<defs><pattern id=\"hatch-%s\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fbeaea\"/>"
	      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c77\" stroke-width=\"2\"/>"
	      "</pattern></defs>", id);
}

struct axis {
	double t0, t1, x0, x1;  /* time range (ms) onto x range */
	double v0, v1, y0, y1;  /* value range onto y (y0 bottom) */
};

static double ax_x(const struct axis *a, double t)
{
	return cl(a->x0 + (t - a->t0) / (a->t1 - a->t0) * (a->x1 - a->x0));
}

static double ax_y(const struct axis *a, double v)
{
	double y = a->y0 - (v - a->v0) / (a->v1 - a->v0) * (a->y0 - a->y1);

	return cl(y < a->y1 ? a->y1 : y > a->y0 ? a->y0 : y);
}

/* A "nice" upper bound for an axis. */
static double nice_max(double v)
{
	double e, m;

	if (!isnum(v) || v <= 0)
		return 1;
	e = pow(10, floor(log10(v)));
	m = v / e;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
}

static void fmt_t(char *buf, size_t len, double ms, int seconds)
{
	if (seconds)
		snprintf(buf, len, "%+.3gs", ms / 1000);
	else
		snprintf(buf, len, "%+.0fms", ms);
	if (!strcmp(buf, "+0s") || !strcmp(buf, "-0s") || !strcmp(buf, "+0ms") || !strcmp(buf, "-0ms"))
		snprintf(buf, len, "0");
}

/* Time ticks along the bottom of a panel. */
static void time_ticks(FILE *f, const struct axis *a, int seconds)
{
	double span = a->t1 - a->t0, step = nice_max(span / 6);
	char b[32];

	if (step < span / 8)
		step *= 2;
	for (double t = ceil(a->t0 / step) * step; t <= a->t1 + 1e-9 && step > 0; t += step) {
		double x = ax_x(a, t);

		fmt_t(b, sizeof(b), t, seconds);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
			x, a->y1, x, a->y0, x, a->y0 + 13, b);
	}
}

static void value_ticks(FILE *f, const struct axis *a, const char *unit, int left)
{
	char b[32];

	for (int i = 0; i <= 2; i++) {
		double v = a->v0 + (a->v1 - a->v0) * i / 2, y = ax_y(a, v);

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			a->x0, y, a->x1, y);
		if (left)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s%s</text>",
				a->x0 - 4, y + 4, fnum(b, sizeof(b), v), i == 2 ? unit : "");
	}
	fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		a->x0, a->y0, a->x1, a->y0);
}

/* One series as a step line: a horizontal segment per interval, a gap where
 * intervals do not touch. Intervals outside [t0, t1] are skipped and at most
 * RP_PLOT_POINTS are drawn (neighbours merged, rate = sum / time). */
static void series_path(FILE *f, const struct axis *a, const struct iv *iv, size_t n, int k,
			const char *cls, const char *port, const char *panel, const char *label,
			double skip0, double skip1)
{
	size_t in = 0, group, drawn = 0;
	double last_x = NAN;
	int open = 0;

	for (size_t i = 0; i < n; i++)
		if ((iv[i].known & (1u << k)) && iv[i].t1 > a->t0 && iv[i].t0 < a->t1 &&
		    !(iv[i].t0 >= skip0 && iv[i].t1 <= skip1))
			in++;
	if (!in)
		return;
	group = (in + RP_PLOT_POINTS - 1) / RP_PLOT_POINTS;
	fprintf(f, "<path class=\"series %s\" data-port=\"", cls);
	esc(f, port);
	fprintf(f, "\" data-panel=\"%s\" data-series=\"%s\" d=\"", panel, label);
	for (size_t i = 0; i < n;) {
		double sum = 0, dur = 0, t0, t1;
		size_t g = 0;

		if (!((iv[i].known & (1u << k)) && iv[i].t1 > a->t0 && iv[i].t0 < a->t1 &&
		      !(iv[i].t0 >= skip0 && iv[i].t1 <= skip1))) {
			i++;
			continue;
		}
		t0 = iv[i].t0;
		t1 = iv[i].t1;
		while (i < n && g < group && (iv[i].known & (1u << k)) && iv[i].t1 > a->t0 &&
		       iv[i].t0 < a->t1 && !(iv[i].t0 >= skip0 && iv[i].t1 <= skip1)) {
			sum += iv[i].v[k] * (iv[i].t1 - iv[i].t0);
			dur += iv[i].t1 - iv[i].t0;
			t1 = iv[i].t1;
			i++;
			g++;
		}
		{
			double x0 = ax_x(a, t0 < a->t0 ? a->t0 : t0), x1 = ax_x(a, t1 > a->t1 ? a->t1 : t1);
			double y = ax_y(a, dur > 0 ? sum / dur : 0);

			if (!open || !(fabs(x0 - last_x) < 0.6))
				fprintf(f, "M%.1f %.1f", x0, y);
			else
				fprintf(f, "V%.1f", y);
			fprintf(f, "H%.1f", x1);
			last_x = x1;
			open = 1;
			drawn++;
		}
	}
	fprintf(f, "\" data-points=\"%zu\"><title>", drawn);
	esc(f, port);
	fprintf(f, ": %s</title></path>", label);
}

/* Bands for the stall (both panels), actions and release (investigation). */
static void stall_band(struct ctx *c, const struct axis *a, const char *panel)
{
	struct story *s = &c->s;
	double t0, t1, x0, x1;

	if (!s->has_stall)
		return;
	t0 = s->stall_t0 < a->t0 ? a->t0 : s->stall_t0;
	t1 = s->stall_t1 > a->t1 ? a->t1 : s->stall_t1;
	if (t1 < a->t0 || t0 > a->t1)
		return;
	x0 = ax_x(a, t0);
	x1 = ax_x(a, t1);
	fprintf(c->f, "<rect class=\"stall band\" fill=\"url(#hatch-%s)\" data-kind=\"stall\" data-panel=\"%s\" "
		"data-t-ms=\"%.3f\" data-t-end-ms=\"%.3f\" data-x=\"%.1f\" data-clipped=\"%d\" "
		"x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>stall: flows waiting from "
		"%.1f ms to %.1f ms%s</title></rect>", c->hatch, panel, s->stall_t0, s->stall_t1, x0,
		s->stall_t0 < a->t0, x0, a->y1, x1 - x0 < 1 ? 1 : x1 - x0, a->y0 - a->y1,
		s->stall_t0, s->stall_t1, s->released ? " (released)" : " (not released)");
	if (x1 - x0 > 30)
		fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">stall</text>", x0 + 3, a->y1 + 11);
}

static const char *lane_of(const char *step)
{
	return !strcmp(step, "capture-promisc") ? "promisc capture" : step;
}

static const char *const lanes[] = { "ping", "capture", "promisc capture", "reprogram", "release" };
#define NLANES 5
#define LANE_H 15

static void action_lanes(struct ctx *c, const struct axis *a, const char *port, double ytop)
{
	FILE *f = c->f;
	struct story *s = &c->s;

	for (int l = 0; l < NLANES; l++) {
		double y = ytop + l * LANE_H;

		fprintf(f, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", a->x0, y,
			a->x1 - a->x0, LANE_H - 2, a->x0 - 4, y + 10, lanes[l]);
	}
	for (size_t i = 0; i < s->nst; i++) {
		const struct step *st = &s->st[i];
		const char *ln = lane_of(st->name);
		int mine = !st->port || !strcmp(st->port, port), l;
		double x0, x1;

		if (!is_action(st->name))
			continue;
		for (l = 0; l < NLANES && strcmp(lanes[l], ln); l++)
			;
		if (l == NLANES || st->t0 > a->t1 || st->t1 < a->t0)
			continue;
		x0 = ax_x(a, st->t0);
		x1 = ax_x(a, st->t1);
		fprintf(f, "<rect class=\"act band%s\" data-kind=\"action\" data-step=\"", mine ? " mine" : "");
		esc(f, st->name);
		fprintf(f, "\" data-step-port=\"");
		esc(f, st->port ? st->port : "");
		fprintf(f, "\" data-index=\"%zu\" data-t-ms=\"%.3f\" data-t-end-ms=\"%.3f\" data-x=\"%.1f\" "
			"x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"><title>", st->idx, st->t0, st->t1,
			x0, x0, ytop + l * LANE_H + (mine ? 1 : 4), x1 - x0 < 2 ? 2 : x1 - x0,
			mine ? LANE_H - 4 : LANE_H - 10);
		esc(f, st->name);
		if (st->port) {
			fputs(" (", f);
			esc(f, st->port);
			fputc(')', f);
		}
		fprintf(f, ": %.1f ms to %.1f ms, ", st->t0, st->t1);
		esc(f, st->outcome ? st->outcome : "outcome not recorded");
		if (st->note) {
			fputs(" (", f);
			esc(f, st->note);
			fputc(')', f);
		}
		fputs("</title></rect>", f);
	}
	if (s->released && s->has_release_t && s->release_t >= a->t0 && s->release_t <= a->t1) {
		double x = ax_x(a, s->release_t), y = ytop + 4 * LANE_H + 6;

		fprintf(f, "<path class=\"relm marker\" data-kind=\"release\" data-t-ms=\"%.3f\" "
			"data-x=\"%.1f\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\"><title>released by ", s->release_t,
			x, x, y - 5);
		esc(f, s->release_action ? s->release_action : "an unnamed action");
		fprintf(f, " at %.1f ms</title></path>", s->release_t);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">released", x + 7, y + 4);
		fprintf(f, "</text>");
	}
}

static void release_line(struct ctx *c, const struct axis *a)
{
	struct story *s = &c->s;

	if (s->released && s->has_release_t && s->release_t >= a->t0 && s->release_t <= a->t1) {
		double x = ax_x(a, s->release_t);

		fprintf(c->f, "<line class=\"rel\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			x, a->y1, x, a->y0);
	}
}

/* Direct labels at the right end of the investigation panel. */
static void end_label(FILE *f, double x, double y, const char *txt)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", cl(x), cl(y), txt);
}

static double last_val(const struct iv *iv, size_t n, int k)
{
	for (size_t i = n; i-- > 0;)
		if (iv[i].known & (1u << k))
			return iv[i].v[k];
	return NAN;
}

#define W_SVG   960
#define X_A0    70
#define X_A1    360
#define X_B0    430
#define X_B1    855

static void panel_attrs(FILE *f, const char *panel, const struct axis *a)
{
	fprintf(f, "<g class=\"panel\" data-panel=\"%s\" data-t0-ms=\"%.3f\" data-t1-ms=\"%.3f\" "
		"data-x0=\"%.1f\" data-x1=\"%.1f\">", panel, a->t0, a->t1, a->x0, a->x1);
}

/* One row of rates (signals ks) in both panels. */
static void rates_row(struct ctx *c, struct pdata *p, const int *ks, int nk, double ytop,
		      double h, const char *unit, int with_bands)
{
	FILE *f = c->f;
	double vmax = 0, vmin = 0;
	struct axis A, B;
	char b[64];

	for (int j = 0; j < nk; j++)
		if (p->sig_known & (1u << ks[j])) {
			if (p->sig_max[ks[j]] > vmax)
				vmax = p->sig_max[ks[j]];
			if (p->sig_min[ks[j]] < vmin)
				vmin = p->sig_min[ks[j]];
		}
	if (ks[0] == S_GAP && p->has_healthy && p->healthy_gap > vmax)
		vmax = p->healthy_gap;
	vmax = nice_max(vmax);
	vmin = vmin < 0 ? -nice_max(-vmin) : 0;
	A = (struct axis){ c->a0, c->a1, X_A0, X_A1, vmin, vmax, ytop + h, ytop };
	B = (struct axis){ c->b0, c->b1, X_B0, X_B1, vmin, vmax, ytop + h, ytop };
	if (c->has_a) {
		panel_attrs(f, "recorder", &A);
		value_ticks(f, &A, unit, 1);
		if (with_bands)
			stall_band(c, &A, "recorder");
		for (int j = 0; j < nk; j++)
			if (ks[j] < S_BUF || p->sig_max[ks[j]] > 0)
				series_path(f, &A, p->rec, p->nrec, ks[j], ks[j] <= S_VPORT ? sig_label[ks[j]] :
				    ks[j] == S_GAP ? "gapl" : ks[j] == S_BUF ? "d3" : ks[j] == S_STEER ?
				    "d4" : "d5", p->name, "recorder", sig_label[ks[j]], 1, 0);
		if (ks[0] == S_GAP && p->has_healthy)
			fprintf(f, "<line class=\"healthy\" data-kind=\"healthy\" x1=\"%.1f\" y1=\"%.1f\" "
				"x2=\"%.1f\" y2=\"%.1f\"/>", A.x0, ax_y(&A, p->healthy_gap), A.x1,
				ax_y(&A, p->healthy_gap));
		time_ticks(f, &A, 1);
		fputs("</g>", f);
	}
	panel_attrs(f, "investigation", &B);
	value_ticks(f, &B, unit, !c->has_a);
	if (c->has_a)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", B.x0 - 4,
			ytop + 4, fnum(b, sizeof(b), vmax));
	if (with_bands)
		stall_band(c, &B, "investigation");
	for (int j = 0; j < nk; j++) {
		const char *cls = ks[j] <= S_VPORT ? sig_label[ks[j]] : ks[j] == S_GAP ? "gapl" :
				  ks[j] == S_BUF ? "d3" : ks[j] == S_STEER ? "d4" : "d5";

		if (ks[j] >= S_BUF && !(p->sig_max[ks[j]] > 0))
			continue;       /* a drop kind that never moved is said in the caption */
		double win0 = p->nwin ? p->win[0].t0 : 1, win1 = p->nwin ? p->win[p->nwin - 1].t1 : 0;

		/* recorder intervals lying inside the fast window are drawn by it */
		series_path(f, &B, p->rec, p->nrec, ks[j], cls, p->name, "investigation",
			    sig_label[ks[j]], win0, win1);
		series_path(f, &B, p->win, p->nwin, ks[j], cls, p->name, "investigation",
			    sig_label[ks[j]], 1, 0);
	}
	if (ks[0] == S_GAP && p->has_healthy) {
		fprintf(f, "<line class=\"healthy\" data-kind=\"healthy\" data-rate=\"%.6g\" x1=\"%.1f\" "
			"y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", p->healthy_gap, B.x0,
			ax_y(&B, p->healthy_gap), B.x1, ax_y(&B, p->healthy_gap));
		snprintf(b, sizeof(b), "healthy %s/s", "");
		{
			char nb[32];

			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">healthy %s/s</text>", B.x1 + 4,
				ax_y(&B, p->healthy_gap) - 4, fnum(nb, sizeof(nb), p->healthy_gap));
		}
	}
	release_line(c, &B);
	time_ticks(f, &B, 0);
	/* direct labels at the right end, pushed apart so none overlaps */
	{
		double ly[NSIG];
		int lk[NSIG], nl = 0;

		for (int j = 0; j < nk; j++) {
			double v = last_val(p->nwin ? p->win : p->rec, p->nwin ? p->nwin : p->nrec, ks[j]);

			if (!isfinite(v) || ks[j] == S_GAP || !(p->sig_known & (1u << ks[j])) ||
			    (ks[j] >= S_BUF && !(p->sig_max[ks[j]] > 0)))
				continue;
			ly[nl] = ax_y(&B, v) + 4;
			lk[nl++] = ks[j];
		}
		for (int i = 1; i < nl; i++)            /* sort by y */
			for (int j = i; j > 0 && ly[j] < ly[j - 1]; j--) {
				double ty = ly[j];
				int tk = lk[j];

				ly[j] = ly[j - 1];
				lk[j] = lk[j - 1];
				ly[j - 1] = ty;
				lk[j - 1] = tk;
			}
		for (int i = nl - 2; i >= 0; i--)       /* from the bottom up */
			if (ly[i] > ly[i + 1] - 12)
				ly[i] = ly[i + 1] - 12;
		for (int i = 0; i < nl; i++)
			end_label(f, B.x1 + 4, ly[i], sig_label[lk[i]]);
	}
	fputs("</g>", f);
}

static void svg_open(struct ctx *c, const char *cls, size_t pi, const char *port, double h,
		     const char *what)
{
	FILE *f = c->f;

	fprintf(f, "<svg class=\"%s\" id=\"%s-%zu\" data-port=\"", cls, cls, pi);
	esc(f, port);
	fprintf(f, "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" role=\"img\" aria-labelledby=\"%s-%zu-t %s-%zu-d\">"
		"<title id=\"%s-%zu-t\">%s of port ", W_SVG, h, W_SVG, h, cls, pi, cls, pi, cls, pi, what);
	esc(f, port);
	fputs("</title>", f);
	{
		char id[48];

		snprintf(id, sizeof(id), "%s-%zu", cls, pi);
		svg_defs(f, id);
		util_strlcpy(c->hatch, id, sizeof(c->hatch));
	}
}

static void panel_heads(struct ctx *c, double y)
{
	if (c->has_a)
		fprintf(c->f, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Flight recorder "
			"(before and after)</text>", X_A0, y);
	fprintf(c->f, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Investigation (ms from "
		"its start; fast window where sampled)</text>", X_B0, y);
}

static void describe_rates(struct ctx *c, struct pdata *p, char *buf, size_t len)
{
	char a[32], b[32], g[32];
	size_t off;

	off = (size_t)snprintf(buf, len, "Frame rates of port %.64s: ", p->name);
	if (p->sig_known & (1u << S_PORT))
		off += (size_t)snprintf(buf + off, len - off, "at the port up to %s/s, ",
					fnum(a, sizeof(a), p->sig_max[S_PORT]));
	else
		off += (size_t)snprintf(buf + off, len - off, "the port rate is unknown (no "
					"port_frames counter for profile %.16s), ", p->profile);
	if (off < len && (p->sig_known & (1u << S_VPORT)))
		off += (size_t)snprintf(buf + off, len - off, "at the vport up to %s/s",
					fnum(b, sizeof(b), p->sig_max[S_VPORT]));
	else if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "no vport counter");
	if (off < len && (p->sig_known & (1u << S_GAP)))
		off += (size_t)snprintf(buf + off, len - off, "; the gap peaked at %s/s",
					fnum(g, sizeof(g), p->sig_max[S_GAP]));
	if (off < len && c->s.has_stall)
		off += (size_t)snprintf(buf + off, len - off, ". The stall runs from %.1f ms to %.1f ms%s",
					c->s.stall_t0, c->s.stall_t1, c->s.released ? ", then released" :
					", not released");
	if (off < len)
		snprintf(buf + off, len - off, ".");
}

static int any_drops(const struct pdata *p)
{
	for (int k = S_BUF; k <= S_FABRIC; k++)
		if ((p->sig_known & (1u << k)) && (p->sig_max[k] > 0 || p->sig_min[k] < 0))
			return 1;
	return 0;
}

static void timeline_port(struct ctx *c, size_t pi)
{
	FILE *f = c->f;
	struct pdata *p = &c->pd[pi];
	static const int rk[2] = { S_PORT, S_VPORT }, dk[3] = { S_BUF, S_STEER, S_FABRIC };
	int drops = any_drops(p);
	double h = 20 + NLANES * LANE_H + 8 + 170 + 30 + (drops ? 110 : 0) + 10;
	char desc[600];

	fputs("<figure>", f);
	svg_open(c, "timeline", pi, p->name, h, "Timeline");
	describe_rates(c, p, desc, sizeof(desc));
	fprintf(f, "<desc id=\"timeline-%zu-d\">", pi);
	esc_n(f, desc, 600);
	fputs("</desc>", f);
	panel_heads(c, 12);
	{
		struct axis B = { c->b0, c->b1, X_B0, X_B1, 0, 1, 0, 0 };

		fputs("<g class=\"lanes\">", f);
		action_lanes(c, &B, p->name, 20);
		fputs("</g>", f);
	}
	if (!(p->sig_known & ((1u << S_PORT) | (1u << S_VPORT))))
		fprintf(f, "<text x=\"%d\" y=\"%d\">No port or vport rate: the bundle holds no "
			"samples of their counters for this port.</text>", X_B0, 20 + NLANES * LANE_H + 40);
	rates_row(c, p, rk, 2, 20 + NLANES * LANE_H + 8, 170, "/s", 1);
	if (drops)
		rates_row(c, p, dk, 3, 20 + NLANES * LANE_H + 8 + 170 + 30, 90, "/s", 1);
	fputs("</svg><figcaption>", f);
	esc_n(f, desc, 600);
	fputs(" <span class=\"legend\"><span><i class=\"sw\"></i>port (solid)</span><span>"
	      "<i class=\"sw v\"></i>vport (dashed)</span><span><i class=\"sw s\"></i>stall "
	      "(hatched)</span></span> ", f);
	if (drops) {
		fputs("Drops by kind (lower row): ", f);
	} else {
		fputs("No drops counted on this port: ", f);
	}
	for (int k = S_BUF; k <= S_FABRIC; k++) {
		char b[32];

		int moved = (p->sig_known & (1u << k)) && p->sig_max[k] > 0;

		fprintf(f, "%s%s %s", k > S_BUF ? ", " : "", sig_label[k],
			!(p->sig_known & (1u << k)) ? "not counted by this profile" :
			!moved ? "0" : k == S_BUF ? "(dotted) up to " : k == S_STEER ?
			"(dash-dot) up to " : "(long dashes) up to ");
		if (moved)
			fprintf(f, "%s/s", fnum(b, sizeof(b), p->sig_max[k]));
	}
	fputs(".</figcaption></figure>\n", f);
	(void)dk;
}

static void gap_port(struct ctx *c, size_t pi)
{
	FILE *f = c->f;
	struct pdata *p = &c->pd[pi];
	static const int gk[1] = { S_GAP };
	char nb[32], desc[400];

	if (!(p->sig_known & (1u << S_GAP))) {
		fputs("<p>Port ", f);
		esc(f, p->name);
		fputs(": no gap, the bundle holds no port and vport counters for it.</p>\n", f);
		return;
	}
	snprintf(desc, sizeof(desc), "Port %.64s: frames counted at the port and not at the vport, "
		 "per second and sample; up to %s/s%s", p->name,
		 fnum(nb, sizeof(nb), p->sig_max[S_GAP]), p->has_healthy ? "; the healthy rate "
		 "learned before the stall is the dashed line at " : "; no healthy rate was learned.");
	fputs("<figure>", f);
	svg_open(c, "gap", pi, p->name, 200, "The gap");
	fprintf(f, "<desc id=\"gap-%zu-d\">", pi);
	esc_n(f, desc, 400);
	if (p->has_healthy)
		fprintf(f, "%s/s.", fnum(nb, sizeof(nb), p->healthy_gap));
	fputs("</desc>", f);
	panel_heads(c, 12);
	rates_row(c, p, gk, 1, 24, 150, "/s", 1);
	fputs("</svg><figcaption>", f);
	esc_n(f, desc, 400);
	if (p->has_healthy)
		fprintf(f, "%s/s (over %.3g s).", fnum(nb, sizeof(nb), p->healthy_gap), p->base_span);
	fputs(" <span class=\"legend\"><span><i class=\"sw\" style=\"border-top-color:#444\"></i>"
	      "gap (solid)</span><span><i class=\"sw h\"></i>healthy rate (dashed)</span></span>"
	      "</figcaption></figure>\n", f);
}

/* ---- sections ---- */

static void time_text(const struct report *r, char *buf, size_t len)
{
	double ns;
	time_t sec;
	struct tm tm;

	if (jx_num(jx_get(r->man, "opened_real_ns"), &ns) && ns > 0 && ns < 1e20) {
		sec = (time_t)(ns / 1e9);
		if (gmtime_r(&sec, &tm) && strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
			return;
	}
	snprintf(buf, len, "time not recorded");
}

static const char *verdict_of(const struct report *r)
{
	struct json_object *v = jx_get(r->man, "verdict");

	if (jx_str(v, "verdict"))
		return jx_str(v, "verdict");
	if (v && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "no verdict";
}

static void header(struct ctx *c)
{
	FILE *f = c->f;
	const struct report *r = c->r;
	struct json_object *cls = jx_obj(r->man, "verdict");
	const char *port = jx_str(r->man, "port");
	char when[64];

	time_text(r, when, sizeof(when));
	fputs("<header><h1><span class=\"verdict\" id=\"verdict\">", f);
	esc(f, verdict_of(r));
	fputs("</span> on port <span id=\"port\">", f);
	esc(f, port ? port : "(not recorded)");
	fprintf(f, "</span></h1>\n<p class=\"meta\"><time id=\"time\">%s</time>", when);
	if (jx_str(r->man, "host")) {
		fputs(" &middot; host ", f);
		esc(f, jx_str(r->man, "host"));
	}
	if (jx_u64(r->man, "incident_id"))
		fprintf(f, " &middot; incident %" PRIu64, jx_u64(r->man, "incident_id"));
	if (jx_str(r->man, "trigger")) {
		fputs(" &middot; trigger ", f);
		esc(f, jx_str(r->man, "trigger"));
	}
	if (c->o->bundle_name) {
		fputs(" &middot; bundle <code>", f);
		esc(f, c->o->bundle_name);
		fputs("</code>", f);
	}
	fputs("</p>\n<p class=\"is\" id=\"what-it-is\"><strong>What it is:</strong> ", f);
	if (!cls)
		fputs("No classification in this bundle: the verdict is missing.", f);
	else
		esc_n(f, jx_str(cls, "explanation") ? jx_str(cls, "explanation") :
		      "(the rule gave no explanation)", 1000);
	fputs("</p>\n", f);
	if (jx_str(cls, "action")) {
		fputs("<p><strong>Recommended action:</strong> ", f);
		esc_n(f, jx_str(cls, "action"), 1000);
		fputs("</p>\n", f);
	}
	fputs("<p id=\"release\">", f);
	if (c->s.released) {
		fputs("<strong>Released</strong> by ", f);
		esc(f, c->s.release_action ? c->s.release_action : "an unnamed action");
		if (c->s.has_release_t)
			fprintf(f, " at %+.1f ms (%.1f ms after the action).", c->s.release_t, c->s.after_ms);
		else
			fputs(", time not recorded.", f);
	} else if (jx_obj(r->man, "release") || jx_obj(jx_obj(r->man, "facts"), FK_RELEASE)) {
		fputs("<strong>Not released</strong> by any action of the investigation.", f);
	} else {
		fputs("Release: not recorded.", f);
	}
	fputs("</p>\n", f);
	if (c->o->verify_note && *c->o->verify_note) {
		fputs("<p class=\"meta\">Verification: ", f);
		esc(f, c->o->verify_note);
		fputs("</p>\n", f);
	}
	if (r->manifest_note[0]) {
		fputs("<p class=\"note\">", f);
		esc(f, r->manifest_note);
		fputs("</p>\n", f);
	}
	if (r->nnotes) {
		fputs("<p class=\"note\">Not in this bundle or unreadable, so not drawn: ", f);
		for (size_t i = 0; i < r->nnotes; i++) {
			if (i)
				fputs("; ", f);
			esc(f, r->notes[i]);
		}
		fputs(".</p>\n", f);
	}
	fputs("</header>\n", f);
}

static void steps_table(struct ctx *c)
{
	FILE *f = c->f;
	struct story *s = &c->s;
	int rel_done = 0;

	fputs("<table id=\"steps\"><caption>Steps of the investigation (ms from its start)"
	      "</caption><tr><th>start</th><th>end</th><th>step</th><th>port</th><th>outcome</th>"
	      "<th>note</th></tr>\n", f);
	if (s->has_stall)
		fprintf(f, "<tr><td class=\"n\">%+.1f</td><td class=\"n\">%+.1f</td><td>stall</td>"
			"<td></td><td>%s</td><td>the first stalled flow began to wait</td></tr>\n",
			s->stall_t0, s->stall_t1, s->released ? "released" : "not released");
	for (size_t i = 0; i <= s->nst; i++) {
		const struct step *st = &s->st[i];

		if (s->released && s->has_release_t && !rel_done &&
		    (i == s->nst || st->t0 > s->release_t)) {
			fprintf(f, "<tr><td class=\"n\">%+.1f</td><td></td><td>release</td><td></td>"
				"<td>released</td><td>by ", s->release_t);
			esc(f, s->release_action ? s->release_action : "?");
			fprintf(f, ", %.1f ms after it</td></tr>\n", s->after_ms);
			rel_done = 1;
		}
		if (i == s->nst)
			break;
		fprintf(f, "<tr><td class=\"n\">%+.1f</td><td class=\"n\">", st->t0);
		if (st->has_t1)
			fprintf(f, "%+.1f", st->t1);
		fputs("</td><td>", f);
		esc(f, st->name);
		fputs("</td><td>", f);
		esc(f, st->port ? st->port : "");
		fputs("</td><td>", f);
		esc(f, st->outcome ? st->outcome : "");
		fputs("</td><td>", f);
		esc(f, st->note ? st->note : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void sec_timeline(struct ctx *c)
{
	fputs("<section id=\"timeline\"><h2>Timeline</h2>\n<p>Per port, the frames per second "
	      "counted at the port and at the vport: on the left the flight-recorder samples around "
	      "the stall, on the right the investigation, with the fast observation window's "
	      "samples where it ran. The hatched band is the stall; the lanes above mark each "
	      "action (dark: on this port, grey: on its peer) and the release.</p>\n", c->f);
	for (size_t i = 0; i < c->np; i++) {
		fputs("<h3>Port ", c->f);
		esc(c->f, c->pd[i].name);
		fputs("</h3>\n", c->f);
		timeline_port(c, i);
	}
	if (!c->np)
		fputs("<p>No port is recorded in this bundle.</p>\n", c->f);
	steps_table(c);
	fputs("</section>\n", c->f);
}

static void sec_gap(struct ctx *c)
{
	fputs("<section id=\"gap\"><h2>The gap</h2>\n<p>Frames the port accepted that the vport "
	      "never saw (port minus vport), per second for each sample. A small gap is normal "
	      "(frames the firmware consumes, read skew); the dashed line is the rate learned "
	      "before the stall.</p>\n", c->f);
	for (size_t i = 0; i < c->np; i++)
		gap_port(c, i);
	fputs("</section>\n", c->f);
}

/* ---- flows ---- */

/* The same flow in a snapshot's list (same tuple and source). */
static struct json_object *find_flow(struct json_object *list, const char *tuple, const char *src)
{
	for (size_t i = 0; tuple && i < jx_len(list); i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		const char *t = jx_str(o, "tuple"), *s2 = jx_str(o, "source");

		if (t && !strcmp(t, tuple) && (!src || !s2 || !strcmp(s2, src)))
			return o;
	}
	return NULL;
}

static int in_list(struct json_object *list, const char *tuple)
{
	for (size_t i = 0; tuple && i < jx_len(list); i++) {
		const char *t = jx_str(json_object_array_get_idx(list, i), FK_FL_TUPLE);

		if (t && !strcmp(t, tuple))
			return 1;
	}
	return 0;
}

/* "sent / received" messages of a flow in a snapshot, "?" when absent */
static void msgs(FILE *f, struct json_object *o)
{
	if (!o) {
		fputs("?", f);
		return;
	}
	put_val(f, jx_get(o, "tx_msgs"));
	fputs(" / ", f);
	put_val(f, jx_get(o, "rx_msgs"));
}

static void sec_flows(struct ctx *c)
{
	FILE *f = c->f;
	struct json_object *facts = jx_obj(c->r->man, "facts"), *fl = jx_obj(facts, FK_FLOWS);
	struct json_object *list = jx_arr(fl, FK_F_LIST);
	struct json_object *at_open = jx_arr(jx_obj(c->r->record, "snapshot"), "flows");
	struct json_object *after = jx_arr(jx_obj(c->r->record, "snapshot_after"), "flows");
	struct json_object *incf = jx_arr(jx_obj(c->r->record, "incident"), "flows");
	size_t n = jx_len(list), lanes = n < RP_MAX_LANES ? n : RP_MAX_LANES;
	double after_t = NAN, sib_before = 0, sib_after = 0, x;
	size_t nsib = 0;
	char b1[32], b2[32];
	struct axis a;

	if (!at_open)
		at_open = jx_arr(c->r->flows, "at_open");
	for (size_t i = 0; i < c->s.nst; i++)
		if (!strcmp(c->s.st[i].name, "snapshot-after"))
			after_t = c->s.st[i].t0;
	fputs("<section id=\"flows\"><h2>Flows</h2>\n", f);
	if (!fl) {
		fputs("<p>No flows recorded in this bundle.</p></section>\n", f);
		return;
	}
	/* siblings: flows of the snapshots that did not stall */
	for (size_t i = 0; i < jx_len(at_open); i++) {
		struct json_object *o = json_object_array_get_idx(at_open, i), *o2;
		const char *t = jx_str(o, "tuple");
		int stalled = in_list(list, t);

		for (size_t k = 0; !stalled && k < jx_len(incf); k++) {
			const char *t2 = jx_str(json_object_array_get_idx(incf, k), "tuple");

			stalled = t && t2 && !strcmp(t, t2);
		}
		if (stalled)
			continue;
		nsib++;
		sib_before += jx_double(o, "rx_msgs", 0);
		o2 = find_flow(after, t, jx_str(o, "source"));
		sib_after += jx_double(o2 ? o2 : o, "rx_msgs", 0);
	}
	fprintf(f, "<p>%zu stalled, ", n);
	put_val(f, jx_get(fl, FK_F_PROGRESSING));
	fputs(" siblings progressing.", f);
	if (nsib && isfinite(after_t))
		fprintf(f, " The %zu sibling flow records of the snapshots received %s messages between the "
			"start of the investigation and %+.1f ms.", nsib,
			fnum(b1, sizeof(b1), sib_after - sib_before), after_t);
	fputs("</p>\n", f);
	if (lanes) {
		double h = 30 + (lanes + 1) * 22.0;

		a = (struct axis){ c->b0, c->b1, X_B0 - 90, X_B1, 0, 1, h - 16, 24 };
		fputs("<figure><svg class=\"flows\" xmlns=\"http://www.w3.org/2000/svg\" ", f);
		fprintf(f, "width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\" "
			"aria-labelledby=\"flows-t flows-d\"><title id=\"flows-t\">Stalled flows over "
			"time</title><desc id=\"flows-d\">One lane per stalled flow: hatched while it "
			"waited, a diamond where it was released; the last lane sums its siblings.</desc>",
			W_SVG, h, W_SVG, h);
		svg_defs(f, "flows");
		fprintf(f, "<g class=\"panel\" data-panel=\"flows\" data-t0-ms=\"%.3f\" data-t1-ms=\"%.3f\" "
			"data-x0=\"%.1f\" data-x1=\"%.1f\">", a.t0, a.t1, a.x0, a.x1);
		for (size_t i = 0; i < lanes; i++) {
			struct json_object *o = json_object_array_get_idx(list, i);
			double y = 24 + i * 22.0, w0, t1 = c->s.stall_t1;

			if (!jx_num(jx_get(o, FK_FL_WAITED_MS), &w0) || fabs(w0) >= 1e9)
				continue;
			fprintf(f, "<text x=\"4\" y=\"%.1f\" font-size=\"10\">", y + 13);
			esc_n(f, jx_str(o, FK_FL_TUPLE) ? jx_str(o, FK_FL_TUPLE) : "(no tuple)", 48);
			fputs("</text>", f);
			fprintf(f, "<rect class=\"wait\" fill=\"url(#hatch-flows)\" data-kind=\"wait\" data-t-ms=\"%.3f\" x=\"%.1f\" "
				"y=\"%.1f\" width=\"%.1f\" height=\"14\"><title>waiting from %.1f ms</title>"
				"</rect>", -w0, ax_x(&a, -w0 < a.t0 ? a.t0 : -w0), y + 2,
				fmax(1, ax_x(&a, t1) - ax_x(&a, -w0 < a.t0 ? a.t0 : -w0)), -w0);
			if (c->s.released && c->s.has_release_t)
				fprintf(f, "<path class=\"relm\" d=\"M%.1f %.1fl6 7l-6 7l-6 -7z\"><title>"
					"released at %.1f ms</title></path>", ax_x(&a, t1), y + 2, t1);
		}
		{
			double y = 24 + lanes * 22.0;

			fprintf(f, "<text x=\"4\" y=\"%.1f\">%zu siblings: +%s messages</text>", y + 13,
				nsib, fnum(b2, sizeof(b2), sib_after - sib_before));
			fprintf(f, "<line class=\"port\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
				a.x0, y + 9, ax_x(&a, isfinite(after_t) ? after_t : a.t1), y + 9);
		}
		time_ticks(f, &a, 0);
		fputs("</g></svg><figcaption>Stalled flows: hatched while waiting, the diamond marks "
		      "the release; the solid line is the sibling flows, which kept receiving."
		      "</figcaption></figure>\n", f);
	}
	fputs("<table><tr><th>flow</th><th>source</th><th>began to wait (ms)</th><th>released (ms)"
	      "</th><th>held: unsent / unread / staged (bytes)</th><th>messages at the start "
	      "&rarr; after (sent / received)</th></tr>\n", f);
	for (size_t i = 0; i < n && i < RP_MAX_FLOWS; i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		const char *t = jx_str(o, FK_FL_TUPLE);
		struct json_object *a0 = find_flow(at_open, t, NULL), *a1 = find_flow(after, t, NULL);

		fputs("<tr><td class=\"mono\">", f);
		esc(f, t ? t : "(no tuple)");
		fputs("</td><td>", f);
		put_val(f, jx_get(o, FK_FL_SRC));
		fputs("</td><td class=\"n\">", f);
		if (jx_num(jx_get(o, FK_FL_WAITED_MS), &x) && fabs(x) < 1e9)
			fprintf(f, "%+.1f", -x);
		else
			fputs("not recorded", f);
		fputs("</td><td class=\"n\">", f);
		if (c->s.released && c->s.has_release_t)
			fprintf(f, "%+.1f", c->s.release_t);
		else
			fputs("not released", f);
		fputs("</td><td class=\"n\">", f);
		put_val(f, jx_get(o, FK_H_UNSENT));
		fputs(" / ", f);
		put_val(f, jx_get(o, FK_H_UNREAD));
		fputs(" / ", f);
		put_val(f, jx_get(o, FK_H_STAGED));
		fputs("</td><td class=\"n\">", f);
		msgs(f, a0);
		fputs(" &rarr; ", f);
		msgs(f, a1);
		fputs("</td></tr>\n", f);
	}
	if (n > RP_MAX_FLOWS)
		fprintf(f, "<tr><td colspan=\"6\">and %zu more (flows.json)</td></tr>\n", n - RP_MAX_FLOWS);
	fputs("</table>\n</section>\n", f);
}

/* ---- threads ---- */

static const char *state_word(const char *s)
{
	if (!s || !*s)
		return "";
	switch (s[0]) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "uninterruptible sleep";
	case 'T': return "stopped";
	case 't': return "traced";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	default: return "";
	}
}

static void reading(FILE *f, struct json_object *rd)
{
	const char *st = jx_str(rd, "state");

	if (!rd) {
		fputs("<td colspan=\"2\">no reading</td>", f);
		return;
	}
	fputs("<td>", f);
	esc(f, st ? st : "?");
	if (*state_word(st))
		fprintf(f, " (%s)", state_word(st));
	fputs("</td><td class=\"mono w\">", f);
	esc(f, jx_str(rd, "wchan") ? jx_str(rd, "wchan") : "");
	fputs("</td>", f);
}

static void sec_threads(struct ctx *c)
{
	FILE *f = c->f;
	struct json_object *th = c->r->threads;
	size_t rows = 0;

	fputs("<section id=\"threads\"><h2>Threads</h2>\n", f);
	if (!th || !json_object_is_type(th, json_type_array) || !jx_len(th)) {
		fputs("<p>No engine threads recorded (no process was found for the stalled flows, "
		      "or the bundle holds no threads.json).</p></section>\n", f);
		return;
	}
	fputs("<table><tr><th>process</th><th>thread</th><th colspan=\"2\">first reading: state, "
	      "wchan</th><th colspan=\"2\">second reading: state, wchan</th><th>voluntary "
	      "switches/s</th><th>involuntary switches/s</th></tr>\n", f);
	for (size_t i = 0; i < jx_len(th) && rows < RP_MAX_THREADS; i++) {
		struct json_object *pr = json_object_array_get_idx(th, i), *ts = jx_arr(pr, "threads");

		for (size_t k = 0; k < jx_len(ts) && rows < RP_MAX_THREADS; k++, rows++) {
			struct json_object *t = json_object_array_get_idx(ts, k);

			fputs("<tr><td>", f);
			put_val(f, jx_get(pr, "pid"));
			fputs(" <span class=\"mono\">", f);
			esc_n(f, jx_str(pr, "cmdline") ? jx_str(pr, "cmdline") : jx_text(pr, "exe"), 80);
			fputs("</span></td><td>", f);
			put_val(f, jx_get(t, "tid"));
			fputs(" ", f);
			esc(f, jx_str(t, "comm") ? jx_str(t, "comm") : "");
			fputs("</td>", f);
			reading(f, jx_obj(t, "first"));
			reading(f, jx_obj(t, "second"));
			fputs("<td class=\"n\">", f);
			put_val(f, jx_get(t, "voluntary_switches_per_s"));
			fputs("</td><td class=\"n\">", f);
			put_val(f, jx_get(t, "nonvoluntary_switches_per_s"));
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n</section>\n", f);
}

/* ---- what it is not ---- */

static void values_list(FILE *f, struct json_object *vals)
{
	int n = 0;

	if (!vals || !json_object_is_type(vals, json_type_object))
		return;
	json_object_object_foreach(vals, k, v) {
		if (n == 12) {
			fputs(", &hellip;", f);
			break;
		}
		fputs(n++ ? ", <code>" : "<code>", f);
		esc_n(f, k, 80);
		fputs("</code> = ", f);
		put_val(f, v);
	}
}

static void sec_is(struct ctx *c)
{
	FILE *f = c->f;
	struct json_object *cls = jx_obj(c->r->man, "verdict"), *terms = jx_arr(cls, "terms");

	if (!jx_len(terms))
		return;
	fputs("<section id=\"is\"><h2>Why: the terms of rule ", f);
	esc(f, jx_str(cls, "rule") ? jx_str(cls, "rule") : "(unnamed)");
	fputs("</h2>\n<table><tr><th>term</th><th>values</th></tr>\n", f);
	for (size_t i = 0; i < jx_len(terms) && i < RP_MAX_TERMS; i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);

		fputs("<tr><td><code>", f);
		esc(f, jx_str(t, "expr") ? jx_str(t, "expr") : "?");
		fputs("</code></td><td>", f);
		values_list(f, jx_obj(t, "values"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static void sec_not(struct ctx *c)
{
	FILE *f = c->f;
	struct json_object *nots = jx_arr(jx_obj(c->r->man, "verdict"), "not");

	fputs("<section id=\"not\"><h2>What it is not</h2>\n", f);
	if (!jx_len(nots)) {
		fputs("<p>No other verdict was evaluated (the list of ruled-out causes is missing)."
		      "</p></section>\n", f);
		return;
	}
	fputs("<table id=\"not-table\"><tr><th>verdict</th><th>the term that ruled it out</th>"
	      "<th>its value</th><th>the values it read</th></tr>\n", f);
	for (size_t i = 0; i < jx_len(nots) && i < RP_MAX_NOT; i++) {
		struct json_object *o = json_object_array_get_idx(nots, i), *un = jx_obj(o, "unknown");

		fputs("<tr><td>", f);
		esc(f, jx_str(o, "verdict") ? jx_str(o, "verdict") : "(unnamed verdict)");
		fputs("</td><td>", f);
		if (jx_bool(o, "matched")) {
			fputs("none: every term held, an earlier rule won</td><td>also held</td><td>", f);
		} else if (!jx_str(o, "failed")) {
			fputs("not recorded</td><td></td><td>", f);
		} else {
			fputs("<code>", f);
			esc(f, jx_str(o, "failed"));
			fputs("</code></td><td>", f);
			if (un && json_object_object_length(un))
				fputs("unknown", f);
			else
				put_val(f, jx_get(o, "value"));
			fputs("</td><td>", f);
			if (un && json_object_object_length(un)) {
				fputs("could not be evaluated: ", f);
				values_list(f, un);
			} else {
				values_list(f, jx_obj(o, "values"));
			}
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

/* ---- counters ---- */

static void spark(FILE *f, const struct ctr *k)
{
	float mx = 0;

	for (int i = 0; i < RP_SPARK_W; i++)
		if (k->spark[i] > mx)
			mx = k->spark[i];
	fputs("<svg class=\"sp\" width=\"240\" height=\"20\" viewBox=\"0 0 240 20\" role=\"img\" "
	      "aria-label=\"per-sample deltas\"><path class=\"spark\" d=\"M0 19", f);
	for (int i = 0; i < RP_SPARK_W; i++) {
		double y = mx > 0 ? 19 - 18.0 * k->spark[i] / mx : 19;

		fprintf(f, "L%d %.0f", i * 2, cl(y));
	}
	fputs("\"/></svg>", f);
}

static void sec_counters(struct ctx *c)
{
	FILE *f = c->f;

	fputs("<section id=\"counters\"><h2>Counters</h2>\n<p>Per port, the counters that moved "
	      "over the flight-recorder window or the observation window, each with its deltas "
	      "along the recorder window; the others are named.</p>\n", f);
	for (size_t pi = 0; pi < c->np; pi++) {
		struct pdata *p = &c->pd[pi];
		size_t moved = 0, plotted = 0, flat = 0, named = 0;
		char b1[32], b2[32];

		for (size_t i = 0; i < p->nc; i++)
			moved += p->c[i].moved;
		fputs("<h3>Port ", f);
		esc(f, p->name);
		fprintf(f, ": %zu of %zu counters moved</h3>\n", moved, p->nc);
		if (moved) {
			fputs("<table class=\"moved\"><tr><th>counter</th><th>delta, recorder window</th>"
			      "<th>delta, observation window</th><th>along the recorder window</th></tr>\n", f);
			for (size_t i = 0; i < p->nc && plotted < RP_MAX_SPARK; i++) {
				const struct ctr *k = &p->c[i];

				if (!k->moved)
					continue;
				fputs("<tr><td class=\"mono\">", f);
				esc(f, k->name);
				fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
					fplain(b1, sizeof(b1), k->rec_total), fplain(b2, sizeof(b2), k->win_total));
				spark(f, k);
				fputs("</td></tr>\n", f);
				plotted++;
			}
			fputs("</table>\n", f);
			if (moved > plotted) {
				fprintf(f, "<p class=\"names\">%zu more moved (not plotted): ", moved - plotted);
				for (size_t i = 0, seen = 0; i < p->nc; i++) {
					if (!p->c[i].moved || seen++ < plotted)
						continue;
					if (named++ >= RP_MAX_NAMED) {
						fputs(" &hellip;", f);
						break;
					}
					fputs(named > 1 ? ", <code>" : "<code>", f);
					esc(f, p->c[i].name);
					fprintf(f, "</code> +%s", fplain(b1, sizeof(b1), p->c[i].rec_total +
									 p->c[i].win_total));
				}
				fputs("</p>\n", f);
			}
		}
		for (size_t i = 0; i < p->nc; i++)
			flat += !p->c[i].moved;
		if (flat) {
			fprintf(f, "<p class=\"names\">%zu did not move: ", flat);
			named = 0;
			for (size_t i = 0; i < p->nc; i++) {
				if (p->c[i].moved)
					continue;
				if (named++ >= RP_MAX_NAMED) {
					fprintf(f, " and %zu more", flat - RP_MAX_NAMED);
					break;
				}
				fputs(named > 1 ? ", <code>" : "<code>", f);
				esc(f, p->c[i].name);
				fputs("</code>", f);
			}
			fputs(".</p>\n", f);
		}
		if (!p->nc)
			fputs("<p>No counters recorded for this port.</p>\n", f);
	}
	fputs("</section>\n", f);
}

/* ---- evidence ---- */

static const char *file_what(const char *n)
{
	static const struct { const char *name, *what; } w[] = {
		{ "manifest.json", "the manifest: verdict, facts, steps, release" },
		{ "SHA256SUMS", "checksums of every file" },
		{ "summary.txt", "the one-page summary" },
		{ "record.json", "the whole investigation record" },
		{ "facts.json", "the facts the rules classified" },
		{ "window.json", "the fast observation window" },
		{ "flows.json", "flows at the start and of the incident" },
		{ "threads.json", "engine threads" },
		{ "pings.json", "kernel pings" },
		{ "links.json", "link and neighbour state" },
		{ "journal.json", "kernel and driver journal lines" },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(n, w[i].name))
			return w[i].what;
	if (!strncmp(n, "recorder/", 9))
		return "flight-recorder samples of a port";
	if (!strncmp(n, "captures/", 9))
		return "capture (pcap)";
	if (!strncmp(n, "probes/", 7))
		return "probe output";
	return "";
}

static void sec_evidence(struct ctx *c)
{
	FILE *f = c->f;
	const char *pre = c->o->link_prefix ? c->o->link_prefix : "";

	fputs("<section id=\"evidence\"><h2>Evidence</h2>\n<p>Files of the bundle, as relative "
	      "paths.</p>\n<ul>\n", f);
	for (size_t i = 0; i < c->r->nfiles; i++) {
		const struct rp_file *e = &c->r->files[i];
		char b[32];

		if (!strcmp(e->name, REPORT_NAME))
			continue;
		fputs("<li>", f);
		if (safe_rel(e->name)) {
			fputs("<a href=\"", f);
			url(f, pre, e->name);
			fputs("\">", f);
			esc(f, e->name);
			fputs("</a>", f);
		} else {
			fputs("<code>", f);
			esc(f, e->name);
			fputs("</code> (an unsafe name: not linked)", f);
		}
		if (*file_what(e->name))
			fprintf(f, " &ndash; %s", file_what(e->name));
		if (e->bytes >= 0)
			fprintf(f, ", %s bytes", fnum(b, sizeof(b), (double)e->bytes));
		if (e->truncated)
			fputs(", cut to the copy limit", f);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n</section>\n", f);
}

static void nav(FILE *f)
{
	fputs("<nav aria-label=\"contents\"><ul><li><a href=\"#timeline\">Timeline</a></li>"
	      "<li><a href=\"#gap\">The gap</a></li><li><a href=\"#flows\">Flows</a></li>"
	      "<li><a href=\"#threads\">Threads</a></li><li><a href=\"#not\">What it is not</a></li>"
	      "<li><a href=\"#counters\">Counters</a></li><li><a href=\"#evidence\">Evidence</a>"
	      "</li></ul></nav>\n", f);
}

/* The panels' ranges: the recorder's whole span, and the investigation
 * from the stall's start to the last step or the release. */
static void ranges(struct ctx *c)
{
	struct story *s = &c->s;
	double b0 = 0, b1 = s->tmax > 0 ? s->tmax : 1, pad;

	if (s->has_stall && s->stall_t0 < b0)
		b0 = s->stall_t0;
	pad = (b1 - b0) * 0.04;
	c->b0 = b0 - pad;
	c->b1 = b1 + pad;
	if (!(c->b1 > c->b0))
		c->b1 = c->b0 + 1;
	c->has_a = 0;
	for (size_t i = 0; i < c->np; i++)
		if (c->pd[i].has_rec && c->pd[i].nrec) {
			if (!c->has_a || c->pd[i].rec_t0 < c->a0)
				c->a0 = c->pd[i].rec_t0;
			if (!c->has_a || c->pd[i].rec_t1 > c->a1)
				c->a1 = c->pd[i].rec_t1;
			c->has_a = 1;
		}
	if (c->has_a && !(c->a1 > c->a0))
		c->a1 = c->a0 + 1;
}

static int ctx_init(struct ctx *c, const struct report *r, const struct report_opts *o,
		    FILE *f, struct rules **own)
{
	static const struct report_opts none;

	memset(c, 0, sizeof(*c));
	c->f = f;
	c->r = r;
	c->o = o ? o : &none;
	c->ru = c->o->rules;
	*own = NULL;
	if (!c->ru)
		c->ru = *own = builtin_rules();
	story_build(r, &c->s);
	for (size_t i = 0; i < r->nports; i++)
		pdata_build(r, i, c->ru, &c->s, &c->pd[c->np++]);
	ranges(c);
	return 0;
}

static void ctx_fini(struct ctx *c, struct rules *own)
{
	for (size_t i = 0; i < c->np; i++)
		pdata_free(&c->pd[i]);
	rules_free(own);
}

int report_html(const struct report *r, const struct report_opts *o, FILE *f)
{
	struct ctx *c;
	struct rules *own;
	char when[64];

	if (!r || !f)
		return -1;
	c = malloc(sizeof(*c));
	if (!c)
		return -1;
	ctx_init(c, r, o, f, &own);
	time_text(r, when, sizeof(when));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"nicstalld " NICSTALL_VERSION "\">\n<title>", f);
	esc(f, verdict_of(r));
	fputs(" on port ", f);
	esc(f, jx_str(r->man, "port") ? jx_str(r->man, "port") : "(not recorded)");
	fprintf(f, ", %s &ndash; nicstalld report</title>\n<style>\n%s</style></head>\n<body>\n", when, css);
	header(c);
	nav(f);
	fputs("<main>\n", f);
	sec_timeline(c);
	sec_gap(c);
	sec_flows(c);
	sec_threads(c);
	sec_is(c);
	sec_not(c);
	sec_counters(c);
	sec_evidence(c);
	fputs("</main>\n<footer><p class=\"meta\">Written by nicstalld " NICSTALL_VERSION
	      " from the bundle's files (nicstall-bundle(5)); regenerate with <code>nicstallctl "
	      "report</code>.</p></footer>\n</body></html>\n", f);
	ctx_fini(c, own);
	free(c);
	return ferror(f) ? -1 : 0;
}

char *report_html_string(const struct report *r, const struct report_opts *o, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int rc;

	if (!f)
		return NULL;
	rc = report_html(r, o, f);
	if (fclose(f) != 0 || rc < 0) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}

/* ---- the text timeline ---- */

/* Mean rate of signal k over [t0, t1) from intervals iv (time-weighted). */
static int bucket_rate(const struct iv *iv, size_t n, int k, double t0, double t1, double *out)
{
	double sum = 0, dur = 0;

	for (size_t i = 0; i < n; i++) {
		double a = iv[i].t0 > t0 ? iv[i].t0 : t0, b = iv[i].t1 < t1 ? iv[i].t1 : t1;

		if (b <= a || !(iv[i].known & (1u << k)))
			continue;
		sum += iv[i].v[k] * (b - a);
		dur += b - a;
	}
	if (dur <= 0)
		return 0;
	*out = sum / dur;
	return 1;
}

static void sparkline(FILE *f, const struct iv *iv, size_t n, int k, double t0, double t1,
		      int width, double vmax, int utf8)
{
	static const char *const blocks[8] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
		"\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
	static const char ascii[] = "_.-~=+*#";

	for (int i = 0; i < width; i++) {
		double v, a = t0 + (t1 - t0) * i / width, b = t0 + (t1 - t0) * (i + 1) / width;
		int lvl;

		if (!bucket_rate(iv, n, k, a, b, &v)) {
			fputc(' ', f);
			continue;
		}
		lvl = vmax > 0 ? (int)(v / vmax * 7.999) : 0;
		lvl = lvl < 0 ? 0 : lvl > 7 ? 7 : lvl;
		if (utf8)
			fputs(blocks[lvl], f);
		else
			fputc(ascii[lvl], f);
	}
}

/* Text as is but for control characters (a terminal must not be driven
 * by a bundle), at most max bytes. */
static void tput(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s && s[i] && i < max; i++)
		fputc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], f);
}

int report_timeline(const struct report *r, const struct report_opts *o, int utf8, FILE *f)
{
	struct ctx *c;
	struct rules *own;
	const int W = 40;
	int rel_done = 0;

	if (!r || !f)
		return -1;
	c = malloc(sizeof(*c));
	if (!c)
		return -1;
	ctx_init(c, r, o, f, &own);
	fputs("Timeline (ms from the start of the investigation)\n", f);
	if (c->s.has_stall) {
		struct json_object *fl = jx_obj(jx_obj(r->man, "facts"), FK_FLOWS);

		fprintf(f, "  %+9.1f  stall: the first stalled flow began to wait (%" PRIu64 " stalled)\n",
			c->s.stall_t0, jx_u64(fl, FK_F_STALLED));
	}
	for (size_t i = 0; i <= c->s.nst; i++) {
		const struct step *st = &c->s.st[i];
		char end[32] = "";

		/* the release in its place in time */
		if (c->s.released && c->s.has_release_t && !rel_done &&
		    (i == c->s.nst || st->t0 > c->s.release_t)) {
			fprintf(f, "  %+9.1f  %-11sreleased by ", c->s.release_t, "");
			tput(f, c->s.release_action ? c->s.release_action : "?", 32);
			fprintf(f, ", %.1f ms after it\n", c->s.after_ms);
			rel_done = 1;
		}
		if (i == c->s.nst)
			break;

		if (st->has_t1 && st->t1 - st->t0 >= 0.05)
			snprintf(end, sizeof(end), "..%+.1f", st->t1);
		fprintf(f, "  %+9.1f  %-11s", st->t0, end);
		tput(f, st->name, 32);
		if (st->port) {
			fputs(" (", f);
			tput(f, st->port, 64);
			fputc(')', f);
		}
		fputs(": ", f);
		tput(f, st->outcome ? st->outcome : "?", 32);
		if (st->note) {
			fputs(", ", f);
			tput(f, st->note, 120);
		}
		fputc('\n', f);
	}
	if (!rel_done && c->s.has_stall)
		fputs("                         not released\n", f);
	for (size_t pi = 0; pi < c->np; pi++) {
		struct pdata *p = &c->pd[pi];
		double vmax = 0;
		char b[32];

		if (!(p->sig_known & ((1u << S_PORT) | (1u << S_VPORT))))
			continue;
		for (int k = S_PORT; k <= S_VPORT; k++)
			if ((p->sig_known & (1u << k)) && p->sig_max[k] > vmax)
				vmax = p->sig_max[k];
		if (pi == 0)
			fprintf(f, "Frames/s, port vs vport: flight recorder %s investigation "
				"(%.0f..%.0f ms)\n", utf8 ? "\xe2\x94\x82" : "|", c->b0, c->b1);
		for (int k = S_PORT; k <= S_VPORT; k++) {
			fputs("  ", f);
			tput(f, k == S_PORT ? p->name : "", 12);
			fprintf(f, "%*s%-5s ", k == S_PORT ? (int)(12 - (strlen(p->name) > 12 ? 12 :
				strlen(p->name))) : 12, "", sig_label[k]);
			if (c->has_a)
				sparkline(f, p->rec, p->nrec, k, c->a0, c->a1, W / 2, vmax, utf8);
			fputs(utf8 ? "\xe2\x94\x82" : "|", f);
			{
				/* the investigation: the fast window where sampled, else the recorder */
				for (int i = 0; i < W; i++) {
					double a = c->b0 + (c->b1 - c->b0) * i / W, bb = c->b0 +
						   (c->b1 - c->b0) * (i + 1) / W, v;
					int have = bucket_rate(p->win, p->nwin, k, a, bb, &v) ||
						   bucket_rate(p->rec, p->nrec, k, a, bb, &v);

					if (!have) {
						fputc(' ', f);
						continue;
					}
					sparkline(f, &(struct iv){ .t0 = a, .t1 = bb, .v = { [S_PORT] = k ==
						  S_PORT ? v : 0, [S_VPORT] = k == S_VPORT ? v : 0 },
						  .known = 1u << k }, 1, k, a, bb, 1, vmax, utf8);
				}
			}
			fprintf(f, "  max %s/s\n", fnum(b, sizeof(b), p->sig_max[k]));
		}
	}
	ctx_fini(c, own);
	free(c);
	return ferror(f) ? -1 : 0;
}
