/* facts: investigation record -> rule facts. */
#include "daemon/forensic/facts.h"
#include "collectors/counters/ident.h"
#include "daemon/conf.h"
#include "daemon/hostfacts.h"
#include "daemon/forensic/onloadfacts.h"
#include "daemon/peers/peermsg.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/record.h"
#include "daemon/recorder.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *facts_counter_name(const char *source, const char *name, char *buf, size_t len)
{
	if (!strcmp(source, "netdev")) {
		snprintf(buf, len, FACTS_NETDEV_PREFIX "%s", name);
		return buf;
	}
	return name;
}

/* The recorder sample of port p taken last at or before t (NULL: none). */
static const struct rec_sample *sample_before(const struct recorder *rec, uint64_t t,
					      unsigned *idx)
{
	unsigned f, l;

	if (!rec_window(rec, 0, t, &f, &l))
		return NULL;
	*idx = l;
	return rec_get(rec, l);
}

/* Counter deltas from recorder sample s to the snapshot values snap
 * ({source: {name: value}}), merged into one name space. */
static struct json_object *stall_deltas(const struct port *p, const struct rec_sample *s,
					struct json_object *snap)
{
	struct json_object *out = json_object_new_object();

	for (unsigned i = 0; i < port_nsrc(p); i++) {
		const struct rec_part *pt = &s->part[i];
		const char *src = port_src_name(p, i);
		struct json_object *vals;
		char nb[320];

		if (!pt->lay || !src)
			continue;
		vals = jx_get(snap, src);
		if (!vals || jx_get(vals, "error"))
			continue;
		for (unsigned k = 0; k < pt->lay->n; k++) {
			struct json_object *v = jx_get(vals, pt->lay->names[k]);

			if (!v)
				continue;
			jx_add_u64(out, facts_counter_name(src, pt->lay->names[k], nb, sizeof(nb)),
				   cnt_delta(pt->vals[k], (uint64_t)json_object_get_uint64(v),
					     pt->lay->width[k], NULL));
		}
	}
	return out;
}

struct dctx {
	struct json_object *out;
	const char *src;
};

static void delta_cb(const char *name, uint64_t delta, unsigned flags, uint64_t last, void *arg)
{
	struct dctx *d = arg;
	char nb[320];

	(void)flags;
	(void)last;
	jx_add_u64(d->out, facts_counter_name(d->src, name, nb, sizeof(nb)), delta);
}

struct json_object *facts_window_deltas(const struct port *p, unsigned first, unsigned last)
{
	const struct recorder *r = port_recorder(p);
	struct json_object *out = json_object_new_object();

	for (unsigned i = 0; i < port_nsrc(p); i++) {
		struct dctx d = { out, port_src_name(p, i) };

		if (d.src)
			rec_deltas(r, i, first, last, delta_cb, &d);
	}
	return out;
}

static struct json_object *period(double span, struct json_object *counters)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, FK_SPAN_S, jx_new_fixed(span, 6));
	json_object_object_add(o, FK_COUNTERS, counters);
	return o;
}

static struct json_object *merged(struct json_object *bysrc)
{
	struct json_object *out = json_object_new_object();
	char nb[320];

	if (!json_object_is_type(bysrc, json_type_object))
		return out;
	json_object_object_foreach(bysrc, src, vals) {
		if (!json_object_is_type(vals, json_type_object))
			continue;
		json_object_object_foreach(vals, name, v)
			json_object_object_add(out, facts_counter_name(src, name, nb, sizeof(nb)),
					       json_object_get(v));
	}
	return out;
}

/* The RFC 2819 length buckets of mlx5's ethtool -S (en_stats.c
 * pport_2819_stats_desc): those that can hold a frame longer than a port of
 * MTU mtu accepts (MLX5E_SW2HW_MTU: mtu + Ethernet header, VLAN tag, FCS),
 * wholly above it, and counted frames in the observation window (the stall's period where
 * there is none), "2048-4095 bytes: 7", largest first; NULL when none did. */
