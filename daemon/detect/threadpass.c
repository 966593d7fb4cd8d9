/* threadpass: engine threads as a liveness input. See threadpass.h. */
#include "daemon/detect/threadpass.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/threads/threadwatch_api.h"
#include "daemon/conf.h"
#include "daemon/detect/liveness.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"

struct tp_pid {
	int32_t pid;
	uint64_t seen_ns;       /* the last poll that saw a flow of it */
	uint64_t poll_ns;       /* the poll wait_since and th belong to */
	uint64_t wait_since;    /* its flows' oldest wait this poll, 0 none */
	uint64_t th;            /* the least threshold of their ports */
	uint64_t stalled_since; /* the wait its last thread stall began with */
	int called;             /* a thread stall is being called (one log line) */
	int32_t called_tid;     /* the thread it was called on, */
	struct tj_result called_r;      /* how it was judged then, */
	uint64_t called_ns;     /* and when */
	int32_t called_stack;   /* its kernel stack at sleep then */
	uint64_t wait_end;      /* the first poll its flows no longer waited */
	int stuck;              /* a flow of it waits or is stalled this poll */
	uint64_t stuck_since;   /* the oldest wait of its waiting or stalled
				 * flows this poll, 0 none */
	uint64_t ep_since;      /* the same of the last poll it had one (kept
				 * after: an incident the flows opened reads
				 * its threads over that wait) */
	uint64_t ep_end;        /* the first poll after that without one */
};

struct tpass {
	struct threadwatch *tw;
	int mode;               /* enum conf_tw */
	int syscalls;           /* thread_watch_syscalls as applied (-1: not yet) */
	unsigned share;
	char off_why[320];      /* why it is off ("" while on) */
	struct tp_pid *p;
	unsigned np, cap, last;
	int changed;
	struct sflow **wq;      /* this poll's waiting flows of known owners */
	size_t wn, wcap;
	uint64_t threads_called, read_errors;
};

struct tpass *tpass_new(void)
{
	struct tpass *tp = calloc(1, sizeof(*tp));

	if (tp) {
		tp->mode = -1;
		tp->syscalls = -1;
	}
	return tp;
}

void tpass_free(struct tpass *tp)
{
	if (!tp)
		return;
	threadwatch_close(tp->tw);
	free(tp->p);
	free(tp->wq);
	free(tp);
}

/* thread_watch_syscalls onto an open watch (a change, or a new watch) */
static void tp_syscalls(struct tpass *tp, int on)
{
	char e[256];

	if (!tp->tw || on == tp->syscalls)
		return;
	tp->syscalls = on;
	if (threadwatch_syscalls(tp->tw, on, e, sizeof(e)) < 0) {
		log_warnx("thread watch: system calls not traced: %s; "
			  "thread_watch_syscalls = on, the switch watch runs without it", e);
		tp->syscalls = -1;      /* tried again at the next reload */
	} else if (on)
		log_info("thread watch: the watched threads' system calls traced "
			 "(every system call of the host pays for it)");
}

void tpass_configure(struct tpass *tp, const struct conf *c)
{
	tp->share = c->thread_share_pct;
	if (c->thread_watch == tp->mode) {
		tp_syscalls(tp, c->thread_syscalls);
		return;
	}
	tp->mode = c->thread_watch;
	if (tp->mode == CONF_TW_OFF) {
		threadwatch_close(tp->tw);
		tp->tw = NULL;
		tp->np = 0;
		tp->syscalls = -1;
		util_strlcpy(tp->off_why, "thread_watch = off", sizeof(tp->off_why));
		return;
	}
	if (tp->tw) {
		tp_syscalls(tp, c->thread_syscalls);
		return;
	}
	tp->tw = threadwatch_open(tp->off_why, sizeof(tp->off_why));
	if (tp->tw) {
		tp->off_why[0] = 0;
		tp->changed = 1;
		tp->syscalls = -1;
		log_info("thread watch: on (engine threads of the processes that own watched flows)");
		tp_syscalls(tp, c->thread_syscalls);
	} else if (tp->mode == CONF_TW_ON) {
		log_warnx("%s; thread_watch = on, the rest runs without it", tp->off_why);
	} else {
		log_info("%s; off (thread_watch = auto)", tp->off_why);
	}
}

