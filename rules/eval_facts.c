/* eval_facts: reading the incident facts (rules/facts.h) for the
 * evaluator: named facts, the periods of a port, list items and the
 * quantifiers over them. Facts may be hostile: a missing or mistyped value
 * is unknown, with why. */
#include "rules/rules_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "rules/facts.h"

/* A scalar json value as a val; what names it in the "why". */
static struct val jval(struct ectx *c, struct json_object *j, const char *what)
{
	double d;

	if (!j)
		return v_unk(rl_afmt(c->ar, "%s missing", what));
	switch (json_object_get_type(j)) {
	case json_type_boolean:
		return v_bool(json_object_get_boolean(j));
	case json_type_string:
		return v_str(json_object_get_string(j));
	case json_type_int:
	case json_type_double:
		if (jx_num(j, &d))
			return v_num(d);
		return v_unk(rl_afmt(c->ar, "%s is not a finite number", what));
	default:
		return v_unk(rl_afmt(c->ar, "%s has the wrong type", what));
	}
}

const char *rl_port_profile(struct json_object *port)
{
	const char *p = jx_str(port, FK_P_PROFILE);

	return p ? p : "generic";
}

const char *rl_port_missing(struct ectx *c, const char *pname)
{
	return rl_afmt(c->ar, "port %s missing", pname ? pname : "?");
}

/* The object of a period of a port, or NULL and why. */
static struct json_object *period_of(struct ectx *c, struct json_object *port,
				     const char *pname, enum per per, const char **why)
{
	struct json_object *pj = jx_get(port, rl_per_name[per]);

	if (!port)
		*why = rl_port_missing(c, pname);
	else if (!pj)
		*why = rl_afmt(c->ar, FK_PORTS ".%s.%s missing", pname, rl_per_name[per]);
	return pj;
}

int rl_period_span(struct ectx *c, struct json_object *port, const char *pname,
		   enum per per, double *span, const char **why)
{
	struct json_object *pj = period_of(c, port, pname, per, why);

	if (!pj)
		return -1;
	if (!jx_num(jx_get(pj, FK_SPAN_S), span) || *span < 0) {
		*why = rl_afmt(c->ar, FK_PORTS ".%s.%s." FK_SPAN_S " missing or bad", pname,
			       rl_per_name[per]);
		return -1;
	}
	return 0;
}

struct val rl_period_sig(struct ectx *c, struct json_object *port, const char *pname,
			 enum per per, const char *sig)
{
	const char *why;
	struct json_object *pj = period_of(c, port, pname, per, &why);
	struct val v;

	if (!pj)
		return v_unk(why);
	v = rl_sig_value(c->r, rl_port_profile(port), sig, jx_get(pj, FK_COUNTERS), c->depth, c->ar);
	if (v.t == V_UNK)
		v.why = rl_afmt(c->ar, FK_PORTS ".%s.%s: %s", pname, rl_per_name[per], v.why);
	return v;
}

/* Where the items of each list are: an array, or for ports an object of
 * port objects by name. what: the list's name in messages. */
static const struct { const char *key, *sub, *what; } lists[] = {
	[D_THREAD] = { FK_THREADS, NULL, FK_THREADS },
	[D_FLOW] = { FK_FLOWS, FK_F_LIST, FK_FLOWS "." FK_F_LIST },
	[D_PING] = { FK_PINGS, NULL, FK_PINGS },
	[D_CAPTURE] = { FK_CAPTURES, NULL, FK_CAPTURES },
	[D_PORT] = { FK_PORTS, NULL, FK_PORTS },
	[D_PEER] = { FK_PEERS, NULL, FK_PEERS },
	[D_ONLOAD] = { FK_ONLOAD, NULL, FK_ONLOAD },
	[D_RANK] = { FK_RANKS, NULL, FK_RANKS },
};

/* The list of d, or NULL and why: missing, of the wrong type, or (when
 * nonempty) without items. */
static struct json_object *list_of(struct ectx *c, enum dom d, int nonempty, const char **why)
{
	const char *what = d > D_NONE && d < D_MULTI ? lists[d].what : "?";
	struct json_object *l = NULL;
	int obj = d == D_PORT || d == D_PEER;

