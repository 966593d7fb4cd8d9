/* Unit tests: the detector's planned polls (stall_plan, daemon/detect/stall_plan.c).
 *
 * Regular polls every flow_interval were most of the idle daemon's cost
 * (issue #13): 20 wakeups a second for flows that owe nothing. A wait is
 * dated by its source's clocks (liveness.c wait_start), so the detector can
 * poll at a refresh while nothing waits and at each waiting flow's own
 * deadlines. Each test here fails a detector that polls at every interval
 * (its next poll is always t0 + flow_interval), and the dating test fails a
 * detector that passes the interval, not the time since its last poll, as
 * the bound on a wait's start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "coretest.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/ports.h"
#include "daemon/detect/stall.h"
#include "stallfix.h"

/* threshold 200 ms, interval 50 ms: a refresh is 150 ms */
static const char *conf_text =
	"[daemon]\n"
	"flow_interval = 50ms\n"
	"stall_threshold = 200ms\n"
	"incident_window = 5s\n"
	"incident_cooldown = 0s\n"
	"incident_timeout = 30s\n"
	"[port a]\n"
	"stats_file = /nonexistent/a\n"
	"track = none\n";

/* An engine session with its clocks: tx requests sent, rx replies, the
 * last of each at last_tx / last_rx. */
static struct flow_obs sess(uint64_t tx, uint64_t rx, uint64_t last_tx, uint64_t last_rx)
{
	struct flow_obs o = coretest_engine_obs(40001, 1, tx, rx, 0);

	o.last_tx_ns = last_tx;
	o.last_rx_ns = last_rx;
	return o;
}

/* One poll at t0 that sees o (NULL: nothing); the next poll's time. The
 * sessions' source, the engine tables, asks for a poll a refresh from now
 * (src_engine.c fe_src_poll: shared memory wakes no one). */
static uint64_t poll(struct stallfix *x, uint64_t t0, const struct flow_obs *o, const char **why)
{
	stall_poll_begin(x->s, t0);
	if (o)
		stall_observe(x->s, o, "a", t0);
	stall_poll_end(x->s, t0);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), t0 + 150 * MS);
	return stall_plan(x->s, why);
}

/* Nothing waits: the next poll a threshold less a poll later, not after
 * the interval. */
static void stall_plan__nothing_waits__a_refresh_later(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = sess(5, 5, 1 * SEC - 3 * MS, 1 * SEC - 2 * MS);
	const char *why;

	assert_int_equal(poll(x, 1 * SEC, NULL, &why), 1 * SEC + 150 * MS);
	assert_string_equal(why, "refresh");
	/* a session that is answered */
	assert_int_equal(poll(x, 2 * SEC, &o, &why), 2 * SEC + 150 * MS);
	assert_string_equal(why, "refresh");
}

/* Sources that say when they need the next poll (flowsrc.h next_ns) are
 * trusted while nothing waits: one with nothing of its own asks a refresh
 * from now (the engine tables), one the kernel wakes (the socket watch)
 * asks for its discovery a second on, and the detector sleeps until then,
 * not a refresh; one that asks nothing for longer is polled
 * STALL_IDLE_MAX_NS on (a second). Fails the detector that polls at a
 * refresh whatever its sources ask (6.7 polls a second for idle sockets
 * the kernel watches). */
