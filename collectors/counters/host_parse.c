/* host_parse: the host source's parsers, pure functions of a file's text
 * (PSI, /proc/diskstats, /proc/PID/stat, schedstat and io, a cgroup's
 * key-value files and I/O limits; src_host.h). Fuzzed by fuzz_host. */
#include "collectors/counters/src_host.h"
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lines of a text, one at a time, empty ones skipped. */
struct lines {
	const char *p, *end;
	unsigned no;                /* the line's number, from 1 */
};

/* The next non-empty line into l (without its newline): 1, 0 at the end,
 * or -EINVAL with err naming a line longer than l. */
static int next_line(struct lines *L, char *l, size_t lsz, char *err, size_t errlen)
{
	while (L->p < L->end) {
		const char *nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
		size_t n = nl ? (size_t)(nl - L->p) : (size_t)(L->end - L->p);

		L->no++;
		if (n >= lsz) {
			util_errf(err, errlen, "line %u: too long", L->no);
			return -EINVAL;
		}
		memcpy(l, L->p, n);
		l[n] = 0;
		L->p += n + 1;
		if (n)
			return 1;
	}
	return 0;
}

static int parse_u64(const char *s, char **end, uint64_t *v)
{
	unsigned long long x;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, end, 10);
	if (errno)
		return -1;
	*v = x;
	return 0;
}

int host_parse_psi(const char *text, size_t len, uint64_t *some_us, uint64_t *full_us,
		   int *has_full, char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	int has_some = 0, rc;
	char l[256];

	*some_us = *full_us = 0;
	*has_full = 0;
	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		const unsigned line = L.no;
		const char *t;
		char *e;
		uint64_t v;
		int full;

		if (!strncmp(l, "some ", 5))
			full = 0;
		else if (!strncmp(l, "full ", 5))
			full = 1;
		else {
			util_errf(err, errlen, "line %u: neither \"some\" nor \"full\"", line);
			return -EINVAL;
		}
		t = strstr(l, " total=");
		if (!t || parse_u64(t + 7, &e, &v) < 0 || (*e && *e != ' ')) {
			util_errf(err, errlen, "line %u: no total=MICROSECONDS", line);
			return -EINVAL;
		}
		if ((full ? *has_full : has_some)) {
			util_errf(err, errlen, "line %u: a second \"%s\" line", line,
				  full ? "full" : "some");
			return -EINVAL;
		}
		if (full) {
			*full_us = v;
			*has_full = 1;
		} else {
			*some_us = v;
			has_some = 1;
		}
	}
	if (rc < 0)
		return rc;
	if (!has_some) {
		util_errf(err, errlen, "no \"some\" line");
		return -EINVAL;
	}
	return 0;
}

int host_parse_diskstats(const char *text, size_t len, host_dstat_fn cb, void *arg,
			 char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	int rc, given = 0;
	char l[512];

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		const unsigned line = L.no;
		struct host_dstat d;
		char *s = l, *e;
		int c = 0;

		memset(&d, 0, sizeof(d));
		if (sscanf(s, "%u %u %63s%n", &d.major, &d.minor, d.name, &c) != 3 || !c) {
			util_errf(err, errlen, "line %u: not \"MAJOR MINOR NAME\"", line);
			return -EINVAL;
		}
		/* the kernel writes '!' for a '/' in a name (cciss!c0d0): a name
		 * is a file name under /sys/block, never a path */
		for (const char *q = d.name; *q; q++)
			if (!isgraph((unsigned char)*q) || *q == '/') {
				util_errf(err, errlen, "line %u: device name has a control byte "
					  "or a '/'", line);
				return -EINVAL;
			}
		if (!strcmp(d.name, ".") || !strcmp(d.name, "..")) {
			util_errf(err, errlen, "line %u: device name '%s'", line, d.name);
			return -EINVAL;
		}
		s += c;
		if (*s && *s != ' ' && *s != '\t') {
			util_errf(err, errlen, "line %u: device name longer than 63", line);
			return -EINVAL;
		}
		while (d.n < HOST_DSTAT_N && parse_u64(s, &e, &d.v[d.n]) == 0) {
			d.n++;
			s = e;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		/* diskstats_show(): 11 fields, 15 with discards (4.18), 17 with
		 * flushes (5.5); more are newer fields, not read */
		if ((d.n != 11 && d.n != 15 && d.n != 17) || (*s && d.n != HOST_DSTAT_N)) {
			util_errf(err, errlen, "line %u (%s): %u numbers, not 11, 15 or 17%s",
				  line, d.name, d.n, *s && d.n < HOST_DSTAT_N ? " (a word in them)" : "");
			return -EINVAL;
		}
		given++;
		if (cb && cb(&d, arg) < 0)
			break;
	}
	return rc < 0 ? rc : given;
}

