/* bench_conns: hold many idle kernel TCP connections, for the benchmark of
 * what sock_diag costs with 1,000 sockets on a port.
 *
 *   bench_conns listen ADDR PORT       accept and hold every connection
 *   bench_conns connect ADDR PORT N    open N connections and hold them
 *
 * Both run until SIGTERM or SIGINT; connect prints "ready N" on stdout once
 * every connection is up. One byte each way per connection first, so the
 * sockets have moved data (as a session that went quiet has). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_conns: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void addr_of(struct sockaddr_in *sa, const char *addr, const char *port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		errno = EINVAL;
		die(addr);
	}
}

static void more_files(void)
{
	struct rlimit rl = { 65536, 65536 };

	setrlimit(RLIMIT_NOFILE, &rl);
}

static int do_listen(const char *addr, const char *port)
{
	struct sockaddr_in sa;
	int l, one = 1, ep;
	struct epoll_event ev = { .events = EPOLLIN };

	addr_of(&sa, addr, port);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 4096) < 0)
		die("bind/listen");
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = l;
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	while (!stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 200);

		for (int i = 0; i < n; i++) {
			char c;

			if (evs[i].data.fd == l) {
				int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);

				if (s >= 0) {
					ev.data.fd = s;
					epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
				}
			} else if (read(evs[i].data.fd, &c, 1) == 1) {
				if (write(evs[i].data.fd, &c, 1) != 1)
					close(evs[i].data.fd);
			} else {
				close(evs[i].data.fd);  /* the peer went */
			}
		}
	}
	return 0;
}

static int do_connect(const char *addr, const char *port, int n)
{
	struct sockaddr_in sa;
	int *fds = calloc((size_t)n, sizeof(int));

	addr_of(&sa, addr, port);
	for (int i = 0; i < n && !stop; i++) {
		char c = 'x';

		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("connect");
		if (write(fds[i], &c, 1) != 1 || read(fds[i], &c, 1) != 1)
			die("exchange");
	}
	printf("ready %d\n", n);
	fflush(stdout);
	while (!stop)
		pause();
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	more_files();
	if (argc == 4 && !strcmp(argv[1], "listen"))
		return do_listen(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "connect"))
		return do_connect(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: bench_conns listen ADDR PORT | connect ADDR PORT N\n");
	return 2;
}
