/* flow_rdmaqp: RDMA_NLDEV_CMD_RES_QP_GET dumps into queue-pair flows. See
 * rdmaqp_parse.h. Messages are checked by rdma_nl_msg_check() (the one
 * unsigned length check of RDMA netlink replies) and attributes by
 * lib/nl.c's policy callback, as rdma_nl_parse.c does for the device reply. */
#include "collectors/flows/rdmaqp_parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "collectors/flows/rdma_nl_parse.h"
#include "lib/nl.h"
#include "lib/util.h"

#define QP_TB_MAX RDMA_NLDEV_ATTR_RES_KERN_NAME

static const struct nl_pol qp_pol[QP_TB_MAX + 1] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_DEV_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[RDMA_NLDEV_ATTR_PORT_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_QP] = { MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_RES_QP_ENTRY] = { MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_RES_LQPN] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_RQPN] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_RQ_PSN] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_SQ_PSN] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE] = { MNL_TYPE_U8, 0 },
	[RDMA_NLDEV_ATTR_RES_TYPE] = { MNL_TYPE_U8, 0 },
	[RDMA_NLDEV_ATTR_RES_STATE] = { MNL_TYPE_U8, 0 },
	[RDMA_NLDEV_ATTR_RES_PID] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_RES_KERN_NAME] = { MNL_TYPE_NUL_STRING, 0 },
};

size_t flow_rdmaqp_build_dump(void *buf, size_t len, uint32_t seq, uint32_t dev_index)
{
	struct nlmsghdr *nlh;

	if (len < MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nlattr) + 4))
		return 0;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (dev_index)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	return nlh->nlmsg_len;
}

static void copy_str(char *dst, size_t len, const struct nlattr *a)
{
	const char *s = mnl_attr_get_str(a);
	size_t i;

	/* printable ASCII only: names end up in logs and bundles */
	for (i = 0; i + 1 < len && s[i]; i++)
		dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	dst[i] = '\0';
}

