/* ctl: control socket server. */
#include "daemon/ctl.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CLIENTS 64
#define CLIENT_TIMEOUT_NS (10ull * 1000000000ull)

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
	uint64_t started_ns;
	uint64_t ticket;        /* a deferred reply is owed (ctl_defer) */
	struct client *next;
};

struct ctl {
	struct loop *loop;
	int fd;
	char path[108];
	ctl_handler_fn fn;
	void *arg;
	struct client *clients;
	unsigned nclients;
	struct loop_timer *reaper;
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

enum ctl_access ctl_access_for(uid_t uid, gid_t gid)
{
	struct group *gr;
	struct passwd *pw;
	gid_t groups[256];
	int ng = 256;

	if (uid == 0)
		return CTL_ROOT;
	gr = getgrnam(CTL_GROUP);
	if (!gr)
		return CTL_DENIED;
	if (gid == gr->gr_gid)
		return CTL_READ;
	pw = getpwuid(uid);
	if (!pw)
		return CTL_DENIED;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ng) < 0)
		return CTL_DENIED;
	for (int i = 0; i < ng; i++)
		if (groups[i] == gr->gr_gid)
			return CTL_READ;
	return CTL_DENIED;
}

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
	} else if (c->access == CTL_DENIED) {
		reply = ctl_error("permission denied: uid %u is neither root nor a "
				  "member of group '%s'", (unsigned)c->uid, CTL_GROUP);
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

static void accept_cb(int fd, uint32_t events, void *arg)
{
	struct ctl *ctl = arg;

	(void)events;
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct client *c;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return;
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(cfd);
			continue;
		}
		if (ctl->nclients >= MAX_CLIENTS) {
			static const char busy[] =
				"{\"ok\":false,\"error\":\"too many control clients\"}\n";

			(void)!send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(cfd);
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
		c->access = ctl_access_for(cred.uid, cred.gid);
		c->started_ns = loop_mono_ns();
		if (loop_add_fd(ctl->loop, cfd, EPOLLIN, client_cb, c) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		c->next = ctl->clients;
		ctl->clients = c;
		ctl->nclients++;
		if (c->access == CTL_DENIED)
			log_info("control: refusing pid %d uid %u (not root, not in group '%s')",
				 (int)cred.pid, (unsigned)cred.uid, CTL_GROUP);
	}
}

uint64_t ctl_defer(void)
{
	if (!handling)
		return 0;
	handling->ticket = ++tickets;
	handling->started_ns = loop_mono_ns();
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
	for (; c; c = next) {
		next = c->next;
		if (now - c->started_ns > (c->ticket ? CTL_DEFER_MAX_NS : CLIENT_TIMEOUT_NS)) {
			log_debug("control: pid %d: timed out", (int)c->pid);
			client_free(c);
		}
	}
}

struct ctl *ctl_open(struct loop *l, const char *path, ctl_handler_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl *ctl;
	int probe;

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
	util_strlcpy(ctl->path, path, sizeof(ctl->path));
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0)
		goto fail;
	unlink(path);
	if (bind(ctl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* Anyone may connect: credentials are checked per connection, so a
	 * refused user gets a clear answer rather than EACCES. */
	chmod(path, 0666);
	if (listen(ctl->fd, 16) < 0)
		goto fail;
	if (loop_add_fd(l, ctl->fd, EPOLLIN, accept_cb, ctl) < 0)
		goto fail;
	the_ctl = ctl;
	ctl->reaper = loop_timer_new(l, reaper_cb, ctl);
	if (ctl->reaper)
		loop_timer_set(ctl->reaper, 1000000000ull, 1000000000ull);
	return ctl;
fail:
	snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
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
	loop_timer_free(ctl->reaper);
	loop_del_fd(ctl->loop, ctl->fd);
	close(ctl->fd);
	unlink(ctl->path);
	if (the_ctl == ctl)
		the_ctl = NULL;
	free(ctl);
}
