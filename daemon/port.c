/* port: interface lifecycle, sources and sampling (port_int.h; the
 * accessors and JSON views are port_view.c's). */
#include "daemon/port.h"
#include "daemon/port_int.h"
#include "collectors/counters/devlink_health.h"
#include "collectors/counters/ident.h"
#include "collectors/counters/rdma_disc.h"
#include "collectors/counters/src_kernel.h"
#include "collectors/counters/src_host.h"
#include "collectors/counters/src_app.h"
#include "collectors/counters/src_shared.h"
#include "daemon/recorder.h"
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/rtnl.h"
#include "lib/util.h"
#include "probes/kmsg.h"

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *port_state_name(enum port_state s)
{
	return s == PORT_UP ? "up" : "down";
}

#define KMSG_LINES 64

/* The device's lines in the kernel's ring when the port opens: the
 * driver's since boot while the ring holds them (seed 000's "fw query
 * isn't supported by the FW" comes at the first query of the device, long
 * before a stall, and a stall's 30 s window never holds it). One read of
 * /dev/kmsg to its end, without waiting, at open only. */
static void read_kmsg(struct port *p)
{
	struct kmsg_line *l = calloc(KMSG_LINES, sizeof(*l));
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t more = 0;
	char err[256];
	int n = l ? kmsg_device_lines(p->conf.ifname, p->ident->bus_info, l, KMSG_LINES, &more,
				      err, sizeof(err)) : -1;

	if (!l)
		util_strlcpy(err, "out of memory", sizeof(err));
	if (n < 0)
		jx_add_str(o, "error", err);
	for (int i = 0; i < n; i++) {
		char line[KMSG_LINE_MAX + 32];

		/* dmesg's form: seconds since boot, to the microsecond */
		snprintf(line, sizeof(line), "[%5" PRIu64 ".%06" PRIu64 "] %s",
			 l[i].ts_us / 1000000u, l[i].ts_us % 1000000u, l[i].text);
		json_object_array_add(a, json_object_new_string(line));
	}
	json_object_object_add(o, "lines", a);
	if (more)
		jx_add_u64(o, "more", more);
	free(l);
	json_object_put(p->kmsg);
	p->kmsg = o;
}

/* Every slot's source closed, and what its row holds beside it. */
static void shut_all(struct port *p)
{
	for (unsigned i = 0; i < p->nsrc; i++) {
		if (p->kinds[i].shut)
			p->kinds[i].shut(p);
		port_src_shut(&p->src[i]);
	}
}

static const char *ns_label(const struct port *p)
{
	return p->conf.netns[0] ? p->conf.netns : "(own)";
}

/* Take the port down (or keep it down) for the reason given. A reason
 * that came from a link event (removed, renamed) is kept while retries
 * fail with the less telling "not found". */
