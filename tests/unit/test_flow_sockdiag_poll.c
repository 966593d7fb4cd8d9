/* Unit tests: flow_sockdiag polls (INET_DIAG TCP sockets): unread data,
 * selectors, IPv6, other namespaces, socket owners, and the reply parser.
 * The ops table, the kernel filter, lookups between dumps, retry-due and
 * pacing: test_flow_sockdiag.c. Selectors are tested in test_flowsel.c.
 * Runs as root in a private network namespace (unshare in group setup). */
#include "sockdiag_test.h"

static void sockdiag_poll__unread_data__reports_exact_bytes(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *srv = NULL, *cli = NULL;
	char err[256] = "", data[1000];
	struct sockdiag *sd;
	struct conn k;
	struct stat st;
	uint64_t t0;
	int i;

	(void)state;
	conn_open(&k, AF_INET);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	memset(data, 'x', sizeof(data));
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, data, sizeof(data)), (ssize_t)sizeof(data));
	for (i = 0; i < 200; i++) {
		assert_true(poll_into(sd, NULL, 0, &l) >= 2);
		srv = find(&l, k.lport, k.cport);
		cli = find(&l, k.cport, k.lport);
		if (srv && cli && srv->unread == sizeof(data) && cli->unsent == 0 &&
		    cli->tx_bytes == sizeof(data))
			break;
		nstest_msleep(10);
	}
	assert_non_null(srv);
	assert_non_null(cli);
	assert_int_equal(srv->src, FLOW_SRC_SOCK);
	assert_int_equal(srv->unread, sizeof(data));
	assert_int_equal(srv->rx_bytes, sizeof(data));
	assert_int_equal(srv->state, 1);        /* ESTABLISHED */
	assert_int_equal(srv->key.proto, IPPROTO_TCP);
	assert_true(IN6_IS_ADDR_V4MAPPED(&srv->key.saddr));
	assert_int_equal(srv->key.saddr.s6_addr[12], 127);
	assert_true(srv->last_rx_ns >= t0 - 20000000ull && srv->last_rx_ns <= loop_mono_ns());
	assert_true(srv->rx_msgs >= 1);
	assert_int_equal(fstat(k.s, &st), 0);
	assert_int_equal(srv->inode, st.st_ino);
	assert_int_equal(cli->unsent, 0);
	assert_int_equal(cli->tx_bytes, sizeof(data));
	assert_int_equal(cli->unread, 0);

	/* Our FIN acked (FIN_WAIT2): still 1000 data bytes, not 1001. */
	assert_int_equal(shutdown(k.c, SHUT_WR), 0);
	for (i = 0; i < 200; i++) {
		assert_true(poll_into(sd, NULL, 0, &l) >= 2);
		cli = find(&l, k.cport, k.lport);
		if (cli && cli->state == 5)
			break;
		nstest_msleep(10);
	}
	assert_non_null(cli);
	assert_int_equal(cli->state, 5);        /* FIN_WAIT2 */
	assert_int_equal(cli->tx_bytes, sizeof(data));
	sockdiag_close(sd);
	conn_close(&k);
}

static void sockdiag_poll__selector_other_port__not_emitted(void **state)
{
	static struct nstest_obs l;
	char err[256] = "", text[64];
	struct flow_sel sel;
	struct sockdiag *sd;
	struct conn a, b;
	unsigned i;

	(void)state;
	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET);
	snprintf(text, sizeof(text), "tcp 127.0.0.1 port %u", a.lport);
	assert_int_equal(flow_sel_parse(text, &sel, err, sizeof(err)), 0);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);   /* both ends of a */
	assert_non_null(find(&l, a.lport, a.cport));
	assert_non_null(find(&l, a.cport, a.lport));
	for (i = 0; i < l.n; i++) {
		assert_int_not_equal(ntohs(l.o[i].key.sport), b.lport);
		assert_int_not_equal(ntohs(l.o[i].key.dport), b.lport);
	}
	/* Without selectors, b is there too. */
	assert_true(poll_into(sd, NULL, 0, &l) >= 4);
	assert_non_null(find(&l, b.lport, b.cport));
	sockdiag_close(sd);
	conn_close(&a);
	conn_close(&b);
}

static void sockdiag_poll__ipv6_flow__native_key(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *o;
	char err[256] = "", buf[128], want[128];
	struct sockdiag *sd;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET6);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	assert_true(poll_into(sd, NULL, 0, &l) >= 2);
	o = find(&l, k.cport, k.lport);
	assert_non_null(o);
	assert_memory_equal(&o->key.saddr, &in6addr_loopback, 16);
	assert_memory_equal(&o->key.daddr, &in6addr_loopback, 16);
	assert_true(flow_key_format(&o->key, buf, sizeof(buf)) > 0);
	snprintf(want, sizeof(want), "tcp [::1]:%u -> [::1]:%u", k.cport, k.lport);
	assert_string_equal(buf, want);
	sockdiag_close(sd);
	conn_close(&k);
}

