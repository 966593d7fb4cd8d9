/* classify: try every rule in order on the facts and write the result
 * object: the verdict, the winner's terms with every value they read and,
 * for each other rule, the term that ruled it out (rules.h RK_*). */
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "rules/facts.h"

static struct json_object *val_json(struct val v)
{
	switch (v.t) {
	case V_NUM:
		if (v.n == floor(v.n) && fabs(v.n) < 9e15)
			return json_object_new_int64((int64_t)v.n);
		/* a term's value, read by people in the manifest and by
		 * classify --explain: four significant digits, as the summary
		 * prints them (the facts keep their own precision) */
		return jx_new_sig(v.n, 4);
	case V_BOOL:
		return json_object_new_boolean(v.n != 0);
	case V_STR:
		return json_object_new_string(v.s);
	default:
		return NULL;
	}
}

static void val_text(struct val v, char *buf, size_t len)
{
	switch (v.t) {
	case V_NUM:
		/* figures a reader trusts: counts as integers, other values
		 * with one decimal (two significant digits below 1), never
		 * "4.35303" or "0.648292" */
		if (v.n == floor(v.n) && fabs(v.n) < 1e15)
			snprintf(buf, len, "%.0f", v.n);
		else if (fabs(v.n) >= 1e15)
			snprintf(buf, len, "%.3g", v.n);
		else if (fabs(v.n) >= 1)
			snprintf(buf, len, "%.1f", v.n);
		else
			snprintf(buf, len, "%.2g", v.n);
		break;
	case V_BOOL:
		snprintf(buf, len, "%s", v.n ? "true" : "false");
		break;
	case V_STR: {
		size_t o = 0;

		/* one line, bounded: facts are hostile */
		for (const char *s = v.s; *s && o + 4 < len && o < MAX_SUBST; s++)
			buf[o++] = (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
		if (o + 4 < len && strlen(v.s) > o) {
			memcpy(buf + o, "...", 3);
			o += 3;
		}
		buf[o] = '\0';
		break;
	}
	default:
		/* never a placeholder: unknown, and why (the missing fact) */
		snprintf(buf, len, "unknown (%.*s)", (int)(len > 16 ? len - 16 : 0), v.why ? v.why : "not recorded");
	}
}

static char *render(struct ectx *c, const struct tmpl *tm)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (unsigned i = 0; i < tm->n; i++) {
		if (tm->p[i].lit) {
			fputs(tm->p[i].lit, f);
		} else if (tm->p[i].e) {
			char buf[MAX_SUBST + 8];

			val_text(rl_eval(c, tm->p[i].e), buf, sizeof(buf));
			fputs(buf, f);
		}
	}
	if (fclose(f))
		return NULL;
	return out;
}

static const char *why_of(struct val v)
{
	return v.why ? v.why : "unknown";
}

/* Does n read a peer item (peer.X, peer.P.S), through its lets too? */
static int peer_dep(const struct node *n, int depth)
{
	if (!n || depth > MAX_EDEPTH)
		return 0;
	switch (n->k) {
	case N_FIELD:
	case N_PERIOD:
		return n->dom == D_PEER && !n->peer;
	case N_LET:
		return peer_dep(n->let, depth + 1);
	case N_CALL:
		if (rl_fns_tab[n->fn].quant)
			return 0;
		for (unsigned i = 0; i < n->nargs; i++)
			if (peer_dep(n->args[i], depth + 1))
				return 1;
		return 0;
	default:
		return peer_dep(n->a, depth + 1) || peer_dep(n->b, depth + 1);
	}
}

struct pcoll {
	const struct node *q;
	struct json_object *values;
};

/* The leaves of n that read the current peer item, each into
 * values[leaf] = {PEER: value}: the peers' own numbers, for "what it is
 * not" to name. */
static void peer_leaves(struct ectx *c, const struct node *n, struct json_object *values,
			int depth)
{
	struct json_object *per;
	const char *key;

	if (!n || depth > MAX_EDEPTH || !peer_dep(n, 0))
		return;
	switch (n->k) {
	case N_UN: case N_BIN:
		peer_leaves(c, n->a, values, depth + 1);
		peer_leaves(c, n->b, values, depth + 1);
		return;
	case N_CALL:
		if (!rl_fns_tab[n->fn].quant && n->fn != FN_IF && n->fn != FN_DEFAULT) {
			for (unsigned i = 0; i < n->nargs; i++)
				peer_leaves(c, n->args[i], values, depth + 1);
			return;
		}
		break;
	default:
		break;
	}
	key = n->k == N_LET ? n->str : n->text;
	if (!key)
		return;
	per = jx_get(values, key);
	if (!per) {
		per = json_object_new_object();
		json_object_object_add(values, key, per);
	}
	if (!json_object_is_type(per, json_type_object) || jx_get(per, c->iname))
		return;
	json_object_object_add(per, c->iname, val_json(rl_eval(c, n)));
}

