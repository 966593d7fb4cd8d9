/* src_kernel: drops the host's own kernel counts, as a counter source
 * ("kernel"):
 *   qdisc/drops, qdisc/overlimits, qdisc/requeues   summed over the root
 *       and ingress qdiscs of the port's interface (rtnetlink RTM_GETQDISC dump for its
 *       ifindex: tc_dump_qdisc(), net/sched/sch_api.c; TCA_STATS2 /
 *       TCA_STATS_QUEUE, struct gnet_stats_queue, else the old TCA_STATS)
 *   softnet/dropped, softnet/time_squeeze           summed over the CPUs of
 *       /proc/net/softnet_stat (softnet_seq_show(), net/core/net-procfs.c:
 *       the backlog queue was full, or net_rx_action ran out of budget);
 *       host-wide, not per port
 * With the netdev source's tx_dropped / rx_dropped these are the frames a
 * host drops before or after the card (veth_xmit() counts a peer that could
 * not take a frame as the sender's tx_dropped). All 64-bit. The socket is
 * made inside ctx->netns_fd and kept. */
#ifndef NICSTALL_SRC_KERNEL_H
#define NICSTALL_SRC_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

extern const struct src_ops src_kernel_ops;

/* Sum the drops columns of /proc/net/softnet_stat text (hex words, one line
 * per CPU: processed, dropped, time_squeeze, ...). 0, or -EINVAL with err
 * naming the line. */
int src_kernel_parse_softnet(const char *text, size_t len, uint64_t *dropped,
			     uint64_t *squeezed, char *err, size_t errlen);

#endif
