/* rdma_nl: RDMA netlink (NETLINK_RDMA) messages as the QP source reads
 * them: the one length check every reply passes before libmnl sees it,
 * and the device reply (RDMA_NLDEV_CMD_GET: its index and name). The
 * requests go through lib/nl; the QP dumps are rdmaqp_parse.c's. Exported
 * for the unit tests and fuzz_netlink (crafted buffers). */
#ifndef NICSTALL_RDMA_NL_H
#define NICSTALL_RDMA_NL_H

#include <stddef.h>
#include <stdint.h>

/* The largest netlink message the parsers accept (a dump buffer). */
#define RDMA_NL_MAX_MSG (1u << 20)

struct nlmsghdr;
/* buf holds len bytes (at most RDMA_NL_MAX_MSG) and nl_msgs_check()
 * (lib/nl.h) accepts them: every nlmsg_len, compared unsigned, fits. The
 * first header, or NULL with err filled. */
const struct nlmsghdr *rdma_nl_msg_check(const void *buf, size_t len, char *err,
					 size_t errlen);

/* One RDMA_NLDEV_CMD_GET reply (header included, len bytes): the device's
 * index and name. 0, or -EINVAL with err filled (checked, malformed, a
 * missing index or name, a name longer than namelen). */
int rdma_nl_parse_dev(const void *buf, size_t len, uint32_t *dev_index, char *name,
		      size_t namelen, char *err, size_t errlen);

#endif
