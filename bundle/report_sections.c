/* report sections: the body of the page (see report_int.h), in the order a
 * reader asks: the timeline and the gap per port (the charts are
 * report_svg.c's) with the steps, the flows, the engine threads, why the
 * rule matched and what it is not, the counters (the ones that moved
 * plotted, the rest named), and the evidence files as relative links.
 * Every value from the bundle is escaped; rows and names are bounded. */
#include "bundle/bundle_int.h"
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "rules/facts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* ---- timeline and gap ---- */

static void steps_table(struct ctx *c)
{
	FILE *f = c->f;
	struct story *s = &c->s;

	fputs("<table id=\"steps\"><caption>Steps of the investigation (ms from its start)"
	      "</caption><tr><th>start</th><th>end</th><th>step</th><th>port</th><th>outcome</th>"
	      "<th>note</th></tr>\n", f);
	if (s->has_stall)
		fprintf(f, "<tr><td class=\"n\">%+.1f</td><td class=\"n\">%+.1f</td><td>stall</td>"
			"<td></td><td>%s</td><td>the first stalled flow began to wait</td></tr>\n",
			s->stall_t0, s->stall_t1, s->released ? "released" : "not released");
	for (size_t i = 0; i <= s->nst; i++) {
		const struct step *st = &s->st[i];

		if (i == s->release_before) {
			fprintf(f, "<tr><td class=\"n\">%+.1f</td><td></td><td>release</td><td></td>"
				"<td>released</td><td>by ", s->release_t);
			rp_esc(f, s->release_action ? s->release_action : "an unnamed action");
			if (s->has_after)
				fprintf(f, ", %.1f ms after it", s->after_ms);
			fputs("</td></tr>\n", f);
		}
		if (i == s->nst)
			break;
		fprintf(f, "<tr><td class=\"n\">%+.1f</td><td class=\"n\">", st->t0);
		if (st->has_t1)
			fprintf(f, "%+.1f", st->t1);
		fputs("</td><td>", f);
		rp_esc(f, st->name);
		fputs("</td><td>", f);
		rp_esc(f, st->port ? st->port : "");
		fputs("</td><td>", f);
		rp_esc(f, st->outcome ? st->outcome : "");
		fputs("</td><td>", f);
		rp_esc(f, st->note ? st->note : "");
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
		rp_esc(c->f, c->pd[i].name);
		fputs("</h3>\n", c->f);
		rp_timeline_port(c, i);
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
		rp_gap_port(c, i);
	fputs("</section>\n", c->f);
}

/* ---- flows ---- */

/* A snapshot's flows indexed for lookups in constant time: a snapshot
 * holds up to ~10^5 flows (liveness.h), and a hostile bundle any number the
 * file bound allows, so a scan per lookup would make the page quadratic.
 * by_ts: "tuple\x1fsource" -> the first such flow; by_t: tuple -> the first
 * flow of the tuple; by_t0: tuple -> the first without a source. Each value
 * holds the flow and its index (find_flow returns the first in order). */
struct flowidx {
	struct json_object *by_ts, *by_t, *by_t0;
};

static void idx_put(struct json_object *m, const char *key, struct json_object *o, size_t i)
{
	struct json_object *v;

	if (!m || json_object_object_get_ex(m, key, NULL) || !(v = json_object_new_array()))
		return;
	json_object_array_add(v, json_object_get(o));
	json_object_array_add(v, json_object_new_int64((int64_t)i));
	json_object_object_add(m, key, v);
}

static void flowidx_build(struct flowidx *x, struct json_object *list, const char *tkey)
{
	x->by_ts = json_object_new_object();
	x->by_t = json_object_new_object();
	x->by_t0 = json_object_new_object();
	for (size_t i = 0; i < jx_len(list); i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		const char *t = jx_str(o, tkey), *src = jx_str(o, "source");
		char *k;

		if (!t)
			continue;
		idx_put(x->by_t, t, o, i);
		if (!src) {
			idx_put(x->by_t0, t, o, i);
		} else if (asprintf(&k, "%s\x1f%s", t, src) >= 0) {
			idx_put(x->by_ts, k, o, i);
			free(k);
		}
	}
}

static void flowidx_free(struct flowidx *x)
{
	json_object_put(x->by_ts);
	json_object_put(x->by_t);
	json_object_put(x->by_t0);
}

static struct json_object *idx_get(struct json_object *m, const char *key, int64_t *i)
{
	struct json_object *v;

	if (!m || !json_object_object_get_ex(m, key, &v))
		return NULL;
	*i = json_object_get_int64(json_object_array_get_idx(v, 1));
	return json_object_array_get_idx(v, 0);
}

/* The same flow in a snapshot's list: the first with the tuple and, when
 * src is set, the same source or none. */
static struct json_object *find_flow(const struct flowidx *x, const char *tuple, const char *src)
{
	struct json_object *a, *b;
	int64_t ia = 0, ib = 0;
	char *k;

	if (!tuple)
		return NULL;
	if (!src)
		return idx_get(x->by_t, tuple, &ia);
	b = idx_get(x->by_t0, tuple, &ib);
	if (asprintf(&k, "%s\x1f%s", tuple, src) < 0)
		return b;
	a = idx_get(x->by_ts, k, &ia);
	free(k);
	return a && (!b || ia < ib) ? a : b;
}

static int in_list(const struct flowidx *x, const char *tuple)
{
	int64_t i;

	return tuple && idx_get(x->by_t, tuple, &i) != NULL;
}

/* "sent / received" messages of a flow in a snapshot, "not in the
 * snapshot" when the snapshot had no record of it */
static void msgs(FILE *f, struct json_object *o)
{
	if (!o) {
		fputs("not in the snapshot", f);
		return;
	}
	rp_put_val(f, jx_get(o, "tx_msgs"));
	fputs(" / ", f);
	rp_put_val(f, jx_get(o, "rx_msgs"));
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
	struct flowidx xl, xi, xo, xa;
	char b[32];

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
	flowidx_build(&xl, list, FK_FL_TUPLE);
	flowidx_build(&xi, incf, "tuple");
	flowidx_build(&xo, at_open, "tuple");
	flowidx_build(&xa, after, "tuple");
	/* siblings: flows of the snapshots that did not stall */
	for (size_t i = 0; i < jx_len(at_open); i++) {
		struct json_object *o = json_object_array_get_idx(at_open, i), *o2;
		const char *t = jx_str(o, "tuple");

		if (in_list(&xl, t) || in_list(&xi, t))
			continue;
		nsib++;
		sib_before += jx_double(o, "rx_msgs", 0);
		o2 = find_flow(&xa, t, jx_str(o, "source"));
		sib_after += jx_double(o2 ? o2 : o, "rx_msgs", 0);
	}
	/* per connection, as summary.txt counts them: both ends of one
	 * connection are one stalled flow (n records below) */
	{
		size_t nconn = jx_conn_count(list, FK_FL_TUPLE);

		fprintf(f, "<p>%zu connection%s stalled", nconn, nconn == 1 ? "" : "s");
		if (n > nconn)
			fprintf(f, " (%zu flow records: both ends watched)", n);
	}
	fputs(", ", f);
	rp_put_val(f, jx_get(fl, FK_F_PROGRESSING));
	fputs(" other connection(s) of the ports progressing.", f);
	if (nsib && isfinite(after_t))
		fprintf(f, " The %zu sibling flow records of the snapshots received %s messages between the "
			"start of the investigation and %+.1f ms.", nsib,
			rp_fnum(b, sizeof(b), sib_after - sib_before), after_t);
	fputs("</p>\n", f);
	rp_flows_chart(c, list, lanes, nsib, sib_after - sib_before, after_t);
	fputs("<table><tr><th>flow</th><th>source</th><th>began to wait (ms)</th><th>released (ms)"
	      "</th><th>held: unsent / unread / staged (bytes)</th><th>messages at the start "
	      "&rarr; after (sent / received)</th></tr>\n", f);
	for (size_t i = 0; i < n && i < RP_MAX_FLOWS; i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		const char *t = jx_str(o, FK_FL_TUPLE);
		struct json_object *a0 = find_flow(&xo, t, NULL), *a1 = find_flow(&xa, t, NULL);

		fputs("<tr><td class=\"mono\">", f);
		rp_esc(f, t ? t : "(no tuple)");
		fputs("</td><td>", f);
		rp_put_val(f, jx_get(o, FK_FL_SRC));
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
		rp_put_val(f, jx_get(o, FK_H_UNSENT));
		fputs(" / ", f);
		rp_put_val(f, jx_get(o, FK_H_UNREAD));
		fputs(" / ", f);
		rp_put_val(f, jx_get(o, FK_H_STAGED));
		fputs("</td><td class=\"n\">", f);
		msgs(f, a0);
		fputs(" &rarr; ", f);
		msgs(f, a1);
		fputs("</td></tr>\n", f);
	}
	if (n > RP_MAX_FLOWS)
		fprintf(f, "<tr><td colspan=\"6\">and %zu more (flows.json)</td></tr>\n", n - RP_MAX_FLOWS);
	fputs("</table>\n</section>\n", f);
	flowidx_free(&xl);
	flowidx_free(&xi);
	flowidx_free(&xo);
	flowidx_free(&xa);
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
	rp_esc(f, st ? st : "state not read");
	if (*state_word(st))
		fprintf(f, " (%s)", state_word(st));
	fputs("</td><td class=\"mono w\">", f);
	rp_esc(f, jx_str(rd, "wchan") ? jx_str(rd, "wchan") : "");
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
			rp_put_val(f, jx_get(pr, "pid"));
			fputs(" <span class=\"mono\">", f);
			rp_esc_n(f, jx_str(pr, "cmdline") ? jx_str(pr, "cmdline") : jx_text(pr, "exe"), 80);
			fputs("</span></td><td>", f);
			rp_put_val(f, jx_get(t, "tid"));
			fputs(" ", f);
			rp_esc(f, jx_str(t, "comm") ? jx_str(t, "comm") : "");
			fputs("</td>", f);
			reading(f, jx_obj(t, "first"));
			reading(f, jx_obj(t, "second"));
			fputs("<td class=\"n\">", f);
			rp_put_val(f, jx_get(t, "voluntary_switches_per_s"));
			fputs("</td><td class=\"n\">", f);
			rp_put_val(f, jx_get(t, "nonvoluntary_switches_per_s"));
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n</section>\n", f);
}

/* ---- why, and what it is not ---- */

/* Why this verdict: the rule that matched, in the rule's own sentence
 * (at the top); its terms as expressions are classify --explain's. */
static void sec_is(struct ctx *c)
{
	FILE *f = c->f;
	struct json_object *cls = jx_obj(c->r->man, "verdict");

	if (!jx_str(cls, "rule"))
		return;
	fputs("<section id=\"is\"><h2>Why</h2>\n<p>Rule ", f);
	rp_esc_n(f, jx_str(cls, "rule"), 64);
	fputs(" matched: ", f);
	rp_esc_n(f, jx_str(cls, "explanation") ? jx_str(cls, "explanation") :
		 "(the rule gave no explanation)", 1000);
	fputs(". <code>nicstallctl classify BUNDLE --explain</code> lists its terms and the "
	      "values they read.</p>\n</section>\n", f);
}

/* One line per verdict, in the rules' sentences (bi_not_lines, as in
 * summary.txt). */
static void sec_not(struct ctx *c)
{
	static const char *const head[] = {
		[BI_NOT_RULED_OUT] = "Not ", [BI_NOT_UNDECIDED] = "Not decided: ",
		[BI_NOT_ALSO_HELD] = "Also held: ",
	};
	FILE *f = c->f;
	struct json_object *cls = jx_obj(c->r->man, "verdict");
	struct bi_not l[RP_MAX_NOT];
	size_t n;

	fputs("<section id=\"not\"><h2>What it is not</h2>\n", f);
	if (!jx_len(jx_arr(cls, "not"))) {
		fputs("<p>No other verdict was evaluated (the list of ruled-out causes is missing)."
		      "</p></section>\n", f);
		return;
	}
	n = bi_not_lines(cls, l, RP_MAX_NOT);
	fputs("<ul id=\"not-list\">\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<li><strong>%s", head[l[i].kind]);
		rp_esc_n(f, l[i].verdict, 64);
		fputs(l[i].kind == BI_NOT_RULED_OUT ? ":</strong> " : ".</strong> ", f);
		rp_esc_n(f, l[i].text, 4000);
		fputs(".</li>\n", f);
	}
	{
		char *nb = bi_neighbours(c->r->man);

		if (nb) {
			fputs(strstr(nb, " FAILED on ") || strstr(nb, " INCOMPLETE on ") ?
			      "<li><strong>Neighbour state:</strong> an entry the kernel could not "
			      "resolve at the stall: " : "<li><strong>Not neighbour state:</strong> the "
			      "ports' neighbour entries at the stall: ", f);
			rp_esc_n(f, nb, 4000);
			fputs(".</li>\n", f);
		}
		free(nb);
	}
	fputs("</ul>\n</section>\n", f);
	bi_not_free(l, n);
}

