/* Unit tests: the flow-source drivers of the readers of unmodified engines
 * (collectors/flow_src_{rdmaqp,vma,onload}.c) behind flow_src_ops, on
 * crafted inputs: RDMA netlink replies through the recorded-reply path,
 * statistics files on disk, Onload tool output through a fake runner.
 *
 * Also a writer of crafted QP dumps for the system tests:
 *   test_flow_readers --write-qp DIR [--dev NAME] [--index N] QP...
 * QP is LQPN:TYPE:STATE:SQ_PSN:RQ_PSN[:PORT[:RQPN]] (numbers, TYPE 2 RC,
 * STATE 3 RTS, 6 ERR): DIR/dev-get.nlhex and DIR/res-qp-get.nlhex are
 * written atomically (a running daemon reads the old or the new). */
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

#include "collectors/devlink_health.h"
#include "collectors/flow_live.h"
#include "collectors/flow_onload.h"
#include "collectors/flow_rdmaqp.h"
#include "collectors/flow_vma.h"
#include "collectors/flowsrc.h"
#include "lib/json.h"

/* ================================================================ QP dumps */

struct cqp {
	uint32_t port, lqpn, rqpn, sq, rq, pid;
	uint8_t type, state;
};

/* The device lookup reply (nldev.c fill_nldev_handle), then NLMSG_DONE. */
static size_t craft_dev(uint8_t *buf, uint32_t index, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf), *done;
	size_t len;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	len = MNL_ALIGN(nlh->nlmsg_len);
	done = mnl_nlmsg_put_header(buf + len);
	done->nlmsg_type = NLMSG_DONE;
	mnl_nlmsg_put_extra_header(done, sizeof(int));
	return len + done->nlmsg_len;
}

/* A RES_QP_GET dump as nldev.c res_get_common_dumpit() and
 * fill_res_qp_entry() send it, one QP entry each, then NLMSG_DONE. */
static size_t craft_qps(uint8_t *buf, uint32_t index, const char *name, const struct cqp *q,
			unsigned n)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf), *done;
	struct nlattr *tab;
	size_t len;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	tab = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
	for (unsigned i = 0; i < n; i++) {
		struct nlattr *e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);

		if (q[i].port)
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, q[i].port);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, q[i].lqpn);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PDN, 3);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, q[i].pid);
		if (q[i].type == FLOW_QPT_RC || q[i].type == FLOW_QPT_UC) {
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, q[i].rqpn);
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQ_PSN, q[i].rq);
		}
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_SQ_PSN, q[i].sq);
		if (q[i].type == FLOW_QPT_RC || q[i].type == FLOW_QPT_UC)
			mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 3);
		mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, q[i].type);
		mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, q[i].state);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, tab);
	len = MNL_ALIGN(nlh->nlmsg_len);
	done = mnl_nlmsg_put_header(buf + len);
	done->nlmsg_type = NLMSG_DONE;
	mnl_nlmsg_put_extra_header(done, sizeof(int));
	return len + done->nlmsg_len;
}

/* Write DIR/NAME through a temporary file and rename (atomic). */
static int put_nlhex(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char tmp[PATH_MAX], path[PATH_MAX], e[256];

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(tmp);
	if (dlh_nlhex_write(tmp, "crafted by tests/unit/test_flow_readers.c", buf, len, e,
			    sizeof(e)) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "%s: %s\n", path, e);
		return -1;
	}
	return 0;
}

static uint8_t qbuf[65536] __attribute__((aligned(8)));

static int write_qps(const char *dir, uint32_t index, const char *dev, const struct cqp *q,
		     unsigned n)
{
	size_t len = craft_dev(qbuf, index, dev);

	if (put_nlhex(dir, "dev-get.nlhex", qbuf, len) < 0)
		return -1;
	len = craft_qps(qbuf, index, dev, q, n);
	return put_nlhex(dir, "res-qp-get.nlhex", qbuf, len);
}

