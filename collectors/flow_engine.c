/* flow_engine: read engine flow tables (nicstall/flowtab.h) as hostile input.
 *
 * Why pread and not a shared mapping: an engine (or anyone who can write the
 * directory) can truncate a table at any time, and touching a mapped page
 * past the new end raises SIGBUS. pread() of a truncated range just returns
 * short. Each poll copies the in-use records of a table chunk by chunk,
 * three times (A, B, C): every load of pass A happens before every load of
 * pass B (separate system calls), and every load of B before every load of
 * C, so a record whose seq reads equal and even in A and C was not written
 * while B copied it, whatever order the kernel copies bytes within one call.
 * Records that fail are retried alone (seq, record, seq; at most 3 times,
 * with a per-table budget) and otherwise skipped as unstable for this poll.
 *
 * Table states:
 *   ACTIVE   fd open, header valid: read on every poll.
 *   BAD      fd open (or not), header invalid: ignored until the file changes
 *            (header bytes, size or inode), checked cheaply on each poll.
 *   DEAD     owner process gone: fd closed, kept until the file goes away or
 *            is replaced.
 *   WAIT     over FLOW_ENGINE_MAX_TABLES: no fd, promoted when room frees.
 * Owner liveness: one pidfd per owner pid, all polled with one poll() call
 * per flow_engine_poll(); kill(pid, 0) where pidfds are not available. */
#include "collectors/flow_engine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nicstall/flowtab.h>

#include "lib/log.h"

#define FE_HDR 128u                 /* bytes of the v1 header we read */
#define FE_CHUNK (64u << 10)        /* bytes per read pass */
#define FE_RETRIES 3
#define FE_RETRY_BUDGET 32          /* records retried alone per table per poll */
#define FE_HASH 4096u
#define FE_PID_MAX 4194304          /* PID_MAX_LIMIT */
#define FE_FUTURE_NS 1000000000ull  /* times this far ahead are bogus */
#define FE_FUSE_MAGIC 0x65735546

/* Problem kinds; each is logged once per table and file (inode). */
enum {
	P_OPEN = 1u << 0, P_NOTREG = 1u << 1, P_SHORT = 1u << 2,
	P_MAGIC = 1u << 3, P_VERSION = 1u << 4, P_HDRSIZE = 1u << 5,
	P_RECSIZE = 1u << 6, P_CAPACITY = 1u << 7, P_TOOBIG = 1u << 8,
	P_FILESIZE = 1u << 9, P_ENGINE = 1u << 10, P_PID = 1u << 11,
	P_DEAD = 1u << 12, P_TRUNC = 1u << 13, P_READ = 1u << 14,
	P_COUNT = 1u << 15, P_UNSTABLE = 1u << 16, P_FAMILY = 1u << 17,
	P_MAPPED = 1u << 18, P_FUTURE = 1u << 19, P_DUP = 1u << 20,
	P_TOTAL = 1u << 21, P_LIMIT = 1u << 22, P_FS = 1u << 23,
	P_GONE = 1u << 24, P_NOTYET = 1u << 25,
};

enum ft_state { T_ACTIVE, T_BAD, T_DEAD, T_WAIT };

struct owner {
	pid_t pid;
	int pidfd;              /* -1: use kill(pid, 0) */
	unsigned refs;
	int dead;
};

struct ft {
	char *path;
	int registered;         /* explicit, outside the watched directory */
	enum ft_state st;
	int fd;                 /* -1 when not held */
	int open_errno;         /* last open() failure, 0 if none */
	int have_id;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint32_t logged;        /* P_* already logged for this inode */
	uint32_t bad;           /* P_* that made it BAD */
	char problem[200];
	unsigned char hdr[FE_HDR]; /* header as last read */
	size_t hdrlen;
	uint32_t hs, rs, cap;
	pid_t pid;
	char engine[NSFT_ENGINE_LEN];
	struct owner *own;
	unsigned records;
	size_t idx;             /* in fe->t */
	struct ft *hnext;
	int seen;               /* rescan mark */
};

struct flow_engine {
	char dir[PATH_MAX];
	int ifd, wd;
	struct ft **t;
	size_t n, alloc;
	struct ft *hash[FE_HASH];
	unsigned nopen;         /* entries holding an fd */
	struct owner **own;
	size_t nown, aown;
	struct pollfd *pfd;
	size_t apfd;
	unsigned char *buf[3], *rbuf;
	int logged_limit, logged_entries, dropped, logged_dir, logged_emfile;
	int need_rescan;
};

