/* Unit tests: log targets, events, and the catalog that explains them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

#define CATALOG "systemd/nicstalld.catalog"

/* Run fn with standard error going to a pipe; returns what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
	static char out[8192];
	int p[2], saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	fflush(stderr);
	dup2(p[1], STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	out[n > 0 ? n : 0] = '\0';
	return out;
}

static void say_things(void)
{
	log_warnx("port %s: down", "p1");
	log_event(LOG_EV_PORT_UP, LOG_INFO, LOG_FIELDS({ LF_PORT, "p1" }), "port %s: up", "p1");
}

static void log_plain__terminal__no_priority_prefix(void **state)
{
	char *out;

	(void)state;
	log_init("nicstalld", 0);
	log_set_level(LOG_INFO);
	out = capture_stderr(say_things);
	assert_string_equal(out, "nicstalld: port p1: down\nnicstalld: port p1: up\n");
	assert_null(strchr(out, '<'));
}

static void log_prefixed__pipe__sd_daemon_prefixes(void **state)
{
	char *out;

	(void)state;
	log_init("nicstalld", 1);
	log_set_level(LOG_INFO);
	out = capture_stderr(say_things);
	assert_string_equal(out, "<4>port p1: down\n<6>port p1: up\n");
}

static void say_hostile(void)
{
	log_warnx("peer %s: refused", "a\n<3>forged\x1b[2J\xc2\x9b" "31m");
}

/* A message quoting others' text: no control reaches the terminal, no
 * newline starts a forged line (issue 34 finding 8: one filter everywhere) */
static void log_stderr__hostile_text__one_filtered_line(void **state)
{
	char *out;

	(void)state;
	log_init("nicstalld", 1);
	log_set_level(LOG_INFO);
	out = capture_stderr(say_hostile);
	assert_string_equal(out, "<4>peer a?<3>forged?[2J?31m: refused\n");
	log_init("nicstalld", 0);
	out = capture_stderr(say_hostile);
	assert_string_equal(out, "nicstalld: peer a?<3>forged?[2J?31m: refused\n");
}

static enum log_target opened;
static void open_auto(void)
{
	log_open("nicstalld");
	opened = log_get_target();
}

static void log_open__journal_stream_is_stderr__journal(void **state)
{
	int p[2], saved = dup(STDERR_FILENO);
	struct stat st;
	char js[64];

	(void)state;
	assert_int_equal(pipe(p), 0);
	dup2(p[1], STDERR_FILENO);
	fstat(STDERR_FILENO, &st);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	open_auto();
	assert_int_equal(opened, LOG_TO_JOURNAL);
	/* another inode: stderr was redirected away from the journal */
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1);
	open_auto();
	assert_int_equal(opened, LOG_TO_PREFIXED);      /* a pipe, not a tty */
	setenv("JOURNAL_STREAM", "garbage", 1);
	open_auto();
	assert_int_equal(opened, LOG_TO_PREFIXED);
	unsetenv("JOURNAL_STREAM");
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[0]);
	close(p[1]);
	log_init("test", 1);
}

struct seen {
	int n;
	enum log_ev kind;
	char port[32], verdict[32];
};

static void hook(enum log_ev kind, const struct log_field *f, void *arg)
{
	struct seen *s = arg;
	const char *p = log_field_get(f, LF_PORT), *v = log_field_get(f, LF_VERDICT);

	s->n++;
	s->kind = kind;
	snprintf(s->port, sizeof(s->port), "%s", p ? p : "");
	snprintf(s->verdict, sizeof(s->verdict), "%s", v ? v : "");
}

static void quiet_event(void)
{
	log_event(LOG_EV_BUNDLE_WRITTEN, LOG_INFO,
		  LOG_FIELDS({ LF_PORT, "srv" }, { LF_VERDICT, "port-drop" },
			     { LF_INCIDENT, LOG_U64(42) }, { LF_BUNDLE, NULL }),
		  "bundle %s", "x");
}

static void log_event__below_level__hook_still_hears_it(void **state)
{
	struct seen s = { 0 };
	char *out;

	(void)state;
	log_init("nicstalld", 1);
	log_set_level(LOG_WARNING);
	log_set_event_hook(hook, &s);
	out = capture_stderr(quiet_event);
	log_set_event_hook(NULL, NULL);
	log_set_level(LOG_INFO);
	assert_string_equal(out, "");
	assert_int_equal(s.n, 1);
	assert_int_equal(s.kind, LOG_EV_BUNDLE_WRITTEN);
	assert_string_equal(s.port, "srv");
	assert_string_equal(s.verdict, "port-drop");
}

static void log_event__bad_kind__ignored(void **state)
{
	struct seen s = { 0 };

	(void)state;
	log_set_event_hook(hook, &s);
	log_event(LOG_EV_COUNT, LOG_INFO, NULL, "nothing");
	log_event((enum log_ev)-1, LOG_INFO, NULL, "nothing");
	log_set_event_hook(NULL, NULL);
	assert_int_equal(s.n, 0);
	assert_null(log_event_name(LOG_EV_COUNT));
	assert_null(log_event_id(LOG_EV_COUNT));
}

static void log_fmt__numbers__as_text(void **state)
{
	(void)state;
	assert_string_equal(LOG_U64(18446744073709551615ull), "18446744073709551615");
	assert_string_equal(LOG_DBL(1.5), "1.500");
}

/* The catalog's "-- ID" lines. */
static int catalog_ids(char ids[][33], int max)
{
	FILE *f = fopen(CATALOG, "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "-- ", 3) && n < max) {
			snprintf(ids[n], 33, "%.32s", line + 3);
			n++;
		}
	fclose(f);
	return n;
}

static void log_event__every_kind__unique_id_explained_in_catalog(void **state)
{
	char ids[64][33];
	int n = catalog_ids(ids, 64);

	(void)state;
	for (int k = 0; k < LOG_EV_COUNT; k++) {
		const char *id = log_event_id(k);
		int found = 0;

		assert_non_null(log_event_name(k));
		assert_int_equal(strlen(id), 32);
		for (int i = 0; i < 32; i++)
			assert_true(isxdigit((unsigned char)id[i]) && !isupper((unsigned char)id[i]));
		for (int j = 0; j < k; j++) {
			assert_string_not_equal(id, log_event_id(j));
			assert_string_not_equal(log_event_name(k), log_event_name(j));
		}
		for (int i = 0; i < n; i++)
			found += !strcmp(ids[i], id);
		if (found != 1)
			fail_msg("event %s (%s): %d entries in " CATALOG, log_event_name(k), id, found);
	}
	/* and nothing in the catalog that no event uses */
	assert_int_equal(n, LOG_EV_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_plain__terminal__no_priority_prefix),
		cmocka_unit_test(log_prefixed__pipe__sd_daemon_prefixes),
		cmocka_unit_test(log_stderr__hostile_text__one_filtered_line),
		cmocka_unit_test(log_open__journal_stream_is_stderr__journal),
		cmocka_unit_test(log_event__below_level__hook_still_hears_it),
		cmocka_unit_test(log_event__bad_kind__ignored),
		cmocka_unit_test(log_fmt__numbers__as_text),
		cmocka_unit_test(log_event__every_kind__unique_id_explained_in_catalog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