static void stall_plan__sources_asking_later__trusted_up_to_a_second(void **state)
{
	struct stallfix *x = *state;
	struct flowsrcs *fs = stall_flowsrcs(x->s);
	const char *why;

	/* a refresh from now: the engine tables' ask */
	stall_poll_begin(x->s, 1 * SEC);
	stall_poll_end(x->s, 1 * SEC);
	flowsrcs_test_set_next(fs, 1 * SEC + 150 * MS);
	assert_int_equal(stall_plan(x->s, &why), 1 * SEC + 150 * MS);
	assert_string_equal(why, "refresh");
	/* the socket watch's discovery, a second on */
	flowsrcs_test_set_next(fs, 1 * SEC + 1000 * MS);
	assert_int_equal(stall_plan(x->s, &why), 2 * SEC);
	assert_string_equal(why, "a source");
	/* a socket's backstop read, 30 s on: a second at the most */
	flowsrcs_test_set_next(fs, 31 * SEC);
	assert_int_equal(stall_plan(x->s, &why), 2 * SEC);
	assert_string_equal(why, "nothing asked");
	/* a flow waiting: its want comes first, whatever the sources ask */
	{
		uint64_t t0 = 3 * SEC, w = t0 - 10 * MS;
		struct flow_obs waiting = sess(6, 5, w, t0 - 190 * MS);

		stall_poll_begin(x->s, t0);
		stall_observe(x->s, &waiting, "a", t0);
		stall_poll_end(x->s, t0);
		flowsrcs_test_set_next(fs, 34 * SEC);
		assert_int_equal(stall_plan(x->s, &why), w + 150 * MS);
		assert_string_equal(why, "a flow waited half its threshold");
	}
	/* none asks (the engine tables with no table, the tracker's hooks
	 * off), or none is open: a second on */
	flowsrcs_test_set_next(fs, FLOW_SRC_NO_NEXT);
	stall_poll_begin(x->s, 5 * SEC);
	stall_poll_end(x->s, 5 * SEC);
	assert_int_equal(stall_plan(x->s, &why), 6 * SEC);
	assert_string_equal(why, "nothing asked");
}

/* A poll from t0 to t_end, the sources asking nothing for 30 s: the next
 * poll's time, planned as "nothing asked". */
static uint64_t plan_idle(struct stallfix *x, uint64_t t0, uint64_t t_end, const char **why)
{
	uint64_t next;

	stall_poll_begin(x->s, t0);
	stall_poll_end(x->s, t_end);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), t0 + 30 * SEC);
	next = stall_plan(x->s, why);
	assert_string_equal(*why, "nothing asked");
	return next;
}

/* The poll nothing asked for may come at any other wakeup in its sleep's
 * last tenth (the counter sweep's), from flow_interval on after one that
 * came at its end alone, never sooner than the plan's least, and at its
 * end at the latest; every other poll at its own time alone. Fails a
 * detector that arms the idle poll as a plain timer (an idle daemon wakes
 * for it between its sweeps), one that windows a want or a refresh, one
 * whose window after a lone poll keeps to the last tenth (it can miss the
 * sweep's phase at every second), and one whose window opens before the
 * plan's least after a long poll. */
