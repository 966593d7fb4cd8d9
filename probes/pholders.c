/* pholders: packet sockets holding an interface promiscuous. */
#include "probes/pholders.h"
#include "lib/json.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/packet_diag.h>
#include <linux/sock_diag.h>

static const struct nl_pol pd_pol[PACKET_DIAG_MAX + 1] = {
	[PACKET_DIAG_MCLIST] = { MNL_TYPE_BINARY, 0 },
	[PACKET_DIAG_UID] = { MNL_TYPE_U32, 0 },
};

struct pctx {
	int ifindex;
	struct pholders *out;
};

static int msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[PACKET_DIAG_MAX + 1] = { 0 };
	struct nl_tb t = { pd_pol, PACKET_DIAG_MAX, tb };
	struct pctx *c = arg;
	const struct packet_diag_msg *m;
	const struct packet_diag_mclist *ml;
	size_t n, len;
	int held = 0;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	m = mnl_nlmsg_get_payload(nlh);
	if (m->pdiag_family != AF_PACKET)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*m), nl_attr_cb, &t) < 0)
		return MNL_CB_ERROR;
	if (!tb[PACKET_DIAG_MCLIST])
		return MNL_CB_OK;
	len = mnl_attr_get_payload_len(tb[PACKET_DIAG_MCLIST]);
	ml = mnl_attr_get_payload(tb[PACKET_DIAG_MCLIST]);
	for (n = 0; (n + 1) * sizeof(*ml) <= len; n++)
		if (ml[n].pdmc_type == PACKET_MR_PROMISC && (int)ml[n].pdmc_index == c->ifindex)
			held = 1;
	if (!held)
		return MNL_CB_OK;
	if (c->out->n >= PHOLDERS_MAX) {
		c->out->more++;
		return MNL_CB_OK;
	}
	struct pholder *h = &c->out->h[c->out->n++];

	memset(h, 0, sizeof(*h));
	h->inode = m->pdiag_ino;
	h->uid = tb[PACKET_DIAG_UID] ? mnl_attr_get_u32(tb[PACKET_DIAG_UID]) : (uint32_t)-1;
	return MNL_CB_OK;
}

int pholders_find(int nsfd, int ifindex, struct pholders *out, char *err, size_t errlen)
{
	char req[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	struct pctx c = { ifindex, out };
	struct packet_diag_req *r;
	struct nlmsghdr *nlh;
	struct nl_sock *ns;
	int rc;

	memset(out, 0, sizeof(*out));
	ns = nl_sock_open(nsfd, NETLINK_SOCK_DIAG, 0, err, errlen);
	if (!ns)
		return -(errno ? errno : EIO);
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	/* packet_diag_handler_dump() answers only dumps (-EOPNOTSUPP else) */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	r->sdiag_family = AF_PACKET;
	r->sdiag_protocol = 0;  /* must be 0 (-EINVAL) */
	r->pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_MCLIST;
	rc = nl_sock_request(ns, nlh, msg_cb, &c, "packet socket dump", err, errlen);
	nl_sock_close(ns);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < out->n; i++) {
		int k = procfd_socket_owners(out->h[i].inode, out->h[i].pid, PHOLDERS_PIDS, NULL);

		out->h[i].npids = k > 0 ? (unsigned)k : 0;
	}
	return 0;
}

struct json_object *pholders_json(const struct pholders *h)
{
	struct json_object *a = json_object_new_array();

	for (unsigned i = 0; i < h->n; i++) {
		struct json_object *o = json_object_new_object(), *p = json_object_new_array();

		jx_add_u64(o, "socket_inode", h->h[i].inode);
		if (h->h[i].uid != (uint32_t)-1)
			jx_add_u64(o, "uid", h->h[i].uid);
		for (unsigned k = 0; k < h->h[i].npids; k++) {
			struct json_object *e = json_object_new_object();

			jx_add_int(e, "pid", h->h[i].pid[k].pid);
			jx_add_str(e, "comm", h->h[i].pid[k].comm);
			json_object_array_add(p, e);
		}
		json_object_object_add(o, "processes", p);
		json_object_array_add(a, o);
	}
	return a;
}

void pholders_text(const struct pholders *h, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (unsigned i = 0; i < h->n && off < len; i++) {
		const struct pholder *x = &h->h[i];

		if (x->npids)
			off += (size_t)snprintf(buf + off, len - off, "%s%s (pid %d%s)", i ? ", " : "",
						x->pid[0].comm, x->pid[0].pid,
						x->npids > 1 ? " and others" : "");
		else
			off += (size_t)snprintf(buf + off, len - off, "%spacket socket %llu (uid %u)",
						i ? ", " : "", (unsigned long long)x->inode,
						(unsigned)x->uid);
	}
	if (h->more && off < len)
		snprintf(buf + off, len - off, " and %u more", h->more);
}
