/* Unit tests: engine thread snapshots from /proc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "probes/probe_threads.h"

/* ---- helper threads ---- */

struct waiter {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int go, ready, stop;
	pid_t tid;
	char name[16];
	int busy;               /* 1: usleep loop instead of a condvar wait */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	prctl(PR_SET_NAME, w->name);
	pthread_mutex_lock(&w->mu);
	w->tid = (pid_t)syscall(SYS_gettid);
	w->ready = 1;
	pthread_cond_broadcast(&w->cv);
	if (w->busy) {
		pthread_mutex_unlock(&w->mu);
		while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
			usleep(100);
		return NULL;
	}
	while (!w->go)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void waiter_start(struct waiter *w, const char *name, int busy)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->busy = busy;
	assert_int_equal(pthread_create(&w->th, NULL, waiter_main, w), 0);
	pthread_mutex_lock(&w->mu);
	while (!w->ready)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	usleep(20000);          /* let it reach its wait */
}

static void waiter_stop(struct waiter *w)
{
	pthread_mutex_lock(&w->mu);
	w->go = 1;
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
}

static const struct probe_thread *by_tid(const struct probe_threads_snap *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	return NULL;
}

static struct json_object *json_thread(struct json_object *o, pid_t tid)
{
	struct json_object *a, *t, *v;

	assert_true(json_object_object_get_ex(o, "threads", &a));
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		t = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(t, "tid", &v) && json_object_get_int(v) == tid)
			return t;
	}
	return NULL;
}

/* ---- tests ---- */

static void probe_threads_snapshot__condvar_waiter__sleeping_in_futex(void **state)
{
	struct probe_threads_snap s;
	const struct probe_thread *t;
	struct waiter w;
	char err[256] = "", exe[512], want[32];
	ssize_t n;

	(void)state;
	waiter_start(&w, "pt_waiter", 0);
	assert_int_equal(probe_threads_snapshot(getpid(), &s, err, sizeof(err)), 0);
	assert_false(s.gone);
	assert_false(s.truncated);
	assert_true(s.n >= 2);
	assert_true(s.end_ns >= s.start_ns);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(s.exe, exe);
	assert_non_null(strstr(s.cmdline, "test_probe_threads"));

	t = by_tid(&s, w.tid);
	assert_non_null(t);
	assert_false(t->gone);
	assert_string_equal(t->comm, "pt_waiter");
	assert_int_equal(t->state, 'S');
	assert_true(t->have & PROBE_THREADS_F_WCHAN);
	assert_true(t->wchan[0] != '\0');
	assert_true(t->have & PROBE_THREADS_F_SYSCALL);
	snprintf(want, sizeof(want), "%d ", SYS_futex);
	if (strncmp(t->syscall, want, strlen(want)))
		fail_msg("syscall '%s' is not futex (%s)", t->syscall, want);
	assert_true(t->have & PROBE_THREADS_F_STATUS);
	assert_true(t->vol_cs >= 1);
	assert_true(t->mono_ns >= s.start_ns && t->mono_ns <= s.end_ns);
	if (geteuid() == 0) {
		assert_true(t->have & PROBE_THREADS_F_STACK);
		assert_non_null(t->stack);
		if (!strstr(t->stack, "futex"))
			fail_msg("stack lacks futex:\n%s", t->stack);
		assert_int_equal(t->unreadable, 0);
	}
	/* the calling thread is running, inside read() of its own file */
	t = by_tid(&s, getpid());
	assert_non_null(t);
	assert_int_equal(t->state, 'R');
	snprintf(want, sizeof(want), "%d ", SYS_read);
	if (strncmp(t->syscall, want, strlen(want)))
		fail_msg("own syscall '%s' is not read (%s)", t->syscall, want);
	probe_threads_free(&s);
	waiter_stop(&w);
}

