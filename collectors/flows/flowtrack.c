/* flowtrack: loader of the tc eBPF flow tracker (flowtrack.bpf.c).
 *
 * open -> rodata (selectors) + map size -> load -> the two programs hooked
 * inside the port's namespace: as tcx links (flowtrack_tcx.c) where the
 * kernel has them, else as two filters on the clsact qdisc (libbpf's
 * bpf_tc_* talk rtnetlink from the calling thread's namespace). Our filters
 * carry a fixed handle and priority so a restarted daemon finds and removes
 * what a killed one left; a marker file records that we created the clsact
 * qdisc, because only then may we delete it, and only when no other filter
 * remains on it (counted with an RTM_GETTFILTER dump on lib/nl's request
 * path). Links need none of that: they die with their descriptors. Also
 * flow_src_bpf_ops (flowsrc.h, port scope). */
#include "collectors/flows/flowtrack_api.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <limits.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/bpflog.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/flowtrack.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/rtnl.h"
#include "lib/util.h"
#include "collectors/flows/flowtrack_int.h"

#define FT_MAX_FLOWS_CAP (1u << 22)
#define FT_PROG_IN "ft_ingress"
#define FT_PROG_EG "ft_egress"


static char ft_state_dir[1024] = FLOWTRACK_STATE_DIR;

void flowtrack_set_state_dir(const char *dir)
{
	if (!dir)
		ft_state_dir[0] = '\0';
	else
		snprintf(ft_state_dir, sizeof(ft_state_dir), "%s", dir);
}

/* A namespace fd of our own (dup of nsfd, or our current namespace). */
static int ft_ns_dup(int nsfd, unsigned long *ino)
{
	struct stat st;
	int fd;

	if (nsfd >= 0)
		fd = fcntl(nsfd, F_DUPFD_CLOEXEC, 0);
	else
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*ino = fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
	return fd;
}

static void ft_marker_path(unsigned long nsino, int ifindex, char *buf, size_t len)
{
	if (!ft_state_dir[0])
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s/%lu-%d", ft_state_dir, nsino, ifindex);
}

static void ft_marker_write(const char *path, const char *ifname)
{
	char body[128], err[1200];
	int dfd;

	if (!path[0])
		return;
	/* root's directory, the marker through an O_EXCL temporary name */
	dfd = fsu_private_dir(ft_state_dir, 0700, err, sizeof(err));
	if (dfd < 0) {
		log_warnx("flowtrack: state directory: %s", err);
		return;
	}
	snprintf(body, sizeof(body), "clsact qdisc on %s created by nicstalld\n", ifname);
	if (fsu_replace_at(dfd, strrchr(path, '/') + 1, body, strlen(body), 0600) < 0)
		log_warn("flowtrack: marker %s", path);
	close(dfd);
}

/* Filters on one clsact direction (parent) that are not ours: >= 0 or
 * -errno. Must run inside the port's namespace. */
static int ft_filter_count_cb(const struct nlmsghdr *nlh, void *data)
{
	int *count = data;
	const struct tcmsg *t;
	unsigned prio;

	if (nlh->nlmsg_type != RTM_NEWTFILTER)
		return MNL_CB_OK;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*t))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	t = mnl_nlmsg_get_payload(nlh);
	prio = t->tcm_info >> 16;
	/* The priority's own header entry has handle 0. */
	if (prio != FLOWTRACK_TC_PRIO || (t->tcm_handle && t->tcm_handle != FLOWTRACK_TC_HANDLE))
		(*count)++;
	return MNL_CB_OK;
}

/* Runs inside the port's namespace (the caller has entered it), so the
 * socket nl_sock_open(-1) makes lives there. */
static int ft_other_filters(int ifindex, unsigned parent)
{
	char req[MNL_NLMSG_HDRLEN + 64] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct nl_sock *ns;
	struct tcmsg *t;
	char err[256];
	int count = 0, rc;

	ns = nl_sock_open(-1, NETLINK_ROUTE, 0, err, sizeof(err));
	if (!ns)
		return -(errno ? errno : EIO);
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = parent;
	rc = nl_sock_request(ns, nlh, ft_filter_count_cb, &count, "tc filter dump",
			     err, sizeof(err));
	nl_sock_close(ns);
	if (rc < 0)
		log_debug("flowtrack: ifindex %d: %s", ifindex, err);
	return rc < 0 ? rc : count;
}

