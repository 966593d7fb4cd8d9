// SPDX-License-Identifier: GPL-2.0
/* sockread: the fields of watched TCP sockets that sock_diag's tcp_info
 * would give, read by a tc program that userspace runs on demand
 * (BPF_PROG_TEST_RUN) inside the port's namespace: for each key in sr_keys
 * [sr_start, sr_start + SR_CHUNK) below sr_n, one socket hash lookup
 * (bpf_skc_lookup_tcp(), the established table of the namespace the run
 * belongs to) and a few loads from its tcp_sock (bpf_skc_to_tcp_sock(),
 * field offsets relocated against the running kernel's BTF). No message is
 * built, copied or received per socket: a sock_diag exact lookup costs a
 * netlink request, an allocation and a reply each. Never changes a socket.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "collectors/flows/sockread.h"

char LICENSE[] SEC("license") = "GPL";

/* What we read of the kernel's structs (CO-RE: names, not offsets). */
struct sock_common___sr {
	struct {
		long counter;
	} skc_cookie;
} __attribute__((preserve_access_index));

struct sock___sr {
	struct sock_common___sr __sk_common;
} __attribute__((preserve_access_index));

struct inet_connection_sock___sr {
	__u32 icsk_rto;
	__u8 icsk_retransmits;
	struct {
		__u32 lrcvtime;
	} icsk_ack;
} __attribute__((preserve_access_index));

struct tcp_sock___sr {
	struct inet_connection_sock___sr inet_conn;
	__u64 bytes_acked, bytes_received;
	__u32 rcv_nxt, copied_seq, snd_una, snd_nxt, write_seq;
	__u32 data_segs_in, data_segs_out, total_retrans;
	__u32 lsndtime, packets_out, rcv_tstamp;
} __attribute__((preserve_access_index));

/* HZ, from the kernel's configuration when libbpf finds it (0 otherwise:
 * the loader measures it from sr_jiffies against sr_ktime) */
extern unsigned int CONFIG_HZ __kconfig __weak;

__u32 sr_n = 0, sr_start = 0, sr_hz = 0;
__u64 sr_jiffies = 0, sr_ktime = 0;
struct sr_key sr_keys[SR_MAX] = {};
struct sr_val sr_vals[SR_MAX] = {};

static __always_inline void sr_read(struct __sk_buff *ctx, __u32 i)
{
	struct bpf_sock_tuple t = {};
	struct tcp_sock___sr *tp;
	struct sr_key *k;
	struct sr_val *v;
	struct bpf_sock *sk;
	__u32 size;

	/* the verifier must see the bound on the register that indexes */
	asm volatile("%[i] &= %[m]" : [i] "+r"(i) : [m] "i"(SR_MAX - 1));
	k = &sr_keys[i];
	v = &sr_vals[i];

	/* the lookup takes the tuple as an arriving segment carries it */
	if (k->v4) {
		t.ipv4.saddr = k->raddr[3];
		t.ipv4.daddr = k->laddr[3];
		t.ipv4.sport = k->rport;
		t.ipv4.dport = k->lport;
		size = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, k->raddr, 16);
		__builtin_memcpy(t.ipv6.daddr, k->laddr, 16);
		t.ipv6.sport = k->rport;
		t.ipv6.dport = k->lport;
		size = sizeof(t.ipv6);
	}
	v->found = 0;
	v->full = 0;
	sk = bpf_skc_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return;
	v->state = (__u8)sk->state;
	v->jiffies = (__u32)bpf_jiffies64();
	tp = (struct tcp_sock___sr *)bpf_skc_to_tcp_sock(sk);
	if (tp) {
		struct sock___sr *s = (struct sock___sr *)tp;

		if ((__u64)s->__sk_common.skc_cookie.counter != k->cookie)
			goto out;       /* another socket on the tuple */
		v->full = 1;
		v->bytes_acked = tp->bytes_acked;
		v->bytes_received = tp->bytes_received;
		v->rcv_nxt = tp->rcv_nxt;
		v->copied_seq = tp->copied_seq;
		v->snd_una = tp->snd_una;
		v->snd_nxt = tp->snd_nxt;
		v->write_seq = tp->write_seq;
		v->data_segs_in = tp->data_segs_in;
		v->data_segs_out = tp->data_segs_out;
		v->total_retrans = tp->total_retrans;
		v->lsndtime = tp->lsndtime;
		v->lrcvtime = tp->inet_conn.icsk_ack.lrcvtime;
		v->rto = tp->inet_conn.icsk_rto;
		v->packets_out = tp->packets_out;
		v->rcv_tstamp = tp->rcv_tstamp;
		v->retransmits = tp->inet_conn.icsk_retransmits;
	}
	v->found = 1;
out:
	bpf_sk_release(sk);
}

SEC("tc")
int sr_run(struct __sk_buff *ctx)
{
	sr_hz = CONFIG_HZ;
	sr_jiffies = bpf_jiffies64();
	sr_ktime = bpf_ktime_get_ns();
	for (__u32 j = 0; j < SR_CHUNK; j++) {
		__u32 i = sr_start + j;

		if (i >= sr_n || i >= SR_MAX)
			break;
		sr_read(ctx, i);
	}
	return TC_ACT_OK;
}
