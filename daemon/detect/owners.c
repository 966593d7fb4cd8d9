/* owners: see owners.h. */
#include "daemon/detect/owners.h"

#include <stdlib.h>
#include <string.h>

struct owner {
	char port[32];
	int pid;
	unsigned n;             /* its flows of that port; 0: a free entry */
};

struct owners {
	struct owner *v;
	unsigned n, cap;        /* entries in use or freed (n), allocated */
	int unsure;
};

struct owners *owners_new(void)
{
	return calloc(1, sizeof(struct owners));
}

void owners_free(struct owners *ow)
{
	if (!ow)
		return;
	free(ow->v);
	free(ow);
}

void owners_clear(struct owners *ow)
{
	if (!ow)
		return;
	ow->n = 0;
	ow->unsure = 0;
}

static struct owner *find(struct owners *ow, const char *port, int pid)
{
	for (unsigned i = 0; i < ow->n; i++)
		if (ow->v[i].n && ow->v[i].pid == pid && !strcmp(ow->v[i].port, port))
			return &ow->v[i];
	return NULL;
}

void owners_add(struct owners *ow, const char *port, int pid)
{
	struct owner *o;

	if (!ow || !port || pid <= 0 || ow->unsure)
		return;
	o = find(ow, port, pid);
	if (o) {
		o->n++;
		return;
	}
	for (unsigned i = 0; i < ow->n && !o; i++)
		if (!ow->v[i].n)
			o = &ow->v[i];  /* a freed entry: kept in order of coming */
	if (!o) {
		if (ow->n == ow->cap) {
			unsigned nc = ow->cap ? ow->cap * 2 : 16;
			struct owner *nv;

			if (nc > OWNERS_MAX || !(nv = realloc(ow->v, nc * sizeof(*nv)))) {
				ow->unsure = 1;
				return;
			}
			ow->v = nv;
			ow->cap = nc;
		}
		o = &ow->v[ow->n++];
	}
	memset(o, 0, sizeof(*o));
	strncpy(o->port, port, sizeof(o->port) - 1);
	o->pid = pid;
	o->n = 1;
}

void owners_del(struct owners *ow, const char *port, int pid)
{
	struct owner *o;

	if (!ow || !port || pid <= 0 || ow->unsure)
		return;
	o = find(ow, port, pid);
	if (!o) {
		ow->unsure = 1;
		return;
	}
	o->n--;
	while (ow->n && !ow->v[ow->n - 1].n)
		ow->n--;
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
