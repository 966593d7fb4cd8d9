/* ctl: the control socket (unix stream, one JSON request per line, one JSON
 * reply per request). Peer credentials decide access: root may do
 * everything, members of group "nicstall" may read, anyone else is refused
 * and closed at once. The socket is root:nicstall 0660 (0600 without the
 * group). */
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

/* Limits against clients that would lock root out. */
#define CTL_MAX_CLIENTS 64
#define CTL_ROOT_RESERVE 8      /* of them, only root may take */
#define CTL_MAX_PER_UID 8       /* per non-root uid */
#define CTL_MAX_GROUPS 256      /* supplementary groups looked at */
#define CTL_ENTRY_TIMEOUT_NS (2ull * 1000000000ull)   /* non-root: to send the request */
#define CTL_CLIENT_TIMEOUT_NS (10ull * 1000000000ull) /* root; and to take a reply */
#define CTL_REFUSE_LOG_NS (10ull * 1000000000ull)
#define CTL_DRAIN 16            /* turned-away fds lingering, no slot */
#define CTL_DRAIN_NS (200ull * 1000000ull)

/* (Re)resolve the access group (CTL_GROUP at ctl_open; call again on
 * reload: a group made later takes effect then) and set the socket to
 * root:group 0660, or root:root 0600 without the group. -1 with err when
 * the socket's owner or mode cannot be set. */
int ctl_set_group(struct ctl *ctl, const char *name, char *err, size_t errlen);

/* Root's commands act on the ports (investigate captures, recover
 * reprograms, reload chooses what is watched): a uid 0 client gets them
 * only when its effective set holds these, so that it could do as much
 * itself. Onload's tools run as uid 0 with none (daemon/detect/srcrun.c);
 * `nicstallctl reload` from the unit's ExecReload= and sudo hold them. */
#define CTL_ROOT_CAPS ((1ull << 12) | (1ull << 13))    /* CAP_NET_ADMIN, CAP_NET_RAW */

/* Access for a peer: uid 0 whose effective capabilities were read and hold
 * CTL_ROOT_CAPS (root_caps != 0): everything; any other peer, uid 0
 * without them included: the peer's primary or one of its supplementary
 * groups is the access group: read; else refused. No name service call
 * (exported for tests). */
enum ctl_access ctl_access_for(uid_t uid, int root_caps, gid_t gid, const gid_t *groups,
			       size_t ngroups, int have_group, gid_t group);

/* Whether the process that connected cfd (pid from SO_PEERCRED) holds
 * CTL_ROOT_CAPS in its effective set: 1 yes, 0 no or unknown, with why
 * saying which. Race-free with SO_PEERPIDFD (Linux 6.5): the pidfd names
 * the connecting process itself, and is checked to be still alive after
 * /proc/PID/status is read, so the pid cannot have been reused. Without
 * it, the pid alone (logged once). Exported for tests. */
int ctl_peer_root_caps(int cfd, pid_t pid, char *why, size_t whylen);

/* Inside a handler: its reply will come later, through ctl_reply_later()
 * (an action that completes from the loop, such as a reprogram's hold); the
 * handler then returns NULL. Returns a ticket (never 0), or 0 when called
 * outside a handler. The connection waits at most CTL_DEFER_MAX_NS. */
#define CTL_DEFER_MAX_NS (120ull * 1000000000ull)
uint64_t ctl_defer(void);
/* The reply of a deferred request (owned by ctl afterwards). When the
 * client has gone meanwhile the reply is dropped. */
void ctl_reply_later(uint64_t ticket, struct json_object *reply);
/* Inside a handler: the client's uid (SO_PEERCRED); (uid_t)-1 outside. */
uid_t ctl_peer_uid(void);
/* An error reply: {"ok": false, "error": msg}. */
struct json_object *ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
