/* devlink_io: requests to the kernel or to the recordings (.nlhex files:
 * lib/nlhex.c), health events, and a port's devlink target (see
 * devlink_health.h). */
#include "collectors/counters/devlink_int.h"
#include "lib/nlhex.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ================================================================ io */


static const char *req_file(enum dlh_req kind, const char *name, char *buf,
			    size_t len)
{
	switch (kind) {
	case DLH_REQ_FAMILY:
		return "family.nlhex";
	case DLH_REQ_DEV:
		return "dev-get.nlhex";
	case DLH_REQ_PORT:
		return "port-get.nlhex";
	case DLH_REQ_HEALTH:
		return "health-get.nlhex";
	case DLH_REQ_DIAGNOSE:
		snprintf(buf, len, "diagnose-%s.nlhex", name);
		return buf;
	case DLH_REQ_DUMP:
		snprintf(buf, len, "dump-%s.nlhex", name);
		return buf;
	}
	return "?";
}

static const char *req_what(enum dlh_req kind, const struct dlh_handle *h,
			    const char *name, char *buf, size_t len)
{
	static const char *const verb[] = {
		[DLH_REQ_FAMILY] = "genl family devlink", [DLH_REQ_DEV] = "devlink dev show",
		[DLH_REQ_PORT] = "devlink port show", [DLH_REQ_HEALTH] = "devlink health show",
		[DLH_REQ_DIAGNOSE] = "devlink health diagnose",
		[DLH_REQ_DUMP] = "devlink health dump show",
	};
	char hb[160];

	if (h && h->bus[0])
		snprintf(buf, len, "%s %s%s%s", verb[kind], dlh_handle_str(h, hb, sizeof(hb)),
			 name ? " reporter " : "", name ? name : "");
	else
		snprintf(buf, len, "%s", verb[kind]);
	return buf;
}

static size_t build_req(struct dlh_io *io, enum dlh_req kind,
			const struct dlh_handle *h, const char *name, uint32_t seq)
{
	void *b = io->req;
	size_t l = sizeof(io->req);

	switch (kind) {
	case DLH_REQ_FAMILY:
		return dlh_build_getfamily(b, l, seq);
	case DLH_REQ_DEV:
		return dlh_build_dev_dump(b, l, io->family, seq);
	case DLH_REQ_PORT:
		return dlh_build_port_dump(b, l, io->family, seq, h);
	case DLH_REQ_HEALTH:
		return dlh_build_reporter_dump(b, l, io->family, seq, h);
	case DLH_REQ_DIAGNOSE:
		return dlh_build_diagnose(b, l, io->family, seq, h, name);
	case DLH_REQ_DUMP:
		return dlh_build_dump_get(b, l, io->family, seq, h, name);
	}
	return 0;
}

static int is_dump(enum dlh_req kind)
{
	return kind != DLH_REQ_FAMILY && kind != DLH_REQ_DIAGNOSE;
}

/* Append the received chunk to the recording (kept whole per request). */
static int record_chunk(struct dlh_reply *rec, const void *p, size_t n)
{
	if (rec->len + n > DLH_REPLY_MAX)
		return -E2BIG;
	if (rec->len + n > rec->cap) {
		size_t cap = rec->cap ? rec->cap : 4096;
		uint8_t *nb;

		while (cap < rec->len + n)
			cap *= 2;
		nb = realloc(rec->buf, cap);
		if (!nb)
			return -ENOMEM;
		rec->buf = nb;
		rec->cap = cap;
	}
	memcpy(rec->buf + rec->len, p, n);
	rec->len += n;
	return 0;
}

/* One data message of a reply from lib/nl into r (and the recording):
 * dlh_reply_feed checks it again like any chunk. */
struct sock_ctx {
	struct dlh_reply *r, *rec;
	uint16_t fam;
	char err[200];
};

