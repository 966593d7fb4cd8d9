/* Unit tests: lib/fsutil (reads that follow no link and never block,
 * O_EXCL work files, tree removal and sizes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>

#include "lib/fsutil.h"

struct fx {
	char dir[64];
	int dfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_fsutil.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->dfd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	close(f->dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "teardown: %s failed\n", cmd);
	free(f);
	return 0;
}

/* CAP_DAC_OVERRIDE (and _READ_SEARCH) out of the effective set, or back */
static void dac_effective(int on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	unsigned m = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);

	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	d[0].effective = on ? d[0].effective | (d[0].permitted & m) : d[0].effective & ~m;
	assert_int_equal(syscall(SYS_capset, &h, d), 0);
}

/* Create rel in f's directory, owned uid:gid with mode, and open it for
 * reading (as the reader holds it). */
static int held(struct fx *f, const char *rel, uid_t uid, gid_t gid, mode_t mode, char *path,
		size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", f->dir, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chown(path, uid, gid), 0);
	assert_int_equal(chmod(path, mode), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static void fsu_reopen_as__file_of_another_user__written_as_its_owner(void **state)
{
	struct fx *f = *state;
	char path[128], moved[160], buf[4];
	int rfd, fd;

	/* a VMA statistics file: the engine's user's, mode 0644 */
	rfd = held(f, "vmastat.1", 65534, 65534, 0644, path, sizeof(path));
	assert_int_equal(chmod(f->dir, 0755), 0);
	dac_effective(0);
	/* root without CAP_DAC_OVERRIDE may not write it... */
	assert_int_equal(open(path, O_WRONLY), -1);
	assert_int_equal(errno, EACCES);
	/* ...its owner may, and so may root as its owner */
	fd = fsu_reopen_as(rfd, O_WRONLY | O_CLOEXEC, 65534, 65534);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	/* and the identity is ours again: the plain open still fails, a file
	 * the user could not write is not written through it */
	assert_int_equal(setfsuid((uid_t)-1), 0);
	assert_int_equal(setfsgid((gid_t)-1), 0);
	assert_int_equal(open(path, O_WRONLY), -1);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(fsu_reopen_as(rfd, O_WRONLY, 65534, 65534), -1);
	assert_int_equal(errno, EACCES);
	assert_int_equal(fsu_reopen_as(rfd, O_WRONLY | O_CREAT, 65534, 65534), -1);
	assert_int_equal(errno, EINVAL);
	/* the inode held, not the name: another file put in its place is not
	 * the one written */
	assert_int_equal(chmod(path, 0644), 0);
	snprintf(moved, sizeof(moved), "%s.old", path);
	assert_int_equal(rename(path, moved), 0);
	close(held(f, "vmastat.1", 65534, 65534, 0644, path, sizeof(path)));
	fd = fsu_reopen_as(rfd, O_WRONLY | O_TRUNC | O_CLOEXEC, 65534, 65534);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "held", 4), 4);
	close(fd);
	fd = open(moved, O_RDONLY);
	assert_int_equal(read(fd, buf, 4), 4);
	assert_memory_equal(buf, "held", 4);
	close(fd);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, 4), 0);
	close(fd);
	dac_effective(1);
	close(rfd);
	unlink(moved);
}

/* Only the owner's bits count for the owner: a file its owner may not
 * write is not opened for writing, whatever its group (root's, or the
 * daemon's supplementary nicstall) may do and whatever capability the
 * daemon holds, root's own files included. */
