/* Unit tests: when sock_diag reads a watched socket again (sockdiag_pace),
 * alone and against the detector (daemon/detect/liveness.c): a paced detector
 * decides what one fed at every poll decides, at the same polls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/flow_sockdiag_int.h"
#include "collectors/flows/sockdiag_pace.h"
#include "collectors/flows/sockwatch_api.h"
#include "coretest.h"
#include "daemon/detect/liveness.h"

#define THR (200 * MS)
#define POLL (50 * MS)
#define SPAN (THR - POLL)

static struct flow_obs sock_obs(void)
{
	struct flow_obs o = coretest_engine_obs(40000, 0, 0, 0, 0);

	o.src = FLOW_SRC_SOCK;
	return o;
}

static void sd_pace_read__owes_nothing__due_a_threshold_less_a_poll_later(void **state)
{
	struct sd_pace p = { 0 };
	struct flow_obs o = sock_obs();

	(void)state;
	o.tx_msgs = o.rx_msgs = 10;     /* every request answered */
	o.tx_bytes = o.rx_bytes = 1000;
	sd_pace_read(&p, &o, 1 * SEC, THR, POLL);
	assert_int_equal(p.due_ns, 1 * SEC + SPAN);
	assert_int_equal(p.wait_from, 0);
	assert_false(sd_pace_due(&p, 1 * SEC + POLL, POLL));
	assert_false(sd_pace_due(&p, 1 * SEC + 2 * POLL, POLL));
	assert_true(sd_pace_due(&p, 1 * SEC + 3 * POLL, POLL));
}

static void sd_pace_read__no_threshold__due_every_poll(void **state)
{
	struct sd_pace p = { 0 };
	struct flow_obs o = sock_obs();

	(void)state;
	sd_pace_read(&p, &o, 1 * SEC, 0, POLL);
	assert_true(sd_pace_due(&p, 1 * SEC + POLL, POLL));
	sd_pace_read(&p, &o, 1 * SEC, POLL, POLL);     /* threshold of one poll */
	assert_true(sd_pace_due(&p, 1 * SEC + POLL, POLL));
}

/* The cap brings a far due in (a threshold of seconds), never pushes a
 * near one out, and "the next poll" (0) stays the next poll. */
static void sd_pace_cap__far_due_brought_in_near_due_kept(void **state)
{
	struct sd_pace p = { 0 };
	struct flow_obs o = sock_obs();

	(void)state;
	o.tx_msgs = o.rx_msgs = 10;
	sd_pace_read(&p, &o, 1 * SEC, 10 * SEC, POLL);
	assert_int_equal(p.due_ns, 11 * SEC - POLL);
	sd_pace_cap(&p, 1 * SEC, 1 * SEC);
	assert_int_equal(p.due_ns, 2 * SEC);
	sd_pace_cap(&p, 1 * SEC, 0);                    /* no bound */
	assert_int_equal(p.due_ns, 2 * SEC);
	sd_pace_read(&p, &o, 1 * SEC, THR, POLL);
	sd_pace_cap(&p, 1 * SEC, 1 * SEC);
	assert_int_equal(p.due_ns, 1 * SEC + SPAN);
	sd_pace_read(&p, &o, 1 * SEC, 0, POLL);
	assert_int_equal(p.due_ns, 0);
	sd_pace_cap(&p, 1 * SEC, 1 * SEC);
	assert_int_equal(p.due_ns, 0);
}

/* Waiting: due a threshold less a poll from the wait's start by the
 * kernel's clocks, not from the read; the earliest start is kept while
 * nothing moves, and progress starts a new wait. */
