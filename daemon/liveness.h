/* liveness: the flow table and each flow's state machine.
 *
 *   idle     nothing outstanding
 *   waiting  a request left and no reply came yet (or bytes sit unacked or
 *            unread in a socket queue)
 *   stalled  waiting longer than the port's threshold
 *   released progress after a stall (the stall's duration is recorded)
 *
 * Observations from every flow source (flows.h) are merged per (source,
 * tuple, session, port). Pure data and time: no I/O, the clock is passed
 * in, so the detector is tested alone. */
#ifndef NICSTALL_LIVENESS_H
#define NICSTALL_LIVENESS_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows.h"

#define LIVENESS_MAX_FLOWS 65536
#define LIVENESS_GONE_NS 2000000000ull  /* unseen this long: the flow closed */

enum flow_state { FLOW_IDLE = 0, FLOW_WAITING, FLOW_STALLED };

struct sflow {
	struct sflow *next;
	uint32_t hash;                  /* of (source, key, session, port) */
	struct flow_obs obs;            /* the last observation */
	char port[32];
	enum flow_state state;
	uint64_t first_ns, seen_ns;
	uint64_t wait_since_ns, progress_ns, stalled_at_ns;
	uint64_t tx_at_rx;              /* BPF: tx frames when rx last moved */
	uint64_t last_stall_ns;         /* duration of the last released stall */
	unsigned stalls;
	uint64_t incident;              /* id of the incident it belongs to, 0 */
};

/* What an observation did to its flow. */
enum flow_event { FLOW_EV_NONE = 0, FLOW_EV_STALLED, FLOW_EV_RELEASED };

struct flowtab;

struct flowtab *flowtab_new(void);
void flowtab_free(struct flowtab *ft);
unsigned flowtab_count(const struct flowtab *ft);
/* The flow of o on port (created at now when create and below the limit;
 * NULL otherwise). */
struct sflow *flowtab_get(struct flowtab *ft, const struct flow_obs *o, const char *port,
			  uint64_t now, int create);
/* Every flow, in no particular order: NULL starts, NULL ends. */
struct sflow *flowtab_next(const struct flowtab *ft, const struct sflow *prev);
/* Remove flows not seen for LIVENESS_GONE_NS; gone(f) runs before each is
 * freed. Returns how many were removed. */
unsigned flowtab_expire(struct flowtab *ft, uint64_t now,
			void (*gone)(struct sflow *f, void *arg), void *arg);

/* Apply observation o at now. threshold_ns: the port's stall threshold;
 * poll_ns: the polling interval (a wait start the source reports earlier
 * than the last progress less one poll is not believed). */
enum flow_event flow_update(struct sflow *f, const struct flow_obs *o, uint64_t now,
			    uint64_t threshold_ns, uint64_t poll_ns);

/* "tcp 10.0.0.1:40000 -> 10.0.0.2:11111" as the owner sees it, and the same
 * with the endpoints in a fixed order (both ends of one connection, and
 * every source that sees it, give the same text). */
void flow_tuple(const struct sflow *f, char *buf, size_t len);
void flow_norm_tuple(const struct sflow *f, char *buf, size_t len);
const char *flow_src_name(enum flow_src_kind k);
const char *flow_state_name(enum flow_state st);

#endif
