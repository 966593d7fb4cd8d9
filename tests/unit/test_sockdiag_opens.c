/* Unit tests: sockdiag_opens (the TCP opens of a namespace, from its
 * /proc/net/snmp) and what flow_sockdiag does with them: a discovery dumps
 * only when the namespace opened a TCP connection (or the last dump is
 * rediscover_ns old), the look after a change dumps again, known sockets
 * are read on between, and every socket is read at least once per
 * refresh_ns. Runs as root in a private network namespace (unshare in
 * group setup, sockdiag_test.h), so only its own connections move the
 * counters. */
#include "sockdiag_test.h"

#include <poll.h>
#include <sys/resource.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/flow_sockdiag_int.h"
#include "collectors/flows/sockwatch_api.h"

#include "collectors/flows/sockdiag_opens.h"

/* /proc/net/snmp as Linux 6.18 writes it (columns trimmed at the end). */
static const char snmp_text[] =
	"Ip: Forwarding DefaultTTL InReceives InHdrErrors\n"
	"Ip: 2 64 3332643 0\n"
	"Icmp: InMsgs InErrors InCsumErrors\n"
	"Icmp: 10 6 0\n"
	"IcmpMsg: InType3 OutType3\n"
	"IcmpMsg: 10 3\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails "
	"EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
	"Tcp: 1 200 120000 -1 8336 8287 10 132 0 3280257 3278758 0 0 101 0\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams\n"
	"Udp: 52247 3 0 52430\n";

static int parse(const char *text, uint64_t *v)
{
	return sd_opens_parse(text, strlen(text), v);
}

static void sd_opens_parse__kernel_text__active_plus_passive(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse(snmp_text, &v), 0);
	assert_int_equal(v, 8336 + 8287);
	/* by the names, not by position: a kernel with another column first */
	assert_int_equal(parse("Tcp: New PassiveOpens RtoMin ActiveOpens\n"
			       "Tcp: 7 5 200 11\n", &v), 0);
	assert_int_equal(v, 16);
	/* no final newline; the largest values */
	assert_int_equal(parse("Tcp: ActiveOpens PassiveOpens\nTcp: 18446744073709551615 0", &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void sd_opens_parse__not_the_kernels_text__refused(void **state)
{
	static const char *const bad[] = {
		"",
		"Udp: InDatagrams\nUdp: 1\n",                           /* no Tcp */
		"Tcp: ActiveOpens PassiveOpens\n",                      /* no values */
		"Tcp: ActiveOpens PassiveOpens\nUdp: 1 2\n",            /* values elsewhere */
		"Tcp: ActiveOpens\nTcp: 1\n",                           /* no PassiveOpens */
		"Tcp: ActiveOpens PassiveOpens\nTcp: 1\n",              /* a column short */
		"Tcp: ActiveOpens PassiveOpens\nTcp: 1 -2\n",           /* not a count */
		"Tcp: ActiveOpens PassiveOpens\nTcp: 1 2x\n",
		"Tcp: ActiveOpens PassiveOpens\nTcp: 1 18446744073709551616\n",  /* overflow */
		"Tcp: ActiveOpensX PassiveOpens\nTcp: 1 2\n",           /* a longer name */
		"Tcp:ActiveOpens PassiveOpens\nTcp:1 2\n",              /* "Tcp:" is word 0 */
	};
	uint64_t v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &v) != -EBADMSG)
			fail_msg("accepted: \"%s\"", bad[i]);
		assert_int_equal(v, 42);
	}
	assert_int_equal(sd_opens_parse(NULL, 0, &v), -EBADMSG);
	/* the length bounds the parse, not a NUL */
	assert_int_equal(sd_opens_parse(snmp_text, strstr(snmp_text, "Tcp: 1 200") - snmp_text, &v),
			 -EBADMSG);
}

/* sockstat and sockstat6 as Linux 6.18 writes them (sockstat_seq_show(),
 * sockstat6_seq_show()): the TCP line's inuse, by its tag and word. */
