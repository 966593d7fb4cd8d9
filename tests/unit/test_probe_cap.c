/* Unit tests for probes/probe_cap.c against the real kernel and libpcap:
 * the test process sits in a private network namespace (unshare) with a
 * veth pair whose peer end lives in a second namespace held only by an fd.
 * Files are checked with libpcap's reader and with tshark. Needs root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nstest.h"
#include "lib/loop.h"
#include "probes/probe_cap.h"
#include "probes/probe_ping.h"

static int nsb = -1;
static char dir[64];



#define NSB "nsenter --net=/proc/%d/fd/%d "

static int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return -1;
	}
	snprintf(dir, sizeof(dir), "/tmp/test_probe_cap.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	nsb = nstest_make_netns();
	if (nsb < 0)
		return -1;
	if (nstest_sh("ip link set lo up && ip link add pc0 type veth peer name pc1 && "
	       "ip link set pc1 netns /proc/%d/fd/%d && "
	       "ip addr add 10.78.0.1/24 dev pc0 && ip link set pc0 up",
	       (int)getpid(), nsb) != 0)
		return -1;
	if (nstest_sh(NSB "sh -c 'ip link set lo up && ip addr add 10.78.0.2/24 dev pc1 && "
	       "ip link set pc1 up'", (int)getpid(), nsb) != 0)
		return -1;
	/* resolve the neighbour once so test traffic is not held by ARP */
	if (nstest_sh("ping -c1 -W2 -q 10.78.0.2 >/dev/null") != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (nsb >= 0)
		close(nsb);
	if (dir[0])
		nstest_sh("rm -rf %s", dir);
	return 0;
}

/* ---- loop helpers ---- */

struct run {
	struct loop *l;
	int done_calls;
	int timed_out;
	struct probe_cap *c;
	int udp;                 /* traffic source, own namespace */
	unsigned n_match, n_other, size;
	int promisc_seen;        /* promiscuity read while the capture ran */
};

static void on_done(struct probe_cap *c, void *arg)
{
	struct run *r = arg;

	r->done_calls++;
	assert_ptr_equal(c, r->c);
	assert_true(probe_cap_finished(c));
	loop_stop(r->l);
}

static void on_guard(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	r->timed_out = 1;
	loop_stop(r->l);
}

static void send_udp(struct run *r, uint16_t port, unsigned n)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	char buf[1400];

	memset(buf, 'x', sizeof(buf));
	inet_pton(AF_INET, "10.78.0.2", &to.sin_addr);
	for (unsigned i = 0; i < n; i++)
		assert_true(sendto(r->udp, buf, r->size, 0, (struct sockaddr *)&to,
				   sizeof(to)) == (ssize_t)r->size);
}

static void on_traffic(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	send_udp(r, 11111, r->n_match);
	send_udp(r, 22222, r->n_other);
}

/* Run the loop; send the UDP traffic 50 ms in; guard after max_ms. */
static void run_loop(struct run *r, unsigned max_ms)
{
	struct loop_timer *g = loop_timer_new(r->l, on_guard, r);
	struct loop_timer *t = loop_timer_new(r->l, on_traffic, r);

	assert_non_null(g);
	assert_non_null(t);
	assert_int_equal(loop_timer_set(g, (uint64_t)max_ms * 1000000ull, 0), 0);
	if (r->n_match || r->n_other)
		assert_int_equal(loop_timer_set(t, 50000000ull, 0), 0);
	assert_int_equal(loop_run(r->l), 0);
	loop_timer_free(g);
	loop_timer_free(t);
}

static void init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->l = loop_new();
	assert_non_null(r->l);
	r->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(r->udp >= 0);
	r->size = 400;
}

static void fini(struct run *r)
{
	probe_cap_free(r->c);
	close(r->udp);
	loop_free(r->l);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s.pcap", dir, name);
}

/* Packets tshark reads from the file, or -1. */
static int tshark_count(const char *path)
{
	char cmd[512], line[64];
	FILE *f;
	int n = 0, last = 0;

	snprintf(cmd, sizeof(cmd), "tshark -r %s -T fields -e frame.number 2>/dev/null; "
		 "echo rc=$?", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "rc=", 3)) {
			if (atoi(line + 3) != 0)
				n = -1;
			break;
		}
		last = atoi(line);
		if (last != n + 1) {
			n = -1;
			break;
		}
		n = last;
	}
	pclose(f);
	return n;
}

