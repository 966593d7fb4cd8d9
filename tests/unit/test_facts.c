/* Unit tests: investigation record -> facts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/forensic/facts.h"
#include "daemon/hostfacts.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "rules/facts.h"

struct fix {
	char *dir;
	struct loop *l;
	struct ports *ps;
	struct conf *c;
};

static void counters(struct fix *x, uint64_t phy, uint64_t vport)
{
	char text[256];

	snprintf(text, sizeof(text), "NIC statistics:\n     rx_packets_phy: %llu\n"
		 "     rx_vport_unicast_packets: %llu\n", (unsigned long long)phy,
		 (unsigned long long)vport);
	coretest_write(x->dir, "a.txt", text);
}

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));
	char text[512];

	x->dir = coretest_tmpdir();
	x->l = loop_new();
	x->ps = ports_new(x->l, "");
	snprintf(text, sizeof(text), "[daemon]\nhorizon = 120s\n[port a]\nstats_file = %s/a.txt\n"
		 "profile = mlx5\n", x->dir);
	x->c = coretest_conf(text);
	ports_apply(x->ps, x->c, 0);
	/* 10 healthy seconds: 100 frames/s at the port and the vport, then
	 * from 9 s the port counts 20 frames the vport never sees */
	for (uint64_t s = 1; s <= 10; s++) {
		counters(x, s * 100 + (s > 8 ? (s - 8) * 20 : 0), s * 100);
		ports_sample(x->ps, s * SEC, s * SEC);
	}
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fix *x = *state;

	ports_free(x->ps);
	conf_free(x->c);
	loop_free(x->l);
	coretest_rmdir(x->dir);
	free(x);
	return 0;
}

static struct json_object *record(struct fix *x)
{
	struct json_object *r = json_object_new_object(), *snap = json_object_new_object();
	struct json_object *pa = json_object_new_object(), *inc = json_object_new_object();
	struct json_object *fl = json_object_new_array(), *f1 = json_object_new_object();
	struct json_object *f2 = json_object_new_object(), *win = json_object_new_object();
	struct json_object *wa = json_object_new_object(), *wd = json_object_new_object();
	struct json_object *wt = json_object_new_object();

	counters(x, 1100, 1000);        /* at the snapshot, 10.5 s */
	port_sample(ports_find(x->ps, "a"), 10 * SEC + 500 * MS, 0, 0);
	jx_add_str(r, IR_PORT, "a");
	jx_add_u64(r, IR_OPENED_MONO, 10 * SEC + 500 * MS);
	json_object_object_add(pa, IR_S_COUNTERS, port_counters_json(ports_find(x->ps, "a"), 1));
	json_object_object_add(snap, "a", pa);
	json_object_object_add(r, IR_SNAPSHOT, snap);
	/* a kernel TCP flow with unsent bytes behind unacknowledged ones, and
	 * an engine flow holding unread bytes */
	jx_add_str(f1, "tuple", "tcp 10.0.0.1:1 -> 10.0.0.2:2");
	jx_add_str(f1, "source", "sock");
	jx_add_u64(f1, "stalled_at_mono_ns", 8 * SEC + 500 * MS);
	jx_add_u64(f1, "unsent", 300);
	jx_add_u64(f1, "inflight", 100);
	jx_add_str(f2, "tuple", "tcp 10.0.0.1:3 -> 10.0.0.2:4");
	jx_add_str(f2, "source", "engine");
	jx_add_u64(f2, "stalled_at_mono_ns", 9 * SEC);
	jx_add_u64(f2, "unread", 64);
	json_object_array_add(fl, f1);
	json_object_array_add(fl, f2);
	json_object_object_add(inc, "flows", fl);
	jx_add_int(inc, "siblings_progressing", 30);
	json_object_object_add(r, IR_INCIDENT, inc);
	jx_add_u64(wt, "rx_packets_phy", 8);
	jx_add_u64(wt, "rx_vport_unicast_packets", 0);
	json_object_object_add(wd, "text", wt);
	json_object_object_add(wa, "deltas", wd);
	json_object_object_add(win, "a", wa);
	jx_add_double(win, "span_s", 0.4);
	json_object_object_add(r, IR_WINDOW, win);
	return r;
}

