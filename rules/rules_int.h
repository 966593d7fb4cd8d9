/* rules_int: what the modules of the rules engine share, and nothing
 * outside rules/ may include.
 *
 *   tree.c        the parsed form (nodes, rules, signals), the tables of the
 *                 language's names, freeing
 *   lex.c         tokens, the token stream, error messages with positions
 *   parse_expr.c  expressions: names, calls, operators, the list checks
 *   parse_stmt.c  statements: signal, rule, let, require, templates
 *                 (explain, action, ruled_out)
 *   eval.c        the three-valued evaluator over the facts (json-c)
 *   classify.c    rules_classify, rules_signal: the result object
 *   load.c        rules_load*, files and directories
 *
 * Internal calls are prefixed rl_. */
#ifndef NICSTALL_RULES_INT_H
#define NICSTALL_RULES_INT_H

#include <math.h>
#include <stddef.h>

#include "rules/rules.h"

#define MAX_ERRORS     100      /* reported per file */
#define MAX_PDEPTH     64       /* parser nesting */
#define MAX_EDEPTH     96       /* evaluator nesting (lets, signals) */
#define MAX_ITEMS      4096     /* items looked at per quantifier */
#define MAX_FILE_BYTES (1u << 20)
#define MAX_SUBST      256      /* bytes of one {value} in a template */

/* ------------------------------------------------------------------ */
/* The parsed form (tree.c) */

enum nk {
	N_NUM, N_STR, N_BOOL,
	N_COUNTER, N_SUMGLOB,       /* signal context */
	N_WHICHGLOB,                /* signal context: which(GLOB) */
	N_SIGREF,                   /* bare signal: in a signal, or in baseline_rate() */
	N_PERIOD,                   /* stall.S / window.S / baseline.S / X.span_s */
	N_FACT, N_FIELD, N_LET,
	N_UN, N_BIN, N_CALL,
};

enum op {
	O_NONE, O_ADD, O_SUB, O_MUL, O_DIV, O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE,
	O_MATCH, O_NMATCH, O_AND, O_OR, O_NOT, O_NEG,
};

/* The periods of a port: rl_per_name[] are their fact keys. */
enum per { P_STALL, P_WINDOW, P_BASELINE, P_HELD, P_N };
extern const char *const rl_per_name[P_N];

/* List-item domains: rl_dom_name[] are their names in the language. */
enum dom { D_NONE, D_THREAD, D_FLOW, D_PING, D_CAPTURE, D_PORT, D_PEER, D_ONLOAD, D_RANK, D_MULTI };
extern const char *const rl_dom_name[];

/* Named facts of the language ("held.unsent", "ping.ok", ...). */
enum fact {
	F_PORT, F_PROFILE, F_DRIVER, F_FIRMWARE, F_PSID, F_LINK_UP,
	F_HELD, F_HELD_UNSENT, F_HELD_UNREAD, F_HELD_STAGED,
	F_FLOWS_STALLED, F_FLOWS_PROGRESSING, F_FLOWS_RETRANS,
	F_PING_OK, F_PING_COUNT, F_CAPTURE_COUNT,
	F_RELEASED, F_RELEASE_ACTION, F_RELEASE_AFTER_MS,
	F_PM_OK, F_PM_FROM, F_PM_TO, F_PM_SIZE, F_PM_SMALL, F_PM_SENT, F_PM_RECEIVED,
	F_PM_ERROR,
};
struct rl_fact_name { const char *name; enum fact f; };
extern const struct rl_fact_name rl_facts_tab[];
extern const size_t rl_nfacts;

/* Fields of list items (the name is the item's fact key, "name" of a port
 * excepted). dual: outside a quantifier it is the sum over the list
 * (ping.sent, ping.received, capture.frames). */
struct rl_field_name { enum dom d; const char *name; int dual; };
extern const struct rl_field_name rl_fields_tab[];
extern const size_t rl_nfields;

enum fn {
	FN_ANY, FN_ALL, FN_COUNT, FN_FIRST, FN_SUMOF, FN_MAXOF, FN_MINOF,
	FN_RATE, FN_BRATE, FN_KNOWN, FN_DEFAULT, FN_ABS, FN_ROUND, FN_MIN, FN_MAX,
	FN_JOIN, FN_IF,
};
/* Indexed by enum fn. quant: a quantifier over list items. */
struct rl_fn_name { const char *name; enum fn fn; unsigned min, max; int quant; };
extern const struct rl_fn_name rl_fns_tab[];
extern const size_t rl_nfns;

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
	char *peer;         /* N_FIELD, N_PERIOD of peer.NAME.X: that peer, not an item */
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
	struct tmpl ruled_out;   /* what "What it is not" says when it fails */
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

/* Make room for need elements of elem bytes in *arr (capacity *cap). */
int rl_grow(void **arr, size_t *cap, size_t need, size_t elem);
void rl_node_free(struct node *n);
void rl_tmpl_free(struct tmpl *t);
void rl_rule_free(struct rule *ru);
void rl_signal_free(struct signal *s);
/* A copy of s owned by r (file names), or NULL. */
const char *rl_keep_string(struct rules *r, const char *s);
/* Is a signal of that name defined (for any profile)? */
int rl_signal_known(const struct rules *r, const char *name);

