/* nsengine: a small request/response engine that publishes every session in
 * a nicstall flow table (include/nicstall/flowtab.h). It is a test load for
 * nicstalld and an example for engine authors: look for "PUBLISH" below,
 * that is all an engine has to add. Publishing costs no system call; the
 * time comes from nsft_now_ns() (clock_gettime in the vDSO).
 *
 *   nsengine server --listen ADDR:PORT [--proto tcp|udp] [--table-dir DIR]
 *                   [--name NAME] [--capacity N]
 *   nsengine client --connect ADDR:PORT --sessions N [--proto tcp|udp]
 *                   [--size BYTES] [--interval-us N] [--count N]
 *                   [--duration S] [--table-dir DIR] [--name NAME]
 *                   [--stop-after SESSION:N] [--mute-after SESSION:N]
 *                   [--read-file PATH --read-kib N] [--spin-us N]
 *                   [--step-file PATH --step-rank I --step-ranks N [--step-slack K]]
 *                   [--metrics-fd FD] [--latency]
 *                   (N sessions: 1..4096)
 *
 * Each client session sends a request (an 8-byte header: total length and
 * sequence number, both big endian, then a payload) and waits for the
 * server's echo before the next one. --stop-after S:N makes session S (0 =
 * first) stop sending after N round trips: it goes idle. --mute-after S:N
 * makes it send request N+1 and then drop every reply unseen, as if the
 * replies were lost before the engine: the table shows a session waiting,
 * holding nothing (the stall of nicstalld's seed 000). Both may repeat.
 *
 * A producer that reads its data: --read-file makes every request wait for
 * N KiB read from PATH (a file or block device) in 4 KiB O_DIRECT reads,
 * in order, wrapping at its end. The reads block the engine, as seed 004's
 * prefill blocked on its disk: a slow disk stops the stream. --spin-us
 * makes every request cost N microseconds of the engine's own CPU time
 * (its compute): a CPU quota stops the stream. A collective:
 * --step-file is a file of 16 counters shared by N ranks' clients (rank I
 * publishes its round trips in counter I); a client sends request n+1 only
 * while n < K + the fewest round trips of any rank (K = --step-slack, 2),
 * so the ranks stop together when one of them stalls.
 *
 * Its own metrics: --metrics-fd FD (nsengine_io.c). --latency: the client
 * times every round trip (send to whole reply, the vDSO clock) and prints
 * their percentiles at the end (nsengine_lathist.h), for the bench's perturbation
 * pairs.
 *
 * SIGINT/SIGTERM: print a per-session summary, remove the table, exit 0.
 * Sockets are kernel sockets (non-blocking, one epoll loop), so the
 * engine-held bytes are the engine's own buffers: unsent = bytes of a
 * message not yet accepted by send(); unread and staged are 0. */
#include <nicstall/flowtab.h>

#include "nsengine_lathist.h"
#include "nsengine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define HDR 8
#define MSG_MAX 65000
#define MAX_RULES 64
#define STEP_SLOTS 16
#define BLK 4096

enum kind { K_SESS, K_LISTEN, K_SIGNAL, K_TIMER };

struct sess {
	enum kind kind;             /* first: epoll data points here */
	int fd;
	unsigned idx;
	struct nsft_record *rec;    /* PUBLISH: this session's record */
	struct sockaddr_storage local, peer;
	socklen_t peerlen;
	int connected, closed, stopped, muted;
	unsigned char out[2 * MSG_MAX];
	size_t outlen, outoff, outmsg;  /* outmsg: length of the message at 0 */
	unsigned char in[2 * MSG_MAX];
	size_t inlen;
	uint32_t seq;
	uint64_t trips, next_ns, held;
	uint64_t sent_ns;           /* the request in flight went then */
	int waiting, want_out, finished;
	uint64_t stop_after, mute_after;  /* UINT64_MAX: never */
};