__attribute__((format(printf, 3, 4)))
static void port_down_v(struct port *p, int sticky, const char *fmt, ...)
{
	char why[sizeof(p->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (p->state == PORT_DOWN && p->reason_sticky && !sticky)
		return;
	p->reason_sticky = sticky;
	shut_all(p);
	if (p->state == PORT_UP || strcmp(p->reason, why)) {
		log_event(LOG_EV_PORT_DOWN, LOG_WARNING,
			  LOG_FIELDS({ LF_PORT, p->conf.name }, { LF_REASON, why }),
			  "port %s: down: %s", p->conf.name, why);
		p->since_ns = loop_mono_ns();
	}
	p->state = PORT_DOWN;
	util_strlcpy(p->reason, why, sizeof(p->reason));
}

#define port_set_down(p, ...) port_down_v(p, 0, __VA_ARGS__)
#define port_gone(p, ...) port_down_v(p, 1, __VA_ARGS__)

static void link_event(const struct nl_link *l, int event, void *arg)
{
	struct port *p = arg;

	if (!p->conf.ifname[0])
		return;
	if (event == NL_LINK_ADDR) {
		if (l->ifindex == p->ifindex)
			p->addr_gen++;
		return;
	}
	if (event == NL_LINK_RESYNC) {
		struct nl_link cur;
		char err[256];

		p->addr_gen++;          /* an address event may be among those lost */
		if (p->state == PORT_UP &&
		    nl_link_get(p->nsfd, p->conf.ifname, 0, &cur, err, sizeof(err)) < 0)
			port_set_down(p, "interface %s: %s", p->conf.ifname, err);
		else if (p->state == PORT_UP && cur.ifindex != p->ifindex)
			/* removed and made again among the events lost: the
			 * name is another link's (the resync's NL_LINK_NEW
			 * for it brings the port up on it) */
			port_gone(p, "interface %s was removed and re-created (ifindex %d, now %d; "
				  "netns %s) while link events were lost",
				  p->conf.ifname, p->ifindex, cur.ifindex, ns_label(p));
		else if (p->state == PORT_DOWN)
			port_try_up(p);
		return;
	}
	if (p->state == PORT_UP && l->ifindex == p->ifindex) {
		if (event == NL_LINK_DEL) {
			port_gone(p, "interface %s was removed (netns %s)",
				      p->conf.ifname, ns_label(p));
			return;
		}
		if (strcmp(l->ifname, p->conf.ifname)) {
			port_gone(p, "interface %s was renamed to %s (netns %s)",
				      p->conf.ifname, l->ifname, ns_label(p));
			return;
		}
		if ((l->flags ^ p->ifflags) & (IFF_UP | IFF_PROMISC | IFF_RUNNING))
			log_info("port %s: link flags 0x%x -> 0x%x", p->conf.name,
				 p->ifflags, l->flags);
		if ((l->flags ^ p->ifflags) & (IFF_UP | IFF_RUNNING)) {
			unsigned k = p->nlev++ % PORT_LINK_EVENTS;

			p->lev[k].mono_ns = loop_mono_ns();
			p->lev[k].flags = l->flags;
		}
		p->ifflags = l->flags;
		return;
	}
	if (p->state == PORT_DOWN && event == NL_LINK_NEW &&
	    !strcmp(l->ifname, p->conf.ifname))
		port_try_up(p);
}

static void mon_cb(int fd, uint32_t events, void *arg)
{
	struct port *p = arg;

	(void)fd;
	(void)events;
	if (nl_mon_dispatch(p->mon, link_event, p) < 0) {
		/* the namespace is gone or the socket broke: start over */
		loop_del_fd(p->loop, nl_mon_fd(p->mon));
		nl_mon_close(p->mon);
		p->mon = NULL;
		port_set_down(p, "link monitor for netns %s failed", ns_label(p));
	}
}

void port_set_host(struct port *p, const struct host_opts *o)
{
	struct port_src *ps = &p->src[SLOT_HOST];
	struct host_opts *n;

	if (p->host && o && !memcmp(p->host, o, sizeof(*o)))
		return;
	n = o ? malloc(sizeof(*n)) : NULL;
	if (o && !n) {
		log_errx("port %s: out of memory for the host resources' options", p->conf.name);
		return;
	}
	if (n)
		*n = *o;
	free(p->host);
	p->host = n;
	port_src_shut(ps);
	port_src_shut(&p->src[SLOT_APP]);
	if (p->state == PORT_UP && p->nsrc > SLOT_APP) {
		p->kinds[SLOT_HOST].open(p, ps, NULL);
		p->kinds[SLOT_APP].open(p, &p->src[SLOT_APP], NULL);
	}
}

void port_host_watch(struct port *p, const int *pids, unsigned n)
{
	if (p->src[SLOT_HOST].open)
		src_shared_watch(&p->src[SLOT_HOST].s, pids, n, src_host_watch);
}

void port_try_up(struct port *p)
{
	struct src_ctx ctx = { 0 };
	struct nl_link link;
	char err[256];

	if (p->state == PORT_UP)
		return;
	if (p->conf.netns[0] && p->nsfd < 0) {
		p->nsfd = netns_open(p->conf.netns);
		if (p->nsfd < 0) {
			port_set_down(p, "network namespace '%s': %s", p->conf.netns,
				      strerror(errno));
			return;
		}
	}
	if (p->conf.ifname[0] && !p->mon) {
		p->mon = nl_mon_open(p->nsfd, err, sizeof(err));
		if (!p->mon) {
			port_set_down(p, "link monitor in netns %s: %s", ns_label(p), err);
			return;
		}
		if (loop_add_fd(p->loop, nl_mon_fd(p->mon), EPOLLIN, mon_cb, p) < 0) {
			nl_mon_close(p->mon);
			p->mon = NULL;
			port_set_down(p, "link monitor: %s", strerror(errno));
			return;
		}
		loop_fd_name(p->loop, nl_mon_fd(p->mon), "link monitor");
	}
	if (p->conf.ifname[0]) {
		if (nl_link_get(p->nsfd, p->conf.ifname, 0, &link, err, sizeof(err)) < 0) {
			port_set_down(p, "interface %s not found in netns %s: %s",
				      p->conf.ifname, ns_label(p), err);
			return;
		}
		p->ifindex = link.ifindex;
		p->ifflags = link.flags;
	}

	/* identity: recorded `ethtool -i` text, else the live device */
	memset(p->ident, 0, sizeof(*p->ident));
	if (p->conf.info_file[0]) {
		if (ident_load_file(p->conf.info_file, p->ident, err, sizeof(err)) < 0)
			log_warnx("port %s: identity: %s", p->conf.name, err);
	} else if (p->conf.ifname[0]) {
		if (ident_query(p->nsfd, p->conf.ifname, p->sysfs_root,
				p->conf.rdma_dev[0] && strcmp(p->conf.rdma_dev, "none") ?
				p->conf.rdma_dev : NULL, p->ident, err, sizeof(err)) < 0)
			log_warnx("port %s: identity: %s", p->conf.name, err);
	}
	p->profile = p->conf.profile != PROFILE_AUTO ? p->conf.profile :
		     conf_profile_for_driver(p->ident->driver);
	read_kmsg(p);

	/* RDMA device: configured, or the one whose port belongs to ifname */
	p->rdma_dev[0] = 0;
	p->rdma_port = 0;
	if (!strcmp(p->conf.rdma_dev, "none")) {
		;
	} else if (p->conf.rdma_dev[0]) {
		util_strlcpy(p->rdma_dev, p->conf.rdma_dev, sizeof(p->rdma_dev));
		p->rdma_port = p->conf.rdma_port ? p->conf.rdma_port : 1;
	} else if (p->conf.ifname[0]) {
		unsigned port = 0;

		if (rdma_disc_for_netdev(p->sysfs_root, p->conf.ifname, p->rdma_dev,
					 sizeof(p->rdma_dev), &port) == 0)
			p->rdma_port = p->conf.rdma_port ? p->conf.rdma_port : port;
		else
			p->rdma_dev[0] = 0;
	}

	ctx.port_name = p->conf.name;
	ctx.ifname = p->conf.ifname;
	ctx.ifindex = p->ifindex;
	ctx.netns_fd = p->nsfd;
	ctx.sysfs_root = p->sysfs_root;
	ctx.rdma_dev = p->rdma_dev[0] ? p->rdma_dev : NULL;
	ctx.rdma_port = p->rdma_port;
	ctx.text_file = p->conf.stats_file[0] ? p->conf.stats_file : NULL;

	for (unsigned i = 0; i < p->nsrc; i++) {
		memset(&p->src[i].s, 0, sizeof(p->src[i].s));
		p->src[i].open = 0;
		p->kinds[i].open(p, &p->src[i], &ctx);
	}

	p->state = PORT_UP;
	p->reason[0] = 0;
	p->reason_sticky = 0;
	p->since_ns = loop_mono_ns();
	p->addr_gen++;          /* its addresses are read anew (port_addr_gen) */
	log_event(LOG_EV_PORT_UP, LOG_INFO, LOG_FIELDS({ LF_PORT, p->conf.name }),
		  "port %s: up: %s%s%s ifindex %d driver %s firmware %s%s%s profile %s%s%s",
		 p->conf.name, p->conf.ifname[0] ? p->conf.ifname : "(recorded)",
		 p->conf.netns[0] ? " netns " : "", p->conf.netns, p->ifindex,
		 p->ident->driver[0] ? p->ident->driver : "?",
		 p->ident->fw_version[0] ? p->ident->fw_version : "?",
		 p->ident->psid[0] ? " psid " : "", p->ident->psid,
		 conf_profile_name(p->profile),
		 p->rdma_dev[0] ? " rdma " : "", p->rdma_dev);
}

struct port *port_new(const struct port_conf *pc, const char *sysfs_root,
		      unsigned rec_cap, struct loop *loop)
{
	return port_new_with(pc, sysfs_root, rec_cap, loop, port_src_kinds, NSLOTS);
}

struct port *port_new_with(const struct port_conf *pc, const char *sysfs_root,
			   unsigned rec_cap, struct loop *loop,
			   const struct port_src_kind *kinds, unsigned nkinds)
{
	struct port *p = nkinds <= REC_MAX_SRC ? calloc(1, sizeof(*p)) : NULL;
	static unsigned long serials;

	if (!p)
		return NULL;
	p->conf = *pc;
	p->serial = ++serials;
	p->sysfs_root = sysfs_root ? sysfs_root : "";
	p->nsfd = -1;
	p->loop = loop;
	p->kinds = kinds;
	p->nsrc = nkinds;
	p->ident = calloc(1, sizeof(*p->ident));
	p->rec = rec_new(rec_cap, nkinds);
	if (!p->ident || !p->rec) {
		port_free(p);
		return NULL;
	}
	util_strlcpy(p->reason, "starting", sizeof(p->reason));
	port_try_up(p);
	return p;
}

void port_free(struct port *p)
{
	if (!p)
		return;
	shut_all(p);
	if (p->mon) {
		loop_del_fd(p->loop, nl_mon_fd(p->mon));
		nl_mon_close(p->mon);
	}
	if (p->nsfd >= 0)
		close(p->nsfd);
	free(p->host);
	json_object_put(p->kmsg);
	rec_free(p->rec);
	free(p->ident);
	free(p);
}

void port_sample(struct port *p, uint64_t mono_ns, uint64_t real_ns, int record)
{
	struct clayout *lays[REC_MAX_SRC] = { 0 };
	const uint64_t *vals[REC_MAX_SRC] = { 0 };
	uint64_t t0 = loop_mono_ns();
	int gone = 0;

	if (p->state == PORT_DOWN) {
		port_try_up(p);
		if (p->state == PORT_DOWN)
			return;
	}
	/* each read costed on the CPU clock itself, not shared by wall time
	 * (cost_round): a counter read may sleep on the NIC's firmware (mlx5's
	 * ethtool statistics, RDMA hw_counters, devlink), and a sweep is
	 * once a second */
	for (unsigned i = 0; i < p->nsrc; i++) {
		struct port_src *ps = &p->src[i];
		struct clayout *l;
		const uint64_t *v;
		uint64_t c0;
		int rc;

		if (!ps->open)
			continue;
		ps->reads++;
		c0 = cost_cpu_ns();
		rc = ps->s.ops->read(&ps->s, &l, &v);
		cost_add(&ps->cost, cost_cpu_ns() - c0, mono_ns);
		if (rc < 0) {
			ps->errors++;
			if (!ps->failed || strcmp(ps->why, ps->s.err)) {
				util_strlcpy(ps->why, ps->s.err[0] ? ps->s.err :
					     strerror(-rc), sizeof(ps->why));
				log_warnx("port %s: source %s: %s", p->conf.name,
					  ps->s.ops->name, ps->why);
			}
			ps->failed = 1;
			/* only the interface's own sources' loss is its
			 * (port_src_kind.of_ifname) */
			if (rc == -ENODEV && p->conf.ifname[0] && p->kinds[i].of_ifname)
				gone = 1;
			continue;
		}
		if (ps->failed)
			log_info("port %s: source %s: reading again", p->conf.name,
				 ps->s.ops->name);
		ps->failed = 0;
		/* a source may succeed partially (some RDMA files unreadable) */
		util_strlcpy(ps->why, ps->s.err, sizeof(ps->why));
		if (ps->lay != l) {
			clayout_unref(ps->lay);
			ps->lay = clayout_ref(l);
		}
		ps->vals = v;
		lays[i] = l;
		vals[i] = v;
	}
	if (gone) {
		struct nl_link l;
		char err[256];

		/* the read may come before the link monitor's event: ask the
		 * kernel what became of our ifindex, so the reason is the same
		 * whichever is seen first */
		if (nl_link_get(p->nsfd, NULL, p->ifindex, &l, err, sizeof(err)) == 0 &&
		    strcmp(l.ifname, p->conf.ifname))
			port_gone(p, "interface %s was renamed to %s (netns %s)",
				  p->conf.ifname, l.ifname, ns_label(p));
		else
			port_gone(p, "interface %s disappeared (netns %s)", p->conf.ifname,
				  ns_label(p));
		return;
	}
	p->samples++;
	p->last_sample_ns = mono_ns;
	if (record) {
		uint64_t c0 = cost_cpu_ns();

		if (rec_push(p->rec, mono_ns, real_ns, lays, vals) < 0)
			p->sample_errors++;
		cost_add(&p->rec_cost, cost_cpu_ns() - c0, mono_ns);
	}
	p->sample_cost_ns = loop_mono_ns() - t0;
	p->sample_cost_total_ns += p->sample_cost_ns;
}
