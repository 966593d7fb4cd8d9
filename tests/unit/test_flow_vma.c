/* Unit tests for collectors/flows/vma_parse.c: libvma / libxlio statistics files
 * built byte for byte to the layouts of libvma 9.8.84 and libxlio 3.70.2
 * (offsets written out here as literals, from the field order of the
 * released headers, so the shipped table is checked, not trusted).
 * This file: the layout tables, the parser, names, liveness; the files
 * on disk and the emulated engine: test_flow_vma_file.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/flows/vma_parse.h"

#include "vmaimg.h"

/* ---- layouts ---- */

static void flow_vma_layouts__vma_table__matches_literal_offsets(void **state)
{
	const struct flow_vma_layout *l = flow_vma_layout_find(FLOW_VMA_VMA, VMA_MD5, V_SHMEM, 0);

	(void)state;
	assert_non_null(l);
	assert_string_equal(l->release, "libvma 9.8.84");
	assert_int_equal(l->skt_inst_arr, V_BLOCKS);
	assert_int_equal(l->block_size, V_BLOCK);
	assert_int_equal(l->max_skt_inst_num, V_MAXSKT);
	assert_int_equal(l->protocol_ver, V_PROTO);
	assert_int_equal(l->reader_counter, 0);
	assert_int_equal(l->skt_stats + l->counters, V_CNT);
}

static void flow_vma_layouts__one_engine__header_offsets_agree(void **state)
{
	(void)state;
	for (unsigned i = 0; i < flow_vma_nlayouts; i++)
		for (unsigned j = 0; j < flow_vma_nlayouts; j++) {
			const struct flow_vma_layout *a = &flow_vma_layouts[i], *b = &flow_vma_layouts[j];

			if (a->engine != b->engine)
				continue;
			assert_int_equal(a->protocol_ver, b->protocol_ver);
			assert_int_equal(a->max_skt_inst_num, b->max_skt_inst_num);
			assert_int_equal(a->reader_counter, b->reader_counter);
			assert_int_equal(a->sizeof_sh_mem - a->block_size, a->skt_inst_arr);
		}
}

/* ---- parsing ---- */

static void flow_vma_parse__vma_image__socket_decoded(void **state)
{
	size_t len;
	unsigned char *img = vma_image(100, &len);
	char err[256] = "";
	const struct flow_vma_sock *s;

	(void)state;
	vma_put(img, 3, &client);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.nslots, 100);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.torn, 0);
	assert_int_equal(snap.ver[2], 84);
	s = &snap.s[0];
	assert_int_equal(s->slot, 3);
	assert_int_equal(s->fd, 7);
	assert_int_equal(s->tcp_state, 4);
	assert_int_equal(s->family, AF_INET);
	assert_int_equal(ntohs(s->lport), 40000);
	assert_int_equal(ntohs(s->rport), 11111);
	assert_int_equal(s->laddr.s6_addr[10], 0xff);
	assert_int_equal(s->laddr.s6_addr[12], 10);
	assert_int_equal(s->raddr.s6_addr[15], 2);
	assert_int_equal(s->rx_packets, 100);
	assert_int_equal(s->tx_bytes, 6464);
	assert_int_equal(s->tx_retransmits, 2);
	free(img);
}

static void flow_vma_parse__two_reads_disagree__block_skipped_as_torn(void **state)
{
	size_t len;
	unsigned char *a = vma_image(4, &len), *b;
	struct vsock moved = client;
	char err[256] = "";

	(void)state;
	vma_put(a, 0, &client);
	moved.fd = 9;
	moved.lport = 40001;
	vma_put(a, 1, &moved);
	b = malloc(len);
	assert_non_null(b);
	memcpy(b, a, len);
	/* the engine's memcpy ran between our two reads: slot 1's counters
	 * half old, half new */
	p32(b, V_BLOCKS + V_BLOCK + V_CNT + 64, 102);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, a, b, len, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.torn, 1);
	assert_int_equal(snap.s[0].slot, 0);
	free(a);
	free(b);
}

static void flow_vma_parse__header_disagrees__eagain(void **state)
{
	size_t len;
	unsigned char *a = vma_image(4, &len), *b = malloc(len);
	char err[256] = "";

	(void)state;
	assert_non_null(b);
	memcpy(b, a, len);
	p64(b, V_MAXSKT, 5);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, a, b, len, &snap, err, sizeof(err)), -EAGAIN);
	free(a);
	free(b);
}