static int sock_msg(const struct nlmsghdr *nlh, void *arg)
{
	struct sock_ctx *c = arg;
	int rc;

	if (c->rec && record_chunk(c->rec, nlh, NLMSG_ALIGN(nlh->nlmsg_len)) < 0)
		c->rec = NULL;                  /* too big to record: stop */
	rc = dlh_reply_feed(c->r, nlh, nlh->nlmsg_len, 0, 0, c->fam, c->err, sizeof(c->err));
	if (rc < 0) {
		errno = -rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* What ended the reply, for the recording (the callback saw only data):
 * NLMSG_DONE after a dump, the ack after a do. */
static void record_end(struct dlh_reply *rec, int dump)
{
	uint8_t b[NLMSG_HDRLEN + sizeof(struct nlmsgerr)] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)b;

	nlh->nlmsg_len = dump ? NLMSG_HDRLEN + sizeof(int) : (uint32_t)sizeof(b);
	nlh->nlmsg_type = dump ? NLMSG_DONE : NLMSG_ERROR;
	nlh->nlmsg_flags = dump ? NLM_F_MULTI : NLM_F_CAPPED;
	record_chunk(rec, b, NLMSG_ALIGN(nlh->nlmsg_len));
}

/* A request through lib/nl's path: answered while sendmsg() runs, taken
 * without waiting (see lib/nl.c); nothing here blocks the loop. */
static int sock_request(struct dlh_io *io, enum dlh_req kind,
			const struct dlh_handle *h, const char *name,
			struct dlh_reply *r, const char *what, char *err,
			size_t errlen)
{
	struct dlh_reply rec;
	struct sock_ctx c = { .r = r, .fam = kind == DLH_REQ_FAMILY ? GENL_ID_CTRL : io->family };
	size_t n = build_req(io, kind, h, name, 0);
	char e[300];
	int rc;

	if (!n) {
		snprintf(err, errlen, "%s: bad request arguments", what);
		return -EINVAL;
	}
	dlh_reply_init(&rec, 0);
	if (io->dir[0])
		c.rec = &rec;
	rc = nl_sock_request(io->ns, (struct nlmsghdr *)io->req, sock_msg, &c, what, e, sizeof(e));
	if (rc < 0) {
		snprintf(err, errlen, "%s%s%s", e, c.err[0] ? ": " : "", c.err);
	} else {
		r->done = 1;                    /* ended by NLMSG_DONE or the ack */
		if (c.rec) {
			char path[1400], fb[DLH_NAME_MAX + 32];

			record_end(&rec, is_dump(kind));
			snprintf(path, sizeof(path), "%s/%s", io->dir,
				 req_file(kind, name, fb, sizeof(fb)));
			if (nlhex_write(path, what, rec.buf, rec.len, e, sizeof(e)) < 0)
				log_warnx("devlink health: recording: %s", e);
		}
	}
	dlh_reply_free(&rec);
	return rc < 0 ? rc : 0;
}

static int fixture_request(struct dlh_io *io, enum dlh_req kind,
			   const char *name, struct dlh_reply *r,
			   const char *what, char *err, size_t errlen)
{
	char path[1400], fb[DLH_NAME_MAX + 32], e[256];
	uint16_t fam = kind == DLH_REQ_FAMILY ? GENL_ID_CTRL : io->family;
	uint8_t *buf;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", io->dir, req_file(kind, name, fb, sizeof(fb)));
	rc = nlhex_load(path, &buf, &len, e, sizeof(e));
	if (rc == -ENOENT) {
		/* answer like a kernel without that part */
		if (kind == DLH_REQ_DEV || kind == DLH_REQ_PORT)
			return 0;
		rc = kind == DLH_REQ_FAMILY ? -ENOENT : -EOPNOTSUPP;
		snprintf(err, errlen, "%s: %s (no %s)", what, strerror(-rc), path);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		return rc;
	}
	rc = dlh_reply_feed(r, buf, len, 0, 0, fam, e, sizeof(e));
	free(buf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s: %s", what, path, e);
		return rc;
	}
	if (rc == 0 && !r->done) {
		snprintf(err, errlen, "%s: %s: reply ends without NLMSG_DONE or ack", what, path);
		return -EBADMSG;
	}
	return 0;
}

int dlh_io_request(struct dlh_io *io, enum dlh_req kind,
		   const struct dlh_handle *h, const char *name,
		   struct dlh_reply *r, char *err, size_t errlen)
{
	char what[256], scratch[8];

	ERRBUF(err, errlen, scratch);
	req_what(kind, h, name, what, sizeof(what));
	dlh_reply_init(r, is_dump(kind));
	if (!io || (kind != DLH_REQ_FAMILY && !io->family) ||
	    ((kind == DLH_REQ_DIAGNOSE || kind == DLH_REQ_DUMP) && !dlh_i_good_token(name))) {
		snprintf(err, errlen, "%s: %s", what, strerror(EINVAL));
		return -EINVAL;
	}
	return io->fixture ? fixture_request(io, kind, name, r, what, err, errlen) :
			     sock_request(io, kind, h, name, r, what, err, errlen);
}

static int resolve_family(struct dlh_io *io, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	size_t off;
	int rc = dlh_io_request(io, DLH_REQ_FAMILY, NULL, NULL, &r, err, errlen);

	if (rc == 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "genl family devlink: no reply");
		dlh_reply_for_each(&r, nlh, off) {
			rc = dlh_parse_family(nlh, r.len - off, &io->family, &io->group, err,
					      errlen);
			break;
		}
	}
	dlh_reply_free(&r);
	if (rc == -ENOENT && io->fixture == 0)
		snprintf(err, errlen, "the kernel has no devlink (genl family \"devlink\" unknown)");
	return rc;
}

