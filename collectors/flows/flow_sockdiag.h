/* flow_sockdiag: kernel TCP sockets as flow observations (INET_DIAG over
 * NETLINK_SOCK_DIAG), as a module and as flow_src_sock_ops (flowsrc.h,
 * port scope). The selectors it filters with are in flowsel.h. */
#ifndef NICSTALL_FLOW_SOCKDIAG_H
#define NICSTALL_FLOW_SOCKDIAG_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flows.h"
#include "collectors/flows/flowsel.h"

struct sockdiag;

#define SD_MAX_SEL 8
#define SD_DISCOVER_NS 1000000000ull    /* look for new sockets this often */
/* and dump at least this often: for a socket restored (TCP_REPAIR) while
 * another closed between two looks, which moves none of the gate's
 * counters (sockdiag_opens.h). A dump fills each watched socket for about
 * what three reads of the kernel-event watch's backstop cost (1.35 us
 * against 0.5 us a socket: bench/README.md), so on an idle port the dump
 * is most of what a period reads unless it is one read in four of a quiet
 * socket (flow_sockdiag_int.h checks it against SD_WATCH_QUIET_NS). */
#define SD_REDISCOVER_NS 240000000000ull

/* How a poll asks (defaults: sockdiag_opts_default). For benchmarks and
 * tests that compare the ways side by side. */
struct sockdiag_opts {
	uint64_t discover_ns;   /* a kernel-filtered dump at most this often;
				 * between, every socket it found is asked for
				 * alone. 0: dump at every poll */
	uint64_t rediscover_ns; /* a due discovery dumps only when the
				 * namespace opened a TCP connection or
				 * hashed or unhashed a TCP socket
				 * (sockdiag_opens.h), or the last dump is
				 * this old. 0: every discovery dumps */
	int no_bytecode;        /* no kernel filter: every TCP socket of the
				 * namespace comes back, selectors apply here */
	int per_family;         /* one dump per family (AF_INET, AF_INET6)
				 * instead of one AF_UNSPEC compat dump */
	int no_reader;          /* between dumps, sock_diag lookups even when
				 * the BPF socket reader loads */
	int no_events;          /* no kernel-event watch (sockwatch_api.h):
				 * every socket read on its pace */
	int events_tracepoints; /* the watch also where its hooks are the
				 * tracepoints (every TCP socket of the host
				 * pays): else paced there */
	int no_switch;          /* never dump between discoveries because a
				 * dump measured cheaper (tests: what a poll
				 * reads must not follow the machine's load) */
	uint64_t busy_hold_ns;  /* a socket handed back as busy stays on its
				 * pace at least this long, twice as long each
				 * time it is handed back again soon after
				 * its return (0: SD_BUSY_HOLD_NS) */
	uint64_t reg_retry_ns;  /* a registration the kernel had no memory
				 * for is tried again this long after
				 * (0: SD_WATCH_RETRY_NS) */
};
void sockdiag_opts_default(struct sockdiag_opts *o);

/* Open a NETLINK_SOCK_DIAG socket inside namespace nsfd (-1: our own); the
 * socket stays bound to that namespace for its life. NULL + err on failure. */
struct sockdiag *sockdiag_open(int nsfd, char *err, size_t errlen);
/* The same with options o (NULL: the defaults) from the start. */
struct sockdiag *sockdiag_open_opts(int nsfd, const struct sockdiag_opts *o, char *err,
				    size_t errlen);
void sockdiag_close(struct sockdiag *sd);

void sockdiag_set_opts(struct sockdiag *sd, const struct sockdiag_opts *o);

/* Emit one FLOW_SRC_SOCK observation per TCP socket of the namespace (IPv4
 * and IPv6, every state but LISTEN, TIME_WAIT and CLOSE) that matches
 * sel[0..nsel) (nsel 0: all): from a kernel-filtered dump at most every
 * discover_ns when the namespace opened a TCP connection since (else at
 * least every rediscover_ns), and in between from reading each socket the
 * last dump found (new sockets show at the next discovery): with the BPF socket reader
 * (sockread_api.h) where the kernel has what it needs, else with sock_diag
 * lookups. Key: local = s*, remote = d*.
 * unread/unsent = receive/send queue bytes, retrans = tcpi_total_retrans,
 * state = TCP state (1 ESTABLISHED ... as in the kernel), tx_bytes = data
 * bytes acked (tcpi_bytes_acked less SYN/FIN), rx_bytes = tcpi_bytes_received,
 * tx/rx msgs = data segments out/in, last_tx/rx/ack_ns = CLOCK_MONOTONIC of
 * the last data sent/received and the last ACK received (0 when unknown),
 * unacked_since_ns, rto_ns and retry_due_ns as sockdiag_fill.h says, the
 * same from a dump, a lookup or the BPF reader.
 * Returns the number of observations emitted, or -errno with err filled. */
