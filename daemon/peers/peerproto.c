/* peerproto: peer datagrams, HMAC-SHA256, replay window, token bucket. */
#include "daemon/peers/peerproto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "lib/util.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

int peer_nonce(uint8_t nonce[PEER_NONCE_LEN])
{
	size_t got = 0;

	while (got < PEER_NONCE_LEN) {
		ssize_t n = getrandom(nonce + got, PEER_NONCE_LEN - got, GRND_NONBLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int mac(const struct peer_key *k, const uint8_t *buf, size_t len, uint8_t out[PEER_MAC_LEN])
{
	unsigned int olen = 0;

	if (!HMAC(EVP_sha256(), k->k, (int)k->len, buf, len, out, &olen) || olen != PEER_MAC_LEN)
		return -1;
	return 0;
}

ssize_t peer_encode(const struct peer_key *k, enum peer_type type, const char *to,
		    uint64_t ts_real_ns, const uint8_t nonce[PEER_NONCE_LEN], const char *payload,
		    size_t plen, uint8_t *buf, size_t max)
{
	size_t total = PEER_HDR_LEN + plen + PEER_MAC_LEN;

	if (max > PEER_MAX_DGRAM)
		max = PEER_MAX_DGRAM;
	if (plen > PEER_MAX_DGRAM || total > max || !to || !util_valid_name(to, PEER_TO_LEN - 1))
		return -1;
	memcpy(buf, PEER_MAGIC, 4);
	buf[4] = PEER_VERSION;
	buf[5] = (uint8_t)type;
	buf[6] = buf[7] = 0;
	put32(buf + 8, k->id);
	put32(buf + 12, (uint32_t)plen);
	put64(buf + 16, ts_real_ns);
	memcpy(buf + 24, nonce, PEER_NONCE_LEN);
	memset(buf + PEER_TO_OFF, 0, PEER_TO_LEN);
	memcpy(buf + PEER_TO_OFF, to, strlen(to));
	memcpy(buf + PEER_HDR_LEN, payload, plen);
	if (mac(k, buf, PEER_HDR_LEN + plen, buf + PEER_HDR_LEN + plen) < 0)
		return -1;
	return (ssize_t)total;
}

int peer_decode_hdr(const uint8_t *buf, size_t len, struct peer_hdr *h, const char **why)
{
	static char msg[200];
	size_t tl;

	if (len >= 5 && !memcmp(buf, PEER_MAGIC, 4) && buf[4] != PEER_VERSION) {
		/* checked before the size: a version 1 header is shorter */
		h->version = buf[4];
		snprintf(msg, sizeof(msg), "protocol version %u (this daemon speaks %u only%s)",
			 h->version, PEER_VERSION, h->version == 1 ?
			 ": the peer runs an older nicstalld, whose notices name no recipient; "
			 "upgrade it" : "");
		*why = msg;
		/* a version this project released, or bytes that merely begin
		 * with the magic */
		return h->version == 1 ? PEER_HDR_VERSION : PEER_HDR_BAD;
	}
	if (len < PEER_HDR_LEN + PEER_MAC_LEN) {
		*why = "too short to be a nicstalld datagram";
		return -1;
	}
	if (memcmp(buf, PEER_MAGIC, 4)) {
		*why = "not a nicstalld datagram (bad magic)";
		return -1;
	}
	h->version = buf[4];
	h->type = buf[5];
	if (h->type != PEER_NOTICE && h->type != PEER_SUMMARY) {
		snprintf(msg, sizeof(msg), "unknown message type %u", h->type);
		*why = msg;
		return -1;
	}
	if (buf[6] || buf[7]) {
		*why = "flags set that this version does not know";
		return -1;
	}
	h->key_id = get32(buf + 8);
	h->len = get32(buf + 12);
	if ((uint64_t)h->len + PEER_HDR_LEN + PEER_MAC_LEN != len) {
		snprintf(msg, sizeof(msg), "length field %u does not match the datagram's %zu bytes",
			 h->len, len);
		*why = msg;
		return -1;
	}
	h->ts_real_ns = get64(buf + 16);
	memcpy(h->nonce, buf + 24, PEER_NONCE_LEN);
	tl = strnlen((const char *)buf + PEER_TO_OFF, PEER_TO_LEN);
	memcpy(h->to, buf + PEER_TO_OFF, tl < PEER_TO_LEN ? tl : PEER_TO_LEN - 1);
	h->to[tl < PEER_TO_LEN ? tl : PEER_TO_LEN - 1] = 0;
	for (size_t i = tl; i < PEER_TO_LEN; i++)
		if (buf[PEER_TO_OFF + i])
			tl = PEER_TO_LEN;       /* bytes after the NUL: not padding */
	if (tl >= PEER_TO_LEN || !util_valid_name(h->to, PEER_TO_LEN - 1)) {
		*why = "the recipient field is not a NUL-padded host name";
		return -1;
	}
	return 0;
}

int peer_verify(const struct peer_key *k, const uint8_t *buf, size_t len)
{
	uint8_t want[PEER_MAC_LEN];
	int ok;

	if (len < PEER_HDR_LEN + PEER_MAC_LEN || !k->len)
		return 0;
	if (mac(k, buf, len - PEER_MAC_LEN, want) < 0)
		return 0;
	ok = CRYPTO_memcmp(want, buf + len - PEER_MAC_LEN, PEER_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

void peer_nonce_hex(const uint8_t nonce[PEER_NONCE_LEN], char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < PEER_NONCE_LEN && o + 3 <= len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", nonce[i]);
	if (len)
		buf[o < len ? o : len - 1] = 0;
}

int peer_replay_fresh(const struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
		      uint64_t ts, const uint8_t nonce[PEER_NONCE_LEN], const char **why)
{
	static char msg[128];

	if (ts + window_ns < now_real_ns) {
		snprintf(msg, sizeof(msg), "stale: sent %.1f s ago, the window is %.1f s",
			 (double)(now_real_ns - ts) / 1e9, (double)window_ns / 1e9);
		*why = msg;
		return -1;
	}
	if (ts > now_real_ns + window_ns) {
		snprintf(msg, sizeof(msg), "from the future: %.1f s ahead of this clock, the "
			 "window is %.1f s", (double)(ts - now_real_ns) / 1e9, (double)window_ns / 1e9);
		*why = msg;
		return -1;
	}
	if (ts <= r->floor_ns) {
		*why = "older than the nonces this daemon had to forget (replay defence)";
		return -1;
	}
	for (unsigned i = 0; i < r->n; i++)
		if (!memcmp(r->seen[i].nonce, nonce, PEER_NONCE_LEN)) {
			*why = "replayed: this nonce was seen before";
			return -1;
		}
	return 0;
}

void peer_replay_remember(struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
			  uint64_t ts, const uint8_t nonce[PEER_NONCE_LEN])
{
	unsigned slot;

	/* forget what has left the window first */
	if (r->n == PEER_NONCES) {
		slot = r->next;
		if (r->seen[slot].ts + window_ns >= now_real_ns && r->seen[slot].ts > r->floor_ns)
			r->floor_ns = r->seen[slot].ts;
		r->next = (r->next + 1) % PEER_NONCES;
	} else {
		slot = r->n++;
	}
	r->seen[slot].ts = ts;
	memcpy(r->seen[slot].nonce, nonce, PEER_NONCE_LEN);
}

int peer_replay_check(struct peer_replay *r, uint64_t now_real_ns, uint64_t window_ns,
		      uint64_t ts, const uint8_t nonce[PEER_NONCE_LEN], const char **why)
{
	if (peer_replay_fresh(r, now_real_ns, window_ns, ts, nonce, why) < 0)
		return -1;
	peer_replay_remember(r, now_real_ns, window_ns, ts, nonce);
	return 0;
}

int peer_bucket_take(struct peer_bucket *b, uint64_t now_ns, double burst, uint64_t every_ns)
{
	if (!b->init) {
		b->tokens = burst;
		b->last_ns = now_ns;
		b->init = 1;
	}
	if (now_ns > b->last_ns && every_ns) {
		b->tokens += (double)(now_ns - b->last_ns) / (double)every_ns;
		if (b->tokens > burst)
			b->tokens = burst;
	}
	b->last_ns = now_ns;
	if (b->tokens < 1.0)
		return 0;
	b->tokens -= 1.0;
	return 1;
}

unsigned peer_hourly_count(const struct peer_hourly *h, uint64_t now_ns)
{
	const uint64_t hour = 3600ull * 1000000000ull;
	unsigned n = 0;

	/* newest first, until one is an hour old */
	for (unsigned i = 0; i < h->n; i++) {
		uint64_t t = h->t[(h->next + PEER_HOURLY_MAX - 1 - i) % PEER_HOURLY_MAX];

		if (now_ns >= t && now_ns - t >= hour)
			break;
		n++;
	}
	return n;
}

int peer_hourly_admit(struct peer_hourly *h, uint64_t now_ns, unsigned limit, unsigned *in_hour)
{
	unsigned n = peer_hourly_count(h, now_ns);

	if (limit > PEER_HOURLY_MAX)
		limit = PEER_HOURLY_MAX;
	*in_hour = n;
	if (n >= limit)
		return 0;
	h->t[h->next] = now_ns;
	h->next = (h->next + 1) % PEER_HOURLY_MAX;
	if (h->n < PEER_HOURLY_MAX)
		h->n++;
	*in_hour = n + 1;
	return 1;
}

int peer_lograte_due(struct peer_lograte *l, uint64_t now_ns, uint64_t interval_ns,
		     uint64_t *held_back)
{
	if (l->logged && now_ns - l->last_ns < interval_ns) {
		l->held++;
		return 0;
	}
	*held_back = l->held;
	l->held = 0;
	l->last_ns = now_ns;
	l->logged = 1;
	return 1;
}
