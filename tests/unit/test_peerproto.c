/* Unit tests: the peer datagrams (daemon/peers/peerproto.c) and their payloads
 * (daemon/peers/peermsg.c): signature, replay window, nonce cache, rate limits,
 * hostile payloads, summaries that fit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "daemon/peers/peerconf.h"
#include "daemon/peers/peermsg.h"
#include "daemon/peers/peerproto.h"
#include "lib/json.h"

#define S 1000000000ull

static struct peer_key key(uint32_t id, char fill)
{
	struct peer_key k = { .id = id, .len = 32 };

	memset(k.k, fill, k.len);
	return k;
}

static ssize_t make(const struct peer_key *k, const char *payload, uint8_t *buf, uint64_t ts)
{
	uint8_t nonce[PEER_NONCE_LEN];

	assert_int_equal(peer_nonce(nonce), 0);
	return peer_encode(k, PEER_NOTICE, "rank0", ts, nonce, payload, strlen(payload), buf, PEER_MAX_DGRAM);
}

static void encode__roundtrip__header_and_signature_verify(void **state)
{
	struct peer_key k = key(7, 'a');
	uint8_t buf[PEER_MAX_DGRAM];
	struct peer_hdr h;
	const char *why;
	ssize_t n = make(&k, "{\"x\":1}", buf, 42 * S);

	(void)state;
	assert_int_equal(n, PEER_HDR_LEN + 7 + PEER_MAC_LEN);
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), 0);
	assert_int_equal(h.key_id, 7);
	assert_int_equal(h.type, PEER_NOTICE);
	assert_int_equal(h.len, 7);
	assert_true(h.ts_real_ns == 42 * S);
	assert_string_equal(h.to, "rank0");
	assert_true(peer_verify(&k, buf, (size_t)n));
}

/* The recipient is in the signed header: a notice for rank0 cannot be
 * re-addressed to rank1 (the HMAC covers it), a field that is not a
 * NUL-padded host name is refused, and no recipient cannot be encoded. */
static void recipient__signed_checked_required(void **state)
{
	struct peer_key k = key(7, 'a');
	uint8_t buf[PEER_MAX_DGRAM], nonce[PEER_NONCE_LEN] = { 0 };
	struct peer_hdr h;
	const char *why = NULL;
	ssize_t n = make(&k, "{}", buf, S);

	(void)state;
	memcpy(buf + PEER_TO_OFF, "rank1", 5);
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), 0);
	assert_string_equal(h.to, "rank1");
	assert_false(peer_verify(&k, buf, (size_t)n));
	buf[PEER_TO_OFF + 10] = 'x';            /* after the NUL: not padding */
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), PEER_HDR_BAD);
	assert_non_null(strstr(why, "recipient"));
	memset(buf + PEER_TO_OFF, 'a', PEER_TO_LEN);    /* no NUL at all */
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), PEER_HDR_BAD);
	memset(buf + PEER_TO_OFF, 0, PEER_TO_LEN);      /* empty */
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), PEER_HDR_BAD);
	assert_int_equal(peer_encode(&k, PEER_NOTICE, "", 1, nonce, "{}", 2, buf, sizeof(buf)), -1);
	assert_int_equal(peer_encode(&k, PEER_NOTICE, "a b", 1, nonce, "{}", 2, buf, sizeof(buf)), -1);
}

/* A version 1 datagram (40-byte header, no recipient) from an older
 * daemon: refused as such, its reason naming the version. */
static void decode__version_1__refused_as_old_version(void **state)
{
	uint8_t v1[40 + 2 + 32] = "NSPN\x01\x01";
	struct peer_hdr h;
	const char *why = NULL;

	(void)state;
	assert_int_equal(peer_decode_hdr(v1, sizeof(v1), &h, &why), PEER_HDR_VERSION);
	assert_non_null(strstr(why, "protocol version 1"));
	assert_non_null(strstr(why, "older nicstalld"));
	assert_non_null(strstr(why, "recipient"));
}