static void facts_build__recorded_port__stall_baseline_and_window(void **state)
{
	struct fix *x = *state;
	struct json_object *r = record(x), *f = facts_build(x->ps, r);
	struct json_object *pa = jx_get(jx_get(f, FK_PORTS), "a");
	struct json_object *st = jx_get(jx_get(pa, FK_PER_STALL), FK_COUNTERS);
	struct json_object *bl = jx_get(jx_get(pa, FK_PER_BASELINE), FK_COUNTERS);
	struct json_object *wn = jx_get(jx_get(pa, FK_PER_WINDOW), FK_COUNTERS);

	assert_int_equal(jx_u64(f, FK_SCHEMA), FACTS_SCHEMA);
	assert_string_equal(jx_str(f, FK_PORT), "a");
	assert_string_equal(jx_str(pa, FK_P_PROFILE), "mlx5");
	/* the stall began at 8.5 s (the first flow's wait): from the 8 s
	 * sample to the snapshot */
	assert_int_equal(jx_u64(st, "rx_packets_phy"), 1100 - 800);
	assert_int_equal(jx_u64(st, "rx_vport_unicast_packets"), 1000 - 800);
	assert_true(jx_double(jx_get(pa, FK_PER_STALL), FK_SPAN_S, 0) == 2.5);
	/* the healthy minute before it: 1 s .. 8 s, no gap */
	assert_int_equal(jx_u64(bl, "rx_packets_phy"), 700);
	assert_int_equal(jx_u64(bl, "rx_vport_unicast_packets"), 700);
	assert_true(jx_double(jx_get(pa, FK_PER_BASELINE), FK_SPAN_S, 0) == 7.0);
	assert_int_equal(jx_u64(wn, "rx_packets_phy"), 8);
	json_object_put(f);
	json_object_put(r);
}

/* An investigation ended at 4 s on the port (an earlier stall, its lost
 * frames, its actions): the healthy baseline starts there, 4 s .. 8 s,
 * not a minute back (make check-repeat: a run's single lost frame read as
 * within a healthy rate that held the earlier runs' losses). */
static void facts_build__after_an_investigation__baseline_starts_after_it(void **state)
{
	struct fix *x = *state;
	struct json_object *r, *f, *pa;

	port_set_disturbed(ports_find(x->ps, "a"), 4 * SEC);
	r = record(x);
	f = facts_build(x->ps, r);
	pa = jx_get(jx_get(f, FK_PORTS), "a");
	assert_true(jx_double(jx_get(pa, FK_PER_BASELINE), FK_SPAN_S, 0) == 4.0);
	assert_int_equal(jx_u64(jx_get(jx_get(pa, FK_PER_BASELINE), FK_COUNTERS), "rx_packets_phy"),
			 400);
	json_object_put(f);
	json_object_put(r);
	/* one after the stall began does not move it */
	port_set_disturbed(ports_find(x->ps, "a"), 9 * SEC);
	r = record(x);
	f = facts_build(x->ps, r);
	pa = jx_get(jx_get(f, FK_PORTS), "a");
	assert_true(jx_double(jx_get(pa, FK_PER_BASELINE), FK_SPAN_S, 0) == 7.0);
	json_object_put(f);
	json_object_put(r);
}

static void facts_build__flows__held_bytes_without_kernel_inflight(void **state)
{
	struct fix *x = *state;
	struct json_object *r = record(x), *f = facts_build(x->ps, r);
	struct json_object *fl = jx_get(f, FK_FLOWS), *h = jx_get(fl, FK_F_HELD);

	assert_int_equal(jx_u64(fl, FK_F_STALLED), 2);
	assert_int_equal(jx_u64(fl, FK_F_PROGRESSING), 30);
	/* unsent bytes waiting behind unacknowledged ones wait for the
	 * network, not for the engine */
	assert_int_equal(jx_u64(h, FK_H_UNSENT), 0);
	assert_int_equal(jx_u64(h, FK_H_UNREAD), 64);
	assert_int_equal(jx_len(jx_arr(fl, FK_F_LIST)), 2);
	assert_true(jx_double(json_object_array_get_idx(jx_arr(fl, FK_F_LIST), 0),
			      FK_FL_WAITED_MS, 0) == 2000.0);
	json_object_put(f);
	json_object_put(r);
}

/* Both ends of one kernel TCP connection, each watched on its own port,
 * are one stalled flow, not two (fc70e13's "Flows: 2 stalled" for one). */
static void facts_build__both_ends_of_a_connection__one_stalled(void **state)
{
	struct fix *x = *state;
	struct json_object *r = record(x), *f, *e = json_object_new_object();

	jx_add_str(e, "tuple", "tcp 10.0.0.2:2 -> 10.0.0.1:1");
	jx_add_str(e, "source", "sock");
	jx_add_u64(e, "stalled_at_mono_ns", 8 * SEC + 500 * MS);
	json_object_array_add(jx_arr(jx_get(r, IR_INCIDENT), "flows"), e);
	f = facts_build(x->ps, r);
	assert_int_equal(jx_u64(jx_get(f, FK_FLOWS), FK_F_STALLED), 2);
	assert_int_equal(jx_len(jx_arr(jx_get(f, FK_FLOWS), FK_F_LIST)), 3);
	json_object_put(f);
	json_object_put(r);
}

