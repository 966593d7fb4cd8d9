/* devlink_int: what the parts of the devlink health module share; private
 * to collectors/devlink_*.c (the public header is devlink_health.h).
 *
 *   devlink_health.c  requests, reply framing, GET/PORT/DEV messages
 *   devlink_fmsg.c    the fmsg token run of DIAGNOSE and DUMP_GET replies
 *   devlink_io.c      the netlink io (or the recordings), events, finding a
 *                     port's devlink target
 *   src_devlink.c     a port's health state, its counters and JSON, the
 *                     counter source */
#ifndef NICSTALL_DEVLINK_INT_H
#define NICSTALL_DEVLINK_INT_H

#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>       /* NLM_F_CAPPED, NLM_F_ACK_TLVS (uapi since 4.12) */

#include "collectors/counters/devlink_health.h"

struct nl_sock;

/* Newer than the Debian 12 uapi headers: enum devlink_attr continues after
 * DEVLINK_ATTR_SELFTESTS (176) with RATE_TX_PRIORITY, RATE_TX_WEIGHT,
 * REGION_DIRECT, RATE_TC_BWS and HEALTH_REPORTER_BURST_PERIOD (u64). */
#define DLH_ATTR_BURST_PERIOD 181
#define DLH_ATTR_MAX          DLH_ATTR_BURST_PERIOD

/* fmsg value types: enum devlink_var_attr_type (uapi, 2025), the kernel's
 * NLA_* numbering before that; the same numbers as libmnl's MNL_TYPE_*. */
enum {
	VT_U8 = 1, VT_U16 = 2, VT_U32 = 3, VT_U64 = 4, VT_STRING = 5,
	VT_FLAG = 6, VT_NUL_STRING = 10, VT_BINARY = 11,
};

#define REQ_MIN 512u             /* room for any request built here */
#define JSON_BINARY_MAX 4096u

/* Entry points take err possibly NULL: write into a scratch buffer then. */
#define ERRBUF(err, errlen, scratch) \
	do { if (!(err) || !(errlen)) { (err) = (scratch); (errlen) = sizeof(scratch); } } while (0)

/* Two handles of one devlink instance (bus and device)? */
int dlh_i_same_instance(const struct dlh_handle *a, const struct dlh_handle *b);
/* A bus, device or reporter name fit for a request. */
int dlh_i_good_token(const char *s);
/* Length, type and genl command of one message (devlink_health.c). */
const struct nlmsghdr *dlh_i_msg_check(const void *msg, size_t len, uint16_t family, int cmd,
				      const char *what, char *err, size_t errlen);
int dlh_i_parse_top(const struct nlmsghdr *nlh, const struct nlattr **tb, const char *what,
		    char *err, size_t errlen);

struct dlh_io {
	int fixture;
	char dir[1024];               /* fixture dir, or record dir ("" none) */
	struct nl_sock *ns;           /* lib/nl; NULL for recorded replies */
	uint16_t family;
	uint32_t group;               /* the "config" multicast group, 0 none */
	uint8_t req[1024] __attribute__((aligned(8)));
};

#endif
