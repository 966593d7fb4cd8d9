/* srcrun: the flow sources' way to run external tools (flowsrc.h
 * struct flow_src_runner) on probes/probe_exec: no shell, fixed
 * environment, own process group, timeout, capped output, watched by the
 * loop. */
#include "daemon/detect/srcrun.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/probe_exec.h"

#include <limits.h>
#include <stdlib.h>

/* The flow sources' tools are Onload's orm_json and onload_stackdump (the
 * only users of this runner): uid 0, no capability, no new privileges.
 * They open /dev/onload (root's, mode 0666 by default: onload_sysconfig
 * ONLOAD_USER=root ONLOAD_MODE=666 in scripts/onload_misc, applied by
 * 82-onload.rules), attach to each stack by id (OO_IOC_..._LOOKUP_AND_ATTACH:
 * oo_priv_lookup_and_attach_stack -> efab_thr_table_lookup with
 * EFAB_THR_TABLE_LOOKUP_CHECK_USER), where efab_thr_user_can_access_stack()
 * (src/lib/efthrm/tcp_helper_resource.c) lets real uid 0 map any stack: a
 * uid test, not a capability, and then mmap the stack's and the control
 * plane's memory read-only (cp_mmap_mib: CAP_NET_ADMIN only for a writable
 * mapping). The capability-checked ioctls (oo_ioctl_debug_op: CAP_SYS_ADMIN)
 * are the orphan-stack ("-z") dumps and kill, never run here. Without
 * CAP_SYS_PTRACE stackdump's /proc walk for a stack's pids skips other
 * users' processes (libstack_mappings_init: EACCES is skipped); the
 * readers take each socket's pid from the stack itself. */
/* uid 0 without a capability still owns every root-owned file and may
 * signal the daemon (same uid, kernel/signal.c kill_ok_by_cred): each tool
 * runs in a mount namespace of its own where the daemon's directories and
 * control socket (srcrun_configure) are empty and read-only, and the
 * control socket refuses root's commands to a client without capabilities
 * (daemon/ctl.c ctl_access_for). */
static char hidden[SRCRUN_HIDE_MAX][PATH_MAX];
static const char *hidden_v[SRCRUN_HIDE_MAX + 1];
static struct probe_exec_cred tool_cred = {
	.priv = PROBE_EXEC_ROOT_NOCAPS, .hide = hidden_v,
};

void srcrun_configure(const char *const *hide, uint64_t data_max)
{
	size_t n = 0;

	for (size_t i = 0; hide && hide[i] && n < SRCRUN_HIDE_MAX; i++)
		if (hide[i][0] && util_strlcpy(hidden[n], hide[i], PATH_MAX) < PATH_MAX)
			hidden_v[n] = hidden[n], n++;
	hidden_v[n] = NULL;
	tool_cred.data_max = data_max;
}

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
	j->pe = probe_exec_start(ctx, argv, &tool_cred, nsfd, timeout_ns, max_output, run_done,
				 j, err, errlen);
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
