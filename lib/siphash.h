/* siphash: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012), the keyed hash for tables whose keys hostile writers choose
 * (flow tables: an engine picks its session ids and ports). With a random
 * per-process key nobody outside the daemon can aim keys at one bucket.
 *
 * Written here rather than taken from libcrypto: its EVP_MAC "SIPHASH"
 * needs a context set up per message, and the flow table hashes every
 * observation of every poll (hundreds of thousands per second). */
#ifndef NICSTALL_SIPHASH_H
#define NICSTALL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct sip_key {
	uint64_t k0, k1;
};

/* SipHash-2-4 of data[0..len) under key (k0 = the key's bytes 0..7 as a
 * little-endian integer, k1 = bytes 8..15). */
uint64_t siphash24(const struct sip_key *key, const void *data, size_t len);

/* A random key from getrandom(2), never blocking: GRND_INSECURE (Linux 5.6
 * and later) or GRND_NONBLOCK; when the kernel has none to give (early boot
 * on an old kernel) a mix of clocks and pid, which still defeats an offline
 * choice of keys. */
void sip_key_random(struct sip_key *key);

#endif
