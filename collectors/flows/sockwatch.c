/* sockwatch: loader of the kernel-event socket watch (sockwatch.bpf.c).
 * See sockwatch_api.h. */
#include "collectors/flows/sockwatch_api.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/bpflog.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "collectors/flows/sockwatch.h"
#include "collectors/flows/sockwatch.skel.h"

/* The hooks, attached one by one so that a refusal names its hook: the
 * four tracepoints, or sw_ops on the cgroup root, the socket-receive
 * tracepoint and sw_enrol's iterator (sockwatch_api.h). */
#define SW_NHOOKS 4

/* One object for the process, as sockread's: the daemon is one thread. */
static struct {
	struct sockwatch_bpf *skel;
	struct bpf_link *links[SW_NHOOKS];
	struct ring_buffer *rb;
	int reg_fd, release_fd;
	unsigned refs;
	/* slots: who has each, its generation; free ones on a stack */
	struct sockwatch **owner;
	uint32_t *gen;
	uint32_t *free;
	unsigned nfree, used;
	char fail_attach[32];   /* tests */
	int test_tracepoints;   /* tests: the tracepoints, not sockops */
	unsigned test_busy;     /* tests: sockwatch_set_busy()'s n, if set */
	unsigned test_timer_nomem;  /* tests: tries of the wheel's timer that fail */
	unsigned tp_loads;      /* loads that attached the tracepoints */
	unsigned loads;         /* loads of the programs (tests) */
	int sockops;            /* the hooks are sw_ops' (else the tracepoints') */
	char why[160];          /* why not sw_ops ("" when they are) */
} sw = { .reg_fd = -1, .release_fd = -1 };

struct sockwatch {
	int nsfd, home;         /* the port's namespace, and ours to return to */
	int walked;             /* an enrolment set flags in it: close walks */
	unsigned busy;          /* sockwatch_set_busy() */
	int fd;                 /* our dup of the ring's epoll fd */
	sockwatch_event_fn fn;
	void *arg;
};

static int sw_event(void *ctx, void *data, size_t len)
{
	const struct sw_event *e = data;
	struct sockwatch_event ev;

	(void)ctx;
	if (len < sizeof(*e) || e->slot == 0 || e->slot >= SW_MAX)
		return 0;
	/* a slot given up since, or given to another socket: not ours */
	if (!sw.owner[e->slot] || sw.gen[e->slot] != e->gen)
		return 0;
	ev.slot = e->slot;
	ev.wait_from = e->wait_from;
	ev.deadline = e->deadline;
	ev.acked = e->acked;
	ev.rcvd = e->rcvd;
	ev.written = e->written;
	ev.wait_late = e->wait_late;
	ev.owed = e->owed;
	ev.busy = e->busy;
	ev.left = e->left;
	sw.owner[e->slot]->fn(sw.owner[e->slot]->arg, &ev);
	return 0;
}

static void sw_detach(void)
{
	for (unsigned i = 0; i < SW_NHOOKS; i++) {
		bpf_link__destroy(sw.links[i]);
		sw.links[i] = NULL;
	}
}

static void sw_unload(void)
{
	ring_buffer__free(sw.rb);
	sw.rb = NULL;
	sw_detach();
	sockwatch_bpf__destroy(sw.skel);
	sw.skel = NULL;
	free(sw.owner);
	free(sw.gen);
	free(sw.free);
	sw.owner = NULL;
	sw.gen = sw.free = NULL;
	sw.nfree = sw.used = 0;
	sw.reg_fd = sw.release_fd = -1;
	sw.sockops = 0;
	sw.why[0] = '\0';
}

/* Attach p: to the cgroup cgfd (sockops), else as its section says. A
 * refusal names the section. NULL + err. */
static struct bpf_link *sw_attach(struct bpf_program *p, int cgfd, char *err, size_t errlen)
{
	const char *name = bpf_program__section_name(p);
	struct bpf_link *l;

