/* qpmsg: RDMA_NLDEV_CMD_RES_QP_GET reply messages laid out as
 * drivers/infiniband/core/nldev.c fills them (fill_nldev_handle, then the
 * RES_QP nest of fill_res_qp_entry entries, attributes in the kernel's
 * order), for test_flow_rdmaqp.c (the parser) and test_flow_readers.c
 * (the driver, and the QP dumps the system tests write). Header only
 * (static inline). */
#ifndef NICSTALL_TEST_QPMSG_H
#define NICSTALL_TEST_QPMSG_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "collectors/flows/rdmaqp_parse.h"

/* One QP entry. */
struct cqp {
	uint32_t port, lqpn, rqpn, sq_psn, rq_psn, pid;
	uint8_t type, state;
	const char *kern;         /* a kernel QP: KERN_NAME instead of PID */
	int no_lqpn;              /* leave RES_LQPN out (a malformed entry) */
};

/* One reply message at buf (room enough): the device handle, the RES_QP
 * nest, one entry per QP; port 0 leaves PORT_INDEX out (a QP not bound to
 * a port yet). Returns its nlmsg_len. */
static inline size_t qpmsg_put(void *buf, uint32_t seq, uint32_t dev, const char *name,
			       const struct cqp *q, unsigned n)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlattr *tab;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = seq;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	tab = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
	for (unsigned i = 0; i < n; i++) {
		struct nlattr *e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);

		if (q[i].port)
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, q[i].port);
		if (!q[i].no_lqpn)
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, q[i].lqpn);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PDN, 3);
		if (q[i].kern)
			mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_RES_KERN_NAME, q[i].kern);
		else
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, q[i].pid);
		if (q[i].type == FLOW_QPT_RC || q[i].type == FLOW_QPT_UC) {
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, q[i].rqpn);
			mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQ_PSN, q[i].rq_psn);
		}
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_SQ_PSN, q[i].sq_psn);
		if (q[i].type == FLOW_QPT_RC || q[i].type == FLOW_QPT_UC)
			mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 3);
		mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, q[i].type);
		mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, q[i].state);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, tab);
	return nlh->nlmsg_len;
}

#endif
