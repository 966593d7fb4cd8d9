/* flow_sockdiag: kernel TCP sockets via INET_DIAG (NETLINK_SOCK_DIAG).
 *
 * One long-lived netlink socket per namespace, created inside it. Each poll
 * dumps AF_INET then AF_INET6 TCP sockets with INET_DIAG_INFO (struct
 * tcp_info, whatever length the running kernel gives) and filters them with
 * the port's selectors in userspace. Every reply is hostile input: message
 * and attribute lengths are checked, tcp_info fields are read only when the
 * kernel's struct is long enough to hold them. */
#include "collectors/flow_sockdiag.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/netns.h"

/* TCP states as the kernel numbers them (include/net/tcp_states.h). */
enum {
	SD_TCP_ESTABLISHED = 1,
	SD_TCP_SYN_SENT,
	SD_TCP_SYN_RECV,
	SD_TCP_FIN_WAIT1,
	SD_TCP_FIN_WAIT2,
	SD_TCP_TIME_WAIT,
	SD_TCP_CLOSE,
	SD_TCP_CLOSE_WAIT,
	SD_TCP_LAST_ACK,
	SD_TCP_LISTEN,
	SD_TCP_CLOSING,
};

#define SD_STATES ((1u << SD_TCP_ESTABLISHED) | (1u << SD_TCP_SYN_SENT) | \
		   (1u << SD_TCP_SYN_RECV) | (1u << SD_TCP_FIN_WAIT1) |   \
		   (1u << SD_TCP_FIN_WAIT2) | (1u << SD_TCP_CLOSE_WAIT) |  \
		   (1u << SD_TCP_LAST_ACK) | (1u << SD_TCP_CLOSING))

#define SD_BUFLEN 65536u

/* /proc scan bounds for sockdiag_inode_owner. */
#define SD_OWNER_MAX_PROCS 16384u
#define SD_OWNER_MAX_FDS 262144u

struct sockdiag {
	struct mnl_socket *nl;
	int nsfd;               /* owned; the namespace the socket lives in */
	unsigned long nsino;    /* for messages */
	unsigned seq;
	unsigned portid;
	int broken;             /* a dump was cut short: reopen before reuse */
	char *buf;
};

struct sd_dump {
	const struct flow_sel *sel;
	unsigned nsel;
	flow_emit_fn emit;
	void *arg;
	uint64_t now;
	int emitted;
};

static uint64_t sd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int sd_socket_open(struct sockdiag *sd, char *err, size_t errlen)
{
	struct mnl_socket *nl = NULL;
	int saved, e = 0, one = 1;

	if (netns_enter(sd->nsfd, &saved) < 0) {
		e = errno;
		snprintf(err, errlen, "sock_diag: enter netns inode %lu: %s", sd->nsino, strerror(e));
		return -e;
	}
	nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (!nl)
		e = errno;
	else if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		e = errno;
		mnl_socket_close(nl);
		nl = NULL;
	}
	if (netns_leave(saved) < 0) {
		if (nl)
			mnl_socket_close(nl);
		snprintf(err, errlen, "sock_diag: cannot return from netns inode %lu: %s",
			 sd->nsino, strerror(errno));
		return -EIO;
	}
	if (!nl) {
		snprintf(err, errlen, "sock_diag: netlink socket in netns inode %lu: %s",
			 sd->nsino, strerror(e));
		return -e;
	}
	/* Extended ack text in errors when the kernel has it; not fatal. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	sd->nl = nl;
	sd->portid = mnl_socket_get_portid(nl);
	sd->broken = 0;
	return 0;
}

struct sockdiag *sockdiag_open(int nsfd, char *err, size_t errlen)
{
	struct sockdiag *sd;
	struct stat st;
	int e;

	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		snprintf(err, errlen, "sock_diag: out of memory");
		return NULL;
	}
	sd->buf = malloc(SD_BUFLEN);
	if (nsfd >= 0)
		sd->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 0);
	else
		sd->nsfd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (!sd->buf || sd->nsfd < 0) {
		e = sd->buf ? errno : ENOMEM;
		snprintf(err, errlen, "sock_diag: namespace fd %d: %s", nsfd, strerror(e));
		goto fail;
	}
	if (fstat(sd->nsfd, &st) == 0)
		sd->nsino = (unsigned long)st.st_ino;
	sd->seq = (unsigned)time(NULL);
	if (sd_socket_open(sd, err, errlen) < 0)
		goto fail;
	return sd;
fail:
	if (sd->nsfd >= 0)
		close(sd->nsfd);
	free(sd->buf);
	free(sd);
	return NULL;
}

void sockdiag_close(struct sockdiag *sd)
{
	if (!sd)
		return;
	if (sd->nl)
		mnl_socket_close(sd->nl);
	if (sd->nsfd >= 0)
		close(sd->nsfd);
	free(sd->buf);
	free(sd);
}

static void sd_mapped(struct in6_addr *a, const void *v4)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], v4, 4);
}

static int sd_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	unsigned type = mnl_attr_get_type(a);

	if (type > INET_DIAG_MAX)
		return MNL_CB_OK;       /* newer kernel: skip */
	tb[type] = a;
	return MNL_CB_OK;
}

