/* Unit tests: the stall detector (grouping, limits, release, owners). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/flows/flow_live.h"
#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/detect/incident.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/detect/stall.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "stallfix.h"

static const char *conf_text =
	"[daemon]\n"
	"stall_threshold = 200ms\n"
	"incident_window = 5s\n"
	"incident_cooldown = 10s\n"
	"incident_timeout = 30s\n"
	"[port a]\n"
	"stats_file = /nonexistent/a\n"
	"peer = b\n"
	"track = none\n"
	"stall_threshold = 100ms\n"
	"[port b]\n"
	"stats_file = /nonexistent/b\n"
	"peer = a\n"
	"track = none\n"
	"[port c]\n"
	"stats_file = /nonexistent/c\n"
	"track = none\n";

/* Session sess on port: answered up to t0, then one request unanswered. */
static void stall_flow(struct stallfix *x, const char *port, uint16_t sport, uint64_t sess,
		       uint64_t t0, uint64_t t1, int pid)
{
	struct flow_obs o = coretest_engine_obs(sport, sess, 5, 5, pid);

	stall_observe(x->s, &o, port, t0);
	o.tx_msgs = 6;
	for (uint64_t t = t0 + 50 * MS; t <= t1; t += 50 * MS)
		stall_observe(x->s, &o, port, t);
}

static void stall_observe__both_ends_of_a_pair__one_incident(void **state)
{
	struct stallfix *x = *state;
	struct incident *inc;

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	assert_int_equal(x->nev, 1);
	assert_int_equal(x->ev[0].ev, INCIDENT_OPEN);
	stall_flow(x, "b", 40002, 2, 2 * SEC, 2 * SEC + 300 * MS, 0);
	assert_int_equal(x->nev, 2);
	assert_int_equal(x->ev[1].ev, INCIDENT_JOIN);
	assert_int_equal(x->ev[1].id, x->ev[0].id);
	inc = stall_incident(x->s, 0);
	assert_string_equal(incident_group(inc), "a+b");
	assert_int_equal(incident_nflows(inc), 2);
	/* a port outside the pair opens its own */
	stall_flow(x, "c", 40003, 3, 2 * SEC, 2 * SEC + 400 * MS, 0);
	assert_int_equal(x->nev, 3);
	assert_int_equal(x->ev[2].ev, INCIDENT_OPEN);
	assert_int_not_equal(x->ev[2].id, x->ev[0].id);
}

static void stall_observe__port_threshold__overrides_default(void **state)
{
	struct stallfix *x = *state;

	/* port a: 100 ms; port c: the default 200 ms */
	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 200 * MS, 0);
	assert_int_equal(x->nev, 1);
	stall_flow(x, "c", 40003, 3, 1 * SEC, 1 * SEC + 200 * MS, 0);
	assert_int_equal(x->nev, 1);
}

/* A reload that changes a port's threshold takes effect at once (the
 * detector keeps the last port's threshold between observations). */
static void stall_configure__new_port_threshold__applies(void **state)
{
	struct stallfix *x = *state;
	static const char *faster =
		"[daemon]\n"
		"stall_threshold = 200ms\n"
		"[port c]\n"
		"stats_file = /nonexistent/c\n"
		"track = none\n"
		"stall_threshold = 100ms\n";
	struct conf *c2 = coretest_conf(faster);

	/* waiting 150 ms of each: under 200 ms, over 100 ms */
	stall_flow(x, "c", 40003, 3, 1 * SEC, 1 * SEC + 200 * MS, 0);
	assert_int_equal(x->nev, 0);
	stall_configure(x->s, c2);
	stall_flow(x, "c", 40004, 4, 2 * SEC, 2 * SEC + 200 * MS, 0);
	assert_int_equal(x->nev, 1);
	stall_configure(x->s, x->c);
	conf_free(c2);
}

