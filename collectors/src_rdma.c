/* src_rdma: RDMA port counters from sysfs (kept-open fds, pread at 0) and
 * from RDMA netlink (RDMA_NLDEV_CMD_STAT_GET). See src_rdma.h. */
#include "collectors/src_rdma.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "lib/log.h"
#include "lib/netns.h"

#define VAL_MAX_BYTES 32     /* "18446744073709551615\n" is 21 */
#define NAME_MAX_BYTES 128   /* a counter file name longer than this is skipped */

/* snprintf for messages: truncation is fine, and vsnprintf keeps
 * -Wformat-truncation from flagging every long path. */
__attribute__((format(printf, 3, 4)))
static void errf(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!dst || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

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

static int valid_component(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") &&
	       strlen(s) < 64;
}

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
		errf(err, errlen, "rdma %s: %s: %s", p->label, p->base,
			 strerror(-rc));
		return rc == -ENOENT ? -ENODEV : rc;
	}
	rc = scan_dir(p, "hw_counters", &sc);
	if (rc >= 0)
		rc = scan_dir(p, "counters", &sc);
	if (rc < 0) {
		errf(err, errlen, "rdma %s: %s: scanning counters: %s",
			 p->label, p->base, strerror(-rc));
		scan_free(&sc, 1);
		return rc;
	}
	if (sc.n == 0) {
		errf(err, errlen, "rdma %s: %s: no readable hw_counters/ or counters/ files",
			 p->label, p->base);
		scan_free(&sc, 1);
		return -ENOENT;
	}
	w = malloc(sc.n);
	p->bad = calloc(sc.n, 1);
	if (!w || !p->bad) {
		free(w);
		scan_free(&sc, 1);
		errf(err, errlen, "rdma %s: out of memory", p->label);
		return -ENOMEM;
	}
	memset(w, CNT_W32, sc.n);
	lay = clayout_new(sc.n, (const char *const *)sc.names, w);
	free(w);
	if (!lay) {
		scan_free(&sc, 1);
		errf(err, errlen, "rdma %s: out of memory", p->label);
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
	if (!valid_component(ctx->rdma_dev) || ctx->rdma_port < 1 ||
	    ctx->rdma_port > 65535) {
		errf(s->err, sizeof(s->err), "rdma %s: bad RDMA device/port \"%s\"/%u",
			 ctx->port_name ? ctx->port_name : "?",
			 ctx->rdma_dev ? ctx->rdma_dev : "(none)", ctx->rdma_port);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errf(s->err, sizeof(s->err), "rdma %s/%u: out of memory",
			 ctx->rdma_dev, ctx->rdma_port);
		return -ENOMEM;
	}
	p->dirfd = -1;
	errf(p->label, sizeof(p->label), "%s/%u", ctx->rdma_dev, ctx->rdma_port);
	if ((size_t)snprintf(p->base, sizeof(p->base), "%s/sys/class/infiniband/%s/ports/%u",
			     root, ctx->rdma_dev, ctx->rdma_port) >= sizeof(p->base)) {
		errf(s->err, sizeof(s->err), "rdma %s: sysfs root too long", p->label);
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
		errf(s->err, sizeof(s->err), "rdma %s: %s/%s: %s (%u of %u counters unreadable, previous values kept)",
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
				errf(s->err, sizeof(s->err), "rdma %s: device gone: %s",
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
	errf(s->err, sizeof(s->err), "rdma %s: %s: device gone while reading",
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

/* -------------------------------------------------------------- netlink */

#define NLBUF_SIZE (64u * 1024u)

/* Attribute types we read, and their expected kinds. */
static int rdma_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t t = mnl_attr_get_type(a);
	enum mnl_attr_data_type k;

	switch (t) {
	case RDMA_NLDEV_ATTR_DEV_INDEX:
	case RDMA_NLDEV_ATTR_PORT_INDEX:
		k = MNL_TYPE_U32;
		break;
	case RDMA_NLDEV_ATTR_DEV_NAME:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
		k = MNL_TYPE_NUL_STRING;
		break;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
		k = MNL_TYPE_U64;
		break;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY:
		k = MNL_TYPE_NESTED;
		break;
	default:
		return MNL_CB_OK;     /* unknown or unused: skip */
	}
	if (mnl_attr_validate(a, k) < 0)
		return MNL_CB_ERROR;
	tb[t] = a;
	return MNL_CB_OK;
}

#define RDMA_TB_SIZE (RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE + 1)

/* Check a netlink message before any libmnl call looks at it: nlmsg_len
 * compared as unsigned with the buffer. mnl_nlmsg_ok() takes an int and
 * casts nlmsg_len to int, so lengths of 0x80000001 and up would pass it. */
const struct nlmsghdr *src_rdma_nl_msg_check(const void *buf, size_t len, char *err,
					     size_t errlen)
{
	const struct nlmsghdr *nlh = buf;

	if (!buf || len < sizeof(*nlh) || len > SRC_RDMA_NL_MAX_MSG) {
		errf(err, errlen, "rdma netlink: truncated or oversized message (%zu bytes)", len);
		return NULL;
	}
	if (nlh->nlmsg_len < sizeof(*nlh) || (size_t)nlh->nlmsg_len > len) {
		errf(err, errlen, "rdma netlink: truncated message: nlmsg_len %u outside [%zu, %zu]",
		     nlh->nlmsg_len, sizeof(*nlh), len);
		return NULL;
	}
	if (!mnl_nlmsg_ok(nlh, (int)len)) {
		errf(err, errlen, "rdma netlink: truncated message (%zu bytes)", len);
		return NULL;
	}
	return nlh;
}

#define msg_check src_rdma_nl_msg_check

size_t src_rdma_nl_build_stat_get(void *buf, size_t len, uint32_t seq,
				  uint32_t dev_index, uint32_t port)
{
	struct nlmsghdr *nlh;

	if (len < MNL_NLMSG_HDRLEN + 2 * MNL_ALIGN(sizeof(struct nlattr) + 4))
		return 0;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	return nlh->nlmsg_len;
}

int src_rdma_nl_parse_stat(const void *buf, size_t len,
			   struct src_rdma_nl_stat *st, char *err, size_t errlen)
{
	const struct nlattr *tb[RDMA_TB_SIZE] = { 0 };
	const struct nlmsghdr *nlh = msg_check(buf, len, err, errlen);
	const struct nlattr *e;

	st->n = 0;
	st->dev_index = 0;
	st->port = 0;
	if (!nlh)
		return -EINVAL;
	if (mnl_attr_parse(nlh, 0, rdma_attr_cb, tb) != MNL_CB_OK) {
		errf(err, errlen, "rdma netlink STAT_GET reply: malformed attribute: %s",
			 strerror(errno));
		return -EINVAL;
	}
	if (tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		st->dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		st->port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (!tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) {
		errf(err, errlen, "rdma netlink STAT_GET reply: no hw counters (RDMA_NLDEV_ATTR_STAT_HWCOUNTERS missing)");
		return -EINVAL;
	}
	mnl_attr_for_each_nested(e, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) {
		const struct nlattr *etb[RDMA_TB_SIZE] = { 0 };
		const char *name;

		if (mnl_attr_get_type(e) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
			continue;
		if (mnl_attr_parse_nested(e, rdma_attr_cb, etb) != MNL_CB_OK) {
			errf(err, errlen, "rdma netlink STAT_GET reply: entry %u: malformed attribute: %s",
				 st->n, strerror(errno));
			return -EINVAL;
		}
		if (!etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] ||
		    !etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]) {
			errf(err, errlen, "rdma netlink STAT_GET reply: entry %u lacks %s",
				 st->n, etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] ?
				 "a value" : "a name");
			return -EINVAL;
		}
		name = mnl_attr_get_str(etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]);
		if (!*name || strlen(name) >= SRC_RDMA_NAMELEN || strchr(name, '/')) {
			errf(err, errlen, "rdma netlink STAT_GET reply: entry %u: bad counter name (%zu bytes)",
				 st->n, strlen(name));
			return -EINVAL;
		}
		if (st->n == SRC_RDMA_MAXC) {
			errf(err, errlen, "rdma netlink STAT_GET reply: more than %u counters",
				 SRC_RDMA_MAXC);
			return -E2BIG;
		}
		memcpy(st->name[st->n], name, strlen(name) + 1);
		st->val[st->n] = mnl_attr_get_u64(etb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]);
		st->n++;
	}
	return 0;
}

int src_rdma_nl_parse_dev(const void *buf, size_t len, uint32_t *dev_index,
			  char *name, size_t namelen, char *err, size_t errlen)
{
	const struct nlattr *tb[RDMA_TB_SIZE] = { 0 };
	const struct nlmsghdr *nlh = msg_check(buf, len, err, errlen);
	const char *s;

	if (!nlh)
		return -EINVAL;
	if (mnl_attr_parse(nlh, 0, rdma_attr_cb, tb) != MNL_CB_OK) {
		errf(err, errlen, "rdma netlink GET reply: malformed attribute: %s",
			 strerror(errno));
		return -EINVAL;
	}
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME]) {
		errf(err, errlen, "rdma netlink GET reply: device index or name missing");
		return -EINVAL;
	}
	s = mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (strlen(s) >= namelen) {
		errf(err, errlen, "rdma netlink GET reply: device name too long (%zu bytes)",
			 strlen(s));
		return -EINVAL;
	}
	*dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	memcpy(name, s, strlen(s) + 1);
	return 0;
}

