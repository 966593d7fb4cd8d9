/* Unit tests: flow_sockdiag (INET_DIAG TCP sockets): the flow-source ops
 * table, the kernel filter, known sockets between dumps (looked up alone or
 * read by the socket reader), one dump or one per family, retry-due of
 * unacked data and the paced reader. Basic polls and the reply parser:
 * test_flow_sockdiag_poll.c (sockdiag_test.h is shared).
 * Runs as root in a private network namespace (unshare in group setup). */
#include "sockdiag_test.h"


/* The ops table on a veth into a test namespace: a server socket there,
 * its client here; the source made for that namespace sees the server's
 * end only, with the selectors copied at open. */
static void close_all(const int *fd, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fd[i]);
}

static void flow_src_sock_ops__veth_test_namespace__server_end_only(void **state)
{
	static struct nstest_obs l;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(11111) };
	struct flow_src s = { .ops = &flow_src_sock_ops };
	struct flow_src_ctx ctx = { .port_name = "p0", .ifname = "sdv1" };
	struct flow_sel sel[2];
	int nsfd, ls, cs, ss, n = -1;
	char err[256];

	(void)state;
	assert_string_equal(flow_src_sock_ops.name, "sock");
	assert_int_equal(flow_src_sock_ops.kind, FLOW_SRC_SOCK);
	assert_int_equal(flow_src_sock_ops.host, 0);
	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_veth(nsfd, "sdv0", "10.77.9.1", "sdv1", "10.77.9.2"), 0);
	inet_pton(AF_INET, "10.77.9.2", &a.sin_addr);
	ls = ns_listen(nsfd, &a);
	ns_connect(ls, &a, &cs, &ss);

	assert_int_equal(flow_sel_parse("tcp port 11111", &sel[0], err, sizeof(err)), 0);
	ctx.netns_fd = nsfd;
	ctx.sel = sel;
	ctx.nsel = 1;
	assert_int_equal(s.ops->open(&s, &ctx), 0);
	assert_ptr_equal(s.ops, &flow_src_sock_ops);
	assert_non_null(s.priv);
	assert_int_equal(flow_sel_parse("udp", &sel[0], err, sizeof(err)), 0);  /* copied */
	for (int i = 0; i < 100 && n != 1; i++) {
		l.n = 0;
		n = s.ops->poll(&s, nstest_collect, &l);
		if (n != 1)
			nstest_msleep(10);
	}
	if (n < 0)
		fail_msg("poll: %s", s.err);
	assert_int_equal(n, 1);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.o[0].src, FLOW_SRC_SOCK);
	assert_int_equal(ntohs(l.o[0].key.sport), 11111);      /* the server end */
	assert_int_equal(l.o[0].key.saddr.s6_addr[15], 2);
	assert_int_equal(l.o[0].state, 1);
	s.ops->close(&s);
	assert_null(s.priv);

	/* no selectors: every flow of that namespace, still only the one */
	ctx.nsel = 0;
	ctx.sel = NULL;
	assert_int_equal(s.ops->open(&s, &ctx), 0);
	l.n = 0;
	assert_int_equal(s.ops->poll(&s, nstest_collect, &l), 1);
	s.ops->close(&s);
	close(ss);
	close(cs);
	close(ls);
	close(nsfd);
	nstest_sh("ip link del sdv0 2>/dev/null");
}

static void flow_src_sock_ops__bad_namespace__error_in_err(void **state)
{
	struct flow_src s = { .ops = &flow_src_sock_ops };
	struct flow_src_ctx ctx = { .netns_fd = 9999 };

	(void)state;
	assert_true(s.ops->open(&s, &ctx) < 0);
	assert_non_null(strstr(s.err, "sock_diag"));
	assert_null(s.priv);
}

/* The kernel filters: sockets on other ports never come back from a dump
 * (the count the source saw, not only what it emitted). */