struct ctx {
	int server, udp, ep, sfd, tfd;
	int await;                  /* server: declare every session awaiting a stream */
	enum kind listen_kind;      /* K_LISTEN, for the listening socket */
	int lfd;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct sess **s;
	unsigned n, cap;
	size_t size;
	uint64_t interval_ns, count, deadline_ns;
	struct nsft_table table;
	int failed;
	int read_fd;                /* --read-file, -1: none */
	unsigned read_kib;
	uint64_t read_off, read_size;
	unsigned char *read_buf;
	uint64_t spin_ns;           /* --spin-us: CPU time per request */
	uint64_t *step;             /* --step-file: STEP_SLOTS shared counters */
	unsigned step_rank, step_ranks;
	uint64_t step_slack;
	struct lathist *lat;        /* --latency: the client's round trips */
};

static enum kind sig_kind = K_SIGNAL, timer_kind = K_TIMER;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void ep_mod(struct ctx *c, struct sess *s)
{
	struct epoll_event ev = { .events = EPOLLIN | (s->want_out ? EPOLLOUT : 0),
				  .data.ptr = s };

	if (epoll_ctl(c->ep, EPOLL_CTL_MOD, s->fd, &ev) < 0)
		die("epoll_ctl");
}

static struct sess *sess_new(struct ctx *c, int fd)
{
	struct sess *s = calloc(1, sizeof(*s));

	if (!s)
		die("calloc");
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->s = realloc(c->s, c->cap * sizeof(*c->s));
		if (!c->s)
			die("realloc");
	}
	s->kind = K_SESS;
	s->fd = fd;
	s->idx = c->n;
	s->stop_after = s->mute_after = UINT64_MAX;
	c->s[c->n++] = s;
	return s;
}

/* PUBLISH: a session exists once its addresses are known. */
static void sess_publish(struct ctx *c, struct sess *s)
{
	socklen_t l = sizeof(s->local);

	if (s->fd >= 0 && !(c->udp && c->server))
		getsockname(s->fd, (struct sockaddr *)&s->local, &l);
	else
		s->local = c->addr;
	s->rec = nsft_add(&c->table, ((uint64_t)getpid() << 32) | (s->idx + 1),
			  c->udp ? IPPROTO_UDP : IPPROTO_TCP,
			  (struct sockaddr *)&s->local, (struct sockaddr *)&s->peer);
	if (!s->rec)
		fprintf(stderr, "nsengine: session %u not published: %s\n", s->idx, strerror(errno));
	else if (c->await)
		/* a consumer of a steady stream: silence from the peer is a
		 * stall of the producer, and the daemon should say so */
		nsft_set_state(s->rec, NSFT_ST_OPEN | NSFT_ST_AWAITING);
}

static void sess_close(struct ctx *c, struct sess *s)
{
	if (s->closed)
		return;
	s->closed = 1;
	if (s->rec)
		nsft_remove(&c->table, s->rec);     /* PUBLISH: session ended */
	s->rec = NULL;
	if (s->fd >= 0 && !(c->udp && c->server))
		close(s->fd);
	s->fd = -1;
}

static uint32_t be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* The first queued message has fully left: PUBLISH it and drop it. */
static void pop_sent(struct sess *s, int publish)
{
	if (s->rec && publish)
		nsft_on_send(s->rec, s->outmsg, nsft_now_ns());
	memmove(s->out, s->out + s->outmsg, s->outlen - s->outmsg);
	s->outlen -= s->outmsg;
	s->outoff = s->outoff > s->outmsg ? s->outoff - s->outmsg : 0;
	s->outmsg = s->outlen >= HDR ? be32(s->out) : 0;
}

