/* eval_facts: reading the incident facts for the evaluator: named facts,
 * the periods of a port, list items and the quantifiers over them. Facts
 * may be hostile: a missing or mistyped value is unknown, with why. */
#include "rules/rules_int.h"

#include <string.h>

#include "lib/json.h"

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
	struct json_object *p = jx_get(port, "profile");

	if (p && json_object_is_type(p, json_type_string))
		return json_object_get_string(p);
	return "generic";
}

/* Span of a period of a port; 0 and why when missing. */
int rl_period_span(struct ectx *c, struct json_object *port, const char *pname,
		       enum per per, double *span, const char **why)
{
	struct json_object *pj = jx_get(port, rl_per_name[per]);

	if (!port) {
		*why = rl_afmt(c->ar, "port %s missing", pname ? pname : "?");
		return -1;
	}
	if (!pj) {
		*why = rl_afmt(c->ar, "ports.%s.%s missing", pname, rl_per_name[per]);
		return -1;
	}
	if (!jx_num(jx_get(pj, "span_s"), span) || *span < 0) {
		*why = rl_afmt(c->ar, "ports.%s.%s.span_s missing or bad", pname, rl_per_name[per]);
		return -1;
	}
	return 0;
}

struct val rl_period_sig(struct ectx *c, struct json_object *port, const char *pname,
			     enum per per, const char *sig)
{
	struct json_object *pj = jx_get(port, rl_per_name[per]);
	struct val v;

	if (!port)
		return v_unk(rl_afmt(c->ar, "port %s missing", pname ? pname : "?"));
	if (!pj)
		return v_unk(rl_afmt(c->ar, "ports.%s.%s missing", pname, rl_per_name[per]));
	v = rl_sig_value(c->r, rl_port_profile(port), sig, jx_get(pj, "counters"), c->depth, c->ar);
	if (v.t == V_UNK)
		v.why = rl_afmt(c->ar, "ports.%s.%s: %s", pname, rl_per_name[per], v.why);
	return v;
}

static struct json_object *dom_list(struct ectx *c, enum dom d, const char **what)
{
	struct json_object *l = NULL;
	enum json_type want = json_type_array;

	switch (d) {
	case D_THREAD: l = jx_get(c->facts, "threads"); *what = "threads"; break;
	case D_FLOW: l = jx_get(jx_get(c->facts, "flows"), "list"); *what = "flows.list"; break;
	case D_PING: l = jx_get(c->facts, "pings"); *what = "pings"; break;
	case D_CAPTURE: l = jx_get(c->facts, "captures"); *what = "captures"; break;
	case D_PORT: l = jx_get(c->facts, "ports"); *what = "ports"; want = json_type_object; break;
	default: *what = "?"; return NULL;
	}
	if (l && !json_object_is_type(l, want))
		return NULL;
	return l;
}

/* Call fn(item) for each list item, with the context switched to it.
 * Returns -1 when the list is missing. */
typedef int (*item_fn)(struct ectx *c, void *st);

