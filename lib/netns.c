/* netns: sockets inside a port's network namespace. */
#include "lib/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int netns_open(const char *name)
{
	char path[PATH_MAX];

	if (!name || !*name) {
		errno = 0;
		return -1;
	}
	if (name[0] == '/')
		snprintf(path, sizeof(path), "%s", name);
	else if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		errno = EINVAL;
		return -1;
	} else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int netns_enter(int nsfd, int *saved)
{
	*saved = -1;
	if (nsfd < 0)
		return 0;
	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0)
		return -1;
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		int e = errno;

		close(*saved);
		*saved = -1;
		errno = e;
		return -1;
	}
	return 0;
}

int netns_leave(int saved)
{
	int rc = 0;

	if (saved < 0)
		return 0;
	if (setns(saved, CLONE_NEWNET) < 0)
		rc = -1;
	close(saved);
	return rc;
}

int netns_socket(int nsfd, int domain, int type, int protocol)
{
	int saved, fd, e;

	if (netns_enter(nsfd, &saved) < 0)
		return -1;
	fd = socket(domain, type | SOCK_CLOEXEC, protocol);
	e = errno;
	if (netns_leave(saved) < 0) {
		/* Cannot get back to our own namespace: nothing safe remains. */
		if (fd >= 0)
			close(fd);
		errno = EIO;
		return -1;
	}
	errno = e;
	return fd;
}
