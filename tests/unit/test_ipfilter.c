/* Unit tests: the unit's IP allow list in C (lib/ipfilter.h) against the
 * unit file, addresses in and out of it, and the EPERM text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ipfilter.h"

#define UNIT "systemd/nicstalld.service"

/* The one copy in C says what systemd/nicstalld.service says: its
 * IPAddressAllow= lines, their words joined, are IPFILTER_UNIT_ALLOW. */
static void ipfilter_unit_allow__matches_the_unit_file(void **state)
{
	FILE *f = fopen(UNIT, "r");
	char line[1024], words[1024] = "";
	int deny = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "IPAddressDeny=any"))
			deny = 1;
		if (strncmp(line, "IPAddressAllow=", 15))
			continue;
		if (words[0])
			strcat(words, " ");
		assert_true(strlen(words) + strlen(line + 15) < sizeof(words));
		strcat(words, line + 15);
	}
	fclose(f);
	assert_true(deny);
	assert_string_equal(words, IPFILTER_UNIT_ALLOW);
}

static void ipfilter_unit_allows__in_and_out(void **state)
{
	static const char *const in[] = {
		"127.0.0.1", "::1", "169.254.3.4", "fe80::1", "224.0.0.251", "ff02::1",
		"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.7.7", "100.64.0.1",
		"100.127.255.254", "fd00::7", "fc00::1", "::ffff:10.0.0.1",
	};
	static const char *const out[] = {
		"198.51.100.2", "8.8.8.8", "172.32.0.1", "172.15.255.255", "100.128.0.1",
		"192.169.0.1", "2001:db8::1", "fe00::1", "::ffff:8.8.8.8", "11.0.0.1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		if (ipfilter_unit_allows(in[i]) != 1)
			fail_msg("%s should be inside the unit's allow list", in[i]);
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		if (ipfilter_unit_allows(out[i]) != 0)
			fail_msg("%s should be outside the unit's allow list", out[i]);
	assert_int_equal(ipfilter_unit_allows("tracker.example"), -1);
}

static void ipfilter_errstr__eperm__names_the_filter_and_the_fix(void **state)
{
	char b[256];

	(void)state;
	assert_string_equal(ipfilter_errstr(EPERM, "198.51.100.2", b, sizeof(b)),
			    "Operation not permitted: refused by the unit's IP address filter "
			    "(IPAddressDeny=): add IPAddressAllow=198.51.100.2 in a drop-in");
	/* inside the list, the unit did not refuse it */
	assert_non_null(strstr(ipfilter_errstr(EPERM, "10.0.0.1", b, sizeof(b)),
			       "a firewall rule"));
	assert_string_equal(ipfilter_errstr(ENETUNREACH, "198.51.100.2", b, sizeof(b)),
			    strerror(ENETUNREACH));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipfilter_unit_allow__matches_the_unit_file),
		cmocka_unit_test(ipfilter_unit_allows__in_and_out),
		cmocka_unit_test(ipfilter_errstr__eperm__names_the_filter_and_the_fix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
