/* Unit tests for collectors/flows/flow_engine_read.c (one engine flow table read
 * as hostile input) and include/nicstall/flowtab.h: tables written with
 * the header's helpers in a mkdtemp directory, and hostile variants of
 * them. The directory, inotify and the ops table: test_flow_engine_dir.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nicstall/flowtab.h>

#include "collectors/flows/flow_engine.h"
#include "fetest.h"
#include "lib/log.h"

static void nsft_layout__v1__documented_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct nsft_header), 128);
	assert_int_equal(sizeof(struct nsft_record), 256);
	assert_int_equal(offsetof(struct nsft_record, unread), 120);
	assert_int_equal(offsetof(struct nsft_record, retry_due_ns), 144);
	assert_int_equal(offsetof(struct nsft_record, reserved), 152);
}

static void flow_engine_poll__good_table__exact_values(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct sockaddr_in l4, r4;
	struct sockaddr_in6 l6, r6;
	struct nsft_record *a, *b;
	const struct flow_obs *o;
	struct flow_engine *fe;
	struct in6_addr want;
	struct listing li;
	uint64_t now = nsft_now_ns();

	assert_int_equal(nsft_create(&t, f->dir, "good", 8), 0);
	fetest_sa4(&l4, "192.168.1.10", 40000);
	fetest_sa4(&r4, "192.168.1.20", 7000);
	fetest_sa6(&l6, "fd00::1", 40001);
	fetest_sa6(&r6, "fd00::2", 7001);
	a = nsft_add(&t, 0x1122334455667788ull, IPPROTO_TCP, (struct sockaddr *)&l4,
		     (struct sockaddr *)&r4);
	b = nsft_add(&t, 2, IPPROTO_UDP, (struct sockaddr *)&l6, (struct sockaddr *)&r6);
	assert_non_null(a);
	assert_non_null(b);
	nsft_on_send(a, 300, now - 5000);
	nsft_on_send(a, 200, now - 4000);
	nsft_on_recv(a, 64, now - 3000);
	nsft_set_held(a, 11, 22, 33);
	nsft_on_recv(b, 9, now - 1000);

	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 2);
	o = fetest_find_session(0x1122334455667788ull);
	assert_non_null(o);
	assert_int_equal(o->src, FLOW_SRC_ENGINE);
	assert_int_equal(o->key.proto, IPPROTO_TCP);
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.168.1.10", &want), 1);
	assert_memory_equal(&o->key.saddr, &want, 16);
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.168.1.20", &want), 1);
	assert_memory_equal(&o->key.daddr, &want, 16);
	assert_int_equal(o->key.sport, htons(40000));
	assert_int_equal(o->key.dport, htons(7000));
	assert_int_equal(o->tx_msgs, 2);
	assert_int_equal(o->tx_bytes, 500);
	assert_int_equal(o->rx_msgs, 1);
	assert_int_equal(o->rx_bytes, 64);
	assert_int_equal(o->last_tx_ns, now - 4000);
	assert_int_equal(o->last_rx_ns, now - 3000);
	assert_int_equal(o->unsent, 11);
	assert_int_equal(o->unread, 22);
	assert_int_equal(o->staged, 33);
	assert_int_equal(o->pid, getpid());
	assert_string_equal(o->engine, "good");
	assert_true(o->state & NSFT_ST_OPEN);

	o = fetest_find_session(2);
	assert_non_null(o);
	assert_int_equal(o->key.proto, IPPROTO_UDP);
	assert_memory_equal(&o->key.saddr, &l6.sin6_addr, 16);
	assert_memory_equal(&o->key.daddr, &r6.sin6_addr, 16);
	assert_int_equal(o->key.dport, htons(7001));
	assert_int_equal(o->rx_msgs, 1);
	assert_int_equal(o->tx_msgs, 0);

	li = fetest_listing_of(fe, t.path);
	assert_true(li.found);
	assert_int_equal(li.records, 2);
	assert_int_equal(li.pid, getpid());
	assert_string_equal(li.engine, "good");
	assert_string_equal(li.problem, "");

	/* a removed session is no longer reported; its slot is reused */
	nsft_remove(&t, a);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_null(fetest_find_session(0x1122334455667788ull));
	assert_ptr_equal(nsft_add(&t, 3, IPPROTO_TCP, NULL, NULL), a);
	assert_int_equal(fetest_poll_all(fe), 2);
	assert_non_null(fetest_find_session(3));
	assert_int_equal(fetest_find_session(3)->tx_msgs, 0);
	/* nothing wrong with the table; its records' local ends are not this
	 * process's sockets: one note for the table, not one per poll */
	assert_int_equal(fetest_log_count(f, "flow table", NULL),
			 fetest_log_count(f, "flow table", "not verified by the kernel"));
	assert_int_equal(fetest_log_count(f, "flow table", "not verified by the kernel"), 1);

	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_poll__odd_seq__record_skipped_until_stable(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct nsft_record *a, *b;
	struct flow_engine *fe;
	struct listing li;

	a = fetest_make_one(f, &t, "odd", 4);
	b = nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL);
	assert_non_null(b);
	fe = fetest_open(f);
	nsft_begin(a);          /* writer in the middle of an update */
	a->tx_msgs = 99;
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_non_null(fetest_find_session(8));
	assert_null(fetest_find_session(7));
	li = fetest_listing_of(fe, t.path);
	assert_non_null(strstr(li.problem, "changing while read"));
	/* session 8, idle and unchanged, is not emitted again (the
	 * detector keeps it); 7 is still odd */
	assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, t.path);
	assert_non_null(strstr(li.problem, "changing while read"));
	assert_int_equal(fetest_log_count(f, t.path, "changing while read"), 1);
	nsft_end(a);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_find_session(7)->tx_msgs, 99);
	li = fetest_listing_of(fe, t.path);
	assert_string_equal(li.problem, "");
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* One malformed kind: corrupt() changes the header of a fresh table. */
static void check_malformed(struct fx *f, const char *engine,
			    void (*corrupt)(struct nsft_table *), const char *what)
{
	struct nsft_table t;
	struct flow_engine *fe;
	struct listing li;
	int i;

	fetest_make_one(f, &t, engine, 4);
	corrupt(&t);
	fe = fetest_open(f);
	for (i = 0; i < 3; i++)
		assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, t.path);
	assert_true(li.found);
	assert_int_equal(li.records, 0);
	assert_non_null(strstr(li.problem, what));
	assert_int_equal(fetest_log_count(f, t.path, what), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void bad_magic(struct nsft_table *t) { memcpy(t->hdr->magic, "NSFLOWT0", 8); }
static void bad_version(struct nsft_table *t) { t->hdr->version = 2; }
static void big_capacity(struct nsft_table *t) { t->hdr->capacity = 1000; }
static void bad_recsize(struct nsft_table *t) { t->hdr->record_size = 12; }
static void zero_capacity(struct nsft_table *t) { t->hdr->capacity = 0; }
static void huge_capacity(struct nsft_table *t) { t->hdr->capacity = 0xffffffffu; }
static void bad_pid(struct nsft_table *t) { t->hdr->owner_pid = 0; }
static void unterminated(struct nsft_table *t) { memset(t->hdr->engine, 'x', sizeof(t->hdr->engine)); }

static void flow_engine_poll__bad_magic__reported_once_ignored(void **state)
{
	check_malformed(*state, "m1", bad_magic, "bad magic");
}

static void flow_engine_poll__bad_version__reported_once_ignored(void **state)
{
	check_malformed(*state, "m2", bad_version, "layout version 2");
}

static void flow_engine_poll__capacity_beyond_file__reported_once_ignored(void **state)
{
	check_malformed(*state, "m3", big_capacity, "the file has");
}

static void flow_engine_poll__bad_record_size__reported_once_ignored(void **state)
{
	check_malformed(*state, "m4", bad_recsize, "record size 12");
}

static void flow_engine_poll__capacity_out_of_range__reported_once_ignored(void **state)
{
	check_malformed(*state, "m5", zero_capacity, "capacity 0 out of range");
	check_malformed(*state, "m6", huge_capacity, "out of range");
}

static void flow_engine_poll__bad_pid__reported_once_ignored(void **state)
{
	check_malformed(*state, "m7", bad_pid, "owner pid 0");
}

static void flow_engine_poll__engine_not_terminated__reported_once_ignored(void **state)
{
	check_malformed(*state, "m8", unterminated, "not NUL-terminated");
}

static void flow_engine_poll__bad_header_fixed__table_read_again(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;

	fetest_make_one(f, &t, "fixed", 4);
	t.hdr->version = 9;
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	t.hdr->version = NSFT_VERSION;     /* the file changes: read again */
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_log_count(f, t.path, "layout version 9"), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_poll__count_beyond_capacity__clamped_reported(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct listing li;
	uint32_t i;

	assert_int_equal(nsft_create(&t, f->dir, "count", 4), 0);
	for (i = 0; i < 4; i++)
		assert_non_null(nsft_add(&t, 100 + i, IPPROTO_UDP, NULL, NULL));
	t.hdr->count = 1000000;
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 4);
	assert_int_equal(fetest_poll_all(fe), 0);       /* idle, unchanged */
	li = fetest_listing_of(fe, t.path);
	assert_int_equal(li.records, 4);
	assert_non_null(strstr(li.problem, "exceeds capacity 4"));
	assert_int_equal(fetest_log_count(f, t.path, "exceeds capacity"), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_poll__truncated_after_open__no_crash_reported(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct listing li;
	char path[sizeof(t.path)];

	fetest_make_one(f, &t, "trunc", 64);
	memcpy(path, t.path, sizeof(path));
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 1);
	nsft_close(&t, 0);      /* the writer may not touch it past the new end */
	/* cut inside record 0: the header reads, the records do not */
	assert_int_equal(truncate(path, 200), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, path);
	assert_true(li.found);
	assert_non_null(strstr(li.problem, "truncated"));
	assert_int_equal(fetest_log_count(f, path, "truncated"), 1);
	/* cut to a few bytes: not even a header */
	assert_int_equal(truncate(path, 5), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, path);
	assert_non_null(strstr(li.problem, "smaller than a table header"));
	assert_int_equal(fetest_log_count(f, path, "smaller than a table header"), 1);
	assert_int_equal(fetest_log_count(f, path, "truncated"), 1);
	flow_engine_close(fe);
	unlink(path);
}

/* A child engine that publishes the table "child" with one session and
 * exits, without removing it, when told (a byte on *tell); its table's
 * path in path. Returns its pid once the table is there. */
static pid_t owner_child(const struct fx *f, int *tell, char *path, size_t len)
{
	int p2c[2], c2p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct nsft_table t;

		if (nsft_create(&t, f->dir, "child", 4) < 0 ||
		    !nsft_add(&t, 1, IPPROTO_TCP, NULL, NULL))
			_exit(1);
		if (write(c2p[1], "r", 1) != 1 || read(p2c[0], &c, 1) != 1)
			_exit(1);
		_exit(0);       /* dies without removing its table */
	}
	assert_int_equal(read(c2p[0], &c, 1), 1);
	close(p2c[0]);
	close(c2p[0]);
	close(c2p[1]);
	*tell = p2c[1];
	snprintf(path, len, "%s/child.%d.flows", f->dir, (int)pid);
	return pid;
}

static void flow_engine_poll__owner_dead__dropped_once(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct pollfd pfd;
	struct listing li;
	char path[4200];
	int tell, st;
	pid_t pid;

	fe = fetest_open(f);
	pid = owner_child(f, &tell, path, sizeof(path));
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].pid, pid);
	/* the engine's fd, quiet while the owner lives, turns readable at
	 * its death (no poll asks), and the loop's call takes the event */
	pfd.fd = flow_engine_fd(fe);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(write(tell, "x", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	flow_engine_handle(fe);
	assert_int_equal(poll(&pfd, 1, 0), 0);  /* one event, not a busy loop */
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, path);
	assert_true(li.found);
	assert_non_null(strstr(li.problem, "is gone"));
	assert_int_equal(fetest_log_count(f, path, "is gone"), 1);
	flow_engine_close(fe);
	/* a table of a dead owner found at start-up: dropped at once */
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_log_count(f, path, "is gone"), 2);
	flow_engine_close(fe);
	close(tell);
}

