/* Unit tests: sysname, system call names from the generated table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/syscall.h>

#include "collectors/threads/sysname.h"

static void known_numbers__their_names(void **st)
{
	char b[32];

	(void)st;
	assert_string_equal(sysname(SYS_futex, b, sizeof(b)), "futex");
	assert_string_equal(sysname(SYS_read, b, sizeof(b)), "read");
	assert_string_equal(sysname(SYS_epoll_pwait, b, sizeof(b)), "epoll_pwait");
	assert_string_equal(sysname(SYS_ioctl, b, sizeof(b)), "ioctl");
}

static void unknown_or_negative__the_number(void **st)
{
	char b[32];

	(void)st;
	assert_string_equal(sysname(99999, b, sizeof(b)), "syscall 99999");
	assert_string_equal(sysname(-1, b, sizeof(b)), "syscall -1");
#if defined(__x86_64__)
	/* a hole in the table: x86-64 numbers none of 335..423 */
	assert_string_equal(sysname(400, b, sizeof(b)), "syscall 400");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_numbers__their_names),
		cmocka_unit_test(unknown_or_negative__the_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