/* At most limit events in any hour: a sliding window, not a refill. */
static void hourly__limit_per_sliding_hour(void **state)
{
	struct peer_hourly *h = calloc(1, sizeof(*h));
	const uint64_t hour = 3600 * S;
	unsigned in = 0, ok = 0;

	(void)state;
	for (int i = 0; i < 10; i++)
		ok += (unsigned)peer_hourly_admit(h, 100 * S + (uint64_t)i * S, 3, &in);
	assert_int_equal(ok, 3);
	assert_int_equal(in, 3);
	/* half an hour on: still the same three in the hour */
	assert_false(peer_hourly_admit(h, 100 * S + hour / 2, 3, &in));
	/* the first left the window: one more, not three (no refill) */
	assert_true(peer_hourly_admit(h, 100 * S + hour, 3, &in));
	assert_false(peer_hourly_admit(h, 100 * S + hour + S / 2, 3, &in));
	assert_int_equal(peer_hourly_count(h, 100 * S + hour + S / 2), 3);
	assert_int_equal(peer_hourly_count(h, 200 * S + 2 * hour), 0);
	free(h);
}

static void verify__other_key_or_one_flipped_bit__refused(void **state)
{
	struct peer_key k = key(7, 'a'), other = key(7, 'b');
	uint8_t buf[PEER_MAX_DGRAM];
	ssize_t n = make(&k, "{\"incident\":3}", buf, 42 * S);

	(void)state;
	assert_false(peer_verify(&other, buf, (size_t)n));
	for (ssize_t i = 0; i < n; i += 5) {
		buf[i] ^= 0x10;
		assert_false(peer_verify(&k, buf, (size_t)n));
		buf[i] ^= 0x10;
	}
	assert_true(peer_verify(&k, buf, (size_t)n));
}

static void decode__garbage_short_or_lying__refused_with_why(void **state)
{
	struct peer_key k = key(1, 'z');
	uint8_t buf[PEER_MAX_DGRAM];
	ssize_t n = make(&k, "{}", buf, S);
	struct peer_hdr h;
	const char *why = NULL;

	(void)state;
	assert_int_equal(peer_decode_hdr(buf, 10, &h, &why), -1);
	assert_non_null(strstr(why, "too short"));
	assert_int_equal(peer_decode_hdr(buf, (size_t)n - 1, &h, &why), -1);
	assert_non_null(strstr(why, "length field"));
	buf[4] = 9;
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), PEER_HDR_BAD);
	assert_non_null(strstr(why, "version 9"));
	buf[4] = PEER_VERSION;
	buf[5] = 77;
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), -1);
	assert_non_null(strstr(why, "type 77"));
	memcpy(buf, "GET ", 4);
	assert_int_equal(peer_decode_hdr(buf, (size_t)n, &h, &why), -1);
	assert_non_null(strstr(why, "bad magic"));
}

static void encode__too_large__refused(void **state)
{
	struct peer_key k = key(1, 'z');
	static uint8_t buf[PEER_MAX_DGRAM];
	static char big[PEER_MAX_DGRAM];
	uint8_t nonce[PEER_NONCE_LEN] = { 0 };

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	assert_int_equal(peer_encode(&k, PEER_SUMMARY, "rank0", 1, nonce, big, strlen(big), buf, sizeof(buf)), -1);
	assert_int_equal(peer_encode(&k, PEER_NOTICE, "rank0", 1, nonce, big, 5000, buf, PEER_MAX_NOTICE), -1);
}

static void replay__same_nonce_twice__second_refused(void **state)
{
	struct peer_replay *r = calloc(1, sizeof(*r));
	uint8_t n1[PEER_NONCE_LEN] = { 1 }, n2[PEER_NONCE_LEN] = { 2 };
	const char *why;

	(void)state;
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 100 * S, n1, &why), 0);
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 100 * S, n1, &why), -1);
	assert_non_null(strstr(why, "replayed"));
	assert_int_equal(peer_replay_check(r, 101 * S, 5 * S, 100 * S, n2, &why), 0);
	free(r);
}

/* The receiver looks the nonce up before the signature (a replay costs no
 * HMAC) and remembers it only after: a lookup changes nothing, so a
 * forged datagram cannot fill the cache or raise its floor. */
