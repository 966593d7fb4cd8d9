/* vmaengine: an emulated libvma process for tests.
 *
 * It runs a UDP ping-pong over the kernel (server or client role, any
 * addresses: two network namespaces or loopback) and publishes its socket
 * in a vmastat.<pid> file laid out as libvma 9.8.84 does
 * (collectors/flow_vma.c's table), behaving as libvma's statistics
 * publisher (src/stats/stats_publisher.cpp in libvma 9.8.84):
 *
 *  - vma_shmem_stats_open(): the file is <dir>/vmastat.<pid>, created with
 *    umask 0 and mode 0644, written full size (sizeof(sh_mem_t) + fds *
 *    sizeof(socket_instance_block_t)) and mapped shared; ver_info,
 *    stats_protocol_ver (32 hex digits, no NUL), max_skt_inst_num = fds and
 *    reader_counter = 0 are set;
 *  - vma_stats_instance_create_socket_block(): the socket takes the first
 *    block whose b_enabled is false, zeroed;
 *  - should_write(), run every STATS_PUBLISHER_TIMER_PERIOD (10 ms): when
 *    reader_counter differs from the value seen last, copy now and allow
 *    copies for STATS_PUBLISH_DURATION (10 s); within that window copy every
 *    STATS_PUBLISH_INTERVAL (500 ms); otherwise never, and never before the
 *    first change (its counter starts past the window). The copy is a plain
 *    memcpy of the private socket_stats_t into the block (no seqlock).
 *
 * Counters as libvma keeps them: n_rx_packets / n_rx_bytes per datagram
 * the application received, n_tx_sent_pkt_count / _byte_count per send,
 * n_rx_ready_pkt_count / _byte_count what waits to be read (here the
 * kernel socket's FIONREAD), 32-bit.
 *
 *   vmaengine --role server --bind 10.77.0.2:11111 [--stall-after N]
 *             [--stall-mode noreply|noread]
 *   vmaengine --role client --bind 10.77.0.1:0 --peer 10.77.0.2:11111
 *             [--count N] [--interval-us U] [--size B]
 *   common:   [--dir /tmp] [--fds 100] [--duration S] [--publish-log]
 *
 * It stops by itself after --duration seconds (default 60) or SIGTERM and
 * removes its file. --publish-log prints "publish <n>" on stdout for every
 * copy (tests count them). */
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

#include "collectors/flow_vma.h"

#define TIMER_MS 10
#define DURATION_TICKS (10 * 1000 / TIMER_MS)
#define INTERVAL_TICKS (500 / TIMER_MS)
#define SOCK_STATS_SIZE 336u        /* sizeof(socket_stats_t) in 9.8.84 */

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

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
	const struct flow_vma_layout *l;
	unsigned char *shm;
	size_t size;
	unsigned char *blk;             /* our socket_instance_block_t */
	unsigned char local[SOCK_STATS_SIZE];   /* private socket_stats_t */
	int last_reader;
	int timers;
	unsigned long copies;
	int log;
};

