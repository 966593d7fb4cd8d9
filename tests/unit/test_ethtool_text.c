/* Unit tests for collectors/counters/ethtool_text_parse.c on real `ethtool -S` dumps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/counters/ethtool_text_parse.h"
#include "lib/util.h"

#define FIXDIR "tests/fixtures/real"

static char *slurp(const char *path, size_t *len)
{
	char *t = util_read_file(path, 1u << 20, len);

	assert_non_null(t);
	return t;
}

static int find(const struct etxt *e, const char *name)
{
	for (unsigned i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return (int)i;
	return -1;
}

static uint64_t val(const struct etxt *e, const char *name)
{
	int i = find(e, name);

	if (i < 0)
		fail_msg("counter '%s' not parsed", name);
	return e->vals[i];
}

static void parse_fixture(const char *base, struct etxt *e)
{
	char path[512], err[256];
	size_t len;
	char *buf;

	snprintf(path, sizeof(path), "%s/%s", FIXDIR, base);
	buf = slurp(path, &len);
	if (etxt_parse(buf, len, e, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	free(buf);
}

static const struct {
	const char *file;
	unsigned n;
} counts[] = {
	{ "ethtool-S_i40e-ethq_2.txt", 202 },
	{ "ethtool-S_i40e-v2.3.2k-ethq_1.txt", 418 },
	{ "ethtool-S_ice-ethq_1.txt", 602 },
	{ "ethtool-S_mlx5-100G-mlnx-ofed-annotated-notes_3.txt", 263 },
	{ "ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt", 751 },
	{ "ethtool-S_mlx5-cx4lx-k4.4-oldnames-ethq_2.txt", 309 },
	{ "ethtool-S_mlx5-cx6dx-k5.15-nonzero-bpf-list_1.txt", 101 },
	{ "ethtool-S_mlx5-cx6dx-k6.5-nonzero-bpf-list_2.txt", 108 },
	{ "ethtool-S_sfc-ethq_1.txt", 152 },
};

/* Independent scan: sscanf each line after the '#' source line; every line
 * that reads as "name: value" must be the next parsed counter; once the
 * counters started, every non-blank line must read that way. */
