/* Unit tests: threadpass, engine threads as the stall detector's input,
 * with the thread watch loaded for real (root, kernel BTF; skipped with
 * the reason otherwise). The detector is fed an Onload-like flow whose
 * source dates its wait late (its own poll, 400 ms into the send, as the
 * 1 s onload_interval does) while a real child's thread sleeps in
 * futex_wait, woken thousands of times a second: with the watch the stall
 * is called within a poll of the threshold from the send's start; without
 * it, a threshold after the source's date. A healthy epoll server's idle
 * flow is never called. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collectors/flows/flow_live.h"
#include "collectors/threads/threadwatch_api.h"
#include "coretest.h"
#include "daemon/detect/incident.h"
#include "lib/loop.h"
#include "stallfix.h"
#include "twchild.h"

#define CONF(tw)                                                             \
	"[daemon]\n"                                                         \
	"stall_threshold = 500ms\n"                                          \
	"flow_interval = 50ms\n"                                             \
	"thread_watch = " tw "\n"                                            \
	"[port a]\n"                                                         \
	"stats_file = /nonexistent/a\n"                                      \
	"track = none\n"

static const char *conf_on = CONF("on"), *conf_off = CONF("off");
/* the watch never calls the sender (98% asleep is under 100%): the
 * flows open the incident */
static const char *conf_nocall = CONF("on\nthread_sleep_share = 100");

static int watch_on(struct stallfix *x)
{
	struct json_object *o = stall_engines_json(x->s), *tw = NULL;
	int on = json_object_object_get_ex(o, "thread_watch", &tw) &&
		 json_object_get_boolean(json_object_object_get(tw, "on"));

	if (!on)
		print_message("skipped: thread watch off: %s\n",
			      json_object_get_string(json_object_object_get(tw, "why_off")));
	json_object_put(o);
	return on;
}

static struct flow_obs onload_obs(int32_t pid)
{
	struct flow_obs o = coretest_engine_obs(40000, 1, 10, 10, pid);

	o.src = FLOW_SRC_ONLOAD;
	o.live = FLOW_LIVE_PROGRESS + 1;
	return o;
}

static void poll_once(struct stallfix *x, const struct flow_obs *o, uint64_t t)
{
	stall_poll_begin(x->s, t);
	stall_observe(x->s, o, "a", t);
	stall_poll_end(x->s, t);
}

/* Run the starved sender against a flow its source sees waiting only
 * 400 ms into the send; returns when the incident opened after the send's
 * start (ms), or 0 when none did within 1.2 s. */
static int called_ok;   /* the evidence marks the sender as the called thread */

