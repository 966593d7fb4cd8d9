/* stall_view: the detector seen from outside: flows, incidents, engines,
 * thread evidence and the counts status and the forensic sequence read
 * (stall.h; stall_int.h). */
#include "daemon/detect/stall_int.h"
#include "daemon/conf.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/detect/incident.h"
#include "daemon/detect/liveness.h"
#include "daemon/detect/threadpass.h"
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Listing order: port, stalled before waiting before the rest, then the
 * tuple (addresses and ports as numbers), source and session. Compared on
 * the flows themselves: a mass stall lists the first max of 100k flows
 * without formatting, or even allocating, the others. */
static int state_rank(enum flow_state st)
{
	return st == FLOW_STALLED ? 0 : st == FLOW_IDLE ? 2 : 1;
}

static int flow_cmp(const void *a, const void *b)
{
	const struct sflow *x = *(const struct sflow *const *)a;
	const struct sflow *y = *(const struct sflow *const *)b;
	int c = strcmp(x->port, y->port);

	if (!c)
		c = state_rank(x->state) - state_rank(y->state);
	if (!c)
		c = memcmp(&x->obs.key.saddr, &y->obs.key.saddr, sizeof(x->obs.key.saddr));
	if (!c)
		c = (int)x->obs.key.sport - (int)y->obs.key.sport;
	if (!c)
		c = memcmp(&x->obs.key.daddr, &y->obs.key.daddr, sizeof(x->obs.key.daddr));
	if (!c)
		c = (int)x->obs.key.dport - (int)y->obs.key.dport;
	if (!c)
		c = (int)x->obs.key.proto - (int)y->obs.key.proto;
	if (!c)
		c = (int)x->obs.src - (int)y->obs.src;
	if (!c)
		c = x->obs.session < y->obs.session ? -1 : x->obs.session > y->obs.session;
	return c;
}

/* Restore the max-heap (by flow_cmp) below v[k] of v[0..n). */
static void sift_down(const struct sflow **v, size_t n, size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;

		if (l < n && flow_cmp(&v[l], &v[m]) > 0)
			m = l;
		if (r < n && flow_cmp(&v[r], &v[m]) > 0)
			m = r;
		if (m == k)
			return;
		const struct sflow *t = v[k];

		v[k] = v[m];
		v[m] = t;
		k = m;
	}
}

static struct json_object *flow_json(const struct sflow *f, uint64_t now)
{
	struct json_object *o = json_object_new_object(), *held;
	char tuple[160];

	flow_tuple(f, tuple, sizeof(tuple));
	jx_add_str(o, "port", f->port);
	jx_add_str(o, "source", flow_src_name(f->obs.src));
	jx_add_str(o, "tuple", tuple);
	/* a session is an engine's word: a kernel socket or the tc tracker
	 * has none (not "session": 0) */
	if (f->obs.src != FLOW_SRC_SOCK && f->obs.src != FLOW_SRC_BPF)
		jx_add_u64(o, "session", f->obs.session);
	jx_add_str(o, "state", flow_state_name(f->state));
	jx_add_ms(o, "progress_age_ms", now - f->progress_ns);
	if (f->state != FLOW_IDLE)
		jx_add_ms(o, "waiting_ms", now - f->wait_since_ns);
	jx_add_u64(o, "tx_msgs", f->obs.tx_msgs);
	jx_add_u64(o, "rx_msgs", f->obs.rx_msgs);
	jx_add_u64(o, "tx_bytes", f->obs.tx_bytes);
	jx_add_u64(o, "rx_bytes", f->obs.rx_bytes);
	held = json_object_new_object();
	jx_add_u64(held, "unsent", f->obs.unsent);
	jx_add_u64(held, "unread", f->obs.unread);
	jx_add_u64(held, "staged", f->obs.staged);
	json_object_object_add(o, "held", held);
	if (f->obs.src == FLOW_SRC_SOCK)
		jx_add_u64(o, "inflight", f->obs.inflight);
	if (f->obs.src == FLOW_SRC_SOCK)
		jx_add_u64(o, "retrans", f->obs.retrans);
	if (f->obs.pid)
		jx_add_int(o, "pid", f->obs.pid);
	if (f->obs.engine[0])
		jx_add_str(o, "engine", f->obs.engine);
	if (f->obs.inode)
		jx_add_u64(o, "inode", f->obs.inode);
	if (flow_obs_is_claim(&f->obs))
		jx_add_str(o, "claim", f->obs.claim == FLOW_CLAIM_VERIFIED ? "verified" :
			   f->obs.claim == FLOW_CLAIM_UNVERIFIED ? "unverified" : "unchecked");
	jx_add_u64(o, "stalls", f->stalls);
	if (f->last_stall_ns)
		jx_add_ms(o, "last_stall_ms", f->last_stall_ns);
	if (f->incident)
		jx_add_u64(o, "incident", f->incident);
	return o;
}

