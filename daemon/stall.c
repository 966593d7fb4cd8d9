/* stall: the detector: polls, state machines, incidents. */
#include "daemon/stall.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/flowsrcs.h"
#include "daemon/incident.h"
#include "daemon/liveness.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/threadpass.h"
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/siphash.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stall {
	struct loop *loop;
	const struct conf *c;
	struct loop_timer *timer;
	struct flowtab *flows;
	struct flowsrcs *srcs;
	struct ports *ports;            /* the host source reads their flows' owners */
	uint64_t want_ns;               /* the last flowsrcs_want: when, port */
	char want_port[32];
	struct incidents *incs;
	stall_incident_fn hook;
	void *hook_arg;
	uint64_t now;
	uint64_t polls, poll_cost_ns;
	struct sip_key kkey;            /* for the sibling key set */
	struct kent *kset;
	size_t kcap;
	uint64_t sibling_scans;         /* passes over the flow table for siblings */
	uint64_t unverified_stalls;     /* stalls of claims the kernel did not back */
	unsigned lines;                 /* per-flow log lines this poll */
	unsigned released_unlogged, closed_unlogged;
	uint64_t refused_logged, refused_log_ns;
	/* a poll's observations, handled STALL_CHUNK per loop turn so that a
	 * poll of 100k flows never holds the loop (control requests are
	 * answered between chunks) */
	struct qobs { struct flow_obs o; char port[32]; } *q;
	size_t qn, qpos, qcap;
	struct loop_timer *chunk;
	uint64_t poll_t0, poll_busy_ns;
	int chunked;                    /* a poll is still being handled */
	/* the detector's own work on a poll's observations (drain), which no
	 * source's account holds: the thread's CPU time from the sources'
	 * last reading (flowsrcs_poll) or a later chunk's start to the end of
	 * each chunk, one clock read a chunk, summed over the poll */
	struct cost detector;
	uint64_t det_ns, det_cpu0;
	uint64_t next_expire;   /* the flow table's next walk for closed flows */
	/* the threshold of the port last asked for: a poll's observations
	 * come port by port, so one compare per observation instead of a
	 * scan of the configured ports (cleared by stall_configure) */
	char th_port[32];
	uint64_t th_ns;
	int th_ok;
	/* The next poll's plan (plan_next): polls are not regular. While
	 * nothing is stalled and no incident is open, the next comes at the
	 * earliest time this poll's waiting flows could need it (their
	 * wants, then their stalls, by the waits' start as their sources
	 * date them: liveness.c), a source asks for (flow_src next_ns), or
	 * a refresh (a threshold less a poll) after this one: a wait that
	 * begins just after a poll is seen at the next, dated by its
	 * source, and called at its deadline. Never sooner than
	 * flow_interval after the last poll start, but at once after a new
	 * want (the tracker's hooks come on a threshold less a poll, or half
	 * a threshold, before the stall, as with regular polls). */
	uint64_t plan_ns;               /* the earliest flow deadline, UINT64_MAX none */
	const char *plan_why;
	int fast;                       /* the next after the interval: why */
	const char *fast_why;
	int repoll;                     /* a new want: poll at once */
	uint64_t prev_t0, gap_ns;       /* the previous poll's start, the gap */
	uint64_t poll_end;              /* when the last poll was handled */
	uint64_t next_poll;             /* when the next poll is armed for */
	const char *next_why;
	uint64_t min_th;                /* the least threshold of any port */
	struct tpass *tpass;            /* engine threads (threadpass.h) */
};

/* Why the next poll comes when it does (status: flow_sources.next_poll). */
#define WHY_STALLED "a flow is stalled"
#define WHY_INCIDENT "an incident is open"
#define WHY_UNDATED "a flow's waits have no times"
#define WHY_SOURCE "a source"
#define WHY_DEADLINE "a waiting flow"
#define WHY_WANT "a flow waited half its threshold"
#define WHY_REFRESH "refresh"
#define WHY_INTERVAL "flow_interval"

static void fast(struct stall *s, const char *why)
{
	if (!s->fast) {
		s->fast = 1;
		s->fast_why = why;
	}
}

#define STALL_CHUNK 8192u

/* Closed flows are looked for this often, not every poll: a flow is gone
 * after LIVENESS_GONE_NS unseen, and walking every bucket each 50 ms was
 * 4% of the idle daemon. */
#define STALL_EXPIRE_EVERY_NS 250000000ull

static const struct port_conf *port_conf_of(const struct stall *s, const char *name)
{
	for (unsigned i = 0; i < s->c->nports; i++)
		if (!strcmp(s->c->ports[i].name, name))
			return &s->c->ports[i];
	return NULL;
}

static uint64_t threshold(struct stall *s, const char *port)
{
	if (!s->th_ok || strcmp(port, s->th_port)) {
		const struct port_conf *pc = port_conf_of(s, port);

		s->th_ns = pc && pc->stall_ns ? pc->stall_ns : s->c->stall_ns;
		util_strlcpy(s->th_port, port, sizeof(s->th_port));
		s->th_ok = 1;
	}
	return s->th_ns;
}

/* The incident group of a port: the port, or the pair it belongs to. */
static void group_of(const struct stall *s, const char *port, char *buf, size_t len)
{
	const struct port_conf *pc = port_conf_of(s, port);

	if (pc && pc->peer[0])
		snprintf(buf, len, "%s+%s", strcmp(port, pc->peer) < 0 ? port : pc->peer,
			 strcmp(port, pc->peer) < 0 ? pc->peer : port);
	else
		snprintf(buf, len, "%s", port);
}