static int write_qp_main(int argc, char **argv)
{
	struct cqp q[64];
	const char *dev = "mlx5_0";
	uint32_t index = 1;
	unsigned n = 0;

	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
			dev = argv[++i];
		} else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
			index = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (n < 64) {
			unsigned v[7] = { 0, 2, 3, 0, 0, 1, 0x500 };
			char *p = argv[i];

			for (int k = 0; k < 7 && *p; k++) {
				v[k] = (unsigned)strtoul(p, &p, 0);
				if (*p == ':')
					p++;
				else if (*p) {
					fprintf(stderr, "--write-qp: bad QP '%s'\n", argv[i]);
					return 2;
				}
			}
			q[n++] = (struct cqp){ .lqpn = v[0], .type = (uint8_t)v[1],
					       .state = (uint8_t)v[2], .sq = v[3], .rq = v[4],
					       .port = v[5], .rqpn = v[6], .pid = 4242 };
		}
	}
	return write_qps(argv[2], index, dev, q, n) < 0 ? 1 : 0;
}

/* ================================================================ helpers */

struct got {
	struct flow_obs o[64];
	unsigned n;
};

static void collect(const struct flow_obs *o, void *arg)
{
	struct got *g = arg;

	if (g->n < 64)
		g->o[g->n++] = *o;
}

static const struct flow_obs *by_session(const struct got *g, uint64_t session)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->o[i].session == session)
			return &g->o[i];
	return NULL;
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/test_flow_readers.XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void rmdir_all(char *d)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

static int evid_calls;
static void evid_done(void *arg)
{
	(void)arg;
	evid_calls++;
}

/* ================================================================ rdmaqp */

#define SESS(lqpn) ((1ull << 32) | (lqpn))

