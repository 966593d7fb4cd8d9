/* report fmt: what every output of the report shares (report_int.h):
 * the escaping of what a bundle says (hostile text: another host's
 * bundle) and numbers for people. */
#include "bundle/report_int.h"
#include "lib/json.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

/* Through the one filter's classifier (util_utf8_char): what a terminal
 * must not be shown a page must not hold either. */
void rp_esc_n(FILE *f, const char *s, size_t max)
{
	size_t chars = 0, len = s ? strlen(s) : 0, i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n;
		int cls = util_utf8_char(s + i, len - i, &n);

		if (chars++ >= max) {
			fputs("\xe2\x80\xa6", f);
			return;
		}
		if (cls == UTIL_CH_TEXT || (cls == UTIL_CH_CONTROL && (c == '\n' || c == '\t'))) {
			switch (c) {
			case '&': fputs("&amp;", f); break;
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '"': fputs("&quot;", f); break;
			case '\'': fputs("&#39;", f); break;
			default: fwrite(s + i, 1, n, f);
			}
			i += n;
			continue;
		}
		fputs("\xef\xbf\xbd", f);
		i += n;
		/* the rest of a rejected sequence's continuation bytes with it */
		while (cls != UTIL_CH_CONTROL && i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
}

void rp_esc(FILE *f, const char *s)
{
	rp_esc_n(f, s, RP_TEXT);
}

/* A link target: the prefix and a checked relative path, percent-encoded
 * outside [A-Za-z0-9._~/-]. */
void rp_url(FILE *f, const char *prefix, const char *rel)
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

/* A number for people: 3 significant digits and k/M/G/T. */
const char *rp_fnum(char *buf, size_t len, double v)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P", "E" };
	double a = fabs(v);
	int k = 0;

	if (!rp_isnum(v)) {
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
const char *rp_fplain(char *buf, size_t len, double v)
{
	if (!rp_isnum(v))
		snprintf(buf, len, "not a number");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 1e15 || fabs(v) < 0.0005)
		snprintf(buf, len, "%.3g", v);
	else {
		/* at most four significant digits and three decimals, as in
		 * summary.txt (419.9, not 419.915) */
		int dec = 3 - (int)floor(log10(fabs(v)));

		snprintf(buf, len, "%.*f", dec < 0 ? 0 : dec > 3 ? 3 : dec, v);
	}
	return buf;
}

/* A JSON value for people, escaped. */
void rp_put_val(FILE *f, struct json_object *v)
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
			fputs(rp_fplain(b, sizeof(b), x), f);
		else
			fputs("not a number", f);
		return;
	case json_type_string:
		rp_esc(f, json_object_get_string(v));
		return;
	default:
		rp_esc(f, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
		return;
	}
}

