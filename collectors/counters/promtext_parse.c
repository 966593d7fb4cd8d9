/* promtext: the Prometheus text exposition format (see promtext_parse.h). */
#include "collectors/counters/promtext_parse.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pstate {
	const char *l;                  /* the line, without its '\n' */
	size_t n, i;
	unsigned line;
	char *err;
	size_t errlen;
	/* the family being read: its name and what its TYPE and HELP said */
	char fam[PROM_MAX_NAME];
	enum prom_type ftype;
	int fam_typed, fam_helped, fam_sampled;
	char name[PROM_MAX_NAME];
	struct prom_label lab[PROM_MAX_LABELS];
};

__attribute__((format(printf, 2, 3)))
static int perr(struct pstate *p, const char *fmt, ...)
{
	char m[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	util_errf(p->err, p->errlen, "line %u: %s", p->line, m);
	return -EINVAL;
}

static int blank(char c) { return c == ' ' || c == '\t'; }
static int name0(char c, int colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}
static int name1(char c, int colon) { return name0(c, colon) || (c >= '0' && c <= '9'); }

static void skip_blank(struct pstate *p)
{
	while (p->i < p->n && blank(p->l[p->i]))
		p->i++;
}

/* A metric (colon) or label name into out; 0 or -EINVAL. */
static int read_name(struct pstate *p, char *out, int colon, const char *what)
{
	size_t s = p->i;

	if (p->i >= p->n || !name0(p->l[p->i], colon)) {
		if (p->i < p->n && p->l[p->i] == '"')
			return perr(p, "a quoted %s (a UTF-8 name of a newer format than 0.0.4)",
				    what);
		return perr(p, "expected a %s, found %s", what, p->i < p->n ? "another character" :
			    "the end of the line");
	}
	while (p->i < p->n && name1(p->l[p->i], colon))
		p->i++;
	if (p->i - s >= PROM_MAX_NAME)
		return perr(p, "a %s longer than %d characters", what, PROM_MAX_NAME - 1);
	memcpy(out, p->l + s, p->i - s);
	out[p->i - s] = 0;
	return 0;
}

/* A double-quoted label value (p->i at the '"'), unescaped into out. */
static int read_lvalue(struct pstate *p, char *out, const char *label)
{
	size_t o = 0;

	p->i++;
	while (p->i < p->n && p->l[p->i] != '"') {
		char c = p->l[p->i];
		size_t k;

		if (c == '\\') {
			char e = p->i + 1 < p->n ? p->l[p->i + 1] : 0;

			if (e != '\\' && e != '"' && e != 'n')
				return perr(p, "label %s: an invalid escape in its value "
					    "(only \\\\, \\\" and \\n)", label);
			if (o + 1 >= PROM_MAX_LVAL)
				goto long_;
			out[o++] = e == 'n' ? '\n' : e;
			p->i += 2;
			continue;
		}
		if (c >= 0x20 && c < 0x7f)
			k = 1;          /* printable ASCII, the usual value */
		else switch (util_utf8_char(p->l + p->i, p->n - p->i, &k)) {
		case UTIL_CH_TEXT:
			break;
		case UTIL_CH_CONTROL:
			/* C0, DEL, C1 (U+009B is a terminal's CSI) and the bidi
			 * overrides: the value becomes part of a counter's name
			 * that people read */
			if (c != '\t')
				return perr(p, "label %s: a control character in its value", label);
			break;
		default:
			return perr(p, "label %s: its value is not UTF-8", label);
		}
		if (o + k >= PROM_MAX_LVAL)
			goto long_;
		memcpy(out + o, p->l + p->i, k);
		o += k;
		p->i += k;
	}
	if (p->i >= p->n)
		return perr(p, "label %s: its value has no closing '\"'", label);
	p->i++;
	out[o] = 0;
	return 0;
long_:
	return perr(p, "label %s: a value longer than %d bytes", label, PROM_MAX_LVAL - 1);
}

/* The token up to a blank or the end of the line, into buf (NUL ended). */
static int read_token(struct pstate *p, char *buf, size_t size, const char *what)
{
	size_t s = p->i;

	while (p->i < p->n && !blank(p->l[p->i]))
		p->i++;
	if (p->i == s)
		return perr(p, "no %s", what);
	if (p->i - s >= size)
		return perr(p, "a %s longer than %zu characters", what, size - 1);
	memcpy(buf, p->l + s, p->i - s);
	buf[p->i - s] = 0;
	return 0;
}

/* Go's strconv.ParseFloat as expfmt uses it, less hexadecimal and
 * underscores (no exposition writes them): decimal, or Inf/NaN. */
static int parse_float(const char *t, double *v)
{
	const char *q = t + (*t == '+' || *t == '-');
	char *end;

	if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')))
		;               /* a number: no word to compare */
	else if (!strcasecmp(q, "inf") || !strcasecmp(q, "infinity")) {
		*v = *t == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	else if (!strcasecmp(q, "nan") && q == t) {
		*v = NAN;
		return 0;
	}
	for (const char *c = t; *c; c++)
		if (!strchr("0123456789.eE+-", *c))
			return -1;
	errno = 0;
	*v = strtod(t, &end);
	if (end == t || *end || (errno == ERANGE && isinf(*v)))
		return -1;
	return 0;
}

static int parse_i64(const char *t, int64_t *v)
{
	char *end;
	long long x;

	if (!*t || (!(*t >= '0' && *t <= '9') && *t != '-' && *t != '+'))
		return -1;
	errno = 0;
	x = strtoll(t, &end, 10);
	if (*end || errno)
		return -1;
	*v = x;
	return 0;
}

/* Is name one of fam's series (fam, or fam + a histogram's or summary's
 * suffix)? */
static int of_family(const struct pstate *p, const char *name)
{
	size_t fl = strlen(p->fam);
	const char *suf;

	if (!p->fam[0] || strncmp(name, p->fam, fl))
		return 0;
	suf = name + fl;
	if (!*suf)
		return 1;
	if (p->ftype == PROM_HISTOGRAM)
		return !strcmp(suf, "_bucket") || !strcmp(suf, "_sum") || !strcmp(suf, "_count");
	if (p->ftype == PROM_SUMMARY)
		return !strcmp(suf, "_sum") || !strcmp(suf, "_count");
	return 0;
}

static void new_family(struct pstate *p, const char *name)
{
	util_strlcpy(p->fam, name, sizeof(p->fam));
	p->ftype = PROM_UNTYPED;
	p->fam_typed = p->fam_helped = p->fam_sampled = 0;
}

static int comment(struct pstate *p)
{
	static const char *const types[] = { "untyped", "counter", "gauge", "histogram",
					     "summary" };
	char kw[8], name[PROM_MAX_NAME];
	int help;
	size_t s;

	p->i++;
	skip_blank(p);
	s = p->i;
	while (p->i < p->n && !blank(p->l[p->i]))
		p->i++;
	if (p->i - s == 4 && (!memcmp(p->l + s, "HELP", 4) || !memcmp(p->l + s, "TYPE", 4))) {
		memcpy(kw, p->l + s, 4);
		kw[4] = 0;
	} else {
		return 0;               /* any other comment */
	}
	help = kw[0] == 'H';
	skip_blank(p);
	if (p->i >= p->n)
		return perr(p, "%s without a metric name", kw);
	if (read_name(p, name, 1, "metric name") < 0)
		return -EINVAL;
	if (p->i < p->n && !blank(p->l[p->i]))
		return perr(p, "%s %s: the name is followed by a character names do not have",
			    kw, name);
	if (strcmp(name, p->fam))
		new_family(p, name);
	skip_blank(p);
	if (help) {
		if (p->fam_helped)
			return perr(p, "a second HELP line for %s", name);
		p->fam_helped = 1;
		for (; p->i < p->n; p->i++)
			if (p->l[p->i] == '\\') {
				char e = p->i + 1 < p->n ? p->l[p->i + 1] : 0;

				if (e != '\\' && e != 'n')
					return perr(p, "HELP %s: an invalid escape (only \\\\ and "
						    "\\n)", name);
				p->i++;
			}
		return 0;
	}
	if (p->fam_typed || p->fam_sampled)
		return perr(p, "a second TYPE line for %s, or a TYPE after its samples", name);
	s = p->i;
	while (p->i < p->n && !blank(p->l[p->i]))
		p->i++;
	for (unsigned t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		if (p->i - s == strlen(types[t]) && !strncasecmp(p->l + s, types[t], p->i - s)) {
			skip_blank(p);
			if (p->i < p->n)
				return perr(p, "TYPE %s: more than a type after the name", name);
			p->ftype = (enum prom_type)t;
			p->fam_typed = 1;
			return 0;
		}
	return perr(p, "TYPE %s: unknown type '%.*s' (counter, gauge, histogram, summary, "
		    "untyped)", name, (int)(p->i - s > 32 ? 32 : p->i - s), p->l + s);
}

static int sample(struct pstate *p, prom_sample_fn cb, void *arg)
{
	struct prom_sample s = { .name = p->name, .labels = p->lab, .line = p->line };
	char tok[128];

	if (read_name(p, p->name, 1, "metric name") < 0)
		return -EINVAL;
	if (!of_family(p, p->name))
		new_family(p, p->name);
	p->fam_sampled = 1;
	s.family = p->fam;
	s.type = p->ftype;
	skip_blank(p);
	if (p->i < p->n && p->l[p->i] == '{') {
		p->i++;
		for (;;) {
			struct prom_label *lb;

			skip_blank(p);
			if (p->i < p->n && p->l[p->i] == '}')
				break;
			if (s.nlabels >= PROM_MAX_LABELS)
				return perr(p, "%s: more than %d labels", p->name, PROM_MAX_LABELS);
			lb = &p->lab[s.nlabels];
			if (read_name(p, lb->name, 0, "label name") < 0)
				return -EINVAL;
			if (!strcmp(lb->name, "__name__"))
				return perr(p, "%s: the label name __name__ is reserved", p->name);
			for (unsigned k = 0; k < s.nlabels; k++)
				if (!strcmp(p->lab[k].name, lb->name))
					return perr(p, "%s: label %s given twice", p->name, lb->name);
			skip_blank(p);
			if (p->i >= p->n || p->l[p->i] != '=')
				return perr(p, "%s: expected '=' after label %s", p->name, lb->name);
			p->i++;
			skip_blank(p);
			if (p->i >= p->n || p->l[p->i] != '"')
				return perr(p, "%s: expected '\"' to start label %s's value", p->name,
					    lb->name);
			if (read_lvalue(p, lb->value, lb->name) < 0)
				return -EINVAL;
			s.nlabels++;
			skip_blank(p);
			if (p->i < p->n && p->l[p->i] == ',') {
				p->i++;
				continue;
			}
			if (p->i < p->n && p->l[p->i] == '}')
				break;
			return perr(p, "%s: expected ',' or '}' after label %s", p->name, lb->name);
		}
		p->i++;
		skip_blank(p);
	} else if (p->i < p->n && !blank(p->l[p->i - 1])) {
		return perr(p, "%s: the name is followed by a character names do not have",
			    p->name);
	}
	if (p->i >= p->n)
		return perr(p, "%s: no value", p->name);
	if (read_token(p, tok, sizeof(tok), "value") < 0)
		return -EINVAL;
	if (parse_float(tok, &s.value) < 0)
		return perr(p, "%s: the value '%s' is not a number", p->name, tok);
	skip_blank(p);
	if (p->i < p->n) {
		if (read_token(p, tok, sizeof(tok), "timestamp") < 0)
			return -EINVAL;
		if (parse_i64(tok, &s.ts_ms) < 0)
			return perr(p, "%s: the timestamp '%s' is not an integer of milliseconds",
				    p->name, tok);
		s.has_ts = 1;
		skip_blank(p);
		if (p->i < p->n)
			return perr(p, "%s: more after the timestamp", p->name);
	}
	return cb ? cb(&s, arg) : 0;
}

int prom_parse(const char *text, size_t len, prom_sample_fn cb, void *arg,
	       char *err, size_t errlen)
{
	struct pstate *p = calloc(1, sizeof(*p));
	size_t pos = 0;
	int count = 0, rc = 0;

	if (!p) {
		util_errf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->err = err;
	p->errlen = errlen;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		p->line++;
		p->l = text + pos;
		p->n = end - pos;
		p->i = 0;
		if (p->n >= PROM_MAX_LINE) {
			rc = perr(p, "longer than %d bytes", PROM_MAX_LINE - 1);
			break;
		}
		if (memchr(p->l, 0, p->n)) {
			rc = perr(p, "a NUL byte");
			break;
		}
		skip_blank(p);
		if (p->i < p->n && !nl) {
			rc = perr(p, "the last line does not end with a newline (a cut page?)");
			break;
		}
		if (p->i >= p->n)
			;
		else if (p->l[p->i] == '#')
			rc = comment(p);
		else if ((rc = sample(p, cb, arg)) >= 0)
			count++;
		if (rc < 0)
			break;
		pos = end + 1;
	}
	free(p);
	return rc < 0 ? rc : count;
}

int prom_series_key(const struct prom_sample *s, char *buf, size_t size)
{
	size_t o = 0;

#define PUT(c) do { if (o + 1 >= size) return -ENAMETOOLONG; buf[o++] = (c); } while (0)
	for (const char *q = s->name; *q; q++)
		PUT(*q);
	for (unsigned i = 0; i < s->nlabels; i++) {
		PUT(i ? ',' : '{');
		for (const char *q = s->labels[i].name; *q; q++)
			PUT(*q);
		PUT('=');
		PUT('"');
		for (const char *q = s->labels[i].value; *q; q++) {
			if (*q == '\\' || *q == '"' || *q == '\n')
				PUT('\\');
			PUT(*q == '\n' ? 'n' : *q);
		}
		PUT('"');
	}
	if (s->nlabels)
		PUT('}');
#undef PUT
	if (!size)
		return -ENAMETOOLONG;
	buf[o] = 0;
	return (int)o;
}
