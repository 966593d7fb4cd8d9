/* sockdiag_owner: which process holds a socket inode (a bounded scan of
 * /proc/PID/fd, only when an investigation asks, never on the poll path).
 * See flow_sockdiag.h (sockdiag_inode_owner). */
#include "collectors/flow_sockdiag.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc scan bounds. */
#define SD_OWNER_MAX_PROCS 16384u
#define SD_OWNER_MAX_FDS 262144u

static int sd_all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void sd_read_comm(int procfd, int pid, char *comm, size_t commlen)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	if (!comm || !commlen)
		return;
	comm[0] = '\0';
	snprintf(path, sizeof(path), "%d/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(comm, commlen, "%s", buf);
}

int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen)
{
	char want[48], link[64], path[64];
	unsigned procs = 0, fds = 0;
	struct dirent *pe, *fe;
	int procfd, rc = -ENOENT;
	DIR *pd;

	if (!inode)
		return -EINVAL;
	snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	pd = fdopendir(dup(procfd));
	if (!pd) {
		rc = -errno;
		close(procfd);
		return rc;
	}
	while (rc == -ENOENT && (pe = readdir(pd)) && procs < SD_OWNER_MAX_PROCS &&
	       fds < SD_OWNER_MAX_FDS) {
		DIR *fdd;
		long p;
		int dfd;

		if (!sd_all_digits(pe->d_name) || strlen(pe->d_name) > 10)
			continue;
		p = strtol(pe->d_name, NULL, 10);
		if (p <= 0 || p > INT32_MAX)
			continue;
		procs++;
		snprintf(path, sizeof(path), "%ld/fd", p);
		dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;       /* gone or not ours to read */
		fdd = fdopendir(dfd);
		if (!fdd) {
			close(dfd);
			continue;
		}
		while ((fe = readdir(fdd)) && fds < SD_OWNER_MAX_FDS) {
			ssize_t n;

			if (fe->d_name[0] == '.')
				continue;
			fds++;
			n = readlinkat(dirfd(fdd), fe->d_name, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, want))
				continue;
			if (pid)
				*pid = (int)p;
			sd_read_comm(procfd, (int)p, comm, commlen);
			rc = 0;
			break;
		}
		closedir(fdd);
	}
	closedir(pd);
	close(procfd);
	return rc;
}
