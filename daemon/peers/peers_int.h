/* peers_int: what the parts of the peer protocol share (peers.c: our
 * notices, set-up and status; peers_rx.c: answering notices and receiving
 * datagrams; peers_base.c: addresses, refusals logged once per interval,
 * sending, which both use). Private to those three files. */
#ifndef NICSTALL_PEERS_INT_H
#define NICSTALL_PEERS_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "daemon/peers/peerproto.h"
#include "daemon/peers/peers.h"

#define OUTSTANDING 16          /* incidents whose notices may still be answered */
#define RECENT 8                /* incidents a receiver remembers per peer */
#define RETRY_MS_1 150
#define RETRY_MS_2 450
#define ATTEMPTS 3
#define RX_PER_WAKE 64          /* datagrams read per wake-up: the loop stays fair */
#define REPEAT_EVERY_NS 100000000ull

/* Refusals of what a peer authentically sent, and local failures: these
 * are the peer's state in nicstallctl peers (counted, last_error). */
enum lr { LR_PAYLOAD, LR_LIMIT, LR_BUDGET, LR_SELF, LR_SEND, LR_NOANSWER, LR_STRAY, LR_N };
/* Refusals of datagrams from a peer's address that did not prove to be
 * the peer's (anyone can send them, or replay a captured one): counted per
 * source address, never the peer's state. */
enum ur { UR_GARBAGE, UR_OVERSIZE, UR_VERSION, UR_KEYID, UR_RECIPIENT, UR_THROTTLED,
	  UR_BADSIG, UR_REPLAY, UR_N };
#define UNKNOWN_SOURCES 32      /* addresses that are no peer's, remembered */
/* Signature checks per source address: VERIFY_BURST at once, then one per
 * VERIFY_EVERY_NS (1000 a second). A source address can be forged, so a
 * flood in the peer's name spends the peer's budget: it must be wide
 * enough that a flood of that rate is hard to send (16 MB/s of maximal
 * datagrams) while its cost stays bounded (an HMAC-SHA256 over 16 KiB
 * takes about 16 us: 1.6% of a core at the cap). Replays and stale
 * datagrams are refused before the budget, at no cost. */
#define VERIFY_BURST 100
#define VERIFY_EVERY_NS 1000000ull

/* What arrived from one source address before it was authenticated. */
struct src_stat {
	uint64_t refused[UR_N];
	uint64_t verified;              /* HMACs computed (the work they cost) */
	uint64_t last_mono;
	struct peer_bucket verify;      /* the budget of signature checks */
	struct peer_lograte lr[UR_N];
	char last_refusal[200];
};

struct unknown_src {            /* an address that is no peer's */
	struct sockaddr_storage sa;
	uint64_t datagrams, last_mono;
};

struct recent {                 /* a notice this daemon answers (receiver) */
	char origin[64];
	uint64_t incident, token;
	uint8_t nonce[PEER_NONCE_LEN];  /* of the latest notice: the answer is bound to it */
	struct json_object *sum;        /* the answer, NULL while it is being made */
	uint64_t answered_mono;
	int used;
};

struct peer {
	char name[32];
	struct peer_conf pc;            /* a copy: the key stays ours */
	struct sockaddr_storage sa;
	socklen_t salen;
	struct peer_replay replay;
	struct peer_bucket notices;
	struct peer_hourly snapshots;   /* its notices acted on in the last hour */
	int unanswered_hint;            /* "set host =" said once for it */
	struct peer_lograte lr[LR_N];
	uint64_t refused[LR_N];
	struct src_stat from;           /* its address, unauthenticated */
	uint64_t rx_notices, rx_summaries, tx_notices, tx_summaries;
	uint64_t last_rx_mono, last_rx_real; /* its last authentic, fresh datagram */
	double last_rtt_ms;
	int have_rtt;
	char host[64];                  /* what it calls itself */
	char last_error[200];
	struct recent recent[RECENT];
	unsigned recent_next;
};

struct outstanding {            /* the notices of one of our incidents (originator) */
	uint64_t incident;
	uint64_t first_mono, deadline_mono;
	char *payload;
	struct {
		char name[32];
		uint8_t nonce[ATTEMPTS][PEER_NONCE_LEN];
		uint64_t sent_mono[ATTEMPTS];
		unsigned n;
		int answered;
	} per[PEER_MAX];
	unsigned nper;
	int used;
};

struct peers {
	struct loop *loop;
	const struct conf *c;
	struct peer *p;
	unsigned n;
	int fd, family;
	char listen[80], netns[PATH_MAX];
	char host[64];
	struct outstanding out[OUTSTANDING];
	unsigned out_next;
	struct loop_timer *timer;
	uint64_t next_token;
	uint64_t unknown_senders;
	struct unknown_src unknown[UNKNOWN_SOURCES];
	uint64_t snapshots_refused;     /* over peer_snapshots_per_hour, all peers */
	struct peer_hourly snapshots;   /* notices acted on in the last hour, all peers */
	struct peer_lograte lr_unknown, lr_recv;
	peers_notice_fn on_notice;
	peers_summary_fn on_summary;
	void *arg;
	uint8_t buf[PEER_MAX_DGRAM + 1];
};

/* peers_base.c */
__attribute__((format(printf, 4, 5)))
void peers_refuse(struct peers *ps, struct peer *p, enum lr kind, const char *fmt, ...);
/* A datagram from p's address (or, p NULL, from no peer's: at) refused
 * before it was authenticated: counted by source, logged once per
 * interval; the peer's state (last contact, key state, last error) is not
 * touched. */
__attribute__((format(printf, 5, 6)))
void peers_refuse_unauth(struct peers *ps, struct peer *p, const struct sockaddr_storage *at,
			 enum ur kind, const char *fmt, ...);
const char *peers_addr_text(const struct sockaddr_storage *a, char *buf, size_t len);
/* Sign and send payload to p, for the host named to. */
int peers_send_dgram(struct peers *ps, struct peer *p, enum peer_type type, const char *to,
		     const char *payload, uint8_t nonce[PEER_NONCE_LEN]);
/* The host name p's daemon answers to: its [peer] host, else its name. */
const char *peers_peer_host(const struct peer *p);
/* Do two host names name the same host? DNS names: case-insensitive. */
int peers_same_host_name(const char *a, const char *b);
struct peer *peers_peer_by_addr(struct peers *ps, const struct sockaddr_storage *sa);
void peers_recent_clear(struct recent *r);
/* Snapshots one peer may cause per hour: its fair share of
 * peer_snapshots_per_hour, max(1, budget / number of peers). */
unsigned peers_snapshot_share(const struct peers *ps);

/* the names of the refusal kinds (status, metrics) */
extern const char *const peers_lr_name[LR_N];
extern const char *const peers_ur_name[UR_N];

/* peers_rx.c */
void peers_on_readable(int fd, uint32_t events, void *arg);

#endif
