/* flowsrcs: per-port and host flow sources (flow_src_ops), and routing of
 * their observations to ports. */
#include "daemon/detect/flowsrcs.h"
#include "collectors/flows/claimv.h"
#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/flowtrack_api.h"
#include "daemon/conf.h"
#include "daemon/detect/liveness.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "lib/cost.h"
#include "daemon/detect/srcrun.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ADDR_RETRY_NS (2000000000ull)   /* a failed address dump, again */
#define MAX_ADDRS 16

static uint64_t rdmaqp_interval(const struct conf *c, const struct port_conf *pc)
{
	(void)c;
	return pc->rdmaqp_ns;
}

static uint64_t onload_interval(const struct conf *c, const struct port_conf *pc)
{
	(void)pc;
	return c->onload_ns;
}

static uint64_t vma_interval(const struct conf *c, const struct port_conf *pc)
{
	(void)pc;
	return c->vma_ns;
}

/* The sources: a row each (flowsrcs.h struct flowsrcs_row). Adding one is
 * its src_NAME.c (collectors/flows/) and a row here. */
static const struct flowsrcs_row port_rows[] = {
	{ &flow_src_sock_ops, TRACK_SOCK, "sock_diag", 0, NULL },
	{ &flow_src_bpf_ops, TRACK_BPF, "eBPF flow tracker", FSR_OPTIONAL, NULL },
	{ &flow_src_rdmaqp_ops, TRACK_RDMAQP, "RDMA queue pairs", FSR_READER, rdmaqp_interval },
}, host_rows[] = {
	{ &flow_src_engine_ops, TRACK_ENGINE, "engine flow tables", FSR_TABLES, NULL },
	{ &flow_src_onload_ops, TRACK_ONLOAD, "Onload stacks", FSR_READER, onload_interval },
	{ &flow_src_vma_ops, TRACK_VMA, "VMA/XLIO statistics", FSR_READER, vma_interval },
};
#define NROWS(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

struct fsrc {                           /* one source instance */
	struct flow_src s;
	int open;
	int ifindex;                    /* port sources: opened for this one */
	char logged[256];               /* the last error logged */
	struct cost cost;               /* CPU time of its polls, routing included */
	uint64_t round_ns;              /* this round's poll: its wall time, or
					 * its CPU time if ops->may_sleep */
	int polled;                     /* it ran (charged at the round's end) */
	int last_flows;                 /* what its last poll emitted (-1: failed) */
	struct flowsrcs *fs;            /* its registry (a wakeup goes there) */
};

struct psrc {                           /* the flow sources of one port */
	struct psrc *next;
	unsigned long serial;
	struct port *p;
	struct fsrc *src;               /* one per port row */
	struct in6_addr addr[MAX_ADDRS];
	unsigned naddr;
	uint64_t addr_ns;               /* the last dump's time; 0: none yet */
	unsigned long addr_gen;         /* port_addr_gen() at that dump */
	uint64_t addr_dumps;            /* made (status) */
	char addr_err[160];             /* the last dump's failure, "" none */
	uint64_t want_ns;               /* flowsrcs_want */
	int alive;
};

struct flowsrcs {
	struct loop *loop;
	struct ports *ports;
	struct psrc *psrcs;
	const struct flowsrcs_row *prow, *hrow;
	unsigned nport, nhost;
	/* the track word of the first host row of each kind (0: none), set
	 * once: a host flow's port is looked up by it at every observation */
	unsigned kind_track[16];
	struct fsrc *host;              /* one per host row */
	char flows_dir[4096];
	uint64_t poll_ns, stall_ns;     /* the detector's interval, default threshold */
	/* a host source's threshold: the least of any port's (its flows may
	 * be any port's, and it asks for its polls by it: a refresh) */
	uint64_t host_stall_ns;
	struct flow_src_runner run;     /* external tools (Onload) */
	uint64_t next_ns;               /* the last poll's: flowsrcs_next_ns */
	uint64_t slack_ns;              /* the next poll's (flowsrcs_set_slack) */
	flowsrcs_wake_fn wake;          /* a source's handle() asked for a poll */
	void *wake_arg;
	uint64_t wakes;
};

struct flowsrcs *flowsrcs_new(struct loop *l, struct ports *ps)
{
	return flowsrcs_new_with(l, ps, port_rows, NROWS(port_rows), host_rows, NROWS(host_rows));
}

