// SPDX-License-Identifier: GPL-2.0
/* sockwatch: the kernel's own word that a watched TCP socket's wait has
 * lasted a threshold less a poll, so that userspace reads no socket while
 * its flows are healthy.
 *
 * Sockets are registered by userspace (sw_register, a tc program run on
 * demand inside the port's namespace as sockread.bpf.c is): their socket
 * storage gets a slot. Hooks on the paths that change what
 * flow_obs_sock_waiting() (collectors/flows/flows.h) reads leave at once
 * for a socket without storage (bpf_sk_storage_get() without F_CREATE: a
 * load of sk->sk_bpf_storage); for a watched one they judge the wait as
 * the observation would and, when a wait begins or its start moves, arm
 * the slot in the deadline wheel at the wait's start + the span (or post
 * at once, a deadline already past). The wheel's one timer (bpf_timer,
 * made once at load) fires at the next tick that has slots in it, and a
 * slot posts an event to the ring buffer only if the socket still waits
 * with a deadline that has passed; a wait that moved on goes back in the
 * wheel at its new deadline, an ended one drops out.
 *
 * One timer, not one a socket: a timer's memory is allocated without
 * sleeping or spinning (kmalloc_nolock() in __bpf_async_init()), and in
 * hooks, tc runs and syscall programs alike the allocator refused most of
 * a burst of registrations (164,245 of 164,589 tries with 1,032 sockets
 * a port beside busy sessions); a wheel needs no memory after load.
 *
 * Every way a slot can fall out of the wheel counts as lost (sw_lost,
 * sw_arm_failed: userspace then reads every socket at its next poll, at
 * once for a slot that fell out: sw_note_loss posts to wake it): a
 * tick whose bucket and the three after it are full (more than 120 waits
 * beginning in one millisecond), a bucket full when a slot of a later
 * revolution is put back in it, a timer the kernel will not start, a full
 * ring. Entries are claimed and taken one by one (compare-and-swap,
 * exchange), so none is lost to a sweep running beside a queueing.
 * A post comes a tick after its deadline, three more when its bucket
 * spilled, about two when a wait moved by less than a tick; an entry a
 * queuer stalled for a tick between its clock and its claim left in a
 * bucket already swept comes a revolution (4 s) late, and its slot is
 * queued again by the next hook. Not closed: a send or receive hook
 * (after the socket's lock is released) and tcp_probe (in softirq on
 * another CPU) may judge one socket at once, and the older judgement may
 * be stored last; the next hook or the 30 s read sees the wait.
 *
 * The hooks are BTF tracepoints (tp_btf): this kernel refuses fentry and
 * fexit programs, and tracepoints are what every kernel since 6.3 has on
 * these paths (net/ipv4/tcp_input.c, net/socket.c):
 *  - tcp:tcp_probe, at the top of tcp_rcv_established(): every segment an
 *    established socket takes, judged as it will be once processed
 *    (sw_probe: tcp_ack() moves snd_una, tcp_data_queue() rcv_nxt);
 *  - sock:sock_send_length and sock:sock_recv_length, after every
 *    sendmsg() and recvmsg() (sock_sendmsg_nosec(), sock_recvmsg_nosec()):
 *    write_seq and what tcp_push() sent; copied_seq;
 *  - sock:inet_sock_set_state: a socket that closes waits no more, and
 *    one that leaves ESTABLISHED for a closing state is posted (sw_left).
 * Data sent later by the TSQ tasklet or a pacing timer (tcp_tsq_handler(),
 * tcp_pace_kick()), or ACKs taken in tcp_rcv_state_process() (not
 * established), move the socket with no hook: the wait's start seen here
 * is then earlier than the kernel's, and the timer fires early (one read
 * too many, never one too late); a wait that such a path alone begins is
 * seen at the next hook, or at the reader's backstop.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "collectors/flows/sockwatch.h"

char LICENSE[] SEC("license") = "GPL";

#define CLOCK_MONOTONIC 1
#define SW_TCP_ESTABLISHED 1
#define SW_TCP_CLOSE 7

struct sock_common___sw {
	struct {
		long counter;
	} skc_cookie;
} __attribute__((preserve_access_index));

struct sock___sw {
	struct sock_common___sw __sk_common;
} __attribute__((preserve_access_index));

struct tcp_sock___sw {
	__u64 bytes_acked, bytes_received;
	__u32 rcv_nxt, copied_seq, snd_una, snd_nxt, write_seq;
	__u32 data_segs_in, data_segs_out;
	__u32 lsndtime;
	struct {
		struct {
			__u32 lrcvtime;
		} icsk_ack;
	} inet_conn;
} __attribute__((preserve_access_index));

struct sk_buff___sw {
	unsigned int len;
	unsigned char *data;
} __attribute__((preserve_access_index));

struct sw_tcphdr {              /* struct tcphdr, in network order */
	__u16 source, dest;
	__u32 seq, ack_seq;
	__u8 doff_flags, flags;
	__u16 window, check, urg_ptr;
};

/* A segment about to be processed (sw_probe), or none (NULL). */
struct sw_next {
	__u32 seq, len, ack;
	__u8 seg, has_ack;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sw_sk);
} sw_sks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SW_MAX);
	__type(key, __u32);
	__type(value, struct sw_slot);
} sw_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} sw_events SEC(".maps");

extern unsigned int CONFIG_HZ __kconfig __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SW_WHEEL);
	__type(key, __u32);
	__type(value, struct sw_bucket);
} sw_wheel SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_clock);
} sw_clocks SEC(".maps");

