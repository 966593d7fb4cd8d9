/* bundle summary: the one-page human summary of a manifest (summary.txt;
 * nicstall-bundle(5) "FILES"). It reads a manifest that may be hostile or
 * incomplete: every part that is missing is said to be missing, strings are
 * cut, lists are bounded.
 *
 * Figures: counts print as integers (a double that holds an integer too),
 * durations with a fixed precision (milliseconds to 0.1 ms, seconds to
 * 1 ms), other numbers with at most three decimals; a value that is not a
 * finite number (NaN, infinity) is never printed as a figure.
 *
 * Keys: the manifest's are MK_* (bundle.h), the facts' FK_* (rules/facts.h).
 * The verdict object's keys are rules/rules.h's RK_* names. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"
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

#define put_val bi_put_val
#define put_line bi_put_line

/* A number for people: an integer as an integer, else at most 3 decimals
 * (trailing zeros dropped), never an exponent for a plain figure. */
static void put_num(FILE *f, double d)
{
	char buf[64];
	size_t n;

	if (isnan(d)) {
		fputs("not a number", f);
		return;
	}
	if (isinf(d)) {
		fputs(d > 0 ? "infinite" : "-infinite", f);
		return;
	}
	if (d == floor(d) && fabs(d) < 1e18) {
		fprintf(f, "%.0f", d);
		return;
	}
	if (fabs(d) >= 1e18 || fabs(d) < 0.0005) {
		fprintf(f, "%.3g", d);
		return;
	}
	snprintf(buf, sizeof(buf), "%.3f", d);
	for (n = strlen(buf); n > 1 && buf[n - 1] == '0'; n--)
		buf[n - 1] = '\0';
	if (n > 1 && buf[n - 1] == '.')
		buf[n - 1] = '\0';
	fputs(buf, f);
}

/* A value for humans: numbers plainly, strings bounded, null as unknown. */
void bi_put_val(FILE *f, struct json_object *v)
{
	const char *s;

	if (!v) {
		fputs("unknown", f);
		return;
	}
	switch (json_object_get_type(v)) {
	case json_type_null:
		fputs("unknown", f);
		return;
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", f);
		return;
	case json_type_int:
		if (json_object_get_int64(v) == INT64_MAX)
			fprintf(f, "%" PRIu64, json_object_get_uint64(v));
		else
			fprintf(f, "%" PRId64, json_object_get_int64(v));
		return;
	case json_type_double:
		put_num(f, json_object_get_double(v));
		return;
	case json_type_string:
		s = json_object_get_string(v);
		fprintf(f, "%.200s%s", s, strlen(s) > 200 ? "..." : "");
		return;
	default:
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		fprintf(f, "%.200s%s", s ? s : "?", s && strlen(s) > 200 ? "..." : "");
		return;
	}
}

/* A duration in milliseconds, fixed precision; "unknown" when it is not a
 * finite number (a string is shown as it is). */
static void put_ms(FILE *f, struct json_object *v)
{
	double d;

	if (jx_num(v, &d))
		fprintf(f, "%.1f ms", d);
	else if (json_object_is_type(v, json_type_string))
		put_val(f, v);
	else
		fputs("unknown", f);
}

/* Labels and keys in turn ({label, key, ..., label, NULL}): each label,
 * then o[key] for people. */
void bi_put_line(FILE *f, struct json_object *o, const char *const *lk)
{
	for (; lk[0]; lk += 2) {
		fputs(lk[0], f);
		if (!lk[1])
			break;
		put_val(f, jx_get(o, lk[1]));
	}
}

static int recorded(struct json_object *v)
{
	return v && !json_object_is_type(v, json_type_null);
}

/* "label value": a[akey] (the manifest), else b[bkey] (the facts). */
static void put_field(FILE *f, const char *label, struct json_object *a, const char *akey,
		      struct json_object *b, const char *bkey)
{
	struct json_object *v = akey ? jx_get(a, akey) : NULL;

	if (!recorded(v) && bkey)
		v = jx_get(b, bkey);
	fprintf(f, "%s ", label);
	if (!recorded(v))
		fputs("not recorded", f);
	else
		put_val(f, v);
}

