/* Unit tests: flowtrack attach and detach: selectors limit what is tracked;
 * tcx links leave no qdisc, go with a killed attacher and run after the
 * tcx programs already there; on clsact the qdisc and filters are removed
 * only when ours, stale ones of a killed attacher are cleaned up; other
 * namespaces and bad ifindexes. Same private
 * network namespace as test_flowtrack.c (flowtrack_test.h). Needs root. */
#include "flowtrack_test.h"

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
	ft = attach_lo_mode(NULL, 0, FLOWTRACK_CLSACT);
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
	ft = attach_lo_mode(NULL, 0, FLOWTRACK_CLSACT);
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
	ft = attach_lo_mode(NULL, 0, FLOWTRACK_CLSACT);
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
	ft = flowtrack_attach(-1, ifindex, NULL, 0, 128, FLOWTRACK_CLSACT, err, sizeof(err));
	if (!ft)
		fail_msg("attach ftA: %s", err);
	assert_non_null(strstr(sh("tc filter show dev ftA egress"), "ft_egress"));
	assert_true(marker_exists());
	assert_int_equal(system("ip link del ftA"), 0);
	flowtrack_detach(ft);
	assert_false(marker_exists());
}

/* A child attaches to lo the way mode says (with tcx: and checks that the
 * links are there) and is killed with SIGKILL, leaving what it leaves. */
static void attach_and_get_killed(enum flowtrack_attach_mode mode)
{
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[512];

		if (!flowtrack_attach(-1, 1, NULL, 0, 0, mode, e, sizeof(e)))
			_exit(3);
		if (mode == FLOWTRACK_TCX && strcmp(tcx_progs(1), "in:ft_ingress eg:ft_egress"))
			_exit(5);
		raise(SIGKILL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void flowtrack_cleanup_stale__killed_attacher__filters_and_qdisc_removed(void **state)
{
	char err[512] = "";

	(void)state;
	if (!bpf_ok)
		skip();
	attach_and_get_killed(FLOWTRACK_CLSACT);
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
	ft = flowtrack_attach(nsfd, 1, NULL, 0, 64, FLOWTRACK_CLSACT, err, sizeof(err));
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
	assert_null(flowtrack_attach(-1, 99999, NULL, 0, 0, FLOWTRACK_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "ifindex 99999"));
	assert_non_null(strstr(err, strerror(ENODEV)));
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");

	memset(sel, 0, sizeof(sel));
	err[0] = '\0';
	assert_null(flowtrack_attach(-1, 1, sel, 9, 0, FLOWTRACK_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "9 flow selectors"));
	err[0] = '\0';
	assert_null(flowtrack_attach(-1, 1, NULL, 0, 0, (enum flowtrack_attach_mode)7, err,
				     sizeof(err)));
	assert_non_null(strstr(err, "attach mode 7"));
	/* tcx only, a missing interface: refused before any hook, named */
	err[0] = '\0';
	assert_null(flowtrack_attach(-1, 99999, NULL, 0, 0, FLOWTRACK_TCX, err, sizeof(err)));
	assert_non_null(strstr(err, "ifindex 99999"));
	err[0] = '\0';
	assert_int_equal(flowtrack_cleanup_stale(-1, 99999, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "ifindex 99999"));
}

/* ---- tcx links ---- */

/* This kernel has tcx (6.6+): auto takes it. Both links, no clsact qdisc
 * (a graft would stop the port's queues for a moment) and no marker, and
 * nothing left after detach. */
static void flowtrack_attach__auto_on_tcx_kernel__links_no_qdisc(void **state)
{
	struct flowtrack *ft;

	(void)state;
	if (!bpf_ok)
		skip();
	ft = attach_lo(NULL, 0);
	assert_int_equal(flowtrack_attach_mode(ft), FLOWTRACK_TCX);
	assert_string_equal(flowtrack_attach_name(flowtrack_attach_mode(ft)), "tcx");
	assert_string_equal(tcx_progs(1), "in:ft_ingress eg:ft_egress");
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");
	assert_string_equal(sh("tc filter show dev lo ingress"), "");
	assert_false(marker_exists());
	assert_true(flowtrack_hooked(ft));
	flowtrack_detach(ft);
	assert_string_equal(tcx_progs(1), "");
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");
}

/* A killed attacher: its links went with its descriptors, nothing stale. */
static void flowtrack_attach__tcx_attacher_killed__links_gone_with_it(void **state)
{
	char err[512] = "";

	(void)state;
	if (!bpf_ok)
		skip();
	attach_and_get_killed(FLOWTRACK_TCX);
	/* the file's release detaches it (bpf_link_release -> tcx_link_release) */
	assert_string_equal(tcx_progs(1), "");
	assert_false(marker_exists());
	assert_int_equal(flowtrack_cleanup_stale(-1, 1, err, sizeof(err)), 0);
}

/* A program that drops every frame (TCX_DROP), named name. */
static int dropper(const char *name)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 2 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, name, "GPL", insns, 2, NULL);

	assert_true(fd >= 0);
	return fd;
}

