/* bench_threads: the thread watch's cost per scheduler switch, from the
 * kernel's own accounting of the program (kernel.bpf_stats_enabled: run
 * count and run time, which include the accounting's two clock reads).
 * Four phases of a few seconds, each printing one line; in the first
 * three two unwatched processes play ping-pong over pipes (tens of
 * thousands of switches a second), so the figure is the program's hot
 * path, not an idle machine's few cold switches:
 *   nothing watched      every switch of the host, the watched set empty
 *   unwatched switch     one idle process watched: the switches compare
 *                        their two tgids with the watched list and leave
 *   unwatched switch, bitmap   TW_LIST + 1 idle processes watched: two bit
 *                        tests in the bitmap instead
 *   watched switch       one thread switching ~10k times a second watched
 *                        (off-CPU accounting, a stack walk per sleep)
 * and a fifth, thread_watch_syscalls: an unwatched process's system call
 * (getppid, the cheapest) timed by the clock in a tight loop, with the
 * raw_syscalls programs detached and attached in turn (5 pairs; attaching
 * them puts every task's calls on the entry's slow path, which bpf_stats
 * does not see; bpf_stats off again), the medians printed:
 *   system call: OFF ns off, ON ns on
 *   bench_threads [SECONDS]   (as root) */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/threads/threadwatch.h"
#include "collectors/threads/threadwatch_api.h"
#include "lib/log.h"

/* The loaded tw_switch program (ours: the newest of that name). */
static int prog_fd(void)
{
	__u32 id = 0;
	int best = -1;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info i;
		__u32 l = sizeof(i);
		int fd = bpf_prog_get_fd_by_id(id);

		memset(&i, 0, sizeof(i));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &i, &l) && !strcmp(i.name, "tw_switch")) {
			if (best >= 0)
				close(best);
			best = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	return best;
}

static void phase(int fd, const char *what, unsigned secs)
{
	struct bpf_prog_info a, b;
	__u32 l = sizeof(a);
	unsigned long long n;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	bpf_obj_get_info_by_fd(fd, &a, &l);
	sleep(secs);
	l = sizeof(b);
	bpf_obj_get_info_by_fd(fd, &b, &l);
	n = b.run_cnt - a.run_cnt;
	printf("%s: %.1f ns/event (%llu events)\n", what,
	       n ? (double)(b.run_time_ns - a.run_time_ns) / (double)n : 0.0, n);
	fflush(stdout);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ns per getppid() over n calls */
static double call_ns(unsigned n)
{
	uint64_t t0 = mono_ns();

	for (unsigned i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (double)(mono_ns() - t0) / n;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The system-call phase: pairs off/on, medians. */
static void syscalls_phase(struct threadwatch *tw)
{
	double off[5], on[5];
	char err[256];

	for (int i = 0; i < 5; i++) {
		threadwatch_syscalls(tw, 0, err, sizeof(err));
		call_ns(100000);        /* warm */
		off[i] = call_ns(1000000);
		if (threadwatch_syscalls(tw, 1, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_threads: %s\n", err);
			return;
		}
		call_ns(100000);
		on[i] = call_ns(1000000);
	}
	threadwatch_syscalls(tw, 0, err, sizeof(err));
	qsort(off, 5, sizeof(off[0]), dcmp);
	qsort(on, 5, sizeof(on[0]), dcmp);
	printf("system call: %.1f ns off, %.1f ns on\n", off[2], on[2]);
	fflush(stdout);
}

/* Two processes that wake each other over pipes until killed. */
static pid_t pingpong(void)
{
	int ab[2], ba[2];
	pid_t a;

	if (pipe(ab) < 0 || pipe(ba) < 0)
		return -1;
	a = fork();
	if (a < 0)
		return -1;
	if (!a) {
		pid_t b = fork();
		char c = 0;

		if (b < 0)
			_exit(1);
		if (!b) {
			/* ends with its partner: it holds the caller's stdout */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
					_exit(0);
		}
		for (;;)
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
				kill(b, SIGKILL);
				_exit(0);
			}
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return a;
}

int main(int argc, char **argv)
{
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
	char err[256], was[16] = "0";
	struct threadwatch *tw;
	FILE *f;
	pid_t idle, busy, load;
	int32_t p, idles[TW_LIST + 1];
	int fd;

	log_init("bench_threads", 0);
	if ((f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r"))) {
		if (!fgets(was, sizeof(was), f))
			strcpy(was, "0");
		fclose(f);
	}
	tw = threadwatch_open(err, sizeof(err));
	if (!tw) {
		fprintf(stderr, "bench_threads: %s\n", err);
		return 1;
	}
	if (!(f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w")) || fputs("1", f) < 0 ||
	    fclose(f)) {
		fprintf(stderr, "bench_threads: cannot enable kernel.bpf_stats_enabled\n");
		return 1;
	}
	fd = prog_fd();
	load = pingpong();
	phase(fd, "nothing watched", secs);
	for (unsigned i = 0; i <= TW_LIST; i++) {
		idles[i] = fork();
		if (!idles[i]) {
			pause();
			_exit(0);
		}
	}
	idle = idles[0];
	p = idle;
	threadwatch_set(tw, &p, 1);
	phase(fd, "unwatched switch", secs);
	threadwatch_set(tw, idles, TW_LIST + 1);
	phase(fd, "unwatched switch, bitmap", secs);
	if (load > 0) {
		kill(load, SIGKILL);
		waitpid(load, NULL, 0);
	}
	busy = fork();
	if (!busy)
		for (;;)
			usleep(100);
	p = busy;
	threadwatch_set(tw, &p, 1);
	phase(fd, "watched switch", secs);
	/* without bpf_stats' two clock reads a run: the calls as a host
	 * without it pays them */
	if ((f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w"))) {
		fputs(was, f);
		fclose(f);
	}
	syscalls_phase(tw);     /* this process unwatched, busy watched */
	for (unsigned i = 0; i <= TW_LIST; i++) {
		kill(idles[i], SIGKILL);
		waitpid(idles[i], NULL, 0);
	}
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	threadwatch_close(tw);
	if ((f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w"))) {
		fputs(was, f);
		fclose(f);
	}
	return 0;
}
