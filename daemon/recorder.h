/* recorder: per-port flight recorder, a bounded ring of timestamped samples
 * of every counter source of the port. */
#ifndef NICSTALL_RECORDER_H
#define NICSTALL_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

#define REC_MAX_SRC 7

struct rec_part {
	struct clayout *lay;    /* NULL when the source failed this sample */
	uint64_t *vals;
	unsigned cap;           /* allocated values */
};

struct rec_sample {
	uint64_t mono_ns, real_ns;
	struct rec_part part[REC_MAX_SRC];
};

struct recorder;

/* A ring of cap samples for nsrc sources. */
struct recorder *rec_new(unsigned cap, unsigned nsrc);
void rec_free(struct recorder *r);
unsigned rec_capacity(const struct recorder *r);
unsigned rec_count(const struct recorder *r);
size_t rec_bytes(const struct recorder *r);     /* memory held */

/* Append a sample; lays[i] NULL means source i failed (or is absent). The
 * values are copied; layouts are referenced. Returns -1 on ENOMEM (the
 * sample is dropped, older ones kept). */
int rec_push(struct recorder *r, uint64_t mono_ns, uint64_t real_ns,
	     struct clayout *const *lays, const uint64_t *const *vals);

/* i = 0 is the oldest sample; NULL when out of range. */
const struct rec_sample *rec_get(const struct recorder *r, unsigned i);
const struct rec_sample *rec_latest(const struct recorder *r);

/* Samples with from_ns <= mono_ns <= to_ns: indexes [*first, *last].
 * Returns the number of samples (0: none). */
unsigned rec_window(const struct recorder *r, uint64_t from_ns, uint64_t to_ns,
		    unsigned *first, unsigned *last);

/* Per-counter deltas of source src over samples [first, last], summed pair
 * by pair so wraps and resets inside the window are handled; counters that
 * appear only in some samples (or a failed read) are bridged: the delta
 * runs from the previous sample that had them.
 * cb gets the name, the delta, CNT_WRAPPED|CNT_RESET flags seen, and the
 * last value. Returns the number of counters reported. */
typedef void (*rec_delta_fn)(const char *name, uint64_t delta, unsigned flags,
			     uint64_t last, void *arg);
unsigned rec_deltas(const struct recorder *r, unsigned src, unsigned first,
		    unsigned last, rec_delta_fn cb, void *arg);

#endif
