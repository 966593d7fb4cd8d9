/* Unit tests for collectors/counters/src_ethtool.c and collectors/counters/src_netdev.c
 * against the real kernel: the test process moves into a private network
 * namespace (unshare), makes veth pairs there and checks the sources against
 * what `ethtool -S` and `ip -s -s -j link show` print. A second namespace
 * (held only by an fd) checks that ctx->netns_fd is honoured. Needs root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include <json-c/json.h>

#include "nstest.h"
#include "collectors/counters/counters.h"
#include "lib/netns.h"
#include "collectors/counters/src_ethtool.h"
#include "collectors/counters/src_netdev.h"

static int nsb = -1;            /* second namespace, held by this fd */

/* ---- helpers ---- */


/* A fresh namespace that outlives its only process through the fd. */

/* Run a shell command inside namespace fd (via /proc/PID/fd/N). */
#define NSB "nsenter --net=/proc/%d/fd/%d "

/* Send count broadcast frames of a local experimental ethertype on ifname,
 * from a packet socket made in nsfd. */
static void send_frames(int nsfd, const char *ifname, unsigned ifindex_in_ns,
			int count)
{
	unsigned char frame[60];
	struct sockaddr_ll sll;
	int fd = netns_socket(nsfd, AF_PACKET, SOCK_RAW, 0);

	assert_true(fd >= 0);
	memset(frame, 0, sizeof(frame));
	memset(frame, 0xff, 6);
	frame[6] = 0x02;
	frame[12] = 0x88;
	frame[13] = 0xb5;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)(ifindex_in_ns ? ifindex_in_ns : if_nametoindex(ifname));
	sll.sll_halen = 6;
	memset(sll.sll_addr, 0xff, 6);
	assert_true(sll.sll_ifindex > 0);
	for (int i = 0; i < count; i++)
		assert_int_equal(sendto(fd, frame, sizeof(frame), 0,
					(struct sockaddr *)&sll, sizeof(sll)),
				 (int)sizeof(frame));
	close(fd);
}

struct kv {
	unsigned n;
	char names[512][40];
	uint64_t vals[512];
};

/* Parse `ethtool -S` output: "     name: value" after "NIC statistics:". */
static void ethtool_S(const char *cmd, struct kv *kv)
{
	char line[512];
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	kv->n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strrchr(line, ':'), *name = line, *end;

		if (!colon || !strncmp(line, "NIC statistics", 14))
			continue;
		while (*name == ' ')
			name++;
		*colon = '\0';
		assert_true(kv->n < 512);
		assert_true(strlen(name) < sizeof(kv->names[0]));
		strcpy(kv->names[kv->n], name);
		errno = 0;
		kv->vals[kv->n] = strtoull(colon + 1, &end, 10);
		assert_int_equal(errno, 0);
		kv->n++;
	}
	assert_int_equal(pclose(f), 0);
}

static struct src *src_open_ok(const struct src_ops *ops, const char *ifname,
			       int ifindex, int nsfd)
{
	struct src_ctx ctx = { .port_name = "p", .ifname = ifname,
			       .ifindex = ifindex, .netns_fd = nsfd,
			       .sysfs_root = "" };
	struct src *s = calloc(1, sizeof(*s));
	int rc;

	assert_non_null(s);
	s->ops = ops;
	rc = ops->open(s, &ctx);
	if (rc != 0)
		print_error("open %s: %d %s\n", ifname, rc, s->err);
	assert_int_equal(rc, 0);
	assert_ptr_equal(s->ops, ops);
	return s;
}

static void src_free(struct src *s)
{
	s->ops->close(s);
	free(s);
}

/* Sources equal the tool: same names in order, tool value between two
 * reads taken before and after it. */
static void check_ethtool_matches(struct src *s, const char *cmd)
{
	static struct kv tool;
	struct clayout *lay, *lay2;
	const uint64_t *v;
	uint64_t before[512];

	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_true(lay->n > 0 && lay->n <= 512);
	memcpy(before, v, lay->n * sizeof(v[0]));
	ethtool_S(cmd, &tool);
	assert_int_equal(s->ops->read(s, &lay2, &v), 0);
	assert_ptr_equal(lay2, lay);
	assert_int_equal(tool.n, lay->n);
	for (unsigned i = 0; i < lay->n; i++) {
		assert_string_equal(lay->names[i], tool.names[i]);
		assert_true(before[i] <= tool.vals[i]);
		assert_true(tool.vals[i] <= v[i]);
	}
}

/* ---- group ---- */

