/* Unit tests: threadwatch, the engine-thread watch, with its program
 * loaded for real on the scheduler's switch tracepoint (root, kernel BTF;
 * skipped with the reason otherwise). Children stand in for engines:
 *  - seed 001's sender: one thread asleep in futex_wait, woken thousands
 *    of times a second by another thread, for 650 ms while its flow waits;
 *  - a healthy server: one thread asleep in epoll_wait between requests;
 *  - a process that exits mid-poll, a pid reused by another process, and
 *    /proc/kallsyms unreadable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/threads/threadwatch_api.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "twchild.h"

#define MS 1000000ull

static struct threadwatch *tw;
static char skip_why[512];

/* ---- log capture: stderr into a file the test reads ---- */

static char logpath[] = "/tmp/test_threadwatch_log.XXXXXX";
static int saved_err = -1;

static void log_capture(void)
{
	int fd = mkstemp(logpath);

	assert_true(fd >= 0);
	fflush(stderr);
	saved_err = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* What was logged since log_capture (malloc'd). */
static char *log_release(void)
{
	char *buf = calloc(1, 65536);
	int fd;

	fflush(stderr);
	dup2(saved_err, 2);
	close(saved_err);
	fd = open(logpath, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, buf, 65535) >= 0);
	close(fd);
	unlink(logpath);
	strcpy(logpath, "/tmp/test_threadwatch_log.XXXXXX");
	return buf;
}

/* ---- setup ---- */

static int group_setup(void **st)
{
	(void)st;
	log_init("test", 0);
	tw = threadwatch_open(skip_why, sizeof(skip_why));
	return 0;
}

static int group_teardown(void **st)
{
	(void)st;
	threadwatch_close(tw);
	return 0;
}

#define NEED_TW()                                                            \
	do {                                                                 \
		if (!tw) {                                                   \
			print_message("skipped: %s\n", skip_why);            \
			skip();                                              \
		}                                                            \
	} while (0)

struct find { int32_t tid; struct tw_view v; int found; unsigned threads; };

static void find_cb(const struct tw_view *v, void *arg)
{
	struct find *f = arg;

	f->threads++;
	if (v->tid == f->tid) {
		f->v = *v;
		f->found = 1;
	}
}

static void read_now(void)
{
	char err[256] = "";

	if (threadwatch_read(tw, loop_mono_ns(), 20 * MS, err, sizeof(err)) < 0)
		fail_msg("threadwatch_read: %s", err);
}

/* ---- tests ---- */

static void starved_sender__650ms_futex_while_flow_waits__stalled_with_stack(void **st)
{
	int go, tidr;
	pid_t pid;
	int32_t p32, tid = 0;
	uint64_t t0, wait_since, walks0, reused0, walks1, reused1;
	struct find f = { 0 };
	char stack[4096];
	unsigned stalled = 0;

	(void)st;
	NEED_TW();
	pid = start_starved(&go, &tidr, 650);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	assert_int_equal(read(tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	/* a threshold and more of serving (busy-polling) before the send */
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 600 * MS) {
		read_now();
		sleep_ms(50);
	}
	threadwatch_walks(tw, &walks0, &reused0);
	assert_int_equal(write(go, "g", 1), 1);
	t0 = loop_mono_ns();
	wait_since = t0;        /* its flow waits from the send's start */
	/* poll every 50 ms, as the detector does, until threshold + a poll */
	while (loop_mono_ns() - t0 < 560 * MS) {
		sleep_ms(50);
		read_now();
	}
	f.tid = tid;
	stalled = threadwatch_judge(tw, pid, 500 * MS, 50, wait_since, 50 * MS, find_cb, &f);
	assert_true(f.found);
	print_message("sender tid %d: %s, share %.3f (%.3f before), %" PRIu64 " voluntary / %" PRIu64
		      " involuntary switches over %.0f ms\n", (int)tid,
		      tj_verdict_name(f.v.r.verdict), f.v.r.share_pm / 1000.0,
		      f.v.r.before_pm / 1000.0, f.v.r.nvcsw,
		      f.v.r.nivcsw, f.v.r.window_ns / 1e6);
	assert_int_equal(f.v.r.verdict, TJ_ASLEEP);
	assert_true(f.v.r.stalled);
	assert_true(stalled >= 1);
	assert_true(f.v.r.share_pm >= 700);
	/* woken at each of the waker's 100 us sleeps: ~10k/s alone, 1.7k/s
	 * (881 over 513 ms) beside five other sanitized unit programs in a
	 * clean-clone make check; one long sleep would be a switch or two */
	assert_true(f.v.r.nvcsw >= 200);
	/* without a waiting flow it is no stall */
	assert_int_equal(threadwatch_judge(tw, pid, 500 * MS, 50, 0, 50 * MS, NULL, NULL), 0);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	print_message("stack at sleep:\n%s\n", stack);
	assert_non_null(strstr(stack, "futex"));
	/* thousands of sleeps in one place, its stack walked about once a
	 * second (TW_STACK_REUSE_NS), not at each */
	threadwatch_walks(tw, &walks1, &reused1);
	print_message("stacks walked %" PRIu64 ", reused %" PRIu64 "\n", walks1 - walks0,
		      reused1 - reused0);
	assert_true(reused1 - reused0 >= 1000);
	assert_true(walks1 - walks0 < (reused1 - reused0) / 20);
	/* then asleep elsewhere (pause()): that sleep is walked */
	sleep_ms(200);
	read_now();
	memset(&f, 0, sizeof(f));
	f.tid = tid;
	threadwatch_judge(tw, pid, 500 * MS, 50, 0, 50 * MS, find_cb, &f);
	assert_true(f.found);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	print_message("stack at its last sleep:\n%s\n", stack);
	assert_null(strstr(stack, "futex"));
	stop_child(pid);
	close(go);
	close(tidr);
}

/* Up to TW_LIST watched processes are a list the program compares; more
 * are the bitmap. Either way the starved sender's switches are counted,
 * and going from one to the other (12 watched, then 1) loses none of it. */
static void many_watched__bitmap_then_list__switches_counted_both_ways(void **st)
{
	pid_t idle[TW_LIST + 3], pid;
	int32_t pids[TW_LIST + 4], tid = 0;
	int go, tidr;
	struct find f = { 0 };
	uint64_t t0, big;
	unsigned n = 0;

	(void)st;
	NEED_TW();
	for (unsigned i = 0; i < TW_LIST + 3; i++) {
		idle[i] = twchild_fork();
		assert_true(idle[i] >= 0);
		if (!idle[i]) {
			pause();
			_exit(0);
		}
		pids[n++] = idle[i];
	}
	pid = start_starved(&go, &tidr, 1000);
	pids[n++] = pid;
	assert_int_equal(threadwatch_set(tw, pids, n), (int)n);
	assert_int_equal(read(tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	/* polled a while before the send, as the detector does */
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 200 * MS) {
		read_now();
		sleep_ms(50);
	}
	assert_int_equal(write(go, "g", 1), 1);
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 300 * MS) {
		sleep_ms(50);
		read_now();
	}
	f.tid = tid;
	threadwatch_judge(tw, pid, 250 * MS, 50, t0, 50 * MS, find_cb, &f);
	assert_true(f.found);
	big = f.v.r.nvcsw;
	print_message("%u watched (the bitmap): %" PRIu64 " voluntary switches in 300 ms\n", n, big);
	assert_true(big >= 100);
	/* the sender alone: the list */
	assert_int_equal(threadwatch_set(tw, &pids[n - 1], 1), 1);
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 300 * MS) {
		sleep_ms(50);
		read_now();
	}
	memset(&f, 0, sizeof(f));
	f.tid = tid;
	threadwatch_judge(tw, pid, 250 * MS, 50, t0, 50 * MS, find_cb, &f);
	assert_true(f.found);
	print_message("1 watched (the list): %" PRIu64 " voluntary switches in 300 ms\n",
		      f.v.r.nvcsw);
	assert_true(f.v.r.nvcsw >= 100);
	stop_child(pid);
	close(go);
	close(tidr);
	for (unsigned i = 0; i < TW_LIST + 3; i++)
		stop_child(idle[i]);
}

/* The healthy server: asleep in epoll_wait, woken for a request every
 * 100 ms, served at once. */
static void healthy_epoll_sleeper__no_waiting_flow__not_stalled(void **st)
{
	int rq;
	pid_t pid, tid = 0;
	int32_t p32;
	uint64_t t0;
	struct find f = { 0 };
	char stack[4096];

	(void)st;
	NEED_TW();
	pid = start_epoll_server(&rq, &tid);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	read_now();
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 1100 * MS) {
		assert_int_equal(write(rq, "r", 1), 1);
		sleep_ms(50);
		read_now();
		/* its flows: a request now and then, served in microseconds */
		assert_int_equal(threadwatch_judge(tw, pid, 500 * MS, 50, 0, 50 * MS, NULL, NULL),
				 0);
	}
	f.tid = tid;
	threadwatch_judge(tw, pid, 500 * MS, 50, 0, 50 * MS, find_cb, &f);
	assert_true(f.found);
	/* it sleeps most of the time, as it did before: by design */
	assert_int_equal(f.v.r.verdict, TJ_SLEEPER);
	assert_false(f.v.r.stalled);
	/* and even with a flow waiting all along it is no stall */
	assert_int_equal(threadwatch_judge(tw, pid, 500 * MS, 50, t0, 50 * MS, NULL, NULL), 0);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	assert_non_null(strstr(stack, "epoll"));
	stop_child(pid);
	close(rq);
}