static int ft_others_both(int ifindex)
{
	int a = ft_other_filters(ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS));
	int b;

	if (a < 0)
		return a;
	b = ft_other_filters(ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS));
	if (b < 0)
		return b;
	return a + b;
}

static int ft_tc_detach(int ifindex, enum bpf_tc_attach_point ap)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = ap);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = FLOWTRACK_TC_HANDLE, .priority = FLOWTRACK_TC_PRIO);

	return bpf_tc_detach(&hook, &o);
}

static int ft_qdisc_delete(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);

	return bpf_tc_hook_destroy(&hook);
}

/* Convert the port's selectors to the BPF form (see struct ft_sel). */
static void ft_sel_to_bpf(const struct flow_sel *s, struct ft_sel *b)
{
	uint8_t mask[16] = { 0 }, net[16];
	unsigned plen, i;

	memset(b, 0, sizeof(*b));
	b->proto = s->proto;
	if (s->port_lo || s->port_hi) {
		b->port_lo = s->port_lo;
		b->port_hi = s->port_hi < s->port_lo ? s->port_lo : s->port_hi;
	}
	if (!s->family)
		return;
	plen = s->prefix > 128 ? 128 : s->prefix;
	if (s->family == AF_INET && plen < 96)
		plen = 96;
	for (i = 0; i < 16; i++) {
		unsigned bit = i * 8;

		if (bit + 8 <= plen)
			mask[i] = 0xff;
		else if (bit < plen)
			mask[i] = (uint8_t)(0xff00u >> (plen - bit));
		net[i] = s->addr.s6_addr[i] & mask[i];
	}
	if (s->family == AF_INET) {     /* only v4-mapped addresses */
		memset(mask, 0xff, 12);
		memset(net, 0, 10);
		net[10] = net[11] = 0xff;
	}
	memcpy(b->mask, mask, 16);
	memcpy(b->net, net, 16);
	b->has_addr = 1;
}

static struct flowtrack_bpf *ft_load(const struct flow_sel *sel, unsigned nsel,
				     unsigned max_flows, char *err, size_t errlen)
{
	struct flowtrack_bpf *skel;
	unsigned i;
	int rc;

	bpflog_init();
	skel = flowtrack_bpf__open();
	if (!skel) {
		rc = -errno;
		snprintf(err, errlen, "flowtrack: open BPF object: %s", strerror(-rc));
		errno = -rc;
		return NULL;
	}
	skel->rodata->ft_nsel = nsel;
	for (i = 0; i < nsel; i++)
		ft_sel_to_bpf(&sel[i], &skel->rodata->ft_sels[i]);
	rc = bpf_map__set_max_entries(skel->maps.ft_flows, max_flows);
	if (!rc)
		rc = flowtrack_bpf__load(skel);
	if (rc) {
		snprintf(err, errlen,
			 "flowtrack: load BPF programs (LRU map of %u flows): %s "
			 "(needs a kernel with BPF tc programs, CAP_BPF/CAP_NET_ADMIN or root, and "
			 "locked-memory room)", max_flows, strerror(-rc));
		flowtrack_bpf__destroy(skel);
		errno = -rc;
		return NULL;
	}
	return skel;
}

int flowtrack_supported(char *err, size_t errlen)
{
	struct flowtrack_bpf *skel = ft_load(NULL, 0, 1, err, errlen);

	if (!skel)
		return errno ? -errno : -EINVAL;
	flowtrack_bpf__destroy(skel);
	return 0;
}

