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

#include "collectors/flows.h"

struct conf;
struct loop;
struct ports;
struct flowsrcs;
struct json_object;

typedef void (*flowsrcs_emit_fn)(const struct flow_obs *o, const char *port, void *arg);

struct flowsrcs *flowsrcs_new(struct loop *l, struct ports *ps);
void flowsrcs_free(struct flowsrcs *fs);
/* Open or close the host sources the configuration asks for. */
void flowsrcs_configure(struct flowsrcs *fs, const struct conf *c);
/* Open or close each port's sources to match its state, then poll every
 * source and route each observation through emit. now: CLOCK_MONOTONIC. */
void flowsrcs_poll(struct flowsrcs *fs, uint64_t now, flowsrcs_emit_fn emit, void *arg);
/* The engine tables for `status` ({dir, tables, error}), and what every
 * source costs ({cost: [{source, port, state, flows, cpu_pct, cpu_ms,
 * calls, per_call_us, max_us, ...}]}): the daemon thread's CPU time around
 * each poll, the kernel's work for it and the detector's for its
 * observations included. */
void flowsrcs_status(const struct flowsrcs *fs, struct json_object *out);

#endif
