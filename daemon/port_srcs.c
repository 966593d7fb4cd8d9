/* port srcs: a port's counter sources, one row of port_src_kinds[] each
 * (port_int.h): how the slot's source opens (or why it does not), what it
 * adds to the port's status, whether its loss is the interface's, and what
 * it holds beside its src (the devlink health monitor). port.c opens every
 * row when the port comes up and reads them at each sample; it never
 * picks a source by slot. A new counter source is its collectors/counters/src_*.c
 * (a struct src_ops) and one row here. */
#include "daemon/port_int.h"
#include "collectors/counters/devlink_health.h"
#include "collectors/counters/ident.h"
#include "collectors/counters/src_app.h"
#include "collectors/counters/src_host.h"
#include "collectors/counters/src_kernel.h"
#include "collectors/counters/src_shared.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void devlink_shut(struct port *p)
{
	if (!p->dlmon)
		return;
	loop_del_fd(p->loop, dlh_mon_fd(p->dlmon));
	dlh_mon_close(p->dlmon);
	p->dlmon = NULL;
}

/* Close a source and forget its last reading. */
void port_src_shut(struct port_src *ps)
{
	if (ps->open && ps->s.ops->close)
		ps->s.ops->close(&ps->s);
	ps->open = 0;
	ps->failed = 0;
	ps->vals = NULL;
	clayout_unref(ps->lay);
	ps->lay = NULL;
}

/* After a source's open(): open, or why not (logged as "port P: what:
 * why"). Returns rc. */
static int src_opened(struct port *p, struct port_src *ps, int rc, const char *what)
{
	if (rc < 0) {
		snprintf(ps->why, sizeof(ps->why), "%s", ps->s.err[0] ? ps->s.err : strerror(-rc));
		log_warnx("port %s: %s: %s", p->conf.name, what, ps->why);
		return rc;
	}
	ps->open = 1;
	ps->why[0] = 0;
	return rc;
}

static void open_src(struct port *p, struct port_src *ps, const struct src_ops *ops,
		     const struct src_ctx *ctx)
{
	int rc;

	char what[64];

	memset(&ps->s, 0, sizeof(ps->s));
	ps->s.ops = ops;
	ps->open = 0;
	rc = ops->open(&ps->s, ctx);
	snprintf(what, sizeof(what), "source %s unavailable", ops->name);
	src_opened(p, ps, rc, what);
}

static void devlink_event(const struct dlh_reporter *r, void *arg)
{
	struct port *p = arg;
	const struct dlh_target *t = src_devlink_health_target(&p->src[SLOT_DEVLINK].s);
	struct dl_event *e;
	char hb[160];

	if (!t || !dlh_target_has(t, &r->h))
		return;                 /* another device's reporter */
	e = &p->dlev[p->ndlev++ % DEVLINK_EVENTS];
	e->mono_ns = loop_mono_ns();
	e->real_ns = loop_real_ns();
	e->rep = *r;
	log_warnx("port %s: devlink health: %s %s (%s, errors %llu, recovered %llu)",
		  p->conf.name, r->name, r->state ? "error" : "healthy",
		  dlh_handle_str(&r->h, hb, sizeof(hb)), (unsigned long long)r->error_count,
		  (unsigned long long)r->recover_count);
}

static void devlink_mon_cb(int fd, uint32_t events, void *arg)
{
	struct port *p = arg;
	char err[256];
	int rc;

	(void)fd;
	(void)events;
	rc = dlh_mon_dispatch(p->dlmon, devlink_event, p, err, sizeof(err));
	if (rc == -ENOBUFS) {
		p->dlev_lost = 1;
		log_warnx("port %s: devlink health events lost (receive queue full); "
			  "reading the reporters again", p->conf.name);
	} else if (rc < 0) {
		log_warnx("port %s: devlink health monitor: %s; closed", p->conf.name, err);
		devlink_shut(p);
		return;
	}
	if (rc != 0 && p->src[SLOT_DEVLINK].open)
		src_devlink_health_refresh(&p->src[SLOT_DEVLINK].s, NULL);
}

/* The devlink health source: the mlx5 profile (auto), always (on), or
 * recorded replies; a port without it runs on without it. */
