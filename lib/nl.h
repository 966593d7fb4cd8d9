/* nl: the one netlink request path (libmnl messages, our own socket code).
 *
 * Every netlink socket of the daemon is an nl_sock: made inside the
 * namespace it talks to, NETLINK_EXT_ACK on, its own sequence counter.
 * nl_sock_request() never blocks (see nl.c for why that is enough), and
 * every received buffer goes through nl_msgs_check() before libmnl sees it.
 * Link, neighbour and address helpers built on it are in lib/rtnl.h.
 *
 * nsfd is a network namespace fd from netns_open(), or -1 for the daemon's
 * own namespace (for a thread that has entered another namespace: that
 * one). Functions that take err/errlen fill it with a message that names
 * what was asked, the errno text and the kernel's extended ack text when
 * there is one, and return -errno. */
#ifndef NICSTALL_NL_H
#define NICSTALL_NL_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* "own netns" or what the fd points at ("/run/netns/x", "net:[4026...]"). */
const char *nl_ns_desc(int nsfd, char *buf, size_t len);

/* Check a received buffer before any libmnl call touches it: one or more
 * messages, each nlmsg_len (read as unsigned) at least NLMSG_HDRLEN and,
 * padded to NLMSG_ALIGNTO, no more than the bytes left (libmnl reads a
 * message's attributes up to its aligned end: the last one must be padded
 * too), and nothing after the last one. Returns the number of messages, or
 * -EBADMSG.
 * (mnl_nlmsg_ok() casts nlmsg_len to int: 0x80000001 passes it, and the
 * attribute walk that follows reads past the buffer.) */
int nl_msgs_check(const void *buf, size_t len);

/* ---- sockets and requests ---- */

struct nl_sock;
/* A socket of protocol (NETLINK_ROUTE, NETLINK_GENERIC, NETLINK_SOCK_DIAG,
 * NETLINK_RDMA, ...) made in nsfd and bound; groups: multicast bits to join
 * (RTMGRP_*), 0 for none. Non-blocking. NULL with err filled and errno set
 * (EPROTONOSUPPORT: the kernel has no such netlink family). */
struct nl_sock *nl_sock_open(int nsfd, int protocol, unsigned groups,
			     char *err, size_t errlen);
void nl_sock_close(struct nl_sock *ns);
/* For epoll (multicast sockets). The fd of a socket that is used for
 * requests can change: a socket left in an unknown state is remade. */
int nl_sock_fd(const struct nl_sock *ns);

/* Send req (nlmsg_seq, NLM_F_REQUEST and NLM_F_ACK are set here) and run cb
 * on every data message of that sequence until NLMSG_DONE, the ack, or cb
 * returning MNL_CB_STOP (the rest of the reply is thrown away) or
 * MNL_CB_ERROR (the request fails with errno, or EPROTO). Never waits:
 * when nothing is queued before the reply is complete it fails with
 * -ENOMSG. Control messages and other sequences are skipped. cb may be
 * NULL (acked requests). On an error reply returns -errno and writes
 * "what: <strerror>[: extack]" to err. */
int nl_sock_request(struct nl_sock *ns, struct nlmsghdr *req, mnl_cb_t cb,
		    void *arg, const char *what, char *err, size_t errlen);

/* Many requests in one datagram, for requests that each answer with exactly
 * one message, data or an error, and no ack (sock_diag's exact socket
 * lookups: SOCK_DIAG_BY_FAMILY without NLM_F_DUMP): the kernel runs them in
 * order inside one sendmsg() (netlink_rcv_skb() loops over the datagram's
 * messages; an error is acked whatever the flags), and recvmmsg() takes
 * the replies in a few calls, so n lookups cost two system calls, not 3n.
 * reqs holds n (<= NL_BATCH_MAX) requests back to back, each NLMSG-aligned,
 * len bytes in all; nlmsg_seq and NLM_F_REQUEST are set here, NLM_F_ACK
 * and NLM_F_DUMP must not be. cb(idx, nlh, 0, arg) runs for the data reply
 * to request idx, cb(idx, NULL, errno, arg) for an error reply (a reply too
 * long for its slot is ENOSPC). Never waits. Returns the number of
 * requests answered: fewer than n when replies were lost (the receive
 * buffer overran: err says so; the rest may be asked again), or -errno
 * when nothing could be sent. */
#define NL_BATCH_MAX 32
typedef void (*nl_batch_fn)(unsigned idx, const struct nlmsghdr *nlh, int error, void *arg);
int nl_sock_batch(struct nl_sock *ns, void *reqs, size_t len, unsigned n, nl_batch_fn cb,
		  void *arg, const char *what, char *err, size_t errlen);

/* Multicast: take one queued datagram without waiting, check it, and run cb
 * on each of its messages (control messages skipped). 1 when a datagram was
 * handled, 0 when nothing is queued, -ENOBUFS when notifications were lost
 * (the queue overran), -EBADMSG for a malformed datagram (dropped), other
 * -errno. */
int nl_sock_recv_events(struct nl_sock *ns, mnl_cb_t cb, void *arg);
/* Throw away everything queued (bounded). */
void nl_sock_drain(struct nl_sock *ns);

/* ---- generic netlink ---- */

/* Id of the generic netlink family name ("devlink"), asked with
 * CTRL_CMD_GETFAMILY once per socket and cached (a missing family too).
 * > 0, or -errno (-ENOENT: the kernel has no such family). */
int nl_genl_family(struct nl_sock *ns, const char *name, char *err,
		   size_t errlen);
/* Start a request in buf (at least MNL_NLMSG_HDRLEN + 4 bytes, 4-aligned):
 * header for family, genlmsghdr with cmd and version. Add attributes with
 * mnl_attr_put_*. */
struct nlmsghdr *nl_genl_put(void *buf, uint16_t family, uint8_t cmd,
			     uint8_t version);

/* ---- attribute policy ---- */

/* One attribute validator for every message (iproute2 mnl_utils style).
 * pol[type] gives the expected type (MNL_TYPE_*) and, for MNL_TYPE_BINARY,
 * a minimum length; attributes above max or with MNL_TYPE_UNSPEC in pol are
 * skipped; invalid ones stop the parse (MNL_CB_ERROR, errno set). */
struct nl_pol {
	uint16_t type;           /* enum mnl_attr_data_type */
	uint16_t minlen;
};
struct nl_tb {
	const struct nl_pol *pol;
	unsigned max;
	const struct nlattr **tb;    /* max + 1 entries, zeroed by caller */
};
int nl_attr_cb(const struct nlattr *a, void *data);

#endif
