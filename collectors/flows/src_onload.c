/* flow_src_onload: flow_src_onload_ops ("onload", host scope), the sockets
 * of Onload stacks from the installed tools (collectors/flows/onload_parse.h
 * parses and judges them).
 *
 * Tools, run through ctx->run (no shell, fixed environment, timeout,
 * output cap; the loop watches them, nothing here waits):
 *  - poll: `orm_json stack stats opts` (sockets, stack state with its
 *    clock, the ci_netif_stats counters and the stack's options; read
 *    without the stack lock), or, where
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
 *  - the record's method (seed 001): a dump before, during and after the
 *    stall, each with when the tool ran. "Before" is the last periodic
 *    poll that showed the stack (a ring of one per stack: its values, its
 *    lots text in stackdump mode, the run's start and end), handed over
 *    with its age when the stall is called; "during" is the evidence
 *    run at the call ("at_stall"), "after" the one at the end of the
 *    investigation. Each carries start_mono_ns/end_mono_ns
 *    (CLOCK_MONOTONIC: the run's start, and its start plus the runner's
 *    wall time to its exit) and the same on CLOCK_REALTIME.
 * ctx->tools_dir (configured) names the directory of both tools; else they
 * are looked up in the runner's fixed PATH. When neither is there the
 * source says so and looks again every FIND_RETRY_NS.
 *
 * Between runs the last observations are emitted again, a stale "progress"
 * as "idle". A stack's sockets are assigned to ports by the detector, by
 * local address (host scope). */
#include "collectors/flows/onload_parse.h"
#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#define DEF_INTERVAL_NS 1000000000ull
#define TOOL_TIMEOUT_NS 2000000000ull
#define FIND_RETRY_NS 60000000000ull
#define EVID_TIMEOUT_NS 2000000000ull
#define EVID_MAX (8u << 20)
#define MAX_EVID_STACKS 4
#define MAX_EVID_SOCKS 64
#define BEFORE_MAX (1u << 20)           /* lots text kept per stack */
#define BEFORE_TOTAL (8u << 20)         /* ... and for all stacks */

enum mode { M_FIND = 0, M_ORM, M_LOTS, M_NONE };

struct otrk {
	int stack, sock;
	struct flow_key key;
	struct flow_onload_sock s;
	struct flow_onload_track t;
	struct flow_obs o;
	int fresh;
};

/* The last periodic dump of a stack: the "before" of an incident. */
struct before {
	int id, used;
	uint64_t t0, t1, r0, r1;    /* the run: start, end (mono, real) */
	enum mode tool;
	struct json_object *vals;   /* {counters, opts} (record_json) */
	char *text;                 /* its lots text (stackdump mode), or NULL */
	size_t len;
	const char *no_text;        /* why there is none */
};

struct osrc;
struct ejob {                   /* one evidence stackdump */
	struct ejob *next;
	struct osrc *src;
	void *job;
	int stack;
	uint64_t t0, r0;            /* when it started (mono, real) */
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
	struct before before[FLOW_ONLOAD_MAX_STACKS];
	size_t before_bytes;
	uint64_t job_start_real;
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
		nt[n].o.data_ns = now;
		nt[n].fresh = 1;
		n++;
	}
	free(o->trk);
	o->trk = nt;
	o->ntrk = n;
}

/* The values of seed 001's table and the record's "what it is not"
 * checks, as the lots text (or orm_json stats) gives them: counters of
 * ci_netif_stats (stats_def.h, printed by stats_dump.h ci_dump_stats()),
 * the pkt_bufs levels of netif_debug.c ci_netif_dump_pkt_summary(),
 * nonb_pool of ci_netif_dump_extra_to_logger() (a boolean:
 * ci_netif_pkt_nonb_pool_not_empty()), time_stuck. A value the dump did
 * not print is left out: absent, never 0. */
static const char *const record_counters[] = {
	"lock_wakes", "tcp_send_ni_lock_contends", "tcp_send_nonb_pool_empty",
	"pkt_bufs_free", "pkt_bufs_alloc", "pkt_bufs_max", "nonb_pool", "pkt_wait_spin",
	"pkt_wait_primes", "unlock_slow_pkt_waiter", "reap_buf_limited", "refill_rx_limited",
	"refill_buf_limited", "defer_work_limited", "defer_work_contended_unsafe",
	"stack_lock_buzz", "time_stuck",
};

/* {counters: {...}, opts: {EF_...}} of a parsed stack into e. */
static void record_json(const struct flow_onload_stack *st, struct json_object *e)
{
	struct json_object *c = json_object_new_object(), *op = json_object_new_object();
	uint64_t v;

	for (size_t i = 0; i < sizeof(record_counters) / sizeof(record_counters[0]); i++)
		if (flow_onload_counter(st, record_counters[i], &v) == 1)
			jx_add_u64(c, record_counters[i], v);
	for (unsigned i = 0; i < st->nopts; i++)
		jx_add_u64(op, st->opts[i].name, st->opts[i].value);
	json_object_object_add(e, "counters", c);
	json_object_object_add(e, "opts", op);
}

