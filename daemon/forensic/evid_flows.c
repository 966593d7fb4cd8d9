/* evid_flows: the readers of unmodified engines in the evidence. */
#include "daemon/forensic/evid_flows.h"
#include "collectors/flows/flowsrc.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/incident.h"
#include "daemon/record.h"
#include "daemon/detect/stall.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#define MAX_REFS 256
#define MAX_PIDS 64             /* processes followed per investigation */
#define FOLLOW_MAX_STACKS 4     /* src_onload.c MAX_EVID_STACKS */

struct evid_flows {
	struct flowsrcs *fs;
	struct json_object *out;        /* rec.engines.WHEN (referenced) */
	unsigned *pending;              /* the investigation's counter */
	unsigned mine;                  /* of which ours */
	char spool[PATH_MAX];
	char when[16];
	uint64_t inv_id;
	char files[16][PATH_MAX];       /* work files written (4 stacks x 3 dumps) */
	unsigned nfiles;
	/* what evid_flows_follow has looked at: the incident's flows up to
	 * nseen, the processes whose evidence was asked for */
	unsigned nseen;
	int32_t pids[MAX_PIDS];
	unsigned npids;
};

static int seen_pid(struct evid_flows *e, int32_t pid)
{
	for (unsigned i = 0; i < e->npids; i++)
		if (e->pids[i] == pid)
			return 1;
	if (e->npids >= MAX_PIDS)
		return 1;               /* no more followed */
	e->pids[e->npids++] = pid;
	return 0;
}

/* The flows of the readers among arr (incident or flow-table JSON); a
 * flow's kind, and whether its source is a reader, from the flow sources'
 * rows (flowsrcs_kind_of) by its "source" name. */
static unsigned refs_of(const struct flowsrcs *fs, struct json_object *arr,
			uint64_t incident_id, const char *const *ports, unsigned nports,
			int by_pid, struct flow_src_ref *refs, unsigned n)
{
	for (size_t i = 0; i < jx_len(arr) && n < MAX_REFS; i++) {
		struct json_object *f = json_object_array_get_idx(arr, i);
		int reader;
		enum flow_src_kind k = flowsrcs_kind_of(fs, jx_str(f, "source"), &reader);
		int want = incident_id != 0;

		if (!reader) {
			/* a flow of another source (an engine table, a kernel
			 * socket): its process, whose Onload stacks are
			 * evidence too (the thread watch's stall of an engine
			 * whose own flows look idle to Onload: seed 001) */
			if (!incident_id || !jx_u64(f, "pid") || !by_pid)
				continue;
			refs[n].src = k ? k : FLOW_SRC_ENGINE;
			refs[n].session = 0;
			refs[n].pid = (int32_t)jx_u64(f, "pid");
			n++;
			continue;
		}
		if (!incident_id) {
			const char *st = jx_text(f, "state");

			for (unsigned p = 0; p < nports; p++)
				want |= !strcmp(jx_text(f, "port"), ports[p]);
			want = want && strcmp(st, "idle");
		}
		if (!want)
			continue;
		refs[n].src = k;
		refs[n].session = jx_u64(f, "session");
		refs[n].pid = (int32_t)jx_u64(f, "pid");
		n++;
	}
	return n;
}

/* Move the "lots" text of stack entry s (its dump "when") into a work
 * file; s.file names it. */
