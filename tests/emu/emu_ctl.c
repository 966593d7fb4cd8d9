/* emu_ctl: the control channel, one command a connection on OUTDIR/ctl.sock
 * (`emuport ctl OUTDIR COMMAND...` is its client): wedge and unwedge flows,
 * the port's mode (healthy, buffer-drop, steer-miss, fabric-fault), the
 * firmware LLDP frames, the rx-mode model, and status (key=value pairs and
 * counter lines that the tests parse).  The reply starts "ok" or "error:". */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "emuport.h"

static const char *const mode_names[] = { "healthy", "buffer-drop", "steer-miss",
					  "fabric-fault" };

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* PROTO SADDR SPORT DADDR DPORT from av[0..4] */
static int parse_flow(char **av, int ac, struct emu_flow *f, FILE *out)
{
	struct in_addr a;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	if (ac < 5) {
		fprintf(out, "error: expected PROTO SADDR SPORT DADDR DPORT\n");
		return -1;
	}
	if (!strcmp(av[0], "tcp"))
		f->proto = 6;
	else if (!strcmp(av[0], "udp"))
		f->proto = 17;
	else {
		fprintf(out, "error: protocol '%s' is not tcp or udp\n", av[0]);
		return -1;
	}
	for (int i = 1; i <= 3; i += 2) {
		if (inet_pton(AF_INET, av[i], &a) != 1) {
			fprintf(out, "error: '%s' is not an IPv4 address\n", av[i]);
			return -1;
		}
		if (parse_u64(av[i + 1], 65535, &v) < 0) {
			fprintf(out, "error: port '%s' is not 0..65535\n", av[i + 1]);
			return -1;
		}
		if (i == 1)
			f->saddr = a.s_addr, f->sport = htons((uint16_t)v);
		else
			f->daddr = a.s_addr, f->dport = htons((uint16_t)v);
	}
	return 0;
}

static void flow_print(FILE *out, const struct emu_flow *f)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &f->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &f->daddr, d, sizeof(d));
	fprintf(out, "%s %s:%u>%s:%u", f->proto == 6 ? "tcp" : "udp", s, ntohs(f->sport),
		d, ntohs(f->dport));
}

static const char *const ec_names[EC_NUM] = {
	"rx_packets_phy", "rx_bytes_phy", "rx_multicast_phy", "rx_broadcast_phy",
	"rx_vport_unicast_packets", "rx_vport_unicast_bytes",
	"rx_vport_multicast_packets", "rx_vport_multicast_bytes",
	"rx_vport_broadcast_packets", "rx_vport_broadcast_bytes",
	"rx_packets", "rx_bytes", "rx_out_of_buffer", "rx_discards_phy",
	"rx_steer_missed_packets", "wedge_drops", "fw_frames_consumed",
	"rx_data_packets", "rx_data_bytes",
	"tx_packets_phy", "tx_bytes_phy", "tx_multicast_phy", "tx_broadcast_phy",
	"tx_vport_unicast_packets", "tx_vport_unicast_bytes",
	"tx_vport_multicast_packets", "tx_vport_multicast_bytes",
	"tx_vport_broadcast_packets", "tx_vport_broadcast_bytes",
	"tx_data_packets", "tx_data_bytes", "buffer_seq",
	"rx_rdma_packets", "rx_rdma_bytes", "tx_rdma_packets", "tx_rdma_bytes",
	"rx_oversize_pkts_phy", "rx_64_bytes_phy", "rx_65_to_127_bytes_phy",
	"rx_128_to_255_bytes_phy", "rx_256_to_511_bytes_phy", "rx_512_to_1023_bytes_phy",
	"rx_1024_to_1518_bytes_phy", "rx_1519_to_2047_bytes_phy", "rx_2048_to_4095_bytes_phy",
	"rx_4096_to_8191_bytes_phy", "rx_8192_to_10239_bytes_phy",
	"tx_too_long_for_peer", "tx_peer_64_bytes", "tx_peer_65_to_127_bytes",
	"tx_peer_128_to_255_bytes", "tx_peer_256_to_511_bytes", "tx_peer_512_to_1023_bytes",
	"tx_peer_1024_to_1518_bytes", "tx_peer_1519_to_2047_bytes", "tx_peer_2048_to_4095_bytes",
	"tx_peer_4096_to_8191_bytes", "tx_peer_8192_to_10239_bytes",
};
_Static_assert(sizeof(ec_names) / sizeof(ec_names[0]) == EC_NUM && EC_TXP_B10239 == EC_NUM - 1,
	       "ec_names names every counter slot (emu.h)");