static void sockdiag_poll__kernel_filter__other_ports_never_dumped(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct conn a, b, c;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "", text[64];

	(void)state;
	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET6);
	conn_open(&c, AF_INET);
	snprintf(text, sizeof(text), "tcp port %u", a.lport);
	assert_int_equal(flow_sel_parse(text, &sel, err, sizeof(err)), 0);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	assert_true(poll_into(sd, &sel, 1, &l) == 2);
	sockdiag_stats(sd, &st);
	assert_true(st.kernel_filter);
	assert_true(st.one_dump);
	assert_int_equal(st.dumps, 1);
	assert_int_equal(st.dumped, 2);                 /* a's two ends, nothing else */
	/* without the filter the same dump brings every socket of the namespace */
	sockdiag_opts_default(&o);
	o.no_bytecode = 1;
	sockdiag_set_opts(sd, &o);
	assert_true(poll_into(sd, &sel, 1, &l) == 2);
	sockdiag_stats(sd, &st);
	assert_false(st.kernel_filter);
	assert_true(st.dumped >= 2 + 6);
	sockdiag_close(sd);
	conn_close(&a);
	conn_close(&b);
	conn_close(&c);
}

/* Selectors that watch no TCP socket (a port of UDP flows with track =
 * sock): nothing dumped, nothing read, and no poll asked for. Fails the
 * source that said "the next poll" (0: every flow_interval, 20 polls a
 * second for nothing). With a TCP selector the next discovery is asked
 * for, a second on at the defaults. */
static void sockdiag_next_ns__no_tcp_selected__no_poll_asked(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	uint64_t t;

	(void)state;
	assert_int_equal(flow_sel_parse("udp port 5000", &sel, err, sizeof(err)), 0);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	sockdiag_set_pace(sd, 200000000ull, 50000000ull, 150000000ull);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.dumps, 0);
	assert_true(sockdiag_next_ns(sd) == UINT64_MAX);
	assert_int_equal(flow_sel_parse("tcp port 5000", &sel, err, sizeof(err)), 0);
	t = loop_mono_ns();
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	assert_true(sockdiag_next_ns(sd) >= t + SD_DISCOVER_NS - 50000000ull &&
		    sockdiag_next_ns(sd) <= loop_mono_ns() + SD_DISCOVER_NS);
	sockdiag_close(sd);
}

/* Between dumps each socket is asked for alone: new data shows at once, a
 * closed socket goes, a new one waits for the next dump. */
static void between_dumps(int no_reader)
{
	static struct nstest_obs l;
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct conn a, b, c;
	struct flow_sel sel;
	struct sockdiag *sd;
	const struct flow_obs *f;
	char err[256] = "", data[300];
	int i;

	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET6);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	sockdiag_opts_default(&o);
	o.discover_ns = 3600ull * 1000000000ull;        /* no second dump here */
	/* nor one because a lookup, timed on a loaded machine (six test
	 * programs at once under ASan), looked dearer than a dump */
	o.no_switch = 1;
	o.no_reader = no_reader;
	sockdiag_set_opts(sd, &o);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	memset(data, 'y', sizeof(data));
	assert_int_equal(write(a.c, data, sizeof(data)), (ssize_t)sizeof(data));
	f = NULL;
	for (i = 0; i < 200; i++) {
		assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
		f = find(&l, a.lport, a.cport);
		if (f && f->unread == sizeof(data))
			break;
		nstest_msleep(5);
	}
	assert_non_null(f);
	assert_int_equal(f->unread, sizeof(data));
	assert_int_equal(f->rx_bytes, sizeof(data));
	/* b closed: its ends answer ENOENT (or TIME_WAIT) and are dropped */
	conn_close(&b);
	for (i = 0; i < 200 && poll_into(sd, &sel, 1, &l) != 2; i++)
		nstest_msleep(5);
	assert_int_equal(l.n, 2);
	assert_null(find(&l, b.lport, b.cport));
	/* c is new: not seen until the next dump */
	conn_open(&c, AF_INET);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_null(find(&l, c.lport, c.cport));
	sockdiag_stats(sd, &st);
	assert_int_equal(st.dumps, 1);
	assert_true((no_reader ? st.lookups : st.lookups + st.reads) >= 4);
	if (no_reader)
		assert_int_equal(st.reads, 0);
	assert_int_equal(st.known, 2);
	sockdiag_set_opts(sd, &o);                      /* the next poll dumps */
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	assert_non_null(find(&l, c.lport, c.cport));
	assert_non_null(find(&l, c.cport, c.lport));
	sockdiag_close(sd);
	conn_close(&a);
	conn_close(&c);
}

