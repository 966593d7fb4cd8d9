/* emu: structures shared by the emulated ConnectX port's tc program
 * (emu_port.bpf.c) and its loader (emuport.c).  Test bed only. */
#ifndef NICSTALL_EMU_H
#define NICSTALL_EMU_H

/* Counter slots of one port (one per-CPU array entry holds them all). */
enum emu_cnt {
	EC_RX_PHY_PKTS, EC_RX_PHY_BYTES, EC_RX_PHY_MCAST, EC_RX_PHY_BCAST,
	EC_RX_VP_UC_PKTS, EC_RX_VP_UC_BYTES, EC_RX_VP_MC_PKTS, EC_RX_VP_MC_BYTES,
	EC_RX_VP_BC_PKTS, EC_RX_VP_BC_BYTES,
	EC_RX_PKTS, EC_RX_BYTES,
	EC_RX_OUT_OF_BUFFER, EC_RX_DISCARDS_PHY, EC_RX_STEER_MISSED,
	EC_RX_WEDGE_DROPS, EC_RX_FW_CONSUMED,
	EC_RX_DATA_PKTS, EC_RX_DATA_BYTES,
	EC_TX_PHY_PKTS, EC_TX_PHY_BYTES, EC_TX_PHY_MCAST, EC_TX_PHY_BCAST,
	EC_TX_VP_UC_PKTS, EC_TX_VP_UC_BYTES, EC_TX_VP_MC_PKTS, EC_TX_VP_MC_BYTES,
	EC_TX_VP_BC_PKTS, EC_TX_VP_BC_BYTES,
	EC_TX_DATA_PKTS, EC_TX_DATA_BYTES,
	EC_BUF_SEQ,		/* per-CPU data frame sequence for buffer-drop */
	/* frames of the RDMA transport (emu_cfg.rdma_port): what the RDMA
	 * counters count, never TCP or ping */
	EC_RX_RDMA_PKTS, EC_RX_RDMA_BYTES, EC_TX_RDMA_PKTS, EC_TX_RDMA_BYTES,
	/* frames longer than the port's MTU: counted by the MAC as too long
	 * and dropped there (emu_cfg.mtu) */
	EC_RX_OVERSIZE,
	/* every frame the port sees by its length, FCS included, bad ones
	 * too (RFC 2819 etherStatsPkts64Octets...: en_stats.c
	 * pport_2819_stats_desc rx_64_bytes_phy .. rx_8192_to_10239_bytes_phy) */
	EC_RX_B64, EC_RX_B127, EC_RX_B255, EC_RX_B511, EC_RX_B1023, EC_RX_B1518,
	EC_RX_B2047, EC_RX_B4095, EC_RX_B8191, EC_RX_B10239,
	/* frames this port sent that are too long for its peer's port
	 * (emu_cfg.peer_mtu), and their length buckets: what the peer's MAC
	 * counts as too long (the veth would drop them before the peer's
	 * program sees them: is_skb_forwardable()), added to the peer's
	 * rx_oversize_pkts_phy and rx_*_bytes_phy when it publishes */
	EC_TXP_OVERSIZE, EC_TXP_B64, EC_TXP_B127, EC_TXP_B255, EC_TXP_B511, EC_TXP_B1023,
	EC_TXP_B1518, EC_TXP_B2047, EC_TXP_B4095, EC_TXP_B8191, EC_TXP_B10239,
	EC_NUM
};

struct emu_counters {
	__u64 v[EC_NUM];
};

/* An IPv4 flow as it arrives at the port; addresses and ports in network
 * byte order. */
struct emu_flow {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct emu_wedge {
	__u64 after;		/* frames of the flow let through first */
	__u64 passed;
	__u64 dropped;
	/* at most this many dropped, then the flow's frames reach the vport
	 * again with nothing done to the port (0: no end): a receive-filter
	 * state that mends itself, the stall that clears by itself */
	__u64 limit;
};

enum emu_mode { EMU_HEALTHY, EMU_BUFFER_DROP, EMU_STEER_MISS, EMU_FABRIC_FAULT };

struct emu_cfg {
	__u32 mode;
	__u32 every;		/* buffer-drop: every Nth data frame */
	__u32 steer_all;	/* steer-miss: every data frame, not one flow */
	/* The emulated RDMA transport: data frames to or from this UDP or TCP
	 * port (network byte order; 0: none) count as RDMA work, besides
	 * RoCEv2 (UDP 4791, EMU_ROCE_PORT). A real card counts RDMA requests
	 * only for its QPs (hw_counters rx_write_requests: a Q counter,
	 * QUERY_Q_COUNTER) and port_rcv_packets only for RoCE traffic
	 * (mlx5_ib pma_cnt_ext_assign(): received_ib_unicast + multicast). */
	__u16 rdma_port;
	__u16 pad;
	struct emu_flow steer;	/* steer-miss: the flow that misses */
	/* The port's MTU (0: as large as the veth's): a frame longer than
	 * MLX5E_SW2HW_MTU(mtu) = mtu + ETH_HLEN + VLAN_HLEN + ETH_FCS_LEN,
	 * the port's PMTU register as mlx5e_set_mtu() sets it, is too long:
	 * the MAC counts it (PPCNT 802.3 a_frame_too_long_errors, ethtool
	 * rx_oversize_pkts_phy) and drops it; it is not a frame received OK
	 * (a_frames_received_ok, rx_packets_phy) and never reaches the vport.
	 * A jumbo peer facing a port at 1500, or a switch between. */
	__u32 mtu;
	/* The peer port's MTU, for the frames this port sends it (0: none). */
	__u32 peer_mtu;
};

#define EMU_MAX_WEDGES 64
#define EMU_ETH_P_LLDP 0x88cc
#define EMU_FCS_LEN 4
#define EMU_VLAN_HLEN 4
/* the largest frame, FCS included, a port of MTU m takes: MLX5E_SW2HW_MTU */
#define EMU_MAX_FRAME(m) ((__u64)(m) + 14 + EMU_VLAN_HLEN + EMU_FCS_LEN)
#define EMU_NBUCKETS 10
#define EMU_ROCE_PORT 4791	/* RoCEv2's UDP destination port (IANA) */

#endif