static void check_one_fixture(const char *path)
{
	struct etxt e = { 0 };
	char err[256], *buf, *line, *save = NULL;
	unsigned k = 0, lineno = 0, started = 0;
	size_t len;

	buf = slurp(path, &len);
	if (etxt_parse(buf, len, &e, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[300];
		unsigned long long v;
		int used = -1;

		lineno++;
		if (line[0] == '#')
			continue;
		if (sscanf(line, " %299[^:]: %llu%n", name, &v, &used) == 2 &&
		    line[used] == '\0') {
			started = 1;
			if (k >= e.n)
				fail_msg("%s:%u: '%s' not parsed", path, lineno, name);
			if (strcmp(e.names[k], name))
				fail_msg("%s:%u: parsed '%s', file has '%s'", path,
					 lineno, e.names[k], name);
			if (e.vals[k] != v)
				fail_msg("%s:%u: %s parsed %llu, file has %llu",
					 path, lineno, name,
					 (unsigned long long)e.vals[k], v);
			k++;
		} else if (started) {
			fail_msg("%s:%u: unexpected line after the counters", path,
				 lineno);
		}
	}
	assert_int_equal(k, e.n);
	assert_int_equal(e.ndup, 0);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (strstr(path, counts[i].file))
			assert_int_equal(e.n, counts[i].n);
	free(buf);
	etxt_free(&e);
}

static void etxt_parse__every_real_fixture__every_line_exact(void **state)
{
	glob_t g;

	(void)state;
	assert_int_equal(glob(FIXDIR "/ethtool-S_*.txt", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= sizeof(counts) / sizeof(counts[0]));
	for (size_t i = 0; i < g.gl_pathc; i++)
		check_one_fixture(g.gl_pathv[i]);
	globfree(&g);
}

static void etxt_parse__cx4lx__phy_equals_vport_sum(void **state)
{
	struct etxt e = { 0 };

	(void)state;
	parse_fixture("ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt", &e);
	assert_int_equal(e.n, 751);
	assert_string_equal(e.names[0], "rx_packets");
	assert_int_equal(e.vals[0], 845320277);
	assert_int_equal(val(&e, "rx_packets_phy"), 845715962);
	assert_int_equal(val(&e, "rx_vport_unicast_packets") +
			 val(&e, "rx_vport_multicast_packets") +
			 val(&e, "rx_vport_broadcast_packets"), 845715962);
	assert_int_equal(val(&e, "tx_bytes"), 2655285206479ull);
	assert_string_equal(e.names[e.n - 1], "tx15_xmit_more");
	assert_int_equal(e.vals[e.n - 1], 5530);
	etxt_free(&e);
}

static void etxt_parse__headers_and_intel_sfc__spot_values(void **state)
{
	struct etxt e = { 0 };

	(void)state;
	/* Separator, free-text header and "NIC statistics:" skipped. */
	parse_fixture("ethtool-S_mlx5-cx6dx-k6.5-nonzero-bpf-list_2.txt", &e);
	assert_string_equal(e.names[0], "rx_packets");
	assert_int_equal(e.vals[0], 7282880);
	assert_int_equal(val(&e, "rx_out_of_buffer"), 534918379);
	/* Solarflare: no indentation, dashes and dots in names. */
	parse_fixture("ethtool-S_sfc-ethq_1.txt", &e);
	assert_int_equal(val(&e, "port_rx_packets"), 1653);
	assert_int_equal(val(&e, "port_tx_bytes"), 795279);
	assert_int_equal(val(&e, "tx-xdp-cpu-23.tx_packets"), 0);
	/* Intel i40e, ice. */
	parse_fixture("ethtool-S_i40e-ethq_2.txt", &e);
	assert_int_equal(val(&e, "rx_packets"), 371706048609ull);
	parse_fixture("ethtool-S_i40e-v2.3.2k-ethq_1.txt", &e);
	assert_int_equal(val(&e, "rx_dropped"), 179160);
	assert_int_equal(val(&e, "port.rx_dropped"), 0);
	parse_fixture("ethtool-S_ice-ethq_1.txt", &e);
	assert_int_equal(val(&e, "rx_unicast"), 12117448);
	assert_int_equal(val(&e, "rx_unicast.nic"), 12117448);
	assert_int_equal(find(&e, "NIC statistics"), -1);
	etxt_free(&e);
}

/* Parse a string that must fail; return the error text. */
static int parse_bad(const char *in, size_t len, struct etxt *e, char *err,
		     size_t errlen)
{
	int rc = etxt_parse(in, len, e, err, errlen);

	assert_true(rc < 0);
	assert_int_equal(e->n, 0);
	assert_true(err[0] != '\0');
	return rc;
}

#define BAD(s, e, err) parse_bad((s), sizeof(s) - 1, (e), (err), sizeof(err))

static void etxt_parse__garbage_after_counters__error_names_line(void **state)
{
	struct etxt e = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(BAD("NIC statistics:\n  rx_packets: 1\n%%$ garbage\n",
			     &e, err), -EINVAL);
	assert_int_equal(e.err_line, 3);
	assert_non_null(strstr(err, "line 3: "));
	assert_non_null(strstr(err, "garbage"));
	/* Truncated mid-name: no colon. */
	assert_int_equal(BAD("rx_packets: 1\nrx_pack", &e, err), -EINVAL);
	assert_int_equal(e.err_line, 2);
	assert_non_null(strstr(err, "'rx_pack'"));
	etxt_free(&e);
}

static void etxt_parse__bad_values__error_names_counter(void **state)
{
	struct etxt e = { 0 };
	char err[256];

	(void)state;
	BAD("a: 1\nrx_packets: 18446744073709551616\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_packets':"));
	assert_non_null(strstr(err, "64 bits"));
	BAD("rx_packets: 99999999999999999999999\n", &e, err);
	assert_non_null(strstr(err, "line 1: counter 'rx_packets':"));
	BAD("  rx_dropped: -1\n", &e, err);
	assert_non_null(strstr(err, "line 1: counter 'rx_dropped': negative"));
	BAD("a: 1\nrx_dropped: +1\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_dropped':"));
	BAD("a: 1\nrx_dropped: 12abc\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_dropped': garbage"));
	BAD("a: 1\nrx_dropped: 12 13\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_dropped':"));
	BAD("a: 1\nrx_dropped: 0x10\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_dropped':"));
	BAD("a: 1\nb: 1\0\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'b':"));
	BAD("a: 1\nrx_dropped:\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter 'rx_dropped': missing value"));
	BAD("a: 1\n: 5\n", &e, err);
	assert_non_null(strstr(err, "line 2: "));
	BAD("a: 1\nb\x01x: 5\n", &e, err);
	assert_non_null(strstr(err, "line 2: counter name"));
	etxt_free(&e);
}