static void fsu_reopen_as__writable_by_group_only__not_opened(void **state)
{
	struct fx *f = *state;
	struct group *gr = getgrnam("nicstall");
	gid_t groups[1];
	char path[128];
	int rfd;

	rfd = held(f, "group-root", 65534, 0, 0464, path, sizeof(path));
	assert_int_equal(fsu_reopen_as(rfd, O_WRONLY, 65534, 0), -1);
	assert_int_equal(errno, EACCES);
	close(rfd);
	/* root's own, group-writable only: CAP_DAC_OVERRIDE must not open it */
	rfd = held(f, "root-0464", 0, 0, 0464, path, sizeof(path));
	assert_int_equal(fsu_reopen_as(rfd, O_WRONLY, 0, 0), -1);
	assert_int_equal(errno, EACCES);
	assert_int_equal(fsu_reopen_as(rfd, O_RDWR, 0, 0), -1);
	close(rfd);
	/* the group the daemon is a supplementary member of */
	groups[0] = gr ? gr->gr_gid : 4343;
	assert_int_equal(setgroups(1, groups), 0);
	rfd = held(f, "group-nicstall", 65534, groups[0], 0464, path, sizeof(path));
	assert_int_equal(fsu_reopen_as(rfd, O_WRONLY, 65534, groups[0]), -1);
	assert_int_equal(errno, EACCES);
	assert_int_equal(setgroups(0, NULL), 0);
	close(rfd);
	/* a directory or a device is not reopened at all */
	rfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(fsu_reopen_as(rfd, O_RDONLY, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	close(rfd);
}

static void put(struct fx *f, const char *rel, const char *text)
{
	char p[256];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", f->dir, rel);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void link_in(struct fx *f, const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", f->dir, rel);
	assert_int_equal(symlink(target, p), 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fsu_read_at__regular_file__whole_and_nul_terminated(void **state)
{
	struct fx *f = *state;
	size_t len = 0;
	int e = -1;
	char *s;

	assert_int_equal(mkdirat(f->dfd, "sub", 0700), 0);
	put(f, "sub/a.txt", "hello\n");
	s = fsu_read_at(f->dfd, "sub/a.txt", 100, &len, &e);
	assert_non_null(s);
	assert_int_equal(e, 0);
	assert_int_equal(len, 6);
	assert_string_equal(s, "hello\n");
	free(s);
	/* exactly max bytes is within the bound */
	s = fsu_read_at(f->dfd, "sub/a.txt", 6, &len, &e);
	assert_non_null(s);
	free(s);
}

static void fsu_read_at__symlink_to_root_file__refused(void **state)
{
	struct fx *f = *state;
	size_t len = 0;
	int e = 0;

	/* the last component, and a directory on the way */
	link_in(f, "/etc/passwd", "summary.txt");
	assert_null(fsu_read_at(f->dfd, "summary.txt", 1 << 20, &len, &e));
	assert_int_equal(e, ELOOP);
	assert_string_equal(fsu_strerror(e), "a symbolic link");
	link_in(f, "/etc", "etc");
	e = 0;
	assert_null(fsu_read_at(f->dfd, "etc/passwd", 1 << 20, &len, &e));
	assert_true(e == ELOOP || e == ENOTDIR);
}

static void fsu_read_at__fifo__refused_at_once(void **state)
{
	struct fx *f = *state;
	char p[256];
	double t0;
	int e = 0;

	snprintf(p, sizeof(p), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	alarm(5);               /* a blocking open would hang: fail instead */
	t0 = now_s();
	assert_null(fsu_read_at(f->dfd, "fifo", 1 << 20, NULL, &e));
	assert_true(now_s() - t0 < 1.0);
	alarm(0);
	assert_int_equal(e, EINVAL);
	assert_string_equal(fsu_strerror(e), "not a regular file");
	/* a directory is not a regular file either */
	assert_int_equal(mkdirat(f->dfd, "d", 0700), 0);
	assert_null(fsu_read_at(f->dfd, "d", 1 << 20, NULL, &e));
	assert_int_equal(e, EINVAL);
}

static void fsu_read_at__oversize__refused_within_bound(void **state)
{
	struct fx *f = *state;
	int e = 0;

	put(f, "big", "0123456789");
	assert_null(fsu_read_at(f->dfd, "big", 9, NULL, &e));
	assert_int_equal(e, EFBIG);
	assert_string_equal(fsu_strerror(e), "too large");
	assert_null(fsu_read_at(f->dfd, "absent", 9, NULL, &e));
	assert_int_equal(e, ENOENT);
	assert_string_equal(fsu_strerror(e), "missing");
}

static void fsu_read_at__outside_paths__refused(void **state)
{
	struct fx *f = *state;
	int e = 0;

	assert_int_equal(mkdirat(f->dfd, "sub", 0700), 0);
	put(f, "top", "x");
	assert_null(fsu_read_at(f->dfd, "sub/../top", 100, NULL, &e));
	assert_int_equal(e, EXDEV);
	assert_null(fsu_read_at(f->dfd, "/etc/passwd", 100, NULL, &e));
	assert_int_equal(e, EXDEV);
	assert_null(fsu_read_at(f->dfd, "sub//top", 100, NULL, &e));
	assert_int_equal(e, EXDEV);
	assert_null(fsu_read_at(f->dfd, "", 100, NULL, &e));
	assert_int_equal(e, ENOENT);
}

static void fsu_read_file__last_component_symlink__refused(void **state)
{
	struct fx *f = *state;
	char p[256];
	size_t len = 0;
	int e = 0;
	char *s;

	put(f, "real.txt", "abc");
	link_in(f, "real.txt", "alias.txt");
	snprintf(p, sizeof(p), "%s/real.txt", f->dir);
	s = fsu_read_file(p, 100, &len, &e);
	assert_non_null(s);
	assert_string_equal(s, "abc");
	free(s);
	snprintf(p, sizeof(p), "%s/alias.txt", f->dir);
	assert_null(fsu_read_file(p, 100, &len, &e));
	assert_int_equal(e, ELOOP);
	/* directories on the way are followed as usual */
	link_in(f, f->dir, "self");
	snprintf(p, sizeof(p), "%s/self/real.txt", f->dir);
	s = fsu_read_file(p, 100, &len, &e);
	assert_non_null(s);
	free(s);
	snprintf(p, sizeof(p), "%s/", f->dir);
	assert_null(fsu_read_file(p, 100, &len, &e));
	assert_int_equal(e, EISDIR);
}

static void fsu_create_excl_at__existing_name__refused_and_untouched(void **state)
{
	struct fx *f = *state;
	char *s;
	int fd, e = 0;

	put(f, "work.pcap", "keep");
	fd = fsu_create_excl_at(f->dfd, "work.pcap", 0600);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EEXIST);
	s = fsu_read_at(f->dfd, "work.pcap", 100, NULL, &e);
	assert_non_null(s);
	assert_string_equal(s, "keep");
	free(s);
	/* a new name is created, writable, with the mode asked for (umask aside) */
	fd = fsu_create_excl_at(f->dfd, "new.pcap", 0600);
	assert_true(fd >= 0);
	assert_int_equal(fsu_write_all(fd, "pcap", 4), 0);
	close(fd);
	s = fsu_read_at(f->dfd, "new.pcap", 100, NULL, &e);
	assert_string_equal(s, "pcap");
	free(s);
}

static void fsu_create_excl_at__dangling_symlink__refused_target_not_created(void **state)
{
	struct fx *f = *state;
	char target[256];
	struct stat st;
	int fd;

	snprintf(target, sizeof(target), "%s/victim", f->dir);
	link_in(f, target, "work.pcap");
	fd = fsu_create_excl_at(f->dfd, "work.pcap", 0600);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(stat(target, &st), -1);
	assert_int_equal(errno, ENOENT);
	/* a symlinked directory on the way is not followed either */
	link_in(f, "/tmp", "tmp");
	assert_int_equal(fsu_create_excl_at(f->dfd, "tmp/x.pcap", 0600), -1);
	assert_true(errno == ELOOP || errno == ENOTDIR);
}

static void fsu_rm_tree_at__tree_with_symlink__link_removed_target_kept(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char p[256];

	assert_int_equal(mkdirat(f->dfd, "keep", 0700), 0);
	put(f, "keep/precious", "x");
	assert_int_equal(mkdirat(f->dfd, "t", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "t/a", 0700), 0);
	put(f, "t/a/file", "y");
	link_in(f, "../keep", "t/a/link");
	assert_int_equal(fsu_rm_tree_at(f->dfd, "t"), 0);
	assert_int_equal(fstatat(f->dfd, "t", &st, AT_SYMLINK_NOFOLLOW), -1);
	snprintf(p, sizeof(p), "%s/keep/precious", f->dir);
	assert_int_equal(stat(p, &st), 0);
	/* a missing name is not an error */
	assert_int_equal(fsu_rm_tree_at(f->dfd, "t"), 0);
}

static void fsu_du_at__regular_files_only__bounded(void **state)
{
	struct fx *f = *state;
	unsigned budget = 100;

	assert_int_equal(mkdirat(f->dfd, "b", 0700), 0);
	assert_int_equal(mkdirat(f->dfd, "b/c", 0700), 0);
	put(f, "b/one", "12345");
	put(f, "b/c/two", "123");
	link_in(f, "/etc/passwd", "b/link");
	assert_int_equal(fsu_du_at(f->dfd, "b", 8, &budget), 8);
	assert_int_equal(budget, 100 - 4);
	budget = 0;
	assert_int_equal(fsu_du_at(f->dfd, "b", 8, &budget), 0);
	budget = 100;
	assert_int_equal(fsu_du_at(f->dfd, "b", 0, &budget), 5);
	assert_int_equal(fsu_fsync_tree(f->dfd, 8), 0);
}

static void fsu_mkparents_at__nested__created(void **state)
{
	struct fx *f = *state;
	struct stat st;
	int fd;

	assert_int_equal(fsu_mkparents_at(f->dfd, "x/y/z.txt", 0700), 0);
	assert_int_equal(fstatat(f->dfd, "x/y", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fstatat(f->dfd, "x/y/z.txt", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(fsu_mkparents_at(f->dfd, "x/y/z.txt", 0700), 0);
	fd = fsu_create_excl_at(f->dfd, "x/y/z.txt", 0600);
	assert_true(fd >= 0);
	close(fd);
}

/* A state or run directory: made when missing; refused when it or a
 * directory above it belongs to another user or is writable by others
 * (unless sticky, for those above); symbolic links in the path resolved. */
static void fsu_private_dir__owners_and_modes__checked_at_every_level(void **state)
{
	struct fx *f = *state;
	char p[256], q[256], err[512];
	struct stat st;
	int fd;

	if (geteuid() != 0)
		skip();
	snprintf(p, sizeof(p), "%s/a/b/state", f->dir);
	fd = fsu_private_dir(p, 0750, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	/* the directory itself another user's */
	snprintf(q, sizeof(q), "%s/a/b/state", f->dir);
	assert_int_equal(chown(q, 1000, 1000), 0);
	assert_int_equal(fsu_private_dir(p, 0750, err, sizeof(err)), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err, "/a/b/state is owned by uid 1000, not root"));
	assert_int_equal(chown(q, 0, 0), 0);
	/* group-writable, even with the sticky bit */
	assert_int_equal(chmod(q, 01770), 0);
	assert_int_equal(fsu_private_dir(p, 0750, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by its group (mode 1770)"));
	assert_int_equal(chmod(q, 0750), 0);
	/* a directory above, world-writable: refused; sticky as /tmp: fine */
	snprintf(q, sizeof(q), "%s/a", f->dir);
	assert_int_equal(chmod(q, 0777), 0);
	assert_int_equal(fsu_private_dir(p, 0750, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/a is writable by everyone (mode 0777)"));
	assert_int_equal(chmod(q, 01777), 0);
	fd = fsu_private_dir(p, 0750, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(q, 0755), 0);
	/* through a symbolic link: the real directories are what is judged */
	assert_int_equal(mkdirat(f->dfd, "user", 0755), 0);
	snprintf(q, sizeof(q), "%s/user", f->dir);
	assert_int_equal(chown(q, 1000, 1000), 0);
	link_in(f, "user", "viasym");
	snprintf(p, sizeof(p), "%s/viasym/state", f->dir);
	assert_int_equal(fsu_private_dir(p, 0750, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/user is owned by uid 1000"));
	/* a relative path is not a place for root's files */
	assert_int_equal(fsu_private_dir("state", 0750, err, sizeof(err)), -1);
}

/* A work file replaced atomically: a stale temporary name planted as a
 * symbolic link is removed, never followed. */
static void fsu_replace_at__planted_tmp_link__not_followed(void **state)
{
	struct fx *f = *state;
	char target[256], *s;
	struct stat st;
	int e = 0;

	put(f, "victim", "precious");
	snprintf(target, sizeof(target), "%s/victim", f->dir);
	link_in(f, target, ".marker.tmp");
	assert_int_equal(fsu_replace_at(f->dfd, "marker", "m=1\n", 4, 0600), 0);
	s = fsu_read_at(f->dfd, "victim", 100, NULL, &e);
	assert_string_equal(s, "precious");
	free(s);
	s = fsu_read_at(f->dfd, "marker", 100, NULL, &e);
	assert_string_equal(s, "m=1\n");
	free(s);
	assert_int_equal(fstatat(f->dfd, ".marker.tmp", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(fsu_replace_at(f->dfd, "a/b", "x", 1, 0600), -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fsu_read_at__regular_file__whole_and_nul_terminated, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_read_at__symlink_to_root_file__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_read_at__fifo__refused_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_read_at__oversize__refused_within_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_read_at__outside_paths__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_read_file__last_component_symlink__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_create_excl_at__existing_name__refused_and_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_create_excl_at__dangling_symlink__refused_target_not_created, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_rm_tree_at__tree_with_symlink__link_removed_target_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_du_at__regular_files_only__bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_mkparents_at__nested__created, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_private_dir__owners_and_modes__checked_at_every_level, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_replace_at__planted_tmp_link__not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_reopen_as__file_of_another_user__written_as_its_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(fsu_reopen_as__writable_by_group_only__not_opened, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
