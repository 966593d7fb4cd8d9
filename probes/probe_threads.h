/* probe_threads: snapshots of an engine process's threads from /proc (comm,
 * state, wchan, kernel stack, current syscall, context switches, CPU times),
 * and a JSON rendering of two snapshots with per-thread switch rates.
 * Synchronous and bounded: at most PROBE_THREADS_MAX threads, small fixed
 * reads per thread. Never reads /proc/PID/environ; the command line is
 * clipped at the kernel's arg_end so a setproctitle()d process cannot leak
 * its environment area through it. */
#ifndef NICSTALL_PROBE_THREADS_H
#define NICSTALL_PROBE_THREADS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;

#define PROBE_THREADS_MAX 1024          /* threads per snapshot */
#define PROBE_THREADS_STACK_MAX 4096    /* bytes of /proc/.../stack kept */

/* Bits for probe_thread.unreadable / .missing (which file). */
enum {
	PROBE_THREADS_F_STAT = 1u << 0,
	PROBE_THREADS_F_STATUS = 1u << 1,
	PROBE_THREADS_F_WCHAN = 1u << 2,
	PROBE_THREADS_F_STACK = 1u << 3,
	PROBE_THREADS_F_SYSCALL = 1u << 4,
	PROBE_THREADS_F_CMDLINE = 1u << 5,     /* process-level only */
	PROBE_THREADS_F_EXE = 1u << 6,         /* process-level only */
};

struct probe_thread {
	pid_t tid;
	int gone;                 /* exited between listing and (full) reading */
	unsigned unreadable;      /* PROBE_THREADS_F_*: EACCES/EPERM or I/O error */
	unsigned have;            /* PROBE_THREADS_F_*: read successfully */
	char comm[64];            /* from stat, between '(' and the LAST ')' */
	char state;               /* 'R', 'S', 'D', ... ; 0 unknown */
	int cpu;                  /* last CPU (stat field 39); -1 unknown */
	uint64_t utime_ns, stime_ns;
	uint64_t vol_cs, nonvol_cs;       /* from status */
	char wchan[128];
	char syscall[256];        /* "16 0x4 0xc0045a44 ..." or "running" */
	char *stack;              /* NUL-terminated, <= PROBE_THREADS_STACK_MAX */
	int stack_truncated;
	uint64_t mono_ns;         /* CLOCK_MONOTONIC when status was read */
};

struct probe_threads_snap {
	pid_t pid;
	int gone;                 /* the process was gone (at start or by the end) */
	int truncated;            /* more than PROBE_THREADS_MAX threads listed */
	unsigned unreadable;      /* PROBE_THREADS_F_CMDLINE/EXE/task dir */
	char cmdline[1024];       /* NULs as spaces, non-printables as '?' */
	int cmdline_truncated;
	char exe[512];
	uint64_t start_ns, end_ns;        /* CLOCK_MONOTONIC around the read */
	uint64_t real_ns;                 /* CLOCK_REALTIME at start */
	size_t n;
	struct probe_thread *t;   /* n entries, in directory order */
};

/* Snapshot every thread of pid into *out (zeroed first; free with
 * probe_threads_free). A process that does not exist or exits meanwhile is
 * not an error: out->gone is set and what was read is kept. Returns 0, or -1
 * with a message in err for invalid arguments and allocation failure. */
int probe_threads_snapshot(pid_t pid, struct probe_threads_snap *out,
			   char *err, size_t errlen);
void probe_threads_free(struct probe_threads_snap *s);

/* Fill the JSON object out with the process and one entry per thread holding
 * the "first" and (if second is not NULL) "second" readings, matched by TID,
 * with voluntary/nonvoluntary switches and CPU per second between the two.
 * Returns 0, or -1 (ENOMEM / EINVAL). */
int probe_threads_to_json(const struct probe_threads_snap *first,
			  const struct probe_threads_snap *second,
			  struct json_object *out);

#endif
