/* rdma_nl: RDMA netlink replies checked and a device reply parsed (see
 * rdma_nl_parse.h). */
#include "collectors/flows/rdma_nl_parse.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

/* Every attribute a device reply may carry that has a fixed shape is
 * checked, not only the two read: a reply whose port index or counter
 * nests are malformed is refused whole (as the STAT_GET parser this came
 * from did). */
#define RDMA_TB_MAX RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE

static const struct nl_pol rdma_pol[RDMA_TB_MAX + 1] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_PORT_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_DEV_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE] = { MNL_TYPE_U64, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS] = { MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY] = { MNL_TYPE_NESTED, 0 },
};

const struct nlmsghdr *rdma_nl_msg_check(const void *buf, size_t len, char *err,
					 size_t errlen)
{
	struct nlmsghdr h = { 0 };

	if (buf && len >= sizeof(h))
		memcpy(&h, buf, sizeof(h));
	if (len > RDMA_NL_MAX_MSG || nl_msgs_check(buf, len) < 0) {
		util_errf(err, errlen, "rdma netlink: truncated message or bad nlmsg_len "
			  "(%u, in %zu bytes)", h.nlmsg_len, len);
		return NULL;
	}
	return buf;
}

int rdma_nl_parse_dev(const void *buf, size_t len, uint32_t *dev_index, char *name,
		      size_t namelen, char *err, size_t errlen)
{
	const struct nlattr *tb[RDMA_TB_MAX + 1] = { 0 };
	struct nl_tb t = { rdma_pol, RDMA_TB_MAX, tb };
	const struct nlmsghdr *nlh = rdma_nl_msg_check(buf, len, err, errlen);
	const char *s;

	if (!nlh)
		return -EINVAL;
	if (mnl_attr_parse(nlh, 0, nl_attr_cb, &t) != MNL_CB_OK) {
		util_errf(err, errlen, "rdma netlink GET reply: malformed attribute: %s",
			  strerror(errno));
		return -EINVAL;
	}
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME]) {
		util_errf(err, errlen, "rdma netlink GET reply: device index or name missing");
		return -EINVAL;
	}
	s = mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (strlen(s) >= namelen) {
		util_errf(err, errlen, "rdma netlink GET reply: device name too long (%zu bytes)",
			  strlen(s));
		return -EINVAL;
	}
	*dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	memcpy(name, s, strlen(s) + 1);
	return 0;
}