static void sockdiag_poll__between_dumps__reads_follow_known_sockets(void **state)
{
	(void)state;
	between_dumps(0);       /* the BPF reader where it loads */
}

static void sockdiag_poll__between_dumps__lookups_follow_known_sockets(void **state)
{
	(void)state;
	between_dumps(1);       /* sock_diag lookups */
}

/* One AF_UNSPEC dump and one dump per family find the same sockets, and
 * so do the lookups after them. */
static void sockdiag_poll__one_dump_or_per_family__same_sockets(void **state)
{
	static struct nstest_obs l1, l2, l3;
	struct sockdiag_opts o;
	struct sockdiag *sd;
	struct conn a, b;
	char err[256] = "";

	(void)state;
	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET6);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	assert_true(poll_into(sd, NULL, 0, &l1) >= 4);
	assert_true(poll_into(sd, NULL, 0, &l3) >= 4);  /* lookups */
	sockdiag_opts_default(&o);
	o.per_family = 1;
	sockdiag_set_opts(sd, &o);
	assert_true(poll_into(sd, NULL, 0, &l2) >= 4);
	assert_int_equal(l1.n, l2.n);
	assert_int_equal(l1.n, l3.n);
	for (unsigned i = 0; i < l1.n; i++) {
		uint16_t lp = ntohs(l1.o[i].key.sport), rp = ntohs(l1.o[i].key.dport);

		assert_non_null(find(&l2, lp, rp));
		assert_non_null(find(&l3, lp, rp));
	}
	assert_non_null(find(&l1, b.lport, b.cport));
	assert_false(IN6_IS_ADDR_V4MAPPED(&find(&l1, b.lport, b.cport)->key.saddr));
	sockdiag_close(sd);
	conn_close(&a);
	conn_close(&b);
}

static void same_obs(const struct flow_obs *a, const struct flow_obs *b)
{
	assert_memory_equal(&a->key, &b->key, sizeof(a->key));
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->inode, b->inode);
	/* the owner too: the flow table's limits are per owner */
	assert_int_equal(a->uid_known, 1);
	assert_int_equal(b->uid_known, 1);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->tx_bytes, b->tx_bytes);
	assert_int_equal(a->rx_bytes, b->rx_bytes);
	assert_int_equal(a->tx_msgs, b->tx_msgs);
	assert_int_equal(a->rx_msgs, b->rx_msgs);
	assert_int_equal(a->unread, b->unread);
	assert_int_equal(a->unsent, b->unsent);
	assert_int_equal(a->inflight, b->inflight);
	assert_int_equal(a->retrans, b->retrans);
	/* both from jiffies: within a few ticks (HZ 100: 10 ms each) */
	assert_true(a->last_tx_ns + 40000000ull >= b->last_tx_ns &&
		    b->last_tx_ns + 40000000ull >= a->last_tx_ns);
	assert_true(a->last_rx_ns + 40000000ull >= b->last_rx_ns &&
		    b->last_rx_ns + 40000000ull >= a->last_rx_ns);
	assert_int_equal(!a->last_tx_ns, !b->last_tx_ns);
	assert_int_equal(!a->last_rx_ns, !b->last_rx_ns);
	assert_true(a->last_ack_ns + 40000000ull >= b->last_ack_ns &&
		    b->last_ack_ns + 40000000ull >= a->last_ack_ns);
	assert_int_equal(!a->last_ack_ns, !b->last_ack_ns);
	assert_int_equal(!a->unacked_since_ns, !b->unacked_since_ns);
	/* the retransmission timer: icsk_rto both ways, its due time from
	 * the last data sent (jiffies again) */
	assert_int_equal(a->rto_ns, b->rto_ns);
	assert_int_equal(!a->retry_due_ns, !b->retry_due_ns);
	assert_true(a->retry_due_ns + 40000000ull >= b->retry_due_ns &&
		    b->retry_due_ns + 40000000ull >= a->retry_due_ns);
}

