/* flow_src_vma: flow_src_vma_ops ("vma", host scope), the sockets of
 * unmodified libvma and libxlio processes from their statistics files
 * (collectors/flow_vma.h does the reading, checking and judging).
 *
 * Files: vmastat.<pid> in ctx->vma_dir (VMA_STATS_SHMEM_DIR, default /tmp)
 * and xliostat.<pid> in ctx->xlio_dir (XLIO_STATS_SHMEM_DIR, default
 * /tmp/xlio), found by inotify and a rescan every RESCAN_NS (a directory
 * created later is watched from then on). At most FLOW_VMA_MAX_FILES are
 * open; a file whose process is gone is closed; a refused file (owner,
 * size, unknown version) is retried at each rescan and logged once per
 * reason.
 *
 * Every poll due (interval_ns, default 100 ms) reads each file (two copies,
 * agreeing blocks only) and then bumps its reader_counter, the one write:
 * the engine copies its counters within 10 ms of seeing the counter move
 * (stats_publisher.cpp should_write()), so the next read finds them fresh,
 * and it keeps publishing only while the counter moves. Between reads the
 * last observations are emitted again, a stale "progress" as "idle". */
#include "collectors/flow_vma.h"
#include "collectors/flowsel.h"
#include "collectors/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <json-c/json.h>

#define RESCAN_NS 2000000000ull
#define DEF_INTERVAL_NS 100000000ull
#define MAX_REFUSED 64

struct vsock {                  /* one socket of a file, across reads */
	struct flow_vma_sock s;
	struct flow_vma_track t;
	struct flow_obs o;
	int fresh;              /* o is from the last read */
};

struct vfile {
	struct flow_vma_file *f;
	char path[PATH_MAX];
	const struct flow_vma_layout *lay;
	uint32_t nslots;
	struct vsock *socks;
	unsigned n, cap;
	unsigned torn, bad;     /* of the last read */
	int unknown;            /* unknown layout: read again at the next rescan */
	uint64_t reads, bumps, errors;
	char err[256];          /* last error, "" */
	char logged[256];
};

struct refused {                /* a name we could not take, and why */
	char path[PATH_MAX];
	char why[256];
};

struct vsrc {
	char dir[2][PATH_MAX];  /* vmastat, xliostat */
	int ino, wd[2];
	struct vfile *files[FLOW_VMA_MAX_FILES];
	unsigned nfiles, dropped;
	struct refused refused[MAX_REFUSED];
	unsigned nrefused;
	uint64_t interval_ns, last_read_ns, last_scan_ns;
	struct flow_vma_snap *snap;     /* scratch */
	uint64_t polls, cost_ns, last_cost_ns;
};

static uint64_t now_ns(void)
{
	return loop_mono_ns();
}

static struct vfile *file_find(struct vsrc *v, const char *path)
{
	for (unsigned i = 0; i < v->nfiles; i++)
		if (!strcmp(v->files[i]->path, path))
			return v->files[i];
	return NULL;
}

static void file_free(struct vfile *vf)
{
	if (!vf)
		return;
	flow_vma_file_close(vf->f);
	free(vf->socks);
	free(vf);
}

static void file_drop(struct vsrc *v, unsigned i, const char *why)
{
	log_info("vma: %s: %s; no longer read", v->files[i]->path, why);
	file_free(v->files[i]);
	v->files[i] = v->files[--v->nfiles];
}

/* Remember (and log once) why path was not taken; "" forgets it. */
static void refuse(struct vsrc *v, const char *path, const char *why)
{
	unsigned i;

	for (i = 0; i < v->nrefused; i++)
		if (!strcmp(v->refused[i].path, path))
			break;
	if (!*why) {
		if (i < v->nrefused)
			v->refused[i] = v->refused[--v->nrefused];
		return;
	}
	if (i == v->nrefused) {
		if (v->nrefused == MAX_REFUSED)
			i = 0;          /* forget the oldest: it may log again */
		else
			v->nrefused++;
		util_strlcpy(v->refused[i].path, path, sizeof(v->refused[i].path));
		v->refused[i].why[0] = '\0';
	}
	if (strcmp(v->refused[i].why, why)) {
		log_warnx("vma: %s", why);
		util_strlcpy(v->refused[i].why, why, sizeof(v->refused[i].why));
	}
}

/* quiet: an inotify event (a file just created may still be empty: no
 * warning, the next rescan tries again and says why). */