static void sd_inuse_parse__kernel_text__tcp_inuse(void **state)
{
	static const char v4[] = "sockets: used 8\n"
				 "TCP: inuse 17 orphan 0 tw 3 alloc 21 mem 26\n"
				 "UDP: inuse 4 mem 0\n";
	static const char v6[] = "TCP6: inuse 5\nUDP6: inuse 0\nUDPLITE6: inuse 0\n";
	static const char *const bad[] = {
		"", "UDP: inuse 4\n", "TCP: used 4\n", "TCP: inuse\n", "TCP: inuse -1\n",
		"TCP: inuse 4x\n", "TCP:inuse 4\n", "TCP6: inuse 4\n",
	};
	uint64_t v = 42;

	(void)state;
	assert_int_equal(sd_inuse_parse(v4, sizeof(v4) - 1, 0, &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(sd_inuse_parse(v6, sizeof(v6) - 1, 1, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(sd_inuse_parse(v6, sizeof(v6) - 1, 0, &v), -EBADMSG);
	assert_int_equal(sd_inuse_parse(v4, sizeof(v4) - 1, 1, &v), -EBADMSG);
	v = 42;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (sd_inuse_parse(bad[i], strlen(bad[i]), 0, &v) != -EBADMSG)
			fail_msg("accepted: \"%s\"", bad[i]);
		assert_int_equal(v, 42);
	}
}

/* The file of this namespace, opened once: each connection moves the sum
 * by two (the connect and the accepted child), read after read. */
static void sd_opens_read__own_namespace__each_connection_counts_twice(void **state)
{
	struct conn a;
	uint64_t v0, v1, v2;
	int fd;

	(void)state;
	fd = sd_opens_open(-1);
	assert_true(fd >= 0);
	assert_int_equal(sd_opens_read(fd, &v0), 0);
	assert_int_equal(sd_opens_read(fd, &v1), 0);
	assert_int_equal(v1, v0);
	conn_open(&a, AF_INET6);
	assert_int_equal(sd_opens_read(fd, &v2), 0);
	assert_int_equal(v2, v0 + 2);
	conn_close(&a);
	assert_int_equal(sd_opens_read(fd, &v1), 0);
	assert_int_equal(v1, v2);                       /* a close opens nothing */
	close(fd);
	assert_true(sd_opens_read(fd, &v1) < 0);
	assert_int_equal(sd_opens_open(9999), -EBADF);
}

/* Another namespace's file, opened from here: its own counters, not ours. */
static void sd_opens_open__other_namespace__its_counters(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(11117) };
	uint64_t theirs0, theirs1, ours0, ours1;
	int nsfd, fd, own, ls, cs, ss;

	(void)state;
	nsfd = nstest_make_netns();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_veth(nsfd, "sdo0", "10.77.21.1", "sdo1", "10.77.21.2"), 0);
	fd = sd_opens_open(nsfd);
	own = sd_opens_open(-1);
	assert_true(fd >= 0 && own >= 0);
	assert_int_equal(sd_opens_read(fd, &theirs0), 0);
	assert_int_equal(sd_opens_read(own, &ours0), 0);
	inet_pton(AF_INET, "10.77.21.2", &a.sin_addr);
	ls = ns_listen(nsfd, &a);
	ns_connect(ls, &a, &cs, &ss);   /* connect here, accepted there */
	assert_int_equal(sd_opens_read(fd, &theirs1), 0);
	assert_int_equal(sd_opens_read(own, &ours1), 0);
	assert_int_equal(theirs1, theirs0 + 1);
	assert_int_equal(ours1, ours0 + 1);
	close(ss);
	close(cs);
	close(ls);
	close(fd);
	close(own);
	close(nsfd);
	nstest_sh("ip link del sdo0 2>/dev/null");
}

/* ---- the discovery gate in sockdiag_poll ---- */

#define MS 1000000ull

/* The readers a test opened and has not closed: test_teardown() closes
 * them (their hooks and their BPF reader with them), so that a failed
 * test's reader and sockets are not the next test's. */
static struct sockdiag *sd_live[4];
static unsigned sd_live_n;

static void sd_opened(struct sockdiag *sd)
{
	assert_true(sd_live_n < sizeof(sd_live) / sizeof(sd_live[0]));
	sd_live[sd_live_n++] = sd;
}

static void sd_done(struct sockdiag *sd)
{
	for (unsigned i = 0; i < sd_live_n; i++)
		if (sd_live[i] == sd) {
			sd_live[i] = sd_live[--sd_live_n];
			break;
		}
	sockdiag_close(sd);
}

/* Other descriptors a test opened (sockets not made by conn_open, the
 * reader's many), closed by test_teardown() when the test did not. */
static int fds_live[8192];
static unsigned fds_live_n;

static int fd_keep(int fd)
{
	if (fd >= 0 && fds_live_n < sizeof(fds_live) / sizeof(fds_live[0]))
		fds_live[fds_live_n++] = fd;
	return fd;
}

static void fd_drop(int fd)
{
	for (unsigned i = fds_live_n; i-- > 0;)
		if (fds_live[i] == fd) {
			fds_live[i] = fds_live[--fds_live_n];
			break;
		}
	close(fd);
}

static int events_tracepoints;

static int test_teardown(void **state)
{
	(void)state;
	sockwatch_test_enrol_fail(0);   /* while the watch is loaded */
	sockwatch_test_busy(0);
	sockwatch_test_lose(0);
	sockwatch_test_nomem(0);
	while (sd_live_n)
		sockdiag_close(sd_live[--sd_live_n]);
	conns_teardown();
	while (fds_live_n)
		close(fds_live[--fds_live_n]);
	events_tracepoints = 0;
	sockwatch_test_tracepoints(0);
	return 0;
}

static struct sockdiag *gated_mode(uint64_t rediscover_ns, int no_events);

static struct sockdiag *gated(uint64_t rediscover_ns)
{
	return gated_mode(rediscover_ns, 0);
}

/* events_tracepoints (above): the kernel-event watch with the
 * tracepoints (sock_liveness = events), not the sockops callbacks, for
 * the sessions made while set. */

static struct sockdiag *gated_mode(uint64_t rediscover_ns, int no_events)
{
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct sockdiag *sd;
	char err[256] = "";

	sockdiag_opts_default(&o);
	o.discover_ns = 1 * MS;         /* a discovery due at every poll here */
	o.rediscover_ns = rediscover_ns;
	o.no_switch = 1;
	o.no_events = no_events;
	o.events_tracepoints = events_tracepoints;
	sd = sockdiag_open_opts(-1, &o, err, sizeof(err));
	if (!sd)
		fail_msg("sockdiag_open: %s", err);
	sd_opened(sd);
	sockdiag_stats(sd, &st);
	assert_true(st.opens_gate);
	return sd;
}

/* n polls 2 ms apart (a discovery due at each), each emitting want. */
static void polls(struct sockdiag *sd, const struct flow_sel *sel, int n, int want)
{
	static struct nstest_obs l;

	for (int i = 0; i < n; i++) {
		assert_int_equal(poll_into(sd, sel, 1, &l), want);
		nstest_msleep(2);
	}
}

static struct sockdiag_stats stats_of(const struct sockdiag *sd)
{
	struct sockdiag_stats st;

	sockdiag_stats(sd, &st);
	return st;
}

/* Nothing opened: after the first dump and the one after it, discoveries
 * dump no more, and the known sockets are still read at every poll (new
 * data shows at once). A connection opened: the next discovery dumps and
 * finds it. Without the gate every one of these polls dumps. */
static void sockdiag_poll__nothing_opened__no_dump_known_sockets_read(void **state)
{
	static struct nstest_obs l;
	struct conn a, c;
	struct flow_sel sel;
	struct sockdiag *sd;
	const struct flow_obs *f;
	char err[256] = "", data[100];

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	polls(sd, &sel, 6, 2);
	assert_int_equal(stats_of(sd).dumps, 2);        /* the first, the one after it */
	assert_int_equal(stats_of(sd).discover_skipped, 4);
	assert_true(stats_of(sd).reads + stats_of(sd).lookups >= 8);
	memset(data, 'g', sizeof(data));
	assert_int_equal(write(a.c, data, sizeof(data)), (ssize_t)sizeof(data));
	f = NULL;
	for (int i = 0; i < 100 && !(f && f->unread == sizeof(data)); i++) {
		nstest_msleep(2);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
		f = find(&l, a.lport, a.cport);
	}
	assert_non_null(f);
	assert_int_equal(f->unread, sizeof(data));
	assert_int_equal(stats_of(sd).dumps, 2);
	/* a new connection: found at the next discovery */
	conn_open(&c, AF_INET6);
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	assert_non_null(find(&l, c.lport, c.cport));
	assert_non_null(find(&l, c.cport, c.lport));
	assert_int_equal(stats_of(sd).dumps, 3);
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	assert_int_equal(stats_of(sd).dumps, 4);        /* the look after a change */
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	assert_int_equal(stats_of(sd).dumps, 4);
	sd_done(sd);
	conn_close(&a);
	conn_close(&c);
}

/* One connection closed and another opened between two looks: as many
 * sockets as before (a gate on the socket count would see nothing), and
 * the new one is found at the next discovery. */
static void sockdiag_poll__one_closed_one_opened__new_one_found(void **state)
{
	static struct nstest_obs l;
	struct conn a, b, c;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";

	(void)state;
	conn_open(&a, AF_INET);
	conn_open(&b, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	polls(sd, &sel, 3, 4);
	assert_int_equal(stats_of(sd).dumps, 2);
	/* b's ends go at once (SO_LINGER 0: no FIN_WAIT, no TIME_WAIT) */
	{
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(b.c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		setsockopt(b.s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	conn_close(&b);
	conn_open(&c, AF_INET);
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	assert_non_null(find(&l, c.lport, c.cport));
	assert_non_null(find(&l, c.cport, c.lport));
	assert_null(find(&l, b.lport, b.cport));
	assert_int_equal(stats_of(sd).dumps, 3);
	sd_done(sd);
	conn_close(&a);
	conn_close(&c);
}

/* Nothing opened, and still a dump once the last is rediscover_ns old
 * (a socket restored in TCP_REPAIR mode moves no counter); rediscover_ns 0:
 * every discovery dumps, as before the gate. */
static void sockdiag_poll__rediscover__dump_when_the_last_is_that_old(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_opts o;
	struct conn a;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	uint64_t d;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(60 * MS);
	polls(sd, &sel, 3, 2);
	d = stats_of(sd).dumps;
	assert_int_equal(d, 2);
	nstest_msleep(80);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_int_equal(stats_of(sd).dumps, d + 1);
	sockdiag_opts_default(&o);
	o.discover_ns = 1 * MS;
	o.rediscover_ns = 0;
	o.no_switch = 1;
	sockdiag_set_opts(sd, &o);
	polls(sd, &sel, 4, 2);
	assert_int_equal(stats_of(sd).dumps, d + 1 + 4);
	sd_done(sd);
	conn_close(&a);
}

/* A socket restored in TCP_REPAIR mode (as CRIU restores one) connects
 * without tcp_connect(): no ActiveOpens, but it is hashed, so its
 * namespace's TCP sockets in use move and the next discovery dumps and
 * finds it; with only the opens as the gate it waits for rediscover_ns
 * (an hour here). */
static void sockdiag_poll__repaired_socket__found_without_an_open(void **state)
{
	static struct nstest_obs l;
	struct sockaddr_in a = { .sin_family = AF_INET }, b;
	struct conn c;
	struct flow_sel sel;
	struct sockdiag *sd;
	socklen_t bl = sizeof(b);
	char err[256] = "";
	uint64_t opens0, opens1;
	int one = 1, r, snmp;

	(void)state;
	conn_open(&c, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	polls(sd, &sel, 4, 2);
	assert_int_equal(stats_of(sd).dumps, 2);
	snmp = fd_keep(sd_opens_open(-1));
	assert_true(snmp >= 0);
	assert_int_equal(sd_opens_read(snmp, &opens0), 0);
	r = fd_keep(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	assert_true(r >= 0);
	assert_int_equal(setsockopt(r, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)), 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(r, (struct sockaddr *)&a, sizeof(a)), 0);
	a.sin_port = htons(9);  /* nobody listens: a restore sends nothing */
	assert_int_equal(connect(r, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(r, (struct sockaddr *)&b, &bl), 0);
	assert_int_equal(sd_opens_read(snmp, &opens1), 0);
	assert_true(opens1 == opens0);  /* no open counted */
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 3);
	assert_int_equal(stats_of(sd).dumps, 3);
	assert_non_null(find(&l, ntohs(b.sin_port), 9));
	sd_done(sd);
	fd_drop(snmp);
	fd_drop(r);
	conn_close(&c);
}

/* More watched sockets than the BPF reader takes in a run (SR_MAX): each
 * is read once a poll, the runs going on from where the last stopped. All
 * due at every poll here (no pacing): runs that each began at the first
 * socket read the first SR_MAX again and again and never the rest. */
struct many {
	unsigned n, twice;
	uint16_t lport;
	uint8_t seen[2][65536 / 8];     /* accepted ends, clients' ends */
};

static void many_emit(const struct flow_obs *o, void *arg)
{
	struct many *m = arg;
	unsigned srv = ntohs(o->key.sport) == m->lport;
	unsigned p = ntohs(srv ? o->key.dport : o->key.sport);     /* the client's port */
	uint8_t *b = &m->seen[srv][p / 8];

	if (*b & (1u << (p % 8)))
		m->twice++;
	*b |= (uint8_t)(1u << (p % 8));
	m->n++;
}

static void sockdiag_poll__more_than_a_reader_run__each_read_once(void **state)
{
	enum { NC = SR_MAX / 2 + 40 };          /* both ends: SR_MAX + 80 sockets */
	static int cs[NC], ss[NC];
	static struct many m;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct rlimit rl = { 4 * NC + 64, 4 * NC + 64 };
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	socklen_t al = sizeof(a);
	char err[256] = "", spec[64];
	uint64_t reads;
	int ls, one = 1;

	(void)state;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = fd_keep(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	assert_true(ls >= 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(ls, 128), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	for (int i = 0; i < NC; i++) {
		cs[i] = fd_keep(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		assert_true(cs[i] >= 0);
		assert_int_equal(connect(cs[i], (struct sockaddr *)&a, sizeof(a)), 0);
		ss[i] = fd_keep(accept(ls, NULL, NULL));
		assert_true(ss[i] >= 0);
	}
	snprintf(spec, sizeof(spec), "tcp port %u", (unsigned)ntohs(a.sin_port));
	assert_int_equal(flow_sel_parse(spec, &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	if (!st.reader)
		fail_msg("no BPF socket reader: %s", st.reader_why);
	for (int i = 0; i < 3; i++) {   /* the dump, the one after it, a read */
		memset(&m, 0, sizeof(m));
		m.lport = ntohs(a.sin_port);
		assert_int_equal(sockdiag_poll(sd, &sel, 1, many_emit, &m, err, sizeof(err)), 2 * NC);
		assert_int_equal(m.n, 2 * NC);
		assert_int_equal(m.twice, 0);
		nstest_msleep(2);
	}
	sockdiag_stats(sd, &st);
	assert_int_equal(st.dumps, 2);
	reads = st.reads;
	assert_int_equal(reads, 2 * NC);        /* the third poll, by the reader */
	sd_done(sd);
	for (int i = 0; i < NC; i++) {
		fd_drop(cs[i]);
		fd_drop(ss[i]);
	}
	fd_drop(ls);
}

/* Paced reads (no kernel-event watch): a threshold of seconds: an idle
 * socket is due a threshold less a poll later, but read at least once per
 * refresh_ns all the same, since with the dumps apart nothing else shows
 * it and the flow table forgets a flow unseen for 2 s. */
static void sockdiag_poll__long_threshold__idle_socket_read_each_refresh(void **state)
{
	static struct nstest_obs l;
	struct conn a;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	int n = 0;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated_mode(3600000 * MS, 1);
	sockdiag_set_pace(sd, 10000 * MS, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* the dump */
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* the one after it */
	nstest_msleep(2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);        /* paced */
	nstest_msleep(120);
	for (int i = 0; i < 5 && n != 2; i++) {
		n = poll_into(sd, &sel, 1, &l);
		nstest_msleep(20);
	}
	assert_int_equal(n, 2);
	assert_int_equal(stats_of(sd).dumps, 2);
	sd_done(sd);
	conn_close(&a);
}

/* Connection a watched with the kernel-event watch on (threshold 300 ms,
 * poll 50 ms, refresh 100 ms): its two sockets dumped, then read once more
 * (the read that puts them on the backstop), which l holds. */
/* A session on the kernel-event watch, both its sockets read twice
 * (the dump, then due at the refresh) and so on the backstop, the port's
 * threshold thr. */
static struct sockdiag *events_session_thr(struct conn *a, struct flow_sel *sel,
					   struct nstest_obs *l, uint64_t thr)
{
	struct sockdiag_stats st;
	struct sockdiag *sd;
	char err[256] = "";

	conn_open(a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	if (!st.events)
		fail_msg("no kernel-event watch: %s", st.events_why);
	sockdiag_set_pace(sd, thr, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, sel, 1, l), 2);  /* the dump */
	nstest_msleep(110);
	assert_int_equal(poll_into(sd, sel, 1, l), 2);  /* due after it */
	return sd;
}

static struct sockdiag *events_session(struct conn *a, struct flow_sel *sel,
				       struct nstest_obs *l)
{
	return events_session_thr(a, sel, l, 300 * MS);
}

/* The kernel-event watch: a socket that owes nothing is not read each
 * refresh; its observation says how long the detector may keep it unseen.
 * Bytes left unread make the kernel post at their arrival plus a threshold
 * less a poll, and that socket alone is read then, not before. */
static void sockdiag_poll__events__idle_unread_until_the_deadline(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	uint64_t t0, seen = 0, walks;
	unsigned early = 0, other = 0;
	struct conn a;

	(void)state;
	sd = events_session(&a, &sel, &l);
	assert_true(l.o[0].keep_ns > 2000 * MS);
	assert_true(l.o[1].keep_ns > 2000 * MS);
	/* paced reads would read both every 100 ms; and no poll looks at
	 * every socket's due time while the least is ahead. The next poll
	 * asked for is the next discovery's (1 ms on here, a second in the
	 * daemon), not a socket's */
	walks = stats_of(sd).due_walks;
	for (int i = 0; i < 10; i++) {
		uint64_t before = loop_mono_ns();

		nstest_msleep(30);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
		assert_true(sockdiag_next_ns(sd) > before + 30 * MS &&
			    sockdiag_next_ns(sd) <= loop_mono_ns() + 1 * MS);
	}
	assert_int_equal(stats_of(sd).due_walks, walks);
	t0 = loop_mono_ns();
	assert_int_equal(write(a.c, "abc", 3), 3);      /* the server's, unread */
	assert_true(sockdiag_fd(sd) >= 0);      /* the loop watches it */
	while (loop_mono_ns() < t0 + 600 * MS && !seen) {
		struct pollfd pf = { .fd = sockdiag_fd(sd), .events = POLLIN };

		/* as the daemon's loop: the fd readable, its handler */
		if (poll(&pf, 1, 10) > 0)
			sockdiag_handle(sd);
		poll_into(sd, &sel, 1, &l);
		for (unsigned i = 0; i < l.n; i++) {
			if (ntohs(l.o[i].key.sport) != a.lport) {
				other++;
				continue;
			}
			assert_int_equal(l.o[i].unread, 3);
			if (loop_mono_ns() < t0 + 230 * MS)
				early++;
			seen = loop_mono_ns();
		}
	}
	assert_true(seen > 0);
	assert_int_equal(early, 0);
	assert_int_equal(other, 0);     /* the client owes nothing: not read */
	sockdiag_stats(sd, &st);
	assert_true(st.events_n >= 1);
	assert_true(st.registered >= 2);
	/* the waiting socket is on its pace now, read at every poll; the
	 * others on the backstop: the polls look at the paced ones only,
	 * never at every socket's due time */
	walks = stats_of(sd).due_walks;
	for (int i = 0; i < 5; i++) {
		nstest_msleep(50);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 1);
		assert_int_equal(ntohs(l.o[0].key.sport), a.lport);
	}
	assert_int_equal(stats_of(sd).due_walks, walks);
	sd_done(sd);
	conn_close(&a);
}

/* A socket the kernel would not give the sockops callbacks is not left
 * watched by nothing: it is read on its pace from then on, and not
 * registered again at the next dump; its sibling stays on the watch. */
static void sockdiag_poll__events__refused_callbacks__on_its_pace(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	struct conn a, b;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	if (!st.events || !st.events_sockops)
		fail_msg("no kernel-event watch with sockops callbacks: %s %s", st.events_why,
			 st.hooks_why);
	sockwatch_test_enrol_fail(1);
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);  /* the dump */
	sockdiag_stats(sd, &st);
	assert_int_equal(st.enrol_refused, 1);
	assert_int_equal(st.registered, 2);
	nstest_msleep(110);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);  /* due after it */
	/* one on its pace (a refresh each 100 ms), the other on the watch */
	for (int i = 0; i < 4; i++) {
		nstest_msleep(110);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 1);
	}
	/* a dump (a new connection): the two new sockets are watched, the
	 * refused one is not registered again (it would be, and watched, the
	 * knob being spent) but stays on its pace */
	conn_open(&b, AF_INET);
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.registered, 4);
	for (int i = 0; i < 3; i++) {
		nstest_msleep(110);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 1);
	}
	sockdiag_stats(sd, &st);
	assert_int_equal(st.enrol_refused, 1);
	assert_int_equal(st.registered, 4);
	sd_done(sd);
	conn_close(&b);
	conn_close(&a);
}

/* A threshold of a poll or less reads every socket at every poll: the
 * slots are given up. Back to the threshold they were given for, they are
 * registered again at once and read no more, not left on their pace until
 * the next dump (which may be minutes away on a quiet namespace). */
static void sockdiag_poll__events__threshold_below_a_poll_and_back__registered_again(void **state)
{
	static struct nstest_obs l;
	struct flow_sel sel;
	struct sockdiag *sd;
	uint64_t dumps;
	struct conn a;

	(void)state;
	sd = events_session(&a, &sel, &l);
	assert_int_equal(stats_of(sd).registered, 2);
	dumps = stats_of(sd).dumps;
	nstest_msleep(60);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);        /* watched */
	sockdiag_set_pace(sd, 40 * MS, 50 * MS, 100 * MS);      /* below a poll */
	nstest_msleep(60);
	poll_into(sd, &sel, 1, &l);     /* the slots given up: due at the next */
	for (int i = 0; i < 3; i++) {
		nstest_msleep(60);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* every poll */
	}
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);     /* and back */
	nstest_msleep(60);
	poll_into(sd, &sel, 1, &l);
	assert_int_equal(stats_of(sd).registered, 4);
	/* read once more on their way to the backstop, then no more */
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	for (int i = 0; i < 4; i++) {
		nstest_msleep(110);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	}
	assert_int_equal(stats_of(sd).dumps, dumps);    /* no dump did it */
	sd_done(sd);
	conn_close(&a);
}

/* sock_liveness = auto: a socket whose callbacks come faster than the
 * watch's busy limit is handed back by the kernel and read on its pace
 * (as paced reads read every socket), not registered again while busy;
 * once its hold is over and a read finds it owing nothing with the bytes
 * of the read before, it is registered again and no longer read. Handed
 * back again soon after, its hold is twice as long. A reader that ignored
 * the hand-back would leave a busy socket watched by nothing; one that
 * never took it back would read an idle one for good; one without the
 * hold would walk the namespace at every other poll for a flow busy in
 * bursts. */
#define BUSY_HOLD (300 * MS)

/* Handle the watch's posts until want hand-backs in all. */
static void await_handed(struct sockdiag *sd, uint64_t want)
{
	struct sockdiag_stats st;

	for (int i = 0; i < 50; i++) {
		struct pollfd pf = { .fd = sockdiag_fd(sd), .events = POLLIN };

		if (poll(&pf, 1, 10) > 0)
			sockdiag_handle(sd);
		sockdiag_stats(sd, &st);
		if (st.busy_handed >= want)
			break;
	}
	assert_int_equal(st.busy_handed, want);
}

/* Polls 110 ms apart until want sockets came back: how long since t0
 * (ns; taken before the poll that dated their holds), each poll reading
 * at least one socket (the busy ones) and none registered again before
 * it came back. */
static uint64_t until_back(struct sockdiag *sd, const struct flow_sel *sel,
			   struct nstest_obs *l, uint64_t want, uint64_t registered,
			   uint64_t t0)
{
	struct sockdiag_stats st;

	sockdiag_stats(sd, &st);
	for (int i = 0; i < 20 && st.busy_back < want; i++) {
		nstest_msleep(110);
		assert_true(poll_into(sd, sel, 1, l) >= 1);
		sockdiag_stats(sd, &st);
		assert_true(st.registered <= registered + st.busy_back - (want - 2));
	}
	assert_int_equal(st.busy_back, want);
	assert_int_equal(st.busy_now, 0);
	return loop_mono_ns() - t0;
}

static void sockdiag_poll__auto__busy_socket_on_its_pace_until_idle(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct sockdiag_opts o;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	struct conn a, c;
	uint64_t took, t0;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sockwatch_test_busy(40);
	sd = gated(3600000 * MS);
	sockwatch_test_busy(0);
	sockdiag_stats(sd, &st);
	if (!st.events || !st.events_sockops)
		fail_msg("no kernel-event watch with sockops callbacks: %s %s", st.events_why,
			 st.hooks_why);
	sockdiag_opts_default(&o);
	o.discover_ns = 1 * MS;
	o.rediscover_ns = 3600000 * MS;
	o.no_switch = 1;
	o.busy_hold_ns = BUSY_HOLD;
	sockdiag_set_opts(sd, &o);
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);  /* the dump */
	sockdiag_stats(sd, &st);
	assert_int_equal(st.registered, 2);
	conn_echo(&a, 200);
	await_handed(sd, 2);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.busy_now, 2);
	assert_int_equal(st.events_n, 0);       /* not deadlines */
	/* both read now (their slots given up, their holds dated): a new
	 * connection's dump registers its two sockets, not the busy ones */
	conn_open(&c, AF_INET);
	t0 = loop_mono_ns();
	assert_int_equal(poll_into(sd, &sel, 1, &l), 4);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.registered, 4);
	/* then on their pace until their hold is over and a read finds each
	 * idle since the read before */
	took = until_back(sd, &sel, &l, 2, 4, t0);
	assert_true(took >= BUSY_HOLD);
	/* registered again at the next poll, and from then on not read */
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.registered, 6);
	for (int i = 0; i < 3; i++) {
		nstest_msleep(110);
		assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	}
	/* busy again soon after: handed back again, held twice as long */
	conn_echo(&a, 200);
	await_handed(sd, 4);
	t0 = loop_mono_ns();
	assert_true(poll_into(sd, &sel, 1, &l) >= 2);
	took = until_back(sd, &sel, &l, 4, 6, t0);
	assert_true(took >= 2 * BUSY_HOLD);
	sd_done(sd);
	conn_close(&c);
	conn_close(&a);
}

