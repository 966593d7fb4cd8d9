/* Unit tests: the libvma and libxlio statistics-file driver
 * (collectors/flows/src_vma.c) behind flow_src_ops, on crafted files on
 * disk (the parser itself: test_flow_vma.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "collectors/counters/devlink_health.h"
#include "collectors/flows/flow_live.h"
#include "collectors/flows/onload_parse.h"
#include "collectors/flows/rdmaqp_parse.h"
#include "collectors/flows/vma_parse.h"
#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/loop.h"

#include "coretest.h"
#include "nstest.h"
#include "readtest.h"

/* ================================================================ vma */

#define VMA_MD5 "25ca1bbb55c2c5536b0b4bded2689e9a"
#define V_SHMEM 12416u
#define V_BLOCKS 12072u
#define V_BLOCK 344u

static void p32(uint8_t *b, size_t o, uint32_t v) { memcpy(b + o, &v, 4); }

/* One libvma 9.8.84 file, one UDP socket (field offsets as in
 * test_flow_vma.c, from the released vma_stats.h field order). */
static void vma_file(const char *path, const char *md5, uint32_t reader, uint32_t rx,
		     uint32_t tx, uint64_t ready)
{
	size_t len = V_SHMEM + 3 * (size_t)V_BLOCK, k = V_BLOCKS + 8, c = k + 72;
	uint8_t *b = calloc(1, len);
	uint64_t nsock = 3;
	struct in_addr a;
	uint16_t pt;
	int fd;

	assert_non_null(b);
	p32(b, 0, reader);
	b[4] = 9; b[5] = 8; b[6] = 84;
	memcpy(b + 8, md5, 32);
	memcpy(b + 12064, &nsock, 8);
	b[V_BLOCKS] = 1;                        /* b_enabled */
	p32(b, k, 9);                           /* fd */
	p32(b, k + 4, 777);                     /* inode */
	b[k + 12] = SOCK_DGRAM;
	b[k + 16] = 1;
	inet_pton(AF_INET, "10.77.0.1", &a);
	memcpy(b + k + 20, &a, 4);
	inet_pton(AF_INET, "10.77.0.2", &a);
	memcpy(b + k + 24, &a, 4);
	pt = htons(40000);
	memcpy(b + k + 32, &pt, 2);
	pt = htons(11111);
	memcpy(b + k + 34, &pt, 2);
	memcpy(b + k + 48, &ready, 8);
	p32(b, c + 0, rx);
	p32(b, c + 4, rx * 64);
	p32(b, c + 64, tx);
	p32(b, c + 68, tx * 64);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	/* keep the reader_counter the reader wrote */
	if (reader == UINT32_MAX)
		assert_int_equal(pread(fd, b, 4, 0), 4);
	assert_int_equal(pwrite(fd, b, len, 0), (ssize_t)len);
	close(fd);
	free(b);
}

static uint32_t reader_counter(const char *path)
{
	uint32_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 4, 0), 4);
	close(fd);
	return v;
}