static void probe_threads_to_json__busy_and_blocked__switch_rates(void **state)
{
	struct probe_threads_snap a, b;
	struct waiter busy, blocked;
	struct json_object *o, *t, *v, *first;
	char err[256] = "";
	double rate;

	(void)state;
	waiter_start(&busy, "pt_busy", 1);
	waiter_start(&blocked, "pt_blocked", 0);
	assert_int_equal(probe_threads_snapshot(getpid(), &a, err, sizeof(err)), 0);
	usleep(200000);
	assert_int_equal(probe_threads_snapshot(getpid(), &b, err, sizeof(err)), 0);
	o = json_object_new_object();
	assert_int_equal(probe_threads_to_json(&a, &b, o), 0);

	assert_true(json_object_object_get_ex(o, "interval_ns", &v));
	assert_true(json_object_get_int64(v) >= 190000000);
	t = json_thread(o, busy.tid);
	assert_non_null(t);
	assert_true(json_object_object_get_ex(t, "comm", &v));
	assert_string_equal(json_object_get_string(v), "pt_busy");
	assert_true(json_object_object_get_ex(t, "voluntary_switches_per_s", &v));
	rate = json_object_get_double(v);
	if (rate < 100.0)
		fail_msg("busy thread voluntary switch rate %.1f/s", rate);
	assert_true(json_object_object_get_ex(t, "first", &first));
	assert_true(json_object_object_get_ex(first, "voluntary_ctxt_switches", &v));
	assert_true(json_object_object_get_ex(t, "second", &v));

	t = json_thread(o, blocked.tid);
	assert_non_null(t);
	assert_true(json_object_object_get_ex(t, "voluntary_switches_per_s", &v));
	assert_true(json_object_get_double(v) < 1.0);   /* asleep: no switches */
	assert_true(json_object_object_get_ex(t, "first", &first));
	assert_true(json_object_object_get_ex(first, "state", &v));
	assert_string_equal(json_object_get_string(v), "S");
	assert_true(json_object_object_get_ex(first, "wchan", &v));
	if (geteuid() == 0) {
		assert_true(json_object_object_get_ex(first, "stack", &v));
		assert_true(json_object_is_type(v, json_type_array));
		assert_true(json_object_array_length(v) >= 1);
	}
	json_object_put(o);

	/* one snapshot only: readings without rates */
	o = json_object_new_object();
	assert_int_equal(probe_threads_to_json(&a, NULL, o), 0);
	t = json_thread(o, busy.tid);
	assert_non_null(t);
	assert_true(json_object_object_get_ex(t, "first", &v));
	assert_false(json_object_object_get_ex(t, "second", &v));
	assert_false(json_object_object_get_ex(t, "voluntary_switches_per_s", &v));
	json_object_put(o);
	probe_threads_free(&a);
	probe_threads_free(&b);
	waiter_stop(&busy);
	waiter_stop(&blocked);
}

static void probe_threads_snapshot__hostile_comm__parsed_by_last_paren(void **state)
{
	struct probe_threads_snap s;
	struct waiter w1, w2;
	const struct probe_thread *t;
	char err[256] = "";

	(void)state;
	waiter_start(&w1, "x) S (y", 0);
	waiter_start(&w2, "a\nb) R (1 2", 0);
	assert_int_equal(probe_threads_snapshot(getpid(), &s, err, sizeof(err)), 0);
	t = by_tid(&s, w1.tid);
	assert_non_null(t);
	assert_string_equal(t->comm, "x) S (y");
	assert_int_equal(t->state, 'S');
	assert_true(t->have & PROBE_THREADS_F_STATUS);
	t = by_tid(&s, w2.tid);
	assert_non_null(t);
	assert_string_equal(t->comm, "a?b) R (1 2");       /* newline neutralised */
	assert_int_equal(t->state, 'S');
	assert_true(t->utime_ns < 10000000000ull);       /* not a shifted field */
	probe_threads_free(&s);
	waiter_stop(&w1);
	waiter_stop(&w2);
}

static void probe_threads_snapshot__process_exited__gone_not_error(void **state)
{
	struct probe_threads_snap s;
	char err[256] = "";
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* zombie: listed but exited */
	for (int i = 0; i < 200; i++) {
		siginfo_t si = { 0 };

		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) == 0 && si.si_pid)
			break;
		usleep(5000);
	}
	assert_int_equal(probe_threads_snapshot(pid, &s, err, sizeof(err)), 0);
	assert_true(s.gone);
	probe_threads_free(&s);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* reaped: nothing there at all */
	assert_int_equal(probe_threads_snapshot(pid, &s, err, sizeof(err)), 0);
	assert_true(s.gone);
	assert_int_equal(s.n, 0);
	probe_threads_free(&s);
	assert_int_equal(probe_threads_snapshot(0, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid pid"));
}

static void *spin_thread(void *arg)
{
	(void)arg;
	for (;;)
		usleep(50);
	return NULL;
}

/* Snapshots taken again and again while a process of 9 threads exits: each
 * one succeeds, whatever went away under it. The loop runs until the exit
 * is seen, so the snapshots straddle it however loaded the machine is (a
 * fixed count of them could all end before the child ran at all). */
static void probe_threads_snapshot__exits_midway__partial_and_clean(void **state)
{
	char err[256] = "", path[64], b[64];
	int raced = 0, alive_seen = 0, all_readable;
	int fd;

	(void)state;
	/* root reads every task file, a stack included, unless a container
	 * or lockdown says otherwise: then "unreadable" is no bug here */
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)gettid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	all_readable = !geteuid() && fd >= 0 && read(fd, b, sizeof(b)) >= 0;
	if (fd >= 0)
		close(fd);
	for (int round = 0; round < 30; round++) {
		pid_t pid = fork();
		struct probe_threads_snap s;
		struct json_object *o;
		int exited = 0, alive = 0;

		assert_true(pid >= 0);
		if (pid == 0) {
			pthread_t th;

			for (int i = 0; i < 8; i++)
				pthread_create(&th, NULL, spin_thread, NULL);
			usleep(200 + (unsigned)round * 150);
			_exit(0);
		}
		for (int k = 0; k < 100000 && exited < 2; k++) {
			siginfo_t si = { 0 };

			/* one more snapshot after the exit was seen */
			if (exited || (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) == 0 &&
				       si.si_pid))
				exited++;
			assert_int_equal(probe_threads_snapshot(pid, &s, err, sizeof(err)), 0);
			o = json_object_new_object();
			assert_int_equal(probe_threads_to_json(&s, NULL, o), 0);
			json_object_put(o);
			/* as root nothing is unreadable: what failed had gone */
			for (size_t i = 0; all_readable && i < s.n; i++)
				assert_int_equal(s.t[i].unreadable, 0);
			assert_true(!all_readable || !s.unreadable);
			if (!exited) {
				int gone = s.gone;

				for (size_t i = 0; i < s.n; i++)
					gone |= s.t[i].gone;
				raced += gone;
				alive += !gone && s.n > 0;
			} else if (exited == 2) {
				assert_true(s.gone);
			}
			probe_threads_free(&s);
		}
		assert_int_equal(exited, 2);
		alive_seen += alive > 0;
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	}
	/* most rounds read the child whole before it went */
	assert_true(alive_seen > 0);
	print_message("snapshots that met a thread or the process going: %d\n", raced);
}

