/* bundle summary: the one-page human summary of a manifest (summary.txt;
 * nicstall-bundle(5) "FILES"). It reads a manifest that may be hostile or
 * incomplete: every part that is missing is said to be missing, strings are
 * cut, lists are bounded.
 *
 * Figures: counts print as integers (a double that holds an integer too),
 * durations in milliseconds to 0.1 ms, other numbers as the rules'
 * templates print them or with at most four significant digits; a value that is not a
 * finite number (NaN, infinity) is never printed as a figure.
 *
 * Keys: the manifest's are MK_* (bundle.h), the facts' FK_* (rules/facts.h).
 * The verdict object's keys are rules/rules.h's RK_* names. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

/* The signal of the port/vport gap (rules/00-signals.rules). */
#define GAP_SIGNAL "gap"


static int time_of(struct json_object *m, char *buf, size_t len)
{
	static const char *keys[] = { MK_OPENED_REAL_NS, MK_REAL_NS, MK_TIME_NS };
	struct json_object *t = jx_get(m, MK_TRIGGER);
	const char *s;

	for (int pass = 0; pass < 2; pass++) {
		struct json_object *o = pass ? t : m;

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			struct json_object *v = jx_get(o, keys[i]);
			time_t sec;
			struct tm tm;

			if (!v || !json_object_is_type(v, json_type_int))
				continue;
			sec = (time_t)(json_object_get_uint64(v) / 1000000000ull);
			if (gmtime_r(&sec, &tm) && strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
				return 1;
		}
		if ((s = jx_str(o, MK_TIME))) {
			snprintf(buf, len, "%.60s", s);
			return 1;
		}
	}
	snprintf(buf, len, "time not recorded");
	return 0;
}

static void sum_title(FILE *f, struct json_object *m, struct json_object *cls,
		      struct json_object *facts)
{
	const char *verdict = jx_str(cls, RK_VERDICT), *port = jx_str(m, MK_PORT);
	const char *host = jx_str(m, MK_HOST), *kernel = jx_str(m, MK_KERNEL);
	struct json_object *trig = jx_get(m, MK_TRIGGER), *inc = jx_get(m, MK_INCIDENT_ID);
	char when[64];

	if (!verdict)
		verdict = jx_str(m, MK_VERDICT);
	if (!port)
		port = jx_str(facts, FK_PORT);
	time_of(m, when, sizeof(when));
	fprintf(f, "# nicstalld: %s on port %s, %s\n\n", verdict ? verdict : "no verdict",
		port ? port : "(port not recorded)", when);
	fprintf(f, "Host %s, kernel %s. Trigger: ", host ? host : "not recorded",
		kernel ? kernel : "not recorded");
	if (!trig)
		fputs("not recorded", f);
	else if (jx_str(trig, MK_T_KIND))
		fputs(jx_str(trig, MK_T_KIND), f);
	else
		bi_put_val(f, trig);
	if (inc && json_object_is_type(inc, json_type_int) && json_object_get_int64(inc) > 0)
		fprintf(f, " (incident %" PRIu64 ")", jx_u64(m, MK_INCIDENT_ID));
	fputs(".\n", f);
}


/* The neighbour entries of the ports at the stall ("10.219.0.1 REACHABLE
 * on server"): seed 000's "not neighbour state". A new string, NULL when
 * the manifest has none. */
