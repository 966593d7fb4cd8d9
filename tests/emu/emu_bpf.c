/* emu_bpf: the emulated port's tc program (emu_port.bpf.c) on the veth of
 * each port: load, attach on ingress and egress inside the port's
 * namespace, detach, and its maps (configuration, per-CPU counters,
 * wedges).  The only file of build/emuport that includes the BPF skeleton.
 *
 * The program stands for the NIC, so it must run before anything the host
 * hooks: a tcx link made with BPF_F_BEFORE and no relative goes first in
 * the device's program array (kernel/bpf/mprog.c bpf_mprog_attach), and
 * tcx programs run before the clsact filters (net/core/dev.c
 * sch_handle_ingress: tcx_run, then tc_run), so a flow tracker on tcx or on
 * clsact sees only what the "NIC" delivered.  Kernels without tcx (before
 * 6.6) get a clsact filter at priority TC_PRIO, before the tracker's. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "emuport.h"
#include "emu_port.skel.h"

#define TC_HANDLE 0xe5e1
#define TC_PRIO 7		/* before a flow tracker (use > 7 there) */
/* include/uapi/linux/bpf.h (absent from 6.1 headers) */
#define EMU_BPF_TCX_INGRESS 46
#define EMU_BPF_TCX_EGRESS 47
#define EMU_BPF_F_BEFORE (1u << 3)

/* ---- namespaces ---- */

int ns_enter(const struct port *p, int *saved)
{
	*saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0)
		return -1;
	if (setns(p->nsfd, CLONE_NEWNET) < 0) {
		int e = errno;

		close(*saved);
		errno = e;
		return -1;
	}
	return 0;
}

void ns_leave(int saved)
{
	if (setns(saved, CLONE_NEWNET) < 0)
		logx("setns back to own namespace: %s", strerror(errno));
	close(saved);
}

/* ---- tc attach / detach ---- */

static int count_filters_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWTFILTER)
		(*(int *)data)++;
	return MNL_CB_OK;
}

/* Filters on one clsact direction of ifindex (caller is in the namespace);
 * -1 on error. */
static int count_filters(int ifindex, uint32_t parent)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	int n = 0, ret;
	unsigned int seq = (unsigned int)time(NULL);

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		if (nl)
			mnl_socket_close(nl);
		return -1;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		mnl_socket_close(nl);
		return -1;
	}
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, mnl_socket_get_portid(nl),
				 count_filters_cb, &n);
		if (ret <= MNL_CB_STOP)
			break;
	}
	mnl_socket_close(nl);
	return ret < 0 ? -1 : n;
}

void port_detach(struct port *p)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIO);
	int saved, err, nin, neg;

	if (p->link[0] >= 0 || p->link[1] >= 0) {
		for (int i = 0; i < 2; i++) {
			if (p->link[i] >= 0)
				close(p->link[i]);	/* tcx_link_release */
			p->link[i] = -1;
		}
		p->in_attached = p->eg_attached = 0;
		return;
	}
	if (!p->in_attached && !p->eg_attached)
		return;
	if (ns_enter(p, &saved) < 0) {
		logx("port %s: enter netns %s: %s", p->name, p->netns, strerror(errno));
		return;
	}
	hook.attach_point = BPF_TC_INGRESS;
	if (p->in_attached && (err = bpf_tc_detach(&hook, &opts)) < 0)
		logx("port %s: detach ingress filter from %s in netns %s: %s",
		     p->name, p->ifname, p->netns, strerror(-err));
	opts.flags = opts.prog_fd = opts.prog_id = 0;
	hook.attach_point = BPF_TC_EGRESS;
	if (p->eg_attached && (err = bpf_tc_detach(&hook, &opts)) < 0)
		logx("port %s: detach egress filter from %s in netns %s: %s",
		     p->name, p->ifname, p->netns, strerror(-err));
	p->in_attached = p->eg_attached = 0;
	/* the clsact qdisc goes only when nobody else's filter is left on it */
	nin = count_filters(p->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS));
	neg = count_filters(p->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS));
	if (nin == 0 && neg == 0) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		err = bpf_tc_hook_destroy(&hook);
		if (err < 0 && err != -ENOENT)
			logx("port %s: delete clsact on %s in netns %s: %s",
			     p->name, p->ifname, p->netns, strerror(-err));
	}
	ns_leave(saved);
}

