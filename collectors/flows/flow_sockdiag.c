/* flow_sockdiag: kernel TCP sockets via INET_DIAG (NETLINK_SOCK_DIAG).
 *
 * One long-lived netlink socket per namespace, made inside it by lib/nl; no
 * receive waits. What a poll costs is the kernel's work, so a poll asks for
 * as little as it can:
 *
 *  - Discovery: a dump, filtered in the kernel by INET_DIAG_REQ_BYTECODE
 *    compiled from the port's selectors (as ss(8) compiles its filter), so
 *    only watched sockets are filled in and copied out. One dump covers
 *    both families: the compat request TCPDIAG_GETSOCK asks with family
 *    AF_UNSPEC (inet_diag_dump_compat() in net/ipv4/inet_diag.c), where two
 *    SOCK_DIAG_BY_FAMILY requests would walk the TCP established hash twice.
 *    That walk is the dear part: tcp_diag_dump() (net/ipv4/tcp_diag.c) visits
 *    every bucket of hashinfo->ehash, which namespaces share unless
 *    tcp_child_ehash_entries gave them their own (262144 buckets here, about
 *    175 us per walk), whatever the filter lets through. So a discovery
 *    due dumps only when the namespace has opened a TCP connection since
 *    (sockdiag_opens.h: ActiveOpens + PassiveOpens of its /proc/net/snmp)
 *    or hashed or unhashed a TCP socket (the "inuse" of its sockstat and
 *    sockstat6: a socket restored in TCP_REPAIR mode opens nothing), three
 *    preads, once more after that, and at least every rediscover_ns.
 *  - Between discoveries (SD_DISCOVER_NS): each socket the last discovery
 *    found is read alone. Where the kernel allows, by the BPF socket reader
 *    (sockread_api.h: one program run per 64 sockets looks each up in the
 *    namespace's hash and loads the tcp_info fields from its tcp_sock, no
 *    message per socket, ~0.25 us a socket; SR_MAX sockets a run, runs
 *    again while more are due); else asked for by its full
 *    identity, cookie included, in batches (lib/nl nl_sock_batch):
 *    tcp_diag_dump_one() -> tcp_diag_find_one_icsk() is one hash lookup,
 *    and sock_diag_check_cookie() refuses a recycled tuple (~1.6 us a
 *    socket). A closed socket answers ENOENT (the reader: not found, or
 *    another cookie), a TIME_WAIT one its state: dropped until the next
 *    discovery finds what replaced it.
 *  - Paced (sockdiag_set_pace, sockdiag_pace.h): between discoveries only
 *    the sockets the detector could need are read: one that owes nothing
 *    once a threshold less a poll, a waiting one at every poll from a
 *    threshold less a poll after its wait began by the kernel's clocks.
 *    What a discovery finds again keeps its pace (by cookie).
 *  - When asking socket by socket would cost more than one dump (many
 *    watched sockets: the dump fills each socket without a message of its
 *    own), each poll dumps instead; the choice follows the measured CPU
 *    time of both.
 *
 * Every reply is hostile input: nl_msgs_check() before anything else, then
 * message and attribute lengths, and tcp_info fields are read only when the
 * kernel's struct is long enough to hold them. Selectors are applied again
 * in userspace: the kernel filter may only let more through. */
#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flow_sockdiag_int.h"

#include <arpa/inet.h>
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
#include <unistd.h>

#include "collectors/flows/flowsrc.h"
#include "collectors/flows/sockdiag_fill.h"
#include "collectors/flows/sockdiag_opens.h"
#include "collectors/flows/sockdiag_pace.h"
#include "collectors/flows/sockread_api.h"
#include "collectors/flows/sockwatch_api.h"
#include "lib/loop.h"
#include "lib/nl.h"
#include "lib/util.h"

void sockdiag_opts_default(struct sockdiag_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->discover_ns = SD_DISCOVER_NS;
	o->rediscover_ns = SD_REDISCOVER_NS;
}

/* Load the BPF socket reader unless the options say no; without one
 * (older kernel, no BTF) sock_diag asks for each socket. */
static void sd_reader(struct sockdiag *sd)
{
	if (sd->opts.no_reader) {
		sockread_close(sd->rd);
		sd->rd = NULL;
		util_strlcpy(sd->rd_why, "off", sizeof(sd->rd_why));
		return;
	}
	if (!sd->rd) {
		sd->rd = sockread_open(sd->nsfd, sd->rd_why, sizeof(sd->rd_why));
	}
}

