/* sockread: loader and runner of the BPF socket reader (sockread.bpf.c).
 * See sockread_api.h. */
#include "collectors/sockread_api.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/bpflog.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "sockread.skel.h"

struct sockread {
	struct sockread_bpf *skel;
	int prog_fd;
	int nsfd;               /* ours; -1: the daemon's namespace */
	int home;               /* the namespace to return to, kept open */
	unsigned hz;            /* 0 until known */
	uint64_t cal_j, cal_ns; /* the first run's jiffies and time (measuring HZ) */
};

struct sockread *sockread_open(int nsfd, char *err, size_t errlen)
{
	struct sockread *r = calloc(1, sizeof(*r));
	int rc;

	if (!r) {
		util_errf(err, errlen, "BPF socket reader: out of memory");
		return NULL;
	}
	r->nsfd = r->home = -1;
	if (nsfd >= 0 && ((r->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0 ||
			  (r->home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)) {
		util_errf(err, errlen, "BPF socket reader: namespace fd: %s", strerror(errno));
		sockread_close(r);
		return NULL;
	}
	bpflog_init();
	bpflog_quiet(1);        /* an older kernel refuses: one line from us */
	r->skel = sockread_bpf__open();
	rc = r->skel ? sockread_bpf__load(r->skel) : -errno;
	bpflog_quiet(0);
	if (!r->skel || rc) {
		util_errf(err, errlen, "BPF socket reader: load: %s (needs kernel BTF, "
			  "bpf_skc_lookup_tcp and bpf_skc_to_tcp_sock: Linux 5.9)",
			  strerror(rc < 0 ? -rc : EINVAL));
		sockread_close(r);
		return NULL;
	}
	r->prog_fd = bpf_program__fd(r->skel->progs.sr_run);
	return r;
}

void sockread_close(struct sockread *r)
{
	if (!r)
		return;
	sockread_bpf__destroy(r->skel);
	if (r->nsfd >= 0)
		close(r->nsfd);
	if (r->home >= 0)
		close(r->home);
	free(r);
}

struct sr_key *sockread_keys(struct sockread *r)
{
	return r->skel->bss->sr_keys;
}

const struct sr_val *sockread_val(const struct sockread *r, unsigned i)
{
	return i < SR_MAX ? &r->skel->bss->sr_vals[i] : NULL;
}

/* HZ from the configuration, or from two runs a second or more apart,
 * snapped to the values the kernel allows. */
static void sr_hz(struct sockread *r)
{
	static const unsigned allowed[] = { 100, 250, 300, 1000 };
	uint64_t j = r->skel->bss->sr_jiffies, t = r->skel->bss->sr_ktime;
	double hz, best = 1e18;

	if (r->hz)
		return;
	if (r->skel->bss->sr_hz) {
		r->hz = r->skel->bss->sr_hz;
		return;
	}
	if (!r->cal_ns) {
		r->cal_j = j;
		r->cal_ns = t;
		return;
	}
	if (t - r->cal_ns < 1000000000ull)
		return;
	hz = (double)(j - r->cal_j) * 1e9 / (double)(t - r->cal_ns);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if ((hz - allowed[i]) * (hz - allowed[i]) < best) {
			best = (hz - allowed[i]) * (hz - allowed[i]);
			r->hz = allowed[i];
		}
}

int sockread_run(struct sockread *r, unsigned n, uint64_t *mono_ns, char *err, size_t errlen)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);
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
	r->skel->bss->sr_n = n;
	*mono_ns = loop_mono_ns();
	for (unsigned start = 0; start < n && !rc; start += SR_CHUNK) {
		r->skel->bss->sr_start = start;
		if (bpf_prog_test_run_opts(r->prog_fd, &o) < 0) {
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
	if (!rc)
		sr_hz(r);
	return rc;
}

int64_t sockread_ago_ms(const struct sockread *r, uint32_t now_jiffies, uint32_t then)
{
	uint32_t d = now_jiffies - then;

	if (!r->hz)
		return -1;
	/* jiffies_to_msecs() */
	return (int64_t)((uint64_t)d * 1000u / r->hz);
}

uint32_t sockread_jiffies_us(const struct sockread *r, uint32_t j)
{
	uint64_t us;

	if (!r->hz)
		return 0;
	us = (uint64_t)j * 1000000u / r->hz;
	return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}
