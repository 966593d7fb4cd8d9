/* Unit tests: external probe commands run from the loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/loop.h"
#include "probes/probe_exec.h"

#define MS 1000000ull

struct ctx {
	struct loop *l;
	struct probe_exec_cred cred;    /* start()'s: the daemon's unless a test says */
	struct loop_timer *guard, *settle, *tick;
	struct probe_exec *p;
	int done_calls;
	int guard_fired;
	int ticks;
	uint64_t done_ns;
};

static void guard_cb(struct loop_timer *t, void *arg)
{
	struct ctx *c = arg;

	(void)t;
	c->guard_fired = 1;
	loop_stop(c->l);
}

static void settle_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	loop_stop(((struct ctx *)arg)->l);
}

static void tick_cb(struct loop_timer *t, void *arg)
{
	(void)t;
	((struct ctx *)arg)->ticks++;
}

static void done_cb(struct probe_exec *p, void *arg)
{
	struct ctx *c = arg;

	c->done_calls++;
	c->p = p;
	c->done_ns = loop_mono_ns();
	/* keep running a little: a second call of done would be counted */
	loop_timer_set(c->settle, 50 * MS, 0);
}

static void ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->cred.priv = PROBE_EXEC_DAEMON;
	c->l = loop_new();
	assert_non_null(c->l);
	c->guard = loop_timer_new(c->l, guard_cb, c);
	c->settle = loop_timer_new(c->l, settle_cb, c);
	c->tick = loop_timer_new(c->l, tick_cb, c);
	assert_non_null(c->guard);
	assert_non_null(c->settle);
	assert_non_null(c->tick);
}

static void ctx_run(struct ctx *c, uint64_t guard_ns)
{
	assert_int_equal(loop_timer_set(c->guard, guard_ns, 0), 0);
	assert_int_equal(loop_run(c->l), 0);
	assert_false(c->guard_fired);
	assert_int_equal(c->done_calls, 1);
}

static void ctx_fini(struct ctx *c)
{
	probe_exec_free(c->p);
	loop_timer_free(c->guard);
	loop_timer_free(c->settle);
	loop_timer_free(c->tick);
	loop_free(c->l);
}

static struct probe_exec *start(struct ctx *c, const char *const *argv, int nsfd,
				uint64_t timeout_ns, size_t max_out)
{
	char err[256] = "";
	struct probe_exec *p = probe_exec_start(c->l, argv, &c->cred, nsfd, timeout_ns, max_out,
						done_cb, c, err, sizeof(err));

	if (!p)
		fail_msg("probe_exec_start: %s", err);
	assert_int_equal(c->done_calls, 0);     /* never from inside start */
	return p;
}

static void probe_exec_start__echo__exit0_and_output(void **state)
{
	const char *argv[] = { "/bin/echo", "hello", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->exited);
	assert_int_equal(r->status, 0);
	assert_false(r->signaled);
	assert_false(r->timed_out);
	assert_false(r->not_found);
	assert_int_equal(r->out_len, 6);
	assert_string_equal(r->out, "hello\n");
	assert_int_equal(r->dropped, 0);
	assert_string_equal(r->error, "");
	assert_true(r->end_ns >= r->start_ns);
	assert_false(probe_exec_running(c.p));
	ctx_fini(&c);
}

static void probe_exec_start__name_in_path_exit3__status3(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->exited);
	assert_int_equal(r->status, 3);
	assert_non_null(strstr(r->out, "out\n"));
	assert_non_null(strstr(r->out, "err\n"));       /* stderr in the same pipe */
	ctx_fini(&c);
}