/* The thread's entry among threadwatch_evidence()'s (NULL: none). */
static struct json_object *ev_thread(struct json_object *ev, int32_t tid)
{
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		struct json_object *o = json_object_array_get_idx(ev, i), *t;

		if (json_object_object_get_ex(o, "tid", &t) && json_object_get_int(t) == tid)
			return o;
	}
	return NULL;
}

/* Read now; tid's evidence into *ev (the caller puts it), is it told in a
 * system call, or between calls with its last? */
static struct json_object *read_thread(pid_t pid, int32_t tid, struct json_object **ev,
				       int *in_call, int *last)
{
	struct json_object *o, *x;

	read_now();
	*ev = threadwatch_evidence(tw, pid, 0, 0, 500 * MS);
	assert_non_null(*ev);
	o = ev_thread(*ev, tid);
	assert_non_null(o);
	*in_call = json_object_object_get_ex(o, "syscall", &x);
	*last = json_object_object_get_ex(o, "last_syscall", &x);
	return o;
}

/* thread_watch_syscalls: the system call a watched thread is in and since
 * when (the healthy server, in epoll_wait between requests for 300 ms);
 * turned off, nothing of what the programs left is reported. */
static void syscalls_on__the_call_and_since_when__off_none_kept(void **st)
{
	int rq;
	pid_t pid, tid = 0;
	int32_t p32;
	uint64_t t0;
	struct json_object *ev, *o, *x;
	char err[256] = "";
	int in_call, last;

	(void)st;
	NEED_TW();
	if (threadwatch_syscalls(tw, 1, err, sizeof(err)) < 0) {
		print_message("skipped: %s\n", err);
		skip();
	}
	pid = start_epoll_server(&rq, &tid);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	/* a request: it leaves the epoll_wait it was in before the programs
	 * saw it, and enters one they see begin */
	assert_int_equal(write(rq, "r", 1), 1);
	sleep_ms(20);
	t0 = loop_mono_ns();
	sleep_ms(300);
	o = read_thread(pid, tid, &ev, &in_call, &last);
	print_message("%s\n", json_object_to_json_string(o));
	assert_true(in_call);
	assert_true(json_object_object_get_ex(o, "syscall", &x));
	assert_non_null(strstr(json_object_get_string(x), "epoll"));
	assert_true(json_object_object_get_ex(o, "syscall_since_ns", &x));
	assert_true((uint64_t)json_object_get_int64(x) <= t0);
	assert_true(json_object_object_get_ex(o, "syscall_for_ns", &x));
	assert_true(json_object_get_int64(x) >= (int64_t)(300 * MS));
	assert_true(json_object_get_int64(x) < (int64_t)(5000 * MS));
	json_object_put(ev);
	/* off: the map still holds the programs' last words, not reported */
	assert_int_equal(threadwatch_syscalls(tw, 0, err, sizeof(err)), 0);
	read_thread(pid, tid, &ev, &in_call, &last);
	assert_false(in_call);
	assert_false(last);
	json_object_put(ev);
	/* a request while off: it leaves that epoll_wait and enters another
	 * unseen. On again, the entry still holds the first call's start and
	 * the one before's length: neither is reported, nor taken as the
	 * start of the call it ends next */
	assert_int_equal(write(rq, "r", 1), 1);
	sleep_ms(50);
	assert_int_equal(threadwatch_syscalls(tw, 1, err, sizeof(err)), 0);
	sleep_ms(100);
	o = read_thread(pid, tid, &ev, &in_call, &last);
	print_message("on again: %s\n", json_object_to_json_string(o));
	assert_false(in_call);
	assert_false(last);
	json_object_put(ev);
	/* it ends that call: its length unknown, no last call; the next one
	 * is seen whole */
	assert_int_equal(write(rq, "r", 1), 1);
	sleep_ms(50);
	o = read_thread(pid, tid, &ev, &in_call, &last);
	assert_true(in_call);
	assert_true(json_object_object_get_ex(o, "syscall_for_ns", &x));
	assert_true(json_object_get_int64(x) < (int64_t)(100 * MS));
	json_object_put(ev);
	assert_int_equal(threadwatch_syscalls(tw, 0, err, sizeof(err)), 0);
	stop_child(pid);
	close(rq);
}

