/* probe_ping: asynchronous ICMP/ICMPv6 echo probe on the daemon's loop. */
#include "probes/probe_ping.h"
#include "lib/ipfilter.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/nl.h"
#include "lib/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <linux/errqueue.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef ICMP_FILTER
#define ICMP_FILTER 1           /* linux/icmp.h, clashes with netinet */
#endif

#define PING_DATALEN 56         /* payload after the 8-byte ICMP header */
#define PING_TOKEN_OFF 8        /* token right after the ICMP header */
#define PING_PATTERN_OFF 16     /* the byte pattern after the token */
#define RECV_BUDGET 64          /* datagrams per readable event */
#define IP4_HDRLEN 20           /* the kernel's header: no options here */
#define IP6_HDRLEN 40           /* nor extension headers */

struct probe_ping {
	struct loop *l;
	int fd;
	int family;
	int raw;
	int fd_added;
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} dst;
	socklen_t dstlen;
	char dst_text[INET6_ADDRSTRLEN + IFNAMSIZ + 2];
	char ifname[IFNAMSIZ];
	char nsname[128];
	unsigned count;
	unsigned next;           /* echoes attempted so far */
	uint64_t interval_ns, timeout_ns;
	uint16_t ident;
	int ident_known;
	uint64_t token;
	unsigned size;           /* the whole IP packet of each echo */
	int df;
	uint8_t *pkt;            /* the ICMP message sent: size - IP header */
	size_t pktlen;
	unsigned local_mtu;      /* from the error queue after EMSGSIZE */
	double rtt_sum_ms;
	struct loop_timer *tsend, *tdead;
	probe_ping_done_fn done;
	void *arg;
	int finished;
	struct probe_ping_result res;
};


