/* Unit tests: journal excerpt. The journal is written by the test itself with
 * systemd-journal-remote (Debian package systemd-journal-remote) from export
 * format; the tests skip when it is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "probes/probe_journal.h"

#define JREMOTE "/lib/systemd/systemd-journal-remote"
#define T0 1758200000000000ull          /* realtime us of the stall */
#define S 1000000ull
#define BOOT "0123456789abcdef0123456789abcdef"
#define MLX5_LINE "mlx5_core 0000:03:00.0: fw query isn't supported by the FW"

static char g_dir[64];
static char g_empty[64];

static void put_text(FILE *f, uint64_t rt, const char *transport, const char *ident,
		     int prio, const char *msg)
{
	fprintf(f, "__REALTIME_TIMESTAMP=%llu\n__MONOTONIC_TIMESTAMP=%llu\n_BOOT_ID=%s\n",
		(unsigned long long)rt, (unsigned long long)(rt - T0 + 5000 * S), BOOT);
	fprintf(f, "_TRANSPORT=%s\n", transport);
	if (ident)
		fprintf(f, "SYSLOG_IDENTIFIER=%s\n", ident);
	if (prio >= 0)
		fprintf(f, "PRIORITY=%d\n", prio);
	fprintf(f, "MESSAGE=%s\n\n", msg);
}

/* A MESSAGE with bytes that are not UTF-8: export format binary field. */
static void put_binary(FILE *f, uint64_t rt, const char *msg, size_t len)
{
	uint64_t le = len;      /* little endian on the hosts we build for */

	fprintf(f, "__REALTIME_TIMESTAMP=%llu\n__MONOTONIC_TIMESTAMP=%llu\n_BOOT_ID=%s\n",
		(unsigned long long)rt, (unsigned long long)(rt - T0 + 5000 * S), BOOT);
	fprintf(f, "_TRANSPORT=kernel\nMESSAGE\n");
	fwrite(&le, sizeof(le), 1, f);
	fwrite(msg, 1, len, f);
	fprintf(f, "\n\n");
}

static int setup(void **state)
{
	char export[128], out[128];
	FILE *f;
	pid_t pid;
	int st;

	(void)state;
	if (access(JREMOTE, X_OK) != 0)
		return 0;       /* tests skip */
	snprintf(g_dir, sizeof(g_dir), "/tmp/probe_journal_test.XXXXXX");
	snprintf(g_empty, sizeof(g_empty), "/tmp/probe_journal_empty.XXXXXX");
	if (!mkdtemp(g_dir) || !mkdtemp(g_empty))
		return -1;
	snprintf(export, sizeof(export), "%s/in.export", g_dir);
	f = fopen(export, "w");
	if (!f)
		return -1;
	put_text(f, T0 - 10 * S, "kernel", "kernel", 6, "before the window");
	put_text(f, T0, "kernel", "kernel", 3, MLX5_LINE);
	put_text(f, T0 + 1 * S, "syslog", "foo", 5, "hello from foo");
	put_text(f, T0 + 2 * S, "kernel", NULL, 4,
		 "mlx5_core 0000:03:00.0: Port module event: module 0, Cable plugged");
	put_binary(f, T0 + 3 * S, "bad \xff\xfe bytes", 12);
	put_text(f, T0 + 60 * S, "kernel", "kernel", 6, "after the window");
	fclose(f);

	snprintf(out, sizeof(out), "--output=%s/x.journal", g_dir);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(export, O_RDONLY);
		int nul = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, 0) < 0 || nul < 0 || dup2(nul, 2) < 0)
			_exit(126);
		execl(JREMOTE, JREMOTE, out, "-", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	unlink(export);
	return 0;
}

static int teardown(void **state)
{
	char p[128];

	(void)state;
	if (g_dir[0]) {
		snprintf(p, sizeof(p), "%s/x.journal", g_dir);
		unlink(p);
		rmdir(g_dir);
	}
	if (g_empty[0])
		rmdir(g_empty);
	return 0;
}

static void need_journal(void)
{
	if (!g_dir[0])
		skip();         /* systemd-journal-remote not installed */
}

static struct json_object *excerpt(const char *dir, uint64_t from, uint64_t to,
				   const char *const *ids, size_t max_e, size_t max_b)
{
	struct json_object *o = NULL;
	char err[256] = "";

	if (probe_journal_excerpt(dir, from, to, ids, max_e, max_b, &o, err, sizeof(err)) < 0)
		fail_msg("excerpt: %s", err);
	assert_non_null(o);
	return o;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no key %s in %s", k, json_object_to_json_string(o));
	return v;
}

static const char *entry_str(struct json_object *o, size_t i, const char *k)
{
	return json_object_get_string(get(json_object_array_get_idx(get(o, "entries"), i), k));
}

