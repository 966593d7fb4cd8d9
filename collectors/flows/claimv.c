/* claimv: engines' claims checked against the kernel. See claimv.h. */
#include "collectors/flows/claimv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flows.h"
#include "lib/loop.h"
#include "lib/procfd.h"
#include "lib/siphash.h"
#include "lib/util.h"

#define CLAIMV_MAPS_CHUNK (64u << 10)   /* /proc/PID/maps read in pieces */
#define CLAIMV_PORT_SOCKS 256u          /* sockets on one port looked at */
#define CLAIMV_DEF_RATE 64u
#define CLAIMV_WALK_COST 16u
#define CLAIMV_USERS 64u                /* uids budgeted apart; more share the last */
#define CLAIMV_USER_ENTRIES (CLAIMV_MAX_ENTRIES / 4)    /* cache entries of one uid */
#define CLAIMV_TOTAL_RATES 4u           /* all uids together: 4 uids' budgets */
#define CLAIMV_BATCH_NS 16u             /* namespaces remembered in a batch */

/* The part of a claim that identifies it (hashed and compared as bytes). */
struct ckey {
	int32_t pid, fd;
	uint64_t inode;
	uint64_t start, ns;     /* the pid's start time; the namespace's inode */
	uint32_t uid, pad2;
	struct in6_addr laddr, raddr;
	uint16_t lport, rport;
	uint8_t proto, pad[3];
	char lib[16];
};

struct centry {
	struct ckey k;
	uint8_t used, state;
	uint64_t checked_ns, used_ns;
	char why[120];
};

/* One uid's share: a uid's flood of claims spends its own budget and
 * fills its own part of the cache, not everyone's. */
struct cuser {
	uint32_t uid;
	uint8_t used;
	unsigned spent, entries;
	uint64_t window_ns;
};

/* What /proc/PID/maps said of a process (lib_mapped): read once per
 * process (pid and start time), not per claim. */
#define CLAIMV_LIBS 256u
struct clib {
	int32_t pid;
	unsigned long long start;
	char lib[16];
	uint8_t used, ok;
	char why[120];
};

/* A process's sockets as one walk of /proc/PID/fd found them, kept for
 * the second: the claims of one engine table (many records, one owner)
 * cost one walk a second, not one each. */
#define CLAIMV_FDSETS 16u
struct cfds {
	int32_t pid;
	unsigned long long start;
	uint64_t at_ns;
	uint64_t *socks;
	int n, truncated, used;
};

struct claimv {
	struct sip_key sip;
	struct cfds fds[CLAIMV_FDSETS]; /* by pid, direct-mapped */
	struct clib libs[CLAIMV_LIBS];  /* by pid, direct-mapped */
	struct cuser users[CLAIMV_USERS];
	struct centry *tab;             /* open addressing, CLAIMV_MAX_ENTRIES * 2 */
	unsigned cap, n;
	unsigned rate, spent;
	uint64_t window_ns;
	struct claimv_stats st;
	claimv_route_fn route;
	void *route_arg;
	int route_kind;
	uint64_t self_ns;               /* our namespace's inode, once known */
	/* claimv_batch: the namespaces' inodes looked at in it */
	int batch;
	unsigned nbns;
	struct { int fd; uint64_t ino; } bns[CLAIMV_BATCH_NS];
};

struct claimv *claimv_new(unsigned max_per_sec)
{
	struct claimv *cv = calloc(1, sizeof(*cv));

	if (!cv)
		return NULL;
	cv->cap = CLAIMV_MAX_ENTRIES * 2;
	cv->tab = calloc(cv->cap, sizeof(*cv->tab));
	if (!cv->tab) {
		free(cv);
		return NULL;
	}
	cv->rate = max_per_sec ? max_per_sec : CLAIMV_DEF_RATE;
	sip_key_random(&cv->sip);
	return cv;
}

void claimv_set_route(struct claimv *cv, int src_kind, claimv_route_fn fn, void *arg)
{
	cv->route = fn;
	cv->route_arg = arg;
	cv->route_kind = src_kind;
}