/* The driver model's state, as key=value pairs (tests parse them). */
static void rx_print(FILE *out, const struct port *p)
{
	const struct rxm *m = &p->rx;

	fprintf(out, "rx_mode=%s rx_mode_delay_ms=%.3f promiscuity=%u promisc_flag=%s "
		"dev_promisc=%s promisc_applied=%s work_pending=%d link_events=%lu "
		"crossings=%lu work_queued=%lu work_coalesced=%lu work_runs=%lu "
		"rx_transitions=%lu wedges_cleared=%lu",
		m->deferred ? "deferred" : "instant", (double)m->delay_ns / 1e6, m->promiscuity,
		onoff(m->flag), onoff(m->dev_promisc), onoff(m->applied), m->pending, m->events,
		m->crossings, m->queued, m->coalesced, m->runs, m->transitions, p->wedges_cleared);
}

/* rxmode PORT: the model's state and its last work runs, oldest first. */
static void rx_status(FILE *out, const struct port *p)
{
	const struct rxm *m = &p->rx;
	unsigned long first = m->runs > RXM_RUNS ? m->runs - RXM_RUNS : 0;

	fprintf(out, "ok\nrxmode %s ", p->name);
	rx_print(out, p);
	fputc('\n', out);
	for (unsigned long i = first; i < m->runs; i++) {
		const struct rxm_run *r = &m->last[i % RXM_RUNS];

		fprintf(out, "run %s %lu at=%.6f queued=%.6f promiscuity=%u flag=%s reading=%s "
			"applied_before=%s changed=%u coalesced=%u\n", p->name, i + 1,
			(double)r->at_ns / 1e9, (double)r->queued_ns / 1e9, r->promiscuity,
			onoff(r->flag), onoff(r->reading), onoff(r->applied_before), r->changed,
			r->coalesced);
	}
}

/* "instant", or a delay in milliseconds with up to 3 decimals, 0..60000 */
int parse_rx_delay(const char *s, int *deferred, uint64_t *ns)
{
	uint64_t ms = 0, frac = 0;
	int nd = 0;
	const char *c = s;

	if (!strcmp(s, "instant")) {
		*deferred = 0;
		*ns = 0;
		return 0;
	}
	if (*c < '0' || *c > '9')
		return -1;
	for (; *c >= '0' && *c <= '9'; c++)
		if ((ms = ms * 10 + (uint64_t)(*c - '0')) > 60000)
			return -1;
	if (*c == '.')
		for (c++; *c >= '0' && *c <= '9' && nd < 3; c++, nd++)
			frac = frac * 10 + (uint64_t)(*c - '0');
	if (*c || (ms == 60000 && frac))
		return -1;
	while (nd++ < 3)
		frac *= 10;
	*deferred = 1;
	*ns = ms * 1000000ull + frac * 1000ull;
	return 0;
}

static void status(struct emu *e, struct port *only, FILE *out)
{
	uint64_t v[X_NVALS];

	fprintf(out, "ok\n");
	for (int i = 0; i < e->np; i++) {
		struct port *p = &e->p[i];
		int fd = wedges_fd(p);
		struct emu_flow key, next;
		struct emu_wedge w;
		int first = 1, n = 0;

		if (only && only != p)
			continue;
		fprintf(out, "port %s netns=%s ifname=%s ifindex=%d rdma=mlx5_%d mode=%s",
			p->name, p->netns, p->ifname, p->ifindex, p->k, mode_names[p->cfg.mode]);
		if (p->cfg.mode == EMU_BUFFER_DROP)
			fprintf(out, " every=%u", p->cfg.every);
		fprintf(out, " fwframes=%s promisc=%d reprograms=%lu fw_frames_injected=%" PRIu64,
			p->fwframes ? "on" : "off", p->rx.known ? p->rx.dev_promisc : -1,
			p->rx.transitions, p->fw_injected);
		fputc(' ', out);
		rx_print(out, p);
		fputc('\n', out);
		while (n++ < 4 * EMU_MAX_WEDGES &&
		       bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
			first = 0;
			key = next;
			if (bpf_map_lookup_elem(fd, &key, &w) < 0)
				continue;
			fprintf(out, "wedge %s ", p->name);
			flow_print(out, &key);
			fprintf(out, " after=%llu passed=%llu dropped=%llu limit=%llu\n",
				(unsigned long long)w.after, (unsigned long long)w.passed,
				(unsigned long long)w.dropped, (unsigned long long)w.limit);
		}
		if (read_counters(e, p, v) < 0)
			continue;
		for (int c = 0; c < EC_NUM; c++)
			fprintf(out, "%s.%s %" PRIu64 "\n", p->name, ec_names[c], v[c]);
		fprintf(out, "%s.fw_frames_injected %" PRIu64 "\n", p->name, p->fw_injected);
	}
}

