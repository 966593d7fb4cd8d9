/* peers_int: what the parts of the peer protocol share (peers.c: addresses,
 * logging, sending notices, set-up and status; peers_rx.c: answering
 * notices and receiving datagrams). Private to those two files. */
#ifndef NICSTALL_PEERS_INT_H
#define NICSTALL_PEERS_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "daemon/peerproto.h"
#include "daemon/peers.h"

#define OUTSTANDING 16          /* incidents whose notices may still be answered */
#define RECENT 8                /* incidents a receiver remembers per peer */
#define RETRY_MS_1 150
#define RETRY_MS_2 450
#define ATTEMPTS 3
#define RX_PER_WAKE 64          /* datagrams read per wake-up: the loop stays fair */
#define REPEAT_EVERY_NS 100000000ull

enum lr { LR_GARBAGE, LR_OVERSIZE, LR_KEYID, LR_BADSIG, LR_REPLAY, LR_PAYLOAD, LR_LIMIT,
	  LR_SEND, LR_NOANSWER, LR_STRAY, LR_N };

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
	struct peer_lograte lr[LR_N];
	uint64_t refused[LR_N];
	uint64_t rx_notices, rx_summaries, tx_notices, tx_summaries;
	uint64_t last_rx_mono, last_rx_real, last_good_mono, last_badsig_mono;
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
	struct peer_lograte lr_unknown, lr_recv;
	peers_notice_fn on_notice;
	peers_summary_fn on_summary;
	void *arg;
	uint8_t buf[PEER_MAX_DGRAM + 1];
};


/* peers.c */
__attribute__((format(printf, 4, 5)))
void peers_refuse(struct peers *ps, struct peer *p, enum lr kind, const char *fmt, ...);
const char *peers_addr_text(const struct sockaddr_storage *a, char *buf, size_t len);
int peers_send_dgram(struct peers *ps, struct peer *p, enum peer_type type, const char *payload,
		     uint8_t nonce[PEER_NONCE_LEN]);
struct peer *peers_peer_by_addr(struct peers *ps, const struct sockaddr_storage *sa);
void peers_recent_clear(struct recent *r);

/* peers_rx.c */
void peers_on_readable(int fd, uint32_t events, void *arg);

#endif