static void spool_one(struct evid_flows *e, struct json_object *s, uint64_t id, const char *when)
{
	struct json_object *t = jx_get(s, "lots");
	char rel[96], path[PATH_MAX + 128];
	const char *text;
	size_t len;
	int dfd, fd;

	if (!t || !json_object_is_type(t, json_type_string))
		return;
	text = json_object_get_string(t);
	len = (size_t)json_object_get_string_len(t);
	snprintf(rel, sizeof(rel), "inv%" PRIu64 "-onload-stack%" PRIu64 "-%s.txt",
		 e->inv_id, id, when);
	snprintf(path, sizeof(path), "%s/%s", e->spool, rel);
	mkdir(e->spool, 0750);
	dfd = open(e->spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	unlinkat(dfd, rel, 0);  /* ours from an earlier run of the same id */
	fd = dfd < 0 ? -1 : fsu_create_excl_at(dfd, rel, 0640);
	if (fd < 0 || fsu_write_all(fd, text, len) < 0) {
		jx_add_str(s, "spool_error", strerror(errno));
		log_warnx("investigation %" PRIu64 ": onload stackdump text: %s: %s",
			  e->inv_id, path, strerror(errno));
	} else {
		jx_add_str(s, "file", path);
		jx_add_u64(s, "bytes", len);
		if (e->nfiles < sizeof(e->files) / sizeof(e->files[0]))
			util_strlcpy(e->files[e->nfiles++], path, sizeof(e->files[0]));
	}
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	json_object_object_del(s, "lots");
}

/* Every "lots" text of the Onload part (the dump at this time, and at the
 * stall the periodic one before it) into work files. */
static void spool(struct evid_flows *e)
{
	struct json_object *stacks = jx_arr(jx_obj(e->out, "onload"), "stacks");

	for (size_t i = 0; i < jx_len(stacks); i++) {
		struct json_object *s = json_object_array_get_idx(stacks, i);

		spool_one(e, s, jx_u64(s, "id"), e->when);
		if (jx_obj(s, "before"))
			spool_one(e, jx_obj(s, "before"), jx_u64(s, "id"), "before");
	}
}

static void part_done(void *arg)
{
	struct evid_flows *e = arg;

	spool(e);
	if (e->mine) {
		e->mine--;
		if (*e->pending)
			(*e->pending)--;
	}
}

struct evid_flows *evid_flows_take(struct stall *st, uint64_t incident_id,
				   const char *const *ports, unsigned nports,
				   struct json_object *rec, const char *when,
				   const char *spool_dir, uint64_t inv_id, unsigned *pending,
				   const struct evid_flows *again)
{
	struct flow_src_ref *refs = calloc(MAX_REFS, sizeof(*refs));
	struct incident *inc = incident_id ? stall_incident(st, incident_id) : NULL;
	struct json_object *arr, *eng;
	struct evid_flows *e;
	unsigned n = 0;
	int rc;

	if (!refs)
		return NULL;
	if (inc) {
		struct json_object *ij = incident_json(inc, loop_mono_ns());

		int32_t pids[32];
		/* (only the Onload source takes evidence by process: the
		 * walk of every waiting flow is for it alone) */
		int by_pid = flowsrcs_host_open(stall_flowsrcs(st), FLOW_SRC_ONLOAD);
		unsigned np = by_pid ? stall_thread_called(st, pids, 16) : 0;

		n = refs_of(stall_flowsrcs(st), jx_arr(ij, "flows"), incident_id, ports, nports,
			    by_pid, refs, n);
		json_object_put(ij);
		/* and the processes whose thread the thread watch calls
		 * blocked, and the owners of the flows waiting on the
		 * incident's ports: their flows may join the incident after
		 * it opened on the other end's */
		if (by_pid)
			np += stall_waiting_pids(st, ports, nports, pids + np, 32 - np);
		/* and those of the earlier view again (after the stall the
		 * thread watch calls nobody and nothing waits) */
		for (unsigned i = 0; by_pid && again && i < again->npids && np < 32; i++) {
			int have = 0;

			for (unsigned k = 0; k < np && !have; k++)
				have = pids[k] == again->pids[i];
			if (!have)
				pids[np++] = again->pids[i];
		}
		for (unsigned i = 0; i < np && n < MAX_REFS; i++) {
			refs[n].src = FLOW_SRC_ENGINE;
			refs[n].session = 0;
			refs[n].pid = pids[i];
			n++;
		}
	} else {
		arr = stall_flows_json(st, NULL, 0, 0, NULL);
		n = refs_of(stall_flowsrcs(st), arr, 0, ports, nports, 0, refs, n);
		json_object_put(arr);
	}
	e = n ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		free(refs);
		return NULL;
	}
	e->fs = stall_flowsrcs(st);
	e->pending = pending;
	e->inv_id = inv_id;
	util_strlcpy(e->spool, spool_dir, sizeof(e->spool));
	util_strlcpy(e->when, when, sizeof(e->when));
	if (!(eng = jx_obj(rec, IR_ENGINES))) {
		eng = json_object_new_object();
		json_object_object_add(rec, IR_ENGINES, eng);
	}
	e->out = json_object_new_object();
	json_object_object_add(eng, when, json_object_get(e->out));
	json_object_object_add(e->out, "taken_mono_s", jx_new_fixed((double)loop_mono_ns() / 1e9, 6));
	for (unsigned i = 0; i < n; i++)
		if (refs[i].pid > 0)
			seen_pid(e, refs[i].pid);
	e->nseen = inc ? incident_nflows(inc) : 0;
	rc = flowsrcs_evidence(e->fs, refs, n, ports, nports, when, e->out, part_done, e);
	free(refs);
	e->mine = rc > 0 ? (unsigned)rc : 0;
	*pending += e->mine;
	spool(e);
	return e;
}

/* Append the entries of the array key of from to the one of to (made when
 * missing); an Onload stack already there (by id) is not listed twice. */
static void append(struct json_object *to, struct json_object *from, const char *key)
{
	struct json_object *src = jx_arr(from, key), *dst = jx_arr(to, key);

	if (!src)
		return;
	if (!dst) {
		json_object_object_add(to, key, json_object_get(src));
		return;
	}
	for (size_t i = 0; i < jx_len(src); i++) {
		struct json_object *x = json_object_array_get_idx(src, i);
		int dup = 0;

		for (size_t k = 0; !strcmp(key, "stacks") && k < jx_len(dst) && !dup; k++)
			dup = jx_u64(json_object_array_get_idx(dst, k), "id") == jx_u64(x, "id");
		if (!dup)
			json_object_array_add(dst, json_object_get(x));
	}
}

