/* Unit tests: the control socket against hostile local clients (refused
 * peers, floods of one uid, idle connections), access from the peer's own
 * groups, and the socket's mode. Clients are forked children that drop to
 * other uids; needs root, else skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "daemon/ctl.h"
#include "lib/json.h"
#include "lib/loop.h"

struct fx {
	struct loop *l;
	struct ctl *ctl;
	char dir[64], path[96];
};

static uint64_t deferred;       /* the ticket of a {"cmd":"defer"} request */

static struct json_object *handler(struct json_object *req, enum ctl_access access, void *arg)
{
	struct json_object *o;

	(void)arg;
	if (!strcmp(jx_text(req, "cmd"), "defer")) {
		deferred = ctl_defer();
		if (deferred)
			return NULL;
	}
	o = json_object_new_object();
	jx_add_bool(o, "ok", 1);
	jx_add_int(o, "access", (int)access);
	return o;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	char err[256];

	if (geteuid() != 0) {
		free(x);
		*state = NULL;
		return 0;
	}
	strcpy(x->dir, "/tmp/test_ctl.XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	chmod(x->dir, 0755);
	snprintf(x->path, sizeof(x->path), "%s/ctl.sock", x->dir);
	x->l = loop_new();
	x->ctl = ctl_open(x->l, x->path, handler, NULL, err, sizeof(err));
	assert_non_null(x->ctl);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	if (!x)
		return 0;
	ctl_close(x->ctl);
	loop_free(x->l);
	rmdir(x->dir);
	free(x);
	return 0;
}

static void stop_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	loop_stop(arg);
}

/* Serve for ms milliseconds. */
static void serve(struct fx *x, unsigned ms)
{
	struct loop_timer *t = loop_timer_new(x->l, stop_cb, x->l);

	loop_timer_set(t, (uint64_t)ms * 1000000ull, 0);
	loop_run(x->l);
	loop_timer_free(t);
}

static void ready_cb(int fd, uint32_t events, void *arg)
{
	(void)fd;
	(void)events;
	loop_stop(arg);
}

/* Serve until fd is readable (a child says it is ready), at most ms. */
static void serve_until(struct fx *x, int fd, unsigned ms)
{
	loop_add_fd(x->l, fd, EPOLLIN, ready_cb, x->l);
	serve(x, ms);
	loop_del_fd(x->l, fd);
}

static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* What the daemon sent on fd within ms, and whether it then closed it:
 * 'c' reply and closed, 'o' nothing and still open, 'x' else. */
static char outcome(int fd, unsigned ms, char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	buf[0] = 0;
	while (poll(&p, 1, (int)ms) > 0) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r <= 0) {
			buf[n] = 0;
			return r == 0 && n ? 'c' : 'x';
		}
		n += (size_t)r;
		buf[n] = 0;
	}
	return n ? 'x' : 'o';
}

static void become(uid_t uid, gid_t gid, const gid_t *groups, size_t ng)
{
	if (setgroups(ng, groups) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
		_exit(99);
}

/* Who a client child runs as: uid 0 stays root (the test's own). */
struct who {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ng;
	int nocaps;             /* uid 0 with empty capability sets */
};

/* A client in a child: one request, a reply within wait_ms; writes 'k'
 * when the reply holds want, 'b' when turned away busy, else 'x'. */
static pid_t client(const char *path, int res[2], struct who w, const char *req,
		    unsigned wait_ms, const char *want)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[512], r = 'x';
		int fd;

		alarm(10);
		if (w.uid)
			become(w.uid, w.gid, w.groups, w.ng);
		if (w.nocaps) {
			struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
			struct __user_cap_data_struct d[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

			if (syscall(SYS_capset, &h, d) < 0)
				_exit(98);
		}
		fd = dial(path);
		if (fd >= 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req) &&
		    outcome(fd, wait_ms, buf, sizeof(buf)) == 'c')
			r = strstr(buf, want) ? 'k' : strstr(buf, "too many") ? 'b' : 'x';
		_exit(write(res[1], &r, 1) == 1 ? 0 : 1);
	}
	return pid;
}

/* A root client: one status request, 'k' for an ok reply. */
static pid_t root_client(const char *path, int res[2])
{
	return client(path, res, (struct who){ 0 }, "{\"cmd\":\"status\"}\n", 3000,
		      "\"ok\":true");
}

