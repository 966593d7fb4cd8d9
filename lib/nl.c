/* nl: netlink sockets, the attribute policy callback, requests and the
 * message check. Every socket is made inside the namespace it talks to
 * (netns_socket), so one daemon serves ports in many namespaces. Replies
 * are hostile input: a datagram is checked by nl_msgs_check() before
 * libmnl touches it, and every attribute goes through nl_attr_cb with a
 * policy table (unknown attributes are skipped).
 *
 * Why a request never has to wait (and so never blocks the event loop):
 * a kernel netlink family answers in the context of the sender's
 * sendmsg(). net/netlink/af_netlink.c: netlink_sendmsg() -> netlink_unicast()
 * -> netlink_unicast_kernel() calls the family's input function directly
 * (nlk->netlink_rcv(skb)): rtnetlink_rcv(), genl_rcv(), sock_diag_rcv() and
 * the RDMA core's rdma_nl_rcv() all run netlink_rcv_skb() (or, for RDMA,
 * its copy rdma_nl_rcv_skb()), which calls the handler and then
 * netlink_ack() for NLM_F_ACK or an error, both queueing their skb on our
 * socket with netlink_unicast() before returning. A dump request goes
 * through __netlink_dump_start(), which runs netlink_dump() once itself
 * (the first part is queued before sendmsg returns, and it returns -EINTR
 * so that no ack follows the dump); netlink_recvmsg() then calls
 * netlink_dump() again after each datagram taken off the queue, while a
 * dump runs and the queue holds no more than half of sk_rcvbuf. So by the
 * time sendmsg() has returned, and after each recvmsg(), the next part of
 * the reply is already queued or the reply is complete: an empty queue
 * (EAGAIN) means nothing more is coming. A reply that could not be queued
 * (full receive buffer) shows as ENOBUFS (netlink_overrun()), a dump that
 * failed to continue as the error netlink_recvmsg() sets in sk_err. None of
 * it needs a receive timeout: every receive here is MSG_DONTWAIT, and a
 * request that finds the queue empty before its end fails with ENOMSG. */
#include "lib/nl.h"
#include "lib/netns.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#define NL_BUFSZ 65536          /* > the 32 KiB netlink_dump() fills */
#define NL_DRAIN_MAX 4096       /* datagrams thrown away at the most */
#define NL_FAMILIES 4           /* generic netlink ids cached per socket */

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

struct nl_sock {
	int fd;
	int protocol;
	unsigned groups;
	int nsfd;                /* our dup, -1: where the socket was made */
	unsigned portid;
	unsigned seq;
	int dirty;               /* part of a reply may still be queued */
	int remake;              /* a dump may still run: new socket first */
	struct {
		char name[GENL_NAMSIZ];
		int id;          /* > 0, or -errno */
	} fam[NL_FAMILIES];
	unsigned nfam;
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

/* ---- the message check ---- */

int nl_msgs_check(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t off = 0;
	int n = 0;

	if (!buf || len < NLMSG_HDRLEN)
		return -EBADMSG;
	/* What the kernel itself checks in netlink_rcv_skb(), unsigned. */
	while (len - off >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		size_t step;

		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
			return -EBADMSG;
		step = ((size_t)h.nlmsg_len + NLMSG_ALIGNTO - 1) &
		       ~(size_t)(NLMSG_ALIGNTO - 1);
		/* stricter than the kernel here: libmnl walks attributes up to
		 * the ALIGNED end of a message (mnl_nlmsg_get_payload_tail), so
		 * an unpadded last message would let it read up to 3 bytes past
		 * the buffer (a fuzz crash). The kernel pads every message it
		 * sends (nlmsg_end after padded attributes). */
		if (step > len - off)
			return -EBADMSG;
		off += step;
		n++;
	}
	return off == len ? n : -EBADMSG;
}

/* ---- sockets ---- */

const char *nl_ns_desc(int nsfd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (!buf || !len)
		return "";
	if (nsfd < 0) {
		util_errf(buf, len, "own netns");
		return buf;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", nsfd);
	n = readlink(path, buf, len - 1);
	if (n <= 0) {
		util_errf(buf, len, "netns fd %d", nsfd);
		return buf;
	}
	buf[n] = '\0';
	return buf;
}

static const char *proto_name(int protocol)
{
	switch (protocol) {
	case NETLINK_ROUTE: return "rtnetlink";
	case NETLINK_GENERIC: return "generic netlink";
	case NETLINK_SOCK_DIAG: return "sock_diag";
	case NETLINK_RDMA: return "NETLINK_RDMA";
	default: return "netlink";
	}
}

/* (Re)make the socket. 0 or -errno. */
static int sock_setup(struct nl_sock *ns)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = ns->groups };
	socklen_t sl = sizeof(sa);
	int fd, one = 1, e;

