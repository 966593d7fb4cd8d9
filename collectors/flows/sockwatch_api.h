/* sockwatch: the kernel-event socket watch's loader (sockwatch.bpf.c).
 *
 * Tells, with no read of any socket while its flows are healthy, when a
 * watched TCP socket's wait has lasted its span (the port's threshold less
 * a poll): the kernel judges every wait on the socket's own paths and a
 * deadline wheel (one BPF timer for all) posts to a ring buffer at its
 * deadline.
 * The hooks are the socket's own sockops callbacks where the kernel has
 * what they need (sw_ops on the first cgroup2 mount's root, the flags set
 * on each registered socket by sw_enrol: bpf_setsockopt()'s
 * TCP_BPF_SOCK_OPS_CB_FLAGS, Linux 6.12), with the socket-receive
 * tracepoint beside them; an unwatched socket then pays nothing on its
 * segments. Else, or where one will not attach, four BTF tracepoints that
 * run for every socket of the host (a socket without storage leaves at
 * the lookup): sockwatch_stats() says which and why.
 * Needs kernel BTF, BTF tracepoints (tp_btf: tcp_probe, sock_send_length,
 * sock_recv_length: Linux 6.3), socket storage, bpf_timer (5.15), bpf_loop
 * (5.17), BPF atomics (5.12) and ring buffers (5.8); sockwatch_open() says
 * which is missing, and the caller reads sockets on its own pace instead.
 *
 * One loaded object serves every port of the process. Each port's watch
 * has its own slots and its own dup of the ring's epoll fd; whichever is
 * woken consumes the ring for all. */
#ifndef NICSTALL_SOCKWATCH_API_H
#define NICSTALL_SOCKWATCH_API_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/sockread.h"

struct sockwatch;

/* A deadline reached (or, by its flags, a socket handed back or one that
 * left ESTABLISHED): slot (as sockwatch_add gave it) of w's; the wait's
 * start by the kernel's hooks (up to two jiffies early: the timer's) and
 * at most a jiffy late (wait_late: for dating it); owed: the peer owes
 * (the wait is the last send's); the socket's bytes_acked,
 * bytes_received and bytes written (bytes_acked + unacknowledged) when
 * the hooks last judged it (a read that finds them unchanged finds the
 * same wait). */
struct sockwatch_event {
	uint32_t slot;
	int owed;
	int busy;       /* no deadline: the socket was handed back for its
			 * callbacks' rate (sockwatch_set_busy()); the slot is
			 * the caller's to give up, the socket to read on its
			 * pace */
	int left;       /* no deadline: the socket left ESTABLISHED for a
			 * closing state (a FIN sent or received), to be
			 * read now; the other fields are 0 */
	uint64_t wait_from, wait_late, deadline, acked, rcvd, written;
};
typedef void (*sockwatch_event_fn)(void *arg, const struct sockwatch_event *e);

/* A watch for namespace nsfd (-1: ours; dup'ed). NULL + err. */
struct sockwatch *sockwatch_open(int nsfd, sockwatch_event_fn fn, void *arg, char *err,
				 size_t errlen);
/* The same with the sockops hooks only: where they cannot be had (or the
 * process's watch has the tracepoints already), NULL and err says why
 * ("no sockops callbacks: ..."), no tracepoint having been attached. */
struct sockwatch *sockwatch_open_sockops(int nsfd, sockwatch_event_fn fn, void *arg, char *err,
					 size_t errlen);
void sockwatch_close(struct sockwatch *w);
/* The fd to watch for EPOLLIN (this watch's own), then sockwatch_consume. */
int sockwatch_fd(const struct sockwatch *w);
/* Hand every event posted so far to its watch's fn. How many. */
int sockwatch_consume(void);

/* Watch sockets keys[0..n): slots[i] its slot (> 0), 0 when the kernel
 * has no such socket now (closed, or another took its tuple), or
 * SOCKWATCH_RETRY when the kernel had no socket storage for it now (ask
 * again at a later poll). span: how long a wait lasts before the kernel says so. 0
 * or -errno with err. */
#define SOCKWATCH_RETRY UINT32_MAX
int sockwatch_add(struct sockwatch *w, const struct sr_key *keys, unsigned n, uint64_t span,
		  uint32_t *slots, char *err, size_t errlen);
/* After sockwatch_add: give the callbacks to every socket of w's namespace
 * registered since the last enrolment (judging its wait then), take the
 * flags this watch set off those whose slots were given up (with the
 * sockops hooks: a walk of the namespace's TCP sockets, in the caller's
 * thread; a no-op with the tracepoints). refused(arg, slot), if given,
 * for each socket of w's the kernel would not give them: it has no
 * callbacks, and the caller should give the slot up and read it on its
 * pace. 0 or -errno with err. sockwatch_close() takes the flags off too. */
