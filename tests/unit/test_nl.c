/* Unit tests for the netlink path (lib/nl.h, lib/rtnl.h) against the real
 * kernel: links, requests, message checks, generic netlink, sockets in other
 * namespaces. Monitor, neighbours, addresses and batches: test_nl_mon.c.
 * Inside a private network namespace made by unshare (nothing reaches the
 * host's links) and a second namespace held only by an fd. Needs root. */
#include "nl_test.h"

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
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
