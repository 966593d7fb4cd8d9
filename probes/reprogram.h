/* reprogram: the receive-filter reprogram of one interface, as the driver
 * sees it.
 *
 * What counts is the driver, not the flag. dev_set_promiscuity() /
 * __dev_set_promiscuity() (net/core/dev.c) call dev_set_rx_mode(), and so
 * the driver's ndo_set_rx_mode, only when dev->flags changed: when the
 * promiscuity count (IFLA_PROMISCUITY) crosses zero. RTM_GETLINK's
 * IFF_PROMISC is the user flag (dev->gflags, dev_get_flags()), one of the
 * count's holders; packet sockets (tcpdump, libpcap) are others. mlx5's
 * mlx5e_set_rx_mode() only queues set_rx_mode_work, and
 * mlx5e_fs_set_rx_mode_work() (en_fs.c) reads netdev->flags when it runs and
 * compares with what it applied last (ea->promisc_enabled): a crossing
 * undone before the work runs is no change for the card.
 *
 * So: from the flag F and the count C decide which crossing the flag can
 * make (F=0,C=0: set, hold, clear; F=1,C=1: clear, hold, set; otherwise
 * other holders keep the count above zero and no crossing is possible: say
 * so and name them, never claim a reprogram); make the first half, hold it
 * for hold_ns (a timer: nothing waits), make the second, and check the count
 * after each half. The kernel's own "entered/left promiscuous mode" lines
 * (/dev/kmsg, probes/kmsg.h) confirm each crossing where they can be read.
 * A marker file says what to restore should the daemon die during the hold
 * (reprogram_restore_stale). The flag is put back as it was on every path.
 * Mechanism only: which ports may be reprogrammed and how often is the
 * daemon's policy (daemon/forensic/recovery.c). */
#ifndef NICSTALL_REPROGRAM_H
#define NICSTALL_REPROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "probes/kmsg.h"
#include "probes/pholders.h"

struct loop;
struct json_object;
struct reprogram;

#define REPROGRAM_KLINES 4

struct reprogram_result {
	int performed;                  /* both crossings made, held hold_ns */
	char refused[512];              /* "" or why no crossing was possible */
	char error[256];                /* "" or the step that failed */
	int flag_before;                /* the user flag (IFF_PROMISC) before */
	unsigned count_before;          /* IFLA_PROMISCUITY before, */
	unsigned count_held;            /* during the hold, */
	unsigned count_after;           /* and after */
	int restored;                   /* the flag is back as it was */
	char sequence[128];             /* "promisc on, hold 100 ms, promisc off" */
	uint64_t hold_ns;
	uint64_t start_ns, first_ns, second_ns, end_ns;  /* CLOCK_MONOTONIC */
	int kmsg_readable;
	char kmsg_error[128];
	struct kmsg_promisc kline[REPROGRAM_KLINES];
	size_t nkline;
	int confirmed;                  /* the kernel logged both crossings */
	struct pholders holders;        /* when refused: the packet sockets */
	unsigned other_holders;         /* holders that are not packet sockets */
};

typedef void (*reprogram_done_fn)(struct reprogram *r, void *arg);

/* Where markers go (created 0700; NULL or "": no markers). */
void reprogram_set_state_dir(const char *dir);

/* Start on ifname in namespace nsfd (-1: own; ns_name is how to open it
 * again after a restart: a name, a path, or "" for the daemon's own). bus:
 * the PCI address when known (kmsg lines of a device with a parent name
 * it), else NULL. done runs exactly once, from the loop, also when no
 * crossing is possible (result.refused). NULL with err only when it cannot
 * start: no such interface, link down, out of memory. */
struct reprogram *reprogram_start(struct loop *l, int nsfd, const char *ns_name,
				  const char *ifname, const char *bus, uint64_t hold_ns,
				  reprogram_done_fn done, void *arg, char *err, size_t errlen);
const struct reprogram_result *reprogram_result(const struct reprogram *r);
/* Stop now: the flag is put back at once if the hold is running; done is
 * not called. NULL is fine. */
void reprogram_free(struct reprogram *r);
/* {performed, sequence, was_promisc, promiscuity: {before, held, after},
 * hold_ms, times, restored, kernel_log: {readable, lines, confirmed},
 * refused, holders, error} */
int reprogram_to_json(const struct reprogram *r, struct json_object *o);

/* At start: put back the flag of every interface a killed daemon left in
 * the middle of a reprogram (markers in the state dir). Returns how many
 * were restored; each is logged. */
int reprogram_restore_stale(void);

/* What the flag F and the count C allow: +1 set then clear, -1 clear then
 * set, 0 no crossing (other holders). */
int reprogram_plan(int flag, unsigned count);

#endif
