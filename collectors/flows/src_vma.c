/* flow_src_vma: flow_src_vma_ops ("vma", host scope), the sockets of
 * unmodified libvma and libxlio processes from their statistics files
 * (collectors/flows/vma_parse.h does the reading, checking and judging).
 *
 * Files: vmastat.<pid> in ctx->vma_dir (VMA_STATS_SHMEM_DIR, default /tmp)
 * and xliostat.<pid> in ctx->xlio_dir (XLIO_STATS_SHMEM_DIR, default
 * /tmp/xlio), found by inotify and a rescan every RESCAN_NS (a directory
 * created later is watched from then on). Every file is written by some
 * local user and is hostile input; what it costs is bounded:
 *  - at most FLOW_VMA_MAX_FILES files are read, FLOW_VMA_FILES_PER_UID of
 *    them one user's; when the slots are short a file none of whose claims
 *    the kernel verified makes room for a new one (the user with the most
 *    files first), a file with a verified claim never does;
 *  - the two copies of a read are one pair of buffers for all files
 *    (twice the largest file, FLOW_VMA_MAX_FILE); the sockets kept are at
 *    most VS_SOCKS_PER_UID per user and VS_SOCKS_TOTAL in all;
 *  - a poll copies at most VS_BYTES_PER_UID bytes of one user's files and
 *    VS_BYTES_PER_POLL in all, files with verified claims first, the rest
 *    in turn; a file left out is read at the next poll;
 *  - a refused file (owner, size, version, a size that fits no layout) is
 *    not opened or read again until it changes (device, inode, size,
 *    mtime): up to VS_REFUSED_MAX names remembered;
 *  - refusals and unverified claims are logged as one summary line per
 *    VS_LOG_NS each, with the count and one example; `nicstallctl status`
 *    lists the recent ones.
 *
 * Every claim a socket block makes (its pid, fd, inode, addresses) is
 * checked against the kernel (collectors/flows/claimv.h) and the observation
 * carries the answer (flow_obs.claim): the stall detector acts on verified
 * claims only (daemon/detect/stall.c).
 *
 * Every poll due (interval_ns, default 100 ms) reads each file (two copies,
 * agreeing blocks only) and then bumps its reader_counter, the one write:
 * the engine copies its counters within 10 ms of seeing the counter move
 * (stats_publisher.cpp should_write()), so the next read finds them fresh,
 * and it keeps publishing only while the counter moves. Between reads the
 * last observations are emitted again, a stale "progress" as "idle". */
#include "collectors/flows/claimv.h"
#include "collectors/flows/src_vma_int.h"
#include "collectors/flows/vma_parse.h"
#include "collectors/flows/flowsel.h"
#include "collectors/flows/flowsrc.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

static uint64_t now_ns(void)
{
	return loop_mono_ns();
}

static void rlog_flush(struct rlog *r, uint64_t now)
{
	if (!r->pending || (r->last_ns && now < r->last_ns + VS_LOG_NS))
		return;
	log_warnx("vma: %u %s%s (%llu so far; e.g. %s); `nicstallctl status` lists the recent ones",
		  r->pending, r->what, r->last_ns ? " in the last minute" : "",
		  (unsigned long long)r->total, r->example);
	r->last_ns = now;
	r->pending = 0;
}

static void rlog_note(struct rlog *r, uint64_t now, const char *example)
{
	r->total++;
	if (!r->pending++)
		util_strlcpy(r->example, example, sizeof(r->example));
	rlog_flush(r, now);
}

static void recent_add(struct vsrc *v, const char *path, const char *why)
{
	struct recent *r = &v->recent[v->recent_at];

	util_strlcpy(r->path, path, sizeof(r->path));
	util_strlcpy(r->why, why, sizeof(r->why));
	v->recent_at = (v->recent_at + 1) % VS_RECENT;
	if (v->nrecent < VS_RECENT)
		v->nrecent++;
}

