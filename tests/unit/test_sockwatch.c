/* Unit tests: sockwatch, the kernel-event socket watch. The kernel judges a
 * watched socket's wait on its own paths and posts only when the wait
 * reaches its deadline: nothing for a socket whose flows are healthy,
 * one event for one that waits, at the deadline the kernel's clocks give;
 * and every way an event can be lost shows in sockwatch_losses(). Runs as
 * root in a private network namespace (group setup). */
#include "sockdiag_test.h"

#include <fcntl.h>
#include <poll.h>

#include "collectors/flows/sockwatch_api.h"

#define SPAN_NS 60000000ull     /* 60 ms */

#define NMANY 100

struct got {
	unsigned n;
	unsigned busy;          /* hand-backs (not counted in n) */
	uint32_t busy_slot;
	unsigned left;          /* sockets that left ESTABLISHED (not in n) */
	uint32_t left_slot;
	uint32_t slot;
	uint64_t wait_from, deadline, at, rcvd;
	struct {
		uint32_t slot;
		uint64_t at, deadline;
	} each[NMANY];
};

static void on_event(void *arg, const struct sockwatch_event *e)
{
	struct got *g = arg;

	if (e->busy) {
		g->busy++;
		g->busy_slot = e->slot;
		return;
	}
	if (e->left) {
		g->left++;
		g->left_slot = e->slot;
		return;
	}
	if (g->n < NMANY) {
		g->each[g->n].slot = e->slot;
		g->each[g->n].at = loop_mono_ns();
		g->each[g->n].deadline = e->deadline;
	}
	g->n++;
	g->slot = e->slot;
	g->wait_from = e->wait_from;
	g->deadline = e->deadline;
	g->rcvd = e->rcvd;
	g->at = loop_mono_ns();
}

/* Wait up to ms for the ring, handing what came to its watch. */
static void pump(struct sockwatch *w, int ms)
{
	uint64_t end = loop_mono_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		uint64_t now = loop_mono_ns();
		struct pollfd p = { .fd = sockwatch_fd(w), .events = POLLIN };

		if (now >= end)
			break;
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) > 0)
			sockwatch_consume();
	}
	sockwatch_consume();
}

/* The hooks this test runs with (its setup's): 1 the sockops callbacks,
 * 0 the tracepoints, -1 either. */
static int want_sockops = -1;

static struct sockwatch *watch(struct got *g)
{
	char err[256] = "";
	struct sockwatch *w = sockwatch_open(-1, on_event, g, err, sizeof(err));
	struct sockwatch_stats st;

	if (!w)
		fail_msg("sockwatch_open: %s", err);
	sockwatch_stats(&st);
	if (want_sockops >= 0 && st.sockops != want_sockops)
		fail_msg("hooks: %s, not the ones asked for (%s)",
			 st.sockops ? "sockops" : "tracepoints", st.why);
	return w;
}

/* Register the server end of k (its client is k.c), its waits lasting
 * span. */
static uint32_t add_server_span(struct sockwatch *w, const struct conn *k, uint64_t span)
{
	struct sr_key key;
	uint32_t slot = 0;
	char err[256] = "";

	key_for(&key, k->s, k->lport, k->cport);
	if (sockwatch_add(w, &key, 1, span, &slot, err, sizeof(err)) < 0 ||
	    sockwatch_enrol(w, NULL, NULL, err, sizeof(err)) < 0)
		fail_msg("sockwatch_add: %s", err);
	return slot;
}

/* Register and enrol the client end of k, its waits lasting span. */
static uint32_t add_client(struct sockwatch *w, const struct conn *k, uint64_t span)
{
	struct sr_key key;
	uint32_t slot = 0;
	char err[256] = "";

	key_for(&key, k->c, k->cport, k->lport);
	if (sockwatch_add(w, &key, 1, span, &slot, err, sizeof(err)) < 0 || !slot ||
	    sockwatch_enrol(w, NULL, NULL, err, sizeof(err)) < 0)
		fail_msg("sockwatch_add: %s", err);
	return slot;
}

