/* Unit tests: claims checked against the kernel (collectors/flows/claimv.c),
 * on this process's own sockets: what it holds verifies, what it names
 * without holding does not (issue 34, finding 2). Needs sock_diag (root
 * or not: a process may dump its namespace's sockets). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/flows/claimv.h"
#include "lib/procfd.h"
#include "lib/util.h"

#define SEC 1000000000ull

struct own {
	int fd;
	uint64_t inode;
	struct sockaddr_in a;
};

/* A socket of type bound to 127.0.0.1 on a port the kernel picks. */
static struct own own_socket(int type, int listen_too)
{
	struct own o = { .fd = socket(AF_INET, type, 0) };
	socklen_t sl = sizeof(o.a);
	struct stat st;

	assert_true(o.fd >= 0);
	o.a.sin_family = AF_INET;
	o.a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(o.fd, (struct sockaddr *)&o.a, sizeof(o.a)), 0);
	if (listen_too)
		assert_int_equal(listen(o.fd, 1), 0);
	assert_int_equal(getsockname(o.fd, (struct sockaddr *)&o.a, &sl), 0);
	assert_int_equal(fstat(o.fd, &st), 0);
	o.inode = st.st_ino;
	return o;
}

static void v4(struct in6_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = a->s6_addr[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, s, &a->s6_addr[12]), 1);
}

static struct claimv_claim claim_of(const struct own *o, uint8_t proto)
{
	struct claimv_claim c = { .pid = getpid(), .start = util_proc_start(getpid()),
				  .uid = (uint32_t)getuid(), .netns_fd = -1, .fd = o->fd,
				  .inode = o->inode, .proto = proto, .lport = o->a.sin_port,
				  .rport = htons(40000) };

	v4(&c.laddr, "127.0.0.1");
	v4(&c.raddr, "10.9.0.9");
	return c;
}

static void procfd__own_socket__inode_and_listed(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	uint64_t ino = 0, socks[64];
	int n, found = 0;

	(void)state;
	assert_int_equal(procfd_fd_inode(getpid(), o.fd, &ino), 0);
	assert_int_equal(ino, o.inode);
	assert_int_equal(procfd_fd_inode(getpid(), 0, &ino) == 0 ? 0 : 1, 1);  /* stdin: no socket */
	n = procfd_pid_sockets(getpid(), socks, 64, NULL);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++)
		found |= socks[i] == o.inode;
	assert_true(found);
	close(o.fd);
}

static void claimv_verify__udp_socket_held__verified(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP);
	char why[200];

	(void)state;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_VERIFIED);
	assert_string_equal(why, "");
	close(o.fd);
}

/* The forgery of the issue: the file names another conversation's port
 * and an inode the process does not hold. */
static void claimv_verify__forged_inode_or_port__unverified(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0), other = own_socket(SOCK_DGRAM, 0);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP);
	char why[200];

	(void)state;
	c.inode = 777;          /* held by nobody */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "is not socket inode 777"));
	/* its own socket, claimed on another socket's port */
	c = claim_of(&o, IPPROTO_UDP);
	c.lport = other.a.sin_port;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "not the claimed"));
	/* the right port, another local address */
	c = claim_of(&o, IPPROTO_UDP);
	v4(&c.laddr, "10.9.0.1");
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	/* the right socket, the wrong protocol */
	c = claim_of(&o, IPPROTO_TCP);
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	close(o.fd);
	close(other.fd);
}

/* Another process's socket: the claimer does not hold it. */
static void claimv_verify__another_process_socket__unverified(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP);
	int p[2], r[2];
	pid_t kid;
	char b, why[200];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(r), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {         /* holds nothing of the parent's but the pipes */
		close(o.fd);
		close(p[1]);
		close(r[0]);
		(void)!write(r[1], "k", 1);
		(void)!read(p[0], &b, 1);
		_exit(0);
	}
	close(p[0]);
	close(r[1]);
	assert_int_equal(read(r[0], &b, 1), 1);        /* the child let go of it */
	close(r[0]);
	c.pid = kid;
	c.start = util_proc_start(kid);
	c.inode = 0;            /* engine-table style: no inode, the port only */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "not one process"));
	close(p[1]);
	waitpid(kid, NULL, 0);
	close(o.fd);
}