static struct json_object *oversize_sizes(struct json_object *po, int mtu)
{
	static const struct { const char *name; unsigned lo, hi; } b[] = {
		{ "rx_8192_to_10239_bytes_phy", 8192, 10239 },
		{ "rx_4096_to_8191_bytes_phy", 4096, 8191 },
		{ "rx_2048_to_4095_bytes_phy", 2048, 4095 },
		{ "rx_1519_to_2047_bytes_phy", 1519, 2047 },
		{ "rx_1024_to_1518_bytes_phy", 1024, 1518 },
		{ "rx_512_to_1023_bytes_phy", 512, 1023 },
		{ "rx_256_to_511_bytes_phy", 256, 511 },
	};
	/* the observation window's: the stall's period begins at the sample
	 * before the flows stopped, which may hold their last good frames */
	struct json_object *cn = jx_get(jx_get(po, FK_PER_WINDOW), FK_COUNTERS);
	char out[256];
	size_t n = 0;

	if (!cn)
		cn = jx_get(jx_get(po, FK_PER_STALL), FK_COUNTERS);
	if (mtu <= 0 || !cn)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		uint64_t d = jx_u64(cn, b[i].name);
		int w;

		/* only buckets wholly above it: one that straddles the
		 * largest frame the port takes also holds good frames */
		if (b[i].lo <= (unsigned)mtu + 22 || !d)
			continue;
		w = snprintf(out + n, sizeof(out) - n, "%s%u-%u bytes: %" PRIu64, n ? ", " : "",
			     b[i].lo, b[i].hi, d);
		if (w < 0 || (size_t)w >= sizeof(out) - n)
			break;
		n += (size_t)w;
	}
	return n ? json_object_new_string(out) : NULL;
}

/* The link's changes the snapshot recorded (evid_link_json "events"), as
 * "srv down at +12 ms and up at +113 ms" from when the first flow stopped;
 * NULL when there were none. */
static struct json_object *link_times(const char *port, struct json_object *events,
				      uint64_t stall_ns)
{
	char out[256];
	size_t n;
	int prev = -1, nev = 0;

	n = (size_t)snprintf(out, sizeof(out), "%.64s", port);
	for (size_t i = 0; i < jx_len(events); i++) {
		struct json_object *e = json_object_array_get_idx(events, i);
		int on = jx_bool(e, "up") && jx_bool(e, "running");
		double ms = ((double)jx_u64(e, "mono_ns") - (double)stall_ns) / 1e6;
		int w;

		if (on == prev)
			continue;
		prev = on;
		w = snprintf(out + n, sizeof(out) - n, "%s%s at %+.0f ms", nev ? " and " : " ",
			     on ? "up" : "down", ms);
		if (w < 0 || (size_t)w >= sizeof(out) - n)
			break;
		n += (size_t)w;
		nev++;
	}
	return nev ? json_object_new_string(out) : NULL;
}

static void port_facts(const struct ports *ps, struct json_object *rec, const char *name,
		       uint64_t stall_ns, struct json_object *ports)
{
	const struct port *p = ports_find(ps, name);
	struct json_object *po, *snap, *link, *win;
	const struct rec_sample *s;
	const struct recorder *r;
	unsigned idx = 0;
	uint64_t snap_ns = jx_u64(rec, IR_OPENED_MONO);

	if (!p)
		return;
	r = port_recorder(p);
	po = json_object_new_object();
	jx_add_str(po, FK_P_PROFILE, conf_profile_name(port_profile(p)));
	snap = jx_get(jx_get(jx_get(rec, IR_SNAPSHOT), name), IR_S_COUNTERS);
	link = jx_get(jx_get(jx_get(rec, IR_SNAPSHOT), name), IR_S_LINK);
	jx_add_str(po, FK_P_DRIVER, port_ident(p)->driver);
	jx_add_str(po, FK_P_FIRMWARE, port_ident(p)->fw_version);
	jx_add_str(po, FK_P_PSID, port_ident(p)->psid);
	if (port_ident(p)->pfc_prevention[0])
		jx_add_str(po, FK_P_PFC_PREVENTION, port_ident(p)->pfc_prevention);
	if (link && jx_get(link, "up"))
		jx_add_bool(po, FK_P_LINK_UP, jx_bool(link, "up") && jx_bool(link, "running"));
	if (link && jx_get(link, "mtu"))
		jx_add_int(po, FK_P_MTU, (int)jx_u64(link, "mtu"));
	{
		struct json_object *lt = link_times(name, jx_get(link, "events"), stall_ns);

		if (lt)
			json_object_object_add(po, FK_P_LINK_EVENTS, lt);
	}
	/* across the stall: last sample before it began -> snapshot at t0 */
	s = snap ? sample_before(r, stall_ns, &idx) : NULL;
	if (s)
		json_object_object_add(po, FK_PER_STALL, period((double)(snap_ns - s->mono_ns) / 1e9,
								stall_deltas(p, s, snap)));
	/* the healthy period before the stall */
	if (s && idx > 0) {
		unsigned f, l;
		uint64_t from = s->mono_ns > FACTS_BASELINE_NS ? s->mono_ns - FACTS_BASELINE_NS : 0;

		/* after the last investigation here: an earlier stall's lost
		 * frames are no healthy rate (port-drop read a run's one
		 * lost frame as within it: make check-repeat) */
		if (port_disturbed(p) > from && port_disturbed(p) < s->mono_ns)
			from = port_disturbed(p);

		if (rec_window(r, from, s->mono_ns, &f, &l) >= 2) {
			struct json_object *c = facts_window_deltas(p, f, l);

			json_object_object_add(po, FK_PER_BASELINE, period(
				(double)(rec_get(r, l)->mono_ns - rec_get(r, f)->mono_ns) / 1e9, c));
		}
	}
	win = jx_get(jx_get(rec, IR_WINDOW), name);
	if (win)
		json_object_object_add(po, FK_PER_WINDOW, period(
			jx_double(jx_get(rec, IR_WINDOW), "span_s", 0), merged(jx_get(win, "deltas"))));
	if (win && jx_get(win, "held_deltas"))
		json_object_object_add(po, FK_PER_HELD, period(
			jx_double(jx_get(jx_get(rec, IR_WINDOW), "held"), "span_s", 0),
			merged(jx_get(win, "held_deltas"))));
	{
		struct json_object *sz = oversize_sizes(po, (int)jx_u64(link, "mtu"));

		if (sz)
			json_object_object_add(po, FK_P_OVERSIZE_SIZES, sz);
	}
	json_object_object_add(ports, name, po);
}

