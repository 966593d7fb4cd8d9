/* rules: parse nicstall.rules(5) files and classify incident facts.
 *
 * Three parts: a lexer and recursive-descent parser that turn *.rules files
 * into signals (per-profile sums over counters) and rules (lets, require
 * terms, explanation and action templates); a three-valued evaluator over
 * the facts (json-c); and the classifier that tries every rule in order and
 * writes the verdict, the winner's terms and, for each other rule, the term
 * that ruled it out. */
#include "rules/rules.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#define MAX_ERRORS     100      /* reported per file */
#define MAX_PDEPTH     64       /* parser nesting */
#define MAX_EDEPTH     96       /* evaluator nesting (lets, signals) */
#define MAX_ITEMS      4096     /* items looked at per quantifier */
#define MAX_FILE_BYTES (1u << 20)
#define MAX_SUBST      256      /* bytes of one {value} in a template */

/* ------------------------------------------------------------------ */
/* Data */

enum nk {
	N_NUM, N_STR, N_BOOL,
	N_COUNTER, N_SUMGLOB,       /* signal context */
	N_SIGREF,                   /* bare signal: in a signal, or in baseline_rate() */
	N_PERIOD,                   /* stall.S / window.S / baseline.S / X.span_s */
	N_FACT, N_FIELD, N_LET,
	N_UN, N_BIN, N_CALL,
};

enum op {
	O_NONE, O_ADD, O_SUB, O_MUL, O_DIV, O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE,
	O_MATCH, O_NMATCH, O_AND, O_OR, O_NOT, O_NEG,
};

enum per { P_STALL, P_WINDOW, P_BASELINE, P_N };
static const char *const per_name[P_N] = { "stall", "window", "baseline" };

enum dom { D_NONE, D_THREAD, D_FLOW, D_PING, D_CAPTURE, D_PORT, D_MULTI };
static const char *const dom_name[] = { "", "thread", "flow", "ping", "capture", "port", "" };

enum fact {
	F_PORT, F_PROFILE, F_DRIVER, F_FIRMWARE, F_PSID, F_LINK_UP,
	F_HELD, F_HELD_UNSENT, F_HELD_UNREAD, F_HELD_STAGED,
	F_FLOWS_STALLED, F_FLOWS_PROGRESSING,
	F_PING_OK, F_PING_COUNT, F_CAPTURE_COUNT,
	F_RELEASED, F_RELEASE_ACTION, F_RELEASE_AFTER_MS,
};
static const struct { const char *name; enum fact f; } facts_tab[] = {
	{ "port", F_PORT }, { "profile", F_PROFILE }, { "driver", F_DRIVER },
	{ "firmware", F_FIRMWARE }, { "psid", F_PSID }, { "link_up", F_LINK_UP },
	{ "held", F_HELD }, { "held.unsent", F_HELD_UNSENT },
	{ "held.unread", F_HELD_UNREAD }, { "held.staged", F_HELD_STAGED },
	{ "flows.stalled", F_FLOWS_STALLED }, { "flows.progressing", F_FLOWS_PROGRESSING },
	{ "ping.ok", F_PING_OK }, { "ping.count", F_PING_COUNT },
	{ "capture.count", F_CAPTURE_COUNT },
	{ "release.released", F_RELEASED }, { "release.action", F_RELEASE_ACTION },
	{ "release.after_ms", F_RELEASE_AFTER_MS },
};

/* Fields of list items. dual: outside a quantifier it is the sum over the
 * list (ping.sent, ping.received, capture.frames). */
static const struct { enum dom d; const char *name; int dual; } fields_tab[] = {
	{ D_THREAD, "pid", 0 }, { D_THREAD, "tid", 0 }, { D_THREAD, "comm", 0 },
	{ D_THREAD, "state", 0 }, { D_THREAD, "wchan", 0 }, { D_THREAD, "stack", 0 },
	{ D_THREAD, "syscall", 0 }, { D_THREAD, "vcsw_rate", 0 },
	{ D_THREAD, "nvcsw_rate", 0 }, { D_THREAD, "role", 0 },
	{ D_FLOW, "tuple", 0 }, { D_FLOW, "src", 0 }, { D_FLOW, "waited_ms", 0 },
	{ D_FLOW, "unsent", 0 }, { D_FLOW, "unread", 0 }, { D_FLOW, "staged", 0 },
	{ D_PING, "from", 0 }, { D_PING, "to", 0 }, { D_PING, "sent", 1 },
	{ D_PING, "received", 1 },
	{ D_CAPTURE, "port", 0 }, { D_CAPTURE, "promisc", 0 },
	{ D_CAPTURE, "frames", 1 }, { D_CAPTURE, "transition", 0 },
	{ D_PORT, "name", 0 }, { D_PORT, "profile", 0 }, { D_PORT, "driver", 0 },
	{ D_PORT, "firmware", 0 }, { D_PORT, "psid", 0 }, { D_PORT, "link_up", 0 },
};

enum fn {
	FN_ANY, FN_ALL, FN_COUNT, FN_FIRST, FN_SUMOF, FN_MAXOF, FN_MINOF,
	FN_RATE, FN_BRATE, FN_KNOWN, FN_DEFAULT, FN_ABS, FN_MIN, FN_MAX,
};
static const struct {
	const char *name; enum fn fn; unsigned min, max; int quant;
} fns_tab[] = {
	{ "any", FN_ANY, 1, 1, 1 }, { "all", FN_ALL, 1, 1, 1 },
	{ "count", FN_COUNT, 1, 1, 1 }, { "first", FN_FIRST, 2, 2, 1 },
	{ "sumof", FN_SUMOF, 1, 1, 1 }, { "maxof", FN_MAXOF, 1, 1, 1 },
	{ "minof", FN_MINOF, 1, 1, 1 },
	{ "rate", FN_RATE, 1, 1, 0 }, { "baseline_rate", FN_BRATE, 1, 1, 0 },
	{ "known", FN_KNOWN, 1, 1, 0 }, { "default", FN_DEFAULT, 2, 2, 0 },
	{ "abs", FN_ABS, 1, 1, 0 }, { "min", FN_MIN, 2, 2, 0 }, { "max", FN_MAX, 2, 2, 0 },
};

struct node {
	enum nk k;
	enum op op;
	enum fn fn;
	enum per per;
	enum dom dom;       /* N_FIELD, N_PERIOD of port.X */
	enum fact fact;
	int dual, span;     /* N_FIELD dual; N_PERIOD: .span_s */
	double num;
	char *str;          /* literal, counter, glob, signal, field or let name */
	char *text;         /* source text, for "expr" and "values" */
	struct node *a, *b;
	struct node **args;
	unsigned nargs;
	const struct node *let;  /* N_LET: the let's expression (not owned) */
	const char *file;
	unsigned line, col;
};

struct tpart { char *lit; struct node *e; };
struct tmpl { struct tpart *p; unsigned n; };

struct rule {
	char *name, *verdict;
	const char *file;        /* base name, owned by struct rules */
	unsigned line;
	char **letname;
	struct node **letexpr;
	unsigned nlet;
	struct node **terms;
	unsigned nterm;
	struct tmpl explain, action;
	int has_verdict;
};

struct signal {
	char *name, *profile;
	struct node *e;
	const char *file;
	unsigned line;
};

struct siguse { char *name; const char *file; unsigned line, col; };

struct rules {
	struct rule **rules;
	size_t nrules;
	struct signal **sigs;
	size_t nsigs;
	char **files;            /* owned strings (paths and base names) */
	size_t nfiles;
	struct siguse *uses;     /* checked once every file is loaded */
	size_t nuses;
	int nerr;
};

/* ------------------------------------------------------------------ */
/* Small helpers */

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	while (nc < need)
		nc *= 2;
	p = realloc(*arr, nc * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = nc;
	return 0;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	for (unsigned i = 0; i < n->nargs; i++)
		node_free(n->args[i]);
	free(n->args);
	free(n->str);
	free(n->text);
	free(n);
}

static void tmpl_free(struct tmpl *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		free(t->p[i].lit);
		node_free(t->p[i].e);
	}
	free(t->p);
	t->p = NULL;
	t->n = 0;
}