static struct tp_pid *tp_find(struct tpass *tp, int32_t pid, int add)
{
	if (tp->last < tp->np && tp->p[tp->last].pid == pid)
		return &tp->p[tp->last];
	for (unsigned i = 0; i < tp->np; i++)
		if (tp->p[i].pid == pid) {
			tp->last = i;
			return &tp->p[i];
		}
	if (!add || tp->np >= TW_MAX_TGIDS)
		return NULL;
	if (tp->np == tp->cap) {
		unsigned nc = tp->cap ? tp->cap * 2 : 16;
		struct tp_pid *n = realloc(tp->p, nc * sizeof(*n));

		if (!n)
			return NULL;
		tp->p = n;
		tp->cap = nc;
	}
	memset(&tp->p[tp->np], 0, sizeof(tp->p[0]));
	tp->p[tp->np].pid = pid;
	tp->changed = 1;
	tp->last = tp->np;
	return &tp->p[tp->np++];
}

void tpass_observe(struct tpass *tp, struct sflow *f, uint64_t now, uint64_t th)
{
	struct tp_pid *p;

	if (!tp->tw || f->obs.pid <= 0)
		return;
	p = tp_find(tp, f->obs.pid, 1);
	if (!p)
		return;
	p->seen_ns = now;
	if (p->poll_ns != now) {
		p->poll_ns = now;
		p->wait_since = 0;
		p->stuck = 0;
		p->stuck_since = 0;
		p->th = th;
	}
	if (f->state == FLOW_WAITING || f->state == FLOW_STALLED) {
		p->stuck = 1;
		if (f->wait_since_ns && (!p->stuck_since || f->wait_since_ns < p->stuck_since))
			p->stuck_since = f->wait_since_ns;
	}
	if (th < p->th)
		p->th = th;
	if (f->state != FLOW_WAITING)
		return;
	if (!p->wait_since || f->wait_since_ns < p->wait_since)
		p->wait_since = f->wait_since_ns;
	if (tp->wn == tp->wcap) {
		size_t nc = tp->wcap ? tp->wcap * 2 : 256;
		struct sflow **n = realloc(tp->wq, nc * sizeof(*n));

		if (!n)
			return;
		tp->wq = n;
		tp->wcap = nc;
	}
	tp->wq[tp->wn++] = f;
}

struct tp_worst {
	struct tw_view v;
	int any;
};

static void worst_cb(const struct tw_view *v, void *arg)
{
	struct tp_worst *w = arg;

	if (v->r.stalled && (!w->any || v->r.share_pm > w->v.r.share_pm)) {
		w->v = *v;
		w->any = 1;
	}
}

void tpass_run(struct tpass *tp, uint64_t now, uint64_t poll_ns, tpass_stall_fn stall_fn,
	       void *arg)
{
	uint64_t min_th = UINT64_MAX;
	char err[256];

	if (!tp->tw)
		return;
	/* owners unseen for as long as a flow counts as closed */
	for (unsigned i = 0; i < tp->np;) {
		if (now - tp->p[i].seen_ns > LIVENESS_GONE_NS) {
			tp->p[i] = tp->p[--tp->np];
			tp->changed = 1;
		} else {
			if (tp->p[i].th && tp->p[i].th < min_th)
				min_th = tp->p[i].th;
			i++;
		}
	}
	if (tp->changed) {
		int32_t pids[TW_MAX_TGIDS] = { 0 };

		for (unsigned i = 0; i < tp->np; i++)
			pids[i] = tp->p[i].pid;
		threadwatch_set(tp->tw, pids, tp->np);
		tp->changed = 0;
	}
	if (threadwatch_read(tp->tw, now, min_th == UINT64_MAX ? poll_ns : min_th / 16, err,
			     sizeof(err)) < 0) {
		if (!tp->read_errors++)
			log_warnx("%s", err);
		tp->wn = 0;
		return;
	}
	for (unsigned i = 0; i < tp->np; i++) {
		struct tp_pid *p = &tp->p[i];
		struct tp_worst w = { .any = 0 };

		/* the wait the call was for ended: none of its flows waits or
		 * is stalled any more */
		if (p->called_tid && !p->wait_end && (p->poll_ns != now || !p->stuck))
			p->wait_end = now;
		/* an episode: from its oldest wait until a poll finds none
		 * stuck; a flow that recovers meanwhile does not move its
		 * start */
		if (p->poll_ns == now && p->stuck_since) {
			if (!p->ep_since || p->ep_end) {
				p->ep_since = p->stuck_since;
				p->ep_end = 0;
			} else if (p->stuck_since < p->ep_since) {
				p->ep_since = p->stuck_since;
			}
		} else if (p->ep_since && !p->ep_end) {
			p->ep_end = now;
		}
		if (p->poll_ns != now || !p->wait_since) {
			p->called = 0;
			continue;
		}
		if (!threadwatch_judge(tp->tw, p->pid, p->th, tp->share, p->wait_since, poll_ns,
				       worst_cb, &w)) {
			p->called = 0;
			continue;
		}
		if (!p->called) {
			p->called = 1;
			p->stalled_since = p->wait_since;
			p->called_tid = w.v.tid;
			p->called_r = w.v.r;
			p->called_ns = now;
			p->called_stack = w.v.stack_id;
			p->wait_end = 0;
			tp->threads_called++;
			log_info("thread watch: pid %d thread %d %s: off CPU of its own accord "
				 "%u.%u%% of the last %" PRIu64 " ms (%" PRIu64 " voluntary, %" PRIu64
				 " involuntary switches) while its flows wait: they are stalled",
				 (int)p->pid, (int)w.v.tid, tj_verdict_name(w.v.r.verdict),
				 w.v.r.share_pm / 10, w.v.r.share_pm % 10, w.v.r.window_ns / 1000000,
				 w.v.r.nvcsw, w.v.r.nivcsw);
		}
		for (size_t k = 0; k < tp->wn; k++)
			if (tp->wq[k]->obs.pid == p->pid && tp->wq[k]->state == FLOW_WAITING)
				stall_fn(tp->wq[k], arg);
	}
	tp->wn = 0;
}

