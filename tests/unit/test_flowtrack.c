/* Unit tests: flowtrack (tc eBPF flow tracker and its loader): what it counts.
 * Runs as root in a private network namespace (unshare in group setup);
 * the tracker is attached to that namespace's lo, where every frame is seen
 * once on egress (by the sending end's entry, as tx) and once on ingress (by
 * the receiving end's entry, as rx), so counts are exact per entry.
 * Selectors, detach and stale clean-up: test_flowtrack_attach.c. */
#include "flowtrack_test.h"
#include "lib/json.h"

#include <poll.h>
#include <sys/mman.h>

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

/* Parse the one selector text into *sel (ctx keeps pointing at it) and
 * open s on ctx. */
static void src_open_sel(struct flow_src *s, struct flow_src_ctx *ctx, struct flow_sel *sel,
			 const char *text)
{
	char err[256];

	assert_int_equal(flow_sel_parse(text, sel, err, sizeof(err)), 0);
	ctx->sel = sel;
	ctx->nsel = 1;
	if (s->ops->open(s, ctx) < 0)
		fail_msg("open: %s", s->err);
}

/* A TCP connection on lo: listener, client, accepted server end. */
static void tcp_lo_pair(int *lfd, int *cfd, int *sfd, struct sockaddr_in *a)
{
	socklen_t sl = sizeof(*a);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(*lfd, (struct sockaddr *)a, sizeof(*a)), 0);
	assert_int_equal(listen(*lfd, 1), 0);
	assert_int_equal(getsockname(*lfd, (struct sockaddr *)a, &sl), 0);
	*cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(*cfd, (struct sockaddr *)a, sizeof(*a)), 0);
	*sfd = accept(*lfd, NULL, NULL);
	assert_true(*sfd >= 0);
}

static void flowtrack_poll__tcp_exchange__both_ends_agree_with_flags(void **state)
{
	static struct nstest_obs l;
	const struct flow_obs *c = NULL, *s = NULL;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct flowtrack *ft;
	int lfd, cfd, sfd, i;
	uint16_t cp, sp;
	char buf[64];

	(void)state;
	if (!bpf_ok)
		skip();
	ft = attach_lo(NULL, 0);
	tcp_lo_pair(&lfd, &cfd, &sfd, &a);
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

/* The ops table on a veth into a test namespace: open finds the peer's
 * ifindex from its name, clears stale filters and attaches with the
 * selectors (tcx links, this kernel has them); poll counts the datagrams
 * that reached the peer; close takes the links away, no qdisc made. */
static void flow_src_bpf_ops__veth_test_namespace__frames_counted_then_detached(void **state)
{
	static struct nstest_obs l;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9999) };
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "p0", .ifname = "ftv1" };
	const struct flow_obs *o;
	struct flow_sel sel;
	char buf[64];
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

	ctx.netns_fd = nsfd;
	src_open_sel(&s, &ctx, &sel, "udp port 9999");
	assert_ptr_equal(s.ops, &flow_src_bpf_ops);
	memset(&sel, 0, sizeof(sel));           /* open took its own copy */
	assert_string_equal(tcx_progs_in(nsfd, "ftv1"), "in:ft_ingress eg:ft_egress");
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
	assert_string_equal(tcx_progs_in(nsfd, "ftv1"), "");
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
	int fd;

	(void)state;
	if (!bpf_ok)
		skip();
	ctx.hooks_always = 1;           /* on-wait: the test below */
	src_open_sel(&s, &ctx, &sel, "tcp port 1-65535");
	ctx.hooks_always = 0;
	s.sched.poll_ns = 50 * ms;
	s.sched.refresh_ns = 100 * ms;
	s.sched.now_ns = t;
	assert_true(s.ops->poll(&s, nstest_collect, &l) >= 0);
	assert_false(s.sched.skipped);
	s.sched.now_ns = t + 50 * ms;
	assert_int_equal(s.ops->poll(&s, nstest_collect, &l), 0);
	assert_true(s.sched.skipped);
	s.sched.now_ns = t + 100 * ms;
	assert_true(s.ops->poll(&s, nstest_collect, &l) >= 0);
	assert_false(s.sched.skipped);
	s.ops->close(&s);

	/* UDP admitted: every poll reads the map, and sees the datagram */
	src_open_sel(&s, &ctx, &sel, "udp port 21999");
	s.sched.poll_ns = 50 * ms;
	s.sched.refresh_ns = 100 * ms;
	fd = udp_sock(AF_INET, "127.0.0.1");
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(21999) };

		inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
		assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
		s.sched.now_ns = t + (uint64_t)i * 50 * ms;
		l.n = 0;
		assert_true(s.ops->poll(&s, nstest_collect, &l) >= 1);
		assert_false(s.sched.skipped);
		assert_non_null(find(&l, IPPROTO_UDP, local_port(fd), 21999));
	}
	s.ops->close(&s);
	close(fd);
}

