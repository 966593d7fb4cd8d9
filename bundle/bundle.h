/* bundle: the evidence bundle, one directory per incident under
 * "<state_dir>/bundles/" (nicstall-bundle(5)): written under ".tmp-<name>",
 * fsynced, checksummed (SHA256SUMS, sha256sum(1) format) and renamed into
 * place, so a reader never sees half a bundle; verified, listed, pruned and
 * summarised for humans. */
#ifndef NICSTALL_BUNDLE_H
#define NICSTALL_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct rules;

#define BUNDLE_SCHEMA 1
#define BUNDLE_NAME_MAX 200     /* a bundle directory name */
#define BUNDLE_PATH_MAX 255     /* a file's relative path inside a bundle */

/* Manifest keys (nicstall-bundle(5) "MANIFEST"): the daemon writes them, the
 * summary and nicstallctl read them. The facts object (MK_FACTS) has its own
 * keys, FK_* in rules/facts.h; MK_RELEASE has the shape of the facts'
 * release (FK_R_*). */
#define MK_SCHEMA           "schema"
#define MK_FILES            "files"
#define MK_TRIGGER          "trigger"
#define MK_HOST             "host"
#define MK_KERNEL           "kernel"
#define MK_VERSION          "nicstalld_version"
#define MK_INCIDENT_ID      "incident_id"
#define MK_INVESTIGATION_ID "investigation_id"
#define MK_PORT             "port"
#define MK_OPENED_REAL_NS   "opened_real_ns"
#define MK_PORTS            "ports"
#define MK_VERDICT          "verdict"
#define MK_FACTS            "facts"
#define MK_RELEASE          "release"
#define MK_STEPS            "steps"
#define MK_JOURNAL          "journal"
#define MK_KERNEL_LOG       "kernel_log"    /* [{what, port, lines}] */
#define MK_KL_WHAT          "what"
#define MK_KL_LINES         "lines"
#define MK_ENGINES          "engines"   /* the readers of unmodified engines */
#define MK_DEVLINK          "devlink"   /* {PORT: {at_stall, after, events, dumps, file}} */
/* a bundle of an incident on another host (verdict "peer-snapshot"): its
 * link, {origin_host, origin_peer, incident_id, notice_sent_real_ns,
 * stall_real_ns, received_real_ns, window_ms} */
#define MK_PEER             "peer"
#define MK_PE_ORIGIN_HOST   "origin_host"
#define MK_PE_ORIGIN_PEER   "origin_peer"
#define MK_PE_INCIDENT_ID   "incident_id"
#define MK_PE_SENT_REAL_NS  "notice_sent_real_ns"
#define MK_PE_RECEIVED_REAL_NS "received_real_ns"
#define MK_PE_WINDOW_MS     "window_ms"
/* the peers an incident notified: {NAME: {address, port, host, notified,
 * answered, rtt_ms, after_ms, bundle, error}} */
#define MK_PEERS            "peers"
#define MK_PS_ADDRESS       "address"
#define MK_PS_HOST          "host"
#define MK_PS_NOTIFIED      "notified"
#define MK_PS_ANSWERED      "answered"
#define MK_PS_RTT_MS        "rtt_ms"
#define MK_PS_AFTER_MS      "after_ms"
#define MK_PS_BUNDLE        "bundle"
#define MK_PS_ERROR         "error"
#define BUNDLE_VERDICT_PEER "peer-snapshot"
/* files[] */
#define MK_F_NAME           "name"
#define MK_F_BYTES          "bytes"
#define MK_F_SHA256         "sha256"
#define MK_F_TRUNCATED      "truncated"
#define MK_F_SOURCE_BYTES   "source_bytes"
/* ports.NAME (and the identity fields: driver, firmware, psid) */
#define MK_P_INTERFACE      "interface"
#define MK_P_NETNS          "netns"
#define MK_P_PROFILE        "profile"
#define MK_P_RDMA_DEVICE    "rdma_device"
#define MK_P_DRIVER         "driver"
#define MK_P_FIRMWARE       "firmware"
#define MK_P_PSID           "psid"
#define MK_P_NEIGHBOURS     "neighbours"    /* [{addr, state}] unicast, at the stall */
/* trigger, when it is an object rather than a word ("stall", "manual") */
#define MK_T_KIND           "kind"
/* times the summary also reads, in the manifest or its trigger object */
#define MK_REAL_NS          "real_ns"
#define MK_TIME_NS          "time_ns"
#define MK_TIME             "time"
/* steps[] */
#define MK_S_STEP           "step"
#define MK_S_PORT           "port"
#define MK_S_START_MS       "start_ms"
#define MK_S_END_MS         "end_ms"
#define MK_S_OUTCOME        "outcome"
#define MK_S_NOTE           "note"
/* journal */
#define MK_J_AVAILABLE      "available"
#define MK_J_ENTRIES        "entries"
#define MK_J_LINES          "lines"