struct sockdiag *sockdiag_open(int nsfd, char *err, size_t errlen)
{
	return sockdiag_open_opts(nsfd, NULL, err, errlen);
}

/* The discoveries' gate (sd_must_dump): the namespace's opens and its TCP
 * sockets in use, IPv4 and IPv6 (sockdiag_opens.h). Without the opens or
 * the IPv4 sockets in use there is no gate (every discovery dumps); without
 * sockstat6 there is no IPv6 (ipv6_misc_proc_init() makes it in every
 * namespace where IPv6 is). */
static void sd_gate_close(struct sockdiag *sd)
{
	if (sd->opens_fd >= 0)
		close(sd->opens_fd);
	for (int i = 0; i < 2; i++)
		if (sd->inuse_fd[i] >= 0)
			close(sd->inuse_fd[i]);
	sd->opens_fd = sd->inuse_fd[0] = sd->inuse_fd[1] = -1;
}

static void sd_gate_open(struct sockdiag *sd, int nsfd)
{
	sd->opens_fd = sd_opens_open(nsfd);
	sd->inuse_fd[0] = sd_inuse_open(nsfd, 0);
	sd->inuse_fd[1] = sd_inuse_open(nsfd, 1);
	if (sd->opens_fd < 0 || sd->inuse_fd[0] < 0)
		sd_gate_close(sd);
}

/* The gate's counters now: 0, or -1 (no gate, or unreadable: dump). */
static int sd_gate_read(struct sockdiag *sd, uint64_t v[3])
{
	v[2] = 0;
	return sd->opens_fd < 0 || sd_opens_read(sd->opens_fd, &v[0]) < 0 ||
	       sd_inuse_read(sd->inuse_fd[0], 0, &v[1]) < 0 ||
	       (sd->inuse_fd[1] >= 0 && sd_inuse_read(sd->inuse_fd[1], 1, &v[2]) < 0) ? -1 : 0;
}

