/* Unit tests for collectors/counters/src_rdma.c (the sysfs RDMA counter source) and
 * collectors/counters/rdma_disc.c, on the real mlx5_0 sysfs tree (prometheus/procfs
 * ttar fixture) unpacked by tests/tools/ttar-unpack. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "collectors/counters/counters.h"
#include "lib/log.h"
#include "collectors/counters/rdma_disc.h"
#include "collectors/counters/src_rdma.h"
#include "nstest.h"

/* Paths here are short temp names; a truncated one fails the test anyway. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define TTAR "tests/fixtures/real/sysfs-infiniband-hw_counters_mlx5_0_procfs-fixture.ttar.txt"
#define SHOWC "tests/fixtures/real/sysfs-infiniband-hw_counters_mlx5_cx4lx-ofed5.0_show_counters.txt"

struct fx {
	char dir[64];
	char root[96];           /* dir/fixtures: the sysfs root */
	char port[256];          /* root/sys/class/infiniband/mlx5_0/ports/1 */
	struct src s;
	struct src_ctx ctx;
	int opened;
};

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void unpack(const char *ttar, const char *dest)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "sh tests/tools/ttar-unpack '%s' '%s'", ttar, dest);
	assert_int_equal(system(cmd), 0);
}

/* Overwrite a file in place (same inode: the source's open fd sees it). */
static void put(const char *dir, const char *rel, const char *content)
{
	char p[512];
	int fd;
	size_t n = strlen(content);

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(nstest_chdir_repo(TTAR), 0);
	strcpy(f->dir, "/tmp/test_src_rdma.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	unpack(TTAR, f->dir);
	snprintf(f->root, sizeof(f->root), "%s/fixtures", f->dir);
	snprintf(f->port, sizeof(f->port), "%s/sys/class/infiniband/mlx5_0/ports/1",
		 f->root);
	f->s.ops = &src_rdma_ops;
	f->ctx.port_name = "p0";
	f->ctx.ifname = "ib0";
	f->ctx.netns_fd = -1;
	f->ctx.sysfs_root = f->root;
	f->ctx.rdma_dev = "mlx5_0";
	f->ctx.rdma_port = 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->opened)
		f->s.ops->close(&f->s);
	rm_rf(f->dir);
	free(f);
	return 0;
}

static void open_src(struct fx *f)
{
	int rc = f->s.ops->open(&f->s, &f->ctx);

	if (rc)
		print_error("open: %s\n", f->s.err);
	assert_int_equal(rc, 0);
	f->opened = 1;
}

static uint64_t val_of(struct clayout *lay, const uint64_t *v, const char *name)
{
	int i = clayout_find(lay, name);

	if (i < 0)
		print_error("counter %s not in layout\n", name);
	assert_true(i >= 0);
	return v[i];
}