static void probe_exec_start__sleeps_forever__timed_out_loop_not_blocked(void **state)
{
	const char *argv[] = { "sleep", "1000", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	assert_int_equal(loop_timer_set(c.tick, 20 * MS, 20 * MS), 0);
	start(&c, argv, -1, 200 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->timed_out);
	assert_true(r->signaled);
	assert_int_equal(r->signo, SIGTERM);
	assert_false(r->exited);
	assert_true(r->end_ns - r->start_ns >= 190 * MS);
	assert_true(r->end_ns - r->start_ns < 1000 * MS);
	assert_true(c.ticks >= 5);      /* the loop kept running meanwhile */
	ctx_fini(&c);
}

static void probe_exec_start__ignores_sigterm__killed_after_grace(void **state)
{
	const char *argv[] = { "sh", "-c", "trap '' TERM; while :; do sleep 0.05; done", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 200 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->timed_out);
	assert_true(r->signaled);
	assert_int_equal(r->signo, SIGKILL);
	assert_true(r->end_ns - r->start_ns >= 200 * MS + PROBE_EXEC_GRACE_NS - 20 * MS);
	ctx_fini(&c);
}

static void probe_exec_start__flooding_output__capped_and_killed(void **state)
{
	const char *argv[] = { "yes", "flood", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	assert_int_equal(loop_timer_set(c.tick, 20 * MS, 20 * MS), 0);
	start(&c, argv, -1, 300 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_int_equal(r->out_len, 4096);
	assert_int_equal(strlen(r->out), 4096);
	assert_memory_equal(r->out, "flood\nflood\n", 12);
	assert_true(r->dropped > 0);
	assert_true(r->truncated);
	assert_true(r->timed_out);
	assert_true(r->signaled);
	assert_true(c.ticks >= 8);
	ctx_fini(&c);
}

static void probe_exec_start__missing_command__not_found_from_loop(void **state)
{
	const char *argv[] = { "onload_stackdump_probe_exec_test", "lots", NULL };
	const char *argv2[] = { "/nonexistent/onload_stackdump", "lots", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 1000 * MS, 4096);
	ctx_run(&c, 2000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->not_found);
	assert_false(r->exited);
	assert_non_null(strstr(r->error, "command not found: onload_stackdump_probe_exec_test"));
	assert_int_equal(r->out_len, 0);
	assert_non_null(r->out);
	ctx_fini(&c);

	ctx_init(&c);
	start(&c, argv2, -1, 1000 * MS, 4096);
	ctx_run(&c, 2000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->not_found);
	assert_non_null(strstr(r->error, "/nonexistent/onload_stackdump"));
	ctx_fini(&c);
}

static void probe_exec_start__parent_env_and_fds__not_inherited(void **state)
{
	const char *env_argv[] = { "env", NULL };
	const char *fd_argv[] = { "ls", "/proc/self/fd", NULL };
	const struct probe_exec_result *r;
	struct ctx c;
	int fd;

	(void)state;
	assert_int_equal(setenv("SECRET", "hunter2", 1), 0);
	ctx_init(&c);
	start(&c, env_argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_int_equal(r->status, 0);
	assert_null(strstr(r->out, "hunter2"));
	assert_null(strstr(r->out, "SECRET"));
	assert_string_equal(r->out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\nLANG=C\n");
	ctx_fini(&c);
	unsetenv("SECRET");

	/* an inheritable fd of ours must not reach the child */
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 57), 57);
	ctx_init(&c);
	start(&c, fd_argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_int_equal(r->status, 0);
	assert_null(strstr(r->out, "57"));
	assert_non_null(strstr(r->out, "0\n1\n2\n"));
	ctx_fini(&c);
	close(57);
	close(fd);
}

static void probe_exec_start__reads_stdin__gets_dev_null(void **state)
{
	const char *argv[] = { "cat", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 2000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_false(r->timed_out);
	assert_true(r->exited);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->out_len, 0);
	ctx_fini(&c);
}

static void probe_exec_start__background_child_holds_pipe__done_at_exit(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 1000 & echo started", NULL };
	const struct probe_exec_result *r;
	struct ctx c;
	int st = 0, reaped = 0;

	(void)state;
	/* the orphaned sleep becomes our child, so we can see it die */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ctx_init(&c);
	start(&c, argv, -1, 3000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->exited);
	assert_int_equal(r->status, 0);
	assert_false(r->timed_out);
	assert_string_equal(r->out, "started\n");
	assert_true(r->end_ns - r->start_ns < 2000 * MS);
	ctx_fini(&c);
	for (int i = 0; i < 100 && !reaped; i++) {
		if (waitpid(-1, &st, WNOHANG) > 0)
			reaped = 1;
		else
			usleep(10000);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	assert_true(reaped);    /* the leftover group member was killed */
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
}

/* Our own first non-loopback interface, or "" if there is none. */
static void host_iface(char *name, size_t len)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	name[0] = '\0';
	for (i = ifs; i && i->if_index; i++)
		if (strcmp(i->if_name, "lo")) {
			snprintf(name, len, "%s:", i->if_name);
			break;
		}
	if (ifs)
		if_freenameindex(ifs);
}

static void probe_exec_start__nsfd__sees_only_that_namespace(void **state)
{
	const char *argv[] = { "/bin/cat", "/proc/net/dev", NULL };
	const struct probe_exec_result *r;
	char host[IF_NAMESIZE + 2];
	struct ctx c;
	int own, ns;

	(void)state;
	host_iface(host, sizeof(host));
	if (!host[0])
		skip();         /* nothing to tell the namespaces apart by */
	own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(own >= 0);
	if (unshare(CLONE_NEWNET) < 0) {
		close(own);
		skip();         /* no CAP_SYS_ADMIN */
	}
	ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_int_equal(setns(own, CLONE_NEWNET), 0);
	assert_true(ns >= 0);

	ctx_init(&c);
	start(&c, argv, ns, 5000 * MS, 65536);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "lo:"));
	assert_null(strstr(r->out, host));
	ctx_fini(&c);

	/* control: in our own namespace the host interface is there */
	ctx_init(&c);
	start(&c, argv, -1, 5000 * MS, 65536);
	ctx_run(&c, 5000 * MS);
	assert_non_null(strstr(probe_exec_result(c.p)->out, host));
	ctx_fini(&c);
	close(ns);
	close(own);
}

static void probe_exec_start__nsfd_not_a_netns__setup_error(void **state)
{
	const char *argv[] = { "/bin/echo", "never", NULL };
	const struct probe_exec_result *r;
	struct ctx c;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	ctx_init(&c);
	start(&c, argv, fd, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->exited);
	assert_int_equal(r->status, 127);
	assert_false(r->not_found);
	assert_non_null(strstr(r->error, "entering the network namespace"));
	assert_null(strstr(r->out, "never"));
	ctx_fini(&c);
	close(fd);
}

static int children_count(void)
{
	char path[64], buf[256];
	int fd, n;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	n = 0;
	for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		n++;
	return n;
}

static void probe_exec_free__running_child__killed_and_reaped(void **state)
{
	const char *argv[] = { "sleep", "1000", NULL };
	struct ctx c;
	struct probe_exec *p;

	(void)state;
	ctx_init(&c);
	assert_int_equal(children_count(), 0);
	p = start(&c, argv, -1, 0, 4096);
	assert_true(probe_exec_running(p));
	assert_int_equal(children_count(), 1);
	probe_exec_free(p);
	assert_int_equal(children_count(), 0);
	assert_int_equal(c.done_calls, 0);
	ctx_fini(&c);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait (4 s at most) for a file the child writes when it is ready. */
static void wait_file(const char *file)
{
	for (int i = 0; i < 400 && access(file, F_OK) < 0; i++)
		usleep(10000);
	assert_int_equal(access(file, F_OK), 0);
}

/* A stop gives the child its SIGTERM and time to clean up (a hook removing
 * its temporary files): probe_exec_free alone would SIGKILL it. */
static void probe_exec_terminate__traps_sigterm__cleans_up_then_reaped(void **state)
{
	char dir[] = "/tmp/test_probe_term.XXXXXX", file[64], script[256];
	const char *argv[] = { "sh", "-c", script, NULL };
	struct ctx c;
	struct probe_exec *p;
	uint64_t t0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/tmpfile", dir);
	snprintf(script, sizeof(script),
		 "trap 'rm -f %s; exit 0' TERM; touch %s; while :; do sleep 0.05; done", file, file);
	ctx_init(&c);
	p = start(&c, argv, -1, 0, 4096);
	wait_file(file);
	t0 = mono_ms();
	assert_int_equal(probe_exec_terminate(p, 10000), 1);
	/* it returned when the child ended, not at the end of the grace */
	assert_true(mono_ms() - t0 < 10000);
	assert_int_equal(access(file, F_OK), -1);
	probe_exec_free(p);
	assert_int_equal(children_count(), 0);
	assert_int_equal(c.done_calls, 0);
	ctx_fini(&c);
	rmdir(dir);
}

/* A child deaf to SIGTERM holds the stop for the grace, no longer; then
 * probe_exec_free kills it. */
static void probe_exec_terminate__ignores_sigterm__grace_then_killed(void **state)
{
	char dir[] = "/tmp/test_probe_term.XXXXXX", file[64], script[256];
	const char *argv[] = { "sh", "-c", script, NULL };
	struct ctx c;
	struct probe_exec *p;
	uint64_t t0, took;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/deaf", dir);
	/* the file says the trap is set: SIGTERM before it would end sh */
	snprintf(script, sizeof(script), "trap '' TERM; touch %s; while :; do sleep 0.05; done", file);
	ctx_init(&c);
	p = start(&c, argv, -1, 0, 4096);
	wait_file(file);
	t0 = mono_ms();
	/* 0: its pidfd never said it exited */
	assert_int_equal(probe_exec_terminate(p, 300), 0);
	took = mono_ms() - t0;
	/* the whole grace, and not much more (the bound is loose: a loaded
	 * machine may be slow to wake us, never early) */
	assert_true(took >= 290);
	assert_true(took < 5000);
	assert_int_equal(children_count(), 1);
	probe_exec_free(p);
	assert_int_equal(children_count(), 0);
	assert_int_equal(c.done_calls, 0);
	assert_int_equal(probe_exec_terminate(NULL, 100), 1);   /* NULL is fine */
	ctx_fini(&c);
	unlink(file);
	rmdir(dir);
}

static void probe_exec_to_json__echo__fields(void **state)
{
	const char *argv[] = { "/bin/echo", "hello", NULL };
	struct json_object *o, *v;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	o = json_object_new_object();
	assert_int_equal(probe_exec_to_json(c.p, o), 0);
	assert_true(json_object_object_get_ex(o, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_true(json_object_object_get_ex(o, "output", &v));
	assert_string_equal(json_object_get_string(v), "hello\n");
	assert_true(json_object_object_get_ex(o, "argv", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)), "hello");
	assert_true(json_object_object_get_ex(o, "timed_out", &v));
	assert_false(json_object_get_boolean(v));
	assert_false(json_object_object_get_ex(o, "error", &v));
	json_object_put(o);
	ctx_fini(&c);
}

static void probe_exec_to_json__binary_output__valid_text(void **state)
{
	const char *argv[] = { "printf", "a\\377b\\000c\\303\\251", NULL };
	struct json_object *o, *v;
	struct ctx c;

	(void)state;
	ctx_init(&c);
	start(&c, argv, -1, 5000 * MS, 4096);
	ctx_run(&c, 5000 * MS);
	assert_int_equal(probe_exec_result(c.p)->out_len, 7);
	o = json_object_new_object();
	assert_int_equal(probe_exec_to_json(c.p, o), 0);
	assert_true(json_object_object_get_ex(o, "output", &v));
	assert_string_equal(json_object_get_string(v), "a?b?c\xc3\xa9");
	json_object_put(o);
	ctx_fini(&c);
}

static void split_ok(const char *line, int n, const char *const *want)
{
	char err[128] = "";
	char **argv = NULL;
	int r = probe_exec_split(line, &argv, err, sizeof(err));

	if (r != n)
		fail_msg("split [%s]: %d words (want %d): %s", line, r, n, err);
	for (int i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[n]);
	probe_exec_argv_free(argv);
}

static void split_err(const char *line, const char *want)
{
	char err[128] = "";
	char **argv = (char **)1;

	assert_int_equal(probe_exec_split(line, &argv, err, sizeof(err)), -1);
	assert_null(argv);
	if (!strstr(err, want))
		fail_msg("split [%s]: error '%s' lacks '%s'", line, err, want);
}

/* ---- privileges: what each kind of child is left with ---- */

struct status {
	char uid[64], gid[64], groups[128];
	char inh[24], prm[24], eff[24], bnd[24], amb[24];
	int nnp;
};

/* The fields of /proc/self/status the child printed (tabs made spaces). */
static void parse_status(const char *out, struct status *st)
{
	char line[256];
	const char *p = out;

	memset(st, 0, sizeof(*st));
	st->nnp = -1;
	while (*p) {
		size_t n = strcspn(p, "\n");
		char *v;

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		p += n + (p[n] == '\n');
		for (char *t = line; *t; t++)
			if (*t == '\t')
				*t = ' ';
		if (!(v = strchr(line, ':')))
			continue;
		*v++ = '\0';
		while (*v == ' ')
			v++;
		for (char *e = v + strlen(v); e > v && e[-1] == ' '; )
			*--e = '\0';
#define FIELD(name, dst) if (!strcmp(line, name)) snprintf(dst, sizeof(dst), "%s", v)
		FIELD("Uid", st->uid);
		FIELD("Gid", st->gid);
		FIELD("Groups", st->groups);
		FIELD("CapInh", st->inh);
		FIELD("CapPrm", st->prm);
		FIELD("CapEff", st->eff);
		FIELD("CapBnd", st->bnd);
		FIELD("CapAmb", st->amb);
#undef FIELD
		if (!strcmp(line, "NoNewPrivs"))
			st->nnp = atoi(v);
	}
}

#define NOCAPS "0000000000000000"

/* The parent holds more than a child may get: a supplementary group, a
 * capability in its inheritable and ambient sets (root's bounding,
 * permitted and effective sets are full already). Undone by
 * parent_plain. */
static void parent_rich(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	gid_t g = 4242;

	assert_int_equal(setgroups(1, &g), 0);
	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	d[0].inheritable |= 1u << CAP_NET_RAW;
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
	assert_int_equal(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0), 0);
}

static void parent_plain(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	d[0].inheritable = d[1].inheritable = 0;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
	assert_int_equal(setgroups(0, NULL), 0);
}

static void status_as(struct probe_exec_cred cred, struct status *st)
{
	const char *argv[] = { "cat", "/proc/self/status", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	ctx_init(&c);
	c.cred = cred;
	parent_rich();
	start(&c, argv, -1, 5000 * MS, 65536);
	parent_plain();
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	if (!r->exited || r->status != 0)
		fail_msg("cat /proc/self/status: %s (exit %d)", r->error, r->status);
	parse_status(r->out, st);
	ctx_fini(&c);
}

/* uid and gid as Uid:/Gid: show them, no supplementary group, nothing in
 * any capability set, no new privileges */
static void assert_bare(const struct status *st, const char *uid, const char *gid)
{
	assert_string_equal(st->uid, uid);
	assert_string_equal(st->gid, gid);
	assert_string_equal(st->groups, "");
	assert_string_equal(st->inh, NOCAPS);
	assert_string_equal(st->prm, NOCAPS);
	assert_string_equal(st->eff, NOCAPS);
	assert_string_equal(st->bnd, NOCAPS);
	assert_string_equal(st->amb, NOCAPS);
	assert_int_equal(st->nnp, 1);
}

static void probe_exec_start__unpriv__user_group_no_caps_no_new_privs(void **state)
{
	struct status st;

	(void)state;
	/* the hook's and a probe's kind: nobody, group 4343 (as the hook gets
	 * group nicstall), not the parent's groups, nothing in any set */
	status_as((struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = 65534, .gid = 4343 }, &st);
	assert_bare(&st, "65534 65534 65534 65534", "4343 4343 4343 4343");
}

static void probe_exec_start__root_nocaps__uid0_no_caps_no_new_privs(void **state)
{
	struct status st;

	(void)state;
	/* Onload's tools: uid 0 (the driver's test), no capability at all, and
	 * an exec cannot give root's full sets back (empty bounding set, no
	 * new privileges) */
	status_as((struct probe_exec_cred){ .priv = PROBE_EXEC_ROOT_NOCAPS, .uid = 1, .gid = 1 }, &st);
	assert_bare(&st, "0 0 0 0", "0 0 0 0");
}

/* Run argv with cred, wait for it; its result stays in c (ctx_fini). */
static const struct probe_exec_result *run_as(struct ctx *c, struct probe_exec_cred cred,
					      const char *const *argv)
{
	ctx_init(c);
	c->cred = cred;
	start(c, argv, -1, 10000 * MS, 1 << 20);
	ctx_run(c, 10000 * MS);
	return probe_exec_result(c->p);
}

/* The value columns of a /proc/PID/limits line "Max NAME  soft  hard  unit". */
static void limit_of(const char *out, const char *name, char *val, size_t len)
{
	const char *l = strstr(out, name);
	unsigned long long soft, hard;
	char s[32], h[32];

	val[0] = 0;
	assert_non_null(l);
	l += strlen(name);
	assert_int_equal(sscanf(l, "%31s %31s", s, h), 2);
	if (sscanf(s, "%llu", &soft) == 1 && sscanf(h, "%llu", &hard) == 1)
		snprintf(val, len, "%llu %llu", soft, hard);
	else
		snprintf(val, len, "%s %s", s, h);
}

static void assert_limit(const char *out, const char *name, const char *want)
{
	char v[64];

	limit_of(out, name, v, sizeof(v));
	if (strcmp(v, want))
		fail_msg("%s: \"%s\", not \"%s\"", name, v, want);
}

static void probe_exec_start__limits__in_every_child(void **state)
{
	const char *argv[] = { "cat", "/proc/self/limits", "/proc/self/oom_score_adj", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	/* the hook's and probes' kind: data, address space, files, no core */
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = 65534,
						 .gid = 65534, .data_max = 64 << 20,
						 .nofile_max = 256 }, argv);
	assert_true(r->exited && r->status == 0);
	assert_limit(r->out, "Max data size", "67108864 67108864");
	assert_limit(r->out, "Max address space", "268435456 268435456");
	assert_limit(r->out, "Max open files", "256 256");
	assert_limit(r->out, "Max core file size", "0 0");
	assert_non_null(strstr(r->out, "\n1000\n"));    /* oom_score_adj */
	ctx_fini(&c);
	/* Onload's tools: the defaults, and no address-space limit (they map
	 * stacks); probe_user = root: limited all the same */
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_ROOT_NOCAPS }, argv);
	assert_true(r->exited && r->status == 0);
	assert_limit(r->out, "Max data size", "268435456 268435456");
	assert_limit(r->out, "Max address space", "unlimited unlimited");
	assert_limit(r->out, "Max open files", "1024 1024");
	ctx_fini(&c);
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_DAEMON }, argv);
	assert_limit(r->out, "Max address space", "unlimited unlimited");
	assert_limit(r->out, "Max data size", "268435456 268435456");
	assert_limit(r->out, "Max core file size", "0 0");
	ctx_fini(&c);
}

