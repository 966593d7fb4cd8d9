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
