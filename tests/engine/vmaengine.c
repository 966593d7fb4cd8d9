/* vmaengine: an emulated libvma or libxlio process for tests.
 *
 * It runs a UDP ping-pong over the kernel (server or client role, any
 * addresses: two network namespaces or loopback) and publishes its socket
 * in a vmastat.<pid> (libvma 9.8.84) or xliostat.<pid> (libxlio 3.70.2,
 * with or without DEFINED_UTLS) file, written through the engine's own
 * statistics header (tests/fixtures/engines/, compiled in
 * tests/engine/engine_stats.cc), behaving as the engines' statistics
 * publisher (src/stats/stats_publisher.cpp in both releases):
 *
 *  - *_shmem_stats_open(): the file is <dir>/vmastat.<pid> (xliostat.),
 *    created with umask 0 and mode 0644, written full size
 *    (SHMEM_STATS_SIZE(fds)) and mapped shared; ver_info,
 *    stats_protocol_ver (32 hex digits, no NUL), max_skt_inst_num = fds and
 *    reader_counter = 0 are set;
 *  - *_stats_instance_create_socket_block(): the socket takes the first
 *    block whose b_enabled is false, reset;
 *  - should_write(), run every STATS_PUBLISHER_TIMER_PERIOD (10 ms): when
 *    reader_counter differs from the value seen last, copy now and allow
 *    copies for STATS_PUBLISH_DURATION (10 s); within that window copy every
 *    STATS_PUBLISH_INTERVAL (500 ms); otherwise never, and never before the
 *    first change (its counter starts past the window). The copy is a plain
 *    memcpy of the private socket_stats_t into the block (no seqlock).
 *
 * The socket block as sockinfo fills it: fd, and inode = fd2inode(fd), the
 * st_ino of fstat() on the socket (libvma sockinfo::sockinfo() in
 * src/vma/sock/sockinfo.cpp with fd2inode() in src/vma/util/utils.cpp;
 * libxlio sockinfo::socket_stats_init() in src/core/sock/sockinfo.cpp),
 * the socket type, b_is_offloaded, the bound and connected address and
 * port (XLIO: sa_family too). Counters as sockinfo keeps them: per
 * datagram received and sent, n_rx_packets / n_rx_bytes and
 * n_tx_sent_pkt_count / _byte_count (save_stats_rx_offload(),
 * save_stats_tx_offload()), n_rx_ready_pkt_count / _byte_count what waits
 * to be read (here the kernel socket's FIONREAD). With --path os the
 * socket is not offloaded (b_is_offloaded false) and every datagram goes
 * through the OS path the way the engines count it (save_stats_rx_os(),
 * save_stats_tx_os(): n_rx_os_packets / _bytes, n_tx_os_packets / _bytes,
 * their EAGAINs and errors); the ready counts stay 0 (they count the
 * engine's own ready list only).
 *
 *   vmaengine --role server --bind 10.77.0.2:11111 [--stall-after N]
 *             [--stall-mode noreply|noread]
 *   vmaengine --role client --bind 10.77.0.1:0 --peer 10.77.0.2:11111
 *             [--count N] [--interval-us U] [--size B]
 *   common:   [--engine vma|xlio|xlio-utls] [--path offload|os] [--dir /tmp]
 *             [--fds 100] [--duration S] [--publish-log] [--latency]
 *
 * It stops by itself after --duration seconds (default 60) or SIGTERM and
 * removes its file. --publish-log prints "publish <n>" on stdout for every
 * copy (tests count them). --latency: the client times each round trip
 * (send to reply, CLOCK_MONOTONIC) and prints their percentiles at the end
 * (examples/nsengine_lathist.h), for the bench's perturbation pairs. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "examples/nsengine_lathist.h"
#include "tests/engine/engine_stats.h"

#define TIMER_MS 10
#define DURATION_TICKS (10 * 1000 / TIMER_MS)
#define INTERVAL_TICKS (500 / TIMER_MS)

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int parse_ep(const char *s, struct sockaddr_in *a)
{
	char buf[64];
	const char *c = strrchr(s, ':');

	if (!c || (size_t)(c - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(c - s));
	buf[c - s] = '\0';
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(c + 1));
	return inet_pton(AF_INET, buf, &a->sin_addr) == 1 ? 0 : -1;
}

struct pub {
	const struct eng_variant *v;
	unsigned char *shm;
	size_t size;
	void *blk;                      /* the block's skt_stats in the file */
	void *local;                    /* the private socket_stats_t */
	enum eng_path path;
	int last_reader;
	int timers;
	unsigned long copies;
	int log;
};