static void file_try(struct vsrc *v, const char *dir, const char *name, int quiet)
{
	enum flow_vma_engine e;
	struct vfile *vf;
	char path[PATH_MAX], err[256];
	int pid;

	if (flow_vma_name(name, &e, &pid) < 0)
		return;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return;
	if (file_find(v, path))
		return;
	if (v->nfiles >= FLOW_VMA_MAX_FILES) {
		if (!v->dropped++)
			log_warnx("vma: more than %u statistics files; %s and others not read",
				  FLOW_VMA_MAX_FILES, path);
		return;
	}
	vf = calloc(1, sizeof(*vf));
	if (!vf)
		return;
	vf->f = flow_vma_file_open(path, 1, err, sizeof(err));
	if (!vf->f) {
		free(vf);
		if (!quiet)
			refuse(v, path, err);
		return;
	}
	refuse(v, path, "");
	util_strlcpy(vf->path, path, sizeof(vf->path));
	v->files[v->nfiles++] = vf;
	log_info("vma: reading %s (%s, pid %d)", path, e == FLOW_VMA_XLIO ? "libxlio" : "libvma",
		 pid);
}

static void watch(struct vsrc *v)
{
	for (int k = 0; k < 2; k++)
		if (v->ino >= 0 && v->wd[k] < 0 && v->dir[k][0])
			v->wd[k] = inotify_add_watch(v->ino, v->dir[k], IN_CREATE | IN_MOVED_TO |
						     IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM |
						     IN_DELETE_SELF | IN_ONLYDIR);
}

/* Every matching name of both directories; files of dead processes go. */
static void rescan(struct vsrc *v)
{
	v->last_scan_ns = now_ns();
	watch(v);
	for (unsigned i = 0; i < v->nfiles; i++)
		v->files[i]->unknown = 0;
	for (unsigned i = 0; i < v->nfiles;) {
		int pid = flow_vma_file_pid(v->files[i]->f);

		if (kill(pid, 0) < 0 && errno == ESRCH)
			file_drop(v, i, "its process is gone");
		else if (access(v->files[i]->path, F_OK) < 0)
			file_drop(v, i, "removed");
		else
			i++;
	}
	for (int k = 0; k < 2; k++) {
		DIR *d = v->dir[k][0] ? opendir(v->dir[k]) : NULL;
		struct dirent *de;
		unsigned seen = 0;

		while (d && (de = readdir(d)) && seen++ < 100000)
			if (de->d_name[0] == (k ? 'x' : 'v'))
				file_try(v, v->dir[k], de->d_name, 0);
		if (d)
			closedir(d);
	}
}

static int vs_fd(const struct flow_src *s)
{
	const struct vsrc *v = s->priv;

	return v ? v->ino : -1;
}

static void vs_handle(struct flow_src *s)
{
	struct vsrc *v = s->priv;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (!v || v->ino < 0)
		return;
	for (int round = 0; round < 16 && (n = read(v->ino, buf, sizeof(buf))) > 0; round++) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			int k = ev->wd == v->wd[0] ? 0 : ev->wd == v->wd[1] ? 1 : -1;

			p += sizeof(*ev) + ev->len;
			if (k < 0)
				continue;
			if (ev->mask & (IN_DELETE_SELF | IN_IGNORED)) {
				v->wd[k] = -1;  /* directory gone: rewatched at a rescan */
				continue;
			}
			if (!ev->len)
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				char path[PATH_MAX];

				snprintf(path, sizeof(path), "%s/%s", v->dir[k], ev->name);
				for (unsigned i = 0; i < v->nfiles; i++)
					if (!strcmp(v->files[i]->path, path)) {
						file_drop(v, i, "removed");
						break;
					}
			} else {
				file_try(v, v->dir[k], ev->name, 1);
			}
		}
	}
}

