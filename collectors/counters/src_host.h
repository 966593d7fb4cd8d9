/* src_host: the host's resources as a counter source ("host"), so a
 * producer that stopped for lack of disk, CPU or memory (seed 004) shows in
 * the flight recorder and the fast window beside the port's counters:
 *
 *   host.psi.RES.some_us, host.psi.RES.full_us     RES = cpu, memory, io
 *       /proc/pressure/RES, the `total=` microseconds of psi_show()
 *       (kernel/sched/psi.c: one "some" line, then "full", for cpu only
 *       since 5.13); counters, so any window gives the stalled time
 *   host.disk.DEV.FIELD                             /proc/diskstats
 *       (diskstats_show(), block/genhd.c; Documentation/admin-guide/
 *       iostats.rst): reads, reads_merged, read_sectors, read_ms, writes,
 *       writes_merged, write_sectors, write_ms, in_flight (a gauge), io_ms,
 *       queue_ms (weighted), then discards, discards_merged,
 *       discard_sectors, discard_ms (4.18+), flushes, flush_ms (5.5+)
 *   owner.PID.FIELD, producer.NAME.FIELD            the processes that own
 *       the port's watched flows (src_host_watch) and the configured
 *       producers (summed over their processes, each counted from when it
 *       was found, so a process found late adds no history to a window;
 *       one that exits keeps what it used): cpu_ns (utime + stime of /proc/PID/stat), run_delay_ns
 *       (the second word of /proc/PID/task/TID/schedstat, summed over the
 *       threads: proc_pid_schedstat() prints one task's), blkio_delay_ns
 *       (field 42 of /proc/PID/task/TID/stat, delayacct_blkio_ticks(),
 *       summed over the threads: do_task_stat() prints the leader's),
 *       read_bytes, write_bytes, syscr, syscw (/proc/PID/io), and for a
 *       producer `processes` (a gauge); a producer named by its cgroup
 *       adds the cgroup's own pressure where it has it (cgroup v2
 *       RES.pressure: producer.NAME.psi.RES.some_us, .full_us) and its
 *       CPU throttling (cpu.stat: nr_throttled, throttled_ns from v2
 *       throttled_usec or a v1 cpu controller's throttled_time)
 *
 * Every file is read with one bounded read, opened O_NONBLOCK; a file that
 * is missing or malformed leaves its counters out and says why (s->err,
 * src_host_json()). Whole disks only by default (a partition's I/O is its
 * disk's); `disks =` patterns choose others. At most HOST_MAX_DISKS
 * devices, HOST_MAX_PIDS processes and HOST_MAX_THREADS threads of each. */
#ifndef NICSTALL_SRC_HOST_H
#define NICSTALL_SRC_HOST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"
#include "collectors/counters/src_app.h"

#define HOST_MAX_DISKS 256
#define HOST_MAX_PIDS 64
#define HOST_MAX_THREADS 1024
#define HOST_MAX_PRODUCERS 16
#define HOST_MAX_PATTERNS 16
#define HOST_PROC_DEVS 4             /* disks named per process */
#define HOST_FD_SCAN 256             /* descriptors of a process judged */
#define HOST_PROC_LIMITS 4           /* devices with I/O limits named per process */
#define HOST_LIM_KINDS 4             /* riops, rbps, wiops, wbps */

struct host_producer {
	char name[32];
	char comm[16];               /* TASK_COMM_LEN - 1 characters at most */
	char cgroup[PATH_MAX];       /* a cgroup directory (its cgroup.procs) */
	unsigned line;
	struct app_conf app;         /* app_metrics = URL: its Prometheus endpoint */
};

/* The [host] and [producer NAME] sections of nicstalld.conf(5). */
struct host_opts {
	int off;                     /* resources = off */
	char proc_root[PATH_MAX];    /* "" = /proc (tests: a recorded tree) */
	char disks[HOST_MAX_PATTERNS][64]; /* fnmatch patterns; none = whole disks */
	unsigned ndisks;
	struct host_producer prod[HOST_MAX_PRODUCERS];
	unsigned nprod;
};

/* What the source opens with: the options and the sysfs root. */
struct src_host_ctx {
	const struct host_opts *opts;
	const char *sysfs_root;      /* "" or a fixture root */
};

extern const struct src_ops src_host_ops;

