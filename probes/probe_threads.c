/* probe_threads: /proc thread snapshots of an engine process. */
#include "probes/probe_threads.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#define STAT_MAX 4096
#define STATUS_MAX 16384

static int is_gone_errno(int e)
{
	return e == ENOENT || e == ESRCH;
}

/* Replace what is not printable ASCII by '?'; keep '\n' when keep_nl. */
static void sanitize(char *s, size_t len, int keep_nl)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' && keep_nl)
			continue;
		if (c < 0x20 || c > 0x7e)
			s[i] = '?';
	}
}

static void strip_nl(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Parse a /proc stat line by its LAST ')': comm may hold anything.
 * fields[i] = stat field i + 3 (i.e. fields[0] is the state field). */
#define STAT_FIELDS 50
static int parse_stat(char *buf, char *comm, size_t commlen, char *state,
		      uint64_t *fields, unsigned *nfields)
{
	char *open = strchr(buf, '(');
	char *close = strrchr(buf, ')');
	char *p;
	unsigned n = 0;

	if (!open || !close || close < open)
		return -1;
	if (comm) {
		size_t l = (size_t)(close - open - 1);

		if (l >= commlen)
			l = commlen - 1;
		memcpy(comm, open + 1, l);
		comm[l] = '\0';
		sanitize(comm, l, 0);
	}
	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p)
		return -1;
	*state = (*p >= 0x21 && *p <= 0x7e) ? *p : '?';
	fields[n++] = 0;
	p++;
	while (n < STAT_FIELDS) {
		char *end;
		unsigned long long v;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p) {
			/* negative or odd field: skip the token, keep 0 */
			while (*p && *p != ' ' && *p != '\n')
				p++;
			fields[n++] = 0;
			continue;
		}
		fields[n++] = errno ? 0 : v;
		p = end;
	}
	*nfields = n;
	return 0;
}

