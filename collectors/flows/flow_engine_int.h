/* flow_engine_int: what src_engine.c (the set of tables: directory,
 * inotify, registration, the poll loop, the listing, the ops table) and
 * flow_engine_read.c (one table: open, header check, the record reader) and
 * flow_engine_owner.c (the owner pid's claim, owner liveness) share. Not a public header: include flow_engine.h.
 *
 * Table states:
 *   ACTIVE   fd open, header valid: read on every poll.
 *   BAD      fd open (or not), header invalid: ignored until the file changes
 *            (header bytes, size or inode), checked cheaply on each poll.
 *   DEAD     owner process gone: fd closed, kept until the file goes away or
 *            is replaced.
 *   WAIT     over FLOW_ENGINE_MAX_TABLES: no fd, promoted when room frees.
 * Owner liveness: one pidfd per owner pid, each in the epoll set that
 * flow_engine_fd() is (EPOLLONESHOT): an exit is an event the loop hands
 * to flow_engine_handle(); kill(pid, 0) each poll for an owner without a
 * pidfd. */
#ifndef NICSTALL_FLOW_ENGINE_INT_H
#define NICSTALL_FLOW_ENGINE_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <nicstall/flowtab.h>

#include "collectors/flows/claimv.h"
#include "collectors/flows/flow_engine.h"

#define FE_HDR 128u                 /* bytes of the v1 header we read */
#define FE_CHUNK (64u << 10)        /* bytes per read pass */
#define FE_RETRIES 3
#define FE_RETRY_BUDGET 32          /* records retried alone per table per poll */
/* Every open record is read in full and emitted at least this often; in
 * between, a record whose seq has not moved since its last stable copy
 * is taken from that copy, and emitted only when it could be a wait (an
 * idle flow's detector state does not change: liveness.h keeps it
 * LIVENESS_GONE_NS unseen). */
#define FE_ALL_EVERY_NS 1000000000ull
/* ...and the detector keeps an engine flow this long unseen
 * (flow_obs.keep_ns): three full reads, whatever the polls' spacing
 * (refreshes come up to LIVENESS_GONE_NS / 2 apart, and a full read at
 * the first poll a FE_ALL_EVERY_NS after the last). */
#define FE_KEEP_NS (3 * FE_ALL_EVERY_NS)
#define FE_HASH 4096u
#define FE_PID_MAX 4194304          /* PID_MAX_LIMIT */
#define FE_FUTURE_NS 1000000000ull  /* times this far ahead are bogus */
#define FE_OWNER_BUDGETS 256        /* owners charged apart per poll */
#define FE_VERIFY_RETRY_NS 2000000000ull  /* unverified owner pids: check again */
#define FE_VERIFY_PER_POLL 16       /* re-checks per poll at most */
#define FE_MAPS_MAX (4u << 20)      /* bytes of /proc/PID/maps read */
#define FE_FDS_MAX 4096             /* fds of a process looked at */
#define FE_SCANS_PER_POLL 8         /* maps or fd sets read per poll */
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
	P_NOTYET = 1u << 25, P_CLAIM = 1u << 26,
};

enum ft_state { T_ACTIVE, T_BAD, T_DEAD, T_WAIT };

struct owner {
	pid_t pid;
	int pidfd;              /* -1: use kill(pid, 0) */
	unsigned refs;
	int dead;
	/* the (dev, inode) pairs the process maps, read once per poll at most
	 * for every table claiming it (flow_engine_owner.c, owner check) */
	struct fe_mapid { dev_t dev; ino_t ino; } *maps;
	size_t nmaps;
	unsigned long maps_poll; /* fe->polls + 1 when read, 0 never */
	struct fe_fdid { uint64_t mnt_id; ino_t ino; } *fds;   /* its open files */
	size_t nfds;
	unsigned long fds_poll;
	uid_t ruid, euid;
	int uid_ok;             /* ruid/euid read */
};

