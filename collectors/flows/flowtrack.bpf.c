// SPDX-License-Identifier: GPL-2.0
/* flowtrack: per-flow frame/byte counters and last-seen times on a port, from
 * two tc direct-action programs (clsact ingress and egress).
 *
 * Parses Ethernet (+ one 802.1Q/802.1ad tag), IPv4 (non-first fragments are
 * skipped) or IPv6 (up to four hop-by-hop/routing/destination/fragment
 * extension headers), then TCP or UDP ports: the common frame in place
 * (direct packet access), the rest with bpf_skb_load_bytes(). Frames not
 * matching the selectors (rodata, set by the loader before load; none =
 * every TCP/UDP flow) cost the parse and no map access.
 *
 * Verdict: always TC_ACT_UNSPEC, never a drop. UNSPEC passes the frame like
 * TC_ACT_OK does but lets the next filter on the hook run, so a test
 * emulator's program at another priority still sees every frame. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "collectors/flows/flowtrack.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 ft_nsel = 0;
const volatile struct ft_sel ft_sels[FT_MAX_SEL] = {};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FT_DEFAULT_FLOWS);
	__type(key, struct ft_key);
	__type(value, struct ft_val);
} ft_flows SEC(".maps");

struct ft_vlan {
	__be16 tci;
	__be16 proto;
};

static __always_inline int ft_addr_in(const volatile struct ft_sel *s, const __u32 *a)
{
	return (a[0] & s->mask[0]) == s->net[0] && (a[1] & s->mask[1]) == s->net[1] &&
	       (a[2] & s->mask[2]) == s->net[2] && (a[3] & s->mask[3]) == s->net[3];
}

static __always_inline int ft_port_in(const volatile struct ft_sel *s, __u16 nport)
{
	__u16 p = bpf_ntohs(nport);

	return p >= s->port_lo && p <= s->port_hi;
}

static __always_inline int ft_selected(__u8 l4, const __u32 *sa, const __u32 *da,
				       __u16 sp, __u16 dp)
{
	__u32 i;

	if (ft_nsel == 0)
		return 1;
#pragma unroll
	for (i = 0; i < FT_MAX_SEL; i++) {
		const volatile struct ft_sel *s = &ft_sels[i];

		if (i >= ft_nsel)
			break;
		if (s->proto && s->proto != l4)
			continue;
		if (s->has_addr && !ft_addr_in(s, sa) && !ft_addr_in(s, da))
			continue;
		if ((s->port_lo || s->port_hi) && !ft_port_in(s, sp) && !ft_port_in(s, dp))
			continue;
		return 1;
	}
	return 0;
}

/* What the parse found of a frame. */
struct ft_frame {
	__u32 sa[4], da[4];
	__u16 ports[2];         /* network order, as on the wire */
	__u8 l4, tflags;
};

enum { FT_SKIP = 0, FT_WATCH = 1, FT_SLOW = 2 };

/* The common frame, read in place (direct packet access: no helper call
 * per header): Ethernet, optionally one VLAN tag, IPv4 without fragments or
 * IPv6 without extension headers, TCP or UDP, all of it in the linear part
 * of the skb. Anything else goes the slow way. */
static __always_inline int ft_parse_fast(struct __sk_buff *skb, struct ft_frame *f)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	__be16 proto;
	__u8 *l4p;

	if ((void *)(eth + 1) > end)
		return FT_SLOW;
	proto = eth->h_proto;
	data = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct ft_vlan *vh = data;

		if ((void *)(vh + 1) > end)
			return FT_SLOW;
		proto = vh->proto;
		data = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data;

		if ((void *)(ip + 1) > end)
			return FT_SLOW;
		if (ip->ihl != 5)
			return FT_SLOW;         /* options: the slow way */
		if (ip->frag_off & bpf_htons(0x1fff))
			return FT_SKIP;         /* not the first fragment */
		f->l4 = ip->protocol;
		f->sa[2] = f->da[2] = bpf_htonl(0xffff);
		f->sa[3] = ip->saddr;
		f->da[3] = ip->daddr;
		l4p = (__u8 *)(ip + 1);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data;

		if ((void *)(ip6 + 1) > end)
			return FT_SLOW;
		f->l4 = ip6->nexthdr;
		if (f->l4 != IPPROTO_TCP && f->l4 != IPPROTO_UDP)
			return FT_SLOW;         /* extension headers, or not ours */
		__builtin_memcpy(f->sa, &ip6->saddr, 16);
		__builtin_memcpy(f->da, &ip6->daddr, 16);
		l4p = (__u8 *)(ip6 + 1);
	} else {
		return FT_SKIP;
	}
	if (f->l4 != IPPROTO_TCP && f->l4 != IPPROTO_UDP)
		return FT_SKIP;
	if ((void *)(l4p + 4) > end)
		return FT_SLOW;
	__builtin_memcpy(f->ports, l4p, 4);
	if (f->l4 == IPPROTO_TCP) {
		if ((void *)(l4p + 14) > end)
			return FT_SLOW;
		f->tflags = l4p[13];
	}
	return FT_WATCH;
}

/* Any frame, header by header with bpf_skb_load_bytes(): IPv4 options,
 * up to four IPv6 extension headers, headers outside the linear part. */
