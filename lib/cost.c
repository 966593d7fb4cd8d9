/* cost: CPU time accounting per unit of work. See cost.h. */
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

uint64_t cost_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cost_round_start(struct cost_round *r)
{
	r->cpu0 = cost_cpu_ns();
	r->mono0 = r->lap = loop_mono_ns();
	r->cpu = r->wall = r->xcpu = r->xwall = 0;
}

uint64_t cost_round_lap(struct cost_round *r)
{
	uint64_t t = loop_mono_ns(), d = t - r->lap;

	r->lap = t;
	return d;
}

void cost_round_exact_start(struct cost_round *r)
{
	cost_round_lap(r);
	r->xcpu0 = cost_cpu_ns();
}

uint64_t cost_round_exact_stop(struct cost_round *r)
{
	uint64_t c = cost_cpu_ns(), d = c > r->xcpu0 ? c - r->xcpu0 : 0;

	r->xcpu += d;
	r->xwall += cost_round_lap(r);
	return d;
}

void cost_round_stop(struct cost_round *r)
{
	uint64_t c = cost_cpu_ns(), wall = r->lap - r->mono0, cpu = c > r->cpu0 ? c - r->cpu0 : 0;

	r->cpu1 = c;
	/* the units' time up to the last lap, the exact units' taken out */
	r->wall = wall > r->xwall ? wall - r->xwall : 0;
	r->cpu = cpu > r->xcpu ? cpu - r->xcpu : 0;
}

uint64_t cost_round_share(const struct cost_round *r, uint64_t wall_ns)
{
	/* CPU time never runs faster than the wall clock: a round whose CPU
	 * reads more (the stop's own system call, the clocks' different
	 * ticks) charges each unit its wall time */
	if (!r->wall || r->cpu >= r->wall)
		return wall_ns;
	return (uint64_t)((unsigned __int128)wall_ns * r->cpu / r->wall);
}

uint64_t cost_rss_kib(void)
{
	unsigned long long size = 0, res = 0;
	char buf[128];
	long page = sysconf(_SC_PAGESIZE);

	if (util_read_buf("/proc/self/statm", buf, sizeof(buf)) <= 0 || page <= 0)
		return 0;
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)page / 1024;
}

/* Close every window that ended by mono_ns. A gap longer than a window
 * (no calls) leaves a window with the CPU time it saw over its real
 * length, so an idle stretch shows as a low share, not as the old one. */
static void roll(struct cost *c, uint64_t mono_ns)
{
	if (mono_ns < c->win_mono + COST_WINDOW_NS)
		return;
	c->prev_cpu = c->cpu_ns - c->win_cpu;
	c->prev_wall = mono_ns - c->win_mono;
	c->win_mono = mono_ns;
	c->win_cpu = c->cpu_ns;
}

void cost_add(struct cost *c, uint64_t cpu_ns, uint64_t mono_ns)
{
	if (!c->calls && !c->first_mono) {
		c->first_mono = mono_ns;
		c->win_mono = mono_ns;
	}
	roll(c, mono_ns);
	c->cpu_ns += cpu_ns;
	c->calls++;
	c->last_ns = cpu_ns;
	if (cpu_ns > c->max_ns)
		c->max_ns = cpu_ns;
}

double cost_pct(const struct cost *c, uint64_t mono_ns)
{
	uint64_t wall, cpu;

	if (!c->calls)
		return 0;
	if (mono_ns >= c->win_mono + COST_WINDOW_NS) {
		/* the running window is complete but nothing rolled it yet */
		cpu = c->cpu_ns - c->win_cpu;
		wall = mono_ns - c->win_mono;
	} else if (c->prev_wall) {
		cpu = c->prev_cpu;
		wall = c->prev_wall;
	} else {
		cpu = c->cpu_ns;
		wall = mono_ns > c->first_mono ? mono_ns - c->first_mono : 0;
	}
	return wall ? 100.0 * (double)cpu / (double)wall : 0;
}

void cost_json(const struct cost *c, uint64_t mono_ns, struct json_object *out)
{
	json_object_object_add(out, "cpu_pct", jx_new_fixed(cost_pct(c, mono_ns), 4));
	json_object_object_add(out, "cpu_ms", jx_new_fixed((double)c->cpu_ns / 1e6, 3));
	jx_add_u64(out, "calls", c->calls);
	json_object_object_add(out, "per_call_us",
			       jx_new_fixed(c->calls ? (double)c->cpu_ns / 1e3 / (double)c->calls : 0, 2));
	json_object_object_add(out, "max_us", jx_new_fixed((double)c->max_ns / 1e3, 2));
}