static void probe_exec_start__allocates_beyond_limit__fails_alone(void **state)
{
	/* 200 MB of string in a child allowed 64 MiB: the allocation fails
	 * in the child, the parent (this test) goes on */
	const char *argv[] = { "awk", "BEGIN { s = \"x\"; while (length(s) < 200000000) "
			       "s = s s; print length(s) }", NULL };
	const char *small[] = { "awk", "BEGIN { s = \"x\"; while (length(s) < 2000000) "
				"s = s s; print length(s) }", NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = 65534,
						 .gid = 65534, .data_max = 64 << 20 }, argv);
	assert_false(r->exited && r->status == 0);
	assert_null(strstr(r->out, "268435456"));
	ctx_fini(&c);
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = 65534,
						 .gid = 65534, .data_max = 64 << 20 }, small);
	assert_true(r->exited && r->status == 0);
	assert_non_null(strstr(r->out, "2097152"));
	ctx_fini(&c);
}

/* Onload's tools are uid 0: the daemon's directories and its socket are out
 * of their view, empty and read-only; the daemon's own view is untouched. */
static void probe_exec_start__root_nocaps__hidden_paths_empty_readonly(void **state)
{
	char dir[] = "/tmp/test_probe_hide.XXXXXX", state_dir[64], keep[96], sock[96],
	     script[1024];
	const char *hide[] = { sock, state_dir, "/nonexistent/nicstall-test", NULL };
	const char *argv[] = { "sh", "-c", script, NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const struct probe_exec_result *r;
	struct ctx c;
	int sfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(keep, sizeof(keep), "%s/bundle", state_dir);
	snprintf(sock, sizeof(sock), "%s/ctl.sock", dir);
	assert_int_equal(mkdir(state_dir, 0755), 0);
	assert_int_equal(close(open(keep, O_CREAT | O_WRONLY, 0644)), 0);
	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(sfd, 1), 0);
	snprintf(script, sizeof(script),
		 "ls -A %s; touch %s/planted && echo PLANTED; rm -f %s && echo DELETED; "
		 "[ -S %s ] && echo SOCKET; echo > %s && echo WROTE-SOCK; echo end",
		 state_dir, state_dir, keep, sock, sock);
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_ROOT_NOCAPS, .hide = hide },
		   argv);
	if (!r->exited)
		fail_msg("%s", r->error);
	assert_non_null(strstr(r->out, "end"));
	assert_null(strstr(r->out, "bundle"));
	assert_null(strstr(r->out, "PLANTED"));
	assert_null(strstr(r->out, "SOCKET"));
	assert_null(strstr(r->out, "WROTE-SOCK"));
	ctx_fini(&c);
	/* the daemon's view: still there, nothing planted */
	assert_int_equal(access(keep, F_OK), 0);
	assert_int_equal(access(state_dir, F_OK), 0);
	{
		char planted[128];

		snprintf(planted, sizeof(planted), "%s/planted", state_dir);
		assert_int_equal(access(planted, F_OK), -1);
	}
	close(sfd);
	unlink(sock);
	unlink(keep);
	rmdir(state_dir);
	rmdir(dir);
}

