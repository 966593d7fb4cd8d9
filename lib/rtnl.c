/* rtnl: links, neighbours, addresses and the link monitor over rtnetlink,
 * on lib/nl's request path. Every reply is checked there; attributes go
 * through nl_attr_cb with the policy tables below. */
#include "lib/rtnl.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef RTEXT_FILTER_SKIP_STATS
#define RTEXT_FILTER_SKIP_STATS (1 << 3)
#endif

/* ---- links ---- */

static const struct nl_pol link_pol[IFLA_MAX + 1] = {
	[IFLA_IFNAME] = { MNL_TYPE_NUL_STRING, 0 },
	[IFLA_MTU] = { MNL_TYPE_U32, 0 },
	[IFLA_OPERSTATE] = { MNL_TYPE_U8, 0 },
	[IFLA_MASTER] = { MNL_TYPE_U32, 0 },
	[IFLA_LINKINFO] = { MNL_TYPE_NESTED, 0 },
	[IFLA_ADDRESS] = { MNL_TYPE_BINARY, 0 },
	[IFLA_PROMISCUITY] = { MNL_TYPE_U32, 0 },
};

static const struct nl_pol linkinfo_pol[IFLA_INFO_MAX + 1] = {
	[IFLA_INFO_KIND] = { MNL_TYPE_NUL_STRING, 0 },
};

/* Parse one RTM_NEWLINK/RTM_DELLINK. 0 or -errno (EBADMSG). */
static int link_parse(const struct nlmsghdr *nlh, struct nl_link *l)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	const struct nlattr *ti[IFLA_INFO_MAX + 1] = { 0 };
	struct nl_tb t = { link_pol, IFLA_MAX, tb };
	struct nl_tb ti_t = { linkinfo_pol, IFLA_INFO_MAX, ti };
	const struct ifinfomsg *ifi;
	const char *name;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return -EBADMSG;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index <= 0)
		return -EBADMSG;
	if (mnl_attr_parse(nlh, sizeof(*ifi), nl_attr_cb, &t) < 0)
		return -EBADMSG;
	if (!tb[IFLA_IFNAME])
		return -EBADMSG;
	name = mnl_attr_get_str(tb[IFLA_IFNAME]);
	if (!*name || strlen(name) >= sizeof(l->ifname))
		return -EBADMSG;

	memset(l, 0, sizeof(*l));
	l->ifindex = ifi->ifi_index;
	memcpy(l->ifname, name, strlen(name) + 1);
	l->flags = ifi->ifi_flags;
	l->operstate = tb[IFLA_OPERSTATE] ? mnl_attr_get_u8(tb[IFLA_OPERSTATE]) : 0;
	l->mtu = tb[IFLA_MTU] ? mnl_attr_get_u32(tb[IFLA_MTU]) : 0;
	if (tb[IFLA_MASTER]) {
		uint32_t m = mnl_attr_get_u32(tb[IFLA_MASTER]);

		l->master = m > (uint32_t)INT32_MAX ? 0 : (int)m;
	}
	if (tb[IFLA_ADDRESS]) {
		unsigned n = mnl_attr_get_payload_len(tb[IFLA_ADDRESS]);

		if (n > sizeof(l->addr))
			n = sizeof(l->addr);
		memcpy(l->addr, mnl_attr_get_payload(tb[IFLA_ADDRESS]), n);
		l->addr_len = n;
	}
	if (tb[IFLA_PROMISCUITY]) {
		l->promiscuity = mnl_attr_get_u32(tb[IFLA_PROMISCUITY]);
		l->have_promiscuity = 1;
	}
	if (tb[IFLA_LINKINFO] &&
	    mnl_attr_parse_nested(tb[IFLA_LINKINFO], nl_attr_cb, &ti_t) >= 0 &&
	    ti[IFLA_INFO_KIND])
		snprintf(l->kind, sizeof(l->kind), "%s",
			 mnl_attr_get_str(ti[IFLA_INFO_KIND]));
	return 0;
}

int nl_link_parse_buf(const void *buf, size_t len, struct nl_link *out, unsigned max,
		      unsigned *n)
{
	const struct nlmsghdr *nlh = buf;
	int left = (int)len;

	*n = 0;
	if (len > INT32_MAX || nl_msgs_check(buf, len) < 0)
		return -EBADMSG;
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
			continue;
		if (*n < max && link_parse(nlh, &out[*n]) == 0)
			(*n)++;
	}
	return 0;
}

struct link_get_ctx {
	struct nl_link *out;
	int ifindex;
	int found;
	int bad;
};