static void sockdiag_open__other_namespace__does_not_see_flow(void **state)
{
	static struct nstest_obs l;
	char err[256] = "", text[64];
	struct flow_sel sel;
	struct sockdiag *sd;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	snprintf(text, sizeof(text), "tcp 127.0.0.1 port %u", k.lport);
	assert_int_equal(flow_sel_parse(text, &sel, err, sizeof(err)), 0);
	sd = sockdiag_open(host_ns, err, sizeof(err));
	assert_non_null(sd);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	sockdiag_close(sd);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	sockdiag_close(sd);
	conn_close(&k);
}

static void sockdiag_inode_owner__own_socket__finds_own_pid(void **state)
{
	char comm[64] = "", want[64] = "";
	struct conn k;
	struct stat st;
	int pid = 0;
	FILE *f;

	(void)state;
	conn_open(&k, AF_INET);
	assert_int_equal(fstat(k.s, &st), 0);
	assert_int_equal(sockdiag_inode_owner(st.st_ino, &pid, comm, sizeof(comm)), 0);
	assert_int_equal(pid, getpid());
	f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(want, sizeof(want), f));
	fclose(f);
	want[strcspn(want, "\n")] = '\0';
	assert_string_equal(comm, want);
	conn_close(&k);
}

static void sockdiag_inode_owner__unknown_inode__enoent(void **state)
{
	int pid = 12345;

	(void)state;
	assert_int_equal(sockdiag_inode_owner(0xfffffffffff1ull, &pid, NULL, 0), -ENOENT);
	assert_int_equal(pid, 12345);
	assert_int_equal(sockdiag_inode_owner(0, &pid, NULL, 0), -EINVAL);
}

/* A SOCK_DIAG_BY_FAMILY message as inet_diag builds it: an IPv4 socket
 * 10.0.0.1:5000 -> 10.0.0.2:6000, ESTABLISHED, 7 bytes unread. */
static size_t craft_diag(char *buf, size_t len)
{
	struct inet_diag_msg *m;
	struct nlmsghdr *nlh;

	memset(buf, 0, len);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_MULTI;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->idiag_family = AF_INET;
	m->idiag_state = 1;
	m->id.idiag_sport = htons(5000);
	m->id.idiag_dport = htons(6000);
	inet_pton(AF_INET, "10.0.0.1", &m->id.idiag_src[0]);
	inet_pton(AF_INET, "10.0.0.2", &m->id.idiag_dst[0]);
	m->idiag_rqueue = 7;
	m->idiag_inode = 4242;
	mnl_attr_put_u8(nlh, INET_DIAG_SHUTDOWN, 0);
	return nlh->nlmsg_len;
}

static void sockdiag_parse__crafted_reply__flow_then_hostile_lengths_refused(void **state)
{
	static const uint32_t lens[] = { 0x80000001u, 0x8000000fu, 0xffffffffu };
	static struct nstest_obs l;
	char buf[512] __attribute__((aligned(8)));
	struct flow_sel sel;
	size_t len;
	char err[128];

	(void)state;
	len = craft_diag(buf, sizeof(buf));
	l.n = 0;
	assert_int_equal(sockdiag_parse(buf, len, NULL, 0, 1000000000ull, nstest_collect, &l), 1);
	assert_int_equal(l.n, 1);
	assert_int_equal(ntohs(l.o[0].key.sport), 5000);
	assert_int_equal(l.o[0].unread, 7);
	assert_int_equal(l.o[0].inode, 4242);
	assert_int_equal(flow_sel_parse("tcp port 7000", &sel, err, sizeof(err)), 0);
	assert_int_equal(sockdiag_parse(buf, len, &sel, 1, 1, nstest_collect, &l), 0);
	assert_int_equal(sockdiag_parse(buf, len - 4, NULL, 0, 1, nstest_collect, &l), -EBADMSG);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		void *g;

		((struct nlmsghdr *)buf)->nlmsg_len = lens[i];
		g = guardbuf_new(buf, len);
		assert_non_null(g);
		l.n = 0;
		assert_int_equal(sockdiag_parse(g, len, NULL, 0, 1, nstest_collect, &l), -EBADMSG);
		assert_int_equal(l.n, 0);
		guardbuf_free(g, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sockdiag_poll__unread_data__reports_exact_bytes),
		cmocka_unit_test(sockdiag_poll__selector_other_port__not_emitted),
		cmocka_unit_test(sockdiag_poll__ipv6_flow__native_key),
		cmocka_unit_test(sockdiag_open__other_namespace__does_not_see_flow),
		cmocka_unit_test(sockdiag_inode_owner__own_socket__finds_own_pid),
		cmocka_unit_test(sockdiag_inode_owner__unknown_inode__enoent),
		cmocka_unit_test(sockdiag_parse__crafted_reply__flow_then_hostile_lengths_refused),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
