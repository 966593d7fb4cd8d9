/* threadwatch: loader and reader of the engine-thread watch
 * (threadwatch.bpf.c). See threadwatch_api.h. */
#include "collectors/threads/threadwatch_api.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/bpflog.h"
#include "collectors/threads/ksyms.h"
#include "collectors/threads/sysname.h"
#include "lib/loop.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "collectors/threads/threadwatch.skel.h"

#define TW_HIST 64              /* samples kept per thread */
/* Processes whose exit a pidfd tells (Linux 5.3, pidfd_open()): one
 * poll() of them all a read, not a /proc/PID/stat read each; the rest
 * are read as before. Bounded: the daemon's fds are for its ports. */
#define TW_PIDFDS 64
/* Up to so many known threads are read by key (a lookup each) while the
 * program has made no entry since the last walk (tw_made): a walk of the
 * map visits every bucket of it (16,384: __htab_map_lookup_and_delete_batch()
 * walks them all, whatever they hold), some 60 us a read. */
#define TW_KEYED_MAX 64

struct tw_proc_ent {
	int32_t pid;
	unsigned long long start;
	uint64_t watched_ns;        /* when the program began to watch it */
	int pidfd;                  /* its pidfd, opened before the start time
				     * was read (so it is that process's), or
				     * -1: read /proc at each check */
};

struct tw_thr {
	int32_t tid, pid;
	struct tj_sample cur;
	struct tj_sample hist[TW_HIST];  /* oldest first */
	unsigned nh;
	/* hist[0] stands for a span on CPU, from when its process was
	 * watched to this, when the program first saw it go off (0: no such
	 * span) */
	uint64_t on_cpu_until_ns;
	int32_t stack_id;
	uint64_t sleep_at_ns;
	uint64_t sys_at_ns, sys_last_ns;
	int32_t sys_nr, sys_last_nr;
};

struct threadwatch {
	struct threadwatch_bpf *skel;
	int procs_fd, threads_fd, stacks_fd;
	struct tw_proc_ent procs[TW_MAX_TGIDS];
	unsigned nprocs;
	struct tw_thr *thr;             /* sorted by tid */
	unsigned nthr;
	uint64_t *seen;                 /* tw_seen_first() */
	unsigned nseen;
	uint32_t *bkeys;                /* batch read buffers */
	struct tw_thread *bvals;
	uint64_t last_read_ns;
	uint64_t dropped_exit, dropped_reuse, refused;
	unsigned npidfds;               /* procs[] with a pidfd */
	uint64_t proc_reads;            /* liveness checks read from /proc */
	uint64_t made_seen;             /* tw_made when the map was last walked */
	uint64_t walks, keyed_reads;    /* reads that walked the map / by key */
	/* pids dropped because another process took them: not watched again
	 * while the flows still name them (those flows were the old
	 * process's; the new one's threads say nothing of them) */
	int32_t reused[TW_MAX_TGIDS];
	unsigned nreused;
	struct ksyms *ks;                /* kernel symbols, for the stacks */
	/* thread_watch_syscalls: the raw_syscalls programs */
	int sys_loaded;                 /* the kernel took them */
	struct bpf_link *sys_links[2];  /* attached: enter, exit */
	char sys_why[200];              /* why they are not attached */
	uint64_t sys_since_ns;          /* when they were attached last */
};

/* ---- loading ---- */

struct threadwatch *threadwatch_open(char *err, size_t errlen)
{
	struct threadwatch *tw = calloc(1, sizeof(*tw));
	int rc = -EINVAL, first_rc = -EINVAL;

