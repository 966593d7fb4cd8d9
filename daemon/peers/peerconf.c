/* peerconf: [peer NAME] sections, the [daemon] peer keys, key files. */
#include "daemon/peers/peerconf.h"
#include "daemon/conf.h"
#include "daemon/peers/peerproto.h"
#include "lib/fsutil.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEYFILE_MAX (64 * 1024)

void peerconf_defaults(struct conf *c)
{
	util_strlcpy(c->peer_listen, "0.0.0.0", sizeof(c->peer_listen));
	c->peer_listen_port = PEER_DEFAULT_PORT;
	c->peer_wait_ns = 1000000000ull;
	/* long enough to see a work counter stand still over several
	 * firmware updates, short enough that the peer's bundle exists well
	 * within 100 ms of the notice */
	c->peer_window_ns = 40000000ull;
	c->peer_skew_ns = 5000000000ull;
	/* a receiver snapshots once per incident of each origin; as many as
	 * this host's own incidents_per_hour by default, across all peers */
	c->peer_snapshots_per_hour = 30;
	/* peer snapshots keep a pool of their own beside bundle_max_count /
	 * bundle_max_bytes: they never evict this host's own bundles */
	c->peer_bundle_max_count = 20;
	c->peer_bundle_max_bytes = 256ull << 20;
}

static int valid_addr(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET, s, &a) == 1 || inet_pton(AF_INET6, s, &a) == 1;
}

