/* flow_engine: the set of engine flow tables (nicstall/flowtab.h) of one
 * directory: inotify and rescans, explicit registration, the poll loop over
 * every table, the listing, and flow_src_engine_ops (flowsrc.h, host
 * scope). One table is opened, checked and read by flow_engine_read.c. */
#include "collectors/flows/flow_engine_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

static unsigned fe_hashstr(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % FE_HASH;
}

static int name_ok(const char *name)
{
	size_t n = strlen(name), s = strlen(NSFT_SUFFIX);

	return name[0] != '.' && n > s && strcmp(name + n - s, NSFT_SUFFIX) == 0;
}

static struct ft *ft_find(const struct flow_engine *fe, const char *path)
{
	struct ft *t;

	for (t = fe->hash[fe_hashstr(path)]; t; t = t->hnext)
		if (strcmp(t->path, path) == 0)
			return t;
	return NULL;
}

static struct ft *ft_new(struct flow_engine *fe, const char *path)
{
	struct ft *t;
	unsigned h;

	if (fe->n >= FLOW_ENGINE_MAX_ENTRIES) {
		if (!fe->logged_entries)
			log_warnx("flow tables: more than %d tables tracked; ignoring %s and further ones",
				  FLOW_ENGINE_MAX_ENTRIES, path);
		fe->logged_entries = 1;
		fe->dropped = 1;
		return NULL;
	}
	if (fe->n == fe->alloc) {
		size_t na = fe->alloc ? fe->alloc * 2 : 64;
		struct ft **nt = realloc(fe->t, na * sizeof(*nt));

		if (!nt)
			return NULL;
		fe->t = nt;
		fe->alloc = na;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->path = strdup(path);
	if (!t->path) {
		free(t);
		return NULL;
	}
	t->fd = -1;
	t->st = T_BAD;
	h = fe_hashstr(path);
	t->hnext = fe->hash[h];
	fe->hash[h] = t;
	t->idx = fe->n;
	fe->t[fe->n++] = t;
	return t;
}

static void ft_free(struct flow_engine *fe, struct ft *t)
{
	struct ft **pp;

	ft_release(fe, t);
	for (pp = &fe->hash[fe_hashstr(t->path)]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	fe->t[t->idx] = fe->t[--fe->n];
	fe->t[t->idx]->idx = t->idx;
	if (fe->dropped)
		fe->need_rescan = 1;
	if (fe->n < FLOW_ENGINE_MAX_ENTRIES)
		fe->logged_entries = 0;
	free(t->path);
	free(t);
}

/* ---- directory ---------------------------------------------------------------- */

static int dir_path(const struct flow_engine *fe, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", fe->dir, name);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

static void dir_add(struct flow_engine *fe, const char *name)
{
	char path[PATH_MAX];
	struct ft *t;

	if (!name_ok(name) || dir_path(fe, name, path, sizeof(path)) < 0)
		return;
	t = ft_find(fe, path);
	if (!t)
		t = ft_new(fe, path);
	if (t) {
		t->seen = 1;
		ft_open(fe, t);
	}
}

static void dir_del(struct flow_engine *fe, const char *name)
{
	char path[PATH_MAX];
	struct ft *t;

	if (!name_ok(name) || dir_path(fe, name, path, sizeof(path)) < 0)
		return;
	t = ft_find(fe, path);
	if (t)
		ft_free(fe, t);
}

static int dir_watch(struct flow_engine *fe)
{
	char tmp[PATH_MAX];
	size_t i, n = strlen(fe->dir);

	memcpy(tmp, fe->dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (i < n)
			tmp[i] = '/';
	}
	fe->wd = inotify_add_watch(fe->ifd, fe->dir,
				   IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM |
				   IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF |
				   IN_ONLYDIR | IN_EXCL_UNLINK);
	return fe->wd < 0 ? -errno : 0;
}

/* Add every table in the directory; forget directory entries that vanished. */
static void dir_rescan(struct flow_engine *fe)
{
	struct dirent *de;
	DIR *d;
	size_t i;

	fe->need_rescan = 0;
	fe->dropped = 0;
	d = opendir(fe->dir);
	if (!d) {
		log_warn("flow tables: opendir %s", fe->dir);
		return;
	}
	for (i = 0; i < fe->n; i++)
		fe->t[i]->seen = 0;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct ft *t;

		if (!name_ok(de->d_name) || dir_path(fe, de->d_name, path, sizeof(path)) < 0)
			continue;
		t = ft_find(fe, path);
		if (t) {
			t->seen = 1;
			continue;
		}
		dir_add(fe, de->d_name);
	}
	closedir(d);
	for (i = 0; i < fe->n;) {
		struct ft *t = fe->t[i];

		if (!t->seen)
			ft_free(fe, t);   /* swaps another entry into i */
		else
			i++;
	}
}

/* ---- public: set-up ---------------------------------------------------------- */

struct flow_engine *flow_engine_open(const char *dir, char *err, size_t errlen)
{
	struct flow_engine *fe;
	size_t dl;
	int i, rc;

	if (!dir || !*dir)
		dir = NSFT_DEFAULT_DIR;
	dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl >= sizeof(fe->dir) - NAME_MAX - 2) {
		util_errf(err, errlen, "flow table directory %s: name too long", dir);
		return NULL;
	}
	fe = calloc(1, sizeof(*fe));
	if (!fe) {
		util_errf(err, errlen, "flow tables %s: out of memory", dir);
		return NULL;
	}
	memcpy(fe->dir, dir, dl);
	fe->dir[dl] = '\0';
	fe->wd = -1;
	fe->ifd = -1;
	fe->epfd = -1;
	/* the first pass reads the header with the first chunk (ft_read) */
	fe->buf[0] = malloc(NSFT_MAX_HDR_SIZE + FE_CHUNK);
	for (i = 1; i < 3; i++)
		fe->buf[i] = malloc(FE_CHUNK);
	fe->rbuf = malloc(NSFT_MAX_REC_SIZE);
	fe->cv = claimv_new(0);
	if (!fe->buf[0] || !fe->buf[1] || !fe->buf[2] || !fe->rbuf || !fe->cv) {
		util_errf(err, errlen, "flow tables %s: out of memory", fe->dir);
		goto fail;
	}
	fe->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fe->ifd < 0) {
		util_errf(err, errlen, "flow tables %s: inotify_init1: %s", fe->dir, strerror(errno));
		goto fail;
	}
	fe->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (fe->epfd < 0 ||
	    epoll_ctl(fe->epfd, EPOLL_CTL_ADD, fe->ifd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = NULL }) < 0) {
		util_errf(err, errlen, "flow tables %s: epoll: %s", fe->dir, strerror(errno));
		goto fail;
	}
	rc = dir_watch(fe);
	if (rc < 0) {
		util_errf(err, errlen, "flow table directory %s: cannot create or watch: %s",
			  fe->dir, strerror(-rc));
		goto fail;
	}
	dir_rescan(fe);
	return fe;
