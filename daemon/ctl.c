/* ctl: control socket server.
 *
 * Hostile local clients must not lock root out: a refused peer is answered
 * and shut down at once (it never holds a slot; its fd lingers at most
 * CTL_DRAIN_NS so it can read the answer), CTL_ROOT_RESERVE of the
 * CTL_MAX_CLIENTS slots are root's, each other uid holds at most
 * CTL_MAX_PER_UID, and a non-root client that has not sent its request
 * within CTL_ENTRY_TIMEOUT_NS is dropped. Access is decided without a name
 * service call per client (which could block the loop on a remote NSS):
 * the group is resolved at start and reload, the peer's supplementary
 * groups come with the connection (SO_PEERGROUPS, as of connect(); else
 * /proc/PID/status). */
#include "daemon/ctl.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define NS 1000000000ull

struct client {
	struct ctl *ctl;
	int fd;
	enum ctl_access access;
	uid_t uid;
	pid_t pid;
	char *in;
	size_t inlen;
	char *out;              /* reply being written */
	size_t outlen, outoff;
	uint64_t deadline_ns;   /* dropped when still here then */
	uint64_t ticket;        /* a deferred reply is owed (ctl_defer) */
	struct client *next;
};

struct ctl {
	struct loop *loop;
	int fd;
	int pathfd;             /* O_PATH on the bound socket inode, -1 none */
	char path[108];
	char group[64];
	gid_t gid;
	int have_group;
	ctl_handler_fn fn;
	void *arg;
	struct client *clients;
	unsigned nclients;
	struct loop_timer *reaper;      /* at the earliest deadline (reaper_arm) */
	uint64_t reap_at;               /* when it is armed for, 0 disarmed */
	/* turned-away peers, already answered and shut down for writing, kept
	 * open a moment (no slot, no reads) so that a client that sends its
	 * request after the answer came reads the answer, not EPIPE */
	struct { int fd; uint64_t until_ns; } drain[CTL_DRAIN];
	unsigned ndrain;
	/* refusals, logged at most once per CTL_REFUSE_LOG_NS */
	uint64_t refused, busy, refuse_log_ns;
	uid_t last_refused_uid;
	uint64_t nocaps_log_ns;         /* uid 0 without capabilities, logged */
};

/* The one control socket of the process, and the client whose request is
 * being handled (for ctl_defer). */
static struct ctl *the_ctl;
static struct client *handling;
static uint64_t tickets;

struct json_object *ctl_error(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

enum ctl_access ctl_access_for(uid_t uid, int root_caps, gid_t gid, const gid_t *groups,
			       size_t ngroups, int have_group, gid_t group)
{
	if (uid == 0 && root_caps)
		return CTL_ROOT;
	if (!have_group)
		return CTL_DENIED;
	if (gid == group)
		return CTL_READ;
	for (size_t i = 0; i < ngroups; i++)
		if (groups[i] == group)
			return CTL_READ;
	return CTL_DENIED;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5, asm-generic/socket.h */
#endif

int ctl_peer_root_caps(int cfd, pid_t pid, char *why, size_t whylen)
{
	static int said_no_pidfd;
	socklen_t len = sizeof(int);
	char path[64], buf[8192], *cap;
	unsigned long long eff;
	int pidfd = -1, alive = 1;

	if (pid <= 0)
		return util_errf(why, whylen, "its pid is not known here (another pid "
				 "namespace?): its capabilities cannot be read"), 0;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
		pidfd = -1;
		if (errno == ESRCH)     /* the peer is gone: its pid may be another's */
			return util_errf(why, whylen, "pid %d exited before its capabilities "
					 "were read", (int)pid), 0;
		if (!said_no_pidfd++)
			log_warnx("control: no SO_PEERPIDFD (%s; Linux 6.5): a uid 0 client's "
				  "capabilities are read from /proc of its pid, which a client "
				  "that exits at once could leave to another process",
				  strerror(errno));
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (util_read_buf(path, buf, sizeof(buf)) <= 0 || !(cap = strstr(buf, "\nCapEff:")) ||
	    sscanf(cap + 8, "%llx", &eff) != 1) {
		if (pidfd >= 0)
			close(pidfd);
		return util_errf(why, whylen, "pid %d: its CapEff could not be read",
				 (int)pid), 0;
	}
	/* still the process that connected: then pid was not reused */
	if (pidfd >= 0) {
		alive = syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
		close(pidfd);
	}
	if (!alive)
		return util_errf(why, whylen, "pid %d exited before its capabilities were "
				 "read", (int)pid), 0;
	if ((eff & CTL_ROOT_CAPS) != CTL_ROOT_CAPS)
		return util_errf(why, whylen, "pid %d lacks CAP_NET_ADMIN and CAP_NET_RAW "
				 "(CapEff %016llx)", (int)pid, eff), 0;
	return 1;
}

/* The peer's supplementary groups as of its connect(): SO_PEERGROUPS
 * (Linux 4.13), else the Groups: line of /proc/PID/status. Returns the
 * count (at most max) or -1. */
static int peer_groups(int fd, pid_t pid, gid_t *out, size_t max)
{
	socklen_t len = (socklen_t)(max * sizeof(gid_t));
	char path[64], buf[8192], *g;
	int k = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, out, &len) == 0)
		return (int)(len / sizeof(gid_t));
	if (errno == ERANGE) {
		/* more than max: the ones that fit do (a member with very many
		 * groups may be refused; never granted more) */
		gid_t *big = malloc(len);
		int r = -1;

		if (big && getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, big, &len) == 0) {
			r = (int)(len / sizeof(gid_t)) < (int)max ? (int)(len / sizeof(gid_t)) :
								      (int)max;
			memcpy(out, big, (size_t)r * sizeof(gid_t));
		}
		free(big);
		return r;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (util_read_buf(path, buf, sizeof(buf)) <= 0)
		return -1;
	g = strstr(buf, "\nGroups:");
	if (!g)
		return -1;
	for (g += 8; *g && *g != '\n' && (size_t)k < max;) {
		char *e;
		unsigned long v = strtoul(g, &e, 10);

		if (e == g)
			break;
		out[k++] = (gid_t)v;
		g = e;
	}
	return k;
}