	fd = netns_socket(ns->nsfd, AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, ns->protocol);
	if (fd < 0)
		return -(errno ? errno : EIO);
	/* Extended and capped acks are optional (old kernels). */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 || sl != sizeof(sa)) {
		e = errno ? errno : EINVAL;
		close(fd);
		return -e;
	}
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = fd;
	ns->portid = sa.nl_pid;
	ns->dirty = 0;
	ns->remake = 0;
	return 0;
}

struct nl_sock *nl_sock_open(int nsfd, int protocol, unsigned groups,
			     char *err, size_t errlen)
{
	struct nl_sock *ns = calloc(1, sizeof(*ns));
	char nsd[128];
	int rc;

	nl_ns_desc(nsfd, nsd, sizeof(nsd));
	if (!ns) {
		util_errf(err, errlen, "%s socket in %s: %s", proto_name(protocol),
			  nsd, strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	ns->fd = -1;
	ns->nsfd = -1;
	ns->protocol = protocol;
	ns->groups = groups;
	ns->seq = (unsigned)time(NULL);
	if (nsfd >= 0 && (ns->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0)
		rc = -errno;
	else
		rc = sock_setup(ns);
	if (rc < 0) {
		util_errf(err, errlen, "%s socket in %s: %s", proto_name(protocol),
			  nsd, strerror(-rc));
		nl_sock_close(ns);
		errno = -rc;
		return NULL;
	}
	return ns;
}

void nl_sock_close(struct nl_sock *ns)
{
	if (!ns)
		return;
	if (ns->fd >= 0)
		close(ns->fd);
	if (ns->nsfd >= 0)
		close(ns->nsfd);
	free(ns);
}

int nl_sock_fd(const struct nl_sock *ns)
{
	return ns ? ns->fd : -1;
}

/* One datagram from the kernel, never waiting: its length, 0 when nothing
 * is queued, or -errno (-ENOSPC: it did not fit and is lost). Datagrams
 * from anyone but the kernel (port id 0) are dropped. */
static ssize_t sock_recv(struct nl_sock *ns)
{
	for (;;) {
		struct sockaddr_nl sa;
		struct iovec iov = { ns->buf, sizeof(ns->buf) };
		struct msghdr mh = {
			.msg_name = &sa, .msg_namelen = sizeof(sa),
			.msg_iov = &iov, .msg_iovlen = 1,
		};
		ssize_t n = recvmsg(ns->fd, &mh, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		if (mh.msg_flags & MSG_TRUNC)
			return -ENOSPC;
		if (n == 0 || mh.msg_namelen != sizeof(sa) || sa.nl_pid != 0)
			continue;
		return n;
	}
}

void nl_sock_drain(struct nl_sock *ns)
{
	if (!ns || ns->fd < 0)
		return;
	for (int i = 0; i < NL_DRAIN_MAX; i++) {
		ssize_t n = sock_recv(ns);

		if (n == 0) {
			ns->dirty = 0;
			return;
		}
		if (n < 0 && n != -ENOBUFS && n != -ENOSPC)
			return;
	}
}

int nl_sock_recv_events(struct nl_sock *ns, mnl_cb_t cb, void *arg)
{
	const struct nlmsghdr *nlh;
	ssize_t n;
	int left;

	if (!ns || !cb)
		return -EINVAL;
	n = sock_recv(ns);
	if (n <= 0)
		return (int)n;
	if (nl_msgs_check(ns->buf, (size_t)n) < 0)
		return -EBADMSG;
	left = (int)n;
	for (nlh = (const void *)ns->buf; mnl_nlmsg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
			continue;
		if (cb(nlh, arg) <= MNL_CB_STOP)
			break;
	}
	return 1;
}

/* ---- requests ---- */

struct req_ctx {
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

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= plen)
		return;
	if (mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) + off,
				   plen - off, nl_attr_cb, &t) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		util_errf(c->extack, sizeof(c->extack), "%s",
			  mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
}

/* NLMSG_ERROR: 1 for the ack, or -errno (c->error, c->extack set). */
static int ctl_error(const struct nlmsghdr *nlh, struct req_ctx *c)
{
	const struct nlmsgerr *e;
	size_t off;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	if (e->error == 0)
		return 1;
	c->error = e->error < 0 && e->error > -4096 ? -e->error : EPROTO;
	if (nlh->nlmsg_flags & NLM_F_CAPPED)
		off = sizeof(*e);
	else
		off = sizeof(e->error) + MNL_ALIGN(e->msg.nlmsg_len);
	extack_parse(nlh, off, c);
	return -c->error;
}

/* NLMSG_DONE: 1, or -errno of a dump that failed. */
static int ctl_done(const struct nlmsghdr *nlh, struct req_ctx *c)
{
	int v;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return 1;
	memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	if (v >= 0)
		return 1;
	c->error = v > -4096 ? -v : EPROTO;
	extack_parse(nlh, sizeof(int), c);
	return -c->error;
}

/* Run the messages of one checked datagram: 0 to read on, 1 when the reply
 * is complete, -errno. *stopped: cb ended it early (rest still queued). */
static int run_msgs(struct nl_sock *ns, size_t len, unsigned seq, mnl_cb_t cb,
		    void *arg, struct req_ctx *c, int *stopped)
{
	const struct nlmsghdr *nlh;
	int left = (int)len, rc;

	for (nlh = (const void *)ns->buf; mnl_nlmsg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_seq != seq ||
		    (nlh->nlmsg_pid && nlh->nlmsg_pid != ns->portid))
			continue;       /* an earlier request's tail */
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			continue;
		case NLMSG_ERROR:
			return ctl_error(nlh, c);
		case NLMSG_DONE:
			return ctl_done(nlh, c);
		case NLMSG_OVERRUN:
			return -ENOSPC;
		}
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE || !cb)
			continue;
		errno = 0;
		rc = cb(nlh, arg);
		if (rc == MNL_CB_STOP) {
			*stopped = 1;
			return 1;
		}
		if (rc < MNL_CB_STOP) {
			*stopped = 1;
			return -(errno ? errno : EPROTO);
		}
	}
	return 0;
}

