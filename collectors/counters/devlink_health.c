/* devlink_health: requests, reply framing and the GET/PORT/DEV messages of
 * devlink health (see devlink_health.h for the wire format, with the kernel
 * functions that produce it, and the counter names; devlink_int.h for the
 * other parts). */
#include "collectors/counters/devlink_int.h"
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
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>


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

int dlh_i_same_instance(const struct dlh_handle *a, const struct dlh_handle *b)
{
	return a->bus[0] && !strcmp(a->bus, b->bus) && !strcmp(a->dev, b->dev);
}

/* A bus, device or reporter name we put into a request: bounded, printable,
 * no '/' (so the handle text stays unambiguous). */
int dlh_i_good_token(const char *s)
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

	if (!buf || len < REQ_MIN)
		return NULL;
	memset(buf, 0, MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct genlmsghdr)));
	nlh = nl_genl_put(buf, type, cmd, version);       /* lib/nl.h: the one way */
	nlh->nlmsg_flags |= NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

static int put_handle(struct nlmsghdr *nlh, const struct dlh_handle *h)
{
	if (!dlh_i_good_token(h->bus) || !dlh_i_good_token(h->dev))
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

	if (!nlh || !family || !h || !dlh_i_good_token(name) || put_handle(nlh, h) < 0)
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
const struct nlmsghdr *dlh_i_msg_check(const void *msg, size_t len,
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

int dlh_i_parse_top(const struct nlmsghdr *nlh, const struct nlattr **tb,
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
	    !dlh_i_good_token(h->bus) || !dlh_i_good_token(h->dev)) {
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
	nlh = dlh_i_msg_check(msg, len, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, "CTRL_CMD_GETFAMILY reply",
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
	nlh = dlh_i_msg_check(msg, len, family, DEVLINK_CMD_PORT_NEW, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	if ((rc = dlh_i_parse_top(nlh, tb, what, err, errlen)) < 0 ||
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
	nlh = dlh_i_msg_check(msg, len, family, DEVLINK_CMD_NEW, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	if ((rc = dlh_i_parse_top(nlh, tb, what, err, errlen)) < 0 ||
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
	nlh = dlh_i_msg_check(msg, len, family, -1, what, err, errlen);
	if (!nlh)
		return -EBADMSG;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != DEVLINK_CMD_HEALTH_REPORTER_GET &&
	    g->cmd != DEVLINK_CMD_HEALTH_REPORTER_RECOVER) {
		snprintf(err, errlen, "%s: genl command %u", what, g->cmd);
		return -EBADMSG;
	}
	if ((rc = dlh_i_parse_top(nlh, tb, what, err, errlen)) < 0 ||
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