static void etxt_parse__u64_max__accepted(void **state)
{
	struct etxt e = { 0 };
	static const char in[] = "x: 18446744073709551615\ny: 007\n";

	(void)state;
	assert_int_equal(etxt_parse(in, sizeof(in) - 1, &e, NULL, 0), 0);
	assert_int_equal(e.n, 2);
	assert_true(e.vals[0] == UINT64_MAX);
	assert_int_equal(e.vals[1], 7);
	etxt_free(&e);
}

static void etxt_parse__empty_or_headers_only__no_counters(void **state)
{
	struct etxt e = { 0 };
	char err[256];

	(void)state;
	BAD("", &e, err);
	assert_string_equal(err, "no counters");
	assert_int_equal(e.err_line, 0);
	BAD("# only a comment\n\nNIC statistics:\n", &e, err);
	assert_string_equal(err, "no counters");
	/* Truncated to a partial first name. */
	BAD("NIC statistics:\n     rx_pack", &e, err);
	assert_string_equal(err, "no counters");
	assert_int_equal(etxt_parse(NULL, 0, &e, err, sizeof(err)), -EINVAL);
	etxt_free(&e);
}

static void etxt_parse__over_8mib__refused(void **state)
{
	struct etxt e = { 0 };
	size_t len = 10u << 20;
	char *big = malloc(len), err[256];

	(void)state;
	assert_non_null(big);
	for (size_t i = 0; i < len; i += 16)
		memcpy(big + i, "c: 123456789012\n", 16);
	assert_int_equal(etxt_parse(big, len, &e, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "exceeds"));
	assert_int_equal(e.n, 0);
	free(big);
	etxt_free(&e);
}

static void etxt_parse__too_many_counters__refused(void **state)
{
	struct etxt e = { 0 };
	size_t cap = (ETXT_MAX_COUNTERS + 2) * 16, len = 0;
	char *in = malloc(cap), err[256];

	(void)state;
	assert_non_null(in);
	for (unsigned i = 0; i <= ETXT_MAX_COUNTERS; i++)
		len += (size_t)sprintf(in + len, "c%u: %u\n", i, i);
	assert_int_equal(etxt_parse(in, len, &e, err, sizeof(err)), -E2BIG);
	assert_int_equal(e.err_line, ETXT_MAX_COUNTERS + 1);
	assert_non_null(strstr(err, "more than 65536 counters"));
	free(in);
	etxt_free(&e);
}

static void etxt_parse__long_line__refused(void **state)
{
	struct etxt e = { 0 };
	size_t len = 2 * ETXT_MAX_LINE;
	char *in = malloc(len + 16), err[256];

	(void)state;
	assert_non_null(in);
	memcpy(in, "a: 1\n", 5);
	memset(in + 5, 'x', len);
	memcpy(in + 5 + len, ": 1\n", 4);
	assert_int_equal(etxt_parse(in, len + 9, &e, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "line 2: line longer than"));
	/* A name over ETXT_MAX_NAME in a short enough line. */
	memset(in + 5, 'x', ETXT_MAX_NAME + 1);
	memcpy(in + 5 + ETXT_MAX_NAME + 1, ": 1\n", 4);
	assert_int_equal(etxt_parse(in, ETXT_MAX_NAME + 10, &e, err,
				    sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "line 2: counter name"));
	free(in);
	etxt_free(&e);
}

static void etxt_parse__formats__names_and_values(void **state)
{
	struct etxt e = { 0 };
	static const char in[] =
		"----\r\nethtool output (6.5) - zero\r\nNIC statistics:\r\n"
		"\t [0]: rx_bytes: 5\r\n"
		"\n"
		"# a comment between counters\n"
		"rx-0.packets :   17   \n"
		"     with space: 3\n"
		"last: 42";                     /* no final newline */

	(void)state;
	assert_int_equal(etxt_parse(in, sizeof(in) - 1, &e, NULL, 0), 0);
	assert_int_equal(e.n, 4);
	assert_string_equal(e.names[0], "[0]: rx_bytes");
	assert_int_equal(e.vals[0], 5);
	assert_string_equal(e.names[1], "rx-0.packets");
	assert_int_equal(e.vals[1], 17);
	assert_string_equal(e.names[2], "with space");
	assert_int_equal(e.vals[2], 3);
	assert_string_equal(e.names[3], "last");
	assert_int_equal(e.vals[3], 42);
	etxt_free(&e);
}

static void etxt_parse__duplicate_name__first_kept_counted(void **state)
{
	struct etxt e = { 0 };
	static const char in[] = "a: 1\nb: 2\na: 3\nc: 4\nb: 5\n";

	(void)state;
	assert_int_equal(etxt_parse(in, sizeof(in) - 1, &e, NULL, 0), 0);
	assert_int_equal(e.n, 3);
	assert_int_equal(val(&e, "a"), 1);
	assert_int_equal(val(&e, "b"), 2);
	assert_int_equal(val(&e, "c"), 4);
	assert_int_equal(e.ndup, 2);
	assert_int_equal(e.dup_line, 3);
	etxt_free(&e);
}

