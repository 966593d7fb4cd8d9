/* report_int: what the report modules share; private to bundle/ (the
 * public header is report.h).
 *
 *   report_load.c      a bundle, read from its directory or handed over in
 *                      memory, into struct report
 *   report_model.c     the signals, the story (steps, stall, release), the
 *                      panels' time ranges, the context every output is
 *                      written from
 *   report_series.c    per port: counters, their per-interval deltas, the
 *                      signals' rates, the healthy gap
 *   report_svg.c       SVG: axes, ticks, series, bands, lanes; the charts
 *   report_html.c      the page: the stylesheet (print too), the header;
 *                      report_html
 *   report_fmt.c       escaping and numbers for people, for every output
 *   report_sections.c  the page's sections, from the timeline to the evidence
 *   report_text.c      report_timeline, the terminal's story
 *
 * Time runs in milliseconds from the start of the investigation (the
 * reference of the manifest's steps[].start_ms). Rates are per second, from
 * per-interval counter deltas put through the rules' signals, so the page
 * says "port" and "vport" for every profile the rules know. */
#ifndef NICSTALL_REPORT_INT_H
#define NICSTALL_REPORT_INT_H

#include "bundle/report.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct rules;

/* Bounds: a bundle is hostile input. */
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

/* The signals the report draws, evaluated per interval (report_model.c):
 * their names in the rules (report_series.c), and what the page calls
 * them (report_model.c). */
enum { S_PORT, S_VPORT, S_GAP, S_BUF, S_STEER, S_FABRIC, NSIG };
extern const char *const rp_sig_name[NSIG];
extern const char *const rp_sig_label[NSIG];

/* ---- the loaded bundle (report_load.c) ---- */

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

/* ---- the story: time base, steps, stall, release (report_model.c) ---- */

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
	int has_after;                  /* after_ms: the release's own figure */
	const char *release_action;
	/* a timed release is told before st[release_before] (nst: after the
	 * last step); SIZE_MAX when there is none */
	size_t release_before;
	double win_t0, win_t1;  /* the observation step */
	int has_win;
	/* the benchmark run the incident fell in (manifest "run"), ms */
	int has_run, run_ended;
	double run_t0, run_t1;
	const char *run_name;
};

/* ---- per-port series (report_series.c) ---- */

struct iv {                     /* one sampling interval */
	double t0, t1;          /* ms */
	double v[NSIG];         /* rates, per second */
	unsigned known;         /* bit per signal */
};

struct ctr {
	char *name;
	uint64_t cur;
	int have, moved;
	int listed;             /* on pdata.touched (this interval's list) */
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

/* Port pi of r: its counters and the signals' rates over the recorder
 * samples and the observation window, under the rules ru. */
void rp_pdata_build(const struct report *r, size_t pi, const struct rules *ru,
		    const struct story *s, struct pdata *p);
void rp_pdata_free(struct pdata *p);

/* ---- what every output is written from (report_model.c) ---- */

struct ctx {
	FILE *f;
	const struct report *r;
	const struct report_opts *o;    /* never NULL */
	const struct rules *ru;
	struct rules *own;              /* the built-in signals, when o has no rules */
	struct story s;
	struct pdata pd[RP_MAX_PORTS];
	size_t np;
	double b0, b1;          /* investigation panel range, ms */
	double a0, a1;          /* recorder panel range, ms */
	int has_a;
	char hatch[48];         /* the stall pattern of the SVG being written */
};

/* The story, every port's series and the panels' ranges of r, written to f;
 * NULL when out of memory. */
struct ctx *rp_ctx_new(const struct report *r, const struct report_opts *o, FILE *f);
void rp_ctx_free(struct ctx *c);

/* ---- output helpers (report_fmt.c) ---- */

/* A finite number a page can show. */
static inline int rp_isnum(double v)
{
	return isfinite(v) && fabs(v) < 1e300;
}

/* Text for HTML (element content and attribute values alike): valid UTF-8
 * passes, anything else, control and bidirectional-override characters
 * become U+FFFD, the five special characters become references; at most
 * max characters, then an ellipsis. rp_esc: at most RP_TEXT. */
void rp_esc_n(FILE *f, const char *s, size_t max);
void rp_esc(FILE *f, const char *s);
/* A link target: the prefix and a checked relative path, percent-encoded
 * outside [A-Za-z0-9._~/-]. */
void rp_url(FILE *f, const char *prefix, const char *rel);
/* A number for people: 3 significant digits and k/M/G/T. */
const char *rp_fnum(char *buf, size_t len, double v);
/* A number as the bundle has it, for tables: 6 significant digits. */
const char *rp_fplain(char *buf, size_t len, double v);
/* A JSON value for people, escaped. */
void rp_put_val(FILE *f, struct json_object *v);

/* ---- the charts (report_svg.c) ---- */

/* Port pi's timeline (rates at the port and the vport, drops by kind, the
 * action lanes) and its gap, each a <figure>. */
void rp_timeline_port(struct ctx *c, size_t pi);
void rp_gap_port(struct ctx *c, size_t pi);
/* The stalled flows' lanes (the first nlanes of list) and a last lane for
 * the nsib siblings, which received sib_msgs messages up to after_t. */
void rp_flows_chart(struct ctx *c, struct json_object *list, size_t nlanes, size_t nsib,
		    double sib_msgs, double after_t);
/* One counter's deltas along the recorder window. */
void rp_counter_spark(FILE *f, const struct ctr *k);

/* ---- the sections (report_sections.c) ---- */

/* Every section of the page's <main>, in order. */
void rp_sections(struct ctx *c);

#endif