typedef void (*sockwatch_refused_fn)(void *arg, uint32_t slot);
int sockwatch_enrol(struct sockwatch *w, sockwatch_refused_fn refused, void *arg, char *err,
		    size_t errlen);
/* Sockets w registers from now on are handed back when their sockops
 * callbacks come more than n times in a window of about 1.07 s
 * (2^SW_BUSY_SHIFT ns; 0: never, the default): an event with busy set,
 * the socket's callbacks taken off and its storage deleted, so that it
 * costs what an unwatched socket does. With the tracepoints (which run
 * for every socket whatever is watched) never. */
#define SOCKWATCH_BUSY 1000
void sockwatch_set_busy(struct sockwatch *w, unsigned n);
/* Stop watching a slot of w's (the socket's storage stays until it
 * closes, pointing at a generation no slot has). */
void sockwatch_del(struct sockwatch *w, uint32_t slot);

/* What the kernel's hooks hold for a slot now (sockwatch.bpf.c's sw_slot):
 * a wait judged (waiting), its start by the kernel's clocks and its
 * deadline, whether it sits in the deadline wheel (queued) and whether
 * that deadline was posted already (the wheel posts a wait once), and the
 * bytes the hooks judged it by (bytes_acked, bytes_received, bytes
 * written: as in sockwatch_event). */
struct sockwatch_slot {
	int waiting, queued, posted, owed;
	uint64_t wait_from, deadline, acked, rcvd, written;
};
/* Slot of w's, read twice from the kernel's map (a hook judging the
 * socket between the two reads makes them differ, and then nothing is
 * said): 1 and *s when the slot is w's, of the generation registered and
 * not released; 0 otherwise; -errno when the map cannot be read. */
int sockwatch_slot(const struct sockwatch *w, uint32_t slot, struct sockwatch_slot *s);

/* The process's counts (every watch together). lost: posts a full ring
 * refused, and waits the deadline wheel could not take; a caller that sees it move
 * reads every socket it watches. */
struct sockwatch_stats {
	uint64_t posted, lost, arm_failed, fired, rearmed, hooked;
	unsigned slots;         /* in use, every watch */
	int sockops;            /* the hooks are sockops callbacks */
	char why[160];          /* else why not */
	/* sockets enrolments gave the callbacks, took them off (slot
	 * given up), could not give them (sockwatch_enrol()'s refused) */
	uint64_t enrolled, unenrolled, enrol_failed;
	uint64_t busied;        /* sockets handed back for their rate */
	uint64_t left;          /* posts of sockets that left ESTABLISHED */
};
void sockwatch_stats(struct sockwatch_stats *st);
/* lost + arm_failed: moves whenever an event may have been lost. */
uint64_t sockwatch_losses(void);

/* Tests: the next n posts fail as on a full ring; the next n arms fail;
 * the program named fails to attach at the next load. */
void sockwatch_test_lose(unsigned n);
void sockwatch_test_noarm(unsigned n);
/* Tests: the next n registrations find no socket storage (their slots
 * SOCKWATCH_RETRY), as under memory pressure. */
void sockwatch_test_nomem(unsigned n);
/* Tests: the next n tries at the next load to make the deadline wheel's
 * timer fail as bpf_timer_init does without memory (-ENOMEM); it is tried
 * SW_TIMER_TRIES times, SW_TIMER_RETRY_NS apart. */
#define SW_TIMER_TRIES 16
#define SW_TIMER_RETRY_NS 250000
void sockwatch_test_timer_nomem(unsigned n);
/* Tests: unload whatever a failed test left open (its watches leak). */
void sockwatch_test_unload(void);
/* Tests: make the next n sockets' enrolments fail as a kernel refusal would. */
void sockwatch_test_enrol_fail(unsigned n);
/* Tests: load with the tracepoints, not the sockops hooks (from the next
 * load on). */
void sockwatch_test_tracepoints(int on);
void sockwatch_test_fail_attach(const char *prog);
/* Tests: sockwatch_set_busy() sets n whatever is asked (0: as asked);
 * the next n hand-backs fail as on a full ring. */
void sockwatch_test_busy(unsigned n);
/* Tests: how many loads attached the tracepoints, and how many loads
 * were tried (since the start). */
unsigned sockwatch_test_tracepoint_loads(void);
unsigned sockwatch_test_loads(void);
void sockwatch_test_busy_lose(unsigned n);

#endif