static void replay__lookup_then_remember__lookup_changes_nothing(void **state)
{
	struct peer_replay *r = calloc(1, sizeof(*r));
	uint8_t n[PEER_NONCE_LEN] = { 3 };
	const char *why;

	(void)state;
	for (unsigned i = 0; i < PEER_NONCES + 5; i++) {
		n[1] = (uint8_t)i;
		n[2] = (uint8_t)(i >> 8);
		assert_int_equal(peer_replay_fresh(r, 100 * S, 5 * S, 99 * S, n, &why), 0);
	}
	assert_int_equal(r->n, 0);
	assert_true(r->floor_ns == 0);
	n[1] = n[2] = 0;
	assert_int_equal(peer_replay_fresh(r, 100 * S, 5 * S, 99 * S, n, &why), 0);
	peer_replay_remember(r, 100 * S, 5 * S, 99 * S, n);
	assert_int_equal(peer_replay_fresh(r, 100 * S, 5 * S, 99 * S, n, &why), -1);
	assert_non_null(strstr(why, "replayed"));
	assert_int_equal(peer_replay_fresh(r, 100 * S, 5 * S, 90 * S, n, &why), -1);
	assert_non_null(strstr(why, "stale"));
	free(r);
}

static void replay__outside_window__stale_and_future_refused(void **state)
{
	struct peer_replay *r = calloc(1, sizeof(*r));
	uint8_t n1[PEER_NONCE_LEN] = { 1 }, n2[PEER_NONCE_LEN] = { 2 };
	const char *why;

	(void)state;
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 94 * S, n1, &why), -1);
	assert_non_null(strstr(why, "stale: sent 6.0 s ago"));
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 106 * S, n2, &why), -1);
	assert_non_null(strstr(why, "from the future"));
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 96 * S, n2, &why), 0);
	free(r);
}

static void replay__cache_overflows__forgotten_nonce_still_refused(void **state)
{
	struct peer_replay *r = calloc(1, sizeof(*r));
	uint8_t n[PEER_NONCE_LEN] = { 0 }, first[PEER_NONCE_LEN] = { 0xee };
	const char *why;

	(void)state;
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 99 * S, first, &why), 0);
	/* a flood of fresh ones pushes the first out of the cache */
	for (unsigned i = 0; i < PEER_NONCES + 10; i++) {
		memcpy(n, &i, sizeof(i));
		n[15] = 1;
		assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 99 * S + i + 1, n, &why), 0);
	}
	/* ... and its replay is still refused: the floor rose past it */
	assert_int_equal(peer_replay_check(r, 100 * S, 5 * S, 99 * S, first, &why), -1);
	free(r);
}

static void bucket__burst_then_one_per_interval(void **state)
{
	struct peer_bucket b = { 0 };
	unsigned ok = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		ok += (unsigned)peer_bucket_take(&b, 10 * S, 4, 10 * S);
	assert_int_equal(ok, 4);
	assert_false(peer_bucket_take(&b, 15 * S, 4, 10 * S));
	assert_true(peer_bucket_take(&b, 20 * S + 1, 4, 10 * S));
	assert_false(peer_bucket_take(&b, 20 * S + 2, 4, 10 * S));
}

static void lograte__once_per_interval__counts_held_back(void **state)
{
	struct peer_lograte l = { 0 };
	uint64_t held = 99;
	unsigned logged = 0;

	(void)state;
	for (int i = 0; i < 1000; i++)
		logged += (unsigned)peer_lograte_due(&l, S + (uint64_t)i * 1000, 10 * S, &held);
	assert_int_equal(logged, 1);
	assert_true(peer_lograte_due(&l, 12 * S, 10 * S, &held));
	assert_int_equal(held, 999);
}

static void msg__notice_roundtrip__checked_copy(void **state)
{
	struct json_object *ports = json_tokener_parse("[\"r0\"]");
	struct json_object *flows = json_tokener_parse("[\"tcp 10.0.0.1:5 -> 10.0.0.2:6\"]");
	char *t = peermsg_notice("rank0", 5, 10, 9, ports, flows, 4000);
	const char *why = NULL;
	struct json_object *n = peermsg_read_notice(t, strlen(t), &why);

	(void)state;
	assert_non_null(n);
	assert_string_equal(jx_str(n, "origin"), "rank0");
	assert_int_equal(jx_u64(n, "incident"), 5);
	assert_int_equal(jx_len(jx_arr(n, "flows")), 1);
	json_object_put(n);
	free(t);
	json_object_put(ports);
	json_object_put(flows);
}

