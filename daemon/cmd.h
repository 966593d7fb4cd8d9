/* cmd: the control-socket commands (status, counters, snapshot, flows,
 * incident, investigate, recover, reload, peers), one table of handlers over the
 * handles they need. */
#ifndef NICSTALL_CMD_H
#define NICSTALL_CMD_H

#include <stddef.h>

#include "daemon/ctl.h"

struct json_object;
struct ports;
struct stall;
struct forensics;
struct peers;
struct runs;

struct cmd_env {
	struct ports *ports;
	struct stall *stall;            /* may be NULL (not started) */
	struct forensics *forensics;
	/* Daemon-wide fields of `status` (version, pid, uptime, config,
	 * rules...), added to reply before the ports. */
	void (*status)(struct json_object *reply, void *arg);
	/* Reload the configuration: 0, or -1 with err. */
	int (*reload)(void *arg, char *err, size_t errlen);
	void *arg;
	struct peers *peers;            /* may be NULL */
	struct runs *runs;              /* benchmark runs (runs.h); may be NULL */
};

/* ctl_handler_fn for a struct cmd_env *arg. */
struct json_object *cmd_dispatch(struct json_object *req, enum ctl_access access,
				 void *arg);

#endif