	if (d > D_NONE && d < D_MULTI) {
		l = jx_get(c->facts, lists[d].key);
		if (lists[d].sub)
			l = jx_get(l, lists[d].sub);
		if (!l && (d == D_PEER || d == D_ONLOAD || d == D_RANK) &&
		    jx_get(c->facts, FK_SCHEMA)) {
			/* facts of a host without peers, Onload stacks or ranks
			 * (or from before them): none, an empty list, not an
			 * unknown one */
			static struct json_object *none[2];

			if (!none[d != D_PEER])
				none[d != D_PEER] = d != D_PEER ? json_object_new_array() :
							 json_object_new_object();
			l = none[d != D_PEER];
		}
		if (l && !json_object_is_type(l, obj ? json_type_object : json_type_array))
			l = NULL;
	}
	if (!l)
		*why = rl_afmt(c->ar, "%s missing", what);
	else if (nonempty && !jx_len(l))
		*why = rl_afmt(c->ar, "no %s recorded", what);
	else
		return l;
	return NULL;
}

/* Call fn(item) for each list item, with the context switched to it,
 * until fn returns non-zero. Returns -1 and why when the list is missing. */
typedef int (*item_fn)(struct ectx *c, void *st);

int rl_for_items(struct ectx *c, enum dom d, item_fn fn, void *st, const char **why)
{
	struct json_object *l = list_of(c, d, 0, why);
	struct ectx save = *c;
	int stop = 0;

	if (!l)
		return -1;
	c->dom = d;
	if (d == D_PORT || d == D_PEER) {
		unsigned k = 0;

		json_object_object_foreach(l, name, obj) {
			if (k++ >= MAX_ITEMS || stop)
				break;
			c->item = obj;
			c->iname = name;
			if (d == D_PORT) {
				c->port = json_object_is_type(obj, json_type_object) ? obj : NULL;
				c->portname = name;
				c->profile = rl_port_profile(obj);
			}
			stop = fn(c, st);
		}
	} else {
		size_t len = json_object_array_length(l);

		for (size_t i = 0; i < len && i < MAX_ITEMS && !stop; i++) {
			c->item = json_object_array_get_idx(l, i);
			c->iname = NULL;
			stop = fn(c, st);
		}
	}
	c->dom = save.dom;
	c->item = save.item;
	c->iname = save.iname;
	c->port = save.port;
	c->portname = save.portname;
	c->profile = save.profile;
	return 0;
}

struct qst {
	const struct node *n;
	int ntrue, nfalse, nunk;
	const char *why;
	struct val best;     /* first/sumof/maxof/minof */
	int have;
	char *join;          /* join(): the values so far */
	size_t jlen;
};

/* join(V, C): V of every item where C holds, ", " between them. */
static void q_join_add(struct ectx *c, struct qst *q)
{
	struct val v = rl_eval(c, q->n->args[0]);
	char buf[160];
	size_t n;
	char *j;

	if (v.t == V_STR)
		snprintf(buf, sizeof(buf), "%s", v.s);
	else if (v.t == V_NUM)
		snprintf(buf, sizeof(buf), "%.6g", v.n);
	else if (v.t == V_BOOL)
		snprintf(buf, sizeof(buf), "%s", v.n ? "true" : "false");
	else
		/* never a placeholder where a figure belongs: unknown, and
		 * why (classify.c val_text says it the same way) */
		snprintf(buf, sizeof(buf), "unknown (%.120s)", v.why ? v.why : "not recorded");
	n = strlen(buf);
	if (q->jlen > 4096)
		return;
	/* each value once: "rank1, rank3", not "rank1, rank1, rank3" */
	for (const char *p = q->join; p && *p;) {
		const char *e = strstr(p, ", ");
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && !memcmp(p, buf, n))
			return;
		p = e ? e + 2 : p + l;
	}
	j = realloc(q->join, q->jlen + n + 3);
	if (!j)
		return;
	if (q->jlen) {
		memcpy(j + q->jlen, ", ", 2);
		q->jlen += 2;
	}
	memcpy(j + q->jlen, buf, n + 1);
	q->jlen += n;
	q->join = j;
}

static int q_pred(struct ectx *c, void *p)
{
	struct qst *q = p;
	struct val v = rl_eval(c, q->n->args[q->n->fn == FN_FIRST || q->n->fn == FN_JOIN ? 1 : 0]);

	if (v.t == V_BOOL) {
		if (v.n) {
			q->ntrue++;
			if (q->n->fn == FN_JOIN) {
				q_join_add(c, q);
				return 0;
			}
			if (q->n->fn == FN_FIRST) {
				q->best = rl_eval(c, q->n->args[0]);
				q->have = 1;
				return 1;
			}
			return q->n->fn == FN_ANY;
		}
		q->nfalse++;
		return q->n->fn == FN_ALL;
	}
	if (!q->why)
		q->why = v.t == V_UNK ? v.why : "condition is not true or false";
	q->nunk++;
	return 0;
}

