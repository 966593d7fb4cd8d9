/* emuport: what the files of build/emuport share (test bed only; private
 * to tests/emu/, while emu.h is what the tc program and its loader share).
 *
 *   emuport.c      main, options, set-up and teardown, the event loop, the
 *                  firmware-consumed LLDP frames
 *   emu_bpf.c      namespaces, tc attach/detach of emu_port.bpf.c, its maps
 *                  (the only file that includes the BPF skeleton)
 *   emu_link.c     rtnetlink link events into the mlx5 rx-mode model
 *                  (rxmode.h): the deferred work, clearing the wedges
 *   emu_publish.c  `ethtool -S` / `ethtool -i` text and the RDMA sysfs tree
 *   emu_ctl.c      the control socket OUTDIR/ctl.sock: commands, status, and
 *                  the `emuport ctl` client
 *   emu_pause.c    link-level flow control: a port paused by its peer */
#ifndef NICSTALL_EMUPORT_H
#define NICSTALL_EMUPORT_H

#include <net/if.h>
#include <stdint.h>
#include <time.h>

#include <linux/if_ether.h>
#include <linux/types.h>

#include "emu.h"
#include "rxmode.h"

#define MAX_PORTS 8

/* Values read from the counters map plus the ones made up in user space. */
enum { X_ZERO = EC_NUM, X_CRC, X_SYM, X_TX_PKTS, X_TX_BYTES,
       X_RX_PAUSE, X_RX_PAUSE_US, X_RX_PAUSE_TRANS, X_TX_PAUSE, X_TX_PAUSE_US, X_NVALS };

/* RDMA counters (ports/1/hw_counters, ports/1/counters) and the transport
 * errors a fabric fault moves; the name tables are in emu_publish.c. */
#define N_HW 31
#define N_IB 17
#define N_FAULT 8

struct emu_port;	/* the BPF skeleton (emu_bpf.c) */
struct mnl_socket;

struct port {
	char name[32], netns[64], ifname[IF_NAMESIZE], peer_name[32];
	int k, nsfd, ifindex, peer;
	struct emu_port *skel;
	int in_attached, eg_attached, hook_created;
	int link[2];			/* tcx: ingress, egress links; -1 (clsact) */
	struct mnl_socket *nl;	/* link events (RTMGRP_LINK) */
	struct mnl_socket *nlq;	/* link queries when the rx-mode work runs */
	unsigned int nlq_seq;
	struct rxm rx;		/* the driver's receive-filter state (rxmode.h) */
	int wfd;		/* timerfd: the queued rx-mode work is due */
	unsigned long wedges_cleared;
	struct emu_cfg cfg;
	int fault_always;
	int fwframes, pkt_fd;	/* pkt_fd: AF_PACKET in the PEER's namespace */
	unsigned char peer_mac[ETH_ALEN];
	uint64_t fw_injected, crc, sym, last_data, last_rdma;
	/* flow control (emu_pause.c): paused by the peer until pause_until
	 * (CLOCK_MONOTONIC ns, 0: not), what it received and its peer sent */
	uint64_t pause_until, pause_last, pause_ep_us;
	uint64_t pause_us, pause_frames, pause_transitions, pause_sent, pause_sent_us;
	uint64_t fault[N_FAULT];
	/* RDMA counter files, kept open and rewritten in place like sysfs */
	uint64_t hw_last[N_HW], ib_last[N_IB];
	int hw_fd[N_HW], ib_fd[N_IB];
	unsigned char hw_len[N_HW], ib_len[N_IB];
	char dev_dir[1280];
};

struct emu {
	char dir[1024];
	struct port p[MAX_PORTS];
	int np, ncpus, ep, tfd, sfd, lfd;
	int rx_deferred;	/* --rx-mode-delay given (not "instant") */
	uint64_t rx_delay_ns;
	uint16_t rdma_port;	/* --rdma-port, network byte order (0: none) */
	unsigned long ticks;
	uint32_t rnd;
};

/* One RTM_NEWLINK of a port's interface (emu_link.c). */
struct link_state {
	int ifindex, found;
	uint32_t promiscuity;	/* IFLA_PROMISCUITY: dev->promiscuity, the count */
	int flag;		/* ifi_flags IFF_PROMISC: dev->gflags, the user flag */
};

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline const char *onoff(int v)
{
	return v ? "on" : "off";
}

/* emuport.c */
void logx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct port *find_port(struct emu *e, const char *name);
int fw_open(struct emu *e, struct port *p);

/* emu_bpf.c */
int ns_enter(const struct port *p, int *saved);
void ns_leave(int saved);
int port_attach(struct port *p);	/* load the program, attach, open rtnetlink */
void port_detach(struct port *p);
void port_unload(struct port *p);	/* destroy the skeleton */
int cfg_push(struct port *p);
int read_counters(struct emu *e, struct port *p, uint64_t *v);	/* v[X_NVALS] */
int clear_wedges(struct port *p);
int wedge_set(struct port *p, const struct emu_flow *f, const struct emu_wedge *w);
int wedge_del(struct port *p, const struct emu_flow *f);
int wedges_fd(const struct port *p);

/* emu_link.c */
int link_read(struct port *p, struct link_state *ls);
void nl_read(struct port *p);
void rx_work_if_due(struct port *p);

/* emu_publish.c */
int mkdirs(const char *path);
int publish_static(struct emu *e, struct port *p);
void publish(struct emu *e, struct port *p);

/* emu_pause.c */
int pause_start(struct emu *e, struct port *p, uint64_t ms, char *err, size_t len);
void pause_tick(struct emu *e, struct port *p);

/* emu_ctl.c */
int parse_rx_delay(const char *s, int *deferred, uint64_t *ns);
void ctl_accept(struct emu *e);
int ctl_client(const char *dir, int argc, char **argv);

#endif