	if (sw.fail_attach[0] && strstr(name, sw.fail_attach)) {
		sw.fail_attach[0] = '\0';
		util_errf(err, errlen, "attach %s: %s", name, strerror(EPERM));
		errno = EPERM;
		return NULL;
	}
	l = cgfd >= 0 ? bpf_program__attach_cgroup(p, cgfd) : bpf_program__attach(p);
	if (!l) {
		int e = errno;

		util_errf(err, errlen, "attach %s: %s", name, strerror(e));
		errno = e;
	}
	return l;
}

/* Whether bpf_setsockopt() takes TCP_BPF_SOCK_OPS_CB_FLAGS here (Linux
 * 6.12): the value in the kernel's BTF. Older kernels load sw_enrol and
 * refuse the option at run time. */
static int sw_kernel_has_cb_flags(void)
{
	static int known = -1;  /* the kernel does not change under us */
	struct btf *btf;
	int found = 0;

	if (known >= 0)
		return known;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return known = 0;
	for (unsigned id = 1; id < btf__type_cnt(btf) && !found; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (unsigned i = 0; i < btf_vlen(t) && !found; i++)
			found = !strcmp(btf__name_by_offset(btf, e[i].name_off),
					"TCP_BPF_SOCK_OPS_CB_FLAGS");
	}
	btf__free(btf);
	return known = found;
}

/* The first cgroup2 mount: its root's programs run for the sockets of
 * every cgroup under it (compute_effective_progs(): a link is attached as
 * BPF_F_ALLOW_MULTI). Only the hierarchy's own root covers every socket of
 * the host: a cgroup namespace's root, or a subtree bound elsewhere, is
 * another cgroup, whose id (its kernfs node's, what name_to_handle_at()
 * gives for cgroupfs) is not the root's, 1 (kernfs_root's first node). */
static int sw_cgroup2_is_root(const char *path)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mnt;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt, 0) < 0)
		return 0;       /* errno says why */
	errno = 0;
	return h.fh.handle_bytes == sizeof(uint64_t) && h.id == 1;
}

static int sw_cgroup2(char *path, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	char buf[2048];
	struct mntent m;
	int found = 0;

	if (!f)
		return 0;
	/* the first that is the hierarchy's root, else the first */
	while (found < 2 && getmntent_r(f, &m, buf, sizeof(buf)))
		if (!strcmp(m.mnt_type, "cgroup2") && (!found || sw_cgroup2_is_root(m.mnt_dir))) {
			util_strlcpy(path, m.mnt_dir, len);
			found = 1 + sw_cgroup2_is_root(m.mnt_dir);
		}
	endmntent(f);
	return found;
}

/* What the sockops hooks need besides the programs' load: Linux 6.12's
 * option and a cgroup2 mount that is the hierarchy's root (cg, its
 * path). 0, or -1 with why. Cheap (the BTF probe is made once), so that
 * sock_liveness = auto on an older kernel refuses before a load. */
static int sw_sockops_check(char *cg, size_t cglen, char *why, size_t whylen)
{
	if (sw.test_tracepoints) {
		util_errf(why, whylen, "tracepoints asked for");
		return -1;
	}
	if (!sw_kernel_has_cb_flags()) {
		util_errf(why, whylen, "no TCP_BPF_SOCK_OPS_CB_FLAGS for bpf_setsockopt() "
			  "(Linux 6.12)");
		return -1;
	}
	if (!sw_cgroup2(cg, cglen)) {
		util_errf(why, whylen, "no cgroup2 mount");
		return -1;
	}
	if (!sw_cgroup2_is_root(cg)) {
		util_errf(why, whylen, "%s: %s", cg, errno ? strerror(errno) :
			  "not the cgroup2 hierarchy's root (a cgroup namespace?): only its "
			  "sockets would have callbacks");
		return -1;
	}
	return 0;
}

/* The sockops hooks: sw_enrol's iterator, the socket-receive tracepoint,
 * sw_ops on the cgroup2 root cg, sw_sockops_check()'s (its refusal:
 * ckwhy). 0, or -1 with why. */
