/* metrics: the daemon's numbers in the Prometheus text exposition format,
 * written atomically (a work file beside it, then rename(2)) to
 * metrics_file every metrics_interval, for node_exporter's textfile
 * collector. Off unless metrics_file is set. nicstalld(8) METRICS lists
 * every metric.
 *
 * Counts of what happened (incidents by verdict, recoveries by action and
 * outcome, suppressed stalls, bundles, hook runs, reloads) come from the
 * code that acts, by the calls of counts.h beside each journal event: a
 * metric and a journal search agree, and neither reads the other's
 * words.
 * Per port, the counters of the flight recorder since the previous write
 * go through the rules' signals (rules/00-signals.rules: gap, buffer_drops,
 * steer_misses, steer_discards, fabric_errors) into running totals, and
 * the gap's healthy rate is learned while the port has no stalled flow. */
#ifndef NICSTALL_METRICS_H
#define NICSTALL_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct loop;
struct peers;
struct ports;
struct rules;
struct stall;
struct metrics;

/* Listens to counts.h (the last made does). st may be NULL. */
struct metrics *metrics_new(struct loop *l, struct ports *ps, struct stall *st,
			    const struct conf *c);
void metrics_free(struct metrics *m);
/* A new configuration (metrics_file, metrics_interval, ports). */
void metrics_configure(struct metrics *m, const struct conf *c);
/* The rules whose signals are used (NULL: no signal metrics); borrowed
 * until the next call. */
void metrics_set_rules(struct metrics *m, const struct rules *r);
/* The peers whose counts are exported (nicstalld_peer_*; NULL: none, only
 * the families' HELP and TYPE); borrowed. */
void metrics_set_peers(struct metrics *m, const struct peers *p);
/* Benchmark runs (runs.h), borrowed; NULL: none. */
struct runs;
void metrics_set_runs(struct metrics *m, const struct runs *r);

/* Fold the recorders' samples since the last call into the totals and
 * render the exposition. Returns a malloc'd string (NULL: out of memory). */
char *metrics_render(struct metrics *m);
/* Render and write metrics_file now: 0, or -1 with err. */
int metrics_write(struct metrics *m, char *err, size_t errlen);
/* One line for STATUS=: ports up, flows, incidents, the last verdict. */
void metrics_summary(struct metrics *m, char *buf, size_t len);

#endif
