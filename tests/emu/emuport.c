/* emuport: an emulated ConnectX-4 Lx port pair for tests and the demo.
 *
 * Loads tests/emu/emu_port.bpf.c on the veth of each port (tc clsact ingress
 * and egress, inside the port's namespace), publishes the counters as
 * `ethtool -S` / `ethtool -i` text (atomic replace, 100 times a second) and
 * an RDMA sysfs tree (counter files rewritten in place when they change, so
 * a reader may keep them open and pread at 0 as on sysfs) under OUTDIR,
 * clears a port's wedges when its receive filters are reprogrammed (a real
 * promiscuous transition, seen through rtnetlink and modelled as the mlx5
 * driver applies it: rxmode.h), injects firmware-consumed LLDP frames, and
 * takes line commands on OUTDIR/ctl.sock.
 *
 *   emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] [--port ...]
 *               [--fw-frames] [--rx-mode-delay MS|instant]
 *   emuport ctl OUTDIR COMMAND...
 *
 * --rx-mode-delay MS: the driver model.  Each link change queues the
 * driver's set_rx_mode work (coalesced while it is pending); it runs MS
 * milliseconds later (0 allowed, fractions to the microsecond), reads the
 * promiscuity count at that moment and clears the wedges only when
 * "count > 0" differs from the state it applied last.  Without the option
 * (or with "instant") every link message whose "count > 0" differs from
 * the previous message's clears the wedges at once: the former behaviour,
 * kept as the default until the daemon's reprogram holds its state long
 * enough for the driver (issue #10). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "emu.h"
#include "emu_port.skel.h"
#include "rxmode.h"

#define MAX_PORTS 8
#define TICK_NS 10000000L	/* publish every 10 ms */
#define LLDP_TICKS 100		/* one LLDP frame a second */
#define TC_HANDLE 0xe5e1
#define TC_PRIO 7		/* before a flow tracker (use > 7 there) */
#define FW_VER "14.17.1010"
#define PSID "MT_2420110034"

enum { X_ZERO = EC_NUM, X_CRC, X_SYM, X_TX_PKTS, X_TX_BYTES, X_NVALS };

/* `ethtool -S` of a ConnectX-4 Lx (mlx5_core, kernel 4.15-6.x names). */
static const struct { const char *name; int src; } ethtool_names[] = {
	{ "rx_packets", EC_RX_PKTS }, { "rx_bytes", EC_RX_BYTES },
	{ "tx_packets", X_TX_PKTS }, { "tx_bytes", X_TX_BYTES },
	{ "rx_csum_none", X_ZERO }, { "rx_wqe_err", X_ZERO },
	{ "rx_buff_alloc_err", X_ZERO }, { "tx_queue_dropped", X_ZERO },
	{ "link_down_events_phy", X_ZERO },
	{ "rx_out_of_buffer", EC_RX_OUT_OF_BUFFER },
	{ "rx_steer_missed_packets", EC_RX_STEER_MISSED },
	{ "rx_vport_unicast_packets", EC_RX_VP_UC_PKTS },
	{ "rx_vport_unicast_bytes", EC_RX_VP_UC_BYTES },
	{ "tx_vport_unicast_packets", EC_TX_VP_UC_PKTS },
	{ "tx_vport_unicast_bytes", EC_TX_VP_UC_BYTES },
	{ "rx_vport_multicast_packets", EC_RX_VP_MC_PKTS },
	{ "rx_vport_multicast_bytes", EC_RX_VP_MC_BYTES },
	{ "tx_vport_multicast_packets", EC_TX_VP_MC_PKTS },
	{ "tx_vport_multicast_bytes", EC_TX_VP_MC_BYTES },
	{ "rx_vport_broadcast_packets", EC_RX_VP_BC_PKTS },
	{ "rx_vport_broadcast_bytes", EC_RX_VP_BC_BYTES },
	{ "tx_vport_broadcast_packets", EC_TX_VP_BC_PKTS },
	{ "tx_vport_broadcast_bytes", EC_TX_VP_BC_BYTES },
	{ "rx_vport_rdma_unicast_packets", X_ZERO },
	{ "rx_vport_rdma_unicast_bytes", X_ZERO },
	{ "tx_vport_rdma_unicast_packets", X_ZERO },
	{ "tx_vport_rdma_unicast_bytes", X_ZERO },
	{ "rx_vport_rdma_multicast_packets", X_ZERO },
	{ "rx_vport_rdma_multicast_bytes", X_ZERO },
	{ "tx_vport_rdma_multicast_packets", X_ZERO },
	{ "tx_vport_rdma_multicast_bytes", X_ZERO },
	{ "tx_packets_phy", EC_TX_PHY_PKTS }, { "rx_packets_phy", EC_RX_PHY_PKTS },
	{ "rx_crc_errors_phy", X_CRC },
	{ "tx_bytes_phy", EC_TX_PHY_BYTES }, { "rx_bytes_phy", EC_RX_PHY_BYTES },
	{ "tx_multicast_phy", EC_TX_PHY_MCAST }, { "tx_broadcast_phy", EC_TX_PHY_BCAST },
	{ "rx_multicast_phy", EC_RX_PHY_MCAST }, { "rx_broadcast_phy", EC_RX_PHY_BCAST },
	{ "rx_in_range_len_errors_phy", X_ZERO }, { "rx_out_of_range_len_phy", X_ZERO },
	{ "rx_oversize_pkts_phy", X_ZERO }, { "rx_symbol_err_phy", X_SYM },
	{ "tx_mac_control_phy", X_ZERO }, { "rx_mac_control_phy", X_ZERO },
	{ "rx_unsupported_op_phy", X_ZERO }, { "rx_pause_ctrl_phy", X_ZERO },
	{ "tx_pause_ctrl_phy", X_ZERO },
	{ "rx_discards_phy", EC_RX_DISCARDS_PHY }, { "tx_discards_phy", X_ZERO },
	{ "tx_errors_phy", X_ZERO }, { "rx_undersize_pkts_phy", X_ZERO },
	{ "rx_fragments_phy", X_ZERO }, { "rx_jabbers_phy", X_ZERO },
	{ "rx_pcs_symbol_err_phy", X_ZERO }, { "rx_corrected_bits_phy", X_ZERO },
	{ "rx_buffer_passed_thres_phy", X_ZERO },
	{ "rx_prio0_bytes", EC_RX_PHY_BYTES }, { "rx_prio0_packets", EC_RX_PHY_PKTS },
	{ "rx_prio0_discards", EC_RX_DISCARDS_PHY },
	{ "tx_prio0_bytes", EC_TX_PHY_BYTES }, { "tx_prio0_packets", EC_TX_PHY_PKTS },
	{ "rx_prio0_buf_discard", X_ZERO }, { "rx_prio0_cong_discard", X_ZERO },
	{ "rx_prio0_marked", X_ZERO },
	{ "rx_global_pause", X_ZERO }, { "tx_global_pause", X_ZERO },
	{ "module_unplug", X_ZERO }, { "module_bus_stuck", X_ZERO },
	{ "module_high_temp", X_ZERO },
};

