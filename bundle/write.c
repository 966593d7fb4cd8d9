/* bundle write: names, the atomic write of a bundle, and the clean-up of
 * what a crash left (nicstall-bundle(5) "Atomic writing").
 *
 * A bundle is written under "<state_dir>/bundles/.tmp-<name>": every file
 * created O_EXCL beneath that directory's fd, never following a symbolic
 * link, then manifest.json, then SHA256SUMS, every directory fsynced, and
 * the directory renamed into place without replacing an existing one. On
 * any failure the temporary directory is removed completely. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/ctlproto.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

static size_t sanitize(char *out, size_t cap, const char *in, size_t maxlen)
{
	size_t n = 0;

	for (; in && *in && n < maxlen && n + 1 < cap; in++)
		out[n++] = bi_name_char(*in) ? *in : '_';
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

/* Copy f->src_path (a regular file, not a symbolic link) into fd, at most
 * max_copy bytes (0: no bound). Returns 0, or -errno with err when the
 * source is at fault, or -errno with *what when the copy is. */
static int copy_source(int fd, const struct bundle_file *f, size_t max_copy, struct entry *e,
		       EVP_MD_CTX *ctx, const char **what, char *err, size_t errlen)
{
	struct stat st;
	uint64_t limit = max_copy ? max_copy : UINT64_MAX;
	char *buf = NULL;
	int sfd, rc = 0;

	sfd = open(f->src_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (sfd < 0 || fstat(sfd, &st) < 0) {
		rc = -errno;
		util_errf(err, errlen, "%s: source %s: %s", f->name, f->src_path, fsu_strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		util_errf(err, errlen, "%s: source %s: not a regular file", f->name, f->src_path);
		goto out;
	}
	e->src_bytes = (uint64_t)st.st_size;
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		rc = -ENOMEM;
		*what = "write";
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
			util_errf(err, errlen, "%s: source %s: read: %s", f->name, f->src_path,
				  strerror(-rc));
			goto out;
		}
		if (r == 0)
			break;
		if (fsu_write_all(fd, buf, (size_t)r) < 0) {
			rc = -errno;
			*what = "write";
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		e->bytes += (uint64_t)r;
	}
out:
	if (sfd >= 0)
		close(sfd);
	free(buf);
	return rc;
}

/* Write one file into the temporary dir; fills e. Returns 0 or -errno with err. */
static int write_one(int tfd, const struct bundle_file *f, size_t max_copy, struct entry *e,
		     char *err, size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int fd = -1, rc = 0;
	const char *what = "write";

	snprintf(e->name, sizeof(e->name), "%s", f->name);
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = -ENOMEM;
		what = "sha256";
		goto out;
	}
	if (fsu_mkparents_at(tfd, f->name, 0750) < 0) {
		rc = -errno;
		what = "mkdir";
		goto out;
	}
	fd = fsu_create_excl_at(tfd, f->name, 0640);
	if (fd < 0) {
		rc = -errno;
		what = "create";
		goto out;
	}
	if (f->data || !f->src_path) {
		if (f->len && fsu_write_all(fd, f->data, f->len) < 0) {
			rc = -errno;
			goto out;
		}
		if (f->len)
			EVP_DigestUpdate(ctx, f->data, f->len);
		e->bytes = f->len;
	} else {
		what = NULL;
		rc = copy_source(fd, f, max_copy, e, ctx, &what, err, errlen);
		if (rc < 0)
			goto out;
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
	if (bi_sha256_final(ctx, e->hex) < 0) {
		rc = -EIO;
		what = "sha256";
	}
out:
	if (rc && what)         /* what == NULL: copy_source said it */
		util_errf(err, errlen, "%s: %s: %s", f->name, what, strerror(-rc));
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* Check the name and the file list; 0 or -errno with err. */
static int check_request(const char *state_dir, const char *name,
			 const struct bundle_file *files, size_t nfiles, char *err, size_t errlen)
{
	if (!state_dir || !bi_valid_name(name)) {
		util_errf(err, errlen, "bundle name '%s': not a plain name of [A-Za-z0-9._-] "
			  "(at most %d characters, not starting with '.')", name ? name : "(null)",
			  BUNDLE_NAME_MAX);
		return -EINVAL;
	}
	if (nfiles > MAX_ENTRIES) {
		util_errf(err, errlen, "bundle %s: %zu files (at most %d)", name, nfiles, MAX_ENTRIES);
		return -E2BIG;
	}
	for (size_t i = 0; i < nfiles; i++) {
		const char *fn = files[i].name;

		if (!bi_valid_relpath(fn)) {
			util_errf(err, errlen, "bundle %s: file name '%s': not a relative path of "
				  "[A-Za-z0-9._-] components (no '..', no leading '/' or '.')",
				  name, fn ? fn : "(null)");
			return -EINVAL;
		}
		if (!strcmp(fn, SUMS_NAME) || !strcmp(fn, MANIFEST_NAME)) {
			util_errf(err, errlen, "bundle %s: file name '%s' is reserved", name, fn);
			return -EINVAL;
		}
		if (!files[i].data && !files[i].src_path && files[i].len) {
			util_errf(err, errlen, "bundle %s: %s: no data and no source", name, fn);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(files[j].name, fn)) {
				util_errf(err, errlen, "bundle %s: %s: listed twice", name, fn);
				return -EINVAL;
			}
	}
	return 0;
}

/* Add "schema" and "files" to m and write it as manifest.json. */
static int write_manifest(int tfd, struct json_object *m, struct entry *ents, size_t nfiles,
			  char *err, size_t errlen)
{
	struct json_object *farr = json_object_new_array();
	struct bundle_file mf = { .name = MANIFEST_NAME };
	const char *txt;
	size_t tl;
	char *copy;
	int rc;

	for (size_t i = 0; farr && i < nfiles; i++) {
		struct json_object *o = json_object_new_object();

		jx_add_str(o, MK_F_NAME, ents[i].name);
		jx_add_u64(o, MK_F_BYTES, ents[i].bytes);
		jx_add_str(o, MK_F_SHA256, ents[i].hex);
		if (ents[i].truncated) {
			jx_add_bool(o, MK_F_TRUNCATED, 1);
			jx_add_u64(o, MK_F_SOURCE_BYTES, ents[i].src_bytes);
		}
		json_object_array_add(farr, o);
	}
	json_object_object_add(m, MK_SCHEMA, json_object_new_int(BUNDLE_SCHEMA));
	json_object_object_add(m, MK_FILES, farr);
	txt = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE);
	tl = txt ? strlen(txt) : 0;
	copy = malloc(tl + 2);
	if (!txt || !copy) {
		free(copy);
		util_errf(err, errlen, MANIFEST_NAME ": out of memory");
		return -ENOMEM;
	}
	memcpy(copy, txt, tl);
	copy[tl++] = '\n';
	mf.data = copy;
	mf.len = tl;
	rc = write_one(tfd, &mf, 0, &ents[nfiles], err, errlen);
	free(copy);
	return rc;
}

/* SHA256SUMS: sha256sum(1) format, sorted by path, over ents[0..n). */
static int write_sums(int tfd, struct entry *ents, size_t n, char *err, size_t errlen)
{
	struct bundle_file sf = { .name = SUMS_NAME };
	struct entry se;
	char *sums = NULL;
	size_t sumslen = 0;
	FILE *ss;
	int rc;

	qsort(ents, n, sizeof(*ents), entry_cmp);
	ss = open_memstream(&sums, &sumslen);
	if (!ss) {
		util_errf(err, errlen, SUMS_NAME ": out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(ss, "%s  %s\n", ents[i].hex, ents[i].name);
	if (fclose(ss) != 0) {
		free(sums);
		util_errf(err, errlen, SUMS_NAME ": out of memory");
		return -ENOMEM;
	}
	sf.data = sums;
	sf.len = sumslen;
	rc = write_one(tfd, &sf, 0, &se, err, errlen);
	free(sums);
	return rc;
}

/* Bundles are for the team: group CTL_GROUP may read them. The bundles
 * directory gets that group and the setgid bit, so every directory and
 * file made beneath it (mode 0750 and 0640) has the group too (inode
 * owner rules of mkdir(2)/open(2) in a setgid directory). Without the
 * group, bundles stay readable by root alone; said once. */
static void share_with_group(int bfd, const char *state_dir)
{
	static int said_group, said_dir;
	struct group *gr = getgrnam(CTL_GROUP);
	struct stat st, sd;

	if (!gr) {
		if (!said_group++)
			log_warnx("bundles: group '%s' does not exist: bundles are readable by root "
				  "only (systemd-sysusers creates it)", CTL_GROUP);
		return;
	}
	if (fstat(bfd, &st) < 0)
		return;
	if (st.st_gid != gr->gr_gid && fchown(bfd, (uid_t)-1, gr->gr_gid) < 0)
		log_warn("bundles: %s/bundles: chgrp %s", state_dir, CTL_GROUP);
	if ((st.st_mode & 07777) != 02750 && fchmod(bfd, 02750) < 0)
		log_warn("bundles: %s/bundles: chmod 2750", state_dir);
	/* the group must be able to reach it */
	if (stat(state_dir, &sd) == 0 && !(sd.st_mode & S_IXOTH) &&
	    !(sd.st_gid == gr->gr_gid && (sd.st_mode & S_IXGRP)) && !said_dir++)
		log_warnx("bundles: state directory %s is not searchable by group '%s': its "
			  "members cannot reach the bundles", state_dir, CTL_GROUP);
}

/* Rename tmpname to name, or name-2, name-3... (never replacing one).
 * final gets the name used. Returns 0 or -errno. */
static int rename_unique(int bfd, const char *tmpname, const char *name, char *final,
			 size_t flen)
{
	for (unsigned k = 1;; k++) {
		if (k == 1)
			snprintf(final, flen, "%s", name);
		else
			snprintf(final, flen, "%s-%u", name, k);
		if (renameat2(bfd, tmpname, bfd, final, RENAME_NOREPLACE) == 0)
			return 0;
		/* a file system without RENAME_NOREPLACE */
		if (errno == EINVAL &&
		    faccessat(bfd, final, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
		    renameat(bfd, tmpname, bfd, final) == 0)
			return 0;
		if ((errno != EEXIST && errno != ENOTEMPTY && errno != EINVAL) || k >= 1000)
			return -errno;
	}
}

int bundle_write(const char *state_dir, const char *name, struct json_object *manifest,
		 const struct bundle_file *files, size_t nfiles, size_t max_copy,
		 char *path_out, size_t path_len, char *err, size_t errlen)
{
	char tmpname[BUNDLE_NAME_MAX + 16], final[BUNDLE_NAME_MAX + 16], ferr[512] = "";
	struct json_object *m = manifest;
	struct entry *ents = NULL;
	int bfd = -1, tfd = -1, rc, made = 0;

	if (path_out && path_len)
		path_out[0] = '\0';
	rc = check_request(state_dir, name, files, nfiles, err, errlen);
	if (rc < 0)
		return rc;
	ents = calloc(nfiles + 1, sizeof(*ents));
	if (!ents || (!m && !(m = json_object_new_object()))) {
		free(ents);
		util_errf(err, errlen, "bundle %s: out of memory", name);
		return -ENOMEM;
	}
	bfd = bi_open_bundles(state_dir, 1, err, errlen);
	if (bfd < 0) {
		rc = bfd;
		bfd = -1;
		goto out;
	}
	share_with_group(bfd, state_dir);
	snprintf(tmpname, sizeof(tmpname), TMP_PREFIX "%s", name);
	if (mkdirat(bfd, tmpname, 0750) < 0) {
		int ok = 0;

		if (errno == EEXIST) {
			log_warnx("bundle %s/bundles/%s: removing a leftover", state_dir, tmpname);
			fsu_rm_tree_at(bfd, tmpname);
			ok = mkdirat(bfd, tmpname, 0750) == 0;
		}
		if (!ok) {
			rc = -errno;
			util_errf(err, errlen, "bundle %s: %s/bundles/%s: mkdir: %s", name, state_dir,
				  tmpname, strerror(-rc));
			goto out;
		}
	}
	made = 1;
	tfd = fsu_open_dir_at(bfd, tmpname);
	if (tfd < 0) {
		rc = -errno;
		util_errf(err, errlen, "%s/bundles/%s: %s", state_dir, tmpname, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < nfiles && rc == 0; i++)
		rc = write_one(tfd, &files[i], max_copy, &ents[i], ferr, sizeof(ferr));
	if (rc == 0)
		rc = write_manifest(tfd, m, ents, nfiles, ferr, sizeof(ferr));
	if (rc == 0)
		rc = write_sums(tfd, ents, nfiles + 1, ferr, sizeof(ferr));
	if (rc < 0) {
		util_errf(err, errlen, "bundle %s: %s", name, ferr);
		goto out;
	}
	rc = fsu_fsync_tree(tfd, MAX_DEPTH);
	if (rc < 0) {
		util_errf(err, errlen, "bundle %s: fsync of its directories: %s", name, strerror(-rc));
		goto out;
	}
	rc = rename_unique(bfd, tmpname, name, final, sizeof(final));
	if (rc < 0) {
		util_errf(err, errlen, "bundle %s: rename to %s/bundles/%s: %s", name, state_dir,
			  final, strerror(-rc));
		goto out;
	}
	made = 0;
	if (fsync(bfd) < 0)
		log_warn("bundle %s/bundles: fsync", state_dir);
	if (path_out && path_len)
		snprintf(path_out, path_len, "%s/bundles/%s", state_dir, final);
out:
	if (tfd >= 0)
		close(tfd);
	if (made && bfd >= 0) {
		int r = fsu_rm_tree_at(bfd, tmpname);

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
	bfd = bi_open_bundles(state_dir, 0, err, errlen);
	if (bfd == -ENOENT) {
		if (err && errlen)
			err[0] = '\0';
		return 0;
	}
	if (bfd < 0)
		return -1;
	d = fdopendir(bfd);
	if (!d) {
		util_errf(err, errlen, "%s/bundles: %s", state_dir, strerror(errno));
		close(bfd);
		return -1;
	}
	while ((e = readdir(d))) {
		int r;

		if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)))
			continue;
		r = fsu_rm_tree_at(bfd, e->d_name);
		if (r < 0) {
			if (!failed++)
				util_errf(err, errlen, "%s/bundles/%s: remove: %s", state_dir,
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
