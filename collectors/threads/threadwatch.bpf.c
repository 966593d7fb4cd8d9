// SPDX-License-Identifier: GPL-2.0
/* threadwatch: per-thread time off CPU, by why it left, for the threads of
 * the processes the daemon watches (those that own watched flows), from the
 * scheduler's switch tracepoint (tp_btf/sched_switch: needs kernel BTF).
 *
 * The kernel's __schedule() (kernel/sched/core.c) reads prev_state =
 * prev->__state once; on a switch that is not a preemption with a non-zero
 * state it blocks the task (try_to_block_task(), which turns prev_state
 * back to TASK_RUNNING when a signal is pending) and counts the switch in
 * prev->nvcsw, otherwise in prev->nivcsw; then trace_sched_switch(preempt,
 * prev, next, prev_state) fires, before context_switch(), so current is
 * still prev (fa2c3254d7cf "sched/tracing: Don't re-read p->state when
 * emitting sched_switch event" made prev_state an argument). We classify as
 * it counts: preempt or state 0 (a yield) is involuntary, the rest
 * voluntary, TASK_INTERRUPTIBLE (0x1) a sleep on an event,
 * TASK_UNINTERRUPTIBLE (0x2) a D sleep.
 *
 * Every switch on the host runs this. With nothing watched it costs a read
 * of a global. With up to TW_LIST processes watched (the common case: the
 * engines of one host), a switch of two unwatched threads costs the loads
 * of prev->tgid and next->tgid (both tasks are hot: the scheduler just
 * handled them) and at most 2 x TW_LIST compares against a few globals
 * (the count in .bss, the list in .data: two cache lines): no helper
 * call, no map lookup, no random memory access. With
 * more, two bit tests in a 512 KiB array (inlined lookups, each a likely
 * cache miss). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "collectors/threads/threadwatch.h"

char LICENSE[] SEC("license") = "GPL";

/* What we read of the next task (CO-RE: relocated against the kernel's BTF). */
struct task_struct___tw {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

/* The watched processes: one bit per tgid (the daemon keeps it). An array
 * lookup is inlined by the verifier: a load and a compare, no hash. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TW_TGID_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} tw_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TW_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct tw_thread);
} tw_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, TW_MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TW_STACK_DEPTH * sizeof(__u64));
} tw_stacks SEC(".maps");

/* Processes in tw_procs: the daemon keeps it (0: leave at once). */
__u32 tw_nprocs = 0;
/* The same when there are at most TW_LIST of them (tw_big 0): their tgids,
 * the unused slots TW_LIST_NONE (no tgid is; the idle task's is 0). */
__u32 tw_list[TW_LIST] = { TW_LIST_NONE, TW_LIST_NONE, TW_LIST_NONE, TW_LIST_NONE,
			   TW_LIST_NONE, TW_LIST_NONE, TW_LIST_NONE, TW_LIST_NONE };
__u32 tw_big = 0;
/* When the system-call programs were last attached (the daemon sets it
 * before it attaches them): what an entry holds from before, a call begun
 * while they were off, is no start of this one. */
__u64 tw_sys_since = 0;
/* Kernel stacks walked, and sleeps that took the last walked one (tw_stack) */
__u64 tw_walks = 0, tw_reused = 0;
/* Entries made in tw_threads: while it has not moved since the daemon
 * walked the map, the threads it knows are all there are, and it reads
 * them by key (threadwatch_read). */
__u64 tw_made = 0;

/* A thread's entry, first seen now going off (TW_FIRST_OUT) or coming on
 * (TW_FIRST_IN) the CPU; NULL when the map is full. */
static __always_inline struct tw_thread *tw_new(__u32 tid, __u32 tgid, __u64 now, __u32 how)
{
	struct tw_thread init = {};

	init.tgid = tgid;
	init.first_ns = now;
	init.stack_id = -1;
	init.first_how = how;
	init.sys_nr = -1;
	init.sys_last_nr = -1;
	init.site_nr = -1;
	if (!bpf_map_update_elem(&tw_threads, &tid, &init, BPF_NOEXIST))
		__sync_fetch_and_add(&tw_made, 1);
	return bpf_map_lookup_elem(&tw_threads, &tid);
}

#if defined(__TARGET_ARCH_x86)
struct pt_regs___tw {
	unsigned long orig_ax, ip;
} __attribute__((preserve_access_index));
#endif

/* The kernel stack a watched thread goes to sleep in. A walk of it
 * (bpf_get_stackid(): the ORC unwinder, frame by frame) is most of what a
 * switch costs: on a ping-pong engine pinned with its peer to one CPU it
 * put 14% on the round trip (make bench, perturb). A sleep made where the
 * last walked one was (the same system call, made from the same user
 * address, to the same state) is in the same kernel path, so it takes
 * that stack, for TW_STACK_REUSE_NS after the walk at most; a sleep
 * outside a system call (a page fault) or elsewhere is walked. The site is
 * read from the task's saved user registers (bpf_task_pt_regs(), Linux
 * 5.15; x86: orig_ax holds the call, ip the return address); the stack's
 * own depth would not do, since the kernel offsets each call's stack at
 * random (CONFIG_RANDOMIZE_KSTACK_OFFSET). Elsewhere every sleep is
 * walked. */
static __always_inline void tw_stack(void *ctx, struct task_struct___tw *prev,
				     struct tw_thread *t, __u32 off, __u64 now)
{
	long nr = -1;
	__u64 ip = 0;
#if defined(__TARGET_ARCH_x86)
	struct pt_regs___tw *r = (struct pt_regs___tw *)bpf_task_pt_regs((struct task_struct *)prev);