int flow_rdmaqp_parse(const void *buf, size_t len, struct flow_rdmaqp_qp *out, unsigned max,
		      unsigned *n, unsigned *skipped, char *err, size_t errlen)
{
	const struct nlattr *tb[QP_TB_MAX + 1] = { 0 };
	struct nl_tb t = { qp_pol, QP_TB_MAX, tb };
	const struct nlmsghdr *nlh = rdma_nl_msg_check(buf, len, err, errlen);
	const struct nlattr *e;
	uint32_t dev = 0;
	char dev_name[64] = "";
	unsigned idx = 0;

	if (!nlh)
		return -EINVAL;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN) {
		util_errf(err, errlen, "RES_QP_GET reply: no payload");
		return -EINVAL;
	}
	if (mnl_attr_parse(nlh, 0, nl_attr_cb, &t) != MNL_CB_OK) {
		util_errf(err, errlen, "RES_QP_GET reply: malformed attribute: %s", strerror(errno));
		return -EINVAL;
	}
	if (tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		dev = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_DEV_NAME])
		copy_str(dev_name, sizeof(dev_name), tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (!tb[RDMA_NLDEV_ATTR_RES_QP])
		return 0;               /* a device with no QPs */
	mnl_attr_for_each_nested(e, tb[RDMA_NLDEV_ATTR_RES_QP]) {
		const struct nlattr *etb[QP_TB_MAX + 1] = { 0 };
		struct nl_tb et = { qp_pol, QP_TB_MAX, etb };
		struct flow_rdmaqp_qp *q;

		if (mnl_attr_get_type(e) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
			continue;
		idx++;
		if (mnl_attr_parse_nested(e, nl_attr_cb, &et) != MNL_CB_OK) {
			util_errf(err, errlen, "RES_QP_GET reply: QP entry %u: malformed attribute: %s",
				  idx, strerror(errno));
			return -EINVAL;
		}
		if (!etb[RDMA_NLDEV_ATTR_RES_LQPN] || !etb[RDMA_NLDEV_ATTR_RES_STATE]) {
			if (skipped)
				(*skipped)++;
			continue;
		}
		if (*n >= max) {
			util_errf(err, errlen, "RES_QP_GET reply: more than %u QPs", max);
			return -E2BIG;
		}
		q = &out[*n];
		memset(q, 0, sizeof(*q));
		q->dev_index = dev;
		memcpy(q->dev_name, dev_name, sizeof(q->dev_name));
		q->lqpn = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_RES_LQPN]);
		q->state = mnl_attr_get_u8(etb[RDMA_NLDEV_ATTR_RES_STATE]);
		if (etb[RDMA_NLDEV_ATTR_RES_TYPE])
			q->type = mnl_attr_get_u8(etb[RDMA_NLDEV_ATTR_RES_TYPE]);
		if (etb[RDMA_NLDEV_ATTR_PORT_INDEX]) {
			q->port = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_PORT_INDEX]);
			q->have |= FLOW_RDMAQP_HAVE_PORT;
		}
		if (etb[RDMA_NLDEV_ATTR_RES_RQPN]) {
			q->rqpn = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_RES_RQPN]);
			q->have |= FLOW_RDMAQP_HAVE_RQPN;
		}
		if (etb[RDMA_NLDEV_ATTR_RES_RQ_PSN]) {
			q->rq_psn = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_RES_RQ_PSN]) & 0xffffffu;
			q->have |= FLOW_RDMAQP_HAVE_RQ_PSN;
		}
		if (etb[RDMA_NLDEV_ATTR_RES_SQ_PSN]) {
			q->sq_psn = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_RES_SQ_PSN]) & 0xffffffu;
			q->have |= FLOW_RDMAQP_HAVE_SQ_PSN;
		}
		if (etb[RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE])
			q->path_mig_state = mnl_attr_get_u8(etb[RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE]);
		if (etb[RDMA_NLDEV_ATTR_RES_PID]) {
			q->pid = mnl_attr_get_u32(etb[RDMA_NLDEV_ATTR_RES_PID]);
			q->have |= FLOW_RDMAQP_HAVE_PID;
		}
		if (etb[RDMA_NLDEV_ATTR_RES_KERN_NAME])
			copy_str(q->kern_name, sizeof(q->kern_name), etb[RDMA_NLDEV_ATTR_RES_KERN_NAME]);
		(*n)++;
	}
	return 0;
}

int flow_rdmaqp_parse_batch(const void *buf, size_t len, uint32_t seq,
			    struct flow_rdmaqp_qp *out, unsigned max, unsigned *n,
			    unsigned *skipped, char *err, size_t errlen)
{
	const unsigned char *p = buf;
	size_t off = 0;

	if (len > RDMA_NL_MAX_MSG) {
		util_errf(err, errlen, "rdma netlink: %zu-byte batch is too large", len);
		return -EINVAL;
	}
	while (off < len) {
		const struct nlmsghdr *nlh;
		size_t left = len - off, step;
		int rc;

		nlh = rdma_nl_msg_check(p + off, left, err, errlen);
		if (!nlh)
			return -EINVAL;
		if (seq && nlh->nlmsg_seq != seq) {
			util_errf(err, errlen, "rdma netlink: reply with sequence %u, expected %u",
				  nlh->nlmsg_seq, seq);
			return -EPROTO;
		}
		if (nlh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
				util_errf(err, errlen, "rdma netlink: short error reply");
				return -EBADMSG;
			}
			if (e->error == 0)
				return 1;       /* an ack ends it too */
			util_errf(err, errlen, "RDMA_NLDEV_CMD_RES_QP_GET: %s",
				  strerror(e->error < 0 && e->error > -4096 ? -e->error : EPROTO));
			return e->error < 0 && e->error > -4096 ? e->error : -EPROTO;
		}
		if (nlh->nlmsg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET)) {
			rc = flow_rdmaqp_parse(nlh, nlh->nlmsg_len, out, max, n, skipped, err, errlen);
			if (rc < 0)
				return rc;
		}
		step = MNL_ALIGN(nlh->nlmsg_len);
		if (step > left)
			break;          /* the last message, unpadded */
		off += step;
	}
	return 0;
}

