/* Unit tests: flowtrack (tc eBPF flow tracker and its loader).
 * Runs as root in a private network namespace (unshare in group setup);
 * the tracker is attached to that namespace's lo, where every frame is seen
 * once on egress (by the sending end's entry, as tx) and once on ingress (by
 * the receiving end's entry, as rx), so counts are exact per entry. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/loop.h"
#include "nstest.h"
#include "collectors/flowtrack.h"
#include "collectors/flowtrack_api.h"
#include "collectors/flows.h"
#include "collectors/flowsel.h"
#include "collectors/flowsrc.h"
#include "lib/netns.h"

static char state_dir[64];
static char netns_name[64];
static int bpf_ok;
static char bpf_why[256];

/* Output of a shell command (in our namespace). */
static const char *sh(const char *fmt, ...)
{
	static char out[8192];
	char cmd[512];
	va_list ap;
	size_t n = 0, r;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = '\0';
	p = popen(cmd, "r");
	if (!p)
		return out;
	while (n < sizeof(out) - 1 && (r = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	pclose(p);
	return out;
}

static int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		perror("test_flowtrack: private network namespace (needs root)");
		return -1;
	}
	if (system("ip link set lo up") != 0)
		return -1;
	snprintf(state_dir, sizeof(state_dir), "/tmp/flowtrack-test-%d", getpid());
	if (mkdir(state_dir, 0700) < 0)
		return -1;
	flowtrack_set_state_dir(state_dir);
	bpf_ok = flowtrack_supported(bpf_why, sizeof(bpf_why)) == 0;
	if (!bpf_ok)
		fprintf(stderr, "test_flowtrack: BPF unavailable, tests skipped: %s\n", bpf_why);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (netns_name[0])
		sh("ip netns del %s 2>/dev/null", netns_name);
	sh("rm -rf %s", state_dir);
	return 0;
}

static int udp_sock(int family, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &a->sin_addr);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		inet_pton(AF_INET6, addr, &a->sin6_addr);
		sl = sizeof(*a);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	return fd;
}

static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	return ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				       : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Send n datagrams of len bytes from a to b, and receive them at b. */
static void udp_xfer(int a, int b, unsigned n, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char buf[2048];
	unsigned i;

	assert_true(len <= sizeof(buf));
	memset(buf, 'u', sizeof(buf));
	assert_int_equal(getsockname(b, (struct sockaddr *)&ss, &sl), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(sendto(a, buf, len, 0, (struct sockaddr *)&ss, sl), (ssize_t)len);
	for (i = 0; i < n; i++)
		assert_int_equal(recv(b, buf, sizeof(buf), 0), (ssize_t)len);
}

static const struct flow_obs *find(const struct nstest_obs *l, uint8_t proto, uint16_t lport,
				   uint16_t rport)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (l->o[i].key.proto == proto && ntohs(l->o[i].key.sport) == lport &&
		    ntohs(l->o[i].key.dport) == rport)
			return &l->o[i];
	return NULL;
}

static struct flowtrack *attach_lo(const struct flow_sel *sel, unsigned nsel)
{
	char err[512] = "";
	struct flowtrack *ft = flowtrack_attach(-1, 1, sel, nsel, 0, err, sizeof(err));

	if (!ft)
		fail_msg("flowtrack_attach lo: %s", err);
	return ft;
}