static int parse_status_u64(const char *buf, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			char *end;
			unsigned long long x;

			errno = 0;
			x = strtoull(p + kl + 1, &end, 10);
			if (end == p + kl + 1 || errno)
				return -1;
			*v = x;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* One file of a thread: classify a failure into gone/unreadable. */
static void note_fail(struct probe_thread *t, unsigned flag, int e)
{
	if (is_gone_errno(e))
		t->gone = 1;
	else
		t->unreadable |= flag;
}

static void read_thread(int taskfd, struct probe_thread *t, long hz)
{
	char path[64];
	char *buf;
	ssize_t n;

	buf = malloc(STATUS_MAX + 1);
	if (!buf) {
		t->unreadable |= PROBE_THREADS_F_STAT | PROBE_THREADS_F_STATUS;
		return;
	}
	snprintf(path, sizeof(path), "%d/stat", (int)t->tid);
	n = util_read_buf_at(taskfd, path, buf, STAT_MAX + 1);
	if (n < 0)
		note_fail(t, PROBE_THREADS_F_STAT, errno);
	else {
		uint64_t f[STAT_FIELDS] = { 0 };
		unsigned nf = 0;

		if (parse_stat(buf, t->comm, sizeof(t->comm), &t->state, f, &nf) == 0) {
			t->have |= PROBE_THREADS_F_STAT;
			/* utime = field 14, stime = 15, processor = 39 */
			if (nf > 12 && hz > 0) {
				t->utime_ns = f[11] * (1000000000ull / (uint64_t)hz);
				t->stime_ns = f[12] * (1000000000ull / (uint64_t)hz);
			}
			if (nf > 36 && f[36] < 1u << 20)
				t->cpu = (int)f[36];
		} else if (n == 0)
			t->gone = 1;    /* empty read: the task went away */
		else
			t->unreadable |= PROBE_THREADS_F_STAT;
	}
	if (t->gone)
		goto out;

	snprintf(path, sizeof(path), "%d/status", (int)t->tid);
	n = util_read_buf_at(taskfd, path, buf, STATUS_MAX + 1);
	t->mono_ns = loop_mono_ns();
	if (n < 0)
		note_fail(t, PROBE_THREADS_F_STATUS, errno);
	else if (parse_status_u64(buf, "voluntary_ctxt_switches", &t->vol_cs) == 0 &&
		 parse_status_u64(buf, "nonvoluntary_ctxt_switches", &t->nonvol_cs) == 0)
		t->have |= PROBE_THREADS_F_STATUS;
	else
		t->unreadable |= PROBE_THREADS_F_STATUS;

	snprintf(path, sizeof(path), "%d/wchan", (int)t->tid);
	n = util_read_buf_at(taskfd, path, t->wchan, sizeof(t->wchan));
	if (n < 0) {
		t->wchan[0] = '\0';
		note_fail(t, PROBE_THREADS_F_WCHAN, errno);
	} else {
		strip_nl(t->wchan);
		sanitize(t->wchan, strlen(t->wchan), 0);
		t->have |= PROBE_THREADS_F_WCHAN;
	}

	snprintf(path, sizeof(path), "%d/syscall", (int)t->tid);
	n = util_read_buf_at(taskfd, path, t->syscall, sizeof(t->syscall));
	if (n < 0) {
		t->syscall[0] = '\0';
		note_fail(t, PROBE_THREADS_F_SYSCALL, errno);
	} else {
		strip_nl(t->syscall);
		sanitize(t->syscall, strlen(t->syscall), 0);
		t->have |= PROBE_THREADS_F_SYSCALL;
	}

	snprintf(path, sizeof(path), "%d/stack", (int)t->tid);
	n = util_read_buf_at(taskfd, path, buf, PROBE_THREADS_STACK_MAX + 2);
	if (n < 0)
		note_fail(t, PROBE_THREADS_F_STACK, errno);
	else {
		if ((size_t)n > PROBE_THREADS_STACK_MAX) {
			char *nl;

			n = PROBE_THREADS_STACK_MAX;
			buf[n] = '\0';
			/* cut at the last complete line */
			nl = strrchr(buf, '\n');
			if (nl) {
				nl[1] = '\0';
				n = nl + 1 - buf;
			}
			t->stack_truncated = 1;
		}
		sanitize(buf, (size_t)n, 1);
		t->stack = strdup(buf);
		if (t->stack)
			t->have |= PROBE_THREADS_F_STACK;
		else
			t->unreadable |= PROBE_THREADS_F_STACK;
	}
out:
	free(buf);
}

static void read_process(int piddir, struct probe_threads_snap *s)
{
	char buf[STAT_MAX + 1];
	char cl[sizeof(s->cmdline) + 1];
	uint64_t f[STAT_FIELDS] = { 0 };
	unsigned nf = 0;
	char state = 0;
	uint64_t argn = 0;
	ssize_t n, r;

	n = util_read_buf_at(piddir, "stat", buf, STAT_MAX + 1);
	if (n < 0 && is_gone_errno(errno)) {
		s->gone = 1;
		return;
	}
	/* arg_start = field 48, arg_end = 49 (0 unless we may ptrace it) */
	if (n > 0 && parse_stat(buf, NULL, 0, &state, f, &nf) == 0 && nf > 46 &&
	    f[46] > f[45])
		argn = f[46] - f[45];

	n = util_read_buf_at(piddir, "cmdline", cl, sizeof(cl));
	if (n < 0) {
		if (is_gone_errno(errno))
			s->gone = 1;
		else
			s->unreadable |= PROBE_THREADS_F_CMDLINE;
	} else {
		/* The kernel continues past arg_end into the environment area
		 * of a process that overwrote its argv (setproctitle): never
		 * keep more than the argument area. */
		if (argn && (uint64_t)n > argn)
			n = (ssize_t)argn;
		if ((size_t)n >= sizeof(s->cmdline)) {
			n = sizeof(s->cmdline) - 1;
			s->cmdline_truncated = 1;
		}
		memcpy(s->cmdline, cl, (size_t)n);
		s->cmdline[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (s->cmdline[i] == '\0')
				s->cmdline[i] = ' ';
		strip_nl(s->cmdline);
		sanitize(s->cmdline, strlen(s->cmdline), 0);
	}

	r = readlinkat(piddir, "exe", s->exe, sizeof(s->exe) - 1);
	if (r < 0) {
		s->exe[0] = '\0';
		/* ENOENT: kernel thread or exiting process, not a denial */
		if (!is_gone_errno(errno))
			s->unreadable |= PROBE_THREADS_F_EXE;
	} else {
		s->exe[r] = '\0';
		sanitize(s->exe, (size_t)r, 0);
	}
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* Parse a decimal TID directory name; 0 when it is not one. */
static pid_t parse_tid(const char *name)
{
	char *end;
	long v;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	errno = 0;
	v = strtol(name, &end, 10);
	if (*end || errno || v <= 0 || v > 0x3fffffff)
		return 0;
	return (pid_t)v;
}

int probe_threads_snapshot(pid_t pid, struct probe_threads_snap *out,
			   char *err, size_t errlen)
{
	char path[64];
	pid_t *tids = NULL;
	size_t ntid = 0;
	int piddir, taskfd;
	DIR *d;
	struct dirent *de;
	long hz = sysconf(_SC_CLK_TCK);

	if (!out) {
		snprintf(err, errlen, "thread snapshot: no output");
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->start_ns = loop_mono_ns();
	out->real_ns = loop_real_ns();
	if (pid <= 0) {
		snprintf(err, errlen, "thread snapshot: invalid pid %d", (int)pid);
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	/* Every later read goes relative to this directory: if the pid is
	 * reused meanwhile, reads fail with ESRCH rather than reading
	 * another process. */
	piddir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0) {
		if (is_gone_errno(errno))
			out->gone = 1;
		else
			out->unreadable |= PROBE_THREADS_F_STAT;
		out->end_ns = loop_mono_ns();
		return 0;
	}
	read_process(piddir, out);

	taskfd = openat(piddir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0) {
		if (is_gone_errno(errno))
			out->gone = 1;
		else
			out->unreadable |= PROBE_THREADS_F_STAT;
		close(piddir);
		out->end_ns = loop_mono_ns();
		return 0;
	}
	d = fdopendir(taskfd);
	if (!d) {
		snprintf(err, errlen, "thread snapshot: %s/task: %s", path, strerror(errno));
		close(taskfd);
		close(piddir);
		return -1;
	}
	tids = calloc(PROBE_THREADS_MAX, sizeof(*tids));
	if (!tids) {
		snprintf(err, errlen, "thread snapshot: %s: out of memory", path);
		closedir(d);
		close(piddir);
		return -1;
	}
	errno = 0;
	while ((de = readdir(d))) {
		pid_t tid = parse_tid(de->d_name);

		if (!tid)
			continue;
		if (ntid >= PROBE_THREADS_MAX) {
			out->truncated = 1;
			break;
		}
		tids[ntid++] = tid;
	}
	qsort(tids, ntid, sizeof(*tids), cmp_tid);
	out->t = calloc(ntid ? ntid : 1, sizeof(*out->t));
	if (!out->t) {
		snprintf(err, errlen, "thread snapshot: %s: out of memory", path);
		free(tids);
		closedir(d);
		close(piddir);
		return -1;
	}
	for (size_t i = 0; i < ntid; i++) {
		struct probe_thread *t = &out->t[out->n++];

		t->tid = tids[i];
		t->cpu = -1;
		read_thread(dirfd(d), t, hz);
	}
	free(tids);
	closedir(d);

	/* Exited (or became a zombie) while we read? */
	{
		char buf[STAT_MAX + 1];
		uint64_t f[STAT_FIELDS];
		unsigned nf;
		char st = 0;
		ssize_t n = util_read_buf_at(piddir, "stat", buf, STAT_MAX + 1);

		if ((n < 0 && is_gone_errno(errno)) || n == 0)
			out->gone = 1;
		else if (n > 0 && parse_stat(buf, NULL, 0, &st, f, &nf) == 0 &&
			 (st == 'Z' || st == 'X'))
			out->gone = 1;
	}
	close(piddir);
	out->end_ns = loop_mono_ns();
	return 0;
}

void probe_threads_free(struct probe_threads_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->t[i].stack);
	free(s->t);
	s->t = NULL;
	s->n = 0;
}

/* ---- JSON ---- */

struct jb {
	int fail;
};

static void jadd(struct jb *b, struct json_object *o, const char *k, struct json_object *v)
{
	if (jx_put(o, k, v) < 0)
		b->fail = 1;
}

static void jpush(struct jb *b, struct json_object *a, struct json_object *v)
{
	if (jx_push(a, v) < 0)
		b->fail = 1;
}

static struct json_object *flags_json(struct jb *b, unsigned flags)
{
	static const struct { unsigned f; const char *name; } names[] = {
		{ PROBE_THREADS_F_STAT, "stat" },
		{ PROBE_THREADS_F_STATUS, "status" },
		{ PROBE_THREADS_F_WCHAN, "wchan" },
		{ PROBE_THREADS_F_STACK, "stack" },
		{ PROBE_THREADS_F_SYSCALL, "syscall" },
		{ PROBE_THREADS_F_CMDLINE, "cmdline" },
		{ PROBE_THREADS_F_EXE, "exe" },
	};
	struct json_object *a = json_object_new_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].f)
			jpush(b, a, json_object_new_string(names[i].name));
	return a;
}

static struct json_object *stack_json(struct jb *b, const char *stack)
{
	struct json_object *a = json_object_new_array();
	const char *p = stack;

	if (!a)
		return NULL;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l)
			jpush(b, a, json_object_new_string_len(p, (int)l));
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

static struct json_object *reading_json(struct jb *b, const struct probe_thread *t)
{
	struct json_object *o = json_object_new_object();
	char st[2] = { t->state, 0 };

	if (!o)
		return NULL;
	jadd(b, o, "mono_ns", json_object_new_int64((int64_t)t->mono_ns));
	jadd(b, o, "gone", json_object_new_boolean(t->gone));
	if (t->have & PROBE_THREADS_F_STAT) {
		jadd(b, o, "comm", json_object_new_string(t->comm));
		jadd(b, o, "state", json_object_new_string(st));
		jadd(b, o, "utime_ns", json_object_new_int64((int64_t)t->utime_ns));
		jadd(b, o, "stime_ns", json_object_new_int64((int64_t)t->stime_ns));
		if (t->cpu >= 0)
			jadd(b, o, "cpu", json_object_new_int(t->cpu));
	}
	if (t->have & PROBE_THREADS_F_STATUS) {
		jadd(b, o, "voluntary_ctxt_switches", json_object_new_int64((int64_t)t->vol_cs));
		jadd(b, o, "nonvoluntary_ctxt_switches",
		     json_object_new_int64((int64_t)t->nonvol_cs));
	}
	if (t->have & PROBE_THREADS_F_WCHAN)
		jadd(b, o, "wchan", json_object_new_string(t->wchan));
	if (t->have & PROBE_THREADS_F_SYSCALL)
		jadd(b, o, "syscall", json_object_new_string(t->syscall));
	if (t->have & PROBE_THREADS_F_STACK) {
		jadd(b, o, "stack", stack_json(b, t->stack));
		jadd(b, o, "stack_truncated", json_object_new_boolean(t->stack_truncated));
	}
	if (t->unreadable)
		jadd(b, o, "unreadable", flags_json(b, t->unreadable));
	return o;
}

static struct json_object *snap_meta_json(struct jb *b, const struct probe_threads_snap *s)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	jadd(b, o, "start_ns", json_object_new_int64((int64_t)s->start_ns));
	jadd(b, o, "end_ns", json_object_new_int64((int64_t)s->end_ns));
	jadd(b, o, "real_ns", json_object_new_int64((int64_t)s->real_ns));
	jadd(b, o, "threads", json_object_new_int64((int64_t)s->n));
	jadd(b, o, "gone", json_object_new_boolean(s->gone));
	jadd(b, o, "truncated", json_object_new_boolean(s->truncated));
	if (s->unreadable)
		jadd(b, o, "unreadable", flags_json(b, s->unreadable));
	return o;
}

