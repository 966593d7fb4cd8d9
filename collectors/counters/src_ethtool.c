/* src_ethtool: `ethtool -S` counters through SIOCETHTOOL.
 *
 * Per read: ETHTOOL_GSSET_INFO (count) and ETHTOOL_GSTATS (values), no
 * allocation; ETHTOOL_GSTRINGS and a new layout only when the count changes.
 *
 * The kernel writes as many strings/values as the driver has *now*, not as
 * many as we asked for, so a count that grows between two ioctls would
 * overrun a heap buffer. The ioctl buffers are therefore mappings whose data
 * ends at a PROT_NONE guard page: an overrun makes the ioctl fail with
 * EFAULT (and we re-read the count) instead of corrupting memory. */
#include "collectors/counters/src_ethtool.h"
#include "lib/nl.h"
#include "lib/util.h"
#include "lib/netns.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/sockios.h>

#define ETH_TRIES 3

/* An ioctl buffer whose last byte sits right before a guard page. */
struct gbuf {
	void *base;
	size_t maplen;
	size_t size;
	void *p;
};

struct eth {
	int fd;
	char ifname[IFNAMSIZ];
	char where[200];         /* "ethtool stats of IF in NS" */
	unsigned n;              /* count behind lay */
	struct clayout *lay;
	struct gbuf strings;     /* struct ethtool_gstrings + n * 32 */
	struct gbuf stats;       /* struct ethtool_stats + n * 8 */
};

static void gbuf_free(struct gbuf *g)
{
	if (g->base)
		munmap(g->base, g->maplen);
	memset(g, 0, sizeof(*g));
}

/* size must be a multiple of 8. 0 or -errno. */
static int gbuf_get(struct gbuf *g, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body;
	void *base;

	if (g->base && g->size == size)
		return 0;
	body = (size + page - 1) / page * page;
	if (!body)
		body = page;
	base = mmap(NULL, body + page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mprotect((char *)base + body, page, PROT_NONE) < 0) {
		int e = errno;

		munmap(base, body + page);
		return -e;
	}
	gbuf_free(g);
	g->base = base;
	g->maplen = body + page;
	g->size = size;
	g->p = (char *)base + body - size;
	return 0;
}

static int eth_ioctl(struct eth *e, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, e->ifname, sizeof(e->ifname));
	ifr.ifr_data = data;
	return ioctl(e->fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static const char *errno_hint(int e)
{
	switch (e) {
	case ENODEV:
		return " (interface gone)";
	case EOPNOTSUPP:
		return " (driver has no statistics)";
	default:
		return "";
	}
}

static int eth_fail(struct src *s, struct eth *e, const char *op, int rc)
{
	util_errf(s->err, sizeof(s->err), "%s: %s: %s%s", e->where, op,
		  strerror(-rc), errno_hint(-rc));
	return rc;
}

/* Number of ETH_SS_STATS strings now. >0, or -errno with s->err. */
static int eth_count(struct src *s, struct eth *e, unsigned *n)
{
	union {
		struct ethtool_sset_info h;
		uint8_t raw[sizeof(struct ethtool_sset_info) + sizeof(uint32_t) * 2];
	} ss;
	struct ethtool_drvinfo di;
	uint32_t cnt;
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.h.cmd = ETHTOOL_GSSET_INFO;
	ss.h.sset_mask = 1ull << ETH_SS_STATS;
	rc = eth_ioctl(e, &ss);
	if (rc == 0) {
		if (!(ss.h.sset_mask & (1ull << ETH_SS_STATS)))
			return eth_fail(s, e, "ETHTOOL_GSSET_INFO", -EOPNOTSUPP);
		memcpy(&cnt, ss.raw + sizeof(ss.h), sizeof(cnt));
	} else if (rc == -EOPNOTSUPP) {
		/* Kernels before 2.6.34: the count is in the driver info. */
		memset(&di, 0, sizeof(di));
		di.cmd = ETHTOOL_GDRVINFO;
		rc = eth_ioctl(e, &di);
		if (rc < 0)
			return eth_fail(s, e, "ETHTOOL_GDRVINFO", rc);
		cnt = di.n_stats;
	} else {
		return eth_fail(s, e, "ETHTOOL_GSSET_INFO", rc);
	}
	if (cnt == 0)
		return eth_fail(s, e, "ETHTOOL_GSSET_INFO", -EOPNOTSUPP);
	if (cnt > SRC_ETHTOOL_MAX_STATS) {
		util_errf(s->err, sizeof(s->err), "%s: driver reports %u counters, more than %u",
			  e->where, cnt, SRC_ETHTOOL_MAX_STATS);
		return -E2BIG;
	}
	*n = cnt;
	return 0;
}

/* Read the names of n counters and make the layout. 0, -EAGAIN when the
 * count changed under us, or -errno with s->err. */
static int eth_layout(struct src *s, struct eth *e, unsigned n)
{
	struct ethtool_gstrings *gs;
	struct clayout *lay;
	const char **names;
	char *text;
	int rc;

	rc = gbuf_get(&e->strings,
		      (sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN + 7) & ~(size_t)7);
	if (rc < 0)
		return eth_fail(s, e, "string buffer", rc);
	gs = e->strings.p;
	memset(gs, 0, e->strings.size);
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	rc = eth_ioctl(e, gs);
	if (rc == -EFAULT)
		return -EAGAIN;         /* more strings than asked for */
	if (rc < 0)
		return eth_fail(s, e, "ETHTOOL_GSTRINGS", rc);
	if (gs->len != n)
		return -EAGAIN;

	names = malloc((size_t)n * sizeof(*names));
	text = malloc((size_t)n * (ETH_GSTRING_LEN + 1));
	if (!names || !text) {
		free(names);
		free(text);
		return eth_fail(s, e, "names", -ENOMEM);
	}
	for (unsigned i = 0; i < n; i++) {
		/* ETH_GSTRING_LEN bytes, NUL-terminated only when shorter:
		 * `ethtool -S` prints them with "%.*s". */
		char *t = text + (size_t)i * (ETH_GSTRING_LEN + 1);
		const char *src = (const char *)gs->data + (size_t)i * ETH_GSTRING_LEN;
		size_t len = strnlen(src, ETH_GSTRING_LEN);

		memcpy(t, src, len);
		t[len] = '\0';
		names[i] = t;
	}
	lay = clayout_new(n, names, NULL);
	free(names);
	free(text);
	if (!lay)
		return eth_fail(s, e, "layout", -ENOMEM);
	rc = gbuf_get(&e->stats, sizeof(struct ethtool_stats) + (size_t)n * 8);
	if (rc < 0) {
		clayout_unref(lay);
		return eth_fail(s, e, "stats buffer", rc);
	}
	if (e->lay && clayout_equal(e->lay, lay)) {
		clayout_unref(lay);     /* same names: keep the old pointer */
	} else {
		clayout_unref(e->lay);
		e->lay = lay;
	}
	e->n = n;
	return 0;
}

static int eth_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct eth *e = s->priv;
	struct ethtool_stats *st;
	unsigned n;
	int rc;

	if (!e) {
		util_errf(s->err, sizeof(s->err), "ethtool stats: source not open");
		return -EBADF;
	}
	for (int tries = 0; tries < ETH_TRIES; tries++) {
		rc = eth_count(s, e, &n);
		if (rc < 0)
			return rc;
		if (!e->lay || n != e->n) {
			rc = eth_layout(s, e, n);
			if (rc == -EAGAIN)
				continue;
			if (rc < 0)
				return rc;
		}
		st = e->stats.p;
		st->cmd = ETHTOOL_GSTATS;
		st->n_stats = e->n;
		rc = eth_ioctl(e, st);
		if (rc == -EFAULT || (rc == 0 && st->n_stats != e->n)) {
			e->n = 0;       /* count changed: names again */
			continue;
		}
		if (rc < 0)
			return eth_fail(s, e, "ETHTOOL_GSTATS", rc);
		*lay = e->lay;
		*vals = (const uint64_t *)st->data;
		return 0;
	}
	util_errf(s->err, sizeof(s->err),
		  "%s: counter set kept changing during %d reads", e->where, ETH_TRIES);
	return -EAGAIN;
}