static void sig_of(const struct stat *st, struct vsig *g)
{
	g->dev = st->st_dev;
	g->ino = st->st_ino;
	g->size = (uint64_t)st->st_size;
	g->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

static int sig_same(const struct vsig *a, const struct vsig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

/* The refused entry of name (k, pid), or the free slot where it goes. */
static struct refused *refused_slot(struct vsrc *v, int k, int pid)
{
	unsigned cap = VS_REFUSED_MAX * 2, h = ((unsigned)pid * 2654435761u + (unsigned)k) % cap;

	for (unsigned i = 0; i < cap; i++) {
		struct refused *r = &v->refused[(h + i) % cap];

		if (!r->used || (r->pid == pid && r->k == k))
			return r;
	}
	return NULL;
}

/* Forget the names the last full rescan did not see (deleted files). */
static void refused_prune(struct vsrc *v)
{
	unsigned cap = VS_REFUSED_MAX * 2;
	struct refused *old = v->refused, *nt = calloc(cap, sizeof(*nt));

	if (!nt)
		return;
	v->refused = nt;
	v->nrefused = 0;
	for (unsigned i = 0; i < cap; i++)
		if (old[i].used && old[i].gen == v->gen) {
			*refused_slot(v, old[i].k, old[i].pid) = old[i];
			v->nrefused++;
		}
	free(old);
}

/* Remember that (k, pid) was refused as it is now (sig), and say why
 * (summarised). */
static void refuse(struct vsrc *v, int k, int pid, const struct vsig *sig, const char *path,
		   const char *why)
{
	struct refused *r = sig && v->nrefused < VS_REFUSED_MAX ? refused_slot(v, k, pid) : NULL;

	if (r) {
		if (!r->used)
			v->nrefused++;
		r->used = 1;
		r->k = (uint8_t)k;
		r->pid = pid;
		r->gen = v->gen;
		r->sig = *sig;
	}
	recent_add(v, path, why);
	rlog_note(&v->log_refused, now_ns(), why);
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

static unsigned files_of(const struct vsrc *v, unsigned uid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < v->nfiles; i++)
		n += flow_vma_file_uid(v->files[i]->f) == uid;
	return n;
}

/* Slots are short: drop a file that was read and none of whose claims
 * the kernel verified, of the user with the most files. 1 made room. */
static int make_room(struct vsrc *v)
{
	int best = -1;
	unsigned bestn = 0;

	for (unsigned i = 0; i < v->nfiles; i++) {
		const struct vfile *vf = v->files[i];
		unsigned n;

		if (!vf->reads || vf->verified)
			continue;
		n = files_of(v, flow_vma_file_uid(vf->f));
		if (best < 0 || n > bestn) {
			best = (int)i;
			bestn = n;
		}
	}
	if (best < 0)
		return 0;
	v->evicted++;
	file_drop(v, (unsigned)best, "no claim of it verified, and the slots are short");
	return 1;
}

/* quiet: an inotify event (a file just created may still be empty: not
 * refused, the next rescan tries again and says why). */
static void file_try(struct vsrc *v, int k, const char *name, int quiet)
{
	const char *dir = v->dir[k];
	enum flow_vma_engine e;
	struct refused *r;
	struct vfile *vf;
	struct stat st;
	struct vsig sig;
	char path[PATH_MAX], err[256];
	int pid;

	if (flow_vma_name(name, &e, &pid) < 0)
		return;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return;
	if (file_find(v, path))
		return;
	if (lstat(path, &st) < 0)
		return;                 /* gone already */
	sig_of(&st, &sig);
	r = refused_slot(v, k, pid);
	if (r && r->used) {
		r->gen = v->gen;
		if (sig_same(&r->sig, &sig))
			return;         /* refused, and unchanged since */
		/* changed: tried again; a new refusal overwrites the entry */
	}
	if (files_of(v, (unsigned)st.st_uid) >= FLOW_VMA_FILES_PER_UID) {
		if (!quiet) {
			util_errf(err, sizeof(err), "%s: uid %u has %u statistics files read already; not read",
				 path, (unsigned)st.st_uid, FLOW_VMA_FILES_PER_UID);
			refuse(v, k, pid, NULL, path, err);
		}
		return;
	}
	if (v->nfiles >= FLOW_VMA_MAX_FILES && !make_room(v)) {
		if (!quiet) {
			util_errf(err, sizeof(err), "%s: %u statistics files read already, each with a verified claim; not read",
				 path, FLOW_VMA_MAX_FILES);
			refuse(v, k, pid, NULL, path, err);
		}
		return;
	}
	vf = calloc(1, sizeof(*vf));
	if (!vf)
		return;
	vf->f = flow_vma_file_open(path, 1, err, sizeof(err));
	if (!vf->f) {
		free(vf);
		if (!quiet)
			refuse(v, k, pid, &sig, path, err);
		return;
	}
	util_strlcpy(vf->path, path, sizeof(vf->path));
	v->files[v->nfiles++] = vf;
	log_info("vma: reading %s (%s, pid %d, uid %u)", path,
		 e == FLOW_VMA_XLIO ? "libxlio" : "libvma", pid, flow_vma_file_uid(vf->f));
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
	v->gen++;
	watch(v);
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
				file_try(v, k, de->d_name, 0);
		if (d)
			closedir(d);
	}
	if (v->nrefused > VS_REFUSED_MAX / 2)
		refused_prune(v);
	rlog_flush(&v->log_refused, v->last_scan_ns);
	rlog_flush(&v->log_claims, v->last_scan_ns);
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
				int len = snprintf(path, sizeof(path), "%s/%s", v->dir[k], ev->name);

				/* no file kept has a name that long (file_try
				 * refuses them) */
				if (len < 0 || (size_t)len >= sizeof(path))
					continue;
				for (unsigned i = 0; i < v->nfiles; i++)
					if (!strcmp(v->files[i]->path, path)) {
						file_drop(v, i, "removed");
						break;
					}
			} else {
				file_try(v, k, ev->name, 1);
			}
		}
	}
}

