/* readtest: what the unit tests of the flow-source drivers of unmodified
 * engines' readers (test_flow_readers.c, test_flow_src_vma.c) share beyond
 * nstest.h (observations collected) and coretest.h (temp directories): an
 * observation by session, an evidence callback that counts its calls.
 * Header only (static inline), included after cmocka.h. */
#ifndef NICSTALL_TEST_READTEST_H
#define NICSTALL_TEST_READTEST_H

#include <stdint.h>

#include "collectors/flows/flows.h"

#include "nstest.h"

static inline const struct flow_obs *by_session(const struct nstest_obs *g, uint64_t session)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->o[i].session == session)
			return &g->o[i];
	return NULL;
}

static int evid_calls;
static inline void evid_done(void *arg)
{
	(void)arg;
	evid_calls++;
}

#endif
