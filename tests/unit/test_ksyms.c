/* Unit tests: ksyms, the kernel's symbol table and a stack as text, on
 * kallsyms and modules files written here (the format of /proc/kallsyms:
 * "address type name\t[module]"; only text symbols, t T w W, count). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/threads/ksyms.h"

static char dir[] = "/tmp/ksyms.XXXXXX";
static char syms[64], mods[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **st)
{
	(void)st;
	if (!mkdtemp(dir))
		return -1;
	snprintf(syms, sizeof(syms), "%s/kallsyms", dir);
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	put(mods, "onload 1000 3 - Live 0xffffffffc0000000\n");
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	unlink(syms);
	unlink(mods);
	rmdir(dir);
	return 0;
}

/* Frames as symbol+offset/size, a module's in brackets; the switch's
 * own frames at the top (BPF, __schedule) left out; a data symbol ('d')
 * never names a frame; an address below every symbol stays an address. */
static void format__symbols_offsets_modules__switch_frames_left_out(void **st)
{
	struct ksyms *k = ksyms_new("test");
	const uint64_t ips[] = { 0xffffffff81000010ull, 0xffffffff81000110ull,
				 0xffffffff81000250ull, 0xffffffffc0000008ull,
				 0x1000ull, 0 };
	char buf[1024];

	(void)st;
	put(syms, "ffffffff81000000 t bpf_prog_1234_tw_switch\n"
		  "ffffffff81000100 T __schedule\n"
		  "ffffffff81000200 T schedule\n"
		  "ffffffff81000240 d some_data\n"
		  "ffffffff81000300 T io_schedule\n"
		  "ffffffffc0000000 t oo_eplock_lock\t[onload]\n"
		  "ffffffffc0000100 t oo_other\t[onload]\n");
	ksyms_set_paths(k, syms, mods);
	assert_string_equal(ksyms_status(k), "not read yet");
	assert_int_equal(ksyms_refresh(k), 0);
	assert_string_equal(ksyms_status(k), "readable");
	assert_int_equal(ksyms_format(k, ips, 6, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "schedule+0x50/0x100\n"
			    "oo_eplock_lock+0x8/0x100 [onload]\n"
			    "0x0000000000001000");
	/* no table: every frame, as addresses */
	assert_int_equal(ksyms_format(NULL, ips, 2, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "0xffffffff81000010\n0xffffffff81000110");
	/* a buffer too small is cut, still terminated */
	ksyms_format(k, ips, 6, buf, 10);
	assert_int_equal(strlen(buf), 9);
	ksyms_free(k);
}

/* Read once; again only when the modules change (a module loaded moves
 * symbols), and the reads are counted. */
static void refresh__read_once__again_when_modules_change(void **st)
{
	struct ksyms *k = ksyms_new("test");

	(void)st;
	put(syms, "ffffffff81000200 T schedule\n");
	ksyms_set_paths(k, syms, mods);
	assert_int_equal(ksyms_refresh(k), 0);
	assert_int_equal(ksyms_refresh(k), 0);
	assert_int_equal(ksyms_reads(k), 1);
	put(mods, "onload 1000 3 - Live 0xffffffffc0000000\n"
		  "sfc 2000 1 - Live 0xffffffffc1000000\n");
	assert_int_equal(ksyms_refresh(k), 0);
	assert_int_equal(ksyms_reads(k), 2);
	/* a use count that moves is no change */
	put(mods, "onload 1000 9 - Live 0xffffffffc0000000\n"
		  "sfc 2000 1 - Live 0xffffffffc1000000\n");
	assert_int_equal(ksyms_refresh(k), 0);
	assert_int_equal(ksyms_reads(k), 2);
	ksyms_free(k);
}

/* Every address zero (kptr_restrict, or no CAP_SYSLOG) and a missing
 * file: unreadable, and the status says why. */
static void refresh__zeroed_or_missing__unreadable_with_why(void **st)
{
	struct ksyms *k = ksyms_new("test");
	char path[96];

	(void)st;
	put(syms, "0000000000000000 T schedule\n0000000000000000 T io_schedule\n");
	ksyms_set_paths(k, syms, mods);
	assert_int_equal(ksyms_refresh(k), -1);
	assert_non_null(strstr(ksyms_status(k), "every address is zero"));
	snprintf(path, sizeof(path), "%s/none", dir);
	ksyms_set_paths(k, path, mods);
	assert_int_equal(ksyms_refresh(k), -1);
	assert_non_null(strstr(ksyms_status(k), "/none: No such file"));
	ksyms_free(k);
}

/* A host's size of table (100,000 text symbols, 2,000 of them in 40
 * modules, data symbols between): every symbol still names its frames
 * after the names' pool has grown several times, with its module; and
 * the table keeps less than the file's text (the whole text was kept,
 * beside an array grown by doubling: more than the file). */
static void refresh__large_table__frames_named__less_kept_than_read(void **st)
{
	struct ksyms *k = ksyms_new("test");
	enum { N = 100000, NMOD = 2000 };
	FILE *f;
	long size;
	char buf[256], want[128];

	(void)st;
	f = fopen(syms, "w");
	assert_non_null(f);
	for (unsigned i = 0; i < N; i++) {
		unsigned long long a = 0xffffffff81000000ull + 0x100ull * i;

		if (i >= N - NMOD)
			fprintf(f, "%llx t mod_function_number_%u\t[module_%u]\n", a, i,
				(i - (N - NMOD)) / 50);
		else
			fprintf(f, "%llx T kernel_function_with_a_long_name_%u\n", a, i);
		fprintf(f, "%llx d some_data_%u\n", a + 0x80, i);
	}
	size = ftell(f);
	fclose(f);
	ksyms_set_paths(k, syms, mods);
	assert_int_equal(ksyms_refresh(k), 0);
	for (unsigned i = 0; i < N; i += 997) {
		const uint64_t ips[] = { 0xffffffff81000000ull + 0x100ull * i + 0x90, 0 };

		if (i >= N - NMOD)
			snprintf(want, sizeof(want), "mod_function_number_%u+0x90/0x100 [module_%u]", i,
				 (i - (N - NMOD)) / 50);
		else
			snprintf(want, sizeof(want), "kernel_function_with_a_long_name_%u+0x90/0x100", i);
		assert_int_equal(ksyms_format(k, ips, 1, buf, sizeof(buf)), 1);
		assert_string_equal(buf, want);
	}
	print_message("table of %u symbols: %zu bytes kept, %ld read\n", N, ksyms_bytes(k), size);
	assert_true(ksyms_bytes(k) > 0);
	assert_true(ksyms_bytes(k) < (size_t)size);
	ksyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format__symbols_offsets_modules__switch_frames_left_out),
		cmocka_unit_test(refresh__read_once__again_when_modules_change),
		cmocka_unit_test(refresh__zeroed_or_missing__unreadable_with_why),
		cmocka_unit_test(refresh__large_table__frames_named__less_kept_than_read),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
