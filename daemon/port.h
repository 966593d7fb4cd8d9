/* port: one watched interface (possibly in a network namespace), its
 * counter sources, identity, link state and flight recorder. */
#ifndef NICSTALL_PORT_H
#define NICSTALL_PORT_H

#include <stdint.h>

#include "daemon/conf.h"
#include "collectors/counters.h"
#include "daemon/recorder.h"

struct loop;
struct nl_mon;

enum port_state { PORT_DOWN = 0, PORT_UP = 1 };

struct port_src {
	struct src s;
	int open;               /* open() succeeded */
	int failed;             /* last read failed (logged once) */
	char why[256];          /* why it is not open / last error */
	struct clayout *lay;    /* layout of the last good read (ref) */
	const uint64_t *vals;   /* values of the last good read (borrowed) */
	uint64_t reads, errors;
};

struct ident;

struct port {
	struct port_conf conf;
	unsigned long serial;   /* unique per port_new(), never reused */
	const char *sysfs_root;
	enum profile profile;   /* resolved from the driver when auto */
	int nsfd;               /* -1: the daemon's namespace */
	int ifindex;
	unsigned ifflags;
	enum port_state state;
	char reason[256];       /* why the port is down */
	int reason_sticky;      /* reason from a link event, kept on retries */
	uint64_t since_ns;      /* state change time (mono) */
	char rdma_dev[64];      /* configured or discovered, "" none */
	unsigned rdma_port;
	struct ident *ident;
	struct port_src src[REC_MAX_SRC];
	unsigned nsrc;
	struct recorder *rec;
	struct nl_mon *mon;
	struct loop *loop;
	uint64_t samples, sample_errors;
	uint64_t last_sample_ns, sample_cost_ns;
};

/* Create the runtime port for pc (copied). cap: recorder samples. Never
 * fails for an absent interface or namespace: the port starts down and is
 * retried. Returns NULL only on ENOMEM. */
struct port *port_new(const struct port_conf *pc, const char *sysfs_root,
		      unsigned rec_cap, struct loop *loop);
void port_free(struct port *p);

/* Try to bring a down port up (namespace, interface, sources). */
void port_try_up(struct port *p);
/* Read every source now and append to the recorder (when record != 0). */
void port_sample(struct port *p, uint64_t mono_ns, uint64_t real_ns, int record);
const char *port_state_name(enum port_state s);

#endif
