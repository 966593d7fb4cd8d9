/* classify: try every rule in order on the facts and write the result
 * object: the verdict, the winner's terms with every value they read and,
 * for each other rule, the term that ruled it out (rules.h RK_*). */
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

static struct json_object *val_json(struct val v)
{
	switch (v.t) {
	case V_NUM:
		if (v.n == floor(v.n) && fabs(v.n) < 9e15)
			return json_object_new_int64((int64_t)v.n);
		return json_object_new_double(v.n);
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
		if (v.n == floor(v.n) && fabs(v.n) < 1e15)
			snprintf(buf, len, "%.0f", v.n);
		else if (fabs(v.n) < 1e6)
			snprintf(buf, len, "%.6g", v.n);
		else
			snprintf(buf, len, "%.6g", v.n);
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
		snprintf(buf, len, "?");
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

/* Record every leaf value a term reads: lets, facts, periods, calls. */
static void collect(struct ectx *c, const struct node *n, struct json_object *values,
		    struct json_object *unknown)
{
	struct val v;
	const char *key;

	if (!n)
		return;
	switch (n->k) {
	case N_NUM: case N_BOOL: case N_STR: case N_COUNTER: case N_SUMGLOB:
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
		json_object_object_add(unknown, key, json_object_new_string(v.why ? v.why : "unknown"));
}

static struct json_object *jstr_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

struct json_object *rules_classify(const struct rules *r, struct json_object *facts)
{
	struct arena ar = { 0 };
	struct ectx c = { .r = r, .facts = facts, .ar = &ar };
	struct json_object *out = json_object_new_object(), *terms, *nots;
	struct json_object *pn;
	struct val *vals = NULL;
	size_t *first_bad = NULL, win = (size_t)-1, nrules = r ? r->nrules : 0;
	size_t vbase = 0, nvals = 0;

	if (!out)
		return NULL;
	pn = jx_get(facts, "port");
	if (pn && json_object_is_type(pn, json_type_string)) {
		c.portname = json_object_get_string(pn);
		c.port = jx_get(jx_get(facts, "ports"), c.portname);
		if (c.port && !json_object_is_type(c.port, json_type_object))
			c.port = NULL;
	}
	c.profile = rl_port_profile(c.port);

	for (size_t i = 0; i < nrules; i++)
		nvals += r->rules[i]->nterm;
	vals = calloc(nvals ? nvals : 1, sizeof(*vals));
	first_bad = calloc(nrules ? nrules : 1, sizeof(*first_bad));
	if (!vals || !first_bad) {
		free(vals);
		free(first_bad);
		json_object_put(out);
		return NULL;
	}
	/* every rule, every term: the winner is the first rule all true */
	for (size_t i = 0; i < nrules; i++) {
		const struct rule *ru = r->rules[i];
		size_t fb = (size_t)-1, fu = (size_t)-1;

		for (unsigned t = 0; t < ru->nterm; t++) {
			struct val v = rl_eval(&c, ru->terms[t]);

			if (v.t != V_UNK && v.t != V_BOOL)
				v = v_unk(rl_afmt(&ar, "'%s' is not true or false", ru->terms[t]->text));
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

	terms = json_object_new_array();
	nots = json_object_new_array();
	if (win != (size_t)-1) {
		const struct rule *ru = r->rules[win];
		char *ex = ru->explain.n ? render(&c, &ru->explain) : NULL;
		char *ac = ru->action.n ? render(&c, &ru->action) : NULL;

		json_object_object_add(out, "verdict", json_object_new_string(ru->verdict));
		json_object_object_add(out, "rule", json_object_new_string(ru->name));
		json_object_object_add(out, "file", json_object_new_string(ru->file));
		json_object_object_add(out, "line", json_object_new_int((int)ru->line));
		json_object_object_add(out, "explanation", json_object_new_string(ex ? ex : ru->verdict));
		json_object_object_add(out, "action", jstr_or_null(ac));
		free(ex);
		free(ac);
		for (unsigned t = 0; t < ru->nterm; t++) {
			struct json_object *o = json_object_new_object();
			struct json_object *vs = json_object_new_object();

			json_object_object_add(o, "expr", json_object_new_string(ru->terms[t]->text));
			json_object_object_add(o, "value", json_object_new_boolean(1));
			collect(&c, ru->terms[t], vs, NULL);
			json_object_object_add(o, "values", vs);
			json_object_array_add(terms, o);
		}
	} else {
		json_object_object_add(out, "verdict", json_object_new_string("unknown"));
		json_object_object_add(out, "rule", NULL);
		json_object_object_add(out, "file", NULL);
		json_object_object_add(out, "line", json_object_new_int(0));
		json_object_object_add(out, "explanation", json_object_new_string(
			"no rule matched: every rule below was ruled out or could not be decided; "
			"the bundle holds every piece of evidence"));
		json_object_object_add(out, "action", json_object_new_string(
			"read the bundle (counters, flows, threads, pings, captures) and the terms "
			"that could not be decided"));
	}
	json_object_object_add(out, "terms", terms);

	vbase = 0;
	for (size_t i = 0; i < nrules; i++) {
		const struct rule *ru = r->rules[i];
		struct json_object *o;

		if (i == win) {
			vbase += ru->nterm;
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "verdict", json_object_new_string(ru->verdict));
		json_object_object_add(o, "rule", json_object_new_string(ru->name));
		json_object_object_add(o, "file", json_object_new_string(ru->file));
		json_object_object_add(o, "line", json_object_new_int((int)ru->line));
		if (first_bad[i] == (size_t)-1) {
			/* it holds too, but an earlier rule won */
			json_object_object_add(o, "matched", json_object_new_boolean(1));
			json_object_object_add(o, "failed", NULL);
		} else {
			const struct node *tn = ru->terms[first_bad[i]];
			struct val v = vals[vbase + first_bad[i]];
			struct json_object *vs = json_object_new_object();
			struct json_object *un = json_object_new_object();

			json_object_object_add(o, "failed", json_object_new_string(tn->text));
			json_object_object_add(o, "value", val_json(v));
			collect(&c, tn, vs, un);
			json_object_object_add(o, "values", vs);
			if (v.t == V_UNK && !json_object_object_length(un))
				json_object_object_add(un, tn->text,
						       json_object_new_string(v.why ? v.why : "unknown"));
			if (json_object_object_length(un))
				json_object_object_add(o, "unknown", un);
			else
				json_object_put(un);
		}
		json_object_array_add(nots, o);
		vbase += ru->nterm;
	}
	json_object_object_add(out, "not", nots);
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
