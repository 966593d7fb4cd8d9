/* flow_sockdiag: kernel TCP sockets as flow observations (INET_DIAG over
 * NETLINK_SOCK_DIAG), as a module and as flow_src_sock_ops (flowsrc.h,
 * port scope). The selectors it filters with are in flowsel.h. */
#ifndef NICSTALL_FLOW_SOCKDIAG_H
#define NICSTALL_FLOW_SOCKDIAG_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows.h"
#include "collectors/flowsel.h"

struct sockdiag;

/* Open a NETLINK_SOCK_DIAG socket inside namespace nsfd (-1: our own); the
 * socket stays bound to that namespace for its life. NULL + err on failure. */
struct sockdiag *sockdiag_open(int nsfd, char *err, size_t errlen);
void sockdiag_close(struct sockdiag *sd);

/* Dump the namespace's TCP sockets (IPv4 and IPv6, every state but LISTEN,
 * TIME_WAIT and CLOSE) and emit one FLOW_SRC_SOCK observation per socket that
 * matches sel[0..nsel) (nsel 0: all). Key: local = s*, remote = d*.
 * unread/unsent = receive/send queue bytes, retrans = tcpi_total_retrans,
 * state = TCP state (1 ESTABLISHED ... as in the kernel), tx_bytes = data
 * bytes acked (tcpi_bytes_acked less SYN/FIN), rx_bytes = tcpi_bytes_received,
 * tx/rx msgs = data segments out/in, last_tx/rx_ns = CLOCK_MONOTONIC of the
 * last data sent/received (0 when unknown).
 * Returns the number of observations emitted, or -errno with err filled. */
int sockdiag_poll(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		  flow_emit_fn emit, void *arg, char *err, size_t errlen);

/* Find a process holding socket inode (scan of /proc/PID/fd, bounded).
 * 0 with *pid and comm filled, -ENOENT when not found, other -errno. */
int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen);

/* Parse a buffer of SOCK_DIAG_BY_FAMILY messages (a dump reply as
 * received) the way sockdiag_poll does, with now_ns as CLOCK_MONOTONIC now:
 * the number of observations emitted, or -EBADMSG when nl_msgs_check()
 * refuses the buffer (nothing is emitted then), -EINVAL. For tests and
 * fuzzers. */
int sockdiag_parse(const void *buf, size_t len, const struct flow_sel *sel,
		   unsigned nsel, uint64_t now_ns, flow_emit_fn emit, void *arg);

#endif