int sockdiag_poll(struct sockdiag *sd, const struct flow_sel *sel, unsigned nsel,
		  flow_emit_fn emit, void *arg, char *err, size_t errlen);

/* Pace the reads between discoveries (sockdiag_pace.h): a socket that owes
 * nothing is read once per stall_ns, a waiting one from stall_ns after its
 * wait began, every poll (poll_ns) from then, and every one at least once
 * per refresh_ns (0: no bound; the dumps may be rediscover_ns apart).
 * stall_ns 0 (the default): every remembered socket at every poll. */
void sockdiag_set_pace(struct sockdiag *sd, uint64_t stall_ns, uint64_t poll_ns,
		       uint64_t refresh_ns);
/* Alive sockets the last poll did not read (paced). */
unsigned sockdiag_last_unread(const struct sockdiag *sd);
/* When a poll is next needed (CLOCK_MONOTONIC): the earliest socket's
 * pace or the next discovery (made at the first poll within
 * sd_pace_early() of its time, or after it); UINT64_MAX when the
 * selectors watch no TCP socket. 0: at the next poll (no pacing, a
 * discovery at every poll, or a socket due already). */
uint64_t sockdiag_next_ns(const struct sockdiag *sd);

/* What the source did so far. */
struct sockdiag_stats {
	uint64_t dumps, lookups, unanswered;
	uint64_t discover_skipped;      /* discoveries with no dump: no TCP
					 * connection opened, no TCP socket
					 * hashed or unhashed in the namespace */
	uint64_t due_walks;     /* polls that looked at every socket's due
				 * time (none while the least is ahead) */
	int opens_gate;         /* it can tell (its /proc/net/snmp and
				 * sockstat are open) */
	uint64_t dumped;        /* sockets the dumps brought (the filter's work) */
	uint64_t dump_ns;       /* time a dump took, and one socket asked */
	uint64_t lookup_ns;     /* for alone (the least of the last few each,
				 * so a preempted one does not count) */
	unsigned known;         /* sockets remembered from the last dump */
	unsigned untracked;     /* found by it beyond SD_MAX_KNOWN (dump only) */
	int kernel_filter;      /* the dumps are filtered in the kernel */
	int one_dump;           /* one AF_UNSPEC dump covers both families */
	uint64_t reads;         /* sockets read by the BPF socket reader */
	uint64_t paced;         /* socket reads the pacing left out */
	int reader;             /* it reads between dumps (else lookups) */
	char reader_why[160];   /* why not */
	/* the kernel-event watch: on, or why not; its sockets, the wakeups
	 * it caused (events: deadlines posted for this port; event_reads:
	 * those that made a socket of ours due), full reads after a possible
	 * loss, and holds (every socket read while a flow was wanted) */
	int events;
	char events_why[200];
	/* its hooks: the sockets' sockops callbacks, or the tracepoints
	 * (then why not the callbacks) */
	int events_sockops;
	char hooks_why[160];
	uint64_t registered, events_n, event_reads, loss_reads, holds;
	uint64_t kernel_held;   /* reads that left a young wait to the kernel
				 * (sockdiag_watch.c sd_watch_held) */
	uint64_t quiet_reads;   /* reads that found a socket quiet for a
				 * backstop and left it twice as long
				 * (sd_watch_backstop_ns) */
	uint64_t state_reads;   /* sockets of ours the kernel posted as
				 * leaving ESTABLISHED, made due at once
				 * (one already due counted too) */
	uint64_t reg_retries;   /* registrations the kernel had no memory for */
	uint64_t enrol_refused; /* sockets the kernel would not give the
				 * sockops callbacks (read on their pace) */
	/* sockets handed back for their callbacks' rate (sock_liveness =
	 * auto): now on their pace, since the start, and back on the
	 * watch since */
	unsigned busy_now;
	uint64_t busy_handed, busy_back;
	uint64_t busy_hold_max; /* the longest hold now (ns) */
};
void sockdiag_stats(const struct sockdiag *sd, struct sockdiag_stats *out);

