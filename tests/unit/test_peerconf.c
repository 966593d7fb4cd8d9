/* Unit tests: [peer NAME] sections, the [daemon] peer keys and key files
 * (daemon/peers/peerconf.c): chrony-style keys, a key anyone may read refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/peers/peerconf.h"

struct msgs {
	char m[16][768];
	int n;
};

static void collect(const char *msg, void *arg)
{
	struct msgs *ms = arg;

	if (ms->n < 16)
		snprintf(ms->m[ms->n++], sizeof(ms->m[0]), "%s", msg);
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/nicstall-peerconf-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static const char *file(const char *name, const char *text, mode_t mode)
{
	static char path[8][128];
	static int k;
	char *p = path[k++ % 8];
	FILE *f;

	snprintf(p, 128, "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static int load(const char *text, struct conf **c, struct msgs *ms)
{
	memset(ms, 0, sizeof(*ms));
	return conf_load(file("nicstalld.conf", text, 0644), c, collect, ms);
}

#define KEY32 "HEX:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void peerkey_load__hex_and_ascii__bytes(void **state)
{
	struct peer_key k;
	char err[512];

	(void)state;
	assert_int_equal(peerkey_load(file("k1", "# chrony keys\n\n1 SHA256 " KEY32 "\n", 0600), -1,
				      &k, err, sizeof(err)), 0);
	assert_int_equal(k.id, 1);
	assert_int_equal(k.len, 32);
	assert_int_equal(k.k[1], 0x11);
	assert_int_equal(peerkey_load(file("k2", "5 sha256 ASCII:a-passphrase-of-some-length\n"
					   "6 SHA256 thisisanotherkey12345\n", 0600), 6, &k, err,
				      sizeof(err)), 0);
	assert_int_equal(k.id, 6);
	assert_int_equal(k.len, strlen("thisisanotherkey12345"));
}

static void peerkey_load__readable_by_others__refused_with_mode(void **state)
{
	struct peer_key k;
	char err[512];

	(void)state;
	assert_int_equal(peerkey_load(file("k", "1 SHA256 " KEY32 "\n", 0644), -1, &k, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "mode 0644 lets its group and everyone read or change it: refused"));
	assert_int_equal(peerkey_load(file("k", "1 SHA256 " KEY32 "\n", 0640), -1, &k, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "mode 0640 lets its group read"));
	assert_int_equal(peerkey_load(file("k", "1 SHA256 " KEY32 "\n", 0604), -1, &k, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "everyone"));
	assert_int_equal(peerkey_load(file("k", "1 SHA256 " KEY32 "\n", 0400), -1, &k, err,
				      sizeof(err)), 0);
}

static void peerkey_load__bad_keys__refused_naming_the_line(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "1 MD5 HEX:00112233445566778899aabbccddeeff\n", "only SHA256" },
		{ "1 HEX:00112233445566778899aabbccddeeff\n", "has no type" },
		{ "\n1 SHA256 HEX:0011\n", ":2: key 1: key of 2 bytes" },
		{ "1 SHA256 HEX:0g112233445566778899aabbccddeeff\n", "not a hex digit" },
		{ "1 SHA256 HEX:011\n", "odd number" },
		{ "x SHA256 " KEY32 "\n", "key id" },
		{ "1 SHA256 " KEY32 "\n2 SHA256 " KEY32 "\n", "holds 2 keys: say which with key_id" },
		{ "# nothing\n", "holds no key" },
		{ "1 SHA256 " KEY32 " extra\n", "expected 'ID TYPE KEY'" },
	};
	struct peer_key k;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(peerkey_load(file("k", bad[i].text, 0600), -1, &k, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: got '%s', want '%s'", bad[i].text, err, bad[i].want);
	}
	assert_int_equal(peerkey_load(file("k", "1 SHA256 " KEY32 "\n", 0600), 9, &k, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "has no key 9"));
	assert_int_equal(peerkey_load("/nonexistent/k", -1, &k, err, sizeof(err)), -1);
	assert_int_equal(symlink(file("target", "1 SHA256 " KEY32 "\n", 0600), "/tmp/.nsk-link") |
			 0, 0);
	assert_int_equal(peerkey_load("/tmp/.nsk-link", -1, &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	unlink("/tmp/.nsk-link");
}

static void conf_load__peer_sections__addresses_keys_daemon_keys(void **state)
{
	struct conf *c;
	struct msgs ms;
	char text[2048];

	(void)state;
	file("fleet.keys", "1 SHA256 " KEY32 "\n", 0600);
	snprintf(text, sizeof(text),
		 "[daemon]\nhost_name = rank0\npeer_listen = 10.1.0.1:7500\npeer_netns = r0\n"
		 "peer_wait = 500ms\npeer_window = 30ms\npeer_max_skew = 2s\n"
		 "peer_snapshots_per_hour = 7\npeer_bundle_max_count = 9\npeer_bundle_max_bytes = 2M\n"
		 "[port p]\ninterface = eth0\n"
		 "[peer rank1]\naddress = 10.1.0.2\nport = 7500\nkey_file = %s/fleet.keys\n"
		 "host = r1.example\n"
		 "[peer rank2]\naddress = fd00::2\nkey_file = %s/fleet.keys\nkey_id = 1\n", dir, dir);
	assert_int_equal(load(text, &c, &ms), 0);
	assert_string_equal(c->host_name, "rank0");
	assert_string_equal(c->peer_listen, "10.1.0.1");
	assert_int_equal(c->peer_listen_port, 7500);
	assert_string_equal(c->peer_netns, "r0");
	assert_true(c->peer_wait_ns == 500000000ull && c->peer_window_ns == 30000000ull);
	assert_int_equal(c->npeers, 2);
	assert_string_equal(c->peers[0].name, "rank1");
	assert_int_equal(c->peers[0].port, 7500);
	assert_string_equal(c->peers[0].host, "r1.example");
	assert_string_equal(c->peers[1].host, "");
	assert_int_equal(c->peers[1].port, PEER_DEFAULT_PORT);
	assert_int_equal(c->peer_snapshots_per_hour, 7);
	assert_int_equal(c->peer_bundle_max_count, 9);
	assert_true(c->peer_bundle_max_bytes == 2ull << 20);
	assert_int_equal(c->peers[1].key.len, 32);
	assert_int_equal(c->nwarn, 0);          /* private addresses */
	conf_free(c);
}