/* Is a stack of process pid among those dumped already? */
static int dumped_pid(struct json_object *stacks, int32_t pid)
{
	for (size_t i = 0; i < jx_len(stacks); i++)
		if (jx_u64(json_object_array_get_idx(stacks, i), "pid") == (uint64_t)pid)
			return 1;
	return 0;
}

unsigned evid_flows_follow(struct evid_flows *e, struct stall *st, struct incident *inc,
			   const char *const *ports, unsigned nports)
{
	struct flow_src_ref refs[MAX_PIDS];
	int32_t called[16];
	unsigned n = 0, nc, room;
	struct json_object *tmp, *have = jx_arr(jx_obj(e ? e->out : NULL, "onload"), "stacks");
	int rc;

	/* as many stacks as one take dumps (their work files are kept
	 * track of: 4 stacks' dumps and their "before") */
	if (!e || !inc || strcmp(e->when, "at_stall") ||
	    !flowsrcs_host_open(e->fs, FLOW_SRC_ONLOAD) ||
	    jx_len(have) >= FOLLOW_MAX_STACKS)
		return 0;
	/* a process's stacks are one each, mostly: one process a stack's
	 * room (the cap holds for the rest: append() lists a stack once) */
	room = FOLLOW_MAX_STACKS - (unsigned)jx_len(have);
	/* the flows that joined since, and the processes whose thread the
	 * thread watch calls blocked (only new processes: a stack is
	 * dumped once) */
	for (; e->nseen < incident_nflows(inc) && n < room; e->nseen++) {
		struct flow_src_ref r;

		if (incident_flow_ref(inc, e->nseen, &r) < 0 || r.pid <= 0 ||
		    dumped_pid(have, r.pid) || seen_pid(e, r.pid))
			continue;
		refs[n].src = r.src == FLOW_SRC_ONLOAD ? FLOW_SRC_ONLOAD : FLOW_SRC_ENGINE;
		refs[n].session = r.src == FLOW_SRC_ONLOAD ? r.session : 0;
		refs[n].pid = r.pid;
		n++;
	}
	nc = stall_thread_called(st, called, 16);
	for (unsigned i = 0; i < nc && n < room; i++) {
		if (called[i] <= 0 || dumped_pid(have, called[i]) || seen_pid(e, called[i]))
			continue;
		refs[n].src = FLOW_SRC_ENGINE;
		refs[n].session = 0;
		refs[n].pid = called[i];
		n++;
	}
	if (!n)
		return 0;
	tmp = json_object_new_object();
	rc = flowsrcs_evidence(e->fs, refs, n, ports, nports, e->when, tmp, part_done, e);
	json_object_object_foreach(tmp, name, part) {
		struct json_object *mine = jx_obj(e->out, name);
		struct json_object *stacks = jx_arr(part, "stacks");

		/* said on each entry: taken when its process came into the
		 * incident, not when it opened */
		for (size_t i = 0; i < jx_len(stacks); i++)
			jx_add_str(json_object_array_get_idx(stacks, i), "taken",
				   "when its process's flows joined the incident or the thread "
				   "watch called one of its threads, after the incident opened");
		if (!mine) {
			json_object_object_add(e->out, name, json_object_get(part));
			continue;
		}
		append(mine, part, "sockets");
		append(mine, part, "stacks");
	}
	json_object_put(tmp);
	if (rc > 0) {
		e->mine += (unsigned)rc;
		*e->pending += (unsigned)rc;
	}
	spool(e);
	return rc > 0 ? (unsigned)rc : 0;
}

void evid_flows_free(struct evid_flows *e)
{
	if (!e)
		return;
	if (e->mine) {
		flowsrcs_evidence_cancel(e->fs, e);
		*e->pending = *e->pending >= e->mine ? *e->pending - e->mine : 0;
	}
	for (unsigned i = 0; i < e->nfiles; i++)
		unlink(e->files[i]);
	json_object_put(e->out);
	free(e);
}

void evid_flows_files(struct json_object *rec,
		      void (*cb)(const char *path, const char *name, void *arg), void *arg)
{
	struct json_object *eng = jx_obj(rec, IR_ENGINES);

	if (!eng)
		return;
	json_object_object_foreach(eng, when, part) {
		struct json_object *stacks = jx_arr(jx_obj(part, "onload"), "stacks");

		for (size_t i = 0; i < jx_len(stacks); i++) {
			struct json_object *s = json_object_array_get_idx(stacks, i);
			struct json_object *dumps[2] = { s, jx_obj(s, "before") };

			for (int k = 0; k < 2; k++) {
				const char *path = jx_str(dumps[k], "file");
				char name[128];

				if (!path || !strchr(path, '/'))
					continue;
				/* the name inside the bundle: no user-controlled text */
				snprintf(name, sizeof(name), "engines/onload-stack%" PRIu64 "-%s.txt",
					 jx_u64(s, "id"), k ? "before" : !strcmp(when, "after") ?
					 "after" : "at_stall");
				jx_add_str(dumps[k], "bundle_file", name);
				cb(path, name, arg);
			}
		}
	}
}
