/* nstest: helpers shared by the unit tests that use the kernel's networking. */
#ifndef NICSTALL_NSTEST_H
#define NICSTALL_NSTEST_H

int nstest_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int nstest_make_netns(void);

#endif
