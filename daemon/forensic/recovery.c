/* recovery: reprogram policy, one at a time, rate limit. */
#include "daemon/forensic/recovery.h"
#include "collectors/counters/ident.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/port.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PORTS 32

static const struct reprogram_ops reprogram_real_ops = {
	reprogram_start, reprogram_result, reprogram_to_json, reprogram_free,
};

struct recovery {
	struct loop *loop;
	const struct conf *c;
	const struct reprogram_ops *ops;
	/* the one running: */
	struct reprogram *running;
	struct json_object *o;
	char port[32];
	int manual;
	recovery_done_fn done;
	void *arg;
	struct { char port[32]; uint64_t at; } last[MAX_PORTS];
	unsigned nlast;
};

struct recovery *recovery_new(struct loop *l, const struct conf *c,
			      const struct reprogram_ops *ops)
{
	struct recovery *r = calloc(1, sizeof(*r));

	if (r) {
		r->loop = l;
		r->c = c;
		r->ops = ops ? ops : &reprogram_real_ops;
	}
	return r;
}

void recovery_free(struct recovery *r)
{
	if (!r)
		return;
	if (r->running)
		r->ops->free(r->running);
	json_object_put(r->o);
	free(r);
}

void recovery_configure(struct recovery *r, const struct conf *c)
{
	r->c = c;
}

void recovery_cancel(struct recovery *r, void *arg)
{
	if (r->running && r->arg == arg)
		r->done = NULL;
}

__attribute__((format(printf, 3, 4)))
static int refuse(const char *port, struct json_object *o, const char *fmt, ...)
{
	char msg[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jx_add_str(o, "error", msg);
	count_reprogram(port, COUNT_RECOV_REFUSED);
	log_event(LOG_EV_REPROGRAM_REFUSED, LOG_WARNING,
		  LOG_FIELDS({ LF_PORT, port }, { LF_ACTION, "reprogram" }, { LF_OUTCOME, "refused" },
			     { LF_REASON, msg }),
		  "port %s: reprogram refused: %s", port, msg);
	return -1;
}

static void note_time(struct recovery *r, const char *port, uint64_t at)
{
	unsigned i;

	for (i = 0; i < r->nlast; i++)
		if (!strcmp(r->last[i].port, port))
			break;
	if (i == r->nlast && r->nlast < MAX_PORTS)
		util_strlcpy(r->last[r->nlast++].port, port, sizeof(r->last[0].port));
	if (i < MAX_PORTS)
		r->last[i].at = at;
}

static void finished(struct reprogram *rp, void *arg)
{
	struct recovery *r = arg;
	const struct reprogram_result *x = r->ops->result(rp);
	struct json_object *o = r->o;
	recovery_done_fn done = r->done;
	void *darg = r->arg;
	int performed = x->performed;
	char port[32];

	r->ops->to_json(rp, o);
	util_strlcpy(port, r->port, sizeof(port));
	/* a change was made to the port: that is what the rate limit counts */
	if (x->first_ns)
		note_time(r, port, x->start_ns);
	/* events: performed; refused (no crossing was possible: nothing
	 * changed); failed (a step went wrong, the flag was put back) */
	count_reprogram(port, x->performed ? COUNT_RECOV_PERFORMED :
			  x->refused[0] ? COUNT_RECOV_REFUSED : COUNT_RECOV_FAILED);
	if (x->performed)
		log_event(LOG_EV_REPROGRAM_PERFORMED, LOG_INFO,
			  LOG_FIELDS({ LF_PORT, port }, { LF_ACTION, "reprogram" },
				     { LF_OUTCOME, "performed" },
				     { LF_REASON, r->manual ? "manual" : "investigation" },
				     { LF_KERNEL_LOG, x->kmsg_readable ? (x->confirmed ?
				       "confirmed" : "unconfirmed") : "unreadable" }),
			  "port %s: receive filter reprogrammed (%s)%s", port,
			  x->sequence, x->kmsg_readable ? (x->confirmed ?
			  ", confirmed by the kernel log" : ", the kernel log did not show both crossings") : "");
	else if (x->refused[0])
		log_event(LOG_EV_REPROGRAM_REFUSED, LOG_WARNING,
			  LOG_FIELDS({ LF_PORT, port }, { LF_ACTION, "reprogram" },
				     { LF_OUTCOME, "refused" }, { LF_REASON, x->refused }),
			  "port %s: no reprogram: %s", port, x->refused);
	else
		log_event(LOG_EV_REPROGRAM_REFUSED, LOG_WARNING,
			  LOG_FIELDS({ LF_PORT, port }, { LF_ACTION, "reprogram" },
				     { LF_OUTCOME, "failed" },
				     { LF_REASON, x->error[0] ? x->error : "no transition" }),
			  "port %s: reprogram failed: %s", port, x->error[0] ? x->error : "no transition");
	r->ops->free(rp);
	r->running = NULL;
	r->o = NULL;
	r->done = NULL;
	if (done)
		done(o, performed, darg);
	else
		json_object_put(o);
}

int recovery_start(struct recovery *r, struct port *p, int manual, struct json_object *o,
		   recovery_done_fn done, void *arg)
{
	const struct port_conf *pc = port_conf(p);
	uint64_t now = loop_mono_ns();
	char err[512], nsd[PATH_MAX];

	jx_add_str(o, "port", pc->name);
	jx_add_bool(o, "manual", manual);
	if (!pc->recover)
		return refuse(pc->name, o, "recover = reprogram is not set for port %s", pc->name);
	if (port_state(p) != PORT_UP || !pc->ifname[0])
		return refuse(pc->name, o, "port %s is down (%s)", pc->name, port_reason(p));
	if (r->running)
		return refuse(pc->name, o, "another reprogram is running (port %s)", r->port);
	for (unsigned i = 0; i < r->nlast; i++)
		if (!strcmp(r->last[i].port, pc->name) && now - r->last[i].at < r->c->reprogram_every_ns)
			return refuse(pc->name, o,
				      "rate limit: last reprogram of %s %.1f s ago (reprogram_interval %.0f s)",
				      pc->name, (double)(now - r->last[i].at) / 1e9,
				      (double)r->c->reprogram_every_ns / 1e9);
	util_strlcpy(nsd, pc->netns, sizeof(nsd));
	r->running = r->ops->start(r->loop, port_nsfd(p), nsd, pc->ifname, port_ident(p)->bus_info,
				   r->c->reprogram_hold_ns, finished, r, err, sizeof(err));
	if (!r->running)
		return refuse(pc->name, o, "%s", err);
	r->o = o;
	r->done = done;
	r->arg = arg;
	r->manual = manual;
	util_strlcpy(r->port, pc->name, sizeof(r->port));
	return 0;
}
