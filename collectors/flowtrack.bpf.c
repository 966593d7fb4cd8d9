// SPDX-License-Identifier: GPL-2.0
/* flowtrack: per-flow frame/byte counters and last-seen times on a port, from
 * two tc direct-action programs (clsact ingress and egress).
 *
 * Parses Ethernet (+ one 802.1Q/802.1ad tag), IPv4 (non-first fragments are
 * skipped) or IPv6 (up to four hop-by-hop/routing/destination/fragment
 * extension headers), then TCP or UDP ports. Frames not matching the
 * selectors (rodata, set by the loader before load; none = every TCP/UDP
 * flow) cost a few header loads and no map access.
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

#include "collectors/flowtrack.h"

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

static __always_inline int ft_track(struct __sk_buff *skb, const int egress)
{
	__u32 sa[4] = {}, da[4] = {};
	struct ethhdr eth;
	struct ft_key k = {};
	struct ft_val *v;
	__u16 ports[2];
	__u32 off = ETH_HLEN, i;
	__u8 l4, tflags = 0;
	__be16 proto;
	__u64 now, segs;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) < 0)
		return TC_ACT_UNSPEC;
	proto = eth.h_proto;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct ft_vlan vh;

		if (bpf_skb_load_bytes(skb, off, &vh, sizeof(vh)) < 0)
			return TC_ACT_UNSPEC;
		proto = vh.proto;
		off += sizeof(vh);
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)) < 0)
			return TC_ACT_UNSPEC;
		if (ip.ihl < 5 || (ip.frag_off & bpf_htons(0x1fff)))
			return TC_ACT_UNSPEC;
		l4 = ip.protocol;
		sa[2] = bpf_htonl(0xffff);
		da[2] = bpf_htonl(0xffff);
		sa[3] = ip.saddr;
		da[3] = ip.daddr;
		off += ip.ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)) < 0)
			return TC_ACT_UNSPEC;
		l4 = ip6.nexthdr;
		__builtin_memcpy(sa, &ip6.saddr, 16);
		__builtin_memcpy(da, &ip6.daddr, 16);
		off += sizeof(ip6);
#pragma unroll
		for (i = 0; i < 4; i++) {
			__u8 eh[8];

			if (l4 != IPPROTO_HOPOPTS && l4 != IPPROTO_ROUTING &&
			    l4 != IPPROTO_DSTOPTS && l4 != IPPROTO_FRAGMENT)
				break;
			if (bpf_skb_load_bytes(skb, off, eh, sizeof(eh)) < 0)
				return TC_ACT_UNSPEC;
			if (l4 == IPPROTO_FRAGMENT) {
				if (((eh[2] << 8) | eh[3]) & 0xfff8)
					return TC_ACT_UNSPEC;   /* not the first */
				off += 8;
			} else {
				off += ((__u32)eh[1] + 1) * 8;
			}
			l4 = eh[0];
		}
	} else {
		return TC_ACT_UNSPEC;
	}
	if (l4 != IPPROTO_TCP && l4 != IPPROTO_UDP)
		return TC_ACT_UNSPEC;
	if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) < 0)
		return TC_ACT_UNSPEC;
	if (!ft_selected(l4, sa, da, ports[0], ports[1]))
		return TC_ACT_UNSPEC;
	if (l4 == IPPROTO_TCP && bpf_skb_load_bytes(skb, off + 13, &tflags, 1) < 0)
		tflags = 0;

	if (egress) {
		__builtin_memcpy(k.laddr, sa, 16);
		__builtin_memcpy(k.raddr, da, 16);
		k.lport = ports[0];
		k.rport = ports[1];
	} else {
		__builtin_memcpy(k.laddr, da, 16);
		__builtin_memcpy(k.raddr, sa, 16);
		k.lport = ports[1];
		k.rport = ports[0];
	}
	k.proto = l4;

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
		if (tflags & 0x02)
			v->flags[FT_SYN_TX] = 1;
		if (tflags & 0x01)
			v->flags[FT_FIN_TX] = 1;
		if (tflags & 0x04)
			v->flags[FT_RST_TX] = 1;
	} else {
		__sync_fetch_and_add(&v->rx_frames, segs);
		__sync_fetch_and_add(&v->rx_bytes, (__u64)skb->len);
		v->rx_last_ns = now;
		if (tflags & 0x02)
			v->flags[FT_SYN_RX] = 1;
		if (tflags & 0x01)
			v->flags[FT_FIN_RX] = 1;
		if (tflags & 0x04)
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
