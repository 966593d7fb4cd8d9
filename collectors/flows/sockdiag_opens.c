/* sockdiag_opens: the TCP opens of a namespace. See sockdiag_opens.h. */
#include "collectors/flows/sockdiag_opens.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/netns.h"

/* path (under /proc/thread-self/net) opened inside namespace nsfd. */
static int open_in_ns(int nsfd, const char *path)
{
	int saved, fd, e;

	if (netns_enter(nsfd, &saved) < 0)
		return -(errno ? errno : EIO);
	/* thread-self: setns() moved this thread only */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	e = errno;
	if (netns_leave(saved) < 0) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return fd < 0 ? -e : fd;
}

int sd_opens_open(int nsfd)
{
	return open_in_ns(nsfd, "/proc/thread-self/net/snmp");
}

int sd_inuse_open(int nsfd, int v6)
{
	return open_in_ns(nsfd, v6 ? "/proc/thread-self/net/sockstat6" :
				     "/proc/thread-self/net/sockstat");
}

/* The next line of buf[*off..len): its start and length (no newline). */
static int next_line(const char *buf, size_t len, size_t *off, const char **line, size_t *ll)
{
	const char *nl;

	if (*off >= len)
		return 0;
	*line = buf + *off;
	nl = memchr(*line, '\n', len - *off);
	*ll = nl ? (size_t)(nl - *line) : len - *off;
	*off += *ll + (nl != NULL);
	return 1;
}

/* The word after i words of line[0..ll) (space separated): start, length. */
static int word(const char *line, size_t ll, unsigned i, const char **w, size_t *wl)
{
	size_t p = 0;

	for (;;) {
		while (p < ll && line[p] == ' ')
			p++;
		if (p >= ll)
			return 0;
		*w = line + p;
		while (p < ll && line[p] != ' ')
			p++;
		*wl = (size_t)(line + p - *w);
		if (!i--)
			return 1;
	}
}

static int word_u64(const char *w, size_t wl, uint64_t *v)
{
	uint64_t x = 0;

	if (!wl || wl > 20)
		return -1;
	for (size_t i = 0; i < wl; i++) {
		if (w[i] < '0' || w[i] > '9' || x > (UINT64_MAX - (uint64_t)(w[i] - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(w[i] - '0');
	}
	*v = x;
	return 0;
}

int sd_opens_parse(const char *buf, size_t len, uint64_t *opens)
{
	static const char *const want[2] = { "ActiveOpens", "PassiveOpens" };
	const char *names = NULL, *vals = NULL, *line, *w;
	size_t off = 0, nl = 0, vl = 0, ll, wl;
	uint64_t sum = 0;

	if (!buf || !opens)
		return -EBADMSG;
	while (next_line(buf, len, &off, &line, &ll)) {
		if (ll < 4 || memcmp(line, "Tcp:", 4))
			continue;
		if (!names) {
			names = line, nl = ll;
		} else {
			vals = line, vl = ll;
			break;
		}
	}
	if (!vals)
		return -EBADMSG;
	for (unsigned k = 0; k < 2; k++) {
		unsigned i;
		uint64_t v;

		for (i = 1; word(names, nl, i, &w, &wl); i++)
			if (wl == strlen(want[k]) && !memcmp(w, want[k], wl))
				break;
		if (!word(names, nl, i, &w, &wl) || !word(vals, vl, i, &w, &wl) ||
		    word_u64(w, wl, &v) < 0)
			return -EBADMSG;
		sum += v;
	}
	*opens = sum;
	return 0;
}

int sd_opens_read(int fd, uint64_t *opens)
{
	/* Tcp comes after Ip, Icmp and IcmpMsg; IcmpMsg has a column per
	 * ICMP type seen, 16 to a line, 512 at most (icmpmsg_put(),
	 * net/ipv4/proc.c): about 13 KiB before Tcp at the worst */
	char buf[16384];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return sd_opens_parse(buf, (size_t)n, opens);
}

int sd_inuse_parse(const char *buf, size_t len, int v6, uint64_t *inuse)
{
	const char *tag = v6 ? "TCP6:" : "TCP:", *line, *w;
	size_t off = 0, ll, wl, tl = strlen(tag);

	if (!buf || !inuse)
		return -EBADMSG;
	while (next_line(buf, len, &off, &line, &ll)) {
		if (ll <= tl || memcmp(line, tag, tl) || line[tl] != ' ')
			continue;
		/* "TCP: inuse N orphan ...", "TCP6: inuse N" */
		if (!word(line, ll, 1, &w, &wl) || wl != 5 || memcmp(w, "inuse", 5) ||
		    !word(line, ll, 2, &w, &wl) || word_u64(w, wl, inuse) < 0)
			return -EBADMSG;
		return 0;
	}
	return -EBADMSG;
}

int sd_inuse_read(int fd, int v6, uint64_t *inuse)
{
	char buf[1024];         /* sockstat: seven short lines */
	ssize_t n;

	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	return sd_inuse_parse(buf, (size_t)n, v6, inuse);
}