/* As the daemon's loop, for up to ms: the watch's fd handled when
 * readable, a poll; the first observation of the socket on local port
 * lport (that has unread bytes, if unread). */
static const struct flow_obs *await_obs(struct sockdiag *sd, const struct flow_sel *sel,
					struct nstest_obs *l, uint16_t lport, unsigned ms,
					int unread)
{
	uint64_t t0 = loop_mono_ns();

	while (loop_mono_ns() < t0 + ms * MS) {
		struct pollfd pf = { .fd = sockdiag_fd(sd), .events = POLLIN };

		if (poll(&pf, 1, 5) > 0)
			sockdiag_handle(sd);
		poll_into(sd, sel, 1, l);
		for (unsigned i = 0; i < l->n; i++)
			if (ntohs(l->o[i].key.sport) == lport && (!unread || l->o[i].unread))
				return &l->o[i];
	}
	return NULL;
}

static const struct flow_obs *await_post(struct sockdiag *sd, const struct flow_sel *sel,
					 struct nstest_obs *l, uint16_t lport, unsigned ms)
{
	return await_obs(sd, sel, l, lport, ms, 1);
}

static const struct flow_obs *await_read(struct sockdiag *sd, const struct flow_sel *sel,
					 struct nstest_obs *l, uint16_t lport, unsigned ms)
{
	return await_obs(sd, sel, l, lport, ms, 0);
}