/* "2026-09-18T10:02:11.123456Z" of a CLOCK_REALTIME time. */
static void add_utc(struct json_object *o, const char *key, uint64_t real_ns)
{
	char b[48], f[64];
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm))
		return;
	snprintf(f, sizeof(f), "%s.%06uZ", b, (unsigned)(real_ns % 1000000000ull / 1000));
	jx_add_str(o, key, f);
}

/* A dump's times: its tool's run from t0 to t1 (mono) and r0 to r1 (real). */
static void add_times(struct json_object *e, uint64_t t0, uint64_t t1, uint64_t r0,
		      uint64_t r1)
{
	jx_add_u64(e, "start_mono_ns", t0);
	jx_add_u64(e, "end_mono_ns", t1);
	jx_add_u64(e, "start_real_ns", r0);
	jx_add_u64(e, "end_real_ns", r1);
	add_utc(e, "start_utc", r0);
	add_utc(e, "end_utc", r1);
}

/* The stacks' parts of lots text, in one pass: each from the "====" line
 * before its "...: stack=ID" header (stack_lots() prints one first) to
 * the next "====" line or the end. At most FLOW_ONLOAD_MAX_STACKS. */
struct slice {
	int id;
	size_t off, n;
};

static unsigned stack_slices(const char *text, size_t len, struct slice *sl)
{
	size_t p = 0, sep = 0;
	unsigned n = 0;
	int open = 0;

	while (p < len) {
		size_t e = p, l;
		int sid;
		const char *h;

		while (e < len && text[e] != '\n')
			e++;
		l = e - p;
		if (l >= 4 && !memcmp(text + p, "====", 4)) {
			if (open) {
				sl[n - 1].n = p - sl[n - 1].off;
				open = 0;
			}
			sep = p;
		} else if (!open && n < FLOW_ONLOAD_MAX_STACKS && text[p] != ' ' &&
			   (h = memmem(text + p, l, ": stack=", 8)) && sscanf(h + 8, "%d", &sid) == 1) {
			sl[n].id = sid;
			sl[n++].off = sep;
			open = 1;
		}
		p = e < len ? e + 1 : len;
	}
	if (open)
		sl[n - 1].n = len - sl[n - 1].off;
	return n;
}

/* After a good poll: each stack's slot takes this run's values (and, in
 * stackdump mode, its scrubbed text, within BEFORE_MAX / BEFORE_TOTAL). A
 * stack the run did not show keeps its older slot; over
 * FLOW_ONLOAD_MAX_STACKS slots the oldest goes. */
static void keep_before(struct osrc *o, enum mode m, const char *out, size_t len, uint64_t t1,
			uint64_t r1)
{
	struct slice sl[FLOW_ONLOAD_MAX_STACKS];
	unsigned nsl = m == M_LOTS ? stack_slices(out, len, sl) : 0;

	for (unsigned i = 0; i < o->d.nstacks; i++) {
		const struct flow_onload_stack *st = &o->d.stacks[i];
		struct before *b = NULL, *old = &o->before[0];
		const struct slice *x = NULL;
		size_t n;

		for (unsigned k = 0; k < FLOW_ONLOAD_MAX_STACKS && !b; k++) {
			if (o->before[k].used && o->before[k].id == st->id)
				b = &o->before[k];
			else if (!o->before[k].used || (old->used && o->before[k].t1 < old->t1))
				old = &o->before[k];
		}
		if (!b)
			b = old;
		json_object_put(b->vals);
		if (b->text)
			o->before_bytes -= b->len;
		free(b->text);
		memset(b, 0, sizeof(*b));
		b->used = 1;
		b->id = st->id;
		b->t0 = o->job_start_ns;
		b->t1 = t1;
		b->r0 = o->job_start_real;
		b->r1 = r1;
		b->tool = m;
		b->vals = json_object_new_object();
		record_json(st, b->vals);
		if (m != M_LOTS) {
			b->no_text = "orm_json polls print no stackdump text (nor the "
				     "pkt_bufs levels and nonb_pool)";
			continue;
		}
		for (unsigned k = 0; k < nsl && !x; k++)
			if (sl[k].id == st->id)
				x = &sl[k];
		if (!x) {
			b->no_text = "the stack's part of the poll's text was not found";
			continue;
		}
		n = x->n;
		if (n > BEFORE_MAX || o->before_bytes + n > BEFORE_TOTAL) {
			b->no_text = "the stack's text is over the limit kept between polls";
			continue;
		}
		b->text = flow_onload_scrub(out + x->off, n, &b->len);
		if (b->text)
			o->before_bytes += b->len;
		else
			b->no_text = "out of memory";
	}
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
	{
		uint64_t t0 = loop_mono_ns();

		keep_before(o, m, r->out, r->len, o->job_start_ns + r->cost_ns,
			    o->job_start_real + r->cost_ns);
		o->parse_ns += loop_mono_ns() - t0;
	}
}

