/* loop: epoll + timerfd + signalfd, one thread. */
#include "lib/loop.h"
#include "lib/log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

struct handler {
	int fd;
	loop_fd_fn fn;
	void *arg;
	struct handler *next;
	int dead;
	unsigned cause;         /* its name's slot in loop.woke, 0 "other" */
	struct loop_timer *timer;       /* the timer whose timerfd it is */
};

struct loop_timer {
	struct loop *l;
	int fd;
	loop_timer_fn fn;
	void *arg;
	/* set by loop_timer_set_window: fired at the first wakeup at or
	 * after soft_at (0: none), in the list of such timers */
	uint64_t soft_at;
	uint64_t soft_wakeup;   /* the loop's wakeups when it was set */
	struct loop_timer *soft_next;
	unsigned ride;          /* loop_timer_ride: a cause's slot, 0 any */
};

struct sig {
	int signo;
	loop_signal_fn fn;
	void *arg;
};

struct loop {
	int epfd;
	int sigfd;
	sigset_t sigs;
	struct sig sig[16];
	unsigned nsig;
	struct handler *handlers;
	int stop;
	int dispatching;
	uint64_t wakeups;
	uint64_t wake_ns;                /* when the current wakeup began */
	struct loop_timer *soft;        /* timers with a soft deadline */
	/* wakeups by what had events in them (loop_fd_name) */
	struct { const char *name; uint64_t n, last; } woke[LOOP_NAMES + 1];
	unsigned nwoke;
};

uint64_t loop_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t loop_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct loop *loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->sigfd = -1;
	l->woke[0].name = "other";
	l->nwoke = 1;
	sigemptyset(&l->sigs);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	return l;
}

static struct handler *find(struct loop *l, int fd)
{
	for (struct handler *h = l->handlers; h; h = h->next)
		if (h->fd == fd && !h->dead)
			return h;
	return NULL;
}

static void reap(struct loop *l)
{
	struct handler **pp = &l->handlers;

	while (*pp) {
		if ((*pp)->dead) {
			struct handler *d = *pp;

			*pp = d->next;
			free(d);
		} else
			pp = &(*pp)->next;
	}
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *arg)
{
	struct epoll_event ev = { .events = events };
	struct handler *h;

	if (find(l, fd)) {
		errno = EEXIST;
		return -1;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -1;
	h->fd = fd;
	h->fn = fn;
	h->arg = arg;
	ev.data.ptr = h;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(h);
		return -1;
	}
	h->next = l->handlers;
	l->handlers = h;
	return 0;
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
	struct handler *h = find(l, fd);
	struct epoll_event ev = { .events = events };

	if (!h) {
		errno = ENOENT;
		return -1;
	}
	ev.data.ptr = h;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void loop_del_fd(struct loop *l, int fd)
{
	struct handler *h = find(l, fd);

	if (!h)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	h->dead = 1;    /* freed after the current dispatch round */
	if (!l->dispatching)
		reap(l);
}

/* Take t off the soft list (it fires, or is set or freed). */
static void soft_del(struct loop_timer *t)
{
	for (struct loop_timer **p = &t->l->soft; *p; p = &(*p)->soft_next)
		if (*p == t) {
			*p = t->soft_next;
			break;
		}
	t->soft_next = NULL;
	t->soft_at = 0;
}

static void timer_cb(int fd, uint32_t events, void *arg)
{
	struct loop_timer *t = arg;
	uint64_t n;

	(void)events;
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return;         /* spurious or re-armed meanwhile */
	if (t->soft_at)
		soft_del(t);
	t->fn(t, t->arg);
}

/* After a wakeup's handlers: every timer whose soft deadline has come
 * fires now, its timerfd disarmed (which clears an expiry not yet read:
 * timerfd_settime() resets the count). One set in this wakeup (by a
 * handler, its own among them) waits for a later wakeup, so nothing fires
 * twice in one; the list is looked at again from its head after each,
 * since a handler may set or free others. Not once the loop is stopping. */
static void soft_run(struct loop *l)
{
	uint64_t now;
	struct loop_timer *t;
	int fired;

	if (!l->soft || l->stop)
		return;
	now = loop_mono_ns();
	do {
		for (t = l->soft; t && (t->soft_at > now || t->soft_wakeup == l->wakeups ||
					(t->ride && l->woke[t->ride].last != l->wakeups));
		     t = t->soft_next)
			;
		fired = t != NULL;
		if (fired) {
			struct itimerspec off = { 0 };

			soft_del(t);
			timerfd_settime(t->fd, 0, &off, NULL);
			t->fn(t, t->arg);
		}
	} while (fired && !l->stop);
}

struct loop_timer *loop_timer_new(struct loop *l, loop_timer_fn fn, void *arg)
{
	struct loop_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->l = l;
	t->fn = fn;
	t->arg = arg;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0 || loop_add_fd(l, t->fd, EPOLLIN, timer_cb, t) < 0) {
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		return NULL;
	}
	find(l, t->fd)->timer = t;
	return t;
}

int loop_timer_set(struct loop_timer *t, uint64_t first_ns, uint64_t period_ns)
{
	struct itimerspec its = {
		.it_value = { first_ns / 1000000000ull, first_ns % 1000000000ull },
		.it_interval = { period_ns / 1000000000ull, period_ns % 1000000000ull },
	};

	if (t->soft_at)
		soft_del(t);
	return timerfd_settime(t->fd, 0, &its, NULL);
}

