/* host_int.h: the host source's state, shared by src_host.c (pressure,
 * the processes and their delays, the source's ops) and host_disks.c
 * (block devices, their identity, a process's disks and its cgroups' I/O
 * limits), private to them: src_host.c calls host_disks.c, never the
 * reverse. */
#ifndef NICSTALL_HOST_INT_H
#define NICSTALL_HOST_INT_H

#include "collectors/counters/src_host.h"
#include "lib/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define BUF_MAX (256 * 1024)            /* /proc/diskstats, cgroup.procs */
#define SMALL 4096                      /* one process's file, a PSI file */
#define RESCAN_NS 5000000000ull         /* producers' processes, disk set */
#define NAME_LEN 112
#define KNOWN_MAX 1024                  /* diskstats names judged */
#define SCAN_MAX 32768                  /* processes whose comm a rescan reads */

enum { PF_CPU, PF_RUNQ, PF_BLKIO, PF_RB, PF_WB, PF_SYSCR, PF_SYSCW, NPF };

struct hdisk {                  /* one diskstats name, judged */
	char name[64];
	int keep;
	char transport[16], model[64], firmware[64], vendor[32], serial_sha256[17];
	int rotational;             /* -1 unknown */
	long nr_requests;           /* -1 unknown */
	uint64_t seq;               /* its diskseq when judged, 0 none */
	unsigned scan;              /* the rescan that last found it */
};

struct hproc {
	int pid;
	int prod;                   /* producer index, -1: a flow owner */
	int seen;                   /* found by this rescan (producers) */
	uint64_t start;             /* starttime of the first reading */
	char comm[16];
	uint64_t v[NPF];
	uint64_t base[NPF];         /* the first reading (a producer's sums
				     * count from when it was found) */
	int have;                   /* v holds a reading */
	char dev[HOST_PROC_DEVS][32]; /* the disks of the files it holds open */
	unsigned ndev;
	struct {                    /* its cgroups' I/O limits (host_proc_io_limits) */
		char dev[32];
		uint64_t v[HOST_LIM_KINDS];   /* riops, rbps, wiops, wbps; 0 none */
		char cg[HOST_LIM_KINDS][256]; /* the group that sets each */
		int cg_trunc[HOST_LIM_KINDS];
	} lim[HOST_PROC_LIMITS];
	unsigned nlim;
};

struct host {
	struct host_opts o;
	char proc[PATH_MAX], sys[PATH_MAX];
	long tck;
	int owners[HOST_MAX_PIDS];
	unsigned nowners;
	int gone[HOST_MAX_PIDS];    /* owners dropped (exited) still named by flows */
	unsigned ngone;
	int owners_dirty;
	struct hproc procs[HOST_MAX_PIDS];
	unsigned nprocs;
	uint64_t retired[HOST_MAX_PRODUCERS][NPF];  /* exited processes' part */
	unsigned nlive[HOST_MAX_PRODUCERS];
	uint64_t next_scan_ns;
	struct hdisk *known;
	unsigned nknown;
	unsigned disk_scan;         /* rescans made (hdisk.scan) */
	int disks_warned;
	/* this read's counters */
	char (*nm)[NAME_LEN];
	uint64_t *vals;
	unsigned n, cap;
	struct clayout *lay;
	char *buf;
	char small[SMALL];
	char psi_note[256], delay_note[256], proc_note[256], disk_note[256];
	char cg2[PATH_MAX], cg1_blkio[PATH_MAX];   /* the mounts, "" none */
	int delay_off;              /* kernel.task_delayacct = 0: blkio reads 0 */
};

/* A file under root (/proc or /sys, or a test's copy), its path made
 * from fmt: util_read_buf's answer. */
static inline ssize_t host_read_rel(struct host *h, const char *root, char *buf, size_t size,
			const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline ssize_t host_read_rel(struct host *h, const char *root, char *buf, size_t size,
			const char *fmt, ...)
{
	char path[PATH_MAX + 128], rel[PATH_MAX];
	va_list ap;

	(void)h;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return util_read_buf(path, buf, size);
}

static inline void host_add(struct host *h, uint64_t v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void host_add(struct host *h, uint64_t v, const char *fmt, ...)
{
	va_list ap;

	if (h->n == h->cap) {
		unsigned nc = h->cap ? h->cap * 2 : 256;
		void *a = realloc(h->nm, nc * sizeof(*h->nm));
		void *b;

		if (!a)
			return;
		h->nm = a;
		b = realloc(h->vals, nc * sizeof(*h->vals));
		if (!b)
			return;
		h->vals = b;
		h->cap = nc;
	}
	va_start(ap, fmt);
	vsnprintf(h->nm[h->n], NAME_LEN, fmt, ap);
	va_end(ap);
	h->vals[h->n++] = v;
}

/* host_disks.c */
/* A cgroup I/O limit's kinds, as io.max names them. */
extern const char *const host_lim_kinds[HOST_LIM_KINDS];
/* /proc/diskstats: each judged disk's counters added, new names judged
 * (identified from sysfs). At a rescan, each name is looked at again: a
 * disk whose diskseq moved (another disk under its name), a loop device,
 * or any on a kernel without diskseq is judged and identified anew, the
 * others' queue depth read again, and names gone from diskstats forgotten. */
void host_read_disks(struct host *h, int rescan);
/* The disks of the files process p holds open (p->dev). */
void host_proc_devices(struct host *h, struct hproc *p);
/* Where cgroup v2 and v1's blkio are mounted (h->cg2, h->cg1_blkio). */
void host_find_cgroup_mounts(struct host *h);
/* The I/O limits of p's cgroups on its disks (p->lim). */
void host_proc_io_limits(struct host *h, struct hproc *p);

#endif