struct sockdiag *sockdiag_open_opts(int nsfd, const struct sockdiag_opts *o, char *err,
				    size_t errlen)
{
	struct sockdiag *sd = calloc(1, sizeof(*sd));
	struct stat st;
	char e[200];

	if (!sd) {
		util_errf(err, errlen, "sock_diag: out of memory");
		return NULL;
	}
	if (o)
		sd->opts = *o;
	else
		sockdiag_opts_default(&sd->opts);
	if (nsfd >= 0 ? fstat(nsfd, &st) == 0 : stat("/proc/thread-self/ns/net", &st) == 0)
		sd->nsino = (unsigned long)st.st_ino;
	sd->ns = nl_sock_open(nsfd, NETLINK_SOCK_DIAG, 0, e, sizeof(e));
	if (!sd->ns) {
		util_errf(err, errlen, "sock_diag: netns inode %lu: %s", sd->nsino, e);
		free(sd);
		return NULL;
	}
	sd_gate_open(sd, nsfd);
	sd->nsfd = -1;
	if (nsfd >= 0 && (sd->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		util_errf(err, errlen, "sock_diag: netns inode %lu: %s", sd->nsino, strerror(errno));
		sd_gate_close(sd);
		nl_sock_close(sd->ns);
		free(sd);
		return NULL;
	}
	sd_reader(sd);
	sd_watch_open(sd);
	return sd;
}

void sockdiag_set_opts(struct sockdiag *sd, const struct sockdiag_opts *o)
{
	int hooks_moved;

	if (!sd || !o)
		return;
	hooks_moved = o->events_tracepoints != sd->opts.events_tracepoints;
	sd->opts = *o;
	sd_reader(sd);
	if (sd->sw && hooks_moved && !sd->opts.no_events)
		sd_watch_close(sd);     /* opened again below, as now asked */
	if (sd->opts.no_events && sd->sw) {
		sd_watch_close(sd);
		util_strlcpy(sd->sw_why, "off", sizeof(sd->sw_why));
	} else if (!sd->opts.no_events && !sd->sw) {
		sd_watch_open(sd);
	}
	sd->compiled = 0;
	sd->bc_refused = 0;
	sd->compat_refused = 0;
	sd->next_discover = 0;  /* the next poll discovers */
	sd->calm = 0;
}

void sockdiag_set_pace(struct sockdiag *sd, uint64_t stall_ns, uint64_t poll_ns,
		       uint64_t refresh_ns)
{
	if (!sd)
		return;
	sd->stall_ns = stall_ns;
	sd->poll_ns = poll_ns;
	sd->refresh_ns = refresh_ns;
}

unsigned sockdiag_last_unread(const struct sockdiag *sd)
{
	return sd ? sd->last_unread : 0;
}

/* ---- which sockets a poll looks at ----
 *
 * A poll reads the sockets due within its window. Kept between polls: the
 * least due time of all (min_due, while min_ok: a poll with none due walks
 * nothing), and, while act_ok, the list of the sockets on their pace
 * (act[]: every alive one whose due time the kernel-event backstop did not
 * set) with the least due time of those it did (min_bs). A poll before
 * min_bs looks at the list only: on a port of 10,000 idle watched sockets
 * and a few busy ones, the few. A socket leaves the backstop through
 * sd_due_now() or sd_paced() (it joins the list), joins it through
 * sd_backstop() (min_bs lowered to its due time); a write that brings
 * many sockets' due times closer calls sd_due_moved() (the next poll
 * walks every socket and makes the list again). Stale entries (gone, or
 * back on the backstop) leave the list as it is walked. */

/* The least due time of the alive sockets (0: one is due now), UINT64_MAX
 * with none. */
static uint64_t sd_least_due(const struct sockdiag *sd)
{
	uint64_t lo = UINT64_MAX;

	if (sd->min_ok)
		return sd->min_due;
	if (sd->act_ok) {
		lo = sd->min_bs;
		for (unsigned j = 0; j < sd->nact; j++) {
			const struct sd_sock *k = &sd->known[sd->act[j]];

			if (!k->gone && k->pace.due_ns < lo)
				lo = k->pace.due_ns;
		}
		return lo;
	}
	for (unsigned i = 0; i < sd->nknown; i++)
		if (!sd->known[i].gone && sd->known[i].pace.due_ns < lo)
			lo = sd->known[i].pace.due_ns;
	return lo;
}

/* Every socket: how many are due within early of now (count), the least
 * due time, and the list made again. */
static unsigned sd_walk_all(struct sockdiag *sd, uint64_t now, uint64_t early)
{
	uint64_t lo = UINT64_MAX, lobs = UINT64_MAX;
	unsigned n = 0;

	sd->st.due_walks++;
	sd->act_ok = 0;
	sd->nact = 0;
	if (sd->capact < sd->nknown) {
		unsigned *na = realloc(sd->act, (sd->nknown ? sd->nknown : 1) * sizeof(*na));

		if (na) {
			sd->act = na;
			sd->capact = sd->nknown;
		}
	}
	for (unsigned i = 0; i < sd->nknown; i++) {
		struct sd_sock *k = &sd->known[i];

		k->in_act = 0;
		if (k->gone)
			continue;
		n += !sd->stall_ns || sd_pace_due_within(&k->pace, now, early);
		if (k->pace.due_ns < lo)
			lo = k->pace.due_ns;
		if (k->bs) {
			if (k->pace.due_ns < lobs)
				lobs = k->pace.due_ns;
		} else if (sd->capact >= sd->nknown) {
			sd->act[sd->nact++] = i;
			k->in_act = 1;
		}
	}
	sd->act_ok = sd->capact >= sd->nknown;
	sd->min_bs = lobs;
	sd->min_due = lo;
	sd->min_ok = 1;
	return n;
}

/* The list only (act_ok, and no socket on the backstop due): the same. */
static unsigned sd_walk_act(struct sockdiag *sd, uint64_t now, uint64_t early)
{
	uint64_t lo = sd->min_bs;
	unsigned n = 0;

	for (unsigned j = 0; j < sd->nact;) {
		struct sd_sock *k = &sd->known[sd->act[j]];

		if (k->gone || k->bs) {
			k->in_act = 0;
			sd->act[j] = sd->act[--sd->nact];
			continue;
		}
		n += sd_pace_due_within(&k->pace, now, early);
		if (k->pace.due_ns < lo)
			lo = k->pace.due_ns;
		j++;
	}
	sd->min_due = lo;
	sd->min_ok = 1;
	return n;
}

/* After a poll's reads (or a discovery): the least due time kept again,
 * from the list when the poll looked at it only. */
static void sd_least_due_keep(struct sockdiag *sd)
{
	if (sd->use_act && sd->act_ok)
		sd_walk_act(sd, 0, 0);
	else
		sd_walk_all(sd, 0, 0);
}

/* The sockets a poll looks at: the list (use_act) or every one. */
static unsigned sd_nlook(const struct sockdiag *sd)
{
	return sd->use_act ? sd->nact : sd->nknown;
}

static unsigned sd_look(const struct sockdiag *sd, unsigned j)
{
	return sd->use_act ? sd->act[j] : j;
}

uint64_t sockdiag_next_ns(const struct sockdiag *sd)
{
	uint64_t lo;

	/* the selectors watch no TCP socket: nothing to look for */
	if (sd && sd->compiled && sd->bclen == -ENOENT)
		return UINT64_MAX;
	if (!sd || !sd->stall_ns || !sd->opts.discover_ns || !sd->next_discover)
		return 0;
	/* the first socket due, or the next discovery: with the kernel's
	 * watch (sock_liveness = events) no socket that owes nothing is due
	 * for seconds, and the detector polls only when its sources ask
	 * (daemon/detect/stall_plan.c), so a new socket is found within a
	 * second because the discovery asks for its poll */
	lo = sd_least_due(sd);
	return sd->next_discover < lo ? sd->next_discover : lo;
}

void sockdiag_stats(const struct sockdiag *sd, struct sockdiag_stats *out)
{
	if (!sd || !out)
		return;
	*out = sd->st;
	out->known = sd->nalive;
	out->untracked = sd->untracked;
	out->kernel_filter = sd->compiled && sd->bclen > 0 && !sd->bc_refused &&
			     !sd->opts.no_bytecode;
	out->one_dump = !sd->compat_refused && !sd->opts.per_family;
	out->reader = sd->rd != NULL;
	out->opens_gate = sd->opens_fd >= 0;
	out->events = sd->sw != NULL && !sd->sw_broken;
	util_strlcpy(out->events_why, out->events ? "" : sd->sw_why, sizeof(out->events_why));
	out->events_sockops = 0;
	out->hooks_why[0] = '\0';
	if (out->events) {
		struct sockwatch_stats ws;

		sockwatch_stats(&ws);
		out->events_sockops = ws.sockops;
		util_strlcpy(out->hooks_why, ws.why, sizeof(out->hooks_why));
	}
	util_strlcpy(out->reader_why, sd->rd ? "" : sd->rd_why, sizeof(out->reader_why));
	out->busy_now = 0;
	out->busy_hold_max = 0;
	for (unsigned i = 0; i < sd->nknown; i++) {
		const struct sd_sock *k = &sd->known[i];

		if (!k->sw_busy || k->gone)
			continue;
		out->busy_now++;
		if (k->busy_hold > out->busy_hold_max)
			out->busy_hold_max = k->busy_hold;
	}
}

void sockdiag_close(struct sockdiag *sd)
{
	if (!sd)
		return;
	nl_sock_close(sd->ns);
	sd_watch_close(sd);
	sockread_close(sd->rd);
	sd_gate_close(sd);
	if (sd->nsfd >= 0)
		close(sd->nsfd);
	free(sd->known);
	free(sd->act);
	free(sd->byslot);
	free(sd->byck);
	free(sd);
}

/* ---- requests ---- */

static void sd_compile(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel)
{
	if (sd->compiled && nsel == sd->nsel && (!nsel || !memcmp(sel, sd->sel, nsel * sizeof(*sel))))
		return;
	sd->nsel = nsel <= SD_MAX_SEL ? nsel : 0;
	if (sd->nsel)
		memcpy(sd->sel, sel, sd->nsel * sizeof(*sel));
	sd->bclen = nsel > SD_MAX_SEL ? 0 : sockdiag_bytecode(sel, nsel, sd->bc, sizeof(sd->bc));
	if (sd->bclen < 0 && sd->bclen != -ENOENT)
		sd->bclen = 0;  /* could not compile: filter in userspace */
	sd->compiled = 1;
	sd->next_discover = 0;
	sd->last_dump = 0;      /* new selectors: the next discovery dumps */
}

/* A dump request: the compat one (family AF_UNSPEC, both families in one
 * walk), or SOCK_DIAG_BY_FAMILY for one family; with the filter. */
static struct nlmsghdr *sd_dump_req(struct sockdiag *sd, char *buf, int family, int bc)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (family == AF_UNSPEC) {
		struct inet_diag_req *r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));

		nlh->nlmsg_type = TCPDIAG_GETSOCK;
		r->idiag_family = AF_INET;      /* ignored by the dump */
		r->idiag_states = SD_STATES;
		r->idiag_ext = 1u << (INET_DIAG_INFO - 1);
	} else {
		struct inet_diag_req_v2 *r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));

		nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
		r->sdiag_family = (uint8_t)family;
		r->sdiag_protocol = IPPROTO_TCP;
		r->idiag_states = SD_STATES;
		r->idiag_ext = 1u << (INET_DIAG_INFO - 1);
	}
	if (bc)
		mnl_attr_put(nlh, INET_DIAG_REQ_BYTECODE, (size_t)sd->bclen, sd->bc);
	return nlh;
}

