/* engine_stats: one engine's statistics structs, from its own header. See
 * engine_stats.h. Compiled once per variant (tests/engine/engine.mk):
 *
 *   -DENG_VMA                    libvma 9.8.84   src/vma/util/vma_stats.h
 *   -DENG_XLIO                   libxlio 3.70.2  src/core/util/xlio_stats.h
 *   -DENG_XLIO -DDEFINED_UTLS    the same, configured with --enable-utls
 *
 * with -DENG_PROTOCOL_VER="<md5sum of that header>", which is how both
 * engines' configure.ac compute STATS_PROTOCOL_VER. The header (C++) is
 * included inside a namespace of its own per variant, so the three
 * objects' sh_mem_t, socket_stats_t and their inline members never meet
 * at link time; everything it includes from the C and C++ libraries is
 * included first, outside, and so is ip_address.h (its std::hash
 * specialisations must be in ::std; the same file in both XLIO variants). */
#include <assert.h>
#include <byteswap.h>
#include <errno.h>
#include <limits.h>
#include <linux/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <new>
#include <string>

#include "tests/engine/engine_stats.h"

#if defined(ENG_XLIO)
#include "core/util/ip_address.h"
#endif

#ifndef ENG_PROTOCOL_VER
#error ENG_PROTOCOL_VER (the md5sum of the engine header) is set by engine.mk
#endif

#if defined(ENG_VMA)
#define ENG_NS eng_ns_vma
#define ENG_SYM eng_vma
#elif defined(ENG_XLIO) && defined(DEFINED_UTLS)
#define ENG_NS eng_ns_xlio_utls
#define ENG_SYM eng_xlio_utls
#elif defined(ENG_XLIO)
#define ENG_NS eng_ns_xlio
#define ENG_SYM eng_xlio
#else
#error one of ENG_VMA, ENG_XLIO
#endif