static void flowtrack_poll__udp_v4_datagrams__exact_frames_each_way(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *c, *s;
	struct flowtrack *ft;
	uint64_t t0, t1;
	int cfd, sfd;
	uint16_t cp, sp;

	(void)state;
	if (!bpf_ok)
		skip();
	cfd = udp_sock(AF_INET, "127.0.0.1");
	sfd = udp_sock(AF_INET, "127.0.0.1");
	cp = local_port(cfd);
	sp = local_port(sfd);
	ft = attach_lo(NULL, 0);
	t0 = loop_mono_ns();
	udp_xfer(cfd, sfd, 7, 100);
	udp_xfer(sfd, cfd, 3, 50);
	t1 = loop_mono_ns();
	assert_true(flowtrack_poll(ft, nstest_collect, &l) >= 2);
	c = find(&l, IPPROTO_UDP, cp, sp);
	s = find(&l, IPPROTO_UDP, sp, cp);
	assert_non_null(c);
	assert_non_null(s);
	assert_int_equal(c->src, FLOW_SRC_BPF);
	assert_true(IN6_IS_ADDR_V4MAPPED(&c->key.saddr));
	assert_int_equal(c->key.daddr.s6_addr[12], 127);
	/* frame = 14 Ethernet + 20 IPv4 + 8 UDP + payload */
	assert_int_equal(c->tx_msgs, 7);
	assert_int_equal(c->tx_bytes, 7 * (14 + 20 + 8 + 100));
	assert_int_equal(c->rx_msgs, 3);
	assert_int_equal(c->rx_bytes, 3 * (14 + 20 + 8 + 50));
	assert_int_equal(s->rx_msgs, 7);
	assert_int_equal(s->rx_bytes, 7 * (14 + 20 + 8 + 100));
	assert_int_equal(s->tx_msgs, 3);
	assert_int_equal(s->tx_bytes, 3 * (14 + 20 + 8 + 50));
	assert_true(c->last_tx_ns >= t0 && c->last_tx_ns <= t1);
	assert_true(c->last_rx_ns >= c->last_tx_ns && c->last_rx_ns <= t1);
	assert_int_equal(c->state, 0);  /* no TCP flags on UDP */
	flowtrack_detach(ft);
	close(cfd);
	close(sfd);
}

static void flowtrack_poll__udp_v6_datagrams__native_key(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *c;
	struct flowtrack *ft;
	int cfd, sfd;

	(void)state;
	if (!bpf_ok)
		skip();
	cfd = udp_sock(AF_INET6, "::1");
	sfd = udp_sock(AF_INET6, "::1");
	ft = attach_lo(NULL, 0);
	udp_xfer(cfd, sfd, 4, 10);
	assert_true(flowtrack_poll(ft, nstest_collect, &l) >= 2);
	c = find(&l, IPPROTO_UDP, local_port(cfd), local_port(sfd));
	assert_non_null(c);
	assert_memory_equal(&c->key.saddr, &in6addr_loopback, 16);
	assert_memory_equal(&c->key.daddr, &in6addr_loopback, 16);
	assert_int_equal(c->tx_msgs, 4);
	assert_int_equal(c->tx_bytes, 4 * (14 + 40 + 8 + 10));
	assert_int_equal(c->rx_msgs, 0);
	flowtrack_detach(ft);
	close(cfd);
	close(sfd);
}

static void flowtrack_poll__tcp_exchange__both_ends_agree_with_flags(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *c = NULL, *s = NULL;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	struct flowtrack *ft;
	int lfd, cfd, sfd, i;
	uint16_t cp, sp;
	char buf[64];

	(void)state;
	if (!bpf_ok)
		skip();
	ft = attach_lo(NULL, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &sl), 0);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	sfd = accept(lfd, NULL, NULL);
	assert_true(sfd >= 0);
	sp = ntohs(a.sin_port);
	cp = local_port(cfd);
	for (i = 0; i < 5; i++) {
		assert_int_equal(write(cfd, "ping", 4), 4);
		assert_int_equal(read(sfd, buf, 4), 4);
		assert_int_equal(write(sfd, "pong!", 5), 5);
		assert_int_equal(read(cfd, buf, 5), 5);
	}
	close(cfd);
	assert_int_equal(read(sfd, buf, sizeof(buf)), 0);
	close(sfd);
	for (i = 0; i < 100; i++) {
		l.n = 0;
		assert_true(flowtrack_poll(ft, nstest_collect, &l) >= 2);
		c = find(&l, IPPROTO_TCP, cp, sp);
		s = find(&l, IPPROTO_TCP, sp, cp);
		if (c && s && c->tx_msgs == s->rx_msgs && s->tx_msgs == c->rx_msgs &&
		    (c->state & FT_STATE_FIN_RX) && (s->state & FT_STATE_FIN_RX))
			break;
		nstest_msleep(10);
	}
	assert_non_null(c);
	assert_non_null(s);
	/* Every frame one end sent, the other end received (lo). */
	assert_int_equal(c->tx_msgs, s->rx_msgs);
	assert_int_equal(c->tx_bytes, s->rx_bytes);
	assert_int_equal(s->tx_msgs, c->rx_msgs);
	assert_int_equal(s->tx_bytes, c->rx_bytes);
	/* SYN, 5 data, FIN at least from the client; same from the server. */
	assert_true(c->tx_msgs >= 7);
	assert_true(s->tx_msgs >= 7);
	assert_true(c->tx_bytes >= 7 * 54 + 5 * 4);
	assert_int_equal(c->state & (FT_STATE_SYN_TX | FT_STATE_SYN_RX | FT_STATE_FIN_TX |
				     FT_STATE_FIN_RX | FT_STATE_RST_TX | FT_STATE_RST_RX),
			 FT_STATE_SYN_TX | FT_STATE_SYN_RX | FT_STATE_FIN_TX | FT_STATE_FIN_RX);
	assert_int_equal(s->state, FT_STATE_SYN_TX | FT_STATE_SYN_RX | FT_STATE_FIN_TX |
				   FT_STATE_FIN_RX);
	flowtrack_detach(ft);
	close(lfd);
}

