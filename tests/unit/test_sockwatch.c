/* Unit tests: sockwatch, the kernel-event socket watch. The kernel judges a
 * watched socket's wait on its own paths and posts only when the wait
 * reaches its deadline: nothing for a socket whose flows are healthy,
 * one event for one that waits, at the deadline the kernel's clocks give;
 * and every way an event can be lost shows in sockwatch_losses(). Runs as
 * root in a private network namespace (group setup). */
#include "sockdiag_test.h"

#include <poll.h>

#include "collectors/flows/sockwatch_api.h"

#define SPAN_NS 60000000ull     /* 60 ms */

struct got {
	unsigned n;
	uint32_t slot;
	uint64_t wait_from, deadline, at, rcvd;
};

static void on_event(void *arg, const struct sockwatch_event *e)
{
	struct got *g = arg;

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

static struct sockwatch *watch(struct got *g)
{
	char err[256] = "";
	struct sockwatch *w = sockwatch_open(-1, on_event, g, err, sizeof(err));

	if (!w)
		fail_msg("sockwatch_open: %s", err);
	return w;
}

/* Register the server end of k (its client is k.c). */
static uint32_t add_server(struct sockwatch *w, const struct conn *k)
{
	struct sr_key key;
	uint32_t slot = 0;
	char err[256] = "";

	key_for(&key, k->s, k->lport, k->cport);
	if (sockwatch_add(w, &key, 1, SPAN_NS, &slot, err, sizeof(err)) < 0)
		fail_msg("sockwatch_add: %s", err);
	return slot;
}

static void echo_rounds(const struct conn *k, int n)
{
	char b[8];

	for (int i = 0; i < n; i++) {
		assert_int_equal(write(k->c, "ping", 4), 4);
		assert_int_equal(read(k->s, b, sizeof(b)), 4);
		assert_int_equal(write(k->s, "pong", 4), 4);
		assert_int_equal(read(k->c, b, sizeof(b)), 4);
	}
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
	echo_rounds(&k, 3);
	assert_true(add_server(w, &k) > 0);
	for (int i = 0; i < 18; i++) {
		echo_rounds(&k, 20);
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
static void request_unanswered__one_event_at_deadline(void **state)
{
	struct got g = { 0 };
	struct sockwatch *w = watch(&g);
	struct conn k;
	uint64_t t0;
	char b[8];

	(void)state;
	conn_open(&k, AF_INET);
	echo_rounds(&k, 3);
	assert_true(add_server(w, &k) > 0);
	t0 = loop_mono_ns();
	assert_int_equal(write(k.c, "ping", 4), 4);
	assert_int_equal(read(k.s, b, sizeof(b)), 4);
	pump(w, 4 * SPAN_NS / 1000000);
	assert_int_equal(g.n, 1);       /* once: not again while it waits */
	/* dated by the kernel's clocks, at most a jiffy (10 ms) early */
	assert_true(g.wait_from <= t0 + 2000000ull);
	assert_true(g.wait_from + 12000000ull >= t0);
	assert_true(g.at + 1000000ull >= g.deadline);
	assert_true(g.at < g.deadline + 20000000ull);
	/* answered: a new wait only with the next request */
	assert_int_equal(write(k.s, "pong", 4), 4);
	assert_int_equal(read(k.c, b, sizeof(b)), 4);
	pump(w, 2 * SPAN_NS / 1000000);
	assert_int_equal(g.n, 1);
	conn_close(&k);
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
	struct sr_key key;
	uint32_t slot = 0;
	char err[256] = "";
	uint64_t t0, span = 1500000000ull;
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	key_for(&key, k.c, k.cport, k.lport);
	if (sockwatch_add(w, &key, 1, span, &slot, err, sizeof(err)) < 0 || !slot)
		fail_msg("sockwatch_add: %s", err);
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

/* A hook the kernel refuses: the open fails and names it; the next open
 * loads. */
static void attach_refused__open_names_the_hook(void **state)
{
	char err[256] = "";
	struct got g = { 0 };
	struct sockwatch *w;

	(void)state;
	sockwatch_test_fail_attach("sock_recv_length");
	w = sockwatch_open(-1, on_event, &g, err, sizeof(err));
	assert_null(w);
	assert_non_null(strstr(err, "sock_recv_length"));
	w = watch(&g);
	sockwatch_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(healthy_ping_pong__no_event),
		cmocka_unit_test(request_unanswered__one_event_at_deadline),
		cmocka_unit_test(waiting_before_registration__posts_at_once),
		cmocka_unit_test(unread_drained_in_time__no_event),
		cmocka_unit_test(retransmitted_then_written__wait_start_kept),
		cmocka_unit_test(ring_full__counted_and_retried),
		cmocka_unit_test(timer_not_armed__loss_shows),
		cmocka_unit_test(deleted__no_event),
		cmocka_unit_test(unknown_socket__no_slot),
		cmocka_unit_test(attach_refused__open_names_the_hook),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
