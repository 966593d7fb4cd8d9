/* bench_scale: how the sources scale, and what memory holds, one JSON line
 * per measurement (run.sh interleaves and takes medians).
 *
 *   bench_scale engine N REPS     an engine flow table of N sessions: CPU
 *                                 time of one poll of the engine source
 *                                 (flow_src_engine_ops) when no record
 *                                 moved and when every one did, bytes per
 *                                 session
 *                                 of the table and of the detector's entry
 *   bench_scale tracker N REPS    the tc tracker's map holding N flows
 *                                 (filled by its own program, in a private
 *                                 namespace): CPU time of one read, bytes
 *                                 per flow of the map
 *   bench_scale pkt REPS          the tracker's cost per frame alone, in the
 *                                 kernel (BPF_PROG_TEST_RUN): a watched TCP
 *                                 frame of a known flow, a frame no selector
 *                                 watches, and an empty tc program (the floor)
 *   bench_scale detector N REPS [warm]  the detector's CPU per observation
 *                                 (livetab_get + flow_update) over N flows,
 *                                 caches flushed between polls unless warm
 *   bench_scale recorder          the flight recorder's memory for counters x
 *                                 rate x horizon, against the model
 *                                 samples x counters x 8 bytes */
#include <nicstall/flowtab.h>

#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/flowtrack_api.h"
#include "daemon/detect/liveness.h"
#include "daemon/recorder.h"
#include "lib/cost.h"
#include "lib/loop.h"
#include "lib/log.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned nobs;

static void count_cb(const struct flow_obs *o, void *arg)
{
	(void)o;
	(void)arg;
	nobs++;
}

/* Round r's cost d into sum and best; round 0 (which opens, maps or
 * creates what the others reuse) is left out. */
static void tally(unsigned r, uint64_t d, uint64_t *sum, uint64_t *best)
{
	if (r == 0)
		return;
	*sum += d;
	if (d < *best)
		*best = d;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_scale: %s: %s\n", what, why);
	exit(1);
}

/* ---- engine flow tables ---- */

static void engine(unsigned n, unsigned reps)
{
	char dir[] = "/tmp/bench-engine.XXXXXX", err[256], cmd[64];
	struct flow_src s = { .ops = &flow_src_engine_ops };
	struct flow_src_ctx ctx = { .netns_fd = -1 };
	struct nsft_table t;
	uint64_t now = nsft_now_ns(), best = UINT64_MAX, sum = 0, mbest = UINT64_MAX, msum = 0;
	unsigned read = 0, idle_emitted = 0;

	if (!mkdtemp(dir))
		die("mkdtemp", strerror(errno));
	if (nsft_create(&t, dir, "bench", n) < 0)
		die("nsft_create", strerror(errno));
	/* what nsft_add() writes, without its search for a free slot (linear:
	 * filling n slots with it is O(n^2)) */
	for (unsigned i = 0; i < n; i++) {
		struct nsft_record *r = &t.rec[i];

		nsft_begin(r);
		r->session_id = i + 1;
		r->proto = IPPROTO_TCP;
		r->family = NSFT_FAMILY_INET4;
		r->local_port = htons(12001);
		r->remote_port = htons((uint16_t)(1024 + i % 60000));
		r->local_addr[10] = r->local_addr[11] = 0xff;
		r->local_addr[12] = 10;
		r->local_addr[15] = 1;
		r->remote_addr[10] = r->remote_addr[11] = 0xff;
		r->remote_addr[12] = 10;
		r->remote_addr[13] = (uint8_t)(i >> 16);
		r->remote_addr[14] = (uint8_t)(i >> 8);
		r->remote_addr[15] = (uint8_t)i;
		r->tx_msgs = r->rx_msgs = 1000 + i;
		r->tx_bytes = r->rx_bytes = 64000 + i;
		r->last_tx_ns = r->last_rx_ns = now;
		r->open_ns = now;
		r->state = NSFT_ST_OPEN;
		nsft_end(r);
	}
	__atomic_store_n(&t.hdr->count, n, __ATOMIC_RELEASE);
	ctx.dir = dir;
	if (s.ops->open(&s, &ctx) < 0)
		die("engine source", s.err);
	/* idle: no record moves between polls (the first poll reads and
	 * emits them all; it is not counted) */
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t c0 = cost_cpu_ns(), d;

		nobs = 0;
		if (s.ops->poll(&s, count_cb, NULL) < 0)
			die("engine poll", s.err);
		d = cost_cpu_ns() - c0;
		if (r == 0)
			read = nobs;
		tally(r, d, &sum, &best);
	}
	idle_emitted = nobs;
	/* busy: every record moved since the last poll (the writer's
	 * update, not timed) */
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t c0, d;

		for (unsigned i = 0; i < n; i++) {
			nsft_begin(&t.rec[i]);
			t.rec[i].rx_msgs++;
			t.rec[i].tx_msgs++;
			nsft_end(&t.rec[i]);
		}
		c0 = cost_cpu_ns();
		nobs = 0;
		if (s.ops->poll(&s, count_cb, NULL) < 0)
			die("engine poll", s.err);
		d = cost_cpu_ns() - c0;
		if (nobs != n)
			fprintf(stderr, "bench_scale: engine: %u of %u moved sessions read\n", nobs, n);
		tally(r, d, &msum, &mbest);
	}
	if (read != n)
		fprintf(stderr, "bench_scale: engine: %u of %u sessions read\n", read, n);
	printf("{\"what\":\"engine\",\"n\":%u,\"read\":%u,\"idle_emitted\":%u,"
	       "\"poll_us\":%.1f,\"poll_us_min\":%.1f,\"moved_us\":%.1f,"
	       "\"table_bytes_per_flow\":%.1f,\"detector_bytes_per_flow\":%zu,"
	       "\"detector_max_flows\":%u}\n", n, read, idle_emitted, (double)sum / reps / 1e3,
	       (double)best / 1e3, (double)msum / reps / 1e3, (double)t.map_len / n,
	       sizeof(struct sflow) + 16, LIVENESS_MAX_ENGINE_FLOWS);
	s.ops->close(&s);
	nsft_close(&t, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_scale: %s failed\n", cmd);
	(void)err;
}