void claimv_free(struct claimv *cv)
{
	if (!cv)
		return;
	for (unsigned i = 0; i < CLAIMV_FDSETS; i++)
		free(cv->fds[i].socks);
	free(cv->tab);
	free(cv);
}

void claimv_stats(const struct claimv *cv, struct claimv_stats *out)
{
	*out = cv->st;
	out->entries = cv->n;
}

int claimv_maps_find(const char *maps, size_t len, const char *lib, struct claimv_map *out)
{
	size_t ll = strlen(lib);

	for (size_t i = 0; i < len;) {
		const char *line = maps + i, *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		const char *p = memchr(line, '/', n), *base;
		char head[160], perms[8];
		unsigned long long ino;
		size_t pn, hn;

		i += n + 1;
		/* "start-end perms offset dev inode   /path": the path starts
		 * at the first '/' (nothing before it has one) */
		if (!p)
			continue;
		pn = n - (size_t)(p - line);
		base = p;
		for (const char *q = p; q < p + pn; q++)
			if (*q == '/')
				base = q + 1;
		if ((size_t)(p + pn - base) < ll || memcmp(base, lib, ll))
			continue;
		hn = (size_t)(p - line);
		if (hn >= sizeof(head))
			continue;
		memcpy(head, line, hn);
		head[hn] = '\0';
		if (sscanf(head, "%63s %7s %*s %*s %llu", out->range, perms, &ino) != 3 ||
		    strlen(perms) < 3 || perms[2] != 'x' || !ino)
			continue;       /* only code run from the file counts */
		out->ino = ino;
		if (pn >= sizeof(out->path))
			pn = sizeof(out->path) - 1;
		memcpy(out->path, p, pn);
		out->path[pn] = '\0';
		return 1;
	}
	return 0;
}

/* (b): the process runs code from a file named lib* that root owns and
 * only root may write. The file is the one mapped, looked at through
 * /proc/PID/map_files/<range> (not its path, which would resolve in the
 * daemon's mount namespace) and required to be the inode the maps line
 * names. /proc/PID/maps is read in pieces of CLAIMV_MAPS_CHUNK, to its
 * end or the first match, whatever its size; the answer is kept per
 * (pid, start time) by the caller. */
