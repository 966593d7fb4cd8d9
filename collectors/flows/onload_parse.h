/* flow_onload: Onload stacks and sockets from the installed tools' output.
 *
 * Onload's shared state is version-locked and its headers are GPL-2.0, so
 * the daemon does not map stacks itself: it runs the tools (without a
 * shell, with a timeout and an output cap; see the integration note) and
 * parses what they print. Three formats, as Onload 9.0.2 prints them:
 *
 *  - `orm_json sockets` (or `orm_json stack`, which adds "stack_state"):
 *    src/tools/onload_remote_monitor/orm_json_lib.c orm_do_dump(); the
 *    field names come from the FTL tables of ftl_defs.h (STRUCT_TCP,
 *    STRUCT_SOCK, STRUCT_SOCK_CPLANE, STRUCT_IP_HDRS, STRUCT_UDP_RECV_Q,
 *    STRUCT_NETIF_STATE, STRUCT_IP_TIMER_STATE). 64-bit values are printed
 *    as strings. Non-flat: {"onload_version":..,"json":[{"<stack id>":
 *    {"stack":{"tcp":{"<sock id>":{"tcp_state":{...}}},"udp":{..}}}}]};
 *    --flat: {"stacks":[{"id":N,"name":..,"stack":{...}}]}. It reads the
 *    mapped state without taking the stack lock.
 *  - `onload_stackdump <id> netstat`: src/lib/transport/ip/waitable.c
 *    citp_waitable_print_to_logger(): "TCP rq tq lcl:port rmt:port STATE"
 *    with queue lengths in packets, no stack header (run it per stack).
 *  - `onload_stackdump --nolock <id> lots`: src/tools/ip/libstack.c
 *    stack_lots(): ci_netif_dump_to_logger ("...: stack=N name=X", pid,
 *    pkt_bufs), netif_debug.c dump_extra ("nonb_pool=", lock), the socket
 *    dumps of waitable.c / tcp_debug.c ci_tcp_state_dump() ("snd:
 *    up=..una-nxt-max=..", "snd: send=B(P) .. inflight=", "rcv: bytes=..
 *    usr=", "total_retrans="), then the ci_netif_stats counters as "name:
 *    value" lines (stats_dump.h ci_dump_stats(): tcp_send_nonb_pool_empty,
 *    tcp_send_ni_lock_contends, lock_wakes, ...), and a "process env"
 *    section with process environments (process_dump(), printed last, the
 *    values raw), which flow_onload_scrub() cuts away with everything
 *    after it before anything is kept.
 *
 * Everything parsed is bounded: FLOW_ONLOAD_MAX_TEXT bytes of input,
 * FLOW_ONLOAD_MAX_STACKS stacks, FLOW_ONLOAD_MAX_SOCKS sockets and
 * FLOW_ONLOAD_MAX_COUNTERS counters per stack; more is counted as dropped.
 */
#ifndef NICSTALL_FLOW_ONLOAD_H
#define NICSTALL_FLOW_ONLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/flows.h"

#define FLOW_ONLOAD_MAX_TEXT     (32u << 20)
#define FLOW_ONLOAD_MAX_STACKS   64u
#define FLOW_ONLOAD_MAX_SOCKS    16384u
#define FLOW_ONLOAD_MAX_COUNTERS 512u
#define FLOW_ONLOAD_NAME         48u
#define FLOW_ONLOAD_MAX_OPTS     8u

/* Onload's TCP state word (ip.h CI_TCP_*): the state number is bits 12-15. */
#define FLOW_ONLOAD_STATE_NUM(s) (((s) >> 12) & 0xfu)

/* What a socket record carries (formats differ). */
#define FLOW_ONLOAD_HAVE_SEQ     0x01u  /* snd_nxt, snd_una */
#define FLOW_ONLOAD_HAVE_RCV     0x02u  /* rcv_added, rcv_delivered (or usr) */
#define FLOW_ONLOAD_HAVE_SENDQ_B 0x04u  /* send queue in bytes (lots) */
#define FLOW_ONLOAD_HAVE_TIMES   0x08u  /* t_last_sent, t_last_recv_* (ticks) */
#define FLOW_ONLOAD_HAVE_QPKTS   0x10u  /* queue lengths in packets */
#define FLOW_ONLOAD_HAVE_RTO     0x20u  /* rto and rto_tid.time (ticks; orm_json stack) */

struct flow_onload_sock {
	int stack_id, sock_id;
	int pid;                    /* owner (JSON s.pid), 0 unknown */
	uint8_t proto;              /* IPPROTO_TCP, IPPROTO_UDP */
	uint32_t ostate;            /* Onload state word; 0 when only a name */
	int lstate;                 /* Linux TCP state number (1 ESTABLISHED..) */
	struct in6_addr laddr, raddr;   /* IPv4 as IPv4-mapped */
	uint16_t lport, rport;      /* network byte order */
	uint32_t snd_nxt, snd_una, snd_max;
	uint32_t rcv_added, rcv_delivered;
	uint32_t send_in, send_out;
	uint32_t sendq_pkts, retrans_pkts, recvq_pkts;
	uint64_t sendq_bytes;
	uint32_t t_last_sent, t_last_recv_ack, t_last_recv_payload;
	uint32_t rto, rto_time;     /* retransmission timeout, RTO timer expiry (ticks) */
	uint32_t total_retrans;
	int so_error;
	uint32_t udp_added, udp_delivered;  /* UDP recv_q packets */
	unsigned have;
};