#define TI_HAS(len, f) \
	(offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f) <= (len))

static uint64_t sd_ago(uint64_t now, uint32_t ms)
{
	uint64_t d = (uint64_t)ms * 1000000ull;

	return d < now ? now - d : 0;
}

static void sd_parse_sock(const struct nlmsghdr *nlh, struct sd_dump *d)
{
	const struct nlattr *tb[INET_DIAG_MAX + 1] = { 0 };
	const struct inet_diag_msg *m;
	struct flow_obs o;
	struct tcp_info ti;
	size_t tilen = 0;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*m)))
		return;
	m = mnl_nlmsg_get_payload(nlh);
	memset(&o, 0, sizeof(o));
	o.src = FLOW_SRC_SOCK;
	o.key.proto = IPPROTO_TCP;
	if (m->idiag_family == AF_INET) {
		sd_mapped(&o.key.saddr, &m->id.idiag_src[0]);
		sd_mapped(&o.key.daddr, &m->id.idiag_dst[0]);
	} else if (m->idiag_family == AF_INET6) {
		memcpy(&o.key.saddr, m->id.idiag_src, 16);
		memcpy(&o.key.daddr, m->id.idiag_dst, 16);
	} else
		return;
	o.key.sport = m->id.idiag_sport;
	o.key.dport = m->id.idiag_dport;
	if (m->idiag_state == SD_TCP_LISTEN)
		return;
	if (!flow_sel_match(d->sel, d->nsel, &o.key))
		return;
	if (mnl_attr_parse(nlh, sizeof(*m), sd_attr_cb, tb) < 0)
		return;         /* malformed attributes: skip the socket */
	o.state = m->idiag_state;
	o.inode = m->idiag_inode;
	o.unread = m->idiag_rqueue;
	o.unsent = m->idiag_wqueue;

	memset(&ti, 0, sizeof(ti));
	if (tb[INET_DIAG_INFO]) {
		tilen = mnl_attr_get_payload_len(tb[INET_DIAG_INFO]);
		memcpy(&ti, mnl_attr_get_payload(tb[INET_DIAG_INFO]),
		       tilen < sizeof(ti) ? tilen : sizeof(ti));
	}
	if (TI_HAS(tilen, tcpi_total_retrans))
		o.retrans = ti.tcpi_total_retrans;
	/* The write queue is bytes not yet sent (held by the socket) plus
	 * bytes sent and not acknowledged (in flight, not held). */
	if (TI_HAS(tilen, tcpi_notsent_bytes) && ti.tcpi_notsent_bytes <= o.unsent) {
		o.inflight = o.unsent - ti.tcpi_notsent_bytes;
		o.unsent = ti.tcpi_notsent_bytes;
	}
	if (TI_HAS(tilen, tcpi_bytes_acked)) {
		/* Acked sequence space: the SYN counts one, and so does our
		 * FIN once acked (FIN_WAIT2); report data bytes only. */
		uint64_t b = ti.tcpi_bytes_acked;

		if (b)
			b--;
		if (b && m->idiag_state == SD_TCP_FIN_WAIT2)
			b--;
		o.tx_bytes = b;
	}
	if (TI_HAS(tilen, tcpi_bytes_received))
		o.rx_bytes = ti.tcpi_bytes_received;
	if (TI_HAS(tilen, tcpi_data_segs_out)) {
		o.tx_msgs = ti.tcpi_data_segs_out;
		o.rx_msgs = ti.tcpi_data_segs_in;
	} else if (TI_HAS(tilen, tcpi_segs_in)) {
		o.tx_msgs = ti.tcpi_segs_out;
		o.rx_msgs = ti.tcpi_segs_in;
	}
	/* The kernel's "ms since last data" is meaningless before any data
	 * moved; leave 0 (unknown) then when the struct tells us so. */
	if (TI_HAS(tilen, tcpi_last_data_recv)) {
		int known_tx = !TI_HAS(tilen, tcpi_data_segs_out) || ti.tcpi_data_segs_out;
		int known_rx = !TI_HAS(tilen, tcpi_data_segs_out) || ti.tcpi_data_segs_in;

		if (known_tx)
			o.last_tx_ns = sd_ago(d->now, ti.tcpi_last_data_sent);
		if (known_rx)
			o.last_rx_ns = sd_ago(d->now, ti.tcpi_last_data_recv);
	}
	d->emit(&o, d->arg);
	d->emitted++;
}