/* Open s as the host source (s->ops set); 0 or -errno with s->err. */
int src_host_open(struct src *s, const struct src_host_ctx *ctx);
/* The owners of the watched flows (pids > 0, at most HOST_MAX_PIDS taken;
 * the ports share one source: every port's, src_shared.h); read from the
 * next read on. */
void src_host_watch(struct src *s, const int *pids, unsigned n);
/* A counter of a port whose flows' owners are pids: an owner.PID.* of
 * one of them, or any that is no owner's (src_shared.h src_keep_fn: the
 * ports share one host source, each keeps its own owners). */
int src_host_keep(const char *name, const int *pids, unsigned n);
/* {devices: [{name, transport, model, firmware, vendor, serial_sha256,
 * rotational, nr_requests}], processes: [{pid, comm, role, producer,
 * devices: [the disks of the files it holds open, found every rescan],
 * io_limits: [{device (a disk's name, else MAJ:MIN), limit (io.max's
 * words: "riops=2", "rbps=1048576 wiops=100": of each kind the smallest
 * up the tree, which binds), cgroup (the group, its own or an ancestor,
 * that sets the first kind named; absent when its path is longer than 255
 * bytes)}], read at each call}],
 * psi, delayacct,
 * notes: [...]}: the devices' identity and what could not be read. */
struct json_object *src_host_json(struct src *s);

/* ---- parsers (pure: unit tests and the fuzz target) ---- */

/* /proc/pressure/RES: *has_full says whether a "full" line came. 0, or
 * -EINVAL with err naming the line. */
int host_parse_psi(const char *text, size_t len, uint64_t *some_us, uint64_t *full_us,
		   int *has_full, char *err, size_t errlen);

#define HOST_DSTAT_N 17
extern const char *const host_dstat_names[HOST_DSTAT_N];
struct host_dstat {
	unsigned major, minor;
	char name[64];
	unsigned n;                  /* fields the line had: 11, 15 or 17 */
	uint64_t v[HOST_DSTAT_N];
};
/* /proc/diskstats: cb for every well-formed line (in order); returns the
 * lines given, or -EINVAL with err naming the first bad line (the lines
 * before it were given). */
typedef int (*host_dstat_fn)(const struct host_dstat *d, void *arg);
int host_parse_diskstats(const char *text, size_t len, host_dstat_fn cb, void *arg,
			 char *err, size_t errlen);

struct host_pstat {
	char comm[16];
	char state;
	uint64_t utime, stime;       /* clock ticks */
	uint64_t starttime;          /* field 22: tells a reused pid apart */
	uint64_t blkio_ticks;        /* field 42; clock ticks */
};
/* /proc/PID/stat or /proc/PID/task/TID/stat (the comm may hold spaces and
 * parentheses: the last ')' ends it). 0 or -EINVAL. */
int host_parse_stat(const char *text, size_t len, struct host_pstat *out,
		    char *err, size_t errlen);
/* /proc/PID/schedstat: "run_ns wait_ns slices". 0 or -EINVAL. */
int host_parse_schedstat(const char *text, size_t len, uint64_t *run_ns,
			 uint64_t *wait_ns, char *err, size_t errlen);
/* "KEY VALUE" lines (cpu.stat): the value of key. 0, -ENOENT when no line
 * has it, or -EINVAL with err naming a malformed line. */
int host_parse_kv(const char *text, size_t len, const char *key, uint64_t *v,
		  char *err, size_t errlen);
struct host_pio {
	uint64_t read_bytes, write_bytes, syscr, syscw;
};
/* /proc/PID/io: the four keys above must be there. 0 or -EINVAL. */
int host_parse_io(const char *text, size_t len, struct host_pio *out,
		  char *err, size_t errlen);
/* A cgroup's I/O limits (blk-throttle, block/blk-throttle.c): with kind
 * NULL a v2 io.max ("MAJ:MIN rbps=N wbps=max riops=N wiops=max", each key
 * optional, "max" no limit: tg_print_limit()), else a v1
 * blkio.throttle.*_device file ("MAJ:MIN N": tg_print_conf_u64()/uint())
 * whose value is the limit kind names ("rbps", "wbps", "riops",
 * "wiops"). cb once per limit set; returns how many, or -EINVAL with err
 * naming the line. */
typedef void (*host_iolim_fn)(unsigned major, unsigned minor, const char *kind, uint64_t v,
			      void *arg);
int host_parse_iolimit(const char *text, size_t len, const char *kind, host_iolim_fn cb,
		       void *arg, char *err, size_t errlen);

#endif
