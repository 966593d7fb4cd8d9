/* peers: the daemon's conversation with peer daemons (nicstalld.conf(5)
 * "[peer NAME]", nicstalld(8) "PEERS"), on one non-blocking UDP socket in
 * the event loop.
 *
 * Originating: when an incident opens, peers_notify() sends a signed
 * "snapshot now" notice (this host, the incident, the stall's UTC time, its
 * ports and flows) to every peer, again after 150 and 450 ms to those that
 * did not answer (each with a fresh nonce), and hands each peer's signed
 * summary to the summary hook.
 *
 * Receiving: a notice that is authentic (HMAC), fresh (time window, nonce
 * never seen) and within the peer's rate (4 incidents at once, then one
 * every 10 s) goes to the notice hook once per incident, which snapshots
 * and later answers with peers_answer(); a repeat of the same incident is
 * answered from the cached summary. A notice can do nothing else: it names
 * no command, and nothing it carries but the incident's identity, time,
 * ports and flows is read. Everything refused is counted per peer and
 * logged once per interval (10 s); nothing ever blocks the loop. */
#ifndef NICSTALL_PEERS_H
#define NICSTALL_PEERS_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct loop;
struct peers;
struct json_object;

#define PEERS_LOG_INTERVAL_NS 10000000000ull
#define PEERS_NOTICE_BURST 4
#define PEERS_NOTICE_EVERY_NS 10000000000ull

/* A notice accepted from peer: notice (borrowed for the call) holds
 * origin, incident, sent_real_ns, stall_real_ns, ports, flows; received_*:
 * when it arrived. The handler answers later with peers_answer(token). */
typedef void (*peers_notice_fn)(const char *peer, struct json_object *notice,
				uint64_t received_mono_ns, uint64_t received_real_ns,
				uint64_t token, void *arg);
/* The summary of peer about our incident (borrowed), rtt from the notice
 * it answers. */
typedef void (*peers_summary_fn)(uint64_t incident_id, const char *peer,
				 struct json_object *summary, double rtt_ms, void *arg);

/* c is borrowed until the next peers_configure(). With no [peer] the
 * module holds no socket. NULL with err when the socket cannot be made. */
struct peers *peers_new(struct loop *l, const struct conf *c, char *err, size_t errlen);
void peers_free(struct peers *p);
/* A new configuration: peers added or removed keep nothing of each other;
 * an unchanged peer keeps its counters, nonces and rate. The socket is
 * made again when the listening address or namespace changed. 0, or -1
 * with err (then the module has no socket until the next success). */
int peers_configure(struct peers *p, const struct conf *c, char *err, size_t errlen);
void peers_set_hooks(struct peers *p, peers_notice_fn on_notice, peers_summary_fn on_summary,
		     void *arg);
unsigned peers_count(const struct peers *p);
/* This host's name in notices and bundles (host_name, else gethostname). */
const char *peers_host(const struct peers *p);

/* Send the notice of incident id to every peer. Returns {NAME: {address,
 * port, notified: bool, error?}} for the record (NULL with no peers). */
struct json_object *peers_notify(struct peers *p, uint64_t incident_id, uint64_t stall_real_ns,
				 struct json_object *ports, struct json_object *flows);
/* No more retransmissions for incident id: the peers that did not answer
 * are counted unanswered. */
void peers_forget(struct peers *p, uint64_t incident_id);
/* Answer the notice of token with summary (taken over). The answer
 * (signed, bound to the notice's nonce) is sent and kept for repeats. 0,
 * or -1 when the notice's peer is gone or the summary cannot be sent. */
int peers_answer(struct peers *p, uint64_t token, struct json_object *summary);

/* nicstallctl peers: {host, listen, peers: [...], unknown_senders}. */
struct json_object *peers_status_json(const struct peers *p);

#endif