/* Extended ack message of an NLMSG_ERROR, or "". */
static const char *sd_extack(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	size_t off;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return "";
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(e->msg) || e->msg.nlmsg_len > nlh->nlmsg_len)
			return "";
		off += e->msg.nlmsg_len - sizeof(e->msg);
	}
	if (mnl_nlmsg_size(off) > nlh->nlmsg_len)
		return "";
	mnl_attr_for_each(a, nlh, off) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			return mnl_attr_get_str(a);
	}
	return "";
}

/* One dump of one family. 0 or -errno. */
static int sd_dump_family(struct sockdiag *sd, uint8_t family, struct sd_dump *d,
			  char *err, size_t errlen)
{
	struct nlmsghdr *nlh;
	struct inet_diag_req_v2 *req;
	char reqbuf[256];
	unsigned seq = ++sd->seq;
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";

	nlh = mnl_nlmsg_put_header(reqbuf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = SD_STATES;
	req->idiag_ext = 1u << (INET_DIAG_INFO - 1);

	if (mnl_socket_sendto(sd->nl, nlh, nlh->nlmsg_len) < 0) {
		int e = errno;

		snprintf(err, errlen, "sock_diag: send %s TCP dump request in netns inode %lu: %s",
			 fam, sd->nsino, strerror(e));
		sd->broken = 1;
		return -e;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sd->nl, sd->buf, SD_BUFLEN);
		int len;

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			snprintf(err, errlen, "sock_diag: receive %s TCP dump in netns inode %lu: %s",
				 fam, sd->nsino, strerror(e));
			sd->broken = 1;
			return -e;
		}
		len = (int)n;
		for (nlh = (struct nlmsghdr *)sd->buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != seq ||
			    (nlh->nlmsg_pid && nlh->nlmsg_pid != sd->portid))
				continue;       /* left over from a cut dump */
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e;

				if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
					snprintf(err, errlen, "sock_diag: short error message in %s dump, netns inode %lu",
						 fam, sd->nsino);
					sd->broken = 1;
					return -EPROTO;
				}
				e = mnl_nlmsg_get_payload(nlh);
				if (e->error == 0)
					continue;
				snprintf(err, errlen, "sock_diag: %s TCP dump in netns inode %lu: %s%s%s",
					 fam, sd->nsino, strerror(-e->error),
					 *sd_extack(nlh) ? ": " : "", sd_extack(nlh));
				return e->error < 0 ? e->error : -EPROTO;
			}
			if (nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY)
				sd_parse_sock(nlh, d);
		}
	}
}

int sockdiag_poll(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		  flow_emit_fn emit, void *arg, char *err, size_t errlen)
{
	struct sd_dump d = { .sel = sel, .nsel = nsel, .emit = emit, .arg = arg };
	int rc;

	if (!sd || !emit || (nsel && !sel)) {
		snprintf(err, errlen, "sock_diag: invalid arguments");
		return -EINVAL;
	}
	if (sd->broken || !sd->nl) {
		/* A dump was interrupted: its tail may still be queued and the
		 * kernel refuses a new dump while one runs. Start afresh. */
		if (sd->nl)
			mnl_socket_close(sd->nl);
		sd->nl = NULL;
		rc = sd_socket_open(sd, err, errlen);
		if (rc < 0)
			return rc;
	}
	d.now = sd_now_ns();
	rc = sd_dump_family(sd, AF_INET, &d, err, errlen);
	if (rc < 0)
		return rc;
	rc = sd_dump_family(sd, AF_INET6, &d, err, errlen);
	if (rc < 0)
		return rc;
	return d.emitted;
}

/* ---- socket inode owner ---- */

static int sd_all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void sd_read_comm(int procfd, int pid, char *comm, size_t commlen)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	if (!comm || !commlen)
		return;
	comm[0] = '\0';
	snprintf(path, sizeof(path), "%d/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(comm, commlen, "%s", buf);
}