/* Data the peer never acknowledges (its link went down): the dump, the
 * reader and a lookup give the same retransmission timeout and the same
 * time the next retransmission is due (the release watch waits for it). */
static void sockdiag_poll__unacked_data__same_retry_due_every_way(void **state)
{
	static struct nstest_obs dump, rd, nl;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(11112) };
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	const struct flow_obs *f;
	char err[256] = "", data[500];
	int nsfd, ls, cs, ss, one = 1, saved;
	uint64_t now;

	(void)state;
	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_veth(nsfd, "sdu0", "10.77.8.1", "sdu1", "10.77.8.2"), 0);
	inet_pton(AF_INET, "10.77.8.2", &a.sin_addr);
	ls = ns_listen(nsfd, &a);
	ns_connect(ls, &a, &cs, &ss);
	/* the peer's end goes down: what we send now leaves and stays
	 * unacknowledged, retransmitted on the timer */
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	one = system("ip link set sdu1 down");
	assert_int_equal(netns_leave(saved), 0);
	assert_int_equal(one, 0);
	memset(data, 'u', sizeof(data));
	assert_int_equal(write(cs, data, sizeof(data)), (ssize_t)sizeof(data));
	/* until it has left, unacked (at once, as measured here; waited for
	 * up to 10 s, and said if it did not) */
	for (int i = 0;; i++) {
		struct tcp_info ti = { 0 };
		socklen_t tl = sizeof(ti);

		if (!getsockopt(cs, IPPROTO_TCP, TCP_INFO, &ti, &tl) && ti.tcpi_unacked &&
		    ti.tcpi_notsent_bytes == 0)
			break;
		if (i == 1000)
			fail_msg("the data never left in 10 s: unacked %u, not sent %u bytes",
				 ti.tcpi_unacked, ti.tcpi_notsent_bytes);
		nstest_msleep(10);
	}
	assert_int_equal(flow_sel_parse("tcp port 11112", &sel, err, sizeof(err)), 0);
	/* the three ways in turn; again (up to three times) when the
	 * retransmission timer fired among them: it doubles the timeout and
	 * moves the next one, legitimately (first at 200 ms after the send,
	 * which a loaded machine's open and four polls can straddle; then
	 * 400 and 800 ms later) */
	for (int attempt = 0;; attempt++) {
		sd = sockdiag_open(-1, err, sizeof(err));
		assert_non_null(sd);
		sockdiag_stats(sd, &st);
		if (!st.reader) {
			sockdiag_close(sd);
			close(cs);
			close(ss);
			close(ls);
			close(nsfd);
			skip();
		}
		assert_int_equal(poll_into(sd, &sel, 1, &dump), 1);
		assert_int_equal(poll_into(sd, &sel, 1, &rd), 1);
		sockdiag_opts_default(&o);
		o.no_reader = 1;
		o.discover_ns = 3600ull * 1000000000ull;
		sockdiag_set_opts(sd, &o);
		assert_int_equal(poll_into(sd, &sel, 1, &nl), 1);   /* a dump */
		assert_int_equal(poll_into(sd, &sel, 1, &nl), 1);   /* a lookup */
		sockdiag_stats(sd, &st);
		assert_int_equal(st.reads, 1);
		assert_int_equal(st.lookups, 1);
		if (attempt == 2 || (dump.o[0].rto_ns == nl.o[0].rto_ns &&
				     dump.o[0].retrans == nl.o[0].retrans))
			break;
		sockdiag_close(sd);
	}
	f = &dump.o[0];
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	if (f->inflight != sizeof(data))      /* said whole: seen once, not explained */
		fail_msg("the dump: state %u, in flight %llu, unsent %llu, acked %llu, rto %llu ns, "
			 "retrans %u (the reader: in flight %llu; the lookup: %llu)", f->state,
			 (unsigned long long)f->inflight, (unsigned long long)f->unsent,
			 (unsigned long long)f->tx_bytes, (unsigned long long)f->rto_ns,
			 (unsigned)f->retrans, (unsigned long long)rd.o[0].inflight,
			 (unsigned long long)nl.o[0].inflight);
	assert_true(f->rto_ns >= 200000000ull);         /* TCP_RTO_MIN at least */
	assert_true(f->retry_due_ns > now - 100000000ull && f->retry_due_ns < now + f->rto_ns);
	same_obs(f, &rd.o[0]);
	same_obs(f, &nl.o[0]);
	sockdiag_close(sd);
	close(cs);
	close(ss);
	close(ls);
	close(nsfd);
}

