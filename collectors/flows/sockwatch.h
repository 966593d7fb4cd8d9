/* sockwatch: structs shared by the kernel-event socket watch
 * (sockwatch.bpf.c) and its loader (sockwatch.c). Plain fixed-width types
 * only: compiled by clang -target bpf and by the host compiler. */
#ifndef NICSTALL_SOCKWATCH_H
#define NICSTALL_SOCKWATCH_H

#include <linux/bpf.h>
#include <linux/types.h>

#include "collectors/flows/sockread.h"

#define SW_MAX 65536            /* watched sockets, every port together */
#define SW_REG_CHUNK 16         /* sockets one registration run takes */

/* The deadline wheel (sockwatch.bpf.c): one bucket a tick of SW_TICK_NS,
 * SW_WHEEL ticks ahead at most (a later deadline is looked at again at
 * the horizon), SW_BUCKET slots a bucket. */
#define SW_TICK_NS 1000000ull
#define SW_WHEEL 4096
#define SW_BUCKET 30

/* One watched socket's slot. The socket's
 * storage holds the slot's index and generation; a slot reused for another
 * socket has a new generation, so the old socket's hooks leave it alone.
 * waiting / deadline: as the last hook on the socket judged it
 * (flow_obs_sock_waiting(), collectors/flows/flows.h), deadline = the
 * wait's start by the kernel's clocks + the slot's span; queued: the
 * wheel's tick the slot waits in (0: none). */
struct sw_slot {
	__u64 deadline;         /* CLOCK_MONOTONIC ns; 0: none */
	__u64 wait_from;
	__u64 span;             /* the port's threshold less a poll */
	__u64 queued;           /* the wheel's tick it is in, 0 none */
	__u64 acked, rcvd;      /* bytes_acked, bytes_received as judged */
	__u64 written;          /* bytes_acked + bytes not yet acknowledged */
	__u64 wait_late;        /* the wait's start, at most a jiffy late */
	__u32 copied;           /* copied_seq as judged */
	__u8 owed, pad2[3];     /* the peer owes: the wait is the last send's */
	__u32 gen;
	__u8 waiting, inited, pad[2];
	__u64 posted_dl;        /* the deadline last posted (0: none) */
	/* sw_ops' callbacks in the current window of 2^SW_BUSY_SHIFT ns,
	 * and how many make the socket busy (handed back to its reader's
	 * pace: sockwatch_set_busy(); 0 never) */
	__u32 busy_win, busy_n, busy_max, pad3;
};

/* A busy socket's window: 2^30 ns, about 1.07 s. */
#define SW_BUSY_SHIFT 30

/* A tick's bucket: its entries (slot indices, 0 free), each claimed and
 * taken alone; n: how many are taken (a hint for the timer's look for the
 * next bucket with slots in it). */
struct sw_bucket {
	__u32 n;
	__u32 idx[SW_BUCKET];
	__u32 pad;
};

/* The wheel's one timer (an array element: timers live only in array and
 * hash maps, map_check_btf()). */
struct sw_clock {
	struct bpf_timer t;
};

struct sw_sk {                  /* the socket's storage */
	__u32 slot, gen;
	__u32 added;            /* the sockops callback flags sw_enrol turned on */
};

/* A registration: the socket (as the socket reader looks it up), its slot
 * and generation, and the span after which a wait is worth a look. */
struct sw_reg {
	struct sr_key key;
	__u32 slot, gen;
	__u64 span;
	__u32 busy, pad;        /* the slot's busy_max */
};

/* What the timer posts when a wait reaches its deadline; also a busy
 * socket's hand-back (sw_busy) and a socket that left ESTABLISHED
 * (sw_left), by their flags. */
struct sw_event {
	__u32 slot, gen;
	__u64 deadline, wait_from;
	__u64 acked, rcvd;      /* tcp_sock's bytes_acked, bytes_received then */
	__u64 written, wait_late;
	__u8 owed;
	__u8 busy;              /* not a deadline: the socket was handed back
				 * for its callbacks' rate (sw_ops) */
	__u8 left;              /* not a deadline: the socket left
				 * ESTABLISHED (sw_left) */
	__u8 pad[5];
};

#endif
