/* log: stderr with "<N>" priority prefixes (sd-daemon(3) convention). */
#include "lib/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *log_ident = "nicstalld";
static int log_prefix = 1;
static int log_level = LOG_INFO;

void log_init(const char *ident, int prefix_priorities)
{
	log_ident = ident;
	log_prefix = prefix_priorities;
}

void log_set_level(int lvl)
{
	log_level = lvl;
}

int log_get_level(void)
{
	return log_level;
}

static void log_v(int pri, int with_errno, const char *fmt, va_list ap)
{
	char buf[2048];
	int e = errno;
	size_t n;

	if (pri > log_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (with_errno && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(e));
	if (log_prefix)
		fprintf(stderr, "<%d>%s\n", pri, buf);
	else
		fprintf(stderr, "%s: %s\n", log_ident, buf);
	errno = e;
}

#define LOG_FN(fn, pri, err)                          \
	void fn(const char *fmt, ...)                 \
	{                                             \
		va_list ap;                           \
		va_start(ap, fmt);                    \
		log_v(pri, err, fmt, ap);             \
		va_end(ap);                           \
	}
LOG_FN(log_err, LOG_ERR, 1)
LOG_FN(log_errx, LOG_ERR, 0)
LOG_FN(log_warn, LOG_WARNING, 1)
LOG_FN(log_warnx, LOG_WARNING, 0)
LOG_FN(log_info, LOG_INFO, 0)
LOG_FN(log_debug, LOG_DEBUG, 0)

void log_msg(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v(pri, 0, fmt, ap);
	va_end(ap);
}
