// SPDX-License-Identifier: GPL-2.0
/* tpfloor: the least a hook on the socket call paths costs a socket it
 * does not watch (bench_tpfloor.c, make bench's perturb section): a
 * tp_btf program on sock:sock_send_length and one on sock:sock_recv_length
 * that do what the kernel-event watch's hooks do for such a socket
 * (collectors/flows/sockwatch.bpf.c sw_watched(): a socket-storage lookup
 * that finds nothing) and leave. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} tf_sks SEC(".maps");

SEC("tp_btf/sock_send_length")
int BPF_PROG(tf_send, void *sk)
{
	return bpf_sk_storage_get(&tf_sks, sk, 0, 0) ? 1 : 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tf_recv, void *sk)
{
	return bpf_sk_storage_get(&tf_sks, sk, 0, 0) ? 1 : 0;
}
