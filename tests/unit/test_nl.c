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
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "nstest.h"
#include "lib/nl.h"

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
	ns = nl_sock_open(-1, 0, err, sizeof(err));
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
	ns = nl_sock_open(-1, 0, err, sizeof(err));
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
		cmocka_unit_test(nl_mon_dispatch__link_added_renamed_deleted__events),
		cmocka_unit_test(nl_mon_dispatch__other_namespace__only_its_events),
		cmocka_unit_test(nl_mon_dispatch__overrun__resync_then_every_link),
		cmocka_unit_test(nl_neigh_dump__permanent_entry__reported),
		cmocka_unit_test(nl_neigh_state_str__values__names),
		cmocka_unit_test(nl_addr_dump__address_added__reported_with_prefix),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
