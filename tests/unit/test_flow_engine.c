/* Unit tests for collectors/flow_engine.c and include/nicstall/flowtab.h:
 * tables written with the header's helpers in a mkdtemp directory, hostile
 * variants of them, and the inotify paths. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nicstall/flowtab.h>

#include "collectors/flow_engine.h"
#include "lib/log.h"

struct fx {
	char dir[64];
	char logpath[96];
	int saved_stderr;
};

#define MAXOBS 4096
static struct flow_obs obs[MAXOBS];
static int nobs;

static void collect(const struct flow_obs *o, void *arg)
{
	(void)arg;
	if (nobs < MAXOBS)
		obs[nobs] = *o;
	nobs++;
}

static int poll_all(struct flow_engine *fe)
{
	int n;

	nobs = 0;
	n = flow_engine_poll(fe, collect, NULL);
	assert_int_equal(n, nobs);
	return n;
}

static const struct flow_obs *find_session(uint64_t id)
{
	int i;

	for (i = 0; i < nobs && i < MAXOBS; i++)
		if (obs[i].session == id)
			return &obs[i];
	return NULL;
}

/* Listing: remember the problem of one path. */
struct listing {
	const char *path;
	char problem[256];
	int found, problems;
	unsigned records;
	int pid;
	char engine[32];
};

static void list_cb(const char *path, const char *engine, int pid, unsigned records,
		    const char *problem, void *arg)
{
	struct listing *l = arg;

	if (problem)
		l->problems++;
	if (l->path && strcmp(path, l->path) == 0) {
		l->found = 1;
		l->records = records;
		l->pid = pid;
		snprintf(l->engine, sizeof(l->engine), "%s", engine);
		snprintf(l->problem, sizeof(l->problem), "%s", problem ? problem : "");
	}
}

static struct listing listing_of(struct flow_engine *fe, const char *path)
{
	struct listing l;

	memset(&l, 0, sizeof(l));
	l.path = path;
	flow_engine_tables(fe, list_cb, &l);
	return l;
}

/* Count lines of the captured log that contain both strings. */
static int log_count(const struct fx *f, const char *a, const char *b)
{
	char line[4096];
	FILE *fp;
	int n = 0;

	fflush(stderr);
	fp = fopen(f->logpath, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, a) && (!b || strstr(line, b)))
			n++;
	fclose(fp);
	return n;
}

static int rm_cb(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_flow_engine.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->logpath, sizeof(f->logpath), "%s.log", f->dir);
	fflush(stderr);
	f->saved_stderr = dup(2);
	fd = open(f->logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || f->saved_stderr < 0)
		return -1;
	dup2(fd, 2);
	close(fd);
	log_init("test", 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	fflush(stderr);
	dup2(f->saved_stderr, 2);
	close(f->saved_stderr);
	nftw(f->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	unlink(f->logpath);
	free(f);
	return 0;
}

static struct flow_engine *fe_open(const struct fx *f)
{
	char err[256];
	struct flow_engine *fe = flow_engine_open(f->dir, err, sizeof(err));

	if (!fe)
		fail_msg("flow_engine_open: %s", err);
	return fe;
}

static void sa4(struct sockaddr_in *s, const char *ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &s->sin_addr), 1);
}

static void sa6(struct sockaddr_in6 *s, const char *ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, ip, &s->sin6_addr), 1);
}

/* A table with one IPv4 session, id 7, one send of 100 bytes. */
static struct nsft_record *make_one(const struct fx *f, struct nsft_table *t,
				    const char *engine, uint32_t cap)
{
	struct sockaddr_in l, r;
	struct nsft_record *rec;

	assert_int_equal(nsft_create(t, f->dir, engine, cap), 0);
	sa4(&l, "10.0.0.1", 5000);
	sa4(&r, "10.0.0.2", 6000);
	rec = nsft_add(t, 7, IPPROTO_UDP, (struct sockaddr *)&l, (struct sockaddr *)&r);
	assert_non_null(rec);
	nsft_on_send(rec, 100, 1000);
	return rec;
}

/* ---- tests ------------------------------------------------------------------ */

