/* sysname: system call names. See sysname.h. */
#include "collectors/threads/sysname.h"

#include <stdio.h>

/* [NR] = "name", from `cc -E -dM` over <sys/syscall.h> (Makefile) */
static const char *const names[] = {
#include "syscall_names.h"
};

const char *sysname(long nr, char *buf, size_t len)
{
	if (nr >= 0 && (size_t)nr < sizeof(names) / sizeof(names[0]) && names[nr])
		return names[nr];
	snprintf(buf, len, "syscall %ld", nr);
	return buf;
}
