/* flowsrc: the flow-source ops table, the counterpart of counters.h's
 * src_ops for flows.
 *
 * A flow source reports what it sees of flows as struct flow_obs (flows.h)
 * through a flow_emit_fn. Two scopes:
 *  - a port source (host = 0) runs per watched port, inside the port's
 *    namespace: sock_diag (kernel TCP), the tc eBPF tracker;
 *    and the RDMA queue pairs of the port's RDMA device;
 *  - a host source (host = 1) serves every port at once: engine flow tables
 *    in one directory, Onload stacks, VMA/XLIO statistics files. The stall
 *    detector assigns its observations to ports by local address and the
 *    ports' selectors.
 * One driver per file; each fills ops and priv in its open(). Nothing here
 * may block: poll() and handle() are called from the daemon's event loop;
 * a source that runs an external tool does it through ctx->run, whose
 * children the loop watches. */
#ifndef NICSTALL_FLOWSRC_H
#define NICSTALL_FLOWSRC_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/flows.h"

struct json_object;

/* An external tool run without a shell and without blocking (the daemon
 * gives probes/probe_exec.h: fixed environment, no inherited fds, its own
 * process group, killed at the timeout, output capped). */
struct flow_src_run_result {
	int ok;                     /* exited with status 0 */
	int not_found, timed_out, truncated;
	const char *out;            /* stdout and stderr, NUL-terminated */
	size_t len;
	const char *error;          /* "" or what went wrong, for people */
	uint64_t cost_ns;           /* from start to exit (wall time) */
};
typedef void (*flow_src_run_fn)(const struct flow_src_run_result *r, void *arg);
struct flow_src_runner {
	/* Start argv (argv[0] a path or a name in the fixed PATH) in the
	 * network namespace nsfd (-1: the daemon's). done is called exactly
	 * once, from the loop, never from inside start. NULL with err when
	 * nothing could be started. */
	void *(*start)(void *ctx, const char *const *argv, int nsfd, uint64_t timeout_ns,
		       size_t max_output, flow_src_run_fn done, void *arg, char *err,
		       size_t errlen);
	/* Kill a running job and forget it: done is not called. */
	void (*cancel)(void *ctx, void *job);
	void *ctx;
};

/* Where a source runs: resolved by the caller before open(). */
struct flow_src_ctx {
	const char *port_name;      /* for messages; NULL for host sources */
	const char *ifname;         /* port sources: interface in the namespace */
	int ifindex;
	int netns_fd;               /* -1: the daemon's own namespace */
	const struct flow_sel *sel; /* watched flows (copied by open) */
	unsigned nsel;              /* 0: every flow */
	const char *dir;            /* engine tables: where the tables are */
	/* the readers of unmodified engines */
	const char *rdma_dev;       /* rdmaqp: the port's RDMA device, NULL none */
	unsigned rdma_port;         /* rdmaqp: its port (1-based) */
	const char *replies_dir;    /* rdmaqp: recorded replies instead of the
				     * kernel (tests, replays), NULL */
	const char *vma_dir;        /* vma: vmastat.<pid> files ("/tmp") */
	const char *xlio_dir;       /* vma: xliostat.<pid> files ("/tmp/xlio") */
	const char *tools_dir;      /* onload: orm_json / onload_stackdump there,
				     * NULL: the fixed PATH */
	uint64_t interval_ns;       /* the source's own rate; 0: its default */
	int hooks_always;           /* bpf: keep the tracker's hooks on even
				     * where its flows are evidence only */
	int sock_paced;             /* sock: no kernel-event watch, every
				     * socket read on its pace */
	int sock_events_any;        /* sock: the watch with either hooks (else
				     * only with sockops callbacks) */
	int tracker_attach;         /* bpf: enum flowtrack_attach_mode
				     * (flowtrack_api.h); 0 auto */
	const struct flow_src_runner *run;  /* onload: external tools */
	/* host sources whose claims are checked (engine, vma): the namespace
	 * of the port a flow routes to, as it will be routed (claimv.h,
	 * claimv_route_fn); NULL: the daemon's own */
	int (*claim_route)(void *arg, int src_kind, const struct flow_key *k);
	void *claim_route_arg;
};

/* One flow an investigation is about, as the stall detector knows it:
 * its source, session (unique per flow for these sources) and pid. */
