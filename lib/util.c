/* util: parsers and helpers. */
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int util_parse_u64(const char *s, uint64_t *v, uint64_t min, uint64_t max,
		   char *err, size_t errlen)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || !isdigit((unsigned char)*s)) {
		snprintf(err, errlen, "'%s' is not a number", s ? s : "");
		return -1;
	}
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end) {
		snprintf(err, errlen, "'%s' is not a number", s);
		return -1;
	}
	if (x < min || x > max) {
		snprintf(err, errlen, "%s is out of range %" PRIu64 "..%" PRIu64,
			 s, min, max);
		return -1;
	}
	*v = x;
	return 0;
}

static int parse_scaled(const char *s, double *x, const char **unit)
{
	char *end;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	*x = strtod(s, &end);
	if (errno || end == s || *x < 0)
		return -1;
	*unit = end;
	return 0;
}

int util_parse_duration(const char *s, uint64_t *ns, uint64_t min_ns,
			uint64_t max_ns, char *err, size_t errlen)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 },
		{ "ns", 1 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	const char *unit;
	double x;
	char a[32], b[32];

	if (parse_scaled(s, &x, &unit) < 0)
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].u))
			continue;
		x *= units[i].mul;
		if (x > 1e19 || (uint64_t)x < min_ns || (uint64_t)x > max_ns) {
			snprintf(err, errlen, "%s is out of range %s..%s", s,
				 util_fmt_duration(min_ns, a, sizeof(a)),
				 util_fmt_duration(max_ns, b, sizeof(b)));
			return -1;
		}
		*ns = (uint64_t)x;
		return 0;
	}
bad:
	snprintf(err, errlen, "'%s' is not a duration (like 250ms, 2s, 1m)",
		 s ? s : "");
	return -1;
}

int util_parse_size(const char *s, uint64_t *bytes, uint64_t min, uint64_t max,
		    char *err, size_t errlen)
{
	const char *unit;
	double x, mul = 1;

	if (parse_scaled(s, &x, &unit) < 0)
		goto bad;
	if (!*unit || !strcasecmp(unit, "b"))
		mul = 1;
	else if (!strcasecmp(unit, "k") || !strcasecmp(unit, "kb") || !strcasecmp(unit, "kib"))
		mul = 1024.0;
	else if (!strcasecmp(unit, "m") || !strcasecmp(unit, "mb") || !strcasecmp(unit, "mib"))
		mul = 1024.0 * 1024;
	else if (!strcasecmp(unit, "g") || !strcasecmp(unit, "gb") || !strcasecmp(unit, "gib"))
		mul = 1024.0 * 1024 * 1024;
	else
		goto bad;
	x *= mul;
	if (x > 1e19 || (uint64_t)x < min || (uint64_t)x > max) {
		snprintf(err, errlen, "%s is out of range %" PRIu64 "..%" PRIu64
			 " bytes", s, min, max);
		return -1;
	}
	*bytes = (uint64_t)x;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a size (like 512k, 64M)", s ? s : "");
	return -1;
}

int util_parse_bool(const char *s, int *v, char *err, size_t errlen)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcmp(s, "1") ||
	    !strcasecmp(s, "on")) {
		*v = 1;
		return 0;
	}
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcmp(s, "0") ||
	    !strcasecmp(s, "off")) {
		*v = 0;
		return 0;
	}
	snprintf(err, errlen, "'%s' is not yes or no", s);
	return -1;
}

const char *util_fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull && ns % 1000000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "s", (uint64_t)(ns / 1000000000ull));
	else if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1000000ull && ns % 1000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "ms", (uint64_t)(ns / 1000000ull));
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%" PRIu64 "us", (uint64_t)(ns / 1000ull));
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

void util_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

char *util_strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

size_t util_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;

		memcpy(dst, src, c);
		dst[c] = 0;
	}
	return n;
}

char *util_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* a FIFO: no wait */
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;

			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

ssize_t util_read_buf(const char *path, char *buf, size_t size)
{
	return util_read_buf_at(AT_FDCWD, path, buf, size);
}

ssize_t util_read_buf_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd, e;
	size_t n = 0;

	if (!size) {
		errno = EINVAL;
		return -1;
	}
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

int util_valid_name(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return 0;
	return 1;
}

/* A NUL-terminated copy of s[0..len) with every invalid UTF-8 sequence and
 * control character (but tab and newline) replaced by '?': the C0 controls
 * (NUL, BEL, BS, CR, ESC, ...), DEL, and the C1 controls U+0080..U+009F
 * (UTF-8 C2 80..C2 9F; a terminal may take U+009B as CSI), so text from an
 * engine, a device or a probe cannot drive the terminal it is shown on. */
char *util_utf8_clean(const char *s, size_t len)
{
	char *o = malloc(len + 1);
	size_t i = 0, j = 0;

	if (!o)
		return NULL;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		int ok = n > 0 && i + n <= len && c != 0 && !(n == 2 && c < 0xc2) &&
			 !(n == 4 && c > 0xf4);

		for (size_t k = 1; ok && k < n; k++)
			if (((unsigned char)s[i + k] & 0xc0) != 0x80)
				ok = 0;
		if (ok && n == 3) {
			unsigned char d = (unsigned char)s[i + 1];

			if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d >= 0xa0))
				ok = 0;
		}
		if (ok && n == 4) {
			unsigned char d = (unsigned char)s[i + 1];

			if ((c == 0xf0 && d < 0x90) || (c == 0xf4 && d >= 0x90))
				ok = 0;
		}
		if (!ok) {
			o[j++] = '?';
			i++;
			continue;
		}
		if ((n == 1 && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)) ||
		    (n == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0)) {
			o[j++] = '?';
			i += n;
			continue;
		}
		memcpy(o + j, s + i, n);
		i += n;
		j += n;
	}
	o[j] = '\0';
	return o;
}

unsigned long long util_proc_start(int pid)
{
	char path[32], txt[1024], *p;
	unsigned long long start = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (util_read_buf(path, txt, sizeof(txt)) <= 0)
		return 0;
	/* the name in parentheses may hold anything: fields follow the last ')' */
	p = strrchr(txt, ')');
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}
