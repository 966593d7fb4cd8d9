/* summary_verdict: the verdict in the summary (what it is, and what it is
 * not, from the rules' ruled_out sentences) and `nicstallctl classify
 * --explain`'s terms with the values they read (bundle_int.h). */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* The rule's terms as expressions, with the values they read: for
 * `nicstallctl classify --explain`, not for the summary (people read
 * sentences there). */
static void explain_terms(FILE *f, struct json_object *cls)
{
	struct json_object *terms = jx_arr(cls, RK_TERMS);
	const char *rule = jx_str(cls, RK_RULE);
	size_t n = jx_len(terms);

	if (!n) {
		fprintf(f, "%s\n", rule ? "The rule's terms were not recorded." : "No rule matched.");
		return;
	}
	fprintf(f, "Rule %s holds:\n", rule ? rule : "(unnamed)");
	for (size_t i = 0; i < n && i < 32; i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);
		const char *expr = jx_str(t, RK_EXPR);

		fprintf(f, "- `%.300s`", expr ? expr : "(term not recorded)");
		bi_put_values(f, jx_get(t, RK_VALUES), 12);
		fputc('\n', f);
	}
}

static void explain_not(FILE *f, struct json_object *cls)
{
	struct json_object *nots = jx_arr(cls, RK_NOT);
	size_t n = jx_len(nots);

	fputs("\nOther rules:\n", f);
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
				bi_put_val(f, why);
			}
			fputs(".\n", f);
		} else if (jx_str(o, RK_TEXT)) {
			/* the rule's own words, then the term that failed */
			fprintf(f, "- **Not %s:** %.400s (`%.300s` is ", v, jx_str(o, RK_TEXT), failed);
			bi_put_val(f, jx_get(o, RK_VALUE));
			fputs(").\n", f);
		} else {
			fprintf(f, "- **Not %s.** `%.300s` is ", v, failed);
			bi_put_val(f, jx_get(o, RK_VALUE));
			bi_put_values(f, jx_get(o, RK_VALUES), 12);
			fputs(".\n", f);
		}
	}
}

char *bundle_explain_text(struct json_object *cls)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (!cls)
		fputs("No classification: the verdict is missing.\n", f);
	else {
		explain_terms(f, cls);
		explain_not(f, cls);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void bi_sum_is(FILE *f, struct json_object *cls)
{
	const char *ex = jx_str(cls, RK_EXPLANATION), *rule = jx_str(cls, RK_RULE);

	fputs("\n## What it is\n\n", f);
	if (!cls) {
		fputs("No classification in this bundle: the verdict is missing.\n", f);
		return;
	}
	fprintf(f, "%s\n", ex ? ex : "(the rule gave no explanation)");
	if (rule)
		fprintf(f, "\nRule %.64s matched (`nicstallctl classify BUNDLE --explain` lists "
			"its terms and the values they read).\n", rule);
	else
		fputs("\nNo rule matched.\n", f);
}

/* One line per verdict, whatever number of rules name it: the rules' own
 * sentences (ruled_out), joined; a rule without one is named, and its
 * term is left to classify --explain. A verdict with a rule that could not
 * be decided is not ruled out. The verdict given is never a "not": its
 * other rules (oversize-drop-path beside oversize-drop) are more of the
 * same evidence. Shared by summary.txt and report.html. */
static const char *verdict_of(struct json_object *o)
{
	return jx_str(o, RK_VERDICT) ? jx_str(o, RK_VERDICT) : "(unnamed verdict)";
}

size_t bi_not_lines(struct json_object *cls, struct bi_not *out, size_t max)
{
	struct json_object *nots = jx_arr(cls, RK_NOT);
	size_t n = jx_len(nots), m = 0;
	const char *given = jx_str(cls, RK_VERDICT);

	for (size_t i = 0; i < n && i < 64 && m < max; i++) {
		const char *v = verdict_of(json_object_array_get_idx(nots, i));
		char *buf = NULL;
		size_t len = 0, j;
		int k = 0;
		FILE *f;

		if (given && !strcmp(v, given))
			continue;

		for (j = 0; j < i && strcmp(v, verdict_of(json_object_array_get_idx(nots, j))); j++)
			;
		if (j < i)
			continue;
		out[m].verdict = v;
		out[m].kind = BI_NOT_RULED_OUT;
		for (j = i; j < n && j < 64; j++) {
			struct json_object *o = json_object_array_get_idx(nots, j);

			if (strcmp(v, verdict_of(o)))
				continue;
			if (jx_get(o, RK_MATCHED) && json_object_get_boolean(jx_get(o, RK_MATCHED)))
				out[m].kind = BI_NOT_ALSO_HELD;
			else if (out[m].kind != BI_NOT_ALSO_HELD && jx_obj(o, RK_UNKNOWN) &&
				 json_object_object_length(jx_obj(o, RK_UNKNOWN)))
				out[m].kind = BI_NOT_UNDECIDED;
		}
		f = open_memstream(&buf, &len);
		if (!f)
			break;
		if (out[m].kind == BI_NOT_ALSO_HELD)
			fputs("its facts were all true, but an earlier rule won", f);
		for (j = i; j < n && j < 64 && out[m].kind != BI_NOT_ALSO_HELD; j++) {
			struct json_object *o = json_object_array_get_idx(nots, j), *un;
			const char *text = jx_str(o, RK_TEXT), *rule = jx_str(o, RK_RULE);

			if (strcmp(v, verdict_of(o)))
				continue;
			fputs(k++ ? "; " : "", f);
			un = jx_obj(o, RK_UNKNOWN);
			if (un && json_object_object_length(un)) {
				int u = 0;

				fprintf(f, "rule %.64s could not be decided: ", rule ? rule : v);
				json_object_object_foreach(un, key, why) {
					(void)key;
					if (u == 4)
						break;
					fputs(u++ ? ", " : "", f);
					bi_put_val(f, why);
				}
			} else if (text) {
				fprintf(f, "%.400s", text);
			} else if (!jx_str(o, RK_FAILED)) {
				fputs("why it was ruled out was not recorded", f);
			} else {
				fprintf(f, "rule %.64s does not hold (it gives no sentence: "
					"classify --explain shows the term)", rule ? rule : v);
			}
		}
		if (fclose(f) != 0) {
			free(buf);
			break;
		}
		out[m++].text = buf;
	}
	return m;
}

void bi_not_free(struct bi_not *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].text);
}

void bi_sum_not(FILE *f, struct json_object *cls)
{
	static const char *const head[] = {
		[BI_NOT_RULED_OUT] = "Not %s:", [BI_NOT_UNDECIDED] = "Not decided: %s.",
		[BI_NOT_ALSO_HELD] = "Also held: %s.",
	};
	struct bi_not l[64];
	size_t n;

	fputs("\n## What it is not\n\n", f);
	if (!jx_len(jx_arr(cls, RK_NOT))) {
		fputs("No other verdict was evaluated (the list of ruled-out causes is missing).\n", f);
		return;
	}
	n = bi_not_lines(cls, l, 64);
	for (size_t i = 0; i < n; i++) {
		fputs("- **", f);
		fprintf(f, head[l[i].kind], l[i].verdict);
		fprintf(f, "** %s.\n", l[i].text);
	}
	bi_not_free(l, n);
}