static int lib_mapped(int pid, const char *lib, char *why, size_t whylen)
{
	char mp[64], mf[128];
	char *buf = malloc(CLAIMV_MAPS_CHUNK);
	struct claimv_map m;
	size_t len = 0;
	struct stat st;
	ssize_t r;
	int fd, found = 0;

	snprintf(mp, sizeof(mp), "/proc/%d/maps", pid);
	fd = open(mp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		util_errf(why, whylen, "%s: %s", mp, buf ? strerror(errno) : "out of memory");
		if (fd >= 0)
			close(fd);
		free(buf);
		return 0;
	}
	while (!found && (r = read(fd, buf + len, CLAIMV_MAPS_CHUNK - len)) > 0) {
		char *last;
		size_t whole;

		len += (size_t)r;
		last = memrchr(buf, '\n', len);
		whole = last ? (size_t)(last - buf) + 1 : 0;
		if (!whole) {
			len = 0;        /* a line longer than the chunk: no path of ours */
			continue;
		}
		found = claimv_maps_find(buf, whole, lib, &m);
		memmove(buf, buf + whole, len - whole);
		len -= whole;
	}
	close(fd);
	free(buf);
	if (!found) {
		util_errf(why, whylen, "process %d runs no code from a file named %s*", pid, lib);
		return 0;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%s", pid, m.range);
	if (stat(mf, &st) < 0 || (uint64_t)st.st_ino != m.ino || st.st_uid != 0 ||
	    (st.st_mode & 022) || !S_ISREG(st.st_mode)) {
		util_errf(why, whylen, "process %d maps %s, which is not a file only root may write",
			  pid, m.path);
		return 0;
	}
	return 1;
}

static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

static int unspecified(const struct in6_addr *a)
{
	return IN6_IS_ADDR_UNSPECIFIED(a) || !memcmp(a, v4any, 16);
}

/* Does the kernel's local address ka take the claimed address ca: equal,
 * or ka the wildcard of ca's family (0.0.0.0 never takes an IPv6 address;
 * "::" takes an IPv4 one only as the kernel's own lookup chose it, i.e.
 * not IPV6_V6ONLY: callers pass only lookup answers here). */
static int addr_takes(const struct in6_addr *ka, const struct in6_addr *ca)
{
	if (!memcmp(ka, ca, 16))
		return 1;
	if (IN6_IS_ADDR_V4MAPPED(ca))
		return !memcmp(ka, v4any, 16) || IN6_IS_ADDR_UNSPECIFIED(ka);
	return IN6_IS_ADDR_UNSPECIFIED(ka);
}

/* The kernel's socket e (a lookup's answer) against the claim: local end
 * taken, remote end equal unless e is connected to nothing. */
static int ent_agrees(const struct sockdiag_ent *e, const struct claimv_claim *c)
{
	if (e->lport != c->lport || !addr_takes(&e->laddr, &c->laddr))
		return 0;
	if (!e->rport && unspecified(&e->raddr))
		return 1;
	return e->rport == c->rport && !memcmp(&e->raddr, &c->raddr, 16);
}

/* Could sockets bound to a and b receive the same traffic? */
static int addr_overlap(const struct in6_addr *a, const struct in6_addr *b)
{
	return unspecified(a) || unspecified(b) || !memcmp(a, b, 16);
}

/* The sockets a process holds, read only when a question needs them: a
 * claimed inode whose fd is named is answered from that one fd
 * (procfd_fd_inode), not from a walk of every fd. */
struct holder {
	const struct claimv_claim *c;
	int fd_ok;              /* c->fd is socket c->inode */
	uint64_t *socks;        /* own, or a set of the cache's */
	int n, read, truncated, borrowed;
	struct claimv *cv;      /* the cache of walks, NULL none */
	uint64_t now_ns;
};

static int walk_fds(struct holder *h)
{
	struct cfds *f;

	if (h->cv) {
		f = &h->cv->fds[(unsigned)h->c->pid % CLAIMV_FDSETS];
		if (!(f->used && f->pid == h->c->pid && f->start == h->c->start &&
		      h->now_ns - f->at_ns < 1000000000ull)) {
			if (!f->socks && !(f->socks = malloc(CLAIMV_MAX_SOCKS * sizeof(*f->socks))))
				return -ENOMEM;
			f->used = 1;
			f->pid = h->c->pid;
			f->start = h->c->start;
			f->at_ns = h->now_ns;
			f->n = procfd_pid_sockets(h->c->pid, f->socks, CLAIMV_MAX_SOCKS, &f->truncated);
			h->cv->st.fd_walks++;
		}
		h->socks = f->socks;
		h->n = f->n;
		h->truncated = f->truncated;
		h->borrowed = 1;
		return 0;
	}
	if (!(h->socks = malloc(CLAIMV_MAX_SOCKS * sizeof(*h->socks))))
		return -ENOMEM;
	h->n = procfd_pid_sockets(h->c->pid, h->socks, CLAIMV_MAX_SOCKS, &h->truncated);
	return 0;
}

/* Does the process hold socket inode? 1 yes, 0 no, -errno. */
static int holds(struct holder *h, uint64_t inode)
{
	int lo = 0, hi;

	if (h->fd_ok && inode == h->c->inode)
		return 1;
	if (!h->read) {
		int rc = walk_fds(h);

		if (rc < 0)
			return rc;
		h->read = 1;
	}
	if (h->n < 0)
		return h->n;
	hi = h->n - 1;
	while (lo <= hi) {
		int m = lo + (hi - lo) / 2;

		if (h->socks[m] == inode)
			return 1;
		if (h->socks[m] < inode)
			lo = m + 1;
		else
			hi = m - 1;
	}
	return 0;
}

static void fmt_end(const struct in6_addr *a, uint16_t port, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN] = "?";

	if (IN6_IS_ADDR_V4MAPPED(a))
		inet_ntop(AF_INET, &a->s6_addr[12], s, sizeof(s));
	else
		inet_ntop(AF_INET6, a, s, sizeof(s));
	snprintf(buf, len, strchr(s, ':') ? "[%s]:%u" : "%s:%u", s, ntohs(port));
}

