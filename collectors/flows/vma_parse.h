/* flow_vma: per-socket state of unmodified libvma and libxlio processes,
 * read from their statistics files (vmastat.<pid>, xliostat.<pid>).
 *
 * The engine maps its file shared and copies its socket counters into it
 * only while a reader keeps changing sh_mem_t.reader_counter: on a change
 * at once, then every 500 ms for 10 s (libvma src/stats/stats_publisher.cpp
 * should_write(); libxlio the same file). The only write this reader makes
 * is that bump: pwrite() of the one 4-byte field, at most once per
 * bump_interval (default 100 ms, so every poll of a 100 ms poller), through
 * a descriptor checked to be the same regular file as the one read. Root
 * may write any user's file; nothing else is ever written.
 *
 * Everything in the file is hostile input (a world-writable /tmp, a
 * process of any user): files are opened O_NOFOLLOW|O_NONBLOCK, must be
 * regular files of at most FLOW_VMA_MAX_FILE bytes owned by the uid of the
 * process named in the file name, are never mapped, and are copied with
 * pread() twice; only sockets whose fields agree in both copies (or in a
 * third read of that block) are reported. The layout is chosen by the
 * 32-hex-digit stats_protocol_ver (the md5 of vma_stats.h / xlio_stats.h
 * as configure.ac computes it) and the file size; an unknown version is
 * refused with a message naming it.
 *
 * The layouts below are this project's own table of offsets of one
 * released version each (see the table in vma_parse.c); the daemon does
 * not include an engine header. Every entry is checked against the
 * engines' real headers, vendored under tests/fixtures/engines/, by
 * tests/unit/test_flow_vma_layout.c. x86_64 only. */
#ifndef NICSTALL_FLOW_VMA_H
#define NICSTALL_FLOW_VMA_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/flows.h"

/* Bytes of one statistics file: above the largest shipped layout (libxlio
 * 3.70.2 with DEFINED_UTLS and 1024 sockets: 41784 + 1024 * 528 = 582456
 * bytes); every file a shipped layout fits is smaller. */
#define FLOW_VMA_MAX_FILE   (600u << 10)
#define FLOW_VMA_MAX_SOCKS  1024u        /* MAX_STATS_FD_NUM in both engines */
#define FLOW_VMA_MAX_FILES  256u         /* files tracked per reader */
#define FLOW_VMA_FILES_PER_UID 16u       /* of which one user's at most */

enum flow_vma_engine { FLOW_VMA_VMA = 1, FLOW_VMA_XLIO = 2 };

/* One shipped layout: where the fields are, in bytes. */
struct flow_vma_layout {
	enum flow_vma_engine engine;
	const char *release;        /* "libvma 9.8.84" */
	const char *variant;        /* build-flag variant: "" or "DEFINED_UTLS" */
	const char *md5;            /* stats_protocol_ver, 32 hex digits */
	/* sh_mem_t */
	uint32_t reader_counter, ver_info, protocol_ver, max_skt_inst_num;
	uint32_t skt_inst_arr;      /* first socket_instance_block_t */
	uint32_t block_size;        /* sizeof(socket_instance_block_t) */
	uint32_t sizeof_sh_mem;     /* sizeof(sh_mem_t), one block included */
	/* socket_instance_block_t */
	uint32_t b_enabled, skt_stats;
	/* socket_stats_t, from skt_stats */
	uint32_t fd, inode, tcp_state, socket_type, b_is_offloaded;
	uint32_t bound_if, connected_ip, bound_port, connected_port;
	uint32_t sa_family;         /* XLIO only; UINT32_MAX: IPv4 only */
	uint32_t addr_len;          /* 4 (in_addr_t) or 16 (ip_address) */
	uint32_t rx_ready_pkt, rx_ready_byte, tx_ready_byte;
	uint32_t counters;          /* socket_counters_t, from skt_stats */
	uint32_t rx_packets, rx_bytes, rx_errors, rx_drop_pkt, rx_drop_byte;
	uint32_t tx_packets, tx_bytes, tx_errors, tx_retransmits;
	/* the OS path: traffic of a socket (or part of it) the engine did not
	 * offload, through the kernel socket it keeps (save_stats_rx_os()) */
	uint32_t rx_os_packets, rx_os_bytes, rx_os_errors, rx_os_eagain;
	uint32_t tx_os_packets, tx_os_bytes, tx_os_errors, tx_os_eagain;
	uint32_t byte_width;        /* every byte counter: 4 (VMA: wraps) or 8 (XLIO) */
};

extern const struct flow_vma_layout flow_vma_layouts[];
extern const unsigned flow_vma_nlayouts;

/* The layout for this engine and version whose file size fits
 * sizeof_sh_mem + n * block_size for the file's max_skt_inst_num n, or
 * NULL. */
const struct flow_vma_layout *flow_vma_layout_find(enum flow_vma_engine e, const char *md5,
						   uint64_t fsize, uint64_t nsock);

/* One socket block as the engine published it (agreeing copies). */
struct flow_vma_sock {
	unsigned slot;
	int fd;
	uint32_t inode, tcp_state;  /* lwip enum tcp_state: 4 ESTABLISHED */
	uint8_t socket_type;        /* SOCK_STREAM, SOCK_DGRAM */
	uint8_t offloaded;
	int family;                 /* AF_INET or AF_INET6 */
	struct in6_addr laddr, raddr;   /* IPv4 as IPv4-mapped */
	uint16_t lport, rport;      /* network byte order */
	uint32_t rx_ready_pkt;
	uint64_t rx_ready_byte, tx_ready_byte;
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;  /* raw (VMA 32-bit) */
	uint32_t rx_errors, rx_drop_pkt, rx_drop_byte, tx_errors, tx_retransmits;
	uint64_t rx_os_packets, rx_os_bytes, tx_os_packets, tx_os_bytes;  /* raw */
	uint32_t rx_os_errors, rx_os_eagain, tx_os_errors, tx_os_eagain;
};

