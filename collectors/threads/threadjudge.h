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
 * Either only for a thread that served before: on CPU for most of the
 * threshold before the window (a busy-polling thread, seed 001's spinning
 * sender). A thread asleep before as after (an idle thread, the main
 * thread in pthread_join, an engine that blocks in epoll_wait between
 * requests by design) is a sleeper, never a stall. And either is a stall
 * only while the process's flows wait, and have waited at least min_wait:
 * a request served between two naps is not a wait. */
#ifndef NICSTALL_THREADJUDGE_H
#define NICSTALL_THREADJUDGE_H

#include <stdint.h>

#include "collectors/threads/threadwatch.h"

/* One reading of one thread (CLOCK_MONOTONIC ns). */
struct tj_sample {
	uint64_t at_ns;                 /* when it was read */
	uint64_t off_ns[TW_OFF_N];      /* closed off-CPU spans, by why */
	uint64_t nvcsw, nivcsw;
	uint64_t off_at_ns;             /* off since then (0: on CPU) */
	uint32_t off_state;             /* enum tw_off of that span */
	int32_t stack_id;               /* the kernel stack of its last sleep
					 * as of the reading (-1: none; the
					 * judge does not read it) */
};

enum tj_verdict {
	TJ_RUNNING = 0,         /* on CPU enough (or preempted): not blocked */
	TJ_UNKNOWN,             /* too little history to say */
	TJ_ASLEEP,              /* mostly asleep over the threshold, after a
				 * threshold of serving (on CPU) before it */
	TJ_ONE_SLEEP,           /* one sleep longer than the threshold, after
				 * a threshold of serving before it */
	TJ_SLEEPER,             /* asleep now, and asleep before too: a thread
				 * that sleeps by design (an idle thread, an
				 * engine blocking in epoll_wait), never a stall */
};

struct tj_result {
	enum tj_verdict verdict;
	int stalled;            /* blocked while the flows wait */
	uint64_t window_ns;     /* base to now */
	uint64_t sleep_ns, disk_ns, preempt_ns; /* off CPU in the window */
	unsigned share_pm;      /* voluntary off-CPU share, per mille */
	unsigned before_pm;     /* the same over the threshold before the window */
	uint64_t nvcsw, nivcsw; /* switches in the window */
	uint64_t since_ns;      /* when the blocked span began (0: not blocked) */
};

/* Judge cur against base (read at least threshold_ns before cur, or at
 * the start of cur's sleep) and prior (read at least threshold_ns before
 * base): blocked only when it served (was on CPU more than min_share of
 * the time) between prior and base, and is asleep after. NULL prior or
 * base: not enough history. flows_wait_since_ns: when the oldest current
 * wait of the process's flows began (0: none waits). */
void tj_judge(const struct tj_sample *prior, const struct tj_sample *base,
	      const struct tj_sample *cur, uint64_t threshold_ns, unsigned min_share_pct,
	      uint64_t flows_wait_since_ns, uint64_t min_wait_ns, struct tj_result *r);
/* The same, picking prior and base from hist[0..n) (oldest first). */
void tj_judge_hist(const struct tj_sample *hist, unsigned n, const struct tj_sample *cur,
		   uint64_t threshold_ns, unsigned min_share_pct, uint64_t flows_wait_since_ns,
		   uint64_t min_wait_ns, struct tj_result *r);
/* Judged over a given span, base to cur (the flows' wait, for the
 * evidence), prior taken threshold_ns before base from hist[0..n): the
 * verdict that goes with the span's share, not with the threshold before
 * the reading (a thread read after its wait ended runs again). r's
 * deltas are the span's; a span shorter than threshold_ns: unknown. */
void tj_judge_span(const struct tj_sample *hist, unsigned n, const struct tj_sample *base,
		   const struct tj_sample *cur, uint64_t threshold_ns, unsigned min_share_pct,
		   struct tj_result *r);
/* The readings that bound a wait from since to until (0: not ended) in
 * hist[0..n) and last (the newest reading): *b, the newest reading at or
 * before since, else hist[0]; *c, the first after *b at or after until,
 * else last. hist[0] may stand for a span on CPU from its time to
 * on_cpu_until (0: it does not), when the thread was first seen going off
 * the CPU and its counters began: when that is *b, and it is older than
 * since, the reading is moved to since or on_cpu_until, whichever comes
 * first (its counters are zero all along), in *tmp. The thread may first
 * go off before since is read (a sender that blocks before the flows'
 * source dates the wait): hist[0]'s own time would put the whole watch
 * before the wait, on CPU, in the span. */
void tj_wait_span(const struct tj_sample *hist, unsigned n, const struct tj_sample *last,
		  uint64_t on_cpu_until, uint64_t since, uint64_t until, struct tj_sample *tmp,
		  const struct tj_sample **b, const struct tj_sample **c);
/* Off-CPU and switch deltas between two samples (no verdict): evidence. */
void tj_span(const struct tj_sample *base, const struct tj_sample *cur, struct tj_result *r);

/* "running", "unknown", "asleep", "one-sleep", "sleeper". */
const char *tj_verdict_name(enum tj_verdict v);
/* "sleep", "disk", "preempted", "other". */
const char *tj_off_name(uint32_t off_state);

#endif
