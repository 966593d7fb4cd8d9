/* eval: the three-valued evaluator (true, false, unknown with why) of a
 * parsed expression over the facts: operators, functions, the arena of
 * strings made on the way. */
#include "rules/rules_int.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/facts.h"

void rl_arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
	a->p = NULL;
	a->n = a->cap = 0;
}

const char *rl_afmt(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "out of memory";
	if (rl_grow((void **)&a->p, &a->cap, a->n + 1, sizeof(*a->p)) < 0) {
		free(s);
		return "out of memory";
	}
	a->p[a->n++] = s;
	return s;
}

/* Are a and b both numbers? Else 0 with *out: the first unknown of them,
 * or unknown why when one is known but not a number. */
static int numbers(struct val a, struct val b, const char *why, struct val *out)
{
	if (a.t == V_UNK || b.t == V_UNK)
		*out = a.t == V_UNK ? a : b;
	else if (a.t != V_NUM || b.t != V_NUM)
		*out = v_unk(why);
	else
		return 1;
	return 0;
}

struct val rl_arith(enum op op, struct val a, struct val b)
{
	struct val u;

	if (!numbers(a, b, "arithmetic on a value that is not a number", &u))
		return u;
	switch (op) {
	case O_ADD: return v_num(a.n + b.n);
	case O_SUB: return v_num(a.n - b.n);
	case O_MUL: return v_num(a.n * b.n);
	case O_DIV:
		if (b.n == 0)
			return v_unk("division by zero");
		return v_num(a.n / b.n);
	default:
		return v_unk("bad operator");
	}
}

static int vequal(struct val a, struct val b)
{
	if (a.t == V_STR)
		return !strcmp(a.s, b.s);
	return a.n == b.n;
}

/* glob matched against any substring: s ~ "lock" is a substring test,
 * s ~ "[SD]" a character class, s ~ "oo_*lock" a glob. */
static int smatch(const char *s, const char *pat)
{
	char buf[512];

	if (strlen(pat) > sizeof(buf) - 3)
		return 0;
	snprintf(buf, sizeof(buf), "*%s*", pat);
	return !fnmatch(buf, s, 0);
}

static struct val eval_bin(struct ectx *c, const struct node *n)
{
	struct val a, b;

	if (n->op == O_AND || n->op == O_OR) {
		int dom = n->op == O_OR;     /* the value that decides */

		a = rl_eval(c, n->a);
		if (a.t == V_BOOL && (int)a.n == dom)
			return a;
		b = rl_eval(c, n->b);
		if (b.t == V_BOOL && (int)b.n == dom)
			return b;
		if (a.t == V_UNK)
			return a;
		if (b.t == V_UNK)
			return b;
		if (a.t != V_BOOL || b.t != V_BOOL)
			return v_unk("'and'/'or' on a value that is not true or false");
		return v_bool(!dom);
	}
	a = rl_eval(c, n->a);
	b = rl_eval(c, n->b);
	if (a.t == V_UNK)
		return a;
	if (b.t == V_UNK)
		return b;
	switch (n->op) {
	case O_ADD: case O_SUB: case O_MUL: case O_DIV:
		return rl_arith(n->op, a, b);
	case O_EQ:
	case O_NE:
		if (a.t != b.t)
			return v_unk(rl_afmt(c->ar, "%s compares values of different types", n->text));
		return v_bool(vequal(a, b) == (n->op == O_EQ));
	case O_MATCH:
	case O_NMATCH:
		if (a.t != V_STR || b.t != V_STR)
			return v_unk(rl_afmt(c->ar, "%s: '~' needs strings", n->text));
		return v_bool(smatch(a.s, b.s) == (n->op == O_MATCH));
	default:
		if (a.t != V_NUM || b.t != V_NUM)
			return v_unk(rl_afmt(c->ar, "%s: ordering needs numbers", n->text));
		switch (n->op) {
		case O_LT: return v_bool(a.n < b.n);
		case O_LE: return v_bool(a.n <= b.n);
		case O_GT: return v_bool(a.n > b.n);
		case O_GE: return v_bool(a.n >= b.n);
		default: return v_unk("bad operator");
		}
	}
}

static struct val eval_call(struct ectx *c, const struct node *n)
{
	struct val a, b, u;