enum claimv_state claimv_verify(const struct claimv_claim *c, char *why, size_t whylen)
{
	return claimv_verify_port(c, NULL, NULL, why, whylen);
}

/* The process is the one that made the claim: the pid not reused since
 * (its start time) and run by the claim's owner (real or effective uid,
 * as flow_engine_owner.c believes a table's owner; /proc/PID/status, not
 * the owner of /proc/PID, which is root's for a process not dumpable). */
static int same_process(const struct claimv_claim *c, char *why, size_t whylen)
{
	char pp[64], b[4096], *u;
	unsigned long r, e;
	ssize_t n;

	snprintf(pp, sizeof(pp), "/proc/%d/status", c->pid);
	n = util_read_buf(pp, b, sizeof(b));
	if (n <= 0) {
		util_errf(why, whylen, "%s: %s", pp, n < 0 ? strerror(errno) : "empty");
		return 0;
	}
	u = strstr(b, "\nUid:");
	if (!u || sscanf(u + 5, "%lu %lu", &r, &e) != 2) {
		util_errf(why, whylen, "%s: no Uid line", pp);
		return 0;
	}
	if (r != c->uid && e != c->uid) {
		util_errf(why, whylen, "process %d is uid %lu's, the claim uid %u's", c->pid, e,
			  (unsigned)c->uid);
		return 0;
	}
	if (c->start && util_proc_start(c->pid) != c->start) {
		util_errf(why, whylen, "pid %d is another process than the one that made the claim (its start time changed)",
			  c->pid);
		return 0;
	}
	return 1;
}

/* TCP, no socket takes the conversation: the process's socket only bound
 * to the claimed local end (VMA's OS socket of a connection it made:
 * sockinfo_tcp::connect() binds m_fd, never connects it), one walk of the
 * bind hash. Only an exact local address counts, and only if no socket of
 * another uid shares the port on an overlapping address and neither dump
 * was cut short. */
static int bound_only(const struct claimv_claim *c, struct holder *h, struct sockdiag_ent *ents,
		      char *why, size_t whylen)
{
	char e[200], l[64];
	int trunc = 0, trunc2 = 0, nb, na, mine = -1;

	fmt_end(&c->laddr, c->lport, l, sizeof(l));
	nb = sockdiag_port_sockets(c->netns_fd, IPPROTO_TCP, c->lport, 1, ents, CLAIMV_PORT_SOCKS / 2,
				   &trunc, e, sizeof(e));
	if (nb < 0) {
		util_errf(why, whylen, "%s", e);
		return 0;
	}
	na = sockdiag_port_sockets(c->netns_fd, IPPROTO_TCP, c->lport, 0, ents + nb,
				   CLAIMV_PORT_SOCKS - (size_t)nb, &trunc2, e, sizeof(e));
	if (na < 0) {
		util_errf(why, whylen, "%s", e);
		return 0;
	}
	if (trunc || trunc2) {
		util_errf(why, whylen, "more than %u sockets on tcp port %u: not checked", CLAIMV_PORT_SOCKS / 2,
			  ntohs(c->lport));
		return 0;
	}
	for (int i = 0; i < nb && mine < 0; i++)
		if (!memcmp(&ents[i].laddr, &c->laddr, 16) &&
		    (!c->inode || ents[i].inode == c->inode) && ents[i].uid == c->uid &&
		    holds(h, ents[i].inode) == 1)
			mine = i;
	if (mine < 0) {
		util_errf(why, whylen, "process %d holds no tcp socket on %s (the kernel's sockets of the port's namespace)",
			  c->pid, l);
		return 0;
	}
	for (int i = 0; i < nb + na; i++)
		if (ents[i].uid != c->uid && addr_overlap(&ents[i].laddr, &c->laddr)) {
			util_errf(why, whylen, "uid %u also has a tcp socket on %s", (unsigned)ents[i].uid, l);
			return 0;
		}
	return 1;
}

