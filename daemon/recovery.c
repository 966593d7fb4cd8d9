/* recovery: reprogram policy and rate limit. */
#include "daemon/recovery.h"
#include "daemon/conf.h"
#include "daemon/port.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/reprogram.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PORTS 32

struct recovery {
	const struct conf *c;
	recovery_toggle_fn toggle;
	int reprogramming;
	struct { char port[32]; uint64_t at; } last[MAX_PORTS];
	unsigned nlast;
};

struct recovery *recovery_new(const struct conf *c, recovery_toggle_fn toggle)
{
	struct recovery *r = calloc(1, sizeof(*r));

	if (r) {
		r->c = c;
		r->toggle = toggle ? toggle : reprogram_toggle;
	}
	return r;
}

void recovery_free(struct recovery *r)
{
	free(r);
}

void recovery_configure(struct recovery *r, const struct conf *c)
{
	r->c = c;
}

__attribute__((format(printf, 3, 4)))
static int refuse(const struct port *p, struct json_object *o, const char *fmt, ...)
{
	char msg[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jx_add_str(o, "error", msg);
	log_event(LOG_EV_REPROGRAM_REFUSED, LOG_WARNING,
		  LOG_FIELDS({ LF_PORT, port_name(p) }, { LF_ACTION, "reprogram" }, { LF_REASON, msg }),
		  "port %s: reprogram refused: %s", port_name(p), msg);
	return -1;
}

int recovery_reprogram(struct recovery *r, struct port *p, struct json_object *o, int manual)
{
	const struct port_conf *pc = port_conf(p);
	uint64_t now = loop_mono_ns();
	char err[512];
	unsigned i;
	int rc;

	jx_add_str(o, "port", pc->name);
	jx_add_bool(o, "manual", manual);
	if (!pc->recover)
		return refuse(p, o, "recover = reprogram is not set for port %s", pc->name);
	if (port_state(p) != PORT_UP || !pc->ifname[0])
		return refuse(p, o, "port %s is down (%s)", pc->name, port_reason(p));
	if (r->reprogramming)
		return refuse(p, o, "another reprogram is running");
	for (i = 0; i < r->nlast; i++)
		if (!strcmp(r->last[i].port, pc->name) && now - r->last[i].at < r->c->reprogram_every_ns)
			return refuse(p, o, "rate limit: last reprogram of %s %.1f s ago (reprogram_interval %.0f s)",
				      pc->name, (double)(now - r->last[i].at) / 1e9,
				      (double)r->c->reprogram_every_ns / 1e9);
	r->reprogramming = 1;
	rc = r->toggle(port_nsfd(p), pc->ifname, o, err, sizeof(err));
	r->reprogramming = 0;
	if (rc < 0)
		return refuse(p, o, "%s", err);
	for (i = 0; i < r->nlast; i++)
		if (!strcmp(r->last[i].port, pc->name))
			break;
	if (i == r->nlast && r->nlast < MAX_PORTS)
		util_strlcpy(r->last[r->nlast++].port, pc->name, sizeof(r->last[0].port));
	if (i < MAX_PORTS)
		r->last[i].at = now;
	log_event(LOG_EV_REPROGRAM_PERFORMED, LOG_INFO,
		  LOG_FIELDS({ LF_PORT, pc->name }, { LF_ACTION, "reprogram" },
			     { LF_REASON, manual ? "manual" : "investigation" }),
		  "port %s: receive filter reprogrammed (%s)", pc->name, jx_text(o, "sequence"));
	return 0;
}