static void watched_pid_exits_mid_poll__dropped_with_log_line(void **st)
{
	int go, tidr;
	pid_t pid;
	int32_t p32;
	struct json_object *ev, *status;
	char *log;

	(void)st;
	NEED_TW();
	pid = start_starved(&go, &tidr, 300);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	assert_int_equal(write(go, "g", 1), 1);
	sleep_ms(100);
	read_now();
	stop_child(pid);
	log_capture();
	read_now();
	log = log_release();
	assert_non_null(strstr(log, "exited: its threads are no longer watched"));
	free(log);
	/* nothing judged, no evidence, status says why */
	assert_int_equal(threadwatch_judge(tw, pid, 100 * MS, 50, 1, 0, NULL, NULL), 0);
	ev = threadwatch_evidence(tw, pid, 0, 0, 100 * MS);
	assert_null(ev);
	status = json_object_new_object();
	threadwatch_status(tw, status);
	assert_true(json_object_get_int64(json_object_object_get(status, "dropped_exited")) >= 1);
	assert_int_equal(json_object_get_int(json_object_object_get(status, "processes")), 0);
	json_object_put(status);
	close(go);
	close(tidr);
}

static void *short_thread(void *arg)
{
	(void)arg;
	sleep_ms(1);
	return NULL;
}

