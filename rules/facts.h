/* facts: the schema of the incident facts (nicstall.rules(5) "FACTS"),
 * schema FACTS_SCHEMA. The daemon writes them (daemon/forensic/facts.c), the rules
 * read them, the bundle summary and the report print them: every key is
 * named here once.
 *
 *   { schema, port,
 *     ports: { NAME: { profile, driver, firmware, psid, link_up, mtu,
 *                      pfc_prevention_tout,
 *                      oversize_sizes, link_events,
 *                      stall|window|baseline|held: { span_s, counters: {NAME: delta} } } },
 *     flows: { stalled, progressing, held: {unsent, unread, staged},
 *              list: [ {tuple, src, waited_ms, unsent, inflight, unread, staged} ] },
 *     threads: [ {pid, tid, comm, state, wchan, stack, syscall, vcsw_rate,
 *                 nvcsw_rate, role, wait_ms, off_cpu_pct, off_cpu_ms,
 *                 preempted_ms, vcsw, ivcsw, vcsw_per_s, sleep_us,
 *                 sleep_func, stack_at_sleep, sleep_now_ms, watch,
 *                 called} ],
 *     onload: [ {stack, name, pid, dumps, span_ms, before_age_ms,
 *                COUNTER, COUNTER_before, COUNTER_after, COUNTER_rise,
 *                LEVEL, LEVEL_before, LEVEL_after, pkt_bufs_free_min,
 *                ef_buzz_usec, ef_spin_usec, ef_poll_usec} ],
 *     pings: [ {from, to, sent, received} ],
 *     ping_mtu: { ok, from, to, size, sent, received, error, small_size },
 *     captures: [ {port, promisc, frames, transition} ],
 *     release: { released, action (self | promisc-capture | reprogram |
 *                ambiguous | none), port, after_ms, at_ms, ambiguous,
 *                after_second_ms, actions: [...] },
 *     host: { span_s, io_full_pct, disk, producer, ... (FK_HOST_NUMS, FK_HOST_STRS) },
 *     ranks: [ { name, self, answered, and host's keys } ],
 *     peers: { NAME: { host, notified, answered, rtt_ms, bundle, error,
 *                      flows_total, flows_stalled, flows_waiting, other_end,
 *                      ports: { PORT: { profile,
 *                               stall|window|baseline: { span_s, counters, signals } } } } } }
 * (a peer's summary carries no held period: peer.held.X is unknown)
 * A peer that was not heard from has answered false and no ports: its
 * numbers are unknown, never zero. flows.list[].peer names the peer that
 * holds the other end of a stalled flow (from its summary).
 * onload[]: one item per Onload stack of the stalled flows, from the
 * stackdumps before (the last periodic poll), during (at the stall) and
 * after (the end of the investigation): a value the dumps did not print
 * is absent, never 0 (FK_ONLOAD_* below). */
#ifndef NICSTALL_FACTS_KEYS_H
#define NICSTALL_FACTS_KEYS_H

#define FACTS_SCHEMA 1

#define FK_SCHEMA       "schema"
#define FK_PORT         "port"
#define FK_PORTS        "ports"
#define FK_FLOWS        "flows"
#define FK_THREADS      "threads"
#define FK_PINGS        "pings"
#define FK_PING_MTU     "ping_mtu"
#define FK_CAPTURES     "captures"
#define FK_RELEASE      "release"
#define FK_PEERS        "peers"
#define FK_ONLOAD       "onload"
#define FK_HOST         "host"
#define FK_RANKS        "ranks"

/* ports.NAME */
#define FK_P_PROFILE    "profile"
#define FK_P_DRIVER     "driver"
#define FK_P_FIRMWARE   "firmware"
#define FK_P_PSID       "psid"
#define FK_P_LINK_UP    "link_up"
#define FK_P_MTU        "mtu"
/* the driver's PFC storm prevention timeout ("100 ms", "disabled",
 * "auto", "not supported by the driver"; absent: not asked) */
#define FK_P_PFC_PREVENTION "pfc_prevention_tout"
/* the link's changes the snapshot recorded, "srv down at +12 ms and up at
 * +113 ms" from when the first flow stopped; absent: none in the last
 * minute */
#define FK_P_LINK_EVENTS "link_events"
/* the RFC 2819 length buckets above the port's MTU that counted frames in
 * the observation window, else over the stall ("2048-4095 bytes: 7";
 * absent: none) */
#define FK_P_OVERSIZE_SIZES "oversize_sizes"
/* the periods of a port, each { span_s, counters }: held is the window's
 * part inside the stall, when a stalled flow moved again within it (to
 * its last sample before the detector's last look that saw that flow
 * stalled; absent when none moved, or when one moved before its first
 * sample) */
