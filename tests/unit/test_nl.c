/* Unit tests for collectors/nl.c against the real kernel, inside a private
 * network namespace made by unshare (nothing reaches the host's links) and a
 * second namespace held only by an fd. Needs root. */
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

static int group_setup(void **state)
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

static int group_teardown(void **state)
{
	(void)state;
	if (nsb >= 0)
		close(nsb);
	return 0;
}

/* ---- nl_link_get ---- */

static void nl_link_get__veth_by_name__flags_mtu_kind(void **state)
{
	struct nl_link l, m;
	char err[256];
	FILE *f;
	unsigned char mac[6];

	(void)state;
	assert_int_equal(nl_link_get(-1, "t0", 0, &l, err, sizeof(err)), 0);
	assert_int_equal(l.ifindex, (int)if_nametoindex("t0"));
	assert_string_equal(l.ifname, "t0");
	assert_true(l.flags & IFF_UP);
	assert_false(l.flags & IFF_PROMISC);
	assert_int_equal(l.mtu, 1400);
	assert_string_equal(l.kind, "veth");
	assert_int_equal(l.master, 0);
	assert_int_equal(l.addr_len, 6);
	/* the MAC as `ip` prints it */
	f = popen("ip -br link show t0 | awk '{print $3}'", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
				&mac[2], &mac[3], &mac[4], &mac[5]), 6);
	pclose(f);
	assert_memory_equal(l.addr, mac, 6);

	assert_int_equal(nl_link_get(-1, NULL, l.ifindex, &m, err, sizeof(err)), 0);
	assert_string_equal(m.ifname, "t0");
	assert_int_equal(m.mtu, 1400);
}

static void nl_link_get__down_link__no_iff_up(void **state)
{
	struct nl_link l;
	char err[256];

	(void)state;
	assert_int_equal(nstest_sh("ip link add d0 type veth peer name d1"), 0);
	assert_int_equal(nl_link_get(-1, "d0", 0, &l, err, sizeof(err)), 0);
	assert_false(l.flags & IFF_UP);
	assert_int_equal(l.mtu, 1500);
	assert_int_equal(nstest_sh("ip link del d0"), 0);
}

static void nl_link_get__absent__enodev_names_link(void **state)
{
	struct nl_link l;
	char err[256];

	(void)state;
	assert_int_equal(nl_link_get(-1, "nosuch7", 0, &l, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "nosuch7"));
	assert_non_null(strstr(err, "own netns"));
	assert_int_equal(nl_link_get(-1, NULL, 999999, &l, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "999999"));
	assert_int_equal(nl_link_get(-1, "abcdefghijklmnopq", 0, &l, err, sizeof(err)),
			 -EINVAL);
}

static void nl_link_get__other_namespace__sees_its_links_only(void **state)
{
	struct nl_link l;
	char err[256];

	(void)state;
	assert_int_equal(nl_link_get(nsb, "x0", 0, &l, err, sizeof(err)), 0);
	assert_string_equal(l.kind, "veth");
	assert_int_equal(nl_link_get(-1, "x0", 0, &l, err, sizeof(err)), -ENODEV);
	assert_int_equal(nl_link_get(nsb, "t0", 0, &l, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "net:["));      /* names the namespace */
}

/* ---- nl_link_set_flags ---- */

static void nl_link_set_flags__promisc__toggled_and_restored(void **state)
{
	struct nl_link l;
	char err[256];
	int idx = (int)if_nametoindex("t0");

	(void)state;
	assert_int_equal(nl_link_set_flags(-1, idx, IFF_PROMISC, IFF_PROMISC, err,
					   sizeof(err)), 0);
	assert_int_equal(nl_link_get(-1, NULL, idx, &l, err, sizeof(err)), 0);
	assert_true(l.flags & IFF_PROMISC);
	assert_true(l.flags & IFF_UP);              /* other bits untouched */
	assert_int_equal(nstest_sh("ip link show t0 | grep -q PROMISC"), 0);

	assert_int_equal(nl_link_set_flags(-1, idx, 0, IFF_PROMISC, err,
					   sizeof(err)), 0);
	assert_int_equal(nl_link_get(-1, NULL, idx, &l, err, sizeof(err)), 0);
	assert_false(l.flags & IFF_PROMISC);
	assert_true(l.flags & IFF_UP);
	assert_int_equal(nstest_sh("ip link show t0 | grep -q PROMISC"), 1);
}