/* Sockets kept for uid's files other than vf, and for all files. */
static void socks_held(const struct vsrc *v, const struct vfile *vf, unsigned uid,
		       unsigned *mine, unsigned *all)
{
	*mine = *all = 0;
	for (unsigned i = 0; i < v->nfiles; i++) {
		if (v->files[i] == vf)
			continue;
		*all += v->files[i]->n;
		if (flow_vma_file_uid(v->files[i]->f) == uid)
			*mine += v->files[i]->n;
	}
}

/* The claim one socket block makes, against the kernel (claimv.h). */
static uint8_t claim_check(struct vsrc *v, const struct vfile *vf, const struct vsock *prev,
			   const struct flow_vma_sock *s, uint64_t now)
{
	enum flow_vma_engine e = flow_vma_file_engine(vf->f);
	struct claimv_claim c = {
		.pid = flow_vma_file_pid(vf->f), .start = flow_vma_file_start(vf->f),
		.uid = flow_vma_file_uid(vf->f), .netns_fd = -1, .fd = s->fd, .inode = s->inode,
		.proto = s->socket_type == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP,
		.laddr = s->laddr, .raddr = s->raddr, .lport = s->lport, .rport = s->rport,
		.lib = e == FLOW_VMA_XLIO ? "libxlio.so" : "libvma.so",
	};
	char why[200], ex[400], tuple[96];
	enum claimv_state st = claimv_check(v->cv, &c, now, why, sizeof(why));
	uint8_t claim = st == CLAIMV_VERIFIED ? FLOW_CLAIM_VERIFIED :
			st == CLAIMV_UNVERIFIED ? FLOW_CLAIM_UNVERIFIED : FLOW_CLAIM_UNCHECKED;

	if (claim == FLOW_CLAIM_UNVERIFIED && (!prev || prev->claim != FLOW_CLAIM_UNVERIFIED)) {
		struct flow_key key;

		flow_key_set(&key, &s->laddr, &s->raddr, s->lport, s->rport, c.proto);
		flow_key_format(&key, tuple, sizeof(tuple));
		util_errf(ex, sizeof(ex), "%s slot %u, %s: %s", vf->path, s->slot, tuple, why);
		recent_add(v, vf->path, ex);
		rlog_note(&v->log_claims, now, ex);
	}
	return claim;
}

/* The same socket as the last read's o: same slot, inode and fd. */
static int vs_same(const struct flow_vma_sock *o, const struct flow_vma_sock *s)
{
	return o->slot == s->slot && o->inode == s->inode && o->fd == s->fd;
}

/* The scratch index of vf's last read's sockets by slot (j + 1, 0: none),
 * NULL without memory for it. */
static unsigned *by_slot(struct vsrc *v, const struct vfile *vf, unsigned *nby)
{
	*nby = 0;
	for (unsigned j = 0; j < vf->n; j++)
		if (vf->socks[j].s.slot >= *nby)
			*nby = vf->socks[j].s.slot + 1;
	if (!*nby)
		return NULL;
	if (*nby > v->cap_byslot) {
		unsigned *p = realloc(v->byslot, *nby * sizeof(*p));

		if (!p)
			return NULL;
		v->byslot = p;
		v->cap_byslot = *nby;
	}
	memset(v->byslot, 0, *nby * sizeof(*v->byslot));
	for (unsigned j = 0; j < vf->n; j++)
		v->byslot[vf->socks[j].s.slot] = j + 1;
	return v->byslot;
}

