/* stall_int.h: the detector's state, shared by its parts and private to
 * them: stall.c (the polls and their handling, the flows' state machines,
 * incidents), stall_plan.c (when the next poll comes), stall_group.c
 * (incident groups and the siblings count) and stall_view.c (the views of
 * flows, incidents and engines, called from outside through stall.h). The
 * calls go one way: stall.c calls stall_plan.c and stall_group.c,
 * stall_view.c calls stall_group.c; nothing calls back into stall.c. */
#ifndef NICSTALL_STALL_INT_H
#define NICSTALL_STALL_INT_H

#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/liveness.h"
#include "daemon/detect/stall.h"
#include "lib/cost.h"
#include "lib/siphash.h"

#include <stddef.h>
#include <stdint.h>

struct kent;
struct port_conf;
struct sflow;

struct stall {
	struct loop *loop;
	const struct conf *c;
	struct loop_timer *timer;
	struct livetab *flows;
	struct flowsrcs *srcs;
	struct ports *ports;            /* the host source reads their flows' owners */
	uint64_t want_ns;               /* the last flowsrcs_want: when, port */
	char want_port[32];
	struct incidents *incs;
	stall_incident_fn hook;
	void *hook_arg;
	uint64_t now;
	uint64_t polls, poll_cost_ns;
	/* the polls by why they came (the plan's reason when the timer
	 * fired: status flow_sources.polls_why), one entry a WHY_* text (9;
	 * room for more) */
	struct { const char *why; uint64_t n; } polls_why[16];
	struct sip_key kkey;            /* for the sibling key set */
	struct kent *kset;
	size_t kcap;
	uint64_t sibling_scans;         /* passes over the flow table for siblings */
	uint64_t unverified_stalls;     /* stalls of claims the kernel did not back */
	unsigned lines;                 /* per-flow log lines this poll */
	unsigned released_unlogged, closed_unlogged;
	uint64_t refused_logged, refused_log_ns;
	/* a poll's observations, handled STALL_CHUNK per loop turn so that a
	 * poll of 100k flows never holds the loop (control requests are
	 * answered between chunks) */
	struct qobs { struct flow_obs o; char port[32]; } *q;
	size_t qn, qpos, qcap;
	struct loop_timer *chunk;
	uint64_t poll_t0, poll_busy_ns;
	uint64_t idle_t0;               /* what "a second on" counts from: the
					 * poll's start, or its wakeup's
					 * (stall_poll_woken) */
	int chunked;                    /* a poll is still being handled */
	int wake_pending;               /* a source woke it meanwhile */
	int idle_alone;                 /* the last poll came at its end, at no
					 * other wakeup, or was planned for a
					 * source or a flow: off the sweep's phase */
	int next_windowed;              /* the next poll armed with a window
					 * (stall_plan_window) */
	/* the detector's own work on a poll's observations (drain), which no
	 * source's account holds: the thread's CPU time from the sources'
	 * last reading (flowsrcs_poll) or a later chunk's start to the end of
	 * each chunk, one clock read a chunk, summed over the poll */
	struct cost detector;
	uint64_t det_ns, det_cpu0;
	uint64_t next_expire;   /* the flow table's next walk for closed flows */
	/* the processes owning flows may have changed since watch_owners()
	 * last ran (a flow with a pid came, went or changed pid); it runs
	 * then, and every STALL_OWNERS_EVERY_NS all the same */
	int owners_dirty;
	uint64_t owners_ns;
	struct owners *owners;  /* the flows' owners per port (owners.h) */
	/* the threshold of the port last asked for: a poll's observations
	 * come port by port, so one compare per observation instead of a
	 * scan of the configured ports (cleared by stall_configure) */
	char th_port[32];
	uint64_t th_ns;
	int th_ok;
	/* The next poll's plan (plan_next): polls are not regular. While
	 * nothing is stalled and no incident is open, the next comes at the
	 * earliest time this poll's waiting flows could need it (their
	 * wants, then their stalls, by the waits' start as their sources
	 * date them: liveness.c) or a source asks for (flow_src next_ns: a
	 * refresh, a threshold less a poll, for a source that must be
	 * looked at: a wait that begins just after a poll is seen at the
	 * next, dated by its source, and called at its deadline), and
	 * STALL_IDLE_MAX_NS after this one at the latest. Never sooner than
	 * flow_interval after the last poll start, but at once after a new
	 * want (the tracker's hooks come on a threshold less a poll, or half
	 * a threshold, before the stall, as with regular polls). */
	uint64_t plan_ns;               /* the earliest flow deadline, UINT64_MAX none */
	uint64_t dl_ns;                 /* the earliest stall's own, UINT64_MAX none */
	const char *plan_why;
	int fast;                       /* the next after the interval: why */
	const char *fast_why;
	int repoll;                     /* a new want: poll at once */
	uint64_t prev_t0, gap_ns;       /* the previous poll's start, the gap */
	uint64_t poll_end;              /* when the last poll was handled */
	uint64_t next_poll;             /* when the next poll is armed for */
	uint64_t next_latest;           /* a windowed one's latest */
	const char *next_why;
	uint64_t min_th;                /* the least threshold of any port */
	struct tpass *tpass;            /* engine threads (threadpass.h) */
};