static int sw_attach_sockops(int loaded, const char *cg, const char *ckwhy, char *why,
			     size_t whylen)
{
	char e[160];
	int fd;

	if (!loaded)
		return -1;      /* why: sw_load's */
	if (ckwhy[0]) {
		util_strlcpy(why, ckwhy, whylen);
		return -1;
	}
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		util_errf(why, whylen, "%s: %s", cg, strerror(errno));
		return -1;
	}
	if (!(sw.links[0] = sw_attach(sw.skel->progs.sw_enrol, -1, e, sizeof(e))) ||
	    !(sw.links[1] = sw_attach(sw.skel->progs.sw_recv, -1, e, sizeof(e))) ||
	    !(sw.links[2] = sw_attach(sw.skel->progs.sw_ops, fd, e, sizeof(e)))) {
		util_errf(why, whylen, "%s%s%s", e, strstr(e, "sockops") ? " on " : "",
			  strstr(e, "sockops") ? cg : "");
		close(fd);
		sw_detach();
		return -1;
	}
	close(fd);
	return 0;
}

/* Load and attach: the sockops hooks, else (unless only_sockops, which
 * fails before any tracepoint is attached) the tracepoints. */
static int sw_load(int only_sockops, char *err, size_t errlen)
{
	struct bpf_program *hooks[SW_NHOOKS];
	char cg[4096], ckwhy[160] = "";
	int rc, loaded = 1;

	/* what the sockops hooks need besides the load, looked at once: with
	 * only_sockops, refused before any load */
	if (sw_sockops_check(cg, sizeof(cg), ckwhy, sizeof(ckwhy)) < 0 && !ckwhy[0])
		util_strlcpy(ckwhy, "refused", sizeof(ckwhy));
	if (only_sockops && ckwhy[0]) {
		util_errf(err, errlen, "no sockops callbacks: %s", ckwhy);
		return -EOPNOTSUPP;
	}
	bpflog_init();
	bpflog_quiet(1);
	sw.loads++;
	sw.skel = sockwatch_bpf__open();
	rc = sw.skel ? sockwatch_bpf__load(sw.skel) : -errno;
	if (sw.skel && rc) {
		/* a kernel without sockops' needs: the tracepoints alone */
		util_errf(sw.why, sizeof(sw.why), "the kernel refused the sockops programs at "
			  "load: %s", strerror(-rc));
		sockwatch_bpf__destroy(sw.skel);
		sw.skel = sockwatch_bpf__open();
		if (sw.skel) {
			bpf_program__set_autoload(sw.skel->progs.sw_ops, false);
			bpf_program__set_autoload(sw.skel->progs.sw_enrol, false);
			rc = sockwatch_bpf__load(sw.skel);
		} else {
			rc = -errno;
		}
		loaded = 0;
	}
	bpflog_quiet(0);
	if (!sw.skel || rc) {
		util_errf(err, errlen, "kernel-event socket watch: load: %s (needs kernel BTF, "
			  "BTF tracepoints, socket storage, bpf_timer, bpf_loop and ring buffers: Linux 6.3)",
			  strerror(rc < 0 ? -rc : EINVAL));
		sw_unload();
		return rc < 0 ? rc : -EINVAL;
	}
	sw.sockops = sw_attach_sockops(loaded, cg, ckwhy, sw.why, sizeof(sw.why)) == 0;
	if (!sw.sockops && only_sockops) {
		util_errf(err, errlen, "no sockops callbacks: %s", sw.why);
		sw_unload();
		return -EOPNOTSUPP;
	}
	if (!sw.sockops) {
		sw.tp_loads++;
		hooks[0] = sw.skel->progs.sw_probe;
		hooks[1] = sw.skel->progs.sw_send;
		hooks[2] = sw.skel->progs.sw_recv;
		hooks[3] = sw.skel->progs.sw_state;
	}
	for (unsigned i = 0; !sw.sockops && i < SW_NHOOKS; i++) {
		char e[160];

		sw.links[i] = sw_attach(hooks[i], -1, e, sizeof(e));
		if (!sw.links[i]) {
			rc = -(errno ? errno : EPERM);
			util_errf(err, errlen, "kernel-event socket watch: %s", e);
			sw_unload();
			return rc;
		}
	}
	sw.rb = ring_buffer__new(bpf_map__fd(sw.skel->maps.sw_events), sw_event, NULL, NULL);
	sw.owner = calloc(SW_MAX, sizeof(*sw.owner));
	sw.gen = calloc(SW_MAX, sizeof(*sw.gen));
	sw.free = malloc(SW_MAX * sizeof(*sw.free));
	if (!sw.rb || !sw.owner || !sw.gen || !sw.free) {
		util_errf(err, errlen, "kernel-event socket watch: ring buffer: %s",
			  sw.rb ? "out of memory" : strerror(errno));
		sw_unload();
		return -ENOMEM;
	}
	/* slot 0 is never given: 0 means none */
	for (uint32_t s = SW_MAX - 1; s > 0; s--)
		sw.free[sw.nfree++] = s;
	sw.reg_fd = bpf_program__fd(sw.skel->progs.sw_register);
	sw.release_fd = bpf_program__fd(sw.skel->progs.sw_release);
	/* the deadline wheel's one timer: bpf_timer_init's memory comes from
	 * kmalloc_nolock() (kernel/bpf/helpers.c __bpf_async_init,
	 * bpf_map_kmalloc_nolock, 6.18), which neither sleeps nor spins and
	 * fails with -ENOMEM while the allocator is contended: eight tries
	 * back to back all failed once in four clean-clone make checks (six
	 * unit programs loading BPF at once). Tried again after 250 us, up
	 * to SW_TIMER_TRIES times (4 ms at the most, in a load's failure
	 * path, not a poll's); any other error at once. */
	for (int i = 0; i < SW_TIMER_TRIES && sw.skel->data->sw_clock_err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o);

		if (i) {
			if (sw.skel->data->sw_clock_err != -ENOMEM)
				break;
			nanosleep(&(struct timespec){ 0, SW_TIMER_RETRY_NS }, NULL);
		}
		if (sw.test_timer_nomem) {
			sw.test_timer_nomem--;
			sw.skel->data->sw_clock_err = -ENOMEM;
			continue;
		}
		if (bpf_prog_test_run_opts(bpf_program__fd(sw.skel->progs.sw_start), &o) < 0) {
			sw.skel->data->sw_clock_err = -errno;
			break;
		}
	}
	if (sw.skel->data->sw_clock_err) {
		rc = (int)sw.skel->data->sw_clock_err;
		util_errf(err, errlen, "kernel-event socket watch: the deadline wheel's timer: %s",
			  strerror(rc < 0 ? -rc : EINVAL));
		sw_unload();
		return rc < 0 ? rc : -EINVAL;
	}
	return 0;
}