static void p32(unsigned char *b, uint32_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static uint32_t g32(const unsigned char *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}
static void p64(unsigned char *b, uint32_t off, uint64_t v) { memcpy(b + off, &v, 8); }

static int pub_open(struct pub *p, const char *dir, unsigned fds, char *path, size_t plen)
{
	mode_t old;
	unsigned char *zero;
	int fd;

	p->l = &flow_vma_layouts[0];
	p->size = p->l->sizeof_sh_mem + (size_t)fds * p->l->block_size;
	snprintf(path, plen, "%s/vmastat.%d", dir, (int)getpid());
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
	p->shm[p->l->ver_info + 0] = 9;
	p->shm[p->l->ver_info + 1] = 8;
	p->shm[p->l->ver_info + 2] = 84;
	p->shm[p->l->ver_info + 3] = 0;
	memcpy(p->shm + p->l->protocol_ver, p->l->md5, 32);
	p64(p->shm, p->l->max_skt_inst_num, fds);
	p32(p->shm, p->l->reader_counter, 0);
	p->last_reader = 0;
	p->timers = DURATION_TICKS + 1;         /* nothing until a reader asks */
	/* first free block */
	for (unsigned i = 0; i < fds; i++) {
		unsigned char *b = p->shm + p->l->skt_inst_arr + (size_t)i * p->l->block_size;

		if (!b[p->l->b_enabled]) {
			b[p->l->b_enabled] = 1;
			memset(b + p->l->skt_stats, 0, SOCK_STATS_SIZE);
			p->blk = b;
			break;
		}
	}
	return p->blk ? 0 : -1;
}

/* stats_publisher.cpp should_write(): its timers_counter starts at
 * TIMERS_IN_STATS_PUBLISH_DURATION + 1, "initial value that will prevent
 * write to shmem before an explicit request" (pub_open sets it). */
static int should_write(struct pub *p)
{
	int rc = (int)g32(p->shm, p->l->reader_counter);

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
	memcpy(p->blk + p->l->skt_stats, p->local, SOCK_STATS_SIZE);
	p->copies++;
	if (p->log) {
		printf("publish %lu\n", p->copies);
		fflush(stdout);
	}
}

static void add32(struct pub *p, uint32_t off, uint32_t d)
{
	p32(p->local, off, g32(p->local, off) + d);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", 1, NULL, 'r' }, { "bind", 1, NULL, 'b' }, { "peer", 1, NULL, 'p' },
		{ "dir", 1, NULL, 'd' }, { "fds", 1, NULL, 'f' }, { "count", 1, NULL, 'c' },
		{ "interval-us", 1, NULL, 'i' }, { "size", 1, NULL, 's' },
		{ "stall-after", 1, NULL, 'S' }, { "stall-mode", 1, NULL, 'M' },
		{ "duration", 1, NULL, 'D' }, { "publish-log", 0, NULL, 'L' }, { 0, 0, 0, 0 },
	};
	const char *role = "server", *dir = "/tmp", *mode = "noreply";
	struct sockaddr_in me = { 0 }, peer = { 0 };
	unsigned fds = 100, size = 64, count = 0, interval_us = 1000;
	long stall_after = -1;
	unsigned duration = 60;
	int have_peer = 0, fd, opt;
	struct pub p = { 0 };
	char path[4096];
	unsigned char buf[65536];
	uint64_t t_end, next_tick, next_send = 0;
	unsigned long sent = 0, got = 0;
	int waiting = 0;
	const struct flow_vma_layout *l;
	uint32_t cnt;

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
		default: goto usage;
		}
	}
	if ((strcmp(role, "server") && strcmp(role, "client")) || !me.sin_family ||
	    (!strcmp(role, "client") && !have_peer) || fds < 1 || fds > 1024 ||
	    size < 1 || size > sizeof(buf) || duration < 1 || duration > 3600 ||
	    (strcmp(mode, "noreply") && strcmp(mode, "noread")))
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
	l = p.l;
	{
		socklen_t sl = sizeof(me);

		getsockname(fd, (struct sockaddr *)&me, &sl);
	}
	/* socket_stats_t control fields, as sockinfo fills them: fd and
	 * inode = fd2inode(m_fd), the OS socket's (sockinfo::sockinfo()) */
	p32(p.local, l->fd, (uint32_t)fd);
	{
		struct stat sst;

		if (fstat(fd, &sst) == 0)
			p32(p.local, l->inode, (uint32_t)sst.st_ino);
	}
	p32(p.local, l->tcp_state, 0);
	p.local[l->socket_type] = SOCK_DGRAM;
	p.local[l->b_is_offloaded] = 1;
	memcpy(p.local + l->bound_if, &me.sin_addr, 4);
	memcpy(p.local + l->bound_port, &me.sin_port, 2);
	if (have_peer) {
		memcpy(p.local + l->connected_ip, &peer.sin_addr, 4);
		memcpy(p.local + l->connected_port, &peer.sin_port, 2);
	}
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

		if (!strcmp(role, "client") && !waiting && (!count || sent < count)) {
			uint64_t us = now * 1000;

			if (us >= next_send) {
				memset(buf, 'q', size);
				if (sendto(fd, buf, size, 0, (struct sockaddr *)&peer, sizeof(peer)) ==
				    (ssize_t)size) {
					sent++;
					add32(&p, l->counters + l->tx_packets, 1);
					add32(&p, l->counters + l->tx_bytes, size);
					waiting = 1;
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

			if (n >= 0) {
				got++;
				add32(&p, l->counters + l->rx_packets, 1);
				add32(&p, l->counters + l->rx_bytes, (uint32_t)n);
				if (!strcmp(role, "client")) {
					waiting = 0;
				} else if (!(stall_after >= 0 && (long)got > stall_after)) {
					if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl) == n) {
						add32(&p, l->counters + l->tx_packets, 1);
						add32(&p, l->counters + l->tx_bytes, (uint32_t)n);
					}
				}
			}
		}
		if (ioctl(fd, FIONREAD, &ready) == 0) {
			cnt = ready > 0 ? 1 : 0;
			p32(p.local, l->rx_ready_pkt, cnt);
			p64(p.local, l->rx_ready_byte, ready > 0 ? (uint64_t)ready : 0);
		}
		if (now_ms() >= next_tick) {
			pub_tick(&p);
			next_tick += TIMER_MS;
			if (next_tick < now_ms())
				next_tick = now_ms() + TIMER_MS;
		}
	}
	unlink(path);
	munmap(p.shm, p.size);
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: vmaengine --role server|client --bind A:P [--peer A:P] [--dir D] [--fds N]\n"
			"       [--count N] [--interval-us U] [--size B] [--stall-after N]\n"
			"       [--stall-mode noreply|noread] [--duration S] [--publish-log]\n");
	return 2;
}
