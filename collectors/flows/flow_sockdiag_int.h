/* flow_sockdiag_int.h: the sock_diag reader's state, shared by
 * flow_sockdiag.c (requests, discovery, the polls) and
 * sockdiag_parse.c (the kernel's replies), private to them:
 * flow_sockdiag.c calls the parser, never the reverse. */
#ifndef NICSTALL_FLOW_SOCKDIAG_INT_H
#define NICSTALL_FLOW_SOCKDIAG_INT_H

#include "collectors/flows/flow_sockdiag.h"
#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "collectors/flows/sockdiag_pace.h"
#include "collectors/flows/sockread_api.h"
#include "lib/nl.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <stdint.h>

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

/* Sockets remembered between discoveries; more are seen at discoveries only. */
#define SD_MAX_KNOWN 65536u
#define SD_BC_MAX 1024

#define SD_MIN_N 8
struct sd_min {                 /* the least of the last SD_MIN_N values */
	uint64_t v[SD_MIN_N];
	unsigned n, at;
};

static inline void sd_min_add(struct sd_min *m, uint64_t v)
{
	m->v[m->at] = v;
	m->at = (m->at + 1) % SD_MIN_N;
	if (m->n < SD_MIN_N)
		m->n++;
}

static inline uint64_t sd_min_get(const struct sd_min *m)
{
	uint64_t lo = UINT64_MAX;

	for (unsigned i = 0; i < m->n; i++)
		if (m->v[i] < lo)
			lo = m->v[i];
	return m->n ? lo : 0;
}

struct sd_sock {                /* a watched socket the last discovery found */
	struct inet_diag_sockid id;     /* as the kernel gave it, cookie included */
	uint8_t family;
	uint8_t gone;                   /* closed since: not asked for again */
	uint8_t bs;                     /* its due time is the kernel-event
					 * watch's backstop (flow_sockdiag.c) */
	uint8_t in_act;                 /* in the list of the paced ones */
	uint64_t inode;
	uint32_t uid;                   /* its owner: the flow table's limits are per owner */
	struct sd_pace pace;            /* when it must be read again */
	uint32_t sw_slot;               /* its kernel-event watch slot, 0 none */
	uint8_t sw_tried;               /* registration tried since found */
	uint8_t sw_refused;             /* the kernel would not give it the
					 * sockops callbacks: on its pace for
					 * good */
	uint8_t sw_busy;                /* handed back for its callbacks'
					 * rate: on its pace until a read
					 * finds it idle (sockdiag_watch.c) */
	uint64_t busy_tx, busy_rx;      /* its bytes at the read before */
	uint64_t busy_until;            /* not back before (0: dated at the
					 * next read) */
	uint64_t busy_hold, busy_back_at; /* its hold, and when it came back */
	uint64_t ev_from;               /* the wait's start the kernel posted
					 * (sockdiag_watch.c), 0 none, and */
	uint64_t ev_tx, ev_rx;          /* its bytes then, as flow_obs has them */
	uint64_t ev_written;
	uint64_t bs_tx, bs_rx, bs_written; /* its bytes since bs_at, as the
					 * reads that put it on the backstop
					 * found them (bs_read set), for
					 * sd_watch_backstop_ns() */
	uint64_t bs_at;
	uint8_t bs_read;
};

static inline uint64_t sd_cookie(const struct inet_diag_sockid *id)
{
	return (uint64_t)id->idiag_cookie[0] | (uint64_t)id->idiag_cookie[1] << 32;
}

