/* evidence: what the forensic sequence reads off a port, as JSON: every
 * counter now, counter snapshots and their deltas, link flags, neighbours,
 * the flight-recorder window, the port's identity. */
#ifndef NICSTALL_EVIDENCE_H
#define NICSTALL_EVIDENCE_H

#include <stdint.h>

#include "daemon/recorder.h"

struct port;
struct json_object;

/* A copy of one reading of every source of a port. */
struct evid_counters {
	struct clayout *lay[REC_MAX_SRC];
	uint64_t *vals[REC_MAX_SRC];
};

/* Copy the port's last good reading of each source (replacing s). */
void evid_counters_take(struct evid_counters *s, const struct port *p);
void evid_counters_free(struct evid_counters *s);
int evid_counters_any(const struct evid_counters *s);
/* Deltas b - a per counter (by name) as {source: {name: delta}}, only the
 * counters that moved unless all. */
struct json_object *evid_deltas_json(const struct port *p, const struct evid_counters *a,
				     const struct evid_counters *b, int all);

/* Sample the port now and describe it: {state, counters, devlink_health,
 * link, neighbours} (link and neighbours when it is up and has an
 * interface). */
struct json_object *evid_port_snapshot(struct port *p);
/* Before a snapshot: make the next read of the port's devlink health
 * source query the kernel; at the stall (first) only the reporters and the
 * vnic diagnose (one firmware command: nothing may delay the snapshot),
 * after it every configured diagnose. */
void evid_devlink_refresh(struct port *p, int first);
/* Link flags of the port's interface ({ifindex, flags, up, running,
 * promisc, operstate, mtu}, or {error}). */
struct json_object *evid_link_json(const struct port *p);
/* The recorder window from..now: the first sample's values, then per sample
 * only the counters that moved ({port, samples: [...]}). */
struct json_object *evid_recorder_json(const struct port *p, uint64_t from_ns);
/* {interface, netns, profile, identity fields..., rdma_device}. */
struct json_object *evid_identity_json(const struct port *p);

#endif
