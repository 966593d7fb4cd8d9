/* flow_vma: libvma / libxlio statistics files as hostile input. See
 * vma_parse.h.
 *
 * Layout table. Each row describes one released version, from the field
 * order of its statistics header and the x86_64 ABI (natural alignment;
 * std::bitset<1024> is 128 bytes; enums and bool are 4 and 1 bytes).
 * tests/unit/test_flow_vma_layout.c compares every entry with offsetof()
 * and sizeof() on the released headers, vendored in
 * tests/fixtures/engines/ (only the tests compile them).
 *
 *  libvma 9.8.84 (tag 9.8.84, src/vma/util/vma_stats.h, md5
 *    25ca1bbb55c2c5536b0b4bded2689e9a as configure.ac computes
 *    STATS_PROTOCOL_VER with md5sum): sh_mem_t is reader_counter,
 *    ver_info, stats_protocol_ver[32], log levels, fd_dump, 16 CQ, 16 ring
 *    and 2 buffer-pool blocks, the multicast table, iomux stats,
 *    max_skt_inst_num (size_t), then skt_inst_arr[]; 12416 bytes with one
 *    socket block of 344. socket_stats_t: fd, inode, tcp_state,
 *    socket_type, padding, b_is_offloaded/b_blocking/b_mc_loop, bound_if,
 *    connected_ip, mc_tx_if (in_addr_t), bound_port, connected_port,
 *    thread ids, n_rx_ready_pkt_count, n_rx_ready_byte_count (u64),
 *    byte limit, zcopy count, n_tx_ready_byte_count (u64), then
 *    socket_counters_t (27 u32: n_rx_packets, n_rx_bytes, ...).
 *  libxlio 3.70.2 (tag 3.70.2, src/core/util/xlio_stats.h, md5
 *    8acf4c5e11413c1da2c7f27b2ec26476): the counters come first in
 *    socket_stats_t (n_tx_ready_byte_count, n_rx_ready_byte_count,
 *    n_rx_ready_pkt_count, tcp_state, socket_counters_t with 64-bit byte
 *    counters), addresses are 16-byte ip_address with sa_family; sh_mem_t
 *    puts the per-type blocks first and stats_protocol_ver last. With
 *    DEFINED_UTLS (a configure option that does not change the md5) TLS
 *    counters and fields enlarge the socket block from 464 to 528 bytes:
 *    the file size tells the two apart.
 */
#include "collectors/flows/vma_parse.h"
#include "lib/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/util.h"

#define NA UINT32_MAX

