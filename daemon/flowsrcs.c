/* flowsrcs: per-port and host flow sources, and routing to ports. */
#include "daemon/flowsrcs.h"
#include "collectors/flow_engine.h"
#include "collectors/flow_sockdiag.h"
#include "collectors/flowtrack_api.h"
#include "daemon/conf.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#define ADDR_REFRESH_NS (2000000000ull)
#define MAX_ADDRS 16

struct psrc {                           /* flow sources of one port */
	struct psrc *next;
	unsigned long serial;
	struct port *p;
	struct sockdiag *sd;
	struct flowtrack *ft;
	int ft_ifindex;
	char sd_err[256], ft_err[256];
	struct in6_addr addr[MAX_ADDRS];
	unsigned naddr;
	uint64_t addr_ns;
	int alive;
};

struct flowsrcs {
	struct loop *loop;
	struct ports *ports;
	struct psrc *psrcs;
	struct flow_engine *fe;
	char flows_dir[4096];
	char fe_err[256];
	int bpf_ok;                     /* -1 unknown, 0 unsupported, 1 ok */
};

struct flowsrcs *flowsrcs_new(struct loop *l, struct ports *ps)
{
	struct flowsrcs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->loop = l;
	fs->ports = ps;
	fs->bpf_ok = -1;
	return fs;
}

static void psrc_close(struct psrc *ps)
{
	if (ps->sd)
		sockdiag_close(ps->sd);
	ps->sd = NULL;
	if (ps->ft)
		flowtrack_detach(ps->ft);
	ps->ft = NULL;
	ps->naddr = 0;
}

static void fe_close(struct flowsrcs *fs)
{
	if (!fs->fe)
		return;
	loop_del_fd(fs->loop, flow_engine_fd(fs->fe));
	flow_engine_close(fs->fe);
	fs->fe = NULL;
}

void flowsrcs_free(struct flowsrcs *fs)
{
	if (!fs)
		return;
	while (fs->psrcs) {
		struct psrc *ps = fs->psrcs;

		fs->psrcs = ps->next;
		psrc_close(ps);
		free(ps);
	}
	fe_close(fs);
	free(fs);
}

static void fe_cb(int fd, uint32_t events, void *arg)
{
	struct flowsrcs *fs = arg;

	(void)fd;
	(void)events;
	flow_engine_handle(fs->fe);
}

void flowsrcs_configure(struct flowsrcs *fs, const struct conf *c)
{
	int want_engine = 0;

	for (unsigned i = 0; i < c->nports; i++)
		if (c->ports[i].track & TRACK_ENGINE)
			want_engine = 1;
	util_strlcpy(fs->flows_dir, c->flows_dir, sizeof(fs->flows_dir));
	if (fs->fe && !want_engine)
		fe_close(fs);
	if (!fs->fe && want_engine) {
		fs->fe = flow_engine_open(c->flows_dir, fs->fe_err, sizeof(fs->fe_err));
		if (!fs->fe)
			log_warnx("engine flow tables unavailable: %s", fs->fe_err);
		else if (loop_add_fd(fs->loop, flow_engine_fd(fs->fe), EPOLLIN, fe_cb, fs) < 0)
			log_warn("engine flow tables: watching %s", c->flows_dir);
	}
}

static int addr_is_port(const struct psrc *ps, const struct in6_addr *a)
{
	if (!ps->naddr)
		return -1;      /* unknown: accept */
	for (unsigned i = 0; i < ps->naddr; i++)
		if (!memcmp(&ps->addr[i], a, sizeof(*a)))
			return 1;
	return 0;
}

static void addr_cb(int family, const char *text, unsigned prefixlen, void *arg)
{
	struct psrc *ps = arg;
	struct in6_addr a;

	(void)prefixlen;
	if (ps->naddr >= MAX_ADDRS)
		return;
	if (family == AF_INET) {
		struct in_addr v4;

		if (inet_pton(AF_INET, text, &v4) != 1)
			return;
		memset(&a, 0, sizeof(a));
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(&a.s6_addr[12], &v4, 4);
	} else if (inet_pton(AF_INET6, text, &a) != 1)
		return;
	ps->addr[ps->naddr++] = a;
}

static struct psrc *psrc_for(struct flowsrcs *fs, struct port *p)
{
	struct psrc *ps;

	for (ps = fs->psrcs; ps; ps = ps->next)
		if (ps->p == p && ps->serial == port_serial(p))
			return ps;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->p = p;
	ps->serial = port_serial(p);
	ps->next = fs->psrcs;
	fs->psrcs = ps;
	return ps;
}