struct flow_src_ref {
	enum flow_src_kind src;
	uint64_t session;
	int32_t pid;
};
typedef void (*flow_src_evid_done_fn)(void *arg);

struct flow_src;
struct flow_src_ops {
	const char *name;           /* "engine", "sock", "bpf": as in flow listings */
	enum flow_src_kind kind;
	int host;                   /* 1: one instance serves the host */
	int may_sleep;              /* 1: a poll may sleep in the kernel (a
				     * firmware command): costed on the CPU
				     * clock itself, not by wall time */
	/* 0, or -errno with s->err filled (the caller logs it). */
	int (*open)(struct flow_src *s, const struct flow_src_ctx *ctx);
	/* Emit one observation per flow seen now. Returns the number emitted,
	 * or -errno with s->err filled. */
	int (*poll)(struct flow_src *s, flow_emit_fn emit, void *arg);
	/* Optional: an fd to watch for EPOLLIN (-1: none) and what to do when
	 * it is readable. */
	int (*fd)(const struct flow_src *s);
	void (*handle)(struct flow_src *s);
	/* Optional: what `nicstallctl status` shows of the source (its tables,
	 * limits, problems), added to out (a JSON object). */
	void (*status)(const struct flow_src *s, struct json_object *out);
	/* Optional: the source's own view of the flows refs[0..n) (those of
	 * its kind; others are skipped) added to out, a JSON object, for the
	 * evidence bundle. when: "at_stall" or "after". Parts that run a tool
	 * finish later: returns how many are still running, each ending with
	 * one call of done(arg) from the loop (also when the source closes),
	 * or 0 when out is complete now. out is referenced while needed. */
	int (*evidence)(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
			const char *when, struct json_object *out, flow_src_evid_done_fn done,
			void *arg);
	/* Optional: forget arg's running evidence parts; done is not called. */
	void (*evidence_cancel)(struct flow_src *s, void *arg);
	void (*close)(struct flow_src *s);
};

/* The polling contract. Every comment that says "a threshold less a poll"
 * means this; the plan is daemon/detect/stall_plan.c's, a socket's pace
 * sockdiag_pace.h's.
 *
 *   T  the port's stall threshold (stall_ns)
 *   P  the detector's interval, flow_interval (poll_ns)
 *   R  a refresh: T - P, at most LIVENESS_GONE_NS / 2 (refresh_ns)
 *
 *   a flow's wait      its want                  its stall called
 *   begins at t0       t0 + (T - P)              at the first poll
 *   (its source's      (half T when T <= 2P)     after t0 + T
 *   own clock)
 *   |------------------|-------------------------|----> incident
 *     no poll needed     a poll at the want, the   opens (stall.c)
 *     for this flow      next at t0 + T (the
 *                        tracker's hooks come on
 *                        at the want: wanted_ns)
 *
 * - While nothing waits a source that must be looked at (an engine
 *   table: shared memory wakes no one) asks for a poll once a refresh: a
 *   wait that begins just after a poll is seen at the next, at most R
 *   later, dated back to t0 by its source's clock (flows.h), and still
 *   called at t0 + T with a poll to spare. A source the kernel wakes
 *   asks for none (the socket watch: its post comes at t0 + T - P), and
 *   with only such sources the detector polls for their own times (a
 *   discovery, a paced socket) or a second after the last poll.
 * - A source asks for its next poll for reasons of its own (next_ns: a
 *   socket's pace, its read interval, a tool's result, a refresh); the
 *   detector polls at the earliest of those and its flows' wants and
 *   deadlines, a second after the last poll at the latest, never sooner
 *   than P after the last poll's start (at once after a new want).
 * - A source may leave a flow out of a poll while the detector could not
 *   call it stalled before a later one (it sets skipped); evidence-only
 *   flows (the tracker's TCP) are reported at least once a refresh.
 * struct flow_src_sched carries it to each source at every poll. */
