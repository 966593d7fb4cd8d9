/* lex: the tokens of nicstall.rules(5), the token stream the parser reads,
 * and error messages with their position. */
#include "rules/rules_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

void rl_perr(struct pstate *ps, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[512], full[1024];
	va_list ap;

	ps->nerr++;
	ps->r->nerr++;
	if (ps->nerr > MAX_ERRORS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->nerr == MAX_ERRORS)
		util_errf(msg, sizeof(msg), "too many errors, stopping reports for this file");
	util_errf(full, sizeof(full), "%s:%u:%u: %s", ps->path, line, col, msg);
	if (ps->report)
		ps->report(full, ps->arg);
}

static int is_id0(int c) { return isalpha(c) || c == '_'; }
static int is_id(int c) { return isalnum(c) || c == '_' || c == '.'; }

void rl_toks_free(struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].str);
	free(t);
}

int rl_lex(struct pstate *ps, const char *src, size_t len, unsigned line0, unsigned col0)
{
	struct tok *v = NULL;
	size_t n = 0, cap = 0, i = 0;
	unsigned line = line0, col = col0;
	int blank = 1;

	while (1) {
		struct tok t = { 0 };
		int c;

		if (rl_grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
			ps->oom = 1;
			break;
		}
		/* blanks, comments, line continuations */
		while (i < len) {
			c = (unsigned char)src[i];
			if (c == ' ' || c == '\t' || c == '\r') {
				i++, col++, blank = 1;
			} else if (c == '\\' && i + 1 < len && src[i + 1] == '\n') {
				i += 2, line++, col = 1, blank = 1;
			} else if (c == '#') {
				while (i < len && src[i] != '\n')
					i++, col++;
			} else {
				break;
			}
		}
		t.line = line;
		t.col = col;
		t.s = i;
		t.adj = !blank;
		blank = 0;
		if (i >= len) {
			t.t = T_EOF;
			t.e = i;
			v[n++] = t;
			break;
		}
		c = (unsigned char)src[i];
		if (c == '\n') {
			t.t = T_NL;
			i++;
			line++;
			col = 1;
			blank = 1;
		} else if (is_id0(c)) {
			size_t s = i;

			while (i < len && (is_id((unsigned char)src[i]) ||
					   (src[i] == '/' && i + 1 < len &&
					    is_id0((unsigned char)src[i + 1]) && i > s)))
				i++;
			t.t = T_ID;
			t.str = strndup(src + s, i - s);
			col += (unsigned)(i - s);
			/* sum(GLOB), which(GLOB): the glob is taken raw, up to ')' */
			if (t.str && (!strcmp(t.str, "sum") || !strcmp(t.str, "which")) && i < len &&
			    src[i] == '(') {
				size_t g = i + 1, ge;
				struct tok lp = { .t = T_LP, .line = line, .col = col, .s = i, .e = i + 1, .adj = 1 };
				struct tok gs = { .t = T_STR, .line = line, .col = col + 1 };

				while (g < len && src[g] != ')' && src[g] != '\n')
					g++;
				if (g >= len || src[g] != ')') {
					t.e = i;
					v[n++] = t;
					rl_perr(ps, line, col, "%s( without ')' on the same line", t.str);
					continue;
				}
				ge = g;
				gs.s = i + 1;
				gs.e = ge;
				{
					size_t a = i + 1, b = ge;

					while (a < b && isspace((unsigned char)src[a]))
						a++;
					while (b > a && isspace((unsigned char)src[b - 1]))
						b--;
					if (b - a >= 2 && src[a] == '"' && src[b - 1] == '"')
						a++, b--;
					gs.str = strndup(src + a, b - a);
				}
				t.e = i;
				v[n++] = t;
				if (rl_grow((void **)&v, &cap, n + 3, sizeof(*v)) < 0) {
					free(gs.str);
					ps->oom = 1;
					break;
				}
				v[n++] = lp;
				v[n++] = gs;
				{
					struct tok rp = { .t = T_RP, .line = line,
							  .col = col + 1 + (unsigned)(ge - i - 1),
							  .s = ge, .e = ge + 1, .adj = 1 };
					v[n++] = rp;
				}
				col += (unsigned)(ge + 1 - i);
				i = ge + 1;
				continue;
			}
		} else if (isdigit(c) || (c == '.' && i + 1 < len && isdigit((unsigned char)src[i + 1]))) {
			char buf[64];
			size_t s = i, k;
			char *end;

			while (i < len && (isalnum((unsigned char)src[i]) || src[i] == '.' ||
					   ((src[i] == '+' || src[i] == '-') &&
					    (src[i - 1] == 'e' || src[i - 1] == 'E'))))
				i++;
			k = i - s;
			col += (unsigned)k;
			t.t = T_NUM;
			if (k >= sizeof(buf)) {
				rl_perr(ps, t.line, t.col, "number too long");
			} else {
				memcpy(buf, src + s, k);
				buf[k] = '\0';
				errno = 0;
				t.num = strtod(buf, &end);
				if (*end || errno || !isfinite(t.num))
					rl_perr(ps, t.line, t.col, "bad number '%s'", buf);
			}
		} else if (c == '"') {
			char *out = malloc(len - i + 1);
			size_t o = 0;
			int closed = 0;

			i++, col++;
			while (out && i < len && src[i] != '\n') {
				if (src[i] == '"') {
					closed = 1;
					i++, col++;
					break;
				}
				if (src[i] == '\\' && i + 1 < len && src[i + 1] != '\n') {
					char e = src[i + 1];

					out[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : e;
					i += 2, col += 2;
					continue;
				}
				out[o++] = src[i++];
				col++;
			}
			if (!out) {
				ps->oom = 1;
				break;
			}
			out[o] = '\0';
			t.t = T_STR;
			t.str = out;
			if (!closed)
				rl_perr(ps, t.line, t.col, "unterminated string");
		} else {
			int c2 = i + 1 < len ? (unsigned char)src[i + 1] : 0;
			int two = 0;

			t.t = T_OP;
			switch (c) {
			case '{': t.t = T_LB; break;
			case '}': t.t = T_RB; break;
			case '(': t.t = T_LP; break;
			case ')': t.t = T_RP; break;
			case ',': t.t = T_COMMA; break;
			case '+': t.op = O_ADD; break;
			case '-': t.op = O_SUB; break;
			case '*': t.op = O_MUL; break;
			case '/': t.op = O_DIV; break;
			case '~': t.op = O_MATCH; break;
			case '=':
				if (c2 == '=') t.op = O_EQ, two = 1;
				else t.t = T_ASSIGN;
				break;
			case '!':
				if (c2 == '=') t.op = O_NE, two = 1;
				else if (c2 == '~') t.op = O_NMATCH, two = 1;
				else t.op = O_NONE;
				break;
			case '<':
				if (c2 == '=') t.op = O_LE, two = 1;
				else t.op = O_LT;
				break;
			case '>':
				if (c2 == '=') t.op = O_GE, two = 1;
				else t.op = O_GT;
				break;
			case ':':
				if (c2 == '=') t.t = T_ASSIGN, two = 1;
				else t.op = O_NONE;
				break;
			default:
				t.op = O_NONE;
			}
			if (t.t == T_OP && t.op == O_NONE) {
				if (isprint(c))
					rl_perr(ps, line, col, "unexpected character '%c'", c);
				else
					rl_perr(ps, line, col, "unexpected byte 0x%02x", (unsigned)c);
				i++, col++;
				continue;
			}
			i += two ? 2 : 1;
			col += two ? 2 : 1;
		}
		t.e = i;
		v[n++] = t;
	}
	ps->toks = v;
	ps->ntok = n;
	ps->pos = 0;
	return ps->oom ? -1 : 0;
}

static const struct tok eof_tok = { .t = T_EOF };

const struct tok *rl_peek(struct pstate *ps)
{
	while (ps->paren > 0 && ps->pos < ps->ntok && ps->toks[ps->pos].t == T_NL)
		ps->pos++;
	return ps->pos < ps->ntok ? &ps->toks[ps->pos] : &eof_tok;
}

const struct tok *rl_next(struct pstate *ps)
{
	const struct tok *t = rl_peek(ps);

	if (ps->pos < ps->ntok && t->t != T_EOF)
		ps->pos++;
	return t;
}

int rl_accept(struct pstate *ps, enum tk t)
{
	if (rl_peek(ps)->t != t)
		return 0;
	rl_next(ps);
	return 1;
}

int rl_expect(struct pstate *ps, enum tk t, const char *what)
{
	if (rl_accept(ps, t))
		return 0;
	rl_perr_tok(ps, rl_peek(ps), what);
	return -1;
}

const char *rl_tok_desc(const struct tok *t, char *buf, size_t len)
{
	switch (t->t) {
	case T_EOF: return "end of file";
	case T_NL: return "end of line";
	case T_ID: util_errf(buf, len, "'%.60s'", t->str ? t->str : ""); return buf;
	case T_STR: util_errf(buf, len, "string \"%.60s\"", t->str ? t->str : ""); return buf;
	case T_NUM: return "a number";
	case T_LB: return "'{'";
	case T_RB: return "'}'";
	case T_LP: return "'('";
	case T_RP: return "')'";
	case T_COMMA: return "','";
	case T_ASSIGN: return "'='";
	case T_OP: return "an operator";
	}
	return "?";
}

void rl_perr_tok(struct pstate *ps, const struct tok *t, const char *what)
{
	char b[96];

	rl_perr(ps, t->line ? t->line : 1, t->col ? t->col : 1, "expected %s, got %s",
		what, rl_tok_desc(t, b, sizeof(b)));
}

char *rl_span_text(struct pstate *ps, size_t first)
{
	size_t s, e, o = 0;
	char *out;
	int sp = 0;

	if (first >= ps->ntok || ps->pos == 0 || ps->pos <= first)
		return strdup("");
	s = ps->toks[first].s;
	e = ps->toks[ps->pos - 1].e;
	if (e > ps->srclen || s > e)
		return strdup("");
	out = malloc(e - s + 1);
	if (!out)
		return NULL;
	for (size_t i = s; i < e; i++) {
		char c = ps->src[i];

		if (c == '#') {
			while (i + 1 < e && ps->src[i + 1] != '\n')
				i++;
			continue;
		}
		if (c == '"') {   /* copy strings verbatim */
			if (sp && o)
				out[o++] = ' ';
			sp = 0;
			out[o++] = c;
			while (++i < e) {
				out[o++] = ps->src[i];
				if (ps->src[i] == '\\' && i + 1 < e)
					out[o++] = ps->src[++i];
				else if (ps->src[i] == '"')
					break;
			}
			continue;
		}
		if (c == '\\' && i + 1 < e && ps->src[i + 1] == '\n') {
			sp = 1;
			i++;
			continue;
		}
		if (isspace((unsigned char)c)) {
			sp = 1;
			continue;
		}
		if (sp && o)
			out[o++] = ' ';
		sp = 0;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}
