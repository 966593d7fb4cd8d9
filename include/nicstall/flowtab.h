/* nicstall/flowtab.h: the engine flow table, a shared-memory file in which a
 * kernel-bypass engine publishes the progress of each of its sessions so
 * that nicstalld(8) can tell a stalled flow from an idle one and see what the
 * engine itself holds. See nicstall-flowtab(7) for the layout with byte
 * offsets, the seqlock protocol and notes for Rust, Java and .NET.
 *
 * The layout is fixed, versioned and language neutral: native byte order
 * (both sides run on one host), naturally aligned fields, explicit padding,
 * no pointers. Fields are only ever appended (inside the reserved space or by
 * a larger record_size / header_size); a reader uses the sizes the header
 * declares, never sizeof.
 *
 * Writer protocol (one writer per record at a time):
 *   seq += 1 (now odd)          relaxed store
 *   release fence
 *   store the fields            relaxed (atomic) stores
 *   seq += 1 (even again)       release store
 * A reader copies the record between two reads of seq and keeps the copy
 * only when both reads are equal and even.
 *
 * Publishing costs no system call: every helper below on the hot path
 * (nsft_on_send, nsft_on_recv, nsft_set_held, nsft_begin/nsft_end) is a
 * handful of plain stores into the mapping. The engine passes the time;
 * nsft_now_ns() reads CLOCK_MONOTONIC through clock_gettime(), which Linux
 * serves from the vDSO without entering the kernel.
 *
 * Header-only, C17 and C++17 (GCC/Clang __atomic builtins, no stdatomic.h).
 * In strict C mode (-std=c17) define _POSIX_C_SOURCE=200809L (or
 * _GNU_SOURCE) before including any system header; this header does so
 * itself when it is included first.
 *
 * Typical use:
 *   struct nsft_table t;
 *   if (nsft_create(&t, NULL, "myengine", 1024) < 0) ...   (start-up)
 *   struct nsft_record *r = nsft_add(&t, id, IPPROTO_TCP, &local, &remote);
 *   nsft_on_send(r, len, nsft_now_ns());          (hot path)
 *   nsft_on_recv(r, len, nsft_now_ns());
 *   nsft_set_held(r, unsent, unread, staged);
 *   nsft_remove(&t, r);                            (session closed)
 *   nsft_close(&t, 1);                             (exit: unmap + unlink)
 */
#ifndef NICSTALL_FLOWTAB_H
#define NICSTALL_FLOWTAB_H

#if !defined(__cplusplus) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#define NSFT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define NSFT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* ---- constants ---------------------------------------------------------- */

#define NSFT_MAGIC          "NSFLOWT1"  /* 8 bytes, no NUL */
#define NSFT_VERSION        1u          /* layout version this header writes */
#define NSFT_DEFAULT_DIR    "/run/nicstalld/flows"
#define NSFT_SUFFIX         ".flows"    /* file name: <engine>.<pid>.flows */
#define NSFT_ENGINE_LEN     32          /* engine name, NUL-terminated */
#define NSFT_MAX_CAPACITY   (1u << 18)  /* records per table (64 MiB) */
#define NSFT_MAX_HDR_SIZE   4096u       /* readers reject larger sizes */
#define NSFT_MAX_REC_SIZE   4096u

/* Address family codes (language neutral, not the OS's AF_* values). */
#define NSFT_FAMILY_NONE    0   /* no IP address (e.g. a transport without one) */
#define NSFT_FAMILY_INET4   4   /* IPv4, stored as IPv4-mapped IPv6 ::ffff:a.b.c.d */
#define NSFT_FAMILY_INET6   6

/* State word bits. A record is read only while NSFT_ST_OPEN is set; a slot
 * with state 0 (free) or NSFT_ST_CLOSED may be reused by the writer. */
