/* bench_threads: the thread watch's cost per scheduler switch, from the
 * kernel's own accounting of the program (kernel.bpf_stats_enabled: run
 * count and run time, which include the accounting's two clock reads).
 * Three phases of a few seconds, each printing one line:
 *   nothing watched      every switch of the host, the watched set empty
 *   unwatched switch     one idle process watched: the host's switches
 *                        test two bits and leave
 *   watched switch       one thread switching ~10k times a second watched
 *                        (off-CPU accounting, a stack walk per sleep)
 *   bench_threads [SECONDS]   (as root) */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/threadwatch_api.h"
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

int main(int argc, char **argv)
{
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
	char err[256], was[16] = "0";
	struct threadwatch *tw;
	FILE *f;
	pid_t idle, busy;
	int32_t p;
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
	phase(fd, "nothing watched", secs);
	idle = fork();
	if (!idle) {
		pause();
		_exit(0);
	}
	p = idle;
	threadwatch_set(tw, &p, 1);
	phase(fd, "unwatched switch", secs);
	busy = fork();
	if (!busy)
		for (;;)
			usleep(100);
	p = busy;
	threadwatch_set(tw, &p, 1);
	phase(fd, "watched switch", secs);
	kill(idle, SIGKILL);
	kill(busy, SIGKILL);
	waitpid(idle, NULL, 0);
	waitpid(busy, NULL, 0);
	threadwatch_close(tw);
	if ((f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w"))) {
		fputs(was, f);
		fclose(f);
	}
	return 0;
}
