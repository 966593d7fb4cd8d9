/* Helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c): a private
 * scratch directory, inputs as files, quiet logging. */
#ifndef NICSTALL_FUZZ_H
#define NICSTALL_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "rules/rules.h"

/* Messages of the code under test would drown libFuzzer's own. */
static inline void fz_quiet(void)
{
	log_set_level(getenv("FUZZ_VERBOSE") ? LOG_DEBUG : -1);
}

/* A loader's report callback that says nothing (hostile input is expected
 * to be refused). */
static inline void fz_silent(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

/* The shipped rules (NICSTALL_DATADIR/rules), or abort naming the folder:
 * a target that classifies without them would test nothing. */
static inline struct rules *fz_shipped_rules(const char *target)
{
	const char *dirs[1] = { NICSTALL_DATADIR "/rules" };
	struct rules *r = NULL;

	if (rules_load(dirs, 1, &r, fz_silent, NULL) != 0 || !r) {
		fprintf(stderr, "%s: the shipped rules in %s do not load\n", target, dirs[0]);
		abort();
	}
	return r;
}

/* LLVMFuzzerInitialize for a target that needs nothing but quiet logs. */
#define FZ_QUIET_INITIALIZE()                                       \
	int LLVMFuzzerInitialize(int *argc, char ***argv)             \
	{                                                             \
		(void)argc;                                           \
		(void)argv;                                           \
		fz_quiet();                                           \
		return 0;                                             \
	}

/* The input as a file: a memfd, its path "/proc/self/fd/N" in path. */
static inline int fz_memfd(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || fsu_write_all(fd, data, size) < 0)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* One scratch directory per process (removed at exit). */
static char fz_dir_[64];

static inline void fz_rm_dir_(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);

	if (fd >= 0 && fz_dir_[0])
		fsu_rm_tree_at(fd, fz_dir_ + 1);
	if (fd >= 0)
		close(fd);
}

static inline const char *fz_dir(void)
{
	if (!fz_dir_[0]) {
		snprintf(fz_dir_, sizeof(fz_dir_), "/tmp/nicstall-fuzz.XXXXXX");
		if (!mkdtemp(fz_dir_))
			abort();
		atexit(fz_rm_dir_);
	}
	return fz_dir_;
}

/* Empty directory sub beneath the scratch directory; its path in out. */
static inline void fz_fresh(const char *sub, char *out, size_t len)
{
	int fd = open(fz_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		abort();
	fsu_rm_tree_at(fd, sub);
	if (mkdirat(fd, sub, 0700) < 0)
		abort();
	close(fd);
	snprintf(out, len, "%s/%s", fz_dir(), sub);
}

/* Split the input at "\n==> " lines into files of dir: each part is
 * "NAME\nCONTENT" (the first part too, when the input starts with
 * "==> "). Names with a '/' make subdirectories; hostile names (..,
 * absolute) are what the readers must refuse, so they are written only
 * when they stay inside dir. Returns the number of files written. */
static inline unsigned fz_unpack(const uint8_t *data, size_t size, const char *dir)
{
	const char *p = (const char *)data, *end = p + size;
	unsigned n = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		abort();
	if (size >= 4 && !memcmp(p, "==> ", 4))
		p += 4;
	while (p < end) {
		const char *next = memmem(p, (size_t)(end - p), "\n==> ", 5);
		const char *stop = next ? next : end;
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		char name[256];
		size_t nlen = nl ? (size_t)(nl - p) : (size_t)(stop - p);

		if (nlen && nlen < sizeof(name)) {
			int fd;

			memcpy(name, p, nlen);
			name[nlen] = '\0';
			if (!memchr(name, '\0', nlen) && fsu_mkparents_at(dfd, name, 0700) == 0 &&
			    (fd = fsu_create_excl_at(dfd, name, 0600)) >= 0) {
				const char *c = nl ? nl + 1 : stop;

				if (c < stop && fsu_write_all(fd, c, (size_t)(stop - c)) < 0)
					abort();
				close(fd);
				n++;
			}
		}
		p = next ? next + 5 : end;
	}
	close(dfd);
	return n;
}

#endif
