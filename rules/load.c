/* load: read rules files (from directories or from memory) into a fresh
 * struct rules; every error is reported and counted, and the caller's
 * rules are replaced only when there is none. */
#include "rules/rules_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"

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

	ps.path = rl_keep_string(r, path);
	ps.fname = rl_keep_string(r, base);
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
	if (rl_lex(&ps, text, len, 1, 1) == 0)
		rl_parse_file(&ps);
	if (ps.oom)
		report_path(report, arg, r, "%s: out of memory", path);
	if (ps.cur)
		rl_rule_free(ps.cur);
	rl_toks_free(ps.toks, ps.ntok);
}

static void check_uses(struct rules *r, rules_report_fn report, void *arg)
{
	for (size_t i = 0; i < r->nuses; i++)
		if (!rl_signal_known(r, r->uses[i].name))
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

/* A fresh, empty set, or NULL (reported). */
static struct rules *new_rules(rules_report_fn report, void *arg)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (!r && report)
		report("rules: out of memory", arg);
	return r;
}

int rules_load_texts(const char *const *names, const char *const *texts, size_t n,
		     struct rules **out, rules_report_fn report, void *arg)
{
	struct rules *r = new_rules(report, arg);

	if (!r)
		return 1;
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

/* Is name a rules file's name ("NAME.rules")? */
static int rules_name(const char *name)
{
	size_t l = strlen(name);

	return l > 6 && !strcmp(name + l - 6, ".rules");
}

int rules_load(const char *const *dirs, size_t ndirs, struct rules **out,
	       rules_report_fn report, void *arg)
{
	struct rules *r = new_rules(report, arg);
	struct rfile *fl = NULL;
	size_t nf = 0, cap = 0;

	if (!r)
		return 1;
	for (size_t d = 0; d < ndirs; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		if (!dir) {
			if (errno != ENOENT)
				report_path(report, arg, r, "%s: %s", dirs[d], strerror(errno));
			continue;
		}
		while ((de = readdir(dir))) {
			size_t k;
			char *path;

			if (!rules_name(de->d_name) || de->d_name[0] == '.')
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
			if (rl_grow((void **)&fl, &cap, nf + 1, sizeof(*fl)) < 0 ||
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
		size_t len = 0;
		char *text = util_read_file(fl[i].path, MAX_FILE_BYTES + 1, &len);

		if (!text)
			report_path(report, arg, r, "%s: %s", fl[i].path, strerror(errno ? errno : EIO));
		else if (len > MAX_FILE_BYTES)
			report_path(report, arg, r, "%s: larger than %u bytes", fl[i].path,
				    MAX_FILE_BYTES);
		else
			parse_text(r, fl[i].path, fl[i].base, text, len, report, arg);
		free(text);
		free(fl[i].base);
		free(fl[i].path);
	}
	free(fl);
	return finish_load(r, out, report, arg);
}

/* Does dir hold at least one rules file? */
static int has_rules(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		found = rules_name(e->d_name);
	closedir(d);
	return found;
}

int rules_load_dirs(const char *shipped, const char *local, struct rules **out,
		    rules_report_fn report, void *arg)
{
	const char *dirs[2] = { shipped, local };

	/* No rule file at all (not installed) is not an error in a file:
	 * classification then says "unknown" and the bundles still hold
	 * every piece of evidence. */
	if (!has_rules(shipped) && !has_rules(local)) {
		log_warnx("no rule files in %s or %s: every verdict will be unknown",
			  shipped, local);
		*out = NULL;
		return 0;
	}
	return rules_load(dirs, 2, out, report, arg);
}