static void nl_link_set_flags__absent__enodev_in_err(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(nl_link_set_flags(-1, 888888, IFF_PROMISC, IFF_PROMISC,
					   err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "888888"));
	assert_non_null(strstr(err, strerror(ENODEV)));
	assert_int_equal(nl_link_set_flags(-1, 0, 0, 0, err, sizeof(err)), -EINVAL);
}

/* ---- nl_sock_request ---- */

static void nl_sock_request__kernel_rejects__extack_text_in_err(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nl_sock *ns;
	char err[256];

	(void)state;
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = (int)if_nametoindex("t0");
	mnl_attr_put_u32(nlh, IFLA_MTU, 10);        /* below the minimum */
	assert_int_equal(nl_sock_request(ns, nlh, NULL, NULL, "mtu of t0", err,
					 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mtu of t0"));
	assert_non_null(strstr(err, strerror(EINVAL)));
	assert_non_null(strstr(err, "mtu less than device minimum"));
	nl_sock_close(ns);
}

static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	return MNL_CB_OK;
}

static int abort_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	errno = ECANCELED;
	return MNL_CB_ERROR;
}

static void put_link_dump(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
}

static void nl_sock_request__aborted_dump__next_request_clean(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct nl_sock *ns;
	char err[256];
	int n = 0, all = 0;

	(void)state;
	/* enough links that the dump needs several reads */
	assert_int_equal(nstest_sh("for i in $(seq 1 30); do echo \"link add a$i type veth "
			    "peer name b$i\"; done | ip -batch -"), 0);
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	put_link_dump(buf);
	assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, abort_cb, &n,
					 "dump", err, sizeof(err)), -ECANCELED);
	assert_int_equal(n, 1);
	for (int round = 0; round < 2; round++) {
		all = 0;
		put_link_dump(buf);
		assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, count_cb,
						 &all, "dump", err, sizeof(err)), 0);
		assert_int_equal(all, 60 + 3);       /* a*, b*, lo, t0, t1 */
	}
	nl_sock_close(ns);
	assert_int_equal(nstest_sh("for i in $(seq 1 30); do echo \"link del a$i\"; done "
			    "| ip -batch -"), 0);
}

/* ---- nl_msgs_check, sockets of any protocol, never waiting ---- */

static void nl_msgs_check__lengths__counted_or_ebadmsg(void **state)
{
	uint32_t buf[64] = { 0 };
	struct nlmsghdr *a = (void *)buf, *b;

	(void)state;
	a->nlmsg_len = NLMSG_HDRLEN + 5;                /* padded to 24 */
	b = (void *)((char *)buf + 24);
	b->nlmsg_len = NLMSG_HDRLEN;
	assert_int_equal(nl_msgs_check(buf, 24 + 16), 2);
	assert_int_equal(nl_msgs_check(buf, 24), 1);       /* last one padded */
	/* unpadded: libmnl's attribute walk would read to its aligned end,
	 * 3 bytes past the buffer (a fuzz crash in link_parse) */
	assert_int_equal(nl_msgs_check(buf, 21), -EBADMSG);
	assert_int_equal(nl_msgs_check(buf, 24 + 15), -EBADMSG); /* cut header */
	assert_int_equal(nl_msgs_check(buf, 24 + 16 + 4), -EBADMSG); /* junk tail */
	assert_int_equal(nl_msgs_check(buf, 0), -EBADMSG);
	assert_int_equal(nl_msgs_check(NULL, 16), -EBADMSG);
	assert_int_equal(nl_msgs_check(buf, 20), -EBADMSG); /* 21 > 20 */
	b->nlmsg_len = 8;                                   /* < NLMSG_HDRLEN */
	assert_int_equal(nl_msgs_check(buf, 24 + 16), -EBADMSG);
	b->nlmsg_len = 0;
	assert_int_equal(nl_msgs_check(buf, 24 + 16), -EBADMSG);
	/* lengths that pass mnl_nlmsg_ok(), which compares them as int */
	for (uint32_t l = 0x80000001u; l <= 0x8000000fu; l++) {
		b->nlmsg_len = l;
		assert_true(mnl_nlmsg_ok(b, 16));
		assert_int_equal(nl_msgs_check(buf, 24 + 16), -EBADMSG);
	}
	b->nlmsg_len = 0xffffffffu;
	assert_int_equal(nl_msgs_check(buf, 24 + 16), -EBADMSG);
}