	if (!tw) {
		util_errf(err, errlen, "thread watch: out of memory");
		return NULL;
	}
	tw->ks = ksyms_new("thread watch");
	tw->bkeys = calloc(TW_MAX_THREADS, sizeof(*tw->bkeys));
	tw->bvals = calloc(TW_MAX_THREADS, sizeof(*tw->bvals));
	if (!tw->ks || !tw->bkeys || !tw->bvals) {
		util_errf(err, errlen, "thread watch: out of memory");
		goto fail;
	}
	bpflog_init();
	bpflog_quiet(1);        /* an older kernel refuses: one line from us */
	/* the system-call programs are loaded too, and attached only by
	 * threadwatch_syscalls(); a kernel that refuses them (no BTF for
	 * raw_syscalls) still gets the switch watch */
	for (int sys = 1; sys >= 0; sys--) {
		tw->skel = threadwatch_bpf__open();
		if (!tw->skel) {
			rc = -errno;
			break;
		}
		if (sys)
			util_strlcpy(tw->sys_why, "thread_watch_syscalls = off", sizeof(tw->sys_why));
		if (!sys) {
			bpf_program__set_autoload(tw->skel->progs.tw_sys_enter, false);
			bpf_program__set_autoload(tw->skel->progs.tw_sys_exit, false);
		}
		rc = threadwatch_bpf__load(tw->skel);
		if (!rc) {
			tw->sys_loaded = sys;
			if (!sys)
				util_errf(tw->sys_why, sizeof(tw->sys_why), "the kernel refused "
					  "the tp_btf/sys_enter and sys_exit programs (%s)",
					  strerror(-first_rc));
			break;
		}
		if (sys)
			first_rc = rc;
		threadwatch_bpf__destroy(tw->skel);
		tw->skel = NULL;
	}
	if (!rc) {
		tw->skel->links.tw_switch = bpf_program__attach(tw->skel->progs.tw_switch);
		rc = tw->skel->links.tw_switch ? 0 : -errno;
	}
	bpflog_quiet(0);
	if (!tw->skel || rc) {
		util_errf(err, errlen, "thread watch: load and attach of tp_btf/sched_switch: %s "
			  "(needs kernel BTF, /sys/kernel/btf/vmlinux, and BPF tracing: Linux 5.5)",
			  strerror(rc < 0 ? -rc : EINVAL));
		goto fail;
	}
	tw->procs_fd = bpf_map__fd(tw->skel->maps.tw_procs);
	tw->threads_fd = bpf_map__fd(tw->skel->maps.tw_threads);
	tw->stacks_fd = bpf_map__fd(tw->skel->maps.tw_stacks);
	ksyms_refresh(tw->ks);  /* at start, off the incidents' path */
	return tw;
fail:
	threadwatch_close(tw);
	return NULL;
}

void threadwatch_close(struct threadwatch *tw)
{
	if (!tw)
		return;
	ksyms_free(tw->ks);
	bpf_link__destroy(tw->sys_links[0]);
	bpf_link__destroy(tw->sys_links[1]);
	threadwatch_bpf__destroy(tw->skel);
	for (unsigned i = 0; i < tw->nprocs; i++)
		if (tw->procs[i].pidfd >= 0)
			close(tw->procs[i].pidfd);
	free(tw->thr);
	free(tw->seen);
	free(tw->bkeys);
	free(tw->bvals);
	free(tw);
}

void threadwatch_set_kallsyms(struct threadwatch *tw, const char *path, const char *modules)
{
	ksyms_set_paths(tw->ks, path, modules);
}

/* ---- the system-call programs (thread_watch_syscalls) ---- */

int threadwatch_syscalls(struct threadwatch *tw, int on, char *err, size_t errlen)
{
	struct bpf_program *pr[2] = { tw->skel->progs.tw_sys_enter, tw->skel->progs.tw_sys_exit };

	if (!on) {
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(tw->sys_links[i]);
			tw->sys_links[i] = NULL;
		}
		util_strlcpy(tw->sys_why, "thread_watch_syscalls = off", sizeof(tw->sys_why));
		return 0;
	}
	if (!tw->sys_loaded) {
		util_strlcpy(err, tw->sys_why, errlen);
		return -EOPNOTSUPP;
	}
	if (!tw->sys_links[0]) {
		/* what the entries hold from an earlier attachment is older */
		tw->sys_since_ns = loop_mono_ns();
		__atomic_store_n(&tw->skel->bss->tw_sys_since, tw->sys_since_ns, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < 2; i++) {
		if (tw->sys_links[i])
			continue;
		tw->sys_links[i] = bpf_program__attach(pr[i]);
		if (!tw->sys_links[i]) {
			int rc = -errno;

			util_errf(tw->sys_why, sizeof(tw->sys_why), "attach of tp_btf/%s: %s",
				  i ? "sys_exit" : "sys_enter", strerror(-rc));
			util_strlcpy(err, tw->sys_why, errlen);
			bpf_link__destroy(tw->sys_links[0]);
			tw->sys_links[0] = NULL;
			return rc;
		}
	}
	tw->sys_why[0] = 0;
	return 0;
}

