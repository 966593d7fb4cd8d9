/* ethtool_text: parse recorded `ethtool -S` text. Rules in ethtool_text_parse.h. */
#include "collectors/counters/ethtool_text_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Printable excerpt of untrusted bytes for an error message. */
static const char *excerpt(char *dst, size_t dstlen, const char *s, size_t n)
{
	size_t i, max = dstlen - 4;

	for (i = 0; i < n && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (i < n) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
	return dst;
}

__attribute__((format(printf, 6, 7)))
static int fail(struct etxt *out, char *err, size_t errlen, int rc,
		unsigned line, const char *fmt, ...)
{
	va_list ap;
	int k = 0;

	out->n = 0;
	out->err_line = line;
	if (!err || !errlen)
		return rc;
	if (line)
		k = snprintf(err, errlen, "line %u: ", line);
	if (k >= 0 && (size_t)k < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Size the reusable arrays for up to cap counters and pool bytes. */
static int reserve(struct etxt *e, unsigned cap, size_t pool, unsigned hcap)
{
	if (pool > e->pool_cap) {
		char *p = realloc(e->pool, pool);

		if (!p)
			return -ENOMEM;
		e->pool = p;
		e->pool_cap = pool;
	}
	if (cap > e->cap) {
		char **nm = realloc(e->names, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		e->names = nm;
		uint64_t *v = realloc(e->vals, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->vals = v;
		uint16_t *ln = realloc(e->lens, cap * sizeof(*ln));

		if (!ln)
			return -ENOMEM;
		e->lens = ln;
		e->cap = cap;
	}
	if (hcap > e->hash_cap) {
		uint32_t *h = realloc(e->hash, hcap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		e->hash = h;
		e->hash_cap = hcap;
	}
	return 0;
}

/* One line [ls, le) as both parses see it: s..e trimmed; q the last ':'
 * followed by a blank or the end (NULL: none); the name s..s+nlen (blanks
 * before q trimmed); the value from v. 0 for a blank or comment line. */
struct line {
	const char *s, *e, *q, *v;
	size_t nlen;
};

static int split_line(const char *ls, const char *le, struct line *t)
{
	const char *s = ls, *e = le, *ne;

	while (s < e && is_blank(*s))
		s++;
	while (e > s && is_blank(e[-1]))
		e--;
	if (s == e || *s == '#')
		return 0;
	t->q = NULL;
	for (size_t i = (size_t)(e - s); i-- > 0; )
		if (s[i] == ':' && (s + i + 1 == e || is_blank(s[i + 1]))) {
			t->q = s + i;
			break;
		}
	ne = t->q ? t->q : e;
	while (ne > s && is_blank(ne[-1]))
		ne--;
	t->nlen = (size_t)(ne - s);
	t->v = t->q ? t->q + 1 : e;
	while (t->v < e && is_blank(*t->v))
		t->v++;
	t->s = s;
	t->e = e;
	return 1;
}

/* A port's file from one sweep to the next: the counters of the last
 * parse, same names in the same order, each value plain decimal. Only the
 * values are read (no name checks, hashing or copies); 1 when that is
 * what the input is, 0 for anything else, which the full parse then
 * decides (errors included) exactly as if there had been no last parse. */
static int parse_same(const char *buf, size_t len, struct etxt *out)
{
	const char *p = buf, *end = buf + len;
	unsigned i = 0;

	if (!out->n || out->ndup || !out->lens)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *ls = p, *le = nl ? nl : end;
		uint64_t val = 0;
		struct line t;

		p = nl ? nl + 1 : end;
		if (!split_line(ls, le, &t))
			continue;
		if ((size_t)(le - ls) > ETXT_MAX_LINE)
			return 0;
		if (!t.q || t.nlen == 0 || t.v == t.e || !is_digit(*t.v)) {
			/* a header before the counters, as the full parse
			 * skips them; a '-' or '+' value is a counter there */
			if (i == 0 && !(t.q && t.nlen && t.v < t.e && (*t.v == '-' || *t.v == '+')))
				continue;
			return 0;
		}
		if (i >= out->n || t.nlen != out->lens[i] || memcmp(t.s, out->names[i], t.nlen))
			return 0;
		for (const char *d = t.v; d < t.e; d++) {
			unsigned k = (unsigned)(*d - '0');

			if (!is_digit(*d) || val > (UINT64_MAX - k) / 10)
				return 0;
			val = val * 10 + k;
		}
		out->vals[i++] = val;
	}
	return i == out->n;
}

int etxt_parse(const char *buf, size_t len, struct etxt *out,
	       char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len;
	unsigned line = 0, cap = 1, hcap = 16, hmask, seen = 0;
	size_t pool_used = 0;
	char x1[48], x2[48];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	out->dup_line = 0;
	out->err_line = 0;
	out->same = 0;
	if (!buf && len)
		return fail(out, err, errlen, -EINVAL, 0, "no input buffer");
	if (len > ETXT_MAX_BYTES)
		return fail(out, err, errlen, -E2BIG,
			    0, "input of %zu bytes exceeds %u bytes", len,
			    ETXT_MAX_BYTES);
	if (parse_same(buf, len, out)) {
		out->same = 1;
		return 0;
	}
	out->n = 0;
	out->ndup = 0;

	/* Upper bound on counters: lines, capped one past the limit. */
	for (const char *q = buf; q && q < end && cap <= ETXT_MAX_COUNTERS;
	     cap++) {
		q = memchr(q, '\n', (size_t)(end - q));
		if (q)
			q++;
	}
	if (cap > ETXT_MAX_COUNTERS)
		cap = ETXT_MAX_COUNTERS;
	while (hcap < 2 * cap)
		hcap <<= 1;
	hmask = hcap - 1;
	rc = reserve(out, cap, len + 1, hcap);
	if (rc)
		return fail(out, err, errlen, rc, 0, "out of memory for %u counters",
			    cap);
	memset(out->hash, 0, hcap * sizeof(*out->hash));

	for (; p < end; ) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *ls = p, *le = nl ? nl : end, *s, *e, *q, *v;
		size_t nlen;
		uint64_t val = 0;
		struct line t;

		p = nl ? nl + 1 : end;
		line++;
		if (!split_line(ls, le, &t))
			continue;
		if ((size_t)(le - ls) > ETXT_MAX_LINE)
			return fail(out, err, errlen, -E2BIG, line,
				    "line longer than %u bytes", ETXT_MAX_LINE);
		s = t.s;
		e = t.e;
		q = t.q;
		v = t.v;
		nlen = t.nlen;
		if (!q || nlen == 0 || v == e ||
		    !(is_digit(*v) || *v == '-' || *v == '+')) {
			if (!seen)
				continue;       /* header before the counters */
			if (!q)
				return fail(out, err, errlen, -EINVAL, line,
					    "not a 'name: value' counter line: '%s'",
					    excerpt(x1, sizeof(x1), s,
						    (size_t)(e - s)));
			if (nlen == 0)
				return fail(out, err, errlen, -EINVAL, line,
					    "counter without a name");
			if (v == e)
				return fail(out, err, errlen, -EINVAL, line,
					    "counter '%s': missing value",
					    excerpt(x1, sizeof(x1), s, nlen));
		}
		if (nlen > ETXT_MAX_NAME)
			return fail(out, err, errlen, -E2BIG, line,
				    "counter name '%s' longer than %u bytes",
				    excerpt(x1, sizeof(x1), s, nlen),
				    ETXT_MAX_NAME);
		for (size_t i = 0; i < nlen; i++) {
			unsigned char c = (unsigned char)s[i];

			if (c < 0x20 || c == 0x7f)
				return fail(out, err, errlen, -EINVAL, line,
					    "counter name '%s' has control byte 0x%02x",
					    excerpt(x1, sizeof(x1), s, nlen), c);
		}
		/* the name's excerpt only for a message: it was 13% of a sweep */
		if (*v == '-')
			return fail(out, err, errlen, -EINVAL, line,
				    "counter '%s': negative value '%s'",
				    excerpt(x1, sizeof(x1), s, nlen),
				    excerpt(x2, sizeof(x2), v, (size_t)(e - v)));
		if (!is_digit(*v))
			return fail(out, err, errlen, -EINVAL, line,
				    "counter '%s': value '%s' is not an unsigned decimal",
				    excerpt(x1, sizeof(x1), s, nlen),
				    excerpt(x2, sizeof(x2), v, (size_t)(e - v)));
		for (const char *d = v; d < e; d++) {
			unsigned k;

			if (!is_digit(*d))
				return fail(out, err, errlen, -EINVAL, line,
					    "counter '%s': garbage after value in '%s'",
					    excerpt(x1, sizeof(x1), s, nlen),
					    excerpt(x2, sizeof(x2), v, (size_t)(e - v)));
			k = (unsigned)(*d - '0');
			if (val > (UINT64_MAX - k) / 10)
				return fail(out, err, errlen, -EINVAL, line,
					    "counter '%s': value '%s' exceeds 64 bits",
					    excerpt(x1, sizeof(x1), s, nlen),
					    excerpt(x2, sizeof(x2), v, (size_t)(e - v)));
			val = val * 10 + k;
		}
		seen = 1;

		uint32_t h = hash_name(s, nlen) & hmask;
		int dup = 0;

		for (uint32_t slot; (slot = out->hash[h]); h = (h + 1) & hmask) {
			const char *o = out->names[slot - 1];

			if (strlen(o) == nlen && !memcmp(o, s, nlen)) {
				dup = 1;
				break;
			}
		}
		if (dup) {
			if (!out->ndup++)
				out->dup_line = line;
			continue;
		}
		if (out->n >= ETXT_MAX_COUNTERS)
			return fail(out, err, errlen, -E2BIG, line,
				    "more than %u counters", ETXT_MAX_COUNTERS);
		/* Names fit: the pool holds len + 1 bytes, names come from buf
		 * and each line adds at most its own length plus the NUL that
		 * replaces its '\n' or the final extra byte. */
		char *dst = out->pool + pool_used;

		memcpy(dst, s, nlen);
		dst[nlen] = '\0';
		pool_used += nlen + 1;
		out->names[out->n] = dst;
		out->lens[out->n] = (uint16_t)nlen;
		out->vals[out->n] = val;
		out->hash[h] = ++out->n;
	}
	if (!out->n)
		return fail(out, err, errlen, -EINVAL, 0, "no counters");
	return 0;
}

void etxt_free(struct etxt *e)
{
	if (!e)
		return;
	free(e->pool);
	free(e->names);
	free(e->vals);
	free(e->lens);
	free(e->hash);
	memset(e, 0, sizeof(*e));
}
