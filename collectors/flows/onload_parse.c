/* flow_onload: the parsed dump (stacks, counters, sockets), the orm_json
 * reader and the Onload socket liveness verdicts; the onload_stackdump text
 * parsers are in onload_text_parse.c. See onload_parse.h for the formats and
 * the Onload source files they follow. */
#include "collectors/flows/onload_parse.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "collectors/flows/onload_parse_int.h"
#include "lib/json.h"
#include "lib/util.h"

const char *const flow_onload_opt_names[FLOW_ONLOAD_MAX_OPTS] = {
	"EF_POLL_USEC", "EF_SPIN_USEC", "EF_BUZZ_USEC", "EF_INT_DRIVEN",
	"EF_TCP_SEND_NONBLOCK_NO_PACKETS_MODE", "EF_MAX_PACKETS", "EF_DEFER_WORK_LIMIT",
	"EF_MAX_TX_PACKETS",
};

#define JSON_DEPTH 48           /* orm_json nests about 10 deep */

int flow_onload_dump_init(struct flow_onload_dump *d)
{
	memset(d, 0, sizeof(*d));
	d->stacks = calloc(FLOW_ONLOAD_MAX_STACKS, sizeof(*d->stacks));
	d->socks = calloc(FLOW_ONLOAD_MAX_SOCKS, sizeof(*d->socks));
	if (!d->stacks || !d->socks) {
		flow_onload_dump_free(d);
		return -ENOMEM;
	}
	return 0;
}

void flow_onload_dump_reset(struct flow_onload_dump *d)
{
	d->nstacks = d->nsocks = d->dropped = 0;
	d->cut = 0;
	d->version[0] = '\0';
}

void flow_onload_dump_free(struct flow_onload_dump *d)
{
	free(d->stacks);
	free(d->socks);
	d->stacks = NULL;
	d->socks = NULL;
	d->nstacks = d->nsocks = 0;
}

/* ---- helpers shared with onload_text_parse.c -------------------------------- */

void ol_clean_copy(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && i + 1 < len && src[i]; i++)
		dst[i] = (src[i] > 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

int ol_parse_addr(const char *s, struct in6_addr *a)
{
	struct in_addr a4;
	char buf[64];
	size_t n;

	if (!s)
		return -1;
	n = strlen(s);
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[0] == '[' && n > 2 && buf[n - 1] == ']') {
		memmove(buf, buf + 1, n - 2);
		buf[n - 2] = '\0';
	}
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		memset(a, 0, sizeof(*a));
		a->s6_addr[10] = 0xff;
		a->s6_addr[11] = 0xff;
		memcpy(a->s6_addr + 12, &a4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, buf, a) == 1 ? 0 : -1;
}

/* Onload state number (ip.h) to Linux TCP state number. */
int ol_lstate_of_num(unsigned num)
{
	static const int m[] = { 7, 10, 2, 1, 8, 9, 4, 5, 11, 6 };

	return num < sizeof(m) / sizeof(m[0]) ? m[num] : 0;
}

struct flow_onload_stack *ol_stack_get(struct flow_onload_dump *d, int id, int create)
{
	struct flow_onload_stack *s;

	for (unsigned i = 0; i < d->nstacks; i++)
		if (d->stacks[i].id == id)
			return &d->stacks[i];
	if (!create)
		return NULL;
	if (d->nstacks >= FLOW_ONLOAD_MAX_STACKS) {
		d->dropped++;
		return NULL;
	}
	s = &d->stacks[d->nstacks++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	return s;
}

void ol_counter_set(struct flow_onload_stack *s, const char *name, uint64_t v,
		    struct flow_onload_dump *d)
{
	size_t n = strlen(name);

	if (!n || n >= FLOW_ONLOAD_NAME)
		return;
	for (unsigned i = 0; i < s->ncounters; i++)
		if (!strcmp(s->counters[i].name, name)) {
			s->counters[i].value = v;
			return;
		}
	if (s->ncounters >= FLOW_ONLOAD_MAX_COUNTERS) {
		d->dropped++;
		return;
	}
	memcpy(s->counters[s->ncounters].name, name, n + 1);
	s->counters[s->ncounters].value = v;
	s->ncounters++;
}

struct flow_onload_sock *ol_sock_new(struct flow_onload_dump *d, int stack_id, int sock_id)
{
	struct flow_onload_sock *k;