static uint16_t inet_csum(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2, b += 2)
		sum += (uint32_t)b[0] << 8 | b[1];
	if (len)
		sum += (uint32_t)b[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static void set_error(struct probe_ping *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct probe_ping *p, const char *fmt, ...)
{
	va_list ap;

	if (p->res.error[0])
		return;         /* keep the first failure */
	va_start(ap, fmt);
	vsnprintf(p->res.error, sizeof(p->res.error), fmt, ap);
	va_end(ap);
}

static void finish(struct probe_ping *p)
{
	probe_ping_done_fn done = p->done;

	if (p->finished)
		return;
	p->finished = 1;
	if (p->tsend)
		loop_timer_set(p->tsend, 0, 0);
	if (p->tdead)
		loop_timer_set(p->tdead, 0, 0);
	if (p->fd_added) {
		loop_del_fd(p->l, p->fd);
		p->fd_added = 0;
	}
	if (p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
	}
	if (p->res.received)
		p->res.rtt_avg_ms = p->rtt_sum_ms / p->res.received;
	p->done = NULL;
	if (done)
		done(p, p->arg);        /* last: done may free p */
}

static int all_answered(const struct probe_ping *p)
{
	return p->next >= p->count && p->res.received >= p->res.sent;
}

static void drain_errqueue(struct probe_ping *p);

static void send_one(struct probe_ping *p)
{
	uint8_t *pkt = p->pkt;
	unsigned i = p->next;
	uint16_t seq = (uint16_t)i;
	uint64_t now;

	if (i >= p->count)
		return;
	/* the byte pattern after the token was laid down at start */
	memset(pkt, 0, PING_TOKEN_OFF);
	pkt[0] = p->family == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
	pkt[1] = 0;
	pkt[4] = (uint8_t)(p->ident >> 8);
	pkt[5] = (uint8_t)p->ident;
	pkt[6] = (uint8_t)(seq >> 8);
	pkt[7] = (uint8_t)seq;
	memcpy(pkt + PING_TOKEN_OFF, &p->token, sizeof(p->token));
	if (p->family == AF_INET) {
		uint16_t c = inet_csum(pkt, p->pktlen);

		memcpy(pkt + 2, &c, 2);
	}               /* ICMPv6: the kernel fills the checksum */
	p->res.echo[i].seq = seq;
	now = loop_mono_ns();
	if (sendto(p->fd, pkt, p->pktlen, 0, &p->dst.sa, p->dstlen) < 0) {
		int e = errno;
		char why[256];

		if (e == EMSGSIZE) {
			/* don't fragment and larger than the route's MTU:
			 * the kernel refused it here and queued the MTU on
			 * the error queue (IP_RECVERR, origin local) */
			p->local_mtu = 0;
			drain_errqueue(p);
			if (p->local_mtu)
				snprintf(why, sizeof(why), "EMSGSIZE: the %u-byte packet is "
					 "larger than the route's MTU %u", p->size, p->local_mtu);
			else
				snprintf(why, sizeof(why), "EMSGSIZE: the %u-byte packet is "
					 "larger than the route's MTU", p->size);
		} else {
			/* EPERM: the unit's cgroup filter (IPAddressDeny=) */
			ipfilter_errstr(e, p->dst_text, why, sizeof(why));
		}
		set_error(p, "send echo %u to %s%s%s in %s: %s", (unsigned)seq,
			  p->dst_text, p->ifname[0] ? " via " : "", p->ifname, p->nsname, why);
	} else {
		p->res.echo[i].sent_ns = now;
		p->res.sent++;
		if (!p->ident_known && !p->raw) {
			/* ping sockets use their local port as identifier */
			union {
				struct sockaddr sa;
				struct sockaddr_in in;
				struct sockaddr_in6 in6;
			} me;
			socklen_t ml = sizeof(me);

			if (getsockname(p->fd, &me.sa, &ml) == 0) {
				p->ident = ntohs(p->family == AF_INET ? me.in.sin_port
						 : me.in6.sin6_port);
				p->ident_known = 1;
			}
		}
	}
	p->next++;
	if (p->next >= p->count) {
		loop_timer_set(p->tsend, 0, 0);
		if (all_answered(p)) {
			finish(p);
			return;
		}
		loop_timer_set(p->tdead, p->timeout_ns, 0);
	}
}

static void on_send_timer(struct loop_timer *t, void *arg)
{
	(void)t;
	send_one(arg);
}

static void on_deadline(struct loop_timer *t, void *arg)
{
	(void)t;
	finish(arg);
}

/* Is this datagram (starting at an ICMP header) an echo reply of ours? */
static void take_reply(struct probe_ping *p, const uint8_t *icmp, size_t len,
		       uint64_t now)
{
	uint16_t id, seq;
	uint64_t tok;
	struct probe_ping_result *r = &p->res;
	double ms;

	if (len < 8 + PING_DATALEN / 4)
		return;
	if (icmp[0] != (p->family == AF_INET ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY) ||
	    icmp[1] != 0)
		return;
	id = (uint16_t)(icmp[4] << 8 | icmp[5]);
	seq = (uint16_t)(icmp[6] << 8 | icmp[7]);
	if (p->raw && id != p->ident)
		return;
	memcpy(&tok, icmp + PING_TOKEN_OFF, sizeof(tok));
	if (tok != p->token)
		return;
	if (seq >= p->next || seq >= PROBE_PING_MAX || !r->echo[seq].sent_ns ||
	    r->echo[seq].replied)
		return;         /* unknown, unsent, or a duplicate */
	r->echo[seq].replied = 1;
	r->echo[seq].rtt_ns = now > r->echo[seq].sent_ns ? now - r->echo[seq].sent_ns : 1;
	ms = (double)r->echo[seq].rtt_ns / 1e6;
	if (!r->received || ms < r->rtt_min_ms)
		r->rtt_min_ms = ms;
	if (!r->received || ms > r->rtt_max_ms)
		r->rtt_max_ms = ms;
	p->rtt_sum_ms += ms;
	r->received++;
}

static int from_dst(const struct probe_ping *p, const void *from, socklen_t fl)
{
	if (p->family == AF_INET) {
		const struct sockaddr_in *s = from;

		return fl >= sizeof(*s) &&
		       s->sin_addr.s_addr == p->dst.in.sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *s = from;

		return fl >= sizeof(*s) &&
		       !memcmp(&s->sin6_addr, &p->dst.in6.sin6_addr, 16);
	}
}

/* ICMP errors about our echoes (IP_RECVERR): record the first one. A
 * local EMSGSIZE (our own send refused, larger than the route's MTU) is
 * not recorded here: its MTU is left in local_mtu for send_one. */
static void drain_errqueue(struct probe_ping *p)
{
	for (int n = 0; n < RECV_BUDGET; n++) {
		uint8_t data[256];
		union {
			char buf[512];
			struct cmsghdr align;
		} cb;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cb.buf, .msg_controllen = sizeof(cb.buf),
		};
		ssize_t len = recvmsg(p->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
		const uint8_t *icmp = data;
		size_t il;
		int ours;

		if (len < 0)
			return;
		il = (size_t)len;
		if (il > sizeof(data))
			il = sizeof(data);
		/* a raw socket may hand back the IP header first */
		if (p->family == AF_INET && il >= 20 && (data[0] >> 4) == 4 &&
		    (size_t)(data[0] & 0xf) * 4 + 16 <= il) {
			size_t ihl = (size_t)(data[0] & 0xf) * 4;
			uint64_t t;

			memcpy(&t, data + ihl + PING_TOKEN_OFF, sizeof(t));
			if (t == p->token) {
				icmp = data + ihl;
				il -= ihl;
			}
		}
		if (il >= 16) {
			uint64_t t;

			memcpy(&t, icmp + PING_TOKEN_OFF, sizeof(t));
			ours = t == p->token;   /* else someone else's echo */
		} else
			ours = !p->raw;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct sock_extended_err ee;
			char from[INET6_ADDRSTRLEN] = "?";
			const struct sockaddr *off;

			if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
				continue;
			if (c->cmsg_len < CMSG_LEN(sizeof(ee)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin == SO_EE_ORIGIN_LOCAL) {
				/* raised by our own send on this socket: no
				 * payload to match, always ours */
				if (ee.ee_errno == EMSGSIZE)
					p->local_mtu = ee.ee_info;
				else
					set_error(p, "echo to %s in %s: %s (local error)",
						  p->dst_text, p->nsname,
						  strerror((int)ee.ee_errno));
				continue;
			}
			if (!ours)
				continue;
			/* the offender follows: a sockaddr_in for IPv4 (shorter
			 * than a sockaddr_in6), a sockaddr_in6 for IPv6 */
			if (c->cmsg_len >= CMSG_LEN(sizeof(ee) + sizeof(struct sockaddr_in))) {
				off = (const struct sockaddr *)(CMSG_DATA(c) + sizeof(ee));
				if (off->sa_family == AF_INET)
					inet_ntop(AF_INET,
						  &((const struct sockaddr_in *)(const void *)off)->sin_addr,
						  from, sizeof(from));
				else if (off->sa_family == AF_INET6 &&
					 c->cmsg_len >= CMSG_LEN(sizeof(ee) +
								 sizeof(struct sockaddr_in6)))
					inet_ntop(AF_INET6,
						  &((const struct sockaddr_in6 *)(const void *)off)->sin6_addr,
						  from, sizeof(from));
			}
			if ((ee.ee_origin == SO_EE_ORIGIN_ICMP && ee.ee_type == ICMP_DEST_UNREACH &&
			     ee.ee_code == ICMP_FRAG_NEEDED) ||
			    (ee.ee_origin == SO_EE_ORIGIN_ICMP6 &&
			     ee.ee_type == ICMP6_PACKET_TOO_BIG)) {
				/* ee_info: the MTU the router gave (0: none) */
				char mtu[40];
				int v6 = ee.ee_origin == SO_EE_ORIGIN_ICMP6;

				if (ee.ee_info)
					snprintf(mtu, sizeof(mtu), "next-hop MTU %u", ee.ee_info);
				else
					snprintf(mtu, sizeof(mtu), "next-hop MTU not given");
				set_error(p, "echo to %s in %s: %s: %s, the echo is %u bytes "
					  "(ICMP%s type %u code %u from %s)",
					  p->dst_text, p->nsname,
					  v6 ? "packet too big" : "fragmentation needed", mtu,
					  p->size, v6 ? "v6" : "", ee.ee_type, ee.ee_code, from);
				continue;
			}
			set_error(p, "echo to %s in %s: %s (ICMP type %u code %u from %s)",
				  p->dst_text, p->nsname,
				  strerror((int)ee.ee_errno), ee.ee_type, ee.ee_code, from);
		}
	}
}

static void on_readable(int fd, uint32_t events, void *arg)
{
	struct probe_ping *p = arg;

	if (events & EPOLLERR)
		drain_errqueue(p);
	for (int n = 0; n < RECV_BUDGET; n++) {
		/* a larger reply (up to 64 KiB with size) is read truncated:
		 * what is matched (header, identifier, sequence, token) sits
		 * at its start */
		uint8_t buf[2048];
		union {
			struct sockaddr sa;
			struct sockaddr_in in;
			struct sockaddr_in6 in6;
		} from;
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, &from.sa, &fl);
		uint64_t now = loop_mono_ns();
		const uint8_t *icmp = buf;
		size_t il;

		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			/* a pending ICMP error (sk_err), its detail on the
			 * error queue: EMSGSIZE from "fragmentation needed" */
			if (errno == EHOSTUNREACH || errno == ENETUNREACH ||
			    errno == ECONNREFUSED || errno == EMSGSIZE) {
				drain_errqueue(p);
				continue;
			}
			set_error(p, "receive echo replies from %s in %s: %s",
				  p->dst_text, p->nsname, strerror(errno));
			break;
		}
		il = (size_t)len;
		if (il > sizeof(buf))
			il = sizeof(buf);
		if (p->raw && p->family == AF_INET) {
			size_t ihl;

			if (il < 20 || (buf[0] >> 4) != 4)
				continue;
			ihl = (size_t)(buf[0] & 0xf) * 4;
			if (ihl < 20 || ihl > il)
				continue;
			icmp += ihl;
			il -= ihl;
		}
		if (!from_dst(p, &from, fl))
			continue;
		take_reply(p, icmp, il, now);
	}
	if (all_answered(p))
		finish(p);
}

