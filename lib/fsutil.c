/* fsutil: file system helpers (see fsutil.h). */
#include "lib/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RM_DEPTH_MAX 32
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static int is_dot_or_dotdot(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* Close fd unless it is keep, leaving errno as it was. */
static void close_keep_errno(int fd, int keep)
{
	int e = errno;

	if (fd >= 0 && fd != keep)
		close(fd);
	errno = e;
}

int fsu_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	char comp[256];
	const char *c = rel, *slash;
	int cur = dirfd, fd;

	if (!rel || !*rel || *rel == '/') {
		errno = rel && *rel ? EXDEV : ENOENT;
		return -1;
	}
	for (;;) {
		size_t n;

		slash = strchr(c, '/');
		n = slash ? (size_t)(slash - c) : strlen(c);
		if (!n || is_dot_or_dotdot(c, n)) {
			errno = EXDEV;
			goto fail;
		}
		if (!slash)
			break;
		if (n >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		fd = openat(cur, comp, DIR_FLAGS);
		if (fd < 0)
			goto fail;
		close_keep_errno(cur, dirfd);
		cur = fd;
		c = slash + 1;
	}
	fd = openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	close_keep_errno(cur, dirfd);
	return fd;
fail:
	close_keep_errno(cur, dirfd);
	return -1;
}

int fsu_open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, DIR_FLAGS);
}

/* A stream over fd (closed with it, or here when fdopendir fails). */
static DIR *dir_stream(int fd)
{
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d)
		close_keep_errno(fd, -1);
	return d;
}

DIR *fsu_opendir_at(int dirfd, const char *name)
{
	return dir_stream(openat(dirfd, name, DIR_FLAGS));
}

DIR *fsu_opendir_fd(int fd)
{
	DIR *d = dir_stream(dup(fd));

	if (d)
		rewinddir(d);
	return d;
}

int fsu_create_excl_at(int dirfd, const char *rel, mode_t mode)
{
	return fsu_open_beneath(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL, mode);
}

/* Is the directory fd (whose path is shown as shown) safe to hold root's
 * files? last: the directory itself (no sticky exception). */
static int dir_safe(int fd, const char *shown, int last, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", shown, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", shown);
		errno = ENOTDIR;
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is owned by uid %u, not root: another user could "
			 "replace what root keeps there", shown, (unsigned)st.st_uid);
		errno = EPERM;
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st.st_mode & S_ISVTX))) {
		snprintf(err, errlen, "%s is writable by %s (mode %04o): another user could "
			 "replace what root keeps there", shown,
			 (st.st_mode & S_IWOTH) ? "everyone" : "its group",
			 (unsigned)(st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	return 0;
}

int fsu_private_dir(const char *path, mode_t mode, char *err, size_t errlen)
{
	char buf[PATH_MAX], real[PATH_MAX], shown[PATH_MAX], scratch[8], *s, *save = NULL;
	size_t n = path ? strlen(path) : 0;
	int fd, next;

	if (!err || !errlen) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	err[0] = '\0';
	if (!n || path[0] != '/' || n >= sizeof(buf)) {
		snprintf(err, errlen, "%s: not an absolute path", path ? path : "(null)");
		errno = EINVAL;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (s = strchr(buf + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "%s: mkdir: %s", buf, strerror(errno));
			return -1;
		}
		*s = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: mkdir: %s", buf, strerror(errno));
		return -1;
	}
	/* symbolic links in the configured path (/var/run) are resolved once;
	 * the real path is then walked without following any */
	if (!realpath(path, real)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fd = open("/", DIR_FLAGS);
	if (fd < 0 || dir_safe(fd, "/", !strcmp(real, "/"), err, errlen) < 0) {
		if (fd >= 0)
			close_keep_errno(fd, -1);
		else
			snprintf(err, errlen, "/: %s", strerror(errno));
		return -1;
	}
	shown[0] = '\0';
	for (s = strtok_r(real + 1, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		size_t k = strlen(shown);

		snprintf(shown + k, sizeof(shown) - k, "/%s", s);
		next = openat(fd, s, DIR_FLAGS);
		close_keep_errno(fd, -1);
		if (next < 0) {
			snprintf(err, errlen, "%s: %s", shown, errno == ELOOP || errno == ENOTDIR ?
				 "not a directory (a symbolic link that appeared meanwhile?)" :
				 strerror(errno));
			return -1;
		}
		fd = next;
		if (dir_safe(fd, shown, save == NULL || !*save, err, errlen) < 0) {
			close_keep_errno(fd, -1);
			return -1;
		}
	}
	return fd;
}

int fsu_replace_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	int fd, e;

	if (!name || !*name || strchr(name, '/') ||
	    (size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= sizeof(tmp)) {
		errno = EINVAL;
		return -1;
	}
	unlinkat(dirfd, tmp, 0);        /* a crash's leftover, in our own directory */
	fd = fsu_create_excl_at(dirfd, tmp, mode);
	if (fd < 0)
		return -1;
	if (fsu_write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		e = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	if (close(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int fsu_mkparents_at(int dirfd, const char *rel, mode_t mode)
{
	char buf[4096];
	size_t n = strlen(rel);
	char *s;

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, rel, n + 1);
	for (s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(dirfd, buf, mode) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return 0;
}

char *fsu_read_at(int dirfd, const char *rel, size_t max, size_t *lenp, int *errp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd = fsu_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0), e = 0;

	if (fd < 0) {
		e = errno;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		e = EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		e = ENOMEM;
		goto out;
	}
	/* what the file held when opened: a growing file cannot keep us */
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
out:
	if (fd >= 0)
		close(fd);
	if (e) {
		free(buf);
		buf = NULL;
		errno = e;
	}
	if (errp)
		*errp = e;
	return buf;
}

char *fsu_read_file(const char *path, size_t max, size_t *len, int *err)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	char *dir, *buf;
	int dfd, e;

	if (!path || !*path) {
		if (err)
			*err = ENOENT;
		errno = ENOENT;
		return NULL;
	}
	if (!slash)
		return fsu_read_at(AT_FDCWD, path, max, len, err);
	if (!slash[1]) {
		e = EISDIR;     /* "dir/": no last component to read */
		goto fail;
	}
	dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir) {
		e = ENOMEM;
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	free(dir);
	if (dfd < 0)
		goto fail;
	buf = fsu_read_at(dfd, slash + 1, max, len, err);
	close_keep_errno(dfd, -1);
	return buf;
fail:
	if (err)
		*err = e;
	errno = e;
	return NULL;
}

const char *fsu_strerror(int e)
{
	switch (e) {
	case EINVAL: return "not a regular file";
	case ELOOP: return "a symbolic link";
	case EFBIG: return "too large";
	case ENOENT: return "missing";
	case EXDEV: return "a path leading outside its directory";
	default: return strerror(e);
	}
}

int fsu_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int rm_tree(int at, const char *name, int depth)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > RM_DEPTH_MAX)
		return -ELOOP;
	d = fsu_opendir_at(at, name);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int r;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		r = rm_tree(dirfd(d), e->d_name, depth + 1);
		if (r < 0 && !rc)
			rc = r;
	}
	closedir(d);
	if (unlinkat(at, name, AT_REMOVEDIR) < 0 && !rc)
		rc = -errno;
	return rc;
}

int fsu_rm_tree_at(int dirfd, const char *name)
{
	return rm_tree(dirfd, name, 0);
}

/* Is name beneath fd a directory (not a symbolic link to one)? */
static int is_dir_entry(int fd, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	return fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static int fsync_tree(int fd, int depth, int max_depth)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > max_depth)
		return -ELOOP;
	d = fsu_opendir_fd(fd);
	if (!d)
		return -errno;
	while (!rc && (e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !is_dir_entry(fd, e))
			continue;
		sub = openat(fd, e->d_name, DIR_FLAGS);
		if (sub < 0) {
			rc = -errno;
			break;
		}
		rc = fsync_tree(sub, depth + 1, max_depth);
		close(sub);
	}
	closedir(d);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	return rc;
}

int fsu_fsync_tree(int fd, int max_depth)
{
	return fsync_tree(fd, 0, max_depth);
}

static uint64_t du(int at, const char *name, int depth, int max_depth, unsigned *budget)
{
	struct stat st;
	uint64_t sum = 0;
	DIR *d;
	struct dirent *e;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode) || depth > max_depth || !(d = fsu_opendir_at(at, name)))
		return 0;
	while (*budget && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		(*budget)--;
		sum += du(dirfd(d), e->d_name, depth + 1, max_depth, budget);
	}
	closedir(d);
	return sum;
}

