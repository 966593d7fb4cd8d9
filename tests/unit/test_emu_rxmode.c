/* Unit tests: the emulated port's model of the mlx5 receive-filter update
 * (tests/emu/rxmode.c): deferred work, coalescing, count versus flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/emu/rxmode.h"

#define MS 1000000ull

/* a deferred model, 5 ms, that has seen the port open non-promiscuous */
static void opened(struct rxm *m, uint32_t count, int flag)
{
	rxm_init(m, 1, 5 * MS);
	assert_int_equal(rxm_link(m, count, flag, 0), 0);
	assert_int_equal(m->applied, count > 0 || flag);
	assert_int_equal(m->pending, 0);
}

/* `ip link set promisc on; ip link set promisc off` inside the delay: one
 * work, which reads "off" = applied: no transition */
static void test_zero_dwell_toggle(void **state)
{
	struct rxm m;
	struct rxm_run r;

	(void)state;
	opened(&m, 0, 0);
	assert_int_equal(rxm_link(&m, 1, 1, 1 * MS), 0);
	assert_int_equal(m.pending, 1);
	assert_int_equal(rxm_link(&m, 0, 0, 1 * MS + 100000), 0);	/* 0.1 ms later */
	assert_int_equal(m.crossings, 2);
	assert_int_equal(m.queued, 1);
	assert_int_equal(m.coalesced, 1);
	assert_false(rxm_due(&m, 5 * MS));
	assert_true(rxm_due(&m, 6 * MS));
	assert_int_equal(rxm_run(&m, 0, 0, 6 * MS, &r), 0);
	assert_int_equal(r.reading, 0);
	assert_int_equal(r.applied_before, 0);
	assert_int_equal(r.coalesced, 1);
	assert_int_equal(m.runs, 1);
	assert_int_equal(m.transitions, 0);
	assert_int_equal(rxm_run(&m, 0, 0, 7 * MS, NULL), -1);	/* nothing queued */
}

/* the same toggle with a dwell longer than the delay: two transitions */
static void test_toggle_with_dwell(void **state)
{
	struct rxm m;

	(void)state;
	opened(&m, 0, 0);
	rxm_link(&m, 1, 1, 1 * MS);
	assert_int_equal(rxm_run(&m, 1, 1, 6 * MS, NULL), 1);
	assert_int_equal(m.applied, 1);
	rxm_link(&m, 0, 0, 20 * MS);
	assert_int_equal(m.queued, 2);
	assert_int_equal(rxm_run(&m, 0, 0, 25 * MS, NULL), 1);
	assert_int_equal(m.applied, 0);
	assert_int_equal(m.transitions, 2);
}

/* the work reads the state when it runs, not the message that queued it */
static void test_reads_at_run_time(void **state)
{
	struct rxm m;
	struct rxm_run r;

	(void)state;
	opened(&m, 0, 0);
	rxm_link(&m, 1, 1, 0);			/* queued by "on" */
	assert_int_equal(rxm_run(&m, 0, 0, 5 * MS, &r), 0);	/* "off" by then */
	assert_int_equal(m.last[0].reading, 0);
	assert_int_equal(m.dev_promisc, 0);
}

/* a port already promiscuous (flag on, count 1): tcpdump makes it 2, no
 * crossing, no change; off-then-on with a dwell: two transitions */
static void test_already_promiscuous(void **state)
{
	struct rxm m;

	(void)state;
	opened(&m, 1, 1);
	rxm_link(&m, 2, 1, 1 * MS);		/* tcpdump starts */
	assert_int_equal(m.crossings, 0);
	assert_int_equal(rxm_run(&m, 2, 1, 6 * MS, NULL), 0);
	rxm_link(&m, 1, 1, 10 * MS);		/* tcpdump stops */
	assert_int_equal(rxm_run(&m, 1, 1, 15 * MS, NULL), 0);
	rxm_link(&m, 0, 0, 20 * MS);		/* promisc off */
	assert_int_equal(rxm_run(&m, 0, 0, 25 * MS, NULL), 1);
	rxm_link(&m, 1, 1, 100 * MS);		/* promisc on */
	assert_int_equal(rxm_run(&m, 1, 1, 105 * MS, NULL), 1);
	assert_int_equal(m.transitions, 2);
	assert_int_equal(m.crossings, 2);
}

