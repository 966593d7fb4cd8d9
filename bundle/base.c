/* bundle base: what list.c, manifest.c, verify.c and write.c share
 * (bundle_int.h), so that none of them calls another in a circle: the
 * names a bundle and its files may have, the bundles directory, and
 * SHA-256's last step. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/fsutil.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

/* ---- names ---- */

int bi_name_char(char c)
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
		if (!bi_name_char(s[i]))
			return 0;
	return 1;
}

int bi_valid_relpath(const char *p)
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

int bi_valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n <= BUNDLE_NAME_MAX && valid_comp(s, n);
}

/* ---- the bundles directory ---- */

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

/* ---- sha256 ---- */

int bi_sha256_final(EVP_MD_CTX *ctx, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != 32)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * n] = '\0';
	return 0;
}
