/* flow_live: verdicts and counter trackers for the bypass-engine flow
 * sources. See flow_live.h. */
#include "collectors/flows/flow_live.h"

const char *flow_live_name(enum flow_live v)
{
	switch (v) {
	case FLOW_LIVE_IDLE: return "idle";
	case FLOW_LIVE_PROGRESS: return "progress";
	case FLOW_LIVE_WAITING: return "waiting";
	case FLOW_LIVE_HELD: return "held";
	case FLOW_LIVE_FAILED: return "failed";
	}
	return "?";
}

uint64_t flow_live_unwrap(uint64_t *acc, uint64_t *prev_raw, uint64_t raw, unsigned bits)
{
	uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	uint64_t d = (raw - *prev_raw) & mask;

	*prev_raw = raw & mask;
	/* A step back (d above half the range) is a reset or reordering,
	 * never 4 billion new packets: ignore it rather than add it. */
	if (bits < 64 && d > (mask >> 1))
		d = 0;
	*acc += d;
	return d;
}

int flow_live_update(struct flow_live_track *t, uint64_t tx, uint64_t rx, uint64_t now_ns)
{
	int64_t bal = (int64_t)(tx - rx);
	int moved;

	if (!t->init) {
		t->init = 1;
		t->tx = tx;
		t->rx = rx;
		t->min_bal = bal;
		t->moved_ns = now_ns;
		return 0;
	}
	moved = tx != t->tx || rx != t->rx;
	t->tx = tx;
	t->rx = rx;
	if (bal < t->min_bal)
		t->min_bal = bal;
	if (moved)
		t->moved_ns = now_ns;
	return moved;
}

void flow_live_set(struct flow_live_track *t, enum flow_live v, uint64_t since_ns,
		   uint64_t now_ns)
{
	int bad = v == FLOW_LIVE_WAITING || v == FLOW_LIVE_HELD || v == FLOW_LIVE_FAILED;

	if (!bad) {
		t->bad_since_ns = 0;
	} else if (!t->bad_since_ns) {
		t->bad_since_ns = since_ns && since_ns <= now_ns ? since_ns : now_ns;
	}
	t->verdict = v;
}

int flow_live_stalled(const struct flow_live_track *t, uint64_t now_ns, uint64_t threshold_ns)
{
	return t->bad_since_ns && now_ns >= t->bad_since_ns &&
	       now_ns - t->bad_since_ns >= threshold_ns;
}

void flow_live_obs_set(const struct flow_live_track *t, struct flow_obs *o)
{
	o->live = (uint8_t)(t->verdict + 1);
	o->live_since_ns = t->bad_since_ns;
}