	if (r) {
		nr = (long)r->orig_ax;
		ip = r->ip;
	}
#endif
	if (nr >= 0 && t->stack_id >= 0 && t->site_nr == nr && t->site_ip == ip &&
	    t->site_off == off && now - t->stack_ns < TW_STACK_REUSE_NS) {
		__sync_fetch_and_add(&tw_reused, 1);
		return;
	}
	__sync_fetch_and_add(&tw_walks, 1);
	t->stack_id = bpf_get_stackid(ctx, &tw_stacks, BPF_F_REUSE_STACKID);
	t->site_nr = (__s32)nr;
	t->site_ip = ip;
	t->site_off = off;
	t->stack_ns = now;
}

static __always_inline void tw_out(void *ctx, struct task_struct___tw *prev, __u32 tid,
				   __u32 tgid, int preempt, unsigned int state, __u64 now)
{
	struct tw_thread *t = bpf_map_lookup_elem(&tw_threads, &tid);
	__u32 off;

	if (state & 0x80) {     /* TASK_DEAD: its last switch (do_task_dead()) */
		bpf_map_delete_elem(&tw_threads, &tid);
		return;
	}
	if (!t && !(t = tw_new(tid, tgid, now, TW_FIRST_OUT)))
		return;
	if (preempt || !state) {
		off = TW_OFF_PREEMPT;
		__sync_fetch_and_add(&t->nivcsw, 1);
	} else {
		off = state & 0x1 ? TW_OFF_SLEEP : state & 0x2 ? TW_OFF_DISK : TW_OFF_OTHER;
		__sync_fetch_and_add(&t->nvcsw, 1);
		t->sleep_at_ns = now;
		/* the kernel stack it sleeps in (current is prev here) */
		tw_stack(ctx, prev, t, off, now);
	}
	t->off_state = off;
	t->off_at_ns = now;
}

static __always_inline void tw_in(__u32 tid, __u32 tgid, __u64 now)
{
	struct tw_thread *t = bpf_map_lookup_elem(&tw_threads, &tid);
	__u64 at;
	__u32 off;

	if (!t) {
		/* first seen coming on: it was off the CPU (asleep since
		 * before the watch, or new); a first switch out, later, would
		 * say it ran since the watch began, which it did not */
		tw_new(tid, tgid, now, TW_FIRST_IN);
		return;
	}
	at = t->off_at_ns;
	off = t->off_state;
	if (at && now > at && off < TW_OFF_N)
		__sync_fetch_and_add(&t->off_ns[off], now - at);
	t->off_at_ns = 0;
}

static __always_inline int tw_watched(__u32 tgid)
{
	__u32 w = tgid >> 6;
	__u64 *bits;

	if (!tw_big) {
		__u32 n = tw_nprocs;

#pragma unroll
		for (__u32 i = 0; i < TW_LIST; i++) {
			if (i >= n)
				break;
			if (tw_list[i] == tgid)
				return 1;
		}
		return 0;
	}
	bits = bpf_map_lookup_elem(&tw_procs, &w);
	return bits && (*bits >> (tgid & 63)) & 1;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tw_switch, _Bool preempt, struct task_struct___tw *prev,
	     struct task_struct___tw *next, unsigned int prev_state)
{
	__u64 now;
	__u32 tgid, ntgid;