static void flow_src_vma__files_in_dir__read_bumped_judged_refused_named(void **state)
{
	char *dir = coretest_tmpdir(), path[PATH_MAX], bad[PATH_MAX], xdir[PATH_MAX];
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct json_object *st = json_object_new_object(), *out = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_VMA, .pid = getpid() };
	struct nstest_obs g;
	uint32_t r0;
	uint64_t b0, b1, b2;

	(void)state;
	snprintf(path, sizeof(path), "%s/vmastat.%d", dir, (int)getpid());
	snprintf(bad, sizeof(bad), "%s/vmastat.%d", dir, (int)getppid());
	snprintf(xdir, sizeof(xdir), "%s/xlio", dir);
	vma_file(path, VMA_MD5, 5, 10, 10, 0);
	vma_file(bad, "0123456789abcdef0123456789abcdef", 5, 10, 10, 0);
	ctx.vma_dir = dir;
	ctx.xlio_dir = xdir;                    /* missing: watched when it appears */
	assert_int_equal(flow_src_vma_ops.open(&s, &ctx), 0);
	g.n = 0;
	b0 = loop_mono_ns();
	assert_int_equal(flow_src_vma_ops.poll(&s, nstest_collect, &g), 1);
	b1 = loop_mono_ns();
	assert_int_equal(g.o[0].src, FLOW_SRC_VMA);
	assert_int_equal(g.o[0].pid, getpid());
	/* a first read: when it was copied is not known (no bump before) */
	assert_int_equal(g.o[0].data_ns, 0);
	/* the one write: reader_counter + 1 */
	r0 = reader_counter(path);
	assert_int_equal(r0, 6);
	assert_int_equal(reader_counter(bad), 5);      /* refused file: untouched */
	/* the engine publishes: a request out, no reply (counters then still) */
	vma_file(path, VMA_MD5, UINT32_MAX, 10, 11, 0);
	usleep(1000);
	g.n = 0;
	b2 = loop_mono_ns();
	flow_src_vma_ops.poll(&s, nstest_collect, &g);
	assert_int_equal(flow_live_of(&g.o[0]), FLOW_LIVE_PROGRESS);
	/* copied after the first read's bump, not when this read came */
	assert_true(g.o[0].data_ns >= b0 && g.o[0].data_ns <= b1 && g.o[0].data_ns < b2);
	usleep(1000);
	g.n = 0;
	flow_src_vma_ops.poll(&s, nstest_collect, &g);
	assert_int_equal(flow_live_of(&g.o[0]), FLOW_LIVE_WAITING);
	assert_true(reader_counter(path) >= r0 + 2);
	/* status names the file of an unknown version, and the version */
	flow_src_vma_ops.status(&s, st);
	assert_int_equal(jx_len(jx_arr(st, "files")), 2);
	{
		struct json_object *fs = jx_arr(st, "files");
		const char *e0 = jx_text(json_object_array_get_idx(fs, 0), "error");
		const char *e1 = jx_text(json_object_array_get_idx(fs, 1), "error");

		assert_non_null(strstr(*e0 ? e0 : e1, "0123456789abcdef0123456789abcdef"));
	}
	/* evidence: every field of the involved socket, and the layout */
	ref.session = g.o[0].session;
	assert_int_equal(flow_src_vma_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done, NULL),
			 0);
	assert_int_equal(jx_len(jx_arr(out, "sockets")), 1);
	{
		struct json_object *k = json_object_array_get_idx(jx_arr(out, "sockets"), 0);
		struct json_object *f = json_object_array_get_idx(jx_arr(out, "files"), 0);

		assert_string_equal(jx_str(k, "local"), "10.77.0.1:40000");
		assert_int_equal(jx_u64(k, "n_tx_sent_pkt_count"), 11);
		assert_string_equal(jx_str(k, "verdict"), "waiting");
		assert_string_equal(jx_str(f, "release"), "libvma 9.8.84");
		assert_string_equal(jx_str(f, "stats_protocol_ver"), VMA_MD5);
	}
	/* the file goes away: so does its flow */
	unlink(path);
	flow_src_vma_ops.handle(&s);
	g.n = 0;
	assert_int_equal(flow_src_vma_ops.poll(&s, nstest_collect, &g), 0);
	flow_src_vma_ops.close(&s);
	json_object_put(st);
	json_object_put(out);
	coretest_rmdir(dir);
}

/* ================================================================ xlio */

#define XLIO_MD5 "8acf4c5e11413c1da2c7f27b2ec26476"
#define X_SHMEM  41720u         /* sizeof(sh_mem_t), one block included */
#define X_BLOCKS 41256u         /* offsetof(sh_mem_t, skt_inst_arr) */
#define X_BLOCK  464u           /* socket_instance_block_t, no DEFINED_UTLS */

