/* incident: incident records and their rate limits. */
#include "daemon/detect/incident.h"
#include "daemon/counts.h"
#include "collectors/flows/flowsrc.h"
#include "daemon/detect/liveness.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOUR_NS 3600000000000ull
#define RING 64                 /* open times kept per group (last hour) */
#define MAX_GROUPS 32

struct inc_flow {
	char tuple[160];
	struct flow_key key, norm;      /* as seen; endpoints in a fixed order */
	enum flow_src_kind src;
	uint64_t session;
	int pid;
	char engine[32];
	uint64_t wait_since_ns, stalled_at_ns, released_at_ns;
	uint64_t still_ns;              /* its first release: last seen stalled
					 * then (0: it has not moved) */
	uint64_t moved_ns;              /* ... and the look that saw it move */
	uint64_t unsent, unread, staged, inflight;
	int released, gone;
	uint32_t retrans;               /* released: its wait's retransmissions */
	int retrans_known;              /* ... its source publishes a count */
};

struct incident {
	uint64_t id;
	char port[32];
	char group[72];
	/* open_mono_ns: the detector's clock (the time of the poll that saw
	 * the stall), for grouping, cool-down and durations; at_mono_ns and
	 * open_real_ns: the moment the detector decided, after that poll's
	 * reads, on both clocks */
	uint64_t open_mono_ns, at_mono_ns, open_real_ns, end_mono_ns;
	int ended, released;
	unsigned siblings;              /* flows of the group still progressing */
	int siblings_stale;             /* to count again, from siblings_since */
	uint64_t siblings_since;
	unsigned joins_unlogged;        /* joins not logged one by one */
	unsigned suppressed;            /* stalls not investigated meanwhile */
	unsigned nflows, dropped_flows;
	struct inc_flow flows[INCIDENT_MAX_FLOWS];
};

struct group_rate {
	char group[72];
	uint64_t last_open_ns;
	uint64_t opens[RING];           /* ring of open times */
	unsigned nopens;
	uint64_t last_suppress_log_ns;
	unsigned suppressed;
};

struct incidents {
	struct incident *inc[INCIDENT_KEEP]; /* ring, newest at (ninc-1) % KEEP */
	uint64_t ninc;
	struct group_rate rates[MAX_GROUPS];
	unsigned nrates;
};

struct incidents *incidents_new(void)
{
	return calloc(1, sizeof(struct incidents));
}

void incidents_free(struct incidents *is)
{
	if (!is)
		return;
	for (unsigned i = 0; i < INCIDENT_KEEP; i++)
		free(is->inc[i]);
	free(is);
}

struct incident *incidents_get(const struct incidents *is, uint64_t id)
{
	if (!id)
		id = is->ninc;
	if (!id || id > is->ninc || is->ninc - id >= INCIDENT_KEEP)
		return NULL;
	return is->inc[(id - 1) % INCIDENT_KEEP];
}

struct incident *incidents_open_of(const struct incidents *is, const char *group)
{
	for (unsigned i = 0; i < INCIDENT_KEEP && i < is->ninc; i++) {
		struct incident *inc = is->inc[(is->ninc - 1 - i) % INCIDENT_KEEP];

		if (inc && !inc->ended && !strcmp(inc->group, group))
			return inc;
	}
	return NULL;
}

struct incident *incidents_next(const struct incidents *is, const struct incident *prev)
{
	uint64_t id = prev ? prev->id + 1 :
		      is->ninc > INCIDENT_KEEP ? is->ninc - INCIDENT_KEEP + 1 : 1;

	for (; id <= is->ninc; id++) {
		struct incident *inc = incidents_get(is, id);

		if (inc)
			return inc;
	}
	return NULL;
}

static struct group_rate *rate_for(struct incidents *is, const char *group)
{
	for (unsigned i = 0; i < is->nrates; i++)
		if (!strcmp(is->rates[i].group, group))
			return &is->rates[i];
	if (is->nrates >= MAX_GROUPS)
		return &is->rates[MAX_GROUPS - 1];
	util_strlcpy(is->rates[is->nrates].group, group, sizeof(is->rates[0].group));
	return &is->rates[is->nrates++];
}

