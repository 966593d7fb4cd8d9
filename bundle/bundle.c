/* bundle: evidence bundles (nicstall-bundle(5)).
 *
 * Every path inside a bundle is checked component by component and opened
 * beneath the bundle's directory fd with O_NOFOLLOW at every step, so neither
 * a caller's file name nor a hostile bundle on disk can lead outside it.
 * Reads of a bundle are bounded (file sizes, entry counts, depth) and only
 * regular files are ever read. */
#include "bundle/bundle.h"
#include "lib/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#define SUMS_NAME      "SHA256SUMS"
#define MANIFEST_NAME  "manifest.json"
#define TMP_PREFIX     ".tmp-"
#define MAX_DEPTH      16
#define MAX_ENTRIES    100000
#define SUMS_MAX       (8u << 20)
#define MANIFEST_MAX   (32u << 20)
#define HASH_MAX       (64ull << 30)
#define COPY_CHUNK     (64u << 10)

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- names ---- */

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* One path component: [A-Za-z0-9._-]{1,n}, not starting with '.' (so never
 * ".", "..", ".tmp-*" or a hidden file). */
static int valid_comp(const char *s, size_t n)
{
	if (!n || n > 255 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

static int valid_relpath(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	const char *c = p, *slash;

	if (!n || n > BUNDLE_PATH_MAX)
		return 0;
	for (;;) {
		slash = strchr(c, '/');
		if (!valid_comp(c, slash ? (size_t)(slash - c) : strlen(c)))
			return 0;
		if (!slash)
			return 1;
		c = slash + 1;
	}
}

static int valid_bundle_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n <= BUNDLE_NAME_MAX && valid_comp(s, n);
}

static size_t sanitize(char *out, size_t cap, const char *in, size_t maxlen)
{
	size_t n = 0;

	for (; in && *in && n < maxlen && n + 1 < cap; in++)
		out[n++] = name_char(*in) ? *in : '_';
	if (!n)
		for (const char *u = "unknown"; *u && n + 1 < cap; u++)
			out[n++] = *u;
	if (n && out[0] == '.')
		out[0] = '_';
	out[n < cap ? n : cap - 1] = '\0';
	return n;
}

void bundle_name(char *buf, size_t len, uint64_t real_ns, const char *host,
		 const char *port, const char *verdict)
{
	char h[65], p[65], v[65], ts[32];
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;

	if (!buf || !len)
		return;
	if (!gmtime_r(&t, &tm) || !strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm))
		snprintf(ts, sizeof(ts), "19700101T000000Z");
	sanitize(h, sizeof(h), host, 64);
	sanitize(p, sizeof(p), port, 64);
	sanitize(v, sizeof(v), verdict, 64);
	snprintf(buf, len, "%s-%s-%s-%s", ts, h, p, v);
}

/* ---- fd helpers ---- */

