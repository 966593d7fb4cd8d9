/* claimv: what an engine claims about a socket, checked against the kernel
 * before the daemon acts on it.
 *
 * A claim is a file a process wrote: a VMA/XLIO statistics block
 * (vmastat.<pid>: pid from the name, fd, inode, local and remote address),
 * or a record of an engine flow table (flowtab.h: owner_pid, local and
 * remote address, no inode). Anyone can write any of it. A claim is
 * VERIFIED only when the kernel says:
 *  (a) the process holds the socket: "socket:[inode]" among its
 *      /proc/PID/fd links (VMA and XLIO put the inode of their OS socket
 *      in the block: sockinfo::sockinfo() sets inode = fd2inode(m_fd),
 *      libvma src/vma/sock/sockinfo.cpp, libxlio src/core/sock/sockinfo.cpp);
 *  (b) the process maps the engine's library (lib, e.g. "libvma.so"): a
 *      file of that name in /proc/PID/maps that root owns and only root may
 *      write (the library an administrator installed, not one a user put
 *      next to a forged file); skipped when lib is NULL (engine tables:
 *      nothing to map);
 *  (c) the kernel's own view of the process's sockets agrees with the
 *      claimed local address and port: in the process's network namespace,
 *      sock_diag shows a socket of the claimed protocol on the claimed
 *      local port (TCP: the socket an exact lookup of the claimed
 *      conversation finds, then those only bound to the port; UDP: a dump
 *      of the port), bound to the claimed address (or to the wildcard),
 *      either unconnected or connected to the claimed remote end, and the
 *      process holds it. For a VMA/XLIO claim whose inode sock_diag shows
 *      on that port, it must be that very socket (VMA and XLIO bind and
 *      connect their OS socket as the offloaded one: sockinfo_udp::bind(),
 *      sockinfo_tcp::bind() call the OS bind() on m_fd); an accepted
 *      offloaded TCP connection's OS socket is bound to nothing, so then
 *      the listening socket the process holds on the port proves it.
 * What this does not prove: the remote end of an unconnected socket, and
 * the counters (only the claimed endpoints are bound to the kernel). So a
 * verified claim can at most name its own process's local port, and
 * traffic to and from that port is what the daemon may then capture.
 *
 * Results are cached per claim (pid, fd, inode, protocol, both ends), and
 * for claims without an inode also per local end when an unconnected
 * socket proved it (one entry for every session of an engine's port):
 * a changed claim is a new one, checked anew; an unchanged one is checked
 * again after CLAIMV_TTL_NS (an fd closed, a socket gone). Checks are
 * bounded per second (max_per_sec): a claim over the budget stays
 * UNCHECKED (never acted on) until a later call. Everything is a few
 * /proc reads and one sock_diag dump, which never waits. */
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

/* Check c now, without the cache (tests, and claimv_check itself). */
enum claimv_state claimv_verify(const struct claimv_claim *c, char *why, size_t whylen);
/* The same; *any_remote (may be NULL) set when an unconnected socket of
 * the process on the local end proved it, which holds for any remote end;
 * *walked (may be NULL) when it had to walk the kernel's bind hash (TCP
 * sockets only bound: milliseconds, charged as 16 checks). */
enum claimv_state claimv_verify_port(const struct claimv_claim *c, int *any_remote, int *walked,
				     char *why, size_t whylen);

/* Does the text of a /proc/PID/maps (len bytes) map a file whose base
 * name starts with lib? The first such path into path (NUL-terminated),
 * 1; 0 none. */
int claimv_maps_find(const char *maps, size_t len, const char *lib, char *path, size_t plen);

struct claimv_stats {
	uint64_t checks;        /* made (not from the cache) */
	uint64_t verified, unverified;
	uint64_t deferred;      /* over the budget */
	unsigned entries;
};
void claimv_stats(const struct claimv *cv, struct claimv_stats *out);

/* "verified", "unverified", "unchecked". */
const char *claimv_state_name(enum claimv_state s);

#endif
