/* probe_cap: asynchronous flow-filtered packet capture (libpcap) for the
 * event loop.
 *
 * The pcap handle is created and activated inside the port's namespace,
 * runs non-blocking with its selectable fd in the loop, writes a pcap file
 * (headers only by default) and stops at the first of duration, packet
 * count and bytes written. For a promiscuous capture it records whether
 * opening it made a real transition of the port's promiscuity, read through
 * rtnetlink IFLA_PROMISCUITY: libpcap's PACKET_MR_PROMISC membership raises
 * the device's promiscuity counter but is NOT shown as IFF_PROMISC in
 * SIOCGIFFLAGS/ifi_flags (those show only `ip link set X promisc on`).
 * The capture is closed (membership dropped) when it stops. */
#ifndef NICSTALL_PROBE_CAP_H
#define NICSTALL_PROBE_CAP_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct json_object;
struct probe_cap;

#define PROBE_CAP_DEF_SNAPLEN 128u

struct probe_cap_result {
	unsigned packets;            /* packets written */
	uint64_t bytes;              /* bytes written: 16-byte record header
				      * + captured length per packet (the
				      * 24-byte file header not counted) */
	int promisc_requested;
	int was_promisc_before;      /* -1: could not be read */
	int promisc_after_open;      /* -1: could not be read */
	int transition;              /* 1: opening switched the port into
				      * promiscuous mode (0 -> >0) */
	int promisc_after_close;     /* -1 unknown / still open */
	unsigned promiscuity_before, promiscuity_after;  /* IFLA_PROMISCUITY */
	unsigned flags_before;       /* ifi_flags (IFF_*) before the open */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC; end 0 while running */
	uint64_t start_real_ns;      /* CLOCK_REALTIME at start */
	char stop_reason[32];        /* "" | "duration" | "packets" | "bytes"
				      * | "error" | "cancelled" */
	char error[256];
	char path[4096];
	unsigned kernel_drops;       /* pcap_stats ps_drop (capture socket) */
};

typedef void (*probe_cap_done_fn)(struct probe_cap *c, void *arg);

/* Start a capture on ifname in namespace nsfd (-1: own). bpf_filter may be
 * NULL or "" (everything). snaplen 0 = 128. At least one of duration_ns,
 * max_packets, max_bytes must be non-zero (0 = no such limit); max_bytes
 * is never exceeded. pcap_path is created with O_CREAT|O_EXCL|O_NOFOLLOW
 * beneath its directory (an existing name, a symbolic link included, is
 * refused: EEXIST, never followed or truncated). Returns NULL with err
 * naming the interface and namespace when it cannot open (no interface,
 * no permission, bad filter, file); done is then never called and nothing
 * is left open. Otherwise done runs exactly once, from the loop. */
struct probe_cap *probe_cap_start(struct loop *l, int nsfd, const char *ifname,
				  const char *bpf_filter, int promisc,
				  unsigned snaplen, uint64_t duration_ns,
				  unsigned max_packets, uint64_t max_bytes,
				  const char *pcap_path,
				  probe_cap_done_fn done, void *arg,
				  char *err, size_t errlen);

const struct probe_cap_result *probe_cap_result(const struct probe_cap *c);
int probe_cap_finished(const struct probe_cap *c);

/* Stop now (stop_reason "cancelled" if still running, file flushed), then
 * free. done is never called after it; safe from inside done. */
void probe_cap_free(struct probe_cap *c);

int probe_cap_to_json(const struct probe_cap *c, struct json_object *obj);

#endif