static void probe_journal_excerpt__kernel_window__only_inside_entries(void **state)
{
	struct json_object *o, *e;

	(void)state;
	need_journal();
	o = excerpt(g_dir, T0 - S, T0 + 5 * S, NULL, 100, 65536);
	assert_true(json_object_get_boolean(get(o, "available")));
	assert_false(json_object_get_boolean(get(o, "truncated")));
	assert_int_equal(json_object_get_int(get(o, "count")), 3);
	assert_int_equal(json_object_array_length(get(o, "entries")), 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(get(o, "matches"), 0)),
			    "_TRANSPORT=kernel");
	e = json_object_array_get_idx(get(o, "entries"), 0);
	assert_string_equal(json_object_get_string(get(e, "message")), MLX5_LINE);
	assert_int_equal(json_object_get_int64(get(e, "realtime_us")), (int64_t)T0);
	assert_int_equal(json_object_get_int64(get(e, "monotonic_us")), (int64_t)(5000 * S));
	assert_string_equal(json_object_get_string(get(e, "boot_id")), BOOT);
	assert_int_equal(json_object_get_int(get(e, "priority")), 3);
	assert_string_equal(json_object_get_string(get(e, "identifier")), "kernel");
	/* no SYSLOG_IDENTIFIER: the kernel transport names it */
	assert_string_equal(entry_str(o, 1, "identifier"), "kernel");
	assert_non_null(strstr(entry_str(o, 1, "message"), "Cable plugged"));
	assert_string_equal(entry_str(o, 2, "message"), "bad ?? bytes");
	{
		const char *txt = json_object_to_json_string(o);

		assert_null(strstr(txt, "before the window"));
		assert_null(strstr(txt, "after the window"));
		assert_null(strstr(txt, "hello from foo"));
	}
	json_object_put(o);

	/* window boundaries are inclusive */
	o = excerpt(g_dir, T0, T0, NULL, 100, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 1);
	assert_string_equal(entry_str(o, 0, "message"), MLX5_LINE);
	json_object_put(o);
}

static void probe_journal_excerpt__identifier_matches__ored(void **state)
{
	const char *const both[] = { "kernel", "foo", NULL };
	const char *const foo[] = { "foo", NULL };
	const char *const raw[] = { "_TRANSPORT=syslog", NULL };
	struct json_object *o;

	(void)state;
	need_journal();
	o = excerpt(g_dir, T0 - S, T0 + 5 * S, both, 100, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 4);
	assert_string_equal(entry_str(o, 1, "identifier"), "foo");
	assert_string_equal(entry_str(o, 1, "message"), "hello from foo");
	assert_string_equal(entry_str(o, 1, "transport"), "syslog");
	json_object_put(o);

	o = excerpt(g_dir, T0 - S, T0 + 5 * S, foo, 100, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 1);
	assert_string_equal(entry_str(o, 0, "message"), "hello from foo");
	json_object_put(o);

	o = excerpt(g_dir, T0 - 100 * S, T0 + 100 * S, raw, 100, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 1);
	json_object_put(o);
}

static void probe_journal_excerpt__limits__truncated_flag(void **state)
{
	struct json_object *o;

	(void)state;
	need_journal();
	o = excerpt(g_dir, T0 - S, T0 + 5 * S, NULL, 1, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 1);
	assert_true(json_object_get_boolean(get(o, "truncated")));
	assert_string_equal(json_object_get_string(get(o, "truncated_by")), "max_entries");
	assert_string_equal(entry_str(o, 0, "message"), MLX5_LINE);
	json_object_put(o);

	/* room for the first entry only */
	o = excerpt(g_dir, T0 - S, T0 + 5 * S, NULL, 100, 200);
	assert_int_equal(json_object_get_int(get(o, "count")), 1);
	assert_true(json_object_get_boolean(get(o, "truncated")));
	assert_string_equal(json_object_get_string(get(o, "truncated_by")), "max_bytes");
	assert_true(json_object_get_int(get(o, "bytes")) <= 200);
	json_object_put(o);

	/* exactly as many as there are: not truncated */
	o = excerpt(g_dir, T0 - S, T0 + 5 * S, NULL, 3, 65536);
	assert_int_equal(json_object_get_int(get(o, "count")), 3);
	assert_false(json_object_get_boolean(get(o, "truncated")));
	json_object_put(o);
}

static void probe_journal_excerpt__no_journal__unavailable_with_reason(void **state)
{
	struct json_object *o;
	const char *reason;

	(void)state;
	o = excerpt("/nonexistent/probe_journal_test", T0 - S, T0 + S, NULL, 10, 4096);
	assert_false(json_object_get_boolean(get(o, "available")));
	reason = json_object_get_string(get(o, "reason"));
	assert_non_null(strstr(reason, "/nonexistent/probe_journal_test"));
	assert_non_null(strstr(reason, "No such file or directory"));
	json_object_put(o);

	if (g_empty[0]) {
		o = excerpt(g_empty, T0 - S, T0 + S, NULL, 10, 4096);
		assert_false(json_object_get_boolean(get(o, "available")));
		reason = json_object_get_string(get(o, "reason"));
		assert_non_null(strstr(reason, "no journal files in"));
		json_object_put(o);
	}

	/* the system journal: present or not, never an error */
	o = excerpt(NULL, T0 - S, T0 + S, NULL, 10, 4096);
	get(o, "available");
	json_object_put(o);
}

static void probe_journal_excerpt__bad_arguments__error(void **state)
{
	const char *const bad[] = { "foo bar", NULL };
	const char *const empty[] = { "", NULL };
	struct json_object *o = (struct json_object *)1;
	char err[256] = "";

	(void)state;
	assert_int_equal(probe_journal_excerpt("/tmp", T0 + S, T0, NULL, 10, 4096, &o, err,
					       sizeof(err)), -1);
	assert_null(o);
	assert_non_null(strstr(err, "reversed"));
	assert_int_equal(probe_journal_excerpt("/tmp", T0, T0 + S, bad, 10, 4096, &o, err,
					       sizeof(err)), -1);
	assert_non_null(strstr(err, "foo bar"));
	assert_int_equal(probe_journal_excerpt("/tmp", T0, T0 + S, empty, 10, 4096, &o, err,
					       sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_journal_excerpt__kernel_window__only_inside_entries),
		cmocka_unit_test(probe_journal_excerpt__identifier_matches__ored),
		cmocka_unit_test(probe_journal_excerpt__limits__truncated_flag),
		cmocka_unit_test(probe_journal_excerpt__no_journal__unavailable_with_reason),
		cmocka_unit_test(probe_journal_excerpt__bad_arguments__error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
