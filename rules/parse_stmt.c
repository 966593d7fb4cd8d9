/* parse_stmt: the statements of a rules file: signal lines, rule blocks
 * (verdict, let, require, explain, action, ruled_out) and their templates. A later
 * file's signal or rule of the same name replaces the earlier one. */
#include "rules/rules_int.h"

#include <stdlib.h>
#include <string.h>

/* A name: an identifier, with '-' and more identifiers or numbers glued
 * on without blanks ("port-drop", "engine-hold2"). */
static char *read_name(struct pstate *ps, const char *what)
{
	const struct tok *t = rl_peek(ps);
	size_t s, e;
	char *name;

	if (t->t != T_ID || strchr(t->str, '/')) {
		rl_perr_tok(ps, t, what);
		return NULL;
	}
	s = t->s;
	e = t->e;
	rl_next(ps);
	while (ps->pos < ps->ntok) {
		const struct tok *u = &ps->toks[ps->pos];

		if (!u->adj || !((u->t == T_OP && u->op == O_SUB) || u->t == T_ID || u->t == T_NUM))
			break;
		e = u->e;
		ps->pos++;
	}
	name = strndup(ps->src + s, e - s);
	if (!name)
		ps->oom = 1;
	else if (name[e - s - 1] == '-') {
		rl_perr(ps, t->line, t->col, "bad name '%s'", name);
		free(name);
		return NULL;
	}
	return name;
}

/* An identifier without '.' or '/' (a signal, profile or let name). */
static int plain_id(const struct tok *t)
{
	return t->t == T_ID && !strchr(t->str, '.') && !strchr(t->str, '/');
}

static int tmpl_add(struct pstate *ps, struct tmpl *tm, char *lit, struct node *e)
{
	struct tpart *p = realloc(tm->p, (tm->n + 1) * sizeof(*p));

	if (!p) {
		free(lit);
		rl_node_free(e);
		ps->oom = 1;
		return -1;
	}
	tm->p = p;
	tm->p[tm->n].lit = lit;
	tm->p[tm->n].e = e;
	tm->n++;
	return 0;
}

/* "text {expr} text": each {expr} is parsed now, so a typo is a load error. */
static int parse_template(struct pstate *ps, const struct tok *t, struct tmpl *tm)
{
	const char *s = t->str ? t->str : "";
	size_t n = strlen(s), i = 0;
	char *lit = malloc(n + 1);
	size_t o = 0;
	int bad = 0;

	if (!lit) {
		ps->oom = 1;
		return -1;
	}
	while (i < n) {
		if ((s[i] == '{' || s[i] == '}') && i + 1 < n && s[i + 1] == s[i]) {
			lit[o++] = s[i];
			i += 2;
			continue;
		}
		if (s[i] == '}') {
			rl_perr(ps, t->line, t->col + 1 + (unsigned)i, "'}' without '{' (write }} for a brace)");
			bad = 1;
			i++;
			continue;
		}
		if (s[i] == '{') {
			const char *close = strchr(s + i + 1, '}');
			struct pstate sub;
			struct node *e;
			unsigned col = t->col + 2 + (unsigned)i;

			if (!close) {
				rl_perr(ps, t->line, col - 1, "'{' without '}'");
				bad = 1;
				break;
			}
			lit[o] = '\0';
			if (o && tmpl_add(ps, tm, strndup(lit, o), NULL) < 0)
				break;
			o = 0;
			sub = *ps;
			sub.src = s + i + 1;
			sub.srclen = (size_t)(close - (s + i + 1));
			sub.paren = 0;
			sub.depth = 0;
			sub.nerr = 0;
			if (rl_lex(&sub, sub.src, sub.srclen, t->line, col) < 0) {
				ps->oom = 1;
			}
			e = NULL;
			if (!sub.oom && !sub.nerr) {
				e = rl_parse_expr(&sub);
				if (e && rl_peek(&sub)->t != T_EOF) {
					rl_perr_tok(&sub, rl_peek(&sub), "'}'");
					rl_node_free(e);
					e = NULL;
				}
				if (e && rl_check_free(&sub, e) < 0) {
					rl_node_free(e);
					e = NULL;
				}
			}
			rl_toks_free(sub.toks, sub.ntok);
			ps->nerr += sub.nerr;
			ps->oom |= sub.oom;
			if (!e)
				bad = 1;
			else if (tmpl_add(ps, tm, NULL, e) < 0)
				break;
			i = (size_t)(close - s) + 1;
			continue;
		}
		lit[o++] = s[i++];
	}
	if (o) {
		lit[o] = '\0';
		tmpl_add(ps, tm, strndup(lit, o), NULL);
	}
	free(lit);
	return bad || ps->oom ? -1 : 0;
}

static void split_and(struct pstate *ps, struct rule *ru, struct node *n)
{
	struct node **v;

	if (n->k == N_BIN && n->op == O_AND) {
		split_and(ps, ru, n->a);
		split_and(ps, ru, n->b);
		n->a = n->b = NULL;
		rl_node_free(n);
		return;
	}
	v = realloc(ru->terms, (ru->nterm + 1) * sizeof(*v));
	if (!v) {
		ps->oom = 1;
		rl_node_free(n);
		return;
	}
	ru->terms = v;
	ru->terms[ru->nterm++] = n;
}

