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

/* util_term_put of s into a string */
static char *term_put(const char *s, size_t len, size_t max, int lines)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(util_term_put(f, s, len, max, lines), 0);
	fclose(f);
	return buf;
}

static void expect_term(const char *in, size_t len, size_t max, int lines, const char *want)
{
	char *o = term_put(in, len, max, lines);

	assert_string_equal(o, want);
	free(o);
}

static void util_term_put__c1_bidi_and_lines__replaced(void **state)
{
	(void)state;
	/* issue 34 finding 8: U+009B and the byte 0x9B are a CSI to some
	 * terminals; the one-line form takes newline and tab too */
	expect_term("a\xc2\x9b" "2Jb", 6, SIZE_MAX, 0, "a?2Jb");
	expect_term("a\x9b" "2Jb", 5, SIZE_MAX, 0, "a?2Jb");
	expect_term("a\x1b[2Jb", 6, SIZE_MAX, 0, "a?[2Jb");
	expect_term("l1\nl2\tx", 7, SIZE_MAX, 0, "l1?l2?x");
	expect_term("l1\nl2\tx", 7, SIZE_MAX, 1, "l1\nl2\tx");
	/* U+202E (right-to-left override) and U+2066 (isolate) reorder text */
	expect_term("x\xe2\x80\xaey\xe2\x81\xa6z", 9, SIZE_MAX, 1, "x?y?z");
	/* at most max characters, never half of one */
	expect_term("\xc3\xa9\xc3\xa9\xc3\xa9", 6, 2, 0, "\xc3\xa9\xc3\xa9");
	expect_term("ab\xc2\x9b" "cd", 6, 3, 0, "ab?");
	/* the same filter as util_utf8_clean */
	expect_clean("x\xe2\x80\xaey", 5, "x?y");
	expect_clean("\x9b", 1, "?");
}

/* A character cut between two writes of the stream is joined; a control
 * cut that way is still caught; a start cut at the close is '?'. */
static void util_term_fdopen__split_writes__filtered_as_one(void **state)
{
	char dir[] = "/tmp/test_util.XXXXXX", path[64], buf[128];
	int fd;
	FILE *f;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	f = util_term_fdopen(fd);
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	fputs("a\xc2", f);
	fputs("\x9b" "31mb\xc3", f);
	fputs("\xa9 \xe2\x80", f);
	fputs("\xae" "c\x9b" "d\n\xe2\x82", f);
	assert_int_equal(fclose(f), 0);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "a?31mb\xc3\xa9 ?c?d\n??");
	close(fd);
	unlink(path);
	rmdir(dir);
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
		cmocka_unit_test(util_term_put__c1_bidi_and_lines__replaced),
		cmocka_unit_test(util_term_fdopen__split_writes__filtered_as_one),
		cmocka_unit_test(util_read_buf__file_fifo_missing__read_cut_or_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
