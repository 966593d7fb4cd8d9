/* timeline: a record's steps, in the order they began: each its name, its
 * port (if any), its start and end as CLOCK_MONOTONIC ns and as ms from
 * the record's origin, its outcome ("running" until it ends) and a note.
 * The investigation's (forensic.c and its parts, through inv_step_begin)
 * and a peer's snapshot's (peersnap.c) alike. No I/O; the clock is an
 * argument. */
#ifndef NICSTALL_TIMELINE_H
#define NICSTALL_TIMELINE_H

#include <stdint.h>

struct json_object;

/* ms from origin to t (negative before it) */
double steps_rel_ms(uint64_t origin, uint64_t t);
/* A step begun at now: its index in steps. */
int steps_begin(struct json_object *steps, uint64_t origin, uint64_t now, const char *name,
		const char *port);
/* Step idx ended at now with outcome (and note, NULL or "": none); an
 * index that is not there is ignored. */
void steps_end(struct json_object *steps, uint64_t origin, uint64_t now, int idx,
	       const char *outcome, const char *note);

#endif
