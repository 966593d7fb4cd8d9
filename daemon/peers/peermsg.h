/* peermsg: the JSON payloads of peer datagrams (peerproto.h): building a
 * notice and a summary that fit their datagram, and reading them back from
 * a peer as hostile input (bounded parse, known keys only, every value's
 * type and size checked; what comes out is a fresh object of checked
 * values, never the parsed one).
 *
 * Notice: {origin, incident, sent_real_ns, stall_real_ns, ports: [NAME],
 *          flows: ["tcp A:P -> B:Q"]}
 * Summary: {origin, incident, notice_nonce, host, received_real_ns,
 *           answered_real_ns, window_ms, bundle, bundle_error, trimmed,
 *           incidents_open: [ID],
 *           ports: {NAME: {profile, stall|window|baseline:
 *                          {span_s, counters: {NAME: delta}, signals: {NAME: v}}}},
 *           flows: {total, stalled, waiting, idle,
 *                   list: [{tuple, state, source, waiting_ms, tx_msgs, rx_msgs, held}]}} */
#ifndef NICSTALL_PEERMSG_H
#define NICSTALL_PEERMSG_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define PEERMSG_MAX_PORTS 8
#define PEERMSG_MAX_FLOWS 32     /* listed in a summary */
#define PEERMSG_MAX_NFLOWS 16    /* named in a notice */
#define PEERMSG_MAX_COUNTERS 256 /* per period */

/* The notice's JSON text (malloc'd), at most max bytes (flows are left out
 * from the end until it fits); NULL when even without flows it does not. */
char *peermsg_notice(const char *origin, uint64_t incident, uint64_t sent_real_ns,
		     uint64_t stall_real_ns, struct json_object *ports, struct json_object *flows,
		     size_t max);
/* The summary's JSON text (malloc'd), at most max bytes: when too large,
 * the counters of the baseline, then of the stall, then of the window are
 * left out (the signals stay), then the flow list is shortened; "trimmed"
 * says so. NULL when it cannot fit at all. */
char *peermsg_summary(struct json_object *summary, size_t max);

/* A checked copy of a notice / a summary, or NULL with why. */
struct json_object *peermsg_read_notice(const char *text, size_t len, const char **why);
struct json_object *peermsg_read_summary(const char *text, size_t len, const char **why);

/* Do two flow tuples ("tcp A:P -> B:Q") name one connection, either way
 * round (an end's tuple and the other end's)? */
int peermsg_same_conn(const char *a, const char *b);

#endif