static int for_items(struct ectx *c, enum dom d, item_fn fn, void *st, const char **why)
{
	const char *what;
	struct json_object *l = dom_list(c, d, &what);
	struct ectx save = *c;
	int stop = 0;

	if (!l) {
		*why = rl_afmt(c->ar, "%s missing", what);
		return -1;
	}
	c->dom = d;
	if (d == D_PORT) {
		unsigned k = 0;

		json_object_object_foreach(l, name, obj) {
			if (k++ >= MAX_ITEMS || stop)
				break;
			c->item = obj;
			c->iname = name;
			c->port = json_object_is_type(obj, json_type_object) ? obj : NULL;
			c->portname = name;
			c->profile = rl_port_profile(obj);
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
};

static int q_pred(struct ectx *c, void *p)
{
	struct qst *q = p;
	struct val v = rl_eval(c, q->n->args[q->n->fn == FN_FIRST ? 1 : 0]);

	if (v.t == V_BOOL) {
		if (v.n) {
			q->ntrue++;
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
	if (for_items(c, n->dom, agg ? q_agg : q_pred, &q, &why) < 0)
		return v_unk(why);
	switch (n->fn) {
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
	const char *what;
	struct json_object *l = dom_list(c, d, &what);
	double sum = 0, x;
	size_t len;

	if (!l)
		return v_unk(rl_afmt(c->ar, "%s missing", what));
	len = json_object_array_length(l);
	if (!len)
		return v_unk(rl_afmt(c->ar, "no %s recorded", what));
	for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
		if (!jx_num(jx_get(json_object_array_get_idx(l, i), field), &x))
			return v_unk(rl_afmt(c->ar, "%s[%zu].%s missing or bad", what, i, field));
		sum += x;
	}
	return v_num(sum);
}

struct val rl_fact(struct ectx *c, const struct node *n)
{
	struct json_object *f = c->facts, *j;
	double x;

	switch (n->fact) {
	case F_PORT:
		if (!c->portname)
			return v_unk("port missing");
		return v_str(c->portname);
	case F_PROFILE:
	case F_DRIVER:
	case F_FIRMWARE:
	case F_PSID:
	case F_LINK_UP: {
		static const char *const k[] = { "profile", "driver", "firmware", "psid", "link_up" };
		const char *key = k[n->fact - F_PROFILE];

		if (!c->port)
			return v_unk(rl_afmt(c->ar, "port %s missing", c->portname ? c->portname : "?"));
		return jval(c, jx_get(c->port, key), rl_afmt(c->ar, "ports.%s.%s", c->portname, key));
	}
	case F_HELD: {
		static const char *const k[] = { "unsent", "unread", "staged" };
		struct json_object *h = jx_get(jx_get(f, "flows"), "held");
		double sum = 0;
		int any = 0;

		if (!h || !json_object_is_type(h, json_type_object))
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
	case F_HELD_UNSENT:
		return jval(c, jx_get(jx_get(jx_get(f, "flows"), "held"), "unsent"), "flows.held.unsent");
	case F_HELD_UNREAD:
		return jval(c, jx_get(jx_get(jx_get(f, "flows"), "held"), "unread"), "flows.held.unread");
	case F_HELD_STAGED:
		return jval(c, jx_get(jx_get(jx_get(f, "flows"), "held"), "staged"), "flows.held.staged");
	case F_FLOWS_STALLED:
		return jval(c, jx_get(jx_get(f, "flows"), "stalled"), "flows.stalled");
	case F_FLOWS_PROGRESSING:
		return jval(c, jx_get(jx_get(f, "flows"), "progressing"), "flows.progressing");
	case F_PING_OK: {
		struct json_object *l = jx_get(f, "pings");
		size_t len;
		const char *why = NULL;
		int bad = 0;

		if (!l || !json_object_is_type(l, json_type_array))
			return v_unk("pings missing");
		len = json_object_array_length(l);
		if (!len)
			return v_unk("no pings recorded");
		for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
			struct json_object *p = json_object_array_get_idx(l, i);
			double rcv, snt;

			if (!jx_num(jx_get(p, "received"), &rcv) || !jx_num(jx_get(p, "sent"), &snt) ||
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
	case F_PING_COUNT:
	case F_CAPTURE_COUNT: {
		const char *key = n->fact == F_PING_COUNT ? "pings" : "captures";
		struct json_object *l = jx_get(f, key);

		if (!l || !json_object_is_type(l, json_type_array))
			return v_unk(rl_afmt(c->ar, "%s missing", key));
		return v_num((double)json_object_array_length(l));
	}
	case F_RELEASED:
		return jval(c, jx_get(jx_get(f, "release"), "released"), "release.released");
	case F_RELEASE_ACTION:
		return jval(c, jx_get(jx_get(f, "release"), "action"), "release.action");
	case F_RELEASE_AFTER_MS:
		return jval(c, jx_get(jx_get(f, "release"), "after_ms"), "release.after_ms");
	}
	return v_unk("bad fact");
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