static void open_devlink(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	const char *diag[CONF_MAX_DIAG + 1];
	struct dlh_opts o = {
		.fixture_dir = p->conf.devlink_replies[0] ? p->conf.devlink_replies : NULL,
		.record_dir = p->conf.devlink_record[0] ? p->conf.devlink_record : NULL,
		.bus_info = p->ident->bus_info[0] ? p->ident->bus_info : NULL,
		.diagnose = diag, .diagnose_every_ns = p->conf.devlink_every,
		.interval_ns = p->conf.devlink_ns,
	};
	char err[256];
	int rc;

	memset(&ps->s, 0, sizeof(ps->s));
	ps->open = 0;
	if (p->conf.devlink == CONF_DEVLINK_OFF || !p->conf.ifname[0] ||
	    (p->conf.devlink == CONF_DEVLINK_AUTO && !o.fixture_dir &&
	     p->profile != PROFILE_MLX5)) {
		snprintf(ps->why, sizeof(ps->why), "%s", p->conf.devlink == CONF_DEVLINK_OFF ?
			 "devlink = off" : !p->conf.ifname[0] ? "no interface" :
			 "not the mlx5 profile (devlink = on reads it anyway)");
		return;
	}
	for (unsigned i = 0; i < p->conf.ndiag; i++)
		diag[i] = p->conf.devlink_diag[i];
	diag[p->conf.ndiag] = NULL;
	ps->s.ops = &src_devlink_health_ops;
	rc = src_devlink_health_open(&ps->s, ctx, &o);
	if (src_opened(p, ps, rc, "no devlink health") < 0)
		return;
	if (o.fixture_dir)
		return;         /* recorded replies have no events */
	p->dlmon = src_devlink_health_mon_open(&ps->s, err, sizeof(err));
	if (!p->dlmon)
		log_warnx("port %s: devlink health events not watched: %s", p->conf.name, err);
	else if (loop_add_fd(p->loop, dlh_mon_fd(p->dlmon), EPOLLIN, devlink_mon_cb, p) < 0) {
		log_warn("port %s: devlink health monitor", p->conf.name);
		dlh_mon_close(p->dlmon);
		p->dlmon = NULL;
	} else {
		loop_fd_name(p->loop, dlh_mon_fd(p->dlmon), "devlink monitor");
	}
}

static int host_open_fn(struct src *inner, void *arg)
{
	return src_host_open(inner, arg);
}

static int app_open_fn(struct src *inner, void *arg)
{
	return src_app_open(inner, arg);
}

/* The host's resources (collectors/counters/src_host.h): in every port's
 * recorder, so the port's window and facts carry them; off with
 * [host] resources = off. One source for every port of the same options
 * and sysfs root (collectors/counters/src_shared.h): read once a sample, not once
 * a port; it reads every port's flow owners, each port keeps its own. */
static void open_host(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	struct src_host_ctx hc = { p->host, p->sysfs_root };
	struct { struct host_opts o; char root[PATH_MAX]; } *key;

	(void)ctx;       /* the host's and the producers', not the port's */
	memset(&ps->s, 0, sizeof(ps->s));
	ps->open = 0;
	if (!p->host || p->host->off) {
		snprintf(ps->why, sizeof(ps->why), "%s", p->host ? "[host] resources = off" :
			 "not configured");
		return;
	}
	if (!(key = calloc(1, sizeof(*key)))) {
		src_opened(p, ps, -ENOMEM, "no host resources");
		return;
	}
	key->o = *p->host;
	util_strlcpy(key->root, p->sysfs_root ? p->sysfs_root : "", sizeof(key->root));
	ps->s.ops = &src_host_ops;
	if (src_opened(p, ps, src_shared_open(&ps->s, key, sizeof(*key), host_open_fn, &hc),
		       "no host resources") == 0)
		src_shared_keep(&ps->s, src_host_keep);
	free(key);
}

/* The application's metrics (collectors/counters/src_app.h): the port's own
 * app_metrics endpoint and every producer's, in the port's recorder. */
