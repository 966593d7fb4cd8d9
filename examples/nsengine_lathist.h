/* nsengine_lathist.h: round-trip times kept in a fixed histogram (25 ns buckets up
 * to 200 us, one bucket above) and read back as percentiles, for the test
 * engines' --latency (nsengine, tests/engine/vmaengine.c) and the bench's
 * perturbation pairs. Header only, libc only. */
#ifndef NSENGINE_LATHIST_H
#define NSENGINE_LATHIST_H

#include <stdint.h>
#include <stdio.h>

#define LH_BUCKET_NS 25u
#define LH_BUCKETS 8000u        /* 200 us; longer ones in the last bucket */

struct lathist {
	uint32_t b[LH_BUCKETS + 1];
	uint64_t n;
};

static inline void lh_add(struct lathist *h, uint64_t ns)
{
	uint64_t i = ns / LH_BUCKET_NS;

	h->b[i < LH_BUCKETS ? i : LH_BUCKETS]++;
	h->n++;
}

/* The p-th percentile (0 < p <= 100) in microseconds, the middle of its
 * bucket (200 us and more: 200); 0 with no sample. */
static inline double lh_pct_us(const struct lathist *h, double p)
{
	uint64_t want = (uint64_t)((double)h->n * p / 100.0 + 0.999999), seen = 0;

	if (!h->n)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i <= LH_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want)
			return i == LH_BUCKETS ? LH_BUCKETS * LH_BUCKET_NS / 1000.0 :
			       (i * LH_BUCKET_NS + LH_BUCKET_NS / 2) / 1000.0;
	}
	return LH_BUCKETS * LH_BUCKET_NS / 1000.0;
}

/* "latency_us p50 A p99 B p999 C samples N" on f. */
static inline void lh_print(const struct lathist *h, FILE *f)
{
	fprintf(f, "latency_us p50 %.3f p99 %.3f p999 %.3f samples %llu\n", lh_pct_us(h, 50),
		lh_pct_us(h, 99), lh_pct_us(h, 99.9), (unsigned long long)h->n);
}

#endif