/* The fuzz crash: an RTM_NEWLINK of 85 bytes, the receive ending with it
 * (no padding), its IFLA_IFNAME the last attribute and not terminated. The
 * attribute walk (to the aligned end, 88) accepted the name and strlen read
 * past the buffer. Now the buffer is refused; with its padding the name is
 * refused as malformed. */
static void nl_link_parse_buf__unpadded_last_message__refused_no_overread(void **state)
{
	unsigned char *buf = malloc(85);
	struct nlmsghdr *nlh = (void *)buf;
	struct ifinfomsg *ifi = (void *)(buf + 16);
	struct nlattr *a = (void *)(buf + 32);
	struct nl_link l[2];
	unsigned n = 9;

	(void)state;
	assert_non_null(buf);
	memset(buf, 'z', 85);
	nlh->nlmsg_len = 85;
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = 0;
	nlh->nlmsg_seq = nlh->nlmsg_pid = 0;
	memset(ifi, 0, sizeof(*ifi));
	ifi->ifi_index = 7;
	a->nla_len = 56;                        /* to 88: the aligned end */
	a->nla_type = IFLA_IFNAME;
	assert_int_equal(nl_link_parse_buf(buf, 85, l, 2, &n), -EBADMSG);
	assert_int_equal(n, 0);
	free(buf);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A socket filter that drops everything: the kernel answers, but nothing
 * reaches the queue (netlink_unicast() runs sk_filter()). The request must
 * fail at once instead of waiting for what will never come. */
static void nl_sock_request__reply_filtered_out__enomsg_at_once(void **state)
{
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop };
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct nl_sock *ns;
	char err[256];
	uint64_t t0;
	int n = 0;

	(void)state;
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	assert_int_equal(setsockopt(nl_sock_fd(ns), SOL_SOCKET, SO_ATTACH_FILTER,
				    &prog, sizeof(prog)), 0);
	put_link_dump(buf);
	t0 = mono_ms();
	assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, count_cb, &n,
					 "link dump", err, sizeof(err)), -ENOMSG);
	assert_true(mono_ms() - t0 < 100);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "link dump"));
	assert_non_null(strstr(err, "none is coming"));
	/* the same socket works again without the filter */
	assert_int_equal(setsockopt(nl_sock_fd(ns), SOL_SOCKET, SO_DETACH_FILTER,
				    &prog, sizeof(prog)), 0);
	put_link_dump(buf);
	assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, count_cb, &n,
					 "link dump", err, sizeof(err)), 0);
	assert_int_equal(n, 3);                     /* lo, t0, t1 */
	nl_sock_close(ns);
}