/* Paced (a threshold of 200 ms, polls of 50 ms): a socket that owes
 * nothing is left out until a threshold less a poll has passed; one with
 * data its downed peer never acknowledges is read at every poll once its
 * wait is that old, and every way of reading it still gives the next
 * retransmission's time (the release watch waits for it, issue #10), the
 * first sending of what is retransmitted and the last ACK received. */
static void paced(int no_reader)
{
	char here[8], peer[8], ahere[16], apeer[16], cmd[64];
	static struct nstest_obs l;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	struct sockaddr_in me;
	socklen_t ml = sizeof(me);
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	const struct flow_obs *f;
	char err[256] = "", data[500];
	int nsfd, ls, cs, cs2, ss, ss2, one = 1, saved;
	uint16_t busy, idle;
	uint64_t now, wrote;

	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	snprintf(here, sizeof(here), "sdp%d", 2 * no_reader);
	snprintf(peer, sizeof(peer), "sdp%d", 2 * no_reader + 1);
	snprintf(ahere, sizeof(ahere), "10.77.%d.1", 9 + no_reader);
	snprintf(apeer, sizeof(apeer), "10.77.%d.2", 9 + no_reader);
	snprintf(cmd, sizeof(cmd), "ip link set %s down", peer);
	assert_int_equal(nstest_veth(nsfd, here, ahere, peer, apeer), 0);
	inet_pton(AF_INET, apeer, &a.sin_addr);
	/* a port of its own: the other variant's ends may linger (FIN_WAIT1
	 * with data a downed peer never acknowledged) */
	a.sin_port = htons((uint16_t)(11113 + no_reader));
	ls = ns_listen(nsfd, &a);
	ns_connect(ls, &a, &cs, &ss);
	ns_connect(ls, &a, &cs2, &ss2);
	assert_int_equal(getsockname(cs, (struct sockaddr *)&me, &ml), 0);
	busy = ntohs(me.sin_port);
	ml = sizeof(me);
	assert_int_equal(getsockname(cs2, (struct sockaddr *)&me, &ml), 0);
	idle = ntohs(me.sin_port);
	assert_int_equal(netns_enter(nsfd, &saved), 0);
	one = system(cmd);
	assert_int_equal(netns_leave(saved), 0);
	assert_int_equal(one, 0);
	memset(data, 'p', sizeof(data));
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		wrote = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	assert_int_equal(write(cs, data, sizeof(data)), (ssize_t)sizeof(data));
	assert_int_equal(flow_sel_parse(no_reader ? "tcp port 11114" : "tcp port 11113", &sel, err,
					sizeof(err)), 0);
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	sockdiag_opts_default(&o);
	o.discover_ns = 3600ull * 1000000000ull;        /* one dump, then reads */
	o.no_reader = no_reader;
	o.no_switch = 1;        /* a lookup timed on a loaded machine may look dearer than a dump */
	sockdiag_set_opts(sd, &o);
	sockdiag_set_pace(sd, 200000000ull, 50000000ull, 0);
	sockdiag_stats(sd, &st);
	if (!no_reader && !st.reader) {
		sockdiag_close(sd);
		close_all((int[]){ cs, cs2, ss, ss2, ls, nsfd }, 6);
		skip();
	}
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);   /* the dump: both */
	/* the next poll it needs (the detector plans its polls by it): the
	 * waiting one's, 150 ms into its wait, before the idle one's (150 ms
	 * from now) */
	{
		struct timespec ts;
		uint64_t next = sockdiag_next_ns(sd);

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		assert_true(next != 0);
		assert_true(next + 40000000ull >= wrote + 150000000ull);
		assert_true(next <= now + 150000000ull);
	}
	/* at once: the idle one is not due for 150 ms */
	assert_true(poll_into(sd, &sel, 1, &l) <= 1);
	assert_null(find(&l, idle, (uint16_t)(11113 + no_reader)));
	assert_true(sockdiag_last_unread(sd) >= 1);
	nstest_msleep(300);     /* past the idle one's due, past one RTO */
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	/* at once again: only the waiting one, its wait older than 150 ms */
	assert_int_equal(poll_into(sd, &sel, 1, &l), 1);
	assert_int_equal(sockdiag_last_unread(sd), 1);
	f = find(&l, busy, (uint16_t)(11113 + no_reader));
	assert_non_null(f);
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	/* the waiting one is due at every poll now */
	assert_true(sockdiag_next_ns(sd) != 0 && sockdiag_next_ns(sd) <= now);
	assert_int_equal(f->inflight, sizeof(data));
	assert_true(f->rto_ns >= 200000000ull);
	assert_true(f->retry_due_ns > now - 100000000ull && f->retry_due_ns < now + f->rto_ns);
	assert_true(f->last_ack_ns != 0 && f->last_ack_ns < now - 250000000ull);
	/* retransmitted at least once (the first RTO is 200 ms or more): the
	 * wait is dated from the first sending, 300 ms ago or more */
	/* the wait is never dated before the write (jiffies: within a few
	 * ticks), whether the retransmissions since left or not: the downed
	 * peer's veth has no carrier, so they may fail before leaving and
	 * move neither last_data_sent nor total_retrans, and back-dating by
	 * the timeouts alone would put it 200 ms early. (It may be dated
	 * later: when even the first sending failed, last_data_sent is the
	 * first that left; the source's pacing keeps the earliest start it
	 * saw, the dump's.) */
	assert_true(flow_obs_sock_wait_from(f) + 40000000ull >= wrote);
	assert_true(flow_obs_sock_wait_from(f) <= f->last_tx_ns);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.dumps, 1);
	assert_true(st.paced >= 2);
	if (no_reader)
		assert_int_equal(st.reads, 0);
	else
		assert_int_equal(st.lookups, 0);
	sockdiag_close(sd);
	close_all((int[]){ cs, cs2, ss, ss2, ls, nsfd }, 6);
}

