/* evid_flows: the evidence of the readers of unmodified engines (Onload,
 * VMA/XLIO, RDMA QPs) for an investigation, at the stall and after it:
 * each source's own view of the involved sockets or QPs (flowsrcs.h
 * flowsrcs_evidence), into the record under IR_ENGINES.WHEN. The Onload
 * stackdump texts (scrubbed of process environments by the source) are
 * large: each is written to a work file under spool_dir and the record
 * names it ({"file", "bytes"}); the bundle writer copies it into the bundle
 * (engines/...) and removes it (evid_flows_files). */
#ifndef NICSTALL_EVID_FLOWS_H
#define NICSTALL_EVID_FLOWS_H

#include <stddef.h>
#include <stdint.h>

struct stall;
struct json_object;
struct evid_flows;

/* Take the views now (when: "at_stall" or "after") of the flows of
 * incident incident_id (0: every waiting or stalled flow of the ports
 * named in ports[0..nports)). Parts that run a tool finish later: *pending
 * is raised by their number now and lowered as each ends (it must outlive
 * the collection). The processes again names (the view at the stall, for
 * the one after it; NULL: none) are taken too. NULL when there is nothing
 * to take (no such flow) or out of memory. */
struct evid_flows *evid_flows_take(struct stall *st, uint64_t incident_id,
				   const char *const *ports, unsigned nports,
				   struct json_object *rec, const char *when,
				   const char *spool_dir, uint64_t inv_id, unsigned *pending,
				   const struct evid_flows *again);
/* The processes that came into incident inc after e was taken
 * ("at_stall" only): the owners of the flows that joined it since, and of
 * the threads the thread watch calls blocked. Their Onload stacks are
 * dumped as e's were and listed with e's (each once), marked as taken
 * later. An engine's flows may join an incident that opened on the other
 * end's port first (seed 001 emulated: the client's flows waited first).
 * Returns the number of parts started (*pending raised by it). */
struct incident;
unsigned evid_flows_follow(struct evid_flows *e, struct stall *st, struct incident *inc,
			   const char *const *ports, unsigned nports);
/* Stop what still runs (*pending is lowered for it), remove the work files
 * left over, free. NULL is fine. */
void evid_flows_free(struct evid_flows *e);

/* The work files the engines section of rec names: cb(path, bundle name)
 * for each ("engines/onload-stack2-at_stall.txt"). */
void evid_flows_files(struct json_object *rec,
		      void (*cb)(const char *path, const char *name, void *arg), void *arg);

#endif
