/* owners: the processes that own a port's watched flows, kept as flows come,
 * go and change owner, so that the host source's pid list (src_host.h,
 * port_host_watch()) is had without a walk of every flow. No I/O.
 *
 * A count per (port, pid), found by a hash. At most OWNERS_MAX pairs
 * seen since the last clear (pairs whose flows all went count too): past
 * that, or when a flow is taken away that was never added (a caller's
 * miscount), the table says it is unsure (owners_unsure) and the caller
 * clears it, adds its flows again, and while still unsure counts them
 * its own way. */
#ifndef NICSTALL_OWNERS_H
#define NICSTALL_OWNERS_H

#define OWNERS_MAX 4096u

struct owners;

struct owners *owners_new(void);
void owners_free(struct owners *ow);
void owners_clear(struct owners *ow);

/* A flow of port owned by pid (> 0; others are ignored) came, or went. */
void owners_add(struct owners *ow, const char *port, int pid);
void owners_del(struct owners *ow, const char *port, int pid);

/* 1: a count was lost (full, or a flow taken away that was never added). */
int owners_unsure(const struct owners *ow);

/* The pids owning a flow of port, at most max of them (the first to
 * come first): how many were written to pids. */
unsigned owners_of(const struct owners *ow, const char *port, int *pids, unsigned max);

#endif
