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
 *   bench_scale vma N REPS        the VMA/XLIO reader on N sockets of libvma
 *                                 9.8.84 statistics files (written through
 *                                 the engine's own header, 1,000 sockets a
 *                                 file, each file a child that holds the
 *                                 sockets and maps the libvma stand-in, so
 *                                 the claims verify): CPU time of one poll
 *                                 idle and after every block moved
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
#include "tests/engine/engine_stats.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* One poll of source s: its CPU time; nobs what it emitted. */
static uint64_t poll_cost(struct flow_src *s, const char *what)
{
	uint64_t c0 = cost_cpu_ns();

	nobs = 0;
	if (s->ops->poll(s, count_cb, NULL) < 0)
		die(what, s->err);
	return cost_cpu_ns() - c0;
}

/* reps + 1 polls of s with nothing moved between them, tallied (the first,
 * which reads and emits everything, left out): what the first emitted;
 * nobs what the last did. */
static unsigned idle_polls(struct flow_src *s, const char *what, unsigned reps, uint64_t *sum,
			   uint64_t *best)
{
	unsigned first = 0;

	for (unsigned r = 0; r <= reps; r++) {
		uint64_t d = poll_cost(s, what);

		if (r == 0)
			first = nobs;
		tally(r, d, sum, best);
	}
	return first;
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
	read = idle_polls(&s, "engine poll", reps, &sum, &best);
	idle_emitted = nobs;
	/* busy: every record moved since the last poll (the writer's
	 * update, not timed) */
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t d;

		for (unsigned i = 0; i < n; i++) {
			nsft_begin(&t.rec[i]);
			t.rec[i].rx_msgs++;
			t.rec[i].tx_msgs++;
			nsft_end(&t.rec[i]);
		}
		d = poll_cost(&s, "engine poll");
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

/* ---- the VMA/XLIO reader ---- */

#define VMA_PER_FILE 1000u      /* of MAX_STATS_FD_NUM (1,024) a process */

/* A child that stands for one engine process of uid: it holds what it
 * inherited (the file's sockets, the libvma mapping) until the pipe
 * closes. */
static pid_t vma_holder(const int p[2], uid_t uid)
{
	int ready[2];
	pid_t pid;
	char c = 0;

	if (pipe(ready) < 0 || (pid = fork()) < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		close(p[1]);
		close(ready[0]);
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(1);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		close(ready[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	/* the file is read once the holder runs as its user */
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("vma holder", "did not become its user");
	close(ready[0]);
	return pid;
}

static void vma(unsigned n, unsigned reps)
{
	const struct eng_variant *ev = &eng_vma;
	char dir[] = "/tmp/bench-vma.XXXXXX", exe[PATH_MAX], lib[PATH_MAX + 32], path[PATH_MAX + 64];
	struct flow_src s = { .ops = &flow_src_vma_ops };
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1 };
	unsigned nfiles = (n + VMA_PER_FILE - 1) / VMA_PER_FILE, read = 0, idle_emitted = 0;
	uint64_t best = UINT64_MAX, sum = 0, mbest = UINT64_MAX, msum = 0, verified = 0;
	size_t flen = 0, fbytes = 0;
	struct rlimit rl = { n + 256, n + 256 };
	void **blk = calloc(n, sizeof(*blk)), *h;
	pid_t *kids = calloc(nfiles, sizeof(*kids));
	void **shms = calloc(nfiles, sizeof(*shms));
	size_t *lens = calloc(nfiles, sizeof(*lens));
	int *fds = calloc(n, sizeof(*fds)), p[2];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct json_object *st;

	if (!blk || !kids || !shms || !lens || !fds || el <= 0 || !mkdtemp(dir))
		die("vma", "set-up failed");
	exe[el] = '\0';
	*strrchr(exe, '/') = '\0';
	/* the reader believes a file only from a process mapping a
	 * root-installed libvma.so* (collectors/flows/claimv.h) */
	snprintf(lib, sizeof(lib), "%s/libvma.so.9.8.84", exe);
	if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
		die(lib, dlerror());
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit", strerror(errno));
	if (pipe(p) < 0)
		die("pipe", strerror(errno));
	/* each file a user of its own, as the reader keeps at most
	 * VS_SOCKS_PER_UID sockets of one: its sockets made as that user
	 * (the socket's owner is the maker's fsuid, sock_alloc()), its file
	 * that user's, its holder running as that user */
	for (unsigned f = 0; f < nfiles; f++) {
		unsigned lo = f * VMA_PER_FILE, hi = lo + VMA_PER_FILE < n ? lo + VMA_PER_FILE : n;
		uid_t uid = 61000 + f;
		/* the file sized for the engine's stats_fd_num_max: its default
		 * (100), or as many as the file's sockets */
		unsigned fdn = hi - lo < 100 ? 100 : hi - lo;
		void *local = calloc(1, ev->stats_size), *shm;
		int fd;

		setfsuid(uid);
		for (unsigned i = lo; i < hi; i++) {
			struct sockaddr_in a = { .sin_family = AF_INET,
						 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

			fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
			if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0)
				die("socket", strerror(errno));
		}
		setfsuid(0);
		kids[f] = vma_holder(p, uid);
		snprintf(path, sizeof(path), "%s/%s.%d", dir, ev->file_prefix, (int)kids[f]);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
		flen = ev->shmem_size(fdn);
		fbytes += flen;
		if (!local || fd < 0 || ftruncate(fd, (off_t)flen) < 0 || fchown(fd, uid, uid) < 0)
			die(path, strerror(errno));
		shm = mmap(NULL, flen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (shm == MAP_FAILED)
			die("mmap", strerror(errno));
		shms[f] = shm;
		lens[f] = flen;
		ev->shmem_init(shm, fdn);
		for (unsigned i = lo; i < hi; i++) {
			struct sockaddr_in a;
			socklen_t al = sizeof(a);
			struct stat sst;
			struct eng_sock k = { .fd = fds[i], .socket_type = SOCK_DGRAM, .offloaded = 1 };

			if (getsockname(fds[i], (struct sockaddr *)&a, &al) < 0 || fstat(fds[i], &sst) < 0)
				die("getsockname", strerror(errno));
			k.inode = (uint32_t)sst.st_ino;
			k.laddr = a.sin_addr.s_addr;
			k.lport = a.sin_port;
			ev->stats_init(local, &k);
			ev->save_rx(local, ENG_OFFLOAD, 64, 0);
			ev->save_tx(local, ENG_OFFLOAD, 64, 0);
			if (!(blk[i] = ev->create_socket_block(shm)))
				die("vma", "no free socket block");
			memcpy(blk[i], local, ev->stats_size);
			close(fds[i]);          /* the holder has it */
		}
		free(local);
	}
	ctx.vma_dir = ctx.xlio_dir = dir;
	if (s.ops->open(&s, &ctx) < 0)
		die("vma source", s.err);
	/* idle: no block moves between polls (the first poll reads, checks
	 * the claims and emits them all; it is not counted) */
	read = idle_polls(&s, "vma poll", reps, &sum, &best);
	idle_emitted = nobs;
	/* moved: every block's counters moved since the last poll (the
	 * engine's copy, not timed) */
	for (unsigned r = 0; r <= reps; r++) {
		uint64_t d;

		for (unsigned i = 0; i < n; i++)
			ev->save_rx(blk[i], ENG_OFFLOAD, 64, 0);
		d = poll_cost(&s, "vma poll");
		tally(r, d, &msum, &mbest);
	}
	st = json_object_new_object();
	if (st && s.ops->status) {
		struct json_object *files, *f, *v;

		s.ops->status(&s, st);
		if (json_object_object_get_ex(st, "files", &files))
			for (size_t i = 0; i < json_object_array_length(files); i++)
				if ((f = json_object_array_get_idx(files, i)) &&
				    json_object_object_get_ex(f, "claims_verified", &v))
					verified += (uint64_t)json_object_get_int64(v);
	}
	if (read != n && st)
		fprintf(stderr, "bench_scale: vma: the reader's status: %s\n",
			json_object_to_json_string(st));
	json_object_put(st);
	if (read != n)
		fprintf(stderr, "bench_scale: vma: %u of %u sockets read, %llu claims verified\n",
			read, n, (unsigned long long)verified);
	printf("{\"what\":\"vma\",\"n\":%u,\"files\":%u,\"read\":%u,\"verified\":%llu,"
	       "\"idle_emitted\":%u,\"poll_us\":%.1f,\"poll_us_min\":%.1f,\"moved_us\":%.1f,"
	       "\"file_bytes_per_flow\":%.1f}\n", n, nfiles, read, (unsigned long long)verified,
	       idle_emitted, (double)sum / reps / 1e3, (double)best / 1e3,
	       (double)msum / reps / 1e3, (double)fbytes / n);
	s.ops->close(&s);
	close(p[1]);
	for (unsigned f = 0; f < nfiles; f++)
		waitpid(kids[f], NULL, 0);
	close(p[0]);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		fprintf(stderr, "bench_scale: %s failed\n", path);
	for (unsigned f = 0; f < nfiles; f++)
		munmap(shms[f], lens[f]);
	dlclose(h);
	free(shms);
	free(lens);
	free(blk);
	free(kids);
	free(fds);
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
	unsigned cap = 16384, ns;     /* the daemon's map (FT_DEFAULT_FLOWS) */
	uint64_t best = UINT64_MAX, sum = 0, t0;
	int ifindex = private_veth();

	while (cap < n + n / 4)         /* more than it holds: a larger one */
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
	       "\"poll_us_min\":%.1f,\"map_bytes_per_flow\":%.1f,\"map_bytes_per_slot\":%.1f,"
	       "\"fill_s\":%.2f}\n", n, nobs, cap, (double)sum / reps / 1e3, (double)best / 1e3,
	       (double)flowtrack_map_bytes(ft) / n, (double)flowtrack_map_bytes(ft) / cap,
	       (double)t0 / 1e9);
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
	else if (argc >= 4 && !strcmp(argv[1], "vma"))
		vma((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	else if (argc >= 2 && !strcmp(argv[1], "recorder"))
		recorder();
	else {
		fprintf(stderr, "usage: bench_scale engine N REPS | tracker N REPS | pkt REPS | detector N REPS [warm] | vma N REPS | recorder\n");
		return 2;
	}
	return 0;
}