static void sd_pace_read__waiting__due_from_the_kernels_wait_start(void **state)
{
	struct sd_pace p = { 0 };
	struct flow_obs o = sock_obs();

	(void)state;
	o.tx_msgs = 11, o.rx_msgs = 10;         /* a request unanswered */
	o.tx_bytes = o.rx_bytes = 1000;
	o.last_tx_ns = 1 * SEC - 120 * MS;      /* sent 120 ms before the read */
	sd_pace_read(&p, &o, 1 * SEC, THR, POLL);
	assert_int_equal(p.wait_from, 1 * SEC - 120 * MS);
	assert_int_equal(p.due_ns, 1 * SEC - 120 * MS + SPAN);
	assert_true(sd_pace_due(&p, 1 * SEC + POLL, POLL));
	/* a retransmission moved last_tx_ns: without progress the wait still
	 * began at the first sending */
	o.last_tx_ns = 1 * SEC + 40 * MS;
	sd_pace_read(&p, &o, 1 * SEC + POLL, THR, POLL);
	assert_int_equal(p.wait_from, 1 * SEC - 120 * MS);
	/* the reply came and a new request left: a new wait */
	o.rx_msgs = 11, o.rx_bytes = 1100, o.tx_msgs = 12, o.tx_bytes = 1100;
	o.last_rx_ns = 1 * SEC + 60 * MS;
	o.last_tx_ns = 1 * SEC + 70 * MS;
	sd_pace_read(&p, &o, 1 * SEC + 2 * POLL, THR, POLL);
	assert_int_equal(p.wait_from, 1 * SEC + 70 * MS);
	assert_int_equal(p.due_ns, 1 * SEC + 70 * MS + SPAN);
	/* a clock in the future is taken as now */
	memset(&p, 0, sizeof(p));
	o.last_tx_ns = 5 * SEC;
	sd_pace_read(&p, &o, 2 * SEC, THR, POLL);
	assert_int_equal(p.wait_from, 2 * SEC);
}

/* ---- the model: a request/response TCP session as tcp_info shows it ---- */

struct model {
	int outstanding;        /* a request awaits its reply */
	int stalled;            /* the stalled request has been sent */
	uint64_t next;          /* its reply's arrival, else the next send */
	struct flow_obs o;
};

/* Advance the session to t: a request think after each reply, its reply
 * serve later; the first request sent from stall_at on is answered
 * stall_len later. Each request is acknowledged at once (the peer's
 * stack), each reply read at once. */
static void model_run(struct model *m, uint64_t t, uint64_t think, uint64_t serve,
		      uint64_t stall_at, uint64_t stall_len)
{
	while (m->next <= t) {
		uint64_t at = m->next;

		if (m->outstanding) {
			m->o.rx_msgs++;
			m->o.rx_bytes += 100;
			m->o.last_rx_ns = at;
			m->outstanding = 0;
			m->next = at + think;
			continue;
		}
		m->o.tx_msgs++;
		m->o.tx_bytes += 100;
		m->o.last_tx_ns = at;
		m->o.last_ack_ns = at;
		m->outstanding = 1;
		if (!m->stalled && at >= stall_at) {
			m->stalled = 1;
			m->next = at + stall_len;
		} else {
			m->next = at + serve;
		}
	}
}

struct verdict {
	uint64_t stalled_poll, stalled_at, released_poll;
	unsigned reads;
	uint64_t max_gap;
};

/* One run of the session, the detector fed at every poll (paced 0) or
 * when sd_pace_due says so (paced 1, a dump every second reading all), or
 * sd_pace_due_within sd_pace_early (paced 2: what sock_diag does). */
static void run(int paced, uint64_t offset, uint64_t think, uint64_t serve, uint64_t stall_at,
		uint64_t stall_len, struct verdict *v)
{
	struct livetab *ft = livetab_new();
	struct model m = { 0 };
	struct sd_pace p = { 0 };
	uint64_t last_read = 0;
	struct sflow *f;

	memset(v, 0, sizeof(*v));
	m.o = sock_obs();
	m.o.tx_msgs = m.o.rx_msgs = 2;  /* request/response so far */
	m.o.tx_bytes = m.o.rx_bytes = 200;
	m.next = 1 * SEC + 1;           /* the first send */
	f = livetab_get(ft, &m.o, "a", 0, 1);
	for (uint64_t t = 1 * SEC + offset; t < 6 * SEC; t += POLL) {
		enum flow_event ev;
		int dump = paced && (t - offset) % SEC == 0;

		model_run(&m, t, think, serve, stall_at, stall_len);
		if (paced == 1 && !dump && !sd_pace_due(&p, t, POLL))
			continue;
		if (paced == 2 && !dump && !sd_pace_due_within(&p, t, sd_pace_early(THR, POLL, 0)))
			continue;
		if (last_read && t - last_read > v->max_gap)
			v->max_gap = t - last_read;
		last_read = t;
		v->reads++;
		if (paced)
			sd_pace_read(&p, &m.o, t, THR, POLL);
		ev = flow_update(f, &m.o, t, THR, POLL);
		if (ev == FLOW_EV_STALLED && !v->stalled_poll) {
			v->stalled_poll = t;
			v->stalled_at = f->stalled_at_ns;
		}
		if (ev == FLOW_EV_RELEASED && !v->released_poll)
			v->released_poll = t;
	}
	livetab_free(ft);
}

