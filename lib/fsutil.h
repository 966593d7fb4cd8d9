/* fsutil: file system helpers that know nothing of bundles or ports.
 *
 * The one path for files a user may control (a bundle on disk, a state
 * directory, a recorded text file): everything is opened relative to a
 * directory fd with O_NOFOLLOW at every component, nothing but a regular
 * file is ever read, every read is bounded, and no open can block (a FIFO
 * is opened O_NONBLOCK and then refused). Work files are created with
 * O_CREAT|O_EXCL|O_NOFOLLOW, so a name planted in advance (a file or a
 * dangling symbolic link) is refused, never followed or truncated.
 *
 * Calls that fail return -1 (or -errno where said, or NULL) with errno set;
 * fsu_strerror() words the errno values these calls give for people. */
#ifndef NICSTALL_FSUTIL_H
#define NICSTALL_FSUTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open rel beneath dirfd, never following a symbolic link (at any
 * component): every directory on the way is opened O_DIRECTORY|O_NOFOLLOW,
 * the last one with flags|O_NOFOLLOW|O_CLOEXEC. An absolute rel, an empty
 * component or a "." / ".." component is refused (EXDEV). Returns the fd or
 * -1 with errno. */
int fsu_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
/* The directory name beneath dirfd (one component, not a symbolic link),
 * read-only, O_CLOEXEC. Returns the fd or -1 with errno. */
int fsu_open_dir_at(int dirfd, const char *name);
/* A directory stream of name beneath dirfd (not a symbolic link), or NULL
 * with errno; closedir() it. */
DIR *fsu_opendir_at(int dirfd, const char *name);
/* A directory stream over a duplicate of fd, from its first entry (fd stays
 * open and usable for *at calls), or NULL with errno; closedir() it. */
DIR *fsu_opendir_fd(int fd);
/* Create rel beneath dirfd for writing with O_CREAT|O_EXCL|O_NOFOLLOW (as
 * fsu_open_beneath): an existing name, a dangling symbolic link included,
 * fails with EEXIST. Returns the fd or -1 with errno. */
int fsu_create_excl_at(int dirfd, const char *rel, mode_t mode);
/* mkdir every directory component of rel (not its last one) beneath dirfd;
 * existing ones are kept. Returns 0 or -1 with errno. */
int fsu_mkparents_at(int dirfd, const char *rel, mode_t mode);

/* A directory root keeps its own files in (state_dir, run_dir, their work
 * directories), made when missing (mode; missing parents 0755) and opened
 * component by component with O_NOFOLLOW from the root of its real path.
 * Refused unless it and every directory above it belong to root (or the
 * effective uid) and none is writable by group or others (a directory above
 * may be when it has the sticky bit, as /tmp): whoever may write one of them
 * could swap a name the daemon then opens as root. Returns an O_DIRECTORY
 * fd, or -1 with errno (EPERM for an owner or a mode) and err naming the
 * directory that fails and why. */
int fsu_private_dir(const char *path, mode_t mode, char *err, size_t errlen);
/* Replace name beneath dirfd with buf, atomically: written to a hidden
 * temporary name created O_EXCL|O_NOFOLLOW (a stale one is removed first),
 * fsync'd, then renamed over name. Returns 0 or -1 with errno. */
int fsu_replace_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* The whole of a regular file beneath dirfd (fsu_open_beneath, opened
 * O_NONBLOCK, so a FIFO never blocks), at most max bytes, NUL-terminated
 * (malloc'd; *len without the NUL). Reads what the file held when opened.
 * Returns NULL with *err (and errno): ELOOP a symbolic link, EINVAL not a
 * regular file, EFBIG larger than max, ENOENT missing, or another errno. */
char *fsu_read_at(int dirfd, const char *rel, size_t max, size_t *len, int *err);
/* The same for a full path: its directories are followed as usual, its
 * last component must not be a symbolic link. */
char *fsu_read_file(const char *path, size_t max, size_t *len, int *err);
/* "a symbolic link", "not a regular file", "too large", "missing", else
 * strerror(e). */
const char *fsu_strerror(int e);

/* write(2) all of buf, retrying on EINTR. Returns 0 or -1 with errno
 * (ENOSPC for a write of 0 bytes). */
int fsu_write_all(int fd, const void *buf, size_t len);
/* Remove name beneath dirfd and everything under it, never following a
 * symbolic link (at most 32 directories deep). A missing name is not an
 * error. Returns 0 or -errno (the first failure; the rest is still tried). */
int fsu_rm_tree_at(int dirfd, const char *name);
/* fsync every directory under fd (at most max_depth deep) and fd itself.
 * Returns 0 or -errno. */
int fsu_fsync_tree(int fd, int max_depth);
/* Bytes of the regular files under name beneath dirfd (name itself when it
 * is a regular file); at most max_depth deep, and at most *budget entries
 * are looked at (decremented). Symbolic links count nothing. */
uint64_t fsu_du_at(int dirfd, const char *name, int max_depth, unsigned *budget);
/* Open again the file fd already names, for flags (no O_CREAT), with the
 * file-system identity uid:gid (setfsuid and setfsgid, this thread only,
 * put back before returning): a root process writes into a file another
 * user owns with that owner's own permission, with CAP_SETUID and
 * CAP_SETGID instead of CAP_DAC_OVERRIDE. It opens /proc/self/fd/N, which
 * walks no directory and reaches exactly fd's inode (not whatever its name
 * points at now), regular files only. The access is what the mode bits
 * give uid:gid alone, checked here (the owner's bits when uid owns it, the
 * group's when gid is its group, else the others'), and the kernel's check
 * under the same fsuid and fsgid: the daemon's supplementary groups (a
 * process-wide set, not dropped here) can add nothing the first check did
 * not allow, and neither can a capability, even when uid is 0. -1 with
 * errno (EACCES: the mode refuses it; EPERM: the identity could not be
 * taken). A failure to take back the old identity aborts: nothing may go on
 * with the wrong one. */
int fsu_reopen_as(int fd, int flags, uid_t uid, gid_t gid);

#endif