static uint32_t add_server(struct sockwatch *w, const struct conn *k)
{
	return add_server_span(w, k, SPAN_NS);
}

/* When slot's post came (0: none). */
static uint64_t posted_at(const struct got *g, uint32_t slot)
{
	for (unsigned i = 0; i < g->n && i < NMANY; i++)
		if (g->each[i].slot == slot)
			return g->each[i].at;
	return 0;
}

/* Request and response over 3 spans: the server waits after each request
 * and answers at once. Nothing is posted. */
static void healthy_ping_pong__no_event(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	conn_echo(&k, 3);
	assert_true(add_server(w, &k) > 0);
	for (int i = 0; i < 18; i++) {
		conn_echo(&k, 20);
		nstest_msleep(10);
	}
	pump(w, 3 * SPAN_NS / 1000000);
	sockwatch_stats(&st);
	assert_true(st.hooked > 0);     /* the hooks saw the socket */
	assert_int_equal(g.n, 0);
	assert_int_equal(sockwatch_losses(), 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* The client's request read and never answered (request/response: one
 * data segment more in than out): one event, at the read's arrival plus
 * the span. A naive watch that arms only on sends never posts it. */
static void request_unanswered(struct sockwatch *w, struct got *g)
{
	struct conn k;
	uint64_t t0;
	char b[8];

	conn_open(&k, AF_INET);
	conn_echo(&k, 3);
	assert_true(add_server(w, &k) > 0);
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, "ping", 4), 4);
	assert_int_equal(read(k.s, b, sizeof(b)), 4);
	pump(w, 4 * SPAN_NS / 1000000);
	assert_int_equal(g->n, 1);      /* once: not again while it waits */
	/* dated by the kernel's clocks, at most a jiffy (10 ms) early */
	assert_true(g->wait_from <= t0 + 2000000ull);
	assert_true(g->wait_from + 12000000ull >= t0);
	assert_true(g->at + 1000000ull >= g->deadline);
	assert_true(g->at < g->deadline + 20000000ull);
	/* answered: a new wait only with the next request */
	assert_int_equal(write(k.s, "pong", 4), 4);
	assert_int_equal(read(k.c, b, sizeof(b)), 4);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(g->n, 1);
	conn_close(&k);
}

static void request_unanswered__one_event_at_deadline(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);

	(void)state;
	request_unanswered(w, &g);
	sockwatch_close(w);
}

/* Bytes received and left unread since before the socket was watched:
 * registration judges the wait from the kernel's clocks, and a deadline
 * already past posts at once. */
static void waiting_before_registration__posts_at_once(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	assert_int_equal(write(k.c, "abc", 3), 3);
	nstest_msleep(2 * SPAN_NS / 1000000);
	assert_true(add_server(w, &k) > 0);
	pump(w, 20);
	assert_int_equal(g.n, 1);
	conn_close(&k);
	sockwatch_close(w);
}

/* Unread bytes read before the deadline: the receive hook ends the wait,
 * nothing is posted. */