/* ---- the tc tracker ---- */

/* An Ethernet + IPv4 + TCP (or UDP) frame from 10.9.a.b:sport to
 * 10.9.0.1:dport. The headers are built aligned and copied in: behind
 * the 14-byte Ethernet header the IP header is not 4-byte aligned. */
static size_t frame(unsigned char *buf, int udp, uint32_t src, uint16_t sport, uint16_t dport)
{
	struct ethhdr eth = { .h_proto = htons(ETH_P_IP) };
	struct iphdr ip = { 0 };
	size_t l4 = udp ? sizeof(struct udphdr) : sizeof(struct tcphdr);
	size_t at = sizeof(eth) + sizeof(ip);

	memset(buf, 0, 128);
	ip.version = 4;
	ip.ihl = 5;
	ip.ttl = 64;
	ip.protocol = udp ? IPPROTO_UDP : IPPROTO_TCP;
	ip.tot_len = htons((uint16_t)(sizeof(ip) + l4 + 32));
	ip.saddr = htonl(0x0a090000u | (src & 0xffff));
	ip.daddr = htonl(0x0a090001u);
	memcpy(buf, &eth, sizeof(eth));
	memcpy(buf + sizeof(eth), &ip, sizeof(ip));
	if (udp) {
		struct udphdr u = { 0 };

		u.source = htons(sport);
		u.dest = htons(dport);
		u.len = htons((uint16_t)(l4 + 32));
		memcpy(buf + at, &u, sizeof(u));
	} else {
		struct tcphdr t = { 0 };

		t.source = htons(sport);
		t.dest = htons(dport);
		t.doff = 5;
		t.ack = 1;
		memcpy(buf + at, &t, sizeof(t));
	}
	return at + l4 + 32;
}

/* A private namespace with a veth: what the tracker attaches to. */
static int private_veth(void)
{
	if (unshare(CLONE_NEWNET) < 0)
		die("unshare", strerror(errno));
	if (system("ip link add bs0 type veth peer name bs1 && ip link set bs0 up && "
		   "ip link set bs1 up") != 0)
		die("veth", "ip link add failed");
	return (int)if_nametoindex("bs0");
}

