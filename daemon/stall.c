/* stall: flow table, per-flow state machine, incidents. */
#include "daemon/stall.h"
#include "daemon/conf.h"
#include "daemon/daemon.h"
#include "collectors/flow_engine.h"
#include "collectors/flow_sockdiag.h"
#include "collectors/flowtrack_api.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/nl.h"
#include "daemon/port.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_BITS 12
#define NHASH (1u << HASH_BITS)
#define MAX_FLOWS 65536
#define GONE_NS (2000000000ull)         /* unseen this long: flow closed */
#define ADDR_REFRESH_NS (2000000000ull)
#define MAX_ADDRS 16
#define INC_KEEP 32
#define INC_MAX_FLOWS 64

struct sflow {
	struct sflow *next;
	struct flow_obs obs, prev;
	char port[32];
	enum flow_state state;
	uint64_t first_ns, seen_ns;
	uint64_t wait_since_ns, progress_ns, stalled_at_ns;
	uint64_t tx_at_rx;              /* BPF: tx frames when rx last moved */
	uint64_t last_stall_ns;         /* duration of the last released stall */
	unsigned stalls;
	uint64_t incident;
};

struct inc_flow {
	char tuple[160];
	char norm[160];                 /* endpoints in a fixed order */
	enum flow_src_kind src;
	uint64_t session;
	int pid;
	char engine[32];
	uint64_t wait_since_ns, stalled_at_ns, released_at_ns;
	uint64_t unsent, unread, staged, inflight;
	int released, gone;
};

struct incident {
	uint64_t id;
	char port[32];
	char group[72];
	uint64_t open_mono_ns, open_real_ns, end_mono_ns;
	int ended, released;
	unsigned siblings;              /* flows of the group still progressing */
	unsigned suppressed;            /* stalls not investigated meanwhile */
	unsigned nflows, dropped_flows;
	struct inc_flow flows[INC_MAX_FLOWS];
};

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

struct group_rate {
	char group[72];
	uint64_t last_open_ns;
	uint64_t opens[64];             /* ring of open times (last hour) */
	unsigned nopens;
	uint64_t last_suppress_log_ns;
	unsigned suppressed;
};

struct stall {
	struct daemon *d;
	struct loop_timer *timer;
	struct sflow *hash[NHASH];
	unsigned nflows;
	struct psrc *psrcs;
	struct flow_engine *fe;
	char fe_err[256];
	int bpf_ok;                     /* -1 unknown, 0 unsupported, 1 ok */
	char bpf_err[256];
	struct incident *inc[INC_KEEP]; /* ring, newest at (ninc-1) % INC_KEEP */
	uint64_t ninc;
	struct group_rate rates[32];
	unsigned nrates;
	stall_incident_fn hook;
	void *hook_arg;
	uint64_t now;
	uint64_t polls, poll_cost_ns;
};

/* ------------------------------------------------------------------ */

static unsigned fhash(const struct flow_obs *o, const char *port)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *b = (const unsigned char *)&o->key;

	for (size_t i = 0; i < sizeof(o->key); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	h = (h ^ (unsigned)o->src) * 1099511628211ull;
	h = (h ^ o->session) * 1099511628211ull;
	for (; *port; port++)
		h = (h ^ (unsigned char)*port) * 1099511628211ull;
	return (unsigned)(h ^ (h >> 32)) & (NHASH - 1);
}

static struct sflow *flow_get(struct stall *s, const struct flow_obs *o,
			      const char *port, int create)
{
	unsigned h = fhash(o, port);
	struct sflow *f;

	for (f = s->hash[h]; f; f = f->next)
		if (f->obs.src == o->src && f->obs.session == o->session &&
		    !memcmp(&f->obs.key, &o->key, sizeof(o->key)) && !strcmp(f->port, port))
			return f;
	if (!create || s->nflows >= MAX_FLOWS)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->obs = *o;
	util_strlcpy(f->port, port, sizeof(f->port));
	f->first_ns = s->now;
	f->progress_ns = s->now;
	f->next = s->hash[h];
	s->hash[h] = f;
	s->nflows++;
	return f;
}

static const char *src_name(enum flow_src_kind k)
{
	switch (k) {
	case FLOW_SRC_ENGINE: return "engine";
	case FLOW_SRC_BPF: return "bpf";
	case FLOW_SRC_SOCK: return "sock";
	}
	return "?";
}

static const char *state_name(enum flow_state st)
{
	switch (st) {
	case FLOW_WAITING: return "waiting";
	case FLOW_STALLED: return "stalled";
	default: return "idle";
	}
}

static struct port_conf *port_conf_of(struct stall *s, const char *name)
{
	struct port *p = daemon_port(s->d, name);

	return p ? &p->conf : NULL;
}

