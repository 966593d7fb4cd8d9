/* nsengine_lathist.h: round-trip times kept in a fixed histogram (25 ns buckets up
 * to 200 us, 10 us buckets up to 20 ms, one bucket above) and read back as
 * percentiles, so a tail that moves past 200 us still moves the figure, for the test
 * engines' --latency (nsengine, tests/engine/vmaengine.c) and the bench's
 * perturbation pairs. Header only, libc only. */
#ifndef NSENGINE_LATHIST_H
#define NSENGINE_LATHIST_H

#include <stdint.h>
#include <stdio.h>

#define LH_BUCKET_NS 25u
#define LH_BUCKETS 8000u        /* fine ones: 200 us */
#define LH_COARSE_NS 10000u
#define LH_COARSE 1980u         /* coarse ones: 200 us to 20 ms */
#define LH_ALL (LH_BUCKETS + LH_COARSE)  /* the bucket of 20 ms and longer */
#define LH_MAX_US ((LH_BUCKETS * LH_BUCKET_NS + LH_COARSE * LH_COARSE_NS) / 1000.0)

struct lathist {
	uint32_t b[LH_ALL + 1];
	uint64_t n;
};

static inline void lh_add(struct lathist *h, uint64_t ns)
{
	uint64_t i = ns / LH_BUCKET_NS;

	if (i >= LH_BUCKETS) {
		i = LH_BUCKETS + (ns - (uint64_t)LH_BUCKETS * LH_BUCKET_NS) / LH_COARSE_NS;
		if (i > LH_ALL)
			i = LH_ALL;
	}
	h->b[i]++;
	h->n++;
}

/* The middle of bucket i in microseconds (the last: its lower edge). */
static inline double lh_mid_us(unsigned i)
{
	if (i < LH_BUCKETS)
		return (i * LH_BUCKET_NS + LH_BUCKET_NS / 2) / 1000.0;
	if (i < LH_ALL)
		return (LH_BUCKETS * LH_BUCKET_NS + (i - LH_BUCKETS) * LH_COARSE_NS +
			LH_COARSE_NS / 2) / 1000.0;
	return LH_MAX_US;
}

/* The p-th percentile (0 < p <= 100) in microseconds, the middle of its
 * bucket (20 ms and more: 20,000); 0 with no sample. */
static inline double lh_pct_us(const struct lathist *h, double p)
{
	uint64_t want = (uint64_t)((double)h->n * p / 100.0 + 0.999999), seen = 0;

	if (!h->n)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i <= LH_ALL; i++) {
		seen += h->b[i];
		if (seen >= want)
			return lh_mid_us(i);
	}
	return LH_MAX_US;
}

/* "latency_us p50 A p99 B p999 C samples N" on f. */
static inline void lh_print(const struct lathist *h, FILE *f)
{
	fprintf(f, "latency_us p50 %.3f p99 %.3f p999 %.3f samples %llu\n", lh_pct_us(h, 50),
		lh_pct_us(h, 99), lh_pct_us(h, 99.9), (unsigned long long)h->n);
}

#endif
