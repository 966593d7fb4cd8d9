/* probe_exec: asynchronous external probe commands, no shell. */
#include "probes/probe_exec.h"
#include "probes/probe_exec_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <json-c/json.h>

#define READ_CHUNK 65536
#define READS_PER_WAKE 16       /* at most 1 MiB per loop wakeup */
#define REAP_WAIT_MS 200        /* probe_exec_free on a running child */


/* What each step is, for the result's error. */
static const char *const priv_step[] = {
	[ST_GROUPS] = "setgroups (no supplementary groups)",
	[ST_GID] = "setresgid",
	[ST_BSET] = "PR_CAPBSET_DROP (the bounding set; needs CAP_SETPCAP)",
	[ST_AMBIENT] = "PR_CAP_AMBIENT_CLEAR_ALL",
	[ST_UID] = "setresuid",
	[ST_CAPS] = "capset (effective, permitted, inheritable)",
	[ST_NNP] = "PR_SET_NO_NEW_PRIVS",
	[ST_VERIFY] = "reading back uid, gid, groups and capabilities (not as set)",
	[ST_LIMITS] = "setting its resource limits (RLIMIT_DATA, AS, NOFILE, CORE)",
	[ST_OOM] = "writing /proc/self/oom_score_adj",
	[ST_MNTNS] = "a private mount namespace (unshare CLONE_NEWNS, MS_PRIVATE; needs "
		     "CAP_SYS_ADMIN, and the unit's RestrictNamespaces= to allow mnt and "
		     "SystemCallFilter= mount)",
	[ST_HIDE] = "hiding the daemon's paths",
};


enum phase { PH_RUNNING, PH_TERM, PH_KILL, PH_NOTIFY, PH_DONE };


struct probe_exec {
	struct loop *l;
	char **argv;
	struct probe_exec_cred cred;   /* .hide: NULL (copied to hide) */
	char **hide;            /* PROBE_EXEC_ROOT_NOCAPS: paths out of view */
	char path[PATH_MAX];
	pid_t pid;              /* > 0 until reaped */
	int pidfd, outfd, errfd;
	int out_open;           /* outfd registered in the loop */
	struct loop_timer *timer;
	enum phase phase;
	size_t max_output, cap;
	probe_exec_done_fn done;
	void *arg;
	struct probe_exec_result r;
};


/* ---- argv helpers ---- */

void probe_exec_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

static char **argv_dup(const char *const *argv)
{
	size_t n = 0;
	char **v;

	while (argv[n])
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(argv[i]))) {
			probe_exec_argv_free(v);
			return NULL;
		}
	return v;
}

int probe_exec_split(const char *cmdline, char ***argvp, char *err, size_t errlen)
{
	size_t len, n = 0, cap = 8, ci = 0;
	char **v = NULL, *cur = NULL;
	int in_word = 0;

	*argvp = NULL;
	if (!cmdline) {
		snprintf(err, errlen, "command line: missing");
		return -1;
	}
	len = strlen(cmdline);
	cur = malloc(len + 1);
	v = calloc(cap, sizeof(*v));
	if (!cur || !v)
		goto nomem;
	for (size_t i = 0; i <= len; i++) {
		char c = cmdline[i];

		if (c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (in_word) {
				if (n + 2 > cap) {
					char **nv = realloc(v, 2 * cap * sizeof(*v));

					if (!nv)
						goto nomem;
					memset(nv + cap, 0, cap * sizeof(*v));
					v = nv;
					cap *= 2;
				}
				cur[ci] = '\0';
				if (!(v[n++] = strdup(cur)))
					goto nomem;
				ci = 0;
				in_word = 0;
			}
			continue;
		}
		in_word = 1;
		if (c == '\'') {
			size_t open = i;

			for (i++; cmdline[i] && cmdline[i] != '\''; i++)
				cur[ci++] = cmdline[i];
			if (!cmdline[i]) {
				snprintf(err, errlen,
					 "command line: unterminated single quote opened at column %zu",
					 open + 1);
				goto fail;
			}
		} else if (c == '"') {
			size_t open = i;

			for (i++; cmdline[i] && cmdline[i] != '"'; i++) {
				if (cmdline[i] == '\\' &&
				    (cmdline[i + 1] == '"' || cmdline[i + 1] == '\\'))
					i++;
				cur[ci++] = cmdline[i];
			}
			if (!cmdline[i]) {
				snprintf(err, errlen,
					 "command line: unterminated double quote opened at column %zu",
					 open + 1);
				goto fail;
			}
		} else if (c == '\\') {
			if (!cmdline[i + 1]) {
				snprintf(err, errlen,
					 "command line: trailing backslash at column %zu", i + 1);
				goto fail;
			}
			cur[ci++] = cmdline[++i];
		} else
			cur[ci++] = c;
	}
	free(cur);
	if (!n) {
		snprintf(err, errlen, "command line: empty");
		probe_exec_argv_free(v);
		return -1;
	}
	*argvp = v;
	return (int)n;
nomem:
	snprintf(err, errlen, "command line: out of memory");
fail:
	free(cur);
	probe_exec_argv_free(v);
	return -1;
}