fail:
	flow_engine_close(fe);
	return NULL;
}

int flow_engine_fd(const struct flow_engine *fe)
{
	return fe ? fe->epfd : -1;
}

void flow_engine_close(struct flow_engine *fe)
{
	int i;

	if (!fe)
		return;
	while (fe->n)
		ft_free(fe, fe->t[fe->n - 1]);
	free(fe->t);
	while (fe->nown) {       /* none left after ft_free; defensive */
		struct owner *o = fe->own[--fe->nown];

		if (o->pidfd >= 0)
			close(o->pidfd);
		free(o);
	}
	free(fe->own);
	if (fe->epfd >= 0)
		close(fe->epfd);
	if (fe->ifd >= 0)
		close(fe->ifd);
	for (i = 0; i < 3; i++)
		free(fe->buf[i]);
	free(fe->rbuf);
	claimv_free(fe->cv);
	free(fe);
}

static void inotify_drain(struct flow_engine *fe)
{
	union {
		struct inotify_event ev;
		char b[64 * 1024];
	} u;
	int rounds;

	for (rounds = 0; rounds < 64; rounds++) {
		ssize_t n = read(fe->ifd, u.b, sizeof(u.b));
		size_t off = 0;

		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				log_warn("flow tables %s: reading inotify events", fe->dir);
			break;
		}
		while (off + sizeof(struct inotify_event) <= (size_t)n) {
			struct inotify_event ev;
			char name[NAME_MAX + 1];
			size_t nl;

			memcpy(&ev, u.b + off, sizeof(ev));
			if (off + sizeof(ev) + ev.len > (size_t)n)
				break;
			nl = strnlen(u.b + off + sizeof(ev), ev.len);
			if (nl > NAME_MAX)
				nl = NAME_MAX;
			memcpy(name, u.b + off + sizeof(ev), nl);
			name[nl] = '\0';
			off += sizeof(ev) + ev.len;
			if (ev.mask & IN_Q_OVERFLOW) {
				fe->need_rescan = 1;
				continue;
			}
			if (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
				if (ev.wd == fe->wd) {
					if (!(ev.mask & IN_IGNORED))
						inotify_rm_watch(fe->ifd, fe->wd);
					fe->wd = -1;
					log_warnx("flow table directory %s was removed or moved; watching again on the next poll",
						  fe->dir);
				}
				continue;
			}
			if (ev.wd != fe->wd || !nl)
				continue;
			if (ev.mask & (IN_DELETE | IN_MOVED_FROM))
				dir_del(fe, name);
			else if (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))
				dir_add(fe, name);
		}
	}
	if (fe->need_rescan && fe->wd >= 0)
		dir_rescan(fe);
}