/* Write what is queued (whole messages, in order). */
static void sess_flush(struct ctx *c, struct sess *s)
{
	int udp_srv = c->udp && c->server;
	uint64_t unsent;

	while (s->outlen) {
		const unsigned char *p = s->out + s->outoff;
		size_t len = c->udp ? s->outmsg : s->outlen - s->outoff;
		ssize_t n;

		if (udp_srv)
			n = sendto(s->fd, p, len, 0, (struct sockaddr *)&s->peer, s->peerlen);
		else
			n = send(s->fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && !udp_srv)
				break;                  /* wait for EPOLLOUT */
			if (c->udp && (errno == EAGAIN || errno == ECONNREFUSED)) {
				pop_sent(s, 0);         /* UDP: the datagram is lost */
				continue;
			}
			fprintf(stderr, "nsengine: session %u: send: %s\n", s->idx, strerror(errno));
			c->failed = 1;
			sess_close(c, s);
			return;
		}
		s->outoff += (size_t)n;
		while (s->outlen && s->outoff >= s->outmsg)
			pop_sent(s, 1);
	}
	unsent = s->outlen - s->outoff;
	if (s->rec && unsent != s->held) {      /* PUBLISH: what the engine holds */
		nsft_set_held(s->rec, unsent, 0, 0);
		s->held = unsent;
	}
	if (!udp_srv && s->want_out != (s->outlen != 0)) {
		s->want_out = s->outlen != 0;
		ep_mod(c, s);
	}
}

static void queue_msg(struct ctx *c, struct sess *s, const unsigned char *msg, size_t len)
{
	if (s->outlen + len > sizeof(s->out)) {
		fprintf(stderr, "nsengine: session %u: output queue full, closing\n", s->idx);
		sess_close(c, s);
		return;
	}
	memcpy(s->out + s->outlen, msg, len);
	if (s->outlen == 0)
		s->outmsg = len;
	s->outlen += len;
	sess_flush(c, s);
}

/* The fewest round trips of any rank of the collective. */
static uint64_t step_min(const struct ctx *c)
{
	uint64_t m = UINT64_MAX;

	for (unsigned i = 0; i < c->step_ranks; i++) {
		uint64_t v = __atomic_load_n(&c->step[i], __ATOMIC_ACQUIRE);

		if (v < m)
			m = v;
	}
	return m;
}

/* The request's data: read_kib KiB from the file, in order (blocking). */
static void read_data(struct ctx *c)
{
	for (unsigned k = 0; k < c->read_kib / 4; k++) {
		ssize_t n;

		if (c->read_off + BLK > c->read_size)
			c->read_off = 0;
		uint64_t t0 = nsft_now_ns();

		n = pread(c->read_fd, c->read_buf, BLK, (off_t)c->read_off);
		if (n < 0 && errno != EINTR)
			die("nsengine: read-file");
		mx_add(&mx.read_wait_ns, nsft_now_ns() - t0);
		mx_add(&mx.reads, 1);
		mx_add(&mx.read_bytes, n > 0 ? (uint64_t)n : 0);
		c->read_off += BLK;
	}
}

