/* parse_expr: expressions, by recursive descent: names (lets, facts,
 * periods, list fields, signals), calls, operators by precedence; and the
 * checks that a list field is used inside a quantifier of its list. */
#include "rules/rules_int.h"

#include <stdlib.h>
#include <string.h>

static struct node *mk(struct pstate *ps, enum nk k, const struct tok *t)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n) {
		ps->oom = 1;
		return NULL;
	}
	n->k = k;
	n->file = ps->path;
	n->line = t->line;
	n->col = t->col;
	return n;
}

static struct node *finish(struct pstate *ps, struct node *n, size_t first)
{
	if (!n)
		return NULL;
	free(n->text);
	n->text = rl_span_text(ps, first);
	if (!n->text) {
		ps->oom = 1;
		rl_node_free(n);
		return NULL;
	}
	return n;
}

static int add_use(struct pstate *ps, const char *name, const struct tok *t)
{
	struct siguse *u = realloc(ps->r->uses, (ps->r->nuses + 1) * sizeof(*u));

	if (!u) {
		ps->oom = 1;
		return -1;
	}
	ps->r->uses = u;
	u[ps->r->nuses].name = strdup(name);
	if (!u[ps->r->nuses].name) {
		ps->oom = 1;
		return -1;
	}
	u[ps->r->nuses].file = ps->path;
	u[ps->r->nuses].line = t->line;
	u[ps->r->nuses].col = t->col;
	ps->r->nuses++;
	return 0;
}

static enum dom dom_join(enum dom a, enum dom b)
{
	if (a == D_NONE)
		return b;
	if (b == D_NONE || a == b)
		return a;
	return D_MULTI;
}

/* The list-item domain an expression speaks of, outside nested quantifiers. */
static enum dom expr_dom(const struct node *n, int depth)
{
	enum dom d = D_NONE;

	if (!n || depth > MAX_EDEPTH)
		return D_NONE;
	switch (n->k) {
	case N_FIELD:
	case N_PERIOD:
		return n->peer ? D_NONE : n->dom;      /* peer.NAME.X is no list item */
	case N_LET:
		return expr_dom(n->let, depth + 1);
	case N_CALL:
		if (rl_fns_tab[n->fn].quant)
			return D_NONE;
		for (unsigned i = 0; i < n->nargs; i++)
			d = dom_join(d, expr_dom(n->args[i], depth + 1));
		return d;
	default:
		d = dom_join(expr_dom(n->a, depth + 1), expr_dom(n->b, depth + 1));
		return d;
	}
}

/* First item-only reference outside any quantifier, or NULL. */
static const struct node *free_field(const struct node *n, int depth)
{
	const struct node *f;

	if (!n || depth > MAX_EDEPTH)
		return NULL;
	switch (n->k) {
	case N_FIELD:
		return n->dual || n->peer ? NULL : n;
	case N_PERIOD:
		return (n->dom == D_PORT || n->dom == D_PEER) && !n->peer ? n : NULL;
	case N_LET:
		return free_field(n->let, depth + 1);
	case N_CALL:
		if (rl_fns_tab[n->fn].quant)
			return NULL;
		for (unsigned i = 0; i < n->nargs; i++)
			if ((f = free_field(n->args[i], depth + 1)))
				return f;
		return NULL;
	default:
		if ((f = free_field(n->a, depth + 1)))
			return f;
		return free_field(n->b, depth + 1);
	}
}

int rl_check_free(struct pstate *ps, const struct node *n)
{
	const struct node *f = free_field(n, 0);

	if (!f)
		return 0;
	rl_perr(ps, f->line, f->col, "'%s' names a list item: use it inside any(), all(), "
		"count(), first(), sumof(), maxof() or minof()", f->text ? f->text : "?");
	return -1;
}

static int parse_period(const char *s, enum per *per, const char **rest)
{
	for (int p = 0; p < P_N; p++) {
		size_t l = strlen(rl_per_name[p]);

		if (!strncmp(s, rl_per_name[p], l) && s[l] == '.' && s[l + 1]) {
			*per = (enum per)p;
			*rest = s + l + 1;
			return 1;
		}
	}
	return 0;
}

