/* Unit tests for the netlink path against the real kernel: the link monitor
 * (nl_mon), neighbour and address dumps, and batched requests
 * (nl_sock_batch). Same namespaces as test_nl.c (nl_test.h). Needs root. */
#include "nl_test.h"

#include <poll.h>

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

/* Wait up to 2 s for the monitor to have something: IPv6 notifications
 * may come from the kernel's work queue after `ip` returned (with nodad,
 * addrconf_dad_start -> addrconf_dad_completed in addrconf_dad_work). */
static void mon_wait(const struct nl_mon *m)
{
	struct pollfd pf = { .fd = nl_mon_fd(m), .events = POLLIN };

	assert_int_equal(poll(&pf, 1, 2000), 1);
}

static int ev_find_idx(const struct evlog *g, int ev, int ifindex)
{
	for (int i = 0; i < g->n; i++)
		if (g->e[i].ev == ev && g->e[i].ifindex == ifindex)
			return i;
	return -1;
}

/* An address added to or removed from a link, IPv4 and IPv6, is an
 * NL_LINK_ADDR event naming the link's ifindex alone (the port re-reads
 * its addresses on it); another link's address names that link. */
static void nl_mon_dispatch__address_added_removed__addr_events(void **state)
{
	static struct evlog g;
	char err[256];
	struct nl_mon *m;
	int i, a, b;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.resync_at = -1;
	assert_int_equal(nstest_sh("ip link add a0 type veth peer name a1"), 0);
	a = (int)if_nametoindex("a0");
	b = (int)if_nametoindex("a1");
	m = nl_mon_open(-1, err, sizeof(err));
	assert_non_null(m);
	assert_int_equal(nstest_sh("ip addr add 10.250.3.1/24 dev a0"), 0);
	mon_wait(m);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 1);
	i = ev_find_idx(&g, NL_LINK_ADDR, a);
	assert_true(i >= 0);
	assert_string_equal(g.e[i].name, "");
	assert_int_equal(g.e[i].flags, 0);
	assert_int_equal(ev_find_idx(&g, NL_LINK_ADDR, b), -1);

	g.n = 0;
	assert_int_equal(nstest_sh("ip addr add fd00:250:3::1/64 dev a1"), 0);
	mon_wait(m);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 1);
	assert_true(ev_find_idx(&g, NL_LINK_ADDR, b) >= 0);
	assert_int_equal(ev_find_idx(&g, NL_LINK_ADDR, a), -1);

	g.n = 0;
	assert_int_equal(nstest_sh("ip addr del 10.250.3.1/24 dev a0"), 0);
	mon_wait(m);
	assert_true(nl_mon_dispatch(m, ev_cb, &g) >= 1);
	assert_true(ev_find_idx(&g, NL_LINK_ADDR, a) >= 0);
	assert_int_equal(g.resync_at, -1);
	nl_mon_close(m);
	assert_int_equal(nstest_sh("ip link del a0"), 0);
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
		cmocka_unit_test(nl_mon_dispatch__link_added_renamed_deleted__events),
		cmocka_unit_test(nl_mon_dispatch__other_namespace__only_its_events),
		cmocka_unit_test(nl_mon_dispatch__address_added_removed__addr_events),
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