static int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (needs root)\n",
			strerror(errno));
		return -1;
	}
	/* No IPv6 autoconf/MLD chatter: counters move only when we send. */
	nstest_sh("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
	   "net.ipv6.conf.default.disable_ipv6=1 2>/dev/null");
	if (nstest_sh("ip link set lo up && ip link add t0 type veth peer name t1 && "
	       "ip link set t0 up && ip link set t1 up") != 0)
		return -1;
	nsb = nstest_make_netns();
	if (nsb < 0)
		return -1;
	if (nstest_sh(NSB "sh -c 'sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
	       "net.ipv6.conf.default.disable_ipv6=1 2>/dev/null; "
	       "ip link add x0 type veth peer name x1 && ip link set x0 up && "
	       "ip link set x1 up'", (int)getpid(), nsb) != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (nsb >= 0)
		close(nsb);     /* the namespace and its links go with it */
	return 0;
}

/* ---- src_ethtool ---- */

static void src_ethtool_read__veth__names_and_values_match_ethtool_S(void **state)
{
	struct src *s = src_open_ok(&src_ethtool_ops, "t0", 0, -1);
	struct clayout *lay;
	const uint64_t *v;
	int i;

	(void)state;
	send_frames(-1, "t0", 0, 5);
	check_ethtool_matches(s, "ethtool -S t0");
	/* A value we know independently: veth reports its peer's ifindex. */
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	i = clayout_find(lay, "peer_ifindex");
	assert_true(i >= 0);
	assert_int_equal(v[i], if_nametoindex("t1"));
	src_free(s);
}

static void src_ethtool_read__unchanged_names__same_layout_pointer(void **state)
{
	struct src *s = src_open_ok(&src_ethtool_ops, "t0", 0, -1);
	struct clayout *a, *b, *c;
	const uint64_t *v;

	(void)state;
	assert_int_equal(s->ops->read(s, &a, &v), 0);
	clayout_ref(a);
	assert_int_equal(s->ops->read(s, &b, &v), 0);
	assert_int_equal(s->ops->read(s, &c, &v), 0);
	assert_ptr_equal(a, b);
	assert_ptr_equal(b, c);
	assert_int_equal(a->refs, 2);   /* ours + the source's: none leaked */
	clayout_unref(a);
	src_free(s);
}

static void src_ethtool_read__channels_changed__new_layout(void **state)
{
	struct src *s;
	struct clayout *a, *b;
	const uint64_t *v;
	unsigned n1;

	(void)state;
	/* veth counters are per queue: more queues, more names. */
	assert_int_equal(nstest_sh("ip link add q0 numrxqueues 4 numtxqueues 4 type veth "
			    "peer name q1 numrxqueues 4 numtxqueues 4 && "
			    "ip link set q0 up && ip link set q1 up"), 0);
	s = src_open_ok(&src_ethtool_ops, "q0", 0, -1);
	assert_int_equal(s->ops->read(s, &a, &v), 0);
	n1 = a->n;
	clayout_ref(a);
	if (nstest_sh("ethtool -L q0 rx 2 2>/dev/null") != 0) {
		clayout_unref(a);
		src_free(s);
		nstest_sh("ip link del q0");
		skip();
	}
	assert_int_equal(s->ops->read(s, &b, &v), 0);
	assert_true(b != a);
	assert_true(b->n < n1);
	assert_int_equal(a->refs, 1);   /* the source let go of the old one */
	clayout_unref(a);
	check_ethtool_matches(s, "ethtool -S q0");
	src_free(s);
	assert_int_equal(nstest_sh("ip link del q0"), 0);
}

static void src_ethtool_read__link_deleted__enodev_names_interface(void **state)
{
	struct src *s;
	struct clayout *lay;
	const uint64_t *v;

	(void)state;
	assert_int_equal(nstest_sh("ip link add e0 type veth peer name e1"), 0);
	s = src_open_ok(&src_ethtool_ops, "e0", 0, -1);
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_int_equal(nstest_sh("ip link del e0"), 0);
	assert_int_equal(s->ops->read(s, &lay, &v), -ENODEV);
	assert_non_null(strstr(s->err, "e0"));
	assert_non_null(strstr(s->err, "own netns"));
	assert_non_null(strstr(s->err, strerror(ENODEV)));
	src_free(s);
}

static void src_ethtool_open__loopback__eopnotsupp(void **state)
{
	struct src_ctx ctx = { .ifname = "lo", .netns_fd = -1, .sysfs_root = "" };
	struct src s = { 0 };

	(void)state;
	assert_int_equal(src_ethtool_ops.open(&s, &ctx), -EOPNOTSUPP);
	assert_null(s.priv);
	assert_non_null(strstr(s.err, "lo"));
	assert_non_null(strstr(s.err, "no statistics"));
}

