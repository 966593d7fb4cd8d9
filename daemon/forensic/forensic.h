/* forensic: the investigation run when an incident opens (or on demand),
 * asynchronously in the event loop while sampling goes on:
 *   1. snapshot every counter of the involved ports, link flags,
 *      neighbours, flows (before anything touches a port)
 *   2. fast observation window, kernel pings each way, engine threads
 *      (twice), external probes
 *   3. capture without a mode change, then a promiscuous capture
 *   4. receive-filter reprogram when policy allows and flows still stall
 *   5. watch for the release; journal excerpt; classification; bundle
 * Every step's start, end, outcome and output is recorded (record.h).
 * The probes are reached through a table, so the phase machine is tested
 * with fake ones. */
#ifndef NICSTALL_FORENSIC_H
#define NICSTALL_FORENSIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/forensic/recovery.h"
#include "daemon/detect/stall.h"

struct conf;
struct loop;
struct ports;
struct rules;
struct incident;
struct json_object;
struct forensics;
struct probe_ping;
struct probe_ping_result;
struct probe_ping_opts;
struct probe_cap;
struct probe_cap_result;
struct probe_exec;
struct probe_exec_result;
struct probe_exec_cred;
struct probe_threads_snap;

/* The probes an investigation runs (forensic_real_probes: probes/). */
struct forensic_probes {
	/* o: size and don't-fragment (probe_ping.h), NULL the defaults */
	struct probe_ping *(*ping_start)(struct loop *l, int nsfd, const char *ifname,
					 const char *dst, unsigned count, uint64_t interval_ns,
					 uint64_t timeout_ns, const struct probe_ping_opts *o,
					 void (*done)(struct probe_ping *, void *),
					 void *arg, char *err, size_t errlen);
	const struct probe_ping_result *(*ping_result)(const struct probe_ping *p);
	int (*ping_to_json)(const struct probe_ping *p, struct json_object *o);
	void (*ping_free)(struct probe_ping *p);

	struct probe_cap *(*cap_start)(struct loop *l, int nsfd, const char *ifname,
				       const char *filter, int promisc, unsigned snaplen,
				       uint64_t duration_ns, unsigned max_packets, uint64_t max_bytes,
				       const char *path, void (*done)(struct probe_cap *, void *),
				       void *arg, char *err, size_t errlen);
	const struct probe_cap_result *(*cap_result)(const struct probe_cap *c);
	int (*cap_to_json)(const struct probe_cap *c, struct json_object *o);
	void (*cap_free)(struct probe_cap *c);

	struct probe_exec *(*exec_start)(struct loop *l, const char *const *argv,
					 const struct probe_exec_cred *cred, int nsfd,
					 uint64_t timeout_ns, size_t max_output,
					 void (*done)(struct probe_exec *, void *), void *arg,
					 char *err, size_t errlen);
	const struct probe_exec_result *(*exec_result)(const struct probe_exec *p);
	int (*exec_to_json)(const struct probe_exec *p, struct json_object *o);
	void (*exec_free)(struct probe_exec *p);

	int (*threads_snapshot)(pid_t pid, struct probe_threads_snap *out, char *err,
				size_t errlen);
	int (*threads_to_json)(const struct probe_threads_snap *first,
			       const struct probe_threads_snap *second, struct json_object *o);
	void (*threads_free)(struct probe_threads_snap *s);
	/* The process holding a socket inode: 0 with *pid, or -errno. */
	int (*inode_owner)(uint64_t inode, int *pid, char *comm, size_t commlen);

	int (*journal)(const char *journal_dir, uint64_t from_us, uint64_t to_us,
		       const char *const *match, size_t max_entries, size_t max_bytes,
		       struct json_object **out, char *err, size_t errlen);
	/* The receive-filter reprogram of one interface (probes/reprogram.h). */
	struct reprogram_ops reprogram;
};
extern const struct forensic_probes forensic_real_probes;

/* c is borrowed until the next forensic_configure(); probes NULL: the real
 * ones. */
struct forensics *forensic_new(struct loop *l, struct ports *ps, struct stall *st,
			       const struct conf *c, const struct forensic_probes *probes);
void forensic_free(struct forensics *f);
void forensic_configure(struct forensics *f, const struct conf *c);
/* The rules investigations are classified with (NULL: every verdict is
 * unknown); borrowed until the next call. */
void forensic_set_rules(struct forensics *f, const struct rules *r);

/* Incident hook (stall_set_hook). */
void forensic_on_incident(struct incident *inc, enum incident_event event, void *arg);
/* nicstallctl investigate PORT: run the sequence now. 0 or -1 with err. */
int forensic_investigate(struct forensics *f, const char *port, uint64_t *id,
			 char *err, size_t errlen);
/* nicstallctl recover PORT: one reprogram now, under the policy. NULL when
 * it started (done gets the record from the loop when it completes), or a
 * JSON object with "error" when it was refused (the caller's). */
struct json_object *forensic_recover(struct forensics *f, const char *port,
				    void (*done)(struct json_object *o, int performed, void *arg),
				    void *arg);
/* nicstallctl snapshot --bundle: every counter of the ports now, written
 * as a bundle with verdict "manual". 0 and the path, or -1 with err. */
int forensic_manual_bundle(struct forensics *f, const char *const *ports, size_t nports,
			   char *path, size_t pathlen, char *err, size_t errlen);
/* Peer daemons (peers.h): notices go out as incidents open; NULL: none. */
struct peers;
void forensic_set_peers(struct forensics *f, struct peers *p);
/* Benchmark runs (runs.h): told of incidents, bundles and interventions,
 * and asked before a promiscuous capture or a reprogram; NULL: none. */
struct runs;
void forensic_set_runs(struct forensics *f, struct runs *r);
/* peers_notice_fn: a peer's incident, snapshot now (peersnap.c). */
void forensic_on_peer_notice(const char *peer, struct json_object *notice, uint64_t mono,
			     uint64_t real, uint64_t token, void *arg);
/* peers_summary_fn: a peer's summary for one of our incidents. */
void forensic_on_peer_summary(uint64_t incident_id, const char *peer, struct json_object *summary,
			      double rtt_ms, void *arg);

/* nicstallctl incident show [ID]: the record (NULL when unknown). */
struct json_object *forensic_record(struct forensics *f, uint64_t id);
struct json_object *forensic_list(struct forensics *f);

#endif