/* Read one file and judge its sockets; then bump (the one write). */
static void file_read(struct vsrc *v, struct vfile *vf, uint64_t now)
{
	struct flow_vma_snap *sn = v->snap;
	enum flow_vma_engine e = flow_vma_file_engine(vf->f);
	int pid = flow_vma_file_pid(vf->f), rc;
	struct vsock *ns;
	unsigned n = 0;
	char err[300], eng[32];

	for (unsigned i = 0; i < vf->n; i++)
		vf->socks[i].fresh = 0;
	if (vf->unknown)
		return;
	vf->reads++;
	rc = flow_vma_file_read(vf->f, sn, err, sizeof(err));
	if (rc < 0) {
		vf->errors++;
		vf->unknown = rc == -ENOMSG;    /* the version will not change soon */
		vf->n = 0;
		util_strlcpy(vf->err, err, sizeof(vf->err));
		if (strcmp(vf->logged, err)) {
			log_warnx("vma: %s", err);
			util_strlcpy(vf->logged, err, sizeof(vf->logged));
		}
		return;
	}
	vf->err[0] = vf->logged[0] = '\0';
	vf->lay = sn->lay;
	vf->nslots = sn->nslots;
	vf->torn = sn->torn;
	vf->bad = sn->bad;
	snprintf(eng, sizeof(eng), "%s:%d", e == FLOW_VMA_XLIO ? "xlio" : "vma", pid);
	/* the sockets of this read, each with its tracker if it was there
	 * before (same slot, inode and fd), else a new one */
	ns = calloc(sn->n ? sn->n : 1, sizeof(*ns));
	if (!ns)
		return;
	for (unsigned i = 0, k; i < sn->n; i++) {
		const struct flow_vma_sock *s = &sn->s[i];

		/* a block the engine enabled but has not copied its socket
		 * into yet (before the first publish): nothing to say */
		if (!s->fd && !s->inode && !s->lport && IN6_IS_ADDR_UNSPECIFIED(&s->laddr))
			continue;
		k = n++;
		for (unsigned j = 0; j < vf->n; j++) {
			const struct flow_vma_sock *o = &vf->socks[j].s;

			if (o->slot == s->slot && o->inode == s->inode && o->fd == s->fd) {
				ns[k].t = vf->socks[j].t;
				break;
			}
		}
		ns[k].s = *s;
		flow_vma_obs(s, eng, pid, &ns[k].t, now, &ns[k].o);
		ns[k].fresh = 1;
	}
	free(vf->socks);
	vf->socks = ns;
	vf->n = vf->cap = n;
	rc = flow_vma_file_bump(vf->f, now, v->interval_ns, err, sizeof(err));
	if (rc > 0)
		vf->bumps++;
	else if (rc < 0 && strcmp(vf->logged, err)) {
		log_warnx("vma: %s", err);
		util_strlcpy(vf->logged, err, sizeof(vf->logged));
	}
}

static int vs_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	struct vsrc *v = s->priv;
	uint64_t now = now_ns(), t0 = now;
	int n = 0, read = 0;

	if (!v)
		return -EBADF;
	if (now - v->last_scan_ns >= RESCAN_NS)
		rescan(v);
	if (!v->last_read_ns || now - v->last_read_ns >= v->interval_ns) {
		v->last_read_ns = now;
		read = 1;
		for (unsigned i = 0; i < v->nfiles; i++)
			file_read(v, v->files[i], now);
	}
	for (unsigned i = 0; i < v->nfiles; i++) {
		struct vfile *vf = v->files[i];

		for (unsigned k = 0; k < vf->n; k++) {
			struct flow_obs o = vf->socks[k].o;

			/* an old "progress" says nothing about now */
			if (!vf->socks[k].fresh && flow_live_of(&o) == FLOW_LIVE_PROGRESS)
				o.live = FLOW_LIVE_IDLE + 1;
			vf->socks[k].fresh = 0;
			emit(&o, arg);
			n++;
		}
	}
	/* the next read, or the next look for new files; the sockets'
	 * verdicts carry their own times */
	s->next_ns = flow_src_next_min(flow_src_idle_next(s),
				       flow_src_next_min(v->last_read_ns + v->interval_ns,
							 v->last_scan_ns + RESCAN_NS));
	if (read) {
		v->polls++;
		v->last_cost_ns = now_ns() - t0;
		v->cost_ns += v->last_cost_ns;
	}
	s->err[0] = '\0';
	return n;
}