static int pub_open(struct pub *p, const char *dir, unsigned fds, char *path, size_t plen)
{
	mode_t old;
	unsigned char *zero;
	int fd;

	p->size = p->v->shmem_size(fds);
	snprintf(path, plen, "%s/%s.%d", dir, p->v->file_prefix, (int)getpid());
	old = umask(0);
	fd = open(path, O_CREAT | O_RDWR, S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH);
	umask(old);
	if (fd < 0)
		return -1;
	zero = calloc(1, p->size);
	if (!zero || write(fd, zero, p->size) != (ssize_t)p->size) {
		free(zero);
		close(fd);
		return -1;
	}
	free(zero);
	p->shm = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p->shm == MAP_FAILED)
		return -1;
	p->v->shmem_init(p->shm, fds);
	p->last_reader = 0;
	p->timers = DURATION_TICKS + 1;         /* nothing until a reader asks */
	p->local = calloc(1, p->v->stats_size);
	p->blk = p->v->create_socket_block(p->shm);
	return p->local && p->blk ? 0 : -1;
}

/* stats_publisher.cpp should_write(): its timers_counter starts at
 * TIMERS_IN_STATS_PUBLISH_DURATION + 1, "initial value that will prevent
 * write to shmem before an explicit request" (pub_open sets it). */
static int should_write(struct pub *p)
{
	int rc = p->v->reader_counter(p->shm);

	if (rc != p->last_reader) {
		p->last_reader = rc;
		p->timers = 0;
		return 1;
	}
	if (p->timers > DURATION_TICKS)
		return 0;
	++p->timers;
	return p->timers % INTERVAL_TICKS == 0;
}

static void pub_tick(struct pub *p)
{
	if (!should_write(p))
		return;
	memcpy(p->blk, p->local, p->v->stats_size);
	p->copies++;
	if (p->log) {
		printf("publish %lu\n", p->copies);
		fflush(stdout);
	}
}

static void count_rx(struct pub *p, ssize_t n, int err)
{
	p->v->save_rx(p->local, p->path, (long)n, err);
}

static void count_tx(struct pub *p, ssize_t n, int err)
{
	p->v->save_tx(p->local, p->path, (long)n, err);
}