static void flowtrack_attach__port_and_addr_selectors__others_not_tracked(void **state)
{
	static struct nstest_obs l;
	struct flow_sel sel[2];
	struct flowtrack *ft;
	int c, s1, s2, s3;
	uint16_t cp, p1, p2, p3;
	unsigned i;

	(void)state;
	if (!bpf_ok)
		skip();
	c = udp_sock(AF_INET, "127.0.0.1");
	s1 = udp_sock(AF_INET, "127.0.0.1");    /* selected by port */
	s2 = udp_sock(AF_INET, "127.0.0.1");    /* not selected */
	s3 = udp_sock(AF_INET, "127.0.0.2");    /* selected by address */
	cp = local_port(c);
	p1 = local_port(s1);
	p2 = local_port(s2);
	p3 = local_port(s3);
	memset(sel, 0, sizeof(sel));
	sel[0].proto = IPPROTO_UDP;
	sel[0].port_lo = sel[0].port_hi = p1;
	sel[1].proto = IPPROTO_UDP;
	sel[1].family = AF_INET;
	inet_pton(AF_INET6, "::ffff:127.0.0.2", &sel[1].addr);
	sel[1].prefix = 128;
	ft = attach_lo(sel, 2);
	udp_xfer(c, s1, 2, 10);
	udp_xfer(c, s2, 3, 10);
	udp_xfer(c, s3, 4, 10);
	assert_int_equal(flowtrack_poll(ft, nstest_collect, &l), 4);
	assert_non_null(find(&l, IPPROTO_UDP, cp, p1));
	assert_non_null(find(&l, IPPROTO_UDP, p1, cp));
	assert_int_equal(find(&l, IPPROTO_UDP, cp, p3)->tx_msgs, 4);
	assert_int_equal(find(&l, IPPROTO_UDP, p3, cp)->rx_msgs, 4);
	for (i = 0; i < l.n; i++) {
		assert_int_not_equal(ntohs(l.o[i].key.sport), p2);
		assert_int_not_equal(ntohs(l.o[i].key.dport), p2);
	}
	flowtrack_detach(ft);
	close(c);
	close(s1);
	close(s2);
	close(s3);
}

