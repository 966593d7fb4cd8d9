/* Unit tests for collectors/src_rdma_nl.c (RDMA counters over RDMA
 * netlink): the STAT_GET builder, the reply parsers on replies crafted the
 * way the kernel's nldev.c builds them from a recorded `rdma statistic
 * show`, hostile lengths, and opening where the kernel has no RDMA
 * netlink. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "collectors/counters.h"
#include "collectors/src_rdma.h"
#include "guardbuf.h"
#include "lib/log.h"
#include "nstest.h"

#define RDMASTAT "tests/fixtures/real/rdma-statistic-show_mlx5_hw_counters.txt"

static void src_rdma_nl_build_stat_get__dev_and_port__attrs(void **state)
{
	char buf[256];
	size_t n;
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct nlattr *a;
	uint32_t dev = 0, port = 0;
	unsigned seen = 0;

	(void)state;
	assert_int_equal(src_rdma_nl_build_stat_get(buf, 8, 1, 3, 1), 0);
	n = src_rdma_nl_build_stat_get(buf, sizeof(buf), 77, 3, 2);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_STAT_GET);
	assert_int_equal(nlh->nlmsg_seq, 77);
	assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
	mnl_attr_for_each(a, nlh, 0) {
		seen++;
		if (mnl_attr_get_type(a) == RDMA_NLDEV_ATTR_DEV_INDEX)
			dev = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == RDMA_NLDEV_ATTR_PORT_INDEX)
			port = mnl_attr_get_u32(a);
	}
	assert_int_equal(seen, 2);
	assert_int_equal(dev, 3);
	assert_int_equal(port, 2);
}

/* Counters of "link mlx5_0/1" from the recorded `rdma statistic show`. */
static unsigned load_rdma_stat(char names[][64], unsigned long long *vals, unsigned max)
{
	FILE *fp = fopen(RDMASTAT, "r");
	static char line[8192];
	unsigned n = 0;

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		char *save, *tok;

		if (strncmp(line, "link mlx5_0/1 ", 14))
			continue;
		tok = strtok_r(line + 14, " \n", &save);
		while (tok && n < max) {
			char *v = strtok_r(NULL, " \n", &save);

			assert_non_null(v);
			snprintf(names[n], 64, "%s", tok);
			vals[n++] = strtoull(v, NULL, 10);
			tok = strtok_r(NULL, " \n", &save);
		}
	}
	fclose(fp);
	return n;
}

/* A STAT_GET reply as the kernel builds it (nldev.c): handle, port, then the
 * hwcounters nest of entries {name, PAD, u64 value}, plus an attribute from
 * a newer kernel that must be skipped. */
static size_t craft_reply(char *buf, size_t len, char names[][64],
			  const unsigned long long *vals, unsigned n)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest, *e;

	memset(buf, 0, len);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_STAT_GET;
	nlh->nlmsg_seq = 5;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u32(nlh, 0x3ff, 0xdead);   /* unknown: skipped */
	nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (unsigned i = 0; i < n; i++) {
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, names[i]);
		mnl_attr_put(nlh, RDMA_NLDEV_ATTR_PAD, 0, "");
		mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, vals[i]);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, nest);
	return nlh->nlmsg_len;
}

static void src_rdma_nl_parse_stat__recorded_counters__all_values(void **state)
{
	static char names[64][64];
	static unsigned long long vals[64];
	static char buf[16384];
	static struct src_rdma_nl_stat st;
	char err[256] = "";
	unsigned n;
	size_t len;

	(void)state;
	n = load_rdma_stat(names, vals, 64);
	assert_int_equal(n, 29);
	len = craft_reply(buf, sizeof(buf), names, vals, n);
	assert_int_equal(src_rdma_nl_parse_stat(buf, len, &st, err, sizeof(err)), 0);
	assert_int_equal(st.dev_index, 3);
	assert_int_equal(st.port, 1);
	assert_int_equal(st.n, n);
	for (unsigned i = 0; i < n; i++) {
		assert_string_equal(st.name[i], names[i]);
		assert_int_equal(st.val[i], vals[i]);
	}
	assert_string_equal(st.name[3], "out_of_buffer");
	assert_int_equal(st.val[3], 135);
}

static void src_rdma_nl_parse_stat__malformed__einval(void **state)
{
	static char names[2][64] = { "out_of_buffer", "packet_seq_err" };
	static const unsigned long long vals[2] = { 1ull << 40, 7 };
	static char buf[4096];
	static struct src_rdma_nl_stat st;
	struct nlmsghdr *nlh = (void *)buf;
	char err[256];
	size_t len;

	(void)state;
	len = craft_reply(buf, sizeof(buf), names, vals, 2);
	assert_int_equal(src_rdma_nl_parse_stat(buf, len, &st, err, sizeof(err)), 0);
	assert_int_equal(st.val[0], 1ull << 40);
	/* truncated buffer */
	assert_int_equal(src_rdma_nl_parse_stat(buf, len - 8, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "truncated"));
	assert_int_equal(src_rdma_nl_parse_stat(buf, 4, &st, err, sizeof(err)), -EINVAL);
	/* no hwcounters nest */
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	assert_int_equal(src_rdma_nl_parse_stat(buf, nlh->nlmsg_len, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "HWCOUNTERS"));
	/* entry without a value */
	{
		struct nlattr *nest, *e;

		nlh = mnl_nlmsg_put_header(buf);
		nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x");
		mnl_attr_nest_end(nlh, e);
		mnl_attr_nest_end(nlh, nest);
		assert_int_equal(src_rdma_nl_parse_stat(buf, nlh->nlmsg_len, &st, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "lacks a value"));
	}
	/* value of the wrong size, name not NUL-terminated, name too long */
	{
		struct nlattr *nest, *e;
		char longname[100];

		nlh = mnl_nlmsg_put_header(buf);
		nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x");
		mnl_attr_put_u16(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1);
		mnl_attr_nest_end(nlh, e);
		mnl_attr_nest_end(nlh, nest);
		assert_int_equal(src_rdma_nl_parse_stat(buf, nlh->nlmsg_len, &st, err, sizeof(err)),
				 -EINVAL);

		nlh = mnl_nlmsg_put_header(buf);
		nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, 4, "abcd");
		mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1);
		mnl_attr_nest_end(nlh, e);
		mnl_attr_nest_end(nlh, nest);
		assert_int_equal(src_rdma_nl_parse_stat(buf, nlh->nlmsg_len, &st, err, sizeof(err)),
				 -EINVAL);

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		nlh = mnl_nlmsg_put_header(buf);
		nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, longname);
		mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1);
		mnl_attr_nest_end(nlh, e);
		mnl_attr_nest_end(nlh, nest);
		assert_int_equal(src_rdma_nl_parse_stat(buf, nlh->nlmsg_len, &st, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "bad counter name"));
	}
}

