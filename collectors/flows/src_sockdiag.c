/* flow_sockdiag_src: kernel TCP sockets as a flow source (flowsrc.h, port
 * scope), on flow_sockdiag's poll. */
#include "collectors/flows/flow_sockdiag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/util.h"

struct sd_src {
	struct sockdiag *sd;
	struct flow_sel *sel;
	unsigned nsel;
};

static void sd_src_close(struct flow_src *s)
{
	struct sd_src *p = s->priv;

	if (!p)
		return;
	sockdiag_close(p->sd);
	free(p->sel);
	free(p);
	s->priv = NULL;
}

static int sd_src_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct sockdiag_opts o;
	struct sd_src *p;

	s->err[0] = '\0';
	s->ops = &flow_src_sock_ops;
	if (!ctx || (ctx->nsel && !ctx->sel)) {
		util_errf(s->err, sizeof(s->err), "sock_diag: invalid arguments");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || (ctx->nsel && !(p->sel = calloc(ctx->nsel, sizeof(*p->sel))))) {
		free(p);
		util_errf(s->err, sizeof(s->err), "sock_diag: out of memory");
		return -ENOMEM;
	}
	if (ctx->nsel)
		memcpy(p->sel, ctx->sel, ctx->nsel * sizeof(*p->sel));
	p->nsel = ctx->nsel;
	sockdiag_opts_default(&o);
	o.no_events = ctx->sock_paced;
	o.events_tracepoints = ctx->sock_events_any;
	p->sd = sockdiag_open_opts(ctx->netns_fd, &o, s->err, sizeof(s->err));
	if (!p->sd) {
		int e = errno ? errno : EIO;

		free(p->sel);
		free(p);
		return -e;
	}
	s->priv = p;
	return 0;
}

static int sd_src_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct sd_src *p = s->priv;
	int n;

	if (!p) {
		util_errf(s->err, sizeof(s->err), "sock_diag: source not open");
		return -EBADF;
	}
	sockdiag_set_pace(p->sd, s->sched.stall_ns, s->sched.poll_ns, s->sched.refresh_ns);
	sockdiag_set_wanted(p->sd, s->sched.wanted_ns);
	sockdiag_set_slack(p->sd, s->sched.slack_ns);
	n = sockdiag_poll(p->sd, p->sel, p->nsel, emit, arg, s->err, sizeof(s->err));
	if (n >= 0 && sockdiag_last_unread(p->sd))
		s->sched.skipped = 1;         /* paced: some sockets left for later */
	/* the first socket due, or the next look for new ones */
	s->sched.next_ns = n >= 0 ? sockdiag_next_ns(p->sd) : 0;
	return n;
}

static void sd_src_status(const struct flow_src *s, struct json_object *out)
{
	const struct sd_src *p = s->priv;
	struct sockdiag_stats st;

	if (!p)
		return;
	sockdiag_stats(p->sd, &st);
	jx_add_u64(out, "sockets", st.known);
	if (st.untracked)
		jx_add_u64(out, "untracked", st.untracked);
	jx_add_u64(out, "dumps", st.dumps);
	/* discoveries left out: the namespace opened no TCP connection */
	jx_add_u64(out, "dumps_skipped", st.discover_skipped);
	jx_add_bool(out, "opens_gate", st.opens_gate);
	jx_add_u64(out, "lookups", st.lookups);
	jx_add_u64(out, "reads", st.reads);
	jx_add_u64(out, "paced", st.paced);
	/* polls that looked at every socket's due time (none while the
	 * least due is ahead) */
	jx_add_u64(out, "due_walks", st.due_walks);
	jx_add_bool(out, "kernel_filter", st.kernel_filter);
	jx_add_str(out, "between_dumps", st.reader ? "BPF socket reader" : "sock_diag lookups");
	if (!st.reader && st.reader_why[0])
		jx_add_str(out, "reader", st.reader_why);
	/* the kernel-event watch: its sockets and the wakeups it caused */
	jx_add_str(out, "mode", st.events ? "kernel events" : "paced reads");
	if (!st.events && st.events_why[0])
		jx_add_str(out, "events", st.events_why);
	if (st.events) {
		jx_add_str(out, "hooks", st.events_sockops ? "sockops" : "tracepoints");
		if (!st.events_sockops && st.hooks_why[0])
			jx_add_str(out, "sockops", st.hooks_why);
	}
	jx_add_u64(out, "watched", st.registered);
	if (st.reg_retries)
		jx_add_u64(out, "watch_retries", st.reg_retries);
	if (st.enrol_refused)
		jx_add_u64(out, "callbacks_refused", st.enrol_refused);
	/* sock_liveness = auto: sockets too busy for the callbacks, read on
	 * their pace until idle (now, and hand-backs since the start) */
	if (st.events && st.events_sockops && (st.busy_now || st.busy_handed)) {
		jx_add_u64(out, "busy_paced", st.busy_now);
		jx_add_u64(out, "busy_handed_back", st.busy_handed);
		jx_add_u64(out, "busy_returned", st.busy_back);
		/* the longest of their holds now (doubled for a socket
		 * handed back again soon after its return) */
		jx_add_u64(out, "busy_hold_s", st.busy_hold_max / 1000000000ull);
	}
	jx_add_u64(out, "event_wakeups", st.events_n);
	jx_add_u64(out, "event_reads", st.event_reads);
	jx_add_u64(out, "loss_reads", st.loss_reads);
	jx_add_u64(out, "holds", st.holds);
	jx_add_u64(out, "kernel_held", st.kernel_held);
	jx_add_u64(out, "quiet_reads", st.quiet_reads);
	jx_add_u64(out, "state_reads", st.state_reads);
	json_object_object_add(out, "dump_us", jx_new_fixed((double)st.dump_ns / 1e3, 1));
	json_object_object_add(out, "lookup_us", jx_new_fixed((double)st.lookup_ns / 1e3, 2));
}

static int sd_src_fd(const struct flow_src *s)
{
	const struct sd_src *p = s->priv;

	return p ? sockdiag_fd(p->sd) : -1;
}

/* Deadlines the kernel posted: the sockets fall due, the detector polls. */
static void sd_src_handle(struct flow_src *s)
{
	struct sd_src *p = s->priv;

	if (p && sockdiag_handle(p->sd))
		s->wake = 1;
}

const struct flow_src_ops flow_src_sock_ops = {
	.name = "sock",
	.kind = FLOW_SRC_SOCK,
	.host = 0,
	.open = sd_src_open,
	.poll = sd_src_poll,
	.fd = sd_src_fd,
	.handle = sd_src_handle,
	.status = sd_src_status,
	.close = sd_src_close,
};