static int peer_item(struct ectx *c, void *arg)
{
	struct pcoll *pc = arg;

	for (unsigned i = 0; i < pc->q->nargs; i++)
		peer_leaves(c, pc->q->args[i], pc->values, 0);
	return 0;
}

/* Record every leaf value a term reads: lets, facts, periods, calls. */
static void collect(struct ectx *c, const struct node *n, struct json_object *values,
		    struct json_object *unknown)
{
	struct val v;
	const char *key;

	if (!n)
		return;
	switch (n->k) {
	case N_NUM: case N_BOOL: case N_STR: case N_COUNTER: case N_SUMGLOB: case N_WHICHGLOB:
		return;
	case N_UN: case N_BIN:
		collect(c, n->a, values, unknown);
		collect(c, n->b, values, unknown);
		return;
	default:
		break;
	}
	key = n->k == N_LET ? n->str : n->text;
	if (!key || jx_get(values, key))
		return;
	v = rl_eval(c, n);
	json_object_object_add(values, key, val_json(v));
	if (v.t == V_UNK && unknown && !jx_get(unknown, key))
		jx_add_str(unknown, key, why_of(v));
	if (n->k == N_CALL && rl_fns_tab[n->fn].quant && n->dom == D_PEER && c->dom != D_PEER) {
		struct pcoll pc = { n, values };
		const char *why;

		rl_for_items(c, D_PEER, peer_item, &pc, &why);
	}
}

/* Every term of every rule, in order, into vals; first_bad[i]: rule i's
 * first false term, else its first unknown one, else -1. Returns the
 * winner, the first rule whose terms all hold, or -1. */
static size_t eval_rules(struct ectx *c, const struct rules *r, struct val *vals,
			 size_t *first_bad)
{
	size_t win = (size_t)-1, vbase = 0;

	for (size_t i = 0; i < r->nrules; i++) {
		const struct rule *ru = r->rules[i];
		size_t fb = (size_t)-1, fu = (size_t)-1;

		for (unsigned t = 0; t < ru->nterm; t++) {
			struct val v = rl_eval(c, ru->terms[t]);

			if (v.t != V_UNK && v.t != V_BOOL)
				v = v_unk(rl_afmt(c->ar, "'%s' is not true or false", ru->terms[t]->text));
			vals[vbase + t] = v;
			if (v.t == V_BOOL && !v.n && fb == (size_t)-1)
				fb = t;
			if (v.t == V_UNK && fu == (size_t)-1)
				fu = t;
		}
		first_bad[i] = fb != (size_t)-1 ? fb : fu;
		if (first_bad[i] == (size_t)-1 && win == (size_t)-1)
			win = i;
		vbase += ru->nterm;
	}
	return win;
}

static void add_rule_head(struct json_object *o, const struct rule *ru)
{
	jx_add_str(o, RK_VERDICT, ru->verdict);
	jx_add_str(o, RK_RULE, ru->name);
	jx_add_str(o, RK_FILE, ru->file);
	json_object_object_add(o, RK_LINE, json_object_new_int((int)ru->line));
}

/* The winner: its head, explanation, action, and every term's values. */
static void add_winner(struct ectx *c, struct json_object *out, struct json_object *terms,
		       const struct rule *ru)
{
	char *ex = ru->explain.n ? render(c, &ru->explain) : NULL;
	char *ac = ru->action.n ? render(c, &ru->action) : NULL;

	add_rule_head(out, ru);
	jx_add_str(out, RK_EXPLANATION, ex ? ex : ru->verdict);
	json_object_object_add(out, RK_ACTION, ac ? json_object_new_string(ac) : NULL);
	free(ex);
	free(ac);
	for (unsigned t = 0; t < ru->nterm; t++) {
		struct json_object *o = json_object_new_object();
		struct json_object *vs = json_object_new_object();

		jx_add_str(o, RK_EXPR, ru->terms[t]->text);
		jx_add_bool(o, RK_VALUE, 1);
		collect(c, ru->terms[t], vs, NULL);
		json_object_object_add(o, RK_VALUES, vs);
		json_object_array_add(terms, o);
	}
}