static void etxt_parse__reused_struct__fresh_results(void **state)
{
	struct etxt e = { 0 };
	char err[256];

	(void)state;
	parse_fixture("ethtool-S_ice-ethq_1.txt", &e);
	assert_int_equal(e.n, 602);
	assert_int_equal(etxt_parse("z: 9\n", 5, &e, err, sizeof(err)), 0);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.names[0], "z");
	assert_int_equal(e.vals[0], 9);
	assert_int_equal(e.ndup, 0);
	parse_fixture("ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt", &e);
	assert_int_equal(e.n, 751);
	assert_int_equal(val(&e, "rx_packets_phy"), 845715962);
	etxt_free(&e);
}

static void etxt_parse__65536_counters__linear_time(void **state)
{
	struct etxt e = { 0 };
	size_t cap = (ETXT_MAX_COUNTERS + 1) * 40, len = 0;
	char *in = malloc(cap), err[256];
	struct timespec t0, t1;
	double ms;

	(void)state;
	assert_non_null(in);
	for (unsigned i = 0; i < ETXT_MAX_COUNTERS; i++)
		len += (size_t)sprintf(in + len, "     rx%u_packets_counter: %u\n",
				       i, i * 7);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < 5; r++)
		assert_int_equal(etxt_parse(in, len, &e, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_int_equal(e.n, ETXT_MAX_COUNTERS);
	assert_int_equal(e.vals[ETXT_MAX_COUNTERS - 1],
			 (ETXT_MAX_COUNTERS - 1) * 7u);
	/* Linear: a few ms per parse; a quadratic duplicate check takes
	 * seconds for 65536 names. Generous bound for ASan builds. */
	if (ms > 2000)
		fail_msg("5 parses of 65536 counters took %.0f ms", ms);
	free(in);
	etxt_free(&e);
}

/* a (warm: it parsed the dump before) and b (fresh) agree on everything */
static void same_result(int ra, const struct etxt *a, const char *ea, int rb,
			const struct etxt *b, const char *eb)
{
	assert_int_equal(ra, rb);
	assert_string_equal(ea, eb);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->ndup, b->ndup);
	assert_int_equal(a->dup_line, b->dup_line);
	assert_int_equal(a->err_line, b->err_line);
	for (unsigned i = 0; i < a->n; i++) {
		assert_string_equal(a->names[i], b->names[i]);
		assert_int_equal(a->vals[i], b->vals[i]);
	}
}

/* The second and later parses of a port's file: the same names in the same
 * order have only their values read (same = 1); any other input, an
 * edited dump or a hostile one, gets what a fresh struct gets from it. */