/* n names the signal name (at t), checked once every file is loaded. */
static struct node *name_signal(struct pstate *ps, struct node *n, const char *name,
				const struct tok *t)
{
	n->str = strdup(name);
	if (!n->str || add_use(ps, name, t) < 0) {
		ps->oom = 1;
		rl_node_free(n);
		return NULL;
	}
	return n;
}

/* A period node (dom) of "P.SIGNAL" / "P.span_s" in rest, NULL when rest is
 * no period; *bad when it is one, but malformed (reported). */
static struct node *period_node(struct pstate *ps, const struct tok *t, const char *rest,
				enum dom dom, int *bad)
{
	const char *sig;
	enum per per;
	struct node *n;

	if (!parse_period(rest, &per, &sig))
		return NULL;
	if (strchr(sig, '.') || strchr(sig, '/')) {
		rl_perr(ps, t->line, t->col, "'%s': expected %s.SIGNAL or %s.span_s",
			t->str, rl_per_name[per], rl_per_name[per]);
		*bad = 1;
		return NULL;
	}
	if (!(n = mk(ps, N_PERIOD, t))) {
		*bad = 1;
		return NULL;
	}
	n->per = per;
	n->dom = dom;
	if (!strcmp(sig, "span_s")) {
		n->span = 1;
		return n;
	}
	n = name_signal(ps, n, sig, t);
	*bad = !n;
	return n;
}

static struct node *peer_field_node(struct pstate *ps, const struct tok *t, const char *name)
{
	struct node *n;

	for (size_t i = 0; i < rl_nfields; i++)
		if (rl_fields_tab[i].d == D_PEER && !strcmp(name, rl_fields_tab[i].name)) {
			if (!(n = mk(ps, N_FIELD, t)))
				return NULL;
			n->dom = D_PEER;
			n->str = strdup(rl_fields_tab[i].name);
			return n;
		}
	return NULL;
}

/* peer.FIELD, peer.P.SIGNAL (items of a quantifier over the peers), or
 * peer.NAME.FIELD, peer.NAME.P.SIGNAL (one peer by its name). */
static struct node *resolve_peer(struct pstate *ps, const struct tok *t, const char *rest)
{
	const char *dot = strchr(rest, '.');
	struct node *n;
	int bad = 0;
	char name[64];

	if ((n = period_node(ps, t, rest, D_PEER, &bad)) || bad)
		return n;
	if ((n = peer_field_node(ps, t, rest)))
		return n;
	if (!dot || (size_t)(dot - rest) >= sizeof(name) || !dot[1]) {
		rl_perr(ps, t->line, t->col, "unknown name '%s' (peer.FIELD, peer.stall.SIGNAL, "
			"peer.NAME.FIELD or peer.NAME.stall.SIGNAL)", t->str);
		return NULL;
	}
	memcpy(name, rest, (size_t)(dot - rest));
	name[dot - rest] = 0;
	if (rl_peer_reserved(name)) {
		rl_perr(ps, t->line, t->col, "'%s': %s is no peer field here", t->str, name);
		return NULL;
	}
	n = period_node(ps, t, dot + 1, D_PEER, &bad);
	if (!n && !bad)
		n = peer_field_node(ps, t, dot + 1);
	if (!n) {
		if (!bad)
			rl_perr(ps, t->line, t->col, "unknown name '%s' (after peer.%s: a peer field "
				"or stall|window|baseline.SIGNAL)", t->str, name);
		return NULL;
	}
	n->peer = strdup(name);
	if (!n->peer) {
		ps->oom = 1;
		rl_node_free(n);
		return NULL;
	}
	return n;
}

static struct node *resolve_path(struct pstate *ps, const struct tok *t)
{
	const char *s = t->str, *rest;
	enum per per;
	struct node *n;