static int link_get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_get_ctx *c = data;
	struct nl_link l;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	if (link_parse(nlh, &l) < 0) {
		c->bad = 1;
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (c->ifindex && l.ifindex != c->ifindex)
		return MNL_CB_OK;
	*c->out = l;
	c->found = 1;
	return MNL_CB_OK;
}

static void link_what(char *what, size_t len, const char *verb, int nsfd,
		      const char *ifname, int ifindex)
{
	char nsd[128] = "its socket's netns";

	if (nsfd >= -1)
		nl_ns_desc(nsfd, nsd, sizeof(nsd));
	if (ifindex)
		util_errf(what, len, "%s link ifindex %d in %s", verb, ifindex, nsd);
	else
		util_errf(what, len, "%s link %s in %s", verb, ifname ? ifname : "?",
			  nsd);
}

/* One request on a short-lived socket in the namespace (rare calls, not
 * the sampling path). */
static int nl_oneshot(int nsfd, struct nlmsghdr *nlh, mnl_cb_t cb, void *arg,
		      const char *what, char *err, size_t errlen)
{
	struct nl_sock *ns = nl_sock_open(nsfd, NETLINK_ROUTE, 0, err, errlen);
	int rc;

	if (!ns)
		return -(errno ? errno : EIO);
	rc = nl_sock_request(ns, nlh, cb, arg, what, err, errlen);
	nl_sock_close(ns);
	return rc;
}

/* RTM_GETLINK of one link on ns (nsfd -2), or on a socket of its own in
 * nsfd. */
static int link_get(struct nl_sock *ns, int nsfd, const char *ifname,
		    int ifindex, struct nl_link *out, char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct link_get_ctx c = { .out = out, .ifindex = ifindex };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	char what[256];
	int rc;

	link_what(what, sizeof(what), "get", nsfd, ifname, ifindex);
	if (!out || ifindex < 0 ||
	    (!ifindex && (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ))) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	/* libmnl before 1.0.5 leaves an attribute's padding as it was: the
	 * kernel would be sent stack bytes (valgrind: sendto points to
	 * uninitialised bytes). The request is under 64 bytes. */
	memset(req, 0, 256);
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (!ifindex)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	if (ns)
		rc = nl_sock_request(ns, nlh, link_get_cb, &c, what, err, errlen);
	else
		rc = nl_oneshot(nsfd, nlh, link_get_cb, &c, what, err, errlen);
	if (rc < 0)
		return rc;
	if (!c.found) {
		util_errf(err, errlen, "%s: %s", what, strerror(ENODEV));
		return -ENODEV;
	}
	return 0;
}

int nl_link_get(int nsfd, const char *ifname, int ifindex, struct nl_link *out,
		char *err, size_t errlen)
{
	return link_get(NULL, nsfd, ifname, ifindex, out, err, errlen);
}

int nl_link_query(struct nl_sock *ns, const char *ifname, int ifindex,
		  struct nl_link *out, char *err, size_t errlen)
{
	if (!ns) {
		util_errf(err, errlen, "get link: no socket");
		return -EINVAL;
	}
	return link_get(ns, -2, ifname, ifindex, out, err, errlen);
}

int nl_link_set_flags(int nsfd, int ifindex, unsigned flags, unsigned change,
		      char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	char what[256];
	int rc;

	link_what(what, sizeof(what), "set flags of", nsfd, NULL, ifindex);
	if (ifindex <= 0) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags & change;
	ifi->ifi_change = change;
	rc = nl_oneshot(nsfd, nlh, NULL, NULL, what, err, errlen);
	return rc;
}

/* ---- link monitor ---- */

struct nl_mon {
	struct nl_sock *ns;
	int nsfd;                /* our dup, -1 for the own namespace */
	void (*cb)(const struct nl_link *l, int event, void *arg);
	void *arg;
	int events;
};

struct nl_mon *nl_mon_open(int nsfd, char *err, size_t errlen)
{
	struct nl_mon *m = calloc(1, sizeof(*m));
	char nsd[128];
	int sz = 1 << 20, e;

	if (!m) {
		util_errf(err, errlen, "link monitor in %s: %s",
			  nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(ENOMEM));
		return NULL;
	}
	m->nsfd = -1;
	if (nsfd >= 0) {
		m->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3);
		if (m->nsfd < 0) {
			e = errno;
			util_errf(err, errlen, "link monitor in %s: dup: %s",
				  nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
			free(m);
			errno = e;
			return NULL;
		}
	}
	m->ns = nl_sock_open(nsfd, NETLINK_ROUTE,
			     RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR, err, errlen);
	if (!m->ns) {
		e = errno;
		nl_mon_close(m);
		errno = e;
		return NULL;
	}
	/* A bigger buffer makes overruns rare; they are still handled. */
	setsockopt(nl_sock_fd(m->ns), SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return m;
}

int nl_mon_fd(const struct nl_mon *m)
{
	return m ? nl_sock_fd(m->ns) : -1;
}

static int mon_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_mon *m = data;
	struct nl_link l;
	int ev;

