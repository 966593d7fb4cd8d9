/* flow_sockdiag: kernel TCP sockets via INET_DIAG (NETLINK_SOCK_DIAG).
 *
 * One long-lived netlink socket per namespace, made inside it by lib/nl.
 * Each poll dumps AF_INET then AF_INET6 TCP sockets with INET_DIAG_INFO
 * (struct tcp_info, whatever length the running kernel gives) and filters
 * them with the port's selectors in userspace; no receive waits. Every
 * reply is hostile input: nl_msgs_check() before anything else, then
 * message and attribute lengths, and tcp_info fields are read only when the
 * kernel's struct is long enough to hold them. */
#include "collectors/flow_sockdiag.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collectors/flowsrc.h"
#include "lib/nl.h"
#include "lib/procfd.h"
#include "lib/util.h"

/* TCP states as the kernel numbers them (include/net/tcp_states.h). */
enum {
	SD_TCP_ESTABLISHED = 1,
	SD_TCP_SYN_SENT,
	SD_TCP_SYN_RECV,
	SD_TCP_FIN_WAIT1,
	SD_TCP_FIN_WAIT2,
	SD_TCP_TIME_WAIT,
	SD_TCP_CLOSE,
	SD_TCP_CLOSE_WAIT,
	SD_TCP_LAST_ACK,
	SD_TCP_LISTEN,
	SD_TCP_CLOSING,
};

#define SD_STATES ((1u << SD_TCP_ESTABLISHED) | (1u << SD_TCP_SYN_SENT) | \
		   (1u << SD_TCP_SYN_RECV) | (1u << SD_TCP_FIN_WAIT1) |   \
		   (1u << SD_TCP_FIN_WAIT2) | (1u << SD_TCP_CLOSE_WAIT) |  \
		   (1u << SD_TCP_LAST_ACK) | (1u << SD_TCP_CLOSING))

/* /proc scan bounds for sockdiag_inode_owner. */

struct sockdiag {
	struct nl_sock *ns;
	unsigned long nsino;    /* for messages */
};

struct sd_dump {
	const struct flow_sel *sel;
	unsigned nsel;
	flow_emit_fn emit;
	void *arg;
	uint64_t now;
	int emitted;
};

static uint64_t sd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sockdiag *sockdiag_open(int nsfd, char *err, size_t errlen)
{
	struct sockdiag *sd = calloc(1, sizeof(*sd));
	struct stat st;
	char e[200];

	if (!sd) {
		util_errf(err, errlen, "sock_diag: out of memory");
		return NULL;
	}
	if (nsfd >= 0 ? fstat(nsfd, &st) == 0 : stat("/proc/thread-self/ns/net", &st) == 0)
		sd->nsino = (unsigned long)st.st_ino;
	sd->ns = nl_sock_open(nsfd, NETLINK_SOCK_DIAG, 0, e, sizeof(e));
	if (!sd->ns) {
		util_errf(err, errlen, "sock_diag: netns inode %lu: %s", sd->nsino, e);
		free(sd);
		return NULL;
	}
	return sd;
}

void sockdiag_close(struct sockdiag *sd)
{
	if (!sd)
		return;
	nl_sock_close(sd->ns);
	free(sd);
}

static int sd_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	unsigned type = mnl_attr_get_type(a);

	if (type > INET_DIAG_MAX)
		return MNL_CB_OK;       /* newer kernel: skip */
	tb[type] = a;
	return MNL_CB_OK;
}

#define TI_HAS(len, f) \
	(offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f) <= (len))

static uint64_t sd_ago(uint64_t now, uint32_t ms)
{
	uint64_t d = (uint64_t)ms * 1000000ull;

	return d < now ? now - d : 0;
}