	if (ps->cur)
		for (unsigned i = ps->cur->nlet; i-- > 0;)
			if (!strcmp(ps->cur->letname[i], s)) {
				if (!(n = mk(ps, N_LET, t)))
					return NULL;
				n->let = ps->cur->letexpr[i];
				n->str = strdup(s);
				return n;
			}
	for (size_t i = 0; i < rl_nfacts; i++)
		if (!strcmp(rl_facts_tab[i].name, s)) {
			if (!(n = mk(ps, N_FACT, t)))
				return NULL;
			n->fact = rl_facts_tab[i].f;
			return n;
		}
	if (!strncmp(s, "peer.", 5))
		return resolve_peer(ps, t, s + 5);
	{
		int port = !strncmp(s, "port.", 5);

		if (parse_period(port ? s + 5 : s, &per, &rest)) {
			if (strchr(rest, '.') || strchr(rest, '/')) {
				rl_perr(ps, t->line, t->col, "'%s': expected %s.SIGNAL or %s.span_s",
					s, rl_per_name[per], rl_per_name[per]);
				return NULL;
			}
			if (!(n = mk(ps, N_PERIOD, t)))
				return NULL;
			n->per = per;
			n->dom = port ? D_PORT : D_NONE;
			if (!strcmp(rest, "span_s")) {
				n->span = 1;
				return n;
			}
			return name_signal(ps, n, rest, t);
		}
	}
	for (size_t i = 0; i < rl_nfields; i++) {
		const char *dn = rl_dom_name[rl_fields_tab[i].d];
		size_t l = strlen(dn);

		if (!strncmp(s, dn, l) && s[l] == '.' && !strcmp(s + l + 1, rl_fields_tab[i].name)) {
			if (!(n = mk(ps, N_FIELD, t)))
				return NULL;
			n->dom = rl_fields_tab[i].d;
			n->dual = rl_fields_tab[i].dual;
			n->str = strdup(rl_fields_tab[i].name);
			return n;
		}
	}
	if (ps->in_brate && !strchr(s, '.') && !strchr(s, '/')) {
		if (!(n = mk(ps, N_SIGREF, t)))
			return NULL;
		return name_signal(ps, n, s, t);
	}
	if (strchr(s, '/'))
		rl_perr(ps, t->line, t->col, "unknown name '%s' (write division with blanks: a / b)", s);
	else if (!strchr(s, '.') && rl_signal_known(ps->r, s))
		rl_perr(ps, t->line, t->col, "signal '%s' needs a period: stall.%s, window.%s "
			"(a bare signal only inside baseline_rate())", s, s, s);
	else
		rl_perr(ps, t->line, t->col, "unknown name '%s'", s);
	return NULL;
}

static struct node *parse_call(struct pstate *ps, const struct tok *t, size_t first)
{
	struct node *n;
	size_t fi = 0, nf = rl_nfns;
	const struct tok *c;