static int parse_dst(struct probe_ping *p, const char *text, char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + IFNAMSIZ + 2], *pct;

	if (!text || !*text || strlen(text) >= sizeof(addr)) {
		snprintf(err, errlen, "ping: destination address \"%s\" is empty or too long",
			 text ? text : "(null)");
		return -1;
	}
	snprintf(p->dst_text, sizeof(p->dst_text), "%s", text);
	snprintf(addr, sizeof(addr), "%s", text);
	pct = strchr(addr, '%');
	if (pct)
		*pct++ = '\0';
	if (!pct && inet_pton(AF_INET, addr, &p->dst.in.sin_addr) == 1) {
		p->family = AF_INET;
		p->dst.in.sin_family = AF_INET;
		p->dstlen = sizeof(p->dst.in);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &p->dst.in6.sin6_addr) == 1) {
		p->family = AF_INET6;
		p->dst.in6.sin6_family = AF_INET6;
		p->dstlen = sizeof(p->dst.in6);
		return 0;
	}
	snprintf(err, errlen, "ping: \"%s\" is not an IPv4 or IPv6 address literal", text);
	return -1;
}

/* Scope of an IPv6 link-local destination: "%IF" or "%N", else ifname.
 * Resolved on the socket, so inside its namespace. */
static int resolve_scope(struct probe_ping *p, char *err, size_t errlen)
{
	const char *pct = strchr(p->dst_text, '%');
	const char *name = pct ? pct + 1 : p->ifname;
	struct ifreq ifr;
	char *end;
	unsigned long v;

	if (p->family != AF_INET6 || !*name)
		return 0;
	if (!pct && !IN6_IS_ADDR_LINKLOCAL(&p->dst.in6.sin6_addr) &&
	    !IN6_IS_ADDR_MC_LINKLOCAL(&p->dst.in6.sin6_addr))
		return 0;
	v = strtoul(name, &end, 10);
	if (*name >= '0' && *name <= '9' && !*end && v > 0 && v < 0x7fffffff) {
		p->dst.in6.sin6_scope_id = (uint32_t)v;
		return 0;
	}
	if (strlen(name) >= IFNAMSIZ) {
		snprintf(err, errlen, "ping %s: scope interface name too long", p->dst_text);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(p->fd, SIOCGIFINDEX, &ifr) < 0) {
		snprintf(err, errlen, "ping %s: scope interface %s in %s: %s",
			 p->dst_text, name, p->nsname, strerror(errno));
		return -1;
	}
	p->dst.in6.sin6_scope_id = (uint32_t)ifr.ifr_ifindex;
	return 0;
}

