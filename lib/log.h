/* log: one logging module for the daemon and the client.
 *
 * Where lines go is chosen once, by log_open():
 *   - the systemd journal, as structured entries (sd_journal_sendv), when
 *     standard error is the journal stream systemd connected
 *     (JOURNAL_STREAM names its device and inode, systemd.exec(5));
 *   - standard error with sd-daemon(3) "<N>" priority prefixes when it is a
 *     pipe or file (a supervisor that reads them);
 *   - plain "ident: message" lines on a terminal.
 *
 * Events (log_event) are the lines an operator acts on: each kind has its
 * own MESSAGE_ID (explained in systemd/nicstalld.catalog, `journalctl -x`)
 * and NICSTALL_* fields. A hook hears every event whatever the log level
 * (tests read them; the daemon's metrics are told by direct calls,
 * daemon/counts.h, made beside the events). */
#ifndef NICSTALL_LOG_H
#define NICSTALL_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

enum log_target { LOG_TO_PLAIN = 0, LOG_TO_PREFIXED, LOG_TO_JOURNAL };

/* Pick the target from standard error (see above). */
void log_open(const char *ident);
/* Force a target (tests, the client); prefix_priorities: LOG_TO_PREFIXED
 * when non-zero, else LOG_TO_PLAIN. */
void log_init(const char *ident, int prefix_priorities);
enum log_target log_get_target(void);
void log_set_level(int max_priority);       /* LOG_ERR .. LOG_DEBUG */
int log_get_level(void);

/* log_X appends ": strerror(errno)"; log_Xx does not. */
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_errx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- events ---- */

/* One kind per thing an operator acts on; the order is the table's in
 * log.c, and every kind's MESSAGE_ID is in systemd/nicstalld.catalog. */
enum log_ev {
	LOG_EV_PORT_UP,
	LOG_EV_PORT_DOWN,
	LOG_EV_FLOW_STALLED,
	LOG_EV_INCIDENT_OPENED,
	LOG_EV_INCIDENT_SUPPRESSED,
	LOG_EV_INCIDENT_ENDED,
	LOG_EV_FLOW_RELEASED,
	LOG_EV_REPROGRAM_PERFORMED,
	LOG_EV_REPROGRAM_REFUSED,
	LOG_EV_BUNDLE_WRITTEN,
	LOG_EV_BUNDLE_FAILED,
	LOG_EV_HOOK_RESULT,
	LOG_EV_HOOK_DROPPED,
	LOG_EV_RELOAD_OK,
	LOG_EV_RELOAD_FAILED,
	LOG_EV_RUN_FLAGGED,             /* a run's certificate is not clean (runs.h) */
	LOG_EV_COUNT
};

/* Journal field names of events (values are text). */
#define LF_PORT          "NICSTALL_PORT"
#define LF_INCIDENT      "NICSTALL_INCIDENT"
#define LF_INVESTIGATION "NICSTALL_INVESTIGATION"
#define LF_VERDICT       "NICSTALL_VERDICT"
#define LF_BUNDLE        "NICSTALL_BUNDLE"
#define LF_ACTION        "NICSTALL_ACTION"
#define LF_OUTCOME       "NICSTALL_OUTCOME"
#define LF_FLOW          "NICSTALL_FLOW"
#define LF_SOURCE        "NICSTALL_SOURCE"
#define LF_REASON        "NICSTALL_REASON"
#define LF_DURATION_MS   "NICSTALL_DURATION_MS"
#define LF_FLOWS         "NICSTALL_FLOWS"
#define LF_CONFIG        "NICSTALL_CONFIG"
#define LF_ERROR         "NICSTALL_ERROR"
#define LF_KERNEL_LOG    "NICSTALL_KERNEL_LOG"

struct log_field {
	const char *name;       /* LF_*, or any [A-Z0-9_] journal field name */
	const char *value;      /* NULL: the field is left out */
};

/* A field list for log_event, ended for it:
 *   log_event(LOG_EV_PORT_DOWN, LOG_WARNING,
 *             LOG_FIELDS({ LF_PORT, name }, { LF_REASON, why }), "...", ...); */
#define LOG_FIELDS(...) ((const struct log_field[]){ __VA_ARGS__, { NULL, NULL } })
/* A number as a field value, valid until the end of the enclosing full
 * expression's block: { LF_INCIDENT, LOG_U64(id) }. */
#define LOG_U64(v) log_fmt_u64((char[24]){ 0 }, (uint64_t)(v))
#define LOG_DBL(v) log_fmt_double((char[32]){ 0 }, (double)(v))
const char *log_fmt_u64(char *buf, uint64_t v);
const char *log_fmt_double(char *buf, double v);

/* Log an event of kind at priority: the message from fmt, the event's
 * MESSAGE_ID, NICSTALL_EVENT (its name) and fields (ended by a NULL name). */
void log_event(enum log_ev kind, int priority, const struct log_field *fields,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "port-up", "incident-opened", ...; NULL when out of range. */
const char *log_event_name(enum log_ev kind);
/* The 32 hex digits of its MESSAGE_ID. */
const char *log_event_id(enum log_ev kind);
/* The value of field name in fields, or NULL. */
const char *log_field_get(const struct log_field *fields, const char *name);

/* Every event, whatever the level, before it is written. One hook. */
typedef void (*log_event_fn)(enum log_ev kind, const struct log_field *fields, void *arg);
void log_set_event_hook(log_event_fn fn, void *arg);

#endif