/* set by userspace before a registration run */
__u32 sw_reg_n = 0, sw_reg_start = 0;
struct sw_reg sw_regs[SW_REG_CHUNK] = {};
__u8 sw_reg_ok[SW_REG_CHUNK] = {};
/* counts userspace reads (a lost event makes it read every socket) */
__u64 sw_posted = 0, sw_lost = 0, sw_arm_failed = 0, sw_rearmed = 0, sw_fired = 0;
__u64 sw_left_n = 0;             /* posts of sockets that left ESTABLISHED */
/* hook runs on watched sockets: counted per CPU (userspace sums them), so
 * that no hook writes a line other CPUs' hooks and the wheel write */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sw_hooks SEC(".maps");
__u64 sw_queued_n = 0;          /* slots put in the wheel */
/* the wheel: the tick its timer is set for (0: not set), the last tick
 * swept, slots in it not yet swept */
__u64 sw_wheel_at = 0, sw_wheel_done = 0, sw_pending = 0;
__s64 sw_clock_err = 1;         /* sw_start's bpf_timer_init(): 0 made */
/* tests: make the next n posts fail as a full ring would, the next n
 * queueings fail as a full wheel would */
__u32 sw_test_lose = 0, sw_test_noarm = 0;
/* tests: the next n registrations find no storage, as under memory
 * pressure (bpf_local_storage_alloc() without sleeping) */
__u32 sw_test_nomem = 0;
__u64 sw_retry_ns = 1000000;    /* a lost post is tried again this much later */

/* A jiffy in ns, the kernel's when its configuration says, else the
 * longest there is (HZ=100): a wait dated too early fires early, never
 * late. */
static __always_inline __u64 jiffy_ns(void)
{
	unsigned int hz = CONFIG_HZ;

	return hz ? 1000000000ull / hz : 10000000ull;
}

/* The kernel's time of tcp_jiffies32 value then, one jiffy early. */
static __always_inline __u64 at_jiffies(__u32 then, __u64 now)
{
	__u32 d = (__u32)bpf_jiffies64() - then;
	__u64 back = ((__u64)d + 1) * jiffy_ns();

	return back < now ? now - back : 1;
}

/* The same, at most a jiffy late: for dating, not arming. */
static __always_inline __u64 at_jiffies_late(__u32 then, __u64 now)
{
	__u32 d = (__u32)bpf_jiffies64() - then;
	__u64 back = (d ? (__u64)d - 1 : 0) * jiffy_ns();

	return back < now ? now - back : 1;
}

/* A wait fell out of the wheel (a timer the kernel will not start, no
 * bucket, a queueing lost to others): counted, and a post of slot 0 (no
 * socket's) wakes userspace, which reads every socket when it sees the
 * count move (sd_watch_before) now, not at its next poll for another
 * reason (a second away while nothing else asks). A full ring: what
 * fills it has woken it already. */