/* Walk one counter directory independently and compare every file. */
static unsigned check_dir(struct fx *f, const char *sub, struct clayout *lay,
			  const uint64_t *vals)
{
	char p[512], name[300], buf[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", f->port, sub);
	d = opendir(p);
	assert_non_null(d);
	while ((de = readdir(d))) {
		FILE *fp;
		char *end;
		unsigned long long want;
		char fp_path[800];

		if (de->d_name[0] == '.')
			continue;
		snprintf(fp_path, sizeof(fp_path), "%s/%s", p, de->d_name);
		fp = fopen(fp_path, "r");
		assert_non_null(fp);
		assert_non_null(fgets(buf, sizeof(buf), fp));
		fclose(fp);
		errno = 0;
		want = strtoull(buf, &end, 10);
		assert_int_equal(errno, 0);
		assert_true(end != buf);
		snprintf(name, sizeof(name), "%s/%s", sub, de->d_name);
		assert_int_equal(val_of(lay, vals, name), want);
		assert_int_equal(lay->width[clayout_find(lay, name)], CNT_W32);
		n++;
	}
	closedir(d);
	return n;
}

/* ---- sysfs source on the fixture tree ---- */

static void src_rdma_read__ttar_fixture__every_file_exact(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;
	unsigned nh, nc;

	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_string_equal(f->s.err, "");
	nh = check_dir(f, "hw_counters", lay, v);
	nc = check_dir(f, "counters", lay, v);
	assert_int_equal(nh, 25);
	assert_int_equal(nc, 21);
	assert_int_equal(lay->n, nh + nc);
}

static void src_rdma_read__ttar_fixture__known_values(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;

	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	/* sorted, hw_counters first */
	assert_string_equal(lay->names[0], "hw_counters/duplicate_request");
	assert_string_equal(lay->names[24], "hw_counters/rx_write_requests");
	assert_string_equal(lay->names[25], "counters/VL15_dropped");
	assert_int_equal(val_of(lay, v, "hw_counters/duplicate_request"), 41);
	assert_int_equal(val_of(lay, v, "hw_counters/local_ack_timeout_err"), 131);
	assert_int_equal(val_of(lay, v, "hw_counters/req_cqe_error"), 3481);
	assert_int_equal(val_of(lay, v, "hw_counters/resp_cqe_error"), 8109);
	assert_int_equal(val_of(lay, v, "hw_counters/rx_read_requests"), 175528982);
	assert_int_equal(val_of(lay, v, "hw_counters/rx_write_requests"), 742114);
	assert_int_equal(val_of(lay, v, "counters/port_rcv_data"), 18126345378ull);
	assert_int_equal(val_of(lay, v, "counters/port_xmit_data"), 2880761508848ull);
	assert_int_equal(val_of(lay, v, "counters/port_xmit_packets"), 10907922116ull);
	assert_int_equal(clayout_find(lay, "hw_counters/np_cnp_sent"), -1);
}

static void src_rdma_read__u32_wrap__delta_through_wrap(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;
	uint64_t a, b;
	unsigned flags = 99;

	put(f->port, "hw_counters/out_of_buffer", "4294967290\n");
	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	a = val_of(lay, v, "hw_counters/out_of_buffer");
	assert_int_equal(a, 4294967290ull);
	put(f->port, "hw_counters/out_of_buffer", "5\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	b = val_of(lay, v, "hw_counters/out_of_buffer");
	assert_int_equal(b, 5);
	assert_int_equal(cnt_delta(a, b, lay->width[clayout_find(lay, "hw_counters/out_of_buffer")],
				   &flags), 11);
	assert_int_equal(flags, CNT_WRAPPED);
}

static void src_rdma_read__garbage_in_one_file__names_file_keeps_value(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;

	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	put(f->port, "hw_counters/req_cqe_error", "12abc\n");
	put(f->port, "hw_counters/duplicate_request", "42\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_non_null(strstr(f->s.err, "hw_counters/req_cqe_error"));
	assert_non_null(strstr(f->s.err, "not an unsigned decimal"));
	assert_non_null(strstr(f->s.err, "1 of 46"));
	assert_int_equal(val_of(lay, v, "hw_counters/req_cqe_error"), 3481);
	assert_int_equal(val_of(lay, v, "hw_counters/duplicate_request"), 42);
	/* recovers */
	put(f->port, "hw_counters/req_cqe_error", "3500\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_string_equal(f->s.err, "");
	assert_int_equal(val_of(lay, v, "hw_counters/req_cqe_error"), 3500);
}

static void src_rdma_read__overlong_and_overflow__rejected(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;

	open_src(f);
	put(f->port, "counters/symbol_error", "1234567890123456789012345678901234567890\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_non_null(strstr(f->s.err, "counters/symbol_error"));
	assert_non_null(strstr(f->s.err, "too long"));
	assert_int_equal(val_of(lay, v, "counters/symbol_error"), 0);
	put(f->port, "counters/symbol_error", "18446744073709551616\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_non_null(strstr(f->s.err, "exceeds 64 bits"));
	put(f->port, "counters/symbol_error", "18446744073709551615\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_int_equal(val_of(lay, v, "counters/symbol_error"), UINT64_MAX);
	put(f->port, "counters/symbol_error", "");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_non_null(strstr(f->s.err, "counters/symbol_error"));
}

static void src_rdma_read__every_file_bad__fails_naming_file(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;
	int rc;

	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	for (unsigned i = 0; i < lay->n; i++)
		put(f->port, lay->names[i], "N/A (no PMA)\n");
	rc = f->s.ops->read(&f->s, &lay, &v);
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(f->s.err, "hw_counters/duplicate_request"));
	assert_non_null(strstr(f->s.err, "46 of 46"));
}

static void src_rdma_open__unparsable_file__left_out(void **state)
{
	struct fx *f = *state;
	struct clayout *lay;
	const uint64_t *v;
	char p[512];

	put(f->port, "counters/port_xmit_wait", "N/A (no PMA)\n");
	snprintf(p, sizeof(p), "%s/hw_counters/subdir", f->port);
	assert_int_equal(mkdir(p, 0755), 0);
	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_int_equal(lay->n, 45);
	assert_int_equal(clayout_find(lay, "counters/port_xmit_wait"), -1);
	assert_int_equal(clayout_find(lay, "hw_counters/subdir"), -1);
	assert_string_equal(f->s.err, "");
}

static void src_rdma_read__device_vanishes__enodev_then_back(void **state)
{
	struct fx *f = *state;
	struct clayout *lay, *lay1;
	const uint64_t *v;
	char p[256];

	open_src(f);
	assert_int_equal(f->s.ops->read(&f->s, &lay1, &v), 0);
	clayout_ref(lay1);
	snprintf(p, sizeof(p), "%s/sys", f->root);
	rm_rf(p);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), -ENODEV);
	assert_non_null(strstr(f->s.err, "device gone"));
	assert_non_null(strstr(f->s.err, "mlx5_0/1"));
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), -ENODEV);

	/* The device comes back (driver reload): same counter set, same layout. */
	unpack(TTAR, f->dir);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_true(clayout_equal(lay, lay1));
	assert_int_equal(val_of(lay, v, "hw_counters/req_cqe_error"), 3481);

	/* Back again with one more counter (optional counter enabled). */
	rm_rf(p);
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), -ENODEV);
	unpack(TTAR, f->dir);
	put(f->port, "hw_counters/np_cnp_sent", "7\n");
	assert_int_equal(f->s.ops->read(&f->s, &lay, &v), 0);
	assert_false(clayout_equal(lay, lay1));
	assert_int_equal(lay->n, lay1->n + 1);
	assert_int_equal(val_of(lay, v, "hw_counters/np_cnp_sent"), 7);
	/* The old layout is still usable by whoever held it. */
	assert_string_equal(lay1->names[0], "hw_counters/duplicate_request");
	clayout_unref(lay1);
}