/* 2 x 3 request/response exchanges over a TCP connection on lo. */
static void tcp_pingpong(int cfd, int sfd, int n)
{
	char buf[8];

	for (int i = 0; i < n; i++) {
		assert_int_equal(write(cfd, "ping", 4), 4);
		assert_int_equal(read(sfd, buf, 4), 4);
		assert_int_equal(write(sfd, "pong", 4), 4);
		assert_int_equal(read(cfd, buf, 4), 4);
	}
}

/* A poll of an on-wait source, as the detector's polls go on while the
 * hooks change (a thread changes them: flowtrack_set_hooked_bg), until
 * they are as the want says (5 s at most): the last poll's result. */
static int settle_poll(struct flow_src *s, struct nstest_obs *l)
{
	int want = s->sched.wanted_ns && s->sched.now_ns >= s->sched.wanted_ns &&
		   s->sched.now_ns - s->sched.wanted_ns < FLOW_SRC_WANT_HOLD_NS;
	int rc = -1;

	for (int i = 0; i < 500; i++) {
		rc = s->ops->poll(s, nstest_collect, l);
		if (rc < 0 || s->sched.skipped == !want)
			break;
		usleep(10000);
	}
	return rc;
}

/* TCP-only selectors, tracker_hooks on-wait (the default), on clsact: open
 * attaches and takes the filters off again (the clsact qdisc stays); they go on at
 * the first poll that says a flow waits (wanted_ns), count only what comes
 * after, and come off FLOW_SRC_WANT_HOLD_NS after the last such poll. A
 * flow the map holds from before they last came on is left out until it
 * moves again. */