static void nsft_layout__v1__documented_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct nsft_header), 128);
	assert_int_equal(sizeof(struct nsft_record), 256);
	assert_int_equal(offsetof(struct nsft_record, unread), 120);
	assert_int_equal(offsetof(struct nsft_record, reserved), 144);
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
	sa4(&l4, "192.168.1.10", 40000);
	sa4(&r4, "192.168.1.20", 7000);
	sa6(&l6, "fd00::1", 40001);
	sa6(&r6, "fd00::2", 7001);
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

	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 2);
	o = find_session(0x1122334455667788ull);
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

	o = find_session(2);
	assert_non_null(o);
	assert_int_equal(o->key.proto, IPPROTO_UDP);
	assert_memory_equal(&o->key.saddr, &l6.sin6_addr, 16);
	assert_memory_equal(&o->key.daddr, &r6.sin6_addr, 16);
	assert_int_equal(o->key.dport, htons(7001));
	assert_int_equal(o->rx_msgs, 1);
	assert_int_equal(o->tx_msgs, 0);

	li = listing_of(fe, t.path);
	assert_true(li.found);
	assert_int_equal(li.records, 2);
	assert_int_equal(li.pid, getpid());
	assert_string_equal(li.engine, "good");
	assert_string_equal(li.problem, "");

	/* a removed session is no longer reported; its slot is reused */
	nsft_remove(&t, a);
	assert_int_equal(poll_all(fe), 1);
	assert_null(find_session(0x1122334455667788ull));
	assert_ptr_equal(nsft_add(&t, 3, IPPROTO_TCP, NULL, NULL), a);
	assert_int_equal(poll_all(fe), 2);
	assert_non_null(find_session(3));
	assert_int_equal(find_session(3)->tx_msgs, 0);
	assert_int_equal(log_count(f, "flow table", NULL), 0);

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

	a = make_one(f, &t, "odd", 4);
	b = nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL);
	assert_non_null(b);
	fe = fe_open(f);
	nsft_begin(a);          /* writer in the middle of an update */
	a->tx_msgs = 99;
	assert_int_equal(poll_all(fe), 1);
	assert_non_null(find_session(8));
	assert_null(find_session(7));
	li = listing_of(fe, t.path);
	assert_non_null(strstr(li.problem, "changing while read"));
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(log_count(f, t.path, "changing while read"), 1);
	nsft_end(a);
	assert_int_equal(poll_all(fe), 2);
	assert_int_equal(find_session(7)->tx_msgs, 99);
	li = listing_of(fe, t.path);
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

	make_one(f, &t, engine, 4);
	corrupt(&t);
	fe = fe_open(f);
	for (i = 0; i < 3; i++)
		assert_int_equal(poll_all(fe), 0);
	li = listing_of(fe, t.path);
	assert_true(li.found);
	assert_int_equal(li.records, 0);
	assert_non_null(strstr(li.problem, what));
	assert_int_equal(log_count(f, t.path, what), 1);
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

	make_one(f, &t, "fixed", 4);
	t.hdr->version = 9;
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(poll_all(fe), 0);
	t.hdr->version = NSFT_VERSION;     /* the file changes: read again */
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(log_count(f, t.path, "layout version 9"), 1);
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
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 4);
	assert_int_equal(poll_all(fe), 4);
	li = listing_of(fe, t.path);
	assert_non_null(strstr(li.problem, "exceeds capacity 4"));
	assert_int_equal(log_count(f, t.path, "exceeds capacity"), 1);
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

	make_one(f, &t, "trunc", 64);
	memcpy(path, t.path, sizeof(path));
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 1);
	nsft_close(&t, 0);      /* the writer may not touch it past the new end */
	/* cut inside record 0: the header reads, the records do not */
	assert_int_equal(truncate(path, 200), 0);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(poll_all(fe), 0);
	li = listing_of(fe, path);
	assert_true(li.found);
	assert_non_null(strstr(li.problem, "truncated"));
	assert_int_equal(log_count(f, path, "truncated"), 1);
	/* cut to a few bytes: not even a header */
	assert_int_equal(truncate(path, 5), 0);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(poll_all(fe), 0);
	li = listing_of(fe, path);
	assert_non_null(strstr(li.problem, "smaller than a table header"));
	assert_int_equal(log_count(f, path, "smaller than a table header"), 1);
	assert_int_equal(log_count(f, path, "truncated"), 1);
	flow_engine_close(fe);
	unlink(path);
}