static void src_rdma_open__no_device__enodev_names_path(void **state)
{
	struct fx *f = *state;
	int rc;

	f->ctx.rdma_dev = "mlx5_9";
	rc = f->s.ops->open(&f->s, &f->ctx);
	assert_int_equal(rc, -ENODEV);
	assert_non_null(strstr(f->s.err, "mlx5_9/ports/1"));
	f->ctx.rdma_dev = "../mlx5_0";
	assert_int_equal(f->s.ops->open(&f->s, &f->ctx), -EINVAL);
	f->ctx.rdma_dev = "mlx5_0";
	f->ctx.rdma_port = 0;
	assert_int_equal(f->s.ops->open(&f->s, &f->ctx), -EINVAL);
}

static void src_rdma_open__port_without_counters__enoent(void **state)
{
	struct fx *f = *state;
	char p[512];

	snprintf(p, sizeof(p), "%s/sys/class/infiniband/mlx5_0/ports/2", f->root);
	assert_int_equal(mkdir(p, 0755), 0);
	f->ctx.rdma_port = 2;
	assert_int_equal(f->s.ops->open(&f->s, &f->ctx), -ENOENT);
	assert_non_null(strstr(f->s.err, "no readable"));
}

/* The second real dump (show_counters of a ConnectX-4 Lx, MLNX_OFED 5.0):
 * lay its mlx5_0 and mlx5_bond_0 blocks out as sysfs trees and read them. */
struct showc {
	char dev[32];
	unsigned n;
	char name[64][64];
	unsigned long long val[64];
};

