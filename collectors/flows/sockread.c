/* sockread: loader and runner of the BPF socket reader (sockread.bpf.c).
 * See sockread_api.h. */
#include "collectors/flows/sockread_api.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/bpflog.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "collectors/flows/sockread.skel.h"

/* One loaded program serves every reader of the process. Loading it costs
 * more than all of a port's polls for minutes: its CO-RE relocations make
 * libbpf read and parse the kernel's whole BTF (bpf_object__load ->
 * bpf_object__load_vmlinux_btf -> btf__load_vmlinux_btf: some 50-60 ms of
 * CPU and several MiB here, on the daemon's start) before the verifier
 * runs. A run is synchronous in the caller's thread and finds sockets in
 * that thread's namespace (bpf_prog_test_run_skb() builds its skb on
 * current's namespace's loopback), so nothing in the program belongs to a
 * port: each reader copies its own keys in before a run and the values out
 * after it. The daemon is one thread; the count is not locked. */
static struct {
	struct sockread_bpf *skel;
	int prog_fd;
	unsigned refs;
	unsigned hz;            /* 0 until known: the kernel's, one for all */
	uint64_t cal_j, cal_ns; /* the first run's jiffies and time (measuring HZ) */
} sr_prog = { .prog_fd = -1 };

struct sockread {
	int nsfd;               /* ours; -1: the daemon's namespace */
	int home;               /* the namespace to return to, kept open */
	struct sr_key *keys;    /* SR_MAX, mapped: pages a run never reached */
	struct sr_val *vals;    /* cost nothing; what this reader's last run read */
};

static int sr_prog_get(char *err, size_t errlen)
{
	int rc;

	if (sr_prog.refs) {
		sr_prog.refs++;
		return 0;
	}
	bpflog_init();
	bpflog_quiet(1);        /* an older kernel refuses: one line from us */
	sr_prog.skel = sockread_bpf__open();
	rc = sr_prog.skel ? sockread_bpf__load(sr_prog.skel) : -errno;
	bpflog_quiet(0);
	if (!sr_prog.skel || rc) {
		util_errf(err, errlen, "BPF socket reader: load: %s (needs kernel BTF, "
			  "bpf_skc_lookup_tcp and bpf_skc_to_tcp_sock: Linux 5.9)",
			  strerror(rc < 0 ? -rc : EINVAL));
		sockread_bpf__destroy(sr_prog.skel);
		sr_prog.skel = NULL;
		return rc < 0 ? rc : -EINVAL;
	}
	sr_prog.prog_fd = bpf_program__fd(sr_prog.skel->progs.sr_run);
	sr_prog.refs = 1;
	return 0;
}

static void sr_prog_put(void)
{
	if (!sr_prog.refs || --sr_prog.refs)
		return;
	sockread_bpf__destroy(sr_prog.skel);
	sr_prog.skel = NULL;
	sr_prog.prog_fd = -1;
}

static void *sr_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A reader's own parts; it holds no reference to sr_prog yet. */
static void sr_free(struct sockread *r)
{
	if (r->nsfd >= 0)
		close(r->nsfd);
	if (r->home >= 0)
		close(r->home);
	if (r->keys)
		munmap(r->keys, SR_MAX * sizeof(*r->keys));
	if (r->vals)
		munmap(r->vals, SR_MAX * sizeof(*r->vals));
	free(r);
}

/* Every reader open holds a reference to sr_prog: taken last here. */
struct sockread *sockread_open(int nsfd, char *err, size_t errlen)
{
	struct sockread *r = calloc(1, sizeof(*r));

