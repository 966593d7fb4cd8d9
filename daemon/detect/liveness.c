/* liveness: flow table and per-flow state machine. */
#include "daemon/detect/liveness.h"
#include "collectors/flows/flow_live.h"
#include "collectors/flows/flow_sockdiag.h"
#include "lib/siphash.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

#define NSRC 7                          /* flow_src_kind values 1..6 */
#define NKEEP 4                         /* kinds of keep (flow_obs.keep_ns) */

struct fowner {                         /* one (source, uid) */
	enum flow_src_kind src;
	uint32_t uid;
	unsigned flows;
	uint64_t refused;
};

struct livetab {
	struct sflow **hash;
	unsigned nb;                    /* buckets, a power of two */
	unsigned n;
	struct sip_key key;
	unsigned nsrc[NSRC], lim[NSRC], lim_owner[NSRC];
	uint64_t refused_src[NSRC];     /* over the source's total */
	uint64_t refused_all;
	struct fowner *own;
	unsigned nown, aown;
	/* flows by how long they are kept unseen, each list in the order
	 * they were last looked up (oldest first) */
	struct {
		uint64_t keep;          /* 0: unused */
		struct sflow *head, *tail;
	} kl[NKEEP];
};

struct livetab *livetab_new(void)
{
	struct livetab *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return NULL;
	ft->nb = LIVENESS_MIN_BUCKETS;
	ft->hash = calloc(ft->nb, sizeof(*ft->hash));
	if (!ft->hash) {
		free(ft);
		return NULL;
	}
	sip_key_random(&ft->key);
	ft->kl[0].keep = LIVENESS_GONE_NS;      /* the least keep: touch() */
	ft->lim[FLOW_SRC_ENGINE] = LIVENESS_MAX_ENGINE_FLOWS;
	ft->lim_owner[FLOW_SRC_ENGINE] = LIVENESS_MAX_ENGINE_PER_OWNER;
	ft->lim[FLOW_SRC_SOCK] = LIVENESS_MAX_SOCK_FLOWS;
	ft->lim_owner[FLOW_SRC_SOCK] = LIVENESS_MAX_SOCK_PER_OWNER;
	ft->lim[FLOW_SRC_BPF] = LIVENESS_MAX_BPF_FLOWS;
	/* the readers of unmodified engines: each its own total */
	ft->lim[FLOW_SRC_ONLOAD] = LIVENESS_MAX_READER_FLOWS;
	ft->lim[FLOW_SRC_VMA] = LIVENESS_MAX_READER_FLOWS;
	ft->lim[FLOW_SRC_RDMAQP] = LIVENESS_MAX_READER_FLOWS;
	return ft;
}

void livetab_free(struct livetab *ft)
{
	if (!ft)
		return;
	for (unsigned h = 0; h < ft->nb; h++)
		while (ft->hash[h]) {
			struct sflow *f = ft->hash[h];

			ft->hash[h] = f->next;
			free(f);
		}
	free(ft->hash);
	free(ft->own);
	free(ft);
}

unsigned livetab_count(const struct livetab *ft)
{
	return ft->n;
}

static unsigned src_idx(enum flow_src_kind k)
{
	return (unsigned)k < NSRC ? (unsigned)k : 0;
}

void livetab_set_limit(struct livetab *ft, enum flow_src_kind k, unsigned total,
		       unsigned per_owner)
{
	ft->lim[src_idx(k)] = total;
	ft->lim_owner[src_idx(k)] = per_owner;
}

/* SipHash of everything that tells flows apart, under the table's key. */
static uint64_t fhash(const struct livetab *ft, const struct flow_obs *o, const char *port)
{
	unsigned char b[1 + 8 + sizeof(o->key) + 32];
	size_t pl = strnlen(port, 31), n = 0;

	b[n++] = (unsigned char)o->src;
	memcpy(b + n, &o->session, 8);
	n += 8;
	memcpy(b + n, &o->key, sizeof(o->key));
	n += sizeof(o->key);
	memcpy(b + n, port, pl);
	n += pl;
	return siphash24(&ft->key, b, n);
}