static void add_no_winner(struct json_object *out)
{
	jx_add_str(out, RK_VERDICT, RULES_VERDICT_UNKNOWN);
	json_object_object_add(out, RK_RULE, NULL);
	json_object_object_add(out, RK_FILE, NULL);
	json_object_object_add(out, RK_LINE, json_object_new_int(0));
	jx_add_str(out, RK_EXPLANATION,
		   "no rule matched: every rule below was ruled out or could not be decided; "
		   "the bundle holds every piece of evidence");
	jx_add_str(out, RK_ACTION,
		   "read the bundle (counters, flows, threads, pings, captures) and the terms "
		   "that could not be decided");
}

/* A rule that did not win: the term that ruled it out (bad: its index, -1
 * when it holds too) with its value (vals: the rule's term values) and
 * the values it read. */
static struct json_object *not_entry(struct ectx *c, const struct rule *ru, size_t bad,
				     const struct val *vals)
{
	struct json_object *o = json_object_new_object();
	const struct node *tn;
	struct json_object *vs, *un;
	struct val v;

	add_rule_head(o, ru);
	if (bad == (size_t)-1) {
		/* it holds too, but an earlier rule won */
		jx_add_bool(o, RK_MATCHED, 1);
		json_object_object_add(o, RK_FAILED, NULL);
		return o;
	}
	tn = ru->terms[bad];
	v = vals[bad];
	vs = json_object_new_object();
	un = json_object_new_object();
	jx_add_str(o, RK_FAILED, tn->text);
	json_object_object_add(o, RK_VALUE, val_json(v));
	/* a rule decided false says in its own words what the facts were */
	if (v.t == V_BOOL && ru->ruled_out.n) {
		char *t = render(c, &ru->ruled_out);

		if (t)
			jx_add_str(o, RK_TEXT, t);
		free(t);
	}
	collect(c, tn, vs, un);
	json_object_object_add(o, RK_VALUES, vs);
	if (v.t == V_UNK && !json_object_object_length(un))
		jx_add_str(un, tn->text, why_of(v));
	if (json_object_object_length(un))
		json_object_object_add(o, RK_UNKNOWN, un);
	else
		json_object_put(un);
	return o;
}

struct json_object *rules_classify(const struct rules *r, struct json_object *facts)
{
	static const struct rules none;
	struct arena ar = { 0 };
	struct ectx c = { .r = r, .facts = facts, .ar = &ar };
	struct json_object *out = json_object_new_object(), *terms, *nots;
	const char *pn = jx_str(facts, FK_PORT);
	struct val *vals = NULL;
	size_t *first_bad = NULL, win, vbase = 0, nvals = 0;

	if (!out)
		return NULL;
	if (!r)
		r = c.r = &none;
	if (pn) {
		c.portname = pn;
		c.port = jx_obj(jx_get(facts, FK_PORTS), pn);
	}
	c.profile = rl_port_profile(c.port);

	for (size_t i = 0; i < r->nrules; i++)
		nvals += r->rules[i]->nterm;
	vals = calloc(nvals ? nvals : 1, sizeof(*vals));
	first_bad = calloc(r->nrules ? r->nrules : 1, sizeof(*first_bad));
	if (!vals || !first_bad) {
		free(vals);
		free(first_bad);
		json_object_put(out);
		return NULL;
	}
	win = eval_rules(&c, r, vals, first_bad);

	terms = json_object_new_array();
	nots = json_object_new_array();
	if (win != (size_t)-1)
		add_winner(&c, out, terms, r->rules[win]);
	else
		add_no_winner(out);
	json_object_object_add(out, RK_TERMS, terms);
	for (size_t i = 0; i < r->nrules; i++) {
		const struct rule *ru = r->rules[i];

		if (i != win)
			json_object_array_add(nots, not_entry(&c, ru, first_bad[i], vals + vbase));
		vbase += ru->nterm;
	}
	json_object_object_add(out, RK_NOT, nots);
	free(vals);
	free(first_bad);
	rl_arena_free(&ar);
	return out;
}

int rules_signal(const struct rules *r, const char *profile, const char *signal,
		 struct json_object *counters, double *out)
{
	struct arena ar = { 0 };
	struct val v;

	if (!r || !signal || !out)
		return -1;
	v = rl_sig_value(r, profile, signal, counters, 0, &ar);
	rl_arena_free(&ar);
	if (v.t != V_NUM)
		return -1;
	*out = v.n;
	return 0;
}
