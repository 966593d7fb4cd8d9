/* flow_src_onload: flow_src_onload_ops ("onload", host scope), the sockets
 * of Onload stacks from the installed tools (collectors/flow_onload.h
 * parses and judges them).
 *
 * Tools, run through ctx->run (no shell, fixed environment, timeout,
 * output cap; the loop watches them, nothing here waits):
 *  - poll: `orm_json stack stats` (sockets, stack state with its clock, and
 *    the ci_netif_stats counters; read without the stack lock), or, where
 *    orm_json is not installed, `onload_stackdump --nolock --nopids lots`
 *    (every stack, sequence numbers and queues in text; --nopids: no
 *    process environment is printed at all). At most one run at a time, one every
 *    interval_ns (default 1 s), each with TOOL_TIMEOUT_NS and the
 *    FLOW_ONLOAD_MAX_TEXT cap.
 *  - evidence: `onload_stackdump --nolock --nopids <id> lots` of each
 *    involved stack (at most MAX_EVID_STACKS), EVID_TIMEOUT_NS, EVID_MAX
 *    bytes, the "process env" section scrubbed (flow_onload_scrub) before
 *    the text leaves this file. Never onload_tcpdump, never an operation
 *    that takes the stack lock.
 * ctx->tools_dir (configured) names the directory of both tools; else they
 * are looked up in the runner's fixed PATH. When neither is there the
 * source says so and looks again every FIND_RETRY_NS.
 *
 * Between runs the last observations are emitted again, a stale "progress"
 * as "idle". A stack's sockets are assigned to ports by the detector, by
 * local address (host scope). */
#include "collectors/flow_onload.h"
#include "collectors/flowsel.h"
#include "collectors/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#define DEF_INTERVAL_NS 1000000000ull
#define TOOL_TIMEOUT_NS 2000000000ull
#define FIND_RETRY_NS 60000000000ull
#define EVID_TIMEOUT_NS 2000000000ull
#define EVID_MAX (8u << 20)
#define MAX_EVID_STACKS 4
#define MAX_EVID_SOCKS 64

enum mode { M_FIND = 0, M_ORM, M_LOTS, M_NONE };

struct otrk {
	int stack, sock;
	struct flow_key key;
	struct flow_onload_sock s;
	struct flow_onload_track t;
	struct flow_obs o;
	int fresh;
};

struct osrc;
struct ejob {                   /* one evidence stackdump */
	struct ejob *next;
	struct osrc *src;
	void *job;
	int stack;
	struct json_object *entry;  /* referenced */
	flow_src_evid_done_fn done;
	void *arg;
};

struct osrc {
	const struct flow_src_runner *run;
	char dir[PATH_MAX];         /* tools dir, "" the runner's PATH */
	char tool[2][PATH_MAX + 32];        /* orm_json, onload_stackdump */
	enum mode mode, trying;
	uint64_t interval_ns, last_start_ns, find_ns, job_start_ns;
	void *job;
	struct flow_onload_dump d;  /* the last good dump */
	struct otrk *trk;
	unsigned ntrk;
	struct ejob *ejobs;
	uint64_t runs, failures, cost_ns, last_cost_ns, parse_ns;
	char version[32];
	char err[256];
};

static const char *mode_tool(const struct osrc *o, enum mode m)
{
	return m == M_ORM ? o->tool[0] : o->tool[1];
}

static void set_err(struct flow_src *s, struct osrc *o, const char *fmt, const char *a,
		    const char *b)
{
	util_errf(o->err, sizeof(o->err), fmt, a, b);
	util_strlcpy(s->err, o->err, sizeof(s->err));
}

/* A parsed dump: trackers follow (stack, socket, addresses); sockets gone
 * are forgotten. now: when the run started (the values' time). */