static void eth_free(struct eth *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	gbuf_free(&e->strings);
	gbuf_free(&e->stats);
	clayout_unref(e->lay);
	free(e);
}

static int eth_open(struct src *s, const struct src_ctx *ctx)
{
	char nsd[128];
	struct eth *e;
	unsigned n;
	int rc;

	s->err[0] = '\0';
	s->priv = NULL;
	if (!ctx || (!ctx->ifindex && (!ctx->ifname || !*ctx->ifname)) ||
	    (ctx->ifname && strlen(ctx->ifname) >= IFNAMSIZ)) {
		util_errf(s->err, sizeof(s->err), "ethtool stats: bad interface name %s",
			  ctx && ctx->ifname ? ctx->ifname : "(none)");
		return -EINVAL;
	}
	nl_ns_desc(ctx->netns_fd, nsd, sizeof(nsd));
	e = calloc(1, sizeof(*e));
	if (!e) {
		util_errf(s->err, sizeof(s->err), "ethtool stats of %s in %s: %s",
			  ctx->ifname ? ctx->ifname : "?", nsd, strerror(ENOMEM));
		return -ENOMEM;
	}
	e->fd = netns_socket(ctx->netns_fd, AF_INET, SOCK_DGRAM, 0);
	if (e->fd < 0 && errno == EAFNOSUPPORT)   /* no IPv4: as ethtool does */
		e->fd = netns_socket(ctx->netns_fd, AF_NETLINK, SOCK_RAW,
				     NETLINK_GENERIC);
	if (e->fd < 0) {
		rc = -errno;
		util_errf(s->err, sizeof(s->err), "ethtool stats of %s in %s: socket: %s",
			  ctx->ifname ? ctx->ifname : "?", nsd, strerror(-rc));
		eth_free(e);
		return rc;
	}
	if (ctx->ifname && *ctx->ifname) {
		snprintf(e->ifname, sizeof(e->ifname), "%s", ctx->ifname);
	} else {
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		ifr.ifr_ifindex = ctx->ifindex;
		if (ioctl(e->fd, SIOCGIFNAME, &ifr) < 0) {
			rc = -errno;
			util_errf(s->err, sizeof(s->err),
				  "ethtool stats of ifindex %d in %s: %s", ctx->ifindex,
				  nsd, strerror(-rc));
			eth_free(e);
			return rc;
		}
		memcpy(e->ifname, ifr.ifr_name, sizeof(e->ifname));
		e->ifname[sizeof(e->ifname) - 1] = '\0';
	}
	util_errf(e->where, sizeof(e->where), "ethtool stats of %s in %s", e->ifname,
		  nsd);
	/* Is it there, and does the driver have statistics at all? */
	rc = eth_count(s, e, &n);
	if (rc < 0) {
		eth_free(e);
		return rc;
	}
	s->ops = &src_ethtool_ops;
	s->priv = e;
	return 0;
}

static void eth_close(struct src *s)
{
	eth_free(s->priv);
	s->priv = NULL;
}

const struct src_ops src_ethtool_ops = {
	.name = "ethtool",
	.open = eth_open,
	.read = eth_read,
	.close = eth_close,
};