static void put_values(FILE *f, struct json_object *vals, int max)
{
	int n = 0;

	if (!vals || !json_object_is_type(vals, json_type_object) || !json_object_object_length(vals))
		return;
	fputs(": ", f);
	json_object_object_foreach(vals, k, v) {
		if (n == max) {
			fputs(", ...", f);
			break;
		}
		fprintf(f, "%s%.80s = ", n++ ? ", " : "", k);
		put_val(f, v);
	}
}

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
		put_val(f, trig);
	if (inc && json_object_is_type(inc, json_type_int) && json_object_get_int64(inc) > 0)
		fprintf(f, " (incident %" PRIu64 ")", jx_u64(m, MK_INCIDENT_ID));
	fputs(".\n", f);
}

static void sum_is(FILE *f, struct json_object *cls)
{
	struct json_object *terms = jx_arr(cls, RK_TERMS);
	const char *ex = jx_str(cls, RK_EXPLANATION), *rule = jx_str(cls, RK_RULE);
	size_t n = jx_len(terms);

	fputs("\n## What it is\n\n", f);
	if (!cls) {
		fputs("No classification in this bundle: the verdict is missing.\n", f);
		return;
	}
	fprintf(f, "%s\n", ex ? ex : "(the rule gave no explanation)");
	if (!n) {
		fprintf(f, "\n%s\n", rule ? "The rule's terms were not recorded." :
			"No rule matched.");
		return;
	}
	fprintf(f, "\nRule %s holds:\n", rule ? rule : "(unnamed)");
	for (size_t i = 0; i < n && i < 32; i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);
		const char *expr = jx_str(t, RK_EXPR);

		fprintf(f, "- `%.300s`", expr ? expr : "?");
		put_values(f, jx_get(t, RK_VALUES), 12);
		fputc('\n', f);
	}
}

