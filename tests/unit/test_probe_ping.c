/* Unit tests for probes/probe_ping.c against the real kernel: the test
 * process sits in a private network namespace (unshare), with a veth pair
 * whose peer end lives in a second namespace held only by an fd, so real
 * echo replies come back. Needs root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nstest.h"
#include "lib/loop.h"
#include "probes/probe_ping.h"

static int nsb = -1;


/* A namespace held only by the returned fd. */

#define NSB "nsenter --net=/proc/%d/fd/%d "

static int group_setup(void **state)
{
	(void)state;
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return -1;
	}
	nsb = nstest_make_netns();
	if (nsb < 0)
		return -1;
	/* no duplicate address detection: link-local usable at once */
	if (nstest_sh("sysctl -qw net.ipv6.conf.default.accept_dad=0 && "
	       NSB "sysctl -qw net.ipv6.conf.default.accept_dad=0", (int)getpid(), nsb) != 0)
		return -1;
	if (nstest_sh("ip link set lo up && ip link add pp0 type veth peer name pp1 && "
	       "ip link set pp1 netns /proc/%d/fd/%d && "
	       "ip addr add 10.77.0.1/24 dev pp0 && ip addr add fd77::1/64 dev pp0 nodad && "
	       "ip link set pp0 up", (int)getpid(), nsb) != 0)
		return -1;
	if (nstest_sh(NSB "sh -c 'ip link set lo up && ip addr add 10.77.0.2/24 dev pp1 && "
	       "ip addr add fd77::2/64 dev pp1 nodad && ip link set pp1 up'",
	       (int)getpid(), nsb) != 0)
		return -1;
	/* the default in a fresh namespace ("1 0") admits nobody: raw sockets */
	if (nstest_sh("sysctl -qw net.ipv4.ping_group_range='1 0'") != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (nsb >= 0)
		close(nsb);
	return 0;
}

/* ---- a real loop with a guard so no test can hang ---- */

struct run {
	struct loop *l;
	int done_calls;
	int timed_out;
	int free_in_done;
	struct probe_ping *p;
	uint64_t done_ns;
};

static void on_done(struct probe_ping *p, void *arg)
{
	struct run *r = arg;

	r->done_calls++;
	r->done_ns = loop_mono_ns();
	assert_ptr_equal(p, r->p);
	assert_true(probe_ping_finished(p));
	if (r->free_in_done) {
		probe_ping_free(p);
		r->p = NULL;
	}
	loop_stop(r->l);
}

static void on_guard(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	r->timed_out = 1;
	loop_stop(r->l);
}

static void run_loop(struct run *r, unsigned max_ms)
{
	struct loop_timer *g = loop_timer_new(r->l, on_guard, r);

	assert_non_null(g);
	assert_int_equal(loop_timer_set(g, (uint64_t)max_ms * 1000000ull, 0), 0);
	assert_int_equal(loop_run(r->l), 0);
	loop_timer_free(g);
}

static struct probe_ping *start(struct run *r, int nsfd, const char *ifname,
				const char *dst, unsigned count, unsigned interval_ms,
				unsigned timeout_ms, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->l = loop_new();
	assert_non_null(r->l);
	r->p = probe_ping_start(r->l, nsfd, ifname, dst, count,
				(uint64_t)interval_ms * 1000000ull,
				(uint64_t)timeout_ms * 1000000ull, on_done, r, err, errlen);
	return r->p;
}

static struct probe_ping *start_opts(struct run *r, int nsfd, const char *ifname,
				     const char *dst, unsigned count, unsigned interval_ms,
				     unsigned timeout_ms, unsigned size, int df,
				     char *err, size_t errlen)
{
	struct probe_ping_opts o = { .size = size, .df = df };

	memset(r, 0, sizeof(*r));
	r->l = loop_new();
	assert_non_null(r->l);
	r->p = probe_ping_start_opts(r->l, nsfd, ifname, dst, count,
				     (uint64_t)interval_ms * 1000000ull,
				     (uint64_t)timeout_ms * 1000000ull, &o, on_done, r,
				     err, errlen);
	return r->p;
}

/* MTU of pp0 here and of pp1 in the peer's namespace. */
static void set_mtus(unsigned here, unsigned peer)
{
	assert_int_equal(nstest_sh("ip link set pp0 mtu %u && " NSB "ip link set pp1 mtu %u",
				   here, (int)getpid(), nsb, peer), 0);
}

