/* nl: rtnetlink helpers (libmnl), every socket made inside a namespace.
 *
 * nsfd is a network namespace fd from netns_open(), or -1 for the daemon's
 * own namespace. Functions that take err/errlen fill it with a message that
 * names the object, the namespace and the errno text (plus the kernel's
 * extended ack text when there is one) and return -errno. */
#ifndef NICSTALL_NL_H
#define NICSTALL_NL_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* ---- links ---- */

struct nl_link {
	int ifindex;
	char ifname[16];
	unsigned flags;          /* IFF_* (ifi_flags) */
	uint8_t operstate;       /* IF_OPER_*; IF_OPER_UNKNOWN when absent */
	unsigned mtu;
	int master;              /* ifindex of the master, 0 when none */
	char kind[32];           /* IFLA_INFO_KIND ("veth", "bond"), "" if none */
	uint8_t addr[32];        /* IFLA_ADDRESS */
	unsigned addr_len;
};

/* Look a link up by name (ifindex == 0) or by index. 0, or -errno
 * (-ENODEV when there is no such link). */
int nl_link_get(int nsfd, const char *ifname, int ifindex, struct nl_link *out,
		char *err, size_t errlen);

/* Set IFF_* flags: bits in change are set to their value in flags
 * (RTM_NEWLINK ifi_flags/ifi_change), acked. 0 or -errno. */
int nl_link_set_flags(int nsfd, int ifindex, unsigned flags, unsigned change,
		      char *err, size_t errlen);

/* Link monitor (RTNLGRP_LINK) of one namespace, non-blocking, for epoll. */
#define NL_LINK_NEW    1   /* link added or changed (flags, name, mtu...) */
#define NL_LINK_DEL    2   /* link removed (or moved to another namespace) */
#define NL_LINK_RESYNC 3   /* events were lost (ENOBUFS): l is NULL; every
			    * current link follows as NL_LINK_NEW, links not
			    * reported then are gone */
struct nl_mon;
struct nl_mon *nl_mon_open(int nsfd, char *err, size_t errlen);
int nl_mon_fd(const struct nl_mon *m);
/* Drain every pending message, calling cb per link event. Never blocks.
 * Returns the number of events delivered, or -errno. */
int nl_mon_dispatch(struct nl_mon *m,
		    void (*cb)(const struct nl_link *l, int event, void *arg),
		    void *arg);
void nl_mon_close(struct nl_mon *m);

/* ---- neighbours and addresses ---- */

struct nl_neigh {
	int ifindex;
	int family;              /* AF_INET, AF_INET6, AF_BRIDGE ... */
	char addr[64];           /* NDA_DST as text ("" when absent) */
	char lladdr[32];         /* NDA_LLADDR "aa:bb:..", "" when absent */
	unsigned state;          /* NUD_* */
	unsigned flags;          /* NTF_* */
};

/* Dump the neighbour table (ifindex 0: all links). 0 or -errno. */
int nl_neigh_dump(int nsfd, int ifindex,
		  void (*cb)(const struct nl_neigh *n, void *arg), void *arg,
		  char *err, size_t errlen);
/* "PERMANENT", "REACHABLE", ... ; several bits joined with '|'. */
const char *nl_neigh_state_str(unsigned state);

/* Dump IPv4/IPv6 addresses of a link (ifindex 0: all). 0 or -errno. */
int nl_addr_dump(int nsfd, int ifindex,
		 void (*cb)(int family, const char *addr_text,
			    unsigned prefixlen, void *arg),
		 void *arg, char *err, size_t errlen);

/* ---- building blocks for netlink counter sources (src_netdev) ---- */

/* "own netns" or what the fd points at ("/run/netns/x", "net:[4026...]"). */
const char *nl_ns_desc(int nsfd, char *buf, size_t len);

/* A long-lived NETLINK_ROUTE socket made in nsfd, NETLINK_EXT_ACK on, with
 * its own sequence counter. groups: RTMGRP_* bits to join (0: none). */
struct nl_sock;
struct nl_sock *nl_sock_open(int nsfd, unsigned groups, char *err,
			     size_t errlen);
void nl_sock_close(struct nl_sock *ns);
/* Send req (nlmsg_seq and NLM_F_ACK are filled in here) and run cb on
 * every reply of that sequence until NLMSG_DONE, the ack or the reply of a
 * non-dump request. On an error reply returns -errno and writes
 * "what: <strerror>[: extack]" to err. */
int nl_sock_request(struct nl_sock *ns, struct nlmsghdr *req, mnl_cb_t cb,
		    void *arg, const char *what, char *err, size_t errlen);

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