static void tracker(unsigned n, unsigned reps)
{
	unsigned char pkt[128];
	char err[512];
	struct flowtrack *ft;
	unsigned cap = 1, ns;
	uint64_t best = UINT64_MAX, sum = 0, t0;
	int ifindex = private_veth();

	while (cap < n + n / 4)
		cap <<= 1;
	ft = flowtrack_attach(-1, ifindex, NULL, 0, cap, FLOWTRACK_AUTO, err, sizeof(err));
	if (!ft)
		die("flowtrack_attach", err);
	t0 = loop_mono_ns();
	for (unsigned i = 0; i < n; i++) {
		size_t len = frame(pkt, 0, i / 50000, (uint16_t)(1024 + i % 50000), 11111);

		if (flowtrack_test_run(ft, 0, pkt, len, 1, &ns) < 0)
			die("test run", strerror(errno));
	}
	t0 = loop_mono_ns() - t0;
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t c0 = cost_cpu_ns(), d;

		nobs = 0;
		if (flowtrack_poll(ft, count_cb, NULL) < 0)
			die("flowtrack_poll", strerror(errno));
		d = cost_cpu_ns() - c0;
		tally(r, d, &sum, &best);
	}
	printf("{\"what\":\"tracker\",\"n\":%u,\"read\":%u,\"map_size\":%u,\"poll_us\":%.1f,"
	       "\"poll_us_min\":%.1f,\"map_bytes_per_flow\":%.1f,\"fill_s\":%.2f}\n", n, nobs, cap,
	       (double)sum / reps / 1e3, (double)best / 1e3,
	       (double)flowtrack_map_bytes(ft) / n, (double)t0 / 1e9);
	flowtrack_detach(ft);
}

/* The kernel's mean ns per run of an empty tc program: the floor every
 * tc program pays. */
static unsigned empty_prog_ns(const unsigned char *pkt, size_t len, unsigned repeat)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (__u32)len,
		    .repeat = repeat);
	int fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "bench_empty", "GPL", insns, 2, NULL);

	if (fd < 0 || bpf_prog_test_run_opts(fd, &o) < 0)
		die("empty program", strerror(errno));
	close(fd);
	return o.duration;
}

static void pkt_cost(unsigned reps)
{
	unsigned char hit[128], miss[128], udp[128];
	size_t lh, lm, lu;
	struct flow_sel sel;
	char err[512];
	struct flowtrack *ft;
	unsigned nh, nm, nu, ne;
	int ifindex = private_veth();

	if (flow_sel_parse("tcp port 11111", &sel, err, sizeof(err)) < 0)
		die("selector", err);
	ft = flowtrack_attach(-1, ifindex, &sel, 1, 0, FLOWTRACK_AUTO, err, sizeof(err));
	if (!ft)
		die("flowtrack_attach", err);
	lh = frame(hit, 0, 7, 40000, 11111);     /* watched, its flow known after the first */
	lm = frame(miss, 0, 7, 40000, 22222);    /* no selector watches it */
	lu = frame(udp, 1, 7, 40000, 11111);     /* UDP: the selector wants TCP */
	if (flowtrack_test_run(ft, 0, hit, lh, 1, &nh) < 0)
		die("test run", strerror(errno));
	for (unsigned r = 0; r < reps; r++) {
		if (flowtrack_test_run(ft, 0, hit, lh, 200000, &nh) < 0 ||
		    flowtrack_test_run(ft, 0, miss, lm, 200000, &nm) < 0 ||
		    flowtrack_test_run(ft, 0, udp, lu, 200000, &nu) < 0)
			die("test run", strerror(errno));
		ne = empty_prog_ns(hit, lh, 200000);
		printf("{\"what\":\"pkt\",\"watched_ns\":%u,\"unwatched_ns\":%u,\"udp_unwatched_ns\":%u,"
		       "\"empty_ns\":%u}\n", nh, nm, nu, ne);
	}
	flowtrack_detach(ft);
}

/* ---- the detector ---- */

/* The detector's work per observation (livetab_get + flow_update, what
 * stall_observe does), n flows of two ports polled reps times; between
 * polls, unless warm, 8 MiB are written (the poll comes every 50 ms on a
 * machine that runs other work: the flows are not in cache). */