static void stall_plan__nothing_asked__a_window_for_the_sweeps(void **state)
{
	struct stallfix *x = *state;
	struct flowsrcs *fs = stall_flowsrcs(x->s);
	const char *why;
	uint64_t next, e = 0, l = 0;

	next = plan_idle(x, 1 * SEC, 1 * SEC, &why);
	assert_int_equal(next, 2 * SEC);
	/* armed a millisecond after the poll: its last tenth, to a
	 * flow_interval past its time (the sweep due then falls inside, not
	 * in a race with its latest) */
	assert_true(stall_plan_window(x->s, 1 * SEC + 1 * MS, next, why, 0, &e, &l));
	assert_int_equal(l, 999 * MS + 50 * MS);
	assert_int_equal(e, 999 * MS - 999 * MS / 10);
	/* after one that came alone: from flow_interval on; a sweep 10 ms
	 * after that lone poll (before this window opens) is met a second
	 * later, inside it (a latest at its time missed it every second) */
	assert_true(stall_plan_window(x->s, 1 * SEC + 1 * MS, next, why, 1, &e, &l));
	assert_int_equal(e, 50 * MS);
	assert_int_equal(l, 999 * MS + 50 * MS);
	assert_true(1 * SEC + 1 * MS + e > 1 * SEC + 10 * MS && 1 * SEC + 1 * MS + l >= 2 * SEC + 10 * MS);
	/* armed late (the poll's own chunks): open by its time */
	assert_true(stall_plan_window(x->s, next - 10 * MS, next, why, 1, &e, &l));
	assert_int_equal(e, 10 * MS);
	assert_int_equal(l, 60 * MS);
	/* at its time or past it: at once, no window */
	assert_false(stall_plan_window(x->s, next, next, why, 0, &e, &l));
	assert_false(stall_plan_window(x->s, next - 1, next, why, 0, &e, &l));
	/* a poll handled for 300 ms: its window not sooner than half an
	 * interval after its end (a last tenth of 2.7 ms from 24.3 ms on
	 * would open 0.7 ms before it) */
	next = plan_idle(x, 3 * SEC, 3 * SEC + 300 * MS, &why);
	assert_int_equal(next, 4 * SEC);
	assert_true(stall_plan_window(x->s, 3 * SEC + 300 * MS, next, why, 1, &e, &l));
	assert_int_equal(e, 50 * MS);
	assert_int_equal(l, 750 * MS);
	assert_true(stall_plan_window(x->s, 3 * SEC + 300 * MS, 3 * SEC + 327 * MS, why, 0, &e, &l));
	assert_int_equal(e, 25 * MS);
	assert_int_equal(l, 77 * MS);
	/* a refresh asked for: at its time alone */
	stall_poll_begin(x->s, 5 * SEC);
	stall_poll_end(x->s, 5 * SEC);
	flowsrcs_test_set_next(fs, 5 * SEC + 150 * MS);
	next = stall_plan(x->s, &why);
	assert_string_equal(why, "refresh");
	assert_false(stall_plan_window(x->s, 5 * SEC + 1 * MS, next, why, 0, &e, &l));
	assert_false(stall_plan_window(x->s, 5 * SEC + 1 * MS, next, why, 1, &e, &l));
	/* a flow's want: at its time alone */
	{
		uint64_t t0 = 6 * SEC, w = t0 - 10 * MS;
		struct flow_obs waiting = sess(6, 5, w, t0 - 190 * MS);

		stall_poll_begin(x->s, t0);
		stall_observe(x->s, &waiting, "a", t0);
		stall_poll_end(x->s, t0);
		flowsrcs_test_set_next(fs, 40 * SEC);
		next = stall_plan(x->s, &why);
		assert_int_equal(next, w + 150 * MS);
		assert_false(stall_plan_window(x->s, t0 + 1 * MS, next, why, 0, &e, &l));
	}
}

/* A poll while nothing asked rode a sweep whose own work (a sweep of many
 * ports: ethtool's firmware queries) took 150 ms of the wakeup before it:
 * the next such poll is planned a second from the wakeup, and its window
 * holds the next sweep, a second after this one. Fails a detector that
 * counts the second from the poll's own start (2.15 s: its window opens at
 * 2.05 s, the sweep at 2 s falls before it, the poll comes alone at its
 * latest, and then at every other second). What a source asks is still
 * dated by the poll's start, and a wakeup that began so long before the
 * poll that less than an interval would be left is not counted from. */
static void stall_plan__after_a_long_sweep__the_window_holds_the_next(void **state)
{
	struct stallfix *x = *state;
	const char *why;
	uint64_t next, e = 0, l = 0, wake = 1 * SEC, t0 = wake + 150 * MS, armed = t0 + 1 * MS;

	stall_poll_begin(x->s, t0);
	stall_poll_woken(x->s, wake);
	stall_poll_end(x->s, t0);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), t0 + 30 * SEC);
	next = stall_plan(x->s, &why);
	assert_string_equal(why, "nothing asked");
	assert_int_equal(next, wake + 1 * SEC);
	assert_true(stall_plan_window(x->s, armed, next, why, 0, &e, &l));
	assert_true(armed + e <= wake + 1 * SEC);       /* open by the next sweep */
	assert_true(armed + l > wake + 1 * SEC);        /* and still at it */
	/* a source that asks a second after the poll began: then, as it
	 * asked, not as "nothing asked" a second after the wakeup */
	stall_poll_begin(x->s, t0);
	stall_poll_woken(x->s, wake);
	stall_poll_end(x->s, t0);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), t0 + 1 * SEC);
	assert_int_equal(stall_plan(x->s, &why), t0 + 1 * SEC);
	assert_string_equal(why, "a source");
	/* a wakeup that began 980 ms before the poll: a second from the
	 * poll, still nothing asked (not an interval's lone poll) */
	stall_poll_begin(x->s, t0);
	stall_poll_woken(x->s, t0 - 980 * MS);
	stall_poll_end(x->s, t0);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), t0 + 30 * SEC);
	assert_int_equal(stall_plan(x->s, &why), t0 + 1 * SEC);
	assert_string_equal(why, "nothing asked");
	/* a wakeup after the poll began, or none known: from the poll */
	stall_poll_begin(x->s, 3 * SEC);
	stall_poll_woken(x->s, 3 * SEC + 1);
	stall_poll_woken(x->s, 0);
	stall_poll_end(x->s, 3 * SEC);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), 33 * SEC);
	assert_int_equal(stall_plan(x->s, &why), 4 * SEC);
}