static void client_send(struct ctx *c, struct sess *s)
{
	unsigned char msg[MSG_MAX];
	uint32_t v;

	if (s->trips >= s->stop_after) {
		s->stopped = 1;
		return;
	}
	if (c->step && s->trips >= step_min(c) + c->step_slack) {
		/* the collective waits for a slower rank: try again later */
		s->next_ns = nsft_now_ns() + (c->interval_ns ? c->interval_ns : 1000000u);
		return;
	}
	if (c->read_fd >= 0)
		read_data(c);
	if (c->spin_ns) {
		struct timespec t0, t;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
		       (uint64_t)t0.tv_nsec < c->spin_ns);
		mx_add(&mx.compute_ns, (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u +
				       (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec);
	}
	if (s->trips >= s->mute_after)
		s->muted = 1;
	v = htonl((uint32_t)c->size);
	memcpy(msg, &v, 4);
	v = htonl(++s->seq);
	memcpy(msg + 4, &v, 4);
	memset(msg + HDR, 'a' + (int)(s->idx % 26), c->size - HDR);
	s->waiting = 1;
	if (c->lat)
		s->sent_ns = nsft_now_ns();
	queue_msg(c, s, msg, c->size);
}

/* A whole message arrived on s. */
static void on_message(struct ctx *c, struct sess *s, const unsigned char *msg, size_t len)
{
	uint64_t now = nsft_now_ns();

	if (!c->server && s->muted)
		return;                 /* "lost before the engine": not counted */
	if (s->rec)
		nsft_on_recv(s->rec, len, now);     /* PUBLISH */
	mx_add(&mx.round_trips, 1);
	if (c->server) {
		s->trips++;
		queue_msg(c, s, msg, len);
		return;
	}
	s->waiting = 0;
	s->trips++;
	if (c->lat && s->sent_ns && now >= s->sent_ns)
		lh_add(c->lat, now - s->sent_ns);
	if (c->step && s->idx == 0)
		__atomic_store_n(&c->step[c->step_rank], s->trips, __ATOMIC_RELEASE);
	if (c->count && s->trips >= c->count) {
		s->finished = 1;
		return;
	}
	s->next_ns = now + c->interval_ns;
	if (!c->interval_ns)
		client_send(c, s);
}

static void sess_read(struct ctx *c, struct sess *s)
{
	for (;;) {
		ssize_t n = recv(s->fd, s->in + s->inlen, sizeof(s->in) - s->inlen, 0);
		size_t off = 0;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			if (n < 0 && !c->server) {
				fprintf(stderr, "nsengine: session %u: recv: %s\n", s->idx, strerror(errno));
				c->failed = 1;
			}
			sess_close(c, s);
			return;
		}
		if (n < 0)
			return;
		if (c->udp) {
			uint32_t l;

			if (n >= HDR && (memcpy(&l, s->in, 4), ntohl(l) == (uint32_t)n))
				on_message(c, s, s->in, (size_t)n);
			continue;
		}
		s->inlen += (size_t)n;
		while (s->inlen - off >= HDR) {
			uint32_t l;

			memcpy(&l, s->in + off, 4);
			l = ntohl(l);
			if (l < HDR || l > MSG_MAX) {
				fprintf(stderr, "nsengine: session %u: bad message length %u\n", s->idx, l);
				sess_close(c, s);
				return;
			}
			if (s->inlen - off < l)
				break;
			on_message(c, s, s->in + off, l);
			if (s->closed)
				return;
			off += l;
		}
		memmove(s->in, s->in + off, s->inlen - off);
		s->inlen -= off;
	}
}

/* UDP server: one socket, one session per peer. */
static void udp_server_read(struct ctx *c)
{
	unsigned char buf[MSG_MAX + 1];

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		ssize_t n = recvfrom(c->lfd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &pl);
		struct sess *s = NULL;
		uint32_t l;
		unsigned i;

		if (n < 0)
			return;
		if (n < HDR || (memcpy(&l, buf, 4), ntohl(l) != (uint32_t)n))
			continue;
		for (i = 0; i < c->n; i++)
			if (c->s[i]->peerlen == pl && !memcmp(&c->s[i]->peer, &peer, pl)) {
				s = c->s[i];
				break;
			}
		if (!s) {
			s = sess_new(c, c->lfd);
			s->peer = peer;
			s->peerlen = pl;
			s->connected = 1;
			sess_publish(c, s);
		}
		on_message(c, s, buf, (size_t)n);
	}
}

static void tcp_accept(struct ctx *c)
{
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		int fd = accept4(c->lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		struct sess *s;
		int one = 1;

		if (fd < 0)
			return;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s = sess_new(c, fd);
		s->peer = peer;
		s->peerlen = pl;
		s->connected = 1;
		sess_publish(c, s);
		ev.data.ptr = s;
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			die("epoll_ctl");
	}
}