/* The kernel-event watch's fd (-1: none) and what to do when it is
 * readable: hand the events to every port's reader. 1 when a socket of
 * any port fell due (poll now). */
int sockdiag_fd(const struct sockdiag *sd);
int sockdiag_handle(struct sockdiag *sd);
/* The detector's wanted_ns (flowsrc.h): while a flow of the port waits,
 * every socket is read on its pace. */
void sockdiag_set_wanted(struct sockdiag *sd, uint64_t wanted_ns);
/* The next poll's slack_ns (flowsrc.h): a discovery due within it is
 * made at that poll. */
void sockdiag_set_slack(struct sockdiag *sd, uint64_t slack_ns);

/* The INET_DIAG_REQ_BYTECODE program that lets through the TCP sockets
 * sel[0..nsel) may match (never fewer; it may let more through), written to
 * buf: its length, 0 when every TCP socket may match (no filter), -ENOENT
 * when none can (no selector admits TCP), -ENOSPC, -EINVAL. */
int sockdiag_bytecode(const struct flow_sel *sel, unsigned nsel, void *buf, size_t len);

/* Find a process holding socket inode (scan of /proc/PID/fd, bounded).
 * 0 with *pid and comm filled, -ENOENT when not found, other -errno. */
int sockdiag_inode_owner(uint64_t inode, int *pid, char *comm, size_t commlen);

/* One socket as the kernel has it (sockdiag_port_sockets). Addresses as
 * in flow_key (IPv4 as IPv4-mapped), ports in network byte order. */
struct sockdiag_ent {
	uint64_t inode;
	uint32_t uid;
	uint8_t proto, state;
	struct in6_addr laddr, raddr;
	uint16_t lport, rport;
};

/* Every socket of protocol proto (IPPROTO_TCP or IPPROTO_UDP) in the
 * network namespace nsfd (-1: the caller's) whose local port is lport
 * (network byte order), IPv4 and IPv6, up to max, from one kernel-filtered
 * dump per family: every state but, for TCP, the sockets that are only
 * bound; with bound_only (TCP) just those (TCPF_BOUND_INACTIVE:
 * inet_diag_dump_icsk() walks every bucket of the bind hash for them since
 * Linux 6.8, milliseconds; older kernels have none). Returns how many, or
 * -errno with err filled; *truncated (may be NULL) set when there were
 * more than max. Never waits (nl_sock_request()); for the claim
 * checks (claimv.h), which cache what it says. */
int sockdiag_port_sockets(int nsfd, uint8_t proto, uint16_t lport, int bound_only,
			  struct sockdiag_ent *out, size_t max, int *truncated, char *err,
			  size_t errlen);

/* The socket the kernel would give a segment (proto IPPROTO_TCP) or a
 * datagram (IPPROTO_UDP) of the conversation raddr:rport -> laddr:lport
 * (IPv4 as IPv4-mapped, ports in network byte order; UDP: raddr may be
 * unspecified and rport 0, "any sender") in namespace nsfd: TCP, the
 * connected socket, else the listener (inet_diag_find_one_icsk()); UDP,
 * the connected socket, else the bound one (udp_dump_one(),
 * __udp4_lib_lookup()). One exact lookup, a hash lookup, not a walk.
 * 1 with *out filled, 0 none, or -errno with err filled. */
int sockdiag_lookup(int nsfd, uint8_t proto, const struct in6_addr *laddr, uint16_t lport,
		    const struct in6_addr *raddr, uint16_t rport, struct sockdiag_ent *out,
		    char *err, size_t errlen);

/* Parse a buffer of SOCK_DIAG_BY_FAMILY messages (a dump reply as
 * received) the way sockdiag_poll does, with now_ns as CLOCK_MONOTONIC now:
 * the number of observations emitted, or -EBADMSG when nl_msgs_check()
 * refuses the buffer (nothing is emitted then), -EINVAL. For tests and
 * fuzzers. */
int sockdiag_parse(const void *buf, size_t len, const struct flow_sel *sel,
		   unsigned nsel, uint64_t now_ns, flow_emit_fn emit, void *arg);

#endif
