/* claimv: what an engine claims about a socket, checked against the kernel
 * before the daemon acts on it.
 *
 * A claim is a file a process wrote: a VMA/XLIO statistics block
 * (vmastat.<pid>: pid from the name, fd, inode, local and remote address),
 * or a record of an engine flow table (flowtab.h: owner_pid, local and
 * remote address, no inode). Anyone can write any of it. A claim is
 * VERIFIED only when the kernel says, in the network namespace of the
 * port the claim's flow is routed to (claimv_set_route: decided before
 * the check, as the flow will be routed; never the claimer's own
 * namespace, which any user can make with any address in it):
 *  (p) the pid is the claimer: the start time recorded when its file was
 *      opened (util_proc_start) and its uid the file's owner;
 *  (a) the process holds the socket: a VMA/XLIO block's fd is its inode
 *      (procfd_fd_inode: one readlink; sockinfo::sockinfo() sets inode =
 *      fd2inode(m_fd), libvma src/vma/sock/sockinfo.cpp, libxlio
 *      src/core/sock/sockinfo.cpp);
 *  (b) a VMA/XLIO process runs code from a file named lib* that root owns
 *      and only root may write (its executable mapping in /proc/PID/maps,
 *      the file looked at through /proc/PID/map_files, read once per
 *      process). A sanity check that it runs the engine, NOT a defence:
 *      any user may map that library;
 *  (c) the socket the kernel gives the claimed conversation to (one exact
 *      sock_diag lookup: TCP inet_diag_find_one_icsk(), UDP udp_dump_one()
 *      / __udp4_lib_lookup()) is one the process holds and the claimer's
 *      uid owns; for a VMA/XLIO UDP claim, that very socket (sockinfo_udp
 *      ::bind() binds the OS socket). If it is anyone else's: UNVERIFIED,
 *      whatever else the process holds. Only for TCP when no socket takes
 *      it (VMA's OS socket of a connection it made is only bound:
 *      sockinfo_tcp::connect()), a socket the process holds bound to
 *      exactly the claimed local address and port, with no socket of
 *      another uid on that port on an overlapping address and no dump
 *      cut short (TCP_BOUND_INACTIVE: Linux 6.8, commit 91051f003948;
 *      older kernels find none, and such claims stay unverified).
 * What this does not prove: the counters, the state, and for a TCP
 * listener the remote end. So a verified claim can at most name a
 * conversation the kernel gives its own process's socket, and a user who
 * really holds a port can make the daemon investigate their own
 * conversations on it.
 *
 * Results are cached per claim (pid, start, uid, namespace, fd, inode,
 * protocol, both ends), and for claims without an inode also per local
 * end when a TCP listener of the process proved it: a changed claim is a
 * new one, checked anew; an unchanged one is checked again CLAIMV_TTL_NS
 * after its last check (an fd closed, a socket gone, a pid reused).
 * Checks are budgeted per uid (max_per_sec each, 4 times that in all),
 * charged a unit per millisecond they took (a bind-hash walk at least
 * 16); a claim over its uid's budget is UNCHECKED (never acted on), also
 * when its cached answer expired: never kept verified. Each uid's claims
 * take at most a quarter of the cache. Everything is a few /proc reads
 * and sock_diag requests, which never wait. */
#ifndef NICSTALL_CLAIMV_H
#define NICSTALL_CLAIMV_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define CLAIMV_TTL_NS 10000000000ull    /* re-check a cached result after 10 s */
#define CLAIMV_MAX_ENTRIES 4096u        /* claims remembered */
#define CLAIMV_MAX_SOCKS 4096u          /* sockets of one process looked at */

enum claimv_state {
	CLAIMV_UNCHECKED = 0,   /* not checked yet (over the budget) */
	CLAIMV_VERIFIED = 1,
	CLAIMV_UNVERIFIED = 2,
};

struct claimv_claim {
	int pid;
	unsigned long long start;       /* the pid's start time (util_proc_start)
					 * when its file was opened: a pid
					 * reused since is another process */
	uint32_t uid;           /* who made the claim (the file's owner): the
				 * process and the socket must be its */
	int netns_fd;           /* the namespace of the port the claim's flow
				 * routes to (-1: the daemon's), where the
				 * socket must be; set by claimv_check from
				 * the route (claimv_set_route) when there
				 * is one */
	int fd;                 /* the claimed fd, -1: none */
	uint64_t inode;         /* the claimed socket inode, 0: none */
	uint8_t proto;          /* IPPROTO_TCP, IPPROTO_UDP */
	struct in6_addr laddr, raddr;   /* IPv4 as IPv4-mapped */
	uint16_t lport, rport;  /* network byte order */
	const char *lib;        /* library name prefix ("libvma.so"), NULL */
};

