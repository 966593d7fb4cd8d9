/* runs_int: what runs.c and runs_cert.c share (a run's record); private
 * to those two files. */
#ifndef NICSTALL_RUNS_INT_H
#define NICSTALL_RUNS_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "daemon/recorder.h"
#include "daemon/runs.h"

struct bgwrite;
struct clayout;

#define MAX_PORTS 32
#define SAMPLE_NS 1000000000ull         /* flows and deadlines looked at */

struct run_src {
	struct clayout *lay;
	uint64_t *vals;
};

struct run_port {
	char name[32];
	const char *profile;
	struct run_src src[REC_MAX_SRC];
	double gap_rate;                /* frames/s of port-vport gap before the run, -1 unknown */
};

struct run_event {
	uint64_t mono, real;
	char kind[24], port[32];
	int changed;
	char note[160];
};

struct run_inc {
	uint64_t incident, inv, mono, real;
	char port[32], verdict[48], bundle[256];
	int done;
};

struct run {
	struct run *next;
	char name[RUN_NAME_MAX + 1];
	char file[RUN_NAME_MAX + 32];   /* NAME@yyyymmddTHHMMSS.mmmZ */
	uid_t uid;
	int policy;
	uint64_t start_mono, start_real, end_mono, end_real, deadline;
	uint64_t cpu_start_ns, cpu_ns;
	struct json_object *labels, *status, *cert;
	char incomplete[256];
	struct run_port ports[MAX_PORTS];
	unsigned nports;
	struct run_event ev[RUNS_EVENTS_MAX];
	unsigned nev, ev_more, taints;
	struct run_inc inc[RUNS_INCIDENTS_MAX];
	unsigned ninc, inc_more;
	unsigned flows_max;
	uint64_t longest_wait_ns;
};

struct runs {
	struct loop *loop;
	struct ports *ports;
	struct stall *stall;
	const struct conf *c;
	const struct rules *rules;
	struct loop_timer *tick;
	struct run *open, *closing;     /* closing: ended, waiting for bundles */
	unsigned nopen;
	struct json_object *kept[RUNS_KEEP];    /* certificates, newest at kept_next - 1 */
	unsigned kept_next;
	uint64_t words[RUN_WORDS];
	struct bgwrite *w;              /* runs/ of the state directory */
	char last_file[RUN_NAME_MAX + 32];      /* the newest file name given */
	unsigned same;                          /* and how many times in its ms */
};

/* yyyy-mm-ddTHH:MM:SS.mmmZ (compact: yyyymmddTHHMMSS.mmmZ) */
void runs_utc(uint64_t real_ns, char *buf, size_t len, int compact);
/* o[key] = {"utc", "real_ns", "mono_ns"} */
void runs_add_time(struct json_object *o, const char *key, uint64_t real, uint64_t mono);
const char *runs_policy_name(int p);

/* The counters of every watched port at the run's start (runs_cert.c). */
void runs_snap_take(struct runs *r, struct run *u);
void runs_snap_free(struct run *u);
/* u's certificate as it stands; final: its word counted, the certificate
 * written (runs/NAME@START.cert with its sha256 line) and kept. */
struct json_object *runs_build_cert(struct runs *r, struct run *u, int final);
/* A certificate kept for run show (reference taken over). */
void runs_keep_cert(struct runs *r, struct json_object *cert);

#endif