struct flow_vma_snap {
	const struct flow_vma_layout *lay;
	uint32_t reader_counter;
	uint8_t ver[4];             /* lib maj, min, rev, rel */
	unsigned nslots;            /* max_skt_inst_num */
	unsigned n;                 /* sockets in s[] */
	unsigned torn;              /* enabled blocks whose copies disagreed */
	unsigned bad;               /* enabled blocks with impossible values */
	struct flow_vma_sock s[FLOW_VMA_MAX_SOCKS];
};

/* Parse a file image from two copies a and b of len bytes each (the file
 * size). Header fields must agree; each enabled socket block is kept only
 * when every field used agrees (else counted in torn), and has possible
 * values (else bad). 0, or -errno with err filled: -ENOMSG unknown
 * stats_protocol_ver (err names it), -EINVAL bad header, -EAGAIN the
 * header itself disagrees. */
int flow_vma_parse(enum flow_vma_engine e, const unsigned char *a, const unsigned char *b,
		   size_t len, struct flow_vma_snap *out, char *err, size_t errlen);

/* ---- one file ---- */

struct flow_vma_file;

/* Open path read-only (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC), regular files
 * only, at most FLOW_VMA_MAX_FILE bytes; engine and pid come from the name
 * (vmastat.<pid>, xliostat.<pid>); the owner must be the uid of that pid
 * unless check_owner is 0 (tests). NULL with err filled on refusal. */
struct flow_vma_file *flow_vma_file_open(const char *path, int check_owner, char *err,
					 size_t errlen);
/* The two copies of a read: one pair per reader, shared by its files, so
 * the memory is twice the largest file whatever the number of files. */
struct flow_vma_buf {
	unsigned char *a, *b;
	size_t cap;
};
void flow_vma_buf_free(struct flow_vma_buf *buf);

/* Copy the file twice into buf (a third read for torn blocks) and parse
 * it. */
int flow_vma_file_read_buf(struct flow_vma_file *f, struct flow_vma_buf *buf,
			   struct flow_vma_snap *out, char *err, size_t errlen);
/* The same with buffers of its own, freed before it returns (tests). */
int flow_vma_file_read(struct flow_vma_file *f, struct flow_vma_snap *out, char *err,
		       size_t errlen);
/* Bump reader_counter (the one write) unless bumped less than interval_ns
 * ago: reads the field, writes it + 1 with pwrite() through a descriptor
 * opened (O_NOFOLLOW|O_NONBLOCK) at the first bump, checked to be the file
 * read, and kept. 1 bumped, 0 rate-limited, -errno. */
int flow_vma_file_bump(struct flow_vma_file *f, uint64_t now_ns, uint64_t interval_ns,
		       char *err, size_t errlen);
int flow_vma_file_pid(const struct flow_vma_file *f);
unsigned flow_vma_file_uid(const struct flow_vma_file *f);    /* the file's owner */
/* The pid's start time (util_proc_start) when the file was opened, 0 if
 * the process was gone: claims are checked against that process only. */
unsigned long long flow_vma_file_start(const struct flow_vma_file *f);
/* fstat() of the open file: 0, or -errno. */
int flow_vma_file_stat(const struct flow_vma_file *f, struct stat *st);
enum flow_vma_engine flow_vma_file_engine(const struct flow_vma_file *f);
void flow_vma_file_close(struct flow_vma_file *f);

/* Engine and pid from a file name ("vmastat.123"): 0, or -EINVAL. */
int flow_vma_name(const char *name, enum flow_vma_engine *e, int *pid);

/* ---- liveness ---- */

struct flow_vma_track {
	struct flow_live_track live;
	uint64_t rx_acc, tx_acc, rxp_raw, txp_raw;      /* packets, unwrapped */
	uint64_t rxb_acc, txb_acc, rxb_raw, txb_raw;    /* bytes, unwrapped */
	uint64_t rx_bytes_prev;
	/* the OS path's packets and bytes, raw (each wraps on its own) */
	uint64_t rxop_raw, txop_raw, rxob_raw, txob_raw;
};

/* Turn one socket into a flow observation (src FLOW_SRC_VMA): key from the
 * bound and connected address, unread = rx ready bytes, unsent = tx ready
 * bytes, tx/rx msgs = packets and tx/rx bytes unwrapped from first sight
 * (VMA's 32-bit counters wrap), offloaded and OS path together (a socket
 * the engine did not offload moves only n_*_os_packets / _bytes; their
 * errors and EAGAINs are not movement: libvma 9.8.84 counts a send's
 * EAGAIN in n_rx_os_eagain, and an empty non-blocking read counts one),
 * retrans = n_tx_retransmits, state = tcp_state, last_tx/rx_ns = now
 * when the counter moved (this poll), pid.
 * Verdict:
 *   FAILED   never (the stats carry no error state; errors are evidence)
 *   HELD     bytes ready to read (or to send) and the application consumed
 *            (sent) nothing since the previous snapshot
 *   WAITING  counters still and the packet balance above its low mark
 *   PROGRESS counters moved;  IDLE otherwise.
 * t must be zeroed before the first call for a socket. */
enum flow_live flow_vma_obs(const struct flow_vma_sock *s, const char *engine, int pid,
			    struct flow_vma_track *t, uint64_t now_ns, struct flow_obs *o);

#endif