struct flowsrcs *flowsrcs_new_with(struct loop *l, struct ports *ps,
				   const struct flowsrcs_row *prow, unsigned nport,
				   const struct flowsrcs_row *hrow, unsigned nhost)
{
	struct flowsrcs *fs = calloc(1, sizeof(*fs));

	if (!fs || !(fs->host = calloc(nhost ? nhost : 1, sizeof(*fs->host)))) {
		free(fs);
		return NULL;
	}
	fs->prow = prow;
	fs->nport = nport;
	fs->hrow = hrow;
	fs->nhost = nhost;
	for (unsigned i = nhost; i-- > 0;)
		if ((unsigned)hrow[i].ops->kind < sizeof(fs->kind_track) / sizeof(fs->kind_track[0]))
			fs->kind_track[hrow[i].ops->kind] = hrow[i].track;
	fs->loop = l;
	fs->ports = ps;
	fs->next_ns = UINT64_MAX;       /* no source has asked for anything */
	srcrun_init(&fs->run, l);
	return fs;
}

/* Log a source's error once for as long as it stays the same. */
static void note(struct fsrc *f, const char *port, const char *what, const char *verb)
{
	if (!strcmp(f->logged, f->s.err))
		return;
	util_strlcpy(f->logged, f->s.err, sizeof(f->logged));
	if (port)
		log_warnx("port %s: %s %s: %s", port, what, verb, f->s.err);
	else
		log_warnx("%s %s: %s", what, verb, f->s.err);
}

static void src_close(struct flowsrcs *fs, struct fsrc *f)
{
	if (!f->open)
		return;
	if (f->s.ops->fd && f->s.ops->fd(&f->s) >= 0)
		loop_del_fd(fs->loop, f->s.ops->fd(&f->s));
	f->s.ops->close(&f->s);
	f->open = 0;
}

static void src_handle(int fd, uint32_t events, void *arg)
{
	struct fsrc *f = arg;

	(void)fd;
	(void)events;
	f->s.wake = 0;
	f->s.ops->handle(&f->s);
	if (f->s.wake && f->fs && f->fs->wake) {
		f->fs->wakes++;
		f->fs->wake(f->fs->wake_arg);
	}
	f->s.wake = 0;
}

void flowsrcs_set_wake(struct flowsrcs *fs, flowsrcs_wake_fn fn, void *arg)
{
	fs->wake = fn;
	fs->wake_arg = arg;
}

static int src_open(struct flowsrcs *fs, struct fsrc *f, const struct flow_src_ops *ops,
		    const struct flow_src_ctx *ctx)
{
	memset(&f->s, 0, sizeof(f->s));
	f->s.ops = ops;
	f->fs = fs;
	if (ops->open(&f->s, ctx) < 0)
		return -1;
	f->open = 1;
	f->logged[0] = 0;
	if (ops->fd && ops->handle && ops->fd(&f->s) >= 0) {
		if (loop_add_fd(fs->loop, ops->fd(&f->s), EPOLLIN, src_handle, f) < 0)
			log_warn("%s: watching its fd", ops->name);
		else
			loop_fd_name(fs->loop, ops->fd(&f->s), ops->name);
	}
	return 0;
}

static void psrc_close(struct flowsrcs *fs, struct psrc *ps)
{
	for (unsigned k = 0; ps->src && k < fs->nport; k++)
		src_close(fs, &ps->src[k]);
	ps->naddr = 0;
	ps->addr_ns = 0;        /* asked again when the port comes back */
	ps->addr_err[0] = 0;
}

void flowsrcs_free(struct flowsrcs *fs)
{
	if (!fs)
		return;
	while (fs->psrcs) {
		struct psrc *ps = fs->psrcs;

		fs->psrcs = ps->next;
		psrc_close(fs, ps);
		free(ps->src);
		free(ps);
	}
	for (unsigned k = 0; k < fs->nhost; k++)
		src_close(fs, &fs->host[k]);
	free(fs->host);
	free(fs);
}

static int claim_route(void *arg, int src_kind, const struct flow_key *k);
static void psrc_sync(struct flowsrcs *fs, uint64_t now);

