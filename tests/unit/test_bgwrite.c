/* Unit tests: lib/bgwrite, the runs' certificate writer. Files are written
 * in the order given, whole, with a sha256sum(1) line that sha256sum -c
 * accepts; a removal removes; what is queued is written before bgw_free
 * returns; a name too long and a directory that could not be opened are
 * said, never a crash or a file elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/bgwrite.h"

static char dir[64];

static int setup(void **st)
{
	(void)st;
	strcpy(dir, "/tmp/test_bgwrite.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
	char cmd[128];

	(void)st;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *name)
{
	char path[256], *buf = calloc(1, 65536);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, 65535, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void queued__in_order_whole_with_sum(void **st)
{
	struct bgwrite *w = bgw_new(open(dir, O_RDONLY | O_DIRECTORY), dir);
	struct json_object *o = json_object_new_object();
	char cmd[256], *s;

	(void)st;
	assert_non_null(w);
	/* the same name three times, then removed, then written again: the
	 * last one given is what is left */
	for (int i = 0; i < 3; i++) {
		char *d = malloc(16);

		snprintf(d, 16, "v%d\n", i);
		bgw_put(w, "a.txt", d, strlen(d), 0);
	}
	bgw_put(w, "b.txt", strdup("gone\n"), 5, 0);
	bgw_put(w, "b.txt", NULL, 0, 0);
	json_object_object_add(o, "word", json_object_new_string("clean"));
	bgw_put_json(w, "c.cert", o, "clean");
	json_object_put(o);
	bgw_free(w);    /* writes what is queued */
	s = slurp("a.txt");
	assert_non_null(s);
	assert_string_equal(s, "v2\n");
	free(s);
	assert_null(slurp("b.txt"));
	s = slurp("c.cert");
	assert_non_null(s);
	assert_int_equal(strncmp(s, "clean\n{", 7), 0);
	free(s);
	/* the sum line is one sha256sum -c accepts */
	snprintf(cmd, sizeof(cmd), "cd %s && sha256sum --status -c c.cert.sha256", dir);
	assert_int_equal(system(cmd), 0);
	/* no sum for a file given without one */
	assert_null(slurp("a.txt.sha256"));
}

static void bad__name_too_long_and_no_dir__said_nothing_written(void **st)
{
	struct bgwrite *w = bgw_new(open(dir, O_RDONLY | O_DIRECTORY), dir);
	char name[400];

	(void)st;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	bgw_put(w, name, strdup("x"), 1, 1);
	bgw_free(w);
	/* no directory: what is given is dropped */
	w = bgw_new(-1, "/nonexistent/runs");
	assert_non_null(w);
	assert_int_equal(bgw_dirfd(w), -1);
	bgw_put(w, "d.txt", strdup("x"), 1, 1);
	bgw_free(w);
	assert_null(slurp("d.txt"));
}

/* A disk that does not answer (the writer held): what waits is bounded by
 * files and by bytes; the rest is dropped and counted, never queued; what
 * was queued is written when the disk answers again. */
static void disk_stalled__queue_bounded__rest_dropped_counted(void **st)
{
	struct bgwrite *w = bgw_new(open(dir, O_RDONLY | O_DIRECTORY), dir);
	char name[32];
	char *s;

	(void)st;
	bgw_test_hold(w, 1, 3, 64);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		bgw_put(w, name, strdup("0123456789"), 10, 0);
	}
	assert_int_equal(bgw_dropped(w), 2);    /* f3, f4: three files wait */
	bgw_test_hold(w, 1, 100, 0);
	s = malloc(100);
	memset(s, 'x', 100);
	bgw_put(w, "big", s, 100, 0);          /* 30 + 100 bytes > 64 */
	assert_int_equal(bgw_dropped(w), 3);
	bgw_put(w, "small", strdup("abc"), 3, 0);
	assert_int_equal(bgw_dropped(w), 3);
	bgw_test_hold(w, 0, 0, 0);
	bgw_free(w);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		s = slurp(name);
		if (i < 3)
			assert_string_equal(s, "0123456789");
		else
			assert_null(s);
		free(s);
	}
	assert_null(slurp("big"));
	s = slurp("small");
	assert_string_equal(s, "abc");
	free(s);
}

/* A disk that stops answering in the middle of a write when the daemon
 * stops: bgw_free returns after its wait, not when the disk answers; the
 * files it had are written once it does, and nothing leaks (the writer
 * frees itself: ASan's leak check runs on this test). */
static void disk_hung_at_stop__free_returns_after_its_wait(void **st)
{
	struct bgwrite *w = bgw_new(open(dir, O_RDONLY | O_DIRECTORY), dir);
	struct timespec a, b;
	char *s = NULL;
	double ms;

	(void)st;
	bgw_test_stick(1);
	bgw_test_stop_wait(w, 200);
	bgw_put(w, "g0", strdup("zero"), 4, 0);
	bgw_put(w, "g1", strdup("one"), 3, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	bgw_free(w);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	assert_true(ms >= 150 && ms < 3000);
	assert_null(slurp("g0"));
	bgw_test_stick(0);
	for (int i = 0; i < 300 && !(s = slurp("g1")); i++)
		usleep(10000);
	assert_non_null(s);
	assert_string_equal(s, "one");
	free(s);
	s = slurp("g0");
	assert_string_equal(s, "zero");
	free(s);
	usleep(50000);          /* the writer frees itself before the test ends */
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test_setup_teardown(queued__in_order_whole_with_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(bad__name_too_long_and_no_dir__said_nothing_written,
						setup, teardown),
		cmocka_unit_test_setup_teardown(disk_stalled__queue_bounded__rest_dropped_counted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(disk_hung_at_stop__free_returns_after_its_wait,
						setup, teardown),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
