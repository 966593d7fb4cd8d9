/* Unit tests: the flow table and each flow's state machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "coretest.h"
#include "daemon/detect/liveness.h"

#define THR (200 * MS)
#define POLL (50 * MS)

static void flow_update__engine_request_unanswered__waits_then_stalls(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = livetab_get(ft, &o, "a", 0, 1);

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
	livetab_free(ft);
}

static void flow_update__reply_after_stall__released_with_duration(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = livetab_get(ft, &o, "a", 0, 1);

	(void)state;
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 11;
	flow_update(f, &o, 2 * SEC, THR, POLL);
	assert_int_equal(flow_update(f, &o, 2 * SEC + 250 * MS, THR, POLL), FLOW_EV_STALLED);
	o.rx_msgs = 11;         /* the reply came */
	assert_int_equal(flow_update(f, &o, 3 * SEC, THR, POLL), FLOW_EV_RELEASED);
	assert_int_equal(f->state, FLOW_IDLE);
	assert_int_equal(f->last_stall_ns, 1 * SEC);
	livetab_free(ft);
}

static void flow_update__engine_send_time__taken_as_wait_start(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, 0);
	struct sflow *f = livetab_get(ft, &o, "a", 0, 1);

	(void)state;
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 11;
	o.last_tx_ns = 1 * SEC + 10 * MS;      /* the engine's own clock */
	o.last_rx_ns = 1 * SEC;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->wait_since_ns, 1 * SEC + 10 * MS);
	/* stalled 200 ms after the send, not after our poll noticed it */
	assert_int_equal(flow_update(f, &o, 1 * SEC + 211 * MS, THR, POLL), FLOW_EV_STALLED);
	livetab_free(ft);
}

static void flow_update__udp_tracker_datagram_unanswered__waits(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 5, 5, 0);
	struct sflow *f;

	(void)state;
	o.src = FLOW_SRC_BPF;
	o.key.proto = 17;
	f = livetab_get(ft, &o, "a", 0, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 6;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_WAITING);
	/* TCP frames say nothing about requests */
	o.key.proto = 6;
	f = livetab_get(ft, &o, "a", 1 * SEC, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.tx_msgs = 9;
	flow_update(f, &o, 2 * SEC, THR, POLL);
	assert_int_equal(f->state, FLOW_IDLE);
	livetab_free(ft);
}

static void flow_update__kernel_socket_unread_bytes__waits(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 0, 0, 0);
	struct sflow *f;

	(void)state;
	o.src = FLOW_SRC_SOCK;
	f = livetab_get(ft, &o, "a", 0, 1);
	flow_update(f, &o, 1 * SEC, THR, POLL);
	o.unread = 100;
	flow_update(f, &o, 1 * SEC + 50 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_WAITING);
	o.unread = 0;           /* read: progress and nothing outstanding */
	flow_update(f, &o, 1 * SEC + 100 * MS, THR, POLL);
	assert_int_equal(f->state, FLOW_IDLE);
	livetab_free(ft);
}

static void livetab_get__same_tuple_other_port_or_session__distinct(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs a = coretest_engine_obs(40000, 1, 0, 0, 0), b = a;

	(void)state;
	b.session = 2;
	assert_ptr_equal(livetab_get(ft, &a, "p", 0, 1), livetab_get(ft, &a, "p", 0, 1));
	assert_ptr_not_equal(livetab_get(ft, &a, "p", 0, 1), livetab_get(ft, &a, "q", 0, 1));
	assert_ptr_not_equal(livetab_get(ft, &a, "p", 0, 1), livetab_get(ft, &b, "p", 0, 1));
	assert_null(livetab_get(ft, &b, "r", 0, 0));
	assert_int_equal(livetab_count(ft), 3);
	livetab_free(ft);
}

static unsigned ngone;
static void gone_cb(struct sflow *f, void *arg)
{
	(void)f;
	(void)arg;
	ngone++;
}

static void livetab_expire__unseen_two_seconds__removed(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs a = coretest_engine_obs(40000, 1, 0, 0, 0), b = a;
	unsigned n = 0;

	(void)state;
	b.session = 2;
	flow_update(livetab_get(ft, &a, "p", 0, 1), &a, 1 * SEC, THR, POLL);
	flow_update(livetab_get(ft, &b, "p", 0, 1), &b, 2 * SEC, THR, POLL);
	ngone = 0;
	assert_int_equal(livetab_expire(ft, 3 * SEC + 500 * MS, gone_cb, NULL), 1);
	assert_int_equal(ngone, 1);
	for (struct sflow *f = livetab_next(ft, NULL); f; f = livetab_next(ft, f))
		n++;
	assert_int_equal(n, 1);
	livetab_free(ft);
}