static struct json_object *flow_facts(struct json_object *rec, struct json_object *fl)
{
	struct json_object *flows = json_object_new_object(), *held = json_object_new_object();
	struct json_object *list = json_object_new_array();
	uint64_t hu = 0, hr = 0, hs = 0, opened = jx_u64(rec, IR_OPENED_MONO);

	for (size_t i = 0; i < jx_len(fl); i++) {
		struct json_object *x = json_object_array_get_idx(fl, i), *e = json_object_new_object();
		/* kernel TCP bytes not yet sent behind unacknowledged ones wait
		 * for the network, not for the engine: not held */
		uint64_t unsent = jx_u64(x, "inflight") ? 0 : jx_u64(x, "unsent");

		hu += unsent;
		hr += jx_u64(x, "unread");
		hs += jx_u64(x, "staged");
		jx_copy(e, FK_FL_TUPLE, x, "tuple");
		jx_copy(e, FK_FL_SRC, x, "source");
		/* signed: a flow that joined after the investigation opened
		 * waited less than nothing at its start */
		json_object_object_add(e, FK_FL_WAITED_MS, jx_new_fixed(
			((double)opened - (double)jx_u64(x, "stalled_at_mono_ns")) / 1e6, 3));
		jx_add_u64(e, FK_H_UNSENT, unsent);
		if (jx_u64(x, "inflight"))
			jx_add_u64(e, FK_FL_INFLIGHT, jx_u64(x, "inflight"));
		jx_add_u64(e, FK_H_UNREAD, jx_u64(x, "unread"));
		jx_add_u64(e, FK_H_STAGED, jx_u64(x, "staged"));
		json_object_array_add(list, e);
	}
	jx_add_u64(held, FK_H_UNSENT, hu);
	jx_add_u64(held, FK_H_UNREAD, hr);
	jx_add_u64(held, FK_H_STAGED, hs);
	/* connections, not flow records: both ends of one connection are
	 * one stalled flow (the siblings are counted per connection too) */
	jx_add_int(flows, FK_F_STALLED, (int64_t)jx_conn_count(fl, "tuple"));
	json_object_object_add(flows, FK_F_PROGRESSING,
			       json_object_get(jx_get(jx_get(rec, IR_INCIDENT), "siblings_progressing")));
	json_object_object_add(flows, FK_F_HELD, held);
	json_object_object_add(flows, FK_F_LIST, list);
	/* counted at the end of the observation window, for the flows whose
	 * source publishes it; absent (unknown) otherwise */
	if (jx_get(jx_get(jx_get(rec, IR_WINDOW), "flows"), "retrans"))
		jx_add_u64(flows, FK_F_RETRANS, jx_u64(jx_get(jx_get(rec, IR_WINDOW), "flows"), "retrans"));
	return flows;
}