static void rule_free(struct rule *ru)
{
	if (!ru)
		return;
	for (unsigned i = 0; i < ru->nlet; i++) {
		free(ru->letname[i]);
		node_free(ru->letexpr[i]);
	}
	free(ru->letname);
	free(ru->letexpr);
	for (unsigned i = 0; i < ru->nterm; i++)
		node_free(ru->terms[i]);
	free(ru->terms);
	tmpl_free(&ru->explain);
	tmpl_free(&ru->action);
	free(ru->name);
	free(ru->verdict);
	free(ru);
}

static void signal_free(struct signal *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->profile);
	node_free(s->e);
	free(s);
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrules; i++)
		rule_free(r->rules[i]);
	free(r->rules);
	for (size_t i = 0; i < r->nsigs; i++)
		signal_free(r->sigs[i]);
	free(r->sigs);
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	for (size_t i = 0; i < r->nuses; i++)
		free(r->uses[i].name);
	free(r->uses);
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r ? r->nrules : 0;
}

static const char *keep_string(struct rules *r, const char *s)
{
	char *c = strdup(s);
	char **f;

	if (!c)
		return NULL;
	f = realloc(r->files, (r->nfiles + 1) * sizeof(*f));
	if (!f) {
		free(c);
		return NULL;
	}
	r->files = f;
	r->files[r->nfiles++] = c;
	return c;
}

/* ------------------------------------------------------------------ */
/* Lexer */

enum tk { T_EOF, T_NL, T_ID, T_NUM, T_STR, T_LB, T_RB, T_LP, T_RP, T_COMMA, T_ASSIGN, T_OP };

struct tok {
	enum tk t;
	enum op op;
	unsigned line, col;
	size_t s, e;       /* span in the source */
	char *str;         /* T_ID, T_STR (unescaped) */
	double num;
	int adj;           /* no blank before it */
};

struct pstate {
	struct rules *r;
	const char *path;        /* for messages */
	const char *fname;       /* base name kept in r */
	const char *src;
	size_t srclen;
	struct tok *toks;
	size_t ntok, pos;
	int paren;               /* > 0: newlines are blanks */
	int depth;
	int nerr;                /* this file */
	rules_report_fn report;
	void *arg;
	struct rule *cur;        /* rule being parsed */
	int sigctx;              /* parsing a signal's expression */
	int in_brate;            /* inside baseline_rate() */
	int oom;
};

__attribute__((format(printf, 4, 5)))
static void perr(struct pstate *ps, unsigned line, unsigned col, const char *fmt, ...)
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
		snprintf(msg, sizeof(msg), "too many errors, stopping reports for this file");
	snprintf(full, sizeof(full), "%s:%u:%u: %s", ps->path, line, col, msg);
	if (ps->report)
		ps->report(full, ps->arg);
}

static int is_id0(int c) { return isalpha(c) || c == '_'; }
static int is_id(int c) { return isalnum(c) || c == '_' || c == '.'; }

static void toks_free(struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].str);
	free(t);
}

