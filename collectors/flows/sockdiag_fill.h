/* sockdiag_fill: a kernel TCP socket's state as a flow observation.
 *
 * From inet_diag_msg's queues (tcp_diag_get_info()) and struct tcp_info as
 * long as the kernel's is (tcp_get_info(); a field is read only when tilen
 * holds it): state, unread (receive queue), unsent and inflight (the write
 * queue split by tcpi_notsent_bytes), tx_bytes (data bytes acknowledged:
 * tcpi_bytes_acked less SYN and FIN), rx_bytes, tx/rx_msgs (data segments),
 * retrans (tcpi_total_retrans), last_tx/rx/ack_ns (CLOCK_MONOTONIC of the
 * last data sent, received, the last ACK received; 0 unknown),
 * unacked_since_ns (the first sending of retransmitted data), and for data
 * unacknowledged rto_ns and retry_due_ns (when the next retransmission is
 * due: the release watch, daemon/forensic/release.c, waits for it). now: the
 * CLOCK_MONOTONIC time of the read. Fields it does not know are left as
 * they are. */
#ifndef NICSTALL_SOCKDIAG_FILL_H
#define NICSTALL_SOCKDIAG_FILL_H

#include <linux/tcp.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flows.h"

void sockdiag_fill(struct flow_obs *o, unsigned state, uint32_t rqueue, uint32_t wqueue,
		   const struct tcp_info *ti, size_t tilen, uint64_t now);

#endif