/* Under the unit, IPAddressDeny=any refuses public addresses: a peer or a
 * peer_address outside its allow list loads, with a warning naming the
 * line and the IPAddressAllow= to add; private ones say nothing. */
static void conf_load__public_peer_addresses__warned_with_line(void **state)
{
	struct conf *c;
	struct msgs ms;
	char text[2048];

	(void)state;
	file("fleet.keys", "1 SHA256 " KEY32 "\n", 0600);
	snprintf(text, sizeof(text),
		 "[port p]\ninterface = eth0\npeer_address = 198.51.100.9\n"     /* 1-3 */
		 "[port q]\ninterface = eth1\npeer_address = 10.0.0.9\n"         /* 4-6 */
		 "[peer rank1]\naddress = 2001:db8::4\nkey_file = %s/fleet.keys\n" /* 7-9 */
		 "[peer rank2]\naddress = 192.168.1.2\nkey_file = %s/fleet.keys\n", dir, dir);
	assert_int_equal(load(text, &c, &ms), 0);
	assert_int_equal(c->nwarn, 2);
	assert_non_null(strstr(c->warn[0], ":3: peer_address: 198.51.100.9 is outside the unit's "
			       "IPAddressAllow="));
	assert_non_null(strstr(c->warn[0], "add IPAddressAllow=198.51.100.9 in a drop-in"));
	assert_non_null(strstr(c->warn[1], ":8: address: 2001:db8::4 is outside"));
	conf_free(c);
}

static void conf_load__bad_peers__every_error_with_its_line(void **state)
{
	struct conf *c;
	struct msgs ms;
	char text[2048];

	(void)state;
	file("open.keys", "1 SHA256 " KEY32 "\n", 0644);
	snprintf(text, sizeof(text),
		 "[peer stall]\naddress = 10.0.0.1\n"                   /* 1-2 */
		 "[peer r1]\naddress = nowhere\nkey_file = %s/open.keys\n" /* 3-5 */
		 "[peer r2]\naddress = 10.0.0.2\n"                      /* 6-7 */
		 "[peer r1]\n"                                          /* 8 */
		 "[peer r3]\naddress = 10.0.0.3\nkey_file = relative\nbogus = 1\n" /* 9-12 */
		 "[daemon]\npeer_listen = 1.2.3.4:99999\npeer_window = 5s\n"   /* 13-15 */
		 "peer_snapshots_per_hour = 0\npeer_bundle_max_count = x\n"    /* 16-17 */
		 "peer_bundle_max_bytes = 1k\n"                                /* 18 */
		 "[peer r4]\naddress = 10.0.0.4\nhost = a b\n", dir);         /* 19-21 */
	assert_true(load(text, &c, &ms) >= 13);
	assert_null(c);
	for (int i = 0; i < ms.n; i++)
		print_message("%s\n", ms.m[i]);
	assert_non_null(strstr(ms.m[0], ":1: peer name 'stall'"));
	assert_non_null(strstr(ms.m[1], ":4: address: 'nowhere'"));
	assert_non_null(strstr(ms.m[2], ":8: peer 'r1' is already defined at line 3"));
	assert_non_null(strstr(ms.m[3], ":11: key_file: 'relative' is not an absolute path"));
	assert_non_null(strstr(ms.m[4], ":12: unknown key 'bogus' in [peer r3]"));
	assert_non_null(strstr(ms.m[5], ":14: peer_listen: port"));
	assert_non_null(strstr(ms.m[6], ":15: peer_window"));
	assert_non_null(strstr(ms.m[7], ":16: peer_snapshots_per_hour"));
	assert_non_null(strstr(ms.m[8], ":17: peer_bundle_max_count"));
	assert_non_null(strstr(ms.m[9], ":18: peer_bundle_max_bytes"));
	assert_non_null(strstr(ms.m[10], ":21: host: 'a b'"));
	/* checked at the end, at the section's line */
	assert_non_null(strstr(ms.m[11], ":3: peer 'r1': key_file"));
	assert_non_null(strstr(ms.m[11], "mode 0644"));
	assert_non_null(strstr(ms.m[12], ":6: peer 'r2' has no key_file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(peerkey_load__hex_and_ascii__bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(peerkey_load__readable_by_others__refused_with_mode,
						setup, teardown),
		cmocka_unit_test_setup_teardown(peerkey_load__bad_keys__refused_naming_the_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(conf_load__peer_sections__addresses_keys_daemon_keys,
						setup, teardown),
		cmocka_unit_test_setup_teardown(conf_load__public_peer_addresses__warned_with_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(conf_load__bad_peers__every_error_with_its_line,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
