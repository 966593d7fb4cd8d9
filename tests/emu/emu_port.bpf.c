// SPDX-License-Identifier: GPL-2.0
/* emu_port: the receive path of an emulated ConnectX-4 Lx port, as a tc
 * (tcx or clsact, direct-action) program on a veth.  Every frame counts at the
 * physical port; frames that pass count at the vport and in rx_packets;
 * frames of wedged flows, steering misses, buffer drops and firmware-consumed
 * LLDP frames are dropped in between.  One object is loaded per port.
 * Frames that pass return TC_ACT_UNSPEC (TCX_NEXT on tcx), so programs after
 * this one (a flow tracker: emu_bpf.c puts this one first) still see them,
 * the way the kernel sees only what the NIC delivered. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "emu.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct emu_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EMU_MAX_WEDGES);
	__type(key, struct emu_flow);
	__type(value, struct emu_wedge);
} wedges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct emu_cfg);
} cfg SEC(".maps");

enum cast { UC, MC, BC };

struct parsed {
	enum cast cast;
	int is_lldp;
	int has_flow;
	int is_data;
	int is_udp;
	struct emu_flow flow;
};

/* A frame of the RDMA transport: RoCEv2, or the port the test bed names
 * (emu_cfg.rdma_port) for an engine that stands in for one. */
static __always_inline int is_rdma(const struct parsed *p, const struct emu_cfg *k)
{
	if (!p->is_data)
		return 0;
	if (p->is_udp && p->flow.dport == bpf_htons(EMU_ROCE_PORT))
		return 1;
	return k && k->rdma_port && (p->flow.sport == k->rdma_port || p->flow.dport == k->rdma_port);
}

static __always_inline void parse(struct __sk_buff *skb, struct parsed *p)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	__u32 ihl, tot;

	p->cast = UC;
	if ((void *)(eth + 1) > end)
		return;
	if (eth->h_dest[0] & 1) {
		p->cast = MC;
		if ((eth->h_dest[0] & eth->h_dest[1] & eth->h_dest[2] &
		     eth->h_dest[3] & eth->h_dest[4] & eth->h_dest[5]) == 0xff)
			p->cast = BC;
	}
	if (eth->h_proto == bpf_htons(EMU_ETH_P_LLDP)) {
		p->is_lldp = 1;
		return;
	}
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end)
		return;
	ihl = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (ihl < sizeof(*ip) || tot < ihl)
		return;
	if (ip->frag_off & bpf_htons(0x1fff))	/* non-first fragment */
		return;
	p->flow.saddr = ip->saddr;
	p->flow.daddr = ip->daddr;
	p->flow.proto = ip->protocol;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *th = (void *)ip + ihl;

		if ((void *)(th + 1) > end)
			return;
		p->flow.sport = th->source;
		p->flow.dport = th->dest;
		p->has_flow = 1;
		p->is_data = tot > ihl + th->doff * 4;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *uh = (void *)ip + ihl;

		if ((void *)(uh + 1) > end)
			return;
		p->flow.sport = uh->source;
		p->flow.dport = uh->dest;
		p->has_flow = 1;
		p->is_data = 1;
		p->is_udp = 1;
	}
}

static __always_inline int flow_eq(const struct emu_flow *a, const struct emu_flow *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr &&
	       a->sport == b->sport && a->dport == b->dport && a->proto == b->proto;
}

/* The RFC 2819 length bucket of a frame of len bytes, FCS included, 0..9
 * from the 64-byte one (a frame under 64 bytes is a runt the port pads). */
static __always_inline int size_bucket(__u64 len)
{
	if (len <= 64)
		return 0;
	if (len <= 127)
		return 1;
	if (len <= 255)
		return 2;
	if (len <= 511)
		return 3;
	if (len <= 1023)
		return 4;
	if (len <= 1518)
		return 5;
	if (len <= 2047)
		return 6;
	if (len <= 4095)
		return 7;
	if (len <= 8191)
		return 8;
	return 9;
}

/* The frames skb is on the wire: a GSO packet leaves as gso_segs segments,
 * each of which a MAC counts. */
static __always_inline __u64 segs(struct __sk_buff *skb)
{
	return skb->gso_segs > 1 ? skb->gso_segs : 1;
}

/* The length on the wire, FCS included, of the largest frame of skb: a GSO
 * packet leaves as segments of gso_size payload after the headers (IPv4
 * TCP with timestamps: the emulated pair carries IPv4 only). */
static __always_inline __u64 wire_len(struct __sk_buff *skb)
{
	if (skb->gso_segs > 1 && skb->gso_size)
		return (__u64)skb->gso_size + 66 + EMU_FCS_LEN;  /* eth + ip + tcp, timestamps */
	return (__u64)skb->len + EMU_FCS_LEN;
}