namespace ENG_NS {
#include "vlogger/vlogger.h"
#if defined(ENG_VMA)
#include "vma/vma_extra.h"
#include "vma/util/vma_stats.h"
#else
#include "core/xlio_extra.h"
#include "core/util/sock_addr.h"
#include "core/util/utils.h"
#include "core/util/xlio_stats.h"
#endif

#if defined(ENG_VMA)
static const uint8_t version[4] = { 9, 8, 84, 0 };
#define ADDR_LEN sizeof(in_addr_t)
#else
static const uint8_t version[4] = { 3, 70, 2, 0 };
#define ADDR_LEN sizeof(ip_address)
#endif

#define SS(f) (uint32_t) offsetof(socket_stats_t, f), (uint32_t)sizeof(((socket_stats_t *)0)->f)
#define SC(f) (uint32_t) offsetof(socket_counters_t, f), (uint32_t)sizeof(((socket_counters_t *)0)->f)
#define SH(f) (uint32_t) offsetof(sh_mem_t, f), (uint32_t)sizeof(((sh_mem_t *)0)->f)

/* Named as struct flow_vma_layout's members; sh_mem_t, the block,
 * socket_stats_t (from skt_stats) and socket_counters_t (from counters)
 * as there. */
static const struct eng_fact facts[] = {
	{ "reader_counter", SH(reader_counter) },
	{ "ver_info", SH(ver_info) },
	{ "protocol_ver", SH(stats_protocol_ver) },
	{ "max_skt_inst_num", SH(max_skt_inst_num) },
	{ "skt_inst_arr", (uint32_t)offsetof(sh_mem_t, skt_inst_arr), 0 },
	{ "block_size", (uint32_t)sizeof(socket_instance_block_t), 0 },
	{ "sizeof_sh_mem", (uint32_t)sizeof(sh_mem_t), 0 },
	{ "b_enabled", (uint32_t)offsetof(socket_instance_block_t, b_enabled),
	  (uint32_t)sizeof(((socket_instance_block_t *)0)->b_enabled) },
	{ "skt_stats", (uint32_t)offsetof(socket_instance_block_t, skt_stats), 0 },
	{ "fd", SS(fd) },
	{ "inode", SS(inode) },
	{ "tcp_state", SS(tcp_state) },
	{ "socket_type", SS(socket_type) },
	{ "b_is_offloaded", SS(b_is_offloaded) },
	{ "bound_if", SS(bound_if) },
	{ "connected_ip", SS(connected_ip) },
	{ "bound_port", SS(bound_port) },
	{ "connected_port", SS(connected_port) },
#if defined(ENG_VMA)
	{ "sa_family", ENG_NA, 0 },
#else
	{ "sa_family", SS(sa_family) },
#endif
	{ "addr_len", (uint32_t)ADDR_LEN, 0 },
	{ "rx_ready_pkt", SS(n_rx_ready_pkt_count) },
	{ "rx_ready_byte", SS(n_rx_ready_byte_count) },
	{ "tx_ready_byte", SS(n_tx_ready_byte_count) },
	{ "counters", (uint32_t)offsetof(socket_stats_t, counters), 0 },
	{ "rx_packets", SC(n_rx_packets) },
	{ "rx_bytes", SC(n_rx_bytes) },
	{ "rx_errors", SC(n_rx_errors) },
	{ "rx_drop_pkt", SC(n_rx_ready_pkt_drop) },
	{ "rx_drop_byte", SC(n_rx_ready_byte_drop) },
	{ "tx_packets", SC(n_tx_sent_pkt_count) },
	{ "tx_bytes", SC(n_tx_sent_byte_count) },
	{ "tx_errors", SC(n_tx_errors) },
	{ "tx_retransmits", SC(n_tx_retransmits) },
	{ "rx_os_packets", SC(n_rx_os_packets) },
	{ "rx_os_bytes", SC(n_rx_os_bytes) },
	{ "rx_os_errors", SC(n_rx_os_errors) },
	{ "rx_os_eagain", SC(n_rx_os_eagain) },
	{ "tx_os_packets", SC(n_tx_os_packets) },
	{ "tx_os_bytes", SC(n_tx_os_bytes) },
	{ "tx_os_errors", SC(n_tx_os_errors) },
	{ "tx_os_eagain", SC(n_tx_os_eagain) },
	{ "byte_width", (uint32_t)sizeof(((socket_counters_t *)0)->n_rx_bytes), 0 },
};

static size_t shmem_size(unsigned fds)
{
	return SHMEM_STATS_SIZE(fds);
}

/* *_shmem_stats_open() after MAP_SH_MEM (libvma and libxlio
 * src/stats/stats_publisher.cpp) */
static void shmem_init(void *p, unsigned fds)
{
	sh_mem_t *m = (sh_mem_t *)p;

#if defined(ENG_VMA)
	m->ver_info.vma_lib_maj = version[0];
	m->ver_info.vma_lib_min = version[1];
	m->ver_info.vma_lib_rev = version[2];
	m->ver_info.vma_lib_rel = version[3];
	m->fd_dump = STATS_FD_STATISTICS_DISABLED;
#else
	m->ver_info.xlio_lib_maj = version[0];
	m->ver_info.xlio_lib_min = version[1];
	m->ver_info.xlio_lib_rev = version[2];
	m->ver_info.xlio_lib_rel = version[3];
	m->dump = DUMP_DISABLED;
	m->fd_dump = 0;
#endif
	/* 32 hex digits, no NUL: min(sizeof field, sizeof literal) */
	memcpy(m->stats_protocol_ver, ENG_PROTOCOL_VER, sizeof(m->stats_protocol_ver));
	m->max_skt_inst_num = fds;
	m->reader_counter = 0;
	m->log_level = VLOG_DEFAULT;
	m->log_details_level = 0;
	m->fd_dump_log_level = STATS_FD_STATISTICS_LOG_LEVEL_DEFAULT;
}

static int reader_counter(const void *p)
{
	return ((const volatile sh_mem_t *)p)->reader_counter;
}

/* *_stats_instance_create_socket_block(): the first free block */
static void *create_socket_block(void *p)
{
	sh_mem_t *m = (sh_mem_t *)p;

	for (size_t i = 0; i < m->max_skt_inst_num; i++) {
		if (!m->skt_inst_arr[i].b_enabled) {
			socket_stats_t *s = &m->skt_inst_arr[i].skt_stats;

			m->skt_inst_arr[i].b_enabled = true;
			s->reset();
			return s;
		}
	}
	return NULL;
}

static void stats_init(void *local, const struct eng_sock *k)
{
	socket_stats_t *s = new (local) socket_stats_t;

	s->reset();
	s->fd = k->fd;
	s->inode = k->inode;
	s->tcp_state = k->tcp_state;
	s->socket_type = k->socket_type;
	s->b_is_offloaded = k->offloaded != 0;
	s->bound_port = k->lport;
	s->connected_port = k->rport;
#if defined(ENG_VMA)
	s->bound_if = k->laddr;
	s->connected_ip = k->raddr;
#else
	s->sa_family = AF_INET;         /* set_bound_if(): the sock_addr's family */
	s->bound_if = ip_address(k->laddr);
	s->connected_ip = ip_address(k->raddr);
#endif
}

/* One call's result into its counters, as every save_stats_*() does:
 * bytes and a packet, else an EAGAIN, else an error. */
template <typename B>
static void save(B &bytes, uint32_t &pkts, uint32_t &eagain, uint32_t &errors, long ret, int err)
{
	if (ret >= 0) {
		bytes += ret;
		pkts++;
	} else if (err == EAGAIN) {
		eagain++;
	} else {
		errors++;
	}
}

/* libvma sockinfo::save_stats_rx_offload() counts what the application
 * read; libxlio counts n_rx_packets/n_rx_bytes when a packet enters the
 * ready list (sockinfo_udp::rx_input_cb(), save_strq_stats()), which the
 * emulator, reading a kernel socket, only sees when it reads. Errors as
 * save_stats_rx_offload(); the OS path as save_stats_rx_os(). */
static void save_rx(void *local, enum eng_path path, long ret, int err)
{
	socket_counters_t *c = &((socket_stats_t *)local)->counters;

	if (path == ENG_OS) {
		save(c->n_rx_os_bytes, c->n_rx_os_packets, c->n_rx_os_eagain, c->n_rx_os_errors, ret, err);
		return;
	}
	save(c->n_rx_bytes, c->n_rx_packets, c->n_rx_eagain, c->n_rx_errors, ret, err);
#if !defined(ENG_VMA)
	if (ret >= 0)
		c->n_rx_data_pkts++;
#endif
}

/* sockinfo_udp::save_stats_tx_offload() and sockinfo::save_stats_tx_os().
 * libvma 9.8.84 counts an EAGAIN of either in n_rx_os_eagain (sic; both
 * functions), libxlio in n_tx_eagain / n_tx_os_eagain. */
static void save_tx(void *local, enum eng_path path, long ret, int err)
{
	socket_counters_t *c = &((socket_stats_t *)local)->counters;
#if defined(ENG_VMA)
	uint32_t &os_eagain = c->n_rx_os_eagain, &eagain = c->n_rx_os_eagain;
#else
	uint32_t &os_eagain = c->n_tx_os_eagain, &eagain = c->n_tx_eagain;
#endif

	if (path == ENG_OS)
		save(c->n_tx_os_bytes, c->n_tx_os_packets, os_eagain, c->n_tx_os_errors, ret, err);
	else
		save(c->n_tx_sent_byte_count, c->n_tx_sent_pkt_count, eagain, c->n_tx_errors, ret, err);
}

static void set_rx_ready(void *local, uint32_t pkts, uint64_t bytes)
{
	socket_stats_t *s = (socket_stats_t *)local;

	s->n_rx_ready_pkt_count = pkts;
	s->n_rx_ready_byte_count = bytes;
}

static int poke(void *local, const char *name, uint64_t v)
{
	socket_stats_t *s = (socket_stats_t *)local;
	socket_counters_t *c = &s->counters;

#define P(n, lv) if (!strcmp(name, n)) { lv = (__typeof__(lv))v; return 0; }
	P("fd", s->fd);
	P("inode", s->inode);
	P("tcp_state", s->tcp_state);
	P("socket_type", s->socket_type);
	P("bound_port", s->bound_port);
	P("connected_port", s->connected_port);
	P("rx_ready_pkt", s->n_rx_ready_pkt_count);
	P("rx_ready_byte", s->n_rx_ready_byte_count);
	P("tx_ready_byte", s->n_tx_ready_byte_count);
	P("rx_packets", c->n_rx_packets);
	P("rx_bytes", c->n_rx_bytes);
	P("rx_errors", c->n_rx_errors);
	P("rx_drop_pkt", c->n_rx_ready_pkt_drop);
	P("rx_drop_byte", c->n_rx_ready_byte_drop);
	P("tx_packets", c->n_tx_sent_pkt_count);
	P("tx_bytes", c->n_tx_sent_byte_count);
	P("tx_errors", c->n_tx_errors);
	P("tx_retransmits", c->n_tx_retransmits);
	P("rx_os_packets", c->n_rx_os_packets);
	P("rx_os_bytes", c->n_rx_os_bytes);
	P("rx_os_errors", c->n_rx_os_errors);
	P("rx_os_eagain", c->n_rx_os_eagain);
	P("tx_os_packets", c->n_tx_os_packets);
	P("tx_os_bytes", c->n_tx_os_bytes);
	P("tx_os_errors", c->n_tx_os_errors);
	P("tx_os_eagain", c->n_tx_os_eagain);
#undef P
	return -1;
}

} /* namespace ENG_NS */

extern "C" const struct eng_variant ENG_SYM = {
#if defined(ENG_VMA)
	"vma", "libvma 9.8.84", "", "vmastat",
#elif defined(DEFINED_UTLS)
	"xlio-utls", "libxlio 3.70.2", "DEFINED_UTLS", "xliostat",
#else
	"xlio", "libxlio 3.70.2", "", "xliostat",
#endif
	ENG_PROTOCOL_VER,
	{ ENG_NS::version[0], ENG_NS::version[1], ENG_NS::version[2], ENG_NS::version[3] },
	sizeof(ENG_NS::socket_stats_t),
	ENG_NS::facts,
	sizeof(ENG_NS::facts) / sizeof(ENG_NS::facts[0]),
	ENG_NS::shmem_size,
	ENG_NS::shmem_init,
	ENG_NS::reader_counter,
	ENG_NS::create_socket_block,
	ENG_NS::stats_init,
	ENG_NS::save_rx,
	ENG_NS::save_tx,
	ENG_NS::set_rx_ready,
	ENG_NS::poke,
};