static void threads_born_and_ending_between_polls__forgotten_never_stalled(void **st)
{
	int go[2];
	pid_t pid;
	int32_t p32;
	uint64_t t0;
	struct json_object *status;
	struct find f = { .tid = -1 };

	(void)st;
	NEED_TW();
	assert_int_equal(pipe(go), 0);
	pid = twchild_fork();
	if (!pid) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		/* 400 threads, each sleeping 1 ms and ending, one at a time */
		for (int i = 0; i < 400; i++) {
			pthread_t t;

			pthread_create(&t, NULL, short_thread, NULL);
			pthread_join(t, NULL);
		}
		pause();
		_exit(0);
	}
	close(go[0]);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	read_now();
	assert_int_equal(write(go[1], "g", 1), 1);
	t0 = loop_mono_ns();
	while (loop_mono_ns() - t0 < 700 * MS) {
		sleep_ms(50);
		read_now();
		/* its flows wait all along: no thread of a few ms is a stall */
		assert_int_equal(threadwatch_judge(tw, pid, 200 * MS, 50, t0, 0, NULL, NULL), 0);
	}
	threadwatch_judge(tw, pid, 200 * MS, 50, t0, 0, find_cb, &f);
	status = json_object_new_object();
	threadwatch_status(tw, status);
	print_message("%u threads of the process left in the map after 400 came and went\n",
		      f.threads);
	/* the kernel forgot each at its last switch (TASK_DEAD) */
	assert_true(f.threads <= 2);
	assert_true(json_object_get_int(json_object_object_get(status, "threads")) <= 2);
	json_object_put(status);
	stop_child(pid);
	close(go[1]);
}

