/* sockdiag_watch: sock_diag's use of the kernel-event socket watch
 * (sockwatch_api.h). A socket that owes nothing is not read again for
 * SD_WATCH_BACKSTOP_NS: the kernel posts when one of its waits reaches a
 * threshold less a poll, and from that read on it is paced as every
 * socket is (sockdiag_pace.h) until it owes nothing again. While the
 * detector wants a flow of the port (the last FLOW_SRC_WANT_HOLD_NS), every
 * socket is read on that pace, so what moved beside a stall is current.
 * An event that may have been lost (a full ring, a timer not armed) makes
 * every socket due at once. With sock_liveness = auto, a socket whose
 * callbacks come faster than SOCKWATCH_BUSY a window is handed back by
 * the kernel and read on its pace, as with paced reads, until a read finds
 * it owing nothing with the bytes of the read before (idle since); then
 * it is registered again. */
#include "collectors/flows/flow_sockdiag_int.h"
#include "collectors/flows/flow_live.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows/sockwatch.h"
#include "collectors/flows/sockwatch_api.h"
#include "lib/util.h"

/* The reader's key for a remembered socket (the BPF reader and the
 * watch's registration look sockets up the same way). */
void sd_reader_key(const struct sd_sock *s, struct sr_key *k)
{
	static const uint32_t mapped[3] = { 0, 0, 0 };
	const struct inet_diag_sockid *id = &s->id;

	memset(k, 0, sizeof(*k));
	k->lport = id->idiag_sport;
	k->rport = id->idiag_dport;
	k->cookie = sd_cookie(id);
	if (s->family == AF_INET) {
		k->v4 = 1;
		k->laddr[3] = id->idiag_src[0];
		k->raddr[3] = id->idiag_dst[0];
	} else if (!memcmp(id->idiag_src, mapped, 8) && id->idiag_src[2] == htonl(0xffff) &&
		   !memcmp(id->idiag_dst, mapped, 8) && id->idiag_dst[2] == htonl(0xffff)) {
		k->v4 = 1;      /* dual-stack socket of a v4 pair: the v4 lookup */
		k->laddr[3] = id->idiag_src[3];
		k->raddr[3] = id->idiag_dst[3];
	} else {
		memcpy(k->laddr, id->idiag_src, 16);
		memcpy(k->raddr, id->idiag_dst, 16);
	}
}