static uint64_t threshold(struct stall *s, const char *port)
{
	struct port_conf *pc = port_conf_of(s, port);

	return pc && pc->stall_ns ? pc->stall_ns : s->d->conf->stall_ns;
}

/* The incident group of a port: the port, or the pair it belongs to. */
static void group_of(struct stall *s, const char *port, char *buf, size_t len)
{
	struct port_conf *pc = port_conf_of(s, port);

	if (pc && pc->peer[0])
		snprintf(buf, len, "%s+%s", strcmp(port, pc->peer) < 0 ? port : pc->peer,
			 strcmp(port, pc->peer) < 0 ? pc->peer : port);
	else
		snprintf(buf, len, "%s", port);
}

/* ------------------------------------------------------------------ */
/* incidents */

static struct incident *inc_open_for(struct stall *s, const char *group)
{
	for (unsigned i = 0; i < INC_KEEP && i < s->ninc; i++) {
		struct incident *inc = s->inc[(s->ninc - 1 - i) % INC_KEEP];

		if (inc && !inc->ended && !strcmp(inc->group, group))
			return inc;
	}
	return NULL;
}

static struct incident *inc_by_id(struct stall *s, uint64_t id)
{
	if (!id || id > s->ninc || s->ninc - id >= INC_KEEP)
		return NULL;
	return s->inc[(id - 1) % INC_KEEP];
}

static struct group_rate *rate_for(struct stall *s, const char *group)
{
	for (unsigned i = 0; i < s->nrates; i++)
		if (!strcmp(s->rates[i].group, group))
			return &s->rates[i];
	if (s->nrates >= sizeof(s->rates) / sizeof(s->rates[0]))
		return &s->rates[sizeof(s->rates) / sizeof(s->rates[0]) - 1];
	util_strlcpy(s->rates[s->nrates].group, group, sizeof(s->rates[0].group));
	return &s->rates[s->nrates++];
}

static void flow_tuple(const struct sflow *f, char *buf, size_t len)
{
	flow_key_format(&f->obs.key, buf, len);
}

static void norm_tuple(const struct sflow *f, char *buf, size_t len);

static void inc_add_flow(struct incident *inc, struct sflow *f)
{
	struct inc_flow *x;
	char tuple[160];

	flow_tuple(f, tuple, sizeof(tuple));
	for (unsigned i = 0; i < inc->nflows; i++)
		if (!strcmp(inc->flows[i].tuple, tuple) && inc->flows[i].src == f->obs.src &&
		    inc->flows[i].session == f->obs.session) {
			inc->flows[i].released = 0;
			return;
		}
	if (inc->nflows >= INC_MAX_FLOWS) {
		inc->dropped_flows++;
		return;
	}
	x = &inc->flows[inc->nflows++];
	memset(x, 0, sizeof(*x));
	util_strlcpy(x->tuple, tuple, sizeof(x->tuple));
	norm_tuple(f, x->norm, sizeof(x->norm));
	x->src = f->obs.src;
	x->session = f->obs.session;
	x->pid = f->obs.pid;
	util_strlcpy(x->engine, f->obs.engine, sizeof(x->engine));
	x->wait_since_ns = f->wait_since_ns;
	x->stalled_at_ns = f->stalled_at_ns;
	x->unsent = f->obs.unsent;
	x->unread = f->obs.unread;
	x->staged = f->obs.staged;
	x->inflight = f->obs.inflight;
}

/* A tuple with its endpoints in a fixed order, so both ends of one
 * connection (and every source that sees it) count once. */