/* A path that cannot be covered ends the child before its exec, and the
 * error names it: the tool never runs with the daemon's paths in view. */
static void probe_exec_start__hide_fails__not_run_error_names_path(void **state)
{
	char dir[] = "/tmp/test_probe_hide.XXXXXX", loop[64], mark[64];
	const char *hide[] = { loop, NULL };
	const char *argv[] = { "touch", mark, NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(loop, sizeof(loop), "%s/loop", dir);
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	assert_int_equal(symlink(loop, loop), 0);       /* stat: ELOOP */
	r = run_as(&c, (struct probe_exec_cred){ .priv = PROBE_EXEC_ROOT_NOCAPS, .hide = hide },
		   argv);
	assert_true(r->priv_failed);
	assert_non_null(strstr(r->error, "hiding the daemon's paths"));
	assert_non_null(strstr(r->error, loop));
	assert_int_equal(access(mark, F_OK), -1);
	ctx_fini(&c);
	unlink(loop);
	rmdir(dir);
}

static void probe_exec_start__daemon__keeps_the_daemons_sets(void **state)
{
	struct status st;

	(void)state;
	/* probe_user = root: the daemon's own uid and sets, on purpose */
	status_as((struct probe_exec_cred){ .priv = PROBE_EXEC_DAEMON }, &st);
	assert_string_equal(st.uid, "0 0 0 0");
	assert_string_not_equal(st.eff, NOCAPS);
	assert_string_not_equal(st.bnd, NOCAPS);
}

static void probe_exec_start__drop_fails__not_run_error_names_step(void **state)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2], saved[2];
	char dir[] = "/tmp/test_probe_priv.XXXXXX", mark[64];
	const char *argv[] = { "touch", mark, NULL };
	const struct probe_exec_result *r;
	struct ctx c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	/* without CAP_SETPCAP the bounding set cannot be dropped: the child
	 * must end there, not run with the set it has */
	assert_int_equal(syscall(SYS_capget, &h, saved), 0);
	memcpy(d, saved, sizeof(d));
	d[0].effective &= ~(1u << CAP_SETPCAP);
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
	ctx_init(&c);
	c.cred = (struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = 65534, .gid = 65534 };
	start(&c, argv, -1, 5000 * MS, 4096);
	assert_int_equal(syscall(SYS_capset, &h, saved), 0);
	ctx_run(&c, 5000 * MS);
	r = probe_exec_result(c.p);
	assert_true(r->priv_failed);
	assert_false(r->exited && r->status == 0);
	assert_non_null(strstr(r->error, "touch: not run: dropping privileges to uid 65534 gid 65534 "
				"failed at PR_CAPBSET_DROP"));
	assert_int_equal(access(mark, F_OK), -1);
	ctx_fini(&c);
	rmdir(dir);
}

