/* Unit tests for the owner side of engine flow tables (collectors/
 * flow_engine_read.c): the header's owner pid is a claim checked against
 * the process (same uid as the file, the table mapped or open), and read
 * budgets are kept per owner uid. Needs root (chown), else skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nicstall/flowtab.h>

#include "collectors/flows/flow_engine.h"
#include "fetest.h"

/* A table of one open session (id 7) whose header claims pid and whose
 * file belongs to uid. */
static void make_claim(const struct fx *f, const char *engine, pid_t pid, uid_t uid,
		       uint32_t cap, struct nsft_table *t)
{
	fetest_make_one(f, t, engine, cap);
	t->hdr->owner_pid = (uint32_t)pid;
	assert_int_equal(chown(t->path, uid, uid), 0);
}

/* A table claiming pid 1 (init, root) in a file of uid 65534: the old
 * reader took the claim, and pid 1's command line and threads appeared in
 * `incident show` for a group member. */
static void flow_engine_poll__claims_pid_of_another_uid__unverified_no_pid(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct nsft_table t;
	struct listing li;

	if (geteuid() != 0)
		skip();
	make_claim(f, "liar", 1, 65534, 4, &t);
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].session, 7);
	assert_int_equal(fetest_obs[0].pid, 0);         /* nothing of pid 1 */
	assert_int_equal(fetest_obs[0].uid, 65534);     /* charged to its owner */
	assert_true(fetest_obs[0].uid_known);
	li = fetest_listing_of(fe, t.path);
	assert_int_equal(li.pid, 0);
	assert_non_null(strstr(li.pid_note, "owner pid 1 unverified: it runs as uid 0, "
					    "the table belongs to uid 65534"));
	assert_int_equal(fetest_log_count(f, t.path, "unverified"), 1);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_log_count(f, t.path, "unverified"), 1);    /* once */
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* A child of this process's uid: 'n' holds nothing, 'f' holds the table
 * open, 'm' maps it. It waits on the pipe; returns its pid. */
static pid_t child(const char *how, const char *path, int ready[2], int hold[2])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		int fd = -1;

		close(hold[1]);
		if (how[0] != 'n')
			fd = open(path, O_RDONLY);
		if (how[0] == 'm') {
			if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
				_exit(1);
			close(fd);
		}
		if (write(ready[1], "r", 1) != 1 || read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	return pid;
}

static void flow_engine_poll__pid_holds_or_maps_the_table__verified(void **state)
{
	struct fx *f = *state;
	struct nsft_table t[3];
	pid_t pid[3];
	int ready[2], hold[2];
	struct flow_engine *fe;
	const char *how[3] = { "n", "f", "m" }, *eng[3] = { "none", "fd", "map" };
	char c;

	if (geteuid() != 0)
		skip();
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	for (int i = 0; i < 3; i++) {
		uint32_t p32;
		int fd;

		fetest_make_one(f, &t[i], eng[i], 4);
		/* unmapped before the fork: a child inherits its parent's maps */
		nsft_close(&t[i], 0);
		pid[i] = child(how[i], t[i].path, ready, hold);
		assert_int_equal(read(ready[0], &c, 1), 1);
		p32 = (uint32_t)pid[i];
		fd = open(t[i].path, O_WRONLY);
		assert_int_equal(pwrite(fd, &p32, 4, 28), 4);   /* owner_pid */
		close(fd);
	}
	fe = fetest_open(f);
	assert_int_equal(fetest_poll_all(fe), 3);
	for (int i = 0; i < 3; i++) {
		struct listing li = fetest_listing_of(fe, t[i].path);

		if (i == 0) {
			assert_int_equal(li.pid, 0);
			assert_non_null(strstr(li.pid_note, "neither maps nor holds the table open"));
		} else {
			assert_int_equal(li.pid, pid[i]);
			assert_string_equal(li.pid_note, "");
		}
	}
	flow_engine_close(fe);
	assert_int_equal(close(hold[1]), 0);
	for (int i = 0; i < 3; i++) {
		int st;

		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		unlink(t[i].path);
	}
	close(hold[0]);
	close(ready[0]);
	close(ready[1]);
}

/* Full 64 MiB tables of one uid (four of them: the whole 256 MiB per-poll
 * budget, charged in order) no longer keep another uid's table from being
 * read: each owner has its own 64 MiB per poll. */
static void flow_engine_poll__one_owner_floods_read_budget__others_read(void **state)
{
	struct fx *f = *state;
	struct flow_engine *fe;
	struct nsft_table big[4], victim;
	struct listing li;
	char name[24];

	if (geteuid() != 0)
		skip();
	fe = fetest_open(f);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "flood%d", i);
		assert_int_equal(nsft_create(&big[i], f->dir, name, NSFT_MAX_CAPACITY - 1), 0);
		big[i].hdr->count = NSFT_MAX_CAPACITY - 1;  /* every slot "in use" */
		assert_int_equal(chown(big[i].path, 1000, 1000), 0);
		flow_engine_handle(fe);                 /* read in this order */
	}
	/* 8 slots in use (one open session): 2 KiB, more than the 1 KiB the
	 * four floods leave of a shared 256 MiB */
	make_claim(f, "victim", getpid(), 1001, 8, &victim);
	victim.hdr->count = 8;
	flow_engine_handle(fe);
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_int_equal(fetest_obs[0].session, 7);
	assert_int_equal(fetest_obs[0].uid, 1001);
	/* uid 1000 got one table's worth; the others wait for the next polls */
	li = fetest_listing_of(fe, big[3].path);
	assert_non_null(strstr(li.problem, "uid 1000's tables hold more than"));
	li = fetest_listing_of(fe, victim.path);
	assert_string_equal(li.problem, "");
	flow_engine_close(fe);
	for (int i = 0; i < 4; i++)
		nsft_close(&big[i], 1);
	nsft_close(&victim, 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fetest_setup, fetest_teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(flow_engine_poll__claims_pid_of_another_uid__unverified_no_pid),
		T(flow_engine_poll__pid_holds_or_maps_the_table__verified),
		T(flow_engine_poll__one_owner_floods_read_budget__others_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
