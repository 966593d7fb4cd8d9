/* counters: layouts and wrap/reset-safe deltas. */
#include "collectors/counters/counters.h"

#include <stdlib.h>
#include <string.h>

struct clayout *clayout_new(unsigned n, const char *const *names,
			    const uint8_t *width)
{
	struct clayout *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->refs = 1;
	l->n = n;
	l->names = calloc(n ? n : 1, sizeof(char *));
	l->width = calloc(n ? n : 1, 1);
	if (!l->names || !l->width)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		l->names[i] = strdup(names[i]);
		if (!l->names[i])
			goto fail;
		l->width[i] = width ? width[i] : CNT_W64;
	}
	return l;
fail:
	l->refs = 1;
	clayout_unref(l);
	return NULL;
}

struct clayout *clayout_ref(struct clayout *l)
{
	if (l)
		l->refs++;
	return l;
}

void clayout_unref(struct clayout *l)
{
	if (!l || --l->refs > 0)
		return;
	if (l->names)
		for (unsigned i = 0; i < l->n; i++)
			free(l->names[i]);
	free(l->names);
	free(l->width);
	free(l);
}

int clayout_equal(const struct clayout *a, const struct clayout *b)
{
	if (a == b)
		return 1;
	if (!a || !b || a->n != b->n)
		return 0;
	for (unsigned i = 0; i < a->n; i++)
		if (a->width[i] != b->width[i] || strcmp(a->names[i], b->names[i]))
			return 0;
	return 1;
}

int clayout_find(const struct clayout *l, const char *name)
{
	if (!l)
		return -1;
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return (int)i;
	return -1;
}

/* clayout_map: l's names hashed once (a table of 2n slots, FNV-1a), never
 * searched per counter: a source whose series come and go (an
 * application's metrics) changes its layout at every sample, and a search
 * per counter and sample made a window over 2,000 series quadratic in the
 * event loop (bench_window). */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int clayout_map(const struct clayout *l, const struct clayout *ref, int *map)
{
	unsigned nslot = 1;
	int *slot;

	if (l == ref || clayout_equal(l, ref)) {
		for (unsigned c = 0; c < ref->n; c++)
			map[c] = (int)c;
		return 0;
	}
	while (nslot < 2 * l->n + 2)
		nslot <<= 1;
	slot = malloc(nslot * sizeof(*slot));
	if (!slot)
		return -1;
	for (unsigned i = 0; i < nslot; i++)
		slot[i] = -1;
	for (unsigned i = 0; i < l->n; i++) {
		unsigned k = name_hash(l->names[i]) & (nslot - 1);

		while (slot[k] >= 0)
			k = (k + 1) & (nslot - 1);
		slot[k] = (int)i;
	}
	for (unsigned c = 0; c < ref->n; c++) {
		unsigned k = name_hash(ref->names[c]) & (nslot - 1);

		map[c] = -1;
		for (; slot[k] >= 0; k = (k + 1) & (nslot - 1))
			if (!strcmp(l->names[slot[k]], ref->names[c])) {
				map[c] = slot[k];
				break;
			}
	}
	free(slot);
	return 0;
}

int *clayout_map_new(const struct clayout *l, const struct clayout *ref)
{
	int *map = malloc((ref->n ? ref->n : 1) * sizeof(*map));

	if (map && clayout_map(l, ref, map) < 0) {
		free(map);
		return NULL;
	}
	return map;
}

/*
 * A 32-bit counter that goes down by more than half its range wrapped; one
 * that goes down by less was reset (driver reload, counter set change), and
 * so was a 64-bit counter that goes down at all. After a reset the counter
 * counted from zero, so the delta is its current value: a lower bound, never
 * a huge number. A 32-bit counter whose value no longer fits 32 bits is
 * really wider and is treated as 64-bit.
 */
uint64_t cnt_delta(uint64_t prev, uint64_t cur, uint8_t width, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (cur >= prev)
		return cur - prev;
	if (width == CNT_W32 && prev <= UINT32_MAX && prev - cur > (1ull << 31)) {
		if (flags)
			*flags = CNT_WRAPPED;
		return (1ull << 32) - prev + cur;
	}
	if (flags)
		*flags = CNT_RESET;
	return cur;
}