int incidents_admit(struct incidents *is, const char *group, uint64_t now,
		    uint64_t cooldown_ns, unsigned per_hour, struct incident_refusal *r)
{
	struct group_rate *gr = rate_for(is, group);
	unsigned in_hour = 0;

	while (gr->nopens && now - gr->opens[(gr->nopens - 1) % RING] > HOUR_NS)
		gr->nopens = 0;         /* the newest is over an hour old */
	for (unsigned i = 0; i < gr->nopens && i < RING; i++)
		if (now - gr->opens[(gr->nopens - 1 - i) % RING] <= HOUR_NS)
			in_hour++;
	memset(r, 0, sizeof(*r));
	if (gr->last_open_ns && now - gr->last_open_ns < cooldown_ns)
		r->why = "cooldown";
	else if (in_hour >= per_hour)
		r->why = "hourly limit";
	if (!r->why)
		return 0;
	gr->suppressed++;
	r->since_last_ns = now - gr->last_open_ns;
	r->in_hour = in_hour;
	r->suppressed = gr->suppressed;
	if (!gr->last_suppress_log_ns || now - gr->last_suppress_log_ns > 1000000000ull) {
		r->log = 1;
		gr->last_suppress_log_ns = now;
	}
	return 1;
}

struct incident *incidents_open(struct incidents *is, const char *port, const char *group,
				uint64_t now_mono, uint64_t at_mono, uint64_t at_real)
{
	struct group_rate *gr = rate_for(is, group);
	struct incident *inc = calloc(1, sizeof(*inc));

	if (!inc)
		return NULL;
	inc->id = ++is->ninc;
	util_strlcpy(inc->port, port, sizeof(inc->port));
	util_strlcpy(inc->group, group, sizeof(inc->group));
	inc->open_mono_ns = now_mono;
	inc->at_mono_ns = at_mono;
	inc->open_real_ns = at_real;
	inc->suppressed = gr->suppressed;
	gr->suppressed = 0;
	gr->last_open_ns = now_mono;
	gr->opens[gr->nopens % RING] = now_mono;
	gr->nopens++;
	free(is->inc[(inc->id - 1) % INCIDENT_KEEP]);
	is->inc[(inc->id - 1) % INCIDENT_KEEP] = inc;
	return inc;
}

static int same_flow(const struct inc_flow *x, const struct sflow *f)
{
	return x->src == f->obs.src && x->session == f->obs.session &&
	       !memcmp(&x->key, &f->obs.key, sizeof(x->key));
}

/* Binary keys: no text is made for a flow unless it gets listed, so a mass
 * stall costs a compare per listed flow, not a formatted tuple per join. */
static struct inc_flow *find_flow(struct incident *inc, const struct sflow *f)
{
	for (unsigned i = 0; i < inc->nflows; i++)
		if (same_flow(&inc->flows[i], f))
			return &inc->flows[i];
	return NULL;
}