/* One dump (families: AF_UNSPEC or one). 0 or -errno. */
static int sd_dump_one(struct sockdiag *sd, int family, struct sd_dump *d, char *err,
		       size_t errlen)
{
	char reqbuf[MNL_NLMSG_HDRLEN + 64 + SD_BC_MAX + 16] __attribute__((aligned(8)));
	int bc = sd->bclen > 0 && !sd->bc_refused && !sd->opts.no_bytecode, rc;
	char what[128];

	for (;;) {
		util_errf(what, sizeof(what), "sock_diag: %s TCP dump%s in netns inode %lu",
			  family == AF_INET ? "IPv4" : family == AF_INET6 ? "IPv6" : "IPv4+IPv6",
			  bc ? " (kernel-filtered)" : "", sd->nsino);
		rc = nl_sock_request(sd->ns, sd_dump_req(sd, reqbuf, family, bc), sd_msg_cb, d,
				     what, err, errlen);
		if (rc != -EINVAL || !bc || d->emitted)
			return rc;
		/* an older kernel refused the filter: without it from now on */
		sd->bc_refused = 1;
		bc = 0;
	}
}

/* A full dump: every watched socket is emitted (and, for a discovery,
 * remembered). 0 or -errno. */
static int sd_dump(struct sockdiag *sd, struct sd_dump *d, char *err, size_t errlen)
{
	int rc;

	sd->st.dumps++;
	if (!sd->compat_refused && !sd->opts.per_family) {
		rc = sd_dump_one(sd, AF_UNSPEC, d, err, errlen);
		if (rc == 0 || d->emitted || (rc != -EINVAL && rc != -ENOENT && rc != -EOPNOTSUPP))
			return rc;
		sd->compat_refused = 1; /* no compat requests: one dump per family */
	}
	rc = sd_dump_one(sd, AF_INET, d, err, errlen);
	if (rc < 0)
		return rc;
	return sd_dump_one(sd, AF_INET6, d, err, errlen);
}