static char **g_argv;

/* Child mode: overwrite our whole argv area, NUL terminator included, the
 * way setproctitle() does, so /proc/PID/cmdline runs on into the
 * environment. Then wait to be killed. */
static void setproctitle_child(void)
{
	char *start = g_argv[0], *end = g_argv[0];

	for (int i = 0; g_argv[i]; i++)
		end = g_argv[i] + strlen(g_argv[i]);
	memset(start, 'A', (size_t)(end - start) + 1);
	for (;;)
		pause();
}

static int read_raw_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

static void probe_threads_to_json__child_with_secret_env__no_secret(void **state)
{
	char *const cargv[] = { "test_probe_threads", "--setproctitle-child", NULL };
	char *const cenv[] = { "SECRET=hunter2", "OTHER=x", NULL };
	struct probe_threads_snap a, b;
	struct json_object *o;
	char err[256] = "", raw[4096] = "";
	const char *txt;
	int leaks = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execve("/proc/self/exe", cargv, cenv);
		_exit(127);
	}
	/* The leak must exist for the test to mean anything. */
	for (int i = 0; i < 200 && !leaks; i++) {
		if (read_raw_cmdline(pid, raw, sizeof(raw)) == 0 && strstr(raw, "hunter2"))
			leaks = 1;
		else
			usleep(10000);
	}
	assert_true(leaks);
	assert_int_equal(probe_threads_snapshot(pid, &a, err, sizeof(err)), 0);
	usleep(20000);
	assert_int_equal(probe_threads_snapshot(pid, &b, err, sizeof(err)), 0);
	o = json_object_new_object();
	assert_int_equal(probe_threads_to_json(&a, &b, o), 0);
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (strstr(txt, "hunter2") || strstr(txt, "SECRET"))
		fail_msg("secret in snapshot JSON: %s", txt);
	assert_null(strstr(txt, "environ"));
	assert_non_null(strstr(a.cmdline, "AAAA"));
	assert_int_equal(a.n, 1);
	json_object_put(o);
	probe_threads_free(&a);
	probe_threads_free(&b);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void probe_threads_snapshot__unprivileged__unreadable_recorded(void **state)
{
	int p[2];
	unsigned res[3] = { 0 };
	pid_t target, pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	/* a root process of ours, looked at by an unprivileged one */
	target = fork();
	assert_true(target >= 0);
	if (target == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct probe_threads_snap s;
		char err[256];
		unsigned out[3] = { 0 };

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		if (probe_threads_snapshot(target, &s, err, sizeof(err)) == 0 && s.n > 0) {
			out[0] = s.t[0].unreadable;
			out[1] = s.unreadable;
			out[2] = (unsigned)s.n | (s.t[0].state ? 1u << 31 : 0);
		}
		if (write(p[1], out, sizeof(out)) != sizeof(out))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], res, sizeof(res)), sizeof(res));
	close(p[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	kill(target, SIGKILL);
	assert_int_equal(waitpid(target, NULL, 0), target);
	assert_int_equal(res[2] & 0x7fffffffu, 1);      /* its one thread listed */
	assert_true(res[2] & (1u << 31));               /* stat still readable */
	assert_true(res[0] & PROBE_THREADS_F_STACK);
	assert_true(res[0] & PROBE_THREADS_F_SYSCALL);
	assert_true(res[1] & PROBE_THREADS_F_EXE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_threads_snapshot__condvar_waiter__sleeping_in_futex),
		cmocka_unit_test(probe_threads_to_json__busy_and_blocked__switch_rates),
		cmocka_unit_test(probe_threads_snapshot__hostile_comm__parsed_by_last_paren),
		cmocka_unit_test(probe_threads_snapshot__process_exited__gone_not_error),
		cmocka_unit_test(probe_threads_snapshot__exits_midway__partial_and_clean),
		cmocka_unit_test(probe_threads_to_json__child_with_secret_env__no_secret),
		cmocka_unit_test(probe_threads_snapshot__unprivileged__unreadable_recorded),
	};

	g_argv = argv;
	if (argc > 1 && !strcmp(argv[1], "--setproctitle-child"))
		setproctitle_child();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