/* ---- helpers --------------------------------------------------------------- */

static uint64_t fe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned fe_hashstr(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % FE_HASH;
}

static void fe_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fe_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Record a problem of t; log it the first time for this file. */
static void ft_problem(struct ft *t, uint32_t kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ft_problem(struct ft *t, uint32_t kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->problem, sizeof(t->problem), fmt, ap);
	va_end(ap);
	if (!(t->logged & kind)) {
		t->logged |= kind;
		log_warnx("flow table %s: %s", t->path, t->problem);
	}
}

static int name_ok(const char *name)
{
	size_t n = strlen(name), s = strlen(NSFT_SUFFIX);

	return name[0] != '.' && n > s && strcmp(name + n - s, NSFT_SUFFIX) == 0;
}

static uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- owners ------------------------------------------------------------------ */

static struct owner *owner_get(struct flow_engine *fe, pid_t pid)
{
	struct owner *o, **no;
	size_t i;

	for (i = 0; i < fe->nown; i++)
		if (fe->own[i]->pid == pid && !fe->own[i]->dead) {
			fe->own[i]->refs++;
			return fe->own[i];
		}
	if (fe->nown == fe->aown) {
		size_t na = fe->aown ? fe->aown * 2 : 16;

		no = realloc(fe->own, na * sizeof(*no));
		if (!no)
			return NULL;
		fe->own = no;
		fe->aown = na;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->pid = pid;
	o->refs = 1;
	o->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (o->pidfd < 0) {
		if (errno == ESRCH)
			o->dead = 1;
		o->pidfd = -1;
	}
	fe->own[fe->nown++] = o;
	return o;
}

static void owner_put(struct flow_engine *fe, struct owner *o)
{
	size_t i;

	if (!o || --o->refs)
		return;
	for (i = 0; i < fe->nown; i++)
		if (fe->own[i] == o) {
			fe->own[i] = fe->own[--fe->nown];
			break;
		}
	if (o->pidfd >= 0)
		close(o->pidfd);
	free(o);
}

/* One poll() over every owner's pidfd; kill(pid, 0) for the others. */
static void owners_check(struct flow_engine *fe)
{
	size_t i, k = 0;

	if (fe->nown > fe->apfd) {
		struct pollfd *np = realloc(fe->pfd, fe->nown * sizeof(*np));

		if (!np)
			return;
		fe->pfd = np;
		fe->apfd = fe->nown;
	}
	for (i = 0; i < fe->nown; i++) {
		struct owner *o = fe->own[i];

		if (o->dead)
			continue;
		if (o->pidfd < 0) {
			if (kill(o->pid, 0) < 0 && errno == ESRCH)
				o->dead = 1;
			continue;
		}
		fe->pfd[k].fd = o->pidfd;
		fe->pfd[k].events = POLLIN;
		fe->pfd[k].revents = 0;
		k++;
	}
	if (k && poll(fe->pfd, k, 0) > 0) {
		size_t j = 0;

		for (i = 0; i < fe->nown && j < k; i++) {
			struct owner *o = fe->own[i];

			if (o->dead || o->pidfd < 0)
				continue;
			if (fe->pfd[j].fd == o->pidfd && fe->pfd[j].revents)
				o->dead = 1;
			j++;
		}
	}
}

/* ---- tables ------------------------------------------------------------------ */

static void ft_release(struct flow_engine *fe, struct ft *t)
{
	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
		fe->nopen--;
	}
	owner_put(fe, t->own);
	t->own = NULL;
	t->records = 0;
}

static void ft_dead(struct flow_engine *fe, struct ft *t)
{
	ft_problem(t, P_DEAD, "owner pid %d (engine \"%s\") is gone; table dropped",
		   (int)t->pid, t->engine);
	ft_release(fe, t);
	t->st = T_DEAD;
}

static void ft_setbad(struct ft *t, uint32_t kind)
{
	t->st = T_BAD;
	t->bad = kind;
	t->records = 0;
}