static void sum_not(FILE *f, struct json_object *cls)
{
	struct json_object *nots = jx_arr(cls, RK_NOT);
	size_t n = jx_len(nots);

	fputs("\n## What it is not\n\n", f);
	if (!n) {
		fputs("No other verdict was evaluated (the list of ruled-out causes is missing).\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		struct json_object *o = json_object_array_get_idx(nots, i);
		struct json_object *unknown = jx_obj(o, RK_UNKNOWN);
		const char *v = jx_str(o, RK_VERDICT), *failed = jx_str(o, RK_FAILED);

		if (!v)
			v = "(unnamed verdict)";
		if (jx_get(o, RK_MATCHED) && json_object_get_boolean(jx_get(o, RK_MATCHED))) {
			fprintf(f, "- **Also held: %s.** Every term of it was true, but an earlier "
				"rule won.\n", v);
		} else if (!failed) {
			fprintf(f, "- **Not %s.** Why it was ruled out was not recorded.\n", v);
		} else if (unknown && json_object_object_length(unknown)) {
			int k = 0;

			fprintf(f, "- **Not decided: %s.** `%.300s` could not be evaluated", v, failed);
			json_object_object_foreach(unknown, key, why) {
				if (k == 6)
					break;
				fprintf(f, "%s%.80s: ", k++ ? "; " : ": ", key);
				put_val(f, why);
			}
			fputs(".\n", f);
		} else if (jx_str(o, RK_TEXT)) {
			/* the rule's own words, then the term that failed */
			fprintf(f, "- **Not %s:** %.400s (`%.300s` is ", v, jx_str(o, RK_TEXT), failed);
			put_val(f, jx_get(o, RK_VALUE));
			fputs(").\n", f);
		} else {
			fprintf(f, "- **Not %s.** `%.300s` is ", v, failed);
			put_val(f, jx_get(o, RK_VALUE));
			put_values(f, jx_get(o, RK_VALUES), 12);
			fputs(".\n", f);
		}
	}
}

/* The gap signal over one period's counters (0 when the period is there
 * but the signal is unknown in it: a counter missing counts 0). */
static int period_gap(const struct rules *r, const char *profile, struct json_object *period,
		      double *out)
{
	return rules_signal(r, profile, GAP_SIGNAL, jx_obj(period, FK_COUNTERS), out) == 0;
}

/* "Gap: 6 frames counted at the port and not at the vport in 1.600 s; the
 * healthy rate explains 1.6." The frames are counted over the stall and the
 * observation window; the healthy share is the baseline's gap rate over the
 * same span, as the port-drop rule reckons it (rules/50-verdicts.rules). */
static void sum_gap(FILE *f, const struct rules *r, const char *profile, struct json_object *fp)
{
	struct json_object *stall = jx_obj(fp, FK_PER_STALL), *win = jx_obj(fp, FK_PER_WINDOW);
	struct json_object *base = jx_obj(fp, FK_PER_BASELINE);
	double gap, wgap = 0, bgap, span, bspan;

	if (!r || !period_gap(r, profile, stall, &gap))
		return;
	if (win && period_gap(r, profile, win, &wgap))
		gap += wgap;
	span = jx_double(stall, FK_SPAN_S, 0) + (win ? jx_double(win, FK_SPAN_S, 0) : 0);
	fputs("  Gap: ", f);
	put_num(f, gap);
	fprintf(f, " frame%s counted at the port and not at the vport", gap == 1 ? "" : "s");
	if (span > 0)
		fprintf(f, " in %.3f s", span);
	bspan = jx_double(base, FK_SPAN_S, 0);
	if (base && bspan > 0 && span > 0 && period_gap(r, profile, base, &bgap))
		fprintf(f, "; the healthy rate explains %.1f.\n", bgap / bspan * span);
	else
		fputs("; no healthy rate was learned.\n", f);
}

static void sum_port(FILE *f, const struct rules *r, const char *name, struct json_object *mp,
		     struct json_object *fp)
{
	struct json_object *stall = jx_get(fp, FK_PER_STALL), *cnt = jx_get(stall, FK_COUNTERS);
	const char *profile = jx_str(fp, FK_P_PROFILE);
	int moved = 0, flat = 0;
	double span;

	if (!profile)
		profile = jx_str(mp, MK_P_PROFILE);
	fprintf(f, "- Port %.64s:", name);
	put_field(f, " interface", mp, MK_P_INTERFACE, fp, NULL);
	put_field(f, ", netns", mp, MK_P_NETNS, fp, NULL);
	put_field(f, ", driver", mp, MK_P_DRIVER, fp, FK_P_DRIVER);
	put_field(f, ", firmware", mp, MK_P_FIRMWARE, fp, FK_P_FIRMWARE);
	put_field(f, ", PSID", mp, MK_P_PSID, fp, FK_P_PSID);
	put_field(f, ", link up", NULL, NULL, fp, FK_P_LINK_UP);
	fputs(".\n", f);
	if (!stall) {
		fputs("  Counters at the stall: not recorded.\n", f);
		return;
	}
	fputs("  Counters at the stall", f);
	if (jx_num(jx_get(stall, FK_SPAN_S), &span))
		fprintf(f, " (over %.3f s)", span);
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
			put_val(f, v);
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
				sum_port(f, r, k, v, jx_get(fports, k));
		}
	}
	if (fports) {
		json_object_object_foreach(fports, k, v) {
			if (jx_get(mports, k))
				continue;
			if (nports++ < 16)
				sum_port(f, r, k, NULL, v);
		}
	}
	if (!nports)
		fputs("- Ports: not recorded.\n", f);
}

static const char *const held_line[] = {
	"unsent ", FK_H_UNSENT, ", unread ", FK_H_UNREAD, ", staged ", FK_H_STAGED, NULL
};

static void sum_flows(FILE *f, struct json_object *facts)
{
	struct json_object *flows = jx_obj(facts, FK_FLOWS), *held, *list;
	size_t n;

	if (!flows) {
		fputs("- Flows: not recorded.\n", f);
		return;
	}
	held = jx_obj(flows, FK_F_HELD);
	list = jx_arr(flows, FK_F_LIST);
	n = jx_len(list);
	put_line(f, flows, (const char *const[]){ "- Flows: ", FK_F_STALLED, " stalled, ",
		 FK_F_PROGRESSING, " progressing. ", NULL });
	if (held) {
		fputs("Held by the engine: ", f);
		put_line(f, held, held_line);
		fputs(" bytes.\n", f);
	} else {
		fputs("What the engine held: not recorded.\n", f);
	}
	for (size_t i = 0; i < n && i < 8; i++) {
		struct json_object *o = json_object_array_get_idx(list, i);

		put_line(f, o, (const char *const[]){ "  - ", FK_FL_TUPLE, " (", FK_FL_SRC,
			 "): waited ", NULL });
		put_ms(f, jx_get(o, FK_FL_WAITED_MS));
		fputs(", ", f);
		put_line(f, o, held_line);
		fputs("\n", f);
	}
	if (n > 8)
		fprintf(f, "  - and %zu more (flows.json)\n", n - 8);
}

