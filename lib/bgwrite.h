/* bgwrite: the files of one directory written, replaced and removed by a
 * thread of their own, in the order they were given, so that the event loop
 * never waits on the disk. Each file is replaced whole (fsu_replace_at: a
 * reader sees the old file or the new one, never a part), with an optional
 * sha256sum(1) line beside it (NAME.sha256). A failed write is logged with
 * the directory and the file's name; later files are still written.
 *
 * Without a thread (pthread_create failed, said in the log) the files are
 * written by the caller, at the call. */
#ifndef NICSTALL_BGWRITE_H
#define NICSTALL_BGWRITE_H

#include <stddef.h>

struct bgwrite;
struct json_object;

/* dirfd is taken over (closed by bgw_free; < 0: nothing is written, the
 * files given are dropped); dir names it in log lines. */
struct bgwrite *bgw_new(int dirfd, const char *dir);
/* Writes what is queued, ends the thread, closes the directory. A disk that
 * does not answer within 5 s does not hold it: the writer is left to
 * finish alone (it frees everything when done) and the log says how many
 * files it still had. */
void bgw_free(struct bgwrite *w);
/* The directory (borrowed; -1 none): for reads made before the loop runs. */
int bgw_dirfd(const struct bgwrite *w);
/* Queue name: data (taken over, len bytes) replaces it; data NULL removes
 * it (and nothing else). sum: also write name.sha256. */
void bgw_put(struct bgwrite *w, const char *name, char *data, size_t len, int sum);
/* Files not written because too much already waited for the disk
 * (BGW_MAX_JOBS files or BGW_MAX_BYTES: each said in the log, the first
 * and then at each power of two). */
unsigned long bgw_dropped(struct bgwrite *w);
/* Tests: hold the writer (as a disk that does not answer would) and set
 * the bounds (0: as they are). */
void bgw_test_hold(struct bgwrite *w, int hold, unsigned max_jobs, size_t max_bytes);
/* Tests: every writer's next write waits until unstuck (a disk that does
 * not answer, in the middle of a write); bgw_free's wait (ms). */
void bgw_test_stick(int on);
void bgw_test_stop_wait(struct bgwrite *w, unsigned ms);
/* o as pretty JSON, after a first line first (NULL none); with first, a
 * sha256sum line too. */
void bgw_put_json(struct bgwrite *w, const char *name, struct json_object *o,
		  const char *first);

#endif