/* Copy the engine name, printable ASCII only. */
static void copy_engine(char *dst, const unsigned char *src)
{
	size_t i;

	for (i = 0; i + 1 < NSFT_ENGINE_LEN && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
	dst[i] = '\0';
}

/* Read and check the header of an open table; ACTIVE, BAD or DEAD after. */
static void ft_validate(struct flow_engine *fe, struct ft *t)
{
	unsigned char *h = t->hdr;
	struct stat st;
	uint32_t ver, hs, rs, cap, pid;
	uint64_t need;
	ssize_t n;
	size_t i;

	owner_put(fe, t->own);
	t->own = NULL;
	t->records = 0;
	t->problem[0] = '\0';
	if (fstat(t->fd, &st) < 0) {
		ft_problem(t, P_READ, "fstat: %s", strerror(errno));
		ft_setbad(t, P_READ);
		return;
	}
	t->size = st.st_size;
	n = pread(t->fd, h, FE_HDR, 0);
	if (n < 0) {
		t->hdrlen = 0;
		ft_problem(t, P_READ, "reading the header: %s", strerror(errno));
		ft_setbad(t, P_READ);
		return;
	}
	t->hdrlen = (size_t)n;
	if (n < (ssize_t)FE_HDR) {
		if (st.st_size == 0 && time(NULL) - st.st_ctim.tv_sec < 2) {
			/* just created in place: give the writer a moment */
			snprintf(t->problem, sizeof(t->problem), "empty, header not written yet");
			ft_setbad(t, P_NOTYET);
			return;
		}
		ft_problem(t, P_SHORT, "%lld bytes, smaller than a table header (%u); ignored until it changes",
			   (long long)st.st_size, FE_HDR);
		ft_setbad(t, P_SHORT);
		return;
	}
	if (memcmp(h, NSFT_MAGIC, 8) != 0) {
		static const unsigned char zero[8];

		if (memcmp(h, zero, 8) == 0 && time(NULL) - st.st_ctim.tv_sec < 2) {
			snprintf(t->problem, sizeof(t->problem), "header not written yet");
			ft_setbad(t, P_NOTYET);
			return;
		}
		ft_problem(t, P_MAGIC, "bad magic (not \"%s\"); ignored until it changes", NSFT_MAGIC);
		ft_setbad(t, P_MAGIC);
		return;
	}
	ver = ld32(h + offsetof(struct nsft_header, version));
	hs = ld32(h + offsetof(struct nsft_header, header_size));
	rs = ld32(h + offsetof(struct nsft_header, record_size));
	cap = ld32(h + offsetof(struct nsft_header, capacity));
	pid = ld32(h + offsetof(struct nsft_header, owner_pid));
	if (ver != NSFT_VERSION) {
		ft_problem(t, P_VERSION, "layout version %u, this daemon reads %u; ignored until it changes",
			   ver, NSFT_VERSION);
		ft_setbad(t, P_VERSION);
		return;
	}
	if (hs < sizeof(struct nsft_header) || hs > NSFT_MAX_HDR_SIZE || hs % 8) {
		ft_problem(t, P_HDRSIZE, "header size %u out of range [%zu, %u] or not a multiple of 8",
			   hs, sizeof(struct nsft_header), NSFT_MAX_HDR_SIZE);
		ft_setbad(t, P_HDRSIZE);
		return;
	}
	if (rs < sizeof(struct nsft_record) || rs > NSFT_MAX_REC_SIZE || rs % 8) {
		ft_problem(t, P_RECSIZE, "record size %u out of range [%zu, %u] or not a multiple of 8",
			   rs, sizeof(struct nsft_record), NSFT_MAX_REC_SIZE);
		ft_setbad(t, P_RECSIZE);
		return;
	}
	if (cap == 0 || cap > NSFT_MAX_CAPACITY) {
		ft_problem(t, P_CAPACITY, "capacity %u out of range [1, %u]", cap, NSFT_MAX_CAPACITY);
		ft_setbad(t, P_CAPACITY);
		return;
	}
	need = (uint64_t)hs + (uint64_t)cap * rs;
	if (need > FLOW_ENGINE_MAX_TABLE_BYTES) {
		ft_problem(t, P_TOOBIG, "capacity %u x %u-byte records = %llu bytes, over the %u-byte limit",
			   cap, rs, (unsigned long long)need, FLOW_ENGINE_MAX_TABLE_BYTES);
		ft_setbad(t, P_TOOBIG);
		return;
	}
	if (need > (uint64_t)st.st_size) {
		ft_problem(t, P_FILESIZE, "capacity %u x %u-byte records needs %llu bytes, the file has %lld",
			   cap, rs, (unsigned long long)need, (long long)st.st_size);
		ft_setbad(t, P_FILESIZE);
		return;
	}
	for (i = 0; i < NSFT_ENGINE_LEN && h[offsetof(struct nsft_header, engine) + i]; i++)
		;
	if (i == NSFT_ENGINE_LEN) {
		ft_problem(t, P_ENGINE, "engine name not NUL-terminated within %d bytes", NSFT_ENGINE_LEN);
		ft_setbad(t, P_ENGINE);
		return;
	}
	copy_engine(t->engine, h + offsetof(struct nsft_header, engine));
	if (pid == 0 || pid > FE_PID_MAX) {
		ft_problem(t, P_PID, "owner pid %u out of range", pid);
		ft_setbad(t, P_PID);
		return;
	}
	t->hs = hs;
	t->rs = rs;
	t->cap = cap;
	t->pid = (pid_t)pid;
	for (i = 0; i < fe->n; i++) {
		struct ft *o = fe->t[i];

		if (o != t && o->fd >= 0 && o->st == T_ACTIVE && o->dev == t->dev &&
		    o->ino == t->ino) {
			ft_problem(t, P_DUP, "same file as %s; ignored", o->path);
			ft_setbad(t, P_DUP);
			return;
		}
	}
	t->own = owner_get(fe, t->pid);
	if (!t->own) {
		snprintf(t->problem, sizeof(t->problem), "out of memory");
		ft_setbad(t, P_READ);
		return;
	}
	if (t->own->dead) {
		ft_dead(fe, t);
		return;
	}
	t->st = T_ACTIVE;
	t->bad = 0;
}

/* (Re)open t->path and validate it. */
static void ft_open(struct flow_engine *fe, struct ft *t)
{
	struct stat st;
	struct statfs sfs;
	int fd;

	ft_release(fe, t);
	t->problem[0] = '\0';
	if (fe->nopen >= FLOW_ENGINE_MAX_TABLES) {
		if (!fe->logged_limit) {
			fe->logged_limit = 1;
			log_warnx("flow tables in %s: more than %d tables; %s and later ones wait for room",
				  fe->dir, FLOW_ENGINE_MAX_TABLES, t->path);
		}
		snprintf(t->problem, sizeof(t->problem), "waiting: over the limit of %d tables read",
			 FLOW_ENGINE_MAX_TABLES);
		t->st = T_WAIT;
		return;
	}
	fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		t->open_errno = errno;
		if (errno == EMFILE || errno == ENFILE) {
			if (!fe->logged_emfile)
				log_warn("flow table %s: open (raise LimitNOFILE)", t->path);
			fe->logged_emfile = 1;
			snprintf(t->problem, sizeof(t->problem), "cannot open: %s", strerror(t->open_errno));
		} else if (errno == ENOENT) {
			/* raced with a removal: the delete event follows */
			snprintf(t->problem, sizeof(t->problem), "file removed");
		} else {
			ft_problem(t, P_OPEN, "cannot open: %s", strerror(t->open_errno));
		}
		t->have_id = 0;
		ft_setbad(t, P_OPEN);
		return;
	}
	t->open_errno = 0;
	if (fstat(fd, &st) < 0) {
		ft_problem(t, P_OPEN, "fstat: %s", strerror(errno));
		close(fd);
		ft_setbad(t, P_OPEN);
		return;
	}
	if (!t->have_id || st.st_dev != t->dev || st.st_ino != t->ino)
		t->logged = 0;          /* a new file: report its problems afresh */
	t->have_id = 1;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->mtime = st.st_mtim;
	if (!S_ISREG(st.st_mode)) {
		ft_problem(t, P_NOTREG, "not a regular file; ignored until it changes");
		close(fd);
		ft_setbad(t, P_NOTREG);
		return;
	}
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == FE_FUSE_MAGIC) {
		ft_problem(t, P_FS, "on a FUSE file system (reads could block); ignored");
		close(fd);
		ft_setbad(t, P_FS);
		return;
	}
	t->fd = fd;
	fe->nopen++;
	ft_validate(fe, t);
}