void flowsrcs_configure(struct flowsrcs *fs, const struct conf *c)
{
	struct flow_src_ctx ctx = {
		.netns_fd = -1, .dir = c->flows_dir, .run = &fs->run,
		.vma_dir = c->vma_dir, .xlio_dir = c->xlio_dir,
		.tools_dir = c->onload_tools[0] ? c->onload_tools : NULL,
		.claim_route = claim_route, .claim_route_arg = fs,
	};

	util_strlcpy(fs->flows_dir, c->flows_dir, sizeof(fs->flows_dir));
	fs->poll_ns = c->flow_interval_ns;
	fs->stall_ns = c->stall_ns;
	fs->host_stall_ns = conf_least_stall_ns(c);
	for (unsigned k = 0; k < fs->nhost; k++) {
		const struct flowsrcs_row *row = &fs->hrow[k];
		struct fsrc *f = &fs->host[k];
		int want = 0;

		ctx.interval_ns = row->interval_ns ? row->interval_ns(c, NULL) : 0;
		for (unsigned i = 0; i < c->nports; i++)
			if (c->ports[i].track & row->track)
				want = 1;
		if (f->open && !want)
			src_close(fs, f);
		if (!f->open && want && src_open(fs, f, row->ops, &ctx) < 0)
			note(f, NULL, row->what, "unavailable");
	}
	/* the ports' sources too, now rather than at the first poll: their
	 * BPF loads (libbpf parses the kernel's BTF at each, 10 MB for a
	 * moment) then come before the thread watch reads the kernel's
	 * symbol table (stall_configure opens it after this), not beside
	 * it, and a reload's sources change at once */
	psrc_sync(fs, loop_mono_ns());
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
	if (ps && !(ps->src = calloc(fs->nport ? fs->nport : 1, sizeof(*ps->src)))) {
		free(ps);
		ps = NULL;
	}
	if (!ps)
		return NULL;
	ps->p = p;
	ps->serial = port_serial(p);
	ps->next = fs->psrcs;
	fs->psrcs = ps;
	return ps;
}

/* Open or close one port's sources to match its state and configuration. */
static void psrc_sync_one(struct flowsrcs *fs, struct psrc *ps, uint64_t now)
{
	struct port *p = ps->p;
	const struct port_conf *pc = port_conf(p);
	struct flow_src_ctx ctx = {
		.port_name = pc->name, .ifname = pc->ifname, .ifindex = port_ifindex(p),
		.netns_fd = port_nsfd(p), .sel = pc->sel, .nsel = pc->nsel,
		.hooks_always = pc->tracker_hooks_always,
		.sock_paced = pc->sock_liveness == CONF_SOCK_PACED,
		.sock_events_any = pc->sock_liveness == CONF_SOCK_EVENTS,
		.tracker_attach = pc->tracker_attach == CONF_ATTACH_TCX ? FLOWTRACK_TCX :
				  pc->tracker_attach == CONF_ATTACH_CLSACT ? FLOWTRACK_CLSACT :
				  FLOWTRACK_AUTO,
		.replies_dir = pc->rdmaqp_replies[0] ? pc->rdmaqp_replies : NULL,
	};
	char err[256];

	ctx.rdma_dev = port_rdma_dev(p, &ctx.rdma_port);
	if (port_state(p) != PORT_UP || !pc->ifname[0]) {
		psrc_close(fs, ps);
		return;
	}
	/* the port's addresses: dumped when the port comes up and again
	 * only when the link monitor says they may have changed (an address
	 * event of its interface, or events lost: port_addr_gen), so a
	 * change shows at the next poll and nothing is asked while none
	 * comes; a dump that failed is tried again every ADDR_RETRY_NS */
	if (!ps->addr_ns || ps->addr_gen != port_addr_gen(p) ||
	    (ps->addr_err[0] && now - ps->addr_ns > ADDR_RETRY_NS)) {
		ps->naddr = 0;
		ps->addr_ns = now;
		ps->addr_gen = port_addr_gen(p);
		ps->addr_dumps++;
		ps->addr_err[0] = 0;
		if (nl_addr_dump(port_nsfd(p), port_ifindex(p), addr_cb, ps, err, sizeof(err)) < 0) {
			ps->naddr = 0;  /* unknown: every address accepted */
			util_strlcpy(ps->addr_err, err, sizeof(ps->addr_err));
		}
	}
	for (unsigned k = 0; k < fs->nport; k++) {
		const struct flowsrcs_row *row = &fs->prow[k];
		struct fsrc *f = &ps->src[k];

		/* an interface re-created under the same name: start over */
		if (f->open && f->ifindex != port_ifindex(p))
			src_close(fs, f);
		if (!(pc->track & row->track)) {
			src_close(fs, f);
			continue;
		}
		if (f->open)
			continue;
		ctx.interval_ns = row->interval_ns ? row->interval_ns(NULL, pc) : 0;
		if (src_open(fs, f, row->ops, &ctx) < 0)
			note(f, pc->name, row->what, row->flags & FSR_OPTIONAL ?
			     "unavailable, using the other flow sources" : "unavailable");
		else
			f->ifindex = port_ifindex(p);
	}
}