/* Open rel (a valid relative path) beneath dfd, never following a symlink. */
static int open_beneath(int dfd, const char *rel, int flags, mode_t mode)
{
	char comp[256];
	const char *c = rel, *slash;
	int cur = dfd, fd;

	while ((slash = strchr(c, '/'))) {
		size_t n = (size_t)(slash - c);

		if (n >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		if (cur != dfd)
			close(cur);
		cur = fd;
		c = slash + 1;
	}
	fd = openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (cur != dfd) {
		int e = errno;

		close(cur);
		errno = e;
	}
	return fd;
fail:
	if (cur != dfd) {
		int e = errno;

		close(cur);
		errno = e;
	}
	return -1;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Remove name (beneath dfd) and everything under it. */
static int rm_tree_at(int dfd, const char *name, int depth)
{
	DIR *d;
	struct dirent *e;
	int fd, rc = 0;

	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > MAX_DEPTH * 2)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((e = readdir(d))) {
		int r;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		r = rm_tree_at(fd, e->d_name, depth + 1);
		if (r < 0 && !rc)
			rc = r;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* fsync every directory under (and including) fd. */
static int fsync_dirs(int fd, int depth)
{
	DIR *d;
	struct dirent *e;
	int dup_fd, rc = 0;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	dup_fd = dup(fd);
	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		rc = -errno;
		close(dup_fd);
		return rc;
	}
	rewinddir(d);
	while ((e = readdir(d)) && !rc) {
		int sub;

		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR && (e->d_type != DT_UNKNOWN ||
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
			continue;
		sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			rc = -errno;
			break;
		}
		rc = fsync_dirs(sub, depth + 1);
		close(sub);
	}
	closedir(d);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	return rc;
}

/* Open "<state_dir>/bundles" (created when create is set). */
static int open_bundles(const char *state_dir, int create, char *err, size_t errlen)
{
	int sfd, bfd, e;

	sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		e = errno;
		seterr(err, errlen, "state directory %s: %s", state_dir, strerror(e));
		return -e;
	}
	bfd = openat(sfd, "bundles", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0 && errno == ENOENT && create) {
		if (mkdirat(sfd, "bundles", 0750) < 0 && errno != EEXIST) {
			e = errno;
			close(sfd);
			seterr(err, errlen, "%s/bundles: mkdir: %s", state_dir, strerror(e));
			return -e;
		}
		bfd = openat(sfd, "bundles", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	e = errno;
	close(sfd);
	if (bfd < 0) {
		seterr(err, errlen, "%s/bundles: %s", state_dir, strerror(e));
		return -e;
	}
	return bfd;
}

/* ---- sha256 ---- */

static void hexify(const unsigned char *md, unsigned n, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * n] = '\0';
}

static int md_final(EVP_MD_CTX *ctx, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != 32)
		return -1;
	hexify(md, n, hex);
	return 0;
}

/* ---- writing ---- */

struct entry {
	char name[BUNDLE_PATH_MAX + 1];
	char hex[65];
	uint64_t bytes, src_bytes;
	int truncated;
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int mkparents(int tfd, const char *rel)
{
	char buf[BUNDLE_PATH_MAX + 1];
	char *s;

	snprintf(buf, sizeof(buf), "%s", rel);
	for (s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(tfd, buf, 0750) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return 0;
}

/* Write one file into the temporary dir; fills e. Returns 0 or -errno with err. */
static int write_one(int tfd, const struct bundle_file *f, size_t max_copy, struct entry *e,
		     char *err, size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char *buf = NULL;
	int fd = -1, sfd = -1, rc = 0;
	const char *what = "write";

	snprintf(e->name, sizeof(e->name), "%s", f->name);
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = -ENOMEM;
		what = "sha256";
		goto out;
	}
	if (mkparents(tfd, f->name) < 0) {
		rc = -errno;
		what = "mkdir";
		goto out;
	}
	fd = open_beneath(tfd, f->name, O_WRONLY | O_CREAT | O_EXCL, 0640);
	if (fd < 0) {
		rc = -errno;
		what = "create";
		goto out;
	}
	if (f->data || !f->src_path) {
		if (f->len && write_all(fd, f->data, f->len) < 0) {
			rc = -errno;
			goto out;
		}
		if (f->len)
			EVP_DigestUpdate(ctx, f->data, f->len);
		e->bytes = f->len;
	} else {
		struct stat st;
		uint64_t limit = max_copy ? max_copy : UINT64_MAX;

		sfd = open(f->src_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (sfd < 0 || fstat(sfd, &st) < 0) {
			rc = -errno;
			seterr(err, errlen, "%s: source %s: %s", f->name, f->src_path, strerror(-rc));
			goto out_msg;
		}
		if (!S_ISREG(st.st_mode)) {
			rc = -EINVAL;
			seterr(err, errlen, "%s: source %s: not a regular file", f->name, f->src_path);
			goto out_msg;
		}
		e->src_bytes = (uint64_t)st.st_size;
		buf = malloc(COPY_CHUNK);
		if (!buf) {
			rc = -ENOMEM;
			goto out;
		}
		for (;;) {
			size_t want = COPY_CHUNK;
			ssize_t r;

			if (e->bytes >= limit) {
				char c;

				r = read(sfd, &c, 1);
				if (r > 0)
					e->truncated = 1;
				break;
			}
			if (limit - e->bytes < want)
				want = (size_t)(limit - e->bytes);
			r = read(sfd, buf, want);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = -errno;
				seterr(err, errlen, "%s: source %s: read: %s", f->name, f->src_path,
				       strerror(-rc));
				goto out_msg;
			}
			if (r == 0)
				break;
			if (write_all(fd, buf, (size_t)r) < 0) {
				rc = -errno;
				goto out;
			}
			EVP_DigestUpdate(ctx, buf, (size_t)r);
			e->bytes += (uint64_t)r;
		}
	}
	what = "fsync";
	if (fsync(fd) < 0) {
		rc = -errno;
		goto out;
	}
	what = "close";
	rc = close(fd) < 0 ? -errno : 0;
	fd = -1;
	if (rc)
		goto out;
	if (md_final(ctx, e->hex) < 0) {
		rc = -EIO;
		what = "sha256";
	}
out:
	if (rc)
		seterr(err, errlen, "%s: %s: %s", f->name, what, strerror(-rc));
out_msg:
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	free(buf);
	EVP_MD_CTX_free(ctx);
	return rc;
}

int bundle_write(const char *state_dir, const char *name, struct json_object *manifest,
		 const struct bundle_file *files, size_t nfiles, size_t max_copy,
		 char *path_out, size_t path_len, char *err, size_t errlen)
{
	char tmpname[BUNDLE_NAME_MAX + 16], final[BUNDLE_NAME_MAX + 16], ferr[512] = "";
	struct json_object *m = manifest, *farr;
	struct entry *ents = NULL;
	struct bundle_file mf = { 0 }, sf = { 0 };
	char *sums = NULL;
	size_t sumslen = 0;
	FILE *ss = NULL;
	int bfd = -1, tfd = -1, rc = 0, made = 0;

	if (path_out && path_len)
		path_out[0] = '\0';
	if (!state_dir || !valid_bundle_name(name)) {
		seterr(err, errlen, "bundle name '%s': not a plain name of [A-Za-z0-9._-] "
		       "(at most %d characters, not starting with '.')", name ? name : "(null)",
		       BUNDLE_NAME_MAX);
		return -EINVAL;
	}
	if (nfiles > MAX_ENTRIES) {
		seterr(err, errlen, "bundle %s: %zu files (at most %d)", name, nfiles, MAX_ENTRIES);
		return -E2BIG;
	}
	for (size_t i = 0; i < nfiles; i++) {
		const char *fn = files[i].name;

		if (!valid_relpath(fn)) {
			seterr(err, errlen, "bundle %s: file name '%s': not a relative path of "
			       "[A-Za-z0-9._-] components (no '..', no leading '/' or '.')",
			       name, fn ? fn : "(null)");
			return -EINVAL;
		}
		if (!strcmp(fn, SUMS_NAME) || !strcmp(fn, MANIFEST_NAME)) {
			seterr(err, errlen, "bundle %s: file name '%s' is reserved", name, fn);
			return -EINVAL;
		}
		if (!files[i].data && !files[i].src_path && files[i].len) {
			seterr(err, errlen, "bundle %s: %s: no data and no source", name, fn);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(files[j].name, fn)) {
				seterr(err, errlen, "bundle %s: %s: listed twice", name, fn);
				return -EINVAL;
			}
	}
	ents = calloc(nfiles + 1, sizeof(*ents));
	if (!ents) {
		seterr(err, errlen, "bundle %s: out of memory", name);
		return -ENOMEM;
	}
	if (!m && !(m = json_object_new_object())) {
		free(ents);
		seterr(err, errlen, "bundle %s: out of memory", name);
		return -ENOMEM;
	}
	bfd = open_bundles(state_dir, 1, err, errlen);
	if (bfd < 0) {
		rc = bfd;
		bfd = -1;
		goto out;
	}
	snprintf(tmpname, sizeof(tmpname), TMP_PREFIX "%s", name);
	if (mkdirat(bfd, tmpname, 0750) < 0) {
		int ok = 0;

		if (errno == EEXIST) {
			log_warnx("bundle %s/bundles/%s: removing a leftover", state_dir, tmpname);
			rm_tree_at(bfd, tmpname, 0);
			ok = mkdirat(bfd, tmpname, 0750) == 0;
		}
		if (!ok) {
			rc = -errno;
			seterr(err, errlen, "bundle %s: %s/bundles/%s: mkdir: %s", name, state_dir,
			       tmpname, strerror(-rc));
			goto out;
		}
	}
	made = 1;
	tfd = openat(bfd, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0) {
		rc = -errno;
		seterr(err, errlen, "%s/bundles/%s: %s", state_dir, tmpname, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < nfiles; i++) {
		rc = write_one(tfd, &files[i], max_copy, &ents[i], ferr, sizeof(ferr));
		if (rc < 0) {
			seterr(err, errlen, "bundle %s: %s", name, ferr);
			goto out;
		}
	}
	/* manifest: schema and the files list */
	farr = json_object_new_array();
	for (size_t i = 0; farr && i < nfiles; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(ents[i].name));
		json_object_object_add(o, "bytes", json_object_new_uint64(ents[i].bytes));
		json_object_object_add(o, "sha256", json_object_new_string(ents[i].hex));
		if (ents[i].truncated) {
			json_object_object_add(o, "truncated", json_object_new_boolean(1));
			json_object_object_add(o, "source_bytes",
					       json_object_new_uint64(ents[i].src_bytes));
		}
		json_object_array_add(farr, o);
	}
	json_object_object_add(m, "schema", json_object_new_int(BUNDLE_SCHEMA));
	json_object_object_add(m, "files", farr);
	{
		const char *txt = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
		size_t tl = txt ? strlen(txt) : 0;
		char *copy = malloc(tl + 2);

		if (!txt || !copy) {
			free(copy);
			rc = -ENOMEM;
			seterr(err, errlen, "bundle %s: manifest.json: out of memory", name);
			goto out;
		}
		memcpy(copy, txt, tl);
		copy[tl++] = '\n';
		mf.name = MANIFEST_NAME;
		mf.data = copy;
		mf.len = tl;
		rc = write_one(tfd, &mf, 0, &ents[nfiles], ferr, sizeof(ferr));
		free(copy);
		if (rc < 0) {
			seterr(err, errlen, "bundle %s: %s", name, ferr);
			goto out;
		}
	}
	/* SHA256SUMS: sha256sum(1) format, sorted by path */
	qsort(ents, nfiles + 1, sizeof(*ents), entry_cmp);
	ss = open_memstream(&sums, &sumslen);
	if (!ss) {
		rc = -ENOMEM;
		seterr(err, errlen, "bundle %s: " SUMS_NAME ": out of memory", name);
		goto out;
	}
	for (size_t i = 0; i < nfiles + 1; i++)
		fprintf(ss, "%s  %s\n", ents[i].hex, ents[i].name);
	if (fclose(ss) != 0) {
		ss = NULL;
		rc = -ENOMEM;
		seterr(err, errlen, "bundle %s: " SUMS_NAME ": out of memory", name);
		goto out;
	}
	ss = NULL;
	sf.name = SUMS_NAME;
	sf.data = sums;
	sf.len = sumslen;
	{
		struct entry se;

		rc = write_one(tfd, &sf, 0, &se, ferr, sizeof(ferr));
	}
	if (rc < 0) {
		seterr(err, errlen, "bundle %s: %s", name, ferr);
		goto out;
	}
	rc = fsync_dirs(tfd, 0);
	if (rc < 0) {
		seterr(err, errlen, "bundle %s: fsync of its directories: %s", name, strerror(-rc));
		goto out;
	}
	/* rename into place, unique */
	for (unsigned k = 1;; k++) {
		if (k == 1)
			snprintf(final, sizeof(final), "%s", name);
		else
			snprintf(final, sizeof(final), "%s-%u", name, k);
		if (renameat2(bfd, tmpname, bfd, final, RENAME_NOREPLACE) == 0)
			break;
		if (errno == EINVAL &&
		    faccessat(bfd, final, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
		    renameat(bfd, tmpname, bfd, final) == 0)
			break;
		if ((errno != EEXIST && errno != ENOTEMPTY && errno != EINVAL) || k >= 1000) {
			rc = -errno;
			seterr(err, errlen, "bundle %s: rename to %s/bundles/%s: %s", name, state_dir,
			       final, strerror(-rc));
			goto out;
		}
	}
	made = 0;
	if (fsync(bfd) < 0)
		log_warn("bundle %s/bundles: fsync", state_dir);
	if (path_out && path_len)
		snprintf(path_out, path_len, "%s/bundles/%s", state_dir, final);
	rc = 0;
out:
	if (ss)
		fclose(ss);
	free(sums);
	if (tfd >= 0)
		close(tfd);
	if (made && bfd >= 0) {
		int r = rm_tree_at(bfd, tmpname, 0);

		if (r < 0)
			log_warnx("bundle %s/bundles/%s: removing after a failed write: %s",
				  state_dir, tmpname, strerror(-r));
		fsync(bfd);
	}
	if (bfd >= 0)
		close(bfd);
	if (m != manifest)
		json_object_put(m);
	free(ents);
	return rc;
}

int bundle_cleanup(const char *state_dir, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;
	int bfd, n = 0, failed = 0;

	if (err && errlen)
		err[0] = '\0';
	bfd = open_bundles(state_dir, 0, err, errlen);
	if (bfd == -ENOENT) {
		if (err && errlen)
			err[0] = '\0';
		return 0;
	}
	if (bfd < 0)
		return -1;
	d = fdopendir(bfd);
	if (!d) {
		seterr(err, errlen, "%s/bundles: %s", state_dir, strerror(errno));
		close(bfd);
		return -1;
	}
	while ((e = readdir(d))) {
		int r;

		if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)))
			continue;
		r = rm_tree_at(bfd, e->d_name, 0);
		if (r < 0) {
			if (!failed++)
				seterr(err, errlen, "%s/bundles/%s: remove: %s", state_dir,
				       e->d_name, strerror(-r));
			continue;
		}
		log_info("bundle %s/bundles/%s: removed the leftover of an interrupted write",
			 state_dir, e->d_name);
		n++;
	}
	closedir(d);
	return failed ? -1 : n;
}

