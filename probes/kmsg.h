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
/* Parse one record: 1 and *p filled when it is a promiscuity line of
 * ifname (bus as above), 0 when it is another line, -1 when malformed. */
int kmsg_parse_promisc(const char *rec, size_t len, const char *ifname, const char *bus,
		       struct kmsg_promisc *p);

/* One record of the kernel's ring about a device. */
#define KMSG_LINE_MAX 240
struct kmsg_line {
	uint64_t seq;           /* the record's sequence number */
	uint64_t ts_us;         /* its timestamp (local_clock: since boot) */
	char text[KMSG_LINE_MAX]; /* its text, control characters as '?' */
};

/* Is the record about the device: its text names the interface ifname as
 * a word followed by ':' ("eth0: ...", "IPv6: ADDRCONF(NETDEV_UP): eth0:
 * ...") or the bus address bus as dev_printk() writes it ("mlx5_core
 * 0000:03:00.1: ...", "mlx5_core 0000:03:00.1 eth0: ..."), or its
 * dictionary says DEVICE=+pci:BUS (printk_info's dev_info, which
 * devkmsg_read() prints after the text)? 1 and *l filled when it is, 0
 * when not, -1 when malformed. ifname or bus may be NULL or "". */
int kmsg_parse_device(const char *rec, size_t len, const char *ifname, const char *bus,
		      struct kmsg_line *l);
/* The records about the device still in the kernel's ring, read from its
 * first record to its last without waiting (a reader of /dev/kmsg opened
 * afresh starts at the oldest record: devkmsg_open()): the driver's lines
 * since boot when the ring still holds them (seed 000's "fw query isn't
 * supported by the FW" is printed when the device is first queried). Keeps
 * the first KMSG_KEEP_FIRST and the last max - KMSG_KEEP_FIRST of them in
 * out, oldest first; *more counts those left out between. Returns the
 * number kept, or -1 with err (e.g. "/dev/kmsg: not readable: ..."). */
/* What kmsg_device_lines keeps, a line at a time and each in constant time
 * (a driver that filled the ring with 100k lines moved the kept tail once
 * for each): the first KMSG_KEEP_FIRST lines, then a ring over the rest of
 * out[0..max); kmsg_keep_end puts the tail in order and returns the number
 * kept. */
struct kmsg_keep {
	struct kmsg_line *out;
	size_t max, n, head, more;
};
void kmsg_keep_add(struct kmsg_keep *k, const struct kmsg_line *l);
size_t kmsg_keep_end(struct kmsg_keep *k);
#define KMSG_KEEP_FIRST 16
int kmsg_device_lines(const char *ifname, const char *bus, struct kmsg_line *out, size_t max,
		      size_t *more, char *err, size_t errlen);

#endif