/* The kernel function a symbolised stack sleeps in ("schedule+0x23/0xa0\n
 * futex_do_wait+0x46/0x90\n..." -> "futex_do_wait"), into buf: the first
 * frame that is not the scheduler's own (schedule, schedule_timeout,
 * schedule_hrtimeout_range_clock, io_schedule, preempt_schedule...). */
static void sleep_func(const char *stack, char *buf, size_t len)
{
	static const char *const sched[] = { "schedule", "__schedule", "io_schedule",
					     "preempt_schedule" };
	const char *p = stack;

	buf[0] = 0;
	while (*p) {
		size_t n = strcspn(p, "+ \n"), k;
		int skip = 0;

		for (k = 0; k < sizeof(sched) / sizeof(sched[0]); k++)
			skip |= !strncmp(p, sched[k], strlen(sched[k]));
		if (!skip || !buf[0]) {
			if (n >= len)
				n = len - 1;
			memcpy(buf, p, n);
			buf[n] = 0;
			if (!skip)
				return;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
}

/* The thread watch's account of one thread over the flows' wait (the
 * "watch" array of threads.json, threadwatch_evidence()) into e. */
static void watch_facts(struct json_object *w, struct json_object *e)
{
	uint64_t win = jx_u64(w, "window_ns"), vcsw = jx_u64(w, "voluntary_switches");
	uint64_t off = jx_u64(w, "off_cpu_sleep_ns") + jx_u64(w, "off_cpu_disk_ns");
	const char *stack = jx_str(w, "stack_at_call") ? jx_str(w, "stack_at_call") :
			    jx_str(w, "stack_at_sleep");
	const char *v = jx_str(w, "verdict_at_call");
	char fn[128];

	if (!win)
		return;
	json_object_object_add(e, FK_T_WAIT_MS, jx_new_sig((double)win / 1e6, 4));
	json_object_object_add(e, FK_T_OFF_CPU_PCT, jx_new_sig(
		off >= win ? 100.0 : (double)off * 100.0 / (double)win, 4));
	json_object_object_add(e, FK_T_OFF_CPU_MS, jx_new_sig((double)off / 1e6, 4));
	json_object_object_add(e, FK_T_PREEMPTED_MS,
			       jx_new_sig((double)jx_u64(w, "off_cpu_preempted_ns") / 1e6, 4));
	jx_add_u64(e, FK_T_VCSW, vcsw);
	jx_add_u64(e, FK_T_IVCSW, jx_u64(w, "involuntary_switches"));
	json_object_object_add(e, FK_T_VCSW_PER_S,
			       jx_new_sig((double)vcsw * 1e9 / (double)win, 4));
	if (vcsw)
		json_object_object_add(e, FK_T_SLEEP_US,
				       jx_new_sig((double)off / 1e3 / (double)vcsw, 4));
	if (stack && stack[0]) {
		jx_add_str(e, FK_T_STACK_AT_SLEEP, stack);
		sleep_func(stack, fn, sizeof(fn));
		jx_add_str(e, FK_T_SLEEP_FUNC, fn);
	}
	json_object_object_add(e, FK_T_SLEEP_NOW_MS,
			       jx_new_sig((double)jx_u64(w, "off_for_ns") / 1e6, 4));
	/* thread_watch_syscalls = on: the call it is in, and since when */
	if (jx_str(w, "syscall")) {
		jx_add_str(e, FK_T_IN_SYSCALL, jx_str(w, "syscall"));
		json_object_object_add(e, FK_T_IN_SYSCALL_MS,
				       jx_new_sig((double)jx_u64(w, "syscall_for_ns") / 1e6, 4));
	}
	jx_add_str(e, FK_T_WATCH, v ? v : jx_str(w, "verdict") ? jx_str(w, "verdict") : "unknown");
	jx_add_bool(e, FK_T_CALLED, jx_bool(w, "called"));
}

/* The watch's entry of tid among pr's (NULL: none). */
static struct json_object *watch_of(struct json_object *pr, struct json_object *tid)
{
	struct json_object *ws = jx_arr(pr, "watch");

	for (size_t i = 0; tid && i < jx_len(ws); i++) {
		struct json_object *w = json_object_array_get_idx(ws, i);

		if (jx_get(w, "tid") && json_object_get_int64(jx_get(w, "tid")) ==
					json_object_get_int64(tid))
			return w;
	}
	return NULL;
}

/* threads: the second reading when there is one, with the thread watch's
 * account over the wait; a thread only the watch saw is one too */
static struct json_object *thread_facts(struct json_object *threads)
{
	struct json_object *th = json_object_new_array();

	for (size_t i = 0; i < jx_len(threads); i++) {
		struct json_object *pr = json_object_array_get_idx(threads, i);
		struct json_object *ts = jx_arr(pr, "threads"), *ws = jx_arr(pr, "watch");

		for (size_t k = 0; k < jx_len(ts); k++) {
			struct json_object *t = json_object_array_get_idx(ts, k), *e = json_object_new_object();
			struct json_object *rd = jx_get(t, "second") ? jx_get(t, "second") : jx_get(t, "first");
			struct json_object *st = jx_arr(rd, "stack"), *w = watch_of(pr, jx_get(t, "tid"));
			char stack[4096] = "";
			size_t off = 0;

			for (size_t j = 0; j < jx_len(st) && off < sizeof(stack) - 1; j++)
				off += (size_t)snprintf(stack + off, sizeof(stack) - off, "%s\n",
					json_object_get_string(json_object_array_get_idx(st, j)));
			json_object_object_add(e, FK_T_PID, json_object_get(jx_get(pr, "pid")));
			json_object_object_add(e, FK_T_TID, json_object_get(jx_get(t, "tid")));
			json_object_object_add(e, FK_T_COMM, json_object_get(jx_get(t, "comm")));
			json_object_object_add(e, FK_T_STATE, json_object_get(jx_get(rd, "state")));
			json_object_object_add(e, FK_T_WCHAN, json_object_get(jx_get(rd, "wchan")));
			jx_add_str(e, FK_T_STACK, stack);
			json_object_object_add(e, FK_T_SYSCALL, json_object_get(jx_get(rd, "syscall")));
			json_object_object_add(e, FK_T_VCSW_RATE,
					       json_object_get(jx_get(t, "voluntary_switches_per_s")));
			json_object_object_add(e, FK_T_NVCSW_RATE,
					       json_object_get(jx_get(t, "nonvoluntary_switches_per_s")));
			if (w)
				watch_facts(w, e);
			json_object_array_add(th, e);
		}
		/* threads the snapshot missed (born since) that the watch has */
		for (size_t k = 0; k < jx_len(ws); k++) {
			struct json_object *w = json_object_array_get_idx(ws, k), *e, *tid = jx_get(w, "tid");
			int known = 0;

			for (size_t j = 0; j < jx_len(ts) && !known; j++) {
				struct json_object *x = jx_get(json_object_array_get_idx(ts, j), "tid");

				known = x && tid && json_object_get_int64(x) == json_object_get_int64(tid);
			}
			if (known || !tid)
				continue;
			e = json_object_new_object();
			json_object_object_add(e, FK_T_PID, json_object_get(jx_get(pr, "pid")));
			json_object_object_add(e, FK_T_TID, json_object_get(tid));
			json_object_object_add(e, FK_T_COMM, json_object_get(jx_get(w, "name")));
			watch_facts(w, e);
			json_object_array_add(th, e);
		}
	}
	return th;
}

/* The peer that holds the other end of tuple, by the flows its summary
 * listed; NULL when none does. */
static const char *peer_of_flow(struct json_object *peers, const char *tuple)
{
	json_object_object_foreach(peers, name, pv) {
		struct json_object *list = jx_arr(jx_obj(jx_obj(pv, "summary"), "flows"), "list");

		for (size_t i = 0; i < jx_len(list); i++)
			if (peermsg_same_conn(jx_str(json_object_array_get_idx(list, i), "tuple"), tuple))
				return name;
	}
	return NULL;
}

/* peers.NAME: what the record holds of each peer notified, its summary's
 * ports as they came (each period's counters and signals). A peer that did
 * not answer has no ports: unknown, not clean. */
static struct json_object *peer_facts(struct json_object *peers, struct json_object *flows)
{
	struct json_object *out = json_object_new_object();
	struct json_object *list = jx_arr(flows, FK_F_LIST);

	json_object_object_foreach(peers, name, pv) {
		struct json_object *e = json_object_new_object(), *sum = jx_obj(pv, "summary");
		struct json_object *sf = jx_obj(sum, "flows");
		uint64_t other = 0;

		jx_add_bool(e, FK_PE_NOTIFIED, jx_bool(pv, "notified"));
		jx_add_bool(e, FK_PE_ANSWERED, jx_bool(pv, "answered") && sum);
		if (jx_str(pv, "host"))
			jx_copy(e, FK_PE_HOST, pv, "host");
		if (jx_get(pv, "rtt_ms"))
			jx_copy(e, FK_PE_RTT_MS, pv, "rtt_ms");
		if (jx_str(sum, "bundle"))
			jx_copy(e, FK_PE_BUNDLE, sum, "bundle");
		if (!jx_bool(pv, "answered") || !sum) {
			jx_add_str(e, FK_PE_ERROR, jx_str(pv, "error") ? jx_str(pv, "error") :
				   "not heard from");
			json_object_object_add(out, name, e);
			continue;
		}
		if (sf) {
			jx_add_u64(e, FK_PE_FLOWS_TOTAL, jx_u64(sf, "total"));
			jx_add_u64(e, FK_PE_FLOWS_STALLED, jx_u64(sf, "stalled"));
			jx_add_u64(e, FK_PE_FLOWS_WAITING, jx_u64(sf, "waiting"));
		}
		for (size_t i = 0; i < jx_len(list); i++) {
			const char *p = jx_str(json_object_array_get_idx(list, i), FK_FL_PEER);

			other += p && !strcmp(p, name);
		}
		jx_add_u64(e, FK_PE_OTHER_END, other);
		json_object_object_add(e, FK_PE_PORTS, json_object_get(jx_get(sum, "ports")));
		if (jx_obj(sum, FK_PE_RESOURCES))
			json_object_object_add(e, FK_PE_RESOURCES,
					       json_object_get(jx_obj(sum, FK_PE_RESOURCES)));
		json_object_object_add(out, name, e);
	}
	return out;
}

/* The don't-fragment pings at each port's MTU: the first that was lost
 * silently, else the first; ok false when one was sent and neither
 * answered nor refused: a send the local kernel refused (EMSGSIZE) or a
 * router's "fragmentation needed" is path MTU discovery working, which the
 * flows use too, not a hop that drops large frames silently (its error is
 * kept). */
static struct json_object *ping_mtu_facts(struct json_object *arr)
{
	struct json_object *e = json_object_new_object(), *pick = NULL;
	int ok = 1, any = 0;

	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);
		int refused = jx_str(x, "error") && *jx_str(x, "error");
		int failed = jx_u64(x, "received") == 0 && jx_u64(x, "sent") > 0 && !refused;

		if (jx_u64(x, "sent") == 0 && !refused)
			continue;       /* not sent, no error: nothing known */
		any = 1;
		if (failed && ok) {
			ok = 0;
			pick = x;
		}
		if (!pick)
			pick = x;
	}
	if (!pick) {
		json_object_put(e);
		return NULL;
	}
	if (any)
		jx_add_bool(e, FK_PM_OK, ok);
	jx_copy(e, FK_PG_FROM, pick, "from");
	jx_copy(e, FK_PG_TO, pick, "to");
	jx_copy(e, FK_PM_SIZE, pick, "size");
	jx_copy(e, FK_PM_SMALL, pick, "small_size");
	jx_copy(e, FK_PG_SENT, pick, "sent");
	jx_copy(e, FK_PG_RECEIVED, pick, "received");
	if (jx_str(pick, "error") && *jx_str(pick, "error"))
		jx_copy(e, FK_PM_ERROR, pick, "error");
	return e;
}