	if (rl_fns_tab[n->fn].quant)
		return rl_quant(c, n);
	switch (n->fn) {
	case FN_RATE: {
		const struct node *p = n->args[0];
		double span;
		const char *why;

		a = rl_eval(c, p);
		if (a.t != V_NUM)
			return a;
		if (rl_period_span(c, c->port, c->portname, p->per, &span, &why) < 0)
			return v_unk(why);
		if (span <= 0)
			return v_unk(rl_afmt(c->ar, FK_PORTS ".%s.%s." FK_SPAN_S " is 0", c->portname,
					     rl_per_name[p->per]));
		return v_num(a.n / span);
	}
	case FN_BRATE: {
		double span;
		const char *why;

		if (!c->port)
			return v_unk(rl_port_missing(c, c->portname));
		if (rl_period_span(c, c->port, c->portname, P_BASELINE, &span, &why) < 0 || span <= 0)
			return v_num(0);       /* no healthy baseline learned */
		c->bare_baseline++;
		a = rl_eval(c, n->args[0]);
		c->bare_baseline--;
		if (a.t != V_NUM)
			return a.t == V_UNK ? a : v_unk("baseline_rate() of a value that is not a number");
		return v_num(a.n / span);
	}
	case FN_KNOWN:
		a = rl_eval(c, n->args[0]);
		return v_bool(a.t != V_UNK);
	case FN_IF:
		a = rl_eval(c, n->args[0]);
		if (a.t == V_UNK)
			return a;
		if (a.t != V_BOOL)
			return v_unk("if() of a condition that is not true or false");
		return rl_eval(c, n->args[a.n ? 1 : 2]);
	case FN_DEFAULT:
		a = rl_eval(c, n->args[0]);
		return a.t != V_UNK ? a : rl_eval(c, n->args[1]);
	case FN_ABS:
		a = rl_eval(c, n->args[0]);
		if (a.t == V_UNK)
			return a;
		return a.t == V_NUM ? v_num(fabs(a.n)) : v_unk("abs() of a value that is not a number");
	case FN_ROUND:
		/* a count for people: frames are whole (the healthy share of a
		 * span is an expectation, printed as the nearest whole frame) */
		a = rl_eval(c, n->args[0]);
		if (a.t == V_UNK)
			return a;
		return a.t == V_NUM ? v_num(round(a.n)) : v_unk("round() of a value that is not a number");
	case FN_MIN:
	case FN_MAX:
		a = rl_eval(c, n->args[0]);
		b = rl_eval(c, n->args[1]);
		if (!numbers(a, b, "min()/max() of a value that is not a number", &u))
			return u;
		return v_num(n->fn == FN_MIN ? fmin(a.n, b.n) : fmax(a.n, b.n));
	default:
		return v_unk("bad function");
	}
}

struct val rl_eval(struct ectx *c, const struct node *n)
{
	struct val v;

	if (!n)
		return v_unk("no expression");
	if (c->depth > MAX_EDEPTH)
		return v_unk("expression nested too deeply");
	c->depth++;
	switch (n->k) {
	case N_NUM: v = v_num(n->num); break;
	case N_BOOL: v = v_bool(n->num != 0); break;
	case N_STR: v = v_str(n->str); break;
	case N_SIGREF:
		if (!c->bare_baseline) {
			v = v_unk(rl_afmt(c->ar, "bare signal %s outside baseline_rate()", n->str));
			break;
		}
		v = rl_period_sig(c, c->port, c->portname, P_BASELINE, n->str);
		break;
	case N_PERIOD:
		if (n->dom == D_PEER) {
			v = rl_peer_period(c, n);
			break;
		}
		if (n->dom == D_PORT && c->dom != D_PORT) {
			v = v_unk("port.* outside a quantifier");
			break;
		}
		if (n->span) {
			double span;
			const char *why;

			v = rl_period_span(c, c->port, c->portname, n->per, &span, &why) < 0 ?
			    v_unk(why) : v_num(span);
		} else {
			v = rl_period_sig(c, c->port, c->portname, n->per, n->str);
		}
		break;
	case N_FACT: v = rl_fact(c, n); break;
	case N_FIELD: v = n->dom == D_PEER ? rl_peer_field(c, n) : rl_field(c, n); break;
	case N_LET: v = rl_eval(c, n->let); break;
	case N_UN:
		v = rl_eval(c, n->a);
		if (v.t == V_UNK)
			break;
		if (n->op == O_NEG)
			v = v.t == V_NUM ? v_num(-v.n) : v_unk("'-' of a value that is not a number");
		else
			v = v.t == V_BOOL ? v_bool(!v.n) : v_unk("'not' of a value that is not true or false");
		break;
	case N_BIN: v = eval_bin(c, n); break;
	case N_CALL: v = eval_call(c, n); break;
	default: v = v_unk("bad expression");
	}
	c->depth--;
	return v;
}
