/* flow_engine_owner: the owners of engine flow tables: one record per owner
 * pid (its pidfd, shared by every table claiming it), whether the claim is
 * believed, and owner liveness. The tables themselves: flow_engine_read.c. */

#include "collectors/flows/flow_engine_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <inttypes.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

/* Record a problem of t; log it the first time for this file. */
void ft_problem(struct ft *t, uint32_t kind, const char *fmt, ...)
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

struct owner *ft_owner_get(struct flow_engine *fe, pid_t pid)
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
	} else {
		/* readable once the process exits (pidfd_poll, kernel/pid.c):
		 * one event, then flow_engine_handle marks it dead */
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = o };

		if (epoll_ctl(fe->epfd, EPOLL_CTL_ADD, o->pidfd, &ev) < 0) {
			close(o->pidfd);        /* watched with kill(pid, 0) */
			o->pidfd = -1;
		}
	}
	fe->own[fe->nown++] = o;
	return o;
}

void ft_owner_put(struct flow_engine *fe, struct owner *o)
{
	size_t i;

	if (!o || --o->refs)
		return;
	for (i = 0; i < fe->nown; i++)
		if (fe->own[i] == o) {
			fe->own[i] = fe->own[--fe->nown];
			break;
		}
	if (o->pidfd >= 0) {
		/* out of the set first: a fork in flight (probe_exec, before
		 * its close_range and execve) holds the file, so close() alone
		 * leaves it in the set with data.ptr dangling */
		epoll_ctl(fe->epfd, EPOLL_CTL_DEL, o->pidfd, NULL);
		close(o->pidfd);
	}
	free(o->maps);
	free(o->fds);
	free(o);
}

/* ---- the owner pid's claim ----------------------------------------------
 * The header's owner_pid is written by whoever wrote the file. Believed
 * only when the process runs as the file's owner (real or effective uid)
 * and holds the table mapped (/proc/PID/maps: dev and inode) or open
 * (/proc/PID/fdinfo: mnt_id and ino). Otherwise the pid is "unverified":
 * its flows carry no pid, so nothing of that process (command line,
 * threads) is ever read for an incident. Only procfs is read: it never
 * blocks. */

static char *proc_read(const char *path, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0 || !b) {
		if (fd >= 0)
			close(fd);
		free(b);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(b, cap + 1);
			if (!nb)
				break;
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*len = n;
	return b;
}

static int owner_uids(struct owner *o)
{
	char path[64], *b, *u;
	size_t n;
	unsigned long r, e;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)o->pid);
	b = proc_read(path, 64 << 10, &n);
	if (!b)
		return -errno;
	u = strstr(b, "\nUid:");
	if (!u || sscanf(u + 5, "%lu %lu", &r, &e) != 2) {
		free(b);
		return -EINVAL;
	}
	o->ruid = (uid_t)r;
	o->euid = (uid_t)e;
	o->uid_ok = 1;
	free(b);
	return 0;
}

/* The (dev, inode) pairs of the process's file mappings, once per poll. */
static int owner_maps(struct flow_engine *fe, struct owner *o)
{
	char path[64], *b, *line, *save = NULL;
	size_t n, cap = 0;

	if (o->maps_poll == fe->polls + 1)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)o->pid);
	b = proc_read(path, FE_MAPS_MAX, &n);
	if (!b)
		return -errno;
	o->nmaps = 0;
	for (line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned maj, min;
		unsigned long long ino;

		/* start-end perms offset major:minor inode [path] */
		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) != 3 || !ino)
			continue;
		if (o->nmaps == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct fe_mapid *nm = realloc(o->maps, nc * sizeof(*nm));

			if (!nm)
				break;
			o->maps = nm;
			cap = nc;
		}
		o->maps[o->nmaps].dev = makedev(maj, min);
		o->maps[o->nmaps].ino = (ino_t)ino;
		o->nmaps++;
	}
	free(b);
	o->maps_poll = fe->polls + 1;
	return 0;
}

/* The (mnt_id, ino) pairs of the process's open files (fdinfo), once per
 * poll, at most FE_FDS_MAX of them. */
static int owner_fds(struct flow_engine *fe, struct owner *o)
{
	char path[64];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	if (o->fds_poll == fe->polls + 1)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)o->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	o->nfds = 0;
	while ((de = readdir(d)) && o->nfds < FE_FDS_MAX) {
		char p2[64 + sizeof(de->d_name)], *b, *m, *i;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p2, sizeof(p2), "%s/%s", path, de->d_name);
		b = proc_read(p2, 4096, &n);
		if (!b)
			continue;
		m = strstr(b, "mnt_id:");
		i = strstr(b, "\nino:");
		if (m && i) {
			if (o->nfds == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct fe_fdid *nf = realloc(o->fds, nc * sizeof(*nf));

				if (!nf) {
					free(b);
					break;
				}
				o->fds = nf;
				cap = nc;
			}
			o->fds[o->nfds].mnt_id = strtoull(m + 7, NULL, 10);
			o->fds[o->nfds].ino = (ino_t)strtoull(i + 5, NULL, 10);
			o->nfds++;
		}
		free(b);
	}
	closedir(d);
	o->fds_poll = fe->polls + 1;
	return 0;
}