static int q_agg(struct ectx *c, void *p)
{
	struct qst *q = p;
	struct val v = rl_eval(c, q->n->args[0]);

	if (v.t != V_NUM) {
		if (!q->why)
			q->why = v.t == V_UNK ? v.why : "not a number";
		q->nunk++;
		return 0;
	}
	if (!q->have) {
		q->best = v;
		q->have = 1;
	} else if (q->n->fn == FN_SUMOF) {
		q->best = v_num(q->best.n + v.n);
		if (q->best.t == V_UNK)
			return 1;
	} else if ((q->n->fn == FN_MAXOF && v.n > q->best.n) ||
		   (q->n->fn == FN_MINOF && v.n < q->best.n)) {
		q->best = v;
	}
	return 0;
}

struct val rl_quant(struct ectx *c, const struct node *n)
{
	struct qst q = { .n = n };
	const char *why = NULL;
	int agg = n->fn == FN_SUMOF || n->fn == FN_MAXOF || n->fn == FN_MINOF;

	if (c->dom == n->dom)
		return v_unk("nested quantifier over the same list");
	if (rl_for_items(c, n->dom, agg ? q_agg : q_pred, &q, &why) < 0)
		return v_unk(why);
	switch (n->fn) {
	case FN_JOIN: {
		const char *s = rl_afmt(c->ar, "%s", q.join ? q.join : "");

		free(q.join);
		return q.nunk ? v_unk(q.why) : v_str(s);
	}
	case FN_ANY:
		if (q.ntrue)
			return v_bool(1);
		return q.nunk ? v_unk(q.why) : v_bool(0);
	case FN_ALL:
		if (q.nfalse)
			return v_bool(0);
		return q.nunk ? v_unk(q.why) : v_bool(1);
	case FN_COUNT:
		return q.nunk ? v_unk(q.why) : v_num(q.ntrue);
	case FN_FIRST:
		if (q.have)
			return q.best;
		return v_unk(q.nunk ? q.why : rl_afmt(c->ar, "no %s matches", rl_dom_name[n->dom]));
	case FN_SUMOF:
		if (q.have && q.best.t == V_UNK)
			return q.best;
		if (q.nunk)
			return v_unk(q.why);
		return q.have ? q.best : v_num(0);
	default:
		if (q.have)
			return q.best;
		return v_unk(q.nunk ? q.why : rl_afmt(c->ar, "no %s", rl_dom_name[n->dom]));
	}
}

/* Sum of a numeric field over a list (ping.sent outside a quantifier). */
static struct val list_sum(struct ectx *c, enum dom d, const char *field)
{
	const char *why;
	struct json_object *l = list_of(c, d, 1, &why);
	double sum = 0, x;
	size_t len;

	if (!l)
		return v_unk(why);
	len = json_object_array_length(l);
	for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
		if (!jx_num(jx_get(json_object_array_get_idx(l, i), field), &x))
			return v_unk(rl_afmt(c->ar, "%s[%zu].%s missing or bad", lists[d].what, i, field));
		sum += x;
	}
	return v_num(sum);
}

/* The facts that are one value at a path of the facts object. */
#define PATH2(a, b)    { { a, b, NULL }, a "." b }
#define PATH3(a, b, c) { { a, b, c }, a "." b "." c }
static const struct { const char *key[3], *text; } fact_paths[] = {
	[F_HELD_UNSENT] = PATH3(FK_FLOWS, FK_F_HELD, FK_H_UNSENT),
	[F_HELD_UNREAD] = PATH3(FK_FLOWS, FK_F_HELD, FK_H_UNREAD),
	[F_HELD_STAGED] = PATH3(FK_FLOWS, FK_F_HELD, FK_H_STAGED),
	[F_FLOWS_STALLED] = PATH2(FK_FLOWS, FK_F_STALLED),
	[F_FLOWS_PROGRESSING] = PATH2(FK_FLOWS, FK_F_PROGRESSING),
	[F_FLOWS_RETRANS] = PATH2(FK_FLOWS, FK_F_RETRANS),
	[F_RELEASED] = PATH2(FK_RELEASE, FK_R_RELEASED),
	[F_RELEASE_ACTION] = PATH2(FK_RELEASE, FK_R_ACTION),
	[F_RELEASE_AFTER_MS] = PATH2(FK_RELEASE, FK_R_AFTER_MS),
	[F_PM_OK] = PATH2(FK_PING_MTU, FK_PM_OK),
	[F_PM_FROM] = PATH2(FK_PING_MTU, FK_PG_FROM),
	[F_PM_TO] = PATH2(FK_PING_MTU, FK_PG_TO),
	[F_PM_SIZE] = PATH2(FK_PING_MTU, FK_PM_SIZE),
	[F_PM_SMALL] = PATH2(FK_PING_MTU, FK_PM_SMALL),
	[F_PM_SENT] = PATH2(FK_PING_MTU, FK_PG_SENT),
	[F_PM_RECEIVED] = PATH2(FK_PING_MTU, FK_PG_RECEIVED),
	[F_PM_ERROR] = PATH2(FK_PING_MTU, FK_PM_ERROR),
};