/* A set of normalised connection keys (open addressing, keyed hash): the
 * sibling count needs "distinct connections" without text or sorting. */
struct kent {
	struct flow_key k;
	uint8_t used, stalled, progressed;
};

static struct kent *kset_slot(struct stall *s, const struct flow_key *k)
{
	size_t i = (size_t)siphash24(&s->kkey, k, sizeof(*k)) & (s->kcap - 1);

	while (s->kset[i].used && memcmp(&s->kset[i].k, k, sizeof(*k)))
		i = (i + 1) & (s->kcap - 1);
	return &s->kset[i];
}

/* The ports whose incident group is group (a port, or a peer pair). */
static unsigned group_ports(const struct stall *s, const char *group, const char *names[2])
{
	unsigned n = 0;
	char g[72];

	for (unsigned i = 0; i < s->c->nports && n < 2; i++) {
		group_of(s, s->c->ports[i].name, g, sizeof(g));
		if (!strcmp(g, group))
			names[n++] = s->c->ports[i].name;
	}
	if (!n)
		names[n++] = group;     /* a port not configured ("-") */
	return n;
}

static int in_group(const struct sflow *f, const char *names[2], unsigned n)
{
	return !strcmp(f->port, names[0]) || (n > 1 && !strcmp(f->port, names[1]));
}

/* Distinct connections of the group that progressed since 'since' and
 * are not among the stalled ones. One pass over the flows, O(flows): it
 * runs once per incident and poll (incident_siblings_stale), never per
 * joining flow, so a mass stall costs linear time, not quadratic. */
static unsigned count_siblings(struct stall *s, const struct incident *inc, const char *group,
			       uint64_t since)
{
	const char *names[2];
	unsigned ng = group_ports(s, group, names), n = 0;
	size_t need = 16;

	s->sibling_scans++;
	while (need < ((size_t)flowtab_count(s->flows) + (inc ? incident_nflows(inc) : 0)) * 2)
		need *= 2;
	if (need > s->kcap) {
		struct kent *k = realloc(s->kset, need * sizeof(*k));

		if (!k)
			return 0;
		s->kset = k;
		s->kcap = need;
	}
	memset(s->kset, 0, s->kcap * sizeof(*s->kset));
	/* the incident's own connections are never its siblings, released
	 * or not: counted again when the incident ends, a stalled flow that
	 * moves again is no "other connection progressing" */
	for (unsigned i = 0; inc && i < incident_nflows(inc); i++) {
		const struct flow_key *k = incident_flow_norm(inc, i);
		struct kent *e = kset_slot(s, k);

		e->used = 1;
		e->k = *k;
		e->stalled = 1;
	}
	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		struct flow_key k;
		struct kent *e;

		if (!in_group(f, names, ng))
			continue;
		if (f->state != FLOW_STALLED && f->progress_ns < since)
			continue;
		flow_norm_key(&f->obs.key, &k);
		e = kset_slot(s, &k);
		if (!e->used) {
			e->used = 1;
			e->k = k;
		}
		if (f->state == FLOW_STALLED)
			e->stalled = 1;
		else
			e->progressed = 1;
	}
	for (size_t i = 0; i < s->kcap; i++)
		if (s->kset[i].used && s->kset[i].progressed && !s->kset[i].stalled)
			n++;
	return n;
}

/* Bring an incident's sibling count up to date if flows joined since. */
static void refresh_siblings(struct stall *s, struct incident *inc)
{
	uint64_t since;

	if (inc && incident_siblings_due(inc, &since))
		incident_set_siblings(inc, count_siblings(s, inc, incident_group(inc), since));
}

/* Per-flow log lines (joins, releases) are kept to a few per poll: a mass
 * stall or release of 100k flows must not write 100k lines from the loop.
 * The rest are counted and summed up when the poll ends. */
#define FLOW_LINES_PER_POLL 16

static int flow_line_ok(struct stall *s)
{
	if (s->lines < FLOW_LINES_PER_POLL) {
		s->lines++;
		return 1;
	}
	return 0;
}

static void end_incident(struct stall *s, struct incident *inc, int released)
{
	incident_set_siblings(inc, count_siblings(s, inc, incident_group(inc),
						  incident_opened_ns(inc)));
	incident_end(inc, s->now, released, s->c->incident_max_ns);
	if (s->hook)
		s->hook(inc, INCIDENT_END, s->hook_arg);
}

