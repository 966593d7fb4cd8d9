/* emu_link: the port's receive filters as the mlx5 driver applies them.
 * RTM_NEWLINK events of each port's interface (its own RTMGRP_LINK socket)
 * feed the rx-mode model of rxmode.h; the model's deferred work runs on a
 * timerfd, reads the kernel's state through a second (query) socket and,
 * on a real promiscuous transition, clears the port's wedges, as a
 * receive-filter reprogram does on the real port. */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <libmnl/libmnl.h>

#include "emuport.h"

static int link_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, IFLA_MAX) < 0)
		return MNL_CB_OK;
	if (type == IFLA_PROMISCUITY && mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	tb[type] = a;
	return MNL_CB_OK;
}

/* One RTM_NEWLINK of ls->ifindex: the count and the user flag.  ifi_flags
 * comes from netif_get_flags() (net/core/dev.c), which reports IFF_PROMISC
 * from dev->gflags; IFLA_PROMISCUITY is dev->promiscuity, which a packet
 * socket's PACKET_MR_PROMISC (tcpdump) raises without touching the flag. */
static int link_parse_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_state *ls = data;
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	struct ifinfomsg *ifm;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifm)))
		return MNL_CB_OK;
	ifm = mnl_nlmsg_get_payload(nlh);
	if (ifm->ifi_index != ls->ifindex)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, tb);
	ls->flag = !!(ifm->ifi_flags & IFF_PROMISC);
	/* without the attribute (never on 6.x) the flag is all there is */
	ls->promiscuity = tb[IFLA_PROMISCUITY] ? mnl_attr_get_u32(tb[IFLA_PROMISCUITY])
					       : (uint32_t)ls->flag;
	ls->found = 1;
	return MNL_CB_OK;
}

static void rx_clear(struct port *p, const char *why)
{
	int n = clear_wedges(p);

	p->wedges_cleared += (unsigned long)n;
	logx("[%.6f] port %s: %s: receive filters reprogrammed, %d wedge(s) cleared",
	     (double)mono_ns() / 1e9, p->name, why, n);
}

static void rx_arm(struct port *p)
{
	struct itimerspec its = { { 0, 0 }, { (time_t)(p->rx.due_ns / 1000000000ull),
					      (long)(p->rx.due_ns % 1000000000ull) } };

	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;	/* 0 would disarm */
	if (timerfd_settime(p->wfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		logx("port %s: arm the rx-mode work timer: %s", p->name, strerror(errno));
}

/* The kernel's state now (the work's reading), through the query socket. */
int link_read(struct port *p, struct link_state *ls)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	unsigned int seq = ++p->nlq_seq;
	ssize_t n;

	memset(ls, 0, sizeof(*ls));
	ls->ifindex = p->ifindex;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = p->ifindex;
	if (mnl_socket_sendto(p->nlq, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!ls->found && (n = mnl_socket_recvfrom(p->nlq, buf, sizeof(buf))) > 0)
		if (mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(p->nlq),
			       link_parse_cb, ls) < MNL_CB_STOP)
			return -1;
	return ls->found ? 0 : -1;
}

/* mlx5e_set_rx_mode_work() -> mlx5e_fs_set_rx_mode_work(): read
 * netdev->flags & IFF_PROMISC now, act only on a difference from the
 * state applied last. */
static void rx_work(struct port *p)
{
	struct link_state ls;
	struct rxm_run r;
	int changed, ok = link_read(p, &ls) == 0;

	if (!ok) {
		logx("port %s: rx-mode work: read %s: %s (using the last link message)",
		     p->name, p->ifname, strerror(errno));
		ls.promiscuity = p->rx.promiscuity;
		ls.flag = p->rx.flag;
	}
	changed = rxm_run(&p->rx, ls.promiscuity, ls.flag, mono_ns(), &r);
	if (changed < 0)
		return;
	logx("[%.6f] port %s: rx-mode work %lu (queued %.3f ms before, %u more link "
	     "message(s) coalesced): promiscuity %u, flag %s -> promisc %s; applied %s%s",
	     (double)r.at_ns / 1e9, p->name, p->rx.runs, (double)(r.at_ns - r.queued_ns) / 1e6,
	     r.coalesced, r.promiscuity, onoff(r.flag), onoff(r.reading),
	     onoff(r.applied_before), changed ? (r.reading ? ", now on" : ", now off")
					      : ": no change");
	if (changed)
		rx_clear(p, r.reading ? "promiscuous on (rx-mode work)"
				      : "promiscuous off (rx-mode work)");
}

void rx_work_if_due(struct port *p)
{
	if (rxm_due(&p->rx, mono_ns()))
		rx_work(p);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct port *p = data;
	struct link_state ls = { .ifindex = p->ifindex };
	int was_pending = p->rx.pending;

	link_parse_cb(nlh, &ls);
	if (!ls.found)
		return MNL_CB_OK;
	if (rxm_link(&p->rx, ls.promiscuity, ls.flag, mono_ns()) == 1)
		rx_clear(p, p->rx.dev_promisc ? "promiscuous on (instant model)"
					      : "promiscuous off (instant model)");
	if (p->rx.pending && !was_pending && p->rx.delay_ns > 0)
		rx_arm(p);
	return MNL_CB_OK;
}

static int nl_query(struct port *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = p->ifindex;
	return mnl_socket_sendto(p->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

void nl_read(struct port *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	ssize_t n;

	while ((n = mnl_socket_recvfrom(p->nl, buf, sizeof(buf))) > 0)
		mnl_cb_run(buf, (size_t)n, 0, 0, link_cb, p);
	if (n < 0 && errno == ENOBUFS && nl_query(p) < 0)	/* lost events: re-read */
		logx("port %s: rtnetlink overrun, query %s: %s", p->name, p->ifname,
		     strerror(errno));
	rx_work_if_due(p);	/* --rx-mode-delay 0: the work runs now */
}
