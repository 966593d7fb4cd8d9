/* sockread: structs shared by the BPF socket reader (sockread.bpf.c) and its
 * loader (sockread.c). Plain fixed-width types only: this header is
 * compiled both by clang -target bpf and by the host compiler. */
#ifndef NICSTALL_SOCKREAD_H
#define NICSTALL_SOCKREAD_H

#include <linux/types.h>

#define SR_MAX 4096             /* sockets one reader follows */
#define SR_CHUNK 64             /* sockets one program run reads */

/* A socket to read, as the owner sees it (local = l*): addresses and
 * ports in network order, IPv4 in the low word laddr[3] / raddr[3] with
 * v4 = 1 (also for a dual-stack AF_INET6 socket of a v4-mapped pair, found
 * by the IPv4 lookup as the kernel's own tcp_diag_find_one_icsk() does).
 * cookie: the socket's cookie from the dump that found it; a socket found
 * with another cookie took over the tuple and is not ours. */
struct sr_key {
	__u32 laddr[4], raddr[4];
	__u16 lport, rport;
	__u8 v4;
	__u8 pad[3];
	__u64 cookie;
};

/* What a run read. found: 0 no socket has the tuple (or another one does),
 * 1 read. state: the TCP state (TIME_WAIT and request sockets have no
 * tcp_sock: state only, full = 0). The rest are tcp_sock fields as
 * tcp_get_info() and tcp_diag_get_info() read them; jiffies: tcp_jiffies32
 * at the read; rto: icsk_rto (jiffies), packets_out: segments in flight
 * (tcpi_unacked). */
struct sr_val {
	__u8 found, full, state, pad;
	__u32 jiffies;
	__u64 bytes_acked, bytes_received;
	__u32 rcv_nxt, copied_seq, snd_una, snd_nxt, write_seq;
	__u32 data_segs_in, data_segs_out, total_retrans;
	__u32 lsndtime, lrcvtime;
	__u32 rto, packets_out;
	__u32 rcv_tstamp;       /* the last ACK received (tcpi_last_ack_recv) */
	__u8 retransmits;       /* timeouts in a row (tcpi_retransmits) */
	__u8 pad2[3];
};

#endif
