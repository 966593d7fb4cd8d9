/* port_int.h: a port's state, shared by port.c (its lifecycle, sources
 * and sampling) and port_view.c (its accessors, the few setters the
 * forensic sequence uses, and its JSON views), private to them: port.c
 * never calls port_view.c. */
#ifndef NICSTALL_PORT_INT_H
#define NICSTALL_PORT_INT_H

#include "daemon/port.h"
#include "collectors/counters/counters.h"
#include "collectors/counters/devlink_health.h"
#include "collectors/counters/src_shared.h"
#include "daemon/recorder.h"
#include "lib/cost.h"

#include <stdint.h>

/* REC_MAX_SRC (recorder.h) bounds the sources of a sample: the devlink
 * health source takes the slot after the host kernel's counters, the
 * application's metrics the last */
enum { SLOT_DRV = 0, SLOT_NETDEV = 1, SLOT_RDMA = 2, SLOT_KERNEL = 3, SLOT_DEVLINK = 4,
       SLOT_HOST = 5, SLOT_APP = 6, NSLOTS = 7 };
_Static_assert(NSLOTS <= REC_MAX_SRC, "the recorder keeps REC_MAX_SRC sources per sample");

#define DEVLINK_EVENTS 32       /* health events kept per port */

struct port_src {
	struct src s;
	int open;               /* open() succeeded */
	int failed;             /* last read failed (logged once) */
	char why[256];          /* why it is not open / last error */
	struct clayout *lay;    /* layout of the last good read (ref) */
	const uint64_t *vals;   /* values of the last good read (borrowed) */
	uint64_t reads, errors;
	struct cost cost;       /* CPU time of its reads */
};

struct nl_mon;
struct json_object;

/* One counter source slot of a port: a row of port_src_kinds[]
 * (port_srcs.c). */
struct port_src_kind {
	const char *slot;       /* its name in code and tests */
	/* Open the slot's source (ps->s.ops set, ps->open on success) or
	 * say in ps->why why not. ctx: where it runs (NULL when the port's
	 * interface does not matter to it: host, application). */
	void (*open)(struct port *p, struct port_src *ps, const struct src_ctx *ctx);
	/* What it adds to the port's status when open (NULL: nothing). */
	void (*json)(const struct port *p, const struct port_src *ps, struct json_object *o);
	/* Let go of what it holds beside its src, before the src closes
	 * (NULL: nothing). */
	void (*shut)(struct port *p);
	/* ENODEV from its read means the interface is gone. */
	int of_ifname;
};
extern const struct port_src_kind port_src_kinds[];
/* Close a source and forget its last reading. */
void port_src_shut(struct port_src *ps);
/* port_new() with the slots of kinds[0..nkinds) (at most REC_MAX_SRC)
 * instead of port_src_kinds: a test's toy source. */
struct port *port_new_with(const struct port_conf *pc, const char *sysfs_root,
			   unsigned rec_cap, struct loop *loop,
			   const struct port_src_kind *kinds, unsigned nkinds);

struct dl_event {               /* one devlink health event, as received */
	uint64_t mono_ns, real_ns;
	struct dlh_reporter rep;
};

struct port {
	struct port_conf conf;
	unsigned long serial;   /* unique per port_new(), never reused */
	const char *sysfs_root;
	enum profile profile;   /* resolved from the driver when auto */
	int nsfd;               /* -1: the daemon's namespace */
	int ifindex;
	unsigned ifflags;
	/* the link's changes of IFF_UP and IFF_RUNNING as the monitor saw
	 * them, a ring (port_link_events_json) */
	struct { uint64_t mono_ns; unsigned flags; } lev[PORT_LINK_EVENTS];
	unsigned nlev;          /* pushed in all; the ring holds the last */
	enum port_state state;
	char reason[256];       /* why the port is down */
	int reason_sticky;      /* reason from a link event, kept on retries */
	uint64_t since_ns;      /* state change time (mono) */
	char rdma_dev[64];      /* configured or discovered, "" none */
	unsigned rdma_port;
	struct ident *ident;
	struct port_src src[REC_MAX_SRC];
	unsigned nsrc;          /* slots: rows of kinds */
	const struct port_src_kind *kinds;      /* port_src_kinds, or a test's */
	struct recorder *rec;
	struct nl_mon *mon;
	unsigned long addr_gen; /* the monitor's address events for ifindex */
	struct dlh_mon *dlmon;  /* devlink health events, NULL none */
	struct dl_event dlev[DEVLINK_EVENTS];
	uint64_t ndlev;         /* events seen; the last DEVLINK_EVENTS kept */
	int dlev_lost;          /* events were lost (ENOBUFS) */
	struct loop *loop;
	uint64_t samples, sample_errors;
	uint64_t last_sample_ns, sample_cost_ns;
	uint64_t disturbed_ns;  /* the end of the last investigation here */
	struct cost rec_cost;   /* CPU time of the recorder pushes */
	uint64_t sample_cost_total_ns;        /* every read's cost summed (metrics) */
	struct host_opts *host;               /* [host], [producer]: NULL not set */
	struct json_object *kmsg;             /* the device's kernel lines at open */
};

/* A source's own (its JSON, its watch) behind a port's share. */
static inline struct src *port_own_src(struct port_src *ps)
{
	struct src *in = src_shared_inner(&ps->s);

	return in ? in : &ps->s;
}

#endif