static const struct probe_thread *find_tid(const struct probe_threads_snap *s, pid_t tid)
{
	size_t lo = 0, hi = s->n;

	/* snapshots list TIDs sorted */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->t[mid].tid == tid)
			return &s->t[mid];
		if (s->t[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void rates(struct jb *b, struct json_object *o, const struct probe_thread *x,
		  const struct probe_thread *y)
{
	double dt;

	if (y->mono_ns <= x->mono_ns)
		return;
	dt = (double)(y->mono_ns - x->mono_ns) / 1e9;
	jadd(b, o, "interval_ns", json_object_new_int64((int64_t)(y->mono_ns - x->mono_ns)));
	if ((x->have & y->have & PROBE_THREADS_F_STATUS) &&
	    y->vol_cs >= x->vol_cs && y->nonvol_cs >= x->nonvol_cs) {
		/* rates to 0.1 a second: what the readings can tell */
		jadd(b, o, "voluntary_switches_per_s",
		     jx_new_fixed((double)(y->vol_cs - x->vol_cs) / dt, 1));
		jadd(b, o, "nonvoluntary_switches_per_s",
		     jx_new_fixed((double)(y->nonvol_cs - x->nonvol_cs) / dt, 1));
	}
	if ((x->have & y->have & PROBE_THREADS_F_STAT) &&
	    y->utime_ns + y->stime_ns >= x->utime_ns + x->stime_ns)
		jadd(b, o, "cpu_per_s",
		     jx_new_fixed((double)(y->utime_ns + y->stime_ns -
					    x->utime_ns - x->stime_ns) / 1e9 / dt, 4));
}

static struct json_object *thread_json(struct jb *b, pid_t tid, const struct probe_thread *x,
				       const struct probe_thread *y)
{
	struct json_object *o = json_object_new_object();
	const struct probe_thread *c = x && (x->have & PROBE_THREADS_F_STAT) ? x : y;

	if (!o)
		return NULL;
	jadd(b, o, "tid", json_object_new_int(tid));
	if (c && (c->have & PROBE_THREADS_F_STAT))
		jadd(b, o, "comm", json_object_new_string(c->comm));
	if (x)
		jadd(b, o, "first", reading_json(b, x));
	if (y)
		jadd(b, o, "second", reading_json(b, y));
	if (x && y)
		rates(b, o, x, y);
	return o;
}

int probe_threads_to_json(const struct probe_threads_snap *first,
			  const struct probe_threads_snap *second,
			  struct json_object *out)
{
	struct jb b = { 0 };
	struct json_object *snaps, *threads;
	const struct probe_threads_snap *p = first;

	if (!first || !out || !json_object_is_type(out, json_type_object)) {
		errno = EINVAL;
		return -1;
	}
	jadd(&b, out, "pid", json_object_new_int(first->pid));
	if (!p->cmdline[0] && !p->exe[0] && second)
		p = second;
	jadd(&b, out, "exe", json_object_new_string(p->exe));
	jadd(&b, out, "cmdline", json_object_new_string(p->cmdline));
	jadd(&b, out, "cmdline_truncated", json_object_new_boolean(p->cmdline_truncated));
	jadd(&b, out, "gone", json_object_new_boolean(first->gone || (second && second->gone)));
	snaps = json_object_new_array();
	if (snaps) {
		jpush(&b, snaps, snap_meta_json(&b, first));
		if (second)
			jpush(&b, snaps, snap_meta_json(&b, second));
	}
	jadd(&b, out, "snapshots", snaps);
	if (second && second->start_ns > first->start_ns)
		jadd(&b, out, "interval_ns",
		     json_object_new_int64((int64_t)(second->start_ns - first->start_ns)));

	threads = json_object_new_array();
	if (threads) {
		for (size_t i = 0; i < first->n; i++) {
			const struct probe_thread *x = &first->t[i];

			jpush(&b, threads, thread_json(&b, x->tid, x,
						       second ? find_tid(second, x->tid) : NULL));
		}
		for (size_t i = 0; second && i < second->n; i++) {
			const struct probe_thread *y = &second->t[i];

			if (!find_tid(first, y->tid))
				jpush(&b, threads, thread_json(&b, y->tid, NULL, y));
		}
	}
	jadd(&b, out, "threads", threads);
	if (b.fail) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}
