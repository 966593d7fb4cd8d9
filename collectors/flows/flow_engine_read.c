/* flow_engine_read: one engine flow table (nicstall/flowtab.h), read as
 * hostile input: open, header check and the record reader. The set of
 * tables is src_engine.c; the owner pid's claim and liveness
 * flow_engine_owner.c.
 *
 * Why pread and not a shared mapping: an engine (or anyone who can write the
 * directory) can truncate a table at any time, and touching a mapped page
 * past the new end raises SIGBUS. pread() of a truncated range just returns
 * short. Each poll copies the in-use records of a table chunk by chunk,
 * three times (A, B, C): every load of pass A happens before every load of
 * pass B (separate system calls), and every load of B before every load of
 * C, so a record whose seq reads equal and even in A and C was not written
 * while B copied it, whatever order the kernel copies bytes within one call.
 * The first chunk's pass A is one read with the header (ft_first), so a
 * poll of a table is three reads while its count holds.
 * Records that fail are retried alone (record, seq, after the seq read
 * last; at most 3 times, with a per-table budget) and otherwise skipped as
 * unstable for this poll.
 *
 * Only what moved: the three passes are made at a table's first poll and
 * once a FE_ALL_EVERY_NS; in between, pass A alone tells which records'
 * seq moved since their last stable copy (kept per table), and only those
 * are read again (alone as a retry is, or passes B and C for a chunk when
 * more than an eighth of it moved). An unmoved record is emitted from its
 * copy only when it could be a wait (ft_may_wait): the detector times a
 * wait at every poll, and keeps an idle flow unseen for FE_KEEP_NS. */
#include "collectors/flows/flow_engine_int.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/loop.h"

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

/* A procfs file (size 0 in stat) read whole, at most max bytes. */
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
void ft_validate(struct flow_engine *fe, struct ft *t)
{
	unsigned char *h = t->hdr;
	struct stat st;
	uint32_t ver, hs, rs, cap, pid;
	uint64_t need;
	ssize_t n;
	size_t i;

	ft_owner_put(fe, t->own);
	t->own = NULL;
	t->records = 0;
	t->guess = 0;
	ft_cache_drop(t);       /* the layout may change: no copy is kept */
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
	t->own = ft_owner_get(fe, t->pid);
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
	ft_verify(fe, t, loop_mono_ns());
}

/* (Re)open t->path and validate it. */
void ft_open(struct flow_engine *fe, struct ft *t)
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
	t->uid = st.st_uid;
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

/* Has the file changed since we looked (inode, size, header bytes)? */
int ft_changed(struct ft *t)
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

/* Retry one record alone: record, then seq, each a system call of its
 * own. The seq before the copy is the one read last: pass C's (read
 * before any retry) for the first attempt, the previous attempt's after
 * that, so an attempt is two reads, not three, with the same order of
 * loads: seq, record, seq (test_flow_engine_retry.c writes between
 * them). Returns the copy or NULL. */
static const unsigned char *ft_retry(struct flow_engine *fe, struct ft *t, uint64_t off,
				     const unsigned char *seq_c)
{
	unsigned char s1[8], s2[8];
	int k;

	memcpy(s1, seq_c, 8);
	for (k = 0; k < FE_RETRIES; k++) {
		if (pread(t->fd, fe->rbuf, t->rs, (off_t)off) != (ssize_t)t->rs ||
		    pread(t->fd, s2, 8, (off_t)off) != 8)
			return NULL;
		if (memcmp(s1, s2, 8) == 0 && !(ld64(s1) & 1) && memcmp(fe->rbuf, s1, 8) == 0)
			return fe->rbuf;
		memcpy(s1, s2, 8);
	}
	return NULL;
}

static int mapped4(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, 12) == 0;
}

/* What the kernel says of record r's claim (claimv.h): the table's owner
 * pid must be believed (flow_engine_owner.c) and hold a kernel socket of
 * the record's protocol on its local end, unconnected or connected to its
 * remote end. A record without an IP address or of another protocol
 * cannot be verified. */
