/* collectors/flows/vma_parse.c's offset table against the engines' real headers:
 * libvma 9.8.84's vma_stats.h and libxlio 3.70.2's xlio_stats.h (with and
 * without DEFINED_UTLS), vendored in tests/fixtures/engines/ and compiled
 * in tests/engine/engine_stats.cc, which gives offsetof() and sizeof() of
 * the real structs and writes images through them. Every member of every
 * row of flow_vma_layouts[] is compared; images written through the real
 * structs are parsed back field by field; and a socket whose traffic goes
 * through the engine's OS path is seen moving. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "collectors/flows/vma_parse.h"
#include "tests/engine/engine_stats.h"

#define MS 1000000ull

/* Width the reader reads at that offset: W_ADDR addr_len bytes, W_BYTES
 * byte_width bytes, 0 not a field it reads (a size, a nested struct). */
#define W_ADDR  1000u
#define W_BYTES 1001u

/* Every uint32_t member of struct flow_vma_layout, with the width
 * collectors/flows/vma_parse.c reads there (block_fields(), block_decode(),
 * flow_vma_parse(), flow_vma_file_bump()). */
#define LAYOUT_MEMBERS(X) \
	X(reader_counter, 4) X(ver_info, 4) X(protocol_ver, 32) X(max_skt_inst_num, 8) \
	X(skt_inst_arr, 0) X(block_size, 0) X(sizeof_sh_mem, 0) \
	X(b_enabled, 1) X(skt_stats, 0) \
	X(fd, 4) X(inode, 4) X(tcp_state, 4) X(socket_type, 1) X(b_is_offloaded, 1) \
	X(bound_if, W_ADDR) X(connected_ip, W_ADDR) X(bound_port, 2) X(connected_port, 2) \
	X(sa_family, 2) X(addr_len, 0) \
	X(rx_ready_pkt, 4) X(rx_ready_byte, 8) X(tx_ready_byte, 8) X(counters, 0) \
	X(rx_packets, 4) X(rx_bytes, W_BYTES) X(rx_errors, 4) X(rx_drop_pkt, 4) \
	X(rx_drop_byte, 4) X(tx_packets, 4) X(tx_bytes, W_BYTES) X(tx_errors, 4) \
	X(tx_retransmits, 4) \
	X(rx_os_packets, 4) X(rx_os_bytes, W_BYTES) X(rx_os_errors, 4) X(rx_os_eagain, 4) \
	X(tx_os_packets, 4) X(tx_os_bytes, W_BYTES) X(tx_os_errors, 4) X(tx_os_eagain, 4) \
	X(byte_width, 0)

struct member {
	const char *name;
	size_t off;             /* in struct flow_vma_layout */
	uint32_t width;
};

#define M(n, w) { #n, offsetof(struct flow_vma_layout, n), w },
static const struct member members[] = { LAYOUT_MEMBERS(M) };
#undef M
#define ONE(n, w) +1
enum { NMEMBERS = 0 LAYOUT_MEMBERS(ONE) };
#undef ONE

/* a member added to the table and not to the list above fails the build */
_Static_assert(offsetof(struct flow_vma_layout, byte_width) + 4 -
	       offsetof(struct flow_vma_layout, reader_counter) == 4 * NMEMBERS,
	       "LAYOUT_MEMBERS must list every offset of struct flow_vma_layout");
_Static_assert(sizeof(struct flow_vma_layout) == offsetof(struct flow_vma_layout, byte_width) + 4,
	       "byte_width must stay the last member of struct flow_vma_layout");

static const struct eng_variant *const variants[] = { &eng_vma, &eng_xlio, &eng_xlio_utls };
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static enum flow_vma_engine engine_of(const struct eng_variant *v)
{
	return strcmp(v->file_prefix, "vmastat") ? FLOW_VMA_XLIO : FLOW_VMA_VMA;
}

static const struct eng_fact *fact(const struct eng_variant *v, const char *name)
{
	for (unsigned i = 0; i < v->nfacts; i++)
		if (!strcmp(v->facts[i].name, name))
			return &v->facts[i];
	fail_msg("%s: no fact %s in tests/engine/engine_stats.cc", v->name, name);
	return NULL;
}

