/* report series: per port, what the charts and the counters table draw
 * (see report_int.h): every counter the recorder samples and the
 * observation window name, their deltas per interval, the signals' rates
 * per interval (the rules evaluate the deltas of one interval at a time),
 * and the healthy gap learned before the stall. */
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* the signals the series are of (their labels: report_model.c) */
const char *const rp_sig_name[NSIG] = {
	"port_frames", "vport_frames", "gap", "buffer_drops", "steer_misses", "fabric_errors",
};

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

/* The counter called name: its index, added when new; -1 when there is no
 * room. */
static long ctr_find(struct pdata *p, const char *name)
{
	struct json_object *v;

	if (json_object_object_get_ex(p->idx, name, &v))
		return (long)json_object_get_int64(v);
	if (p->nc >= RP_MAX_COUNTERS)
		return -1;
	if (!p->c) {
		p->c = calloc(RP_MAX_COUNTERS, sizeof(*p->c));
		p->cell = calloc(RP_MAX_COUNTERS, sizeof(*p->cell));
		p->touched = calloc(RP_MAX_COUNTERS, sizeof(*p->touched));
		if (!p->c || !p->cell || !p->touched) {
			/* none or all: the next call must not find c without cell */
			free(p->c);
			free(p->cell);
			free(p->touched);
			p->c = NULL;
			p->cell = NULL;
			p->touched = NULL;
			return -1;
		}
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

/* The same for the counter name of source src: the rules call the netdev
 * source's counters "netdev/NAME", every other source's plain NAME. */
static long ctr_of(struct pdata *p, const char *src, const char *name)
{
	char nb[320];

	if (src && !strcmp(src, "netdev")) {
		snprintf(nb, sizeof(nb), "netdev/%s", name);
		name = nb;
	}
	return ctr_find(p, name);
}

/* Add delta d to counter i in the interval being evaluated. Whether i is
 * on the touched list is its own flag, never read from the sum: sources
 * that name the same counter can bring the sum back to exactly 0 (a
 * bundle is hostile), and a sum-based test would list i again, past the
 * RP_MAX_COUNTERS entries (each counter is listed at most once, and there
 * are at most RP_MAX_COUNTERS). The sum saturates: a wrapped sum would
 * tell a signal nothing moved. */
static void touch(struct pdata *p, long i, uint64_t d)
{
	uint64_t old = json_object_get_uint64(p->cell[i]);

	if (!p->c[i].listed) {
		p->c[i].listed = 1;
		p->touched[p->ntouched++] = (size_t)i;
	}
	json_object_set_uint64(p->cell[i], d > UINT64_MAX - old ? UINT64_MAX : old + d);
}

static void untouch(struct pdata *p)
{
	for (size_t i = 0; i < p->ntouched; i++) {
		json_object_set_uint64(p->cell[p->touched[i]], 0);
		p->c[p->touched[i]].listed = 0;
	}
	p->ntouched = 0;
}

static void eval(struct pdata *p, const struct rules *ru, struct iv *iv)
{
	double dt = (iv->t1 - iv->t0) / 1000.0;

	iv->known = 0;
	for (int k = 0; k < NSIG; k++) {
		double v;

		if (dt > 0 && rules_signal(ru, p->profile, rp_sig_name[k], p->zero, &v) == 0 &&
		    rp_isnum(v / dt)) {
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
			uint64_t v;
			long ci;

			if (!val_u64(cv, &v))
				continue;
			ci = ctr_of(p, src, cname);
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
			uint64_t d;
			long ci = ctr_of(p, src, cname);

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

void rp_pdata_build(const struct report *r, size_t pi, const struct rules *ru,
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
	    rp_isnum(g / span)) {
		p->healthy_gap = g / span;
		p->has_healthy = 1;
		p->base_span = span;
	}
}

void rp_pdata_free(struct pdata *p)
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
