/* flows: one observation of one flow's progress, from any flow source.
 *
 * Flow sources (engine shared-memory tables, the eBPF tc tracker, sock_diag,
 * and the readers of unmodified bypass engines: Onload, VMA/XLIO, RDMA queue
 * pairs) report what they see as struct flow_obs; the stall detector
 * (daemon/detect/stall.c, daemon/detect/liveness.c) merges them. Every time is
 * CLOCK_MONOTONIC nanoseconds, 0 when unknown. */
#ifndef NICSTALL_FLOWS_H
#define NICSTALL_FLOWS_H

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

enum flow_src_kind {
	FLOW_SRC_ENGINE = 1,    /* an engine's flow table (bypass traffic) */
	FLOW_SRC_BPF = 2,       /* tc eBPF tracker on the port */
	FLOW_SRC_SOCK = 3,      /* kernel TCP socket via sock_diag */
	FLOW_SRC_ONLOAD = 4,    /* Onload stacks (orm_json / onload_stackdump) */
	FLOW_SRC_VMA = 5,       /* libvma vmastat.<pid> / libxlio xliostat.<pid> */
	FLOW_SRC_RDMAQP = 6,    /* RDMA queue pairs (RDMA_NLDEV_CMD_RES_QP_GET) */
};

/* The pseudo protocol of an RDMA queue pair's key (IANA "experimentation"):
 * a QP has no addresses. saddr.s6_addr32[0] holds the RDMA device index,
 * [1] the local QP number; daddr.s6_addr32[1] the remote QP number (RC/UC,
 * else 0); the ports are 0. flow_key_format() prints "qp 2/0x11 -> 0x22". */
#define FLOW_PROTO_QP 253

/* Addresses and ports in network byte order, as on the wire. IPv4 addresses
 * are stored as IPv4-mapped IPv6 (::ffff:a.b.c.d) so one key fits both. */
struct flow_key {
	struct in6_addr saddr, daddr;
	uint16_t sport, dport;
	uint8_t proto;          /* IPPROTO_TCP, IPPROTO_UDP */
	uint8_t pad[3];
};

/* Fill key k (zeroed first, padding included: keys are compared and hashed
 * as bytes) from 16-byte addresses and network-order ports, as the owner
 * sees them (local, remote). The one fill of every source whose record
 * already holds IPv6 or IPv4-mapped addresses. */
static inline void flow_key_set(struct flow_key *k, const void *laddr, const void *raddr,
				uint16_t lport, uint16_t rport, uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	memcpy(&k->saddr, laddr, 16);
	memcpy(&k->daddr, raddr, 16);
	k->sport = lport;
	k->dport = rport;
	k->proto = proto;
}

struct flow_obs {
	enum flow_src_kind src;
	struct flow_key key;    /* local = s*, remote = d* (as the owner sees it) */
	uint64_t session;       /* engine session id; 0 for others */
	uint64_t tx_msgs, rx_msgs;      /* messages (engine) or frames (BPF) */
	uint64_t tx_bytes, rx_bytes;
	uint64_t last_tx_ns, last_rx_ns;
	uint64_t last_ack_ns;   /* sock: the last acknowledgement received */
	/* sock: when the oldest unacknowledged data was first sent, once it
	 * has been retransmitted (each retransmission moves last_tx_ns); 0
	 * otherwise or unknown */
	uint64_t unacked_since_ns;
	uint64_t unsent, unread, staged; /* bytes held (engine) / queues (sock) */
	uint64_t inflight;      /* sock: sent, not yet acknowledged (not held) */
	uint32_t retrans;       /* sock_diag: total retransmits */
	/* When the sender will next try again (a TCP retransmission, an engine's
	 * resend), CLOCK_MONOTONIC ns, 0 unknown; and the retransmission timeout
	 * then in force (0 unknown). A release shows only at such a retry. */
	uint64_t retry_due_ns;
	uint64_t rto_ns;
	uint32_t state;         /* engine state word or TCP state */
	int32_t pid;            /* owner pid, 0 when unknown */
	uint64_t inode;         /* socket inode (sock_diag), 0 otherwise */
	char engine[32];        /* engine name or "" */
	/* Who wrote what this observation came from (the table file's owner;
	 * the socket's uid): limits are kept per owner, so one user's flood of
	 * flows costs only that user's flows. */
	uint32_t uid;
	uint8_t uid_known;      /* 0: uid not known (tracker frames) */
	/* Sources that judge liveness themselves (Onload, VMA/XLIO, RDMA QPs:
	 * collectors/flows/flow_live.h) say so here, the detector takes it as is:
	 * live is an enum flow_live verdict + 1 (0: the source gives none),
	 * live_since_ns when WAITING/HELD/FAILED began (0 otherwise). Kernel
	 * TCP gives FLOW_LIVE_PROGRESS for a young wait its kernel watch
	 * holds (queued in the watch's wheel, the kernel posts it if it
	 * lasts: sockdiag_watch.c sd_watch_held), which the detector then
	 * does not follow, and none otherwise. */
	uint8_t live;
	uint64_t live_since_ns;
	/* Sources whose observations are claims a process wrote (engine
	 * tables, VMA/XLIO statistics files) say whether the kernel backs
	 * the claim (collectors/flows/claimv.h): enum flow_claim. */
	uint8_t claim;
	/* The source reports this flow again within keep_ns at the latest
	 * (the kernel-event watch: a socket that owes nothing is read
	 * rarely, the kernel says when it waits); the detector keeps it
	 * that long unseen. 0: LIVENESS_GONE_NS. */
	uint64_t keep_ns;
	/* When what this observation says was so (CLOCK_MONOTONIC ns): the
	 * dump or run it came from, the earliest time the engine could have
	 * copied it, for sources that emit their last observations again
	 * between reads (RDMA QPs, Onload, VMA/XLIO). 0: when it is emitted
	 * (the kernel's and the engine tables' live views). The detector
	 * dates "last seen stalled" by it, so a release is never placed
	 * before the data that showed the stall. */
	uint64_t data_ns;
};

