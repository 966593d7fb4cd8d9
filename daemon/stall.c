/* stall: the detector: polls, state machines, incidents. */
#include "daemon/stall.h"
#include "daemon/conf.h"
#include "daemon/flowsrcs.h"
#include "daemon/incident.h"
#include "daemon/liveness.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
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
	struct incidents *incs;
	stall_incident_fn hook;
	void *hook_arg;
	uint64_t now;
	uint64_t polls, poll_cost_ns;
	uint64_t next_expire;   /* the flow table's next walk for closed flows */
};

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

static uint64_t threshold(const struct stall *s, const char *port)
{
	const struct port_conf *pc = port_conf_of(s, port);

	return pc && pc->stall_ns ? pc->stall_ns : s->c->stall_ns;
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

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
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
		flow_norm_tuple(f, t, sizeof(t));
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

static void end_incident(struct stall *s, struct incident *inc, int released)
{
	incident_set_siblings(inc, count_siblings(s, incident_group(inc),
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

	group_of(s, f->port, group, sizeof(group));
	flow_tuple(f, tuple, sizeof(tuple));
	inc = incidents_open_of(s->incs, group);
	/* within the grouping window a stall joins the open incident (and
	 * its running investigation); later ones are incidents of their own */
	if (inc && s->now - incident_opened_ns(inc) <= s->c->group_ns) {
		incident_add_flow(inc, f);
		f->incident = incident_id(inc);
		incident_set_siblings(inc, count_siblings(s, group, s->now - threshold(s, f->port)));
		log_event(LOG_EV_FLOW_STALLED, LOG_INFO,
			  LOG_FIELDS({ LF_PORT, f->port }, { LF_INCIDENT, LOG_U64(incident_id(inc)) },
				     { LF_FLOW, tuple }, { LF_SOURCE, flow_src_name(f->obs.src) }),
			  "incident %" PRIu64 ": flow %s (%s) on port %s joins", incident_id(inc),
			  tuple, flow_src_name(f->obs.src), f->port);
		if (s->hook)
			s->hook(inc, INCIDENT_JOIN, s->hook_arg);
		return;
	}
	if (incidents_admit(s->incs, group, s->now, s->c->cooldown_ns, s->c->incidents_per_hour,
			    &why)) {
		/* every suppressed stall is an event (the metrics count them);
		 * the journal gets at most one a second */
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
	inc = incidents_open(s->incs, f->port, group, s->now, loop_real_ns());
	if (!inc) {
		log_errx("port %s: out of memory opening an incident", f->port);
		return;
	}
	incident_add_flow(inc, f);
	f->incident = incident_id(inc);
	/* every other flow of the group that is stalled too joins now */
	for (struct sflow *o = flowtab_next(s->flows, NULL); o; o = flowtab_next(s->flows, o)) {
		char g[72];

		if (o == f || o->state != FLOW_STALLED || o->incident == incident_id(inc))
			continue;
		group_of(s, o->port, g, sizeof(g));
		if (!strcmp(g, group)) {
			incident_add_flow(inc, o);
			o->incident = incident_id(inc);
		}
	}
	incident_set_siblings(inc, count_siblings(s, group, s->now - threshold(s, f->port)));
	incident_log_open(inc);
	if (s->hook)
		s->hook(inc, INCIDENT_OPEN, s->hook_arg);
}

static void on_released(struct stall *s, struct sflow *f, int gone)
{
	struct incident *inc = f->incident ? incidents_get(s->incs, f->incident) : NULL;
	char tuple[160], d[32];
	int any;

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
	f->incident = 0;
	if (!inc || incident_ended(inc))
		return;
	if (incident_flow_done(inc, f, gone, s->now, &any))
		end_incident(s, inc, any);
}

void stall_observe(struct stall *s, const struct flow_obs *o, const char *port, uint64_t now)
{
	struct sflow *f;

	s->now = now;
	f = flowtab_get(s->flows, o, port, now, 1);
	if (!f)
		return;
	switch (flow_update(f, o, now, threshold(s, port), s->c->flow_interval_ns)) {
	case FLOW_EV_STALLED:
		on_stalled(s, f);
		break;
	case FLOW_EV_RELEASED:
		on_released(s, f, 0);
		break;
	default:
		break;
	}
}

static void emit_cb(const struct flow_obs *o, const char *port, void *arg)
{
	struct stall *s = arg;

	stall_observe(s, o, port, s->now);
}

static void gone_cb(struct sflow *f, void *arg)
{
	if (f->state == FLOW_STALLED)
		on_released(arg, f, 1);
}

void stall_poll_end(struct stall *s, uint64_t now)
{
	s->now = now;
	/* flows not seen lately are closed; open incidents time out */
	if (now >= s->next_expire) {
		flowtab_expire(s->flows, now, gone_cb, s);
		s->next_expire = now + STALL_EXPIRE_EVERY_NS;
	}
	for (struct incident *inc = incidents_next(s->incs, NULL); inc;
	     inc = incidents_next(s->incs, inc))
		if (!incident_ended(inc) && now - incident_opened_ns(inc) > s->c->incident_max_ns)
			end_incident(s, inc, 0);
}

void stall_poll(struct stall *s)
{
	uint64_t t0 = loop_mono_ns();

	s->now = t0;
	flowsrcs_poll(s->srcs, t0, emit_cb, s);
	stall_poll_end(s, t0);
	s->polls++;
	s->poll_cost_ns = loop_mono_ns() - t0;
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	stall_poll(arg);
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
	s->flows = flowtab_new();
	s->incs = incidents_new();
	s->srcs = flowsrcs_new(l, ps);
	s->timer = loop_timer_new(l, timer_cb, s);
	if (!s->flows || !s->incs || !s->srcs || !s->timer) {
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
	flowsrcs_configure(s->srcs, c);
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
	flowsrcs_free(s->srcs);
	flowtab_free(s->flows);
	incidents_free(s->incs);
	free(s);
}

struct flowsrcs *stall_flowsrcs(struct stall *s)
{
	return s->srcs;
}

struct incident *stall_incident(struct stall *s, uint64_t id)
{
	return incidents_get(s->incs, id);
}

/* ------------------------------------------------------------------ */
/* JSON views */

static int flow_order(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	static const char *keys[] = { "port", "tuple", "source" };

	for (size_t i = 0; i < 3; i++) {
		int c = strcmp(jx_text(x, keys[i]), jx_text(y, keys[i]));

		if (c)
			return c;
	}
	return 0;
}

struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only)
{
	struct json_object *arr = json_object_new_array();
	uint64_t now = loop_mono_ns();

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		struct json_object *o, *held;
		char tuple[160];

		if (port && strcmp(port, f->port))
			continue;
		if (stalled_only && f->state != FLOW_STALLED)
			continue;
		o = json_object_new_object();
		flow_tuple(f, tuple, sizeof(tuple));
		jx_add_str(o, "port", f->port);
		jx_add_str(o, "source", flow_src_name(f->obs.src));
		jx_add_str(o, "tuple", tuple);
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
		jx_add_u64(o, "stalls", f->stalls);
		if (f->last_stall_ns)
			jx_add_ms(o, "last_stall_ms", f->last_stall_ns);
		if (f->incident)
			jx_add_u64(o, "incident", f->incident);
		json_object_array_add(arr, o);
	}
	json_object_array_sort(arr, flow_order);
	return arr;
}

struct json_object *stall_incidents_json(struct stall *s)
{
	return incidents_json(s->incs, loop_mono_ns());
}

struct json_object *stall_engines_json(struct stall *s)
{
	struct json_object *o = json_object_new_object();

	flowsrcs_status(s->srcs, o);
	jx_add_u64(o, "flows", flowtab_count(s->flows));
	jx_add_u64(o, "polls", s->polls);
	jx_add_double(o, "poll_cost_us", (double)s->poll_cost_ns / 1000.0);
	return o;
}

size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max)
{
	size_t n = 0;
	char g[72], t[160];

	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f)) {
		int match;

		if (!f->obs.pid && !f->obs.inode)
			continue;
		group_of(s, f->port, g, sizeof(g));
		if (strcmp(g, incident_group(inc)))
			continue;
		flow_norm_tuple(f, t, sizeof(t));
		match = incident_has_norm(inc, t);
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

void stall_flow_counts(const struct stall *s, const char *port, unsigned counts[3])
{
	counts[FLOW_IDLE] = counts[FLOW_WAITING] = counts[FLOW_STALLED] = 0;
	for (struct sflow *f = flowtab_next(s->flows, NULL); f; f = flowtab_next(s->flows, f))
		if ((!port || !strcmp(port, f->port)) && (unsigned)f->state < 3)
			counts[f->state]++;
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
