/* src_ethtool: driver statistics (`ethtool -S`) through the SIOCETHTOOL
 * ioctl (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS) as a counter
 * source. Names are exactly what `ethtool -S` prints. The socket is made
 * inside ctx->netns_fd; the layout is rebuilt only when the driver's count
 * changes. The ops table is src_ethtool_ops (counters.h). */
#ifndef NICSTALL_SRC_ETHTOOL_H
#define NICSTALL_SRC_ETHTOOL_H

#include "collectors/counters/counters.h"

/* Upper bound on the number of driver counters accepted. */
#define SRC_ETHTOOL_MAX_STATS 65536u

#endif
