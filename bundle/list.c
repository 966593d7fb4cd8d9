/* bundle list: the "<state_dir>/bundles" directory, its bundles oldest
 * first (names sort in time order), and retention (nicstall-bundle(5)
 * "RETENTION"). Only real directories with valid bundle names count: a
 * symbolic link or a ".tmp-*" in the directory is never listed, sized
 * through or removed as a bundle. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/fsutil.h"
#include "lib/json.h"
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

/* ---- retention: which pool a bundle belongs to ----
 *
 * By its name first: the daemon names a peer snapshot
 * "...-peer-snapshot[-N]" (bundle_name with the verdict BUNDLE_VERDICT_PEER,
 * "-N" when the second was taken). Every other name is this host's, read
 * no further. A bundle named like a snapshot is moved back to this host's
 * pool only when its manifest says another trigger (a verdict of this
 * host's that merely ends that way); when its manifest cannot tell
 * (unreadable, not JSON, no trigger where the daemon writes it), the
 * bundle counts in neither pool and is never removed on that pass: in
 * doubt, keep the evidence and count nothing of the other pool's.
 *
 * The manifest is read only as far as CLASSIFY_PEEK bytes: the daemon
 * writes "trigger" as its first member and, for a snapshot, "peer" (the
 * peer whose notice made it) as its second (daemon/forensic/bundler.c manifest()),
 * so a pass costs a few KiB per snapshot however large its manifest. */
#define CLASSIFY_PEEK 4096

static int named_peer_snapshot(const char *name)
{
	static const char suffix[] = "-" BUNDLE_VERDICT_PEER;
	const char *at = strstr(name, suffix), *next;

	if (!at)
		return 0;
	while ((next = strstr(at + 1, suffix)))
		at = next;
	at += sizeof(suffix) - 1;
	if (*at == '-' && at[1] && strspn(at + 1, "0123456789") == strlen(at + 1))
		at += strlen(at);
	return !*at;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* One JSON value at *p (json-c parses it); NULL when the prefix ends
 * inside it (*cut set) or it is not JSON. */
static struct json_object *one_value(const char **p, const char *end, int *cut)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *v;

	if (!tok)
		return NULL;
	v = json_tokener_parse_ex(tok, *p, (int)(end - *p));
	if (v)
		*p += json_tokener_get_parse_end(tok);
	else
		*cut = json_tokener_get_error(tok) == json_tokener_continue;
	json_tokener_free(tok);
	return v;
}

/* The top-level members "trigger" and "peer" of the first CLASSIFY_PEEK
 * bytes of dfd's manifest, json-c parsing every key and value (only the
 * object's own braces, colons and commas are walked here). 0 with
 * *trigger and *peer (NULL when not among the members read; *whole when
 * the object ended within the prefix), or -1 with why. */
