/* rdma_disc: list RDMA devices and ports, their state, link layer and the
 * netdev each port belongs to.
 *
 * The list comes from <sysfs_root>/sys/class/infiniband (sysfs_root "" is the
 * real /sys; a fixture root is read as a tree and nothing else). Per port:
 * state, phys_state, link_layer, rate; the netdev from
 * ports/N/gid_attrs/ndevs/0 (RoCE), else the entries of DEV/device/net (the one whose
 * dev_port matches N-1 when there are several). On the real root, when the
 * device has a verbs provider, libibverbs (ibv_query_port) supplies state,
 * phys_state and link layer instead (source "verbs"). A host without RDMA
 * devices has an empty list: no error, nothing logged, libibverbs not
 * called. */
#ifndef NICSTALL_RDMA_DISC_H
#define NICSTALL_RDMA_DISC_H

#include <stddef.h>

struct rdma_port_info {
	char dev[64];            /* "mlx5_0" */
	unsigned port;           /* 1-based */
	int state;               /* IB port state: 4 = ACTIVE; -1 unknown */
	char state_name[32];     /* "ACTIVE", "DOWN", ... ("" unknown) */
	int phys_state;          /* 5 = LinkUp; -1 unknown */
	char phys_state_name[32];
	char link_layer[32];     /* "InfiniBand", "Ethernet" ("" unknown) */
	char rate[64];           /* "25 Gb/sec (1X EDR)" ("" unknown) */
	char netdev[16];         /* IFNAMSIZ; "" when none found */
	char source[8];          /* "sysfs" or "verbs" */
};

#define RDMA_DISC_MAX_PORTS 1024u

/* All ports of all devices, sorted by device name then port. *out is
 * malloc'd (free with rdma_disc_free; NULL when *n is 0). 0 or -errno with
 * err filled (only for real failures: memory, unreadable class dir). */
int rdma_disc_list(const char *sysfs_root, struct rdma_port_info **out,
		   size_t *n, char *err, size_t errlen);
void rdma_disc_free(struct rdma_port_info *list);

/* The RDMA device and port whose netdev is ifname. 0, -ENOENT when none,
 * or -errno. */
int rdma_disc_for_netdev(const char *sysfs_root, const char *ifname,
			 char *dev, size_t devlen, unsigned *port);

#endif
