/* bundle list: the "<state_dir>/bundles" directory, its bundles oldest
 * first (names sort in time order), and retention (nicstall-bundle(5)
 * "RETENTION"). Only real directories with valid bundle names count: a
 * symbolic link or a ".tmp-*" in the directory is never listed, sized
 * through or removed as a bundle. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

int bi_open_bundles(const char *state_dir, int create, char *err, size_t errlen)
{
	int sfd, bfd, e;

	sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		e = errno;
		util_errf(err, errlen, "state directory %s: %s", state_dir, strerror(e));
		return -e;
	}
	bfd = fsu_open_dir_at(sfd, "bundles");
	if (bfd < 0 && errno == ENOENT && create) {
		if (mkdirat(sfd, "bundles", 0750) < 0 && errno != EEXIST) {
			e = errno;
			close(sfd);
			util_errf(err, errlen, "%s/bundles: mkdir: %s", state_dir, strerror(e));
			return -e;
		}
		bfd = fsu_open_dir_at(sfd, "bundles");
	}
	e = errno;
	close(sfd);
	if (bfd < 0) {
		util_errf(err, errlen, "%s/bundles: %s", state_dir, strerror(e));
		return -e;
	}
	return bfd;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bi_scan(int bfd, char ***out)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	DIR *d = fsu_opendir_fd(bfd);
	struct dirent *e;

	*out = NULL;
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < MAX_ENTRIES) {
		struct stat st;

		if (!bi_valid_name(e->d_name))
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

void bi_free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Bytes of bundle name beneath bfd (regular files only, bounded). */
static uint64_t bundle_bytes(int bfd, const char *name)
{
	unsigned budget = MAX_ENTRIES;

	return fsu_du_at(bfd, name, MAX_DEPTH, &budget);
}

/* Open the bundles directory and scan it: the number of bundles, with *bfd
 * open (-1 when there is no directory: 0 bundles), or -1, logged as what. */
static int open_scan(const char *state_dir, const char *what, int *bfd, char ***names)
{
	char err[512];
	int n;

	*names = NULL;
	*bfd = bi_open_bundles(state_dir, 0, err, sizeof(err));
	if (*bfd < 0) {
		if (*bfd != -ENOENT)
			log_warnx("%s: %s", what, err);
		n = *bfd == -ENOENT ? 0 : -1;
		*bfd = -1;
		return n;
	}
	n = bi_scan(*bfd, names);
	if (n < 0) {
		log_warn("%s: %s/bundles: read", what, state_dir);
		close(*bfd);
		*bfd = -1;
	}
	return n;
}

static int close_scan(int bfd, char **names, int n, int rc)
{
	bi_free_names(names, n);
	if (bfd >= 0)
		close(bfd);
	return rc;
}

/* Is bundle name a peer snapshot: named "...-peer-snapshot[-N]" and its
 * manifest's trigger says so? (The name alone is cheap; the manifest,
 * read for those names only, keeps a bundle whose verdict merely ends
 * that way in this host's own pool.) */
static int is_peer_snapshot(int bfd, const char *name)
{
	static const char suffix[] = "-" BUNDLE_VERDICT_PEER;
	const char *at = strstr(name, suffix), *next;
	struct json_object *m = NULL;
	char err[256];
	int dfd, yes = 0;

	if (!at)
		return 0;
	while ((next = strstr(at + 1, suffix)))
		at = next;
	at += sizeof(suffix) - 1;
	if (*at == '-' && at[1] && strspn(at + 1, "0123456789") == strlen(at + 1))
		at += strlen(at);
	if (*at)
		return 0;
	dfd = fsu_open_dir_at(bfd, name);
	if (dfd < 0)
		return 0;
	if (bi_load_manifest_at(dfd, &m, err, sizeof(err)) == 0) {
		struct json_object *t;

		yes = json_object_object_get_ex(m, "trigger", &t) &&
		      json_object_is_type(t, json_type_string) &&
		      !strcmp(json_object_get_string(t), BUNDLE_VERDICT_PEER);
	}
	json_object_put(m);
	close(dfd);
	return yes;
}