/* Engine tables: no inode; a listening (or only bound) TCP socket on the
 * local end proves it for every remote end. */
static void claimv_check__tcp_listener_no_inode__verified_cached_per_port(void **state)
{
	struct own l = own_socket(SOCK_STREAM, 1), b = own_socket(SOCK_STREAM, 0);
	struct claimv *cv = claimv_new(4);
	struct claimv_claim c = claim_of(&l, IPPROTO_TCP);
	struct claimv_stats st;
	char why[200];

	(void)state;
	assert_non_null(cv);
	c.inode = 0;
	c.fd = -1;
	assert_int_equal(claimv_check(cv, &c, 1 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	for (unsigned r = 1; r < 50; r++) {     /* 50 sessions, one check */
		c.rport = htons((uint16_t)(40000 + r));
		assert_int_equal(claimv_check(cv, &c, 1 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	}
	claimv_stats(cv, &st);
	assert_int_equal(st.checks, 1);
	/* a socket only bound (TCP_CLOSE): sock_diag shows it since 6.8 */
	c = claim_of(&b, IPPROTO_TCP);
	c.inode = 0;
	(void)claimv_check(cv, &c, 1 * SEC, why, sizeof(why));
	/* the budget: 4 checks a second; the rest wait, never verified */
	for (unsigned r = 0; r < 8; r++) {
		struct claimv_claim f = claim_of(&l, IPPROTO_UDP);

		f.lport = htons((uint16_t)(20000 + r));
		assert_int_not_equal(claimv_check(cv, &f, 1 * SEC, why, sizeof(why)),
				     CLAIMV_VERIFIED);
	}
	claimv_stats(cv, &st);
	assert_true(st.deferred >= 4);
	/* a second later the budget is back, and a cached answer is kept
	 * until CLAIMV_TTL_NS */
	c = claim_of(&l, IPPROTO_TCP);
	c.inode = 0;
	assert_int_equal(claimv_check(cv, &c, 2 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	close(l.fd);
	assert_int_equal(claimv_check(cv, &c, 2 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	assert_int_equal(claimv_check(cv, &c, 2 * SEC + CLAIMV_TTL_NS, why, sizeof(why)),
			 CLAIMV_UNVERIFIED);
	close(b.fd);
	claimv_free(cv);
}

/* A child that makes its sockets where told, then waits: fn runs in it
 * and writes what the parent needs to w; the parent reads len bytes. */
struct kid {
	pid_t pid;
	int go;         /* write a byte: the child exits */
};

static struct kid kid_run(void (*fn)(int w), void *out, size_t len)
{
	int p[2], r[2];
	struct kid k;
	char b;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(r), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		close(p[1]);
		close(r[0]);
		fn(r[1]);
		(void)!read(p[0], &b, 1);
		_exit(0);
	}
	close(p[0]);
	close(r[1]);
	assert_int_equal(read(r[0], out, len), (ssize_t)len);
	close(r[0]);
	k.go = p[1];
	return k;
}

static void kid_end(struct kid *k)
{
	close(k->go);
	waitpid(k->pid, NULL, 0);
}

/* In a network namespace of its own (what `unshare -Urn` gives any user):
 * a UDP socket and a TCP listener on the wildcard, port sent back. */
static void kid_netns(int w)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	int u, t;
	uint16_t port = 0;

	if (unshare(CLONE_NEWNET) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		_exit(1);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	if (bind(u, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(u, (struct sockaddr *)&a, &sl) < 0)
		_exit(1);
	t = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 1) < 0)
		_exit(1);
	port = a.sin_port;
	(void)!write(w, &port, sizeof(port));
}

/* 1c: a claim is checked in the namespace of the port it routes to, not
 * the claimer's: sockets of a namespace the user made prove nothing. */
static void claimv_verify__socket_in_own_netns__unverified(void **state)
{
	uint16_t port;
	struct kid k = kid_run(kid_netns, &port, sizeof(port));
	struct claimv_claim c = { .pid = k.pid, .start = util_proc_start(k.pid),
				  .uid = (uint32_t)getuid(), .netns_fd = -1, .fd = -1,
				  .lport = port, .rport = htons(40000) };
	char why[200];

	(void)state;
	v4(&c.laddr, "127.0.0.1");
	v4(&c.raddr, "10.9.0.9");
	c.proto = IPPROTO_UDP;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	c.proto = IPPROTO_TCP;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	/* no watched port takes it */
	c.netns_fd = CLAIMV_NO_PORT;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "no watched port"));
	kid_end(&k);
}

static uint16_t g_port;         /* the port the "other user" binds */

/* Another uid's IPv4 UDP socket and TCP listener on 127.0.0.1:g_port. */
static void kid_other_uid(int w)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = g_port };
	int u, t;
	char ok = 'k';

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setgid(65534) < 0 || setuid(65534) < 0)
		_exit(1);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	t = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(u, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 1) < 0)
		ok = 'n';
	(void)!write(w, &ok, 1);
}

