/* emu_publish: what the emulated port shows of itself under OUTDIR.
 * NAME.ethtool (`ethtool -S` text, replaced atomically 100 times a second),
 * NAME.info (`ethtool -i`), and an RDMA sysfs tree
 * sysfs/sys/class/infiniband/mlx5_K whose counter files are kept open and
 * rewritten in place when they change, so a reader may keep them open and
 * pread at 0 as on sysfs.  A fabric fault moves the transport error
 * counters, CRC and symbol errors here, in user space. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emuport.h"

#define FW_VER "14.17.1010"
#define PSID "MT_2420110034"

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
	{ "rx_oversize_pkts_phy", EC_RX_OVERSIZE }, { "rx_symbol_err_phy", X_SYM },
	{ "tx_mac_control_phy", X_TX_PAUSE }, { "rx_mac_control_phy", X_RX_PAUSE },
	{ "rx_unsupported_op_phy", X_ZERO }, { "rx_pause_ctrl_phy", X_RX_PAUSE },
	{ "tx_pause_ctrl_phy", X_TX_PAUSE },
	{ "rx_discards_phy", EC_RX_DISCARDS_PHY }, { "tx_discards_phy", X_ZERO },
	{ "tx_errors_phy", X_ZERO }, { "rx_undersize_pkts_phy", X_ZERO },
	{ "rx_fragments_phy", X_ZERO }, { "rx_jabbers_phy", X_ZERO },
	{ "rx_64_bytes_phy", EC_RX_B64 }, { "rx_65_to_127_bytes_phy", EC_RX_B127 },
	{ "rx_128_to_255_bytes_phy", EC_RX_B255 }, { "rx_256_to_511_bytes_phy", EC_RX_B511 },
	{ "rx_512_to_1023_bytes_phy", EC_RX_B1023 },
	{ "rx_1024_to_1518_bytes_phy", EC_RX_B1518 },
	{ "rx_1519_to_2047_bytes_phy", EC_RX_B2047 },
	{ "rx_2048_to_4095_bytes_phy", EC_RX_B4095 },
	{ "rx_4096_to_8191_bytes_phy", EC_RX_B8191 },
	{ "rx_8192_to_10239_bytes_phy", EC_RX_B10239 },
	{ "rx_pcs_symbol_err_phy", X_ZERO }, { "rx_corrected_bits_phy", X_ZERO },
	{ "rx_buffer_passed_thres_phy", X_ZERO },
	{ "rx_prio0_bytes", EC_RX_PHY_BYTES }, { "rx_prio0_packets", EC_RX_PHY_PKTS },
	{ "rx_prio0_discards", EC_RX_DISCARDS_PHY },
	{ "tx_prio0_bytes", EC_TX_PHY_BYTES }, { "tx_prio0_packets", EC_TX_PHY_PKTS },
	{ "rx_prio0_buf_discard", X_ZERO }, { "rx_prio0_cong_discard", X_ZERO },
	{ "rx_prio0_marked", X_ZERO },
	/* global pause on (the driver prints the "global" group when
	 * mlx5e_query_global_pause_combined(), pport_per_prio_pfc_stats_desc):
	 * durations in microseconds */
	{ "rx_global_pause", X_RX_PAUSE }, { "rx_global_pause_duration", X_RX_PAUSE_US },
	{ "tx_global_pause", X_TX_PAUSE }, { "tx_global_pause_duration", X_TX_PAUSE_US },
	{ "rx_global_pause_transition", X_RX_PAUSE_TRANS },
	{ "module_unplug", X_ZERO }, { "module_bus_stuck", X_ZERO },
	{ "module_high_temp", X_ZERO },
};

/* RDMA counters: ports/1/hw_counters and ports/1/counters. */
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

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(ARRAY_LEN(hw_names) == N_HW, "N_HW (emuport.h) is not hw_names' length");
_Static_assert(ARRAY_LEN(ib_names) == N_IB, "N_IB (emuport.h) is not ib_names' length");
_Static_assert(ARRAY_LEN(fault_names) == N_FAULT,
	       "N_FAULT (emuport.h) is not fault_names' length");

