/* loop: the daemon's one event loop (epoll + timerfd + signalfd). */
#ifndef NICSTALL_LOOP_H
#define NICSTALL_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct loop;
struct loop_timer;

typedef void (*loop_fd_fn)(int fd, uint32_t events, void *arg);
typedef void (*loop_timer_fn)(struct loop_timer *t, void *arg);
typedef void (*loop_signal_fn)(int signo, void *arg);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Watch fd for events (EPOLLIN, EPOLLOUT...). One handler per fd. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *arg);
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
void loop_del_fd(struct loop *l, int fd);

/* A timer (its own timerfd, CLOCK_MONOTONIC). first_ns 0 = disarmed;
 * period_ns 0 = one-shot. */
struct loop_timer *loop_timer_new(struct loop *l, loop_timer_fn fn, void *arg);
int loop_timer_set(struct loop_timer *t, uint64_t first_ns, uint64_t period_ns);
/* One-shot, at whichever comes first: latest_ns from now, or the end of
 * any later wakeup of the loop earliest_ns from now or later (a deadline
 * that need not wake the thread on its own when something else does: the
 * wakeups an idle daemon pays are its timers'). Never twice, and not
 * once the loop is stopping. earliest_ns <= latest_ns, latest_ns > 0; 0
 * or -1 with errno. loop_timer_set() takes the window off. */
int loop_timer_set_window(struct loop_timer *t, uint64_t earliest_ns, uint64_t latest_ns);
void loop_timer_free(struct loop_timer *t);

/* Block these signals and deliver them through a signalfd. */
int loop_add_signal(struct loop *l, int signo, loop_signal_fn fn, void *arg);

int loop_run(struct loop *l);   /* until loop_stop(); 0 or -errno */
/* How often loop_run's wait returned: the thread's wakeups, what an idle
 * daemon costs beyond its work (a timer that fires for nothing shows). */
uint64_t loop_wakeups(const struct loop *l);
void loop_stop(struct loop *l);

uint64_t loop_mono_ns(void);    /* CLOCK_MONOTONIC */
uint64_t loop_real_ns(void);    /* CLOCK_REALTIME */

#endif