static struct sockwatch *sw_open(int nsfd, sockwatch_event_fn fn, void *arg, int only_sockops,
				 char *err, size_t errlen)
{
	struct sockwatch *w;

	if (only_sockops && sw.refs && !sw.sockops) {
		/* loaded with the tracepoints for another port */
		util_errf(err, errlen, "no sockops callbacks: %s", sw.why);
		return NULL;
	}
	w = calloc(1, sizeof(*w));

	if (!w || !fn) {
		free(w);
		util_errf(err, errlen, "kernel-event socket watch: %s",
			  fn ? "out of memory" : "no event handler");
		return NULL;
	}
	w->nsfd = w->home = w->fd = -1;
	w->fn = fn;
	w->arg = arg;
	if (nsfd >= 0 && ((w->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0 ||
			  (w->home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)) {
		util_errf(err, errlen, "kernel-event socket watch: namespace fd: %s",
			  strerror(errno));
		goto fail;
	}
	if (!sw.refs && sw_load(only_sockops, err, errlen) < 0)
		goto fail;
	sw.refs++;
	w->fd = fcntl(ring_buffer__epoll_fd(sw.rb), F_DUPFD_CLOEXEC, 3);
	if (w->fd < 0) {
		util_errf(err, errlen, "kernel-event socket watch: ring fd: %s", strerror(errno));
		sockwatch_close(w);
		return NULL;
	}
	return w;
fail:
	if (w->nsfd >= 0)
		close(w->nsfd);
	if (w->home >= 0)
		close(w->home);
	free(w);
	return NULL;
}

struct sockwatch *sockwatch_open(int nsfd, sockwatch_event_fn fn, void *arg, char *err,
				 size_t errlen)
{
	return sw_open(nsfd, fn, arg, 0, err, errlen);
}

struct sockwatch *sockwatch_open_sockops(int nsfd, sockwatch_event_fn fn, void *arg, char *err,
					 size_t errlen)
{
	return sw_open(nsfd, fn, arg, 1, err, errlen);
}

void sockwatch_close(struct sockwatch *w)
{
	if (!w)
		return;
	for (uint32_t s = 1; sw.owner && s < SW_MAX; s++)
		if (sw.owner[s] == w)
			sockwatch_del(w, s);
	/* the callbacks off its sockets: their slots are given up */
	if (sw.skel && w->walked && sockwatch_enrol(w, NULL, NULL, NULL, 0) < 0)
		log_warnx("kernel-event socket watch: its sockets keep their sockops flags");
	if (w->fd >= 0)
		close(w->fd);
	if (w->nsfd >= 0)
		close(w->nsfd);
	if (w->home >= 0)
		close(w->home);
	free(w);
	if (sw.refs && !--sw.refs)
		sw_unload();
}

int sockwatch_fd(const struct sockwatch *w)
{
	return w ? w->fd : -1;
}

int sockwatch_consume(void)
{
	return sw.rb ? ring_buffer__consume(sw.rb) : 0;
}

/* Run sw_release over slots[0..n) with generations gens. 0 or -errno. */
static int sw_op(int fd, const uint32_t *slots, const uint32_t *gens, unsigned n)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	struct sockwatch_bpf__bss *bss = sw.skel->bss;

	if (n > SW_REG_CHUNK)
		n = SW_REG_CHUNK;
	for (unsigned i = 0; i < n; i++) {
		bss->sw_op_slots[i] = slots[i];
		bss->sw_op_gens[i] = gens[i];
	}
	bss->sw_op_n = n;
	return bpf_prog_test_run_opts(fd, &o) < 0 ? -errno : 0;
}

void sockwatch_del(struct sockwatch *w, uint32_t s)
{
	if (!w || !sw.owner || s == 0 || s >= SW_MAX || sw.owner[s] != w)
		return;
	sw.owner[s] = NULL;
	sw.gen[s]++;            /* the socket's storage points at the old one */
	/* waits no more: the wheel finds nothing to post (a failed run leaves
	 * the old generation, whose socket's hooks then still judge it: its
	 * posts are dropped, the owner being none) */
	sw_op(sw.release_fd, &s, &sw.gen[s], 1);
	sw.free[sw.nfree++] = s;
	sw.used--;
}

int sockwatch_slot(const struct sockwatch *w, uint32_t k, struct sockwatch_slot *out)
{
	struct sw_slot a, b;
	int fd;

	memset(out, 0, sizeof(*out));
	if (!w || !sw.skel || !sw.owner || k == 0 || k >= SW_MAX || sw.owner[k] != w)
		return 0;
	fd = bpf_map__fd(sw.skel->maps.sw_slots);
	/* a copy of an array's element is not atomic against the hooks
	 * (array_map_lookup_elem() then copy_map_value()): two copies, and
	 * the hooks' busy window (moved by every callback) left out */
	if (bpf_map_lookup_elem(fd, &k, &a) < 0 || bpf_map_lookup_elem(fd, &k, &b) < 0)
		return -errno;
	a.busy_win = b.busy_win = a.busy_n = b.busy_n = 0;
	if (memcmp(&a, &b, sizeof(a)) || a.gen != sw.gen[k] || !a.inited)
		return 0;
	out->waiting = a.waiting != 0;
	/* in the wheel at a tick still ahead of the clock: one now or past
	 * is being swept, or was stranded (sw_queue(): a queuer stalled
	 * between its clock and its claim; its slot is queued again only at
	 * a next hook, and sw_queue() takes the stranded tick for queued for
	 * two ticks) */
	out->queued = a.queued && a.queued > loop_mono_ns() / SW_TICK_NS + 1;
	out->posted = a.deadline && a.posted_dl == a.deadline;
	out->owed = a.owed != 0;
	out->wait_from = a.wait_from;
	out->deadline = a.deadline;
	out->acked = a.acked;
	out->rcvd = a.rcvd;
	out->written = a.written;
	return 1;
}

/* Into w's namespace (what a registration's socket lookups and an
 * enrolment's iterator see is the calling thread's): 0, or -errno with
 * err naming what was being done. */
static int sw_enter(const struct sockwatch *w, const char *what, char *err, size_t errlen)
{
	int rc;

	if (w->nsfd < 0 || setns(w->nsfd, CLONE_NEWNET) == 0)
		return 0;
	rc = -errno;
	util_errf(err, errlen, "kernel-event socket watch: %senter namespace: %s", what,
		  strerror(-rc));
	return rc;
}

/* Back home from sw_enter(). Every socket, netlink request and capture
 * after a failure would be made in the port's namespace: stop (the
 * service restarts). */
static void sw_return(const struct sockwatch *w)
{
	if (w->nsfd >= 0 && setns(w->home, CLONE_NEWNET) < 0) {
		log_errx("kernel-event socket watch: cannot return from a port's network "
			 "namespace: %s", strerror(errno));
		abort();
	}
}

int sockwatch_add(struct sockwatch *w, const struct sr_key *keys, unsigned n, uint64_t span,
		  uint32_t *slots, char *err, size_t errlen)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);
	struct sockwatch_bpf__bss *bss;
	int rc = 0;

	if (!w || !sw.skel || (n && (!keys || !slots))) {
		util_errf(err, errlen, "kernel-event socket watch: invalid arguments");
		return -EINVAL;
	}
	bss = sw.skel->bss;
	memset(slots, 0, n * sizeof(*slots));
	if ((rc = sw_enter(w, "", err, errlen)) < 0)
		return rc;
	for (unsigned start = 0; start < n && !rc; start += SW_REG_CHUNK) {
		unsigned m = n - start < SW_REG_CHUNK ? n - start : SW_REG_CHUNK, got = 0;

		for (unsigned i = 0; i < m; i++) {
			uint32_t s;

			if (!sw.nfree)
				break;
			s = sw.free[--sw.nfree];
			sw.gen[s]++;
			bss->sw_regs[got].key = keys[start + i];
			bss->sw_regs[got].slot = s;
			bss->sw_regs[got].gen = sw.gen[s];
			bss->sw_regs[got].span = span;
			bss->sw_regs[got].busy = w->busy;
			slots[start + i] = s;
			got++;
		}
		bss->sw_reg_n = got;
		bss->sw_reg_start = 0;
		if (got && bpf_prog_test_run_opts(sw.reg_fd, &o) < 0) {
			rc = -errno;
			util_errf(err, errlen, "kernel-event socket watch: register: %s",
				  strerror(-rc));
		}
		/* the kernel had no such socket (or the run failed): the slot
		 * goes back */
		for (unsigned i = 0, j = 0; i < m; i++) {
			uint32_t s = slots[start + i];

			if (!s)
				continue;
			uint8_t ok = rc ? 0 : bss->sw_reg_ok[j];

			j++;
			if (ok == 1) {
				sw.owner[s] = w;
				sw.used++;
			} else {
				sw.gen[s]++;
				sw.free[sw.nfree++] = s;
				slots[start + i] = ok == 2 ? SOCKWATCH_RETRY : 0;
			}
		}
	}
	sw_return(w);
	return rc;
}