static void norm_tuple(const struct sflow *f, char *buf, size_t len)
{
	struct flow_key k = f->obs.key;

	if (memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) > 0 ||
	    (!memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) && k.sport > k.dport)) {
		struct in6_addr a = k.saddr;
		uint16_t p = k.sport;

		k.saddr = k.daddr;
		k.daddr = a;
		k.sport = k.dport;
		k.dport = p;
	}
	flow_key_format(&k, buf, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Distinct connections of the group that progressed since 'since' and
 * are not among the stalled ones. */
static unsigned count_siblings(struct stall *s, const char *group, uint64_t since)
{
	char **prog = NULL, **stl = NULL, g[72], t[160];
	size_t np = 0, ns = 0;
	unsigned n = 0;

	for (unsigned h = 0; h < NHASH; h++)
		for (struct sflow *f = s->hash[h]; f; f = f->next) {
			char ***arr;
			size_t *cnt;

			group_of(s, f->port, g, sizeof(g));
			if (strcmp(g, group))
				continue;
			if (f->state == FLOW_STALLED) {
				arr = &stl;
				cnt = &ns;
			} else if (f->progress_ns >= since) {
				arr = &prog;
				cnt = &np;
			} else
				continue;
			char **na = realloc(*arr, (*cnt + 1) * sizeof(char *));

			if (!na)
				continue;
			*arr = na;
			norm_tuple(f, t, sizeof(t));
			(*arr)[*cnt] = strdup(t);
			if ((*arr)[*cnt])
				(*cnt)++;
		}
	if (np)
		qsort(prog, np, sizeof(char *), cmp_str);
	if (ns)
		qsort(stl, ns, sizeof(char *), cmp_str);
	for (size_t i = 0; i < np; i++) {
		if (i && !strcmp(prog[i], prog[i - 1]))
			continue;
		if (ns && bsearch(&prog[i], stl, ns, sizeof(char *), cmp_str))
			continue;
		n++;
	}
	for (size_t i = 0; i < np; i++)
		free(prog[i]);
	for (size_t i = 0; i < ns; i++)
		free(stl[i]);
	free(prog);
	free(stl);
	return n;
}

static void inc_log_open(struct incident *inc)
{
	char list[600] = "";
	size_t off = 0;

	for (unsigned i = 0; i < inc->nflows && off < sizeof(list) - 1; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s (%s)",
					i ? "; " : "", inc->flows[i].tuple,
					src_name(inc->flows[i].src));
	log_warnx("incident %" PRIu64 " on port %s: %u flow(s) stalled, %u sibling(s) progressing: %s",
		  inc->id, inc->port, inc->nflows, inc->siblings, list);
}

static void inc_end(struct stall *s, struct incident *inc, int released)
{
	char d[32];

	inc->ended = 1;
	inc->released = released;
	inc->end_mono_ns = s->now;
	inc->siblings = count_siblings(s, inc->group, inc->open_mono_ns);
	util_fmt_duration(s->now - inc->open_mono_ns, d, sizeof(d));
	if (released)
		log_info("incident %" PRIu64 " on port %s: every stalled flow released, %s after it opened",
			 inc->id, inc->port, d);
	else
		log_warnx("incident %" PRIu64 " on port %s: ended unreleased after %s%s",
			  inc->id, inc->port, d, s->now - inc->open_mono_ns <
			  s->d->conf->incident_max_ns ? " (its flows closed)" : "");
	if (s->hook)
		s->hook(inc, INCIDENT_END, s->hook_arg);
}

static void on_stalled(struct stall *s, struct sflow *f)
{
	char group[72], tuple[160], d[32];
	struct incident *inc;
	struct group_rate *gr;
	const struct conf *c = s->d->conf;

	group_of(s, f->port, group, sizeof(group));
	flow_tuple(f, tuple, sizeof(tuple));
	inc = inc_open_for(s, group);
	/* within the grouping window a stall joins the open incident (and
	 * its running investigation); later ones are incidents of their own */
	if (inc && s->now - inc->open_mono_ns <= s->d->conf->group_ns) {
		inc_add_flow(inc, f);
		f->incident = inc->id;
		inc->siblings = count_siblings(s, group, s->now - threshold(s, f->port));
		log_info("incident %" PRIu64 ": flow %s (%s) on port %s joins", inc->id, tuple,
			 src_name(f->obs.src), f->port);
		if (s->hook)
			s->hook(inc, INCIDENT_JOIN, s->hook_arg);
		return;
	}
	gr = rate_for(s, group);
	while (gr->nopens && s->now - gr->opens[(gr->nopens - 1) % 64] > 3600000000000ull)
		gr->nopens = 0;         /* the newest is over an hour old */
	unsigned in_hour = 0;

	for (unsigned i = 0; i < gr->nopens && i < 64; i++)
		if (s->now - gr->opens[(gr->nopens - 1 - i) % 64] <= 3600000000000ull)
			in_hour++;
	const char *why = NULL;

	if (gr->last_open_ns && s->now - gr->last_open_ns < c->cooldown_ns)
		why = "cooldown";
	else if (in_hour >= c->incidents_per_hour)
		why = "hourly limit";
	if (why) {
		gr->suppressed++;
		if (!gr->last_suppress_log_ns || s->now - gr->last_suppress_log_ns > 1000000000ull) {
			util_fmt_duration(s->now - gr->last_open_ns, d, sizeof(d));
			log_warnx("port %s: stall of %s (%s) not investigated: incident %s "
				  "(last incident %s ago, %u in the last hour, %u suppressed so far)",
				  f->port, tuple, src_name(f->obs.src), why, d, in_hour, gr->suppressed);
			gr->last_suppress_log_ns = s->now;
		}
		return;
	}
	inc = calloc(1, sizeof(*inc));
	if (!inc) {
		log_errx("port %s: out of memory opening an incident", f->port);
		return;
	}
	inc->id = ++s->ninc;
	util_strlcpy(inc->port, f->port, sizeof(inc->port));
	util_strlcpy(inc->group, group, sizeof(inc->group));
	inc->open_mono_ns = s->now;
	inc->open_real_ns = loop_real_ns();
	inc->suppressed = gr->suppressed;
	gr->suppressed = 0;
	gr->last_open_ns = s->now;
	gr->opens[gr->nopens % 64] = s->now;
	gr->nopens++;
	free(s->inc[(inc->id - 1) % INC_KEEP]);
	s->inc[(inc->id - 1) % INC_KEEP] = inc;
	inc_add_flow(inc, f);
	f->incident = inc->id;
	/* every other flow of the group that is stalled too joins now */
	for (unsigned h = 0; h < NHASH; h++)
		for (struct sflow *o = s->hash[h]; o; o = o->next) {
			char g[72];

			if (o == f || o->state != FLOW_STALLED || o->incident == inc->id)
				continue;
			group_of(s, o->port, g, sizeof(g));
			if (!strcmp(g, group)) {
				inc_add_flow(inc, o);
				o->incident = inc->id;
			}
		}
	inc->siblings = count_siblings(s, group, s->now - threshold(s, f->port));
	inc_log_open(inc);
	if (s->hook)
		s->hook(inc, INCIDENT_OPEN, s->hook_arg);
}

static void on_released(struct stall *s, struct sflow *f, int gone)
{
	struct incident *inc = inc_by_id(s, f->incident);
	char tuple[160], d[32];

	flow_tuple(f, tuple, sizeof(tuple));
	util_fmt_duration(f->last_stall_ns, d, sizeof(d));
	if (gone)
		log_info("port %s: stalled flow %s (%s) closed", f->port, tuple, src_name(f->obs.src));
	else
		log_info("port %s: flow %s (%s) released after %s stalled", f->port, tuple,
			 src_name(f->obs.src), d);
	f->incident = 0;
	if (!inc || inc->ended)
		return;
	for (unsigned i = 0; i < inc->nflows; i++) {
		struct inc_flow *x = &inc->flows[i];

		if (!strcmp(x->tuple, tuple) && x->src == f->obs.src && x->session == f->obs.session) {
			x->released = !gone;
			x->gone = gone;
			x->released_at_ns = s->now;
		}
	}
	int any_released = 0;

	for (unsigned i = 0; i < inc->nflows; i++) {
		if (!inc->flows[i].released && !inc->flows[i].gone)
			return;
		any_released |= inc->flows[i].released;
	}
	/* released when a flow moved again; flows that only closed did not */
	inc_end(s, inc, any_released);
}

/* ------------------------------------------------------------------ */
/* the state machine */

/* When did the wait that was just noticed begin? The sources' own clocks
 * say it better than our poll time: the unanswered request's send time
 * (engine; kernel TCP with unacknowledged bytes), the arrival of unread
 * bytes, the last frame received (tracker). Never in the future, never
 * before the last progress we saw, never more than a poll old estimate
 * when the source gives nothing. */
static uint64_t wait_start(struct stall *s, const struct sflow *f, const struct flow_obs *o)
{
	uint64_t t = 0;

	switch (o->src) {
	case FLOW_SRC_ENGINE:
		if (o->last_tx_ns > o->last_rx_ns)
			t = o->last_tx_ns;
		else if (o->state & 0x4u)
			t = o->last_rx_ns;      /* awaiting: since the last data */
		break;
	case FLOW_SRC_SOCK:
		if (o->unsent || o->inflight || o->tx_msgs > o->rx_msgs)
			t = o->last_tx_ns;
		else
			t = o->last_rx_ns;
		break;
	case FLOW_SRC_BPF:
		t = o->last_rx_ns;
		break;
	}
	if (!t || t > s->now || t < f->progress_ns - s->d->conf->flow_interval_ns ||
	    s->now - t > 10000000000ull)
		return s->now;
	return t;
}

static void flow_update(struct stall *s, struct sflow *f, const struct flow_obs *o)
{
	const struct flow_obs *pv = &f->obs;
	int progress = 0, waiting = 0, first = f->seen_ns == 0;

	f->prev = f->obs;
	switch (o->src) {
	case FLOW_SRC_ENGINE:
		/* a request/response engine: requests sent beyond replies
		 * received are outstanding */
		progress = o->rx_msgs > pv->rx_msgs || o->rx_bytes > pv->rx_bytes;
		waiting = o->tx_msgs > o->rx_msgs || o->unsent > 0 ||
			  (o->state & 0x4u);    /* NSFT_ST_AWAITING: a consumer */
		break;
	case FLOW_SRC_SOCK:
		/* kernel TCP: bytes unacknowledged, or received and not read */
		/* kernel TCP: bytes unacknowledged, or received and not read;
		 * and for request/response traffic (data segments each way
		 * have matched so far) one side owing the other a message:
		 * the reply never came, or the request was read and never
		 * answered, with every byte acknowledged */
		progress = o->tx_bytes > pv->tx_bytes || o->rx_bytes > pv->rx_bytes ||
			   (o->unread < pv->unread);
		waiting = o->unsent > 0 || o->inflight > 0 || o->unread > 0 ||
			  (o->tx_msgs > 1 && o->rx_msgs > 1 &&
			   (o->tx_msgs == o->rx_msgs + 1 || o->rx_msgs == o->tx_msgs + 1));
		break;
	case FLOW_SRC_BPF:
		/* frames. For UDP request/response a datagram sent after the
		 * last one received is outstanding. TCP frames (acks, window
		 * updates) say nothing about requests: kernel TCP liveness
		 * comes from sock_diag, bypass TCP from engine tables, and the
		 * tracker's TCP counts are evidence only. */
		progress = o->rx_msgs > pv->rx_msgs;
		if (progress || first)
			f->tx_at_rx = o->tx_msgs;
		waiting = o->key.proto == 17 && o->tx_msgs > f->tx_at_rx;
		break;
	}
	f->obs = *o;
	f->seen_ns = s->now;
	if (first) {
		progress = 0;
		f->progress_ns = s->now;
	}
	if (progress)
		f->progress_ns = s->now;

	switch (f->state) {
	case FLOW_IDLE:
		if (waiting) {
			f->state = FLOW_WAITING;
			f->wait_since_ns = wait_start(s, f, o);
		}
		break;
	case FLOW_WAITING:
		if (!waiting)
			f->state = FLOW_IDLE;
		else if (progress)
			f->wait_since_ns = s->now;
		break;
	case FLOW_STALLED:
		if (progress || !waiting) {
			f->state = waiting ? FLOW_WAITING : FLOW_IDLE;
			f->wait_since_ns = s->now;
			f->last_stall_ns = s->now - f->stalled_at_ns;
			on_released(s, f, 0);
		}
		break;
	}
	if (f->state == FLOW_WAITING && s->now - f->wait_since_ns > threshold(s, f->port)) {
		f->state = FLOW_STALLED;
		f->stalled_at_ns = f->wait_since_ns;
		f->stalls++;
		on_stalled(s, f);
	}
}

struct emit_ctx {
	struct stall *s;
	struct psrc *ps;        /* NULL: engine tables (port by address) */
};

static int addr_is_port(const struct psrc *ps, const struct in6_addr *a)
{
	if (!ps->naddr)
		return -1;      /* unknown: accept */
	for (unsigned i = 0; i < ps->naddr; i++)
		if (!memcmp(&ps->addr[i], a, sizeof(*a)))
			return 1;
	return 0;
}

static void emit_cb(const struct flow_obs *o, void *arg)
{
	struct emit_ctx *ec = arg;
	struct stall *s = ec->s;
	struct psrc *ps = ec->ps;
	const char *port = NULL;
	struct sflow *f;

	if (ps) {
		/* a socket of the namespace may belong to another interface */
		if (o->src == FLOW_SRC_SOCK && addr_is_port(ps, &o->key.saddr) == 0)
			return;
		port = ps->p->conf.name;
	} else {
		/* engine flow: the port that owns its local address */
		for (struct psrc *q = s->psrcs; q && !port; q = q->next)
			if ((q->p->conf.track & TRACK_ENGINE) && addr_is_port(q, &o->key.saddr) == 1 &&
			    flow_sel_match(q->p->conf.sel, q->p->conf.nsel, &o->key))
				port = q->p->conf.name;
		if (!port)
			port = "-";
	}
	f = flow_get(s, o, port, 1);
	if (f)
		flow_update(s, f, o);
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

static struct psrc *psrc_for(struct stall *s, struct port *p)
{
	struct psrc *ps;

	for (ps = s->psrcs; ps; ps = ps->next)
		if (ps->p == p && ps->serial == p->serial)
			return ps;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->p = p;
	ps->serial = p->serial;
	ps->next = s->psrcs;
	s->psrcs = ps;
	return ps;
}

/* Open or close each port's flow sources to match its state. */
static void psrc_sync(struct stall *s)
{
	struct psrc **pp;

	for (struct psrc *ps = s->psrcs; ps; ps = ps->next)
		ps->alive = 0;
	for (unsigned i = 0; i < s->d->nports; i++) {
		struct port *p = s->d->ports[i];
		struct psrc *ps = psrc_for(s, p);
		char err[256];

		if (!ps)
			continue;
		ps->alive = 1;
		if (p->state != PORT_UP || !p->conf.ifname[0]) {
			if (ps->sd || ps->ft)
				psrc_close(ps);
			continue;
		}
		if (ps->ft && ps->ft_ifindex != p->ifindex) {
			flowtrack_detach(ps->ft);
			ps->ft = NULL;
		}
		if (!ps->naddr || s->now - ps->addr_ns > ADDR_REFRESH_NS) {
			ps->naddr = 0;
			ps->addr_ns = s->now;
			nl_addr_dump(p->nsfd, p->ifindex, addr_cb, ps, err, sizeof(err));
		}
		if ((p->conf.track & TRACK_SOCK) && !ps->sd) {
			ps->sd = sockdiag_open(p->nsfd, err, sizeof(err));
			if (!ps->sd && strcmp(err, ps->sd_err)) {
				log_warnx("port %s: sock_diag unavailable: %s", p->conf.name, err);
				util_strlcpy(ps->sd_err, err, sizeof(ps->sd_err));
			}
		}
		if ((p->conf.track & TRACK_BPF) && !ps->ft && s->bpf_ok != 0) {
			flowtrack_cleanup_stale(p->nsfd, p->ifindex, err, sizeof(err));
			ps->ft = flowtrack_attach(p->nsfd, p->ifindex, p->conf.sel, p->conf.nsel,
						  0, err, sizeof(err));
			if (ps->ft) {
				ps->ft_ifindex = p->ifindex;
				ps->ft_err[0] = 0;
				s->bpf_ok = 1;
			} else if (strcmp(err, ps->ft_err)) {
				log_warnx("port %s: eBPF flow tracker unavailable, using the other flow sources: %s",
					  p->conf.name, err);
				util_strlcpy(ps->ft_err, err, sizeof(ps->ft_err));
			}
		}
	}
	for (pp = &s->psrcs; *pp;) {
		struct psrc *ps = *pp;

		if (!ps->alive) {
			psrc_close(ps);
			*pp = ps->next;
			free(ps);
		} else
			pp = &ps->next;
	}
}

void stall_poll(struct stall *s)
{
	uint64_t t0 = loop_mono_ns();
	struct emit_ctx ec = { s, NULL };

	s->now = t0;
	psrc_sync(s);
	for (struct psrc *ps = s->psrcs; ps; ps = ps->next) {
		char err[256];

		ec.ps = ps;
		if (ps->sd && sockdiag_poll(ps->sd, ps->p->conf.sel, ps->p->conf.nsel, emit_cb,
					    &ec, err, sizeof(err)) < 0) {
			if (strcmp(err, ps->sd_err)) {
				log_warnx("port %s: sock_diag: %s", ps->p->conf.name, err);
				util_strlcpy(ps->sd_err, err, sizeof(ps->sd_err));
			}
		}
		if (ps->ft && flowtrack_poll(ps->ft, emit_cb, &ec) < 0)
			log_debug("port %s: flow tracker poll failed", ps->p->conf.name);
	}
	if (s->fe) {
		ec.ps = NULL;
		flow_engine_poll(s->fe, emit_cb, &ec);
	}
	/* flows not seen lately are closed; open incidents time out */
	for (unsigned h = 0; h < NHASH; h++) {
		struct sflow **pp = &s->hash[h];

		while (*pp) {
			struct sflow *f = *pp;

			if (s->now - f->seen_ns > GONE_NS) {
				if (f->state == FLOW_STALLED)
					on_released(s, f, 1);
				*pp = f->next;
				free(f);
				s->nflows--;
			} else
				pp = &f->next;
		}
	}
	for (unsigned i = 0; i < INC_KEEP && i < s->ninc; i++) {
		struct incident *inc = s->inc[i];

		if (inc && !inc->ended && s->now - inc->open_mono_ns > s->d->conf->incident_max_ns)
			inc_end(s, inc, 0);
	}
	s->polls++;
	s->poll_cost_ns = loop_mono_ns() - t0;
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	stall_poll(arg);
}

static void fe_cb(int fd, uint32_t events, void *arg)
{
	struct stall *s = arg;

	(void)fd;
	(void)events;
	flow_engine_handle(s->fe);
}

struct stall *stall_new(struct daemon *d, char *err, size_t errlen)
{
	struct stall *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->d = d;
	s->bpf_ok = -1;
	s->timer = loop_timer_new(d->loop, timer_cb, s);
	if (!s->timer) {
		snprintf(err, errlen, "flow timer: %s", strerror(errno));
		free(s);
		return NULL;
	}
	stall_configure(s);
	return s;
}

void stall_configure(struct stall *s)
{
	const struct conf *c = s->d->conf;
	int want_engine = 0;

	for (unsigned i = 0; i < c->nports; i++)
		if (c->ports[i].track & TRACK_ENGINE)
			want_engine = 1;
	if (s->fe && !want_engine) {
		loop_del_fd(s->d->loop, flow_engine_fd(s->fe));
		flow_engine_close(s->fe);
		s->fe = NULL;
	}
	if (!s->fe && want_engine) {
		s->fe = flow_engine_open(c->flows_dir, s->fe_err, sizeof(s->fe_err));
		if (!s->fe)
			log_warnx("engine flow tables unavailable: %s", s->fe_err);
		else if (loop_add_fd(s->d->loop, flow_engine_fd(s->fe), EPOLLIN, fe_cb, s) < 0)
			log_warn("engine flow tables: watching %s", c->flows_dir);
	}
	loop_timer_set(s->timer, c->flow_interval_ns, c->flow_interval_ns);
}

void stall_set_hook(struct stall *s, stall_incident_fn fn, void *arg)
{
	s->hook = fn;
	s->hook_arg = arg;
}

void stall_free(struct stall *s)
{
	if (!s)
		return;
	loop_timer_free(s->timer);
	while (s->psrcs) {
		struct psrc *ps = s->psrcs;

		s->psrcs = ps->next;
		psrc_close(ps);
		free(ps);
	}
	if (s->fe) {
		loop_del_fd(s->d->loop, flow_engine_fd(s->fe));
		flow_engine_close(s->fe);
	}
	for (unsigned h = 0; h < NHASH; h++)
		while (s->hash[h]) {
			struct sflow *f = s->hash[h];

			s->hash[h] = f->next;
			free(f);
		}
	for (unsigned i = 0; i < INC_KEEP; i++)
		free(s->inc[i]);
	free(s);
}

/* ------------------------------------------------------------------ */
/* JSON views */

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_ms(struct json_object *o, const char *k, uint64_t ns)
{
	json_object_object_add(o, k, json_object_new_double((double)(ns / 1000) / 1000.0));
}

static int flow_order(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	static const char *keys[] = { "port", "tuple", "source" };

	for (size_t i = 0; i < 3; i++) {
		struct json_object *vx, *vy;
		int c;

		json_object_object_get_ex(x, keys[i], &vx);
		json_object_object_get_ex(y, keys[i], &vy);
		c = strcmp(json_object_get_string(vx), json_object_get_string(vy));
		if (c)
			return c;
	}
	return 0;
}

struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only)
{
	struct json_object *arr = json_object_new_array();
	uint64_t now = loop_mono_ns();

	for (unsigned h = 0; h < NHASH; h++)
		for (struct sflow *f = s->hash[h]; f; f = f->next) {
			struct json_object *o, *held;
			char tuple[160];

			if (port && strcmp(port, f->port))
				continue;
			if (stalled_only && f->state != FLOW_STALLED)
				continue;
			o = json_object_new_object();
			flow_tuple(f, tuple, sizeof(tuple));
			json_object_object_add(o, "port", json_object_new_string(f->port));
			json_object_object_add(o, "source", json_object_new_string(src_name(f->obs.src)));
			json_object_object_add(o, "tuple", json_object_new_string(tuple));
			add_u64(o, "session", f->obs.session);
			json_object_object_add(o, "state", json_object_new_string(state_name(f->state)));
			add_ms(o, "progress_age_ms", now - f->progress_ns);
			if (f->state != FLOW_IDLE)
				add_ms(o, "waiting_ms", now - f->wait_since_ns);
			add_u64(o, "tx_msgs", f->obs.tx_msgs);
			add_u64(o, "rx_msgs", f->obs.rx_msgs);
			add_u64(o, "tx_bytes", f->obs.tx_bytes);
			add_u64(o, "rx_bytes", f->obs.rx_bytes);
			held = json_object_new_object();
			add_u64(held, "unsent", f->obs.unsent);
			add_u64(held, "unread", f->obs.unread);
			add_u64(held, "staged", f->obs.staged);
			json_object_object_add(o, "held", held);
			if (f->obs.src == FLOW_SRC_SOCK)
				add_u64(o, "inflight", f->obs.inflight);
			if (f->obs.src == FLOW_SRC_SOCK)
				add_u64(o, "retrans", f->obs.retrans);
			if (f->obs.pid)
				json_object_object_add(o, "pid", json_object_new_int(f->obs.pid));
			if (f->obs.engine[0])
				json_object_object_add(o, "engine", json_object_new_string(f->obs.engine));
			if (f->obs.inode)
				add_u64(o, "inode", f->obs.inode);
			add_u64(o, "stalls", f->stalls);
			if (f->last_stall_ns)
				add_ms(o, "last_stall_ms", f->last_stall_ns);
			if (f->incident)
				add_u64(o, "incident", f->incident);
			json_object_array_add(arr, o);
		}
	json_object_array_sort(arr, flow_order);
	return arr;
}

struct json_object *incident_json(const struct incident *inc)
{
	struct json_object *o = json_object_new_object(), *fl = json_object_new_array();
	uint64_t end = inc->ended ? inc->end_mono_ns : loop_mono_ns();

	add_u64(o, "id", inc->id);
	json_object_object_add(o, "port", json_object_new_string(inc->port));
	json_object_object_add(o, "group", json_object_new_string(inc->group));
	json_object_object_add(o, "state", json_object_new_string(
		!inc->ended ? "open" : inc->released ? "released" : "unreleased"));
	add_u64(o, "opened_real_ns", inc->open_real_ns);
	add_u64(o, "opened_mono_ns", inc->open_mono_ns);
	add_ms(o, "duration_ms", end - inc->open_mono_ns);
	json_object_object_add(o, "siblings_progressing", json_object_new_int((int)inc->siblings));
	json_object_object_add(o, "suppressed_before", json_object_new_int((int)inc->suppressed));
	if (inc->dropped_flows)
		json_object_object_add(o, "flows_not_listed", json_object_new_int((int)inc->dropped_flows));
	for (unsigned i = 0; i < inc->nflows; i++) {
		const struct inc_flow *x = &inc->flows[i];
		struct json_object *f = json_object_new_object();

		json_object_object_add(f, "tuple", json_object_new_string(x->tuple));
		json_object_object_add(f, "source", json_object_new_string(src_name(x->src)));
		add_u64(f, "session", x->session);
		if (x->pid)
			json_object_object_add(f, "pid", json_object_new_int(x->pid));
		if (x->engine[0])
			json_object_object_add(f, "engine", json_object_new_string(x->engine));
		add_u64(f, "stalled_at_mono_ns", x->stalled_at_ns);
		add_u64(f, "unsent", x->unsent);
		add_u64(f, "unread", x->unread);
		add_u64(f, "staged", x->staged);
		add_u64(f, "inflight", x->inflight);
		json_object_object_add(f, "state", json_object_new_string(
			x->released ? "released" : x->gone ? "closed" : "stalled"));
		if (x->released || x->gone)
			add_ms(f, "stall_ms", x->released_at_ns - x->stalled_at_ns);
		json_object_array_add(fl, f);
	}
	json_object_object_add(o, "flows", fl);
	return o;
}

struct json_object *stall_incidents_json(struct stall *s)
{
	struct json_object *arr = json_object_new_array();

	for (uint64_t id = s->ninc > INC_KEEP ? s->ninc - INC_KEEP + 1 : 1; id <= s->ninc; id++) {
		struct incident *inc = inc_by_id(s, id);

		if (inc)
			json_object_array_add(arr, incident_json(inc));
	}
	return arr;
}

static void table_cb(const char *path, const char *engine, int pid, unsigned records,
		     const char *problem, void *arg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "engine", json_object_new_string(engine ? engine : ""));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "records", json_object_new_int((int)records));
	if (problem)
		json_object_object_add(o, "problem", json_object_new_string(problem));
	json_object_array_add(arg, o);
}