static void command(struct emu *e, char *line, FILE *out)
{
	char *av[16], *save = NULL, *tok;
	int ac = 0;
	struct port *p;
	struct emu_flow f;
	uint64_t v;

	for (tok = strtok_r(line, " \t\r\n", &save); tok && ac < 16;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		av[ac++] = tok;
	if (ac == 0) {
		fprintf(out, "error: empty command\n");
		return;
	}
	if (!strcmp(av[0], "status")) {
		p = ac > 1 ? find_port(e, av[1]) : NULL;
		if (ac > 1 && !p)
			fprintf(out, "error: no port '%s'\n", av[1]);
		else
			status(e, p, out);
		return;
	}
	if (strcmp(av[0], "wedge") && strcmp(av[0], "unwedge") && strcmp(av[0], "mode") &&
	    strcmp(av[0], "fwframes") && strcmp(av[0], "rxmode") && strcmp(av[0], "mtu") &&
	    strcmp(av[0], "pause")) {
		fprintf(out, "error: unknown command '%s'\n", av[0]);
		return;
	}
	if (ac < 2 || !(p = find_port(e, av[1]))) {
		fprintf(out, "error: %s: no port '%s'\n", av[0], ac > 1 ? av[1] : "");
		return;
	}
	if (!strcmp(av[0], "wedge")) {
		struct emu_wedge w = { 0 };

		if (parse_flow(av + 2, ac - 2, &f, out) < 0)
			return;
		for (int i = 7; i < ac; i += 2) {
			if (i + 1 < ac && !strcmp(av[i], "after") &&
			    parse_u64(av[i + 1], UINT32_MAX, &v) == 0)
				w.after = v;
			else if (i + 1 < ac && !strcmp(av[i], "limit") &&
				 parse_u64(av[i + 1], UINT32_MAX, &v) == 0 && v > 0)
				w.limit = v;
			else {
				fprintf(out, "error: wedge PORT PROTO SADDR SPORT DADDR DPORT "
					"[after N] [limit N]: bad '%s'\n", av[i]);
				return;
			}
		}
		if (wedge_set(p, &f, &w) < 0)
			fprintf(out, "error: wedge on %s: %s\n", p->name, strerror(errno));
		else
			fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "unwedge")) {
		if (ac == 2) {
			fprintf(out, "ok %d cleared\n", clear_wedges(p));
		} else if (parse_flow(av + 2, ac - 2, &f, out) == 0) {
			if (wedge_del(p, &f) < 0)
				fprintf(out, "error: no such wedge on %s\n", p->name);
			else
				fprintf(out, "ok\n");
		}
	} else if (!strcmp(av[0], "mode") && ac >= 3) {
		struct emu_cfg c = { .every = 10 };
		int fa = 0, m;

		for (m = 0; m < 4 && strcmp(av[2], mode_names[m]); m++)
			;
		c.mode = (uint32_t)m;
		if (m == EMU_HEALTHY && ac == 3) {
			;
		} else if (m == EMU_BUFFER_DROP && ac <= 4) {
			if (ac == 4 && parse_u64(av[3], 1000000, &v) < 0) {
				fprintf(out, "error: buffer-drop N: '%s' is not 1..1000000\n", av[3]);
				return;
			}
			c.every = ac == 4 ? (uint32_t)v : 10;
			if (c.every == 0) {
				fprintf(out, "error: buffer-drop N must be at least 1\n");
				return;
			}
		} else if (m == EMU_STEER_MISS && (ac == 3 || (ac == 4 && !strcmp(av[3], "all")))) {
			c.steer_all = 1;
		} else if (m == EMU_STEER_MISS) {
			if (parse_flow(av + 3, ac - 3, &c.steer, out) < 0)
				return;
		} else if (m == EMU_FABRIC_FAULT && (ac == 3 || (ac == 4 &&
			   (!strcmp(av[3], "traffic") || !strcmp(av[3], "always"))))) {
			fa = ac == 4 && !strcmp(av[3], "always");
		} else {
			fprintf(out, "error: mode PORT healthy | buffer-drop [N] | steer-miss "
				"[all | PROTO SADDR SPORT DADDR DPORT] | fabric-fault [traffic|always]\n");
			return;
		}
		c.rdma_port = p->cfg.rdma_port;        /* the transport stays */
		c.mtu = p->cfg.mtu;                    /* and the port's MTU */
		c.peer_mtu = p->cfg.peer_mtu;
		p->cfg = c;
		p->fault_always = fa;
		if (cfg_push(p) < 0)
			fprintf(out, "error: mode on %s: %s\n", p->name, strerror(errno));
		else
			fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "pause") && ac == 3) {
		/* the port's peer pauses it (emu_pause.c) */
		char err[256];

		if (parse_u64(av[2], 60000, &v) < 0 || v == 0) {
			fprintf(out, "error: pause PORT MS (1..60000): '%s'\n", av[2]);
			return;
		}
		if (pause_start(e, p, v, err, sizeof(err)) < 0)
			fprintf(out, "error: pause on %s: %s\n", p->name, err);
		else
			fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "mtu") && ac == 3) {
		/* the port's MTU (emu.h emu_cfg.mtu): frames longer are the
		 * MAC's "too long" (rx_oversize_pkts_phy), dropped there */
		if (!strcmp(av[2], "off")) {
			v = 0;
		} else if (parse_u64(av[2], 65535, &v) < 0 || v < 68) {
			fprintf(out, "error: mtu PORT 68..65535 | off: '%s'\n", av[2]);
			return;
		}
		p->cfg.mtu = (uint32_t)v;
		if (cfg_push(p) < 0) {
			fprintf(out, "error: mtu on %s: %s\n", p->name, strerror(errno));
			return;
		}
		/* what its peer sends it crosses the wire to its MAC */
		if (p->peer >= 0) {
			e->p[p->peer].cfg.peer_mtu = (uint32_t)v;
			if (cfg_push(&e->p[p->peer]) < 0) {
				fprintf(out, "error: mtu on %s's peer: %s\n", p->name, strerror(errno));
				return;
			}
		}
		fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "rxmode") && ac == 2) {
		rx_status(out, p);
	} else if (!strcmp(av[0], "rxmode") && ac == 3) {
		int deferred;
		uint64_t ns;

		if (parse_rx_delay(av[2], &deferred, &ns) < 0) {
			fprintf(out, "error: rxmode PORT [instant | DELAY_MS (0..60000, "
				"3 decimals)]: '%s'\n", av[2]);
			return;
		}
		rxm_set_mode(&p->rx, deferred, ns);
		logx("port %s: rx-mode model %s, delay %.3f ms", p->name,
		     deferred ? "deferred" : "instant", (double)ns / 1e6);
		fprintf(out, "ok\n");
	} else if (!strcmp(av[0], "fwframes") && ac == 3 &&
		   (!strcmp(av[2], "on") || !strcmp(av[2], "off"))) {
		if (av[2][1] == 'n' && fw_open(e, p) < 0) {
			fprintf(out, "error: fwframes on %s: peer injection socket: %s\n", p->name,
				strerror(errno));
			return;
		}
		p->fwframes = av[2][1] == 'n';
		fprintf(out, "ok\n");
	} else {
		fprintf(out, "error: bad arguments to '%s'\n", av[0]);
	}
}