/* RDMA counters: ports/1/hw_counters and ports/1/counters. */
enum { H_WORK = -2, H_OOB = -3, H_LIFESPAN = -4, H_FAULT = 0 };
static const char *const hw_names[] = {
	"duplicate_request", "implied_nak_seq_err", "lifespan",
	"local_ack_timeout_err", "np_cnp_sent", "np_ecn_marked_roce_packets",
	"out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
	"req_cqe_flush_error", "req_remote_access_errors",
	"req_remote_invalid_request", "req_transport_retries_exceeded",
	"resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error",
	"resp_remote_access_errors", "rnr_nak_retry_err", "roce_adp_retrans",
	"roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
	"roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored",
	"rx_atomic_requests", "rx_dct_connect", "rx_icrc_encapsulated",
	"rx_read_requests", "rx_write_requests",
};
#define N_HW (sizeof(hw_names) / sizeof(hw_names[0]))
/* the transport errors a fabric fault moves */
static const char *const fault_names[] = {
	"implied_nak_seq_err", "local_ack_timeout_err", "out_of_sequence",
	"packet_seq_err", "req_cqe_error", "req_transport_retries_exceeded",
	"roce_adp_retrans", "roce_adp_retrans_to",
};
static const char *const ib_names[] = {
	"port_rcv_packets", "port_rcv_data", "port_xmit_packets", "port_xmit_data",
	"port_rcv_errors", "symbol_error", "link_downed", "link_error_recovery",
	"port_xmit_discards", "port_rcv_remote_physical_errors",
	"port_rcv_switch_relay_errors", "local_link_integrity_errors",
	"excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_wait",
	"port_rcv_constraint_errors", "port_xmit_constraint_errors",
};
#define N_IB (sizeof(ib_names) / sizeof(ib_names[0]))

static const char *const mode_names[] = { "healthy", "buffer-drop", "steer-miss",
					  "fabric-fault" };

struct port {
	char name[32], netns[64], ifname[IF_NAMESIZE], peer_name[32];
	int k, nsfd, ifindex, peer;
	struct emu_port *skel;
	int in_attached, eg_attached, hook_created;
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
	uint64_t fw_injected, crc, sym, last_data;
	uint64_t fault[sizeof(fault_names) / sizeof(fault_names[0])];
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
	unsigned long ticks;
	uint32_t rnd;
};

static void logx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("emuport: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int libbpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG)
		return 0;
	fputs("emuport: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static uint32_t rnd(struct emu *e)
{
	e->rnd ^= e->rnd << 13;
	e->rnd ^= e->rnd >> 17;
	e->rnd ^= e->rnd << 5;
	return e->rnd;
}

/* ---- namespaces ---- */

static int ns_enter(const struct port *p, int *saved)
{
	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0)
		return -1;
	if (setns(p->nsfd, CLONE_NEWNET) < 0) {
		int e = errno;

		close(*saved);
		errno = e;
		return -1;
	}
	return 0;
}

static void ns_leave(int saved)
{
	if (setns(saved, CLONE_NEWNET) < 0)
		logx("setns back to own namespace: %s", strerror(errno));
	close(saved);
}

/* ---- files ---- */

static int write_atomic(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, n;

	n = snprintf(tmp, sizeof(tmp), "%.*s/.%s.tmp", (int)(slash - path), path, slash + 1);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Rewrite a counter file in place (a reader may keep it open and pread at
 * 0, as with sysfs); counters only grow, so the length rarely shrinks. */
static int put_u64(int fd, unsigned char *len, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);

	if (pwrite(fd, buf, (size_t)n, 0) != n || (n < *len && ftruncate(fd, n) < 0))
		return -1;
	*len = (unsigned char)n;
	return 0;
}

static int open_counter(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		logx("create %s: %s", path, strerror(errno));
	return fd;
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* ---- tc attach / detach ---- */

static int count_filters_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWTFILTER)
		(*(int *)data)++;
	return MNL_CB_OK;
}

/* Filters on one clsact direction of ifindex (caller is in the namespace);
 * -1 on error. */
static int count_filters(int ifindex, uint32_t parent)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	int n = 0, ret;
	unsigned int seq = (unsigned int)time(NULL);

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		if (nl)
			mnl_socket_close(nl);
		return -1;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		mnl_socket_close(nl);
		return -1;
	}
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, mnl_socket_get_portid(nl),
				 count_filters_cb, &n);
		if (ret <= MNL_CB_STOP)
			break;
	}
	mnl_socket_close(nl);
	return ret < 0 ? -1 : n;
}

static void port_detach(struct port *p)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIO);
	int saved, err, nin, neg;

	if (!p->in_attached && !p->eg_attached)
		return;
	if (ns_enter(p, &saved) < 0) {
		logx("port %s: enter netns %s: %s", p->name, p->netns, strerror(errno));
		return;
	}
	hook.attach_point = BPF_TC_INGRESS;
	if (p->in_attached && (err = bpf_tc_detach(&hook, &opts)) < 0)
		logx("port %s: detach ingress filter from %s in netns %s: %s",
		     p->name, p->ifname, p->netns, strerror(-err));
	opts.flags = opts.prog_fd = opts.prog_id = 0;
	hook.attach_point = BPF_TC_EGRESS;
	if (p->eg_attached && (err = bpf_tc_detach(&hook, &opts)) < 0)
		logx("port %s: detach egress filter from %s in netns %s: %s",
		     p->name, p->ifname, p->netns, strerror(-err));
	p->in_attached = p->eg_attached = 0;
	/* the clsact qdisc goes only when nobody else's filter is left on it */
	nin = count_filters(p->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS));
	neg = count_filters(p->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS));
	if (nin == 0 && neg == 0) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		err = bpf_tc_hook_destroy(&hook);
		if (err < 0 && err != -ENOENT)
			logx("port %s: delete clsact on %s in netns %s: %s",
			     p->name, p->ifname, p->netns, strerror(-err));
	}
	ns_leave(saved);
}