static uint8_t ft_claim(struct flow_engine *fe, struct ft *t, unsigned idx,
			const struct nsft_record *r, uint64_t now)
{
	struct claimv_claim c = { .pid = t->pid, .start = t->start, .uid = t->uid,
				  .netns_fd = -1, .fd = -1, .proto = r->proto,
				  .lport = r->local_port, .rport = r->remote_port };
	enum claimv_state st;
	char why[200];

	if (!t->pid_ok) {
		util_strlcpy(why, "the table's owner pid is not verified", sizeof(why));
		st = CLAIMV_UNVERIFIED;
	} else if (r->family == NSFT_FAMILY_NONE ||
		   (r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP)) {
		util_strlcpy(why, "no TCP or UDP address to check", sizeof(why));
		st = CLAIMV_UNVERIFIED;
	} else {
		memcpy(&c.laddr, r->local_addr, 16);
		memcpy(&c.raddr, r->remote_addr, 16);
		st = claimv_check_hinted(fe->cv, &c, now, why, sizeof(why),
					 idx < t->ncache ? &t->hint[idx] : NULL);
	}
	if (st == CLAIMV_VERIFIED)
		return FLOW_CLAIM_VERIFIED;
	fe->claims_unverified++;
	if (st == CLAIMV_UNVERIFIED && t->pid_ok) {
		/* not the table's problem (it is read): a note, logged once
		 * per table file */
		util_errf(t->claimnote, sizeof(t->claimnote),
			  "record %u: not verified by the kernel (%s); such sessions are shown, never investigated",
			  idx, why);
		if (!(t->logged & P_CLAIM)) {
			t->logged |= P_CLAIM;
			log_warnx("flow table %s: %s", t->path, t->claimnote);
		}
	}
	return st == CLAIMV_UNVERIFIED ? FLOW_CLAIM_UNVERIFIED : FLOW_CLAIM_UNCHECKED;
}

/* Emit one stable record copy; 1 if emitted. */
static int ft_emit(struct flow_engine *fe, struct ft *t, unsigned idx, const unsigned char *p,
		   uint64_t now, flow_emit_fn emit, void *arg)
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
	flow_key_set(&o.key, r.local_addr, r.remote_addr, r.local_port, r.remote_port, r.proto);
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
	/* the engine's own next resend: believed within a minute ahead (the
	 * daemon caps every watch anyway), unknown otherwise */
	if (r.retry_due_ns && r.retry_due_ns + FE_FUTURE_NS >= now &&
	    r.retry_due_ns <= now + 60000000000ull)
		o.retry_due_ns = r.retry_due_ns;
	o.state = r.state;
	o.pid = t->pid_ok ? t->pid : 0;         /* an unverified claim names no process */
	o.uid = t->uid;
	o.uid_known = 1;
	memcpy(o.engine, t->engine, sizeof(o.engine));
	o.claim = ft_claim(fe, t, idx, &r, now);
	o.keep_ns = FE_KEEP_NS;         /* idle: passed on once a full read */
	emit(&o, arg);
	return 1;
}

static void ft_truncated(struct ft *t)
{
	struct stat st;
	ssize_t n;

	ft_problem(t, P_TRUNC, "truncated or unreadable while in use; ignored until it changes");
	ft_setbad(t, P_TRUNC);
	ft_cache_drop(t);
	/* remember what it looks like now, to notice the next change */
	if (fstat(t->fd, &st) == 0)
		t->size = st.st_size;
	n = pread(t->fd, t->hdr, FE_HDR, 0);
	t->hdrlen = n < 0 ? 0 : (size_t)n;
}

/* Read one ACTIVE table; returns records emitted. */
/* The owner's share of this poll's budget (NULL when there are more
 * owners than kept apart: those are charged to the total only). */
static uint64_t *owner_bytes(struct fe_budget *b, uid_t uid)
{
	for (unsigned i = 0; i < b->n; i++)
		if (b->own[i].uid == uid)
			return &b->own[i].bytes;
	if (b->n == FE_OWNER_BUDGETS)
		return NULL;
	b->own[b->n].uid = uid;
	b->own[b->n].bytes = 0;
	return &b->own[b->n++].bytes;
}

