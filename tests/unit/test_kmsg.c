/* Unit tests: the kernel's lines about a port's device (probes/kmsg.c
 * kmsg_parse_device), as devkmsg_read() writes its records: seed 000's
 * firmware line by the bus address, a netdev's lines by its name, the
 * dictionary's DEVICE=+pci:BUS, and never another device's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "lib/util.h"
#include "probes/kmsg.h"

#define BUS "0000:03:00.1"

static int parse(const char *rec, const char *ifname, const char *bus, struct kmsg_line *l)
{
	return kmsg_parse_device(rec, strlen(rec), ifname, bus, l);
}

static void kmsg_parse_device__seed000_fw_line__by_its_bus(void **state)
{
	struct kmsg_line l;

	(void)state;
	assert_int_equal(parse("3,612,4017263,-;mlx5_core 0000:03:00.1: fw query isn't supported "
			       "by the FW\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.1\n",
			       "ens1f1np1", BUS, &l), 1);
	assert_string_equal(l.text, "mlx5_core 0000:03:00.1: fw query isn't supported by the FW");
	assert_int_equal(l.seq, 612);
	assert_int_equal(l.ts_us, 4017263);
	/* netdev_printk of a netdev with a parent: "<driver> <bus> <ifname>: " */
	assert_int_equal(parse("6,900,9000000,-;mlx5_core 0000:03:00.1 ens1f1np1: Link up\n",
			       "ens1f1np1", BUS, &l), 1);
	/* the other function of the card is another device */
	assert_int_equal(parse("3,611,4017000,-;mlx5_core 0000:03:00.0: fw query isn't supported "
			       "by the FW\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.0\n",
			       "ens1f1np1", BUS, &l), 0);
}

static void kmsg_parse_device__netdev_name__a_whole_word(void **state)
{
	struct kmsg_line l;

	(void)state;
	assert_int_equal(parse("6,5,100,-;eth1: entered promiscuous mode\n", "eth1", NULL, &l), 1);
	assert_int_equal(parse("6,6,100,-;IPv6: ADDRCONF(NETDEV_CHANGE): eth1: link becomes ready\n",
			       "eth1", "", &l), 1);
	assert_int_equal(parse("6,7,100,-;eth10: entered promiscuous mode\n", "eth1", NULL, &l), 0);
	assert_int_equal(parse("6,8,100,-;veth-eth1: entered promiscuous mode\n", "eth1", NULL, &l),
			 0);
	assert_int_equal(parse("6,9,100,-;eth1 renamed\n", "eth1", NULL, &l), 0);
}

static void kmsg_parse_device__dictionary_only__by_its_device(void **state)
{
	struct kmsg_line l;

	(void)state;
	/* a line whose text names no device: the dictionary does */
	assert_int_equal(parse("4,70,200,-;Detected unsupported cable\n SUBSYSTEM=pci\n"
			       " DEVICE=+pci:0000:03:00.1\n", "eth1", BUS, &l), 1);
	assert_int_equal(parse("4,71,200,-;Detected unsupported cable\n SUBSYSTEM=pci\n"
			       " DEVICE=+pci:0000:03:00.10\n", "eth1", BUS, &l), 0);
}

static void kmsg_parse_device__hostile_records__bounded(void **state)
{
	struct kmsg_line l;
	char big[4096];

	(void)state;
	assert_int_equal(parse("no header at all", "eth1", BUS, &l), -1);
	assert_int_equal(parse("x,y,z;eth1: text", "eth1", BUS, &l), -1);
	assert_int_equal(parse("6,1,1,-;eth1: a\x1b[31mred\x07 line", "eth1", BUS, &l), 1);
	assert_null(strchr(l.text, '\x1b'));
	memset(big, 'a', sizeof(big));
	memcpy(big, "6,2,2,-;eth1: ", 14);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(parse(big, "eth1", BUS, &l), 1);
	assert_int_equal(strlen(l.text), KMSG_LINE_MAX - 1);
	/* no device to look for: nothing is the device's */
	assert_int_equal(parse("6,3,3,-;eth1: up\n", NULL, NULL, &l), 0);
}

/* Both directions of one connection are one connection (the summary's
 * flows, the facts' stalled count). */
/* The device's lines kept: the first 16, then the newest, oldest first,
 * and the count left out between; for 1,000 lines into 64 slots, for
 * exactly as many lines as slots, one more, and fewer slots than the first
 * 16. */
static void keep_n(size_t max, unsigned lines, struct kmsg_line *out, size_t *n, size_t *more)
{
	struct kmsg_keep k = { .out = out, .max = max };

	for (unsigned i = 0; i < lines; i++) {
		struct kmsg_line l = { .seq = i };

		kmsg_keep_add(&k, &l);
	}
	*n = kmsg_keep_end(&k);
	*more = k.more;
}

static void kmsg_keep__more_lines_than_slots__first_and_newest_in_order(void **state)
{
	static struct kmsg_line out[64];
	static const unsigned lines[] = { 1000, 64, 65, 80, 10 };
	size_t n, more;

	(void)state;
	for (size_t t = 0; t < sizeof(lines) / sizeof(lines[0]); t++) {
		unsigned m = lines[t];

		keep_n(64, m, out, &n, &more);
		assert_int_equal(n, m < 64 ? m : 64);
		assert_int_equal(more, m > 64 ? m - 64 : 0);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(out[i].seq, i < KMSG_KEEP_FIRST || m <= 64 ? i :
					 m - 64 + i);
	}
	keep_n(8, 100, out, &n, &more);         /* fewer slots than the first 16 */
	assert_int_equal(n, 8);
	assert_int_equal(more, 92);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i].seq, i);
}

static void util_conn_key__both_directions__one_key(void **state)
{
	char a[200], b[200];

	(void)state;
	util_conn_key("tcp 10.219.0.2:11111 -> 10.219.0.1:45726", a, sizeof(a));
	util_conn_key("tcp 10.219.0.1:45726 -> 10.219.0.2:11111", b, sizeof(b));
	assert_string_equal(a, b);
	assert_string_equal(a, "tcp 10.219.0.1:45726 <-> 10.219.0.2:11111");
	util_conn_key("udp 10.0.0.1:5 -> 10.0.0.1:6", a, sizeof(a));
	util_conn_key("tcp 10.0.0.1:5 -> 10.0.0.1:6", b, sizeof(b));
	assert_string_not_equal(a, b);
	util_conn_key("not a tuple", a, sizeof(a));
	assert_string_equal(a, "not a tuple");
	util_conn_key(NULL, a, sizeof(a));
	assert_string_equal(a, "");
	/* a hostile bundle's tuple with the arrow at the first blank (no
	 * first address): as it is, never a copy of -1 bytes (fuzz_bundle) */
	util_conn_key("tcp -> 10.0.0.1:6", a, sizeof(a));
	assert_string_equal(a, "tcp -> 10.0.0.1:6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kmsg_parse_device__seed000_fw_line__by_its_bus),
		cmocka_unit_test(kmsg_parse_device__netdev_name__a_whole_word),
		cmocka_unit_test(kmsg_parse_device__dictionary_only__by_its_device),
		cmocka_unit_test(kmsg_parse_device__hostile_records__bounded),
		cmocka_unit_test(kmsg_keep__more_lines_than_slots__first_and_newest_in_order),
		cmocka_unit_test(util_conn_key__both_directions__one_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
