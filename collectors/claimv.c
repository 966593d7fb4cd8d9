/* claimv: engines' claims checked against the kernel. See claimv.h. */
#include "collectors/claimv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/flow_sockdiag.h"
#include "lib/procfd.h"
#include "lib/siphash.h"
#include "lib/util.h"

#define CLAIMV_MAPS_MAX (4u << 20)      /* bytes of /proc/PID/maps read */
#define CLAIMV_PORT_SOCKS 256u          /* sockets on one port looked at */
#define CLAIMV_DEF_RATE 64u
#define CLAIMV_WALK_COST 16u

/* The part of a claim that identifies it (hashed and compared as bytes). */
struct ckey {
	int32_t pid, fd;
	uint64_t inode;
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

struct claimv {
	struct sip_key sip;
	struct centry *tab;             /* open addressing, CLAIMV_MAX_ENTRIES * 2 */
	unsigned cap, n;
	unsigned rate, spent;
	uint64_t window_ns;
	struct claimv_stats st;
};

const char *claimv_state_name(enum claimv_state s)
{
	return s == CLAIMV_VERIFIED ? "verified" : s == CLAIMV_UNVERIFIED ? "unverified" :
	       "unchecked";
}

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

void claimv_free(struct claimv *cv)
{
	if (!cv)
		return;
	free(cv->tab);
	free(cv);
}

void claimv_stats(const struct claimv *cv, struct claimv_stats *out)
{
	*out = cv->st;
	out->entries = cv->n;
}

int claimv_maps_find(const char *maps, size_t len, const char *lib, char *path, size_t plen)
{
	size_t ll = strlen(lib);

	for (size_t i = 0; i < len;) {
		const char *line = maps + i, *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		const char *p = memchr(line, '/', n), *base;
		size_t pn;

		i += n + 1;
		/* "addr perms offset dev inode   /path": the path starts at
		 * the first '/' (nothing before it has one) */
		if (!p)
			continue;
		pn = n - (size_t)(p - line);
		base = p;
		for (const char *q = p; q < p + pn; q++)
			if (*q == '/')
				base = q + 1;
		if ((size_t)(p + pn - base) < ll || memcmp(base, lib, ll))
			continue;
		if (pn >= plen)
			continue;
		memcpy(path, p, pn);
		path[pn] = '\0';
		return 1;
	}
	return 0;
}

/* (b): the process maps a root-installed file named lib*. */
static int lib_mapped(int pid, const char *lib, char *why, size_t whylen)
{
	char mp[64], path[4096];
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	struct stat st;
	ssize_t r;
	int fd, found;

	snprintf(mp, sizeof(mp), "/proc/%d/maps", pid);
	fd = open(mp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		util_errf(why, whylen, "%s: %s", mp, buf ? strerror(errno) : "out of memory");
		if (fd >= 0)
			close(fd);
		free(buf);
		return 0;
	}
	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *nb = cap < CLAIMV_MAPS_MAX ? realloc(buf, cap * 2) : NULL;

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	found = claimv_maps_find(buf, len, lib, path, sizeof(path));
	free(buf);
	if (!found) {
		util_errf(why, whylen, "process %d does not map %s*", pid, lib);
		return 0;
	}
	if (stat(path, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		util_errf(why, whylen, "process %d maps %s, which is not a file only root may write",
			  pid, path);
		return 0;
	}
	return 1;
}

static int unspecified(const struct in6_addr *a)
{
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	return IN6_IS_ADDR_UNSPECIFIED(a) || !memcmp(a, v4any, 16);
}

/* The kernel's socket e against the claim: local end equal (or e bound to
 * the wildcard), remote end equal unless e is connected to nothing. */
static int ent_agrees(const struct sockdiag_ent *e, const struct claimv_claim *c)
{
	if (e->lport != c->lport || (!unspecified(&e->laddr) && memcmp(&e->laddr, &c->laddr, 16)))
		return 0;
	if (!e->rport && unspecified(&e->raddr))
		return 1;
	return e->rport == c->rport && !memcmp(&e->raddr, &c->raddr, 16);
}

static int held(const uint64_t *socks, int n, uint64_t inode)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int m = lo + (hi - lo) / 2;

		if (socks[m] == inode)
			return 1;
		if (socks[m] < inode)
			lo = m + 1;
		else
			hi = m - 1;
	}
	return 0;
}

/* Do the sockets found settle the claim: the claimed socket is among
 * them, or (no inode claimed) one the process holds agrees? */