struct rnl {
	struct mnl_socket *nl;
	unsigned portid;
	uint32_t seq;
	uint32_t dev_index;
	unsigned port;
	char label[96];
	char *buf;                        /* NLBUF_SIZE */
	struct src_rdma_nl_stat *st;
	uint64_t *vals;
	unsigned nvals;
	struct clayout *lay;
	/* per request */
	const char *want_dev;
	int found;
	int cb_rc;
	char cb_err[200];
	char ext[160];
};

/* NLMSG_ERROR: ack (stop) or error with the extack text kept. */
static int rnl_err_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rnl *r = data;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	unsigned off;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP;
	r->ext[0] = '\0';
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len > sizeof(struct nlmsghdr) ?
			       MNL_ALIGN(e->msg.nlmsg_len - sizeof(struct nlmsghdr)) : 0;
		if (mnl_nlmsg_size(off) <= nlh->nlmsg_len)
			mnl_attr_for_each(a, nlh, off)
				if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
				    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
					errf(r->ext, sizeof(r->ext), "%s",
						 mnl_attr_get_str(a));
	}
	errno = e->error < 0 && e->error > -4096 ? -e->error : EPROTO;
	return MNL_CB_ERROR;
}

static int rnl_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

/* Send req, run cb on the replies until ack / NLMSG_DONE. 0 or -errno with
 * r->ext possibly holding the kernel's message. */
