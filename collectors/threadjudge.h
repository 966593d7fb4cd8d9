/* threadjudge: is an engine thread stalled? The pure decision over two
 * samples of one thread's scheduler accounting (threadwatch.h), taken by
 * the thread watch at two polls. No I/O; the clock is in the samples.
 *
 * Two signatures (nicstalld.conf(5), "Thread watch"):
 *  - asleep: over the last threshold the thread spent at least min_share
 *    percent of the time off CPU of its own accord (TASK_INTERRUPTIBLE or
 *    TASK_UNINTERRUPTIBLE: a lock, a futex, a pipe, a socket, the disk),
 *    preemption not counted. A busy-polling engine thread never sleeps;
 *    seed 001's sender slept 95% of 650 ms, woken 29,463 times to lose
 *    the lock again: a point-in-time state (R, wchan 0) caught it
 *    running, the share over the window does not miss it.
 *  - one-sleep: it has been asleep without a break for longer than the
 *    threshold (one system call that does not return).
 * Either is a stall only while the process's flows wait, and have waited
 * at least min_wait: a healthy engine that sleeps in epoll_wait or a futex
 * between requests is asleep with nothing waiting. */
#ifndef NICSTALL_THREADJUDGE_H
#define NICSTALL_THREADJUDGE_H

#include <stdint.h>

#include "collectors/threadwatch.h"

/* One reading of one thread (CLOCK_MONOTONIC ns). */
struct tj_sample {
	uint64_t at_ns;                 /* when it was read */
	uint64_t off_ns[TW_OFF_N];      /* closed off-CPU spans, by why */
	uint64_t nvcsw, nivcsw;
	uint64_t off_at_ns;             /* off since then (0: on CPU) */
	uint32_t off_state;             /* enum tw_off of that span */
};

enum tj_verdict {
	TJ_RUNNING = 0,         /* on CPU enough (or preempted): not blocked */
	TJ_UNKNOWN,             /* the samples span less than the threshold */
	TJ_ASLEEP,              /* mostly asleep over the threshold */
	TJ_ONE_SLEEP,           /* one sleep longer than the threshold */
};

struct tj_result {
	enum tj_verdict verdict;
	int stalled;            /* blocked while the flows wait */
	uint64_t window_ns;     /* base to now */
	uint64_t sleep_ns, disk_ns, preempt_ns; /* off CPU in the window */
	unsigned share_pm;      /* voluntary off-CPU share, per mille */
	uint64_t nvcsw, nivcsw; /* switches in the window */
	uint64_t since_ns;      /* when the blocked span began (0: not blocked) */
};

/* Judge cur against base (an earlier sample of the same thread, read at
 * least threshold_ns before cur when one exists). flows_wait_since_ns:
 * when the oldest current wait of the process's flows began (0: none
 * waits). */
void tj_judge(const struct tj_sample *base, const struct tj_sample *cur, uint64_t threshold_ns,
	      unsigned min_share_pct, uint64_t flows_wait_since_ns, uint64_t min_wait_ns,
	      struct tj_result *r);

/* "running", "unknown", "asleep", "one-sleep". */
const char *tj_verdict_name(enum tj_verdict v);
/* "sleep", "disk", "preempted", "other". */
const char *tj_off_name(uint32_t off_state);

#endif