int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen)
{
	char want[48], link[64], path[64];
	unsigned procs = 0, fds = 0;
	struct dirent *pe, *fe;
	int procfd, rc = -ENOENT;
	DIR *pd;

	if (!inode)
		return -EINVAL;
	snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -errno;
	pd = fdopendir(dup(procfd));
	if (!pd) {
		rc = -errno;
		close(procfd);
		return rc;
	}
	while (rc == -ENOENT && (pe = readdir(pd)) && procs < SD_OWNER_MAX_PROCS &&
	       fds < SD_OWNER_MAX_FDS) {
		DIR *fdd;
		long p;
		int dfd;

		if (!sd_all_digits(pe->d_name) || strlen(pe->d_name) > 10)
			continue;
		p = strtol(pe->d_name, NULL, 10);
		if (p <= 0 || p > INT32_MAX)
			continue;
		procs++;
		snprintf(path, sizeof(path), "%ld/fd", p);
		dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;       /* gone or not ours to read */
		fdd = fdopendir(dfd);
		if (!fdd) {
			close(dfd);
			continue;
		}
		while ((fe = readdir(fdd)) && fds < SD_OWNER_MAX_FDS) {
			ssize_t n;

			if (fe->d_name[0] == '.')
				continue;
			fds++;
			n = readlinkat(dirfd(fdd), fe->d_name, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, want))
				continue;
			if (pid)
				*pid = (int)p;
			sd_read_comm(procfd, (int)p, comm, commlen);
			rc = 0;
			break;
		}
		closedir(fdd);
	}
	closedir(pd);
	close(procfd);
	return rc;
}

/* ---- selectors ---- */

static int sd_addr_match(const struct flow_sel *s, const struct in6_addr *a)
{
	unsigned plen = s->prefix > 128 ? 128 : s->prefix;
	unsigned full = plen / 8, rest = plen % 8;

	if (s->family == AF_INET) {
		if (!IN6_IS_ADDR_V4MAPPED(a))
			return 0;
		if (plen < 96)
			plen = 96, full = 12, rest = 0;
	}
	if (memcmp(a->s6_addr, s->addr.s6_addr, full))
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff00u >> rest);

		if ((a->s6_addr[full] ^ s->addr.s6_addr[full]) & mask)
			return 0;
	}
	return 1;
}

static int sd_port_in(const struct flow_sel *s, uint16_t nport)
{
	uint16_t p = ntohs(nport), hi = s->port_hi < s->port_lo ? s->port_lo : s->port_hi;

	return p >= s->port_lo && p <= hi;
}

int flow_sel_match(const struct flow_sel *sel, unsigned nsel, const struct flow_key *k)
{
	unsigned i;

	if (!nsel)
		return 1;
	if (!sel || !k)
		return 0;
	for (i = 0; i < nsel; i++) {
		const struct flow_sel *s = &sel[i];

		if (s->proto && s->proto != k->proto)
			continue;
		if (s->family && !sd_addr_match(s, &k->saddr) && !sd_addr_match(s, &k->daddr))
			continue;
		if ((s->port_lo || s->port_hi) && !sd_port_in(s, k->sport) &&
		    !sd_port_in(s, k->dport))
			continue;
		return 1;
	}
	return 0;
}

/* Selector grammar (whitespace-separated words, each kind at most once, any
 * order):
 *
 *   selector := word+
 *   word     := "tcp" | "udp" | "any"             protocol (any: both)
 *             | ADDR [ "/" PREFIX ]               IPv4 or IPv6, either end
 *             | "port" PORT [ "-" PORT ]          1..65535, either end
 *
 * "any" alone matches every flow. An IPv4 prefix counts IPv4 bits (0..32), an
 * IPv6 prefix IPv6 bits (0..128); address bits past the prefix are cleared.
 * Examples: "tcp", "tcp 10.0.0.0/24", "udp port 11111",
 * "tcp 10.77.0.2 port 11111-11120", "any", "tcp fd00::/64 port 80". */
static int sd_parse_u(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || *end || *out > max)
		return -1;
	return 0;
}

static int sd_parse_ports(const char *tok, struct flow_sel *s)
{
	char buf[32], *dash;
	unsigned long lo, hi;

	if (strlen(tok) >= sizeof(buf))
		return -1;
	strcpy(buf, tok);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (sd_parse_u(buf, 65535, &lo) < 0 || lo == 0)
		return -1;
	hi = lo;
	if (dash && (sd_parse_u(dash, 65535, &hi) < 0 || hi < lo))
		return -1;
	s->port_lo = (uint16_t)lo;
	s->port_hi = (uint16_t)hi;
	return 0;
}

