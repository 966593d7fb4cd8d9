/* nlhex: recorded netlink replies as text, the replay format of every
 * source that answers from recordings instead of the kernel (devlink
 * health, RDMA queue pairs). A file is "#" comment lines and each
 * message's bytes in hex after a comment naming it (its type, flags and,
 * for generic netlink, its command); tests/fixtures/devlink/README.md
 * shows one. Written atomically (a fresh temporary renamed over it). */
#ifndef NICSTALL_NLHEX_H
#define NICSTALL_NLHEX_H

#include <stddef.h>
#include <stdint.h>

#define NLHEX_MAX (4u << 20)                    /* bytes decoded from one file */
#define NLHEX_TEXT_MAX_BYTES (12u << 20)        /* its text */

/* Read path: *buf (malloc'd) holds its messages' bytes, *len of them (at
 * most NLHEX_MAX). 0 or -errno with err naming the file and the line. */
int nlhex_load(const char *path, uint8_t **buf, size_t *len, char *err, size_t errlen);
/* Write buf's len bytes of netlink messages to path, comment first, each
 * message after a comment naming it. 0 or -errno with err. */
int nlhex_write(const char *path, const char *comment, const void *buf, size_t len,
		char *err, size_t errlen);

#endif