/* One SOCK_DIAG_BY_FAMILY message of a checked buffer. */
static void sd_parse_sock(const struct nlmsghdr *nlh, struct sd_dump *d)
{
	const struct nlattr *tb[INET_DIAG_MAX + 1] = { 0 };
	const struct inet_diag_msg *m;
	struct flow_obs o;
	struct tcp_info ti;
	size_t tilen = 0;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*m)))
		return;
	m = mnl_nlmsg_get_payload(nlh);
	memset(&o, 0, sizeof(o));
	o.src = FLOW_SRC_SOCK;
	o.key.proto = IPPROTO_TCP;
	if (m->idiag_family == AF_INET) {
		flow_addr_v4mapped(&o.key.saddr, &m->id.idiag_src[0]);
		flow_addr_v4mapped(&o.key.daddr, &m->id.idiag_dst[0]);
	} else if (m->idiag_family == AF_INET6) {
		memcpy(&o.key.saddr, m->id.idiag_src, 16);
		memcpy(&o.key.daddr, m->id.idiag_dst, 16);
	} else
		return;
	o.key.sport = m->id.idiag_sport;
	o.key.dport = m->id.idiag_dport;
	if (m->idiag_state == SD_TCP_LISTEN)
		return;
	if (!flow_sel_match(d->sel, d->nsel, &o.key))
		return;
	if (mnl_attr_parse(nlh, sizeof(*m), sd_attr_cb, tb) < 0)
		return;         /* malformed attributes: skip the socket */
	o.state = m->idiag_state;
	o.inode = m->idiag_inode;
	o.uid = m->idiag_uid;           /* the flow table's limits are per owner */
	o.uid_known = 1;
	o.unread = m->idiag_rqueue;
	o.unsent = m->idiag_wqueue;

	memset(&ti, 0, sizeof(ti));
	if (tb[INET_DIAG_INFO]) {
		tilen = mnl_attr_get_payload_len(tb[INET_DIAG_INFO]);
		memcpy(&ti, mnl_attr_get_payload(tb[INET_DIAG_INFO]),
		       tilen < sizeof(ti) ? tilen : sizeof(ti));
	}
	if (TI_HAS(tilen, tcpi_total_retrans))
		o.retrans = ti.tcpi_total_retrans;
	/* The write queue is bytes not yet sent (held by the socket) plus
	 * bytes sent and not acknowledged (in flight, not held). */
	if (TI_HAS(tilen, tcpi_notsent_bytes) && ti.tcpi_notsent_bytes <= o.unsent) {
		o.inflight = o.unsent - ti.tcpi_notsent_bytes;
		o.unsent = ti.tcpi_notsent_bytes;
	}
	if (TI_HAS(tilen, tcpi_bytes_acked)) {
		/* Acked sequence space: the SYN counts one, and so does our
		 * FIN once acked (FIN_WAIT2); report data bytes only. */
		uint64_t b = ti.tcpi_bytes_acked;

		if (b)
			b--;
		if (b && m->idiag_state == SD_TCP_FIN_WAIT2)
			b--;
		o.tx_bytes = b;
	}
	if (TI_HAS(tilen, tcpi_bytes_received))
		o.rx_bytes = ti.tcpi_bytes_received;
	if (TI_HAS(tilen, tcpi_data_segs_out)) {
		o.tx_msgs = ti.tcpi_data_segs_out;
		o.rx_msgs = ti.tcpi_data_segs_in;
	} else if (TI_HAS(tilen, tcpi_segs_in)) {
		o.tx_msgs = ti.tcpi_segs_out;
		o.rx_msgs = ti.tcpi_segs_in;
	}
	/* The kernel's "ms since last data" is meaningless before any data
	 * moved; leave 0 (unknown) then when the struct tells us so. */
	if (TI_HAS(tilen, tcpi_last_data_recv)) {
		int known_tx = !TI_HAS(tilen, tcpi_data_segs_out) || ti.tcpi_data_segs_out;
		int known_rx = !TI_HAS(tilen, tcpi_data_segs_out) || ti.tcpi_data_segs_in;

		if (known_tx)
			o.last_tx_ns = sd_ago(d->now, ti.tcpi_last_data_sent);
		if (known_rx)
			o.last_rx_ns = sd_ago(d->now, ti.tcpi_last_data_recv);
	}
	/* The next retransmission: tcp_get_info() gives tcpi_rto in us and
	 * tcpi_last_data_sent in ms; tcp_retransmit_timer() arms the timer
	 * icsk_rto after each retransmission (inet_csk_reset_xmit_timer), and
	 * every segment with data, retransmissions too, sets lsndtime
	 * (tcp_event_data_sent). So with data unacknowledged it is due
	 * rto - last_data_sent from now. */
	if (TI_HAS(tilen, tcpi_unacked) && ti.tcpi_unacked && ti.tcpi_rto) {
		uint64_t rto = (uint64_t)ti.tcpi_rto * 1000ull;
		uint64_t since = (uint64_t)ti.tcpi_last_data_sent * 1000000ull;

		o.rto_ns = rto;
		o.retry_due_ns = d->now + (rto > since ? rto - since : 0);
	}
	d->emit(&o, d->arg);
	d->emitted++;
}