/* Look name up like execvp would, but in the fixed PATH only. */
static int resolve(const char *name, char *out, size_t outlen)
{
	const char *p = PROBE_EXEC_PATH;

	if (strchr(name, '/')) {
		if (strlen(name) >= outlen)
			return -1;
		strcpy(out, name);
		return access(out, F_OK) == 0 ? 0 : -1;
	}
	while (*p) {
		const char *c = strchr(p, ':');
		size_t dl = c ? (size_t)(c - p) : strlen(p);
		int w = snprintf(out, outlen, "%.*s/%s", (int)dl, p, name);

		if (w > 0 && (size_t)w < outlen && access(out, X_OK) == 0)
			return 0;
		p += dl;
		if (*p == ':')
			p++;
	}
	return -1;
}

/* ---- parent ---- */

static void out_close(struct probe_exec *p)
{
	if (p->outfd < 0)
		return;
	if (p->out_open)
		loop_del_fd(p->l, p->outfd);
	p->out_open = 0;
	close(p->outfd);
	p->outfd = -1;
}

/* Read what is there (bounded per call). Returns 1 at EOF. */
static int out_read(struct probe_exec *p, int max_reads)
{
	char scratch[4096];

	for (int i = 0; i < max_reads && p->outfd >= 0; i++) {
		ssize_t n;

		if (p->r.out_len < p->max_output) {
			size_t want = p->max_output - p->r.out_len;

			if (p->r.out_len + 1 >= p->cap) {
				size_t nc = p->cap ? p->cap * 2 : 4096;
				char *nb;

				if (nc > p->max_output + 1)
					nc = p->max_output + 1;
				nb = realloc(p->r.out, nc);
				if (!nb) {
					snprintf(p->r.error, sizeof(p->r.error),
						 "%s: output buffer: out of memory", p->argv[0]);
					out_close(p);
					return 1;
				}
				p->r.out = nb;
				p->cap = nc;
				nb[p->r.out_len] = '\0';
			}
			if (want > p->cap - 1 - p->r.out_len)
				want = p->cap - 1 - p->r.out_len;
			if (want > READ_CHUNK)
				want = READ_CHUNK;
			n = read(p->outfd, p->r.out + p->r.out_len, want);
			if (n > 0) {
				p->r.out_len += (size_t)n;
				p->r.out[p->r.out_len] = '\0';
			}
		} else {
			n = read(p->outfd, scratch, sizeof(scratch));
			if (n > 0) {
				p->r.dropped += (size_t)n;
				p->r.truncated = 1;
			}
		}
		if (n == 0) {
			out_close(p);
			return 1;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			if (!p->r.error[0])
				snprintf(p->r.error, sizeof(p->r.error),
					 "%s: reading output: %s", p->argv[0], strerror(errno));
			out_close(p);
			return 1;
		}
	}
	return 0;
}