static uint32_t member(const struct flow_vma_layout *l, const struct member *m)
{
	uint32_t v;

	memcpy(&v, (const char *)l + m->off, sizeof(v));
	return v;
}

static const struct flow_vma_layout *row_of(const struct eng_variant *v)
{
	const struct flow_vma_layout *found = NULL;

	for (unsigned i = 0; i < flow_vma_nlayouts; i++) {
		const struct flow_vma_layout *l = &flow_vma_layouts[i];

		if (!strcmp(l->release, v->release) && !strcmp(l->variant, v->variant)) {
			assert_null(found);     /* one row per variant */
			found = l;
		}
	}
	if (!found)
		fail_msg("flow_vma_layouts[] has no row for %s %s", v->release, v->variant);
	return found;
}

/* ---- the table against offsetof()/sizeof() ---- */

static void flow_vma_layouts__every_member__equals_the_real_header(void **state)
{
	unsigned compared = 0;

	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		const struct eng_variant *v = variants[k];
		const struct flow_vma_layout *l = row_of(v);

		print_message("%s %s: sizeof(sh_mem_t) %u, block %u, socket_stats_t %zu\n",
			      v->release, v->variant[0] ? v->variant : "(no DEFINED_UTLS)",
			      fact(v, "sizeof_sh_mem")->value, fact(v, "block_size")->value,
			      v->stats_size);
		assert_int_equal(l->engine, engine_of(v));
		/* the version string: md5sum of the vendored header */
		assert_int_equal(strlen(l->md5), 32);
		assert_string_equal(l->md5, v->protocol_ver);
		for (unsigned i = 0; i < NMEMBERS; i++) {
			const struct eng_fact *f = fact(v, members[i].name);

			if (member(l, &members[i]) != f->value)
				fail_msg("%s %s: flow_vma_layouts[].%s is %u, the header says %u",
					 v->release, v->variant, members[i].name,
					 member(l, &members[i]), f->value);
			compared++;
		}
	}
	/* and no row the headers do not describe */
	assert_int_equal(flow_vma_nlayouts, NVARIANTS);
	assert_int_equal(compared, NMEMBERS * NVARIANTS);
}

static void flow_vma_layouts__widths_read__equal_the_real_fields(void **state)
{
	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		const struct eng_variant *v = variants[k];
		const struct flow_vma_layout *l = row_of(v);

		for (unsigned i = 0; i < NMEMBERS; i++) {
			const struct eng_fact *f = fact(v, members[i].name);
			uint32_t w = members[i].width;

			if (!w || f->value == ENG_NA)
				continue;
			if (w == W_ADDR)
				w = l->addr_len;
			else if (w == W_BYTES)
				w = l->byte_width;
			if (f->width != w)
				fail_msg("%s %s: the reader reads %u bytes of %s, the field has %u",
					 v->release, v->variant, w, members[i].name, f->width);
		}
	}
}

/* ---- images written through the real structs ---- */

struct img {
	unsigned char *b;
	size_t len;
	void *local[4];
	void *blk[4];
};

static void img_new(struct img *im, const struct eng_variant *v, unsigned n)
{
	assert_true(n <= 4);
	memset(im, 0, sizeof(*im));
	im->len = v->shmem_size(n);
	im->b = calloc(1, im->len);
	assert_non_null(im->b);
	v->shmem_init(im->b, n);
}

static void *img_sock(struct img *im, const struct eng_variant *v, unsigned i,
		      const struct eng_sock *es)
{
	im->blk[i] = v->create_socket_block(im->b);
	assert_non_null(im->blk[i]);
	im->local[i] = calloc(1, v->stats_size);
	assert_non_null(im->local[i]);
	v->stats_init(im->local[i], es);
	return im->local[i];
}

/* the publisher's copy */
static void img_publish(struct img *im, const struct eng_variant *v)
{
	for (unsigned i = 0; i < 4; i++)
		if (im->blk[i])
			memcpy(im->blk[i], im->local[i], v->stats_size);
}

static void img_free(struct img *im)
{
	for (unsigned i = 0; i < 4; i++)
		free(im->local[i]);
	free(im->b);
}

