/* probe_exec_child: an external probe's child after fork (probe_exec.h):
 * raw system calls only, async-signal-safe; the namespace, its resource
 * limits, a private mount namespace with the daemon's paths hidden, the
 * privileges dropped in order and read back, then exec in a fixed
 * environment (probe_exec_int.h). */
#include "probes/probe_exec.h"
#include "probes/probe_exec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define CAP_PROBE_MAX 64        /* capability numbers tried (0..63) */

static const char *const child_env[] = {
	"PATH=" PROBE_EXEC_PATH, "LANG=C", NULL
};

static void child_fail_at(int fd, int stage, int e, int idx)
{
	struct child_report rep = { stage, e, idx };
	ssize_t w = write(fd, &rep, sizeof(rep));

	(void)w;
	_exit(127);
}

static void child_fail(int fd, int stage, int e)
{
	child_fail_at(fd, stage, e, -1);
}

/* After fork, in the child (one thread): raw system calls only, so nothing
 * here takes a lock or allocates (glibc's setresuid and setgroups would
 * also signal other threads: there are none). Returns 0, or the ST_ step
 * that failed with errno set. Order matters: the bounding set is dropped
 * while CAP_SETPCAP is still effective, the groups and gid while
 * CAP_SETGID is, the uid last of the identity (setresuid to a non-zero uid
 * clears the effective and permitted sets, PR_SET_KEEPCAPS is off after
 * fork's default, but not the inheritable one: capset clears all three). */
static int drop_privileges(const struct probe_exec_cred *c)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uid_t uid = c->priv == PROBE_EXEC_UNPRIV ? c->uid : 0;
	gid_t gid = c->priv == PROBE_EXEC_UNPRIV ? c->gid : 0;
	uid_t r[3];
	gid_t g[3];

	if (c->priv == PROBE_EXEC_DAEMON)
		return 0;
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		return ST_GROUPS;
	if (syscall(SYS_setresgid, gid, gid, gid) < 0)
		return ST_GID;
	for (int cap = 0; cap < CAP_PROBE_MAX; cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0)
			break;          /* EINVAL: past the kernel's last capability */
		if (in && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return ST_BSET;
	}
	/* EINVAL: a kernel without ambient capabilities (before 4.3) */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return ST_AMBIENT;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 ||
	    syscall(SYS_setresuid, uid, uid, uid) < 0)
		return ST_UID;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return ST_CAPS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ST_NNP;

	/* read it all back: a step the kernel took differently ends here */
	errno = EPERM;
	if (syscall(SYS_getresuid, &r[0], &r[1], &r[2]) < 0 ||
	    syscall(SYS_getresgid, &g[0], &g[1], &g[2]) < 0 ||
	    syscall(SYS_getgroups, 0, NULL) != 0 || syscall(SYS_capget, &hdr, data) < 0)
		return ST_VERIFY;
	for (int i = 0; i < 3; i++)
		if (r[i] != uid || g[i] != gid)
			return errno = EPERM, ST_VERIFY;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return errno = EPERM, ST_VERIFY;
	for (int cap = 0; cap < CAP_PROBE_MAX; cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0)
			break;
		if (in || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			return errno = EPERM, ST_VERIFY;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return errno = EPERM, ST_VERIFY;
	return 0;
}

static int limit(int res, uint64_t v)
{
	struct rlimit r = { (rlim_t)v, (rlim_t)v };

	return (int)syscall(SYS_prlimit64, 0, res, &r, NULL);
}

/* Every child's resource limits (probe_exec.h), with raw system calls. The
 * hard limits are lowered too: a child cannot raise them back. Returns 0 or
 * the ST_ step with errno set. */