static uint32_t rnd(struct emu *e)
{
	e->rnd ^= e->rnd << 13;
	e->rnd ^= e->rnd >> 17;
	e->rnd ^= e->rnd << 5;
	return e->rnd;
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

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		logx("create %s/%s: %s", dir, name, strerror(ENAMETOOLONG));
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		logx("create %s: %s", path, strerror(errno));
	return fd;
}

int mkdirs(const char *path)
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

/* ---- publishing ---- */

static uint64_t hw_value(const struct port *p, const uint64_t *v, size_t i)
{
	const char *n = hw_names[i];

	/* RDMA WRITE requests to the port's QPs: RDMA frames only, never
	 * TCP (mlx5_ib counters.c basic_q_cnts, a QUERY_Q_COUNTER field;
	 * "IB +, EN -" in the commit that added it, 0ad17a8f7fa0) */
	if (!strcmp(n, "rx_write_requests"))
		return v[EC_RX_RDMA_PKTS];
	if (!strcmp(n, "out_of_buffer"))
		return v[EC_RX_OUT_OF_BUFFER];
	if (!strcmp(n, "lifespan"))
		return 10;
	for (size_t f = 0; f < N_FAULT; f++)
		if (!strcmp(n, fault_names[f]))
			return p->fault[f];
	return 0;
}

static uint64_t ib_value(const struct port *p, const uint64_t *v, size_t i)
{
	switch (i) {
	/* RoCE traffic only: mlx5_ib's PMA counters of an Ethernet port are
	 * the vport's received_ib_* / transmitted_ib_* (pma_cnt_ext_assign()) */
	case 0: return v[EC_RX_RDMA_PKTS];
	case 1: return v[EC_RX_RDMA_BYTES] / 4;
	case 2: return v[EC_TX_RDMA_PKTS];
	case 3: return v[EC_TX_RDMA_BYTES] / 4;
	case 4: return p->crc;
	case 5: return p->sym;
	default: return 0;
	}
}

void publish(struct emu *e, struct port *p)
{
	uint64_t v[X_NVALS];
	char path[PATH_MAX], buf[8192];
	size_t len;
	int n;

	if (read_counters(e, p, v) < 0) {
		logx("port %s: read counters: %s", p->name, strerror(errno));
		return;
	}
	/* a faulty link: its wire errors come with any traffic, the RDMA
	 * transport's errors only with RDMA traffic (or always, when asked) */
	if (p->cfg.mode == EMU_FABRIC_FAULT &&
	    (p->fault_always || v[EC_RX_DATA_PKTS] != p->last_data)) {
		if (p->fault_always || v[EC_RX_RDMA_PKTS] != p->last_rdma)
			for (size_t f = 0; f < sizeof(p->fault) / sizeof(p->fault[0]); f++)
				p->fault[f] += 1 + rnd(e) % 3;
		p->crc += rnd(e) % 2;
		p->sym += rnd(e) % 2;
		v[X_CRC] = p->crc;
		v[X_SYM] = p->sym;
	}
	p->last_data = v[EC_RX_DATA_PKTS];
	p->last_rdma = v[EC_RX_RDMA_PKTS];
	v[X_RX_PAUSE] = p->pause_frames;
	v[X_RX_PAUSE_US] = p->pause_us;
	v[X_RX_PAUSE_TRANS] = p->pause_transitions;
	v[X_TX_PAUSE] = p->pause_sent;
	v[X_TX_PAUSE_US] = p->pause_sent_us;
	/* the frames its peer sent too long for it: this MAC's count, by
	 * length (emu.h EC_TXP_OVERSIZE) */
	if (p->peer >= 0) {
		uint64_t pv[X_NVALS];

		if (read_counters(e, &e->p[p->peer], pv) == 0) {
			v[EC_RX_OVERSIZE] += pv[EC_TXP_OVERSIZE];
			for (int b = 0; b < EMU_NBUCKETS; b++)
				v[EC_RX_B64 + b] += pv[EC_TXP_B64 + b];
		}
	}

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

int publish_static(struct emu *e, struct port *p)
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