const struct flow_vma_layout flow_vma_layouts[] = {
	{
		.engine = FLOW_VMA_VMA, .release = "libvma 9.8.84", .variant = "",
		.md5 = "25ca1bbb55c2c5536b0b4bded2689e9a",
		.reader_counter = 0, .ver_info = 4, .protocol_ver = 8,
		.max_skt_inst_num = 12064, .skt_inst_arr = 12072,
		.block_size = 344, .sizeof_sh_mem = 12416,
		.b_enabled = 0, .skt_stats = 8,
		.fd = 0, .inode = 4, .tcp_state = 8, .socket_type = 12, .b_is_offloaded = 16,
		.bound_if = 20, .connected_ip = 24, .bound_port = 32, .connected_port = 34,
		.sa_family = NA, .addr_len = 4,
		.rx_ready_pkt = 44, .rx_ready_byte = 48, .tx_ready_byte = 64,
		.counters = 72,
		.rx_packets = 0, .rx_bytes = 4, .rx_errors = 32, .rx_drop_pkt = 24, .rx_drop_byte = 20,
		.tx_packets = 64, .tx_bytes = 68, .tx_errors = 72, .tx_retransmits = 80,
		.rx_os_packets = 40, .rx_os_bytes = 44, .rx_os_errors = 52, .rx_os_eagain = 56,
		.tx_os_packets = 84, .tx_os_bytes = 88, .tx_os_errors = 92, .tx_os_eagain = 96,
		.byte_width = 4,
	},
	{
		.engine = FLOW_VMA_XLIO, .release = "libxlio 3.70.2", .variant = "",
		.md5 = "8acf4c5e11413c1da2c7f27b2ec26476",
		.reader_counter = 8408, .ver_info = 8412, .protocol_ver = 41224,
		.max_skt_inst_num = 41216, .skt_inst_arr = 41256,
		.block_size = 464, .sizeof_sh_mem = 41720,
		.b_enabled = 0, .skt_stats = 8,
		.fd = 400, .inode = 404, .tcp_state = 20, .socket_type = 438, .b_is_offloaded = 439,
		.bound_if = 352, .connected_ip = 368, .bound_port = 434, .connected_port = 436,
		.sa_family = 432, .addr_len = 16,
		.rx_ready_pkt = 16, .rx_ready_byte = 8, .tx_ready_byte = 0,
		.counters = 24,
		.rx_packets = 0, .rx_bytes = 64, .rx_errors = 28, .rx_drop_pkt = 20, .rx_drop_byte = 16,
		.tx_packets = 88, .tx_bytes = 72, .tx_errors = 92, .tx_retransmits = 100,
		.rx_os_packets = 36, .rx_os_bytes = 56, .rx_os_errors = 44, .rx_os_eagain = 48,
		.tx_os_packets = 104, .tx_os_bytes = 80, .tx_os_errors = 108, .tx_os_eagain = 112,
		.byte_width = 8,
	},
	{
		.engine = FLOW_VMA_XLIO, .release = "libxlio 3.70.2", .variant = "DEFINED_UTLS",
		.md5 = "8acf4c5e11413c1da2c7f27b2ec26476",
		.reader_counter = 8408, .ver_info = 8412, .protocol_ver = 41224,
		.max_skt_inst_num = 41216, .skt_inst_arr = 41256,
		.block_size = 528, .sizeof_sh_mem = 41784,
		.b_enabled = 0, .skt_stats = 8,
		.fd = 464, .inode = 468, .tcp_state = 20, .socket_type = 502, .b_is_offloaded = 503,
		.bound_if = 416, .connected_ip = 432, .bound_port = 498, .connected_port = 500,
		.sa_family = 496, .addr_len = 16,
		.rx_ready_pkt = 16, .rx_ready_byte = 8, .tx_ready_byte = 0,
		.counters = 24,
		.rx_packets = 0, .rx_bytes = 64, .rx_errors = 28, .rx_drop_pkt = 20, .rx_drop_byte = 16,
		.tx_packets = 88, .tx_bytes = 72, .tx_errors = 92, .tx_retransmits = 100,
		.rx_os_packets = 36, .rx_os_bytes = 56, .rx_os_errors = 44, .rx_os_eagain = 48,
		.tx_os_packets = 104, .tx_os_bytes = 80, .tx_os_errors = 108, .tx_os_eagain = 112,
		.byte_width = 8,
	},
};
const unsigned flow_vma_nlayouts = sizeof(flow_vma_layouts) / sizeof(flow_vma_layouts[0]);

/* The smallest file that holds a protocol version for either engine. */
#define VMA_MIN_HDR 12072u

static const char *engine_name(enum flow_vma_engine e)
{
	return e == FLOW_VMA_XLIO ? "xlio" : "vma";
}

const struct flow_vma_layout *flow_vma_layout_find(enum flow_vma_engine e, const char *md5,
						   uint64_t fsize, uint64_t nsock)
{
	for (unsigned i = 0; i < flow_vma_nlayouts; i++) {
		const struct flow_vma_layout *l = &flow_vma_layouts[i];

		if (l->engine != e || memcmp(l->md5, md5, 32) != 0)
			continue;
		/* the publisher writes SHMEM_STATS_SIZE(n) =
		 * sizeof(sh_mem_t) + n * sizeof(block) bytes */
		if (nsock <= FLOW_VMA_MAX_SOCKS &&
		    fsize == l->sizeof_sh_mem + nsock * (uint64_t)l->block_size)
			return l;
	}
	return NULL;
}

static uint64_t ld(const unsigned char *p, unsigned w)
{
	uint64_t v = 0;

	if (w == 8) {
		memcpy(&v, p, 8);
	} else if (w == 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		v = x;
	} else if (w == 2) {
		uint16_t x;

		memcpy(&x, p, 2);
		v = x;
	} else {
		v = *p;
	}
	return v;
}