	if (nlh->nlmsg_type == RTM_NEWADDR || nlh->nlmsg_type == RTM_DELADDR) {
		const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);

		/* inet_fill_ifaddr, inet6_fill_ifaddr: an ifaddrmsg first */
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifa))
			return MNL_CB_OK;
		memset(&l, 0, sizeof(l));
		l.ifindex = (int)ifa->ifa_index;
		m->cb(&l, NL_LINK_ADDR, m->arg);
		m->events++;
		return MNL_CB_OK;
	}
	if (nlh->nlmsg_type == RTM_NEWLINK)
		ev = NL_LINK_NEW;
	else if (nlh->nlmsg_type == RTM_DELLINK)
		ev = NL_LINK_DEL;
	else
		return MNL_CB_OK;
	if (link_parse(nlh, &l) < 0)
		return MNL_CB_OK;       /* one bad message: skip it */
	m->cb(&l, ev, m->arg);
	m->events++;
	return MNL_CB_OK;
}

/* After an overrun: tell the caller, then report every link that exists. */
static int mon_resync(struct nl_mon *m)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	char err[256], what[160], nsd[128];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nl_sock *ns;
	int rc;

	m->cb(NULL, NL_LINK_RESYNC, m->arg);
	m->events++;
	ns = nl_sock_open(m->nsfd, NETLINK_ROUTE, 0, err, sizeof(err));
	if (!ns)
		return -(errno ? errno : EIO);
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	snprintf(what, sizeof(what), "link dump in %s",
		 nl_ns_desc(m->nsfd, nsd, sizeof(nsd)));
	rc = nl_sock_request(ns, nlh, mon_cb, m, what, err, sizeof(err));
	nl_sock_close(ns);
	return rc;
}

int nl_mon_dispatch(struct nl_mon *m,
		    void (*cb)(const struct nl_link *l, int event, void *arg),
		    void *arg)
{
	int rc;

	if (!m || !m->ns || !cb)
		return -EINVAL;
	m->cb = cb;
	m->arg = arg;
	m->events = 0;
	/* Multicast: no sequence to match; only the kernel's datagrams. */
	while ((rc = nl_sock_recv_events(m->ns, mon_cb, m)) != 0) {
		if (rc == -ENOBUFS) {
			/* What is still queued predates the loss: drop it, the
			 * dump below supersedes it; events after this point
			 * queue up behind the dump. */
			nl_sock_drain(m->ns);
			rc = mon_resync(m);
			if (rc < 0)
				return rc;
		} else if (rc < 0 && rc != -EBADMSG) {
			return rc;      /* -EBADMSG: that datagram is dropped */
		}
	}
	return m->events;
}

void nl_mon_close(struct nl_mon *m)
{
	if (!m)
		return;
	nl_sock_close(m->ns);
	if (m->nsfd >= 0)
		close(m->nsfd);
	free(m);
}

/* ---- neighbours ---- */

static const struct nl_pol neigh_pol[NDA_MAX + 1] = {
	[NDA_DST] = { MNL_TYPE_BINARY, 0 },
	[NDA_LLADDR] = { MNL_TYPE_BINARY, 0 },
};

static void hex_text(char *out, size_t len, const uint8_t *p, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o + 3 < len; i++)
		o += (size_t)snprintf(out + o, len - o, i ? ":%02x" : "%02x", p[i]);
}

static void addr_text(char *out, size_t len, int family, const void *p,
		      size_t n)
{
	if ((family == AF_INET && n == 4) || (family == AF_INET6 && n == 16)) {
		if (inet_ntop(family, p, out, (socklen_t)len))
			return;
	}
	hex_text(out, len, p, n);
}

struct neigh_ctx {
	int ifindex;
	void (*cb)(const struct nl_neigh *n, void *arg);
	void *arg;
};

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[NDA_MAX + 1] = { 0 };
	struct nl_tb t = { neigh_pol, NDA_MAX, tb };
	struct neigh_ctx *c = data;
	const struct ndmsg *nd;
	struct nl_neigh n;

	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*nd)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	nd = mnl_nlmsg_get_payload(nlh);
	/* IP neighbours only: AF_UNSPEC dumps also bring bridge fdb entries. */
	if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6)
		return MNL_CB_OK;
	if (c->ifindex && nd->ndm_ifindex != c->ifindex)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*nd), nl_attr_cb, &t) < 0)
		return MNL_CB_ERROR;
	memset(&n, 0, sizeof(n));
	n.ifindex = nd->ndm_ifindex;
	n.family = nd->ndm_family;
	n.state = nd->ndm_state;
	n.flags = nd->ndm_flags;
	if (tb[NDA_DST])
		addr_text(n.addr, sizeof(n.addr), n.family,
			  mnl_attr_get_payload(tb[NDA_DST]),
			  mnl_attr_get_payload_len(tb[NDA_DST]));
	if (tb[NDA_LLADDR])
		hex_text(n.lladdr, sizeof(n.lladdr),
			 mnl_attr_get_payload(tb[NDA_LLADDR]),
			 mnl_attr_get_payload_len(tb[NDA_LLADDR]));
	c->cb(&n, c->arg);
	return MNL_CB_OK;
}