static void src_ethtool_open__absent__enodev(void **state)
{
	struct src_ctx ctx = { .ifname = "nosuch9", .netns_fd = -1, .sysfs_root = "" };
	struct src s = { 0 };

	(void)state;
	assert_int_equal(src_ethtool_ops.open(&s, &ctx), -ENODEV);
	assert_non_null(strstr(s.err, "nosuch9"));
}

static void src_ethtool_open__name_too_long__einval(void **state)
{
	struct src_ctx ctx = { .ifname = "abcdefghijklmnopq", .netns_fd = -1,
			       .sysfs_root = "" };
	struct src s = { 0 };

	(void)state;
	assert_int_equal(src_ethtool_ops.open(&s, &ctx), -EINVAL);
	assert_non_null(strstr(s.err, "abcdefghijklmnopq"));
}

static void src_ethtool_read__other_namespace__reads_link_there(void **state)
{
	char cmd[128];
	struct src *s;

	(void)state;
	assert_int_equal(if_nametoindex("x0"), 0);      /* not here */
	s = src_open_ok(&src_ethtool_ops, "x0", 0, nsb);
	snprintf(cmd, sizeof(cmd), NSB "ethtool -S x0", (int)getpid(), nsb);
	check_ethtool_matches(s, cmd);
	src_free(s);
}

/* ---- src_netdev ---- */

static const struct { const char *dir, *key, *name; } ipmap[] = {
	{ "rx", "bytes", "rx_bytes" }, { "rx", "packets", "rx_packets" },
	{ "rx", "errors", "rx_errors" }, { "rx", "dropped", "rx_dropped" },
	{ "rx", "over_errors", "rx_over_errors" }, { "rx", "multicast", "multicast" },
	{ "rx", "length_errors", "rx_length_errors" },
	{ "rx", "crc_errors", "rx_crc_errors" },
	{ "rx", "frame_errors", "rx_frame_errors" },
	{ "rx", "fifo_errors", "rx_fifo_errors" },
	{ "rx", "missed_errors", "rx_missed_errors" },
	{ "rx", "nohandler", "rx_nohandler" },
	{ "tx", "bytes", "tx_bytes" }, { "tx", "packets", "tx_packets" },
	{ "tx", "errors", "tx_errors" }, { "tx", "dropped", "tx_dropped" },
	{ "tx", "carrier_errors", "tx_carrier_errors" },
	{ "tx", "collisions", "collisions" },
	{ "tx", "aborted_errors", "tx_aborted_errors" },
	{ "tx", "fifo_errors", "tx_fifo_errors" },
	{ "tx", "window_errors", "tx_window_errors" },
	{ "tx", "heartbeat_errors", "tx_heartbeat_errors" },
};

static void check_netdev_matches_ip(struct src *s, const char *ifname)
{
	struct clayout *lay, *lay2;
	const uint64_t *v;
	uint64_t before[64];
	char cmd[128], buf[8192];
	struct json_object *root, *st, *dir, *val;
	unsigned compared = 0;
	size_t len;
	FILE *f;

	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_true(lay->n >= 24 && lay->n <= 64);
	memcpy(before, v, lay->n * sizeof(v[0]));
	snprintf(cmd, sizeof(cmd), "ip -s -s -j link show %s", ifname);
	f = popen(cmd, "r");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	assert_int_equal(pclose(f), 0);
	assert_int_equal(s->ops->read(s, &lay2, &v), 0);
	assert_ptr_equal(lay, lay2);

	root = json_tokener_parse(buf);
	assert_non_null(root);
	assert_true(json_object_is_type(root, json_type_array));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(root, 0),
					      "stats64", &st));
	for (size_t i = 0; i < sizeof(ipmap) / sizeof(ipmap[0]); i++) {
		int k;
		uint64_t tool;

		if (!json_object_object_get_ex(st, ipmap[i].dir, &dir) ||
		    !json_object_object_get_ex(dir, ipmap[i].key, &val))
			continue;
		k = clayout_find(lay, ipmap[i].name);
		assert_true(k >= 0);
		tool = (uint64_t)json_object_get_int64(val);
		assert_true(before[k] <= tool);
		assert_true(tool <= v[k]);
		compared++;
	}
	json_object_put(root);
	assert_true(compared >= 20);
}

static void src_netdev_read__veth__values_match_ip_json(void **state)
{
	struct src *s0 = src_open_ok(&src_netdev_ops, "t0", 0, -1);
	struct src *s1 = src_open_ok(&src_netdev_ops, "t1", 0, -1);
	struct clayout *lay;
	const uint64_t *v;
	uint64_t tx0, rx1;
	int itx, irx;

	(void)state;
	assert_int_equal(s0->ops->read(s0, &lay, &v), 0);
	itx = clayout_find(lay, "tx_packets");
	assert_true(itx >= 0);
	tx0 = v[itx];
	assert_int_equal(s1->ops->read(s1, &lay, &v), 0);
	irx = clayout_find(lay, "rx_packets");
	assert_true(irx >= 0);
	rx1 = v[irx];

	send_frames(-1, "t0", 0, 7);
	assert_int_equal(s0->ops->read(s0, &lay, &v), 0);
	assert_int_equal(v[itx] - tx0, 7);
	assert_int_equal(s1->ops->read(s1, &lay, &v), 0);
	assert_int_equal(v[irx] - rx1, 7);

	check_netdev_matches_ip(s0, "t0");
	check_netdev_matches_ip(s1, "t1");
	src_free(s0);
	src_free(s1);
}

