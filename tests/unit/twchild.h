/* twchild: child processes that stand in for engines in the thread-watch
 * tests (test_threadwatch.c, test_threadpass.c). */
#ifndef NICSTALL_TWCHILD_H
#define NICSTALL_TWCHILD_H

#include <sys/types.h>

void sleep_ms(unsigned ms);
/* fork(), the child killed when the test process dies. */
pid_t twchild_fork(void);
/* Seed 001's sender: a child whose sender thread busy-polls (on CPU, as
 * a spinning engine thread) until a byte is written to *go_w, then waits
 * in futex_wait for span_ms, woken every ~100 us by
 * another thread (it loses the word again and sleeps again), then
 * sleeps until killed. The sender's tid (pid_t) comes on *tid_r. */
pid_t start_starved(int *go_w, int *tid_r, unsigned span_ms);
/* The same sender, after the span (its send returned) asleep three times
 * 1 ms in nanosleep, then busy-polling again. */
pid_t start_starved_then_spin(int *go_w, int *tid_r, unsigned span_ms);
/* A healthy server: one thread asleep in epoll_wait on the read end of a
 * pipe, serving each byte written to *req_w at once. Its tid on *tid. */
pid_t start_epoll_server(int *req_w, pid_t *tid);
void stop_child(pid_t pid);

#endif