	if (d->nsocks >= FLOW_ONLOAD_MAX_SOCKS) {
		d->dropped++;
		return NULL;
	}
	k = &d->socks[d->nsocks++];
	memset(k, 0, sizeof(*k));
	k->stack_id = stack_id;
	k->sock_id = sock_id;
	return k;
}

const struct flow_onload_stack *flow_onload_stack(const struct flow_onload_dump *d, int id)
{
	for (unsigned i = 0; i < d->nstacks; i++)
		if (d->stacks[i].id == id)
			return &d->stacks[i];
	return NULL;
}

int flow_onload_counter(const struct flow_onload_stack *s, const char *name, uint64_t *value)
{
	for (unsigned i = 0; s && i < s->ncounters; i++)
		if (!strcmp(s->counters[i].name, name)) {
			*value = s->counters[i].value;
			return 1;
		}
	return 0;
}

int flow_onload_opt(const struct flow_onload_stack *s, const char *name, uint64_t *value)
{
	for (unsigned i = 0; s && i < s->nopts; i++)
		if (!strcmp(s->opts[i].name, name)) {
			*value = s->opts[i].value;
			return 1;
		}
	return 0;
}

/* ---- orm_json -------------------------------------------------------------- */

/* o[key] as orm_json prints a number: a JSON int (a negative one is a
 * 32-bit field printed signed, read back as its u32 bits) or a decimal
 * string (how it prints 64-bit fields). 1 found, 0 not. Not jx_u64
 * (lib/json.h), which takes no strings, reads a negative int as 0 and
 * does not tell a missing key from 0. */
static int orm_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *x = jx_get(o, key);
	const char *s;
	char *end;

	if (!x)
		return 0;
	if (json_object_is_type(x, json_type_int)) {
		int64_t i = json_object_get_int64(x);

		*v = i < 0 ? (uint64_t)(uint32_t)i : (uint64_t)i;
		if (i >= 0 && (uint64_t)i == (uint64_t)INT64_MAX)
			*v = json_object_get_uint64(x);
		return 1;
	}
	if (json_object_is_type(x, json_type_string)) {
		s = json_object_get_string(x);
		if (!s || !isdigit((unsigned char)*s))
			return 0;
		errno = 0;
		*v = strtoull(s, &end, 10);
		return !errno && !*end;
	}
	return 0;
}

/* orm_u64 cut to 32 bits (the ci_uint32 fields); 0 and *ok (may be NULL)
 * cleared when missing. */
static uint32_t orm_u32(struct json_object *o, const char *key, int *ok)
{
	uint64_t v = 0;

	if (!orm_u64(o, key, &v)) {
		if (ok)
			*ok = 0;
		return 0;
	}
	return (uint32_t)v;
}

/* ci_sock_cmn (STRUCT_SOCK): addresses, ports, pid, so_error, state. */
static void json_sock_cmn(struct json_object *s, struct flow_onload_sock *k)
{
	struct json_object *pkt = jx_obj(s, "pkt");
	const char *ra = jx_str(jx_obj(jx_obj(pkt, "ipx"), "ip4"), "ip_daddr");
	uint64_t v;

	if (orm_u64(jx_obj(s, "b"), "state", &v))
		k->ostate = (uint32_t)v;
	if (ol_parse_addr(jx_str(s, "laddr"), &k->laddr) < 0)
		ol_parse_addr(jx_str(jx_obj(s, "cp"), "laddr"), &k->laddr);
	if (ra)
		ol_parse_addr(ra, &k->raddr);
	if (orm_u64(jx_obj(s, "cp"), "lport", &v))
		k->lport = htons((uint16_t)v);
	if (orm_u64(pkt, "dport", &v))
		k->rport = htons((uint16_t)v);
	if (orm_u64(s, "pid", &v))
		k->pid = (int)v;
	if (orm_u64(s, "so_error", &v))
		k->so_error = (int)(int32_t)v;
}

