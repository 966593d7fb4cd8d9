/* report svg: the charts of the page (see report_int.h), inline SVG that
 * reads without script, font or colour: series are told apart by dashes
 * and direct labels, bands by hatching, every mark has a <title>, every
 * chart a title and a description. Marks carry data-* attributes (time in
 * ms, x in pixels) that the system test checks against the manifest.
 * Every coordinate is finite and bounded whatever the bundle said. */
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

/* Layout: the width, the recorder panel (A) and the investigation panel
 * (B) from left to right. */
#define W_SVG   960
#define X_A0    70
#define X_A1    360
#define X_B0    430
#define X_B1    855

/* An SVG coordinate: finite and bounded whatever the data said. */
static double cl(double v)
{
	if (!isfinite(v))
		return 0;
	return v < -1e5 ? -1e5 : v > 1e5 ? 1e5 : v;
}

/* A step drawn in the action lanes. */
static int is_action(const char *s)
{
	return s && (!strcmp(s, "ping") || !strcmp(s, "capture") || !strcmp(s, "capture-promisc") ||
		     !strcmp(s, "reprogram"));
}

/* The stall's hatching, as pattern "hatch-<id>". */
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

	if (!rp_isnum(v) || v <= 0)
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
				a->x0 - 4, y + 4, rp_fnum(b, sizeof(b), v), i == 2 ? unit : "");
	}
	fprintf(f, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		a->x0, a->y0, a->x1, a->y0);
}

/* Interval iv of signal k belongs in panel a: known, overlapping the
 * panel, not inside [skip0, skip1]. */
static int in_panel(const struct axis *a, const struct iv *iv, int k, double skip0, double skip1)
{
	return (iv->known & (1u << k)) && iv->t1 > a->t0 && iv->t0 < a->t1 &&
	       !(iv->t0 >= skip0 && iv->t1 <= skip1);
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
		in += in_panel(a, &iv[i], k, skip0, skip1);
	if (!in)
		return;
	group = (in + RP_PLOT_POINTS - 1) / RP_PLOT_POINTS;
	fprintf(f, "<path class=\"series %s\" data-port=\"", cls);
	rp_esc(f, port);
	fprintf(f, "\" data-panel=\"%s\" data-series=\"%s\" d=\"", panel, label);
	for (size_t i = 0; i < n;) {
		double sum = 0, dur = 0, t0, t1;
		size_t g = 0;

		if (!in_panel(a, &iv[i], k, skip0, skip1)) {
			i++;
			continue;
		}
		t0 = iv[i].t0;
		t1 = iv[i].t1;
		while (i < n && g < group && in_panel(a, &iv[i], k, skip0, skip1)) {
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
	rp_esc(f, port);
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

/* The benchmark run the incident fell in, a bar along the panel's top. */
static void run_band(struct ctx *c, const struct axis *a, const char *panel)
{
	struct story *s = &c->s;
	double t0, t1, x0, x1;

	if (!s->has_run || s->run_t1 < a->t0 || s->run_t0 > a->t1)
		return;
	t0 = s->run_t0 < a->t0 ? a->t0 : s->run_t0;
	t1 = s->run_t1 > a->t1 ? a->t1 : s->run_t1;
	x0 = ax_x(a, t0);
	x1 = ax_x(a, t1);
	fprintf(c->f, "<rect class=\"run band\" data-kind=\"run\" data-panel=\"%s\" "
		"data-t-ms=\"%.3f\" data-x=\"%.1f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"4\"><title>benchmark run ", panel, s->run_t0, x0, x0, a->y1 - 6,
		x1 - x0 < 1 ? 1 : x1 - x0);
	rp_esc(c->f, s->run_name);
	if (s->run_ended)
		fprintf(c->f, ": %.1f ms to %.1f ms</title></rect>", s->run_t0, s->run_t1);
	else
		fprintf(c->f, ": from %.1f ms, open when the bundle was written</title></rect>",
			s->run_t0);
	if (x1 - x0 > 60) {
		fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">run ", x0 + 3, a->y1 - 8);
		rp_esc(c->f, s->run_name);
		fputs("</text>", c->f);
	}
}

/* The release happened within panel a. */
static int release_in(const struct story *s, const struct axis *a)
{
	return s->released && s->has_release_t && s->release_t >= a->t0 && s->release_t <= a->t1;
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
		rp_esc(f, st->name);
		fprintf(f, "\" data-step-port=\"");
		rp_esc(f, st->port ? st->port : "");
		fprintf(f, "\" data-index=\"%zu\" data-t-ms=\"%.3f\" data-t-end-ms=\"%.3f\" data-x=\"%.1f\" "
			"x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"><title>", st->idx, st->t0, st->t1,
			x0, x0, ytop + l * LANE_H + (mine ? 1 : 4), x1 - x0 < 2 ? 2 : x1 - x0,
			mine ? LANE_H - 4 : LANE_H - 10);
		rp_esc(f, st->name);
		if (st->port) {
			fputs(" (", f);
			rp_esc(f, st->port);
			fputc(')', f);
		}
		fprintf(f, ": %.1f ms to %.1f ms, ", st->t0, st->t1);
		rp_esc(f, st->outcome ? st->outcome : "outcome not recorded");
		if (st->note) {
			fputs(" (", f);
			rp_esc(f, st->note);
			fputc(')', f);
		}
		fputs("</title></rect>", f);
	}
	if (release_in(s, a)) {
		double x = ax_x(a, s->release_t), y = ytop + 4 * LANE_H + 6;

		fprintf(f, "<path class=\"relm marker\" data-kind=\"release\" data-t-ms=\"%.3f\" "
			"data-x=\"%.1f\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\"><title>released by ", s->release_t,
			x, x, y - 5);
		rp_esc(f, s->release_action ? s->release_action : "an unnamed action");
		fprintf(f, " at %.1f ms</title></path>", s->release_t);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">released", x + 7, y + 4);
		fprintf(f, "</text>");
	}
}