static void on_stalled(struct stall *s, struct sflow *f)
{
	char group[72], tuple[160], d[32];
	struct incident_refusal why;
	struct incident *inc;

	/* The one gate between a claim a process wrote and root acting on it
	 * (an incident: its captures, the reprogram, a bundle that pushes
	 * others out): a claim the kernel did not verify is shown in the flow
	 * list, marked, and goes no further. Its source logs why (rate-limited,
	 * collectors/claimv.h); here it is only counted. */
	if (!flow_obs_may_act(&f->obs)) {
		s->unverified_stalls++;
		f->claim_held = 1;
		return;
	}
	f->claim_held = 0;
	group_of(s, f->port, group, sizeof(group));
	inc = incidents_open_of(s->incs, group);
	/* within the grouping window a stall joins the open incident (and
	 * its running investigation); later ones are incidents of their own */
	if (inc && s->now - incident_opened_ns(inc) <= s->c->group_ns) {
		incident_add_flow(inc, f);
		f->incident = incident_id(inc);
		/* counted again once, when the poll ends (or it is looked at) */
		incident_siblings_stale(inc, s->now - threshold(s, f->port));
		count_flow_stalled(f->port);
		if (flow_line_ok(s)) {
			flow_tuple(f, tuple, sizeof(tuple));
			log_event(LOG_EV_FLOW_STALLED, LOG_INFO,
				  LOG_FIELDS({ LF_PORT, f->port },
					     { LF_INCIDENT, LOG_U64(incident_id(inc)) },
					     { LF_FLOW, tuple }, { LF_SOURCE, flow_src_name(f->obs.src) }),
				  "incident %" PRIu64 ": flow %s (%s) on port %s joins",
				  incident_id(inc), tuple, flow_src_name(f->obs.src), f->port);
		} else {
			/* over this poll's line budget: still an event, no
			 * tuple formatted */
			incident_joins_unlogged(inc, 1);
			log_event(LOG_EV_FLOW_STALLED, LOG_DEBUG,
				  LOG_FIELDS({ LF_PORT, f->port },
					     { LF_INCIDENT, LOG_U64(incident_id(inc)) },
					     { LF_SOURCE, flow_src_name(f->obs.src) }),
				  "incident %" PRIu64 ": one more flow on port %s joins",
				  incident_id(inc), f->port);
		}
		if (s->hook)
			s->hook(inc, INCIDENT_JOIN, s->hook_arg);
		return;
	}
	if (incidents_admit(s->incs, group, s->now, s->c->cooldown_ns, s->c->incidents_per_hour,
			    &why)) {
		/* every suppressed stall is counted and an event; the
		 * journal gets at most one a second */
		count_incident_suppressed(f->port);
		if (why.log)            /* a mass stall: no tuple for each of 100k */
			flow_tuple(f, tuple, sizeof(tuple));
		else
			util_strlcpy(tuple, "-", sizeof(tuple));
		util_fmt_duration(why.since_last_ns, d, sizeof(d));
		log_event(LOG_EV_INCIDENT_SUPPRESSED, why.log ? LOG_WARNING : LOG_DEBUG,
			  LOG_FIELDS({ LF_PORT, f->port }, { LF_FLOW, tuple },
				     { LF_SOURCE, flow_src_name(f->obs.src) }, { LF_REASON, why.why }),
			  "port %s: stall of %s (%s) not investigated: incident %s "
			  "(last incident %s ago, %u in the last hour, %u suppressed so far)",
			  f->port, tuple, flow_src_name(f->obs.src), why.why, d, why.in_hour,
			  why.suppressed);
		return;
	}
	/* stamped when decided: s->now is the poll's start, before its reads */
	inc = incidents_open(s->incs, f->port, group, s->now, loop_mono_ns(), loop_real_ns());
	if (!inc) {
		log_errx("port %s: out of memory opening an incident", f->port);
		return;
	}
	incident_add_flow(inc, f);
	f->incident = incident_id(inc);
	/* every other flow of the group that is stalled too joins now (one
	 * pass, once per incident) */
	{
		const char *names[2];
		unsigned ng = group_ports(s, group, names);

		for (struct sflow *o = flowtab_next(s->flows, NULL); o;
		     o = flowtab_next(s->flows, o)) {
			if (o == f || o->state != FLOW_STALLED || o->incident == incident_id(inc) ||
			    !in_group(o, names, ng) || !flow_obs_may_act(&o->obs))
				continue;
			incident_add_flow(inc, o);
			o->incident = incident_id(inc);
		}
	}
	incident_set_siblings(inc, count_siblings(s, inc, group, s->now - threshold(s, f->port)));
	incident_log_open(inc);
	if (s->hook)
		s->hook(inc, INCIDENT_OPEN, s->hook_arg);
}

static void on_released(struct stall *s, struct sflow *f, int gone)
{
	struct incident *inc = f->incident ? incidents_get(s->incs, f->incident) : NULL;
	char tuple[160], d[32];
	int any;

	count_flow_released(f->port, gone);
	if (!flow_line_ok(s)) {
		if (gone)
			s->closed_unlogged++;
		else
			s->released_unlogged++;
		/* still an event; no line, no tuple */
		log_event(LOG_EV_FLOW_RELEASED, LOG_DEBUG,
			  LOG_FIELDS({ LF_PORT, f->port },
				     { LF_INCIDENT, f->incident ? LOG_U64(f->incident) : NULL },
				     { LF_OUTCOME, gone ? "closed" : "released" }),
			  "port %s: one more flow %s", f->port, gone ? "closed" : "released");
	} else {
		flow_tuple(f, tuple, sizeof(tuple));
		util_fmt_duration(f->last_stall_ns, d, sizeof(d));
		if (gone)
			log_event(LOG_EV_FLOW_RELEASED, LOG_INFO,
				  LOG_FIELDS({ LF_PORT, f->port }, { LF_FLOW, tuple },
					     { LF_SOURCE, flow_src_name(f->obs.src) },
					     { LF_INCIDENT, f->incident ? LOG_U64(f->incident) : NULL },
					     { LF_OUTCOME, "closed" }),
				  "port %s: stalled flow %s (%s) closed", f->port, tuple,
				  flow_src_name(f->obs.src));
		else
			log_event(LOG_EV_FLOW_RELEASED, LOG_INFO,
				  LOG_FIELDS({ LF_PORT, f->port }, { LF_FLOW, tuple },
					     { LF_SOURCE, flow_src_name(f->obs.src) },
					     { LF_INCIDENT, f->incident ? LOG_U64(f->incident) : NULL },
					     { LF_OUTCOME, "released" },
					     { LF_DURATION_MS, LOG_U64(f->last_stall_ns / 1000000u) }),
				  "port %s: flow %s (%s) released after %s stalled", f->port, tuple,
				  flow_src_name(f->obs.src), d);
	}
	f->incident = 0;
	if (!inc || incident_ended(inc))
		return;
	if (incident_flow_done(inc, f, gone, s->now, &any))
		end_incident(s, inc, any);
}