static void stall_observe__after_window_within_cooldown__suppressed(void **state)
{
	struct stallfix *x = *state;
	struct json_object *j;

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	stall_flow(x, "a", 40002, 2, 7 * SEC, 7 * SEC + 300 * MS, 0);
	assert_int_equal(x->nev, 1);            /* not joined, not opened */
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
	stall_flow(x, "a", 40003, 3, 12 * SEC, 12 * SEC + 300 * MS, 0);
	assert_int_equal(x->nev, 2);
	j = incident_json(stall_incident(x->s, 0), 13 * SEC);
	assert_int_equal(jx_u64(j, "suppressed_before"), 1);
	json_object_put(j);
}

static void stall_observe__reply_comes__incident_ends_released(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 6, 6, 0);
	struct json_object *fl;

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	fl = stall_flows_json(x->s, "a", 1, 0, NULL);
	assert_int_equal(jx_len(fl), 1);
	json_object_put(fl);
	stall_observe(x->s, &o, "a", 2 * SEC);
	assert_int_equal(x->nev, 2);
	assert_int_equal(x->ev[1].ev, INCIDENT_END);
	assert_true(incident_released(stall_incident(x->s, 0)));
	fl = stall_flows_json(x->s, "a", 1, 0, NULL);
	assert_int_equal(jx_len(fl), 0);
	json_object_put(fl);
}

/* A source that emits its last dump again between dumps (RDMA QPs, Onload,
 * VMA/XLIO: flow_obs.data_ns): the look before the release, at 2.95 s, saw
 * the dump of 2 s again, so the flow is known stalled until 2 s only, and
 * the incident says so (the observation window's held part ends there),
 * not 2.95 s. A source whose looks are live (data_ns 0) is dated by them. */
static void stall_observe__release_after_stale_looks__dated_by_the_dump(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 5, 5, 0);
	uint64_t moved;

	o.src = FLOW_SRC_RDMAQP;
	o.live = FLOW_LIVE_WAITING + 1;
	o.live_since_ns = 1 * SEC;
	for (uint64_t t = 1 * SEC; t < 3 * SEC; t += 50 * MS) {
		o.data_ns = t - t % SEC;        /* dumps at 1 s and 2 s */
		stall_observe(x->s, &o, "a", t);
	}
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
	o.live = FLOW_LIVE_PROGRESS + 1;
	o.live_since_ns = 0;
	o.tx_msgs = o.rx_msgs = 6;
	o.data_ns = 3 * SEC;
	stall_observe(x->s, &o, "a", 3 * SEC);
	assert_true(incident_released(stall_incident(x->s, 0)));
	assert_int_equal(incident_stalled_until(stall_incident(x->s, 0), &moved), 2 * SEC);
	assert_int_equal(moved, 3 * SEC);       /* the look that saw it move */
}

static void stall_observe__release_after_live_looks__dated_by_the_look(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 6, 6, 0);

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	stall_observe(x->s, &o, "a", 2 * SEC);
	assert_true(incident_released(stall_incident(x->s, 0)));
	assert_int_equal(incident_stalled_until(stall_incident(x->s, 0), NULL), 1 * SEC + 300 * MS);
}

/* The incident's opening is the moment the detector decided (after the
 * poll's reads), on both clocks; its durations stay on the detector's clock
 * (the poll's time, here synthetic). */
static void stall_observe__incident_opens__stamped_when_decided(void **state)
{
	struct stallfix *x = *state;
	uint64_t m0 = loop_mono_ns(), r0 = loop_real_ns(), m1, r1;
	struct json_object *j;

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	m1 = loop_mono_ns();
	r1 = loop_real_ns();
	assert_int_equal(x->nopen, 1);
	j = incident_json(stall_incident(x->s, 0), 1 * SEC + 300 * MS);
	assert_true(jx_u64(j, "opened_mono_ns") >= m0 && jx_u64(j, "opened_mono_ns") <= m1);
	assert_true(jx_u64(j, "opened_real_ns") >= r0 && jx_u64(j, "opened_real_ns") <= r1);
	/* the poll that saw it: the wait began at 1.05 s, threshold 100 ms */
	assert_true(jx_u64(j, "poll_mono_ns") >= 1 * SEC + 150 * MS &&
		    jx_u64(j, "poll_mono_ns") <= 1 * SEC + 200 * MS);
	json_object_put(j);
}

