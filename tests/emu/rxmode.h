/* rxmode: the emulated port's model of the mlx5 receive-filter update
 * (test bed only; used by emuport.c, unit-tested by tests/unit/test_emu_rxmode.c).
 *
 * What it models, from the kernel source (Linux 6.18):
 *
 * - net/core/dev.c __dev_set_promiscuity() adds to dev->promiscuity (the
 *   count, IFLA_PROMISCUITY) and sets IFF_PROMISC in dev->flags while the
 *   count is above zero; netif_set_promiscuity() (dev_set_promiscuity())
 *   calls dev_set_rx_mode(), and so the driver's ndo_set_rx_mode, only when
 *   dev->flags changed, i.e. when the count crossed zero.  The user flag
 *   (`ip link set promisc`, RTM_SETLINK) is dev->gflags, which
 *   netif_get_flags() (dev_get_flags()) reports as IFF_PROMISC in ifi_flags;
 *   a packet socket's PACKET_MR_PROMISC membership (libpcap, tcpdump) moves
 *   the count only.  So the driver's state is "count > 0", not the flag.
 * - mlx5 en_main.c mlx5e_set_rx_mode() -> mlx5e_nic_set_rx_mode() only does
 *   queue_work(priv->wq, &priv->set_rx_mode_work); queue_work() on a work
 *   that is still pending is a no-op.  mlx5e_set_rx_mode_work() ->
 *   en_fs.c mlx5e_fs_set_rx_mode_work() reads netdev->flags & IFF_PROMISC
 *   when it RUNS, compares it with ea->promisc_enabled (the state it applied
 *   last), creates or destroys the promiscuous flow table only on a
 *   difference, then stores the reading in ea->promisc_enabled.  A change
 *   undone before the work runs is no change.  IFF_ALLMULTI crossing zero
 *   queues the same work (netif_set_allmulti() -> dev_set_rx_mode()), whose
 *   run then adds or removes only the allmulti l2 rule
 *   (ea->allmulti_enabled) and leaves the promiscuous table, and so the
 *   wedges, as they are.  The model keeps no allmulti rule: its run finds
 *   the promiscuous reading unchanged and applies nothing, the driver's
 *   outcome for the table (test_emu_driver.sh case e).  ndo_set_rx_mode is not called while
 *   the device is down (__dev_set_rx_mode checks IFF_UP); the model queues
 *   the work on every link message regardless, which changes only when the
 *   work runs, not what it applies.
 *
 * The emulator sees the kernel's state through rtnetlink link messages; each
 * one queues the work (a superset of the kernel's queueing: a work that
 * finds nothing changed does nothing, as in the driver), which runs
 * `delay` after it was queued and reads the count at that moment.  The
 * "instant" model is the emulator's former behaviour: every link message
 * whose count > 0 differs from the previous one is a transition at once. */
#ifndef NICSTALL_EMU_RXMODE_H
#define NICSTALL_EMU_RXMODE_H

#include <stdint.h>

#define RXM_RUNS 16		/* work runs remembered for the status output */

struct rxm_run {
	uint64_t queued_ns, at_ns;	/* CLOCK_MONOTONIC */
	uint32_t promiscuity;		/* the count read when the work ran */
	uint8_t flag;			/* the user flag then */
	uint8_t reading;		/* count > 0: netdev->flags & IFF_PROMISC */
	uint8_t applied_before;		/* ea->promisc_enabled before the run */
	uint8_t changed;		/* a real transition: filters reprogrammed */
	unsigned coalesced;		/* link messages folded into this run */
};

struct rxm {
	int deferred;			/* 0: the instant (former) model */
	uint64_t delay_ns;		/* queue_work() to the work running */
	/* the kernel's state, from the newest link message */
	int known;
	uint32_t promiscuity;		/* dev->promiscuity (IFLA_PROMISCUITY) */
	int flag;			/* dev->gflags IFF_PROMISC (ifi_flags) */
	int dev_promisc;		/* dev->flags IFF_PROMISC: promiscuity > 0 */
	/* the driver's state */
	int applied;			/* ea->promisc_enabled */
	int pending;			/* the work is queued and has not run */
	uint64_t queued_ns, due_ns;
	unsigned pending_coalesced;
	/* counts since start */
	unsigned long events;		/* link messages */
	unsigned long crossings;	/* messages whose count crossed zero */
	unsigned long queued;		/* queue_work() that queued */
	unsigned long coalesced;	/* queue_work() on a pending work: no-op */
	unsigned long runs;		/* work runs */
	unsigned long transitions;	/* runs (or instant messages) that changed the state */
	struct rxm_run last[RXM_RUNS];	/* ring: the newest at (runs - 1) % RXM_RUNS */
};

/* deferred != 0: the driver model with delay_ns; 0: the instant model. */
void rxm_init(struct rxm *m, int deferred, uint64_t delay_ns);

/* Change the model at run time: a pending work is dropped and the applied
 * state becomes the kernel's current one (no transition). */
void rxm_set_mode(struct rxm *m, int deferred, uint64_t delay_ns);

/* A link message with the count and the user flag, at now_ns.  The first
 * message only sets the state (the driver applied it when the port opened).
 * Returns 1 when the instant model makes a transition now (the caller
 * clears the wedges), else 0; in the deferred model it queues the work. */
int rxm_link(struct rxm *m, uint32_t promiscuity, int flag, uint64_t now_ns);

/* Is the work queued and due at now_ns? */
int rxm_due(const struct rxm *m, uint64_t now_ns);

/* Run the queued work with the count and the flag read at now_ns.
 * Returns 1 when the reading differs from the applied state (a real
 * transition: the caller clears the wedges), 0 when not, -1 when no work
 * was pending.  *run (may be NULL) gets the record of this run. */
int rxm_run(struct rxm *m, uint32_t promiscuity, int flag, uint64_t now_ns,
	    struct rxm_run *run);

#endif
