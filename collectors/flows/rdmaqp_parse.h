/* flow_rdmaqp: RDMA queue pairs as flows, from the RDMA netlink resource
 * dump RDMA_NLDEV_CMD_RES_QP_GET (what `rdma res show qp` prints).
 *
 * The kernel (drivers/infiniband/core/nldev.c, res_get_common_dumpit and
 * fill_res_qp_entry / fill_res_qp_entry_query) sends one message per
 * device batch: RDMA_NLDEV_ATTR_DEV_INDEX, _DEV_NAME, then the nest
 * RDMA_NLDEV_ATTR_RES_QP holding one RDMA_NLDEV_ATTR_RES_QP_ENTRY nest per
 * QP with _PORT_INDEX (once the QP has a port), _RES_LQPN, _RES_PDN (user
 * QPs), _RES_PID or _RES_KERN_NAME, for RC/UC _RES_RQPN and _RES_RQ_PSN,
 * always _RES_SQ_PSN, for RC/UC/XRC _RES_PATH_MIG_STATE, then _RES_TYPE
 * and _RES_STATE (u8). Each entry costs the kernel an ib_query_qp(), which
 * is a firmware command on mlx5: poll at a modest rate (1 s).
 *
 * PSN semantics (InfiniBand Architecture Specification vol. 1, 9.7; the
 * kernel's struct ib_qp_attr):
 *   sq_psn  the PSN the QP's requester puts on its next request packet; it
 *           moves as this end sends requests (each packet, including the
 *           response packets an RDMA READ will consume, takes one PSN)
 *   rq_psn  the responder's expected PSN (ePSN): the PSN of the next
 *           request packet it expects from the remote requester; it moves
 *           as in-order requests from the peer arrive (RC/UC only)
 * Both are 24 bits and wrap. Acknowledgements are not visible, so for a
 * two-sided request/response exchange (SEND/RECV, WRITE with immediate
 * replies) a QP whose sq_psn moved and whose rq_psn has not moved since,
 * beyond the threshold, is waiting for its peer. One-sided traffic (READ,
 * WRITE without replies) never moves rq_psn: such a QP is never declared
 * waiting from PSNs (the port's RDMA error counters speak for it). A QP in
 * IB_QPS_ERR (6) or IB_QPS_SQE (5) has failed. Raw-packet QPs (VMA/XLIO)
 * and UD QPs carry no useful PSN.
 *
 * Nothing here writes: per-QP counters would need a counter binding
 * (CAP_NET_ADMIN), which the daemon does not do. */
#ifndef NICSTALL_FLOW_RDMAQP_H
#define NICSTALL_FLOW_RDMAQP_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/flows.h"

/* ib_qp_state and ib_qp_type values as the kernel puts them in the dump. */
enum {
	FLOW_QPS_RESET = 0, FLOW_QPS_INIT, FLOW_QPS_RTR, FLOW_QPS_RTS,
	FLOW_QPS_SQD, FLOW_QPS_SQE, FLOW_QPS_ERR,
};
enum {
	FLOW_QPT_SMI = 0, FLOW_QPT_GSI = 1, FLOW_QPT_RC = 2, FLOW_QPT_UC = 3,
	FLOW_QPT_UD = 4, FLOW_QPT_RAW_PACKET = 8, FLOW_QPT_XRC_INI = 9,
	FLOW_QPT_XRC_TGT = 10,
};

#define FLOW_RDMAQP_HAVE_PORT   0x01u
#define FLOW_RDMAQP_HAVE_RQPN   0x02u
#define FLOW_RDMAQP_HAVE_RQ_PSN 0x04u
#define FLOW_RDMAQP_HAVE_SQ_PSN 0x08u
#define FLOW_RDMAQP_HAVE_PID    0x10u

struct flow_rdmaqp_qp {
	uint32_t dev_index;
	char dev_name[64];
	uint32_t port, lqpn, rqpn, sq_psn, rq_psn, pid;
	uint8_t type, state, path_mig_state;
	char kern_name[32];         /* kernel QPs: the owning module */
	unsigned have;              /* FLOW_RDMAQP_HAVE_* */
};

/* Build the dump request (NLM_F_REQUEST | NLM_F_DUMP) for one device
 * (dev_index, as RDMA_NLDEV_CMD_GET reports it) or every device (0).
 * Returns the length, or 0 when buf is too small. */
size_t flow_rdmaqp_build_dump(void *buf, size_t len, uint32_t seq, uint32_t dev_index);

/* Parse one RES_QP_GET reply message (header included, len bytes: checked
 * with rdma_nl_msg_check() before libmnl sees it). Appends up to
 * max - *n QPs to out[*n..]. Entries without an LQPN or a state are
 * skipped and counted in *skipped (may be NULL). 0, or -EINVAL / -E2BIG
 * (more entries than room) with err filled. */
int flow_rdmaqp_parse(const void *buf, size_t len, struct flow_rdmaqp_qp *out, unsigned max,
		      unsigned *n, unsigned *skipped, char *err, size_t errlen);

/* Walk a receive buffer of several messages (a dump batch): every message
 * is length-checked (unsigned) before it is parsed. Returns 1 when
 * NLMSG_DONE was seen, 0 when more is to come, -errno for an NLMSG_ERROR
 * reply or a malformed message (err filled). */
int flow_rdmaqp_parse_batch(const void *buf, size_t len, uint32_t seq,
			    struct flow_rdmaqp_qp *out, unsigned max, unsigned *n,
			    unsigned *skipped, char *err, size_t errlen);

/* "RESET" ... "ERR"; "RC", "UD", "RAW_PACKET" ... */
const char *flow_rdmaqp_state_name(unsigned state);
const char *flow_rdmaqp_type_name(unsigned type);

struct flow_rdmaqp_track {
	struct flow_live_track live;
	uint64_t sq_acc, rq_acc, sq_raw, rq_raw;
	int rq_moved;               /* rq_psn moved at least once: two-sided */
};

/* One QP as a flow observation (src FLOW_SRC_RDMAQP): session =
 * dev_index << 32 | lqpn, tx/rx msgs = PSNs sent / received since first
 * sight (24-bit wrap handled), state = QP state, pid, engine "rdma:DEV".
 * The key has no addresses (the dump has none): the caller assigns QPs to
 * ports by device. Verdict: FAILED in ERR/SQE; WAITING when an RC/UC QP's
 * PSNs stopped with more sent than answered since first sight, on a QP
 * whose rq_psn has moved before; PROGRESS when a PSN moved; IDLE
 * otherwise. t zeroed before the first call for a QP. */
enum flow_live flow_rdmaqp_obs(const struct flow_rdmaqp_qp *q, struct flow_rdmaqp_track *t,
			       uint64_t now_ns, struct flow_obs *o);

#endif
