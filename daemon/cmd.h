/* cmd: control-socket commands (status, counters, snapshot, reload). */
#ifndef NICSTALL_CMD_H
#define NICSTALL_CMD_H

#include "daemon/ctl.h"

struct json_object;

/* ctl_handler_fn for struct daemon *arg. */
struct json_object *cmd_dispatch(struct json_object *req, enum ctl_access access,
				 void *arg);

#endif