static void p16(uint8_t *b, size_t o, uint16_t v) { memcpy(b + o, &v, 2); }
static void p64(uint8_t *b, size_t o, uint64_t v) { memcpy(b + o, &v, 8); }

struct xsock {
	const char *laddr, *raddr;      /* IPv6 */
	uint16_t lport, rport;
	uint32_t rx_pkts, tx_pkts;
	uint64_t rx_ready;
	uint32_t fd, inode;             /* 0: 20 + its slot, 5000 + its slot */
};

/* One libxlio 3.70.2 file (tag 3.70.2, src/core/util/xlio_stats.h, md5
 * 8acf4c5e11413c1da2c7f27b2ec26476), its TCP sockets in the first slots
 * of nslots; offsets as literals from that header's field order, as in
 * test_flow_vma.c: sh_mem_t puts reader_counter at 8408, ver_info at
 * 8412, max_skt_inst_num at 41216, stats_protocol_ver at 41224 and the
 * blocks at 41256; socket_stats_t (block + 8) starts with
 * n_tx_ready_byte_count, n_rx_ready_byte_count, n_rx_ready_pkt_count,
 * tcp_state, then socket_counters_t (+24: n_rx_packets, 64-bit n_rx_bytes
 * at +64 and n_tx_sent_byte_count at +72, n_tx_sent_pkt_count at +88);
 * the ip_address pair at +352/+368, fd, inode at +400/+404, sa_family,
 * ports, socket type and offload flag at +432..+439. The reader_counter
 * the reader wrote is kept. */
static void xlio_file(const char *path, unsigned nslots, const struct xsock *xs, unsigned n)
{
	size_t len = X_SHMEM + (size_t)nslots * X_BLOCK;
	uint8_t *b = calloc(1, len);
	int fd;

	assert_non_null(b);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		assert_int_equal(pread(fd, b + 8408, 4, 8408), 4);
		close(fd);
	}
	b[8412] = 3; b[8413] = 70; b[8414] = 2;
	memcpy(b + 41224, XLIO_MD5, 32);
	p64(b, 41216, nslots);
	for (unsigned i = 0; i < n; i++) {
		size_t blk = X_BLOCKS + (size_t)i * X_BLOCK, k = blk + 8, c = k + 24;
		struct in6_addr a;

		b[blk] = 1;                     /* b_enabled */
		p64(b, k + 8, xs[i].rx_ready);
		p32(b, k + 16, xs[i].rx_ready ? 1 : 0);
		p32(b, k + 20, 4);              /* ESTABLISHED */
		p32(b, c + 0, xs[i].rx_pkts);
		p64(b, c + 64, (uint64_t)xs[i].rx_pkts * 100);
		p64(b, c + 72, (uint64_t)xs[i].tx_pkts * 100);
		p32(b, c + 88, xs[i].tx_pkts);
		assert_int_equal(inet_pton(AF_INET6, xs[i].laddr, &a), 1);
		memcpy(b + k + 352, &a, 16);
		assert_int_equal(inet_pton(AF_INET6, xs[i].raddr, &a), 1);
		memcpy(b + k + 368, &a, 16);
		p32(b, k + 400, xs[i].fd ? xs[i].fd : 20 + i);                 /* fd */
		p32(b, k + 404, xs[i].inode ? xs[i].inode : 5000 + i);        /* inode */
		p16(b, k + 432, AF_INET6);
		p16(b, k + 434, htons(xs[i].lport));
		p16(b, k + 436, htons(xs[i].rport));
		b[k + 438] = SOCK_STREAM;
		b[k + 439] = 1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, len, 0), (ssize_t)len);
	close(fd);
	free(b);
}

/* The engine publishes xs[0..n) in a 4-slot file at path (a millisecond
 * after the last, so the file's time moves); one poll must pass n flows. */
static void publish_poll(struct flow_src *s, const char *path, const struct xsock *xs,
			 unsigned n, struct nstest_obs *g)
{
	xlio_file(path, 4, xs, n);
	usleep(1000);
	g->n = 0;
	assert_int_equal(flow_src_vma_ops.poll(s, nstest_collect, g), (int)n);
}