/* A flow whose waits its source cannot date: a wait that began after a
 * poll is dated at the poll that sees it (liveness.c wait_start), so only
 * polls at every interval bound its call. An engine session that
 * publishes no times, or one whose wait was dated so before (bytes held
 * with no send since the last reply); a UDP flow of the tracker, whose
 * frames carry no request boundary (a reply and the next request between
 * two polls would hide the wait for the next reply, liveness.c). */
static int undated(const struct sflow *f, const struct flow_obs *o)
{
	if (o->src == FLOW_SRC_ENGINE)
		return f->undated_wait ||
		       (!o->last_tx_ns && !o->last_rx_ns &&
			(o->tx_msgs || o->rx_msgs || o->unsent || (o->state & 0x4u)));
	return o->src == FLOW_SRC_BPF && o->key.proto == 17;
}

/* A flow observed at now: when must the next poll come for it? */
static void plan_flow(struct stall *s, const struct sflow *f, const struct flow_obs *o,
		      uint64_t now, uint64_t th)
{
	uint64_t iv = s->c->flow_interval_ns, want_at, d;

	if (f->state == FLOW_STALLED) {
		fast(s, WHY_STALLED);   /* its release, and the incident's */
		return;
	}
	if (undated(f, o))
		fast(s, WHY_UNDATED);
	if (f->state != FLOW_WAITING)
		return;
	/* its want (a threshold less a poll into the wait, at least half a
	 * threshold), then its stall (strictly more than a threshold) */
	want_at = f->wait_since_ns + (th > 2 * iv ? th - iv : th / 2);
	d = now < want_at ? want_at : f->wait_since_ns + th + 1;
	if (d < s->plan_ns) {
		s->plan_ns = d;
		s->plan_why = now < want_at ? WHY_WANT : WHY_DEADLINE;
	}
}

void stall_observe(struct stall *s, const struct flow_obs *o, const char *port, uint64_t now)
{
	struct sflow *f;

	uint64_t th = threshold(s, port);

	s->now = now;
	f = flowtab_get(s->flows, o, port, now, 1);
	if (!f)
		return;
	/* a wait start is believed back to the last poll, a gap ago (kernel
	 * TCP's progress is the kernel's own time: an interval's slack) */
	switch (flow_update(f, o, now, th,
			    o->src != FLOW_SRC_SOCK && s->gap_ns ? s->gap_ns : s->c->flow_interval_ns)) {
	case FLOW_EV_STALLED:
		on_stalled(s, f);
		break;
	case FLOW_EV_RELEASED:
		on_released(s, f, 0);
		break;
	default:
		/* stalled while its claim was unchecked (the checks' budget
		 * spent) or unverified, and verified now: the stall is acted on
		 * now, not never (liveness reports a stall once) */
		if (f->claim_held && f->state == FLOW_STALLED && !f->incident &&
		    flow_obs_may_act(&f->obs))
			on_stalled(s, f);
		break;
	}
	/* a flow waiting half its threshold: the port's evidence-only
	 * sources (the tracker's hooks) come on (once per port and poll) */
	if (f->state != FLOW_IDLE && now >= f->wait_since_ns && now - f->wait_since_ns >= th / 2 &&
	    (s->want_ns != now || strcmp(s->want_port, port))) {
		s->want_ns = now;
		util_strlcpy(s->want_port, port, sizeof(s->want_port));
		if (flowsrcs_want(s->srcs, port, now))
			s->repoll = 1;
	}
	plan_flow(s, f, o, now, th);
	tpass_observe(s->tpass, f, now, th);
}

static void emit_cb(const struct flow_obs *o, const char *port, void *arg)
{
	struct stall *s = arg;

	if (s->qn == s->qcap) {
		size_t nc = s->qcap ? s->qcap * 2 : 1024;
		struct qobs *nq = realloc(s->q, nc * sizeof(*nq));

		if (!nq) {              /* handled at once then, still correct */
			stall_observe(s, o, port, s->now);
			return;
		}
		s->q = nq;
		s->qcap = nc;
	}
	s->q[s->qn].o = *o;
	util_strlcpy(s->q[s->qn].port, port, sizeof(s->q[0].port));
	s->qn++;
}

static void gone_cb(struct sflow *f, void *arg)
{
	if (f->state == FLOW_STALLED)
		on_released(arg, f, 1);
}

static void refused_cb(const struct flowtab_use *u, void *arg)
{
	char *buf = arg;
	size_t off = strlen(buf);

	if (off > 400)
		return;
	if (u->uid_known)
		snprintf(buf + off, 512 - off, "%s%" PRIu64 " %s flow(s) of uid %u (limit %u per owner)",
			 off ? "; " : "", u->refused, flow_src_name(u->src), (unsigned)u->uid,
			 u->limit);
	else
		snprintf(buf + off, 512 - off, "%s%" PRIu64 " %s flow(s) (limit %u for the source)",
			 off ? "; " : "", u->refused, flow_src_name(u->src), u->limit);
}

/* Flows refused by a limit: logged at most every 10 s, with who owns them. */
static void log_refusals(struct stall *s, uint64_t now)
{
	char buf[512] = "";

	if (flowtab_refused(s->flows) == s->refused_logged ||
	    (s->refused_log_ns && now - s->refused_log_ns < 10000000000ull))
		return;
	s->refused_logged = flowtab_refused(s->flows);
	s->refused_log_ns = now;
	flowtab_usage(s->flows, 1, refused_cb, buf);
	log_warnx("flow limits: new flows not tracked so far: %s", buf);
}