static void flow_src_rdmaqp__crafted_dumps__healthy_waiting_failed_and_evidence(void **state)
{
	char *dir = tmpdir();
	struct flow_src_ctx ctx = { .port_name = "p", .netns_fd = -1, .rdma_dev = "mlx5_0",
				    .rdma_port = 1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct cqp q[5] = {
		/* A healthy ping-pong about to wrap its 24-bit PSNs */
		{ .port = 1, .lqpn = 0x11, .rqpn = 0x21, .sq = 0xfffffe, .rq = 0xfffffe, .type = 2, .state = 3 },
		/* B: requests go out, responses stop coming */
		{ .port = 1, .lqpn = 0x12, .rqpn = 0x22, .sq = 100, .rq = 50, .type = 2, .state = 3 },
		/* C: in ERR */
		{ .port = 1, .lqpn = 0x13, .rqpn = 0x23, .sq = 7, .rq = 7, .type = 2, .state = 3 },
		/* D: the other RDMA port; E: no port yet */
		{ .port = 2, .lqpn = 0x14, .rqpn = 0x24, .sq = 1, .rq = 1, .type = 2, .state = 3 },
		{ .port = 0, .lqpn = 0x15, .sq = 0, .type = 2, .state = 1 },
	};
	struct json_object *out = json_object_new_object(), *st = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_RDMAQP, .session = SESS(0x12) };
	struct got g;
	const struct flow_obs *o;

	(void)state;
	ctx.replies_dir = dir;
	/* without a reply file for the device: refused, naming it */
	assert_int_not_equal(flow_src_rdmaqp_ops.open(&s, &ctx), 0);
	assert_non_null(strstr(s.err, "dev-get.nlhex"));
	assert_int_equal(write_qps(dir, 1, "mlx5_1", q, 5), 0);
	assert_int_equal(flow_src_rdmaqp_ops.open(&s, &ctx), -ENODEV);
	assert_non_null(strstr(s.err, "mlx5_0"));
	assert_int_equal(write_qps(dir, 1, "mlx5_0", q, 5), 0);
	assert_int_equal(flow_src_rdmaqp_ops.open(&s, &ctx), 0);
	g.n = 0;
	assert_int_equal(flow_src_rdmaqp_ops.poll(&s, collect, &g), 3);  /* D, E left out */
	assert_null(by_session(&g, SESS(0x14)));
	assert_null(by_session(&g, SESS(0x15)));
	for (int round = 1; round <= 4; round++) {
		q[0].sq = (q[0].sq + 1) & 0xffffff;     /* A wraps through 0 */
		q[0].rq = (q[0].rq + 1) & 0xffffff;
		if (round == 1) {
			q[1].sq++;                      /* a request and its response */
			q[1].rq++;
		} else if (round == 2) {
			q[1].sq++;                      /* a request, no response */
		}
		if (round == 2)
			q[2].state = FLOW_QPS_ERR;
		assert_int_equal(write_qps(dir, 1, "mlx5_0", q, 5), 0);
		usleep(1000);
		g.n = 0;
		assert_int_equal(flow_src_rdmaqp_ops.poll(&s, collect, &g), 3);
	}
	o = by_session(&g, SESS(0x11));
	assert_non_null(o);
	assert_int_equal(flow_live_of(o), FLOW_LIVE_PROGRESS);
	assert_int_equal(o->tx_msgs, 4);        /* 0xfffffe -> 0x000002: 4, not 16M */
	o = by_session(&g, SESS(0x12));
	assert_int_equal(flow_live_of(o), FLOW_LIVE_WAITING);
	assert_true(o->live_since_ns > 0);
	o = by_session(&g, SESS(0x13));
	assert_int_equal(flow_live_of(o), FLOW_LIVE_FAILED);
	/* evidence: the involved QP's entry, and the QP that is not in RTS */
	assert_int_equal(flow_src_rdmaqp_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done,
						      NULL), 0);
	assert_int_equal(jx_len(jx_arr(out, "involved")), 1);
	assert_int_equal(jx_u64(json_object_array_get_idx(jx_arr(out, "involved"), 0), "lqpn"),
			 0x12);
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(out, "involved"), 0),
				   "verdict"), "waiting");
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(out, "not_rts"), 0), "state"),
			    "ERR");
	flow_src_rdmaqp_ops.status(&s, st);
	assert_int_equal(jx_u64(st, "qps"), 3);
	assert_int_equal(jx_u64(st, "device_index"), 1);
	/* a garbage reply: the poll fails with the file named, the flows stay */
	{
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s/res-qp-get.nlhex", dir);
		f = fopen(path, "w");
		fputs("ffffffff 0000\n", f);
		fclose(f);
		usleep(1000);
		g.n = 0;
		assert_true(flow_src_rdmaqp_ops.poll(&s, collect, &g) < 0);
		assert_non_null(strstr(s.err, "res-qp-get.nlhex"));
		assert_int_equal(g.n, 3);
	}
	flow_src_rdmaqp_ops.close(&s);
	json_object_put(out);
	json_object_put(st);
	rmdir_all(dir);
}

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
	char *dir = tmpdir(), path[PATH_MAX], bad[PATH_MAX], xdir[PATH_MAX];
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct json_object *st = json_object_new_object(), *out = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_VMA, .pid = getpid() };
	struct got g;
	uint32_t r0;

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
	assert_int_equal(flow_src_vma_ops.poll(&s, collect, &g), 1);
	assert_int_equal(g.o[0].src, FLOW_SRC_VMA);
	assert_int_equal(g.o[0].pid, getpid());
	/* the one write: reader_counter + 1 */
	r0 = reader_counter(path);
	assert_int_equal(r0, 6);
	assert_int_equal(reader_counter(bad), 5);      /* refused file: untouched */
	/* the engine publishes: a request out, no reply (counters then still) */
	vma_file(path, VMA_MD5, UINT32_MAX, 10, 11, 0);
	usleep(1000);
	g.n = 0;
	flow_src_vma_ops.poll(&s, collect, &g);
	assert_int_equal(flow_live_of(&g.o[0]), FLOW_LIVE_PROGRESS);
	usleep(1000);
	g.n = 0;
	flow_src_vma_ops.poll(&s, collect, &g);
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
	assert_int_equal(flow_src_vma_ops.poll(&s, collect, &g), 0);
	flow_src_vma_ops.close(&s);
	json_object_put(st);
	json_object_put(out);
	rmdir_all(dir);
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
		p32(b, k + 400, 20 + i);        /* fd */
		p32(b, k + 404, 5000 + i);      /* inode */
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

static const struct flow_obs *by_lport(const struct got *g, uint16_t port)
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
	char *dir = tmpdir(), xdir[PATH_MAX - 32], path[PATH_MAX], nofd[PATH_MAX];
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct xsock xs[3] = {
		{ "fd00::1", "fd00::2", 7000, 7100, 10, 10, 0 },        /* A healthy */
		{ "fd00::1", "fd00::3", 7001, 7101, 10, 10, 0 },        /* B waiting */
		{ "fd00::1", "fd00::4", 7002, 7102, 10, 10, 128 },      /* C unread */
	};
	struct json_object *st = json_object_new_object(), *out = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_VMA, .pid = getpid() };
	const struct flow_obs *a, *w, *h;
	struct got g;

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
		xlio_file(path, 4, xs, 3);
		usleep(1000);
		g.n = 0;
		assert_int_equal(flow_src_vma_ops.poll(&s, collect, &g), 3);
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
	rmdir_all(dir);
}

