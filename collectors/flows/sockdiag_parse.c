/* flow_sockdiag_parse: the kernel's sock_diag replies (inet_diag_msg and
 * its attributes: INET_DIAG_INFO's tcp_info, the socket's memory), checked
 * and turned into observations (sockdiag_parse, flow_sockdiag.h); the
 * sockets a discovery remembers, by cookie (flow_sockdiag_int.h). */
#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flow_sockdiag_int.h"
#include "collectors/flows/sockdiag_fill.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sd_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	unsigned type = mnl_attr_get_type(a);

	if (type > INET_DIAG_MAX)
		return MNL_CB_OK;       /* newer kernel: skip */
	tb[type] = a;
	return MNL_CB_OK;
}

static int sd_byck_cmp(const void *a, const void *b)
{
	uint64_t x = sd_cookie(&(*(struct sd_sock *const *)a)->id);
	uint64_t y = sd_cookie(&(*(struct sd_sock *const *)b)->id);

	return x < y ? -1 : x > y;
}

/* Before a discovery: the remembered sockets by cookie, so what is found
 * again keeps its pace (a wait's start is not lost to a dump). */
void sd_byck_build(struct sockdiag *sd)
{
	free(sd->byck);
	sd->byck = NULL;
	sd->nbyck = 0;
	if (!sd->stall_ns || !sd->nknown || !(sd->byck = malloc(sd->nknown * sizeof(*sd->byck))))
		return;
	for (unsigned i = 0; i < sd->nknown; i++)
		if (!sd->known[i].gone)
			sd->byck[sd->nbyck++] = &sd->known[i];
	qsort(sd->byck, sd->nbyck, sizeof(*sd->byck), sd_byck_cmp);
}

void sd_pace_carry(struct sockdiag *sd, struct sd_sock *k)
{
	struct sd_sock key = { .id = k->id }, *kp = &key, **hit;

	memset(&k->pace, 0, sizeof(k->pace));
	k->sw_slot = 0;
	k->sw_tried = 0;
	k->sw_refused = 0;
	k->sw_busy = 0;
	k->busy_until = k->busy_hold = k->busy_back_at = 0;
	k->ev_from = 0;
	k->bs = k->in_act = 0;
	if (!sd->nbyck)
		return;
	hit = bsearch(&kp, sd->byck, sd->nbyck, sizeof(*sd->byck), sd_byck_cmp);
	if (hit) {
		k->pace = (*hit)->pace;
		k->bs = (*hit)->bs;
		/* its watch slot moves with it (the old entry's is not given
		 * up with the old list) */
		k->sw_slot = (*hit)->sw_slot;
		/* one without a slot is tried again at each discovery */
		k->sw_tried = k->sw_slot ? (*hit)->sw_tried : 0;
		k->sw_refused = (*hit)->sw_refused;
		k->sw_busy = (*hit)->sw_busy;
		k->busy_tx = (*hit)->busy_tx;
		k->busy_rx = (*hit)->busy_rx;
		k->busy_until = (*hit)->busy_until;
		k->busy_hold = (*hit)->busy_hold;
		k->busy_back_at = (*hit)->busy_back_at;
		k->ev_from = (*hit)->ev_from;
		k->ev_tx = (*hit)->ev_tx;
		k->ev_rx = (*hit)->ev_rx;
		k->ev_written = (*hit)->ev_written;
		/* quiet since when (sd_watch_backstop_ns) */
		k->bs_tx = (*hit)->bs_tx;
		k->bs_rx = (*hit)->bs_rx;
		k->bs_written = (*hit)->bs_written;
		k->bs_at = (*hit)->bs_at;
		k->bs_read = (*hit)->bs_read;
		(*hit)->sw_slot = 0;
	}
}

/* The flow key of a socket as inet_diag identifies it (local = s*): what
 * a dump, a lookup and the BPF reader emit. -1 for a family not ours. */
int sd_key(struct flow_key *key, uint8_t family, const struct inet_diag_sockid *id)
{
	memset(key, 0, sizeof(*key));
	key->proto = IPPROTO_TCP;
	if (family == AF_INET) {
		flow_addr_v4mapped(&key->saddr, &id->idiag_src[0]);
		flow_addr_v4mapped(&key->daddr, &id->idiag_dst[0]);
	} else if (family == AF_INET6) {
		memcpy(&key->saddr, id->idiag_src, 16);
		memcpy(&key->daddr, id->idiag_dst, 16);
	} else
		return -1;
	key->sport = id->idiag_sport;
	key->dport = id->idiag_dport;
	return 0;
}

