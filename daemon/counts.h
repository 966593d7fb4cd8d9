/* counts: what happened, told by a direct call where it happens, beside
 * the journal event (lib/log.h log_event) the same code writes: never
 * parsed back from the journal's words, so a renamed field cannot break
 * a count. One listener, the metrics (metrics.c registers an ops table);
 * none: the calls do nothing. A leaf: the code that acts includes this,
 * not the metrics, so no circle of calls runs through them.
 *
 * port: the port's name (NULL or "": counted for no port). */
#ifndef NICSTALL_COUNTS_H
#define NICSTALL_COUNTS_H

#include <stdint.h>

/* a reprogram: performed; refused (policy, or no crossing possible);
 * failed (a step went wrong) */
enum count_recov { COUNT_RECOV_PERFORMED, COUNT_RECOV_REFUSED, COUNT_RECOV_FAILED };

struct counts_ops {
	void (*incident_opened)(void *arg, const char *port, unsigned flows);
	void (*flow_stalled)(void *arg, const char *port);     /* joined an incident */
	void (*incident_suppressed)(void *arg, const char *port);
	void (*flow_released)(void *arg, const char *port, int closed);
	void (*reprogram)(void *arg, const char *port, enum count_recov outcome);
	void (*bundle)(void *arg, const char *port, int ok, uint64_t incident,
		       const char *verdict, const char *action);
	void (*hook_result)(void *arg, const char *outcome);
	void (*hook_dropped)(void *arg);
	void (*reload)(void *arg, int ok);
};

/* The listener (NULL: none). */
void counts_set(const struct counts_ops *ops, void *arg);
/* Is arg the listener? */
int counts_is(const void *arg);

void count_incident_opened(const char *port, unsigned flows);
void count_flow_stalled(const char *port);
void count_incident_suppressed(const char *port);
void count_flow_released(const char *port, int closed);        /* closed: it ended */
void count_reprogram(const char *port, enum count_recov outcome);
/* A bundle written (ok) or not. incident 0: of no incident of this host
 * (a manual bundle, a peer's snapshot), else its verdict and releasing
 * action (NULL: "unknown"). */
void count_bundle(const char *port, int ok, uint64_t incident, const char *verdict,
		  const char *action);
void count_hook_result(const char *outcome);    /* the completion hook ran */
void count_hook_dropped(void);                  /* a bundle that will not get it */
void count_reload(int ok);

#endif