struct file_check {
	int packets;
	unsigned max_caplen;
	unsigned min_len;
	int other_port;          /* records whose UDP dst port is not 11111 */
};

static void read_file(const char *path, struct file_check *fc, int check_udp)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, eb);
	struct pcap_pkthdr *h;
	const u_char *d;

	memset(fc, 0, sizeof(*fc));
	fc->min_len = ~0u;
	assert_non_null(p);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	while (pcap_next_ex(p, &h, &d) == 1) {
		fc->packets++;
		if (h->caplen > fc->max_caplen)
			fc->max_caplen = h->caplen;
		if (h->len < fc->min_len)
			fc->min_len = h->len;
		if (check_udp) {
			/* Ethernet, IPv4 without options, UDP */
			assert_true(h->caplen >= 14 + 20 + 8);
			assert_int_equal(d[12] << 8 | d[13], 0x0800);
			assert_int_equal(d[14 + 9], IPPROTO_UDP);
			if ((d[14 + 20 + 2] << 8 | d[14 + 20 + 3]) != 11111)
				fc->other_port++;
		}
	}
	pcap_close(p);
}

static unsigned promiscuity(const char *ifname)
{
	char cmd[256];
	FILE *f;
	unsigned v = 999;

	snprintf(cmd, sizeof(cmd), "ip -d link show %s | grep -o 'promiscuity [0-9]*' "
		 "| cut -d' ' -f2", ifname);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%u", &v), 1);
	pclose(f);
	return v;
}

static unsigned siocgifflags(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	close(fd);
	return (unsigned short)ifr.ifr_flags;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- tests ---- */

static void ping_done(struct probe_ping *p, void *arg)
{
	(void)p;
	(void)arg;
}

static void probe_cap_start__ping_across_veth__file_matches_tshark(void **state)
{
	struct run r;
	char err[512], path[128];
	struct probe_ping *pg;
	const struct probe_cap_result *res;
	struct file_check fc;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "ping");
	/* 5 echoes + 5 replies seen on pc0 */
	r.c = probe_cap_start(r.l, -1, "pc0", "icmp", 0, 128, 3000000000ull, 10, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	pg = probe_ping_start(r.l, -1, "pc0", "10.78.0.2", 5, 20000000ull, 500000000ull,
			      ping_done, NULL, err, sizeof(err));
	assert_non_null(pg);
	assert_int_equal(r.done_calls, 0);
	run_loop(&r, 5000);
	assert_false(r.timed_out);
	assert_int_equal(r.done_calls, 1);
	res = probe_cap_result(r.c);
	assert_int_equal(res->packets, 10);
	assert_string_equal(res->stop_reason, "packets");
	assert_string_equal(res->error, "");
	assert_string_equal(res->path, path);
	assert_true(res->end_ns > res->start_ns);
	read_file(path, &fc, 0);
	assert_int_equal(fc.packets, 10);
	assert_int_equal(tshark_count(path), 10);
	assert_int_equal(res->bytes, 10 * 16 + 10 * 98);  /* 14 + 20 + 8 + 56 */
	probe_ping_free(pg);
	fini(&r);
}

static void probe_cap_start__other_namespace_snaplen_filter__respected(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;
	struct file_check fc;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "snap");
	r.n_match = 5;
	r.n_other = 5;
	/* capture the receiving end, inside the other namespace */
	r.c = probe_cap_start(r.l, nsb, "pc1", "udp and dst port 11111", 0, 96,
			      400000000ull, 0, 0, path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	run_loop(&r, 5000);
	assert_false(r.timed_out);
	assert_int_equal(r.done_calls, 1);
	res = probe_cap_result(r.c);
	assert_string_equal(res->stop_reason, "duration");
	assert_int_equal(res->packets, 5);
	assert_int_equal(res->bytes, 5 * (16 + 96));
	read_file(path, &fc, 1);
	assert_int_equal(fc.packets, 5);
	assert_int_equal(fc.max_caplen, 96);         /* snaplen respected */
	assert_int_equal(fc.min_len, 14 + 20 + 8 + 400);
	assert_int_equal(fc.other_port, 0);          /* filter respected */
	assert_int_equal(tshark_count(path), 5);
	fini(&r);
}

static void probe_cap_start__max_packets__stops_there(void **state)
{
	struct run r;
	char err[512], path[128];
	struct file_check fc;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "maxpk");
	r.n_match = 20;
	r.c = probe_cap_start(r.l, -1, "pc0", "udp", 0, 0, 3000000000ull, 3, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	run_loop(&r, 5000);
	assert_int_equal(r.done_calls, 1);
	assert_string_equal(probe_cap_result(r.c)->stop_reason, "packets");
	assert_int_equal(probe_cap_result(r.c)->packets, 3);
	read_file(path, &fc, 1);
	assert_int_equal(fc.packets, 3);
	assert_int_equal(fc.max_caplen, 128);        /* default snaplen */
	assert_int_equal(tshark_count(path), 3);
	fini(&r);
}

static void probe_cap_start__max_bytes__never_exceeded(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;
	struct file_check fc;
	struct stat st;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "maxby");
	r.n_match = 20;
	/* room for 3 records of 16 + 128 bytes, not 4 */
	r.c = probe_cap_start(r.l, -1, "pc0", "udp", 0, 128, 3000000000ull, 0,
			      3 * 144 + 100, path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	run_loop(&r, 5000);
	assert_int_equal(r.done_calls, 1);
	res = probe_cap_result(r.c);
	assert_string_equal(res->stop_reason, "bytes");
	assert_int_equal(res->packets, 3);
	assert_int_equal(res->bytes, 3 * 144);
	read_file(path, &fc, 1);
	assert_int_equal(fc.packets, 3);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 24 + 3 * 144);
	fini(&r);
}