static void etxt_parse__warm_struct__same_as_fresh(void **state)
{
	static const char *const edits[] = {
		"NIC statistics:\n     rx_packets: 5\n     tx_packets: 6\n",
		"NIC statistics:\n     tx_packets: 6\n     rx_packets: 5\n",      /* order */
		"NIC statistics:\n     rx_packets: 5\n",                           /* one fewer */
		"NIC statistics:\n     rx_packets: 5\n     tx_packets: 6\n     x: 1\n",
		"NIC statistics:\n     rx_packets: 5\n     rx_packets: 7\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets: +5\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets: -5\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets: 5: 6\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets: 5x\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets: 18446744073709551616\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets:\n     tx_packets: 6\n",
		"NIC statistics:\n     rx_packets 5\n     tx_packets: 6\n",
		"     rx_packets: 5\n# comment\n\n     tx_packets: 6 \r\n",
		"more: 1\n     rx_packets: 5\n     tx_packets: 6\n",                  /* a counter first */
		"     rx_packet: 5\n     tx_packets: 6\n",                              /* renamed */
		"     rx_packets: 5\n     tx_packets: 6\n     junk line\n",
		"",
	};
	struct etxt a = { 0 }, b = { 0 };
	char ea[256], eb[256], *orig, *buf;
	const char *base = "NIC statistics:\n     rx_packets: 1\n     tx_packets: 2\n";
	size_t len;
	int ra, rb;

	(void)state;
	for (size_t k = 0; k < sizeof(edits) / sizeof(edits[0]); k++) {
		assert_int_equal(etxt_parse(base, strlen(base), &a, ea, sizeof(ea)), 0);
		ra = etxt_parse(edits[k], strlen(edits[k]), &a, ea, sizeof(ea));
		rb = etxt_parse(edits[k], strlen(edits[k]), &b, eb, sizeof(eb));
		same_result(ra, &a, ea, rb, &b, eb);
		etxt_free(&b);                          /* fresh again next time */
		if (k == 0 || k == 12)
			assert_true(a.same);            /* only values read */
		else if (ra == 0)
			assert_false(a.same);
	}
	/* the real dump: again, a value changed, then random damage */
	orig = slurp(FIXDIR "/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt", &len);
	buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(etxt_parse(orig, len, &a, ea, sizeof(ea)), 0);
	assert_false(a.same);
	assert_int_equal(etxt_parse(orig, len, &a, ea, sizeof(ea)), 0);
	assert_true(a.same);
	assert_int_equal(a.n, 751);
	assert_int_equal(val(&a, "rx_packets_phy"), 845715962);
	srand(4242);
	for (int it = 0; it < 2000; it++) {
		memcpy(buf, orig, len);
		for (int k = rand() % 3; k >= 0; k--)
			buf[(size_t)rand() % len] = (char)(it % 2 ? '0' + rand() % 10 : rand() % 256);
		assert_int_equal(etxt_parse(orig, len, &a, ea, sizeof(ea)), 0);
		ra = etxt_parse(buf, len, &a, ea, sizeof(ea));
		rb = etxt_parse(buf, len, &b, eb, sizeof(eb));
		same_result(ra, &a, ea, rb, &b, eb);
		etxt_free(&b);
	}
	free(buf);
	free(orig);
	etxt_free(&a);
}

/* Mutated and truncated copies of a real dump: never a crash, and either a
 * clean error or counters whose every name is non-empty and printable. */
static void etxt_parse__mutated_real_dump__error_or_sane(void **state)
{
	struct etxt e = { 0 };
	char path[] = FIXDIR "/ethtool-S_mlx5-cx6dx-k5.15-nonzero-bpf-list_1.txt";
	char err[256], *orig, *buf;
	size_t len;
	unsigned ok = 0, bad = 0;

	(void)state;
	orig = slurp(path, &len);
	buf = malloc(len);
	assert_non_null(buf);
	srand(12345);
	for (int it = 0; it < 3000; it++) {
		size_t n = len;

		memcpy(buf, orig, len);
		for (int k = rand() % 4; k >= 0; k--)
			buf[(size_t)rand() % len] = (char)(rand() % 256);
		if (it % 3 == 0)
			n = (size_t)rand() % len;
		err[0] = 'x';
		if (etxt_parse(buf, n, &e, err, sizeof(err)) == 0) {
			ok++;
			assert_true(e.n > 0);
			for (unsigned i = 0; i < e.n; i++) {
				assert_true(e.names[i][0] != '\0');
				for (const char *c = e.names[i]; *c; c++)
					assert_true((unsigned char)*c >= 0x20 &&
						    *c != 0x7f);
			}
		} else {
			bad++;
			assert_int_equal(e.n, 0);
			assert_true(err[0] != '\0' && err[0] != 'x');
			for (const char *c = err; *c; c++)
				assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
		}
	}
	assert_true(ok > 100);
	assert_true(bad > 100);
	free(buf);
	free(orig);
	etxt_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(etxt_parse__every_real_fixture__every_line_exact),
		cmocka_unit_test(etxt_parse__cx4lx__phy_equals_vport_sum),
		cmocka_unit_test(etxt_parse__headers_and_intel_sfc__spot_values),
		cmocka_unit_test(etxt_parse__garbage_after_counters__error_names_line),
		cmocka_unit_test(etxt_parse__bad_values__error_names_counter),
		cmocka_unit_test(etxt_parse__u64_max__accepted),
		cmocka_unit_test(etxt_parse__empty_or_headers_only__no_counters),
		cmocka_unit_test(etxt_parse__over_8mib__refused),
		cmocka_unit_test(etxt_parse__too_many_counters__refused),
		cmocka_unit_test(etxt_parse__long_line__refused),
		cmocka_unit_test(etxt_parse__formats__names_and_values),
		cmocka_unit_test(etxt_parse__duplicate_name__first_kept_counted),
		cmocka_unit_test(etxt_parse__reused_struct__fresh_results),
		cmocka_unit_test(etxt_parse__warm_struct__same_as_fresh),
		cmocka_unit_test(etxt_parse__65536_counters__linear_time),
		cmocka_unit_test(etxt_parse__mutated_real_dump__error_or_sane),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