/* Per-test teardown: the pair back at 1500 and raw sockets, even when a
 * test failed. */
static int restore_mtus(void **state)
{
	(void)state;
	return nstest_sh("ip link set pp0 mtu 1500 && " NSB "ip link set pp1 mtu 1500 && "
			 "sysctl -qw net.ipv4.ping_group_range='1 0'",
			 (int)getpid(), nsb) ? -1 : 0;
}

/* Case k of 4: IPv4 or IPv6 (k & 1), raw or datagram socket (k & 2). */
static const char *family_method(unsigned k)
{
	assert_int_equal(nstest_sh("sysctl -qw net.ipv4.ping_group_range='%s'",
				   k & 2 ? "0 0" : "1 0"), 0);
	return k & 1 ? "fd77::2" : "10.77.0.2";
}

/* Bytes pp0 sent, from our namespace's /proc/self/net/dev. */
static unsigned long long pp0_tx_bytes(void)
{
	FILE *f = fopen("/proc/self/net/dev", "r");
	char line[512];
	unsigned long long v[9], got = 0;
	int found = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *n = line;

		if (!c)
			continue;
		*c = '\0';
		while (*n == ' ')
			n++;
		if (strcmp(n, "pp0"))
			continue;
		/* 8 receive columns, then transmit bytes */
		assert_int_equal(sscanf(c + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
					&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
					&v[8]), 9);
		got = v[8];
		found = 1;
	}
	fclose(f);
	assert_true(found);
	return got;
}

static void json_size_df(const struct probe_ping *p, int size, int df)
{
	struct json_object *o = json_object_new_object(), *v;

	assert_int_equal(probe_ping_to_json(p, o), 0);
	assert_true(json_object_object_get_ex(o, "size", &v));
	assert_int_equal(json_object_get_int(v), size);
	assert_true(json_object_object_get_ex(o, "df", &v));
	assert_true(json_object_is_type(v, json_type_boolean));
	assert_int_equal(json_object_get_boolean(v), df);
	json_object_put(o);
}

static void check_all_replied(const struct probe_ping_result *res, unsigned n)
{
	assert_int_equal(res->sent, n);
	assert_int_equal(res->received, n);
	assert_string_equal(res->error, "");
	assert_true(res->rtt_min_ms > 0);
	assert_true(res->rtt_min_ms <= res->rtt_avg_ms);
	assert_true(res->rtt_avg_ms <= res->rtt_max_ms);
	/* milliseconds, not another unit: a loopback reply read by a loaded
	 * loop may come late, never seconds past the 5 s timeout */
	assert_true(res->rtt_max_ms < 5000);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(res->echo[i].seq, i);
		assert_true(res->echo[i].replied);
		assert_true(res->echo[i].sent_ns > 0);
		assert_true(res->echo[i].rtt_ns > 0);
		if (i)
			assert_true(res->echo[i].sent_ns > res->echo[i - 1].sent_ns);
	}
}

/* ---- tests ---- */