static void stall_poll_end__flow_gone_or_timeout__ends_unreleased(void **state)
{
	struct stallfix *x = *state;

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	stall_poll_end(x->s, 2 * SEC);
	assert_int_equal(x->nev, 1);
	stall_poll_end(x->s, 4 * SEC);          /* unseen for > 2 s: closed */
	assert_int_equal(x->nev, 2);
	assert_int_equal(x->ev[1].ev, INCIDENT_END);
	assert_true(incident_ended(stall_incident(x->s, 0)));
	assert_false(incident_released(stall_incident(x->s, 0)));

	stall_flow(x, "c", 40003, 3, 10 * SEC, 10 * SEC + 300 * MS, 0);
	for (uint64_t t = 11 * SEC; t < 42 * SEC; t += 1 * SEC) {
		struct flow_obs o = coretest_engine_obs(40003, 3, 6, 5, 0);

		stall_observe(x->s, &o, "c", t);
		stall_poll_end(x->s, t);
	}
	assert_int_equal(x->ev[x->nev - 1].ev, INCIDENT_END);    /* the 30 s timeout */
	assert_false(incident_released(stall_incident(x->s, 0)));
}

static void stall_incident_owners__both_ends__both_pids(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 5, 5, 111), r;
	struct stall_owner own[8];

	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 111);
	/* the server's end of the same connection, seen on port b */
	r = o;
	r.key.saddr = o.key.daddr;
	r.key.daddr = o.key.saddr;
	r.key.sport = o.key.dport;
	r.key.dport = o.key.sport;
	r.pid = 222;
	stall_observe(x->s, &r, "b", 1 * SEC + 350 * MS);
	assert_int_equal(stall_incident_owners(x->s, stall_incident(x->s, 0), own, 8), 2);
	assert_true((own[0].pid == 111 && own[1].pid == 222) ||
		    (own[0].pid == 222 && own[1].pid == 111));
}

static void stall_observe__progressing_flow__counted_as_sibling(void **state)
{
	struct stallfix *x = *state;
	struct json_object *j;

	for (uint64_t t = 1 * SEC, n = 1; t <= 1 * SEC + 300 * MS; t += 50 * MS, n++) {
		struct flow_obs o = coretest_engine_obs(40009, 9, n, n, 0);

		stall_observe(x->s, &o, "b", t);
	}
	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	j = incident_json(stall_incident(x->s, 0), 2 * SEC);
	assert_int_equal(jx_u64(j, "siblings_progressing"), 1);
	json_object_put(j);
}

/* The stalled connection moves again and the incident ends: it is no
 * sibling of its own incident (the bundle of fc70e13's demo said "2
 * stalled, 4 progressing" for 4 sessions with one stalled: the released
 * connection was counted as a fourth sibling when the incident ended). */
static void stall_incident_end__released_flow__not_its_own_sibling(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 6, 6, 0);
	struct json_object *j;

	for (uint64_t t = 1 * SEC, n = 1; t <= 1 * SEC + 300 * MS; t += 50 * MS, n++) {
		struct flow_obs p = coretest_engine_obs(40009, 9, n, n, 0);

		stall_observe(x->s, &p, "b", t);
	}
	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC + 300 * MS, 0);
	stall_observe(x->s, &o, "a", 1 * SEC + 400 * MS);
	assert_true(incident_released(stall_incident(x->s, 0)));
	j = incident_json(stall_incident(x->s, 0), 2 * SEC);
	assert_int_equal(jx_u64(j, "siblings_progressing"), 1);
	json_object_put(j);
}

/* 100k flows of one port stall in the same poll (a wedged receive path
 * under a big engine): one incident, every flow counted, the siblings
 * right. Each joining flow used to count the siblings afresh (a walk,
 * strdup and sort of every flow): quadratic, hours for 100k. The alarm
 * only turns such a hang into a failure; nothing here is timed. */