static int port_attach(struct port *p)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIO,
			    .flags = BPF_TC_F_REPLACE);
	int saved, err = 0;
	const char *what = "";

	p->skel = emu_port__open_and_load();
	if (!p->skel) {
		logx("port %s: load emu_port BPF object: %s", p->name, strerror(errno));
		return -1;
	}
	if (ns_enter(p, &saved) < 0) {
		logx("port %s: enter netns %s: %s", p->name, p->netns, strerror(errno));
		return -1;
	}
	p->ifindex = (int)if_nametoindex(p->ifname);
	if (!p->ifindex) {
		err = -errno;
		what = "find interface";
		goto out;
	}
	hook.ifindex = p->ifindex;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		what = "create clsact";
		goto out;
	}
	p->hook_created = !err;
	opts.prog_fd = bpf_program__fd(p->skel->progs.emu_rx);
	if ((err = bpf_tc_attach(&hook, &opts)) < 0) {
		what = "attach ingress";
		goto out;
	}
	p->in_attached = 1;
	hook.attach_point = BPF_TC_EGRESS;
	opts.prog_fd = bpf_program__fd(p->skel->progs.emu_tx);
	opts.prog_id = 0;
	if ((err = bpf_tc_attach(&hook, &opts)) < 0) {
		what = "attach egress";
		goto out;
	}
	p->eg_attached = 1;
	p->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!p->nl || mnl_socket_bind(p->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		what = "open rtnetlink";
		goto out;
	}
	/* a second socket for the work's own reading, so a reply is never
	 * mistaken for (or queued behind) an event */
	p->nlq = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!p->nlq || mnl_socket_bind(p->nlq, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(p->nlq), SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){ .tv_usec = 200000 }, sizeof(struct timeval)) < 0) {
		err = -errno;
		what = "open rtnetlink (queries)";
	}
out:
	ns_leave(saved);
	if (err < 0)
		logx("port %s: %s on %s in netns %s: %s", p->name, what, p->ifname,
		     p->netns, strerror(-err));
	return err < 0 ? -1 : 0;
}

/* ---- BPF maps ---- */

static int cfg_push(struct port *p)
{
	__u32 zero = 0;

	return bpf_map__update_elem(p->skel->maps.cfg, &zero, sizeof(zero), &p->cfg,
				    sizeof(p->cfg), BPF_ANY);
}

static int read_counters(struct emu *e, struct port *p, uint64_t *v)
{
	size_t sz = sizeof(struct emu_counters) * (size_t)e->ncpus;
	struct emu_counters *pc = calloc(1, sz);
	__u32 zero = 0;
	int rc = -1;

	memset(v, 0, sizeof(*v) * X_NVALS);
	if (pc && bpf_map__lookup_elem(p->skel->maps.counters, &zero, sizeof(zero),
				       pc, sz, 0) == 0) {
		for (int c = 0; c < e->ncpus; c++)
			for (int i = 0; i < EC_NUM; i++)
				v[i] += pc[c].v[i];
		rc = 0;
	}
	free(pc);
	v[X_CRC] = p->crc;
	v[X_SYM] = p->sym;
	v[X_TX_PKTS] = v[EC_TX_VP_UC_PKTS] + v[EC_TX_VP_MC_PKTS] + v[EC_TX_VP_BC_PKTS];
	v[X_TX_BYTES] = v[EC_TX_VP_UC_BYTES] + v[EC_TX_VP_MC_BYTES] + v[EC_TX_VP_BC_BYTES];
	return rc;
}

static int clear_wedges(struct port *p)
{
	int fd = bpf_map__fd(p->skel->maps.wedges), n = 0;
	struct emu_flow key, next;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0 && n < 4 * EMU_MAX_WEDGES) {
		key = next;
		bpf_map_delete_elem(fd, &key);
		n++;
	}
	return n;
}

/* ---- promiscuous transitions (receive-filter reprogram) ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *onoff(int v)
{
	return v ? "on" : "off";
}

static int link_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, IFLA_MAX) < 0)
		return MNL_CB_OK;
	if (type == IFLA_PROMISCUITY && mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	tb[type] = a;
	return MNL_CB_OK;
}

struct link_state {
	int ifindex, found;
	uint32_t promiscuity;	/* IFLA_PROMISCUITY: dev->promiscuity, the count */
	int flag;		/* ifi_flags IFF_PROMISC: dev->gflags, the user flag */
};

/* One RTM_NEWLINK of ls->ifindex: the count and the user flag.  ifi_flags
 * comes from netif_get_flags() (net/core/dev.c), which reports IFF_PROMISC
 * from dev->gflags; IFLA_PROMISCUITY is dev->promiscuity, which a packet
 * socket's PACKET_MR_PROMISC (tcpdump) raises without touching the flag. */
static int link_parse_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_state *ls = data;
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	struct ifinfomsg *ifm;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifm)))
		return MNL_CB_OK;
	ifm = mnl_nlmsg_get_payload(nlh);
	if (ifm->ifi_index != ls->ifindex)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, tb);
	ls->flag = !!(ifm->ifi_flags & IFF_PROMISC);
	/* without the attribute (never on 6.x) the flag is all there is */
	ls->promiscuity = tb[IFLA_PROMISCUITY] ? mnl_attr_get_u32(tb[IFLA_PROMISCUITY])
					       : (uint32_t)ls->flag;
	ls->found = 1;
	return MNL_CB_OK;
}

static void rx_clear(struct port *p, const char *why)
{
	int n = clear_wedges(p);

	p->wedges_cleared += (unsigned long)n;
	logx("[%.6f] port %s: %s: receive filters reprogrammed, %d wedge(s) cleared",
	     (double)mono_ns() / 1e9, p->name, why, n);
}