/* The tracker counts what reaches the host: a tcx program that drops on
 * ingress runs before it, whether it was there first (the tracker appends)
 * or came later with BPF_F_BEFORE (as the test emulator's "NIC" does). A
 * tracker that put itself first would count the dropped frames. */
static void flowtrack_attach__tcx_dropper_before__dropped_frames_not_counted(void **state)
{
	LIBBPF_OPTS(bpf_link_create_opts, before, .flags = 1u << 3);  /* BPF_F_BEFORE */
	static struct nstest_obs l;
	const struct flow_obs *o;
	struct flowtrack *ft;
	char buf[64];
	int prog, link, c, srv;

	(void)state;
	if (!bpf_ok)
		skip();
	c = udp_sock(AF_INET, "127.0.0.1");
	srv = udp_sock(AF_INET, "127.0.0.1");
	for (int later = 0; later < 2; later++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		prog = dropper(later ? "drop_later" : "drop_first");
		if (!later)
			link = bpf_link_create(prog, 1, (enum bpf_attach_type)46, NULL);
		ft = attach_lo(NULL, 0);
		if (later)
			link = bpf_link_create(prog, 1, (enum bpf_attach_type)46, &before);
		assert_true(link >= 0);
		assert_string_equal(tcx_progs(1), later ? "in:drop_later in:ft_ingress eg:ft_egress" :
					      "in:drop_first in:ft_ingress eg:ft_egress");
		assert_int_equal(getsockname(srv, (struct sockaddr *)&ss, &sl), 0);
		for (int i = 0; i < 5; i++)
			assert_int_equal(sendto(c, "x", 1, 0, (struct sockaddr *)&ss, sl), 1);
		assert_true(recv(srv, buf, sizeof(buf), MSG_DONTWAIT) < 0);    /* all dropped */
		l.n = 0;
		assert_true(flowtrack_poll(ft, nstest_collect, &l) >= 1);
		o = find(&l, IPPROTO_UDP, local_port(c), local_port(srv));
		assert_non_null(o);
		assert_int_equal(o->tx_msgs, 5);                /* egress: sent */
		assert_null(find(&l, IPPROTO_UDP, local_port(srv), local_port(c)));  /* never arrived */
		flowtrack_detach(ft);
		close(link);
		close(prog);
		assert_string_equal(tcx_progs(1), "");
	}
	close(c);
	close(srv);
}

/* In another namespace: the links are made there (tcx_link_attach looks the
 * ifindex up in the caller's namespace, so the loader enters it). */