static void flow_src_bpf_ops__tcp_only_on_wait__hooked_while_wanted(void **state)
{
	static struct nstest_obs l;
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "lo", .ifname = "lo", .netns_fd = -1 };
	const uint64_t ms = 1000000ull, t = 5000 * ms;
	struct sockaddr_in a = { .sin_family = AF_INET };
	const struct flow_obs *o;
	struct json_object *st;
	struct flow_sel sel;
	int lfd, cfd, sfd;

	(void)state;
	if (!bpf_ok)
		skip();
	ctx.tracker_attach = FLOWTRACK_CLSACT;     /* tcx: the test after */
	src_open_sel(&s, &ctx, &sel, "tcp port 1-65535");
	assert_null(strstr(sh("tc filter show dev lo ingress; tc filter show dev lo egress"), "ft_"));
	/* the qdisc stays: making it again would deactivate the port */
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	tcp_lo_pair(&lfd, &cfd, &sfd, &a);
	tcp_pingpong(cfd, sfd, 3);
	s.sched.poll_ns = 50 * ms;
	s.sched.refresh_ns = 150 * ms;
	/* nothing waits: no hooks, nothing read, and no poll asked for (the
	 * want that puts them on comes with a poll of its own) */
	s.sched.now_ns = t;
	l.n = 0;
	assert_int_equal(settle_poll(&s, &l), 0);
	assert_true(s.sched.skipped);
	assert_true(s.sched.next_ns == FLOW_SRC_NO_NEXT);
	/* a flow waits: hooked from this poll, every poll read */
	s.sched.wanted_ns = t;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_false(s.sched.skipped);
	assert_int_equal(s.sched.next_ns, 0);    /* hooked: every poll */
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	assert_non_null(strstr(sh("tc filter show dev lo egress"), "ft_egress"));
	assert_null(find(&l, IPPROTO_TCP, local_port(cfd), ntohs(a.sin_port)));
	tcp_pingpong(cfd, sfd, 3);
	s.sched.now_ns = t + 50 * ms;
	l.n = 0;
	assert_true(settle_poll(&s, &l) >= 2);
	assert_false(s.sched.skipped);
	o = find(&l, IPPROTO_TCP, local_port(cfd), ntohs(a.sin_port));
	assert_non_null(o);
	/* the 3 replies after the hooks went on (and their acks at most),
	 * not the 3 before */
	assert_true(o->rx_msgs >= 3 && o->rx_msgs <= 6);
	st = json_object_new_object();
	s.ops->status(&s, st);
	assert_string_equal(jx_str(st, "hooks"), "on (a watched flow waits)");
	assert_int_equal(jx_u64(st, "hooks_on"), 1);
	json_object_put(st);
	/* still within the hold: on */
	s.sched.now_ns = t + FLOW_SRC_WANT_HOLD_NS - ms;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	/* past it: off, the qdisc kept */
	s.sched.now_ns = t + FLOW_SRC_WANT_HOLD_NS;
	assert_int_equal(settle_poll(&s, &l), 0);
	assert_true(s.sched.skipped);
	assert_true(s.sched.next_ns == FLOW_SRC_NO_NEXT);
	assert_null(strstr(sh("tc filter show dev lo ingress; tc filter show dev lo egress"), "ft_"));
	assert_non_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	st = json_object_new_object();
	s.ops->status(&s, st);
	assert_string_equal(jx_str(st, "hooks"), "off until a watched flow waits");
	assert_int_equal(jx_u64(st, "hooks_off"), 1);
	json_object_put(st);
	/* someone removed the qdisc meanwhile: made again when wanted, and
	 * still ours to remove at close */
	sh("tc qdisc del dev lo clsact");
	assert_null(strstr(sh("tc qdisc show dev lo"), "clsact"));
	/* wanted again: on again; the connection, idle since, is not news.
	 * Quiet first: the client's ACK of the last reply, delayed (40 ms
	 * and more in the pingpong mode these exchanges put it in), would
	 * pass the new hooks and move it (a make check once) */
	usleep(250000);
	s.sched.wanted_ns = s.sched.now_ns = t + 2 * FLOW_SRC_WANT_HOLD_NS;
	l.n = 0;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_non_null(strstr(sh("tc filter show dev lo egress"), "ft_egress"));
	assert_null(find(&l, IPPROTO_TCP, local_port(cfd), ntohs(a.sin_port)));
	tcp_pingpong(cfd, sfd, 1);
	s.sched.now_ns += 50 * ms;
	l.n = 0;
	assert_true(settle_poll(&s, &l) >= 1);
	assert_non_null(find(&l, IPPROTO_TCP, local_port(cfd), ntohs(a.sin_port)));
	s.ops->close(&s);
	assert_null(strstr(sh("tc filter show dev lo ingress; tc filter show dev lo egress"), "ft_"));
	assert_null(strstr(sh("tc qdisc show dev lo"), "clsact"));

	/* tracker_hooks = always: on from the open, whatever waits */
	ctx.hooks_always = 1;
	if (s.ops->open(&s, &ctx) < 0)
		fail_msg("open: %s", s.err);
	s.sched.wanted_ns = 0;
	s.sched.now_ns = t;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_non_null(strstr(sh("tc filter show dev lo ingress"), "ft_ingress"));
	s.ops->close(&s);
	close(sfd);
	close(cfd);
	close(lfd);
}

/* The same on tcx links: off at open (no program, no qdisc), both links
 * on from the poll that says a flow waits, closed after the hold; status
 * says how. */
