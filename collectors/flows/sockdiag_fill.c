/* sockdiag_fill: what the kernel says of a TCP socket (inet_diag_msg's
 * queues, struct tcp_info) as a flow observation. Shared by the sock_diag
 * dumps and lookups (collectors/flows/flow_sockdiag.c) and the BPF socket reader,
 * whose loads are put into a struct tcp_info first, so every way of reading
 * a socket gives the same observation. See sockdiag_fill.h. */
#include "collectors/flows/sockdiag_fill.h"

#include <stddef.h>

#define SF_TCP_FIN_WAIT2 5      /* include/net/tcp_states.h */

#define TI_HAS(len, f) \
	(offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f) <= (len))

static uint64_t sd_ago(uint64_t now, uint32_t ms)
{
	uint64_t d = (uint64_t)ms * 1000000ull;

	return d < now ? now - d : 0;
}

void sockdiag_fill(struct flow_obs *o, unsigned state, uint32_t rqueue, uint32_t wqueue,
		   const struct tcp_info *ti, size_t tilen, uint64_t now)
{
	o->state = state;
	o->unread = rqueue;
	o->unsent = wqueue;
	if (TI_HAS(tilen, tcpi_total_retrans))
		o->retrans = ti->tcpi_total_retrans;
	/* The write queue is bytes not yet sent (held by the socket) plus
	 * bytes sent and not acknowledged (in flight, not held). */
	if (TI_HAS(tilen, tcpi_notsent_bytes) && ti->tcpi_notsent_bytes <= o->unsent) {
		o->inflight = o->unsent - ti->tcpi_notsent_bytes;
		o->unsent = ti->tcpi_notsent_bytes;
	}
	if (TI_HAS(tilen, tcpi_bytes_acked)) {
		/* Acked sequence space: the SYN counts one, and so does our
		 * FIN once acked (FIN_WAIT2); report data bytes only. */
		uint64_t b = ti->tcpi_bytes_acked;

		if (b)
			b--;
		if (b && state == SF_TCP_FIN_WAIT2)
			b--;
		o->tx_bytes = b;
	}
	if (TI_HAS(tilen, tcpi_bytes_received))
		o->rx_bytes = ti->tcpi_bytes_received;
	if (TI_HAS(tilen, tcpi_data_segs_out)) {
		o->tx_msgs = ti->tcpi_data_segs_out;
		o->rx_msgs = ti->tcpi_data_segs_in;
	} else if (TI_HAS(tilen, tcpi_segs_in)) {
		o->tx_msgs = ti->tcpi_segs_out;
		o->rx_msgs = ti->tcpi_segs_in;
	}
	/* The kernel's "ms since last data" is meaningless before any data
	 * moved; leave 0 (unknown) then when the struct tells us so. */
	if (TI_HAS(tilen, tcpi_last_data_recv)) {
		int known_tx = !TI_HAS(tilen, tcpi_data_segs_out) || ti->tcpi_data_segs_out;
		int known_rx = !TI_HAS(tilen, tcpi_data_segs_out) || ti->tcpi_data_segs_in;

		if (known_tx && ti->tcpi_last_data_sent != UINT32_MAX)
			o->last_tx_ns = sd_ago(now, ti->tcpi_last_data_sent);
		if (known_rx && ti->tcpi_last_data_recv != UINT32_MAX)
			o->last_rx_ns = sd_ago(now, ti->tcpi_last_data_recv);
		/* tcp_get_info(): now - rcv_tstamp, the last ACK received */
		if (known_tx && TI_HAS(tilen, tcpi_last_ack_recv) &&
		    ti->tcpi_last_ack_recv != UINT32_MAX)
			o->last_ack_ns = sd_ago(now, ti->tcpi_last_ack_recv);
	}
	/* Retransmitted: every retransmission that leaves moves lsndtime
	 * (last_data_sent, tcp_event_data_sent() in __tcp_transmit_skb()), so
	 * the wait began earlier. After k timeouts in a row (tcpi_retransmits,
	 * icsk_retransmits, counted by tcp_update_rto_stats() whether or not
	 * the segment leaves) the timer has doubled k times
	 * (tcp_retransmit_timer(): icsk_rto = min(rto << 1, max)): the sends
	 * were t0, t0 + b, t0 + 3b, ... t0 + (2^k - 1) b with b = rto >> k.
	 * One that never left (no route: __tcp_retransmit_skb() fails before
	 * transmitting) moves neither lsndtime nor tcpi_total_retrans: back
	 * by no more timeouts than total_retrans says left, never before t0. */
	if (o->last_tx_ns && TI_HAS(tilen, tcpi_total_retrans) && ti->tcpi_retransmits &&
	    ti->tcpi_rto && ti->tcpi_unacked && ti->tcpi_total_retrans) {
		unsigned k = ti->tcpi_retransmits < 31 ? ti->tcpi_retransmits : 31;
		unsigned left = ti->tcpi_total_retrans < k ? ti->tcpi_total_retrans : k;
		uint64_t rto = (uint64_t)ti->tcpi_rto * 1000ull;
		uint64_t back = (rto >> k) * ((1ull << left) - 1);

		o->unacked_since_ns = o->last_tx_ns > back ? o->last_tx_ns - back : 1;
	}
	/* The next retransmission: tcp_get_info() gives tcpi_rto in us and
	 * tcpi_last_data_sent in ms; tcp_retransmit_timer() arms the timer
	 * icsk_rto after each retransmission (inet_csk_reset_xmit_timer), and
	 * every segment with data, retransmissions too, sets lsndtime
	 * (tcp_event_data_sent). So with data unacknowledged it is due
	 * rto - last_data_sent from now. */
	if (TI_HAS(tilen, tcpi_unacked) && ti->tcpi_unacked && ti->tcpi_rto &&
	    ti->tcpi_last_data_sent != UINT32_MAX) {
		uint64_t rto = (uint64_t)ti->tcpi_rto * 1000ull;
		uint64_t since = (uint64_t)ti->tcpi_last_data_sent * 1000000ull;

		o->rto_ns = rto;
		o->retry_due_ns = now + (rto > since ? rto - since : 0);
	}
}