/* Inside the namespace: our two filters on the clsact hook. */
static int ft_filters_attach(struct flowtrack *ft, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ft->ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, oi, .handle = FLOWTRACK_TC_HANDLE,
		    .priority = FLOWTRACK_TC_PRIO, .flags = BPF_TC_F_REPLACE,
		    .prog_fd = bpf_program__fd(ft->skel->progs.ft_ingress));
	LIBBPF_OPTS(bpf_tc_opts, oe, .handle = FLOWTRACK_TC_HANDLE,
		    .priority = FLOWTRACK_TC_PRIO, .flags = BPF_TC_F_REPLACE,
		    .prog_fd = bpf_program__fd(ft->skel->progs.ft_egress));
	int rc;

	rc = bpf_tc_attach(&hook, &oi);
	if (rc) {
		snprintf(err, errlen, "flowtrack: attach ingress filter on %s (netns inode %lu): %s",
			 ft->ifname, ft->nsino, strerror(-rc));
		return rc;
	}
	hook.attach_point = BPF_TC_EGRESS;
	rc = bpf_tc_attach(&hook, &oe);
	if (rc) {
		snprintf(err, errlen, "flowtrack: attach egress filter on %s (netns inode %lu): %s",
			 ft->ifname, ft->nsino, strerror(-rc));
		ft_tc_detach(ft->ifindex, BPF_TC_INGRESS);
		return rc;
	}
	return 0;
}

/* Inside the namespace: the clsact qdisc (made when missing) and our
 * filters on it. The qdisc stays until flowtrack_detach: grafting one on
 * an interface that is up deactivates it for a moment (net/sched/sch_api.c
 * qdisc_graft() calls dev_deactivate() for clsact too, whose queues drop
 * what is sent meanwhile), while filters come and go without that. */
static int ft_hook_attach(struct flowtrack *ft, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ft->ifindex, .attach_point = BPF_TC_INGRESS);
	int rc, had;

	/* The marker goes first: killed between the qdisc and the marker, a
	 * run would leave a qdisc the next one cannot tell for its own. */
	had = ft->marker[0] && access(ft->marker, F_OK) == 0;
	if (!had)
		ft_marker_write(ft->marker, ft->ifname);
	rc = bpf_tc_hook_create(&hook);
	if (rc == 0) {
		ft->created = 1;
	} else if (rc == -EEXIST) {
		/* Pre-existing qdisc: ours if we made it at open (hooks back on)
		 * or a killed run of ours did (its marker was there). */
		ft->created = ft->created || had;
		if (!ft->created && !had && ft->marker[0])
			unlink(ft->marker);
	} else {
		if (!had && ft->marker[0])
			unlink(ft->marker);
		snprintf(err, errlen, "flowtrack: create clsact qdisc on %s (netns inode %lu): %s",
			 ft->ifname, ft->nsino, strerror(-rc));
		return rc;
	}
	rc = ft_filters_attach(ft, err, errlen);
	if (rc)
		goto undo;
	return 0;
undo:
	if (ft->created && ft_others_both(ft->ifindex) == 0)
		ft_qdisc_delete(ft->ifindex);
	if (ft->created && ft->marker[0])
		unlink(ft->marker);
	ft->created = 0;
	return rc;
}

/* Run fn(ft) inside the port's namespace and come back. */
static int ft_in_ns(struct flowtrack *ft, int (*fn)(struct flowtrack *, char *, size_t),
		    char *err, size_t errlen)
{
	int saved, rc;

	if (netns_enter(ft->nsfd, &saved) < 0) {
		rc = -errno;
		snprintf(err, errlen, "flowtrack: enter netns inode %lu: %s", ft->nsino,
			 strerror(errno));
		return rc;
	}
	rc = fn(ft, err, errlen);
	if (netns_leave(saved) < 0) {
		/* Not back home: we must not go on in the port's namespace. */
		snprintf(err, errlen, "flowtrack: cannot return from netns inode %lu: %s",
			 ft->nsino, strerror(errno));
		return -EIO;
	}
	return rc;
}

/* Inside the namespace: our filters off (a gone interface took them). */
static int ft_filters_detach(struct flowtrack *ft, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	int ri, re;

	if (!if_indextoname((unsigned)ft->ifindex, name))
		return 0;
	ri = ft_tc_detach(ft->ifindex, BPF_TC_INGRESS);
	re = ft_tc_detach(ft->ifindex, BPF_TC_EGRESS);
	/* -ENOENT: not there (removed by someone else): off all the same */
	ri = ri == -ENOENT ? 0 : ri;
	re = re == -ENOENT ? 0 : re;
	if (ri || re)
		snprintf(err, errlen, "flowtrack: detach filters from %s (netns inode %lu): %s",
			 ft->ifname, ft->nsino, strerror(-(ri ? ri : re)));
	return ri ? ri : re;
}

