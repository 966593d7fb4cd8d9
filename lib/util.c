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

/* The one filter for text shown to people (util.h): the character at
 * s[0..len): its length in *n (1 for a byte that starts no valid sequence)
 * and its class. Invalid: not UTF-8 (overlong, surrogate, beyond U+10FFFF,
 * a stray continuation byte, NUL). Control: the C0 controls (BEL, BS, CR,
 * ESC, ...), DEL, the C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F; a
 * terminal may take U+009B as CSI, like the single byte 0x9B, which is
 * invalid here) and the bidirectional embeddings, overrides and isolates
 * U+202A..U+202E, U+2066..U+2069 (they reorder what is shown). Short: a
 * valid start cut by the end of s (the stream filter waits for the rest). */
enum { CH_TEXT = UTIL_CH_TEXT, CH_CONTROL = UTIL_CH_CONTROL, CH_INVALID = UTIL_CH_INVALID,
       CH_SHORT = UTIL_CH_SHORT };

static int utf8_char(const unsigned char *s, size_t len, size_t *n)
{
	unsigned char c = s[0];
	size_t k, want = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			 (c & 0xf8) == 0xf0 ? 4 : 0;

	*n = 1;
	if (!want || c == 0 || (want == 2 && c < 0xc2) || (want == 4 && c > 0xf4))
		return CH_INVALID;
	for (k = 1; k < want && k < len; k++)
		if ((s[k] & 0xc0) != 0x80)
			return CH_INVALID;
	if (want >= 3 && len >= 2 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
				      (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return CH_INVALID;
	if (len < want)
		return CH_SHORT;
	*n = want;
	if ((want == 1 && (c < 0x20 || c == 0x7f)) || (want == 2 && c == 0xc2 && s[1] < 0xa0) ||
	    (want == 3 && c == 0xe2 && ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
					(s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9))))
		return CH_CONTROL;
	return CH_TEXT;
}

int util_utf8_char(const char *s, size_t len, size_t *n)
{
	return utf8_char((const unsigned char *)s, len, n);
}

/* What util_term_* keep: text, and tab and newline when lines is set;
 * anything else is one '?' per character (per byte when invalid). */
static int term_keep(int cls, const char *s, int lines)
{
	return cls == CH_TEXT || (cls == CH_CONTROL && lines && (*s == '\n' || *s == '\t'));
}

char *util_utf8_clean(const char *s, size_t len)
{
	char *o = malloc(len + 1);
	size_t i = 0, j = 0, n;

	if (!o)
		return NULL;
	while (i < len) {
		int cls = utf8_char((const unsigned char *)s + i, len - i, &n);

		if (term_keep(cls, s + i, 1))
			memcpy(o + j, s + i, n);
		else
			o[j] = '?';
		j += term_keep(cls, s + i, 1) ? n : 1;
		i += n;
	}
	o[j] = '\0';
	return o;
}

int util_term_put(FILE *f, const char *s, size_t len, size_t max, int lines)
{
	size_t i = 0, n, chars = 0;

	while (s && i < len && chars < max) {
		int cls = utf8_char((const unsigned char *)s + i, len - i, &n);

		if (term_keep(cls, s + i, lines))
			fwrite(s + i, 1, n, f);
		else
			fputc('?', f);
		i += n;
		chars++;
	}
	return ferror(f) ? -1 : 0;
}

/* util_term_fdopen's stream: the bytes of a character cut by the end of
 * one write wait for the next. */
struct term_cookie {
	int fd;
	unsigned char held[4];
	size_t nheld;
};

static int term_out(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Filter buf[0..len) onto the descriptor; at the end (last) a held start
 * is shown as '?'. Output goes in chunks of out[]. */
static int term_filter(struct term_cookie *tc, const char *buf, size_t len, int last)
{
	char out[4096];
	size_t o = 0, i = 0;

	while (i < len || (last && tc->nheld)) {
		unsigned char ch[4];
		size_t have = tc->nheld, n, take;
		int cls;

		/* the held bytes and what follows them, at most one character */
		memcpy(ch, tc->held, have);
		take = len - i < 4 - have ? len - i : 4 - have;
		memcpy(ch + have, buf + i, take);
		cls = utf8_char(ch, have + take, &n);
		if (cls == CH_SHORT && !last) {
			memcpy(tc->held, ch, have + take);
			tc->nheld = have + take;
			i += take;
			break;
		}
		if (o + 4 > sizeof(out)) {
			if (term_out(tc->fd, out, o) < 0)
				return -1;
			o = 0;
		}
		if (term_keep(cls, (const char *)ch, 1)) {
			memcpy(out + o, ch, n);
			o += n;
		} else {
			out[o++] = '?';
		}
		/* n bytes used: first the held ones, then the new */
		if (n >= have) {
			i += n - have;
			tc->nheld = 0;
		} else {
			memmove(tc->held, tc->held + n, have - n);
			tc->nheld = have - n;
		}
	}
	return term_out(tc->fd, out, o);
}

static ssize_t term_write(void *cookie, const char *buf, size_t len)
{
	return term_filter(cookie, buf, len, 0) < 0 ? -1 : (ssize_t)len;
}

static int term_close(void *cookie)
{
	struct term_cookie *tc = cookie;
	int rc = term_filter(tc, "", 0, 1);

	free(tc);
	return rc;
}

FILE *util_term_fdopen(int fd)
{
	struct term_cookie *tc = calloc(1, sizeof(*tc));
	FILE *f;

	if (!tc)
		return NULL;
	tc->fd = fd;
	f = fopencookie(tc, "w", (cookie_io_functions_t){ .write = term_write, .close = term_close });
	if (!f)
		free(tc);
	return f;
}

static void term_std_close(void)
{
	fclose(stdout);
	fclose(stderr);
}

int util_term_std(void)
{
	FILE *o = util_term_fdopen(STDOUT_FILENO), *e = util_term_fdopen(STDERR_FILENO);

	if (!o || !e || atexit(term_std_close) != 0) {
		if (o)
			fclose(o);
		if (e)
			fclose(e);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	setvbuf(o, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 0);
	setvbuf(e, NULL, _IONBF, 0);
	stdout = o;
	stderr = e;
	return 0;
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

void util_conn_key(const char *tuple, char *out, size_t len)
{
	const char *sp = tuple ? strchr(tuple, ' ') : NULL, *arrow = sp ? strstr(sp, " -> ") : NULL;
	char a[128];
	const char *b;

	if (!len)
		return;
	/* "tcp -> b": the arrow at the first blank, no first address */
	if (!arrow || arrow <= sp || strchr(arrow + 4, ' ') || arrow - sp - 1 >= (long)sizeof(a)) {
		util_strlcpy(out, tuple ? tuple : "", len);
		return;
	}
	memcpy(a, sp + 1, (size_t)(arrow - sp - 1));
	a[arrow - sp - 1] = '\0';
	b = arrow + 4;
	if (strcmp(a, b) > 0)
		snprintf(out, len, "%.*s %s <-> %s", (int)(sp - tuple), tuple, b, a);
	else
		snprintf(out, len, "%.*s %s <-> %s", (int)(sp - tuple), tuple, a, b);
}

int util_split_list(const char *key, const char *val, char *out, size_t width,
		    unsigned max, char *err, size_t errlen)
{
	char *buf = strdup(val), *save = NULL;
	unsigned n = 0;

	if (!buf) {
		util_errf(err, errlen, "%s: out of memory", key);
		return -1;
	}
	for (char *w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
		if (n >= max || strlen(w) >= width) {
			util_errf(err, errlen, "%s: at most %u items of at most %zu characters",
				  key, max, width - 1);
			free(buf);
			return -1;
		}
		util_strlcpy(out + n++ * width, w, width);
	}
	free(buf);
	if (!n)
		util_errf(err, errlen, "%s: nothing given", key);
	return n ? (int)n : -1;
}