static void flow_engine_poll__owner_dead__dropped_once(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct listing li;
	int p2c[2], c2p[2], st;
	char path[4200], c;
	pid_t pid;

	fe = fe_open(f);
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
	snprintf(path, sizeof(path), "%s/child.%d.flows", f->dir, (int)pid);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].pid, pid);
	assert_int_equal(write(p2c[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(poll_all(fe), 0);
	li = listing_of(fe, path);
	assert_true(li.found);
	assert_non_null(strstr(li.problem, "is gone"));
	assert_int_equal(log_count(f, path, "is gone"), 1);
	flow_engine_close(fe);
	/* a table of a dead owner found at start-up: dropped at once */
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(log_count(f, path, "is gone"), 2);
	flow_engine_close(fe);
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

static int count_fds(void)
{
	char p[64];
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n += access(p, F_OK) == 0;
	}
	return n;
}

#define MANY 2000
static void flow_engine_poll__2000_tables__cap_enforced_bounded(void **state)
{
	struct fx *f = *state;
	static struct nsft_table t[MANY];
	struct flow_engine *fe;
	struct listing li;
	struct timespec a, b;
	char name[32];
	double secs;
	int i, fds0;

	fds0 = count_fds();
	for (i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		make_one(f, &t[i], name, 1);
		nsft_close(&t[i], 0);   /* keep the file, drop the mapping */
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(secs < 5.0);
	memset(&li, 0, sizeof(li));
	assert_int_equal(flow_engine_tables(fe, list_cb, &li), MANY);
	assert_int_equal(li.problems, MANY - FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(log_count(f, "more than 1024 tables", NULL), 1);
	/* room frees: waiting tables are read */
	for (i = 0; i < 100; i++)
		unlink(t[i].path);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), MANY - 100);
	/* one fd per table read, one inotify fd, one pidfd per owner */
	assert_true(count_fds() <= fds0 + FLOW_ENGINE_MAX_TABLES + 2);
	assert_true(count_fds() >= fds0 + FLOW_ENGINE_MAX_TABLES);
	flow_engine_close(fe);
	assert_int_equal(count_fds(), fds0);
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

	make_one(f, &t, "flip", 4);
	memset(&fl1, 0, sizeof(fl1));
	memset(&fl2, 0, sizeof(fl2));
	fl1.r = nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL);
	fl1.data = 1;
	fl2.r = &t.rec[0];      /* session 7: seq flips, data constant */
	assert_non_null(fl1.r);
	fe = fe_open(f);
	assert_int_equal(pthread_create(&th1, NULL, flip_thread, &fl1), 0);
	assert_int_equal(pthread_create(&th2, NULL, flip_thread, &fl2), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < 500; i++) {
		poll_all(fe);
		o = find_session(8);
		if (o) {
			seen++;
			assert_int_equal(o->tx_msgs, o->rx_msgs);
		}
		o = find_session(7);
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
	assert_int_equal(poll_all(fe), 2);   /* quiet again: both read */
	assert_int_equal(find_session(8)->tx_msgs, find_session(8)->rx_msgs);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

static void flow_engine_handle__renamed_in__picked_up(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct pollfd p;

	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 0);
	make_one(f, &t, "late", 4);
	p.fd = flow_engine_fd(fe);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 1000), 1);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].session, 7);
	assert_string_equal(obs[0].engine, "late");
	nsft_close(&t, 1);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 0);
	flow_engine_close(fe);
}

static void flow_engine_handle__file_replaced__new_file_read(void **state)
{
	struct fx *f = *state;
	struct nsft_table t1, t2;
	struct nsft_record *r;
	struct flow_engine *fe;

	make_one(f, &t1, "repl", 4);
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].tx_msgs, 1);
	/* same engine, same pid: same name; renamed over the old one */
	assert_int_equal(nsft_create(&t2, f->dir, "repl", 4), 0);
	assert_string_equal(t1.path, t2.path);
	r = nsft_add(&t2, 55, IPPROTO_TCP, NULL, NULL);
	nsft_on_recv(r, 10, 5);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].session, 55);
	assert_int_equal(obs[0].rx_msgs, 1);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 1);
	flow_engine_close(fe);
	nsft_close(&t1, 0);
	nsft_close(&t2, 1);
}

