/* Unit tests for collectors/flows/src_engine.c (the tables of one directory):
 * limits, inotify (renamed in, replaced, directory removed), registration
 * outside the directory, and flow_src_engine_ops through its ops. */
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
#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"

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
		fetest_make_one(f, &t[i], name, 1);
		nsft_close(&t[i], 0);   /* keep the file, drop the mapping */
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(fetest_poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(secs < 5.0);
	memset(&li, 0, sizeof(li));
	assert_int_equal(flow_engine_tables(fe, fetest_list_cb, &li), MANY);
	assert_int_equal(li.problems, MANY - FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(fetest_log_count(f, "more than 1024 tables", NULL), 1);
	/* room frees: waiting tables are read */
	for (i = 0; i < 100; i++)
		unlink(t[i].path);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), FLOW_ENGINE_MAX_TABLES);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), MANY - 100);
	/* one fd per table read, the inotify fd, the epoll set holding it
	 * and the owners' pidfds, one pidfd per owner */
	assert_true(count_fds() <= fds0 + FLOW_ENGINE_MAX_TABLES + 3);
	assert_true(count_fds() >= fds0 + FLOW_ENGINE_MAX_TABLES);
	flow_engine_close(fe);
	assert_int_equal(count_fds(), fds0);
}

static void flow_engine_handle__renamed_in__picked_up(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct pollfd p;

	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 0);
	fetest_make_one(f, &t, "late", 4);
	p.fd = flow_engine_fd(fe);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 1000), 1);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].session, 7);
	assert_string_equal(fetest_obs[0].engine, "late");
	nsft_close(&t, 1);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 0);
	flow_engine_close(fe);
}

static void flow_engine_handle__file_replaced__new_file_read(void **state)
{
	struct fx *f = *state;
	struct nsft_table t1, t2;
	struct nsft_record *r;
	struct flow_engine *fe;

	fetest_make_one(f, &t1, "repl", 4);
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].tx_msgs, 1);
	/* same engine, same pid: same name; renamed over the old one */
	assert_int_equal(nsft_create(&t2, f->dir, "repl", 4), 0);
	assert_string_equal(t1.path, t2.path);
	r = nsft_add(&t2, 55, IPPROTO_TCP, NULL, NULL);
	nsft_on_recv(r, 10, 5);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].session, 55);
	assert_int_equal(fetest_obs[0].rx_msgs, 1);
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 1);
	flow_engine_close(fe);
	nsft_close(&t1, 0);
	nsft_close(&t2, 1);
}

static void flow_engine_poll__dir_removed__recreated_and_watched(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	struct stat st;

	fetest_make_one(f, &t, "gone", 4);
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 1);
	nsft_close(&t, 1);
	assert_int_equal(rmdir(f->dir), 0);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 0);
	assert_int_equal(stat(f->dir, &st), 0);         /* made again */
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(flow_engine_tables(fe, NULL, NULL), 0);
	fetest_make_one(f, &t, "back", 4);
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_string_equal(fetest_obs[0].engine, "back");
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* ---- flow_src_engine_ops ---- */

static struct json_object *table_of(struct json_object *tables, const char *engine)
{
	for (size_t i = 0; i < jx_len(tables); i++) {
		struct json_object *o = json_object_array_get_idx(tables, i);

		if (!strcmp(jx_str(o, "engine") ? jx_str(o, "engine") : "", engine))
			return o;
	}
	return NULL;
}

