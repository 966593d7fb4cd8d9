/* devlink_health: devlink health reporters as counters and JSON. See
 * devlink_health.h for the wire format (with the kernel functions that
 * produce it) and the counter names. */
#include "collectors/devlink_health.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif

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

#define RECV_BUF (64u * 1024u)
#define REQ_MIN 512u             /* room for any request built here */
#define NLHEX_TEXT_MAX (12u << 20)
#define JSON_BINARY_MAX 4096u

/* Entry points take err possibly NULL: write into a scratch buffer then. */
#define ERRBUF(err, errlen, scratch) \
	do { if (!(err) || !(errlen)) { (err) = (scratch); (errlen) = sizeof(scratch); } } while (0)

const char *dlh_handle_str(const struct dlh_handle *h, char *buf, size_t len)
{
	if (!h || !h->bus[0])
		snprintf(buf, len, "(none)");
	else if (h->has_port)
		snprintf(buf, len, "%s/%s/%u", h->bus, h->dev, h->port);
	else
		snprintf(buf, len, "%s/%s", h->bus, h->dev);
	return buf;
}

static int same_instance(const struct dlh_handle *a, const struct dlh_handle *b)
{
	return a->bus[0] && !strcmp(a->bus, b->bus) && !strcmp(a->dev, b->dev);
}

/* A bus, device or reporter name we put into a request: bounded, printable,
 * no '/' (so the handle text stays unambiguous). */
static int good_token(const char *s)
{
	size_t n;

	if (!s)
		return 0;
	n = strnlen(s, DLH_NAME_MAX);
	if (!n || n >= DLH_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == '/' || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* ================================================================ requests */

static struct nlmsghdr *put_genl(void *buf, size_t len, uint16_t type,
				 uint8_t cmd, uint8_t version, uint16_t flags,
				 uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	if (!buf || len < REQ_MIN)
		return NULL;
	memset(buf, 0, MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*g)));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int put_handle(struct nlmsghdr *nlh, const struct dlh_handle *h)
{
	if (!good_token(h->bus) || !good_token(h->dev))
		return -1;
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, h->bus);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, h->dev);
	if (h->has_port)
		mnl_attr_put_u32(nlh, DEVLINK_ATTR_PORT_INDEX, h->port);
	return 0;
}

size_t dlh_build_getfamily(void *buf, size_t len, uint32_t seq)
{
	struct nlmsghdr *nlh = put_genl(buf, len, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
					1, 0, seq);

	if (!nlh)
		return 0;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME);
	return nlh->nlmsg_len;
}

size_t dlh_build_port_dump(void *buf, size_t len, uint16_t family,
			   uint32_t seq, const struct dlh_handle *h)
{
	struct nlmsghdr *nlh = put_genl(buf, len, family, DEVLINK_CMD_PORT_GET,
					DEVLINK_GENL_VERSION, NLM_F_DUMP, seq);

	if (!nlh || !family)
		return 0;
	if (h) {
		struct dlh_handle inst = *h;

		inst.has_port = 0;
		if (put_handle(nlh, &inst) < 0)
			return 0;
	}
	return nlh->nlmsg_len;
}

size_t dlh_build_dev_dump(void *buf, size_t len, uint16_t family, uint32_t seq)
{
	struct nlmsghdr *nlh = put_genl(buf, len, family, DEVLINK_CMD_GET,
					DEVLINK_GENL_VERSION, NLM_F_DUMP, seq);

	return nlh && family ? nlh->nlmsg_len : 0;
}

size_t dlh_build_reporter_dump(void *buf, size_t len, uint16_t family,
			       uint32_t seq, const struct dlh_handle *h)
{
	struct nlmsghdr *nlh = put_genl(buf, len, family,
					DEVLINK_CMD_HEALTH_REPORTER_GET,
					DEVLINK_GENL_VERSION, NLM_F_DUMP, seq);
	struct dlh_handle inst;

	if (!nlh || !family || !h)
		return 0;
	inst = *h;
	inst.has_port = 0;          /* all of the instance, ports included */
	return put_handle(nlh, &inst) < 0 ? 0 : nlh->nlmsg_len;
}

static size_t build_named(void *buf, size_t len, uint16_t family, uint32_t seq,
			  uint8_t cmd, uint16_t flags,
			  const struct dlh_handle *h, const char *name)
{
	struct nlmsghdr *nlh = put_genl(buf, len, family, cmd,
					DEVLINK_GENL_VERSION, flags, seq);

	if (!nlh || !family || !h || !good_token(name) || put_handle(nlh, h) < 0)
		return 0;
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_HEALTH_REPORTER_NAME, name);
	return nlh->nlmsg_len;
}

size_t dlh_build_diagnose(void *buf, size_t len, uint16_t family, uint32_t seq,
			  const struct dlh_handle *h, const char *name)
{
	return build_named(buf, len, family, seq,
			   DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 0, h, name);
}

size_t dlh_build_dump_get(void *buf, size_t len, uint16_t family, uint32_t seq,
			  const struct dlh_handle *h, const char *name)
{
	return build_named(buf, len, family, seq,
			   DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, NLM_F_DUMP, h, name);
}

/* ================================================================ framing */

void dlh_reply_init(struct dlh_reply *r, int dump)
{
	memset(r, 0, sizeof(*r));
	r->dump = dump;
}

void dlh_reply_free(struct dlh_reply *r)
{
	if (!r)
		return;
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
	r->nmsg = 0;
}

static int reply_append(struct dlh_reply *r, const void *m, uint32_t n)
{
	size_t need = r->len + NLMSG_ALIGN((size_t)n);

	if (need > DLH_REPLY_MAX)
		return -E2BIG;
	if (need > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		uint8_t *nb;

		while (cap < need)
			cap *= 2;
		nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, m, n);
	memset(r->buf + r->len + n, 0, NLMSG_ALIGN((size_t)n) - n);
	r->len = need;
	r->nmsg++;
	return 0;
}

static const struct nl_pol extack_pol[NLMSGERR_ATTR_MAX + 1] = {
	[NLMSGERR_ATTR_MSG] = { MNL_TYPE_NUL_STRING, 0 },
};

/* The kernel's error (positive errno) with its extended ack text. TLVs
 * start at off in the payload; off is checked here. */
static int ctl_error(const struct nlmsghdr *nlh, int e, size_t off, char *err,
		     size_t errlen)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = { 0 };
	struct nl_tb t = { extack_pol, NLMSGERR_ATTR_MAX, tb };
	size_t plen = nlh->nlmsg_len - NLMSG_HDRLEN;

	if (e <= 0 || e > 4095)
		e = EPROTO;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && off < plen &&
	    mnl_attr_parse_payload((const char *)nlh + NLMSG_HDRLEN + off,
				   plen - off, nl_attr_cb, &t) >= 0 &&
	    tb[NLMSGERR_ATTR_MSG])
		snprintf(err, errlen, "%s: %s", strerror(e),
			 mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	else
		snprintf(err, errlen, "%s", strerror(e));
	return -e;
}

int dlh_reply_feed(struct dlh_reply *r, const void *chunk, size_t len,
		   uint32_t seq, uint32_t portid, uint16_t family,
		   char *err, size_t errlen)
{
	const uint8_t *p = chunk;
	size_t off = 0;
	char scratch[8];
	int rc;

	ERRBUF(err, errlen, scratch);
	if (!r || (!chunk && len)) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	while (off < len) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		size_t left = len - off;
		uint32_t n;

		/* Unsigned checks first: nothing below reads past len. */
		if (left < NLMSG_HDRLEN) {
			snprintf(err, errlen, "offset %zu: %zu bytes left, less than a netlink header",
				 off, left);
			return -EBADMSG;
		}
		n = nlh->nlmsg_len;
		if (n < NLMSG_HDRLEN || (size_t)n > left) {
			snprintf(err, errlen, "offset %zu: nlmsg_len %u with %zu bytes left",
				 off, n, left);
			return -EBADMSG;
		}
		if ((seq && nlh->nlmsg_seq != seq) ||
		    (portid && nlh->nlmsg_pid && nlh->nlmsg_pid != portid)) {
			r->skipped++;            /* a late reply of another request */
			goto next;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			break;
		case NLMSG_OVERRUN:
			snprintf(err, errlen, "offset %zu: NLMSG_OVERRUN", off);
			return -ENOBUFS;
		case NLMSG_DONE: {
			int32_t v = 0;

			if (n >= NLMSG_HDRLEN + sizeof(v))
				memcpy(&v, p + off + NLMSG_HDRLEN, sizeof(v));
			if (v < 0)          /* -v of INT_MIN overflows: EPROTO */
				return ctl_error(nlh, v < -4095 ? EPROTO : -v, sizeof(v), err,
						 errlen);
			r->done = 1;
			if (r->dump)
				return 1;
			break;                    /* a do: the ack follows */
		}
		case NLMSG_ERROR: {
			struct nlmsgerr e;
			size_t toff;

			if (n < NLMSG_HDRLEN + sizeof(e.error)) {
				snprintf(err, errlen, "offset %zu: NLMSG_ERROR of %u bytes", off, n);
				return -EBADMSG;
			}
			memset(&e, 0, sizeof(e));
			memcpy(&e, p + off + NLMSG_HDRLEN,
			       n - NLMSG_HDRLEN < sizeof(e) ? n - NLMSG_HDRLEN : sizeof(e));
			if (e.error == 0)
				return 1;         /* the ack */
			if (n < NLMSG_HDRLEN + sizeof(e))
				toff = n;         /* no TLVs */
			else if (nlh->nlmsg_flags & NLM_F_CAPPED)
				toff = sizeof(e);
			else
				toff = sizeof(e.error) + NLMSG_ALIGN((size_t)e.msg.nlmsg_len);
			return ctl_error(nlh, e.error < 0 && e.error >= -4095 ? -e.error : EPROTO,
					 toff, err, errlen);
		}
		default:
			if (nlh->nlmsg_type != family) {
				r->skipped++;
				break;
			}
			if (n < NLMSG_HDRLEN + GENL_HDRLEN) {
				snprintf(err, errlen, "offset %zu: message of %u bytes, no genl header",
					 off, n);
				return -EBADMSG;
			}
			rc = reply_append(r, nlh, n);
			if (rc < 0) {
				snprintf(err, errlen, "reply larger than %u bytes", DLH_REPLY_MAX);
				return rc;
			}
			/* a do that answers with one message and no NLM_F_MULTI
			 * is complete once the ack arrives, like the others */
			break;
		}
next:
		off += NLMSG_ALIGN((size_t)n) <= left ? NLMSG_ALIGN((size_t)n) : left;
	}
	return 0;
}

/* ================================================================ messages */

