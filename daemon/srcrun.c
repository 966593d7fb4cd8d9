/* srcrun: the flow sources' way to run external tools (flowsrc.h
 * struct flow_src_runner) on probes/probe_exec: no shell, fixed
 * environment, own process group, timeout, capped output, watched by the
 * loop. */
#include "daemon/srcrun.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_exec.h"

#include <stdlib.h>

struct runjob {
	struct probe_exec *pe;
	flow_src_run_fn done;
	void *arg;
};

static void run_done(struct probe_exec *pe, void *arg)
{
	struct runjob *j = arg;
	const struct probe_exec_result *r = probe_exec_result(pe);
	struct flow_src_run_result rr = {
		.ok = r->exited && r->status == 0 && !r->timed_out,
		.not_found = r->not_found, .timed_out = r->timed_out, .truncated = r->truncated,
		.out = r->out ? r->out : "", .len = r->out_len, .error = r->error,
		.cost_ns = r->end_ns - r->start_ns,
	};
	char why[64] = "";

	if (!rr.ok && !r->error[0]) {
		if (r->timed_out)
			util_errf(why, sizeof(why), "timed out and was killed");
		else if (r->signaled)
			util_errf(why, sizeof(why), "killed by signal %d", r->signo);
		else
			util_errf(why, sizeof(why), "exit status %d", r->status);
		rr.error = why;
	}
	j->done(&rr, j->arg);
	probe_exec_free(pe);
	free(j);
}

static void *run_start(void *ctx, const char *const *argv, int nsfd, uint64_t timeout_ns,
		       size_t max_output, flow_src_run_fn done, void *arg, char *err,
		       size_t errlen)
{
	struct runjob *j = calloc(1, sizeof(*j));

	if (!j) {
		util_errf(err, errlen, "%s: out of memory", argv[0]);
		return NULL;
	}
	j->done = done;
	j->arg = arg;
	j->pe = probe_exec_start(ctx, argv, nsfd, timeout_ns, max_output, run_done, j, err,
				 errlen);
	if (!j->pe) {
		free(j);
		return NULL;
	}
	return j;
}

static void run_cancel(void *ctx, void *job)
{
	struct runjob *j = job;

	(void)ctx;
	if (!j)
		return;
	probe_exec_free(j->pe);
	free(j);
}

void srcrun_init(struct flow_src_runner *r, struct loop *l)
{
	*r = (struct flow_src_runner){ run_start, run_cancel, l };
}