int loop_timer_set_window(struct loop_timer *t, uint64_t earliest_ns, uint64_t latest_ns)
{
	if (!latest_ns || earliest_ns > latest_ns) {
		errno = EINVAL;
		return -1;
	}
	if (loop_timer_set(t, latest_ns, 0) < 0)
		return -1;
	t->soft_at = loop_mono_ns() + (earliest_ns ? earliest_ns : 1);
	t->soft_wakeup = t->l->wakeups;
	t->soft_next = t->l->soft;
	t->l->soft = t;
	return 0;
}

void loop_timer_free(struct loop_timer *t)
{
	if (!t)
		return;
	if (t->soft_at)
		soft_del(t);
	loop_del_fd(t->l, t->fd);
	close(t->fd);
	free(t);
}

static void signal_cb(int fd, uint32_t events, void *arg)
{
	struct loop *l = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(fd, &si, sizeof(si)) == sizeof(si))
		for (unsigned i = 0; i < l->nsig; i++)
			if ((int)si.ssi_signo == l->sig[i].signo)
				l->sig[i].fn((int)si.ssi_signo, l->sig[i].arg);
}

int loop_add_signal(struct loop *l, int signo, loop_signal_fn fn, void *arg)
{
	if (l->nsig >= sizeof(l->sig) / sizeof(l->sig[0])) {
		errno = ENOSPC;
		return -1;
	}
	sigaddset(&l->sigs, signo);
	if (sigprocmask(SIG_BLOCK, &l->sigs, NULL) < 0)
		return -1;
	if (l->sigfd >= 0) {
		if (signalfd(l->sigfd, &l->sigs, SFD_NONBLOCK | SFD_CLOEXEC) < 0)
			return -1;
	} else {
		l->sigfd = signalfd(-1, &l->sigs, SFD_NONBLOCK | SFD_CLOEXEC);
		if (l->sigfd < 0 || loop_add_fd(l, l->sigfd, EPOLLIN, signal_cb, l) < 0)
			return -1;
		loop_fd_name(l, l->sigfd, "signal");
	}
	l->sig[l->nsig++] = (struct sig){ signo, fn, arg };
	return 0;
}

/* A window whose latest came in a wakeup with other events did not cause
 * it (their timers race: the idle poll's latest falls on the sweep's tick):
 * it counts only alone. */
static int windowed(const struct handler *h)
{
	return h->timer && h->timer->soft_at;
}

static void count_causes(struct loop *l, const struct epoll_event *ev, int n)
{
	int others = 0;

	for (int i = 0; i < n; i++)
		others |= !windowed(ev[i].data.ptr);
	for (int i = 0; i < n; i++) {
		const struct handler *h = ev[i].data.ptr;

		if (others && windowed(h))
			continue;
		if (l->woke[h->cause].last != l->wakeups) {
			l->woke[h->cause].last = l->wakeups;
			l->woke[h->cause].n++;
		}
	}
}

int loop_run(struct loop *l)
{
	struct epoll_event ev[32];

	l->stop = 0;
	while (!l->stop) {
		int n = epoll_wait(l->epfd, ev, 32, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		l->wakeups++;
		l->wake_ns = loop_mono_ns();
		count_causes(l, ev, n);
		l->dispatching = 1;
		for (int i = 0; i < n && !l->stop; i++) {
			struct handler *h = ev[i].data.ptr;

			if (!h->dead)
				h->fn(h->fd, ev[i].events, h->arg);
		}
		l->dispatching = 0;
		reap(l);
		soft_run(l);
	}
	return 0;
}

uint64_t loop_wakeups(const struct loop *l)
{
	return l->wakeups;
}

uint64_t loop_wake_ns(const struct loop *l)
{
	return l->wake_ns;
}

/* name's slot in l->woke, given one when new; 0 ("other") when full */
static unsigned cause_of(struct loop *l, const char *name)
{
	unsigned c;

	for (c = 0; c < l->nwoke && strcmp(l->woke[c].name, name); c++)
		;
	if (c == l->nwoke) {
		if (l->nwoke > LOOP_NAMES)
			return 0;
		l->woke[c].name = name;
		l->nwoke++;
	}
	return c;
}

int loop_fd_name(struct loop *l, int fd, const char *name)
{
	struct handler *h = find(l, fd);

	if (!h || !name) {
		errno = h ? EINVAL : ENOENT;
		return -1;
	}
	h->cause = cause_of(l, name);   /* past LOOP_NAMES: "other" */
	return 0;
}

int loop_timer_ride(struct loop_timer *t, const char *name)
{
	unsigned c = name ? cause_of(t->l, name) : 0;

	if (name && !c) {
		errno = ENOSPC;
		return -1;
	}
	t->ride = c;
	return 0;
}

int loop_timer_name(struct loop_timer *t, const char *name)
{
	return loop_fd_name(t->l, t->fd, name);
}

void loop_woken_by(const struct loop *l, loop_woken_fn fn, void *arg)
{
	for (unsigned c = 0; c < l->nwoke; c++)
		fn(l->woke[c].name, l->woke[c].n, arg);
}

void loop_stop(struct loop *l)
{
	l->stop = 1;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	l->dispatching = 0;
	for (struct handler *h = l->handlers; h; h = h->next)
		h->dead = 1;
	reap(l);
	if (l->sigfd >= 0)
		close(l->sigfd);
	close(l->epfd);
	free(l);
}