static struct ft *ft_find(const struct flow_engine *fe, const char *path)
{
	struct ft *t;

	for (t = fe->hash[fe_hashstr(path)]; t; t = t->hnext)
		if (strcmp(t->path, path) == 0)
			return t;
	return NULL;
}

static struct ft *ft_new(struct flow_engine *fe, const char *path, int registered)
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
	t->registered = registered;
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
		t = ft_new(fe, path, 0);
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
	if (t && !t->registered)
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

		if (!t->seen && !t->registered)
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
		fe_seterr(err, errlen, "flow table directory %s: name too long", dir);
		return NULL;
	}
	fe = calloc(1, sizeof(*fe));
	if (!fe) {
		fe_seterr(err, errlen, "flow tables %s: out of memory", dir);
		return NULL;
	}
	memcpy(fe->dir, dir, dl);
	fe->dir[dl] = '\0';
	fe->wd = -1;
	fe->ifd = -1;
	for (i = 0; i < 3; i++)
		fe->buf[i] = malloc(FE_CHUNK);
	fe->rbuf = malloc(NSFT_MAX_REC_SIZE);
	if (!fe->buf[0] || !fe->buf[1] || !fe->buf[2] || !fe->rbuf) {
		fe_seterr(err, errlen, "flow tables %s: out of memory", fe->dir);
		goto fail;
	}
	fe->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fe->ifd < 0) {
		fe_seterr(err, errlen, "flow tables %s: inotify_init1: %s", fe->dir, strerror(errno));
		goto fail;
	}
	rc = dir_watch(fe);
	if (rc < 0) {
		fe_seterr(err, errlen, "flow table directory %s: cannot create or watch: %s",
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
	return fe ? fe->ifd : -1;
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
	free(fe->pfd);
	if (fe->ifd >= 0)
		close(fe->ifd);
	for (i = 0; i < 3; i++)
		free(fe->buf[i]);
	free(fe->rbuf);
	free(fe);
}

int flow_engine_register(struct flow_engine *fe, const char *path, char *err, size_t errlen)
{
	struct ft *t;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !*path || strlen(path) >= PATH_MAX) {
		fe_seterr(err, errlen, "flow table registration: empty or too long path");
		return -EINVAL;
	}
	if (ft_find(fe, path)) {
		fe_seterr(err, errlen, "flow table %s: already tracked", path);
		return -EEXIST;
	}
	t = ft_new(fe, path, 1);
	if (!t) {
		fe_seterr(err, errlen, "flow table %s: table limit reached or out of memory", path);
		return -ENOSPC;
	}
	ft_open(fe, t);
	if (t->st == T_ACTIVE)
		return 0;
	fe_seterr(err, errlen, "flow table %s: %s", path, t->problem);
	return 1;
}