	if (ps->sigctx) {
		int which = !strcmp(t->str, "which");

		if (strcmp(t->str, "sum") && !which) {
			rl_perr(ps, t->line, t->col, "function %s() not allowed in a signal (only sum(GLOB) "
				"and which(GLOB))", t->str);
			return NULL;
		}
		rl_next(ps);  /* ( */
		c = rl_next(ps);
		if (c->t != T_STR || !c->str || !*c->str) {
			rl_perr(ps, t->line, t->col, "%s() needs a counter name pattern", t->str);
			return NULL;
		}
		if (rl_expect(ps, T_RP, "')'") < 0)
			return NULL;
		if (!(n = mk(ps, which ? N_WHICHGLOB : N_SUMGLOB, t)))
			return NULL;
		n->str = strdup(c->str);
		return finish(ps, n, first);
	}
	while (fi < nf && strcmp(rl_fns_tab[fi].name, t->str))
		fi++;
	if (fi == nf) {
		rl_perr(ps, t->line, t->col, "unknown function %s()", t->str);
		return NULL;
	}
	if (!(n = mk(ps, N_CALL, t)))
		return NULL;
	n->fn = rl_fns_tab[fi].fn;
	rl_next(ps);  /* ( */
	ps->paren++;
	if (n->fn == FN_BRATE)
		ps->in_brate++;
	if (rl_peek(ps)->t != T_RP) {
		while (1) {
			struct node *a = rl_parse_expr(ps);
			struct node **v;

			if (!a)
				goto fail;
			v = realloc(n->args, (n->nargs + 1) * sizeof(*v));
			if (!v) {
				rl_node_free(a);
				ps->oom = 1;
				goto fail;
			}
			n->args = v;
			n->args[n->nargs++] = a;
			if (!rl_accept(ps, T_COMMA))
				break;
		}
	}
	if (rl_expect(ps, T_RP, "',' or ')'") < 0)
		goto fail;
	ps->paren--;
	if (n->fn == FN_BRATE)
		ps->in_brate--;
	if (n->nargs < rl_fns_tab[fi].min || n->nargs > rl_fns_tab[fi].max) {
		if (rl_fns_tab[fi].min == rl_fns_tab[fi].max)
			rl_perr(ps, t->line, t->col, "%s() takes %u argument%s, not %u", t->str,
				rl_fns_tab[fi].min, rl_fns_tab[fi].min == 1 ? "" : "s", n->nargs);
		else
			rl_perr(ps, t->line, t->col, "%s() takes %u to %u arguments, not %u", t->str,
				rl_fns_tab[fi].min, rl_fns_tab[fi].max, n->nargs);
		rl_node_free(n);
		return NULL;
	}
	if (n->fn == FN_RATE && (n->args[0]->k != N_PERIOD || n->args[0]->span ||
				 n->args[0]->dom == D_PEER)) {
		rl_perr(ps, n->args[0]->line, n->args[0]->col,
			"rate() takes stall.SIGNAL, window.SIGNAL or baseline.SIGNAL");
		rl_node_free(n);
		return NULL;
	}
	if (rl_fns_tab[fi].quant) {
		enum dom d = D_NONE;

		for (unsigned i = 0; i < n->nargs; i++)
			d = dom_join(d, expr_dom(n->args[i], 0));
		if (d == D_NONE || d == D_MULTI) {
			rl_perr(ps, t->line, t->col, d == D_NONE ?
				"%s() names no thread., flow., ping., capture., port., peer. or onload. field" :
			     "%s() mixes fields of different lists", t->str);
			rl_node_free(n);
			return NULL;
		}
		n->dom = d;
	}
	return finish(ps, n, first);
fail:
	ps->paren--;
	if (n->fn == FN_BRATE)
		ps->in_brate--;
	rl_node_free(n);
	return NULL;
}

/* One level deeper (t: where), or -1 (reported) past MAX_PDEPTH. */
static int deeper(struct pstate *ps, const struct tok *t)
{
	if (++ps->depth <= MAX_PDEPTH)
		return 0;
	rl_perr(ps, t->line, t->col, "expression nested too deeply");
	ps->depth--;
	return -1;
}

static struct node *parse_primary(struct pstate *ps)
{
	size_t first;
	const struct tok *t;
	struct node *n = NULL;
	char b[96];

	if (deeper(ps, rl_peek(ps)) < 0)
		return NULL;
	t = rl_peek(ps);
	first = ps->pos;
	switch (t->t) {
	case T_NUM:
		rl_next(ps);
		if ((n = mk(ps, N_NUM, t)))
			n->num = t->num;
		n = finish(ps, n, first);
		break;
	case T_STR:
		rl_next(ps);
		if ((n = mk(ps, ps->sigctx ? N_COUNTER : N_STR, t)) && !(n->str = strdup(t->str ? t->str : "")))
			ps->oom = 1;
		n = finish(ps, n, first);
		break;
	case T_LP:
		rl_next(ps);
		ps->paren++;
		n = rl_parse_expr(ps);
		if (n && rl_expect(ps, T_RP, "')'") < 0) {
			rl_node_free(n);
			n = NULL;
		}
		ps->paren--;
		n = finish(ps, n, first);
		break;
	case T_ID:
		rl_next(ps);
		if (ps->pos < ps->ntok && ps->toks[ps->pos].t == T_LP && ps->toks[ps->pos].adj) {
			n = parse_call(ps, t, first);
			break;
		}
		if (!ps->sigctx && (!strcmp(t->str, "true") || !strcmp(t->str, "false"))) {
			if ((n = mk(ps, N_BOOL, t)))
				n->num = !strcmp(t->str, "true");
		} else if (ps->sigctx) {
			if ((n = mk(ps, rl_signal_known(ps->r, t->str) ? N_SIGREF : N_COUNTER, t)) &&
			    !(n->str = strdup(t->str)))
				ps->oom = 1;
		} else {
			n = resolve_path(ps, t);
		}
		n = finish(ps, n, first);
		break;
	default:
		rl_perr(ps, t->line ? t->line : 1, t->col ? t->col : 1, "expected a value, got %s",
			rl_tok_desc(t, b, sizeof(b)));
	}
	ps->depth--;
	return n;
}