/* Of the current port: profile, driver, firmware, psid, link_up. */
static struct val port_fact(struct ectx *c, enum fact f)
{
	static const char *const k[] = {
		FK_P_PROFILE, FK_P_DRIVER, FK_P_FIRMWARE, FK_P_PSID, FK_P_LINK_UP,
	};
	const char *key = k[f - F_PROFILE];

	if (!c->port)
		return v_unk(rl_port_missing(c, c->portname));
	return jval(c, jx_get(c->port, key), rl_afmt(c->ar, FK_PORTS ".%s.%s", c->portname, key));
}

/* unsent + unread + staged (those there), each a count. */
static struct val held(struct ectx *c)
{
	static const char *const k[] = { FK_H_UNSENT, FK_H_UNREAD, FK_H_STAGED };
	struct json_object *h = jx_obj(jx_get(c->facts, FK_FLOWS), FK_F_HELD), *j;
	double sum = 0, x;
	int any = 0;

	if (!h)
		return v_unk("flows.held missing");
	for (int i = 0; i < 3; i++) {
		j = jx_get(h, k[i]);
		if (!j)
			continue;
		if (!jx_num(j, &x) || x < 0)
			return v_unk(rl_afmt(c->ar, "flows.held.%s is not a count", k[i]));
		sum += x;
		any = 1;
	}
	return any ? v_num(sum) : v_unk("flows.held has no unsent, unread or staged");
}

/* Every ping that sent got a reply: false when one got none. */
static struct val ping_ok(struct ectx *c)
{
	const char *why = NULL;
	struct json_object *l = list_of(c, D_PING, 1, &why);
	size_t len = jx_len(l);
	int bad = 0;

	if (!l)
		return v_unk(why);
	for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
		struct json_object *p = json_object_array_get_idx(l, i);
		double rcv, snt;

		if (!jx_num(jx_get(p, FK_PG_RECEIVED), &rcv) || !jx_num(jx_get(p, FK_PG_SENT), &snt) ||
		    snt < 1) {
			if (!why)
				why = rl_afmt(c->ar, "pings[%zu]: sent/received missing or none sent", i);
			continue;
		}
		if (rcv < 1)
			bad = 1;
	}
	if (bad)
		return v_bool(0);
	return why ? v_unk(why) : v_bool(1);
}

struct val rl_fact(struct ectx *c, const struct node *n)
{
	struct json_object *l, *j;
	const char *why;

	switch (n->fact) {
	case F_PORT:
		if (!c->portname)
			return v_unk("port missing");
		return v_str(c->portname);
	case F_PROFILE:
	case F_DRIVER:
	case F_FIRMWARE:
	case F_PSID:
	case F_LINK_UP:
		return port_fact(c, n->fact);
	case F_HELD:
		return held(c);
	case F_PING_OK:
		return ping_ok(c);
	case F_PING_COUNT:
	case F_CAPTURE_COUNT:
		l = list_of(c, n->fact == F_PING_COUNT ? D_PING : D_CAPTURE, 0, &why);
		return l ? v_num((double)json_object_array_length(l)) : v_unk(why);
	default:
		if ((size_t)n->fact >= sizeof(fact_paths) / sizeof(fact_paths[0]) ||
		    !fact_paths[n->fact].text)
			return v_unk("bad fact");
		j = c->facts;
		for (int i = 0; i < 3 && fact_paths[n->fact].key[i]; i++)
			j = jx_get(j, fact_paths[n->fact].key[i]);
		return jval(c, j, fact_paths[n->fact].text);
	}
}

struct val rl_field(struct ectx *c, const struct node *n)
{
	if (c->dom != n->dom) {
		if (n->dual)
			return list_sum(c, n->dom, n->str);
		return v_unk(rl_afmt(c->ar, "%s.%s outside a quantifier", rl_dom_name[n->dom], n->str));
	}
	if (n->dom == D_PORT && !strcmp(n->str, "name"))
		return v_str(c->iname ? c->iname : "");
	if (!c->item || !json_object_is_type(c->item, json_type_object))
		return v_unk(rl_afmt(c->ar, "a %s item is not an object", rl_dom_name[n->dom]));
	return jval(c, jx_get(c->item, n->str), rl_afmt(c->ar, "%s.%s", rl_dom_name[n->dom], n->str));
}