struct ft {
	char *path;
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
	uint32_t guess;         /* records read with the header in the next
				 * poll's first pass: the count it read in use
				 * (0 when skipped or failed) */
	pid_t pid;              /* as the header claims it */
	uid_t uid;              /* the file's owner: limits and budgets */
	int pid_ok;             /* claim checked: same uid, table open or mapped */
	unsigned long long start;       /* the pid's start time when checked:
					 * its claims are that process's only */
	uint64_t pid_checked_ns;
	char pidnote[160];      /* why the claim is not believed */
	char claimnote[240];    /* why a record's local end is not (claimv.h) */
	char engine[NSFT_ENGINE_LEN];
	struct owner *own;
	unsigned records;
	/* the records as last read stable ([0, ncache), rs bytes each) and
	 * which of them are (cok[i]); emptied when the table is validated
	 * again, truncated or released */
	unsigned char *cache;
	uint8_t *cok;
	struct claimv_hint *hint;       /* where each record's claim is kept
					 * in the claim cache (claimv.h) */
	uint32_t ncache;
	uint64_t all_ns;        /* when every record was last read in full */
	size_t idx;             /* in fe->t */
	struct ft *hnext;
	int seen;               /* rescan mark */
};

/* Record bytes read this poll, in all and per owner uid: each owner's
 * tables are charged to its own FLOW_ENGINE_MAX_OWNER_POLL_BYTES, so one
 * user's flood leaves the others' tables read. */
struct fe_budget {
	uint64_t total;
	unsigned n;
	struct { uid_t uid; uint64_t bytes; } own[FE_OWNER_BUDGETS];
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
	/* flow_engine_fd: an epoll set of the inotify fd (data.ptr NULL) and
	 * every owner's pidfd (data.ptr the owner, EPOLLONESHOT), so an
	 * owner's death wakes the daemon's loop and a poll asks no system
	 * call whether the owners live (flow_engine_handle) */
	int epfd;
	unsigned char *buf[3], *rbuf;
	unsigned long polls;
	unsigned verifies;      /* owner re-checks this poll */
	unsigned scans;         /* process maps / fd sets read this poll */
	struct fe_budget budget;        /* of the running poll */
	struct claimv *cv;              /* records' local ends against the kernel */
	uint64_t claims_unverified;     /* records emitted unverified */
	int logged_limit, logged_entries, dropped, logged_dir, logged_emfile;
	int need_rescan;
};

/* flow_engine_owner.c */
void owners_check(struct flow_engine *fe);
/* Free t's copies of its records (flow_engine_read.c keeps them). */
void ft_cache_drop(struct ft *t);
/* Close t's fd and drop its owner (and its records' copies). */
void ft_release(struct flow_engine *fe, struct ft *t);
/* The owner is gone: T_DEAD, fd closed. */
void ft_dead(struct flow_engine *fe, struct ft *t);
/* The owner record of pid (shared, counted), NULL when out of memory. */
struct owner *ft_owner_get(struct flow_engine *fe, pid_t pid);
/* Drop a reference to o (NULL allowed). */
void ft_owner_put(struct flow_engine *fe, struct owner *o);
/* Check the owner claim of t now: verified or unverified. */
void ft_verify(struct flow_engine *fe, struct ft *t, uint64_t now);
/* Record a problem of t; log it the first time for this file. */
void ft_problem(struct ft *t, uint32_t kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* flow_engine_read.c */
/* Read and check the header of an open table; ACTIVE, BAD or DEAD after. */
void ft_validate(struct flow_engine *fe, struct ft *t);
/* (Re)open t->path and validate it (T_WAIT over the open-table limit). */
void ft_open(struct flow_engine *fe, struct ft *t);
/* Has the file changed since we looked (inode, size, header bytes)? */
int ft_changed(struct ft *t);
/* Read one ACTIVE table, emitting its stable open records (those whose
 * seq did not move and that cannot be waiting only every FE_ALL_EVERY_NS). */
int ft_read(struct flow_engine *fe, struct ft *t, uint64_t now, struct fe_budget *b,
	    flow_emit_fn emit, void *arg);
/* Check an ACTIVE table's owner claim again when it is due (unverified,
 * FE_VERIFY_RETRY_NS since the last try). */
void ft_verify_due(struct flow_engine *fe, struct ft *t, uint64_t now);

#endif