	if (!r) {
		util_errf(err, errlen, "BPF socket reader: out of memory");
		return NULL;
	}
	r->nsfd = r->home = -1;
	if (nsfd >= 0 && ((r->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0 ||
			  (r->home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)) {
		util_errf(err, errlen, "BPF socket reader: namespace fd: %s", strerror(errno));
		sr_free(r);
		return NULL;
	}
	/* mmap, not calloc: calloc may serve them from the heap and zero
	 * every page (glibc's mmap threshold grows as mapped blocks are freed) */
	r->keys = sr_map(SR_MAX * sizeof(*r->keys));
	r->vals = sr_map(SR_MAX * sizeof(*r->vals));
	if (!r->keys || !r->vals) {
		util_errf(err, errlen, "BPF socket reader: out of memory");
		sr_free(r);
		return NULL;
	}
	if (sr_prog_get(err, errlen) < 0) {
		sr_free(r);
		return NULL;
	}
	return r;
}

void sockread_close(struct sockread *r)
{
	if (!r)
		return;
	sr_prog_put();
	sr_free(r);
}

struct sr_key *sockread_keys(struct sockread *r)
{
	return r->keys;
}

const struct sr_val *sockread_val(const struct sockread *r, unsigned i)
{
	return i < SR_MAX ? &r->vals[i] : NULL;
}

uint32_t sockread_prog_id(const struct sockread *r)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	(void)r;                /* every open reader runs sr_prog's */
	if (bpf_obj_get_info_by_fd(sr_prog.prog_fd, &info, &len) < 0)
		return 0;
	return info.id;
}

/* HZ from the configuration, or from two runs a second or more apart,
 * snapped to the values the kernel allows. */
static void sr_hz(void)
{
	static const unsigned allowed[] = { 100, 250, 300, 1000 };
	uint64_t j = sr_prog.skel->bss->sr_jiffies, t = sr_prog.skel->bss->sr_ktime;
	double hz, best = 1e18;

	if (sr_prog.hz)
		return;
	if (sr_prog.skel->bss->sr_hz) {
		sr_prog.hz = sr_prog.skel->bss->sr_hz;
		return;
	}
	if (!sr_prog.cal_ns) {
		sr_prog.cal_j = j;
		sr_prog.cal_ns = t;
		return;
	}
	if (t - sr_prog.cal_ns < 1000000000ull)
		return;
	hz = (double)(j - sr_prog.cal_j) * 1e9 / (double)(t - sr_prog.cal_ns);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if ((hz - allowed[i]) * (hz - allowed[i]) < best) {
			best = (hz - allowed[i]) * (hz - allowed[i]);
			sr_prog.hz = allowed[i];
		}
}

int sockread_run(struct sockread *r, unsigned n, uint64_t *mono_ns, char *err, size_t errlen)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);
	struct sockread_bpf__bss *bss = sr_prog.skel->bss;
	int rc = 0;

	if (n > SR_MAX) {
		util_errf(err, errlen, "BPF socket reader: %u sockets, at most %u", n, SR_MAX);
		return -EINVAL;
	}
	/* the run looks sockets up in the namespace of the calling thread
	 * (both fds kept open: no /proc path walk per run) */
	if (r->nsfd >= 0 && setns(r->nsfd, CLONE_NEWNET) < 0) {
		rc = -errno;
		util_errf(err, errlen, "BPF socket reader: enter namespace: %s", strerror(-rc));
		return rc;
	}
	memcpy(bss->sr_keys, r->keys, n * sizeof(*r->keys));
	bss->sr_n = n;
	*mono_ns = loop_mono_ns();
	for (unsigned start = 0; start < n && !rc; start += SR_CHUNK) {
		bss->sr_start = start;
		if (bpf_prog_test_run_opts(sr_prog.prog_fd, &o) < 0) {
			rc = -errno;
			util_errf(err, errlen, "BPF socket reader: run: %s", strerror(-rc));
		}
	}
	if (r->nsfd >= 0 && setns(r->home, CLONE_NEWNET) < 0) {
		/* not back home: we must not go on in the port's namespace */
		util_errf(err, errlen, "BPF socket reader: cannot return from the namespace: %s",
			  strerror(errno));
		return -EIO;
	}
	if (!rc) {
		memcpy(r->vals, bss->sr_vals, n * sizeof(*r->vals));
		sr_hz();
	}
	return rc;
}

int64_t sockread_ago_ms(const struct sockread *r, uint32_t now_jiffies, uint32_t then)
{
	uint32_t d = now_jiffies - then;

	(void)r;
	if (!sr_prog.hz)
		return -1;
	/* jiffies_to_msecs() */
	return (int64_t)((uint64_t)d * 1000u / sr_prog.hz);
}

uint32_t sockread_jiffies_us(const struct sockread *r, uint32_t j)
{
	uint64_t us;

	(void)r;
	if (!sr_prog.hz)
		return 0;
	us = (uint64_t)j * 1000000u / sr_prog.hz;
	return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}