/* Fork until a child gets pid want (ns_last_pid; the host forks too). */
static pid_t fork_as(pid_t want)
{
	for (int i = 0; i < 50; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t pid;

		if (!f)
			return -1;
		fprintf(f, "%d", (int)want - 1);
		fclose(f);
		pid = twchild_fork();
		if (!pid) {
			pause();
			_exit(0);
		}
		if (pid == want)
			return pid;
		stop_child(pid);
	}
	return -1;
}

static void pid_reused__old_process_dropped__new_one_not_watched_for_old_flows(void **st)
{
	pid_t a, b;
	int32_t p32;
	char *log;

	(void)st;
	NEED_TW();
	a = twchild_fork();
	if (!a) {
		pause();
		_exit(0);
	}
	p32 = a;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	sleep_ms(20);
	read_now();
	stop_child(a);
	sleep_ms(10);           /* a later start time, in clock ticks */
	b = fork_as(a);
	if (b < 0) {
		print_message("skipped: pid %d could not be had again\n", (int)a);
		skip();
	}
	log_capture();
	/* the old process's flows still name the pid: the new one, an
	 * unrelated process, is not watched for them */
	assert_int_equal(threadwatch_set(tw, &p32, 1), 0);
	assert_int_equal(threadwatch_set(tw, &p32, 1), 0);
	log = log_release();
	assert_non_null(strstr(log, "reused by another process"));
	assert_null(strstr(strstr(log, "reused") + 1, "reused"));  /* one line */
	free(log);
	assert_int_equal(threadwatch_judge(tw, b, 100 * MS, 50, 1, 0, NULL, NULL), 0);
	/* once no flow names it, a flow of the new process is watched */
	assert_int_equal(threadwatch_set(tw, NULL, 0), 0);
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	assert_int_equal(threadwatch_set(tw, NULL, 0), 0);
	stop_child(b);
}

static uint64_t st_u64(const char *key)
{
	struct json_object *s = json_object_new_object(), *x;
	uint64_t v;

	threadwatch_status(tw, s);
	if (!json_object_object_get_ex(s, key, &x))
		fail_msg("status has no %s", key);
	v = (uint64_t)json_object_get_int64(x);
	json_object_put(s);
	return v;
}

static void *ticker(void *a)
{
	(void)a;
	for (;;)
		usleep(2000);
	return NULL;
}

/* The reads an idle daemon makes at every poll (tpass_run): a live
 * process is asked its exit through its pidfd, not read from /proc, and
 * its known threads are read by key, not by a walk of the whole map
 * (every bucket of 16,384), until the program makes an entry for a new
 * thread; each keyed read still reads the thread anew. */