/* a packet socket holds the port (count 1, flag clear): the user flag's
 * on/off is 1 -> 2 -> 1, never a crossing */
static void test_held_by_packet_socket(void **state)
{
	struct rxm m;

	(void)state;
	opened(&m, 1, 0);
	assert_int_equal(m.applied, 1);
	rxm_link(&m, 2, 1, 1 * MS);
	assert_int_equal(rxm_run(&m, 2, 1, 6 * MS, NULL), 0);
	rxm_link(&m, 1, 0, 50 * MS);
	assert_int_equal(rxm_run(&m, 1, 0, 55 * MS, NULL), 0);
	assert_int_equal(m.crossings, 0);
	assert_int_equal(m.transitions, 0);
	rxm_link(&m, 0, 0, 60 * MS);		/* the holder goes: a crossing */
	assert_int_equal(rxm_run(&m, 0, 0, 65 * MS, NULL), 1);
}

/* delay 0: due at once */
static void test_zero_delay(void **state)
{
	struct rxm m;

	(void)state;
	rxm_init(&m, 1, 0);
	rxm_link(&m, 0, 0, 0);
	rxm_link(&m, 1, 1, 10 * MS);
	assert_true(rxm_due(&m, 10 * MS));
	assert_int_equal(rxm_run(&m, 1, 1, 10 * MS, NULL), 1);
}

/* the former model: every crossing seen in the messages is a transition,
 * so a zero-dwell toggle releases (which the driver never does) */
static void test_instant_model(void **state)
{
	struct rxm m;

	(void)state;
	rxm_init(&m, 0, 0);
	assert_int_equal(rxm_link(&m, 0, 0, 0), 0);
	assert_int_equal(rxm_link(&m, 1, 1, 1 * MS), 1);
	assert_int_equal(rxm_link(&m, 0, 0, 1 * MS + 100000), 1);
	assert_int_equal(rxm_link(&m, 1, 0, 2 * MS), 1);	/* tcpdump */
	assert_int_equal(rxm_link(&m, 2, 1, 3 * MS), 0);	/* no crossing */
	assert_int_equal(m.transitions, 3);
	assert_int_equal(m.pending, 0);
	assert_int_equal(m.runs, 0);
}

/* switching models drops a pending work without a transition */
static void test_set_mode(void **state)
{
	struct rxm m;

	(void)state;
	opened(&m, 0, 0);
	rxm_link(&m, 1, 1, 1 * MS);
	rxm_set_mode(&m, 0, 0);
	assert_int_equal(m.pending, 0);
	assert_int_equal(m.applied, 1);
	assert_int_equal(m.transitions, 0);
	rxm_set_mode(&m, 1, 2 * MS);
	rxm_link(&m, 0, 0, 10 * MS);
	assert_true(rxm_due(&m, 12 * MS));
	assert_int_equal(rxm_run(&m, 0, 0, 12 * MS, NULL), 1);
}

/* the ring of runs keeps the newest RXM_RUNS */
static void test_run_ring(void **state)
{
	struct rxm m;

	(void)state;
	opened(&m, 0, 0);
	for (unsigned i = 0; i < RXM_RUNS + 3; i++) {
		rxm_link(&m, i % 2, i % 2, i * 10 * MS);
		rxm_run(&m, i % 2, i % 2, i * 10 * MS + 5 * MS, NULL);
	}
	assert_int_equal(m.runs, RXM_RUNS + 3);
	assert_int_equal(m.last[(RXM_RUNS + 2) % RXM_RUNS].at_ns,
			 (RXM_RUNS + 2) * 10 * MS + 5 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_dwell_toggle),
		cmocka_unit_test(test_toggle_with_dwell),
		cmocka_unit_test(test_reads_at_run_time),
		cmocka_unit_test(test_already_promiscuous),
		cmocka_unit_test(test_held_by_packet_socket),
		cmocka_unit_test(test_zero_delay),
		cmocka_unit_test(test_instant_model),
		cmocka_unit_test(test_set_mode),
		cmocka_unit_test(test_run_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