static const struct nl_pol top_pol[DLH_ATTR_MAX + 1] = {
	[DEVLINK_ATTR_BUS_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[DEVLINK_ATTR_DEV_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[DEVLINK_ATTR_PORT_INDEX] = { MNL_TYPE_U32, 0 },
	[DEVLINK_ATTR_PORT_NETDEV_IFINDEX] = { MNL_TYPE_U32, 0 },
	[DEVLINK_ATTR_PORT_NETDEV_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[DEVLINK_ATTR_FMSG] = { MNL_TYPE_NESTED, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER] = { MNL_TYPE_NESTED, 0 },
	[DEVLINK_ATTR_NESTED_DEVLINK] = { MNL_TYPE_NESTED, 0 },
};

static const struct nl_pol rep_pol[DLH_ATTR_MAX + 1] = {
	[DEVLINK_ATTR_HEALTH_REPORTER_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_STATE] = { MNL_TYPE_U8, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT] = { MNL_TYPE_U64, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT] = { MNL_TYPE_U64, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS] = { MNL_TYPE_U64, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD] = { MNL_TYPE_U64, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER] = { MNL_TYPE_U8, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS] = { MNL_TYPE_U64, 0 },
	[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP] = { MNL_TYPE_U8, 0 },
	[DLH_ATTR_BURST_PERIOD] = { MNL_TYPE_U64, 0 },
};

static const struct nl_pol ctrl_pol[CTRL_ATTR_MCAST_GROUPS + 1] = {
	[CTRL_ATTR_FAMILY_ID] = { MNL_TYPE_U16, 0 },
	[CTRL_ATTR_FAMILY_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[CTRL_ATTR_MCAST_GROUPS] = { MNL_TYPE_NESTED, 0 },
};

/* Length, type and command of one message; nothing is read beyond len. */
static const struct nlmsghdr *msg_check(const void *msg, size_t len,
					uint16_t family, int cmd,
					const char *what, char *err,
					size_t errlen)
{
	const struct nlmsghdr *nlh = msg;
	const struct genlmsghdr *g;

	if (!msg || len < NLMSG_HDRLEN + GENL_HDRLEN) {
		snprintf(err, errlen, "%s: %zu bytes, shorter than the headers", what, len);
		return NULL;
	}
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len > len) {
		snprintf(err, errlen, "%s: nlmsg_len %u with %zu bytes", what,
			 nlh->nlmsg_len, len);
		return NULL;
	}
	if (family && nlh->nlmsg_type != family) {
		snprintf(err, errlen, "%s: message type %u, not family %u", what,
			 nlh->nlmsg_type, family);
		return NULL;
	}
	g = (const void *)((const char *)msg + NLMSG_HDRLEN);
	if (cmd >= 0 && g->cmd != cmd) {
		snprintf(err, errlen, "%s: genl command %u, expected %d", what, g->cmd, cmd);
		return NULL;
	}
	return nlh;
}

static int parse_top(const struct nlmsghdr *nlh, const struct nlattr **tb,
		     const char *what, char *err, size_t errlen)
{
	struct nl_tb t = { top_pol, DLH_ATTR_MAX, tb };

	if (mnl_attr_parse(nlh, GENL_HDRLEN, nl_attr_cb, &t) != MNL_CB_OK) {
		snprintf(err, errlen, "%s: malformed attribute", what);
		return -EBADMSG;
	}
	return 0;
}

static int copy_str(char *dst, size_t dlen, const struct nlattr *a)
{
	const char *s = mnl_attr_get_str(a);
	size_t n = strnlen(s, mnl_attr_get_payload_len(a));

	if (n >= dlen)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static int get_handle(const struct nlattr **tb, struct dlh_handle *h,
		      const char *what, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	if (!tb[DEVLINK_ATTR_BUS_NAME] || !tb[DEVLINK_ATTR_DEV_NAME]) {
		snprintf(err, errlen, "%s: no bus/device name", what);
		return -EBADMSG;
	}
	if (copy_str(h->bus, sizeof(h->bus), tb[DEVLINK_ATTR_BUS_NAME]) < 0 ||
	    copy_str(h->dev, sizeof(h->dev), tb[DEVLINK_ATTR_DEV_NAME]) < 0 ||
	    !good_token(h->bus) || !good_token(h->dev)) {
		snprintf(err, errlen, "%s: bad bus/device name", what);
		return -EBADMSG;
	}
	if (tb[DEVLINK_ATTR_PORT_INDEX]) {
		h->has_port = 1;
		h->port = mnl_attr_get_u32(tb[DEVLINK_ATTR_PORT_INDEX]);
	}
	return 0;
}

static const struct nl_pol grp_pol[CTRL_ATTR_MCAST_GRP_ID + 1] = {
	[CTRL_ATTR_MCAST_GRP_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[CTRL_ATTR_MCAST_GRP_ID] = { MNL_TYPE_U32, 0 },
};

int dlh_parse_family(const void *msg, size_t len, uint16_t *family,
		     uint32_t *config_group, char *err, size_t errlen)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GROUPS + 1] = { 0 };
	struct nl_tb t = { ctrl_pol, CTRL_ATTR_MCAST_GROUPS, tb };
	const struct nlmsghdr *nlh;
	const struct nlattr *g;
	char scratch[8];

	ERRBUF(err, errlen, scratch);
	nlh = msg_check(msg, len, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, "CTRL_CMD_GETFAMILY reply",
			err, errlen);
	if (!nlh)
		return -EBADMSG;
	if (mnl_attr_parse(nlh, GENL_HDRLEN, nl_attr_cb, &t) != MNL_CB_OK ||
	    !tb[CTRL_ATTR_FAMILY_ID] || !tb[CTRL_ATTR_FAMILY_NAME] ||
	    strcmp(mnl_attr_get_str(tb[CTRL_ATTR_FAMILY_NAME]), DEVLINK_GENL_NAME) ||
	    mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]) < NLMSG_MIN_TYPE) {
		snprintf(err, errlen, "CTRL_CMD_GETFAMILY reply: no devlink family id");
		return -EBADMSG;
	}
	*family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (config_group)
		*config_group = 0;
	/* CTRL_ATTR_MCAST_GROUPS { N { NAME, ID } ... } (ctrl_fill_info) */
	if (config_group && tb[CTRL_ATTR_MCAST_GROUPS])
		mnl_attr_for_each_nested(g, tb[CTRL_ATTR_MCAST_GROUPS]) {
			const struct nlattr *gt[CTRL_ATTR_MCAST_GRP_ID + 1] = { 0 };
			struct nl_tb tg = { grp_pol, CTRL_ATTR_MCAST_GRP_ID, gt };

			if (mnl_attr_validate(g, MNL_TYPE_NESTED) < 0 ||
			    mnl_attr_parse_nested(g, nl_attr_cb, &tg) != MNL_CB_OK)
				continue;
			if (gt[CTRL_ATTR_MCAST_GRP_NAME] && gt[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(mnl_attr_get_str(gt[CTRL_ATTR_MCAST_GRP_NAME]),
				    DEVLINK_GENL_MCGRP_CONFIG_NAME))
				*config_group = mnl_attr_get_u32(gt[CTRL_ATTR_MCAST_GRP_ID]);
		}
	return 0;
}

int dlh_parse_port(const void *msg, size_t len, uint16_t family,
		   struct dlh_port *out, char *err, size_t errlen)
{
	const struct nlattr *tb[DLH_ATTR_MAX + 1] = { 0 };
	const struct nlmsghdr *nlh;
	const char *what = "DEVLINK_CMD_PORT_GET reply";
	char scratch[8];
	int rc;

	ERRBUF(err, errlen, scratch);
	memset(out, 0, sizeof(*out));
	nlh = msg_check(msg, len, family, DEVLINK_CMD_PORT_NEW, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	if ((rc = parse_top(nlh, tb, what, err, errlen)) < 0 ||
	    (rc = get_handle(tb, &out->h, what, err, errlen)) < 0)
		return rc;
	if (!out->h.has_port) {
		snprintf(err, errlen, "%s: no port index", what);
		return -EBADMSG;
	}
	if (tb[DEVLINK_ATTR_PORT_NETDEV_NAME] &&
	    copy_str(out->netdev, sizeof(out->netdev),
		     tb[DEVLINK_ATTR_PORT_NETDEV_NAME]) < 0) {
		snprintf(err, errlen, "%s: netdev name too long", what);
		return -EBADMSG;
	}
	if (tb[DEVLINK_ATTR_PORT_NETDEV_IFINDEX])
		out->ifindex = mnl_attr_get_u32(tb[DEVLINK_ATTR_PORT_NETDEV_IFINDEX]);
	return 0;
}

int dlh_parse_dev(const void *msg, size_t len, uint16_t family,
		  struct dlh_dev *out, char *err, size_t errlen)
{
	const struct nlattr *tb[DLH_ATTR_MAX + 1] = { 0 };
	const struct nlmsghdr *nlh;
	const struct nlattr *a;
	const char *what = "DEVLINK_CMD_GET reply";
	char scratch[8];
	int rc;

	ERRBUF(err, errlen, scratch);
	memset(out, 0, sizeof(*out));
	nlh = msg_check(msg, len, family, DEVLINK_CMD_NEW, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	if ((rc = parse_top(nlh, tb, what, err, errlen)) < 0 ||
	    (rc = get_handle(tb, &out->h, what, err, errlen)) < 0)
		return rc;
	out->h.has_port = 0;
	/* NESTED_DEVLINK may repeat: walk them all (validated by parse_top) */
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		const struct nlattr *nt[DLH_ATTR_MAX + 1] = { 0 };
		struct nl_tb t = { top_pol, DLH_ATTR_MAX, nt };

		if (mnl_attr_get_type(a) != DEVLINK_ATTR_NESTED_DEVLINK)
			continue;
		if (out->nnested >= DLH_MAX_NESTED)
			break;
		if (mnl_attr_parse_nested(a, nl_attr_cb, &t) != MNL_CB_OK ||
		    get_handle(nt, &out->nested[out->nnested], what, err, errlen) < 0) {
			snprintf(err, errlen, "%s: bad nested devlink", what);
			return -EBADMSG;
		}
		out->nested[out->nnested++].has_port = 0;
	}
	return 0;
}

int dlh_parse_reporter(const void *msg, size_t len, uint16_t family,
		       struct dlh_reporter *out, char *err, size_t errlen)
{
	const struct nlattr *tb[DLH_ATTR_MAX + 1] = { 0 };
	const struct nlattr *rt[DLH_ATTR_MAX + 1] = { 0 };
	struct nl_tb t = { rep_pol, DLH_ATTR_MAX, rt };
	const char *what = "DEVLINK_CMD_HEALTH_REPORTER_GET reply";
	const struct nlmsghdr *nlh;
	const struct genlmsghdr *g;
	char scratch[8];
	int rc;

	ERRBUF(err, errlen, scratch);
	memset(out, 0, sizeof(*out));
	nlh = msg_check(msg, len, family, -1, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != DEVLINK_CMD_HEALTH_REPORTER_GET &&
	    g->cmd != DEVLINK_CMD_HEALTH_REPORTER_RECOVER) {
		snprintf(err, errlen, "%s: genl command %u", what, g->cmd);
		return -EBADMSG;
	}
	if ((rc = parse_top(nlh, tb, what, err, errlen)) < 0 ||
	    (rc = get_handle(tb, &out->h, what, err, errlen)) < 0)
		return rc;
	if (!tb[DEVLINK_ATTR_HEALTH_REPORTER] ||
	    mnl_attr_parse_nested(tb[DEVLINK_ATTR_HEALTH_REPORTER], nl_attr_cb, &t) != MNL_CB_OK) {
		snprintf(err, errlen, "%s: no or malformed DEVLINK_ATTR_HEALTH_REPORTER", what);
		return -EBADMSG;
	}
	if (!rt[DEVLINK_ATTR_HEALTH_REPORTER_NAME] || !rt[DEVLINK_ATTR_HEALTH_REPORTER_STATE] ||
	    !rt[DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT] ||
	    !rt[DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT]) {
		snprintf(err, errlen, "%s: name, state, error or recover count missing", what);
		return -EBADMSG;
	}
	if (copy_str(out->name, sizeof(out->name), rt[DEVLINK_ATTR_HEALTH_REPORTER_NAME]) < 0 ||
	    !util_valid_name(out->name, DLH_NAME_MAX - 1)) {
		snprintf(err, errlen, "%s: bad reporter name", what);
		return -EBADMSG;
	}
	out->state = mnl_attr_get_u8(rt[DEVLINK_ATTR_HEALTH_REPORTER_STATE]);
	out->error_count = mnl_attr_get_u64(rt[DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT]);
	out->recover_count = mnl_attr_get_u64(rt[DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT]);
	if (rt[DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD] ||
	    rt[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER]) {
		out->have |= DLH_HAVE_RECOVER;
		if (rt[DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD])
			out->grace_period_ms =
				mnl_attr_get_u64(rt[DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD]);
		if (rt[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER])
			out->auto_recover =
				!!mnl_attr_get_u8(rt[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER]);
	}
	if (rt[DLH_ATTR_BURST_PERIOD]) {
		out->have |= DLH_HAVE_BURST;
		out->burst_period_ms = mnl_attr_get_u64(rt[DLH_ATTR_BURST_PERIOD]);
	}
	if (rt[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP]) {
		out->have |= DLH_HAVE_DUMP;
		out->auto_dump = !!mnl_attr_get_u8(rt[DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP]);
	}
	if (rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS] ||
	    rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS]) {
		out->have |= DLH_HAVE_DUMP_TS;
		if (rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS])
			out->dump_ts_ms = mnl_attr_get_u64(rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS]);
		if (rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS])
			out->dump_ts_ns =
				mnl_attr_get_u64(rt[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS]);
	}
	return 0;
}