static int manifest_peek(int dfd, struct json_object **trigger, struct json_object **peer,
			 int *whole, char *why, size_t whylen)
{
	char buf[CLASSIFY_PEEK + 1];
	const char *p = buf, *end;
	struct stat st;
	size_t n = 0;
	int fd = fsu_open_beneath(dfd, MANIFEST_NAME, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0), cut = 0;

	*trigger = *peer = NULL;
	*whole = 0;
	if (fd < 0 || fstat(fd, &st) < 0) {
		util_errf(why, whylen, MANIFEST_NAME ": %s", fsu_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		util_errf(why, whylen, MANIFEST_NAME ": not a regular file");
		close(fd);
		return -1;
	}
	while (n < CLASSIFY_PEEK) {
		ssize_t r = read(fd, buf + n, CLASSIFY_PEEK - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			util_errf(why, whylen, MANIFEST_NAME ": read: %s", strerror(errno));
			close(fd);
			return -1;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	end = buf + n;
	p = skip_ws(p, end);
	if (p == end || *p++ != '{')
		goto bad;
	for (int first = 1;; first = 0) {
		struct json_object *k, *v;

		p = skip_ws(p, end);
		if (p < end && *p == '}' && first) {
			*whole = 1;
			return 0;
		}
		if (!(k = one_value(&p, end, &cut)))
			break;
		if (!json_object_is_type(k, json_type_string)) {
			json_object_put(k);
			goto bad;
		}
		p = skip_ws(p, end);
		if (p == end || *p != ':') {
			cut = p == end;
			json_object_put(k);
			break;
		}
		p = skip_ws(p + 1, end);
		v = one_value(&p, end, &cut);
		if (v && !strcmp(json_object_get_string(k), MK_TRIGGER) && !*trigger)
			*trigger = json_object_get(v);
		else if (v && !strcmp(json_object_get_string(k), MK_PEER) && !*peer)
			*peer = json_object_get(v);
		json_object_put(k);
		json_object_put(v);
		if (!v)
			break;
		if (*trigger && (*peer || !json_object_is_type(*trigger, json_type_string) ||
				 strcmp(json_object_get_string(*trigger), BUNDLE_VERDICT_PEER)))
			return 0;       /* all this pass needs */
		p = skip_ws(p, end);
		if (p < end && *p == '}') {
			*whole = 1;
			return 0;
		}
		if (p == end || *p != ',') {
			cut = p == end;
			break;
		}
		p++;
	}
	if (cut)
		return 0;               /* the prefix ended: what it held */
bad:
	json_object_put(*trigger);
	json_object_put(*peer);
	*trigger = *peer = NULL;
	util_errf(why, whylen, MANIFEST_NAME ": not a JSON object at byte %td", p - buf);
	return -1;
}

enum pool_of { OF_OWN, OF_PEER, OF_DOUBT };

/* The pool of bundle name; for a snapshot, the peer whose notice made it
 * in origin ("" when its manifest does not say within the bytes read). */
static enum pool_of classify(int bfd, const char *name, char *origin, size_t olen, char *why,
			     size_t whylen)
{
	struct json_object *trigger, *peer;
	enum pool_of of;
	int dfd, whole;

	origin[0] = 0;
	if (!named_peer_snapshot(name))
		return OF_OWN;
	dfd = fsu_open_dir_at(bfd, name);
	if (dfd < 0) {
		util_errf(why, whylen, "%s", strerror(errno));
		return OF_DOUBT;
	}
	if (manifest_peek(dfd, &trigger, &peer, &whole, why, whylen) < 0) {
		close(dfd);
		return OF_DOUBT;
	}
	close(dfd);
	if (trigger) {
		of = json_object_is_type(trigger, json_type_string) &&
		     !strcmp(json_object_get_string(trigger), BUNDLE_VERDICT_PEER) ? OF_PEER : OF_OWN;
	} else if (whole) {
		of = OF_OWN;            /* the manifest names no trigger: not a snapshot */
	} else {
		util_errf(why, whylen, MANIFEST_NAME ": no \"trigger\" in its first %d bytes",
			  CLASSIFY_PEEK);
		of = OF_DOUBT;
	}
	if (of == OF_PEER && jx_str(peer, MK_PE_ORIGIN_PEER))
		util_strlcpy(origin, jx_str(peer, MK_PE_ORIGIN_PEER), olen);
	json_object_put(trigger);
	json_object_put(peer);
	return of;
}

struct pooled {
	char *name;
	char origin[64];        /* the peer pool: whose notice made it */
	uint64_t bytes;
	int group;              /* index of the first bundle of its origin */
	unsigned held;          /* that first one: its origin's bundles left, */
	uint64_t held_bytes;    /* and their bytes */
	int gone;
};

/* The next bundle to remove from the peer pool of n (its origins' first
 * bundles at heads), never its newest
 * (the last): the oldest snapshot of the peer holding the most (bundles
 * when the pool is over its count, bytes when over its bytes only), so
 * one peer's notices cycle out its own snapshots before any other peer's;
 * a tie goes to the peer whose oldest is older. -1: none. */
static int peer_victim(struct pooled *b, const int *heads, int nheads, int n, int by_count)
{
	int best = -1;

	for (int h = 0; h < nheads; h++) {
		int g = heads[h];

		if (!b[g].held)
			continue;
		if (best < 0 || (by_count ? b[g].held > b[best].held :
				 b[g].held_bytes > b[best].held_bytes)) {
			/* a group whose only bundle left is the newest has nothing to give */
			int has = 0;

			for (int i = g; i < n - 1 && !has; i++)
				has = b[i].group == g && !b[i].gone;
			if (has)
				best = g;
		}
	}
	if (best < 0)
		return -1;
	for (int i = best; i < n - 1; i++)
		if (b[i].group == best && !b[i].gone)
			return i;
	return -1;
}

int bundle_retention(const char *state_dir, enum bundle_pool pool, unsigned max_count,
		     uint64_t max_bytes)
{
	char **names, why[256], first_doubt[512] = "";
	struct pooled *b;
	uint64_t total = 0;
	int bfd, n, removed = 0, count = 0, doubt = 0, nheads = 0, *heads;
	const char *what = pool == BUNDLE_POOL_PEER ? "peer snapshots" : "this host's bundles";

	n = open_scan(state_dir, "bundle retention", &bfd, &names);
	if (n <= 0)
		return close_scan(bfd, names, 0, n);
	b = calloc((size_t)n + 1, sizeof(*b));
	heads = calloc((size_t)n + 1, sizeof(*heads));
	if (!b || !heads) {
		free(b);
		free(heads);
		return close_scan(bfd, names, n, -1);
	}
	/* only the pool's own bundles count, and only they are removed: a
	 * peer's snapshot never evicts this host's evidence, nor the reverse;
	 * a bundle of neither for sure is neither counted nor removed */
	for (int i = 0; i < n; i++) {
		char origin[64];
		enum pool_of of = classify(bfd, names[i], origin, sizeof(origin), why, sizeof(why));

		if (of == OF_DOUBT && !doubt++)
			snprintf(first_doubt, sizeof(first_doubt), "%s: %s", names[i], why);
		if (of != (pool == BUNDLE_POOL_PEER ? OF_PEER : OF_OWN))
			continue;
		b[count].name = names[i];
		util_strlcpy(b[count].origin, origin, sizeof(b[count].origin));
		b[count].bytes = bundle_bytes(bfd, names[i]);
		b[count].group = count;
		for (int h = 0; h < nheads; h++)
			if (!strcmp(b[heads[h]].origin, origin)) {
				b[count].group = heads[h];
				break;
			}
		if (b[count].group == count)
			heads[nheads++] = count;
		b[b[count].group].held++;
		b[b[count].group].held_bytes += b[count].bytes;
		total += b[count].bytes;
		count++;
	}
	if (doubt)
		log_warnx("bundle retention: %d bundle%s in %s/bundles named as peer snapshots "
			  "whose manifest does not say (%s%s): counted in neither pool and kept",
			  doubt, doubt == 1 ? "" : "s", state_dir, first_doubt,
			  doubt > 1 ? ", and others" : "");
	for (int left = count; left > 1;) {
		int over_count = max_count && (unsigned)left > max_count;
		int v = -1, r;

		if (!over_count && !(max_bytes && total > max_bytes))
			break;
		if (pool == BUNDLE_POOL_PEER) {
			v = peer_victim(b, heads, nheads, count, over_count);
		} else {
			for (int i = 0; i < count - 1 && v < 0; i++)
				if (!b[i].gone)
					v = i;  /* oldest first, never the newest */
		}
		if (v < 0)
			break;
		b[v].gone = 1;
		b[b[v].group].held--;
		b[b[v].group].held_bytes -= b[v].bytes;
		r = fsu_rm_tree_at(bfd, b[v].name);
		if (r < 0) {
			log_warnx("bundle retention: %s/bundles/%s: remove: %s", state_dir, b[v].name,
				  strerror(-r));
			continue;
		}
		log_info("bundle retention: removed %s/bundles/%s%s%s (%" PRIu64 " bytes; there "
			 "were %d %s, %" PRIu64 " bytes; their limits: %u bundles, %" PRIu64 " bytes, "
			 "0 = none)", state_dir, b[v].name, pool == BUNDLE_POOL_PEER ?
			 ", a snapshot for peer " : "", pool == BUNDLE_POOL_PEER ?
			 (b[v].origin[0] ? b[v].origin : "(not named)") : "", b[v].bytes, left, what,
			 total, max_count, max_bytes);
		left--;
		total -= b[v].bytes;
		removed++;
	}
	if (removed)
		fsync(bfd);
	free(b);
	free(heads);
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