static int parse_signal(struct pstate *ps, const struct tok *kw)
{
	const struct tok *t = rl_peek(ps);
	char *name;
	char *profiles[16];
	unsigned np = 0;
	size_t estart;
	int rc = -1;

	if (!plain_id(t)) {
		rl_perr_tok(ps, t, "a signal name");
		return -1;
	}
	name = strdup(t->str);
	rl_next(ps);
	while (1) {
		t = rl_peek(ps);
		if (!plain_id(t)) {
			rl_perr_tok(ps, t, "a profile name (mlx5, sfc, generic...)");
			goto out;
		}
		if (np == sizeof(profiles) / sizeof(profiles[0])) {
			rl_perr(ps, t->line, t->col, "too many profiles");
			goto out;
		}
		profiles[np++] = t->str;
		rl_next(ps);
		if (!rl_accept(ps, T_COMMA))
			break;
	}
	if (rl_expect(ps, T_ASSIGN, "'='") < 0)
		goto out;
	estart = ps->pos;
	for (unsigned p = 0; p < np; p++) {
		struct signal *sg;
		struct node *e;
		size_t j;

		ps->pos = estart;
		ps->sigctx = 1;
		e = rl_parse_expr(ps);
		ps->sigctx = 0;
		if (!e)
			goto out;
		for (j = 0; j < ps->r->nsigs; j++)
			if (!strcmp(ps->r->sigs[j]->name, name) &&
			    !strcmp(ps->r->sigs[j]->profile, profiles[p]))
				break;
		if (j < ps->r->nsigs && ps->r->sigs[j]->file == ps->fname) {
			rl_perr(ps, kw->line, kw->col, "signal %s for profile %s already defined at line %u",
				name, profiles[p], ps->r->sigs[j]->line);
			rl_node_free(e);
			goto out;
		}
		sg = calloc(1, sizeof(*sg));
		if (!sg || !(sg->name = strdup(name)) || !(sg->profile = strdup(profiles[p]))) {
			rl_signal_free(sg);
			rl_node_free(e);
			ps->oom = 1;
			goto out;
		}
		sg->e = e;
		sg->file = ps->fname;
		sg->line = kw->line;
		if (j < ps->r->nsigs) {          /* a later file replaces it */
			rl_signal_free(ps->r->sigs[j]);
			ps->r->sigs[j] = sg;
		} else {
			struct signal **v = realloc(ps->r->sigs, (ps->r->nsigs + 1) * sizeof(*v));

			if (!v) {
				rl_signal_free(sg);
				ps->oom = 1;
				goto out;
			}
			ps->r->sigs = v;
			ps->r->sigs[ps->r->nsigs++] = sg;
		}
	}
	rc = 0;
out:
	free(name);
	return rc;
}

static void rule_close(struct pstate *ps)
{
	struct rule *ru = ps->cur;
	size_t j;

	ps->cur = NULL;
	if (!ru->has_verdict) {
		rl_perr(ps, ru->line, 1, "rule %s has no verdict", ru->name);
		rl_rule_free(ru);
		return;
	}
	for (j = 0; j < ps->r->nrules; j++)
		if (!strcmp(ps->r->rules[j]->name, ru->name))
			break;
	if (j < ps->r->nrules) {
		if (ps->r->rules[j]->file == ps->fname) {
			rl_perr(ps, ru->line, 1, "rule %s already defined at line %u", ru->name,
				ps->r->rules[j]->line);
			rl_rule_free(ru);
			return;
		}
		rl_rule_free(ps->r->rules[j]);      /* later file: replace in place */
		ps->r->rules[j] = ru;
		return;
	}
	{
		struct rule **v = realloc(ps->r->rules, (ps->r->nrules + 1) * sizeof(*v));

		if (!v) {
			ps->oom = 1;
			rl_rule_free(ru);
			return;
		}
		ps->r->rules = v;
		ps->r->rules[ps->r->nrules++] = ru;
	}
}