static void flow_engine_register__outside_dir__read_and_replaced(void **state)
{
	struct fx *f = *state;
	struct nsft_table t1, t2;
	struct flow_engine *fe;
	char sub[128], path[160], err[256];

	snprintf(sub, sizeof(sub), "%s/elsewhere", f->dir);
	snprintf(path, sizeof(path), "%s/reg.flows", sub);
	make_one(f, &t1, "reg", 4);       /* made in f->dir, moved out below */
	fe = fe_open(f);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(rename(t1.path, path), 0);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(flow_engine_register(fe, path, err, sizeof(err)), 0);
	assert_int_equal(flow_engine_register(fe, path, err, sizeof(err)), -EEXIST);
	assert_int_equal(poll_all(fe), 1);
	/* replaced under the registered name: noticed by stat */
	assert_int_equal(nsft_create(&t2, sub, "reg2", 4), 0);
	assert_non_null(nsft_add(&t2, 77, IPPROTO_UDP, NULL, NULL));
	assert_int_equal(rename(t2.path, path), 0);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].session, 77);
	/* removed: nothing read, nothing crashes */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 1);
	assert_int_equal(flow_engine_register(fe, "", err, sizeof(err)), -EINVAL);
	/* a registered file that is not a table: tracked, reported */
	snprintf(path, sizeof(path), "%s/junk", sub);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(flow_engine_register(fe, path, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "not a regular file"));
	flow_engine_close(fe);
	nsft_close(&t1, 0);
	nsft_close(&t2, 0);
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
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 4);
	assert_int_equal(log_count(f, "fifo.1.flows", "not a regular file"), 1);
	assert_int_equal(log_count(f, "link.1.flows", "cannot open"), 1);
	flow_engine_close(fe);
}

static void flow_engine_poll__bad_family__record_skipped(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct nsft_record *r, *g;
	struct flow_engine *fe;

	r = make_one(f, &t, "fam", 4);
	g = nsft_add(&t, 9, IPPROTO_UDP, NULL, NULL);
	assert_non_null(g);
	nsft_begin(r);
	r->family = 5;
	nsft_end(r);
	nsft_begin(g);
	g->last_rx_ns = nsft_now_ns() + 3600ull * 1000000000ull;
	nsft_end(g);
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(obs[0].session, 9);
	assert_int_equal(obs[0].last_rx_ns, 0);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(log_count(f, t.path, "address family 5"), 1);
	assert_int_equal(log_count(f, t.path, "ahead of CLOCK_MONOTONIC"), 1);
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
	fe = fe_open(f);
	snprintf(p, sizeof(p), "%s/inplace.%d.flows", f->dir, (int)getpid());
	fd = open(p, O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 128 + 4 * 256), 0);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 0);
	make_one(f, &t, "src", 4);      /* copy a real header into it */
	assert_int_equal(pwrite(fd, t.hdr, 128 + 256, 0), 128 + 256);
	close(fd);
	nsft_close(&t, 1);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 1);
	assert_int_equal(log_count(f, "inplace", NULL), 0);
	flow_engine_close(fe);
}

static void flow_engine_poll__dir_removed__recreated_and_watched(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct stat st;

	make_one(f, &t, "gone", 4);
	fe = fe_open(f);
	assert_int_equal(poll_all(fe), 1);
	nsft_close(&t, 1);
	assert_int_equal(rmdir(f->dir), 0);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 0);
	assert_int_equal(stat(f->dir, &st), 0);         /* made again */
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 0);
	make_one(f, &t, "back", 4);
	flow_engine_handle(fe);
	assert_int_equal(poll_all(fe), 1);
	assert_string_equal(obs[0].engine, "back");
	flow_engine_close(fe);
	nsft_close(&t, 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nsft_layout__v1__documented_sizes),
		cmocka_unit_test_setup_teardown(nsft_create__bad_arguments__einval, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__good_table__exact_values, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__odd_seq__record_skipped_until_stable, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_magic__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_version__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__capacity_beyond_file__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_record_size__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__capacity_out_of_range__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_pid__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__engine_not_terminated__reported_once_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_header_fixed__table_read_again, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__count_beyond_capacity__clamped_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__truncated_after_open__no_crash_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__owner_dead__dropped_once, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__2000_tables__cap_enforced_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__seq_moving__never_torn_never_hangs, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_handle__renamed_in__picked_up, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_handle__file_replaced__new_file_read, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_register__outside_dir__read_and_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__hostile_files__no_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__bad_family__record_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__written_in_place__read_when_ready, setup, teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__dir_removed__recreated_and_watched, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