/* Flows kept unseen for different times (flow_obs.keep_ns: the
 * kernel-event watch's 45 s, the engine tables' 3 s, the default 2 s) and
 * more kinds of keep than the table keeps lists for: each goes when its
 * own keep has passed since it was last seen, not before, not much after,
 * whatever order they were looked up in. */
static void livetab_expire__each_after_its_own_keep(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 1, 0, 0, 0);
	static const uint64_t keep[7] = { 0, 45 * SEC, 3 * SEC, 0, 5 * SEC, 7 * SEC, 9 * SEC };
	static const uint64_t seen[7] = { 0, 0, 0, 1500 * MS, 0, 0, 0 };
	uint64_t gone_at[7] = { 0 };

	(void)state;
	for (unsigned i = 0; i < 7; i++) {
		o.session = i + 1;
		o.keep_ns = keep[i];
		flow_update(livetab_get(ft, &o, "p", seen[i], 1), &o, seen[i], THR, POLL);
	}
	for (uint64_t t = 0; t <= 50 * SEC; t += 250 * MS) {
		/* session 1 seen again: no longer first in line */
		if (t == 2 * SEC) {
			o.session = 1;
			o.keep_ns = 0;
			flow_update(livetab_get(ft, &o, "p", t, 1), &o, t, THR, POLL);
		}
		livetab_expire(ft, t, NULL, NULL);
		for (unsigned i = 0; i < 7; i++) {
			struct flow_obs q = o;

			q.session = i + 1;
			q.keep_ns = keep[i];
			if (!gone_at[i] && !livetab_get(ft, &q, "p", t, 0))
				gone_at[i] = t;
		}
	}
	/* (keep or 2 s) after the last sighting, at the next 250 ms look */
	assert_int_equal(gone_at[0], 4 * SEC + 250 * MS);
	assert_int_equal(gone_at[1], 45 * SEC + 250 * MS);
	assert_int_equal(gone_at[2], 3 * SEC + 250 * MS);
	assert_int_equal(gone_at[3], 3500 * MS + 250 * MS);
	assert_int_equal(gone_at[4], 5 * SEC + 250 * MS);
	assert_int_equal(gone_at[5], 7 * SEC + 250 * MS);
	assert_int_equal(gone_at[6], 9 * SEC + 250 * MS);
	assert_int_equal(livetab_count(ft), 0);
	livetab_free(ft);
}

/* The hash the flow table used before (FNV-1a over key, source, session and
 * port into 4096 buckets): an engine choosing its session ids can put every
 * flow in one bucket. */
static unsigned fnv_bucket(const struct flow_obs *o, const char *port)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *b = (const unsigned char *)&o->key;

	for (size_t i = 0; i < sizeof(o->key); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	h = (h ^ (unsigned)o->src) * 1099511628211ull;
	h = (h ^ o->session) * 1099511628211ull;
	for (; *port; port++)
		h = (h ^ (unsigned char)*port) * 1099511628211ull;
	return (unsigned)(h ^ (h >> 32)) & 4095;
}

/* 8192 sessions that all land in one FNV bucket (found by search, the way
 * an attacker would): the keyed hash spreads them, and the buckets grow
 * with the flows. */
static void livetab_get__sessions_aimed_at_one_bucket__spread(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 0, 0, 0);
	unsigned n = 0;

	(void)state;
	for (uint64_t sess = 1; n < 8192; sess++) {
		o.session = sess;
		if (fnv_bucket(&o, "p") != 0)
			continue;
		assert_non_null(livetab_get(ft, &o, "p", 0, 1));
		n++;
	}
	assert_int_equal(livetab_count(ft), 8192);
	/* a fair hash puts ~1 flow per bucket; allow a wide margin */
	assert_in_range(livetab_longest_chain(ft), 1, 16);
	assert_true(livetab_buckets(ft) >= 8192);
	/* every flow is still found after the growth */
	n = 0;
	for (struct sflow *f = livetab_next(ft, NULL); f; f = livetab_next(ft, f)) {
		assert_ptr_equal(livetab_get(ft, &f->obs, "p", 0, 0), f);
		n++;
	}
	assert_int_equal(n, 8192);
	livetab_free(ft);
}

/* The key is random per table: the same flows iterate in another order. */
static void livetab_new__two_tables__different_keys(void **state)
{
	struct livetab *a = livetab_new(), *b = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 0, 0, 0);
	int differ = 0;

	(void)state;
	for (uint64_t sess = 1; sess <= 64; sess++) {
		o.session = sess;
		livetab_get(a, &o, "p", 0, 1);
		livetab_get(b, &o, "p", 0, 1);
	}
	for (struct sflow *x = livetab_next(a, NULL), *y = livetab_next(b, NULL); x && y;
	     x = livetab_next(a, x), y = livetab_next(b, y))
		if (x->obs.session != y->obs.session)
			differ = 1;
	assert_true(differ);
	livetab_free(a);
	livetab_free(b);
}