static int sd_byslot_cmp(const void *a, const void *b)
{
	const struct sd_byslot *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static void sd_byslot_make(struct sockdiag *sd)
{
	struct sd_byslot *n = realloc(sd->byslot, (sd->nknown ? sd->nknown : 1) * sizeof(*n));

	sd->byslot_walks = 0;
	if (!n)
		return;         /* no memory: the posts walk */
	sd->byslot = n;
	sd->nbyslot = 0;
	for (unsigned i = 0; i < sd->nknown; i++)
		if (sd->known[i].sw_slot)
			n[sd->nbyslot++] = (struct sd_byslot){ sd->known[i].sw_slot, i };
	qsort(n, sd->nbyslot, sizeof(*n), sd_byslot_cmp);
	sd->byslot_ok = 1;
}

/* The remembered socket that has slot (NULL: none, its slot given up
 * since the post). The map is a cache: a post it cannot place walks every
 * socket, and a socket found so means the map is stale. Every slot is
 * given at a registration or a dump, and both mark it stale, so a map that
 * is not stale misses only a slot given up (a socket closed between its
 * post and this), which walks. A stale map is made at the second post
 * after it went stale, so a port whose dumps come often and posts seldom
 * walks once a post, as before, rather than sorting. */
static struct sd_sock *sd_by_slot(struct sockdiag *sd, uint32_t slot)
{
	if (!sd->byslot_ok && sd->byslot_walks > 0)
		sd_byslot_make(sd);
	if (sd->byslot_ok) {
		struct sd_byslot key = { .slot = slot }, *hit;

		hit = bsearch(&key, sd->byslot, sd->nbyslot, sizeof(*sd->byslot), sd_byslot_cmp);
		if (hit && hit->idx < sd->nknown && sd->known[hit->idx].sw_slot == slot &&
		    !sd->known[hit->idx].gone)
			return &sd->known[hit->idx];
	} else {
		sd->byslot_walks++;
	}
	for (unsigned i = 0; i < sd->nknown; i++)
		if (sd->known[i].sw_slot == slot && !sd->known[i].gone) {
			if (sd->byslot_ok) {    /* it did not know this one */
				sd_byslot_stale(sd);
				sd->byslot_walks = 1;
			}
			return &sd->known[i];
		}
	return NULL;
}

/* A deadline: the socket is read at the next poll, which comes now. */
static void sd_watch_event(void *arg, const struct sockwatch_event *e)
{
	struct sockdiag *sd = arg;
	struct sd_sock *k;

	if (e->busy) {
		/* handed back for its rate: its slot given up (the kernel
		 * took its callbacks and storage off), read on its pace from
		 * now, and not registered again until idle */
		if (!(k = sd_by_slot(sd, e->slot)))
			return;
		sd_watch_gone(sd, k);
		k->sw_busy = 1;
		k->busy_tx = k->busy_rx = UINT64_MAX;
		k->busy_until = 0;      /* its hold dated at its next read */
		sd->st.busy_handed++;
		return;
	}
	if (e->left) {
		/* it left ESTABLISHED (sockwatch.bpf.c sw_left): read now, and
		 * not quiet from that read, which may come before the kernel
		 * stores the new state (the hooks run first) and see it still
		 * established: the backstop after it is 30 s. Not a deadline;
		 * a wait the kernel posted (ev_from) stands. */
		if (!(k = sd_by_slot(sd, e->slot)))
			return;
		sd_due_now(sd, k);
		k->bs_read = 0;
		sd->st.state_reads++;
		return;
	}
	sd->st.events_n++;
	if (!(k = sd_by_slot(sd, e->slot)))
		return;
	sd_due_now(sd, k);
	/* a wait the peer owes (bytes unacknowledged, a reply not come): its
	 * start by the hooks, and its bytes as inet_diag gives them
	 * (sockdiag_fill.c: the SYN is one of bytes_acked, and one of the
	 * written count) */
	k->ev_from = e->owed ? e->wait_late : 0;
	k->ev_tx = e->acked ? e->acked - 1 : 0;
	k->ev_rx = e->rcvd;
	k->ev_written = e->written ? e->written - 1 : 0;
	sd->st.event_reads++;
}

void sd_watch_open(struct sockdiag *sd)
{
	if (sd->opts.no_events) {
		util_strlcpy(sd->sw_why, "off", sizeof(sd->sw_why));
		return;
	}
	if (sd->opts.events_tracepoints) {
		sd->sw = sockwatch_open(sd->nsfd, sd_watch_event, sd, sd->sw_why,
					sizeof(sd->sw_why));
	} else {
		/* auto: the tracepoints would run for every TCP socket of the
		 * host, not unless asked for, and not even for the moment of
		 * a look (the open fails before any is attached) */
		static const char pfx[] = "no sockops callbacks: ";
		char why[200] = "";

		sd->sw = sockwatch_open_sockops(sd->nsfd, sd_watch_event, sd, why, sizeof(why));
		if (!sd->sw && !strncmp(why, pfx, sizeof(pfx) - 1))
			snprintf(sd->sw_why, sizeof(sd->sw_why), "no sockops callbacks (%.120s): "
				 "sock_liveness = events takes the tracepoints", why + sizeof(pfx) - 1);
		else if (!sd->sw)
			util_strlcpy(sd->sw_why, why, sizeof(sd->sw_why));
		/* a socket busier than the callbacks are worth is read on its
		 * pace (events: every socket on the hooks, however busy) */
		sockwatch_set_busy(sd->sw, SOCKWATCH_BUSY);
	}
	sd->sw_losses = sockwatch_losses();
	sd->sw_scan = 1;
}

void sd_watch_close(struct sockdiag *sd)
{
	sockwatch_close(sd->sw);        /* every slot of ours with it */
	sd->sw = NULL;
	sd->sw_broken = 0;
	sd->sw_retry_at = 0;
	for (unsigned i = 0; i < sd->nknown; i++) {
		if (sd->known[i].sw_slot)
			sd->known[i].pace.due_ns = 0;   /* on its pace from now */
		sd->known[i].sw_slot = 0;
		sd->known[i].sw_refused = 0;    /* the next watch may take it */
		sd->known[i].sw_busy = 0;
	}
	sd_due_moved(sd);
}

void sd_watch_gone(struct sockdiag *sd, struct sd_sock *k)
{
	if (k->sw_slot) {
		sockwatch_del(sd->sw, k->sw_slot);
		sd_due_now(sd, k);      /* no kernel to say when it waits */
	}
	k->sw_slot = 0;
}

/* The watch failed: every socket on its pace from now. The watch itself
 * stays open until the reader closes, since its fd is in the daemon's
 * loop (a closed fd whose file lives on in the ring's other dups would
 * stay registered there). */
static void sd_watch_break(struct sockdiag *sd, const char *why, int walk)
{
	snprintf(sd->sw_why, sizeof(sd->sw_why), "%s", why);
	for (unsigned i = 0; i < sd->nknown; i++)
		sd_watch_gone(sd, &sd->known[i]);
	sd->sw_broken = 1;
	/* the sockops flags off the sockets whose slots went (a walk that
	 * fails here leaves them a callback that finds no slot), unless the
	 * walk is what failed */
	if (walk)
		sockwatch_enrol(sd->sw, NULL, NULL, NULL, 0);
}

/* A socket the kernel would not give the sockops callbacks: on its pace. */
static void sd_watch_refused(void *arg, uint32_t slot)
{
	struct sockdiag *sd = arg;
	struct sd_sock *k = sd_by_slot(sd, slot);

	if (!k)
		return;
	sd_watch_gone(sd, k);
	k->sw_refused = 1;      /* not registered again */
	sd->st.enrol_refused++;
}

/* The span a slot waits before the kernel says so: a threshold less a
 * poll, as the pace reads a waiting socket (sockdiag_pace.h), so that the
 * port's other sockets are read (the detector's want) before the stall
 * is called at its deadline (stall_plan.c: a deadline's poll comes a
 * tenth of an interval after the last at the soonest); a post at the
 * threshold would call it with its siblings not read for up to 30 s. */
static uint64_t sd_watch_span(const struct sockdiag *sd)
{
	return sd->stall_ns > sd->poll_ns ? sd->stall_ns - sd->poll_ns : 0;
}

void sd_watch_register(struct sockdiag *sd, uint64_t now)
{
	struct sr_key keys[SW_REG_CHUNK];
	uint32_t slots[SW_REG_CHUNK];
	unsigned idx[SW_REG_CHUNK], n = 0;
	uint64_t span = sd_watch_span(sd);
	unsigned added = 0;
	char err[200];

	if (!sd->sw || sd->sw_broken)
		return;
	if (!span) {
		/* a threshold of a poll or less: every socket every poll */
		unsigned had = 0;

		for (unsigned i = 0; i < sd->nknown; i++) {
			had += sd->known[i].sw_slot != 0;
			sd_watch_gone(sd, &sd->known[i]);
		}
		if (had)        /* their sockops flags off */
			sockwatch_enrol(sd->sw, NULL, NULL, NULL, 0);
		/* no slots for any span: a threshold back to the one they
		 * had is a new one (registered at once, not at a dump) */
		sd->sw_span = 0;
		return;
	}
	if (span != sd->sw_span) {      /* a new threshold: new slots */
		for (unsigned i = 0; i < sd->nknown; i++) {
			sd_watch_gone(sd, &sd->known[i]);
			sd->known[i].sw_tried = 0;
		}
		sd->sw_span = span;
		sd->sw_scan = 1;
		sd->sw_retry_at = 0;    /* every socket is tried now */
	}
	if (sd->sw_retry_at && now >= sd->sw_retry_at) {
		/* the kernel had no storage for some: those without a slot
		 * are tried again (one the kernel no longer has gets none) */
		for (unsigned i = 0; i < sd->nknown; i++)
			if (!sd->known[i].sw_slot)
				sd->known[i].sw_tried = 0;
		sd->sw_retry_at = 0;
		sd->sw_scan = 1;
	}
	/* a walk of every socket only when some may be new to the watch:
	 * after a dump, an open, a new threshold, a retry's time */
	if (!sd->sw_scan)
		return;
	sd->sw_scan = 0;
	for (unsigned i = 0; i <= sd->nknown; i++) {
		struct sd_sock *k = i < sd->nknown ? &sd->known[i] : NULL;

		if (k && !k->gone && !k->sw_slot && !k->sw_tried && !k->sw_refused &&
		    !k->sw_busy) {
			k->sw_tried = 1;
			sd_reader_key(k, &keys[n]);
			idx[n++] = i;
		}
		if (!n || (k && n < SW_REG_CHUNK))
			continue;
		if (sockwatch_add(sd->sw, keys, n, span, slots, err, sizeof(err)) < 0) {
			sd_watch_break(sd, err, 1);
			return;
		}
		for (unsigned j = 0; j < n; j++) {
			if (slots[j] == SOCKWATCH_RETRY) {
				/* asked again SD_WATCH_RETRY_NS on (or at the
				 * next dump): where the kernel's allocator has
				 * nothing now it may have nothing for many
				 * polls, and each try is a run */
				sd->st.reg_retries++;
				if (!sd->sw_retry_at)
					sd->sw_retry_at = now + (sd->opts.reg_retry_ns ?
								 sd->opts.reg_retry_ns :
								 SD_WATCH_RETRY_NS);
				continue;
			}
			sd->known[idx[j]].sw_slot = slots[j];
			sd->st.registered += slots[j] != 0;
			added += slots[j] != 0;
		}
		n = 0;
	}
	if (added)
		sd_byslot_stale(sd);
	/* once for all the chunks: with the sockops hooks a walk of the
	 * namespace's sockets, as the dump that found them was */
	if (added && sockwatch_enrol(sd->sw, sd_watch_refused, sd, err, sizeof(err)) < 0)
		sd_watch_break(sd, err, 0);
}

void sd_watch_before(struct sockdiag *sd, uint64_t now)
{
	int hold = sd->wanted_ns && now >= sd->wanted_ns &&
		   now - sd->wanted_ns < FLOW_SRC_WANT_HOLD_NS;
	uint64_t losses;
	int all = 0;

	if (!sd->sw || sd->sw_broken)
		return;
	/* the ring is consumed by the fd's handler only, which wakes the
	 * detector: consumed here, a post for a port polled earlier in this
	 * round would wait for the next poll (a second away while nothing
	 * else asks). A loss posts too (sockwatch.bpf.c sw_note_loss), so
	 * the poll it wakes reads every socket */
	losses = sockwatch_losses();
	sd->sw_lossy = losses != sd->sw_losses;
	if (sd->sw_lossy) {
		sd->sw_losses = losses;
		sd->st.loss_reads++;
		all = 1;
	}
	if (hold && !sd->hold) {
		sd->st.holds++;
		all = 1;
	}
	sd->hold = hold;
	if (all) {
		for (unsigned i = 0; i < sd->nknown; i++)
			sd->known[i].pace.due_ns = 0;
		sd_due_moved(sd);
	}
}

int sd_watch_kernel_holds(const struct sockwatch_slot *h, const struct flow_obs *o,
			  uint64_t wait_from, uint64_t now, uint64_t span, uint64_t poll_ns)
{
	uint64_t young = poll_ns / 2;

	/* a wait the wheel will post: judged, in the wheel, and not posted
	 * already (sw_look() posts a deadline once: one posted and since
	 * re-dated by a read, the same wait to the hooks, would never be
	 * posted again) */
	if (!h->waiting || !h->queued || h->posted || !h->deadline)
		return 0;
	/* read at its post, a span after its start and up to a poll late,
	 * the wait must still be one the detector dates by its start
	 * (FLOW_WAIT_BACK_MAX_NS): a threshold of 10 s or more is followed */
	if (span + 2 * poll_ns >= FLOW_WAIT_BACK_MAX_NS)
		return 0;
	/* judged on the state this read saw: the same bytes acknowledged,
	 * received and written (inet_diag's count the SYN out of
	 * bytes_acked and of the written count: sockdiag_fill.c) */
	if (!h->acked || h->acked - 1 != o->tx_bytes || h->rcvd != o->rx_bytes || !h->written ||
	    h->written - 1 != o->tx_bytes + o->inflight + o->unsent)
		return 0;
	/* young by both clocks. The detector, told the flow does not wait,
	 * dates the wait at its post by the source's clocks, and believes
	 * them back to the progress it saw now less a poll (liveness.c
	 * wait_start): begun within half a poll, the start holds */
	if (!wait_from || wait_from > now || now - wait_from > young || !h->wait_from ||
	    h->wait_from > now || now - h->wait_from > young)
		return 0;
	/* posted no later than the pace would read it (a tenth of a poll:
	 * the kernel dates by jiffies), and not within a poll from now */
	return h->deadline <= wait_from + span + poll_ns / 10 && h->deadline > now + poll_ns;
}

/* A read found socket k waiting. A busy request/response socket caught so
 * (its reply in flight and the peer's ACK delayed to its next request, or
 * its request's reply not yet come) would be read at that wait's want,
 * find the next such wait, young, be read at its want, and so on: a
 * threshold less a poll apart for as long as it is busy (6.7 reads a
 * second a socket at the defaults, and each want a poll). A young wait
 * the kernel holds (sd_watch_kernel_holds) is left to it: the detector is
 * told the flow does not wait (live: progress; it moved since the read
 * before or it would not be young), and the wheel posts the wait if it
 * lasts, when it is read and dated as any post. Not at a poll that reads
 * every socket for a loss (the wait lost may be this one).
 * Such a wait is then the hooks' alone until the next hook on the socket
 * or the 30 s backstop, as the wait of any socket that owes nothing is:
 * what the hooks cannot see (sockwatch.bpf.c's list: an older judgement
 * stored after a newer one, an ACK the tracepoints predicted that the
 * kernel then dropped) now costs a held busy socket what it costs an
 * idle one. */
static int sd_watch_held(struct sockdiag *sd, struct sd_sock *k, struct flow_obs *o,
			 uint64_t now)
{
	uint64_t from = k->pace.wait_from;
	struct sockwatch_slot h;

	/* young first (sd_watch_kernel_holds asks it again): a socket in a
	 * long wait, read at every poll while it lasts, costs no map read */
	if (sd->sw_lossy || !from || from > now || now - from > sd->poll_ns / 2 ||
	    sockwatch_slot(sd->sw, k->sw_slot, &h) <= 0 ||
	    !sd_watch_kernel_holds(&h, o, k->pace.wait_from, now, sd_watch_span(sd), sd->poll_ns))
		return 0;
	o->live = FLOW_LIVE_PROGRESS + 1;
	sd->st.kernel_held++;
	return 1;
}

/* The backstop is for what the hooks cannot see (their list in
 * sockwatch.bpf.c: data taken after the socket's FIN, a send past the
 * send tracepoint, an ACK the hooks judged that the kernel then dropped,
 * an older judgement stored after a newer one). Each of those moves the
 * bytes a read sees (received, acknowledged, or written), so a socket
 * whose bytes the reads find as they were a backstop or more before
 * passed none of them meanwhile; it is read again after
 * SD_WATCH_QUIET_NS, not SD_WATCH_BACKSTOP_NS, which halves what idle
 * sockets cost (bench/README.md, 6 December, late evening). What that
 * costs: a socket quiet for a backstop whose next exchange meets one of
 * those paths is read up to SD_WATCH_QUIET_NS after the read before, not
 * SD_WATCH_BACKSTOP_NS. Only where it is established (a socket closing,
 * FIN_WAIT among them, takes the path the hooks miss without a byte
 * moving first) and owes nothing (a held wait is a busy socket's). */
static int bs_same_bytes(const struct sd_sock *k, const struct flow_obs *o)
{
	return k->bs_read && o->tx_bytes == k->bs_tx && o->rx_bytes == k->bs_rx &&
	       o->tx_bytes + o->inflight + o->unsent == k->bs_written;
}

uint64_t sd_watch_backstop_ns(const struct sd_sock *k, const struct flow_obs *o, uint64_t now)
{
	if (bs_same_bytes(k, o) && o->state == SD_TCP_ESTABLISHED && !flow_obs_sock_waiting(o) &&
	    now >= k->bs_at && now - k->bs_at + SD_WATCH_BACKSTOP_NS / 10 >= SD_WATCH_BACKSTOP_NS)
		return SD_WATCH_QUIET_NS;
	return SD_WATCH_BACKSTOP_NS;
}

void sd_watch_paced(struct sockdiag *sd, struct sd_sock *k, struct flow_obs *o,
		    uint64_t now)
{
	/* The wait's start as the kernel's hooks saw it, for bytes owed by
	 * the peer: every retransmission since moved the last send
	 * (lsndtime), and the back-dating from the timeouts in a row
	 * (sockdiag_fill.c) misses the tail loss probe, which is no timeout:
	 * read first a threshold less a poll into it, the wait would be
	 * dated up to a probe and a timeout late. Taken (its later bound:
	 * the hooks know the send's jiffy) when nothing moved since the hooks
	 * judged it: the same bytes acknowledged, received and written (a
	 * reply written since is a wait of its own). */
	if (k->ev_from && (o->unsent || o->inflight) && o->tx_bytes == k->ev_tx &&
	    o->rx_bytes == k->ev_rx && o->tx_bytes + o->inflight + o->unsent == k->ev_written &&
	    flow_obs_sock_wait_from(o) > k->ev_from)
		o->unacked_since_ns = k->ev_from;
	sd_pace_read(&k->pace, o, now, sd->stall_ns, sd->poll_ns);
	if (!k->pace.wait_from || o->tx_bytes != k->ev_tx || o->rx_bytes != k->ev_rx)
		k->ev_from = 0;         /* a new wait: the kernel will say */
	if (k->sw_busy) {
		/* handed back for its rate: back on the watch (registered at
		 * the next registration: after this dump, or at the next
		 * poll) once its hold is over and it
		 * owes nothing and moved nothing since the read before (a
		 * flow between two messages owes nothing too, but moves) */
		if (!k->busy_until) {
			uint64_t base = sd->opts.busy_hold_ns ? sd->opts.busy_hold_ns :
					SD_BUSY_HOLD_NS;
			int again = k->busy_hold && k->busy_back_at &&
				    now - k->busy_back_at < SD_BUSY_HOLD_MAX_NS;

			k->busy_hold = again ? k->busy_hold * 2 : base;
			if (k->busy_hold > SD_BUSY_HOLD_MAX_NS)
				k->busy_hold = SD_BUSY_HOLD_MAX_NS;
			k->busy_until = now + k->busy_hold;
		}
		if (now >= k->busy_until && !k->pace.wait_from && o->tx_bytes == k->busy_tx &&
		    o->rx_bytes == k->busy_rx) {
			k->sw_busy = 0;
			k->sw_tried = 0;
			k->busy_back_at = now;
			sd->sw_scan = 1;
			sd->st.busy_back++;
		}
		k->busy_tx = o->tx_bytes;
		k->busy_rx = o->rx_bytes;
	}
	if (sd->sw && !sd->sw_broken && k->sw_slot && !sd->hold && sd_watch_span(sd) &&
	    (!k->pace.wait_from || sd_watch_held(sd, k, o, now))) {
		/* owes nothing, or waits as the kernel holds it: the kernel
		 * says when it waits */
		uint64_t bs = sd_watch_backstop_ns(k, o, now);

		k->pace.due_ns = now + bs;
		o->keep_ns = bs + bs / 2;
		if (!bs_same_bytes(k, o)) {     /* quiet from now, if at all */
			k->bs_tx = o->tx_bytes;
			k->bs_rx = o->rx_bytes;
			k->bs_written = o->tx_bytes + o->inflight + o->unsent;
			k->bs_at = now;
			k->bs_read = 1;
		}
		if (bs > SD_WATCH_BACKSTOP_NS)
			sd->st.quiet_reads++;
		sd_backstop(sd, k);
		return;
	}
	k->bs_read = 0;
	sd_pace_cap(&k->pace, now, sd->refresh_ns);
	sd_paced(sd, k);
}
