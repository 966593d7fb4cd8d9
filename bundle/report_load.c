/* report load: a bundle into struct report (see report_int.h), read from
 * its directory (bundle_read_at: bounded, beneath the bundle, never through
 * a symbolic link) or handed over in memory by the daemon before
 * bundle_write. A file that is missing or unreadable becomes a note the
 * page shows, not an error. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

typedef char *(*read_fn)(void *arg, const char *name, size_t *len, char *err, size_t errlen);

static void note(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nnotes >= RP_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

/* The JSON value at the start of txt[0..len) (what follows it is not read);
 * NULL with err. */
static struct json_object *parse_json(const char *txt, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error je;

	if (memchr(txt, '\0', len)) {
		util_errf(err, errlen, "not JSON text (holds a NUL byte)");
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, txt, (int)(len > INT32_MAX ? INT32_MAX : len));
	je = json_tokener_get_error(tok);
	if (!o || je != json_tokener_success) {
		util_errf(err, errlen, "not valid JSON at byte %zu: %s",
			  (size_t)json_tokener_get_parse_end(tok), json_tokener_error_desc(je));
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static struct json_object *load_json(struct report *r, read_fn rd, void *arg, const char *name)
{
	char err[200];
	size_t len = 0;
	char *txt = rd(arg, name, &len, err, sizeof(err));
	struct json_object *o;

	if (!txt) {
		note(r, "%s", err);
		return NULL;
	}
	o = parse_json(txt, len, err, sizeof(err));
	free(txt);
	if (!o)
		note(r, "%s: %s", name, err);
	return o;
}

/* name's first max bytes at most, as a string of its own (strndup, but
 * gcc -O3 reads its bound as the source's size and fails the build) */
static char *dup_max(const char *name, size_t max)
{
	size_t len = strnlen(name, max);
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, name, len);
		d[len] = 0;
	}
	return d;
}

static void add_file(struct report *r, const char *name, long long bytes, int truncated)
{
	if (!name || r->nfiles >= RP_MAX_FILES)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		if (!strcmp(r->files[i].name, name))
			return;
	r->files[r->nfiles].name = dup_max(name, 1023);
	if (!r->files[r->nfiles].name)
		return;
	r->files[r->nfiles].bytes = bytes;
	r->files[r->nfiles].truncated = truncated;
	r->nfiles++;
}

static void add_port(struct report *r, const char *name)
{
	if (!name || r->nports >= RP_MAX_PORTS)
		return;
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->port[i], name))
			return;
	if ((r->port[r->nports] = strndup(name, 256)))
		r->nports++;
}

/* The manifest's files list (bundle_write adds it). */
static void add_manifest_files(struct report *r)
{
	struct json_object *fa = jx_arr(r->man, "files");

	for (size_t i = 0; i < jx_len(fa); i++) {
		struct json_object *o = json_object_array_get_idx(fa, i);
		double b;

		add_file(r, jx_str(o, "name"), jx_num(jx_get(o, "bytes"), &b) && b >= 0 &&
			 b < 1e18 ? (long long)b : -1, jx_bool(o, "truncated"));
	}
}

/* What both loaders read, and the files every bundle has and the manifest
 * lists; the loader from memory adds the files it was handed. */
static void load_common(struct report *r, read_fn rd, void *arg)
{
	struct json_object *facts = jx_obj(r->man, "facts");

	r->record = load_json(r, rd, arg, "record.json");
	r->window = load_json(r, rd, arg, "window.json");
	r->flows = load_json(r, rd, arg, "flows.json");
	r->threads = load_json(r, rd, arg, "threads.json");
	/* the stall's port first, then the manifest's, the facts' */
	add_port(r, jx_str(r->man, "port"));
	if (jx_obj(r->man, "ports")) {
		json_object_object_foreach(jx_obj(r->man, "ports"), k1, v1) {
			(void)v1;
			add_port(r, k1);
		}
	}
	if (jx_obj(facts, FK_PORTS)) {
		json_object_object_foreach(jx_obj(facts, FK_PORTS), k2, v2) {
			(void)v2;
			add_port(r, k2);
		}
	}
	for (size_t i = 0; i < r->nports; i++) {
		char fn[300];

		snprintf(fn, sizeof(fn), "recorder/%.250s.json", r->port[i]);
		r->recorder[i] = load_json(r, rd, arg, fn);
	}
	add_file(r, MANIFEST_NAME, -1, 0);
	add_file(r, SUMS_NAME, -1, 0);
	add_manifest_files(r);
}

struct dirctx {
	int dfd;
};

static char *dir_read(void *arg, const char *name, size_t *len, char *err, size_t errlen)
{
	struct dirctx *d = arg;

	return bundle_read_at(d->dfd, name, RP_FILE_MAX, len, err, errlen);
}

struct memctx {
	const struct bundle_file *f;
	size_t n;
};

static char *mem_read(void *arg, const char *name, size_t *len, char *err, size_t errlen)
{
	struct memctx *m = arg;

	if (!bi_valid_relpath(name)) {
		util_errf(err, errlen, "%.*s: not a relative path of [A-Za-z0-9._-] components",
			  BUNDLE_PATH_MAX, name);
		return NULL;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct bundle_file *f = &m->f[i];
		char *c;

		if (!f->name || strcmp(f->name, name))
			continue;
		if (!f->data) {
			util_errf(err, errlen, "%s: not in memory", name);
			return NULL;
		}
		if (f->len > RP_FILE_MAX) {
			util_errf(err, errlen, "%s: too large", name);
			return NULL;
		}
		c = malloc(f->len + 1);
		if (!c) {
			util_errf(err, errlen, "%s: out of memory", name);
			return NULL;
		}
		memcpy(c, f->data, f->len);
		c[f->len] = '\0';
		*len = f->len;
		return c;
	}
	util_errf(err, errlen, "%s: missing", name);
	return NULL;
}

static struct report *report_new(void)
{
	return calloc(1, sizeof(struct report));
}

struct report *report_load_dir(const char *path, char *err, size_t errlen)
{
	struct report *r = report_new();
	struct dirctx d;

	if (!r) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	if (bundle_load_manifest(path, &r->man, r->manifest_note, sizeof(r->manifest_note)) < 0) {
		util_errf(err, errlen, "%s", r->manifest_note);
		report_free(r);
		return NULL;
	}
	d.dfd = bundle_open(path, err, errlen);
	if (d.dfd < 0) {
		report_free(r);
		return NULL;
	}
	load_common(r, dir_read, &d);
	close(d.dfd);
	return r;
}

struct report *report_load_mem(struct json_object *manifest, const struct bundle_file *files,
			       size_t nfiles, char *err, size_t errlen)
{
	struct report *r;
	struct memctx m = { files, nfiles };

	if (!manifest || !json_object_is_type(manifest, json_type_object)) {
		util_errf(err, errlen, "no manifest");
		return NULL;
	}
	r = report_new();
	if (!r) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	r->man = json_object_get(manifest);
	load_common(r, mem_read, &m);
	for (size_t i = 0; i < nfiles; i++)
		add_file(r, files[i].name, files[i].data ? (long long)files[i].len : -1, 0);
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	json_object_put(r->man);
	json_object_put(r->record);
	json_object_put(r->window);
	json_object_put(r->flows);
	json_object_put(r->threads);
	for (size_t i = 0; i < r->nports; i++) {
		free(r->port[i]);
		json_object_put(r->recorder[i]);
	}
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i].name);
	free(r);
}