/* ================================================================ fmsg */

void dlh_diag_free(struct dlh_diag *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->n; i++)
		free(d->names[i]);
	for (unsigned i = 0; i < d->ntext; i++) {
		free(d->tnames[i]);
		free(d->texts[i]);
	}
	free(d->names);
	free(d->vals);
	free(d->width);
	free(d->tnames);
	free(d->texts);
	memset(d, 0, sizeof(*d));
}

enum { LV_OBJ = 1, LV_PAIR, LV_ARR };

struct level {
	uint8_t kind;
	uint8_t named;                /* PAIR: its name came */
	uint8_t valued;               /* PAIR: it has its value */
	size_t pathlen;               /* path length before this level */
	uint32_t next;                /* ARR: index of the next item */
	struct json_object *j;        /* OBJ/ARR container (borrowed) */
	char *jname;                  /* PAIR: name for JSON (owned) */
};

#define HSLOTS 8192u              /* > 2 * DLH_MAX_VALUES, power of 2 */

struct fm {
	struct level st[DLH_FMSG_DEPTH];
	unsigned depth;
	int started, finished;
	int have_type;
	uint8_t type;
	char path[DLH_PATH_MAX];
	size_t pathlen;
	const char *rep;              /* reporter name */
	struct dlh_diag *d;
	unsigned cap, tcap;
	uint32_t *hash;               /* d->names index + 1, 0 empty */
	struct json_object *root;     /* tree, or NULL when not wanted */
	int want_tree;
	int part_start;               /* no token of this part seen yet */
	size_t msg_off;               /* of the message being parsed */
};

/* mlx5's vnic diagnose wraps everything in one object; its name is left
 * out so that the counters read devlink/vnic/<counter>. */
static int collapsed(const struct fm *f, const char *name)
{
	return f->depth == 2 && !strcmp(f->rep, "vnic") &&
	       !strcmp(name, "vNIC env counters");
}

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int name_taken(struct fm *f, const char *name)
{
	for (uint32_t i = fnv(name) & (HSLOTS - 1);; i = (i + 1) & (HSLOTS - 1)) {
		if (!f->hash[i])
			return 0;
		if (!strcmp(f->d->names[f->hash[i] - 1], name))
			return 1;
	}
}

static void name_add(struct fm *f, const char *name, unsigned idx)
{
	uint32_t i = fnv(name) & (HSLOTS - 1);

	while (f->hash[i])
		i = (i + 1) & (HSLOTS - 1);
	f->hash[i] = idx + 1;
}