static int open_socket(struct probe_ping *p, int nsfd, char *err, size_t errlen)
{
	int proto = p->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	int on = 1;

	p->fd = netns_socket(nsfd, p->family, SOCK_DGRAM | SOCK_NONBLOCK, proto);
	if (p->fd < 0 && (errno == EACCES || errno == EPERM ||
			  errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT)) {
		/* net.ipv4.ping_group_range excludes us: raw socket */
		p->fd = netns_socket(nsfd, p->family, SOCK_RAW | SOCK_NONBLOCK, proto);
		p->raw = 1;
	}
	if (p->fd < 0) {
		snprintf(err, errlen, "ping %s: ICMP%s socket in %s: %s", p->dst_text,
			 p->family == AF_INET6 ? "v6" : "", p->nsname, strerror(errno));
		return -1;
	}
	snprintf(p->res.method, sizeof(p->res.method), "%s", p->raw ? "raw" : "dgram");
	if (p->ifname[0] &&
	    setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, p->ifname,
		       (socklen_t)strlen(p->ifname) + 1) < 0) {
		snprintf(err, errlen, "ping %s: bind to interface %s in %s: %s",
			 p->dst_text, p->ifname, p->nsname, strerror(errno));
		return -1;
	}
	if (p->df) {
		/* as ping -M do: never fragment here, set DF, refuse (EMSGSIZE)
		 * what exceeds the route's MTU */
		int r, v = p->family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;

		if (p->family == AF_INET)
			r = setsockopt(p->fd, SOL_IP, IP_MTU_DISCOVER, &v, sizeof(v));
		else {
			r = setsockopt(p->fd, SOL_IPV6, IPV6_MTU_DISCOVER, &v, sizeof(v));
			if (r == 0)
				r = setsockopt(p->fd, SOL_IPV6, IPV6_DONTFRAG, &on, sizeof(on));
		}
		if (r < 0) {
			snprintf(err, errlen, "ping %s: don't-fragment option in %s: %s",
				 p->dst_text, p->nsname, strerror(errno));
			return -1;
		}
	}
	if (p->family == AF_INET) {
		setsockopt(p->fd, SOL_IP, IP_RECVERR, &on, sizeof(on));
		if (p->raw) {
			uint32_t filt = ~(1u << ICMP_ECHOREPLY);

			setsockopt(p->fd, SOL_RAW, ICMP_FILTER, &filt, sizeof(filt));
		}
	} else {
		setsockopt(p->fd, SOL_IPV6, IPV6_RECVERR, &on, sizeof(on));
		if (p->raw) {
			struct icmp6_filter f;

			ICMP6_FILTER_SETBLOCKALL(&f);
			ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
			setsockopt(p->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
		}
	}
	return resolve_scope(p, err, errlen);
}

