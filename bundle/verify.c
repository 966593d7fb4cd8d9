/* bundle verify: SHA-256, SHA256SUMS (sha256sum(1) format) and the check of
 * a whole bundle (nicstall-bundle(5) "VERIFICATION"). Every listed file is
 * read beneath the bundle's directory fd, never through a symbolic link,
 * regular files only, bounded; every entry on disk must be listed. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

/* ---- sha256 ---- */

/* sha256 of a regular file beneath dfd. Returns 0, or an errno value. */
static int hash_at(int dfd, const char *rel, char hex[65], char *buf)
{
	struct stat st;
	EVP_MD_CTX *ctx;
	uint64_t left;
	int fd = fsu_open_beneath(dfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0), e = 0;

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return EINVAL;
	}
	if ((uint64_t)st.st_size > HASH_MAX) {
		close(fd);
		return EFBIG;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		close(fd);
		return ENOMEM;
	}
	/* read what the file held when opened: a growing file cannot keep us */
	left = (uint64_t)st.st_size;
	while (left) {
		ssize_t r = read(fd, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			break;
		}
		if (r == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		left -= (uint64_t)r;
	}
	if (!e && bi_sha256_final(ctx, hex) < 0)
		e = EIO;
	EVP_MD_CTX_free(ctx);
	close(fd);
	return e;
}

/* ---- SHA256SUMS ---- */

struct sum {
	char *name;
	char hex[65];
	int seen;
};

static int sum_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sum *)a)->name, ((const struct sum *)b)->name);
}

static struct sum *sum_find(struct sum *v, size_t n, const char *name)
{
	struct sum key = { .name = (char *)name };

	return n ? bsearch(&key, v, n, sizeof(*v), sum_cmp) : NULL;
}

static int is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

/* Parse SHA256SUMS (names point into txt); returns count or -1 with err. */
static long parse_sums(char *txt, size_t len, struct sum **out, char *err, size_t errlen)
{
	struct sum *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *p = txt, *end = txt + len;

	*out = NULL;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line = p, *fn;

		lineno++;
		if (!nl) {
			util_errf(err, errlen, SUMS_NAME ":%zu: no newline at the end", lineno);
			goto fail;
		}
		*nl = '\0';
		p = nl + 1;
		if ((size_t)(nl - line) < 67 || !is_hex64(line) || line[64] != ' ' ||
		    (line[65] != ' ' && line[65] != '*')) {
			util_errf(err, errlen, SUMS_NAME ":%zu: not \"<sha256>  <path>\"", lineno);
			goto fail;
		}
		fn = line + 66;
		if (strlen(fn) != (size_t)(nl - fn) || !bi_valid_relpath(fn)) {
			util_errf(err, errlen, SUMS_NAME ":%zu: unsafe or invalid path", lineno);
			goto fail;
		}
		if (!strcmp(fn, SUMS_NAME)) {
			util_errf(err, errlen, SUMS_NAME ":%zu: lists itself", lineno);
			goto fail;
		}
		if (n >= MAX_ENTRIES) {
			util_errf(err, errlen, SUMS_NAME ": more than %d entries", MAX_ENTRIES);
			goto fail;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct sum *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				util_errf(err, errlen, SUMS_NAME ": out of memory");
				goto fail;
			}
			v = nv;
			cap = nc;
		}
		v[n].name = fn;
		for (int i = 0; i < 64; i++)
			v[n].hex[i] = (char)(line[i] >= 'A' && line[i] <= 'F' ? line[i] + 32 : line[i]);
		v[n].hex[64] = '\0';
		v[n].seen = 0;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), sum_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i - 1].name, v[i].name)) {
			util_errf(err, errlen, SUMS_NAME ": %s listed twice", v[i].name);
			goto fail;
		}
	*out = v;
	return (long)n;
fail:
	free(v);
	return -1;
}

/* ---- the whole bundle ---- */

/* Every entry under dfd (prefix names its place) must be a regular file or a
 * directory listed in SHA256SUMS. Returns 0 or -1 with err. */
