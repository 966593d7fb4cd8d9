/* bench_sweep: what one full counter sweep of a port costs, in CPU time,
 * for one way of doing it. run.sh runs the ways interleaved, several times,
 * and compares medians (the machines are shared: ratios, not absolutes).
 *
 *   bench_sweep ours-veth IF N          the daemon's sweep of a veth: the
 *                                       ethtool ioctl and stats64 over
 *                                       rtnetlink (its src_ops), recorder push
 *   bench_sweep floor-veth IF N         the same system calls, no processing
 *   bench_sweep ours-text FILE N        recorded `ethtool -S` text (src_text)
 *   bench_sweep floor-text FILE N       open, fstat, read to the end, close
 *   bench_sweep ours-sysfs ROOT DEV PORT N   RDMA hw_counters and counters
 *                                       from a sysfs tree (src_rdma)
 *   bench_sweep floor-sysfs ROOT DEV PORT N  fstat of the port directory and
 *                                       one pread per kept counter fd
 *   bench_sweep ours-host PROC SYS PIDS N   the host resources (src_host) of
 *                                       a recorded /proc (PROC: pressure,
 *                                       diskstats, PID/...) and /sys (SYS)
 *                                       tree, the processes PIDS (a,b,...)
 *                                       watched as flow owners
 *   bench_sweep spawn CMD N             what scripts do: popen(CMD) (a shell
 *                                       and the tools it runs) and read all
 *   bench_sweep scrape ADDR:PORT PID N  one HTTP GET /metrics of a
 *                                       node_exporter (PID) per sweep
 *
 * Prints one JSON object: mode, n, cpu_us (CPU time per sweep: ours, our
 * children's, and the exporter's for scrape), wall_us, counters, bytes. */
#include "collectors/counters/counters.h"
#include "collectors/counters/src_host.h"
#include "daemon/recorder.h"
#include "lib/log.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t children_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

/* utime + stime of a process, ns (clock ticks: run enough sweeps). */
static uint64_t proc_ns(int pid)
{
	char path[64], buf[2048], *p;
	unsigned long long ut = 0, st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

struct run {
	const char *mode;
	unsigned n, counters;
	uint64_t bytes;
	int exporter;           /* pid whose CPU counts too (scrape) */
};

static void report(const struct run *r, uint64_t cpu, uint64_t wall)
{
	printf("{\"mode\":\"%s\",\"n\":%u,\"cpu_us\":%.3f,\"wall_us\":%.3f,\"counters\":%u,"
	       "\"bytes\":%llu}\n", r->mode, r->n, (double)cpu / 1e3 / r->n,
	       (double)wall / 1e3 / r->n, r->counters, (unsigned long long)r->bytes);
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_sweep: %s: %s\n", what, why);
	exit(1);
}

/* ---- ours: the daemon's sources and recorder ---- */

static void ours(struct run *r, const struct src_ops **ops, unsigned nops, struct src_ctx *ctx)
{
	struct src s[REC_MAX_SRC];
	struct recorder *rec = rec_new(121, nops);
	uint64_t c0 = 0, w0 = 0;

	memset(s, 0, sizeof(s));
	for (unsigned k = 0; k < nops; k++) {
		s[k].ops = ops[k];
		if (ops[k]->open(&s[k], ctx) < 0)
			die(ops[k]->name, s[k].err);
	}
	for (unsigned i = 0; i <= r->n; i++) {
		struct clayout *lays[REC_MAX_SRC] = { 0 };
		const uint64_t *vals[REC_MAX_SRC] = { 0 };

		if (i == 1) {           /* the first sweep warms up */
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		for (unsigned k = 0; k < nops; k++)
			if (s[k].ops->read(&s[k], &lays[k], &vals[k]) < 0)
				die(ops[k]->name, s[k].err);
		rec_push(rec, i, i, lays, vals);
		if (i == 0)
			for (unsigned k = 0; k < nops; k++)
				r->counters += lays[k]->n;
	}
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, ns_of(CLOCK_MONOTONIC) - w0);
	for (unsigned k = 0; k < nops; k++)
		s[k].ops->close(&s[k]);
	rec_free(rec);
}

/* The host source of a recorded tree, PIDS watched as flow owners. */
static void ours_host(struct run *r, const char *proc, const char *sys, const char *pids)
{
	static struct host_opts o;
	struct src_host_ctx hc = { &o, sys };
	struct recorder *rec = rec_new(121, 1);
	int pid[HOST_MAX_PIDS];
	unsigned np = 0;
	uint64_t c0 = 0, w0 = 0;
	struct src s;

	snprintf(o.proc_root, sizeof(o.proc_root), "%s", proc);
	for (const char *q = pids; *q && np < HOST_MAX_PIDS; q += strcspn(q, ","), q += *q == ',')
		pid[np++] = atoi(q);
	memset(&s, 0, sizeof(s));
	if (src_host_open(&s, &hc) < 0)
		die("host", s.err);
	src_host_watch(&s, pid, np);
	for (unsigned i = 0; i <= r->n; i++) {
		struct clayout *lay = NULL;
		const uint64_t *vals = NULL;

		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		if (s.ops->read(&s, &lay, &vals) < 0)
			die("host", s.err);
		rec_push(rec, i, i, &lay, &vals);
		if (i == 0)
			r->counters = lay->n;
	}
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, ns_of(CLOCK_MONOTONIC) - w0);
	s.ops->close(&s);
	rec_free(rec);
}