static void rx_arm(struct port *p)
{
	struct itimerspec its = { { 0, 0 }, { (time_t)(p->rx.due_ns / 1000000000ull),
					      (long)(p->rx.due_ns % 1000000000ull) } };

	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;	/* 0 would disarm */
	if (timerfd_settime(p->wfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		logx("port %s: arm the rx-mode work timer: %s", p->name, strerror(errno));
}

/* The kernel's state now (the work's reading), through the query socket. */
static int link_read(struct port *p, struct link_state *ls)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	unsigned int seq = ++p->nlq_seq;
	ssize_t n;

	memset(ls, 0, sizeof(*ls));
	ls->ifindex = p->ifindex;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = p->ifindex;
	if (mnl_socket_sendto(p->nlq, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!ls->found && (n = mnl_socket_recvfrom(p->nlq, buf, sizeof(buf))) > 0)
		if (mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(p->nlq),
			       link_parse_cb, ls) < MNL_CB_STOP)
			return -1;
	return ls->found ? 0 : -1;
}

/* mlx5e_set_rx_mode_work() -> mlx5e_fs_set_rx_mode_work(): read
 * netdev->flags & IFF_PROMISC now, act only on a difference from the
 * state applied last. */
static void rx_work(struct port *p)
{
	struct link_state ls;
	struct rxm_run r;
	int changed, ok = link_read(p, &ls) == 0;

	if (!ok) {
		logx("port %s: rx-mode work: read %s: %s (using the last link message)",
		     p->name, p->ifname, strerror(errno));
		ls.promiscuity = p->rx.promiscuity;
		ls.flag = p->rx.flag;
	}
	changed = rxm_run(&p->rx, ls.promiscuity, ls.flag, mono_ns(), &r);
	if (changed < 0)
		return;
	logx("[%.6f] port %s: rx-mode work %lu (queued %.3f ms before, %u more link "
	     "message(s) coalesced): promiscuity %u, flag %s -> promisc %s; applied %s%s",
	     (double)r.at_ns / 1e9, p->name, p->rx.runs, (double)(r.at_ns - r.queued_ns) / 1e6,
	     r.coalesced, r.promiscuity, onoff(r.flag), onoff(r.reading),
	     onoff(r.applied_before), changed ? (r.reading ? ", now on" : ", now off")
					      : ": no change");
	if (changed)
		rx_clear(p, r.reading ? "promiscuous on (rx-mode work)"
				      : "promiscuous off (rx-mode work)");
}

static void rx_work_if_due(struct port *p)
{
	if (rxm_due(&p->rx, mono_ns()))
		rx_work(p);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct port *p = data;
	struct link_state ls = { .ifindex = p->ifindex };
	int was_pending = p->rx.pending;

	link_parse_cb(nlh, &ls);
	if (!ls.found)
		return MNL_CB_OK;
	if (rxm_link(&p->rx, ls.promiscuity, ls.flag, mono_ns()) == 1)
		rx_clear(p, p->rx.dev_promisc ? "promiscuous on (instant model)"
					      : "promiscuous off (instant model)");
	if (p->rx.pending && !was_pending && p->rx.delay_ns > 0)
		rx_arm(p);
	return MNL_CB_OK;
}

static int nl_query(struct port *p);

static void nl_read(struct port *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	ssize_t n;

	while ((n = mnl_socket_recvfrom(p->nl, buf, sizeof(buf))) > 0)
		mnl_cb_run(buf, (size_t)n, 0, 0, link_cb, p);
	if (n < 0 && errno == ENOBUFS && nl_query(p) < 0)	/* lost events: re-read */
		logx("port %s: rtnetlink overrun, query %s: %s", p->name, p->ifname,
		     strerror(errno));
	rx_work_if_due(p);	/* --rx-mode-delay 0: the work runs now */
}

static int nl_query(struct port *p)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = p->ifindex;
	return mnl_socket_sendto(p->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

/* ---- firmware-consumed LLDP frames ---- */

static int fw_open(struct emu *e, struct port *p)
{
	struct port *q;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(EMU_ETH_P_LLDP) };
	struct ifreq ifr = { 0 };
	int saved;

	if (p->pkt_fd >= 0)
		return 0;
	if (p->peer < 0) {
		errno = ENODEV;
		return -1;
	}
	q = &e->p[p->peer];
	if (ns_enter(q, &saved) < 0)
		return -1;
	p->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	ns_leave(saved);
	if (p->pkt_fd < 0)
		return -1;
	sll.sll_ifindex = q->ifindex;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", q->ifname);
	if (bind(p->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    ioctl(p->pkt_fd, SIOCGIFHWADDR, &ifr) < 0) {
		close(p->pkt_fd);
		p->pkt_fd = -1;
		return -1;
	}
	memcpy(p->peer_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

static void fw_send(struct emu *e, struct port *p)
{
	static const unsigned char dst[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	unsigned char f[64] = { 0 };
	struct port *q = &e->p[p->peer];
	size_t n = 0, l = strlen(q->ifname);

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + 6, p->peer_mac, ETH_ALEN);
	f[12] = 0x88, f[13] = 0xcc;
	n = 14;
	f[n++] = 0x02, f[n++] = 7, f[n++] = 4;		/* chassis id: MAC */
	memcpy(f + n, p->peer_mac, ETH_ALEN), n += ETH_ALEN;
	f[n++] = 0x04, f[n++] = (unsigned char)(1 + l), f[n++] = 5;	/* port id: ifname */
	memcpy(f + n, q->ifname, l), n += l;
	f[n++] = 0x06, f[n++] = 2, f[n++] = 0, f[n++] = 120;	/* ttl */
	n += 2;						/* end */
	if (n < 60)
		n = 60;
	if (send(p->pkt_fd, f, n, 0) == (ssize_t)n)
		p->fw_injected++;
	else
		logx("port %s: inject LLDP frame from %s: %s", p->name, q->ifname, strerror(errno));
}

/* ---- publishing ---- */

static uint64_t hw_value(const struct port *p, const uint64_t *v, size_t i)
{
	const char *n = hw_names[i];

	if (!strcmp(n, "rx_write_requests"))
		return v[EC_RX_DATA_PKTS];
	if (!strcmp(n, "out_of_buffer"))
		return v[EC_RX_OUT_OF_BUFFER];
	if (!strcmp(n, "lifespan"))
		return 10;
	for (size_t f = 0; f < sizeof(fault_names) / sizeof(fault_names[0]); f++)
		if (!strcmp(n, fault_names[f]))
			return p->fault[f];
	return 0;
}

static uint64_t ib_value(const struct port *p, const uint64_t *v, size_t i)
{
	switch (i) {
	case 0: return v[EC_RX_DATA_PKTS];
	case 1: return v[EC_RX_DATA_BYTES] / 4;
	case 2: return v[EC_TX_DATA_PKTS];
	case 3: return v[EC_TX_DATA_BYTES] / 4;
	case 4: return p->crc;
	case 5: return p->sym;
	default: return 0;
	}
}

static void publish(struct emu *e, struct port *p)
{
	uint64_t v[X_NVALS];
	char path[PATH_MAX], buf[8192];
	size_t len;
	int n;

	if (read_counters(e, p, v) < 0) {
		logx("port %s: read counters: %s", p->name, strerror(errno));
		return;
	}
	if (p->cfg.mode == EMU_FABRIC_FAULT &&
	    (p->fault_always || v[EC_RX_DATA_PKTS] != p->last_data)) {
		for (size_t f = 0; f < sizeof(p->fault) / sizeof(p->fault[0]); f++)
			p->fault[f] += 1 + rnd(e) % 3;
		p->crc += rnd(e) % 2;
		p->sym += rnd(e) % 2;
		v[X_CRC] = p->crc;
		v[X_SYM] = p->sym;
	}
	p->last_data = v[EC_RX_DATA_PKTS];

	len = (size_t)snprintf(buf, sizeof(buf), "NIC statistics:\n");
	for (size_t i = 0; i < sizeof(ethtool_names) / sizeof(ethtool_names[0]); i++) {
		n = snprintf(buf + len, sizeof(buf) - len, "     %s: %" PRIu64 "\n",
			     ethtool_names[i].name, v[ethtool_names[i].src]);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			break;
		len += (size_t)n;
	}
	snprintf(path, sizeof(path), "%s/%s.ethtool", e->dir, p->name);
	if (write_atomic(path, buf, len) < 0)
		logx("write %s: %s", path, strerror(errno));

	for (size_t i = 0; i < N_HW; i++) {
		uint64_t x = hw_value(p, v, i);

		if (x != p->hw_last[i] && put_u64(p->hw_fd[i], &p->hw_len[i], x) == 0)
			p->hw_last[i] = x;
	}
	for (size_t i = 0; i < N_IB; i++) {
		uint64_t x = ib_value(p, v, i);

		if (x != p->ib_last[i] && put_u64(p->ib_fd[i], &p->ib_len[i], x) == 0)
			p->ib_last[i] = x;
	}
}

static int publish_static(struct emu *e, struct port *p)
{
	char path[PATH_MAX], buf[512];
	static const char *const dirs[] = { "ports/1/hw_counters", "ports/1/counters",
					    "ports/1/gid_attrs/ndevs" };
	static const char *const files[][2] = {
		{ "fw_ver", FW_VER "\n" }, { "board_id", PSID "\n" },
		{ "node_type", "1: CA\n" }, { "hca_type", "MT4117\n" },
		{ "ports/1/link_layer", "Ethernet\n" }, { "ports/1/state", "4: ACTIVE\n" },
		{ "ports/1/phys_state", "5: LinkUp\n" }, { "ports/1/rate", "25 Gb/sec (1X EDR)\n" },
	};
	int n;

	snprintf(p->dev_dir, sizeof(p->dev_dir), "%s/sysfs/sys/class/infiniband/mlx5_%d",
		 e->dir, p->k);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dev_dir, dirs[i]);
		if (mkdirs(path) < 0)
			goto fail;
	}
	snprintf(path, sizeof(path), "%s/device/net/%s", p->dev_dir, p->ifname);
	if (mkdirs(path) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dev_dir, files[i][0]);
		if (write_atomic(path, files[i][1], strlen(files[i][1])) < 0)
			goto fail;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", p->ifname);
	snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/ndevs/0", p->dev_dir);
	if (write_atomic(path, buf, (size_t)n) < 0)
		goto fail;
	n = snprintf(buf, sizeof(buf),
		     "driver: mlx5_core\nversion: 5.0-0\nfirmware-version: %s (%s)\n"
		     "expansion-rom-version: \nbus-info: 0000:03:00.%d\n"
		     "supports-statistics: yes\nsupports-test: yes\n"
		     "supports-eeprom-access: no\nsupports-register-dump: no\n"
		     "supports-priv-flags: yes\n", FW_VER, PSID, p->k);
	snprintf(path, sizeof(path), "%s/%s.info", e->dir, p->name);
	if (write_atomic(path, buf, (size_t)n) < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/ports/1/hw_counters", p->dev_dir);
	for (size_t i = 0; i < N_HW; i++)
		if ((p->hw_fd[i] = open_counter(path, hw_names[i])) < 0 ||
		    put_u64(p->hw_fd[i], &p->hw_len[i], 0) < 0)
			return -1;
	snprintf(path, sizeof(path), "%s/ports/1/counters", p->dev_dir);
	for (size_t i = 0; i < N_IB; i++)
		if ((p->ib_fd[i] = open_counter(path, ib_names[i])) < 0 ||
		    put_u64(p->ib_fd[i], &p->ib_len[i], 0) < 0)
			return -1;
	return 0;
fail:
	logx("port %s: write %s: %s", p->name, path, strerror(errno));
	return -1;
}

/* ---- control channel ---- */

static struct port *find_port(struct emu *e, const char *name)
{
	for (int i = 0; name && i < e->np; i++)
		if (!strcmp(e->p[i].name, name))
			return &e->p[i];
	return NULL;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* PROTO SADDR SPORT DADDR DPORT from av[0..4] */
static int parse_flow(char **av, int ac, struct emu_flow *f, FILE *out)
{
	struct in_addr a;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	if (ac < 5) {
		fprintf(out, "error: expected PROTO SADDR SPORT DADDR DPORT\n");
		return -1;
	}
	if (!strcmp(av[0], "tcp"))
		f->proto = 6;
	else if (!strcmp(av[0], "udp"))
		f->proto = 17;
	else {
		fprintf(out, "error: protocol '%s' is not tcp or udp\n", av[0]);
		return -1;
	}
	for (int i = 1; i <= 3; i += 2) {
		if (inet_pton(AF_INET, av[i], &a) != 1) {
			fprintf(out, "error: '%s' is not an IPv4 address\n", av[i]);
			return -1;
		}
		if (parse_u64(av[i + 1], 65535, &v) < 0) {
			fprintf(out, "error: port '%s' is not 0..65535\n", av[i + 1]);
			return -1;
		}
		if (i == 1)
			f->saddr = a.s_addr, f->sport = htons((uint16_t)v);
		else
			f->daddr = a.s_addr, f->dport = htons((uint16_t)v);
	}
	return 0;
}

static void flow_print(FILE *out, const struct emu_flow *f)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &f->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &f->daddr, d, sizeof(d));
	fprintf(out, "%s %s:%u>%s:%u", f->proto == 6 ? "tcp" : "udp", s, ntohs(f->sport),
		d, ntohs(f->dport));
}

static const char *const ec_names[EC_NUM] = {
	"rx_packets_phy", "rx_bytes_phy", "rx_multicast_phy", "rx_broadcast_phy",
	"rx_vport_unicast_packets", "rx_vport_unicast_bytes",
	"rx_vport_multicast_packets", "rx_vport_multicast_bytes",
	"rx_vport_broadcast_packets", "rx_vport_broadcast_bytes",
	"rx_packets", "rx_bytes", "rx_out_of_buffer", "rx_discards_phy",
	"rx_steer_missed_packets", "wedge_drops", "fw_frames_consumed",
	"rx_data_packets", "rx_data_bytes",
	"tx_packets_phy", "tx_bytes_phy", "tx_multicast_phy", "tx_broadcast_phy",
	"tx_vport_unicast_packets", "tx_vport_unicast_bytes",
	"tx_vport_multicast_packets", "tx_vport_multicast_bytes",
	"tx_vport_broadcast_packets", "tx_vport_broadcast_bytes",
	"tx_data_packets", "tx_data_bytes", "buffer_seq",
};

/* The driver model's state, as key=value pairs (tests parse them). */
static void rx_print(FILE *out, const struct port *p)
{
	const struct rxm *m = &p->rx;

	fprintf(out, "rx_mode=%s rx_mode_delay_ms=%.3f promiscuity=%u promisc_flag=%s "
		"dev_promisc=%s promisc_applied=%s work_pending=%d link_events=%lu "
		"crossings=%lu work_queued=%lu work_coalesced=%lu work_runs=%lu "
		"rx_transitions=%lu wedges_cleared=%lu",
		m->deferred ? "deferred" : "instant", (double)m->delay_ns / 1e6, m->promiscuity,
		onoff(m->flag), onoff(m->dev_promisc), onoff(m->applied), m->pending, m->events,
		m->crossings, m->queued, m->coalesced, m->runs, m->transitions, p->wedges_cleared);
}

/* rxmode PORT: the model's state and its last work runs, oldest first. */
static void rx_status(FILE *out, const struct port *p)
{
	const struct rxm *m = &p->rx;
	unsigned long first = m->runs > RXM_RUNS ? m->runs - RXM_RUNS : 0;

	fprintf(out, "ok\nrxmode %s ", p->name);
	rx_print(out, p);
	fputc('\n', out);
	for (unsigned long i = first; i < m->runs; i++) {
		const struct rxm_run *r = &m->last[i % RXM_RUNS];

		fprintf(out, "run %s %lu at=%.6f queued=%.6f promiscuity=%u flag=%s reading=%s "
			"applied_before=%s changed=%u coalesced=%u\n", p->name, i + 1,
			(double)r->at_ns / 1e9, (double)r->queued_ns / 1e9, r->promiscuity,
			onoff(r->flag), onoff(r->reading), onoff(r->applied_before), r->changed,
			r->coalesced);
	}
}

/* "instant", or a delay in milliseconds with up to 3 decimals, 0..60000 */
static int parse_rx_delay(const char *s, int *deferred, uint64_t *ns)
{
	uint64_t ms = 0, frac = 0;
	int nd = 0;
	const char *c = s;

	if (!strcmp(s, "instant")) {
		*deferred = 0;
		*ns = 0;
		return 0;
	}
	if (*c < '0' || *c > '9')
		return -1;
	for (; *c >= '0' && *c <= '9'; c++)
		if ((ms = ms * 10 + (uint64_t)(*c - '0')) > 60000)
			return -1;
	if (*c == '.')
		for (c++; *c >= '0' && *c <= '9' && nd < 3; c++, nd++)
			frac = frac * 10 + (uint64_t)(*c - '0');
	if (*c || (ms == 60000 && frac))
		return -1;
	while (nd++ < 3)
		frac *= 10;
	*deferred = 1;
	*ns = ms * 1000000ull + frac * 1000ull;
	return 0;
}

static void status(struct emu *e, struct port *only, FILE *out)
{
	uint64_t v[X_NVALS];

	fprintf(out, "ok\n");
	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];
		int fd = bpf_map__fd(p->skel->maps.wedges);
		struct emu_flow key, next;
		struct emu_wedge w;
		int first = 1, n = 0;

		if (only && only != p)
			continue;
		fprintf(out, "port %s netns=%s ifname=%s ifindex=%d rdma=mlx5_%d mode=%s",
			p->name, p->netns, p->ifname, p->ifindex, p->k, mode_names[p->cfg.mode]);
		if (p->cfg.mode == EMU_BUFFER_DROP)
			fprintf(out, " every=%u", p->cfg.every);
		fprintf(out, " fwframes=%s promisc=%d reprograms=%lu fw_frames_injected=%" PRIu64,
			p->fwframes ? "on" : "off", p->rx.known ? p->rx.dev_promisc : -1,
			p->rx.transitions, p->fw_injected);
		fputc(' ', out);
		rx_print(out, p);
		fputc('\n', out);
		while (n++ < 4 * EMU_MAX_WEDGES &&
		       bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
			first = 0;
			key = next;
			if (bpf_map_lookup_elem(fd, &key, &w) < 0)
				continue;
			fprintf(out, "wedge %s ", p->name);
			flow_print(out, &key);
			fprintf(out, " after=%llu passed=%llu dropped=%llu\n", (unsigned long long)w.after,
				(unsigned long long)w.passed, (unsigned long long)w.dropped);
		}
		if (read_counters(e, p, v) < 0)
			continue;
		for (int c = 0; c < EC_NUM; c++)
			fprintf(out, "%s.%s %" PRIu64 "\n", p->name, ec_names[c], v[c]);
		fprintf(out, "%s.fw_frames_injected %" PRIu64 "\n", p->name, p->fw_injected);
	}
}

