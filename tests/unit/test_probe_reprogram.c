/* Unit tests for probes/reprogram.c's markers and plan against the real
 * kernel: the test process sits in a private network namespace (unshare)
 * with a veth pair, and a marker directory of its own. Needs root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nstest.h"
#include "lib/rtnl.h"
#include "probes/reprogram.h"

static char dir[] = "/tmp/test_reprogram.XXXXXX";

static int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return -1;
	}
	if (nstest_sh("ip link add rp0 type veth peer name rp1 && ip link set rp0 up") != 0)
		return -1;
	if (!mkdtemp(dir))
		return -1;
	reprogram_set_state_dir(dir);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	nstest_sh("rm -rf '%s'", dir);
	return 0;
}

static void marker(const char *name, const char *body)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(body, fp);
	fclose(fp);
}

static int exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static int promisc(int ifindex)
{
	struct nl_link l;
	char err[256];

	assert_int_equal(nl_link_get(-1, NULL, ifindex, &l, err, sizeof(err)), 0);
	return !!(l.flags & IFF_PROMISC);
}

/* pid 1's start time, /proc/1/stat field 22 (counted after the name's ')') */
static unsigned long long start1(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	FILE *fp = fopen("/proc/1/stat", "r");
	int i;

	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	p = strrchr(buf, ')');
	assert_non_null(p);
	p += 2;                                 /* field 3 */
	for (i = 3; i < 22; i++)
		p = strchr(p, ' ') + 1;
	v = strtoull(p, NULL, 10);
	assert_true(v > 0 || getpid() != 1);
	return v;
}

static void reprogram_plan__flag_and_count__crossing_or_none(void **state)
{
	(void)state;
	assert_int_equal(reprogram_plan(0, 0), 1);
	assert_int_equal(reprogram_plan(1, 1), -1);
	assert_int_equal(reprogram_plan(0, 1), 0);      /* another holder */
	assert_int_equal(reprogram_plan(1, 2), 0);
}

/* A daemon killed during its hold left markers: each flag is put back as
 * the marker says and the marker removed; a marker of a daemon still
 * running, one for a renamed link and garbage are not acted on. */
static void reprogram_restore_stale__markers__flag_put_back_others_left(void **state)
{
	unsigned idx = if_nametoindex("rp0");
	char body[256];

	(void)state;
	assert_true(idx > 0);
	assert_int_equal(promisc((int)idx), 0);

	/* the link was promiscuous (flag=1) before a clear, hold, set */
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=1\npid=%d\n", idx,
		 INT_MAX - 1);
	marker("0-1", body);
	/* a running daemon's (pid 1 is alive): left alone, kept */
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=0\npid=1\n", idx);
	marker("0-2", body);
	/* the same, with pid 1's own start time: kept */
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=0\npid=1\nstart=%llu\n",
		 idx, start1());
	marker("0-2s", body);
	/* pid 1 started at another time: the pid was reused, the marker's
	 * daemon is gone; acted on (the flag is already off) and removed */
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=0\npid=1\nstart=%llu\n",
		 idx, start1() + 1);
	marker("0-2r", body);
	/* the index now names another link: not touched, removed */
	snprintf(body, sizeof(body), "netns=\nifname=other0\nifindex=%u\nflag=0\npid=%d\n", idx,
		 INT_MAX - 1);
	marker("0-3", body);
	marker("0-4", "not a marker\n");
	marker(".0-5.tmp", "netns=\n");
	/* a namespace that is gone */
	marker("0-6", "netns=nicstall-test-no-such-ns\nifname=rp0\nifindex=1\nflag=1\npid=0\n");

	assert_int_equal(reprogram_restore_stale(), 1);
	assert_int_equal(promisc((int)idx), 1);
	assert_false(exists("0-1"));
	assert_true(exists("0-2"));
	assert_true(exists("0-2s"));
	assert_false(exists("0-2r"));
	assert_false(exists("0-3"));
	assert_false(exists("0-4"));
	assert_false(exists("0-6"));
	assert_false(exists(".0-5.tmp"));       /* a write cut short */
	/* already as the marker says: nothing to restore */
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=1\npid=0\n", idx);
	marker("0-7", body);
	assert_int_equal(reprogram_restore_stale(), 0);
	assert_false(exists("0-7"));
	assert_int_equal(promisc((int)idx), 1);
	assert_int_equal(nstest_sh("ip link set rp0 promisc off"), 0);
}

/* Markers steer root's netlink calls: from a directory others may write,
 * none is read. */
static void reprogram_restore_stale__group_writable_dir__nothing_read(void **state)
{
	unsigned idx = if_nametoindex("rp0");
	char body[256];

	(void)state;
	snprintf(body, sizeof(body), "netns=\nifname=rp0\nifindex=%u\nflag=1\npid=0\n", idx);
	marker("0-8", body);
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(reprogram_restore_stale(), 0);
	assert_true(exists("0-8"));
	assert_int_equal(promisc((int)idx), 0);
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(reprogram_restore_stale(), 1);
	assert_int_equal(promisc((int)idx), 1);
	assert_int_equal(nstest_sh("ip link set rp0 promisc off"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reprogram_plan__flag_and_count__crossing_or_none),
		cmocka_unit_test(reprogram_restore_stale__markers__flag_put_back_others_left),
		cmocka_unit_test(reprogram_restore_stale__group_writable_dir__nothing_read),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