#define MASS 100000u
static void stall_observe__mass_stall_of_100k__one_incident_linear(void **state)
{
	struct stallfix *x = *state;
	struct json_object *j, *st;
	uint64_t t0 = 1 * SEC, t, scans, polls = 0;

	alarm(120);
	for (t = t0; t <= t0 + 400 * MS; t += 50 * MS, polls++) {
		for (unsigned i = 0; i < MASS; i++) {
			/* answered up to t0, then every request unanswered */
			struct flow_obs o = coretest_engine_obs((uint16_t)(1 + i % 50000), i + 1,
								t == t0 ? 5 : 6, 5, 0);

			stall_observe(x->s, &o, "c", t);
		}
		for (unsigned i = 0; i < 10; i++) {     /* ten flows keep moving */
			uint64_t n = (t - t0) / (50 * MS) + 1;
			struct flow_obs o = coretest_engine_obs((uint16_t)(60001 + i), 900000 + i,
								n, n, 0);

			stall_observe(x->s, &o, "c", t);
		}
		stall_poll_end(x->s, t);
	}
	alarm(0);
	assert_int_equal(x->nopen, 1);
	assert_int_equal(x->njoin, MASS - 1);
	j = incident_json(stall_incident(x->s, 0), t);
	assert_int_equal(json_object_array_length(jx_get(j, "flows")), INCIDENT_MAX_FLOWS);
	assert_int_equal(jx_u64(j, "flows_not_listed"), MASS - INCIDENT_MAX_FLOWS);
	assert_int_equal(jx_u64(j, "siblings_progressing"), 10);
	json_object_put(j);
	/* the sibling count ran once per poll at most, never per joining flow */
	st = stall_engines_json(x->s);
	scans = jx_u64(st, "sibling_scans");
	assert_true(scans <= polls + 2);
	json_object_put(st);
}

/* nicstallctl flows and the investigation's snapshot list at most max
 * flows (a mass stall made replies and bundle files of 100k flows, and
 * held the loop while they were built and sorted by text): stalled first,
 * the same first max as the whole sorted list, with the total. */
static void stall_flows_json__mass_stall__bounded_stalled_first_same_order(void **state)
{
	struct stallfix *x = *state;
	struct json_object *all, *some;
	unsigned total = 0, total2 = 0;
	uint64_t t0 = 1 * SEC, t;

	for (t = t0; t <= t0 + 400 * MS; t += 50 * MS) {
		for (unsigned i = 0; i < 20000; i++) {
			struct flow_obs o = coretest_engine_obs((uint16_t)(20000 - i % 20000), i + 1,
								t == t0 ? 5 : 6, 5, 0);

			stall_observe(x->s, &o, "c", t);
		}
		for (unsigned i = 0; i < 10; i++) {     /* idle ones, listed last */
			struct flow_obs o = coretest_engine_obs((uint16_t)(1 + i), 900000 + i, 5, 5, 0);

			stall_observe(x->s, &o, "c", t);
		}
		stall_poll_end(x->s, t);
	}
	some = stall_flows_json(x->s, NULL, 0, 100, &total);
	all = stall_flows_json(x->s, NULL, 0, 0, &total2);
	assert_int_equal(total, 20010);
	assert_int_equal(total2, 20010);
	assert_int_equal(json_object_array_length(some), 100);
	assert_int_equal(json_object_array_length(all), 20010);
	for (size_t i = 0; i < 100; i++) {
		struct json_object *a = json_object_array_get_idx(some, i);
		struct json_object *b = json_object_array_get_idx(all, i);

		assert_string_equal(jx_str(a, "state"), "stalled");
		assert_string_equal(jx_str(a, "tuple"), jx_str(b, "tuple"));
	}
	assert_string_equal(jx_str(json_object_array_get_idx(all, 20009), "state"), "idle");
	json_object_put(some);
	json_object_put(all);
}

/* One owner's 65,536 idle engine flows (the old shared limit) must not keep
 * a stalled kernel flow of the same port from being tracked. */
static void stall_observe__engine_flood_of_one_owner__kernel_flow_still_stalls(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs k = coretest_engine_obs(50001, 0, 0, 0, 0);

	for (unsigned i = 0; i < 65536; i++) {
		struct flow_obs o = coretest_engine_obs((uint16_t)(1 + i % 40000), i + 1, 5, 5, 0);

		o.uid = 1000;
		o.uid_known = 1;
		stall_observe(x->s, &o, "c", 1 * SEC);
	}
	/* a kernel TCP socket with unacknowledged bytes that never move */
	k.src = FLOW_SRC_SOCK;
	k.session = 0;
	k.uid_known = 1;
	stall_observe(x->s, &k, "c", 1 * SEC);
	k.inflight = 100;
	k.tx_bytes = 100;
	for (uint64_t t = 1 * SEC + 50 * MS; t <= 1 * SEC + 400 * MS; t += 50 * MS)
		stall_observe(x->s, &k, "c", t);
	assert_int_equal(x->nopen, 1);
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
}