static enum claimv_state verify(struct claimv *cv, uint64_t now_ns, const struct claimv_claim *c,
			        int *any_remote, int *walked, char *why, size_t whylen)
{
	struct sockdiag_ent *ents = NULL, ent;
	struct holder h = { .c = c, .cv = cv, .now_ns = now_ns };
	char e[200], l[64], r[64];
	int n, ok = 0, hr;
	const char *proto = c->proto == IPPROTO_UDP ? "udp" : "tcp";

	if (any_remote)
		*any_remote = 0;
	if (walked)
		*walked = 0;
	if (why && whylen)
		why[0] = '\0';
	fmt_end(&c->laddr, c->lport, l, sizeof(l));
	fmt_end(&c->raddr, c->rport, r, sizeof(r));
	if (c->pid <= 0 || (c->proto != IPPROTO_TCP && c->proto != IPPROTO_UDP) || !c->lport) {
		util_errf(why, whylen, "no pid, protocol or local port to check");
		return CLAIMV_UNVERIFIED;
	}
	if (c->netns_fd == CLAIMV_NO_PORT) {
		util_errf(why, whylen, "no watched port takes %s %s", proto, l);
		return CLAIMV_UNVERIFIED;
	}
	if (!same_process(c, why, whylen))
		return CLAIMV_UNVERIFIED;
	if (c->lib && !lib_mapped(c->pid, c->lib, why, whylen))
		return CLAIMV_UNVERIFIED;
	ents = malloc(CLAIMV_PORT_SOCKS * sizeof(*ents));
	if (!ents) {
		util_errf(why, whylen, "out of memory");
		goto out;
	}
	/* (a): the claimed fd is the claimed socket (one readlink), or
	 * without an fd the process holds it */
	if (c->inode && c->fd >= 0) {
		uint64_t ino = 0;
		int rc = procfd_fd_inode(c->pid, c->fd, &ino);

		if (rc < 0 || ino != c->inode) {
			util_errf(why, whylen, "fd %d of process %d is not socket inode %llu%s%s", c->fd,
				  c->pid, (unsigned long long)c->inode, rc < 0 ? ": " : "",
				  rc < 0 ? strerror(-rc) : "");
			goto out;
		}
		h.fd_ok = 1;
	} else if (c->inode && (hr = holds(&h, c->inode)) != 1) {
		util_errf(why, whylen, "process %d holds no socket inode %llu%s", c->pid,
			  (unsigned long long)c->inode, hr < 0 ? " (its fds unreadable)" :
			  h.truncated ? " (among the fds read: too many)" : "");
		goto out;
	}
	/* (c), in the namespace of the port the flow routes to: a socket of
	 * any other namespace (one a user made with unshare -Urn) is not
	 * there. The socket the kernel gives the claimed conversation to (an
	 * exact lookup: a hash lookup, not a walk) must be the process's. */
	n = sockdiag_lookup(c->netns_fd, c->proto, &c->laddr, c->lport, &c->raddr, c->rport, &ent,
			    e, sizeof(e));
	if (n < 0) {
		util_errf(why, whylen, "%s", e);
		goto out;
	}
	if (n == 1) {
		if (ent.uid != c->uid || (hr = holds(&h, ent.inode)) != 1) {
			util_errf(why, whylen, "the kernel gives %s %s -> %s to socket inode %llu of uid %u, not one process %d holds%s",
				  proto, r, l, (unsigned long long)ent.inode, (unsigned)ent.uid, c->pid,
				  h.truncated ? " (among the fds read: too many)" : "");
		} else if (c->inode && ent.inode != c->inode && c->proto == IPPROTO_UDP) {
			/* a VMA/XLIO UDP socket binds its OS socket where it
			 * is bound (sockinfo_udp::bind()): it is the one */
			util_errf(why, whylen, "the kernel gives udp %s -> %s to socket inode %llu, not the claimed %llu",
				  r, l, (unsigned long long)ent.inode, (unsigned long long)c->inode);
		} else if (!ent_agrees(&ent, c)) {
			char kl[64], kr[64];

			fmt_end(&ent.laddr, ent.lport, kl, sizeof(kl));
			fmt_end(&ent.raddr, ent.rport, kr, sizeof(kr));
			util_errf(why, whylen, "the kernel has socket inode %llu of process %d as %s %s -> %s",
				  (unsigned long long)ent.inode, c->pid, proto, kl, kr);
		} else {
			ok = 1;
			/* a TCP listener of the process: every conversation on
			 * its local end is one it accepted (another uid cannot
			 * bind a port a listener holds) */
			if (any_remote && c->proto == IPPROTO_TCP && !ent.rport &&
			    unspecified(&ent.raddr))
				*any_remote = 1;
		}
		goto out;
	}
	if (c->proto == IPPROTO_UDP) {
		util_errf(why, whylen, "no udp socket receives %s -> %s (the kernel's sockets of the port's namespace)",
			  r, l);
		goto out;
	}
	if (walked)
		*walked = 1;
	ok = bound_only(c, &h, ents, why, whylen);
out:
	if (!h.borrowed)
		free(h.socks);
	free(ents);
	return ok ? CLAIMV_VERIFIED : CLAIMV_UNVERIFIED;
}