/* The first pass of the first chunk, header included: one read of the
 * header and of as many records as were in use at the last poll
 * (t->guess), where two reads would do it; a system call fewer per table
 * per poll. Returns the records of the first chunk it holds (at
 * fe->buf[0] + t->hs), or -1 with the table set aside (truncated, or no
 * longer valid); *count: the count in use, clamped. */
static int ft_first(struct flow_engine *fe, struct ft *t, uint32_t *count)
{
	uint32_t guess = t->guess, per = FE_CHUNK / t->rs;
	unsigned char *h = fe->buf[0];
	size_t want;
	ssize_t n;

	t->guess = 0;
	if (guess > per)
		guess = per;
	want = (size_t)t->hs + (size_t)guess * t->rs;
	n = pread(t->fd, h, want, 0);
	if (n < (ssize_t)FE_HDR) {
		ft_truncated(t);
		return -1;
	}
	if ((size_t)n < want)
		guess = 0;      /* the file was cut short: read as the count says */
	/* Everything but count and generation must stay as validated. */
	if (memcmp(h, t->hdr, offsetof(struct nsft_header, count)) != 0 ||
	    memcmp(h + offsetof(struct nsft_header, owner_pid), t->hdr + offsetof(struct nsft_header, owner_pid),
		   offsetof(struct nsft_header, generation) - offsetof(struct nsft_header, owner_pid)) != 0) {
		ft_validate(fe, t);
		if (t->st != T_ACTIVE)
			return -1;
		memcpy(h, t->hdr, FE_HDR);
		guess = 0;      /* the layout may differ: read afresh */
	}
	*count = ld32(h + offsetof(struct nsft_header, count));
	if (*count > t->cap) {
		ft_problem(t, P_COUNT, "count %u exceeds capacity %u; clamped", *count, t->cap);
		*count = t->cap;
	}
	return (int)guess;
}

/* Could record p be a wait the detector must see at every poll (more sent
 * than received, bytes held, a consumer awaiting, a resend due)? Such
 * records are emitted at every poll, moved or not (liveness.c's
 * flow_update() dates and times their waits). */
static int ft_may_wait(const unsigned char *p)
{
	struct nsft_record r;

	memcpy(&r, p, sizeof(r));
	return r.tx_msgs != r.rx_msgs || r.unsent || r.unread || r.staged || r.retry_due_ns ||
	       (r.state & NSFT_ST_AWAITING);
}

/* Room for copies of count records. 0, or -1 (none kept: every record is
 * read in full, as before copies). */
static int ft_cache_room(struct ft *t, uint32_t count)
{
	unsigned char *c;
	uint8_t *ok;
	struct claimv_hint *h;

	if (count <= t->ncache)
		return 0;
	c = realloc(t->cache, (size_t)count * t->rs);
	if (!c)
		return -1;
	t->cache = c;
	ok = realloc(t->cok, count);
	if (!ok)
		return -1;
	t->cok = ok;
	h = realloc(t->hint, (size_t)count * sizeof(*h));
	if (!h)
		return -1;
	t->hint = h;
	memset(t->cok + t->ncache, 0, count - t->ncache);
	memset(t->hint + t->ncache, 0, (size_t)(count - t->ncache) * sizeof(*h));
	t->ncache = count;
	return 0;
}