static void flowtrack_attach__eight_selectors_v6_prefix__only_matching_tracked(void **state)
{
	static const char *const text[7][2] = {
		{ "tcp", NULL }, { "udp", "10.0.0.0/8" }, { "udp", "fd00::/8" },
		{ "udp", "::1/128" },   /* right address, wrong port below */
		{ "tcp", "::1/127" }, { "udp", "fe80::/10" }, { "udp", "127.0.0.2/32" },
	};
	static struct nstest_obs l;
	struct flow_sel sel[FLOWTRACK_MAX_SEL];
	struct flowtrack *ft;
	int c4, s4, c6, s6;
	unsigned i;

	(void)state;
	if (!bpf_ok)
		skip();
	c4 = udp_sock(AF_INET, "127.0.0.1");
	s4 = udp_sock(AF_INET, "127.0.0.1");
	c6 = udp_sock(AF_INET6, "::1");
	s6 = udp_sock(AF_INET6, "::1");
	memset(sel, 0, sizeof(sel));
	for (i = 0; i < 7; i++) {
		sel[i].proto = text[i][0][0] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
		if (text[i][1]) {
			char a[64];
			int v4 = strchr(text[i][1], ':') == NULL;

			snprintf(a, sizeof(a), "%s%s", v4 ? "::ffff:" : "", text[i][1]);
			*strchr(a, '/') = '\0';
			sel[i].family = v4 ? AF_INET : AF_INET6;
			assert_int_equal(inet_pton(AF_INET6, a, &sel[i].addr), 1);
			sel[i].prefix = (uint8_t)(atoi(strchr(text[i][1], '/') + 1) + (v4 ? 96 : 0));
		}
	}
	sel[3].port_lo = sel[3].port_hi = 1;
	/* The one that matches: IPv6 ::/127 (holds ::1), UDP, the server port. */
	sel[7].proto = IPPROTO_UDP;
	sel[7].family = AF_INET6;
	sel[7].prefix = 127;
	sel[7].port_lo = local_port(s6);
	sel[7].port_hi = local_port(s6);
	ft = attach_lo(sel, 8);
	udp_xfer(c4, s4, 2, 10);
	udp_xfer(c6, s6, 3, 10);
	assert_int_equal(flowtrack_poll(ft, nstest_collect, &l), 2);
	assert_int_equal(find(&l, IPPROTO_UDP, local_port(c6), local_port(s6))->tx_msgs, 3);
	assert_int_equal(find(&l, IPPROTO_UDP, local_port(s6), local_port(c6))->rx_msgs, 3);
	flowtrack_detach(ft);
	close(c4);
	close(s4);
	close(c6);
	close(s6);
}

/* A "we created the qdisc" marker file is in the state directory. */
static int marker_exists(void)
{
	return sh("ls -A %s", state_dir)[0] != '\0';
}

static void flowtrack_detach__qdisc_created_by_us__filters_and_qdisc_gone(void **state)
{
	struct flowtrack *ft;

	(void)state;
	if (!bpf_ok)
		skip();
	assert_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	ft = attach_lo(NULL, 0);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	assert_non_null(strstr(sh("tc filter show dev lo egress"), "ft_egress"));
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_true(marker_exists());
	flowtrack_detach(ft);
	assert_string_equal(sh("tc filter show dev lo ingress"), "");
	assert_string_equal(sh("tc filter show dev lo egress"), "");
	assert_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_false(marker_exists());
}

/* A foreign filter (prio 7, handle 1) that passes everything. */
static void add_other_filter(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = 1, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = 1, .priority = 7);
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "other", "GPL", insns, 2, NULL);
	assert_true(fd >= 0);
	o.prog_fd = fd;
	assert_int_equal(bpf_tc_attach(&hook, &o), 0);
	close(fd);
}

static void flowtrack_detach__preexisting_qdisc_with_filter__qdisc_and_filter_kept(void **state)
{
	struct flowtrack *ft;
	const char *out;

	(void)state;
	if (!bpf_ok)
		skip();
	assert_int_equal(system("tc qdisc add dev lo clsact"), 0);
	add_other_filter();
	ft = attach_lo(NULL, 0);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	assert_false(marker_exists());
	flowtrack_detach(ft);
	out = sh("tc filter show dev lo ingress");
	assert_non_null(strstr(out, "pref 7 "));
	assert_null(strstr(out, "ft_ingress"));
	assert_string_equal(sh("tc filter show dev lo egress"), "");
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_int_equal(system("tc qdisc del dev lo clsact"), 0);
}

static void flowtrack_detach__created_then_foreign_filter_added__qdisc_kept(void **state)
{
	struct flowtrack *ft;

	(void)state;
	if (!bpf_ok)
		skip();
	ft = attach_lo(NULL, 0);
	add_other_filter();
	flowtrack_detach(ft);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "pref 7 "));
	assert_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_false(marker_exists());
	assert_int_equal(system("tc qdisc del dev lo clsact"), 0);
}

static void flowtrack_detach__interface_deleted__no_error_marker_removed(void **state)
{
	char err[512] = "";
	struct flowtrack *ft;
	int ifindex;

	(void)state;
	if (!bpf_ok)
		skip();
	assert_int_equal(system("ip link add ftA type veth peer name ftB"), 0);
	ifindex = (int)if_nametoindex("ftA");
	assert_true(ifindex > 0);
	ft = flowtrack_attach(-1, ifindex, NULL, 0, 128, err, sizeof(err));
	if (!ft)
		fail_msg("attach ftA: %s", err);
	assert_non_null(strstr(sh("tc filter show dev ftA egress"), "ft_egress"));
	assert_true(marker_exists());
	assert_int_equal(system("ip link del ftA"), 0);
	flowtrack_detach(ft);
	assert_false(marker_exists());
}