static int sd_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY)
		sd_parse_sock(nlh, data);
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

/* One dump of one family. 0 or -errno. */
static int sd_dump_family(struct sockdiag *sd, uint8_t family, struct sd_dump *d,
			  char *err, size_t errlen)
{
	char reqbuf[256] __attribute__((aligned(8)));
	struct inet_diag_req_v2 *req;
	struct nlmsghdr *nlh;
	char what[96];

	nlh = mnl_nlmsg_put_header(reqbuf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = SD_STATES;
	req->idiag_ext = 1u << (INET_DIAG_INFO - 1);
	util_errf(what, sizeof(what), "sock_diag: %s TCP dump in netns inode %lu",
		  family == AF_INET ? "IPv4" : "IPv6", sd->nsino);
	return nl_sock_request(sd->ns, nlh, sd_msg_cb, d, what, err, errlen);
}

int sockdiag_poll(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		  flow_emit_fn emit, void *arg, char *err, size_t errlen)
{
	struct sd_dump d = { .sel = sel, .nsel = nsel, .emit = emit, .arg = arg };
	int rc;

	if (!sd || !emit || (nsel && !sel)) {
		util_errf(err, errlen, "sock_diag: invalid arguments");
		return -EINVAL;
	}
	d.now = sd_now_ns();
	rc = sd_dump_family(sd, AF_INET, &d, err, errlen);
	if (rc < 0)
		return rc;
	rc = sd_dump_family(sd, AF_INET6, &d, err, errlen);
	if (rc < 0)
		return rc;
	return d.emitted;
}

/* ---- the flow-source ops table (port scope) ---- */

struct sd_src {
	struct sockdiag *sd;
	struct flow_sel *sel;
	unsigned nsel;
};

static void sd_src_close(struct flow_src *s)
{
	struct sd_src *p = s->priv;

	if (!p)
		return;
	sockdiag_close(p->sd);
	free(p->sel);
	free(p);
	s->priv = NULL;
}

static int sd_src_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct sd_src *p;

	s->err[0] = '\0';
	s->ops = &flow_src_sock_ops;
	if (!ctx || (ctx->nsel && !ctx->sel)) {
		util_errf(s->err, sizeof(s->err), "sock_diag: invalid arguments");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || (ctx->nsel && !(p->sel = calloc(ctx->nsel, sizeof(*p->sel))))) {
		free(p);
		util_errf(s->err, sizeof(s->err), "sock_diag: out of memory");
		return -ENOMEM;
	}
	if (ctx->nsel)
		memcpy(p->sel, ctx->sel, ctx->nsel * sizeof(*p->sel));
	p->nsel = ctx->nsel;
	p->sd = sockdiag_open(ctx->netns_fd, s->err, sizeof(s->err));
	if (!p->sd) {
		int e = errno ? errno : EIO;

		free(p->sel);
		free(p);
		return -e;
	}
	s->priv = p;
	return 0;
}

static int sd_src_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct sd_src *p = s->priv;

	if (!p) {
		util_errf(s->err, sizeof(s->err), "sock_diag: source not open");
		return -EBADF;
	}
	return sockdiag_poll(p->sd, p->sel, p->nsel, emit, arg, s->err, sizeof(s->err));
}

const struct flow_src_ops flow_src_sock_ops = {
	.name = "sock",
	.kind = FLOW_SRC_SOCK,
	.host = 0,
	.open = sd_src_open,
	.poll = sd_src_poll,
	.close = sd_src_close,
};

/* ---- socket inode owner ---- */

int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen)
{
	struct procfd_owner o;
	int n = procfd_socket_owners(inode, &o, 1, NULL);

	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if (pid)
		*pid = o.pid;
	if (comm && commlen)
		snprintf(comm, commlen, "%s", o.comm);
	return 0;
}