static void probe_exec_start__no_cred__refused(void **state)
{
	const char *argv[] = { "true", NULL };
	struct ctx c;
	char err[128] = "";

	(void)state;
	ctx_init(&c);
	assert_null(probe_exec_start(c.l, argv, NULL, -1, 0, 4096, done_cb, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "no privileges chosen"));
	c.cred.priv = 0;
	assert_null(probe_exec_start(c.l, argv, &c.cred, -1, 0, 4096, done_cb, &c, err,
				     sizeof(err)));
	loop_timer_free(c.guard);
	loop_timer_free(c.settle);
	loop_timer_free(c.tick);
	loop_free(c.l);
}

static void probe_exec_split__cases__words(void **state)
{
	(void)state;
	split_ok("onload_stackdump lots", 2, (const char *[]){ "onload_stackdump", "lots" });
	split_ok("  a\t b  ", 2, (const char *[]){ "a", "b" });
	split_ok("a \"b c\" 'd e' f\\ g", 4, (const char *[]){ "a", "b c", "d e", "f g" });
	split_ok("\"a\\\"b\\\\c\\n\"", 1, (const char *[]){ "a\"b\\c\\n" });
	split_ok("'it''s' x", 2, (const char *[]){ "its", "x" });
	split_ok("'a \"b\" \\c'", 1, (const char *[]){ "a \"b\" \\c" });
	split_ok("x '' y", 3, (const char *[]){ "x", "", "y" });
	split_ok("pre\"mid dle\"post", 1, (const char *[]){ "premid dlepost" });
	split_ok("$HOME;rm *", 2, (const char *[]){ "$HOME;rm", "*" });
}