struct sockdiag {
	struct nl_sock *ns;
	unsigned long nsino;    /* for messages */
	struct sockdiag_opts opts;
	/* the kernel-side filter and the selectors it was compiled from */
	struct flow_sel sel[SD_MAX_SEL];
	unsigned nsel;
	int compiled;
	int bclen;              /* > 0 bytecode, 0 none needed, < 0 no TCP socket can match */
	unsigned char bc[SD_BC_MAX] __attribute__((aligned(4)));
	int bc_refused;         /* the kernel refused it: filter in userspace */
	int compat_refused;     /* no AF_UNSPEC dump: one per family */
	/* what the last discovery found */
	struct sd_sock *known;
	unsigned nknown, nalive, untracked;
	uint64_t next_discover;
	/* discoveries only when the namespace opened a connection or
	 * hashed a socket (sockdiag_opens.h): its counters at the last look, whether the look
	 * after a change has dumped, and when the last dump was */
	int opens_fd;           /* -1: none, every discovery dumps */
	int inuse_fd[2];        /* sockstat, sockstat6 (-1: no IPv6) */
	uint64_t gate[3];       /* opens, IPv4 and IPv6 sockets in use */
	int calm;
	uint64_t last_dump;
	/* measured time (wall, in the vDSO) of a dump and of one socket
	 * asked for alone: the least of the last few (a preemption, or softirq
	 * work done on our time, only adds) */
	struct sd_min dump, lookup;
	int probe;              /* the next poll asks one by one, to measure it */
	/* asking one by one: the BPF socket reader, or sock_diag lookups */
	struct sockread *rd;
	unsigned rd_map[SR_MAX];        /* reader key -> index in known[] */
	/* pacing (sockdiag_set_pace): the port's threshold and the poll */
	uint64_t stall_ns, poll_ns, refresh_ns;
	unsigned last_unread;   /* alive sockets the last poll did not read */
	/* the least due time of the alive sockets, when min_ok: polls with
	 * none due within the window, and sockdiag_next_ns(), walk none;
	 * and, when act_ok, the sockets not on the backstop (act[]) and the
	 * least due time of those on it (min_bs): a poll before it looks at
	 * the list only (use_act) */
	uint64_t min_due, min_bs;
	int min_ok, act_ok, use_act;
	unsigned *act, nact, capact;
	struct sd_sock **byck;  /* the previous known[] by cookie (discovery) */
	unsigned nbyck;
	char rd_why[160];       /* why there is none */
	int nsfd;               /* ours, for the reader (-1: own namespace) */
	/* the kernel-event watch (sockwatch_api.h, sockdiag_watch.c): NULL
	 * when off or refused (sw_why says which) */
	struct sockwatch *sw;
	char sw_why[200];
	uint64_t sw_span;       /* the span the slots were given */
	int sw_scan;            /* sockets found since the last registration
				 * walk (sd_watch_register looks only then) */
	uint64_t sw_losses;     /* sockwatch_losses() when last read */
	uint64_t sw_retry_at;   /* registrations the kernel had no memory
				 * for are tried again then (0: none) */
	/* its slots to their sockets (slot, index in known[]) sorted by slot,
	 * a cache for the posts (sockdiag_watch.c): made at the second post
	 * after known[] or a registration changed them (byslot_ok 0, and
	 * byslot_walks the posts since that walked), and any post it cannot
	 * place walks */
	struct sd_byslot {
		uint32_t slot, idx;
	} *byslot;
	unsigned nbyslot, byslot_walks;
	int byslot_ok;
	uint64_t wanted_ns;     /* the detector's: a flow of the port waits */
	uint64_t slack_ns;      /* the detector's: this poll came early */
	int hold;               /* wanted lately: every socket on its pace */
	int sw_lossy;           /* this poll reads every socket for a loss */
	int sw_broken;          /* it failed: open (its fd is in the loop),
				 * unused */
	struct sockdiag_stats st;
};

struct sd_dump {
	const struct flow_sel *sel;
	unsigned nsel;
	flow_emit_fn emit;
	void *arg;
	uint64_t now;
	int emitted;
	struct sockdiag *sd;    /* discovery: remember what is found (NULL: no) */
	struct sd_sock *found;
	unsigned nfound, capfound;
	struct sd_sock *cur;    /* the remembered socket being read, or NULL */
	struct sockdiag *owner; /* whose sockets they are (NULL: a bare parse) */
	uint64_t stall_ns, poll_ns;     /* pacing: threshold, poll (0: none) */
	uint64_t refresh_ns;            /* and a read at least this often */
};

/* Writes of many sockets' due times that may have brought them closer:
 * the next poll walks every socket. Raising one needs nothing (the poll at
 * the old least finds nothing due and walks). */
static inline void sd_due_moved(struct sockdiag *sd)
{
	sd->min_ok = 0;
	sd->act_ok = 0;
}

/* Socket k (remembered, or being found by a dump) is due now; is on its
 * pace; is on the kernel-event watch's backstop (its pace.due_ns set).
 * Inline: both the poll (flow_sockdiag.c) and the watch
 * (sockdiag_watch.c) move sockets between the active list and the
 * backstop. */
static inline int sd_in_known(const struct sockdiag *sd, const struct sd_sock *k)
{
	/* k may point into a dump's array being built: compared as
	 * addresses, not as pointers into two objects */
	uintptr_t a = (uintptr_t)k, lo = (uintptr_t)sd->known;

	return sd->known && a >= lo &&
	       a < lo + (uintptr_t)sd->nknown * sizeof(*sd->known);
}

static inline void sd_act_add(struct sockdiag *sd, struct sd_sock *k)
{
	if (!sd->act_ok || k->in_act || !sd_in_known(sd, k))
		return;
	if (sd->nact == sd->capact) {   /* never: the list is made nknown long */
		sd->act_ok = 0;
		return;
	}
	sd->act[sd->nact++] = (unsigned)(k - sd->known);
	k->in_act = 1;
}

/* k on its pace: on the active list (a socket of the dump being built is
 * put there when the list is made again) */
static inline void sd_paced(struct sockdiag *sd, struct sd_sock *k)
{
	k->bs = 0;
	sd_act_add(sd, k);
}

static inline void sd_due_now(struct sockdiag *sd, struct sd_sock *k)
{
	k->pace.due_ns = 0;
	sd_paced(sd, k);
	sd->min_ok = 0;
}

