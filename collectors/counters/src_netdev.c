/* src_netdev: IFLA_STATS64 of one link over a long-lived rtnetlink socket
 * made inside the port's namespace. */
#include "collectors/counters/src_netdev.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

/* struct rtnl_link_stats64, in order; the kernel sends a prefix of it. */
static const char *const stats64_names[] = {
	"rx_packets", "tx_packets", "rx_bytes", "tx_bytes",
	"rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
	"multicast", "collisions",
	"rx_length_errors", "rx_over_errors", "rx_crc_errors",
	"rx_frame_errors", "rx_fifo_errors", "rx_missed_errors",
	"tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",
	"tx_heartbeat_errors", "tx_window_errors",
	"rx_compressed", "tx_compressed",
	"rx_nohandler",
	"rx_otherhost_dropped",
};
#define NF (sizeof(stats64_names) / sizeof(stats64_names[0]))
#define NF_MIN 23u      /* fields every kernel with IFLA_STATS64 sends */
/* The link's carrier counts (IFLA_CARRIER_CHANGES since 3.15, the up and
 * down counts since 4.19: linkwatch's __linkwatch_run_queue counts each
 * carrier transition netif_carrier_on/off made): a link that went down and
 * came back inside a stall (link-flap), after the stats, when sent. */
static const char *const carrier_names[] = {
	"carrier_changes", "carrier_up_count", "carrier_down_count",
};
#define NC (sizeof(carrier_names) / sizeof(carrier_names[0]))

struct netdev {
	struct nl_sock *ns;
	char ifname[IFNAMSIZ];
	int ifindex;
	struct clayout *lay;
	uint64_t vals[NF + NC];
	unsigned got;            /* fields in the last reply, 0: none */
	unsigned carrier;        /* which carrier counts it had (bit i: carrier_names[i]) */
	unsigned lay_got, lay_carrier;  /* what lay was made for */
	int bad;                 /* reply failed validation */
	char what[224];
	char req[256] __attribute__((aligned(8)));
};

static const struct nl_pol stats_pol[IFLA_MAX + 1] = {
	[IFLA_IFNAME] = { MNL_TYPE_NUL_STRING, 0 },
	[IFLA_STATS64] = { MNL_TYPE_BINARY, NF_MIN * 8 },
	[IFLA_CARRIER_CHANGES] = { MNL_TYPE_U32, 0 },
	[IFLA_CARRIER_UP_COUNT] = { MNL_TYPE_U32, 0 },
	[IFLA_CARRIER_DOWN_COUNT] = { MNL_TYPE_U32, 0 },
};

static int netdev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	struct nl_tb t = { stats_pol, IFLA_MAX, tb };
	struct netdev *d = data;
	const struct ifinfomsg *ifi;
	const uint8_t *p;
	size_t len;
	unsigned n;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi)) {
		d->bad = 1;
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	ifi = mnl_nlmsg_get_payload(nlh);
	if (d->ifindex && ifi->ifi_index != d->ifindex)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*ifi), nl_attr_cb, &t) < 0) {
		d->bad = 1;
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!tb[IFLA_STATS64]) {
		d->bad = 2;
		errno = EOPNOTSUPP;
		return MNL_CB_ERROR;
	}
	len = mnl_attr_get_payload_len(tb[IFLA_STATS64]);
	n = len / 8 < NF ? (unsigned)(len / 8) : (unsigned)NF;
	p = mnl_attr_get_payload(tb[IFLA_STATS64]);
	memcpy(d->vals, p, (size_t)n * 8);      /* attributes are 4-aligned */
	d->got = n;
	d->carrier = 0;
	{
		static const int attr[NC] = { IFLA_CARRIER_CHANGES, IFLA_CARRIER_UP_COUNT,
					      IFLA_CARRIER_DOWN_COUNT };

		for (unsigned i = 0; i < NC; i++)
			if (tb[attr[i]]) {
				d->vals[n + __builtin_popcount(d->carrier)] = mnl_attr_get_u32(tb[attr[i]]);
				d->carrier |= 1u << i;
			}
	}
	return MNL_CB_OK;
}

