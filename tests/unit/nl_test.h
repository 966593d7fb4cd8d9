/* Shared by test_nl.c and test_nl_mon.c: a private network namespace made
 * by unshare and a second one held only by an fd (nsb), and a link dump
 * request with a counting callback. Header-only (static inline): each test
 * is one translation unit. */
#ifndef NICSTALL_TEST_NL_TEST_H
#define NICSTALL_TEST_NL_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "nstest.h"
#include "lib/rtnl.h"

static int nsb = -1;



#define NSB "nsenter --net=/proc/%d/fd/%d "

static inline int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (needs root)\n",
			strerror(errno));
		return -1;
	}
	if (nstest_sh("ip link set lo up && ip link add t0 type veth peer name t1 && "
	       "ip link set t0 mtu 1400 && ip link set t0 up && ip link set t1 up") != 0)
		return -1;
	nsb = nstest_make_netns();
	if (nsb < 0)
		return -1;
	if (nstest_sh(NSB "ip link add x0 type veth peer name x1", (int)getpid(), nsb) != 0)
		return -1;
	return 0;
}

static inline int group_teardown(void **state)
{
	(void)state;
	if (nsb >= 0)
		close(nsb);
	return 0;
}

static inline int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	return MNL_CB_OK;
}

static inline int abort_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	errno = ECANCELED;
	return MNL_CB_ERROR;
}

static inline void put_link_dump(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
}

#endif