static void json_tcp(struct flow_onload_dump *d, int stack_id, const char *sid,
		     struct json_object *ts)
{
	struct flow_onload_sock *k;
	int ok = 1;

	if (!ts)
		return;
	k = ol_sock_new(d, stack_id, atoi(sid));
	if (!k)
		return;
	k->proto = IPPROTO_TCP;
	json_sock_cmn(jx_obj(ts, "s"), k);
	k->lstate = ol_lstate_of_num(FLOW_ONLOAD_STATE_NUM(k->ostate));
	k->snd_nxt = orm_u32(ts, "snd_nxt", &ok);
	k->snd_una = orm_u32(ts, "snd_una", &ok);
	k->snd_max = orm_u32(ts, "snd_max", NULL);
	if (ok)
		k->have |= FLOW_ONLOAD_HAVE_SEQ;
	ok = 1;
	k->rcv_added = orm_u32(ts, "rcv_added", &ok);
	k->rcv_delivered = orm_u32(ts, "rcv_delivered", &ok);
	if (ok)
		k->have |= FLOW_ONLOAD_HAVE_RCV;
	k->send_in = orm_u32(ts, "send_in", NULL);
	k->send_out = orm_u32(ts, "send_out", NULL);
	k->sendq_pkts = orm_u32(jx_obj(ts, "send"), "num", NULL);
	k->retrans_pkts = orm_u32(jx_obj(ts, "retrans"), "num", NULL);
	k->recvq_pkts = orm_u32(jx_obj(ts, "recv1"), "num", NULL) +
			orm_u32(jx_obj(ts, "recv2"), "num", NULL);
	k->have |= FLOW_ONLOAD_HAVE_QPKTS;
	ok = 1;
	k->t_last_sent = orm_u32(ts, "t_last_sent", &ok);
	k->t_last_recv_ack = orm_u32(ts, "t_last_recv_ack", &ok);
	k->t_last_recv_payload = orm_u32(ts, "t_last_recv_payload", NULL);
	if (ok)
		k->have |= FLOW_ONLOAD_HAVE_TIMES;
	k->total_retrans = orm_u32(jx_obj(ts, "stats"), "total_retrans", NULL);
	/* the RTO timer's expiry is printed by `orm_json stack` only
	 * (ftl_defs.h STRUCT_IP_TIMER: time is ORM_OUTPUT_STACK), its
	 * timeout by both */
	ok = 1;
	k->rto = orm_u32(ts, "rto", &ok);
	k->rto_time = orm_u32(jx_obj(ts, "rto_tid"), "time", &ok);
	if (ok)
		k->have |= FLOW_ONLOAD_HAVE_RTO;
}

static void json_udp(struct flow_onload_dump *d, int stack_id, const char *sid,
		     struct json_object *us)
{
	struct flow_onload_sock *k;
	struct json_object *q;

	if (!us)
		return;
	k = ol_sock_new(d, stack_id, atoi(sid));
	if (!k)
		return;
	k->proto = IPPROTO_UDP;
	json_sock_cmn(jx_obj(us, "s"), k);
	q = jx_obj(us, "recv_q");
	k->udp_added = orm_u32(q, "pkts_added", NULL);
	k->udp_delivered = orm_u32(q, "pkts_delivered", NULL);
	k->recvq_pkts = k->udp_added - k->udp_delivered;
	k->sendq_pkts = orm_u32(us, "tx_count", NULL);
	k->have |= FLOW_ONLOAD_HAVE_QPKTS;
}

static void json_counters(struct flow_onload_dump *d, struct flow_onload_stack *st,
			  struct json_object *o)
{
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, key, val) {
		uint64_t v;

		(void)val;
		if (orm_u64(o, key, &v))
			ol_counter_set(st, key, v, d);
	}
}

/* One stack object: {"stack":{...},"stats":{...},...}; id from the key or
 * the flat "id", name from stack_state or the flat "name". */