static void sockdiag_poll__paced_reader__idle_left_waiting_read_with_retry_due(void **state)
{
	(void)state;
	paced(0);
}

static void sockdiag_poll__paced_lookups__idle_left_waiting_read_with_retry_due(void **state)
{
	(void)state;
	paced(1);
}

/* The BPF socket reader reads what sock_diag says: the same observation
 * from a dump, from the reader and from a lookup, for IPv4, IPv6, unread
 * data and a half-closed socket. */
static void sockdiag_poll__reader_dump_and_lookup__same_observations(void **state)
{
	static struct nstest_obs dump, rd, nl;
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct flow_sel sel[2];
	struct conn a, b;
	struct sockdiag *sd;
	char err[256] = "", data[777], text[64];

	(void)state;
	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET6);
	memset(data, 'z', sizeof(data));
	assert_int_equal(write(a.c, data, sizeof(data)), (ssize_t)sizeof(data));
	assert_int_equal(write(b.s, data, 100), 100);
	assert_int_equal(shutdown(b.c, SHUT_WR), 0);
	snprintf(text, sizeof(text), "tcp port %u", a.lport);
	assert_int_equal(flow_sel_parse(text, &sel[0], err, sizeof(err)), 0);
	snprintf(text, sizeof(text), "tcp port %u", b.lport);
	assert_int_equal(flow_sel_parse(text, &sel[1], err, sizeof(err)), 0);
	nstest_msleep(50);              /* acks and the FIN settle */
	sd = sockdiag_open(-1, err, sizeof(err));
	assert_non_null(sd);
	sockdiag_stats(sd, &st);
	if (!st.reader)
		skip();                 /* this kernel cannot (st.reader_why) */
	assert_int_equal(poll_into(sd, sel, 2, &dump), 4);
	assert_int_equal(poll_into(sd, sel, 2, &rd), 4);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.reads, 4);
	assert_int_equal(st.lookups, 0);
	sockdiag_opts_default(&o);
	o.no_reader = 1;
	sockdiag_set_opts(sd, &o);
	assert_int_equal(poll_into(sd, sel, 2, &nl), 4);    /* a dump */
	assert_int_equal(poll_into(sd, sel, 2, &nl), 4);    /* lookups */
	sockdiag_stats(sd, &st);
	assert_int_equal(st.lookups, 4);
	for (unsigned i = 0; i < dump.n; i++) {
		uint16_t lp = ntohs(dump.o[i].key.sport), rp = ntohs(dump.o[i].key.dport);

		assert_non_null(find(&rd, lp, rp));
		assert_non_null(find(&nl, lp, rp));
		same_obs(&dump.o[i], find(&rd, lp, rp));
		same_obs(&dump.o[i], find(&nl, lp, rp));
	}
	assert_int_equal(find(&rd, a.lport, a.cport)->unread, sizeof(data));
	assert_int_equal(find(&rd, b.cport, b.lport)->state, 5);     /* FIN_WAIT2 */
	assert_int_equal(find(&rd, b.cport, b.lport)->unread, 100);
	/* a closed socket: the reader drops it */
	sockdiag_opts_default(&o);
	sockdiag_set_opts(sd, &o);
	assert_int_equal(poll_into(sd, sel, 2, &rd), 4);
	conn_close(&a);
	for (int i = 0; i < 100 && poll_into(sd, sel, 2, &rd) != 2; i++)
		nstest_msleep(5);
	assert_int_equal(rd.n, 2);
	assert_null(find(&rd, a.lport, a.cport));
	sockdiag_close(sd);
	conn_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_src_sock_ops__veth_test_namespace__server_end_only),
		cmocka_unit_test(flow_src_sock_ops__bad_namespace__error_in_err),
		cmocka_unit_test(sockdiag_poll__kernel_filter__other_ports_never_dumped),
		cmocka_unit_test(sockdiag_next_ns__no_tcp_selected__no_poll_asked),
		cmocka_unit_test(sockdiag_poll__between_dumps__reads_follow_known_sockets),
		cmocka_unit_test(sockdiag_poll__between_dumps__lookups_follow_known_sockets),
		cmocka_unit_test(sockdiag_poll__one_dump_or_per_family__same_sockets),
		cmocka_unit_test(sockdiag_poll__reader_dump_and_lookup__same_observations),
		cmocka_unit_test(sockdiag_poll__unacked_data__same_retry_due_every_way),
		cmocka_unit_test(sockdiag_poll__paced_reader__idle_left_waiting_read_with_retry_due),
		cmocka_unit_test(sockdiag_poll__paced_lookups__idle_left_waiting_read_with_retry_due),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
