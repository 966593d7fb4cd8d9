/* log: one logging module for the daemon and the client.
 * stderr with sd-daemon "<N>" priority prefixes when not on a terminal-less
 * systemd journal stream; the journal backend drops in here later. */
#ifndef NICSTALL_LOG_H
#define NICSTALL_LOG_H

#include <syslog.h>

void log_init(const char *ident, int prefix_priorities);
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

#endif