const char *flow_rdmaqp_state_name(unsigned state)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return state < sizeof(n) / sizeof(n[0]) ? n[state] : "?";
}

const char *flow_rdmaqp_type_name(unsigned type)
{
	switch (type) {
	case FLOW_QPT_SMI: return "SMI";
	case FLOW_QPT_GSI: return "GSI";
	case FLOW_QPT_RC: return "RC";
	case FLOW_QPT_UC: return "UC";
	case FLOW_QPT_UD: return "UD";
	case FLOW_QPT_RAW_PACKET: return "RAW_PACKET";
	case FLOW_QPT_XRC_INI: return "XRC_INI";
	case FLOW_QPT_XRC_TGT: return "XRC_TGT";
	}
	return "?";
}

enum flow_live flow_rdmaqp_obs(const struct flow_rdmaqp_qp *q, struct flow_rdmaqp_track *t,
			       uint64_t now_ns, struct flow_obs *o)
{
	int first = !t->live.init, moved, connected;
	uint64_t rq_before = t->rq_acc, sq_before = t->sq_acc;
	enum flow_live v;

	if (first) {
		t->sq_raw = q->sq_psn;
		t->rq_raw = q->rq_psn;
	}
	flow_live_unwrap(&t->sq_acc, &t->sq_raw, q->sq_psn, 24);
	flow_live_unwrap(&t->rq_acc, &t->rq_raw, q->rq_psn, 24);
	if (t->rq_acc != rq_before)
		t->rq_moved = 1;
	moved = flow_live_update(&t->live, t->sq_acc, t->rq_acc, now_ns);

	memset(o, 0, sizeof(*o));
	o->src = FLOW_SRC_RDMAQP;
	o->session = ((uint64_t)q->dev_index << 32) | q->lqpn;
	/* no addresses: the QP numbers are the key (flows.h FLOW_PROTO_QP) */
	o->key.proto = FLOW_PROTO_QP;
	o->key.saddr.s6_addr32[0] = q->dev_index;
	o->key.saddr.s6_addr32[1] = q->lqpn;
	if (q->have & FLOW_RDMAQP_HAVE_RQPN)
		o->key.daddr.s6_addr32[1] = q->rqpn;
	o->tx_msgs = t->sq_acc;
	o->rx_msgs = t->rq_acc;
	o->last_tx_ns = t->sq_acc != sq_before ? now_ns : 0;
	o->last_rx_ns = t->rq_acc != rq_before ? now_ns : 0;
	o->state = q->state;
	o->pid = (int32_t)q->pid;
	snprintf(o->engine, sizeof(o->engine), "rdma:%.26s", q->dev_name[0] ? q->dev_name : "?");

	connected = (q->type == FLOW_QPT_RC || q->type == FLOW_QPT_UC) &&
		    (q->have & FLOW_RDMAQP_HAVE_RQ_PSN);
	if (q->state == FLOW_QPS_ERR || q->state == FLOW_QPS_SQE)
		v = FLOW_LIVE_FAILED;
	else if (moved)
		v = FLOW_LIVE_PROGRESS;
	else if (connected && t->rq_moved && q->state == FLOW_QPS_RTS &&
		 flow_live_outstanding(&t->live))
		v = FLOW_LIVE_WAITING;
	else
		v = FLOW_LIVE_IDLE;
	flow_live_set(&t->live, v, v == FLOW_LIVE_WAITING ? t->live.moved_ns : 0, now_ns);
	flow_live_obs_set(&t->live, o);
	return v;
}