/* Requests now answered at once, now after tens of ms (so reads find one
 * outstanding), one never answered for 700 ms, at every phase against
 * the polls: the paced detector calls the stall at the same poll, dates it
 * the same, sees its end at the same poll, reads the socket within every
 * threshold and at most two polls in three (one in three while it owes
 * nothing). */
static void sd_pace__request_response_with_one_stall__same_verdict_as_every_poll(void **state)
{
	static const uint64_t serve[] = { 1 * MS / 10, 10 * MS, 35 * MS, 90 * MS };
	static const uint64_t think[] = { 2 * MS, 20 * MS, 45 * MS, 130 * MS };

	(void)state;
	for (unsigned s = 0; s < sizeof(serve) / sizeof(serve[0]); s++)
		for (unsigned k = 0; k < sizeof(think) / sizeof(think[0]); k++)
			for (uint64_t ph = 0; ph < POLL; ph += 7 * MS) {
				struct verdict a, b;
				uint64_t at = 3 * SEC + ph;

				struct verdict c;

				run(0, 3 * MS, think[k], serve[s], at, 700 * MS, &a);
				run(1, 3 * MS, think[k], serve[s], at, 700 * MS, &b);
				/* read early (sd_pace_early): the same */
				run(2, 3 * MS, think[k], serve[s], at, 700 * MS, &c);
				if (a.stalled_poll != c.stalled_poll || a.stalled_at != c.stalled_at ||
				    a.released_poll != c.released_poll || c.max_gap > THR)
					fail_msg("serve %llu think %llu phase %llu: read early, stalled "
						 "at %llu (from %llu) released %llu",
						 (unsigned long long)serve[s] / MS,
						 (unsigned long long)think[k] / MS,
						 (unsigned long long)ph / MS,
						 (unsigned long long)c.stalled_poll / MS,
						 (unsigned long long)c.stalled_at / MS,
						 (unsigned long long)c.released_poll / MS);
				if (a.stalled_poll != b.stalled_poll || a.stalled_at != b.stalled_at ||
				    a.released_poll != b.released_poll)
					fail_msg("serve %llu think %llu phase %llu: every poll stalled at "
						 "%llu (from %llu) released %llu; paced %llu (from %llu) "
						 "released %llu", (unsigned long long)serve[s] / MS,
						 (unsigned long long)think[k] / MS,
						 (unsigned long long)ph / MS,
						 (unsigned long long)a.stalled_poll / MS,
						 (unsigned long long)a.stalled_at / MS,
						 (unsigned long long)a.released_poll / MS,
						 (unsigned long long)b.stalled_poll / MS,
						 (unsigned long long)b.stalled_at / MS,
						 (unsigned long long)b.released_poll / MS);
				assert_true(a.stalled_poll != 0);
				assert_true(b.max_gap <= THR);
				/* an idle socket once in three polls (150 ms of 50),
				 * plus the dumps and the stall's polls */
				if (b.reads * 3 > a.reads * 2)
					fail_msg("serve %llu think %llu: paced read %u times of %u",
						 (unsigned long long)serve[s] / MS,
						 (unsigned long long)think[k] / MS, b.reads, a.reads);
			}
}

/* Polls planned for the first socket due (daemon/detect/stall_plan.c: never sooner
 * than a poll after the last) of three idle sockets read at different
 * polls; how many polls in 3 s when a poll reads those due within early. */