/* A post names its socket by slot: after a discovery has made the list of
 * sockets again and a new socket has been registered, a post for the new
 * one reads the new one (the slots' map is made again), at its deadline,
 * not at the 30 s backstop. */
static void sockdiag_poll__events__new_socket_after_a_post__its_post_reads_it(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	struct conn a, b;
	char c;

	(void)state;
	sd = events_session(&a, &sel, &l);       /* to the backstop */
	assert_int_equal(write(a.c, "a", 1), 1);
	assert_non_null(await_post(sd, &sel, &l, a.lport, 600));
	assert_int_equal(read(a.s, &c, 1), 1);
	conn_open(&b, AF_INET);
	/* the dump that finds b (the namespace opened a connection) */
	for (int i = 0; i < 5 && stats_of(sd).registered < 4; i++) {
		nstest_msleep(20);
		poll_into(sd, &sel, 1, &l);
	}
	assert_int_equal(stats_of(sd).registered, 4);
	/* b to the backstop: read once more, owing nothing */
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	nstest_msleep(110);
	poll_into(sd, &sel, 1, &l);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	assert_int_equal(write(b.c, "b", 1), 1);
	assert_non_null(await_post(sd, &sel, &l, b.lport, 600));
	sockdiag_stats(sd, &st);
	assert_true(st.event_reads >= 2);
	sd_done(sd);
	conn_close(&a);
	conn_close(&b);
}