/* Check t's owner claim now; sets pid_ok or pidnote. */
void ft_verify(struct flow_engine *fe, struct ft *t, uint64_t now)
{
	struct owner *o = t->own;
	struct statx sx;
	int rc;

	t->pid_checked_ns = now;
	t->pid_ok = 0;
	t->pidnote[0] = '\0';
	/* first: what follows is about this process, not one that reuses
	 * the pid later (the claims check it again, claimv.h) */
	t->start = util_proc_start(t->pid);
	if (!o)
		return;
	rc = owner_uids(o);
	if (rc < 0) {
		snprintf(t->pidnote, sizeof(t->pidnote), "owner pid %d unverified: /proc/%d: %s",
			 (int)t->pid, (int)t->pid, strerror(-rc));
		return;
	}
	if (o->ruid != t->uid && o->euid != t->uid) {
		snprintf(t->pidnote, sizeof(t->pidnote),
			 "owner pid %d unverified: it runs as uid %u, the table belongs to uid %u",
			 (int)t->pid, (unsigned)o->euid, (unsigned)t->uid);
		goto refused;
	}
	/* reading a process's maps and fds is bounded per poll: a burst of
	 * tables claiming processes with many fds is checked over a few polls */
	if (o->maps_poll != fe->polls + 1 && fe->scans >= FE_SCANS_PER_POLL) {
		snprintf(t->pidnote, sizeof(t->pidnote), "owner pid %d not checked yet",
			 (int)t->pid);
		t->pid_checked_ns = 0;
		return;
	}
	if (o->maps_poll != fe->polls + 1)
		fe->scans++;
	if (owner_maps(fe, o) == 0)
		for (size_t i = 0; i < o->nmaps; i++)
			if (o->maps[i].dev == t->dev && o->maps[i].ino == t->ino) {
				t->pid_ok = 1;
				return;
			}
	/* the daemon holds every table open itself: for its own pid only a
	 * mapping counts */
	if (o->pid != getpid() && o->fds_poll != fe->polls + 1 &&
	    fe->scans >= FE_SCANS_PER_POLL) {
		snprintf(t->pidnote, sizeof(t->pidnote), "owner pid %d not checked yet",
			 (int)t->pid);
		t->pid_checked_ns = 0;
		return;
	}
	if (o->pid != getpid() && o->fds_poll != fe->polls + 1)
		fe->scans++;
	if (o->pid != getpid() &&
	    statx(t->fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID) && owner_fds(fe, o) == 0)
		for (size_t i = 0; i < o->nfds; i++)
			if (o->fds[i].mnt_id == sx.stx_mnt_id && o->fds[i].ino == t->ino) {
				t->pid_ok = 1;
				return;
			}
	snprintf(t->pidnote, sizeof(t->pidnote),
		 "owner pid %d unverified: it neither maps nor holds the table open", (int)t->pid);
refused:
	if (!(t->logged & P_PID)) {
		t->logged |= P_PID;
		log_warnx("flow table %s: %s; its flows carry no pid", t->path, t->pidnote);
	}
}

void ft_verify_due(struct flow_engine *fe, struct ft *t, uint64_t now)
{
	if (t->pid_ok || !t->own || now - t->pid_checked_ns < FE_VERIFY_RETRY_NS ||
	    fe->verifies >= FE_VERIFY_PER_POLL)
		return;
	fe->verifies++;
	ft_verify(fe, t, now);
}

/* The owners without a pidfd (pidfd_open or the epoll set refused it):
 * kill(pid, 0) each poll. The others' deaths come as events on the epoll
 * set (flow_engine_handle): no system call here. */
void owners_check(struct flow_engine *fe)
{
	for (size_t i = 0; i < fe->nown; i++) {
		struct owner *o = fe->own[i];

		if (!o->dead && o->pidfd < 0 && kill(o->pid, 0) < 0 && errno == ESRCH)
			o->dead = 1;
	}
}

void ft_cache_drop(struct ft *t)
{
	free(t->cache);
	free(t->cok);
	free(t->hint);
	t->cache = NULL;
	t->cok = NULL;
	t->hint = NULL;
	t->ncache = 0;
}

void ft_release(struct flow_engine *fe, struct ft *t)
{
	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
		fe->nopen--;
	}
	ft_owner_put(fe, t->own);
	t->own = NULL;
	t->records = 0;
	ft_cache_drop(t);
}

void ft_dead(struct flow_engine *fe, struct ft *t)
{
	ft_problem(t, P_DEAD, "owner pid %d (engine \"%s\") is gone; table dropped",
		   (int)t->pid, t->engine);
	ft_release(fe, t);
	t->st = T_DEAD;
}