static void flowtrack_cleanup_stale__killed_attacher__filters_and_qdisc_removed(void **state)
{
	char err[512] = "";
	pid_t pid;
	int st;

	(void)state;
	if (!bpf_ok)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[512];

		if (!flowtrack_attach(-1, 1, NULL, 0, 0, e, sizeof(e)))
			_exit(3);
		raise(SIGKILL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	assert_non_null(strstr(sh("tc filter show dev lo egress"), "ft_egress"));
	assert_true(marker_exists());

	assert_int_equal(flowtrack_cleanup_stale(-1, 1, err, sizeof(err)), 2);
	assert_string_equal(sh("tc filter show dev lo ingress"), "");
	assert_string_equal(sh("tc filter show dev lo egress"), "");
	assert_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_false(marker_exists());
	/* Nothing left: a second run removes nothing. */
	assert_int_equal(flowtrack_cleanup_stale(-1, 1, err, sizeof(err)), 0);
}

static void flowtrack_cleanup_stale__foreign_filter__left_alone(void **state)
{
	char err[512] = "";

	(void)state;
	if (!bpf_ok)
		skip();
	assert_int_equal(system("tc qdisc add dev lo clsact"), 0);
	add_other_filter();
	assert_int_equal(flowtrack_cleanup_stale(-1, 1, err, sizeof(err)), 0);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "pref 7 "));
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	assert_int_equal(system("tc qdisc del dev lo clsact"), 0);
}

static void flowtrack_attach__other_namespace__filters_land_there(void **state)
{
	struct flowtrack *ft;
	char err[512] = "", path[128];
	int nsfd;

	(void)state;
	if (!bpf_ok)
		skip();
	snprintf(netns_name, sizeof(netns_name), "flowtrack-test-%d", getpid());
	snprintf(path, sizeof(path), "ip netns add %s", netns_name);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "/run/netns/%s", netns_name);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0);
	ft = flowtrack_attach(nsfd, 1, NULL, 0, 64, err, sizeof(err));
	if (!ft)
		fail_msg("attach in %s: %s", netns_name, err);
	close(nsfd);    /* the tracker keeps its own reference */
	assert_non_null(strstr(sh("ip netns exec %s tc filter show dev lo ingress", netns_name),
			       "ft_ingress"));
	assert_string_equal(sh("tc filter show dev lo ingress"), "");
	flowtrack_detach(ft);
	assert_string_equal(sh("ip netns exec %s tc filter show dev lo ingress", netns_name), "");
	assert_null(strstr(sh("ip netns exec %s tc qdisc show dev lo", netns_name), "clsact"));
	sh("ip netns del %s", netns_name);
	netns_name[0] = '\0';
}

static void flowtrack_attach__bogus_ifindex__fails_with_message(void **state)
{
	struct flow_sel sel[9];
	char err[512] = "";

	(void)state;
	assert_null(flowtrack_attach(-1, 99999, NULL, 0, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "ifindex 99999"));
	assert_non_null(strstr(err, strerror(ENODEV)));
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");

	memset(sel, 0, sizeof(sel));
	err[0] = '\0';
	assert_null(flowtrack_attach(-1, 1, sel, 9, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "9 flow selectors"));
	err[0] = '\0';
	assert_int_equal(flowtrack_cleanup_stale(-1, 99999, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "ifindex 99999"));
}

/* The ops table on a veth into a test namespace: open finds the peer's
 * ifindex from its name, clears stale filters and attaches with the
 * selectors; poll counts the datagrams that reached the peer; close takes
 * the filters and the qdisc away. */