static void msg__hostile_notices__refused_with_why(void **state)
{
	const char *bad[] = {
		"", "[]", "{\"origin\":\"a b\",\"incident\":1}", "{\"origin\":\"h\",\"incident\":0}",
		"{\"origin\":\"h\",\"incident\":-3}", "{\"origin\":\"h\",\"incident\":\"1\"}",
		"{\"origin\":\"h\",\"incident\":1,\"ports\":[1]}",
		"{\"origin\":\"h\",\"incident\":1,\"flows\":[\"a\\nb\"]}",
		"{\"origin\":\"h\",\"incident\":1} trailing",
		"{\"origin\":\"h\",\"incident\":1,\"x\":[[[[[[[[[[[[1]]]]]]]]]]]]}",
		"{\"origin\":\"h\",\"incident\":1,\"sent_real_ns\":1.5}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;
		struct json_object *n = peermsg_read_notice(bad[i], strlen(bad[i]), &why);

		if (n)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(why);
	}
	{
		/* a NUL inside the declared length */
		const char nul[] = "{\"origin\":\"h\",\"incident\":1}\0x";
		const char *why = NULL;

		assert_null(peermsg_read_notice(nul, sizeof(nul) - 1, &why));
		assert_non_null(strstr(why, "NUL"));
	}
}

static void msg__big_summary__trimmed_to_fit(void **state)
{
	struct json_object *s = json_object_new_object(), *ports = json_object_new_object();
	const char *why;
	char *t;

	(void)state;
	jx_add_str(s, "origin", "rank0");
	jx_add_u64(s, "incident", 1);
	jx_add_str(s, "notice_nonce", "00112233445566778899aabbccddeeff");
	for (int p = 0; p < 2; p++) {
		struct json_object *po = json_object_new_object();
		const char *per[] = { "stall", "window", "baseline" };
		char pn[16];

		for (int k = 0; k < 3; k++) {
			struct json_object *o = json_object_new_object(), *c = json_object_new_object();
			struct json_object *sig = json_object_new_object();

			jx_add_double(o, "span_s", 1);
			for (int i = 0; i < 200; i++) {
				char n[64];

				snprintf(n, sizeof(n), "hw_counters/a_rather_long_counter_name_%d", i);
				jx_add_u64(c, n, 123456789);
			}
			jx_add_u64(sig, "rdma_work", 0);
			json_object_object_add(o, "counters", c);
			json_object_object_add(o, "signals", sig);
			json_object_object_add(po, per[k], o);
		}
		snprintf(pn, sizeof(pn), "p%d", p);
		json_object_object_add(ports, pn, po);
	}
	json_object_object_add(s, "ports", ports);
	t = peermsg_summary(s, 16000);
	assert_non_null(t);
	assert_true(strlen(t) <= 16000);
	json_object_put(s);
	s = peermsg_read_summary(t, strlen(t), &why);
	assert_non_null(s);
	assert_true(jx_bool(s, "trimmed"));
	/* the signals survive the trim */
	assert_non_null(jx_get(jx_obj(jx_obj(jx_obj(jx_obj(s, "ports"), "p0"), "window"), "signals"),
			       "rdma_work"));
	json_object_put(s);
	free(t);
}

static void msg__summary_resources__carried_and_hostile_refused(void **state)
{
	const char *good = "{\"origin\":\"h\",\"incident\":1,\"notice_nonce\":"
			   "\"00112233445566778899aabbccddeeff\",\"resources\":{\"io_full_pct\":63,"
			   "\"disk\":\"nvme0n1\",\"producer_blkio_s\":9.8,\"novel\":1}}";
	const char *bad = "{\"origin\":\"h\",\"incident\":1,\"notice_nonce\":"
			  "\"00112233445566778899aabbccddeeff\",\"resources\":{\"io_full_pct\":\"63\"}}";
	const char *why = NULL;
	struct json_object *s = peermsg_read_summary(good, strlen(good), &why);

	(void)state;
	assert_non_null(s);
	assert_string_equal(json_object_to_json_string_ext(jx_obj(s, "resources"),
			    JSON_C_TO_STRING_PLAIN),
			    "{\"io_full_pct\":63,\"disk\":\"nvme0n1\",\"producer_blkio_s\":9.8}");
	json_object_put(s);
	assert_null(peermsg_read_summary(bad, strlen(bad), &why));
	assert_non_null(strstr(why, "resources"));
}

static void msg__summary_without_nonce__refused(void **state)
{
	const char *t = "{\"origin\":\"h\",\"incident\":1,\"ports\":{}}";
	const char *why = NULL;

	(void)state;
	assert_null(peermsg_read_summary(t, strlen(t), &why));
	assert_non_null(strstr(why, "notice_nonce"));
}