static void flowtrack_attach__tcx_other_namespace__links_land_there(void **state)
{
	struct flowtrack *ft;
	char err[512] = "", path[128];
	int nsfd, saved;

	(void)state;
	if (!bpf_ok)
		skip();
	snprintf(netns_name, sizeof(netns_name), "flowtrack-tcx-%d", getpid());
	assert_int_equal(nstest_sh("ip netns add %s && ip -n %s link set lo up", netns_name,
				   netns_name), 0);
	snprintf(path, sizeof(path), "/run/netns/%s", netns_name);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0);
	ft = flowtrack_attach(nsfd, 1, NULL, 0, 64, FLOWTRACK_TCX, err, sizeof(err));
	if (!ft)
		fail_msg("attach in %s: %s", netns_name, err);
	assert_string_equal(tcx_progs(1), "");
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	assert_string_equal(tcx_progs(1), "in:ft_ingress eg:ft_egress");
	assert_int_equal(netns_leave(saved), 0);
	/* off and on again from here: the links are bound to their device */
	assert_int_equal(flowtrack_set_hooked(ft, 0, err, sizeof(err)), 0);
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	assert_string_equal(tcx_progs(1), "");
	assert_int_equal(netns_leave(saved), 0);
	assert_int_equal(flowtrack_set_hooked(ft, 1, err, sizeof(err)), 0);
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	assert_string_equal(tcx_progs(1), "in:ft_ingress eg:ft_egress");
	assert_int_equal(netns_leave(saved), 0);
	flowtrack_detach(ft);
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	assert_string_equal(tcx_progs(1), "");
	assert_int_equal(netns_leave(saved), 0);
	close(nsfd);
	sh("ip netns del %s", netns_name);
	netns_name[0] = '\0';
}

