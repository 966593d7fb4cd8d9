/* Unit tests for collectors/flows/rdmaqp_parse.c: crafted RDMA_NLDEV_CMD_RES_QP_GET
 * replies laid out as drivers/infiniband/core/nldev.c fills them
 * (fill_nldev_handle, then the RES_QP nest of fill_res_qp_entry entries),
 * hostile lengths, the 24-bit PSN wrap and the liveness verdicts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "collectors/flows/rdmaqp_parse.h"
#include "collectors/flows/rdma_nl_parse.h"

#include "qpmsg.h"

#define QP_MSG RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET)
#define MS 1000000ull

static const struct cqp rc = {
	.port = 1, .lqpn = 0x11a, .rqpn = 0x2b4, .sq_psn = 0x4a21f0, .rq_psn = 0x10c3e2,
	.pid = 4242, .type = FLOW_QPT_RC, .state = FLOW_QPS_RTS,
};

static struct flow_rdmaqp_qp qps[16];

static void flow_rdmaqp_build_dump__one_device__dump_request(void **state)
{
	char buf[128];
	struct nlmsghdr *nlh = (void *)buf;
	struct nlattr *a;
	size_t n;

	(void)state;
	n = flow_rdmaqp_build_dump(buf, sizeof(buf), 77, 3);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, QP_MSG);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(nlh->nlmsg_seq, 77);
	a = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(mnl_attr_get_type(a), RDMA_NLDEV_ATTR_DEV_INDEX);
	assert_int_equal(mnl_attr_get_u32(a), 3);
	assert_int_equal(flow_rdmaqp_build_dump(buf, 8, 1, 3), 0);
	/* every device: no attribute */
	assert_int_equal(flow_rdmaqp_build_dump(buf, sizeof(buf), 1, 0), MNL_NLMSG_HDRLEN);
}

static void flow_rdmaqp_parse__three_qps__fields_decoded(void **state)
{
	static char buf[4096];
	const struct cqp q[3] = {
		rc,
		{ .port = 1, .lqpn = 0x11c, .sq_psn = 0x77, .pid = 4242, .type = FLOW_QPT_UD,
		  .state = FLOW_QPS_RTS },
		{ .lqpn = 1, .sq_psn = 0, .type = FLOW_QPT_GSI, .state = FLOW_QPS_RTS,
		  .kern = "ib_core" },
	};
	unsigned n = 0, skipped = 0;
	char err[256] = "";
	size_t len;

	(void)state;
	len = qpmsg_put(buf, 5, 3, "mlx5_0", q, 3);
	assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 16, &n, &skipped, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(skipped, 0);
	assert_int_equal(qps[0].dev_index, 3);
	assert_string_equal(qps[0].dev_name, "mlx5_0");
	assert_int_equal(qps[0].lqpn, 0x11a);
	assert_int_equal(qps[0].rqpn, 0x2b4);
	assert_int_equal(qps[0].sq_psn, 0x4a21f0);
	assert_int_equal(qps[0].rq_psn, 0x10c3e2);
	assert_int_equal(qps[0].pid, 4242);
	assert_int_equal(qps[0].port, 1);
	assert_int_equal(qps[0].type, FLOW_QPT_RC);
	assert_int_equal(qps[0].state, FLOW_QPS_RTS);
	assert_true(qps[0].have & FLOW_RDMAQP_HAVE_RQ_PSN);
	assert_false(qps[1].have & FLOW_RDMAQP_HAVE_RQ_PSN);     /* UD: none */
	assert_string_equal(qps[2].kern_name, "ib_core");
	assert_false(qps[2].have & FLOW_RDMAQP_HAVE_PORT);
	assert_string_equal(flow_rdmaqp_type_name(qps[1].type), "UD");
	assert_string_equal(flow_rdmaqp_state_name(FLOW_QPS_ERR), "ERR");
}

/* fill_res_qp_entry puts RES_SQ_PSN/RES_RQ_PSN as u32 from the driver's
 * qp_attr; a PSN is 24 bits (IBTA), so bits above are the driver's noise
 * and must not reach the 24-bit unwrap. */
static void flow_rdmaqp_parse__psn_high_bits__masked_to_24(void **state)
{
	static char buf[4096];
	struct cqp q = rc;
	unsigned n = 0;
	char err[256] = "";
	size_t len;

	(void)state;
	q.sq_psn = 0xff000005u;
	q.rq_psn = 0x81fffff7u;
	len = qpmsg_put(buf, 5, 3, "mlx5_0", &q, 1);
	assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 16, &n, NULL, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(qps[0].sq_psn, 0x000005);
	assert_int_equal(qps[0].rq_psn, 0xfffff7);
}