static void sum_threads(FILE *f, struct json_object *facts)
{
	struct json_object *threads = jx_arr(facts, FK_THREADS);
	size_t n = jx_len(threads);

	if (!threads) {
		fputs("- Engine threads: not recorded.\n", f);
		return;
	}
	fprintf(f, "- Engine threads: %zu recorded.\n", n);
	for (size_t i = 0; i < n && i < 6; i++) {
		struct json_object *o = json_object_array_get_idx(threads, i);

		put_line(f, o, (const char *const[]){ "  - tid ", FK_T_TID, " (", FK_T_COMM,
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

		put_line(f, o, (const char *const[]){ "- Kernel ping ", FK_PG_FROM, " -> ",
			 FK_PG_TO, ": ", FK_PG_RECEIVED, " of ", FK_PG_SENT,
			 " echo requests answered.\n", NULL });
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

		put_line(f, o, (const char *const[]){ "- Capture on ", FK_C_PORT, ": ",
			 FK_C_FRAMES, " frames, ", NULL });
		if (!recorded(pr))
			fputs("promiscuous mode not recorded", f);
		else
			fputs(json_object_get_boolean(pr) ? "promiscuous" : "not promiscuous", f);
		if (!recorded(tr))
			fputs(", mode change not recorded", f);
		else if (json_object_is_type(tr, json_type_boolean))
			fputs(json_object_get_boolean(tr) ? ", with a promiscuous transition "
			      "(the driver reprogrammed the receive filters)" :
			      ", without a mode change", f);
		else {
			fputs(", transition ", f);
			put_val(f, tr);
		}
		fputs(".\n", f);
	}
}

/* The manifest's release (the record's), else the facts': same shape. */
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
		put_val(f, jx_get(rel, FK_R_ACTION));
		if (port)
			fprintf(f, " on %s", port);
		if (jx_num(jx_get(rel, FK_R_AFTER_MS), &x))
			fprintf(f, ", %.1f ms after the action", x);
		else
			fputs(", time not recorded", f);
		fputs(".\n", f);
		if (port)
			fprintf(f, "- The receive-filter state of port %s held the flows.\n", port);
	} else {
		fputs("- Not released (action: ", f);
		put_val(f, jx_get(rel, FK_R_ACTION));
		fputs(").\n", f);
	}
}

static void sum_journal(FILE *f, struct json_object *m)
{
	struct json_object *journal = jx_get(m, MK_JOURNAL), *lines, *avail;

	if (!recorded(journal)) {
		fputs("- Journal: no journal excerpt in this bundle.\n", f);
		return;
	}
	avail = jx_get(journal, MK_J_AVAILABLE);
	if (avail && !json_object_get_boolean(avail)) {
		fputs("- Journal: unavailable on this host.\n", f);
		return;
	}
	lines = jx_arr(journal, MK_J_ENTRIES);
	if (!lines)
		lines = jx_arr(journal, MK_J_LINES);
	if (!lines && json_object_is_type(journal, json_type_array))
		lines = journal;
	if (lines)
		fprintf(f, "- Journal: %zu lines around the stall (journal.json).\n", jx_len(lines));
	else
		fputs("- Journal: excerpt present (journal.json).\n", f);
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
			fputs("-         ? ms", f);
		if (jx_num(jx_get(s, MK_S_END_MS), &b))
			fprintf(f, " .. %+9.1f ms", b);
		else
			fputs(" ..         ? ms", f);
		fputs("  ", f);
		put_val(f, jx_get(s, MK_S_STEP));
		if (port)
			fprintf(f, " (%.64s)", port);
		fputs(": ", f);
		put_val(f, jx_get(s, MK_S_OUTCOME));
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
	sum_is(f, cls);
	sum_not(f, cls);
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