static void absorb(struct osrc *o, uint64_t now)
{
	struct otrk *nt = calloc(o->d.nsocks ? o->d.nsocks : 1, sizeof(*nt));
	unsigned n = 0;

	if (!nt)
		return;
	for (unsigned i = 0; i < o->d.nsocks; i++) {
		const struct flow_onload_sock *k = &o->d.socks[i];
		struct flow_key key = { .saddr = k->laddr, .daddr = k->raddr, .sport = k->lport,
					.dport = k->rport, .proto = k->proto };

		for (unsigned j = 0; j < o->ntrk; j++)
			if (o->trk[j].stack == k->stack_id && o->trk[j].sock == k->sock_id &&
			    !memcmp(&o->trk[j].key, &key, sizeof(key))) {
				nt[n].t = o->trk[j].t;
				break;
			}
		nt[n].stack = k->stack_id;
		nt[n].sock = k->sock_id;
		nt[n].key = key;
		nt[n].s = *k;
		flow_onload_obs(k, flow_onload_stack(&o->d, k->stack_id), &nt[n].t, now, &nt[n].o);
		nt[n].fresh = 1;
		n++;
	}
	free(o->trk);
	o->trk = nt;
	o->ntrk = n;
}

static void start(struct flow_src *s, struct osrc *o, uint64_t now);

static void poll_done(const struct flow_src_run_result *r, void *arg)
{
	struct flow_src *s = arg;
	struct osrc *o = s->priv;
	enum mode m = o->trying;
	char e[256];
	int rc;

	o->job = NULL;
	o->runs++;
	o->last_cost_ns = r->cost_ns;
	o->cost_ns += r->cost_ns;
	if (r->not_found) {
		/* orm_json missing: stackdump next; both missing: none */
		if (m == M_ORM) {
			o->trying = M_LOTS;
			o->mode = M_FIND;
			start(s, o, loop_mono_ns());
			return;
		}
		o->mode = M_NONE;
		o->find_ns = loop_mono_ns();
		set_err(s, o, "Onload tools not installed: neither %s nor %s found "
			"(set onload_tools in [daemon] if they live elsewhere)", o->tool[0], o->tool[1]);
		return;
	}
	o->mode = m;
	if (!r->ok || r->truncated) {
		o->failures++;
		util_errf(e, sizeof(e), "%s: %s%s%.120s", mode_tool(o, m),
			  r->truncated ? "output over the limit" : r->error[0] ? r->error : "failed",
			  r->len ? ": " : "", r->len ? r->out : "");
		for (char *c = e; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		set_err(s, o, "%s%s", e, "");
		return;
	}
	{
		uint64_t t0 = loop_mono_ns();

		rc = m == M_ORM ? flow_onload_parse_json(r->out, r->len, &o->d, e, sizeof(e)) :
				  flow_onload_parse_lots(r->out, r->len, &o->d, e, sizeof(e));
		o->parse_ns = loop_mono_ns() - t0;
	}
	if (rc < 0) {
		o->failures++;
		set_err(s, o, "%s: %s", mode_tool(o, m), e);
		return;
	}
	util_strlcpy(o->version, o->d.version, sizeof(o->version));
	o->err[0] = s->err[0] = '\0';
	absorb(o, o->job_start_ns);
}

static void start(struct flow_src *s, struct osrc *o, uint64_t now)
{
	/* --nopids: without it stack_lots() ends each stack with the pids'
	 * environments (libstack.c process_dump), values raw, which could
	 * forge the next stack's lines for the parser */
	static const char *const orm[] = { NULL, "stack", "stats", NULL, NULL };
	static const char *const lots[] = { NULL, "--nolock", "--nopids", "lots", NULL };
	const char *argv[5];
	enum mode m = o->mode == M_FIND ? o->trying : o->mode;
	char e[256];

	memcpy(argv, m == M_ORM ? orm : lots, sizeof(argv));
	argv[0] = mode_tool(o, m);
	o->trying = m;
	o->last_start_ns = o->job_start_ns = now;
	o->job = o->run->start(o->run->ctx, argv, -1, TOOL_TIMEOUT_NS, FLOW_ONLOAD_MAX_TEXT,
			       poll_done, s, e, sizeof(e));
	if (!o->job) {
		o->failures++;
		set_err(s, o, "%s: %s", argv[0], e);
	}
}

static int os_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct osrc *o = s->priv;
	uint64_t now = loop_mono_ns();
	int n = 0;

	if (!o)
		return -EBADF;
	if (o->mode == M_NONE && now - o->find_ns >= FIND_RETRY_NS) {
		o->mode = M_FIND;
		o->trying = M_ORM;
	}
	if (!o->job && o->mode != M_NONE &&
	    (!o->last_start_ns || now - o->last_start_ns >= o->interval_ns))
		start(s, o, now);
	/* the next run, or look for the tools again; a run's result waits
	 * for the next poll (the verdicts carry their own times) */
	s->next_ns = flow_src_next_min(flow_src_idle_next(s),
				       o->mode == M_NONE ? o->find_ns + FIND_RETRY_NS :
				       o->last_start_ns + o->interval_ns);
	for (unsigned i = 0; i < o->ntrk; i++) {
		struct flow_obs ob = o->trk[i].o;

		if (!o->trk[i].fresh && flow_live_of(&ob) == FLOW_LIVE_PROGRESS)
			ob.live = FLOW_LIVE_IDLE + 1;
		o->trk[i].fresh = 0;
		emit(&ob, arg);
		n++;
	}
	return o->err[0] ? -EIO : n;
}