static __always_inline int ft_parse_slow(struct __sk_buff *skb, struct ft_frame *f)
{
	struct ethhdr eth;
	__u32 off = ETH_HLEN, i;
	__be16 proto;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0)
		return FT_SKIP;
	proto = eth.h_proto;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct ft_vlan vh;

		if (bpf_skb_load_bytes(skb, off, &vh, sizeof(vh)) < 0)
			return FT_SKIP;
		proto = vh.proto;
		off += sizeof(vh);
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)) < 0)
			return FT_SKIP;
		if (ip.ihl < 5 || (ip.frag_off & bpf_htons(0x1fff)))
			return FT_SKIP;
		f->l4 = ip.protocol;
		f->sa[2] = bpf_htonl(0xffff);
		f->da[2] = bpf_htonl(0xffff);
		f->sa[3] = ip.saddr;
		f->da[3] = ip.daddr;
		off += ip.ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)) < 0)
			return FT_SKIP;
		f->l4 = ip6.nexthdr;
		__builtin_memcpy(f->sa, &ip6.saddr, 16);
		__builtin_memcpy(f->da, &ip6.daddr, 16);
		off += sizeof(ip6);
#pragma unroll
		for (i = 0; i < 4; i++) {
			__u8 eh[8];

			if (f->l4 != IPPROTO_HOPOPTS && f->l4 != IPPROTO_ROUTING &&
			    f->l4 != IPPROTO_DSTOPTS && f->l4 != IPPROTO_FRAGMENT)
				break;
			if (bpf_skb_load_bytes(skb, off, eh, sizeof(eh)) < 0)
				return FT_SKIP;
			if (f->l4 == IPPROTO_FRAGMENT) {
				if (((eh[2] << 8) | eh[3]) & 0xfff8)
					return FT_SKIP;   /* not the first */
				off += 8;
			} else {
				off += ((__u32)eh[1] + 1) * 8;
			}
			f->l4 = eh[0];
		}
	} else {
		return FT_SKIP;
	}
	if (f->l4 != IPPROTO_TCP && f->l4 != IPPROTO_UDP)
		return FT_SKIP;
	if (bpf_skb_load_bytes(skb, off, f->ports, sizeof(f->ports)) < 0)
		return FT_SKIP;
	if (f->l4 == IPPROTO_TCP && bpf_skb_load_bytes(skb, off + 13, &f->tflags, 1) < 0)
		f->tflags = 0;
	return FT_WATCH;
}

/* Per frame: the parse (in place for the common frame), the selectors,
 * then one map lookup and in-place atomic adds (an update only for the
 * first frame of a flow). No loop runs per frame but the unrolled
 * selector checks. */
static __always_inline int ft_track(struct __sk_buff *skb, const int egress)
{
	struct ft_frame f = {};
	struct ft_key k = {};
	struct ft_val *v;
	__u64 now, segs;
	int rc;

	rc = ft_parse_fast(skb, &f);
	if (rc == FT_SLOW) {
		__builtin_memset(&f, 0, sizeof(f));
		rc = ft_parse_slow(skb, &f);
	}
	if (rc != FT_WATCH || !ft_selected(f.l4, f.sa, f.da, f.ports[0], f.ports[1]))
		return TC_ACT_UNSPEC;

	if (egress) {
		__builtin_memcpy(k.laddr, f.sa, 16);
		__builtin_memcpy(k.raddr, f.da, 16);
		k.lport = f.ports[0];
		k.rport = f.ports[1];
	} else {
		__builtin_memcpy(k.laddr, f.da, 16);
		__builtin_memcpy(k.raddr, f.sa, 16);
		k.lport = f.ports[1];
		k.rport = f.ports[0];
	}
	k.proto = f.l4;

	now = bpf_ktime_get_ns();
	v = bpf_map_lookup_elem(&ft_flows, &k);
	if (!v) {
		struct ft_val nv = {};

		nv.first_ns = now;
		bpf_map_update_elem(&ft_flows, &k, &nv, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&ft_flows, &k);
		if (!v)
			return TC_ACT_UNSPEC;
	}
	segs = skb->gso_segs ? skb->gso_segs : 1;
	if (egress) {
		__sync_fetch_and_add(&v->tx_frames, segs);
		__sync_fetch_and_add(&v->tx_bytes, (__u64)skb->len);
		v->tx_last_ns = now;
		if (f.tflags & 0x02)
			v->flags[FT_SYN_TX] = 1;
		if (f.tflags & 0x01)
			v->flags[FT_FIN_TX] = 1;
		if (f.tflags & 0x04)
			v->flags[FT_RST_TX] = 1;
	} else {
		__sync_fetch_and_add(&v->rx_frames, segs);
		__sync_fetch_and_add(&v->rx_bytes, (__u64)skb->len);
		v->rx_last_ns = now;
		if (f.tflags & 0x02)
			v->flags[FT_SYN_RX] = 1;
		if (f.tflags & 0x01)
			v->flags[FT_FIN_RX] = 1;
		if (f.tflags & 0x04)
			v->flags[FT_RST_RX] = 1;
	}
	return TC_ACT_UNSPEC;
}

SEC("tc")
int ft_ingress(struct __sk_buff *skb)
{
	return ft_track(skb, 0);
}

SEC("tc")
int ft_egress(struct __sk_buff *skb)
{
	return ft_track(skb, 1);
}