void ctl_accept(struct emu *e)
{
	struct timeval tv = { .tv_usec = 500000 };
	char line[1024], *reply = NULL;
	size_t len = 0, rlen = 0;
	FILE *out;
	int c = accept4(e->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
		ssize_t n = read(c, line + len, sizeof(line) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	line[len] = 0;
	out = open_memstream(&reply, &rlen);
	if (!out) {
		close(c);
		return;
	}
	if (len == sizeof(line) - 1 && !memchr(line, '\n', len))
		fprintf(out, "error: command longer than %zu bytes\n", sizeof(line) - 2);
	else
		command(e, line, out);
	fclose(out);
	for (size_t off = 0; reply && off < rlen;) {
		ssize_t n = send(c, reply + off, rlen - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(reply);
	close(c);
}

int ctl_client(const char *dir, int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	int fd, ok = -1;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", dir) >=
	    sizeof(sa.sun_path)) {
		logx("control socket path under %s is too long", dir);
		return 2;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		logx("connect %s: %s", sa.sun_path, strerror(errno));
		return 2;
	}
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (len + l + 2 >= sizeof(buf)) {
			logx("command too long");
			return 2;
		}
		if (i)
			buf[len++] = ' ';
		memcpy(buf + len, argv[i], l);
		len += l;
	}
	buf[len++] = '\n';
	if (write(fd, buf, len) != (ssize_t)len) {
		logx("write %s: %s", sa.sun_path, strerror(errno));
		return 2;
	}
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (ok < 0)
			ok = n >= 2 && !strncmp(buf, "ok", 2);
		fwrite(buf, 1, (size_t)n, stdout);
	}
	close(fd);
	return ok == 1 ? 0 : 1;
}
