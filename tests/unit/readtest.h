/* readtest: what the unit tests of the flow-source drivers of unmodified
 * engines' readers (test_flow_readers.c, test_flow_src_vma.c) share: the
 * observations a poll emits, a temporary directory, an evidence callback
 * that counts its calls. Header only (static inline), so that it is
 * compiled into the tests that include it (after cmocka.h) and nothing
 * else. */
#ifndef NICSTALL_TEST_READTEST_H
#define NICSTALL_TEST_READTEST_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows.h"

struct got {
	struct flow_obs o[64];
	unsigned n;
};

static inline void collect(const struct flow_obs *o, void *arg)
{
	struct got *g = arg;

	if (g->n < 64)
		g->o[g->n++] = *o;
}

static inline const struct flow_obs *by_session(const struct got *g, uint64_t session)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->o[i].session == session)
			return &g->o[i];
	return NULL;
}

static inline char *tmpdir(void)
{
	char *d = strdup("/tmp/test_flow_readers.XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static inline void rmdir_all(char *d)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

static int evid_calls;
static inline void evid_done(void *arg)
{
	(void)arg;
	evid_calls++;
}

#endif