static void probe_cap_start__quiet_port__stops_at_duration(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;
	uint64_t t0, el;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "quiet");
	t0 = loop_mono_ns();
	r.c = probe_cap_start(r.l, -1, "pc0", "tcp port 11111", 0, 0, 200000000ull, 100,
			      0, path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	run_loop(&r, 3000);
	el = loop_mono_ns() - t0;
	assert_int_equal(r.done_calls, 1);
	res = probe_cap_result(r.c);
	assert_string_equal(res->stop_reason, "duration");
	assert_int_equal(res->packets, 0);
	assert_true(el >= 200000000ull);
	assert_true(el < 1000000000ull);
	assert_true(res->end_ns - res->start_ns >= 200000000ull);
	assert_int_equal(tshark_count(path), 0);     /* valid, empty */
	fini(&r);
}

static void on_peek(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	r->promisc_seen = (int)promiscuity("pc0");
}

static void probe_cap_start__promisc_on_plain_port__transition_and_restored(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;
	struct loop_timer *peek;

	(void)state;
	assert_int_equal(promiscuity("pc0"), 0);
	init(&r);
	path_of(path, sizeof(path), "prom");
	r.c = probe_cap_start(r.l, -1, "pc0", "icmp", 1, 0, 300000000ull, 0, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	res = probe_cap_result(r.c);
	assert_int_equal(res->promisc_requested, 1);
	assert_int_equal(res->was_promisc_before, 0);
	assert_int_equal(res->promisc_after_open, 1);
	assert_int_equal(res->transition, 1);
	assert_int_equal(res->promiscuity_before, 0);
	assert_int_equal(res->promiscuity_after, 1);
	/* the membership does not show as IFF_PROMISC in the flags */
	assert_false(siocgifflags("pc0") & IFF_PROMISC);
	peek = loop_timer_new(r.l, on_peek, &r);
	assert_non_null(peek);
	assert_int_equal(loop_timer_set(peek, 100000000ull, 0), 0);
	run_loop(&r, 3000);
	loop_timer_free(peek);
	assert_int_equal(r.done_calls, 1);
	assert_int_equal(r.promisc_seen, 1);         /* promiscuous while running */
	assert_int_equal(res->promisc_after_close, 0);
	assert_int_equal(promiscuity("pc0"), 0);     /* released at the stop */
	fini(&r);
	assert_int_equal(promiscuity("pc0"), 0);
}

static void probe_cap_start__promisc_on_promisc_port__no_transition(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;

	(void)state;
	assert_int_equal(nstest_sh("ip link set pc0 promisc on"), 0);
	init(&r);
	path_of(path, sizeof(path), "prom2");
	r.c = probe_cap_start(r.l, -1, "pc0", NULL, 1, 0, 100000000ull, 0, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	res = probe_cap_result(r.c);
	assert_int_equal(res->was_promisc_before, 1);
	assert_true(res->flags_before & IFF_PROMISC);
	assert_int_equal(res->promisc_after_open, 1);
	assert_int_equal(res->transition, 0);
	assert_int_equal(res->promiscuity_after, 2);
	fini(&r);
	assert_true(siocgifflags("pc0") & IFF_PROMISC);  /* the user's setting stays */
	assert_int_equal(promiscuity("pc0"), 1);
	assert_int_equal(nstest_sh("ip link set pc0 promisc off"), 0);
	assert_int_equal(promiscuity("pc0"), 0);
}

static void probe_cap_start__not_promisc__port_untouched(void **state)
{
	struct run r;
	char err[512], path[128];
	const struct probe_cap_result *res;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "noprom");
	r.c = probe_cap_start(r.l, -1, "pc0", NULL, 0, 0, 100000000ull, 0, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	res = probe_cap_result(r.c);
	assert_int_equal(res->promisc_requested, 0);
	assert_int_equal(res->was_promisc_before, 0);
	assert_int_equal(res->promisc_after_open, 0);
	assert_int_equal(res->transition, 0);
	assert_int_equal(promiscuity("pc0"), 0);
	fini(&r);
}

static void probe_cap_start__missing_interface__fails_naming_it(void **state)
{
	struct run r;
	char err[512], path[128];
	int fds;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "missing");
	fds = count_fds();
	assert_null(probe_cap_start(r.l, -1, "nosuch9", "icmp", 1, 0, 100000000ull, 0, 0,
				    path, on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "nosuch9"));
	assert_non_null(strstr(err, "own netns"));
	assert_int_equal(count_fds(), fds);          /* nothing leaks */
	assert_int_equal(access(path, F_OK), -1);    /* no stray file */
	/* pc0 lives in this namespace, not in the other one */
	assert_null(probe_cap_start(r.l, nsb, "pc0", NULL, 0, 0, 100000000ull, 0, 0,
				    path, on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "pc0"));
	assert_non_null(strstr(err, "net:["));
	assert_int_equal(count_fds(), fds);
	run_loop(&r, 200);
	assert_int_equal(r.done_calls, 0);
	fini(&r);
}

static void probe_cap_start__bad_input__fails_port_untouched(void **state)
{
	struct run r;
	char err[512], path[128];
	int fds;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "bad");
	fds = count_fds();
	assert_null(probe_cap_start(r.l, -1, "pc0", "tcp and hots 10.0.0.1", 1, 0,
				    100000000ull, 0, 0, path, on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "bad filter"));
	assert_non_null(strstr(err, "pc0"));
	assert_int_equal(promiscuity("pc0"), 0);
	assert_null(probe_cap_start(r.l, -1, "pc0", NULL, 0, 0, 0, 0, 0, path,
				    on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "no stop condition"));
	assert_null(probe_cap_start(r.l, -1, "pc0", NULL, 0, 0, 100000000ull, 0, 0,
				    "/nonexistent-dir/x.pcap", on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent-dir/x.pcap"));
	assert_int_equal(count_fds(), fds);
	fini(&r);
}

/* The review's overwrite: a symbolic link planted at the predictable pcap
 * name, pointing to a root-owned 0600 file. The landed code followed it
 * with fopen("wbe"), truncated the file to a pcap header and removed the
 * link afterwards; now the name is refused and both stay as they were. */
static void probe_cap_start__planted_symlink__refused_target_untouched(void **state)
{
	struct run r;
	char err[512], path[128], victim[128], buf[64] = "";
	struct stat st;
	FILE *f;
	int fds;

	(void)state;
	init(&r);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("root's secret", f);
	fclose(f);
	assert_int_equal(chmod(victim, 0600), 0);
	path_of(path, sizeof(path), "inv1-port-plain");
	assert_int_equal(symlink(victim, path), 0);
	fds = count_fds();
	assert_null(probe_cap_start(r.l, -1, "pc0", "icmp", 0, 0, 100000000ull, 0, 0, path,
				    on_done, &r, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "exists already"));
	assert_int_equal(count_fds(), fds);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "root's secret");
	assert_int_equal(lstat(path, &st), 0);          /* the link is not ours to remove */
	assert_true(S_ISLNK(st.st_mode));
	/* a regular file planted there is kept too */
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	assert_null(probe_cap_start(r.l, -1, "pc0", "icmp", 0, 0, 100000000ull, 0, 0, path,
				    on_done, &r, err, sizeof(err)));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 1);
	unlink(path);
	fini(&r);
}

