/* bench_sample: what one sample costs, per counter source, measured side by
 * side in one run (the machines are shared: compare ratios, not absolutes).
 *
 *   recorded text  parse the 751-counter ConnectX-4 Lx `ethtool -S` dump
 *   ethtool ioctl  GSSET_INFO + GSTATS on a veth (in a private namespace)
 *   netdev stats64 RTM_GETLINK over a kept rtnetlink socket
 *   recorder push  one 751-counter sample into a 1201-sample ring
 */
#include "collectors/counters.h"
#include "lib/log.h"
#include "daemon/recorder.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double time_src(const struct src_ops *ops, struct src_ctx *ctx, unsigned n,
		       unsigned *ncnt)
{
	struct src s = { .ops = ops };
	struct clayout *l;
	const uint64_t *v;
	double t0;

	if (ops->open(&s, ctx) < 0) {
		fprintf(stderr, "bench: %s: %s\n", ops->name, s.err);
		return -1;
	}
	t0 = now_s();
	for (unsigned i = 0; i < n; i++)
		if (s.ops->read(&s, &l, &v) < 0) {
			fprintf(stderr, "bench: %s: %s\n", ops->name, s.err);
			return -1;
		}
	*ncnt = l->n;
	t0 = (now_s() - t0) / n;
	s.ops->close(&s);
	return t0;
}

int main(int argc, char **argv)
{
	const char *dump = argc > 1 ? argv[1] : "tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt";
	struct src_ctx ctx = { .port_name = "bench", .ifname = "bv0", .netns_fd = -1, .sysfs_root = "" };
	unsigned n = 20000, c1 = 0, c2 = 0, c3 = 0;
	double text, ioctl, netdev, push;

	log_set_level(LOG_ERR);
	if (unshare(CLONE_NEWNET) < 0 ||
	    system("ip link add bv0 type veth peer name bv1 && ip link set bv0 up && ip link set bv1 up") != 0) {
		fprintf(stderr, "bench: needs root (private namespace, veth)\n");
		return 1;
	}
	ctx.text_file = dump;
	text = time_src(&src_text_ops, &ctx, n, &c1);
	ioctl = time_src(&src_ethtool_ops, &ctx, n, &c2);
	netdev = time_src(&src_netdev_ops, &ctx, n, &c3);
	{
		struct recorder *r = rec_new(1201, 1);
		const char **names = calloc(c1, sizeof(char *));
		uint64_t *vals = calloc(c1, sizeof(uint64_t));
		struct clayout *l;
		double t0;

		for (unsigned i = 0; i < c1; i++) {
			names[i] = malloc(16);
			snprintf((char *)names[i], 16, "c%u", i);
		}
		l = clayout_new(c1, names, NULL);
		t0 = now_s();
		for (unsigned i = 0; i < n; i++) {
			const uint64_t *vv[1] = { vals };
			struct clayout *ll[1] = { l };

			vals[0] = i;
			rec_push(r, i, i, ll, vv);
		}
		push = (now_s() - t0) / n;
		printf("recorder memory for 1201 samples of %u counters: %zu KiB\n", c1,
		       rec_bytes(r) / 1024);
		rec_free(r);
		clayout_unref(l);
	}
	if (text < 0 || ioctl < 0 || netdev < 0)
		return 1;
	printf("%-44s %10s %10s\n", "per sample", "us", "ratio");
	printf("%-44s %10.2f %10.2f\n", "recorded ethtool -S text (751 counters)", text * 1e6, 1.0);
	printf("%-44s %10.2f %10.2f\n", "ethtool ioctl on veth", ioctl * 1e6, ioctl / text);
	printf("%-44s %10.2f %10.2f\n", "netdev stats64 over rtnetlink", netdev * 1e6, netdev / text);
	printf("%-44s %10.2f %10.2f\n", "recorder push (751 counters)", push * 1e6, push / text);
	printf("(%u iterations each; %u, %u and %u counters)\n", n, c1, c2, c3);
	return 0;
}