char *bi_neighbours(struct json_object *m)
{
	struct json_object *ports = jx_obj(m, MK_PORTS);
	char *buf = NULL;
	size_t len = 0;
	int n = 0;
	FILE *f;

	if (!ports || !(f = open_memstream(&buf, &len)))
		return NULL;
	json_object_object_foreach(ports, name, p) {
		struct json_object *nb = jx_arr(p, MK_P_NEIGHBOURS);

		for (size_t i = 0; i < jx_len(nb) && n < 16; i++) {
			struct json_object *e = json_object_array_get_idx(nb, i);

			fprintf(f, "%s%.64s %.24s on %.64s", n++ ? ", " : "",
				jx_str(e, "addr") ? jx_str(e, "addr") : "(address not recorded)",
				jx_str(e, "state") ? jx_str(e, "state") : "(state not recorded)", name);
		}
	}
	if (fclose(f) != 0 || !n) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Not the neighbour state: the ports' entries, resolved or not. */
static void sum_neighbours(FILE *f, struct json_object *m)
{
	char *nb = bi_neighbours(m);

	if (nb && (strstr(nb, " FAILED on ") || strstr(nb, " INCOMPLETE on ")))
		fprintf(f, "- **Neighbour state:** an entry the kernel could not resolve at the "
			"stall: %s.\n", nb);
	else if (nb)
		fprintf(f, "- **Not neighbour state:** the ports' neighbour entries at the stall: "
			"%s.\n", nb);
	free(nb);
}

/* The gap signal over one period's counters (0 when the period is there
 * but the signal is unknown in it: a counter missing counts 0). */
static int period_gap(const struct rules *r, const char *profile, struct json_object *period,
		      double *out)
{
	return rules_signal(r, profile, GAP_SIGNAL, jx_obj(period, FK_COUNTERS), out) == 0;
}

/* "Gap: 6 frames counted at the port and not at the vport in 1.6 s, 2
 * of them at the healthy rate (...)." The frames are counted over the
 * stall and the observation window; the healthy share is the baseline's
 * gap rate over the same span, as the port-drop rule reckons it
 * (rules/50-verdicts.rules), printed as whole frames. Fewer than 2 is
 * what the rules call read skew: not evidence of a loss. */
static void sum_gap(FILE *f, const struct rules *r, const char *profile, struct json_object *fp)
{
	struct json_object *stall = jx_obj(fp, FK_PER_STALL), *win = jx_obj(fp, FK_PER_WINDOW);
	struct json_object *base = jx_obj(fp, FK_PER_BASELINE);
	double gap, wgap = 0, bgap, span, bspan;

	if (!r || !period_gap(r, profile, stall, &gap))
		return;
	if (win && period_gap(r, profile, win, &wgap))
		gap += wgap;
	gap = round(gap);
	span = jx_double(stall, FK_SPAN_S, 0) + (win ? jx_double(win, FK_SPAN_S, 0) : 0);
	if (gap == 0) {
		fputs("  Gap: none: the port and the vport counted the same frames.\n", f);
		return;
	}
	if (gap < 2) {
		/* the rules' read skew: one firmware query a moment after the other */
		fprintf(f, "  Gap: none beyond read skew (%.0f frame%s between the port's and the "
			"vport's counts, which the rules take for the time between the two "
			"counter reads).\n", fabs(gap), fabs(gap) == 1 ? "" : "s");
		return;
	}
	fputs("  Gap: ", f);
	bi_put_fig(f, gap);
	fputs(" frames counted at the port and not at the vport", f);
	if (span > 0) {
		fputs(" in ", f);
		bi_put_fig(f, span);
		fputs(" s", f);
	}
	bspan = jx_double(base, FK_SPAN_S, 0);
	if (base && bspan > 0 && span > 0 && period_gap(r, profile, base, &bgap)) {
		fputs(", ", f);
		bi_put_fig(f, round(bgap / bspan * span));
		fputs(" of them at the healthy rate (", f);
		bi_put_fig(f, bgap / bspan);
		fputs(" a second, learned over the ", f);
		bi_put_fig(f, bspan);
		fputs(" s before the stall).\n", f);
	} else {
		fputs("; no healthy rate was learned.\n", f);
	}
}

/* The longest wait of the stalled flows at the snapshot, ms (NAN: none). */
static double longest_wait(struct json_object *facts)
{
	struct json_object *list = jx_arr(jx_obj(facts, FK_FLOWS), FK_F_LIST);
	double w = NAN, x;

	for (size_t i = 0; i < jx_len(list); i++)
		if (jx_num(jx_get(json_object_array_get_idx(list, i), FK_FL_WAITED_MS), &x) &&
		    !(x <= w))
			w = x;
	return w;
}

static void sum_port(FILE *f, const struct rules *r, const char *name, struct json_object *mp,
		     struct json_object *fp, double waited)
{
	struct json_object *stall = jx_get(fp, FK_PER_STALL), *cnt = jx_get(stall, FK_COUNTERS);
	const char *profile = jx_str(fp, FK_P_PROFILE);
	int moved = 0, flat = 0;
	double span;

	if (!profile)
		profile = jx_str(mp, MK_P_PROFILE);
	fprintf(f, "- Port %.64s:", name);
	bi_put_field(f, " interface", mp, MK_P_INTERFACE, fp, NULL);
	bi_put_field(f, ", netns", mp, MK_P_NETNS, fp, NULL);
	bi_put_field(f, ", driver", mp, MK_P_DRIVER, fp, FK_P_DRIVER);
	bi_put_field(f, ", firmware", mp, MK_P_FIRMWARE, fp, FK_P_FIRMWARE);
	bi_put_field(f, ", PSID", mp, MK_P_PSID, fp, FK_P_PSID);
	bi_put_field(f, ", link up", NULL, NULL, fp, FK_P_LINK_UP);
	fputs(".\n", f);
	if (!stall) {
		fputs("  Counters at the stall: not recorded.\n", f);
		return;
	}
	/* the period: from the last recorder sample before the incident
	 * opened to the investigation's first snapshot; it is not the stall,
	 * which began when the first flow began to wait */
	fputs("  Counters from the last sample before the incident to the first snapshot", f);
	if (jx_num(jx_get(stall, FK_SPAN_S), &span)) {
		fputs(" (", f);
		bi_put_fig(f, span);
		fputs(" s", f);
		if (isfinite(waited)) {
			fprintf(f, "; the first stalled flow had waited %.1f ms at the snapshot",
				waited);
		}
		fputs(")", f);
	}
	if (!cnt || !json_object_is_type(cnt, json_type_object)) {
		fputs(": not recorded.\n", f);
		return;
	}
	json_object_object_foreach(cnt, k, v) {
		double d;

		if (!jx_num(v, &d))
			continue;
		if (d == 0) {
			flat++;
			continue;
		}
		if (moved < 16) {
			fprintf(f, "%s%.64s %s", moved ? ", " : ": ", k, d > 0 ? "+" : "");
			bi_put_val(f, v);
		}
		moved++;
	}
	if (moved > 16)
		fprintf(f, ", and %d more", moved - 16);
	fprintf(f, "%s%d counters did not move.\n", moved ? "; " : ": ", flat);
	sum_gap(f, r, profile ? profile : "generic", fp);
}

static void sum_ports(FILE *f, const struct rules *r, struct json_object *m,
		      struct json_object *facts)
{
	struct json_object *mports = jx_obj(m, MK_PORTS), *fports = jx_obj(facts, FK_PORTS);
	int nports = 0;

	if (mports) {
		json_object_object_foreach(mports, k, v) {
			if (nports++ < 16)
				sum_port(f, r, k, v, jx_get(fports, k), longest_wait(facts));
		}
	}
	if (fports) {
		json_object_object_foreach(fports, k, v) {
			if (jx_get(mports, k))
				continue;
			if (nports++ < 16)
				sum_port(f, r, k, NULL, v, longest_wait(facts));
		}
	}
	if (!nports)
		fputs("- Ports: not recorded.\n", f);
}

/* Do the stalled flows all read from kernel sockets (no engine's)? */
static int all_kernel(struct json_object *list)
{
	for (size_t i = 0; i < jx_len(list); i++) {
		const char *src = jx_str(json_object_array_get_idx(list, i), FK_FL_SRC);

		if (!src || (strcmp(src, "sock") && strcmp(src, "bpf")))
			return 0;
	}
	return jx_len(list) > 0;
}

/* The flows, one line per connection: a kernel socket at each end of one
 * connection is one stalled flow seen twice, not two (the detector counts
 * its siblings per connection too: daemon/detect/stall_group.c stall_count_siblings). */
static void sum_flows(FILE *f, struct json_object *facts)
{
	struct json_object *flows = jx_obj(facts, FK_FLOWS), *held, *list;
	char keys[8][200];
	size_t n, nconn = 0, more = 0;
	int kern;

	if (!flows) {
		fputs("- Flows: not recorded.\n", f);
		return;
	}
	held = jx_obj(flows, FK_F_HELD);
	list = jx_arr(flows, FK_F_LIST);
	n = jx_len(list);
	kern = all_kernel(list);
	for (size_t i = 0; i < n; i++) {
		char k[200];
		size_t c;

		util_conn_key(jx_str(json_object_array_get_idx(list, i), FK_FL_TUPLE), k, sizeof(k));
		for (c = 0; c < nconn && strcmp(keys[c], k); c++)
			;
		if (c < nconn)
			continue;
		if (nconn < 8)
			util_strlcpy(keys[nconn++], k, sizeof(keys[0]));
		else
			more++;
	}
	fputs("- Flows: ", f);
	if (list) {
		fprintf(f, "%zu connection%s stalled", nconn + more, nconn + more == 1 ? "" : "s");
		if (n > nconn + more)
			fprintf(f, " (%zu flow records: both ends watched)", n);
	} else {
		bi_put_val(f, jx_get(flows, FK_F_STALLED));
		fputs(" stalled", f);
	}
	fputs(", ", f);
	bi_put_val(f, jx_get(flows, FK_F_PROGRESSING));
	fputs(" other connection(s) of the ports progressing. ", f);
	if (!held)
		fputs("What the flows held: not recorded.\n", f);
	else if (kern)
		bi_put_line(f, held, (const char *const[]){ "Bytes in their kernel sockets: unsent ",
			 FK_H_UNSENT, ", unread ", FK_H_UNREAD, ".\n", NULL });
	else
		bi_put_line(f, held, (const char *const[]){ "Held by the engines and sockets: unsent ",
			 FK_H_UNSENT, ", unread ", FK_H_UNREAD, ", staged ", FK_H_STAGED,
			 " bytes.\n", NULL });
	for (size_t c = 0; c < nconn; c++) {
		double waited = NAN, x;
		uint64_t unsent = 0, unread = 0, staged = 0;
		const char *src = NULL;
		int ends = 0;

		for (size_t i = 0; i < n; i++) {
			struct json_object *o = json_object_array_get_idx(list, i);
			char k[200];

			util_conn_key(jx_str(o, FK_FL_TUPLE), k, sizeof(k));
			if (strcmp(k, keys[c]))
				continue;
			ends++;
			src = jx_str(o, FK_FL_SRC);
			if (jx_num(jx_get(o, FK_FL_WAITED_MS), &x) && !(x <= waited))
				waited = x;
			unsent += jx_u64(o, FK_H_UNSENT);
			unread += jx_u64(o, FK_H_UNREAD);
			staged += jx_u64(o, FK_H_STAGED);
		}
		fprintf(f, "  - %.200s (%s%s): waited ", keys[c][0] ? keys[c] : "tuple not recorded",
			src && (!strcmp(src, "sock") || !strcmp(src, "bpf")) ? "kernel socket" :
			src ? src : "source not recorded", ends > 1 ? "s at both ends" : "");
		if (isfinite(waited))
			fprintf(f, "%.1f ms", waited);
		else
			fputs("for a time not recorded", f);
		fprintf(f, ", unsent %" PRIu64 ", unread %" PRIu64, unsent, unread);
		if (!kern)
			fprintf(f, ", staged %" PRIu64, staged);
		fputs("\n", f);
	}
	if (more)
		fprintf(f, "  - and %zu more (flows.json)\n", more);
}

static void sum_threads(FILE *f, struct json_object *facts)
{
	struct json_object *threads = jx_arr(facts, FK_THREADS);
	size_t n = jx_len(threads);

	if (!threads) {
		fputs("- Threads of the flows' processes: not recorded.\n", f);
		return;
	}
	fprintf(f, "- Threads of the flows' processes: %zu recorded.\n", n);
	for (size_t i = 0; i < n && i < 6; i++) {
		struct json_object *o = json_object_array_get_idx(threads, i);

		bi_put_line(f, o, (const char *const[]){ "  - tid ", FK_T_TID, " (", FK_T_COMM,
			 "): state ", FK_T_STATE, ", wchan ", FK_T_WCHAN,
			 ", voluntary switches/s ", FK_T_VCSW_RATE, "\n", NULL });
	}
}

static void sum_pings(FILE *f, struct json_object *facts)
{
	struct json_object *pings = jx_arr(facts, FK_PINGS);
	size_t n = jx_len(pings);

	if (!n) {
		fputs("- Kernel pings: none recorded.\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 8; i++) {
		struct json_object *o = json_object_array_get_idx(pings, i);

		bi_put_line(f, o, (const char *const[]){ "- Kernel ping ", FK_PG_FROM, " -> ",
			 FK_PG_TO, ": ", FK_PG_RECEIVED, " of ", FK_PG_SENT,
			 " echo requests answered.\n", NULL });
	}
	/* the don't-fragment echo at the MTU: the first that failed, else
	 * the first (facts ping_mtu) */
	if (jx_obj(facts, FK_PING_MTU)) {
		struct json_object *o = jx_obj(facts, FK_PING_MTU);

		bi_put_line(f, o, (const char *const[]){ "- Don't-fragment ping at the port's MTU ",
			 FK_PG_FROM, " -> ", FK_PG_TO, ", ", FK_PM_SIZE, " bytes: ", FK_PG_RECEIVED,
			 " of ", FK_PG_SENT, " echo requests answered", NULL });
		if (jx_str(o, FK_PM_ERROR))
			bi_put_line(f, o, (const char *const[]){ " (", FK_PM_ERROR, ")", NULL });
		fputs(".\n", f);
	}
}

static void sum_captures(FILE *f, struct json_object *facts)
{
	struct json_object *caps = jx_arr(facts, FK_CAPTURES);
	size_t n = jx_len(caps);

	if (!n) {
		fputs("- Captures: none recorded.\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 8; i++) {
		struct json_object *o = json_object_array_get_idx(caps, i);
		struct json_object *pr = jx_get(o, FK_C_PROMISC), *tr = jx_get(o, FK_C_TRANSITION);

		bi_put_line(f, o, (const char *const[]){ "- Capture on ", FK_C_PORT, ": ",
			 FK_C_FRAMES, NULL });
		fputs(jx_u64(o, FK_C_FRAMES) == 1 ? " frame, " : " frames, ", f);
		if (!bi_recorded(pr))
			fputs("promiscuous mode not recorded", f);
		else
			fputs(json_object_get_boolean(pr) ? "promiscuous" : "not promiscuous", f);
		if (!bi_recorded(tr))
			fputs(", mode change not recorded", f);
		else if (json_object_is_type(tr, json_type_boolean))
			fputs(json_object_get_boolean(tr) ? ", with a promiscuous transition "
			      "(the driver reprogrammed the receive filters)" :
			      ", without a mode change", f);
		else {
			fputs(", transition ", f);
			bi_put_val(f, tr);
		}
		fputs(".\n", f);
	}
}

/* The manifest's release (the record's), else the facts': same shape. */
/* Why the release came that long after a port action: kernel TCP flows
 * move again only when their sender retransmits (tcp_retransmit_timer()
 * doubles the RTO each time), so the delay after a filter action is the
 * flows' retransmission backoff, not the action's own time. One sentence
 * for summary.txt and report.html. */
const char *bundle_release_why(struct json_object *m)
{
	struct json_object *rel = jx_get(m, MK_RELEASE), *facts = jx_obj(m, MK_FACTS);
	const char *a = jx_str(rel, FK_R_ACTION);

	if (!a || !strcmp(a, "self") || !strcmp(a, "none") || !strcmp(a, "ambiguous"))
		return NULL;
	if (!all_kernel(jx_arr(jx_obj(facts, FK_FLOWS), FK_F_LIST)))
		return NULL;
	return "the flows are kernel TCP, which moves again only at its next retransmission: "
	       "the delay is the flows' retransmission backoff, not the action's own time";
}

static void sum_release(FILE *f, struct json_object *m, struct json_object *facts)
{
	struct json_object *rel = jx_get(m, MK_RELEASE);
	double x;

	if (!rel)
		rel = jx_get(facts, FK_RELEASE);
	if (!rel || !json_object_is_type(rel, json_type_object)) {
		fputs("- Release: not recorded.\n", f);
	} else if (json_object_get_boolean(jx_get(rel, FK_R_RELEASED))) {
		const char *amb = jx_str(rel, FK_R_AMBIGUOUS), *port = jx_str(rel, FK_R_PORT);
		double y;

		if (amb) {
			fprintf(f, "- Released, %s", amb);
			if (jx_num(jx_get(rel, FK_R_AFTER_MS), &x) &&
			    jx_num(jx_get(rel, FK_R_AFTER_SECOND_MS), &y))
				fprintf(f, " (%.1f ms after the first, %.1f ms after the second)", x, y);
			fputs(": the release came while both could have caused it.\n", f);
			return;
		}
		if (!strcmp(jx_text(rel, FK_R_ACTION), "self")) {
			/* no action is credited; the verdict rests on the evidence */
			fputs("- Released by itself, no action credited", f);
			if (jx_str(rel, FK_R_ORDER))
				fprintf(f, ": %s", jx_str(rel, FK_R_ORDER));
			fputs(".\n", f);
			if (jx_str(rel, FK_R_NOT_CREDITED))
				fprintf(f, "- The release is %s.\n", jx_str(rel, FK_R_NOT_CREDITED));
			fputs("- The verdict is the evidence's, not the release's.\n", f);
			return;
		}
		fputs("- Released by ", f);
		bi_put_val(f, jx_get(rel, FK_R_ACTION));
		if (port)
			fprintf(f, " on %s", port);
		if (jx_num(jx_get(rel, FK_R_AFTER_MS), &x))
			fprintf(f, ", %.1f ms after the action", x);
		else
			fputs(", time not recorded", f);
		if (bundle_release_why(m))
			fprintf(f, " (%s)", bundle_release_why(m));
		fputs(".\n", f);
		if (port && jx_obj(rel, FK_R_VPORT_AFTER)) {
			struct json_object *va = jx_obj(rel, FK_R_VPORT_AFTER);

			fprintf(f, "- The receive-filter state of port %s held the flows: after the "
				"action its frames reached the vport again (port +%.0f, vport +%.0f in "
				"%.0f ms).\n", port, jx_double(va, "port_frames", 0),
				jx_double(va, "vport_frames", 0), jx_double(va, "span_ms", 0));
		} else if (port) {
			fprintf(f, "- The receive-filter state of port %s held the flows (its counters "
				"after the action cannot show its frames reaching the vport again).\n",
				port);
		}
	} else {
		fputs("- Not released (action: ", f);
		bi_put_val(f, jx_get(rel, FK_R_ACTION));
		fputs(").\n", f);
	}
}

/* The journal, and the kernel's own lines the investigation kept (the
 * reprogram's promiscuous-mode lines, the device's driver lines since the
 * port was opened): the manifest's "journal" and "kernel_log". */
static void sum_journal(FILE *f, struct json_object *m)
{
	struct json_object *journal = jx_get(m, MK_JOURNAL), *lines, *avail;
	struct json_object *klog = jx_arr(m, MK_KERNEL_LOG);

	if (!bi_recorded(journal)) {
		fputs("- Journal: not read for this bundle.\n", f);
	} else if ((avail = jx_get(journal, MK_J_AVAILABLE)) && !json_object_get_boolean(avail)) {
		fputs("- Journal: unavailable", f);
		if (jx_str(journal, "reason"))
			fprintf(f, ": %.200s", jx_str(journal, "reason"));
		fputs(".\n", f);
	} else {
		lines = jx_arr(journal, MK_J_ENTRIES);
		if (!lines)
			lines = jx_arr(journal, MK_J_LINES);
		if (lines)
			fprintf(f, "- Journal: %zu lines around the stall (journal.json).\n",
				jx_len(lines));
		else if (jx_get(journal, "count"))
			fprintf(f, "- Journal: %" PRIu64 " lines around the stall (journal.json).\n",
				jx_u64(journal, "count"));
		else
			fputs("- Journal: excerpt present (journal.json).\n", f);
	}
	for (size_t i = 0; i < jx_len(klog) && i < 16; i++) {
		struct json_object *e = json_object_array_get_idx(klog, i);
		struct json_object *ls = jx_arr(e, MK_KL_LINES);
		size_t n = jx_len(ls);

		fprintf(f, "- Kernel log%s%.64s, %.120s: ", jx_str(e, "port") ? " of port " : "",
			jx_str(e, "port") ? jx_str(e, "port") : "", jx_str(e, MK_KL_WHAT) ?
			jx_str(e, MK_KL_WHAT) : "lines");
		if (jx_str(e, "error")) {
			fprintf(f, "not read (%.200s).\n", jx_str(e, "error"));
			continue;
		}
		if (!n)
			fputs("none in the kernel's ring", f);
		for (size_t k = 0; k < n && k < 4; k++)
			fprintf(f, "%s\"%.240s\"", k ? ", " : "",
				json_object_get_string(json_object_array_get_idx(ls, k)));
		if (n > 4 || jx_u64(e, "more"))
			fprintf(f, " and %" PRIu64 " more (manifest.json kernel_log)",
				(uint64_t)(n > 4 ? n - 4 : 0) + jx_u64(e, "more"));
		fputs(".\n", f);
	}
}

static void sum_evidence(FILE *f, const struct rules *r, struct json_object *m,
			 struct json_object *facts)
{
	fputs("\n## Evidence\n\n", f);
	if (!facts)
		fputs("- Facts: not recorded (the bundle holds no classified facts).\n", f);
	sum_ports(f, r, m, facts);
	sum_flows(f, facts);
	bi_sum_engines(f, m);
	sum_threads(f, facts);
	sum_pings(f, facts);
	sum_captures(f, facts);
	sum_release(f, m, facts);
	sum_journal(f, m);
}

static void sum_timeline(FILE *f, struct json_object *m)
{
	struct json_object *steps = jx_arr(m, MK_STEPS);
	size_t n = jx_len(steps);

	fputs("\n## Timeline\n\n", f);
	if (!n) {
		fputs("No step timeline recorded.\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		struct json_object *s = json_object_array_get_idx(steps, i);
		const char *note = jx_str(s, MK_S_NOTE), *port = jx_str(s, MK_S_PORT);
		double a, b;

		if (jx_num(jx_get(s, MK_S_START_MS), &a))
			fprintf(f, "- %+9.1f ms", a);
		else
			fputs("-  (start unknown)", f);
		if (jx_num(jx_get(s, MK_S_END_MS), &b))
			fprintf(f, " .. %+9.1f ms", b);
		else
			fputs(" .. (end unknown)", f);
		fputs("  ", f);
		bi_put_val(f, jx_get(s, MK_S_STEP));
		if (port)
			fprintf(f, " (%.64s)", port);
		fputs(": ", f);
		bi_put_val(f, jx_get(s, MK_S_OUTCOME));
		if (note)
			fprintf(f, " (%.200s)", note);
		fputc('\n', f);
	}
	if (n > 64)
		fprintf(f, "- and %zu more steps (manifest.json)\n", n - 64);
}

char *bundle_summary_rules(struct json_object *manifest, const struct rules *rules)
{
	struct json_object *cls = jx_obj(manifest, MK_VERDICT), *facts = jx_obj(manifest, MK_FACTS);
	const char *action;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	sum_title(f, manifest, cls, facts);
	bi_sum_is(f, cls);
	bi_sum_not(f, cls);
	sum_neighbours(f, manifest);
	sum_evidence(f, rules, manifest, facts);
	if (jx_obj(manifest, MK_DEVLINK))
		bi_sum_devlink(f, manifest);
	bi_sum_peers(f, manifest);
	sum_timeline(f, manifest);
	fputs("\n## Recommended action\n\n", f);
	action = jx_str(cls, RK_ACTION);
	fprintf(f, "%s\n", action ? action : "None recorded: the rule gave no action.");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *bundle_summary(struct json_object *manifest)
{
	return bundle_summary_rules(manifest, NULL);
}
