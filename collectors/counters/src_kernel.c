/* src_kernel: qdisc and softnet drops (see src_kernel.h). */
#include "collectors/counters/src_kernel.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

enum { K_QDROPS, K_QOVER, K_QREQ, K_SNDROP, K_SNSQUEEZE, K_N };
static const char *const knames[K_N] = {
	"qdisc/drops", "qdisc/overlimits", "qdisc/requeues",
	"softnet/dropped", "softnet/time_squeeze",
};

struct kern {
	struct nl_sock *ns;
	int ifindex;
	int softnet_fd;                 /* -1: not readable */
	char what[160];
	struct clayout *lay;
	uint64_t vals[K_N];
	uint64_t q[3];                  /* this read's qdisc sums */
	unsigned nq;
	char req[128] __attribute__((aligned(8)));
	char buf[16384];
};

static const struct nl_pol q_pol[TCA_MAX + 1] = {
	[TCA_KIND] = { MNL_TYPE_NUL_STRING, 0 },
	[TCA_STATS] = { MNL_TYPE_BINARY, sizeof(struct tc_stats) },
	[TCA_STATS2] = { MNL_TYPE_NESTED, 0 },
};
static const struct nl_pol st_pol[TCA_STATS_MAX + 1] = {
	[TCA_STATS_QUEUE] = { MNL_TYPE_BINARY, sizeof(struct gnet_stats_queue) },
};

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TCA_MAX + 1] = { 0 }, *ts[TCA_STATS_MAX + 1] = { 0 };
	struct nl_tb t = { q_pol, TCA_MAX, tb }, t2 = { st_pol, TCA_STATS_MAX, ts };
	struct kern *k = data;
	const struct tcmsg *tc;

	if (nlh->nlmsg_type != RTM_NEWQDISC)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*tc)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	tc = mnl_nlmsg_get_payload(nlh);
	/* the root (and ingress/clsact) qdiscs only: a classful or multiqueue
	 * root already counts what its children drop (mq_dump() sums them,
	 * htb_enqueue() counts a child's drop on the root) */
	if (tc->tcm_ifindex != k->ifindex ||
	    (tc->tcm_parent != TC_H_ROOT && tc->tcm_parent != TC_H_INGRESS))
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*tc), nl_attr_cb, &t) < 0)
		return MNL_CB_ERROR;
	if (tb[TCA_STATS2] && mnl_attr_parse_nested(tb[TCA_STATS2], nl_attr_cb, &t2) >= 0 &&
	    ts[TCA_STATS_QUEUE]) {
		struct gnet_stats_queue q;

		memcpy(&q, mnl_attr_get_payload(ts[TCA_STATS_QUEUE]), sizeof(q));
		k->q[0] += q.drops;
		k->q[1] += q.overlimits;
		k->q[2] += q.requeues;
	} else if (tb[TCA_STATS]) {
		struct tc_stats st;

		memcpy(&st, mnl_attr_get_payload(tb[TCA_STATS]), sizeof(st));
		k->q[0] += st.drops;
		k->q[1] += st.overlimits;
	}
	k->nq++;
	return MNL_CB_OK;
}

int src_kernel_parse_softnet(const char *text, size_t len, uint64_t *dropped,
			     uint64_t *squeezed, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned line = 0;

	*dropped = *squeezed = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		unsigned long long w[3];
		char l[512];
		int c = 0;

		line++;
		if (n) {
			if (n >= sizeof(l)) {
				util_errf(err, errlen, "softnet_stat line %u: too long", line);
				return -EINVAL;
			}
			memcpy(l, p, n);
			l[n] = 0;
			if (sscanf(l, "%llx %llx %llx%n", &w[0], &w[1], &w[2], &c) != 3) {
				util_errf(err, errlen, "softnet_stat line %u: not three hex words", line);
				return -EINVAL;
			}
			*dropped += w[1];
			*squeezed += w[2];
		}
		p += n + 1;
	}
	return 0;
}

static void read_softnet(struct kern *k, struct src *s)
{
	char e[160];
	ssize_t n;

	if (k->softnet_fd < 0)
		return;
	n = pread(k->softnet_fd, k->buf, sizeof(k->buf) - 1, 0);
	if (n < 0 || src_kernel_parse_softnet(k->buf, (size_t)n, &k->vals[K_SNDROP],
					      &k->vals[K_SNSQUEEZE], e, sizeof(e)) < 0)
		util_errf(s->err, sizeof(s->err), "/proc/net/softnet_stat: %s",
			  n < 0 ? strerror(errno) : e);
}

static int kern_open(struct src *s, const struct src_ctx *ctx)
{
	struct nlmsghdr *nlh;
	struct tcmsg *tc;
	struct kern *k;
	char nsd[128];

	s->err[0] = 0;
	if (!ctx || ctx->ifindex <= 0) {
		util_errf(s->err, sizeof(s->err), "kernel drops: no interface index");
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		util_errf(s->err, sizeof(s->err), "kernel drops: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	k->ifindex = ctx->ifindex;
	util_errf(k->what, sizeof(k->what), "qdisc stats of ifindex %d in %s", k->ifindex,
		  nl_ns_desc(ctx->netns_fd, nsd, sizeof(nsd)));
	k->ns = nl_sock_open(ctx->netns_fd, NETLINK_ROUTE, 0, s->err, sizeof(s->err));
	if (!k->ns) {
		int e = errno ? errno : EIO;

		free(k);
		return -e;
	}
	k->softnet_fd = open("/proc/net/softnet_stat", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	k->lay = clayout_new(K_N, knames, NULL);
	if (!k->lay) {
		nl_sock_close(k->ns);
		if (k->softnet_fd >= 0)
			close(k->softnet_fd);
		free(k);
		return -ENOMEM;
	}
	nlh = mnl_nlmsg_put_header(k->req);
	nlh->nlmsg_type = RTM_GETQDISC;
	tc = mnl_nlmsg_put_extra_header(nlh, sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = k->ifindex;   /* tc_dump_qdisc() dumps only this device */
	s->ops = &src_kernel_ops;
	s->priv = k;
	return 0;
}

static int kern_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct kern *k = s->priv;
	struct nlmsghdr *nlh = (struct nlmsghdr *)k->req;
	int rc;

	s->err[0] = 0;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	memset(k->q, 0, sizeof(k->q));
	k->nq = 0;
	rc = nl_sock_request(k->ns, nlh, qdisc_cb, k, k->what, s->err, sizeof(s->err));
	if (rc < 0)
		return rc;
	k->vals[K_QDROPS] = k->q[0];
	k->vals[K_QOVER] = k->q[1];
	k->vals[K_QREQ] = k->q[2];
	read_softnet(k, s);
	*lay = k->lay;
	*vals = k->vals;
	return 0;
}

static void kern_close(struct src *s)
{
	struct kern *k = s->priv;

	if (!k)
		return;
	nl_sock_close(k->ns);
	if (k->softnet_fd >= 0)
		close(k->softnet_fd);
	clayout_unref(k->lay);
	free(k);
	s->priv = NULL;
}

const struct src_ops src_kernel_ops = {
	.name = "kernel",
	.open = kern_open,
	.read = kern_read,
	.close = kern_close,
};