static int vs_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct vsrc *v = calloc(1, sizeof(*v));

	s->err[0] = '\0';
	if (!v || !(v->snap = malloc(sizeof(*v->snap)))) {
		free(v);
		util_errf(s->err, sizeof(s->err), "vma: out of memory");
		return -ENOMEM;
	}
	util_strlcpy(v->dir[0], ctx && ctx->vma_dir ? ctx->vma_dir : "/tmp", sizeof(v->dir[0]));
	util_strlcpy(v->dir[1], ctx && ctx->xlio_dir ? ctx->xlio_dir : "/tmp/xlio",
		     sizeof(v->dir[1]));
	v->interval_ns = ctx && ctx->interval_ns ? ctx->interval_ns : DEF_INTERVAL_NS;
	v->wd[0] = v->wd[1] = -1;
	v->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (v->ino < 0)
		log_warn("vma: inotify (rescanning every %llu s instead)",
			 (unsigned long long)(RESCAN_NS / 1000000000ull));
	s->ops = &flow_src_vma_ops;
	s->priv = v;
	rescan(v);
	return 0;
}

static void vs_close(struct flow_src *s)
{
	struct vsrc *v = s->priv;

	if (!v)
		return;
	for (unsigned i = 0; i < v->nfiles; i++)
		file_free(v->files[i]);
	if (v->ino >= 0)
		close(v->ino);
	free(v->snap);
	free(v);
	s->priv = NULL;
}

static void add_ipport(struct json_object *o, const char *k, const struct in6_addr *a,
		       uint16_t port)
{
	struct flow_key key = { .saddr = *a, .sport = port, .proto = IPPROTO_UDP };
	char buf[96], *sp;

	/* "udp A:P -> ..." without the protocol and the far end */
	flow_key_format(&key, buf, sizeof(buf));
	sp = strchr(buf, ' ');
	if (sp && strstr(sp, " -> "))
		*strstr(sp, " -> ") = '\0';
	jx_add_str(o, k, sp ? sp + 1 : buf);
}

/* Every field of one parsed socket block, for the bundle. */
static struct json_object *sock_json(const struct vfile *vf, const struct vsock *vs)
{
	const struct flow_vma_sock *s = &vs->s;
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "file", vf->path);
	jx_add_int(o, "pid", flow_vma_file_pid(vf->f));
	jx_add_int(o, "slot", s->slot);
	jx_add_int(o, "fd", s->fd);
	jx_add_u64(o, "inode", s->inode);
	jx_add_u64(o, "tcp_state", s->tcp_state);
	jx_add_str(o, "socket_type", s->socket_type == 2 ? "dgram" : s->socket_type == 1 ?
		   "stream" : "other");
	jx_add_bool(o, "offloaded", s->offloaded);
	add_ipport(o, "local", &s->laddr, s->lport);
	add_ipport(o, "remote", &s->raddr, s->rport);
	jx_add_u64(o, "n_rx_ready_pkt_count", s->rx_ready_pkt);
	jx_add_u64(o, "n_rx_ready_byte_count", s->rx_ready_byte);
	jx_add_u64(o, "n_tx_ready_byte_count", s->tx_ready_byte);
	jx_add_u64(o, "n_rx_packets", s->rx_packets);
	jx_add_u64(o, "n_rx_bytes", s->rx_bytes);
	jx_add_u64(o, "n_tx_sent_pkt_count", s->tx_packets);
	jx_add_u64(o, "n_tx_sent_byte_count", s->tx_bytes);
	jx_add_u64(o, "n_rx_errors", s->rx_errors);
	jx_add_u64(o, "n_rx_ready_pkt_drop", s->rx_drop_pkt);
	jx_add_u64(o, "n_rx_ready_byte_drop", s->rx_drop_byte);
	jx_add_u64(o, "n_tx_errors", s->tx_errors);
	jx_add_u64(o, "n_tx_retransmits", s->tx_retransmits);
	jx_add_u64(o, "n_rx_os_packets", s->rx_os_packets);
	jx_add_u64(o, "n_rx_os_bytes", s->rx_os_bytes);
	jx_add_u64(o, "n_rx_os_errors", s->rx_os_errors);
	jx_add_u64(o, "n_rx_os_eagain", s->rx_os_eagain);
	jx_add_u64(o, "n_tx_os_packets", s->tx_os_packets);
	jx_add_u64(o, "n_tx_os_bytes", s->tx_os_bytes);
	jx_add_u64(o, "n_tx_os_errors", s->tx_os_errors);
	jx_add_u64(o, "n_tx_os_eagain", s->tx_os_eagain);
	jx_add_str(o, "verdict", flow_live_name((enum flow_live)vs->t.live.verdict));
	return o;
}