/* Do the two copies agree on w bytes at off? */
static int same(const unsigned char *a, const unsigned char *b, size_t off, size_t w)
{
	return memcmp(a + off, b + off, w) == 0;
}

static int hex32(const unsigned char *s)
{
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The fields of one block we use, as (offset from block start, width). */
#define VMA_NFIELDS 32

static unsigned block_fields(const struct flow_vma_layout *l, uint32_t off[VMA_NFIELDS],
			     uint8_t w[VMA_NFIELDS])
{
	uint32_t s = l->skt_stats, c = l->skt_stats + l->counters;
	unsigned n = 0;

#define F(o, width) do { off[n] = (o); w[n] = (width); n++; } while (0)
	F(l->b_enabled, 1);
	F(s + l->fd, 4);
	F(s + l->inode, 4);
	F(s + l->tcp_state, 4);
	F(s + l->socket_type, 1);
	F(s + l->b_is_offloaded, 1);
	F(s + l->bound_if, l->addr_len);
	F(s + l->connected_ip, l->addr_len);
	F(s + l->bound_port, 2);
	F(s + l->connected_port, 2);
	if (l->sa_family != NA)
		F(s + l->sa_family, 2);
	F(s + l->rx_ready_pkt, 4);
	F(s + l->rx_ready_byte, 8);
	F(s + l->tx_ready_byte, 8);
	F(c + l->rx_packets, 4);
	F(c + l->rx_bytes, l->byte_width);
	F(c + l->rx_errors, 4);
	F(c + l->rx_drop_pkt, 4);
	F(c + l->rx_drop_byte, 4);
	F(c + l->tx_packets, 4);
	F(c + l->tx_bytes, l->byte_width);
	F(c + l->tx_errors, 4);
	F(c + l->tx_retransmits, 4);
	F(c + l->rx_os_packets, 4);
	F(c + l->rx_os_bytes, l->byte_width);
	F(c + l->rx_os_errors, 4);
	F(c + l->rx_os_eagain, 4);
	F(c + l->tx_os_packets, 4);
	F(c + l->tx_os_bytes, l->byte_width);
	F(c + l->tx_os_errors, 4);
	F(c + l->tx_os_eagain, 4);
#undef F
	return n;
}

static int block_agrees(const struct flow_vma_layout *l, const unsigned char *a,
			const unsigned char *b)
{
	uint32_t off[VMA_NFIELDS];
	uint8_t w[VMA_NFIELDS];
	unsigned n = block_fields(l, off, w);

	for (unsigned i = 0; i < n; i++)
		if (!same(a, b, off[i], w[i]))
			return 0;
	return 1;
}

static void put_addr(struct in6_addr *dst, const unsigned char *src, int family, unsigned len)
{
	memset(dst, 0, sizeof(*dst));
	if (family == AF_INET6 && len == 16) {
		memcpy(dst, src, 16);
	} else {
		dst->s6_addr[10] = 0xff;
		dst->s6_addr[11] = 0xff;
		memcpy(dst->s6_addr + 12, src, 4);
	}
}

/* Decode one agreeing block; 0, or -1 when it holds impossible values. */
static int block_decode(const struct flow_vma_layout *l, const unsigned char *p, unsigned slot,
			struct flow_vma_sock *k)
{
	const unsigned char *s = p + l->skt_stats, *c = s + l->counters;
	uint8_t st = s[l->socket_type], off = s[l->b_is_offloaded];

	memset(k, 0, sizeof(*k));
	k->slot = slot;
	k->fd = (int)ld(s + l->fd, 4);
	k->inode = (uint32_t)ld(s + l->inode, 4);
	k->tcp_state = (uint32_t)ld(s + l->tcp_state, 4);
	k->socket_type = st;
	k->offloaded = off;
	if (off > 1 || k->tcp_state > 10 || k->fd < 0 ||
	    (st != SOCK_STREAM && st != SOCK_DGRAM && st != 0))
		return -1;
	k->family = AF_INET;
	if (l->sa_family != NA) {
		uint64_t fam = ld(s + l->sa_family, 2);

		if (fam == AF_INET6)
			k->family = AF_INET6;
		else if (fam != AF_INET && fam != 0)   /* 0: not bound yet */
			return -1;
	}
	put_addr(&k->laddr, s + l->bound_if, k->family, l->addr_len);
	put_addr(&k->raddr, s + l->connected_ip, k->family, l->addr_len);
	memcpy(&k->lport, s + l->bound_port, 2);
	memcpy(&k->rport, s + l->connected_port, 2);
	k->rx_ready_pkt = (uint32_t)ld(s + l->rx_ready_pkt, 4);
	k->rx_ready_byte = ld(s + l->rx_ready_byte, 8);
	k->tx_ready_byte = ld(s + l->tx_ready_byte, 8);
	k->rx_packets = ld(c + l->rx_packets, 4);
	k->rx_bytes = ld(c + l->rx_bytes, l->byte_width);
	k->rx_errors = (uint32_t)ld(c + l->rx_errors, 4);
	k->rx_drop_pkt = (uint32_t)ld(c + l->rx_drop_pkt, 4);
	k->rx_drop_byte = (uint32_t)ld(c + l->rx_drop_byte, 4);
	k->tx_packets = ld(c + l->tx_packets, 4);
	k->tx_bytes = ld(c + l->tx_bytes, l->byte_width);
	k->tx_errors = (uint32_t)ld(c + l->tx_errors, 4);
	k->tx_retransmits = (uint32_t)ld(c + l->tx_retransmits, 4);
	k->rx_os_packets = ld(c + l->rx_os_packets, 4);
	k->rx_os_bytes = ld(c + l->rx_os_bytes, l->byte_width);
	k->rx_os_errors = (uint32_t)ld(c + l->rx_os_errors, 4);
	k->rx_os_eagain = (uint32_t)ld(c + l->rx_os_eagain, 4);
	k->tx_os_packets = ld(c + l->tx_os_packets, 4);
	k->tx_os_bytes = ld(c + l->tx_os_bytes, l->byte_width);
	k->tx_os_errors = (uint32_t)ld(c + l->tx_os_errors, 4);
	k->tx_os_eagain = (uint32_t)ld(c + l->tx_os_eagain, 4);
	/* ready bytes are bounded by socket buffers: more than 1 GiB is junk */
	if (k->rx_ready_byte > (1ull << 30) || k->tx_ready_byte > (1ull << 30))
		return -1;
	return 0;
}

/* Where stats_protocol_ver and max_skt_inst_num sit, per engine: every
 * shipped layout of one engine agrees on these (checked in the tests). */
static const struct flow_vma_layout *first_layout(enum flow_vma_engine e)
{
	for (unsigned i = 0; i < flow_vma_nlayouts; i++)
		if (flow_vma_layouts[i].engine == e)
			return &flow_vma_layouts[i];
	return NULL;
}

static void known_list(enum flow_vma_engine e, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < flow_vma_nlayouts && o + 1 < len; i++) {
		const struct flow_vma_layout *l = &flow_vma_layouts[i];
		int n;

		if (l->engine != e || (i && !strcmp(flow_vma_layouts[i - 1].md5, l->md5)))
			continue;
		n = snprintf(buf + o, len - o, "%s%s (%s)", o ? ", " : "", l->md5, l->release);
		if (n < 0)
			break;
		o += (size_t)n < len - o ? (size_t)n : len - o - 1;
	}
}