static void on_cancel(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	probe_cap_free(r->c);
	r->c = NULL;
}

static void probe_cap_free__while_running__no_done_file_valid(void **state)
{
	struct run r;
	char err[512], path[128];
	struct loop_timer *c;
	struct file_check fc;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "cancel");
	r.n_match = 4;
	r.c = probe_cap_start(r.l, -1, "pc0", "udp", 1, 0, 5000000000ull, 0, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	c = loop_timer_new(r.l, on_cancel, &r);
	assert_non_null(c);
	assert_int_equal(loop_timer_set(c, 200000000ull, 0), 0);
	run_loop(&r, 600);
	loop_timer_free(c);
	assert_true(r.timed_out);
	assert_int_equal(r.done_calls, 0);
	assert_null(r.c);
	assert_int_equal(promiscuity("pc0"), 0);
	read_file(path, &fc, 1);
	assert_int_equal(fc.packets, 4);             /* flushed on free */
	assert_int_equal(tshark_count(path), 4);
	fini(&r);
}

static void probe_cap_to_json__after_run__fields(void **state)
{
	struct run r;
	char err[512], path[128];
	struct json_object *o, *v;

	(void)state;
	init(&r);
	path_of(path, sizeof(path), "json");
	r.n_match = 2;
	r.c = probe_cap_start(r.l, -1, "pc0", "udp", 1, 64, 3000000000ull, 2, 0,
			      path, on_done, &r, err, sizeof(err));
	assert_non_null(r.c);
	run_loop(&r, 3000);
	o = json_object_new_object();
	assert_int_equal(probe_cap_to_json(r.c, o), 0);
	assert_true(json_object_object_get_ex(o, "packets", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(o, "stop_reason", &v));
	assert_string_equal(json_object_get_string(v), "packets");
	assert_true(json_object_object_get_ex(o, "transition", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "promisc_after_close", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "ifname", &v));
	assert_string_equal(json_object_get_string(v), "pc0");
	assert_true(json_object_object_get_ex(o, "snaplen", &v));
	assert_int_equal(json_object_get_int(v), 64);
	json_object_put(o);
	fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_cap_start__ping_across_veth__file_matches_tshark),
		cmocka_unit_test(probe_cap_start__other_namespace_snaplen_filter__respected),
		cmocka_unit_test(probe_cap_start__max_packets__stops_there),
		cmocka_unit_test(probe_cap_start__max_bytes__never_exceeded),
		cmocka_unit_test(probe_cap_start__quiet_port__stops_at_duration),
		cmocka_unit_test(probe_cap_start__promisc_on_plain_port__transition_and_restored),
		cmocka_unit_test(probe_cap_start__promisc_on_promisc_port__no_transition),
		cmocka_unit_test(probe_cap_start__not_promisc__port_untouched),
		cmocka_unit_test(probe_cap_start__missing_interface__fails_naming_it),
		cmocka_unit_test(probe_cap_start__bad_input__fails_port_untouched),
		cmocka_unit_test(probe_cap_start__planted_symlink__refused_target_untouched),
		cmocka_unit_test(probe_cap_free__while_running__no_done_file_valid),
		cmocka_unit_test(probe_cap_to_json__after_run__fields),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