struct flow_onload_counter {
	char name[FLOW_ONLOAD_NAME];
	uint64_t value;
};

struct flow_onload_stack {
	int id;
	char name[FLOW_ONLOAD_NAME];
	int pid;
	/* stack_state.iptimer_state: converts t_last_* ticks to time */
	uint32_t now_ticks, khz, frc2tick;
	int have_time;
	unsigned ncounters;
	struct flow_onload_counter counters[FLOW_ONLOAD_MAX_COUNTERS];
	/* the options of flow_onload_opt_names the lots text printed (its
	 * "config opts" section): the stack's effective values */
	unsigned nopts;
	struct flow_onload_counter opts[FLOW_ONLOAD_MAX_OPTS];
};

struct flow_onload_dump {
	char version[32];
	unsigned nstacks, nsocks;
	unsigned dropped;           /* records over the limits */
	int cut;                    /* lots text ended inside a line (not read) */
	struct flow_onload_stack *stacks;   /* FLOW_ONLOAD_MAX_STACKS */
	struct flow_onload_sock *socks;     /* FLOW_ONLOAD_MAX_SOCKS */
};

/* Allocate / free the arrays of a dump. 0 or -ENOMEM. */
int flow_onload_dump_init(struct flow_onload_dump *d);
void flow_onload_dump_reset(struct flow_onload_dump *d);
void flow_onload_dump_free(struct flow_onload_dump *d);

/* Parse orm_json output (either shape). 0, or -EINVAL with err filled. */
int flow_onload_parse_json(const char *text, size_t len, struct flow_onload_dump *d,
			   char *err, size_t errlen);
/* Parse `onload_stackdump <stack_id> netstat` output of one stack. */
int flow_onload_parse_netstat(const char *text, size_t len, int stack_id,
			      struct flow_onload_dump *d, char *err, size_t errlen);
/* Parse `onload_stackdump --nolock lots` output (any number of stacks). */
int flow_onload_parse_lots(const char *text, size_t len, struct flow_onload_dump *d,
			   char *err, size_t errlen);

/* The stack with this id, or NULL; one of its counters by name (the
 * ci_netif_stats field name, or "pkt_bufs_free", "nonb_pool", ...): 1 with
 * *value, 0 when the stack has no such counter. */
const struct flow_onload_stack *flow_onload_stack(const struct flow_onload_dump *d, int id);
int flow_onload_counter(const struct flow_onload_stack *s, const char *name, uint64_t *value);

/* The options the lots parser keeps from a stack's "config opts" section
 * (netif_debug.c ci_netif_config_opts_dump(), "%30s: %u" or "%30s: %u
 * (default: %u)"): EF_SPIN_USEC, EF_BUZZ_USEC and a few more. Onload 9
 * prints the stack's netif options only: EF_POLL_USEC is a per-process
 * option (opts_citp_def.h) whose effect shows in EF_SPIN_USEC and
 * EF_BUZZ_USEC, and is read only where a version prints it. One of them:
 * 1 with *value, 0 when the dump did not print it (absent, not 0). */
extern const char *const flow_onload_opt_names[FLOW_ONLOAD_MAX_OPTS];
int flow_onload_opt(const struct flow_onload_stack *s, const char *name, uint64_t *value);

/* Evidence: a copy of one stack's lots text cut where the "process env"
 * section begins (or a "cmdline: " / "env: " line), everything after it
 * dropped: Onload prints the section last and its values raw, so nothing
 * a value cannot forge ends it (environments never enter a bundle); the
 * bytes kept outside printable ASCII, tab and newline become '?'.
 * malloc'd, NUL-terminated; NULL on ENOMEM. */
char *flow_onload_scrub(const char *text, size_t len, size_t *outlen);

struct flow_onload_track {
	struct flow_live_track live;
	uint64_t tx_acc, rx_acc, una_acc, del_acc;
	uint32_t nxt_raw, rcv_raw, una_raw, del_raw;
};

/* One socket as a flow observation (src FLOW_SRC_ONLOAD): key from the
 * addresses, inflight = snd_nxt - snd_una (sent, unacknowledged), unread =
 * rcv_added - rcv_delivered (arrived, not consumed: held by the engine),
 * unsent = send-queue bytes (lots) or, from JSON, the send-queue packet
 * count as a lower bound of its bytes, tx/rx bytes = bytes sent/received
 * since first sight (32-bit sequence space unwrapped), retrans, state =
 * Linux TCP state number, pid, engine "onload:<stack name>"; with the
 * stack's clock and the RTO timer (orm_json stack), a TCP socket with data
 * unacknowledged gets retry_due_ns (when the timer fires: its
 * retransmission) and rto_ns.
 * Verdict (TCP): FAILED when so_error is set on an unsynchronised or
 * closed socket; HELD when unread bytes stay and rcv_delivered did not
 * move, or the send queue holds data and snd_nxt did not move; WAITING
 * when snd_nxt is past snd_una and snd_una did not move, or the byte
 * balance sent - received stopped above its low mark; PROGRESS when
 * anything moved; IDLE otherwise. UDP: HELD when datagrams wait in
 * recv_q and none was delivered since; else PROGRESS/IDLE.
 * stack may be NULL. t zeroed before a socket's first call. */
enum flow_live flow_onload_obs(const struct flow_onload_sock *s,
			       const struct flow_onload_stack *stack,
			       struct flow_onload_track *t, uint64_t now_ns, struct flow_obs *o);

#endif