static unsigned planned_polls(uint64_t early)
{
	struct sd_pace p[3] = { { 0 } };
	struct flow_obs o = sock_obs();
	unsigned polls = 0;
	uint64_t t;

	o.tx_msgs = o.rx_msgs = 10;     /* every request answered */
	for (unsigned i = 0; i < 3; i++)
		sd_pace_read(&p[i], &o, 1 * SEC + i * 40 * MS, THR, POLL);
	t = 1 * SEC + 80 * MS;
	while (t < 4 * SEC) {
		uint64_t next = UINT64_MAX;

		polls++;
		for (unsigned i = 0; i < 3; i++)
			if (sd_pace_due_within(&p[i], t, early))
				sd_pace_read(&p[i], &o, t, THR, POLL);
		for (unsigned i = 0; i < 3; i++)
			if (p[i].due_ns < next)
				next = p[i].due_ns;
		t = next > t + POLL ? next : t + POLL;
	}
	return polls;
}

/* Sockets read at different polls fall into step when each poll reads
 * those due within sd_pace_early: the polls come once a threshold less a
 * poll (3 s / 150 ms = 20), not at every interval or two as they do when
 * a poll reads only those due within half a poll (sockets 40 ms apart stay
 * apart: about 50). */
static void sd_pace_early__sockets_out_of_step__fall_into_step(void **state)
{
	unsigned in_step = planned_polls(sd_pace_early(THR, POLL, 0));
	unsigned apart = planned_polls(POLL / 2);

	(void)state;
	assert_int_equal(sd_pace_early(THR, POLL, 0), (THR - POLL) / 2);
	assert_int_equal(sd_pace_early(60 * MS, POLL, 0), POLL / 2);
	/* a long threshold: half the refresh that bounds its dues */
	assert_int_equal(sd_pace_early(10 * SEC, POLL, 1 * SEC), 500 * MS);
	assert_int_equal(sd_pace_early(THR, POLL, 1 * SEC), (THR - POLL) / 2);
	assert_true(in_step <= 21);
	assert_true(apart >= 40);
}

/* A server's reply in flight at a read at 5 s (bytes as inet_diag gives
 * them), begun 10 ms before, and the kernel's slot holding that wait. */
static void held_wait(struct flow_obs *o, struct sockwatch_slot *h, uint64_t *from)
{
	*o = sock_obs();
	o->tx_bytes = 6400;
	o->rx_bytes = 3200;
	o->inflight = 64;
	o->tx_msgs = 101;
	o->rx_msgs = 100;
	*from = 5 * SEC - 10 * MS;
	o->last_tx_ns = *from;
	memset(h, 0, sizeof(*h));
	h->waiting = h->queued = h->owed = 1;
	h->acked = o->tx_bytes + 1;     /* the SYN */
	h->rcvd = o->rx_bytes;
	h->written = o->tx_bytes + 64 + 1;
	h->wait_from = *from - 2 * MS;  /* jiffies: early */
	h->deadline = h->wait_from + SPAN;
}

/* The kernel holds a young wait only when everything says so: each
 * condition alone refuses it. Fails a watch that leaves a young wait to
 * the kernel on the reads' bytes alone (a wait posted once, whose reply
 * then re-dated it, is never posted again: sw_look). */
