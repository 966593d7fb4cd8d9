/* probe_exec: run an external probe command (onload_stackdump, ip, ...)
 * asynchronously in the daemon's loop, without a shell.
 *
 * The child gets a fixed environment (PATH=/usr/sbin:/usr/bin:/sbin:/bin,
 * LANG=C), stdin /dev/null, stdout+stderr into one non-blocking pipe read by
 * the loop, no other fds, default signal handling, its own process group and
 * optionally the network namespace nsfd. Exit is watched with a pidfd; at
 * the timeout the group gets SIGTERM, PROBE_EXEC_GRACE_NS later SIGKILL.
 * Output beyond max_output is read and discarded (counted in dropped). When
 * the command exits, leftover members of its process group are killed.
 *
 * Children are reaped with waitid(P_PID): nothing else in the daemon may
 * reap arbitrary children (waitpid(-1)) or set SIGCHLD to SIG_IGN.
 *
 * Privileges (struct probe_exec_cred): between fork and exec, after the
 * setns, the child takes the identity its caller names and gives up every
 * capability: supplementary groups dropped (setgroups 0), setresgid,
 * every capability of the bounding set dropped (PR_CAPBSET_DROP), the
 * ambient set cleared, setresuid, the effective, permitted and inheritable
 * sets cleared (capset), PR_SET_NO_NEW_PRIVS; then it reads all of that
 * back. Any step that fails ends the child before the exec, and the result's
 * error names the step: a command never runs with more than it was given.
 * The daemon needs CAP_SETUID, CAP_SETGID and CAP_SETPCAP for this, and
 * CAP_KILL to signal a child that no longer runs as root.
 *
 * Before that, every child gets its resource limits (struct probe_exec_cred
 * data_max, nofile_max), and PROBE_EXEC_ROOT_NOCAPS children a private mount
 * namespace hiding the daemon's own paths (cred.hide): uid 0 without a
 * capability still owns every root-owned file, so what it must not touch is
 * taken out of its view. */
#ifndef NICSTALL_PROBE_EXEC_H
#define NICSTALL_PROBE_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct json_object;
struct probe_exec;

#define PROBE_EXEC_GRACE_NS 500000000ull        /* SIGTERM -> SIGKILL */
#define PROBE_EXEC_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

enum probe_exec_priv {
	/* uid and gid below, no supplementary groups, no capabilities, no
	 * new privileges: the bundle hook, configured probes */
	PROBE_EXEC_UNPRIV = 1,
	/* uid and gid 0 kept, no supplementary groups, no capabilities, no
	 * new privileges: Onload's tools (the driver lets real uid 0 map any
	 * stack; no ioctl they use checks a capability) */
	PROBE_EXEC_ROOT_NOCAPS,
	/* the daemon's own uid, groups and capabilities: configured probes
	 * with probe_user = root, the administrator's explicit choice */
	PROBE_EXEC_DAEMON,
};

/* Resource limits of every child (the unit's MemoryMax= is shared with the
 * daemon: a child that grows must fail alone): RLIMIT_DATA (heap and
 * private writable mappings), RLIMIT_AS for PROBE_EXEC_UNPRIV only (Onload's
 * tools, and onload_stackdump as a probe_user = root probe, map every
 * stack's shared memory: address space, not memory), RLIMIT_NOFILE, RLIMIT_CORE 0, and oom_score_adj 1000 so that the
 * kernel's OOM killer takes a child before the daemon. */
#define PROBE_EXEC_DATA_DEFAULT (256ull << 20)
#define PROBE_EXEC_AS_FACTOR 4          /* RLIMIT_AS = data_max x this */
#define PROBE_EXEC_NOFILE_DEFAULT 1024
#define PROBE_EXEC_OOM_SCORE_ADJ 1000