/* A busy request/response socket caught waiting by a read would be read
 * at that wait's want, show the next such wait, young, and so on: a
 * threshold less a poll apart for as long as it is busy (the bench's
 * busy sessions, every socket). A young wait the kernel's slot holds
 * (the same bytes judged, queued, not posted) is left to it: the socket
 * goes back to the backstop and the detector is told the flow does not
 * wait (live: progress). That wait then lasts (no reply comes): the
 * kernel posts it at its deadline, the read dates it from its start, and
 * the socket is not read between. Fails the watch that reads such a
 * socket at its want (read at the want, its live is 0), and one that
 * leaves a wait the kernel will not post (no read by the deadline). */
static void young_wait_held(int tracepoints)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	const struct flow_obs *o;
	struct flow_sel sel;
	struct sockdiag *sd;
	struct conn a;
	uint64_t w, span = 250 * MS, posted;
	char b[8];
	int held = 0;

	events_tracepoints = tracepoints;
	sockwatch_test_tracepoints(tracepoints);
	sd = events_session(&a, &sel, &l);       /* to the backstop */
	sockwatch_test_tracepoints(0);
	events_tracepoints = 0;
	conn_echo(&a, 3);
	/* a request no reply answers: posted at its deadline, read, and on
	 * its pace from then while it waits */
	assert_int_equal(write(a.c, "ping", 4), 4);
	assert_int_equal(read(a.s, b, sizeof(b)), 4);
	o = await_read(sd, &sel, &l, a.cport, 600);
	assert_non_null(o);
	assert_true(flow_obs_sock_waiting(o));
	assert_int_equal(o->live, 0);
	for (int round = 0; round < 5 && !held; round++) {
		/* the reply, and the next request: a young wait */
		assert_int_equal(write(a.s, "pong", 4), 4);
		assert_int_equal(read(a.c, b, sizeof(b)), 4);
		w = loop_mono_ns();
		assert_int_equal(write(a.c, "ping", 4), 4);
		assert_int_equal(read(a.s, b, sizeof(b)), 4);
		nstest_msleep(2);
		o = await_read(sd, &sel, &l, a.cport, 100);
		assert_non_null(o);     /* on its pace: due at once */
		held = o->live == FLOW_LIVE_PROGRESS + 1;
		/* not held (read late, under load): followed, read at its
		 * want, and due at every poll from then, as before the round */
		while (!held && loop_mono_ns() < w + span)
			assert_non_null(await_read(sd, &sel, &l, a.cport, 600));
	}
	assert_true(held);
	sockdiag_stats(sd, &st);
	assert_true(st.kernel_held >= 1);
	posted = st.event_reads;
	/* not read again until the kernel posts the wait, a span after it
	 * began, and read then, dated from its start */
	o = await_read(sd, &sel, &l, a.cport, 600);
	assert_non_null(o);
	/* the kernel dates by jiffies (up to two early, 10 ms each at
	 * HZ=100); the read is the kernel's post, not a poll of ours (the
	 * backstop is 30 s away): told by the watch's count of the reads
	 * its posts caused, not by how soon a loaded machine ran us */
	assert_true(loop_mono_ns() >= w + span - 22 * MS);
	sockdiag_stats(sd, &st);
	if (st.event_reads <= posted)
		fail_msg("read %llu ms after the wait began, no post of the kernel's among the reads",
			 (unsigned long long)((loop_mono_ns() - w) / MS));
	assert_int_equal(o->live, 0);
	assert_true(flow_obs_sock_waiting(o));
	assert_true(flow_obs_sock_wait_from(o) + 22 * MS >= w);
	assert_true(flow_obs_sock_wait_from(o) <= w + 12 * MS);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.events_sockops, !tracepoints);
	sd_done(sd);
	conn_close(&a);
}

