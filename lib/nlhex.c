/* nlhex: recorded netlink replies as text (see nlhex.h). */
#include "lib/nlhex.h"
#include "lib/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

/* err may be NULL: write into a scratch buffer then. */
#define ERRBUF(err, errlen, scratch) \
	do { if (!(err) || !(errlen)) { (err) = (scratch); (errlen) = sizeof(scratch); } } while (0)

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int nlhex_load(const char *path, uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	size_t tlen = 0, o = 0;
	unsigned line = 1;
	char scratch[8], *text;
	uint8_t *out;
	int hi = -1, fe = 0;

	ERRBUF(err, errlen, scratch);
	*buf = NULL;
	*len = 0;
	/* the one safe read path: a FIFO cannot block, a symbolic link as
	 * the last component is refused (the directory is configured; its
	 * files are replaced by rename, never by a link) */
	text = fsu_read_file(path, NLHEX_TEXT_MAX_BYTES, &tlen, &fe);
	if (!text) {
		snprintf(err, errlen, "%s: %s", path, fsu_strerror(fe));
		return -fe;
	}
	out = malloc(tlen / 2 + 1);
	if (!out) {
		free(text);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; i < tlen; i++) {
		int c = (unsigned char)text[i], v;

		if (c == '#') {
			while (i < tlen && text[i] != '\n')
				i++;
			line++;
			continue;
		}
		if (c == '\n')
			line++;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		v = hexval(c);
		if (v < 0) {
			snprintf(err, errlen, "%s:%u: not a hex digit: '%c'", path, line,
				 c >= 0x20 && c < 0x7f ? c : '?');
			goto bad;
		}
		if (hi < 0) {
			hi = v;
		} else {
			out[o++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		snprintf(err, errlen, "%s: odd number of hex digits", path);
		goto bad;
	}
	if (o > NLHEX_MAX) {
		snprintf(err, errlen, "%s: more than %u bytes", path, NLHEX_MAX);
		goto bad;
	}
	free(text);
	*buf = out;
	*len = o;
	return 0;
bad:
	free(text);
	free(out);
	return -EINVAL;
}

int nlhex_write(const char *path, const char *comment, const void *buf, size_t len,
		char *err, size_t errlen)
{
	const uint8_t *p = buf;
	char dir[4096], scratch[8], *text = NULL;
	const char *base = strrchr(path, '/');
	size_t off = 0, tlen = 0;
	unsigned k = 0;
	FILE *fp;
	int e, dfd;

	ERRBUF(err, errlen, scratch);
	if ((size_t)snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - path + (base == path)) : 1,
			     base ? path : ".") >= sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	base = base ? base + 1 : path;
	fp = open_memstream(&text, &tlen);
	if (!fp) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (comment) {
		for (const char *c = comment; *c;) {
			size_t n = strcspn(c, "\n");

			fprintf(fp, "# %.*s\n", (int)n, c);
			c += n + (c[n] == '\n');
		}
	}
	while (off < len) {
		const struct nlmsghdr *nlh = (const void *)(p + off);
		size_t n = len - off;

		if (n >= NLMSG_HDRLEN && nlh->nlmsg_len >= NLMSG_HDRLEN &&
		    nlh->nlmsg_len <= n) {
			const struct genlmsghdr *g = (const void *)(p + off + NLMSG_HDRLEN);

			n = NLMSG_ALIGN((size_t)nlh->nlmsg_len) <= n ?
			    NLMSG_ALIGN((size_t)nlh->nlmsg_len) : n;
			fprintf(fp, "# message %u: type %u flags 0x%x seq %u, %u bytes", ++k,
				nlh->nlmsg_type, nlh->nlmsg_flags, nlh->nlmsg_seq,
				nlh->nlmsg_len);
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE &&
			    nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
				fprintf(fp, ", genl cmd %u", g->cmd);
			fputc('\n', fp);
		} else {
			fprintf(fp, "# %zu bytes that are not a message\n", n);
		}
		for (size_t i = 0; i < n; i++)
			fprintf(fp, "%02x%s", p[off + i],
				(i + 1) % 16 == 0 || i + 1 == n ? "\n" : (i + 1) % 4 == 0 ? " " : "");
		off += n;
	}
	if (fclose(fp) || !text) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* fsu_replace_at: a fresh O_EXCL|O_NOFOLLOW temporary beneath the
	 * directory's fd, fsync'd, renamed over the name; a name planted
	 * there, a symbolic link above all, is removed, never written through */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsu_replace_at(dfd, base, text, tlen, 0644) < 0) {
		e = errno;
		if (dfd >= 0)
			close(dfd);
		free(text);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	close(dfd);
	free(text);
	return 0;
}