static void psrc_sync(struct flowsrcs *fs, uint64_t now)
{
	struct psrc **pp;

	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		ps->alive = 0;
	for (unsigned i = 0; i < ports_count(fs->ports); i++) {
		struct psrc *ps = psrc_for(fs, ports_at(fs->ports, i));

		if (!ps)
			continue;
		ps->alive = 1;
		psrc_sync_one(fs, ps, now);
	}
	for (pp = &fs->psrcs; *pp;) {
		struct psrc *ps = *pp;

		if (!ps->alive) {
			psrc_close(fs, ps);
			*pp = ps->next;
			free(ps->src);
			free(ps);
		} else
			pp = &ps->next;
	}
}

struct route {
	struct flowsrcs *fs;
	struct psrc *ps;        /* NULL: a host source (port by address) */
	flowsrcs_emit_fn emit;
	void *arg;
	struct cost_round cost; /* this poll's sources, costed (poll_one) */
	uint64_t next_ns;       /* the sources' next_ns, the earliest */
};

/* The port a host source's flow goes to: the one that owns its local
 * address, watches that source and selects the flow; NULL none. */
static struct psrc *host_port(const struct flowsrcs *fs, enum flow_src_kind src,
			      const struct flow_key *k)
{
	unsigned track = (unsigned)src < sizeof(fs->kind_track) / sizeof(fs->kind_track[0]) ?
			 fs->kind_track[src] : 0;

	for (struct psrc *q = fs->psrcs; q; q = q->next) {
		const struct port_conf *pc = port_conf(q->p);

		if ((pc->track & track) && addr_is_port(q, &k->saddr) == 1 &&
		    flow_sel_match(pc->sel, pc->nsel, k))
			return q;
	}
	return NULL;
}

/* claimv_route_fn: a claim is checked in the namespace of the port its
 * flow is routed to below (route_cb), decided the same way. */
static int claim_route(void *arg, int src_kind, const struct flow_key *k)
{
	struct psrc *q = host_port(arg, (enum flow_src_kind)src_kind, k);

	return q ? port_nsfd(q->p) : CLAIMV_NO_PORT;
}

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
		/* a host source's flow: the port that owns its local address and
		 * watches that source */
		struct psrc *q = host_port(r->fs, o->src, &o->key);

		port = q ? port_name(q->p) : "-";
	}
	r->emit(o, port, r->arg);
}

uint64_t flowsrcs_refresh_ns(uint64_t stall_ns, uint64_t poll_ns)
{
	uint64_t r = stall_ns > poll_ns ? stall_ns - poll_ns : 0;

	return r < FLOWSRCS_REFRESH_MAX_NS ? r : FLOWSRCS_REFRESH_MAX_NS;
}

/* One source's poll, timed as a unit of the round r->cost (its wall
 * time; its CPU time is charged when the round ends, cost_round_share),
 * or on the CPU clock itself if it may sleep in the kernel: the kernel's
 * work for it and the detector's for its observations. */