static void flow_vma_parse__unknown_version__refused_naming_it(void **state)
{
	size_t len;
	unsigned char *img = vma_image(100, &len);
	char err[512] = "";

	(void)state;
	memcpy(img + V_PROTO, "0123456789abcdef0123456789abcdef", 32);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len, &snap, err, sizeof(err)),
			 -ENOMSG);
	assert_non_null(strstr(err, "unknown stats_protocol_ver 0123456789abcdef0123456789abcdef"));
	assert_non_null(strstr(err, VMA_MD5));          /* what it knows */
	assert_null(snap.lay);
	free(img);
}

static void flow_vma_parse__not_hex__refused(void **state)
{
	size_t len;
	unsigned char *img = vma_image(1, &len);
	char err[256] = "";

	(void)state;
	memset(img + V_PROTO, 0, 32);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len, &snap, err, sizeof(err)),
			 -EINVAL);
	free(img);
}

static void flow_vma_parse__truncated_image__refused(void **state)
{
	size_t len;
	unsigned char *img = vma_image(100, &len);
	char err[256] = "";

	(void)state;
	/* max_skt_inst_num says 100 blocks, the file holds 99 */
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len - V_BLOCK, &snap, err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "do not fit"));
	/* shorter than the header */
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, 100, &snap, err, sizeof(err)),
			 -EINVAL);
	free(img);
}

static void flow_vma_parse__impossible_values__block_counted_bad(void **state)
{
	size_t len;
	unsigned char *img = vma_image(3, &len);
	struct vsock s = client;
	char err[256] = "";

	(void)state;
	vma_put(img, 0, &s);
	s.state = 77;                           /* no such tcp_state */
	vma_put(img, 1, &s);
	s = client;
	s.rx_ready_byte = 1ull << 40;           /* more than any socket buffer */
	vma_put(img, 2, &s);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.bad, 2);
	free(img);
}

/* XLIO 3.70.2: IPv6 addresses, 64-bit bytes, the UTLS variant by size. */
#define X_BLOCKS 41256u

static void flow_vma_parse__xlio_ipv6__decoded(void **state)
{
	size_t len = 41720u + 2 * 464u, k = X_BLOCKS + 8, c = k + 24;
	unsigned char *img = calloc(1, len);
	struct in6_addr a6;
	char err[256] = "";

	(void)state;
	assert_non_null(img);
	memcpy(img + 41224, XLIO_MD5, 32);
	p64(img, 41216, 2);
	p8(img, X_BLOCKS, 1);
	p64(img, k + 0, 0);                     /* n_tx_ready_byte_count */
	p64(img, k + 8, 512);                   /* n_rx_ready_byte_count */
	p32(img, k + 16, 2);
	p32(img, k + 20, 4);                    /* ESTABLISHED */
	p64(img, c + 64, 5ull << 32);           /* n_rx_bytes above 32 bits */
	assert_int_equal(inet_pton(AF_INET6, "fd00::1", &a6), 1);
	memcpy(img + k + 352, &a6, 16);
	assert_int_equal(inet_pton(AF_INET6, "fd00::2", &a6), 1);
	memcpy(img + k + 368, &a6, 16);
	p32(img, k + 400, 12);                  /* fd */
	p16(img, k + 432, AF_INET6);
	p16(img, k + 434, htons(7000));
	p16(img, k + 436, htons(7001));
	p8(img, k + 438, SOCK_STREAM);
	p8(img, k + 439, 1);
	assert_int_equal(flow_vma_parse(FLOW_VMA_XLIO, img, img, len, &snap, err, sizeof(err)), 0);
	assert_string_equal(snap.lay->variant, "");
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.s[0].family, AF_INET6);
	assert_memory_equal(&snap.s[0].raddr, &a6, 16);
	assert_int_equal(snap.s[0].rx_bytes, 5ull << 32);
	assert_int_equal(snap.s[0].rx_ready_byte, 512);
	assert_int_equal(ntohs(snap.s[0].rport), 7001);
	free(img);
	/* the same header with DEFINED_UTLS blocks of 528 bytes */
	len = 41784u + 2 * 528u;
	img = calloc(1, len);
	assert_non_null(img);
	memcpy(img + 41224, XLIO_MD5, 32);
	p64(img, 41216, 2);
	assert_int_equal(flow_vma_parse(FLOW_VMA_XLIO, img, img, len, &snap, err, sizeof(err)), 0);
	assert_string_equal(snap.lay->variant, "DEFINED_UTLS");
	free(img);
}

/* XLIO: the engine's memcpy ran between the two reads of one block (its
 * 64-bit n_tx_sent_byte_count differs): that socket is left out as torn,
 * the other kept; and an XLIO file of a release without a table is
 * refused naming its version and the one known. */