static void command(struct emu *e, char *line, FILE *out)
{
	char *av[16], *save = NULL, *tok;
	int ac = 0;
	struct port *p;
	struct emu_flow f;
	uint64_t v;

	for (tok = strtok_r(line, " \t\r\n", &save); tok && ac < 16;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		av[ac++] = tok;
	if (ac == 0) {
		fprintf(out, "error: empty command\n");
		return;
	}
	if (!strcmp(av[0], "status")) {
		p = ac > 1 ? find_port(e, av[1]) : NULL;
		if (ac > 1 && !p)
			fprintf(out, "error: no port '%s'\n", av[1]);
		else
			status(e, p, out);
		return;
	}
	if (strcmp(av[0], "wedge") && strcmp(av[0], "unwedge") && strcmp(av[0], "mode") &&
	    strcmp(av[0], "fwframes") && strcmp(av[0], "rxmode")) {
		fprintf(out, "error: unknown command '%s'\n", av[0]);
		return;
	}
	if (ac < 2 || !(p = find_port(e, av[1]))) {
		fprintf(out, "error: %s: no port '%s'\n", av[0], ac > 1 ? av[1] : "");
		return;
	}
	if (!strcmp(av[0], "wedge")) {
		struct emu_wedge w = { 0 };

		if (parse_flow(av + 2, ac - 2, &f, out) < 0)
			return;
		if (ac == 9 && !strcmp(av[7], "after") && parse_u64(av[8], UINT32_MAX, &v) == 0)
			w.after = v;
		else if (ac != 7) {
			fprintf(out, "error: wedge PORT PROTO SADDR SPORT DADDR DPORT [after N]\n");
			return;
		}
		if (bpf_map__update_elem(p->skel->maps.wedges, &f, sizeof(f), &w, sizeof(w),
					 BPF_ANY) < 0)
			fprintf(out, "error: wedge on %s: %s\n", p->name, strerror(errno));
		else
			fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "unwedge")) {
		if (ac == 2) {
			fprintf(out, "ok %d cleared\n", clear_wedges(p));
		} else if (parse_flow(av + 2, ac - 2, &f, out) == 0) {
			if (bpf_map__delete_elem(p->skel->maps.wedges, &f, sizeof(f), 0) < 0)
				fprintf(out, "error: no such wedge on %s\n", p->name);
			else
				fprintf(out, "ok\n");
		}
	} else if (!strcmp(av[0], "mode") && ac >= 3) {
		struct emu_cfg c = { .every = 10 };
		int fa = 0, m;

		for (m = 0; m < 4 && strcmp(av[2], mode_names[m]); m++)
			;
		c.mode = (uint32_t)m;
		if (m == EMU_HEALTHY && ac == 3) {
			;
		} else if (m == EMU_BUFFER_DROP && ac <= 4) {
			if (ac == 4 && parse_u64(av[3], 1000000, &v) < 0) {
				fprintf(out, "error: buffer-drop N: '%s' is not 1..1000000\n", av[3]);
				return;
			}
			c.every = ac == 4 ? (uint32_t)v : 10;
			if (c.every == 0) {
				fprintf(out, "error: buffer-drop N must be at least 1\n");
				return;
			}
		} else if (m == EMU_STEER_MISS && (ac == 3 || (ac == 4 && !strcmp(av[3], "all")))) {
			c.steer_all = 1;
		} else if (m == EMU_STEER_MISS) {
			if (parse_flow(av + 3, ac - 3, &c.steer, out) < 0)
				return;
		} else if (m == EMU_FABRIC_FAULT && (ac == 3 || (ac == 4 &&
			   (!strcmp(av[3], "traffic") || !strcmp(av[3], "always"))))) {
			fa = ac == 4 && !strcmp(av[3], "always");
		} else {
			fprintf(out, "error: mode PORT healthy | buffer-drop [N] | steer-miss "
				"[all | PROTO SADDR SPORT DADDR DPORT] | fabric-fault [traffic|always]\n");
			return;
		}
		p->cfg = c;
		p->fault_always = fa;
		if (cfg_push(p) < 0)
			fprintf(out, "error: mode on %s: %s\n", p->name, strerror(errno));
		else
			fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "rxmode") && ac == 2) {
		rx_status(out, p);
	} else if (!strcmp(av[0], "rxmode") && ac == 3) {
		int deferred;
		uint64_t ns;

		if (parse_rx_delay(av[2], &deferred, &ns) < 0) {
			fprintf(out, "error: rxmode PORT [instant | DELAY_MS (0..60000, "
				"3 decimals)]: '%s'\n", av[2]);
			return;
		}
		rxm_set_mode(&p->rx, deferred, ns);
		logx("port %s: rx-mode model %s, delay %.3f ms", p->name,
		     deferred ? "deferred" : "instant", (double)ns / 1e6);
		fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "fwframes") && ac == 3 &&
		   (!strcmp(av[2], "on") || !strcmp(av[2], "off"))) {
		if (av[2][1] == 'n' && fw_open(e, p) < 0) {
			fprintf(out, "error: fwframes on %s: peer injection socket: %s\n", p->name,
				strerror(errno));
			return;
		}
		p->fwframes = av[2][1] == 'n';
		fprintf(out, "ok\n");
	} else {
		fprintf(out, "error: bad arguments to '%s'\n", av[0]);
	}
}

