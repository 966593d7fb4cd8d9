/* bench_window: what a window's deltas (daemon/recorder.c rec_deltas: the
 * counters --window, an investigation's and a run's deltas) cost over a
 * source whose series come and go, as an application's metrics do: SAMPLES
 * samples of NSERIES series, a tenth of them replaced at every sample (a new
 * layout each time). Timed on the thread's CPU clock side by side with the
 * definition it replaces, a search by name for every counter and sample
 * (quadratic in the series), and with the same window over one layout.
 *
 *   bench_window [ROUNDS [NSERIES [SAMPLES]]]   default 20, 2000, 60 */
#include "collectors/counters/counters.h"
#include "daemon/recorder.h"
#include "lib/cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t sink;

static void cb(const char *name, uint64_t d, unsigned f, uint64_t last, void *arg)
{
	(void)name;
	(void)f;
	(void)arg;
	sink += d + last;
}

/* The definition, as rec_deltas read it before: each counter of the last
 * layout found by name in every sample. */
static void by_search(const struct recorder *r, unsigned first, unsigned last)
{
	const struct clayout *ref = rec_get(r, last)->part[0].lay;

	for (unsigned c = 0; c < ref->n; c++) {
		uint64_t sum = 0, prev = 0;
		int have = 0;

		for (unsigned i = first; i <= last; i++) {
			const struct rec_part *p = &rec_get(r, i)->part[0];
			int j = p->lay == ref ? (int)c : clayout_find(p->lay, ref->names[c]);

			if (j < 0)
				continue;
			if (have)
				sum += cnt_delta(prev, p->vals[j], ref->width[c], NULL);
			prev = p->vals[j];
			have = 1;
		}
		cb(ref->names[c], sum, 0, 0, NULL);
	}
}

static struct recorder *make(unsigned nseries, unsigned samples, int churn)
{
	struct recorder *r = rec_new(samples, 1);
	char **names = calloc(nseries * 2, sizeof(*names));
	uint64_t *v = calloc(nseries, sizeof(*v));
	const char **nm = calloc(nseries, sizeof(*nm));
	struct clayout *steady = NULL;

	if (!r || !names || !v || !nm)
		exit(1);
	for (unsigned i = 0; i < nseries * 2; i++) {
		names[i] = malloc(64);
		snprintf(names[i], 64, "app.bench_ops_total{op=\"op%u\",shard=\"%u\"}", i, i % 8);
	}
	for (unsigned t = 0; t < samples; t++) {
		struct clayout *lay;
		const uint64_t *vals[1] = { v };
		struct clayout *lays[1];
		/* a tenth of the series replaced at each sample */
		unsigned off = churn ? (t * nseries / 10) % nseries : 0;

		for (unsigned k = 0; k < nseries; k++) {
			nm[k] = names[(k + off) % (nseries * 2)];
			v[k] = (uint64_t)t * 100 + k;
		}
		if (!churn && steady)
			lay = clayout_ref(steady);
		else
			lay = clayout_new(nseries, nm, NULL);
		if (!lay)
			exit(1);
		if (!churn && !steady)
			steady = clayout_ref(lay);
		lays[0] = lay;
		if (rec_push(r, 1000000ull * (t + 1), 1000000ull * (t + 1), lays, vals) < 0)
			exit(1);
		clayout_unref(lay);
	}
	clayout_unref(steady);
	for (unsigned i = 0; i < nseries * 2; i++)
		free(names[i]);
	free(names);
	free(v);
	free(nm);
	return r;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
	unsigned nseries = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned samples = argc > 3 ? (unsigned)atoi(argv[3]) : 60;
	struct recorder *churn, *steady;
	uint64_t c0, c1, c2;

	if (!rounds || nseries < 10 || samples < 2) {
		fprintf(stderr, "usage: bench_window [ROUNDS [NSERIES>=10 [SAMPLES>=2]]]\n");
		return 2;
	}
	churn = make(nseries, samples, 1);
	steady = make(nseries, samples, 0);
	/* alternated, so that a slower moment of the machine falls on both */
	c0 = c1 = c2 = 0;
	for (unsigned k = 0; k < rounds; k++) {
		uint64_t t0 = cost_cpu_ns();

		rec_deltas(churn, 0, 0, samples - 1, cb, NULL);
		uint64_t t1 = cost_cpu_ns();

		by_search(churn, 0, samples - 1);
		uint64_t t2 = cost_cpu_ns();

		rec_deltas(steady, 0, 0, samples - 1, cb, NULL);
		uint64_t t3 = cost_cpu_ns();

		c0 += t1 - t0;
		c1 += t2 - t1;
		c2 += t3 - t2;
	}
	printf("window: %u samples of %u series, a tenth replaced a sample\n", samples, nseries);
	printf("deltas, churning series: %.1f us CPU\n", (double)c0 / 1e3 / rounds);
	printf("by search, churning series: %.1f us CPU\n", (double)c1 / 1e3 / rounds);
	printf("deltas, one layout: %.1f us CPU\n", (double)c2 / 1e3 / rounds);
	rec_free(churn);
	rec_free(steady);
	return sink == 42 ? 3 : 0;
}
