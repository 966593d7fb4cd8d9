/* dirs: the directories the daemon keeps root's files in (state_dir,
 * run_dir), checked before they are used. */
#ifndef NICSTALL_DIRS_H
#define NICSTALL_DIRS_H

#include <stddef.h>

struct conf;

/* state_dir and run_dir (made when missing) and every directory above them
 * belong to root and are writable by nobody else (fsu_private_dir).
 * Returns 0, or -1 with err ("state_dir /x: /x is owned by uid 1000, ..."). */
int dirs_check(const struct conf *c, char *err, size_t errlen);

/* Remove the work files (captures, Onload stack dumps) a killed daemon left in
 * state_dir/work: investigation ids start afresh, and work files are
 * created O_EXCL. Returns how many were removed. */
int dirs_clean_work(const char *state_dir);

#endif
