/* Shared by test_flow_sockdiag.c and test_flow_sockdiag_poll.c: the private
 * network namespace (unshare in group setup), loopback TCP connections with
 * unread data, and a poll into an observation list. Header-only (static
 * inline): each test is one translation unit. */
#ifndef NICSTALL_TEST_SOCKDIAG_TEST_H
#define NICSTALL_TEST_SOCKDIAG_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/sockread.h"
#include "guardbuf.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "nstest.h"

static int host_ns = -1;

static inline int group_setup(void **state)
{
	(void)state;
	host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (host_ns < 0 || unshare(CLONE_NEWNET) < 0) {
		perror("test_flow_sockdiag: private network namespace (needs root)");
		return -1;
	}
	if (system("ip link set lo up") != 0) {
		fprintf(stderr, "test_flow_sockdiag: ip link set lo up failed\n");
		return -1;
	}
	return 0;
}

static inline int group_teardown(void **state)
{
	(void)state;
	if (host_ns >= 0)
		close(host_ns);
	return 0;
}

/* A connected TCP pair over loopback: c = client, s = accepted server end. */
struct conn {
	int l, c, s;
	uint16_t lport, cport;  /* host order */
};

/* The pairs opened and not closed yet, by their descriptors (a failed
 * test's struct conn is gone with its frame): conns_teardown() closes
 * them, so a failed test's sockets are not found by the tests after it. */
#define CONNS_OPEN_MAX 256
static int conns_open_fd[CONNS_OPEN_MAX][3];
static unsigned conns_open_n;

static inline void conns_teardown(void)
{
	for (unsigned i = 0; i < conns_open_n; i++)
		for (int j = 0; j < 3; j++)
			close(conns_open_fd[i][j]);
	conns_open_n = 0;
}

static inline void conn_open(struct conn *k, int family)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		sl = sizeof(*a);
	}
	k->l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(k->l >= 0);
	setsockopt(k->l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(k->l, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(listen(k->l, 4), 0);
	assert_int_equal(getsockname(k->l, (struct sockaddr *)&ss, &sl), 0);
	k->c = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(k->c >= 0);
	assert_int_equal(connect(k->c, (struct sockaddr *)&ss, sl), 0);
	k->s = accept(k->l, NULL, NULL);
	assert_true(k->s >= 0);
	k->lport = family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				     : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	sl = sizeof(ss);
	assert_int_equal(getsockname(k->c, (struct sockaddr *)&ss, &sl), 0);
	k->cport = family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				     : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	if (conns_open_n < CONNS_OPEN_MAX) {    /* past it: not closed for it */
		conns_open_fd[conns_open_n][0] = k->l;
		conns_open_fd[conns_open_n][1] = k->c;
		conns_open_fd[conns_open_n++][2] = k->s;
	}
}

static inline void conn_close(struct conn *k)
{
	for (unsigned i = 0; i < conns_open_n; i++)
		if (conns_open_fd[i][1] == k->c) {
			memmove(conns_open_fd[i], conns_open_fd[i + 1],
				(conns_open_n - i - 1) * sizeof(conns_open_fd[0]));
			conns_open_n--;
			break;
		}
	close(k->c);
	close(k->s);
	close(k->l);
}

/* n request/response rounds over k: "ping" from the client, read by the
 * server, "pong" back, read by the client (one read a round each end). */
static inline void conn_echo(const struct conn *k, int n)
{
	char b[8];

	for (int i = 0; i < n; i++) {
		assert_int_equal(write(k->c, "ping", 4), 4);
		assert_int_equal(read(k->s, b, sizeof(b)), 4);
		assert_int_equal(write(k->s, "pong", 4), 4);
		assert_int_equal(read(k->c, b, sizeof(b)), 4);
	}
}

/* The BPF socket reader's and the kernel-event watch's key for our end
 * (fd) of an IPv4 loopback connection. */
static inline void key_for(struct sr_key *k, int fd, uint16_t lport, uint16_t rport)
{
	socklen_t len = sizeof(k->cookie);

	memset(k, 0, sizeof(*k));
	k->laddr[3] = k->raddr[3] = htonl(INADDR_LOOPBACK);
	k->lport = htons(lport);
	k->rport = htons(rport);
	k->v4 = 1;
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &k->cookie, &len), 0);
}

/* A TCP listener on a inside namespace nsfd; then a client of ours
 * connected to it (*cs) and its accepted end (*ss). */
static inline int ns_listen(int nsfd, const struct sockaddr_in *a)
{
	int ls = netns_socket(nsfd, AF_INET, SOCK_STREAM, 0), one = 1;

	assert_true(ls >= 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(ls, (const struct sockaddr *)a, sizeof(*a)), 0);
	assert_int_equal(listen(ls, 4), 0);
	return ls;
}

static inline void ns_connect(int ls, const struct sockaddr_in *a, int *cs, int *ss)
{
	*cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*cs >= 0);
	assert_int_equal(connect(*cs, (const struct sockaddr *)a, sizeof(*a)), 0);
	*ss = accept(ls, NULL, NULL);
	assert_true(*ss >= 0);
}

static inline const struct flow_obs *find(const struct nstest_obs *l, uint16_t lport, uint16_t rport)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (ntohs(l->o[i].key.sport) == lport && ntohs(l->o[i].key.dport) == rport)
			return &l->o[i];
	return NULL;
}

static inline int poll_into(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		     struct nstest_obs *l)
{
	char err[256] = "";
	int n;

	l->n = 0;
	n = sockdiag_poll(sd, sel, nsel, nstest_collect, l, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "sockdiag_poll: %s\n", err);
	return n;
}

#endif
