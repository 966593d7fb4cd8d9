/* src_rdma_nl: RDMA port hw_counters over RDMA netlink
 * (RDMA_NLDEV_CMD_STAT_GET), on lib/nl's request path: the socket is made
 * in the port's namespace and no receive waits. See src_rdma.h. */
#include "collectors/src_rdma.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "lib/log.h"
#include "lib/nl.h"
#include "lib/util.h"

static const struct nl_pol rdma_pol[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE + 1] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_PORT_INDEX] = { MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_DEV_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] = { MNL_TYPE_NUL_STRING, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE] = { MNL_TYPE_U64, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS] = { MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY] = { MNL_TYPE_NESTED, 0 },
};

#define RDMA_TB_MAX RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE

const struct nlmsghdr *src_rdma_nl_msg_check(const void *buf, size_t len, char *err,
					     size_t errlen)
{
	struct nlmsghdr h = { 0 };

	if (buf && len >= sizeof(h))
		memcpy(&h, buf, sizeof(h));
	if (len > SRC_RDMA_NL_MAX_MSG || nl_msgs_check(buf, len) < 0) {
		util_errf(err, errlen, "rdma netlink: truncated message or bad nlmsg_len "
			  "(%u, in %zu bytes)", h.nlmsg_len, len);
		return NULL;
	}
	return buf;
}

size_t src_rdma_nl_build_stat_get(void *buf, size_t len, uint32_t seq,
				  uint32_t dev_index, uint32_t port)
{
	struct nlmsghdr *nlh;

	if (len < MNL_NLMSG_HDRLEN + 2 * MNL_ALIGN(sizeof(struct nlattr) + 4))
		return 0;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	return nlh->nlmsg_len;
}

int src_rdma_nl_parse_stat(const void *buf, size_t len,
			   struct src_rdma_nl_stat *st, char *err, size_t errlen)
{
	const struct nlattr *tb[RDMA_TB_MAX + 1] = { 0 };
	struct nl_tb t = { rdma_pol, RDMA_TB_MAX, tb };
	const struct nlmsghdr *nlh = src_rdma_nl_msg_check(buf, len, err, errlen);
	const struct nlattr *e;

	st->n = 0;
	st->dev_index = 0;
	st->port = 0;
	if (!nlh)
		return -EINVAL;
	if (mnl_attr_parse(nlh, 0, nl_attr_cb, &t) != MNL_CB_OK) {
		util_errf(err, errlen, "rdma netlink STAT_GET reply: malformed attribute: %s",
			  strerror(errno));
		return -EINVAL;
	}
	if (tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		st->dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		st->port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (!tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) {
		util_errf(err, errlen, "rdma netlink STAT_GET reply: no hw counters (RDMA_NLDEV_ATTR_STAT_HWCOUNTERS missing)");
		return -EINVAL;
	}
	mnl_attr_for_each_nested(e, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) {
		const struct nlattr *etb[RDMA_TB_MAX + 1] = { 0 };
		struct nl_tb et = { rdma_pol, RDMA_TB_MAX, etb };
		const char *name;

		if (mnl_attr_get_type(e) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
			continue;
		if (mnl_attr_parse_nested(e, nl_attr_cb, &et) != MNL_CB_OK) {
			util_errf(err, errlen, "rdma netlink STAT_GET reply: entry %u: malformed attribute: %s",
				  st->n, strerror(errno));
			return -EINVAL;
		}
		if (!etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] ||
		    !etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]) {
			util_errf(err, errlen, "rdma netlink STAT_GET reply: entry %u lacks %s",
				  st->n, etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] ?
				  "a value" : "a name");
			return -EINVAL;
		}
		name = mnl_attr_get_str(etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]);
		if (!*name || strlen(name) >= SRC_RDMA_NAMELEN || strchr(name, '/')) {
			util_errf(err, errlen, "rdma netlink STAT_GET reply: entry %u: bad counter name (%zu bytes)",
				  st->n, strlen(name));
			return -EINVAL;
		}
		if (st->n == SRC_RDMA_MAXC) {
			util_errf(err, errlen, "rdma netlink STAT_GET reply: more than %u counters",
				  SRC_RDMA_MAXC);
			return -E2BIG;
		}
		memcpy(st->name[st->n], name, strlen(name) + 1);
		st->val[st->n] = mnl_attr_get_u64(etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]);
		st->n++;
	}
	return 0;
}

