/* probe_cap: asynchronous flow-filtered libpcap capture on the daemon's loop. */
#include "probes/probe_cap.h"
#include "lib/fsutil.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "lib/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CAP_BUDGET 64            /* packets per readable event */
#define CAP_REC_HDR 16           /* on-disk per-packet header */
#define CAP_READ_TIMEOUT_MS 10

struct probe_cap {
	struct loop *l;
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	int fd;
	int fd_added;
	struct nl_sock *nl;      /* rtnetlink, inside the port's namespace */
	struct loop_timer *tdur;
	char ifname[IFNAMSIZ];
	char nsname[128];
	char filter[1024];
	unsigned snaplen;
	uint64_t duration_ns;
	unsigned max_packets;
	uint64_t max_bytes;
	probe_cap_done_fn done;
	void *arg;
	int finished;
	struct probe_cap_result res;
};


/* ---- rtnetlink: ifi_flags and IFLA_PROMISCUITY of the link ---- */

/* 0, or -errno (-ENODEV: no such link). On lib/nl: never waits. */
static int link_query(struct probe_cap *c, struct nl_link *q)
{
	char err[256];

	memset(q, 0, sizeof(*q));
	if (!c->nl)
		return -ENOTCONN;
	return nl_link_query(c->nl, c->ifname, 0, q, err, sizeof(err));
}

/* ---- capture ---- */

static void close_capture(struct probe_cap *c)
{
	struct pcap_stat st;
	struct nl_link q;

	if (c->fd_added) {
		loop_del_fd(c->l, c->fd);
		c->fd_added = 0;
	}
	if (c->pcap && c->dumper && pcap_stats(c->pcap, &st) == 0)
		/* ps_drop: the capture socket's own drops (PACKET_STATISTICS).
		 * Not ps_ifdrop: libpcap reads it from /sys/class/net, which
		 * shows the daemon's namespace, not necessarily the port's. */
		c->res.kernel_drops = st.ps_drop;
	if (c->dumper) {
		pcap_dump_flush(c->dumper);
		pcap_dump_close(c->dumper);
		c->dumper = NULL;
	}
	if (c->pcap) {
		pcap_close(c->pcap);    /* drops the promiscuous membership */
		c->pcap = NULL;
		if (link_query(c, &q) == 0 && q.have_promiscuity)
			c->res.promisc_after_close = q.promiscuity > 0 ||
						     (q.flags & IFF_PROMISC);
	}
	c->fd = -1;
}

static void finish(struct probe_cap *c, const char *reason)
{
	probe_cap_done_fn done = c->done;

	if (c->finished)
		return;
	c->finished = 1;
	if (!c->res.stop_reason[0])
		snprintf(c->res.stop_reason, sizeof(c->res.stop_reason), "%s", reason);
	c->res.end_ns = loop_mono_ns();
	if (c->tdur)
		loop_timer_set(c->tdur, 0, 0);
	close_capture(c);
	c->done = NULL;
	if (done)
		done(c, c->arg);        /* last: done may free c */
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct probe_cap *c = (struct probe_cap *)user;
	uint64_t rec = CAP_REC_HDR + (uint64_t)h->caplen;

	if (c->res.stop_reason[0])
		return;
	if (c->max_bytes && c->res.bytes + rec > c->max_bytes) {
		snprintf(c->res.stop_reason, sizeof(c->res.stop_reason), "bytes");
		pcap_breakloop(c->pcap);
		return;
	}
	pcap_dump((u_char *)c->dumper, h, bytes);
	c->res.packets++;
	c->res.bytes += rec;
	if (c->max_bytes && c->res.bytes + CAP_REC_HDR >= c->max_bytes)
		snprintf(c->res.stop_reason, sizeof(c->res.stop_reason), "bytes");
	if (c->max_packets && c->res.packets >= c->max_packets)
		snprintf(c->res.stop_reason, sizeof(c->res.stop_reason), "packets");
	if (c->res.stop_reason[0])
		pcap_breakloop(c->pcap);
}

static void on_readable(int fd, uint32_t events, void *arg)
{
	struct probe_cap *c = arg;
	int budget = CAP_BUDGET, n;

	(void)fd;
	if (c->finished || !c->pcap)
		return;
	if (c->max_packets && c->max_packets - c->res.packets < (unsigned)budget)
		budget = (int)(c->max_packets - c->res.packets);
	n = pcap_dispatch(c->pcap, budget, on_packet, (u_char *)c);
	if (c->res.stop_reason[0]) {
		finish(c, c->res.stop_reason);
		return;
	}
	if (n == PCAP_ERROR || (n == 0 && (events & (EPOLLERR | EPOLLHUP)))) {
		snprintf(c->res.error, sizeof(c->res.error), "capture on %s in %s: %s",
			 c->ifname, c->nsname,
			 n == PCAP_ERROR ? pcap_geterr(c->pcap) : "socket error or hang-up");
		finish(c, "error");
	}
}

