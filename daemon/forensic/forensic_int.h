/* forensic_int: what the parts of an investigation share. forensic.c owns
 * the table of phases (observe, capture, steps, probes, peers, done) and
 * the record's life; inv.c runs the table (the only code that changes
 * the phase) and holds the helpers every part uses; each part keeps its
 * own state and reports back with inv_part_done(): observe.c (the
 * observation window, pings, threads, external probes), capture.c (the
 * captures), release.c (the promiscuous steps, the reprogram and the
 * release watch), peerwait.c (the peers' answers). Private to those files
 * and the unit tests; a peer's notice answered with a snapshot is
 * peersnap.c's, through its own header (peersnap.h). */
#ifndef NICSTALL_FORENSIC_INT_H
#define NICSTALL_FORENSIC_INT_H

#include <limits.h>
#include <stdint.h>

#include "daemon/forensic/bundler.h"
#include "daemon/forensic/evidence.h"
#include "daemon/forensic/forensic.h"
#include "daemon/forensic/peersnap.h"
#include "probes/probe_threads.h"

#define KEEP 16
#define MAXP 2                 /* ports per investigation: a pair */
#define MAXOWN 8
#define MAXEXEC 8
#define THREAD_GAP_NS 100000000ull
#define MAX_SERIES 64

struct recovery;
struct peers;
struct evid_flows;
struct jreap;

enum phase { PH_OBSERVE = 0, PH_CAPTURE, PH_STEPS, PH_PROBES, PH_PEERS, PH_DONE, PH_N };

struct inv;
/* One phase of an investigation: a row of forensic.c's table. */
struct inv_phase {
	const char *name;
	/* Begin it: each part it starts raises v->pending, before the part
	 * can report back, and reports back with inv_part_done() (the
	 * machine holds one while start runs). */
	void (*start)(struct inv *v);
	/* v->timer fired in this phase (NULL: the phase sets none). */
	void (*on_timer)(struct inv *v);
	/* Every part reported: 1 when the phase is over and the next one
	 * starts, 0 when it started more parts (NULL: over; 0 with no part
	 * started counts as over). */
	int (*done)(struct inv *v);
	/* The name status shows, when it says more than name (NULL: name). */
	const char *(*label)(const struct inv *v);
};

/* One promiscuous step of the sequence (release.c): a promiscuous capture
 * or a reprogram of one port, and the watch for the release after it. */
enum act_kind { ACT_PROMISC = 0, ACT_REPROGRAM };
struct action {
	enum act_kind kind;
	unsigned port;                  /* index in inv.ports */
	int step;                       /* its timeline step, -1 not run */
	uint64_t start_ns, effect_ns, end_ns;
	uint64_t deadline_ns;           /* the watch ends here */
	uint64_t natural_ns;            /* ... or here, were it not capped */
	int capped;                     /* release_wait_max cut the watch */
	int transition;                 /* it made a crossing the driver acts on */
	int ran;                        /* it was started */
};
#define MAXACT (MAXP * 2)

struct inv {
	struct forensics *F;
	uint64_t id, incident_id;
	char ports[MAXP][32];
	unsigned nports;
	uint64_t open_ns, open_real_ns;
	struct json_object *rec, *steps;
	enum phase phase;
	int pending;
	/* observation window */
	struct loop_timer *tick;
	uint64_t win_start, win_end;
	struct evid_counters first[MAXP], prev[MAXP];
	struct json_object *series[MAXP];
	uint64_t t1[MAXP];              /* a port's first sample in the window */
	unsigned nsamples;
	int win_step;
	unsigned win_extended;          /* times the window waited for a retry */
	/* probes */
	struct probe_ping *ping[MAXP];
	int ping_step[MAXP];
	/* the don't-fragment echo at the port's MTU (ping_mtu) */
	struct probe_ping *ping_mtu[MAXP];
	int ping_mtu_step[MAXP];
	struct probe_cap *cap[MAXP];
	int cap_step[MAXP];
	struct probe_exec *exec[MAXEXEC];
	int exec_step[MAXEXEC];
	unsigned nexec, exec_left;
	int pids[MAXOWN];
	unsigned npids;
	struct probe_threads_snap th1[MAXOWN];
	struct loop_timer *timer;       /* thread gap, release watch */
	int th_step;
	uint64_t capture_ns;            /* the plain captures' start */
	struct action act[MAXACT];      /* the promiscuous steps, in order */
	unsigned nact, cur;             /* planned, the one running */
	int lost[MAXP];                 /* the port lost frames of the flows */
	int unknown_loss[MAXP];         /* its counters cannot tell (no port/vport pair) */
	int watching;                   /* the watch timer is armed */
	uint64_t release_ns;            /* the incident was released, 0 not yet */
	int peers_step;                 /* the wait for the peers' summaries, -1 none */
	int done;
	char bundle[PATH_MAX];          /* written bundle, "" none */
	char pcap[MAXP * 2][PATH_MAX];  /* capture files to move into it */
	unsigned npcap;
	struct evid_flows *engines[2];  /* readers of unmodified engines:
					 * at the stall, after (evid_flows.h) */
	unsigned engines_tried;         /* the incident's flows when a take
					 * found nothing to take */
	struct loop_timer *follow;      /* joins seen: follow them once the
					 * burst is handled (inv_follow_cb) */
	int follow_armed;
};