enum claimv_state claimv_verify_port(const struct claimv_claim *c, int *any_remote, int *walked,
				     char *why, size_t whylen)
{
	return verify(NULL, 0, c, any_remote, walked, why, whylen);
}

void claimv_batch(struct claimv *cv, int on)
{
	cv->batch = on;
	cv->nbns = 0;
}

/* The inode of namespace fd nsfd (-1: ours), 0 unknown. Ours is looked
 * up once: a path walk through /proc per claim was most of an engine
 * table's poll (bench_scale engine), and the daemon's thread is back in
 * its own namespace whenever it checks a claim. */
static uint64_t ns_ino(struct claimv *cv, int nsfd)
{
	struct stat st;

	if (nsfd == CLAIMV_NO_PORT)
		return 0;
	if (nsfd < 0 && cv->self_ns)
		return cv->self_ns;
	for (unsigned i = 0; cv->batch && nsfd >= 0 && i < cv->nbns; i++)
		if (cv->bns[i].fd == nsfd)
			return cv->bns[i].ino;
	cv->st.ns_reads++;
	if (nsfd >= 0 ? fstat(nsfd, &st) : stat("/proc/self/ns/net", &st))
		return 0;
	if (nsfd < 0)
		cv->self_ns = (uint64_t)st.st_ino;
	else if (cv->batch && cv->nbns < CLAIMV_BATCH_NS) {
		cv->bns[cv->nbns].fd = nsfd;
		cv->bns[cv->nbns++].ino = (uint64_t)st.st_ino;
	}
	return (uint64_t)st.st_ino;
}

static void key_of(struct ckey *k, const struct claimv_claim *c, uint64_t ns)
{
	memset(k, 0, sizeof(*k));
	k->pid = c->pid;
	k->start = c->start;
	k->uid = c->uid;
	k->ns = ns;
	k->fd = c->fd;
	k->inode = c->inode;
	k->laddr = c->laddr;
	k->raddr = c->raddr;
	k->lport = c->lport;
	k->rport = c->rport;
	k->proto = c->proto;
	if (c->lib)
		util_strlcpy(k->lib, c->lib, sizeof(k->lib));
}

/* The slot of k, or the free slot where it goes; NULL when full. */
static struct centry *slot_of(struct claimv *cv, const struct ckey *k)
{
	unsigned h = (unsigned)(siphash24(&cv->sip, k, sizeof(*k)) % cv->cap);

	for (unsigned i = 0; i < cv->cap; i++) {
		struct centry *s = &cv->tab[(h + i) % cv->cap];

		if (!s->used || !memcmp(&s->k, k, sizeof(*k)))
			return s;
	}
	return NULL;
}

/* slot_of, trying the slot *hint names first (hint may be NULL): that
 * slot only if it holds k; *hint is set to the slot found in use. */
static struct centry *slot_hinted(struct claimv *cv, const struct ckey *k, uint32_t *hint)
{
	struct centry *s;