static __always_inline void sw_note_loss(void)
{
	struct sw_event *e;

	__sync_fetch_and_add(&sw_arm_failed, 1);
	e = bpf_ringbuf_reserve(&sw_events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	bpf_ringbuf_submit(e, 0);
}

/* Set the wheel's timer for tick t if it is set for none or a later one.
 * Two CPUs lowering it at once may start the timer in either order: each
 * starts it for the lowest tick asked and looks again after. A start the
 * kernel refuses leaves it set for none (the next queueing tries again)
 * and counts as a loss (userspace reads every socket). */
static __always_inline void sw_kick(__u64 t, __u64 now)
{
	struct sw_clock *c;
	__u32 zero = 0;
	__u64 cur, at;

	for (int i = 0; i < 4; i++) {
		/* atomic reads: ordered after the placing's increments on
		 * every architecture (a relaxed add may not be) */
		cur = __sync_fetch_and_add(&sw_wheel_at, 0);
		if (cur && cur <= t)
			return;
		if (__sync_val_compare_and_swap(&sw_wheel_at, cur, t) == cur)
			break;
	}
	c = bpf_map_lookup_elem(&sw_clocks, &zero);
	if (!c)
		return;
	for (int i = 0; i < 3; i++) {
		at = __sync_fetch_and_add(&sw_wheel_at, 0);
		if (!at)
			return;
		if (bpf_timer_start(&c->t, at * SW_TICK_NS > now ? at * SW_TICK_NS - now : 1, 0)) {
			__sync_val_compare_and_swap(&sw_wheel_at, at, 0);
			sw_note_loss();
			return;
		}
		if (__sync_fetch_and_add(&sw_wheel_at, 0) == at)
			return;
	}
	/* lowered again and again beside us: the timer may be set later
	 * than the wheel says; set for none (the next queueing sets it) and
	 * counted */
	__sync_lock_test_and_set(&sw_wheel_at, 0);
	sw_note_loss();
}

/* Claim an empty entry of tick t's bucket for slot k: 1 if taken. Entries
 * are claimed one by one (compare-and-swap from 0) and taken by the sweep
 * one by one (exchange to 0), so a slot put in a bucket while it is swept
 * is either taken by that sweep or left for the next. */
static __always_inline int sw_place(__u64 t, __u32 k)
{
	__u32 bk = t % SW_WHEEL;
	struct sw_bucket *b = bpf_map_lookup_elem(&sw_wheel, &bk);

	if (!b)
		return 0;
	for (int j = 0; j < SW_BUCKET; j++) {
		if (__sync_val_compare_and_swap(&b->idx[j], 0, k) == 0) {
			__sync_fetch_and_add(&b->n, 1);
			__sync_fetch_and_add(&sw_pending, 1);
			return 1;
		}
	}
	return 0;
}

/* Put slot k in the wheel at deadline dl: in the bucket of the first tick
 * at or after it, no sooner than two ticks from now (the timer sweeps up
 * to its own tick) and no later than the horizon (a wheel ahead, less the
 * three ticks a full bucket spills into; a later deadline is looked at
 * there and put back). A slot already in the wheel at that tick or before
 * stays (looked at then, it goes back in at its deadline). The slot's
 * queued tick is claimed first (compare-and-swap), then a bucket's entry;
 * with none free in four ticks the claim is given back and the loss
 * counted. */
__noinline int sw_queue(struct sw_slot *s, __u32 k, __u64 dl, __u64 now)
{
	__u64 nt, t, q = 0;
	int won = 0;

	if (!s)
		return 0;
	/* now: the caller's clock, read just before (one clock read a hook:
	 * it is a good part of a hook's cost) */
	nt = now / SW_TICK_NS;
	t = (dl + SW_TICK_NS - 1) / SW_TICK_NS;
	if (t < nt + 2)
		t = nt + 2;
	if (t > nt + SW_WHEEL - 4)
		t = nt + SW_WHEEL - 4;
	if (sw_test_noarm) {
		sw_test_noarm--;
		sw_note_loss();
		return 0;
	}
	for (int i = 0; i < 3 && !won; i++) {
		/* an atomic read: ordered after the caller's stores of the
		 * wait, so a sweep that takes the slot at tick q sees them.
		 * A tick two or more behind now should have been swept: its
		 * entry was stranded (a queuer stalled between its clock and
		 * its claim), and the slot is queued again (a duplicate entry
		 * is harmless) */
		q = __sync_fetch_and_add(&s->queued, 0);
		if (q && q <= t && q + 2 > nt)
			return 0;
		won = __sync_val_compare_and_swap(&s->queued, q, t) == q;
	}
	if (!won) {
		/* others queue it, each for its own tick; one later than
		 * ours is counted (a read of every socket) */
		q = __sync_fetch_and_add(&s->queued, 0);
		if (!q || q > t)
			sw_note_loss();
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		if (!sw_place(t + i, k))
			continue;
		if (i)
			__sync_val_compare_and_swap(&s->queued, t, t + i);
		__sync_fetch_and_add(&sw_queued_n, 1);
		sw_kick(t + i, now);
		return 0;
	}
	__sync_val_compare_and_swap(&s->queued, t, 0);
	sw_note_loss();
	return 0;
}

/* Post slot k's wait. A full ring: counted lost (userspace, woken by what
 * fills it, reads every socket when it sees sw_lost move), and tried again
 * sw_retry_ns later. */
__noinline int sw_post(struct sw_slot *s, __u32 k, __u64 now, __u64 dl)
{
	struct sw_event *e;

	if (!s)
		return 0;
	e = sw_test_lose ? NULL : bpf_ringbuf_reserve(&sw_events, sizeof(*e), 0);
	if (!e) {
		if (sw_test_lose)
			sw_test_lose--;
		__sync_fetch_and_add(&sw_lost, 1);
		sw_queue(s, k, now + sw_retry_ns, now);
		return 0;
	}
	/* a reserved record holds what the ring held there last: a
	 * hand-back's or a closing socket's flag left in it would make this
	 * deadline read as one of those (sw_busy, sw_left) */
	__builtin_memset(e, 0, sizeof(*e));
	e->slot = k;
	e->gen = s->gen;
	e->deadline = dl;
	e->wait_from = s->wait_from;
	e->acked = s->acked;
	e->rcvd = s->rcvd;
	e->written = s->written;
	e->wait_late = s->wait_late;
	e->owed = s->owed;
	/* the deadline read once by the caller: a new wait's, stored since
	 * by a hook on another CPU, is not taken for posted */
	s->posted_dl = dl;
	bpf_ringbuf_submit(e, 0);
	__sync_fetch_and_add(&sw_posted, 1);
	return 0;
}

/* A wait whose deadline is dl: posted now if that is within a tick, else
 * in the wheel. */
static __always_inline void sw_due(struct sw_slot *s, __u32 k, __u64 dl, __u64 now)
{
	if (dl <= now + SW_TICK_NS)
		sw_post(s, k, now, dl);
	else
		sw_queue(s, k, dl, now);
}

/* Judge the socket's wait as flow_obs_sock_waiting() and
 * flow_obs_sock_wait_from() would from its fields (after segment nx, if
 * any), and arm. */
static __always_inline void sw_eval(struct tcp_sock___sw *tp, struct sw_slot *s, __u32 k,
				    const struct sw_next *nx, __u64 now)
{
	__u32 out = tp->data_segs_out, in = tp->data_segs_in;
	__u32 una = tp->snd_una, nxt = tp->snd_nxt, rcv = tp->rcv_nxt;
	__u32 wseq = tp->write_seq;
	__u64 from, dl, rx_at = 0;
	__u64 acked = tp->bytes_acked, rcvd = tp->bytes_received, late;
	int owed, unread, req, moved, same;

	if (nx && nx->seg) {
		/* tcp_ack(): an ACK after snd_una, not after snd_nxt
		 * (tcp_snd_una_update() adds what it acknowledges) */
		if (nx->has_ack && (__s32)(nx->ack - una) > 0 && (__s32)(nxt - nx->ack) >= 0) {
			acked += nx->ack - una;
			una = nx->ack;
		}
		/* tcp_data_queue(): in order, rcv_nxt moves to its end
		 * (tcp_rcv_nxt_update() adds it to bytes_received) */
		/* (data_segs_in counted it already: tcp_segs_in() in
		 * tcp_v4_rcv(), before tcp_rcv_established()) */
		if (nx->len && nx->seq == rcv) {
			rcv += nx->len;
			rcvd += nx->len;
			rx_at = now;
		}
	}
	moved = acked != s->acked || rcvd != s->rcvd || tp->copied_seq != s->copied;
	/* the same send wait: bytes owed when last judged and none
	 * acknowledged since, whatever was received or read meanwhile (a
	 * peer whose window is shut may still send) */
	same = !moved || (acked == s->acked && s->written != s->acked);
	s->acked = acked;
	s->rcvd = rcvd;
	s->copied = tp->copied_seq;
	s->written = acked + (wseq - una);
	owed = wseq != una;                                     /* unsent or in flight */
	unread = (__s32)(rcv - tp->copied_seq) > 0;
	req = out > 1 && in > 1 && (out == in + 1 || in == out + 1);
	if (!owed && !unread && !req) {
		s->waiting = 0;
		s->deadline = 0;
		return;
	}
	s->owed = owed || out > in;
	if (s->owed) {
		from = at_jiffies(tp->lsndtime, now);
		late = at_jiffies_late(tp->lsndtime, now);
		/* written, none of it sent yet: the kernel's lsndtime is still
		 * the last send's; the wait is the write's (the one judged
		 * before, if it is the same: with the sockops hooks the ACK
		 * that ended an earlier wait may have had no callback, and that
		 * wait's start, posted already, would hide this one) */
		if (wseq != nxt && nxt == una)
			from = s->waiting && same && s->wait_from > from ? s->wait_from : now;
		/* the same wait, whatever a retransmission did to lsndtime,
		 * and dated as before unless now dated more than two jiffies
		 * earlier (at_jiffies() dates a jiffy's start from now: a
		 * judgement a jiffy on, or the first one's exact write time
		 * against lsndtime's jiffy, would move the deadline a little
		 * and post the same wait again) */
		if (s->waiting && same && s->wait_from &&
		    (s->wait_from < from || s->wait_from - from <= 2 * jiffy_ns())) {
			from = s->wait_from;
			late = s->wait_late;
		}
	} else {
		from = rx_at ? rx_at : at_jiffies(tp->inet_conn.icsk_ack.lrcvtime, now);
		late = from;
		/* nothing received or read since: the same wait (at_jiffies()
		 * dates a jiffy's start from now, so a second hook in the same
		 * jiffy would date it later and post it again) */
		if (s->waiting && !moved && s->wait_from) {
			from = s->wait_from;
			late = s->wait_late;
		}
	}
	s->wait_late = late > from ? late : from;
	dl = from + s->span;
	if (s->waiting && s->deadline == dl)
		return;         /* the same wait */
	s->waiting = 1;
	s->wait_from = from;
	s->deadline = dl;
	sw_due(s, k, dl, now);
}

/* The watched socket's storage: NULL for any other, at the cost of a
 * load of sk->sk_bpf_storage; what every socket's segments and calls pay
 * (with the tracepoint's own dispatch, most of it: bench/README.md). */
static __always_inline struct sw_sk *sw_watched(void *sk)
{
	return bpf_sk_storage_get(&sw_sks, sk, 0, 0);
}

/* Sockets handed back for their callbacks' rate (sw_busy()); tests: the
 * next n hand-backs fail as on a full ring. */
__u64 sw_busied = 0;
__u32 sw_test_busy_lose = 0;

/* A socket whose callbacks came more than its slot's busy_max times in a
 * window is handed back to its reader, which reads it on its pace until
 * it is idle and then registers it again (sockdiag_watch.c): on a flow
 * that busy a hook on every segment costs the flow more than a read a
 * threshold costs the daemon (bench/README.md: 132 ns a callback, 7.5 a
 * round trip of a watched ping-pong, 8.5-10% of its latency). Its
 * callbacks are taken off (those sw_enrol turned on:
 * bpf_sock_ops_cb_flags_set(), the sockops program's own way) and its
 * storage deleted, so that its receives leave at the lookup as an
 * unwatched socket's do, and its slot waits no more. Only with the post
 * that tells userspace: with the ring full it stays on the callbacks
 * and is tried again at its next one, so that no socket is left watched
 * by nothing. 1 if handed back (st is gone), or if the slot is no longer
 * the socket's. */
static __always_inline int sw_busy(struct bpf_sock_ops *ops, struct bpf_sock *sk,
				   struct sw_sk *st, struct sw_slot *s, __u32 k)
{
	struct sw_event *e;

	if (sw_test_busy_lose) {
		sw_test_busy_lose--;
		return 0;
	}
	e = bpf_ringbuf_reserve(&sw_events, sizeof(*e), 0);
	if (!e)
		return 0;
	/* the slot given up and given again since sw_hook looked: the
	 * socket's generation is not the slot's, its new socket is not
	 * ours to hand back, and this socket has nothing left to judge
	 * there (1: sw_hook leaves) */
	if (s->gen != st->gen) {
		bpf_ringbuf_discard(e, 0);
		return 1;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->slot = k;
	e->gen = st->gen;
	e->busy = 1;
	s->waiting = 0;
	s->deadline = 0;
	bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags & ~(int)st->added);
	bpf_sk_storage_delete(&sw_sks, sk);
	bpf_ringbuf_submit(e, 0);
	__sync_fetch_and_add(&sw_busied, 1);
	return 1;
}

/* A hook on watched socket sk (st its storage): judged after segment nx,
 * if any; ops: the sockops callback's context (NULL for the tracepoints
 * and the enrolment walk), whose callbacks count to the socket's rate. */
static __always_inline void sw_hook(void *sk, struct sw_sk *st, const struct sw_next *nx,
				    struct bpf_sock_ops *ops)
{
	struct tcp_sock___sw *tp;
	struct sw_slot *s;
	__u32 k, zero = 0;
	__u64 *hooks, now;

	k = st->slot;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	if (!s || s->gen != st->gen || !s->inited)
		return;
	tp = (struct tcp_sock___sw *)bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return;
	hooks = bpf_map_lookup_elem(&sw_hooks, &zero);
	if (hooks)
		(*hooks)++;
	/* one clock read a hook: it is a good part of a hook's cost */
	now = bpf_ktime_get_ns();
	if (ops && s->busy_max) {
		/* a socket's callbacks come one at a time (under its lock, or
		 * in its softirq with the lock owned): no atomics */
		__u32 win = (__u32)(now >> SW_BUSY_SHIFT);

		if (s->busy_win != win) {
			s->busy_win = win;
			s->busy_n = 0;
		}
		if (++s->busy_n > s->busy_max && sw_busy(ops, sk, st, s, k))
			return;
	}
	sw_eval(tp, s, k, nx, now);
}

/* The timer: every bucket from the last tick swept to now (a wheel at
 * most), then set for the next tick with slots in it. */
struct sw_sweep {
	__u64 now, nt, from, next;
	__u32 bk, taken;
	__u32 idx[SW_BUCKET];   /* the bucket being swept, taken */
};

/* Slot k taken from a bucket swept at tick nt: due (its tick now or
 * past, the socket still waiting with a deadline not posted) it posts,
 * waiting with a later deadline it goes back in; one queued for a later
 * revolution of this very bucket goes back in it; one queued in another
 * bucket since is left to that one. */
static long sw_look(__u64 i, struct sw_sweep *x)
{
	struct sw_slot *s;
	__u32 k;
	__u64 q, dl;

	if (i >= SW_BUCKET)
		return 1;
	k = x->idx[i];
	if (!k)
		return 0;
	x->taken++;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	if (!s)
		return 0;
	q = __sync_fetch_and_add(&s->queued, 0);
	if (!q)
		return 0;       /* taken out by an earlier entry */
	if (q > x->nt) {
		if (q % SW_WHEEL == x->bk && !sw_place(q, k)) {
			/* its bucket full: the slot falls out of the wheel */
			__sync_val_compare_and_swap(&s->queued, q, 0);
			__sync_fetch_and_add(&sw_lost, 1);
		}
		return 0;
	}
	if (__sync_val_compare_and_swap(&s->queued, q, 0) != q)
		return 0;
	dl = s->deadline;       /* read once: a hook may store a new one */
	if (!s->waiting || !dl || s->posted_dl == dl || !s->inited)
		return 0;
	if (dl > x->now + 100000) {     /* the wait moved on */
		__sync_fetch_and_add(&sw_rearmed, 1);
		sw_queue(s, k, dl, x->now);
		return 0;
	}
	sw_post(s, k, x->now, dl);
	return 0;
}

static long sw_sweep_one(__u64 i, struct sw_sweep *x)
{
	__u64 t = x->from + i;
	struct sw_bucket *b;

	x->bk = t % SW_WHEEL;
	b = bpf_map_lookup_elem(&sw_wheel, &x->bk);
	if (!b)
		return 1;
	if (b->n) {
		/* each entry taken alone: a slot put in meanwhile is taken
		 * now or stays for the next sweep of the bucket */
		for (int j = 0; j < SW_BUCKET; j++)
			x->idx[j] = __sync_lock_test_and_set(&b->idx[j], 0);
		x->taken = 0;
		bpf_loop(SW_BUCKET, sw_look, x, 0);
		if (x->taken) {
			__sync_fetch_and_add(&b->n, -(__s32)x->taken);
			__sync_fetch_and_add(&sw_pending, -(__s64)x->taken);
		}
	}
	sw_wheel_done = t;
	return 0;
}

static long sw_find_next(__u64 i, struct sw_sweep *x)
{
	__u32 bk = (x->nt + 1 + i) % SW_WHEEL;   /* ticks nt+1 .. nt+SW_WHEEL */
	struct sw_bucket *b = bpf_map_lookup_elem(&sw_wheel, &bk);

	if (b && b->n) {
		x->next = x->nt + 1 + i;
		return 1;
	}
	return 0;
}

static int sw_tick(void *map, __u32 *key, struct sw_clock *c)
{
	struct sw_sweep x = {};

	x.now = bpf_ktime_get_ns();
	x.nt = x.now / SW_TICK_NS;
	__sync_fetch_and_add(&sw_fired, 1);
	__sync_lock_test_and_set(&sw_wheel_at, 0);
	x.from = sw_wheel_done + 1;
	if (x.from + SW_WHEEL <= x.nt)
		x.from = x.nt - SW_WHEEL + 1;
	if (x.from <= x.nt)
		bpf_loop(x.nt - x.from + 1, sw_sweep_one, &x, 0);
	if (sw_wheel_done < x.nt)
		sw_wheel_done = x.nt;
	if ((__s64)sw_pending <= 0)
		return 0;
	bpf_loop(SW_WHEEL, sw_find_next, &x, 0);
	if (x.next)
		sw_kick(x.next, x.now);
	return 0;
}

/* A segment the socket takes (trace_tcp_probe() at the top of
 * tcp_rcv_established(), before the segment is processed): what the
 * socket will be once it is, in the fast path tcp_ack() and
 * tcp_data_queue() take: an acceptable ACK moves snd_una to it, data in
 * order moves rcv_nxt and data_segs_in (tcp_segs_in()) and dates the
 * receipt now (lrcvtime, tcp_event_data_recv()). Out-of-order data and
 * SACK change neither. */
SEC("tp_btf/tcp_probe")
int BPF_PROG(sw_probe, void *sk, struct sk_buff___sw *skb)
{
	struct sw_next nx = {};
	struct sw_tcphdr th;
	unsigned char *data;
	__u32 len, hl;
	struct sw_sk *st = sw_watched(sk);

	/* another socket's segment: gone before its header is read */
	if (!st)
		return 0;
	data = skb->data;
	len = skb->len;
	if (bpf_probe_read_kernel(&th, sizeof(th), data))
		return 0;
	hl = (__u32)(th.doff_flags & 0xf0) >> 2;    /* data offset, in bytes */
	if (hl < sizeof(th) || hl > len)
		return 0;
	nx.seg = 1;
	nx.seq = bpf_ntohl(th.seq);
	nx.len = len - hl;
	nx.has_ack = !!(th.flags & 0x10);
	nx.ack = bpf_ntohl(th.ack_seq);
	sw_hook(sk, st, &nx, NULL);
	return 0;
}

/* After every sendmsg() and recvmsg() of any socket (sock_sendmsg_nosec(),
 * sock_recvmsg_nosec()): write_seq and what tcp_push() sent, copied_seq. A
 * socket without storage leaves at the lookup. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(sw_send, void *sk)
{
	struct sw_sk *st = sw_watched(sk);

	if (st)
		sw_hook(sk, st, NULL, NULL);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sw_recv, void *sk)
{
	struct sw_sk *st = sw_watched(sk);

	if (st)
		sw_hook(sk, st, NULL, NULL);
	return 0;
}

/* A watched socket that closed owes nothing any more. */
static __always_inline void sw_closed(struct sw_sk *st)
{
	struct sw_slot *s;
	__u32 k;

	k = st->slot;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	if (s && s->gen == st->gen)
		s->waiting = 0;
}

/* A watched socket that left ESTABLISHED for a closing state (a FIN sent
 * or received): posted at once, so that it is read now, and from then on
 * every SD_WATCH_BACKSTOP_NS while it owes nothing (sd_watch_backstop_ns()
 * doubles that only for an established socket). Past ESTABLISHED the
 * hooks miss paths a read would see (ACKs and data taken in
 * tcp_rcv_state_process(), not tcp_rcv_established(): the list at the
 * top), which a socket quiet for 30 s then kept to its 60 s. Not to
 * CLOSE (a reset, an abort): the socket is unhashed, and the dump the
 * namespace's counters call for finds it gone. Only for the slot's own
 * socket: one given up since keeps its storage until it closes. Not a
 * deadline: userspace does not count it among the deadline wakeups. A
 * full ring: counted lost, as a deadline's post is, and userspace reads
 * every socket at its next poll (sd_watch_before); what filled the ring
 * has woken it. */
static __always_inline void sw_left(struct sw_sk *st)
{
	struct sw_event *e;
	struct sw_slot *s;
	__u32 k;

	k = st->slot;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	if (!s || s->gen != st->gen || !s->inited)
		return;
	e = sw_test_lose ? NULL : bpf_ringbuf_reserve(&sw_events, sizeof(*e), 0);
	if (!e) {
		if (sw_test_lose)
			sw_test_lose--;
		__sync_fetch_and_add(&sw_lost, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->slot = k;
	e->gen = st->gen;
	e->left = 1;
	bpf_ringbuf_submit(e, 0);
	__sync_fetch_and_add(&sw_left_n, 1);
}

/* tcp_set_state(), before the new state is stored: the tracepoint (from
 * inet_sk_state_store()) or the sockops callback (args: the old state,
 * the new). Every socket of the host's changes come to the tracepoint:
 * the storage is looked up only for the two that matter. */
static __always_inline void sw_set_state(void *sk, int oldstate, int newstate)
{
	struct sw_sk *st;

	if (oldstate != SW_TCP_ESTABLISHED && newstate != SW_TCP_CLOSE)
		return;
	st = sw_watched(sk);
	if (!st)
		return;
	if (newstate == SW_TCP_CLOSE)
		sw_closed(st);
	else
		sw_left(st);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(sw_state, void *sk, int oldstate, int newstate)
{
	sw_set_state(sk, oldstate, newstate);
	return 0;
}

/* The same judgement from the socket's own sockops callbacks, which the
 * kernel makes on a socket's segments only where its callback flags ask
 * for them (BPF_SOCK_OPS_TEST_FLAG() in the per-segment callers of
 * tcp_call_bpf(), a bit test in the socket): an unwatched socket pays
 * nothing on its segments, where
 * a tracepoint runs a program for every socket of the host. sw_enrol sets
 * the flags of each registered socket:
 *  - BPF_SOCK_OPS_HDR_OPT_LEN_CB (WRITE_HDR_OPT_CB_FLAG), from
 *    tcp_established_options() in __tcp_transmit_skb() for the segments
 *    sent, retransmissions and pure ACKs too, before snd_nxt moves (a wait
 *    that begins with it: nxt == una, dated now by sw_eval()); not when
 *    the options leave no room (timestamps and three SACK blocks fill
 *    the 40 bytes; TCP-MD5 or TCP-AO with timestamps and SACK blocks make
 *    tcp_established_options() return first; bpf_skops_hdr_opt_len()
 *    leaves at !*remaining); the same callback
 *    from tcp_current_mss() has no segment (skb_tcp_flags 0) and is left;
 *  - BPF_SOCK_OPS_RTT_CB (RTT_CB_FLAG), from tcp_rtt_estimator() in
 *    tcp_ack(), at most once a round trip (the first sample after
 *    snd_una passed rtt_seq, which it sets to snd_nxt): after snd_una
 *    moved and, in tcp_rcv_established()'s fast path, after the data it
 *    came with was queued (tcp_queue_rcv() before tcp_ack());
 *  - BPF_SOCK_OPS_RTO_CB (RTO_CB_FLAG), from tcp_write_timeout(): a send
 *    the options kept from its callback is seen at its first timeout,
 *    dated by lsndtime;
 *  - BPF_SOCK_OPS_STATE_CB (STATE_CB_FLAG), from tcp_set_state(): as the
 *    tracepoint inet_sock_set_state (sw_set_state).
 * Received data has no callback in the fast path (PARSE_HDR_OPT_CB is
 * made only in tcp_validate_incoming(), the slow path) and a read none at
 * all (the receive tracepoint beside these sees reads): a wait that data
 * or an ACK without a callback (after the round trip's first, or of
 * retransmitted data without timestamps) ends is seen ended at the next
 * callback or read, or is read at its deadline and found ended (a read too
 * many, never one too late; sw_eval() does not take such a stale wait's
 * start for a new write's); a wait that received data begins (a request
 * unanswered, data unread) is seen at the ACK the socket sends for it,
 * at the next callback, or at the 30 s read. A write into a zero window
 * with nothing in flight makes no callback until the first window probe
 * (an RTO or more later), which dates it then. The kernel also calls the
 * program, flags or none, a few times as each TCP connection of the host
 * is set up (TIMEOUT_INIT, RWND_INIT, the ESTABLISHED callbacks ...):
 * those leave at the switch. */
SEC("sockops")
int sw_ops(struct bpf_sock_ops *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	struct sw_sk *st;

	if (!sk)
		return 1;
	switch (ctx->op) {
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (!ctx->skb_tcp_flags)
			break;          /* tcp_current_mss(): no segment */
		/* fall through */
	case BPF_SOCK_OPS_RTT_CB:
	case BPF_SOCK_OPS_RTO_CB:
		st = sw_watched(sk);
		if (st)
			sw_hook(sk, st, NULL, ctx);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		sw_set_state(sk, (int)ctx->args[0], (int)ctx->args[1]);
		break;
	}
	return 1;
}

/* bpf_setsockopt(SOL_TCP, TCP_BPF_SOCK_OPS_CB_FLAGS): the socket's
 * callback flags from a program that is not sockops (Linux 6.12,
 * sol_tcp_sockopt() in net/core/filter.c; not in older uapi headers). */
#define SW_SOL_TCP 6
#define SW_TCP_BPF_SOCK_OPS_CB_FLAGS 1008
#define SW_CB_FLAGS (BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG | BPF_SOCK_OPS_RTT_CB_FLAG | \
		     BPF_SOCK_OPS_RTO_CB_FLAG | BPF_SOCK_OPS_STATE_CB_FLAG)

struct seq_file;

struct sw_iter_meta {
	union {
		struct seq_file *seq;
		__u64 seq_;
	};
};

struct sw_iter_tcp {            /* bpf_iter__tcp: pointers 8 bytes each */
	union {
		struct sw_iter_meta *meta;
		__u64 meta_;
	};
	union {
		void *sk_common;
		__u64 sk_;
	};
	__u32 uid;
};

struct tcp_sock___swf {
	__u32 bpf_sock_ops_cb_flags;
} __attribute__((preserve_access_index));

/* counts of sockets enrolments gave the flags, took them off, and could
 * not give them (each such slot is written to the iterator's output);
 * tests: make the next n settings fail */
__u64 sw_enrolled = 0, sw_unenrolled = 0, sw_enrol_failed = 0;
__u32 sw_test_enrol_fail = 0;

/* Enrolment: an iterator over the TCP sockets of the namespace it was made
 * in (bpf_iter_tcp, each socket locked while the program runs:
 * bpf_iter_tcp_seq_show()), run after a registration and when slots are
 * given up: a socket whose storage names a live slot gets the flags of
 * sw_ops' callbacks it lacks, and its wait is judged at once (one that
 * began between the registration's judgement and now); one whose slot
 * was given up loses the flags this watch turned on (those another
 * program had set before stay; one that set the same ones since loses
 * them: the flags are the socket's). A socket the kernel would not give
 * them writes its slot out. */
SEC("iter/tcp")
int sw_enrol(struct sw_iter_tcp *ctx)
{
	struct tcp_sock___swf *tp;
	struct sw_slot *s;
	struct sw_sk *st;
	int f, want;
	__u32 k;

	if (!ctx->sk_common)
		return 0;
	tp = (struct tcp_sock___swf *)bpf_skc_to_tcp_sock(ctx->sk_common);
	if (!tp)
		return 0;
	st = bpf_sk_storage_get(&sw_sks, tp, 0, 0);
	if (!st)
		return 0;
	k = st->slot;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	f = (int)tp->bpf_sock_ops_cb_flags;
	if (s && s->gen == st->gen && s->inited) {
		want = f | SW_CB_FLAGS;
		if (want == f)
			return 0;
		if (sw_test_enrol_fail) {
			sw_test_enrol_fail--;
		} else if (!bpf_setsockopt(tp, SW_SOL_TCP, SW_TCP_BPF_SOCK_OPS_CB_FLAGS, &want,
					   sizeof(want))) {
			st->added |= (__u32)(want & ~f);
			sw_enrolled++;
			sw_hook(tp, st, NULL, NULL);
			return 0;
		}
		sw_enrol_failed++;
		bpf_seq_write(ctx->meta->seq, &k, sizeof(k));
		return 0;
	}
	want = f & ~(int)st->added;
	if (want == f)
		return 0;
	if (!bpf_setsockopt(tp, SW_SOL_TCP, SW_TCP_BPF_SOCK_OPS_CB_FLAGS, &want, sizeof(want))) {
		st->added = 0;
		sw_unenrolled++;
	}
	return 0;
}

/* The wheel's timer, made once at load in the daemon's own context. */
SEC("syscall")
int sw_start(void *ctx)
{
	struct sw_clock *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&sw_clocks, &zero);
	if (!c)
		return 0;
	sw_clock_err = bpf_timer_init(&c->t, &sw_clocks, CLOCK_MONOTONIC);
	if (sw_clock_err == -16)        /* -EBUSY: made before */
		sw_clock_err = 0;
	if (!sw_clock_err)
		sw_clock_err = bpf_timer_set_callback(&c->t, sw_tick);
	return 0;
}

/* sw_release's arguments */
__u32 sw_op_n = 0;
__u32 sw_op_slots[SW_REG_CHUNK] = {}, sw_op_gens[SW_REG_CHUNK] = {};

/* Slots given up: a new generation (the old socket's storage points at
 * the old one), waiting no more; still in the wheel, it posts nothing. */
SEC("syscall")
int sw_release(void *ctx)
{
	for (__u32 j = 0; j < SW_REG_CHUNK; j++) {
		struct sw_slot *s;
		__u32 k;

		if (j >= sw_op_n)
			break;
		k = sw_op_slots[j];
		s = bpf_map_lookup_elem(&sw_slots, &k);
		if (!s)
			continue;
		s->gen = sw_op_gens[j];
		s->inited = 0;
		s->waiting = 0;
		s->deadline = 0;
	}
	return 0;
}

/* Registration: for each sw_regs[sw_reg_start ..) below sw_reg_n, find the
 * socket as the socket reader does, give it storage, set up its slot and
 * judge its wait now (a socket that waits since before it was watched
 * fires at its own deadline, at once if that has passed). */
static __always_inline void sw_reg_one(struct __sk_buff *ctx, __u32 i)
{
	struct bpf_sock_tuple t = {};
	struct tcp_sock___sw *tp;
	struct sw_slot *s;
	struct sw_reg *r;
	struct bpf_sock *sk;
	struct sw_sk *st;
	__u32 size, k;

	asm volatile("%[i] &= %[m]" : [i] "+r"(i) : [m] "i"(SW_REG_CHUNK - 1));
	r = &sw_regs[i];
	sw_reg_ok[i] = 0;
	if (r->key.v4) {
		t.ipv4.saddr = r->key.raddr[3];
		t.ipv4.daddr = r->key.laddr[3];
		t.ipv4.sport = r->key.rport;
		t.ipv4.dport = r->key.lport;
		size = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, r->key.raddr, 16);
		__builtin_memcpy(t.ipv6.daddr, r->key.laddr, 16);
		t.ipv6.sport = r->key.rport;
		t.ipv6.dport = r->key.lport;
		size = sizeof(t.ipv6);
	}
	k = r->slot;
	s = bpf_map_lookup_elem(&sw_slots, &k);
	if (!s)
		return;
	sk = bpf_sk_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return;
	tp = (struct tcp_sock___sw *)bpf_skc_to_tcp_sock(sk);
	if (!tp || (__u64)((struct sock___sw *)tp)->__sk_common.skc_cookie.counter != r->key.cookie)
		goto out;
	/* the storage is allocated without sleeping (bpf_local_storage_alloc()):
	 * none now, asked again later */
	st = sw_test_nomem ? NULL :
	     bpf_sk_storage_get(&sw_sks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		if (sw_test_nomem)
			sw_test_nomem--;
		sw_reg_ok[i] = 2;
		goto out;
	}
	s->gen = r->gen;
	s->span = r->span;
	s->waiting = 0;
	s->posted_dl = 0;
	s->deadline = 0;
	s->wait_from = 0;
	s->acked = s->rcvd = s->written = 0;
	s->busy_win = s->busy_n = 0;
	s->busy_max = r->busy;
	s->inited = 1;
	st->slot = r->slot;
	st->gen = r->gen;
	sw_eval(tp, s, r->slot, NULL, bpf_ktime_get_ns());
	sw_reg_ok[i] = 1;
out:
	bpf_sk_release(sk);
}

SEC("tc")
int sw_register(struct __sk_buff *ctx)
{
	for (__u32 j = 0; j < SW_REG_CHUNK; j++) {
		__u32 i = sw_reg_start + j;

		if (i >= sw_reg_n || i >= SW_REG_CHUNK)
			break;
		sw_reg_one(ctx, i);
	}
	return TC_ACT_OK;
}
