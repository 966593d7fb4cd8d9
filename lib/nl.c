/* nl: rtnetlink helpers over libmnl; every socket is made inside the
 * namespace it talks to (netns_socket), so one daemon serves ports in many
 * namespaces. Replies are hostile input: every attribute goes through
 * nl_attr_cb with a policy table, unknown attributes are skipped. */
#include "lib/nl.h"
#include "lib/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define NL_BUFSZ 32768          /* MNL_SOCKET_DUMP_SIZE */
#define NL_DRAIN_MAX 4096       /* recv calls when throwing a reply away */

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
#ifndef RTEXT_FILTER_SKIP_STATS
#define RTEXT_FILTER_SKIP_STATS (1 << 3)
#endif

struct nl_sock {
	struct mnl_socket *sk;
	unsigned portid;
	unsigned seq;
	char buf[NL_BUFSZ] __attribute__((aligned(8)));
};

/* ---- attribute validation ---- */

int nl_attr_cb(const struct nlattr *a, void *data)
{
	const struct nl_tb *t = data;
	unsigned type = mnl_attr_get_type(a);
	const struct nl_pol *p;

	if (type > t->max)
		return MNL_CB_OK;               /* newer kernel: skip */
	p = &t->pol[type];
	if (p->type == MNL_TYPE_UNSPEC)
		return MNL_CB_OK;
	if (p->type == MNL_TYPE_BINARY) {
		if (mnl_attr_get_payload_len(a) < p->minlen) {
			errno = EBADMSG;
			return MNL_CB_ERROR;
		}
	} else if (mnl_attr_validate(a, (enum mnl_attr_data_type)p->type) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	t->tb[type] = a;
	return MNL_CB_OK;
}

/* ---- sockets and requests ---- */

const char *nl_ns_desc(int nsfd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (!buf || !len)
		return "";
	if (nsfd < 0) {
		snprintf(buf, len, "own netns");
		return buf;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", nsfd);
	n = readlink(path, buf, len - 1);
	if (n <= 0) {
		snprintf(buf, len, "netns fd %d", nsfd);
		return buf;
	}
	buf[n] = '\0';
	return buf;
}

struct nl_sock *nl_sock_open(int nsfd, unsigned groups, char *err,
			     size_t errlen)
{
	struct nl_sock *ns;
	char nsd[128];
	int fd, one = 1, e;

	ns = calloc(1, sizeof(*ns));
	if (!ns) {
		snprintf(err, errlen, "rtnetlink socket in %s: %s",
			 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	fd = netns_socket(nsfd, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (fd < 0)
		goto fail;
	ns->sk = mnl_socket_fdopen(fd);
	if (!ns->sk) {
		e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	/* Extended acks and capped acks are optional (old kernels). */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(ns->sk, groups, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	ns->portid = mnl_socket_get_portid(ns->sk);
	ns->seq = (unsigned)time(NULL);
	return ns;
fail:
	e = errno ? errno : EIO;
	snprintf(err, errlen, "rtnetlink socket in %s: %s",
		 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
	nl_sock_close(ns);
	errno = e;
	return NULL;
}

void nl_sock_close(struct nl_sock *ns)
{
	if (!ns)
		return;
	if (ns->sk)
		mnl_socket_close(ns->sk);
	free(ns);
}

struct req_ctx {
	mnl_cb_t cb;
	void *arg;
	int error;               /* positive errno from the kernel, 0 */
	char extack[160];
};

static const struct nl_pol extack_pol[NLMSGERR_ATTR_MAX + 1] = {
	[NLMSGERR_ATTR_MSG] = { MNL_TYPE_NUL_STRING, 0 },
	[NLMSGERR_ATTR_OFFS] = { MNL_TYPE_U32, 0 },
};

/* TLVs of an error or done message start at off in the payload. */
static void extack_parse(const struct nlmsghdr *nlh, size_t off,
			 struct req_ctx *c)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = { 0 };
	struct nl_tb t = { extack_pol, NLMSGERR_ATTR_MAX, tb };
	size_t plen = mnl_nlmsg_get_payload_len(nlh);
	const char *msg;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= plen)
		return;
	if (mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) + off,
				   plen - off, nl_attr_cb, &t) < 0)
		return;
	if (!tb[NLMSGERR_ATTR_MSG])
		return;
	msg = mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]);
	snprintf(c->extack, sizeof(c->extack), "%s", msg);
}

static int ctl_error(const struct nlmsghdr *nlh, void *data)
{
	struct req_ctx *c = data;
	const struct nlmsgerr *e;
	size_t off;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	e = mnl_nlmsg_get_payload(nlh);
	if (e->error == 0)
		return MNL_CB_STOP;             /* the ack */
	c->error = e->error < 0 ? -e->error : e->error;
	if (c->error > 4095)
		c->error = EPROTO;
	if (nlh->nlmsg_flags & NLM_F_CAPPED)
		off = sizeof(*e);
	else
		off = sizeof(e->error) + MNL_ALIGN(e->msg.nlmsg_len);
	extack_parse(nlh, off, c);
	errno = c->error;
	return MNL_CB_ERROR;
}

static int ctl_done(const struct nlmsghdr *nlh, void *data)
{
	struct req_ctx *c = data;
	int v;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return MNL_CB_STOP;
	memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	if (v >= 0)
		return MNL_CB_STOP;
	c->error = -v > 4095 ? EPROTO : -v;
	extack_parse(nlh, sizeof(int), c);
	errno = c->error;
	return MNL_CB_ERROR;
}

static int ctl_noop(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int ctl_overrun(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	errno = ENOSPC;
	return MNL_CB_ERROR;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP] = ctl_noop,
	[NLMSG_ERROR] = ctl_error,
	[NLMSG_DONE] = ctl_done,
	[NLMSG_OVERRUN] = ctl_overrun,
};

static int data_tramp(const struct nlmsghdr *nlh, void *data)
{
	struct req_ctx *c = data;

	return c->cb ? c->cb(nlh, c->arg) : MNL_CB_OK;
}

/* Throw away what is left of an aborted reply so that the next request on
 * this long-lived socket starts clean. */
static void nl_drain(struct nl_sock *ns)
{
	int fd = mnl_socket_get_fd(ns->sk);

	for (int i = 0; i < NL_DRAIN_MAX; i++) {
		ssize_t n = recv(fd, ns->buf, sizeof(ns->buf), MSG_DONTWAIT);

		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (n <= 0)
			break;
	}
}

int nl_sock_request(struct nl_sock *ns, struct nlmsghdr *req, mnl_cb_t cb,
		    void *arg, const char *what, char *err, size_t errlen)
{
	struct req_ctx c = { .cb = cb, .arg = arg };
	unsigned seq;
	ssize_t n;
	int ret, e;

	if (!ns || !req) {
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	seq = ++ns->seq;
	if (!seq)
		seq = ++ns->seq;
	req->nlmsg_seq = seq;
	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (mnl_socket_sendto(ns->sk, req, req->nlmsg_len) < 0) {
		e = errno ? errno : EIO;
		snprintf(err, errlen, "%s: send: %s", what, strerror(e));
		return -e;
	}
	for (;;) {
		errno = 0;
		n = mnl_socket_recvfrom(ns->sk, ns->buf, sizeof(ns->buf));
		if (n < 0) {
			e = errno ? errno : EIO;
			if (e == EINTR)
				continue;
			snprintf(err, errlen, "%s: receive: %s%s", what,
				 strerror(e), e == ENOSPC ? " (reply truncated)" : "");
			nl_drain(ns);
			return -e;
		}
		errno = 0;
		ret = mnl_cb_run2(ns->buf, (size_t)n, seq, ns->portid, data_tramp,
				  &c, ctl_cbs, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0) {
			e = c.error ? c.error : errno ? errno : EPROTO;
			if (c.extack[0])
				snprintf(err, errlen, "%s: %s: %s", what,
					 strerror(e), c.extack);
			else
				snprintf(err, errlen, "%s: %s%s", what, strerror(e),
					 e == ESRCH || e == EPROTO ?
					 " (reply of another request)" : "");
			/* A kernel error ends the reply; anything else may
			 * leave the rest of it queued. */
			if (!c.error)
				nl_drain(ns);
			return -e;
		}
	}
}

/* ---- links ---- */

static const struct nl_pol link_pol[IFLA_MAX + 1] = {
	[IFLA_IFNAME] = { MNL_TYPE_NUL_STRING, 0 },
	[IFLA_MTU] = { MNL_TYPE_U32, 0 },
	[IFLA_OPERSTATE] = { MNL_TYPE_U8, 0 },
	[IFLA_MASTER] = { MNL_TYPE_U32, 0 },
	[IFLA_LINKINFO] = { MNL_TYPE_NESTED, 0 },
	[IFLA_ADDRESS] = { MNL_TYPE_BINARY, 0 },
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
	if (tb[IFLA_LINKINFO] &&
	    mnl_attr_parse_nested(tb[IFLA_LINKINFO], nl_attr_cb, &ti_t) >= 0 &&
	    ti[IFLA_INFO_KIND])
		snprintf(l->kind, sizeof(l->kind), "%s",
			 mnl_attr_get_str(ti[IFLA_INFO_KIND]));
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
	char nsd[128];

	nl_ns_desc(nsfd, nsd, sizeof(nsd));
	if (ifindex)
		snprintf(what, len, "%s link ifindex %d in %s", verb, ifindex, nsd);
	else
		snprintf(what, len, "%s link %s in %s", verb, ifname ? ifname : "?",
			 nsd);
}

/* One request on a short-lived socket in the namespace (rare calls, not
 * the sampling path). */
static int nl_oneshot(int nsfd, struct nlmsghdr *nlh, mnl_cb_t cb, void *arg,
		      const char *what, char *err, size_t errlen)
{
	struct nl_sock *ns = nl_sock_open(nsfd, 0, err, errlen);
	int rc;

	if (!ns)
		return -(errno ? errno : EIO);
	rc = nl_sock_request(ns, nlh, cb, arg, what, err, errlen);
	nl_sock_close(ns);
	return rc;
}

int nl_link_get(int nsfd, const char *ifname, int ifindex, struct nl_link *out,
		char *err, size_t errlen)
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
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (!ifindex)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	rc = nl_oneshot(nsfd, nlh, link_get_cb, &c, what, err, errlen);
	if (rc < 0)
		return rc;
	if (!c.found) {
		snprintf(err, errlen, "%s: %s", what, strerror(ENODEV));
		return -ENODEV;
	}
	return 0;
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
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
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
	int fd, fl, sz = 1 << 20, e;

	if (!m) {
		snprintf(err, errlen, "link monitor in %s: %s",
			 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(ENOMEM));
		return NULL;
	}
	m->nsfd = -1;
	if (nsfd >= 0) {
		m->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3);
		if (m->nsfd < 0) {
			e = errno;
			snprintf(err, errlen, "link monitor in %s: dup: %s",
				 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
			free(m);
			errno = e;
			return NULL;
		}
	}
	m->ns = nl_sock_open(nsfd, RTMGRP_LINK, err, errlen);
	if (!m->ns) {
		e = errno;
		nl_mon_close(m);
		errno = e;
		return NULL;
	}
	fd = mnl_socket_get_fd(m->ns->sk);
	/* A bigger buffer makes overruns rare; they are still handled. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		e = errno;
		snprintf(err, errlen, "link monitor in %s: O_NONBLOCK: %s",
			 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
		nl_mon_close(m);
		errno = e;
		return NULL;
	}
	return m;
}

int nl_mon_fd(const struct nl_mon *m)
{
	return m && m->ns ? mnl_socket_get_fd(m->ns->sk) : -1;
}

static int mon_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_mon *m = data;
	struct nl_link l;
	int ev;

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
	ns = nl_sock_open(m->nsfd, 0, err, sizeof(err));
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
	int fd, rc;

	if (!m || !m->ns || !cb)
		return -EINVAL;
	fd = mnl_socket_get_fd(m->ns->sk);
	m->cb = cb;
	m->arg = arg;
	m->events = 0;
	for (;;) {
		ssize_t n = recv(fd, m->ns->buf, sizeof(m->ns->buf), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				/* What is still queued predates the loss: drop
				 * it, the dump below supersedes it; events after
				 * this point queue up behind the dump. */
				nl_drain(m->ns);
				rc = mon_resync(m);
				if (rc < 0)
					return rc;
				continue;
			}
			return -errno;
		}
		if (n == 0)
			break;
		/* Multicast: no sequence to match; portid 0 is the kernel. */
		mnl_cb_run(m->ns->buf, (size_t)n, 0, 0, mon_cb, m);
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
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
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
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
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