static struct node *mkop(struct pstate *ps, enum nk k, enum op op, const struct tok *t,
			 struct node *a, struct node *b, size_t first)
{
	struct node *n;

	if (!a || (k == N_BIN && !b)) {
		rl_node_free(a);
		rl_node_free(b);
		return NULL;
	}
	if (!(n = mk(ps, k, t))) {
		rl_node_free(a);
		rl_node_free(b);
		return NULL;
	}
	n->op = op;
	n->a = a;
	n->b = b;
	return finish(ps, n, first);
}

/* The prefix operator t (the current token) applied to what self parses
 * after it. */
static struct node *parse_prefix(struct pstate *ps, const struct tok *t, enum op op,
				 struct node *(*self)(struct pstate *ps))
{
	size_t first = ps->pos;
	struct node *a;

	rl_next(ps);
	if (deeper(ps, t) < 0)
		return NULL;
	a = self(ps);
	ps->depth--;
	return mkop(ps, N_UN, op, t, a, NULL, first);
}

static struct node *parse_unary(struct pstate *ps)
{
	const struct tok *t = rl_peek(ps);

	if (t->t == T_OP && t->op == O_SUB)
		return parse_prefix(ps, t, O_NEG, parse_unary);
	return parse_primary(ps);
}

/* sub (op1|op2 sub)*, left-associative. */
static struct node *parse_left(struct pstate *ps, struct node *(*sub)(struct pstate *ps),
			       enum op op1, enum op op2)
{
	size_t first = ps->pos;
	struct node *a = sub(ps);
	const struct tok *t;

	while (a && (t = rl_peek(ps))->t == T_OP && (t->op == op1 || t->op == op2)) {
		rl_next(ps);
		a = mkop(ps, N_BIN, t->op, t, a, sub(ps), first);
	}
	return a;
}

static struct node *parse_mul(struct pstate *ps)
{
	return parse_left(ps, parse_unary, O_MUL, O_DIV);
}

static struct node *parse_add(struct pstate *ps)
{
	return parse_left(ps, parse_mul, O_ADD, O_SUB);
}

static struct node *parse_cmp(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_add(ps);
	const struct tok *t = rl_peek(ps);

	if (a && t->t == T_OP && t->op >= O_EQ && t->op <= O_NMATCH) {
		if (ps->sigctx) {
			rl_perr(ps, t->line, t->col, "comparison not allowed in a signal");
			rl_node_free(a);
			return NULL;
		}
		rl_next(ps);
		a = mkop(ps, N_BIN, t->op, t, a, parse_add(ps), first);
		t = rl_peek(ps);
		if (a && t->t == T_OP && t->op >= O_EQ && t->op <= O_NMATCH) {
			rl_perr(ps, t->line, t->col, "comparisons do not chain: use 'and'");
			rl_node_free(a);
			return NULL;
		}
	}
	return a;
}

static int is_kw(const struct tok *t, const char *kw)
{
	return t->t == T_ID && t->str && !strcmp(t->str, kw);
}

static struct node *parse_not(struct pstate *ps)
{
	const struct tok *t = rl_peek(ps);

	if (is_kw(t, "not") && !ps->sigctx)
		return parse_prefix(ps, t, O_NOT, parse_not);
	return parse_cmp(ps);
}

static struct node *parse_and(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_not(ps);
	const struct tok *t;

	while (a && !ps->sigctx && is_kw((t = rl_peek(ps)), "and")) {
		rl_next(ps);
		a = mkop(ps, N_BIN, O_AND, t, a, parse_not(ps), first);
	}
	return a;
}

struct node *rl_parse_expr(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a;
	const struct tok *t;

	if (deeper(ps, rl_peek(ps)) < 0)
		return NULL;
	a = parse_and(ps);
	while (a && !ps->sigctx && is_kw((t = rl_peek(ps)), "or")) {
		rl_next(ps);
		a = mkop(ps, N_BIN, O_OR, t, a, parse_and(ps), first);
	}
	ps->depth--;
	return a;
}
