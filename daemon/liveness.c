/* liveness: flow table and per-flow state machine. */
#include "daemon/liveness.h"
#include "collectors/flow_live.h"
#include "collectors/flow_sockdiag.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

#define HASH_BITS 12
#define NHASH (1u << HASH_BITS)

struct flowtab {
	struct sflow *hash[NHASH];
	unsigned n;
};

struct flowtab *flowtab_new(void)
{
	return calloc(1, sizeof(struct flowtab));
}

void flowtab_free(struct flowtab *ft)
{
	if (!ft)
		return;
	for (unsigned h = 0; h < NHASH; h++)
		while (ft->hash[h]) {
			struct sflow *f = ft->hash[h];

			ft->hash[h] = f->next;
			free(f);
		}
	free(ft);
}

unsigned flowtab_count(const struct flowtab *ft)
{
	return ft->n;
}

/* FNV-1a over the key's 64-bit words (a flow_key is 40 bytes, no holes
 * that are not zeroed), then the port name: the detector hashes every
 * observation of every poll. */
static uint32_t fhash(const struct flow_obs *o, const char *port)
{
	uint64_t h = 1469598103934665603ull, w[sizeof(o->key) / 8];

	_Static_assert(sizeof(o->key) % 8 == 0, "flow_key in 64-bit words");
	memcpy(w, &o->key, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / 8; i++)
		h = (h ^ w[i]) * 1099511628211ull;
	h = (h ^ (unsigned)o->src) * 1099511628211ull;
	h = (h ^ o->session) * 1099511628211ull;
	for (; *port; port++)
		h = (h ^ (unsigned char)*port) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

struct sflow *flowtab_get(struct flowtab *ft, const struct flow_obs *o, const char *port,
			  uint64_t now, int create)
{
	uint32_t hv = fhash(o, port);
	unsigned h = hv & (NHASH - 1);
	struct sflow *f;

	/* the stored hash first: one cache line per flow of the chain */
	for (f = ft->hash[h]; f; f = f->next)
		if (f->hash == hv && f->obs.src == o->src && f->obs.session == o->session &&
		    !memcmp(&f->obs.key, &o->key, sizeof(o->key)) && !strcmp(f->port, port))
			return f;
	if (!create || ft->n >= LIVENESS_MAX_FLOWS)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->hash = hv;
	f->obs = *o;
	util_strlcpy(f->port, port, sizeof(f->port));
	f->first_ns = now;
	f->progress_ns = now;
	f->next = ft->hash[h];
	ft->hash[h] = f;
	ft->n++;
	return f;
}

struct sflow *flowtab_next(const struct flowtab *ft, const struct sflow *prev)
{
	unsigned h = 0;

	if (prev) {
		if (prev->next)
			return prev->next;
		h = (prev->hash & (NHASH - 1)) + 1;
	}
	for (; h < NHASH; h++)
		if (ft->hash[h])
			return ft->hash[h];
	return NULL;
}

unsigned flowtab_expire(struct flowtab *ft, uint64_t now,
			void (*gone)(struct sflow *f, void *arg), void *arg)
{
	unsigned n = 0;

	for (unsigned h = 0; h < NHASH; h++) {
		struct sflow **pp = &ft->hash[h];

		while (*pp) {
			struct sflow *f = *pp;

			if (now - f->seen_ns > LIVENESS_GONE_NS) {
				if (gone)
					gone(f, arg);
				*pp = f->next;
				free(f);
				ft->n--;
				n++;
			} else
				pp = &f->next;
		}
	}
	return n;
}

const char *flow_src_name(enum flow_src_kind k)
{
	switch (k) {
	case FLOW_SRC_ENGINE: return "engine";
	case FLOW_SRC_BPF: return "bpf";
	case FLOW_SRC_SOCK: return "sock";
	case FLOW_SRC_ONLOAD: return "onload";
	case FLOW_SRC_VMA: return "vma";
	case FLOW_SRC_RDMAQP: return "rdmaqp";
	}
	return "?";
}

const char *flow_state_name(enum flow_state st)
{
	switch (st) {
	case FLOW_WAITING: return "waiting";
	case FLOW_STALLED: return "stalled";
	default: return "idle";
	}
}

void flow_tuple(const struct sflow *f, char *buf, size_t len)
{
	flow_key_format(&f->obs.key, buf, len);
}

void flow_norm_tuple(const struct sflow *f, char *buf, size_t len)
{
	struct flow_key k = f->obs.key;

	if (memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) > 0 ||
	    (!memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) && k.sport > k.dport)) {
		struct in6_addr a = k.saddr;
		uint16_t p = k.sport;

		k.saddr = k.daddr;
		k.daddr = a;
		k.sport = k.dport;
		k.dport = p;
	}
	flow_key_format(&k, buf, len);
}

/* When did the wait that was just noticed begin? The sources' own clocks
 * say it better than our poll time: the unanswered request's send time
 * (engine; kernel TCP with unacknowledged bytes), the arrival of unread
 * bytes, the last frame received (tracker). Never in the future, never
 * before the last progress we saw, never more than a poll old estimate
 * when the source gives nothing. */