/* ================================================================ onload */

struct fakejob {
	char argv[6][128];
	int argc;
	flow_src_run_fn done;
	void *arg;
	int live;
};
static struct fakejob jobs[16];
static unsigned njobs, ncancel;

static void *fake_start(void *ctx, const char *const *argv, int nsfd, uint64_t timeout_ns,
			size_t max_output, flow_src_run_fn done, void *arg, char *err,
			size_t errlen)
{
	struct fakejob *j = &jobs[njobs % 16];

	(void)ctx;
	(void)err;
	(void)errlen;
	assert_int_equal(nsfd, -1);
	assert_true(timeout_ns > 0 && timeout_ns <= 5000000000ull);
	assert_true(max_output > 0 && max_output <= FLOW_ONLOAD_MAX_TEXT);
	memset(j, 0, sizeof(*j));
	for (j->argc = 0; argv[j->argc] && j->argc < 6; j->argc++)
		snprintf(j->argv[j->argc], sizeof(j->argv[0]), "%s", argv[j->argc]);
	j->done = done;
	j->arg = arg;
	j->live = 1;
	njobs++;
	return j;
}

static void fake_cancel(void *ctx, void *job)
{
	(void)ctx;
	((struct fakejob *)job)->live = 0;
	ncancel++;
}

static const struct flow_src_runner fake_run = { fake_start, fake_cancel, NULL };