static void flow_rdmaqp_parse__huge_nlmsg_len__rejected_before_libmnl(void **state)
{
	static char buf[4096];
	struct nlmsghdr *nlh = (void *)buf;
	const uint32_t bad[] = { 0x80000001u, 0xffffffffu, 0x80000000u, 4097, 15, 0 };
	unsigned n = 0;
	char err[256];
	size_t len;

	(void)state;
	len = qpmsg_put(buf, 5, 3, "mlx5_0", &rc, 1);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nlh->nlmsg_len = bad[i];
		err[0] = '\0';
		assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 16, &n, NULL, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "nlmsg_len"));
		assert_int_equal(n, 0);
	}
	/* the same through a batch */
	nlh->nlmsg_len = 0x80000001u;
	assert_int_equal(flow_rdmaqp_parse_batch(buf, len, 5, qps, 16, &n, NULL, err, sizeof(err)),
			 -EINVAL);
	/* a buffer shorter than a header */
	assert_int_equal(flow_rdmaqp_parse(buf, 8, qps, 16, &n, NULL, err, sizeof(err)), -EINVAL);
	/* and the device reply's parser (rdma_nl_parse.c) shares the check */
	assert_null(rdma_nl_msg_check(buf, len, err, sizeof(err)));
}

static void flow_rdmaqp_parse__bad_attribute__einval(void **state)
{
	static char buf[4096];
	struct nlmsghdr *nlh;
	struct nlattr *tab, *e;
	unsigned n = 0;
	char err[256];

	(void)state;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = QP_MSG;
	tab = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
	e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
	mnl_attr_put_u16(nlh, RDMA_NLDEV_ATTR_RES_LQPN, 5);      /* u32 expected */
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, 3);
	mnl_attr_nest_end(nlh, e);
	mnl_attr_nest_end(nlh, tab);
	assert_int_equal(flow_rdmaqp_parse(buf, nlh->nlmsg_len, qps, 16, &n, NULL, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "entry 1"));
}

static void flow_rdmaqp_parse__entry_without_lqpn__skipped(void **state)
{
	static char buf[4096];
	struct cqp q[2] = { rc, rc };
	unsigned n = 0, skipped = 0;
	char err[256];
	size_t len;

	(void)state;
	q[0].no_lqpn = 1;                       /* not put */
	len = qpmsg_put(buf, 5, 3, "mlx5_0", q, 2);
	assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 16, &n, &skipped, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(skipped, 1);
	/* room for none: E2BIG */
	n = 0;
	assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 0, &n, NULL, err, sizeof(err)), -E2BIG);
}

static void flow_rdmaqp_parse_batch__two_messages_and_done__all_read(void **state)
{
	static char buf[8192];
	struct cqp q2 = rc;
	struct nlmsghdr *done;
	unsigned n = 0;
	char err[256] = "";
	size_t len;

	(void)state;
	len = qpmsg_put(buf, 9, 3, "mlx5_0", &rc, 1);
	len = MNL_ALIGN(len);
	q2.lqpn = 0x300;
	len += MNL_ALIGN(qpmsg_put(buf + len, 9, 4, "mlx5_1", &q2, 1));
	done = mnl_nlmsg_put_header(buf + len);
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_seq = 9;
	len += done->nlmsg_len;
	assert_int_equal(flow_rdmaqp_parse_batch(buf, len, 9, qps, 16, &n, NULL, err, sizeof(err)), 1);
	assert_int_equal(n, 2);
	assert_string_equal(qps[1].dev_name, "mlx5_1");
	/* a stale sequence is refused */
	n = 0;
	assert_int_equal(flow_rdmaqp_parse_batch(buf, len, 8, qps, 16, &n, NULL, err, sizeof(err)),
			 -EPROTO);
	/* an error reply is reported with its errno */
	{
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

		nlh->nlmsg_type = NLMSG_ERROR;
		nlh->nlmsg_seq = 9;
		e->error = -EOPNOTSUPP;
		assert_int_equal(flow_rdmaqp_parse_batch(buf, nlh->nlmsg_len, 9, qps, 16, &n, NULL,
							 err, sizeof(err)), -EOPNOTSUPP);
	}
}

/* ---- liveness ---- */

static struct flow_rdmaqp_qp qp_at(uint32_t sq, uint32_t rq, uint8_t st)
{
	static char buf[4096];
	struct cqp q = rc;
	unsigned n = 0;
	char err[256];
	size_t len;