static int netdev_open(struct src *s, const struct src_ctx *ctx)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct netdev *d;
	char nsd[128];

	s->err[0] = '\0';
	s->priv = NULL;
	if (!ctx || (!ctx->ifindex && (!ctx->ifname || !*ctx->ifname)) ||
	    (ctx->ifname && strlen(ctx->ifname) >= IFNAMSIZ) || ctx->ifindex < 0) {
		util_errf(s->err, sizeof(s->err), "netdev stats: bad interface %s",
			  ctx && ctx->ifname ? ctx->ifname : "(none)");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		util_errf(s->err, sizeof(s->err), "netdev stats of %s: %s",
			  ctx->ifname ? ctx->ifname : "?", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (ctx->ifname)
		snprintf(d->ifname, sizeof(d->ifname), "%s", ctx->ifname);
	d->ifindex = ctx->ifindex;
	nl_ns_desc(ctx->netns_fd, nsd, sizeof(nsd));
	if (d->ifindex)
		util_errf(d->what, sizeof(d->what),
			  "netdev stats of %s (ifindex %d) in %s",
			  d->ifname[0] ? d->ifname : "?", d->ifindex, nsd);
	else
		util_errf(d->what, sizeof(d->what), "netdev stats of %s in %s",
			  d->ifname, nsd);
	d->ns = nl_sock_open(ctx->netns_fd, NETLINK_ROUTE, 0, s->err, sizeof(s->err));
	if (!d->ns) {
		int e = errno ? errno : EIO;

		free(d);
		return -e;
	}
	/* The request never changes: build it once (seq is set per send). */
	nlh = mnl_nlmsg_put_header(d->req);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = d->ifindex;
	if (!d->ifindex)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, d->ifname);
	s->ops = &src_netdev_ops;
	s->priv = d;
	return 0;
}

static int netdev_read(struct src *s, struct clayout **lay,
		       const uint64_t **vals)
{
	struct netdev *d = s->priv;
	struct nlmsghdr *nlh;
	int rc;

	if (!d) {
		util_errf(s->err, sizeof(s->err), "netdev stats: source not open");
		return -EBADF;
	}
	nlh = (struct nlmsghdr *)d->req;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	d->got = 0;
	d->bad = 0;
	rc = nl_sock_request(d->ns, nlh, netdev_cb, d, d->what, s->err,
			     sizeof(s->err));
	if (rc < 0) {
		if (d->bad == 2)
			util_errf(s->err, sizeof(s->err),
				  "%s: no IFLA_STATS64 in the reply", d->what);
		else if (d->bad == 1)
			util_errf(s->err, sizeof(s->err),
				  "%s: malformed reply (short IFLA_STATS64 or bad attribute)",
				  d->what);
		return rc;
	}
	if (!d->got) {
		util_errf(s->err, sizeof(s->err), "%s: %s", d->what,
			  strerror(ENODEV));
		return -ENODEV;
	}
	if (!d->lay || d->lay_got != d->got || d->lay_carrier != d->carrier) {
		const char *names[NF + NC];
		uint8_t width[NF + NC];
		unsigned n = d->got;
		struct clayout *nl;

		for (unsigned i = 0; i < d->got; i++) {
			names[i] = stats64_names[i];
			width[i] = CNT_W64;
		}
		for (unsigned i = 0; i < NC; i++)
			if (d->carrier & (1u << i)) {
				width[n] = CNT_W32;     /* atomic_t in the kernel */
				names[n++] = carrier_names[i];
			}
		nl = clayout_new(n, names, width);

		if (!nl) {
			util_errf(s->err, sizeof(s->err), "%s: layout: %s", d->what,
				  strerror(ENOMEM));
			return -ENOMEM;
		}
		clayout_unref(d->lay);
		d->lay = nl;
		d->lay_got = d->got;
		d->lay_carrier = d->carrier;
	}
	*lay = d->lay;
	*vals = d->vals;
	return 0;
}

static void netdev_close(struct src *s)
{
	struct netdev *d = s->priv;

	if (!d)
		return;
	nl_sock_close(d->ns);
	clayout_unref(d->lay);
	free(d);
	s->priv = NULL;
}

const struct src_ops src_netdev_ops = {
	.name = "netdev",
	.open = netdev_open,
	.read = netdev_read,
	.close = netdev_close,
};
