/* vmaimg: libvma 9.8.84 statistics images built byte for byte (offsets
 * written out as literals, from the field order of the released
 * vma_stats.h), shared by test_flow_vma.c and test_flow_vma_file.c.
 * Header only (static inline), included after cmocka.h. */
#ifndef NICSTALL_TEST_VMAIMG_H
#define NICSTALL_TEST_VMAIMG_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "collectors/flows/vma_parse.h"

#define VMA_MD5  "25ca1bbb55c2c5536b0b4bded2689e9a"
#define XLIO_MD5 "8acf4c5e11413c1da2c7f27b2ec26476"

/* libvma 9.8.84, x86_64 */
#define V_SHMEM      12416u   /* sizeof(sh_mem_t), one block included */
#define V_BLOCKS     12072u   /* offsetof(sh_mem_t, skt_inst_arr) */
#define V_BLOCK      344u
#define V_MAXSKT     12064u
#define V_PROTO      8u
#define V_SKT        8u       /* socket_stats_t within the block */
#define V_CNT        (V_SKT + 72u)

static inline void p8(unsigned char *b, size_t o, uint8_t v) { b[o] = v; }
static inline void p16(unsigned char *b, size_t o, uint16_t v) { memcpy(b + o, &v, 2); }
static inline void p32(unsigned char *b, size_t o, uint32_t v) { memcpy(b + o, &v, 4); }
static inline void p64(unsigned char *b, size_t o, uint64_t v) { memcpy(b + o, &v, 8); }

static inline unsigned char *vma_image(unsigned nsock, size_t *len)
{
	unsigned char *b;

	*len = V_SHMEM + (size_t)nsock * V_BLOCK;
	b = calloc(1, *len);
	assert_non_null(b);
	p8(b, 4, 9); p8(b, 5, 8); p8(b, 6, 84); p8(b, 7, 0);    /* ver_info */
	memcpy(b + V_PROTO, VMA_MD5, 32);                        /* no NUL */
	p64(b, V_MAXSKT, nsock);
	return b;
}

struct vsock {
	int fd;
	uint8_t type;
	uint32_t state;
	const char *laddr, *raddr;
	uint16_t lport, rport;
	uint32_t rx_ready_pkt;
	uint64_t rx_ready_byte, tx_ready_byte;
	uint32_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, retrans, rx_errors;
};

static inline void vma_put(unsigned char *img, unsigned slot, const struct vsock *s)
{
	size_t b = V_BLOCKS + (size_t)slot * V_BLOCK, k = b + V_SKT, c = b + V_CNT;
	struct in_addr a;

	p8(img, b, 1);                          /* b_enabled */
	p32(img, k + 0, (uint32_t)s->fd);
	p32(img, k + 4, 1000u + slot);          /* inode */
	p32(img, k + 8, s->state);
	p8(img, k + 12, s->type);
	p8(img, k + 16, 1);                     /* b_is_offloaded */
	assert_int_equal(inet_pton(AF_INET, s->laddr, &a), 1);
	memcpy(img + k + 20, &a, 4);            /* bound_if */
	assert_int_equal(inet_pton(AF_INET, s->raddr, &a), 1);
	memcpy(img + k + 24, &a, 4);            /* connected_ip */
	p16(img, k + 32, htons(s->lport));
	p16(img, k + 34, htons(s->rport));
	p32(img, k + 44, s->rx_ready_pkt);
	p64(img, k + 48, s->rx_ready_byte);
	p64(img, k + 64, s->tx_ready_byte);
	p32(img, c + 0, s->rx_pkts);
	p32(img, c + 4, s->rx_bytes);
	p32(img, c + 32, s->rx_errors);
	p32(img, c + 64, s->tx_pkts);
	p32(img, c + 68, s->tx_bytes);
	p32(img, c + 80, s->retrans);
}

static const struct vsock client = {
	.fd = 7, .type = SOCK_STREAM, .state = 4, .laddr = "10.77.0.1", .raddr = "10.77.0.2",
	.lport = 40000, .rport = 11111, .rx_pkts = 100, .rx_bytes = 6400, .tx_pkts = 101,
	.tx_bytes = 6464, .retrans = 2,
};

static struct flow_vma_snap snap;

#endif
