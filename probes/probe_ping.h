/* probe_ping: asynchronous kernel ICMP echo probe for the event loop.
 *
 * Sends count echo requests (IPv4 ICMP or IPv6 ICMPv6) from inside a
 * network namespace, paced by a timer, matches replies by identifier,
 * sequence and a per-probe token in the payload, and times each one with
 * CLOCK_MONOTONIC stamps. An ICMP datagram socket is used when
 * net.ipv4.ping_group_range admits our group, else a raw socket.
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

const struct probe_ping_result *probe_ping_result(const struct probe_ping *p);
int probe_ping_finished(const struct probe_ping *p);

/* Cancel (if running), unregister and free. done is never called after it.
 * Safe from inside done. NULL is a no-op. */
void probe_ping_free(struct probe_ping *p);

/* Fill obj (a json object) with the target and results. 0 or -1. */
int probe_ping_to_json(const struct probe_ping *p, struct json_object *obj);

#endif