/* With either kind of hooks: the sockets' sockops callbacks, or the
 * tracepoints. */
static void sockdiag_poll__events__young_wait_the_kernel_holds__left_then_posted(void **state)
{
	(void)state;
	young_wait_held(0);
	young_wait_held(1);
}

/* Up to ms, as the daemon's loop: whether the sockets on local ports a
 * and b were both read, each in one of the states of masks want_a,
 * want_b (1 << state). */
static int await_both(struct sockdiag *sd, const struct flow_sel *sel, struct nstest_obs *l,
		      uint16_t a, unsigned want_a, uint16_t b, unsigned want_b, unsigned ms)
{
	uint64_t t0 = loop_mono_ns();
	int seen_a = 0, seen_b = 0;

	while (loop_mono_ns() < t0 + ms * MS && !(seen_a && seen_b)) {
		struct pollfd pf = { .fd = sockdiag_fd(sd), .events = POLLIN };

		if (poll(&pf, 1, 5) > 0)
			sockdiag_handle(sd);
		poll_into(sd, sel, 1, l);
		for (unsigned i = 0; i < l->n; i++) {
			uint16_t p = ntohs(l->o[i].key.sport);

			seen_a |= p == a && l->o[i].state < 32 && (want_a & 1u << l->o[i].state);
			seen_b |= p == b && l->o[i].state < 32 && (want_b & 1u << l->o[i].state);
		}
	}
	return seen_a && seen_b;
}