/* Inside the namespace: our filters off, and the qdisc too when we made
 * it and nothing else is on it (a gone interface took both). */
static int ft_release(struct flowtrack *ft, char *err, size_t errlen)
{
	int rc = ft_filters_detach(ft, err, errlen);

	if (ft->created && ft_others_both(ft->ifindex) == 0)
		ft_qdisc_delete(ft->ifindex);
	return rc;
}

/* Inside the namespace: the filters back on the qdisc kept since open (no
 * marker I/O, no graft); the qdisc made again only when someone removed it
 * meanwhile. A failure leaves the qdisc as it was. */
static int ft_filters_reattach(struct flowtrack *ft, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ft->ifindex, .attach_point = BPF_TC_INGRESS);
	int rc = ft_filters_attach(ft, err, errlen), had;

	if (rc == 0)
		return 0;
	/* as ft_hook_attach: the marker before the qdisc */
	had = ft->marker[0] && access(ft->marker, F_OK) == 0;
	if (!had)
		ft_marker_write(ft->marker, ft->ifname);
	if (bpf_tc_hook_create(&hook) != 0) {
		if (!had && !ft->created && ft->marker[0])
			unlink(ft->marker);
		return rc;              /* the qdisc is there: that error stands */
	}
	ft->created = 1;
	return ft_filters_attach(ft, err, errlen);
}

/* The hooks put on (on 1) or taken off the port, ft->hooked left as it
 * is: 0, or -errno + err. */
static int ft_hook_change(struct flowtrack *ft, int on, char *err, size_t errlen)
{
	if (ft->mode == FLOWTRACK_TCX && !on) {
		ft_tcx_off(ft);         /* a link is bound to its device: no setns */
		return 0;
	}
	return ft_in_ns(ft, ft->mode == FLOWTRACK_TCX ? ft_tcx_on :
			on ? ft_filters_reattach : ft_filters_detach, err, errlen);
}

int flowtrack_set_hooked(struct flowtrack *ft, int on, char *err, size_t errlen)
{
	int rc;

	ft_bg_join(ft);
	if (on == ft->hooked)
		return 0;
	rc = ft_hook_change(ft, on, err, errlen);
	if (rc == 0)
		ft->hooked = on;
	return rc;
}

int flowtrack_set_hooked_bg(struct flowtrack *ft, int on, char *err, size_t errlen)
{
	int rc;

	if (ft->bg_busy) {
		/* either way: never waited for here (a thread the kernel
		 * holds would hold the loop); the next call looks again */
		if (!ft_bg_done(ft))
			return -EINPROGRESS;
		ft_bg_join(ft);
		if (ft->bg_rc < 0 && ft->bg_on == on) {
			util_strlcpy(err, ft->bg_err, errlen);
			return ft->bg_rc;
		}
		if (ft->bg_rc < 0)
			log_debug("flowtrack: hooks of %s %s: %s (not wanted any more)",
				  ft->ifname, ft->bg_on ? "on" : "off", ft->bg_err);
	}
	if (on == ft->hooked)
		return 0;
	/* the map's flows from before are not news: they would come back as
	 * new flows (progressing siblings of the stall to come); frames
	 * from the links' making on are */
	if (on)
		flowtrack_set_since(ft, loop_mono_ns());
	rc = ft_bg_start(ft, on, ft_hook_change);
	if (rc) {
		log_warnx("flowtrack: no thread for the hooks of %s (%s): changed in the loop",
			  ft->ifname, strerror(rc));
		return flowtrack_set_hooked(ft, on, err, errlen);
	}
	return -EINPROGRESS;
}

int flowtrack_hooked(const struct flowtrack *ft)
{
	return ft->hooked;
}

enum flowtrack_attach_mode flowtrack_attach_mode(const struct flowtrack *ft)
{
	return ft->mode;
}

const char *flowtrack_attach_name(enum flowtrack_attach_mode mode)
{
	return mode == FLOWTRACK_TCX ? "tcx" : mode == FLOWTRACK_CLSACT ? "clsact" : "auto";
}

