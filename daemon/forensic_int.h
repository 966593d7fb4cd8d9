/* forensic_int: what the parts of the forensic sequence share (forensic.c:
 * the phases, the verdict and the bundle; observe.c: the observation window
 * and the probes it starts). Private to those two files. */
#ifndef NICSTALL_FORENSIC_INT_H
#define NICSTALL_FORENSIC_INT_H

#include <limits.h>
#include <stdint.h>

#include "daemon/bundler.h"
#include "daemon/evidence.h"
#include "daemon/forensic.h"
#include "probes/probe_threads.h"

#define KEEP 16
#define MAXP BUNDLER_MAX_PORTS  /* ports per investigation: a pair */
#define MAXOWN 8
#define MAXEXEC 8
#define THREAD_GAP_NS 100000000ull
#define MAX_SERIES 64

struct recovery;
struct evid_flows;

enum phase { PH_OBSERVE = 0, PH_CAPTURE, PH_PROMISC, PH_RECOVER, PH_WATCH, PH_DONE };

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
	unsigned nsamples;
	int win_step;
	/* probes */
	struct probe_ping *ping[MAXP];
	int ping_step[MAXP];
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
	uint64_t action_ns[3];          /* capture, promisc, reprogram starts */
	uint64_t release_ns;
	int done;
	char bundle[PATH_MAX];          /* written bundle, "" none */
	char pcap[MAXP * 2][PATH_MAX];  /* capture files to move into it */
	unsigned npcap;
	struct evid_flows *engines[2];  /* readers of unmodified engines:
					 * at the stall, after (evid_flows.h) */
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
};

struct port *inv_port(struct inv *v, unsigned i);
/* ms from the investigation's start (negative before it) */
double inv_rel_ms(const struct inv *v, uint64_t t);
/* A step of the timeline (record "steps"): its index, then its end. */
int inv_step_begin(struct inv *v, const char *name, const char *port);
void inv_step_end(struct inv *v, int idx, const char *outcome, const char *note);
/* One pending part of the current phase is done; the last moves on. */
void inv_finish_one(struct inv *v);
/* Are the incident's flows still stalled (always, for a manual run)? */
int inv_still_stalled(struct inv *v);

/* observe.c */
/* the observation window's fast sampling timer */
void inv_tick(struct loop_timer *t, void *arg);
void inv_start_observe(struct inv *v);
void inv_threads_second(struct loop_timer *t, void *arg);
void inv_start_captures(struct inv *v, int promisc);

#endif