static void reap(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The client child pid's one-byte result on res is want; the child is
 * reaped. */
static void expect_result(int res[2], pid_t pid, char want)
{
	char c;

	assert_int_equal(read(res[0], &c, 1), 1);
	assert_int_equal(c, want);
	reap(pid);
}

/* An outsider opening 100 connections (192 in 30 s locked root out: 0 of
 * 13 root requests answered). Each is answered "permission denied" and
 * closed at once, none holds a slot, and root is served. The socket is
 * opened to everyone here, as a hand-loosened mode would. */
static void ctl_accept__outsider_floods__refused_at_once_root_served(void **state)
{
	struct fx *x = *state;
	int ready[2], res[2], go[2];
	pid_t out, root;
	char c, buf[512];

	if (!x)
		skip();
	assert_int_equal(ctl_set_group(x->ctl, "nicstall-no-such-group", buf, sizeof(buf)), 0);
	assert_int_equal(chmod(x->path, 0666), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(res), 0);
	assert_int_equal(pipe(go), 0);
	out = fork();
	assert_true(out >= 0);
	if (out == 0) {
		int fds[100], closed = 0, n = 0;

		alarm(20);
		become(65534, 65534, NULL, 0);
		for (int i = 0; i < 100; i++)
			if ((fds[i] = dial(x->path)) >= 0)
				n++;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 100; i++)
			if (fds[i] >= 0 && outcome(fds[i], 50, buf, sizeof(buf)) == 'c' &&
			    strstr(buf, "permission denied: uid 65534"))
				closed++;
		c = (char)(closed == n && n == 100 ? 'y' : 'n');
		_exit(write(res[1], &c, 1) == 1 ? 0 : 1);
	}
	serve_until(x, ready[0], 10000);         /* while it connects */
	assert_int_equal(read(ready[0], &c, 1), 1);
	serve(x, 300);
	root = root_client(x->path, res);
	serve(x, 500);
	expect_result(res, root, 'k');          /* root served */
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], &c, 1), 1);
	assert_int_equal(c, 'y');               /* all 100 answered and closed */
	reap(out);
	close(ready[0]); close(ready[1]); close(res[0]); close(res[1]);
	close(go[0]); close(go[1]);
}

/* A group member holding 64 idle connections gets CTL_MAX_PER_UID slots,
 * the rest are turned away, root is served, and the idle ones are dropped
 * after the short entry timeout. */
static void ctl_accept__member_floods__per_uid_limit_timeout_root_served(void **state)
{
	struct fx *x = *state;
	int ready[2], res[2], go[2];
	pid_t mem, root;
	char c, buf[512];

	if (!x)
		skip();
	assert_int_equal(ctl_set_group(x->ctl, "nogroup", buf, sizeof(buf)), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(res), 0);
	assert_int_equal(pipe(go), 0);
	mem = fork();
	assert_true(mem >= 0);
	if (mem == 0) {
		int fds[64], busy = 0, open_ = 0, dropped = 0;

		alarm(20);
		become(65534, 65534, NULL, 0);
		for (int i = 0; i < 64; i++)
			fds[i] = dial(x->path);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 64; i++) {
			char o = fds[i] >= 0 ? outcome(fds[i], 20, buf, sizeof(buf)) : 'x';

			if (o == 'c' && strstr(buf, "too many control clients")) {
				busy++;
				close(fds[i]);
				fds[i] = -1;
			} else if (o == 'o')
				open_++;
		}
		if (write(res[1], (char[]){ (char)busy, (char)open_ }, 2) != 2 ||
		    read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 64; i++)    /* after the entry timeout */
			if (fds[i] >= 0) {
				struct pollfd p = { .fd = fds[i], .events = POLLIN };

				if (poll(&p, 1, 0) == 1 && read(fds[i], buf, 1) == 0)
					dropped++;
			}
		_exit(write(res[1], (char[]){ (char)dropped }, 1) == 1 ? 0 : 1);
	}
	serve_until(x, ready[0], 10000);         /* while it connects */
	assert_int_equal(read(ready[0], &c, 1), 1);
	serve(x, 300);
	root = root_client(x->path, res);
	serve(x, 500);
	expect_result(res, root, 'k');
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], buf, 2), 2);
	assert_int_equal(buf[0], 64 - CTL_MAX_PER_UID);     /* turned away */
	assert_int_equal(buf[1], CTL_MAX_PER_UID);          /* held, idle */
	serve(x, 2500);                                     /* > CTL_ENTRY_TIMEOUT_NS */
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], buf, 1), 1);
	assert_int_equal(buf[0], CTL_MAX_PER_UID);          /* all dropped */
	reap(mem);
	close(ready[0]); close(ready[1]); close(res[0]); close(res[1]);
	close(go[0]); close(go[1]);
}