struct bundle_file {
	const char *name;       /* relative path, e.g. "captures/a.pcap": components of
				 * [A-Za-z0-9._-], none "." / ".." / ".tmp-*", no leading '/' */
	const void *data;       /* contents, or NULL to copy from src_path */
	size_t len;
	const char *src_path;   /* regular file copied (at most max_copy bytes) when data == NULL */
};

/* Write a bundle atomically (see above). Adds "schema" and "files":
 * [{name, bytes, sha256[, truncated, source_bytes]}] to manifest (modified in
 * place) and writes it as manifest.json. "manifest.json" and "SHA256SUMS" are
 * reserved names. When "<name>" exists, "<name>-2", "<name>-3"... is used.
 * max_copy bounds every copied file (0: no bound); a longer source is cut to
 * its first max_copy bytes and its entry says "truncated": true.
 * Returns 0 with the final path in path_out, or -errno with err naming the
 * file and the reason; then nothing of the bundle remains. */
int bundle_write(const char *state_dir, const char *name, struct json_object *manifest,
		 const struct bundle_file *files, size_t nfiles, size_t max_copy,
		 char *path_out, size_t path_len, char *err, size_t errlen);
/* "<yyyymmddTHHMMSSZ>-<host>-<port>-<verdict>", parts sanitised to
 * [A-Za-z0-9._-] (others become '_', empty parts "unknown", long parts cut). */
void bundle_name(char *buf, size_t len, uint64_t real_ns, const char *host,
		 const char *port, const char *verdict);
/* Remove "<state_dir>/bundles/.tmp-*" leftovers of a crash. Returns how many
 * were removed, or -1 with err. */
int bundle_cleanup(const char *state_dir, char *err, size_t errlen);
/* Retention keeps two pools apart: this host's own bundles (its
 * incidents, and anything that is not a peer snapshot) and peer snapshots
 * (named "...-peer-snapshot[-N]" with trigger "peer-snapshot" in their
 * manifest). */
enum bundle_pool { BUNDLE_POOL_OWN, BUNDLE_POOL_PEER };
/* Keep at most max_count bundles and max_bytes in all (0: no bound) of
 * pool, counting and removing only that pool's bundles; removes the
 * oldest first (name order), never the pool's newest. Returns how many
 * were removed (each is logged), or -1 when the directory cannot be
 * read. */
int bundle_retention(const char *state_dir, enum bundle_pool pool, unsigned max_count,
		     uint64_t max_bytes);
/* Call cb for every bundle, oldest first (newest last); manifest is NULL when
 * unreadable and belongs to bundle_list (take a ref to keep it). Returns the
 * number of bundles, 0 when there is no bundle directory, -1 on error. */
int bundle_list(const char *state_dir,
		void (*cb)(const char *path, struct json_object *manifest, uint64_t bytes, void *arg),
		void *arg);
/* One incident across hosts (bundle/correlate.c). "HOST:ID" into host and
 * *id: 0, or -1 with err. */
