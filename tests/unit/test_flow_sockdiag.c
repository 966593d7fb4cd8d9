/* Unit tests: flow_sockdiag (INET_DIAG TCP sockets, selectors, key format).
 * Runs as root in a private network namespace (unshare in group setup). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/loop.h"
#include "nstest.h"
#include "collectors/flow_sockdiag.h"

static int host_ns = -1;





static int group_setup(void **state)
{
	(void)state;
	host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (host_ns < 0 || unshare(CLONE_NEWNET) < 0) {
		perror("test_flow_sockdiag: private network namespace (needs root)");
		return -1;
	}
	if (system("ip link set lo up") != 0) {
		fprintf(stderr, "test_flow_sockdiag: ip link set lo up failed\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (host_ns >= 0)
		close(host_ns);
	return 0;
}

/* A connected TCP pair over loopback: c = client, s = accepted server end. */
struct conn {
	int l, c, s;
	uint16_t lport, cport;  /* host order */
};

static void conn_open(struct conn *k, int family)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		sl = sizeof(*a);
	}
	k->l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(k->l >= 0);
	setsockopt(k->l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(k->l, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(listen(k->l, 4), 0);
	assert_int_equal(getsockname(k->l, (struct sockaddr *)&ss, &sl), 0);
	k->c = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(k->c >= 0);
	assert_int_equal(connect(k->c, (struct sockaddr *)&ss, sl), 0);
	k->s = accept(k->l, NULL, NULL);
	assert_true(k->s >= 0);
	k->lport = family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				     : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	sl = sizeof(ss);
	assert_int_equal(getsockname(k->c, (struct sockaddr *)&ss, &sl), 0);
	k->cport = family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				     : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void conn_close(struct conn *k)
{
	close(k->c);
	close(k->s);
	close(k->l);
}

static const struct flow_obs *find(const struct nstest_obs *l, uint16_t lport, uint16_t rport)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (ntohs(l->o[i].key.sport) == lport && ntohs(l->o[i].key.dport) == rport)
			return &l->o[i];
	return NULL;
}

static int poll_into(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		     struct nstest_obs *l)
{
	char err[256] = "";
	int n;

	l->n = 0;
	n = sockdiag_poll(sd, sel, nsel, nstest_collect, l, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "sockdiag_poll: %s\n", err);
	return n;
}

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

static void flow_sel_parse__good_inputs__fields_set(void **state)
{
	struct flow_sel s;
	struct in6_addr a;
	char err[256];

	(void)state;
	assert_int_equal(flow_sel_parse("tcp", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, IPPROTO_TCP);
	assert_int_equal(s.family, 0);
	assert_int_equal(s.port_lo, 0);

	assert_int_equal(flow_sel_parse("tcp 10.0.0.9/24", &s, err, sizeof(err)), 0);
	assert_int_equal(s.family, AF_INET);
	assert_int_equal(s.prefix, 120);
	inet_pton(AF_INET6, "::ffff:10.0.0.0", &a);
	assert_memory_equal(&s.addr, &a, 16);

	assert_int_equal(flow_sel_parse("udp port 11111", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, IPPROTO_UDP);
	assert_int_equal(s.port_lo, 11111);
	assert_int_equal(s.port_hi, 11111);

	assert_int_equal(flow_sel_parse("tcp 10.77.0.2 port 11111-11120", &s, err, sizeof(err)), 0);
	assert_int_equal(s.prefix, 128);
	inet_pton(AF_INET6, "::ffff:10.77.0.2", &a);
	assert_memory_equal(&s.addr, &a, 16);
	assert_int_equal(s.port_lo, 11111);
	assert_int_equal(s.port_hi, 11120);

	assert_int_equal(flow_sel_parse("any", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, 0);
	assert_int_equal(s.family, 0);
	assert_int_equal(s.port_lo + s.port_hi, 0);

	assert_int_equal(flow_sel_parse("  port 80  tcp fd00::1:2/64 ", &s, err, sizeof(err)), 0);
	assert_int_equal(s.family, AF_INET6);
	assert_int_equal(s.prefix, 64);
	inet_pton(AF_INET6, "fd00::", &a);
	assert_memory_equal(&s.addr, &a, 16);
	assert_int_equal(s.port_lo, 80);
}

static void flow_sel_parse__bad_inputs__error_names_token(void **state)
{
	static const struct {
		const char *text, *token;
	} bad[] = {
		{ "tcpx", "'tcpx'" },
		{ "tcp 10.0.0.300", "'10.0.0.300'" },
		{ "tcp 10.0.0.0/33", "'10.0.0.0/33'" },
		{ "tcp ::1/129", "'::1/129'" },
		{ "udp port 70000", "'70000'" },
		{ "udp port 0", "'0'" },
		{ "udp port 20-10", "'20-10'" },
		{ "udp port 5x", "'5x'" },
		{ "tcp port", "'port'" },
		{ "tcp udp", "'udp'" },
		{ "tcp 10.0.0.1 10.0.0.2", "'10.0.0.2'" },
		{ "", "empty" },
		{ "   ", "empty" },
	};
	struct flow_sel s;
	char err[256];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(flow_sel_parse(bad[i].text, &s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].token))
			fail_msg("'%s': error '%s' does not name %s", bad[i].text, err, bad[i].token);
	}
}

static struct flow_key mkkey(const char *s, unsigned sp, const char *d, unsigned dp, uint8_t proto)
{
	struct flow_key k;
	struct in_addr a4;

	memset(&k, 0, sizeof(k));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		k.saddr.s6_addr[10] = k.saddr.s6_addr[11] = 0xff;
		memcpy(&k.saddr.s6_addr[12], &a4, 4);
		inet_pton(AF_INET, d, &a4);
		k.daddr.s6_addr[10] = k.daddr.s6_addr[11] = 0xff;
		memcpy(&k.daddr.s6_addr[12], &a4, 4);
	} else {
		inet_pton(AF_INET6, s, &k.saddr);
		inet_pton(AF_INET6, d, &k.daddr);
	}
	k.sport = htons((uint16_t)sp);
	k.dport = htons((uint16_t)dp);
	k.proto = proto;
	return k;
}

static void flow_sel_match__selectors__either_end_and_any(void **state)
{
	struct flow_key k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11111, IPPROTO_TCP);
	struct flow_key k6 = mkkey("fd00::1", 40000, "fd00::2", 11111, IPPROTO_TCP);
	struct flow_sel s[2];
	char err[256];

	(void)state;
	assert_int_equal(flow_sel_match(NULL, 0, &k), 1);
	assert_int_equal(flow_sel_parse("tcp 10.77.0.2 port 11111-11120", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	k.proto = IPPROTO_UDP;
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k = mkkey("10.77.0.2", 11115, "10.77.0.9", 5, IPPROTO_TCP);    /* reversed ends */
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11121, IPPROTO_TCP);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k = mkkey("10.77.1.2", 40000, "10.77.0.3", 11111, IPPROTO_TCP);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	assert_int_equal(flow_sel_parse("udp", &s[1], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k.proto = IPPROTO_UDP;
	assert_int_equal(flow_sel_match(s, 2, &k), 1);  /* second selector */
	assert_int_equal(flow_sel_parse("tcp 10.0.0.0/8", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k6), 0); /* IPv4 prefix, IPv6 flow */
	k.proto = IPPROTO_TCP;
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	assert_int_equal(flow_sel_parse("fd00::/120", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k6), 1);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
}

static void flow_key_format__v4_v6__text(void **state)
{
	struct flow_key k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11111, IPPROTO_TCP);
	char buf[128], small[8];

	(void)state;
	assert_int_equal(flow_key_format(&k, buf, sizeof(buf)), (int)strlen("tcp 10.77.0.1:40000 -> 10.77.0.2:11111"));
	assert_string_equal(buf, "tcp 10.77.0.1:40000 -> 10.77.0.2:11111");
	k = mkkey("fd00::1", 5, "fe80::2", 6, IPPROTO_UDP);
	flow_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "udp [fd00::1]:5 -> [fe80::2]:6");
	k.proto = 132;
	flow_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "proto 132 [fd00::1]:5 -> [fe80::2]:6");
	assert_true(flow_key_format(&k, small, sizeof(small)) > (int)sizeof(small));
	assert_string_equal(small, "proto 1");
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
		cmocka_unit_test(flow_sel_parse__good_inputs__fields_set),
		cmocka_unit_test(flow_sel_parse__bad_inputs__error_names_token),
		cmocka_unit_test(flow_sel_match__selectors__either_end_and_any),
		cmocka_unit_test(flow_key_format__v4_v6__text),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