/* Hook ft as mode says (auto: tcx, then clsact). Inside no namespace. */
static int ft_hook(struct flowtrack *ft, enum flowtrack_attach_mode mode, char *err,
		   size_t errlen)
{
	char etcx[256];
	int rc;

	if (mode != FLOWTRACK_CLSACT) {
		ft->mode = FLOWTRACK_TCX;
		rc = ft_in_ns(ft, ft_tcx_on, etcx, sizeof(etcx));
		/* a vanished interface or namespace fails clsact the same way */
		if (rc == 0 || mode == FLOWTRACK_TCX || rc == -ENODEV || rc == -EIO) {
			if (rc)
				snprintf(err, errlen, "%s", etcx);
			return rc;
		}
		/* kernels before 6.6 refuse the attach type: EINVAL */
		log_debug("%s; trying clsact", etcx);
	}
	ft->mode = FLOWTRACK_CLSACT;
	rc = ft_in_ns(ft, ft_hook_attach, err, errlen);
	if (rc && mode == FLOWTRACK_AUTO) {
		size_t n = strlen(err);

		snprintf(err + n, errlen - n, " (after %s)", etcx);
	}
	return rc;
}

struct flowtrack *flowtrack_attach(int nsfd, int ifindex, const struct flow_sel *sel,
				   unsigned nsel, unsigned max_flows,
				   enum flowtrack_attach_mode mode, char *err, size_t errlen)
{
	struct flowtrack *ft;
	int saved, rc, e;

	if (ifindex <= 0) {
		snprintf(err, errlen, "flowtrack: invalid ifindex %d", ifindex);
		return NULL;
	}
	if (nsel > FLOWTRACK_MAX_SEL || (nsel && !sel)) {
		snprintf(err, errlen, "flowtrack: %u flow selectors, at most %d", nsel,
			 FLOWTRACK_MAX_SEL);
		return NULL;
	}
	if (mode != FLOWTRACK_AUTO && mode != FLOWTRACK_TCX && mode != FLOWTRACK_CLSACT) {
		snprintf(err, errlen, "flowtrack: attach mode %d is not auto, tcx or clsact", (int)mode);
		return NULL;
	}
	if (max_flows == 0)
		max_flows = FT_DEFAULT_FLOWS;
	if (max_flows > FT_MAX_FLOWS_CAP) {
		snprintf(err, errlen, "flowtrack: %u flows requested, at most %u", max_flows,
			 FT_MAX_FLOWS_CAP);
		return NULL;
	}
	ft = calloc(1, sizeof(*ft));
	if (!ft) {
		snprintf(err, errlen, "flowtrack: out of memory");
		return NULL;
	}
	ft->ifindex = ifindex;
	ft->max_flows = max_flows;
	ft->link[0] = ft->link[1] = -1;
	ft->nsfd = ft_ns_dup(nsfd, &ft->nsino);
	if (ft->nsfd < 0) {
		snprintf(err, errlen, "flowtrack: namespace fd %d: %s", nsfd, strerror(errno));
		free(ft);
		return NULL;
	}
	ft_marker_path(ft->nsino, ifindex, ft->marker, sizeof(ft->marker));

	if (netns_enter(ft->nsfd, &saved) < 0) {
		snprintf(err, errlen, "flowtrack: enter netns inode %lu: %s", ft->nsino,
			 strerror(errno));
		goto fail;
	}
	e = if_indextoname((unsigned)ifindex, ft->ifname) ? 0 : errno == ENXIO ? ENODEV : errno;
	if (netns_leave(saved) < 0) {
		snprintf(err, errlen, "flowtrack: cannot return from netns inode %lu: %s",
			 ft->nsino, strerror(errno));
		goto fail;
	}
	if (e) {
		snprintf(err, errlen, "flowtrack: no interface with ifindex %d in netns inode %lu: %s",
			 ifindex, ft->nsino, strerror(e));
		goto fail;
	}

	ft->skel = ft_load(sel, nsel, max_flows, err, errlen);
	if (!ft->skel)
		goto fail;

	rc = ft_hook(ft, mode, err, errlen);
	if (rc)
		goto fail;
	ft->hooked = 1;
	return ft;
fail:
	flowtrack_bpf__destroy(ft->skel);
	close(ft->nsfd);
	free(ft);
	return NULL;
}

