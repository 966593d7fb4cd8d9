/* evid_devlink: devlink health in an investigation's bundle
 * (nicstall-bundle(5)): per port, devlink/PORT.json with every reporter at
 * the stall and after it (the snapshots' devlink_health) and the health
 * events the port saw around the investigation; devlink/PORT-dump-R.json
 * for each stored health dump newer than the stall's start (at most
 * EVID_DEVLINK_DUMP_MAX bytes of reply, never taken by the daemon:
 * src_devlink_health_dump); and the manifest's "devlink" object the
 * summary reads (reporters' GET fields, no diagnose trees). */
#ifndef NICSTALL_EVID_DEVLINK_H
#define NICSTALL_EVID_DEVLINK_H

#include <stdint.h>

struct port;
struct json_object;

#define EVID_DEVLINK_DUMP_MAX (1u << 20)

typedef void (*evid_add_fn)(const char *name, struct json_object *o, void *arg);

/* ports[i] may be NULL (gone). Adds IR_DEVLINK_EVENTS and IR_DEVLINK_DUMPS
 * to rec, each file through add, and returns the manifest object (NULL
 * when no port has devlink health data). stall_real_ns: when the stall
 * began (CLOCK_REALTIME); from_mono_ns: events since then. */
struct json_object *evid_devlink_bundle(struct json_object *rec, const char *const *names,
					struct port *const *ports, unsigned n,
					uint64_t stall_real_ns, uint64_t from_mono_ns,
					uint64_t open_mono_ns, evid_add_fn add, void *arg);

#endif