	q.sq_psn = sq;
	q.rq_psn = rq;
	q.state = st;
	len = qpmsg_put(buf, 1, 3, "mlx5_0", &q, 1);
	assert_int_equal(flow_rdmaqp_parse(buf, len, qps, 16, &n, NULL, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	return qps[0];
}

static void flow_rdmaqp_obs__psn_wraps_24_bits__unwrapped(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q;
	struct flow_obs o;

	(void)state;
	q = qp_at(0xfffffe, 0xfffff0, FLOW_QPS_RTS);
	flow_rdmaqp_obs(&q, &t, 0, &o);
	q = qp_at(0x000003, 0x000002, FLOW_QPS_RTS);            /* +5 and +0x12 */
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 100 * MS, &o), FLOW_LIVE_PROGRESS);
	assert_int_equal(o.tx_msgs, 5);
	assert_int_equal(o.rx_msgs, 0x12);
	assert_int_equal(o.session, (3ull << 32) | 0x11a);
	assert_string_equal(o.engine, "rdma:mlx5_0");
	assert_int_equal(o.pid, 4242);
	assert_int_equal(o.src, FLOW_SRC_RDMAQP);
	assert_int_equal(flow_live_psn_sub(0x000003, 0xfffffe), 5);
}

static void flow_rdmaqp_obs__requests_without_responses__waiting_then_stalled(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q;
	struct flow_obs o;
	uint32_t sq = 0xfffff0, rq = 0x500;

	(void)state;
	/* a healthy two-sided exchange across the wrap: one request
	 * packet, one reply packet per round */
	for (unsigned i = 0; i < 20; i++) {
		sq = (sq + 3) & 0xffffff;
		rq = (rq + 3) & 0xffffff;
		q = qp_at(sq, rq, FLOW_QPS_RTS);
		assert_true(flow_rdmaqp_obs(&q, &t, i * 100 * MS, &o) != FLOW_LIVE_WAITING);
		assert_false(flow_live_stalled(&t.live, i * 100 * MS, 200 * MS));
	}
	/* the peer stops answering: sq_psn moves once more, rq_psn does not */
	sq = (sq + 1) & 0xffffff;
	q = qp_at(sq, rq, FLOW_QPS_RTS);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 2000 * MS, &o), FLOW_LIVE_PROGRESS);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 2100 * MS, &o), FLOW_LIVE_WAITING);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 2300 * MS, &o), FLOW_LIVE_WAITING);
	assert_true(flow_live_stalled(&t.live, 2300 * MS, 200 * MS));
}

static void flow_rdmaqp_obs__one_sided_writes__never_waiting(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q;
	struct flow_obs o;

	(void)state;
	/* RDMA WRITEs only: sq_psn moves, rq_psn never does */
	for (unsigned i = 0; i < 10; i++) {
		q = qp_at(100 + i * 8, 42, FLOW_QPS_RTS);
		flow_rdmaqp_obs(&q, &t, i * 100 * MS, &o);
	}
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 5000 * MS, &o), FLOW_LIVE_IDLE);
	assert_false(flow_live_stalled(&t.live, 5000 * MS, 200 * MS));
}

static void flow_rdmaqp_obs__qp_in_err__failed(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q;
	struct flow_obs o;

	(void)state;
	q = qp_at(10, 10, FLOW_QPS_RTS);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 0, &o), FLOW_LIVE_IDLE);
	q = qp_at(10, 10, FLOW_QPS_ERR);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 100 * MS, &o), FLOW_LIVE_FAILED);
	assert_int_equal(o.state, 6);
	assert_int_equal(flow_rdmaqp_obs(&q, &t, 300 * MS, &o), FLOW_LIVE_FAILED);
	assert_true(flow_live_stalled(&t.live, 300 * MS, 200 * MS));
}

static void flow_rdmaqp_obs__idle_qp__idle(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q = qp_at(10, 10, FLOW_QPS_RTS);
	struct flow_obs o;

	(void)state;
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(flow_rdmaqp_obs(&q, &t, i * 100 * MS, &o), FLOW_LIVE_IDLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_rdmaqp_build_dump__one_device__dump_request),
		cmocka_unit_test(flow_rdmaqp_parse__three_qps__fields_decoded),
		cmocka_unit_test(flow_rdmaqp_parse__psn_high_bits__masked_to_24),
		cmocka_unit_test(flow_rdmaqp_parse__huge_nlmsg_len__rejected_before_libmnl),
		cmocka_unit_test(flow_rdmaqp_parse__bad_attribute__einval),
		cmocka_unit_test(flow_rdmaqp_parse__entry_without_lqpn__skipped),
		cmocka_unit_test(flow_rdmaqp_parse_batch__two_messages_and_done__all_read),
		cmocka_unit_test(flow_rdmaqp_obs__psn_wraps_24_bits__unwrapped),
		cmocka_unit_test(flow_rdmaqp_obs__requests_without_responses__waiting_then_stalled),
		cmocka_unit_test(flow_rdmaqp_obs__one_sided_writes__never_waiting),
		cmocka_unit_test(flow_rdmaqp_obs__qp_in_err__failed),
		cmocka_unit_test(flow_rdmaqp_obs__idle_qp__idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