void incident_add_flow(struct incident *inc, const struct sflow *f)
{
	struct inc_flow *x = find_flow(inc, f);

	if (x) {
		x->released = 0;
		return;
	}
	if (inc->nflows >= INCIDENT_MAX_FLOWS) {
		inc->dropped_flows++;
		return;
	}
	x = &inc->flows[inc->nflows++];
	memset(x, 0, sizeof(*x));
	flow_tuple(f, x->tuple, sizeof(x->tuple));
	x->key = f->obs.key;
	flow_norm_key(&f->obs.key, &x->norm);
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

void incident_set_siblings(struct incident *inc, unsigned n)
{
	inc->siblings = n;
	inc->siblings_stale = 0;
}

void incident_siblings_stale(struct incident *inc, uint64_t since)
{
	inc->siblings_stale = 1;
	inc->siblings_since = since;
}

int incident_siblings_due(const struct incident *inc, uint64_t *since)
{
	if (inc->siblings_stale)
		*since = inc->siblings_since;
	return inc->siblings_stale;
}

unsigned incident_joins_unlogged(struct incident *inc, int take)
{
	unsigned n = inc->joins_unlogged;

	if (take < 0)
		inc->joins_unlogged = 0;
	else if (take > 0)
		inc->joins_unlogged++;
	return n;
}

unsigned incident_flows_stalled(const struct incident *inc)
{
	return inc->nflows + inc->dropped_flows;
}

int incident_flow_done(struct incident *inc, const struct sflow *f, int gone, uint64_t now,
		       uint64_t still_ns, int *any_released)
{
	int any = 0;

	for (unsigned i = 0; i < inc->nflows; i++) {
		struct inc_flow *x = &inc->flows[i];

		if (same_flow(x, f)) {
			x->released = !gone;
			x->gone = gone;
			x->released_at_ns = now;
			/* the first time it moved: kept if it stalls again */
			if (!gone && !x->still_ns) {
				x->still_ns = still_ns && still_ns < now ? still_ns : now;
				x->moved_ns = now;
			}
			x->retrans = f->retrans_wait;
			x->retrans_known = f->obs.src == FLOW_SRC_SOCK ||
					   f->obs.src == FLOW_SRC_ONLOAD || f->obs.src == FLOW_SRC_VMA;
		}
	}
	for (unsigned i = 0; i < inc->nflows; i++) {
		if (!inc->flows[i].released && !inc->flows[i].gone)
			return 0;
		any |= inc->flows[i].released;
	}
	/* released when a flow moved again; flows that only closed did not */
	*any_released = any;
	return 1;
}

uint64_t incident_stalled_until(const struct incident *inc, uint64_t *moved_ns)
{
	uint64_t t = 0, m = 0;

	for (unsigned i = 0; i < inc->nflows; i++)
		if (inc->flows[i].still_ns && (!t || inc->flows[i].still_ns < t)) {
			t = inc->flows[i].still_ns;
			m = inc->flows[i].moved_ns;
		}
	if (moved_ns)
		*moved_ns = m;
	return t;
}

unsigned incident_released_retrans(const struct incident *inc, uint64_t *retrans)
{
	unsigned n = 0;

	for (unsigned i = 0; i < inc->nflows; i++)
		if (inc->flows[i].released && inc->flows[i].retrans_known) {
			*retrans += inc->flows[i].retrans;
			n++;
		}
	return n;
}

void incident_end(struct incident *inc, uint64_t now, int released, uint64_t max_ns)
{
	char d[32];

	inc->ended = 1;
	inc->released = released;
	inc->end_mono_ns = now;
	util_fmt_duration(now - inc->open_mono_ns, d, sizeof(d));
	if (released)
		log_event(LOG_EV_INCIDENT_ENDED, LOG_INFO,
			  LOG_FIELDS({ LF_PORT, inc->port }, { LF_INCIDENT, LOG_U64(inc->id) },
				     { LF_OUTCOME, "released" },
				     { LF_DURATION_MS, LOG_U64((now - inc->open_mono_ns) / 1000000u) }),
			  "incident %" PRIu64 " on port %s: every stalled flow released, %s after it opened",
			  inc->id, inc->port, d);
	else
		log_event(LOG_EV_INCIDENT_ENDED, LOG_WARNING,
			  LOG_FIELDS({ LF_PORT, inc->port }, { LF_INCIDENT, LOG_U64(inc->id) },
				     { LF_OUTCOME, "unreleased" },
				     { LF_DURATION_MS, LOG_U64((now - inc->open_mono_ns) / 1000000u) }),
			  "incident %" PRIu64 " on port %s: ended unreleased after %s%s",
			  inc->id, inc->port, d, now - inc->open_mono_ns < max_ns ?
			  " (its flows closed)" : "");
}

void incident_log_open(const struct incident *inc)
{
	char list[600] = "";
	size_t off = 0;

	for (unsigned i = 0; i < inc->nflows && off < sizeof(list) - 1; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s (%s)",
					i ? "; " : "", inc->flows[i].tuple,
					flow_src_name(inc->flows[i].src));
	count_incident_opened(inc->port, inc->nflows);
	log_event(LOG_EV_INCIDENT_OPENED, LOG_WARNING,
		  LOG_FIELDS({ LF_PORT, inc->port }, { LF_INCIDENT, LOG_U64(inc->id) },
			     { LF_FLOWS, LOG_U64(inc->nflows) },
			     { LF_FLOW, inc->nflows ? inc->flows[0].tuple : NULL }),
		  "incident %" PRIu64 " on port %s: %u flow(s) stalled, %u sibling(s) progressing: %s",
		  inc->id, inc->port, inc->nflows, inc->siblings, list);
}

uint64_t incident_id(const struct incident *inc) { return inc->id; }
const char *incident_port(const struct incident *inc) { return inc->port; }
const char *incident_group(const struct incident *inc) { return inc->group; }
uint64_t incident_opened_ns(const struct incident *inc) { return inc->open_mono_ns; }
uint64_t incident_opened_real_ns(const struct incident *inc) { return inc->open_real_ns; }
int incident_ended(const struct incident *inc) { return inc->ended; }
int incident_released(const struct incident *inc) { return inc->ended && inc->released; }
unsigned incident_nflows(const struct incident *inc) { return inc->nflows; }

const struct flow_key *incident_flow_norm(const struct incident *inc, unsigned i)
{
	return i < inc->nflows ? &inc->flows[i].norm : NULL;
}

int incident_flow_ref(const struct incident *inc, unsigned i, struct flow_src_ref *r)
{
	if (i >= inc->nflows)
		return -1;
	r->src = inc->flows[i].src;
	r->session = inc->flows[i].session;
	r->pid = inc->flows[i].pid;
	return 0;
}

int incident_has_norm(const struct incident *inc, const struct flow_key *norm)
{
	for (unsigned i = 0; i < inc->nflows; i++)
		if (!memcmp(&inc->flows[i].norm, norm, sizeof(*norm)))
			return 1;
	return 0;
}

struct json_object *incident_json(const struct incident *inc, uint64_t now)
{
	struct json_object *o = json_object_new_object(), *fl = json_object_new_array();
	uint64_t end = inc->ended ? inc->end_mono_ns : now;

	jx_add_u64(o, "id", inc->id);
	jx_add_str(o, "port", inc->port);
	jx_add_str(o, "group", inc->group);
	jx_add_str(o, "state", !inc->ended ? "open" : inc->released ? "released" : "unreleased");
	jx_add_u64(o, "opened_real_ns", inc->open_real_ns);
	jx_add_u64(o, "opened_mono_ns", inc->at_mono_ns);
	jx_add_u64(o, "poll_mono_ns", inc->open_mono_ns);
	jx_add_ms(o, "duration_ms", end - inc->open_mono_ns);
	jx_add_int(o, "siblings_progressing", inc->siblings);
	jx_add_int(o, "suppressed_before", inc->suppressed);
	if (inc->dropped_flows)
		jx_add_int(o, "flows_not_listed", inc->dropped_flows);
	for (unsigned i = 0; i < inc->nflows; i++) {
		const struct inc_flow *x = &inc->flows[i];
		struct json_object *f = json_object_new_object();

		jx_add_str(f, "tuple", x->tuple);
		jx_add_str(f, "source", flow_src_name(x->src));
		if (x->src != FLOW_SRC_SOCK && x->src != FLOW_SRC_BPF)
			jx_add_u64(f, "session", x->session);   /* an engine's word */
		if (x->pid)
			jx_add_int(f, "pid", x->pid);
		if (x->engine[0])
			jx_add_str(f, "engine", x->engine);
		jx_add_u64(f, "stalled_at_mono_ns", x->stalled_at_ns);
		jx_add_u64(f, "unsent", x->unsent);
		jx_add_u64(f, "unread", x->unread);
		jx_add_u64(f, "staged", x->staged);
		jx_add_u64(f, "inflight", x->inflight);
		jx_add_str(f, "state", x->released ? "released" : x->gone ? "closed" : "stalled");
		if (x->released || x->gone)
			jx_add_ms(f, "stall_ms", x->released_at_ns - x->stalled_at_ns);
		json_object_array_add(fl, f);
	}
	json_object_object_add(o, "flows", fl);
	return o;
}

struct json_object *incidents_json(const struct incidents *is, uint64_t now)
{
	struct json_object *arr = json_object_new_array();

	for (struct incident *inc = incidents_next(is, NULL); inc; inc = incidents_next(is, inc))
		json_object_array_add(arr, incident_json(inc, now));
	return arr;
}