static void probe_exec_split__unbalanced__error_names_column(void **state)
{
	(void)state;
	split_err("a \"b", "double quote opened at column 3");
	split_err("ab 'c d", "single quote opened at column 4");
	split_err("a\\", "trailing backslash at column 2");
	split_err("   ", "empty");
	split_err("", "empty");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_exec_start__echo__exit0_and_output),
		cmocka_unit_test(probe_exec_start__name_in_path_exit3__status3),
		cmocka_unit_test(probe_exec_start__sleeps_forever__timed_out_loop_not_blocked),
		cmocka_unit_test(probe_exec_start__ignores_sigterm__killed_after_grace),
		cmocka_unit_test(probe_exec_start__flooding_output__capped_and_killed),
		cmocka_unit_test(probe_exec_start__missing_command__not_found_from_loop),
		cmocka_unit_test(probe_exec_start__parent_env_and_fds__not_inherited),
		cmocka_unit_test(probe_exec_start__reads_stdin__gets_dev_null),
		cmocka_unit_test(probe_exec_start__background_child_holds_pipe__done_at_exit),
		cmocka_unit_test(probe_exec_start__nsfd__sees_only_that_namespace),
		cmocka_unit_test(probe_exec_start__nsfd_not_a_netns__setup_error),
		cmocka_unit_test(probe_exec_free__running_child__killed_and_reaped),
		cmocka_unit_test(probe_exec_terminate__traps_sigterm__cleans_up_then_reaped),
		cmocka_unit_test(probe_exec_terminate__ignores_sigterm__grace_then_killed),
		cmocka_unit_test(probe_exec_to_json__echo__fields),
		cmocka_unit_test(probe_exec_start__limits__in_every_child),
		cmocka_unit_test(probe_exec_start__allocates_beyond_limit__fails_alone),
		cmocka_unit_test(probe_exec_start__root_nocaps__hidden_paths_empty_readonly),
		cmocka_unit_test(probe_exec_start__hide_fails__not_run_error_names_path),
		cmocka_unit_test(probe_exec_to_json__binary_output__valid_text),
		cmocka_unit_test(probe_exec_start__unpriv__user_group_no_caps_no_new_privs),
		cmocka_unit_test(probe_exec_start__root_nocaps__uid0_no_caps_no_new_privs),
		cmocka_unit_test(probe_exec_start__daemon__keeps_the_daemons_sets),
		cmocka_unit_test(probe_exec_start__drop_fails__not_run_error_names_step),
		cmocka_unit_test(probe_exec_start__no_cred__refused),
		cmocka_unit_test(probe_exec_split__cases__words),
		cmocka_unit_test(probe_exec_split__unbalanced__error_names_column),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
