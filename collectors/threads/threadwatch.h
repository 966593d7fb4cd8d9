/* threadwatch: what the scheduler-switch program (threadwatch.bpf.c) and
 * its loader (threadwatch.c) share: the map layouts. Plain fixed-width
 * types only: included by the BPF program and by user space. */
#ifndef NICSTALL_THREADWATCH_H
#define NICSTALL_THREADWATCH_H

#ifdef __bpf__
#include <linux/types.h>
typedef __u32 tw_u32;
typedef __s32 tw_s32;
typedef __u64 tw_u64;
#else
#include <stdint.h>
typedef uint32_t tw_u32;
typedef int32_t tw_s32;
typedef uint64_t tw_u64;
#endif

#define TW_MAX_TGIDS 1024       /* watched processes */
#define TW_LIST 8               /* up to so many watched: a list, not the bitmap */
#define TW_LIST_NONE 0xffffffffu
#define TW_TGID_WORDS 65536     /* the watched set: one bit per tgid up to
				 * 2^22 (PID_MAX_LIMIT on 64-bit) */
#define TW_MAX_THREADS 16384    /* their threads (LRU: the least recently
				 * switched go first) */
#define TW_MAX_STACKS 4096      /* kernel stacks at sleep */
#define TW_STACK_DEPTH 32       /* frames kept per stack */
/* A sleep where the last walked one was (tw_site) takes its stack for at
 * most this long after the walk; then it is walked again. */
#define TW_STACK_REUSE_NS 1000000000ull

/* Why a thread went off the CPU, from the switch's preempt flag and the
 * task state it left with (trace_sched_switch's prev_state). */
enum tw_off {
	TW_OFF_SLEEP = 0,       /* TASK_INTERRUPTIBLE: waits for an event (futex,
				 * epoll_wait, a pipe, a socket) */
	TW_OFF_DISK = 1,        /* TASK_UNINTERRUPTIBLE (D) */
	TW_OFF_PREEMPT = 2,     /* preempted, still runnable (R) */
	TW_OFF_OTHER = 3,       /* stopped, traced, dead, parked */
	TW_OFF_N = 4,
};

/* One watched thread (key: its tid). Off-CPU time is added when the
 * thread comes back on the CPU; a thread off now has off_at_ns != 0 and
 * the time since belongs to off_state. Times: bpf_ktime_get_ns(), i.e.
 * CLOCK_MONOTONIC. */
struct tw_thread {
	tw_u64 off_ns[TW_OFF_N];
	tw_u64 nvcsw, nivcsw;   /* switches out: voluntary, involuntary */
	tw_u64 off_at_ns;       /* when it last went off CPU; 0: on CPU now */
	tw_u64 sleep_at_ns;     /* when it last went to sleep voluntarily */
	tw_u64 first_ns;        /* when the program first saw it */
	tw_u32 tgid;
	tw_u32 off_state;       /* enum tw_off of the last switch out */
	tw_s32 stack_id;        /* kernel stack at the last voluntary sleep,
				 * < 0: none (-errno of bpf_get_stackid) */
	tw_u32 first_how;       /* TW_FIRST_*: how the program first saw it */
	/* where the stack was walked (threadwatch.bpf.c tw_site): the system
	 * call, the user address it was made from and the state, and when */
	tw_u64 site_ip, stack_ns;
	tw_s32 site_nr;
	tw_u32 site_off;
	/* thread_watch_syscalls = on only (the raw_syscalls programs): */
	tw_u64 sys_at_ns;       /* when it entered the call it is in; 0: none */
	tw_u64 sys_last_ns;     /* how long its last finished call took */
	tw_u64 sys_last_at_ns;  /* when that call ended */
	tw_s32 sys_nr;          /* the call it is in, else its last; -1: none */
	tw_s32 sys_last_nr;     /* its last finished call; -1: none */
};

/* A thread the program first saw going off the CPU was on it since its
 * process was watched (any switch before would have been seen); one first
 * seen coming on was off it, for how long unknown (asleep since before the
 * watch, or just born). */
#define TW_FIRST_IN 1
#define TW_FIRST_OUT 2


#endif
