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
};

#define EMU_MAX_WEDGES 64
#define EMU_ETH_P_LLDP 0x88cc
#define EMU_FCS_LEN 4
#define EMU_ROCE_PORT 4791	/* RoCEv2's UDP destination port (IANA) */

#endif
