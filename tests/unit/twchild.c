/* twchild: see twchild.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "twchild.h"

pid_t twchild_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	/* a failed assertion in the test must not leave it behind */
	if (!pid && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
		_exit(1);
	return pid;
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint32_t fword;
static volatile int waker_stop, go_flag;

static void *waker(void *arg)
{
	(void)arg;
	while (!waker_stop) {
		struct timespec ts = { 0, 100000 };     /* 100 us */

		nanosleep(&ts, NULL);
		__atomic_store_n(&fword, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

struct sender_arg { int out; unsigned span_ms; int spin_after; };

/* Busy-polls (as a spinning engine thread does) until go, then waits in
 * futex_wait for span_ms, losing the word again at each wake-up; then
 * sleeps until killed, or (spin_after) sleeps three times 1 ms in
 * nanosleep and busy-polls again, as the engine's thread does once its
 * send returns. */
static void *sender(void *p)
{
	struct sender_arg *a = p;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct timespec t0, t;

	assert_true(write(a->out, &tid, sizeof(tid)) == sizeof(tid));
	while (!go_flag)
		__asm__ volatile("pause");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		while (!__atomic_exchange_n(&fword, 0, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (((int64_t)(t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec)) /
		 1000000 < (int64_t)a->span_ms);
	if (a->spin_after) {
		struct timespec ms = { 0, 1000000 };

		waker_stop = 1;
		/* back in its loop: a short sleep of another kind (its
		 * epoll_wait's timeout), then polling */
		for (int i = 0; i < 3; i++)
			nanosleep(&ms, NULL);
		for (;;)
			__asm__ volatile("pause");
	}
	pause();                /* done: until killed */
	return NULL;
}

static pid_t starved_child(int *go_w, int *tid_r, unsigned span_ms, int spin_after)
{
	int go[2], tp[2];
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(tp), 0);
	pid = twchild_fork();
	if (!pid) {
		struct sender_arg a = { tp[1], span_ms, spin_after };
		pthread_t w, s;
		char c;

		close(go[1]);
		pthread_create(&s, NULL, sender, &a);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pthread_create(&w, NULL, waker, NULL);
		go_flag = 1;
		pause();
		_exit(0);
	}
	close(go[0]);
	close(tp[1]);
	*go_w = go[1];
	*tid_r = tp[0];
	return pid;
}

pid_t start_starved(int *go_w, int *tid_r, unsigned span_ms)
{
	return starved_child(go_w, tid_r, span_ms, 0);
}

pid_t start_starved_then_spin(int *go_w, int *tid_r, unsigned span_ms)
{
	return starved_child(go_w, tid_r, span_ms, 1);
}

void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}


pid_t start_epoll_server(int *req_w, pid_t *tid)
{
	int rq[2], tp[2];
	pid_t pid;

	assert_int_equal(pipe(rq), 0);
	assert_int_equal(pipe(tp), 0);
	pid = twchild_fork();
	if (!pid) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0);
		pid_t me = (pid_t)syscall(SYS_gettid);
		char c;

		close(rq[1]);
		epoll_ctl(ep, EPOLL_CTL_ADD, rq[0], &ev);
		if (write(tp[1], &me, sizeof(me)) != sizeof(me))
			_exit(1);
		for (;;)
			if (epoll_wait(ep, &out, 1, -1) == 1 && read(rq[0], &c, 1) != 1)
				_exit(0);
	}
	close(rq[0]);
	close(tp[1]);
	assert_int_equal(read(tp[0], tid, sizeof(*tid)), (ssize_t)sizeof(*tid));
	close(tp[0]);
	*req_w = rq[1];
	return pid;
}