struct json_object *stall_flows_json(struct stall *s, const char *port, int stalled_only,
				     unsigned max, unsigned *total)
{
	struct json_object *arr = json_object_new_array();
	uint64_t now = loop_mono_ns();
	const struct sflow **v = NULL;
	size_t n = 0, cap = 0;

	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f)) {
		if (port && strcmp(port, f->port))
			continue;
		if (stalled_only && f->state != FLOW_STALLED)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			const struct sflow **nv = realloc(v, nc * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n++] = f;
	}
	if (total)
		*total = (unsigned)n;
	if (max && n > max) {
		/* the first max in order without sorting them all: a max-heap
		 * of the best max seen, one comparison for most flows */
		for (size_t i = max; i < n; i++) {
			size_t k = 0;

			if (i == max)
				for (size_t j = max / 2; j-- > 0;)
					sift_down(v, max, j);
			if (flow_cmp(&v[i], &v[0]) >= 0)
				continue;
			v[0] = v[i];
			sift_down(v, max, k);
		}
		n = max;
	}
	if (n)
		qsort(v, n, sizeof(*v), flow_cmp);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, flow_json(v[i], now));
	free(v);
	return arr;
}

struct json_object *stall_incidents_json(struct stall *s)
{
	for (struct incident *inc = incidents_next(s->incs, NULL); inc;
	     inc = incidents_next(s->incs, inc))
		stall_refresh_siblings(s, inc);
	return incidents_json(s->incs, loop_mono_ns());
}

static void use_json(const struct livetab_use *u, void *arg)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "source", flow_src_name(u->src));
	if (u->uid_known)
		jx_add_u64(o, "uid", u->uid);
	jx_add_u64(o, "flows", u->flows);
	jx_add_u64(o, "limit", u->limit);
	jx_add_u64(o, "refused", u->refused);
	json_object_array_add(arg, o);
}

struct json_object *stall_engines_json(struct stall *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *lim = json_object_new_array(), *det;
	uint64_t now;

	flowsrcs_status(s->srcs, o);
	tpass_status(s->tpass, o);
	jx_add_u64(o, "flows", livetab_count(s->flows));
	/* every source, and the owners that have had flows refused */
	livetab_usage(s->flows, 0, use_json, lim);
	json_object_object_add(o, "limits", lim);
	jx_add_u64(o, "hash_buckets", livetab_buckets(s->flows));
	jx_add_u64(o, "sibling_scans", s->sibling_scans);
	jx_add_u64(o, "unverified_stalls", s->unverified_stalls);
	jx_add_u64(o, "polls", s->polls);
	/* the polls by why they came: a flow's want or deadline, a source's
	 * own time or post, a refresh, nothing asked (the longest sleep) */
	det = json_object_new_object();
	for (size_t i = 0; i < sizeof(s->polls_why) / sizeof(s->polls_why[0]) && s->polls_why[i].why; i++)
		jx_add_u64(det, s->polls_why[i].why, s->polls_why[i].n);
	json_object_object_add(o, "polls_why", det);
	jx_add_double(o, "poll_cost_us", (double)s->poll_cost_ns / 1000.0);
	/* when the next poll comes, and why then (plan_next) */
	det = json_object_new_object();
	now = loop_mono_ns();
	jx_add_double(det, "in_ms", s->next_poll > now ? (double)(s->next_poll - now) / 1e6 : 0.0);
	jx_add_str(det, "why", s->next_why ? s->next_why : WHY_INTERVAL);
	json_object_object_add(o, "next_poll", det);
	/* what the detector's work costs beside the sources' (cost.h) */
	det = json_object_new_object();
	cost_json(&s->detector, loop_mono_ns(), det);
	json_object_object_add(o, "detector", det);
	return o;
}