static void poll_one(struct fsrc *f, const char *port, const char *what, struct route *r,
		     uint64_t now, uint64_t stall_ns)
{
	int n;

	if (!f->open)
		return;
	/* evidence-only flows: at least once a refresh (flowsrc.h: the polling
	 * contract), so every threshold-long span holds a read, and a flow
	 * that moves counts as progressing over it (sibling counts) */
	f->s.sched = (struct flow_src_sched){
		.now_ns = now,
		.poll_ns = r->fs->poll_ns,
		.refresh_ns = flowsrcs_refresh_ns(stall_ns, r->fs->poll_ns),
		.stall_ns = stall_ns,
		.wanted_ns = r->ps ? r->ps->want_ns : 0,
		.slack_ns = r->fs->slack_ns,
	};
	if (f->s.ops->may_sleep) {
		cost_round_exact_start(&r->cost);
		n = f->s.ops->poll(&f->s, route_cb, r);
		f->round_ns = cost_round_exact_stop(&r->cost);
	} else {
		cost_round_lap(&r->cost);
		n = f->s.ops->poll(&f->s, route_cb, r);
		f->round_ns = cost_round_lap(&r->cost);
	}
	f->polled = 1;
	if (!f->s.sched.skipped)
		f->last_flows = n;
	/* a failed poll: when the source says (a lasting failure need not
	 * bring the regular polls back), at the next interval if it says
	 * nothing */
	r->next_ns = flow_src_next_min(r->next_ns, f->s.sched.next_ns);
	if (n < 0)
		note(f, port, what, "poll failed");
}

/* Charge a polled source its share of the round's CPU time. */
static void charge(struct fsrc *f, const struct cost_round *c, uint64_t now)
{
	if (!f->polled)
		return;
	cost_add(&f->cost, f->s.ops->may_sleep ? f->round_ns : cost_round_share(c, f->round_ns),
		 now);
	f->polled = 0;
}

/* Want ps at now: 1 if it was not wanted (its hold had ended). */
static int want_one(struct psrc *ps, uint64_t now)
{
	int fresh = !ps->want_ns || now < ps->want_ns ||
		    now - ps->want_ns >= FLOW_SRC_WANT_HOLD_NS;

	ps->want_ns = now;
	return fresh;
}

int flowsrcs_want(struct flowsrcs *fs, const char *port, uint64_t now)
{
	const char *peer = NULL;
	int fresh = 0;

	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		if (!strcmp(port_name(ps->p), port)) {
			fresh |= want_one(ps, now);
			peer = port_conf(ps->p)->peer;
		}
	/* its peer too: a frame lost between them shows on the other end */
	for (struct psrc *ps = fs->psrcs; peer && *peer && ps; ps = ps->next)
		if (!strcmp(port_name(ps->p), peer))
			fresh |= want_one(ps, now);
	return fresh;
}

uint64_t flowsrcs_next_ns(const struct flowsrcs *fs)
{
	return fs->next_ns;
}

void flowsrcs_test_set_next(struct flowsrcs *fs, uint64_t next_ns)
{
	fs->next_ns = next_ns;
}

uint64_t flowsrcs_poll(struct flowsrcs *fs, uint64_t now, flowsrcs_emit_fn emit, void *arg)
{
	struct route r = { fs, NULL, emit, arg, { 0 }, UINT64_MAX };

	psrc_sync(fs, now);
	cost_round_start(&r.cost);
	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next) {
		uint64_t th = port_conf(ps->p)->stall_ns ? port_conf(ps->p)->stall_ns : fs->stall_ns;

		r.ps = ps;
		for (unsigned k = 0; k < fs->nport; k++)
			poll_one(&ps->src[k], port_name(ps->p), fs->prow[k].what, &r, now, th);
	}
	r.ps = NULL;
	for (unsigned k = 0; k < fs->nhost; k++)
		poll_one(&fs->host[k], NULL, fs->hrow[k].what, &r, now, fs->host_stall_ns);
	cost_round_stop(&r.cost);
	fs->next_ns = r.next_ns;
	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		for (unsigned k = 0; k < fs->nport; k++)
			charge(&ps->src[k], &r.cost, now);
	for (unsigned k = 0; k < fs->nhost; k++)
		charge(&fs->host[k], &r.cost, now);
	fs->slack_ns = 0;
	return r.cost.cpu1;
}

void flowsrcs_set_slack(struct flowsrcs *fs, uint64_t slack_ns)
{
	if (fs)
		fs->slack_ns = slack_ns;
}

/* {name, port, state, flows, cpu_pct, ...} of one source instance. */
static struct json_object *src_json(const struct fsrc *f, const char *name, const char *port,
				    uint64_t now)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "source", name);
	if (port)
		jx_add_str(o, "port", port);
	jx_add_str(o, "state", f->open ? "open" : "unavailable");
	if (!f->open && f->s.err[0])
		jx_add_str(o, "error", f->s.err);
	if (f->open && f->last_flows >= 0)
		jx_add_int(o, "flows", f->last_flows);
	cost_json(&f->cost, now, o);
	if (f->open && f->s.ops->status && !f->s.ops->host)
		f->s.ops->status(&f->s, o);
	return o;
}

