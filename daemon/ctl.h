/* ctl: the control socket (unix stream, one JSON request per line, one JSON
 * reply per request). Peer credentials decide access: root may do
 * everything, members of group "nicstall" may read, anyone else is refused. */
#ifndef NICSTALL_CTL_H
#define NICSTALL_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/ctlproto.h"

struct loop;
struct ctl;
struct json_object;


enum ctl_access { CTL_DENIED = 0, CTL_READ = 1, CTL_ROOT = 2 };

/* Handle one request; return the reply object (owned by ctl afterwards).
 * Never NULL. */
typedef struct json_object *(*ctl_handler_fn)(struct json_object *req,
					      enum ctl_access access,
					      void *arg);

struct ctl *ctl_open(struct loop *l, const char *path, ctl_handler_fn fn,
		     void *arg, char *err, size_t errlen);
void ctl_close(struct ctl *c);

/* Inside a handler: its reply will come later, through ctl_reply_later()
 * (an action that completes from the loop, such as a reprogram's hold); the
 * handler then returns NULL. Returns a ticket (never 0), or 0 when called
 * outside a handler. The connection waits at most CTL_DEFER_MAX_NS. */
#define CTL_DEFER_MAX_NS (120ull * 1000000000ull)
uint64_t ctl_defer(void);
/* The reply of a deferred request (owned by ctl afterwards). When the
 * client has gone meanwhile the reply is dropped. */
void ctl_reply_later(uint64_t ticket, struct json_object *reply);

/* Access for a peer (exported for tests). */
enum ctl_access ctl_access_for(uid_t uid, gid_t gid);
/* An error reply: {"ok": false, "error": msg}. */
struct json_object *ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