	if (hint && *hint && *hint <= cv->cap) {
		s = &cv->tab[*hint - 1];
		if (s->used && !memcmp(&s->k, k, sizeof(*k))) {
			cv->st.hint_hits++;
			return s;
		}
	}
	cv->st.lookups++;
	s = slot_of(cv, k);
	if (hint && s && s->used)
		*hint = (uint32_t)(s - cv->tab) + 1;
	return s;
}

/* (b) for c's process, from what was read of it before, or read now. */
static int lib_cached(struct claimv *cv, const struct claimv_claim *c, char *why, size_t whylen)
{
	struct clib *l = &cv->libs[(unsigned)c->pid % CLAIMV_LIBS];

	if (!c->lib)
		return 1;
	if (!c->start)          /* no process to remember it of: read now */
		return lib_mapped(c->pid, c->lib, why, whylen);
	if (!l->used || l->pid != c->pid || l->start != c->start ||
	    strncmp(l->lib, c->lib, sizeof(l->lib))) {
		if (util_proc_start(c->pid) != c->start) {
			util_errf(why, whylen, "pid %d is another process than the one that made the claim (its start time changed)",
				  c->pid);
			return 0;
		}
		l->used = 1;
		l->pid = c->pid;
		l->start = c->start;
		util_strlcpy(l->lib, c->lib, sizeof(l->lib));
		l->why[0] = '\0';
		l->ok = (uint8_t)lib_mapped(c->pid, c->lib, l->why, sizeof(l->why));
	}
	if (!l->ok)
		util_strlcpy(why, l->why, whylen);
	return l->ok;
}

/* uid's share (the last one when every other is taken). */
static struct cuser *user_of(struct claimv *cv, uint32_t uid)
{
	for (unsigned i = 0; i < CLAIMV_USERS - 1; i++) {
		struct cuser *u = &cv->users[i];

		if (u->used && u->uid == uid)
			return u;
		if (!u->used) {
			u->used = 1;
			u->uid = uid;
			return u;
		}
	}
	return &cv->users[CLAIMV_USERS - 1];
}

/* Forget every entry not used for a TTL (a full table): rebuilt in place
 * by reinserting the ones kept. */
static void prune(struct claimv *cv, uint64_t now)
{
	struct centry *old = cv->tab, *nt = calloc(cv->cap, sizeof(*nt));

	if (!nt)
		return;
	cv->tab = nt;
	cv->n = 0;
	for (unsigned u = 0; u < CLAIMV_USERS; u++)
		cv->users[u].entries = 0;
	for (unsigned i = 0; i < cv->cap; i++) {
		struct centry *s;

		if (!old[i].used || now - old[i].used_ns > CLAIMV_TTL_NS)
			continue;
		s = slot_of(cv, &old[i].k);
		*s = old[i];
		cv->n++;
		user_of(cv, old[i].k.uid)->entries++;
	}
	free(old);
}

enum claimv_state claimv_check(struct claimv *cv, const struct claimv_claim *c,
			       uint64_t now_ns, char *why, size_t whylen)
{
	return claimv_check_hinted(cv, c, now_ns, why, whylen, NULL);
}

enum claimv_state claimv_check_hinted(struct claimv *cv, const struct claimv_claim *c,
				      uint64_t now_ns, char *why, size_t whylen,
				      struct claimv_hint *h)
{
	struct claimv_claim rc = *c, pc;
	struct centry *s, *ps = NULL;
	struct cuser *u;
	struct ckey k, pk;
	uint64_t ns;
	int any = 0;

	/* where the flow goes decides where the socket must be: routed
	 * before it is checked */
	if (cv->route) {
		struct flow_key fk;

		flow_key_set(&fk, &c->laddr, &c->raddr, c->lport, c->rport, c->proto);
		rc.netns_fd = cv->route(cv->route_arg, cv->route_kind, &fk);
	}
	c = &rc;
	pc = rc;
	ns = ns_ino(cv, rc.netns_fd);

