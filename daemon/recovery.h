/* recovery: the daemon's policy for the receive-filter reprogram: only on
 * ports whose configuration allows it (recover = reprogram), only while the
 * link is up, never two at once, at most once per reprogram_interval per
 * port, whoever asks (the forensic sequence or `nicstallctl recover`). */
#ifndef NICSTALL_RECOVERY_H
#define NICSTALL_RECOVERY_H

struct conf;
struct port;
struct recovery;
struct json_object;

#include <stddef.h>

/* How an interface is reprogrammed (reprogram_toggle, or a fake in tests). */
typedef int (*recovery_toggle_fn)(int nsfd, const char *ifname, struct json_object *o,
				  char *err, size_t errlen);

struct recovery *recovery_new(const struct conf *c, recovery_toggle_fn toggle);
void recovery_free(struct recovery *r);
void recovery_configure(struct recovery *r, const struct conf *c);
/* Reprogram p now when the policy allows; o gets the record (port, manual,
 * sequence, times, restored, or error). 0 done, -1 refused (logged). */
int recovery_reprogram(struct recovery *r, struct port *p, struct json_object *o, int manual);

#endif