static void nl_genl_family__ctrl_and_absent__resolved_once(void **state)
{
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop };
	struct nl_sock *ns;
	char err[256];

	(void)state;
	ns = nl_sock_open(-1, NETLINK_GENERIC, 0, err, sizeof(err));
	assert_non_null(ns);
	assert_int_equal(nl_genl_family(ns, "nlctrl", err, sizeof(err)), GENL_ID_CTRL);
	assert_int_equal(nl_genl_family(ns, "nosuchfamily", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nosuchfamily"));
	/* cached: answered with every reply dropped */
	assert_int_equal(setsockopt(nl_sock_fd(ns), SOL_SOCKET, SO_ATTACH_FILTER,
				    &prog, sizeof(prog)), 0);
	assert_int_equal(nl_genl_family(ns, "nlctrl", err, sizeof(err)), GENL_ID_CTRL);
	assert_int_equal(nl_genl_family(ns, "nosuchfamily", err, sizeof(err)), -ENOENT);
	assert_int_equal(nl_genl_family(ns, "devlink", err, sizeof(err)), -ENOMSG);
	assert_int_equal(nl_genl_family(ns, "", err, sizeof(err)), -EINVAL);
	nl_sock_close(ns);
}

static void nl_sock_open__protocols__made_or_named_error(void **state)
{
	struct nl_sock *ns;
	char err[256] = "";

	(void)state;
	ns = nl_sock_open(nsb, NETLINK_SOCK_DIAG, 0, err, sizeof(err));
	assert_non_null(ns);
	assert_true(nl_sock_fd(ns) >= 0);
	nl_sock_close(ns);
	ns = nl_sock_open(-1, NETLINK_RDMA, 0, err, sizeof(err));
	if (ns) {
		nl_sock_close(ns);   /* a kernel with RDMA netlink */
		return;
	}
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_non_null(strstr(err, "NETLINK_RDMA socket in own netns"));
	assert_non_null(strstr(err, strerror(EPROTONOSUPPORT)));
}

static void nl_link_query__kept_socket_other_namespace__promiscuity(void **state)
{
	struct nl_sock *ns;
	struct nl_link l;
	char err[256];

	(void)state;
	ns = nl_sock_open(nsb, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	assert_int_equal(nl_link_query(ns, "x0", 0, &l, err, sizeof(err)), 0);
	assert_true(l.have_promiscuity);
	assert_int_equal(l.promiscuity, 0);
	assert_int_equal(nl_link_query(ns, "t0", 0, &l, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "get link t0"));
	assert_int_equal(nstest_sh(NSB "ip link set x0 promisc on", (int)getpid(), nsb), 0);
	assert_int_equal(nl_link_query(ns, "x0", 0, &l, err, sizeof(err)), 0);
	assert_int_equal(l.promiscuity, 1);
	assert_int_equal(nstest_sh(NSB "ip link set x0 promisc off", (int)getpid(), nsb), 0);
	nl_sock_close(ns);
}

/* ---- nl_mon ---- */

struct evlog {
	int n;
	struct { int ev; int ifindex; char name[16]; unsigned flags; } e[256];
	int resync_at;
};

static void ev_cb(const struct nl_link *l, int event, void *arg)
{
	struct evlog *g = arg;

	if (event == NL_LINK_RESYNC) {
		assert_null(l);
		g->resync_at = g->n;
		return;
	}
	assert_non_null(l);
	if (g->n >= 256)
		return;
	g->e[g->n].ev = event;
	g->e[g->n].ifindex = l->ifindex;
	g->e[g->n].flags = l->flags;
	snprintf(g->e[g->n].name, sizeof(g->e[0].name), "%s", l->ifname);
	g->n++;
}

static int ev_find(const struct evlog *g, int from, int ev, const char *name)
{
	for (int i = from; i < g->n; i++)
		if (g->e[i].ev == ev && !strcmp(g->e[i].name, name))
			return i;
	return -1;
}

static void nl_mon_dispatch__link_added_renamed_deleted__events(void **state)
{
	static struct evlog g;
	char err[256];
	struct nl_mon *m;
	int i, idx;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.resync_at = -1;
	m = nl_mon_open(-1, err, sizeof(err));
	assert_non_null(m);
	assert_true(nl_mon_fd(m) >= 0);
	assert_true(fcntl(nl_mon_fd(m), F_GETFL) & O_NONBLOCK);
	assert_int_equal(nl_mon_dispatch(m, ev_cb, &g), 0);    /* nothing, no wait */

	assert_int_equal(nstest_sh("ip link add m0 type veth peer name m1"), 0);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 2);
	i = ev_find(&g, 0, NL_LINK_NEW, "m0");
	assert_true(i >= 0);
	idx = g.e[i].ifindex;
	assert_int_equal(idx, (int)if_nametoindex("m0"));
	assert_true(ev_find(&g, 0, NL_LINK_NEW, "m1") >= 0);

	g.n = 0;
	assert_int_equal(nstest_sh("ip link set m0 name m2"), 0);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 1);
	i = ev_find(&g, 0, NL_LINK_NEW, "m2");
	assert_true(i >= 0);
	assert_int_equal(g.e[i].ifindex, idx);

	g.n = 0;
	assert_int_equal(nstest_sh("ip link set m2 up"), 0);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 1);
	i = ev_find(&g, 0, NL_LINK_NEW, "m2");
	assert_true(i >= 0);
	assert_true(g.e[i].flags & IFF_UP);

	g.n = 0;
	assert_int_equal(nstest_sh("ip link del m2"), 0);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 2);
	i = ev_find(&g, 0, NL_LINK_DEL, "m2");
	assert_true(i >= 0);
	assert_int_equal(g.e[i].ifindex, idx);
	assert_true(ev_find(&g, 0, NL_LINK_DEL, "m1") >= 0);
	assert_int_equal(g.resync_at, -1);
	nl_mon_close(m);
}