int ft_read(struct flow_engine *fe, struct ft *t, uint64_t now, struct fe_budget *b,
	    flow_emit_fn emit, void *arg)
{
	uint64_t need, *mine;
	uint32_t count, i, per, budget = FE_RETRY_BUDGET;
	unsigned unstable = 0;
	int emitted = 0, first, all, keep;

	t->problem[0] = '\0';
	t->records = 0;
	first = ft_first(fe, t, &count);
	if (first < 0)
		return 0;
	need = (uint64_t)count * t->rs;
	mine = owner_bytes(b, t->uid);
	if (mine && *mine + need > FLOW_ENGINE_MAX_OWNER_POLL_BYTES) {
		ft_problem(t, P_LIMIT, "skipped: uid %u's tables hold more than %u bytes of records",
			   (unsigned)t->uid, FLOW_ENGINE_MAX_OWNER_POLL_BYTES);
		ft_cache_drop(t);
		return 0;
	}
	if (b->total + need > FLOW_ENGINE_MAX_POLL_BYTES) {
		ft_problem(t, P_TOTAL, "skipped: tables hold more than %u bytes of records in all",
			   FLOW_ENGINE_MAX_POLL_BYTES);
		ft_cache_drop(t);
		return 0;
	}
	b->total += need;
	if (mine)
		*mine += need;
	/* the copies are of the records in use only: what a poll may read
	 * (the budgets above) is what they may hold */
	if (count < t->ncache / 2)
		ft_cache_drop(t);
	/* every record read and emitted afresh once a FE_ALL_EVERY_NS (a
	 * writer that skips the seq protocol is seen that late at worst) */
	all = !t->all_ns || now - t->all_ns >= FE_ALL_EVERY_NS || now < t->all_ns;
	keep = ft_cache_room(t, count) == 0;
	if (all)
		t->all_ns = now;
	per = FE_CHUNK / t->rs;
	for (i = 0; i < count; i += per) {
		uint32_t nrec = count - i < per ? count - i : per, j, moved = 0;
		uint64_t off = t->hs + (uint64_t)i * t->rs;
		size_t len = (size_t)nrec * t->rs;
		const unsigned char *pa = fe->buf[0];
		int k = 0, full;

		if (i == 0 && nrec <= (uint32_t)first) {
			pa = fe->buf[0] + t->hs;        /* read with the header */
			k = 1;
		} else if (pread(t->fd, fe->buf[0], len, (off_t)off) != (ssize_t)len) {
			ft_truncated(t);
			return emitted;
		}
		/* pass A: which records moved since their last stable copy */
		for (j = 0; keep && !all && j < nrec; j++) {
			uint64_t sa = ld64(pa + (size_t)j * t->rs);

			if ((sa & 1) || !t->cok[i + j] || ld64(t->cache + (size_t)(i + j) * t->rs) != sa)
				moved++;
		}
		/* passes B and C for the chunk when many moved (or all are
		 * read); else each that moved alone (seq A, record, seq) */
		full = all || !keep || moved > nrec / 8 || moved > FE_RETRY_BUDGET;
		for (k = 1; full && k < 3; k++) {
			if (pread(t->fd, fe->buf[k], len, (off_t)off) != (ssize_t)len) {
				ft_truncated(t);
				return emitted;
			}
		}
		for (j = 0; j < nrec; j++) {
			const unsigned char *a = pa + (size_t)j * t->rs;
			unsigned char *cached = keep ? t->cache + (size_t)(i + j) * t->rs : NULL;
			const unsigned char *rec = NULL;
			uint64_t sa = ld64(a);

			if (keep && !all && !(sa & 1) && t->cok[i + j] && ld64(cached) == sa) {
				/* unchanged since its stable copy (as pass A saw
				 * it: a write since is seen at the next poll) */
				if (ft_may_wait(cached))
					emitted += ft_emit(fe, t, i + j, cached, now, emit, arg);
				else if (ld32(cached + offsetof(struct nsft_record, state)) &
					 NSFT_ST_OPEN)
					t->records++;   /* open, idle, not emitted */
				continue;
			}
			if (full) {
				const unsigned char *bb = fe->buf[1] + (size_t)j * t->rs;
				const unsigned char *c = fe->buf[2] + (size_t)j * t->rs;

				if (sa == ld64(bb) && sa == ld64(c) && !(sa & 1)) {
					rec = bb;
				} else if (budget) {
					budget--;
					rec = ft_retry(fe, t, off + (uint64_t)j * t->rs, c);
				}
			} else {
				/* moved: read alone (a few a chunk, not the
				 * unstable records' retry budget) */
				rec = ft_retry(fe, t, off + (uint64_t)j * t->rs, a);
			}
			if (keep)
				t->cok[i + j] = 0;
			if (!rec) {
				unstable++;
				continue;
			}
			if (keep) {
				memcpy(cached, rec, t->rs);
				t->cok[i + j] = 1;
			}
			emitted += ft_emit(fe, t, i + j, rec, now, emit, arg);
		}
	}
	t->guess = count;
	if (unstable)
		ft_problem(t, P_UNSTABLE, "%u record(s) changing while read (seq odd or moving); skipped this poll",
			   unstable);
	t->records += (unsigned)emitted;
	return emitted;
}