size_t stall_incident_owners(struct stall *s, const struct incident *inc,
			     struct stall_owner *out, size_t max)
{
	const char *names[2];
	unsigned ng = stall_group_ports(s, incident_group(inc), names);
	size_t n = 0;
	char t[160];

	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f)) {
		struct flow_key k;
		int match;

		if (!f->obs.pid && !f->obs.inode)
			continue;
		if (!stall_in_group(f, names, ng))
			continue;
		flow_norm_key(&f->obs.key, &k);
		match = incident_has_norm(inc, &k);
		if (!match)
			continue;
		for (size_t j = 0; j < n; j++)
			if ((f->obs.pid && out[j].pid == f->obs.pid) ||
			    (f->obs.inode && out[j].inode == f->obs.inode))
				match = 0;
		if (!match || n >= max)
			continue;
		flow_norm_tuple(f, t, sizeof(t));
		out[n].pid = f->obs.pid;
		out[n].inode = f->obs.inode;
		util_strlcpy(out[n].port, f->port, sizeof(out[n].port));
		util_strlcpy(out[n].tuple, t, sizeof(out[n].tuple));
		n++;
	}
	return n;
}

void stall_flow_counts(const struct stall *s, const char *port, unsigned counts[3])
{
	counts[FLOW_IDLE] = counts[FLOW_WAITING] = counts[FLOW_STALLED] = 0;
	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f))
		if ((!port || !strcmp(port, f->port)) && (unsigned)f->state < 3)
			counts[f->state]++;
}

unsigned stall_longest_wait(const struct stall *s, uint64_t now, uint64_t *longest_ns)
{
	unsigned n = 0;

	*longest_ns = 0;
	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f)) {
		n++;
		if ((f->state == FLOW_WAITING || f->state == FLOW_STALLED) && f->wait_since_ns &&
		    now > f->wait_since_ns && now - f->wait_since_ns > *longest_ns)
			*longest_ns = now - f->wait_since_ns;
	}
	return n;
}

unsigned stall_incident_flows(struct stall *s, const struct incident *inc,
			      void (*fn)(const struct flow_obs *o, void *arg), void *arg)
{
	unsigned n = 0;

	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f))
		if (f->state == FLOW_STALLED && f->incident == incident_id(inc)) {
			fn(&f->obs, arg);
			n++;
		}
	return n;
}

unsigned stall_incident_retrans(struct stall *s, const struct incident *inc, uint64_t *retrans)
{
	unsigned n = 0;

	*retrans = 0;
	for (struct sflow *f = livetab_next(s->flows, NULL); f; f = livetab_next(s->flows, f)) {
		if (f->state != FLOW_STALLED || f->incident != incident_id(inc))
			continue;
		/* the sources that publish the sender's own count:
		 * tcp_get_info() tcpi_total_retrans, Onload's total_retrans,
		 * VMA/XLIO n_tx_retransmits */
		if (f->obs.src != FLOW_SRC_SOCK && f->obs.src != FLOW_SRC_ONLOAD &&
		    f->obs.src != FLOW_SRC_VMA)
			continue;
		n++;
		if (f->obs.retrans >= f->retrans_at_progress)
			*retrans += f->obs.retrans - f->retrans_at_progress;
	}
	/* and those released meanwhile: the wait their release ended */
	return n + incident_released_retrans(inc, retrans);
}

struct json_object *stall_thread_evidence(struct stall *s, int pid)
{
	return tpass_evidence(s->tpass, pid, 0);
}

unsigned stall_waiting_pids(struct stall *s, const char *const *ports, unsigned nports,
			    int32_t *pids, unsigned max)
{
	unsigned n = 0;

	for (struct sflow *f = livetab_next(s->flows, NULL); f && n < max;
	     f = livetab_next(s->flows, f)) {
		int on = 0, have = 0;

		if ((f->state != FLOW_WAITING && f->state != FLOW_STALLED) || f->obs.pid <= 0)
			continue;
		for (unsigned i = 0; i < nports && !on; i++)
			on = !strcmp(f->port, ports[i]);
		for (unsigned i = 0; i < n && !have; i++)
			have = pids[i] == f->obs.pid;
		if (on && !have)
			pids[n++] = f->obs.pid;
	}
	return n;
}

unsigned stall_thread_called(const struct stall *s, int32_t *pids, unsigned max)
{
	return tpass_called(s->tpass, pids, max);
}