struct sd_batch {
	struct sockdiag *sd;
	struct sd_dump *d;
	unsigned map[NL_BATCH_MAX];     /* request -> index in sd->known */
};

static void sd_gone(struct sockdiag *sd, struct sd_sock *k)
{
	sd_watch_gone(sd, k);
	if (!k->gone) {
		k->gone = 1;
		sd->nalive--;
	}
}

static void sd_batch_cb(unsigned idx, const struct nlmsghdr *nlh, int error, void *arg)
{
	struct sd_batch *b = arg;
	struct sd_sock *k = &b->sd->known[b->map[idx]];

	if (error) {
		if (error == ENOENT)    /* closed (or its tuple taken by another) */
			sd_gone(b->sd, k);
		return;
	}
	/* TIME_WAIT, or no longer what we watch */
	b->d->cur = k;
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY || !sd_parse_sock(nlh, b->d))
		sd_gone(b->sd, k);
	b->d->cur = NULL;
}

/* How early a paced socket is read (sd_pace_early); 0 without pacing. */
static uint64_t sd_early(const struct sockdiag *sd)
{
	return sd->stall_ns ? sd_pace_early(sd->stall_ns, sd->poll_ns, sd->refresh_ns) : 0;
}

/* Read socket k at this poll? Every remembered one without pacing. */
static int sd_due(const struct sockdiag *sd, const struct sd_sock *k, uint64_t now)
{
	return !k->gone && (!sd->stall_ns || sd_pace_due_within(&k->pace, now, sd_early(sd)));
}

/* How many sockets are due at this poll: none, without a walk, while the
 * least due time kept is beyond the window; counted in the list while
 * no socket on the backstop is due; else counted over every socket. */
static unsigned sd_count_due(struct sockdiag *sd, uint64_t now)
{
	uint64_t early = sd_early(sd);

	sd->use_act = 0;
	if (sd->stall_ns && sd->min_ok && now + early < sd->min_due)
		return 0;
	if (sd->stall_ns && sd->act_ok && now + early < sd->min_bs) {
		sd->use_act = 1;
		return sd_walk_act(sd, now, early);
	}
	return sd_walk_all(sd, now, early);
}

/* Read the remembered sockets that are due, from known[*from] on, with the
 * BPF reader: up to SR_MAX of them, one program run per SR_CHUNK, then
 * each as sd_parse_sock() would have it from tcp_info; *from: where the
 * next run goes on. The number read, or -errno (the caller falls back to
 * sock_diag). */