static void out_cb(int fd, uint32_t events, void *arg)
{
	struct probe_exec *p = arg;

	(void)fd;
	(void)events;
	out_read(p, READS_PER_WAKE);
}

static void group_kill(struct probe_exec *p, int sig)
{
	if (p->pid <= 0)
		return;
	if (kill(-p->pid, sig) < 0 && errno == ESRCH)
		kill(p->pid, sig);
}

static void finish(struct probe_exec *p)
{
	if (p->phase == PH_DONE)
		return;
	p->phase = PH_DONE;
	if (p->timer)
		loop_timer_set(p->timer, 0, 0);
	if (!p->r.end_ns)
		p->r.end_ns = loop_mono_ns();
	if (!p->r.out) {
		p->r.out = calloc(1, 1);
		p->cap = 1;
	}
	p->done(p, p->arg);     /* may free p: nothing after this */
}

static void report_child(struct probe_exec *p)
{
	struct child_report rep;
	ssize_t n;

	if (p->errfd < 0)
		return;
	n = read(p->errfd, &rep, sizeof(rep));
	close(p->errfd);
	p->errfd = -1;
	if (n != (ssize_t)sizeof(rep))
		return;         /* exec succeeded (EOF) */
	switch (rep.stage) {
	case ST_EXEC:
		if (rep.err == ENOENT) {
			p->r.not_found = 1;
			snprintf(p->r.error, sizeof(p->r.error), "command not found: %s",
				 p->argv[0]);
		} else
			snprintf(p->r.error, sizeof(p->r.error), "exec %.160s: %s", p->path,
				 strerror(rep.err));
		break;
	case ST_SETNS:
		snprintf(p->r.error, sizeof(p->r.error),
			 "%s: entering the network namespace: %s", p->argv[0],
			 strerror(rep.err));
		break;
	case ST_GROUPS: case ST_GID: case ST_BSET: case ST_AMBIENT:
	case ST_UID: case ST_CAPS: case ST_NNP: case ST_VERIFY:
	case ST_LIMITS: case ST_OOM: case ST_MNTNS: case ST_HIDE:
		for (int i = 0; rep.idx >= 0; i++)
			if (!p->hide || !p->hide[i]) {
				rep.idx = -1;   /* not one of ours */
				break;
			} else if (i == rep.idx)
				break;
		p->r.priv_failed = 1;
		snprintf(p->r.error, sizeof(p->r.error),
			 "%.64s: not run: dropping privileges to uid %u gid %u failed at %s%s%.80s: %s",
			 p->argv[0], (unsigned)(p->cred.priv == PROBE_EXEC_UNPRIV ? p->cred.uid : 0),
			 (unsigned)(p->cred.priv == PROBE_EXEC_UNPRIV ? p->cred.gid : 0),
			 priv_step[rep.stage], rep.stage == ST_HIDE && rep.idx >= 0 ? " " : "",
			 rep.stage == ST_HIDE && rep.idx >= 0 && p->hide ? p->hide[rep.idx] : "",
			 strerror(rep.err));
		break;
	default:
		snprintf(p->r.error, sizeof(p->r.error), "%s: child setup (stage %d): %s",
			 p->argv[0], rep.stage, strerror(rep.err));
		break;
	}
}