/* An owner that exits while its table stays held (a child it forked
 * shares the mapping, so no close of the file tells the directory watch):
 * the engine's fd turns readable by the owner's pidfd alone, once, and the
 * next poll drops the table. A pidfd left out of the epoll set fails the
 * first wait; one watched level-triggered leaves the fd readable, and the
 * daemon's loop spinning, until the next poll closes it. */
static void flow_engine_handle__owner_exits_table_held__one_event(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct pollfd pfd;
	struct listing li;
	int p2c[2], c2p[2], p2g[2], st;
	char path[4200], c;
	pid_t pid, gpid = 0;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	fe = fetest_open(f);
	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	assert_int_equal(pipe2(p2g, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct nsft_table t;
		pid_t g;

		if (nsft_create(&t, f->dir, "held", 4) < 0 ||
		    !nsft_add(&t, 1, IPPROTO_TCP, NULL, NULL))
			_exit(1);
		g = fork();     /* shares the table's mapping and fd */
		if (g < 0)
			_exit(1);
		if (g == 0) {
			close(p2g[1]);
			while (read(p2g[0], &c, 1) > 0)
				;       /* until the test closes its end */
			_exit(0);
		}
		if (write(c2p[1], &g, sizeof(g)) != sizeof(g) || read(p2c[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(c2p[0], &gpid, sizeof(gpid)), sizeof(gpid));
	snprintf(path, sizeof(path), "%s/held.%d.flows", f->dir, (int)pid);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].pid, pid);
	pfd.fd = flow_engine_fd(fe);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(write(p2c[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	flow_engine_handle(fe);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	li = fetest_listing_of(fe, path);
	assert_true(li.found);
	assert_non_null(strstr(li.problem, "is gone"));
	flow_engine_close(fe);
	close(p2g[1]);          /* the grandchild's end */
	assert_int_equal(waitpid(gpid, &st, 0), gpid);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	close(p2g[0]);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
	unlink(path);
}

/* An owner freed (its table deleted) while a fork of the daemon holds a
 * copy of its pidfd (probe_exec's child, before close_range and execve):
 * close() alone leaves the pidfd in the epoll set, and the owner's exit
 * would then hand flow_engine_handle() the freed owner (a write into freed
 * memory, or a live owner reusing the chunk marked dead). The freed
 * owner's exit must not reach the set at all. */
static void flow_engine_handle__owner_freed_while_forked__exit_not_seen(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct pollfd pfd;
	char path[4200];
	int tell, st;
	pid_t pid, forkee;

	fe = fetest_open(f);
	pid = owner_child(f, &tell, path, sizeof(path));
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	forkee = fork();        /* a probe's fork: holds every fd a moment */
	assert_true(forkee >= 0);
	if (forkee == 0) {
		alarm(10);      /* gone whatever the test does */
		pause();
		_exit(0);
	}
	assert_int_equal(unlink(path), 0);      /* the table goes ... */
	pfd.fd = flow_engine_fd(fe);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	flow_engine_handle(fe);                 /* ... its owner is freed */
	assert_int_equal(write(tell, "x", 1), 1);       /* ... and exits */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(poll(&pfd, 1, 300), 0);
	flow_engine_handle(fe);
	kill(forkee, SIGKILL);
	waitpid(forkee, &st, 0);
	flow_engine_close(fe);
	close(tell);
}

struct flipper {
	struct nsft_record *r;
	int stop;
	int data;       /* 1: write tx/rx in each update; 0: only flip seq */
};

static void *flip_thread(void *arg)
{
	struct flipper *fl = arg;
	uint64_t k = 1;
	volatile unsigned spin;

	while (!__atomic_load_n(&fl->stop, __ATOMIC_RELAXED)) {
		nsft_begin(fl->r);
		if (fl->data) {
			__atomic_store_n(&fl->r->tx_msgs, k, __ATOMIC_RELAXED);
			for (spin = 0; spin < 50; spin++)
				;
			__atomic_store_n(&fl->r->rx_msgs, k, __ATOMIC_RELAXED);
		}
		nsft_end(fl->r);
		k++;
	}
	return NULL;
}

static void flow_engine_poll__seq_moving__never_torn_never_hangs(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flipper fl1, fl2;
	struct flow_engine *fe;
	pthread_t th1, th2;
	struct timespec a, b;
	const struct flow_obs *o;
	int i, seen = 0;
	double secs;

	fetest_make_one(f, &t, "flip", 4);
	memset(&fl1, 0, sizeof(fl1));
	memset(&fl2, 0, sizeof(fl2));
	fl1.r = nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL);
	fl1.data = 1;
	fl2.r = &t.rec[0];      /* session 7: seq flips, data constant */
	assert_non_null(fl1.r);
	fe = fetest_open(f);
	assert_int_equal(pthread_create(&th1, NULL, flip_thread, &fl1), 0);
	assert_int_equal(pthread_create(&th2, NULL, flip_thread, &fl2), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < 500; i++) {
		fetest_poll_all(fe);
		o = fetest_find_session(8);
		if (o) {
			seen++;
			assert_int_equal(o->tx_msgs, o->rx_msgs);
		}
		o = fetest_find_session(7);
		if (o)
			assert_int_equal(o->tx_msgs, 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	__atomic_store_n(&fl1.stop, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&fl2.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th1, NULL);
	pthread_join(th2, NULL);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(secs < 10.0);
	print_message("moving record emitted in %d of 500 polls, %.3f s\n", seen, secs);
	/* quiet again: at the next full read (FE_ALL_EVERY_NS) both are read
	 * and emitted (before it, session 8 is emitted only if its last
	 * stable copy is older than its last write: idle, it is not) */
	usleep(1100 * 1000);
	assert_int_equal(fetest_poll_all(fe), 2);
	assert_int_equal(fetest_find_session(8)->tx_msgs, fetest_find_session(8)->rx_msgs);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_poll__hostile_files__no_crash(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	char p[200];
	int fd;

	/* a FIFO (open must not block), a directory, a symlink, an empty file */
	snprintf(p, sizeof(p), "%s/fifo.1.flows", f->dir);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/dir.1.flows", f->dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/link.1.flows", f->dir);
	assert_int_equal(symlink("/dev/zero", p), 0);
	snprintf(p, sizeof(p), "%s/empty.1.flows", f->dir);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	/* a valid header with records claiming odd families */
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 4);
	assert_int_equal(fetest_log_count(f, "fifo.1.flows", "not a regular file"), 1);
	assert_int_equal(fetest_log_count(f, "link.1.flows", "cannot open"), 1);
	flow_engine_close(fe);
}

static void flow_engine_poll__bad_family__record_skipped(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct nsft_record *r, *g;
	struct flow_engine *fe;

	r = fetest_make_one(f, &t, "fam", 4);
	g = nsft_add(&t, 9, IPPROTO_UDP, NULL, NULL);
	assert_non_null(g);
	nsft_begin(r);
	r->family = 5;
	nsft_end(r);
	nsft_begin(g);
	g->last_rx_ns = nsft_now_ns() + 3600ull * 1000000000ull;
	nsft_end(g);
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].session, 9);
	assert_int_equal(fetest_obs[0].last_rx_ns, 0);
	usleep(1100 * 1000);    /* every record read again (FE_ALL_EVERY_NS) */
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_log_count(f, t.path, "address family 5"), 1);
	assert_int_equal(fetest_log_count(f, t.path, "ahead of CLOCK_MONOTONIC"), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_poll__written_in_place__read_when_ready(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	char p[200];
	int fd;

	/* created in place, header written later (no rename) */
	fe = fetest_open(f);
	snprintf(p, sizeof(p), "%s/inplace.%d.flows", f->dir, (int)getpid());
	fd = open(p, O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 128 + 4 * 256), 0);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 0);
	fetest_make_one(f, &t, "src", 4);      /* copy a real header into it */
	assert_int_equal(pwrite(fd, t.hdr, 128 + 256, 0), 128 + 256);
	close(fd);
	nsft_close(&t, 1);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	/* no problem logged; only that the pid is not believed (this process
	 * neither maps the file nor holds it open) */
	assert_int_equal(fetest_log_count(f, "inplace", NULL),
			 fetest_log_count(f, "inplace", "unverified"));
	assert_int_equal(fetest_obs[0].pid, 0);
	flow_engine_close(fe);
}

static void nsft_create__bad_arguments__einval(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;

	assert_int_equal(nsft_create(&t, f->dir, "a/b", 4), -EINVAL);
	assert_int_equal(nsft_create(&t, f->dir, ".hidden", 4), -EINVAL);
	assert_int_equal(nsft_create(&t, f->dir, "", 4), -EINVAL);
	assert_int_equal(nsft_create(&t, f->dir, "ok", 0), -EINVAL);
	assert_int_equal(nsft_create(&t, f->dir, "ok", NSFT_MAX_CAPACITY + 1), -EINVAL);
	assert_int_equal(nsft_create(&t, f->dir, "ok", 1), 0);
	assert_non_null(nsft_add(&t, 1, 6, NULL, NULL));
	assert_null(nsft_add(&t, 2, 6, NULL, NULL));
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(nsft_close(&t, 1), 0);
}

/* A record is verified when its owner holds a kernel socket on its local
 * end (any remote end when the socket is unconnected); a record naming a
 * port the owner does not hold is not (issue 34, finding 2). */
static void flow_engine_poll__record_local_end__verified_only_if_held(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct sockaddr_in l, r, n;
	socklen_t sl = sizeof(l);
	const struct flow_obs *o;
	struct flow_engine *fe;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	fetest_sa4(&l, "127.0.0.1", 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&l, sizeof(l)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&l, &sl), 0);
	fetest_sa4(&r, "10.9.0.9", 40000);
	n = l;
	n.sin_port = htons((uint16_t)(ntohs(l.sin_port) ^ 1));   /* not held */
	assert_int_equal(nsft_create(&t, f->dir, "held", 8), 0);
	assert_non_null(nsft_add(&t, 1, IPPROTO_UDP, (struct sockaddr *)&l, (struct sockaddr *)&r));
	assert_non_null(nsft_add(&t, 2, IPPROTO_UDP, (struct sockaddr *)&n, (struct sockaddr *)&r));
	assert_non_null(nsft_add(&t, 3, IPPROTO_TCP, (struct sockaddr *)&l, (struct sockaddr *)&r));
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 3);
	o = fetest_find_session(1);
	assert_non_null(o);
	assert_int_equal(o->claim, FLOW_CLAIM_VERIFIED);
	o = fetest_find_session(2);
	assert_non_null(o);
	assert_int_equal(o->claim, FLOW_CLAIM_UNVERIFIED);
	o = fetest_find_session(3);             /* a UDP socket is no TCP one */
	assert_non_null(o);
	assert_int_equal(o->claim, FLOW_CLAIM_UNVERIFIED);
	assert_int_equal(fetest_log_count(f, "flow table", "not verified by the kernel"), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
	close(fd);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fetest_setup, fetest_teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nsft_layout__v1__documented_sizes),
		T(nsft_create__bad_arguments__einval),
		T(flow_engine_poll__good_table__exact_values),
		T(flow_engine_poll__record_local_end__verified_only_if_held),
		T(flow_engine_poll__odd_seq__record_skipped_until_stable),
		T(flow_engine_poll__bad_magic__reported_once_ignored),
		T(flow_engine_poll__bad_version__reported_once_ignored),
		T(flow_engine_poll__capacity_beyond_file__reported_once_ignored),
		T(flow_engine_poll__bad_record_size__reported_once_ignored),
		T(flow_engine_poll__capacity_out_of_range__reported_once_ignored),
		T(flow_engine_poll__bad_pid__reported_once_ignored),
		T(flow_engine_poll__engine_not_terminated__reported_once_ignored),
		T(flow_engine_poll__bad_header_fixed__table_read_again),
		T(flow_engine_poll__count_beyond_capacity__clamped_reported),
		T(flow_engine_poll__truncated_after_open__no_crash_reported),
		T(flow_engine_poll__owner_dead__dropped_once),
		T(flow_engine_handle__owner_exits_table_held__one_event),
		T(flow_engine_handle__owner_freed_while_forked__exit_not_seen),
		T(flow_engine_poll__seq_moving__never_torn_never_hangs),
		T(flow_engine_poll__hostile_files__no_crash),
		T(flow_engine_poll__bad_family__record_skipped),
		T(flow_engine_poll__written_in_place__read_when_ready),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
