/* Unit tests: flowsel (flow selectors: parse, match, key format). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collectors/flows/flowsel.h"

static void flow_sel_parse__good_inputs__fields_set(void **state)
{
	struct flow_sel s;
	struct in6_addr a;
	char err[256];

	(void)state;
	assert_int_equal(flow_sel_parse("tcp", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, IPPROTO_TCP);
	assert_int_equal(s.family, 0);
	assert_int_equal(s.port_lo, 0);

	assert_int_equal(flow_sel_parse("tcp 10.0.0.9/24", &s, err, sizeof(err)), 0);
	assert_int_equal(s.family, AF_INET);
	assert_int_equal(s.prefix, 120);
	inet_pton(AF_INET6, "::ffff:10.0.0.0", &a);
	assert_memory_equal(&s.addr, &a, 16);

	assert_int_equal(flow_sel_parse("udp port 11111", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, IPPROTO_UDP);
	assert_int_equal(s.port_lo, 11111);
	assert_int_equal(s.port_hi, 11111);

	assert_int_equal(flow_sel_parse("tcp 10.77.0.2 port 11111-11120", &s, err, sizeof(err)), 0);
	assert_int_equal(s.prefix, 128);
	inet_pton(AF_INET6, "::ffff:10.77.0.2", &a);
	assert_memory_equal(&s.addr, &a, 16);
	assert_int_equal(s.port_lo, 11111);
	assert_int_equal(s.port_hi, 11120);

	assert_int_equal(flow_sel_parse("any", &s, err, sizeof(err)), 0);
	assert_int_equal(s.proto, 0);
	assert_int_equal(s.family, 0);
	assert_int_equal(s.port_lo + s.port_hi, 0);

	assert_int_equal(flow_sel_parse("  port 80  tcp fd00::1:2/64 ", &s, err, sizeof(err)), 0);
	assert_int_equal(s.family, AF_INET6);
	assert_int_equal(s.prefix, 64);
	inet_pton(AF_INET6, "fd00::", &a);
	assert_memory_equal(&s.addr, &a, 16);
	assert_int_equal(s.port_lo, 80);
}

static void flow_sel_parse__bad_inputs__error_names_token(void **state)
{
	static const struct {
		const char *text, *token;
	} bad[] = {
		{ "tcpx", "'tcpx'" },
		{ "tcp 10.0.0.300", "'10.0.0.300'" },
		{ "tcp 10.0.0.0/33", "'10.0.0.0/33'" },
		{ "tcp ::1/129", "'::1/129'" },
		{ "udp port 70000", "'70000'" },
		{ "udp port 0", "'0'" },
		{ "udp port 20-10", "'20-10'" },
		{ "udp port 5x", "'5x'" },
		{ "tcp port", "'port'" },
		{ "tcp udp", "'udp'" },
		{ "tcp 10.0.0.1 10.0.0.2", "'10.0.0.2'" },
		{ "", "empty" },
		{ "   ", "empty" },
	};
	struct flow_sel s;
	char err[256];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(flow_sel_parse(bad[i].text, &s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].token))
			fail_msg("'%s': error '%s' does not name %s", bad[i].text, err, bad[i].token);
	}
}

static struct flow_key mkkey(const char *s, unsigned sp, const char *d, unsigned dp, uint8_t proto)
{
	struct flow_key k;
	struct in_addr a4;

	memset(&k, 0, sizeof(k));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		k.saddr.s6_addr[10] = k.saddr.s6_addr[11] = 0xff;
		memcpy(&k.saddr.s6_addr[12], &a4, 4);
		inet_pton(AF_INET, d, &a4);
		k.daddr.s6_addr[10] = k.daddr.s6_addr[11] = 0xff;
		memcpy(&k.daddr.s6_addr[12], &a4, 4);
	} else {
		inet_pton(AF_INET6, s, &k.saddr);
		inet_pton(AF_INET6, d, &k.daddr);
	}
	k.sport = htons((uint16_t)sp);
	k.dport = htons((uint16_t)dp);
	k.proto = proto;
	return k;
}

static void flow_sel_match__selectors__either_end_and_any(void **state)
{
	struct flow_key k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11111, IPPROTO_TCP);
	struct flow_key k6 = mkkey("fd00::1", 40000, "fd00::2", 11111, IPPROTO_TCP);
	struct flow_sel s[2];
	char err[256];

	(void)state;
	assert_int_equal(flow_sel_match(NULL, 0, &k), 1);
	assert_int_equal(flow_sel_parse("tcp 10.77.0.2 port 11111-11120", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	k.proto = IPPROTO_UDP;
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k = mkkey("10.77.0.2", 11115, "10.77.0.9", 5, IPPROTO_TCP);    /* reversed ends */
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11121, IPPROTO_TCP);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k = mkkey("10.77.1.2", 40000, "10.77.0.3", 11111, IPPROTO_TCP);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	assert_int_equal(flow_sel_parse("udp", &s[1], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
	k.proto = IPPROTO_UDP;
	assert_int_equal(flow_sel_match(s, 2, &k), 1);  /* second selector */
	assert_int_equal(flow_sel_parse("tcp 10.0.0.0/8", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k6), 0); /* IPv4 prefix, IPv6 flow */
	k.proto = IPPROTO_TCP;
	assert_int_equal(flow_sel_match(s, 1, &k), 1);
	assert_int_equal(flow_sel_parse("fd00::/120", &s[0], err, sizeof(err)), 0);
	assert_int_equal(flow_sel_match(s, 1, &k6), 1);
	assert_int_equal(flow_sel_match(s, 1, &k), 0);
}

static void flow_key_format__v4_v6__text(void **state)
{
	struct flow_key k = mkkey("10.77.0.1", 40000, "10.77.0.2", 11111, IPPROTO_TCP);
	char buf[128], small[8];

	(void)state;
	assert_int_equal(flow_key_format(&k, buf, sizeof(buf)), (int)strlen("tcp 10.77.0.1:40000 -> 10.77.0.2:11111"));
	assert_string_equal(buf, "tcp 10.77.0.1:40000 -> 10.77.0.2:11111");
	k = mkkey("fd00::1", 5, "fe80::2", 6, IPPROTO_UDP);
	flow_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "udp [fd00::1]:5 -> [fe80::2]:6");
	k.proto = 132;
	flow_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "proto 132 [fd00::1]:5 -> [fe80::2]:6");
	assert_true(flow_key_format(&k, small, sizeof(small)) > (int)sizeof(small));
	assert_string_equal(small, "proto 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_sel_parse__good_inputs__fields_set),
		cmocka_unit_test(flow_sel_parse__bad_inputs__error_names_token),
		cmocka_unit_test(flow_sel_match__selectors__either_end_and_any),
		cmocka_unit_test(flow_key_format__v4_v6__text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