int bundle_retention(const char *state_dir, enum bundle_pool pool, unsigned max_count,
		     uint64_t max_bytes)
{
	char **names;
	uint64_t *sizes, total = 0;
	int bfd, n, removed = 0, count = 0, newest = -1;
	const char *what = pool == BUNDLE_POOL_PEER ? "peer snapshots" : "this host's bundles";

	n = open_scan(state_dir, "bundle retention", &bfd, &names);
	if (n <= 0)
		return close_scan(bfd, names, 0, n);
	sizes = calloc((size_t)n + 1, sizeof(*sizes));
	if (!sizes)
		return close_scan(bfd, names, n, -1);
	/* only the pool's own bundles count, and only they are removed: a
	 * peer's snapshot never evicts this host's evidence, nor the reverse */
	for (int i = 0; i < n; i++) {
		if (is_peer_snapshot(bfd, names[i]) != (pool == BUNDLE_POOL_PEER)) {
			free(names[i]);
			names[i] = NULL;
			continue;
		}
		sizes[i] = bundle_bytes(bfd, names[i]);
		total += sizes[i];
		count++;
		newest = i;
	}
	/* oldest first, never the pool's newest */
	for (int i = 0; i < newest; i++) {
		int r;

		if (!names[i])
			continue;
		if (!((max_count && (unsigned)count > max_count) || (max_bytes && total > max_bytes)))
			break;
		r = fsu_rm_tree_at(bfd, names[i]);
		if (r < 0) {
			log_warnx("bundle retention: %s/bundles/%s: remove: %s", state_dir, names[i],
				  strerror(-r));
			continue;
		}
		log_info("bundle retention: removed %s/bundles/%s (%" PRIu64 " bytes; there were %d "
			 "%s, %" PRIu64 " bytes; their limits: %u bundles, %" PRIu64 " bytes, 0 = "
			 "none)", state_dir, names[i], sizes[i], count, what, total, max_count, max_bytes);
		count--;
		total -= sizes[i];
		removed++;
	}
	if (removed)
		fsync(bfd);
	free(sizes);
	return close_scan(bfd, names, n, removed);
}

int bundle_list(const char *state_dir,
		void (*cb)(const char *path, struct json_object *manifest, uint64_t bytes, void *arg),
		void *arg)
{
	char err[512], **names, path[4096];
	int bfd, n;

	n = open_scan(state_dir, "bundle list", &bfd, &names);
	if (n <= 0)
		return close_scan(bfd, names, 0, n);
	for (int i = 0; i < n; i++) {
		struct json_object *m = NULL;
		uint64_t bytes = bundle_bytes(bfd, names[i]);
		int dfd = fsu_open_dir_at(bfd, names[i]);

		if (dfd >= 0) {
			if (bi_load_manifest_at(dfd, &m, err, sizeof(err)) < 0)
				log_debug("bundle %s/bundles/%s: %s", state_dir, names[i], err);
			close(dfd);
		}
		snprintf(path, sizeof(path), "%s/bundles/%s", state_dir, names[i]);
		if (cb)
			cb(path, m, bytes, arg);
		json_object_put(m);
	}
	return close_scan(bfd, names, n, n);
}

int bundle_locate(const char *state_dir, const char *arg, char *buf, size_t len, char *err,
		  size_t errlen)
{
	struct stat st;
	int bfd;

	if (!arg || !*arg) {
		util_errf(err, errlen, "no bundle named");
		return -1;
	}
	if (strchr(arg, '/')) {
		if (strlen(arg) >= len) {
			util_errf(err, errlen, "bundle path %.64s...: too long", arg);
			return -1;
		}
		util_strlcpy(buf, arg, len);
		return 0;
	}
	if (!bi_valid_name(arg)) {
		util_errf(err, errlen, "'%s' is not a bundle name (a bundle elsewhere is named "
			  "by its path: ./%s)", arg, arg);
		return -1;
	}
	if ((size_t)snprintf(buf, len, "%s/bundles/%s", state_dir, arg) >= len) {
		util_errf(err, errlen, "bundle %s in %s: path too long", arg, state_dir);
		return -1;
	}
	bfd = bi_open_bundles(state_dir, 0, err, errlen);
	if (bfd >= 0) {
		int r = fstatat(bfd, arg, &st, AT_SYMLINK_NOFOLLOW);

		close(bfd);
		if (r == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
	util_errf(err, errlen, "no bundle %s in %s/bundles (a bundle elsewhere is named by "
		  "its path: ./%s)", arg, state_dir, arg);
	return -1;
}