static int rnl_talk(struct rnl *r, struct nlmsghdr *req, mnl_cb_t cb)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = rnl_noop_cb,
		[NLMSG_ERROR] = rnl_err_cb,
	};
	ssize_t n;
	int ret;

	r->ext[0] = '\0';
	r->cb_rc = 0;
	r->cb_err[0] = '\0';
	/* Drop what an earlier exchange left (a late reply after a timeout, the
	 * ack after a reply we refused): it would fail the sequence check. */
	while (recv(mnl_socket_get_fd(r->nl), r->buf, NLBUF_SIZE, MSG_DONTWAIT) > 0)
		;
	if (mnl_socket_sendto(r->nl, req, req->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(r->nl, r->buf, NLBUF_SIZE);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		ret = mnl_cb_run2(r->buf, (size_t)n, req->nlmsg_seq, r->portid,
				  cb, r, ctl, NLMSG_MIN_TYPE);
	} while (ret > 0);
	if (ret < 0)
		return r->cb_rc ? r->cb_rc : -errno;
	return r->cb_rc;
}

static int rnl_dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rnl *r = data;
	char name[64], e[128];
	uint32_t idx;

	if (src_rdma_nl_parse_dev(nlh, nlh->nlmsg_len, &idx, name, sizeof(name),
				  e, sizeof(e)) < 0) {
		log_debug("rdma-nl %s: %s (entry skipped)", r->label, e);
		return MNL_CB_OK;
	}
	if (!strcmp(name, r->want_dev)) {
		r->dev_index = idx;
		r->found = 1;
	}
	return MNL_CB_OK;
}

static int rnl_stat_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rnl *r = data;
	int rc = src_rdma_nl_parse_stat(nlh, nlh->nlmsg_len, r->st, r->cb_err,
					sizeof(r->cb_err));

	if (rc < 0) {
		r->cb_rc = rc;
		errno = -rc;
		return MNL_CB_ERROR;
	}
	r->found = 1;
	return MNL_CB_OK;
}

static void rnl_free(struct rnl *r)
{
	if (!r)
		return;
	if (r->nl)
		mnl_socket_close(r->nl);
	clayout_unref(r->lay);
	free(r->buf);
	free(r->st);
	free(r->vals);
	free(r);
}

static void rnl_fmt_err(struct src *s, const struct rnl *r, const char *what, int rc)
{
	errf(s->err, sizeof(s->err), "rdma-nl %s: %s: %s%s%s", r->label, what,
		 r->cb_err[0] ? r->cb_err : strerror(-rc), r->ext[0] ? ": " : "",
		 r->ext);
}

