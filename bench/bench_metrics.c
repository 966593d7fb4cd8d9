/* bench_metrics: what the Prometheus textfile costs beside the sampling it
 * reports on, measured side by side in one run (shared machines: compare
 * the ratio, not the absolutes).
 *
 * Eight mlx5 ports read the recorded 751-counter ConnectX-4 Lx `ethtool -S`
 * dump, with the shipped rules. Timed: one sample of every port
 * (ports_sample), and one metrics_write (fold the samples since the last
 * write through the rules' signals, render, write the work file, rename)
 * after five samples, as metrics_interval = 5s does with interval = 1s.
 * A render alone (fold and text, no file) shows what the file costs. The
 * ratios printed are the metrics' share of the daemon's sampling work at
 * those defaults. */
#include "daemon/conf.h"
#include "daemon/metrics.h"
#include "daemon/ports.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "rules/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NPORTS 8
#define SEC 1000000000ull

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

int main(int argc, char **argv)
{
	const char *dump = argc > 1 ? argv[1] : "tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt";
	char dir[] = "/tmp/bench-metrics.XXXXXX", path[256], prom[256], abs_dump[4096];
	unsigned rounds = 300;
	double sample = 0, write = 0, render = 0;
	uint64_t t = SEC;
	struct conf *c = NULL;
	struct rules *r = NULL;
	struct loop *l;
	struct ports *ps;
	struct metrics *m;
	struct stat st;
	char err[256];
	FILE *f;

	log_set_level(LOG_ERR);
	if (!realpath(dump, abs_dump) || !mkdtemp(dir)) {
		fprintf(stderr, "bench_metrics: %s: %m\n", dump);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/n.conf", dir);
	snprintf(prom, sizeof(prom), "%s/nicstalld.prom", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "[daemon]\nhorizon = 120s\nmetrics_file = %s\n", prom);
	for (unsigned i = 0; i < NPORTS; i++)
		fprintf(f, "[port p%u]\nstats_file = %s\nprofile = mlx5\n", i, abs_dump);
	fclose(f);
	if (conf_load(path, &c, NULL, NULL) < 0 || rules_load_dirs("rules", "/nonexistent", &r, quiet, NULL) < 0 || !r) {
		fprintf(stderr, "bench_metrics: configuration or rules do not load (run from the top directory)\n");
		return 1;
	}
	l = loop_new();
	ps = ports_new(l, "");
	ports_apply(ps, c, 0);
	m = metrics_new(l, ps, NULL, c);
	metrics_set_rules(m, r);
	for (unsigned i = 0; i < 10; i++, t += SEC)       /* warm the recorders */
		ports_sample(ps, t, t);
	if (metrics_write(m, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_metrics: %s\n", err);
		return 1;
	}
	for (unsigned i = 0; i < rounds; i++) {
		double t0;

		for (unsigned k = 0; k < 5; k++, t += SEC) {
			t0 = now_s();
			ports_sample(ps, t, t);
			sample += now_s() - t0;
		}
		if (i % 2) {            /* every other round: fold and render only */
			char *text;

			t0 = now_s();
			text = metrics_render(m);
			render += now_s() - t0;
			free(text);
			continue;
		}
		t0 = now_s();
		if (metrics_write(m, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_metrics: %s\n", err);
			return 1;
		}
		write += now_s() - t0;
	}
	sample /= rounds * 5.0;
	write /= rounds / 2;
	render /= rounds / 2;
	if (stat(prom, &st) < 0)
		return 1;
	printf("%-52s %10s %10s\n", "per operation", "us", "ratio");
	printf("%-52s %10.1f %10.2f\n", "one sample of 8 mlx5 ports (751 counters each)", sample * 1e6, 1.0);
	printf("%-52s %10.1f %10.2f\n", "one metrics_write after 5 samples", write * 1e6, write / sample);
	printf("%-52s %10.1f %10.2f\n", "  of which fold + render (metrics_render)", render * 1e6,
	       render / sample);
	printf("at interval = 1s, metrics_interval = 5s: the metrics are %.1f %% of sampling plus\n"
	       "metrics, %.3f %% of one core\n", 100.0 * (write / 5.0) / (sample + write / 5.0),
	       100.0 * write / 5.0);
	printf("(%u writes of a %lld-byte file, %u renders; %u samples)\n", rounds / 2,
	       (long long)st.st_size, rounds / 2, rounds * 5);
	metrics_free(m);
	ports_free(ps);
	rules_free(r);
	conf_free(c);
	loop_free(l);
	unlink(prom);
	unlink(path);
	rmdir(dir);
	return 0;
}