	if (!tw_nprocs)
		return 0;
	/* prev is current here (trace_sched_switch() precedes
	 * context_switch()): its fields, not a helper call */
	tgid = prev->tgid;
	now = 0;
	if (tw_watched(tgid)) {
		now = bpf_ktime_get_ns();
		tw_out(ctx, prev, (__u32)prev->pid, tgid, preempt, prev_state, now);
	}
	ntgid = next->tgid;
	if (tw_watched(ntgid)) {
		if (!now)
			now = bpf_ktime_get_ns();
		tw_in((__u32)next->pid, ntgid, now);
	}
	return 0;
}

/* The system call a watched thread is in, and since when
 * (thread_watch_syscalls = on; not attached otherwise). The raw_syscalls
 * tracepoints fire for every system call of the host once attached:
 * trace_sys_enter(regs, id) from syscall_trace_enter() and
 * trace_sys_exit(regs, ret) from syscall_exit_work() (kernel/entry/
 * common.c; trace_syscall_enter()/_exit() in syscall-common.c on newer
 * kernels), both in the calling task. Attaching one sets
 * SYSCALL_WORK_SYSCALL_TRACEPOINT on every task (syscall_regfunc(),
 * kernel/tracepoint.c), so
 * each call of the host takes the entry's slow path: its cost is in make
 * bench (threads), which is why it is off by default. An unwatched call
 * leaves after one helper call and the compares of tw_watched(). */
struct pt_regs;

static __always_inline struct tw_thread *tw_sys_thread(__u64 *now)
{
	__u64 pt;
	__u32 tgid, tid;
	struct tw_thread *t;

	if (!tw_nprocs)
		return NULL;
	pt = bpf_get_current_pid_tgid();
	tgid = (__u32)(pt >> 32);
	if (!tw_watched(tgid))
		return NULL;
	tid = (__u32)pt;
	*now = bpf_ktime_get_ns();
	t = bpf_map_lookup_elem(&tw_threads, &tid);
	/* first seen in a call: it has not been switched since its process
	 * was watched (either switch would have made its entry), so it ran
	 * all along, as one first seen going off the CPU */
	if (!t)
		t = tw_new(tid, tgid, *now, TW_FIRST_OUT);
	return t;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tw_sys_enter, struct pt_regs *regs, long id)
{
	struct tw_thread *t;
	__u64 now = 0;

	t = tw_sys_thread(&now);
	if (t) {
		t->sys_nr = (__s32)id;
		t->sys_at_ns = now;
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tw_sys_exit, struct pt_regs *regs, long ret)
{
	struct tw_thread *t;
	__u64 now = 0;

	t = tw_sys_thread(&now);
	/* a call entered before the programs were attached has no start */
	if (t && t->sys_at_ns && t->sys_at_ns >= tw_sys_since) {
		t->sys_last_ns = now > t->sys_at_ns ? now - t->sys_at_ns : 0;
		t->sys_last_nr = t->sys_nr;
		t->sys_last_at_ns = now;
	}
	if (t)
		t->sys_at_ns = 0;
	return 0;
}