static void unread_drained_in_time__no_event(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct conn k;
	char b[8];

	(void)state;
	conn_open(&k, AF_INET);
	assert_true(add_server(w, &k) > 0);
	assert_int_equal(write(k.c, "abc", 3), 3);
	nstest_msleep(SPAN_NS / 2000000);
	assert_int_equal(read(k.s, b, sizeof(b)), 3);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(g.n, 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* Bytes never acknowledged (the peer's side drops them), retransmitted,
 * then more written by the app: the send's hook must keep the wait's
 * start, not take it from lsndtime, which each retransmission moved. A
 * watch that re-dates the wait at every hook posts a retransmission
 * later. */
static void retransmitted_then_written__wait_start_kept(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	uint64_t t0, span = 1500000000ull;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	add_client(w, &k, span);
	assert_int_equal(nstest_sh("nft add table inet swt && nft add chain inet swt in "
				   "'{ type filter hook input priority 0; }' && "
				   "nft add rule inet swt in tcp dport %u drop", k.lport), 0);
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, "a", 1), 1);
	nstest_msleep(700);     /* a probe and a timeout or two (RTO >= 200 ms) */
	assert_int_equal(write(k.c, "b", 1), 1);
	pump(w, 1100);
	nstest_sh("nft delete table inet swt");
	assert_int_equal(g.n, 1);
	assert_true(g.wait_from <= t0 + 2000000ull);
	assert_true(g.at < t0 + span + 100000000ull);
	conn_close(&k);
	sockwatch_close(w);
}

/* Three waits of different spans begun in the order longest first: the
 * wheel's one timer, set for the first, is brought forward for each
 * sooner deadline and set again for the next after each tick; every
 * socket posts at its own deadline. A timer that is not brought forward
 * posts the short waits at the long one's deadline; one not set again
 * after a tick never posts the later ones. */
static void spans_out_of_order__each_at_its_deadline(void **state)
{
	static const uint64_t span[3] = { 400000000ull, 60000000ull, 180000000ull };
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	uint64_t t0[3], at;
	struct conn k[3];
	uint32_t slot[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		conn_open(&k[i], AF_INET);
		slot[i] = add_server_span(w, &k[i], span[i]);
		assert_true(slot[i] > 0);
	}
	for (int i = 0; i < 3; i++) {
		t0[i] = loop_mono_ns();
		assert_int_equal(write(k[i].c, "abc", 3), 3);
	}
	pump(w, 550);
	assert_int_equal(g.n, 3);
	for (int i = 0; i < 3; i++) {
		at = posted_at(&g, slot[i]);
		assert_true(at > 0);
		/* a jiffy (10 ms at HZ=100) early at most, a tick and some
		 * scheduling late */
		assert_true(at + 12000000ull >= t0[i] + span[i]);
		assert_true(at < t0[i] + span[i] + 40000000ull);
	}
	assert_int_equal(sockwatch_losses(), 0);
	for (int i = 0; i < 3; i++)
		conn_close(&k[i]);
	sockwatch_close(w);
}

/* A wait longer than the wheel (4.096 s of 1 ms ticks): looked at at the
 * horizon and put back, posted at its deadline, not at the horizon. */
static void beyond_the_wheel__posted_at_deadline(void **state)
{
	const uint64_t span = 4600000000ull;
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	struct conn k;
	uint64_t t0;

	(void)state;
	conn_open(&k, AF_INET);
	assert_true(add_server_span(w, &k, span) > 0);
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, "abc", 3), 3);
	pump(w, 4300);
	assert_int_equal(g.n, 0);       /* not at the horizon */
	pump(w, 500);
	assert_int_equal(g.n, 1);
	assert_true(g.at + 12000000ull >= t0 + span);
	sockwatch_stats(&st);
	assert_true(st.rearmed >= 1);
	assert_int_equal(sockwatch_losses(), 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* NMANY sockets whose waits begin together (more than a tick's bucket
 * holds): every one posts, near its deadline, none lost. */
static void many_at_one_deadline__all_posted(void **state)
{
	struct got *g = calloc(1, sizeof(*g));
	struct sockwatch *w = watch(g);
	struct conn *k = calloc(NMANY, sizeof(*k));
	uint64_t t0, last = 0;

	(void)state;
	assert_non_null(g);
	assert_non_null(k);
	for (int i = 0; i < NMANY; i++) {
		conn_open(&k[i], AF_INET);
		assert_true(add_server(w, &k[i]) > 0);
	}
	t0 = loop_mono_ns();
	for (int i = 0; i < NMANY; i++)
		assert_int_equal(write(k[i].c, "abc", 3), 3);
	pump(w, 3 * SPAN_NS / 1000000);
	assert_int_equal(g->n, NMANY);
	for (int i = 0; i < NMANY; i++)
		if (g->each[i].at > last)
			last = g->each[i].at;
	assert_true(last < loop_mono_ns());
	assert_true(last < t0 + SPAN_NS + 60000000ull);
	assert_int_equal(sockwatch_losses(), 0);
	for (int i = 0; i < NMANY; i++)
		conn_close(&k[i]);
	free(k);
	free(g);
	sockwatch_close(w);
}

/* A full ring: the post is counted lost and tried again, and comes. */
static void ring_full__counted_and_retried(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	uint64_t lost0 = sockwatch_losses();
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	assert_true(add_server(w, &k) > 0);
	sockwatch_test_lose(3);
	assert_int_equal(write(k.c, "abc", 3), 3);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(sockwatch_losses(), lost0 + 3);
	assert_int_equal(g.n, 1);
	conn_close(&k);
	sockwatch_close(w);
}

/* A timer that could not be armed: no event, but the loss shows, for the
 * caller to read every socket. */
static void timer_not_armed__loss_shows(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	uint64_t lost0 = sockwatch_losses();
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	assert_true(add_server(w, &k) > 0);
	sockwatch_test_noarm(1);
	assert_int_equal(write(k.c, "abc", 3), 3);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(g.n, 0);
	assert_int_equal(sockwatch_losses(), lost0 + 1);
	conn_close(&k);
	sockwatch_close(w);
}

/* A slot given up: its socket's wait posts nothing. */
static void deleted__no_event(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct conn k;
	uint32_t slot;

	(void)state;
	conn_open(&k, AF_INET);
	slot = add_server(w, &k);
	assert_true(slot > 0);
	sockwatch_del(w, slot);
	assert_int_equal(write(k.c, "abc", 3), 3);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(g.n, 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* A watched socket that leaves ESTABLISHED is posted at once, once, and
 * not as a deadline (sw_left): the client shuts its side, the server
 * (CLOSE_WAIT) posts with its slot. One whose slot was given up first
 * posts nothing (it keeps its storage until it closes), not even once
 * its slot is another socket's (the storage names the slot with the old
 * generation: userspace would drop the post, but the kernel must not
 * make it; with the sockops hooks the new slot's enrolment walk has taken
 * its callbacks off, so the tracepoints are where that is judged). A full
 * ring: counted lost. The span (5 s) keeps any wait the
 * FIN makes from posting meanwhile. Fails a watch that posts no state
 * change, one that posts it as a deadline, one that posts for a slot
 * given up or given to another, and one that drops a post uncounted. */
static void left_established__posted_once(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st0, st;
	const uint64_t span = 5000000000ull;
	uint32_t slot, gone;
	struct conn k, d, e, f;
	uint64_t lost0;

	(void)state;
	conn_open(&k, AF_INET);
	conn_open(&d, AF_INET);
	conn_open(&e, AF_INET);
	conn_open(&f, AF_INET);
	slot = add_server_span(w, &k, span);
	gone = add_server_span(w, &d, span);
	assert_true(add_server_span(w, &f, span) > 0);
	assert_true(slot > 0 && gone > 0);
	sockwatch_del(w, gone);
	/* the slot given up is the next one given (last in, first out) */
	assert_int_equal(add_server_span(w, &e, span), gone);
	sockwatch_stats(&st0);
	lost0 = sockwatch_losses();
	assert_int_equal(shutdown(k.c, SHUT_WR), 0);
	assert_int_equal(shutdown(d.c, SHUT_WR), 0);
	pump(w, 50);
	assert_int_equal(g.left, 1);
	assert_int_equal(g.left_slot, slot);
	assert_int_equal(g.n, 0);
	sockwatch_stats(&st);
	assert_int_equal(st.left, st0.left + 1);
	assert_int_equal(sockwatch_losses(), lost0);
	sockwatch_test_lose(1);
	assert_int_equal(shutdown(f.c, SHUT_WR), 0);
	pump(w, 50);
	assert_int_equal(g.left, 1);
	assert_int_equal(g.n, 0);
	assert_int_equal(sockwatch_losses(), lost0 + 1);
	sockwatch_test_lose(0);
	conn_close(&k);
	conn_close(&d);
	conn_close(&e);
	conn_close(&f);
	sockwatch_close(w);
}

/* A socket that is gone, or whose cookie is another's, gets no slot. */
static void unknown_socket__no_slot(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sr_key key;
	uint32_t slot = 7;
	char err[256] = "";
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	key_for(&key, k.s, k.lport, k.cport);
	key.cookie ^= 1;
	assert_int_equal(sockwatch_add(w, &key, 1, SPAN_NS, &slot, err, sizeof(err)), 0);
	assert_int_equal(slot, 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* A tracepoint the kernel refuses: the open fails and names it; the next
 * open loads. (sock_recv_length is attached with either set of hooks.) */
static void attach_refused__open_names_the_hook(void **state)
{
	char err[256] = "";
	struct got g = { 0 };
	struct sockwatch *w;

	(void)state;
	sockwatch_test_fail_attach("sock_recv_length");
	w = sockwatch_open(-1, on_event, &g, err, sizeof(err));
	if (*(int *)*state) {
		/* the sockops set failed on it: the tracepoints, which then
		 * attach it */
		struct sockwatch_stats st;

		assert_non_null(w);
		sockwatch_stats(&st);
		assert_int_equal(st.sockops, 0);
		assert_non_null(strstr(st.why, "sock_recv_length"));
		sockwatch_close(w);
		return;
	}
	assert_null(w);
	assert_non_null(strstr(err, "sock_recv_length"));
	w = watch(&g);
	sockwatch_close(w);
}

/* The deadline wheel's timer without memory for a while (bpf_timer_init's
 * kmalloc_nolock, contended): made on a later try, the tries apart; without
 * memory at every try, the open fails and names the timer and the error;
 * the next open loads. Fails a loader that tries eight times back to back
 * (12 failures here; the clean clone at d4bde4b met 8 in a row). */
static void timer_without_memory__made_on_a_later_try(void **state)
{
	char err[256] = "";
	struct got g = { 0 };
	struct sockwatch *w;
	uint64_t t0;

	(void)state;
	sockwatch_test_timer_nomem(12);
	t0 = loop_mono_ns();
	w = sockwatch_open(-1, on_event, &g, err, sizeof(err));
	if (!w)
		fail_msg("sockwatch_open: %s", err);
	assert_true(loop_mono_ns() - t0 >= 12ull * SW_TIMER_RETRY_NS);     /* slept between */
	sockwatch_close(w);
	sockwatch_test_unload();
	sockwatch_test_timer_nomem(SW_TIMER_TRIES);
	w = sockwatch_open(-1, on_event, &g, err, sizeof(err));
	assert_null(w);
	assert_non_null(strstr(err, "the deadline wheel's timer"));
	assert_non_null(strstr(err, strerror(ENOMEM)));
	sockwatch_test_timer_nomem(0);
	w = watch(&g);
	sockwatch_close(w);
}

/* The sockops program refused on the cgroup: the tracepoints, and the
 * stats say why. */
static void sockops_refused__tracepoints_and_why(void **state)
{
	struct got g = { 0 };
	struct sockwatch_stats st;
	struct sockwatch *w;

	(void)state;
	sockwatch_test_fail_attach("sockops");
	want_sockops = -1;
	w = watch(&g);
	sockwatch_stats(&st);
	assert_int_equal(st.sockops, 0);
	assert_non_null(strstr(st.why, "sockops"));
	request_unanswered(w, &g);      /* and they watch */
	sockwatch_close(w);
}

/* With the sockops hooks, a socket registered after it connected has no
 * callbacks until the enrolment gives them: a request sent on it and
 * never answered (the client's end, its ACK dropped) posts at its
 * deadline only when it was enrolled. A watch that only registers
 * (socket storage) never hears of the send. */
static void sockops__enrolled_socket_posts_its_send(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	uint64_t t0;
	struct conn k;

	(void)state;
	sockwatch_stats(&st);
	assert_int_equal(st.sockops, 1);
	conn_open(&k, AF_INET);
	conn_echo(&k, 3);
	add_client(w, &k, SPAN_NS);
	sockwatch_stats(&st);
	assert_true(st.enrolled >= 1);
	assert_int_equal(nstest_sh("nft add table inet swo && nft add chain inet swo in "
				   "'{ type filter hook input priority 0; }' && "
				   "nft add rule inet swo in tcp dport %u drop", k.lport), 0);
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, "ping", 4), 4);
	/* two spans: over before the first RTO (200 ms at the least) */
	pump(w, 2 * SPAN_NS / 1000000);
	nstest_sh("nft delete table inet swo");
	assert_int_equal(g.n, 1);
	assert_true(g.wait_from <= t0 + 2000000ull);
	assert_true(g.at + 1000000ull >= g.deadline);
	assert_true(g.at < t0 + SPAN_NS + 20000000ull);
	sockwatch_stats(&st);
	assert_true(st.hooked > 0);
	conn_close(&k);
	sockwatch_close(w);
}

static void got_refused(void *arg, uint32_t slot)
{
	*(uint32_t *)arg = slot;
}

/* A slot given up loses its socket's callbacks at the next enrolment. */
static void sockops__given_up_slot_unenrolled(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	char err[256] = "";
	struct conn k;
	uint32_t slot;

	(void)state;
	conn_open(&k, AF_INET);
	slot = add_server(w, &k);
	assert_true(slot > 0);
	sockwatch_del(w, slot);
	assert_int_equal(sockwatch_enrol(w, NULL, NULL, err, sizeof(err)), 0);
	sockwatch_stats(&st);
	assert_int_equal(st.unenrolled, 1);
	assert_int_equal(st.enrol_failed, 0);
	conn_close(&k);
	sockwatch_close(w);
}

/* A burst acknowledged in pieces, so that the ACK that ends its wait may
 * have no callback (RTT_CB comes once a round trip), then idle past the
 * span, then a write whose ACKs are dropped: that write's wait posts at
 * its own deadline. A watch that takes the stale wait's start (posted
 * already) for the new write's never posts it. Eight times over: the
 * stale start is later than the kernel's lsndtime only about half the
 * time. */
static void burst_then_unanswered_write__posts_at_its_deadline(void **state)
{
	static char big[256 * 1024];
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	add_client(w, &k, SPAN_NS);
	for (int round = 0; round < 8; round++) {
		uint64_t t0, at = 0;
		size_t left = sizeof(big);
		unsigned n0;

		/* the burst, read by the server as it comes */
		while (left) {
			ssize_t m = write(k.c, big, left > 65536 ? 65536 : left);
			char rb[65536];

			assert_true(m > 0);
			left -= (size_t)m;
			for (ssize_t r = 0; r < m;) {
				ssize_t x = read(k.s, rb, sizeof(rb) < (size_t)(m - r) ? sizeof(rb) :
						 (size_t)(m - r));

				assert_true(x > 0);
				r += x;
			}
		}
		pump(w, 2 * SPAN_NS / 1000000);        /* a stale wait may post */
		n0 = g.n;
		assert_int_equal(nstest_sh("nft add table inet swb && nft add chain inet swb in "
					   "'{ type filter hook input priority 0; }' && "
					   "nft add rule inet swb in tcp dport %u drop", k.cport), 0);
		t0 = loop_mono_ns();
		assert_int_equal(write(k.c, "x", 1), 1);
		pump(w, 2 * SPAN_NS / 1000000);
		nstest_sh("nft delete table inet swb");
		for (unsigned i = n0; i < g.n && i < NMANY; i++)
			if (g.each[i].at >= t0 + SPAN_NS - 12000000ull && !at)
				at = g.each[i].at;
		if (!at)
			fail_msg("round %d: the write's wait never posted", round);
		assert_true(at < t0 + SPAN_NS + 40000000ull);
		/* answered: the dropped byte and its retransmissions through */
		assert_int_equal(read(k.s, big, 1), 1);
		pump(w, 50);
	}
	conn_close(&k);
	sockwatch_close(w);
}

/* A send held by a shut window (the server stopped reading: bytes
 * unsent, none in flight) while the peer keeps sending to the client,
 * which reads: the wait is the send's, and posts at its deadline. A watch
 * that re-dates a wait whenever anything is received or read pushes the
 * deadline on at every message and posts only at the 30 s read. */
static void window_shut_while_receiving__the_send_posts(void **state)
{
	static char big[65536];
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	uint64_t tb, at = 0;
	struct conn k;
	char b[8];
	int fl;

	(void)state;
	conn_open(&k, AF_INET);
	add_client(w, &k, SPAN_NS);
	fl = fcntl(k.c, F_GETFL);
	assert_int_equal(fcntl(k.c, F_SETFL, fl | O_NONBLOCK), 0);
	while (write(k.c, big, sizeof(big)) > 0)
		;
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fcntl(k.c, F_SETFL, fl), 0);
	nstest_msleep(20);      /* what flew is acknowledged, the window shut */
	tb = loop_mono_ns();
	for (unsigned i = 0; i < 3 * SPAN_NS / 10000000; i++) {
		assert_int_equal(write(k.s, "h", 1), 1);
		assert_int_equal(read(k.c, b, sizeof(b)), 1);
		pump(w, 10);
	}
	for (unsigned i = 0; i < g.n && i < NMANY && !at; i++)
		if (g.each[i].at >= tb)
			at = g.each[i].at;
	if (!at)
		fail_msg("the held send's wait never posted (%u posts before)", g.n);
	assert_true(at < tb + SPAN_NS + 40000000ull);
	conn_close(&k);
	sockwatch_close(w);
}

/* A socket the kernel would not give the callbacks is handed back to the
 * caller (to be read on its pace), not left watched by nothing. */
static void sockops__refused_callbacks__handed_back(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	uint32_t slot = 0, back = 0;
	char err[256] = "";
	struct sr_key key;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	key_for(&key, k.s, k.lport, k.cport);
	assert_int_equal(sockwatch_add(w, &key, 1, SPAN_NS, &slot, err, sizeof(err)), 0);
	assert_true(slot > 0);
	sockwatch_test_enrol_fail(1);
	assert_int_equal(sockwatch_enrol(w, got_refused, &back, err, sizeof(err)), 0);
	assert_int_equal(back, slot);
	sockwatch_stats(&st);
	assert_int_equal(st.enrol_failed, 1);
	conn_close(&k);
	sockwatch_close(w);
}

/* A busy socket (its callbacks past the watch's busy limit in a window)
 * is handed back once, and from then on makes no callback and no hook at
 * all: its receives leave at the storage lookup as an unwatched socket's.
 * With the tracepoints (which run for every socket anyway) it never is.
 * 200 rounds: a window that ends among them leaves 200 callbacks or more
 * on one side of it. */
static void busy__handed_back_once_then_costs_nothing(void **state)
{
	int ops = *(int *)*state;
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	uint64_t h1, busied0;
	struct conn k;
	uint32_t slot;

	conn_open(&k, AF_INET);
	sockwatch_stats(&st);
	busied0 = st.busied;
	sockwatch_set_busy(w, 40);
	slot = add_server(w, &k);
	assert_true(slot > 0);
	conn_echo(&k, 200);
	pump(w, 20);
	sockwatch_stats(&st);
	if (!ops) {
		assert_int_equal(g.busy, 0);
		assert_int_equal(st.busied, busied0);
		conn_close(&k);
		sockwatch_close(w);
		return;
	}
	assert_int_equal(g.busy, 1);
	assert_int_equal(g.busy_slot, slot);
	assert_int_equal(st.busied, busied0 + 1);
	assert_int_equal(g.n, 0);
	h1 = st.hooked;
	conn_echo(&k, 200);
	pump(w, 20);
	sockwatch_stats(&st);
	assert_int_equal(st.hooked, h1);
	assert_int_equal(g.busy, 1);
	sockwatch_del(w, slot);
	/* its callback flags are off, not only its storage: registered
	 * again without an enrolment (storage, no flags set) and never
	 * handed back, only its reads (one a round) run a hook; with the
	 * flags left on, its sends and ACKs would too (two or three a
	 * round more) */
	{
		struct sr_key key;
		char err[256] = "";

		sockwatch_set_busy(w, 0);
		key_for(&key, k.s, k.lport, k.cport);
		slot = 0;
		assert_int_equal(sockwatch_add(w, &key, 1, SPAN_NS, &slot, err, sizeof(err)), 0);
		assert_true(slot > 0);
		sockwatch_stats(&st);
		h1 = st.hooked;
		conn_echo(&k, 100);
		sockwatch_stats(&st);
		assert_true(st.hooked - h1 >= 100);
		assert_true(st.hooked - h1 <= 150);
		sockwatch_del(w, slot);
	}
	conn_close(&k);
	sockwatch_close(w);
}

/* A hand-back goes with its post or not at all: with the ring full the
 * socket stays on its callbacks (hooked on), and is handed back at the
 * first callback after the ring has room. A watch that took the
 * callbacks off first would leave it watched by nothing. */
static void busy__ring_full__kept_until_posted(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct sockwatch_stats st;
	uint64_t h1;
	struct conn k;
	uint32_t slot;

	(void)state;
	conn_open(&k, AF_INET);
	sockwatch_set_busy(w, 40);
	slot = add_server(w, &k);
	assert_true(slot > 0);
	sockwatch_test_busy_lose(1000000);
	conn_echo(&k, 200);
	pump(w, 20);
	assert_int_equal(g.busy, 0);
	sockwatch_stats(&st);
	h1 = st.hooked;
	conn_echo(&k, 20);
	sockwatch_stats(&st);
	assert_true(st.hooked > h1);
	sockwatch_test_busy_lose(0);
	/* 100 rounds: the window may turn among them (it is the clock's) */
	conn_echo(&k, 100);
	pump(w, 20);
	assert_int_equal(g.busy, 1);
	assert_int_equal(g.busy_slot, slot);
	sockwatch_del(w, slot);
	conn_close(&k);
	sockwatch_close(w);
}

/* Each test of what the hooks see with each set of them: the tracepoints
 * (state 0), the sockops callbacks (1); the deadline wheel's (what the
 * hooks feed it, alike) with the sockops callbacks. */
static int tracepoints(void **state)
{
	static int zero = 0;

	sockwatch_test_tracepoints(1);
	want_sockops = 0;
	*state = &zero;
	return 0;
}

static int sockops(void **state)
{
	static int one = 1;

	sockwatch_test_tracepoints(0);
	want_sockops = 1;
	*state = &one;
	return 0;
}

/* A failed test leaves its watch open (cmocka leaves the function at the
 * failed check): unloaded, so the next test loads the hooks it asks for. */
static int unload(void **state)
{
	(void)state;
	sockwatch_test_unload();
	conns_teardown();
	return 0;
}

#define BOTH(f) { #f "/tracepoints", f, tracepoints, unload, NULL }, \
		{ #f "/sockops", f, sockops, unload, NULL }
#define SOCKOPS(f) { #f, f, sockops, unload, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(healthy_ping_pong__no_event),
		BOTH(request_unanswered__one_event_at_deadline),
		BOTH(waiting_before_registration__posts_at_once),
		BOTH(unread_drained_in_time__no_event),
		BOTH(retransmitted_then_written__wait_start_kept),
		SOCKOPS(spans_out_of_order__each_at_its_deadline),
		SOCKOPS(beyond_the_wheel__posted_at_deadline),
		SOCKOPS(many_at_one_deadline__all_posted),
		SOCKOPS(ring_full__counted_and_retried),
		SOCKOPS(timer_not_armed__loss_shows),
		BOTH(deleted__no_event),
		BOTH(left_established__posted_once),
		BOTH(unknown_socket__no_slot),
		BOTH(attach_refused__open_names_the_hook),
		BOTH(timer_without_memory__made_on_a_later_try),
		SOCKOPS(sockops_refused__tracepoints_and_why),
		SOCKOPS(sockops__enrolled_socket_posts_its_send),
		SOCKOPS(sockops__given_up_slot_unenrolled),
		BOTH(burst_then_unanswered_write__posts_at_its_deadline),
		BOTH(window_shut_while_receiving__the_send_posts),
		SOCKOPS(sockops__refused_callbacks__handed_back),
		BOTH(busy__handed_back_once_then_costs_nothing),
		SOCKOPS(busy__ring_full__kept_until_posted),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