/* Arm the timer at the earliest paced send (client, --interval-us). */
static void arm_timer(struct ctx *c)
{
	struct itimerspec it;
	uint64_t next = 0;
	unsigned i;

	memset(&it, 0, sizeof(it));
	for (i = 0; i < c->n; i++) {
		struct sess *s = c->s[i];

		uint64_t due = s->next_ns ? s->next_ns : 1;

		if (s->connected && !s->closed && !s->stopped && !s->finished &&
		    !s->waiting && (!next || due < next))
			next = due;
	}
	it.it_value.tv_sec = (time_t)(next / 1000000000u);
	it.it_value.tv_nsec = (long)(next % 1000000000u);
	timerfd_settime(c->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

static void on_timer(struct ctx *c)
{
	uint64_t exp, now = nsft_now_ns();
	unsigned i;

	if (read(c->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		die("timerfd read");
	for (i = 0; i < c->n; i++) {
		struct sess *s = c->s[i];

		if (s->connected && !s->closed && !s->stopped && !s->finished &&
		    !s->waiting && s->next_ns <= now)
			client_send(c, s);
	}
}

static void client_connected(struct ctx *c, struct sess *s)
{
	int err = 0;
	socklen_t l = sizeof(err);

	getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err) {
		fprintf(stderr, "nsengine: session %u: connect: %s\n", s->idx, strerror(err));
		c->failed = 1;
		sess_close(c, s);
		return;
	}
	s->connected = 1;
	s->want_out = 0;
	ep_mod(c, s);
	sess_publish(c, s);
	client_send(c, s);
}

static void start_clients(struct ctx *c, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		int fd = socket(c->addr.ss_family, (c->udp ? SOCK_DGRAM : SOCK_STREAM) |
				SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT };
		struct sess *s;
		int one = 1;

		if (fd < 0)
			die("socket");
		if (!c->udp)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s = sess_new(c, fd);
		s->peer = c->addr;
		s->peerlen = c->addrlen;
		if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen) < 0 && errno != EINPROGRESS)
			die("connect");
		s->want_out = 1;
		ev.data.ptr = s;
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			die("epoll_ctl");
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", 1, 0, 'l' }, { "connect", 1, 0, 'c' }, { "proto", 1, 0, 'p' },
		{ "table-dir", 1, 0, 'd' }, { "name", 1, 0, 'n' }, { "sessions", 1, 0, 's' },
		{ "size", 1, 0, 'z' }, { "interval-us", 1, 0, 'i' }, { "count", 1, 0, 'k' },
		{ "duration", 1, 0, 't' }, { "stop-after", 1, 0, 'S' }, { "mute-after", 1, 0, 'M' },
		{ "capacity", 1, 0, 'C' }, { "await", 0, 0, 'A' }, { "read-file", 1, 0, 'r' },
		{ "read-kib", 1, 0, 'K' }, { "step-file", 1, 0, 'F' }, { "step-rank", 1, 0, 'R' },
		{ "step-ranks", 1, 0, 'N' }, { "step-slack", 1, 0, 'L' }, { "spin-us", 1, 0, 'U' },
		{ "metrics-fd", 1, 0, 'm' }, { "latency", 0, 0, 'T' }, { 0, 0, 0, 0 },
	};
	struct { unsigned sess; uint64_t n; int mute; } rules[MAX_RULES];
	const char *addr = NULL, *dir = NULL, *name = "nsengine", *read_file = NULL;
	const char *step_file = NULL;
	unsigned sessions = 0, capacity = 1024, nrules = 0, i;
	double duration = 0;
	struct ctx c;
	struct epoll_event ev;
	sigset_t mask;
	int o, rc, metrics_fd = -1;

	memset(&c, 0, sizeof(c));
	c.size = 64;
	c.lfd = -1;
	c.read_fd = -1;
	c.step_slack = 2;
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		c.server = 1;
	else if (strcmp(argv[1], "client"))
		usage();
	optind = 2;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'l': case 'c': addr = optarg; break;
		case 'p':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "udp"))
				usage();
			c.udp = !strcmp(optarg, "udp");
			break;
		case 'd': dir = optarg; break;
		case 'n': name = optarg; break;
		case 's': sessions = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'z': c.size = strtoul(optarg, NULL, 10); break;
		case 'i': c.interval_ns = strtoull(optarg, NULL, 10) * 1000u; break;
		case 'k': c.count = strtoull(optarg, NULL, 10); break;
		case 't': duration = strtod(optarg, NULL); break;
		case 'C': capacity = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'A': c.await = 1; break;
		case 'r': read_file = optarg; break;
		case 'K': c.read_kib = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'F': step_file = optarg; break;
		case 'R': c.step_rank = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'N': c.step_ranks = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'L': c.step_slack = strtoull(optarg, NULL, 10); break;
		case 'U': c.spin_ns = strtoull(optarg, NULL, 10) * 1000u; break;
		case 'm': metrics_fd = (int)strtol(optarg, NULL, 10); break;
		case 'T':
			if (!c.lat && !(c.lat = calloc(1, sizeof(*c.lat))))
				die("calloc");
			break;
		case 'S': case 'M':
			if (nrules == MAX_RULES || rule(optarg, &rules[nrules].sess, &rules[nrules].n) < 0)
				usage();
			rules[nrules++].mute = o == 'M';
			break;
		default: usage();
		}
	}
	if (!addr || (!c.server && (sessions == 0 || sessions > 4096)) ||
	    c.size < HDR || c.size > MSG_MAX || capacity == 0 || optind != argc)
		usage();
	if (parse_addr(addr, c.udp, &c.addr, &c.addrlen) < 0)
		usage();
	if (read_file) {
		off_t end;

		if (c.server || c.read_kib < 4 || c.read_kib > 65536)
			usage();
		c.read_fd = open(read_file, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (c.read_fd < 0 || (end = lseek(c.read_fd, 0, SEEK_END)) < BLK ||
		    posix_memalign((void **)&c.read_buf, BLK, BLK))
			die("nsengine: read-file (O_DIRECT, at least 4 KiB)");
		c.read_size = (uint64_t)end;
	}
	if (metrics_fd >= 0) {
		pthread_t th;
		int acc = 0;
		socklen_t al = sizeof(acc);
		sigset_t quit;

		/* the thread must not take SIGINT/SIGTERM (the default action
		 * would end the engine without its summary): blocked before it
		 * starts, it inherits the mask */
		sigemptyset(&quit);
		sigaddset(&quit, SIGINT);
		sigaddset(&quit, SIGTERM);
		sigprocmask(SIG_BLOCK, &quit, NULL);

		if (getsockopt(metrics_fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 || !acc) {
			fprintf(stderr, "nsengine: --metrics-fd %d is not a listening socket\n",
				metrics_fd);
			return 2;
		}
		fcntl(metrics_fd, F_SETFD, FD_CLOEXEC);
		if (pthread_create(&th, NULL, metrics_thread, (void *)(intptr_t)metrics_fd))
			die("nsengine: metrics thread");
		pthread_detach(th);
	}
	if (step_file) {
		int fd;

		if (c.server || c.step_ranks == 0 || c.step_ranks > STEP_SLOTS ||
		    c.step_rank >= c.step_ranks)
			usage();
		fd = open(step_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, STEP_SLOTS * sizeof(uint64_t)) < 0)
			die("nsengine: step-file");
		c.step = mmap(NULL, STEP_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED,
			      fd, 0);
		close(fd);
		if (c.step == MAP_FAILED)
			die("nsengine: step-file mmap");
	}

	/* PUBLISH: one table per process, <dir>/<name>.<pid>.flows */
	rc = nsft_create(&c.table, dir, name, c.server ? capacity : sessions);
	if (rc < 0) {
		fprintf(stderr, "nsengine: flow table in %s: %s\n", dir ? dir : NSFT_DEFAULT_DIR,
			strerror(-rc));
		return 2;
	}
	fprintf(stderr, "nsengine: publishing %s\n", c.table.path);

	c.ep = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	c.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	c.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c.ep < 0 || c.sfd < 0 || c.tfd < 0)
		die("epoll/signalfd/timerfd");
	ev.events = EPOLLIN;
	ev.data.ptr = &sig_kind;
	epoll_ctl(c.ep, EPOLL_CTL_ADD, c.sfd, &ev);
	ev.data.ptr = &timer_kind;
	epoll_ctl(c.ep, EPOLL_CTL_ADD, c.tfd, &ev);

	if (c.server) {
		int one = 1;

		c.lfd = socket(c.addr.ss_family, (c.udp ? SOCK_DGRAM : SOCK_STREAM) |
			       SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c.lfd < 0)
			die("socket");
		setsockopt(c.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(c.lfd, (struct sockaddr *)&c.addr, c.addrlen) < 0 ||
		    (!c.udp && listen(c.lfd, 1024) < 0)) {
			perror("nsengine: bind/listen");
			nsft_close(&c.table, 1);
			return 2;
		}
		c.listen_kind = K_LISTEN;
		ev.data.ptr = &c.listen_kind;
		epoll_ctl(c.ep, EPOLL_CTL_ADD, c.lfd, &ev);
	} else {
		start_clients(&c, sessions);
		for (i = 0; i < nrules; i++) {
			if (rules[i].sess >= c.n)
				usage();
			if (rules[i].mute)
				c.s[rules[i].sess]->mute_after = rules[i].n;
			else
				c.s[rules[i].sess]->stop_after = rules[i].n;
		}
	}
	if (duration > 0)
		c.deadline_ns = nsft_now_ns() + (uint64_t)(duration * 1e9);

	for (int quit = 0; !quit;) {
		struct epoll_event evs[64];
		int n, k, timeout = -1;
		unsigned live = 0;

		if (c.deadline_ns) {
			uint64_t now = nsft_now_ns();

			if (now >= c.deadline_ns)
				break;
			timeout = (int)((c.deadline_ns - now) / 1000000u) + 1;
		}
		if (!c.server) {
			/* stopped or muted sessions stay open until the deadline */
			for (i = 0; i < c.n; i++)
				live += !c.s[i]->closed && !c.s[i]->finished;
			if (!live)
				break;  /* every session did its --count (or failed) */
			if (c.interval_ns)
				arm_timer(&c);
		}
		n = epoll_wait(c.ep, evs, 64, timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (k = 0; k < n; k++) {
			enum kind kd = *(enum kind *)evs[k].data.ptr;
			struct sess *s = evs[k].data.ptr;

			if (kd == K_SIGNAL) {
				quit = 1;
			} else if (kd == K_TIMER) {
				on_timer(&c);
			} else if (kd == K_LISTEN) {
				if (c.udp)
					udp_server_read(&c);
				else
					tcp_accept(&c);
			} else if (!s->closed) {
				if (!s->connected && (evs[k].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
					client_connected(&c, s);
				else if (evs[k].events & EPOLLOUT)
					sess_flush(&c, s);
				if (!s->closed && s->connected && (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
					sess_read(&c, s);
			}
		}
	}

	for (i = 0; i < c.n; i++) {
		struct sess *s = c.s[i];
		char l[64], r[64];

		printf("session %u %s -> %s %s round_trips %" PRIu64 "%s%s%s%s\n", s->idx,
		       fmt_addr(&s->local, l, sizeof(l)), fmt_addr(&s->peer, r, sizeof(r)),
		       c.udp ? "udp" : "tcp", s->trips, s->stopped ? " stopped" : "",
		       s->muted ? " muted" : "", s->waiting ? " waiting" : "",
		       s->closed && !c.server ? " closed" : "");
	}
	if (c.lat && !c.server)
		lh_print(c.lat, stdout);
	free(c.lat);
	fflush(stdout);
	for (i = 0; i < c.n; i++) {
		sess_close(&c, c.s[i]);
		free(c.s[i]);
	}
	free(c.s);
	nsft_close(&c.table, 1);
	return c.failed ? 1 : 0;
}