/* Why the next poll comes when it does (status: flow_sources.next_poll). */
#define WHY_STALLED "a flow is stalled"
#define WHY_INCIDENT "an incident is open"
#define WHY_UNDATED "a flow's waits have no times"
#define WHY_SOURCE "a source"
#define WHY_DEADLINE "a waiting flow"
#define WHY_WANT "a flow waited half its threshold"
#define WHY_REFRESH "refresh"
#define WHY_INTERVAL "flow_interval"
#define WHY_IDLE "nothing asked"

/* The longest the detector sleeps while nothing waits and no source asks
 * sooner: the longest refresh a source is asked for, half
 * LIVENESS_GONE_NS, for the same reason (what a flow table entry lives
 * unseen at the least). */
#define STALL_IDLE_MAX_NS FLOWSRCS_REFRESH_MAX_NS

/* The least time between the start of one poll and the next when the next
 * is for a stall's deadline or a source's post (the kernel's word that a
 * wait is near its threshold): a tenth of the interval, 1 ms at least. A
 * stall is called within that of its deadline, and a storm of waits
 * polls ten times an interval at most; every other poll waits for the
 * interval. */
static inline uint64_t stall_min_gap(uint64_t iv)
{
	uint64_t g = iv / 10;

	if (g < 1000000)
		g = 1000000;
	return g < iv ? g : iv;
}

/* The soonest a stall's deadline or a source's post may have the next
 * poll (stall_min_gap() after the last poll's start), or half an
 * interval after the end of a poll that took longer than that; iv the
 * flow_interval. */
static inline uint64_t stall_soonest(const struct stall *s, uint64_t iv)
{
	uint64_t gap = stall_min_gap(iv);

	return s->poll_end > s->poll_t0 + gap ? s->poll_end + iv / 2 : s->poll_t0 + gap;
}

/* The next poll comes after the interval, not as planned: why (the first
 * reason a poll gives). */
static inline void stall_fast(struct stall *s, const char *why)
{
	if (!s->fast) {
		s->fast = 1;
		s->fast_why = why;
	}
}

/* stall_group.c */
const struct port_conf *stall_port_conf(const struct stall *s, const char *name);
/* The incident group of a port: the port, or the pair it belongs to. */
void stall_group_of(const struct stall *s, const char *port, char *buf, size_t len);
/* The ports whose incident group is group (a port, or a peer pair). */
unsigned stall_group_ports(const struct stall *s, const char *group, const char *names[2]);
int stall_in_group(const struct sflow *f, const char *names[2], unsigned n);
unsigned stall_count_siblings(struct stall *s, const struct incident *inc, const char *group,
			      uint64_t since);
/* Bring an incident's sibling count up to date if flows joined since. */
void stall_refresh_siblings(struct stall *s, struct incident *inc);

/* stall_plan.c: a flow observed at now: when must the next poll come for
 * it (plan_ns, plan_why, or stall_fast)? */
void stall_plan_flow(struct stall *s, const struct sflow *f, const struct flow_obs *o,
		     uint64_t now, uint64_t th);

#endif