/* Each port's host-resource source reads the processes that own its
 * watched flows (their pids as the flow sources give them): one pass over
 * the flows, kernel TCP flows (no pid) skipped at once. */
static void watch_owners(struct stall *s)
{
	unsigned np = ports_count(s->ports);
	int (*pids)[HOST_MAX_PIDS] = np ? calloc(np, sizeof(*pids)) : NULL;
	unsigned *n = np ? calloc(np, sizeof(*n)) : NULL;

	for (struct sflow *f = pids && n ? flowtab_next(s->flows, NULL) : NULL; f;
	     f = flowtab_next(s->flows, f)) {
		unsigned i = 0, j = 0;

		if (f->obs.pid <= 0)
			continue;
		while (i < np && strcmp(f->port, port_name(ports_at(s->ports, i))))
			i++;
		if (i == np || n[i] >= HOST_MAX_PIDS)
			continue;
		while (j < n[i] && pids[i][j] != f->obs.pid)
			j++;
		if (j == n[i])
			pids[i][n[i]++] = f->obs.pid;
	}
	for (unsigned i = 0; pids && n && i < np; i++)
		port_host_watch(ports_at(s->ports, i), pids[i], n[i]);
	free(pids);
	free(n);
}

static void thread_stall(struct sflow *f, void *arg)
{
	if (flow_stall_now(f) == FLOW_EV_STALLED)
		on_stalled(arg, f);
}

void stall_poll_end(struct stall *s, uint64_t now)
{
	s->now = now;
	if (now > s->poll_end)
		s->poll_end = now;
	/* engine threads blocked while their flows wait (before any flow
	 * is freed: the pass holds this poll's waiting flows) */
	tpass_run(s->tpass, now, s->gap_ns ? s->gap_ns : s->c->flow_interval_ns, thread_stall,
		  s);
	/* flows not seen lately are closed; open incidents time out */
	if (now >= s->next_expire) {
		flowtab_expire(s->flows, now, gone_cb, s);
		watch_owners(s);
		s->next_expire = now + STALL_EXPIRE_EVERY_NS;
	}
	for (struct incident *inc = incidents_next(s->incs, NULL); inc;
	     inc = incidents_next(s->incs, inc)) {
		unsigned n;

		if (!incident_ended(inc) && now - incident_opened_ns(inc) > s->c->incident_max_ns)
			end_incident(s, inc, 0);
		if (!incident_ended(inc))
			fast(s, WHY_INCIDENT);  /* its flows' releases, its joins */
		refresh_siblings(s, inc);
		n = incident_joins_unlogged(inc, -1);
		if (n)
			log_info("incident %" PRIu64 ": %u more flow(s) joined (%u stalled in all, "
				 "%u listed)", incident_id(inc), n, incident_flows_stalled(inc),
				 incident_nflows(inc));
	}
	if (s->released_unlogged || s->closed_unlogged)
		log_info("%u more stalled flow(s) released and %u closed this poll",
			 s->released_unlogged, s->closed_unlogged);
	s->released_unlogged = s->closed_unlogged = 0;
	s->lines = 0;
	log_refusals(s, now);
}

uint64_t stall_plan(const struct stall *s, const char **why)
{
	uint64_t iv = s->c->flow_interval_ns, t0 = s->poll_t0;
	uint64_t src = flowsrcs_next_ns(s->srcs), refresh, next;
	const char *w;

	if (s->repoll) {
		next = t0;
		w = WHY_WANT;
	} else if (s->fast || !src) {
		next = t0 + iv;
		w = s->fast ? s->fast_why : WHY_SOURCE;
	} else {
		refresh = flowsrcs_refresh_ns(s->min_th, iv);
		next = t0 + (refresh > iv ? refresh : iv);
		w = WHY_REFRESH;
		if (src < next) {
			next = src;
			w = WHY_SOURCE;
		}
		if (s->plan_ns < next) {
			next = s->plan_ns;
			w = s->plan_why;
		}
		if (next < t0 + iv) {
			next = t0 + iv;
			w = WHY_INTERVAL;
		}
	}
	/* a poll handled for longer than the interval (in chunks): half an
	 * interval's rest after it, as the regular timer's next tick gave */
	if (!s->repoll && next < s->poll_end + iv / 2) {
		next = s->poll_end + iv / 2;
		w = WHY_INTERVAL;
	}
	if (why)
		*why = w;
	return next;
}

/* Arm the timer for the next poll, as planned. */
static void plan_next(struct stall *s)
{
	uint64_t now = loop_mono_ns();

	s->next_poll = stall_plan(s, &s->next_why);
	loop_timer_set(s->timer, s->next_poll > now ? s->next_poll - now : 1, 0);
}

/* The detector's CPU time since det_cpu0 (the sources' last reading, or
 * this chunk's start) added to this poll's. */
static void det_lap(struct stall *s)
{
	uint64_t c = cost_cpu_ns();

	s->det_ns += c > s->det_cpu0 ? c - s->det_cpu0 : 0;
}

/* Handle queued observations, at most max (0: all); at the end of the
 * queue the poll ends. 1 while some are left. */