static void release_line(struct ctx *c, const struct axis *a)
{
	struct story *s = &c->s;

	if (release_in(s, a)) {
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

static void panel_attrs(FILE *f, const char *panel, const struct axis *a)
{
	fprintf(f, "<g class=\"panel\" data-panel=\"%s\" data-t0-ms=\"%.3f\" data-t1-ms=\"%.3f\" "
		"data-x0=\"%.1f\" data-x1=\"%.1f\">", panel, a->t0, a->t1, a->x0, a->x1);
}

/* A signal's line: solid port, dashed vport, the gap, a dash pattern per
 * drop kind. */
static const char *series_class(int k)
{
	return k <= S_VPORT ? rp_sig_label[k] : k == S_GAP ? "gapl" : k == S_BUF ? "d3" :
	       k == S_STEER ? "d4" : "d5";
}

/* Drawn: a drop kind that never moved is not, the caption says so. */
static int drawn(const struct pdata *p, int k)
{
	return k < S_BUF || p->sig_max[k] > 0;
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
		if (with_bands) {
			stall_band(c, &A, "recorder");
			run_band(c, &A, "recorder");
		}
		for (int j = 0; j < nk; j++)
			if (drawn(p, ks[j]))
				series_path(f, &A, p->rec, p->nrec, ks[j], series_class(ks[j]), p->name,
					    "recorder", rp_sig_label[ks[j]], 1, 0);
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
			ytop + 4, rp_fnum(b, sizeof(b), vmax));
	if (with_bands) {
		stall_band(c, &B, "investigation");
		run_band(c, &B, "investigation");
	}
	for (int j = 0; j < nk; j++) {
		double win0 = p->nwin ? p->win[0].t0 : 1, win1 = p->nwin ? p->win[p->nwin - 1].t1 : 0;

		if (!drawn(p, ks[j]))
			continue;
		/* recorder intervals lying inside the fast window are drawn by it */
		series_path(f, &B, p->rec, p->nrec, ks[j], series_class(ks[j]), p->name,
			    "investigation", rp_sig_label[ks[j]], win0, win1);
		series_path(f, &B, p->win, p->nwin, ks[j], series_class(ks[j]), p->name,
			    "investigation", rp_sig_label[ks[j]], 1, 0);
	}
	if (ks[0] == S_GAP && p->has_healthy) {
		fprintf(f, "<line class=\"healthy\" data-kind=\"healthy\" data-rate=\"%.6g\" x1=\"%.1f\" "
			"y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", p->healthy_gap, B.x0,
			ax_y(&B, p->healthy_gap), B.x1, ax_y(&B, p->healthy_gap));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">healthy %s/s</text>", B.x1 + 4,
			ax_y(&B, p->healthy_gap) - 4, rp_fnum(b, sizeof(b), p->healthy_gap));
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
			    !drawn(p, ks[j]))
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
			end_label(f, B.x1 + 4, ly[i], rp_sig_label[lk[i]]);
	}
	fputs("</g>", f);
}