static void detector(unsigned n, unsigned reps, int warm)
{
	static const char *const ports[2] = { "cli", "srv" };
	struct livetab *ft = livetab_new();
	struct flow_obs *obs = calloc(n, sizeof(*obs));
	size_t junk_len = 8u << 20;
	unsigned char *junk = malloc(junk_len);
	uint64_t sum = 0, best = UINT64_MAX, now = 1000000000ull;

	if (!ft || !obs || !junk)
		die("detector", "out of memory");
	for (unsigned i = 0; i < n; i++) {
		struct flow_obs *o = &obs[i];

		o->src = i % 3 == 0 ? FLOW_SRC_ENGINE : i % 3 == 1 ? FLOW_SRC_SOCK : FLOW_SRC_BPF;
		o->key.proto = IPPROTO_TCP;
		o->key.saddr.s6_addr[10] = o->key.saddr.s6_addr[11] = 0xff;
		o->key.saddr.s6_addr[12] = 10;
		o->key.saddr.s6_addr[15] = 1;
		o->key.daddr = o->key.saddr;
		o->key.daddr.s6_addr[15] = 2;
		o->key.sport = htons((uint16_t)(1024 + i / 3));
		o->key.dport = htons(12001);
		o->session = o->src == FLOW_SRC_ENGINE ? i + 1 : 0;
	}
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t c0, d;

		if (!warm)
			memset(junk, (int)r, junk_len);
		now += 50000000ull;
		c0 = cost_cpu_ns();
		for (unsigned i = 0; i < n; i++) {
			struct flow_obs *o = &obs[i];
			struct sflow *f;

			/* request/response: one more each way every poll */
			o->tx_msgs = o->rx_msgs = r;
			o->tx_bytes = o->rx_bytes = 64ull * r;
			o->last_tx_ns = o->last_rx_ns = now - 1000000;
			f = livetab_get(ft, o, ports[i & 1], now, 1);
			if (f)
				flow_update(f, o, now, 200000000ull, 50000000ull);
		}
		livetab_expire(ft, now, NULL, NULL);
		d = cost_cpu_ns() - c0;
		tally(r, d, &sum, &best);
	}
	printf("{\"what\":\"detector\",\"n\":%u,\"warm\":%d,\"obs_ns\":%.1f,"
	       "\"obs_ns_min\":%.1f,\"flow_bytes\":%zu}\n", n, warm,
	       (double)sum / reps / n, (double)best / n, sizeof(struct sflow));
	livetab_free(ft);
	free(obs);
	free(junk);
}

/* ---- the flight recorder ---- */

static void recorder(void)
{
	static const unsigned counters[] = { 35, 751 };
	static const uint64_t interval_ms[] = { 1000, 100 }, horizon_s[] = { 120, 600 };

	for (unsigned a = 0; a < 2; a++)
		for (unsigned b = 0; b < 2; b++)
			for (unsigned c = 0; c < 2; c++) {
				unsigned k = counters[a];
				unsigned cap = (unsigned)(horizon_s[c] * 1000 / interval_ms[b]) + 1;
				const char **names = calloc(k, sizeof(char *));
				uint64_t *vals = calloc(k, sizeof(uint64_t));
				uint64_t rss0 = cost_rss_kib();
				struct recorder *rec = rec_new(cap, 1);
				struct clayout *l;

				for (unsigned i = 0; i < k; i++) {
					char *nm = malloc(24);

					snprintf(nm, 24, "counter_%u", i);
					names[i] = nm;
				}
				l = clayout_new(k, names, NULL);
				for (unsigned i = 0; i < cap; i++) {
					struct clayout *ll[1] = { l };
					const uint64_t *vv[1] = { vals };

					vals[0] = i;
					rec_push(rec, i, i, ll, vv);
				}
				printf("{\"what\":\"recorder\",\"counters\":%u,\"interval_ms\":%llu,"
				       "\"horizon_s\":%llu,\"samples\":%u,\"bytes\":%zu,"
				       "\"model_bytes\":%llu,\"rss_kib\":%llu}\n", k,
				       (unsigned long long)interval_ms[b],
				       (unsigned long long)horizon_s[c], cap, rec_bytes(rec),
				       (unsigned long long)cap * k * 8,
				       (unsigned long long)(cost_rss_kib() - rss0));
				rec_free(rec);
				clayout_unref(l);
				for (unsigned i = 0; i < k; i++)
					free((void *)names[i]);
				free(names);
				free(vals);
			}
}

int main(int argc, char **argv)
{
	log_set_level(LOG_ERR);
	if (argc >= 4 && !strcmp(argv[1], "engine"))
		engine((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	else if (argc >= 4 && !strcmp(argv[1], "tracker"))
		tracker((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	else if (argc >= 3 && !strcmp(argv[1], "pkt"))
		pkt_cost((unsigned)atoi(argv[2]));
	else if (argc >= 4 && !strcmp(argv[1], "detector"))
		detector((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
			 argc >= 5 && !strcmp(argv[4], "warm"));
	else if (argc >= 2 && !strcmp(argv[1], "recorder"))
		recorder();
	else {
		fprintf(stderr, "usage: bench_scale engine N REPS | tracker N REPS | pkt REPS | detector N REPS [warm] | recorder\n");
		return 2;
	}
	return 0;
}
