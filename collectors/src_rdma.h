/* src_rdma: RDMA port counters, two counter sources.
 *
 * src_rdma_ops ("rdma", declared in counters.h) reads sysfs:
 *   <sysfs_root>/sys/class/infiniband/<rdma_dev>/ports/<rdma_port>/
 *       hw_counters/<name>   -> counter "hw_counters/<name>"
 *       counters/<name>      -> counter "counters/<name>"
 * (sysfs_root "" is the real /sys). open() opens every file once (sorted,
 * hw_counters first) and keeps the fds; read() preads each at offset 0.
 * Every counter is CNT_W32 (mlx5 q counters and PMA counters wrap at 2^32;
 * cnt_delta widens a value that no longer fits). A file that cannot be read
 * or parsed at open() is left out of the layout (e.g. "N/A" PMA counters).
 *
 * Read errors, the choice made here:
 *  - some files fail (EIO, garbage, too long): read() still returns 0; each
 *    failing counter keeps its previous value (delta 0, never a spike) and
 *    s->err names the first failing file, its error, and how many failed
 *    (s->err is "" after a clean read). Each file's failure and recovery is
 *    logged once (log_warnx / log_info).
 *  - every file fails: -errno of the first failure, s->err as above.
 *  - ENODEV/ENOENT, or the port directory was removed: the device went away
 *    (driver reload, hot unplug). The source rescans; when the port is back
 *    the read succeeds with a new layout if the counter set changed,
 *    otherwise it returns -ENODEV ("device gone") and rescans on every later
 *    read.
 *
 * src_rdma_nl_ops ("rdma-nl", src_rdma_nl.c) gets the hw_counters over RDMA
 * netlink (NETLINK_RDMA, RDMA_NLDEV_CMD_STAT_GET with DEV_INDEX/PORT_INDEX),
 * names "hw_counters/<name>", also CNT_W32; STAT_GET has no counters/ (PMA)
 * set. open() resolves rdma_dev to its index (RDMA_NLDEV_CMD_GET dump) in
 * the port's namespace; it fails with -EPROTONOSUPPORT when the kernel has
 * no RDMA netlink, -ENODEV when the device is unknown. Requests go through
 * lib/nl (never waiting). The message builder and parsers below are
 * exported for the unit tests and fuzzers (crafted netlink buffers); the
 * parsers check the buffer with nl_msgs_check() before reading it. */
#ifndef NICSTALL_SRC_RDMA_H
#define NICSTALL_SRC_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters.h"

extern const struct src_ops src_rdma_nl_ops;

#define SRC_RDMA_MAXC    1024u   /* counters per directory / per reply */
#define SRC_RDMA_NAMELEN 64u     /* netlink counter name, with the NUL */

/* The largest netlink message the parsers accept (a dump buffer). */
#define SRC_RDMA_NL_MAX_MSG (1u << 20)

struct nlmsghdr;
/* The one length check of RDMA netlink replies, before any libmnl call:
 * buf holds len bytes (at most SRC_RDMA_NL_MAX_MSG) and nl_msgs_check()
 * (lib/nl.h) accepts them: every nlmsg_len, compared unsigned, fits. The
 * first header, or NULL with err filled. */
const struct nlmsghdr *src_rdma_nl_msg_check(const void *buf, size_t len, char *err,
					     size_t errlen);

/* Build RDMA_NLDEV_CMD_STAT_GET for (dev_index, port) into buf.
 * Returns the message length, or 0 when buf is too small. */
size_t src_rdma_nl_build_stat_get(void *buf, size_t len, uint32_t seq,
				  uint32_t dev_index, uint32_t port);

/* One parsed STAT_GET reply. */
struct src_rdma_nl_stat {
	uint32_t dev_index;      /* 0 when absent */
	uint32_t port;
	unsigned n;
	char name[SRC_RDMA_MAXC][SRC_RDMA_NAMELEN];
	uint64_t val[SRC_RDMA_MAXC];
};

/* Parse one netlink message (header included, len bytes) holding a
 * STAT_GET reply. Entries lacking a name or value, names too long or not
 * NUL-terminated, more than SRC_RDMA_MAXC entries, or a missing
 * RDMA_NLDEV_ATTR_STAT_HWCOUNTERS nest are errors. Unknown attributes are
 * skipped. 0, or -EINVAL/-E2BIG with err filled. */
int src_rdma_nl_parse_stat(const void *buf, size_t len,
			   struct src_rdma_nl_stat *st, char *err, size_t errlen);

/* Parse one RDMA_NLDEV_CMD_GET reply: device index and name.
 * 0, or -EINVAL with err filled. */
int src_rdma_nl_parse_dev(const void *buf, size_t len, uint32_t *dev_index,
			  char *name, size_t namelen, char *err, size_t errlen);

#endif