static unsigned load_showc(struct showc *out, unsigned max)
{
	FILE *fp = fopen(SHOWC, "r");
	char line[256];
	unsigned nd = 0;
	int in = 0;

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		char name[64];
		unsigned long long v;

		if (!strncmp(line, "# show_counters ", 16) && nd < max) {
			memset(&out[nd], 0, sizeof(out[nd]));
			sscanf(line + 16, "%31s", out[nd].dev);
			nd++;
			in = 1;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n') {
			if (line[0] == '#')
				in = 0;
			continue;
		}
		if (in && sscanf(line, "%63[a-z0-9_]: %llu", name, &v) == 2 &&
		    out[nd - 1].n < 64) {
			strcpy(out[nd - 1].name[out[nd - 1].n], name);
			out[nd - 1].val[out[nd - 1].n++] = v;
		}
	}
	fclose(fp);
	return nd;
}

static void src_rdma_read__show_counters_dump__every_value(void **state)
{
	struct fx *f = *state;
	struct showc sc[2];
	unsigned nd = load_showc(sc, 2);
	char sroot[128];

	snprintf(sroot, sizeof(sroot), "%s/showc", f->dir);

	assert_int_equal(nd, 2);
	assert_string_equal(sc[0].dev, "mlx5_0");
	assert_string_equal(sc[1].dev, "mlx5_bond_0");
	for (unsigned d = 0; d < nd; d++) {
		struct src s = { .ops = &src_rdma_ops };
		struct src_ctx ctx = f->ctx;
		struct clayout *lay;
		const uint64_t *v;
		char p[512];

		assert_int_equal(sc[d].n, 30);
		snprintf(p, sizeof(p), "mkdir -p '%s/sys/class/infiniband/%s/ports/1/hw_counters'",
			 sroot, sc[d].dev);
		assert_int_equal(system(p), 0);
		snprintf(p, sizeof(p), "%s/sys/class/infiniband/%s/ports/1", sroot,
			 sc[d].dev);
		for (unsigned i = 0; i < sc[d].n; i++) {
			char rel[128], val[32];

			snprintf(rel, sizeof(rel), "hw_counters/%s", sc[d].name[i]);
			snprintf(val, sizeof(val), "%llu\n", sc[d].val[i]);
			put(p, rel, val);
		}
		ctx.rdma_dev = sc[d].dev;
		ctx.sysfs_root = sroot;
		assert_int_equal(s.ops->open(&s, &ctx), 0);
		assert_int_equal(s.ops->read(&s, &lay, &v), 0);
		assert_int_equal(lay->n, sc[d].n);
		for (unsigned i = 0; i < sc[d].n; i++) {
			char name[128];

			snprintf(name, sizeof(name), "hw_counters/%s", sc[d].name[i]);
			assert_int_equal(val_of(lay, v, name), sc[d].val[i]);
		}
		if (d == 0) {
			assert_int_equal(val_of(lay, v, "hw_counters/out_of_buffer"), 135);
			assert_int_equal(val_of(lay, v, "hw_counters/resp_cqe_error"), 1009);
		} else {
			unsigned flags = 9;
			uint64_t ecn = val_of(lay, v, "hw_counters/np_ecn_marked_roce_packets");

			/* A "32-bit" counter past 2^32 in real life: widened. */
			assert_int_equal(ecn, 21278189006ull);
			assert_int_equal(cnt_delta(ecn, ecn + 4, CNT_W32, &flags), 4);
			assert_int_equal(flags, 0);
			assert_int_equal(cnt_delta(ecn, 3, CNT_W32, &flags), 3);
			assert_int_equal(flags, CNT_RESET);
		}
		s.ops->close(&s);
	}
	/* The procfs tree's hw_counters are all in the real card's set. */
	{
		struct src s = { .ops = &src_rdma_ops };
		struct clayout *lay;
		const uint64_t *v;

		assert_int_equal(s.ops->open(&s, &f->ctx), 0);
		assert_int_equal(s.ops->read(&s, &lay, &v), 0);
		for (unsigned i = 0; i < lay->n; i++) {
			int found = 0;

			if (strncmp(lay->names[i], "hw_counters/", 12))
				continue;
			for (unsigned j = 0; j < sc[0].n; j++)
				found |= !strcmp(lay->names[i] + 12, sc[0].name[j]);
			if (!found)
				print_error("%s not in show_counters\n", lay->names[i]);
			assert_true(found);
		}
		s.ops->close(&s);
	}
}