/* 1b: "[::]:P" with IPV6_V6ONLY beside another uid's IPv4 sockets on P:
 * the kernel gives the IPv4 conversations to the other uid, so a claim
 * of one by the holder of the IPv6 socket is not verified (the TCP one
 * only bound, the UDP one bound). */
static void claimv_verify__v6only_wildcard_beside_other_uid__unverified(void **state)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	socklen_t sl = sizeof(a6);
	int one = 1, u6, t6;
	struct claimv_claim c = { .pid = getpid(), .start = util_proc_start(getpid()),
				  .uid = (uint32_t)getuid(), .netns_fd = -1, .fd = -1,
				  .rport = htons(40000) };
	struct kid k;
	char ok, why[200];

	(void)state;
	if (getuid() != 0)
		skip();
	u6 = socket(AF_INET6, SOCK_DGRAM, 0);
	t6 = socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(setsockopt(u6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_int_equal(setsockopt(t6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_int_equal(bind(u6, (struct sockaddr *)&a6, sizeof(a6)), 0);
	assert_int_equal(getsockname(u6, (struct sockaddr *)&a6, &sl), 0);
	assert_int_equal(bind(t6, (struct sockaddr *)&a6, sizeof(a6)), 0);   /* only bound */
	g_port = a6.sin6_port;
	k = kid_run(kid_other_uid, &ok, 1);
	assert_int_equal(ok, 'k');
	c.lport = g_port;
	v4(&c.laddr, "127.0.0.1");
	v4(&c.raddr, "10.9.0.9");
	c.proto = IPPROTO_UDP;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "uid 65534"));
	c.proto = IPPROTO_TCP;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "uid 65534"));
	/* its own IPv6 conversations are its */
	memset(&c.laddr, 0, sizeof(c.laddr));
	c.laddr.s6_addr[15] = 1;
	c.proto = IPPROTO_UDP;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_VERIFIED);
	kid_end(&k);
	close(u6);
	close(t6);
}

/* Another uid's TCP socket only bound to 0.0.0.0:g_port (SO_REUSEADDR). */
static void kid_other_uid_bound(int w)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = g_port };
	int one = 1, t;
	char ok = 'k';

	if (setgid(65534) < 0 || setuid(65534) < 0)
		_exit(1);
	t = socket(AF_INET, SOCK_STREAM, 0);
	if (setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(t, (struct sockaddr *)&a, sizeof(a)) < 0)
		ok = 'n';
	(void)!write(w, &ok, 1);
}

