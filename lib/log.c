/* log: the journal (structured entries), "<N>"-prefixed standard error, or
 * plain lines on a terminal; events with MESSAGE_IDs. */
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
/* CODE_FILE/LINE/FUNC would always name emit() below: left out */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

static const char *log_ident = "nicstalld";
static enum log_target log_target = LOG_TO_PREFIXED;
static int log_level = LOG_INFO;
static log_event_fn ev_hook;
static void *ev_hook_arg;

/* The events: name and MESSAGE_ID (journalctl --new-id128), in the order
 * of enum log_ev. systemd/nicstalld.catalog explains each id; a unit test
 * holds the two together. */
static const struct {
	const char *name;
	const char *id;
} events[LOG_EV_COUNT] = {
	[LOG_EV_PORT_UP]             = { "port-up", "6e79c6472e954f589521851b8119ee65" },
	[LOG_EV_PORT_DOWN]           = { "port-down", "471fb4bc2332423293f6a9a727587cec" },
	[LOG_EV_FLOW_STALLED]        = { "flow-stalled", "0ad66eeab5dd48eca3918825241e0adf" },
	[LOG_EV_INCIDENT_OPENED]     = { "incident-opened", "03d37ca90d044ac7b10ca273f24272c7" },
	[LOG_EV_INCIDENT_SUPPRESSED] = { "incident-suppressed", "c95f76c867f54a9192a3376efdb1a8ae" },
	[LOG_EV_INCIDENT_ENDED]      = { "incident-ended", "0b49832721cf4776b22b69171895be48" },
	[LOG_EV_FLOW_RELEASED]       = { "flow-released", "60264c8cf2b24ecca1013132ad870574" },
	[LOG_EV_REPROGRAM_PERFORMED] = { "reprogram-performed", "f20658e4471d4f20a1e0d64f16041fc5" },
	[LOG_EV_REPROGRAM_REFUSED]   = { "reprogram-refused", "92f7f4ec3eaa42ffb32ee012dcc56b50" },
	[LOG_EV_BUNDLE_WRITTEN]      = { "bundle-written", "2faa4d4979144cb5bfe6e21b230507cd" },
	[LOG_EV_BUNDLE_FAILED]       = { "bundle-failed", "446895162e0f490cb2d2a9f52b3b6ae0" },
	[LOG_EV_HOOK_RESULT]         = { "hook-result", "35978d86b69f4c359ff68688ac5cd45c" },
	[LOG_EV_HOOK_DROPPED]        = { "hook-dropped", "c1dbeeed45ed446082f6d4ac069ce262" },
	[LOG_EV_RELOAD_OK]           = { "reload-ok", "cb8cfe5ef4a3437cbdbe6a6446bd71a0" },
	[LOG_EV_RELOAD_FAILED]       = { "reload-failed", "1236334ab55444e29197acc48c786ee7" },
	[LOG_EV_RUN_FLAGGED]         = { "run-flagged", "5b0e5c2f8a7d4e61b3c9d7a4f1e6b208" },
};

void log_init(const char *ident, int prefix_priorities)
{
	log_ident = ident;
	log_target = prefix_priorities ? LOG_TO_PREFIXED : LOG_TO_PLAIN;
}

