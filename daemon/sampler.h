/* sampler: the base-rate timer that samples every port into its flight
 * recorder (the forensic sequence samples faster on its own timer). */
#ifndef NICSTALL_SAMPLER_H
#define NICSTALL_SAMPLER_H

#include <stdint.h>

struct loop;
struct ports;
struct sampler;

/* What its wakeups are called (lib/loop.h loop_fd_name): the detector's
 * polls while nothing asks ride them (stall_set_ride). */
#define SAMPLER_WAKE "sweep"

/* First tick after 1 ms, then every interval_ns. NULL on failure (errno). */
struct sampler *sampler_new(struct loop *l, struct ports *ps, uint64_t interval_ns);
int sampler_set_interval(struct sampler *s, uint64_t interval_ns);
void sampler_free(struct sampler *s);

#endif
