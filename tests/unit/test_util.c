/* Unit tests: lib/util helpers that guard what reaches a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

static void expect_clean(const char *in, size_t len, const char *want)
{
	char *o = util_utf8_clean(in, len);

	assert_non_null(o);
	assert_string_equal(o, want);
	free(o);
}

static void util_utf8_clean__terminal_controls__replaced(void **state)
{
	(void)state;
	/* ESC [2J (clear screen), BEL, DEL, CR: none may pass */
	expect_clean("a\x1b[2Jb", 6, "a?[2Jb");
	expect_clean("bell\x07", 5, "bell?");
	expect_clean("del\x7f", 4, "del?");
	expect_clean("over\rwrite", 10, "over?write");
	expect_clean("bs\bnul", 6, "bs?nul");
	expect_clean("n\0ul", 4, "n?ul");
	/* C1 controls as UTF-8: U+009B (CSI), U+0085 (NEL), U+0080 */
	expect_clean("x\xc2\x9b" "31mred", 9, "x?31mred");
	expect_clean("\xc2\x85\xc2\x80", 4, "??");
}

static void util_utf8_clean__text__kept(void **state)
{
	(void)state;
	expect_clean("tab\there\nnext line", 18, "tab\there\nnext line");
	/* U+00A0 (first after C1), é, €, an emoji: valid, kept */
	expect_clean("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 11,
		     "\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

static void util_utf8_clean__invalid_utf8__replaced(void **state)
{
	(void)state;
	expect_clean("\x80\xff", 2, "??");
	expect_clean("\xc0\xaf", 2, "??");              /* overlong '/' */
	expect_clean("\xed\xa0\x80", 3, "???");         /* a surrogate */
	expect_clean("\xe2\x82", 2, "??");              /* cut short */
}

/* A small file read whole into the caller's buffer, cut at its size less
 * the NUL; a FIFO with no writer answers at once (O_NONBLOCK), a missing
 * file is -1 with errno. */
static void util_read_buf__file_fifo_missing__read_cut_or_error(void **state)
{
	char dir[] = "/tmp/test_util.XXXXXX", path[64], buf[8];
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("1 2 3\n", fp);
	fclose(fp);
	assert_int_equal(util_read_buf(path, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "1 2 3\n");
	assert_int_equal(util_read_buf(path, buf, 4), 3);
	assert_string_equal(buf, "1 2");
	{
		/* beneath a directory fd, by a relative name (probe_threads'
		 * /proc/PID/task/TID files) */
		int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		assert_true(d >= 0);
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(util_read_buf_at(d, "f", buf, sizeof(buf)), 6);
		assert_string_equal(buf, "1 2 3\n");
		assert_int_equal(util_read_buf_at(d, "nope", buf, sizeof(buf)), -1);
		assert_int_equal(errno, ENOENT);
		close(d);
	}
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(util_read_buf(path, buf, sizeof(buf)), 0);
	unlink(path);
	assert_int_equal(util_read_buf(path, buf, sizeof(buf)), -1);
	assert_int_equal(errno, ENOENT);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(util_utf8_clean__terminal_controls__replaced),
		cmocka_unit_test(util_utf8_clean__text__kept),
		cmocka_unit_test(util_utf8_clean__invalid_utf8__replaced),
		cmocka_unit_test(util_read_buf__file_fifo_missing__read_cut_or_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
