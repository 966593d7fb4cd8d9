/* rtnl: rtnetlink links, neighbours, addresses and the link monitor, on the
 * request path of lib/nl.h (every socket made inside the namespace nsfd,
 * -1 for the daemon's own; err/errlen and -errno as described there). */
#ifndef NICSTALL_RTNL_H
#define NICSTALL_RTNL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/nl.h"

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
	unsigned promiscuity;    /* IFLA_PROMISCUITY: promiscuous users */
	int have_promiscuity;    /* the kernel sent IFLA_PROMISCUITY */
};

/* The links of a received buffer (a dump reply or notifications) as the
 * request path reads them: nl_msgs_check() first, then each RTM_NEWLINK /
 * RTM_DELLINK; a malformed one is skipped. At most max into out, their
 * count in *n. 0, or -EBADMSG when the buffer is refused. For tests and
 * fuzzers. */
int nl_link_parse_buf(const void *buf, size_t len, struct nl_link *out, unsigned max,
		      unsigned *n);

/* Look a link up by name (ifindex == 0) or by index. 0, or -errno
 * (-ENODEV when there is no such link). */
int nl_link_get(int nsfd, const char *ifname, int ifindex, struct nl_link *out,
		char *err, size_t errlen);
/* The same on a NETLINK_ROUTE socket the caller keeps open. */
int nl_link_query(struct nl_sock *ns, const char *ifname, int ifindex,
		  struct nl_link *out, char *err, size_t errlen);

/* Set IFF_* flags: bits in change are set to their value in flags
 * (RTM_NEWLINK ifi_flags/ifi_change), acked. 0 or -errno. */
int nl_link_set_flags(int nsfd, int ifindex, unsigned flags, unsigned change,
		      char *err, size_t errlen);

/* Link monitor (RTNLGRP_LINK, and RTNLGRP_IPV4_IFADDR and _IPV6_IFADDR) of
 * one namespace, non-blocking, for epoll. */
#define NL_LINK_NEW    1   /* link added or changed (flags, name, mtu...) */
#define NL_LINK_DEL    2   /* link removed (or moved to another namespace) */
#define NL_LINK_RESYNC 3   /* events were lost (ENOBUFS): l is NULL; every
			    * current link follows as NL_LINK_NEW, links not
			    * reported then are gone; any address may have
			    * changed */
#define NL_LINK_ADDR   4   /* an address of l->ifindex was added, changed or
			    * removed (RTM_NEWADDR, RTM_DELADDR): l holds the
			    * ifindex alone, no name or flags */
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

#endif
