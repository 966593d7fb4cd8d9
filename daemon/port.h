/* port: one watched interface (possibly in a network namespace), its
 * counter sources, identity, link state and flight recorder. Opaque: other
 * modules ask through the calls below. */
#ifndef NICSTALL_PORT_H
#define NICSTALL_PORT_H

#include <stdint.h>

#include "collectors/counters/counters.h"
#include "daemon/conf.h"

struct loop;
struct port;
struct recorder;
struct ident;
struct json_object;

enum port_state { PORT_DOWN = 0, PORT_UP = 1 };

/* Create the runtime port for pc (copied). cap: recorder samples. Never
 * fails for an absent interface or namespace: the port starts down and is
 * retried. Returns NULL only on ENOMEM. */
struct port *port_new(const struct port_conf *pc, const char *sysfs_root,
		      unsigned rec_cap, struct loop *loop);
void port_free(struct port *p);

/* Try to bring a down port up (namespace, interface, sources). */
void port_try_up(struct port *p);
/* Read every source now and append to the recorder (when record != 0);
 * the cost of the read is kept (port_sample_cost_ns). */
void port_sample(struct port *p, uint64_t mono_ns, uint64_t real_ns, int record);
const char *port_state_name(enum port_state s);

const struct port_conf *port_conf(const struct port *p);
const char *port_name(const struct port *p);
enum port_state port_state(const struct port *p);
const char *port_reason(const struct port *p);     /* why it is down, "" up */
int port_nsfd(const struct port *p);               /* -1: the daemon's namespace */
int port_ifindex(const struct port *p);
enum profile port_profile(const struct port *p);   /* resolved from the driver */
const struct ident *port_ident(const struct port *p);
const char *port_rdma_dev(const struct port *p, unsigned *rdma_port); /* "" none */
struct recorder *port_recorder(const struct port *p);
/* When the last investigation on the port ended (CLOCK_MONOTONIC ns; 0:
 * none yet): a healthy baseline starts after it, never holding the frames
 * an earlier stall lost or its actions' transitions. */
void port_set_disturbed(struct port *p, uint64_t mono_ns);
uint64_t port_disturbed(const struct port *p);
/* Unique per port_new(), never reused: tells a re-created port apart. */
unsigned long port_serial(const struct port *p);
/* Moves whenever the port's addresses may have changed: an address event
 * of its interface from the link monitor, events lost to an overrun, the
 * port coming up. Equal twice: a dump of the addresses made after the
 * first still holds. */
unsigned long port_addr_gen(const struct port *p);
uint64_t port_samples(const struct port *p);
uint64_t port_sample_cost_ns(const struct port *p);
/* The cost of every recorded read of this port summed (metrics). */
uint64_t port_sample_cost_total_ns(const struct port *p);

/* Counter sources (slot i < port_nsrc(), the recorder's part i). */
unsigned port_nsrc(const struct port *p);
/* Name of the source in slot i ("ethtool", "text", "netdev", "rdma"), NULL
 * when the slot has none. */
const char *port_src_name(const struct port *p, unsigned i);
/* The last good read of slot i: 0 with *lay (borrowed) and *vals, or -1
 * when the source is not open or its last read failed (*why says why). */
int port_src_values(const struct port *p, unsigned i, const struct clayout **lay,
		    const uint64_t **vals, const char **why);

/* Every counter of every open source as {source: {name: value}}; a source
 * that failed is {source: {"error": why}} when with_errors, else left out.
 * The one counters-to-JSON of the daemon (snapshot, counters, evidence). */
struct json_object *port_counters_json(const struct port *p, int with_errors);
/* devlink health (the fourth counter source, collectors/counters/devlink_health.h):
 * the source when it is open (NULL: the port has no devlink health); a
 * refresh of its next read (diagnose NULL: every configured diagnose);
 * {"handles", "reporters": [...]} or {"note": "no devlink health",
 * "reason": why}, the one JSON of it for snapshots and evidence; the health
 * events the port's monitor saw since a CLOCK_MONOTONIC time, as
 * [{time_ns, mono_ns, port, reporter, handle, state, error_count,
 * recover_count}] (the last 32 are kept), and whether some were lost. */
struct src *port_devlink_src(struct port *p);
void port_devlink_refresh(struct port *p, const char *const *diagnose);
struct json_object *port_devlink_json(const struct port *p);
struct json_object *port_devlink_events_json(const struct port *p, uint64_t since_mono_ns);
int port_devlink_events_lost(const struct port *p);

/* The link's changes of IFF_UP and IFF_RUNNING since since_mono_ns, as the
 * link monitor saw them: [{mono_ns, up, running}], oldest first; the last
 * PORT_LINK_EVENTS are kept (the times of a flap: verdict link-flap). */
#define PORT_LINK_EVENTS 32
struct json_object *port_link_events_json(const struct port *p, uint64_t since_mono_ns);
/* The device's kernel lines read when the port opened ({lines: ["[ts]
 * text", ...], more, error}); NULL before the port first opened. */
struct json_object *port_kmsg(const struct port *p);

/* Host resources (the sixth counter source, "host", collectors/counters/src_host.h):
 * the [host] and [producer] options (copied; reopened when they changed;
 * NULL: none); the owners of the port's watched flows, read from the next
 * sample on; the devices' identity and what could not be read, or {note,
 * reason} without the source. */
struct host_opts;
void port_set_host(struct port *p, const struct host_opts *o);
void port_host_watch(struct port *p, const int *pids, unsigned n);
struct json_object *port_host_json(const struct port *p);

/* The application's metrics (the seventh counter source, "app",
 * collectors/counters/src_app.h): each endpoint's state, last error and figures,
 * with the last good page's text (made printable, its first
 * PORT_APP_TEXT_MAX bytes) when with_text; or {note, reason} without the
 * source. */
#define PORT_APP_TEXT_MAX (1u << 20)
struct json_object *port_app_json(const struct port *p, int with_text);

/* What `nicstallctl status` shows of the port. */
struct json_object *port_status_json(const struct port *p, uint64_t now_ns);

#endif