/* 1b: the bound-only proof (a TCP socket only bound, nothing takes the
 * conversation) holds only for the exact local address, and not when
 * another uid also has a socket on the port that overlaps it. */
static void claimv_verify__bound_only_beside_other_uid__unverified(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	int one = 1, t = socket(AF_INET, SOCK_STREAM, 0);
	struct claimv_claim c = { .pid = getpid(), .start = util_proc_start(getpid()),
				  .uid = (uint32_t)getuid(), .netns_fd = -1, .fd = -1,
				  .proto = IPPROTO_TCP, .rport = htons(40000) };
	struct kid k;
	char ok, why[200];

	(void)state;
	if (getuid() != 0)
		skip();
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(bind(t, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(t, (struct sockaddr *)&a, &sl), 0);
	c.lport = g_port = a.sin_port;
	v4(&c.laddr, "127.0.0.1");
	v4(&c.raddr, "10.9.0.9");
	/* alone on the port: its own exact local end */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_VERIFIED);
	/* another address than the one it is bound to */
	v4(&c.laddr, "127.0.0.2");
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	v4(&c.laddr, "127.0.0.1");
	k = kid_run(kid_other_uid_bound, &ok, 1);
	assert_int_equal(ok, 'k');
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "uid 65534 also has"));
	kid_end(&k);
	close(t);
}

/* 1f: a pid reused by another process, or run by another uid, is not the
 * claimer: its sockets prove nothing. */
static void claimv_verify__pid_reused_or_other_uid__unverified(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP);
	char why[200];

	(void)state;
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_VERIFIED);
	c.start += 1;           /* the file was opened for an earlier process */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "start time"));
	c = claim_of(&o, IPPROTO_UDP);
	c.uid += 1;             /* a file of another owner */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	close(o.fd);
}

/* 1e: the budget is per uid (one uid's flood leaves another's claims
 * checked) and an answer past its TTL is not kept verified while the
 * budget is spent. */