static void nl_mon_dispatch__other_namespace__only_its_events(void **state)
{
	static struct evlog g;
	char err[256];
	struct nl_mon *m;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.resync_at = -1;
	m = nl_mon_open(nsb, err, sizeof(err));
	assert_non_null(m);
	assert_int_equal(nstest_sh("ip link add h0 type veth peer name h1"), 0);
	assert_int_equal(nstest_sh(NSB "ip link add y0 type veth peer name y1",
			    (int)getpid(), nsb), 0);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 2);
	assert_true(ev_find(&g, 0, NL_LINK_NEW, "y0") >= 0);
	assert_int_equal(ev_find(&g, 0, NL_LINK_NEW, "h0"), -1);
	nl_mon_close(m);
	assert_int_equal(nstest_sh("ip link del h0"), 0);
}

static void nl_mon_dispatch__overrun__resync_then_every_link(void **state)
{
	static struct evlog g;
	char err[256];
	struct nl_mon *m;
	int small = 1, rc;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.resync_at = -1;
	m = nl_mon_open(-1, err, sizeof(err));
	assert_non_null(m);
	/* the smallest buffer the kernel allows: 30 new pairs overrun it */
	assert_int_equal(setsockopt(nl_mon_fd(m), SOL_SOCKET, SO_RCVBUF, &small,
				    sizeof(small)), 0);
	assert_int_equal(nstest_sh("for i in $(seq 1 30); do echo \"link add r$i type veth "
			    "peer name s$i\"; done | ip -batch -"), 0);
	rc = nl_mon_dispatch(m, ev_cb, &g);
	assert_true(rc > 0);
	assert_true(g.resync_at >= 0);
	/* after the resync marker every link is reported, old and new */
	assert_true(ev_find(&g, g.resync_at, NL_LINK_NEW, "t0") >= 0);
	assert_true(ev_find(&g, g.resync_at, NL_LINK_NEW, "lo") >= 0);
	assert_true(ev_find(&g, g.resync_at, NL_LINK_NEW, "r30") >= 0);
	assert_true(ev_find(&g, g.resync_at, NL_LINK_NEW, "s1") >= 0);
	nl_mon_close(m);
	assert_int_equal(nstest_sh("for i in $(seq 1 30); do echo \"link del r$i\"; done "
			    "| ip -batch -"), 0);
}

