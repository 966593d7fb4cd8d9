/* flowsel: flow selectors, the words of `flows = ...` that choose which
 * flows a port watches, and the flow key as text. Shared by every flow
 * source, the configuration parser and the stall detector.
 *
 * Grammar (whitespace-separated words, each kind at most once, any order):
 *
 *   selector := word+
 *   word     := "tcp" | "udp" | "any"             protocol (any: both)
 *             | ADDR [ "/" PREFIX ]               IPv4 or IPv6, either end
 *             | "port" PORT [ "-" PORT ]          1..65535, either end
 *
 * "any" alone matches every flow. An IPv4 prefix counts IPv4 bits (0..32), an
 * IPv6 prefix IPv6 bits (0..128); address bits past the prefix are cleared.
 * Examples: "tcp", "tcp 10.0.0.0/24", "udp port 11111",
 * "tcp 10.77.0.2 port 11111-11120", "any", "tcp fd00::/64 port 80". */
#ifndef NICSTALL_FLOWSEL_H
#define NICSTALL_FLOWSEL_H

#include <stddef.h>

#include "collectors/flows/flows.h"

/* 1 when key k matches any selector of sel[0..nsel) (nsel 0: always).
 * A selector matches when proto (0 any), address/prefix (either end) and port
 * range (either end) all match. */
int flow_sel_match(const struct flow_sel *sel, unsigned nsel, const struct flow_key *k);

/* Parse one selector (grammar above). 0, or -EINVAL with err naming the
 * offending token. */
int flow_sel_parse(const char *text, struct flow_sel *out, char *err, size_t errlen);

/* "tcp 10.77.0.1:40000 -> 10.77.0.2:11111", IPv6 as "[::1]:40000"; an RDMA
 * queue pair (FLOW_PROTO_QP) as "qp DEV_INDEX/0xLQPN -> 0xRQPN".
 * Returns what snprintf returns (the untruncated length) or -1. */
int flow_key_format(const struct flow_key *k, char *buf, size_t len);

/* The IPv4-mapped IPv6 form (::ffff:a.b.c.d) of the 4 bytes at v4, as flow
 * keys and selectors store IPv4 addresses. */
void flow_addr_v4mapped(struct in6_addr *a, const void *v4);

#endif