static void pid_cb(int fd, uint32_t events, void *arg)
{
	struct probe_exec *p = arg;
	siginfo_t si;

	(void)fd;
	(void)events;
	/* The child is a zombie now, so its pid (= our group id) cannot be
	 * reused: kill whatever it left behind in its group, then reap. */
	group_kill(p, SIGKILL);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG) < 0) {
		snprintf(p->r.error, sizeof(p->r.error), "%s: waitid pid %d: %s",
			 p->argv[0], (int)p->pid, strerror(errno));
		si.si_pid = p->pid;     /* gone anyway (reaped elsewhere) */
		si.si_code = 0;
	}
	if (si.si_pid == 0)
		return;         /* spurious: not yet exited */
	p->r.end_ns = loop_mono_ns();
	if (si.si_code == CLD_EXITED) {
		p->r.exited = 1;
		p->r.status = si.si_status;
	} else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
		p->r.signaled = 1;
		p->r.signo = si.si_status;
	}
	p->pid = 0;
	loop_del_fd(p->l, p->pidfd);
	close(p->pidfd);
	p->pidfd = -1;
	/* Everything the child wrote is in the pipe: drain it (bounded). */
	out_read(p, 64);
	out_close(p);
	report_child(p);
	finish(p);
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	struct probe_exec *p = arg;

	(void)t;
	switch (p->phase) {
	case PH_NOTIFY:
		finish(p);
		break;
	case PH_RUNNING:
		p->r.timed_out = 1;
		group_kill(p, SIGTERM);
		p->phase = PH_TERM;
		loop_timer_set(p->timer, PROBE_EXEC_GRACE_NS, 0);
		break;
	case PH_TERM:
		group_kill(p, SIGKILL);
		p->phase = PH_KILL;
		loop_timer_set(p->timer, PROBE_EXEC_GRACE_NS, 0);
		break;
	case PH_KILL:
		/* Uninterruptible sleep in the kernel: report, do not wait. */
		snprintf(p->r.error, sizeof(p->r.error),
			 "%s: pid %d did not exit after SIGKILL (uninterruptible sleep?)",
			 p->argv[0], (int)p->pid);
		out_read(p, 64);
		finish(p);
		break;
	default:
		break;
	}
}