static struct flow_vma_snap snap;

/* A value for field f of socket i that no other field has, wider than
 * 32 bits where the field is. */
static uint64_t val(unsigned i, unsigned f, uint32_t width)
{
	uint64_t v = 1000u * (i + 1) + 7u * (f + 1);

	return width == 8 ? v | (uint64_t)(i + 1) << 33 : width == 1 ? (v & 0x7f) :
	       width == 2 ? (v & 0x7fff) : v;
}

static void flow_vma_parse__image_through_real_structs__every_field_decoded(void **state)
{
	static const char *const nums[] = {
		"rx_ready_pkt", "rx_ready_byte", "tx_ready_byte", "rx_packets", "rx_bytes",
		"rx_errors", "rx_drop_pkt", "rx_drop_byte", "tx_packets", "tx_bytes", "tx_errors",
		"tx_retransmits", "rx_os_packets", "rx_os_bytes", "rx_os_errors", "rx_os_eagain",
		"tx_os_packets", "tx_os_bytes", "tx_os_errors", "tx_os_eagain",
	};
	char err[300];

	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		const struct eng_variant *v = variants[k];
		uint64_t want[3][sizeof(nums) / sizeof(nums[0])];
		struct img im;

		img_new(&im, v, 3);
		for (unsigned i = 0; i < 3; i++) {
			struct eng_sock es = {
				.fd = 10 + (int)i, .inode = 0x80000000u + 77u * i,
				.socket_type = i == 1 ? SOCK_STREAM : SOCK_DGRAM, .offloaded = i != 2,
				.laddr = htonl(0x0a090001u + i), .raddr = htonl(0x0a090100u + i),
				.lport = htons((uint16_t)(11111 + i)), .rport = htons((uint16_t)(40000 + i)),
				.tcp_state = i == 1 ? 4 : 0,
			};
			void *loc = img_sock(&im, v, i, &es);

			for (unsigned f = 0; f < sizeof(nums) / sizeof(nums[0]); f++) {
				const struct eng_fact *fa = fact(v, nums[f]);

				want[i][f] = val(i, f, fa->width);
				if (!strcmp(nums[f], "rx_ready_byte") || !strcmp(nums[f], "tx_ready_byte"))
					want[i][f] = 4096u * (i + 1) + f;       /* the reader caps these at 1 GiB */
				assert_int_equal(v->poke(loc, nums[f], want[i][f]), 0);
			}
		}
		img_publish(&im, v);
		assert_int_equal(flow_vma_parse(engine_of(v), im.b, im.b, im.len, &snap, err, sizeof(err)), 0);
		assert_ptr_equal(snap.lay, row_of(v));
		assert_int_equal(snap.nslots, 3);
		assert_int_equal(snap.n, 3);
		assert_int_equal(snap.bad + snap.torn, 0);
		assert_memory_equal(snap.ver, v->version, 4);
		for (unsigned i = 0; i < 3; i++) {
			const struct flow_vma_sock *s = &snap.s[i];
			const uint64_t got[] = {
				s->rx_ready_pkt, s->rx_ready_byte, s->tx_ready_byte, s->rx_packets,
				s->rx_bytes, s->rx_errors, s->rx_drop_pkt, s->rx_drop_byte, s->tx_packets,
				s->tx_bytes, s->tx_errors, s->tx_retransmits, s->rx_os_packets,
				s->rx_os_bytes, s->rx_os_errors, s->rx_os_eagain, s->tx_os_packets,
				s->tx_os_bytes, s->tx_os_errors, s->tx_os_eagain,
			};

			_Static_assert(sizeof(got) / sizeof(got[0]) == sizeof(nums) / sizeof(nums[0]),
				       "one decoded value per field");
			assert_int_equal(s->slot, i);
			assert_int_equal(s->fd, 10 + (int)i);
			assert_int_equal(s->inode, 0x80000000u + 77u * i);
			assert_int_equal(s->socket_type, i == 1 ? SOCK_STREAM : SOCK_DGRAM);
			assert_int_equal(s->offloaded, i != 2);
			assert_int_equal(s->tcp_state, i == 1 ? 4 : 0);
			assert_int_equal(s->family, AF_INET);
			assert_true(IN6_IS_ADDR_V4MAPPED(&s->laddr));
			assert_int_equal(ntohl(*(const uint32_t *)(s->laddr.s6_addr + 12)), 0x0a090001u + i);
			assert_int_equal(ntohl(*(const uint32_t *)(s->raddr.s6_addr + 12)), 0x0a090100u + i);
			assert_int_equal(ntohs(s->lport), 11111 + i);
			assert_int_equal(ntohs(s->rport), 40000 + i);
			for (unsigned f = 0; f < sizeof(nums) / sizeof(nums[0]); f++)
				if (got[f] != want[i][f])
					fail_msg("%s: socket %u %s decoded %llu, written %llu", v->name, i,
						 nums[f], (unsigned long long)got[f],
						 (unsigned long long)want[i][f]);
		}
		img_free(&im);
	}
}

