/* srcrun: external tools for the flow sources (collectors/flows/flowsrc.h struct
 * flow_src_runner), run by probes/probe_exec in the daemon's loop. */
#ifndef NICSTALL_SRCRUN_H
#define NICSTALL_SRCRUN_H

#include "collectors/flows/flowsrc.h"

#include <stdint.h>

struct loop;

/* Fill r with the runner of loop l (r->ctx is l). */
void srcrun_init(struct flow_src_runner *r, struct loop *l);

/* What Onload's tools (uid 0, no capability) must not see or touch: the
 * daemon's directories and its control socket, each covered in the tools'
 * own mount namespace (probes/probe_exec.h cred.hide; at most
 * SRCRUN_HIDE_MAX, "" entries skipped; copied), and their RLIMIT_DATA.
 * Call at start and on each reload. */
#define SRCRUN_HIDE_MAX 8
void srcrun_configure(const char *const *hide, uint64_t data_max);

#endif