SEC("tc")
int emu_rx(struct __sk_buff *skb)
{
	struct parsed p = {};
	struct emu_counters *c;
	struct emu_wedge *w;
	struct emu_cfg *k;
	__u32 zero = 0;
	__u64 len = skb->len;

	c = bpf_map_lookup_elem(&counters, &zero);
	k = bpf_map_lookup_elem(&cfg, &zero);
	if (!c || !k)
		return TC_ACT_UNSPEC;
	parse(skb, &p);

	/* RFC 2819 counts every frame by its length, bad ones too */
	c->v[EC_RX_B64 + size_bucket(wire_len(skb))]++;
	/* too long for the port's MTU: the MAC's error, not a frame
	 * received OK (emu.h, emu_cfg.mtu) */
	if (k->mtu && wire_len(skb) > EMU_MAX_FRAME(k->mtu)) {
		c->v[EC_RX_OVERSIZE] += segs(skb);
		return TC_ACT_SHOT;
	}

	/* the physical port sees everything */
	c->v[EC_RX_PHY_PKTS]++;
	c->v[EC_RX_PHY_BYTES] += len + EMU_FCS_LEN;
	if (p.cast == MC)
		c->v[EC_RX_PHY_MCAST]++;
	else if (p.cast == BC)
		c->v[EC_RX_PHY_BCAST]++;

	/* between port and vport: no counter but the reason's own */
	if (p.is_lldp) {
		c->v[EC_RX_FW_CONSUMED]++;
		return TC_ACT_SHOT;
	}
	if (p.has_flow) {
		w = bpf_map_lookup_elem(&wedges, &p.flow);
		if (w) {
			if (w->passed < w->after) {
				__sync_fetch_and_add(&w->passed, 1);
			} else if (w->limit && w->dropped >= w->limit) {
				/* mended by itself: steered to the vport again.
				 * While it held, the port counted the frames
				 * (en_stats.c pport_802_3_stats_desc
				 * "rx_packets_phy", PPCNT a_frames_received_ok)
				 * and the vport did not (vport_stats_desc
				 * "rx_vport_unicast_packets", QUERY_VPORT_COUNTER) */
			} else {
				__sync_fetch_and_add(&w->dropped, 1);
				c->v[EC_RX_WEDGE_DROPS]++;
				return TC_ACT_SHOT;
			}
		}
	}
	if (p.is_data && k->mode == EMU_STEER_MISS &&
	    (k->steer_all || flow_eq(&p.flow, &k->steer))) {
		c->v[EC_RX_STEER_MISSED]++;
		return TC_ACT_SHOT;
	}
	if (p.is_data && k->mode == EMU_BUFFER_DROP && k->every > 0) {
		__u64 seq = ++c->v[EC_BUF_SEQ];

		if (seq % k->every == 0) {
			c->v[EC_RX_OUT_OF_BUFFER]++;
			c->v[EC_RX_DISCARDS_PHY]++;
			return TC_ACT_SHOT;
		}
	}

	/* steered to the vport and delivered */
	if (p.cast == UC) {
		c->v[EC_RX_VP_UC_PKTS]++;
		c->v[EC_RX_VP_UC_BYTES] += len;
	} else if (p.cast == MC) {
		c->v[EC_RX_VP_MC_PKTS]++;
		c->v[EC_RX_VP_MC_BYTES] += len;
	} else {
		c->v[EC_RX_VP_BC_PKTS]++;
		c->v[EC_RX_VP_BC_BYTES] += len;
	}
	c->v[EC_RX_PKTS]++;
	c->v[EC_RX_BYTES] += len;
	if (p.is_data) {
		c->v[EC_RX_DATA_PKTS]++;
		c->v[EC_RX_DATA_BYTES] += len;
	}
	if (is_rdma(&p, k)) {
		c->v[EC_RX_RDMA_PKTS]++;
		c->v[EC_RX_RDMA_BYTES] += len;
	}
	return TC_ACT_UNSPEC;
}

SEC("tc")
int emu_tx(struct __sk_buff *skb)
{
	struct parsed p = {};
	struct emu_counters *c;
	struct emu_cfg *k;
	__u32 zero = 0;
	__u64 len = skb->len;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return TC_ACT_UNSPEC;
	parse(skb, &p);
	c->v[EC_TX_PHY_PKTS]++;
	c->v[EC_TX_PHY_BYTES] += len + EMU_FCS_LEN;
	if (p.cast == UC) {
		c->v[EC_TX_VP_UC_PKTS]++;
		c->v[EC_TX_VP_UC_BYTES] += len;
	} else if (p.cast == MC) {
		c->v[EC_TX_PHY_MCAST]++;
		c->v[EC_TX_VP_MC_PKTS]++;
		c->v[EC_TX_VP_MC_BYTES] += len;
	} else {
		c->v[EC_TX_PHY_BCAST]++;
		c->v[EC_TX_VP_BC_PKTS]++;
		c->v[EC_TX_VP_BC_BYTES] += len;
	}
	if (p.is_data) {
		c->v[EC_TX_DATA_PKTS]++;
		c->v[EC_TX_DATA_BYTES] += len;
	}
	k = bpf_map_lookup_elem(&cfg, &zero);
	if (is_rdma(&p, k)) {
		c->v[EC_TX_RDMA_PKTS]++;
		c->v[EC_TX_RDMA_BYTES] += len;
	}
	/* sent, and too long for the peer's port: its MAC counts it and
	 * drops it (emu.h EC_TXP_OVERSIZE). The frame left: the sender is
	 * told nothing. Neither a drop here (TC_ACT_SHOT: NET_XMIT_DROP in
	 * sch_handle_egress(), ENOBUFS to the sender) nor the veth's own
	 * (veth_xmit(): is_skb_forwardable() fails on the peer's smaller
	 * MTU, NET_XMIT_DROP too) is silent, and tcx has no "stolen"
	 * (tcx_action_code() reads it as TCX_NEXT): the frame goes to this
	 * namespace's loopback (ifindex 1), which takes it for another
	 * host's (eth_type_trans(): PACKET_OTHERHOST) and ip_rcv() drops. */
	if (k && k->peer_mtu && wire_len(skb) > EMU_MAX_FRAME(k->peer_mtu)) {
		c->v[EC_TXP_OVERSIZE] += segs(skb);
		c->v[EC_TXP_B64 + size_bucket(wire_len(skb))] += segs(skb);
		return bpf_redirect(1, 0);
	}
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