static void reaper_arm(struct ctl *ctl);

static void client_free(struct client *c)
{
	struct ctl *ctl = c->ctl;

	for (struct client **pp = &ctl->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	ctl->nclients--;
	loop_del_fd(ctl->loop, c->fd);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	reaper_arm(ctl);
}

static void client_reply(struct client *c, struct json_object *reply)
{
	const char *s = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(s);

	c->out = malloc(n + 1);
	if (c->out) {
		memcpy(c->out, s, n);
		c->out[n] = '\n';
		c->outlen = n + 1;
		c->outoff = 0;
	}
	json_object_put(reply);
	if (!c->out) {
		client_free(c);
		return;
	}
	c->deadline_ns = loop_mono_ns() + CTL_CLIENT_TIMEOUT_NS;  /* to take the reply */
	reaper_arm(c->ctl);
	loop_mod_fd(c->ctl->loop, c->fd, EPOLLOUT);
}

static void client_request(struct client *c, char *line)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req, *reply;
	enum json_tokener_error jerr;

	if (!tok) {
		client_reply(c, ctl_error("out of memory"));
		return;
	}
	req = json_tokener_parse_ex(tok, line, (int)strlen(line));
	jerr = json_tokener_get_error(tok);
	if (!req || jerr != json_tokener_success ||
	    tok->char_offset != (int)strlen(line)) {
		log_debug("control: pid %d uid %u: malformed request", (int)c->pid,
			  (unsigned)c->uid);
		reply = ctl_error("malformed request: %s",
				  req ? "trailing data after the JSON object" :
				  json_tokener_error_desc(jerr));
	} else if (c->access == CTL_DENIED) {      /* turned away at accept */
		reply = ctl_error("permission denied: uid %u is neither root nor a "
				  "member of group '%s'", (unsigned)c->uid, c->ctl->group);
	} else if (!json_object_is_type(req, json_type_object)) {
		reply = ctl_error("malformed request: expected a JSON object");
	} else {
		handling = c;
		reply = c->ctl->fn(req, c->access, c->ctl->arg);
		handling = NULL;
	}
	json_object_put(req);
	json_tokener_free(tok);
	if (!reply && c->ticket) {
		loop_mod_fd(c->ctl->loop, c->fd, 0);    /* nothing to read meanwhile */
		reaper_arm(c->ctl);                     /* ctl_defer's deadline */
		return;
	}
	client_reply(c, reply ? reply : ctl_error("internal error: no reply"));
}