static int drain(struct stall *s, size_t max)
{
	uint64_t t = loop_mono_ns(), t1;
	size_t end = max && s->qn - s->qpos > max ? s->qpos + max : s->qn;

	for (; s->qpos < end; s->qpos++)
		stall_observe(s, &s->q[s->qpos].o, s->q[s->qpos].port, s->poll_t0);
	t1 = loop_mono_ns();
	s->poll_busy_ns += t1 - t;
	if (s->qpos < s->qn) {
		det_lap(s);
		return 1;
	}
	stall_poll_end(s, s->poll_t0);
	s->polls++;
	det_lap(s);
	t = loop_mono_ns();
	s->poll_cost_ns = s->poll_busy_ns + t - t1;
	cost_add(&s->detector, s->det_ns, t);
	s->det_ns = 0;
	/* give back what a storm needed, once it is well past */
	if (s->qcap > 16384 && s->qn < s->qcap / 8) {
		struct qobs *nq = realloc(s->q, (s->qcap / 4) * sizeof(*nq));

		if (nq) {
			s->q = nq;
			s->qcap /= 4;
		}
	}
	s->qn = s->qpos = 0;
	s->chunked = 0;
	s->poll_end = t;
	plan_next(s);
	return 0;
}

void stall_poll_begin(struct stall *s, uint64_t t0)
{
	uint64_t iv = s->c->flow_interval_ns;

	s->gap_ns = s->prev_t0 && t0 > s->prev_t0 && t0 - s->prev_t0 > iv ? t0 - s->prev_t0 : iv;
	s->prev_t0 = t0;
	s->plan_ns = UINT64_MAX;
	s->plan_why = NULL;
	s->fast = s->repoll = 0;
	s->fast_why = NULL;
	s->now = s->poll_t0 = s->poll_end = t0;
}

static void poll_begin(struct stall *s)
{
	uint64_t t0 = loop_mono_ns();

	stall_poll_begin(s, t0);
	s->qn = s->qpos = 0;
	s->det_cpu0 = flowsrcs_poll(s->srcs, t0, emit_cb, s);
	s->poll_busy_ns = loop_mono_ns() - t0;
}

static void chunk_cb(struct loop_timer *t, void *arg)
{
	struct stall *s = arg;

	(void)t;
	if (!s->chunked)
		return;
	s->det_cpu0 = cost_cpu_ns();
	if (drain(s, STALL_CHUNK))
		loop_timer_set(s->chunk, 1, 0);         /* next loop turn */
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	struct stall *s = arg;

	(void)t;
	if (s->chunked)                 /* the last poll is still being handled:
					 * its end plans the next */
		return;
	poll_begin(s);
	s->chunked = 1;
	if (drain(s, STALL_CHUNK))
		loop_timer_set(s->chunk, 1, 0);
}

struct stall *stall_new(struct loop *l, struct ports *ps, const struct conf *c,
			char *err, size_t errlen)
{
	struct stall *s = calloc(1, sizeof(*s));

	if (!s) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	s->loop = l;
	s->c = c;
	sip_key_random(&s->kkey);
	s->flows = flowtab_new();
	s->incs = incidents_new();
	s->srcs = flowsrcs_new(l, ps);
	s->ports = ps;
	s->timer = loop_timer_new(l, timer_cb, s);
	s->chunk = loop_timer_new(l, chunk_cb, s);
	s->tpass = tpass_new();
	if (!s->flows || !s->incs || !s->srcs || !s->timer || !s->chunk || !s->tpass) {
		util_errf(err, errlen, "%s", s->timer ? "out of memory" : "flow timer");
		stall_free(s);
		return NULL;
	}
	stall_configure(s, c);
	return s;
}

void stall_configure(struct stall *s, const struct conf *c)
{
	s->c = c;
	s->th_ok = 0;           /* thresholds may have changed */
	s->min_th = c->stall_ns;
	for (unsigned i = 0; i < c->nports; i++)
		if (c->ports[i].stall_ns && c->ports[i].stall_ns < s->min_th)
			s->min_th = c->ports[i].stall_ns;
	flowsrcs_configure(s->srcs, c);
	tpass_configure(s->tpass, c);
	/* a poll after the interval, with the new sources; the plan goes on
	 * from its end (a poll still being handled plans the next itself) */
	if (!s->chunked) {
		s->next_poll = loop_mono_ns() + c->flow_interval_ns;
		s->next_why = WHY_INTERVAL;
		loop_timer_set(s->timer, c->flow_interval_ns, 0);
	}
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
	loop_timer_free(s->chunk);
	free(s->q);
	flowsrcs_free(s->srcs);
	tpass_free(s->tpass);
	flowtab_free(s->flows);
	incidents_free(s->incs);
	free(s->kset);
	free(s);
}

struct flowsrcs *stall_flowsrcs(struct stall *s)
{
	return s->srcs;
}

struct incident *stall_incident(struct stall *s, uint64_t id)
{
	struct incident *inc = incidents_get(s->incs, id);

	refresh_siblings(s, inc);
	return inc;
}

/* ------------------------------------------------------------------ */
/* JSON views */

/* Listing order: port, stalled before waiting before the rest, then the
 * tuple (addresses and ports as numbers), source and session. Compared on
 * the flows themselves: a mass stall lists the first max of 100k flows
 * without formatting, or even allocating, the others. */
static int state_rank(enum flow_state st)
{
	return st == FLOW_STALLED ? 0 : st == FLOW_IDLE ? 2 : 1;
}

