/* service: sd_notify, STATUS and the watchdog, on the event loop. */
#include "daemon/service.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#define STATUS_EVERY_NS 1000000000ull

struct service {
	struct loop *loop;
	service_status_fn status_fn;
	void *arg;
	struct loop_timer *watchdog, *status;
	uint64_t wd_usec, pings;
	char last_status[256];
	char failure[200];              /* the last reload's error, until one works */
	int ready;
};

static void notify(const char *msg)
{
	int r = sd_notify(0, msg);

	if (r < 0)
		log_debug("sd_notify: %s", strerror(-r));
}

static void send_status(struct service *s, int force)
{
	char buf[256], msg[300];

	if (!s->status_fn || !s->ready)
		return;
	buf[0] = '\0';
	s->status_fn(buf, sizeof(buf), s->arg);
	if (s->failure[0]) {
		size_t n = strlen(buf);

		snprintf(buf + n, sizeof(buf) - n, "; last reload failed: %s", s->failure);
	}
	if (!force && !strcmp(buf, s->last_status))
		return;
	util_strlcpy(s->last_status, buf, sizeof(s->last_status));
	snprintf(msg, sizeof(msg), "STATUS=%s", buf);
	notify(msg);
}

static void watchdog_cb(struct loop_timer *t, void *arg)
{
	struct service *s = arg;

	(void)t;
	s->pings++;
	notify("WATCHDOG=1");
}

static void status_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	send_status(arg, 0);
}

struct service *service_new(struct loop *l, service_status_fn status, void *arg)
{
	struct service *s = calloc(1, sizeof(*s));
	uint64_t usec = 0;
	int r;

	if (!s)
		return NULL;
	s->loop = l;
	s->status_fn = status;
	s->arg = arg;
	/* > 0: WatchdogSec= is set for this very process (WATCHDOG_PID) */
	r = sd_watchdog_enabled(0, &usec);
	if (r < 0)
		log_warnx("watchdog: %s: ignored", strerror(-r));
	if (r > 0 && usec) {
		s->wd_usec = usec;
		s->watchdog = loop_timer_new(l, watchdog_cb, s);
		if (s->watchdog)
			loop_timer_name(s->watchdog, "service manager");
		if (!s->watchdog || loop_timer_set(s->watchdog, usec * 500ull, usec * 500ull) < 0) {
			log_err("watchdog timer");
			service_free(s);
			return NULL;
		}
		log_info("watchdog: WatchdogSec=%.3f s, pinging every %.3f s from the event loop",
			 (double)usec / 1e6, (double)usec / 2e6);
	}
	if (getenv("NOTIFY_SOCKET") && status) {
		s->status = loop_timer_new(l, status_cb, s);
		if (s->status) {
			loop_timer_name(s->status, "service manager");
			loop_timer_set(s->status, STATUS_EVERY_NS, STATUS_EVERY_NS);
		}
	}
	return s;
}

void service_free(struct service *s)
{
	if (!s)
		return;
	loop_timer_free(s->watchdog);
	loop_timer_free(s->status);
	free(s);
}

void service_ready(struct service *s)
{
	s->ready = 1;
	notify("READY=1");
	send_status(s, 1);
}

void service_reloading(struct service *s)
{
	char msg[128];

	(void)s;
	/* MONOTONIC_USEC: what Type=notify-reload expects with RELOADING=1 */
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64
		 "\nSTATUS=reloading the configuration", loop_mono_ns() / 1000u);
	notify(msg);
}

void service_reloaded(struct service *s, const char *failure)
{
	util_strlcpy(s->failure, failure ? failure : "", sizeof(s->failure));
	notify("READY=1");
	send_status(s, 1);
}

void service_stopping(struct service *s)
{
	(void)s;
	notify("STOPPING=1\nSTATUS=stopping");
}

uint64_t service_watchdog_usec(const struct service *s)
{
	return s->wd_usec;
}