/* Double the buckets (up to LIVENESS_MAX_BUCKETS) once there are more flows
 * than buckets; the stored hashes make it one pass. */
static void grow(struct livetab *ft)
{
	unsigned nb = ft->nb * 2;
	struct sflow **nh;

	if (ft->n <= ft->nb || ft->nb >= LIVENESS_MAX_BUCKETS)
		return;
	nh = calloc(nb, sizeof(*nh));
	if (!nh)
		return;         /* longer chains, still correct */
	for (unsigned h = 0; h < ft->nb; h++)
		while (ft->hash[h]) {
			struct sflow *f = ft->hash[h];

			ft->hash[h] = f->next;
			f->next = nh[f->hash & (nb - 1)];
			nh[f->hash & (nb - 1)] = f;
		}
	free(ft->hash);
	ft->hash = nh;
	ft->nb = nb;
}

/* The owner entry of o (made when new); -1 when o's owner is unknown, its
 * source has no owner limit, or there are too many owners (refused). */
static int owner_of(struct livetab *ft, const struct flow_obs *o, int *full)
{
	*full = 0;
	if (!o->uid_known || !ft->lim_owner[src_idx(o->src)])
		return -1;
	for (unsigned i = 0; i < ft->nown; i++)
		if (ft->own[i].uid == o->uid && ft->own[i].src == o->src)
			return (int)i;
	if (ft->nown >= LIVENESS_MAX_OWNERS) {
		*full = 1;
		return -1;
	}
	if (ft->nown == ft->aown) {
		unsigned na = ft->aown ? ft->aown * 2 : 16;
		struct fowner *no = realloc(ft->own, na * sizeof(*no));

		if (!no) {
			*full = 1;
			return -1;
		}
		ft->own = no;
		ft->aown = na;
	}
	ft->own[ft->nown] = (struct fowner){ .src = o->src, .uid = o->uid };
	return (int)ft->nown++;
}

static uint64_t keep_of(const struct flow_obs *o)
{
	/* a source that says it reports the flow rarely (the kernel-event
	 * watch, engine tables' idle sessions) is believed that long */
	return o->keep_ns > LIVENESS_GONE_NS ? o->keep_ns : LIVENESS_GONE_NS;
}

static void kunlink(struct livetab *ft, struct sflow *f)
{
	struct sflow **pn = f->kprev ? &f->kprev->knext : &ft->kl[f->kclass].head;
	struct sflow **pp = f->knext ? &f->knext->kprev : &ft->kl[f->kclass].tail;

	*pn = f->knext;
	*pp = f->kprev;
	f->kprev = f->knext = NULL;
}

/* f was looked up at now for an observation kept keep: the tail of its
 * keep's list. A fifth kind of keep shares the list of the longest keep
 * shorter than it (the first list's, LIVENESS_GONE_NS, at least), where
 * livetab_expire() reaches it in time and passes over it until its own
 * keep has passed. */
static void touch(struct livetab *ft, struct sflow *f, uint64_t keep, uint64_t now, int linked)
{
	unsigned c, best = 0;

	for (c = 0; c < NKEEP && ft->kl[c].keep && ft->kl[c].keep != keep; c++)
		if (ft->kl[c].keep < keep && ft->kl[c].keep > ft->kl[best].keep)
			best = c;
	if (c == NKEEP)
		c = best;
	else if (!ft->kl[c].keep)
		ft->kl[c].keep = keep;
	if (linked)
		kunlink(ft, f);
	f->kclass = (uint8_t)c;
	f->touch_ns = now;
	f->kprev = ft->kl[c].tail;
	f->knext = NULL;
	if (f->kprev)
		f->kprev->knext = f;
	else
		ft->kl[c].head = f;
	ft->kl[c].tail = f;
}

