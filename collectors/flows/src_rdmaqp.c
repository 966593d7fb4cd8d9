/* flow_src_rdmaqp: flow_src_rdmaqp_ops ("rdmaqp", port scope), the queue
 * pairs of the port's RDMA device (collectors/flows/rdmaqp_parse.h parses and
 * judges them).
 *
 * open() resolves the device name to its index with RDMA_NLDEV_CMD_GET in
 * the port's namespace; a poll that is due (interval_ns, default 1 s: each
 * QP in the dump is an ib_query_qp(), a firmware command on mlx5) sends
 * RDMA_NLDEV_CMD_RES_QP_GET for that index through lib/nl's request path
 * (answered during sendmsg(), never waited for) and keeps the QPs of the
 * port's RDMA port; QPs without a port yet (RESET, INIT) are left out.
 * Between dumps the last observations are emitted again, a stale
 * "progress" as "idle". Nothing is written: no counter binding.
 *
 * ctx->replies_dir replaces the kernel by recorded replies (this build
 * machine has no RDMA device): DIR/dev-get.nlhex answers the device
 * lookup and DIR/res-qp-get.nlhex each dump, re-read at every dump (a test
 * replaces it atomically), in the .nlhex format (lib/nlhex.h) of the devlink fixtures
 * (tests/fixtures/devlink/README.md). */
#include "collectors/flows/rdmaqp_parse.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/rdma_nl_parse.h"
#include "lib/nlhex.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#define DEF_INTERVAL_NS 1000000000ull
#define MAX_QPS 4096u

struct qtrk {
	struct flow_rdmaqp_qp q;
	struct flow_rdmaqp_track t;
	struct flow_obs o;
	int fresh;
};

struct qsrc {
	struct nl_sock *ns;             /* NULL with replies */
	char replies[PATH_MAX];
	char dev[64];
	unsigned port;
	uint32_t dev_index;
	uint64_t interval_ns, last_ns;
	struct flow_rdmaqp_qp *qps;     /* MAX_QPS, scratch of one dump */
	unsigned nqp, skipped, over;
	struct qtrk *trk;
	unsigned ntrk;
	uint64_t dumps, errors, cost_ns, last_cost_ns;
	int found;
	char cb_err[200];
	char req[128] __attribute__((aligned(8)));
};

static void qs_free(struct qsrc *q)
{
	if (!q)
		return;
	nl_sock_close(q->ns);
	free(q->qps);
	free(q->trk);
	free(q);
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qsrc *q = data;
	char name[64], e[128];
	uint32_t idx;

	if (rdma_nl_parse_dev(nlh, nlh->nlmsg_len, &idx, name, sizeof(name), e, sizeof(e)) < 0)
		return MNL_CB_OK;       /* one bad entry: the others may do */
	if (!strcmp(name, q->dev)) {
		q->dev_index = idx;
		q->found = 1;
	}
	return MNL_CB_OK;
}

static int qp_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qsrc *q = data;
	int rc;

	if (nlh->nlmsg_type != RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET))
		return MNL_CB_OK;
	rc = flow_rdmaqp_parse(nlh, nlh->nlmsg_len, q->qps, MAX_QPS, &q->nqp, &q->skipped,
			       q->cb_err, sizeof(q->cb_err));
	if (rc == -E2BIG) {
		q->over = 1;
		return MNL_CB_STOP;     /* keep what fits */
	}
	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* A recorded reply file: every message through cb as the kernel's would. */
static int replay(struct qsrc *q, const char *file, mnl_cb_t cb, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], e[256];
	uint8_t *buf;
	size_t len, off = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", q->replies, file);
	rc = nlhex_load(path, &buf, &len, e, sizeof(e));
	if (rc < 0) {
		util_errf(err, errlen, "%s", e);
		return rc;
	}
	if (len && nl_msgs_check(buf, len) < 0) {
		util_errf(err, errlen, "%s: malformed reply (a message length runs past the end)",
			  path);
		free(buf);
		return -EBADMSG;
	}
	rc = 0;
	while (len - off >= NLMSG_HDRLEN) {
		const struct nlmsghdr *nlh = (const void *)(buf + off);

		if (nlh->nlmsg_type == NLMSG_DONE)
			break;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *me = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*me) && me->error) {
				rc = me->error < 0 && me->error > -4096 ? me->error : -EPROTO;
				util_errf(err, errlen, "%s: %s", path, strerror(-rc));
			}
			break;
		}
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			errno = 0;
			int r = cb(nlh, q);

			if (r == MNL_CB_STOP)
				break;
			if (r < MNL_CB_STOP) {
				rc = -(errno ? errno : EPROTO);
				util_errf(err, errlen, "%s: %s", path, q->cb_err[0] ? q->cb_err :
					  strerror(-rc));
				break;
			}
		}
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	free(buf);
	return rc;
}