static void start(struct flow_src *s, struct osrc *o, uint64_t now)
{
	/* --nopids: without it stack_lots() ends each stack with the pids'
	 * environments (libstack.c process_dump), values raw, which could
	 * forge the next stack's lines for the parser */
	static const char *const orm[] = { NULL, "stack", "stats", "opts", NULL };
	static const char *const lots[] = { NULL, "--nolock", "--nopids", "lots", NULL };
	const char *argv[5];
	enum mode m = o->mode == M_FIND ? o->trying : o->mode;
	char e[256];

	memcpy(argv, m == M_ORM ? orm : lots, sizeof(argv));
	argv[0] = mode_tool(o, m);
	o->trying = m;
	o->last_start_ns = o->job_start_ns = now;
	o->job_start_real = loop_real_ns();
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
	s->sched.next_ns = flow_src_next_min(flow_src_idle_next(s),
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

/* The values of the record's table and options, as the scrubbed lots
 * text gives them (record_json); a text cut inside a line says so. */
static void lots_counters(const char *text, size_t len, int stack, struct json_object *entry)
{
	struct flow_onload_dump d;
	const struct flow_onload_stack *st;
	char e[200];

	if (flow_onload_dump_init(&d) < 0)
		return;
	if (flow_onload_parse_lots(text, len, &d, e, sizeof(e)) < 0)
		jx_add_str(entry, "parse_error", e);
	else if (!(st = flow_onload_stack(&d, stack)))
		jx_add_str(entry, "parse_error", "the stack is not in its dump");
	else
		record_json(st, entry);
	if (d.cut)
		jx_add_bool(entry, "cut", 1);
	flow_onload_dump_free(&d);
}

static void evid_done(const struct flow_src_run_result *r, void *arg)
{
	struct ejob *j = arg;
	char *clean;
	size_t n = 0;

	ejob_unlink(j->src, j);
	json_object_object_add(j->entry, "run_ms", jx_new_fixed((double)r->cost_ns / 1e6, 3));
	add_times(j->entry, j->t0, j->t0 + r->cost_ns, j->r0, j->r0 + r->cost_ns);
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

/* entry.before: stack id's last periodic dump, its age at now. */
static void add_before(const struct osrc *o, int id, uint64_t now, struct json_object *entry)
{
	const struct before *b = NULL;
	struct json_object *e = json_object_new_object();

	for (unsigned k = 0; k < FLOW_ONLOAD_MAX_STACKS && !b; k++)
		if (o->before[k].used && o->before[k].id == id)
			b = &o->before[k];
	jx_add_str(e, "dump", "before");
	if (!b) {
		jx_add_str(e, "error", "no periodic poll showed this stack");
		json_object_object_add(entry, "before", e);
		return;
	}
	jx_add_str(e, "from", b->tool == M_ORM ? "orm_json stack stats opts (the periodic poll)" :
		   "onload_stackdump --nolock --nopids lots (the periodic poll)");
	add_times(e, b->t0, b->t1, b->r0, b->r1);
	json_object_object_add(e, "age_ms", jx_new_fixed(now > b->t1 ?
		(double)(now - b->t1) / 1e6 : 0, 3));
	json_object_object_foreach(b->vals, key, v)
		json_object_object_add(e, key, json_object_get(v));
	if (b->text)
		json_object_object_add(e, "lots", json_object_new_string_len(b->text, (int)b->len));
	else
		jx_add_str(e, "no_text", b->no_text ? b->no_text : "none kept");
	json_object_object_add(entry, "before", e);
}

static int os_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg)
{
	struct osrc *o = s->priv;
	struct json_object *socks = json_object_new_array(), *stacks = json_object_new_array();
	int ids[MAX_EVID_STACKS], nids = 0, pending = 0, during = when && !strcmp(when, "at_stall");
	uint64_t now = loop_mono_ns();

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
	/* the stacks of the processes of the stalled flows, whatever their
	 * source: an engine thread blocked on its stack's lock leaves its
	 * Onload sockets looking idle (seed 001); its stack's counters tell */
	for (unsigned k = 0; o && k < o->d.nstacks; k++) {
		const struct flow_onload_stack *st = &o->d.stacks[k];
		int mine = 0, have = 0;

		for (unsigned r = 0; r < n && !mine; r++)
			mine = st->pid > 0 && refs[r].pid == st->pid;
		for (int i = 0; i < nids; i++)
			have |= ids[i] == st->id;
		if (mine && !have && nids < MAX_EVID_STACKS)
			ids[nids++] = st->id;
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
		jx_add_str(entry, "dump", during ? "during" : "after");
		if (during)
			add_before(o, ids[k], now, entry);
		if (st) {
			jx_add_str(entry, "name", st->name);
			if (st->pid)
				jx_add_int(entry, "pid", st->pid);
		}
		snprintf(cmd, sizeof(cmd), "%s --nolock --nopids %s lots", o->tool[1], id);
		jx_add_str(entry, "command", cmd);
		json_object_array_add(stacks, entry);
		if (!j)
			continue;
		j->src = o;
		j->stack = ids[k];
		j->t0 = loop_mono_ns();
		j->r0 = loop_real_ns();
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
	for (unsigned k = 0; k < FLOW_ONLOAD_MAX_STACKS; k++) {
		json_object_put(o->before[k].vals);
		free(o->before[k].text);
	}
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