/* One socket message of a checked buffer: 1 emitted, 0 skipped (not
 * watched, closed or malformed). */
int sd_parse_sock(const struct nlmsghdr *nlh, struct sd_dump *d)
{
	const struct nlattr *tb[INET_DIAG_MAX + 1] = { 0 };
	const struct inet_diag_msg *m;
	struct flow_obs o;
	struct tcp_info ti;
	size_t tilen = 0;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*m)))
		return 0;
	m = mnl_nlmsg_get_payload(nlh);
	memset(&o, 0, sizeof(o));
	o.src = FLOW_SRC_SOCK;
	if (sd_key(&o.key, m->idiag_family, &m->id) < 0)
		return 0;
	/* a dump asks for these states only; an exact lookup gets any */
	if (m->idiag_state >= 32 || !(SD_STATES & (1u << m->idiag_state)))
		return 0;
	if (!flow_sel_match(d->sel, d->nsel, &o.key))
		return 0;
	if (mnl_attr_parse(nlh, sizeof(*m), sd_attr_cb, tb) < 0)
		return 0;       /* malformed attributes: skip the socket */
	memset(&ti, 0, sizeof(ti));
	if (tb[INET_DIAG_INFO]) {
		tilen = mnl_attr_get_payload_len(tb[INET_DIAG_INFO]);
		memcpy(&ti, mnl_attr_get_payload(tb[INET_DIAG_INFO]),
		       tilen < sizeof(ti) ? tilen : sizeof(ti));
	}
	o.inode = m->idiag_inode;
	o.uid = m->idiag_uid;           /* the flow table's limits are per owner */
	o.uid_known = 1;
	sockdiag_fill(&o, m->idiag_state, m->idiag_rqueue, m->idiag_wqueue, &ti, tilen, d->now);
	if (d->sd) {
		/* discovery: remember it, to ask for it alone until the next */
		if (d->nfound == d->capfound && d->capfound < SD_MAX_KNOWN) {
			unsigned cap = d->capfound ? d->capfound * 2 : 64;
			struct sd_sock *nk;

			if (cap > SD_MAX_KNOWN)
				cap = SD_MAX_KNOWN;
			nk = realloc(d->found, cap * sizeof(*nk));
			if (nk) {
				d->found = nk;
				d->capfound = cap;
			}
		}
		if (d->nfound < d->capfound) {
			struct sd_sock *k = &d->found[d->nfound++];

			*k = (struct sd_sock){ 0 };     /* what is not carried */
			k->id = m->id;
			k->family = m->idiag_family;
			k->gone = 0;
			k->inode = m->idiag_inode;
			k->uid = m->idiag_uid;
			sd_pace_carry(d->sd, k);
			d->cur = k;
		} else {
			d->sd->untracked++;
		}
	}
	if (d->cur)
		sd_watch_paced(d->sd ? d->sd : d->owner, d->cur, &o, d->now);
	d->cur = NULL;
	d->emit(&o, d->arg);
	d->emitted++;
	return 1;
}

int sd_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sd_dump *d = data;

	/* SOCK_DIAG_BY_FAMILY, or the compat request's own type */
	if (nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY || nlh->nlmsg_type == TCPDIAG_GETSOCK) {
		if (d->sd)
			d->sd->st.dumped++;
		sd_parse_sock(nlh, d);
	}
	return MNL_CB_OK;
}

int sockdiag_parse(const void *buf, size_t len, const struct flow_sel *sel,
		   unsigned nsel, uint64_t now_ns, flow_emit_fn emit, void *arg)
{
	struct sd_dump d = { .sel = sel, .nsel = nsel, .emit = emit, .arg = arg,
			     .now = now_ns };
	const struct nlmsghdr *nlh;
	int left;

	if (!emit || (nsel && !sel))
		return -EINVAL;
	if (nl_msgs_check(buf, len) < 0)
		return -EBADMSG;
	left = (int)len;
	for (nlh = buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		sd_msg_cb(nlh, &d);
	return d.emitted;
}
