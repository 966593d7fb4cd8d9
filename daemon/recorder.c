/* recorder: bounded ring of counter samples. */
#include "daemon/recorder.h"

#include <stdlib.h>
#include <string.h>

struct recorder {
	unsigned cap, nsrc;
	unsigned head;          /* next slot to write */
	unsigned count;
	struct rec_sample *ring;
};

struct recorder *rec_new(unsigned cap, unsigned nsrc)
{
	struct recorder *r;

	if (!cap || nsrc > REC_MAX_SRC)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->ring = calloc(cap, sizeof(*r->ring));
	if (!r->ring) {
		free(r);
		return NULL;
	}
	r->cap = cap;
	r->nsrc = nsrc;
	return r;
}

void rec_free(struct recorder *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->cap; i++)
		for (unsigned s = 0; s < REC_MAX_SRC; s++) {
			clayout_unref(r->ring[i].part[s].lay);
			free(r->ring[i].part[s].vals);
		}
	free(r->ring);
	free(r);
}

unsigned rec_capacity(const struct recorder *r)
{
	return r->cap;
}

unsigned rec_count(const struct recorder *r)
{
	return r->count;
}

size_t rec_bytes(const struct recorder *r)
{
	size_t b = sizeof(*r) + (size_t)r->cap * sizeof(*r->ring);

	for (unsigned i = 0; i < r->cap; i++)
		for (unsigned s = 0; s < r->nsrc; s++)
			b += (size_t)r->ring[i].part[s].cap * sizeof(uint64_t);
	return b;
}

int rec_push(struct recorder *r, uint64_t mono_ns, uint64_t real_ns,
	     struct clayout *const *lays, const uint64_t *const *vals)
{
	struct rec_sample *smp = &r->ring[r->head];

	for (unsigned s = 0; s < r->nsrc; s++) {
		struct rec_part *p = &smp->part[s];
		struct clayout *l = lays[s];

		if (l && l->n > p->cap) {
			uint64_t *nv = realloc(p->vals, l->n * sizeof(uint64_t));

			if (!nv)
				return -1;
			p->vals = nv;
			p->cap = l->n;
		}
	}
	for (unsigned s = 0; s < r->nsrc; s++) {
		struct rec_part *p = &smp->part[s];
		struct clayout *l = lays[s];

		if (p->lay != l) {
			clayout_unref(p->lay);
			p->lay = clayout_ref(l);
		}
		if (l && l->n)
			memcpy(p->vals, vals[s], l->n * sizeof(uint64_t));
	}
	smp->mono_ns = mono_ns;
	smp->real_ns = real_ns;
	r->head = (r->head + 1) % r->cap;
	if (r->count < r->cap)
		r->count++;
	return 0;
}

const struct rec_sample *rec_get(const struct recorder *r, unsigned i)
{
	if (i >= r->count)
		return NULL;
	return &r->ring[(r->head + r->cap - r->count + i) % r->cap];
}

const struct rec_sample *rec_latest(const struct recorder *r)
{
	return r->count ? rec_get(r, r->count - 1) : NULL;
}

unsigned rec_window(const struct recorder *r, uint64_t from_ns, uint64_t to_ns,
		    unsigned *first, unsigned *last)
{
	unsigned lo = 0, hi = r->count, f, l;

	/* samples are in time order: binary search the first >= from_ns */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (rec_get(r, mid)->mono_ns < from_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	f = lo;
	lo = f;
	hi = r->count;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (rec_get(r, mid)->mono_ns <= to_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f)
		return 0;
	l = lo - 1;
	*first = f;
	*last = l;
	return l - f + 1;
}

/* Value of counter name in part p (index hint idx when layouts match). */
static int part_value(const struct rec_part *p, const struct clayout *ref,
		      unsigned idx, const char *name, uint64_t *v)
{
	int j;

	if (!p->lay)
		return 0;
	if (p->lay == ref || clayout_equal(p->lay, ref)) {
		*v = p->vals[idx];
		return 1;
	}
	j = clayout_find(p->lay, name);
	if (j < 0)
		return 0;
	*v = p->vals[j];
	return 1;
}

unsigned rec_deltas(const struct recorder *r, unsigned src, unsigned first,
		    unsigned last, rec_delta_fn cb, void *arg)
{
	const struct rec_sample *ls = rec_get(r, last);
	const struct clayout *ref;
	unsigned n = 0;

	if (!ls || src >= r->nsrc || first > last || !ls->part[src].lay)
		return 0;
	ref = ls->part[src].lay;
	for (unsigned c = 0; c < ref->n; c++) {
		const char *name = ref->names[c];
		uint64_t sum = 0, prev = 0, cur;
		unsigned flags = 0, f;
		int have_prev = 0;

		for (unsigned i = first; i <= last; i++) {
			const struct rec_part *p = &rec_get(r, i)->part[src];

			if (!part_value(p, ref, c, name, &cur))
				continue;       /* a failed read: bridge the gap */
			if (have_prev) {
				sum += cnt_delta(prev, cur, ref->width[c], &f);
				flags |= f;
			}
			prev = cur;
			have_prev = 1;
		}
		cb(name, sum, flags, ls->part[src].vals[c], arg);
		n++;
	}
	return n;
}
