/* recovery: the daemon's policy for the receive-filter reprogram
 * (probes/reprogram.h): only on ports whose configuration allows it
 * (recover = reprogram), only while the link is up, never two at once (the
 * reprogram holds its state for reprogram_hold on a timer: "never two at
 * once" spans that hold), at most once per reprogram_interval per port,
 * whoever asks (the forensic sequence or `nicstallctl recover`). */
#ifndef NICSTALL_RECOVERY_H
#define NICSTALL_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "probes/reprogram.h"

struct conf;
struct loop;
struct port;
struct recovery;
struct json_object;

/* How an interface is reprogrammed (probes/reprogram.h, or fakes in tests). */
struct reprogram_ops {
	struct reprogram *(*start)(struct loop *l, int nsfd, const char *ns_name,
				   const char *ifname, const char *bus, uint64_t hold_ns,
				   reprogram_done_fn done, void *arg, char *err, size_t errlen);
	const struct reprogram_result *(*result)(const struct reprogram *r);
	int (*to_json)(const struct reprogram *r, struct json_object *o);
	void (*free)(struct reprogram *r);
};

/* o: the record the reprogram filled (port, manual, performed, sequence,
 * promiscuity, times, kernel_log, refused and holders, or error);
 * performed: a driver-level transition each way was made. */
typedef void (*recovery_done_fn)(struct json_object *o, int performed, void *arg);

struct recovery *recovery_new(struct loop *l, const struct conf *c,
			      const struct reprogram_ops *ops);
/* Cancels a reprogram in its hold (the flag goes back at once). */
void recovery_free(struct recovery *r);
void recovery_configure(struct recovery *r, const struct conf *c);
/* Start a reprogram of p when the policy allows: 0, and done runs later
 * from the loop (it owns o); or -1 when refused now (o has "error", logged;
 * done is not called; o is the caller's). */
int recovery_start(struct recovery *r, struct port *p, int manual, struct json_object *o,
		   recovery_done_fn done, void *arg);
/* Forget a pending done callback (its caller went away); the reprogram
 * still completes and restores the flag. */
void recovery_cancel(struct recovery *r, void *arg);

#endif