void flow_engine_handle(struct flow_engine *fe)
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

/* ---- polling ---------------------------------------------------------------- */

/* Has the file changed since we looked (inode, size, header bytes)? */
static int ft_changed(struct ft *t)
{
	unsigned char h[FE_HDR];
	struct stat st;
	ssize_t n;

	if (t->fd < 0) {
		if (stat(t->path, &st) < 0)
			return 0;
		return !t->have_id || st.st_dev != t->dev || st.st_ino != t->ino ||
		       st.st_size != t->size || st.st_mtim.tv_sec != t->mtime.tv_sec ||
		       st.st_mtim.tv_nsec != t->mtime.tv_nsec;
	}
	if (fstat(t->fd, &st) < 0 || st.st_size != t->size)
		return 1;
	n = pread(t->fd, h, sizeof(h), 0);
	if (n < 0)
		return 0;
	return (size_t)n != t->hdrlen || memcmp(h, t->hdr, (size_t)n) != 0;
}

/* For registered tables: is path now another file than the one we hold?
 * A removed file is let go (and picked up again when it reappears). */
static int ft_replaced(struct flow_engine *fe, struct ft *t)
{
	struct stat st;

	if (stat(t->path, &st) < 0) {
		if (errno == ENOENT && t->have_id) {
			if (t->st != T_DEAD)
				ft_problem(t, P_GONE, "file removed; waiting for it to reappear");
			else
				snprintf(t->problem, sizeof(t->problem), "file removed");
			ft_release(fe, t);
			ft_setbad(t, P_GONE);
			t->have_id = 0;
			t->open_errno = ENOENT;
		}
		return 0;
	}
	return !t->have_id || st.st_dev != t->dev || st.st_ino != t->ino;
}