static int vs_evidence(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		       const char *when, struct json_object *out, flow_src_evid_done_fn done,
		       void *arg)
{
	struct vsrc *v = s->priv;
	struct json_object *socks = json_object_new_array(), *files = json_object_new_array();

	(void)when;
	(void)done;
	(void)arg;
	for (unsigned i = 0; v && i < v->nfiles; i++) {
		const struct vfile *vf = v->files[i];
		int any = 0;

		for (unsigned k = 0; k < vf->n; k++)
			for (unsigned r = 0; r < n; r++)
				if (refs[r].src == FLOW_SRC_VMA &&
				    refs[r].pid == flow_vma_file_pid(vf->f) &&
				    refs[r].session == vf->socks[k].o.session) {
					json_object_array_add(socks, sock_json(vf, &vf->socks[k]));
					any = 1;
					break;
				}
		if (any) {
			struct json_object *f = json_object_new_object();

			jx_add_str(f, "file", vf->path);
			jx_add_str(f, "release", vf->lay ? vf->lay->release : "?");
			jx_add_str(f, "variant", vf->lay ? vf->lay->variant : "");
			jx_add_str(f, "stats_protocol_ver", vf->lay ? vf->lay->md5 : "");
			jx_add_u64(f, "max_skt_inst_num", vf->nslots);
			jx_add_u64(f, "sockets", vf->n);
			jx_add_u64(f, "torn", vf->torn);
			jx_add_u64(f, "bad", vf->bad);
			jx_add_u64(f, "bumps", vf->bumps);
			json_object_array_add(files, f);
		}
	}
	json_object_object_add(out, "files", files);
	json_object_object_add(out, "sockets", socks);
	return 0;
}

static void vs_status(const struct flow_src *s, struct json_object *out)
{
	const struct vsrc *v = s->priv;
	struct json_object *files = json_object_new_array(), *ref = json_object_new_array();

	if (!v) {
		json_object_put(files);
		json_object_put(ref);
		return;
	}
	jx_add_str(out, "vma_dir", v->dir[0]);
	jx_add_str(out, "xlio_dir", v->dir[1]);
	jx_add_ms(out, "interval_ms", v->interval_ns);
	jx_add_u64(out, "polls", v->polls);
	jx_add_double(out, "last_poll_us", (double)v->last_cost_ns / 1e3);
	jx_add_double(out, "mean_poll_us", v->polls ? (double)v->cost_ns / 1e3 / (double)v->polls : 0);
	for (unsigned i = 0; i < v->nfiles; i++) {
		const struct vfile *vf = v->files[i];
		struct json_object *f = json_object_new_object();
		int xlio = flow_vma_file_engine(vf->f) == FLOW_VMA_XLIO;

		jx_add_str(f, "file", vf->path);
		jx_add_str(f, "engine", xlio ? "xlio" : "vma");
		jx_add_int(f, "pid", flow_vma_file_pid(vf->f));
		jx_add_str(f, "release", vf->lay ? vf->lay->release : "");
		jx_add_u64(f, "max_skt_inst_num", vf->nslots);
		jx_add_u64(f, "sockets", vf->n);
		jx_add_u64(f, "torn", vf->torn);
		jx_add_u64(f, "bad", vf->bad);
		jx_add_u64(f, "reads", vf->reads);
		jx_add_u64(f, "bumps", vf->bumps);
		if (vf->err[0])
			jx_add_str(f, "error", vf->err);
		else if (xlio && vf->lay && !vf->nslots)
			jx_add_str(f, "warning", "no per-socket statistics: run the application "
				   "with XLIO_STATS_FD_NUM > 0 (libxlio 3.40 and later publish none "
				   "by default)");
		json_object_array_add(files, f);
	}
	json_object_object_add(out, "files", files);
	for (unsigned i = 0; i < v->nrefused; i++) {
		struct json_object *r = json_object_new_object();

		jx_add_str(r, "file", v->refused[i].path);
		jx_add_str(r, "error", v->refused[i].why);
		json_object_array_add(ref, r);
	}
	json_object_object_add(out, "refused", ref);
}

const struct flow_src_ops flow_src_vma_ops = {
	.name = "vma",
	.kind = FLOW_SRC_VMA,
	.host = 1,
	.open = vs_open,
	.poll = vs_poll,
	.fd = vs_fd,
	.handle = vs_handle,
	.status = vs_status,
	.evidence = vs_evidence,
	.close = vs_close,
};
