/* reprogram: the receive-filter reprogram of one interface through
 * rtnetlink: switch IFF_PROMISC to the other state and back, so the
 * driver's ndo_set_rx_mode runs and rebuilds its receive filters.
 * Mechanism only: whether a port may be reprogrammed, and how often, is the
 * daemon's policy (daemon/recovery.c). */
#ifndef NICSTALL_REPROGRAM_H
#define NICSTALL_REPROGRAM_H

#include <stddef.h>

struct json_object;

/* Reprogram ifname in namespace nsfd (-1: own). Fills o with the sequence
 * ("promisc on then off"), was_promisc, start/end CLOCK_MONOTONIC and
 * whether the flag was restored. 0, or -1 with err saying why nothing (or
 * not all) was done: link missing or down, the kernel refused. The flag is
 * put back as it was on every path. */
int reprogram_toggle(int nsfd, const char *ifname, struct json_object *o,
		     char *err, size_t errlen);

#endif