/* Retry one record alone: seq, record, seq. Returns the copy or NULL. */
static const unsigned char *ft_retry(struct flow_engine *fe, struct ft *t, uint64_t off)
{
	unsigned char s1[8], s2[8];
	int k;

	for (k = 0; k < FE_RETRIES; k++) {
		if (pread(t->fd, s1, 8, (off_t)off) != 8 ||
		    pread(t->fd, fe->rbuf, t->rs, (off_t)off) != (ssize_t)t->rs ||
		    pread(t->fd, s2, 8, (off_t)off) != 8)
			return NULL;
		if (memcmp(s1, s2, 8) == 0 && !(ld64(s1) & 1) && memcmp(fe->rbuf, s1, 8) == 0)
			return fe->rbuf;
	}
	return NULL;
}

static int mapped4(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, 12) == 0;
}

/* Emit one stable record copy; 1 if emitted. */
static int ft_emit(struct ft *t, unsigned idx, const unsigned char *p, uint64_t now,
		   flow_emit_fn emit, void *arg)
{
	struct nsft_record r;
	struct flow_obs o;

	memcpy(&r, p, sizeof(r));
	if (!(r.state & NSFT_ST_OPEN))
		return 0;
	if (r.family != NSFT_FAMILY_NONE && r.family != NSFT_FAMILY_INET4 &&
	    r.family != NSFT_FAMILY_INET6) {
		ft_problem(t, P_FAMILY, "record %u: unknown address family %u; such records skipped",
			   idx, r.family);
		return 0;
	}
	if (r.family == NSFT_FAMILY_INET4 && (!mapped4(r.local_addr) || !mapped4(r.remote_addr))) {
		ft_problem(t, P_MAPPED, "record %u: IPv4 address not in IPv4-mapped form; such records skipped",
			   idx);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.src = FLOW_SRC_ENGINE;
	memcpy(&o.key.saddr, r.local_addr, 16);
	memcpy(&o.key.daddr, r.remote_addr, 16);
	o.key.sport = r.local_port;
	o.key.dport = r.remote_port;
	o.key.proto = r.proto;
	o.session = r.session_id;
	o.tx_msgs = r.tx_msgs;
	o.rx_msgs = r.rx_msgs;
	o.tx_bytes = r.tx_bytes;
	o.rx_bytes = r.rx_bytes;
	o.last_tx_ns = r.last_tx_ns;
	o.last_rx_ns = r.last_rx_ns;
	if (o.last_tx_ns > now + FE_FUTURE_NS || o.last_rx_ns > now + FE_FUTURE_NS) {
		ft_problem(t, P_FUTURE, "record %u: send/receive times ahead of CLOCK_MONOTONIC (engine in a time namespace?); reported as unknown",
			   idx);
		if (o.last_tx_ns > now + FE_FUTURE_NS)
			o.last_tx_ns = 0;
		if (o.last_rx_ns > now + FE_FUTURE_NS)
			o.last_rx_ns = 0;
	}
	o.unsent = r.unsent;
	o.unread = r.unread;
	o.staged = r.staged;
	o.state = r.state;
	o.pid = t->pid;
	memcpy(o.engine, t->engine, sizeof(o.engine));
	emit(&o, arg);
	return 1;
}

static void ft_truncated(struct ft *t)
{
	struct stat st;
	ssize_t n;

	ft_problem(t, P_TRUNC, "truncated or unreadable while in use; ignored until it changes");
	ft_setbad(t, P_TRUNC);
	/* remember what it looks like now, to notice the next change */
	if (fstat(t->fd, &st) == 0)
		t->size = st.st_size;
	n = pread(t->fd, t->hdr, FE_HDR, 0);
	t->hdrlen = n < 0 ? 0 : (size_t)n;
}

/* Read one ACTIVE table; returns records emitted. */
static int ft_read(struct flow_engine *fe, struct ft *t, uint64_t now, uint64_t *total,
		   flow_emit_fn emit, void *arg)
{
	unsigned char h[FE_HDR];
	uint32_t count, i, per, budget = FE_RETRY_BUDGET;
	unsigned unstable = 0;
	int emitted = 0;
	ssize_t n;

	t->problem[0] = '\0';
	t->records = 0;
	n = pread(t->fd, h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h)) {
		ft_truncated(t);
		return 0;
	}
	/* Everything but count and generation must stay as validated. */
	if (memcmp(h, t->hdr, offsetof(struct nsft_header, count)) != 0 ||
	    memcmp(h + offsetof(struct nsft_header, owner_pid), t->hdr + offsetof(struct nsft_header, owner_pid),
		   offsetof(struct nsft_header, generation) - offsetof(struct nsft_header, owner_pid)) != 0) {
		ft_validate(fe, t);
		if (t->st != T_ACTIVE)
			return 0;
		memcpy(h, t->hdr, sizeof(h));
	}
	count = ld32(h + offsetof(struct nsft_header, count));
	if (count > t->cap) {
		ft_problem(t, P_COUNT, "count %u exceeds capacity %u; clamped", count, t->cap);
		count = t->cap;
	}
	if (*total + (uint64_t)count * t->rs > FLOW_ENGINE_MAX_POLL_BYTES) {
		ft_problem(t, P_TOTAL, "skipped: tables hold more than %u bytes of records in all",
			   FLOW_ENGINE_MAX_POLL_BYTES);
		return 0;
	}
	*total += (uint64_t)count * t->rs;
	per = FE_CHUNK / t->rs;
	for (i = 0; i < count; i += per) {
		uint32_t nrec = count - i < per ? count - i : per, j;
		uint64_t off = t->hs + (uint64_t)i * t->rs;
		size_t len = (size_t)nrec * t->rs;
		int k;

		for (k = 0; k < 3; k++) {
			if (pread(t->fd, fe->buf[k], len, (off_t)off) != (ssize_t)len) {
				ft_truncated(t);
				return emitted;
			}
		}
		for (j = 0; j < nrec; j++) {
			const unsigned char *a = fe->buf[0] + (size_t)j * t->rs;
			const unsigned char *b = fe->buf[1] + (size_t)j * t->rs;
			const unsigned char *c = fe->buf[2] + (size_t)j * t->rs;
			const unsigned char *rec = NULL;
			uint64_t sa = ld64(a);

			if (sa == ld64(b) && sa == ld64(c) && !(sa & 1)) {
				rec = b;
			} else if (budget) {
				budget--;
				rec = ft_retry(fe, t, off + (uint64_t)j * t->rs);
			}
			if (!rec) {
				unstable++;
				continue;
			}
			emitted += ft_emit(t, i + j, rec, now, emit, arg);
		}
	}
	if (unstable)
		ft_problem(t, P_UNSTABLE, "%u record(s) changing while read (seq odd or moving); skipped this poll",
			   unstable);
	t->records = (unsigned)emitted;
	return emitted;
}