static int walk_extras(int dfd, const char *prefix, int depth, struct sum *sums, size_t n,
		       unsigned *budget, char *err, size_t errlen)
{
	const char *here = *prefix ? prefix : ".";
	DIR *d = fsu_opendir_fd(dfd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		util_errf(err, errlen, "%s: %s", here, strerror(errno));
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		char rel[BUNDLE_PATH_MAX * 2 + 2];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!*budget) {
			util_errf(err, errlen, "%s: more than %d entries", here, MAX_ENTRIES);
			rc = -1;
			break;
		}
		(*budget)--;
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			util_errf(err, errlen, "%s: %s", rel, strerror(errno));
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub;

			if (depth >= MAX_DEPTH || strlen(rel) > BUNDLE_PATH_MAX) {
				util_errf(err, errlen, "%s: directory nested too deep", rel);
				rc = -1;
				break;
			}
			sub = fsu_open_dir_at(dfd, e->d_name);
			if (sub < 0) {
				util_errf(err, errlen, "%s: %s", rel, strerror(errno));
				rc = -1;
				break;
			}
			rc = walk_extras(sub, rel, depth + 1, sums, n, budget, err, errlen);
			close(sub);
			continue;
		}
		if (!depth && !strcmp(e->d_name, SUMS_NAME))
			continue;
		if (!sum_find(sums, n, rel)) {
			util_errf(err, errlen, "%s: not in " SUMS_NAME, rel);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* The manifest's "files" must agree with SHA256SUMS. */
static int check_files(struct json_object *m, struct sum *sums, size_t n, char *err, size_t errlen)
{
	struct json_object *fa = jx_arr(m, MK_FILES);
	size_t nf = jx_len(fa);

	if (!fa) {
		util_errf(err, errlen, MANIFEST_NAME ": no \"" MK_FILES "\" list");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		sums[i].seen = 0;
	for (size_t i = 0; i < nf; i++) {
		struct json_object *o = json_object_array_get_idx(fa, i);
		const char *fn = jx_str(o, MK_F_NAME), *h = jx_str(o, MK_F_SHA256);
		struct sum *s;

		if (!fn || !h) {
			util_errf(err, errlen, MANIFEST_NAME ": files[%zu]: no \"" MK_F_NAME "\" or \""
				  MK_F_SHA256 "\"", i);
			return -1;
		}
		if (!bi_valid_relpath(fn)) {
			util_errf(err, errlen, MANIFEST_NAME ": files[%zu]: unsafe or invalid path", i);
			return -1;
		}
		s = sum_find(sums, n, fn);
		if (!s) {
			util_errf(err, errlen, "%s: in the manifest's files but not in " SUMS_NAME, fn);
			return -1;
		}
		if (strcasecmp(h, s->hex)) {
			util_errf(err, errlen, "%s: sha256 in the manifest differs from " SUMS_NAME, fn);
			return -1;
		}
		s->seen = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!sums[i].seen && strcmp(sums[i].name, MANIFEST_NAME)) {
			util_errf(err, errlen, "%s: in " SUMS_NAME " but not in the manifest's files",
				  sums[i].name);
			return -1;
		}
	return 0;
}

/* Every file of SHA256SUMS present and matching. */
static int check_hashes(int dfd, struct sum *sums, long n, char *err, size_t errlen)
{
	char *buf = malloc(COPY_CHUNK);
	int rc = 0;

	if (!buf) {
		util_errf(err, errlen, "out of memory");
		return -1;
	}
	for (long i = 0; i < n && !rc; i++) {
		char hex[65];
		int e = hash_at(dfd, sums[i].name, hex, buf);

		rc = -1;
		if (e)
			util_errf(err, errlen, "%s: %s", sums[i].name, fsu_strerror(e));
		else if (strcmp(hex, sums[i].hex))
			util_errf(err, errlen, "%s: checksum mismatch", sums[i].name);
		else
			rc = 0;
	}
	free(buf);
	return rc;
}

int bundle_verify(const char *path, struct json_object **manifest_out, char *err, size_t errlen)
{
	struct json_object *m = NULL;
	struct sum *sums = NULL;
	char note[512] = "", *txt = NULL;
	size_t len;
	long n;
	unsigned budget = MAX_ENTRIES;
	int dfd, e, rc = -1;

	if (manifest_out)
		*manifest_out = NULL;
	if (err && errlen)
		err[0] = '\0';
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		util_errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* a newer or unreadable manifest first: the clearest reason */
	if (bi_load_manifest_at(dfd, &m, note, sizeof(note)) < 0) {
		util_errf(err, errlen, "%s", note);
		goto out;
	}
	txt = fsu_read_at(dfd, SUMS_NAME, SUMS_MAX, &len, &e);
	if (!txt) {
		util_errf(err, errlen, SUMS_NAME ": %s", fsu_strerror(e));
		goto out;
	}
	n = parse_sums(txt, len, &sums, err, errlen);
	if (n < 0 || check_hashes(dfd, sums, n, err, errlen) < 0 ||
	    walk_extras(dfd, "", 0, sums, (size_t)n, &budget, err, errlen) < 0 ||
	    check_files(m, sums, (size_t)n, err, errlen) < 0)
		goto out;
	util_errf(err, errlen, "%s", note);
	rc = 0;
out:
	if (manifest_out && m) {
		*manifest_out = m;
		m = NULL;
	}
	json_object_put(m);
	free(sums);
	free(txt);
	close(dfd);
	return rc;
}