static int flow_cmp(const void *a, const void *b)
{
	const struct sflow *x = *(const struct sflow *const *)a;
	const struct sflow *y = *(const struct sflow *const *)b;
	int c = strcmp(x->port, y->port);

	if (!c)
		c = state_rank(x->state) - state_rank(y->state);
	if (!c)
		c = memcmp(&x->obs.key.saddr, &y->obs.key.saddr, sizeof(x->obs.key.saddr));
	if (!c)
		c = (int)x->obs.key.sport - (int)y->obs.key.sport;
	if (!c)
		c = memcmp(&x->obs.key.daddr, &y->obs.key.daddr, sizeof(x->obs.key.daddr));
	if (!c)
		c = (int)x->obs.key.dport - (int)y->obs.key.dport;
	if (!c)
		c = (int)x->obs.key.proto - (int)y->obs.key.proto;
	if (!c)
		c = (int)x->obs.src - (int)y->obs.src;
	if (!c)
		c = x->obs.session < y->obs.session ? -1 : x->obs.session > y->obs.session;
	return c;
}

/* Restore the max-heap (by flow_cmp) below v[k] of v[0..n). */
static void sift_down(const struct sflow **v, size_t n, size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;

		if (l < n && flow_cmp(&v[l], &v[m]) > 0)
			m = l;
		if (r < n && flow_cmp(&v[r], &v[m]) > 0)
			m = r;
		if (m == k)
			return;
		const struct sflow *t = v[k];

		v[k] = v[m];
		v[m] = t;
		k = m;
	}
}

static struct json_object *flow_json(const struct sflow *f, uint64_t now)
{
	struct json_object *o = json_object_new_object(), *held;
	char tuple[160];

	flow_tuple(f, tuple, sizeof(tuple));
	jx_add_str(o, "port", f->port);
	jx_add_str(o, "source", flow_src_name(f->obs.src));
	jx_add_str(o, "tuple", tuple);
	/* a session is an engine's word: a kernel socket or the tc tracker
	 * has none (not "session": 0) */
	if (f->obs.src != FLOW_SRC_SOCK && f->obs.src != FLOW_SRC_BPF)
		jx_add_u64(o, "session", f->obs.session);
	jx_add_str(o, "state", flow_state_name(f->state));
	jx_add_ms(o, "progress_age_ms", now - f->progress_ns);
	if (f->state != FLOW_IDLE)
		jx_add_ms(o, "waiting_ms", now - f->wait_since_ns);
	jx_add_u64(o, "tx_msgs", f->obs.tx_msgs);
	jx_add_u64(o, "rx_msgs", f->obs.rx_msgs);
	jx_add_u64(o, "tx_bytes", f->obs.tx_bytes);
	jx_add_u64(o, "rx_bytes", f->obs.rx_bytes);
	held = json_object_new_object();
	jx_add_u64(held, "unsent", f->obs.unsent);
	jx_add_u64(held, "unread", f->obs.unread);
	jx_add_u64(held, "staged", f->obs.staged);
	json_object_object_add(o, "held", held);
	if (f->obs.src == FLOW_SRC_SOCK)
		jx_add_u64(o, "inflight", f->obs.inflight);
	if (f->obs.src == FLOW_SRC_SOCK)
		jx_add_u64(o, "retrans", f->obs.retrans);
	if (f->obs.pid)
		jx_add_int(o, "pid", f->obs.pid);
	if (f->obs.engine[0])
		jx_add_str(o, "engine", f->obs.engine);
	if (f->obs.inode)
		jx_add_u64(o, "inode", f->obs.inode);
	if (flow_obs_is_claim(&f->obs))
		jx_add_str(o, "claim", f->obs.claim == FLOW_CLAIM_VERIFIED ? "verified" :
			   f->obs.claim == FLOW_CLAIM_UNVERIFIED ? "unverified" : "unchecked");
	jx_add_u64(o, "stalls", f->stalls);
	if (f->last_stall_ns)
		jx_add_ms(o, "last_stall_ms", f->last_stall_ns);
	if (f->incident)
		jx_add_u64(o, "incident", f->incident);
	return o;
}

struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only,
				     unsigned max, unsigned *total)
{
	struct json_object *arr = json_object_new_array();
	uint64_t now = loop_mono_ns();
	const struct sflow **v = NULL;
	size_t n = 0, cap = 0;

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		if (port && strcmp(port, f->port))
			continue;
		if (stalled_only && f->state != FLOW_STALLED)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			const struct sflow **nv = realloc(v, nc * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n++] = f;
	}
	if (total)
		*total = (unsigned)n;
	if (max && n > max) {
		/* the first max in order without sorting them all: a max-heap
		 * of the best max seen, one comparison for most flows */
		for (size_t i = max; i < n; i++) {
			size_t k = 0;

			if (i == max)
				for (size_t j = max / 2; j-- > 0;)
					sift_down(v, max, j);
			if (flow_cmp(&v[i], &v[0]) >= 0)
				continue;
			v[0] = v[i];
			sift_down(v, max, k);
		}
		n = max;
	}
	if (n)
		qsort(v, n, sizeof(*v), flow_cmp);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, flow_json(v[i], now));
	free(v);
	return arr;
}

struct json_object *stall_incidents_json(struct stall *s)
{
	for (struct incident *inc = incidents_next(s->incs, NULL); inc;
	     inc = incidents_next(s->incs, inc))
		refresh_siblings(s, inc);
	return incidents_json(s->incs, loop_mono_ns());
}

static void use_json(const struct flowtab_use *u, void *arg)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "source", flow_src_name(u->src));
	if (u->uid_known)
		jx_add_u64(o, "uid", u->uid);
	jx_add_u64(o, "flows", u->flows);
	jx_add_u64(o, "limit", u->limit);
	jx_add_u64(o, "refused", u->refused);
	json_object_array_add(arg, o);
}

