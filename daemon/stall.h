/* stall: flow liveness and stall detection.
 *
 * Every flow_interval the detector polls each port's flow sources (engine
 * flow tables, sock_diag, the tc eBPF tracker), merges the observations
 * into one table and runs each flow's state machine:
 *
 *   idle     nothing outstanding
 *   waiting  a request left and no reply came yet (or bytes sit unacked or
 *            unread in a socket queue)
 *   stalled  waiting longer than the port's threshold
 *   released progress after a stall (the stall's duration is recorded)
 *
 * Stalls of one port, or of one port pair, while an incident is open join
 * that incident; incidents are rate-limited per port group. */
#ifndef NICSTALL_STALL_H
#define NICSTALL_STALL_H

#include <stdint.h>

#include "collectors/flows.h"

struct daemon;
struct json_object;
struct stall;
struct incident;

enum flow_state { FLOW_IDLE = 0, FLOW_WAITING, FLOW_STALLED };

/* Called when an incident opens, gains flows, or ends. */
enum incident_event { INCIDENT_OPEN = 1, INCIDENT_JOIN, INCIDENT_END };
typedef void (*stall_incident_fn)(struct incident *inc, enum incident_event ev,
				   void *arg);

struct stall *stall_new(struct daemon *d, char *err, size_t errlen);
void stall_free(struct stall *s);
/* Start or restart polling at the configured interval. */
void stall_configure(struct stall *s);
void stall_set_hook(struct stall *s, stall_incident_fn fn, void *arg);
/* One poll now (also run by the timer). */
void stall_poll(struct stall *s);

/* nicstallctl flows / status */
struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only);
struct json_object *stall_incidents_json(struct stall *s);
struct json_object *stall_engines_json(struct stall *s);

/* Incident accessors for the forensic sequence. */
struct stall_owner {
	int pid;                /* 0: unknown (resolve inode) */
	uint64_t inode;         /* socket inode, 0 for engine flows */
	char port[32];
	char tuple[160];
};
/* Processes (engine pid, or socket inode) of every flow, on either end,
 * that shares a connection with the incident's stalled flows. */
size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max);
struct incident *stall_incident(struct stall *s, uint64_t id); /* 0: newest */
int incident_ended(const struct incident *inc);
int incident_released(const struct incident *inc);
const char *incident_group(const struct incident *inc);
uint64_t incident_opened_ns(const struct incident *inc);
uint64_t incident_id(const struct incident *inc);
const char *incident_port(const struct incident *inc);
struct json_object *incident_json(const struct incident *inc);

#endif