int flow_vma_parse(enum flow_vma_engine e, const unsigned char *a, const unsigned char *b,
		   size_t len, struct flow_vma_snap *out, char *err, size_t errlen)
{
	const struct flow_vma_layout *l0 = first_layout(e), *l;
	char md5[33], known[200];
	uint64_t nslots;

	out->lay = NULL;
	out->n = out->torn = out->bad = out->nslots = 0;
	if (!l0) {
		util_errf(err, errlen, "no layout for engine %d", (int)e);
		return -EINVAL;
	}
	if (len < VMA_MIN_HDR || len < (size_t)l0->skt_inst_arr) {
		util_errf(err, errlen, "%zu bytes, smaller than the %s statistics header", len,
			  engine_name(e));
		return -EINVAL;
	}
	if (!same(a, b, l0->protocol_ver, 32) || !same(a, b, l0->max_skt_inst_num, 8))
		return util_errf(err, errlen, "header changed between two reads"), -EAGAIN;
	if (!hex32(a + l0->protocol_ver)) {
		util_errf(err, errlen, "stats_protocol_ver is not 32 hex digits (not a %s statistics file?)",
			  engine_name(e));
		return -EINVAL;
	}
	memcpy(md5, a + l0->protocol_ver, 32);
	md5[32] = '\0';
	nslots = ld(a + l0->max_skt_inst_num, 8);
	l = flow_vma_layout_find(e, md5, len, nslots);
	if (!l) {
		int ver_known = 0;

		for (unsigned i = 0; i < flow_vma_nlayouts; i++)
			ver_known |= flow_vma_layouts[i].engine == e &&
				     !memcmp(flow_vma_layouts[i].md5, md5, 32);
		if (ver_known) {
			util_errf(err, errlen, "stats_protocol_ver %s: known version, but %zu bytes do not fit max_skt_inst_num %llu in any shipped layout of it",
				  md5, len, (unsigned long long)nslots);
			return -EINVAL;
		}
		known_list(e, known, sizeof(known));
		util_errf(err, errlen, "unknown stats_protocol_ver %s (lib %u.%u.%u.%u); this daemon has offset tables for %s",
			  md5, a[l0->ver_info], a[l0->ver_info + 1], a[l0->ver_info + 2],
			  a[l0->ver_info + 3], known);
		return -ENOMSG;
	}
	out->lay = l;
	out->nslots = (unsigned)nslots;
	out->reader_counter = (uint32_t)ld(a + l->reader_counter, 4);
	memcpy(out->ver, a + l->ver_info, 4);
	for (unsigned i = 0; i < nslots; i++) {
		size_t off = l->skt_inst_arr + (size_t)i * l->block_size;
		const unsigned char *pa = a + off, *pb = b + off;

		if (off + l->block_size > len)
			break;          /* cannot happen: the size was checked */
		if (pa[l->b_enabled] == 0 && pb[l->b_enabled] == 0)
			continue;
		if (!block_agrees(l, pa, pb)) {
			out->torn++;
			continue;
		}
		if (pa[l->b_enabled] != 1) {
			out->bad++;
			continue;
		}
		if (block_decode(l, pa, i, &out->s[out->n]) < 0) {
			out->bad++;
			continue;
		}
		out->n++;
	}
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

struct flow_vma_file {
	char *path;
	int fd, wfd;                    /* wfd: for the bump, opened at the first */
	dev_t dev;
	ino_t ino;
	int pid;
	enum flow_vma_engine engine;
	uint64_t last_bump_ns;
	unsigned uid;
	unsigned long long start;       /* the pid's start time at the open */
};

int flow_vma_name(const char *name, enum flow_vma_engine *e, int *pid)
{
	const char *p;
	char *end;
	long v;

	if (!strncmp(name, "vmastat.", 8)) {
		*e = FLOW_VMA_VMA;
		p = name + 8;
	} else if (!strncmp(name, "xliostat.", 9)) {
		*e = FLOW_VMA_XLIO;
		p = name + 9;
	} else {
		return -EINVAL;
	}
	if (*p < '1' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end || v <= 0 || v > 4194304)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

struct flow_vma_file *flow_vma_file_open(const char *path, int check_owner, char *err,
					 size_t errlen)
{
	const char *base = strrchr(path, '/');
	struct flow_vma_file *f;
	enum flow_vma_engine e;
	struct stat st;
	unsigned long long start;
	int fd, pid;

	base = base ? base + 1 : path;
	if (flow_vma_name(base, &e, &pid) < 0) {
		util_errf(err, errlen, "%s: not a vmastat.<pid> or xliostat.<pid> name", path);
		return NULL;
	}
	/* the process the owner check below is about: a pid reused later
	 * is another process (claimv.h) */
	start = util_proc_start(pid);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		util_errf(err, errlen, "%s: %s%s", path, strerror(errno),
			  errno == ELOOP ? " (symbolic links are refused)" : "");
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		util_errf(err, errlen, "%s: not a regular file; refused", path);
		close(fd);
		return NULL;
	}
	if (st.st_size > (off_t)FLOW_VMA_MAX_FILE || st.st_size < (off_t)VMA_MIN_HDR) {
		util_errf(err, errlen, "%s: %lld bytes, outside [%u, %u]; refused", path,
			  (long long)st.st_size, VMA_MIN_HDR, FLOW_VMA_MAX_FILE);
		close(fd);
		return NULL;
	}
	if (check_owner) {
		char proc[32];
		struct stat ps;

		/* a second name is a hard link: the owner check below would
		 * then vouch for a file the link's maker may not read */
		if (st.st_nlink != 1) {
			util_errf(err, errlen, "%s: %lu links to the file, not 1 (a hard link); refused",
				  path, (unsigned long)st.st_nlink);
			close(fd);
			return NULL;
		}

		snprintf(proc, sizeof(proc), "/proc/%d", pid);
		if (stat(proc, &ps) < 0) {
			util_errf(err, errlen, "%s: process %d is gone", path, pid);
			close(fd);
			return NULL;
		}
		if (ps.st_uid != st.st_uid) {
			util_errf(err, errlen, "%s: owned by uid %u, but process %d runs as uid %u; refused",
				  path, (unsigned)st.st_uid, pid, (unsigned)ps.st_uid);
			close(fd);
			return NULL;
		}
		if (!start || util_proc_start(pid) != start) {
			util_errf(err, errlen, "%s: process %d is gone", path, pid);
			close(fd);
			return NULL;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		close(fd);
		util_errf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	f->fd = fd;
	f->wfd = -1;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->pid = pid;
	f->engine = e;
	f->uid = (unsigned)st.st_uid;
	f->start = start;
	return f;
}

int flow_vma_file_pid(const struct flow_vma_file *f) { return f->pid; }
unsigned flow_vma_file_uid(const struct flow_vma_file *f) { return f->uid; }
unsigned long long flow_vma_file_start(const struct flow_vma_file *f) { return f->start; }

int flow_vma_file_stat(const struct flow_vma_file *f, struct stat *st)
{
	return fstat(f->fd, st) < 0 ? -errno : 0;
}
enum flow_vma_engine flow_vma_file_engine(const struct flow_vma_file *f) { return f->engine; }

void flow_vma_file_close(struct flow_vma_file *f)
{
	if (!f)
		return;
	close(f->fd);
	if (f->wfd >= 0)
		close(f->wfd);
	free(f->path);
	free(f);
}

void flow_vma_buf_free(struct flow_vma_buf *buf)
{
	free(buf->a);
	free(buf->b);
	buf->a = buf->b = NULL;
	buf->cap = 0;
}

static int grow(struct flow_vma_buf *f, size_t len)
{
	unsigned char *a, *b;

	if (len <= f->cap)
		return 0;
	a = realloc(f->a, len);
	if (!a)
		return -ENOMEM;
	f->a = a;
	b = realloc(f->b, len);
	if (!b)
		return -ENOMEM;
	f->b = b;
	f->cap = len;
	return 0;
}

int flow_vma_file_read(struct flow_vma_file *f, struct flow_vma_snap *out, char *err,
		       size_t errlen)
{
	struct flow_vma_buf buf = { 0 };
	int rc = flow_vma_file_read_buf(f, &buf, out, err, errlen);

	flow_vma_buf_free(&buf);
	return rc;
}

int flow_vma_file_read_buf(struct flow_vma_file *f, struct flow_vma_buf *buf,
			   struct flow_vma_snap *out, char *err, size_t errlen)
{
	char e2[300];
	struct stat st;
	size_t len;
	int rc, k;

	out->lay = NULL;
	out->n = out->torn = out->bad = 0;
	if (fstat(f->fd, &st) < 0)
		return util_errf(err, errlen, "%s: fstat: %s", f->path, strerror(errno)), -errno;
	if (st.st_size > (off_t)FLOW_VMA_MAX_FILE || st.st_size < (off_t)VMA_MIN_HDR) {
		util_errf(err, errlen, "%s: now %lld bytes, outside [%u, %u]", f->path,
			  (long long)st.st_size, VMA_MIN_HDR, FLOW_VMA_MAX_FILE);
		return -EFBIG;
	}
	len = (size_t)st.st_size;
	if (grow(buf, len) < 0)
		return util_errf(err, errlen, "%s: out of memory", f->path), -ENOMEM;
	for (k = 0; k < 3; k++) {
		if (pread(f->fd, buf->a, len, 0) != (ssize_t)len ||
		    pread(f->fd, buf->b, len, 0) != (ssize_t)len) {
			util_errf(err, errlen, "%s: short read (truncated while read?)", f->path);
			return -EIO;
		}
		rc = flow_vma_parse(f->engine, buf->a, buf->b, len, out, e2, sizeof(e2));
		if (rc != -EAGAIN)
			break;
	}
	if (rc < 0) {
		util_errf(err, errlen, "%s: %s", f->path, e2);
		return rc;
	}
	if (out->torn) {
		/* one more copy: blocks that agree between the second and
		 * the third read were stable while the third was taken */
		const struct flow_vma_layout *l = out->lay;
		unsigned torn = 0;

		memcpy(buf->a, buf->b, len);
		if (pread(f->fd, buf->b, len, 0) != (ssize_t)len)
			return util_errf(err, errlen, "%s: short read", f->path), -EIO;
		for (unsigned i = 0; i < out->nslots && out->n < FLOW_VMA_MAX_SOCKS; i++) {
			size_t off = l->skt_inst_arr + (size_t)i * l->block_size;
			const unsigned char *pa = buf->a + off, *pb = buf->b + off;
			int have = 0;

			for (unsigned j = 0; j < out->n; j++)
				have |= out->s[j].slot == i;
			if (have || (pa[l->b_enabled] == 0 && pb[l->b_enabled] == 0))
				continue;
			if (!block_agrees(l, pa, pb)) {
				torn++;
				continue;
			}
			if (pa[l->b_enabled] == 1 && block_decode(l, pa, i, &out->s[out->n]) == 0)
				out->n++;
		}
		out->torn = torn;
	}
	return 0;
}

int flow_vma_file_bump(struct flow_vma_file *f, uint64_t now_ns, uint64_t interval_ns,
		       char *err, size_t errlen)
{
	const struct flow_vma_layout *l = first_layout(f->engine);
	struct stat st;
	uint32_t v;

	if (f->last_bump_ns && now_ns - f->last_bump_ns < interval_ns)
		return 0;
	if (pread(f->fd, &v, sizeof(v), l->reader_counter) != (ssize_t)sizeof(v))
		return util_errf(err, errlen, "%s: reading reader_counter failed", f->path), -EIO;
	if (f->wfd < 0) {
		/* once, and kept: the bumps then go to the inode that is read,
		 * whatever the name comes to point at */
		/* as the file's owner, who may write it (mode 0644): no
		 * CAP_DAC_OVERRIDE, and a file the owner could not write
		 * stays unwritten; reopened through the read fd, so it is the
		 * inode already read, not what the name points at now
		 * (fsu_reopen_as) */
		int wfd = fstat(f->fd, &st) < 0 ? -1 :
			fsu_reopen_as(f->fd, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
				      st.st_uid, st.st_gid);

		if (wfd < 0)
			return util_errf(err, errlen, "%s: open for the reader_counter bump: %s",
					 f->path, strerror(errno)), -errno;
		if (fstat(wfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != f->dev ||
		    st.st_ino != f->ino) {
			close(wfd);
			util_errf(err, errlen, "%s: replaced since it was opened; not bumped", f->path);
			return -ESTALE;
		}
		f->wfd = wfd;
	}
	v++;
	if (pwrite(f->wfd, &v, sizeof(v), l->reader_counter) != (ssize_t)sizeof(v)) {
		util_errf(err, errlen, "%s: pwrite reader_counter: %s", f->path, strerror(errno));
		return -EIO;
	}
	f->last_bump_ns = now_ns;
	return 1;
}

/* ---- liveness ---------------------------------------------------------------- */

enum flow_live flow_vma_obs(const struct flow_vma_sock *s, const char *engine, int pid,
			    struct flow_vma_track *t, uint64_t now_ns, struct flow_obs *o)
{
	unsigned bw = 32;
	int first = !t->live.init, moved;
	uint64_t rxb_before = t->rxb_acc, txb_before = t->txb_acc;
	uint64_t rxp_before = t->rx_acc, txp_before = t->tx_acc;
	enum flow_live v;

	if (first) {
		t->rxp_raw = s->rx_packets;
		t->txp_raw = s->tx_packets;
		t->rxb_raw = s->rx_bytes;
		t->txb_raw = s->tx_bytes;
		t->rxop_raw = s->rx_os_packets;
		t->txop_raw = s->tx_os_packets;
		t->rxob_raw = s->rx_os_bytes;
		t->txob_raw = s->tx_os_bytes;
	}
	/* VMA: 32-bit packets and bytes; XLIO: 32-bit packets, 64-bit bytes */
	if (s->rx_bytes > UINT32_MAX || s->tx_bytes > UINT32_MAX ||
	    s->rx_os_bytes > UINT32_MAX || s->tx_os_bytes > UINT32_MAX)
		bw = 64;
	/* the offloaded path and the OS path into one count each: a socket
	 * the engine passed to the kernel moves only the latter */
	flow_live_unwrap(&t->rx_acc, &t->rxp_raw, s->rx_packets, 32);
	flow_live_unwrap(&t->rx_acc, &t->rxop_raw, s->rx_os_packets, 32);
	flow_live_unwrap(&t->tx_acc, &t->txp_raw, s->tx_packets, 32);
	flow_live_unwrap(&t->tx_acc, &t->txop_raw, s->tx_os_packets, 32);
	flow_live_unwrap(&t->rxb_acc, &t->rxb_raw, s->rx_bytes, bw);
	flow_live_unwrap(&t->rxb_acc, &t->rxob_raw, s->rx_os_bytes, bw);
	flow_live_unwrap(&t->txb_acc, &t->txb_raw, s->tx_bytes, bw);
	flow_live_unwrap(&t->txb_acc, &t->txob_raw, s->tx_os_bytes, bw);
	moved = flow_live_update(&t->live, t->tx_acc, t->rx_acc, now_ns);

	memset(o, 0, sizeof(*o));
	o->src = FLOW_SRC_VMA;
	o->key.saddr = s->laddr;
	o->key.daddr = s->raddr;
	o->key.sport = s->lport;
	o->key.dport = s->rport;
	o->key.proto = s->socket_type == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP;
	o->session = ((uint64_t)s->inode << 32) | (uint32_t)s->fd;
	o->tx_msgs = t->tx_acc;
	o->rx_msgs = t->rx_acc;
	o->tx_bytes = t->txb_acc;
	o->rx_bytes = t->rxb_acc;
	o->last_tx_ns = t->tx_acc != txp_before ? now_ns : 0;
	o->last_rx_ns = t->rx_acc != rxp_before ? now_ns : 0;
	o->unread = s->rx_ready_byte;
	o->unsent = s->tx_ready_byte;
	o->retrans = s->tx_retransmits;
	o->state = s->tcp_state;
	o->pid = pid;
	o->inode = s->inode;
	util_strlcpy(o->engine, engine ? engine : "", sizeof(o->engine));

	if (!first && s->rx_ready_byte > 0 && t->rxb_acc == rxb_before)
		v = FLOW_LIVE_HELD;     /* data ready, nothing consumed since */
	else if (!first && s->tx_ready_byte > 0 && t->txb_acc == txb_before)
		v = FLOW_LIVE_HELD;     /* queued, nothing sent since */
	else if (moved)
		v = FLOW_LIVE_PROGRESS;
	else if (flow_live_outstanding(&t->live))
		v = FLOW_LIVE_WAITING;
	else
		v = FLOW_LIVE_IDLE;
	flow_live_set(&t->live, v, v == FLOW_LIVE_WAITING ? t->live.moved_ns : 0, now_ns);
	flow_live_obs_set(&t->live, o);
	return v;
}