static int sd_read_known(struct sockdiag *sd, struct sd_dump *d, unsigned *from, char *err,
			 size_t errlen)
{
	struct sr_key *keys = sockread_keys(sd->rd);
	unsigned n = 0, i;
	uint64_t now;
	int rc;

	for (i = *from; i < sd_nlook(sd) && n < SR_MAX; i++) {
		unsigned x = sd_look(sd, i);

		if (sd_due(sd, &sd->known[x], d->now)) {
			sd_reader_key(&sd->known[x], &keys[n]);
			sd->rd_map[n++] = x;
		}
	}
	*from = i;
	if (!n)
		return 0;
	rc = sockread_run(sd->rd, n, &now, err, errlen);
	if (rc < 0)
		return rc;
	sd->st.reads += n;
	for (unsigned i = 0; i < n; i++) {
		const struct sr_val *v = sockread_val(sd->rd, i);
		struct sd_sock *k = &sd->known[sd->rd_map[i]];
		struct flow_obs o;
		struct tcp_info ti;
		int64_t tx, rx, ack;

		if (k->gone)
			continue;
		if (!v->found || !v->full || v->state >= 32 || !(SD_STATES & (1u << v->state))) {
			sd_gone(sd, k);         /* closed, TIME_WAIT, or the tuple reused */
			continue;
		}
		memset(&o, 0, sizeof(o));
		o.src = FLOW_SRC_SOCK;
		sd_key(&o.key, k->family, &k->id);
		if (!flow_sel_match(d->sel, d->nsel, &o.key))
			continue;
		o.inode = k->inode;
		/* the owner the dump gave: without it a flow the per-owner
		 * limit refused at the dump would get in at the next read */
		o.uid = k->uid;
		o.uid_known = 1;
		/* tcp_get_info() and tcp_diag_get_info() from the same fields */
		memset(&ti, 0, sizeof(ti));
		ti.tcpi_total_retrans = v->total_retrans;
		ti.tcpi_notsent_bytes = (int32_t)(v->write_seq - v->snd_nxt) > 0 ?
					v->write_seq - v->snd_nxt : 0;
		ti.tcpi_bytes_acked = v->bytes_acked;
		ti.tcpi_bytes_received = v->bytes_received;
		ti.tcpi_data_segs_out = v->data_segs_out;
		ti.tcpi_data_segs_in = v->data_segs_in;
		tx = sockread_ago_ms(sd->rd, v->jiffies, v->lsndtime);
		rx = sockread_ago_ms(sd->rd, v->jiffies, v->lrcvtime);
		ti.tcpi_last_data_sent = tx < 0 || tx > UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)tx;
		ti.tcpi_last_data_recv = rx < 0 || rx > UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)rx;
		ack = sockread_ago_ms(sd->rd, v->jiffies, v->rcv_tstamp);
		ti.tcpi_last_ack_recv = ack < 0 || ack > UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)ack;
		/* tcpi_unacked = packets_out, tcpi_rto = jiffies_to_usecs(icsk_rto) */
		ti.tcpi_unacked = v->packets_out;
		ti.tcpi_rto = sockread_jiffies_us(sd->rd, v->rto);
		ti.tcpi_retransmits = v->retransmits;
		sockdiag_fill(&o, v->state,
			(int32_t)(v->rcv_nxt - v->copied_seq) > 0 ? v->rcv_nxt - v->copied_seq : 0,
			v->write_seq - v->snd_una, &ti, sizeof(ti), now);
		sd_watch_paced(sd, k, &o, now);
		d->emit(&o, d->arg);
		d->emitted++;
	}
	return (int)n;
}

/* Ask for every remembered socket that is due, from known[from] on, alone,
 * NL_BATCH_MAX at a time. The number asked for, or -errno. */