struct json_object *facts_build(const struct ports *ps, struct json_object *rec)
{
	struct json_object *f = json_object_new_object(), *ports = json_object_new_object();
	struct json_object *inc = jx_get(rec, IR_INCIDENT), *fl = jx_get(inc, "flows");
	struct json_object *pings = json_object_new_array(), *caps = json_object_new_array();
	struct json_object *snapshot = jx_obj(rec, IR_SNAPSHOT), *host, *ranks;
	uint64_t stall_ns = jx_u64(rec, IR_OPENED_MONO);

	jx_add_int(f, FK_SCHEMA, FACTS_SCHEMA);
	jx_add_str(f, FK_PORT, jx_str(rec, IR_PORT));
	/* the stall began when the first flow started waiting (for a peer's
	 * snapshot: when the origin's did) */
	if (jx_u64(rec, IR_STALL_MONO) && jx_u64(rec, IR_STALL_MONO) < stall_ns)
		stall_ns = jx_u64(rec, IR_STALL_MONO);
	for (size_t i = 0; i < jx_len(fl); i++) {
		uint64_t t = jx_u64(json_object_array_get_idx(fl, i), "stalled_at_mono_ns");

		if (t && t < stall_ns)
			stall_ns = t;
	}
	if (snapshot) {
		json_object_object_foreach(snapshot, pname, pv) {
			if (json_object_is_type(pv, json_type_object) && jx_get(pv, IR_S_COUNTERS))
				port_facts(ps, rec, pname, stall_ns, ports);
		}
	}
	json_object_object_add(f, FK_PORTS, ports);
	host = hostfacts_build(ports, snapshot);
	if (host)
		json_object_object_add(f, FK_HOST, host);
	if (inc) {
		struct json_object *flows = flow_facts(rec, fl), *peers = jx_obj(rec, IR_PEERS);
		struct json_object *list = jx_arr(flows, FK_F_LIST);

		for (size_t i = 0; peers && i < jx_len(list); i++) {
			struct json_object *e = json_object_array_get_idx(list, i);
			const char *p = peer_of_flow(peers, jx_str(e, FK_FL_TUPLE));

			if (p)
				jx_add_str(e, FK_FL_PEER, p);
		}
		json_object_object_add(f, FK_FLOWS, flows);
	}
	if (jx_obj(rec, IR_PEERS))
		json_object_object_add(f, FK_PEERS, peer_facts(jx_obj(rec, IR_PEERS),
							       jx_obj(f, FK_FLOWS)));
	/* the ranks: this host and each peer notified, with their figures,
	 * the most starved first */
	ranks = json_object_new_array();
	json_object_array_add(ranks, hostfacts_rank(jx_str(rec, IR_HOST) ? jx_str(rec, IR_HOST) :
						    "this host", 1, 1, host));
	if (jx_obj(f, FK_PEERS)) {
		json_object_object_foreach(jx_obj(f, FK_PEERS), pn, pe)
			json_object_array_add(ranks, hostfacts_rank(pn, 0, jx_bool(pe, FK_PE_ANSWERED),
								    jx_obj(pe, FK_PE_RESOURCES)));
	}
	hostfacts_order(ranks);
	json_object_object_add(f, FK_RANKS, ranks);
	json_object_object_add(f, FK_THREADS, thread_facts(jx_get(rec, IR_THREADS)));
	json_object_object_add(f, FK_ONLOAD, onload_facts(rec));

