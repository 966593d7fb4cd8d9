/* bench_runs: what `nicstallctl run begin` and `run end` cost the daemon's
 * loop with eight mlx5 ports of 751 counters each (the recorded
 * ConnectX-4 Lx `ethtool -S` dump, the shipped rules) and full flight
 * recorders (issue 30: each answers in under 10 ms). Timed: runs_begin
 * (every port's counters copied, the gap's rate before the run) and
 * runs_end (every counter's delta, the rules' signals, the certificate
 * built and handed to the writer thread). */
#include "daemon/conf.h"
#include "daemon/ports.h"
#include "daemon/runs.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "rules/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NPORTS 8
#define SEC 1000000000ull

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *dump = "tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt";
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 50, fill;
	char dir[] = "/tmp/bench-runs.XXXXXX", path[256], abs_dump[4096], cmd[300];
	double *b, *e;
	uint64_t t = SEC;
	struct conf *c = NULL;
	struct rules *r = NULL;
	struct loop *l;
	struct ports *ps;
	struct runs *rs;
	FILE *f;

	log_set_level(LOG_ERR);
	if (!rounds || !realpath(dump, abs_dump) || !mkdtemp(dir)) {
		fprintf(stderr, "bench_runs: %s: %m (run from the top directory)\n", dump);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/n.conf", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "[daemon]\nstate_dir = %s\n", dir);
	for (unsigned i = 0; i < NPORTS; i++)
		fprintf(f, "[port p%u]\nstats_file = %s\nprofile = mlx5\n", i, abs_dump);
	fclose(f);
	if (conf_load(path, &c, NULL, NULL) < 0 ||
	    rules_load_dirs("rules", "/nonexistent", &r, quiet, NULL) < 0 || !r) {
		fprintf(stderr, "bench_runs: configuration or rules do not load\n");
		return 1;
	}
	l = loop_new();
	ps = ports_new(l, "");
	ports_apply(ps, c, 0);
	fill = ports_rec_capacity(c);
	for (unsigned i = 0; i < fill; i++, t += SEC)   /* full flight recorders */
		ports_sample(ps, t, t);
	rs = runs_new(l, ps, NULL, c);
	runs_set_rules(rs, r);
	b = calloc(rounds, sizeof(double));
	e = calloc(rounds, sizeof(double));
	if (!rs || !b || !e)
		return 1;
	for (unsigned i = 0; i < rounds; i++) {
		double t0 = now_ms();

		json_object_put(runs_begin(rs, "bench", NULL, 0));
		b[i] = now_ms() - t0;
		ports_sample(ps, t, t);
		t += SEC;
		t0 = now_ms();
		json_object_put(runs_end(rs, "bench", 0, NULL));
		e[i] = now_ms() - t0;
	}
	qsort(b, rounds, sizeof(double), cmp);
	qsort(e, rounds, sizeof(double), cmp);
	printf("%u ports of 751 counters, recorders of %u samples, %u runs\n", NPORTS, fill, rounds);
	printf("%-14s %10s %10s   (goal: under 10 ms each)\n", "ms", "median", "max");
	printf("%-14s %10.3f %10.3f\n", "run begin", b[rounds / 2], b[rounds - 1]);
	printf("%-14s %10.3f %10.3f\n", "run end", e[rounds / 2], e[rounds - 1]);
	runs_free(rs);
	ports_free(ps);
	rules_free(r);
	conf_free(c);
	loop_free(l);
	free(b);
	free(e);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
