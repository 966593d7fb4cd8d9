/* procfd: socket owners from /proc/PID/fd. */
#include "lib/procfd.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int all_digits(const char *s)
{
	if (!*s || strlen(s) > 10)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void read_comm(int procfd, int pid, char *comm, size_t len)
{
	if (len > 64)
		len = 64;
	char path[64], buf[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "%d/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	buf[len - 1] = '\0';           /* comm is at most 15 bytes anyway */
	memcpy(comm, buf, strlen(buf) + 1);
}

/* Does process p (its fd dir open as dfd) hold want? */
static int holds(int dfd, const char *want, unsigned *fds)
{
	char link[64];
	struct dirent *fe;
	DIR *fdd = fdopendir(dfd);
	int found = 0;

	if (!fdd) {
		close(dfd);
		return 0;
	}
	while (!found && (fe = readdir(fdd)) && *fds < PROCFD_MAX_FDS) {
		ssize_t n;

		if (fe->d_name[0] == '.')
			continue;
		(*fds)++;
		n = readlinkat(dirfd(fdd), fe->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = !strcmp(link, want);
	}
	closedir(fdd);
	return found;
}

int procfd_socket_owners(uint64_t inode, struct procfd_owner *out, size_t max,
			 int *truncated)
{
	unsigned procs = 0, fds = 0;
	char want[48], path[64];
	struct dirent *pe;
	size_t n = 0;
	int procfd;
	DIR *pd;

	if (truncated)
		*truncated = 0;
	if (!inode)
		return -EINVAL;
	snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	pd = fdopendir(dup(procfd));
	if (!pd) {
		int e = errno;

		close(procfd);
		return -e;
	}
	while (n < max && (pe = readdir(pd))) {
		long p;
		int dfd;

		if (procs >= PROCFD_MAX_PROCS || fds >= PROCFD_MAX_FDS) {
			if (truncated)
				*truncated = 1;
			break;
		}
		if (!all_digits(pe->d_name))
			continue;
		p = strtol(pe->d_name, NULL, 10);
		if (p <= 0 || p > INT32_MAX)
			continue;
		procs++;
		snprintf(path, sizeof(path), "%ld/fd", p);
		dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;       /* gone, or a kernel thread */
		if (!holds(dfd, want, &fds))
			continue;
		out[n].pid = (int)p;
		read_comm(procfd, (int)p, out[n].comm, sizeof(out[n].comm));
		n++;
	}
	closedir(pd);
	close(procfd);
	return (int)n;
}

/* "socket:[N]" -> N; 0 when link is not a socket's. */
static uint64_t socket_link(const char *link)
{
	unsigned long long v;
	char end;

	if (strncmp(link, "socket:[", 8) || sscanf(link + 8, "%llu%c", &v, &end) != 2 || end != ']')
		return 0;
	return v;
}

int procfd_fd_inode(int pid, int fd, uint64_t *inode)
{
	char path[64], link[64];
	ssize_t n;

	if (pid <= 0 || fd < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	link[n] = '\0';
	*inode = socket_link(link);
	return *inode ? 0 : -ENOTSOCK;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int procfd_pid_sockets(int pid, uint64_t *out, size_t max, int *truncated)
{
	char path[64], link[64];
	struct dirent *fe;
	unsigned fds = 0;
	size_t n = 0, k = 0;
	DIR *d;

	if (truncated)
		*truncated = 0;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ENOENT : -errno;
	while ((fe = readdir(d))) {
		ssize_t l;
		uint64_t ino;

		if (fe->d_name[0] == '.')
			continue;
		if (n >= max || ++fds > PROCFD_MAX_FDS) {
			if (truncated)
				*truncated = 1;
			break;
		}
		l = readlinkat(dirfd(d), fe->d_name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if ((ino = socket_link(link)))
			out[n++] = ino;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), u64_cmp);
	for (size_t i = 0; i < n; i++)       /* a socket dup()ed is one socket */
		if (!k || out[k - 1] != out[i])
			out[k++] = out[i];
	return (int)k;
}