static void probe_ping_start__peer_answers__five_of_five_raw(void **state)
{
	struct run r;
	char err[256];
	uint64_t t0;

	(void)state;
	t0 = loop_mono_ns();
	/* a 5 s timeout, so that ending early is told apart from waiting it
	 * out by seconds, not by the milliseconds a loaded machine takes */
	assert_non_null(start(&r, -1, "pp0", "10.77.0.2", 5, 20, 5000, err, sizeof(err)));
	assert_int_equal(r.done_calls, 0);          /* never from inside start */
	run_loop(&r, 15000);
	assert_false(r.timed_out);
	assert_int_equal(r.done_calls, 1);
	check_all_replied(probe_ping_result(r.p), 5);
	/* ping_group_range "1 0": the datagram socket is refused, raw is used */
	assert_string_equal(probe_ping_result(r.p)->method, "raw");
	/* ended early, once all replied: 4 intervals, not + the 5 s timeout */
	assert_true(r.done_ns - t0 < 4000000000ull);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__group_admitted__uses_dgram(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_int_equal(nstest_sh("sysctl -qw net.ipv4.ping_group_range='0 0'"), 0);
	assert_non_null(start(&r, -1, NULL, "10.77.0.2", 3, 10, 5000, err, sizeof(err)));
	run_loop(&r, 15000);
	assert_int_equal(nstest_sh("sysctl -qw net.ipv4.ping_group_range='1 0'"), 0);
	assert_false(r.timed_out);
	assert_int_equal(r.done_calls, 1);
	assert_string_equal(probe_ping_result(r.p)->method, "dgram");
	check_all_replied(probe_ping_result(r.p), 3);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__from_other_namespace__replies(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_non_null(start(&r, nsb, "pp1", "10.77.0.1", 3, 10, 5000, err, sizeof(err)));
	run_loop(&r, 15000);
	assert_int_equal(r.done_calls, 1);
	check_all_replied(probe_ping_result(r.p), 3);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__ipv6_peer__replies(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_non_null(start(&r, -1, "pp0", "fd77::2", 3, 10, 5000, err, sizeof(err)));
	run_loop(&r, 15000);
	assert_int_equal(r.done_calls, 1);
	check_all_replied(probe_ping_result(r.p), 3);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__ipv6_link_local_scoped__replies(void **state)
{
	struct run r;
	char err[256], ll[128];
	FILE *f;

	(void)state;
	/* read the peer's link-local address from inside its namespace */
	snprintf(ll, sizeof(ll), NSB "ip -6 -br addr show dev pp1 scope link "
		 "| awk '{print $3}' | cut -d/ -f1", (int)getpid(), nsb);
	f = popen(ll, "r");
	assert_non_null(f);
	assert_non_null(fgets(ll, sizeof(ll) - 8, f));
	pclose(f);
	ll[strcspn(ll, "\n")] = '\0';
	assert_true(strncmp(ll, "fe80:", 5) == 0);
	strcat(ll, "%pp0");
	assert_non_null(start(&r, -1, NULL, ll, 2, 10, 5000, err, sizeof(err)));
	run_loop(&r, 15000);
	assert_int_equal(r.done_calls, 1);
	check_all_replied(probe_ping_result(r.p), 2);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__silent_address__zero_received_within_timeout(void **state)
{
	struct run r;
	char err[256];
	uint64_t t0, el;
	const struct probe_ping_result *res;

	(void)state;
	t0 = loop_mono_ns();
	assert_non_null(start(&r, -1, "pp0", "10.77.0.99", 3, 20, 300, err, sizeof(err)));
	run_loop(&r, 5000);
	el = loop_mono_ns() - t0;
	assert_false(r.timed_out);
	assert_int_equal(r.done_calls, 1);
	res = probe_ping_result(r.p);
	assert_int_equal(res->sent, 3);
	assert_int_equal(res->received, 0);
	assert_true(res->rtt_max_ms == 0);
	for (unsigned i = 0; i < 3; i++)
		assert_false(res->echo[i].replied);
	/* 2 intervals + the timeout for the last echo, not the guard */
	assert_true(el >= 340000000ull);
	assert_true(el < 1000000000ull);
	probe_ping_free(r.p);
	loop_free(r.l);
}

static void probe_ping_start__no_route__send_error_recorded(void **state)
{
	struct run r;
	char err[256];
	const struct probe_ping_result *res;

	(void)state;
	assert_non_null(start(&r, -1, NULL, "192.0.2.7", 2, 10, 300, err, sizeof(err)));
	run_loop(&r, 5000);
	assert_int_equal(r.done_calls, 1);
	res = probe_ping_result(r.p);
	assert_int_equal(res->sent, 0);
	assert_int_equal(res->received, 0);
	assert_non_null(strstr(res->error, "192.0.2.7"));
	assert_non_null(strstr(res->error, "unreachable"));
	probe_ping_free(r.p);
	loop_free(r.l);
}

/* A datagram the unit's cgroup filter (IPAddressDeny=any) refuses fails
 * with EPERM; a netfilter drop on output gives the same errno here. The
 * error must say what refused it and what to add, not only "Operation not
 * permitted". */
static void probe_ping_start__eperm_public_address__says_ipaddressallow(void **state)
{
	struct run r;
	char err[256];
	const struct probe_ping_result *res;

	(void)state;
	assert_int_equal(nstest_sh("ip route replace 198.51.100.0/24 via 10.77.0.2 && "
				   "nft add table inet eperm && nft add chain inet eperm out "
				   "'{ type filter hook output priority 0; }' && "
				   "nft add rule inet eperm out ip daddr 198.51.100.7 drop"), 0);
	assert_non_null(start(&r, -1, NULL, "198.51.100.7", 2, 10, 300, err, sizeof(err)));
	run_loop(&r, 5000);
	res = probe_ping_result(r.p);
	assert_int_equal(res->sent, 0);
	assert_non_null(strstr(res->error, "Operation not permitted: refused by the unit's IP "
				"address filter (IPAddressDeny=): add IPAddressAllow=198.51.100.7 in "
				"a drop-in"));
	probe_ping_free(r.p);
	loop_free(r.l);
	assert_int_equal(nstest_sh("nft delete table inet eperm && "
				   "ip route del 198.51.100.0/24"), 0);
}

static void on_cancel(struct loop_timer *t, void *arg)
{
	struct run *r = arg;

	(void)t;
	probe_ping_free(r->p);
	r->p = NULL;
}

static void probe_ping_free__before_completion__done_never_called(void **state)
{
	struct run r;
	char err[256];
	struct loop_timer *c;

	(void)state;
	assert_non_null(start(&r, -1, "pp0", "10.77.0.99", 5, 100, 1000, err, sizeof(err)));
	c = loop_timer_new(r.l, on_cancel, &r);
	assert_non_null(c);
	assert_int_equal(loop_timer_set(c, 150000000ull, 0), 0);
	run_loop(&r, 1500);             /* the guard ends it */
	assert_true(r.timed_out);
	assert_int_equal(r.done_calls, 0);
	assert_null(r.p);
	loop_timer_free(c);
	loop_free(r.l);

	/* freed right after start, before the loop ever ran */
	assert_non_null(start(&r, -1, NULL, "10.77.0.2", 2, 10, 100, err, sizeof(err)));
	probe_ping_free(r.p);
	run_loop(&r, 300);
	assert_int_equal(r.done_calls, 0);
	loop_free(r.l);
}

static void probe_ping_free__inside_done__safe(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_non_null(start(&r, -1, NULL, "10.77.0.2", 2, 10, 500, err, sizeof(err)));
	r.free_in_done = 1;
	run_loop(&r, 3000);
	assert_int_equal(r.done_calls, 1);
	assert_null(r.p);
	loop_free(r.l);
}

static void probe_ping_start__bad_input__clear_error(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_null(start(&r, -1, NULL, "10.77.0.300", 3, 10, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "10.77.0.300"));
	assert_non_null(strstr(err, "not an IPv4 or IPv6"));
	loop_free(r.l);
	assert_null(start(&r, -1, NULL, "", 3, 10, 100, err, sizeof(err)));
	assert_true(err[0] != '\0');
	loop_free(r.l);
	assert_null(start(&r, -1, NULL, "10.77.0.2", 0, 10, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "count 0"));
	loop_free(r.l);
	assert_null(start(&r, -1, NULL, "10.77.0.2", 65, 10, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "count 65"));
	loop_free(r.l);
	assert_null(start(&r, -1, "nosuch5", "10.77.0.2", 1, 10, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "nosuch5"));
	assert_non_null(strstr(err, "own netns"));
	loop_free(r.l);
	/* the interface exists only in the other namespace */
	assert_null(start(&r, nsb, "pp0", "10.77.0.1", 1, 10, 100, err, sizeof(err)));
	assert_non_null(strstr(err, "pp0"));
	assert_non_null(strstr(err, "net:["));
	loop_free(r.l);
}

static void probe_ping_to_json__after_run__counts_and_echoes(void **state)
{
	struct run r;
	char err[256];
	struct json_object *o, *v, *e;

	(void)state;
	assert_non_null(start(&r, -1, "pp0", "10.77.0.2", 2, 10, 500, err, sizeof(err)));
	run_loop(&r, 3000);
	o = json_object_new_object();
	assert_int_equal(probe_ping_to_json(r.p, o), 0);
	assert_true(json_object_object_get_ex(o, "sent", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(o, "received", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(o, "lost", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_true(json_object_object_get_ex(o, "method", &v));
	assert_string_equal(json_object_get_string(v), "raw");
	assert_true(json_object_object_get_ex(o, "dst", &v));
	assert_string_equal(json_object_get_string(v), "10.77.0.2");
	/* probe_ping_start: the default echo, no DF asked */
	assert_true(json_object_object_get_ex(o, "size", &v));
	assert_int_equal(json_object_get_int(v), 84);
	assert_true(json_object_object_get_ex(o, "df", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "rtt_avg_ms", &v));
	assert_true(json_object_get_double(v) > 0);
	assert_true(json_object_object_get_ex(o, "echoes", &v));
	assert_int_equal(json_object_array_length(v), 2);
	e = json_object_array_get_idx(v, 1);
	assert_true(json_object_object_get_ex(e, "replied", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	probe_ping_free(r.p);
	loop_free(r.l);
}

/* Issue 35: a don't-fragment echo at the link's MTU (9000 both ends) goes
 * out whole and is answered, for IPv4 and IPv6, from raw and datagram
 * sockets; the 9000-byte replies (read truncated) are matched. */
static void probe_ping_start_opts__df_at_link_mtu__answered(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	set_mtus(9000, 9000);
	for (unsigned k = 0; k < 4; k++) {
		const char *dst = family_method(k);
		unsigned long long tx0 = pp0_tx_bytes();

		assert_non_null(start_opts(&r, -1, "pp0", dst, 2, 10, 1000, 9000, 1,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_false(r.timed_out);
		assert_int_equal(r.done_calls, 1);
		check_all_replied(probe_ping_result(r.p), 2);
		assert_string_equal(probe_ping_result(r.p)->method, k & 2 ? "dgram" : "raw");
		/* two echoes of 9000 bytes each went out, not the small default */
		assert_true(pp0_tx_bytes() - tx0 >= 2 * 9000ull);
		json_size_df(r.p, 9000, 1);
		probe_ping_free(r.p);
		loop_free(r.l);
	}
}

/* The local end at 1500, the peer at 9000: the kernel refuses a 9000-byte
 * DF echo here (EMSGSIZE). Recorded with the size and the route's MTU,
 * nothing sent, and the probe ends without waiting out its timeout. */
static void probe_ping_start_opts__df_above_local_mtu__emsgsize_recorded(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	set_mtus(1500, 9000);
	for (unsigned k = 0; k < 4; k++) {
		const struct probe_ping_result *res;
		const char *dst = family_method(k);
		uint64_t t0 = loop_mono_ns();

		assert_non_null(start_opts(&r, -1, "pp0", dst, 2, 10, 1000, 9000, 1,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_false(r.timed_out);
		assert_int_equal(r.done_calls, 1);
		/* every echo failed to send: done at once, not after 1 s */
		assert_true(loop_mono_ns() - t0 < 900000000ull);
		res = probe_ping_result(r.p);
		assert_int_equal(res->sent, 0);
		assert_int_equal(res->received, 0);
		assert_string_equal(res->method, k & 2 ? "dgram" : "raw");
		assert_non_null(strstr(res->error, dst));
		assert_non_null(strstr(res->error, "EMSGSIZE: the 9000-byte packet is larger "
				       "than the route's MTU 1500"));
		json_size_df(r.p, 9000, 1);
		probe_ping_free(r.p);
		loop_free(r.l);
	}
}

static int drop_big_teardown(void **state)
{
	nstest_sh(NSB "nft delete table netdev bigdrop 2>/dev/null", (int)getpid(), nsb);
	return restore_mtus(state);
}

/* Both ends at 9000 but the path drops what is larger than 1500, silently
 * (a switch port at 1500: an ingress rule on the peer's end). A veth whose
 * peer end has the smaller MTU is no such path: it refuses the frame at
 * the sender (ENOBUFS), not silently. A DF echo at the path's MTU (1500)
 * and the small one are answered, a 9000-byte one is lost. */
static void probe_ping_start_opts__df_above_path_mtu__lost_small_answered(void **state)
{
	static const unsigned size[] = { 84, 1500, 9000 };
	struct run r;
	char err[256];

	(void)state;
	set_mtus(9000, 9000);
	assert_int_equal(nstest_sh(NSB "sh -c 'nft add table netdev bigdrop && "
				   "nft add chain netdev bigdrop in \"{ type filter hook ingress "
				   "device pp1 priority 0; }\" && "
				   "nft add rule netdev bigdrop in meta length \">\" 1500 drop'",
				   (int)getpid(), nsb), 0);
	for (unsigned k = 0; k < 3; k++) {
		const struct probe_ping_result *res;

		assert_non_null(start_opts(&r, -1, "pp0", "10.77.0.2", 2, 10, 300, size[k], 1,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_false(r.timed_out);
		assert_int_equal(r.done_calls, 1);
		res = probe_ping_result(r.p);
		if (size[k] <= 1500) {
			check_all_replied(res, 2);
		} else {
			assert_int_equal(res->sent, 2);
			assert_int_equal(res->received, 0);
		}
		json_size_df(r.p, (int)size[k], 1);
		probe_ping_free(r.p);
		loop_free(r.l);
	}
	assert_int_equal(nstest_sh(NSB "nft delete table netdev bigdrop", (int)getpid(), nsb), 0);
}

/* The peer as a router onto a link of MTU 1400: a 1500-byte DF echo
 * beyond it draws ICMP "fragmentation needed" / ICMPv6 "packet too big",
 * recorded with the next-hop MTU and the router's address; the next echo
 * to it is refused here at the MTU the kernel learnt. */
static void probe_ping_start_opts__router_mtu_1400__next_hop_mtu_recorded(void **state)
{
	struct run r;
	char err[256];

	(void)state;
	assert_int_equal(nstest_sh(NSB "sh -c 'sysctl -qw net.ipv4.ip_forward=1 && "
				   "sysctl -qw net.ipv6.conf.all.forwarding=1 && "
				   "ip link add fn0 type veth peer name fn1 && "
				   "ip link set fn0 mtu 1400 up && ip link set fn1 up && "
				   "ip route add 10.78.0.0/24 dev fn0 && "
				   "ip route add fd78::/64 dev fn0' && "
				   "ip route add 10.78.0.0/24 via 10.77.0.2 && "
				   "ip route add fd78::/64 via fd77::2",
				   (int)getpid(), nsb), 0);
	for (unsigned k = 0; k < 4; k++) {
		const struct probe_ping_result *res;
		char dst[32];

		/* a destination of its own each: the learnt MTU stays */
		(void)family_method(k);
		snprintf(dst, sizeof(dst), k & 1 ? "fd78::%u" : "10.78.0.%u", 7 + k);
		assert_non_null(start_opts(&r, -1, NULL, dst, 1, 10, 500, 1500, 1,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_int_equal(r.done_calls, 1);
		res = probe_ping_result(r.p);
		assert_string_equal(res->method, k & 2 ? "dgram" : "raw");
		assert_int_equal(res->sent, 1);
		assert_int_equal(res->received, 0);
		assert_non_null(strstr(res->error, dst));
		assert_non_null(strstr(res->error, k & 1 ? "packet too big: next-hop MTU 1400" :
				       "fragmentation needed: next-hop MTU 1400"));
		assert_non_null(strstr(res->error, k & 1 ? "from fd77::2)" : "from 10.77.0.2)"));
		probe_ping_free(r.p);
		loop_free(r.l);

		/* the path MTU is now known here: refused before it leaves */
		assert_non_null(start_opts(&r, -1, NULL, dst, 1, 10, 500, 1500, 1,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_int_equal(r.done_calls, 1);
		res = probe_ping_result(r.p);
		assert_int_equal(res->sent, 0);
		assert_non_null(strstr(res->error, "EMSGSIZE: the 1500-byte packet is larger "
				       "than the route's MTU 1400"));
		probe_ping_free(r.p);
		loop_free(r.l);
	}
	assert_int_equal(nstest_sh("sysctl -qw net.ipv4.ping_group_range='1 0' && "
				   "ip route del 10.78.0.0/24 && ip route del fd78::/64 && "
				   NSB "sh -c 'ip link del fn0 && "
				   "sysctl -qw net.ipv4.ip_forward=0 && "
				   "sysctl -qw net.ipv6.conf.all.forwarding=0'",
				   (int)getpid(), nsb), 0);
}

static int router_teardown(void **state)
{
	(void)state;
	/* after a failure: what the test left (each step may be gone) */
	nstest_sh("sysctl -qw net.ipv4.ping_group_range='1 0'; "
		  "ip route del 10.78.0.0/24 2>/dev/null; ip route del fd78::/64 2>/dev/null; "
		  NSB "sh -c 'ip link del fn0 2>/dev/null; "
		  "sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0'",
		  (int)getpid(), nsb);
	return 0;
}

/* The largest echo each family allows, without DF: fragmented on the
 * way, reassembled, and its 64 KiB reply still matched. */
static void probe_ping_start_opts__largest_size__fragmented_and_answered(void **state)
{
	static const char *dst[] = { "10.77.0.2", "fd77::2" };
	static const unsigned size[] = { 65535, 65575 };
	struct run r;
	char err[256];

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		unsigned long long tx0 = pp0_tx_bytes();

		assert_non_null(start_opts(&r, -1, "pp0", dst[k], 1, 10, 1000, size[k], 0,
					   err, sizeof(err)));
		run_loop(&r, 5000);
		assert_false(r.timed_out);
		assert_int_equal(r.done_calls, 1);
		check_all_replied(probe_ping_result(r.p), 1);
		assert_true(pp0_tx_bytes() - tx0 >= 65535ull);
		json_size_df(r.p, (int)size[k], 0);
		probe_ping_free(r.p);
		loop_free(r.l);
	}
}

static void probe_ping_start_opts__size_out_of_range__clear_error(void **state)
{
	static const struct {
		const char *dst;
		unsigned size;
		const char *say;
	} c[] = {
		{ "10.77.0.2", 83, "size 83: must be between 84 and 65535" },
		{ "10.77.0.2", 65536, "size 65536: must be between 84 and 65535" },
		{ "fd77::2", 84, "size 84: must be between 104 and 65575" },
		{ "fd77::2", 65576, "size 65576: must be between 104 and 65575" },
	};
	struct run r;
	char err[256];

	(void)state;
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		assert_null(start_opts(&r, -1, NULL, c[k].dst, 1, 10, 100, c[k].size, 1,
				       err, sizeof(err)));
		assert_non_null(strstr(err, c[k].dst));
		assert_non_null(strstr(err, c[k].say));
		loop_free(r.l);
	}
	/* the bounds themselves start, and 0 is the default */
	assert_non_null(start_opts(&r, -1, NULL, "fd77::2", 1, 10, 100, 104, 1,
				   err, sizeof(err)));
	json_size_df(r.p, 104, 1);
	probe_ping_free(r.p);
	loop_free(r.l);
	assert_non_null(start_opts(&r, -1, NULL, "10.77.0.2", 1, 10, 100, 0, 0,
				   err, sizeof(err)));
	json_size_df(r.p, 84, 0);
	probe_ping_free(r.p);
	loop_free(r.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_ping_start__peer_answers__five_of_five_raw),
		cmocka_unit_test(probe_ping_start__group_admitted__uses_dgram),
		cmocka_unit_test(probe_ping_start__from_other_namespace__replies),
		cmocka_unit_test(probe_ping_start__ipv6_peer__replies),
		cmocka_unit_test(probe_ping_start__ipv6_link_local_scoped__replies),
		cmocka_unit_test(probe_ping_start__silent_address__zero_received_within_timeout),
		cmocka_unit_test(probe_ping_start__no_route__send_error_recorded),
		cmocka_unit_test(probe_ping_start__eperm_public_address__says_ipaddressallow),
		cmocka_unit_test(probe_ping_free__before_completion__done_never_called),
		cmocka_unit_test(probe_ping_free__inside_done__safe),
		cmocka_unit_test(probe_ping_start__bad_input__clear_error),
		cmocka_unit_test(probe_ping_to_json__after_run__counts_and_echoes),
		cmocka_unit_test_teardown(probe_ping_start_opts__df_at_link_mtu__answered,
					  restore_mtus),
		cmocka_unit_test_teardown(probe_ping_start_opts__df_above_local_mtu__emsgsize_recorded,
					  restore_mtus),
		cmocka_unit_test_teardown(probe_ping_start_opts__df_above_path_mtu__lost_small_answered,
					  drop_big_teardown),
		cmocka_unit_test_teardown(probe_ping_start_opts__router_mtu_1400__next_hop_mtu_recorded,
					  router_teardown),
		cmocka_unit_test(probe_ping_start_opts__largest_size__fragmented_and_answered),
		cmocka_unit_test(probe_ping_start_opts__size_out_of_range__clear_error),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