struct claimv;
struct flow_key;

/* The namespace a claim is checked in: that of the port its flow routes
 * to, decided as the flow will be routed. Returns the port's namespace fd
 * (-1: the daemon's), CLAIMV_NO_PORT when no watched port takes it. */
#define CLAIMV_NO_PORT (-2)
typedef int (*claimv_route_fn)(void *arg, int src_kind, const struct flow_key *k);

/* A cache; max_per_sec: checks made per second at most (0: 64). NULL when
 * out of memory. */
struct claimv *claimv_new(unsigned max_per_sec);
void claimv_free(struct claimv *cv);
/* Route every claim of source kind src_kind (enum flow_src_kind) by fn
 * before it is checked (fn NULL: each claim's own netns_fd). */
void claimv_set_route(struct claimv *cv, int src_kind, claimv_route_fn fn, void *arg);

/* The state of claim c at now_ns (CLOCK_MONOTONIC), from the cache or
 * checked now. why (may be NULL) gets what failed for UNVERIFIED, what
 * waits for UNCHECKED, "" for VERIFIED. */
enum claimv_state claimv_check(struct claimv *cv, const struct claimv_claim *c,
			       uint64_t now_ns, char *why, size_t whylen);

/* Where the cache keeps a claim its caller checks again and again (an
 * engine table's record, at each poll): slot numbers, 0 for none; zeroed
 * to begin. Only a hint: a slot is taken when it holds that very claim
 * (its whole key compared), so a stale hint costs a lookup (a hash of the
 * key and a probe), never an answer. */
struct claimv_hint {
	uint32_t local;         /* the claim's local end (verified for every
				 * remote end) */
	uint32_t claim;         /* the claim itself */
};
/* claimv_check, looking where h (may be NULL) says first; h is updated. */
enum claimv_state claimv_check_hinted(struct claimv *cv, const struct claimv_claim *c,
				      uint64_t now_ns, char *why, size_t whylen,
				      struct claimv_hint *h);
/* Between claimv_batch(cv, 1) and claimv_batch(cv, 0) the caller keeps
 * every namespace fd its claims route to open and unchanged (one poll of
 * its tables, which does nothing to the ports): each fd's namespace is
 * looked at (fstat) once in the batch, not once a claim. */
void claimv_batch(struct claimv *cv, int on);

/* Check c now, without the cache (tests, and claimv_check itself). */
enum claimv_state claimv_verify(const struct claimv_claim *c, char *why, size_t whylen);
/* The same; *any_remote (may be NULL) set when an unconnected socket of
 * the process on the local end proved it, which holds for any remote end;
 * *walked (may be NULL) when it had to walk the kernel's bind hash (TCP
 * sockets only bound: milliseconds, charged as 16 checks). */
enum claimv_state claimv_verify_port(const struct claimv_claim *c, int *any_remote, int *walked,
				     char *why, size_t whylen);

/* An executable mapping of a file: its range ("start-end", the name in
 * /proc/PID/map_files), inode and path as /proc/PID/maps shows them. */
struct claimv_map {
	char range[64];
	uint64_t ino;
	char path[256];
};
/* Does the text of a /proc/PID/maps (len bytes, whole lines) map a file
 * whose base name starts with lib executable? The first such mapping into
 * out, 1; 0 none. */
int claimv_maps_find(const char *maps, size_t len, const char *lib, struct claimv_map *out);

struct claimv_stats {
	uint64_t checks;        /* made (not from the cache) */
	uint64_t verified, unverified;
	uint64_t deferred;      /* over the budget */
	uint64_t fd_walks;      /* walks of a /proc/PID/fd (one per process a
				 * second at most) */
	uint64_t lookups;       /* claims looked for in the cache by hash */
	uint64_t hint_hits;     /* found where a hint said */
	uint64_t ns_reads;      /* a namespace looked at (fstat) */
	unsigned entries;
};
void claimv_stats(const struct claimv *cv, struct claimv_stats *out);

#endif
