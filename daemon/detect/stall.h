/* stall: the stall detector.
 *
 * It polls the flow sources (flowsrcs.h) as their flows need it
 * (stall_plan), at most every flow_interval but at once after a want,
 * runs each
 * flow's state machine (liveness.h) and turns stalls into incidents
 * (incident.h): stalls of one port, or of one port pair, within the
 * grouping window join one incident; incidents are rate-limited per group.
 * A hook (the forensic sequence) hears when an incident opens, gains flows
 * or ends. */
#ifndef NICSTALL_STALL_H
#define NICSTALL_STALL_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flows.h"

struct conf;
struct loop;
struct ports;
struct json_object;
struct stall;
struct incident;
struct flowsrcs;

enum incident_event { INCIDENT_OPEN = 1, INCIDENT_JOIN, INCIDENT_END };
typedef void (*stall_incident_fn)(struct incident *inc, enum incident_event ev,
				   void *arg);

/* c is borrowed until the next stall_configure(). ps may hold no port. */
struct stall *stall_new(struct loop *l, struct ports *ps, const struct conf *c,
			char *err, size_t errlen);
void stall_free(struct stall *s);
/* Take a new configuration (after a reload): thresholds, limits, sources,
 * the polling interval. */
void stall_configure(struct stall *s, const struct conf *c);
void stall_set_hook(struct stall *s, stall_incident_fn fn, void *arg);
/* A poll while nothing asks comes at a wakeup of cause (lib/loop.h
 * loop_timer_ride: the counter sweep's, whose phase it then keeps), or
 * alone at its latest; NULL: at any wakeup. */
int stall_set_ride(struct stall *s, const char *cause);
/* The parts of a poll, for tests: its start at t0 (the next poll's plan
 * starts empty), one observation of port's flow at now, and the end of a
 * poll (closed flows, incident timeouts). */
void stall_poll_begin(struct stall *s, uint64_t t0);
/* The poll begun last rode a wakeup that began at wake_ns (<= its t0;
 * lib/loop.h loop_wake_ns): a poll while nothing asks is then planned a
 * second from the wakeup, not from t0, so that the work done before it in
 * that wakeup (a sweep of many ports: ethtool's firmware queries) does not
 * push its window past the next sweep (from t0 still when the wakeup began
 * so long before that less than flow_interval would be left; what the
 * sources ask is dated by t0, as they date it). Outside (0, t0]: ignored. */
void stall_poll_woken(struct stall *s, uint64_t wake_ns);
void stall_observe(struct stall *s, const struct flow_obs *o, const char *port, uint64_t now);
void stall_poll_end(struct stall *s, uint64_t now);
/* When the poll begun last wants the next (CLOCK_MONOTONIC), once it has
 * ended, and why (a constant string; status: flow_sources.next_poll).
 * Polls are planned, not regular: while no flow is stalled and no
 * incident open, the next comes at the earliest a waiting flow's want or
 * stall (by its wait's start as its source dates it) or a source's own
 * need (flow_src next_ns: a refresh, a threshold less a poll, for one
 * that must be looked at) asks for, a second after this one at the
 * latest (STALL_IDLE_MAX_NS), never sooner than flow_interval after this
 * one began (nor than half of it after it ended); at flow_interval while
 * a flow is stalled, an
 * incident open or a flow's waits cannot be dated by its source; at once
 * after a new want (collectors/flows/flowsrc.h: the polling contract). */
uint64_t stall_plan(const struct stall *s, const char **why);
/* When the poll stall_plan() planned at next for why may come, from now:
 * 1 and [*early, *late] when at any wakeup of the loop in that window
 * (lib/loop.h loop_timer_set_window), 0 when at next alone. Only the
 * poll nothing asked for has a window: its sleep's last tenth, so that an
 * idle daemon's polls ride the counter sweep's wakeups; flow_interval from
 * now on after one that came at its end with no other wakeup or was
 * planned for a source or a flow (alone: the caller's to say), so
 * the window takes the sweep's phase once and keeps it. Never sooner than the
 * plan's own least (flow_interval after the last poll's start, half of it
 * after its end); at the latest a flow_interval past next (the sweep due
 * then falls inside). */
int stall_plan_window(const struct stall *s, uint64_t now, uint64_t next, const char *why,
		      int alone, uint64_t *early, uint64_t *late);

/* nicstallctl flows / status */
/* The flows of port (NULL: every port), stalled only or all, stalled
 * first, then waiting, then the rest (by port and tuple): at most max of
 * them (0: all), the count of all that matched in *total (may be NULL). */
#define STALL_FLOWS_LISTED 256u
struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only,
				     unsigned max, unsigned *total);
struct json_object *stall_incidents_json(struct stall *s);
struct json_object *stall_engines_json(struct stall *s);

/* The flows watched on port (NULL: every port) by state: counts[0] idle,
 * [1] waiting, [2] stalled (enum flow_state). Read-only (metrics). */
void stall_flow_counts(const struct stall *s, const char *port, unsigned counts[3]);
/* Every port's flows watched now, and the longest wait among them at now
 * (a waiting or stalled flow's age of its wait; 0 none). For runs.c. */
unsigned stall_longest_wait(const struct stall *s, uint64_t now, uint64_t *longest_ns);
/* The flow sources it polls (the forensic sequence asks them for evidence). */
struct flowsrcs *stall_flowsrcs(struct stall *s);

/* Incident id (0: the newest); NULL when unknown. */
struct incident *stall_incident(struct stall *s, uint64_t id);

/* Each flow of the incident that is still stalled, as its source last saw
 * it (retry_due_ns and rto_ns say when it will next try again). Returns
 * how many. */
/* The retransmissions the incident's stalled flows made since their last
 * progress (a flow released meanwhile: over the wait its release ended),
 * summed over the flows whose source publishes a count (kernel TCP,
 * Onload, VMA/XLIO); returns how many such flows there are (0: the count
 * is unknown). */
unsigned stall_incident_retrans(struct stall *s, const struct incident *inc, uint64_t *retrans);
unsigned stall_incident_flows(struct stall *s, const struct incident *inc,
			      void (*fn)(const struct flow_obs *o, void *arg), void *arg);

/* The processes behind an incident: every flow, on either end, that shares
 * a connection with the incident's stalled flows. */
struct stall_owner {
	int pid;                /* 0: unknown (resolve inode) */
	uint64_t inode;         /* socket inode, 0 for engine flows */
	char port[32];
	char tuple[160];
};
size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max);

/* The engine-thread watch's evidence of process pid: each of its threads'
 * switches and off-CPU time over its flows' wait, its state, its kernel
 * stack at the last sleep (threadpass.h). NULL when pid is not watched. */
struct json_object *stall_thread_evidence(struct stall *s, int pid);
/* The processes whose engine thread the thread watch calls blocked now
 * (at most max into pids); how many. */
unsigned stall_thread_called(const struct stall *s, int32_t *pids, unsigned max);
/* The owners (pid) of the flows waiting or stalled now on ports[0..n), at
 * most max, each once; how many. */
unsigned stall_waiting_pids(struct stall *s, const char *const *ports, unsigned nports,
			    int32_t *pids, unsigned max);

#endif