/* "ADDR", "ADDR:PORT", "[V6]:PORT" */
static int parse_listen(const char *val, char *addr, size_t alen, unsigned *port, char *err,
			size_t errlen)
{
	char buf[96], *colon, *a = buf;
	uint64_t v;
	char e[128];

	if (strlen(val) >= sizeof(buf)) {
		util_errf(err, errlen, "peer_listen: '%s' is too long", val);
		return -1;
	}
	util_strlcpy(buf, val, sizeof(buf));
	colon = NULL;
	if (buf[0] == '[') {
		char *rb = strchr(buf, ']');

		if (!rb || (rb[1] && rb[1] != ':')) {
			util_errf(err, errlen, "peer_listen: '%s': write [IPV6]:PORT", val);
			return -1;
		}
		*rb = 0;
		a = buf + 1;
		colon = rb[1] ? rb + 1 : NULL;
	} else if (strchr(buf, ':') == strrchr(buf, ':')) {
		colon = strchr(buf, ':');       /* one colon: IPv4:PORT */
	}
	if (colon) {
		*colon = 0;
		if (util_parse_u64(colon + 1, &v, 1, 65535, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_listen: port: %s", e);
			return -1;
		}
		*port = (unsigned)v;
	}
	if (!valid_addr(a)) {
		util_errf(err, errlen, "peer_listen: '%s' is not an IPv4 or IPv6 address", a);
		return -1;
	}
	util_strlcpy(addr, a, alen);
	return 0;
}

int peerconf_daemon_key(struct conf *c, const char *key, const char *val, char *err,
			size_t errlen)
{
	char e[256];
	uint64_t v;

	if (!strcmp(key, "host_name")) {
		if (!util_valid_name(val, sizeof(c->host_name) - 1)) {
			util_errf(err, errlen, "host_name: '%s' must be 1-63 characters of "
				  "[A-Za-z0-9_.-]", val);
			return -1;
		}
		util_strlcpy(c->host_name, val, sizeof(c->host_name));
	} else if (!strcmp(key, "peer_listen")) {
		return parse_listen(val, c->peer_listen, sizeof(c->peer_listen),
				    &c->peer_listen_port, err, errlen);
	} else if (!strcmp(key, "peer_netns")) {
		if (*val && val[0] != '/' && !util_valid_name(val, 255)) {
			util_errf(err, errlen, "peer_netns: '%s' is neither a namespace name nor "
				  "an absolute path", val);
			return -1;
		}
		if (strlen(val) >= sizeof(c->peer_netns)) {
			util_errf(err, errlen, "peer_netns: too long");
			return -1;
		}
		util_strlcpy(c->peer_netns, val, sizeof(c->peer_netns));
	} else if (!strcmp(key, "peer_wait")) {
		if (util_parse_duration(val, &c->peer_wait_ns, 10000000ull, 60000000000ull,
					e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_wait: %s", e);
			return -1;
		}
	} else if (!strcmp(key, "peer_window")) {
		if (util_parse_duration(val, &c->peer_window_ns, 5000000ull, 1000000000ull,
					e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_window: %s", e);
			return -1;
		}
	} else if (!strcmp(key, "peer_snapshots_per_hour")) {
		if (util_parse_u64(val, &v, 1, PEER_HOURLY_MAX, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_snapshots_per_hour: %s", e);
			return -1;
		}
		c->peer_snapshots_per_hour = (unsigned)v;
	} else if (!strcmp(key, "peer_bundle_max_count")) {
		if (util_parse_u64(val, &v, 1, 100000, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_bundle_max_count: %s", e);
			return -1;
		}
		c->peer_bundle_max_count = (unsigned)v;
	} else if (!strcmp(key, "peer_bundle_max_bytes")) {
		if (util_parse_size(val, &c->peer_bundle_max_bytes, 1u << 20, 1ull << 40, e,
				    sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_bundle_max_bytes: %s", e);
			return -1;
		}
	} else if (!strcmp(key, "peer_max_skew")) {
		if (util_parse_duration(val, &c->peer_skew_ns, 100000000ull, 300000000000ull,
					e, sizeof(e)) < 0) {
			util_errf(err, errlen, "peer_max_skew: %s", e);
			return -1;
		}
	} else {
		return 1;
	}
	return 0;
}

int peerconf_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 31 || !isalpha((unsigned char)name[0]))
		return 0;
	for (const char *s = name; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return rules_peer_name_ok(name);
}

struct peer_conf *peerconf_new(struct conf *c, const char *name, unsigned line, char *err,
			       size_t errlen)
{
	struct peer_conf *np;

	if (!peerconf_valid_name(name)) {
		util_errf(err, errlen, "peer name '%s' must be 1-31 characters of [A-Za-z0-9_] "
			  "starting with a letter, and not a word of the rules language "
			  "(name, host, answered, stall, window, ...)", name);
		return NULL;
	}
	for (unsigned i = 0; i < c->npeers; i++)
		if (!strcmp(c->peers[i].name, name)) {
			util_errf(err, errlen, "peer '%s' is already defined at line %u", name,
				  c->peers[i].line);
			return NULL;
		}
	if (c->npeers >= PEER_MAX) {
		util_errf(err, errlen, "too many peers (at most %d)", PEER_MAX);
		return NULL;
	}
	np = realloc(c->peers, (c->npeers + 1) * sizeof(*np));
	if (!np) {
		util_errf(err, errlen, "out of memory");
		return NULL;
	}
	c->peers = np;
	np = &c->peers[c->npeers++];
	memset(np, 0, sizeof(*np));
	util_strlcpy(np->name, name, sizeof(np->name));
	np->port = PEER_DEFAULT_PORT;
	np->key_id = -1;
	np->line = line;
	return np;
}

int peerconf_key(struct peer_conf *pc, const char *key, const char *val, char *err,
		 size_t errlen)
{
	char e[256];
	uint64_t v;

	if (!strcmp(key, "address")) {
		pc->address_seen = 1;
		if (!valid_addr(val) || strlen(val) >= sizeof(pc->address)) {
			util_errf(err, errlen, "address: '%s' is not an IPv4 or IPv6 address", val);
			return -1;
		}
		util_strlcpy(pc->address, val, sizeof(pc->address));
	} else if (!strcmp(key, "port")) {
		if (util_parse_u64(val, &v, 1, 65535, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "port: %s", e);
			return -1;
		}
		pc->port = (unsigned)v;
	} else if (!strcmp(key, "key_file")) {
		if (val[0] != '/' || strlen(val) >= sizeof(pc->key_file)) {
			util_errf(err, errlen, "key_file: '%s' is not an absolute path", val);
			return -1;
		}
		util_strlcpy(pc->key_file, val, sizeof(pc->key_file));
	} else if (!strcmp(key, "host")) {
		if (!util_valid_name(val, sizeof(pc->host) - 1)) {
			util_errf(err, errlen, "host: '%s' must be 1-63 characters of [A-Za-z0-9_.-] "
				  "(the peer's host_name)", val);
			return -1;
		}
		util_strlcpy(pc->host, val, sizeof(pc->host));
	} else if (!strcmp(key, "key_id")) {
		if (util_parse_u64(val, &v, 1, 4294967295ull, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "key_id: %s", e);
			return -1;
		}
		pc->key_id = (long)v;
	} else {
		util_errf(err, errlen, "unknown key '%s' in [peer %s]", key, pc->name);
		return -1;
	}
	return 0;
}

int peerconf_finish(const struct conf *c, struct peer_conf *pc, char *err, size_t errlen)
{
	char e[PATH_MAX + 128];

	/* a refused address line was reported at its own line: go on to the key */
	if (!pc->address[0] && !pc->address_seen) {
		util_errf(err, errlen, "peer '%s' has no address (set address = IP)", pc->name);
		return -1;
	}
	if (!pc->key_file[0]) {
		util_errf(err, errlen, "peer '%s' has no key_file: notices are always signed",
			  pc->name);
		return -1;
	}
	for (unsigned i = 0; pc->address[0] && i < c->npeers && &c->peers[i] != pc; i++)
		if (!strcmp(c->peers[i].address, pc->address) && c->peers[i].port == pc->port) {
			util_errf(err, errlen, "peer '%s': %s port %u is already peer '%s'",
				  pc->name, pc->address, pc->port, c->peers[i].name);
			return -1;
		}
	if (peerkey_load(pc->key_file, pc->key_id, &pc->key, e, sizeof(e)) < 0) {
		util_errf(err, errlen, "peer '%s': %s", pc->name, e);
		return -1;
	}
	return 0;
}

void peerconf_free(struct conf *c)
{
	if (c->peers)
		explicit_bzero(c->peers, c->npeers * sizeof(*c->peers));
	free(c->peers);
	c->peers = NULL;
	c->npeers = 0;
}

/* ---- key files ---- */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The secret of one line's KEY field. */
static int parse_secret(const char *s, struct peer_key *k, char *err, size_t errlen)
{
	size_t n;

	if (!strncasecmp(s, "HEX:", 4)) {
		s += 4;
		n = strlen(s);
		if (n % 2) {
			util_errf(err, errlen, "HEX key with an odd number of digits");
			return -1;
		}
		if (n / 2 > PEER_KEY_MAX) {
			util_errf(err, errlen, "key longer than %d bytes", PEER_KEY_MAX);
			return -1;
		}
		for (size_t i = 0; i < n; i += 2) {
			int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);

			if (hi < 0 || lo < 0) {
				util_errf(err, errlen, "HEX key with a character that is not a hex digit");
				return -1;
			}
			k->k[i / 2] = (unsigned char)(hi << 4 | lo);
		}
		k->len = n / 2;
	} else {
		if (!strncasecmp(s, "ASCII:", 6))
			s += 6;
		n = strlen(s);
		if (n > PEER_KEY_MAX) {
			util_errf(err, errlen, "key longer than %d bytes", PEER_KEY_MAX);
			return -1;
		}
		memcpy(k->k, s, n);
		k->len = n;
	}
	if (k->len < PEER_KEY_MIN) {
		util_errf(err, errlen, "key of %zu bytes: at least %d are needed (e.g. "
			  "chronyc keygen ID SHA256 256)", k->len, PEER_KEY_MIN);
		return -1;
	}
	return 0;
}

/* Parse the text of a key file; the key id (or the only key) into out. */
static int parse_keys(const char *path, char *text, long id, struct peer_key *out, char *err,
		      size_t errlen)
{
	char *line, *next;
	unsigned lineno = 0, nkeys = 0, found = 0;
	struct peer_key k;

	for (line = text; line; line = next) {
		char *f[4], *hash, *fs = NULL;
		unsigned nf = 0;
		uint64_t kid;
		char e[128];

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		if ((hash = strchr(line, '#')))
			*hash = 0;
		while (nf < 4 && (f[nf] = strtok_r(nf ? NULL : line, " \t\r", &fs)))
			nf++;
		if (!nf)
			continue;
		if (nf > 3 || nf < 2) {
			util_errf(err, errlen, "%s:%u: expected 'ID TYPE KEY' (or 'ID KEY')", path,
				  lineno);
			return -1;
		}
		if (util_parse_u64(f[0], &kid, 1, 4294967295ull, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "%s:%u: key id: %s", path, lineno, e);
			return -1;
		}
		if (nf == 3 && strcasecmp(f[1], "SHA256")) {
			util_errf(err, errlen, "%s:%u: key %s has type %s: only SHA256 (HMAC-SHA256) "
				  "is used", path, lineno, f[0], f[1]);
			return -1;
		}
		if (nf == 2) {
			/* chrony's and NTP's keys files default to MD5: say so
			 * rather than read the key as a SHA256 one */
			util_errf(err, errlen, "%s:%u: key %s has no type: write 'ID SHA256 KEY'",
				  path, lineno, f[0]);
			return -1;
		}
		memset(&k, 0, sizeof(k));
		k.id = (uint32_t)kid;
		if (parse_secret(f[nf - 1], &k, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "%s:%u: key %s: %s", path, lineno, f[0], e);
			explicit_bzero(&k, sizeof(k));
			return -1;
		}
		nkeys++;
		if (id < 0 || (uint64_t)id == kid) {
			if (id >= 0 && found) {
				util_errf(err, errlen, "%s:%u: key %s is defined twice", path, lineno, f[0]);
				explicit_bzero(&k, sizeof(k));
				return -1;
			}
			*out = k;
			found++;
		}
		explicit_bzero(&k, sizeof(k));
	}
	if (id < 0 && nkeys > 1) {
		explicit_bzero(out, sizeof(*out));
		util_errf(err, errlen, "%s holds %u keys: say which with key_id", path, nkeys);
		return -1;
	}
	if (!found) {
		if (id >= 0)
			util_errf(err, errlen, "%s has no key %ld", path, id);
		else
			util_errf(err, errlen, "%s holds no key", path);
		return -1;
	}
	return 0;
}

int peerkey_load(const char *path, long id, struct peer_key *out, char *err, size_t errlen)
{
	char dir[PATH_MAX], *slash, *text = NULL;
	const char *base;
	struct stat st;
	size_t len = 0;
	int dfd, fd, rc;

	memset(out, 0, sizeof(*out));
	util_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash || !slash[1]) {
		util_errf(err, errlen, "key_file %s: not a file path", path);
		return -1;
	}
	base = path + (slash - dir) + 1;
	*(slash == dir ? slash + 1 : slash) = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		util_errf(err, errlen, "key_file %s: %s", path, strerror(errno));
		return -1;
	}
	fd = fsu_open_beneath(dfd, base, O_RDONLY | O_NONBLOCK, 0);
	close(dfd);
	if (fd < 0) {
		util_errf(err, errlen, "key_file %s: %s", path, fsu_strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		util_errf(err, errlen, "key_file %s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		util_errf(err, errlen, "key_file %s: owned by uid %u, not by the daemon's user "
			  "(uid %u) or root: refused", path, (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		util_errf(err, errlen, "key_file %s: mode %04o lets %s%s%s read or change it: "
			  "refused (chmod 600 %s)", path, (unsigned)(st.st_mode & 07777),
			  st.st_mode & 070 ? "its group" : "", (st.st_mode & 070) && (st.st_mode & 07) ?
			  " and " : "", st.st_mode & 07 ? "everyone" : "", path);
		close(fd);
		return -1;
	}
	if (st.st_size > KEYFILE_MAX) {
		util_errf(err, errlen, "key_file %s: larger than %d bytes", path, KEYFILE_MAX);
		close(fd);
		return -1;
	}
	text = calloc(1, (size_t)st.st_size + 1);
	if (!text) {
		util_errf(err, errlen, "key_file %s: out of memory", path);
		close(fd);
		return -1;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (memchr(text, 0, len)) {
		util_errf(err, errlen, "key_file %s: a NUL byte in the file", path);
		rc = -1;
	} else {
		rc = parse_keys(path, text, id, out, err, errlen);
	}
	explicit_bzero(text, len);
	free(text);
	return rc;
}