/* One reader's {state, ..., error}, or NULL when it is neither open nor
 * failing. */
static struct json_object *reader_json(const struct fsrc *f)
{
	struct json_object *o;

	if (!f->open && !f->s.err[0])
		return NULL;
	o = json_object_new_object();
	jx_add_str(o, "state", f->open ? "open" : "unavailable");
	if (f->open && f->s.ops->status)
		f->s.ops->status(&f->s, o);
	if (f->s.err[0] && !jx_get(o, "error"))
		jx_add_str(o, "error", f->s.err);
	return o;
}

/* The readers of unmodified engines (the FSR_READER rows): {"onload":
 * {...}, "vma": {...}, "rdmaqp": {PORT: {...}}} (only those open or
 * failing). */
static void readers_status(const struct flowsrcs *fs, struct json_object *out)
{
	struct json_object *rd = json_object_new_object(), *o;

	for (unsigned k = 0; k < fs->nhost; k++)
		if ((fs->hrow[k].flags & FSR_READER) && (o = reader_json(&fs->host[k])))
			json_object_object_add(rd, fs->hrow[k].ops->name, o);
	for (unsigned k = 0; k < fs->nport; k++) {
		struct json_object *per = json_object_new_object();

		for (const struct psrc *ps = fs->psrcs; ps; ps = ps->next)
			if ((fs->prow[k].flags & FSR_READER) && (o = reader_json(&ps->src[k])))
				json_object_object_add(per, port_name(ps->p), o);
		if (json_object_object_length(per))
			json_object_object_add(rd, fs->prow[k].ops->name, per);
		else
			json_object_put(per);
	}
	json_object_object_add(out, "readers", rd);
}

/* Each port's addresses as the flows are routed by them: a kernel socket
 * of the port's namespace on another address is not the port's; a host
 * source's flow goes to the port holding its local address. */
static void addresses_status(const struct flowsrcs *fs, struct json_object *out)
{
	struct json_object *arr = json_object_new_array();
	char text[INET6_ADDRSTRLEN];

	for (const struct psrc *ps = fs->psrcs; ps; ps = ps->next) {
		struct json_object *o, *a;

		if (!ps->addr_ns)
			continue;       /* down, or not yet up */
		o = json_object_new_object();
		a = json_object_new_array();
		jx_add_str(o, "port", port_name(ps->p));
		for (unsigned i = 0; i < ps->naddr; i++) {
			const struct in6_addr *x = &ps->addr[i];

			if (IN6_IS_ADDR_V4MAPPED(x))
				inet_ntop(AF_INET, &x->s6_addr[12], text, sizeof(text));
			else
				inet_ntop(AF_INET6, x, text, sizeof(text));
			json_object_array_add(a, json_object_new_string(text));
		}
		json_object_object_add(o, "addresses", a);
		jx_add_u64(o, "dumps", ps->addr_dumps);
		if (ps->addr_err[0])
			jx_add_str(o, "error", ps->addr_err);
		json_object_array_add(arr, o);
	}
	json_object_object_add(out, "port_addresses", arr);
}