/* ------------------------------------------------------------------ */
/* Tokens and the parser's state (lex.c) */

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

/* Report "path:line:col: message" (counted in ps and ps->r). */
void rl_perr(struct pstate *ps, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "end of line", "'x'", "string \"x\"", ... (in buf when it needs one). */
const char *rl_tok_desc(const struct tok *t, char *buf, size_t len);
/* Report "expected WHAT, got <t>". */
void rl_perr_tok(struct pstate *ps, const struct tok *t, const char *what);
/* Lex src[0..len) into ps->toks; line0/col0: position of src[0]. */
int rl_lex(struct pstate *ps, const char *src, size_t len, unsigned line0, unsigned col0);
void rl_toks_free(struct tok *t, size_t n);
/* The current token (newlines skipped inside parentheses) / take it. */
const struct tok *rl_peek(struct pstate *ps);
const struct tok *rl_next(struct pstate *ps);
/* Take the current token when it is a t: 1, else 0. */
int rl_accept(struct pstate *ps, enum tk t);
/* Take a t, or -1 with "expected WHAT, got ..." reported. */
int rl_expect(struct pstate *ps, enum tk t, const char *what);
/* Source text of tokens [first, ps->pos), blanks collapsed (malloc'd). */
char *rl_span_text(struct pstate *ps, size_t first);

/* ------------------------------------------------------------------ */
/* The parser (parse_expr.c, parse_stmt.c) */

struct node *rl_parse_expr(struct pstate *ps);
/* -1 (reported) when n names a list item outside any quantifier. */
int rl_check_free(struct pstate *ps, const struct node *n);
/* Statements until the end of ps's tokens. */
void rl_parse_file(struct pstate *ps);

/* ------------------------------------------------------------------ */
/* The evaluator (eval.c) */

enum vt { V_UNK, V_NUM, V_BOOL, V_STR };

struct val {
	enum vt t;
	double n;           /* V_NUM; V_BOOL: 0/1 */
	const char *s;      /* V_STR */
	const char *why;    /* V_UNK: the missing fact */
};

/* Strings made while evaluating, freed after the classification. */
struct arena { char **p; size_t n, cap; };

struct json_object;

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

static inline struct val v_unk(const char *why)
{
	return (struct val){ .t = V_UNK, .why = why };
}
static inline struct val v_num(double n)
{
	if (!isfinite(n))
		return v_unk("arithmetic overflow");
	return (struct val){ .t = V_NUM, .n = n };
}
static inline struct val v_bool(int b) { return (struct val){ .t = V_BOOL, .n = b ? 1 : 0 }; }
static inline struct val v_str(const char *s) { return (struct val){ .t = V_STR, .s = s }; }

void rl_arena_free(struct arena *a);
/* A printf'd string that lives as long as the arena. */
const char *rl_afmt(struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Value of n in c (eval.c). */
struct val rl_eval(struct ectx *c, const struct node *n);
/* a OP b for + - * / (unknown propagates). */
struct val rl_arith(enum op op, struct val a, struct val b);

/* signal.c: the signal name of profile, else of "generic", else NULL. */
const struct signal *rl_sig_find(const struct rules *r, const char *profile, const char *name);
/* signal.c: value of a signal of a profile (or "generic") over counters. */
struct val rl_sig_value(const struct rules *r, const char *profile, const char *name,
			struct json_object *counters, int depth, struct arena *ar);

/* eval_facts.c */
/* The profile of a port object, "generic" when it has none. */
const char *rl_port_profile(struct json_object *port);
/* "port NAME missing". */
const char *rl_port_missing(struct ectx *c, const char *pname);
/* Span of a period of a port: 0, or -1 and why. */
int rl_period_span(struct ectx *c, struct json_object *port, const char *pname,
		   enum per per, double *span, const char **why);
/* A signal in a period of a port. */
struct val rl_period_sig(struct ectx *c, struct json_object *port, const char *pname,
			 enum per per, const char *sig);
/* A quantifier call (any, all, count, first, sumof, maxof, minof). */
struct val rl_quant(struct ectx *c, const struct node *n);
/* A named fact (N_FACT) / a list item's field (N_FIELD). */
struct val rl_fact(struct ectx *c, const struct node *n);
struct val rl_field(struct ectx *c, const struct node *n);
/* Call fn for each item of list d with the context switched to it (items
 * in the facts' order, at most MAX_ITEMS); fn returns non-zero to stop.
 * -1 and why when the list is missing. */
int rl_for_items(struct ectx *c, enum dom d, int (*fn)(struct ectx *c, void *st), void *st,
		 const char **why);

/* eval_peers.c: the peers' facts (rules/facts.h FK_PEERS) */
/* peer.P.SIGNAL / peer.P.span_s of the current peer item, or of the peer
 * n names (peer.NAME.P...). */
struct val rl_peer_period(struct ectx *c, const struct node *n);
/* peer.FIELD of the current item, or of the peer n names. */
struct val rl_peer_field(struct ectx *c, const struct node *n);
/* A word of the rules language that a peer's name may not be. */
int rl_peer_reserved(const char *name);

#endif
