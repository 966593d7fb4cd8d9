/* rxmode: the emulated port's model of the mlx5 receive-filter update.
 * See rxmode.h for what is modelled and where it is in the kernel. */
#include "rxmode.h"

#include <string.h>

void rxm_init(struct rxm *m, int deferred, uint64_t delay_ns)
{
	memset(m, 0, sizeof(*m));
	m->deferred = !!deferred;
	m->delay_ns = delay_ns;
}

void rxm_set_mode(struct rxm *m, int deferred, uint64_t delay_ns)
{
	m->deferred = !!deferred;
	m->delay_ns = delay_ns;
	m->pending = 0;
	m->pending_coalesced = 0;
	if (m->known)
		m->applied = m->dev_promisc;
}

int rxm_link(struct rxm *m, uint32_t promiscuity, int flag, uint64_t now_ns)
{
	int dev_promisc = promiscuity > 0 || flag;	/* the flag holds one count */
	int first = !m->known, crossed = !first && dev_promisc != m->dev_promisc;

	m->events++;
	m->known = 1;
	m->promiscuity = promiscuity;
	m->flag = !!flag;
	m->dev_promisc = dev_promisc;
	if (first) {
		m->applied = dev_promisc;
		return 0;
	}
	if (crossed)
		m->crossings++;
	if (!m->deferred) {
		if (!crossed)
			return 0;
		m->applied = dev_promisc;
		m->transitions++;
		return 1;
	}
	/* queue_work(): a no-op on a work that is still pending */
	if (m->pending) {
		m->coalesced++;
		m->pending_coalesced++;
		return 0;
	}
	m->pending = 1;
	m->pending_coalesced = 0;
	m->queued++;
	m->queued_ns = now_ns;
	m->due_ns = now_ns + m->delay_ns;
	return 0;
}

int rxm_due(const struct rxm *m, uint64_t now_ns)
{
	return m->pending && now_ns >= m->due_ns;
}

int rxm_run(struct rxm *m, uint32_t promiscuity, int flag, uint64_t now_ns,
	    struct rxm_run *run)
{
	struct rxm_run r = { 0 };

	if (!m->pending)
		return -1;
	m->pending = 0;
	/* the reading is the kernel's state now, not the message's */
	m->promiscuity = promiscuity;
	m->flag = !!flag;
	m->dev_promisc = promiscuity > 0 || flag;
	r.queued_ns = m->queued_ns;
	r.at_ns = now_ns;
	r.promiscuity = promiscuity;
	r.flag = (uint8_t)m->flag;
	r.reading = (uint8_t)m->dev_promisc;
	r.applied_before = (uint8_t)m->applied;
	r.changed = r.reading != r.applied_before;
	r.coalesced = m->pending_coalesced;
	m->applied = r.reading;		/* ea->promisc_enabled = promisc_enabled */
	if (r.changed)
		m->transitions++;
	m->last[m->runs % RXM_RUNS] = r;
	m->runs++;
	if (run)
		*run = r;
	return r.changed;
}