static void flow_src_engine_ops__tables_in_dir__polled_handled_listed(void **state)
{
	struct fx *f = *state;
	struct flow_src s = { .ops = &flow_src_engine_ops };
	struct flow_src_ctx ctx = { .dir = f->dir };
	struct json_object *st, *tables, *o;
	struct nsft_table t1, t2;
	char bad[160];
	struct pollfd p;
	int fd;

	assert_string_equal(flow_src_engine_ops.name, "engine");
	assert_int_equal(flow_src_engine_ops.kind, FLOW_SRC_ENGINE);
	assert_int_equal(flow_src_engine_ops.host, 1);
	fetest_make_one(f, &t1, "opsa", 4);
	assert_int_equal(s.ops->open(&s, &ctx), 0);
	assert_ptr_equal(s.ops, &flow_src_engine_ops);
	fetest_nobs = 0;
	assert_int_equal(s.ops->poll(&s, fetest_collect, NULL), 1);
	assert_int_equal(fetest_nobs, 1);
	assert_int_equal(fetest_obs[0].src, FLOW_SRC_ENGINE);
	assert_int_equal(fetest_obs[0].session, 7);
	assert_string_equal(fetest_obs[0].engine, "opsa");

	/* a second table and a bad one arrive: the fd says so, handle() takes
	 * them in */
	fetest_make_one(f, &t2, "opsb", 4);
	snprintf(bad, sizeof(bad), "%s/bad%s", f->dir, NSFT_SUFFIX);
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "garbage garbage garbage garbage garbage garbage garbage garbage "
			       "garbage garbage garbage garbage garbage garbage garbage garbage ", 128),
			 128);
	close(fd);
	p.fd = s.ops->fd(&s);
	p.events = POLLIN;
	assert_true(p.fd >= 0);
	assert_int_equal(poll(&p, 1, 1000), 1);
	s.ops->handle(&s);
	fetest_nobs = 0;
	assert_int_equal(s.ops->poll(&s, fetest_collect, NULL), 2);

	/* status: the tables as `nicstallctl status` lists them */
	st = json_object_new_object();
	s.ops->status(&s, st);
	assert_string_equal(jx_str(st, "dir"), f->dir);
	tables = jx_arr(st, "tables");
	assert_int_equal(jx_len(tables), 3);
	o = table_of(tables, "opsa");
	assert_non_null(o);
	assert_string_equal(jx_str(o, "path"), t1.path);
	assert_int_equal(jx_u64(o, "pid"), (uint64_t)getpid());
	assert_int_equal(jx_u64(o, "records"), 1);
	assert_null(jx_get(o, "problem"));
	assert_non_null(table_of(tables, "opsb"));
	o = table_of(tables, "");
	assert_non_null(o);
	assert_string_equal(jx_str(o, "path"), bad);
	assert_int_equal(jx_u64(o, "records"), 0);
	assert_non_null(strstr(jx_str(o, "problem"), "bad magic"));
	json_object_put(st);

	s.ops->close(&s);
	assert_null(s.priv);
	nsft_close(&t1, 1);
	nsft_close(&t2, 1);
}

/* What the source asks of the detector's plan (flowsrc.h next_ns): with
 * no table, nothing (a table that appears is the fd's event, and handle()
 * wakes the detector to read it at once); with one, a poll a refresh from
 * now, since shared memory wakes no one; with none again, nothing. Fails
 * a source that asks a refresh whatever it holds (6.7 polls a second on a
 * host with no engine), and one that leaves a new table for the next
 * poll the others ask for (a second later). */
static void flow_src_engine_ops__no_table__asks_no_poll_and_wakes_for_one(void **state)
{
	struct fx *f = *state;
	struct flow_src s = { .ops = &flow_src_engine_ops };
	struct flow_src_ctx ctx = { .dir = f->dir };
	struct nsft_table t;
	struct pollfd p;

	assert_int_equal(s.ops->open(&s, &ctx), 0);
	s.sched = (struct flow_src_sched){ .now_ns = 5000000000ull, .poll_ns = 50000000ull,
					   .refresh_ns = 150000000ull, .stall_ns = 200000000ull };
	assert_int_equal(s.ops->poll(&s, fetest_collect, NULL), 0);
	assert_true(s.sched.next_ns == FLOW_SRC_NO_NEXT);

	fetest_make_one(f, &t, "woke", 4);
	p.fd = s.ops->fd(&s);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 1000), 1);
	s.wake = 0;
	s.ops->handle(&s);
	assert_int_equal(s.wake, 1);
	fetest_nobs = 0;
	assert_int_equal(s.ops->poll(&s, fetest_collect, NULL), 1);
	assert_true(s.sched.next_ns == 5000000000ull + 150000000ull);

	/* a second table while one is read: no wake, the refresh reads it */
	{
		struct nsft_table t2;

		fetest_make_one(f, &t2, "more", 4);
		assert_int_equal(poll(&p, 1, 1000), 1);
		s.wake = 0;
		s.ops->handle(&s);
		assert_int_equal(s.wake, 0);
		nsft_close(&t2, 1);
	}
	nsft_close(&t, 1);
	assert_int_equal(poll(&p, 1, 1000), 1);
	s.ops->handle(&s);
	fetest_nobs = 0;
	assert_int_equal(s.ops->poll(&s, fetest_collect, NULL), 0);
	assert_true(s.sched.next_ns == FLOW_SRC_NO_NEXT);
	s.ops->close(&s);
}

static void flow_src_engine_ops__dir_cannot_be_made__error_in_err(void **state)
{
	struct flow_src s = { .ops = &flow_src_engine_ops };
	struct flow_src_ctx ctx = { .dir = "/proc/self/no/such/dir" };

	(void)state;
	assert_true(s.ops->open(&s, &ctx) < 0);
	assert_non_null(strstr(s.err, "/proc/self/no/such/dir"));
	assert_null(s.priv);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fetest_setup, fetest_teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(flow_engine_poll__2000_tables__cap_enforced_bounded),
		T(flow_engine_handle__renamed_in__picked_up),
		T(flow_src_engine_ops__no_table__asks_no_poll_and_wakes_for_one),
		T(flow_engine_handle__file_replaced__new_file_read),
		T(flow_engine_poll__dir_removed__recreated_and_watched),
		T(flow_src_engine_ops__tables_in_dir__polled_handled_listed),
		T(flow_src_engine_ops__dir_cannot_be_made__error_in_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