/* Read one file and judge its sockets; then bump (the one write). */
static void file_read(struct vsrc *v, struct vfile *vf, uint64_t now)
{
	struct flow_vma_snap *sn = v->snap;
	enum flow_vma_engine e = flow_vma_file_engine(vf->f);
	int pid = flow_vma_file_pid(vf->f), rc;
	unsigned uid = flow_vma_file_uid(vf->f), mine, all, room;
	struct vsock *ns;
	struct stat st;
	unsigned n = 0, nby, *byslot;
	char err[300], eng[32];

	for (unsigned i = 0; i < vf->n; i++)
		vf->socks[i].fresh = 0;
	vf->reads++;
	rc = flow_vma_file_read_buf(vf->f, &v->buf, sn, err, sizeof(err));
	if (rc < 0) {
		vf->errors++;
		vf->n = 0;
		vf->verified = vf->unverified = 0;
		util_strlcpy(vf->err, err, sizeof(vf->err));
		/* what the file says is refused (not a read torn by a writer):
		 * not read again until it changes */
		if (rc != -EAGAIN && rc != -EIO && flow_vma_file_stat(vf->f, &st) == 0) {
			vf->refused = 1;
			sig_of(&st, &vf->sig);
			recent_add(v, vf->path, err);
			rlog_note(&v->log_refused, now, err);
		}
		return;
	}
	vf->err[0] = '\0';
	vf->lay = sn->lay;
	vf->nslots = sn->nslots;
	vf->torn = sn->torn;
	vf->bad = sn->bad;
	vf->verified = vf->unverified = 0;
	snprintf(eng, sizeof(eng), "%s:%d", e == FLOW_VMA_XLIO ? "xlio" : "vma", pid);
	socks_held(v, vf, uid, &mine, &all);
	room = VS_SOCKS_PER_UID > mine ? VS_SOCKS_PER_UID - mine : 0;
	if (VS_SOCKS_TOTAL - (all < VS_SOCKS_TOTAL ? all : VS_SOCKS_TOTAL) < room)
		room = VS_SOCKS_TOTAL - (all < VS_SOCKS_TOTAL ? all : VS_SOCKS_TOTAL);
	if (sn->n > room) {
		util_errf(err, sizeof(err), "%s: %u sockets, more than uid %u's share (%u of %u, %u in all); %u kept",
			 vf->path, sn->n, uid, VS_SOCKS_PER_UID, mine, VS_SOCKS_TOTAL, room);
		recent_add(v, vf->path, err);
		rlog_note(&v->log_refused, now, err);
		sn->n = room;
	}
	/* the sockets of this read, each with its tracker if it was there
	 * before (same slot, inode and fd), else a new one */
	ns = calloc(sn->n ? sn->n : 1, sizeof(*ns));
	if (!ns)
		return;
	/* the last read's sockets by slot (a slot holds one socket a read),
	 * so each is found at once: a search of them all for every socket
	 * grew with the square of a file's sockets (500,000 compares a
	 * read at 1,000); without memory for it, the search */
	byslot = by_slot(v, vf, &nby);
	for (unsigned i = 0, k; i < sn->n; i++) {
		const struct flow_vma_sock *s = &sn->s[i];
		const struct vsock *prev = NULL;

		/* a block the engine enabled but has not copied its socket
		 * into yet (before the first publish): nothing to say */
		if (!s->fd && !s->inode && !s->lport &&
		    (IN6_IS_ADDR_UNSPECIFIED(&s->laddr) || (IN6_IS_ADDR_V4MAPPED(&s->laddr) &&
							    !s->laddr.s6_addr32[3])))
			continue;
		k = n++;
		if (byslot) {
			unsigned j = s->slot < nby ? byslot[s->slot] : 0;

			if (j && vs_same(&vf->socks[j - 1].s, s))
				prev = &vf->socks[j - 1];
		} else {
			for (unsigned j = 0; j < vf->n && !prev; j++)
				if (vs_same(&vf->socks[j].s, s))
					prev = &vf->socks[j];
		}
		if (prev)
			ns[k].t = prev->t;
		ns[k].s = *s;
		ns[k].claim = claim_check(v, vf, prev, s, now);
		vf->verified += ns[k].claim == FLOW_CLAIM_VERIFIED;
		vf->unverified += ns[k].claim != FLOW_CLAIM_VERIFIED;
		flow_vma_obs(s, eng, pid, &ns[k].t, now, &ns[k].o);
		ns[k].o.claim = ns[k].claim;
		/* copied after the last bump, at the earliest (a first read:
		 * unknown, dated when emitted), so long as the engine's
		 * publisher runs: one frozen with the engine copies nothing,
		 * and its data is older (the held part is then too long, as
		 * it was before this date was kept) */
		ns[k].o.data_ns = vf->bump_ns;
		ns[k].fresh = 1;
	}
	free(vf->socks);
	vf->socks = ns;
	vf->n = vf->cap = n;
	rc = flow_vma_file_bump(vf->f, now, v->interval_ns, err, sizeof(err));
	if (rc > 0) {
		vf->bumps++;
		vf->bump_ns = now;
	}
	else if (rc < 0 && strcmp(vf->err, err)) {
		util_strlcpy(vf->err, err, sizeof(vf->err));
		recent_add(v, vf->path, err);
		rlog_note(&v->log_refused, now, err);
	}
}

