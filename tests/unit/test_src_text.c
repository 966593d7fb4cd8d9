/* Unit tests for collectors/counters/src_text.c: the recorded-text counter source. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/counters/counters.h"
#include "collectors/counters/ethtool_text_parse.h"
#include "collectors/counters/src_text.h"

struct fx {
	char dir[64];
	char path[128];
	struct src s;
	struct src_ctx ctx;
};

/* Write content to a temp name and rename it over path (atomic replace). */
static void put(struct fx *f, const char *content)
{
	char tmp[160];
	int fd;
	size_t n = strlen(content);

	snprintf(tmp, sizeof(tmp), "%s/.tmp", f->dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rename(tmp, f->path), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_src_text.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/eth0.txt", f->dir);
	f->s.ops = &src_text_ops;
	f->ctx.port_name = "p0";
	f->ctx.ifname = "eth0";
	f->ctx.netns_fd = -1;
	f->ctx.sysfs_root = "";
	f->ctx.text_file = f->path;
	assert_int_equal(f->s.ops->open(&f->s, &f->ctx), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char tmp[160];

	f->s.ops->close(&f->s);
	assert_null(f->s.priv);
	unlink(f->path);
	snprintf(tmp, sizeof(tmp), "%s/.tmp", f->dir);
	unlink(tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int rd(struct fx *f, struct clayout **lay, const uint64_t **vals)
{
	return f->s.ops->read(&f->s, lay, vals);
}

static void read__fresh_file__names_and_values(void **state)
{
	struct fx *f = *state;
	struct clayout *lay = NULL;
	const uint64_t *v = NULL;

	put(f, "NIC statistics:\n     rx_packets: 10\n     rx_out_of_buffer: 3\n");
	assert_int_equal(rd(f, &lay, &v), 0);
	assert_non_null(lay);
	assert_int_equal(lay->n, 2);
	assert_string_equal(lay->names[0], "rx_packets");
	assert_string_equal(lay->names[1], "rx_out_of_buffer");
	assert_int_equal(lay->width[0], CNT_W64);
	assert_int_equal(v[0], 10);
	assert_int_equal(v[1], 3);
	assert_string_equal(src_text_ops.name, "text");
}

static void read__replaced_same_names__same_layout_new_values(void **state)
{
	struct fx *f = *state;
	struct clayout *l1 = NULL, *l2 = NULL;
	const uint64_t *v = NULL;

	put(f, "rx_packets: 10\ntx_packets: 20\n");
	assert_int_equal(rd(f, &l1, &v), 0);
	assert_int_equal(v[1], 20);
	put(f, "   rx_packets: 15\n   tx_packets: 18446744073709551615");
	assert_int_equal(rd(f, &l2, &v), 0);
	assert_ptr_equal(l1, l2);
	assert_int_equal(v[0], 15);
	assert_true(v[1] == UINT64_MAX);
}

static void read__new_names__new_layout_old_kept(void **state)
{
	struct fx *f = *state;
	struct clayout *l1 = NULL, *l2 = NULL, *l3 = NULL;
	const uint64_t *v = NULL;

	put(f, "rx_packets: 10\ntx_packets: 20\n");
	assert_int_equal(rd(f, &l1, &v), 0);
	clayout_ref(l1);        /* a sample keeps the old layout */
	put(f, "tx_packets: 21\nrx_packets: 11\n");     /* order changed */
	assert_int_equal(rd(f, &l2, &v), 0);
	assert_ptr_not_equal(l1, l2);
	assert_string_equal(l2->names[0], "tx_packets");
	assert_int_equal(v[0], 21);
	assert_int_equal(v[1], 11);
	/* The old layout is intact for its holder. */
	assert_int_equal(l1->n, 2);
	assert_string_equal(l1->names[0], "rx_packets");
	assert_int_equal(clayout_find(l1, "tx_packets"), 1);
	clayout_unref(l1);
	put(f, "tx_packets: 22\nrx_packets: 12\nrx_discards_phy: 1\n");
	assert_int_equal(rd(f, &l3, &v), 0);
	assert_int_equal(l3->n, 3);
	assert_int_equal(v[2], 1);
}

static void read__garbage_then_good__error_names_file_line_then_recovers(void **state)
{
	struct fx *f = *state;
	struct clayout *l1 = NULL, *l2 = NULL;
	const uint64_t *v = NULL;
	char want[200];

	put(f, "rx_packets: 10\ntx_packets: 20\n");
	assert_int_equal(rd(f, &l1, &v), 0);
	clayout_ref(l1);
	/* Truncated mid-name: "rx_pack" has no colon. */
	put(f, "tx_packets: 20\nrx_pack");
	assert_int_equal(rd(f, &l2, &v), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: ", f->path);
	if (strncmp(f->s.err, want, strlen(want)))
		fail_msg("err '%s' does not start with '%s'", f->s.err, want);
	assert_non_null(strstr(f->s.err, "rx_pack"));
	/* Bad value. */
	put(f, "rx_packets: 10\ntx_packets: 2x0\n");
	assert_int_equal(rd(f, &l2, &v), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: counter 'tx_packets'", f->path);
	if (strncmp(f->s.err, want, strlen(want)))
		fail_msg("err '%s' does not start with '%s'", f->s.err, want);
	/* Binary garbage: no counter at all. */
	put(f, "\x7f" "ELF\x01\x02\x03\n\x04\x05");
	assert_int_equal(rd(f, &l2, &v), -EINVAL);
	snprintf(want, sizeof(want), "%s: no counters", f->path);
	assert_string_equal(f->s.err, want);
	/* Old layout still usable; a good file reads again on the same one. */
	assert_string_equal(l1->names[1], "tx_packets");
	put(f, "rx_packets: 11\ntx_packets: 22\n");
	assert_int_equal(rd(f, &l2, &v), 0);
	assert_ptr_equal(l1, l2);
	assert_int_equal(v[0], 11);
	assert_int_equal(v[1], 22);
	clayout_unref(l1);
}

static void read__missing_file__error_names_file(void **state)
{
	struct fx *f = *state;
	struct clayout *lay = NULL;
	const uint64_t *v = NULL;
	char want[200];

	unlink(f->path);
	assert_int_equal(rd(f, &lay, &v), -ENOENT);
	snprintf(want, sizeof(want), "%s: %s", f->path, strerror(ENOENT));
	assert_string_equal(f->s.err, want);
	assert_null(lay);
	put(f, "a: 1\n");
	assert_int_equal(rd(f, &lay, &v), 0);
	assert_int_equal(v[0], 1);
}

static void read__directory_or_oversized__refused(void **state)
{
	struct fx *f = *state;
	struct clayout *lay = NULL;
	const uint64_t *v = NULL;
	int fd;

	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_int_equal(rd(f, &lay, &v), -EINVAL);
	assert_non_null(strstr(f->s.err, f->path));
	assert_non_null(strstr(f->s.err, "not a regular file"));
	assert_int_equal(rmdir(f->path), 0);
	fd = open(f->path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)ETXT_MAX_BYTES + 1), 0);
	close(fd);
	assert_int_equal(rd(f, &lay, &v), -E2BIG);
	assert_non_null(strstr(f->s.err, f->path));
	assert_null(lay);
}

static void read__real_fixture_large__all_counters(void **state)
{
	struct fx *f = *state;
	struct clayout *lay = NULL;
	const uint64_t *v = NULL;
	char *buf;
	FILE *in = fopen("tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt",
			 "rb");
	size_t n;
	int i;

	assert_non_null(in);
	buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, in);
	fclose(in);
	assert_true(n > 10000);
	put(f, buf);
	free(buf);
	for (int r = 0; r < 3; r++) {
		assert_int_equal(rd(f, &lay, &v), 0);
		assert_int_equal(lay->n, 751);
		i = clayout_find(lay, "rx_packets_phy");
		assert_true(i >= 0);
		assert_int_equal(v[i], 845715962);
	}
}

/* stats_file as a symbolic link (to a file root may read and the engine
 * user may not) or a FIFO: never followed, never blocking, named. */
static void read__symlink_or_fifo__refused(void **state)
{
	struct fx *f = *state;
	struct clayout *lay = NULL;
	const uint64_t *v = NULL;
	char real[160];
	int fd;

	snprintf(real, sizeof(real), "%s/secret.txt", f->dir);
	fd = open(real, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "rx_packets: 7\n", 14), 14);
	close(fd);
	assert_int_equal(symlink(real, f->path), 0);
	assert_int_equal(rd(f, &lay, &v), -ELOOP);
	assert_non_null(strstr(f->s.err, f->path));
	assert_non_null(strstr(f->s.err, "a symbolic link"));
	assert_null(lay);
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	assert_int_equal(rd(f, &lay, &v), -EINVAL);
	assert_non_null(strstr(f->s.err, "not a regular file"));
	assert_int_equal(unlink(f->path), 0);
	unlink(real);
}

static void open__no_text_file__einval(void **state)
{
	struct src s = { .ops = &src_text_ops };
	struct src_ctx ctx = { .port_name = "p9", .netns_fd = -1,
			       .sysfs_root = "" };

	(void)state;
	assert_int_equal(s.ops->open(&s, &ctx), -EINVAL);
	assert_non_null(strstr(s.err, "p9"));
	assert_null(s.priv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(read__fresh_file__names_and_values,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__replaced_same_names__same_layout_new_values,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__new_names__new_layout_old_kept,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__garbage_then_good__error_names_file_line_then_recovers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__missing_file__error_names_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__directory_or_oversized__refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__real_fixture_large__all_counters,
						setup, teardown),
		cmocka_unit_test_setup_teardown(read__symlink_or_fifo__refused, setup, teardown),
		cmocka_unit_test(open__no_text_file__einval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
