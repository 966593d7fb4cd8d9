/* Unit tests for collectors/flows/rdma_nl_parse.c (RDMA netlink replies as the QP
 * source reads them): the device reply (RDMA_NLDEV_CMD_GET) crafted the
 * way the kernel's nldev.c fills it, and hostile lengths. */
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

#include "collectors/flows/rdma_nl_parse.h"
#include "guardbuf.h"

static void parse_dev__get_reply__index_and_name(void **state)
{
	char buf[512], name[64], err[128];
	struct nlmsghdr *nlh;
	uint32_t idx = 0;

	(void)state;
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rocep8s0f0");
	assert_int_equal(rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name,
					       sizeof(name), err, sizeof(err)), 0);
	assert_int_equal(idx, 7);
	assert_string_equal(name, "rocep8s0f0");
	assert_int_equal(rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name, 4,
					       err, sizeof(err)), -EINVAL);
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	assert_int_equal(rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name,
					       sizeof(name), err, sizeof(err)), -EINVAL);
	/* a port index of the wrong size: the reply is malformed, refused
	 * whole, though the parser reads only the index and the name */
	nlh = mnl_nlmsg_put_header(buf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	mnl_attr_put_u16(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	assert_int_equal(rdma_nl_parse_dev(buf, nlh->nlmsg_len, &idx, name,
					   sizeof(name), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "malformed attribute"));
}

/* Fuzz crash (issue #12, item 9): nlmsg_len 0x80000001 passes
 * mnl_nlmsg_ok() (it compares as int), and mnl_attr_parse() then walked
 * past the buffer. The reply ends where an unmapped page begins, so any
 * read past it faults, in libmnl too. */
static void parse_dev__nlmsg_len_over_int_max__einval_no_read_past(void **state)
{
	static const uint32_t lens[] = { 0x80000001u, 0x80000004u, 0x8000000fu, 0xffffffffu };
	char dbuf[256], name[64], err[256];
	struct nlmsghdr *nlh;
	size_t dlen;
	uint32_t idx = 0;

	(void)state;
	nlh = mnl_nlmsg_put_header(dbuf);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	dlen = nlh->nlmsg_len;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		void *g;

		((struct nlmsghdr *)dbuf)->nlmsg_len = lens[i];
		g = guardbuf_new(dbuf, dlen);
		assert_non_null(g);
		err[0] = '\0';
		assert_int_equal(rdma_nl_parse_dev(g, dlen, &idx, name, sizeof(name),
						   err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "nlmsg_len"));
		assert_null(rdma_nl_msg_check(g, dlen, err, sizeof(err)));
		guardbuf_free(g, dlen);
	}
	/* more than a dump buffer, even when the lengths agree */
	assert_null(rdma_nl_msg_check(dbuf, RDMA_NL_MAX_MSG + 1, err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_dev__get_reply__index_and_name),
		cmocka_unit_test(parse_dev__nlmsg_len_over_int_max__einval_no_read_past),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
