/* promtext: a parser of the Prometheus text exposition format (version
 * 0.0.4), for the application metrics an endpoint serves (src_app.c).
 *
 * The grammar is Prometheus's own (prometheus/common expfmt/text_parse.go,
 * TextParser: startOfLine, startComment, readingMetricName, startLabelName,
 * startLabelValue, readingValue, startTimestamp; docs/instrumenting/
 * exposition_formats.md "Text format details"):
 *
 *   - lines end with '\n'; blank lines are skipped; blanks and tabs
 *     separate tokens; leading blanks are skipped;
 *   - '#' starts a comment; "# HELP NAME text" (text escapes \\ and \n)
 *     and "# TYPE NAME counter|gauge|histogram|summary|untyped" are read,
 *     every other comment is skipped;
 *   - a sample: NAME [{LABEL="VALUE"[,LABEL="VALUE"]...[,]}] VALUE [TS],
 *     NAME [a-zA-Z_:][a-zA-Z0-9_:]*, LABEL [a-zA-Z_][a-zA-Z0-9_]*, VALUE's
 *     escapes \\, \" and \n; VALUE a float (Go's ParseFloat: also +Inf,
 *     -Inf, Inf, NaN in any case), TS an integer of milliseconds;
 *   - a histogram's NAME_bucket (le), NAME_sum, NAME_count and a summary's
 *     NAME (quantile), NAME_sum, NAME_count belong to NAME's family.
 *
 * Hostile-input safe and bounded: a line longer than PROM_MAX_LINE, a name
 * longer than PROM_MAX_NAME, more than PROM_MAX_LABELS labels, a value
 * longer than PROM_MAX_LVAL, a NUL byte, invalid UTF-8 or a control
 * character in a label value, a duplicate label, an unknown escape, a
 * second TYPE or HELP for the family being read, or a last line without
 * its '\n' (a cut page) refuses the page, like Prometheus's scrape does,
 * with the line and what was wrong. Quoted (UTF-8) metric names of newer
 * formats are refused: the scraper asks for version 0.0.4, which has none.
 * A TYPE is known for the family it precedes until the next TYPE line (the
 * format requires it before the family's samples); a sample of no known
 * family is untyped. */
#ifndef NICSTALL_PROMTEXT_H
#define NICSTALL_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>

#define PROM_MAX_LINE 65536
#define PROM_MAX_NAME 256
#define PROM_MAX_LABELS 32
#define PROM_MAX_LVAL 1024

enum prom_type { PROM_UNTYPED = 0, PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM, PROM_SUMMARY };

struct prom_label {
	char name[PROM_MAX_NAME];
	char value[PROM_MAX_LVAL];      /* unescaped, valid UTF-8, no NUL */
};

struct prom_sample {
	const char *name;               /* the sample's metric name */
	const char *family;             /* its family's name (the TYPE's) */
	enum prom_type type;            /* the family's type */
	unsigned nlabels;
	const struct prom_label *labels;
	double value;                   /* may be +-Inf or NaN */
	int has_ts;
	int64_t ts_ms;
	unsigned line;                  /* 1-based */
};

/* A sample; a negative return stops the parse and is its result. */
typedef int (*prom_sample_fn)(const struct prom_sample *s, void *arg);

/* Parse text[0..len): cb for every sample in order. Returns the number of
 * samples, -EINVAL with err "line N: what" for a malformed page (the
 * samples before it were given: a caller keeps none of them), -ENOMEM, or
 * cb's negative return. */
int prom_parse(const char *text, size_t len, prom_sample_fn cb, void *arg,
	       char *err, size_t errlen);

/* The sample's series as one name: NAME, or NAME{L="V",...} with the
 * labels in the page's order and the value's \\, \" and \n escaped again.
 * The length, or -ENAMETOOLONG when it does not fit in size. */
int prom_series_key(const struct prom_sample *s, char *buf, size_t size);

#endif