static void on_duration(struct loop_timer *t, void *arg)
{
	struct probe_cap *c = arg;

	(void)t;
	if (c->finished)
		return;
	/* take what is already queued, within one budget */
	if (c->pcap && !c->res.stop_reason[0])
		pcap_dispatch(c->pcap, CAP_BUDGET, on_packet, (u_char *)c);
	finish(c, c->res.stop_reason[0] ? c->res.stop_reason : "duration");
}

/* Syntax check before touching the port (no promiscuity change for a typo). */
static int filter_precheck(const char *filter, unsigned snaplen, char *msg, size_t len)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	struct bpf_program prog;
	int rc = 0;

	if (!dead) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	if (pcap_compile(dead, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(msg, len, "%s", pcap_geterr(dead));
		rc = -1;
	} else
		pcap_freecode(&prog);
	pcap_close(dead);
	return rc;
}

struct probe_cap *probe_cap_start(struct loop *l, int nsfd, const char *ifname,
				  const char *bpf_filter, int promisc,
				  unsigned snaplen, uint64_t duration_ns,
				  unsigned max_packets, uint64_t max_bytes,
				  const char *pcap_path,
				  probe_cap_done_fn done, void *arg,
				  char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE > 512 ? PCAP_ERRBUF_SIZE : 512];
	struct probe_cap *c;
	struct bpf_program prog;
	struct nl_link q;
	FILE *f = NULL;
	const char *base = NULL;
	char dummy[1];
	int saved = -1, rc, entered = 0, dfd = -1, fd = -1, created = 0;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!l || !done) {
		snprintf(err, errlen, "capture: no loop or completion callback");
		return NULL;
	}
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "capture: bad interface name \"%s\"",
			 ifname ? ifname : "(null)");
		return NULL;
	}
	if (!pcap_path || !*pcap_path) {
		snprintf(err, errlen, "capture on %s: no pcap file path", ifname);
		return NULL;
	}
	if (!duration_ns && !max_packets && !max_bytes) {
		snprintf(err, errlen, "capture on %s: no stop condition (duration, "
			 "packets or bytes)", ifname);
		return NULL;
	}
	if (bpf_filter && strlen(bpf_filter) >= sizeof(((struct probe_cap *)0)->filter)) {
		snprintf(err, errlen, "capture on %s: filter too long", ifname);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "capture on %s: out of memory", ifname);
		return NULL;
	}
	c->l = l;
	c->fd = -1;
	c->done = done;
	c->arg = arg;
	c->snaplen = snaplen ? snaplen : PROBE_CAP_DEF_SNAPLEN;
	if (c->snaplen > 262144)
		c->snaplen = 262144;
	c->duration_ns = duration_ns;
	c->max_packets = max_packets;
	c->max_bytes = max_bytes;
	snprintf(c->ifname, sizeof(c->ifname), "%s", ifname);
	snprintf(c->filter, sizeof(c->filter), "%s", bpf_filter ? bpf_filter : "");
	snprintf(c->res.path, sizeof(c->res.path), "%s", pcap_path);
	nl_ns_desc(nsfd, c->nsname, sizeof(c->nsname));
	c->res.promisc_requested = !!promisc;
	c->res.was_promisc_before = c->res.promisc_after_open = -1;
	c->res.promisc_after_close = -1;

	if (c->filter[0] && filter_precheck(c->filter, c->snaplen, ebuf, sizeof(ebuf)) < 0) {
		snprintf(err, errlen, "capture on %s in %s: bad filter \"%s\": %s",
			 c->ifname, c->nsname, c->filter, ebuf);
		goto fail;
	}
	/* a work file: created O_EXCL|O_NOFOLLOW beneath its directory's fd,
	 * so a name planted there (a symbolic link to a root file) is refused,
	 * never followed and truncated */
	base = strrchr(pcap_path, '/');
	if (base) {
		char dir[sizeof(c->res.path)];

		snprintf(dir, sizeof(dir), "%.*s", base == pcap_path ? 1 : (int)(base - pcap_path),
			 pcap_path);
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		base++;
	} else {
		dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		base = pcap_path;
	}
	fd = dfd >= 0 ? fsu_create_excl_at(dfd, base, 0640) : -1;
	if (fd >= 0)
		created = 1;
	f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		snprintf(err, errlen, "capture on %s in %s: create %s: %s", c->ifname,
			 c->nsname, pcap_path, errno == EEXIST ?
			 "the name exists already (a work file is never reused or followed)" :
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}

	c->nl = nl_sock_open(nsfd, NETLINK_ROUTE, 0, ebuf, sizeof(ebuf));
	/* libpcap opens its PF_PACKET socket in pcap_activate: be inside. */
	if (netns_enter(nsfd, &saved) < 0) {
		snprintf(err, errlen, "capture on %s: enter %s: %s", c->ifname,
			 c->nsname, strerror(errno));
		goto fail;
	}
	entered = 1;
	if (link_query(c, &q) == 0) {
		c->res.flags_before = q.flags;
		c->res.promiscuity_before = q.promiscuity;
		c->res.was_promisc_before = q.promiscuity > 0 || (q.flags & IFF_PROMISC);
	}
	ebuf[0] = '\0';
	c->pcap = pcap_create(c->ifname, ebuf);
	if (!c->pcap) {
		snprintf(err, errlen, "capture on %s in %s: %s", c->ifname, c->nsname, ebuf);
		goto fail;
	}
	pcap_set_snaplen(c->pcap, (int)c->snaplen);
	pcap_set_promisc(c->pcap, !!promisc);
	pcap_set_immediate_mode(c->pcap, 1);
	pcap_set_timeout(c->pcap, CAP_READ_TIMEOUT_MS);
	rc = pcap_activate(c->pcap);
	c->res.start_ns = loop_mono_ns();
	c->res.start_real_ns = loop_real_ns();
	if (rc >= 0 && link_query(c, &q) == 0) {
		c->res.promiscuity_after = q.promiscuity;
		c->res.promisc_after_open = q.promiscuity > 0 || (q.flags & IFF_PROMISC);
	}
	entered = 0;
	if (netns_leave(saved) < 0) {
		snprintf(err, errlen, "capture on %s in %s: cannot return to own netns: %s",
			 c->ifname, c->nsname, strerror(errno));
		goto fail;
	}
	if (rc < 0) {
		const char *why = pcap_geterr(c->pcap);

		if (rc == PCAP_ERROR_NO_SUCH_DEVICE)
			snprintf(err, errlen, "capture: no such interface %s in %s (%s)",
				 c->ifname, c->nsname, why);
		else
			snprintf(err, errlen, "capture on %s in %s: %s%s%s", c->ifname,
				 c->nsname, pcap_statustostr(rc), why[0] ? ": " : "", why);
		goto fail;
	}
	if (rc > 0)
		snprintf(c->res.error, sizeof(c->res.error), "warning: %s: %s",
			 pcap_statustostr(rc), pcap_geterr(c->pcap));
	if (c->res.was_promisc_before >= 0 && c->res.promisc_after_open >= 0)
		c->res.transition = !c->res.was_promisc_before && c->res.promisc_after_open;
	if (pcap_setnonblock(c->pcap, 1, ebuf) < 0) {
		snprintf(err, errlen, "capture on %s in %s: non-blocking: %s", c->ifname,
			 c->nsname, ebuf);
		goto fail;
	}
	if (c->filter[0]) {
		if (pcap_compile(c->pcap, &prog, c->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			snprintf(err, errlen, "capture on %s in %s: bad filter \"%s\": %s",
				 c->ifname, c->nsname, c->filter, pcap_geterr(c->pcap));
			goto fail;
		}
		rc = pcap_setfilter(c->pcap, &prog);
		pcap_freecode(&prog);
		if (rc < 0) {
			snprintf(err, errlen, "capture on %s in %s: set filter: %s",
				 c->ifname, c->nsname, pcap_geterr(c->pcap));
			goto fail;
		}
	}
	c->dumper = pcap_dump_fopen(c->pcap, f);
	if (!c->dumper) {
		snprintf(err, errlen, "capture on %s in %s: pcap file %s: %s", c->ifname,
			 c->nsname, pcap_path, pcap_geterr(c->pcap));
		goto fail;
	}
	f = NULL;               /* owned by the dumper */
	pcap_dump_flush(c->dumper);     /* a valid (empty) file from the start */
	c->fd = pcap_get_selectable_fd(c->pcap);
	if (c->fd < 0) {
		snprintf(err, errlen, "capture on %s in %s: no selectable fd", c->ifname,
			 c->nsname);
		goto fail;
	}
	if (loop_add_fd(l, c->fd, EPOLLIN, on_readable, c) < 0) {
		snprintf(err, errlen, "capture on %s in %s: add to loop: %s", c->ifname,
			 c->nsname, strerror(errno));
		goto fail;
	}
	c->fd_added = 1;
	loop_fd_name(l, c->fd, "probe");
	c->tdur = loop_timer_new(l, on_duration, c);
	if (!c->tdur) {
		snprintf(err, errlen, "capture on %s in %s: timer: %s", c->ifname,
			 c->nsname, strerror(errno));
		goto fail;
	}
	loop_timer_name(c->tdur, "probe");
	if (duration_ns && loop_timer_set(c->tdur, duration_ns, 0) < 0) {
		snprintf(err, errlen, "capture on %s in %s: arm timer: %s", c->ifname,
			 c->nsname, strerror(errno));
		goto fail;
	}
	close(dfd);
	return c;
fail:
	if (entered && netns_leave(saved) < 0)
		snprintf(err, errlen, "capture on %s in %s: cannot return to own netns: %s",
			 c->ifname, c->nsname, strerror(errno));
	if (f)
		fclose(f);
	if (created)            /* only the file this call made */
		unlinkat(dfd, base, 0);
	if (dfd >= 0)
		close(dfd);
	c->done = NULL;
	c->finished = 1;
	close_capture(c);
	probe_cap_free(c);
	return NULL;
}

