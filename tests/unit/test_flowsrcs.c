/* Unit tests: flowsrcs (daemon/detect/flowsrcs.c): how often an evidence-only
 * flow must be reported (refresh_ns, collectors/flows/flowsrc.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/liveness.h"

#define MS 1000000ull

static void flowsrcs_refresh_ns__short_threshold__threshold_less_a_poll(void **state)
{
	(void)state;
	assert_int_equal(flowsrcs_refresh_ns(200 * MS, 50 * MS), 150 * MS);
	assert_int_equal(flowsrcs_refresh_ns(50 * MS, 50 * MS), 0);   /* every poll */
	assert_int_equal(flowsrcs_refresh_ns(10 * MS, 50 * MS), 0);
}

/* A source reads a skipped flow at the first poll at least refresh_ns less
 * half a poll after its last read (collectors/flows/src_flowtrack.c ft_src_poll), so
 * up to refresh_ns + poll_ns / 2 apart: that must stay within
 * LIVENESS_GONE_NS, or livetab_expire() forgets the flow between reads. */
static void flowsrcs_refresh_ns__long_threshold__read_before_the_table_forgets(void **state)
{
	static const uint64_t stalls[] = { 2000 * MS, 5000 * MS, 600000 * MS };
	static const uint64_t polls[] = { 5 * MS, 50 * MS, 1000 * MS, 1999 * MS };

	(void)state;
	for (unsigned i = 0; i < sizeof(stalls) / sizeof(stalls[0]); i++)
		for (unsigned j = 0; j < sizeof(polls) / sizeof(polls[0]); j++) {
			uint64_t r = flowsrcs_refresh_ns(stalls[i], polls[j]);

			assert_true(r > 0);
			assert_true(r + polls[j] / 2 < LIVENESS_GONE_NS);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flowsrcs_refresh_ns__short_threshold__threshold_less_a_poll),
		cmocka_unit_test(flowsrcs_refresh_ns__long_threshold__read_before_the_table_forgets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