static void claimv_check__budget_per_uid_and_expired_not_kept(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv *cv = claimv_new(4);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP), f, g;
	char why[200];

	(void)state;
	assert_non_null(cv);
	assert_int_equal(claimv_check(cv, &c, 1 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	/* past the TTL, the uid floods first: its budget is spent */
	for (unsigned r = 0; r < 8; r++) {
		f = claim_of(&o, IPPROTO_UDP);
		f.lport = htons((uint16_t)(20000 + r));
		(void)claimv_check(cv, &f, 1 * SEC + CLAIMV_TTL_NS, why, sizeof(why));
	}
	assert_int_equal(claimv_check(cv, &c, 1 * SEC + CLAIMV_TTL_NS, why, sizeof(why)),
			 CLAIMV_UNCHECKED);
	/* another uid's claim is still checked (its owner is not this
	 * process's: unverified, but checked) */
	g = claim_of(&o, IPPROTO_UDP);
	g.uid = c.uid + 1;
	assert_int_equal(claimv_check(cv, &g, 1 * SEC + CLAIMV_TTL_NS, why, sizeof(why)),
			 CLAIMV_UNVERIFIED);
	/* a second later the uid's budget is back */
	assert_int_equal(claimv_check(cv, &c, 2 * SEC + CLAIMV_TTL_NS, why, sizeof(why)),
			 CLAIMV_VERIFIED);
	close(o.fd);
	claimv_free(cv);
}

/* 6: an engine table's records (no inode, one owner) cost one walk of
 * the owner's /proc/PID/fd a second, not one each. */
static void claimv_check__table_records__one_fd_walk_a_second(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv *cv = claimv_new(64);
	struct claimv_stats st;
	char why[200];

	(void)state;
	assert_non_null(cv);
	for (unsigned r = 0; r < 20; r++) {
		struct claimv_claim c = claim_of(&o, IPPROTO_UDP);

		c.inode = 0;
		c.fd = -1;
		c.rport = htons((uint16_t)(41000 + r));
		assert_int_equal(claimv_check(cv, &c, 1 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	}
	claimv_stats(cv, &st);
	assert_int_equal(st.checks, 20);
	assert_int_equal(st.fd_walks, 1);
	close(o.fd);
	claimv_free(cv);
}

static int route_to(void *arg, int src_kind, const struct flow_key *k)
{
	(void)src_kind;
	(void)k;
	return *(int *)arg;
}

/* An engine table's records, checked at every poll: a record's hint finds
 * its claim's entry without a hash, a hint of another claim's entry is a
 * lookup and never that claim's answer, and in a batch the namespace the
 * claims route to is looked at once, not once a claim. */
static void claimv_check_hinted__hints_and_batch__same_answers_fewer_lookups(void **state)
{
	struct own l = own_socket(SOCK_STREAM, 1), o = own_socket(SOCK_DGRAM, 0);
	struct claimv *cv = claimv_new(64);
	struct claimv_claim c = claim_of(&l, IPPROTO_TCP), d = claim_of(&o, IPPROTO_UDP), f;
	struct claimv_hint hc = { 0, 0 }, hd = { 0, 0 }, hf;
	struct claimv_stats a, b;
	int nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	char why[200];

	(void)state;
	assert_non_null(cv);
	assert_true(nsfd >= 0);
	claimv_set_route(cv, 1, route_to, &nsfd);
	c.inode = 0;
	c.fd = -1;
	/* the listener's local end, for every remote end */
	assert_int_equal(claimv_check_hinted(cv, &c, 1 * SEC, why, sizeof(why), &hc),
			 CLAIMV_VERIFIED);
	assert_int_equal(claimv_check_hinted(cv, &d, 1 * SEC, why, sizeof(why), &hd),
			 CLAIMV_VERIFIED);
	claimv_stats(cv, &a);
	for (unsigned r = 0; r < 10; r++) {
		c.rport = htons((uint16_t)(42000 + r));
		assert_int_equal(claimv_check_hinted(cv, &c, 2 * SEC, why, sizeof(why), &hc),
				 CLAIMV_VERIFIED);
		assert_int_equal(claimv_check_hinted(cv, &d, 2 * SEC, why, sizeof(why), &hd),
				 CLAIMV_VERIFIED);
	}
	claimv_stats(cv, &b);
	print_message("20 hinted checks: %" PRIu64 " hash lookups, %" PRIu64 " hint hits, %"
		      PRIu64 " namespace reads\n", b.lookups - a.lookups, b.hint_hits - a.hint_hits,
		      b.ns_reads - a.ns_reads);
	assert_int_equal(b.checks, a.checks);
	assert_int_equal(b.hint_hits - a.hint_hits, 20);
	/* c by its local end's entry, d (a socket inode claimed: no local
	 * end's entry) by its own, both where their hints said */
	assert_int_equal(b.lookups - a.lookups, 0);
	assert_int_equal(b.ns_reads - a.ns_reads, 20);
	/* a forged port with the listener's hint: its own answer */
	f = c;
	f.lport = htons((uint16_t)(ntohs(l.a.sin_port) ^ 1));
	hf = hc;
	assert_int_equal(claimv_check_hinted(cv, &f, 2 * SEC, why, sizeof(why), &hf),
			 CLAIMV_UNVERIFIED);
	assert_int_equal(claimv_check_hinted(cv, &f, 2 * SEC, why, sizeof(why), &hf),
			 CLAIMV_UNVERIFIED);
	/* in a batch, one look at the namespace */
	claimv_stats(cv, &a);
	claimv_batch(cv, 1);
	for (unsigned r = 0; r < 10; r++)
		assert_int_equal(claimv_check_hinted(cv, &d, 3 * SEC, why, sizeof(why), &hd),
				 CLAIMV_VERIFIED);
	claimv_batch(cv, 0);
	claimv_stats(cv, &b);
	assert_int_equal(b.ns_reads - a.ns_reads, 1);
	/* and again after it */
	assert_int_equal(claimv_check(cv, &d, 3 * SEC, why, sizeof(why)), CLAIMV_VERIFIED);
	claimv_stats(cv, &a);
	assert_int_equal(a.ns_reads - b.ns_reads, 1);
	close(nsfd);
	close(l.fd);
	close(o.fd);
	claimv_free(cv);
}

/* (b): the engine's library must be mapped and root's. */
static void claimv_verify__library__mapped_root_owned(void **state)
{
	struct own o = own_socket(SOCK_DGRAM, 0);
	struct claimv_claim c = claim_of(&o, IPPROTO_UDP);
	char why[200];

	(void)state;
	c.lib = "libvma.so";
	assert_int_equal(claimv_verify(&c, why, sizeof(why)), CLAIMV_UNVERIFIED);
	assert_non_null(strstr(why, "runs no code from a file named libvma.so"));
	c.lib = "libc.so";      /* mapped here, installed by root */
	assert_int_equal(claimv_verify(&c, why, sizeof(why)),
			 CLAIMV_VERIFIED);
	close(o.fd);
}

static void claimv_maps_find__lines__path_of_library(void **state)
{
	static const char maps[] =
		"55d0c0000000-55d0c0001000 r--p 00000000 08:01 123 /usr/bin/sleep\n"
		"7f00 r-xp 0 08:01 5 /home/u/libvma.so.evil/libc.so.6\n"
		"7f08-7f09 r--p 0 08:01 6 /usr/lib/libvma.so.9.8.84\n"
		"7f10-7f11 r-xp 0 08:01 6 /usr/lib/libvma.so.9.8.84\n"
		"7f20 rw-p 0 00:00 0 \n"
		"7ffd rw-p 0 00:00 0 [stack]\n";
	struct claimv_map m;

	(void)state;
	/* the executable mapping, not the read-only one before it */
	assert_int_equal(claimv_maps_find(maps, sizeof(maps) - 1, "libvma.so", &m), 1);
	assert_string_equal(m.path, "/usr/lib/libvma.so.9.8.84");
	assert_string_equal(m.range, "7f10-7f11");
	assert_int_equal(m.ino, 6);
	assert_int_equal(claimv_maps_find(maps, sizeof(maps) - 1, "libxlio.so", &m), 0);
	/* a directory named like the library is not the library */
	assert_int_equal(claimv_maps_find(maps, 120, "libvma.so", &m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(procfd__own_socket__inode_and_listed),
		cmocka_unit_test(claimv_verify__udp_socket_held__verified),
		cmocka_unit_test(claimv_verify__forged_inode_or_port__unverified),
		cmocka_unit_test(claimv_verify__another_process_socket__unverified),
		cmocka_unit_test(claimv_check__tcp_listener_no_inode__verified_cached_per_port),
		cmocka_unit_test(claimv_verify__library__mapped_root_owned),
		cmocka_unit_test(claimv_verify__socket_in_own_netns__unverified),
		cmocka_unit_test(claimv_verify__v6only_wildcard_beside_other_uid__unverified),
		cmocka_unit_test(claimv_verify__pid_reused_or_other_uid__unverified),
		cmocka_unit_test(claimv_verify__bound_only_beside_other_uid__unverified),
		cmocka_unit_test(claimv_check__budget_per_uid_and_expired_not_kept),
		cmocka_unit_test(claimv_check__table_records__one_fd_walk_a_second),
		cmocka_unit_test(claimv_check_hinted__hints_and_batch__same_answers_fewer_lookups),
		cmocka_unit_test(claimv_maps_find__lines__path_of_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