static int add_value(struct fm *f, const char *path, uint64_t v, uint8_t width)
{
	struct dlh_diag *d = f->d;
	char alt[DLH_PATH_MAX + 8];
	const char *name = path;
	char *copy;

	if (!d)
		return 0;
	if (d->n >= DLH_MAX_VALUES) {
		d->dropped++;
		return 0;
	}
	for (unsigned k = 2; name_taken(f, name); k++) {
		if (k > 99 || (size_t)snprintf(alt, sizeof(alt), "%s~%u", path, k) >= DLH_PATH_MAX) {
			d->dropped++;
			return 0;
		}
		name = alt;
	}
	if (d->n == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 64;
		char **nn = realloc(d->names, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		d->names = nn;
		uint64_t *nv = realloc(d->vals, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		d->vals = nv;
		uint8_t *nw = realloc(d->width, cap);

		if (!nw)
			return -ENOMEM;
		d->width = nw;
		f->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	d->names[d->n] = copy;
	d->vals[d->n] = v;
	d->width[d->n] = width;
	name_add(f, copy, d->n);
	d->n++;
	return 0;
}

static int add_text(struct fm *f, const char *path, const char *s, size_t n)
{
	struct dlh_diag *d = f->d;
	char *tn, *tv;

	if (!d)
		return 0;
	if (d->ntext >= DLH_MAX_TEXTS) {
		d->dropped++;
		return 0;
	}
	if (d->ntext == f->tcap) {
		unsigned cap = f->tcap ? f->tcap * 2 : 16;
		char **a = realloc(d->tnames, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		d->tnames = a;
		a = realloc(d->texts, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		d->texts = a;
		f->tcap = cap;
	}
	tn = strdup(path);
	tv = util_utf8_clean(s, n < DLH_TEXT_MAX ? n : DLH_TEXT_MAX - 1);
	if (!tn || !tv) {
		free(tn);
		free(tv);
		return -ENOMEM;
	}
	d->tnames[d->ntext] = tn;
	d->texts[d->ntext] = tv;
	d->ntext++;
	return 0;
}

/* Append "/component" (sanitized) to the path. */
static int path_push(struct fm *f, const char *comp, size_t n, char *err,
		     size_t errlen)
{
	if (f->pathlen + 1 + (n ? n : 1) >= sizeof(f->path)) {
		snprintf(err, errlen, "offset %zu: fmsg path longer than %u bytes",
			 f->msg_off, DLH_PATH_MAX - 1);
		return -EBADMSG;
	}
	f->path[f->pathlen++] = '/';
	if (!n)
		f->path[f->pathlen++] = '_';
	for (size_t i = 0; i < n; i++) {
		char c = comp[i];

		f->path[f->pathlen++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					 (c >= '0' && c <= '9') || c == '_' || c == '.') ? c : '_';
	}
	f->path[f->pathlen] = '\0';
	return 0;
}

static int path_index(struct fm *f, uint32_t idx, char *err, size_t errlen)
{
	char num[16];
	int n = snprintf(num, sizeof(num), "%u", idx);

	return path_push(f, num, (size_t)n, err, errlen);
}

static void path_cut(struct fm *f, size_t len)
{
	f->pathlen = len;
	f->path[len] = '\0';
}

/* Attach a new JSON value where the current level wants it. Takes v. */
static int json_place(struct fm *f, struct json_object *v)
{
	struct level *top = &f->st[f->depth - 1];
	int rc;

	if (!v)
		return -ENOMEM;
	if (top->kind == LV_ARR) {
		rc = json_object_array_add(top->j, v);
	} else {
		/* a PAIR: its value goes into the object above it */
		struct level *obj = &f->st[f->depth - 2];

		rc = json_object_object_add(obj->j, top->jname ? top->jname : "", v);
	}
	if (rc < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *json_hex(const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t m = n < JSON_BINARY_MAX ? n : JSON_BINARY_MAX;
	char *s = malloc(m * 2 + 32);
	struct json_object *j;
	size_t o = 0;

	if (!s)
		return NULL;
	for (size_t i = 0; i < m; i++) {
		s[o++] = hx[p[i] >> 4];
		s[o++] = hx[p[i] & 15];
	}
	if (m < n)
		o += (size_t)snprintf(s + o, 32, "...(%zu bytes)", n);
	j = json_object_new_string_len(s, (int)o);
	free(s);
	return j;
}

/* A value (OBJ_VALUE_TYPE already seen) under a PAIR or in an ARR. */
static int fm_value(struct fm *f, const struct nlattr *a, char *err,
		    size_t errlen)
{
	struct level *top = &f->st[f->depth - 1];
	const uint8_t *p = mnl_attr_get_payload(a);
	uint16_t n = mnl_attr_get_payload_len(a);
	size_t save = f->pathlen;
	struct json_object *j = NULL;
	uint64_t v = 0;
	int rc = 0, numeric = 0, width = CNT_W32, is_bool = 0;

	if (top->kind == LV_PAIR) {
		if (top->valued) {            /* a second value in one pair */
			if (f->d)
				f->d->unknown++;
			return 0;
		}
		top->valued = 1;
	} else if ((rc = path_index(f, top->next++, err, errlen)) < 0) {
		return rc;
	}
	switch (f->type) {
	case VT_U8:
	case VT_U16:
	case VT_U32:
	case VT_U64: {
		static const uint16_t sz[] = { 0, 1, 2, 4, 8 };
		uint16_t v16;
		uint32_t v32;

		if (n != sz[f->type]) {
			snprintf(err, errlen, "offset %zu: %s: value of %u bytes for type %u",
				 f->msg_off, f->path, n, f->type);
			rc = -EBADMSG;
			goto out;
		}
		if (n == 1) {
			v = p[0];
		} else if (n == 2) {
			memcpy(&v16, p, 2);
			v = v16;
		} else if (n == 4) {
			memcpy(&v32, p, 4);
			v = v32;
		} else {
			memcpy(&v, p, 8);
		}
		numeric = 1;
		width = n == 8 ? CNT_W64 : CNT_W32;
		break;
	}
	case VT_FLAG:
		if (n > 1) {
			snprintf(err, errlen, "offset %zu: %s: flag of %u bytes", f->msg_off,
				 f->path, n);
			rc = -EBADMSG;
			goto out;
		}
		v = n ? !!p[0] : 1;
		numeric = is_bool = 1;
		break;
	case VT_NUL_STRING:
		if (!n || p[n - 1] != '\0') {
			snprintf(err, errlen, "offset %zu: %s: string not NUL-terminated",
				 f->msg_off, f->path);
			rc = -EBADMSG;
			goto out;
		}
		/* fallthrough */
	case VT_STRING: {
		size_t sl = strnlen((const char *)p, n);

		rc = add_text(f, f->path, (const char *)p, sl);
		if (!rc && f->want_tree) {
			char *c = util_utf8_clean((const char *)p, sl);

			j = c ? json_object_new_string(c) : NULL;
			free(c);
			rc = json_place(f, j);
		}
		goto out;
	}
	case VT_BINARY:
		if (f->d)
			f->d->binary++;
		if (f->want_tree)
			rc = json_place(f, json_hex(p, n));
		goto out;
	default:
		if (f->d)
			f->d->unknown++;
		if (f->want_tree)
			rc = json_place(f, json_object_new_string("(value of unknown type)"));
		goto out;
	}
	if (numeric) {
		rc = add_value(f, f->path, v, (uint8_t)width);
		if (!rc && f->want_tree)
			rc = json_place(f, is_bool ? json_object_new_boolean((json_bool)v) :
					json_object_new_uint64(v));
	}
out:
	path_cut(f, save);
	return rc;
}

static int fm_push(struct fm *f, uint8_t kind, char *err, size_t errlen)
{
	struct level *l;
	int rc;

	if (f->depth >= DLH_FMSG_DEPTH) {
		snprintf(err, errlen, "offset %zu: fmsg nested deeper than %u", f->msg_off,
			 DLH_FMSG_DEPTH);
		return -EBADMSG;
	}
	l = &f->st[f->depth];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->pathlen = f->pathlen;
	if (kind == LV_PAIR) {
		f->depth++;
		return 0;
	}
	/* an object or array: a pair's value, an array item, or the root */
	if (f->depth && f->st[f->depth - 1].kind == LV_ARR &&
	    (rc = path_index(f, f->st[f->depth - 1].next++, err, errlen)) < 0)
		return rc;
	if (f->depth && f->st[f->depth - 1].kind == LV_PAIR)
		f->st[f->depth - 1].valued = 1;
	if (f->want_tree) {
		struct json_object *j = kind == LV_OBJ ? json_object_new_object() :
				       json_object_new_array();

		if (!j)
			return -ENOMEM;
		if (!f->depth) {
			f->root = j;
		} else if ((rc = json_place(f, j)) < 0) {
			return rc;
		}
		l->j = j;
	}
	f->depth++;
	return 0;
}

static int fm_token(struct fm *f, const struct nlattr *a, char *err,
		    size_t errlen)
{
	uint16_t t = mnl_attr_get_type(a);
	struct level *top = f->depth ? &f->st[f->depth - 1] : NULL;
	int rc;

	if (t == DEVLINK_ATTR_PAD)
		return 0;
	if (f->finished) {
		snprintf(err, errlen, "offset %zu: fmsg attribute %u after the end", f->msg_off, t);
		return -EBADMSG;
	}
	if (!f->started && t != DEVLINK_ATTR_FMSG_OBJ_NEST_START) {
		snprintf(err, errlen, "offset %zu: fmsg starts with attribute %u, not an object",
			 f->msg_off, t);
		return -EBADMSG;
	}
	/* devlink_fmsg_prepare_skb puts OBJ_VALUE_TYPE and then the data; when
	 * the data no longer fits, the type stays at the end of the part and
	 * the next part starts with the same item again, type first. */
	if (f->have_type && t != DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA &&
	    !(f->part_start && t == DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE)) {
		snprintf(err, errlen, "offset %zu: fmsg value type without data", f->msg_off);
		return -EBADMSG;
	}
	f->part_start = 0;
	switch (t) {
	case DEVLINK_ATTR_FMSG_OBJ_NEST_START:
		if (f->started && !((top->kind == LV_PAIR && top->named && !top->valued) ||
				    top->kind == LV_ARR))
			goto misplaced;
		f->started = 1;
		return fm_push(f, LV_OBJ, err, errlen);
	case DEVLINK_ATTR_FMSG_PAIR_NEST_START:
		if (top->kind != LV_OBJ)
			goto misplaced;
		return fm_push(f, LV_PAIR, err, errlen);
	case DEVLINK_ATTR_FMSG_ARR_NEST_START:
		if (!((top->kind == LV_PAIR && top->named && !top->valued) ||
		      top->kind == LV_ARR))
			goto misplaced;
		return fm_push(f, LV_ARR, err, errlen);
	case DEVLINK_ATTR_FMSG_NEST_END:
		if (top->kind == LV_PAIR && !top->named)
			goto misplaced;
		free(top->jname);
		top->jname = NULL;
		path_cut(f, top->pathlen);
		f->depth--;
		if (!f->depth)
			f->finished = 1;
		return 0;
	case DEVLINK_ATTR_FMSG_OBJ_NAME: {
		const char *s;
		size_t n;

		if (top->kind != LV_PAIR || top->named)
			goto misplaced;
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0) {
			snprintf(err, errlen, "offset %zu: fmsg name not a string", f->msg_off);
			return -EBADMSG;
		}
		s = mnl_attr_get_str(a);
		n = strlen(s);
		top->named = 1;
		if (f->want_tree && !(top->jname = util_utf8_clean(s, n)))
			return -ENOMEM;
		if (collapsed(f, s))
			return 0;
		return path_push(f, s, n, err, errlen);
	}
	case DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE:
		if (!((top->kind == LV_PAIR && top->named) || top->kind == LV_ARR))
			goto misplaced;
		if (mnl_attr_validate(a, MNL_TYPE_U8) < 0 || mnl_attr_get_payload_len(a) != 1) {
			snprintf(err, errlen, "offset %zu: fmsg value type not a u8", f->msg_off);
			return -EBADMSG;
		}
		f->type = mnl_attr_get_u8(a);
		f->have_type = 1;
		return 0;
	case DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA:
		if (!f->have_type) {
			snprintf(err, errlen, "offset %zu: fmsg value without a type", f->msg_off);
			return -EBADMSG;
		}
		f->have_type = 0;
		rc = fm_value(f, a, err, errlen);
		return rc;
	default:
		if (f->d)
			f->d->unknown++;      /* a newer kernel's token: skip it */
		return 0;
	}
misplaced:
	snprintf(err, errlen, "offset %zu: fmsg attribute %u out of place (depth %u)",
		 f->msg_off, t, f->depth);
	return -EBADMSG;
}

static void fm_cleanup(struct fm *f)
{
	for (unsigned i = 0; i < DLH_FMSG_DEPTH; i++) {
		free(f->st[i].jname);
		f->st[i].jname = NULL;
	}
	free(f->hash);
	f->hash = NULL;
}

int dlh_parse_fmsg(const struct dlh_reply *r, uint16_t family, uint8_t cmd,
		   const char *rep, struct dlh_diag *d,
		   struct json_object **tree, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct fm f;
	char scratch[8];
	size_t off;
	int rc = 0;

	ERRBUF(err, errlen, scratch);
	if (tree)
		*tree = NULL;
	if (d)
		memset(d, 0, sizeof(*d));
	if (!r || !rep || !good_token(rep)) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	memset(&f, 0, sizeof(f));
	f.rep = rep;
	f.d = d;
	f.want_tree = tree != NULL;
	f.pathlen = (size_t)snprintf(f.path, sizeof(f.path), "devlink/%s", rep);
	if (d && !(f.hash = calloc(HSLOTS, sizeof(*f.hash)))) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	dlh_reply_for_each(r, nlh, off) {
		const struct nlattr *tb[DLH_ATTR_MAX + 1] = { 0 };
		const struct nlattr *a;

		f.msg_off = off;
		if (!msg_check(nlh, r->len - off, family, cmd, "fmsg reply", err, errlen)) {
			rc = -EBADMSG;
			goto fail;
		}
		if ((rc = parse_top(nlh, tb, "fmsg reply", err, errlen)) < 0)
			goto fail;
		if (!tb[DEVLINK_ATTR_FMSG]) {
			snprintf(err, errlen, "offset %zu: reply part without DEVLINK_ATTR_FMSG", off);
			rc = -EBADMSG;
			goto fail;
		}
		f.part_start = 1;
		mnl_attr_for_each_nested(a, tb[DEVLINK_ATTR_FMSG]) {
			if ((rc = fm_token(&f, a, err, errlen)) < 0)
				goto fail;
		}
	}
	if (!f.finished) {
		snprintf(err, errlen, "fmsg %s (%u messages, %zu bytes)",
			 f.started ? "ends inside a nest: truncated reply" : "is empty",
			 r->nmsg, r->len);
		rc = -EBADMSG;
		goto fail;
	}
	fm_cleanup(&f);
	if (tree)
		*tree = f.root;
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	fm_cleanup(&f);
	json_object_put(f.root);
	if (d)
		dlh_diag_free(d);
	return rc;
}

/* ================================================================ nlhex */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A whole regular file of at most max bytes, NUL-terminated; NULL with
 * errno and err set. */
static char *read_small(const char *path, size_t max, size_t *len, char *err,
			size_t errlen)
{
	struct stat sb;
	char *buf = NULL;
	size_t n = 0;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	if (fstat(fd, &sb) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(e));
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		e = EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((uint64_t)sb.st_size > max) {
		e = EFBIG;
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		goto fail;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		e = ENOMEM;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		goto fail;
	}
	while (n <= (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)sb.st_size + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			snprintf(err, errlen, "%s: read: %s", path, strerror(e));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > (size_t)sb.st_size) {
		e = EFBIG;
		snprintf(err, errlen, "%s: grew while read", path);
		goto fail;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = e;
	return NULL;
}

int dlh_nlhex_load(const char *path, uint8_t **buf, size_t *len, char *err,
		   size_t errlen)
{
	size_t tlen = 0, o = 0;
	unsigned line = 1;
	char scratch[8], *text;
	uint8_t *out;
	int hi = -1;

	ERRBUF(err, errlen, scratch);
	*buf = NULL;
	*len = 0;
	text = read_small(path, NLHEX_TEXT_MAX, &tlen, err, errlen);
	if (!text)
		return -(errno ? errno : EIO);
	out = malloc(tlen / 2 + 1);
	if (!out) {
		free(text);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; i < tlen; i++) {
		int c = (unsigned char)text[i], v;

		if (c == '#') {
			while (i < tlen && text[i] != '\n')
				i++;
			line++;
			continue;
		}
		if (c == '\n')
			line++;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		v = hexval(c);
		if (v < 0) {
			snprintf(err, errlen, "%s:%u: not a hex digit: '%c'", path, line,
				 c >= 0x20 && c < 0x7f ? c : '?');
			goto bad;
		}
		if (hi < 0) {
			hi = v;
		} else {
			out[o++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		snprintf(err, errlen, "%s: odd number of hex digits", path);
		goto bad;
	}
	if (o > DLH_REPLY_MAX) {
		snprintf(err, errlen, "%s: more than %u bytes", path, DLH_REPLY_MAX);
		goto bad;
	}
	free(text);
	*buf = out;
	*len = o;
	return 0;
bad:
	free(text);
	free(out);
	return -EINVAL;
}

int dlh_nlhex_write(const char *path, const char *comment, const void *buf,
		    size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	char tmp[4096 + 8], scratch[8];
	size_t off = 0;
	unsigned k = 0;
	FILE *fp;
	int e;

	ERRBUF(err, errlen, scratch);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	fp = fopen(tmp, "we");
	if (!fp) {
		e = errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		return -e;
	}
	if (comment) {
		for (const char *c = comment; *c;) {
			size_t n = strcspn(c, "\n");

			fprintf(fp, "# %.*s\n", (int)n, c);
			c += n + (c[n] == '\n');
		}
	}
	while (off < len) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		size_t n = len - off;

		if (n >= NLMSG_HDRLEN && nlh->nlmsg_len >= NLMSG_HDRLEN &&
		    nlh->nlmsg_len <= n) {
			const struct genlmsghdr *g = (const void *)(p + off + NLMSG_HDRLEN);

			n = NLMSG_ALIGN((size_t)nlh->nlmsg_len) <= n ?
			    NLMSG_ALIGN((size_t)nlh->nlmsg_len) : n;
			fprintf(fp, "# message %u: type %u flags 0x%x seq %u, %u bytes", ++k,
				nlh->nlmsg_type, nlh->nlmsg_flags, nlh->nlmsg_seq,
				nlh->nlmsg_len);
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE &&
			    nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
				fprintf(fp, ", genl cmd %u", g->cmd);
			fputc('\n', fp);
		} else {
			fprintf(fp, "# %zu bytes that are not a message\n", n);
		}
		for (size_t i = 0; i < n; i++)
			fprintf(fp, "%02x%s", p[off + i],
				(i + 1) % 16 == 0 || i + 1 == n ? "\n" : (i + 1) % 4 == 0 ? " " : "");
		off += n;
	}
	if (fflush(fp) || ferror(fp)) {
		e = errno ? errno : EIO;
		fclose(fp);
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		return -e;
	}
	fclose(fp);
	if (rename(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/* ================================================================ io */

struct dlh_io {
	int fixture;
	char dir[1024];               /* fixture dir, or record dir ("" none) */
	struct mnl_socket *nl;
	unsigned portid;
	uint32_t seq;
	uint16_t family;
	uint32_t group;               /* the "config" multicast group, 0 none */
	uint8_t *rbuf;                /* RECV_BUF bytes */
	uint8_t req[1024] __attribute__((aligned(8)));
};

static const char *req_file(enum dlh_req kind, const char *name, char *buf,
			    size_t len)
{
	switch (kind) {
	case DLH_REQ_FAMILY:
		return "family.nlhex";
	case DLH_REQ_DEV:
		return "dev-get.nlhex";
	case DLH_REQ_PORT:
		return "port-get.nlhex";
	case DLH_REQ_HEALTH:
		return "health-get.nlhex";
	case DLH_REQ_DIAGNOSE:
		snprintf(buf, len, "diagnose-%s.nlhex", name);
		return buf;
	case DLH_REQ_DUMP:
		snprintf(buf, len, "dump-%s.nlhex", name);
		return buf;
	}
	return "?";
}

static const char *req_what(enum dlh_req kind, const struct dlh_handle *h,
			    const char *name, char *buf, size_t len)
{
	static const char *const verb[] = {
		[DLH_REQ_FAMILY] = "genl family devlink", [DLH_REQ_DEV] = "devlink dev show",
		[DLH_REQ_PORT] = "devlink port show", [DLH_REQ_HEALTH] = "devlink health show",
		[DLH_REQ_DIAGNOSE] = "devlink health diagnose",
		[DLH_REQ_DUMP] = "devlink health dump show",
	};
	char hb[160];

	if (h && h->bus[0])
		snprintf(buf, len, "%s %s%s%s", verb[kind], dlh_handle_str(h, hb, sizeof(hb)),
			 name ? " reporter " : "", name ? name : "");
	else
		snprintf(buf, len, "%s", verb[kind]);
	return buf;
}

static size_t build_req(struct dlh_io *io, enum dlh_req kind,
			const struct dlh_handle *h, const char *name, uint32_t seq)
{
	void *b = io->req;
	size_t l = sizeof(io->req);

	switch (kind) {
	case DLH_REQ_FAMILY:
		return dlh_build_getfamily(b, l, seq);
	case DLH_REQ_DEV:
		return dlh_build_dev_dump(b, l, io->family, seq);
	case DLH_REQ_PORT:
		return dlh_build_port_dump(b, l, io->family, seq, h);
	case DLH_REQ_HEALTH:
		return dlh_build_reporter_dump(b, l, io->family, seq, h);
	case DLH_REQ_DIAGNOSE:
		return dlh_build_diagnose(b, l, io->family, seq, h, name);
	case DLH_REQ_DUMP:
		return dlh_build_dump_get(b, l, io->family, seq, h, name);
	}
	return 0;
}

static int is_dump(enum dlh_req kind)
{
	return kind != DLH_REQ_FAMILY && kind != DLH_REQ_DIAGNOSE;
}

/* Append the received chunk to the recording (kept whole per request). */
static int record_chunk(struct dlh_reply *rec, const void *p, size_t n)
{
	if (rec->len + n > DLH_REPLY_MAX)
		return -E2BIG;
	if (rec->len + n > rec->cap) {
		size_t cap = rec->cap ? rec->cap : 4096;
		uint8_t *nb;

		while (cap < rec->len + n)
			cap *= 2;
		nb = realloc(rec->buf, cap);
		if (!nb)
			return -ENOMEM;
		rec->buf = nb;
		rec->cap = cap;
	}
	memcpy(rec->buf + rec->len, p, n);
	rec->len += n;
	return 0;
}

static int sock_request(struct dlh_io *io, enum dlh_req kind,
			const struct dlh_handle *h, const char *name,
			struct dlh_reply *r, const char *what, char *err,
			size_t errlen)
{
	struct dlh_reply rec;
	uint16_t fam = kind == DLH_REQ_FAMILY ? GENL_ID_CTRL : io->family;
	uint32_t seq = ++io->seq ? io->seq : ++io->seq;
	size_t n = build_req(io, kind, h, name, seq);
	char e[200];
	int rc;

	if (!n) {
		snprintf(err, errlen, "%s: bad request arguments", what);
		return -EINVAL;
	}
	dlh_reply_init(&rec, 0);
	if (mnl_socket_sendto(io->nl, io->req, n) < 0) {
		rc = -(errno ? errno : EIO);
		snprintf(err, errlen, "%s: send: %s", what, strerror(-rc));
		return rc;
	}
	for (;;) {
		ssize_t got = mnl_socket_recvfrom(io->nl, io->rbuf, RECV_BUF);

		if (got < 0) {
			rc = -(errno ? errno : EIO);
			if (rc == -EINTR)
				continue;
			snprintf(err, errlen, "%s: receive: %s", what,
				 rc == -EAGAIN ? "no reply within 2 s" : strerror(-rc));
			break;
		}
		if (io->dir[0] && record_chunk(&rec, io->rbuf, (size_t)got) < 0)
			io->dir[0] = '\0';       /* too big to record: stop */
		rc = dlh_reply_feed(r, io->rbuf, (size_t)got, seq, io->portid, fam, e,
				    sizeof(e));
		if (rc < 0)
			snprintf(err, errlen, "%s: %s", what, e);
		if (rc != 0)
			break;
	}
	if (io->dir[0] && rec.len) {
		char path[1400], fb[DLH_NAME_MAX + 32];

		snprintf(path, sizeof(path), "%s/%s", io->dir, req_file(kind, name, fb, sizeof(fb)));
		if (dlh_nlhex_write(path, what, rec.buf, rec.len, e, sizeof(e)) < 0)
			log_warnx("devlink health: recording: %s", e);
	}
	dlh_reply_free(&rec);
	return rc < 0 ? rc : 0;
}

static int fixture_request(struct dlh_io *io, enum dlh_req kind,
			   const char *name, struct dlh_reply *r,
			   const char *what, char *err, size_t errlen)
{
	char path[1400], fb[DLH_NAME_MAX + 32], e[256];
	uint16_t fam = kind == DLH_REQ_FAMILY ? GENL_ID_CTRL : io->family;
	uint8_t *buf;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", io->dir, req_file(kind, name, fb, sizeof(fb)));
	rc = dlh_nlhex_load(path, &buf, &len, e, sizeof(e));
	if (rc == -ENOENT) {
		/* answer like a kernel without that part */
		if (kind == DLH_REQ_DEV || kind == DLH_REQ_PORT)
			return 0;
		rc = kind == DLH_REQ_FAMILY ? -ENOENT : -EOPNOTSUPP;
		snprintf(err, errlen, "%s: %s (no %s)", what, strerror(-rc), path);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		return rc;
	}
	rc = dlh_reply_feed(r, buf, len, 0, 0, fam, e, sizeof(e));
	free(buf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s: %s", what, path, e);
		return rc;
	}
	if (rc == 0 && !r->done) {
		snprintf(err, errlen, "%s: %s: reply ends without NLMSG_DONE or ack", what, path);
		return -EBADMSG;
	}
	return 0;
}

int dlh_io_request(struct dlh_io *io, enum dlh_req kind,
		   const struct dlh_handle *h, const char *name,
		   struct dlh_reply *r, char *err, size_t errlen)
{
	char what[256], scratch[8];

	ERRBUF(err, errlen, scratch);
	req_what(kind, h, name, what, sizeof(what));
	dlh_reply_init(r, is_dump(kind));
	if (!io || (kind != DLH_REQ_FAMILY && !io->family) ||
	    ((kind == DLH_REQ_DIAGNOSE || kind == DLH_REQ_DUMP) && !good_token(name))) {
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	return io->fixture ? fixture_request(io, kind, name, r, what, err, errlen) :
			     sock_request(io, kind, h, name, r, what, err, errlen);
}

static int resolve_family(struct dlh_io *io, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	size_t off;
	int rc = dlh_io_request(io, DLH_REQ_FAMILY, NULL, NULL, &r, err, errlen);

	if (rc == 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "genl family devlink: no reply");
		dlh_reply_for_each(&r, nlh, off) {
			rc = dlh_parse_family(nlh, r.len - off, &io->family, &io->group, err,
					      errlen);
			break;
		}
	}
	dlh_reply_free(&r);
	if (rc == -ENOENT && io->fixture == 0)
		snprintf(err, errlen, "the kernel has no devlink (genl family \"devlink\" unknown)");
	return rc;
}

uint16_t dlh_io_family(const struct dlh_io *io)
{
	return io ? io->family : 0;
}

struct dlh_io *dlh_io_socket(int nsfd, const char *record_dir, char *err,
			     size_t errlen)
{
	struct timeval tv = { .tv_sec = 2 };
	struct dlh_io *io;
	char nsd[128], scratch[8];
	int fd, one = 1, e;

	ERRBUF(err, errlen, scratch);
	io = calloc(1, sizeof(*io));
	if (!io || !(io->rbuf = malloc(RECV_BUF))) {
		free(io);
		snprintf(err, errlen, "devlink socket: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	if (record_dir)
		util_strlcpy(io->dir, record_dir, sizeof(io->dir));
	fd = netns_socket(nsfd, AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0 || !(io->nl = mnl_socket_fdopen(fd))) {
		e = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "generic netlink socket in %s: %s",
			 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
		goto fail;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(io->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		e = errno;
		snprintf(err, errlen, "generic netlink socket in %s: bind: %s",
			 nl_ns_desc(nsfd, nsd, sizeof(nsd)), strerror(e));
		goto fail;
	}
	io->portid = mnl_socket_get_portid(io->nl);
	io->seq = (uint32_t)time(NULL);
	if ((e = -resolve_family(io, err, errlen)) > 0)
		goto fail;
	return io;
fail:
	dlh_io_close(io);
	errno = e;
	return NULL;
}

struct dlh_io *dlh_io_fixture(const char *dir, char *err, size_t errlen)
{
	struct dlh_io *io;
	char scratch[8];
	int e;

	ERRBUF(err, errlen, scratch);
	if (!dir || !*dir || strlen(dir) >= sizeof(io->dir)) {
		snprintf(err, errlen, "devlink fixture: bad directory");
		errno = EINVAL;
		return NULL;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		snprintf(err, errlen, "devlink fixture: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	io->fixture = 1;
	util_strlcpy(io->dir, dir, sizeof(io->dir));
	if ((e = -resolve_family(io, err, errlen)) > 0) {
		dlh_io_close(io);
		errno = e;
		return NULL;
	}
	return io;
}

void dlh_io_close(struct dlh_io *io)
{
	if (!io)
		return;
	if (io->nl)
		mnl_socket_close(io->nl);
	free(io->rbuf);
	free(io);
}

/* ================================================================ events */

struct dlh_mon {
	struct dlh_io *io;           /* the socket (joined to the group) */
	int lost;                    /* ENOBUFS since the last dispatch */
};

struct dlh_mon *dlh_mon_open(int nsfd, char *err, size_t errlen)
{
	struct dlh_mon *m;
	char scratch[8];
	int fd, fl, e;

	ERRBUF(err, errlen, scratch);
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "devlink monitor: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	m->io = dlh_io_socket(nsfd, NULL, err, errlen);
	if (!m->io) {
		e = errno;
		free(m);
		errno = e;
		return NULL;
	}
	fd = mnl_socket_get_fd(m->io->nl);
	if (!m->io->group) {
		snprintf(err, errlen, "devlink monitor: no \"%s\" multicast group",
			 DEVLINK_GENL_MCGRP_CONFIG_NAME);
		e = ENOENT;
		goto fail;
	}
	if (mnl_socket_setsockopt(m->io->nl, NETLINK_ADD_MEMBERSHIP, &m->io->group,
				  sizeof(m->io->group)) < 0 ||
	    (fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		e = errno;
		snprintf(err, errlen, "devlink monitor: %s", strerror(e));
		goto fail;
	}
	return m;
fail:
	dlh_mon_close(m);
	errno = e;
	return NULL;
}

int dlh_mon_fd(const struct dlh_mon *m)
{
	return m && m->io ? mnl_socket_get_fd(m->io->nl) : -1;
}

int dlh_mon_parse(const void *buf, size_t len, uint16_t family,
		  void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		  char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char scratch[8], e[200];
	int rc, n = 0;
	size_t off;

	ERRBUF(err, errlen, scratch);
	dlh_reply_init(&r, 1);
	rc = dlh_reply_feed(&r, buf, len, 0, 0, family, err, errlen);
	if (rc < 0) {
		dlh_reply_free(&r);
		return rc;
	}
	dlh_reply_for_each(&r, nlh, off) {
		const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
		struct dlh_reporter rep;

		if (g->cmd != DEVLINK_CMD_HEALTH_REPORTER_RECOVER)
			continue;                 /* other devlink notifications */
		if (dlh_parse_reporter(nlh, r.len - off, family, &rep, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "devlink health event: %s", e);
			continue;
		}
		cb(&rep, arg);
		n++;
	}
	dlh_reply_free(&r);
	return n;
}

int dlh_mon_dispatch(struct dlh_mon *m,
		     void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		     char *err, size_t errlen)
{
	int fd = dlh_mon_fd(m), n = 0, lost = 0;
	char scratch[8];

	ERRBUF(err, errlen, scratch);
	if (fd < 0 || !cb) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	for (;;) {
		ssize_t got = recv(fd, m->io->rbuf, RECV_BUF, MSG_DONTWAIT | MSG_TRUNC);
		int rc;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == ENOBUFS) {
			lost = 1;             /* events were lost: re-read the state */
			continue;
		}
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (got < 0)
			return -errno;
		if ((size_t)got > RECV_BUF)
			continue;             /* truncated: cannot be parsed */
		rc = dlh_mon_parse(m->io->rbuf, (size_t)got, m->io->family, cb, arg, err,
				   errlen);
		if (rc > 0)
			n += rc;
	}
	return lost ? -ENOBUFS : n;
}

void dlh_mon_close(struct dlh_mon *m)
{
	if (!m)
		return;
	dlh_io_close(m->io);
	free(m);
}

int dlh_target_has(const struct dlh_target *t, const struct dlh_handle *h)
{
	if (!t || !h)
		return 0;
	if (h->has_port)
		return t->port.has_port && same_instance(&t->port, h) && t->port.port == h->port;
	return same_instance(&t->dev, h) || same_instance(&t->port, h);
}

/* ================================================================ target */

static int is_pci_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 7 || n >= DLH_NAME_MAX || !strchr(s, ':') || !strchr(s, '.'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (hexval((unsigned char)s[i]) < 0 && s[i] != ':' && s[i] != '.')
			return 0;
	return 1;
}

int dlh_find_target(struct dlh_io *io, const char *ifname, uint32_t ifindex,
		    const char *bus_info, struct dlh_target *t, char *err,
		    size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char scratch[8], e[200];
	int found_dev = 0, have_list = 0, rc;
	size_t off;

	ERRBUF(err, errlen, scratch);
	memset(t, 0, sizeof(*t));
	if (!ifname || !*ifname || strlen(ifname) >= 16) {
		snprintf(err, errlen, "devlink: bad interface name");
		return -EINVAL;
	}
	/* the netdev's devlink port */
	rc = dlh_io_request(io, DLH_REQ_PORT, NULL, NULL, &r, e, sizeof(e));
	if (rc == 0) {
		dlh_reply_for_each(&r, nlh, off) {
			struct dlh_port p;

			if (dlh_parse_port(nlh, r.len - off, io->family, &p, e, sizeof(e)) < 0) {
				log_debug("devlink %s: %s", ifname, e);
				continue;
			}
			if (!strcmp(p.netdev, ifname) &&
			    (!ifindex || !p.ifindex || p.ifindex == ifindex)) {
				t->port = p.h;
				break;
			}
		}
	} else {
		log_debug("devlink %s: %s", ifname, e);
	}
	dlh_reply_free(&r);
	if (t->port.bus[0] && !strcmp(t->port.bus, "pci")) {
		t->dev = t->port;
		t->dev.has_port = 0;
	}
	/* the instances: the one nesting the port's, and a check of bus_info */
	rc = dlh_io_request(io, DLH_REQ_DEV, NULL, NULL, &r, e, sizeof(e));
	if (rc == 0) {
		dlh_reply_for_each(&r, nlh, off) {
			struct dlh_dev d;

			if (dlh_parse_dev(nlh, r.len - off, io->family, &d, e, sizeof(e)) < 0)
				continue;
			have_list = 1;
			for (unsigned i = 0; !t->dev.bus[0] && t->port.bus[0] &&
			     i < d.nnested; i++)
				if (same_instance(&d.nested[i], &t->port))
					t->dev = d.h;
			if (bus_info && !strcmp(d.h.bus, "pci") && !strcmp(d.h.dev, bus_info))
				found_dev = 1;
		}
	}
	dlh_reply_free(&r);
	if (!t->dev.bus[0] && is_pci_name(bus_info) && (found_dev || !have_list)) {
		util_strlcpy(t->dev.bus, "pci", sizeof(t->dev.bus));
		util_strlcpy(t->dev.dev, bus_info, sizeof(t->dev.dev));
	}
	if (!t->dev.bus[0] && !t->port.bus[0]) {
		snprintf(err, errlen, "no devlink port for %s%s%s", ifname,
			 bus_info && *bus_info ? " and no devlink instance pci/" : "",
			 bus_info && *bus_info ? bus_info : "");
		return -ENODEV;
	}
	return 0;
}

/* ================================================================ state */

void dlh_state_free(struct dlh_state *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < DLH_MAX_REPORTERS; i++) {
		dlh_diag_free(&st->diag[i]);
		dlh_reply_free(&st->raw[i]);
	}
	memset(st, 0, sizeof(*st));
}

static int rep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dlh_reporter *)a)->name,
		      ((const struct dlh_reporter *)b)->name);
}

/* HEALTH_REPORTER_GET of one instance: keep its device reporters and the
 * reporters of t's port; a reporter name already kept is skipped. */
static int read_reporters(struct dlh_io *io, const struct dlh_handle *inst,
			  const struct dlh_target *t, struct dlh_state *st,
			  char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	size_t off;
	char e[200];
	int rc = dlh_io_request(io, DLH_REQ_HEALTH, inst, NULL, &r, err, errlen);

	st->requests++;
	if (rc < 0) {
		dlh_reply_free(&r);
		return rc;
	}
	dlh_reply_for_each(&r, nlh, off) {
		struct dlh_reporter rep;
		int dup = 0;

		if (dlh_parse_reporter(nlh, r.len - off, io->family, &rep, e, sizeof(e)) < 0) {
			char hb[120];

			snprintf(err, errlen, "devlink health show %s: %s",
				 dlh_handle_str(inst, hb, sizeof(hb)), e);
			dlh_reply_free(&r);
			return -EBADMSG;
		}
		if (!same_instance(&rep.h, inst))
			continue;                     /* old kernels dump them all */
		if (rep.h.has_port && !(t->port.has_port && same_instance(&rep.h, &t->port) &&
					rep.h.port == t->port.port))
			continue;                     /* another port's */
		for (unsigned i = 0; i < st->n; i++)
			dup |= !strcmp(st->rep[i].name, rep.name);
		if (dup || st->n >= DLH_MAX_REPORTERS)
			continue;
		st->rep[st->n++] = rep;
	}
	dlh_reply_free(&r);
	return 0;
}

static int wanted(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

int dlh_read_state(struct dlh_io *io, const struct dlh_target *t,
		   const char *const *diagnose, const struct dlh_state *prev,
		   struct dlh_state *st, char *err, size_t errlen)
{
	uint64_t t0 = loop_mono_ns();
	char scratch[8], hb[2][120];
	int rc = 0;

	ERRBUF(err, errlen, scratch);
	memset(st, 0, sizeof(*st));
	if (!io || !t) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	st->family = io->family;
	st->real_ns = loop_real_ns();
	st->mono_ns = t0;
	snprintf(st->handles, sizeof(st->handles), "%s%s%s",
		 t->dev.bus[0] ? dlh_handle_str(&t->dev, hb[0], sizeof(hb[0])) : "",
		 t->dev.bus[0] && t->port.bus[0] ? " " : "",
		 t->port.bus[0] ? dlh_handle_str(&t->port, hb[1], sizeof(hb[1])) : "");
	/* the device instance, then the port's when it is another one; a
	 * kernel or device without health answers EOPNOTSUPP: no reporters */
	for (int k = 0; k < 2; k++) {
		struct dlh_handle inst = k ? t->port : t->dev;
		int r;

		inst.has_port = 0;
		if (!inst.bus[0] || (k && same_instance(&t->port, &t->dev)))
			continue;
		r = read_reporters(io, &inst, t, st, k && rc < 0 ? hb[0] : err,
				   k && rc < 0 ? sizeof(hb[0]) : errlen);
		if (r < 0 && r != -EOPNOTSUPP && rc >= 0)
			rc = r;
	}
	if (rc < 0) {
		st->cost_ns = loop_mono_ns() - t0;
		return rc == -ENODEV ? -ENXIO : rc;   /* the instance went away */
	}
	qsort(st->rep, st->n, sizeof(st->rep[0]), rep_cmp);
	for (unsigned i = 0; i < st->n; i++) {
		struct dlh_reporter *rep = &st->rep[i];

		st->diag_rc[i] = 1;
		if (prev)
			for (unsigned k = 0; k < prev->n; k++)
				if (!strcmp(prev->rep[k].name, rep->name))
					st->recover_seen_ns[i] =
						rep->recover_count > prev->rep[k].recover_count ?
						st->real_ns :
						rep->recover_count == prev->rep[k].recover_count ?
						prev->recover_seen_ns[k] : 0;
		if (!wanted(diagnose, rep->name))
			continue;
		st->requests++;
		rc = dlh_io_request(io, DLH_REQ_DIAGNOSE, &rep->h, rep->name, &st->raw[i],
				    st->diag_err[i], sizeof(st->diag_err[i]));
		if (rc == 0)
			rc = dlh_parse_fmsg(&st->raw[i], io->family,
					    DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, rep->name,
					    &st->diag[i], NULL, st->diag_err[i],
					    sizeof(st->diag_err[i]));
		if (rc == 0)
			st->diag_real_ns[i] = st->real_ns;
		if (rc < 0) {
			dlh_reply_free(&st->raw[i]);
			if (rc == -ENOMEM) {
				st->cost_ns = loop_mono_ns() - t0;
				snprintf(err, errlen, "%s", strerror(ENOMEM));
				return rc;
			}
		}
		st->diag_rc[i] = rc;
	}
	st->cost_ns = loop_mono_ns() - t0;
	return 0;
}

/* The counter names of one reporter's own fields, in layout order. */
static unsigned fixed_fields(const struct dlh_reporter *r, const char **f,
			     uint64_t *v)
{
	unsigned n = 0;

	f[n] = "state", v[n++] = r->state;
	f[n] = "error_count", v[n++] = r->error_count;
	f[n] = "recover_count", v[n++] = r->recover_count;
	if (r->have & DLH_HAVE_RECOVER) {
		f[n] = "grace_period_ms", v[n++] = r->grace_period_ms;
		if (r->have & DLH_HAVE_BURST)
			f[n] = "burst_period_ms", v[n++] = r->burst_period_ms;
		f[n] = "auto_recover", v[n++] = r->auto_recover;
	}
	if (r->have & DLH_HAVE_DUMP) {
		f[n] = "auto_dump", v[n++] = r->auto_dump;
		f[n] = "dump_time_ns", v[n++] = r->dump_ts_ns;
	}
	return n;
}

/* Names, values, widths of st; names are malloc'd into names[]. Returns the
 * count, or -ENOMEM / -E2BIG over cap. */
static int state_flatten(const struct dlh_state *st, char **names,
			 uint64_t *vals, uint8_t *width, unsigned cap)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->n; i++) {
		const struct dlh_reporter *r = &st->rep[i];
		const char *f[8];
		uint64_t v[8];
		unsigned k = fixed_fields(r, f, v);

		if (n + k + st->diag[i].n > cap)
			goto big;
		for (unsigned j = 0; j < k; j++, n++) {
			char buf[DLH_PATH_MAX];

			snprintf(buf, sizeof(buf), "devlink/%s/%s", r->name, f[j]);
			if (!(names[n] = strdup(buf)))
				goto nomem;
			vals[n] = v[j];
			width[n] = CNT_W64;
		}
		for (unsigned j = 0; j < st->diag[i].n; j++, n++) {
			if (!(names[n] = strdup(st->diag[i].names[j])))
				goto nomem;
			vals[n] = st->diag[i].vals[j];
			width[n] = st->diag[i].width[j];
		}
	}
	return (int)n;
big:
	for (unsigned j = 0; j < n; j++)
		free(names[j]);
	return -E2BIG;
nomem:
	for (unsigned j = 0; j < n; j++)
		free(names[j]);
	return -ENOMEM;
}

struct clayout *dlh_state_layout(const struct dlh_state *st, uint64_t **vals)
{
	struct clayout *lay = NULL;
	unsigned cap = 0;
	char **names;
	uint8_t *width;
	int n;

	*vals = NULL;
	for (unsigned i = 0; st && i < st->n; i++)
		cap += 8 + st->diag[i].n;
	names = calloc(cap ? cap : 1, sizeof(*names));
	width = calloc(cap ? cap : 1, 1);
	*vals = calloc(cap ? cap : 1, sizeof(**vals));
	n = names && width && *vals && st ? state_flatten(st, names, *vals, width, cap) : -ENOMEM;
	if (n >= 0) {
		lay = clayout_new((unsigned)n, (const char *const *)names, width);
		for (int i = 0; i < n; i++)
			free(names[i]);
	}
	free(names);
	free(width);
	if (!lay) {
		free(*vals);
		*vals = NULL;
	}
	return lay;
}

static int jadd(struct json_object *o, const char *k, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, k, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int reporter_json(const struct dlh_state *st, unsigned i,
			 struct json_object *arr)
{
	const struct dlh_reporter *r = &st->rep[i];
	struct json_object *o = json_object_new_object(), *tree = NULL;
	char hb[160], e[160];
	int rc = 0;

	if (!o)
		return -ENOMEM;
	rc |= jadd(o, "name", json_object_new_string(r->name));
	rc |= jadd(o, "handle", json_object_new_string(dlh_handle_str(&r->h, hb, sizeof(hb))));
	rc |= jadd(o, "state", r->state == 0 ? json_object_new_string("healthy") :
		   r->state == 1 ? json_object_new_string("error") :
		   json_object_new_int(r->state));
	rc |= jadd(o, "error_count", json_object_new_uint64(r->error_count));
	rc |= jadd(o, "recover_count", json_object_new_uint64(r->recover_count));
	if (r->have & DLH_HAVE_RECOVER) {
		rc |= jadd(o, "grace_period_ms", json_object_new_uint64(r->grace_period_ms));
		if (r->have & DLH_HAVE_BURST)
			rc |= jadd(o, "burst_period_ms", json_object_new_uint64(r->burst_period_ms));
		rc |= jadd(o, "auto_recover", json_object_new_boolean(r->auto_recover));
	}
	if (r->have & DLH_HAVE_DUMP)
		rc |= jadd(o, "auto_dump", json_object_new_boolean(r->auto_dump));
	if (r->have & DLH_HAVE_DUMP_TS) {
		rc |= jadd(o, "dump_time_ns", json_object_new_uint64(r->dump_ts_ns));
		rc |= jadd(o, "dump_ts_ms", json_object_new_uint64(r->dump_ts_ms));
	}
	if (st->recover_seen_ns[i])
		rc |= jadd(o, "recover_seen_ns", json_object_new_uint64(st->recover_seen_ns[i]));
	if (st->raw[i].len) {
		if (dlh_parse_fmsg(&st->raw[i], st->family, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE,
				   r->name, NULL, &tree, e, sizeof(e)) == 0) {
			rc |= jadd(o, "diagnose", tree);
			rc |= jadd(o, "diagnose_time_ns",
				   json_object_new_uint64(st->diag_real_ns[i]));
		} else {
			rc |= jadd(o, "diagnose_error", json_object_new_string(e));
		}
	}
	if (st->diag_rc[i] < 0 && !json_object_object_get_ex(o, "diagnose_error", NULL)) {
		rc |= jadd(o, "diagnose_error", json_object_new_string(st->diag_err[i]));
	}
	if (rc || json_object_array_add(arr, o) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return 0;
}

int dlh_state_to_json(const struct dlh_state *st, struct json_object *obj)
{
	struct json_object *arr;
	int rc = 0;

	if (!st || !obj || !json_object_is_type(obj, json_type_object))
		return -EINVAL;
	arr = json_object_new_array();
	if (!arr)
		return -ENOMEM;
	for (unsigned i = 0; i < st->n && !rc; i++)
		rc = reporter_json(st, i, arr);
	if (rc) {
		json_object_put(arr);
		return rc;
	}
	rc |= jadd(obj, "time_ns", json_object_new_uint64(st->real_ns));
	rc |= jadd(obj, "handles", json_object_new_string(st->handles));
	rc |= jadd(obj, "cost_us", json_object_new_uint64(st->cost_ns / 1000));
	rc |= jadd(obj, "reporters", arr);
	if (!st->n)
		rc |= jadd(obj, "note", json_object_new_string("no devlink health"));
	return rc ? -ENOMEM : 0;
}

/* ================================================================ source */

struct dsrc {
	struct dlh_io *io;
	struct dlh_target t;
	char *diag[DLH_MAX_REPORTERS + 1];   /* owned, NULL-terminated */
	uint64_t interval_ns, min_refresh_ns;
	struct dlh_state *st;                /* last good read, or NULL */
	struct clayout *lay;
	uint64_t *vals;
	int failed;                          /* last query failed: its -errno */
	int refresh;
	int narrow;                          /* next query: once[] only */
	char *once[DLH_MAX_REPORTERS + 1];   /* owned, NULL-terminated */
	int nsfd;                            /* where io was made (borrowed) */
	uint64_t last_ns;                    /* last query (mono), 0 none */
	uint64_t queries, total_ns, last_cost_ns;
	char ifname[16];
};

static void dsrc_free(struct dsrc *d)
{
	if (!d)
		return;
	dlh_io_close(d->io);
	for (unsigned i = 0; d->diag[i]; i++)
		free(d->diag[i]);
	for (unsigned i = 0; d->once[i]; i++)
		free(d->once[i]);
	if (d->st) {
		dlh_state_free(d->st);
		free(d->st);
	}
	clayout_unref(d->lay);
	free(d->vals);
	free(d);
}

int src_devlink_health_open(struct src *s, const struct src_ctx *ctx,
			    const struct dlh_opts *o)
{
	static const char *const def_diag[] = { "vnic", "rx", NULL };
	const char *const *dl = o && o->diagnose ? o->diagnose : def_diag;
	struct dsrc *d;
	char e[256] = "", nsd[128];
	int nsl[2], nns = 0, rc = -ENODEV;

	s->err[0] = '\0';
	if (!ctx || !ctx->ifname || !*ctx->ifname) {
		snprintf(s->err, sizeof(s->err), "devlink: no interface");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(s->err, sizeof(s->err), "devlink: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	util_strlcpy(d->ifname, ctx->ifname, sizeof(d->ifname));
	for (unsigned i = 0, k = 0; dl[i] && k < DLH_MAX_REPORTERS; i++) {
		if (!good_token(dl[i]))
			continue;
		if (!(d->diag[k++] = strdup(dl[i]))) {
			dsrc_free(d);
			snprintf(s->err, sizeof(s->err), "devlink: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	d->interval_ns = o && o->interval_ns ? o->interval_ns : 10000000000ull;
	d->min_refresh_ns = o && o->min_refresh_ns ? o->min_refresh_ns : 1000000000ull;

	if (o && o->fixture_dir) {
		d->io = dlh_io_fixture(o->fixture_dir, e, sizeof(e));
		rc = d->io ? dlh_find_target(d->io, ctx->ifname, 0, o->bus_info, &d->t, e,
					     sizeof(e)) : -(errno ? errno : EIO);
	} else {
		/* the port's namespace first; a devlink instance stays where it
		 * was when its netdev is moved into another one */
		nsl[nns++] = ctx->netns_fd;
		if (ctx->netns_fd >= 0)
			nsl[nns++] = -1;
		for (int i = 0; i < nns; i++) {
			d->io = dlh_io_socket(nsl[i], o ? o->record_dir : NULL, e, sizeof(e));
			if (!d->io) {
				rc = -(errno ? errno : EIO);
				if (rc == -ENOENT)
					break;        /* no devlink in this kernel */
				continue;
			}
			rc = dlh_find_target(d->io, ctx->ifname,
					     nsl[i] == ctx->netns_fd ? (uint32_t)ctx->ifindex : 0,
					     o ? o->bus_info : NULL, &d->t, e, sizeof(e));
			if (rc == 0) {
				d->nsfd = nsl[i];
				break;
			}
			dlh_io_close(d->io);
			d->io = NULL;
		}
	}
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "devlink %s (%.48s): %.170s", ctx->ifname,
			 o && o->fixture_dir ? o->fixture_dir :
			 nl_ns_desc(ctx->netns_fd, nsd, sizeof(nsd)), e);
		dsrc_free(d);
		return rc;
	}
	s->priv = d;
	return 0;
}

static int dsrc_open(struct src *s, const struct src_ctx *ctx)
{
	return src_devlink_health_open(s, ctx, NULL);
}

/* A diagnose that failed this time, or was not asked for this time (a
 * narrowed refresh), keeps what it gave last time, values and reply, with
 * its older time: a transient firmware error is a delta of 0, never a
 * spike or a gap, and the layout stays the same. */
static void carry_over(struct dlh_state *st, struct dlh_state *old, char *note,
		       size_t len)
{
	for (unsigned i = 0; i < st->n; i++) {
		if (st->diag_rc[i] == 0 || st->diag_rc[i] == -EOPNOTSUPP)
			continue;
		if (st->diag_rc[i] < 0 && !note[0])
			snprintf(note, len, "devlink health diagnose %s: %s", st->rep[i].name,
				 st->diag_err[i]);
		for (unsigned k = 0; old && k < old->n; k++) {
			if (strcmp(old->rep[k].name, st->rep[i].name) || !old->diag[k].n)
				continue;
			dlh_diag_free(&st->diag[i]);
			dlh_reply_free(&st->raw[i]);
			st->diag[i] = old->diag[k];
			st->raw[i] = old->raw[k];
			st->diag_real_ns[i] = old->diag_real_ns[k];
			memset(&old->diag[k], 0, sizeof(old->diag[k]));
			memset(&old->raw[k], 0, sizeof(old->raw[k]));
		}
	}
}

static int dsrc_query(struct src *s, struct dsrc *d)
{
	struct dlh_state *st = calloc(1, sizeof(*st));
	struct clayout *lay;
	uint64_t *vals;
	char e[220];
	int rc;

	if (!st)
		return -ENOMEM;
	rc = dlh_read_state(d->io, &d->t, (const char *const *)(d->narrow ? d->once : d->diag),
			    d->st, st, e, sizeof(e));
	d->narrow = 0;
	d->queries++;
	d->total_ns += st->cost_ns;
	d->last_cost_ns = st->cost_ns;
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "devlink %s: %s", d->ifname, e);
		dlh_state_free(st);
		free(st);
		return rc;
	}
	s->err[0] = '\0';
	carry_over(st, d->st, s->err, sizeof(s->err));
	lay = dlh_state_layout(st, &vals);
	if (!lay) {
		snprintf(s->err, sizeof(s->err), "devlink %s: %s", d->ifname, strerror(ENOMEM));
		dlh_state_free(st);
		free(st);
		return -ENOMEM;
	}
	/* the same names as before: keep the layout, so that the recorder
	 * sees one layout for as long as the reporters do not change */
	if (d->lay && clayout_equal(d->lay, lay)) {
		clayout_unref(lay);
	} else {
		clayout_unref(d->lay);
		d->lay = lay;
	}
	free(d->vals);
	d->vals = vals;
	if (d->st) {
		dlh_state_free(d->st);
		free(d->st);
	}
	d->st = st;
	return 0;
}

static int dsrc_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct dsrc *d = s->priv;
	uint64_t now = loop_mono_ns(), age;
	int due;

	if (!d)
		return -EINVAL;
	age = now - d->last_ns;
	due = !d->last_ns || age >= d->interval_ns ||
	      (d->refresh && age >= d->min_refresh_ns);
	if (due) {
		d->last_ns = now ? now : 1;
		d->refresh = 0;
		d->failed = dsrc_query(s, d);
	}
	if (d->failed < 0)
		return d->failed;
	*lay = d->lay;
	*vals = d->vals;
	return 0;
}

static void dsrc_close(struct src *s)
{
	dsrc_free(s->priv);
	s->priv = NULL;
}

const struct src_ops src_devlink_health_ops = {
	.name = "devlink",
	.open = dsrc_open,
	.read = dsrc_read,
	.close = dsrc_close,
};

void src_devlink_health_refresh(struct src *s, const char *const *diagnose)
{
	struct dsrc *d = s ? s->priv : NULL;
	unsigned k = 0;

	if (!d)
		return;
	d->refresh = 1;
	for (unsigned i = 0; d->once[i]; i++) {
		free(d->once[i]);
		d->once[i] = NULL;
	}
	d->narrow = diagnose != NULL;
	for (unsigned i = 0; diagnose && diagnose[i] && k < DLH_MAX_REPORTERS; i++) {
		if (!good_token(diagnose[i]))
			continue;
		if (!(d->once[k++] = strdup(diagnose[i]))) {
			d->narrow = 0;            /* out of memory: the full list */
			break;
		}
	}
}

const struct dlh_target *src_devlink_health_target(const struct src *s)
{
	const struct dsrc *d = s ? s->priv : NULL;

	return d ? &d->t : NULL;
}

struct dlh_mon *src_devlink_health_mon_open(const struct src *s, char *err,
					    size_t errlen)
{
	const struct dsrc *d = s ? s->priv : NULL;

	if (!d || d->io->fixture) {
		snprintf(err, errlen, "devlink monitor: %s",
			 d ? "recorded replies have no events" : strerror(EINVAL));
		errno = d ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return dlh_mon_open(d->nsfd, err, errlen);
}

const struct dlh_state *src_devlink_health_state(const struct src *s)
{
	const struct dsrc *d = s ? s->priv : NULL;

	return d ? d->st : NULL;
}

void src_devlink_health_cost(const struct src *s, uint64_t *queries,
			     uint64_t *total_ns, uint64_t *last_ns)
{
	const struct dsrc *d = s ? s->priv : NULL;

	if (queries)
		*queries = d ? d->queries : 0;
	if (total_ns)
		*total_ns = d ? d->total_ns : 0;
	if (last_ns)
		*last_ns = d ? d->last_cost_ns : 0;
}

/* One reporter's current GET fields (a fresh HEALTH_REPORTER_GET). */
static int fresh_reporter(struct dsrc *d, const char *name, struct dlh_reporter *out,
			  char *err, size_t errlen)
{
	struct dlh_state *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	rc = dlh_read_state(d->io, &d->t, NULL, NULL, st, err, errlen);
	if (rc == 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "no reporter %s", name);
		for (unsigned i = 0; i < st->n; i++)
			if (!strcmp(st->rep[i].name, name)) {
				*out = st->rep[i];
				rc = 0;
			}
	}
	dlh_state_free(st);
	free(st);
	return rc;
}

int src_devlink_health_dump(struct src *s, const char *name,
			    uint64_t newer_than_real_ns, size_t max_bytes,
			    struct json_object **out, int *retaken, char *err,
			    size_t errlen)
{
	struct dsrc *d = s ? s->priv : NULL;
	struct dlh_reporter before, after;
	struct dlh_reply r;
	char scratch[8], e[200];
	int rc;

	ERRBUF(err, errlen, scratch);
	*out = NULL;
	if (retaken)
		*retaken = 0;
	if (!d || !good_token(name)) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	if ((rc = fresh_reporter(d, name, &before, err, errlen)) < 0)
		return rc;
	if (!(before.have & DLH_HAVE_DUMP_TS)) {
		snprintf(err, errlen, "reporter %s has no stored dump", name);
		return 0;
	}
	if (!before.dump_ts_ns || before.dump_ts_ns <= newer_than_real_ns) {
		snprintf(err, errlen, "reporter %s: stored dump %s", name,
			 before.dump_ts_ns ? "older than the stall" : "has no wall-clock time");
		return 0;
	}
	rc = dlh_io_request(d->io, DLH_REQ_DUMP, &before.h, name, &r, err, errlen);
	if (rc == 0 && r.len > max_bytes) {
		snprintf(err, errlen, "reporter %s: dump of %zu bytes, over the %zu limit", name,
			 r.len, max_bytes);
		dlh_reply_free(&r);
		return 0;
	}
	if (rc == 0)
		rc = dlh_parse_fmsg(&r, d->io->family, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET,
				    name, NULL, out, err, errlen);
	dlh_reply_free(&r);
	if (rc < 0)
		return rc;
	if (retaken && fresh_reporter(d, name, &after, e, sizeof(e)) == 0 &&
	    after.dump_ts_ns != before.dump_ts_ns)
		*retaken = 1;
	return 0;
}
