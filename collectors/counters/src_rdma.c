/* src_rdma: RDMA port counters from sysfs (kept-open fds, pread at 0).
 * See src_rdma.h. */
#include "collectors/counters/src_rdma.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#define VAL_MAX_BYTES 32     /* "18446744073709551615\n" is 21 */
#define NAME_MAX_BYTES 128   /* a counter file name longer than this is skipped */

/* ---------------------------------------------------------------- sysfs */

struct rsys {
	char base[PATH_MAX];     /* .../infiniband/DEV/ports/N */
	char label[96];          /* "mlx5_0/1" for messages */
	int dirfd;               /* O_PATH of base, to notice removal */
	unsigned n;
	int *fds;
	uint64_t *vals;
	unsigned char *bad;      /* per counter: failing now (logged once) */
	struct clayout *lay;
	int gone;                /* the last read found the device gone */
};

/* Strict unsigned decimal with optional trailing whitespace (sysfs "%llu\n").
 * 0 or -EINVAL. */
static int parse_dec(const char *buf, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (n == 0 || buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		unsigned d = (unsigned)(buf[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	for (; i < n; i++)
		if (buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\t')
			return -EINVAL;
	*out = v;
	return 0;
}

/* Read one counter file. 0, or -errno (-EINVAL garbage, -EFBIG too long). */
static int read_val(int fd, uint64_t *v)
{
	char buf[VAL_MAX_BYTES];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);

	if (r < 0)
		return -errno;
	if ((size_t)r == sizeof(buf))
		return -EFBIG;
	return parse_dec(buf, (size_t)r, v);
}

static const char *val_strerror(int e)
{
	if (e == -EINVAL)
		return "not an unsigned decimal number";
	if (e == -EFBIG)
		return "value too long";
	if (e == -ERANGE)
		return "value exceeds 64 bits";
	return strerror(-e);
}

static void rsys_close_fds(struct rsys *p)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	free(p->fds);
	free(p->vals);
	free(p->bad);
	p->fds = NULL;
	p->vals = NULL;
	p->bad = NULL;
	p->n = 0;
	if (p->dirfd >= 0)
		close(p->dirfd);
	p->dirfd = -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct scan {
	unsigned n, cap;
	char **names;
	int *fds;
	uint64_t *vals;
};

static int scan_push(struct scan *sc, char *name, int fd, uint64_t v)
{
	if (sc->n == sc->cap) {
		unsigned cap = sc->cap ? sc->cap * 2 : 64;
		char **nn = realloc(sc->names, cap * sizeof(*nn));
		int *nf;
		uint64_t *nv;

		if (!nn)
			return -ENOMEM;
		sc->names = nn;
		nf = realloc(sc->fds, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		sc->fds = nf;
		nv = realloc(sc->vals, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		sc->vals = nv;
		sc->cap = cap;
	}
	sc->names[sc->n] = name;
	sc->fds[sc->n] = fd;
	sc->vals[sc->n] = v;
	sc->n++;
	return 0;
}

static void scan_free(struct scan *sc, int close_fds)
{
	for (unsigned i = 0; i < sc->n; i++) {
		free(sc->names[i]);
		if (close_fds)
			close(sc->fds[i]);
	}
	free(sc->names);
	free(sc->fds);
	free(sc->vals);
	memset(sc, 0, sizeof(*sc));
}

/* Open every readable counter file of base/sub, sorted by name. Returns the
 * number added, 0 when the directory is absent, or -errno. */
static int scan_dir(struct rsys *p, const char *sub, struct scan *sc)
{
	char *names[SRC_RDMA_MAXC];
	unsigned nn = 0, skipped = 0;
	struct dirent *de;
	int dfd, added = 0, rc = 0;
	DIR *d;

	dfd = openat(p->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return (errno == ENOENT || errno == ENOTDIR) ? 0 : -errno;
	d = fdopendir(dfd);
	if (!d) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (strlen(de->d_name) > NAME_MAX_BYTES || nn == SRC_RDMA_MAXC) {
			skipped++;
			continue;
		}
		names[nn] = strdup(de->d_name);
		if (!names[nn]) {
			rc = -ENOMEM;
			goto out;
		}
		nn++;
	}
	if (skipped)
		log_warnx("rdma %s: %s/%s: %u entries skipped (name too long or more than %u)",
			  p->label, p->base, sub, skipped, SRC_RDMA_MAXC);
	qsort(names, nn, sizeof(names[0]), cmp_str);
	for (unsigned i = 0; i < nn; i++) {
		struct stat st;
		uint64_t v;
		char *full;
		int fd, e;

		fd = openat(dirfd(d), names[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			log_debug("rdma %s: %s/%s/%s: open: %s; left out",
				  p->label, p->base, sub, names[i], strerror(errno));
			continue;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		e = read_val(fd, &v);
		if (e < 0) {
			log_debug("rdma %s: %s/%s/%s: %s; left out", p->label,
				  p->base, sub, names[i], val_strerror(e));
			close(fd);
			continue;
		}
		if (asprintf(&full, "%s/%s", sub, names[i]) < 0) {
			close(fd);
			rc = -ENOMEM;
			goto out;
		}
		if (scan_push(sc, full, fd, v) < 0) {
			free(full);
			close(fd);
			rc = -ENOMEM;
			goto out;
		}
		added++;
	}
	rc = added;
out:
	for (unsigned i = 0; i < nn; i++)
		free(names[i]);
	closedir(d);
	return rc;
}

/* (Re)open the port directory and every counter file; build or keep the
 * layout. 0 or -errno with err filled. */
static int rsys_scan(struct rsys *p, char *err, size_t errlen)
{
	struct scan sc = { 0 };
	struct clayout *lay;
	uint8_t *w;
	int rc;

	rsys_close_fds(p);
	p->dirfd = open(p->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0) {
		rc = -errno;
		util_errf(err, errlen, "rdma %s: %s: %s", p->label, p->base,
			  strerror(-rc));
		return rc == -ENOENT ? -ENODEV : rc;
	}
	rc = scan_dir(p, "hw_counters", &sc);
	if (rc >= 0)
		rc = scan_dir(p, "counters", &sc);
	if (rc < 0) {
		util_errf(err, errlen, "rdma %s: %s: scanning counters: %s",
			  p->label, p->base, strerror(-rc));
		scan_free(&sc, 1);
		return rc;
	}
	if (sc.n == 0) {
		util_errf(err, errlen, "rdma %s: %s: no readable hw_counters/ or counters/ files",
			  p->label, p->base);
		scan_free(&sc, 1);
		return -ENOENT;
	}
	w = malloc(sc.n);
	p->bad = calloc(sc.n, 1);
	if (!w || !p->bad) {
		free(w);
		scan_free(&sc, 1);
		util_errf(err, errlen, "rdma %s: out of memory", p->label);
		return -ENOMEM;
	}
	memset(w, CNT_W32, sc.n);
	lay = clayout_new(sc.n, (const char *const *)sc.names, w);
	free(w);
	if (!lay) {
		scan_free(&sc, 1);
		util_errf(err, errlen, "rdma %s: out of memory", p->label);
		return -ENOMEM;
	}
	if (p->lay && clayout_equal(p->lay, lay)) {
		clayout_unref(lay);
	} else {
		clayout_unref(p->lay);
		p->lay = lay;
	}
	p->n = sc.n;
	p->fds = sc.fds;
	p->vals = sc.vals;
	sc.fds = NULL;
	sc.vals = NULL;
	scan_free(&sc, 0);
	p->gone = 0;
	return 0;
}

static int rsys_open(struct src *s, const struct src_ctx *ctx)
{
	const char *root = ctx->sysfs_root ? ctx->sysfs_root : "";
	struct rsys *p;
	int rc;

	s->err[0] = '\0';
	if (!ctx->rdma_dev || !util_valid_name(ctx->rdma_dev, 63) || ctx->rdma_port < 1 ||
	    ctx->rdma_port > 65535) {
		util_errf(s->err, sizeof(s->err), "rdma %s: bad RDMA device/port \"%s\"/%u",
			  ctx->port_name ? ctx->port_name : "?",
			  ctx->rdma_dev ? ctx->rdma_dev : "(none)", ctx->rdma_port);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		util_errf(s->err, sizeof(s->err), "rdma %s/%u: out of memory",
			  ctx->rdma_dev, ctx->rdma_port);
		return -ENOMEM;
	}
	p->dirfd = -1;
	util_errf(p->label, sizeof(p->label), "%s/%u", ctx->rdma_dev, ctx->rdma_port);
	if ((size_t)snprintf(p->base, sizeof(p->base), "%s/sys/class/infiniband/%s/ports/%u",
			     root, ctx->rdma_dev, ctx->rdma_port) >= sizeof(p->base)) {
		util_errf(s->err, sizeof(s->err), "rdma %s: sysfs root too long", p->label);
		free(p);
		return -ENAMETOOLONG;
	}
	rc = rsys_scan(p, s->err, sizeof(s->err));
	if (rc < 0) {
		rsys_close_fds(p);
		clayout_unref(p->lay);
		free(p);
		return rc;
	}
	s->priv = p;
	return 0;
}

/* Was the port directory removed under us (fixture trees; sysfs itself
 * answers ENODEV on read)? */
static int rsys_dir_gone(const struct rsys *p)
{
	struct stat st;

	if (p->dirfd < 0)
		return 1;
	return fstat(p->dirfd, &st) < 0 || st.st_nlink == 0;
}

/* One pass over the fds. 0, 1 when the device is gone, or -errno when
 * every file failed. */
static int rsys_pass(struct src *s, struct rsys *p)
{
	unsigned nfail = 0, first = 0;
	int first_e = 0;

	for (unsigned i = 0; i < p->n; i++) {
		uint64_t v;
		int e = read_val(p->fds[i], &v);

		if (e == -ENODEV || e == -ENOENT)
			return 1;
		if (e < 0) {
			if (!nfail) {
				first = i;
				first_e = e;
			}
			nfail++;
			if (!p->bad[i])
				log_warnx("rdma %s: %s/%s: %s; keeping the previous value",
					  p->label, p->base, p->lay->names[i],
					  val_strerror(e));
			p->bad[i] = 1;
			continue;
		}
		if (p->bad[i]) {
			log_info("rdma %s: %s/%s: readable again", p->label,
				 p->base, p->lay->names[i]);
			p->bad[i] = 0;
		}
		p->vals[i] = v;
	}
	if (nfail)
		util_errf(s->err, sizeof(s->err), "rdma %s: %s/%s: %s (%u of %u counters unreadable, previous values kept)",
			  p->label, p->base, p->lay->names[first],
			  val_strerror(first_e), nfail, p->n);
	if (nfail && nfail == p->n)
		return first_e == -EINVAL || first_e == -EFBIG || first_e == -ERANGE ?
		       -EIO : first_e;
	return 0;
}

static int rsys_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct rsys *p = s->priv;
	int rc;

	s->err[0] = '\0';
	if (!p)
		return -EBADF;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (p->gone || p->n == 0 || rsys_dir_gone(p)) {
			char e2[sizeof(s->err)];

			rc = rsys_scan(p, e2, sizeof(e2));
			if (rc < 0) {
				if (!p->gone)
					log_warnx("rdma %s: device gone, rescanning on every read", p->label);
				p->gone = 1;
				util_errf(s->err, sizeof(s->err), "rdma %s: device gone: %s",
					  p->label, e2);
				return -ENODEV;
			}
			log_info("rdma %s: %s: counters reopened (%u)", p->label,
				 p->base, p->n);
		}
		rc = rsys_pass(s, p);
		if (rc == 1) {
			p->gone = 1;
			continue;
		}
		if (rc < 0)
			return rc;
		*lay = p->lay;
		*vals = p->vals;
		return 0;
	}
	util_errf(s->err, sizeof(s->err), "rdma %s: %s: device gone while reading",
		  p->label, p->base);
	return -ENODEV;
}

static void rsys_close(struct src *s)
{
	struct rsys *p = s->priv;

	if (!p)
		return;
	rsys_close_fds(p);
	clayout_unref(p->lay);
	free(p);
	s->priv = NULL;
}

const struct src_ops src_rdma_ops = {
	.name = "rdma",
	.open = rsys_open,
	.read = rsys_read,
	.close = rsys_close,
};