static int sd_lookup_known(struct sockdiag *sd, struct sd_dump *d, unsigned from, char *err,
			   size_t errlen)
{
	char reqs[NL_BATCH_MAX * NLMSG_ALIGN(MNL_NLMSG_HDRLEN + sizeof(struct inet_diag_req_v2))]
		__attribute__((aligned(8)));
	unsigned i = from, asked = 0;

	while (i < sd_nlook(sd)) {
		struct sd_batch b = { .sd = sd, .d = d };
		unsigned n = 0;
		size_t off = 0;
		int got;

		for (; i < sd_nlook(sd) && n < NL_BATCH_MAX; i++) {
			unsigned x = sd_look(sd, i);
			struct inet_diag_req_v2 *r;
			struct nlmsghdr *nlh;

			if (!sd_due(sd, &sd->known[x], d->now))
				continue;
			nlh = mnl_nlmsg_put_header(reqs + off);
			nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
			r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
			r->sdiag_family = sd->known[x].family;
			r->sdiag_protocol = IPPROTO_TCP;
			r->idiag_states = SD_STATES;
			r->idiag_ext = 1u << (INET_DIAG_INFO - 1);
			r->id = sd->known[x].id;
			off += NLMSG_ALIGN(nlh->nlmsg_len);
			b.map[n++] = x;
		}
		if (!n)
			break;
		sd->st.lookups += n;
		asked += n;
		got = nl_sock_batch(sd->ns, reqs, off, n, sd_batch_cb, &b,
				    "sock_diag: socket lookups", err, errlen);
		if (got < 0)
			return got;
		/* unanswered ones (receive buffer overrun) are asked next poll */
		if ((unsigned)got < n)
			sd->st.unanswered += n - (unsigned)got;
	}
	return (int)asked;
}

/* Must the discovery due now dump? Not when the namespace has opened no
 * TCP connection and hashed or unhashed no TCP socket since the dump
 * before the last one (sockdiag_opens.h: a child is counted before it is
 * hashed, so the look after a change dumps too), every socket found is
 * remembered and the last dump is younger than rediscover_ns. The counters
 * are read before the dump they allow, so an open during it moves them
 * for the next look. */
static int sd_must_dump(struct sockdiag *sd, uint64_t now)
{
	uint64_t v[3];

	if (sd_gate_read(sd, v) < 0) {
		sd->calm = 0;
		return 1;
	}
	if (!sd->last_dump || memcmp(v, sd->gate, sizeof(v))) {
		memcpy(sd->gate, v, sizeof(v));
		sd->calm = 0;
		return 1;
	}
	if (!sd->calm) {
		sd->calm = 1;   /* the look after a change dumps too */
		return 1;
	}
	return sd->untracked || !sd->opts.rediscover_ns ||
	       now - sd->last_dump + sd->poll_ns / 2 >= sd->opts.rediscover_ns;
}

/* Dumping every poll is cheaper than asking one by one when many watched
 * sockets are due (the dump fills them without a message each). */
static int sd_dump_cheaper(const struct sockdiag *sd, unsigned ndue)
{
	uint64_t d = sd_min_get(&sd->dump), l = sd_min_get(&sd->lookup);

	return d && l && (uint64_t)ndue * l > d;
}

