/* cost: what the daemon's own work costs, so a user sees what watching
 * costs (nicstallctl status) and a benchmark can name where it goes.
 *
 * Time is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user and
 * system, so the kernel's work inside a system call, a sock_diag dump or a
 * BPF map read, counts), taken around one unit of work (a counter sweep, a
 * flow-source poll). Each account keeps the total, and its share of one
 * core over the last complete window (COST_WINDOW_NS) of wall time, which
 * is what `status` shows: a figure that moves with the load, not an average
 * since start. Before the first window completes the share is over the time
 * since the account's first use. Pure data apart from cost_cpu_ns() and
 * the cost_round clocks. */
#ifndef NICSTALL_COST_H
#define NICSTALL_COST_H

#include <stdint.h>

struct json_object;

#define COST_WINDOW_NS 10000000000ull   /* 10 s */

struct cost {
	uint64_t cpu_ns;        /* total CPU time of the work */
	uint64_t calls;
	uint64_t last_ns;       /* CPU time of the last call */
	uint64_t max_ns;        /* the dearest call */
	uint64_t first_mono;    /* wall time (CLOCK_MONOTONIC) of the first use */
	uint64_t win_mono;      /* start of the running window */
	uint64_t win_cpu;       /* cpu_ns when it started */
	uint64_t prev_cpu;      /* CPU time of the last complete window */
	uint64_t prev_wall;     /* and its length; 0: none complete yet */
};

/* CPU time of the calling thread, ns (0 if the clock is unavailable). */
uint64_t cost_cpu_ns(void);

/* A round of units of work run back to back (a flow poll's sources),
 * costed with two reads of the CPU clock, not two per unit:
 * CLOCK_THREAD_CPUTIME_ID is a system call every time, where
 * CLOCK_MONOTONIC is read in the vDSO. Each unit's wall time is taken
 * (cost_round_lap), and the round's CPU time is shared among its units in
 * proportion to their wall times (cost_round_share). That holds for units
 * that stay on the CPU (socket reads, BPF runs, page-cache reads): their
 * wall time is their CPU time unless the thread was preempted, and the
 * round's ratio of CPU to wall time takes that out on average; a unit
 * preempted alone is charged a little of the others' time. A unit that
 * may sleep in the kernel (a firmware command) is costed exactly
 * instead (cost_round_exact_start/stop): its own CPU time, two more reads,
 * taken out of the round with its wall time, so its sleep does not take
 * the others' share. The shares add up to at most the round's CPU time
 * (less the exact units'). */
struct cost_round {
	uint64_t cpu0, cpu;     /* CPU time at the start; the round's, at the end */
	uint64_t cpu1;          /* CPU time at the stop (to go on from) */
	uint64_t mono0, wall;   /* wall time at the start; the round's, at the end */
	uint64_t lap;           /* wall time at the last lap */
	uint64_t xcpu, xwall;   /* the exact units' CPU and wall time */
	uint64_t xcpu0;         /* CPU time at the running exact unit's start */
};

void cost_round_start(struct cost_round *r);
/* Wall time since the start or the last lap, ns: the unit just run. */
uint64_t cost_round_lap(struct cost_round *r);
/* Around a unit that may sleep: its CPU time, ns, from the stop. */
void cost_round_exact_start(struct cost_round *r);
uint64_t cost_round_exact_stop(struct cost_round *r);
void cost_round_stop(struct cost_round *r);
/* After the stop: the CPU time of a unit that took wall_ns. */
uint64_t cost_round_share(const struct cost_round *r, uint64_t wall_ns);

/* Resident memory of this process, KiB (/proc/self/statm), 0 unknown. */
uint64_t cost_rss_kib(void);

/* One call that took cpu_ns of CPU time, ending at wall time mono_ns. */
void cost_add(struct cost *c, uint64_t cpu_ns, uint64_t mono_ns);

/* Share of one core, percent: over the last complete window, or since the
 * first use when none is complete yet (0 when never used). mono_ns: now. */
double cost_pct(const struct cost *c, uint64_t mono_ns);

/* {"cpu_pct", "cpu_ms" (total), "calls", "per_call_us" (mean), "max_us"}
 * added to out. */
void cost_json(const struct cost *c, uint64_t mono_ns, struct json_object *out);

#endif
