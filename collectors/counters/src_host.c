/* src_host: pressure, the processes and their delays, the source's ops
 * (see src_host.h); the block devices are host_disks.c's, the parsers
 * host_parse.c's (host_int.h). */
#include "collectors/counters/src_host.h"
#include "collectors/counters/host_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const pf_names[NPF] = {
	"cpu_ns", "run_delay_ns", "blkio_delay_ns", "read_bytes", "write_bytes",
	"syscr", "syscw",
};
static const char *const psi_res[3] = { "cpu", "memory", "io" };

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- reading ---- */


static void read_psi(struct host *h)
{
	char e[160];
	int missing = 0;

	h->psi_note[0] = 0;
	for (unsigned r = 0; r < 3; r++) {
		uint64_t some, full;
		int has_full;
		ssize_t n = host_read_rel(h, h->proc, h->small, sizeof(h->small), "pressure/%s",
				     psi_res[r]);

		if (n < 0) {
			/* psi_show() answers -EOPNOTSUPP when booted psi=0 */
			if (errno == ENOENT || errno == EOPNOTSUPP)
				missing++;
			else
				util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s: %s",
					  h->proc, psi_res[r], strerror(errno));
			continue;
		}
		if (host_parse_psi(h->small, (size_t)n, &some, &full, &has_full, e, sizeof(e)) < 0) {
			util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s: %s", h->proc,
				  psi_res[r], e);
			continue;
		}
		host_add(h, some, "host.psi.%s.some_us", psi_res[r]);
		if (has_full)
			host_add(h, full, "host.psi.%s.full_us", psi_res[r]);
		else if (!h->psi_note[0])
			util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s has no \"full\" "
				  "line (kernels before 5.13 print only \"some\" for cpu)",
				  h->proc, psi_res[r]);
	}
	if (missing == 3)
		util_errf(h->psi_note, sizeof(h->psi_note), "no %s/pressure: a kernel without "
			  "pressure stall information (CONFIG_PSI) or booted with psi=0", h->proc);
	else if (missing)
		util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure: %d of 3 files missing",
			  h->proc, missing);
}

/* One process: the totals over its threads. 0, -ESRCH when it is gone,
 * or -errno with h->proc_note said. */
static int read_proc(struct host *h, struct hproc *p)
{
	struct host_pstat st;
	struct host_pio io;
	uint64_t v[NPF] = { 0 };
	char e[160], tdir[PATH_MAX + 32];
	ssize_t n;
	DIR *d;
	struct dirent *de;
	unsigned nt = 0;

	n = host_read_rel(h, h->proc, h->small, sizeof(h->small), "%d/stat", p->pid);
	if (n < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	if (host_parse_stat(h->small, (size_t)n, &st, e, sizeof(e)) < 0) {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s/%d/stat: %s", h->proc, p->pid, e);
		return -EINVAL;
	}
	/* a zombie has used what it will; a pid reused by another process
	 * is not the one watched */
	if (st.state == 'Z' || st.state == 'X' || (p->have && st.starttime != p->start))
		return -ESRCH;
	p->start = st.starttime;
	util_strlcpy(p->comm, st.comm, sizeof(p->comm));
	v[PF_CPU] = (st.utime + st.stime) * (1000000000ull / (uint64_t)h->tck);
	n = host_read_rel(h, h->proc, h->small, sizeof(h->small), "%d/io", p->pid);
	if (n >= 0 && host_parse_io(h->small, (size_t)n, &io, e, sizeof(e)) == 0) {
		v[PF_RB] = io.read_bytes;
		v[PF_WB] = io.write_bytes;
		v[PF_SYSCR] = io.syscr;
		v[PF_SYSCW] = io.syscw;
	} else {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s/%d/io: %s", h->proc, p->pid,
			  n < 0 ? strerror(errno) : e);
	}
	snprintf(tdir, sizeof(tdir), "%s/%d/task", h->proc, p->pid);
	d = opendir(tdir);
	if (!d) {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s: %s", tdir, strerror(errno));
	} else {
		while ((de = readdir(d))) {
			uint64_t run, wait;
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (*end || tid <= 0)
				continue;
			if (++nt > HOST_MAX_THREADS) {
				util_errf(h->proc_note, sizeof(h->proc_note), "process %d has more than "
					  "%d threads: the rest not read", p->pid, HOST_MAX_THREADS);
				break;
			}
			n = host_read_rel(h, h->proc, h->small, sizeof(h->small), "%d/task/%ld/schedstat",
				     p->pid, tid);
			if (n >= 0 && host_parse_schedstat(h->small, (size_t)n, &run, &wait, e,
							   sizeof(e)) == 0)
				v[PF_RUNQ] += wait;
			/* with delay accounting off the field is 0: not read */
			n = h->delay_off ? -1 : host_read_rel(h, h->proc, h->small, sizeof(h->small),
							 "%d/task/%ld/stat", p->pid, tid);
			if (n >= 0 && host_parse_stat(h->small, (size_t)n, &st, e, sizeof(e)) == 0)
				v[PF_BLKIO] += st.blkio_ticks * (1000000000ull / (uint64_t)h->tck);
		}
		closedir(d);
	}
	/* A live process's counters never go back. Its per-thread sums do
	 * when a thread's file could not be read this time, or a thread
	 * exited and took its part with it: the last figure is kept (the sum
	 * pauses until the other threads make up the part), for a window's
	 * delta reads a fall as a counter reset and would count the whole
	 * total again (cnt_delta). */
	for (unsigned k = 0; p->have && k < NPF; k++)
		if (v[k] < p->v[k])
			v[k] = p->v[k];
	if (!p->have)
		memcpy(p->base, v, sizeof(v));
	memcpy(p->v, v, sizeof(v));
	p->have = 1;
	return 0;
}