struct flow_src_sched {
	/* Set by the caller before every poll() (0: unknown, poll every time).
	 * A flow whose observations can never make the detector wait (the tc
	 * tracker's TCP flows: liveness takes kernel TCP from sock_diag and
	 * bypass TCP from engine tables) is evidence only; it must still be
	 * reported every refresh_ns (flow views, sibling counts over a
	 * threshold), unless it is off until wanted (wanted_ns below). A
	 * source with nothing else to report may skip polls until then, and
	 * sets skipped for each poll it skipped. */
	uint64_t now_ns;            /* CLOCK_MONOTONIC of this poll */
	uint64_t poll_ns;           /* the detector's polling interval */
	uint64_t refresh_ns;
	/* The port's stall threshold. A source whose flows carry their own
	 * clocks may report a flow less often while the detector could not
	 * call it stalled before a later poll (sock_diag: sockdiag_pace.h);
	 * it sets skipped when it left flows out. */
	uint64_t stall_ns;
	/* The last poll (CLOCK_MONOTONIC) that saw a flow of the port wait at
	 * least half its threshold, or stalled; 0: none yet. A source whose
	 * flows are evidence only and whose mere presence costs the port's
	 * traffic (the tracker's hooks: every frame, watched or not) may stay
	 * off until then, and for FLOW_SRC_WANT_HOLD_NS after. */
	uint64_t wanted_ns;
	/* How much earlier than the detector asked for it this poll came: a
	 * poll while nothing asked may come at another wakeup of the daemon
	 * (the counter sweep's: daemon/detect/stall.c plan_next), up to a
	 * tenth of its sleep early (all of it but flow_interval after one
	 * that came at its end alone). A source may do now what it would ask
	 * a poll for within slack_ns (sock_diag's discovery), so that its
	 * next poll is in step with those wakeups; 0: none. */
	uint64_t slack_ns;
	int skipped;
	/* Set by poll() (0 before each): the earliest time (CLOCK_MONOTONIC)
	 * the source needs its next poll for a reason of its own: a socket's
	 * pace, its own read interval, an evidence-only refresh, a tool's
	 * result to collect. The waits of the flows it reported are the
	 * detector's to plan (they carry the source's clocks: flows.h), and
	 * a flow that is not waiting yet can first stall a threshold from
	 * now, so a source with nothing of its own says now_ns + refresh_ns.
	 * A source the kernel wakes for every wait (the socket watch posts
	 * a wait a threshold less a poll old) or with nothing to read (no
	 * engine table; the tracker's hooks off) says its own times only,
	 * or FLOW_SRC_NO_NEXT. 0: poll it again after the detector's
	 * interval (a source that does not know). The detector polls at the
	 * earliest such time, never sooner than its interval, and a second
	 * after the last poll at the latest (daemon/detect/stall_plan.c). */
	uint64_t next_ns;
};

struct flow_src {
	const struct flow_src_ops *ops;
	void *priv;
	char err[256];              /* last error, human readable */
	struct flow_src_sched sched;        /* the polling contract, this poll */
	/* Set by handle(): something fell due, poll now (the detector's
	 * interval after the last poll at the soonest). */
	int wake;
};

#define FLOW_SRC_WANT_HOLD_NS 5000000000ull

/* next_ns for a source with no reason of its own to be polled sooner: a
 * refresh from now (0: every poll, when the threshold is a poll or less). */
static inline uint64_t flow_src_idle_next(const struct flow_src *s)
{
	return s->sched.now_ns && s->sched.refresh_ns ? s->sched.now_ns + s->sched.refresh_ns : 0;
}

/* next_ns for a source with no reason of its own to be polled: what it
 * needs comes through its fd (handle() sets wake) or with the detector's
 * want (the tracker's hooks), so the detector polls for the others, or
 * STALL_IDLE_MAX_NS on (daemon/detect/stall_plan.c). */
#define FLOW_SRC_NO_NEXT UINT64_MAX

/* The earlier of two next_ns (0 is the earliest: the next poll). */
static inline uint64_t flow_src_next_min(uint64_t a, uint64_t b)
{
	return !a || !b ? 0 : a < b ? a : b;
}

extern const struct flow_src_ops flow_src_engine_ops;  /* collectors/flows/src_engine.c */
extern const struct flow_src_ops flow_src_sock_ops;    /* collectors/flows/src_sockdiag.c */
extern const struct flow_src_ops flow_src_bpf_ops;     /* collectors/flows/src_flowtrack.c */
extern const struct flow_src_ops flow_src_onload_ops;  /* collectors/flows/src_onload.c */
extern const struct flow_src_ops flow_src_vma_ops;     /* collectors/flows/src_vma.c */
extern const struct flow_src_ops flow_src_rdmaqp_ops;  /* collectors/flows/src_rdmaqp.c */

#endif
