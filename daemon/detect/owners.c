/* owners: see owners.h. Entries in the order they came, found by a hash of
 * (port, pid) with linear probing; an entry whose flows all went stays (a
 * count of 0) until the table is cleared, so the hash never deletes. */
#include "daemon/detect/owners.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OWNERS_HASH (2 * OWNERS_MAX)    /* a power of two, half full at most */

struct owner {
	char port[32];
	int pid;
	unsigned n;             /* its flows of that port */
};

struct owners {
	struct owner v[OWNERS_MAX];
	unsigned n;
	uint32_t h[OWNERS_HASH];        /* index in v + 1, 0 empty */
	int unsure;
};

struct owners *owners_new(void)
{
	return calloc(1, sizeof(struct owners));
}

void owners_free(struct owners *ow)
{
	free(ow);
}

void owners_clear(struct owners *ow)
{
	if (!ow)
		return;
	ow->n = 0;
	memset(ow->h, 0, sizeof(ow->h));
	ow->unsure = 0;
}

static uint32_t hash(const char *port, int pid)
{
	uint32_t h = 2166136261u;       /* FNV-1a */

	for (const char *c = port; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	for (int i = 0; i < 4; i++)
		h = (h ^ (uint8_t)((unsigned)pid >> (8 * i))) * 16777619u;
	return h;
}

/* The hash slot of (port, pid): its entry's, or the empty one it would take. */
static uint32_t *slot(struct owners *ow, const char *port, int pid)
{
	uint32_t i = hash(port, pid) & (OWNERS_HASH - 1);

	for (;;) {
		const struct owner *o;

		if (!ow->h[i])
			return &ow->h[i];
		o = &ow->v[ow->h[i] - 1];
		if (o->pid == pid && !strcmp(o->port, port))
			return &ow->h[i];
		i = (i + 1) & (OWNERS_HASH - 1);
	}
}

void owners_add(struct owners *ow, const char *port, int pid)
{
	uint32_t *h;
	struct owner *o;

	if (!ow || !port || pid <= 0 || ow->unsure)
		return;
	h = slot(ow, port, pid);
	if (*h) {
		ow->v[*h - 1].n++;
		return;
	}
	if (ow->n == OWNERS_MAX || strlen(port) >= sizeof(o->port)) {
		ow->unsure = 1;
		return;
	}
	o = &ow->v[ow->n++];
	memset(o, 0, sizeof(*o));
	memcpy(o->port, port, strlen(port));
	o->pid = pid;
	o->n = 1;
	*h = ow->n;
}

void owners_del(struct owners *ow, const char *port, int pid)
{
	uint32_t *h;

	if (!ow || !port || pid <= 0 || ow->unsure)
		return;
	h = slot(ow, port, pid);
	if (!*h || !ow->v[*h - 1].n) {
		ow->unsure = 1;         /* taken away, never added */
		return;
	}
	ow->v[*h - 1].n--;
}

int owners_unsure(const struct owners *ow)
{
	return !ow || ow->unsure;
}

unsigned owners_of(const struct owners *ow, const char *port, int *pids, unsigned max)
{
	unsigned k = 0;

	if (!ow || !port || !pids)
		return 0;
	for (unsigned i = 0; i < ow->n && k < max; i++)
		if (ow->v[i].n && !strcmp(ow->v[i].port, port))
			pids[k++] = ow->v[i].pid;
	return k;
}