/* ---- the unpacker itself ---- */

static void ttar_unpack__fixture__exact_bytes_and_modes(void **state)
{
	struct fx *f = *state;
	char p[512], buf[64], cmd[1024];
	struct stat st;
	ssize_t n;
	int fd;

	/* "EOF" at the end of the last line: no trailing newline */
	snprintf(p, sizeof(p), "%s/sys/class/infiniband/mlx5_0/node_guid", f->root);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, 19);
	assert_memory_equal(buf, "0a7f:bc12:45ef:d23b", 19);
	snprintf(p, sizeof(p), "%s/sys/class/infiniband/mlx5_0/fw_ver", f->root);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, 11);
	assert_memory_equal(buf, "14.28.2006\n", 11);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(stat(f->port, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);

	/* An archive that would write outside DESTDIR is refused. */
	snprintf(p, sizeof(p), "%s/evil.ttar", f->dir);
	put(f->dir, "evil.ttar", "# source: test\nPath: ../escaped\nLines: 1\nx\nMode: 644\n");
	snprintf(cmd, sizeof(cmd), "sh tests/tools/ttar-unpack '%s' '%s/out' 2>/dev/null",
		 p, f->dir);
	assert_int_not_equal(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/escaped", f->dir);
	assert_int_equal(access(p, F_OK), -1);
	/* A truncated archive is an error too. */
	put(f->dir, "short.ttar", "Path: a\nLines: 3\nx\n");
	snprintf(cmd, sizeof(cmd), "sh tests/tools/ttar-unpack '%s/short.ttar' '%s/out' 2>/dev/null",
		 f->dir, f->dir);
	assert_int_not_equal(system(cmd), 0);
}

/* ---- discovery ---- */

static void rdma_disc_list__ttar_fixture__mlx5_0_port1(void **state)
{
	struct fx *f = *state;
	struct rdma_port_info *v;
	char err[256] = "";
	size_t n;

	assert_int_equal(rdma_disc_list(f->root, &v, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].dev, "mlx5_0");
	assert_int_equal(v[0].port, 1);
	assert_int_equal(v[0].state, 4);
	assert_string_equal(v[0].state_name, "ACTIVE");
	assert_int_equal(v[0].phys_state, 4);
	assert_string_equal(v[0].link_layer, "InfiniBand");
	assert_string_equal(v[0].rate, "25 Gb/sec (1X EDR)");
	assert_string_equal(v[0].netdev, "");
	assert_string_equal(v[0].source, "sysfs");
	rdma_disc_free(v);
}

/* A recorded tree is written by whoever recorded it: a FIFO in place of an
 * attribute must not block discovery (the daemon's loop) on open(). The
 * alarm turns a hang into a failure. */
static void rdma_disc_list__fifo_attribute__not_blocked(void **state)
{
	struct fx *f = *state;
	struct rdma_port_info *v;
	char err[256] = "", p[600];
	size_t n;

	snprintf(p, sizeof(p), "%s/rate", f->port);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0644), 0);
	alarm(5);
	assert_int_equal(rdma_disc_list(f->root, &v, &n, err, sizeof(err)), 0);
	alarm(0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].state_name, "ACTIVE");
	assert_string_equal(v[0].rate, "");
	rdma_disc_free(v);
}

