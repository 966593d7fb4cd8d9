/* emuport: an emulated ConnectX-4 Lx port pair for tests and the demo.
 *
 * Loads tests/emu/emu_port.bpf.c on the veth of each port (first on the tcx
 * ingress and egress hooks, or clsact on kernels without tcx: emu_bpf.c,
 * inside the port's namespace), publishes the counters as
 * `ethtool -S` / `ethtool -i` text (atomic replace, 100 times a second) and
 * an RDMA sysfs tree (counter files rewritten in place when they change, so
 * a reader may keep them open and pread at 0 as on sysfs) under OUTDIR,
 * clears a port's wedges when its receive filters are reprogrammed (a real
 * promiscuous transition, seen through rtnetlink and modelled as the mlx5
 * driver applies it: rxmode.h), injects firmware-consumed LLDP frames, and
 * takes line commands on OUTDIR/ctl.sock.
 *
 *   emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] [--port ...]
 *               [--fw-frames] [--rx-mode-delay MS|instant] [--rdma-port N]
 *   emuport ctl OUTDIR COMMAND...
 *
 * --rdma-port N: data frames to or from TCP or UDP port N are the emulated
 * RDMA transport (as RoCEv2's UDP 4791 always is): only they move the RDMA
 * counters (hw_counters/rx_write_requests, counters/port_rcv_*), as on a
 * real card, where TCP traffic moves none of them.
 *
 * --rx-mode-delay MS: the driver model.  Each link change queues the
 * driver's set_rx_mode work (coalesced while it is pending); it runs MS
 * milliseconds later (0 allowed, fractions to the microsecond), reads the
 * promiscuity count at that moment and clears the wedges only when
 * "count > 0" differs from the state it applied last.  Without the option
 * (or with "instant") every link message whose "count > 0" differs from
 * the previous message's clears the wedges at once: the former behaviour,
 * kept as the default until the daemon's reprogram holds its state long
 * enough for the driver (issue #10).
 *
 * The files: emuport.h names them (this one: main, options, set-up and
 * teardown, the event loop, the firmware LLDP frames). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/if_packet.h>

#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "emuport.h"

#define TICK_NS 10000000L	/* publish every 10 ms */
#define LLDP_TICKS 100		/* one LLDP frame a second */