/* ---- neighbours and addresses ---- */

struct nfind {
	const char *addr;
	struct nl_neigh got;
	int found;
	int others;
};

static void neigh_cb(const struct nl_neigh *n, void *arg)
{
	struct nfind *f = arg;

	if (!strcmp(n->addr, f->addr)) {
		f->got = *n;
		f->found++;
	} else {
		f->others++;
	}
}

static void nl_neigh_dump__permanent_entry__reported(void **state)
{
	struct nfind f = { .addr = "192.0.2.9" };
	struct nfind f6 = { .addr = "2001:db8::9" };
	int idx = (int)if_nametoindex("t0");
	char err[256];

	(void)state;
	assert_int_equal(nstest_sh("ip addr add 192.0.2.1/24 dev t0 && "
			    "ip neigh add 192.0.2.9 lladdr 02:00:00:00:00:09 "
			    "dev t0 nud permanent"), 0);
	assert_int_equal(nl_neigh_dump(-1, idx, neigh_cb, &f, err, sizeof(err)), 0);
	assert_int_equal(f.found, 1);
	assert_int_equal(f.got.ifindex, idx);
	assert_int_equal(f.got.family, AF_INET);
	assert_string_equal(f.got.lladdr, "02:00:00:00:00:09");
	assert_int_equal(f.got.state, NUD_PERMANENT);
	assert_string_equal(nl_neigh_state_str(f.got.state), "PERMANENT");

	/* filtered by link: none on t1 */
	f.found = 0;
	assert_int_equal(nl_neigh_dump(-1, (int)if_nametoindex("t1"), neigh_cb, &f,
				       err, sizeof(err)), 0);
	assert_int_equal(f.found, 0);

	if (nstest_sh("ip -6 neigh add 2001:db8::9 lladdr 02:00:00:00:00:0a dev t0 "
	       "nud permanent 2>/dev/null") == 0) {
		assert_int_equal(nl_neigh_dump(-1, 0, neigh_cb, &f6, err,
					       sizeof(err)), 0);
		assert_int_equal(f6.found, 1);
		assert_int_equal(f6.got.family, AF_INET6);
		assert_string_equal(f6.got.lladdr, "02:00:00:00:00:0a");
	}
}

static void nl_neigh_state_str__values__names(void **state)
{
	(void)state;
	assert_string_equal(nl_neigh_state_str(NUD_REACHABLE), "REACHABLE");
	assert_string_equal(nl_neigh_state_str(NUD_STALE), "STALE");
	assert_string_equal(nl_neigh_state_str(NUD_FAILED), "FAILED");
	assert_string_equal(nl_neigh_state_str(NUD_NONE), "NONE");
	assert_string_equal(nl_neigh_state_str(NUD_NOARP | NUD_PERMANENT),
			    "NOARP|PERMANENT");
	assert_string_equal(nl_neigh_state_str(NUD_STALE | 0x400), "STALE|0x400");
}

struct afind {
	int v4;
	unsigned plen;
	int n;
};

static void addr_cb(int family, const char *text, unsigned plen, void *arg)
{
	struct afind *a = arg;

	a->n++;
	if (family == AF_INET && !strcmp(text, "198.51.100.7")) {
		a->v4++;
		a->plen = plen;
	}
}

