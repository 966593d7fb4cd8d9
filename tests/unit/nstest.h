/* nstest: helpers shared by the unit tests (most of them for the tests that
 * use the kernel's networking). */
#ifndef NICSTALL_NSTEST_H
#define NICSTALL_NSTEST_H

#include "collectors/flows/flows.h"

/* Observations collected by a flow_emit_fn. */
struct nstest_obs {
	struct flow_obs o[512];
	unsigned n;
};
void nstest_collect(const struct flow_obs *o, void *arg);  /* arg: struct nstest_obs */
void nstest_msleep(unsigned ms);

int nstest_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int nstest_make_netns(void);
/* A veth pair: here (our namespace) with addr_here/24, peer inside nsfd
 * with addr_peer/24, both up. 0, or the failing command's status. */
int nstest_veth(int nsfd, const char *here, const char *addr_here,
		const char *peer, const char *addr_peer);

/* Tests run from the repo root; when file is not reachable from here, go to
 * the root from the binary's path (BUILD/tests/test_x). 0, or -1 when file
 * is still not there. */
int nstest_chdir_repo(const char *file);

#endif