static const struct eng_variant *variant(const char *name)
{
	static const struct eng_variant *const all[] = { &eng_vma, &eng_xlio, &eng_xlio_utls };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", 1, NULL, 'r' }, { "bind", 1, NULL, 'b' }, { "peer", 1, NULL, 'p' },
		{ "dir", 1, NULL, 'd' }, { "fds", 1, NULL, 'f' }, { "count", 1, NULL, 'c' },
		{ "interval-us", 1, NULL, 'i' }, { "size", 1, NULL, 's' },
		{ "stall-after", 1, NULL, 'S' }, { "stall-mode", 1, NULL, 'M' },
		{ "duration", 1, NULL, 'D' }, { "publish-log", 0, NULL, 'L' },
		{ "engine", 1, NULL, 'E' }, { "path", 1, NULL, 'P' }, { "latency", 0, NULL, 'T' },
		{ 0, 0, 0, 0 },
	};
	const char *role = "server", *dir = "/tmp", *mode = "noreply", *ename = "vma";
	const char *pname = "offload";
	struct sockaddr_in me = { 0 }, peer = { 0 };
	unsigned fds = 100, size = 64, count = 0, interval_us = 1000;
	long stall_after = -1;
	unsigned duration = 60;
	int have_peer = 0, fd, opt;
	struct pub p = { 0 };
	struct eng_sock es = { 0 };
	struct stat st;
	char path[4096];
	unsigned char buf[65536];
	uint64_t t_end, next_tick, next_send = 0;
	unsigned long sent = 0, got = 0;
	int waiting = 0;
	static struct lathist lat;      /* --latency */
	uint64_t sent_ns = 0;
	int latency = 0;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 'b': if (parse_ep(optarg, &me) < 0) goto usage; break;
		case 'p': if (parse_ep(optarg, &peer) < 0) goto usage; have_peer = 1; break;
		case 'd': dir = optarg; break;
		case 'f': fds = (unsigned)atoi(optarg); break;
		case 'c': count = (unsigned)atoi(optarg); break;
		case 'i': interval_us = (unsigned)atoi(optarg); break;
		case 's': size = (unsigned)atoi(optarg); break;
		case 'S': stall_after = atol(optarg); break;
		case 'M': mode = optarg; break;
		case 'D': duration = (unsigned)atoi(optarg); break;
		case 'L': p.log = 1; break;
		case 'E': ename = optarg; break;
		case 'P': pname = optarg; break;
		case 'T': latency = 1; break;
		default: goto usage;
		}
	}
	p.v = variant(ename);
	p.path = !strcmp(pname, "os") ? ENG_OS : ENG_OFFLOAD;
	if (!p.v)
		fprintf(stderr, "vmaengine: --engine '%s': not vma, xlio or xlio-utls\n", ename);
	if (strcmp(pname, "offload") && strcmp(pname, "os"))
		fprintf(stderr, "vmaengine: --path '%s': not offload or os\n", pname);
	if ((strcmp(role, "server") && strcmp(role, "client")) || !me.sin_family ||
	    (!strcmp(role, "client") && !have_peer) || fds < 1 || fds > 1024 ||
	    size < 1 || size > sizeof(buf) || duration < 1 || duration > 3600 ||
	    (strcmp(mode, "noreply") && strcmp(mode, "noread")) || !p.v ||
	    (strcmp(pname, "offload") && strcmp(pname, "os")))
		goto usage;
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		perror("vmaengine: socket/bind");
		return 1;
	}
	if (pub_open(&p, dir, fds, path, sizeof(path)) < 0) {
		perror("vmaengine: statistics file");
		return 1;
	}
	{
		socklen_t sl = sizeof(me);

		getsockname(fd, (struct sockaddr *)&me, &sl);
	}
	/* the socket block as sockinfo fills it: fd2inode() is fstat's st_ino */
	es.fd = fd;
	es.inode = fstat(fd, &st) == 0 ? (uint32_t)st.st_ino : 0;
	es.socket_type = SOCK_DGRAM;
	es.offloaded = p.path == ENG_OFFLOAD;
	es.laddr = me.sin_addr.s_addr;
	es.lport = me.sin_port;
	if (have_peer) {
		es.raddr = peer.sin_addr.s_addr;
		es.rport = peer.sin_port;
	}
	p.v->stats_init(p.local, &es);
	printf("ready %s\n", path);
	fflush(stdout);
	t_end = now_ms() + duration * 1000ull;
	next_tick = now_ms() + TIMER_MS;
	while (!stop && now_ms() < t_end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		int tmo = next_tick > now ? (int)(next_tick - now) : 0;
		int stalled = stall_after >= 0 && (long)got >= stall_after;
		int ready = 0;

		/* --latency: a reply a second late was lost (UDP): send again */
		if (latency && waiting && sent_ns && now_ns() - sent_ns > 1000000000ull) {
			waiting = 0;
			sent_ns = 0;
		}
		if (!strcmp(role, "client") && !waiting && (!count || sent < count)) {
			uint64_t us = now * 1000;

			if (us >= next_send) {
				ssize_t n;

				uint64_t t0 = latency ? now_ns() : 0;

				memset(buf, 'q', size);
				n = sendto(fd, buf, size, 0, (struct sockaddr *)&peer, sizeof(peer));
				count_tx(&p, n, errno);
				if (n == (ssize_t)size) {
					sent++;
					waiting = 1;
					sent_ns = t0;   /* the send is part of the trip */
				}
				next_send = us + interval_us;
			}
		}
		if (!strcmp(role, "server") && stalled && !strcmp(mode, "noread"))
			pfd.events = 0;         /* stops reading: data waits */
		if (poll(&pfd, 1, tmo) > 0 && (pfd.revents & POLLIN)) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

			count_rx(&p, n, errno);
			if (n >= 0) {
				got++;
				if (!strcmp(role, "client")) {
					if (latency && waiting && sent_ns)
						lh_add(&lat, now_ns() - sent_ns);
					waiting = 0;
				} else if (!(stall_after >= 0 && (long)got > stall_after)) {
					ssize_t m = sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);

					count_tx(&p, m, errno);
				}
			}
		}
		if (p.path == ENG_OFFLOAD && ioctl(fd, FIONREAD, &ready) == 0)
			p.v->set_rx_ready(p.local, ready > 0 ? 1 : 0, ready > 0 ? (uint64_t)ready : 0);
		if (now_ms() >= next_tick) {
			pub_tick(&p);
			next_tick += TIMER_MS;
			if (next_tick < now_ms())
				next_tick = now_ms() + TIMER_MS;
		}
	}
	if (latency && !strcmp(role, "client"))
		lh_print(&lat, stdout);
	unlink(path);
	munmap(p.shm, p.size);
	free(p.local);
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: vmaengine --role server|client --bind A:P [--peer A:P] [--dir D] [--fds N]\n"
			"       [--count N] [--interval-us U] [--size B] [--stall-after N]\n"
			"       [--stall-mode noreply|noread] [--duration S] [--publish-log]\n"
			"       [--engine vma|xlio|xlio-utls] [--path offload|os] [--latency]\n");
	return 2;
}
