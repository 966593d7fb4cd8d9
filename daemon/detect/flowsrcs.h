/* flowsrcs: every flow source of the watched ports, opened and closed to
 * follow the ports' state: per port (in its namespace) sock_diag and the tc
 * tracker, and the host's engine flow tables. Each poll routes every
 * observation to the port it belongs to: a port source's own port (a
 * socket of the namespace on another interface is dropped), an engine
 * flow's port by its local address and the port's selectors ("-" when no
 * port owns it). */
#ifndef NICSTALL_FLOWSRCS_H
#define NICSTALL_FLOWSRCS_H

#include <stdint.h>

#include "collectors/flows/flowsrc.h"
#include "daemon/detect/liveness.h"

struct conf;
struct loop;
struct ports;
struct flowsrcs;
struct json_object;

typedef void (*flowsrcs_emit_fn)(const struct flow_obs *o, const char *port, void *arg);

struct port_conf;

/* One flow source, a row of flowsrcs.c's tables: adding a source is its
 * src_NAME.c (collectors/flows/) and one row (a new kind of flow besides:
 * its FLOW_SRC_* value, its limit in liveness.c's livetab_new, its track
 * word in daemon/conf_keys.c). */
enum {
	FSR_TABLES = 1,         /* host: its status is `status`'s engine tables
				 * ({dir, tables, error}) */
	FSR_READER = 2,         /* a reader of an unmodified engine: its status
				 * under "readers", its view in the evidence */
	FSR_OPTIONAL = 4,       /* port: when it cannot open, the others serve */
};
struct flowsrcs_row {
	const struct flow_src_ops *ops; /* ops->host: one for the host, else
					 * one per port */
	unsigned track;                 /* the `track` word that turns it on
					 * (conf.h TRACK_*) */
	const char *what;               /* for "port X: WHAT unavailable" */
	unsigned flags;                 /* FSR_* */
	/* its own poll interval (flow_src_ctx interval_ns), or NULL: a host
	 * row's is given the configuration (pc NULL), a port row's its
	 * port's (c NULL) */
	uint64_t (*interval_ns)(const struct conf *c, const struct port_conf *pc);
};

struct flowsrcs *flowsrcs_new(struct loop *l, struct ports *ps);
/* The same with other rows (a test's toy source): prow[0..nport) opened
 * per port, hrow[0..nhost) for the host; the rows must outlive it. */
struct flowsrcs *flowsrcs_new_with(struct loop *l, struct ports *ps,
				   const struct flowsrcs_row *prow, unsigned nport,
				   const struct flowsrcs_row *hrow, unsigned nhost);
void flowsrcs_free(struct flowsrcs *fs);
/* Open or close the host sources the configuration asks for. */
void flowsrcs_configure(struct flowsrcs *fs, const struct conf *c);
/* Open or close each port's sources to match its state, then poll every
 * source and route each observation through emit. now: CLOCK_MONOTONIC.
 * Returns the thread's CPU time at its end (cost_cpu_ns), read for the
 * sources' costs: the caller's work next is costed from it. */
uint64_t flowsrcs_poll(struct flowsrcs *fs, uint64_t now, flowsrcs_emit_fn emit, void *arg);
/* The next poll came slack_ns earlier than asked (flowsrc.h slack_ns);
 * for that poll only. */
void flowsrcs_set_slack(struct flowsrcs *fs, uint64_t slack_ns);
/* A flow of port waits half its threshold or more (or is stalled) at now:
 * the sources of the port and of its peer see it as wanted_ns (flowsrc.h)
 * from the next poll. 1 when the port or its peer was not wanted within
 * FLOW_SRC_WANT_HOLD_NS (its sources' hooks may be off: poll soon). */
int flowsrcs_want(struct flowsrcs *fs, const char *port, uint64_t now);
/* When the last poll's sources need the next (flow_src next_ns,
 * flowsrc.h): 0 after the detector's interval; UINT64_MAX for no reason
 * of theirs (none asked: FLOW_SRC_NO_NEXT, or none open). */
uint64_t flowsrcs_next_ns(const struct flowsrcs *fs);
/* Tests: as if the last poll's sources had asked for next_ns. */
void flowsrcs_test_set_next(struct flowsrcs *fs, uint64_t next_ns);

/* Called when a source's fd said something fell due (flow_src.wake): the
 * detector polls as soon as its interval allows. */
typedef void (*flowsrcs_wake_fn)(void *arg);
void flowsrcs_set_wake(struct flowsrcs *fs, flowsrcs_wake_fn fn, void *arg);
/* How often a source must report an evidence-only flow (flow_src
 * refresh_ns, collectors/flows/flowsrc.h): within every threshold-long span less
 * a poll, and never less often than half LIVENESS_GONE_NS, since the flow
 * table forgets a flow unseen that long (a threshold of seconds would
 * otherwise drop and re-create the flow at each read: gone from the flow
 * views, and "progressed" at each re-creation in the sibling counts). */
uint64_t flowsrcs_refresh_ns(uint64_t stall_ns, uint64_t poll_ns);
#define FLOWSRCS_REFRESH_MAX_NS (LIVENESS_GONE_NS / 2)
/* The engine tables for `status` ({dir, tables, error}), the readers of
 * unmodified engines under "readers" ({onload, vma, rdmaqp: {PORT}}), and
 * what every source costs ({cost: [{source, port, state, flows, cpu_pct,
 * cpu_ms, calls, per_call_us, max_us, ...}]}): the daemon thread's CPU time
 * around each poll, the kernel's work for it and the detector's for its
 * observations included. */
void flowsrcs_status(const struct flowsrcs *fs, struct json_object *out);

/* Evidence: each source's own view of the flows refs[0..n) (an
 * investigation's) added to out as {SOURCE: {...}}, the per-port sources
 * of the ports named in ports[0..nports) as {SOURCE: {PORT: {...}}}. when:
 * "at_stall" or "after". Returns how many parts still run (a tool): each
 * ends with one call of done(arg) from the loop; 0 when out is complete. */
/* The kind of the flows of the source named name (its ops' name, as flow
 * listings show it: "engine", "onload", ...), by the rows; 0 when no row
 * has that name. *reader: 1 when that row is a reader of an unmodified
 * engine (FSR_READER), else 0. */
enum flow_src_kind flowsrcs_kind_of(const struct flowsrcs *fs, const char *name, int *reader);
/* 1 when a host source of kind k is open (its evidence can be taken). */
int flowsrcs_host_open(const struct flowsrcs *fs, enum flow_src_kind k);
int flowsrcs_evidence(struct flowsrcs *fs, const struct flow_src_ref *refs, unsigned n,
		      const char *const *ports, unsigned nports, const char *when,
		      struct json_object *out, flow_src_evid_done_fn done, void *arg);
/* Forget the running parts of arg (done is not called for them). */
void flowsrcs_evidence_cancel(struct flowsrcs *fs, void *arg);

#endif