int bundle_incident_parse(const char *spec, char *host, size_t hostlen, uint64_t *id, char *err,
			  size_t errlen);
/* Does the bundle of manifest m belong to incident HOST:ID: the origin's
 * own (host, incident_id) or a peer's snapshot of it (peer.origin_host,
 * peer.incident_id)? 1 or 0. */
int bundle_of_incident(struct json_object *m, const char *host, uint64_t id);
/* The peer bundles the origin's manifest announces: a new array of
 * {peer, host, bundle} (empty for a peer's bundle or none). */
struct json_object *bundle_incident_announced(struct json_object *m);
/* The bundle a user names (nicstallctl show, report, verify, classify): an
 * argument holding a '/' (./NAME, /path/NAME) is that path; a bare NAME is
 * looked up in "<state_dir>/bundles" only, never in the working directory,
 * where anyone may have left a look-alike. Returns 0 with the path in buf,
 * or -1 with err: a NAME that is not a bundle name, or no bundle of that
 * name in the state directory (err says how to name one elsewhere). */
int bundle_locate(const char *state_dir, const char *arg, char *buf, size_t len, char *err,
		  size_t errlen);
/* Verify a bundle: every file in SHA256SUMS present and matching, no file
 * missing or extra, manifest.json readable (schema as below) and its "files"
 * agreeing with SHA256SUMS. Returns 0 (err holds a note, or ""), or -1 with err
 * naming the first offending file ("summary.txt: missing"). *manifest_out gets
 * a new reference when non-NULL and the manifest could be read. */
int bundle_verify(const char *path, struct json_object **manifest_out, char *err, size_t errlen);
/* Read "<path>/manifest.json": schema BUNDLE_SCHEMA is read; an older one is
 * read with a note in err (return 0); a newer, missing or malformed one is
 * refused (-1, err names both versions). */
int bundle_load_manifest(const char *path, struct json_object **out, char *err, size_t errlen);
/* Open a bundle directory for the reads below: an fd (O_DIRECTORY), or -1
 * with err. */
int bundle_open(const char *path, char *err, size_t errlen);
/* Read the file rel (a bundle file name as above) beneath the bundle
 * directory dfd through the path bundle_verify uses: never through a
 * symbolic link at any component, regular files only (a FIFO or a device is
 * refused at once, without blocking), at most max bytes. Returns a malloc'd
 * NUL-terminated copy (*len without the NUL), or NULL with errno and err
 * ("summary.txt: a symbolic link (refused: ...)"). */
char *bundle_read_at(int dfd, const char *rel, size_t max, size_t *len, char *err,
		     size_t errlen);
/* The same for the bundle at bundle_path (err names it). */
char *bundle_read_file(const char *bundle_path, const char *rel, size_t max, size_t *len,
		       char *err, size_t errlen);
/* One-page human summary of a manifest (title, What it is, What it is not,
 * Evidence, Timeline, Recommended action); missing parts are said to be
 * missing. Counts print as integers, durations with a fixed precision
 * (0.1 ms, 1 ms for seconds). Returns a malloc'd string, NULL only when out
 * of memory. */
char *bundle_summary(struct json_object *manifest);
/* The same; with rules (non-NULL), each port's Evidence also gives the
 * port/vport gap its profile defines: "Gap: 6 frames counted at the port and
 * not at the vport in 1.600 s; the healthy rate explains 1.6." */
char *bundle_summary_rules(struct json_object *manifest, const struct rules *rules);
/* A classification's terms and the term that ruled out each other rule,
 * as expressions with the values they read (classify --explain); a new
 * string, NULL when out of memory. */
char *bundle_explain_text(struct json_object *classification);
/* Why a release came when it did, when the bundle tells (kernel TCP flows
 * and a port action: their retransmission backoff); NULL otherwise. */
const char *bundle_release_why(struct json_object *manifest);

#endif