int flow_engine_poll(struct flow_engine *fe, flow_emit_fn emit, void *arg)
{
	uint64_t now = fe_now(), total = 0;
	int emitted = 0;
	size_t i;

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
	for (i = 0; i < fe->n; i++) {
		struct ft *t = fe->t[i];

		if ((t->st == T_ACTIVE || t->st == T_BAD) && t->own && t->own->dead)
			ft_dead(fe, t);
		if (t->registered && t->st != T_WAIT && ft_replaced(fe, t))
			ft_open(fe, t);
		switch (t->st) {
		case T_ACTIVE:
			emitted += ft_read(fe, t, now, &total, emit, arg);
			break;
		case T_BAD:
			if ((t->fd < 0 && t->open_errno && t->open_errno != ENOENT) ||
			    t->bad == P_DUP || t->bad == P_NOTYET || ft_changed(t)) {
				if (t->fd < 0)
					ft_open(fe, t);
				else
					ft_validate(fe, t);
				if (t->st == T_ACTIVE)
					emitted += ft_read(fe, t, now, &total, emit, arg);
			}
			break;
		case T_WAIT:
			if (fe->nopen < FLOW_ENGINE_MAX_TABLES) {
				ft_open(fe, t);
				if (t->st == T_ACTIVE)
					emitted += ft_read(fe, t, now, &total, emit, arg);
			}
			break;
		case T_DEAD:
			break;
		}
	}
	if (fe->nopen < FLOW_ENGINE_MAX_TABLES)
		fe->logged_limit = 0;
	return emitted;
}

size_t flow_engine_tables(const struct flow_engine *fe, flow_engine_table_fn cb, void *arg)
{
	size_t i;

	if (!fe)
		return 0;
	for (i = 0; cb && i < fe->n; i++) {
		const struct ft *t = fe->t[i];

		cb(t->path, t->engine, (int)t->pid, t->records,
		   t->problem[0] ? t->problem : NULL, arg);
	}
	return fe->n;
}