/* Lex src[0..len) into ps->toks. line0/col0: position of src[0]. */
static int lex(struct pstate *ps, const char *src, size_t len, unsigned line0, unsigned col0)
{
	struct tok *v = NULL;
	size_t n = 0, cap = 0, i = 0;
	unsigned line = line0, col = col0;
	int blank = 1;

	while (1) {
		struct tok t = { 0 };
		int c;

		if (grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
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
			t.str = xstrndup(src + s, i - s);
			col += (unsigned)(i - s);
			/* sum(GLOB): the glob is taken raw, up to ')' */
			if (t.str && !strcmp(t.str, "sum") && i < len && src[i] == '(') {
				size_t g = i + 1, ge;
				struct tok lp = { .t = T_LP, .line = line, .col = col, .s = i, .e = i + 1, .adj = 1 };
				struct tok gs = { .t = T_STR, .line = line, .col = col + 1 };

				while (g < len && src[g] != ')' && src[g] != '\n')
					g++;
				if (g >= len || src[g] != ')') {
					t.e = i;
					v[n++] = t;
					perr(ps, line, col, "sum( without ')' on the same line");
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
					gs.str = xstrndup(src + a, b - a);
				}
				t.e = i;
				v[n++] = t;
				if (grow((void **)&v, &cap, n + 3, sizeof(*v)) < 0) {
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
				perr(ps, t.line, t.col, "number too long");
			} else {
				memcpy(buf, src + s, k);
				buf[k] = '\0';
				errno = 0;
				t.num = strtod(buf, &end);
				if (*end || errno || !isfinite(t.num))
					perr(ps, t.line, t.col, "bad number '%s'", buf);
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
				perr(ps, t.line, t.col, "unterminated string");
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
					perr(ps, line, col, "unexpected character '%c'", c);
				else
					perr(ps, line, col, "unexpected byte 0x%02x", (unsigned)c);
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

/* ------------------------------------------------------------------ */
/* Parser */

static const struct tok eof_tok = { .t = T_EOF };

static const struct tok *peek(struct pstate *ps)
{
	while (ps->paren > 0 && ps->pos < ps->ntok && ps->toks[ps->pos].t == T_NL)
		ps->pos++;
	return ps->pos < ps->ntok ? &ps->toks[ps->pos] : &eof_tok;
}

static const struct tok *next(struct pstate *ps)
{
	const struct tok *t = peek(ps);

	if (ps->pos < ps->ntok && t->t != T_EOF)
		ps->pos++;
	return t;
}

static const char *tok_desc(const struct tok *t, char *buf, size_t len)
{
	switch (t->t) {
	case T_EOF: return "end of file";
	case T_NL: return "end of line";
	case T_ID: snprintf(buf, len, "'%.60s'", t->str ? t->str : ""); return buf;
	case T_STR: snprintf(buf, len, "string \"%.60s\"", t->str ? t->str : ""); return buf;
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

static void perr_tok(struct pstate *ps, const struct tok *t, const char *what)
{
	char b[96];

	perr(ps, t->line ? t->line : 1, t->col ? t->col : 1, "expected %s, got %s",
	     what, tok_desc(t, b, sizeof(b)));
}

/* Source text of tokens [first, ps->pos), blanks collapsed. */
static char *span_text(struct pstate *ps, size_t first)
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
	n->text = span_text(ps, first);
	if (!n->text) {
		ps->oom = 1;
		node_free(n);
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

static int signal_known(const struct rules *r, const char *name)
{
	for (size_t i = 0; i < r->nsigs; i++)
		if (!strcmp(r->sigs[i]->name, name))
			return 1;
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
		return n->dom;
	case N_PERIOD:
		return n->dom;
	case N_LET:
		return expr_dom(n->let, depth + 1);
	case N_CALL:
		if (fns_tab[n->fn].quant)
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
		return n->dual ? NULL : n;
	case N_PERIOD:
		return n->dom == D_PORT ? n : NULL;
	case N_LET:
		return free_field(n->let, depth + 1);
	case N_CALL:
		if (fns_tab[n->fn].quant)
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

static int check_free(struct pstate *ps, const struct node *n)
{
	const struct node *f = free_field(n, 0);

	if (!f)
		return 0;
	perr(ps, f->line, f->col, "'%s' names a list item: use it inside any(), all(), "
	     "count(), first(), sumof(), maxof() or minof()", f->text ? f->text : "?");
	return -1;
}

static struct node *parse_expr(struct pstate *ps);

static int parse_period(const char *s, enum per *per, const char **rest)
{
	for (int p = 0; p < P_N; p++) {
		size_t l = strlen(per_name[p]);

		if (!strncmp(s, per_name[p], l) && s[l] == '.' && s[l + 1]) {
			*per = (enum per)p;
			*rest = s + l + 1;
			return 1;
		}
	}
	return 0;
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
	for (size_t i = 0; i < sizeof(facts_tab) / sizeof(facts_tab[0]); i++)
		if (!strcmp(facts_tab[i].name, s)) {
			if (!(n = mk(ps, N_FACT, t)))
				return NULL;
			n->fact = facts_tab[i].f;
			return n;
		}
	{
		int port = !strncmp(s, "port.", 5);

		if (parse_period(port ? s + 5 : s, &per, &rest)) {
			if (strchr(rest, '.') || strchr(rest, '/')) {
				perr(ps, t->line, t->col, "'%s': expected %s.SIGNAL or %s.span_s",
				     s, per_name[per], per_name[per]);
				return NULL;
			}
			if (!(n = mk(ps, N_PERIOD, t)))
				return NULL;
			n->per = per;
			n->dom = port ? D_PORT : D_NONE;
			if (!strcmp(rest, "span_s")) {
				n->span = 1;
			} else {
				n->str = strdup(rest);
				if (!n->str || add_use(ps, rest, t) < 0) {
					ps->oom = 1;
					node_free(n);
					return NULL;
				}
			}
			return n;
		}
	}
	for (size_t i = 0; i < sizeof(fields_tab) / sizeof(fields_tab[0]); i++) {
		const char *dn = dom_name[fields_tab[i].d];
		size_t l = strlen(dn);

		if (!strncmp(s, dn, l) && s[l] == '.' && !strcmp(s + l + 1, fields_tab[i].name)) {
			if (!(n = mk(ps, N_FIELD, t)))
				return NULL;
			n->dom = fields_tab[i].d;
			n->dual = fields_tab[i].dual;
			n->str = strdup(fields_tab[i].name);
			return n;
		}
	}
	if (ps->in_brate && !strchr(s, '.') && !strchr(s, '/')) {
		if (!(n = mk(ps, N_SIGREF, t)))
			return NULL;
		n->str = strdup(s);
		if (!n->str || add_use(ps, s, t) < 0) {
			ps->oom = 1;
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (strchr(s, '/'))
		perr(ps, t->line, t->col, "unknown name '%s' (write division with blanks: a / b)", s);
	else if (!strchr(s, '.') && signal_known(ps->r, s))
		perr(ps, t->line, t->col, "signal '%s' needs a period: stall.%s, window.%s "
		     "(a bare signal only inside baseline_rate())", s, s, s);
	else
		perr(ps, t->line, t->col, "unknown name '%s'", s);
	return NULL;
}

static struct node *parse_call(struct pstate *ps, const struct tok *t, size_t first)
{
	struct node *n;
	size_t fi = 0, nf = sizeof(fns_tab) / sizeof(fns_tab[0]);
	const struct tok *c;

	if (ps->sigctx) {
		if (strcmp(t->str, "sum")) {
			perr(ps, t->line, t->col, "function %s() not allowed in a signal (only sum(GLOB))", t->str);
			return NULL;
		}
		next(ps);  /* ( */
		c = next(ps);
		if (c->t != T_STR || !c->str || !*c->str) {
			perr(ps, t->line, t->col, "sum() needs a counter name pattern");
			return NULL;
		}
		if (peek(ps)->t != T_RP) {
			perr_tok(ps, peek(ps), "')'");
			return NULL;
		}
		next(ps);
		if (!(n = mk(ps, N_SUMGLOB, t)))
			return NULL;
		n->str = strdup(c->str);
		return finish(ps, n, first);
	}
	while (fi < nf && strcmp(fns_tab[fi].name, t->str))
		fi++;
	if (fi == nf) {
		perr(ps, t->line, t->col, "unknown function %s()", t->str);
		return NULL;
	}
	if (!(n = mk(ps, N_CALL, t)))
		return NULL;
	n->fn = fns_tab[fi].fn;
	next(ps);  /* ( */
	ps->paren++;
	if (n->fn == FN_BRATE)
		ps->in_brate++;
	if (peek(ps)->t != T_RP) {
		while (1) {
			struct node *a = parse_expr(ps);
			struct node **v;

			if (!a)
				goto fail;
			v = realloc(n->args, (n->nargs + 1) * sizeof(*v));
			if (!v) {
				node_free(a);
				ps->oom = 1;
				goto fail;
			}
			n->args = v;
			n->args[n->nargs++] = a;
			if (peek(ps)->t == T_COMMA) {
				next(ps);
				continue;
			}
			break;
		}
	}
	if (peek(ps)->t != T_RP) {
		perr_tok(ps, peek(ps), "',' or ')'");
		goto fail;
	}
	next(ps);
	ps->paren--;
	if (n->fn == FN_BRATE)
		ps->in_brate--;
	if (n->nargs < fns_tab[fi].min || n->nargs > fns_tab[fi].max) {
		if (fns_tab[fi].min == fns_tab[fi].max)
			perr(ps, t->line, t->col, "%s() takes %u argument%s, not %u", t->str,
			     fns_tab[fi].min, fns_tab[fi].min == 1 ? "" : "s", n->nargs);
		else
			perr(ps, t->line, t->col, "%s() takes %u to %u arguments, not %u", t->str,
			     fns_tab[fi].min, fns_tab[fi].max, n->nargs);
		node_free(n);
		return NULL;
	}
	if (n->fn == FN_RATE && (n->args[0]->k != N_PERIOD || n->args[0]->span)) {
		perr(ps, n->args[0]->line, n->args[0]->col,
		     "rate() takes stall.SIGNAL, window.SIGNAL or baseline.SIGNAL");
		node_free(n);
		return NULL;
	}
	if (fns_tab[fi].quant) {
		enum dom d = D_NONE;

		for (unsigned i = 0; i < n->nargs; i++)
			d = dom_join(d, expr_dom(n->args[i], 0));
		if (d == D_NONE || d == D_MULTI) {
			perr(ps, t->line, t->col, d == D_NONE ?
			     "%s() names no thread., flow., ping., capture. or port. field" :
			     "%s() mixes fields of different lists", t->str);
			node_free(n);
			return NULL;
		}
		n->dom = d;
	}
	return finish(ps, n, first);
fail:
	ps->paren--;
	if (n->fn == FN_BRATE)
		ps->in_brate--;
	node_free(n);
	return NULL;
}

static struct node *parse_primary(struct pstate *ps)
{
	size_t first;
	const struct tok *t;
	struct node *n = NULL;
	char b[96];

	if (++ps->depth > MAX_PDEPTH) {
		t = peek(ps);
		perr(ps, t->line, t->col, "expression nested too deeply");
		ps->depth--;
		return NULL;
	}
	t = peek(ps);
	first = ps->pos;
	switch (t->t) {
	case T_NUM:
		next(ps);
		if ((n = mk(ps, N_NUM, t)))
			n->num = t->num;
		n = finish(ps, n, first);
		break;
	case T_STR:
		next(ps);
		if ((n = mk(ps, ps->sigctx ? N_COUNTER : N_STR, t)) && !(n->str = strdup(t->str ? t->str : "")))
			ps->oom = 1;
		n = finish(ps, n, first);
		break;
	case T_LP:
		next(ps);
		ps->paren++;
		n = parse_expr(ps);
		if (n && peek(ps)->t != T_RP) {
			perr_tok(ps, peek(ps), "')'");
			node_free(n);
			n = NULL;
		} else if (n) {
			next(ps);
		}
		ps->paren--;
		n = finish(ps, n, first);
		break;
	case T_ID:
		next(ps);
		if (ps->pos < ps->ntok && ps->toks[ps->pos].t == T_LP && ps->toks[ps->pos].adj) {
			n = parse_call(ps, t, first);
			break;
		}
		if (!ps->sigctx && (!strcmp(t->str, "true") || !strcmp(t->str, "false"))) {
			if ((n = mk(ps, N_BOOL, t)))
				n->num = !strcmp(t->str, "true");
		} else if (ps->sigctx) {
			if ((n = mk(ps, signal_known(ps->r, t->str) ? N_SIGREF : N_COUNTER, t)) &&
			    !(n->str = strdup(t->str)))
				ps->oom = 1;
		} else {
			n = resolve_path(ps, t);
		}
		n = finish(ps, n, first);
		break;
	default:
		perr(ps, t->line ? t->line : 1, t->col ? t->col : 1, "expected a value, got %s",
		     tok_desc(t, b, sizeof(b)));
	}
	ps->depth--;
	return n;
}

static struct node *mkop(struct pstate *ps, enum nk k, enum op op, const struct tok *t,
			 struct node *a, struct node *b, size_t first)
{
	struct node *n;

	if (!a || (k == N_BIN && !b)) {
		node_free(a);
		node_free(b);
		return NULL;
	}
	if (!(n = mk(ps, k, t))) {
		node_free(a);
		node_free(b);
		return NULL;
	}
	n->op = op;
	n->a = a;
	n->b = b;
	return finish(ps, n, first);
}

static struct node *parse_unary(struct pstate *ps)
{
	const struct tok *t = peek(ps);
	size_t first = ps->pos;

	if (t->t == T_OP && t->op == O_SUB) {
		struct node *a;

		next(ps);
		if (++ps->depth > MAX_PDEPTH) {
			perr(ps, t->line, t->col, "expression nested too deeply");
			ps->depth--;
			return NULL;
		}
		a = parse_unary(ps);
		ps->depth--;
		return mkop(ps, N_UN, O_NEG, t, a, NULL, first);
	}
	return parse_primary(ps);
}

static struct node *parse_mul(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_unary(ps);
	const struct tok *t;

	while (a && (t = peek(ps))->t == T_OP && (t->op == O_MUL || t->op == O_DIV)) {
		next(ps);
		a = mkop(ps, N_BIN, t->op, t, a, parse_unary(ps), first);
	}
	return a;
}

static struct node *parse_add(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_mul(ps);
	const struct tok *t;

	while (a && (t = peek(ps))->t == T_OP && (t->op == O_ADD || t->op == O_SUB)) {
		next(ps);
		a = mkop(ps, N_BIN, t->op, t, a, parse_mul(ps), first);
	}
	return a;
}

static struct node *parse_cmp(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_add(ps);
	const struct tok *t = peek(ps);

	if (a && t->t == T_OP && t->op >= O_EQ && t->op <= O_NMATCH) {
		if (ps->sigctx) {
			perr(ps, t->line, t->col, "comparison not allowed in a signal");
			node_free(a);
			return NULL;
		}
		next(ps);
		a = mkop(ps, N_BIN, t->op, t, a, parse_add(ps), first);
		t = peek(ps);
		if (a && t->t == T_OP && t->op >= O_EQ && t->op <= O_NMATCH) {
			perr(ps, t->line, t->col, "comparisons do not chain: use 'and'");
			node_free(a);
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
	const struct tok *t = peek(ps);
	size_t first = ps->pos;

	if (is_kw(t, "not") && !ps->sigctx) {
		struct node *a;

		next(ps);
		if (++ps->depth > MAX_PDEPTH) {
			perr(ps, t->line, t->col, "expression nested too deeply");
			ps->depth--;
			return NULL;
		}
		a = parse_not(ps);
		ps->depth--;
		return mkop(ps, N_UN, O_NOT, t, a, NULL, first);
	}
	return parse_cmp(ps);
}

static struct node *parse_and(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a = parse_not(ps);
	const struct tok *t;

	while (a && !ps->sigctx && is_kw((t = peek(ps)), "and")) {
		next(ps);
		a = mkop(ps, N_BIN, O_AND, t, a, parse_not(ps), first);
	}
	return a;
}

static struct node *parse_expr(struct pstate *ps)
{
	size_t first = ps->pos;
	struct node *a;
	const struct tok *t;

	if (++ps->depth > MAX_PDEPTH) {
		t = peek(ps);
		perr(ps, t->line, t->col, "expression nested too deeply");
		ps->depth--;
		return NULL;
	}
	a = parse_and(ps);
	while (a && !ps->sigctx && is_kw((t = peek(ps)), "or")) {
		next(ps);
		a = mkop(ps, N_BIN, O_OR, t, a, parse_and(ps), first);
	}
	ps->depth--;
	return a;
}

/* ------------------------------------------------------------------ */
/* Statements */

/* A name: an identifier, with '-' and more identifiers or numbers glued
 * on without blanks ("port-drop", "engine-hold2"). */
static char *read_name(struct pstate *ps, const char *what)
{
	const struct tok *t = peek(ps);
	size_t s, e;
	char *name;

	if (t->t != T_ID || strchr(t->str, '/')) {
		perr_tok(ps, t, what);
		return NULL;
	}
	s = t->s;
	e = t->e;
	next(ps);
	while (ps->pos < ps->ntok) {
		const struct tok *u = &ps->toks[ps->pos];

		if (!u->adj || !((u->t == T_OP && u->op == O_SUB) || u->t == T_ID || u->t == T_NUM))
			break;
		e = u->e;
		ps->pos++;
	}
	name = xstrndup(ps->src + s, e - s);
	if (!name)
		ps->oom = 1;
	else if (name[e - s - 1] == '-') {
		perr(ps, t->line, t->col, "bad name '%s'", name);
		free(name);
		return NULL;
	}
	return name;
}

static int tmpl_add(struct pstate *ps, struct tmpl *tm, char *lit, struct node *e)
{
	struct tpart *p = realloc(tm->p, (tm->n + 1) * sizeof(*p));

	if (!p) {
		free(lit);
		node_free(e);
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
			perr(ps, t->line, t->col + 1 + (unsigned)i, "'}' without '{' (write }} for a brace)");
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
				perr(ps, t->line, col - 1, "'{' without '}'");
				bad = 1;
				break;
			}
			lit[o] = '\0';
			if (o && tmpl_add(ps, tm, xstrndup(lit, o), NULL) < 0)
				break;
			o = 0;
			sub = *ps;
			sub.src = s + i + 1;
			sub.srclen = (size_t)(close - (s + i + 1));
			sub.paren = 0;
			sub.depth = 0;
			sub.nerr = 0;
			if (lex(&sub, sub.src, sub.srclen, t->line, col) < 0) {
				ps->oom = 1;
			}
			e = NULL;
			if (!sub.oom && !sub.nerr) {
				e = parse_expr(&sub);
				if (e && peek(&sub)->t != T_EOF) {
					perr_tok(&sub, peek(&sub), "'}'");
					node_free(e);
					e = NULL;
				}
				if (e && check_free(&sub, e) < 0) {
					node_free(e);
					e = NULL;
				}
			}
			toks_free(sub.toks, sub.ntok);
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
		tmpl_add(ps, tm, xstrndup(lit, o), NULL);
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
		node_free(n);
		return;
	}
	v = realloc(ru->terms, (ru->nterm + 1) * sizeof(*v));
	if (!v) {
		ps->oom = 1;
		node_free(n);
		return;
	}
	ru->terms = v;
	ru->terms[ru->nterm++] = n;
}

static int parse_signal(struct pstate *ps, const struct tok *kw)
{
	const struct tok *t = peek(ps);
	char *name;
	char *profiles[16];
	unsigned np = 0;
	size_t estart;
	int rc = -1;

	(void)kw;
	if (t->t != T_ID || strchr(t->str, '.') || strchr(t->str, '/')) {
		perr_tok(ps, t, "a signal name");
		return -1;
	}
	name = strdup(t->str);
	next(ps);
	while (1) {
		t = peek(ps);
		if (t->t != T_ID || strchr(t->str, '.') || strchr(t->str, '/')) {
			perr_tok(ps, t, "a profile name (mlx5, sfc, generic...)");
			goto out;
		}
		if (np == sizeof(profiles) / sizeof(profiles[0])) {
			perr(ps, t->line, t->col, "too many profiles");
			goto out;
		}
		profiles[np++] = t->str;
		next(ps);
		if (peek(ps)->t == T_COMMA) {
			next(ps);
			continue;
		}
		break;
	}
	if (peek(ps)->t != T_ASSIGN) {
		perr_tok(ps, peek(ps), "'='");
		goto out;
	}
	next(ps);
	estart = ps->pos;
	for (unsigned p = 0; p < np; p++) {
		struct signal *sg;
		struct node *e;
		size_t j;

		ps->pos = estart;
		ps->sigctx = 1;
		e = parse_expr(ps);
		ps->sigctx = 0;
		if (!e)
			goto out;
		for (j = 0; j < ps->r->nsigs; j++)
			if (!strcmp(ps->r->sigs[j]->name, name) &&
			    !strcmp(ps->r->sigs[j]->profile, profiles[p]))
				break;
		if (j < ps->r->nsigs && ps->r->sigs[j]->file == ps->fname) {
			perr(ps, kw->line, kw->col, "signal %s for profile %s already defined at line %u",
			     name, profiles[p], ps->r->sigs[j]->line);
			node_free(e);
			goto out;
		}
		sg = calloc(1, sizeof(*sg));
		if (!sg || !(sg->name = strdup(name)) || !(sg->profile = strdup(profiles[p]))) {
			signal_free(sg);
			node_free(e);
			ps->oom = 1;
			goto out;
		}
		sg->e = e;
		sg->file = ps->fname;
		sg->line = kw->line;
		if (j < ps->r->nsigs) {          /* a later file replaces it */
			signal_free(ps->r->sigs[j]);
			ps->r->sigs[j] = sg;
		} else {
			struct signal **v = realloc(ps->r->sigs, (ps->r->nsigs + 1) * sizeof(*v));

			if (!v) {
				signal_free(sg);
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
		perr(ps, ru->line, 1, "rule %s has no verdict", ru->name);
		rule_free(ru);
		return;
	}
	for (j = 0; j < ps->r->nrules; j++)
		if (!strcmp(ps->r->rules[j]->name, ru->name))
			break;
	if (j < ps->r->nrules) {
		if (ps->r->rules[j]->file == ps->fname) {
			perr(ps, ru->line, 1, "rule %s already defined at line %u", ru->name,
			     ps->r->rules[j]->line);
			rule_free(ru);
			return;
		}
		rule_free(ps->r->rules[j]);      /* later file: replace in place */
		ps->r->rules[j] = ru;
		return;
	}
	{
		struct rule **v = realloc(ps->r->rules, (ps->r->nrules + 1) * sizeof(*v));

		if (!v) {
			ps->oom = 1;
			rule_free(ru);
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
			perr(ps, kw->line, kw->col, "rule %s: second verdict", ru->name);
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
		size_t first;

		t = peek(ps);
		if (t->t != T_ID || strchr(t->str, '.') || strchr(t->str, '/')) {
			perr_tok(ps, t, "a name");
			return -1;
		}
		for (size_t i = 0; i < sizeof(facts_tab) / sizeof(facts_tab[0]); i++)
			if (!strcmp(facts_tab[i].name, t->str)) {
				perr(ps, t->line, t->col, "'%s' is a fact name", t->str);
				return -1;
			}
		for (unsigned i = 0; i < ru->nlet; i++)
			if (!strcmp(ru->letname[i], t->str)) {
				perr(ps, t->line, t->col, "'%s' already defined in rule %s", t->str, ru->name);
				return -1;
			}
		next(ps);
		if (peek(ps)->t != T_ASSIGN) {
			perr_tok(ps, peek(ps), "'='");
			return -1;
		}
		next(ps);
		first = ps->pos;
		(void)first;
		if (!(e = parse_expr(ps)))
			return -1;
		vn = realloc(ru->letname, (ru->nlet + 1) * sizeof(*vn));
		if (vn)
			ru->letname = vn;
		ve = realloc(ru->letexpr, (ru->nlet + 1) * sizeof(*ve));
		if (ve)
			ru->letexpr = ve;
		if (!vn || !ve || !(ru->letname[ru->nlet] = strdup(t->str))) {
			node_free(e);
			ps->oom = 1;
			return -1;
		}
		ru->letexpr[ru->nlet++] = e;
		return 0;
	}
	if (!strcmp(kw->str, "require")) {
		if (!(e = parse_expr(ps)))
			return -1;
		if (check_free(ps, e) < 0) {
			node_free(e);
			return -1;
		}
		split_and(ps, ru, e);
		return 0;
	}
	if (!strcmp(kw->str, "explain") || !strcmp(kw->str, "action")) {
		struct tmpl *tm = kw->str[0] == 'e' ? &ru->explain : &ru->action;

		t = peek(ps);
		if (t->t != T_STR) {
			perr_tok(ps, t, "a quoted template");
			return -1;
		}
		next(ps);
		if (tm->n) {
			perr(ps, kw->line, kw->col, "rule %s: second %s", ru->name, kw->str);
			return -1;
		}
		return parse_template(ps, t, tm) < 0 ? -1 : 0;
	}
	perr(ps, kw->line, kw->col, "unknown statement '%s' in rule %s "
	     "(verdict, let, require, explain, action or '}')", kw->str, ru->name);
	return -1;
}

static int parse_rule_head(struct pstate *ps, const struct tok *kw)
{
	struct rule *ru;
	char *name;

	if (!(name = read_name(ps, "a rule name")))
		return -1;
	if (peek(ps)->t != T_LB) {
		perr_tok(ps, peek(ps), "'{'");
		free(name);
		return -1;
	}
	next(ps);
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

static void parse_file(struct pstate *ps)
{
	while (!ps->oom) {
		const struct tok *t;
		int rc = 0;

		ps->paren = 0;
		ps->depth = 0;
		t = peek(ps);
		if (t->t == T_EOF)
			break;
		if (t->t == T_NL) {
			next(ps);
			continue;
		}
		if (t->t == T_RB) {
			next(ps);
			if (ps->cur)
				rule_close(ps);
			else {
				perr(ps, t->line, t->col, "'}' outside a rule");
				rc = -1;
			}
		} else if (t->t != T_ID) {
			perr_tok(ps, t, ps->cur ? "a rule statement or '}'" : "'signal' or 'rule'");
			rc = -1;
		} else if (ps->cur && (!strcmp(t->str, "rule") || !strcmp(t->str, "signal"))) {
			perr(ps, t->line, t->col, "missing '}' of rule %s (line %u)",
			     ps->cur->name, ps->cur->line);
			rule_close(ps);
			continue;
		} else if (ps->cur) {
			next(ps);
			rc = parse_rule_stmt(ps, t);
		} else if (!strcmp(t->str, "signal")) {
			next(ps);
			rc = parse_signal(ps, t);
		} else if (!strcmp(t->str, "rule")) {
			next(ps);
			rc = parse_rule_head(ps, t);
		} else {
			perr(ps, t->line, t->col, "expected 'signal' or 'rule', got '%s'", t->str);
			rc = -1;
		}
		if (rc < 0) {
			skip_line(ps);
			continue;
		}
		ps->paren = 0;
		t = peek(ps);
		if (t->t == T_RB && ps->cur)     /* "... }" closing on the same line */
			continue;
		if (t->t != T_NL && t->t != T_EOF) {
			perr_tok(ps, t, "end of line");
			skip_line(ps);
		}
	}
	if (ps->cur) {
		perr(ps, ps->cur->line, 1, "rule %s: missing '}' at end of file", ps->cur->name);
		rule_close(ps);
	}
}

/* ------------------------------------------------------------------ */
/* Evaluation: three-valued, over hostile facts */

enum vt { V_UNK, V_NUM, V_BOOL, V_STR };

struct val {
	enum vt t;
	double n;           /* V_NUM; V_BOOL: 0/1 */
	const char *s;      /* V_STR */
	const char *why;    /* V_UNK: the missing fact */
};

struct arena { char **p; size_t n, cap; };

struct ectx {
	const struct rules *r;
	struct json_object *facts;
	struct json_object *port;     /* current port object (NULL: missing) */
	const char *portname;
	const char *profile;
	enum dom dom;                 /* quantifier item kind, D_NONE outside */
	struct json_object *item;
	const char *iname;            /* port item's name */
	int bare_baseline;            /* inside baseline_rate() */
	int depth;
	struct arena *ar;
};

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
	a->p = NULL;
	a->n = a->cap = 0;
}

__attribute__((format(printf, 2, 3)))
static const char *afmt(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "out of memory";
	if (grow((void **)&a->p, &a->cap, a->n + 1, sizeof(*a->p)) < 0) {
		free(s);
		return "out of memory";
	}
	a->p[a->n++] = s;
	return s;
}

static struct val unk(const char *why) { return (struct val){ .t = V_UNK, .why = why }; }
static struct val num(double n)
{
	if (!isfinite(n))
		return unk("arithmetic overflow");
	return (struct val){ .t = V_NUM, .n = n };
}
static struct val boolv(int b) { return (struct val){ .t = V_BOOL, .n = b ? 1 : 0 }; }
static struct val strv(const char *s) { return (struct val){ .t = V_STR, .s = s }; }

static struct json_object *jget(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static int jnum(struct json_object *j, double *d)
{
	double x;

	if (!j)
		return 0;
	switch (json_object_get_type(j)) {
	case json_type_int:
		if (json_object_get_int64(j) == INT64_MAX)   /* maybe a big u64 */
			x = (double)json_object_get_uint64(j);
		else
			x = (double)json_object_get_int64(j);
		break;
	case json_type_double:
		x = json_object_get_double(j);
		break;
	default:
		return 0;
	}
	if (!isfinite(x))
		return 0;
	*d = x;
	return 1;
}

/* A scalar json value as a val; what names it in the "why". */
static struct val jval(struct ectx *c, struct json_object *j, const char *what)
{
	double d;

	if (!j)
		return unk(afmt(c->ar, "%s missing", what));
	switch (json_object_get_type(j)) {
	case json_type_boolean:
		return boolv(json_object_get_boolean(j));
	case json_type_string:
		return strv(json_object_get_string(j));
	case json_type_int:
	case json_type_double:
		if (jnum(j, &d))
			return num(d);
		return unk(afmt(c->ar, "%s is not a finite number", what));
	default:
		return unk(afmt(c->ar, "%s has the wrong type", what));
	}
}

static const struct signal *sig_find(const struct rules *r, const char *profile, const char *name)
{
	const struct signal *g = NULL;

	for (size_t i = 0; i < r->nsigs; i++) {
		if (strcmp(r->sigs[i]->name, name))
			continue;
		if (profile && !strcmp(r->sigs[i]->profile, profile))
			return r->sigs[i];
		if (!strcmp(r->sigs[i]->profile, "generic"))
			g = r->sigs[i];
	}
	return g;
}

struct sx {
	const struct rules *r;
	const char *profile;
	struct json_object *counters;
	unsigned nleaf, nmiss;
	int depth;
	struct arena *ar;
};

static struct val sig_value(const struct rules *r, const char *profile, const char *name,
			    struct json_object *counters, int depth, struct arena *ar);

static struct val arith(enum op op, struct val a, struct val b, struct arena *ar)
{
	if (a.t == V_UNK)
		return a;
	if (b.t == V_UNK)
		return b;
	if (a.t != V_NUM || b.t != V_NUM)
		return unk("arithmetic on a value that is not a number");
	switch (op) {
	case O_ADD: return num(a.n + b.n);
	case O_SUB: return num(a.n - b.n);
	case O_MUL: return num(a.n * b.n);
	case O_DIV:
		if (b.n == 0)
			return unk("division by zero");
		return num(a.n / b.n);
	default:
		(void)ar;
		return unk("bad operator");
	}
}

static struct val sx_eval(struct sx *s, const struct node *n)
{
	struct json_object *j;
	double d;

	if (!n)
		return unk("no expression");
	switch (n->k) {
	case N_NUM:
		return num(n->num);
	case N_COUNTER:
		s->nleaf++;
		if (jnum((j = jget(s->counters, n->str)), &d))
			return num(d);
		s->nmiss++;
		return num(0);
	case N_SUMGLOB: {
		double sum = 0;
		int found = 0;

		s->nleaf++;
		if (s->counters && json_object_is_type(s->counters, json_type_object)) {
			json_object_object_foreach(s->counters, k, v) {
				if (!fnmatch(n->str, k, 0) && jnum(v, &d)) {
					sum += d;
					found = 1;
				}
			}
		}
		if (!found)
			s->nmiss++;
		return num(sum);
	}
	case N_SIGREF:
		return sig_value(s->r, s->profile, n->str, s->counters, s->depth + 1, s->ar);
	case N_UN:
		if (n->op == O_NEG) {
			struct val a = sx_eval(s, n->a);

			return a.t == V_NUM ? num(-a.n) : a;
		}
		return unk("bad operator in a signal");
	case N_BIN:
		return arith(n->op, sx_eval(s, n->a), sx_eval(s, n->b), s->ar);
	default:
		return unk("bad node in a signal");
	}
}

static struct val sig_value(const struct rules *r, const char *profile, const char *name,
			    struct json_object *counters, int depth, struct arena *ar)
{
	const struct signal *sg = sig_find(r, profile, name);
	struct sx s = { .r = r, .profile = profile, .counters = counters, .depth = depth, .ar = ar };
	struct val v;

	if (!sg)
		return unk(afmt(ar, "no signal %s for profile %s", name, profile ? profile : "?"));
	if (depth > MAX_EDEPTH)
		return unk(afmt(ar, "signal %s refers to itself", name));
	if (!counters || !json_object_is_type(counters, json_type_object))
		return unk("counters missing");
	v = sx_eval(&s, sg->e);
	if (v.t == V_UNK)
		return v;
	if (s.nleaf && s.nmiss == s.nleaf)
		return unk(afmt(ar, "none of the counters of %s (profile %s) is there",
				name, sg->profile));
	return v;
}

static const char *port_profile(struct json_object *port)
{
	struct json_object *p = jget(port, "profile");

	if (p && json_object_is_type(p, json_type_string))
		return json_object_get_string(p);
	return "generic";
}

/* Span of a period of a port; 0 and why when missing. */
static int period_span(struct ectx *c, struct json_object *port, const char *pname,
		       enum per per, double *span, const char **why)
{
	struct json_object *pj = jget(port, per_name[per]);

	if (!port) {
		*why = afmt(c->ar, "port %s missing", pname ? pname : "?");
		return -1;
	}
	if (!pj) {
		*why = afmt(c->ar, "ports.%s.%s missing", pname, per_name[per]);
		return -1;
	}
	if (!jnum(jget(pj, "span_s"), span) || *span < 0) {
		*why = afmt(c->ar, "ports.%s.%s.span_s missing or bad", pname, per_name[per]);
		return -1;
	}
	return 0;
}

static struct val period_sig(struct ectx *c, struct json_object *port, const char *pname,
			     enum per per, const char *sig)
{
	struct json_object *pj = jget(port, per_name[per]);
	struct val v;

	if (!port)
		return unk(afmt(c->ar, "port %s missing", pname ? pname : "?"));
	if (!pj)
		return unk(afmt(c->ar, "ports.%s.%s missing", pname, per_name[per]));
	v = sig_value(c->r, port_profile(port), sig, jget(pj, "counters"), c->depth, c->ar);
	if (v.t == V_UNK)
		v.why = afmt(c->ar, "ports.%s.%s: %s", pname, per_name[per], v.why);
	return v;
}

static struct val eval(struct ectx *c, const struct node *n);

static struct json_object *dom_list(struct ectx *c, enum dom d, const char **what)
{
	struct json_object *l = NULL;
	enum json_type want = json_type_array;

	switch (d) {
	case D_THREAD: l = jget(c->facts, "threads"); *what = "threads"; break;
	case D_FLOW: l = jget(jget(c->facts, "flows"), "list"); *what = "flows.list"; break;
	case D_PING: l = jget(c->facts, "pings"); *what = "pings"; break;
	case D_CAPTURE: l = jget(c->facts, "captures"); *what = "captures"; break;
	case D_PORT: l = jget(c->facts, "ports"); *what = "ports"; want = json_type_object; break;
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
		*why = afmt(c->ar, "%s missing", what);
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
			c->profile = port_profile(obj);
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
	struct val v = eval(c, q->n->args[q->n->fn == FN_FIRST ? 1 : 0]);

	if (v.t == V_BOOL) {
		if (v.n) {
			q->ntrue++;
			if (q->n->fn == FN_FIRST) {
				q->best = eval(c, q->n->args[0]);
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
	struct val v = eval(c, q->n->args[0]);

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
		q->best = num(q->best.n + v.n);
		if (q->best.t == V_UNK)
			return 1;
	} else if ((q->n->fn == FN_MAXOF && v.n > q->best.n) ||
		   (q->n->fn == FN_MINOF && v.n < q->best.n)) {
		q->best = v;
	}
	return 0;
}

static struct val quant(struct ectx *c, const struct node *n)
{
	struct qst q = { .n = n };
	const char *why = NULL;
	int agg = n->fn == FN_SUMOF || n->fn == FN_MAXOF || n->fn == FN_MINOF;

	if (c->dom == n->dom)
		return unk("nested quantifier over the same list");
	if (for_items(c, n->dom, agg ? q_agg : q_pred, &q, &why) < 0)
		return unk(why);
	switch (n->fn) {
	case FN_ANY:
		if (q.ntrue)
			return boolv(1);
		return q.nunk ? unk(q.why) : boolv(0);
	case FN_ALL:
		if (q.nfalse)
			return boolv(0);
		return q.nunk ? unk(q.why) : boolv(1);
	case FN_COUNT:
		return q.nunk ? unk(q.why) : num(q.ntrue);
	case FN_FIRST:
		if (q.have)
			return q.best;
		return unk(q.nunk ? q.why : afmt(c->ar, "no %s matches", dom_name[n->dom]));
	case FN_SUMOF:
		if (q.have && q.best.t == V_UNK)
			return q.best;
		if (q.nunk)
			return unk(q.why);
		return q.have ? q.best : num(0);
	default:
		if (q.have)
			return q.best;
		return unk(q.nunk ? q.why : afmt(c->ar, "no %s", dom_name[n->dom]));
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
		return unk(afmt(c->ar, "%s missing", what));
	len = json_object_array_length(l);
	if (!len)
		return unk(afmt(c->ar, "no %s recorded", what));
	for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
		if (!jnum(jget(json_object_array_get_idx(l, i), field), &x))
			return unk(afmt(c->ar, "%s[%zu].%s missing or bad", what, i, field));
		sum += x;
	}
	return num(sum);
}

static struct val fact(struct ectx *c, const struct node *n)
{
	struct json_object *f = c->facts, *j;
	double x;

	switch (n->fact) {
	case F_PORT:
		if (!c->portname)
			return unk("port missing");
		return strv(c->portname);
	case F_PROFILE:
	case F_DRIVER:
	case F_FIRMWARE:
	case F_PSID:
	case F_LINK_UP: {
		static const char *const k[] = { "profile", "driver", "firmware", "psid", "link_up" };
		const char *key = k[n->fact - F_PROFILE];

		if (!c->port)
			return unk(afmt(c->ar, "port %s missing", c->portname ? c->portname : "?"));
		return jval(c, jget(c->port, key), afmt(c->ar, "ports.%s.%s", c->portname, key));
	}
	case F_HELD: {
		static const char *const k[] = { "unsent", "unread", "staged" };
		struct json_object *h = jget(jget(f, "flows"), "held");
		double sum = 0;
		int any = 0;

		if (!h || !json_object_is_type(h, json_type_object))
			return unk("flows.held missing");
		for (int i = 0; i < 3; i++) {
			j = jget(h, k[i]);
			if (!j)
				continue;
			if (!jnum(j, &x) || x < 0)
				return unk(afmt(c->ar, "flows.held.%s is not a count", k[i]));
			sum += x;
			any = 1;
		}
		return any ? num(sum) : unk("flows.held has no unsent, unread or staged");
	}
	case F_HELD_UNSENT:
		return jval(c, jget(jget(jget(f, "flows"), "held"), "unsent"), "flows.held.unsent");
	case F_HELD_UNREAD:
		return jval(c, jget(jget(jget(f, "flows"), "held"), "unread"), "flows.held.unread");
	case F_HELD_STAGED:
		return jval(c, jget(jget(jget(f, "flows"), "held"), "staged"), "flows.held.staged");
	case F_FLOWS_STALLED:
		return jval(c, jget(jget(f, "flows"), "stalled"), "flows.stalled");
	case F_FLOWS_PROGRESSING:
		return jval(c, jget(jget(f, "flows"), "progressing"), "flows.progressing");
	case F_PING_OK: {
		struct json_object *l = jget(f, "pings");
		size_t len;
		const char *why = NULL;
		int bad = 0;

		if (!l || !json_object_is_type(l, json_type_array))
			return unk("pings missing");
		len = json_object_array_length(l);
		if (!len)
			return unk("no pings recorded");
		for (size_t i = 0; i < len && i < MAX_ITEMS; i++) {
			struct json_object *p = json_object_array_get_idx(l, i);
			double rcv, snt;

			if (!jnum(jget(p, "received"), &rcv) || !jnum(jget(p, "sent"), &snt) ||
			    snt < 1) {
				if (!why)
					why = afmt(c->ar, "pings[%zu]: sent/received missing or none sent", i);
				continue;
			}
			if (rcv < 1)
				bad = 1;
		}
		if (bad)
			return boolv(0);
		return why ? unk(why) : boolv(1);
	}
	case F_PING_COUNT:
	case F_CAPTURE_COUNT: {
		const char *key = n->fact == F_PING_COUNT ? "pings" : "captures";
		struct json_object *l = jget(f, key);

		if (!l || !json_object_is_type(l, json_type_array))
			return unk(afmt(c->ar, "%s missing", key));
		return num((double)json_object_array_length(l));
	}
	case F_RELEASED:
		return jval(c, jget(jget(f, "release"), "released"), "release.released");
	case F_RELEASE_ACTION:
		return jval(c, jget(jget(f, "release"), "action"), "release.action");
	case F_RELEASE_AFTER_MS:
		return jval(c, jget(jget(f, "release"), "after_ms"), "release.after_ms");
	}
	return unk("bad fact");
}

static struct val field(struct ectx *c, const struct node *n)
{
	if (c->dom != n->dom) {
		if (n->dual)
			return list_sum(c, n->dom, n->str);
		return unk(afmt(c->ar, "%s.%s outside a quantifier", dom_name[n->dom], n->str));
	}
	if (n->dom == D_PORT && !strcmp(n->str, "name"))
		return strv(c->iname ? c->iname : "");
	if (!c->item || !json_object_is_type(c->item, json_type_object))
		return unk(afmt(c->ar, "a %s item is not an object", dom_name[n->dom]));
	return jval(c, jget(c->item, n->str), afmt(c->ar, "%s.%s", dom_name[n->dom], n->str));
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

		a = eval(c, n->a);
		if (a.t == V_BOOL && (int)a.n == dom)
			return a;
		b = eval(c, n->b);
		if (b.t == V_BOOL && (int)b.n == dom)
			return b;
		if (a.t == V_UNK)
			return a;
		if (b.t == V_UNK)
			return b;
		if (a.t != V_BOOL || b.t != V_BOOL)
			return unk("'and'/'or' on a value that is not true or false");
		return boolv(!dom);
	}
	a = eval(c, n->a);
	b = eval(c, n->b);
	if (a.t == V_UNK)
		return a;
	if (b.t == V_UNK)
		return b;
	switch (n->op) {
	case O_ADD: case O_SUB: case O_MUL: case O_DIV:
		return arith(n->op, a, b, c->ar);
	case O_EQ:
	case O_NE:
		if (a.t != b.t)
			return unk(afmt(c->ar, "%s compares values of different types", n->text));
		return boolv(vequal(a, b) == (n->op == O_EQ));
	case O_MATCH:
	case O_NMATCH:
		if (a.t != V_STR || b.t != V_STR)
			return unk(afmt(c->ar, "%s: '~' needs strings", n->text));
		return boolv(smatch(a.s, b.s) == (n->op == O_MATCH));
	default:
		if (a.t != V_NUM || b.t != V_NUM)
			return unk(afmt(c->ar, "%s: ordering needs numbers", n->text));
		switch (n->op) {
		case O_LT: return boolv(a.n < b.n);
		case O_LE: return boolv(a.n <= b.n);
		case O_GT: return boolv(a.n > b.n);
		case O_GE: return boolv(a.n >= b.n);
		default: return unk("bad operator");
		}
	}
}

static struct val eval_call(struct ectx *c, const struct node *n)
{
	struct val a, b;

	if (fns_tab[n->fn].quant)
		return quant(c, n);
	switch (n->fn) {
	case FN_RATE: {
		const struct node *p = n->args[0];
		double span;
		const char *why;

		a = eval(c, p);
		if (a.t != V_NUM)
			return a;
		if (period_span(c, c->port, c->portname, p->per, &span, &why) < 0)
			return unk(why);
		if (span <= 0)
			return unk(afmt(c->ar, "ports.%s.%s.span_s is 0", c->portname, per_name[p->per]));
		return num(a.n / span);
	}
	case FN_BRATE: {
		double span;
		const char *why;
		struct json_object *bj = jget(c->port, "baseline");

		if (!c->port)
			return unk(afmt(c->ar, "port %s missing", c->portname ? c->portname : "?"));
		if (!bj || period_span(c, c->port, c->portname, P_BASELINE, &span, &why) < 0 ||
		    span <= 0)
			return num(0);       /* no healthy baseline learned */
		c->bare_baseline++;
		a = eval(c, n->args[0]);
		c->bare_baseline--;
		if (a.t != V_NUM)
			return a.t == V_UNK ? a : unk("baseline_rate() of a value that is not a number");
		return num(a.n / span);
	}
	case FN_KNOWN:
		a = eval(c, n->args[0]);
		return boolv(a.t != V_UNK);
	case FN_DEFAULT:
		a = eval(c, n->args[0]);
		return a.t != V_UNK ? a : eval(c, n->args[1]);
	case FN_ABS:
		a = eval(c, n->args[0]);
		if (a.t == V_UNK)
			return a;
		return a.t == V_NUM ? num(fabs(a.n)) : unk("abs() of a value that is not a number");
	case FN_MIN:
	case FN_MAX:
		a = eval(c, n->args[0]);
		b = eval(c, n->args[1]);
		if (a.t == V_UNK)
			return a;
		if (b.t == V_UNK)
			return b;
		if (a.t != V_NUM || b.t != V_NUM)
			return unk("min()/max() of a value that is not a number");
		return num(n->fn == FN_MIN ? fmin(a.n, b.n) : fmax(a.n, b.n));
	default:
		return unk("bad function");
	}
}

static struct val eval(struct ectx *c, const struct node *n)
{
	struct val v;

	if (!n)
		return unk("no expression");
	if (c->depth > MAX_EDEPTH)
		return unk("expression nested too deeply");
	c->depth++;
	switch (n->k) {
	case N_NUM: v = num(n->num); break;
	case N_BOOL: v = boolv(n->num != 0); break;
	case N_STR: v = strv(n->str); break;
	case N_SIGREF:
		if (!c->bare_baseline) {
			v = unk(afmt(c->ar, "bare signal %s outside baseline_rate()", n->str));
			break;
		}
		v = period_sig(c, c->port, c->portname, P_BASELINE, n->str);
		break;
	case N_PERIOD:
		if (n->dom == D_PORT && c->dom != D_PORT) {
			v = unk("port.* outside a quantifier");
			break;
		}
		if (n->span) {
			double span;
			const char *why;

			v = period_span(c, c->port, c->portname, n->per, &span, &why) < 0 ?
			    unk(why) : num(span);
		} else {
			v = period_sig(c, c->port, c->portname, n->per, n->str);
		}
		break;
	case N_FACT: v = fact(c, n); break;
	case N_FIELD: v = field(c, n); break;
	case N_LET: v = eval(c, n->let); break;
	case N_UN:
		v = eval(c, n->a);
		if (v.t == V_UNK)
			break;
		if (n->op == O_NEG)
			v = v.t == V_NUM ? num(-v.n) : unk("'-' of a value that is not a number");
		else
			v = v.t == V_BOOL ? boolv(!v.n) : unk("'not' of a value that is not true or false");
		break;
	case N_BIN: v = eval_bin(c, n); break;
	case N_CALL: v = eval_call(c, n); break;
	default: v = unk("bad expression");
	}
	c->depth--;
	return v;
}

/* ------------------------------------------------------------------ */
/* Classification */

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

			val_text(eval(c, tm->p[i].e), buf, sizeof(buf));
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
	if (!key || jget(values, key))
		return;
	v = eval(c, n);
	json_object_object_add(values, key, val_json(v));
	if (v.t == V_UNK && unknown && !jget(unknown, key))
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
	pn = jget(facts, "port");
	if (pn && json_object_is_type(pn, json_type_string)) {
		c.portname = json_object_get_string(pn);
		c.port = jget(jget(facts, "ports"), c.portname);
		if (c.port && !json_object_is_type(c.port, json_type_object))
			c.port = NULL;
	}
	c.profile = port_profile(c.port);

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
			struct val v = eval(&c, ru->terms[t]);

			if (v.t != V_UNK && v.t != V_BOOL)
				v = unk(afmt(&ar, "'%s' is not true or false", ru->terms[t]->text));
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
	arena_free(&ar);
	return out;
}

int rules_signal(const struct rules *r, const char *profile, const char *signal,
		 struct json_object *counters, double *out)
{
	struct arena ar = { 0 };
	struct val v;

	if (!r || !signal || !out)
		return -1;
	v = sig_value(r, profile, signal, counters, 0, &ar);
	arena_free(&ar);
	if (v.t != V_NUM)
		return -1;
	*out = v.n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Loading */

static void report_path(rules_report_fn report, void *arg, struct rules *r,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void report_path(rules_report_fn report, void *arg, struct rules *r,
			const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	r->nerr++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (report)
		report(msg, arg);
}

static void parse_text(struct rules *r, const char *path, const char *base,
		       const char *text, size_t len, rules_report_fn report, void *arg)
{
	struct pstate ps = { .r = r, .report = report, .arg = arg };

	ps.path = keep_string(r, path);
	ps.fname = keep_string(r, base);
	if (!ps.path || !ps.fname) {
		report_path(report, arg, r, "%s: out of memory", path);
		return;
	}
	ps.src = text;
	ps.srclen = len;
	if (memchr(text, '\0', len)) {
		report_path(report, arg, r, "%s: binary file (NUL byte)", path);
		return;
	}
	if (lex(&ps, text, len, 1, 1) == 0)
		parse_file(&ps);
	if (ps.oom)
		report_path(report, arg, r, "%s: out of memory", path);
	if (ps.cur)
		rule_free(ps.cur);
	toks_free(ps.toks, ps.ntok);
}

static void check_uses(struct rules *r, rules_report_fn report, void *arg)
{
	for (size_t i = 0; i < r->nuses; i++)
		if (!signal_known(r, r->uses[i].name))
			report_path(report, arg, r, "%s:%u:%u: unknown signal '%s' "
				    "(no 'signal %s PROFILE = ...' line)", r->uses[i].file,
				    r->uses[i].line, r->uses[i].col, r->uses[i].name,
				    r->uses[i].name);
}

static int finish_load(struct rules *r, struct rules **out, rules_report_fn report, void *arg)
{
	int n;

	check_uses(r, report, arg);
	if (!r->nerr && !r->nrules)
		report_path(report, arg, r, "no rules loaded (no 'rule NAME { ... }' in any file)");
	n = r->nerr;
	if (n) {
		rules_free(r);
		return n;
	}
	*out = r;
	return 0;
}

int rules_load_texts(const char *const *names, const char *const *texts, size_t n,
		     struct rules **out, rules_report_fn report, void *arg)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (!r) {
		if (report)
			report("rules: out of memory", arg);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(names[i], '/');

		parse_text(r, names[i], b ? b + 1 : names[i], texts[i] ? texts[i] : "",
			   texts[i] ? strlen(texts[i]) : 0, report, arg);
	}
	return finish_load(r, out, report, arg);
}

struct rfile { char *base, *path; };

static int rfile_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rfile *)a)->base, ((const struct rfile *)b)->base);
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	buf = malloc(MAX_FILE_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	n = fread(buf, 1, MAX_FILE_BYTES + 1, f);
	if (ferror(f)) {
		snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	if (n > MAX_FILE_BYTES) {
		snprintf(err, errlen, "larger than %u bytes", MAX_FILE_BYTES);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int rules_load(const char *const *dirs, size_t ndirs, struct rules **out,
	       rules_report_fn report, void *arg)
{
	struct rules *r = calloc(1, sizeof(*r));
	struct rfile *fl = NULL;
	size_t nf = 0, cap = 0;

	if (!r) {
		if (report)
			report("rules: out of memory", arg);
		return 1;
	}
	for (size_t d = 0; d < ndirs; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		if (!dir) {
			if (errno != ENOENT)
				report_path(report, arg, r, "%s: %s", dirs[d], strerror(errno));
			continue;
		}
		while ((de = readdir(dir))) {
			size_t l = strlen(de->d_name), k;
			char *path;

			if (l <= 6 || strcmp(de->d_name + l - 6, ".rules") || de->d_name[0] == '.')
				continue;
			if (asprintf(&path, "%s/%s", dirs[d], de->d_name) < 0) {
				report_path(report, arg, r, "%s: out of memory", dirs[d]);
				continue;
			}
			for (k = 0; k < nf; k++)
				if (!strcmp(fl[k].base, de->d_name))
					break;
			if (k < nf) {           /* a later dir replaces the file */
				free(fl[k].path);
				fl[k].path = path;
				continue;
			}
			if (grow((void **)&fl, &cap, nf + 1, sizeof(*fl)) < 0 ||
			    !(fl[nf].base = strdup(de->d_name))) {
				free(path);
				report_path(report, arg, r, "%s: out of memory", dirs[d]);
				continue;
			}
			fl[nf++].path = path;
		}
		closedir(dir);
	}
	if (nf)
		qsort(fl, nf, sizeof(*fl), rfile_cmp);
	for (size_t i = 0; i < nf; i++) {
		char err[256];
		size_t len = 0;
		char *text = slurp(fl[i].path, &len, err, sizeof(err));

		if (!text)
			report_path(report, arg, r, "%s: %s", fl[i].path, err);
		else
			parse_text(r, fl[i].path, fl[i].base, text, len, report, arg);
		free(text);
		free(fl[i].base);
		free(fl[i].path);
	}
	free(fl);
	return finish_load(r, out, report, arg);
}
