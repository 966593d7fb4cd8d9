/* stall: the detector: polls and their handling in chunks, the flows'
 * state machines, incidents. When the next poll comes is stall_plan.c's,
 * incident groups and siblings stall_group.c's, the views stall_view.c's
 * (stall_int.h). */
#include "daemon/detect/stall.h"
#include "daemon/detect/owners.h"
#include "daemon/detect/stall_int.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/incident.h"
#include "daemon/detect/liveness.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/detect/threadpass.h"
#include "lib/cost.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/siphash.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALL_CHUNK 8192u

/* Closed flows are looked for this often, not every poll: a flow is gone
 * after LIVENESS_GONE_NS unseen, and walking every bucket each 50 ms was
 * 4% of the idle daemon. */
#define STALL_EXPIRE_EVERY_NS 250000000ull
#define STALL_OWNERS_EVERY_NS 2000000000ull

static uint64_t threshold(struct stall *s, const char *port)
{
	if (!s->th_ok || strcmp(port, s->th_port)) {
		const struct port_conf *pc = stall_port_conf(s, port);

		s->th_ns = pc && pc->stall_ns ? pc->stall_ns : s->c->stall_ns;
		util_strlcpy(s->th_port, port, sizeof(s->th_port));
		s->th_ok = 1;
	}
	return s->th_ns;
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
	incident_set_siblings(inc, stall_count_siblings(s, inc, incident_group(inc),
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
	 * collectors/flows/claimv.h); here it is only counted. */
	if (!flow_obs_may_act(&f->obs)) {
		s->unverified_stalls++;
		f->claim_held = 1;
		return;
	}
	f->claim_held = 0;
	stall_group_of(s, f->port, group, sizeof(group));
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
		unsigned ng = stall_group_ports(s, group, names);

		for (struct sflow *o = livetab_next(s->flows, NULL); o;
		     o = livetab_next(s->flows, o)) {
			if (o == f || o->state != FLOW_STALLED || o->incident == incident_id(inc) ||
			    !stall_in_group(o, names, ng) || !flow_obs_may_act(&o->obs))
				continue;
			incident_add_flow(inc, o);
			o->incident = incident_id(inc);
		}
	}
	incident_set_siblings(inc, stall_count_siblings(s, inc, group, s->now - threshold(s, f->port)));
	incident_log_open(inc);
	if (s->hook)
		s->hook(inc, INCIDENT_OPEN, s->hook_arg);
}

static void on_released(struct stall *s, struct sflow *f, int gone, uint64_t still_ns)
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
	if (incident_flow_done(inc, f, gone, s->now, still_ns, &any))
		end_incident(s, inc, any);
}


void stall_observe(struct stall *s, const struct flow_obs *o, const char *port, uint64_t now)
{
	struct sflow *f;
	uint64_t th = threshold(s, port), seen;
	int32_t opid;

	s->now = now;
	f = livetab_get(s->flows, o, port, now, 1);
	if (!f)
		return;
	/* the last look before this one, or, for a source that emits its
	 * last read again, the time that read's data is of (flow_obs.data_ns) */
	seen = f->seen_ns && f->obs.data_ns && f->obs.data_ns < f->seen_ns ?
	       f->obs.data_ns : f->seen_ns;
	opid = f->seen_ns ? f->obs.pid : 0;
	if (o->pid > 0 ? o->pid != opid : opid > 0) {
		owners_del(s->owners, f->port, opid);
		owners_add(s->owners, f->port, o->pid);
		s->owners_dirty = 1;    /* watch_owners() has work */
	}
	/* a wait start is believed back to the last poll, a gap ago (kernel
	 * TCP's progress is the kernel's own time: an interval's slack) */
	switch (flow_update(f, o, now, th,
			    o->src != FLOW_SRC_SOCK && s->gap_ns ? s->gap_ns : s->c->flow_interval_ns)) {
	case FLOW_EV_STALLED:
		on_stalled(s, f);
		break;
	case FLOW_EV_RELEASED:
		on_released(s, f, 0, seen);
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
	stall_plan_flow(s, f, o, now, th);
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
	struct stall *s = arg;

	if (f->obs.pid > 0) {
		owners_del(s->owners, f->port, f->obs.pid);
		s->owners_dirty = 1;
	}
	if (f->state == FLOW_STALLED)
		on_released(s, f, 1, f->seen_ns);
}

static void refused_cb(const struct livetab_use *u, void *arg)
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

	if (livetab_refused(s->flows) == s->refused_logged ||
	    (s->refused_log_ns && now - s->refused_log_ns < 10000000000ull))
		return;
	s->refused_logged = livetab_refused(s->flows);
	s->refused_log_ns = now;
	livetab_usage(s->flows, 1, refused_cb, buf);
	log_warnx("flow limits: new flows not tracked so far: %s", buf);
}