static uint64_t run_seed001(struct stallfix *x)
{
	int go, tidr;
	pid_t pid = start_starved(&go, &tidr, 1300);
	struct flow_obs o = onload_obs(pid);
	uint64_t t0, t, opened = 0;
	int32_t tid;

	assert_int_equal(read(tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	/* healthy polls first, the sender busy-polling: a threshold and more */
	for (int i = 0; i < 13; i++) {
		poll_once(x, &o, loop_mono_ns());
		sleep_ms(50);
	}
	assert_int_equal(write(go, "g", 1), 1);
	t0 = loop_mono_ns();
	do {
		sleep_ms(50);
		t = loop_mono_ns();
		if (t - t0 >= 400 * MS && o.live != FLOW_LIVE_WAITING + 1) {
			o.live = FLOW_LIVE_WAITING + 1;
			o.live_since_ns = t;
		}
		poll_once(x, &o, t);
		if (x->nopen && !opened)
			opened = (t - t0) / MS;
	} while (!opened && t - t0 < 1200 * MS);
	if (opened) {
		struct json_object *ev = stall_thread_evidence(x->s, pid);

		called_ok = 0;
		if (ev) {
			print_message("evidence: %s\n",
				      json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PRETTY));
			for (size_t i = 0; i < json_object_array_length(ev); i++) {
				struct json_object *e = json_object_array_get_idx(ev, i), *v;

				if (json_object_get_int(json_object_object_get(e, "tid")) != tid)
					continue;
				v = json_object_object_get(e, "verdict_at_call");
				called_ok = json_object_get_boolean(json_object_object_get(e, "called")) &&
					    v && (!strcmp(json_object_get_string(v), "asleep") ||
						  !strcmp(json_object_get_string(v), "one-sleep")) &&
					    json_object_get_double(json_object_object_get(
						    e, "off_cpu_share_at_call")) >= 0.5;
			}
			json_object_put(ev);
		}
	}
	stop_child(pid);
	close(go);
	close(tidr);
	return opened;
}

static void seed001_sender__watch_on__called_within_a_poll_of_threshold(void **st)
{
	struct stallfix *x = *st;
	uint64_t ms;
	struct json_object *ev;

	if (!watch_on(x))
		skip();
	ms = run_seed001(x);
	print_message("incident opened %llu ms after the send's start\n", (unsigned long long)ms);
	assert_int_equal(x->nopen, 1);
	/* threshold 500 ms + one poll (50 ms) + the read's slack */
	assert_true(ms > 0 && ms <= 620);
	/* the thread it was called on, as judged then (the facts' thread.called) */
	assert_true(called_ok);
	(void)ev;
}

static void seed001_sender__watch_off__called_a_threshold_after_the_source(void **st)
{
	struct stallfix *x = *st;
	uint64_t ms;

	ms = run_seed001(x);
	print_message("without the watch: incident opened %llu ms after the send's start\n",
		      (unsigned long long)ms);
	/* what is lost: 400 ms (the source's lateness) + the threshold */
	assert_true(ms == 0 || ms >= 880);
}

/* The sender's flow, healthy for 13 polls while it busy-polls, then the
 * send begins (go) and its source dates the flow's wait from then: *t0. */
static void warm_then_send(struct stallfix *x, struct flow_obs *o, int go, uint64_t *t0)
{
	for (int i = 0; i < 13; i++) {
		poll_once(x, o, loop_mono_ns());
		sleep_ms(50);
	}
	assert_int_equal(write(go, "g", 1), 1);
	*t0 = loop_mono_ns();
	o->live = FLOW_LIVE_WAITING + 1;
	o->live_since_ns = *t0;
}

/* The flows open the incident, the watch calls nothing: the evidence is
 * still the sender's over the flows' whole wait (from the send's start,
 * which its source dated, past the opening), not a threshold's span. */
static void seed001_flows_first__evidence_over_the_flows_wait(void **st)
{
	struct stallfix *x = *st;
	int go, tidr, found = 0;
	pid_t pid;
	struct flow_obs o;
	uint64_t t0, t;
	int32_t tid;
	struct json_object *ev;

	if (!watch_on(x))
		skip();
	pid = start_starved(&go, &tidr, 1500);
	o = onload_obs(pid);
	assert_int_equal(read(tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	warm_then_send(x, &o, go, &t0);
	do {
		sleep_ms(50);
		t = loop_mono_ns();
		poll_once(x, &o, t);
	} while (t - t0 < 1000 * MS);
	assert_int_equal(x->nopen, 1);
	ev = stall_thread_evidence(x->s, pid);
	assert_non_null(ev);
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		uint64_t win = (uint64_t)json_object_get_int64(json_object_object_get(e, "window_ns"));

		if (json_object_get_int(json_object_object_get(e, "tid")) != tid)
			continue;
		found = 1;
		print_message("flows first: window %.0f ms, share %.3f, %lld voluntary switches, "
			      "called %d\n", win / 1e6,
			      json_object_get_double(json_object_object_get(e, "off_cpu_share")),
			      (long long)json_object_get_int64(json_object_object_get(e,
				      "voluntary_switches")),
			      json_object_get_boolean(json_object_object_get(e, "called")));
		assert_false(json_object_get_boolean(json_object_object_get(e, "called")));
		/* the whole wait, not the 500 ms threshold's span */
		assert_true(win >= 900 * MS);
		/* mostly asleep over it, as thread_sleep_share (50%) reads it:
		 * 0.93 here alone; a clean clone's ASan run beside the other
		 * unit tests saw under 0.7 once, the window's base sample being
		 * as old as a poll that a loaded machine stretched, and the
		 * sender's busy-polling before the send in it */
		assert_true(json_object_get_double(json_object_object_get(e, "off_cpu_share")) >= 0.5);
	}
	assert_true(found);
	json_object_put(ev);
	stop_child(pid);
	close(go);
	close(tidr);
}


/* Read after the wait ended, the thread runs again (its send returned,
 * it busy-polls): the evidence's verdict is the one over the wait, with
 * the share it goes with, not the last threshold's "running" (a clean
 * clone's seed-001 run at a 100 ms threshold lost engine-blocked so: the
 * share over the wait 0.9, the verdict beside it "running"). */
static void seed001_read_after_the_wait__verdict_over_the_wait(void **st)
{
	struct stallfix *x = *st;
	int go, tidr, found = 0;
	pid_t pid;
	struct flow_obs o;
	uint64_t t0, t;
	int32_t tid;
	struct json_object *ev;

	if (!watch_on(x))
		skip();
	pid = start_starved_then_spin(&go, &tidr, 800);
	o = onload_obs(pid);
	assert_int_equal(read(tidr, &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	warm_then_send(x, &o, go, &t0);
	do {
		sleep_ms(50);
		t = loop_mono_ns();
		/* the send returned, once the flows opened the incident (a
		 * poll that a loaded machine stretched past 850 ms would
		 * otherwise see progress before the threshold) */
		if (t - t0 >= 850 * MS && x->nopen && o.live == FLOW_LIVE_WAITING + 1) {
			o.live = FLOW_LIVE_PROGRESS + 1;
			o.rx_msgs++;
			o.tx_msgs++;
		}
		poll_once(x, &o, t);
	} while (t - t0 < 1600 * MS);   /* more than a threshold after it */
	assert_int_equal(x->nopen, 1);
	ev = stall_thread_evidence(x->s, pid);
	assert_non_null(ev);
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		const char *v = json_object_get_string(json_object_object_get(e, "verdict"));
		const char *now = json_object_get_string(json_object_object_get(e, "verdict_now"));
		double share = json_object_get_double(json_object_object_get(e, "off_cpu_share"));
		const char *st_wait, *st_now;

		if (json_object_get_int(json_object_object_get(e, "tid")) != tid)
			continue;
		found = 1;
		print_message("read after the wait: verdict %s (now %s), share %.3f, window %.0f ms\n",
			      v ? v : "-", now ? now : "-", share,
			      json_object_get_int64(json_object_object_get(e, "window_ns")) / 1e6);
		assert_true(share >= 0.5);
		assert_non_null(v);
		assert_true(!strcmp(v, "asleep") || !strcmp(v, "one-sleep"));
		assert_non_null(now);
		assert_string_equal(now, "running");
		/* where it slept in the wait, not where it slept since */
		st_wait = json_object_get_string(json_object_object_get(e, "stack_at_sleep"));
		st_now = json_object_get_string(json_object_object_get(e, "stack_now"));
		print_message("stack at sleep in the wait:\n%s\nnow:\n%s\n",
			      st_wait ? st_wait : "-", st_now ? st_now : "-");
		assert_non_null(st_wait);
		assert_non_null(strstr(st_wait, "futex"));
		assert_non_null(st_now);
		assert_non_null(strstr(st_now, "nanosleep"));
	}
	assert_true(found);
	json_object_put(ev);
	stop_child(pid);
	close(go);
	close(tidr);
}

static void epoll_server__idle_flow__no_incident(void **st)
{
	struct stallfix *x = *st;
	int rq;
	pid_t tid, pid;
	struct flow_obs o;
	uint64_t t0, t;

	if (!watch_on(x))
		skip();
	pid = start_epoll_server(&rq, &tid);
	o = onload_obs(pid);
	o.live = FLOW_LIVE_IDLE + 1;
	t0 = loop_mono_ns();
	do {
		assert_int_equal(write(rq, "r", 1), 1);
		sleep_ms(50);
		t = loop_mono_ns();
		/* a request in flight now and then, answered at once */
		o.live = (t / (50 * MS)) % 4 ? FLOW_LIVE_IDLE + 1 : FLOW_LIVE_PROGRESS + 1;
		poll_once(x, &o, t);
	} while (t - t0 < 1500 * MS);
	assert_int_equal(x->nopen, 0);
	stop_child(pid);
	close(rq);
}

#define T(f, c) cmocka_unit_test_prestate_setup_teardown(f, stallfix_setup, stallfix_teardown, \
							  (void *)(c))

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(seed001_sender__watch_on__called_within_a_poll_of_threshold, conf_on),
		T(seed001_sender__watch_off__called_a_threshold_after_the_source, conf_off),
		T(epoll_server__idle_flow__no_incident, conf_on),
		T(seed001_flows_first__evidence_over_the_flows_wait, conf_nocall),
		T(seed001_read_after_the_wait__verdict_over_the_wait, conf_nocall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