/* Is vf due a read within this poll's budgets? Charges them when it is. */
static int budget_take(struct vsrc *v, struct vfile *vf, uint64_t *total, uint64_t *per_uid,
		       unsigned *uids, unsigned *nuids)
{
	unsigned uid = flow_vma_file_uid(vf->f), u;
	struct stat st;
	uint64_t cost;

	if (flow_vma_file_stat(vf->f, &st) < 0)
		return 1;               /* the read says what is wrong */
	if (vf->refused) {
		struct vsig g;

		sig_of(&st, &g);
		if (sig_same(&g, &vf->sig))
			return 0;       /* refused, unchanged */
		vf->refused = 0;
	}
	cost = 2 * (uint64_t)(st.st_size > 0 ? st.st_size : 0);
	for (u = 0; u < *nuids && uids[u] != uid; u++)
		;
	if (u == *nuids) {
		uids[u] = uid;
		per_uid[u] = 0;
		(*nuids)++;
	}
	if (*total + cost > VS_BYTES_PER_POLL || per_uid[u] + cost > VS_BYTES_PER_UID) {
		vf->skipped++;
		v->deferred++;
		return 0;
	}
	*total += cost;
	per_uid[u] += cost;
	return 1;
}

/* Files with verified claims first, then the others from where the last
 * poll's turn ended; each within the budgets. */
static void read_all(struct vsrc *v, uint64_t now)
{
	unsigned uids[FLOW_VMA_MAX_FILES], nuids = 0, n = v->nfiles, last = v->rr;
	uint64_t per_uid[FLOW_VMA_MAX_FILES], total = 0;
	unsigned char done[FLOW_VMA_MAX_FILES] = { 0 };

	for (unsigned i = 0; i < n; i++)
		if (v->files[i]->verified) {
			done[i] = 1;
			if (budget_take(v, v->files[i], &total, per_uid, uids, &nuids))
				file_read(v, v->files[i], now);
		}
	for (unsigned j = 0; j < n; j++) {
		unsigned i = (v->rr + j) % n;

		if (done[i])
			continue;
		if (budget_take(v, v->files[i], &total, per_uid, uids, &nuids)) {
			file_read(v, v->files[i], now);
			last = i + 1;
		}
	}
	v->rr = n ? last % n : 0;
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
		read_all(v, now);
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
	s->sched.next_ns = flow_src_next_min(flow_src_idle_next(s),
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
	if (!v || !(v->snap = malloc(sizeof(*v->snap))) ||
	    !(v->refused = calloc(VS_REFUSED_MAX * 2, sizeof(*v->refused))) ||
	    !(v->cv = claimv_new(VS_CLAIMS_PER_SEC))) {
		if (v) {
			free(v->snap);
			free(v->refused);
		}
		free(v);
		util_errf(s->err, sizeof(s->err), "vma: out of memory");
		return -ENOMEM;
	}
	v->log_refused.what = "statistics files refused";
	v->log_claims.what = "socket claims the kernel did not verify (shown, never investigated)";
	util_strlcpy(v->dir[0], ctx && ctx->vma_dir ? ctx->vma_dir : "/tmp", sizeof(v->dir[0]));
	util_strlcpy(v->dir[1], ctx && ctx->xlio_dir ? ctx->xlio_dir : "/tmp/xlio",
		     sizeof(v->dir[1]));
	v->interval_ns = ctx && ctx->interval_ns ? ctx->interval_ns : DEF_INTERVAL_NS;
	if (ctx && ctx->claim_route)
		claimv_set_route(v->cv, FLOW_SRC_VMA, ctx->claim_route, ctx->claim_route_arg);
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
	flow_vma_buf_free(&v->buf);
	claimv_free(v->cv);
	free(v->refused);
	free(v->snap);
	free(v->byslot);
	free(v);
	s->priv = NULL;
}


const struct flow_src_ops flow_src_vma_ops = {
	.name = "vma",
	.kind = FLOW_SRC_VMA,
	.host = 1,
	.open = vs_open,
	.poll = vs_poll,
	.fd = vs_fd,
	.handle = vs_handle,
	.status = vma_src_status,
	.evidence = vma_src_evidence,
	.close = vs_close,
};