/* Open or close each port's flow sources to match its state. */
static void psrc_sync(struct flowsrcs *fs, uint64_t now)
{
	struct psrc **pp;

	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		ps->alive = 0;
	for (unsigned i = 0; i < ports_count(fs->ports); i++) {
		struct port *p = ports_at(fs->ports, i);
		const struct port_conf *pc = port_conf(p);
		struct psrc *ps = psrc_for(fs, p);
		char err[256];

		if (!ps)
			continue;
		ps->alive = 1;
		if (port_state(p) != PORT_UP || !pc->ifname[0]) {
			if (ps->sd || ps->ft)
				psrc_close(ps);
			continue;
		}
		if (ps->ft && ps->ft_ifindex != port_ifindex(p)) {
			flowtrack_detach(ps->ft);
			ps->ft = NULL;
		}
		if (!ps->naddr || now - ps->addr_ns > ADDR_REFRESH_NS) {
			ps->naddr = 0;
			ps->addr_ns = now;
			nl_addr_dump(port_nsfd(p), port_ifindex(p), addr_cb, ps, err, sizeof(err));
		}
		if ((pc->track & TRACK_SOCK) && !ps->sd) {
			ps->sd = sockdiag_open(port_nsfd(p), err, sizeof(err));
			if (!ps->sd && strcmp(err, ps->sd_err)) {
				log_warnx("port %s: sock_diag unavailable: %s", pc->name, err);
				util_strlcpy(ps->sd_err, err, sizeof(ps->sd_err));
			}
		}
		if ((pc->track & TRACK_BPF) && !ps->ft && fs->bpf_ok != 0) {
			flowtrack_cleanup_stale(port_nsfd(p), port_ifindex(p), err, sizeof(err));
			ps->ft = flowtrack_attach(port_nsfd(p), port_ifindex(p), pc->sel, pc->nsel,
						  0, err, sizeof(err));
			if (ps->ft) {
				ps->ft_ifindex = port_ifindex(p);
				ps->ft_err[0] = 0;
				fs->bpf_ok = 1;
			} else if (strcmp(err, ps->ft_err)) {
				log_warnx("port %s: eBPF flow tracker unavailable, using the other flow sources: %s",
					  pc->name, err);
				util_strlcpy(ps->ft_err, err, sizeof(ps->ft_err));
			}
		}
	}
	for (pp = &fs->psrcs; *pp;) {
		struct psrc *ps = *pp;

		if (!ps->alive) {
			psrc_close(ps);
			*pp = ps->next;
			free(ps);
		} else
			pp = &ps->next;
	}
}

struct route {
	struct flowsrcs *fs;
	struct psrc *ps;        /* NULL: engine tables (port by address) */
	flowsrcs_emit_fn emit;
	void *arg;
};

static void route_cb(const struct flow_obs *o, void *arg)
{
	struct route *r = arg;
	const char *port = NULL;

	if (r->ps) {
		/* a socket of the namespace may belong to another interface */
		if (o->src == FLOW_SRC_SOCK && addr_is_port(r->ps, &o->key.saddr) == 0)
			return;
		port = port_name(r->ps->p);
	} else {
		/* engine flow: the port that owns its local address */
		for (struct psrc *q = r->fs->psrcs; q && !port; q = q->next) {
			const struct port_conf *pc = port_conf(q->p);

			if ((pc->track & TRACK_ENGINE) && addr_is_port(q, &o->key.saddr) == 1 &&
			    flow_sel_match(pc->sel, pc->nsel, &o->key))
				port = pc->name;
		}
		if (!port)
			port = "-";
	}
	r->emit(o, port, r->arg);
}

void flowsrcs_poll(struct flowsrcs *fs, uint64_t now, flowsrcs_emit_fn emit, void *arg)
{
	struct route r = { fs, NULL, emit, arg };

	psrc_sync(fs, now);
	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next) {
		const struct port_conf *pc = port_conf(ps->p);
		char err[256];

		r.ps = ps;
		if (ps->sd && sockdiag_poll(ps->sd, pc->sel, pc->nsel, route_cb, &r,
					    err, sizeof(err)) < 0) {
			if (strcmp(err, ps->sd_err)) {
				log_warnx("port %s: sock_diag: %s", pc->name, err);
				util_strlcpy(ps->sd_err, err, sizeof(ps->sd_err));
			}
		}
		if (ps->ft && flowtrack_poll(ps->ft, route_cb, &r) < 0)
			log_debug("port %s: flow tracker poll failed", pc->name);
	}
	if (fs->fe) {
		r.ps = NULL;
		flow_engine_poll(fs->fe, route_cb, &r);
	}
}

static void table_cb(const char *path, const char *engine, int pid, unsigned records,
		     const char *problem, void *arg)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "path", path);
	jx_add_str(o, "engine", engine);
	jx_add_int(o, "pid", pid);
	jx_add_int(o, "records", records);
	if (problem)
		jx_add_str(o, "problem", problem);
	json_object_array_add(arg, o);
}

void flowsrcs_status(const struct flowsrcs *fs, struct json_object *out)
{
	struct json_object *t = json_object_new_array();

	jx_add_str(out, "dir", fs->flows_dir);
	if (fs->fe)
		flow_engine_tables(fs->fe, table_cb, t);
	else if (fs->fe_err[0])
		jx_add_str(out, "error", fs->fe_err);
	json_object_object_add(out, "tables", t);
}
