/* flowtrack: structs shared by the tc eBPF flow tracker (flowtrack.bpf.c) and
 * its loader (flowtrack.c). Plain fixed-width types only: this header is
 * compiled both by clang -target bpf and by the host compiler. */
#ifndef NICSTALL_FLOWTRACK_H
#define NICSTALL_FLOWTRACK_H

#include <linux/types.h>

#define FT_MAX_SEL 8            /* selectors checked in BPF */
#define FT_DEFAULT_FLOWS 16384  /* LRU map size unless the loader says */

/* Map key: the flow as seen from this host. Ingress frame: local = its
 * destination; egress frame: local = its source. So both directions of a
 * conversation with a remote peer land in one entry. Addresses are IPv6,
 * IPv4 as ::ffff:a.b.c.d; ports in network order; pad is always zero. */
struct ft_key {
	__u8 laddr[16];
	__u8 raddr[16];
	__u16 lport, rport;     /* network order */
	__u8 proto;             /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad[3];
};

/* TCP flags seen, one byte each so BPF can set them without atomics
 * (every writer stores 1). */
enum {
	FT_SYN_RX, FT_SYN_TX, FT_FIN_RX, FT_FIN_TX, FT_RST_RX, FT_RST_TX, FT_NFLAGS
};

/* Map value. rx = towards this host (ingress), tx = from it (egress).
 * Frames count GSO segments; bytes are L2 lengths (skb->len). Times are
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC). Counters updated with atomic adds. */
struct ft_val {
	__u64 rx_frames, rx_bytes;
	__u64 tx_frames, tx_bytes;
	__u64 rx_last_ns, tx_last_ns;
	__u64 first_ns;
	__u8 flags[8];          /* [FT_SYN_RX ..] = 1 when seen */
};

/* One selector in BPF form (rodata, set before load). An address selector
 * matches either end: (addr & mask) == net, per 32-bit word. Ports host
 * order, either end, 0-0 any. proto 0 any. */
struct ft_sel {
	__u32 net[4];
	__u32 mask[4];
	__u16 port_lo, port_hi;
	__u8 proto;
	__u8 has_addr;
	__u8 pad[2];
};

/* Bits of flow_obs.state for FLOW_SRC_BPF observations. */
#define FT_STATE_SYN_RX (1u << FT_SYN_RX)
#define FT_STATE_SYN_TX (1u << FT_SYN_TX)
#define FT_STATE_FIN_RX (1u << FT_FIN_RX)
#define FT_STATE_FIN_TX (1u << FT_FIN_TX)
#define FT_STATE_RST_RX (1u << FT_RST_RX)
#define FT_STATE_RST_TX (1u << FT_RST_TX)

#endif