static int sd_parse_addr(const char *tok, struct flow_sel *s)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned long plen;
	struct in_addr a4;
	unsigned i;

	if (strlen(tok) >= sizeof(buf))
		return -1;
	strcpy(buf, tok);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		if (slash && sd_parse_u(slash, 32, &plen) < 0)
			return -1;
		s->family = AF_INET;
		sd_mapped(&s->addr, &a4);
		s->prefix = (uint8_t)(96 + (slash ? plen : 32));
	} else if (inet_pton(AF_INET6, buf, &s->addr) == 1) {
		if (slash && sd_parse_u(slash, 128, &plen) < 0)
			return -1;
		s->family = AF_INET6;
		s->prefix = (uint8_t)(slash ? plen : 128);
	} else
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned bit = i * 8;

		if (bit >= s->prefix)
			s->addr.s6_addr[i] = 0;
		else if (bit + 8 > s->prefix)
			s->addr.s6_addr[i] &= (uint8_t)(0xff00u >> (s->prefix - bit));
	}
	return 0;
}

int flow_sel_parse(const char *text, struct flow_sel *out, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	int have_proto = 0, have_addr = 0, have_port = 0, n = 0;
	struct flow_sel s;

	if (!text || !out) {
		snprintf(err, errlen, "flow selector: missing text");
		return -EINVAL;
	}
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "flow selector '%.32s...': longer than %zu characters",
			 text, sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, text);
	memset(&s, 0, sizeof(s));
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		n++;
		if (!strcmp(tok, "tcp") || !strcmp(tok, "udp") || !strcmp(tok, "any")) {
			if (have_proto++) {
				snprintf(err, errlen, "flow selector '%s': second protocol '%s'", text, tok);
				return -EINVAL;
			}
			s.proto = tok[0] == 't' ? IPPROTO_TCP : tok[0] == 'u' ? IPPROTO_UDP : 0;
		} else if (!strcmp(tok, "port")) {
			char *p = strtok_r(NULL, " \t", &save);

			if (have_port++) {
				snprintf(err, errlen, "flow selector '%s': second 'port'", text);
				return -EINVAL;
			}
			if (!p) {
				snprintf(err, errlen, "flow selector '%s': 'port' needs a port or range", text);
				return -EINVAL;
			}
			if (sd_parse_ports(p, &s) < 0) {
				snprintf(err, errlen, "flow selector '%s': bad port or range '%s' (1-65535, lo-hi)",
					 text, p);
				return -EINVAL;
			}
		} else if (isxdigit((unsigned char)tok[0]) || tok[0] == ':') {
			if (have_addr++) {
				snprintf(err, errlen, "flow selector '%s': second address '%s'", text, tok);
				return -EINVAL;
			}
			if (sd_parse_addr(tok, &s) < 0) {
				snprintf(err, errlen, "flow selector '%s': bad address or prefix '%s'", text, tok);
				return -EINVAL;
			}
		} else {
			snprintf(err, errlen, "flow selector '%s': unknown word '%s' (tcp, udp, any, ADDR[/PREFIX], port N[-M])",
				 text, tok);
			return -EINVAL;
		}
	}
	if (!n) {
		snprintf(err, errlen, "flow selector is empty (use 'any' for every flow)");
		return -EINVAL;
	}
	*out = s;
	return 0;
}

static void sd_fmt_addr(const struct in6_addr *a, char *buf, size_t len)
{
	char t[INET6_ADDRSTRLEN];

	if (IN6_IS_ADDR_V4MAPPED(a)) {
		inet_ntop(AF_INET, &a->s6_addr[12], t, sizeof(t));
		snprintf(buf, len, "%s", t);
	} else {
		inet_ntop(AF_INET6, a, t, sizeof(t));
		snprintf(buf, len, "[%s]", t);
	}
}

int flow_key_format(const struct flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN + 2], d[INET6_ADDRSTRLEN + 2], p[16];

	if (!k || (!buf && len))
		return -1;
	if (k->proto == IPPROTO_TCP)
		snprintf(p, sizeof(p), "tcp");
	else if (k->proto == IPPROTO_UDP)
		snprintf(p, sizeof(p), "udp");
	else
		snprintf(p, sizeof(p), "proto %u", k->proto);
	sd_fmt_addr(&k->saddr, s, sizeof(s));
	sd_fmt_addr(&k->daddr, d, sizeof(d));
	return snprintf(buf, len, "%s %s:%u -> %s:%u", p, s, ntohs(k->sport), d, ntohs(k->dport));
}
