/* runcert: the pure parts of a benchmark run's certificate (runs.h): the
 * first word and its reason from what happened during the run, and the
 * validation of what a client sends (a run's name, its labels). No I/O, no
 * state: inputs in, a word and a sentence out. */
#ifndef NICSTALL_RUNCERT_H
#define NICSTALL_RUNCERT_H

#include <stddef.h>

/* The certificate's first word, worst last. */
enum run_word { RUN_CLEAN = 0, RUN_ANOMALOUS, RUN_TAINTED, RUN_INCOMPLETE, RUN_WORDS };

#define RUN_NAME_MAX 64         /* characters of a run's name */
#define RUN_LABELS_MAX 16       /* labels of one run */
#define RUN_LABEL_KEY_MAX 64
#define RUN_LABEL_VALUE_MAX 256

/* What the word is decided from. Each "first" is a short description of
 * the first such thing (NULL when its count is 0). */
struct run_facts {
	const char *incomplete;         /* why the run was not ended by its owner, NULL: ended */
	unsigned taints;                /* interventions that changed the system */
	const char *first_taint;
	unsigned incidents;             /* incidents opened during the run */
	const char *first_incident;
	unsigned moved;                 /* counters that matter that moved */
	const char *first_moved;
};

/* incomplete > tainted > anomalous > clean; reason: one line saying why
 * (the first cause and how many more). */
enum run_word run_verdict(const struct run_facts *f, char *reason, size_t len);
const char *run_word_name(enum run_word w);
/* "clean" ... -> the word, -1 unknown. */
int run_word_parse(const char *s);

/* A run's name: 1..RUN_NAME_MAX of [A-Za-z0-9_.-], starting with a letter
 * or digit (so never a hidden file, "." or ".."). 0, or -1 with err. */
int run_name_check(const char *name, char *err, size_t errlen);
/* A label "KEY=VALUE": KEY 1..RUN_LABEL_KEY_MAX of [A-Za-z0-9_.-], VALUE
 * at most RUN_LABEL_VALUE_MAX printable ASCII characters (may be empty).
 * 0 with *keylen (the '=' at kv[*keylen]), or -1 with err. */
int run_label_check(const char *kv, size_t *keylen, char *err, size_t errlen);

#endif