static const struct flow_obs *by_lport(const struct nstest_obs *g, uint16_t port)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->o[i].key.sport == htons(port))
			return &g->o[i];
	return NULL;
}

/* libxlio through the driver: a healthy ping-pong, a request whose reply
 * never comes (waiting), bytes ready and never read (held, unread); the
 * evidence names the layout; a file published without per-socket blocks
 * (XLIO_STATS_FD_NUM unset) is read and said to be so in status. */
static void flow_src_vma__xlio_file__healthy_waiting_held_evidence(void **state)
{
	char *dir = coretest_tmpdir(), xdir[PATH_MAX - 32], path[PATH_MAX], nofd[PATH_MAX];
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct xsock xs[3] = {
		{ "fd00::1", "fd00::2", 7000, 7100, 10, 10, 0, 0, 0 },      /* A healthy */
		{ "fd00::1", "fd00::3", 7001, 7101, 10, 10, 0, 0, 0 },      /* B waiting */
		{ "fd00::1", "fd00::4", 7002, 7102, 10, 10, 128, 0, 0 },      /* C unread */
	};
	struct json_object *st = json_object_new_object(), *out = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_VMA, .pid = getpid() };
	const struct flow_obs *a, *w, *h;
	struct nstest_obs g;

	(void)state;
	snprintf(xdir, sizeof(xdir), "%s/xlio", dir);
	assert_int_equal(mkdir(xdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/xliostat.%d", xdir, (int)getpid());
	snprintf(nofd, sizeof(nofd), "%s/xliostat.%d", xdir, (int)getppid());
	xlio_file(path, 4, xs, 3);
	xlio_file(nofd, 0, NULL, 0);
	ctx.vma_dir = dir;
	ctx.xlio_dir = xdir;
	assert_int_equal(flow_src_vma_ops.open(&s, &ctx), 0);
	for (int round = 0; round < 4; round++) {
		if (round > 0) {
			xs[0].rx_pkts++;        /* A: request and reply every time */
			xs[0].tx_pkts++;
		}
		if (round == 1)
			xs[1].tx_pkts++;        /* B: one request, no reply ever */
		publish_poll(&s, path, xs, 3, &g);
	}
	a = by_lport(&g, 7000);
	w = by_lport(&g, 7001);
	h = by_lport(&g, 7002);
	assert_non_null(a);
	assert_non_null(w);
	assert_non_null(h);
	assert_int_equal(a->src, FLOW_SRC_VMA);
	assert_int_equal(strncmp(a->engine, "xlio:", 5), 0);
	assert_int_equal(flow_live_of(a), FLOW_LIVE_PROGRESS);
	assert_int_equal(a->tx_bytes, 300);     /* 64-bit bytes, from first sight */
	assert_int_equal(flow_live_of(w), FLOW_LIVE_WAITING);
	assert_true(w->live_since_ns > 0);
	assert_int_equal(flow_live_of(h), FLOW_LIVE_HELD);
	assert_int_equal(h->unread, 128);
	{
		uint32_t rc = 0;
		int fd = open(path, O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, &rc, 4, 8408), 4);
		close(fd);
		assert_true(rc >= 4);           /* bumped at every read, kept by the writer */
		assert_int_equal(reader_counter(path), 0);      /* offset 0 is not written */
	}
	/* evidence: the waiting socket's block and the layout it was read with */
	ref.session = w->session;
	assert_int_equal(flow_src_vma_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done, NULL),
			 0);
	assert_int_equal(jx_len(jx_arr(out, "sockets")), 1);
	{
		struct json_object *k = json_object_array_get_idx(jx_arr(out, "sockets"), 0);
		struct json_object *f = json_object_array_get_idx(jx_arr(out, "files"), 0);

		assert_non_null(strstr(jx_str(k, "remote"), "fd00::3"));
		assert_int_equal(jx_u64(k, "n_tx_sent_pkt_count"), 11);
		assert_int_equal(jx_u64(k, "n_rx_packets"), 10);
		assert_string_equal(jx_str(k, "socket_type"), "stream");
		assert_string_equal(jx_str(k, "verdict"), "waiting");
		assert_string_equal(jx_str(f, "release"), "libxlio 3.70.2");
		assert_string_equal(jx_str(f, "variant"), "");
		assert_string_equal(jx_str(f, "stats_protocol_ver"), XLIO_MD5);
		assert_int_equal(jx_u64(f, "max_skt_inst_num"), 4);
	}
	/* the file without socket blocks: read, and status says why */
	flow_src_vma_ops.status(&s, st);
	{
		struct json_object *fs = jx_arr(st, "files");
		int warned = 0;

		assert_int_equal(jx_len(fs), 2);
		for (unsigned i = 0; i < 2; i++) {
			struct json_object *f = json_object_array_get_idx(fs, i);

			if (!strcmp(jx_text(f, "file"), nofd)) {
				assert_non_null(strstr(jx_text(f, "warning"), "XLIO_STATS_FD_NUM"));
				warned = 1;
			}
		}
		assert_true(warned);
	}
	flow_src_vma_ops.close(&s);
	json_object_put(st);
	json_object_put(out);
	coretest_rmdir(dir);
}