/* A wait seen just after it began (a request in flight): the next poll at
 * its want, a threshold less a poll into it, not sooner; the poll then
 * finds it answered (a refresh later again). One that is still waiting
 * then is called at its deadline: a threshold after its start by the
 * engine's clock, to the nanosecond, not at the next regular poll. */
static void stall_plan__waiting_flow__its_want_then_its_deadline(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, w = t0 - 10 * MS, t1, t2;
	struct flow_obs idle = sess(5, 5, t0 - 200 * MS, t0 - 190 * MS);
	struct flow_obs waiting = sess(6, 5, w, t0 - 190 * MS);
	const char *why;

	poll(x, t0 - 150 * MS, &idle, NULL);
	t1 = poll(x, t0, &waiting, &why);
	assert_int_equal(t1, w + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
	t2 = poll(x, t1, &waiting, &why);
	assert_int_equal(t2, w + 200 * MS + 1);
	assert_string_equal(why, "a waiting flow");
	assert_int_equal(x->nopen, 0);
	/* called there: waiting a threshold and a nanosecond */
	poll(x, t2, &waiting, &why);
	assert_int_equal(x->nopen, 1);
}

static void no_emit(const struct flow_obs *o, const char *port, void *arg)
{
	(void)o;
	(void)port;
	(void)arg;
}

/* The first flow of a port to wait half its threshold wants the port's
 * evidence sources (the tracker's hooks, off while nothing waits): the
 * next poll comes at once, so they are on a poll before the stall, not at
 * it. Within FLOW_SRC_WANT_HOLD_NS of that the port is still wanted and
 * its deadline holds; after it, the first want is fresh again. Fails a
 * detector that ignores flowsrcs_want's fresh return (t2 would be the
 * deadline). */
static void stall_plan__first_want_of_a_port__polled_again_at_once(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, w = t0 - 10 * MS, t1, t2, t3, later = 8 * SEC, w2 = later - 10 * MS;
	struct flow_obs idle = sess(5, 5, t0 - 200 * MS, t0 - 190 * MS);
	struct flow_obs waiting = sess(6, 5, w, t0 - 190 * MS);
	struct flow_obs answered = sess(6, 6, w, w + 190 * MS);
	struct flow_obs again = sess(7, 6, w2, w + 190 * MS);
	const char *why;

	/* port a, and its (closed: track = none) sources */
	ports_apply(x->ps, x->c, 0);
	flowsrcs_poll(stall_flowsrcs(x->s), t0 - 200 * MS, no_emit, NULL);
	poll(x, t0 - 150 * MS, &idle, NULL);
	t1 = poll(x, t0, &waiting, &why);
	assert_int_equal(t1, w + 150 * MS);
	t2 = poll(x, t1, &waiting, &why);
	assert_int_equal(t2, t1);
	assert_string_equal(why, "a flow waited half its threshold");
	t3 = poll(x, t2 + 1, &waiting, &why);
	assert_int_equal(t3, w + 200 * MS + 1);
	assert_string_equal(why, "a waiting flow");
	assert_int_equal(x->nopen, 0);
	poll(x, w + 190 * MS, &answered, NULL);
	/* seven seconds on: the port's want has lapsed, the next is fresh */
	poll(x, later, &again, NULL);
	t1 = poll(x, w2 + 150 * MS, &again, &why);
	assert_int_equal(t1, w2 + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
}

/* While a flow is stalled (and its incident open) the detector polls at
 * every interval, to see the release at once; after it, a refresh again. */
static void stall_plan__stalled_flow__every_interval_until_released(void **state)
{
	struct stallfix *x = *state;
	uint64_t t = 1 * SEC, w = t - 10 * MS;
	struct flow_obs idle = sess(5, 5, t - 200 * MS, t - 190 * MS);
	struct flow_obs waiting = sess(6, 5, w, t - 190 * MS);
	struct flow_obs answered;
	const char *why;

	poll(x, t - 150 * MS, &idle, NULL);
	t = poll(x, t, &waiting, NULL);
	t = poll(x, t, &waiting, NULL);
	t = poll(x, t, &waiting, &why);          /* stalled here */
	assert_int_equal(x->nopen, 1);
	for (int i = 0; i < 3; i++) {
		uint64_t n = poll(x, t, &waiting, &why);

		assert_int_equal(n, t + 50 * MS);
		assert_string_equal(why, "a flow is stalled");
		t = n;
	}
	answered = sess(6, 6, w, t - 1 * MS);
	t = poll(x, t, &answered, &why);
	assert_int_equal(x->nend, 1);
	/* the flow is idle again, and no incident is open */
	assert_int_equal(poll(x, t, &answered, &why), t + 150 * MS);
	assert_string_equal(why, "refresh");
}

/* A session whose engine writes no times: its waits are dated at the poll
 * that sees them, so it is polled at every interval. */
static void stall_plan__undated_session__every_interval(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = sess(5, 5, 0, 0);
	const char *why;

	assert_int_equal(poll(x, 1 * SEC, &o, &why), 1 * SEC + 50 * MS);
	assert_string_equal(why, "a flow's waits have no times");
}

/* Bytes held unsent with no send since the last reply: the engine's
 * times say nothing of when the hold began, so the wait is dated at the
 * poll that sees it, and the session is polled for at every interval
 * from then on, even once it is idle again. */
static void stall_plan__hold_without_a_time__every_interval_from_then(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs idle = sess(5, 5, 1 * SEC - 20 * MS, 1 * SEC - 10 * MS);
	struct flow_obs held = idle;
	const char *why;

	held.unsent = 300;
	assert_int_equal(poll(x, 1 * SEC, &idle, &why), 1 * SEC + 150 * MS);
	assert_int_equal(poll(x, 1 * SEC + 150 * MS, &held, &why), 1 * SEC + 200 * MS);
	assert_string_equal(why, "a flow's waits have no times");
	assert_int_equal(poll(x, 1 * SEC + 200 * MS, &idle, &why), 1 * SEC + 250 * MS);
	assert_string_equal(why, "a flow's waits have no times");
}

/* A wait the source dates, but before what the detector believes (a
 * session first seen waiting for long), or after the poll's start (sent
 * while the poll read the table): dated at the poll, and the session
 * keeps the planned polls; only a wait with no time at all marks it. */
static void stall_plan__wait_older_or_newer_than_the_poll__still_planned(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC;
	struct flow_obs old = sess(6, 5, t0 - 500 * MS, t0 - 510 * MS);
	struct flow_obs newer = coretest_engine_obs(40002, 2, 6, 5, 0);
	const char *why;

	newer.last_tx_ns = t0 + 1 * MS;
	newer.last_rx_ns = t0 - 10 * MS;
	stall_poll_begin(x->s, t0);
	stall_observe(x->s, &old, "a", t0);
	stall_observe(x->s, &newer, "a", t0);
	stall_poll_end(x->s, t0);
	assert_int_equal(stall_plan(x->s, &why), t0 + 150 * MS);
	assert_string_not_equal(why, "a flow's waits have no times");
}

/* Requests pipelined, the last reply after the last send: the request
 * still unanswered left before that reply, so its wait is dated by the
 * reply (late, never early), not at the poll. */
static void stall_plan__pipelined_requests__dated_by_the_last_reply(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, t1 = t0 + 150 * MS, r = t0 + 70 * MS;
	struct flow_obs idle = sess(5, 5, t0 - 20 * MS, t0 - 10 * MS);
	struct flow_obs piped = sess(8, 7, t0 + 60 * MS, r);
	const char *why;

	poll(x, t0, &idle, NULL);
	assert_int_equal(poll(x, t1, &piped, &why), r + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
}

/* A UDP flow of the tracker: its frames carry no request boundary, so it
 * is polled for at every interval. */
static void stall_plan__tracker_udp_flow__every_interval(void **state)
{
	struct stallfix *x = *state;
	struct flow_obs o = sess(5, 5, 1 * SEC - 20 * MS, 1 * SEC - 10 * MS);
	const char *why;

	o.src = FLOW_SRC_BPF;
	o.key.proto = 17;
	assert_int_equal(poll(x, 1 * SEC, &o, &why), 1 * SEC + 50 * MS);
	assert_string_equal(why, "a flow's waits have no times");
	o.key.proto = 6;        /* TCP frames: evidence, not waits */
	assert_int_equal(poll(x, 2 * SEC, &o, &why), 2 * SEC + 150 * MS);
}

/* A poll handled for longer than the interval (a storm, in chunks): the
 * next comes half an interval after its end, not at once. */
static void stall_plan__long_poll__half_an_interval_after_its_end(void **state)
{
	struct stallfix *x = *state;
	const char *why;

	stall_poll_begin(x->s, 1 * SEC);
	stall_poll_end(x->s, 1 * SEC + 300 * MS);
	flowsrcs_test_set_next(stall_flowsrcs(x->s), 1 * SEC + 150 * MS);
	assert_int_equal(stall_plan(x->s, &why), 1 * SEC + 325 * MS);
	assert_string_equal(why, "flow_interval");
}

/* A reply and the next request both came between two polls a refresh
 * apart: the new wait is dated by the request's send time, which is after
 * the flow's last sighting, though more than an interval before this
 * poll; its want is planned from there. Bounded by the interval instead,
 * the send time would be refused and the wait dated at this poll, its
 * stall called 110 ms late. */
static void stall_plan__reply_and_request_between_polls__dated_by_the_send(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, t1 = t0 + 150 * MS, w = t0 + 60 * MS;
	struct flow_obs idle = sess(5, 5, t0 - 20 * MS, t0 - 10 * MS);
	struct flow_obs moved = sess(7, 6, w, t0 + 50 * MS);
	const char *why;

	assert_int_equal(poll(x, t0, &idle, NULL), t1);
	assert_int_equal(poll(x, t1, &moved, &why), w + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
	/* and its stall at a threshold from the send */
	assert_int_equal(poll(x, w + 150 * MS, &moved, &why), w + 200 * MS + 1);
	poll(x, w + 200 * MS + 1, &moved, NULL);
	assert_int_equal(x->nopen, 1);
}

/* Caught waiting at one poll (a request in flight), answered, and waiting
 * again at the next, a refresh later: the new wait is dated by its send,
 * not at the poll that sees it, which may be most of a refresh later. */
static void stall_plan__waiting_again_at_the_next_poll__dated_by_the_send(void **state)
{
	struct stallfix *x = *state;
	uint64_t t1 = 1 * SEC, w1 = t1 - 1 * MS, t2, w2 = t1 + 100 * MS;
	struct flow_obs idle = sess(5, 5, t1 - 200 * MS, t1 - 190 * MS);
	struct flow_obs first = sess(6, 5, w1, t1 - 190 * MS);
	struct flow_obs again = sess(7, 6, w2, w2 - 1 * MS);
	const char *why;

	poll(x, t1 - 150 * MS, &idle, NULL);
	t2 = poll(x, t1, &first, NULL);
	assert_int_equal(t2, w1 + 150 * MS);
	assert_int_equal(poll(x, t2, &again, &why), w2 + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
}

/* A session that opened after the last poll, a refresh ago, and whose
 * first request is still unanswered: seen first now, its wait is dated by
 * the send, which is after the last poll, not at this poll. */
static void stall_plan__new_session_waiting_when_first_seen__dated_by_the_send(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, t1 = t0 + 150 * MS, w = t0 + 60 * MS;
	struct flow_obs first = sess(1, 0, w, 0);
	const char *why;

	assert_int_equal(poll(x, t0, NULL, NULL), t1);
	assert_int_equal(poll(x, t1, &first, &why), w + 150 * MS);
	assert_string_equal(why, "a flow waited half its threshold");
}

/* The want's poll never comes sooner than the interval after the last
 * one (a stall's deadline may: the tests before this one). */
static void stall_plan__deadline_inside_the_interval__at_the_interval(void **state)
{
	struct stallfix *x = *state;
	uint64_t t0 = 1 * SEC, t1 = t0 + 150 * MS;
	struct flow_obs idle = sess(5, 5, t0 - 20 * MS, t0 - 10 * MS);
	/* waiting since just after the last poll: its want (at t0 + 151 ms)
	 * is a millisecond after this poll */
	struct flow_obs waiting = sess(6, 5, t0 + 1 * MS, t0 - 10 * MS);
	const char *why;

	poll(x, t0, &idle, NULL);
	assert_int_equal(poll(x, t1, &waiting, &why), t1 + 50 * MS);
	assert_string_equal(why, "flow_interval");
}

/* The deadline tests' session: answered at a poll at 990 ms, then a
 * request sent at 992 ms (*w) with no reply: the waiting observation. */
static struct flow_obs sent_at_992(struct stallfix *x, uint64_t *w)
{
	uint64_t t0 = 1 * SEC;
	struct flow_obs idle = sess(5, 5, t0 - 20 * MS, t0 - 15 * MS);

	*w = t0 - 8 * MS;
	poll(x, t0 - 10 * MS, &idle, NULL);
	return sess(6, 5, *w, t0 - 15 * MS);
}

/* A stall's deadline a few ms after a poll (one that came for another
 * reason: a source's post, another flow): the next poll comes at the
 * deadline, not an interval after the last one, and a tenth of the
 * interval after it at the soonest. */
static void stall_plan__deadline_soon_after_a_poll__at_the_deadline(void **state)
{
	struct stallfix *x = *state;
	uint64_t w, t1;
	struct flow_obs waiting = sent_at_992(x, &w);
	const char *why;

	t1 = poll(x, w + 195 * MS, &waiting, &why);
	assert_int_equal(t1, w + 200 * MS + 1);
	assert_string_equal(why, "a waiting flow");
	assert_int_equal(x->nopen, 0);
	poll(x, t1, &waiting, &why);
	assert_int_equal(x->nopen, 1);
}

/* The same a millisecond before the deadline: a tenth of the interval
 * after that poll. */
static void stall_plan__deadline_just_after_a_poll__a_tenth_of_the_interval(void **state)
{
	struct stallfix *x = *state;
	uint64_t w;
	struct flow_obs waiting = sent_at_992(x, &w);
	const char *why;

	assert_int_equal(poll(x, w + 199 * MS, &waiting, &why), w + 204 * MS);
	assert_string_equal(why, "a waiting flow");
}

/* The same after a poll that took 20 ms (in chunks, a storm): the
 * deadline's poll gives it half an interval's rest, not a tenth. */
static void stall_plan__deadline_after_a_long_poll__half_an_interval_after_it(void **state)
{
	struct stallfix *x = *state;
	uint64_t w, t;
	struct flow_obs waiting = sent_at_992(x, &w);
	const char *why;

	t = w + 195 * MS;
	stall_poll_begin(x->s, t);
	stall_observe(x->s, &waiting, "a", t);
	stall_poll_end(x->s, t + 20 * MS);
	assert_int_equal(stall_plan(x->s, &why), t + 20 * MS + 25 * MS);
}

/* One poll at t0 that sees a and b; the next poll's time. */
static uint64_t poll2(struct stallfix *x, uint64_t t0, const struct flow_obs *a,
		      const struct flow_obs *b, const char **why)
{
	stall_poll_begin(x->s, t0);
	stall_observe(x->s, a, "a", t0);
	stall_observe(x->s, b, "a", t0);
	stall_poll_end(x->s, t0);
	return stall_plan(x->s, why);
}

/* With a flow stalled (polls every interval till it is released),
 * another's deadline 6 ms after a poll still comes at that deadline, not
 * with the interval. */
static void stall_plan__deadline_while_another_is_stalled__at_the_deadline(void **state)
{
	struct stallfix *x = *state;
	uint64_t t = 1 * SEC, w = t - 10 * MS, wb, ts;
	struct flow_obs idle = sess(5, 5, t - 200 * MS, t - 190 * MS);
	struct flow_obs waiting = sess(6, 5, w, t - 190 * MS);
	struct flow_obs b_idle = sess(3, 3, t - 200 * MS, t - 190 * MS), b_waiting;
	const char *why;

	b_idle.key.sport = 40002;
	poll2(x, t - 150 * MS, &idle, &b_idle, NULL);
	t = poll2(x, t, &waiting, &b_idle, NULL);
	t = poll2(x, t, &waiting, &b_idle, NULL);
	ts = t;
	t = poll2(x, ts, &waiting, &b_idle, &why);       /* stalled here */
	assert_int_equal(x->nopen, 1);
	assert_int_equal(t, ts + 50 * MS);
	/* b sent 6 ms (less a nanosecond) after that poll, no reply since;
	 * the poll 200 ms later sees it waiting 194 ms */
	wb = ts + 6 * MS - 1;
	b_waiting = sess(4, 3, wb, ts - 190 * MS);
	b_waiting.key.sport = 40002;
	assert_int_equal(poll2(x, ts + 200 * MS, &waiting, &b_waiting, &why), wb + 200 * MS + 1);
	assert_string_equal(why, "a waiting flow");
}

/* each test on a detector of conf_text (stallfix.h) */
#define T(f) cmocka_unit_test_prestate_setup_teardown(f, stallfix_setup, stallfix_teardown, \
						      (void *)conf_text)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(stall_plan__nothing_waits__a_refresh_later),
		T(stall_plan__sources_asking_later__trusted_up_to_a_second),
		T(stall_plan__nothing_asked__a_window_for_the_sweeps),
		T(stall_plan__after_a_long_sweep__the_window_holds_the_next),
		T(stall_plan__waiting_flow__its_want_then_its_deadline),
		T(stall_plan__deadline_soon_after_a_poll__at_the_deadline),
		T(stall_plan__deadline_just_after_a_poll__a_tenth_of_the_interval),
		T(stall_plan__deadline_while_another_is_stalled__at_the_deadline),
		T(stall_plan__deadline_after_a_long_poll__half_an_interval_after_it),
		T(stall_plan__first_want_of_a_port__polled_again_at_once),
		T(stall_plan__stalled_flow__every_interval_until_released),
		T(stall_plan__undated_session__every_interval),
		T(stall_plan__hold_without_a_time__every_interval_from_then),
		T(stall_plan__wait_older_or_newer_than_the_poll__still_planned),
		T(stall_plan__pipelined_requests__dated_by_the_last_reply),
		T(stall_plan__tracker_udp_flow__every_interval),
		T(stall_plan__long_poll__half_an_interval_after_its_end),
		T(stall_plan__reply_and_request_between_polls__dated_by_the_send),
		T(stall_plan__waiting_again_at_the_next_poll__dated_by_the_send),
		T(stall_plan__new_session_waiting_when_first_seen__dated_by_the_send),
		T(stall_plan__deadline_inside_the_interval__at_the_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
