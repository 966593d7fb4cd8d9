/* killon: SIGKILL a process at the moment it opens a path, for tests that
 * must catch a writer mid-write.
 *
 *   killon DIR SUBSTRING PID SECONDS
 *
 * Holds every open on the mount that DIR is on (fanotify FAN_OPEN_PERM,
 * a mount mark: the opener waits until this tool answers). When PID opens
 * a path that contains SUBSTRING, PID is sent SIGKILL while it still waits
 * in that open (fs/notify/fanotify/fanotify.c fanotify_get_response waits
 * killably), the path is printed and killon exits 0; every other open is
 * allowed. Exit 1 when SECONDS pass first, 2 on a usage or system error.
 * Deterministic where a shell loop polling the directory is not: a bundle
 * on tmpfs is written in well under a millisecond. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <time.h>
#include <unistd.h>

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	long long end;
	char *e1, *e2;
	long pid, secs;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: killon DIR SUBSTRING PID SECONDS\n");
		return 2;
	}
	pid = strtol(argv[3], &e1, 10);
	secs = strtol(argv[4], &e2, 10);
	if (*e1 || *e2 || pid <= 1 || secs <= 0) {
		fprintf(stderr, "killon: bad PID '%s' or SECONDS '%s'\n", argv[3], argv[4]);
		return 2;
	}
	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_PERM,
				    AT_FDCWD, argv[1]) < 0) {
		fprintf(stderr, "killon: fanotify on %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	/* the mark is set: a caller may start the writer now */
	printf("watching\n");
	fflush(stdout);
	end = mono_ms() + secs * 1000;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = end - mono_ms();
		ssize_t n;

		if (left <= 0)
			return 1;
		if (poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left) < 0 && errno != EINTR)
			return 2;
		if (!(p.revents & POLLIN))
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return 2;
		for (struct fanotify_event_metadata *m = (void *)buf; n > 0 && FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			struct fanotify_response r = { .fd = m->fd, .response = FAN_ALLOW };
			char link[64], path[PATH_MAX] = "";
			ssize_t k;

			if (m->fd < 0)
				continue;
			snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
			k = readlink(link, path, sizeof(path) - 1);
			path[k > 0 ? k : 0] = '\0';
			if (m->pid == pid && strstr(path, argv[2])) {
				if (kill((pid_t)pid, SIGKILL) < 0) {
					fprintf(stderr, "killon: kill %ld: %s\n", pid, strerror(errno));
					return 2;
				}
				printf("%s\n", path);
				fflush(stdout);
				r.response = FAN_DENY;
				/* its answer: the process is dying either way */
				if (write(fd, &r, sizeof(r)) < 0)
					return 0;
				return 0;
			}
			if (write(fd, &r, sizeof(r)) < 0)
				return 2;
			close(m->fd);
		}
	}
}
