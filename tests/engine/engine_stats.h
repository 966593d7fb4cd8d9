/* engine_stats: the statistics file of libvma 9.8.84 and libxlio 3.70.2,
 * written through the engines' own headers (vendored under
 * tests/fixtures/engines/, see the README there), for tests.
 *
 * tests/engine/engine_stats.cc is compiled once per variant against the
 * real vma_stats.h / xlio_stats.h and exports one struct eng_variant each:
 * what the publisher does (src/stats/stats_publisher.cpp: the header that
 * *_shmem_stats_open() sets, *_stats_instance_create_socket_block()), what
 * sockinfo does to its private socket_stats_t (socket_stats_init() /
 * the sockinfo constructor, save_stats_rx_os() ...), and the offsets and
 * sizes of every field nicstalld's reader uses, by offsetof() and sizeof()
 * on the real structs (tests/unit/test_flow_vma_layout.c compares them with
 * collectors/flows/vma_parse.c's table). Nothing here comes from that table. C and
 * C++. */
#ifndef NICSTALL_TEST_ENGINE_STATS_H
#define NICSTALL_TEST_ENGINE_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENG_NA UINT32_MAX

/* One fact of the real header, named as the member of struct
 * flow_vma_layout it must equal. value: an offset (from the start of the
 * struct that member's comment names) or a size; ENG_NA when the engine
 * has no such field. width: sizeof the field itself (0 for the sizes and
 * for the nested structs). */
struct eng_fact {
	const char *name;
	uint32_t value, width;
};

/* What sockinfo puts in its socket_stats_t, IPv4 only. */
struct eng_sock {
	int fd;
	uint32_t inode;                 /* fd2inode(fd): fstat's st_ino */
	uint8_t socket_type;            /* SOCK_DGRAM, SOCK_STREAM */
	int offloaded;
	uint32_t laddr, raddr;          /* network byte order */
	uint16_t lport, rport;          /* network byte order */
	uint32_t tcp_state;
};

enum eng_path { ENG_OFFLOAD, ENG_OS };

struct eng_variant {
	const char *name;               /* "vma", "xlio", "xlio-utls" */
	const char *release;            /* "libvma 9.8.84" */
	const char *variant;            /* "" or "DEFINED_UTLS" */
	const char *file_prefix;        /* "vmastat", "xliostat" */
	const char *protocol_ver;       /* STATS_PROTOCOL_VER: md5sum of the header */
	uint8_t version[4];             /* maj, min, rev, rel */
	size_t stats_size;              /* sizeof(socket_stats_t): what is copied */
	const struct eng_fact *facts;
	unsigned nfacts;
	/* SHMEM_STATS_SIZE(fds) */
	size_t (*shmem_size)(unsigned fds);
	/* the header as *_shmem_stats_open() sets it; shm zeroed */
	void (*shmem_init)(void *shm, unsigned fds);
	int (*reader_counter)(const void *shm);
	/* *_stats_instance_create_socket_block(): the first free block
	 * enabled, its skt_stats reset and returned; NULL when none is free */
	void *(*create_socket_block)(void *shm);
	/* local: stats_size bytes, suitably aligned (malloc). reset() and the
	 * fields sockinfo sets (libvma sockinfo::sockinfo(), libxlio
	 * sockinfo::socket_stats_init(); addresses as bind/connect set them) */
	void (*stats_init)(void *local, const struct eng_sock *s);
	/* sockinfo::save_stats_rx_offload / _rx_os / _tx_offload / _tx_os:
	 * ret the system call's result, err its errno */
	void (*save_rx)(void *local, enum eng_path path, long ret, int err);
	void (*save_tx)(void *local, enum eng_path path, long ret, int err);
	void (*set_rx_ready)(void *local, uint32_t pkts, uint64_t bytes);
	/* Set one field by its fact name (tests); 0, or -1 for a name the
	 * variant does not have or that is not a plain number */
	int (*poke)(void *local, const char *name, uint64_t v);
};

extern const struct eng_variant eng_vma, eng_xlio, eng_xlio_utls;

#ifdef __cplusplus
}
#endif

#endif