static void live_process__pidfd_no_proc_reads__known_threads_by_key_until_one_is_new(void **st)
{
	int cmd[2];
	pid_t pid, other;
	int32_t p32, pp[2];
	uint64_t reads0, walks0, keyed0, exited0, nv0;
	struct find f = { 0 };

	(void)st;
	NEED_TW();
	assert_int_equal(pipe(cmd), 0);
	pid = twchild_fork();
	if (!pid) {
		char c;

		close(cmd[1]);
		fcntl(cmd[0], F_SETFL, O_NONBLOCK);
		for (;;) {
			pthread_t t;

			if (read(cmd[0], &c, 1) == 1)
				pthread_create(&t, NULL, ticker, NULL);
			usleep(2000);
		}
	}
	close(cmd[0]);
	p32 = pid;
	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	assert_int_equal(st_u64("processes_by_pidfd"), 1);
	sleep_ms(20);
	read_now();             /* the new process's thread: a walk */
	read_now();             /* (and one more if it was made during it) */
	reads0 = st_u64("liveness_proc_reads");
	walks0 = st_u64("map_walks");
	keyed0 = st_u64("keyed_reads");
	exited0 = st_u64("dropped_exited");
	f.tid = pid;
	threadwatch_judge(tw, pid, 200 * MS, 50, 0, 0, find_cb, &f);
	assert_true(f.found);
	nv0 = f.v.cur.nvcsw;
	for (int i = 0; i < 5; i++) {
		sleep_ms(10);
		read_now();
	}
	print_message("5 reads: %" PRIu64 " walks, %" PRIu64 " by key, %" PRIu64 " /proc reads\n",
		      st_u64("map_walks") - walks0, st_u64("keyed_reads") - keyed0,
		      st_u64("liveness_proc_reads") - reads0);
	assert_int_equal(st_u64("map_walks"), walks0);
	assert_int_equal(st_u64("keyed_reads"), keyed0 + 5);
	assert_int_equal(st_u64("liveness_proc_reads"), reads0);
	memset(&f, 0, sizeof(f));
	f.tid = pid;
	threadwatch_judge(tw, pid, 200 * MS, 50, 0, 0, find_cb, &f);
	assert_true(f.found);
	assert_true(f.v.cur.nvcsw > nv0);       /* read anew, by key */
	assert_int_equal(f.threads, 1);
	/* a thread new to the map: the next read walks and finds it */
	assert_int_equal(write(cmd[1], "t", 1), 1);
	sleep_ms(30);
	read_now();
	assert_int_equal(st_u64("map_walks"), walks0 + 1);
	memset(&f, 0, sizeof(f));
	f.tid = pid;
	threadwatch_judge(tw, pid, 200 * MS, 50, 0, 0, find_cb, &f);
	assert_int_equal(f.threads, 2);
	/* a second process, watched after it */
	other = twchild_fork();
	if (!other) {
		for (;;)
			usleep(2000);
	}
	pp[0] = pid;
	pp[1] = other;
	assert_int_equal(threadwatch_set(tw, pp, 2), 2);
	assert_int_equal(st_u64("processes_by_pidfd"), 2);
	/* the first one's exit, told by its pidfd, then read from /proc
	 * once; the other, moved to its place, is not read */
	stop_child(pid);
	read_now();
	assert_int_equal(st_u64("dropped_exited"), exited0 + 1);
	assert_int_equal(st_u64("liveness_proc_reads"), reads0 + 1);
	assert_int_equal(st_u64("processes_by_pidfd"), 1);
	read_now();
	assert_int_equal(st_u64("liveness_proc_reads"), reads0 + 1);
	assert_int_equal(threadwatch_set(tw, &pp[1], 1), 1);
	stop_child(other);
	read_now();
	assert_int_equal(st_u64("dropped_exited"), exited0 + 2);
	assert_int_equal(st_u64("processes_by_pidfd"), 0);
	close(cmd[1]);
}