static void client_cb(int fd, uint32_t events, void *arg)
{
	struct client *c = arg;

	if (c->out) {
		if (events & (EPOLLERR | EPOLLHUP)) {
			client_free(c);
			return;
		}
		while (c->outoff < c->outlen) {
			ssize_t w = send(fd, c->out + c->outoff, c->outlen - c->outoff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (w < 0) {
				if (errno == EAGAIN || errno == EINTR)
					return;
				client_free(c);
				return;
			}
			c->outoff += (size_t)w;
		}
		client_free(c);         /* one request per connection */
		return;
	}
	for (;;) {
		char buf[4096];
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		char *nl;

		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			client_free(c);
			return;
		}
		if (r == 0) {           /* gone mid-message (or before any) */
			client_free(c);
			return;
		}
		if (c->inlen + (size_t)r > CTL_MAX_REQUEST) {
			log_warnx("control: pid %d uid %u: request longer than %d bytes, refused",
				  (int)c->pid, (unsigned)c->uid, CTL_MAX_REQUEST);
			client_reply(c, ctl_error("request longer than %d bytes",
						  CTL_MAX_REQUEST));
			return;
		}
		char *ni = realloc(c->in, c->inlen + (size_t)r + 1);

		if (!ni) {
			client_free(c);
			return;
		}
		c->in = ni;
		memcpy(c->in + c->inlen, buf, (size_t)r);
		c->inlen += (size_t)r;
		c->in[c->inlen] = 0;
		if (memchr(c->in, 0, c->inlen)) {
			client_reply(c, ctl_error("malformed request: NUL byte"));
			return;
		}
		nl = strchr(c->in, '\n');
		if (nl) {
			*nl = 0;
			client_request(c, c->in);
			return;
		}
	}
}