enum flow_claim {
	FLOW_CLAIM_UNCHECKED = 0,       /* not checked (yet) */
	FLOW_CLAIM_VERIFIED = 1,        /* the kernel agrees */
	FLOW_CLAIM_UNVERIFIED = 2,      /* checked; the kernel does not */
};

/* Is this observation a claim written by a process (not the kernel's or
 * an engine driver's own view)? */
static inline int flow_obs_is_claim(const struct flow_obs *o)
{
	return o->src == FLOW_SRC_ENGINE || o->src == FLOW_SRC_VMA;
}

/* May the daemon act on this flow: open or join an incident (captures,
 * the reprogram)? Only the kernel's own views, and claims the kernel
 * verified. An unverified flow is shown, never acted on. */
static inline int flow_obs_may_act(const struct flow_obs *o)
{
	return !flow_obs_is_claim(o) || o->claim == FLOW_CLAIM_VERIFIED;
}

typedef void (*flow_emit_fn)(const struct flow_obs *o, void *arg);

/* Kernel TCP (FLOW_SRC_SOCK): is one side owed something? Bytes unsent,
 * unacknowledged or unread; or, for request/response traffic (data
 * segments each way have matched so far), one message unanswered: the
 * reply never came, or the request was read and never answered, with every
 * byte acknowledged. The detector's definition (daemon/detect/liveness.c), which
 * sock_diag shares to read a socket that owes nothing less often. */
static inline int flow_obs_sock_waiting(const struct flow_obs *o)
{
	return o->unsent > 0 || o->inflight > 0 || o->unread > 0 ||
	       (o->tx_msgs > 1 && o->rx_msgs > 1 &&
		(o->tx_msgs == o->rx_msgs + 1 || o->rx_msgs == o->tx_msgs + 1));
}

/* The furthest back the detector believes a source's start of a wait
 * (daemon/detect/liveness.c wait_start): one older is dated at the poll
 * that sees it. */
#define FLOW_WAIT_BACK_MAX_NS 10000000000ull

/* When the wait of a waiting sock flow began by the kernel's own clocks:
 * when the peer owes us (bytes unacknowledged or unsent, a request
 * unanswered) the last data sent, or the first sending of what has been
 * retransmitted since; else the last data received. 0: unknown. */
static inline uint64_t flow_obs_sock_wait_from(const struct flow_obs *o)
{
	if (o->unsent || o->inflight || o->tx_msgs > o->rx_msgs)
		return o->unacked_since_ns ? o->unacked_since_ns : o->last_tx_ns;
	return o->last_rx_ns;
}

/* A flow selector: which flows a port watches (0 / unspecified = any). */
struct flow_sel {
	uint8_t proto;
	uint8_t family;         /* 0 (any), AF_INET or AF_INET6 */
	struct in6_addr addr;   /* matches either end when family != 0 */
	uint8_t prefix;         /* prefix length in the IPv6-mapped sense */
	uint16_t port_lo, port_hi; /* host order, matches either end; 0-0 any */
};

#endif