struct sflow *livetab_get(struct livetab *ft, const struct flow_obs *o, const char *port,
			  uint64_t now, int create)
{
	uint64_t hv = fhash(ft, o, port);
	unsigned si = src_idx(o->src);
	struct sflow *f;
	int own, full;

	for (f = ft->hash[hv & (ft->nb - 1)]; f; f = f->next)
		if (f->hash == hv && f->obs.src == o->src && f->obs.session == o->session &&
		    !memcmp(&f->obs.key, &o->key, sizeof(o->key)) && !strcmp(f->port, port)) {
			if (create)
				touch(ft, f, keep_of(o), now, 1);
			return f;
		}
	if (!create)
		return NULL;
	own = owner_of(ft, o, &full);
	if (full || ft->nsrc[si] >= ft->lim[si] ||
	    (own >= 0 && ft->own[own].flows >= ft->lim_owner[si])) {
		if (own >= 0 && ft->nsrc[si] < ft->lim[si])
			ft->own[own].refused++;
		else
			ft->refused_src[si]++;
		ft->refused_all++;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->hash = hv;
	f->obs = *o;
	f->owner = own;
	util_strlcpy(f->port, port, sizeof(f->port));
	f->first_ns = now;
	f->progress_ns = now;
	f->next = ft->hash[hv & (ft->nb - 1)];
	ft->hash[hv & (ft->nb - 1)] = f;
	ft->n++;
	ft->nsrc[si]++;
	if (own >= 0)
		ft->own[own].flows++;
	touch(ft, f, keep_of(o), now, 0);
	grow(ft);
	return f;
}

struct sflow *livetab_next(const struct livetab *ft, const struct sflow *prev)
{
	unsigned h = 0;

	if (prev) {
		if (prev->next)
			return prev->next;
		h = (unsigned)(prev->hash & (ft->nb - 1)) + 1;
	}
	for (; h < ft->nb; h++)
		if (ft->hash[h])
			return ft->hash[h];
	return NULL;
}

static void forget(struct livetab *ft, struct sflow *f)
{
	ft->n--;
	ft->nsrc[src_idx(f->obs.src)]--;
	if (f->owner >= 0)
		ft->own[f->owner].flows--;
	free(f);
}

unsigned livetab_expire(struct livetab *ft, uint64_t now,
			void (*gone)(struct sflow *f, void *arg), void *arg)
{
	unsigned n = 0;

	for (unsigned c = 0; c < NKEEP; c++) {
		uint64_t keep = ft->kl[c].keep;
		struct sflow *f = ft->kl[c].head, *nx;

		/* the oldest looked up first: stop at the first looked up
		 * within keep (one seen later than looked up, as a test may
		 * do, is passed over) */
		for (; f && now - f->touch_ns > keep; f = nx) {
			struct sflow **pp;

			nx = f->knext;
			if (now - f->seen_ns <= keep_of(&f->obs))
				continue;
			for (pp = &ft->hash[f->hash & (ft->nb - 1)]; *pp && *pp != f; pp = &(*pp)->next)
				;
			if (!*pp)
				continue;       /* cannot be: every flow is hashed */
			if (gone)
				gone(f, arg);
			*pp = f->next;
			kunlink(ft, f);
			forget(ft, f);
			n++;
		}
	}
	return n;
}

void livetab_usage(const struct livetab *ft, int refused_only, livetab_use_fn fn, void *arg)
{
	for (unsigned k = 1; k < NSRC; k++) {
		struct livetab_use u = { .src = (enum flow_src_kind)k, .flows = ft->nsrc[k],
					 .limit = ft->lim[k], .refused = ft->refused_src[k] };

		if (!refused_only || u.refused)
			fn(&u, arg);
	}
	for (unsigned i = 0; i < ft->nown; i++) {
		const struct fowner *o = &ft->own[i];
		struct livetab_use u = { .src = o->src, .uid_known = 1, .uid = o->uid,
					 .flows = o->flows, .limit = ft->lim_owner[src_idx(o->src)],
					 .refused = o->refused };

		if (!refused_only || u.refused)
			fn(&u, arg);
	}
}

uint64_t livetab_refused(const struct livetab *ft)
{
	return ft->refused_all;
}

unsigned livetab_buckets(const struct livetab *ft)
{
	return ft->nb;
}

unsigned livetab_longest_chain(const struct livetab *ft)
{
	unsigned m = 0;

	for (unsigned h = 0; h < ft->nb; h++) {
		unsigned c = 0;

		for (const struct sflow *f = ft->hash[h]; f; f = f->next)
			c++;
		if (c > m)
			m = c;
	}
	return m;
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

void flow_norm_key(const struct flow_key *in, struct flow_key *out)
{
	struct flow_key k = *in;

	if (memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) > 0 ||
	    (!memcmp(&k.saddr, &k.daddr, sizeof(k.saddr)) && k.sport > k.dport)) {
		struct in6_addr a = k.saddr;
		uint16_t p = k.sport;

		k.saddr = k.daddr;
		k.daddr = a;
		k.sport = k.dport;
		k.dport = p;
	}
	memset(k.pad, 0, sizeof(k.pad));
	*out = k;
}

void flow_norm_tuple(const struct sflow *f, char *buf, size_t len)
{
	struct flow_key k;

	flow_norm_key(&f->obs.key, &k);
	flow_key_format(&k, buf, len);
}

/* When did the wait that was just noticed begin? The sources' own clocks
 * say it better than our poll time: the unanswered request's send time
 * (engine; kernel TCP with unacknowledged bytes), the arrival of unread
 * bytes, the last frame received (tracker). Never in the future, never
 * before the last progress we saw could have come (poll_ns before it: the
 * time since the detector's previous poll; the detector passes its
 * interval for kernel TCP, whose progress is the kernel's own time); the
 * poll's own time when the source gives nothing usable, and when it gave
 * no time at all the flow is marked undated_wait (the detector polls for
 * it at every interval from then: daemon/detect/stall_plan.c). */
static uint64_t wait_start(struct sflow *f, const struct flow_obs *o, uint64_t now,
			   uint64_t poll_ns)
{
	uint64_t t = 0;

	switch (o->src) {
	case FLOW_SRC_ENGINE:
		if (o->last_tx_ns > o->last_rx_ns)
			t = o->last_tx_ns;
		else if ((o->state & 0x4u) || o->tx_msgs > o->rx_msgs)
			/* awaiting: since the last data; requests pipelined,
			 * the last reply after the last send: the one still
			 * unanswered left before it (dated late, never early) */
			t = o->last_rx_ns;
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
	if (!t || t > now || t < f->progress_ns - poll_ns || now - t > FLOW_WAIT_BACK_MAX_NS) {
		/* no time: the source cannot date this wait (one after the
		 * poll's start was taken while it was read, one before the
		 * bound is a wait older than the poll that sees it: both are
		 * dated at the poll, rightly) */
		if (!t)
			f->undated_wait = 1;
		return now;
	}
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
		 * or a message owed (flow_obs_sock_waiting, collectors/flows/flows.h) */
		progress = o->tx_bytes > pv->tx_bytes || o->rx_bytes > pv->rx_bytes ||
			   (o->unread < pv->unread);
		/* but not a wait the source's kernel watch holds (young,
		 * queued in its wheel: sockdiag_watch.c sd_watch_held), which
		 * the kernel posts if it lasts; only where the bytes moved
		 * (or the flow is new): the source's word alone releases no
		 * stall and moves no wait's start */
		waiting = flow_obs_sock_waiting(o) &&
			  !(flow_live_of(o) == FLOW_LIVE_PROGRESS && (progress || first));
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
		 * (collectors/flows/flow_live.h): held and failed wait like waiting */
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
	/* the retransmissions a wait since then made are counted from here */
	if (progress && o->retrans >= f->retrans_at_progress)
		f->retrans_wait = o->retrans - f->retrans_at_progress;
	if (first || progress)
		f->retrans_at_progress = o->retrans;

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
			/* a new wait since the progress, dated by the source's
			 * clocks as a first wait is: kernel TCP's reads may be
			 * far apart, and so may the detector's polls (a flow
			 * caught waiting at two polls a refresh apart that
			 * moved between them; dated at the poll, a stall that
			 * began just after the first would be called up to a
			 * refresh late) */
			f->wait_since_ns = wait_start(f, o, now, poll_ns);
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

enum flow_event flow_stall_now(struct sflow *f)
{
	if (f->state != FLOW_WAITING)
		return FLOW_EV_NONE;
	f->state = FLOW_STALLED;
	f->stalled_at_ns = f->wait_since_ns;
	f->stalls++;
	return FLOW_EV_STALLED;
}