/* The epoll set's events: owners that exited are marked dead (their
 * tables dropped by the next poll), then the directory's events. In that
 * order: draining inotify can drop a table and free its owner, whose
 * event may be in the same batch. */
void flow_engine_handle(struct flow_engine *fe)
{
	struct epoll_event ev[64];
	int n;

	n = epoll_wait(fe->epfd, ev, 64, 0);
	if (n < 0 && errno != EINTR)
		log_warn("flow tables %s: epoll_wait", fe->dir);
	for (int i = 0; i < n; i++) {
		struct owner *o = ev[i].data.ptr;

		if (o)
			o->dead = 1;
	}
	inotify_drain(fe);
}

int flow_engine_poll(struct flow_engine *fe, flow_emit_fn emit, void *arg)
{
	uint64_t now = loop_mono_ns();
	struct fe_budget *b = &fe->budget;
	int emitted = 0;
	size_t i;

	b->total = 0;
	b->n = 0;
	fe->verifies = 0;
	fe->scans = 0;

	if (fe->wd < 0) {
		int rc = dir_watch(fe);

		if (rc < 0) {
			if (!fe->logged_dir)
				log_warnx("flow table directory %s: cannot create or watch: %s",
					  fe->dir, strerror(-rc));
			fe->logged_dir = 1;
		} else {
			fe->logged_dir = 0;
			fe->need_rescan = 1;
		}
	}
	if (fe->need_rescan && fe->wd >= 0)
		dir_rescan(fe);
	owners_check(fe);
	/* the claims' namespaces looked at once in the poll: nothing in it
	 * changes the ports */
	claimv_batch(fe->cv, 1);
	for (i = 0; i < fe->n; i++) {
		struct ft *t = fe->t[i];

		if ((t->st == T_ACTIVE || t->st == T_BAD) && t->own && t->own->dead)
			ft_dead(fe, t);
		switch (t->st) {
		case T_ACTIVE:
			ft_verify_due(fe, t, now);
			emitted += ft_read(fe, t, now, b, emit, arg);
			break;
		case T_BAD:
			if ((t->fd < 0 && t->open_errno && t->open_errno != ENOENT) ||
			    t->bad == P_DUP || t->bad == P_NOTYET || ft_changed(t)) {
				if (t->fd < 0)
					ft_open(fe, t);
				else
					ft_validate(fe, t);
				if (t->st == T_ACTIVE)
					emitted += ft_read(fe, t, now, b, emit, arg);
			}
			break;
		case T_WAIT:
			if (fe->nopen < FLOW_ENGINE_MAX_TABLES) {
				ft_open(fe, t);
				if (t->st == T_ACTIVE)
					emitted += ft_read(fe, t, now, b, emit, arg);
			}
			break;
		case T_DEAD:
			break;
		}
	}
	claimv_batch(fe->cv, 0);
	if (fe->nopen < FLOW_ENGINE_MAX_TABLES)
		fe->logged_limit = 0;
	fe->polls++;
	return emitted;
}