/* The header written by *_shmem_stats_open() through the real struct is
 * the one the reader bumps: reader_counter where the bump writes it. */
static void flow_vma_parse__reader_counter__where_the_engine_reads_it(void **state)
{
	char err[300];

	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		const struct eng_variant *v = variants[k];
		const struct flow_vma_layout *l = row_of(v);
		uint32_t c = 41;
		struct img im;

		img_new(&im, v, 1);
		memcpy(im.b + l->reader_counter, &c, 4);       /* what flow_vma_file_bump() writes */
		assert_int_equal(v->reader_counter(im.b), 41);
		assert_int_equal(flow_vma_parse(engine_of(v), im.b, im.b, im.len, &snap, err, sizeof(err)), 0);
		assert_int_equal(snap.reader_counter, 41);
		assert_int_equal(snap.n, 0);
		img_free(&im);
	}
}

/* ---- the OS path is movement ---- */

struct os_run {
	const struct eng_variant *v;
	struct img im;
	void *loc;
	struct flow_vma_track t;
	struct flow_obs o;
	enum flow_live verdict;
};

static void os_run_start(struct os_run *r, const struct eng_variant *v, int offloaded)
{
	struct eng_sock es = {
		.fd = 5, .inode = 4242, .socket_type = SOCK_DGRAM, .offloaded = offloaded,
		.laddr = htonl(0x0a090001u), .raddr = htonl(0x0a090002u),
		.lport = htons(40000), .rport = htons(11111),
	};

	memset(r, 0, sizeof(*r));
	r->v = v;
	img_new(&r->im, v, 1);
	r->loc = img_sock(&r->im, v, 0, &es);
}

/* publish, parse and judge as the daemon's poller does at now */
static void os_run_poll(struct os_run *r, uint64_t now)
{
	char err[300];

	img_publish(&r->im, r->v);
	assert_int_equal(flow_vma_parse(engine_of(r->v), r->im.b, r->im.b, r->im.len, &snap, err,
					sizeof(err)), 0);
	assert_int_equal(snap.n, 1);
	r->verdict = flow_vma_obs(&snap.s[0], r->v->name, 1234, &r->t, now, &r->o);
}

/* A socket the engine offloaded, answered 100 requests, then sent one
 * more that got no offloaded reply; from then on its traffic goes through
 * the kernel socket the engine keeps (a peer reached through a port the
 * engine does not drive): requests and replies on the OS path every poll.
 * Not stalled: it is moving. */