#define NSFT_ST_FREE        0u
#define NSFT_ST_OPEN        0x1u  /* session established, being published */
#define NSFT_ST_CLOSED      0x2u  /* session ended (slot reusable) */
#define NSFT_ST_AWAITING    0x4u  /* the engine expects data here (a consumer):
                                   * silence beyond the threshold is a stall */

/* ---- layout ------------------------------------------------------------- */

/* Table header, at file offset 0; 128 bytes in version 1. */
struct nsft_header {
	char magic[8];          /*   0: "NSFLOWT1" (written last, at creation) */
	uint32_t version;       /*   8: layout version, 1 */
	uint32_t header_size;   /*  12: bytes from file start to record 0 (>= 128) */
	uint32_t record_size;   /*  16: bytes per record (>= 256) */
	uint32_t capacity;      /*  20: records the file has room for */
	uint32_t count;         /*  24: records [0, count) may be in use; the
				 *      writer stores it with release ordering
				 *      after filling the new record */
	uint32_t owner_pid;     /*  28: pid of the publishing process (as seen
				 *      in the daemon's pid namespace) */
	char engine[NSFT_ENGINE_LEN]; /* 32: engine name, NUL-terminated, ASCII */
	uint64_t created_realtime_ns; /* 64: creation time, CLOCK_REALTIME ns */
	uint64_t created_mono_ns;     /* 72: creation time, CLOCK_MONOTONIC ns */
	uint64_t generation;    /*  80: bumped (release) on each session add or
				 *      remove; readers may use it to notice set
				 *      changes cheaply */
	uint64_t reserved[5];   /*  88: zero; room for future fields */
};                              /* 128 */

/* One session. Fixed 256 bytes in version 1, 64-byte aligned in the file
 * (header_size and record_size are multiples of 64 when written here). */
struct nsft_record {
	uint64_t seq;           /*   0: sequence: odd while the writer updates,
				 *      even when stable */
	uint64_t session_id;    /*   8: engine's session id (opaque, nonzero
				 *      recommended) */
	uint8_t proto;          /*  16: IP protocol number: 6 TCP, 17 UDP */
	uint8_t family;         /*  17: NSFT_FAMILY_* */
	uint16_t local_port;    /*  18: network byte order */
	uint16_t remote_port;   /*  20: network byte order */
	uint16_t pad0;          /*  22: zero */
	uint32_t state;         /*  24: NSFT_ST_* bits */
	uint32_t pad1;          /*  28: zero */
	uint8_t local_addr[16]; /*  32: IPv6, or IPv4-mapped IPv6 */
	uint8_t remote_addr[16];/*  48 */
	uint64_t tx_msgs;       /*  64: application messages sent */
	uint64_t tx_bytes;      /*  72: bytes sent (handed to the NIC/stack) */
	uint64_t rx_msgs;       /*  80: application messages received */
	uint64_t rx_bytes;      /*  88: bytes received */
	uint64_t last_tx_ns;    /*  96: CLOCK_MONOTONIC ns of the last send, 0 none */
	uint64_t last_rx_ns;    /* 104: CLOCK_MONOTONIC ns of the last receive */
	uint64_t unsent;        /* 112: bytes queued in the engine, not yet sent */
	uint64_t unread;        /* 120: bytes received by the engine, not yet
				 *      consumed by the application */
	uint64_t staged;        /* 128: bytes staged on a transmit ring, not yet
				 *      completed by the NIC */
	uint64_t open_ns;       /* 136: CLOCK_MONOTONIC ns the session opened */
	uint64_t retry_due_ns;  /* 144: CLOCK_MONOTONIC ns at which the engine
				 *      will next resend an unanswered request
				 *      (its retransmission timer), 0 unknown.
				 *      Added in version 1's reserved space: an
				 *      older writer leaves it 0. */
	uint64_t reserved[13];  /* 152: zero; room for future fields */
};                              /* 256 */