static char *slurp(const char *name, size_t *len)
{
	char path[PATH_MAX];
	FILE *f;
	char *b;
	long n;

	snprintf(path, sizeof(path), "tests/fixtures/onload/%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void finish(struct fakejob *j, const char *out, size_t len, int ok, int not_found)
{
	struct flow_src_run_result r = { .ok = ok, .not_found = not_found, .out = out, .len = len,
					 .error = ok ? "" : not_found ? "command not found" : "exit 1",
					 .cost_ns = 1000000 };

	assert_true(j->live);
	j->live = 0;
	j->done(&r, j->arg);
}

#define OSESS(stack, sock) (((uint64_t)(stack) << 32) | (sock))

static void flow_src_onload__tools__json_polls_fallback_and_scrubbed_stackdump(void **state)
{
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1, .run = &fake_run,
				    .tools_dir = "/opt/onload/bin" };
	struct flow_src s = { 0 };
	struct json_object *out = json_object_new_object(), *st;
	struct flow_src_ref ref = { .src = FLOW_SRC_ONLOAD, .session = OSESS(2, 5) };
	size_t l0, l1, ll;
	char *t0 = slurp("orm_json-sockets-t0.json", &l0), *t1 = slurp("orm_json-sockets-t1.json", &l1);
	char *lots = slurp("stackdump-lots-0044-during.txt", &ll);
	struct got g;
	struct fakejob *running;
	unsigned first;

	(void)state;
	njobs = ncancel = 0;
	assert_int_equal(flow_src_onload_ops.open(&s, &ctx), 0);
	/* the first poll starts orm_json, without a shell */
	g.n = 0;
	assert_int_equal(flow_src_onload_ops.poll(&s, collect, &g), 0);
	assert_int_equal(njobs, 1);
	assert_string_equal(jobs[0].argv[0], "/opt/onload/bin/orm_json");
	assert_string_equal(jobs[0].argv[1], "stack");
	assert_string_equal(jobs[0].argv[2], "stats");
	/* one at a time: no second run while the first one runs */
	flow_src_onload_ops.poll(&s, collect, &g);
	assert_int_equal(njobs, 1);
	finish(&jobs[0], t0, l0, 1, 0);
	usleep(1000);
	g.n = 0;
	flow_src_onload_ops.poll(&s, collect, &g);
	first = g.n;
	assert_true(first >= 3);
	assert_int_equal(njobs, 2);
	finish(&jobs[1], t1, l1, 1, 0);
	g.n = 0;
	flow_src_onload_ops.poll(&s, collect, &g);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 3))), FLOW_LIVE_PROGRESS);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 5))), FLOW_LIVE_WAITING);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 6))), FLOW_LIVE_HELD);
	assert_int_equal(by_session(&g, OSESS(2, 6))->unread, 64);
	assert_int_equal(by_session(&g, OSESS(2, 5))->inflight, 64);
	running = &jobs[(njobs - 1) % 16];      /* that poll started the next run */
	assert_string_equal(running->argv[0], "/opt/onload/bin/orm_json");
	/* evidence: the involved stack's stackdump, --nolock --nopids, scrubbed */
	{
		unsigned before = njobs;
		struct json_object *stack;
		const char *text;

		evid_calls = 0;
		assert_int_equal(flow_src_onload_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done,
							      out), 1);
		assert_int_equal(njobs, before + 1);
		struct fakejob *j = &jobs[before % 16];

		assert_string_equal(j->argv[0], "/opt/onload/bin/onload_stackdump");
		assert_string_equal(j->argv[1], "--nolock");
		assert_string_equal(j->argv[2], "--nopids");
		assert_string_equal(j->argv[3], "2");
		assert_string_equal(j->argv[4], "lots");
		assert_int_equal(jx_len(jx_arr(out, "sockets")), 1);
		finish(j, lots, ll, 1, 0);
		assert_int_equal(evid_calls, 1);
		stack = json_object_array_get_idx(jx_arr(out, "stacks"), 0);
		text = jx_str(stack, "lots");
		assert_non_null(text);
		assert_null(strstr(text, "SECRET"));
		assert_non_null(strstr(text, "removed by nicstalld"));
		assert_int_equal(jx_u64(jx_obj(stack, "counters"), "lock_wakes"), 12438);
		assert_int_equal(jx_u64(jx_obj(stack, "counters"), "tcp_send_nonb_pool_empty"), 39);
	}
	/* a cancelled evidence run never calls back */
	{
		unsigned c = ncancel;

		assert_int_equal(flow_src_onload_ops.evidence(&s, &ref, 1, "after", out, evid_done,
							      &s), 1);
		flow_src_onload_ops.evidence_cancel(&s, &s);
		assert_int_equal(ncancel, c + 1);
	}
	/* orm_json missing: onload_stackdump --nolock lots instead */
	{
		struct fakejob *j = running;

		finish(j, "", 0, 0, 1);
		j = &jobs[(njobs - 1) % 16];
		assert_string_equal(j->argv[0], "/opt/onload/bin/onload_stackdump");
		assert_string_equal(j->argv[1], "--nolock");
		assert_string_equal(j->argv[2], "lots");
		finish(j, lots, ll, 1, 0);
	}
	st = json_object_new_object();
	flow_src_onload_ops.status(&s, st);
	assert_string_equal(jx_str(st, "tool"), "/opt/onload/bin/onload_stackdump");
	json_object_put(st);
	/* neither tool: said so, nothing runs until the next look */
	usleep(1000);
	flow_src_onload_ops.poll(&s, collect, &g);
	finish(&jobs[(njobs - 1) % 16], "", 0, 0, 1);
	assert_non_null(strstr(s.err, "not installed"));
	{
		unsigned n = njobs;

		usleep(1000);
		flow_src_onload_ops.poll(&s, collect, &g);
		assert_int_equal(njobs, n);
	}
	flow_src_onload_ops.close(&s);
	json_object_put(out);
	free(t0);
	free(t1);
	free(lots);
}

static void to_repo_root(void)
{
	char exe[PATH_MAX], *p;
	ssize_t n;

	if (access("tests/fixtures/onload/README.md", R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	for (int up = 0; up < 4 && (p = strrchr(exe, '/')); up++) {
		*p = '\0';
		if (chdir(exe) == 0 && access("tests/fixtures/onload/README.md", R_OK) == 0)
			return;
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_src_rdmaqp__crafted_dumps__healthy_waiting_failed_and_evidence),
		cmocka_unit_test(flow_src_vma__files_in_dir__read_bumped_judged_refused_named),
		cmocka_unit_test(flow_src_vma__xlio_file__healthy_waiting_held_evidence),
		cmocka_unit_test(flow_src_onload__tools__json_polls_fallback_and_scrubbed_stackdump),
	};

	if (argc >= 3 && !strcmp(argv[1], "--write-qp"))
		return write_qp_main(argc, argv);
	to_repo_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