static void flow_vma_obs__only_os_counters_move__progress_not_stalled(void **state)
{
	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		struct os_run r;
		uint64_t now = 0;

		os_run_start(&r, variants[k], 1);
		for (int i = 0; i < 100; i++) {
			r.v->save_tx(r.loc, ENG_OFFLOAD, 64, 0);
			r.v->save_rx(r.loc, ENG_OFFLOAD, 64, 0);
		}
		os_run_poll(&r, now);
		r.v->save_tx(r.loc, ENG_OFFLOAD, 64, 0);
		os_run_poll(&r, now += 100 * MS);
		for (int i = 0; i < 20; i++) {
			r.v->save_tx(r.loc, ENG_OS, 64, 0);
			r.v->save_rx(r.loc, ENG_OS, 64, 0);
			os_run_poll(&r, now += 100 * MS);
			assert_int_equal(r.verdict, FLOW_LIVE_PROGRESS);
			assert_false(flow_live_stalled(&r.t.live, now, 200 * MS));
		}
		/* the OS path's messages and bytes are in the flow's counts */
		assert_int_equal(r.o.tx_msgs, 21);
		assert_int_equal(r.o.rx_msgs, 20);
		assert_int_equal(r.o.rx_bytes, 20 * 64);
		/* and when it stops too, the request is still out: waiting */
		os_run_poll(&r, now += 100 * MS);
		os_run_poll(&r, now += 300 * MS);
		assert_int_equal(r.verdict, FLOW_LIVE_WAITING);
		img_free(&r.im);
	}
}

/* A socket the engine never offloaded (b_is_offloaded false): a healthy
 * ping-pong moves the OS counters only, and is seen moving, not silent. */
static void flow_vma_obs__not_offloaded_ping_pong__seen_moving(void **state)
{
	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		struct os_run r;
		uint64_t now = 0;

		os_run_start(&r, variants[k], 0);
		os_run_poll(&r, now);
		for (int i = 0; i < 10; i++) {
			r.v->save_tx(r.loc, ENG_OS, 100, 0);
			r.v->save_rx(r.loc, ENG_OS, 100, 0);
			os_run_poll(&r, now += 100 * MS);
			assert_int_equal(r.verdict, FLOW_LIVE_PROGRESS);
		}
		assert_int_equal(snap.s[0].offloaded, 0);
		assert_int_equal(r.o.tx_msgs, 10);
		assert_int_equal(r.o.rx_msgs, 10);
		assert_int_equal(r.o.tx_bytes, 1000);
		assert_int_equal(r.o.rx_bytes, 1000);
		assert_int_not_equal(r.o.last_rx_ns, 0);
		img_free(&r.im);
	}
}

/* EAGAINs and errors are not movement: a request out and nothing but
 * empty non-blocking reads (n_rx_os_eagain; libvma also counts a send's
 * EAGAIN there) is still a stall. */
static void flow_vma_obs__only_eagain_moves__still_stalled(void **state)
{
	(void)state;
	for (size_t k = 0; k < NVARIANTS; k++) {
		struct os_run r;
		uint64_t now = 0;

		os_run_start(&r, variants[k], 0);
		r.v->save_tx(r.loc, ENG_OS, 64, 0);
		r.v->save_rx(r.loc, ENG_OS, 64, 0);
		os_run_poll(&r, now);
		r.v->save_tx(r.loc, ENG_OS, 64, 0);
		os_run_poll(&r, now += 100 * MS);
		for (int i = 0; i < 5; i++) {
			r.v->save_rx(r.loc, ENG_OS, -1, EAGAIN);
			r.v->save_tx(r.loc, ENG_OS, -1, EAGAIN);
			r.v->save_rx(r.loc, ENG_OS, -1, ECONNREFUSED);
			os_run_poll(&r, now += 100 * MS);
		}
		assert_int_equal(snap.s[0].rx_os_eagain, strcmp(r.v->name, "vma") ? 5 : 10);
		assert_int_equal(snap.s[0].rx_os_errors, 5);
		assert_int_equal(r.verdict, FLOW_LIVE_WAITING);
		assert_true(flow_live_stalled(&r.t.live, now, 200 * MS));
		img_free(&r.im);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_vma_layouts__every_member__equals_the_real_header),
		cmocka_unit_test(flow_vma_layouts__widths_read__equal_the_real_fields),
		cmocka_unit_test(flow_vma_parse__image_through_real_structs__every_field_decoded),
		cmocka_unit_test(flow_vma_parse__reader_counter__where_the_engine_reads_it),
		cmocka_unit_test(flow_vma_obs__only_os_counters_move__progress_not_stalled),
		cmocka_unit_test(flow_vma_obs__not_offloaded_ping_pong__seen_moving),
		cmocka_unit_test(flow_vma_obs__only_eagain_moves__still_stalled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
