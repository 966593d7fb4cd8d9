/* sampler: one timer, every port sampled at the base rate. */
#include "daemon/sampler.h"
#include "daemon/ports.h"
#include "lib/loop.h"

#include <stdlib.h>

struct sampler {
	struct loop_timer *t;
	struct ports *ports;
	uint64_t interval_ns;
};

static void tick(struct loop_timer *t, void *arg)
{
	struct sampler *s = arg;

	(void)t;
	ports_sample(s->ports, loop_mono_ns(), loop_real_ns());
}

struct sampler *sampler_new(struct loop *l, struct ports *ps, uint64_t interval_ns)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ports = ps;
	s->interval_ns = interval_ns;
	s->t = loop_timer_new(l, tick, s);
	if (s->t)
		loop_timer_name(s->t, SAMPLER_WAKE);
	if (!s->t || loop_timer_set(s->t, 1000000, interval_ns) < 0) {
		sampler_free(s);
		return NULL;
	}
	return s;
}

int sampler_set_interval(struct sampler *s, uint64_t interval_ns)
{
	if (interval_ns == s->interval_ns)
		return 0;
	s->interval_ns = interval_ns;
	return loop_timer_set(s->t, interval_ns, interval_ns);
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	loop_timer_free(s->t);
	free(s);
}
