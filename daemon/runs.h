/* runs: benchmark runs as records (nicstallctl run). A harness brackets a
 * measured run with begin and end; the daemon keeps, per open run, the
 * counters of every watched port at its start, and notes what happens
 * during it: incidents opened (their verdict and bundle), every
 * intervention of its own (captures, promiscuous transitions, reprograms,
 * root's investigate and recover), the flows watched and their longest
 * wait. At the end a certificate is written (runs/NAME@START.cert in the
 * state directory, with a sha256sum(1) line beside it) by a writer thread,
 * never by the loop. Its first line is one word: clean, anomalous, tainted
 * or incomplete (runcert.h).
 *
 * run_policy (conf.h): while a run is open, observe makes the daemon skip
 * its promiscuous captures and reprograms (runs_allow() says no), recover
 * lets them run and each taints the run. A run left open is closed
 * incomplete at the next begin of its name, at the daemon's stop, and at
 * the next start (its runs/NAME.open file). */
#ifndef NICSTALL_RUNS_H
#define NICSTALL_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/runcert.h"

struct conf;
struct loop;
struct ports;
struct stall;
struct rules;
struct runs;
struct json_object;

#define RUNS_MAX_OPEN 32        /* open runs, every uid */
#define RUNS_MAX_PER_UID 8      /* open runs of one non-root uid */
#define RUNS_EVENTS_MAX 64      /* interventions kept per run (more are counted) */
#define RUNS_INCIDENTS_MAX 32   /* incidents kept per run (more are counted) */
#define RUNS_KEEP 64            /* certificates kept in memory (run show) */
/* An ended run waits this long at most for the bundles of its incidents
 * before its certificate is written without them. */
#define RUNS_BUNDLE_WAIT_NS (60ull * 1000000000ull)
/* A run open longer is closed incomplete: a group member cannot hold the
 * daemon's promiscuous capture and reprogram back for longer than this. */
#define RUNS_MAX_DURATION_NS (3600ull * 1000000000ull)
#define RUNS_DIR "runs"

/* c, ps, st borrowed (runs_configure for a new c). Reads runs/ of the
 * state directory (synchronously: call before the loop runs) and closes
 * every run a previous daemon left open as incomplete. */
struct runs *runs_new(struct loop *l, struct ports *ps, struct stall *st, const struct conf *c);
/* Closes every open run incomplete ("the daemon stopped"), writes the
 * certificates still pending and waits for the writer. */
void runs_free(struct runs *r);
void runs_configure(struct runs *r, const struct conf *c);
void runs_set_rules(struct runs *r, const struct rules *rules);

/* The control requests. Each returns its reply ({"ok": true, ...} or a
 * ctl_error); uid is the client's (0 root). */
struct json_object *runs_begin(struct runs *r, const char *name, struct json_object *labels,
			       uid_t uid);
struct json_object *runs_end(struct runs *r, const char *name, uid_t uid,
			     struct json_object *status);
struct json_object *runs_show(struct runs *r, const char *name);
struct json_object *runs_list(struct runs *r);

/* May the daemon make a promiscuous transition or a reprogram now? 1 with
 * no run open, under run_policy = recover, or when asked by root
 * (manual); else 0 with why (naming the run and the policy). */
int runs_allow(const struct runs *r, int manual, char *why, size_t len);
/* The daemon did kind ("capture", "promisc-capture", "reprogram",
 * "investigate", "recover") on port at mono: noted in every open run;
 * changed: it changed the system (taints them). */
void runs_intervention(struct runs *r, const char *kind, const char *port, uint64_t mono,
		       int changed, const char *note);
/* An incident opened (investigation inv). */
void runs_incident(struct runs *r, uint64_t incident, uint64_t inv, const char *port);
/* Investigation inv's bundle (NULL: none written) and verdict. */
void runs_bundle(struct runs *r, uint64_t inv, const char *verdict, const char *bundle);
/* The runs open at mono, into rec "run" (for the bundle's manifest):
 * {"names": [...], "policy": ...}; nothing when none. */
void runs_annotate(const struct runs *r, struct json_object *rec, uint64_t mono);

/* For the metrics: the open runs' names (each call, i < runs_open_count),
 * and certificates written by first word. */
unsigned runs_open_count(const struct runs *r);
const char *runs_open_name(const struct runs *r, unsigned i);
uint64_t runs_certificates(const struct runs *r, enum run_word w);

#endif