static void nl_addr_dump__address_added__reported_with_prefix(void **state)
{
	struct afind a = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(nstest_sh("ip addr add 198.51.100.7/26 dev t1"), 0);
	assert_int_equal(nl_addr_dump(-1, (int)if_nametoindex("t1"), addr_cb, &a,
				      err, sizeof(err)), 0);
	assert_int_equal(a.v4, 1);
	assert_int_equal(a.plen, 26);
	memset(&a, 0, sizeof(a));
	assert_int_equal(nl_addr_dump(-1, (int)if_nametoindex("lo"), addr_cb, &a,
				      err, sizeof(err)), 0);
	assert_int_equal(a.v4, 0);
	assert_true(a.n >= 1);                      /* 127.0.0.1 */
	memset(&a, 0, sizeof(a));
	assert_int_equal(nl_addr_dump(nsb, 0, addr_cb, &a, err, sizeof(err)), 0);
	assert_int_equal(a.v4, 0);                  /* not in that namespace */
}

/* ---- nl_sock_batch ---- */

struct batch_seen {
	int ifindex[NL_BATCH_MAX];      /* data reply: its link's index */
	int error[NL_BATCH_MAX];
	unsigned calls;
};

static void batch_cb(unsigned idx, const struct nlmsghdr *nlh, int error, void *arg)
{
	struct batch_seen *b = arg;

	assert_true(idx < NL_BATCH_MAX);
	b->calls++;
	if (error) {
		b->error[idx] = error;
		return;
	}
	assert_int_equal(nlh->nlmsg_type, RTM_NEWLINK);
	b->ifindex[idx] = ((const struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index;
}

/* n RTM_GETLINK requests (one reply each) for the given indices. */
static size_t put_getlinks(char *buf, const int *idx, unsigned n, uint16_t flags)
{
	size_t off = 0;

	for (unsigned i = 0; i < n; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);
		struct ifinfomsg *ifi;

		nlh->nlmsg_type = RTM_GETLINK;
		nlh->nlmsg_flags = flags;
		ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_family = AF_UNSPEC;
		ifi->ifi_index = idx[i];
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return off;
}

static void nl_sock_batch__three_requests__each_answered_in_order_of_index(void **state)
{
	char buf[NL_BATCH_MAX * 64] __attribute__((aligned(8)));
	int idx[3] = { (int)if_nametoindex("t0"), 999999, (int)if_nametoindex("t1") };
	struct batch_seen b;
	struct nl_sock *ns;
	char err[256] = "";
	size_t len;
	int got = 0;

	(void)state;
	memset(&b, 0, sizeof(b));
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	len = put_getlinks(buf, idx, 3, 0);
	assert_int_equal(nl_sock_batch(ns, buf, len, 3, batch_cb, &b, "links", err, sizeof(err)), 3);
	assert_int_equal(b.calls, 3);
	assert_int_equal(b.ifindex[0], idx[0]);
	assert_int_equal(b.error[1], ENODEV);
	assert_int_equal(b.ifindex[2], idx[2]);
	/* the socket goes on with ordinary requests */
	put_link_dump(buf);
	assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, count_cb, &got, "dump",
					 err, sizeof(err)), 0);
	assert_true(got >= 3);
	nl_sock_close(ns);
}

static void nl_sock_batch__ack_dump_or_too_many__einval(void **state)
{
	char buf[(NL_BATCH_MAX + 1) * 64] __attribute__((aligned(8)));
	int idx[NL_BATCH_MAX + 1];
	struct batch_seen b;
	struct nl_sock *ns;
	char err[256] = "";
	size_t len;

	(void)state;
	for (unsigned i = 0; i <= NL_BATCH_MAX; i++)
		idx[i] = 1;
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	len = put_getlinks(buf, idx, 2, NLM_F_ACK);
	assert_int_equal(nl_sock_batch(ns, buf, len, 2, batch_cb, &b, "links", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "ack or a dump"));
	len = put_getlinks(buf, idx, 2, NLM_F_DUMP);
	assert_int_equal(nl_sock_batch(ns, buf, len, 2, batch_cb, &b, "links", err, sizeof(err)),
			 -EINVAL);
	len = put_getlinks(buf, idx, NL_BATCH_MAX + 1, 0);
	assert_int_equal(nl_sock_batch(ns, buf, len, NL_BATCH_MAX + 1, batch_cb, &b, "links", err,
				       sizeof(err)), -EINVAL);
	/* n must be the number of messages in the buffer */
	len = put_getlinks(buf, idx, 2, 0);
	assert_int_equal(nl_sock_batch(ns, buf, len, 3, batch_cb, &b, "links", err, sizeof(err)),
			 -EINVAL);
	nl_sock_close(ns);
}