static void sd_watch_kernel_holds__every_condition(void **state)
{
	struct sockwatch_slot h0, h;
	struct flow_obs o0, o;
	uint64_t from, now = 5 * SEC;

	(void)state;
	held_wait(&o0, &h0, &from);
	assert_true(sd_watch_kernel_holds(&h0, &o0, from, now, SPAN, POLL));
#define REFUSED(change)                                                          \
	do {                                                                     \
		h = h0;                                                          \
		o = o0;                                                          \
		change;                                                          \
		assert_false(sd_watch_kernel_holds(&h, &o, from, now, SPAN, POLL)); \
	} while (0)
	REFUSED(h.posted = 1);                  /* posted: never again */
	REFUSED(h.queued = 0);                  /* out of the wheel */
	REFUSED(h.waiting = 0);                 /* judged idle since */
	REFUSED(h.deadline = 0);
	REFUSED(h.acked++);                     /* judged on other bytes */
	REFUSED(h.rcvd++);
	REFUSED(h.written++);
	REFUSED(o.unsent = 10);                 /* written since the hooks */
	REFUSED(h.acked = 0);
	/* the kernel would post it later than the pace would read it */
	REFUSED(h.deadline = from + SPAN + POLL / 10 + 1);
	/* old by either clock: dated at its post, the detector would take
	 * the progress it saw now less a poll as its start */
	REFUSED(h.wait_from = now - POLL / 2 - 1; h.deadline = from + SPAN);
	REFUSED(h.wait_from = now + 1);
	{
		uint64_t old = now - POLL / 2 - 1;

		h = h0;
		assert_false(sd_watch_kernel_holds(&h, &o0, old, now, SPAN, POLL));
		assert_false(sd_watch_kernel_holds(&h, &o0, 0, now, SPAN, POLL));
		assert_false(sd_watch_kernel_holds(&h, &o0, now + 1, now, SPAN, POLL));
		/* a deadline within a poll: read on the pace */
		h.deadline = now + POLL;
		assert_false(sd_watch_kernel_holds(&h, &o0, from, now, SPAN, POLL));
		h.deadline = now + POLL + 1;
		assert_true(sd_watch_kernel_holds(&h, &o0, from, now, SPAN, POLL));
		/* a threshold so long that its post, read a span after the
		 * start, would be older than the detector believes */
		h = h0;
		h.deadline = h.wait_from + 9 * SEC;
		assert_true(sd_watch_kernel_holds(&h, &o0, from, now, 9 * SEC, POLL));
		h.deadline = h.wait_from + 10 * SEC - 2 * POLL;
		assert_false(sd_watch_kernel_holds(&h, &o0, from, now, 10 * SEC - 2 * POLL, POLL));
	}
#undef REFUSED
}

/* Against the detector: a held wait (live: progress) is not followed, so
 * no want or deadline is planned for it; posted at its deadline and read,
 * with the same bytes and no word from the watch, it is dated from its
 * start, and the stall is called a threshold after it, not a span late.
 * The ACK of the request came after the reply was written (progress dated
 * then, by the kernel's clock). */