NSFT_STATIC_ASSERT(sizeof(struct nsft_header) == 128, "nsft_header size");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, version) == 8, "version");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, count) == 24, "count");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, owner_pid) == 28, "owner_pid");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, engine) == 32, "engine");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, created_realtime_ns) == 64, "created");
NSFT_STATIC_ASSERT(offsetof(struct nsft_header, generation) == 80, "generation");
NSFT_STATIC_ASSERT(sizeof(struct nsft_record) == 256, "nsft_record size");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, session_id) == 8, "session_id");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, proto) == 16, "proto");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, local_port) == 18, "local_port");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, state) == 24, "state");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, local_addr) == 32, "local_addr");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, remote_addr) == 48, "remote_addr");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, tx_msgs) == 64, "tx_msgs");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, last_tx_ns) == 96, "last_tx_ns");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, unsent) == 112, "unsent");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, staged) == 128, "staged");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, open_ns) == 136, "open_ns");
NSFT_STATIC_ASSERT(offsetof(struct nsft_record, retry_due_ns) == 144, "retry_due_ns");

/* ---- writer handle (process-local, not shared) ---------------------------- */

struct nsft_table {
	struct nsft_header *hdr;    /* the mapping, NULL when closed */
	struct nsft_record *rec;    /* record 0 */
	size_t map_len;
	uint32_t capacity;
	char path[4096];            /* the published file */
};

/* CLOCK_MONOTONIC in ns. clock_gettime(CLOCK_MONOTONIC) runs in the vDSO:
 * no system call. */