static void flow_src_bpf_ops__veth_test_namespace__frames_counted_then_detached(void **state)
{
	static struct nstest_obs l;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9999) };
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "p0", .ifname = "ftv1" };
	const struct flow_obs *o;
	struct flow_sel sel;
	char err[256], buf[64];
	int nsfd, rfd, tfd, pid = (int)getpid();

	(void)state;
	assert_string_equal(flow_src_bpf_ops.name, "bpf");
	assert_int_equal(flow_src_bpf_ops.kind, FLOW_SRC_BPF);
	assert_int_equal(flow_src_bpf_ops.host, 0);
	if (!bpf_ok)
		skip();
	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_veth(nsfd, "ftv0", "10.77.8.1", "ftv1", "10.77.8.2"), 0);
	inet_pton(AF_INET, "10.77.8.2", &to.sin_addr);
	rfd = netns_socket(nsfd, AF_INET, SOCK_DGRAM, 0);
	assert_true(rfd >= 0);
	assert_int_equal(bind(rfd, (struct sockaddr *)&to, sizeof(to)), 0);
	tfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(tfd >= 0);

	assert_int_equal(flow_sel_parse("udp port 9999", &sel, err, sizeof(err)), 0);
	ctx.netns_fd = nsfd;
	ctx.sel = &sel;
	ctx.nsel = 1;
	if (s.ops->open(&s, &ctx) < 0)
		fail_msg("open: %s", s.err);
	assert_ptr_equal(s.ops, &flow_src_bpf_ops);
	memset(&sel, 0, sizeof(sel));           /* open took its own copy */
	assert_non_null(strstr(sh("nsenter --net=/proc/%d/fd/%d tc filter show dev ftv1 ingress",
				  pid, nsfd), "ft_ingress"));
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sendto(tfd, "ping", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
		assert_int_equal(recv(rfd, buf, sizeof(buf), 0), 4);
	}
	l.n = 0;
	assert_int_equal(s.ops->poll(&s, nstest_collect, &l), 1);
	o = find(&l, IPPROTO_UDP, 9999, local_port(tfd));
	assert_non_null(o);
	assert_int_equal(o->src, FLOW_SRC_BPF);
	assert_int_equal(o->rx_msgs, 5);
	assert_int_equal(o->rx_bytes, 5 * (14 + 20 + 8 + 4));
	assert_int_equal(o->tx_msgs, 0);
	s.ops->close(&s);
	assert_null(s.priv);
	assert_string_equal(sh("nsenter --net=/proc/%d/fd/%d tc filter show dev ftv1 ingress",
			       pid, nsfd), "");
	assert_null(strstr(sh("nsenter --net=/proc/%d/fd/%d tc qdisc show dev ftv1", pid, nsfd),
			   "clsact"));
	/* an interface that is not there: a message, nothing attached */
	ctx.ifname = "nosuch0";
	assert_true(s.ops->open(&s, &ctx) < 0);
	assert_non_null(strstr(s.err, "nosuch0"));
	assert_null(s.priv);
	close(tfd);
	close(rfd);
	close(nsfd);
	sh("ip link del ftv0 2>/dev/null");
}

/* The map read in batches and key by key gives the same flows, also when
 * it holds more than a batch. */
static void flowtrack_poll__many_flows_batch_and_walk__same_observations(void **state)
{
	static struct nstest_obs a, b;
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct flowtrack *ft;
	uint64_t batches = 0, walks = 0;
	int fd;

	(void)state;
	if (!bpf_ok)
		skip();
	fd = udp_sock(AF_INET, "127.0.0.1");
	ft = attach_lo(NULL, 0);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	/* one datagram to each of 200 ports: a flow each way per port */
	for (int i = 0; i < 200; i++) {
		to.sin_port = htons((uint16_t)(21000 + i));
		assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	}
	a.n = b.n = 0;
	assert_int_equal(flowtrack_poll(ft, nstest_collect, &a), 400);
	flowtrack_stats(ft, NULL, &batches, &walks);
	assert_true(batches >= 2);              /* 400 flows: more than one batch */
	assert_int_equal(walks, 0);
	flowtrack_set_batch(ft, 0);
	assert_int_equal(flowtrack_poll(ft, nstest_collect, &b), 400);
	flowtrack_stats(ft, NULL, NULL, &walks);
	assert_int_equal(walks, 1);
	for (unsigned i = 0; i < a.n; i++) {
		const struct flow_obs *x = &a.o[i], *y;

		y = find(&b, x->key.proto, ntohs(x->key.sport), ntohs(x->key.dport));
		assert_non_null(y);
		assert_memory_equal(&x->key, &y->key, sizeof(x->key));
		assert_int_equal(x->tx_msgs, y->tx_msgs);
		assert_int_equal(x->rx_msgs, y->rx_msgs);
		assert_int_equal(x->last_rx_ns, y->last_rx_ns);
	}
	flowtrack_detach(ft);
	close(fd);
}