int flow_engine_idle(const struct flow_engine *fe)
{
	if (!fe || fe->wd < 0 || fe->need_rescan)
		return 0;
	/* a dead owner's table is read no more: it changes only by the
	 * directory's events (dir_add opens it again) */
	for (size_t i = 0; i < fe->n; i++)
		if (fe->t[i]->st != T_DEAD)
			return 0;
	return 1;
}

size_t flow_engine_tables(const struct flow_engine *fe, flow_engine_table_fn cb, void *arg)
{
	size_t i;

	if (!fe)
		return 0;
	for (i = 0; cb && i < fe->n; i++) {
		const struct ft *t = fe->t[i];
		const char *note = t->st == T_ACTIVE && !t->pid_ok && t->pidnote[0] ?
				   t->pidnote : NULL;

		/* an unverified owner pid is not shown as the table's pid */
		cb(t->path, t->engine, t->pid_ok ? (int)t->pid : 0, t->records,
		   t->problem[0] ? t->problem : NULL, note, arg);
	}
	return fe->n;
}

/* ---- the flow-source ops table (host scope) ---- */

static int fe_src_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	struct flow_engine *fe;

	s->err[0] = '\0';
	s->ops = &flow_src_engine_ops;
	errno = 0;
	fe = flow_engine_open(ctx ? ctx->dir : NULL, s->err, sizeof(s->err));
	if (!fe)
		return -(errno ? errno : EIO);
	if (ctx && ctx->claim_route)
		claimv_set_route(fe->cv, FLOW_SRC_ENGINE, ctx->claim_route, ctx->claim_route_arg);
	s->priv = fe;
	return 0;
}

static int fe_src_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	if (!s->priv) {
		util_errf(s->err, sizeof(s->err), "flow tables: source not open");
		return -EBADF;
	}
	int n;

	/* sessions carry the engine's send and receive times: their waits
	 * are dated by them and planned by the detector, each table looked
	 * at once a refresh (shared memory wakes no one); a table that
	 * appears is an inotify event (fe_src_handle), an owner's death a
	 * pidfd's, so with none there is nothing to look at */
	n = flow_engine_poll(s->priv, emit, arg);
	s->sched.next_ns = flow_engine_idle(s->priv) ? FLOW_SRC_NO_NEXT : flow_src_idle_next(s);
	return n;
}

static int fe_src_fd(const struct flow_src *s)
{
	return flow_engine_fd(s->priv);
}

static void fe_src_handle(struct flow_src *s)
{
	int idle;

	if (!s->priv)
		return;
	idle = flow_engine_idle(s->priv);
	flow_engine_handle(s->priv);
	/* a table came while none was looked at: read now, not when the
	 * detector next polls for something else */
	if (idle && !flow_engine_idle(s->priv))
		s->wake = 1;
}

static void table_json(const char *path, const char *engine, int pid,
		       unsigned records, const char *problem, const char *pid_note, void *arg)
{
	struct json_object *o = json_object_new_object();

	jx_add_str(o, "path", path);
	jx_add_str(o, "engine", engine);
	jx_add_int(o, "pid", pid);
	jx_add_int(o, "records", (int)records);
	if (problem)
		jx_add_str(o, "problem", problem);
	if (pid_note)
		jx_add_str(o, "pid_unverified", pid_note);
	json_object_array_add(arg, o);
}

/* The directory and one object per table, as `nicstallctl status` shows
 * them: path, engine, pid, records (emitted by the last poll), problem. */
static void fe_src_status(const struct flow_src *s, struct json_object *out)
{
	const struct flow_engine *fe = s->priv;
	struct json_object *t;

	if (!fe || !out)
		return;
	t = json_object_new_array();
	jx_add_str(out, "dir", fe->dir);
	flow_engine_tables(fe, table_json, t);
	json_object_object_add(out, "tables", t);
}

static void fe_src_close(struct flow_src *s)
{
	flow_engine_close(s->priv);
	s->priv = NULL;
}

const struct flow_src_ops flow_src_engine_ops = {
	.name = "engine",
	.kind = FLOW_SRC_ENGINE,
	.host = 1,
	.open = fe_src_open,
	.poll = fe_src_poll,
	.fd = fe_src_fd,
	.handle = fe_src_handle,
	.status = fe_src_status,
	.close = fe_src_close,
};