static void rdma_disc_for_netdev__gid_ndev_and_device_net__found(void **state)
{
	struct fx *f = *state;
	char dev[64], p[512], base[300];
	unsigned port = 0;

	snprintf(base, sizeof(base), "%s/sys/class/infiniband", f->root);
	/* RoCE: GID table of mlx5_0 port 1 bound to ens1f0np0 */
	snprintf(p, sizeof(p), "mkdir -p %s/mlx5_0/ports/1/gid_attrs/ndevs", base);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/mlx5_0/ports/1/gid_attrs/ndevs", base);
	put(p, "0", "ens1f0np0\n");
	/* mlx4-like: two ports on one PCI function, netdevs told apart by dev_port */
	snprintf(p, sizeof(p), "mkdir -p %s/mlx4_0/ports/1 %s/mlx4_0/ports/2 "
		 "%s/mlx4_0/device/net/eth4 %s/mlx4_0/device/net/eth5", base, base, base, base);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/mlx4_0", base);
	put(p, "ports/1/state", "1: DOWN\n");
	put(p, "ports/2/state", "4: ACTIVE\n");
	put(p, "ports/2/link_layer", "Ethernet\n");
	put(p, "device/net/eth4/dev_port", "1\n");
	put(p, "device/net/eth5/dev_port", "0\n");

	assert_int_equal(rdma_disc_for_netdev(f->root, "ens1f0np0", dev, sizeof(dev), &port), 0);
	assert_string_equal(dev, "mlx5_0");
	assert_int_equal(port, 1);
	assert_int_equal(rdma_disc_for_netdev(f->root, "eth4", dev, sizeof(dev), &port), 0);
	assert_string_equal(dev, "mlx4_0");
	assert_int_equal(port, 2);
	assert_int_equal(rdma_disc_for_netdev(f->root, "eth5", dev, sizeof(dev), &port), 0);
	assert_int_equal(port, 1);
	assert_int_equal(rdma_disc_for_netdev(f->root, "eth9", dev, sizeof(dev), &port), -ENOENT);
	assert_int_equal(rdma_disc_for_netdev(f->root, "eth4", dev, 3, &port), -ENAMETOOLONG);

	{
		struct rdma_port_info *v;
		char err[256];
		size_t n;

		assert_int_equal(rdma_disc_list(f->root, &v, &n, err, sizeof(err)), 0);
		assert_int_equal(n, 3);
		assert_string_equal(v[0].dev, "mlx4_0");
		assert_int_equal(v[0].port, 1);
		assert_int_equal(v[0].state, 1);
		assert_string_equal(v[0].state_name, "DOWN");
		assert_int_equal(v[0].phys_state, -1);
		assert_string_equal(v[1].link_layer, "Ethernet");
		assert_string_equal(v[1].netdev, "eth4");
		assert_string_equal(v[2].dev, "mlx5_0");
		rdma_disc_free(v);
	}
}

static void rdma_disc_list__no_rdma__empty_no_error(void **state)
{
	struct fx *f = *state;
	struct rdma_port_info *v = (void *)1;
	char err[256] = "";
	size_t n = 5;

	assert_int_equal(rdma_disc_list(f->dir, &v, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_string_equal(err, "");
	/* The real root: this host has no RDMA device (skip the count where one
	 * exists). */
	assert_int_equal(rdma_disc_list("", &v, &n, err, sizeof(err)), 0);
	if (access("/sys/class/infiniband", F_OK) != 0) {
		assert_int_equal(n, 0);
		assert_null(v);
	}
	rdma_disc_free(v);
}

int main(void)
{
	/* The source logs each failing file once; keep test output to errors. */
	log_set_level(LOG_ERR);
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(src_rdma_read__ttar_fixture__every_file_exact),
		T(src_rdma_read__ttar_fixture__known_values),
		T(src_rdma_read__u32_wrap__delta_through_wrap),
		T(src_rdma_read__garbage_in_one_file__names_file_keeps_value),
		T(src_rdma_read__overlong_and_overflow__rejected),
		T(src_rdma_read__every_file_bad__fails_naming_file),
		T(src_rdma_open__unparsable_file__left_out),
		T(src_rdma_read__device_vanishes__enodev_then_back),
		T(src_rdma_open__no_device__enodev_names_path),
		T(src_rdma_open__port_without_counters__enoent),
		T(src_rdma_read__show_counters_dump__every_value),
		T(ttar_unpack__fixture__exact_bytes_and_modes),
		T(rdma_disc_list__ttar_fixture__mlx5_0_port1),
		T(rdma_disc_list__fifo_attribute__not_blocked),
		T(rdma_disc_for_netdev__gid_ndev_and_device_net__found),
		T(rdma_disc_list__no_rdma__empty_no_error),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