struct uses {
	unsigned n;
	struct livetab_use u[16];
};

static void use_cb(const struct livetab_use *u, void *arg)
{
	struct uses *us = arg;

	if (us->n < 16)
		us->u[us->n++] = *u;
}

/* One owner's flood stops at its own limit: another owner of the same
 * source and the other sources are still tracked; refusals are counted per
 * owner, and expiry gives the room back. */
static void livetab_get__owner_over_its_limit__others_tracked(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = coretest_engine_obs(40000, 0, 5, 5, 0), k;
	struct uses us = { 0 };

	(void)state;
	livetab_set_limit(ft, FLOW_SRC_ENGINE, 100, 40);
	livetab_set_limit(ft, FLOW_SRC_SOCK, 10, 0);
	o.uid = 1000;
	o.uid_known = 1;
	for (uint64_t sess = 1; sess <= 60; sess++) {
		o.session = sess;
		livetab_get(ft, &o, "p", 0, 1);
	}
	assert_int_equal(livetab_count(ft), 40);
	assert_int_equal(livetab_refused(ft), 20);
	o.uid = 1001;           /* another user's table */
	for (uint64_t sess = 1; sess <= 40; sess++) {
		o.session = 1001000 + sess;
		assert_non_null(livetab_get(ft, &o, "p", 0, 1));
	}
	k = coretest_engine_obs(40000, 0, 0, 0, 0);     /* a kernel socket */
	k.src = FLOW_SRC_SOCK;
	assert_non_null(livetab_get(ft, &k, "p", 0, 1));
	/* the source's own total still holds: 100 engine flows in all */
	o.uid = 1002;
	for (uint64_t sess = 1; sess <= 40; sess++) {
		o.session = 1002000 + sess;
		livetab_get(ft, &o, "p", 0, 1);
	}
	assert_int_equal(livetab_count(ft), 101);
	livetab_usage(ft, 1, use_cb, &us);
	assert_int_equal(us.n, 2);      /* the engine source, then uid 1000 */
	assert_false(us.u[0].uid_known);
	assert_int_equal(us.u[0].refused, 20);  /* uid 1002's, over the total */
	assert_int_equal(us.u[0].flows, 100);
	assert_true(us.u[1].uid_known);
	assert_int_equal(us.u[1].uid, 1000);
	assert_int_equal(us.u[1].refused, 20);
	assert_int_equal(us.u[1].flows, 40);
	/* all gone: room again */
	assert_int_equal(livetab_expire(ft, 10 * SEC, NULL, NULL), 101);
	o.uid = 1000;
	assert_non_null(livetab_get(ft, &o, "p", 11 * SEC, 1));
	livetab_free(ft);
}

static void flow_norm_tuple__either_end__same_text(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs a = coretest_engine_obs(40000, 0, 0, 0, 0), b = a;
	char ta[160], tb[160], na[160], nb[160];

	(void)state;
	b.key.saddr = a.key.daddr;
	b.key.daddr = a.key.saddr;
	b.key.sport = a.key.dport;
	b.key.dport = a.key.sport;
	flow_tuple(livetab_get(ft, &a, "p", 0, 1), ta, sizeof(ta));
	flow_tuple(livetab_get(ft, &b, "q", 0, 1), tb, sizeof(tb));
	assert_string_not_equal(ta, tb);
	flow_norm_tuple(livetab_get(ft, &a, "p", 0, 1), na, sizeof(na));
	flow_norm_tuple(livetab_get(ft, &b, "q", 0, 1), nb, sizeof(nb));
	assert_string_equal(na, nb);
	livetab_free(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_update__engine_request_unanswered__waits_then_stalls),
		cmocka_unit_test(flow_update__reply_after_stall__released_with_duration),
		cmocka_unit_test(flow_update__engine_send_time__taken_as_wait_start),
		cmocka_unit_test(flow_update__udp_tracker_datagram_unanswered__waits),
		cmocka_unit_test(flow_update__kernel_socket_unread_bytes__waits),
		cmocka_unit_test(livetab_get__same_tuple_other_port_or_session__distinct),
		cmocka_unit_test(livetab_expire__unseen_two_seconds__removed),
		cmocka_unit_test(livetab_expire__each_after_its_own_keep),
		cmocka_unit_test(livetab_get__sessions_aimed_at_one_bucket__spread),
		cmocka_unit_test(livetab_new__two_tables__different_keys),
		cmocka_unit_test(livetab_get__owner_over_its_limit__others_tracked),
		cmocka_unit_test(flow_norm_tuple__either_end__same_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
