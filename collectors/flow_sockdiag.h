/* flow_sockdiag: kernel TCP sockets as flow observations (INET_DIAG over
 * NETLINK_SOCK_DIAG), plus the flow selector helpers every flow source and
 * the stall detector share (flow_sel_parse/match, flow_key_format). */
#ifndef NICSTALL_FLOW_SOCKDIAG_H
#define NICSTALL_FLOW_SOCKDIAG_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows.h"

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

/* 1 when key k matches any selector of sel[0..nsel) (nsel 0: always).
 * A selector matches when proto (0 any), address/prefix (either end) and port
 * range (either end) all match. */
int flow_sel_match(const struct flow_sel *sel, unsigned nsel, const struct flow_key *k);

/* Parse one selector (grammar in flow_sockdiag.c). 0, or -EINVAL with err
 * naming the offending token. */
int flow_sel_parse(const char *text, struct flow_sel *out, char *err, size_t errlen);

/* "tcp 10.77.0.1:40000 -> 10.77.0.2:11111", IPv6 as "[::1]:40000".
 * Returns what snprintf returns (the untruncated length) or -1. */
int flow_key_format(const struct flow_key *k, char *buf, size_t len);

#endif