int host_parse_stat(const char *text, size_t len, struct host_pstat *out,
		    char *err, size_t errlen)
{
	const char *open, *close = NULL;
	char *e;
	unsigned field;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	open = memchr(text, '(', len);
	for (const char *q = text + len; q > text; q--)
		if (q[-1] == ')') {
			close = q - 1;
			break;
		}
	if (!open || !close || close < open || (size_t)(close - open - 1) >= sizeof(out->comm)) {
		util_errf(err, errlen, "no \"(comm)\" of at most 15 characters");
		return -EINVAL;
	}
	memcpy(out->comm, open + 1, (size_t)(close - open - 1));
	out->comm[close - open - 1] = 0;
	/* field 3 is the state; fields are counted from 1 (proc(5)) */
	{
		const char *s = close + 1, *end = text + len;
		char num[32];

		while (s < end && *s == ' ')
			s++;
		if (s >= end || !isalpha((unsigned char)*s)) {
			util_errf(err, errlen, "no state after the comm");
			return -EINVAL;
		}
		out->state = *s++;
		for (field = 4; field <= 42; field++) {
			size_t k = 0;

			while (s < end && *s == ' ')
				s++;
			while (s < end && *s != ' ' && *s != '\n' && k < sizeof(num) - 1)
				num[k++] = *s++;
			num[k] = 0;
			if (!k) {
				util_errf(err, errlen, "%u fields, not 42", field - 1);
				return -EINVAL;
			}
			if (field != 14 && field != 15 && field != 22 && field != 42)
				continue;
			if (parse_u64(num, &e, &v) < 0 || *e) {
				util_errf(err, errlen, "field %u: '%s' is not a number", field, num);
				return -EINVAL;
			}
			if (field == 14)
				out->utime = v;
			else if (field == 15)
				out->stime = v;
			else if (field == 22)
				out->starttime = v;
			else
				out->blkio_ticks = v;
		}
	}
	return 0;
}

int host_parse_schedstat(const char *text, size_t len, uint64_t *run_ns,
			 uint64_t *wait_ns, char *err, size_t errlen)
{
	char l[128], *e;
	uint64_t slices;

	if (len >= sizeof(l)) {
		util_errf(err, errlen, "longer than %zu bytes", sizeof(l) - 1);
		return -EINVAL;
	}
	memcpy(l, text, len);
	l[len] = 0;
	if (parse_u64(l, &e, run_ns) < 0 || parse_u64(e, &e, wait_ns) < 0 ||
	    parse_u64(e, &e, &slices) < 0 || (*e && *e != '\n')) {
		util_errf(err, errlen, "not \"RUN_NS WAIT_NS SLICES\"");
		return -EINVAL;
	}
	return 0;
}

int host_parse_io(const char *text, size_t len, struct host_pio *out,
		  char *err, size_t errlen)
{
	static const char *const keys[4] = { "read_bytes", "write_bytes", "syscr", "syscw" };
	uint64_t *dst[4] = { &out->read_bytes, &out->write_bytes, &out->syscr, &out->syscw };
	struct lines L = { text, text + len, 0 };
	unsigned seen = 0;
	char l[128];
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		char *colon, *e;
		uint64_t v;

		colon = strchr(l, ':');
		if (!colon || parse_u64(colon + 1, &e, &v) < 0 || *e) {
			util_errf(err, errlen, "line %u: not \"KEY: NUMBER\"", L.no);
			return -EINVAL;
		}
		*colon = 0;
		for (unsigned k = 0; k < 4; k++)
			if (!strcmp(l, keys[k])) {
				*dst[k] = v;
				seen |= 1u << k;
			}
	}
	if (rc < 0)
		return rc;
	for (unsigned k = 0; k < 4; k++)
		if (!(seen & (1u << k))) {
			util_errf(err, errlen, "no %s", keys[k]);
			return -EINVAL;
		}
	return 0;
}

int host_parse_kv(const char *text, size_t len, const char *key, uint64_t *v,
		  char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	size_t kl = strlen(key);
	char l[256];
	int rc;

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		char *e;

		if (strncmp(l, key, kl) || l[kl] != ' ')
			continue;
		if (parse_u64(l + kl + 1, &e, v) < 0 || (*e && *e != ' ')) {
			util_errf(err, errlen, "line %u: %s is not a number", L.no, key);
			return -EINVAL;
		}
		return 0;
	}
	return rc < 0 ? rc : -ENOENT;
}

int host_parse_iolimit(const char *text, size_t len, const char *kind, host_iolim_fn cb,
		       void *arg, char *err, size_t errlen)
{
	static const char *const keys[] = { "rbps", "wbps", "riops", "wiops" };
	struct lines L = { text, text + len, 0 };
	char l[256];
	int rc, n = 0;

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		unsigned maj, min;
		int off = 0;
		char *t, *save = NULL;

		if (sscanf(l, "%u:%u%n", &maj, &min, &off) != 2 || (l[off] != ' ' && l[off])) {
			util_errf(err, errlen, "line %u: no MAJ:MIN", L.no);
			return -EINVAL;
		}
		for (t = strtok_r(l + off, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			const char *k = kind, *val = t;
			char *eq = kind ? NULL : strchr(t, '='), *e;
			uint64_t v;
			size_t i;

			if (!kind) {
				if (!eq) {
					util_errf(err, errlen, "line %u: '%.32s' is not KEY=VALUE",
						  L.no, t);
					return -EINVAL;
				}
				*eq = 0;
				k = t;
				val = eq + 1;
				for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
					if (!strcmp(k, keys[i]))
						break;
				if (i == sizeof(keys) / sizeof(keys[0]))
					continue;       /* a key a later kernel adds */
			}
			if (!strcmp(val, "max"))
				continue;
			if (parse_u64(val, &e, &v) < 0 || *e) {
				util_errf(err, errlen, "line %u: %s is not a number", L.no, k);
				return -EINVAL;
			}
			cb(maj, min, k, v, arg);
			n++;
		}
	}
	return rc < 0 ? rc : n;
}