uint64_t fsu_du_at(int dirfd, const char *name, int max_depth, unsigned *budget)
{
	return du(dirfd, name, 0, max_depth, budget);
}

/* What the mode bits give uid:gid, alone, for flags' access mode. */
static int mode_allows(const struct stat *st, int flags, uid_t uid, gid_t gid)
{
	int acc = flags & O_ACCMODE;
	mode_t m = st->st_uid == uid ? st->st_mode >> 6 : st->st_gid == gid ? st->st_mode >> 3 :
		   st->st_mode;
	int want = (acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6) | (flags & O_TRUNC ? 2 : 0);

	return ((m & 7) & (mode_t)want) == (mode_t)want;
}

int fsu_reopen_as(int fd, int flags, uid_t uid, gid_t gid)
{
	/* setfsuid and setfsgid return the previous value whether or not they
	 * changed it: a second call with the same value tells whether the
	 * first took */
	uid_t prev = (uid_t)setfsuid((uid_t)-1);
	gid_t prevg = (gid_t)setfsgid((gid_t)-1);
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	struct stat st, nst;
	char path[64];
	int nfd, e;

	if (flags & O_CREAT) {
		errno = EINVAL;
		return -1;
	}
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (!mode_allows(&st, flags, uid, gid)) {
		errno = EACCES;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* the way back to fsuid 0 raises the file-system capabilities of the
	 * permitted set into the effective one (cap_task_fix_setuid,
	 * LSM_SETID_FS): the effective set is put back as it was */
	if (syscall(SYS_capget, &h, caps) < 0)
		return -1;
	setfsgid(gid);
	setfsuid(uid);
	if ((gid_t)setfsgid(gid) != gid || (uid_t)setfsuid(uid) != uid) {
		nfd = -1;
		e = EPERM;
	} else {
		/* the magic link is followed (no O_NOFOLLOW: it is one) */
		nfd = open(path, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
		e = errno;
	}
	setfsuid(prev);
	setfsgid(prevg);
	if ((uid_t)setfsuid(prev) != prev || (gid_t)setfsgid(prevg) != prevg ||
	    syscall(SYS_capset, &h, caps) < 0)
		abort();
	if (nfd >= 0 && (fstat(nfd, &nst) < 0 || nst.st_dev != st.st_dev ||
			 nst.st_ino != st.st_ino)) {
		close(nfd);
		nfd = -1;
		e = ESTALE;
	}
	errno = e;
	return nfd;
}