static void flow_src_bpf_ops__tcp_only_on_wait_tcx__links_while_wanted(void **state)
{
	static struct nstest_obs l;
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "lo", .ifname = "lo", .netns_fd = -1 };
	const uint64_t ms = 1000000ull, t = 5000 * ms;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct json_object *st;
	struct flow_sel sel;
	int lfd, cfd, sfd;

	(void)state;
	if (!bpf_ok)
		skip();
	src_open_sel(&s, &ctx, &sel, "tcp port 1-65535");
	assert_string_equal(tcx_progs(1), "");
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");
	tcp_lo_pair(&lfd, &cfd, &sfd, &a);
	s.sched.poll_ns = 50 * ms;
	s.sched.refresh_ns = 150 * ms;
	s.sched.now_ns = t;
	assert_int_equal(settle_poll(&s, &l), 0);
	assert_true(s.sched.skipped);
	s.sched.wanted_ns = t;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_string_equal(tcx_progs(1), "in:ft_ingress eg:ft_egress");
	tcp_pingpong(cfd, sfd, 3);
	s.sched.now_ns = t + 50 * ms;
	l.n = 0;
	assert_true(settle_poll(&s, &l) >= 2);
	assert_non_null(find(&l, IPPROTO_TCP, local_port(cfd), ntohs(a.sin_port)));
	st = json_object_new_object();
	s.ops->status(&s, st);
	assert_string_equal(jx_str(st, "attach"), "tcx links");
	assert_string_equal(jx_str(st, "hooks"), "on (a watched flow waits)");
	json_object_put(st);
	s.sched.now_ns = t + FLOW_SRC_WANT_HOLD_NS;
	assert_int_equal(settle_poll(&s, &l), 0);
	assert_string_equal(tcx_progs(1), "");
	assert_string_equal(sh("tc qdisc show dev lo | grep clsact"), "");
	/* and on again */
	s.sched.wanted_ns = s.sched.now_ns = t + 2 * FLOW_SRC_WANT_HOLD_NS;
	assert_true(settle_poll(&s, &l) >= 0);
	assert_string_equal(tcx_progs(1), "in:ft_ingress eg:ft_egress");
	st = json_object_new_object();
	s.ops->status(&s, st);
	assert_int_equal(jx_u64(st, "hooks_on"), 2);
	assert_int_equal(jx_u64(st, "hooks_off"), 1);
	json_object_put(st);
	s.ops->close(&s);
	assert_string_equal(tcx_progs(1), "");
	close(sfd);
	close(cfd);
	close(lfd);
}

/* Hooks on and off ten times while the port sends a datagram every 50 us:
 * not one is lost. reopen: the source closed and opened again each time
 * (a daemon's stop and start), else the on-wait hooks toggled by polls. A
 * tracker that made and removed the clsact qdisc each time (clsact and
 * reopen) loses some: qdisc_graft() deactivates the interface (its queues
 * drop what is sent meanwhile) for clsact too (net/sched/sch_api.c);
 * filters come and go without that, and tcx links never touch the queues
 * (kernel/bpf/tcx.c tcx_link_attach publishes the program array with an
 * RCU pointer swap). */
