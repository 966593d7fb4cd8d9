/* pholders: who holds an interface promiscuous besides the user flag.
 *
 * The kernel counts every holder in dev->promiscuity (IFLA_PROMISCUITY):
 * the user flag (`ip link set X promisc on`, RTM_SETLINK IFF_PROMISC) is
 * one; each packet socket with a PACKET_MR_PROMISC membership of the
 * interface is one more (packet_dev_mc() -> dev_set_promiscuity(dev, 1),
 * net/packet/af_packet.c; what libpcap and tcpdump do). Those sockets are
 * listed by sock_diag for AF_PACKET (net/packet/diag.c,
 * packet_diag_handler_dump(): a dump of the requesting socket's namespace
 * only, so the request is made inside the port's namespace), each with its
 * memberships (PACKET_DIAG_MCLIST: a plain array of struct
 * packet_diag_mclist, pdiag_put_mclist()) and uid (PACKET_DIAG_UID); the
 * processes behind a socket come from /proc (lib/procfd.h). Holders that are
 * not packet sockets (a bridge, bond or macvlan on top) are the count less
 * the flag less the packet sockets found. */
#ifndef NICSTALL_PHOLDERS_H
#define NICSTALL_PHOLDERS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/procfd.h"

struct json_object;

#define PHOLDERS_MAX 16
#define PHOLDERS_PIDS 4

struct pholder {
	uint64_t inode;                 /* the packet socket */
	uint32_t uid;                   /* its owner (PACKET_DIAG_UID), or -1 */
	unsigned npids;                 /* processes holding it (at most PIDS) */
	struct procfd_owner pid[PHOLDERS_PIDS];
};

struct pholders {
	unsigned n;                     /* packet sockets found */
	unsigned more;                  /* found beyond PHOLDERS_MAX */
	struct pholder h[PHOLDERS_MAX];
};

/* Ask the kernel, in namespace nsfd (-1: own), then find each socket's
 * processes. 0 with out filled (n may be 0), or -errno with err. */
int pholders_find(int nsfd, int ifindex, struct pholders *out, char *err, size_t errlen);
/* [{inode, uid, processes: [{pid, comm}]}] */
struct json_object *pholders_json(const struct pholders *h);
/* "tcpdump (pid 123), socket 4567 (uid 0)": for log lines and notes. */
void pholders_text(const struct pholders *h, char *buf, size_t len);

#endif
