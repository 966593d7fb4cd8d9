/* sockdiag_port: the kernel's sockets on one local port, for the checks of
 * what engines claim (collectors/flows/claimv.h). See flow_sockdiag.h
 * (sockdiag_port_sockets). */
#include "collectors/flows/flow_sockdiag.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>

#include "lib/nl.h"
#include "lib/util.h"

/* TCP_BOUND_INACTIVE (include/net/tcp_states.h, Linux 6.8: commit
 * 91051f003948 "tcp: Dump bound-only sockets in inet_diag."): a pseudo-state
 * a dump asks for to get the sockets that are bound and nothing else */
#define PORT_TCP_BOUND_INACTIVE 13
#define PORT_BC_MAX 256

struct port_dump {
	uint8_t proto;
	uint16_t lport;
	struct sockdiag_ent *out;
	size_t max, n;
	int truncated;
};

static void port_addr(struct in6_addr *dst, uint8_t family, const __be32 *src)
{
	memset(dst, 0, sizeof(*dst));
	if (family == AF_INET) {
		dst->s6_addr[10] = dst->s6_addr[11] = 0xff;
		memcpy(dst->s6_addr + 12, src, 4);
	} else {
		memcpy(dst, src, 16);
	}
}

static int port_cb(const struct nlmsghdr *nlh, void *data)
{
	struct port_dump *d = data;
	const struct inet_diag_msg *m;
	struct sockdiag_ent *e;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*m)))
		return MNL_CB_OK;
	m = mnl_nlmsg_get_payload(nlh);
	if ((m->idiag_family != AF_INET && m->idiag_family != AF_INET6) ||
	    m->id.idiag_sport != d->lport || !m->idiag_inode)
		return MNL_CB_OK;       /* the filter matches either end */
	if (d->n >= d->max) {
		d->truncated = 1;
		return MNL_CB_STOP;
	}
	e = &d->out[d->n++];
	memset(e, 0, sizeof(*e));
	e->inode = m->idiag_inode;
	e->uid = m->idiag_uid;
	e->proto = d->proto;
	e->state = m->idiag_state;
	port_addr(&e->laddr, m->idiag_family, m->id.idiag_src);
	port_addr(&e->raddr, m->idiag_family, m->id.idiag_dst);
	e->lport = m->id.idiag_sport;
	e->rport = m->id.idiag_dport;
	return MNL_CB_OK;
}

int sockdiag_port_sockets(int nsfd, uint8_t proto, uint16_t lport, int bound_only,
			  struct sockdiag_ent *out, size_t max, int *truncated, char *err,
			  size_t errlen)
{
	char reqbuf[MNL_NLMSG_HDRLEN + 64 + PORT_BC_MAX] __attribute__((aligned(8)));
	unsigned char bc[PORT_BC_MAX] __attribute__((aligned(4)));
	/* the bytecode compiler speaks selectors: "this port, either end" */
	struct flow_sel sel = { .proto = IPPROTO_TCP, .port_lo = ntohs(lport),
				.port_hi = ntohs(lport) };
	struct port_dump d = { .proto = proto, .lport = lport, .out = out, .max = max };
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct nl_sock *ns;
	int bclen, rc = 0;

	if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || !lport ||
	    (bound_only && proto != IPPROTO_TCP))
		return util_errf(err, errlen, "sock_diag: no protocol or port to look for"), -EINVAL;
	bclen = sockdiag_bytecode(&sel, 1, bc, sizeof(bc));
	if (bclen < 0)
		bclen = 0;
	ns = nl_sock_open(nsfd, NETLINK_SOCK_DIAG, 0, err, errlen);
	if (!ns)
		return -(errno ? errno : EIO);
	for (int k = 0; k < 2 && rc >= 0; k++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(reqbuf);
		struct inet_diag_req_v2 *r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
		char what[96];

		nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		r->sdiag_family = (uint8_t)fams[k];
		r->sdiag_protocol = proto;
		/* the bound-only walk visits every bucket of the bind hash
		 * (milliseconds): asked for apart, when needed */
		r->idiag_states = bound_only ? 1u << PORT_TCP_BOUND_INACTIVE :
			~(1u << PORT_TCP_BOUND_INACTIVE);
		if (bclen > 0)
			mnl_attr_put(nlh, INET_DIAG_REQ_BYTECODE, (size_t)bclen, bc);
		snprintf(what, sizeof(what), "sock_diag: %s %s sockets on port %u",
			 fams[k] == AF_INET ? "IPv4" : "IPv6", proto == IPPROTO_TCP ? "TCP" : "UDP",
			 ntohs(lport));
		rc = nl_sock_request(ns, nlh, port_cb, &d, what, err, errlen);
		if (rc == -ENOENT)      /* no IPv6 (or no udp_diag module) */
			rc = 0;
	}
	nl_sock_close(ns);
	if (truncated)
		*truncated = d.truncated;
	return rc < 0 ? rc : (int)d.n;
}

int sockdiag_lookup(int nsfd, uint8_t proto, const struct in6_addr *laddr, uint16_t lport,
		    const struct in6_addr *raddr, uint16_t rport, struct sockdiag_ent *out,
		    char *err, size_t errlen)
{
	char reqbuf[MNL_NLMSG_HDRLEN + 64] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(reqbuf);
	struct inet_diag_req_v2 *r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	struct port_dump d = { .proto = proto, .lport = lport, .out = out, .max = 1 };
	int v4 = IN6_IS_ADDR_V4MAPPED(laddr) && (IN6_IS_ADDR_V4MAPPED(raddr) ||
						  IN6_IS_ADDR_UNSPECIFIED(raddr)), rc;
	const struct in6_addr *src = laddr, *dst = raddr;
	uint16_t sport = lport, dport = rport;
	struct nl_sock *ns;

	if (!lport || (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return util_errf(err, errlen, "sock_diag: no protocol or local port to look up"),
		       -EINVAL;
	if (proto == IPPROTO_UDP) {
		/* udp_dump_one() (net/ipv4/udp_diag.c) calls
		 * __udp4_lib_lookup(net, idiag_src, idiag_sport, idiag_dst,
		 * idiag_dport, ...), whose (saddr, sport) is a datagram's
		 * source: "src and dst are swapped for historical reasons".
		 * The remote end goes in idiag_src, the local in idiag_dst;
		 * the answer is the socket the kernel delivers raddr:rport ->
		 * laddr:lport to (connected first, then bound, reuseport). */
		src = raddr;
		dst = laddr;
		sport = rport;
		dport = lport;
	}
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	r->sdiag_family = v4 ? AF_INET : AF_INET6;
	r->sdiag_protocol = proto;
	r->idiag_states = ~0u;
	r->id.idiag_sport = sport;
	r->id.idiag_dport = dport;
	if (v4) {
		memcpy(&r->id.idiag_src[0], &src->s6_addr[12], 4);
		memcpy(&r->id.idiag_dst[0], &dst->s6_addr[12], 4);
	} else {
		memcpy(r->id.idiag_src, src, 16);
		memcpy(r->id.idiag_dst, dst, 16);
	}
	r->id.idiag_cookie[0] = r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	ns = nl_sock_open(nsfd, NETLINK_SOCK_DIAG, 0, err, errlen);
	if (!ns)
		return -(errno ? errno : EIO);
	rc = nl_sock_request(ns, nlh, port_cb, &d,
			     proto == IPPROTO_UDP ? "sock_diag: UDP socket lookup" :
			     "sock_diag: TCP socket lookup", err, errlen);
	nl_sock_close(ns);
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? rc : (int)d.n;
}