static void facts_build__threads_pings_captures__second_reading_used(void **state)
{
	struct fix *x = *state;
	struct json_object *r = record(x), *th = json_object_new_array(), *pr = json_object_new_object();
	struct json_object *ts = json_object_new_array(), *t = json_object_new_object();
	struct json_object *first = json_object_new_object(), *second = json_object_new_object();
	struct json_object *stack = json_object_new_array(), *pings = json_object_new_array();
	struct json_object *pg = json_object_new_object(), *caps = json_object_new_array();
	struct json_object *cp = json_object_new_object(), *f, *e;

	jx_add_str(first, "state", "R");
	jx_add_str(second, "state", "S");
	jx_add_str(second, "wchan", "futex_wait_queue");
	json_object_array_add(stack, json_object_new_string("futex_wait+0x1"));
	json_object_array_add(stack, json_object_new_string("do_futex+0x2"));
	json_object_object_add(second, "stack", stack);
	json_object_object_add(t, "first", first);
	json_object_object_add(t, "second", second);
	jx_add_int(t, "tid", 43);
	jx_add_double(t, "voluntary_switches_per_s", 900);
	json_object_array_add(ts, t);
	json_object_object_add(pr, "threads", ts);
	jx_add_int(pr, "pid", 42);
	json_object_array_add(th, pr);
	json_object_object_add(r, IR_THREADS, th);
	jx_add_str(pg, "from", "a");
	jx_add_int(pg, "sent", 5);
	jx_add_int(pg, "received", 5);
	json_object_array_add(pings, pg);
	json_object_object_add(r, IR_PINGS, pings);
	jx_add_str(cp, "port", "a");
	jx_add_bool(cp, "promisc_requested", 1);
	jx_add_int(cp, "packets", 0);
	jx_add_bool(cp, "transition", 1);
	json_object_array_add(caps, cp);
	json_object_object_add(r, IR_CAPTURES, caps);
	f = facts_build(x->ps, r);
	e = json_object_array_get_idx(jx_arr(f, FK_THREADS), 0);
	assert_string_equal(jx_str(e, FK_T_STATE), "S");
	assert_string_equal(jx_str(e, FK_T_STACK), "futex_wait+0x1\ndo_futex+0x2\n");
	assert_int_equal(jx_u64(e, FK_T_PID), 42);
	assert_true(jx_double(e, FK_T_VCSW_RATE, 0) == 900);
	assert_int_equal(jx_u64(json_object_array_get_idx(jx_arr(f, FK_PINGS), 0), FK_PG_RECEIVED), 5);
	e = json_object_array_get_idx(jx_arr(f, FK_CAPTURES), 0);
	assert_true(jx_bool(e, FK_C_PROMISC));
	assert_true(jx_bool(e, FK_C_TRANSITION));
	json_object_put(f);
	json_object_put(r);
}

/* The thread watch's account over the wait joins the snapshot's thread by
 * tid; a thread only the watch has (born after the snapshot) is a thread
 * too. The stack is the one it slept in when the watch called it (since,
 * the wait over, it went back to epoll_wait). Seed 001's figures: 29463 voluntary switches, 95% off CPU in 650 ms. */