static void msg__same_conn__either_direction(void **state)
{
	(void)state;
	assert_true(peermsg_same_conn("tcp 1.1.1.1:5 -> 2.2.2.2:6", "tcp 2.2.2.2:6 -> 1.1.1.1:5"));
	assert_true(peermsg_same_conn("tcp 1.1.1.1:5 -> 2.2.2.2:6", "tcp 1.1.1.1:5 -> 2.2.2.2:6"));
	assert_false(peermsg_same_conn("tcp 1.1.1.1:5 -> 2.2.2.2:6", "udp 2.2.2.2:6 -> 1.1.1.1:5"));
	assert_false(peermsg_same_conn("tcp 1.1.1.1:5 -> 2.2.2.2:6", "tcp 2.2.2.2:7 -> 1.1.1.1:5"));
	assert_false(peermsg_same_conn("garbage", "tcp 2.2.2.2:7 -> 1.1.1.1:5"));
}

/* ---- a hostile (or honest) peer for the system tests ----
 *
 *   test_peerproto --send ADDR:PORT --key FILE [--mode MODE] [--count N]
 *                  [--incident ID] [--origin HOST] [--skew-ms MS]
 *                  [--save FILE | --raw FILE] [--from IPV4] [--to HOST]
 *                  [--rate N]
 *
 * MODE: notice (signed, a fresh nonce each; the default), badkey (signed
 * with a key that is not FILE's), garbage (random bytes), oversized (a
 * notice header announcing 60000 bytes, and as many), short (12 bytes),
 * old (a protocol version 1 notice: a 40-byte header without recipient,
 * signed). --to names the recipient (default rank0).
 * --count N sends N (incident ID, ID+1, ...); --skew-ms moves the
 * timestamp; --save keeps the first datagram, --raw sends a saved one
 * again (a replay); --from binds the source address; --rate N sends at
 * most N a second (a pause of 1/N s after each, never a burst to catch
 * up). Run it in the sender's namespace (ip netns exec). */
