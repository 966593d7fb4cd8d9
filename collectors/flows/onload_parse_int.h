/* flow_onload_int: what onload_parse.c (the dump, the orm_json reader, the
 * liveness verdicts) and onload_text_parse.c (the onload_stackdump netstat
 * and lots parsers, the scrub) share. Not a public header: include
 * onload_parse.h. */
#ifndef NICSTALL_FLOW_ONLOAD_INT_H
#define NICSTALL_FLOW_ONLOAD_INT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "collectors/flows/onload_parse.h"

/* src into dst[len], NUL-terminated, bytes outside 0x21..0x7e as '?' (a
 * NULL src gives ""). */
void ol_clean_copy(char *dst, size_t len, const char *src);
/* An IPv4 (as IPv4-mapped) or IPv6 address, IPv6 possibly in brackets. 0 or -1. */
int ol_parse_addr(const char *s, struct in6_addr *a);
/* Onload state number (ip.h) to Linux TCP state number, 0 unknown. */
int ol_lstate_of_num(unsigned num);
/* The stack with this id; created when missing and create is set (NULL and
 * d->dropped counted when over FLOW_ONLOAD_MAX_STACKS). */
struct flow_onload_stack *ol_stack_get(struct flow_onload_dump *d, int id, int create);
/* Set (or add) a stack counter; over FLOW_ONLOAD_MAX_COUNTERS it is dropped. */
void ol_counter_set(struct flow_onload_stack *s, const char *name, uint64_t v,
		    struct flow_onload_dump *d);
/* A zeroed socket record, or NULL (dropped) over FLOW_ONLOAD_MAX_SOCKS. */
struct flow_onload_sock *ol_sock_new(struct flow_onload_dump *d, int stack_id, int sock_id);

#endif