void flowsrcs_status(const struct flowsrcs *fs, struct json_object *out)
{
	const struct fsrc *f = NULL;               /* the engine tables */
	struct json_object *cost = json_object_new_array();
	uint64_t now = loop_mono_ns();

	for (unsigned k = 0; !f && k < fs->nhost; k++)
		if (fs->hrow[k].flags & FSR_TABLES)
			f = &fs->host[k];
	readers_status(fs, out);
	addresses_status(fs, out);
	if (f && f->open && f->s.ops->status) {
		f->s.ops->status(&f->s, out);
	} else {
		jx_add_str(out, "dir", fs->flows_dir);
		if (f && f->s.err[0])
			jx_add_str(out, "error", f->s.err);
		json_object_object_add(out, "tables", json_object_new_array());
	}
	/* what each source costs, port by port, then the host's */
	for (const struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		for (unsigned k = 0; k < fs->nport; k++)
			if (ps->src[k].open || ps->src[k].cost.calls)
				json_object_array_add(cost, src_json(&ps->src[k],
					fs->prow[k].ops->name, port_name(ps->p), now));
	for (unsigned k = 0; k < fs->nhost; k++)
		if (fs->host[k].open || fs->host[k].cost.calls)
			json_object_array_add(cost, src_json(&fs->host[k], fs->hrow[k].ops->name,
							     NULL, now));
	json_object_object_add(out, "cost", cost);
}

/* ---- evidence ---- */

static int has_kind(const struct flow_src_ref *refs, unsigned n, enum flow_src_kind k)
{
	for (unsigned i = 0; i < n; i++)
		if (refs[i].src == k)
			return 1;
	return 0;
}

static int has_pid(const struct flow_src_ref *refs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (refs[i].pid > 0)
			return 1;
	return 0;
}

static int evid_one(struct fsrc *f, const struct flow_src_ref *refs, unsigned n,
		    const char *when, struct json_object *parent, const char *key,
		    flow_src_evid_done_fn done, void *arg)
{
	struct json_object *o;
	int rc;

	if (!f->open || !f->s.ops->evidence)
		return 0;
	/* the Onload source also for the processes of other flows: their
	 * stacks are evidence of a stall its own sockets do not show */
	if (!has_kind(refs, n, f->s.ops->kind) &&
	    !(f->s.ops->kind == FLOW_SRC_ONLOAD && has_pid(refs, n)))
		return 0;
	o = json_object_new_object();
	json_object_object_add(parent, key, o);
	rc = f->s.ops->evidence(&f->s, refs, n, when, o, done, arg);
	return rc > 0 ? rc : 0;
}

enum flow_src_kind flowsrcs_kind_of(const struct flowsrcs *fs, const char *name, int *reader)
{
	*reader = 0;
	for (unsigned i = 0; fs && name && i < fs->nhost + fs->nport; i++) {
		const struct flowsrcs_row *row = i < fs->nhost ? &fs->hrow[i] : &fs->prow[i - fs->nhost];

		if (!strcmp(row->ops->name, name)) {
			*reader = !!(row->flags & FSR_READER);
			return row->ops->kind;
		}
	}
	return 0;
}

int flowsrcs_host_open(const struct flowsrcs *fs, enum flow_src_kind k)
{
	for (unsigned i = 0; i < fs->nhost; i++)
		if ((fs->hrow[i].flags & FSR_READER) && fs->host[i].open && fs->hrow[i].ops->kind == k)
			return 1;
	return 0;
}

int flowsrcs_evidence(struct flowsrcs *fs, const struct flow_src_ref *refs, unsigned n,
		      const char *const *ports, unsigned nports, const char *when,
		      struct json_object *out, flow_src_evid_done_fn done, void *arg)
{
	int pending = 0;

	for (unsigned k = 0; k < fs->nhost; k++)
		if (fs->hrow[k].flags & FSR_READER)
			pending += evid_one(&fs->host[k], refs, n, when, out, fs->hrow[k].ops->name,
					    done, arg);
	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next) {
		int mine = 0;

		for (unsigned i = 0; i < nports; i++)
			mine |= !strcmp(ports[i], port_name(ps->p));
		for (unsigned k = 0; mine && k < fs->nport; k++) {
			struct json_object *per;

			if (!(fs->prow[k].flags & FSR_READER) || !ps->src[k].open ||
			    !has_kind(refs, n, fs->prow[k].ops->kind))
				continue;
			if (!(per = jx_get(out, fs->prow[k].ops->name))) {
				per = json_object_new_object();
				json_object_object_add(out, fs->prow[k].ops->name, per);
			}
			pending += evid_one(&ps->src[k], refs, n, when, per, port_name(ps->p),
					    done, arg);
		}
	}
	return pending;
}

void flowsrcs_evidence_cancel(struct flowsrcs *fs, void *arg)
{
	for (unsigned k = 0; k < fs->nhost; k++)
		if (fs->host[k].open && fs->host[k].s.ops->evidence_cancel)
			fs->host[k].s.ops->evidence_cancel(&fs->host[k].s, arg);
	for (struct psrc *ps = fs->psrcs; ps; ps = ps->next)
		for (unsigned k = 0; k < fs->nport; k++)
			if (ps->src[k].open && ps->src[k].s.ops->evidence_cancel)
				ps->src[k].s.ops->evidence_cancel(&ps->src[k].s, arg);
}
