/* sysname: a system call's name from its number, for this machine's
 * architecture (the table is generated at build time from the C library's
 * <sys/syscall.h>, the kernel's own uapi numbers). No I/O. */
#ifndef NICSTALL_SYSNAME_H
#define NICSTALL_SYSNAME_H

#include <stddef.h>

/* "futex", or "syscall 1234" (written into buf) for a number the table
 * does not have. Never NULL. */
const char *sysname(long nr, char *buf, size_t len);

#endif
