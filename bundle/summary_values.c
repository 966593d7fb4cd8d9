/* summary_values: a manifest's values for people, for the summary and
 * its parts (bundle_int.h): numbers plainly (an integer as an integer,
 * else at most four significant digits, never an exponent), strings cut,
 * null as "not recorded". */
#include "bundle/bundle_int.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

/* A number for people: an integer as an integer, else at most 4
 * significant digits and 3 decimals (trailing zeros dropped), never an
 * exponent for a plain figure. */
void bi_put_num(FILE *f, double d)
{
	char buf[64];
	size_t n;
	int dec;

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
	dec = 3 - (int)floor(log10(fabs(d)));
	snprintf(buf, sizeof(buf), "%.*f", dec < 0 ? 0 : dec > 3 ? 3 : dec, d);
	/* trailing zeros of the decimals only: 1230 is not 123 */
	n = strlen(buf);
	if (strchr(buf, '.')) {
		for (; n > 1 && buf[n - 1] == '0'; n--)
			buf[n - 1] = '\0';
		if (n > 1 && buf[n - 1] == '.')
			buf[n - 1] = '\0';
	}
	fputs(buf, f);
}

/* A figure as the rules' templates print it (rules/classify.c val_text):
 * a whole number as one, else one decimal, two significant digits below 1,
 * so that the explanation and the evidence give one figure for one
 * quantity ("0.74 s" in both). */
void bi_put_fig(FILE *f, double d)
{
	if (!isfinite(d))
		fputs("unknown", f);
	else if (d == floor(d) && fabs(d) < 1e15)
		fprintf(f, "%.0f", d);
	else if (fabs(d) >= 1e15)
		fprintf(f, "%.3g", d);
	else if (fabs(d) >= 1)
		fprintf(f, "%.1f", d);
	else
		fprintf(f, "%.2g", d);
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
		bi_put_num(f, json_object_get_double(v));
		return;
	case json_type_string:
		s = json_object_get_string(v);
		fprintf(f, "%.200s%s", s, strlen(s) > 200 ? "..." : "");
		return;
	default:
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		fprintf(f, "%.200s%s", s ? s : "unknown", s && strlen(s) > 200 ? "..." : "");
		return;
	}
}

/* Labels and keys in turn ({label, key, ..., label, NULL}): each label,
 * then o[key] for people. */
void bi_put_line(FILE *f, struct json_object *o, const char *const *lk)
{
	for (; lk[0]; lk += 2) {
		fputs(lk[0], f);
		if (!lk[1])
			break;
		bi_put_val(f, jx_get(o, lk[1]));
	}
}

int bi_recorded(struct json_object *v)
{
	return v && !json_object_is_type(v, json_type_null);
}

/* "label value": a[akey] (the manifest), else b[bkey] (the facts). */
void bi_put_field(FILE *f, const char *label, struct json_object *a, const char *akey,
		  struct json_object *b, const char *bkey)
{
	struct json_object *v = akey ? jx_get(a, akey) : NULL;

	if (!bi_recorded(v) && bkey)
		v = jx_get(b, bkey);
	fprintf(f, "%s ", label);
	if (!bi_recorded(v))
		fputs("not recorded", f);
	else
		bi_put_val(f, v);
}

void bi_put_values(FILE *f, struct json_object *vals, int max)
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
		bi_put_val(f, v);
	}
}