int src_rdma_nl_parse_dev(const void *buf, size_t len, uint32_t *dev_index,
			  char *name, size_t namelen, char *err, size_t errlen)
{
	const struct nlattr *tb[RDMA_TB_MAX + 1] = { 0 };
	struct nl_tb t = { rdma_pol, RDMA_TB_MAX, tb };
	const struct nlmsghdr *nlh = src_rdma_nl_msg_check(buf, len, err, errlen);
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

struct rnl {
	struct nl_sock *ns;
	uint32_t dev_index;
	unsigned port;
	char label[96];
	struct src_rdma_nl_stat *st;
	uint64_t *vals;
	struct clayout *lay;
	/* per request */
	const char *want_dev;
	int found;
	char cb_err[200];
	char req[128] __attribute__((aligned(8)));
};

static int rnl_dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rnl *r = data;
	char name[64], e[128];
	uint32_t idx;

	if (src_rdma_nl_parse_dev(nlh, nlh->nlmsg_len, &idx, name, sizeof(name),
				  e, sizeof(e)) < 0) {
		log_debug("rdma-nl %s: %s (entry skipped)", r->label, e);
		return MNL_CB_OK;
	}
	if (!strcmp(name, r->want_dev)) {
		r->dev_index = idx;
		r->found = 1;
	}
	return MNL_CB_OK;
}

static int rnl_stat_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rnl *r = data;
	int rc = src_rdma_nl_parse_stat(nlh, nlh->nlmsg_len, r->st, r->cb_err,
					sizeof(r->cb_err));

	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	r->found = 1;
	return MNL_CB_OK;
}

static void rnl_free(struct rnl *r)
{
	if (!r)
		return;
	nl_sock_close(r->ns);
	clayout_unref(r->lay);
	free(r->st);
	free(r->vals);
	free(r);
}

/* One request; 0, or -errno with s->err naming the port, the command and
 * what went wrong (the parser's words when it refused the reply). */
static int rnl_talk(struct src *s, struct rnl *r, struct nlmsghdr *req,
		    mnl_cb_t cb, const char *cmd)
{
	char e[sizeof(s->err)];
	int rc;

	r->found = 0;
	r->cb_err[0] = '\0';
	rc = nl_sock_request(r->ns, req, cb, r, cmd, e, sizeof(e));
	if (rc < 0)
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: %s%s%s", r->label, e,
			  r->cb_err[0] ? ": " : "", r->cb_err);
	return rc;
}