/* ---- the floors: the same system calls, nothing done with the data ---- */

static void floor_veth(struct run *r, const char *ifname)
{
	struct {
		struct ethtool_sset_info h;
		uint32_t n;
	} ss;
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req;
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct ethtool_stats *st;
	struct ifreq ifr;
	static char buf[65536];
	uint64_t c0 = 0, w0 = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	unsigned n;

	if (fd < 0 || nl < 0 || bind(nl, (struct sockaddr *)&k, sizeof(k)) < 0)
		die("sockets", strerror(errno));
	setsockopt(nl, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	memset(&ss, 0, sizeof(ss));
	ss.h.cmd = ETHTOOL_GSSET_INFO;
	ss.h.sset_mask = 1ull << ETH_SS_STATS;
	ifr.ifr_data = (void *)&ss;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		die("ETHTOOL_GSSET_INFO", strerror(errno));
	n = ss.n;
	st = calloc(1, sizeof(*st) + n * 8);
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETLINK;
	req.i.ifi_family = AF_UNSPEC;
	req.i.ifi_index = (int)if_nametoindex(ifname);
	for (unsigned i = 0; i <= r->n; i++) {
		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		ss.h.sset_mask = 1ull << ETH_SS_STATS;
		ifr.ifr_data = (void *)&ss;
		ioctl(fd, SIOCETHTOOL, &ifr);
		st->cmd = ETHTOOL_GSTATS;
		st->n_stats = n;
		ifr.ifr_data = (void *)st;
		ioctl(fd, SIOCETHTOOL, &ifr);
		/* as lib/nl asks: the request with an ack, the reply, the ack */
		req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		req.h.nlmsg_seq = i + 1;
		sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k));
		recv(nl, buf, sizeof(buf), 0);
		recv(nl, buf, sizeof(buf), 0);
	}
	r->counters = n;
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, ns_of(CLOCK_MONOTONIC) - w0);
	free(st);
	close(fd);
	close(nl);
}

static void floor_text(struct run *r, const char *path)
{
	static char buf[1 << 20];
	uint64_t c0 = 0, w0 = 0;

	for (unsigned i = 0; i <= r->n; i++) {
		struct stat st;
		int fd;

		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			die(path, strerror(errno));
		fstat(fd, &st);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		r->bytes = (uint64_t)st.st_size;
	}
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, ns_of(CLOCK_MONOTONIC) - w0);
}

static int open_dir_files(const char *dir, int *fds, unsigned max, unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)) && *n < max) {
		char p[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		fds[*n] = open(p, O_RDONLY | O_CLOEXEC);
		if (fds[*n] >= 0)
			(*n)++;
	}
	closedir(d);
	return 0;
}

static void floor_sysfs(struct run *r, const char *root, const char *dev, const char *port)
{
	char base[4096], sub[4200], buf[64];
	int fds[1024], dfd;
	unsigned n = 0;
	uint64_t c0 = 0, w0 = 0;

	snprintf(base, sizeof(base), "%s/sys/class/infiniband/%s/ports/%s", root, dev, port);
	dfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die(base, strerror(errno));
	snprintf(sub, sizeof(sub), "%s/hw_counters", base);
	open_dir_files(sub, fds, 1024, &n);
	snprintf(sub, sizeof(sub), "%s/counters", base);
	open_dir_files(sub, fds, 1024, &n);
	for (unsigned i = 0; i <= r->n; i++) {
		struct stat st;

		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		fstat(dfd, &st);
		for (unsigned k = 0; k < n; k++)
			if (pread(fds[k], buf, sizeof(buf), 0) < 0)
				die("pread", strerror(errno));
	}
	r->counters = n;
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, ns_of(CLOCK_MONOTONIC) - w0);
	for (unsigned k = 0; k < n; k++)
		close(fds[k]);
	close(dfd);
}

