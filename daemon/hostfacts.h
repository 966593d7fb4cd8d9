/* hostfacts: this host's resources over an incident's stall and
 * observation window (the "host" source's counters in a port's facts) as
 * the figures the producer-stall verdicts name: pressure shares, the
 * busiest disk with its identity, reads/s and await, the producer that
 * waited most with its block I/O, run-queue and throttled delays
 * (rules/facts.h FK_HOST_NUMS, FK_HOST_STRS, nicstall.rules(5)). The same
 * figures travel in a peer's summary ("resources"), read back as hostile
 * input. */
#ifndef NICSTALL_HOSTFACTS_H
#define NICSTALL_HOSTFACTS_H

struct json_object;

/* The figures from the facts' ports (the first port whose stall period
 * holds the host source's counters; its stall and window summed) and the
 * record's snapshot (the devices' identity, the processes' names). NULL
 * when no port has them. */
struct json_object *hostfacts_build(struct json_object *ports, struct json_object *snapshot);
/* One item of ranks[]: name, self, answered, and the figures (when it
 * answered). A new object. */
struct json_object *hostfacts_rank(const char *name, int self, int answered,
				   struct json_object *figures);
/* Order ranks[] as the verdicts name them: those that answered first, the
 * most starved producer first (the largest of its block I/O, run-queue and
 * throttled shares and its host's memory-full share of the stall), then
 * this host, then by name. Clocks of different hosts are not compared:
 * "starved most", not "stopped first". */
void hostfacts_order(struct json_object *ranks);
/* A peer's "resources", hostile: the known figures copied (numbers 0 to
 * 1e12, names a short clean line), unknown keys left out; NULL with why
 * when one is bad. */
struct json_object *hostfacts_read(struct json_object *in, const char **why);

#endif
