/* Unit tests: owners (daemon/detect/owners.h), the per-port processes
 * owning watched flows, kept as flows come, go and change owner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "daemon/detect/owners.h"

static unsigned of(struct owners *ow, const char *port, int *pids)
{
	return owners_of(ow, port, pids, 64);
}

/* Counted per (port, pid): a pid stays while one of its flows does, and
 * each port lists its own, in the order they came. */
static void owners__flows_come_and_go__pid_while_one_flow_stays(void **state)
{
	struct owners *ow = owners_new();
	int pids[64];

	(void)state;
	assert_non_null(ow);
	owners_add(ow, "a", 10);
	owners_add(ow, "a", 10);
	owners_add(ow, "a", 20);
	owners_add(ow, "b", 10);
	owners_add(ow, "a", 0);         /* no owner: ignored */
	owners_add(ow, "a", -1);
	assert_int_equal(of(ow, "a", pids), 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 20);
	assert_int_equal(of(ow, "b", pids), 1);
	assert_int_equal(of(ow, "c", pids), 0);
	owners_del(ow, "a", 10);
	assert_int_equal(of(ow, "a", pids), 2);         /* one flow of 10 left */
	owners_del(ow, "a", 10);
	assert_int_equal(of(ow, "a", pids), 1);
	assert_int_equal(pids[0], 20);
	/* a flow changing owner: taken from one, added to the other */
	owners_del(ow, "a", 20);
	owners_add(ow, "a", 30);
	assert_int_equal(of(ow, "a", pids), 1);
	assert_int_equal(pids[0], 30);
	assert_int_equal(of(ow, "b", pids), 1);
	assert_false(owners_unsure(ow));
	assert_int_equal(owners_of(ow, "a", pids, 0), 0);
	owners_free(ow);
}

/* A flow taken away that was never added, or more (port, pid) pairs than
 * OWNERS_MAX: unsure (the caller walks its flows), and cleared, sure. */
static void owners__miscount_or_full__unsure_until_cleared(void **state)
{
	struct owners *ow = owners_new();
	char port[16];
	int pids[64];

	(void)state;
	owners_add(ow, "a", 10);
	owners_del(ow, "a", 11);
	assert_true(owners_unsure(ow));
	owners_clear(ow);
	assert_false(owners_unsure(ow));
	assert_int_equal(of(ow, "a", pids), 0);
	for (unsigned i = 0; i < OWNERS_MAX; i++) {
		snprintf(port, sizeof(port), "p%u", i % 8);
		owners_add(ow, port, (int)i + 1);
	}
	assert_false(owners_unsure(ow));
	assert_int_equal(owners_of(ow, "p3", pids, 64), 64);    /* at most max */
	assert_int_equal(pids[0], 4);
	owners_add(ow, "p0", 999999);
	assert_true(owners_unsure(ow));
	assert_true(owners_unsure(NULL));
	owners_free(ow);
	owners_free(NULL);
}

/* One (port, pid) whose flow comes and goes again and again keeps one
 * entry: a long-lived engine reconnecting never fills the table. Pairs
 * that all went still count until a clear (the caller then counts its
 * live flows again). */
static void owners__same_pair_churns__one_entry(void **state)
{
	struct owners *ow = owners_new();
	int pids[64];

	(void)state;
	for (unsigned i = 0; i < 10 * OWNERS_MAX; i++) {
		owners_add(ow, "a", 7);
		owners_del(ow, "a", 7);
	}
	assert_false(owners_unsure(ow));
	assert_int_equal(of(ow, "a", pids), 0);
	for (unsigned i = 0; i < OWNERS_MAX + 1; i++) {
		owners_add(ow, "a", (int)i + 100);
		owners_del(ow, "a", (int)i + 100);
	}
	assert_true(owners_unsure(ow));
	owners_clear(ow);
	owners_add(ow, "a", 7);
	assert_false(owners_unsure(ow));
	assert_int_equal(of(ow, "a", pids), 1);
	/* a port name longer than the table keeps: unsure, not cut */
	owners_add(ow, "a-port-name-longer-than-thirty-one-bytes", 7);
	assert_true(owners_unsure(ow));
	owners_free(ow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owners__flows_come_and_go__pid_while_one_flow_stays),
		cmocka_unit_test(owners__miscount_or_full__unsure_until_cleared),
		cmocka_unit_test(owners__same_pair_churns__one_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