static void facts_build__thread_watch__share_switches_stack_over_the_wait(void **state)
{
	struct fix *x = *state;
	struct json_object *r = record(x), *f, *e;
	struct json_object *th = json_tokener_parse(
		"[{\"pid\": 42, \"threads\": [{\"tid\": 43, \"comm\": \"w0\","
		"  \"second\": {\"state\": \"R\", \"wchan\": \"0\", \"syscall\": -1}}],"
		" \"watch\": [{\"tid\": 43, \"name\": \"w0\", \"window_ns\": 650000000,"
		"  \"voluntary_switches\": 29463, \"involuntary_switches\": 2,"
		"  \"off_cpu_sleep_ns\": 600000000, \"off_cpu_disk_ns\": 17500000,"
		"  \"off_cpu_preempted_ns\": 1000000, \"verdict\": \"sleeper\","
		"  \"off_for_ns\": 12000, \"called\": true, \"verdict_at_call\": \"asleep\","
		"  \"stack_at_call\": \"schedule+0x23/0xa0\\nschedule_timeout+0x100/0x150\\n"
		"oo_eplock_lock+0xa5/0x170 [onload]\\n__x64_sys_ioctl+0x87/0xc0\","
		"  \"stack_at_sleep\": \"schedule+0x23/0xa0\\ndo_epoll_wait+0x588/0x5e0\"},"
		" {\"tid\": 44, \"name\": \"w1\", \"window_ns\": 650000000,"
		"  \"voluntary_switches\": 10, \"off_cpu_sleep_ns\": 6500000,"
		"  \"verdict\": \"running\"}]}]");

	json_object_object_add(r, IR_THREADS, th);
	f = facts_build(x->ps, r);
	assert_int_equal(jx_len(jx_arr(f, FK_THREADS)), 2);
	e = json_object_array_get_idx(jx_arr(f, FK_THREADS), 0);
	assert_int_equal(jx_u64(e, FK_T_TID), 43);
	assert_string_equal(jx_str(e, FK_T_STATE), "R");        /* the snapshot's */
	assert_true(jx_double(e, FK_T_WAIT_MS, 0) == 650.0);
	assert_true(jx_double(e, FK_T_OFF_CPU_PCT, 0) == 95.0);
	assert_true(jx_double(e, FK_T_OFF_CPU_MS, 0) == 617.5);
	assert_true(jx_double(e, FK_T_PREEMPTED_MS, 0) == 1.0);
	assert_int_equal(jx_u64(e, FK_T_VCSW), 29463);
	assert_int_equal(jx_u64(e, FK_T_IVCSW), 2);
	/* 4 significant digits: a figure a person reads */
	assert_true(jx_double(e, FK_T_VCSW_PER_S, 0) == 45330.0);
	assert_true(fabs(jx_double(e, FK_T_SLEEP_US, 0) - 20.96) < 1e-9);
	assert_string_equal(jx_str(e, FK_T_SLEEP_FUNC), "oo_eplock_lock");
	assert_string_equal(jx_str(e, FK_T_STACK_AT_SLEEP),
			    "schedule+0x23/0xa0\nschedule_timeout+0x100/0x150\n"
			    "oo_eplock_lock+0xa5/0x170 [onload]\n__x64_sys_ioctl+0x87/0xc0");
	assert_true(jx_double(e, FK_T_SLEEP_NOW_MS, -1) == 0.012);
	/* the verdict when the watch called it, not the later one */
	assert_string_equal(jx_str(e, FK_T_WATCH), "asleep");
	assert_true(jx_bool(e, FK_T_CALLED));
	e = json_object_array_get_idx(jx_arr(f, FK_THREADS), 1);
	assert_int_equal(jx_u64(e, FK_T_TID), 44);
	assert_int_equal(jx_u64(e, FK_T_PID), 42);
	assert_string_equal(jx_str(e, FK_T_COMM), "w1");
	assert_true(jx_double(e, FK_T_OFF_CPU_PCT, 0) == 1.0);
	assert_string_equal(jx_str(e, FK_T_WATCH), "running");
	assert_false(jx_bool(e, FK_T_CALLED));
	assert_null(jx_get(e, FK_T_SLEEP_FUNC));
	json_object_put(f);
	json_object_put(r);
}

static void facts_build__hostile_record__no_crash_and_no_port(void **state)
{
	struct fix *x = *state;
	struct json_object *r = json_tokener_parse(
		"{\"port\": 7, \"snapshot\": [1, 2], \"incident\": {\"flows\": \"x\"},"
		" \"threads\": {\"a\": 1}, \"pings\": 3, \"captures\": [null, 5],"
		" \"window\": {\"a\": {\"deltas\": [1]}}}");
	struct json_object *f = facts_build(x->ps, r);

	assert_non_null(f);
	assert_string_equal(jx_str(f, FK_PORT), "");
	assert_int_equal(json_object_object_length(jx_get(f, FK_PORTS)), 0);
	json_object_put(f);
	json_object_put(r);
}

/* Seed 001's dumps 0042 (before), 0044 (during) and 0046 (after) of
 * stack 2 as the evidence records them: onload[] has each value at each
 * time, the counters' rises, the lowest free buffers, the options; a
 * counter an older dump lacks is absent, one that fell has no rise. */