/* The size asked for, checked against the family's bounds, and the send
 * buffer: the ICMP message with the byte pattern laid down once. */
static int set_size(struct probe_ping *p, unsigned size, char *err, size_t errlen)
{
	int v4 = p->family == AF_INET;
	unsigned min = v4 ? PROBE_PING_DEF_SIZE_V4 : PROBE_PING_DEF_SIZE_V6;
	unsigned max = v4 ? PROBE_PING_MAX_SIZE_V4 : PROBE_PING_MAX_SIZE_V6;

	if (!size)
		size = min;
	if (size < min || size > max) {
		snprintf(err, errlen, "ping %s size %u: must be between %u and %u bytes "
			 "(the whole IPv%d packet, header included: ping -s N sends N + %u)",
			 p->dst_text, size, min, max, v4 ? 4 : 6,
			 v4 ? IP4_HDRLEN + 8 : IP6_HDRLEN + 8);
		return -1;
	}
	p->size = size;
	p->pktlen = size - (v4 ? IP4_HDRLEN : IP6_HDRLEN);
	p->pkt = malloc(p->pktlen);
	if (!p->pkt) {
		snprintf(err, errlen, "ping %s: out of memory for a %u-byte echo",
			 p->dst_text, size);
		return -1;
	}
	memset(p->pkt, 0, PING_PATTERN_OFF);
	for (size_t k = PING_PATTERN_OFF; k < p->pktlen; k++)
		p->pkt[k] = (uint8_t)k;
	return 0;
}

