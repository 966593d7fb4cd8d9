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
/* When the current (or last) wakeup began: loop_run's wait returned
 * (CLOCK_MONOTONIC; 0 before the first). A handler that runs after
 * others in the same wakeup (a window's timer after the sweep's work)
 * dates by it what should keep the wakeup's phase. */
uint64_t loop_wake_ns(const struct loop *l);
/* What an fd's or a timer's events are for (name: a string that outlives
 * it; parts of one name share a count; LOOP_NAMES names at most, then
 * "other", as the unnamed are): loop_woken_by() counts by name the
 * wakeups each had an event in. 0, or -1 with errno (ENOENT: no such fd). */
#define LOOP_NAMES 24
int loop_fd_name(struct loop *l, int fd, const char *name);
int loop_timer_name(struct loop_timer *t, const char *name);
/* Each name's wakeups, in the order the names were first given ("other"
 * first): a wakeup with events of two names counts for both, so the sum
 * may pass loop_wakeups(); a window (loop_timer_set_window) fired at
 * another's wakeup counts for none, and so does one whose latest came in
 * a wakeup with other events: its wakeup was not its own. */
typedef void (*loop_woken_fn)(const char *name, uint64_t wakeups, void *arg);
void loop_woken_by(const struct loop *l, loop_woken_fn fn, void *arg);
/* The wakeups t's windows (loop_timer_set_window) fire at before their
 * latest: only those with an event of name (which need not be given to an
 * fd yet), or, NULL, any. A window that rides the regular wakeups of one
 * timer stays in their phase: riding any other moves its next window off
 * it, to a wakeup of its own. 0, or -1 with errno (ENOSPC: LOOP_NAMES). */
int loop_timer_ride(struct loop_timer *t, const char *name);
void loop_stop(struct loop *l);

uint64_t loop_mono_ns(void);    /* CLOCK_MONOTONIC */
uint64_t loop_real_ns(void);    /* CLOCK_REALTIME */

#endif