static void facts_build__onload_dumps__values_rises_and_absent(void **state)
{
	struct fix *x = *state;
	struct json_object *r = json_tokener_parse(
		"{\"engines\": {"
		" \"at_stall\": {\"onload\": {\"stacks\": [{\"id\": 2, \"name\": \"srv\", \"pid\": 3933257,"
		"   \"dump\": \"during\", \"start_mono_ns\": 2000000000, \"end_mono_ns\": 2165000000,"
		"   \"counters\": {\"lock_wakes\": 12438, \"tcp_send_ni_lock_contends\": 38,"
		"     \"tcp_send_nonb_pool_empty\": 39, \"pkt_bufs_free\": 392, \"pkt_bufs_alloc\": 1024,"
		"     \"nonb_pool\": 1, \"pkt_wait_spin\": 0, \"stack_lock_buzz\": 9},"
		"   \"opts\": {\"EF_BUZZ_USEC\": 100, \"EF_SPIN_USEC\": 100000},"
		"   \"before\": {\"dump\": \"before\", \"start_mono_ns\": 1000000000,"
		"     \"end_mono_ns\": 1165000000, \"age_ms\": 835.0,"
		"     \"counters\": {\"lock_wakes\": 0, \"tcp_send_ni_lock_contends\": 27,"
		"       \"pkt_bufs_free\": 401, \"nonb_pool\": 1, \"stack_lock_buzz\": 12}, \"opts\": {}}}]}},"
		" \"after\": {\"onload\": {\"stacks\": [{\"id\": 2, \"dump\": \"after\","
		"   \"start_mono_ns\": 3000000000, \"end_mono_ns\": 3165000000,"
		"   \"counters\": {\"lock_wakes\": 28900, \"tcp_send_ni_lock_contends\": 44,"
		"     \"tcp_send_nonb_pool_empty\": 44, \"pkt_bufs_free\": 379, \"nonb_pool\": 0,"
		"     \"stack_lock_buzz\": 10}, \"opts\": {\"EF_BUZZ_USEC\": 100}},"
		"  {\"id\": 5, \"error\": \"exit 1\"}]}}}}");
	struct json_object *f = facts_build(x->ps, r), *ol = jx_arr(f, FK_ONLOAD), *e;

	assert_int_equal(jx_len(ol), 2);
	e = json_object_array_get_idx(ol, 0);
	assert_int_equal(jx_u64(e, FK_O_STACK), 2);
	assert_string_equal(jx_str(e, FK_O_NAME), "srv");
	assert_int_equal(jx_u64(e, FK_O_DUMPS), 3);
	assert_true(jx_double(e, FK_O_SPAN_MS, 0) == 2165);
	assert_true(jx_double(e, FK_O_BEFORE_AGE_MS, 0) == 835);
	assert_int_equal(jx_u64(e, "lock_wakes_before"), 0);
	assert_int_equal(jx_u64(e, "lock_wakes"), 12438);
	assert_int_equal(jx_u64(e, "lock_wakes_after"), 28900);
	assert_int_equal(jx_u64(e, "lock_wakes_rise"), 28900);
	assert_int_equal(jx_u64(e, "tcp_send_ni_lock_contends_rise"), 17);
	/* not in the before dump: its rise is from during */
	assert_null(jx_get(e, "tcp_send_nonb_pool_empty_before"));
	assert_int_equal(jx_u64(e, "tcp_send_nonb_pool_empty_rise"), 5);
	/* fell (counters reset): no rise */
	assert_null(jx_get(e, "stack_lock_buzz_rise"));
	/* in no dump: absent, never 0 */
	assert_null(jx_get(e, "refill_buf_limited"));
	assert_null(jx_get(e, "refill_buf_limited_rise"));
	assert_int_equal(jx_u64(e, FK_O_FREE_MIN), 379);
	assert_null(jx_get(e, "pkt_bufs_free_rise"));
	assert_true(json_object_is_type(jx_get(e, "nonb_pool"), json_type_boolean));
	assert_true(jx_bool(e, "nonb_pool"));
	assert_false(jx_bool(e, "nonb_pool_after"));
	assert_int_equal(jx_u64(e, "ef_buzz_usec"), 100);
	assert_int_equal(jx_u64(e, "ef_spin_usec"), 100000);
	assert_null(jx_get(e, "ef_poll_usec"));
	/* a stack whose dump failed: listed, nothing made up */
	e = json_object_array_get_idx(ol, 1);
	assert_int_equal(jx_u64(e, FK_O_STACK), 5);
	assert_int_equal(jx_u64(e, FK_O_DUMPS), 0);
	assert_null(jx_get(e, "lock_wakes"));
	json_object_put(f);
	json_object_put(r);
}

/* The host source's counters over the stall (4 s) and the window (1 s):
 * shares of the 5 s, the busiest disk with its identity, the producer
 * that waited most; the producer.NAME.psi.* of a cgroup is not a delay. */
