/* capfilter: the pcap filter of an investigation's captures, from the
 * incident's flows. No I/O. */
#ifndef NICSTALL_CAPFILTER_H
#define NICSTALL_CAPFILTER_H

#include <stddef.h>

struct json_object;

/* Into buf (len bytes, at least 256): one clause per tcp or udp flow of
 * the array (each an object with "tuple": "PROTO A:P -> B:Q", IPv6
 * addresses in brackets), each matching that conversation's packets in
 * both directions and no others, then "icmp or icmp6". A flow that does
 * not fit is left out (the filter never ends half-written). Returns the
 * number of flows in the filter. */
unsigned capfilter_build(struct json_object *flows, char *buf, size_t len);

#endif