/* What a process used since it was found (a thread that exited takes its
 * part of the total with it: never below 0). */
static uint64_t since(const struct hproc *p, unsigned k)
{
	return p->v[k] > p->base[k] ? p->v[k] - p->base[k] : 0;
}

static int has_proc(const struct host *h, int pid, int prod)
{
	for (unsigned i = 0; i < h->nprocs; i++)
		if (h->procs[i].pid == pid && h->procs[i].prod == prod)
			return 1;
	return 0;
}

static void track(struct host *h, int pid, int prod)
{
	struct hproc *p;

	if (pid <= 0)
		return;
	for (unsigned i = 0; i < h->nprocs; i++)
		if (h->procs[i].pid == pid && h->procs[i].prod == prod) {
			h->procs[i].seen = 1;
			return;
		}
	if (h->nprocs >= HOST_MAX_PIDS) {
		util_errf(h->proc_note, sizeof(h->proc_note), "more than %d processes: pid %d "
			  "not read", HOST_MAX_PIDS, pid);
		return;
	}
	p = &h->procs[h->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->prod = prod;
	p->seen = 1;
}

/* The producers' processes: by comm (every /proc/PID/comm) or by cgroup
 * (its cgroup.procs), every RESCAN_NS. */
static void scan_producers(struct host *h)
{
	unsigned scanned = 0;
	DIR *d = NULL;
	struct dirent *de;

	for (unsigned k = 0; k < h->o.nprod; k++) {
		const struct host_producer *pr = &h->o.prod[k];
		char path[PATH_MAX + 32];
		ssize_t n;

		if (!pr->cgroup[0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", pr->cgroup);
		n = util_read_buf(path, h->buf, BUF_MAX);
		if (n < 0) {
			util_errf(h->proc_note, sizeof(h->proc_note), "producer %s: %s: %s",
				  pr->name, path, strerror(errno));
			continue;
		}
		for (char *s = h->buf, *e; *s; s = e) {
			long pid = strtol(s, &e, 10);

			if (e == s)
				break;
			track(h, (int)pid, (int)k);
		}
	}
	for (unsigned k = 0; k < h->o.nprod; k++)
		if (h->o.prod[k].comm[0] && !d)
			d = opendir(h->proc);
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (*end || pid <= 0)
			continue;
		if (++scanned > SCAN_MAX) {
			util_errf(h->proc_note, sizeof(h->proc_note), "more than %d processes: "
				  "the producers' names looked for in the first %d", SCAN_MAX,
				  SCAN_MAX);
			break;
		}
		n = host_read_rel(h, h->proc, h->small, sizeof(h->small), "%ld/comm", pid);
		if (n <= 0)
			continue;
		if (h->small[n - 1] == '\n')
			h->small[n - 1] = 0;
		for (unsigned k = 0; k < h->o.nprod; k++)
			if (h->o.prod[k].comm[0] && !strcmp(h->o.prod[k].comm, h->small))
				track(h, (int)pid, (int)k);
	}
	if (d)
		closedir(d);
}

/* A producer named by its cgroup: the group's own pressure (cgroup v2
 * RES.pressure, psi_show() of the group's psi) and its CPU throttling
 * (cpu.stat: v2 throttled_usec, a v1 cpu controller's throttled_time in
 * ns). What the directory does not have (a v1 blkio one has neither) is
 * left out without a word; a malformed file is said. */
static void read_cgroup(struct host *h, const struct host_producer *pr)
{
	uint64_t some, full, v;
	char e[160];
	int has_full;
	ssize_t n;

	for (unsigned r = 0; r < 3; r++) {
		n = host_read_rel(h, pr->cgroup, h->small, sizeof(h->small), "%s.pressure", psi_res[r]);
		if (n < 0)
			continue;
		if (host_parse_psi(h->small, (size_t)n, &some, &full, &has_full, e, sizeof(e)) < 0) {
			util_errf(h->proc_note, sizeof(h->proc_note), "producer %s: %s/%s.pressure: %s",
				  pr->name, pr->cgroup, psi_res[r], e);
			continue;
		}
		host_add(h, some, "producer.%s.psi.%s.some_us", pr->name, psi_res[r]);
		if (has_full)
			host_add(h, full, "producer.%s.psi.%s.full_us", pr->name, psi_res[r]);
	}
	n = host_read_rel(h, pr->cgroup, h->small, sizeof(h->small), "cpu.stat");
	if (n < 0)
		return;
	if (host_parse_kv(h->small, (size_t)n, "nr_throttled", &v, e, sizeof(e)) == 0)
		host_add(h, v, "producer.%s.nr_throttled", pr->name);
	if (host_parse_kv(h->small, (size_t)n, "throttled_usec", &v, e, sizeof(e)) == 0)
		host_add(h, v * 1000, "producer.%s.throttled_ns", pr->name);
	else if (host_parse_kv(h->small, (size_t)n, "throttled_time", &v, e, sizeof(e)) == 0)
		host_add(h, v, "producer.%s.throttled_ns", pr->name);
}

static void read_procs(struct host *h, int rescan)
{
	uint64_t sum[HOST_MAX_PRODUCERS][NPF];

	h->proc_note[0] = 0;
	if (h->owners_dirty) {
		/* owners no longer named are dropped, new ones taken */
		unsigned w = 0;

		for (unsigned i = 0; i < h->nprocs; i++) {
			int keep = h->procs[i].prod >= 0;

			for (unsigned j = 0; !keep && j < h->nowners; j++)
				keep = h->owners[j] == h->procs[i].pid;
			if (keep)
				h->procs[w++] = h->procs[i];
		}
		h->nprocs = w;
		for (unsigned j = 0; j < h->nowners; j++)
			track(h, h->owners[j], -1);
		h->owners_dirty = 0;
	}
	if (h->o.nprod && rescan) {
		for (unsigned i = 0; i < h->nprocs; i++)
			h->procs[i].seen = 0;
		scan_producers(h);
	}
	memcpy(sum, h->retired, sizeof(sum));
	memset(h->nlive, 0, sizeof(h->nlive));
	for (unsigned i = 0; i < h->nprocs;) {
		struct hproc *p = &h->procs[i];
		/* a producer's process that left its cgroup or changed its
		 * name is no longer the producer's: dropped as if it exited */
		int rc = read_proc(h, p);
		/* an exited process leaves its cgroup too (cgroup_exit): one
		 * the rescan missed is "left" only while it still lives */
		int left = rc != -ESRCH && p->prod >= 0 && rescan && !p->seen;

		if (left)
			rc = -ESRCH;

		if (rc == -ESRCH && !p->have) {
			/* gone (or a zombie) before its first reading: nothing
			 * to keep, nothing to say */
			*p = h->procs[--h->nprocs];
			continue;
		}
		if (rc == -ESRCH) {
			if (p->prod >= 0) {
				/* what it used stays in the producer's sums */
				for (unsigned k = 0; p->have && k < NPF; k++)
					h->retired[p->prod][k] += since(p, k);
				for (unsigned k = 0; p->have && k < NPF; k++)
					sum[p->prod][k] += since(p, k);
				log_info("host: producer %s: process %d (%s) %s; dropped",
					 h->o.prod[p->prod].name, p->pid, p->comm,
					 left ? "is no longer one of its processes" : "exited");
			} else {
				log_info("host: process %d (%s), owner of watched flows, exited "
					 "(or its pid went to another process); dropped", p->pid,
					 p->comm[0] ? p->comm : "?");
				/* its flows may name it a while yet: not taken again */
				if (h->ngone < HOST_MAX_PIDS)
					h->gone[h->ngone++] = p->pid;
			}
			*p = h->procs[--h->nprocs];
			continue;
		}
		if (rc == 0 && p->prod < 0) {
			for (unsigned k = 0; k < NPF; k++)
				host_add(h, p->v[k], "owner.%d.%s", p->pid, pf_names[k]);
		} else if (p->prod >= 0 && p->have) {
			/* a read that failed this time (the error is in the
			 * note) leaves the last figures in the sum: a producer's
			 * counter that fell would read as a reset */
			for (unsigned k = 0; k < NPF; k++)
				sum[p->prod][k] += since(p, k);
			h->nlive[p->prod]++;
		}
		i++;
	}
	for (unsigned k = 0; k < h->o.nprod; k++) {
		for (unsigned f = 0; f < NPF; f++)
			host_add(h, sum[k][f], "producer.%s.%s", h->o.prod[k].name, pf_names[f]);
		host_add(h, h->nlive[k], "producer.%s.processes", h->o.prod[k].name);
		if (h->o.prod[k].cgroup[0])
			read_cgroup(h, &h->o.prod[k]);
	}
}

static int same_layout(const struct host *h)
{
	if (!h->lay || h->lay->n != h->n)
		return 0;
	for (unsigned i = 0; i < h->n; i++)
		if (strcmp(h->lay->names[i], h->nm[i]))
			return 0;
	return 1;
}

/* delayacct_blkio_ticks() reads 0 unless delay accounting is on
 * (kernel.task_delayacct since 5.14, off by default; before it, on unless
 * booted with nodelayacct). Looked at again at every rescan: turned on
 * later, it is read from then on. Said once per daemon when off. */
static void check_delayacct(struct host *h)
{
	static int said;
	char buf[32];
	ssize_t n = host_read_rel(h, h->proc, buf, sizeof(buf), "sys/kernel/task_delayacct");

	h->delay_off = n > 0 && buf[0] == '0';
	h->delay_note[0] = 0;
	if (h->delay_off)
		util_errf(h->delay_note, sizeof(h->delay_note), "delay accounting is off "
			  "(kernel.task_delayacct = 0): block I/O delays read 0; "
			  "`sysctl kernel.task_delayacct=1` or boot with delayacct turns it on");
	else if (n < 0)
		util_errf(h->delay_note, sizeof(h->delay_note), "no kernel.task_delayacct "
			  "(a kernel before 5.14: delay accounting on unless booted nodelayacct)");
	if (h->delay_off && !said)
		log_warnx("host: %s", h->delay_note);
	said |= h->delay_off;
}

static int host_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct host *h = s->priv;
	uint64_t now = mono_ns();
	int rescan = now >= h->next_scan_ns;

	s->err[0] = 0;
	h->n = 0;
	if (rescan) {
		h->disk_scan++;         /* devices looked at again: attached, removed */
		h->next_scan_ns = now + RESCAN_NS;
		check_delayacct(h);
	}
	read_psi(h);
	host_read_disks(h, rescan);
	read_procs(h, rescan);
	for (unsigned i = 0; rescan && i < h->nprocs; i++)
		host_proc_devices(h, &h->procs[i]);
	if (!same_layout(h)) {
		const char **names = malloc((h->n ? h->n : 1) * sizeof(*names));
		struct clayout *l;

		if (!names) {
			util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		for (unsigned i = 0; i < h->n; i++)
			names[i] = h->nm[i];
		l = clayout_new(h->n, names, NULL);
		free(names);
		if (!l) {
			util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		clayout_unref(h->lay);
		h->lay = l;
	}
	/* a source may succeed partially: its notes say what is missing */
	util_errf(s->err, sizeof(s->err), "%s%s%s%s%s", h->psi_note,
		  h->psi_note[0] && h->disk_note[0] ? "; " : "", h->disk_note,
		  (h->psi_note[0] || h->disk_note[0]) && h->proc_note[0] ? "; " : "", h->proc_note);
	*lay = h->lay;
	*vals = h->vals;
	return 0;
}

int src_host_open(struct src *s, const struct src_host_ctx *ctx)
{
	struct host *h;

	s->err[0] = 0;
	h = calloc(1, sizeof(*h));
	if (h)
		h->buf = malloc(BUF_MAX);
	if (h)
		h->known = calloc(KNOWN_MAX, sizeof(*h->known));
	if (!h || !h->buf || !h->known) {
		if (h) {
			free(h->buf);
			free(h->known);
		}
		free(h);
		util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	h->o = *ctx->opts;
	util_strlcpy(h->proc, h->o.proc_root[0] ? h->o.proc_root : "/proc", sizeof(h->proc));
	snprintf(h->sys, sizeof(h->sys), "%s/sys", ctx->sysfs_root ? ctx->sysfs_root : "");
	h->tck = sysconf(_SC_CLK_TCK);
	if (h->tck <= 0 || h->tck > 1000000000)
		h->tck = 100;
	check_delayacct(h);
	host_find_cgroup_mounts(h);
	s->ops = &src_host_ops;
	s->priv = h;
	return 0;
}

static int host_open(struct src *s, const struct src_ctx *ctx)
{
	static const struct host_opts none;
	struct src_host_ctx hc = { &none, ctx ? ctx->sysfs_root : "" };

	return src_host_open(s, &hc);
}

void src_host_watch(struct src *s, const int *pids, unsigned n)
{
	struct host *h = s ? s->priv : NULL;
	unsigned m = 0;

	if (!h)
		return;
	unsigned g = 0;

	/* a pid dropped as exited is forgotten once no flow names it */
	for (unsigned k = 0; k < h->ngone; k++)
		for (unsigned i = 0; i < n; i++)
			if (pids[i] == h->gone[k]) {
				h->gone[g++] = h->gone[k];
				break;
			}
	h->ngone = g;
	for (unsigned i = 0; i < n && m < HOST_MAX_PIDS; i++) {
		int dup = pids[i] <= 0;

		for (unsigned j = 0; j < m && !dup; j++)
			dup = h->owners[j] == pids[i];
		for (unsigned k = 0; k < h->ngone && !dup; k++)
			dup = h->gone[k] == pids[i];
		if (!dup)
			h->owners[m++] = pids[i];
	}
	h->owners_dirty |= m != h->nowners;
	for (unsigned i = 0; i < m && !h->owners_dirty; i++)
		h->owners_dirty = !has_proc(h, h->owners[i], -1);
	h->nowners = m;
}

int src_host_keep(const char *name, const int *pids, unsigned n)
{
	char *end;
	long pid;

	if (strncmp(name, "owner.", 6))
		return 1;
	pid = strtol(name + 6, &end, 10);
	if (*end != '.')
		return 1;
	for (unsigned i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

struct json_object *src_host_json(struct src *s)
{
	struct host *h = s ? s->priv : NULL;
	struct json_object *o = json_object_new_object(), *a, *notes;

	if (!h)
		return o;
	a = json_object_new_array();
	for (unsigned i = 0; i < h->nknown; i++) {
		const struct hdisk *d = &h->known[i];
		struct json_object *e;

		if (!d->keep)
			continue;
		e = json_object_new_object();
		jx_add_str(e, "name", d->name);
		jx_add_str(e, "transport", d->transport);
		jx_add_str(e, "model", d->model);
		jx_add_str(e, "firmware", d->firmware);
		if (d->vendor[0])
			jx_add_str(e, "vendor", d->vendor);
		if (d->serial_sha256[0])
			jx_add_str(e, "serial_sha256", d->serial_sha256);
		if (d->rotational >= 0)
			jx_add_bool(e, "rotational", d->rotational);
		if (d->nr_requests >= 0)
			jx_add_int(e, "nr_requests", d->nr_requests);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "devices", a);
	a = json_object_new_array();
	for (unsigned i = 0; i < h->nprocs; i++) {
		struct hproc *p = &h->procs[i];
		struct json_object *e = json_object_new_object();

		/* read now, not at the rescan: a limit set a second ago (the
		 * stall it caused is why the evidence is taken) is named */
		host_proc_io_limits(h, p);

		jx_add_int(e, "pid", p->pid);
		jx_add_str(e, "comm", p->comm);
		jx_add_str(e, "role", p->prod < 0 ? "owner" : "producer");
		if (p->prod >= 0)
			jx_add_str(e, "producer", h->o.prod[p->prod].name);
		if (p->ndev) {
			struct json_object *dv = json_object_new_array();

			for (unsigned k = 0; k < p->ndev; k++)
				json_object_array_add(dv, json_object_new_string(p->dev[k]));
			json_object_object_add(e, "devices", dv);
		}
		if (p->nlim) {
			struct json_object *lv = json_object_new_array();

			for (unsigned k = 0; k < p->nlim; k++) {
				struct json_object *x = json_object_new_object();
				char lim[160] = "";
				size_t l = 0;
				int first = -1;

				for (int q = 0; q < HOST_LIM_KINDS; q++) {
					if (!p->lim[k].v[q])
						continue;
					if (first < 0)
						first = q;
					l += (size_t)snprintf(lim + l, sizeof(lim) - l, "%s%s=%llu",
							      l ? " " : "", host_lim_kinds[q],
							      (unsigned long long)p->lim[k].v[q]);
				}
				jx_add_str(x, "device", p->lim[k].dev);
				jx_add_str(x, "limit", lim);
				/* the group of the first kind named (reads first) */
				if (first >= 0 && !p->lim[k].cg_trunc[first])
					jx_add_str(x, "cgroup", p->lim[k].cg[first]);
				json_object_array_add(lv, x);
			}
			json_object_object_add(e, "io_limits", lv);
		}
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "processes", a);
	jx_add_str(o, "delayacct", h->delay_note[0] ? h->delay_note : "on");
	notes = json_object_new_array();
	if (h->psi_note[0])
		json_object_array_add(notes, json_object_new_string(h->psi_note));
	if (h->disk_note[0])
		json_object_array_add(notes, json_object_new_string(h->disk_note));
	if (h->proc_note[0])
		json_object_array_add(notes, json_object_new_string(h->proc_note));
	json_object_object_add(o, "notes", notes);
	return o;
}

static void host_close(struct src *s)
{
	struct host *h = s->priv;

	if (!h)
		return;
	clayout_unref(h->lay);
	free(h->nm);
	free(h->vals);
	free(h->buf);
	free(h->known);
	free(h);
	s->priv = NULL;
}

const struct src_ops src_host_ops = {
	.name = "host",
	.open = host_open,
	.read = host_read,
	.close = host_close,
};