static inline void sd_backstop(struct sockdiag *sd, struct sd_sock *k)
{
	k->bs = 1;
	if (k->pace.due_ns < sd->min_bs)
		sd->min_bs = k->pace.due_ns;
}


/* known[] or its slots changed: the slots' map (sockdiag_watch.c) is made
 * again at the second post from now, the first walking the sockets. */
static inline void sd_byslot_stale(struct sockdiag *sd)
{
	sd->byslot_ok = 0;
	sd->byslot_walks = 0;
}

/* A socket the kernel-event watch follows is read this often while it
 * owes nothing (a hook the watch lacks, a path it cannot see), and the
 * detector keeps its flow that long unseen (flow_obs.keep_ns). */
#define SD_WATCH_BACKSTOP_NS 30000000000ull
/* A socket that a read finds owing nothing, established, with the very
 * bytes the reads that put it on the backstop found for a backstop or
 * more: quiet, and read again after this long (sd_watch_backstop_ns). */
#define SD_WATCH_QUIET_NS (2 * SD_WATCH_BACKSTOP_NS)
/* the backstop reads, not the dumps, are what an idle socket costs */
_Static_assert(SD_REDISCOVER_NS >= 4 * SD_WATCH_QUIET_NS,
	       "a dump at most one read in four of a quiet watched socket");

/* When a socket that owes nothing, or waits as the kernel holds it, is
 * read again, from a read at now: SD_WATCH_QUIET_NS for one quiet for a
 * backstop (a tenth early: the reads come a little before they are due),
 * else SD_WATCH_BACKSTOP_NS. */
uint64_t sd_watch_backstop_ns(const struct sd_sock *k, const struct flow_obs *o, uint64_t now);
/* A socket handed back as busy: on its pace at least SD_BUSY_HOLD_NS,
 * doubled (up to SD_BUSY_HOLD_MAX_NS) when handed back again within
 * SD_BUSY_HOLD_MAX_NS of its return: each return is a walk of the
 * namespace's TCP sockets (the enrolment), which a flow busy in bursts
 * would otherwise make at every other poll. */
#define SD_BUSY_HOLD_NS 10000000000ull
#define SD_BUSY_HOLD_MAX_NS 320000000000ull
/* A socket whose registration found no socket storage (the kernel
 * allocates it without sleeping) is on its pace, and registered again
 * this long after, not at the next dump (up to SD_REDISCOVER_NS on a
 * namespace where no connection opens). No poll of its own: the
 * discovery's look, every SD_DISCOVER_NS whether it dumps or not, is a
 * poll that carries it (sd_watch_register), at most that late. */
#define SD_WATCH_RETRY_NS 10000000000ull
_Static_assert(SD_WATCH_RETRY_NS >= 4 * SD_DISCOVER_NS,
	       "a retry is carried by a discovery's poll, a little late");

/* sockdiag_watch.c */
struct sockwatch_slot;
void sd_reader_key(const struct sd_sock *s, struct sr_key *k);
void sd_watch_open(struct sockdiag *sd);
void sd_watch_close(struct sockdiag *sd);
void sd_watch_gone(struct sockdiag *sd, struct sd_sock *k);
void sd_watch_register(struct sockdiag *sd, uint64_t now);
/* Before a poll's reads: sockets due at once (an event, a loss, a hold). */
void sd_watch_before(struct sockdiag *sd, uint64_t now);
/* A read of socket k at now gave o: its next read, and o's keep_ns. */
void sd_watch_paced(struct sockdiag *sd, struct sd_sock *k, struct flow_obs *o,
		    uint64_t now);
/* Whether the wait a read at now found (o; wait_from: its start as the
 * socket's pace has it) is one the kernel holds, as sockwatch_slot() gave
 * h: the same bytes judged, queued in the wheel and not posted, to be
 * posted no later than the pace would read it (span: the slot's), and
 * young by both clocks (begun within half of poll_ns). Pure: for tests. */
int sd_watch_kernel_holds(const struct sockwatch_slot *h, const struct flow_obs *o,
			  uint64_t wait_from, uint64_t now, uint64_t span, uint64_t poll_ns);

/* sockdiag_parse.c */
void sd_byck_build(struct sockdiag *sd);
/* A socket a dump finds (k, its id set, the rest zero) takes what the
 * socket of the same cookie in the last discovery had (sd_byck_build()
 * before): its pace, its watch slot (given up by the old entry), its
 * busy hold, the wait the kernel posted, and since when it is quiet. */
void sd_pace_carry(struct sockdiag *sd, struct sd_sock *k);
int sd_key(struct flow_key *key, uint8_t family, const struct inet_diag_sockid *id);
int sd_msg_cb(const struct nlmsghdr *nlh, void *data);
int sd_parse_sock(const struct nlmsghdr *nlh, struct sd_dump *d);

#endif
