/* bench_tpfloor: the tracepoints' floor for the perturb section (bench/
 * README.md, "6 December"). Loads tpfloor.bpf.c, attaches its two
 * programs to the socket call tracepoints, prints one line once both are
 *   {"mode":"tpfloor","attached":2}
 * and keeps them attached until SIGTERM or SIGINT (or SECONDS, if given).
 *   bench_tpfloor [SECONDS]   (as root) */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/tpfloor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct tpfloor_bpf *skel;
	char *end = NULL;
	long secs = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	int rc;

	if (argc > 2 || secs < 0 || (end && (end == argv[1] || *end))) {
		fprintf(stderr, "usage: bench_tpfloor [SECONDS]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	skel = tpfloor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench_tpfloor: load: %s\n", strerror(errno));
		return 1;
	}
	rc = tpfloor_bpf__attach(skel);
	if (rc) {
		fprintf(stderr, "bench_tpfloor: attach: %s\n", strerror(-rc));
		tpfloor_bpf__destroy(skel);
		return 1;
	}
	printf("{\"mode\":\"tpfloor\",\"attached\":2}\n");
	fflush(stdout);
	for (long waited = 0; !stop && (!secs || waited < secs * 10); waited++)
		usleep(100000);
	tpfloor_bpf__destroy(skel);
	return 0;
}
