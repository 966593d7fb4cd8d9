/* util: typed, range-checked parsers and small string helpers. */
#ifndef NICSTALL_UTIL_H
#define NICSTALL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Each returns 0, or -1 with a message in err naming the range. */
int util_parse_u64(const char *s, uint64_t *v, uint64_t min, uint64_t max,
		   char *err, size_t errlen);
/* "250ms", "2s", "1.5s", "10us", "3m"; bare numbers are seconds. */
int util_parse_duration(const char *s, uint64_t *ns, uint64_t min_ns,
			uint64_t max_ns, char *err, size_t errlen);
/* "64k", "10M", "1G" (powers of 1024), bare numbers are bytes. */
int util_parse_size(const char *s, uint64_t *bytes, uint64_t min, uint64_t max,
		    char *err, size_t errlen);
int util_parse_bool(const char *s, int *v, char *err, size_t errlen);

/* "1.500s", "250ms", "12us" for a duration in ns. */
const char *util_fmt_duration(uint64_t ns, char *buf, size_t len);
/* printf into err[errlen] (nothing when err is NULL or errlen 0); a long
 * message is cut. The one error-message helper: modules fill caller
 * buffers with it instead of snprintf, which -Wformat-truncation flags. */
void util_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Strip leading and trailing blanks in place; returns s. */
char *util_strip(char *s);
/* snprintf that never overflows and returns the string. */
size_t util_strlcpy(char *dst, const char *src, size_t size);

/* The connection a flow tuple ("tcp A:p -> B:q") belongs to, the same for
 * both of its directions: "tcp A:p <-> B:q" with the endpoints in byte
 * order. A string that is not such a tuple is its own connection. */
void util_conn_key(const char *tuple, char *out, size_t len);
/* Read a whole small file (at most max bytes) into a NUL-terminated buffer. */
char *util_read_file(const char *path, size_t max, size_t *len);
/* The same into buf (at most size - 1 bytes, NUL-terminated), for /proc
 * and sysfs files read often: no allocation. Opened O_NONBLOCK (a FIFO
 * never waits). Returns the length, or -1 with errno. */
ssize_t util_read_buf(const char *path, char *buf, size_t size);
/* The same for path beneath dirfd (openat(2); AT_FDCWD: as above). */
ssize_t util_read_buf_at(int dirfd, const char *path, char *buf, size_t size);
/* When process pid started (/proc/PID/stat field 22, clock ticks since
 * boot); 0 when it cannot be read (gone, or no such pid). With the pid it
 * names one process: a pid reused by another starts at another time. */
unsigned long long util_proc_start(int pid);
/* The one filter for text that reaches people (a terminal above all):
 * valid UTF-8 passes; invalid UTF-8 (the byte 0x9B, a C1 CSI, among it)
 * and every control character (C0 but tab and newline, DEL, C1 U+0080..
 * U+009F, the bidirectional embeddings, overrides and isolates) becomes
 * '?', one per character, one per byte when invalid.
 * util_utf8_clean: a malloc'd copy of s[0..len) (NULL on ENOMEM). */
char *util_utf8_clean(const char *s, size_t len);
/* The filter's classifier, for writers with escapes of their own (the
 * report's HTML): the character at s[0..len) (len > 0), its length in *n
 * (1 for a byte that is not valid UTF-8), and what it is: text, a control
 * (tab and newline are controls: the caller decides), invalid, or a valid
 * start cut short by len. */
enum { UTIL_CH_TEXT, UTIL_CH_CONTROL, UTIL_CH_INVALID, UTIL_CH_SHORT };
int util_utf8_char(const char *s, size_t len, size_t *n);
/* The same written to f: at most max characters of s[0..len), tab and
 * newline kept only when lines is set (one-line fields). 0, or -1 when f
 * has an error. */
int util_term_put(FILE *f, const char *s, size_t len, size_t max, int lines);
/* A stream that writes everything through the filter to descriptor fd
 * (tab and newline kept; a character cut between two writes is joined,
 * one still cut when the stream is closed is '?'). NULL on ENOMEM. */
FILE *util_term_fdopen(int fd);
/* stdout and stderr replaced by such streams on descriptors 1 and 2
 * (closed at exit): for a program all of whose output is for people or
 * quotes what others wrote (nicstallctl). 0, or -1 when out of memory. */
int util_term_std(void);
/* A configuration list: val split at blanks, tabs and commas into at most
 * max words of fewer than width bytes, copied into out (max rows of width
 * bytes). The number of words (at least 1), or -1 with err naming key. */
int util_split_list(const char *key, const char *val, char *out, size_t width,
		    unsigned max, char *err, size_t errlen);
/* Is s a safe name ([A-Za-z0-9_.-]{1,max}, not "." or "..")? */
int util_valid_name(const char *s, size_t max);

#endif
