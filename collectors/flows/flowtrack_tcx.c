/* flowtrack_tcx: the tracker's programs on tcx links (see flowtrack_api.h).
 *
 * A tcx link (kernel 6.6+, kernel/bpf/tcx.c tcx_link_attach) puts the
 * program in the device's bpf_mprog array of its direction, created on
 * first use by tcx_entry_fetch_or_create() and published with an RCU
 * pointer swap: unlike grafting a clsact qdisc (net/sched/sch_api.c
 * qdisc_graft -> dev_deactivate) nothing stops the device's queues, so no
 * frame is lost when the tracker comes or goes. The link holds the
 * program while its file descriptor is open; close() (or the process's
 * death) detaches it (tcx_link_release). In sch_handle_ingress/egress
 * (net/core/dev.c) tcx programs run before the clsact filters, in array
 * order, as long as each returns TCX_NEXT: ours returns TC_ACT_UNSPEC,
 * which is TCX_NEXT, so what follows still runs. libbpf 1.1 (Debian 12)
 * has no tcx helper; bpf_link_create passes the attach type and flags
 * through, and the constants are the kernel's uapi values. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collectors/flows/flowtrack_int.h"

/* include/uapi/linux/bpf.h, enum bpf_attach_type (absent from 6.1 headers) */
#define NS_BPF_TCX_INGRESS 46
#define NS_BPF_TCX_EGRESS 47

int ft_tcx_on(struct flowtrack *ft, char *err, size_t errlen)
{
	static const int types[2] = { NS_BPF_TCX_INGRESS, NS_BPF_TCX_EGRESS };
	int progs[2] = { bpf_program__fd(ft->skel->progs.ft_ingress),
			 bpf_program__fd(ft->skel->progs.ft_egress) };
	int i;

	for (i = 0; i < 2; i++) {
		/* no flags, no relative: appended (kernel/bpf/mprog.c
		 * bpf_mprog_attach), after whatever another tool put first */
		int fd = bpf_link_create(progs[i], ft->ifindex, (enum bpf_attach_type)types[i], NULL);

		if (fd < 0) {
			snprintf(err, errlen, "flowtrack: tcx %s link on %s (netns inode %lu): %s",
				 i ? "egress" : "ingress", ft->ifname, ft->nsino, strerror(-fd));
			ft_tcx_off(ft);
			return fd;
		}
		ft->link[i] = fd;
	}
	return 0;
}

void ft_tcx_off(struct flowtrack *ft)
{
	for (int i = 0; i < 2; i++) {
		if (ft->link[i] >= 0)
			close(ft->link[i]);
		ft->link[i] = -1;
	}
}