static void close_if(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct probe_exec *probe_exec_start(struct loop *l, const char *const *argv,
				    const struct probe_exec_cred *cred, int nsfd,
				    uint64_t timeout_ns, size_t max_output,
				    probe_exec_done_fn done, void *arg,
				    char *err, size_t errlen)
{
	struct probe_exec *p;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, nul = -1;

	if (!l || !argv || !argv[0] || !argv[0][0] || !done || !cred ||
	    (cred->priv != PROBE_EXEC_UNPRIV && cred->priv != PROBE_EXEC_ROOT_NOCAPS &&
	     cred->priv != PROBE_EXEC_DAEMON)) {
		snprintf(err, errlen, "probe: invalid arguments%s",
			 l && argv && argv[0] && done && (!cred || !cred->priv) ?
			 " (no privileges chosen)" : "");
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->argv = argv_dup(argv))) {
		snprintf(err, errlen, "probe %s: out of memory", argv[0]);
		free(p);
		return NULL;
	}
	p->l = l;
	p->cred = *cred;
	p->cred.hide = NULL;
	if (cred->hide && !(p->hide = argv_dup(cred->hide))) {
		snprintf(err, errlen, "probe %s: out of memory", argv[0]);
		probe_exec_argv_free(p->argv);
		free(p);
		return NULL;
	}
	p->pidfd = p->outfd = p->errfd = -1;
	p->max_output = max_output;
	p->done = done;
	p->arg = arg;
	p->r.start_ns = loop_mono_ns();
	p->timer = loop_timer_new(l, timer_cb, p);
	if (!p->timer) {
		snprintf(err, errlen, "probe %s: timer: %s", argv[0], strerror(errno));
		goto fail;
	}
	loop_timer_name(p->timer, "probe");
	if (resolve(argv[0], p->path, sizeof(p->path)) < 0) {
		p->r.not_found = 1;
		snprintf(p->r.error, sizeof(p->r.error), "command not found: %s%s", argv[0],
			 strchr(argv[0], '/') ? "" : " (PATH=" PROBE_EXEC_PATH ")");
		p->r.end_ns = p->r.start_ns;
		p->phase = PH_NOTIFY;
		loop_timer_set(p->timer, 1, 0);  /* done from the loop */
		return p;
	}
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "probe %s: pipe: %s", argv[0], strerror(errno));
		goto fail;
	}
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0) {
		snprintf(err, errlen, "probe %s: /dev/null: %s", argv[0], strerror(errno));
		goto fail;
	}
	/* Only our read ends are non-blocking: the child's stdout must block
	 * when the pipe is full. */
	if (fcntl(outp[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(errp[0], F_SETFL, O_NONBLOCK) < 0) {
		snprintf(err, errlen, "probe %s: pipe flags: %s", argv[0], strerror(errno));
		goto fail;
	}
	p->pid = fork();
	if (p->pid < 0) {
		snprintf(err, errlen, "probe %s: fork: %s", argv[0], strerror(errno));
		p->pid = 0;
		goto fail;
	}
	if (p->pid == 0)
		probe_exec_child(p->path, p->argv, &p->cred, p->hide, nsfd, nul, outp[1], errp[1]);
	setpgid(p->pid, p->pid);        /* also done by the child: no race */
	close_if(&outp[1]);
	close_if(&errp[1]);
	close_if(&nul);
	p->outfd = outp[0];
	p->errfd = errp[0];
	outp[0] = errp[0] = -1;
	p->pidfd = pidfd_open(p->pid, 0);
	if (p->pidfd < 0) {
		snprintf(err, errlen, "probe %s: pidfd_open pid %d: %s", argv[0], (int)p->pid,
			 strerror(errno));
		goto fail;
	}
	if (loop_add_fd(l, p->pidfd, EPOLLIN, pid_cb, p) < 0) {
		snprintf(err, errlen, "probe %s: watching pid %d: %s", argv[0], (int)p->pid,
			 strerror(errno));
		close_if(&p->pidfd);
		goto fail;
	}
	if (loop_add_fd(l, p->outfd, EPOLLIN, out_cb, p) < 0) {
		snprintf(err, errlen, "probe %s: watching output: %s", argv[0], strerror(errno));
		goto fail;
	}
	p->out_open = 1;
	loop_fd_name(l, p->pidfd, "probe");
	loop_fd_name(l, p->outfd, "probe");
	p->phase = PH_RUNNING;
	if (timeout_ns && loop_timer_set(p->timer, timeout_ns, 0) < 0) {
		snprintf(err, errlen, "probe %s: timeout timer: %s", argv[0], strerror(errno));
		goto fail;
	}
	return p;
fail:
	close_if(&outp[0]);
	close_if(&outp[1]);
	close_if(&errp[0]);
	close_if(&errp[1]);
	close_if(&nul);
	probe_exec_free(p);
	return NULL;
}

const struct probe_exec_result *probe_exec_result(const struct probe_exec *p)
{
	return p ? &p->r : NULL;
}

int probe_exec_running(const struct probe_exec *p)
{
	return p && p->pid > 0;
}

/* Wait up to ms for the child to exit (its pidfd readable), a signal's
 * interruption included in the bound: 1 exited, 0 not. Blocks, so only
 * for probe_exec_terminate (a stop) and probe_exec_free of a running child
 * (REAP_WAIT_MS after SIGKILL). */
static int wait_exit(struct probe_exec *p, int ms)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
	uint64_t end = loop_mono_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000ull;

	for (;;) {
		uint64_t now = loop_mono_ns();
		int left = now >= end ? 0 : (int)((end - now + 999999) / 1000000);
		int n = poll(&pfd, 1, left);

		if (n >= 0 || errno != EINTR || !left)
			return n > 0;
	}
}

int probe_exec_terminate(struct probe_exec *p, int grace_ms)
{
	if (!p || p->pid <= 0 || p->pidfd < 0)
		return 1;
	group_kill(p, SIGTERM);
	return wait_exit(p, grace_ms);
}

void probe_exec_free(struct probe_exec *p)
{
	if (!p)
		return;
	if (p->pid > 0) {
		siginfo_t si = { 0 };

		group_kill(p, SIGKILL);
		/* bounded: a child stuck in D state must not hang us */
		if (p->pidfd >= 0)
			wait_exit(p, REAP_WAIT_MS);
		if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
			log_warnx("probe %s: pid %d did not exit after SIGKILL; left unreaped",
				  p->argv ? p->argv[0] : "?", (int)p->pid);
		p->pid = 0;
	}
	if (p->pidfd >= 0) {
		loop_del_fd(p->l, p->pidfd);
		close(p->pidfd);
	}
	out_close(p);
	close_if(&p->errfd);
	loop_timer_free(p->timer);
	probe_exec_argv_free(p->argv);
	probe_exec_argv_free(p->hide);
	free(p->r.out);
	free(p);
}