static int rnl_open(struct src *s, const struct src_ctx *ctx)
{
	struct rnl *r;
	struct nlmsghdr *nlh;
	struct timeval tv = { .tv_sec = 2 };
	char req[MNL_NLMSG_HDRLEN];
	int one = 1, fd, rc;

	s->err[0] = '\0';
	if (!valid_component(ctx->rdma_dev) || ctx->rdma_port < 1) {
		errf(s->err, sizeof(s->err), "rdma-nl %s: bad RDMA device/port \"%s\"/%u",
			 ctx->port_name ? ctx->port_name : "?",
			 ctx->rdma_dev ? ctx->rdma_dev : "(none)", ctx->rdma_port);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->buf = malloc(NLBUF_SIZE)) || !(r->st = malloc(sizeof(*r->st)))) {
		rnl_free(r);
		errf(s->err, sizeof(s->err), "rdma-nl %s/%u: out of memory",
			 ctx->rdma_dev, ctx->rdma_port);
		return -ENOMEM;
	}
	errf(r->label, sizeof(r->label), "%s/%u", ctx->rdma_dev, ctx->rdma_port);
	r->port = ctx->rdma_port;
	fd = netns_socket(ctx->netns_fd, AF_NETLINK, SOCK_RAW, NETLINK_RDMA);
	if (fd < 0) {
		rc = -errno;
		errf(s->err, sizeof(s->err), "rdma-nl %s: NETLINK_RDMA socket: %s%s",
			 r->label, strerror(-rc),
			 rc == -EPROTONOSUPPORT ? " (kernel without RDMA netlink)" : "");
		rnl_free(r);
		return rc;
	}
	r->nl = mnl_socket_fdopen(fd);
	if (!r->nl) {
		rc = -errno;
		close(fd);
		errf(s->err, sizeof(s->err), "rdma-nl %s: mnl_socket_fdopen: %s",
			 r->label, strerror(-rc));
		rnl_free(r);
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	mnl_socket_setsockopt(r->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	if (mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		errf(s->err, sizeof(s->err), "rdma-nl %s: bind: %s", r->label,
			 strerror(-rc));
		rnl_free(r);
		return rc;
	}
	r->portid = mnl_socket_get_portid(r->nl);
	r->seq = (uint32_t)time(NULL);

	/* Resolve the device name to its index. */
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++r->seq;
	r->want_dev = ctx->rdma_dev;
	r->found = 0;
	rc = rnl_talk(r, nlh, rnl_dev_cb);
	r->want_dev = NULL;
	if (rc < 0) {
		rnl_fmt_err(s, r, "RDMA_NLDEV_CMD_GET", rc);
		rnl_free(r);
		return rc;
	}
	if (!r->found) {
		errf(s->err, sizeof(s->err), "rdma-nl %s: no RDMA device \"%s\"",
			 r->label, ctx->rdma_dev);
		rnl_free(r);
		return -ENODEV;
	}
	s->priv = r;
	return 0;
}

static int rnl_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct rnl *r = s->priv;
	char req[128];
	size_t n;
	int rc, same;

	s->err[0] = '\0';
	if (!r)
		return -EBADF;
	n = src_rdma_nl_build_stat_get(req, sizeof(req), ++r->seq, r->dev_index,
				       r->port);
	if (!n)
		return -EINVAL;
	r->found = 0;
	rc = rnl_talk(r, (struct nlmsghdr *)req, rnl_stat_cb);
	if (rc == 0 && !r->found)
		rc = -ENODATA;
	if (rc < 0) {
		rnl_fmt_err(s, r, "RDMA_NLDEV_CMD_STAT_GET", rc);
		return rc;
	}
	/* Same names as the current layout? */
	same = r->lay && r->lay->n == r->st->n;

	for (unsigned i = 0; same && i < r->st->n; i++)
		same = !strncmp(r->lay->names[i], "hw_counters/", 12) &&
		       !strcmp(r->lay->names[i] + 12, r->st->name[i]);
	if (!same) {
		char **names = calloc(r->st->n ? r->st->n : 1, sizeof(*names));
		uint8_t *w = malloc(r->st->n ? r->st->n : 1);
		uint64_t *nv = calloc(r->st->n ? r->st->n : 1, sizeof(*nv));
		struct clayout *nl = NULL;
		unsigned i;

		for (i = 0; names && w && nv && i < r->st->n; i++) {
			if (asprintf(&names[i], "hw_counters/%s", r->st->name[i]) < 0) {
				names[i] = NULL;
				break;
			}
			w[i] = CNT_W32;
		}
		if (names && w && nv && i == r->st->n)
			nl = clayout_new(r->st->n, (const char *const *)names, w);
		for (unsigned j = 0; names && j < i; j++)
			free(names[j]);
		free(names);
		free(w);
		if (!nl) {
			free(nv);
			errf(s->err, sizeof(s->err), "rdma-nl %s: out of memory", r->label);
			return -ENOMEM;
		}
		if (r->lay)
			log_info("rdma-nl %s: counter set changed (%u -> %u)", r->label,
				 r->lay->n, nl->n);
		clayout_unref(r->lay);
		r->lay = nl;
		free(r->vals);
		r->vals = nv;
	}
	memcpy(r->vals, r->st->val, r->st->n * sizeof(uint64_t));
	*lay = r->lay;
	*vals = r->vals;
	return 0;
}

static void rnl_close(struct src *s)
{
	rnl_free(s->priv);
	s->priv = NULL;
}

const struct src_ops src_rdma_nl_ops = {
	.name = "rdma-nl",
	.open = rnl_open,
	.read = rnl_read,
	.close = rnl_close,
};
