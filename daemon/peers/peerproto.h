/* peerproto: the datagrams peer daemons exchange (nicstalld(8) "PEERS"),
 * their signature, replay protection and rate limits. Pure functions over
 * buffers and small state, so each defence is unit-tested alone.
 *
 * A datagram is a fixed header, a JSON payload and an HMAC-SHA256 (libcrypto)
 * over both, keyed with the pair's symmetric key (peerconf.h):
 *
 *   0  magic "NSPN"        4  version (2)      5  type (1 notice, 2 summary)
 *   6  flags (0, 2 bytes)  8  key id (u32)     12 payload length (u32)
 *   16 sender's UTC time, ns (u64)             24 nonce (16 random bytes)
 *   40 recipient: the host name the datagram is for (its host_name), NUL-padded
 *      to 64 bytes
 *   104 payload (JSON text)                    104+len  HMAC-SHA256 (32 bytes)
 *
 * integers in network byte order. Version 2 added the recipient (a
 * version 1 datagram named none, so a captured notice could be reflected
 * back at its sender): a version 1 datagram is refused, its reason naming
 * the version. A receiver checks, in this order, with nothing but
 * counters changed by a refusal: the size, the header (magic, version,
 * type, flags, length, recipient), the key id, the recipient (its own
 * host name, compared case-insensitively: DNS names), the replay defences
 * (the time within the allowed skew of its own clock, the nonce never
 * seen before within that window: looked up only, so a replay costs no
 * HMAC), its budget of signature checks for the sender's address (a
 * token bucket: source addresses can be forged, so the budget is wide
 * enough for a flood that a peer's genuine datagrams survive, and bounds
 * the HMACs a flood costs), the HMAC (constant time), and only then
 * remembers the nonce and reads the payload's JSON, so nothing an
 * unauthenticated sender writes reaches any state but a counter. */
#ifndef NICSTALL_PEERPROTO_H
#define NICSTALL_PEERPROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/peers/peerconf.h"

#define PEER_MAGIC "NSPN"
#define PEER_VERSION 2
#define PEER_TO_OFF 40
#define PEER_TO_LEN 64           /* the recipient field: a host name, NUL-padded */
#define PEER_HDR_LEN 104
#define PEER_MAC_LEN 32
#define PEER_NONCE_LEN 16
#define PEER_MAX_NOTICE 4096     /* a notice datagram */
#define PEER_MAX_DGRAM 16384     /* any datagram (a summary) */
#define PEER_NONCES 256          /* nonces remembered per peer */

enum peer_type { PEER_NOTICE = 1, PEER_SUMMARY = 2 };

struct peer_hdr {
	uint8_t version, type;
	uint32_t key_id;
	uint32_t len;                /* payload bytes */
	uint64_t ts_real_ns;
	uint8_t nonce[PEER_NONCE_LEN];
	char to[PEER_TO_LEN];        /* the recipient's host name */
};

/* Fill nonce with random bytes (getrandom). 0 or -1. */
int peer_nonce(uint8_t nonce[PEER_NONCE_LEN]);
/* Header + payload + HMAC into buf, for the host named to (1-63 bytes of
 * a host name). Returns the datagram's length, or -1 when it does not fit
 * in max (or max > PEER_MAX_DGRAM) or to is no host name. */
ssize_t peer_encode(const struct peer_key *k, enum peer_type type, const char *to,
		    uint64_t ts_real_ns, const uint8_t nonce[PEER_NONCE_LEN], const char *payload,
		    size_t plen, uint8_t *buf, size_t max);
/* The header of buf[0..len): 0; PEER_HDR_BAD with why ("too short", "not a
 * nicstalld datagram", "length mismatch", "the recipient field is not a
 * host name", "protocol version 9 ..."); PEER_HDR_VERSION with why when
 * it is a datagram of nicstalld's earlier protocol version 1 ("protocol
 * version 1 ...: the peer runs an older nicstalld ...").
 * Says nothing about authenticity. */
#define PEER_HDR_BAD (-1)
#define PEER_HDR_VERSION (-2)
int peer_decode_hdr(const uint8_t *buf, size_t len, struct peer_hdr *h, const char **why);
/* Is the HMAC of buf[0..len) (a datagram whose header decoded) right for k?
 * Constant time. 1 yes, 0 no. */
int peer_verify(const struct peer_key *k, const uint8_t *buf, size_t len);
/* 8 hex digits of a nonce, for logs; 32 for the payload's "nonce". */
void peer_nonce_hex(const uint8_t nonce[PEER_NONCE_LEN], char *buf, size_t len);

/* Replay defence per peer: every nonce of an accepted datagram is kept
 * while its time is inside the window; once the ring is full the oldest is
 * dropped and the floor rises to its time, so a datagram older than what
 * was forgotten is refused too (a replay can never slip through an
 * overflowing cache). */
struct peer_replay {
	uint64_t floor_ns;
	struct { uint64_t ts; uint8_t nonce[PEER_NONCE_LEN]; } seen[PEER_NONCES];
	unsigned n, next;
};
/* 0: fresh, now remembered. -1 with why: "replayed", "stale (6.2 s old,
 * window 5 s)", "from the future (...)", "older than the nonces it has
 * forgotten". why points into a static buffer. */
int peer_replay_check(struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
		      uint64_t ts_real_ns, const uint8_t nonce[PEER_NONCE_LEN], const char **why);
/* The two halves of peer_replay_check, for a receiver that checks
 * freshness before the signature (so a replay costs no HMAC) and may
 * remember a nonce only once the signature proved it the peer's (a
 * forgery must not fill the cache, nor raise the floor):
 * peer_replay_fresh changes nothing; peer_replay_remember keeps a nonce
 * that peer_replay_fresh accepted, with the same clock reading. */
int peer_replay_fresh(const struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
		      uint64_t ts_real_ns, const uint8_t nonce[PEER_NONCE_LEN], const char **why);
void peer_replay_remember(struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
			  uint64_t ts_real_ns, const uint8_t nonce[PEER_NONCE_LEN]);

/* A token bucket: at most burst at once, one more every every_ns. */
struct peer_bucket {
	double tokens;
	uint64_t last_ns;
	int init;
};
/* 1: taken, 0: over the limit. */
int peer_bucket_take(struct peer_bucket *b, uint64_t now_ns, double burst, uint64_t every_ns);

/* A budget per hour: at most limit events in any hour (a sliding window,
 * not a bucket that refills: the cap holds for every hour). The ring
 * remembers the times of the last PEER_HOURLY_MAX admitted events, so
 * limit may be anything up to that. */
#define PEER_HOURLY_MAX 3600
struct peer_hourly {
	uint64_t t[PEER_HOURLY_MAX];
	unsigned n, next;
};
/* 1: admitted and remembered; 0: limit events were admitted within the
 * hour before now_ns (*in_hour says how many, either way). */
int peer_hourly_admit(struct peer_hourly *h, uint64_t now_ns, unsigned limit, unsigned *in_hour);
/* Events admitted within the hour before now_ns. */
unsigned peer_hourly_count(const struct peer_hourly *h, uint64_t now_ns);

/* "Once per interval" logging: peer_lograte_due says whether a message of
 * this kind may be logged now (the first one at once, then at most one per
 * interval) and how many were held back since the last one. */
struct peer_lograte {
	uint64_t last_ns;
	uint64_t held;
	int logged;
};
int peer_lograte_due(struct peer_lograte *l, uint64_t now_ns, uint64_t interval_ns,
		     uint64_t *held_back);

#endif