/* ---- JSON ---- */

/* Copy s (len bytes) replacing invalid UTF-8 by '?'. */

static void jadd(int *fail, struct json_object *o, const char *k, struct json_object *v)
{
	if (jx_put(o, k, v) < 0)
		*fail = 1;
}

int probe_exec_to_json(const struct probe_exec *p, struct json_object *out)
{
	const struct probe_exec_result *r;
	struct json_object *a;
	int fail = 0;
	char *txt;

	if (!p || !out || !json_object_is_type(out, json_type_object)) {
		errno = EINVAL;
		return -1;
	}
	r = &p->r;
	a = json_object_new_array();
	for (char **v = p->argv; a && *v; v++) {
		char *c = util_utf8_clean(*v, strlen(*v));
		struct json_object *s = c ? json_object_new_string(c) : NULL;

		free(c);
		if (jx_push(a, s) < 0)
			fail = 1;
	}
	jadd(&fail, out, "argv", a);
	if (!r->not_found && p->path[0]) {
		txt = util_utf8_clean(p->path, strlen(p->path));
		jadd(&fail, out, "path", txt ? json_object_new_string(txt) : NULL);
		free(txt);
	}
	/* the identity it ran with (PROBE_EXEC_DAEMON: the daemon's own) */
	jadd(&fail, out, "uid", json_object_new_int64(p->cred.priv == PROBE_EXEC_UNPRIV ?
						       (int64_t)p->cred.uid : p->cred.priv ==
						       PROBE_EXEC_DAEMON ? (int64_t)geteuid() : 0));
	jadd(&fail, out, "gid", json_object_new_int64(p->cred.priv == PROBE_EXEC_UNPRIV ?
						       (int64_t)p->cred.gid : p->cred.priv ==
						       PROBE_EXEC_DAEMON ? (int64_t)getegid() : 0));
	jadd(&fail, out, "capabilities", json_object_new_string(p->cred.priv == PROBE_EXEC_DAEMON ?
								 "the daemon's" : "none"));
	jadd(&fail, out, "not_found", json_object_new_boolean(r->not_found));
	jadd(&fail, out, "exited", json_object_new_boolean(r->exited));
	if (r->exited)
		jadd(&fail, out, "exit_code", json_object_new_int(r->status));
	jadd(&fail, out, "signaled", json_object_new_boolean(r->signaled));
	if (r->signaled) {
		const char *sn = sigabbrev_np(r->signo);

		jadd(&fail, out, "signal", json_object_new_int(r->signo));
		if (sn)
			jadd(&fail, out, "signal_name", json_object_new_string(sn));
	}
	jadd(&fail, out, "timed_out", json_object_new_boolean(r->timed_out));
	jadd(&fail, out, "start_ns", json_object_new_int64((int64_t)r->start_ns));
	jadd(&fail, out, "end_ns", json_object_new_int64((int64_t)r->end_ns));
	jadd(&fail, out, "duration_ns",
	     json_object_new_int64(r->end_ns >= r->start_ns ? (int64_t)(r->end_ns - r->start_ns) : 0));
	txt = util_utf8_clean(r->out ? r->out : "", r->out ? r->out_len : 0);
	jadd(&fail, out, "output", txt ? json_object_new_string(txt) : NULL);
	free(txt);
	jadd(&fail, out, "output_bytes", json_object_new_int64((int64_t)r->out_len));
	jadd(&fail, out, "dropped_bytes", json_object_new_int64((int64_t)r->dropped));
	jadd(&fail, out, "truncated", json_object_new_boolean(r->truncated));
	if (r->error[0]) {
		txt = util_utf8_clean(r->error, strlen(r->error));
		jadd(&fail, out, "error", txt ? json_object_new_string(txt) : NULL);
		free(txt);
	}
	if (fail) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}