static void svg_open(struct ctx *c, const char *cls, size_t pi, const char *port, double h,
		     const char *what)
{
	FILE *f = c->f;

	fprintf(f, "<svg class=\"%s\" id=\"%s-%zu\" data-port=\"", cls, cls, pi);
	rp_esc(f, port);
	fprintf(f, "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" role=\"img\" aria-labelledby=\"%s-%zu-t %s-%zu-d\">"
		"<title id=\"%s-%zu-t\">%s of port ", W_SVG, h, W_SVG, h, cls, pi, cls, pi, cls, pi, what);
	rp_esc(f, port);
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
					rp_fnum(a, sizeof(a), p->sig_max[S_PORT]));
	else
		off += (size_t)snprintf(buf + off, len - off, "the port rate is unknown (no "
					"port_frames counter for profile %.16s), ", p->profile);
	if (off < len && (p->sig_known & (1u << S_VPORT)))
		off += (size_t)snprintf(buf + off, len - off, "at the vport up to %s/s",
					rp_fnum(b, sizeof(b), p->sig_max[S_VPORT]));
	else if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "no vport counter");
	if (off < len && (p->sig_known & (1u << S_GAP)))
		off += (size_t)snprintf(buf + off, len - off, "; the gap peaked at %s/s",
					rp_fnum(g, sizeof(g), p->sig_max[S_GAP]));
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

void rp_timeline_port(struct ctx *c, size_t pi)
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
	rp_esc_n(f, desc, 600);
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
	rp_esc_n(f, desc, 600);
	fputs(" <span class=\"legend\"><span><i class=\"sw\"></i>port (solid)</span><span>"
	      "<i class=\"sw v\"></i>vport (dashed)</span><span><i class=\"sw s\"></i>stall "
	      "(hatched)</span></span> ", f);
	if (drops) {
		fputs("Drops by kind (lower row): ", f);
	} else {
		fputs("No drops counted on this port: ", f);
	}
	for (int k = S_BUF; k <= S_FABRIC; k++) {
		int moved = (p->sig_known & (1u << k)) && p->sig_max[k] > 0;
		char b[32];

		fprintf(f, "%s%s %s", k > S_BUF ? ", " : "", rp_sig_label[k],
			!(p->sig_known & (1u << k)) ? "not counted by this profile" :
			!moved ? "0" : k == S_BUF ? "(dotted) up to " : k == S_STEER ?
			"(dash-dot) up to " : "(long dashes) up to ");
		if (moved)
			fprintf(f, "%s/s", rp_fnum(b, sizeof(b), p->sig_max[k]));
	}
	fputs(".</figcaption></figure>\n", f);
}