static void nl_sock_batch__receive_buffer_overrun__fewer_answered_then_clean(void **state)
{
	char buf[NL_BATCH_MAX * 64] __attribute__((aligned(8)));
	int idx[NL_BATCH_MAX], small = 1, got = 0, n;
	struct batch_seen b;
	struct nl_sock *ns;
	char err[256] = "";
	size_t len;

	(void)state;
	for (unsigned i = 0; i < NL_BATCH_MAX; i++)
		idx[i] = (int)if_nametoindex("t0");
	memset(&b, 0, sizeof(b));
	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	assert_non_null(ns);
	/* the smallest receive buffer holds a reply or two, not 32 */
	assert_int_equal(setsockopt(nl_sock_fd(ns), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	len = put_getlinks(buf, idx, NL_BATCH_MAX, 0);
	n = nl_sock_batch(ns, buf, len, NL_BATCH_MAX, batch_cb, &b, "links", err, sizeof(err));
	assert_true(n >= 1 && n < NL_BATCH_MAX);
	assert_int_equal(b.calls, (unsigned)n);
	assert_non_null(strstr(err, "unanswered"));
	put_link_dump(buf);
	assert_int_equal(nl_sock_request(ns, (struct nlmsghdr *)buf, count_cb, &got, "dump",
					 err, sizeof(err)), 0);
	nl_sock_close(ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nl_link_get__veth_by_name__flags_mtu_kind),
		cmocka_unit_test(nl_link_get__down_link__no_iff_up),
		cmocka_unit_test(nl_link_get__absent__enodev_names_link),
		cmocka_unit_test(nl_link_get__other_namespace__sees_its_links_only),
		cmocka_unit_test(nl_link_set_flags__promisc__toggled_and_restored),
		cmocka_unit_test(nl_link_set_flags__absent__enodev_in_err),
		cmocka_unit_test(nl_sock_request__kernel_rejects__extack_text_in_err),
		cmocka_unit_test(nl_sock_request__aborted_dump__next_request_clean),
		cmocka_unit_test(nl_msgs_check__lengths__counted_or_ebadmsg),
		cmocka_unit_test(nl_link_parse_buf__unpadded_last_message__refused_no_overread),
		cmocka_unit_test(nl_sock_request__reply_filtered_out__enomsg_at_once),
		cmocka_unit_test(nl_genl_family__ctrl_and_absent__resolved_once),
		cmocka_unit_test(nl_sock_open__protocols__made_or_named_error),
		cmocka_unit_test(nl_link_query__kept_socket_other_namespace__promiscuity),
		cmocka_unit_test(nl_mon_dispatch__link_added_renamed_deleted__events),
		cmocka_unit_test(nl_mon_dispatch__other_namespace__only_its_events),
		cmocka_unit_test(nl_mon_dispatch__overrun__resync_then_every_link),
		cmocka_unit_test(nl_neigh_dump__permanent_entry__reported),
		cmocka_unit_test(nl_neigh_state_str__values__names),
		cmocka_unit_test(nl_addr_dump__address_added__reported_with_prefix),
		cmocka_unit_test(nl_sock_batch__three_requests__each_answered_in_order_of_index),
		cmocka_unit_test(nl_sock_batch__ack_dump_or_too_many__einval),
		cmocka_unit_test(nl_sock_batch__receive_buffer_overrun__fewer_answered_then_clean),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