static void json_stack(struct flow_onload_dump *d, int id, const char *name,
		       struct json_object *so)
{
	struct json_object *stack = jx_obj(so, "stack"), *ss = jx_obj(stack, "stack_state");
	struct json_object *tm = jx_obj(ss, "iptimer_state");
	struct flow_onload_stack *st;
	uint64_t v;

	if (id < 0 && orm_u64(ss, "stack_id", &v))
		id = (int)v;
	st = ol_stack_get(d, id, 1);
	if (!st)
		return;
	if (name)
		ol_clean_copy(st->name, sizeof(st->name), name);
	if (jx_str(ss, "name"))
		ol_clean_copy(st->name, sizeof(st->name), jx_str(ss, "name"));
	if (orm_u64(ss, "pid", &v))
		st->pid = (int)v;
	if (tm) {
		int ok = 1;

		st->now_ticks = orm_u32(tm, "ci_ip_time_real_ticks", &ok);
		st->khz = orm_u32(tm, "khz", &ok);
		st->frc2tick = orm_u32(tm, "ci_ip_time_frc2tick", &ok);
		st->have_time = ok && st->khz && st->frc2tick < 40;
	}
	json_counters(d, st, jx_obj(so, "stats"));
	json_counters(d, st, jx_obj(so, "more_stats"));
	/* "opts" (orm_json_lib.c orm_oo_opts_dump(): "EF_NAME":value over
	 * opts_netif_def.h): those of flow_onload_opt_names */
	for (unsigned i = 0; i < FLOW_ONLOAD_MAX_OPTS && st->nopts < FLOW_ONLOAD_MAX_OPTS; i++)
		if (orm_u64(jx_obj(so, "opts"), flow_onload_opt_names[i], &v)) {
			util_strlcpy(st->opts[st->nopts].name, flow_onload_opt_names[i],
				     sizeof(st->opts[0].name));
			st->opts[st->nopts++].value = v;
		}
	{
		struct json_object *tcp = jx_obj(stack, "tcp"), *udp = jx_obj(stack, "udp");

		if (tcp) {
			json_object_object_foreach(tcp, sid, sv)
				json_tcp(d, id, sid, jx_obj(sv, "tcp_state"));
		}
		if (udp) {
			json_object_object_foreach(udp, sid2, sv2)
				json_udp(d, id, sid2, jx_obj(sv2, "udp_state"));
		}
	}
}

int flow_onload_parse_json(const char *text, size_t len, struct flow_onload_dump *d,
			   char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *root, *arr;
	enum json_tokener_error je;

	flow_onload_dump_reset(d);
	if (len > FLOW_ONLOAD_MAX_TEXT || len > INT32_MAX) {
		util_errf(err, errlen, "orm_json output of %zu bytes is over the %u-byte limit", len,
			  FLOW_ONLOAD_MAX_TEXT);
		return -E2BIG;
	}
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok)
		return util_errf(err, errlen, "out of memory"), -ENOMEM;
	root = json_tokener_parse_ex(tok, text, (int)len);
	je = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!root || je != json_tokener_success) {
		util_errf(err, errlen, "orm_json output is not JSON: %s",
			  json_tokener_error_desc(je));
		json_object_put(root);
		return -EINVAL;
	}
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		util_errf(err, errlen, "orm_json output is not a JSON object");
		return -EINVAL;
	}
	ol_clean_copy(d->version, sizeof(d->version), jx_str(root, "onload_version"));
	if ((arr = jx_arr(root, "stacks"))) {          /* --flat */
		for (size_t i = 0; i < jx_len(arr); i++) {
			struct json_object *so = json_object_array_get_idx(arr, i);
			uint64_t id;

			if (!orm_u64(so, "id", &id))
				continue;
			json_stack(d, (int)id, jx_str(so, "name"), so);
		}
	} else if ((arr = jx_arr(root, "json"))) {
		for (size_t i = 0; i < jx_len(arr); i++) {
			struct json_object *el = json_object_array_get_idx(arr, i);

			if (!json_object_is_type(el, json_type_object))
				continue;
			json_object_object_foreach(el, key, so) {
				char *end;
				long id;

				if (!strcmp(key, "all"))        /* --sum-all */
					continue;
				id = strtol(key, &end, 10);
				if (*key && !*end && id >= 0 && id < 1000000)
					json_stack(d, (int)id, NULL, so);
				else            /* --name: keyed by the stack name */
					json_stack(d, -1, key, so);
			}
		}
	} else {
		json_object_put(root);
		util_errf(err, errlen, "orm_json output has neither \"json\" nor \"stacks\"");
		return -EINVAL;
	}
	json_object_put(root);
	return 0;
}