uint16_t dlh_io_family(const struct dlh_io *io)
{
	return io ? io->family : 0;
}

struct dlh_io *dlh_io_socket(int nsfd, const char *record_dir, char *err,
			     size_t errlen)
{
	struct dlh_io *io;
	char scratch[8];
	int e;

	ERRBUF(err, errlen, scratch);
	io = calloc(1, sizeof(*io));
	if (!io) {
		snprintf(err, errlen, "devlink socket: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	if (record_dir)
		util_strlcpy(io->dir, record_dir, sizeof(io->dir));
	io->ns = nl_sock_open(nsfd, NETLINK_GENERIC, 0, err, errlen);
	if (!io->ns) {
		e = errno ? errno : EIO;
		goto fail;
	}
	if ((e = -resolve_family(io, err, errlen)) > 0)
		goto fail;
	return io;
fail:
	dlh_io_close(io);
	errno = e;
	return NULL;
}

struct dlh_io *dlh_io_fixture(const char *dir, char *err, size_t errlen)
{
	struct dlh_io *io;
	char scratch[8];
	int e;

	ERRBUF(err, errlen, scratch);
	if (!dir || !*dir || strlen(dir) >= sizeof(io->dir)) {
		snprintf(err, errlen, "devlink fixture: bad directory");
		errno = EINVAL;
		return NULL;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		snprintf(err, errlen, "devlink fixture: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	io->fixture = 1;
	util_strlcpy(io->dir, dir, sizeof(io->dir));
	if ((e = -resolve_family(io, err, errlen)) > 0) {
		dlh_io_close(io);
		errno = e;
		return NULL;
	}
	return io;
}

void dlh_io_close(struct dlh_io *io)
{
	if (!io)
		return;
	nl_sock_close(io->ns);
	free(io);
}

/* ================================================================ events */

struct dlh_mon {
	struct dlh_io *io;           /* the socket (joined to the group) */
	int lost;                    /* ENOBUFS since the last dispatch */
};

struct dlh_mon *dlh_mon_open(int nsfd, char *err, size_t errlen)
{
	struct dlh_mon *m;
	char scratch[8];
	int e;

	ERRBUF(err, errlen, scratch);
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "devlink monitor: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	/* a socket of its own: only the family request ever runs on it (a
	 * do, never remade), then it only receives */
	m->io = dlh_io_socket(nsfd, NULL, err, errlen);
	if (!m->io) {
		e = errno;
		free(m);
		errno = e;
		return NULL;
	}
	if (!m->io->group) {
		snprintf(err, errlen, "devlink monitor: no \"%s\" multicast group",
			 DEVLINK_GENL_MCGRP_CONFIG_NAME);
		e = ENOENT;
		goto fail;
	}
	if (setsockopt(nl_sock_fd(m->io->ns), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
		       &m->io->group, sizeof(m->io->group)) < 0) {
		e = errno;
		snprintf(err, errlen, "devlink monitor: joining \"%s\": %s",
			 DEVLINK_GENL_MCGRP_CONFIG_NAME, strerror(e));
		goto fail;
	}
	return m;
fail:
	dlh_mon_close(m);
	errno = e;
	return NULL;
}

int dlh_mon_fd(const struct dlh_mon *m)
{
	return m && m->io ? nl_sock_fd(m->io->ns) : -1;
}

int dlh_mon_parse(const void *buf, size_t len, uint16_t family,
		  void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		  char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char scratch[8], e[200];
	int rc, n = 0;
	size_t off;

	ERRBUF(err, errlen, scratch);
	dlh_reply_init(&r, 1);
	rc = dlh_reply_feed(&r, buf, len, 0, 0, family, err, errlen);
	if (rc < 0) {
		dlh_reply_free(&r);
		return rc;
	}
	dlh_reply_for_each(&r, nlh, off) {
		const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
		struct dlh_reporter rep;

		if (g->cmd != DEVLINK_CMD_HEALTH_REPORTER_RECOVER)
			continue;                 /* other devlink notifications */
		if (dlh_parse_reporter(nlh, r.len - off, family, &rep, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "devlink health event: %s", e);
			continue;
		}
		cb(&rep, arg);
		n++;
	}
	dlh_reply_free(&r);
	return n;
}

struct mon_ctx {
	uint16_t family;
	void (*cb)(const struct dlh_reporter *r, void *arg);
	void *arg;
	int n;
	char *err;
	size_t errlen;
};

static int mon_msg(const struct nlmsghdr *nlh, void *data)
{
	struct mon_ctx *c = data;
	const struct genlmsghdr *g;
	struct dlh_reporter rep;
	char e[200];

	if (nlh->nlmsg_type != c->family || mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return MNL_CB_OK;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != DEVLINK_CMD_HEALTH_REPORTER_RECOVER)
		return MNL_CB_OK;               /* other devlink notifications */
	if (dlh_parse_reporter(nlh, nlh->nlmsg_len, c->family, &rep, e, sizeof(e)) < 0) {
		snprintf(c->err, c->errlen, "devlink health event: %s", e);
		return MNL_CB_OK;
	}
	c->cb(&rep, c->arg);
	c->n++;
	return MNL_CB_OK;
}

int dlh_mon_dispatch(struct dlh_mon *m,
		     void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		     char *err, size_t errlen)
{
	struct mon_ctx c = { .cb = cb, .arg = arg };
	char scratch[8];
	int lost = 0;

	ERRBUF(err, errlen, scratch);
	if (!m || !m->io || !cb) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	c.family = m->io->family;
	c.err = err;
	c.errlen = errlen;
	for (int i = 0; i < 256; i++) {         /* bounded per wakeup */
		int rc = nl_sock_recv_events(m->io->ns, mon_msg, &c);

		if (rc == 0)
			break;
		if (rc == -ENOBUFS)
			lost = 1;               /* events were lost: re-read the state */
		else if (rc < 0 && rc != -EBADMSG && rc != -ENOSPC)
			return rc;
	}
	return lost ? -ENOBUFS : c.n;
}

void dlh_mon_close(struct dlh_mon *m)
{
	if (!m)
		return;
	dlh_io_close(m->io);
	free(m);
}

int dlh_target_has(const struct dlh_target *t, const struct dlh_handle *h)
{
	if (!t || !h)
		return 0;
	if (h->has_port)
		return t->port.has_port && dlh_i_same_instance(&t->port, h) && t->port.port == h->port;
	return dlh_i_same_instance(&t->dev, h) || dlh_i_same_instance(&t->port, h);
}

/* ================================================================ target */

static int is_pci_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 7 || n >= DLH_NAME_MAX || !strchr(s, ':') || !strchr(s, '.'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
			return 0;
	return 1;
}

int dlh_find_target(struct dlh_io *io, const char *ifname, uint32_t ifindex,
		    const char *bus_info, struct dlh_target *t, char *err,
		    size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char scratch[8], e[200];
	int found_dev = 0, have_list = 0, rc;
	size_t off;

	ERRBUF(err, errlen, scratch);
	memset(t, 0, sizeof(*t));
	if (!ifname || !*ifname || strlen(ifname) >= 16) {
		snprintf(err, errlen, "devlink: bad interface name");
		return -EINVAL;
	}
	/* the netdev's devlink port */
	rc = dlh_io_request(io, DLH_REQ_PORT, NULL, NULL, &r, e, sizeof(e));
	if (rc == 0) {
		dlh_reply_for_each(&r, nlh, off) {
			struct dlh_port p;

			if (dlh_parse_port(nlh, r.len - off, io->family, &p, e, sizeof(e)) < 0) {
				log_debug("devlink %s: %s", ifname, e);
				continue;
			}
			if (!strcmp(p.netdev, ifname) &&
			    (!ifindex || !p.ifindex || p.ifindex == ifindex)) {
				t->port = p.h;
				break;
			}
		}
	} else {
		log_debug("devlink %s: %s", ifname, e);
	}
	dlh_reply_free(&r);
	if (t->port.bus[0] && !strcmp(t->port.bus, "pci")) {
		t->dev = t->port;
		t->dev.has_port = 0;
	}
	/* the instances: the one nesting the port's, and a check of bus_info */
	rc = dlh_io_request(io, DLH_REQ_DEV, NULL, NULL, &r, e, sizeof(e));
	if (rc == 0) {
		dlh_reply_for_each(&r, nlh, off) {
			struct dlh_dev d;

			if (dlh_parse_dev(nlh, r.len - off, io->family, &d, e, sizeof(e)) < 0)
				continue;
			have_list = 1;
			for (unsigned i = 0; !t->dev.bus[0] && t->port.bus[0] &&
			     i < d.nnested; i++)
				if (dlh_i_same_instance(&d.nested[i], &t->port))
					t->dev = d.h;
			if (bus_info && !strcmp(d.h.bus, "pci") && !strcmp(d.h.dev, bus_info))
				found_dev = 1;
		}
	}
	dlh_reply_free(&r);
	if (!t->dev.bus[0] && is_pci_name(bus_info) && (found_dev || !have_list)) {
		util_strlcpy(t->dev.bus, "pci", sizeof(t->dev.bus));
		util_strlcpy(t->dev.dev, bus_info, sizeof(t->dev.dev));
	}
	if (!t->dev.bus[0] && !t->port.bus[0]) {
		snprintf(err, errlen, "no devlink port for %s%s%s", ifname,
			 bus_info && *bus_info ? " and no devlink instance pci/" : "",
			 bus_info && *bus_info ? bus_info : "");
		return -ENODEV;
	}
	return 0;
}

