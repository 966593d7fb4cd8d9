/* Unit tests: the captures' filter (daemon/forensic/capfilter.c), compiled by
 * libpcap and run on frames built here: a flow's packets both ways
 * match, the mirrored conversation (same hosts, the ports swapped) and
 * others do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <json-c/json.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "daemon/forensic/capfilter.h"

/* An Ethernet frame of an IPv4 or IPv6 packet, TCP (6) or UDP (17), from
 * sa:sp to da:dp; its length in *n. */
static void frame(unsigned char *f, size_t *n, int proto, const char *sa, unsigned sp,
		  const char *da, unsigned dp)
{
	int v6 = strchr(sa, ':') != NULL;
	size_t l3 = v6 ? 40 : 20, l4 = proto == 6 ? 20 : 8;
	unsigned char *ip = f + 14, *tp = ip + l3;

	memset(f, 0, 14 + l3 + l4);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = 0;
		ip[5] = (unsigned char)l4;
		ip[6] = (unsigned char)proto;
		ip[7] = 64;
		assert_int_equal(inet_pton(AF_INET6, sa, ip + 8), 1);
		assert_int_equal(inet_pton(AF_INET6, da, ip + 24), 1);
	} else {
		ip[0] = 0x45;
		ip[3] = (unsigned char)(l3 + l4);
		ip[8] = 64;
		ip[9] = (unsigned char)proto;
		assert_int_equal(inet_pton(AF_INET, sa, ip + 12), 1);
		assert_int_equal(inet_pton(AF_INET, da, ip + 16), 1);
	}
	tp[0] = (unsigned char)(sp >> 8);
	tp[1] = (unsigned char)sp;
	tp[2] = (unsigned char)(dp >> 8);
	tp[3] = (unsigned char)dp;
	if (proto == 6)
		tp[12] = 0x50;
	else
		tp[5] = 8;
	*n = 14 + l3 + l4;
}

/* Does the filter take that packet? */
static int takes(const char *filter, int proto, const char *sa, unsigned sp, const char *da,
		 unsigned dp)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program prog;
	struct pcap_pkthdr h = { 0 };
	unsigned char f[128];
	size_t n;
	int r;

	assert_non_null(p);
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0)
		fail_msg("pcap_compile: %s: %s", pcap_geterr(p), filter);
	frame(f, &n, proto, sa, sp, da, dp);
	h.caplen = h.len = (bpf_u_int32)n;
	r = pcap_offline_filter(&prog, &h, f);
	pcap_freecode(&prog);
	pcap_close(p);
	return r != 0;
}

static struct json_object *flows_of(const char *const *tuples, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "tuple", json_object_new_string(tuples[i]));
		json_object_array_add(a, o);
	}
	return a;
}

/* The review's case: a user who holds 10.9.0.1:5432 has "10.9.0.1:5432 ->
 * 10.9.0.9:51000" verified; the victim's 10.9.0.1:51000 <-> 10.9.0.9:5432
 * has the same hosts and ports, swapped. A host-and-port filter took it. */
static void capfilter__mirrored_conversation__not_taken(void **state)
{
	static const char *const t[] = { "tcp 10.9.0.1:5432 -> 10.9.0.9:51000" };
	struct json_object *fl = flows_of(t, 1);
	char buf[4096];

	(void)state;
	assert_int_equal(capfilter_build(fl, buf, sizeof(buf)), 1);
	assert_true(takes(buf, 6, "10.9.0.1", 5432, "10.9.0.9", 51000));
	assert_true(takes(buf, 6, "10.9.0.9", 51000, "10.9.0.1", 5432));
	assert_false(takes(buf, 6, "10.9.0.1", 51000, "10.9.0.9", 5432));
	assert_false(takes(buf, 6, "10.9.0.9", 5432, "10.9.0.1", 51000));
	assert_false(takes(buf, 17, "10.9.0.1", 5432, "10.9.0.9", 51000));     /* udp */
	assert_false(takes(buf, 6, "10.9.0.1", 5432, "10.9.0.8", 51000));      /* other host */
	json_object_put(fl);
}

static void capfilter__ipv6_and_udp__both_ways_only(void **state)
{
	static const char *const t[] = { "udp [fd00::1]:11111 -> [fd00::2]:40000",
					 "tcp 10.1.0.1:80 -> 10.1.0.2:33000" };
	struct json_object *fl = flows_of(t, 2);
	char buf[4096];

	(void)state;
	assert_int_equal(capfilter_build(fl, buf, sizeof(buf)), 2);
	assert_null(strchr(buf, '['));
	assert_true(takes(buf, 17, "fd00::1", 11111, "fd00::2", 40000));
	assert_true(takes(buf, 17, "fd00::2", 40000, "fd00::1", 11111));
	assert_false(takes(buf, 17, "fd00::1", 40000, "fd00::2", 11111));
	assert_true(takes(buf, 6, "10.1.0.2", 33000, "10.1.0.1", 80));
	assert_false(takes(buf, 6, "10.1.0.1", 33000, "10.1.0.2", 80));
	json_object_put(fl);
}

/* What is not a tcp or udp tuple is left out; what does not fit is left
 * out whole; the filter always compiles and always takes ICMP. */
static void capfilter__hostile_tuples_and_no_room__compiles(void **state)
{
	static const char *const t[] = { "tcp 10.1.0.1:99999 -> 10.1.0.2:1",
					 "tcp 10.1.0.1:1 -> 10.1.0.2:2 or ip",
					 "sctp 10.1.0.1:1 -> 10.1.0.2:2",
					 "tcp [10.1.0.1 or ip]:1 -> 10.1.0.2:2",
					 "tcp 10.1.0.1:1x -> 10.1.0.2:2",
					 "tcp 10.1.0.3:7 -> 10.1.0.4:8" };
	struct json_object *fl = flows_of(t, 6), *many = json_object_new_array();
	char buf[4096], small[300];
	unsigned n;

	(void)state;
	/* the sscanf stops at the space: "... or ip" leaves "10.1.0.2:2" */
	n = capfilter_build(fl, buf, sizeof(buf));
	assert_int_equal(n, 2);
	assert_null(strstr(buf, "or ip)"));
	assert_true(takes(buf, 6, "10.1.0.3", 7, "10.1.0.4", 8));
	assert_false(takes(buf, 6, "10.1.0.1", 99999 & 0xffff, "10.1.0.2", 1));
	for (int i = 0; i < 50; i++) {
		struct json_object *o = json_object_new_object();
		char tu[80];

		snprintf(tu, sizeof(tu), "udp 10.2.0.1:%d -> 10.2.0.2:9", 1000 + i);
		json_object_object_add(o, "tuple", json_object_new_string(tu));
		json_object_array_add(many, o);
	}
	n = capfilter_build(many, small, sizeof(small));
	assert_true(n < 50);
	assert_non_null(strstr(small, "icmp or icmp6"));
	assert_false(takes(small, 17, "10.2.0.1", 1049, "10.2.0.2", 9));
	assert_true(takes(small, 17, "10.2.0.1", 1000, "10.2.0.2", 9) || n == 0);
	json_object_put(fl);
	json_object_put(many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capfilter__mirrored_conversation__not_taken),
		cmocka_unit_test(capfilter__ipv6_and_udp__both_ways_only),
		cmocka_unit_test(capfilter__hostile_tuples_and_no_room__compiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
