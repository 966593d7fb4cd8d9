/* notifyrecv: stand in for systemd's notification socket (sd_notify(3)).
 *
 *   notifyrecv SOCKET [SECONDS]
 *
 * Binds a unix datagram socket at SOCKET (as systemd does for NOTIFY_SOCKET)
 * and prints every datagram received, one line each, as
 *   <CLOCK_MONOTONIC seconds> <sender pid> FIELD=value<TAB>FIELD=value...
 * (the datagram's newlines become tabs), until SECONDS passed (default 60)
 * or it is killed. The sender's pid comes from SCM_CREDENTIALS, as systemd's
 * NotifyAccess= checks it. For tests of nicstalld's READY, RELOADING, STATUS
 * and WATCHDOG messages. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	double end, secs = argc > 2 ? atof(argv[2]) : 60;
	int fd, one = 1;

	if (argc < 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notifyrecv SOCKET [SECONDS]\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		fprintf(stderr, "notifyrecv: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = mono() + secs;
	while (mono() < end) {
		char buf[4097], cbuf[CMSG_SPACE(sizeof(struct ucred))];
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct pollfd p = { fd, POLLIN, 0 };
		struct cmsghdr *c;
		int pid = 0;
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0)
			continue;
		buf[n] = '\0';
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
				pid = ((struct ucred *)CMSG_DATA(c))->pid;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = '\t';
		printf("%.6f %d %s\n", mono(), pid, buf);
	}
	unlink(argv[1]);
	return 0;
}
