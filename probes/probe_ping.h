/* probe_ping: asynchronous kernel ICMP echo probe for the event loop.
 *
 * Sends count echo requests (IPv4 ICMP or IPv6 ICMPv6) from inside a
 * network namespace, paced by a timer, matches replies by identifier,
 * sequence and a per-probe token in the payload, and times each one with
 * CLOCK_MONOTONIC stamps. An ICMP datagram socket is used when
 * net.ipv4.ping_group_range admits our group, else a raw socket.
 * Echoes may be of a chosen size and carry the don't-fragment bit
 * (probe_ping_opts), to test a path at its MTU beside the small echo.
 * Never blocks; `done` runs exactly once, from the loop. */
#ifndef NICSTALL_PROBE_PING_H
#define NICSTALL_PROBE_PING_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct json_object;
struct probe_ping;

#define PROBE_PING_MAX 64                           /* echoes per probe */
#define PROBE_PING_DEF_INTERVAL_NS 200000000ull     /* interval_ns 0 */
#define PROBE_PING_DEF_TIMEOUT_NS 1000000000ull     /* timeout_ns 0 */
/* Whole IP packet of the default echo (56 bytes of payload, as ping):
 * 20 + 8 + 56 for IPv4, 40 + 8 + 56 for IPv6. Also the smallest size. */
#define PROBE_PING_DEF_SIZE_V4 84u
#define PROBE_PING_DEF_SIZE_V6 104u
#define PROBE_PING_MAX_SIZE_V4 65535u               /* IPv4 total length */
#define PROBE_PING_MAX_SIZE_V6 (65535u + 40u)       /* payload length + header */

struct probe_ping_opts {
	/* The IP packet's whole size in bytes, IP header included (no
	 * options or extension headers): `ping -s N` sends N + 28 for IPv4,
	 * N + 48 for IPv6. 0: the default above. Out of range (below the
	 * default, above the maximum) fails probe_ping_start_opts. */
	unsigned size;
	/* Don't fragment, as `ping -M do`: IP_MTU_DISCOVER IP_PMTUDISC_DO for
	 * IPv4, IPV6_DONTFRAG and IPV6_MTU_DISCOVER IPV6_PMTUDISC_DO for IPv6.
	 * An echo larger than the route's MTU then fails to send (EMSGSIZE,
	 * recorded with the MTU) and a router's "fragmentation needed" /
	 * "packet too big" is recorded with the next-hop MTU. 0: the kernel's
	 * default, as ping without -M (DF on echoes that fit the known path
	 * MTU, larger ones fragmented here). */
	int df;
};

struct probe_ping_result {
	unsigned sent, received;
	double rtt_min_ms, rtt_avg_ms, rtt_max_ms;  /* 0 when nothing replied */
	char method[8];          /* "dgram" | "raw" */
	char error[256];         /* "" or the first failure (send error, ICMP
				  * error such as host unreachable) */
	struct {
		uint16_t seq;
		uint64_t sent_ns, rtt_ns;   /* CLOCK_MONOTONIC; rtt 0 if none */
		int replied;
	} echo[PROBE_PING_MAX];
};

typedef void (*probe_ping_done_fn)(struct probe_ping *p, void *arg);

/* Start a probe. nsfd: namespace fd (-1: own); ifname: bind to this
 * interface (SO_BINDTODEVICE) or NULL; dst_text: IPv4 or IPv6 literal
 * ("fe80::1%eth0" style scope allowed); count 1..64; interval_ns and
 * timeout_ns 0 take the defaults above. The probe ends timeout_ns after the
 * last echo was sent, or as soon as every echo has replied.
 * Returns NULL with err filled when it cannot start (bad address, socket,
 * interface); done is then never called. */
struct probe_ping *probe_ping_start(struct loop *l, int nsfd, const char *ifname,
				    const char *dst_text, unsigned count,
				    uint64_t interval_ns, uint64_t timeout_ns,
				    probe_ping_done_fn done, void *arg,
				    char *err, size_t errlen);

/* probe_ping_start with options; o NULL: the defaults (what
 * probe_ping_start does). A size out of range fails here, err saying the
 * bounds. */
struct probe_ping *probe_ping_start_opts(struct loop *l, int nsfd, const char *ifname,
					 const char *dst_text, unsigned count,
					 uint64_t interval_ns, uint64_t timeout_ns,
					 const struct probe_ping_opts *o,
					 probe_ping_done_fn done, void *arg,
					 char *err, size_t errlen);

const struct probe_ping_result *probe_ping_result(const struct probe_ping *p);
int probe_ping_finished(const struct probe_ping *p);

/* Cancel (if running), unregister and free. done is never called after it.
 * Safe from inside done. NULL is a no-op. */
void probe_ping_free(struct probe_ping *p);

/* Fill obj (a json object) with the target, the echo's size ("size": the
 * whole IP packet) and "df", and the results. 0 or -1. */
int probe_ping_to_json(const struct probe_ping *p, struct json_object *obj);

#endif
