/* sockdiag_pace: when sock_diag must read a watched socket again. See
 * sockdiag_pace.h. */
#include "collectors/flows/sockdiag_pace.h"

void sd_pace_read(struct sd_pace *p, const struct flow_obs *o, uint64_t now, uint64_t stall_ns,
		  uint64_t poll_ns)
{
	/* a poll less than a threshold: a flow that moves is seen moving
	 * within every threshold-long span (the detector's sibling counts) */
	uint64_t span = stall_ns > poll_ns ? stall_ns - poll_ns : 0;

	int moved = !p->seen || o->tx_bytes > p->tx_bytes || o->rx_bytes > p->rx_bytes ||
		    o->unread < p->unread;

	p->seen = 1;
	p->tx_bytes = o->tx_bytes;
	p->rx_bytes = o->rx_bytes;
	p->unread = o->unread;
	if (!span) {
		p->wait_from = 0;
		p->due_ns = 0;
		return;
	}
	if (!flow_obs_sock_waiting(o)) {
		p->wait_from = 0;
		p->due_ns = now + span;
		return;
	}
	uint64_t t = flow_obs_sock_wait_from(o);

	if (!t || t > now)
		t = now;
	if (moved || !p->wait_from || t < p->wait_from)
		p->wait_from = t;
	p->due_ns = p->wait_from + span;
	if (p->due_ns > now + span)
		p->due_ns = now + span;
}
