/* Unit tests: the flow table and each flow's state machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "coretest.h"
#include "daemon/liveness.h"

#define THR (200 * MS)
#define POLL (50 * MS)

static void flow_update__engine_request_unanswered__waits_then_stalls(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = flowtab_get(ft, &o, "a", 0, 1);

	(void)state;
	assert_int_equal(flow_update(f, &o, 1 * SEC, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_IDLE);
	o.tx_msgs = 11;         /* a request left */
	assert_int_equal(flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_WAITING);
	assert_int_equal(flow_update(f, &o, 1 * SEC + 250 * MS, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(flow_update(f, &o, 1 * SEC + 300 * MS, THR, POLL), FLOW_EV_STALLED);
	assert_int_equal(f->state, FLOW_STALLED);
	assert_int_equal(f->stalls, 1);
	/* the wait began when the request was noticed, not at the stall */
	assert_int_equal(f->stalled_at_ns, 1 * SEC + 50 * MS);
	flowtab_free(ft);
}

static void flow_update__reply_after_stall__released_with_duration(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = flowtab_get(ft, &o, "a", 0, 1);

	(void)state;
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 11;
	flow_update(f, &o, 2 * SEC, THR, POLL);
	assert_int_equal(flow_update(f, &o, 2 * SEC + 250 * MS, THR, POLL), FLOW_EV_STALLED);
	o.rx_msgs = 11;         /* the reply came */
	assert_int_equal(flow_update(f, &o, 3 * SEC, THR, POLL), FLOW_EV_RELEASED);
	assert_int_equal(f->state, FLOW_IDLE);
	assert_int_equal(f->last_stall_ns, 1 * SEC);
	flowtab_free(ft);
}

static void flow_update__engine_send_time__taken_as_wait_start(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = flowtab_get(ft, &o, "a", 0, 1);

	(void)state;
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 11;
	o.last_tx_ns = 1 * SEC + 10 * MS;      /* the engine's own clock */
	o.last_rx_ns = 1 * SEC;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->wait_since_ns, 1 * SEC + 10 * MS);
	/* stalled 200 ms after the send, not after our poll noticed it */
	assert_int_equal(flow_update(f, &o, 1 * SEC + 211 * MS, THR, POLL), FLOW_EV_STALLED);
	flowtab_free(ft);
}

static void flow_update__udp_tracker_datagram_unanswered__waits(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 5, 5, 0);
	struct sflow *f;

	(void)state;
	o.src = FLOW_SRC_BPF;
	o.key.proto = 17;
	f = flowtab_get(ft, &o, "a", 0, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 6;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_WAITING);
	/* TCP frames say nothing about requests */
	o.key.proto = 6;
	f = flowtab_get(ft, &o, "a", 1 * SEC, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 9;
	flow_update(f, &o, 2 * SEC, THR, POLL);
	assert_int_equal(f->state, FLOW_IDLE);
	flowtab_free(ft);
}

static void flow_update__kernel_socket_unread_bytes__waits(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 0, 0, 0);
	struct sflow *f;

	(void)state;
	o.src = FLOW_SRC_SOCK;
	f = flowtab_get(ft, &o, "a", 0, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.unread = 100;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_WAITING);
	o.unread = 0;           /* read: progress and nothing outstanding */
	flow_update(f, &o, 1 * SEC + 100 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_IDLE);
	flowtab_free(ft);
}

static void flowtab_get__same_tuple_other_port_or_session__distinct(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs a = coretest_engine_obs(40000, 1, 0, 0, 0), b = a;

	(void)state;
	b.session = 2;
	assert_ptr_equal(flowtab_get(ft, &a, "p", 0, 1), flowtab_get(ft, &a, "p", 0, 1));
	assert_ptr_not_equal(flowtab_get(ft, &a, "p", 0, 1), flowtab_get(ft, &a, "q", 0, 1));
	assert_ptr_not_equal(flowtab_get(ft, &a, "p", 0, 1), flowtab_get(ft, &b, "p", 0, 1));
	assert_null(flowtab_get(ft, &b, "r", 0, 0));
	assert_int_equal(flowtab_count(ft), 3);
	flowtab_free(ft);
}

static unsigned ngone;
static void gone_cb(struct sflow *f, void *arg)
{
	(void)f;
	(void)arg;
	ngone++;
}

static void flowtab_expire__unseen_two_seconds__removed(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs a = coretest_engine_obs(40000, 1, 0, 0, 0), b = a;
	unsigned n = 0;

	(void)state;
	b.session = 2;
	flow_update(flowtab_get(ft, &a, "p", 0, 1), &a, 1 * SEC, THR, POLL);
	flow_update(flowtab_get(ft, &b, "p", 0, 1), &b, 2 * SEC, THR, POLL);
	ngone = 0;
	assert_int_equal(flowtab_expire(ft, 3 * SEC + 500 * MS, gone_cb, NULL), 1);
	assert_int_equal(ngone, 1);
	for (struct sflow *f = flowtab_next(ft, NULL); f; f = flowtab_next(ft, f))
		n++;
	assert_int_equal(n, 1);
	flowtab_free(ft);
}

static void flow_norm_tuple__either_end__same_text(void **state)
{
	struct flowtab *ft = flowtab_new();
	struct flow_obs a = coretest_engine_obs(40000, 0, 0, 0, 0), b = a;
	char ta[160], tb[160], na[160], nb[160];

	(void)state;
	b.key.saddr = a.key.daddr;
	b.key.daddr = a.key.saddr;
	b.key.sport = a.key.dport;
	b.key.dport = a.key.sport;
	flow_tuple(flowtab_get(ft, &a, "p", 0, 1), ta, sizeof(ta));
	flow_tuple(flowtab_get(ft, &b, "q", 0, 1), tb, sizeof(tb));
	assert_string_not_equal(ta, tb);
	flow_norm_tuple(flowtab_get(ft, &a, "p", 0, 1), na, sizeof(na));
	flow_norm_tuple(flowtab_get(ft, &b, "q", 0, 1), nb, sizeof(nb));
	assert_string_equal(na, nb);
	flowtab_free(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_update__engine_request_unanswered__waits_then_stalls),
		cmocka_unit_test(flow_update__reply_after_stall__released_with_duration),
		cmocka_unit_test(flow_update__engine_send_time__taken_as_wait_start),
		cmocka_unit_test(flow_update__udp_tracker_datagram_unanswered__waits),
		cmocka_unit_test(flow_update__kernel_socket_unread_bytes__waits),
		cmocka_unit_test(flowtab_get__same_tuple_other_port_or_session__distinct),
		cmocka_unit_test(flowtab_expire__unseen_two_seconds__removed),
		cmocka_unit_test(flow_norm_tuple__either_end__same_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
