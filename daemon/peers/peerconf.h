/* peerconf: the configuration of peer daemons (nicstalld.conf(5) "[peer
 * NAME]") and the symmetric keys their notices are signed with.
 *
 * A key file holds keys the way chrony's and NTP's symmetric keys files do:
 * one key a line, "ID TYPE KEY", TYPE the hash (only SHA256 here: the key
 * signs with HMAC-SHA256), KEY the secret as HEX:hexdigits, ASCII:text or
 * bare text; '#' starts a comment. The file must be a regular file owned
 * by the daemon's user and readable by nobody else (no group or other
 * permission bits): a key anyone may read is no key, and the daemon
 * refuses to start with it. The parser (conf.c) calls the functions below;
 * each returns 0, or -1 with err (no "file:line:", conf.c adds it). */
#ifndef NICSTALL_PEERCONF_H
#define NICSTALL_PEERCONF_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PEER_MAX 64
#define PEER_KEY_MIN 16         /* bytes: 128 bits at least */
#define PEER_KEY_MAX 64
#define PEER_DEFAULT_PORT 7499

struct peer_key {
	uint32_t id;
	unsigned char k[PEER_KEY_MAX];
	size_t len;
};

struct peer_conf {
	char name[32];               /* [A-Za-z0-9_-], not a word of the rules language */
	char address[64];            /* numeric IPv4 or IPv6 */
	char host[64];               /* its host_name, the recipient our datagrams name
				      * ("" = name) */
	unsigned port;
	char key_file[PATH_MAX];
	long key_id;                 /* -1: the file's only key */
	struct peer_key key;         /* loaded when the section ends */
	unsigned line;
	int address_seen;            /* an address line, even a refused one */
};

struct conf;

/* [daemon] defaults of the peer keys. */
void peerconf_defaults(struct conf *c);
/* A [daemon] key of the peer set-up: 1 when key is not one (the caller
 * goes on), 0 when taken, -1 with err when its value is bad. */
int peerconf_daemon_key(struct conf *c, const char *key, const char *val, char *err,
			size_t errlen);
/* A new [peer NAME] section at line; NULL with err. */
struct peer_conf *peerconf_new(struct conf *c, const char *name, unsigned line, char *err,
			       size_t errlen);
/* A key of a [peer] section. */
int peerconf_key(struct peer_conf *pc, const char *key, const char *val, char *err,
		 size_t errlen);
/* The section is complete: check it against the others, load its key. */
int peerconf_finish(const struct conf *c, struct peer_conf *pc, char *err, size_t errlen);
/* Wipe and free the peers of c. */
void peerconf_free(struct conf *c);

/* Read key id (-1: the file's only key) from path. */
int peerkey_load(const char *path, long id, struct peer_key *out, char *err, size_t errlen);
/* Is name usable as a peer's name (and in rules as peer.NAME.x)? */
int peerconf_valid_name(const char *name);

#endif