static int rnl_open(struct src *s, const struct src_ctx *ctx)
{
	struct nlmsghdr *nlh;
	struct rnl *r;
	char e[sizeof(s->err)];
	int rc;

	s->err[0] = '\0';
	if (!ctx->rdma_dev || !util_valid_name(ctx->rdma_dev, 63) || ctx->rdma_port < 1) {
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: bad RDMA device/port \"%s\"/%u",
			  ctx->port_name ? ctx->port_name : "?",
			  ctx->rdma_dev ? ctx->rdma_dev : "(none)", ctx->rdma_port);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->st = malloc(sizeof(*r->st)))) {
		rnl_free(r);
		util_errf(s->err, sizeof(s->err), "rdma-nl %s/%u: out of memory",
			  ctx->rdma_dev, ctx->rdma_port);
		return -ENOMEM;
	}
	util_errf(r->label, sizeof(r->label), "%s/%u", ctx->rdma_dev, ctx->rdma_port);
	r->port = ctx->rdma_port;
	r->ns = nl_sock_open(ctx->netns_fd, NETLINK_RDMA, 0, e, sizeof(e));
	if (!r->ns) {
		rc = -(errno ? errno : EIO);
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: %s%s", r->label, e,
			  rc == -EPROTONOSUPPORT ? " (kernel without RDMA netlink)" : "");
		rnl_free(r);
		return rc;
	}
	/* Resolve the device name to its index. */
	nlh = mnl_nlmsg_put_header(r->req);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r->want_dev = ctx->rdma_dev;
	rc = rnl_talk(s, r, nlh, rnl_dev_cb, "RDMA_NLDEV_CMD_GET");
	r->want_dev = NULL;
	if (rc < 0) {
		rnl_free(r);
		return rc;
	}
	if (!r->found) {
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: no RDMA device \"%s\"",
			  r->label, ctx->rdma_dev);
		rnl_free(r);
		return -ENODEV;
	}
	s->priv = r;
	return 0;
}

/* A layout "hw_counters/<name>" for the names of the last reply. */
static int rnl_relayout(struct src *s, struct rnl *r)
{
	unsigned n = r->st->n, i;
	char **names = calloc(n ? n : 1, sizeof(*names));
	uint8_t *w = malloc(n ? n : 1);
	uint64_t *nv = calloc(n ? n : 1, sizeof(*nv));
	struct clayout *nl = NULL;

	for (i = 0; names && w && nv && i < n; i++) {
		if (asprintf(&names[i], "hw_counters/%s", r->st->name[i]) < 0) {
			names[i] = NULL;
			break;
		}
		w[i] = CNT_W32;
	}
	if (names && w && nv && i == n)
		nl = clayout_new(n, (const char *const *)names, w);
	for (unsigned j = 0; names && j < i; j++)
		free(names[j]);
	free(names);
	free(w);
	if (!nl) {
		free(nv);
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: out of memory", r->label);
		return -ENOMEM;
	}
	if (r->lay)
		log_info("rdma-nl %s: counter set changed (%u -> %u)", r->label,
			 r->lay->n, nl->n);
	clayout_unref(r->lay);
	r->lay = nl;
	free(r->vals);
	r->vals = nv;
	return 0;
}

static int rnl_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct rnl *r = s->priv;
	int rc, same;

	s->err[0] = '\0';
	if (!r)
		return -EBADF;
	if (!src_rdma_nl_build_stat_get(r->req, sizeof(r->req), 0, r->dev_index,
					r->port))
		return -EINVAL;
	rc = rnl_talk(s, r, (struct nlmsghdr *)r->req, rnl_stat_cb,
		      "RDMA_NLDEV_CMD_STAT_GET");
	if (rc == 0 && !r->found) {
		util_errf(s->err, sizeof(s->err), "rdma-nl %s: RDMA_NLDEV_CMD_STAT_GET: %s",
			  r->label, strerror(ENODATA));
		rc = -ENODATA;
	}
	if (rc < 0)
		return rc;
	/* Same names as the current layout? */
	same = r->lay && r->lay->n == r->st->n;
	for (unsigned i = 0; same && i < r->st->n; i++)
		same = !strncmp(r->lay->names[i], "hw_counters/", 12) &&
		       !strcmp(r->lay->names[i] + 12, r->st->name[i]);
	if (!same && (rc = rnl_relayout(s, r)) < 0)
		return rc;
	memcpy(r->vals, r->st->val, r->st->n * sizeof(uint64_t));
	*lay = r->lay;
	*vals = r->vals;
	return 0;
}

static void rnl_close(struct src *s)
{
	rnl_free(s->priv);
	s->priv = NULL;
}

const struct src_ops src_rdma_nl_ops = {
	.name = "rdma-nl",
	.open = rnl_open,
	.read = rnl_read,
	.close = rnl_close,
};