struct probe_ping *probe_ping_start(struct loop *l, int nsfd, const char *ifname,
				    const char *dst_text, unsigned count,
				    uint64_t interval_ns, uint64_t timeout_ns,
				    probe_ping_done_fn done, void *arg,
				    char *err, size_t errlen)
{
	return probe_ping_start_opts(l, nsfd, ifname, dst_text, count, interval_ns,
				     timeout_ns, NULL, done, arg, err, errlen);
}

struct probe_ping *probe_ping_start_opts(struct loop *l, int nsfd, const char *ifname,
					 const char *dst_text, unsigned count,
					 uint64_t interval_ns, uint64_t timeout_ns,
					 const struct probe_ping_opts *o,
					 probe_ping_done_fn done, void *arg,
					 char *err, size_t errlen)
{
	static const struct probe_ping_opts defaults;
	struct probe_ping *p;
	char dummy[1];

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!o)
		o = &defaults;
	if (!l || !done) {
		snprintf(err, errlen, "ping: no loop or completion callback");
		return NULL;
	}
	if (count < 1 || count > PROBE_PING_MAX) {
		snprintf(err, errlen, "ping %s: count %u out of range 1..%d",
			 dst_text ? dst_text : "(null)", count, PROBE_PING_MAX);
		return NULL;
	}
	if (ifname && strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "ping: interface name \"%s\" too long", ifname);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "ping: out of memory");
		return NULL;
	}
	p->l = l;
	p->fd = -1;
	p->count = count;
	p->interval_ns = interval_ns ? interval_ns : PROBE_PING_DEF_INTERVAL_NS;
	p->timeout_ns = timeout_ns ? timeout_ns : PROBE_PING_DEF_TIMEOUT_NS;
	p->done = done;
	p->arg = arg;
	if (ifname)
		snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	nl_ns_desc(nsfd, p->nsname, sizeof(p->nsname));
	p->df = !!o->df;
	if (parse_dst(p, dst_text, err, errlen) < 0)
		goto fail;
	if (set_size(p, o->size, err, errlen) < 0)
		goto fail;
	if (getrandom(&p->token, sizeof(p->token), GRND_NONBLOCK) != sizeof(p->token))
		p->token = loop_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)p;
	p->ident = (uint16_t)(p->token >> 48);
	if (open_socket(p, nsfd, err, errlen) < 0)
		goto fail;
	if (p->raw)
		p->ident_known = 1;
	if (loop_add_fd(l, p->fd, EPOLLIN, on_readable, p) < 0) {
		snprintf(err, errlen, "ping %s: add socket to loop: %s", p->dst_text,
			 strerror(errno));
		goto fail;
	}
	p->fd_added = 1;
	loop_fd_name(l, p->fd, "probe");
	p->tsend = loop_timer_new(l, on_send_timer, p);
	p->tdead = loop_timer_new(l, on_deadline, p);
	/* first echo on the loop's next turn, then every interval */
	if (!p->tsend || !p->tdead || loop_timer_set(p->tsend, 1, p->interval_ns) < 0) {
		snprintf(err, errlen, "ping %s: timers: %s", p->dst_text, strerror(errno));
		goto fail;
	}
	loop_timer_name(p->tsend, "probe");
	loop_timer_name(p->tdead, "probe");
	return p;