static int send_main(int argc, char **argv)
{
	const char *to = NULL, *keyf = NULL, *mode = "notice", *origin = "rank1";
	const char *save = NULL, *raw = NULL, *from = NULL, *rcpt = "rank0";
	long count = 1, skew_ms = 0, rate = 0;
	uint64_t inc = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct peer_key k;
	char err[512], host[64];
	static uint8_t buf[65536];
	int fd;

	to = argc > 2 ? argv[2] : NULL;
	for (int i = 3; i + 1 < argc; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--key"))
			keyf = v;
		else if (!strcmp(o, "--mode"))
			mode = v;
		else if (!strcmp(o, "--count"))
			count = atol(v);
		else if (!strcmp(o, "--incident"))
			inc = strtoull(v, NULL, 10);
		else if (!strcmp(o, "--origin"))
			origin = v;
		else if (!strcmp(o, "--skew-ms"))
			skew_ms = atol(v);
		else if (!strcmp(o, "--save"))
			save = v;
		else if (!strcmp(o, "--raw"))
			raw = v;
		else if (!strcmp(o, "--from"))
			from = v;
		else if (!strcmp(o, "--to"))
			rcpt = v;
		else if (!strcmp(o, "--rate"))
			rate = atol(v);
		else {
			fprintf(stderr, "--send: unknown option %s\n", o);
			return 2;
		}
	}
	if (!to || !keyf || sscanf(to, "%63[0-9.]:%hu", host, &sa.sin_port) != 2 ||
	    inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: %s --send IPV4:PORT --key FILE [--mode notice|badkey|"
			"garbage|oversized|short] [--count N] [--incident ID] [--origin HOST] "
			"[--skew-ms MS] [--save FILE | --raw FILE] [--from IPV4] [--to HOST] [--rate N]\n",
			argv[0]);
		return 2;
	}
	sa.sin_port = htons(sa.sin_port);
	if (peerkey_load(keyf, -1, &k, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!strcmp(mode, "badkey"))
		for (size_t i = 0; i < k.len; i++)
			k.k[i] ^= 0x5a;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (from) {
		struct sockaddr_in src = { .sin_family = AF_INET };

		if (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
			perror(from);
			return 1;
		}
	}
	for (long n = 0; n < count; n++) {
		ssize_t len = 0;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t now = (uint64_t)ts.tv_sec * S + (uint64_t)ts.tv_nsec +
			       (uint64_t)(skew_ms * 1000000);
		if (raw) {
			FILE *f = fopen(raw, "rb");

			if (!f) {
				perror(raw);
				return 1;
			}
			len = (ssize_t)fread(buf, 1, sizeof(buf), f);
			fclose(f);
		} else if (!strcmp(mode, "notice") || !strcmp(mode, "badkey") || !strcmp(mode, "old")) {
			struct json_object *ports = json_object_new_array();
			struct json_object *flows = json_object_new_array();
			uint8_t nonce[PEER_NONCE_LEN];
			char *t;

			json_object_array_add(ports, json_object_new_string("rank1"));
			t = peermsg_notice(origin, inc + (uint64_t)n, now, now - S, ports, flows,
					   PEER_MAX_NOTICE - PEER_HDR_LEN - PEER_MAC_LEN);
			json_object_put(ports);
			json_object_put(flows);
			if (!t || peer_nonce(nonce) < 0)
				return 1;
			len = peer_encode(&k, PEER_NOTICE, rcpt, now, nonce, t, strlen(t), buf,
					  PEER_MAX_NOTICE);
			if (len > 0 && !strcmp(mode, "old")) {
				/* version 1: the same without the recipient, signed again */
				unsigned int ml = 0;

				buf[4] = 1;
				memmove(buf + PEER_TO_OFF, buf + PEER_HDR_LEN, strlen(t));
				len = PEER_TO_OFF + (ssize_t)strlen(t);
				HMAC(EVP_sha256(), k.k, (int)k.len, buf, (size_t)len, buf + len, &ml);
				len += PEER_MAC_LEN;
			}
			free(t);
		} else if (!strcmp(mode, "garbage") || !strcmp(mode, "short")) {
			len = !strcmp(mode, "short") ? 12 : 200 + rand() % 1200;
			for (ssize_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rand();
			if (n % 2)
				memcpy(buf, PEER_MAGIC, 4);     /* half of them look like ours */
		} else if (!strcmp(mode, "oversized")) {
			len = 60000;
			memset(buf, 'A', (size_t)len);
			memcpy(buf, PEER_MAGIC, 4);
			buf[4] = PEER_VERSION;
			buf[5] = PEER_NOTICE;
		} else {
			fprintf(stderr, "--mode %s: not one of notice, badkey, old, garbage, oversized, "
				"short\n",
				mode);
			return 2;
		}
		if (len <= 0)
			return 1;
		if (save && n == 0) {
			FILE *f = fopen(save, "wb");

			if (!f || fwrite(buf, 1, (size_t)len, f) != (size_t)len)
				return 1;
			fclose(f);
		}
		if (sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&sa, sizeof(sa)) != len) {
			perror("sendto");
			return 1;
		}
		if (rate > 0) {
			struct timespec gap = { .tv_sec = 0, .tv_nsec = (long)(S / (uint64_t)rate) };

			if (rate == 1)
				gap = (struct timespec){ .tv_sec = 1 };
			nanosleep(&gap, NULL);
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--send"))
		return send_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode__roundtrip__header_and_signature_verify),
		cmocka_unit_test(verify__other_key_or_one_flipped_bit__refused),
		cmocka_unit_test(decode__garbage_short_or_lying__refused_with_why),
		cmocka_unit_test(recipient__signed_checked_required),
		cmocka_unit_test(decode__version_1__refused_as_old_version),
		cmocka_unit_test(hourly__limit_per_sliding_hour),
		cmocka_unit_test(encode__too_large__refused),
		cmocka_unit_test(replay__same_nonce_twice__second_refused),
		cmocka_unit_test(replay__lookup_then_remember__lookup_changes_nothing),
		cmocka_unit_test(replay__outside_window__stale_and_future_refused),
		cmocka_unit_test(replay__cache_overflows__forgotten_nonce_still_refused),
		cmocka_unit_test(bucket__burst_then_one_per_interval),
		cmocka_unit_test(lograte__once_per_interval__counts_held_back),
		cmocka_unit_test(msg__notice_roundtrip__checked_copy),
		cmocka_unit_test(msg__hostile_notices__refused_with_why),
		cmocka_unit_test(msg__big_summary__trimmed_to_fit),
		cmocka_unit_test(msg__summary_without_nonce__refused),
		cmocka_unit_test(msg__summary_resources__carried_and_hostile_refused),
		cmocka_unit_test(msg__same_conn__either_direction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
