/* ports: the port registry. */
#include "daemon/ports.h"
#include "collectors/counters/src_shared.h"
#include "daemon/conf.h"
#include "daemon/port.h"
#include "daemon/recorder.h"
#include "lib/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ports {
	struct loop *loop;
	const char *sysfs_root;
	struct port **p;
	unsigned n;
};

struct ports *ports_new(struct loop *l, const char *sysfs_root)
{
	struct ports *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->loop = l;
	ps->sysfs_root = sysfs_root;
	return ps;
}

void ports_free(struct ports *ps)
{
	if (!ps)
		return;
	for (unsigned i = 0; i < ps->n; i++)
		port_free(ps->p[i]);
	free(ps->p);
	free(ps);
}

unsigned ports_rec_capacity(const struct conf *c)
{
	uint64_t n = c->horizon_ns / c->interval_ns + 1;

	return n > 1000000 ? 1000000 : (unsigned)n;
}

static int same_port_conf(const struct port_conf *a, const struct port_conf *b)
{
	struct port_conf x = *a, y = *b;

	x.line = y.line = 0;
	return !memcmp(&x, &y, sizeof(x));
}

void ports_apply(struct ports *ps, const struct conf *c, int keep_history)
{
	struct port **np = calloc(c->nports ? c->nports : 1, sizeof(*np));
	unsigned cap = ports_rec_capacity(c), n = 0;

	if (!np) {
		log_errx("out of memory applying the port list: keeping the old one");
		return;
	}
	for (unsigned i = 0; i < c->nports; i++) {
		struct port *p = NULL;

		for (unsigned j = 0; keep_history && !p && j < ps->n; j++)
			if (ps->p[j] && same_port_conf(port_conf(ps->p[j]), &c->ports[i])) {
				p = ps->p[j];
				ps->p[j] = NULL;
			}
		if (!p)
			p = port_new(&c->ports[i], ps->sysfs_root, cap, ps->loop);
		if (!p) {
			log_errx("port %s: out of memory, not watched", c->ports[i].name);
		} else {
			port_set_host(p, &c->host);
			np[n++] = p;
		}
	}
	for (unsigned j = 0; j < ps->n; j++)
		if (ps->p[j]) {
			log_info("port %s: removed by reload", port_name(ps->p[j]));
			port_free(ps->p[j]);
		}
	free(ps->p);
	ps->p = np;
	ps->n = n;
}

unsigned ports_count(const struct ports *ps)
{
	return ps ? ps->n : 0;
}

struct port *ports_at(const struct ports *ps, unsigned i)
{
	return ps && i < ps->n ? ps->p[i] : NULL;
}

struct port *ports_find(const struct ports *ps, const char *name)
{
	for (unsigned i = 0; name && ps && i < ps->n; i++)
		if (!strcmp(port_name(ps->p[i]), name))
			return ps->p[i];
	return NULL;
}

const char *ports_names(const struct ports *ps, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	for (unsigned i = 0; i < ports_count(ps) && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
					port_name(ps->p[i]));
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

uint64_t ports_rec_bytes(const struct ports *ps)
{
	uint64_t b = 0;

	for (unsigned i = 0; i < ports_count(ps); i++)
		b += rec_bytes(port_recorder(ps->p[i]));
	return b;
}

void ports_sample(struct ports *ps, uint64_t mono_ns, uint64_t real_ns)
{
	/* the sources the ports share are read once in this sweep */
	src_shared_tick(mono_ns ? mono_ns : 1);
	for (unsigned i = 0; i < ports_count(ps); i++)
		port_sample(ps->p[i], mono_ns, real_ns, 1);
	src_shared_tick(0);
}