#define FK_PER_STALL    "stall"
#define FK_PER_WINDOW   "window"
#define FK_PER_BASELINE "baseline"
#define FK_PER_HELD     "held"
#define FK_SPAN_S       "span_s"
/* the shortest held period judged in the window's place (the rules'
 * producer-stall "work" line says 0.1 too) */
#define HELD_MIN_S      0.1
#define FK_COUNTERS     "counters"

/* flows */
#define FK_F_STALLED    "stalled"
#define FK_F_PROGRESSING "progressing"
#define FK_F_HELD       "held"
#define FK_F_LIST       "list"
/* The stalled flows' own retransmissions from their last progress to the
 * end of the observation window (kernel TCP tcpi_total_retrans, Onload
 * total_retrans, VMA/XLIO n_tx_retransmits); absent when no stalled flow
 * publishes a count. */
#define FK_F_RETRANS    "retrans"
#define FK_H_UNSENT     "unsent"
#define FK_H_UNREAD     "unread"
#define FK_H_STAGED     "staged"
/* flows.list[] */
#define FK_FL_TUPLE     "tuple"
#define FK_FL_SRC       "src"
#define FK_FL_WAITED_MS "waited_ms"
#define FK_FL_INFLIGHT  "inflight"
#define FK_FL_PEER      "peer"

/* peers.NAME (summaries of peer daemons, nicstalld.conf(5) [peer]) */
#define FK_PE_HOST      "host"
#define FK_PE_NOTIFIED  "notified"
#define FK_PE_ANSWERED  "answered"
#define FK_PE_RTT_MS    "rtt_ms"
#define FK_PE_BUNDLE    "bundle"
#define FK_PE_ERROR     "error"
#define FK_PE_FLOWS_TOTAL   "flows_total"
#define FK_PE_FLOWS_STALLED "flows_stalled"
#define FK_PE_FLOWS_WAITING "flows_waiting"
#define FK_PE_OTHER_END "other_end"    /* this host's stalled flows whose other end it holds */
#define FK_PE_PORTS     "ports"
#define FK_PE_SIGNALS   "signals"      /* a period's signals as the peer reckoned them */
#define FK_PE_RESOURCES "resources"    /* its host figures (FK_HOST_NUMS, FK_HOST_STRS) */

/* threads[] */
#define FK_T_PID        "pid"
#define FK_T_TID        "tid"
#define FK_T_COMM       "comm"
#define FK_T_STATE      "state"
#define FK_T_WCHAN      "wchan"
#define FK_T_STACK      "stack"
#define FK_T_SYSCALL    "syscall"
#define FK_T_VCSW_RATE  "vcsw_rate"
#define FK_T_NVCSW_RATE "nvcsw_rate"
#define FK_T_ROLE       "role"
/* threads[] from the thread watch (daemon/detect/threadpass.c), over the flows'
 * wait (its start to the evidence): absent without the watch */
#define FK_T_WAIT_MS    "wait_ms"       /* the span the figures cover */
#define FK_T_OFF_CPU_PCT "off_cpu_pct"  /* off CPU of its own accord, % */
#define FK_T_OFF_CPU_MS "off_cpu_ms"    /* the same in ms */
#define FK_T_PREEMPTED_MS "preempted_ms"
#define FK_T_VCSW       "vcsw"          /* voluntary switches */
#define FK_T_IVCSW      "ivcsw"         /* involuntary switches */
#define FK_T_VCSW_PER_S "vcsw_per_s"
#define FK_T_SLEEP_US   "sleep_us"      /* mean voluntary sleep */
#define FK_T_SLEEP_FUNC "sleep_func"    /* the kernel function of its last sleep */
#define FK_T_STACK_AT_SLEEP "stack_at_sleep"
#define FK_T_SLEEP_NOW_MS "sleep_now_ms" /* in one sleep for so long (0: on CPU) */
#define FK_T_IN_SYSCALL "in_syscall"    /* thread_watch_syscalls: the call it is in */
#define FK_T_IN_SYSCALL_MS "in_syscall_ms" /* and for so long */
#define FK_T_WATCH      "watch"         /* the watch's verdict (threadjudge.h) */
#define FK_T_CALLED     "called"        /* the watch called the stall on it */

/* onload[]: the stack, and its dumps (daemon/forensic/onloadfacts.c onload_facts()) */
#define FK_O_STACK      "stack"
#define FK_O_NAME       "name"
#define FK_O_PID        "pid"
#define FK_O_DUMPS      "dumps"         /* how many of before/during/after parsed */
#define FK_O_SPAN_MS    "span_ms"       /* first dump's start to last dump's end */
#define FK_O_BEFORE_AGE_MS "before_age_ms"  /* the before dump's age at the stall */
#define FK_O_FREE_MIN   "pkt_bufs_free_min"
/* ci_netif_stats counters (stats_def.h): NAME is the value during the
 * stall, NAME_before / NAME_after those of the other dumps, NAME_rise
 * the rise from the first dump that has it to the last (absent when it
 * fell: the stack's counters were reset) */