int nl_neigh_dump(int nsfd, int ifindex,
		  void (*cb)(const struct nl_neigh *n, void *arg), void *arg,
		  char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct neigh_ctx c = { ifindex, cb, arg };
	char what[200], nsd[128];
	struct nlmsghdr *nlh;
	struct ndmsg *nd;
	int rc;

	snprintf(what, sizeof(what), "neighbour dump (ifindex %d) in %s", ifindex,
		 nl_ns_desc(nsfd, nsd, sizeof(nsd)));
	if (!cb || ifindex < 0) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_UNSPEC;
	if (ifindex)
		mnl_attr_put_u32(nlh, NDA_IFINDEX, (uint32_t)ifindex);
	rc = nl_oneshot(nsfd, nlh, neigh_cb, &c, what, err, errlen);
	return rc;
}

const char *nl_neigh_state_str(unsigned state)
{
	static const struct { unsigned bit; const char *name; } st[] = {
		{ NUD_INCOMPLETE, "INCOMPLETE" }, { NUD_REACHABLE, "REACHABLE" },
		{ NUD_STALE, "STALE" }, { NUD_DELAY, "DELAY" },
		{ NUD_PROBE, "PROBE" }, { NUD_FAILED, "FAILED" },
		{ NUD_NOARP, "NOARP" }, { NUD_PERMANENT, "PERMANENT" },
	};
	static __thread char buf[128];
	size_t o = 0;

	if (state == NUD_NONE)
		return "NONE";
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		if (state == st[i].bit)
			return st[i].name;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		if (!(state & st[i].bit))
			continue;
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s",
				      o ? "|" : "", st[i].name);
		state &= ~st[i].bit;
	}
	if (state)
		snprintf(buf + o, sizeof(buf) - o, "%s0x%x", o ? "|" : "", state);
	return buf;
}

/* ---- addresses ---- */

static const struct nl_pol addr_pol[IFA_MAX + 1] = {
	[IFA_ADDRESS] = { MNL_TYPE_BINARY, 0 },
	[IFA_LOCAL] = { MNL_TYPE_BINARY, 0 },
};

struct addr_ctx {
	int ifindex;
	void (*cb)(int family, const char *addr_text, unsigned prefixlen,
		   void *arg);
	void *arg;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFA_MAX + 1] = { 0 };
	struct nl_tb t = { addr_pol, IFA_MAX, tb };
	struct addr_ctx *c = data;
	const struct ifaddrmsg *ifa;
	const struct nlattr *a;
	char text[64];
	size_t n;

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifa)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	ifa = mnl_nlmsg_get_payload(nlh);
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return MNL_CB_OK;
	if (c->ifindex && (int)ifa->ifa_index != c->ifindex)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*ifa), nl_attr_cb, &t) < 0)
		return MNL_CB_ERROR;
	/* IFA_LOCAL is the own address; IFA_ADDRESS the peer on p2p links. */
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!a)
		return MNL_CB_OK;
	n = mnl_attr_get_payload_len(a);
	if (n != (ifa->ifa_family == AF_INET ? 4u : 16u)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	addr_text(text, sizeof(text), ifa->ifa_family, mnl_attr_get_payload(a), n);
	c->cb(ifa->ifa_family, text, ifa->ifa_prefixlen, c->arg);
	return MNL_CB_OK;
}

int nl_addr_dump(int nsfd, int ifindex,
		 void (*cb)(int family, const char *addr_text,
			    unsigned prefixlen, void *arg),
		 void *arg, char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct addr_ctx c = { ifindex, cb, arg };
	char what[200], nsd[128];
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	int rc;

	snprintf(what, sizeof(what), "address dump (ifindex %d) in %s", ifindex,
		 nl_ns_desc(nsfd, nsd, sizeof(nsd)));
	if (!cb || ifindex < 0) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_UNSPEC;
	rc = nl_oneshot(nsfd, nlh, addr_cb, &c, what, err, errlen);
	return rc;
}
