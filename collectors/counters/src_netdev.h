/* src_netdev: netdev stats64 (rtnetlink RTM_GETLINK, IFLA_STATS64) as a
 * counter source. Counter names are the struct rtnl_link_stats64 fields
 * (rx_packets, tx_packets, ..., rx_nohandler, and rx_otherhost_dropped when
 * the kernel sends it). Works in any namespace: the socket is made inside
 * ctx->netns_fd and kept open. The ops table is src_netdev_ops
 * (counters.h). */
#ifndef NICSTALL_SRC_NETDEV_H
#define NICSTALL_SRC_NETDEV_H

#include "collectors/counters/counters.h"

#endif
