/* service: what the daemon tells its service manager (sd_notify(3)):
 * READY, RELOADING (with MONOTONIC_USEC) and READY again, STOPPING, a STATUS
 * line kept current, and the watchdog.
 *
 * The watchdog: when systemd set WatchdogSec= (sd_watchdog_enabled(3)),
 * WATCHDOG=1 is sent at half the interval from a timer of the daemon's own
 * event loop, so a loop that is wedged (a blocking call, an endless walk)
 * stops the pings and systemd restarts the daemon. Without a service
 * manager (no NOTIFY_SOCKET) every call is a no-op. */
#ifndef NICSTALL_SERVICE_H
#define NICSTALL_SERVICE_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct service;

/* The text of STATUS=, asked once a second; sent when it changed. */
typedef void (*service_status_fn)(char *buf, size_t len, void *arg);

struct service *service_new(struct loop *l, service_status_fn status, void *arg);
void service_free(struct service *s);
void service_ready(struct service *s);
void service_reloading(struct service *s);
/* After a reload: READY=1 and a STATUS saying how it went (NULL: running). */
void service_reloaded(struct service *s, const char *failure);
void service_stopping(struct service *s);
/* The watchdog interval systemd asked for, in microseconds (0: none). */
uint64_t service_watchdog_usec(const struct service *s);

#endif