static void flow_vma_parse__xlio_torn_and_unknown__torn_skipped_unknown_refused(void **state)
{
	size_t len = 41720u + 2 * 464u;
	unsigned char *a = calloc(1, len), *b = malloc(len);
	char err[512] = "";

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	memcpy(a + 41224, XLIO_MD5, 32);
	p64(a, 41216, 2);
	for (unsigned i = 0; i < 2; i++) {
		size_t k = X_BLOCKS + i * 464u + 8, c = k + 24;

		p8(a, X_BLOCKS + i * 464u, 1);
		p32(a, k + 20, 4);
		p32(a, c + 0, 50);              /* n_rx_packets */
		p64(a, c + 72, 5000);           /* n_tx_sent_byte_count */
		p32(a, c + 88, 51);             /* n_tx_sent_pkt_count */
		p32(a, k + 400, 30 + i);
		p16(a, k + 432, AF_INET6);
		p16(a, k + 434, htons((uint16_t)(7000 + i)));
		p8(a, k + 438, SOCK_STREAM);
	}
	memcpy(b, a, len);
	p64(b, X_BLOCKS + 464u + 8 + 24 + 72, 5064);
	assert_int_equal(flow_vma_parse(FLOW_VMA_XLIO, a, b, len, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	assert_int_equal(snap.torn, 1);
	assert_int_equal(snap.s[0].slot, 0);
	assert_int_equal(snap.s[0].tx_bytes, 5000);
	assert_int_equal(snap.s[0].tx_packets, 51);
	/* another libxlio release */
	memcpy(a + 41224, "fedcba9876543210fedcba9876543210", 32);
	assert_int_equal(flow_vma_parse(FLOW_VMA_XLIO, a, a, len, &snap, err, sizeof(err)),
			 -ENOMSG);
	assert_non_null(strstr(err, "unknown stats_protocol_ver fedcba9876543210fedcba9876543210"));
	assert_non_null(strstr(err, XLIO_MD5));
	assert_null(snap.lay);
	free(a);
	free(b);
}

static void flow_vma_name__names__engine_and_pid(void **state)
{
	enum flow_vma_engine e;
	int pid;

	(void)state;
	assert_int_equal(flow_vma_name("vmastat.1234", &e, &pid), 0);
	assert_int_equal(e, FLOW_VMA_VMA);
	assert_int_equal(pid, 1234);
	assert_int_equal(flow_vma_name("xliostat.7", &e, &pid), 0);
	assert_int_equal(e, FLOW_VMA_XLIO);
	assert_int_equal(flow_vma_name("vmastat.", &e, &pid), -EINVAL);
	assert_int_equal(flow_vma_name("vmastat.12x", &e, &pid), -EINVAL);
	assert_int_equal(flow_vma_name("vmastat.0", &e, &pid), -EINVAL);
	assert_int_equal(flow_vma_name("vmastat.99999999999", &e, &pid), -EINVAL);
}

/* ---- liveness ---- */

#define MS 1000000ull

static struct flow_vma_sock sock_of(const struct vsock *v)
{
	size_t len;
	unsigned char *img = vma_image(1, &len);
	char err[256];
	struct flow_vma_sock s;

	vma_put(img, 0, v);
	assert_int_equal(flow_vma_parse(FLOW_VMA_VMA, img, img, len, &snap, err, sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	s = snap.s[0];
	free(img);
	return s;
}

static void flow_vma_obs__request_without_reply__waiting_then_stalled(void **state)
{
	struct flow_vma_track t = { 0 };
	struct vsock v = client;
	struct flow_vma_sock s;
	struct flow_obs o;

	(void)state;
	v.tx_pkts = 100;                        /* every request answered */
	s = sock_of(&v);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 0, &o), FLOW_LIVE_IDLE);
	assert_int_equal(o.src, FLOW_SRC_VMA);
	assert_int_equal(o.key.proto, IPPROTO_TCP);
	assert_int_equal(ntohs(o.key.dport), 11111);
	assert_int_equal(o.pid, 42);
	v.tx_pkts = 101;                        /* a request left */
	v.tx_bytes += 64;
	s = sock_of(&v);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 100 * MS, &o), FLOW_LIVE_PROGRESS);
	assert_int_equal(o.last_tx_ns, 100 * MS);
	/* nothing comes back */
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 200 * MS, &o), FLOW_LIVE_WAITING);
	assert_false(flow_live_stalled(&t.live, 200 * MS, 200 * MS));
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 300 * MS, &o), FLOW_LIVE_WAITING);
	assert_true(flow_live_stalled(&t.live, 300 * MS, 200 * MS));
	assert_int_equal(t.live.bad_since_ns, 100 * MS);   /* since the request left */
}