static int os_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct osrc *o;

	s->err[0] = '\0';
	s->ops = &flow_src_onload_ops;
	if (!ctx || !ctx->run || !ctx->run->start) {
		util_errf(s->err, sizeof(s->err), "onload: no way to run the Onload tools");
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o || flow_onload_dump_init(&o->d) < 0) {
		free(o);
		util_errf(s->err, sizeof(s->err), "onload: out of memory");
		return -ENOMEM;
	}
	o->run = ctx->run;
	if (ctx->tools_dir && *ctx->tools_dir)
		util_strlcpy(o->dir, ctx->tools_dir, sizeof(o->dir));
	snprintf(o->tool[0], sizeof(o->tool[0]), "%s%sorm_json", o->dir, o->dir[0] ? "/" : "");
	snprintf(o->tool[1], sizeof(o->tool[1]), "%s%sonload_stackdump", o->dir,
		 o->dir[0] ? "/" : "");
	o->interval_ns = ctx->interval_ns ? ctx->interval_ns : DEF_INTERVAL_NS;
	o->mode = M_FIND;
	o->trying = M_ORM;
	s->priv = o;
	return 0;
}

/* ---- evidence ---- */

static void ejob_unlink(struct osrc *o, struct ejob *j)
{
	for (struct ejob **pp = &o->ejobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			return;
		}
}

/* The counters of seed 001's table, as the scrubbed lots text gives them. */
static void lots_counters(const char *text, size_t len, int stack, struct json_object *entry)
{
	static const char *const names[] = {
		"tcp_send_nonb_pool_empty", "tcp_send_ni_lock_contends", "lock_wakes",
		"pkt_bufs_free", "nonb_pool", "pkt_wait_spin", "unlock_slow_pkt_waiter",
		"defer_work_limited", "time_stuck",
	};
	struct flow_onload_dump d;
	const struct flow_onload_stack *st;
	struct json_object *c;
	char e[200];
	uint64_t v;

	if (flow_onload_dump_init(&d) < 0)
		return;
	if (flow_onload_parse_lots(text, len, &d, e, sizeof(e)) == 0 &&
	    (st = flow_onload_stack(&d, stack))) {
		c = json_object_new_object();
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (flow_onload_counter(st, names[i], &v) == 1)
				jx_add_u64(c, names[i], v);
		json_object_object_add(entry, "counters", c);
	}
	flow_onload_dump_free(&d);
}