fail:
	p->done = NULL;
	probe_ping_free(p);
	return NULL;
}

const struct probe_ping_result *probe_ping_result(const struct probe_ping *p)
{
	return p ? &p->res : NULL;
}

int probe_ping_finished(const struct probe_ping *p)
{
	return p && p->finished;
}

void probe_ping_free(struct probe_ping *p)
{
	if (!p)
		return;
	p->done = NULL;
	loop_timer_free(p->tsend);
	loop_timer_free(p->tdead);
	if (p->fd_added)
		loop_del_fd(p->l, p->fd);
	if (p->fd >= 0)
		close(p->fd);
	free(p->pkt);
	free(p);
}

static struct json_object *jdouble_or_null(int ok, double v)
{
	return ok ? jx_new_fixed(v, 3) : NULL;        /* ms to the microsecond */
}

int probe_ping_to_json(const struct probe_ping *p, struct json_object *obj)
{
	const struct probe_ping_result *r;
	struct json_object *arr;

	if (!p || !obj || !json_object_is_type(obj, json_type_object))
		return -1;
	r = &p->res;
	json_object_object_add(obj, "dst", json_object_new_string(p->dst_text));
	json_object_object_add(obj, "ifname",
			       p->ifname[0] ? json_object_new_string(p->ifname) : NULL);
	json_object_object_add(obj, "netns", json_object_new_string(p->nsname));
	json_object_object_add(obj, "family",
			       json_object_new_string(p->family == AF_INET6 ? "ipv6" : "ipv4"));
	json_object_object_add(obj, "method", json_object_new_string(r->method));
	if (p->ident_known)
		json_object_object_add(obj, "ident", json_object_new_int(p->ident));
	json_object_object_add(obj, "count", json_object_new_int64(p->count));
	json_object_object_add(obj, "size", json_object_new_int64(p->size));
	json_object_object_add(obj, "df", json_object_new_boolean(p->df));
	json_object_object_add(obj, "interval_ms",
			       jx_new_fixed((double)p->interval_ns / 1e6, 3));
	json_object_object_add(obj, "timeout_ms",
			       jx_new_fixed((double)p->timeout_ns / 1e6, 3));
	json_object_object_add(obj, "finished", json_object_new_boolean(p->finished));
	json_object_object_add(obj, "sent", json_object_new_int64(r->sent));
	json_object_object_add(obj, "received", json_object_new_int64(r->received));
	json_object_object_add(obj, "lost",
			       json_object_new_int64(r->sent > r->received ?
						     r->sent - r->received : 0));
	json_object_object_add(obj, "rtt_min_ms", jdouble_or_null(r->received, r->rtt_min_ms));
	json_object_object_add(obj, "rtt_avg_ms",
			       jdouble_or_null(r->received && p->finished, r->rtt_avg_ms));
	json_object_object_add(obj, "rtt_max_ms", jdouble_or_null(r->received, r->rtt_max_ms));
	json_object_object_add(obj, "error",
			       r->error[0] ? json_object_new_string(r->error) : NULL);
	arr = json_object_new_array();
	if (!arr)
		return -1;
	for (unsigned i = 0; i < p->next && i < PROBE_PING_MAX; i++) {
		struct json_object *e = json_object_new_object();

		if (!e)
			return -1;
		json_object_object_add(e, "seq", json_object_new_int(r->echo[i].seq));
		json_object_object_add(e, "sent_ns",
				       json_object_new_int64((int64_t)r->echo[i].sent_ns));
		json_object_object_add(e, "replied", json_object_new_boolean(r->echo[i].replied));
		json_object_object_add(e, "rtt_ms",
				       jdouble_or_null(r->echo[i].replied,
						       (double)r->echo[i].rtt_ns / 1e6));
		json_object_array_add(arr, e);
	}
	json_object_object_add(obj, "echoes", arr);
	return 0;
}