void rp_gap_port(struct ctx *c, size_t pi)
{
	FILE *f = c->f;
	struct pdata *p = &c->pd[pi];
	static const int gk[1] = { S_GAP };
	char nb[32], desc[400];

	if (!(p->sig_known & (1u << S_GAP))) {
		fputs("<p>Port ", f);
		rp_esc(f, p->name);
		fputs(": no gap, the bundle holds no port and vport counters for it.</p>\n", f);
		return;
	}
	snprintf(desc, sizeof(desc), "Port %.64s: frames counted at the port and not at the vport, "
		 "per second and sample; up to %s/s%s", p->name,
		 rp_fnum(nb, sizeof(nb), p->sig_max[S_GAP]), p->has_healthy ? "; the healthy rate "
		 "learned before the stall is the dashed line at " : "; no healthy rate was learned.");
	fputs("<figure>", f);
	svg_open(c, "gap", pi, p->name, 200, "The gap");
	fprintf(f, "<desc id=\"gap-%zu-d\">", pi);
	rp_esc_n(f, desc, 400);
	if (p->has_healthy)
		fprintf(f, "%s/s.", rp_fnum(nb, sizeof(nb), p->healthy_gap));
	fputs("</desc>", f);
	panel_heads(c, 12);
	rates_row(c, p, gk, 1, 24, 150, "/s", 1);
	fputs("</svg><figcaption>", f);
	rp_esc_n(f, desc, 400);
	if (p->has_healthy)
		fprintf(f, "%s/s (over %.3g s).", rp_fnum(nb, sizeof(nb), p->healthy_gap), p->base_span);
	fputs(" <span class=\"legend\"><span><i class=\"sw\" style=\"border-top-color:#444\"></i>"
	      "gap (solid)</span><span><i class=\"sw h\"></i>healthy rate (dashed)</span></span>"
	      "</figcaption></figure>\n", f);
}

void rp_counter_spark(FILE *f, const struct ctr *k)
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

void rp_flows_chart(struct ctx *c, struct json_object *list, size_t nlanes, size_t nsib,
		    double sib_msgs, double after_t)
{
	FILE *f = c->f;
	double h = 30 + (nlanes + 1) * 22.0;
	struct axis a = { c->b0, c->b1, X_B0 - 90, X_B1, 0, 1, h - 16, 24 };
	char b[32];

	if (!nlanes)
		return;
	fputs("<figure><svg class=\"flows\" xmlns=\"http://www.w3.org/2000/svg\" ", f);
	fprintf(f, "width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\" "
		"aria-labelledby=\"flows-t flows-d\"><title id=\"flows-t\">Stalled flows over "
		"time</title><desc id=\"flows-d\">One lane per stalled flow: hatched while it "
		"waited, a diamond where it was released; the last lane sums its siblings.</desc>",
		W_SVG, h, W_SVG, h);
	svg_defs(f, "flows");
	panel_attrs(f, "flows", &a);
	for (size_t i = 0; i < nlanes; i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		double y = 24 + i * 22.0, w0, t1 = c->s.stall_t1;

		if (!jx_num(jx_get(o, FK_FL_WAITED_MS), &w0) || fabs(w0) >= 1e9)
			continue;
		fprintf(f, "<text x=\"4\" y=\"%.1f\" font-size=\"10\">", y + 13);
		rp_esc_n(f, jx_str(o, FK_FL_TUPLE) ? jx_str(o, FK_FL_TUPLE) : "(no tuple)", 48);
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
		double y = 24 + nlanes * 22.0;

		fprintf(f, "<text x=\"4\" y=\"%.1f\">%zu siblings: +%s messages</text>", y + 13,
			nsib, rp_fnum(b, sizeof(b), sib_msgs));
		fprintf(f, "<line class=\"port\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			a.x0, y + 9, ax_x(&a, isfinite(after_t) ? after_t : a.t1), y + 9);
	}
	time_ticks(f, &a, 0);
	fputs("</g></svg><figcaption>Stalled flows: hatched while waiting, the diamond marks "
	      "the release; the solid line is the sibling flows, which kept receiving."
	      "</figcaption></figure>\n", f);
}