/* A watched socket that leaves ESTABLISHED is posted by the kernel
 * (sockwatch.bpf.c sw_left) and read at once, not at its backstop (30 s,
 * 60 s once quiet): the client shuts its side, and its socket (FIN_WAIT)
 * and the server's (CLOSE_WAIT) are both read within the poll, by one post
 * each, neither counted as a deadline, with no dump. The threshold (5 s)
 * keeps any wait the FIN makes from posting meanwhile. With either kind
 * of hooks. With lose, both posts are lost as on a full ring: counted
 * lost, and the next poll reads every socket. Fails a watch that leaves
 * such a socket to its backstop, one that counts the post as a
 * deadline's, and one that drops a lost post uncounted. */
static void left_established(int tracepoints, unsigned lose)
{
	static struct nstest_obs l;
	struct sockdiag_stats st0, st;
	struct sockwatch_stats ws0, ws;
	struct flow_sel sel;
	struct sockdiag *sd;
	uint64_t lost0;
	struct conn a;

	events_tracepoints = tracepoints;
	sockwatch_test_tracepoints(tracepoints);
	sd = events_session_thr(&a, &sel, &l, 5000 * MS);       /* to the backstop */
	sockwatch_test_tracepoints(0);
	events_tracepoints = 0;
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	st0 = stats_of(sd);
	assert_int_equal(st0.events_sockops, !tracepoints);
	sockwatch_stats(&ws0);
	lost0 = sockwatch_losses();
	sockwatch_test_lose(lose);
	assert_int_equal(shutdown(a.c, SHUT_WR), 0);
	assert_true(await_both(sd, &sel, &l, a.cport,
			       1u << SD_TCP_FIN_WAIT1 | 1u << SD_TCP_FIN_WAIT2, a.lport,
			       1u << SD_TCP_CLOSE_WAIT, 300));
	st = stats_of(sd);
	sockwatch_stats(&ws);
	assert_int_equal(st.events_n, st0.events_n);
	assert_int_equal(st.dumps, st0.dumps);
	assert_int_equal(st.state_reads, st0.state_reads + (lose ? 0 : 2));
	assert_int_equal(ws.left, ws0.left + (lose ? 0 : 2));
	assert_int_equal(sockwatch_losses(), lost0 + lose);
	/* both lost within shutdown() (loopback), or the server's in the
	 * softirq after: one full read or two */
	if (lose)
		assert_true(st.loss_reads > st0.loss_reads);
	else
		assert_int_equal(st.loss_reads, st0.loss_reads);
	sockwatch_test_lose(0);
	sd_done(sd);
	conn_close(&a);
}

static void sockdiag_poll__events__left_established__read_at_once(void **state)
{
	(void)state;
	left_established(0, 0);
	left_established(1, 0);
}

static void sockdiag_poll__events__left_established_post_lost__every_socket_read(void **state)
{
	(void)state;
	left_established(0, 2);
	left_established(1, 2);
}

/* A registration the kernel had no socket storage for (it allocates
 * without sleeping: memory pressure) leaves the socket on its pace, and
 * is tried again after the retry period (reg_retry_ns, 200 ms here), not
 * at the next dump (an hour away here: none but the first and the look
 * after it, whose registrations fail too); a retry that fails again is
 * tried again a period later. nomem: the registrations that fail (two
 * sockets, each tried at both dumps, then at each retry). Fails a watch
 * that waits for a dump to try again, and one that tries before the
 * period is over. */
static void no_memory_at_registration(unsigned nomem, int tracepoints)
{
	static struct nstest_obs l;
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	unsigned retries = (nomem - 4) / 2;
	struct conn a;
	uint64_t t0;

	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sockdiag_opts_default(&o);
	o.discover_ns = 1 * MS;
	o.rediscover_ns = 3600000 * MS;
	o.no_switch = 1;
	o.reg_retry_ns = 200 * MS;
	o.events_tracepoints = tracepoints;
	sockwatch_test_tracepoints(tracepoints);
	sd = sockdiag_open_opts(-1, &o, err, sizeof(err));
	sockwatch_test_tracepoints(0);
	if (!sd)
		fail_msg("sockdiag_open: %s", err);
	sd_opened(sd);
	st = stats_of(sd);
	assert_true(st.opens_gate);
	if (!st.events)
		fail_msg("no kernel-event watch: %s", st.events_why);
	assert_int_equal(st.events_sockops, !tracepoints);
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);
	sockwatch_test_nomem(nomem);
	t0 = loop_mono_ns();
	polls(sd, &sel, 2, 2);          /* the dump, the look after it */
	st = stats_of(sd);
	assert_int_equal(st.dumps, 2);
	assert_int_equal(st.reg_retries, 4);
	assert_int_equal(st.registered, 0);
	while (loop_mono_ns() < t0 + (800 + 200 * retries) * MS && stats_of(sd).registered < 2) {
		nstest_msleep(10);
		poll_into(sd, &sel, 1, &l);
	}
	st = stats_of(sd);
	assert_int_equal(st.registered, 2);
	assert_int_equal(st.reg_retries, nomem);
	assert_int_equal(st.dumps, 2);
	/* not before its time: each try a period after the one before */
	assert_true(loop_mono_ns() >= t0 + (200 + 200 * retries) * MS);
	sd_done(sd);
	conn_close(&a);
}

static void sockdiag_poll__events__no_memory_at_registration__tried_again(void **state)
{
	(void)state;
	no_memory_at_registration(4, 0);
	no_memory_at_registration(6, 0);
	no_memory_at_registration(4, 1);
}

/* A poll that came early at another wakeup (the detector's slack:
 * flowsrc.h slack_ns) makes the discovery due within it, so the next one
 * asks for its poll in step with those wakeups; without slack, a poll
 * before the discovery's time makes none. Fails a reader that ignores the
 * slack. */