struct json_object *stall_engines_json(struct stall *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *lim = json_object_new_array(), *det;
	uint64_t now;

	flowsrcs_status(s->srcs, o);
	tpass_status(s->tpass, o);
	jx_add_u64(o, "flows", flowtab_count(s->flows));
	/* every source, and the owners that have had flows refused */
	flowtab_usage(s->flows, 0, use_json, lim);
	json_object_object_add(o, "limits", lim);
	jx_add_u64(o, "hash_buckets", flowtab_buckets(s->flows));
	jx_add_u64(o, "sibling_scans", s->sibling_scans);
	jx_add_u64(o, "unverified_stalls", s->unverified_stalls);
	jx_add_u64(o, "polls", s->polls);
	jx_add_double(o, "poll_cost_us", (double)s->poll_cost_ns / 1000.0);
	/* when the next poll comes, and why then (plan_next) */
	det = json_object_new_object();
	now = loop_mono_ns();
	jx_add_double(det, "in_ms", s->next_poll > now ? (double)(s->next_poll - now) / 1e6 : 0.0);
	jx_add_str(det, "why", s->next_why ? s->next_why : WHY_INTERVAL);
	json_object_object_add(o, "next_poll", det);
	/* what the detector's work costs beside the sources' (cost.h) */
	det = json_object_new_object();
	cost_json(&s->detector, loop_mono_ns(), det);
	json_object_object_add(o, "detector", det);
	return o;
}

size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max)
{
	const char *names[2];
	unsigned ng = group_ports(s, incident_group(inc), names);
	size_t n = 0;
	char t[160];

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		struct flow_key k;
		int match;

		if (!f->obs.pid && !f->obs.inode)
			continue;
		if (!in_group(f, names, ng))
			continue;
		flow_norm_key(&f->obs.key, &k);
		match = incident_has_norm(inc, &k);
		if (!match)
			continue;
		for (size_t j = 0; j < n; j++)
			if ((f->obs.pid && out[j].pid == f->obs.pid) ||
			    (f->obs.inode && out[j].inode == f->obs.inode))
				match = 0;
		if (!match || n >= max)
			continue;
		flow_norm_tuple(f, t, sizeof(t));
		out[n].pid = f->obs.pid;
		out[n].inode = f->obs.inode;
		util_strlcpy(out[n].port, f->port, sizeof(out[n].port));
		util_strlcpy(out[n].tuple, t, sizeof(out[n].tuple));
		n++;
	}
	return n;
}

void stall_flow_counts(const struct stall *s, const char *port, unsigned counts[3])
{
	counts[FLOW_IDLE] = counts[FLOW_WAITING] = counts[FLOW_STALLED] = 0;
	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f))
		if ((!port || !strcmp(port, f->port)) && (unsigned)f->state < 3)
			counts[f->state]++;
}

unsigned stall_longest_wait(const struct stall *s, uint64_t now, uint64_t *longest_ns)
{
	unsigned n = 0;

	*longest_ns = 0;
	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		n++;
		if ((f->state == FLOW_WAITING || f->state == FLOW_STALLED) && f->wait_since_ns &&
		    now > f->wait_since_ns && now - f->wait_since_ns > *longest_ns)
			*longest_ns = now - f->wait_since_ns;
	}
	return n;
}

unsigned stall_incident_flows(struct stall *s, const struct incident *inc,
			      void (*fn)(const struct flow_obs *o, void *arg), void *arg)
{
	unsigned n = 0;

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f))
		if (f->state == FLOW_STALLED && f->incident == incident_id(inc)) {
			fn(&f->obs, arg);
			n++;
		}
	return n;
}

unsigned stall_incident_retrans(struct stall *s, const struct incident *inc, uint64_t *retrans)
{
	unsigned n = 0;

	*retrans = 0;
	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		if (f->state != FLOW_STALLED || f->incident != incident_id(inc))
			continue;
		/* the sources that publish the sender's own count:
		 * tcp_get_info() tcpi_total_retrans, Onload's total_retrans,
		 * VMA/XLIO n_tx_retransmits */
		if (f->obs.src != FLOW_SRC_SOCK && f->obs.src != FLOW_SRC_ONLOAD &&
		    f->obs.src != FLOW_SRC_VMA)
			continue;
		n++;
		if (f->obs.retrans >= f->retrans_at_progress)
			*retrans += f->obs.retrans - f->retrans_at_progress;
	}
	/* and those released meanwhile: the wait their release ended */
	return n + incident_released_retrans(inc, retrans);
}

struct json_object *stall_thread_evidence(struct stall *s, int pid)
{
	return tpass_evidence(s->tpass, pid, 0);
}

unsigned stall_waiting_pids(struct stall *s, const char *const *ports, unsigned nports,
			    int32_t *pids, unsigned max)
{
	unsigned n = 0;

	for (struct sflow *f = flowtab_next(s->flows, NULL); f && n < max;
	     f = flowtab_next(s->flows, f)) {
		int on = 0, have = 0;

		if ((f->state != FLOW_WAITING && f->state != FLOW_STALLED) || f->obs.pid <= 0)
			continue;
		for (unsigned i = 0; i < nports && !on; i++)
			on = !strcmp(f->port, ports[i]);
		for (unsigned i = 0; i < n && !have; i++)
			have = pids[i] == f->obs.pid;
		if (on && !have)
			pids[n++] = f->obs.pid;
	}
	return n;
}

unsigned stall_thread_called(const struct stall *s, int32_t *pids, unsigned max)
{
	return tpass_called(s->tpass, pids, max);
}