struct json_object *stall_engines_json(struct stall *s)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_array();

	json_object_object_add(o, "dir", json_object_new_string(s->d->conf->flows_dir));
	if (s->fe)
		flow_engine_tables(s->fe, table_cb, t);
	else if (s->fe_err[0])
		json_object_object_add(o, "error", json_object_new_string(s->fe_err));
	json_object_object_add(o, "tables", t);
	add_u64(o, "flows", s->nflows);
	add_u64(o, "polls", s->polls);
	json_object_object_add(o, "poll_cost_us",
			       json_object_new_double((double)s->poll_cost_ns / 1000.0));
	return o;
}

size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max)
{
	size_t n = 0;
	char g[72], t[160];

	for (unsigned h = 0; h < NHASH; h++)
		for (struct sflow *f = s->hash[h]; f; f = f->next) {
			int match = 0;

			if (!f->obs.pid && !f->obs.inode)
				continue;
			group_of(s, f->port, g, sizeof(g));
			if (strcmp(g, inc->group))
				continue;
			norm_tuple(f, t, sizeof(t));
			for (unsigned i = 0; i < inc->nflows && !match; i++)
				match = !strcmp(inc->flows[i].norm, t);
			if (!match)
				continue;
			for (size_t j = 0; j < n; j++)
				if ((f->obs.pid && out[j].pid == f->obs.pid) ||
				    (f->obs.inode && out[j].inode == f->obs.inode))
					match = 0;
			if (!match || n >= max)
				continue;
			out[n].pid = f->obs.pid;
			out[n].inode = f->obs.inode;
			util_strlcpy(out[n].port, f->port, sizeof(out[n].port));
			util_strlcpy(out[n].tuple, t, sizeof(out[n].tuple));
			n++;
		}
	return n;
}

int incident_ended(const struct incident *inc)
{
	return inc->ended;
}

int incident_released(const struct incident *inc)
{
	return inc->ended && inc->released;
}

const char *incident_group(const struct incident *inc)
{
	return inc->group;
}

uint64_t incident_opened_ns(const struct incident *inc)
{
	return inc->open_mono_ns;
}

struct incident *stall_incident(struct stall *s, uint64_t id)
{
	return id ? inc_by_id(s, id) : inc_by_id(s, s->ninc);
}

uint64_t incident_id(const struct incident *inc)
{
	return inc->id;
}

const char *incident_port(const struct incident *inc)
{
	return inc->port;
}