struct forensics {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	const struct conf *c;
	const struct rules *rules;
	const struct forensic_probes *pr;
	struct recovery *recovery;
	struct bundler *bundler;
	struct inv *inv[KEEP];
	uint64_t ninv;
	struct peers *peers;            /* NULL: no peer daemons */
	struct runs *runs;              /* benchmark runs (runs.h), NULL: none */
	struct psnap_env psenv;          /* what peer snapshots use (kept current) */
	struct psnaps *psnaps;          /* snapshots for peers, under way */
	struct jreap *reap;             /* the records of investigations let go */
	const struct inv_phase *phases; /* PH_N rows, in order (forensic.c) */
};

/* inv.c: the phase machine */
/* Start phase p (the first, or a test's toy table's). */
void inv_phase_enter(struct inv *v, enum phase p);
/* One part of the current phase is done; the last one ends the phase
 * (its done() decides) and the next begins. */
void inv_part_done(struct inv *v);
/* v->timer's callback: the current phase's on_timer. */
void inv_phase_timer(struct loop_timer *t, void *arg);
const char *inv_phase_name(const struct inv *v);

/* inv.c: helpers */
struct port *inv_port(struct inv *v, unsigned i);
/* ms from the investigation's start (negative before it) */
double inv_rel_ms(const struct inv *v, uint64_t t);
/* A step of the investigation's timeline (timeline.h), from open_ns, now. */
int inv_step_begin(struct inv *v, const char *name, const char *port);
void inv_step_end(struct inv *v, int idx, const char *outcome, const char *note);
/* Are the incident's flows still stalled (always, for a manual run)? */
int inv_still_stalled(struct inv *v);
/* The readers of unmodified engines' own views (evid_flows.h), at the
 * stall (after 0) or after it; a part that runs a tool is waited for like
 * an external probe (exec_left). */
void inv_take_engines(struct inv *v, int after);
/* The engine views of the processes that came into incident inc (v's;
 * NULL: none) after the snapshot (its flows joined, the thread watch
 * called a thread of theirs), while it stalls (evid_flows_follow). */
struct incident;
void inv_follow_engines(struct inv *v, struct incident *inc);
/* After a join: follow once the burst of joins is handled (v->follow,
 * whose callback is inv_follow_cb). */
void inv_follow_soon(struct inv *v);
void inv_follow_cb(struct loop_timer *t, void *arg);

/* observe.c: PH_OBSERVE */
/* the observation window's fast sampling timer */
void inv_tick(struct loop_timer *t, void *arg);
void inv_observe_start(struct inv *v);
/* v->timer: the threads' second reading */
void inv_observe_timer(struct inv *v);

/* capture.c: PH_CAPTURE, and the promiscuous captures of PH_STEPS */
void inv_capture_start(struct inv *v);
/* Plain captures on every port (port < 0), or a promiscuous capture on
 * port; each started raises pending and reports back when done. Returns
 * how many started. */
int inv_start_captures(struct inv *v, int port, int promisc);

/* release.c: PH_STEPS */
/* Some port's counters can count frames lost before the vport, and the
 * most any counted is under 2 (a count the window should make sure of);
 * 0 when no port can count them (a veth: nothing to wait for). */
int inv_gap_marginal(struct inv *v);
/* When the stalled flows have all tried again after t (their next
 * retransmission, with the timer's slack and a poll), 0 when no flow's
 * retry time is known. */
uint64_t inv_next_retry(struct inv *v, uint64_t t);
/* Order the ports by what the evidence says, plan the steps, run the
 * first. */
void inv_steps_start(struct inv *v);
/* The step's parts reported: the next step (0), or none is left or the
 * flows were released (1). */
int inv_steps_done(struct inv *v);
/* v->timer: the watch after the current step ran out. */
void inv_watch_expired(struct inv *v);
const char *inv_steps_label(const struct inv *v);
/* The incident was released (INCIDENT_END): stop watching. */
void inv_released(struct inv *v);
/* The releasing action, its port and delay, or "ambiguous", into rel. */
void inv_release_json(struct inv *v, struct json_object *rel);

/* This host's name in records (IR_HOST) and facts' ranks: the peers'
 * host_name, else the configuration's, else the system's. */
void forensic_host_name(const struct forensics *F, char *buf, size_t len);
/* peerwait.c: the originating side, PH_PEERS */
/* The notice to every peer as the incident opens (into the record). */
void inv_notify_peers(struct inv *v);
/* Every peer notified has answered, or the wait is over: 1; else 0 and
 * the wait is set up (v->timer at its end). */
int inv_peers_ready(struct inv *v);
/* A peer's summary for v. 1 when it was the last one awaited. */
int inv_peer_summary(struct inv *v, const char *peer, struct json_object *summary, double rtt_ms);
/* The wait is over (all answered or the bound): its step ends. */
void inv_peers_done(struct inv *v);

#endif