static void hooks_under_traffic(enum flowtrack_attach_mode mode, int reopen)
{
	static struct nstest_obs l;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9998) };
	struct flow_src s = { .ops = &flow_src_bpf_ops };
	struct flow_src_ctx ctx = { .port_name = "p0", .ifname = "ftw1" };
	const uint64_t ms = 1000000ull, t = 5000 * ms;
	struct flow_sel sel;
	char buf[64];
	int nsfd, rfd, tfd, pfd[2], big = 64 << 20;
	long sent = 0, got = 0, before;
	volatile long *shared;
	pid_t pid;

	if (!bpf_ok)
		skip();
	sh("ip link del ftw0 2>/dev/null");     /* a failed run's */
	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_veth(nsfd, "ftw0", "10.77.9.1", "ftw1", "10.77.9.2"), 0);
	inet_pton(AF_INET, "10.77.9.1", &to.sin_addr);
	rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(rfd >= 0);
	assert_int_equal(setsockopt(rfd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)), 0);
	assert_int_equal(bind(rfd, (struct sockaddr *)&to, sizeof(to)), 0);
	tfd = netns_socket(nsfd, AF_INET, SOCK_DGRAM, 0);      /* sends from ftw1 */
	assert_true(tfd >= 0);
	ctx.netns_fd = nsfd;
	ctx.tracker_attach = mode;
	ctx.hooks_always = reopen;
	/* toggled: opened before the traffic (on clsact the qdisc is made
	 * now, a graft, and stays) */
	if (!reopen) {
		src_open_sel(&s, &ctx, &sel, "tcp port 1-65535");
		s.sched.poll_ns = 50 * ms;
		s.sched.refresh_ns = 150 * ms;
	}
	shared = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(shared != MAP_FAILED);
	*shared = 0;
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* until the parent closes its end of the pipe (EOF here) */
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };

		close(pfd[1]);
		while (poll(&pf, 1, 0) == 0) {
			if (sendto(tfd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1)
				(*shared)++;
			usleep(50);
		}
		_exit(0);
	}
	close(pfd[0]);
	while (*shared < 100)                   /* the sender is going */
		usleep(1000);
	for (int i = 0; i < 10; i++) {
		before = *shared;
		if (reopen) {
			src_open_sel(&s, &ctx, &sel, "tcp port 1-65535");
		} else {
			s.sched.now_ns = t + (uint64_t)i * 2 * FLOW_SRC_WANT_HOLD_NS;
			s.sched.wanted_ns = s.sched.now_ns;                        /* on */
			assert_true(settle_poll(&s, &l) >= 0);
		}
		while (*shared < before + 50)   /* sent while on, whatever the load */
			usleep(1000);
		before = *shared;
		if (reopen) {
			s.ops->close(&s);
		} else {
			s.sched.now_ns += FLOW_SRC_WANT_HOLD_NS;             /* off */
			assert_int_equal(settle_poll(&s, &l), 0);
		}
		while (*shared < before + 50)
			usleep(1000);
	}
	/* clsact: the qdisc stays while the source is open; tcx makes none */
	assert_true(!strstr(sh("nsenter --net=/proc/%d/fd/%d tc qdisc show dev ftw1",
			       (int)getpid(), nsfd), "clsact") == (mode == FLOWTRACK_TCX || reopen));
	close(pfd[1]);                          /* stop */
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	sent = *shared;
	munmap((void *)shared, sizeof(long));
	while (recv(rfd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		got++;
	print_message("%s, %s 10 times: %ld datagrams sent meanwhile, %ld arrived\n",
		      flowtrack_attach_name(mode), reopen ? "opened and closed" : "hooks on and off",
		      sent, got);
	assert_int_equal(got, sent);
	if (!reopen)
		s.ops->close(&s);
	close(tfd);
	close(rfd);
	close(nsfd);
	sh("ip link del ftw0 2>/dev/null");
}

static void flow_src_bpf_ops__clsact_hooks_toggled_under_traffic__nothing_lost(void **state)
{
	(void)state;
	hooks_under_traffic(FLOWTRACK_CLSACT, 0);
}

static void flow_src_bpf_ops__tcx_hooks_toggled_under_traffic__nothing_lost(void **state)
{
	(void)state;
	hooks_under_traffic(FLOWTRACK_TCX, 0);
}

/* The daemon's start and stop: on tcx, nothing lost either. */
static void flow_src_bpf_ops__tcx_opened_and_closed_under_traffic__nothing_lost(void **state)
{
	(void)state;
	hooks_under_traffic(FLOWTRACK_AUTO, 1);
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
		cmocka_unit_test(flow_src_bpf_ops__veth_test_namespace__frames_counted_then_detached),
		cmocka_unit_test(flowtrack_poll__many_flows_batch_and_walk__same_observations),
		cmocka_unit_test(flow_src_bpf_ops__tcp_only_selectors__map_read_every_refresh),
		cmocka_unit_test(flow_src_bpf_ops__tcp_only_on_wait__hooked_while_wanted),
		cmocka_unit_test(flow_src_bpf_ops__tcp_only_on_wait_tcx__links_while_wanted),
		cmocka_unit_test(flow_src_bpf_ops__clsact_hooks_toggled_under_traffic__nothing_lost),
		cmocka_unit_test(flow_src_bpf_ops__tcx_hooks_toggled_under_traffic__nothing_lost),
		cmocka_unit_test(flow_src_bpf_ops__tcx_opened_and_closed_under_traffic__nothing_lost),
		cmocka_unit_test(flowtrack_test_run__frames_in_place_and_header_by_header__same_flows),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