unsigned tpass_called(const struct tpass *tp, int32_t *pids, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; tp->tw && i < tp->np && n < max; i++)
		if (tp->p[i].called)
			pids[n++] = tp->p[i].pid;
	return n;
}

void tpass_status(const struct tpass *tp, struct json_object *out)
{
	struct json_object *o = json_object_new_object();

	if (tp->tw) {
		threadwatch_status(tp->tw, o);
		jx_add_u64(o, "stalls_called", tp->threads_called);
		jx_add_int(o, "sleep_share_pct", (int)tp->share);
	} else {
		jx_add_bool(o, "on", 0);
		jx_add_str(o, "why_off", tp->off_why);
	}
	json_object_object_add(out, "thread_watch", o);
}

/* The thread the watch called the stall on: how it judged it then (the
 * evidence is read later, when the thread may run again). */
static void tp_mark_called(struct tpass *tp, const struct tp_pid *p, struct json_object *arr)
{
	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		char stack[4096];

		if (jx_u64(o, "tid") != (uint64_t)p->called_tid)
			continue;
		/* where it slept when it was called (it may sleep elsewhere
		 * by now: back in epoll_wait once the wait ended) */
		if (threadwatch_stack(tp->tw, p->called_stack, stack, sizeof(stack)) >= 0)
			jx_add_str(o, "stack_at_call", stack);
		jx_add_bool(o, "called", 1);
		jx_add_str(o, "verdict_at_call", tj_verdict_name(p->called_r.verdict));
		jx_add_double(o, "off_cpu_share_at_call", p->called_r.share_pm / 1000.0);
		jx_add_u64(o, "window_at_call_ns", p->called_r.window_ns);
		jx_add_u64(o, "voluntary_switches_at_call", p->called_r.nvcsw);
		jx_add_u64(o, "called_mono_ns", p->called_ns);
	}
}

struct json_object *tpass_evidence(struct tpass *tp, int32_t pid, uint64_t since_ns)
{
	struct json_object *arr;
	struct tp_pid *p;

	if (!tp->tw || !(p = tp_find(tp, pid, 0)))
		return NULL;
	/* over the wait the stall was called for: from its start to its end
	 * (when it ended before the evidence is read); when the watch called
	 * none (the flows opened the incident first), over its flows' last
	 * wait */
	if (since_ns)
		arr = threadwatch_evidence(tp->tw, pid, since_ns, 0, p->th ? p->th : 200000000ull);
	else if (p->stalled_since && p->ep_since <= p->stalled_since)
		arr = threadwatch_evidence(tp->tw, pid, p->stalled_since, p->wait_end,
					   p->th ? p->th : 200000000ull);
	else
		arr = threadwatch_evidence(tp->tw, pid, p->ep_since, p->ep_end,
					   p->th ? p->th : 200000000ull);
	if (arr && p->called_tid && p->stalled_since)
		tp_mark_called(tp, p, arr);
	return arr;
}