static uint64_t wait_start(const struct sflow *f, const struct flow_obs *o, uint64_t now,
			   uint64_t poll_ns)
{
	uint64_t t = 0;

	switch (o->src) {
	case FLOW_SRC_ENGINE:
		if (o->last_tx_ns > o->last_rx_ns)
			t = o->last_tx_ns;
		else if (o->state & 0x4u)
			t = o->last_rx_ns;      /* awaiting: since the last data */
		break;
	case FLOW_SRC_SOCK:
		t = flow_obs_sock_wait_from(o);
		break;
	case FLOW_SRC_BPF:
		t = o->last_rx_ns;
		break;
	case FLOW_SRC_ONLOAD:
	case FLOW_SRC_VMA:
	case FLOW_SRC_RDMAQP:
		t = o->live_since_ns;   /* when the source's verdict turned bad */
		break;
	}
	if (!t || t > now || t < f->progress_ns - poll_ns || now - t > 10000000000ull)
		return now;
	return t;
}

/* When a kernel TCP flow moved, by the kernel's clocks: the last data or
 * acknowledgement received (tcp_info's last_data_recv, last_ack_recv). The
 * sock_diag source reads a socket that owes nothing only once a threshold,
 * so the read's time may be most of a threshold late; a wait that began
 * since then would otherwise be dated from the read. Within (the progress
 * seen before, now]; else now. */
static uint64_t sock_moved(const struct sflow *f, const struct flow_obs *o, uint64_t now)
{
	uint64_t t = o->last_rx_ns > o->last_ack_ns ? o->last_rx_ns : o->last_ack_ns;

	return t && t <= now && t > f->progress_ns ? t : now;
}

enum flow_event flow_update(struct sflow *f, const struct flow_obs *o, uint64_t now,
			    uint64_t threshold_ns, uint64_t poll_ns)
{
	const struct flow_obs *pv = &f->obs;
	int progress = 0, waiting = 0, first = f->seen_ns == 0;
	enum flow_event ev = FLOW_EV_NONE;
	uint64_t moved = now;   /* when the progress seen now happened */

	switch (o->src) {
	case FLOW_SRC_ENGINE:
		/* a request/response engine: requests sent beyond replies
		 * received are outstanding */
		progress = o->rx_msgs > pv->rx_msgs || o->rx_bytes > pv->rx_bytes;
		waiting = o->tx_msgs > o->rx_msgs || o->unsent > 0 ||
			  (o->state & 0x4u);    /* NSFT_ST_AWAITING: a consumer */
		break;
	case FLOW_SRC_SOCK:
		/* kernel TCP: bytes unacknowledged, or received and not read;
		 * or a message owed (flow_obs_sock_waiting, collectors/flows.h) */
		progress = o->tx_bytes > pv->tx_bytes || o->rx_bytes > pv->rx_bytes ||
			   (o->unread < pv->unread);
		waiting = flow_obs_sock_waiting(o);
		if (progress && !first)
			moved = sock_moved(f, o, now);
		break;
	case FLOW_SRC_BPF:
		/* frames. For UDP request/response a datagram sent after the
		 * last one received is outstanding. TCP frames (acks, window
		 * updates) say nothing about requests: kernel TCP liveness
		 * comes from sock_diag, bypass TCP from engine tables, and the
		 * tracker's TCP counts are evidence only. */
		progress = o->rx_msgs > pv->rx_msgs;
		if (progress || first)
			f->tx_at_rx = o->tx_msgs;
		waiting = o->key.proto == 17 && o->tx_msgs > f->tx_at_rx;
		break;
	case FLOW_SRC_ONLOAD:
	case FLOW_SRC_VMA:
	case FLOW_SRC_RDMAQP: {
		/* readers of unmodified engines judge each flow themselves
		 * (collectors/flow_live.h): held and failed wait like waiting */
		int v = flow_live_of(o);

		progress = v == FLOW_LIVE_PROGRESS;
		waiting = v == FLOW_LIVE_WAITING || v == FLOW_LIVE_HELD || v == FLOW_LIVE_FAILED;
		break;
	}
	}
	f->obs = *o;
	f->seen_ns = now;
	if (first) {
		progress = 0;
		f->progress_ns = now;
	}
	if (progress)
		f->progress_ns = moved;

	switch (f->state) {
	case FLOW_IDLE:
		if (waiting) {
			f->state = FLOW_WAITING;
			f->wait_since_ns = wait_start(f, o, now, poll_ns);
		}
		break;
	case FLOW_WAITING:
		if (!waiting)
			f->state = FLOW_IDLE;
		else if (progress)
			/* a new wait since the progress: kernel TCP dates it by
			 * its own clocks (its reads may be far apart) */
			f->wait_since_ns = o->src == FLOW_SRC_SOCK ? wait_start(f, o, now, poll_ns)
								  : now;
		break;
	case FLOW_STALLED:
		if (progress || !waiting) {
			f->state = waiting ? FLOW_WAITING : FLOW_IDLE;
			f->wait_since_ns = now;
			f->last_stall_ns = now - f->stalled_at_ns;
			ev = FLOW_EV_RELEASED;
		}
		break;
	}
	if (f->state == FLOW_WAITING && now - f->wait_since_ns > threshold_ns) {
		f->state = FLOW_STALLED;
		f->stalled_at_ns = f->wait_since_ns;
		f->stalls++;
		ev = FLOW_EV_STALLED;   /* (a release just set wait_since = now) */
	}
	return ev;
}
