/* incident: stalls of one port, or of one port pair, grouped into one
 * incident, and the limits on how often a group may open one (cooldown,
 * hourly limit, suppressed stalls counted and logged).
 *
 * The detector (stall.c) decides when flows stall and release; this module
 * keeps the incidents' records: the last INCIDENT_KEEP are kept, newest
 * last; ids start at 1 and are never reused. Time is passed in. */
#ifndef NICSTALL_INCIDENT_H
#define NICSTALL_INCIDENT_H

#include <stddef.h>
#include <stdint.h>

struct incident;
struct incidents;
struct sflow;
struct json_object;

#define INCIDENT_KEEP 32
#define INCIDENT_MAX_FLOWS 64   /* listed per incident; more are counted */

struct incidents *incidents_new(void);
void incidents_free(struct incidents *is);

/* Incident id (0: the newest); NULL when unknown or no longer kept. */
struct incident *incidents_get(const struct incidents *is, uint64_t id);
/* The newest incident of group that is still open, or NULL. */
struct incident *incidents_open_of(const struct incidents *is, const char *group);
/* Every kept incident, oldest first: NULL starts, NULL ends. */
struct incident *incidents_next(const struct incidents *is, const struct incident *prev);

/* Why a stall of group may not open an incident now. */
struct incident_refusal {
	const char *why;            /* "cooldown" or "hourly limit" */
	uint64_t since_last_ns;     /* since the group's last incident opened */
	unsigned in_hour;           /* incidents of the group in the last hour */
	unsigned suppressed;        /* stalls suppressed since the last incident */
	int log;                    /* 1 when a log line is due (one a second) */
};
/* 0: an incident may open. 1: refused; the stall is counted as suppressed
 * and r says why. */
int incidents_admit(struct incidents *is, const char *group, uint64_t now,
		    uint64_t cooldown_ns, unsigned per_hour, struct incident_refusal *r);
/* Open a new incident of port (in group): takes over the suppressed count.
 * now_mono: the detector's clock (the poll's time); at_mono, at_real: the
 * moment of the decision, on CLOCK_MONOTONIC and CLOCK_REALTIME (what
 * status reports as its opening). NULL when out of memory. */
struct incident *incidents_open(struct incidents *is, const char *port, const char *group,
				uint64_t now_mono, uint64_t at_mono, uint64_t at_real);

/* List flow f (or mark it stalled again when listed); when the list is
 * full f is only counted (incident_flows_stalled). */
void incident_add_flow(struct incident *inc, const struct sflow *f);
void incident_set_siblings(struct incident *inc, unsigned n);
/* The sibling count is out of date (flows joined): count again, from
 * since, when it is next looked at or the poll ends; due says whether and
 * from when. */
void incident_siblings_stale(struct incident *inc, uint64_t since);
int incident_siblings_due(const struct incident *inc, uint64_t *since);
/* Joins not logged one by one (a mass stall logs a few, then a summary):
 * take > 0 counts one more, take < 0 returns the count and clears it, 0
 * only returns it. */
unsigned incident_joins_unlogged(struct incident *inc, int take);
/* Flows stalled in it: listed and only counted. */
unsigned incident_flows_stalled(const struct incident *inc);
/* f released (gone = 0) or closed (gone = 1) at now; still_ns: the
 * detector's last look before, which saw it stalled (it moved after).
 * Returns 1 when every listed flow is released or closed; *any_released
 * then says whether one moved again (rather than only closing). */
int incident_flow_done(struct incident *inc, const struct sflow *f, int gone, uint64_t now,
		       uint64_t still_ns, int *any_released);
/* Until when inc's stall is known whole: the last look that saw stalled
 * the first of its listed flows to move again (for a source read in dumps,
 * the time of the dump that look saw: flow_obs.data_ns), kept if that flow
 * stalls again; 0 while none has moved (closing is no work). *moved_ns
 * (may be NULL): the look that saw that flow move. Flows past
 * INCIDENT_MAX_FLOWS are not listed: their releases are not known here. */
uint64_t incident_stalled_until(const struct incident *inc, uint64_t *moved_ns);
/* Add the retransmissions of inc's listed flows that were released (the
 * wait each release ended) to *retrans, for the sources that publish a
 * count; returns how many such flows. */
unsigned incident_released_retrans(const struct incident *inc, uint64_t *retrans);
/* End inc at now; logs it. max_ns: the incident timeout (for the log). */
void incident_end(struct incident *inc, uint64_t now, int released, uint64_t max_ns);
/* The log line of an incident that just opened. */
void incident_log_open(const struct incident *inc);

uint64_t incident_id(const struct incident *inc);
const char *incident_port(const struct incident *inc);
const char *incident_group(const struct incident *inc);
uint64_t incident_opened_ns(const struct incident *inc);
uint64_t incident_opened_real_ns(const struct incident *inc);
int incident_ended(const struct incident *inc);
int incident_released(const struct incident *inc);      /* ended and released */
unsigned incident_nflows(const struct incident *inc);
/* Does the incident list a flow whose normalised key (flow_norm_key) is
 * norm? */
struct flow_key;
int incident_has_norm(const struct incident *inc, const struct flow_key *norm);
/* The normalised key of the incident's i-th flow; NULL past the last. */
const struct flow_key *incident_flow_norm(const struct incident *inc, unsigned i);
/* Who the incident's i-th flow is (its source, session and process) as a
 * reader's reference; 0, or -1 past the last. */
struct flow_src_ref;
int incident_flow_ref(const struct incident *inc, unsigned i, struct flow_src_ref *r);

struct json_object *incident_json(const struct incident *inc, uint64_t now);
struct json_object *incidents_json(const struct incidents *is, uint64_t now);

#endif