int sockdiag_poll(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		  flow_emit_fn emit, void *arg, char *err, size_t errlen)
{
	struct sd_dump d = { .sel = sel, .nsel = nsel, .emit = emit, .arg = arg, .owner = sd };
	uint64_t c0;            /* before a dump or the reads: wall time (in the
				 * vDSO, where the CPU clock is a system call);
				 * sd_min keeps the least of the last few, which
				 * no preemption lengthened */
	unsigned ndue;
	int rc, discover, disc_due;
	uint64_t early;

	if (!sd || !emit || (nsel && !sel)) {
		util_errf(err, errlen, "sock_diag: invalid arguments");
		return -EINVAL;
	}
	sd_compile(sd, sel, nsel);
	if (sd->bclen == -ENOENT)
		return 0;       /* the selectors watch no TCP socket */
	d.now = loop_mono_ns();
	d.stall_ns = sd->stall_ns;
	d.poll_ns = sd->poll_ns;
	d.refresh_ns = sd->refresh_ns;
	sd_watch_before(sd, d.now);
	ndue = sd_count_due(sd, d.now);
	discover = !sd->opts.discover_ns;
	/* a discovery due soon is made now, with the reads due (in step
	 * with them: sd_pace_early), rather than at a poll of its own; as
	 * soon, counted from the time the poll was asked for when it came
	 * earlier, at another wakeup (flowsrc.h slack_ns), so that the next
	 * one asks for its poll in step with those wakeups */
	early = sd_early(sd) + sd->slack_ns;
	disc_due = d.now + early >= sd->next_discover;
	if (!discover && disc_due) {
		discover = sd_must_dump(sd, d.now);
		if (!discover) {
			sd->next_discover = d.now + sd->opts.discover_ns;
			sd->st.discover_skipped++;
		}
	}
	discover = discover ||
		   (!sd->probe && !sd->opts.no_switch && ndue && sd_dump_cheaper(sd, ndue));
	sd->last_unread = 0;
	if (discover) {
		c0 = loop_mono_ns();
		d.sd = sd;
		sd->untracked = 0;
		sd_byck_build(sd);
		rc = sd_dump(sd, &d, err, errlen);
		free(sd->byck);
		sd->byck = NULL;
		sd->nbyck = 0;
		if (rc < 0) {
			/* the slots the found ones took are given up; the
			 * remembered ones register again and are read now */
			for (unsigned i = 0; i < d.nfound; i++)
				sd_watch_gone(sd, &d.found[i]);
			free(d.found);
			for (unsigned i = 0; i < sd->nknown; i++)
				if (!sd->known[i].sw_slot) {
					sd->known[i].sw_tried = 0;
					sd->known[i].pace.due_ns = 0;
				}
			sd_due_moved(sd);
			sd->sw_scan = 1;
			sd->sw_retry_at = 0;    /* every one is tried now */
			return rc;
		}
		/* the slots of sockets not found again (those found again
		 * took theirs: sd_pace_carry) */
		for (unsigned i = 0; i < sd->nknown; i++)
			sd_watch_gone(sd, &sd->known[i]);
		free(sd->known);
		sd->known = d.found;
		sd->nknown = sd->nalive = d.nfound;
		sd_byslot_stale(sd);    /* the slots' sockets moved */
		sd->act_ok = sd->use_act = 0;   /* made again by the walk below */
		sd->last_dump = d.now;
		sd->sw_scan = 1;        /* the sockets found: registered now */
		sd->sw_retry_at = 0;    /* those without a slot tried now too */
		if (disc_due) {
			sd->next_discover = d.now + sd->opts.discover_ns;
			sd->probe = 1;  /* measure asking one by one again */
		}
		sd_min_add(&sd->dump, loop_mono_ns() - c0);
		sd->st.dump_ns = sd_min_get(&sd->dump);
		sd_watch_register(sd, d.now);
		sd_least_due_keep(sd);
		return d.emitted;
	}
	sd_watch_register(sd, d.now);  /* after a threshold's change, a retry's time */
	if (!ndue) {
		sd->last_unread = sd->nalive;
		sd->st.paced += sd->nalive;
		return 0;       /* nothing the detector could need yet */
	}
	c0 = loop_mono_ns();
	sd->probe = 0;
	rc = -ENOENT;
	if (sd->rd) {
		/* SR_MAX sockets a run at most, each run going on from where
		 * the last stopped, so each socket is looked at once a poll */
		unsigned from = 0, at = 0;
		int got = 0;

		rc = 0;
		while (from < sd_nlook(sd)) {
			at = from;
			got = sd_read_known(sd, &d, &from, err, errlen);
			if (got < 0)
				break;
			rc += got;
		}
		if (got < 0 && !rc)
			rc = got;       /* none read: sock_diag asks for them all */
		else if (got < 0) {
			/* a later run failed: the rest asked for by sock_diag,
			 * from the first socket that run would have read */
			util_strlcpy(sd->rd_why, err, sizeof(sd->rd_why));
			sockread_close(sd->rd);
			sd->rd = NULL;
			got = sd_lookup_known(sd, &d, at, err, errlen);
			if (got < 0)
				return got;
			rc += got;
		}
		if (rc < 0 && !d.emitted) {
			/* the reader failed: sock_diag from now on */
			util_strlcpy(sd->rd_why, err, sizeof(sd->rd_why));
			sockread_close(sd->rd);
			sd->rd = NULL;
		}
	}
	if (rc < 0)
		rc = sd_lookup_known(sd, &d, 0, err, errlen);
	sd_least_due_keep(sd);  /* what was read is due later */
	if (rc < 0)
		return rc;
	if (rc > 0) {
		sd_min_add(&sd->lookup, (loop_mono_ns() - c0) / (unsigned)rc);
		sd->st.lookup_ns = sd_min_get(&sd->lookup);
	}
	sd->last_unread = sd->nalive > (unsigned)rc ? sd->nalive - (unsigned)rc : 0;
	sd->st.paced += sd->last_unread;
	return d.emitted;
}

int sockdiag_fd(const struct sockdiag *sd)
{
	return sd && sd->sw ? sockwatch_fd(sd->sw) : -1;
}

int sockdiag_handle(struct sockdiag *sd)
{
	(void)sd;
	/* the ring is every port's: consumed even by a reader whose own watch
	 * has closed since its fd was watched (the others' events) */
	return sockwatch_consume() > 0;
}

void sockdiag_set_wanted(struct sockdiag *sd, uint64_t wanted_ns)
{
	if (sd)
		sd->wanted_ns = wanted_ns;
}

void sockdiag_set_slack(struct sockdiag *sd, uint64_t slack_ns)
{
	if (sd)
		sd->slack_ns = slack_ns;
}