void logx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("emuport: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int libbpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG)
		return 0;
	fputs("emuport: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

struct port *find_port(struct emu *e, const char *name)
{
	for (int i = 0; name && i < e->np; i++)
		if (!strcmp(e->p[i].name, name))
			return &e->p[i];
	return NULL;
}

/* ---- firmware-consumed LLDP frames ---- */

int fw_open(struct emu *e, struct port *p)
{
	struct port *q;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(EMU_ETH_P_LLDP) };
	struct ifreq ifr = { 0 };
	int saved;

	if (p->pkt_fd >= 0)
		return 0;
	if (p->peer < 0) {
		errno = ENODEV;
		return -1;
	}
	q = &e->p[p->peer];
	if (ns_enter(q, &saved) < 0)
		return -1;
	p->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	ns_leave(saved);
	if (p->pkt_fd < 0)
		return -1;
	sll.sll_ifindex = q->ifindex;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", q->ifname);
	if (bind(p->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    ioctl(p->pkt_fd, SIOCGIFHWADDR, &ifr) < 0) {
		close(p->pkt_fd);
		p->pkt_fd = -1;
		return -1;
	}
	memcpy(p->peer_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

static void fw_send(struct emu *e, struct port *p)
{
	static const unsigned char dst[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	unsigned char f[64] = { 0 };
	struct port *q = &e->p[p->peer];
	size_t n = 0, l = strlen(q->ifname);

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + 6, p->peer_mac, ETH_ALEN);
	f[12] = 0x88, f[13] = 0xcc;
	n = 14;
	f[n++] = 0x02, f[n++] = 7, f[n++] = 4;		/* chassis id: MAC */
	memcpy(f + n, p->peer_mac, ETH_ALEN), n += ETH_ALEN;
	f[n++] = 0x04, f[n++] = (unsigned char)(1 + l), f[n++] = 5;	/* port id: ifname */
	memcpy(f + n, q->ifname, l), n += l;
	f[n++] = 0x06, f[n++] = 2, f[n++] = 0, f[n++] = 120;	/* ttl */
	n += 2;						/* end */
	if (n < 60)
		n = 60;
	if (send(p->pkt_fd, f, n, 0) == (ssize_t)n)
		p->fw_injected++;
	else
		logx("port %s: inject LLDP frame from %s: %s", p->name, q->ifname, strerror(errno));
}

/* ---- run ---- */

static int parse_port(struct emu *e, const char *arg)
{
	struct port *p = &e->p[e->np];
	char *f[4] = { 0 }, *save = NULL, spec[256];
	int n = 0;

	if (e->np >= MAX_PORTS || snprintf(spec, sizeof(spec), "%s", arg) >= (int)sizeof(spec)) {
		logx("--port '%.64s': at most %d ports of up to 255 characters", arg, MAX_PORTS);
		return -1;
	}
	for (char *t = strtok_r(spec, ":", &save); t && n < 4; t = strtok_r(NULL, ":", &save))
		f[n++] = t;
	if (n < 3 || strtok_r(NULL, ":", &save) || strlen(f[0]) >= sizeof(p->name) ||
	    strlen(f[1]) >= sizeof(p->netns) || strlen(f[2]) >= sizeof(p->ifname) ||
	    (f[3] && strlen(f[3]) >= sizeof(p->peer_name)) ||
	    strspn(f[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
		    strlen(f[0]) || strchr(f[1], '/')) {
		logx("bad --port '%s': want NAME:NETNS:IFNAME[:PEER], NAME of [A-Za-z0-9_-]",
		     arg);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", f[0]);
	snprintf(p->netns, sizeof(p->netns), "%s", f[1]);
	snprintf(p->ifname, sizeof(p->ifname), "%s", f[2]);
	if (f[3])
		snprintf(p->peer_name, sizeof(p->peer_name), "%s", f[3]);
	p->k = e->np++;
	p->nsfd = p->pkt_fd = -1;
	memset(p->hw_fd, 0xff, sizeof(p->hw_fd));
	memset(p->ib_fd, 0xff, sizeof(p->ib_fd));
	p->peer = -1;
	p->wfd = -1;
	p->link[0] = p->link[1] = -1;
	return 0;
}

static int epoll_add(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int run_setup(struct emu *e, int fwframes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct itimerspec its = { { 0, TICK_NS }, { 0, TICK_NS } };
	sigset_t ss;

	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];
		struct link_state ls;
		char path[128];

		if (find_port(e, p->name) != p) {
			logx("port name '%s' given twice", p->name);
			return -1;
		}
		p->peer = p->peer_name[0] ? (int)(find_port(e, p->peer_name) ?
						  find_port(e, p->peer_name) - e->p : -2)
				    : e->np == 2 ? 1 - i : -1;
		if (p->peer == -2 || p->peer == i) {
			logx("port %s: bad peer '%s'", p->name, p->peer_name);
			return -1;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", p->netns);
		if ((p->nsfd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			logx("port %s: open netns %s: %s", p->name, path, strerror(errno));
			return -1;
		}
		if (port_attach(p) < 0 || publish_static(e, p) < 0)
			return -1;
		p->cfg.every = 10;
		p->cfg.rdma_port = e->rdma_port;
		rxm_init(&p->rx, e->rx_deferred, e->rx_delay_ns);
		p->wfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (cfg_push(p) < 0 || link_read(p, &ls) < 0 || p->wfd < 0 ||
		    epoll_add(e->ep, mnl_socket_get_fd(p->nl), (uint64_t)(4 + i)) < 0 ||
		    epoll_add(e->ep, p->wfd, (uint64_t)(4 + MAX_PORTS + i)) < 0) {
			logx("port %s: set up: %s", p->name, strerror(errno));
			return -1;
		}
		/* the state the driver applied when the port opened */
		rxm_link(&p->rx, ls.promiscuity, ls.flag, mono_ns());
		logx("port %s: rx-mode model %s, delay %.3f ms; promiscuity %u, flag %s, "
		     "applied %s", p->name, p->rx.deferred ? "deferred" : "instant",
		     (double)p->rx.delay_ns / 1e6, ls.promiscuity, onoff(ls.flag),
		     onoff(p->rx.applied));
		nl_read(p);
	}
	for (int i = 0; fwframes && i < e->np; i++) {
		if (fw_open(e, &e->p[i]) < 0) {
			logx("port %s: LLDP injection socket: %s", e->p[i].name, strerror(errno));
			return -1;
		}
		e->p[i].fwframes = 1;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	e->sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", e->dir) >=
	    sizeof(sa.sun_path)) {
		logx("control socket path under %s is too long", e->dir);
		return -1;
	}
	unlink(sa.sun_path);
	e->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (e->sfd < 0 || e->tfd < 0 || e->lfd < 0 ||
	    bind(e->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(e->lfd, 16) < 0 ||
	    timerfd_settime(e->tfd, 0, &its, NULL) < 0 || epoll_add(e->ep, e->sfd, 1) < 0 ||
	    epoll_add(e->ep, e->tfd, 2) < 0 || epoll_add(e->ep, e->lfd, 3) < 0) {
		logx("set up event loop and %s: %s", sa.sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

static void run_teardown(struct emu *e)
{
	char path[PATH_MAX];

	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];

		if (p->nsfd >= 0)
			port_detach(p);
		if (p->nl)
			mnl_socket_close(p->nl);
		if (p->nlq)
			mnl_socket_close(p->nlq);
		if (p->wfd >= 0)
			close(p->wfd);
		if (p->pkt_fd >= 0)
			close(p->pkt_fd);
		port_unload(p);
		if (p->nsfd >= 0)
			close(p->nsfd);
		for (size_t j = 0; j < N_HW; j++)
			if (p->hw_fd[j] >= 0)
				close(p->hw_fd[j]);
		for (size_t j = 0; j < N_IB; j++)
			if (p->ib_fd[j] >= 0)
				close(p->ib_fd[j]);
		snprintf(path, sizeof(path), "%s/.%s.ethtool.tmp", e->dir, p->name);
		unlink(path);
		snprintf(path, sizeof(path), "%s/.%s.info.tmp", e->dir, p->name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/ctl.sock", e->dir);
	if (e->lfd >= 0)
		unlink(path);
}

static int run(int argc, char **argv)
{
	static struct emu e;
	int fwframes = 0, rc = 1, stop = 0;

	e.ep = e.tfd = e.sfd = e.lfd = -1;
	e.rnd = (uint32_t)getpid() | 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			if (snprintf(e.dir, sizeof(e.dir), "%s", argv[++i]) >= (int)sizeof(e.dir))
				goto usage;
		} else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (parse_port(&e, argv[++i]) < 0)
				return 2;
		} else if (!strcmp(argv[i], "--fw-frames")) {
			fwframes = 1;
		} else if (!strcmp(argv[i], "--rdma-port") && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);

			if (*end || end == argv[i] || v < 1 || v > 65535) {
				logx("--rdma-port '%s': want a port 1..65535", argv[i]);
				return 2;
			}
			e.rdma_port = htons((uint16_t)v);
		} else if (!strcmp(argv[i], "--rx-mode-delay") && i + 1 < argc) {
			if (parse_rx_delay(argv[++i], &e.rx_deferred, &e.rx_delay_ns) < 0) {
				logx("--rx-mode-delay '%s': want instant or milliseconds "
				     "0..60000 (up to 3 decimals)", argv[i]);
				return 2;
			}
		} else {
			goto usage;
		}
	}
	if (!e.dir[0] || e.np == 0)
		goto usage;
	libbpf_set_print(libbpf_log);
	e.ncpus = libbpf_num_possible_cpus();
	e.ep = epoll_create1(EPOLL_CLOEXEC);
	if (e.ncpus <= 0 || e.ep < 0 || mkdirs(e.dir) < 0) {
		logx("set up %s: %s", e.dir, strerror(errno));
		return 1;
	}
	if (run_setup(&e, fwframes) < 0)
		goto out;
	for (int i = 0; i < e.np; i++)
		publish(&e, &e.p[i]);
	logx("running: %d port(s), files in %s", e.np, e.dir);
	while (!stop) {
		struct epoll_event ev[8];
		int n = epoll_wait(e.ep, ev, 8, -1);

		if (n < 0 && errno != EINTR) {
			logx("epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64, x;

			if (tag == 1) {
				stop = 1;
			} else if (tag == 2) {
				if (read(e.tfd, &x, sizeof(x)) != sizeof(x))
					continue;
				e.ticks++;
				for (int j = 0; j < e.np; j++) {
					if (e.p[j].fwframes && e.ticks % LLDP_TICKS == 0)
						fw_send(&e, &e.p[j]);
					pause_tick(&e, &e.p[j]);
					publish(&e, &e.p[j]);
				}
			} else if (tag == 3) {
				ctl_accept(&e);
			} else if (tag >= 4 && tag < 4 + (uint64_t)e.np) {
				nl_read(&e.p[tag - 4]);
			} else if (tag >= 4 + MAX_PORTS && tag < 4 + MAX_PORTS + (uint64_t)e.np) {
				struct port *p = &e.p[tag - 4 - MAX_PORTS];

				if (read(p->wfd, &x, sizeof(x)) == sizeof(x))
					rx_work_if_due(p);
			}
		}
	}
	rc = 0;
	logx("stopping");
out:
	run_teardown(&e);
	return rc;
usage:
	fprintf(stderr, "usage: emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] "
		"[--port ...] [--fw-frames] [--rx-mode-delay MS|instant] [--rdma-port N]\n"
		"       emuport ctl OUTDIR COMMAND...\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "ctl"))
		return ctl_client(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: emuport run --dir OUTDIR --port NAME:NETNS:IFNAME[:PEER] "
		"[--port ...] [--fw-frames] [--rx-mode-delay MS|instant] [--rdma-port N]\n"
		"       emuport ctl OUTDIR COMMAND...\n"
		"commands: wedge PORT PROTO SADDR SPORT DADDR DPORT [after N] [limit N] | unwedge PORT "
		"[FLOW] | mode PORT healthy|buffer-drop [N]|steer-miss [all|FLOW]|fabric-fault "
		"[traffic|always] | fwframes PORT on|off | rxmode PORT [instant|DELAY_MS] | mtu PORT N|off | pause PORT MS | "
		"status [PORT]\n");
	return 2;
}