static void hostfacts__stall_and_window__figures_named(void **state)
{
	struct json_object *ports = json_tokener_parse(
		"{\"p\": {\"stall\": {\"span_s\": 4, \"counters\": {"
		"\"host.psi.io.some_us\": 3500000, \"host.psi.io.full_us\": 2500000,"
		"\"host.psi.cpu.some_us\": 10000, \"host.psi.memory.some_us\": 0,"
		"\"host.psi.memory.full_us\": 0,"
		"\"host.disk.sda.reads\": 40, \"host.disk.sda.io_ms\": 30,"
		"\"host.disk.loop7.reads\": 800, \"host.disk.loop7.read_ms\": 3900,"
		"\"host.disk.loop7.writes\": 0, \"host.disk.loop7.write_ms\": 0,"
		"\"host.disk.loop7.io_ms\": 3990,"
		"\"producer.reader.blkio_delay_ns\": 3900000000,"
		"\"producer.reader.run_delay_ns\": 1000000,"
		"\"producer.reader.psi.io.full_us\": 99999999999,"
		"\"owner.42.blkio_delay_ns\": 0, \"owner.42.run_delay_ns\": 2000000,"
		"\"rx_packets_phy\": 5}},"
		"\"window\": {\"span_s\": 1, \"counters\": {"
		"\"host.psi.io.some_us\": 1000000, \"host.disk.loop7.reads\": 200,"
		"\"host.disk.loop7.read_ms\": 1000, \"host.disk.loop7.io_ms\": 1000,"
		"\"producer.reader.blkio_delay_ns\": 1000000000}}}}");
	struct json_object *snap = json_tokener_parse(
		"{\"p\": {\"host\": {\"devices\": [{\"name\": \"loop7\", \"transport\": \"loop\","
		"\"model\": \"\", \"firmware\": \"\"}, {\"name\": \"sda\", \"model\": \"X\"}],"
		"\"processes\": [{\"pid\": 42, \"comm\": \"srv\", \"role\": \"owner\"},"
		"{\"pid\": 7, \"comm\": \"dd\", \"producer\": \"reader\", \"devices\": [\"sda\"]}]}}}");
	struct json_object *h = hostfacts_build(ports, snap);

	(void)state;
	assert_non_null(h);
	/* the disk its producer holds open, though another was busier */
	assert_string_equal(json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN),
		"{\"span_s\":5,\"io_some_pct\":90.0,\"io_full_pct\":50.0,\"cpu_some_pct\":0.2,"
		"\"mem_some_pct\":0.0,\"mem_full_pct\":0.0,\"producer\":\"reader\","
		"\"producer_blkio_s\":4.90,\"producer_blkio_pct\":98.0,\"producer_run_delay_s\":0.00,"
		"\"producer_run_delay_pct\":0.0,\"producer_throttled_s\":0.00,"
		"\"producer_throttled_pct\":0.0,\"producer_cpu_pct\":0.0,\"disk\":\"sda\","
		"\"disk_model\":\"X\",\"disk_reads_s\":8.0,\"disk_writes_s\":0.0,\"disk_await_ms\":0.0,"
		"\"disk_util_pct\":0.6}");
	json_object_put(h);
	/* without it: the host's busiest */
	json_object_object_del(json_object_array_get_idx(jx_arr(jx_obj(jx_obj(snap, "p"), "host"),
								"processes"), 1), "devices");
	h = hostfacts_build(ports, snap);
	assert_string_equal(jx_str(h, "disk"), "loop7");
	assert_string_equal(jx_str(h, "disk_transport"), "loop");
	assert_true(jx_double(h, "disk_reads_s", 0) == 200 && jx_double(h, "disk_await_ms", 0) == 4.9 &&
		    jx_double(h, "disk_util_pct", 0) == 99.8);
	json_object_put(h);
	/* no host source: no figures */
	json_object_object_del(jx_obj(jx_obj(ports, "p"), "stall"), "counters");
	assert_null(hostfacts_build(ports, snap));
	json_object_put(ports);
	json_object_put(snap);
}

/* The producer's own application metrics over the stall, by the
 * Prometheus conventions alone: the time counter that grew most (its unit
 * by suffix, the endpoint's scale of 1000 undone: 4 s of disk wait beat 2 s
 * of load), the counters that moved at the healthy rate and not at all in
 * the window. A gauge (no _total), a time counter, a counter absent from
 * the window (unknown) and one that never moved before are not "stopped";
 * another endpoint's series are not its. */
