/* rules: the declarative rule language (nicstall.rules(5)) that turns an
 * incident's facts (a json-c object, schema 1) into a verdict, with every
 * term's value and, for every other rule, what ruled it out.
 *
 * Loading parses into a fresh struct; the caller swaps it in only when the
 * return value is 0, so a bad reload keeps the running rules. */
#ifndef NICSTALL_RULES_H
#define NICSTALL_RULES_H

#include <stddef.h>

struct json_object;
struct rules;

#ifndef NICSTALL_DATADIR
#define NICSTALL_DATADIR "/usr/local/share/nicstalld"
#endif
#ifndef NICSTALL_SYSCONFDIR
#define NICSTALL_SYSCONFDIR "/etc"
#endif
#define RULES_SHIPPED_DIR NICSTALL_DATADIR "/rules"
#define RULES_LOCAL_DIR   NICSTALL_SYSCONFDIR "/nicstalld/rules.d"

/* Same shape as conf_report_fn: one message per error, no newline. */
typedef void (*rules_report_fn)(const char *msg, void *arg);

/* Load every "*.rules" file of dirs[0..ndirs-1]; a file whose name appears
 * again in a later dir replaces the earlier one; files are read in name
 * order. A missing dir is skipped. Every error is reported as
 * "file:line:col: message" (or "path: message"); returns the number of
 * errors (0: *out is set, else *out is untouched). */
int rules_load(const char *const *dirs, size_t ndirs, struct rules **out,
	       rules_report_fn report, void *arg);
/* The daemon's rules: rules_load of the shipped dir, then the local dir
 * (RULES_SHIPPED_DIR, RULES_LOCAL_DIR unless configured). When neither
 * holds a "*.rules" file (not installed) that is not an error: a warning
 * is logged, *out is set to NULL (rules_classify then says unknown, the
 * bundles still hold every piece of evidence) and 0 is returned. */
int rules_load_dirs(const char *shipped, const char *local, struct rules **out,
		    rules_report_fn report, void *arg);
/* Same as rules_load, from in-memory files (name i holds text i), for
 * tests and tools. */
int rules_load_texts(const char *const *names, const char *const *texts,
		     size_t n, struct rules **out,
		     rules_report_fn report, void *arg);
void rules_free(struct rules *r);
/* May a peer daemon be called name (nicstalld.conf(5) "[peer NAME]")? Not
 * when it is a word the rules read after "peer." (peer.stall.X,
 * peer.answered, ...): peer.NAME.X would be ambiguous. */
int rules_peer_name_ok(const char *name);
/* Number of verdict rules loaded. */
size_t rules_count(const struct rules *r);

/* Classify facts; returns a new object (caller puts it), never NULL unless
 * out of memory: {verdict, rule, file, line, explanation, action, terms,
 * not}. Deterministic. facts may be hostile or incomplete. r may be NULL
 * (no rules: the verdict is unknown). */
struct json_object *rules_classify(const struct rules *r, struct json_object *facts);

/* The keys of the object rules_classify returns, for everyone who reads it
 * (bundle summary, report, client):
 *   { verdict, rule, file, line, explanation, action,
 *     terms: [ { expr, value: true, values: { TEXT: value } } ],
 *     not: [ { verdict, rule, file, line,
 *              matched: true, failed: null      (it holds, an earlier rule won)
 *            | failed: TERM, value, values, unknown: { TEXT: why } } ] }
 * With no rule matched: verdict RULES_VERDICT_UNKNOWN, rule and file null,
 * line 0. */
#define RK_VERDICT     "verdict"
#define RK_RULE        "rule"
#define RK_FILE        "file"
#define RK_LINE        "line"
#define RK_EXPLANATION "explanation"
#define RK_ACTION      "action"
#define RK_TERMS       "terms"
#define RK_NOT         "not"
#define RK_EXPR        "expr"
#define RK_VALUE       "value"
#define RK_VALUES      "values"
#define RK_MATCHED     "matched"
#define RK_FAILED      "failed"
#define RK_UNKNOWN     "unknown"
#define RK_TEXT        "text"
#define RULES_VERDICT_UNKNOWN "unknown"

/* Value of a signal of a profile (falls back to the "generic" definition)
 * over counters (an object name -> delta). Returns 0 with *out set, or -1
 * when the signal is unknown (not defined, or none of its counters there). */
int rules_signal(const struct rules *r, const char *profile, const char *signal,
		 struct json_object *counters, double *out);

/* Each signal name that profile has (its own definition or the generic
 * one), once. */
void rules_signals_each(const struct rules *r, const char *profile,
			void (*cb)(const char *name, void *arg), void *arg);
/* Each counter of counters (name -> value) that some signal of profile
 * reads, by its name or through a sum() pattern (a counter may come more
 * than once). */
void rules_signal_reads(const struct rules *r, const char *profile, struct json_object *counters,
			void (*cb)(const char *counter, struct json_object *value, void *arg),
			void *arg);

#endif