static void evid_done(const struct flow_src_run_result *r, void *arg)
{
	struct ejob *j = arg;
	char *clean;
	size_t n = 0;

	ejob_unlink(j->src, j);
	jx_add_double(j->entry, "run_ms", (double)r->cost_ns / 1e6);
	if (r->truncated)
		jx_add_bool(j->entry, "truncated", 1);
	if (!r->ok)
		jx_add_str(j->entry, "error", r->error[0] ? r->error : "failed");
	clean = flow_onload_scrub(r->out ? r->out : "", r->len, &n);
	if (clean) {
		json_object_object_add(j->entry, "lots", json_object_new_string_len(clean, (int)n));
		lots_counters(clean, n, j->stack, j->entry);
		free(clean);
	}
	json_object_put(j->entry);
	j->done(j->arg);
	free(j);
}

static struct json_object *sock_json(const struct otrk *t)
{
	const struct flow_onload_sock *k = &t->s;
	struct json_object *o = json_object_new_object();
	char tuple[160];

	flow_key_format(&t->key, tuple, sizeof(tuple));
	jx_add_int(o, "stack", k->stack_id);
	jx_add_int(o, "socket", k->sock_id);
	jx_add_str(o, "tuple", tuple);
	jx_add_int(o, "pid", k->pid);
	jx_add_u64(o, "tcp_state", (uint64_t)k->lstate);
	if (k->have & FLOW_ONLOAD_HAVE_SEQ) {
		jx_add_u64(o, "snd_nxt", k->snd_nxt);
		jx_add_u64(o, "snd_una", k->snd_una);
		jx_add_u64(o, "snd_max", k->snd_max);
	}
	if (k->have & FLOW_ONLOAD_HAVE_RCV) {
		jx_add_u64(o, "rcv_added", k->rcv_added);
		jx_add_u64(o, "rcv_delivered", k->rcv_delivered);
	}
	jx_add_u64(o, "send_in", k->send_in);
	jx_add_u64(o, "send_out", k->send_out);
	jx_add_u64(o, "sendq_pkts", k->sendq_pkts);
	if (k->have & FLOW_ONLOAD_HAVE_SENDQ_B)
		jx_add_u64(o, "sendq_bytes", k->sendq_bytes);
	jx_add_u64(o, "recvq_pkts", k->recvq_pkts);
	jx_add_u64(o, "retrans_pkts", k->retrans_pkts);
	jx_add_u64(o, "total_retrans", k->total_retrans);
	jx_add_int(o, "so_error", k->so_error);
	jx_add_u64(o, "inflight", t->o.inflight);
	jx_add_u64(o, "unread", t->o.unread);
	jx_add_u64(o, "unsent", t->o.unsent);
	jx_add_str(o, "verdict", flow_live_name((enum flow_live)t->t.live.verdict));
	return o;
}

