/* flowtrack_int: the tracker's state, shared by its loader (flowtrack.c)
 * and its map reader (flowtrack_read.c). Not for other modules. */
#ifndef NICSTALL_FLOWTRACK_INT_H
#define NICSTALL_FLOWTRACK_INT_H

#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdint.h>

#include "collectors/flows/flowtrack.h"
#include "collectors/flows/flowtrack_api.h"
#include "collectors/flows/flowtrack.skel.h"

#define FT_BATCH 256                    /* map entries read per system call */
#define FT_ENOTSUPP 524                 /* the kernel's ENOTSUPP: no batch ops for the map */

struct flowtrack;
/* flowtrack_bg.c: a change of the hooks (on 1: put on, 0: taken off),
 * ft->hooked left as it is: 0, or -errno + err. */
typedef int (*ft_change_fn)(struct flowtrack *ft, int on, char *err, size_t errlen);

struct flowtrack {
	struct flowtrack_bpf *skel;
	int nsfd;                       /* owned */
	unsigned long nsino;
	int ifindex;
	char ifname[IF_NAMESIZE];
	enum flowtrack_attach_mode mode;  /* FLOWTRACK_TCX or _CLSACT */
	int link[2];                    /* tcx: ingress, egress link fds; -1 off */
	int created;                    /* clsact: we created the qdisc */
	int hooked;                     /* our hooks are on the port */
	uint64_t since_ns;              /* flows last seen before: not emitted */
	unsigned max_flows;
	char marker[PATH_MAX];          /* "" when markers are off */
	/* reading the map: batches (or key by key when the kernel has none) */
	struct ft_key *bkeys;
	struct ft_val *bvals;
	unsigned batch_cap;
	int no_batch;
	uint64_t batches, walks;
	/* flowtrack_set_hooked_bg: a change made by a thread (flowtrack_bg.c);
	 * while bg_busy only that thread touches link[] and the port's
	 * filters */
	pthread_t bg_th;
	int bg_busy, bg_on, bg_rc;
	int bg_done;                    /* atomic: the thread has finished */
	ft_change_fn bg_fn;
	char bg_err[256];
};

/* Start fn(ft, on) in a thread: 0, or pthread_create()'s error (none
 * started). One at a time. */
int ft_bg_start(struct flowtrack *ft, int on, ft_change_fn fn);
/* 1 when no change is in flight or the one in flight has finished. */
int ft_bg_done(const struct flowtrack *ft);
/* The change in flight waited for and joined: ft->hooked as it left them
 * (bg_rc, bg_err: its outcome). Nothing in flight: nothing done. */
void ft_bg_join(struct flowtrack *ft);

/* flowtrack_tcx.c. Inside the port's namespace: both links made (appended
 * after the tcx programs there); 0, or -errno + err with none made. */
int ft_tcx_on(struct flowtrack *ft, char *err, size_t errlen);
/* Both links closed, from any namespace (a link is bound to its device). */
void ft_tcx_off(struct flowtrack *ft);

#endif
