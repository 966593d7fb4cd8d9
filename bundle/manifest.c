/* bundle manifest: reading a bundle: manifest.json and its schema
 * (nicstall-bundle(5) "MANIFEST"), and any other file of it for a reader
 * (nicstallctl show). Both go through fsu_read_at: beneath the bundle's
 * directory fd, O_NOFOLLOW, regular files only, bounded, never blocking. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

/* Parse txt[0..len) as exactly one JSON value; NULL with err. */
static struct json_object *parse_one(const char *txt, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *m;
	enum json_tokener_error je;
	size_t end;

	if (memchr(txt, '\0', len)) {
		util_errf(err, errlen, MANIFEST_NAME ": not JSON text (holds a NUL byte)");
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		util_errf(err, errlen, MANIFEST_NAME ": out of memory");
		return NULL;
	}
	m = json_tokener_parse_ex(tok, txt, (int)(len > INT32_MAX ? INT32_MAX : len));
	je = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!m || je != json_tokener_success) {
		util_errf(err, errlen, MANIFEST_NAME ": not valid JSON at byte %zu: %s", end,
			  json_tokener_error_desc(je));
		json_object_put(m);
		return NULL;
	}
	for (size_t i = end; i < len; i++)
		if (txt[i] != ' ' && txt[i] != '\n' && txt[i] != '\t' && txt[i] != '\r') {
			util_errf(err, errlen, MANIFEST_NAME ": trailing data after the JSON object "
				  "at byte %zu", i);
			json_object_put(m);
			return NULL;
		}
	return m;
}

/* Schema: this one is read, an older one with a note in err, a missing,
 * newer or invalid one is refused (-1). */
static int check_schema(struct json_object *m, char *err, size_t errlen)
{
	struct json_object *sv = jx_get(m, MK_SCHEMA);
	int64_t schema;

	if (!json_object_is_type(m, json_type_object)) {
		util_errf(err, errlen, MANIFEST_NAME ": not a JSON object");
		return -1;
	}
	if (!sv) {
		util_errf(err, errlen, MANIFEST_NAME ": no \"" MK_SCHEMA "\" field: not a nicstalld "
			  "bundle manifest (this nicstalld reads schema %d)", BUNDLE_SCHEMA);
		return -1;
	}
	if (!json_object_is_type(sv, json_type_int)) {
		util_errf(err, errlen, MANIFEST_NAME ": \"" MK_SCHEMA "\" is not an integer "
			  "(this nicstalld reads schema %d)", BUNDLE_SCHEMA);
		return -1;
	}
	schema = json_object_get_int64(sv);
	if (schema > BUNDLE_SCHEMA) {
		util_errf(err, errlen, MANIFEST_NAME ": schema %" PRId64 " is newer than this "
			  "nicstalld reads (schema %d): read it with a newer nicstalld",
			  schema, BUNDLE_SCHEMA);
		return -1;
	}
	if (schema < 0) {
		util_errf(err, errlen, MANIFEST_NAME ": schema %" PRId64 " is not a valid version "
			  "(this nicstalld reads schema %d)", schema, BUNDLE_SCHEMA);
		return -1;
	}
	if (schema < BUNDLE_SCHEMA)
		util_errf(err, errlen, "note: " MANIFEST_NAME ": schema %" PRId64 " is older than "
			  "this nicstalld's schema %d; read as far as it goes", schema, BUNDLE_SCHEMA);
	else if (err && errlen)
		err[0] = '\0';
	return 0;
}

int bi_load_manifest_at(int dfd, struct json_object **out, char *err, size_t errlen)
{
	struct json_object *m;
	size_t len;
	int e;
	char *txt = fsu_read_at(dfd, MANIFEST_NAME, MANIFEST_MAX, &len, &e);

	*out = NULL;
	if (!txt) {
		util_errf(err, errlen, MANIFEST_NAME ": %s", fsu_strerror(e));
		return -1;
	}
	m = parse_one(txt, len, err, errlen);
	free(txt);
	if (!m)
		return -1;
	if (check_schema(m, err, errlen) < 0) {
		json_object_put(m);
		return -1;
	}
	*out = m;
	return 0;
}

int bundle_load_manifest(const char *path, struct json_object **out, char *err, size_t errlen)
{
	int dfd, rc;

	*out = NULL;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		util_errf(err, errlen, "bundle %s: %s", path, strerror(errno));
		return -1;
	}
	rc = bi_load_manifest_at(dfd, out, err, errlen);
	close(dfd);
	return rc;
}

int bundle_open(const char *path, char *err, size_t errlen)
{
	int dfd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (dfd < 0)
		util_errf(err, errlen, "bundle %s: %s", path ? path : "(null)",
			  path ? strerror(errno) : "no path");
	return dfd;
}

char *bundle_read_at(int dfd, const char *rel, size_t max, size_t *len, char *err,
		     size_t errlen)
{
	char *txt;
	int e;

	if (!bi_valid_relpath(rel)) {
		util_errf(err, errlen, "'%.*s': not a file name inside a bundle", BUNDLE_PATH_MAX,
			  rel ? rel : "(null)");
		errno = EINVAL;
		return NULL;
	}
	txt = fsu_read_at(dfd, rel, max, len, &e);
	if (!txt) {
		util_errf(err, errlen, "%s: %s%s", rel, fsu_strerror(e),
			  e == ELOOP || e == EINVAL ? " (refused: only regular files of a bundle "
			  "are read)" : "");
		errno = e;
	}
	return txt;
}

char *bundle_read_file(const char *bundle_path, const char *rel, size_t max, size_t *len,
		       char *err, size_t errlen)
{
	char e1[512], *txt;
	int dfd, e;

	dfd = bundle_open(bundle_path, err, errlen);
	if (dfd < 0)
		return NULL;
	txt = bundle_read_at(dfd, rel, max, len, e1, sizeof(e1));
	e = errno;
	close(dfd);
	if (!txt) {
		util_errf(err, errlen, "%s/%s", bundle_path, e1);
		errno = e;
	}
	return txt;
}