/* Each port's host-resource source reads the processes that own its
 * watched flows (their pids as the flow sources give them): one pass over
 * the flows, kernel TCP flows (no pid) skipped at once. */
static void watch_owners(struct stall *s)
{
	unsigned np = ports_count(s->ports);
	int (*pids)[HOST_MAX_PIDS];
	unsigned *n;

	/* kept as flows come and go (owners.h); counted again when a count
	 * was lost or pairs that went filled it (a walk, hashed) */
	if (owners_unsure(s->owners)) {
		owners_clear(s->owners);
		for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f))
			owners_add(s->owners, f->port, f->obs.pid);
	}
	if (!owners_unsure(s->owners)) {
		int one[HOST_MAX_PIDS];

		for (unsigned i = 0; i < np; i++) {
			struct port *p = ports_at(s->ports, i);

			port_host_watch(p, one, owners_of(s->owners, port_name(p), one,
							  HOST_MAX_PIDS));
		}
		return;
	}
	/* more owners than the table holds: each port's first HOST_MAX_PIDS
	 * by a walk of every flow */
	pids = np ? calloc(np, sizeof(*pids)) : NULL;
	n = np ? calloc(np, sizeof(*n)) : NULL;
	for (struct sflow *f = pids && n ? livetab_next(s->flows, NULL) : NULL; f;
	     f = livetab_next(s->flows, f)) {
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
		livetab_expire(s->flows, now, gone_cb, s);
		/* the owners told to the ports' host sources: when an owner
		 * came or went, and every STALL_OWNERS_EVERY_NS (a port's host
		 * source opened since) */
		if (s->owners_dirty || now - s->owners_ns >= STALL_OWNERS_EVERY_NS) {
			watch_owners(s);
			s->owners_dirty = 0;
			s->owners_ns = now;
		}
		s->next_expire = now + STALL_EXPIRE_EVERY_NS;
	}
	for (struct incident *inc = incidents_next(s->incs, NULL); inc;
	     inc = incidents_next(s->incs, inc)) {
		unsigned n;

		if (!incident_ended(inc) && now - incident_opened_ns(inc) > s->c->incident_max_ns)
			end_incident(s, inc, 0);
		if (!incident_ended(inc))
			stall_fast(s, WHY_INCIDENT);  /* its flows' releases, its joins */
		stall_refresh_siblings(s, inc);
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


/* When a poll a source's post asks for comes (the kernel's word that a
 * wait reached a threshold less a poll: sock_liveness = events): now, or
 * stall_soonest(). */
static uint64_t wake_at(const struct stall *s, uint64_t now)
{
	uint64_t at = stall_soonest(s, s->c->flow_interval_ns);

	return at > now ? at : now;
}

/* Arm the timer for the next poll, as planned. */
static void plan_next(struct stall *s)
{
	uint64_t now = loop_mono_ns(), early, late;

	s->next_poll = stall_plan(s, &s->next_why);
	if (s->wake_pending) {
		/* a source's fd said something fell due while the poll was
		 * being handled */
		uint64_t at = wake_at(s, now);

		s->wake_pending = 0;
		if (at < s->next_poll) {
			s->next_poll = at;
			s->next_why = WHY_SOURCE;
		}
	}
	/* nothing asked: the longest sleep, and the poll it ends may come at
	 * any other wakeup in a window (stall_plan_window), so that an idle
	 * daemon wakes for its sweeps alone */
	s->next_windowed = stall_plan_window(s, now, s->next_poll, s->next_why, s->idle_alone,
					     &early, &late);
	if (s->next_windowed) {
		s->next_latest = now + late;
		loop_timer_set_window(s->timer, early, late);
		return;
	}
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
	s->plan_ns = s->dl_ns = UINT64_MAX;
	s->plan_why = NULL;
	s->fast = s->repoll = 0;
	s->fast_why = NULL;
	s->now = s->poll_t0 = s->poll_end = s->idle_t0 = t0;
}

void stall_poll_woken(struct stall *s, uint64_t wake_ns)
{
	if (wake_ns && wake_ns <= s->poll_t0)
		s->idle_t0 = wake_ns;
}

static void poll_begin(struct stall *s)
{
	uint64_t t0 = loop_mono_ns();

	stall_poll_begin(s, t0);
	stall_poll_woken(s, loop_wake_ns(s->loop));
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

/* A poll came for why (a WHY_* string): counted, by its text (the same
 * literal in two files need not be one address). */
static void count_why(struct stall *s, const char *why)
{
	size_t n = sizeof(s->polls_why) / sizeof(s->polls_why[0]), i;

	for (i = 0; i < n && s->polls_why[i].why && strcmp(s->polls_why[i].why, why); i++)
		;
	if (i == n)
		return;
	s->polls_why[i].why = why;
	s->polls_why[i].n++;
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	struct stall *s = arg;

	(void)t;
	if (s->chunked)                 /* the last poll is still being handled:
					 * its end plans the next */
		return;
	count_why(s, s->next_why ? s->next_why : WHY_INTERVAL);
	/* a poll while nothing asked may come at another wakeup, early
	 * (plan_next): what the sources would ask a poll for within the
	 * rest of its sleep they may do now. One that came at its end alone,
	 * or was planned for a source or a flow, is off the sweep's phase:
	 * the next window takes the phase again (stall_plan_window's alone;
	 * from the last poll for a source, a last tenth would miss the sweep
	 * and come alone once) */
	s->idle_alone = 1;
	if (s->next_windowed) {
		uint64_t now = loop_mono_ns();

		flowsrcs_set_slack(s->srcs, s->next_poll > now ? s->next_poll - now : 0);
		s->idle_alone = now >= s->next_latest;
	}
	poll_begin(s);
	s->chunked = 1;
	if (drain(s, STALL_CHUNK))
		loop_timer_set(s->chunk, 1, 0);
}

/* A source's kernel said a flow's wait reached a threshold less a poll: a
 * poll as wake_at() says, if sooner than the one planned (a poll still
 * being handled plans the next itself). */
static void wake_cb(void *arg)
{
	struct stall *s = arg;
	uint64_t now = loop_mono_ns(), at;

	if (s->chunked) {
		s->wake_pending = 1;    /* plan_next, at the poll's end */
		return;
	}
	at = wake_at(s, now);
	if (at >= s->next_poll)
		return;
	s->next_poll = at;
	s->next_why = WHY_SOURCE;
	s->next_windowed = 0;
	loop_timer_set(s->timer, at > now ? at - now : 1, 0);
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
	s->flows = livetab_new();
	s->owners = owners_new();
	s->incs = incidents_new();
	s->srcs = flowsrcs_new(l, ps);
	s->ports = ps;
	s->timer = loop_timer_new(l, timer_cb, s);
	s->chunk = loop_timer_new(l, chunk_cb, s);
	s->tpass = tpass_new();
	if (s->timer && s->chunk) {
		loop_timer_name(s->timer, "flow poll");
		loop_timer_name(s->chunk, "flow poll");
	}
	if (!s->flows || !s->owners || !s->incs || !s->srcs || !s->timer || !s->chunk || !s->tpass) {
		util_errf(err, errlen, "%s", s->timer ? "out of memory" : "flow timer");
		stall_free(s);
		return NULL;
	}
	flowsrcs_set_wake(s->srcs, wake_cb, s);
	stall_configure(s, c);
	return s;
}

void stall_configure(struct stall *s, const struct conf *c)
{
	s->c = c;
	s->th_ok = 0;           /* thresholds may have changed */
	s->owners_dirty = 1;    /* and the ports whose owners are watched */
	s->min_th = conf_least_stall_ns(c);
	flowsrcs_configure(s->srcs, c);
	tpass_configure(s->tpass, c);
	/* a poll after the interval, with the new sources; the plan goes on
	 * from its end (a poll still being handled plans the next itself) */
	if (!s->chunked) {
		s->next_poll = loop_mono_ns() + c->flow_interval_ns;
		s->next_why = WHY_INTERVAL;
		s->next_windowed = 0;
		loop_timer_set(s->timer, c->flow_interval_ns, 0);
	}
}

int stall_set_ride(struct stall *s, const char *cause)
{
	return loop_timer_ride(s->timer, cause);
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
	livetab_free(s->flows);
	owners_free(s->owners);
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

	stall_refresh_siblings(s, inc);
	return inc;
}
