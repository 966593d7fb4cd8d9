/* kmsg: promiscuity lines from /dev/kmsg, without waiting. */
#include "probes/kmsg.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_MAX 8192            /* the kernel's own per-reader buffer */
#define READS_MAX 4096          /* records read per call */

struct kmsg {
	int fd;
	uint64_t lost;
	char buf[REC_MAX];
};

struct kmsg *kmsg_open(char *err, size_t errlen)
{
	struct kmsg *k = calloc(1, sizeof(*k));

	if (!k) {
		util_errf(err, errlen, "/dev/kmsg: out of memory");
		return NULL;
	}
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd < 0) {
		util_errf(err, errlen, "/dev/kmsg: not readable: %s", strerror(errno));
		free(k);
		return NULL;
	}
	/* devkmsg_llseek(): SEEK_END puts the reader after the last record */
	if (lseek(k->fd, 0, SEEK_END) < 0) {
		util_errf(err, errlen, "/dev/kmsg: seek: %s", strerror(errno));
		close(k->fd);
		free(k);
		return NULL;
	}
	return k;
}

void kmsg_close(struct kmsg *k)
{
	if (!k)
		return;
	close(k->fd);
	free(k);
}

/* Does the text before ": entered/left promiscuous mode" end with ifname,
 * as a whole word (and name bus, when given and the line has one)? */
static int names_port(const char *text, size_t tlen, const char *ifname, const char *bus)
{
	size_t il = strlen(ifname);
	const char *name;

	if (!il || tlen < il)
		return 0;
	/* netdev_reg_state() may follow the name: " (unregistering)" */
	name = text + tlen - il;
	if (memcmp(name, ifname, il) || (name > text && name[-1] != ' '))
		return 0;
	if (bus && *bus && name > text) {
		/* "<driver> <bus> <ifname>": the bus is the word before */
		size_t bl = strlen(bus);

		if ((size_t)(name - text) < bl + 1 || memcmp(name - 1 - bl, bus, bl))
			return 0;
	}
	return 1;
}

/* A record's head "PRI,SEQ,TS_USEC,FLAG[,...];" and its text up to the
 * first '\n' (end: that '\n', NULL when none; tl: the text's length). */
static int parse_head(const char *rec, size_t len, unsigned long long *seq,
		      unsigned long long *ts, const char **text, const char **end, size_t *tl)
{
	unsigned long long pri;
	const char *semi = memchr(rec, ';', len);
	char head[128];
	size_t hl;

	if (!semi || (size_t)(semi - rec) >= sizeof(head))
		return -1;
	hl = (size_t)(semi - rec);
	memcpy(head, rec, hl);
	head[hl] = 0;
	if (sscanf(head, "%llu,%llu,%llu,", &pri, seq, ts) != 3)
		return -1;
	*text = semi + 1;
	*end = memchr(*text, '\n', len - (size_t)(*text - rec));
	*tl = *end ? (size_t)(*end - *text) : len - (size_t)(*text - rec);
	return 0;
}

int kmsg_parse_promisc(const char *rec, size_t len, const char *ifname, const char *bus,
		       struct kmsg_promisc *p)
{
	static const struct { const char *s; int entered; } what[] = {
		{ ": entered promiscuous mode", 1 }, { ": left promiscuous mode", 0 },
	};
	unsigned long long seq, ts;
	const char *text, *end;
	size_t tl;

	if (parse_head(rec, len, &seq, &ts, &text, &end, &tl) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		size_t wl = strlen(what[i].s);
		const char *at;
		size_t nl;

		if (tl < wl)
			continue;
		at = text + tl - wl;
		if (memcmp(at, what[i].s, wl))
			continue;
		nl = (size_t)(at - text);
		/* " (unregistering)" and the like after the name */
		while (nl && text[nl - 1] == ')') {
			const char *o = memrchr(text, '(', nl);

			if (!o || o == text || o[-1] != ' ')
				break;
			nl = (size_t)(o - 1 - text);
		}
		if (!names_port(text, nl, ifname, bus))
			return 0;
		memset(p, 0, sizeof(*p));
		p->entered = what[i].entered;
		p->seq = seq;
		p->ts_us = ts;
		snprintf(p->text, sizeof(p->text), "%.*s", (int)(tl < 199 ? tl : 199), text);
		for (char *c = p->text; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
				*c = '?';
		return 1;
	}
	return 0;
}

int kmsg_read_promisc(struct kmsg *k, const char *ifname, const char *bus,
		      struct kmsg_promisc *out, size_t max, size_t *n)
{
	int reads = 0;