/* Before a request: a socket left in an unknown state is remade, one a
 * cut reply left data in is drained. 0 or -errno with err filled. */
static int sock_ready(struct nl_sock *ns, const char *what, char *err, size_t errlen)
{
	int rc;

	if (ns->remake) {
		/* A dump cut short may still be running (it continues only
		 * when we receive, and refuses the next dump with EBUSY):
		 * closing the socket ends it (netlink_release()). */
		rc = sock_setup(ns);
		if (rc < 0) {
			util_errf(err, errlen, "%s: new %s socket: %s", what,
				  proto_name(ns->protocol), strerror(-rc));
			return rc;
		}
	} else if (ns->dirty) {
		nl_sock_drain(ns);      /* what a cut reply left queued */
	}
	return 0;
}

int nl_sock_request(struct nl_sock *ns, struct nlmsghdr *req, mnl_cb_t cb,
		    void *arg, const char *what, char *err, size_t errlen)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct req_ctx c = { 0 };
	int rc = 0, stopped = 0, dump;
	const char *why = "";
	unsigned seq;
	ssize_t n;

	if (!what)
		what = "netlink request";
	if (!ns || !req || req->nlmsg_len < NLMSG_HDRLEN) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	rc = sock_ready(ns, what, err, errlen);
	if (rc < 0)
		return rc;
	dump = (req->nlmsg_flags & NLM_F_DUMP) != 0;
	seq = ++ns->seq;
	if (!seq)
		seq = ++ns->seq;
	req->nlmsg_seq = seq;
	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	n = sendto(ns->fd, req, req->nlmsg_len, MSG_DONTWAIT,
		   (struct sockaddr *)&kernel, sizeof(kernel));
	if (n != (ssize_t)req->nlmsg_len) {
		rc = n < 0 ? -(errno ? errno : EIO) : -EIO;
		util_errf(err, errlen, "%s: send: %s", what, strerror(-rc));
		return rc;
	}
	while (rc == 0) {
		n = sock_recv(ns);
		if (n == 0) {
			rc = -ENOMSG;
			why = " (nothing queued before the reply ended; "
			      "the kernel answers during sendmsg, so none is coming)";
		} else if (n < 0) {
			rc = (int)n;
			why = rc == -ENOSPC ? " (reply larger than the buffer)" :
			      rc == -ENOBUFS ? " (reply dropped: receive buffer full)" : "";
		} else if (nl_msgs_check(ns->buf, (size_t)n) < 0) {
			rc = -EBADMSG;
			why = " (malformed reply: a message length runs past the datagram)";
		} else {
			rc = run_msgs(ns, (size_t)n, seq, cb, arg, &c, &stopped);
		}
	}
	/* Not ended by the ack, NLMSG_DONE or a kernel error: the rest of the
	 * reply may be queued, or a dump may not have finished. */
	if (stopped || (rc < 0 && !c.error)) {
		if (dump) {
			ns->remake = 1;
		} else {
			ns->dirty = 1;
			nl_sock_drain(ns);
		}
	}
	if (rc > 0)
		return 0;
	if (c.extack[0])
		util_errf(err, errlen, "%s: %s: %s", what, strerror(-rc), c.extack);
	else
		util_errf(err, errlen, "%s: %s%s", what, strerror(-rc), why);
	return rc;
}