struct probe_exec_cred {
	enum probe_exec_priv priv;  /* 0 is invalid: every caller chooses */
	uid_t uid;                  /* PROBE_EXEC_UNPRIV */
	gid_t gid;
	/* PROBE_EXEC_ROOT_NOCAPS: the child enters a private mount namespace
	 * (while it still holds CAP_SYS_ADMIN) in which each of these paths
	 * (NULL-terminated; NULL = none) is covered: a directory by an empty,
	 * read-only tmpfs, anything else (the control socket) by /dev/null
	 * bound read-only over it; a path that does not exist is skipped.
	 * Read only by probe_exec_start (the strings need not outlive it). */
	const char *const *hide;
	uint64_t data_max;          /* RLIMIT_DATA; 0 = PROBE_EXEC_DATA_DEFAULT */
	unsigned nofile_max;        /* RLIMIT_NOFILE; 0 = PROBE_EXEC_NOFILE_DEFAULT */
};

struct probe_exec_result {
	int exited;             /* exited normally; status is its exit code */
	int status;
	int signaled;           /* killed by signo */
	int signo;
	int timed_out;          /* we sent SIGTERM (and maybe SIGKILL) */
	int not_found;          /* command not found: nothing ran */
	int priv_failed;        /* privileges could not be dropped: nothing ran */
	int truncated;          /* dropped > 0 */
	size_t out_len;         /* bytes in out (<= max_output) */
	size_t dropped;         /* output bytes read and discarded */
	char *out;              /* stdout+stderr, NUL-terminated (not counted) */
	uint64_t start_ns, end_ns;      /* CLOCK_MONOTONIC */
	char error[256];        /* why it did not run or how it failed; "" if ok */
};

typedef void (*probe_exec_done_fn)(struct probe_exec *p, void *arg);

/* Start argv (argv[0] a path, or a name looked up in PROBE_EXEC_PATH) with
 * the privileges of cred (required; copied).
 * nsfd: -1 = own namespace, else a network namespace fd the child enters.
 * timeout_ns 0 = no timeout. done is called exactly once, from the loop
 * (never from inside probe_exec_start), also for a command not found; it may
 * call probe_exec_free. Returns NULL with err only when the probe could not
 * be set up at all (bad arguments, no memory, no pipe, fork failed). */
struct probe_exec *probe_exec_start(struct loop *l, const char *const *argv,
				    const struct probe_exec_cred *cred, int nsfd,
				    uint64_t timeout_ns, size_t max_output,
				    probe_exec_done_fn done, void *arg,
				    char *err, size_t errlen);

/* Valid once done has been called (before: the partial state). */
const struct probe_exec_result *probe_exec_result(const struct probe_exec *p);
int probe_exec_running(const struct probe_exec *p);

/* Kill (SIGKILL to the group) and reap a still-running child without calling
 * done, then free everything. NULL is fine. */
void probe_exec_free(struct probe_exec *p);

/* For a stop: SIGTERM to a still-running child's group, then wait up to
 * grace_ms for the child to exit (it may clean up: a hook's temporary
 * files), without calling done. Blocks at most grace_ms; probe_exec_free
 * then reaps it, or kills what is left. 1 when the child ended within the
 * grace (or was not running: NULL is fine), 0 when it is still there. */
int probe_exec_terminate(struct probe_exec *p, int grace_ms);

/* Fill the JSON object out: argv, exit/signal/timeout/not_found, times,
 * output (invalid UTF-8 replaced by '?'), truncated/dropped, error.
 * Returns 0 or -1 (ENOMEM / EINVAL). */
int probe_exec_to_json(const struct probe_exec *p, struct json_object *out);

/* Split a configured command line into a NULL-terminated argv without a
 * shell: blanks separate words; '...' is literal; "..." allows \" and \\;
 * outside quotes a backslash escapes the next character. Returns argc (> 0)
 * and *argv (free with probe_exec_argv_free), or -1 with err naming the
 * column (1-based) of an unbalanced quote or trailing backslash. */
int probe_exec_split(const char *cmdline, char ***argv, char *err, size_t errlen);
void probe_exec_argv_free(char **argv);

#endif