static int talk(struct qsrc *q, struct nlmsghdr *req, const char *file, mnl_cb_t cb,
		const char *what, char *err, size_t errlen)
{
	char e[256];
	int rc;

	q->cb_err[0] = '\0';
	if (q->replies[0])
		return replay(q, file, cb, err, errlen);
	rc = nl_sock_request(q->ns, req, cb, q, what, e, sizeof(e));
	if (rc < 0)
		util_errf(err, errlen, "%s%s%s", e, q->cb_err[0] ? ": " : "", q->cb_err);
	return rc;
}

static int qs_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct qsrc *q;
	struct nlmsghdr *nlh;
	char e[256];
	int rc;

	s->err[0] = '\0';
	s->ops = &flow_src_rdmaqp_ops;
	if (!ctx || !ctx->rdma_dev || !*ctx->rdma_dev) {
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs: the port has no RDMA device");
		return -ENODEV;
	}
	if (!util_valid_name(ctx->rdma_dev, 63)) {
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs: bad device name");
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->qps = calloc(MAX_QPS, sizeof(*q->qps)))) {
		qs_free(q);
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs: out of memory");
		return -ENOMEM;
	}
	util_strlcpy(q->dev, ctx->rdma_dev, sizeof(q->dev));
	q->port = ctx->rdma_port ? ctx->rdma_port : 1;
	q->interval_ns = ctx->interval_ns ? ctx->interval_ns : DEF_INTERVAL_NS;
	if (ctx->replies_dir && *ctx->replies_dir) {
		util_strlcpy(q->replies, ctx->replies_dir, sizeof(q->replies));
	} else {
		q->ns = nl_sock_open(ctx->netns_fd, NETLINK_RDMA, 0, e, sizeof(e));
		if (!q->ns) {
			rc = -(errno ? errno : EIO);
			util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: %s%s", q->dev, e,
				  rc == -EPROTONOSUPPORT ? " (kernel without RDMA netlink)" : "");
			qs_free(q);
			return rc;
		}
	}
	nlh = mnl_nlmsg_put_header(q->req);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rc = talk(q, nlh, "dev-get.nlhex", dev_cb, "RDMA_NLDEV_CMD_GET", e, sizeof(e));
	if (rc == 0 && !q->found) {
		rc = -ENODEV;
		util_errf(e, sizeof(e), "no RDMA device \"%s\" in RDMA netlink", q->dev);
	}
	if (rc < 0) {
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: %s", q->dev, e);
		qs_free(q);
		return rc;
	}
	s->priv = q;
	return 0;
}

/* One dump; the trackers follow the QPs it holds (a QP gone is forgotten,
 * a QP number reused after that starts afresh). */
static int dump(struct flow_src *s, struct qsrc *q, uint64_t now)
{
	struct qtrk *nt;
	size_t n;
	char e[256];
	int rc;

	q->nqp = q->skipped = q->over = 0;
	n = flow_rdmaqp_build_dump(q->req, sizeof(q->req), 0, q->dev_index);
	if (!n) {
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: request", q->dev);
		return -EINVAL;
	}
	rc = talk(q, (struct nlmsghdr *)q->req, "res-qp-get.nlhex", qp_cb,
		  "RDMA_NLDEV_CMD_RES_QP_GET", e, sizeof(e));
	q->dumps++;
	if (rc < 0) {
		q->errors++;
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: %s", q->dev, e);
		return rc;
	}
	nt = calloc(q->nqp ? q->nqp : 1, sizeof(*nt));
	if (!nt) {
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: out of memory", q->dev);
		return -ENOMEM;
	}
	n = 0;
	for (unsigned i = 0; i < q->nqp; i++) {
		const struct flow_rdmaqp_qp *p = &q->qps[i];

		/* older kernels ignore DEV_INDEX in a dump: filter here */
		if (p->dev_index != q->dev_index || !(p->have & FLOW_RDMAQP_HAVE_PORT) ||
		    p->port != q->port)
			continue;
		for (unsigned j = 0; j < q->ntrk; j++)
			if (q->trk[j].q.lqpn == p->lqpn && q->trk[j].q.type == p->type) {
				nt[n].t = q->trk[j].t;
				break;
			}
		nt[n].q = *p;
		flow_rdmaqp_obs(p, &nt[n].t, now, &nt[n].o);
		/* answered during sendmsg (lib/nl): the dump is of now */
		nt[n].o.data_ns = now;
		nt[n].fresh = 1;
		n++;
	}
	free(q->trk);
	q->trk = nt;
	q->ntrk = (unsigned)n;
	s->err[0] = '\0';
	if (q->over)
		util_errf(s->err, sizeof(s->err), "RDMA queue pairs of %s: more than %u QPs; "
			  "the rest are not watched", q->dev, MAX_QPS);
	return 0;
}