/* TCP-only selectors: the tracker's flows are evidence, read every
 * refresh_ns; with UDP admitted, every poll. */
static void flow_src_bpf_ops__tcp_only_selectors__map_read_every_refresh(void **state)
{
	static struct nstest_obs l;
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "lo", .ifname = "lo", .netns_fd = -1 };
	const uint64_t ms = 1000000ull, t = 5000 * ms;
	struct flow_sel sel;
	char err[128];
	int fd;

	(void)state;
	if (!bpf_ok)
		skip();
	assert_int_equal(flow_sel_parse("tcp port 1-65535", &sel, err, sizeof(err)), 0);
	ctx.sel = &sel;
	ctx.nsel = 1;
	if (s.ops->open(&s, &ctx) < 0)
		fail_msg("open: %s", s.err);
	s.poll_ns = 50 * ms;
	s.refresh_ns = 100 * ms;
	s.now_ns = t;
	assert_true(s.ops->poll(&s, nstest_collect, &l) >= 0);
	assert_false(s.skipped);
	s.now_ns = t + 50 * ms;
	assert_int_equal(s.ops->poll(&s, nstest_collect, &l), 0);
	assert_true(s.skipped);
	s.now_ns = t + 100 * ms;
	assert_true(s.ops->poll(&s, nstest_collect, &l) >= 0);
	assert_false(s.skipped);
	s.ops->close(&s);

	/* UDP admitted: every poll reads the map, and sees the datagram */
	assert_int_equal(flow_sel_parse("udp port 21999", &sel, err, sizeof(err)), 0);
	if (s.ops->open(&s, &ctx) < 0)
		fail_msg("open: %s", s.err);
	s.poll_ns = 50 * ms;
	s.refresh_ns = 100 * ms;
	fd = udp_sock(AF_INET, "127.0.0.1");
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(21999) };

		inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
		assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
		s.now_ns = t + (uint64_t)i * 50 * ms;
		l.n = 0;
		assert_true(s.ops->poll(&s, nstest_collect, &l) >= 1);
		assert_false(s.skipped);
		assert_non_null(find(&l, IPPROTO_UDP, local_port(fd), 21999));
	}
	s.ops->close(&s);
	close(fd);
}

/* ---- the program's parse, in place and header by header ---- */

/* Ethernet (+ a VLAN tag) + IPv4 (+ 4 bytes of options) + UDP to
 * 10.1.0.2:dport from 10.1.0.1:4000; or IPv6 (+ a hop-by-hop header) + UDP
 * from fd00::1 to fd00::2. Returns the length. */
static size_t craft(unsigned char *b, int v6, int vlan, int opts, int frag_later,
		    uint16_t dport)
{
	size_t off = 12, ipo, l4o;

	memset(b, 0, 256);
	if (vlan) {
		b[off++] = 0x81; b[off++] = 0x00;       /* 802.1Q */
		b[off++] = 0x00; b[off++] = 0x07;       /* VID 7 */
	}
	b[off++] = v6 ? 0x86 : 0x08;
	b[off++] = v6 ? 0xdd : 0x00;
	ipo = off;
	if (!v6) {
		b[ipo] = (uint8_t)(0x40 | (opts ? 6 : 5));
		b[ipo + 8] = 64;
		b[ipo + 9] = IPPROTO_UDP;
		if (frag_later)
			b[ipo + 7] = 0x10;              /* fragment offset 16 */
		inet_pton(AF_INET, "10.1.0.1", b + ipo + 12);
		inet_pton(AF_INET, "10.1.0.2", b + ipo + 16);
		l4o = ipo + (opts ? 24 : 20);
		if (opts)
			b[ipo + 20] = 1;                /* NOPs */
	} else {
		b[ipo] = 0x60;
		b[ipo + 6] = opts ? 0 : IPPROTO_UDP;   /* next: hop-by-hop or UDP */
		b[ipo + 7] = 64;
		inet_pton(AF_INET6, "fd00::1", b + ipo + 8);
		inet_pton(AF_INET6, "fd00::2", b + ipo + 24);
		l4o = ipo + 40;
		if (opts) {
			b[l4o] = IPPROTO_UDP;           /* hop-by-hop: next, length 0 */
			l4o += 8;
		}
	}
	b[l4o] = 4000 >> 8; b[l4o + 1] = 4000 & 0xff;
	b[l4o + 2] = (uint8_t)(dport >> 8); b[l4o + 3] = (uint8_t)dport;
	b[l4o + 5] = 8 + 10;
	if (!v6) {
		b[ipo + 2] = 0;
		b[ipo + 3] = (uint8_t)(l4o - ipo + 8 + 10);
	} else {
		b[ipo + 5] = (uint8_t)(l4o - ipo - 40 + 8 + 10);
	}
	return l4o + 8 + 10;
}