static void hostfacts__app_metrics__wait_and_stopped(void **state)
{
	struct json_object *ports = json_tokener_parse(
		"{\"p\": {\"stall\": {\"span_s\": 4, \"counters\": {"
		"\"host.psi.io.some_us\": 3500000, \"producer.flare.blkio_delay_ns\": 3900000000,"
		"\"app.flare.flare_engram_disk_wait_nanoseconds_total\": 3000000000000,"
		"\"app.flare.flare_load_seconds_total\": 2000,"
		"\"app.flare.flare_prefill_tokens_total\": 900,"
		"\"app.flare.flare_row_cache_misses_total{tier=\\\"ram\\\"}\": 5000,"
		"\"app.flare.flare_queue_depth\": 0, \"app.flare.flare_idle_total\": 0,"
		"\"app.flare.flare_late_total\": 7,"
		"\"app.other.other_requests_total\": 0,"
		"\"app.other.other_wait_seconds_total\": 99000}},"
		"\"window\": {\"span_s\": 1, \"counters\": {"
		"\"host.psi.io.some_us\": 1000000,"
		"\"app.flare.flare_engram_disk_wait_nanoseconds_total\": 1000000000000,"
		"\"app.flare.flare_load_seconds_total\": 0,"
		"\"app.flare.flare_prefill_tokens_total\": 0,"
		"\"app.flare.flare_row_cache_misses_total{tier=\\\"ram\\\"}\": 0,"
		"\"app.flare.flare_queue_depth\": 0, \"app.flare.flare_idle_total\": 0}},"
		"\"baseline\": {\"span_s\": 10, \"counters\": {"
		"\"app.flare.flare_engram_disk_wait_nanoseconds_total\": 100000000,"
		"\"app.flare.flare_load_seconds_total\": 0,"
		"\"app.flare.flare_prefill_tokens_total\": 24000,"
		"\"app.flare.flare_row_cache_misses_total{tier=\\\"ram\\\"}\": 2000,"
		"\"app.flare.flare_queue_depth\": 40, \"app.flare.flare_idle_total\": 0,"
		"\"app.flare.flare_late_total\": 3, \"app.other.other_requests_total\": 500}}}}");
	struct json_object *snap = json_tokener_parse(
		"{\"p\": {\"host\": {\"processes\": [{\"pid\": 7, \"comm\": \"flare\","
		"\"producer\": \"flare\"}]},"
		"\"app_metrics\": [{\"name\": \"other\", \"scale\": 1},"
		"{\"name\": \"flare\", \"scale\": 1000}]}}");
	struct json_object *h = hostfacts_build(ports, snap), *rd;
	const char *why = NULL;

	(void)state;
	assert_non_null(h);
	assert_string_equal(jx_str(h, "app_endpoint"), "flare");
	assert_string_equal(jx_str(h, "app_wait"), "flare_engram_disk_wait_nanoseconds_total");
	assert_true(jx_double(h, "app_wait_s", 0) == 4 && jx_double(h, "app_wait_pct", 0) == 80);
	assert_int_equal((int)jx_u64(h, "app_stopped_n"), 2);
	assert_string_equal(jx_str(h, "app_said"),
		"flare_engram_disk_wait_nanoseconds_total rose 4.00 s in 5.0 s (80.0%); stopped: "
		"flare_prefill_tokens_total (was 2.4/s), flare_row_cache_misses_total{tier=\"ram\"}"
		" (was 0.2/s)");
	/* a peer's copy of it is read back */
	rd = hostfacts_read(h, &why);
	assert_non_null(rd);
	assert_string_equal(jx_str(rd, "app_said"), jx_str(h, "app_said"));
	json_object_put(rd);
	json_object_put(h);
	/* no endpoint of the producer's name, and the port has none: none */
	json_object_object_del(jx_obj(snap, "p"), "app_metrics");
	h = hostfacts_build(ports, snap);
	assert_non_null(h);
	assert_null(jx_get(h, "app_endpoint"));
	assert_null(jx_get(h, "app_said"));
	json_object_put(h);
	json_object_put(ports);
	json_object_put(snap);
}

/* Seed 004's throttled producer: its one late message ended the stall
 * inside the window, so its counter moved there; the window's part inside
 * the stall (held, 0.12 s) saw it still, and the counter is "stopped" by
 * that part. A held part shorter than HELD_MIN_S is not judged: the whole
 * window is, as without one. */