/* systemd.exec(5): JOURNAL_STREAM is "DEVICE:INODE" of the stream it
 * connected; only when standard error is still that stream do we write
 * to the journal directly (a redirected stderr wants the lines). */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!js || sscanf(js, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return 0;
	return fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_open(const char *ident)
{
	log_ident = ident;
	if (stderr_is_journal())
		log_target = LOG_TO_JOURNAL;
	else
		log_target = isatty(STDERR_FILENO) ? LOG_TO_PLAIN : LOG_TO_PREFIXED;
}

enum log_target log_get_target(void)
{
	return log_target;
}

void log_set_level(int lvl)
{
	log_level = lvl;
}

int log_get_level(void)
{
	return log_level;
}

const char *log_fmt_u64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

const char *log_fmt_double(char *buf, double v)
{
	snprintf(buf, 32, "%.3f", v);
	return buf;
}

const char *log_event_name(enum log_ev kind)
{
	return (unsigned)kind < LOG_EV_COUNT ? events[kind].name : NULL;
}

const char *log_event_id(enum log_ev kind)
{
	return (unsigned)kind < LOG_EV_COUNT ? events[kind].id : NULL;
}

const char *log_field_get(const struct log_field *fields, const char *name)
{
	for (; fields && fields->name; fields++)
		if (!strcmp(fields->name, name))
			return fields->value;
	return NULL;
}

void log_set_event_hook(log_event_fn fn, void *arg)
{
	ev_hook = fn;
	ev_hook_arg = arg;
}

/* ---- writing ---- */

#define MAX_IOV 40
#define ARENA 16384

struct jentry {
	struct iovec iov[MAX_IOV];
	int n;
	char arena[ARENA];
	size_t used;
};

/* One "NAME=value" field; a value that does not fit is cut. */
static void jadd(struct jentry *j, const char *name, const char *value)
{
	size_t room = ARENA - j->used, nl = strlen(name), vl = strlen(value);
	char *p = j->arena + j->used;

	if (j->n >= MAX_IOV || room < nl + 2)
		return;
	if (vl > room - nl - 1)
		vl = room - nl - 1;
	memcpy(p, name, nl);
	p[nl] = '=';
	memcpy(p + nl + 1, value, vl);
	j->iov[j->n].iov_base = p;
	j->iov[j->n].iov_len = nl + 1 + vl;
	j->n++;
	j->used += nl + 1 + vl;
}

/* One line on standard error. The message may quote what others wrote (a
 * peer's or an engine's name, a bundle's): it passes the terminal filter
 * as one line (util_term_put), so it neither drives a terminal nor starts
 * a line of its own ("<3>..." read by the journal as another entry). */
static void to_stderr(int pri, const char *msg)
{
	if (log_target == LOG_TO_PLAIN)
		fprintf(stderr, "%s: ", log_ident);
	else
		fprintf(stderr, "<%d>", pri);
	util_term_put(stderr, msg, strlen(msg), SIZE_MAX, 0);
	fputc('\n', stderr);
}

static void emit(int pri, const char *msg, int err, enum log_ev kind,
		 const struct log_field *fields)
{
	struct jentry *j;
	char num[24];

	if (log_target != LOG_TO_JOURNAL) {
		to_stderr(pri, msg);
		return;
	}
	j = malloc(sizeof(*j));
	if (!j) {
		to_stderr(pri, msg);
		return;
	}
	j->n = 0;
	j->used = 0;
	jadd(j, "MESSAGE", msg);
	snprintf(num, sizeof(num), "%d", pri);
	jadd(j, "PRIORITY", num);
	jadd(j, "SYSLOG_IDENTIFIER", log_ident);
	if (err) {
		snprintf(num, sizeof(num), "%d", err);
		jadd(j, "ERRNO", num);
	}
	if ((unsigned)kind < LOG_EV_COUNT) {
		jadd(j, "MESSAGE_ID", events[kind].id);
		jadd(j, "NICSTALL_EVENT", events[kind].name);
		for (; fields && fields->name; fields++)
			if (fields->value)
				jadd(j, fields->name, fields->value);
	}
	/* the journal gone (journald restarting): the stream still takes it */
	if (sd_journal_sendv(j->iov, j->n) < 0)
		to_stderr(pri, msg);
	free(j);
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
	emit(pri, buf, with_errno ? e : 0, LOG_EV_COUNT, NULL);
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

void log_event(enum log_ev kind, int pri, const struct log_field *fields, const char *fmt, ...)
{
	char buf[2048];
	int e = errno;
	va_list ap;

	if ((unsigned)kind >= LOG_EV_COUNT)
		return;
	if (ev_hook)
		ev_hook(kind, fields, ev_hook_arg);
	if (pri > log_level) {
		errno = e;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	emit(pri, buf, 0, kind, fields);
	errno = e;
}
