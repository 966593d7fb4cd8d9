/* metrics_ports: each port's totals for the metrics: the verdicts and
 * releases tallied, the signals folded from its recorder (the gap, buffer
 * drops, steering, fabric errors) and the healthy gap rate (metrics_int.h). */
#include "daemon/metrics_int.h"
#include "daemon/conf.h"
#include "daemon/forensic/facts.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/runs.h"
#include "daemon/detect/stall.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const metrics_sig_name[NSIG] = { "gap", "buffer_drops", "steer_misses",
					    "steer_discards", "fabric_errors" };

void metrics_tally_add(struct tallies *ts, const char *name)
{
	if (!name || !*name)
		name = "unknown";
	for (unsigned i = 0; i < ts->n; i++)
		if (!strcmp(ts->t[i].name, name)) {
			ts->t[i].n++;
			return;
		}
	/* a bounded set of series: local rules may name many verdicts */
	if (ts->n == MAX_LABELS - 1)
		name = "other";
	if (ts->n < MAX_LABELS) {
		util_strlcpy(ts->t[ts->n].name, name, sizeof(ts->t[0].name));
		ts->t[ts->n++].n = 1;
	} else {
		ts->t[MAX_LABELS - 1].n++;
	}
}

struct mport *metrics_port(struct metrics *m, const char *name)
{
	struct mport *n;

	if (!name || !*name)
		return NULL;
	for (unsigned i = 0; i < m->nmp; i++)
		if (!strcmp(m->mp[i].name, name))
			return &m->mp[i];
	if (m->nmp >= 256)
		return NULL;
	n = realloc(m->mp, (m->nmp + 1) * sizeof(*n));
	if (!n)
		return NULL;
	m->mp = n;
	memset(&m->mp[m->nmp], 0, sizeof(m->mp[0]));
	util_strlcpy(m->mp[m->nmp].name, name, sizeof(m->mp[0].name));
	return &m->mp[m->nmp++];
}

void metrics_fold_port(struct metrics *m, struct mport *e, const struct port *p)
{
	const struct recorder *rec = port_recorder(p);
	const struct rec_sample *last = rec_latest(rec);
	struct json_object *counters;
	unsigned f, l, n, fl[3] = { 0, 0, 0 };
	const char *profile;
	double span;

	if (e->serial != port_serial(p)) {      /* a new port object: its counts restart */
		e->cost_base_ns += e->cost_ns;
		e->samples_base += e->samples;
		e->cost_ns = e->samples = 0;
		e->serial = port_serial(p);
		e->last_mono = 0;
	}
	e->cost_ns = port_sample_cost_total_ns(p);
	e->samples = port_samples(p);
	if (!last || last->mono_ns <= e->last_mono)
		return;
	n = rec_window(rec, e->last_mono, last->mono_ns, &f, &l);
	if (n < 2) {
		e->last_mono = last->mono_ns;
		return;
	}
	span = (double)(rec_get(rec, l)->mono_ns - rec_get(rec, f)->mono_ns) / 1e9;
	e->last_mono = rec_get(rec, l)->mono_ns;
	if (!m->rules)
		return;
	counters = facts_window_deltas(p, f, l);
	profile = conf_profile_name(port_profile(p));
	if (m->stall)
		stall_flow_counts(m->stall, e->name, fl);
	for (int k = 0; k < NSIG; k++) {
		double v;

		if (rules_signal(m->rules, profile, metrics_sig_name[k], counters, &v) < 0 || !isfinite(v))
			continue;
		e->known[k] = 1;
		e->cum[k] += v;
		if (e->cum[k] > (double)e->out[k])
			e->out[k] = (uint64_t)e->cum[k];
		if (k == SIG_GAP && span > 0 && !fl[2] && !e->incident_since_fold) {
			double rate = v / span, a = 1.0 - exp(-span / HEALTHY_TAU_S);

			e->healthy_rate = e->healthy_known ? e->healthy_rate + a * (rate - e->healthy_rate)
							   : rate;
			e->healthy_known = 1;
		}
	}
	e->incident_since_fold = 0;
	json_object_put(counters);
}