/* A starved sender (200 ms) watched, gone to sleep, found in *f. */
static pid_t starved_asleep(int *go, int *tidr, struct find *f)
{
	pid_t pid = start_starved(go, tidr, 200);
	int32_t p32 = pid, tid;

	assert_int_equal(threadwatch_set(tw, &p32, 1), 1);
	assert_int_equal(write(*go, "g", 1), 1);
	assert_int_equal(read(*tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	sleep_ms(50);
	read_now();
	f->tid = tid;
	threadwatch_judge(tw, pid, 500 * MS, 50, 0, 0, find_cb, f);
	assert_true(f->found);
	return pid;
}

static void kallsyms_unreadable__addresses_kept__one_log_line(void **st)
{
	int go, tidr;
	pid_t pid;
	struct find f = { 0 };
	char stack[4096], *log;
	struct json_object *status, *ev;

	(void)st;
	NEED_TW();
	pid = starved_asleep(&go, &tidr, &f);
	threadwatch_set_kallsyms(tw, "/nonexistent/kallsyms", "/proc/modules");
	log_capture();
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	ev = threadwatch_evidence(tw, pid, 0, 0, 500 * MS);
	log = log_release();
	assert_non_null(ev);
	json_object_put(ev);
	assert_true(strncmp(stack, "0xffff", 6) == 0);
	assert_null(strstr(stack, "futex"));
	/* one line, naming the file, however many stacks */
	assert_non_null(strstr(log, "kernel symbols unreadable (/nonexistent/kallsyms"));
	assert_null(strstr(strstr(log, "unreadable") + 1, "unreadable"));
	free(log);
	status = json_object_new_object();
	threadwatch_status(tw, status);
	assert_non_null(strstr(json_object_get_string(json_object_object_get(status,
									     "kernel_symbols")),
			       "/nonexistent/kallsyms"));
	json_object_put(status);
	threadwatch_set_kallsyms(tw, "/proc/kallsyms", "/proc/modules");
	stop_child(pid);
	close(go);
	close(tidr);
}

static uint64_t ksym_reads(void)
{
	struct json_object *status = json_object_new_object();
	uint64_t n;

	threadwatch_status(tw, status);
	n = (uint64_t)json_object_get_int64(json_object_object_get(status, "kernel_symbols_reads"));
	json_object_put(status);
	return n;
}

/* The 5 MB symbol table is read once, not at every stack or incident; a
 * change of the kernel's modules reads it again (their symbols moved). */
static void kallsyms__read_once__again_when_modules_change(void **st)
{
	char dir[] = "/tmp/twksyms.XXXXXX", mods[64], stack[4096], *log;
	int go, tidr;
	pid_t pid;
	struct find f = { 0 };
	struct json_object *ev;
	uint64_t n0;
	FILE *fp;

	(void)st;
	NEED_TW();
	assert_non_null(mkdtemp(dir));
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	fp = fopen(mods, "w");
	assert_non_null(fp);
	fputs("onload 1 0 - Live 0xffffffffc0000000\n", fp);
	fclose(fp);
	pid = starved_asleep(&go, &tidr, &f);
	threadwatch_set_kallsyms(tw, "/proc/kallsyms", mods);
	n0 = ksym_reads();
	for (int i = 0; i < 5; i++) {
		assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
		ev = threadwatch_evidence(tw, pid, 0, 0, 500 * MS);
		json_object_put(ev);
	}
	assert_non_null(strstr(stack, "futex"));
	assert_int_equal(ksym_reads(), n0 + 1);
	/* a process opened /dev/onload: the module's use count moved, its
	 * symbols did not (Onload's count moves with every process that
	 * opens the device: read again at nearly every incident before) */
	fp = fopen(mods, "w");
	assert_non_null(fp);
	fputs("onload 1 7 - Live 0xffffffffc0000000\n", fp);
	fclose(fp);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	assert_int_equal(ksym_reads(), n0 + 1);
	/* a module loaded */
	fp = fopen(mods, "a");
	assert_non_null(fp);
	fputs("sfc 1 0 - Live 0xffffffffc1000000\n", fp);
	fclose(fp);
	log_capture();
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	assert_true(threadwatch_stack(tw, f.v.stack_id, stack, sizeof(stack)) > 0);
	log = log_release();
	assert_int_equal(ksym_reads(), n0 + 2);
	assert_non_null(strstr(log, "kernel modules changed: kernel symbols read again"));
	free(log);
	assert_non_null(strstr(stack, "futex"));
	threadwatch_set_kallsyms(tw, "/proc/kallsyms", "/proc/modules");
	unlink(mods);
	rmdir(dir);
	stop_child(pid);
	close(go);
	close(tidr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(starved_sender__650ms_futex_while_flow_waits__stalled_with_stack),
		cmocka_unit_test(many_watched__bitmap_then_list__switches_counted_both_ways),
		cmocka_unit_test(healthy_epoll_sleeper__no_waiting_flow__not_stalled),
		cmocka_unit_test(syscalls_on__the_call_and_since_when__off_none_kept),
		cmocka_unit_test(watched_pid_exits_mid_poll__dropped_with_log_line),
		cmocka_unit_test(threads_born_and_ending_between_polls__forgotten_never_stalled),
		cmocka_unit_test(pid_reused__old_process_dropped__new_one_not_watched_for_old_flows),
		cmocka_unit_test(live_process__pidfd_no_proc_reads__known_threads_by_key_until_one_is_new),
		cmocka_unit_test(kallsyms_unreadable__addresses_kept__one_log_line),
		cmocka_unit_test(kallsyms__read_once__again_when_modules_change),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
