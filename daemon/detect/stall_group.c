/* stall_group: incident groups (a port, or a peer pair) and the count of
 * an incident's siblings, the group's other connections that progressed
 * (stall_int.h). */
#include "daemon/detect/stall_int.h"
#include "daemon/conf.h"
#include "daemon/detect/incident.h"
#include "daemon/detect/liveness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct port_conf *stall_port_conf(const struct stall *s, const char *name)
{
	for (unsigned i = 0; i < s->c->nports; i++)
		if (!strcmp(s->c->ports[i].name, name))
			return &s->c->ports[i];
	return NULL;
}

/* The incident group of a port: the port, or the pair it belongs to. */
void stall_group_of(const struct stall *s, const char *port, char *buf, size_t len)
{
	const struct port_conf *pc = stall_port_conf(s, port);

	if (pc && pc->peer[0])
		snprintf(buf, len, "%s+%s", strcmp(port, pc->peer) < 0 ? port : pc->peer,
			 strcmp(port, pc->peer) < 0 ? pc->peer : port);
	else
		snprintf(buf, len, "%s", port);
}

/* A set of normalised connection keys (open addressing, keyed hash): the
 * sibling count needs "distinct connections" without text or sorting. */
struct kent {
	struct flow_key k;
	uint8_t used, stalled, progressed;
};

static struct kent *kset_slot(struct stall *s, const struct flow_key *k)
{
	size_t i = (size_t)siphash24(&s->kkey, k, sizeof(*k)) & (s->kcap - 1);

	while (s->kset[i].used && memcmp(&s->kset[i].k, k, sizeof(*k)))
		i = (i + 1) & (s->kcap - 1);
	return &s->kset[i];
}

/* The ports whose incident group is group (a port, or a peer pair). */
unsigned stall_group_ports(const struct stall *s, const char *group, const char *names[2])
{
	unsigned n = 0;
	char g[72];

	for (unsigned i = 0; i < s->c->nports && n < 2; i++) {
		stall_group_of(s, s->c->ports[i].name, g, sizeof(g));
		if (!strcmp(g, group))
			names[n++] = s->c->ports[i].name;
	}
	if (!n)
		names[n++] = group;     /* a port not configured ("-") */
	return n;
}

int stall_in_group(const struct sflow *f, const char *names[2], unsigned n)
{
	return !strcmp(f->port, names[0]) || (n > 1 && !strcmp(f->port, names[1]));
}

/* Distinct connections of the group that progressed since 'since' and
 * are not among the stalled ones. One pass over the flows, O(flows): it
 * runs once per incident and poll (incident_siblings_stale), never per
 * joining flow, so a mass stall costs linear time, not quadratic. */
unsigned stall_count_siblings(struct stall *s, const struct incident *inc, const char *group,
			       uint64_t since)
{
	const char *names[2];
	unsigned ng = stall_group_ports(s, group, names), n = 0;
	size_t need = 16;

	s->sibling_scans++;
	while (need < ((size_t)livetab_count(s->flows) + (inc ? incident_nflows(inc) : 0)) * 2)
		need *= 2;
	if (need > s->kcap) {
		struct kent *k = realloc(s->kset, need * sizeof(*k));

		if (!k)
			return 0;
		s->kset = k;
		s->kcap = need;
	}
	memset(s->kset, 0, s->kcap * sizeof(*s->kset));
	/* the incident's own connections are never its siblings, released
	 * or not: counted again when the incident ends, a stalled flow that
	 * moves again is no "other connection progressing" */
	for (unsigned i = 0; inc && i < incident_nflows(inc); i++) {
		const struct flow_key *k = incident_flow_norm(inc, i);
		struct kent *e = kset_slot(s, k);

		e->used = 1;
		e->k = *k;
		e->stalled = 1;
	}
	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f)) {
		struct flow_key k;
		struct kent *e;

		if (!stall_in_group(f, names, ng))
			continue;
		if (f->state != FLOW_STALLED && f->progress_ns < since)
			continue;
		flow_norm_key(&f->obs.key, &k);
		e = kset_slot(s, &k);
		if (!e->used) {
			e->used = 1;
			e->k = k;
		}
		if (f->state == FLOW_STALLED)
			e->stalled = 1;
		else
			e->progressed = 1;
	}
	for (size_t i = 0; i < s->kcap; i++)
		if (s->kset[i].used && s->kset[i].progressed && !s->kset[i].stalled)
			n++;
	return n;
}

/* Bring an incident's sibling count up to date if flows joined since. */
void stall_refresh_siblings(struct stall *s, struct incident *inc)
{
	uint64_t since;

	if (inc && incident_siblings_due(inc, &since))
		incident_set_siblings(inc, stall_count_siblings(s, inc, incident_group(inc), since));
}