/* A claim the kernel did not verify (an engine table's record, a forged
 * vmastat.<pid> block) stalls in the flow list, marked, and opens no
 * incident and joins none (issue 34, finding 2). */
static void stall_observe__unverified_claims__no_incident_shown_marked(void **state)
{
	struct stallfix *x = *state;
	enum flow_src_kind kinds[2] = { FLOW_SRC_ENGINE, FLOW_SRC_VMA };
	struct json_object *j;
	unsigned marked = 0;

	for (int k = 0; k < 2; k++) {
		struct flow_obs o = coretest_engine_obs((uint16_t)(40001 + k), (uint64_t)k + 1, 5, 5,
							 4242);
		uint8_t claims[2] = { FLOW_CLAIM_UNVERIFIED, FLOW_CLAIM_UNCHECKED };

		o.src = kinds[k];
		o.claim = claims[k];
		if (kinds[k] == FLOW_SRC_VMA) {        /* judges itself: held */
			o.live = FLOW_LIVE_HELD + 1;
			o.live_since_ns = 1 * SEC;
			o.unread = 4096;
		}
		stall_observe(x->s, &o, "c", 1 * SEC);
		o.tx_msgs = 6;
		for (uint64_t t = 1 * SEC + 50 * MS; t <= 1 * SEC + 400 * MS; t += 50 * MS)
			stall_observe(x->s, &o, "c", t);
	}
	assert_int_equal(x->nev, 0);
	j = stall_flows_json(x->s, NULL, 0, 100, NULL);
	for (size_t i = 0; i < jx_len(j); i++) {
		struct json_object *f = json_object_array_get_idx(j, i);

		assert_string_equal(jx_str(f, "state"), "stalled");
		marked += !strcmp(jx_str(f, "claim"), "unverified") ||
			  !strcmp(jx_str(f, "claim"), "unchecked");
	}
	assert_int_equal(marked, 2);
	json_object_put(j);
	/* a verified claim on the port opens one; the unverified stay out */
	stall_flow(x, "c", 40010, 10, 2 * SEC, 2 * SEC + 400 * MS, 4242);
	assert_int_equal(x->nopen, 1);
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
}

/* A flow that stalled while its claim was unchecked (the checks' budget
 * spent at the time) is acted on once the claim verifies: liveness calls a
 * stall once, so without a second look it would never be investigated
 * (the claims review, 1e). A claim that stays unverified never is. */
static void stall_observe__claim_verified_after_stall__incident_then(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = coretest_engine_obs(40001, 1, 5, 5, 4242);
	struct flow_obs u = coretest_engine_obs(40002, 2, 5, 5, 4242);
	uint64_t t;

	o.claim = FLOW_CLAIM_UNCHECKED;
	u.claim = FLOW_CLAIM_UNVERIFIED;
	stall_observe(x->s, &o, "c", 1 * SEC);
	stall_observe(x->s, &u, "c", 1 * SEC);
	o.tx_msgs = u.tx_msgs = 6;
	for (t = 1 * SEC + 50 * MS; t <= 1 * SEC + 400 * MS; t += 50 * MS) {
		stall_observe(x->s, &o, "c", t);
		stall_observe(x->s, &u, "c", t);
	}
	assert_int_equal(x->nopen, 0);
	o.claim = FLOW_CLAIM_VERIFIED;
	stall_observe(x->s, &o, "c", t);
	stall_observe(x->s, &u, "c", t);
	assert_int_equal(x->nopen, 1);
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
	/* once: later polls of the same stall open nothing more */
	stall_observe(x->s, &o, "c", t + 50 * MS);
	stall_observe(x->s, &u, "c", t + 50 * MS);
	assert_int_equal(x->nopen, 1);
	assert_int_equal(incident_nflows(stall_incident(x->s, 0)), 1);
}