int sockwatch_enrol(struct sockwatch *w, sockwatch_refused_fn refused, void *arg, char *err,
		    size_t errlen)
{
	uint32_t buf[256];
	ssize_t got = 0;
	int fd, rc = 0;

	if (!w || !sw.skel) {
		util_errf(err, errlen, "kernel-event socket watch: enrol: %s",
			  sw.skel ? "invalid arguments" : "not loaded");
		return -EINVAL;
	}
	if (!sw.sockops)
		return 0;
	/* bpf_iter_tcp walks the namespace of the thread that makes the
	 * iterator (bpf_iter_init_seq_net()) */
	if ((rc = sw_enter(w, "enrol: ", err, errlen)) < 0)
		return rc;
	fd = bpf_iter_create(bpf_link__fd(sw.links[0]));
	if (fd < 0)
		rc = -errno;
	sw_return(w);
	w->walked |= fd >= 0;
	/* the output: the slots of the sockets the kernel would not give the
	 * flags (whole records: bpf_seq_read() hands out whole writes). A
	 * read after a million sockets with none written is EAGAIN
	 * (bpf_seq_read()'s MAX_ITER_OBJECTS): read on */
	while (fd >= 0) {
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			break;
		for (size_t i = 0; i < (size_t)got / sizeof(buf[0]); i++) {
			uint32_t s = buf[i];

			if (refused && s > 0 && s < SW_MAX && sw.owner[s] == w)
				refused(arg, s);
		}
	}
	if (fd >= 0 && got < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc)
		util_errf(err, errlen, "kernel-event socket watch: enrol: %s", strerror(-rc));
	return rc;
}

