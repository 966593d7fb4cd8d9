/* siphash: SipHash-2-4, after the reference implementation
 * (https://github.com/veorq/SipHash, siphash.c, CC0). */
#include "lib/siphash.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004
#endif

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                        \
	do {                                                            \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
	       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

uint64_t siphash24(const struct sip_key *key, const void *data, size_t len)
{
	const unsigned char *in = data, *end = in + (len - len % 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ key->k0;
	uint64_t v1 = 0x646f72616e646f6dull ^ key->k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ key->k0;
	uint64_t v3 = 0x7465646279746573ull ^ key->k1;
	uint64_t b = (uint64_t)len << 56, m;

	for (; in != end; in += 8) {
		m = le64(in);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	switch (len & 7) {
	case 7: b |= (uint64_t)in[6] << 48; /* fall through */
	case 6: b |= (uint64_t)in[5] << 40; /* fall through */
	case 5: b |= (uint64_t)in[4] << 32; /* fall through */
	case 4: b |= (uint64_t)in[3] << 24; /* fall through */
	case 3: b |= (uint64_t)in[2] << 16; /* fall through */
	case 2: b |= (uint64_t)in[1] << 8;  /* fall through */
	case 1: b |= (uint64_t)in[0];       /* fall through */
	case 0: break;
	}
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void sip_key_random(struct sip_key *key)
{
	unsigned char b[16];
	ssize_t n = getrandom(b, sizeof(b), GRND_INSECURE);

	if (n != (ssize_t)sizeof(b))
		n = getrandom(b, sizeof(b), GRND_NONBLOCK);
	if (n != (ssize_t)sizeof(b)) {
		struct timespec a, m;
		struct sip_key mix = { 0x9e3779b97f4a7c15ull, (uint64_t)getpid() };
		uint64_t t[2];

		clock_gettime(CLOCK_REALTIME, &a);
		clock_gettime(CLOCK_MONOTONIC, &m);
		t[0] = (uint64_t)a.tv_sec << 30 ^ (uint64_t)a.tv_nsec;
		t[1] = (uint64_t)m.tv_sec << 30 ^ (uint64_t)m.tv_nsec ^ (uint64_t)(uintptr_t)key;
		key->k0 = siphash24(&mix, t, sizeof(t));
		mix.k1 ^= key->k0;
		key->k1 = siphash24(&mix, t, sizeof(t));
		return;
	}
	key->k0 = le64(b);
	key->k1 = le64(b + 8);
}
