/* probe_exec_int.h: what probe_exec.c (the parent: fork, output, reaping,
 * the result) and probe_exec_child.c (after fork: privileges, limits, the
 * paths hidden, exec) share, private to them: the child's steps, and the
 * report it writes on its pipe when one fails. */
#ifndef NICSTALL_PROBE_EXEC_INT_H
#define NICSTALL_PROBE_EXEC_INT_H

#include "probes/probe_exec.h"

enum {
	ST_SETSIG = 1, ST_SETNS, ST_FDS, ST_EXEC,
	/* dropping privileges, in this order (drop_privileges) */
	ST_GROUPS, ST_GID, ST_BSET, ST_AMBIENT, ST_UID, ST_CAPS, ST_NNP, ST_VERIFY,
	/* before them: limits (set_limits), the Onload tools' view (hide_paths) */
	ST_LIMITS, ST_OOM, ST_MNTNS, ST_HIDE,
};

/* Written on the report pipe by a child whose step failed, then _exit. */
struct child_report {
	int stage;
	int err;
	int idx;                /* ST_HIDE: which of hide */
};

/* After fork, in the child: its steps in order, then exec path with argv
 * in a fixed environment; a failed step is reported on errw's pipe as a
 * child_report and the child exits 127. Never returns. */
__attribute__((noreturn))
void probe_exec_child(const char *path, char *const *argv, const struct probe_exec_cred *cred,
		      char *const *hide, int nsfd, int nul, int outw, int errw);

#endif