/* Access follows the peer process's own groups (as of connect), never a
 * name-service lookup by uid: uid 12345 has no passwd entry, and its
 * process holds the group as a supplementary group. */
static void ctl_accept__supplementary_group_of_peer__read(void **state)
{
	static const gid_t g[2] = { 4242, 65534 };
	struct fx *x = *state;
	int res[2];
	pid_t pid;
	char buf[512];

	if (!x)
		skip();
	assert_int_equal(ctl_set_group(x->ctl, "nogroup", buf, sizeof(buf)), 0);
	assert_int_equal(pipe(res), 0);
	pid = client(x->path, res, (struct who){ 12345, 12345, g, 2, 0 },
		     "{\"cmd\":\"status\"}\n", 3000, "\"access\":1");
	serve(x, 500);
	expect_result(res, pid, 'k');
	close(res[0]);
	close(res[1]);
}

/* root:GROUP 0660 when the group exists (was 0666), root:root 0600 without
 * it; set on the bound inode, not by name. */
static void ctl_set_group__exists_or_not__socket_mode(void **state)
{
	struct fx *x = *state;
	struct stat st;
	char err[256];

	if (!x)
		skip();
	assert_int_equal(ctl_set_group(x->ctl, "nogroup", err, sizeof(err)), 0);
	assert_int_equal(stat(x->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 65534);
	assert_int_equal(ctl_set_group(x->ctl, "nicstall-no-such-group", err, sizeof(err)), 0);
	assert_int_equal(stat(x->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_gid, 0);
}

static void reply_later_cb(struct loop_timer *t, void *arg)
{
	struct json_object *o = json_object_new_object();

	(void)t;
	(void)arg;
	jx_add_bool(o, "ok", 1);
	jx_add_str(o, "later", "yes");
	ctl_reply_later(deferred, o);
	deferred = 0;
}

/* A member whose request is deferred (a reprogram's hold) has sent its
 * request: it is not an idle unauthenticated peer, is not dropped at the
 * entry timeout, and gets its reply when it comes (after 2.6 s here). */
static void ctl_defer__member_waits_past_entry_timeout__gets_reply(void **state)
{
	struct fx *x = *state;
	struct loop_timer *t;
	int res[2];
	pid_t pid;
	char buf[512];

	if (!x)
		skip();
	assert_int_equal(ctl_set_group(x->ctl, "nogroup", buf, sizeof(buf)), 0);
	assert_int_equal(pipe(res), 0);
	pid = client(x->path, res, (struct who){ 65534, 65534, NULL, 0, 0 }, "{\"cmd\":\"defer\"}\n",
		     5000, "\"later\":\"yes\"");
	t = loop_timer_new(x->l, reply_later_cb, NULL);
	loop_timer_set(t, (CTL_ENTRY_TIMEOUT_NS * 13) / 10, 0);
	serve(x, (unsigned)(CTL_ENTRY_TIMEOUT_NS * 13 / 10 / 1000000ull) + 600);
	loop_timer_free(t);
	expect_result(res, pid, 'k');
	close(res[0]);
	close(res[1]);
}

/* The mode is set on the bound inode, never by name: with the socket's
 * name replaced by a symbolic link to a root file (a user who could write
 * run_dir), the file keeps its mode and group; the socket gets them. */
static void ctl_set_group__path_replaced_by_symlink__target_untouched(void **state)
{
	struct fx *x = *state;
	char moved[128], victim[128], err[256];
	struct stat st;
	int fd;

	if (!x)
		skip();
	snprintf(moved, sizeof(moved), "%s.moved", x->path);
	snprintf(victim, sizeof(victim), "%s/victim", x->dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rename(x->path, moved), 0);
	assert_int_equal(symlink(victim, x->path), 0);
	assert_int_equal(ctl_set_group(x->ctl, "nogroup", err, sizeof(err)), 0);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(stat(moved, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, 65534);
	unlink(x->path);
	unlink(victim);
	assert_int_equal(rename(moved, x->path), 0);
}

/* Onload's tools run as uid 0 without a capability (daemon/detect/srcrun.c): such
 * a client is not root to the control socket; root with its capabilities
 * (sudo, the unit's ExecReload=) still is. */
static void ctl_accept__uid0_without_caps__not_root(void **state)
{
	struct fx *x = *state;
	int res[2];
	pid_t pid;

	if (!x)
		skip();
	assert_int_equal(pipe(res), 0);
	pid = client(x->path, res, (struct who){ .nocaps = 1 }, "{\"cmd\":\"recover\"}\n", 3000,
		     "neither root with CAP_NET_ADMIN and CAP_NET_RAW nor a member");
	serve_until(x, res[0], 3000);
	serve(x, 100);
	expect_result(res, pid, 'k');
	assert_int_equal(pipe(res), 0);
	pid = client(x->path, res, (struct who){ 0 }, "{\"cmd\":\"reload\"}\n", 3000,
		     "\"access\":2");
	serve_until(x, res[0], 3000);
	serve(x, 100);
	expect_result(res, pid, 'k');
}

static void ctl_access_for__uids_and_groups__decided(void **state)
{
	gid_t g[3] = { 10, 20, 30 };

	(void)state;
	assert_int_equal(ctl_access_for(0, 1, 0, NULL, 0, 0, 0), CTL_ROOT);
	assert_int_equal(ctl_access_for(1000, 1, 20, NULL, 0, 1, 20), CTL_READ);
	assert_int_equal(ctl_access_for(1000, 1, 5, g, 3, 1, 30), CTL_READ);
	assert_int_equal(ctl_access_for(1000, 1, 5, g, 3, 1, 40), CTL_DENIED);
	assert_int_equal(ctl_access_for(1000, 1, 30, g, 3, 0, 30), CTL_DENIED);  /* no group */
	/* uid 0 without root's capabilities: a user like any other */
	assert_int_equal(ctl_access_for(0, 0, 0, NULL, 0, 1, 20), CTL_DENIED);
	assert_int_equal(ctl_access_for(0, 0, 0, g, 3, 1, 20), CTL_READ);
	assert_int_equal(ctl_access_for(0, 0, 0, NULL, 0, 0, 0), CTL_DENIED);
}

/* Wakeups of the loop over ms milliseconds of serving (the stop timer's
 * one included). */
static uint64_t idle_wakeups(struct fx *x, unsigned ms)
{
	uint64_t w0 = loop_wakeups(x->l);

	serve(x, ms);
	return loop_wakeups(x->l) - w0;
}

/* A control socket wakes nothing of its own while nobody is connected,
 * nor while a client is held short of its deadline: its timeouts are one
 * timer at the earliest deadline (a reaper ticking every 100 ms for
 * nothing was a third of an idle daemon's wakeups; ticking while a client
 * was held, a wakeup a tenth of a second of a slow status call's).
 * Deadlines still hold: the entry timeout's test above. */
static void ctl_reaper__no_connection__no_wakeup(void **state)
{
	struct fx *x = *state;
	char buf[256];
	int fd;

	if (!x)
		skip();
	assert_true(idle_wakeups(x, 550) <= 2);
	/* a connection: served (its request answered), then gone */
	fd = dial(x->path);
	assert_true(fd >= 0);
	assert_true(write(fd, "{\"cmd\":\"status\"}\n", 17) == 17);
	serve(x, 100);
	assert_int_equal(outcome(fd, 100, buf, sizeof(buf)), 'c');
	close(fd);
	assert_true(idle_wakeups(x, 550) <= 2);
	/* a slow client, silent for 550 ms after it connects: its accept's
	 * wakeup and the stop timer's, no tick while it is held (a reaper
	 * ticking while a connection is held: 6 or 7) */
	fd = dial(x->path);
	assert_true(fd >= 0);
	assert_true(idle_wakeups(x, 550) <= 3);
	assert_true(write(fd, "{\"cmd\":\"status\"}\n", 17) == 17);
	serve(x, 100);
	assert_int_equal(outcome(fd, 100, buf, sizeof(buf)), 'c');
	close(fd);
	assert_true(idle_wakeups(x, 550) <= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ctl_accept__outsider_floods__refused_at_once_root_served, setup, teardown),
		cmocka_unit_test_setup_teardown(ctl_accept__member_floods__per_uid_limit_timeout_root_served, setup, teardown),
		cmocka_unit_test_setup_teardown(ctl_accept__supplementary_group_of_peer__read, setup, teardown),
		cmocka_unit_test_setup_teardown(ctl_set_group__exists_or_not__socket_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(ctl_defer__member_waits_past_entry_timeout__gets_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(ctl_set_group__path_replaced_by_symlink__target_untouched, setup, teardown),
		cmocka_unit_test(ctl_access_for__uids_and_groups__decided),
		cmocka_unit_test_setup_teardown(ctl_accept__uid0_without_caps__not_root, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctl_reaper__no_connection__no_wakeup, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