const struct probe_cap_result *probe_cap_result(const struct probe_cap *c)
{
	return c ? &c->res : NULL;
}

int probe_cap_finished(const struct probe_cap *c)
{
	return c && c->finished;
}

void probe_cap_free(struct probe_cap *c)
{
	if (!c)
		return;
	c->done = NULL;
	if (!c->finished)
		finish(c, "cancelled");
	loop_timer_free(c->tdur);
	nl_sock_close(c->nl);
	free(c);
}

static struct json_object *jtri(int v)
{
	return v < 0 ? NULL : json_object_new_boolean(v);
}

int probe_cap_to_json(const struct probe_cap *c, struct json_object *obj)
{
	const struct probe_cap_result *r;

	if (!c || !obj || !json_object_is_type(obj, json_type_object))
		return -1;
	r = &c->res;
	json_object_object_add(obj, "ifname", json_object_new_string(c->ifname));
	json_object_object_add(obj, "netns", json_object_new_string(c->nsname));
	json_object_object_add(obj, "filter", json_object_new_string(c->filter));
	json_object_object_add(obj, "snaplen", json_object_new_int64(c->snaplen));
	json_object_object_add(obj, "path", json_object_new_string(r->path));
	json_object_object_add(obj, "promisc_requested",
			       json_object_new_boolean(r->promisc_requested));
	json_object_object_add(obj, "was_promisc_before", jtri(r->was_promisc_before));
	json_object_object_add(obj, "promisc_after_open", jtri(r->promisc_after_open));
	json_object_object_add(obj, "transition", json_object_new_boolean(r->transition));
	json_object_object_add(obj, "promisc_after_close", jtri(r->promisc_after_close));
	json_object_object_add(obj, "promiscuity_before",
			       json_object_new_int64(r->promiscuity_before));
	json_object_object_add(obj, "promiscuity_after",
			       json_object_new_int64(r->promiscuity_after));
	json_object_object_add(obj, "finished", json_object_new_boolean(c->finished));
	json_object_object_add(obj, "packets", json_object_new_int64(r->packets));
	json_object_object_add(obj, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(obj, "kernel_drops", json_object_new_int64(r->kernel_drops));
	json_object_object_add(obj, "start_mono_ns", json_object_new_int64((int64_t)r->start_ns));
	json_object_object_add(obj, "start_real_ns",
			       json_object_new_int64((int64_t)r->start_real_ns));
	json_object_object_add(obj, "end_mono_ns",
			       r->end_ns ? json_object_new_int64((int64_t)r->end_ns) : NULL);
	json_object_object_add(obj, "duration_ms",
			       r->end_ns >= r->start_ns && r->end_ns ?
			       json_object_new_double((double)(r->end_ns - r->start_ns) / 1e6)
			       : NULL);
	json_object_object_add(obj, "limits_duration_ms",
			       json_object_new_double((double)c->duration_ns / 1e6));
	json_object_object_add(obj, "limits_packets", json_object_new_int64(c->max_packets));
	json_object_object_add(obj, "limits_bytes", json_object_new_int64((int64_t)c->max_bytes));
	json_object_object_add(obj, "stop_reason",
			       r->stop_reason[0] ? json_object_new_string(r->stop_reason) : NULL);
	json_object_object_add(obj, "error",
			       r->error[0] ? json_object_new_string(r->error) : NULL);
	return 0;
}