static void src_rdma_nl_parse_dev__get_reply__index_and_name(void **state)
{
	char buf[512], name[64], err[128];
	struct nlmsghdr *nlh;
	uint32_t idx = 0;

	(void)state;
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rocep8s0f0");
	assert_int_equal(src_rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name,
					       sizeof(name), err, sizeof(err)), 0);
	assert_int_equal(idx, 7);
	assert_string_equal(name, "rocep8s0f0");
	assert_int_equal(src_rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name, 4,
					       err, sizeof(err)), -EINVAL);
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	assert_int_equal(src_rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name,
					       sizeof(name), err, sizeof(err)), -EINVAL);
}

/* Fuzz crash (issue #12, item 9): nlmsg_len 0x80000001 passes
 * mnl_nlmsg_ok() (it compares as int), and mnl_attr_parse() then walked
 * past the buffer. The replies end where an unmapped page begins, so any
 * read past them faults, in libmnl too. */
static void src_rdma_nl_parse__nlmsg_len_over_int_max__einval_no_read_past(void **state)
{
	static const uint32_t lens[] = { 0x80000001u, 0x80000004u, 0x8000000fu, 0xffffffffu };
	static char names[2][64] = { "out_of_buffer", "packet_seq_err" };
	static const unsigned long long vals[2] = { 135, 7 };
	static struct src_rdma_nl_stat st;
	char buf[1024], dbuf[256], name[64], err[256];
	struct nlmsghdr *nlh;
	size_t len, dlen;
	uint32_t idx = 0;

	(void)state;
	len = craft_reply(buf, sizeof(buf), names, vals, 2);
	nlh = mnl_nlmsg_put_header(dbuf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	dlen = nlh->nlmsg_len;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		void *g;

		((struct nlmsghdr *)buf)->nlmsg_len = lens[i];
		g = guardbuf_new(buf, len);
		assert_non_null(g);
		err[0] = '\0';
		assert_int_equal(src_rdma_nl_parse_stat(g, len, &st, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "nlmsg_len"));
		guardbuf_free(g, len);

		((struct nlmsghdr *)dbuf)->nlmsg_len = lens[i];
		g = guardbuf_new(dbuf, dlen);
		assert_non_null(g);
		err[0] = '\0';
		assert_int_equal(src_rdma_nl_parse_dev(g, dlen, &idx, name, sizeof(name),
						       err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "nlmsg_len"));
		guardbuf_free(g, dlen);
	}
}

static void src_rdma_nl_open__no_rdma_netlink__clean_error(void **state)
{
	struct src_ctx ctx = {
		.port_name = "p0", .ifname = "ib0", .netns_fd = -1, .sysfs_root = "",
		.rdma_dev = "mlx5_0", .rdma_port = 1,
	};
	struct src s = { .ops = &src_rdma_nl_ops };
	int rc;

	(void)state;
	assert_string_equal(src_rdma_nl_ops.name, "rdma-nl");
	rc = s.ops->open(&s, &ctx);
	if (rc == 0)
		s.ops->close(&s);
	/* This host has no RDMA netlink; a host that has it has no mlx5_0
	 * fixture device either. */
	assert_true(rc == -EPROTONOSUPPORT || rc == -ENODEV);
	assert_non_null(strstr(s.err, "rdma-nl mlx5_0/1"));
	if (rc == -EPROTONOSUPPORT)
		assert_non_null(strstr(s.err, "NETLINK_RDMA"));
	assert_null(s.priv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(src_rdma_nl_build_stat_get__dev_and_port__attrs),
		cmocka_unit_test(src_rdma_nl_parse_stat__recorded_counters__all_values),
		cmocka_unit_test(src_rdma_nl_parse_stat__malformed__einval),
		cmocka_unit_test(src_rdma_nl_parse_dev__get_reply__index_and_name),
		cmocka_unit_test(src_rdma_nl_parse__nlmsg_len_over_int_max__einval_no_read_past),
		cmocka_unit_test(src_rdma_nl_open__no_rdma_netlink__clean_error),
	};

	log_set_level(LOG_ERR);
	if (nstest_chdir_repo(RDMASTAT) < 0) {
		fprintf(stderr, "test_src_rdma_nl: %s not found\n", RDMASTAT);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