static void sockdiag_poll__discovery_due_within_the_slack(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_opts o;
	struct flow_sel sel;
	struct sockdiag *sd;
	struct conn a;
	char err[256] = "";
	uint64_t before;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sockdiag_opts_default(&o);
	o.discover_ns = 1000 * MS;
	o.rediscover_ns = 3600000 * MS;
	o.no_switch = 1;
	o.no_events = 1;
	sd = sockdiag_open_opts(-1, &o, err, sizeof(err));
	if (!sd)
		fail_msg("sockdiag_open: %s", err);
	sd_opened(sd);
	/* the first dump and the one after it (sockdiag_poll__nothing_opened) */
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	before = stats_of(sd).dumps + stats_of(sd).discover_skipped;
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_int_equal(stats_of(sd).dumps + stats_of(sd).discover_skipped, before);
	sockdiag_set_slack(sd, 1000 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_int_equal(stats_of(sd).dumps + stats_of(sd).discover_skipped, before + 1);
	sockdiag_set_slack(sd, 0);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	assert_int_equal(stats_of(sd).dumps + stats_of(sd).discover_skipped, before + 1);
	sd_done(sd);
	conn_close(&a);
}

/* A timer the kernel could not arm: the wait it would have posted is
 * seen all the same, since every socket is read at the next poll. */
static void sockdiag_poll__events__lost_timer__every_socket_read(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	struct conn a;
	int n = 0;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sd = gated(3600000 * MS);
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* the dump */
	nstest_msleep(110);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* to the backstop */
	assert_int_equal(poll_into(sd, &sel, 1, &l), 0);
	sockwatch_test_noarm(1);
	assert_int_equal(write(a.c, "abc", 3), 3);
	/* the loss wakes the loop (a post of no socket's): the detector
	 * polls now, not at its next poll for another reason, a second
	 * away while nothing else asks; well before the wait's want (250 ms
	 * on), when a hook that queued it again would post. Fails a loss
	 * only counted. */
	{
		struct pollfd pf = { .fd = sockdiag_fd(sd), .events = POLLIN };

		assert_int_equal(poll(&pf, 1, 100), 1);
		assert_int_equal(sockdiag_handle(sd), 1);
	}
	nstest_msleep(20);
	n = poll_into(sd, &sel, 1, &l);
	assert_int_equal(n, 2);         /* both, at once */
	sockdiag_stats(sd, &st);
	assert_int_equal(st.loss_reads, 1);
	sd_done(sd);
	conn_close(&a);
}

/* A hook the kernel will not attach: the reader reads on its pace and
 * says why. */
static void sockdiag_open__events_refused__paced_and_says_why(void **state)
{
	static struct nstest_obs l;
	struct sockdiag_stats st;
	struct flow_sel sel;
	struct sockdiag *sd;
	char err[256] = "";
	struct conn a;

	(void)state;
	conn_open(&a, AF_INET);
	assert_int_equal(flow_sel_parse("tcp", &sel, err, sizeof(err)), 0);
	sockwatch_test_fail_attach("sock_recv_length");        /* either set has it */
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.events, 0);
	assert_non_null(strstr(st.events_why, "sock_recv_length"));
	assert_int_equal(sockdiag_fd(sd), -1);
	sockdiag_set_pace(sd, 300 * MS, 50 * MS, 100 * MS);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	nstest_msleep(110);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);
	nstest_msleep(110);
	assert_int_equal(poll_into(sd, &sel, 1, &l), 2);        /* every refresh */
	sd_done(sd);
	conn_close(&a);
}

/* sock_liveness = auto (the options' default): where the watch's hooks
 * would be the tracepoints, which run for every TCP socket of the host,
 * no watch and the reason; asked for with either hooks, the tracepoints.
 * With the sockops callbacks (this kernel), the watch. A reader that
 * takes whatever hooks load passes the first part's check wrongly. */
static void sockdiag_open__auto__events_only_with_sockops(void **state)
{
	struct sockdiag_opts o;
	struct sockdiag_stats st;
	struct sockdiag *sd;
	unsigned tp0 = sockwatch_test_tracepoint_loads(), ld0 = sockwatch_test_loads();

	(void)state;
	sockwatch_test_tracepoints(1);
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.events, 0);
	assert_non_null(strstr(st.events_why, "no sockops callbacks"));
	assert_non_null(strstr(st.events_why, "tracepoints asked for"));
	assert_int_equal(sockdiag_fd(sd), -1);
	/* refused without the tracepoints attached even for a moment, and
	 * before the programs' load (what the refusal turns on is known
	 * without it) */
	assert_int_equal(sockwatch_test_tracepoint_loads(), tp0);
	assert_int_equal(sockwatch_test_loads(), ld0);
	/* asked for with either hooks (sock_liveness = events) */
	sockdiag_opts_default(&o);
	o.discover_ns = 1 * MS;
	o.rediscover_ns = 3600000 * MS;
	o.no_switch = 1;
	o.events_tracepoints = 1;
	sockdiag_set_opts(sd, &o);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.events_sockops, 0);
	assert_true(sockdiag_fd(sd) >= 0);
	sd_done(sd);
	sockwatch_test_tracepoints(0);
	sd = gated(3600000 * MS);
	sockdiag_stats(sd, &st);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.events_sockops, 1);
	sd_done(sd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(sd_opens_parse__kernel_text__active_plus_passive, test_teardown),
		cmocka_unit_test_teardown(sd_opens_parse__not_the_kernels_text__refused, test_teardown),
		cmocka_unit_test_teardown(sd_inuse_parse__kernel_text__tcp_inuse, test_teardown),
		cmocka_unit_test_teardown(sd_opens_read__own_namespace__each_connection_counts_twice, test_teardown),
		cmocka_unit_test_teardown(sd_opens_open__other_namespace__its_counters, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__nothing_opened__no_dump_known_sockets_read, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__one_closed_one_opened__new_one_found, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__rediscover__dump_when_the_last_is_that_old, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__repaired_socket__found_without_an_open, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__more_than_a_reader_run__each_read_once, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__long_threshold__idle_socket_read_each_refresh, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__threshold_below_a_poll_and_back__registered_again, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__idle_unread_until_the_deadline, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__lost_timer__every_socket_read, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__discovery_due_within_the_slack, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__young_wait_the_kernel_holds__left_then_posted, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__new_socket_after_a_post__its_post_reads_it, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__left_established__read_at_once, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__left_established_post_lost__every_socket_read, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__no_memory_at_registration__tried_again, test_teardown),
		cmocka_unit_test_teardown(sockdiag_open__events_refused__paced_and_says_why, test_teardown),
		cmocka_unit_test_teardown(sockdiag_open__auto__events_only_with_sockops, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__events__refused_callbacks__on_its_pace, test_teardown),
		cmocka_unit_test_teardown(sockdiag_poll__auto__busy_socket_on_its_pace_until_idle, test_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
