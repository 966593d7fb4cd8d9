/* report text: report_timeline (see report.h), the story for a terminal
 * (nicstallctl show): one line per step with its offset, the stall and the
 * release in their places in time, and per port sparklines of the port and
 * vport rates, UTF-8 blocks where the terminal takes them and ASCII
 * otherwise. Nothing from the bundle reaches the terminal as a control
 * character. */
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

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
		{
			/* clamped before the cast: a sum of rates near the
			 * bound can reach infinity, and (int)inf is undefined */
			double q = vmax > 0 ? v / vmax * 7.999 : 0;

			lvl = !(q > 0) ? 0 : q >= 7 ? 7 : (int)q;
		}
		if (utf8)
			fputs(blocks[lvl], f);
		else
			fputc(ascii[lvl], f);
	}
}

/* A one-line field of the bundle through the terminal filter (a bundle
 * must not drive the terminal: util_term_put), at most max characters. */
static void tput(FILE *f, const char *s, size_t max)
{
	if (s)
		util_term_put(f, s, strlen(s), max, 0);
}

int report_timeline(const struct report *r, const struct report_opts *o, int utf8, FILE *f)
{
	struct ctx *c;
	const int W = 40;

	if (!r || !f)
		return -1;
	c = rp_ctx_new(r, o, f);
	if (!c)
		return -1;
	fputs("Timeline (ms from the start of the investigation)\n", f);
	if (c->s.has_stall) {
		struct json_object *fl = jx_obj(jx_obj(r->man, "facts"), FK_FLOWS);

		fprintf(f, "  %+9.1f  stall: the first stalled flow began to wait (%" PRIu64 " stalled)\n",
			c->s.stall_t0, jx_u64(fl, FK_F_STALLED));
	}
	for (size_t i = 0; i <= c->s.nst; i++) {
		const struct step *st = &c->s.st[i];
		char end[32] = "";

		if (i == c->s.release_before) {
			fprintf(f, "  %+9.1f  %-11sreleased by ", c->s.release_t, "");
			tput(f, c->s.release_action ? c->s.release_action : "an unnamed action", 32);
			if (c->s.has_after)
				fprintf(f, ", %.1f ms after it", c->s.after_ms);
			fputc('\n', f);
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
		tput(f, st->outcome ? st->outcome : "outcome not recorded", 32);
		if (st->note) {
			fputs(", ", f);
			tput(f, st->note, 120);
		}
		fputc('\n', f);
	}
	if (c->s.release_before == SIZE_MAX && c->s.has_stall)
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
				strlen(p->name))) : 12, "", rp_sig_label[k]);
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
			fprintf(f, "  max %s/s\n", rp_fnum(b, sizeof(b), p->sig_max[k]));
		}
	}
	rp_ctx_free(c);
	return ferror(f) ? -1 : 0;
}