/* flowtrack_set_hooked_bg until it is done (5 s at most): its result. */
static int hooked_bg_wait(struct flowtrack *ft, int on, char *err, size_t errlen)
{
	int rc;

	for (int i = 0; i < 500; i++) {
		rc = flowtrack_set_hooked_bg(ft, on, err, errlen);
		if (rc != -EINPROGRESS)
			return rc;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Hooks off and on by a thread, on a veth inside a namespace of its own:
 * the call does not wait for the kernel (each link made or closed waits
 * out a grace period), says so, and the hooks are as asked once it says
 * done; the thread's setns() leaves this thread in its own namespace. A
 * change still in flight when the tracker goes is waited for. A device
 * gone: the thread's error, hooks off. */
static void flowtrack_set_hooked_bg__off_on_by_a_thread__as_asked(void **state)
{
	char err[512] = "", here[64] = "", after[64] = "", path[128], ns[64];
	struct flowtrack *ft;
	int nsfd, ifindex, saved;

	(void)state;
	if (!bpf_ok)
		skip();
	snprintf(ns, sizeof(ns), "flowtrack-bg-%d", getpid());
	assert_int_equal(nstest_sh("ip netns add %s && ip -n %s link add ftG type veth peer "
				   "name ftH && ip -n %s link set ftG up", ns, ns, ns), 0);
	snprintf(netns_name, sizeof(netns_name), "%s", ns);     /* teardown's */
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0);
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	ifindex = (int)if_nametoindex("ftG");
	assert_int_equal(netns_leave(saved), 0);
	assert_true(ifindex > 0);
	ft = flowtrack_attach(nsfd, ifindex, NULL, 0, 128, FLOWTRACK_TCX, err, sizeof(err));
	if (!ft)
		fail_msg("attach ftG in %s: %s", ns, err);
	assert_true(readlink("/proc/thread-self/ns/net", here, sizeof(here) - 1) > 0);
	assert_int_equal(flowtrack_set_hooked_bg(ft, 0, err, sizeof(err)), -EINPROGRESS);
	assert_true(flowtrack_hooked(ft));      /* until the thread is done */
	assert_int_equal(hooked_bg_wait(ft, 0, err, sizeof(err)), 0);
	assert_false(flowtrack_hooked(ft));
	assert_string_equal(tcx_progs_in(nsfd, "ftG"), "");
	/* as it is: nothing to do, no thread */
	assert_int_equal(flowtrack_set_hooked_bg(ft, 0, err, sizeof(err)), 0);
	/* on: made inside the port's namespace, by the thread */
	assert_int_equal(flowtrack_set_hooked_bg(ft, 1, err, sizeof(err)), -EINPROGRESS);
	assert_int_equal(hooked_bg_wait(ft, 1, err, sizeof(err)), 0);
	assert_true(flowtrack_hooked(ft));
	assert_string_equal(tcx_progs_in(nsfd, "ftG"), "in:ft_ingress eg:ft_egress");
	assert_true(readlink("/proc/thread-self/ns/net", after, sizeof(after) - 1) > 0);
	assert_string_equal(here, after);
	/* off asked, the tracker detached with it in flight */
	assert_int_equal(flowtrack_set_hooked_bg(ft, 0, err, sizeof(err)), -EINPROGRESS);
	flowtrack_detach(ft);
	assert_string_equal(tcx_progs_in(nsfd, "ftG"), "");
	/* the device gone: on fails in the thread, and says why */
	ft = flowtrack_attach(nsfd, ifindex, NULL, 0, 128, FLOWTRACK_TCX, err, sizeof(err));
	if (!ft)
		fail_msg("attach ftG again: %s", err);
	assert_int_equal(hooked_bg_wait(ft, 0, err, sizeof(err)), 0);
	assert_int_equal(nstest_sh("ip -n %s link del ftG", ns), 0);
	err[0] = '\0';
	assert_true(hooked_bg_wait(ft, 1, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "tcx ingress link on ftG"));
	assert_false(flowtrack_hooked(ft));
	flowtrack_detach(ft);
	close(nsfd);
	sh("ip netns del %s", ns);
	netns_name[0] = '\0';
}

/* The interface goes while hooked: the kernel detached the links
 * (tcx_uninstall at unregister); closing them after is no error. */
static void flowtrack_detach__tcx_interface_deleted__no_error(void **state)
{
	char err[512] = "";
	struct flowtrack *ft;
	int ifindex;

	(void)state;
	if (!bpf_ok)
		skip();
	assert_int_equal(system("ip link add ftT type veth peer name ftU"), 0);
	ifindex = (int)if_nametoindex("ftT");
	assert_true(ifindex > 0);
	ft = flowtrack_attach(-1, ifindex, NULL, 0, 128, FLOWTRACK_TCX, err, sizeof(err));
	if (!ft)
		fail_msg("attach ftT: %s", err);
	assert_string_equal(tcx_progs(ifindex), "in:ft_ingress eg:ft_egress");
	assert_int_equal(system("ip link del ftT"), 0);
	/* hooks off and on with the device gone: off is fine, on says why */
	assert_int_equal(flowtrack_set_hooked(ft, 0, err, sizeof(err)), 0);
	assert_true(flowtrack_set_hooked(ft, 1, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "tcx ingress link on ftT"));
	assert_false(flowtrack_hooked(ft));
	flowtrack_detach(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flowtrack_attach__port_and_addr_selectors__others_not_tracked),
		cmocka_unit_test(flowtrack_set_hooked_bg__off_on_by_a_thread__as_asked),
		cmocka_unit_test(flowtrack_attach__eight_selectors_v6_prefix__only_matching_tracked),
		cmocka_unit_test(flowtrack_detach__qdisc_created_by_us__filters_and_qdisc_gone),
		cmocka_unit_test(flowtrack_detach__preexisting_qdisc_with_filter__qdisc_and_filter_kept),
		cmocka_unit_test(flowtrack_detach__created_then_foreign_filter_added__qdisc_kept),
		cmocka_unit_test(flowtrack_detach__interface_deleted__no_error_marker_removed),
		cmocka_unit_test(flowtrack_cleanup_stale__killed_attacher__filters_and_qdisc_removed),
		cmocka_unit_test(flowtrack_cleanup_stale__foreign_filter__left_alone),
		cmocka_unit_test(flowtrack_attach__other_namespace__filters_land_there),
		cmocka_unit_test(flowtrack_attach__bogus_ifindex__fails_with_message),
		cmocka_unit_test(flowtrack_attach__auto_on_tcx_kernel__links_no_qdisc),
		cmocka_unit_test(flowtrack_attach__tcx_attacher_killed__links_gone_with_it),
		cmocka_unit_test(flowtrack_attach__tcx_dropper_before__dropped_frames_not_counted),
		cmocka_unit_test(flowtrack_attach__tcx_other_namespace__links_land_there),
		cmocka_unit_test(flowtrack_detach__tcx_interface_deleted__no_error),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