#define FK_ONLOAD_COUNTERS(X) X("lock_wakes") X("tcp_send_ni_lock_contends") \
	X("tcp_send_nonb_pool_empty") X("pkt_wait_spin") X("pkt_wait_primes") \
	X("unlock_slow_pkt_waiter") X("reap_buf_limited") X("refill_rx_limited") \
	X("refill_buf_limited") X("defer_work_limited") X("defer_work_contended_unsafe") \
	X("stack_lock_buzz")
/* levels (ci_netif_dump_pkt_summary(), ci_netif_dump_extra_to_logger()):
 * NAME, NAME_before, NAME_after; nonb_pool is a boolean */
#define FK_ONLOAD_LEVELS(X) X("pkt_bufs_free") X("pkt_bufs_alloc") X("pkt_bufs_max") \
	X("nonb_pool")
/* the stack's effective options (ci_netif_config_opts_dump()): the fact
 * name and the EF_ name the dump prints */
#define FK_ONLOAD_OPTS(X) X("ef_buzz_usec", "EF_BUZZ_USEC") X("ef_spin_usec", "EF_SPIN_USEC") \
	X("ef_poll_usec", "EF_POLL_USEC")

/* host: this host's resources over the stall and the observation window
 * (the "host" source's counters, daemon/hostfacts.c), the figures the
 * producer-stall verdicts name; peers.NAME.resources the same from a
 * peer's summary. Percentages of the period's span (a producer's delays are
 * summed over its threads: they may pass 100). X(key) for numbers,
 * S(key) for strings. */
#define FK_HOST_NUMS(X) X("span_s") \
	X("io_some_pct") X("io_full_pct") X("cpu_some_pct") X("mem_some_pct") X("mem_full_pct") \
	X("disk_reads_s") X("disk_writes_s") X("disk_await_ms") X("disk_util_pct") \
	X("producer_blkio_s") X("producer_blkio_pct") X("producer_run_delay_s") \
	X("producer_run_delay_pct") X("producer_throttled_s") X("producer_throttled_pct") \
	X("producer_cpu_pct") X("app_wait_s") X("app_wait_pct") X("app_stopped_n")
#define FK_HOST_STRS(S) S("disk") S("disk_model") S("disk_firmware") S("disk_transport") \
	S("producer") S("producer_io_limit") S("producer_io_limit_cgroup") \
	S("app_endpoint") S("app_wait") S("app_said")
/* ranks[]: this host (self true, name its host_name) and every peer
 * notified (answered, and when it did its host figures), each with the
 * keys of host above */
#define FK_RK_NAME      "name"
#define FK_RK_SELF      "self"
#define FK_RK_ANSWERED  "answered"

/* pings[] */
#define FK_PG_FROM      "from"
#define FK_PG_TO        "to"
#define FK_PG_SENT      "sent"
#define FK_PG_RECEIVED  "received"
/* ping_mtu: the don't-fragment echo at the port's MTU, beside the small
 * one: ok is false when one went unanswered (the first such is the one
 * described), unknown when none was sent */
#define FK_PM_OK        "ok"
#define FK_PM_SIZE      "size"
#define FK_PM_SMALL     "small_size"
#define FK_PM_ERROR     "error"

/* captures[] */
#define FK_C_PORT       "port"
#define FK_C_PROMISC    "promisc"
#define FK_C_FRAMES     "frames"
#define FK_C_TRANSITION "transition"

/* release */
#define FK_R_RELEASED   "released"
#define FK_R_ACTION     "action"
#define FK_R_AFTER_MS   "after_ms"     /* from the releasing action's effect */
#define FK_R_PORT       "port"         /* the port of the releasing action */
#define FK_R_AT_MS      "at_ms"        /* from the investigation's start */
#define FK_R_AMBIGUOUS  "ambiguous"    /* "ambiguous between X on P and Y on Q" */
#define FK_R_AFTER_SECOND_MS "after_second_ms"  /* ... from the second's effect */
#define FK_R_ORDER      "order"        /* self: the release and the first action, in order */
#define FK_R_NOT_CREDITED "not_credited" /* self: an action that ran before and why it is not the cause */
/* a credited filter action: its port's frames after it, {port_frames,
 * vport_frames, span_ms} (the frames reached the vport again) */
#define FK_R_VPORT_AFTER "vport_after"
#define FK_R_FIRST_ACTION_MS "first_action_ms" /* self: the first action's effect */

/* The name a counter has in facts: "netdev/NAME" for netdev stats64 (their
 * names clash with driver counters), NAME as is otherwise. */
#define FACTS_NETDEV_PREFIX "netdev/"

#endif