void flowtrack_detach(struct flowtrack *ft)
{
	char e[256];

	if (!ft)
		return;
	ft_bg_join(ft);
	if (ft->mode == FLOWTRACK_TCX)
		ft_tcx_off(ft);
	else if (ft_in_ns(ft, ft_release, e, sizeof(e)) < 0)
		log_warnx("flowtrack: detach from %s: %s", ft->ifname, e);
	if (ft->created && ft->marker[0])
		unlink(ft->marker);
	flowtrack_bpf__destroy(ft->skel);
	close(ft->nsfd);
	free(ft->bkeys);
	free(ft->bvals);
	free(ft);
}

/* Is the program of our filter on this direction one of ours? 1 yes,
 * 0 another program, -ENOENT no filter at our handle/priority. */
static int ft_stale_is_ours(int ifindex, enum bpf_tc_attach_point ap)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = ap);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = FLOWTRACK_TC_HANDLE, .priority = FLOWTRACK_TC_PRIO);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int rc, fd;

	rc = bpf_tc_query(&hook, &o);
	if (rc)
		return rc == -ENOENT || rc == -EINVAL ? -ENOENT : rc;
	fd = bpf_prog_get_fd_by_id(o.prog_id);
	if (fd < 0)
		return 1;       /* cannot look: handle and priority are ours */
	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (rc)
		return 1;
	return !strcmp(info.name, FT_PROG_IN) || !strcmp(info.name, FT_PROG_EG);
}

int flowtrack_cleanup_stale(int nsfd, int ifindex, char *err, size_t errlen)
{
	static const enum bpf_tc_attach_point aps[2] = { BPF_TC_INGRESS, BPF_TC_EGRESS };
	char marker[PATH_MAX], name[IF_NAMESIZE];
	unsigned long nsino;
	int fd, saved, removed = 0, rc = 0, i;

	if (ifindex <= 0) {
		snprintf(err, errlen, "flowtrack: invalid ifindex %d", ifindex);
		return -EINVAL;
	}
	bpflog_init();
	fd = ft_ns_dup(nsfd, &nsino);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "flowtrack: namespace fd %d: %s", nsfd, strerror(-rc));
		return rc;
	}
	ft_marker_path(nsino, ifindex, marker, sizeof(marker));
	if (netns_enter(fd, &saved) < 0) {
		rc = -errno;
		snprintf(err, errlen, "flowtrack: enter netns inode %lu: %s", nsino, strerror(-rc));
		close(fd);
		return rc;
	}
	if (!if_indextoname((unsigned)ifindex, name)) {
		rc = errno == ENXIO ? -ENODEV : -errno;
		if (marker[0])
			unlink(marker);         /* the qdisc went with the device */
		snprintf(err, errlen, "flowtrack: no interface with ifindex %d in netns inode %lu: %s",
			 ifindex, nsino, strerror(-rc));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		int ours = ft_stale_is_ours(ifindex, aps[i]);

		if (ours == -ENOENT)
			continue;
		if (ours < 0) {
			rc = ours;
			snprintf(err, errlen, "flowtrack: query %s filter on %s (netns inode %lu): %s",
				 i ? "egress" : "ingress", name, nsino, strerror(-rc));
			goto out;
		}
		if (!ours) {
			log_warnx("flowtrack: %s filter handle %#x priority %#x on %s is not ours; left alone",
				  i ? "egress" : "ingress", FLOWTRACK_TC_HANDLE, FLOWTRACK_TC_PRIO, name);
			continue;
		}
		rc = ft_tc_detach(ifindex, aps[i]);
		if (rc) {
			snprintf(err, errlen, "flowtrack: remove stale %s filter on %s (netns inode %lu): %s",
				 i ? "egress" : "ingress", name, nsino, strerror(-rc));
			goto out;
		}
		removed++;
	}
	if (marker[0] && access(marker, F_OK) == 0) {
		if (ft_others_both(ifindex) == 0)
			ft_qdisc_delete(ifindex);
		unlink(marker);
	}
out:
	if (netns_leave(saved) < 0) {
		rc = -EIO;
		snprintf(err, errlen, "flowtrack: cannot return from netns inode %lu", nsino);
	}
	close(fd);
	return rc < 0 ? rc : removed;
}
