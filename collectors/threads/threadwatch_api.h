/* threadwatch: the engine-thread watch's loader (userspace API).
 *
 * Loads threadwatch.bpf.c on the scheduler's switch tracepoint
 * (tp_btf/sched_switch: kernel BTF needed, Linux 5.5; threadwatch_open()
 * says why not otherwise and the rest of the daemon runs without it),
 * keeps its map of watched processes as the owners of watched flows come
 * and go (a process is its pid and its start time: a reused pid is another
 * process), reads every watched thread's counters without blocking (map
 * reads), keeps a short history per thread for threadjudge.h, and
 * symbolises the kernel stacks at sleep from /proc/kallsyms. */
#ifndef NICSTALL_THREADWATCH_API_H
#define NICSTALL_THREADWATCH_API_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/threads/threadjudge.h"

struct threadwatch;
struct json_object;

/* Load and attach. NULL + err (why it is off) when the kernel refuses. */
struct threadwatch *threadwatch_open(char *err, size_t errlen);
void threadwatch_close(struct threadwatch *tw);

/* Trace the watched threads' system calls too (on), or stop (off): the
 * raw_syscalls programs, attached only while on (every system call of the
 * host pays for them: nicstalld.conf(5) thread_watch_syscalls). 0, or
 * -errno with err (the kernel refused them; the switch watch runs on). */
int threadwatch_syscalls(struct threadwatch *tw, int on, char *err, size_t errlen);

/* Watch exactly the processes pids[0..n) (0 and negative skipped) from
 * now. A process already watched stays (its threads' history with it); a
 * pid whose process is gone, or whose start time changed (reused), is
 * dropped with one log line and its threads forgotten. A reused pid is
 * not watched again until a call that does not ask for it: the flows
 * that name it were the old process's. Returns how many are watched. */
unsigned threadwatch_set(struct threadwatch *tw, const int32_t *pids, unsigned n);
/* Read every watched thread at now (CLOCK_MONOTONIC); a history sample is
 * kept every keep_ns at most (a sixteenth of the least threshold is
 * plenty). Watched processes that exited since are dropped (one log line
 * each). Returns the threads read, or -errno with err filled. */
int threadwatch_read(struct threadwatch *tw, uint64_t now, uint64_t keep_ns, char *err,
		     size_t errlen);

/* One thread as of the last read, judged. */
struct tw_view {
	int32_t pid, tid;
	struct tj_sample cur;
	struct tj_result r;
	int32_t stack_id;       /* at its last voluntary sleep (< 0: none) */
	uint64_t sleep_at_ns;
	/* threadwatch_syscalls() on: the call it is in since sys_at_ns (0:
	 * none seen to begin), and its last finished call and how long */
	uint64_t sys_at_ns, sys_last_ns;
	int32_t sys_nr, sys_last_nr;    /* -1: none */
};
typedef void (*threadwatch_fn)(const struct tw_view *v, void *arg);
/* Judge every watched thread of pid (0: every process) as tj_judge() does
 * (the base: the newest sample at least threshold_ns old); calls fn for
 * each. Returns how many of them are stalled. */
unsigned threadwatch_judge(struct threadwatch *tw, int32_t pid, uint64_t threshold_ns,
			   unsigned min_share_pct, uint64_t flows_wait_since_ns,
			   uint64_t min_wait_ns, threadwatch_fn fn, void *arg);

/* The threads of pid (the whole process, threads the program has not seen
 * switch included, from /proc/PID/task), as a JSON array for the evidence
 * bundle: per thread its name, state now, switches and off-CPU time by why
 * over [since_ns, until_ns] (since_ns 0: over the threshold's window;
 * until_ns 0: to the last read; else to the first sample at or after it),
 * its share off CPU of its own accord, and the symbolised kernel stack
 * where it last went to sleep. NULL when pid is not watched. */
struct json_object *threadwatch_evidence(struct threadwatch *tw, int32_t pid, uint64_t since_ns,
					 uint64_t until_ns, uint64_t threshold_ns);

/* The kernel stack stack_id as "func+0x1a/0x40 [module]" lines into buf
 * (newline-separated). The symbols are read from /proc/kallsyms once, at
 * threadwatch_open(), and again only when /proc/modules changes.
 * Unreadable kallsyms (or all addresses zero: no CAP_SYSLOG /
 * kptr_restrict): hexadecimal addresses, one log line, and the status's
 * kernel_symbols says why.
 * Returns the frames written, -1 when the stack is not known. */
int threadwatch_stack(struct threadwatch *tw, int32_t stack_id, char *buf, size_t len);

/* Kernel stacks walked at sleeps so far, and sleeps that took the stack
 * last walked where they slept (threadwatch.bpf.c tw_stack). */
void threadwatch_walks(const struct threadwatch *tw, uint64_t *walks, uint64_t *reused);
/* Tests: read symbols from path instead of /proc/kallsyms, and the
 * modules from modules instead of /proc/modules (read again at the next
 * stack). */
void threadwatch_set_kallsyms(struct threadwatch *tw, const char *path, const char *modules);

/* What `nicstallctl status` shows: on, processes and threads watched,
 * drops, the kallsyms state, the program's id. */
void threadwatch_status(const struct threadwatch *tw, struct json_object *out);

#endif
