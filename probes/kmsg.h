/* kmsg: the kernel's own word on promiscuity transitions, from /dev/kmsg.
 *
 * __dev_set_promiscuity() (net/core/dev.c) prints "<dev>: entered
 * promiscuous mode" / "left promiscuous mode" through netdev_info() when
 * dev->flags changed, i.e. synchronously at the count's crossing of zero
 * (before the driver's deferred work, so a line proves the kernel crossed,
 * not that the card applied it). __netdev_printk() writes "<ifname>: ..."
 * for a device without a parent (veth) and "<driver> <bus> <ifname>: ..."
 * (dev_printk_emit) for one with a parent (an mlx5 netdev).
 *
 * Records (devkmsg_read(), kernel/printk/printk.c): one per read(),
 * "PRI,SEQ,TS_USEC,FLAG[,...];TEXT\n" plus " KEY=VALUE" dictionary lines;
 * EAGAIN when none is new (O_NONBLOCK); EPIPE when the ring overwrote
 * records this reader had not read yet (the reader then moves on). Opening
 * needs CAP_SYSLOG where kernel.dmesg_restrict is 1. Never blocks. */
#ifndef NICSTALL_KMSG_H
#define NICSTALL_KMSG_H

#include <stddef.h>
#include <stdint.h>

struct kmsg;

struct kmsg_promisc {
	int entered;            /* 1 "entered", 0 "left" */
	uint64_t seq;           /* the record's sequence number */
	uint64_t ts_us;         /* its timestamp (local_clock, not CLOCK_MONOTONIC) */
	char text[200];         /* the record's text */
};

/* Open /dev/kmsg after its last record: only lines printed from now on are
 * read. NULL with err (e.g. "not readable: Operation not permitted"). */
struct kmsg *kmsg_open(char *err, size_t errlen);
void kmsg_close(struct kmsg *k);
/* Read every record printed since the last call without waiting, and keep
 * the promiscuity lines of ifname (and, when bus is not NULL or "", of
 * that bus address where the line names one) in out[*n..max). Returns the
 * number of records read, or -errno. */
int kmsg_read_promisc(struct kmsg *k, const char *ifname, const char *bus,
		      struct kmsg_promisc *out, size_t max, size_t *n);
/* Records the ring overwrote before they were read (EPIPE), so far. */
uint64_t kmsg_lost(const struct kmsg *k);
/* Parse one record: 1 and *p filled when it is a promiscuity line of
 * ifname (bus as above), 0 when it is another line, -1 when malformed. */
int kmsg_parse_promisc(const char *rec, size_t len, const char *ifname, const char *bus,
		       struct kmsg_promisc *p);

#endif