/* ---- the watched processes ---- */

/* The watched set as the program reads it: the count, and up to TW_LIST
 * tgids in a list of globals (the bitmap, always kept, when more). A
 * switch read during the change may be counted for a process that is
 * just added or dropped: the bitmap had the same window. */
static void tw_publish_count(struct threadwatch *tw)
{
	volatile __u32 *list = tw->skel->data->tw_list;

	if (tw->nprocs <= TW_LIST) {
		for (unsigned i = 0; i < TW_LIST; i++)
			if (list[i] != (i < tw->nprocs ? (__u32)tw->procs[i].pid : TW_LIST_NONE))
				list[i] = i < tw->nprocs ? (__u32)tw->procs[i].pid : TW_LIST_NONE;
		__atomic_store_n(&tw->skel->bss->tw_big, 0, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&tw->skel->bss->tw_big, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&tw->skel->bss->tw_nprocs, tw->nprocs, __ATOMIC_RELEASE);
}

static void tw_forget_threads(struct threadwatch *tw, int32_t pid)
{
	unsigned i, j;

	for (i = j = 0; i < tw->nseen; i++)
		if ((int32_t)(tw->seen[i] >> 32) != pid)
			tw->seen[j++] = tw->seen[i];
	tw->nseen = j;

	for (i = j = 0; i < tw->nthr; i++) {
		if (tw->thr[i].pid == pid) {
			uint32_t k = (uint32_t)tw->thr[i].tid;

			bpf_map_delete_elem(tw->threads_fd, &k);
			continue;
		}
		tw->thr[j++] = tw->thr[i];
	}
	tw->nthr = j;
}

/* Set or clear pid's bit in the kernel's watched set. */
static int tw_bit(struct threadwatch *tw, int32_t pid, int on)
{
	uint32_t w = (uint32_t)pid >> 6;
	uint64_t bits = 0, m = 1ull << ((uint32_t)pid & 63);

	if (pid <= 0 || w >= TW_TGID_WORDS) {
		errno = ERANGE;
		return -1;
	}
	if (bpf_map_lookup_elem(tw->procs_fd, &w, &bits) < 0)
		return -1;
	bits = on ? bits | m : bits & ~m;
	return bpf_map_update_elem(tw->procs_fd, &w, &bits, BPF_ANY);
}

static void tw_drop(struct threadwatch *tw, unsigned i, const char *why)
{
	uint32_t k = (uint32_t)tw->procs[i].pid;

	log_info("thread watch: pid %d %s: its threads are no longer watched", (int)k, why);
	tw_bit(tw, tw->procs[i].pid, 0);
	tw_forget_threads(tw, tw->procs[i].pid);
	if (tw->procs[i].pidfd >= 0) {
		close(tw->procs[i].pidfd);
		tw->npidfds--;
	}
	tw->procs[i] = tw->procs[--tw->nprocs];
	tw_publish_count(tw);
}

/* Drop the processes that exited or whose pid now names another. Those
 * with a pidfd are asked all at once (it polls readable once the process
 * has exited: pidfd_poll()) and read from /proc only then, a zombie still
 * being its process (its start time unchanged) as before; the others are
 * read each time. */
static void tw_check_procs(struct threadwatch *tw)
{
	struct pollfd pf[TW_PIDFDS];
	unsigned char gone[TW_MAX_TGIDS];
	unsigned np = 0;

	for (unsigned i = 0; i < tw->nprocs; i++) {
		gone[i] = 1;    /* read, unless its pidfd says it runs */
		if (tw->procs[i].pidfd >= 0 && np < TW_PIDFDS)
			pf[np++] = (struct pollfd){ .fd = tw->procs[i].pidfd, .events = POLLIN };
	}
	/* no answer (poll failed): all of them read */
	if (np && poll(pf, np, 0) >= 0)
		for (unsigned i = 0, k = 0; i < tw->nprocs && k < np; i++)
			if (tw->procs[i].pidfd >= 0 && tw->procs[i].pidfd == pf[k].fd)
				gone[i] = pf[k++].revents != 0;
	for (unsigned i = 0; i < tw->nprocs;) {
		unsigned long long st;

		if (!gone[i]) {
			i++;
			continue;
		}
		tw->proc_reads++;
		st = util_proc_start(tw->procs[i].pid);
		if (st == tw->procs[i].start) {
			i++;
			continue;
		}
		if (!st) {
			tw->dropped_exit++;
			tw_drop(tw, i, "exited");
		} else {
			tw->dropped_reuse++;
			if (tw->nreused < TW_MAX_TGIDS)
				tw->reused[tw->nreused++] = tw->procs[i].pid;
			tw_drop(tw, i, "was reused by another process (start time changed; not "
				"watched again while flows name it)");
		}
		/* tw_drop moved the last into i: its answer with it */
		gone[i] = i < tw->nprocs ? gone[tw->nprocs] : 0;
	}
}

static int tw_find_proc(const struct threadwatch *tw, int32_t pid)
{
	for (unsigned i = 0; i < tw->nprocs; i++)
		if (tw->procs[i].pid == pid)
			return (int)i;
	return -1;
}

static int tw_in(const int32_t *v, unsigned n, int32_t pid)
{
	for (unsigned j = 0; j < n; j++)
		if (v[j] == pid)
			return 1;
	return 0;
}

unsigned threadwatch_set(struct threadwatch *tw, const int32_t *pids, unsigned n)
{
	tw_check_procs(tw);
	/* a reused pid may be watched again once no flow names it */
	for (unsigned i = 0; i < tw->nreused;)
		if (tw_in(pids, n, tw->reused[i]))
			i++;
		else
			tw->reused[i] = tw->reused[--tw->nreused];
	/* those no longer asked for */
	for (unsigned i = 0; i < tw->nprocs;) {
		if (!tw_in(pids, n, tw->procs[i].pid))
			tw_drop(tw, i, "owns no watched flow now");
		else
			i++;
	}
	for (unsigned j = 0; j < n; j++) {
		unsigned long long start;
		int pidfd;

		if (pids[j] <= 0 || tw_find_proc(tw, pids[j]) >= 0 ||
		    tw_in(tw->reused, tw->nreused, pids[j]))
			continue;
		if (tw->nprocs == TW_MAX_TGIDS) {
			if (!tw->refused++)
				log_warnx("thread watch: more than %u processes own watched flows: "
					  "pid %d and later ones are not watched", TW_MAX_TGIDS,
					  (int)pids[j]);
			continue;
		}
		/* the pidfd first: the start time read after it is its
		 * process's, unless that one has exited already, which the
		 * pidfd then says at the first check */
		pidfd = tw->npidfds < TW_PIDFDS ? (int)syscall(SYS_pidfd_open, pids[j], 0) : -1;
		start = util_proc_start(pids[j]);
		/* one that exited before the read (its pid perhaps another's
		 * now): no pidfd, or it would say so at every check */
		if (pidfd >= 0 && poll(&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1, 0)) {
			close(pidfd);
			pidfd = -1;
		}
		if (!start || tw_bit(tw, pids[j], 1) < 0) {
			if (start)
				log_warn("thread watch: pid %d: map update", (int)pids[j]);
			if (pidfd >= 0)
				close(pidfd);
			continue;       /* gone already, or not watched */
		}
		tw->procs[tw->nprocs].pid = pids[j];
		tw->procs[tw->nprocs].start = start;
		tw->procs[tw->nprocs].watched_ns = 0;
		tw->procs[tw->nprocs].pidfd = pidfd;
		tw->npidfds += pidfd >= 0;
		tw->nprocs++;
	}
	tw_publish_count(tw);
	/* watched from now: the program sees the set just published */
	for (unsigned i = 0; i < tw->nprocs; i++)
		if (!tw->procs[i].watched_ns)
			tw->procs[i].watched_ns = loop_mono_ns();
	return tw->nprocs;
}

/* ---- reading ---- */

/* The threads the daemon has seen (pid << 32 | tid, sorted): is this one
 * new? (Then it is one now.) When the set is full nothing is new. */
static int tw_seen_first(struct threadwatch *tw, int32_t pid, int32_t tid)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	unsigned lo = 0, hi = tw->nseen;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (tw->seen[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < tw->nseen && tw->seen[lo] == key)
		return 0;
	if (tw->nseen == TW_MAX_THREADS)
		return 0;
	if (!tw->seen && !(tw->seen = calloc(TW_MAX_THREADS, sizeof(*tw->seen))))
		return 0;
	memmove(tw->seen + lo + 1, tw->seen + lo, (tw->nseen - lo) * sizeof(*tw->seen));
	tw->seen[lo] = key;
	tw->nseen++;
	return 1;
}

static int tw_thr_cmp(const void *a, const void *b)
{
	const struct tw_thr *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct tw_thr *tw_thr_find(struct tw_thr *v, unsigned n, int32_t tid)
{
	struct tw_thr key = { .tid = tid };

	return n ? bsearch(&key, v, n, sizeof(*v), tw_thr_cmp) : NULL;
}

static void tw_sample_of(const struct tw_thread *t, uint64_t now, struct tj_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->at_ns = now;
	memcpy(s->off_ns, t->off_ns, sizeof(s->off_ns));
	s->nvcsw = t->nvcsw;
	s->nivcsw = t->nivcsw;
	s->off_at_ns = t->off_at_ns;
	s->off_state = t->off_state;
	s->stack_id = t->stack_id;
}

int threadwatch_read(struct threadwatch *tw, uint64_t now, uint64_t keep_ns, char *err,
		     size_t errlen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t in = 0, out = 0, cnt;
	unsigned n = 0, nn = 0;
	uint64_t made;
	int walked = 0;
	struct tw_thr *nt;
	int rc, first = 1;

	tw_check_procs(tw);
	tw->last_read_ns = now;
	if (!tw->nprocs) {
		free(tw->thr);
		tw->thr = NULL;
		tw->nthr = 0;
		return 0;
	}
	/* the entries the program made, read before the map: one made
	 * during this read is found by the next, which walks */
	made = __atomic_load_n(&tw->skel->bss->tw_made, __ATOMIC_ACQUIRE);
	if (made == tw->made_seen && tw->walks && tw->nthr <= TW_KEYED_MAX) {
		/* no thread new to the map since the last walk: the known
		 * ones by key (one gone from the map is gone, as a walk would
		 * not find it either) */
		tw->keyed_reads++;
		for (unsigned i = 0; i < tw->nthr; i++) {
			uint32_t k = (uint32_t)tw->thr[i].tid;

			if (bpf_map_lookup_elem(tw->threads_fd, &k, &tw->bvals[n]) == 0) {
				tw->bkeys[n++] = k;
			} else if (errno != ENOENT) {
				rc = -errno;
				util_errf(err, errlen, "thread watch: read of thread %u: %s", k,
					  strerror(-rc));
				return rc;
			}
		}
	} else {
		walked = 1;
		do {
			cnt = TW_MAX_THREADS - n;
			rc = bpf_map_lookup_batch(tw->threads_fd, first ? NULL : &in, &out,
						  tw->bkeys + n, tw->bvals + n, &cnt, &o);
			if (rc < 0 && errno != ENOENT) {
				rc = -errno;
				util_errf(err, errlen, "thread watch: read: %s", strerror(-rc));
				return rc;
			}
			n += cnt;
			in = out;
			first = 0;
		} while (rc == 0 && n < TW_MAX_THREADS);
	}
	nt = calloc(n ? n : 1, sizeof(*nt));
	if (!nt) {
		util_errf(err, errlen, "thread watch: out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct tw_thread *t = &tw->bvals[i];
		struct tw_thr *old, *x = &nt[nn];

		if (tw_find_proc(tw, (int32_t)t->tgid) < 0) {
			/* a process we dropped: its threads go too */
			bpf_map_delete_elem(tw->threads_fd, &tw->bkeys[i]);
			continue;
		}
		old = tw_thr_find(tw->thr, tw->nthr, (int32_t)tw->bkeys[i]);
		if (old && old->pid == (int32_t)t->tgid)
			*x = *old;
		else
			memset(x, 0, sizeof(*x));
		x->tid = (int32_t)tw->bkeys[i];
		x->pid = (int32_t)t->tgid;
		tw_sample_of(t, now, &x->cur);
		/* first seen going off the CPU: it ran from when its process
		 * was watched to then (a busy-polling engine thread on a quiet
		 * core is switched out first when it blocks): that span is its
		 * history's first sample, all on CPU */
		if (!x->nh && t->first_how == TW_FIRST_OUT) {
			int k = tw_find_proc(tw, x->pid);
			uint64_t w = k >= 0 ? tw->procs[k].watched_ns : 0;

			/* only a thread never seen before: one the map's LRU
			 * evicted and made again was not on the CPU all along */
			if (w && w < t->first_ns && w < now && tw_seen_first(tw, x->pid, x->tid)) {
				memset(&x->hist[0], 0, sizeof(x->hist[0]));
				x->hist[0].at_ns = w;
				x->hist[0].stack_id = -1;
				x->on_cpu_until_ns = t->first_ns;
				x->nh = 1;
			}
		}
		x->stack_id = t->stack_id;
		x->sleep_at_ns = t->sleep_at_ns;
		/* what the system-call programs left while attached before
		 * (or now detached) is no account of now */
		if (tw->sys_links[0] && t->sys_at_ns >= tw->sys_since_ns) {
			x->sys_at_ns = t->sys_at_ns;
			x->sys_nr = t->sys_nr;
		} else {
			x->sys_at_ns = 0;
			x->sys_nr = -1;
		}
		if (tw->sys_links[0] && t->sys_last_at_ns >= tw->sys_since_ns) {
			x->sys_last_ns = t->sys_last_ns;
			x->sys_last_nr = t->sys_last_nr;
		} else {
			x->sys_last_ns = 0;
			x->sys_last_nr = -1;
		}
		/* history: one sample every keep_ns at most */
		if (!x->nh || now - x->hist[x->nh - 1].at_ns >= keep_ns) {
			if (x->nh == TW_HIST) {
				memmove(x->hist, x->hist + 1, (TW_HIST - 1) * sizeof(x->hist[0]));
				x->on_cpu_until_ns = 0; /* hist[0] is a reading now */
			} else {
				x->nh++;
			}
			x->hist[x->nh - 1] = x->cur;
		}
		nn++;
	}
	qsort(nt, nn, sizeof(*nt), tw_thr_cmp);
	free(tw->thr);
	tw->thr = nt;
	tw->nthr = nn;
	/* a walk that failed is no walk: the next read walks again */
	if (walked) {
		tw->walks++;
		tw->made_seen = made;
	}
	return (int)nn;
}

unsigned threadwatch_judge(struct threadwatch *tw, int32_t pid, uint64_t threshold_ns,
			   unsigned min_share_pct, uint64_t flows_wait_since_ns,
			   uint64_t min_wait_ns, threadwatch_fn fn, void *arg)
{
	unsigned stalled = 0;

	for (unsigned i = 0; i < tw->nthr; i++) {
		const struct tw_thr *x = &tw->thr[i];
		struct tw_view v;

		if (pid && x->pid != pid)
			continue;
		memset(&v, 0, sizeof(v));
		v.pid = x->pid;
		v.tid = x->tid;
		v.cur = x->cur;
		v.stack_id = x->stack_id;
		v.sleep_at_ns = x->sleep_at_ns;
		v.sys_at_ns = x->sys_at_ns;
		v.sys_last_ns = x->sys_last_ns;
		v.sys_nr = x->sys_nr;
		v.sys_last_nr = x->sys_last_nr;
		tj_judge_hist(x->hist, x->nh, &x->cur, threshold_ns, min_share_pct,
			      flows_wait_since_ns, min_wait_ns, &v.r);
		stalled += v.r.stalled;
		if (fn)
			fn(&v, arg);
	}
	return stalled;
}

/* ---- kernel stacks ---- */

/* Stack id's addresses, symbolised with the table when symbolise (else
 * addresses): the frames, -1 none. */
static int tw_stack_with(struct threadwatch *tw, int32_t id, int symbolise, char *buf,
			 size_t len)
{
	uint64_t ips[TW_STACK_DEPTH];
	uint32_t k = (uint32_t)id;

	if (!len)
		return -1;
	buf[0] = 0;
	if (id < 0 || bpf_map_lookup_elem(tw->stacks_fd, &k, ips) < 0)
		return -1;
	return ksyms_format(symbolise ? tw->ks : NULL, ips, TW_STACK_DEPTH, buf, len);
}

int threadwatch_stack(struct threadwatch *tw, int32_t stack_id, char *buf, size_t len)
{
	return tw_stack_with(tw, stack_id, ksyms_refresh(tw->ks) == 0, buf, len);
}

/* ---- evidence and status ---- */

/* The thread's state now, from /proc (the program sees only switches). */
static void tw_proc_state(int32_t pid, int32_t tid, struct json_object *o)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (util_read_buf(path, buf, sizeof(buf)) > 0) {
		char *clean;

		buf[strcspn(buf, "\n")] = 0;
		clean = util_utf8_clean(buf, strlen(buf));     /* the engine names it */
		jx_add_str(o, "name", clean ? clean : "?");
		free(clean);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (util_read_buf(path, buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')')) && p[1] == ' ' &&
	    p[2]) {
		char st[2] = { p[2], 0 };

		jx_add_str(o, "state_now", st);
	} else {
		jx_add_str(o, "state_now", "gone");
	}
}

struct tw_ev {
	struct threadwatch *tw;
	struct json_object *arr;
	uint64_t since_ns, until_ns, threshold_ns;
	int symbolise;                  /* the kernel's symbols are readable */
};

/* The stack id in most of x's readings within (since, until] (until 0:
 * to the last), the later on a tie; dflt when none is known. */
static int32_t tw_wait_stack(const struct tw_thr *x, uint64_t since, uint64_t until,
			     int32_t dflt)
{
	int32_t best = dflt;
	unsigned best_n = 0;

	for (unsigned k = 0; k < x->nh; k++) {
		unsigned n = 0;

		if (x->hist[k].at_ns <= since || (until && x->hist[k].at_ns > until) ||
		    x->hist[k].stack_id < 0)
			continue;
		for (unsigned j = k; j < x->nh; j++)
			if (x->hist[j].stack_id == x->hist[k].stack_id &&
			    x->hist[j].at_ns > since && (!until || x->hist[j].at_ns <= until))
				n++;
		if (n >= best_n) {
			best_n = n;
			best = x->hist[k].stack_id;
		}
	}
	return best;
}

static void tw_ev_thread(const struct tw_view *v, void *arg)
{
	struct tw_ev *e = arg;
	const struct tw_thr *x = tw_thr_find(e->tw->thr, e->tw->nthr, v->tid);
	struct json_object *o = json_object_new_object();
	struct tj_result r = v->r;
	char stack[TW_STACK_DEPTH * 96];
	int32_t wait_stack = v->stack_id;

	if (e->since_ns && x && x->nh) {
		const struct tj_sample *b, *c;
		struct tj_sample bs;

		/* over the wait: from the newest sample at or before its
		 * start, to its end (the first sample at or after it) or the
		 * last read; a thread first seen when it first went off the
		 * CPU (a busy poller until it blocked) was on it from hist[0]
		 * to then */
		tj_wait_span(x->hist, x->nh, &x->cur, x->on_cpu_until_ns, e->since_ns,
			     e->until_ns, &bs, &b, &c);
		/* b: at or before the wait's start, or the oldest kept; the
		 * verdict over the same span (read after the wait ended, the
		 * last threshold is the thread running again) */
		tj_judge_span(x->hist, x->nh, b, c, e->threshold_ns, 50, &r);
		/* and where it slept through the wait: the stack of its last
		 * sleep in most readings within it (read after the wait, the
		 * last sleep is elsewhere: its epoll_wait, a page fault; the
		 * wait's end is dated by a poll, after the thread went on) */
		wait_stack = tw_wait_stack(x, e->since_ns, e->until_ns, v->stack_id);
	}
	jx_add_int(o, "tid", v->tid);
	tw_proc_state(v->pid, v->tid, o);
	jx_add_u64(o, "window_ns", r.window_ns);
	jx_add_u64(o, "voluntary_switches", r.nvcsw);
	jx_add_u64(o, "involuntary_switches", r.nivcsw);
	jx_add_u64(o, "off_cpu_sleep_ns", r.sleep_ns);
	jx_add_u64(o, "off_cpu_disk_ns", r.disk_ns);
	jx_add_u64(o, "off_cpu_preempted_ns", r.preempt_ns);
	jx_add_double(o, "off_cpu_share", r.share_pm / 1000.0);
	jx_add_str(o, "verdict", tj_verdict_name(r.verdict));
	jx_add_str(o, "verdict_now", tj_verdict_name(v->r.verdict));
	jx_add_bool(o, "off_cpu_now", v->cur.off_at_ns != 0);
	if (v->cur.off_at_ns) {
		jx_add_str(o, "off_reason", tj_off_name(v->cur.off_state));
		jx_add_u64(o, "off_since_ns", v->cur.off_at_ns);
		/* in this sleep for so long, as of the last read */
		if (v->cur.at_ns > v->cur.off_at_ns)
			jx_add_u64(o, "off_for_ns", v->cur.at_ns - v->cur.off_at_ns);
	}
	if (v->sleep_at_ns)
		jx_add_u64(o, "last_sleep_ns", v->sleep_at_ns);
	if (tw_stack_with(e->tw, wait_stack, e->symbolise, stack, sizeof(stack)) >= 0)
		jx_add_str(o, "stack_at_sleep", stack);
	/* read after the wait ended: where it sleeps now, when elsewhere */
	if (wait_stack != v->stack_id &&
	    tw_stack_with(e->tw, v->stack_id, e->symbolise, stack, sizeof(stack)) >= 0)
		jx_add_str(o, "stack_now", stack);
	/* thread_watch_syscalls: the call it is in and since when, as of
	 * the last read (one the programs saw begin), else its last */
	if (v->sys_at_ns && v->sys_nr >= 0) {
		jx_add_str(o, "syscall", sysname(v->sys_nr, stack, sizeof(stack)));
		jx_add_u64(o, "syscall_since_ns", v->sys_at_ns);
		jx_add_u64(o, "syscall_for_ns", v->cur.at_ns > v->sys_at_ns ?
			   v->cur.at_ns - v->sys_at_ns : 0);
	} else if (v->sys_last_nr >= 0) {
		jx_add_str(o, "last_syscall", sysname(v->sys_last_nr, stack, sizeof(stack)));
		jx_add_u64(o, "last_syscall_for_ns", v->sys_last_ns);
	}
	json_object_array_add(e->arr, o);
}

struct json_object *threadwatch_evidence(struct threadwatch *tw, int32_t pid, uint64_t since_ns,
					 uint64_t until_ns, uint64_t threshold_ns)
{
	struct tw_ev e = { .tw = tw, .since_ns = since_ns, .until_ns = until_ns,
			   .threshold_ns = threshold_ns };

	if (pid <= 0 || tw_find_proc(tw, pid) < 0)
		return NULL;
	e.arr = json_object_new_array();
	e.symbolise = ksyms_refresh(tw->ks) == 0;
	threadwatch_judge(tw, pid, threshold_ns, 50, 0, 0, tw_ev_thread, &e);
	return e.arr;
}

void threadwatch_walks(const struct threadwatch *tw, uint64_t *walks, uint64_t *reused)
{
	*walks = tw ? tw->skel->bss->tw_walks : 0;
	*reused = tw ? tw->skel->bss->tw_reused : 0;
}

void threadwatch_status(const struct threadwatch *tw, struct json_object *out)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	jx_add_bool(out, "on", 1);
	jx_add_int(out, "processes", (int)tw->nprocs);
	jx_add_int(out, "threads", (int)tw->nthr);
	jx_add_u64(out, "dropped_exited", tw->dropped_exit);
	jx_add_u64(out, "dropped_pid_reused", tw->dropped_reuse);
	jx_add_u64(out, "refused_over_limit", tw->refused);
	jx_add_int(out, "processes_by_pidfd", (int)tw->npidfds);
	jx_add_u64(out, "liveness_proc_reads", tw->proc_reads);
	jx_add_u64(out, "map_walks", tw->walks);
	jx_add_u64(out, "keyed_reads", tw->keyed_reads);
	jx_add_str(out, "kernel_symbols", ksyms_status(tw->ks));
	jx_add_u64(out, "kernel_symbols_reads", ksyms_reads(tw->ks));
	jx_add_u64(out, "stack_walks", tw->skel->bss->tw_walks);
	jx_add_u64(out, "stacks_reused", tw->skel->bss->tw_reused);
	jx_add_str(out, "syscalls", tw->sys_links[0] ? "on" : tw->sys_why);
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(tw->skel->progs.tw_switch), &info, &len))
		jx_add_int(out, "prog_id", (int)info.id);
}