static void flow_vma_obs__healthy_ping_pong__never_stalled(void **state)
{
	struct flow_vma_track t = { 0 };
	struct vsock v = client;
	struct flow_vma_sock s;
	struct flow_obs o;
	enum flow_live lv;

	(void)state;
	for (unsigned i = 0; i < 50; i++) {
		/* each poll catches the flow at a random point of its cycle */
		v.tx_pkts += 37 + (i & 1);
		v.rx_pkts = v.tx_pkts - (i & 1);
		v.tx_bytes = v.tx_pkts * 64u;
		v.rx_bytes = v.rx_pkts * 64u;
		s = sock_of(&v);
		lv = flow_vma_obs(&s, "vma", 42, &t, i * 100 * MS, &o);
		assert_true(lv == FLOW_LIVE_PROGRESS || lv == FLOW_LIVE_IDLE);
		assert_false(flow_live_stalled(&t.live, i * 100 * MS, 200 * MS));
	}
	/* and after it ends with every request answered: idle, not waiting */
	v.rx_pkts = v.tx_pkts;
	s = sock_of(&v);
	flow_vma_obs(&s, "vma", 42, &t, 5100 * MS, &o);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 5200 * MS, &o), FLOW_LIVE_IDLE);
}

static void flow_vma_obs__data_ready_not_consumed__held(void **state)
{
	struct flow_vma_track t = { 0 };
	struct vsock v = client;
	struct flow_vma_sock s;
	struct flow_obs o;

	(void)state;
	s = sock_of(&v);
	flow_vma_obs(&s, "vma", 42, &t, 0, &o);
	v.rx_ready_pkt = 1;
	v.rx_ready_byte = 64;                   /* arrived, application reads nothing */
	s = sock_of(&v);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 100 * MS, &o), FLOW_LIVE_HELD);
	assert_int_equal(o.unread, 64);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 400 * MS, &o), FLOW_LIVE_HELD);
	assert_true(flow_live_stalled(&t.live, 400 * MS, 200 * MS));
	/* the application reads: progress, the hold is over */
	v.rx_ready_byte = 0;
	v.rx_pkts++;
	v.rx_bytes += 64;
	s = sock_of(&v);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 500 * MS, &o), FLOW_LIVE_PROGRESS);
	assert_false(flow_live_stalled(&t.live, 500 * MS, 200 * MS));
}

static void flow_vma_obs__32bit_counters_wrap__unwrapped(void **state)
{
	struct flow_vma_track t = { 0 };
	struct vsock v = client;
	struct flow_vma_sock s;
	struct flow_obs o;

	(void)state;
	v.tx_bytes = 0xffffff00u;
	v.rx_bytes = 0xffffff00u;
	s = sock_of(&v);
	flow_vma_obs(&s, "vma", 42, &t, 0, &o);
	v.tx_bytes = 0x100;                     /* 0x200 bytes later */
	v.rx_bytes = 0x80;
	v.tx_pkts += 2;
	v.rx_pkts += 2;
	s = sock_of(&v);
	assert_int_equal(flow_vma_obs(&s, "vma", 42, &t, 100 * MS, &o), FLOW_LIVE_PROGRESS);
	assert_int_equal(o.tx_bytes, 0x200);
	assert_int_equal(o.rx_bytes, 0x180);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_vma_layouts__vma_table__matches_literal_offsets),
		cmocka_unit_test(flow_vma_layouts__one_engine__header_offsets_agree),
		cmocka_unit_test(flow_vma_parse__vma_image__socket_decoded),
		cmocka_unit_test(flow_vma_parse__two_reads_disagree__block_skipped_as_torn),
		cmocka_unit_test(flow_vma_parse__header_disagrees__eagain),
		cmocka_unit_test(flow_vma_parse__unknown_version__refused_naming_it),
		cmocka_unit_test(flow_vma_parse__not_hex__refused),
		cmocka_unit_test(flow_vma_parse__truncated_image__refused),
		cmocka_unit_test(flow_vma_parse__impossible_values__block_counted_bad),
		cmocka_unit_test(flow_vma_parse__xlio_ipv6__decoded),
		cmocka_unit_test(flow_vma_parse__xlio_torn_and_unknown__torn_skipped_unknown_refused),
		cmocka_unit_test(flow_vma_name__names__engine_and_pid),
		cmocka_unit_test(flow_vma_obs__request_without_reply__waiting_then_stalled),
		cmocka_unit_test(flow_vma_obs__healthy_ping_pong__never_stalled),
		cmocka_unit_test(flow_vma_obs__data_ready_not_consumed__held),
		cmocka_unit_test(flow_vma_obs__32bit_counters_wrap__unwrapped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