	for (size_t i = 0; i < jx_len(jx_get(rec, IR_PINGS)); i++) {
		struct json_object *x = json_object_array_get_idx(jx_get(rec, IR_PINGS), i);
		struct json_object *e = json_object_new_object();

		jx_copy(e, FK_PG_FROM, x, "from");
		jx_copy(e, FK_PG_TO, x, "to");
		jx_copy(e, FK_PG_SENT, x, "sent");
		jx_copy(e, FK_PG_RECEIVED, x, "received");
		json_object_array_add(pings, e);
	}
	if (jx_get(rec, IR_PINGS))
		json_object_object_add(f, FK_PINGS, pings);
	else
		json_object_put(pings);
	if (jx_len(jx_get(rec, IR_PINGS_MTU))) {
		struct json_object *pm = ping_mtu_facts(jx_get(rec, IR_PINGS_MTU));

		if (pm)
			json_object_object_add(f, FK_PING_MTU, pm);
	}
	for (size_t i = 0; i < jx_len(jx_get(rec, IR_CAPTURES)); i++) {
		struct json_object *x = json_object_array_get_idx(jx_get(rec, IR_CAPTURES), i);
		struct json_object *e = json_object_new_object();

		jx_copy(e, FK_C_PORT, x, "port");
		jx_copy(e, FK_C_PROMISC, x, "promisc_requested");
		jx_copy(e, FK_C_FRAMES, x, "packets");
		jx_copy(e, FK_C_TRANSITION, x, "transition");
		json_object_array_add(caps, e);
	}
	json_object_object_add(f, FK_CAPTURES, caps);
	if (jx_get(rec, IR_RELEASE))
		json_object_object_add(f, FK_RELEASE, json_object_get(jx_get(rec, IR_RELEASE)));
	return f;
}