/* ---- liveness ---------------------------------------------------------------- */

enum flow_live flow_onload_obs(const struct flow_onload_sock *s,
			       const struct flow_onload_stack *stack,
			       struct flow_onload_track *t, uint64_t now_ns, struct flow_obs *o)
{
	int first = !t->live.init, moved;
	uint64_t una_before = t->una_acc, del_before = t->del_acc, nxt_before = t->tx_acc;
	uint64_t rx_before = t->rx_acc;
	uint32_t inflight = 0, unread = 0;
	enum flow_live v;

	if (first) {
		t->nxt_raw = s->snd_nxt;
		t->una_raw = s->snd_una;
		t->rcv_raw = s->rcv_added;
		t->del_raw = s->rcv_delivered;
	}
	if (s->have & FLOW_ONLOAD_HAVE_SEQ) {
		uint64_t r = t->nxt_raw;

		flow_live_unwrap(&t->tx_acc, &r, s->snd_nxt, 32);
		t->nxt_raw = (uint32_t)r;
		r = t->una_raw;
		flow_live_unwrap(&t->una_acc, &r, s->snd_una, 32);
		t->una_raw = (uint32_t)r;
		/* SEQ_SUB, never negative (ip.h ci_tcp_inflight) */
		if ((int32_t)(s->snd_nxt - s->snd_una) > 0)
			inflight = s->snd_nxt - s->snd_una;
	}
	if (s->have & FLOW_ONLOAD_HAVE_RCV) {
		uint64_t r = t->rcv_raw;

		flow_live_unwrap(&t->rx_acc, &r, s->rcv_added, 32);
		t->rcv_raw = (uint32_t)r;
		r = t->del_raw;
		flow_live_unwrap(&t->del_acc, &r, s->rcv_delivered, 32);
		t->del_raw = (uint32_t)r;
		if ((int32_t)(s->rcv_added - s->rcv_delivered) > 0)
			unread = s->rcv_added - s->rcv_delivered;
	}
	if (s->proto == IPPROTO_UDP) {
		uint64_t r = t->rcv_raw;

		if (first)
			t->rcv_raw = s->udp_delivered;
		r = t->rcv_raw;
		flow_live_unwrap(&t->del_acc, &r, s->udp_delivered, 32);
		t->rcv_raw = (uint32_t)r;
	}
	/* balance of bytes sent and received: a request/response flow's
	 * outstanding request shows as the balance above its low mark */
	moved = flow_live_update(&t->live, t->tx_acc, t->rx_acc, now_ns);
	if (t->una_acc != una_before || t->del_acc != del_before)
		moved = 1;

