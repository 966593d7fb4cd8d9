/* procfd: which processes hold a socket, from /proc/PID/fd (the kernel's
 * sock_diag answers give a socket inode, never a pid). Synchronous and
 * bounded: at most PROCFD_MAX_PROCS processes and PROCFD_MAX_FDS fds are
 * looked at, so it is for incidents and refusals, never a poll path. */
#ifndef NICSTALL_PROCFD_H
#define NICSTALL_PROCFD_H

#include <stddef.h>
#include <stdint.h>

#define PROCFD_MAX_PROCS 16384u
#define PROCFD_MAX_FDS 262144u

struct procfd_owner {
	int pid;
	char comm[16];
};

/* Every process with an fd on "socket:[inode]" (a socket may be shared
 * after fork), up to max. Returns how many were found (0: none), or
 * -errno when /proc cannot be read. *truncated (may be NULL) says whether
 * the bound stopped the scan first. */
int procfd_socket_owners(uint64_t inode, struct procfd_owner *out, size_t max,
			 int *truncated);

/* The socket inode behind /proc/PID/fd/FD ("socket:[inode]"): 0 with
 * *inode set, -ENOTSOCK when the fd is not a socket, -ENOENT when the fd
 * (or the process) is gone, other -errno. One readlink(). */
int procfd_fd_inode(int pid, int fd, uint64_t *inode);

/* The socket inodes process pid holds (each once), sorted, up to max
 * (and PROCFD_MAX_FDS fds looked at). Returns how many, or -errno
 * (-ENOENT: the process is gone). *truncated (may be NULL) says whether
 * a bound stopped the scan first. */
int procfd_pid_sockets(int pid, uint64_t *out, size_t max, int *truncated);

#endif