static int set_limits(const struct probe_exec_cred *c)
{
	static const char adj[] = "1000";
	uint64_t data = c->data_max ? c->data_max : PROBE_EXEC_DATA_DEFAULT;
	uint64_t as = data > UINT64_MAX / PROBE_EXEC_AS_FACTOR ? (uint64_t)RLIM_INFINITY :
		      data * PROBE_EXEC_AS_FACTOR;
	int fd;

	_Static_assert(PROBE_EXEC_OOM_SCORE_ADJ == 1000, "adj above");
	if (limit(RLIMIT_DATA, data) < 0 || limit(RLIMIT_CORE, 0) < 0 ||
	    limit(RLIMIT_NOFILE, c->nofile_max ? c->nofile_max : PROBE_EXEC_NOFILE_DEFAULT) < 0 ||
	    (c->priv == PROBE_EXEC_UNPRIV && limit(RLIMIT_AS, as) < 0))
		return ST_LIMITS;
	/* the memory cgroup's OOM killer (the unit's MemoryMax=) takes the
	 * child first (mm/oom_kill.c oom_badness adds oom_score_adj) */
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ST_OOM;
	if (write(fd, adj, sizeof(adj) - 1) != (ssize_t)sizeof(adj) - 1) {
		int e = errno;

		close(fd);
		errno = e ? e : EIO;
		return ST_OOM;
	}
	close(fd);
	return 0;
}

/* PROBE_EXEC_ROOT_NOCAPS, while CAP_SYS_ADMIN is still held: a mount
 * namespace of its own, nothing propagating back, and each path of hide
 * covered read-only (probe_exec.h). Without a capability the child can
 * neither unmount nor remount them (fs/namespace.c may_mount), nor reach
 * the daemon's own view through /proc/PID/root or /cwd (a ptrace access
 * check it fails: cap_ptrace_access_check, the daemon's permitted set is
 * no subset of its empty one). Returns 0 or the step, *idx the path. */
static int hide_paths(char *const *hide, int *idx)
{
	const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;

	*idx = -1;
	if (syscall(SYS_unshare, CLONE_NEWNS) < 0 ||
	    syscall(SYS_mount, "none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return ST_MNTNS;
	for (int i = 0; hide && hide[i]; i++) {
		struct stat st;

		*idx = i;
		/* inside one already covered (flows/ in run_dir): gone */
		if (stat(hide[i], &st) < 0) {
			if (errno == ENOENT)
				continue;
			return ST_HIDE;
		}
		if (S_ISDIR(st.st_mode)) {
			if (syscall(SYS_mount, "nicstalld-hidden", hide[i], "tmpfs", ro,
				    "size=4k,nr_inodes=1,mode=0555") < 0)
				return ST_HIDE;
		} else if (syscall(SYS_mount, "/dev/null", hide[i], NULL, MS_BIND, NULL) < 0 ||
			   syscall(SYS_mount, NULL, hide[i], NULL, MS_REMOUNT | MS_BIND | ro,
				   NULL) < 0)
			return ST_HIDE;
	}
	return 0;
}

/* After fork: async-signal-safe calls only. */
void probe_exec_child(const char *path, char *const *argv, const struct probe_exec_cred *cred,
		      char *const *hide, int nsfd, int nul, int outw, int errw)
{
	int step, idx = -1;

	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t all;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);        /* EINVAL for reserved ones */
	sigemptyset(&all);
	if (sigprocmask(SIG_SETMASK, &all, NULL) < 0)
		child_fail(errw, ST_SETSIG, errno);
	setpgid(0, 0);
	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0)
		child_fail(errw, ST_SETNS, errno);

	/* Lift our fds above 2 first so the dup2s below cannot clobber one
	 * another, then 0 = /dev/null, 1 = 2 = pipe, 3 = report pipe. */
	{
		int n = fcntl(nul, F_DUPFD, 3);
		int o = fcntl(outw, F_DUPFD, 3);
		int e = fcntl(errw, F_DUPFD_CLOEXEC, 3);

		if (n < 0 || o < 0 || e < 0)
			child_fail(errw, ST_FDS, errno);
		if (dup2(n, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
			child_fail(e, ST_FDS, errno);
		if (e != 3 && dup3(e, 3, O_CLOEXEC) < 0)
			child_fail(e, ST_FDS, errno);
		errw = 3;
	}
	if (close_range(4, ~0u, 0) < 0)
		for (int fd = 4; fd < 4096; fd++)
			close(fd);
	if ((step = set_limits(cred)) != 0)
		child_fail(errw, step, errno);
	if (cred->priv == PROBE_EXEC_ROOT_NOCAPS && (step = hide_paths(hide, &idx)) != 0)
		child_fail_at(errw, step, errno, idx);
	/* last: setns and the mounts needed CAP_SYS_ADMIN */
	if ((step = drop_privileges(cred)) != 0)
		child_fail(errw, step, errno);
	execve(path, argv, (char *const *)child_env);
	child_fail(errw, ST_EXEC, errno);
	_exit(127);
}