	memset(o, 0, sizeof(*o));
	o->src = FLOW_SRC_ONLOAD;
	o->key.saddr = s->laddr;
	o->key.daddr = s->raddr;
	o->key.sport = s->lport;
	o->key.dport = s->rport;
	o->key.proto = s->proto;
	o->session = ((uint64_t)(uint32_t)s->stack_id << 32) | (uint32_t)s->sock_id;
	o->tx_bytes = t->una_acc;               /* acknowledged, as sock_diag */
	o->rx_bytes = t->rx_acc;
	o->inflight = inflight;
	o->unread = unread;
	o->unsent = (s->have & FLOW_ONLOAD_HAVE_SENDQ_B) ? s->sendq_bytes : s->sendq_pkts;
	o->retrans = s->total_retrans;
	o->state = (uint32_t)s->lstate;
	o->pid = s->pid ? s->pid : (stack ? stack->pid : 0);
	snprintf(o->engine, sizeof(o->engine), "onload:%.24s",
		 stack && stack->name[0] ? stack->name : "?");
	if (t->tx_acc != nxt_before)
		o->last_tx_ns = now_ns;
	if (t->rx_acc != rx_before)
		o->last_rx_ns = now_ns;
	if (stack && stack->have_time && (s->have & FLOW_ONLOAD_HAVE_TIMES)) {
		/* ticks are frc >> frc2tick at khz kHz: ns = ticks << shift * 1e6 / khz */
		uint32_t age_tx = stack->now_ticks - s->t_last_sent;
		uint32_t age_rx = stack->now_ticks - s->t_last_recv_payload;
		uint64_t tick_ps = ((1000000000ull << stack->frc2tick) / stack->khz);
		uint64_t ns_tx = (uint64_t)age_tx * tick_ps / 1000, ns_rx = (uint64_t)age_rx * tick_ps / 1000;

		if ((int32_t)age_tx >= 0 && ns_tx < now_ns && s->t_last_sent)
			o->last_tx_ns = now_ns - ns_tx;
		if ((int32_t)age_rx >= 0 && ns_rx < now_ns && s->t_last_recv_payload)
			o->last_rx_ns = now_ns - ns_rx;
	}

	/* The next retransmission. Onload arms the RTO timer when data goes
	 * out with none pending and restarts it when new data is acked, at
	 * ci_tcp_time_now() + rto (ip.h ci_tcp_rto_set_with_timeout,
	 * ci_tcp_rto_restart; tcp_tx.c, tcp_rx.c), and re-arms it with the
	 * backed-off rto after each retransmission: with data unacknowledged
	 * it is pending and rto_tid.time (absolute ticks, iptimer.h
	 * ci_ip_timer_set) is when the stack retransmits. A cleared timer
	 * keeps its old time: only trusted within one rto of now. */
	if (s->proto == IPPROTO_TCP && inflight > 0 && stack && stack->have_time &&
	    (s->have & FLOW_ONLOAD_HAVE_RTO) && s->rto > 0 && s->rto < (1u << 24)) {
		uint64_t tick_ps = ((1000000000ull << stack->frc2tick) / stack->khz);
		int32_t ahead = (int32_t)(s->rto_time - stack->now_ticks);

		if (ahead >= 0 && (uint32_t)ahead <= s->rto) {
			o->retry_due_ns = now_ns + (uint64_t)ahead * tick_ps / 1000;
			o->rto_ns = (uint64_t)s->rto * tick_ps / 1000;
		} else if (ahead < 0 && (uint32_t)-ahead <= s->rto) {
			/* overdue: it fires at the stack's next timer poll */
			o->retry_due_ns = now_ns;
			o->rto_ns = (uint64_t)s->rto * tick_ps / 1000;
		}
	}

	if (s->proto == IPPROTO_UDP) {
		v = !first && s->recvq_pkts > 0 && t->del_acc == del_before ? FLOW_LIVE_HELD :
		    (moved ? FLOW_LIVE_PROGRESS : FLOW_LIVE_IDLE);
	} else if (s->so_error && (s->lstate == 7 || s->lstate == 0 || s->lstate == 2)) {
		v = FLOW_LIVE_FAILED;           /* reset, refused, timed out */
	} else if (!first && unread > 0 && t->del_acc == del_before) {
		v = FLOW_LIVE_HELD;             /* data ready, application reads nothing */
	} else if (!first && o->unsent > 0 && t->tx_acc == nxt_before && !inflight) {
		v = FLOW_LIVE_HELD;             /* queued, the engine sends nothing */
	} else if (!first && inflight > 0 && t->una_acc == una_before) {
		v = FLOW_LIVE_WAITING;          /* sent, unacknowledged, no ack moved */
	} else if (moved) {
		v = FLOW_LIVE_PROGRESS;
	} else if (flow_live_outstanding(&t->live)) {
		v = FLOW_LIVE_WAITING;          /* request acked, reply never came */
	} else {
		v = FLOW_LIVE_IDLE;
	}
	flow_live_set(&t->live, v, v == FLOW_LIVE_WAITING ? t->live.moved_ns : 0, now_ns);
	flow_live_obs_set(&t->live, o);
	return v;
}