	/* a claim without an inode (an engine table's) is verified for every
	 * remote end once the process holds an unconnected socket on its
	 * local end: one entry per local end, not one per session */
	pc.fd = -1;
	memset(&pc.raddr, 0, sizeof(pc.raddr));
	pc.rport = 0;
	key_of(&pk, &pc, ns);
	if (!c->inode && (ps = slot_hinted(cv, &pk, h ? &h->local : NULL)) && ps->used &&
	    ps->state == CLAIMV_VERIFIED &&
	    now_ns - ps->checked_ns < CLAIMV_TTL_NS) {
		ps->used_ns = now_ns;
		if (why && whylen)
			why[0] = '\0';
		return CLAIMV_VERIFIED;
	}
	key_of(&k, c, ns);
	s = slot_hinted(cv, &k, h ? &h->claim : NULL);
	if (s && s->used && now_ns - s->checked_ns < CLAIMV_TTL_NS) {
		s->used_ns = now_ns;
		util_strlcpy(why ? why : (char[1]){ 0 }, s->why, why ? whylen : 1);
		return (enum claimv_state)s->state;
	}
	u = user_of(cv, c->uid);
	if (now_ns - cv->window_ns >= 1000000000ull) {
		cv->window_ns = now_ns;
		cv->spent = 0;
	}
	if (now_ns - u->window_ns >= 1000000000ull) {
		u->window_ns = now_ns;
		u->spent = 0;
	}
	if (u->spent >= cv->rate || cv->spent >= cv->rate * CLAIMV_TOTAL_RATES) {
		cv->st.deferred++;
		util_errf(why, whylen, "not checked yet (more than %u claims a second%s)", cv->rate,
			  u->spent >= cv->rate ? " of this uid" : " in all");
		/* an answer past its TTL is no answer: never kept verified */
		return CLAIMV_UNCHECKED;
	}
	cv->st.checks++;
	if (!s || (!s->used && (cv->n >= CLAIMV_MAX_ENTRIES ||
				u->entries >= CLAIMV_USER_ENTRIES))) {
		prune(cv, now_ns);
		s = slot_of(cv, &k);
		if (s && !s->used && (cv->n >= CLAIMV_MAX_ENTRIES ||
				      u->entries >= CLAIMV_USER_ENTRIES))
			s = NULL;       /* every entry (or the uid's) in use: checked, not kept */
	}
	{
		char w[120];
		int walked = 0;
		uint64_t t0 = loop_mono_ns(), cost;
		enum claimv_state st = CLAIMV_UNVERIFIED;
		struct claimv_claim nl = *c;

		nl.lib = NULL;
		if (lib_cached(cv, c, w, sizeof(w)))
			st = verify(cv, now_ns, &nl, &any, &walked, w, sizeof(w));

		/* charged by the time it took (a check a millisecond, at
		 * least one), and a walk of the bind hash as CLAIMV_WALK_COST
		 * checks */
		cost = 1 + (loop_mono_ns() - t0) / 1000000u;
		if (walked && cost < CLAIMV_WALK_COST)
			cost = CLAIMV_WALK_COST;
		cv->spent += (unsigned)cost;
		u->spent += (unsigned)cost;

		if (st == CLAIMV_VERIFIED)
			cv->st.verified++;
		else
			cv->st.unverified++;
		if (s) {
			if (!s->used) {
				cv->n++;
				u->entries++;
			}
			s->k = k;
			s->used = 1;
			s->state = (uint8_t)st;
			s->checked_ns = s->used_ns = now_ns;
			util_strlcpy(s->why, w, sizeof(s->why));
			if (h)
				h->claim = (uint32_t)(s - cv->tab) + 1;
		}
		if (st == CLAIMV_VERIFIED && any && !c->inode && (ps = slot_of(cv, &pk)) &&
		    (ps->used || (cv->n < CLAIMV_MAX_ENTRIES && u->entries < CLAIMV_USER_ENTRIES))) {
			if (!ps->used) {
				cv->n++;
				u->entries++;
			}
			ps->k = pk;
			ps->used = 1;
			ps->state = CLAIMV_VERIFIED;
			ps->checked_ns = ps->used_ns = now_ns;
			ps->why[0] = '\0';
			if (h)
				h->local = (uint32_t)(ps - cv->tab) + 1;
		}
		if (why && whylen)
			util_strlcpy(why, w, whylen);
		return st;
	}
}