static void open_app(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	struct app_endpoint ep[APP_MAX_ENDPOINTS];
	struct src_app_ctx ac = { p->loop, p->conf.name, ep, 0 };

	(void)ctx;       /* the host's and the producers', not the port's */
	/* the endpoints are the share's key, compared whole */
	memset(ep, 0, sizeof(ep));
	memset(&ps->s, 0, sizeof(ps->s));
	ps->open = 0;
	if (p->conf.app.url[0]) {
		util_strlcpy(ep[ac.nep].name, p->conf.name, sizeof(ep[0].name));
		ep[ac.nep++].conf = p->conf.app;
	}
	for (unsigned i = 0; p->host && i < p->host->nprod && ac.nep < APP_MAX_ENDPOINTS; i++)
		if (p->host->prod[i].app.url[0]) {
			util_strlcpy(ep[ac.nep].name, p->host->prod[i].name, sizeof(ep[0].name));
			ep[ac.nep++].conf = p->host->prod[i].app;
		}
	if (!ac.nep) {
		snprintf(ps->why, sizeof(ps->why), "no app_metrics endpoint configured");
		return;
	}
	/* ports with the same endpoints (the producers', no port's own)
	 * share one source: each endpoint is scraped once, not once a port */
	ps->s.ops = &src_app_ops;
	src_opened(p, ps, src_shared_open(&ps->s, ep, ac.nep * sizeof(ep[0]), app_open_fn, &ac),
		   "no application metrics");
}

/* the driver's counters: recorded `ethtool -S` text, else the ethtool
 * ioctl */
static void open_drv(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	open_src(p, ps, ctx->text_file ? &src_text_ops : &src_ethtool_ops, ctx);
}

/* a source of the interface's own: none without one */
static void open_of_ifname(struct port *p, struct port_src *ps, const struct src_ops *ops,
			   const struct src_ctx *ctx)
{
	if (ctx->ifname && ctx->ifname[0])
		open_src(p, ps, ops, ctx);
	else
		snprintf(ps->why, sizeof(ps->why), "no interface");
}

static void open_netdev(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	open_of_ifname(p, ps, &src_netdev_ops, ctx);
}

static void open_kernel(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	open_of_ifname(p, ps, &src_kernel_ops, ctx);
}

static void open_rdma(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	if (ctx->rdma_dev)
		open_src(p, ps, &src_rdma_ops, ctx);
	else
		snprintf(ps->why, sizeof(ps->why), "no RDMA device for this port");
}

static void devlink_json(const struct port *p, const struct port_src *ps, struct json_object *s)
{
	uint64_t q, total, last;

	src_devlink_health_cost(&ps->s, &q, &total, &last);
	jx_add_u64(s, "queries", q);
	jx_add_double(s, "last_query_us", (double)last / 1e3);
	jx_add_double(s, "mean_query_us", q ? (double)total / 1e3 / (double)q : 0);
	jx_add_bool(s, "events_watched", p->dlmon != NULL);
}

static void app_json(const struct port *p, const struct port_src *ps, struct json_object *s)
{
	(void)p;
	json_object_object_add(s, "endpoints", src_app_json(port_own_src((struct port_src *)ps),
							    0, 0));
}

/* The slots, in the recorder's order (the slot numbers are port_int.h's
 * SLOT_*: the views that read one source by name use them). The RDMA
 * and devlink devices outlive (or predate) the netdev, the host and the
 * application are not the port's: their ENODEV is not the interface's. */
const struct port_src_kind port_src_kinds[NSLOTS] = {
	[SLOT_DRV] = { "driver", open_drv, NULL, NULL, 1 },
	[SLOT_NETDEV] = { "netdev", open_netdev, NULL, NULL, 1 },
	[SLOT_RDMA] = { "rdma", open_rdma, NULL, NULL, 0 },
	[SLOT_KERNEL] = { "kernel", open_kernel, NULL, NULL, 1 },
	[SLOT_DEVLINK] = { "devlink", open_devlink, devlink_json, devlink_shut, 0 },
	[SLOT_HOST] = { "host", open_host, NULL, NULL, 0 },
	[SLOT_APP] = { "app", open_app, app_json, NULL, 0 },
};
