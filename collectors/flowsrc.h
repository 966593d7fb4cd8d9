/* flowsrc: the flow-source ops table, the counterpart of counters.h's
 * src_ops for flows.
 *
 * A flow source reports what it sees of flows as struct flow_obs (flows.h)
 * through a flow_emit_fn. Two scopes:
 *  - a port source (host = 0) runs per watched port, inside the port's
 *    namespace: sock_diag (kernel TCP), the tc eBPF tracker;
 *  - a host source (host = 1) serves every port at once: engine flow tables
 *    in one directory. The stall detector assigns its observations to ports
 *    by local address and the ports' selectors.
 * One driver per file; each fills ops and priv in its open(). Nothing here
 * may block: poll() and handle() are called from the daemon's event loop. */
#ifndef NICSTALL_FLOWSRC_H
#define NICSTALL_FLOWSRC_H

#include <stddef.h>

#include "collectors/flows.h"

struct json_object;

/* Where a source runs: resolved by the caller before open(). */
struct flow_src_ctx {
	const char *port_name;      /* for messages; NULL for host sources */
	const char *ifname;         /* port sources: interface in the namespace */
	int ifindex;
	int netns_fd;               /* -1: the daemon's own namespace */
	const struct flow_sel *sel; /* watched flows (copied by open) */
	unsigned nsel;              /* 0: every flow */
	const char *dir;            /* host sources: where the tables are */
};

struct flow_src;
struct flow_src_ops {
	const char *name;           /* "engine", "sock", "bpf": as in flow listings */
	enum flow_src_kind kind;
	int host;                   /* 1: one instance serves the host */
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
	void (*close)(struct flow_src *s);
};

struct flow_src {
	const struct flow_src_ops *ops;
	void *priv;
	char err[256];              /* last error, human readable */
	/* Set by the caller before every poll() (0: unknown, poll every time).
	 * A flow whose observations can never make the detector wait (the tc
	 * tracker's TCP flows: liveness takes kernel TCP from sock_diag and
	 * bypass TCP from engine tables) is evidence only; it must still be
	 * reported every refresh_ns (flow views, sibling counts over a
	 * threshold). A source with nothing else to report may skip polls
	 * until then, and sets skipped for each poll it skipped. */
	uint64_t now_ns;            /* CLOCK_MONOTONIC of this poll */
	uint64_t poll_ns;           /* the detector's polling interval */
	uint64_t refresh_ns;
	/* The port's stall threshold. A source whose flows carry their own
	 * clocks may report a flow less often while the detector could not
	 * call it stalled before a later poll (sock_diag: sockdiag_pace.h);
	 * it sets skipped when it left flows out. */
	uint64_t stall_ns;
	int skipped;
};

extern const struct flow_src_ops flow_src_engine_ops;  /* collectors/flow_engine.c */
extern const struct flow_src_ops flow_src_sock_ops;    /* collectors/flow_sockdiag.c */
extern const struct flow_src_ops flow_src_bpf_ops;     /* collectors/flowtrack.c */

#endif