static unsigned clients_of(const struct ctl *ctl, uid_t uid)
{
	unsigned n = 0;

	for (const struct client *c = ctl->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

static void drain_expire(struct ctl *ctl, uint64_t now, int all)
{
	unsigned k = 0;

	for (unsigned i = 0; i < ctl->ndrain; i++) {
		if (all || now >= ctl->drain[i].until_ns)
			close(ctl->drain[i].fd);
		else
			ctl->drain[k++] = ctl->drain[i];
	}
	ctl->ndrain = k;
}

/* The reaper is one shot, at the earliest deadline of a held client or a
 * turned-away connection, and disarmed without one: a client served in
 * time wakes nothing of its own. (It ticked every 100 ms while a
 * connection was held: a status call whose client was slow to send its
 * request or take its reply, as under load, cost a wakeup a tenth of a
 * second.) Called whenever a deadline is set or a connection goes. */
static void reaper_arm(struct ctl *ctl)
{
	uint64_t at = 0, now;

	for (const struct client *c = ctl->clients; c; c = c->next)
		if (!at || c->deadline_ns + 1 < at)
			at = c->deadline_ns + 1;        /* reaper_cb: dropped after it */
	for (unsigned i = 0; i < ctl->ndrain; i++)
		if (!at || ctl->drain[i].until_ns < at)
			at = ctl->drain[i].until_ns;
	if (!ctl->reaper || at == ctl->reap_at)
		return;
	now = loop_mono_ns();
	if (loop_timer_set(ctl->reaper, at ? (at > now ? at - now : 1) : 0, 0) == 0)
		ctl->reap_at = at;
}

/* Answer a peer that gets no slot and shut the connection down: it holds
 * no client slot and nothing of it is read. The fd itself lingers at most
 * CTL_DRAIN_NS (CTL_DRAIN of them; the oldest goes first). */
static void turn_away(struct ctl *ctl, int cfd, const char *msg, uint64_t now)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "{\"ok\":false,\"error\":\"%s\"}\n", msg);

	(void)!send(cfd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(cfd, SHUT_WR);
	if (ctl->ndrain == CTL_DRAIN) {
		close(ctl->drain[0].fd);
		memmove(ctl->drain, ctl->drain + 1, (CTL_DRAIN - 1) * sizeof(ctl->drain[0]));
		ctl->ndrain--;
	}
	ctl->drain[ctl->ndrain].fd = cfd;
	ctl->drain[ctl->ndrain].until_ns = now + CTL_DRAIN_NS;
	ctl->ndrain++;
	reaper_arm(ctl);
}

static void note_refusal(struct ctl *ctl, uid_t uid, int busy, uint64_t now)
{
	if (busy)
		ctl->busy++;
	else
		ctl->refused++;
	ctl->last_refused_uid = uid;
	if (ctl->refuse_log_ns && now - ctl->refuse_log_ns < CTL_REFUSE_LOG_NS)
		return;
	ctl->refuse_log_ns = now;
	log_info("control: turned away %" PRIu64 " peer(s) not root nor in group '%s' and %"
		 PRIu64 " over the client limits so far (the last: uid %u)",
		 ctl->refused, ctl->group, ctl->busy, (unsigned)uid);
}

static void accept_cb(int fd, uint32_t events, void *arg)
{
	struct ctl *ctl = arg;

	(void)events;
	for (;;) {
		char msg[224];
		struct ucred cred;
		socklen_t len = sizeof(cred);
		gid_t groups[CTL_MAX_GROUPS];
		int ng = 0;
		enum ctl_access acc;
		struct client *c;
		uint64_t now;
		char why[160];
		int root_caps = 0;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return;
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(cfd);
			continue;
		}
		now = loop_mono_ns();
		if (cred.uid == 0 && !(root_caps = ctl_peer_root_caps(cfd, cred.pid, why,
								      sizeof(why))) &&
		    now - ctl->nocaps_log_ns >= CTL_REFUSE_LOG_NS) {
			ctl->nocaps_log_ns = now;
			log_warnx("control: a uid 0 client without root's capabilities is judged "
				  "like any other user, by group '%s': %s", ctl->group, why);
		}
		if ((cred.uid != 0 || !root_caps) && ctl->have_group && cred.gid != ctl->gid) {
			ng = peer_groups(cfd, cred.pid, groups, CTL_MAX_GROUPS);
			if (ng < 0)
				ng = 0;
		}
		acc = ctl_access_for(cred.uid, root_caps, cred.gid, groups, (size_t)ng,
				     ctl->have_group, ctl->gid);
		/* refused peers are closed at once: they never hold a slot */
		if (acc == CTL_DENIED) {
			snprintf(msg, sizeof(msg), "permission denied: uid %u is neither root%s nor a "
				 "member of group '%s'", (unsigned)cred.uid, cred.uid ? "" :
				 " with CAP_NET_ADMIN and CAP_NET_RAW", ctl->group);
			turn_away(ctl, cfd, msg, now);
			note_refusal(ctl, cred.uid, 0, now);
			continue;
		}
		/* the last CTL_ROOT_RESERVE slots are root's; other uids hold at
		 * most CTL_MAX_PER_UID each */
		if (ctl->nclients >= CTL_MAX_CLIENTS ||
		    (acc != CTL_ROOT && (ctl->nclients >= CTL_MAX_CLIENTS - CTL_ROOT_RESERVE ||
					 clients_of(ctl, cred.uid) >= CTL_MAX_PER_UID))) {
			turn_away(ctl, cfd, "too many control clients", now);
			note_refusal(ctl, cred.uid, 1, now);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(cfd);
			continue;
		}
		c->ctl = ctl;
		c->fd = cfd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->access = acc;
		/* until its request is complete: short for all but root */
		c->deadline_ns = now + (acc == CTL_ROOT ? CTL_CLIENT_TIMEOUT_NS : CTL_ENTRY_TIMEOUT_NS);
		if (loop_add_fd(ctl->loop, cfd, EPOLLIN, client_cb, c) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		loop_fd_name(ctl->loop, cfd, "control");
		c->next = ctl->clients;
		ctl->clients = c;
		ctl->nclients++;
		reaper_arm(ctl);
	}
}

uid_t ctl_peer_uid(void)
{
	return handling ? handling->uid : (uid_t)-1;
}

uint64_t ctl_defer(void)
{
	if (!handling)
		return 0;
	/* its request is complete: from now on it waits for the daemon, not
	 * the client for itself (no entry timeout of an unauthenticated peer) */
	handling->ticket = ++tickets;
	handling->deadline_ns = loop_mono_ns() + CTL_DEFER_MAX_NS;
	return handling->ticket;
}

void ctl_reply_later(uint64_t ticket, struct json_object *reply)
{
	for (struct client *c = the_ctl ? the_ctl->clients : NULL; ticket && c; c = c->next)
		if (c->ticket == ticket) {
			c->ticket = 0;
			client_reply(c, reply);
			return;
		}
	json_object_put(reply);         /* the client went away */
}

/* Drop clients that hold a connection without finishing a request. */
static void reaper_cb(struct loop_timer *t, void *arg)
{
	struct ctl *ctl = arg;
	uint64_t now = loop_mono_ns();
	struct client *c = ctl->clients, *next;

	(void)t;
	ctl->reap_at = 0;       /* fired: disarmed */
	drain_expire(ctl, now, 0);
	for (; c; c = next) {
		next = c->next;
		if (now > c->deadline_ns) {
			log_debug("control: pid %d uid %u: timed out%s", (int)c->pid,
				  (unsigned)c->uid, c->ticket ? " waiting for a deferred reply" : "");
			client_free(c);
		}
	}
	reaper_arm(ctl);
}

/* chmod by fd: fchmodat2(fd, "", AT_EMPTY_PATH) (Linux 6.6), else through
 * the fd's /proc/self/fd link (which names this inode, whatever happens to
 * the path meanwhile). */
static int chmod_fd(int pathfd, mode_t mode)
{
	char p[64];

#ifdef SYS_fchmodat2
	if (syscall(SYS_fchmodat2, pathfd, "", mode, AT_EMPTY_PATH) == 0)
		return 0;
#else
	if (syscall(452, pathfd, "", mode, AT_EMPTY_PATH) == 0)
		return 0;
#endif
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pathfd);
	return chmod(p, mode);
}