/* The processes that own a port's watched flows are what its host source
 * reads (owner.PID.*), and no other port's. */
static void stall_poll_end__flow_owners__host_source_reads_them(void **state)
{
	struct stallfix *x = *state;
	struct json_object *j, *h;
	struct port *a, *b;
	char name[64];
	int found = 0;

	ports_apply(x->ps, x->c, 0);
	a = ports_find(x->ps, "a");
	b = ports_find(x->ps, "b");
	assert_non_null(a);
	stall_flow(x, "a", 40001, 1, 1 * SEC, 1 * SEC, (int)getpid());
	stall_poll_end(x->s, 1 * SEC);
	port_sample(a, 2 * SEC, 2 * SEC, 1);
	port_sample(b, 2 * SEC, 2 * SEC, 1);
	snprintf(name, sizeof(name), "owner.%d.cpu_ns", (int)getpid());
	j = port_counters_json(a, 0);
	h = json_object_object_get(j, "host");
	assert_non_null(h);
	assert_non_null(json_object_object_get(h, name));
	assert_true(json_object_get_uint64(json_object_object_get(h, name)) > 0);
	json_object_put(j);
	j = port_counters_json(b, 0);
	assert_null(json_object_object_get(json_object_object_get(j, "host"), name));
	json_object_put(j);
	j = port_host_json(a);
	h = json_object_object_get(j, "processes");
	for (size_t i = 0; i < json_object_array_length(h); i++) {
		struct json_object *e = json_object_array_get_idx(h, i);

		found |= json_object_get_int(json_object_object_get(e, "pid")) == (int)getpid() &&
			 !strcmp(json_object_get_string(json_object_object_get(e, "role")), "owner");
	}
	assert_true(found);
	json_object_put(j);
	/* one host source for both ports, read once in a sweep of them: the
	 * second port's read costs it nothing and keeps its own owners */
	ports_sample(x->ps, 3 * SEC, 3 * SEC);
	j = port_status_json(a, 3 * SEC);
	h = json_object_object_get(j, "sources");
	found = 0;
	for (size_t i = 0; i < json_object_array_length(h); i++) {
		struct json_object *e = json_object_array_get_idx(h, i);

		if (!strcmp(json_object_get_string(json_object_object_get(e, "name")), "host"))
			found = json_object_get_int(json_object_object_get(e, "shared_by_ports"));
	}
	assert_int_equal(found, ports_count(x->ps));
	json_object_put(j);
	j = port_counters_json(b, 0);
	assert_null(json_object_object_get(json_object_object_get(j, "host"), name));
	json_object_put(j);
}

/* each test on a detector of conf_text (stallfix.h) */
#define T(f) cmocka_unit_test_prestate_setup_teardown(f, stallfix_setup, stallfix_teardown, \
						      (void *)conf_text)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(stall_observe__both_ends_of_a_pair__one_incident),
		T(stall_observe__port_threshold__overrides_default),
		T(stall_configure__new_port_threshold__applies),
		T(stall_observe__after_window_within_cooldown__suppressed),
		T(stall_observe__reply_comes__incident_ends_released),
		T(stall_observe__release_after_stale_looks__dated_by_the_dump),
		T(stall_observe__release_after_live_looks__dated_by_the_look),
		T(stall_observe__incident_opens__stamped_when_decided),
		T(stall_poll_end__flow_gone_or_timeout__ends_unreleased),
		T(stall_incident_owners__both_ends__both_pids),
		T(stall_observe__progressing_flow__counted_as_sibling),
		T(stall_incident_end__released_flow__not_its_own_sibling),
		T(stall_observe__mass_stall_of_100k__one_incident_linear),
		T(stall_flows_json__mass_stall__bounded_stalled_first_same_order),
		T(stall_observe__engine_flood_of_one_owner__kernel_flow_still_stalls),
		T(stall_observe__unverified_claims__no_incident_shown_marked),
		T(stall_observe__claim_verified_after_stall__incident_then),
		T(stall_poll_end__flow_owners__host_source_reads_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