static int parse_rule_stmt(struct pstate *ps, const struct tok *kw)
{
	struct rule *ru = ps->cur;
	const struct tok *t;
	struct node *e;

	if (!strcmp(kw->str, "verdict")) {
		char *v;

		if (ru->has_verdict) {
			rl_perr(ps, kw->line, kw->col, "rule %s: second verdict", ru->name);
			return -1;
		}
		if (!(v = read_name(ps, "a verdict name")))
			return -1;
		ru->verdict = v;
		ru->has_verdict = 1;
		return 0;
	}
	if (!strcmp(kw->str, "let")) {
		char **vn;
		struct node **ve;

		t = rl_peek(ps);
		if (!plain_id(t)) {
			rl_perr_tok(ps, t, "a name");
			return -1;
		}
		for (size_t i = 0; i < rl_nfacts; i++)
			if (!strcmp(rl_facts_tab[i].name, t->str)) {
				rl_perr(ps, t->line, t->col, "'%s' is a fact name", t->str);
				return -1;
			}
		for (unsigned i = 0; i < ru->nlet; i++)
			if (!strcmp(ru->letname[i], t->str)) {
				rl_perr(ps, t->line, t->col, "'%s' already defined in rule %s", t->str, ru->name);
				return -1;
			}
		rl_next(ps);
		if (rl_expect(ps, T_ASSIGN, "'='") < 0)
			return -1;
		if (!(e = rl_parse_expr(ps)))
			return -1;
		vn = realloc(ru->letname, (ru->nlet + 1) * sizeof(*vn));
		if (vn)
			ru->letname = vn;
		ve = realloc(ru->letexpr, (ru->nlet + 1) * sizeof(*ve));
		if (ve)
			ru->letexpr = ve;
		if (!vn || !ve || !(ru->letname[ru->nlet] = strdup(t->str))) {
			rl_node_free(e);
			ps->oom = 1;
			return -1;
		}
		ru->letexpr[ru->nlet++] = e;
		return 0;
	}
	if (!strcmp(kw->str, "require")) {
		if (!(e = rl_parse_expr(ps)))
			return -1;
		if (rl_check_free(ps, e) < 0) {
			rl_node_free(e);
			return -1;
		}
		split_and(ps, ru, e);
		return 0;
	}
	if (!strcmp(kw->str, "explain") || !strcmp(kw->str, "action") ||
	    !strcmp(kw->str, "ruled_out")) {
		struct tmpl *tm = kw->str[0] == 'e' ? &ru->explain :
				  kw->str[0] == 'a' ? &ru->action : &ru->ruled_out;

		t = rl_peek(ps);
		if (t->t != T_STR) {
			rl_perr_tok(ps, t, "a quoted template");
			return -1;
		}
		rl_next(ps);
		if (tm->n) {
			rl_perr(ps, kw->line, kw->col, "rule %s: second %s", ru->name, kw->str);
			return -1;
		}
		return parse_template(ps, t, tm) < 0 ? -1 : 0;
	}
	rl_perr(ps, kw->line, kw->col, "unknown statement '%s' in rule %s "
		"(verdict, let, require, explain, action, ruled_out or '}')", kw->str, ru->name);
	return -1;
}

static int parse_rule_head(struct pstate *ps, const struct tok *kw)
{
	struct rule *ru;
	char *name;

	if (!(name = read_name(ps, "a rule name")))
		return -1;
	if (rl_expect(ps, T_LB, "'{'") < 0) {
		free(name);
		return -1;
	}
	ru = calloc(1, sizeof(*ru));
	if (!ru) {
		free(name);
		ps->oom = 1;
		return -1;
	}
	ru->name = name;
	ru->file = ps->fname;
	ru->line = kw->line;
	ps->cur = ru;
	return 0;
}

static void skip_line(struct pstate *ps)
{
	ps->paren = 0;
	while (ps->pos < ps->ntok && ps->toks[ps->pos].t != T_NL && ps->toks[ps->pos].t != T_EOF)
		ps->pos++;
}

void rl_parse_file(struct pstate *ps)
{
	while (!ps->oom) {
		const struct tok *t;
		int rc = 0;

		ps->paren = 0;
		ps->depth = 0;
		t = rl_peek(ps);
		if (t->t == T_EOF)
			break;
		if (t->t == T_NL) {
			rl_next(ps);
			continue;
		}
		if (t->t == T_RB) {
			rl_next(ps);
			if (ps->cur)
				rule_close(ps);
			else {
				rl_perr(ps, t->line, t->col, "'}' outside a rule");
				rc = -1;
			}
		} else if (t->t != T_ID) {
			rl_perr_tok(ps, t, ps->cur ? "a rule statement or '}'" : "'signal' or 'rule'");
			rc = -1;
		} else if (ps->cur && (!strcmp(t->str, "rule") || !strcmp(t->str, "signal"))) {
			rl_perr(ps, t->line, t->col, "missing '}' of rule %s (line %u)",
				ps->cur->name, ps->cur->line);
			rule_close(ps);
			continue;
		} else if (ps->cur) {
			rl_next(ps);
			rc = parse_rule_stmt(ps, t);
		} else if (!strcmp(t->str, "signal")) {
			rl_next(ps);
			rc = parse_signal(ps, t);
		} else if (!strcmp(t->str, "rule")) {
			rl_next(ps);
			rc = parse_rule_head(ps, t);
		} else {
			rl_perr(ps, t->line, t->col, "expected 'signal' or 'rule', got '%s'", t->str);
			rc = -1;
		}
		if (rc < 0) {
			skip_line(ps);
			continue;
		}
		ps->paren = 0;
		t = rl_peek(ps);
		if (t->t == T_RB && ps->cur)     /* "... }" closing on the same line */
			continue;
		if (t->t != T_NL && t->t != T_EOF) {
			rl_perr_tok(ps, t, "end of line");
			skip_line(ps);
		}
	}
	if (ps->cur) {
		rl_perr(ps, ps->cur->line, 1, "rule %s: missing '}' at end of file", ps->cur->name);
		rule_close(ps);
	}
}
