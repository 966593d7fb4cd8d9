/* metrics_int.h: the metrics' state, shared by metrics.c (the counts'
 * listeners, the file, its timer), metrics_ports.c (each port's totals,
 * folded from its recorder through the signals) and metrics_render.c (the
 * text exposition), private to them. The calls go one way: metrics.c
 * calls the other two, metrics_render.c calls metrics_ports.c. */
#ifndef NICSTALL_METRICS_INT_H
#define NICSTALL_METRICS_INT_H

#include "daemon/metrics.h"

#include <limits.h>
#include <stdint.h>

struct port;

#define MAX_LABELS 32                   /* distinct verdicts, actions... per port */
#define HEALTHY_TAU_S 60.0              /* the healthy rate's time constant */

struct tally {
	char name[48];
	uint64_t n;
};

struct tallies {
	struct tally t[MAX_LABELS];
	unsigned n;
};

/* Signals folded into per-port totals (rules/00-signals.rules). */
enum { SIG_GAP, SIG_BUFFER, SIG_STEER_MISS, SIG_STEER_DISCARD, SIG_FABRIC, NSIG };
extern const char *const metrics_sig_name[NSIG];

struct mport {
	char name[32];
	unsigned long serial;
	uint64_t last_mono;             /* the recorder sample folded last */
	double cum[NSIG];               /* signed running sums (a read may skew) */
	uint64_t out[NSIG];             /* what was exported: never decreases */
	int known[NSIG];
	double healthy_rate;
	int healthy_known, incident_since_fold;
	uint64_t cost_base_ns, cost_ns, samples_base, samples;
	uint64_t opened, suppressed, flow_stalls, released, closed;
	uint64_t recov_performed, recov_refused, recov_failed;
	struct tallies verdicts, releases;
	uint64_t last_incident_real_ns;
};

struct metrics {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	const struct conf *c;
	const struct rules *rules;
	const struct peers *peers;
	const struct runs *runs;
	struct loop_timer *timer;
	uint64_t interval_ns;
	char path[PATH_MAX];
	struct mport *mp;
	unsigned nmp;
	uint64_t start_real_ns;
	uint64_t reload_ok, reload_failed, bundles_written, bundles_failed, hook_dropped;
	struct tallies hooks;
	uint64_t incidents;
	char last_verdict[48], last_verdict_port[32];
	char last_err[300];
};

/* metrics_ports.c */
/* One more of name in ts (a bounded set: "other" past MAX_LABELS). */
void metrics_tally_add(struct tallies *ts, const char *name);
/* Port name's totals, made when new (NULL: no name, or 256 ports). */
struct mport *metrics_port(struct metrics *m, const char *name);
/* Fold port p's recorder since the last fold into e's totals. */
void metrics_fold_port(struct metrics *m, struct mport *e, const struct port *p);

#endif
