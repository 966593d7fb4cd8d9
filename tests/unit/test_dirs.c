/* Unit tests: the work files a killed daemon left (daemon/dirs.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/dirs.h"
#include "coretest.h"

static int exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/work/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* Captures (observe.c) and Onload stack dumps (evid_flows.c) both go;
 * what an investigation did not write stays. */
static void dirs_clean_work__captures_and_stack_dumps__removed_others_kept(void **state)
{
	char *dir = coretest_tmpdir(), work[512];

	(void)state;
	snprintf(work, sizeof(work), "%s/work", dir);
	assert_int_equal(mkdir(work, 0750), 0);
	coretest_write(work, "inv1-a-plain.pcap", "x");
	coretest_write(work, "inv3-onload-stack7-at_stall.txt", "lots");
	coretest_write(work, "inv3-onload-stack7-after.txt", "lots");
	coretest_write(work, "notes.txt", "mine");
	coretest_write(work, "inv2-report.txt", "not an investigation's");
	assert_int_equal(dirs_clean_work(dir), 3);
	assert_false(exists(dir, "inv1-a-plain.pcap"));
	assert_false(exists(dir, "inv3-onload-stack7-at_stall.txt"));
	assert_false(exists(dir, "inv3-onload-stack7-after.txt"));
	assert_true(exists(dir, "notes.txt"));
	assert_true(exists(dir, "inv2-report.txt"));
	coretest_rmdir(dir);
}

static void dirs_clean_work__no_work_dir__nothing(void **state)
{
	char *dir = coretest_tmpdir();

	(void)state;
	assert_int_equal(dirs_clean_work(dir), 0);
	coretest_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dirs_clean_work__captures_and_stack_dumps__removed_others_kept),
		cmocka_unit_test(dirs_clean_work__no_work_dir__nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