/* Each kind of frame lands on its flow, whether the program reads it in
 * place or header by header; a later fragment is skipped. */
static void flowtrack_test_run__frames_in_place_and_header_by_header__same_flows(void **state)
{
	static const struct { int v6, vlan, opts, frag; uint16_t port; } f[] = {
		{ 0, 0, 0, 0, 30001 },  /* in place */
		{ 0, 1, 0, 0, 30002 },  /* VLAN, in place */
		{ 0, 0, 1, 0, 30003 },  /* IPv4 options: header by header */
		{ 1, 0, 0, 0, 30004 },  /* IPv6, in place */
		{ 1, 1, 1, 0, 30005 },  /* VLAN + IPv6 hop-by-hop: header by header */
		{ 0, 0, 0, 1, 30006 },  /* a later fragment: not counted */
	};
	static struct nstest_obs l;
	unsigned char pkt[256];
	struct flowtrack *ft;
	unsigned ns;

	(void)state;
	if (!bpf_ok)
		skip();
	ft = attach_lo(NULL, 0);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		size_t len = craft(pkt, f[i].v6, f[i].vlan, f[i].opts, f[i].frag, f[i].port);

		assert_int_equal(flowtrack_test_run(ft, 0, pkt, len, 3, &ns), 0);
	}
	l.n = 0;
	assert_int_equal(flowtrack_poll(ft, nstest_collect, &l), 5);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		/* ingress: local = the destination */
		const struct flow_obs *o = find(&l, IPPROTO_UDP, f[i].port, 4000);

		if (f[i].frag) {
			assert_null(o);
			continue;
		}
		assert_non_null(o);
		assert_int_equal(o->rx_msgs, 3);
		assert_int_equal(o->tx_msgs, 0);
		assert_int_equal(!!IN6_IS_ADDR_V4MAPPED(&o->key.saddr), !f[i].v6);
		assert_int_equal(o->key.saddr.s6_addr[15], 2);
		assert_int_equal(o->key.daddr.s6_addr[15], 1);
	}
	flowtrack_detach(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flowtrack_poll__udp_v4_datagrams__exact_frames_each_way),
		cmocka_unit_test(flowtrack_poll__udp_v6_datagrams__native_key),
		cmocka_unit_test(flowtrack_poll__tcp_exchange__both_ends_agree_with_flags),
		cmocka_unit_test(flowtrack_attach__port_and_addr_selectors__others_not_tracked),
		cmocka_unit_test(flowtrack_attach__eight_selectors_v6_prefix__only_matching_tracked),
		cmocka_unit_test(flowtrack_detach__qdisc_created_by_us__filters_and_qdisc_gone),
		cmocka_unit_test(flowtrack_detach__preexisting_qdisc_with_filter__qdisc_and_filter_kept),
		cmocka_unit_test(flowtrack_detach__created_then_foreign_filter_added__qdisc_kept),
		cmocka_unit_test(flowtrack_detach__interface_deleted__no_error_marker_removed),
		cmocka_unit_test(flowtrack_cleanup_stale__killed_attacher__filters_and_qdisc_removed),
		cmocka_unit_test(flowtrack_cleanup_stale__foreign_filter__left_alone),
		cmocka_unit_test(flowtrack_attach__other_namespace__filters_land_there),
		cmocka_unit_test(flowtrack_attach__bogus_ifindex__fails_with_message),
		cmocka_unit_test(flow_src_bpf_ops__veth_test_namespace__frames_counted_then_detached),
		cmocka_unit_test(flowtrack_poll__many_flows_batch_and_walk__same_observations),
		cmocka_unit_test(flow_src_bpf_ops__tcp_only_selectors__map_read_every_refresh),
		cmocka_unit_test(flowtrack_test_run__frames_in_place_and_header_by_header__same_flows),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