/* ---- counters ---- */

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
		rp_esc(f, p->name);
		fprintf(f, ": %zu of %zu counters moved</h3>\n", moved, p->nc);
		if (moved) {
			fputs("<table class=\"moved\"><tr><th>counter</th><th>delta, recorder window</th>"
			      "<th>delta, observation window</th><th>along the recorder window</th></tr>\n", f);
			for (size_t i = 0; i < p->nc && plotted < RP_MAX_SPARK; i++) {
				const struct ctr *k = &p->c[i];

				if (!k->moved)
					continue;
				fputs("<tr><td class=\"mono\">", f);
				rp_esc(f, k->name);
				fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
					rp_fplain(b1, sizeof(b1), k->rec_total), rp_fplain(b2, sizeof(b2), k->win_total));
				rp_counter_spark(f, k);
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
					rp_esc(f, p->c[i].name);
					fprintf(f, "</code> +%s", rp_fplain(b1, sizeof(b1), p->c[i].rec_total +
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
				rp_esc(f, p->c[i].name);
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
		{ MANIFEST_NAME, "the manifest: verdict, facts, steps, release" },
		{ SUMS_NAME, "checksums of every file" },
		{ "summary.txt", "the one-page summary" },
		{ "record.json", "the whole investigation record" },
		{ "facts.json", "the facts the rules classified" },
		{ "window.json", "the fast observation window" },
		{ "flows.json", "flows at the start and of the incident" },
		{ "threads.json", "engine threads" },
		{ "pings.json", "kernel pings" },
		{ "pings_mtu.json", "don't-fragment pings at each port's MTU" },
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
		if (bi_valid_relpath(e->name)) {
			fputs("<a href=\"", f);
			rp_url(f, pre, e->name);
			fputs("\">", f);
			rp_esc(f, e->name);
			fputs("</a>", f);
		} else {
			fputs("<code>", f);
			rp_esc(f, e->name);
			fputs("</code> (an unsafe name: not linked)", f);
		}
		if (*file_what(e->name))
			fprintf(f, " &ndash; %s", file_what(e->name));
		if (e->bytes >= 0)
			fprintf(f, ", %s bytes", rp_fnum(b, sizeof(b), (double)e->bytes));
		if (e->truncated)
			fputs(", cut to the copy limit", f);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n</section>\n", f);
}

void rp_sections(struct ctx *c)
{
	sec_timeline(c);
	sec_gap(c);
	sec_flows(c);
	sec_threads(c);
	sec_is(c);
	sec_not(c);
	sec_counters(c);
	sec_evidence(c);
}
