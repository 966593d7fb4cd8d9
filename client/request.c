/* request: one request to nicstalld over its control socket; errors,
 * JSON output, the state directory. */
#include "client/client.h"
#include "lib/ctlproto.h"
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_REPLY (256u << 20)
#define DEFAULT_STATE_DIR "/var/lib/nicstalld"

/* "nicstallctl: " and the message on standard error, then tail. */
__attribute__((format(printf, 2, 0)))
static void say(const char *tail, const char *fmt, va_list ap)
{
	fputs("nicstallctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(tail, stderr);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("\n(nicstallctl --help lists the commands and options)\n", fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("\n", fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

const char *cli_dash(const char *s)
{
	return s && *s ? s : "-";
}

static int connect_to(const char *path, int quiet)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		if (!quiet)
			cli_error("socket path %s is too long (at most %zu bytes)", path,
				  sizeof(sa.sun_path) - 1);
		return -1;
	}
	util_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (!quiet && e == EACCES)
			cli_error("cannot connect to %s: %s: the control socket is for root and "
				  "members of group '%s'", path, strerror(e), CTL_GROUP);
		else if (!quiet)
			cli_error("cannot connect to %s: %s (is nicstalld running?)", path,
				  strerror(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct json_object *cli_request(const struct cli *c, struct json_object *req)
{
	struct timeval tv = { .tv_sec = 30 };
	const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct json_object *reply;
	int fd = connect_to(c->sock_path, 0);

	if (fd < 0)
		exit(EXIT_FAIL);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
		cli_error("%s: send: %s", c->sock_path, strerror(errno));
		exit(EXIT_FAIL);
	}
	for (;;) {
		ssize_t r;

		if (len + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 131072;
			if (cap > MAX_REPLY) {
				cli_error("reply larger than %u bytes", MAX_REPLY);
				exit(EXIT_FAIL);
			}
			buf = realloc(buf, cap);
			if (!buf) {
				cli_error("out of memory");
				exit(EXIT_FAIL);
			}
		}
		r = recv(fd, buf + len, cap - len - 1, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			cli_error("%s: %s", c->sock_path,
				  errno == EAGAIN ? "no reply within 30 s" : strerror(errno));
			exit(EXIT_FAIL);
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf || !len) {
		cli_error("%s: empty reply", c->sock_path);
		exit(EXIT_FAIL);
	}
	buf[len] = 0;
	reply = json_tokener_parse(buf);
	free(buf);
	if (!reply || !json_object_is_type(reply, json_type_object)) {
		cli_error("malformed reply from %s", c->sock_path);
		exit(EXIT_FAIL);
	}
	return reply;
}

int cli_check_reply(struct json_object *reply)
{
	struct json_object *ok = jx_get(reply, "ok");

	if (!ok || !json_object_get_boolean(ok))
		return cli_error("%s", jx_text(reply, "error")[0] ? jx_text(reply, "error") :
				 "request failed");
	return EXIT_OK;
}

void cli_print_json(struct json_object *o)
{
	if (json_object_is_type(o, json_type_object) && json_object_object_length(o) > 1)
		json_object_object_del(o, "ok");
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
}

void cli_state_dir(const struct cli *c, char *buf, size_t len)
{
	int fd;

	if (c->state_dir) {
		util_strlcpy(buf, c->state_dir, len);
		return;
	}
	util_strlcpy(buf, DEFAULT_STATE_DIR, len);
	/* a running daemon knows its state_dir (a reader it refuses gets the
	 * default) */
	fd = connect_to(c->sock_path, 1);
	if (fd >= 0) {
		struct json_object *req = json_object_new_object(), *rep;

		close(fd);
		json_object_object_add(req, "cmd", json_object_new_string("status"));
		rep = cli_request(c, req);
		json_object_put(req);
		if (jx_text(rep, "state_dir")[0])
			util_strlcpy(buf, jx_text(rep, "state_dir"), len);
		json_object_put(rep);
	}
}