/* The socket's owner, group and mode for the access model: root:GROUP 0660
 * when the group exists (members connect, the daemon reads their
 * credentials), else root:root 0600. */
static int apply_mode(struct ctl *ctl, char *err, size_t errlen)
{
	gid_t g = ctl->have_group ? ctl->gid : 0;
	mode_t m = ctl->have_group ? 0660 : 0600;

	if (ctl->pathfd < 0)
		return 0;
	if (fchownat(ctl->pathfd, "", 0, g, AT_EMPTY_PATH) < 0 || chmod_fd(ctl->pathfd, m) < 0) {
		util_errf(err, errlen, "control socket %s: setting owner and mode: %s", ctl->path,
			  strerror(errno));
		return -1;
	}
	return 0;
}

int ctl_set_group(struct ctl *ctl, const char *name, char *err, size_t errlen)
{
	/* a name service call: at start and reload only, never per client */
	struct group *gr = getgrnam(name);
	int had = ctl->have_group;
	gid_t old = ctl->gid;

	util_strlcpy(ctl->group, name, sizeof(ctl->group));
	ctl->have_group = gr != NULL;
	ctl->gid = gr ? gr->gr_gid : 0;
	if (had != ctl->have_group || old != ctl->gid)
		log_info("control socket %s: %s", ctl->path, ctl->have_group ?
			 "mode 0660, group members may read" :
			 "mode 0600, root only (no such group)");
	return apply_mode(ctl, err, errlen);
}

struct ctl *ctl_open(struct loop *l, const char *path, ctl_handler_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl *ctl;
	struct stat st;
	mode_t um;
	int probe, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path %s is too long", path);
		return NULL;
	}
	util_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	/* Another daemon listening there? Then do not steal its socket. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		snprintf(err, errlen, "control socket %s: another nicstalld is running", path);
		return NULL;
	}
	if (probe >= 0)
		close(probe);
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ctl->loop = l;
	ctl->fn = fn;
	ctl->arg = arg;
	ctl->pathfd = -1;
	util_strlcpy(ctl->path, path, sizeof(ctl->path));
	util_strlcpy(ctl->group, CTL_GROUP, sizeof(ctl->group));
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0)
		goto fail;
	unlink(path);
	/* made 0600 by bind itself (no moment with a wider mode), then
	 * opened by fd and given its group */
	um = umask(0177);
	rc = bind(ctl->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(um);
	if (rc < 0)
		goto fail;
	ctl->pathfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (ctl->pathfd < 0 || fstat(ctl->pathfd, &st) < 0)
		goto fail;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		errno = EEXIST;         /* someone else's file took the name */
		goto fail;
	}
	if (listen(ctl->fd, 128) < 0)
		goto fail;
	if (ctl_set_group(ctl, CTL_GROUP, err, errlen) < 0) {
		ctl_close(ctl);
		return NULL;
	}
	if (loop_add_fd(l, ctl->fd, EPOLLIN, accept_cb, ctl) < 0)
		goto fail;
	loop_fd_name(l, ctl->fd, "control");
	the_ctl = ctl;
	ctl->reaper = loop_timer_new(l, reaper_cb, ctl);
	if (ctl->reaper)
		loop_timer_name(ctl->reaper, "control");
	return ctl;
fail:
	snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
	if (ctl->pathfd >= 0)
		close(ctl->pathfd);
	if (ctl->fd >= 0)
		close(ctl->fd);
	free(ctl);
	return NULL;
}

void ctl_close(struct ctl *ctl)
{
	if (!ctl)
		return;
	while (ctl->clients)
		client_free(ctl->clients);
	drain_expire(ctl, 0, 1);
	loop_timer_free(ctl->reaper);
	loop_del_fd(ctl->loop, ctl->fd);
	close(ctl->fd);
	if (ctl->pathfd >= 0)
		close(ctl->pathfd);
	unlink(ctl->path);
	if (the_ctl == ctl)
		the_ctl = NULL;
	free(ctl);
}
