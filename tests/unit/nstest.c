/* nstest: helpers shared by the unit tests that need the kernel's
 * networking (they run as root in a private network namespace). */
#include "nstest.h"

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Run a shell command line (tests only); its exit status, -1 or 128. */
int nstest_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

/* A second network namespace, held only by the returned fd (it vanishes
 * with the fd): a child unshares, the parent opens its namespace. */
int nstest_make_netns(void)
{
	int p[2], fd;
	char c, path[64];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWNET) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(p[0]);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return fd;
}

int nstest_veth(int nsfd, const char *here, const char *addr_here,
		const char *peer, const char *addr_peer)
{
	int pid = (int)getpid(), rc;

	rc = nstest_sh("ip link add %s type veth peer name %s netns /proc/%d/fd/%d && "
		       "ip addr add %s/24 dev %s && ip link set %s up",
		       here, peer, pid, nsfd, addr_here, here, here);
	if (rc)
		return rc;
	return nstest_sh("nsenter --net=/proc/%d/fd/%d sh -c 'ip link set lo up && "
			 "ip addr add %s/24 dev %s && ip link set %s up'",
			 pid, nsfd, addr_peer, peer, peer);
}

void nstest_collect(const struct flow_obs *o, void *arg)
{
	struct nstest_obs *l = arg;

	if (l->n < sizeof(l->o) / sizeof(l->o[0]))
		l->o[l->n++] = *o;
}

void nstest_msleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int nstest_chdir_repo(const char *file)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (access(file, R_OK) == 0)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if (chdir(dirname(exe)) < 0 || chdir("../..") < 0)
		return -1;
	return access(file, R_OK) == 0 ? 0 : -1;
}