static void hostfacts__app_metrics__stopped_in_the_held_part(void **state)
{
	static const char *const fmt =
		"{\"p\": {\"stall\": {\"span_s\": 4, \"counters\": {"
		"\"host.psi.io.some_us\": 3500000, \"producer.nsengine.blkio_delay_ns\": 3900000000,"
		"\"app.nsengine.ns_round_trips_total\": 1}},"
		"\"window\": {\"span_s\": 0.4, \"counters\": {\"app.nsengine.ns_round_trips_total\": 1}},"
		"\"held\": {\"span_s\": %s, \"counters\": {\"app.nsengine.ns_round_trips_total\": 0}},"
		"\"baseline\": {\"span_s\": 10, \"counters\": {\"app.nsengine.ns_round_trips_total\": 500}}}}";
	static const char *const spans[] = { "0.12", "0.05" };
	struct json_object *snap = json_tokener_parse(
		"{\"p\": {\"host\": {\"processes\": [{\"pid\": 7, \"comm\": \"nsengine\","
		"\"producer\": \"nsengine\"}]}, \"app_metrics\": [{\"name\": \"nsengine\"}]}}");
	char buf[1024];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct json_object *ports, *h;

		snprintf(buf, sizeof(buf), fmt, spans[k]);
		ports = json_tokener_parse(buf);
		assert_non_null(ports);
		h = hostfacts_build(ports, snap);
		assert_non_null(h);
		assert_string_equal(jx_str(h, "app_endpoint"), "nsengine");
		if (k == 0) {
			assert_int_equal((int)jx_u64(h, "app_stopped_n"), 1);
			assert_string_equal(jx_str(h, "app_said"),
					    "stopped: ns_round_trips_total (was 50/s)");
		} else {
			assert_int_equal((int)jx_u64(h, "app_stopped_n"), 0);
			assert_null(jx_get(h, "app_said"));
		}
		json_object_put(h);
		json_object_put(ports);
	}
	json_object_put(snap);
}

/* ranks[] as the verdicts name them: answered first, the most starved
 * (the largest of block I/O, run-queue, throttled and memory-full shares)
 * first, this host first on a tie, then by name. */
static void hostfacts_order__most_starved_first(void **state)
{
	struct json_object *r = json_tokener_parse(
		"[{\"name\": \"me\", \"self\": true, \"answered\": true, \"producer_blkio_pct\": 1},"
		"{\"name\": \"silent\", \"self\": false, \"answered\": false},"
		"{\"name\": \"b\", \"self\": false, \"answered\": true, \"producer_blkio_pct\": 41},"
		"{\"name\": \"a\", \"self\": false, \"answered\": true, \"producer_blkio_pct\": 1},"
		"{\"name\": \"cpu\", \"self\": false, \"answered\": true,"
		" \"producer_run_delay_pct\": 20, \"producer_throttled_pct\": 80},"
		"{\"name\": \"mem\", \"self\": false, \"answered\": true, \"mem_full_pct\": 60}]");
	char names[128] = "";

	(void)state;
	hostfacts_order(r);
	for (size_t i = 0; i < jx_len(r); i++) {
		strcat(names, jx_str(json_object_array_get_idx(r, i), "name"));
		strcat(names, " ");
	}
	assert_string_equal(names, "cpu mem b me a silent ");
	json_object_put(r);
}

/* A peer's "resources": known figures kept, unknown keys left out, a
 * bad value refuses the whole summary with why. */
static void hostfacts_read__hostile__refused_with_why(void **state)
{
	static const char *const bad[] = {
		"[1]", "{\"io_full_pct\": -1}", "{\"io_full_pct\": \"63\"}",
		"{\"io_full_pct\": 1e300}", "{\"disk\": 5}", "{\"disk\": \"a\\nb\"}",
		"{\"producer\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	};
	struct json_object *in = json_tokener_parse("{\"io_full_pct\": 63, \"disk\": \"nvme0n1\","
						    " \"what\": \"x\"}"), *o;
	const char *why = NULL;

	(void)state;
	o = hostfacts_read(in, &why);
	assert_non_null(o);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"io_full_pct\":63,\"disk\":\"nvme0n1\"}");
	json_object_put(o);
	json_object_put(in);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in = json_tokener_parse(bad[i]);
		why = NULL;
		assert_non_null(in);
		assert_null(hostfacts_read(in, &why));
		assert_non_null(why);
		json_object_put(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(facts_build__recorded_port__stall_baseline_and_window, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__after_an_investigation__baseline_starts_after_it, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__flows__held_bytes_without_kernel_inflight, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__both_ends_of_a_connection__one_stalled, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__threads_pings_captures__second_reading_used, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__thread_watch__share_switches_stack_over_the_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__hostile_record__no_crash_and_no_port, setup, teardown),
		cmocka_unit_test_setup_teardown(facts_build__onload_dumps__values_rises_and_absent, setup, teardown),
		cmocka_unit_test(hostfacts__stall_and_window__figures_named),
		cmocka_unit_test(hostfacts__app_metrics__wait_and_stopped),
		cmocka_unit_test(hostfacts__app_metrics__stopped_in_the_held_part),
		cmocka_unit_test(hostfacts_order__most_starved_first),
		cmocka_unit_test(hostfacts_read__hostile__refused_with_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
