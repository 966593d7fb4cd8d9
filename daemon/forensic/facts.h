/* facts: turn an investigation record (record.h) into the incident facts
 * the rules classify (rules/facts.h, nicstall.rules(5)): per port the
 * counter deltas across the stall, over the observation window and over a
 * healthy baseline before the stall (from the flight recorder), and the
 * flow, thread, ping, capture and release facts. */
#ifndef NICSTALL_FACTS_H
#define NICSTALL_FACTS_H

#include <stddef.h>
#include <stdint.h>

struct port;
struct ports;
struct json_object;

#define FACTS_BASELINE_NS (60ull * 1000000000ull)

/* A new facts object (never NULL on success). Ports named in the record
 * but no longer watched are left out. */
struct json_object *facts_build(const struct ports *ps, struct json_object *record);
/* The deltas of every counter of every source of p between recorder
 * samples first..last, by their fact names: a new object. */
struct json_object *facts_window_deltas(const struct port *p, unsigned first, unsigned last);
/* The name a counter has in facts: "netdev/" for stats64, as is otherwise. */
const char *facts_counter_name(const char *source, const char *name, char *buf, size_t len);

#endif