static inline uint64_t nsft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t nsft_realtime_ns_(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Relaxed atomic stores/loads of the shared fields. */
#define NSFT_ST_(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define NSFT_LD_(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* Start an update of r: seq becomes odd. One writer per record. */
static inline void nsft_begin(struct nsft_record *r)
{
	uint64_t s = NSFT_LD_(r->seq);

	NSFT_ST_(r->seq, s + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* End the update: seq becomes even, published with release ordering. */
static inline void nsft_end(struct nsft_record *r)
{
	uint64_t s = NSFT_LD_(r->seq);

	__atomic_store_n(&r->seq, s + 1, __ATOMIC_RELEASE);
}

/* One message of `bytes` bytes left the engine at now_ns. */
static inline void nsft_on_send(struct nsft_record *r, uint64_t bytes, uint64_t now_ns)
{
	nsft_begin(r);
	NSFT_ST_(r->tx_msgs, NSFT_LD_(r->tx_msgs) + 1);
	NSFT_ST_(r->tx_bytes, NSFT_LD_(r->tx_bytes) + bytes);
	NSFT_ST_(r->last_tx_ns, now_ns);
	nsft_end(r);
}

/* One message of `bytes` bytes arrived at now_ns. */
static inline void nsft_on_recv(struct nsft_record *r, uint64_t bytes, uint64_t now_ns)
{
	nsft_begin(r);
	NSFT_ST_(r->rx_msgs, NSFT_LD_(r->rx_msgs) + 1);
	NSFT_ST_(r->rx_bytes, NSFT_LD_(r->rx_bytes) + bytes);
	NSFT_ST_(r->last_rx_ns, now_ns);
	nsft_end(r);
}

/* What the engine holds for this session right now. */
static inline void nsft_set_held(struct nsft_record *r, uint64_t unsent,
				 uint64_t unread, uint64_t staged)
{
	nsft_begin(r);
	NSFT_ST_(r->unsent, unsent);
	NSFT_ST_(r->unread, unread);
	NSFT_ST_(r->staged, staged);
	nsft_end(r);
}

/* When the engine will next resend an unanswered request (CLOCK_MONOTONIC
 * ns; 0: unknown / nothing to resend). nicstalld watches for a released
 * flow until then, so an engine with its own retransmission timer gets its
 * release attributed to the right action. */
static inline void nsft_set_retry(struct nsft_record *r, uint64_t due_ns)
{
	nsft_begin(r);
	NSFT_ST_(r->retry_due_ns, due_ns);
	nsft_end(r);
}

/* Set the state word (NSFT_ST_*), e.g. to toggle NSFT_ST_AWAITING. */
static inline void nsft_set_state(struct nsft_record *r, uint32_t state)
{
	nsft_begin(r);
	NSFT_ST_(r->state, state);
	nsft_end(r);
}

/* Fill addr[16]/port from a sockaddr_in or sockaddr_in6 (NULL: zeros).
 * Returns the NSFT_FAMILY_* code or -1 for another family. */
static inline int nsft_addr_(uint8_t addr[16], uint16_t *port, const struct sockaddr *sa)
{
	memset(addr, 0, 16);
	*port = 0;
	if (!sa)
		return NSFT_FAMILY_NONE;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;

		addr[10] = 0xff;
		addr[11] = 0xff;
		memcpy(addr + 12, &s4->sin_addr, 4);
		*port = s4->sin_port;
		return NSFT_FAMILY_INET4;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;

		memcpy(addr, &s6->sin6_addr, 16);
		*port = s6->sin6_port;
		return NSFT_FAMILY_INET6;
	}
	return -1;
}

/* Create the table file <dir>/<engine>.<pid>.flows (dir NULL: the default
 * directory, created 0755 if missing) with room for `capacity` sessions.
 * The file is built under a hidden temporary name and renamed into place, so
 * a reader never sees a half-made header. engine: 1-31 characters of
 * [A-Za-z0-9_.-], not starting with '.'. Returns 0 or -errno. */
static inline int nsft_create(struct nsft_table *t, const char *dir,
			      const char *engine, uint32_t capacity)
{
	char tmp[sizeof(t->path)];
	size_t elen, i, len;
	int fd, n, e;
	void *m;

	memset(t, 0, sizeof(*t));
	if (!dir || !*dir)
		dir = NSFT_DEFAULT_DIR;
	elen = engine ? strlen(engine) : 0;
	if (elen == 0 || elen >= NSFT_ENGINE_LEN || engine[0] == '.' ||
	    capacity == 0 || capacity > NSFT_MAX_CAPACITY)
		return -EINVAL;
	for (i = 0; i < elen; i++) {
		char c = engine[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return -EINVAL;
	}
	/* mkdir -p dir */
	n = snprintf(tmp, sizeof(tmp), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (i = 1; i <= (size_t)n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (i < (size_t)n)
			tmp[i] = '/';
	}
	n = snprintf(t->path, sizeof(t->path), "%s/%s.%ld%s", dir, engine,
		     (long)getpid(), NSFT_SUFFIX);
	if (n < 0 || (size_t)n >= sizeof(t->path))
		return -ENAMETOOLONG;
	n = snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmpXXXXXX", dir, engine, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	len = sizeof(struct nsft_header) + (size_t)capacity * sizeof(struct nsft_record);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fchmod(fd, 0644) < 0 ||
	    ftruncate(fd, (off_t)len) < 0)
		goto fail;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	t->hdr = (struct nsft_header *)m;
	t->rec = (struct nsft_record *)(void *)((char *)m + sizeof(struct nsft_header));
	t->map_len = len;
	t->capacity = capacity;
	t->hdr->version = NSFT_VERSION;
	t->hdr->header_size = sizeof(struct nsft_header);
	t->hdr->record_size = sizeof(struct nsft_record);
	t->hdr->capacity = capacity;
	t->hdr->owner_pid = (uint32_t)getpid();
	memcpy(t->hdr->engine, engine, elen);
	t->hdr->created_realtime_ns = nsft_realtime_ns_();
	t->hdr->created_mono_ns = nsft_now_ns();
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(t->hdr->magic, NSFT_MAGIC, 8);
	if (rename(tmp, t->path) < 0) {
		e = errno;
		munmap(m, len);
		t->hdr = NULL;
		errno = e;
		goto fail;
	}
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	unlink(tmp);
	return -e;
}

/* Publish a new session; returns its record (state OPEN), or NULL with errno
 * ENOSPC (table full) or EAFNOSUPPORT. local/remote: sockaddr_in or
 * sockaddr_in6, or NULL. Reuses a free or closed slot first. Calls of
 * nsft_add/nsft_remove on one table must not run concurrently (serialize
 * them); updates of distinct records may run on distinct threads. */
static inline struct nsft_record *nsft_add(struct nsft_table *t, uint64_t session_id,
					   uint8_t proto, const struct sockaddr *local,
					   const struct sockaddr *remote)
{
	uint8_t la[16], ra[16];
	uint16_t lp, rp;
	int lf, rf;
	uint32_t i, count;
	struct nsft_record *r = NULL;

	if (!t->hdr) {
		errno = EBADF;
		return NULL;
	}
	lf = nsft_addr_(la, &lp, local);
	rf = nsft_addr_(ra, &rp, remote);
	if (lf < 0 || rf < 0 || (lf && rf && lf != rf)) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	count = NSFT_LD_(t->hdr->count);
	for (i = 0; i < count; i++) {
		if (!(NSFT_LD_(t->rec[i].state) & NSFT_ST_OPEN)) {
			r = &t->rec[i];
			break;
		}
	}
	if (!r) {
		if (count >= t->capacity) {
			errno = ENOSPC;
			return NULL;
		}
		r = &t->rec[count];
	}
	nsft_begin(r);
	NSFT_ST_(r->session_id, session_id);
	NSFT_ST_(r->proto, proto);
	NSFT_ST_(r->family, (uint8_t)(lf ? lf : rf));
	NSFT_ST_(r->local_port, lp);
	NSFT_ST_(r->remote_port, rp);
	memcpy(r->local_addr, la, 16);
	memcpy(r->remote_addr, ra, 16);
	NSFT_ST_(r->tx_msgs, 0);
	NSFT_ST_(r->tx_bytes, 0);
	NSFT_ST_(r->rx_msgs, 0);
	NSFT_ST_(r->rx_bytes, 0);
	NSFT_ST_(r->last_tx_ns, 0);
	NSFT_ST_(r->last_rx_ns, 0);
	NSFT_ST_(r->unsent, 0);
	NSFT_ST_(r->unread, 0);
	NSFT_ST_(r->staged, 0);
	NSFT_ST_(r->open_ns, nsft_now_ns());
	NSFT_ST_(r->state, NSFT_ST_OPEN);
	nsft_end(r);
	if (r == &t->rec[count])
		__atomic_store_n(&t->hdr->count, count + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&t->hdr->generation, NSFT_LD_(t->hdr->generation) + 1,
			 __ATOMIC_RELEASE);
	return r;
}

/* The session ended: readers stop reporting it and the slot may be reused. */
static inline void nsft_remove(struct nsft_table *t, struct nsft_record *r)
{
	nsft_set_state(r, NSFT_ST_CLOSED);
	if (t->hdr)
		__atomic_store_n(&t->hdr->generation, NSFT_LD_(t->hdr->generation) + 1,
				 __ATOMIC_RELEASE);
}

/* Unmap the table; with unlink_file, also remove the file (clean exit).
 * A table left behind by a crash is dropped by the daemon once the owner
 * process is gone. Returns 0 or -errno (of unlink). */
static inline int nsft_close(struct nsft_table *t, int unlink_file)
{
	int rc = 0;

	if (unlink_file && t->path[0] && unlink(t->path) < 0)
		rc = -errno;
	if (t->hdr)
		munmap(t->hdr, t->map_len);
	t->hdr = NULL;
	t->rec = NULL;
	return rc;
}

#undef NSFT_ST_
#undef NSFT_LD_

#ifdef __cplusplus
}
#endif

#endif