/* The sum over the CPUs of a one-entry per-CPU array of u64. */
static uint64_t sw_sum_percpu(int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;
	uint32_t zero = 0;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return 0;
	if (bpf_map_lookup_elem(fd, &zero, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

void sockwatch_stats(struct sockwatch_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!sw.skel)
		return;
	st->posted = sw.skel->bss->sw_posted;
	st->lost = sw.skel->bss->sw_lost;
	st->arm_failed = sw.skel->bss->sw_arm_failed;
	st->fired = sw.skel->bss->sw_fired;
	st->rearmed = sw.skel->bss->sw_rearmed;
	st->hooked = sw_sum_percpu(bpf_map__fd(sw.skel->maps.sw_hooks));
	st->sockops = sw.sockops;
	util_strlcpy(st->why, sw.why, sizeof(st->why));
	st->enrolled = sw.skel->bss->sw_enrolled;
	st->unenrolled = sw.skel->bss->sw_unenrolled;
	st->enrol_failed = sw.skel->bss->sw_enrol_failed;
	st->busied = sw.skel->bss->sw_busied;
	st->left = sw.skel->bss->sw_left_n;
	st->slots = sw.used;
}

uint64_t sockwatch_losses(void)
{
	return sw.skel ? sw.skel->bss->sw_lost + sw.skel->bss->sw_arm_failed : 0;
}

void sockwatch_set_busy(struct sockwatch *w, unsigned n)
{
	if (w)
		w->busy = sw.test_busy ? sw.test_busy : n;
}

unsigned sockwatch_test_tracepoint_loads(void)
{
	return sw.tp_loads;
}

unsigned sockwatch_test_loads(void)
{
	return sw.loads;
}

void sockwatch_test_busy(unsigned n)
{
	sw.test_busy = n;
}

void sockwatch_test_busy_lose(unsigned n)
{
	if (sw.skel)
		sw.skel->bss->sw_test_busy_lose = n;
}

void sockwatch_test_lose(unsigned n)
{
	if (sw.skel)
		sw.skel->bss->sw_test_lose = n;
}

void sockwatch_test_noarm(unsigned n)
{
	if (sw.skel)
		sw.skel->bss->sw_test_noarm = n;
}

void sockwatch_test_nomem(unsigned n)
{
	if (sw.skel)
		sw.skel->bss->sw_test_nomem = n;
}

void sockwatch_test_timer_nomem(unsigned n)
{
	sw.test_timer_nomem = n;
}

void sockwatch_test_fail_attach(const char *prog)
{
	util_strlcpy(sw.fail_attach, prog ? prog : "", sizeof(sw.fail_attach));
}

void sockwatch_test_unload(void)
{
	for (uint32_t s = 1; sw.owner && s < SW_MAX; s++)
		sw.owner[s] = NULL;
	sw.refs = 0;
	if (sw.skel)
		sw_unload();
}

void sockwatch_test_enrol_fail(unsigned n)
{
	if (sw.skel)
		sw.skel->bss->sw_test_enrol_fail = n;
}

void sockwatch_test_tracepoints(int on)
{
	sw.test_tracepoints = on;
}