/* ---- batches of one-reply requests ---- */

#define NL_SLOT (NL_BUFSZ / NL_BATCH_MAX)

/* One message of a batch reply: which request it answers, and what. */
static int batch_msg(struct nl_sock *ns, const struct nlmsghdr *nlh, unsigned base,
		     unsigned n, uint32_t *done, nl_batch_fn cb, void *arg)
{
	unsigned idx = nlh->nlmsg_seq - base;
	struct req_ctx c = { 0 };
	int rc;

	if (idx >= n || (nlh->nlmsg_pid && nlh->nlmsg_pid != ns->portid) ||
	    (done[idx / 32] & (1u << (idx % 32))))
		return 0;               /* an earlier request's tail, or a second part */
	switch (nlh->nlmsg_type) {
	case NLMSG_NOOP:
	case NLMSG_DONE:
	case NLMSG_OVERRUN:
		return 0;
	case NLMSG_ERROR:
		rc = ctl_error(nlh, &c);
		if (rc == 1)
			return 0;       /* an ack: none was asked for */
		cb(idx, NULL, rc == -EBADMSG ? EBADMSG : c.error, arg);
		break;
	default:
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
			return 0;
		cb(idx, nlh, 0, arg);
	}
	done[idx / 32] |= 1u << (idx % 32);
	return 1;
}