static void src_netdev_read__names__rtnl_link_stats64_order(void **state)
{
	struct src *s = src_open_ok(&src_netdev_ops, "t0", 0, -1);
	struct clayout *lay;
	const uint64_t *v;

	(void)state;
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_true(lay->n >= 24);
	assert_string_equal(lay->names[0], "rx_packets");
	assert_string_equal(lay->names[3], "tx_bytes");
	assert_string_equal(lay->names[8], "multicast");
	assert_string_equal(lay->names[9], "collisions");
	assert_string_equal(lay->names[23], "rx_nohandler");
	src_free(s);
}

static void src_netdev_read__by_ifindex__same_as_by_name(void **state)
{
	int idx = (int)if_nametoindex("t1");
	struct src *a = src_open_ok(&src_netdev_ops, "t1", 0, -1);
	struct src *b = src_open_ok(&src_netdev_ops, NULL, idx, -1);
	struct clayout *la, *lb;
	const uint64_t *va, *vb;

	(void)state;
	assert_int_equal(a->ops->read(a, &la, &va), 0);
	assert_int_equal(b->ops->read(b, &lb, &vb), 0);
	assert_true(clayout_equal(la, lb));
	assert_memory_equal(va, vb, 4 * sizeof(uint64_t));   /* packets, bytes */
	src_free(a);
	src_free(b);
}

static void src_netdev_read__link_deleted__enodev_names_interface(void **state)
{
	struct src *s;
	struct clayout *lay;
	const uint64_t *v;

	(void)state;
	assert_int_equal(nstest_sh("ip link add f0 type veth peer name f1"), 0);
	s = src_open_ok(&src_netdev_ops, "f0", 0, -1);
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_int_equal(nstest_sh("ip link del f0"), 0);
	assert_int_equal(s->ops->read(s, &lay, &v), -ENODEV);
	assert_non_null(strstr(s->err, "f0"));
	assert_non_null(strstr(s->err, strerror(ENODEV)));
	/* The socket stays usable: a link that exists still reads. */
	src_free(s);
	s = src_open_ok(&src_netdev_ops, "t0", 0, -1);
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	src_free(s);
}

static void src_netdev_read__other_namespace__counts_frames_there(void **state)
{
	struct src *s;
	struct clayout *lay;
	const uint64_t *v;
	uint64_t tx;
	char cmd[128], line[64];
	unsigned idx;
	FILE *f;
	int i;

	(void)state;
	s = src_open_ok(&src_netdev_ops, "x0", 0, nsb);
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	i = clayout_find(lay, "tx_packets");
	assert_true(i >= 0);
	tx = v[i];
	/* x0's index inside that namespace */
	snprintf(cmd, sizeof(cmd), NSB "ip -o link show x0", (int)getpid(), nsb);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	assert_int_equal(sscanf(line, "%u:", &idx), 1);
	send_frames(nsb, "x0", idx, 3);
	assert_int_equal(s->ops->read(s, &lay, &v), 0);
	assert_int_equal(v[i] - tx, 3);
	src_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(src_ethtool_read__veth__names_and_values_match_ethtool_S),
		cmocka_unit_test(src_ethtool_read__unchanged_names__same_layout_pointer),
		cmocka_unit_test(src_ethtool_read__channels_changed__new_layout),
		cmocka_unit_test(src_ethtool_read__link_deleted__enodev_names_interface),
		cmocka_unit_test(src_ethtool_open__loopback__eopnotsupp),
		cmocka_unit_test(src_ethtool_open__absent__enodev),
		cmocka_unit_test(src_ethtool_open__name_too_long__einval),
		cmocka_unit_test(src_ethtool_read__other_namespace__reads_link_there),
		cmocka_unit_test(src_netdev_read__veth__values_match_ip_json),
		cmocka_unit_test(src_netdev_read__names__rtnl_link_stats64_order),
		cmocka_unit_test(src_netdev_read__by_ifindex__same_as_by_name),
		cmocka_unit_test(src_netdev_read__link_deleted__enodev_names_interface),
		cmocka_unit_test(src_netdev_read__other_namespace__counts_frames_there),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