/* ---- the ways people do it today ---- */

static void spawn(struct run *r, const char *cmd)
{
	static char buf[1 << 16];
	uint64_t c0 = 0, w0 = 0, k0 = 0;

	for (unsigned i = 0; i <= r->n; i++) {
		uint64_t got = 0;
		size_t m;
		FILE *p;

		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			k0 = children_ns();
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		p = popen(cmd, "r");
		if (!p)
			die(cmd, strerror(errno));
		while ((m = fread(buf, 1, sizeof(buf), p)) > 0)
			got += m;
		if (pclose(p) != 0)
			die(cmd, "failed");
		r->bytes = got;
	}
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0 + children_ns() - k0,
	       ns_of(CLOCK_MONOTONIC) - w0);
}

static void scrape(struct run *r, const char *addr, int pid)
{
	static char buf[1 << 16];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64], req[256], *colon;
	uint64_t c0 = 0, w0 = 0, e0 = 0;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strchr(host, ':');
	if (!colon)
		die(addr, "want ADDR:PORT");
	*colon = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	inet_pton(AF_INET, host, &sa.sin_addr);
	snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		 addr);
	for (unsigned i = 0; i <= r->n; i++) {
		uint64_t got = 0;
		ssize_t m;
		int fd;

		if (i == 1) {
			c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
			e0 = proc_ns(pid);
			w0 = ns_of(CLOCK_MONOTONIC);
		}
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die(addr, strerror(errno));
		if (write(fd, req, strlen(req)) < 0)
			die(addr, strerror(errno));
		while ((m = read(fd, buf, sizeof(buf))) > 0)
			got += (uint64_t)m;
		close(fd);
		r->bytes = got;
	}
	/* the exporter's ticks settle a little after the last reply */
	usleep(20000);
	report(r, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0 + proc_ns(pid) - e0,
	       ns_of(CLOCK_MONOTONIC) - w0);
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	struct src_ctx ctx = { .port_name = "bench", .netns_fd = -1, .sysfs_root = "" };

	log_set_level(LOG_ERR);
	if (argc < 4) {
		fprintf(stderr, "usage: see bench_sweep.c\n");
		return 2;
	}
	r.mode = argv[1];
	r.n = (unsigned)atoi(argv[argc - 1]);
	if (!r.n)
		die("N", "must be > 0");
	if (!strcmp(r.mode, "ours-veth")) {
		const struct src_ops *ops[2] = { &src_ethtool_ops, &src_netdev_ops };

		ctx.ifname = argv[2];
		ctx.ifindex = (int)if_nametoindex(argv[2]);
		ours(&r, ops, 2, &ctx);
	} else if (!strcmp(r.mode, "floor-veth")) {
		floor_veth(&r, argv[2]);
	} else if (!strcmp(r.mode, "ours-text")) {
		const struct src_ops *ops[1] = { &src_text_ops };

		ctx.text_file = argv[2];
		ours(&r, ops, 1, &ctx);
	} else if (!strcmp(r.mode, "floor-text")) {
		floor_text(&r, argv[2]);
	} else if (!strcmp(r.mode, "ours-sysfs") && argc == 6) {
		const struct src_ops *ops[1] = { &src_rdma_ops };

		ctx.sysfs_root = argv[2];
		ctx.rdma_dev = argv[3];
		ctx.rdma_port = (unsigned)atoi(argv[4]);
		ours(&r, ops, 1, &ctx);
	} else if (!strcmp(r.mode, "floor-sysfs") && argc == 6) {
		floor_sysfs(&r, argv[2], argv[3], argv[4]);
	} else if (!strcmp(r.mode, "ours-host") && argc == 6) {
		ours_host(&r, argv[2], argv[3], argv[4]);
	} else if (!strcmp(r.mode, "spawn")) {
		spawn(&r, argv[2]);
	} else if (!strcmp(r.mode, "scrape") && argc == 5) {
		scrape(&r, argv[2], atoi(argv[3]));
	} else {
		die(r.mode, "unknown mode or arguments");
	}
	return 0;
}