int nl_sock_batch(struct nl_sock *ns, void *reqs, size_t len, unsigned n, nl_batch_fn cb,
		  void *arg, const char *what, char *err, size_t errlen)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK }, from[NL_BATCH_MAX];
	struct mmsghdr mm[NL_BATCH_MAX];
	struct iovec iov[NL_BATCH_MAX];
	uint32_t done[(NL_BATCH_MAX + 31) / 32] = { 0 };
	unsigned base, answered = 0, i;
	const char *why = "";
	size_t off = 0;
	ssize_t sent;
	int rc = 0, overrun = 0;

	if (!what)
		what = "netlink batch";
	if (!ns || !reqs || !cb || !n || n > NL_BATCH_MAX || nl_msgs_check(reqs, len) != (int)n) {
		util_errf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	rc = sock_ready(ns, what, err, errlen);
	if (rc < 0)
		return rc;
	base = ns->seq + 1;
	if (!base || base + n < base)   /* seq 0 is never ours; no wrap inside */
		base = 1;
	ns->seq = base + n - 1;
	for (i = 0; i < n; i++) {
		struct nlmsghdr *h = (struct nlmsghdr *)((char *)reqs + off);

		if (h->nlmsg_flags & (NLM_F_ACK | NLM_F_DUMP)) {
			util_errf(err, errlen, "%s: %s (request %u asks for an ack or a dump)",
				  what, strerror(EINVAL), i);
			return -EINVAL;
		}
		h->nlmsg_seq = base + i;
		h->nlmsg_flags |= NLM_F_REQUEST;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	sent = sendto(ns->fd, reqs, len, MSG_DONTWAIT, (struct sockaddr *)&kernel, sizeof(kernel));
	if (sent != (ssize_t)len) {
		rc = sent < 0 ? -(errno ? errno : EIO) : -EIO;
		util_errf(err, errlen, "%s: send: %s", what, strerror(-rc));
		return rc;
	}
	/* Every reply was queued before sendto() returned; take them. */
	while (answered < n) {
		int got;

		for (i = 0; i < NL_BATCH_MAX; i++) {
			iov[i].iov_base = ns->buf + i * NL_SLOT;
			iov[i].iov_len = NL_SLOT;
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_name = &from[i];
			mm[i].msg_hdr.msg_namelen = sizeof(from[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		got = recvmmsg(ns->fd, mm, NL_BATCH_MAX, MSG_DONTWAIT, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == ENOBUFS && !overrun) {
			/* reported once per overrun; what did fit is still queued */
			overrun = 1;
			why = " (replies dropped: receive buffer full)";
			continue;
		}
		if (got <= 0) {
			if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				why = strerror(errno);
			break;
		}
		for (int k = 0; k < got; k++) {
			const char *d = ns->buf + (size_t)k * NL_SLOT;
			size_t dl = mm[k].msg_len;
			const struct nlmsghdr *nlh;
			int left;

			if (mm[k].msg_hdr.msg_namelen != sizeof(from[k]) || from[k].nl_pid != 0)
				continue;       /* not from the kernel */
			if (mm[k].msg_hdr.msg_flags & MSG_TRUNC) {
				/* the header survived: tell its request it failed */
				if (dl >= NLMSG_HDRLEN) {
					struct nlmsghdr h;
					unsigned idx;

					memcpy(&h, d, sizeof(h));
					idx = h.nlmsg_seq - base;
					if (idx < n && !(done[idx / 32] & (1u << (idx % 32)))) {
						cb(idx, NULL, ENOSPC, arg);
						done[idx / 32] |= 1u << (idx % 32);
						answered++;
					}
				}
				continue;
			}
			if (nl_msgs_check(d, dl) < 0)
				continue;       /* malformed: its request stays unanswered */
			left = (int)dl;
			for (nlh = (const void *)d; mnl_nlmsg_ok(nlh, left);
			     nlh = mnl_nlmsg_next(nlh, &left))
				answered += (unsigned)batch_msg(ns, nlh, base, n, done, cb, arg);
		}
	}
	if (answered < n) {
		/* what is still queued belongs to no one now */
		ns->dirty = 1;
		nl_sock_drain(ns);
		util_errf(err, errlen, "%s: %u of %u requests unanswered%s%s", what, n - answered,
			  n, *why && *why != ' ' ? ": " : "", why);
	}
	return (int)answered;
}

/* ---- generic netlink ---- */

struct nlmsghdr *nl_genl_put(void *buf, uint16_t family, uint8_t cmd,
			     uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static const struct nl_pol ctrl_pol[CTRL_ATTR_FAMILY_ID + 1] = {
	[CTRL_ATTR_FAMILY_ID] = { MNL_TYPE_U16, 0 },
};

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_FAMILY_ID + 1] = { 0 };
	struct nl_tb t = { ctrl_pol, CTRL_ATTR_FAMILY_ID, tb };
	int *id = data;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct genlmsghdr) ||
	    mnl_attr_parse(nlh, sizeof(struct genlmsghdr), nl_attr_cb, &t) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (tb[CTRL_ATTR_FAMILY_ID])
		*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return MNL_CB_OK;
}

int nl_genl_family(struct nl_sock *ns, const char *name, char *err,
		   size_t errlen)
{
	char req[MNL_NLMSG_HDRLEN + 64] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	char what[64];
	int id = 0, rc;

	if (!ns || !name || !*name || strlen(name) >= GENL_NAMSIZ) {
		util_errf(err, errlen, "generic netlink family: %s", strerror(EINVAL));
		return -EINVAL;
	}
	for (unsigned i = 0; i < ns->nfam; i++)
		if (!strcmp(ns->fam[i].name, name)) {
			if (ns->fam[i].id < 0)
				util_errf(err, errlen, "generic netlink family %s: %s",
					  name, strerror(-ns->fam[i].id));
			return ns->fam[i].id;
		}
	nlh = nl_genl_put(req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	util_errf(what, sizeof(what), "generic netlink family %s", name);
	rc = nl_sock_request(ns, nlh, family_cb, &id, what, err, errlen);
	if (rc == 0 && id <= 0) {
		rc = -ENOENT;
		util_errf(err, errlen, "%s: no id in the reply", what);
	}
	/* Cache the answer, an absent family too; not a failed exchange. */
	if ((rc == 0 || rc == -ENOENT) && ns->nfam < NL_FAMILIES) {
		memcpy(ns->fam[ns->nfam].name, name, strlen(name) + 1);
		ns->fam[ns->nfam++].id = rc < 0 ? rc : id;
	}
	return rc < 0 ? rc : id;
}