static int port_decides(const struct sockdiag_ent *ents, int n, const uint64_t *socks,
			int nsocks, const struct claimv_claim *c)
{
	for (int i = 0; i < n; i++) {
		if (c->inode && ents[i].inode == c->inode)
			return 1;
		if (!c->inode && held(socks, nsocks, ents[i].inode) && ent_agrees(&ents[i], c))
			return 1;
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

enum claimv_state claimv_verify_port(const struct claimv_claim *c, int *any_remote, int *walked,
				     char *why, size_t whylen)
{
	struct sockdiag_ent *ents = NULL;
	uint64_t *socks = NULL;
	char e[200], l[64], nsp[64];
	int ns = -1, nents, nsocks, ok = 0, same = -1;
	const char *proto = c->proto == IPPROTO_UDP ? "udp" : "tcp";

	if (any_remote)
		*any_remote = 0;
	if (walked)
		*walked = 0;
	if (why && whylen)
		why[0] = '\0';
	fmt_end(&c->laddr, c->lport, l, sizeof(l));
	if (c->pid <= 0 || (c->proto != IPPROTO_TCP && c->proto != IPPROTO_UDP) || !c->lport) {
		util_errf(why, whylen, "no pid, protocol or local port to check");
		return CLAIMV_UNVERIFIED;
	}
	if (c->lib && !lib_mapped(c->pid, c->lib, why, whylen))
		return CLAIMV_UNVERIFIED;
	socks = malloc(CLAIMV_MAX_SOCKS * sizeof(*socks));
	ents = malloc(CLAIMV_PORT_SOCKS * sizeof(*ents));
	if (!socks || !ents) {
		util_errf(why, whylen, "out of memory");
		goto out;
	}
	/* (a) */
	nsocks = procfd_pid_sockets(c->pid, socks, CLAIMV_MAX_SOCKS, NULL);
	if (nsocks < 0) {
		util_errf(why, whylen, "/proc/%d/fd: %s", c->pid, strerror(-nsocks));
		goto out;
	}
	if (c->inode && !held(socks, nsocks, c->inode)) {
		util_errf(why, whylen, "process %d holds no socket inode %llu", c->pid,
			  (unsigned long long)c->inode);
		goto out;
	}
	/* (c), in the process's own network namespace */
	snprintf(nsp, sizeof(nsp), "/proc/%d/ns/net", c->pid);
	ns = open(nsp, O_RDONLY | O_CLOEXEC);
	if (ns < 0) {
		util_errf(why, whylen, "%s: %s", nsp, strerror(errno));
		goto out;
	}
	if (c->proto == IPPROTO_TCP) {
		/* TCP: the socket the kernel gives the claimed conversation
		 * to (a hash lookup: a dump walks the whole established hash,
		 * milliseconds); only when that does not settle it, the
		 * sockets only bound to the port (VMA's OS socket of a
		 * connection it made), a walk of the bind hash */
		nents = sockdiag_tcp_lookup(ns, &c->laddr, c->lport, &c->raddr, c->rport, ents, e,
					    sizeof(e));
		if (nents >= 0 && !port_decides(ents, nents, socks, nsocks, c)) {
			int more = sockdiag_port_sockets(ns, c->proto, c->lport, 1, ents + nents,
							 CLAIMV_PORT_SOCKS - (size_t)nents, e,
							 sizeof(e));

			if (walked)
				*walked = 1;
			nents = more < 0 ? more : nents + more;
		}
	} else {
		nents = sockdiag_port_sockets(ns, c->proto, c->lport, 0, ents, CLAIMV_PORT_SOCKS, e,
					      sizeof(e));
	}
	if (nents < 0) {
		util_errf(why, whylen, "%s", e);
		goto out;
	}
	for (int i = 0; i < nents; i++) {
		if (c->inode && ents[i].inode == c->inode)
			same = i;
		if (held(socks, nsocks, ents[i].inode) && ent_agrees(&ents[i], c)) {
			ok = 1;
			/* bound, connected to nothing: this process's local
			 * end, whatever the remote end a claim names */
			if (any_remote && !ents[i].rport && unspecified(&ents[i].raddr))
				*any_remote = 1;
		}
	}
	if (same >= 0 && !ent_agrees(&ents[same], c)) {
		char kl[64], kr[64];

		/* the claimed socket itself is elsewhere */
		fmt_end(&ents[same].laddr, ents[same].lport, kl, sizeof(kl));
		fmt_end(&ents[same].raddr, ents[same].rport, kr, sizeof(kr));
		util_errf(why, whylen, "the kernel has socket inode %llu of process %d as %s %s -> %s",
			  (unsigned long long)c->inode, c->pid, proto, kl, kr);
		ok = 0;
	} else if (ok && c->inode && same < 0 && c->proto == IPPROTO_UDP) {
		/* a VMA/XLIO UDP socket binds its OS socket where it is bound
		 * (sockinfo_udp::bind()): it must be on the port itself; only
		 * an accepted TCP connection's OS socket is bound to nothing */
		util_errf(why, whylen, "socket inode %llu of process %d is not bound to udp %s (the kernel's sockets of its namespace)",
			  (unsigned long long)c->inode, c->pid, l);
		ok = 0;
	} else if (!ok) {
		util_errf(why, whylen, "process %d holds no %s socket on %s (the kernel's sockets of its namespace)",
			  c->pid, proto, l);
	}
out:
	if (ns >= 0)
		close(ns);
	free(socks);
	free(ents);
	return ok ? CLAIMV_VERIFIED : CLAIMV_UNVERIFIED;
}

static void key_of(struct ckey *k, const struct claimv_claim *c)
{
	memset(k, 0, sizeof(*k));
	k->pid = c->pid;
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

/* Forget every entry not used for a TTL (a full table): rebuilt in place
 * by reinserting the ones kept. */
static void prune(struct claimv *cv, uint64_t now)
{
	struct centry *old = cv->tab, *nt = calloc(cv->cap, sizeof(*nt));

	if (!nt)
		return;
	cv->tab = nt;
	cv->n = 0;
	for (unsigned i = 0; i < cv->cap; i++) {
		struct centry *s;

		if (!old[i].used || now - old[i].used_ns > CLAIMV_TTL_NS)
			continue;
		s = slot_of(cv, &old[i].k);
		*s = old[i];
		cv->n++;
	}
	free(old);
}

enum claimv_state claimv_check(struct claimv *cv, const struct claimv_claim *c,
			       uint64_t now_ns, char *why, size_t whylen)
{
	struct claimv_claim pc = *c;
	struct centry *s, *ps = NULL;
	struct ckey k, pk;
	int any = 0;

	/* a claim without an inode (an engine table's) is verified for every
	 * remote end once the process holds an unconnected socket on its
	 * local end: one entry per local end, not one per session */
	pc.fd = -1;
	memset(&pc.raddr, 0, sizeof(pc.raddr));
	pc.rport = 0;
	key_of(&pk, &pc);
	if (!c->inode && (ps = slot_of(cv, &pk)) && ps->used && ps->state == CLAIMV_VERIFIED &&
	    now_ns - ps->checked_ns < CLAIMV_TTL_NS) {
		ps->used_ns = now_ns;
		if (why && whylen)
			why[0] = '\0';
		return CLAIMV_VERIFIED;
	}
	key_of(&k, c);
	s = slot_of(cv, &k);
	if (s && s->used && now_ns - s->checked_ns < CLAIMV_TTL_NS) {
		s->used_ns = now_ns;
		util_strlcpy(why ? why : (char[1]){ 0 }, s->why, why ? whylen : 1);
		return (enum claimv_state)s->state;
	}
	if (now_ns - cv->window_ns >= 1000000000ull) {
		cv->window_ns = now_ns;
		cv->spent = 0;
	}
	if (cv->spent >= cv->rate) {
		cv->st.deferred++;
		util_errf(why, whylen, "not checked yet (more than %u claims a second)", cv->rate);
		return s && s->used ? (enum claimv_state)s->state : CLAIMV_UNCHECKED;
	}
	cv->spent++;
	cv->st.checks++;
	if (!s || (!s->used && cv->n >= CLAIMV_MAX_ENTRIES)) {
		prune(cv, now_ns);
		s = slot_of(cv, &k);
		if (s && !s->used && cv->n >= CLAIMV_MAX_ENTRIES)
			s = NULL;       /* every entry in use: checked, not kept */
	}
	{
		char w[120];
		int walked;
		enum claimv_state st = claimv_verify_port(c, &any, &walked, w, sizeof(w));

		/* a walk of the bind hash costs as much as CLAIMV_WALK_COST
		 * checks */
		if (walked)
			cv->spent += CLAIMV_WALK_COST - 1;

		if (st == CLAIMV_VERIFIED)
			cv->st.verified++;
		else
			cv->st.unverified++;
		if (s) {
			if (!s->used)
				cv->n++;
			s->k = k;
			s->used = 1;
			s->state = (uint8_t)st;
			s->checked_ns = s->used_ns = now_ns;
			util_strlcpy(s->why, w, sizeof(s->why));
		}
		if (st == CLAIMV_VERIFIED && any && !c->inode && (ps = slot_of(cv, &pk)) &&
		    (ps->used || cv->n < CLAIMV_MAX_ENTRIES)) {
			if (!ps->used)
				cv->n++;
			ps->k = pk;
			ps->used = 1;
			ps->state = CLAIMV_VERIFIED;
			ps->checked_ns = ps->used_ns = now_ns;
			ps->why[0] = '\0';
		}
		if (why && whylen)
			util_strlcpy(why, w, whylen);
		return st;
	}
}