static void sd_watch_kernel_holds__detector_dates_the_post_from_the_start(void **state)
{
	struct livetab *ft = livetab_new();
	struct sockwatch_slot h;
	struct flow_obs o;
	uint64_t from, now = 5 * SEC;
	struct sflow *f;

	(void)state;
	held_wait(&o, &h, &from);
	{
		struct flow_obs first = o;

		first.tx_bytes -= 64;
		first.rx_bytes -= 32;
		first.inflight = 0;
		first.tx_msgs = first.rx_msgs = 100;
		f = livetab_get(ft, &first, "a", 4 * SEC, 1);
		flow_update(f, &first, 4 * SEC, THR, POLL);
	}
	assert_true(sd_watch_kernel_holds(&h, &o, from, now, SPAN, POLL));
	o.live = FLOW_LIVE_PROGRESS + 1;
	o.last_ack_ns = from + 5 * MS;
	o.last_rx_ns = from - MS;
	flow_update(f, &o, now, THR, POLL);
	assert_int_equal(f->state, FLOW_IDLE);
	assert_int_equal(f->progress_ns, from + 5 * MS);
	/* the post, and its read */
	o.live = 0;
	o.unacked_since_ns = h.wait_from;
	assert_int_equal(flow_update(f, &o, h.deadline + MS, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_WAITING);
	assert_int_equal(f->wait_since_ns, h.wait_from);
	assert_int_equal(flow_update(f, &o, h.wait_from + THR + 1, THR, POLL), FLOW_EV_STALLED);
	livetab_free(ft);
}

/* A socket that owes nothing is read again a backstop later, or twice
 * that when a read finds it established with the bytes the reads that put
 * it on the backstop found a backstop or more before (quiet since: none
 * of the paths the hooks miss was passed, each moves the bytes). Fails a
 * watch that doubles the backstop for every idle socket (each refusal
 * below), one that never does (the quiet read), and one that takes two
 * reads a second apart with the same bytes for a quiet backstop. */
static void sd_watch_backstop_ns__quiet_for_a_backstop__twice_as_long(void **state)
{
	struct sd_sock k0, k;
	struct flow_obs o0 = sock_obs(), o;
	uint64_t at = 100 * SEC, now = at + SD_WATCH_BACKSTOP_NS;

	(void)state;
	memset(&k0, 0, sizeof(k0));
	o0.state = SD_TCP_ESTABLISHED;
	o0.tx_bytes = 4000;
	o0.rx_bytes = 9000;
	/* the first read: not known to be quiet */
	assert_int_equal(sd_watch_backstop_ns(&k0, &o0, now), SD_WATCH_BACKSTOP_NS);
	k0.bs_read = 1;
	k0.bs_tx = 4000;
	k0.bs_rx = 9000;
	k0.bs_written = 4000;
	k0.bs_at = at;
	assert_int_equal(sd_watch_backstop_ns(&k0, &o0, now), SD_WATCH_QUIET_NS);
	assert_true(SD_WATCH_QUIET_NS > SD_WATCH_BACKSTOP_NS);
	/* read a little early (sd_pace_early): still a backstop */
	assert_int_equal(sd_watch_backstop_ns(&k0, &o0, now - SD_WATCH_BACKSTOP_NS / 10),
			 SD_WATCH_QUIET_NS);
#define NOT_QUIET(change, t)                                                     \
	do {                                                                     \
		k = k0;                                                          \
		o = o0;                                                          \
		change;                                                          \
		assert_int_equal(sd_watch_backstop_ns(&k, &o, t), SD_WATCH_BACKSTOP_NS); \
	} while (0)
	NOT_QUIET(k.bs_read = 0, now);          /* on its pace since */
	NOT_QUIET((void)0, at + 1 * SEC);       /* the same bytes a second on */
	NOT_QUIET((void)0, now - SD_WATCH_BACKSTOP_NS / 10 - 1);
	NOT_QUIET((void)0, at - 10 * SEC);      /* a clock gone back */
	NOT_QUIET(o.tx_bytes++, now);           /* sent, acknowledged */
	NOT_QUIET(o.rx_bytes++, now);           /* received */
	NOT_QUIET(k.bs_written++, now);         /* other bytes written then */
	NOT_QUIET(o.state = SD_TCP_FIN_WAIT2, now);     /* closing: data past the hooks */
	NOT_QUIET(o.state = SD_TCP_CLOSE_WAIT, now);
	NOT_QUIET(o.inflight = 10; k.bs_written += 10, now);   /* owes: a held wait */
	NOT_QUIET(o.unread = 10, now);
#undef NOT_QUIET
}

/* An idle socket the kernel-event watch follows, read by sd_watch_paced()
 * at the times a clock passed in gives: read a backstop after its first
 * read, then, its bytes standing still, twice as long; quiet since its
 * bytes last moved, not since the read before (a read early, for a loss
 * or a want, keeps it quiet); a read that finds it owing puts it on its
 * pace and forgets the quiet, so the read after is a backstop again.
 * Fails a watch that dates the quiet from every read, one that keeps the
 * quiet across a wait, and one that never doubles. */
static struct flow_obs quiet_obs(void)
{
	struct flow_obs o = sock_obs();

	o.state = SD_TCP_ESTABLISHED;
	o.tx_msgs = o.rx_msgs = 10;
	o.tx_bytes = 4000;
	o.rx_bytes = 9000;
	o.last_tx_ns = o.last_rx_ns = 1 * SEC;
	return o;
}

static void sd_watch_paced__quiet_socket__a_backstop_then_twice_as_long(void **state)
{
	struct sockdiag sd;
	struct sd_sock k;
	struct flow_obs o;
	int watch;
	uint64_t t = 100 * SEC, bs = SD_WATCH_BACKSTOP_NS, q = SD_WATCH_QUIET_NS;

	(void)state;
	memset(&sd, 0, sizeof(sd));
	memset(&k, 0, sizeof(k));
	sd.sw = (struct sockwatch *)&watch;     /* not read: no wait is young */
	sd.stall_ns = THR;
	sd.poll_ns = POLL;
	k.sw_slot = 7;
#define READ(at, change)                                                         \
	do {                                                                     \
		o = quiet_obs();                                                 \
		change;                                                          \
		sd_watch_paced(&sd, &k, &o, at);                                 \
	} while (0)
	READ(t, (void)0);                       /* first read: not known quiet */
	assert_int_equal(k.pace.due_ns, t + bs);
	assert_int_equal(o.keep_ns, bs + bs / 2);
	assert_int_equal(k.bs, 1);
	assert_int_equal(k.bs_at, t);
	assert_int_equal(sd.st.quiet_reads, 0);
	READ(t + bs, (void)0);                  /* the same bytes a backstop on */
	assert_int_equal(k.pace.due_ns, t + bs + q);
	assert_int_equal(o.keep_ns, q + q / 2);
	assert_int_equal(sd.st.quiet_reads, 1);
	assert_int_equal(k.bs_at, t);           /* quiet since then, still */
	READ(t + bs + 5 * SEC, (void)0);        /* read early: a loss, a want */
	assert_int_equal(k.pace.due_ns, t + bs + 5 * SEC + q);
	assert_int_equal(sd.st.quiet_reads, 2);
	READ(t + 100 * SEC, o.rx_bytes += 100); /* moved: a backstop again */
	assert_int_equal(k.pace.due_ns, t + 100 * SEC + bs);
	assert_int_equal(k.bs_at, t + 100 * SEC);
	assert_int_equal(sd.st.quiet_reads, 2);
	READ(t + 100 * SEC + bs, o.rx_bytes += 100);
	assert_int_equal(k.pace.due_ns, t + 100 * SEC + bs + q);
	assert_int_equal(sd.st.quiet_reads, 3);
	/* a request unanswered, older than half a poll, with the same bytes:
	 * on its pace, the quiet forgotten */
	READ(t + 200 * SEC, (o.rx_bytes += 100, o.tx_msgs = 11, o.last_tx_ns = t + 199 * SEC));
	assert_int_equal(k.bs, 0);
	assert_int_equal(k.bs_read, 0);
	assert_true(k.pace.wait_from != 0);
	assert_true(k.pace.due_ns < t + 200 * SEC + bs);
	/* answered, the bytes as before it: a backstop, not quiet */
	READ(t + 200 * SEC + bs, (o.rx_bytes += 100, o.tx_msgs = o.rx_msgs = 11));
	assert_int_equal(k.bs, 1);
	assert_int_equal(k.pace.due_ns, t + 200 * SEC + 2 * bs);
	assert_int_equal(sd.st.quiet_reads, 3);
#undef READ
}

/* What a dump's socket takes from the one of its cookie in the discovery
 * before (sd_pace_carry): every field it carries, each set apart, so a
 * field dropped from the carry fails; its watch slot moves (the old
 * entry gives it up); it is not on the new active list; one the discovery
 * before did not know takes nothing; one that had no slot is tried again. */
static void sd_pace_carry__found_again__keeps_its_pace_slot_hold_and_quiet(void **state)
{
	struct sockdiag sd;
	struct sd_sock known[2], old, k;

	(void)state;
	memset(&sd, 0, sizeof(sd));
	memset(known, 0, sizeof(known));
	sd.stall_ns = THR;
	known[0].id.idiag_cookie[0] = 9;
	known[1].id.idiag_cookie[0] = 5;
	known[1].id.idiag_cookie[1] = 1;
	known[1].pace.due_ns = 11;
	known[1].pace.wait_from = 12;
	known[1].pace.tx_bytes = 13;
	known[1].pace.rx_bytes = 14;
	known[1].pace.unread = 15;
	known[1].pace.seen = 1;
	known[1].bs = 1;
	known[1].in_act = 1;
	known[1].sw_slot = 3;
	known[1].sw_tried = 1;
	known[1].sw_refused = 1;
	known[1].sw_busy = 1;
	known[1].busy_tx = 21;
	known[1].busy_rx = 22;
	known[1].busy_until = 23;
	known[1].busy_hold = 24;
	known[1].busy_back_at = 25;
	known[1].ev_from = 31;
	known[1].ev_tx = 32;
	known[1].ev_rx = 33;
	known[1].ev_written = 34;
	known[1].bs_tx = 41;
	known[1].bs_rx = 42;
	known[1].bs_written = 43;
	known[1].bs_at = 44;
	known[1].bs_read = 1;
	old = known[1];
	sd.known = known;
	sd.nknown = 2;
	sd_byck_build(&sd);
	assert_int_equal(sd.nbyck, 2);

	memset(&k, 0, sizeof(k));
	k.id = old.id;
	sd_pace_carry(&sd, &k);
	assert_int_equal(k.pace.due_ns, 11);
	assert_int_equal(k.pace.wait_from, 12);
	assert_int_equal(k.pace.tx_bytes, 13);
	assert_int_equal(k.pace.rx_bytes, 14);
	assert_int_equal(k.pace.unread, 15);
	assert_int_equal(k.pace.seen, 1);
	assert_int_equal(k.bs, 1);
	assert_int_equal(k.in_act, 0);
	assert_int_equal(k.sw_slot, 3);
	assert_int_equal(known[1].sw_slot, 0);  /* given up by the old entry */
	assert_int_equal(k.sw_tried, 1);
	assert_int_equal(k.sw_refused, 1);
	assert_int_equal(k.sw_busy, 1);
	assert_int_equal(k.busy_tx, 21);
	assert_int_equal(k.busy_rx, 22);
	assert_int_equal(k.busy_until, 23);
	assert_int_equal(k.busy_hold, 24);
	assert_int_equal(k.busy_back_at, 25);
	assert_int_equal(k.ev_from, 31);
	assert_int_equal(k.ev_tx, 32);
	assert_int_equal(k.ev_rx, 33);
	assert_int_equal(k.ev_written, 34);
	assert_int_equal(k.bs_tx, 41);
	assert_int_equal(k.bs_rx, 42);
	assert_int_equal(k.bs_written, 43);
	assert_int_equal(k.bs_at, 44);
	assert_int_equal(k.bs_read, 1);

	/* the same cookie's low half, another high half: not the same socket */
	memset(&k, 0, sizeof(k));
	k.id.idiag_cookie[0] = 5;
	k.pace.due_ns = 99;
	k.in_act = k.bs = 1;
	sd_pace_carry(&sd, &k);
	assert_int_equal(k.pace.due_ns, 0);
	assert_int_equal(k.in_act, 0);
	assert_int_equal(k.bs, 0);
	assert_int_equal(k.bs_at, 0);
	assert_int_equal(k.sw_slot, 0);

	/* found again after its slot went: its registration is tried again */
	known[1].sw_slot = 0;
	memset(&k, 0, sizeof(k));
	k.id = old.id;
	sd_pace_carry(&sd, &k);
	assert_int_equal(k.sw_slot, 0);
	assert_int_equal(k.sw_tried, 0);
	assert_int_equal(k.sw_refused, 1);
	free(sd.byck);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sd_pace_read__owes_nothing__due_a_threshold_less_a_poll_later),
		cmocka_unit_test(sd_pace_read__no_threshold__due_every_poll),
		cmocka_unit_test(sd_pace_read__waiting__due_from_the_kernels_wait_start),
		cmocka_unit_test(sd_pace_cap__far_due_brought_in_near_due_kept),
		cmocka_unit_test(sd_pace__request_response_with_one_stall__same_verdict_as_every_poll),
		cmocka_unit_test(sd_pace_early__sockets_out_of_step__fall_into_step),
		cmocka_unit_test(sd_watch_kernel_holds__every_condition),
		cmocka_unit_test(sd_watch_kernel_holds__detector_dates_the_post_from_the_start),
		cmocka_unit_test(sd_watch_backstop_ns__quiet_for_a_backstop__twice_as_long),
		cmocka_unit_test(sd_watch_paced__quiet_socket__a_backstop_then_twice_as_long),
		cmocka_unit_test(sd_pace_carry__found_again__keeps_its_pace_slot_hold_and_quiet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