static int os_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg)
{
	struct osrc *o = s->priv;
	struct json_object *socks = json_object_new_array(), *stacks = json_object_new_array();
	int ids[MAX_EVID_STACKS], nids = 0, pending = 0;

	(void)when;
	for (unsigned i = 0; o && i < o->ntrk; i++) {
		int mine = 0;

		for (unsigned r = 0; r < n && !mine; r++)
			mine = refs[r].src == FLOW_SRC_ONLOAD && refs[r].session == o->trk[i].o.session;
		if (!mine)
			continue;
		if (json_object_array_length(socks) < MAX_EVID_SOCKS)
			json_object_array_add(socks, sock_json(&o->trk[i]));
		int have = 0;

		for (int k = 0; k < nids; k++)
			have |= ids[k] == o->trk[i].stack;
		if (!have && nids < MAX_EVID_STACKS)
			ids[nids++] = o->trk[i].stack;
	}
	if (o) {
		jx_add_str(out, "tool", o->mode == M_ORM ? "orm_json" : o->mode == M_LOTS ?
			   "onload_stackdump" : "none");
		jx_add_str(out, "onload_version", o->version);
	}
	json_object_object_add(out, "sockets", socks);
	json_object_object_add(out, "stacks", stacks);
	for (int k = 0; o && k < nids; k++) {
		const struct flow_onload_stack *st = flow_onload_stack(&o->d, ids[k]);
		struct json_object *entry = json_object_new_object();
		struct ejob *j = calloc(1, sizeof(*j));
		char id[16], e[256], cmd[PATH_MAX + 96];
		const char *argv[] = { o->tool[1], "--nolock", "--nopids", id, "lots", NULL };

		snprintf(id, sizeof(id), "%d", ids[k]);
		jx_add_int(entry, "id", ids[k]);
		if (st) {
			jx_add_str(entry, "name", st->name);
			if (st->pid)
				jx_add_int(entry, "pid", st->pid);
			if (st->ncounters) {
				struct json_object *c = json_object_new_object();

				for (unsigned i = 0; i < st->ncounters; i++)
					jx_add_u64(c, st->counters[i].name, st->counters[i].value);
				json_object_object_add(entry, "poll_counters", c);
			}
		}
		snprintf(cmd, sizeof(cmd), "%s --nolock --nopids %s lots", o->tool[1], id);
		jx_add_str(entry, "command", cmd);
		json_object_array_add(stacks, entry);
		if (!j)
			continue;
		j->src = o;
		j->stack = ids[k];
		j->entry = json_object_get(entry);
		j->done = done;
		j->arg = arg;
		j->job = o->run->start(o->run->ctx, argv, -1, EVID_TIMEOUT_NS, EVID_MAX, evid_done,
				       j, e, sizeof(e));
		if (!j->job) {
			jx_add_str(entry, "error", e);
			json_object_put(j->entry);
			free(j);
			continue;
		}
		j->next = o->ejobs;
		o->ejobs = j;
		pending++;
	}
	return pending;
}

static void os_evidence_cancel(struct flow_src *s, void *arg)
{
	struct osrc *o = s->priv;

	for (struct ejob **pp = o ? &o->ejobs : NULL; pp && *pp;) {
		struct ejob *j = *pp;

		if (j->arg != arg) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		o->run->cancel(o->run->ctx, j->job);
		json_object_put(j->entry);
		free(j);
	}
}

static void os_status(const struct flow_src *s, struct json_object *out)
{
	const struct osrc *o = s->priv;

	if (!o)
		return;
	jx_add_str(out, "tool", o->mode == M_ORM ? o->tool[0] : o->mode == M_LOTS ? o->tool[1] :
		   o->mode == M_NONE ? "none" : "looking");
	jx_add_str(out, "onload_version", o->version);
	jx_add_ms(out, "interval_ms", o->interval_ns);
	jx_add_u64(out, "stacks", o->d.nstacks);
	jx_add_u64(out, "sockets", o->ntrk);
	jx_add_u64(out, "runs", o->runs);
	jx_add_u64(out, "failures", o->failures);
	jx_add_double(out, "last_run_ms", (double)o->last_cost_ns / 1e6);
	jx_add_double(out, "mean_run_ms", o->runs ? (double)o->cost_ns / 1e6 / (double)o->runs : 0);
	jx_add_double(out, "last_parse_us", (double)o->parse_ns / 1e3);
	if (o->err[0])
		jx_add_str(out, "error", o->err);
}

static void os_close(struct flow_src *s)
{
	struct osrc *o = s->priv;

	if (!o)
		return;
	if (o->job)
		o->run->cancel(o->run->ctx, o->job);
	while (o->ejobs) {
		struct ejob *j = o->ejobs;

		o->ejobs = j->next;
		o->run->cancel(o->run->ctx, j->job);
		jx_add_str(j->entry, "error", "the Onload source closed before the dump ended");
		json_object_put(j->entry);
		j->done(j->arg);
		free(j);
	}
	flow_onload_dump_free(&o->d);
	free(o->trk);
	free(o);
	s->priv = NULL;
}

const struct flow_src_ops flow_src_onload_ops = {
	.name = "onload",
	.kind = FLOW_SRC_ONLOAD,
	.host = 1,
	.open = os_open,
	.poll = os_poll,
	.status = os_status,
	.evidence = os_evidence,
	.evidence_cancel = os_evidence_cancel,
	.close = os_close,
};