static void ctl_accept(struct emu *e)
{
	struct timeval tv = { .tv_usec = 500000 };
	char line[1024], *reply = NULL;
	size_t len = 0, rlen = 0;
	FILE *out;
	int c = accept4(e->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
		ssize_t n = read(c, line + len, sizeof(line) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	line[len] = 0;
	out = open_memstream(&reply, &rlen);
	if (!out) {
		close(c);
		return;
	}
	if (len == sizeof(line) - 1 && !memchr(line, '\n', len))
		fprintf(out, "error: command longer than %zu bytes\n", sizeof(line) - 2);
	else
		command(e, line, out);
	fclose(out);
	for (size_t off = 0; reply && off < rlen;) {
		ssize_t n = send(c, reply + off, rlen - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(reply);
	close(c);
}

static int ctl_client(const char *dir, int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	int fd, ok = -1;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", dir) >=
	    sizeof(sa.sun_path)) {
		logx("control socket path under %s is too long", dir);
		return 2;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		logx("connect %s: %s", sa.sun_path, strerror(errno));
		return 2;
	}
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (len + l + 2 >= sizeof(buf)) {
			logx("command too long");
			return 2;
		}
		if (i)
			buf[len++] = ' ';
		memcpy(buf + len, argv[i], l);
		len += l;
	}
	buf[len++] = '\n';
	if (write(fd, buf, len) != (ssize_t)len) {
		logx("write %s: %s", sa.sun_path, strerror(errno));
		return 2;
	}
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (ok < 0)
			ok = n >= 2 && !strncmp(buf, "ok", 2);
		fwrite(buf, 1, (size_t)n, stdout);
	}
	close(fd);
	return ok == 1 ? 0 : 1;
}

/* ---- run ---- */

static int parse_port(struct emu *e, const char *arg)
{
	struct port *p = &e->p[e->np];
	char *f[4] = { 0 }, *save = NULL, spec[256];
	int n = 0;

	if (e->np >= MAX_PORTS || snprintf(spec, sizeof(spec), "%s", arg) >= (int)sizeof(spec)) {
		logx("--port '%.64s': at most %d ports of up to 255 characters", arg, MAX_PORTS);
		return -1;
	}
	for (char *t = strtok_r(spec, ":", &save); t && n < 4; t = strtok_r(NULL, ":", &save))
		f[n++] = t;
	if (n < 3 || strtok_r(NULL, ":", &save) || strlen(f[0]) >= sizeof(p->name) ||
	    strlen(f[1]) >= sizeof(p->netns) || strlen(f[2]) >= sizeof(p->ifname) ||
	    (f[3] && strlen(f[3]) >= sizeof(p->peer_name)) ||
	    strspn(f[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
		    strlen(f[0]) || strchr(f[1], '/')) {
		logx("bad --port '%s': want NAME:NETNS:IFNAME[:PEER], NAME of [A-Za-z0-9_-]",
		     arg);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", f[0]);
	snprintf(p->netns, sizeof(p->netns), "%s", f[1]);
	snprintf(p->ifname, sizeof(p->ifname), "%s", f[2]);
	if (f[3])
		snprintf(p->peer_name, sizeof(p->peer_name), "%s", f[3]);
	p->k = e->np++;
	p->nsfd = p->pkt_fd = -1;
	memset(p->hw_fd, 0xff, sizeof(p->hw_fd));
	memset(p->ib_fd, 0xff, sizeof(p->ib_fd));
	p->peer = -1;
	p->wfd = -1;
	return 0;
}

static int epoll_add(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int run_setup(struct emu *e, int fwframes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct itimerspec its = { { 0, TICK_NS }, { 0, TICK_NS } };
	sigset_t ss;

	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];
		struct link_state ls;
		char path[128];

		if (find_port(e, p->name) != p) {
			logx("port name '%s' given twice", p->name);
			return -1;
		}
		p->peer = p->peer_name[0] ? (int)(find_port(e, p->peer_name) ?
						  find_port(e, p->peer_name) - e->p : -2)
				    : e->np == 2 ? 1 - i : -1;
		if (p->peer == -2 || p->peer == i) {
			logx("port %s: bad peer '%s'", p->name, p->peer_name);
			return -1;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", p->netns);
		if ((p->nsfd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			logx("port %s: open netns %s: %s", p->name, path, strerror(errno));
			return -1;
		}
		if (port_attach(p) < 0 || publish_static(e, p) < 0)
			return -1;
		p->cfg.every = 10;
		rxm_init(&p->rx, e->rx_deferred, e->rx_delay_ns);
		p->wfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (cfg_push(p) < 0 || link_read(p, &ls) < 0 || p->wfd < 0 ||
		    epoll_add(e->ep, mnl_socket_get_fd(p->nl), (uint64_t)(4 + i)) < 0 ||
		    epoll_add(e->ep, p->wfd, (uint64_t)(4 + MAX_PORTS + i)) < 0) {
			logx("port %s: set up: %s", p->name, strerror(errno));
			return -1;
		}
		/* the state the driver applied when the port opened */
		rxm_link(&p->rx, ls.promiscuity, ls.flag, mono_ns());
		logx("port %s: rx-mode model %s, delay %.3f ms; promiscuity %u, flag %s, "
		     "applied %s", p->name, p->rx.deferred ? "deferred" : "instant",
		     (double)p->rx.delay_ns / 1e6, ls.promiscuity, onoff(ls.flag),
		     onoff(p->rx.applied));
		nl_read(p);
	}
	for (int i = 0; fwframes && i < e->np; i++) {
		if (fw_open(e, &e->p[i]) < 0) {
			logx("port %s: LLDP injection socket: %s", e->p[i].name, strerror(errno));
			return -1;
		}
		e->p[i].fwframes = 1;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	e->sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", e->dir) >=
	    sizeof(sa.sun_path)) {
		logx("control socket path under %s is too long", e->dir);
		return -1;
	}
	unlink(sa.sun_path);
	e->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (e->sfd < 0 || e->tfd < 0 || e->lfd < 0 ||
	    bind(e->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(e->lfd, 16) < 0 ||
	    timerfd_settime(e->tfd, 0, &its, NULL) < 0 || epoll_add(e->ep, e->sfd, 1) < 0 ||
	    epoll_add(e->ep, e->tfd, 2) < 0 || epoll_add(e->ep, e->lfd, 3) < 0) {
		logx("set up event loop and %s: %s", sa.sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

static void run_teardown(struct emu *e)
{
	char path[PATH_MAX];

	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];

		if (p->nsfd >= 0)
			port_detach(p);
		if (p->nl)
			mnl_socket_close(p->nl);
		if (p->nlq)
			mnl_socket_close(p->nlq);
		if (p->wfd >= 0)
			close(p->wfd);
		if (p->pkt_fd >= 0)
			close(p->pkt_fd);
		if (p->skel)
			emu_port__destroy(p->skel);
		if (p->nsfd >= 0)
			close(p->nsfd);
		for (size_t j = 0; j < N_HW; j++)
			if (p->hw_fd[j] >= 0)
				close(p->hw_fd[j]);
		for (size_t j = 0; j < N_IB; j++)
			if (p->ib_fd[j] >= 0)
				close(p->ib_fd[j]);
		snprintf(path, sizeof(path), "%s/.%s.ethtool.tmp", e->dir, p->name);
		unlink(path);
		snprintf(path, sizeof(path), "%s/.%s.info.tmp", e->dir, p->name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/ctl.sock", e->dir);
	if (e->lfd >= 0)
		unlink(path);
}

static int run(int argc, char **argv)
{
	static struct emu e;
	int fwframes = 0, rc = 1, stop = 0;

	e.ep = e.tfd = e.sfd = e.lfd = -1;
	e.rnd = (uint32_t)getpid() | 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			if (snprintf(e.dir, sizeof(e.dir), "%s", argv[++i]) >= (int)sizeof(e.dir))
				goto usage;
		} else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (parse_port(&e, argv[++i]) < 0)
				return 2;
		} else if (!strcmp(argv[i], "--fw-frames")) {
			fwframes = 1;
		} else if (!strcmp(argv[i], "--rx-mode-delay") && i + 1 < argc) {
			if (parse_rx_delay(argv[++i], &e.rx_deferred, &e.rx_delay_ns) < 0) {
				logx("--rx-mode-delay '%s': want instant or milliseconds "
				     "0..60000 (up to 3 decimals)", argv[i]);
				return 2;
			}
		} else {
			goto usage;
		}
	}
	if (!e.dir[0] || e.np == 0)
		goto usage;
	libbpf_set_print(libbpf_log);
	e.ncpus = libbpf_num_possible_cpus();
	e.ep = epoll_create1(EPOLL_CLOEXEC);
	if (e.ncpus <= 0 || e.ep < 0 || mkdirs(e.dir) < 0) {
		logx("set up %s: %s", e.dir, strerror(errno));
		return 1;
	}
	if (run_setup(&e, fwframes) < 0)
		goto out;
	for (int i = 0; i < e.np; i++)
		publish(&e, &e.p[i]);
	logx("running: %d port(s), files in %s", e.np, e.dir);
	while (!stop) {
		struct epoll_event ev[8];
		int n = epoll_wait(e.ep, ev, 8, -1);

		if (n < 0 && errno != EINTR) {
			logx("epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64, x;

			if (tag == 1) {
				stop = 1;
			} else if (tag == 2) {
				if (read(e.tfd, &x, sizeof(x)) != sizeof(x))
					continue;
				e.ticks++;
				for (int j = 0; j < e.np; j++) {
					if (e.p[j].fwframes && e.ticks % LLDP_TICKS == 0)
						fw_send(&e, &e.p[j]);
					publish(&e, &e.p[j]);
				}
			} else if (tag == 3) {
				ctl_accept(&e);
			} else if (tag >= 4 && tag < 4 + (uint64_t)e.np) {
				nl_read(&e.p[tag - 4]);
			} else if (tag >= 4 + MAX_PORTS && tag < 4 + MAX_PORTS + (uint64_t)e.np) {
				struct port *p = &e.p[tag - 4 - MAX_PORTS];

				if (read(p->wfd, &x, sizeof(x)) == sizeof(x))
					rx_work_if_due(p);
			}
		}
	}
	rc = 0;
	logx("stopping");
out:
	run_teardown(&e);
	return rc;
usage:
	fprintf(stderr, "usage: emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] "
		"[--port ...] [--fw-frames] [--rx-mode-delay MS|instant]\n"
		"       emuport ctl OUTDIR COMMAND...\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "ctl"))
		return ctl_client(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] "
		"[--port ...] [--fw-frames] [--rx-mode-delay MS|instant]\n"
		"       emuport ctl OUTDIR COMMAND...\n"
		"commands: wedge PORT PROTO SADDR SPORT DADDR DPORT [after N] | unwedge PORT "
		"[FLOW] | mode PORT healthy|buffer-drop [N]|steer-miss [all|FLOW]|fabric-fault "
		"[traffic|always] | fwframes PORT on|off | rxmode PORT [instant|DELAY_MS] | "
		"status [PORT]\n");
	return 2;
}