int port_attach(struct port *p)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIO,
			    .flags = BPF_TC_F_REPLACE);
	int saved, err = 0;
	const char *what = "";

	p->skel = emu_port__open_and_load();
	if (!p->skel) {
		logx("port %s: load emu_port BPF object: %s", p->name, strerror(errno));
		return -1;
	}
	if (ns_enter(p, &saved) < 0) {
		logx("port %s: enter netns %s: %s", p->name, p->netns, strerror(errno));
		return -1;
	}
	p->ifindex = (int)if_nametoindex(p->ifname);
	if (!p->ifindex) {
		err = -errno;
		what = "find interface";
		goto out;
	}
	/* tcx first, both directions or neither */
	{
		DECLARE_LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = EMU_BPF_F_BEFORE);

		p->link[0] = bpf_link_create(bpf_program__fd(p->skel->progs.emu_rx), p->ifindex,
					     (enum bpf_attach_type)EMU_BPF_TCX_INGRESS, &lo);
		p->link[1] = p->link[0] < 0 ? -1 :
			bpf_link_create(bpf_program__fd(p->skel->progs.emu_tx), p->ifindex,
					(enum bpf_attach_type)EMU_BPF_TCX_EGRESS, &lo);
		if (p->link[0] >= 0 && p->link[1] >= 0) {
			p->in_attached = p->eg_attached = 1;
			goto netlink;
		}
		if (p->link[0] >= 0)
			close(p->link[0]);
		p->link[0] = p->link[1] = -1;
	}
	hook.ifindex = p->ifindex;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		what = "create clsact";
		goto out;
	}
	p->hook_created = !err;
	opts.prog_fd = bpf_program__fd(p->skel->progs.emu_rx);
	if ((err = bpf_tc_attach(&hook, &opts)) < 0) {
		what = "attach ingress";
		goto out;
	}
	p->in_attached = 1;
	hook.attach_point = BPF_TC_EGRESS;
	opts.prog_fd = bpf_program__fd(p->skel->progs.emu_tx);
	opts.prog_id = 0;
	if ((err = bpf_tc_attach(&hook, &opts)) < 0) {
		what = "attach egress";
		goto out;
	}
	p->eg_attached = 1;
netlink:
	p->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!p->nl || mnl_socket_bind(p->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		what = "open rtnetlink";
		goto out;
	}
	/* a second socket for the work's own reading, so a reply is never
	 * mistaken for (or queued behind) an event */
	p->nlq = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!p->nlq || mnl_socket_bind(p->nlq, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(p->nlq), SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){ .tv_usec = 200000 }, sizeof(struct timeval)) < 0) {
		err = -errno;
		what = "open rtnetlink (queries)";
	}
out:
	ns_leave(saved);
	if (err < 0)
		logx("port %s: %s on %s in netns %s: %s", p->name, what, p->ifname,
		     p->netns, strerror(-err));
	return err < 0 ? -1 : 0;
}

/* ---- BPF maps ---- */

int cfg_push(struct port *p)
{
	__u32 zero = 0;

	return bpf_map__update_elem(p->skel->maps.cfg, &zero, sizeof(zero), &p->cfg,
				    sizeof(p->cfg), BPF_ANY);
}

int read_counters(struct emu *e, struct port *p, uint64_t *v)
{
	size_t sz = sizeof(struct emu_counters) * (size_t)e->ncpus;
	struct emu_counters *pc = calloc(1, sz);
	__u32 zero = 0;
	int rc = -1;

	memset(v, 0, sizeof(*v) * X_NVALS);
	if (pc && bpf_map__lookup_elem(p->skel->maps.counters, &zero, sizeof(zero),
				       pc, sz, 0) == 0) {
		for (int c = 0; c < e->ncpus; c++)
			for (int i = 0; i < EC_NUM; i++)
				v[i] += pc[c].v[i];
		rc = 0;
	}
	free(pc);
	v[X_CRC] = p->crc;
	v[X_SYM] = p->sym;
	v[X_TX_PKTS] = v[EC_TX_VP_UC_PKTS] + v[EC_TX_VP_MC_PKTS] + v[EC_TX_VP_BC_PKTS];
	v[X_TX_BYTES] = v[EC_TX_VP_UC_BYTES] + v[EC_TX_VP_MC_BYTES] + v[EC_TX_VP_BC_BYTES];
	return rc;
}

int clear_wedges(struct port *p)
{
	int fd = bpf_map__fd(p->skel->maps.wedges), n = 0;
	struct emu_flow key, next;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0 && n < 4 * EMU_MAX_WEDGES) {
		key = next;
		bpf_map_delete_elem(fd, &key);
		n++;
	}
	return n;
}

int wedge_set(struct port *p, const struct emu_flow *f, const struct emu_wedge *w)
{
	return bpf_map__update_elem(p->skel->maps.wedges, f, sizeof(*f), w, sizeof(*w),
				    BPF_ANY);
}

int wedge_del(struct port *p, const struct emu_flow *f)
{
	return bpf_map__delete_elem(p->skel->maps.wedges, f, sizeof(*f), 0);
}

int wedges_fd(const struct port *p)
{
	return bpf_map__fd(p->skel->maps.wedges);
}

void port_unload(struct port *p)
{
	if (p->skel)
		emu_port__destroy(p->skel);
}