	for (int i = 0; i < READS_MAX; i++) {
		ssize_t r = read(k->fd, k->buf, sizeof(k->buf) - 1);
		struct kmsg_promisc p;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return reads;
			if (errno == EPIPE) {
				/* overwritten before we read them; the reader
				 * has moved on to the oldest record left */
				k->lost++;
				continue;
			}
			return -errno;
		}
		if (r == 0)
			return reads;
		reads++;
		k->buf[r] = 0;
		if (kmsg_parse_promisc(k->buf, (size_t)r, ifname, bus, &p) == 1 && *n < max)
			out[(*n)++] = p;
	}
	return reads;
}

/* Does text name word as a whole word followed by ':' or, when sp, by
 * ':' or ' ' (a bus before an interface name)? */
static int names_word(const char *text, size_t tl, const char *word, int sp)
{
	size_t wl = word ? strlen(word) : 0;

	if (!wl)
		return 0;
	for (const char *p = text; p + wl < text + tl; p++) {
		p = memmem(p, (size_t)(text + tl - p), word, wl);
		if (!p || p + wl >= text + tl)
			return 0;
		if ((p == text || p[-1] == ' ') && (p[wl] == ':' || (sp && p[wl] == ' ')))
			return 1;
	}
	return 0;
}

int kmsg_parse_device(const char *rec, size_t len, const char *ifname, const char *bus,
		      struct kmsg_line *l)
{
	unsigned long long seq, ts;
	const char *text, *end, *dict;
	size_t tl;
	int hit;

	if (parse_head(rec, len, &seq, &ts, &text, &end, &tl) < 0)
		return -1;
	hit = names_word(text, tl, ifname, 0) || names_word(text, tl, bus, 1);
	/* the dictionary: " KEY=VALUE" lines after the text */
	for (dict = end; !hit && dict && dict + 1 < rec + len; dict = memchr(dict + 1, '\n',
			(size_t)(rec + len - dict - 1))) {
		char want[96];
		size_t wl;

		if (!bus || !*bus)
			break;
		wl = (size_t)snprintf(want, sizeof(want), "\n DEVICE=+pci:%s", bus);
		if (wl < sizeof(want) && (size_t)(rec + len - dict) >= wl &&
		    !memcmp(dict, want, wl) && (dict + wl == rec + len || dict[wl] == '\n'))
			hit = 1;
	}
	if (!hit)
		return 0;
	l->seq = seq;
	l->ts_us = ts;
	snprintf(l->text, sizeof(l->text), "%.*s", (int)(tl < KMSG_LINE_MAX - 1 ? tl :
							 KMSG_LINE_MAX - 1), text);
	for (char *c = l->text; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
			*c = '?';
	return 1;
}

int kmsg_device_lines(const char *ifname, const char *bus, struct kmsg_line *out, size_t max,
		      size_t *more, char *err, size_t errlen)
{
	static char buf[REC_MAX];
	size_t n;
	struct kmsg_keep k = { .out = out, .max = max };
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*more = 0;
	if (fd < 0) {
		util_errf(err, errlen, "/dev/kmsg: not readable: %s", strerror(errno));
		return -1;
	}
	/* the ring holds at most a few MiB: bounded, and never a wait */
	for (int i = 0; i < READS_MAX * 64; i++) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		struct kmsg_line l;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EPIPE)
			continue;       /* overwritten meanwhile: on to the oldest left */
		if (r <= 0)
			break;
		buf[r] = 0;
		if (kmsg_parse_device(buf, (size_t)r, ifname, bus, &l) != 1)
			continue;
		kmsg_keep_add(&k, &l);
	}
	close(fd);
	n = kmsg_keep_end(&k);
	*more = k.more;
	return (int)n;
}

void kmsg_keep_add(struct kmsg_keep *k, const struct kmsg_line *l)
{
	if (k->n < k->max) {
		k->out[k->n++] = *l;
		return;
	}
	k->more++;
	if (k->max <= KMSG_KEEP_FIRST)
		return;
	/* the first ones stay; the oldest of the tail gives way */
	if (k->head < KMSG_KEEP_FIRST)
		k->head = KMSG_KEEP_FIRST;
	k->out[k->head] = *l;
	k->head = k->head + 1 == k->max ? KMSG_KEEP_FIRST : k->head + 1;
}

static void reverse(struct kmsg_line *v, size_t a, size_t b)     /* [a, b) */
{
	while (a + 1 < b) {
		struct kmsg_line t = v[a];

		v[a++] = v[--b];
		v[b] = t;
	}
}

size_t kmsg_keep_end(struct kmsg_keep *k)
{
	/* the tail's oldest is at head: rotated to KMSG_KEEP_FIRST */
	if (k->more && k->max > KMSG_KEEP_FIRST && k->head > KMSG_KEEP_FIRST) {
		reverse(k->out, KMSG_KEEP_FIRST, k->head);
		reverse(k->out, k->head, k->max);
		reverse(k->out, KMSG_KEEP_FIRST, k->max);
	}
	k->head = 0;
	return k->n;
}
