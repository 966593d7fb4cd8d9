/* srcrun: external tools for the flow sources (collectors/flowsrc.h struct
 * flow_src_runner), run by probes/probe_exec in the daemon's loop. */
#ifndef NICSTALL_SRCRUN_H
#define NICSTALL_SRCRUN_H

#include "collectors/flowsrc.h"

struct loop;

/* Fill r with the runner of loop l (r->ctx is l). */
void srcrun_init(struct flow_src_runner *r, struct loop *l);

#endif