/* A slot the engine gives to a new socket (another fd and inode): the new
 * one is counted from its own first sight, not on from the old one's
 * counters; the socket that kept its slot, fd and inode keeps counting.
 * (Matching by slot alone passes the other tests and fails this one.) */
static void flow_src_vma__slot_reused__new_socket_counted_afresh(void **state)
{
	char *dir = coretest_tmpdir(), xdir[PATH_MAX - 32], path[PATH_MAX];
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct xsock xs[2] = {
		{ "fd00::1", "fd00::2", 7000, 7100, 10, 10, 0, 0, 0 },  /* stays */
		{ "fd00::1", "fd00::3", 7001, 7101, 10, 11, 0, 0, 0 },  /* closes */
	};
	const struct flow_obs *a, *b;
	struct nstest_obs g;

	(void)state;
	snprintf(xdir, sizeof(xdir), "%s/xlio", dir);
	assert_int_equal(mkdir(xdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/xliostat.%d", xdir, (int)getpid());
	xlio_file(path, 4, xs, 2);
	ctx.vma_dir = dir;
	ctx.xlio_dir = xdir;
	assert_int_equal(flow_src_vma_ops.open(&s, &ctx), 0);
	g.n = 0;
	assert_int_equal(flow_src_vma_ops.poll(&s, nstest_collect, &g), 2);
	/* slot 1 now another socket's, its counters above the old one's (a
	 * step back would be ignored as a reset either way) */
	xs[0].tx_pkts += 2;
	xs[0].rx_pkts += 2;
	xs[1] = (struct xsock){ "fd00::1", "fd00::5", 7005, 7105, 15, 18, 0, 41, 6001 };
	publish_poll(&s, path, xs, 2, &g);
	a = by_lport(&g, 7000);
	b = by_lport(&g, 7005);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(by_lport(&g, 7001));
	assert_int_equal(a->tx_msgs, 2);        /* from its first sight */
	assert_int_equal(a->tx_bytes, 200);
	assert_int_equal(b->tx_msgs, 0);        /* its own first sight */
	assert_int_equal(b->tx_bytes, 0);
	assert_int_equal(b->session, ((uint64_t)6001 << 32) | 41);
	flow_src_vma_ops.close(&s);
	coretest_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_src_vma__files_in_dir__read_bumped_judged_refused_named),
		cmocka_unit_test(flow_src_vma__xlio_file__healthy_waiting_held_evidence),
		cmocka_unit_test(flow_src_vma__slot_reused__new_socket_counted_afresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