/* ---- reading ---- */

/* Total bytes of the regular files under name (beneath dfd), bounded. */
static uint64_t du_at(int dfd, const char *name, int depth, unsigned *budget)
{
	struct stat st;
	uint64_t sum = 0;
	DIR *d;
	struct dirent *e;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode) || depth > MAX_DEPTH)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)) && *budget) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		(*budget)--;
		sum += du_at(fd, e->d_name, depth + 1, budget);
	}
	closedir(d);
	return sum;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Bundle directory names, sorted (oldest first). Returns count or -1. */
static int scan_bundles(int bfd, char ***out)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *e;
	int fd = dup(bfd);

	*out = NULL;
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)) && n < MAX_ENTRIES) {
		struct stat st;

		if (!valid_bundle_name(e->d_name))
			continue;
		if (fstatat(bfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(v, nc * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), str_cmp);
	*out = v;
	return (int)n;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int bundle_retention(const char *state_dir, unsigned max_count, uint64_t max_bytes)
{
	char err[512], **names;
	uint64_t *sizes, total = 0;
	unsigned budget;
	int bfd, n, removed = 0, count;

	bfd = open_bundles(state_dir, 0, err, sizeof(err));
	if (bfd == -ENOENT)
		return 0;
	if (bfd < 0) {
		log_warnx("bundle retention: %s", err);
		return -1;
	}
	n = scan_bundles(bfd, &names);
	if (n < 0) {
		log_warn("bundle retention: %s/bundles: read", state_dir);
		close(bfd);
		return -1;
	}
	sizes = calloc((size_t)n + 1, sizeof(*sizes));
	if (!sizes) {
		free_names(names, n);
		close(bfd);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		budget = MAX_ENTRIES;
		sizes[i] = du_at(bfd, names[i], 0, &budget);
		total += sizes[i];
	}
	count = n;
	for (int i = 0; i < n - 1; i++) {
		int r;

		if (!((max_count && (unsigned)count > max_count) || (max_bytes && total > max_bytes)))
			break;
		r = rm_tree_at(bfd, names[i], 0);
		if (r < 0) {
			log_warnx("bundle retention: %s/bundles/%s: remove: %s", state_dir, names[i],
				  strerror(-r));
			continue;
		}
		log_info("bundle retention: removed %s/bundles/%s (%" PRIu64 " bytes; there were %d "
			 "bundles, %" PRIu64 " bytes; limits: %u bundles, %" PRIu64 " bytes, 0 = none)",
			 state_dir, names[i], sizes[i], count, total, max_count, max_bytes);
		count--;
		total -= sizes[i];
		removed++;
	}
	if (removed)
		fsync(bfd);
	free(sizes);
	free_names(names, n);
	close(bfd);
	return removed;
}

/* Read a regular file beneath dfd, at most max bytes, NUL-terminated. */
static char *read_at(int dfd, const char *rel, size_t max, size_t *lenp, int *errp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd = open_beneath(dfd, rel, O_RDONLY | O_NONBLOCK, 0);

	*errp = 0;
	if (fd < 0) {
		*errp = errno;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		*errp = errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		*errp = EINVAL;
		goto fail;
	}
	if ((uint64_t)st.st_size > max) {
		*errp = EFBIG;
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		*errp = ENOMEM;
		goto fail;
	}
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*errp = errno;
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	if (lenp)
		*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

static const char *read_why(int e)
{
	return e == EINVAL ? "not a regular file" : e == ELOOP ? "a symbolic link" :
	       e == EFBIG ? "too large" : e == ENOENT ? "missing" : strerror(e);
}

int bundle_open(const char *path, char *err, size_t errlen)
{
	int dfd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (dfd < 0)
		seterr(err, errlen, "bundle %s: %s", path ? path : "(null)",
		       path ? strerror(errno) : "no path");
	return dfd;
}

char *bundle_read_file(int dfd, const char *rel, size_t max, size_t *lenp, char *err,
		       size_t errlen)
{
	char *txt;
	int e;

	if (!valid_relpath(rel)) {
		seterr(err, errlen, "%.*s: not a relative path of [A-Za-z0-9._-] components",
		       BUNDLE_PATH_MAX, rel ? rel : "(null)");
		return NULL;
	}
	txt = read_at(dfd, rel, max, lenp, &e);
	if (!txt)
		seterr(err, errlen, "%s: %s", rel, read_why(e));
	return txt;
}

static int load_manifest_at(int dfd, struct json_object **out, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *m, *sv;
	enum json_tokener_error je;
	size_t len;
	int e;
	char *txt = read_at(dfd, MANIFEST_NAME, MANIFEST_MAX, &len, &e);
	int64_t schema;

	*out = NULL;
	if (!txt) {
		seterr(err, errlen, MANIFEST_NAME ": %s", read_why(e));
		return -1;
	}
	if (memchr(txt, '\0', len)) {
		free(txt);
		seterr(err, errlen, MANIFEST_NAME ": not JSON text (holds a NUL byte)");
		return -1;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		free(txt);
		seterr(err, errlen, MANIFEST_NAME ": out of memory");
		return -1;
	}
	m = json_tokener_parse_ex(tok, txt, (int)(len > INT32_MAX ? INT32_MAX : len));
	je = json_tokener_get_error(tok);
	if (!m || je != json_tokener_success) {
		seterr(err, errlen, MANIFEST_NAME ": not valid JSON at byte %zu: %s",
		       (size_t)json_tokener_get_parse_end(tok), json_tokener_error_desc(je));
		json_object_put(m);
		json_tokener_free(tok);
		free(txt);
		return -1;
	}
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		if (txt[i] != ' ' && txt[i] != '\n' && txt[i] != '\t' && txt[i] != '\r') {
			seterr(err, errlen, MANIFEST_NAME ": trailing data after the JSON object at byte %zu", i);
			json_object_put(m);
			json_tokener_free(tok);
			free(txt);
			return -1;
		}
	json_tokener_free(tok);
	free(txt);
	if (!json_object_is_type(m, json_type_object)) {
		seterr(err, errlen, MANIFEST_NAME ": not a JSON object");
		json_object_put(m);
		return -1;
	}
	if (!json_object_object_get_ex(m, "schema", &sv) || !sv) {
		seterr(err, errlen, MANIFEST_NAME ": no \"schema\" field: not a nicstalld bundle "
		       "manifest (this nicstalld reads schema %d)", BUNDLE_SCHEMA);
		json_object_put(m);
		return -1;
	}
	if (!json_object_is_type(sv, json_type_int)) {
		seterr(err, errlen, MANIFEST_NAME ": \"schema\" is not an integer "
		       "(this nicstalld reads schema %d)", BUNDLE_SCHEMA);
		json_object_put(m);
		return -1;
	}
	schema = json_object_get_int64(sv);
	if (schema > BUNDLE_SCHEMA) {
		seterr(err, errlen, MANIFEST_NAME ": schema %" PRId64 " is newer than this "
		       "nicstalld reads (schema %d): read it with a newer nicstalld",
		       schema, BUNDLE_SCHEMA);
		json_object_put(m);
		return -1;
	}
	if (schema < 0) {
		seterr(err, errlen, MANIFEST_NAME ": schema %" PRId64 " is not a valid version "
		       "(this nicstalld reads schema %d)", schema, BUNDLE_SCHEMA);
		json_object_put(m);
		return -1;
	}
	if (schema < BUNDLE_SCHEMA)
		seterr(err, errlen, "note: " MANIFEST_NAME ": schema %" PRId64 " is older than "
		       "this nicstalld's schema %d; read as far as it goes", schema, BUNDLE_SCHEMA);
	else if (err && errlen)
		err[0] = '\0';
	*out = m;
	return 0;
}

int bundle_load_manifest(const char *path, struct json_object **out, char *err, size_t errlen)
{
	int dfd, rc;

	*out = NULL;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		seterr(err, errlen, "bundle %s: %s", path, strerror(errno));
		return -1;
	}
	rc = load_manifest_at(dfd, out, err, errlen);
	close(dfd);
	return rc;
}

int bundle_list(const char *state_dir,
		void (*cb)(const char *path, struct json_object *manifest, uint64_t bytes, void *arg),
		void *arg)
{
	char err[512], **names, path[4096];
	int bfd, n;

	bfd = open_bundles(state_dir, 0, err, sizeof(err));
	if (bfd == -ENOENT)
		return 0;
	if (bfd < 0) {
		log_warnx("bundle list: %s", err);
		return -1;
	}
	n = scan_bundles(bfd, &names);
	if (n < 0) {
		log_warn("bundle list: %s/bundles: read", state_dir);
		close(bfd);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct json_object *m = NULL;
		unsigned budget = MAX_ENTRIES;
		uint64_t bytes = du_at(bfd, names[i], 0, &budget);
		int dfd = openat(bfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (dfd >= 0) {
			if (load_manifest_at(dfd, &m, err, sizeof(err)) < 0)
				log_debug("bundle %s/bundles/%s: %s", state_dir, names[i], err);
			close(dfd);
		}
		snprintf(path, sizeof(path), "%s/bundles/%s", state_dir, names[i]);
		if (cb)
			cb(path, m, bytes, arg);
		json_object_put(m);
	}
	free_names(names, n);
	close(bfd);
	return n;
}

/* ---- verification ---- */

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

/* Parse SHA256SUMS; returns count or -1 with err. */
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
			seterr(err, errlen, SUMS_NAME ":%zu: no newline at the end", lineno);
			goto fail;
		}
		*nl = '\0';
		p = nl + 1;
		if ((size_t)(nl - line) < 67 || !is_hex64(line) || line[64] != ' ' ||
		    (line[65] != ' ' && line[65] != '*')) {
			seterr(err, errlen, SUMS_NAME ":%zu: not \"<sha256>  <path>\"", lineno);
			goto fail;
		}
		fn = line + 66;
		if (strlen(fn) != (size_t)(nl - fn) || !valid_relpath(fn)) {
			seterr(err, errlen, SUMS_NAME ":%zu: unsafe or invalid path", lineno);
			goto fail;
		}
		if (!strcmp(fn, SUMS_NAME)) {
			seterr(err, errlen, SUMS_NAME ":%zu: lists itself", lineno);
			goto fail;
		}
		if (n >= MAX_ENTRIES) {
			seterr(err, errlen, SUMS_NAME ": more than %d entries", MAX_ENTRIES);
			goto fail;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct sum *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				seterr(err, errlen, SUMS_NAME ": out of memory");
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
			seterr(err, errlen, SUMS_NAME ": %s listed twice", v[i].name);
			goto fail;
		}
	*out = v;
	return (long)n;
fail:
	free(v);
	return -1;
}

/* sha256 of a regular file beneath dfd. Returns 0, or an errno value. */
static int hash_at(int dfd, const char *rel, char hex[65], char *buf)
{
	struct stat st;
	EVP_MD_CTX *ctx;
	uint64_t left;
	int fd = open_beneath(dfd, rel, O_RDONLY | O_NONBLOCK, 0), e = 0;

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
	if (!e && md_final(ctx, hex) < 0)
		e = EIO;
	EVP_MD_CTX_free(ctx);
	close(fd);
	return e;
}

/* Every entry under dfd (prefix names its place) must be a regular file or a
 * directory listed in SHA256SUMS. Returns 0 or -1 with err. */
static int walk_extras(int dfd, const char *prefix, int depth, struct sum *sums, size_t n,
		       unsigned *budget, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;
	int fd = dup(dfd), rc = 0;

	if (fd < 0) {
		seterr(err, errlen, "%s: %s", *prefix ? prefix : ".", strerror(errno));
		return -1;
	}
	d = fdopendir(fd);
	if (!d) {
		seterr(err, errlen, "%s: %s", *prefix ? prefix : ".", strerror(errno));
		close(fd);
		return -1;
	}
	rewinddir(d);
	while (!rc && (e = readdir(d))) {
		char rel[BUNDLE_PATH_MAX * 2 + 2];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!*budget) {
			seterr(err, errlen, "%s: more than %d entries", *prefix ? prefix : ".",
			       MAX_ENTRIES);
			rc = -1;
			break;
		}
		(*budget)--;
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			seterr(err, errlen, "%s: %s", rel, strerror(errno));
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub;

			if (depth >= MAX_DEPTH || strlen(rel) > BUNDLE_PATH_MAX) {
				seterr(err, errlen, "%s: directory nested too deep", rel);
				rc = -1;
				break;
			}
			sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				seterr(err, errlen, "%s: %s", rel, strerror(errno));
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
			seterr(err, errlen, "%s: not in " SUMS_NAME, rel);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* The manifest's "files" must agree with SHA256SUMS. */
static int check_files(struct json_object *m, struct sum *sums, size_t n, char *err, size_t errlen)
{
	struct json_object *fa;
	size_t nf;

	if (!json_object_object_get_ex(m, "files", &fa) || !json_object_is_type(fa, json_type_array)) {
		seterr(err, errlen, MANIFEST_NAME ": no \"files\" list");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		sums[i].seen = 0;
	nf = json_object_array_length(fa);
	for (size_t i = 0; i < nf; i++) {
		struct json_object *o = json_object_array_get_idx(fa, i), *jn, *jh;
		const char *fn, *h;
		struct sum *s;

		if (!json_object_object_get_ex(o, "name", &jn) || !json_object_is_type(jn, json_type_string) ||
		    !json_object_object_get_ex(o, "sha256", &jh) || !json_object_is_type(jh, json_type_string)) {
			seterr(err, errlen, MANIFEST_NAME ": files[%zu]: no \"name\" or \"sha256\"", i);
			return -1;
		}
		fn = json_object_get_string(jn);
		h = json_object_get_string(jh);
		if (!valid_relpath(fn)) {
			seterr(err, errlen, MANIFEST_NAME ": files[%zu]: unsafe or invalid path", i);
			return -1;
		}
		s = sum_find(sums, n, fn);
		if (!s) {
			seterr(err, errlen, "%s: in the manifest's files but not in " SUMS_NAME, fn);
			return -1;
		}
		if (strcasecmp(h, s->hex)) {
			seterr(err, errlen, "%s: sha256 in the manifest differs from " SUMS_NAME, fn);
			return -1;
		}
		s->seen = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!sums[i].seen && strcmp(sums[i].name, MANIFEST_NAME)) {
			seterr(err, errlen, "%s: in " SUMS_NAME " but not in the manifest's files",
			       sums[i].name);
			return -1;
		}
	return 0;
}

int bundle_verify(const char *path, struct json_object **manifest_out, char *err, size_t errlen)
{
	struct json_object *m = NULL;
	struct sum *sums = NULL;
	char note[512] = "", *txt = NULL, *buf = NULL;
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
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* a newer or unreadable manifest first: the clearest reason */
	if (load_manifest_at(dfd, &m, note, sizeof(note)) < 0) {
		seterr(err, errlen, "%s", note);
		goto out;
	}
	txt = read_at(dfd, SUMS_NAME, SUMS_MAX, &len, &e);
	if (!txt) {
		seterr(err, errlen, SUMS_NAME ": %s", read_why(e));
		goto out;
	}
	n = parse_sums(txt, len, &sums, err, errlen);
	if (n < 0)
		goto out;
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		seterr(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (long i = 0; i < n; i++) {
		char hex[65];

		e = hash_at(dfd, sums[i].name, hex, buf);
		if (e) {
			seterr(err, errlen, "%s: %s", sums[i].name, read_why(e));
			goto out;
		}
		if (strcmp(hex, sums[i].hex)) {
			seterr(err, errlen, "%s: checksum mismatch", sums[i].name);
			goto out;
		}
	}
	if (walk_extras(dfd, "", 0, sums, (size_t)n, &budget, err, errlen) < 0)
		goto out;
	if (check_files(m, sums, (size_t)n, err, errlen) < 0)
		goto out;
	seterr(err, errlen, "%s", note);
	rc = 0;
out:
	if (manifest_out && m) {
		*manifest_out = m;
		m = NULL;
	}
	json_object_put(m);
	free(buf);
	free(sums);
	free(txt);
	close(dfd);
	return rc;
}

/* ---- human summary ---- */

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int jnum(struct json_object *v, double *out)
{
	if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return 0;
	*out = json_object_get_double(v);
	return 1;
}

static struct json_object *jarr(struct json_object *o, const char *key)
{
	struct json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

/* A value for humans: numbers plainly, strings bounded, null as unknown. */
static void put_val(FILE *f, struct json_object *v)
{
	const char *s;

	if (!v) {
		fputs("unknown", f);
		return;
	}
	switch (json_object_get_type(v)) {
	case json_type_null:
		fputs("unknown", f);
		return;
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", f);
		return;
	case json_type_int:
		if (json_object_get_int64(v) == INT64_MAX)
			fprintf(f, "%" PRIu64, json_object_get_uint64(v));
		else
			fprintf(f, "%" PRId64, json_object_get_int64(v));
		return;
	case json_type_double:
		fprintf(f, "%.6g", json_object_get_double(v));
		return;
	case json_type_string:
		s = json_object_get_string(v);
		fprintf(f, "%.200s%s", s, strlen(s) > 200 ? "..." : "");
		return;
	default:
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		fprintf(f, "%.200s%s", s ? s : "?", s && strlen(s) > 200 ? "..." : "");
		return;
	}
}

static void put_field(FILE *f, const char *label, struct json_object *a, struct json_object *b,
		      const char *key)
{
	struct json_object *v = jget(a, key);

	if (!v || json_object_is_type(v, json_type_null))
		v = jget(b, key);
	fprintf(f, "%s ", label);
	if (!v || json_object_is_type(v, json_type_null))
		fputs("not recorded", f);
	else
		put_val(f, v);
}

static void put_values(FILE *f, struct json_object *vals, int max)
{
	int n = 0;

	if (!vals || !json_object_is_type(vals, json_type_object) || !json_object_object_length(vals))
		return;
	fputs(": ", f);
	json_object_object_foreach(vals, k, v) {
		if (n == max) {
			fputs(", ...", f);
			break;
		}
		fprintf(f, "%s%.80s = ", n++ ? ", " : "", k);
		put_val(f, v);
	}
}

static int time_of(struct json_object *m, char *buf, size_t len)
{
	static const char *keys[] = { "opened_real_ns", "real_ns", "time_ns" };
	struct json_object *t = jget(m, "trigger");
	const char *s;

	for (int pass = 0; pass < 2; pass++) {
		struct json_object *o = pass ? t : m;

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			struct json_object *v = jget(o, keys[i]);
			time_t sec;
			struct tm tm;

			if (!v || !json_object_is_type(v, json_type_int))
				continue;
			sec = (time_t)(json_object_get_uint64(v) / 1000000000ull);
			if (gmtime_r(&sec, &tm) && strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
				return 1;
		}
		if ((s = jstr(o, "time"))) {
			snprintf(buf, len, "%.60s", s);
			return 1;
		}
	}
	snprintf(buf, len, "time not recorded");
	return 0;
}

static void sum_title(FILE *f, struct json_object *m, struct json_object *cls,
		      struct json_object *facts)
{
	const char *verdict = jstr(cls, "verdict"), *port = jstr(m, "port"), *host = jstr(m, "host");
	struct json_object *trig = jget(m, "trigger");
	char when[64];

	if (!verdict && jget(m, "verdict") && json_object_is_type(jget(m, "verdict"), json_type_string))
		verdict = json_object_get_string(jget(m, "verdict"));
	if (!port)
		port = jstr(facts, "port");
	time_of(m, when, sizeof(when));
	fprintf(f, "# nicstalld: %s on port %s, %s\n\n", verdict ? verdict : "no verdict",
		port ? port : "(port not recorded)", when);
	fprintf(f, "Host %s, kernel %s. Trigger: ", host ? host : "not recorded",
		jstr(m, "kernel") ? jstr(m, "kernel") : "not recorded");
	if (!trig)
		fputs("not recorded", f);
	else if (json_object_is_type(trig, json_type_object) && jstr(trig, "kind"))
		fputs(jstr(trig, "kind"), f);
	else
		put_val(f, trig);
	if (jget(m, "incident_id") && json_object_is_type(jget(m, "incident_id"), json_type_int) &&
	    json_object_get_int64(jget(m, "incident_id")) > 0)
		fprintf(f, " (incident %" PRId64 ")", json_object_get_int64(jget(m, "incident_id")));
	fputs(".\n", f);
}

static void sum_is(FILE *f, struct json_object *cls)
{
	struct json_object *terms = jarr(cls, "terms");
	const char *ex = jstr(cls, "explanation"), *rule = jstr(cls, "rule");
	size_t n = terms ? json_object_array_length(terms) : 0;

	fputs("\n## What it is\n\n", f);
	if (!cls || !json_object_is_type(cls, json_type_object)) {
		fputs("No classification in this bundle: the verdict is missing.\n", f);
		return;
	}
	fprintf(f, "%s\n", ex ? ex : "(the rule gave no explanation)");
	if (!n) {
		fprintf(f, "\n%s\n", rule ? "The rule's terms were not recorded." :
			"No rule matched.");
		return;
	}
	fprintf(f, "\nRule %s holds:\n", rule ? rule : "(unnamed)");
	for (size_t i = 0; i < n && i < 32; i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);
		const char *ex2 = jstr(t, "expr");

		fprintf(f, "- `%.300s`", ex2 ? ex2 : "?");
		put_values(f, jget(t, "values"), 12);
		fputc('\n', f);
	}
}

static void sum_not(FILE *f, struct json_object *cls)
{
	struct json_object *nots = jarr(cls, "not");
	size_t n = nots ? json_object_array_length(nots) : 0;

	fputs("\n## What it is not\n\n", f);
	if (!n) {
		fputs("No other verdict was evaluated (the list of ruled-out causes is missing).\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		struct json_object *o = json_object_array_get_idx(nots, i);
		struct json_object *matched = jget(o, "matched"), *unknown = jget(o, "unknown");
		const char *v = jstr(o, "verdict"), *failed = jstr(o, "failed");

		if (!v)
			v = "(unnamed verdict)";
		if (matched && json_object_get_boolean(matched)) {
			fprintf(f, "- **Also held: %s.** Every term of it was true, but an earlier "
				"rule won.\n", v);
		} else if (!failed) {
			fprintf(f, "- **Not %s.** Why it was ruled out was not recorded.\n", v);
		} else if (unknown && json_object_is_type(unknown, json_type_object) &&
			   json_object_object_length(unknown)) {
			int k = 0;

			fprintf(f, "- **Not decided: %s.** `%.300s` could not be evaluated", v, failed);
			json_object_object_foreach(unknown, key, why) {
				if (k == 6)
					break;
				fprintf(f, "%s%.80s: ", k++ ? "; " : ": ", key);
				put_val(f, why);
			}
			fputs(".\n", f);
		} else {
			fprintf(f, "- **Not %s.** `%.300s` is ", v, failed);
			put_val(f, jget(o, "value"));
			put_values(f, jget(o, "values"), 12);
			fputs(".\n", f);
		}
	}
}

static void sum_port(FILE *f, const char *name, struct json_object *mp, struct json_object *fp)
{
	struct json_object *stall = jget(fp, "stall"), *cnt = jget(stall, "counters");
	double span;

	fprintf(f, "- Port %.64s:", name);
	put_field(f, " interface", mp, fp, "interface");
	put_field(f, ", netns", mp, fp, "netns");
	put_field(f, ", driver", mp, fp, "driver");
	put_field(f, ", firmware", mp, fp, "firmware");
	put_field(f, ", PSID", mp, fp, "psid");
	put_field(f, ", link up", mp, fp, "link_up");
	fputs(".\n", f);
	if (!stall) {
		fputs("  Counters at the stall: not recorded.\n", f);
		return;
	}
	fputs("  Counters at the stall", f);
	if (jnum(jget(stall, "span_s"), &span))
		fprintf(f, " (over %.3g s)", span);
	if (!cnt || !json_object_is_type(cnt, json_type_object)) {
		fputs(": not recorded.\n", f);
		return;
	} else {
		int moved = 0, flat = 0;

		json_object_object_foreach(cnt, k, v) {
			double d;

			if (!jnum(v, &d))
				continue;
			if (d == 0) {
				flat++;
				continue;
			}
			if (moved < 16) {
				fprintf(f, "%s%.64s +", moved ? ", " : ": ", k);
				put_val(f, v);
			}
			moved++;
		}
		if (moved > 16)
			fprintf(f, ", and %d more", moved - 16);
		fprintf(f, "%s%d counters did not move.\n", moved ? "; " : ": ", flat);
	}
}

static void sum_evidence(FILE *f, struct json_object *m, struct json_object *facts)
{
	struct json_object *mports = jget(m, "ports"), *fports = jget(facts, "ports");
	struct json_object *flows = jget(facts, "flows"), *pings = jarr(facts, "pings");
	struct json_object *caps = jarr(facts, "captures"), *threads = jarr(facts, "threads");
	struct json_object *rel = jget(m, "release"), *journal = jget(m, "journal");
	int nports = 0;
	double x;

	fputs("\n## Evidence\n\n", f);
	if (!facts)
		fputs("- Facts: not recorded (the bundle holds no classified facts).\n", f);
	/* ports */
	if (mports && json_object_is_type(mports, json_type_object)) {
		json_object_object_foreach(mports, k, v) {
			if (nports++ < 16)
				sum_port(f, k, v, jget(fports, k));
		}
	}
	if (fports && json_object_is_type(fports, json_type_object)) {
		json_object_object_foreach(fports, k, v) {
			if (jget(mports, k))
				continue;
			if (nports++ < 16)
				sum_port(f, k, NULL, v);
		}
	}
	if (!nports)
		fputs("- Ports: not recorded.\n", f);
	/* flows */
	if (!flows || !json_object_is_type(flows, json_type_object)) {
		fputs("- Flows: not recorded.\n", f);
	} else {
		struct json_object *held = jget(flows, "held"), *list = jarr(flows, "list");
		size_t n = list ? json_object_array_length(list) : 0;

		fputs("- Flows: ", f);
		put_val(f, jget(flows, "stalled"));
		fputs(" stalled, ", f);
		put_val(f, jget(flows, "progressing"));
		fputs(" progressing. ", f);
		if (held && json_object_is_type(held, json_type_object)) {
			fputs("Held by the engine: unsent ", f);
			put_val(f, jget(held, "unsent"));
			fputs(", unread ", f);
			put_val(f, jget(held, "unread"));
			fputs(", staged ", f);
			put_val(f, jget(held, "staged"));
			fputs(" bytes.\n", f);
		} else {
			fputs("What the engine held: not recorded.\n", f);
		}
		for (size_t i = 0; i < n && i < 8; i++) {
			struct json_object *o = json_object_array_get_idx(list, i);

			fputs("  - ", f);
			put_val(f, jget(o, "tuple"));
			fputs(" (", f);
			put_val(f, jget(o, "src"));
			fputs("): waited ", f);
			put_val(f, jget(o, "waited_ms"));
			fputs(" ms, unsent ", f);
			put_val(f, jget(o, "unsent"));
			fputs(", unread ", f);
			put_val(f, jget(o, "unread"));
			fputs(", staged ", f);
			put_val(f, jget(o, "staged"));
			fputs("\n", f);
		}
		if (n > 8)
			fprintf(f, "  - and %zu more (flows.json)\n", n - 8);
	}
	/* threads */
	if (!threads) {
		fputs("- Engine threads: not recorded.\n", f);
	} else {
		size_t n = json_object_array_length(threads);

		fprintf(f, "- Engine threads: %zu recorded.\n", n);
		for (size_t i = 0; i < n && i < 6; i++) {
			struct json_object *o = json_object_array_get_idx(threads, i);

			fputs("  - tid ", f);
			put_val(f, jget(o, "tid"));
			fputs(" (", f);
			put_val(f, jget(o, "comm"));
			fputs("): state ", f);
			put_val(f, jget(o, "state"));
			fputs(", wchan ", f);
			put_val(f, jget(o, "wchan"));
			fputs(", voluntary switches/s ", f);
			put_val(f, jget(o, "vcsw_rate"));
			fputs("\n", f);
		}
	}
	/* pings */
	if (!pings || !json_object_array_length(pings)) {
		fputs("- Kernel pings: none recorded.\n", f);
	} else {
		size_t n = json_object_array_length(pings);

		for (size_t i = 0; i < n && i < 8; i++) {
			struct json_object *o = json_object_array_get_idx(pings, i);

			fputs("- Kernel ping ", f);
			put_val(f, jget(o, "from"));
			fputs(" -> ", f);
			put_val(f, jget(o, "to"));
			fputs(": ", f);
			put_val(f, jget(o, "received"));
			fputs(" of ", f);
			put_val(f, jget(o, "sent"));
			fputs(" echo requests answered.\n", f);
		}
	}
	/* captures */
	if (!caps || !json_object_array_length(caps)) {
		fputs("- Captures: none recorded.\n", f);
	} else {
		size_t n = json_object_array_length(caps);

		for (size_t i = 0; i < n && i < 8; i++) {
			struct json_object *o = json_object_array_get_idx(caps, i);
			struct json_object *pr = jget(o, "promisc"), *tr = jget(o, "transition");

			fputs("- Capture on ", f);
			put_val(f, jget(o, "port"));
			fputs(": ", f);
			put_val(f, jget(o, "frames"));
			fputs(" frames, ", f);
			if (!pr || json_object_is_type(pr, json_type_null))
				fputs("promiscuous mode not recorded", f);
			else
				fputs(json_object_get_boolean(pr) ? "promiscuous" : "not promiscuous", f);
			if (!tr || json_object_is_type(tr, json_type_null))
				fputs(", mode change not recorded", f);
			else if (json_object_is_type(tr, json_type_boolean))
				fputs(json_object_get_boolean(tr) ? ", with a promiscuous transition "
				      "(the driver reprogrammed the receive filters)" :
				      ", without a mode change", f);
			else {
				fputs(", transition ", f);
				put_val(f, tr);
			}
			fputs(".\n", f);
		}
	}
	/* release */
	if (!rel)
		rel = jget(facts, "release");
	if (!rel || !json_object_is_type(rel, json_type_object)) {
		fputs("- Release: not recorded.\n", f);
	} else if (json_object_get_boolean(jget(rel, "released"))) {
		fputs("- Released by ", f);
		put_val(f, jget(rel, "action"));
		if (jnum(jget(rel, "after_ms"), &x))
			fprintf(f, ", %.1f ms after the action", x);
		else
			fputs(", time not recorded", f);
		fputs(".\n", f);
	} else {
		fputs("- Not released (action: ", f);
		put_val(f, jget(rel, "action"));
		fputs(").\n", f);
	}
	/* journal */
	if (!journal || json_object_is_type(journal, json_type_null)) {
		fputs("- Journal: no journal excerpt in this bundle.\n", f);
	} else if (jget(journal, "available") && !json_object_get_boolean(jget(journal, "available"))) {
		fputs("- Journal: unavailable on this host.\n", f);
	} else {
		struct json_object *lines = jarr(journal, "entries");

		if (!lines)
			lines = jarr(journal, "lines");
		if (!lines && json_object_is_type(journal, json_type_array))
			lines = journal;
		if (lines)
			fprintf(f, "- Journal: %zu lines around the stall (journal.json).\n",
				json_object_array_length(lines));
		else
			fputs("- Journal: excerpt present (journal.json).\n", f);
	}
}

static void sum_timeline(FILE *f, struct json_object *m)
{
	struct json_object *steps = jarr(m, "steps");
	size_t n = steps ? json_object_array_length(steps) : 0;

	fputs("\n## Timeline\n\n", f);
	if (!n) {
		fputs("No step timeline recorded.\n", f);
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		struct json_object *s = json_object_array_get_idx(steps, i);
		const char *note = jstr(s, "note"), *port = jstr(s, "port");
		double a, b;

		if (jnum(jget(s, "start_ms"), &a))
			fprintf(f, "- %+9.1f ms", a);
		else
			fputs("-         ? ms", f);
		if (jnum(jget(s, "end_ms"), &b))
			fprintf(f, " .. %+9.1f ms", b);
		else
			fputs(" ..         ? ms", f);
		fputs("  ", f);
		put_val(f, jget(s, "step"));
		if (port)
			fprintf(f, " (%.64s)", port);
		fputs(": ", f);
		put_val(f, jget(s, "outcome"));
		if (note)
			fprintf(f, " (%.200s)", note);
		fputc('\n', f);
	}
	if (n > 64)
		fprintf(f, "- and %zu more steps (manifest.json)\n", n - 64);
}

char *bundle_summary(struct json_object *manifest)
{
	struct json_object *cls = jget(manifest, "verdict"), *facts = jget(manifest, "facts");
	const char *action;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (cls && !json_object_is_type(cls, json_type_object))
		cls = NULL;
	if (facts && !json_object_is_type(facts, json_type_object))
		facts = NULL;
	sum_title(f, manifest, cls, facts);
	sum_is(f, cls);
	sum_not(f, cls);
	sum_evidence(f, manifest, facts);
	sum_timeline(f, manifest);
	fputs("\n## Recommended action\n\n", f);
	action = jstr(cls, "action");
	fprintf(f, "%s\n", action ? action : "None recorded: the rule gave no action.");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
