/* Shared by test_flowtrack.c and test_flowtrack_attach.c: a private network
 * namespace (unshare in group setup) with the tracker's state directory, and
 * UDP helpers on its lo. Header-only (static inline): each test is one
 * translation unit. */
#ifndef NICSTALL_TEST_FLOWTRACK_TEST_H
#define NICSTALL_TEST_FLOWTRACK_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/loop.h"
#include "nstest.h"
#include "collectors/flows/flowtrack.h"
#include "collectors/flows/flowtrack_api.h"
#include "collectors/flows/flows.h"
#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "lib/netns.h"

static char state_dir[64];
static char netns_name[64];
static int bpf_ok;
static char bpf_why[256];

/* Output of a shell command (in our namespace). */
static inline const char *sh(const char *fmt, ...)
{
	static char out[8192];
	char cmd[512];
	va_list ap;
	size_t n = 0, r;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = '\0';
	p = popen(cmd, "r");
	if (!p)
		return out;
	while (n < sizeof(out) - 1 && (r = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	pclose(p);
	return out;
}

static inline int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		perror("test_flowtrack: private network namespace (needs root)");
		return -1;
	}
	if (system("ip link set lo up") != 0)
		return -1;
	snprintf(state_dir, sizeof(state_dir), "/tmp/flowtrack-test-%d", getpid());
	if (mkdir(state_dir, 0700) < 0)
		return -1;
	flowtrack_set_state_dir(state_dir);
	bpf_ok = flowtrack_supported(bpf_why, sizeof(bpf_why)) == 0;
	if (!bpf_ok)
		fprintf(stderr, "test_flowtrack: BPF unavailable, tests skipped: %s\n", bpf_why);
	return 0;
}

static inline int group_teardown(void **state)
{
	(void)state;
	if (netns_name[0])
		sh("ip netns del %s 2>/dev/null", netns_name);
	sh("rm -rf %s", state_dir);
	return 0;
}

static inline int udp_sock(int family, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &a->sin_addr);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		inet_pton(AF_INET6, addr, &a->sin6_addr);
		sl = sizeof(*a);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	return fd;
}

static inline uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	return ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
				       : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Send n datagrams of len bytes from a to b, and receive them at b. */
static inline void udp_xfer(int a, int b, unsigned n, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char buf[2048];
	unsigned i;

	assert_true(len <= sizeof(buf));
	memset(buf, 'u', sizeof(buf));
	assert_int_equal(getsockname(b, (struct sockaddr *)&ss, &sl), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(sendto(a, buf, len, 0, (struct sockaddr *)&ss, sl), (ssize_t)len);
	for (i = 0; i < n; i++)
		assert_int_equal(recv(b, buf, sizeof(buf), 0), (ssize_t)len);
}

static inline const struct flow_obs *find(const struct nstest_obs *l, uint8_t proto, uint16_t lport,
				   uint16_t rport)
{
	unsigned i;

	for (i = 0; i < l->n; i++)
		if (l->o[i].key.proto == proto && ntohs(l->o[i].key.sport) == lport &&
		    ntohs(l->o[i].key.dport) == rport)
			return &l->o[i];
	return NULL;
}

static inline struct flowtrack *attach_lo_mode(const struct flow_sel *sel, unsigned nsel,
					       enum flowtrack_attach_mode mode)
{
	char err[512] = "";
	struct flowtrack *ft = flowtrack_attach(-1, 1, sel, nsel, 0, mode, err, sizeof(err));

	if (!ft)
		fail_msg("flowtrack_attach lo (%s): %s", flowtrack_attach_name(mode), err);
	return ft;
}

static inline struct flowtrack *attach_lo(const struct flow_sel *sel, unsigned nsel)
{
	return attach_lo_mode(sel, nsel, FLOWTRACK_AUTO);
}

/* The programs on ifindex's tcx hooks in this namespace, in the order the
 * kernel runs them: "in:NAME ... eg:NAME ..." ("" none); BPF_PROG_QUERY on
 * BPF_TCX_INGRESS (46) and BPF_TCX_EGRESS (47). */
static inline const char *tcx_progs(int ifindex)
{
	static char out[1024];
	size_t n = 0;

	out[0] = '\0';
	for (int d = 0; d < 2; d++) {
		__u32 ids[64], cnt = 64, flags = 0;

		if (bpf_prog_query(ifindex, (enum bpf_attach_type)(46 + d), 0, &flags, ids, &cnt) < 0)
			fail_msg("tcx query of ifindex %d: %s", ifindex, strerror(errno));
		for (__u32 i = 0; i < cnt; i++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			memset(&info, 0, sizeof(info));
			assert_true(fd >= 0);
			assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
			close(fd);
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s:%s", n ? " " : "",
					      d ? "eg" : "in", info.name);
		}
	}
	return out;
}

/* tcx_progs of ifname inside namespace nsfd. */
static inline const char *tcx_progs_in(int nsfd, const char *ifname)
{
	const char *out;
	int saved;

	assert_int_equal(netns_enter(nsfd, &saved), 0);
	out = tcx_progs((int)if_nametoindex(ifname));
	assert_int_equal(netns_leave(saved), 0);
	return out;
}

#endif