static int qs_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct qsrc *q = s->priv;
	uint64_t now = loop_mono_ns();
	int rc = 0;

	if (!q)
		return -EBADF;
	if (!q->last_ns || now - q->last_ns >= q->interval_ns) {
		q->last_ns = now;
		rc = dump(s, q, now);
		q->last_cost_ns = loop_mono_ns() - now;
		q->cost_ns += q->last_cost_ns;
	}
	/* the next dump; the queue pairs' verdicts carry their own times */
	s->sched.next_ns = flow_src_next_min(flow_src_idle_next(s), q->last_ns + q->interval_ns);
	for (unsigned i = 0; i < q->ntrk; i++) {
		struct flow_obs o = q->trk[i].o;

		if (!q->trk[i].fresh && flow_live_of(&o) == FLOW_LIVE_PROGRESS)
			o.live = FLOW_LIVE_IDLE + 1;
		q->trk[i].fresh = 0;
		emit(&o, arg);
	}
	/* a failed dump keeps the last view (the flows do not vanish on one
	 * transient error) but says so */
	return rc < 0 ? rc : (int)q->ntrk;
}

static void qs_close(struct flow_src *s)
{
	qs_free(s->priv);
	s->priv = NULL;
}

static struct json_object *qp_json(const struct qtrk *t)
{
	const struct flow_rdmaqp_qp *q = &t->q;
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "device", q->dev_name);
	jx_add_u64(o, "port", q->port);
	jx_add_u64(o, "lqpn", q->lqpn);
	if (q->have & FLOW_RDMAQP_HAVE_RQPN)
		jx_add_u64(o, "rqpn", q->rqpn);
	jx_add_str(o, "type", flow_rdmaqp_type_name(q->type));
	jx_add_str(o, "state", flow_rdmaqp_state_name(q->state));
	if (q->have & FLOW_RDMAQP_HAVE_SQ_PSN)
		jx_add_u64(o, "sq_psn", q->sq_psn);
	if (q->have & FLOW_RDMAQP_HAVE_RQ_PSN)
		jx_add_u64(o, "rq_psn", q->rq_psn);
	if (q->have & FLOW_RDMAQP_HAVE_PID)
		jx_add_u64(o, "pid", q->pid);
	if (q->kern_name[0])
		jx_add_str(o, "kernel_owner", q->kern_name);
	jx_add_u64(o, "psns_sent", t->t.sq_acc);
	jx_add_u64(o, "psns_received", t->t.rq_acc);
	jx_add_str(o, "verdict", flow_live_name((enum flow_live)t->t.live.verdict));
	return o;
}

/* The dump entries of the involved QPs, and of every QP of the device in
 * a state that is not RTS (ERR and SQE first of all). */
static int qs_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg)
{
	struct qsrc *q = s->priv;
	struct json_object *inv = json_object_new_array(), *odd = json_object_new_array();

	(void)when;
	(void)done;
	(void)arg;
	for (unsigned i = 0; q && i < q->ntrk; i++) {
		int mine = 0;

		for (unsigned r = 0; r < n; r++)
			mine |= refs[r].src == FLOW_SRC_RDMAQP && refs[r].session == q->trk[i].o.session;
		if (mine)
			json_object_array_add(inv, qp_json(&q->trk[i]));
		else if (q->trk[i].q.state != FLOW_QPS_RTS && json_object_array_length(odd) < 64)
			json_object_array_add(odd, qp_json(&q->trk[i]));
	}
	if (q) {
		jx_add_str(out, "device", q->dev);
		jx_add_u64(out, "device_index", q->dev_index);
		jx_add_u64(out, "rdma_port", q->port);
		jx_add_u64(out, "qps", q->ntrk);
	}
	json_object_object_add(out, "involved", inv);
	json_object_object_add(out, "not_rts", odd);
	return 0;
}

static void qs_status(const struct flow_src *s, struct json_object *out)
{
	const struct qsrc *q = s->priv;

	if (!q)
		return;
	jx_add_str(out, "device", q->dev);
	jx_add_u64(out, "device_index", q->dev_index);
	jx_add_u64(out, "rdma_port", q->port);
	if (q->replies[0])
		jx_add_str(out, "replies", q->replies);
	jx_add_ms(out, "interval_ms", q->interval_ns);
	jx_add_u64(out, "qps", q->ntrk);
	jx_add_u64(out, "skipped_entries", q->skipped);
	jx_add_u64(out, "dumps", q->dumps);
	jx_add_u64(out, "errors", q->errors);
	jx_add_double(out, "last_dump_us", (double)q->last_cost_ns / 1e3);
	jx_add_double(out, "mean_dump_us", q->dumps ? (double)q->cost_ns / 1e3 / (double)q->dumps : 0);
}

const struct flow_src_ops flow_src_rdmaqp_ops = {
	.name = "rdmaqp",
	.may_sleep = 1,         /* a QP dump is a firmware command per QP on mlx5 */
	.kind = FLOW_SRC_RDMAQP,
	.host = 0,
	.open = qs_open,
	.poll = qs_poll,
	.status = qs_status,
	.evidence = qs_evidence,
	.close = qs_close,
};
