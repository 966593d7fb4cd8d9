/* lockengine: an emulated seed 001 engine (nicstalld's seed 001, Onload
 * shared-stack lock starvation). A TCP echo server whose sessions are
 * served by worker threads that share one lock, as rust-pure's four
 * workers shared one Onload stack, and that publishes every session in a
 * nicstall flow table (include/nicstall/flowtab.h), so that the daemon
 * watches the flows through a source it really reads.
 *
 *   lockengine --listen ADDR:PORT --table-dir DIR [--workers N]
 *              [--spin-us N] [--spin-workers N] [--stall-ms N]
 *              [--hold-us N] [--name NAME] [--onload-state FILE]
 *
 * The main thread accepts and hands session i to worker i % N. A worker
 * echoes what it reads. With --spin-us it polls its epoll set without
 * sleeping for that long after each event (Onload's EF_SPIN_USEC: the
 * record's workers spun, EF_POLL_USEC=100000), the first --spin-workers of
 * them (default all); the others, and all without --spin-us, sleep in
 * epoll_wait between requests (an engine that blocks by design).
 *
 * SIGUSR1 arms one stall: worker 0's next send takes the shared lock while
 * the process's sibling thread keeps it for --stall-ms (default 650, the
 * record's 648.8 ms send), in bursts of --hold-us (default 20, slept, so
 * that the emulation does not need a CPU of its own): at the end of each
 * burst the lock passes to the next of the siblings and the waiter is
 * woken to compete again, finds the lock taken and sleeps again. That is
 * Onload's oo_eplock_lock() (src/driver/linux_onload/eplock_resource_manager.c
 * in Xilinx-CNS/onload): the unlocker wakes the waiters "to compete again,
 * not to transfer ownership", so a waiter that loses sleeps again, and the
 * record's sender was woken 29,463 times in 649 ms, 95% of it off CPU.
 * Here the lock is a futex word (0 free, 1 taken, 2 taken with waiters,
 * the classic futex mutex); the waiter sleeps in futex_wait. Worker 0
 * publishes the reply as unsent while it waits (the engine holds it), and
 * its sessions wait; worker 1's sessions run on.
 *
 * Lines on stdout (flushed), CLOCK_MONOTONIC ns:
 *   send-start mono_ns=T tid=TID
 *   send-end mono_ns=T tid=TID ms=M wakes=W
 * --onload-state FILE: the counters an Onload stack would count for this,
 * for the stack-dump stand-in (tests/engine/onload_stackdump.in), written
 * whole (a rename) at each change and every 50 ms of a stall, one
 * "name value" a line, as Onload's ci_netif_stats (stats_def.h) counts
 * them in the record's path: tcp_send.c ci_tcp_sendmsg_no_pkt_buf() counts
 * tcp_send_nonb_pool_empty before it takes the stack lock and
 * tcp_send_ni_lock_contends once it has it; lock_wakes counts each wake-up
 * of a lock waiter (eplock_resource_manager.c). The record's final
 * lock_wakes equalled the sender's voluntary switches.
 *
 * SIGINT/SIGTERM: remove the table, exit 0. */
#include <nicstall/flowtab.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_WORKERS 8
#define MAX_SESS 256
#define BUF 65536

struct sess {
	int fd;
	struct nsft_record *rec;
};

struct worker {
	pthread_t th;
	int idx, ep;
};

static struct nsft_table table;
static struct worker workers[MAX_WORKERS];
static unsigned nworkers = 2, nspin = MAX_WORKERS;
static uint64_t spin_ns, stall_ns = 650000000ull, hold_ns = 20000;
static volatile sig_atomic_t armed, quit;
static uint32_t lock_word;                      /* the shared lock */
static uint32_t storm;                          /* a sibling's storm request */
static uint64_t storm_wakes;                    /* wake-ups it gave the waiter */
static uint64_t pool_empty, lock_contends;       /* the send path's, as Onload's */
static const char *ol_state;                    /* --onload-state */

/* The counters for the stack-dump stand-in, replaced whole. */
static void ol_publish(void)
{
	char tmp[4096];
	FILE *f;

	if (!ol_state)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", ol_state);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "lock_wakes %" PRIu64 "\ntcp_send_nonb_pool_empty %" PRIu64
		"\ntcp_send_ni_lock_contends %" PRIu64 "\npid %d\n",
		__atomic_load_n(&storm_wakes, __ATOMIC_RELAXED),
		__atomic_load_n(&pool_empty, __ATOMIC_RELAXED),
		__atomic_load_n(&lock_contends, __ATOMIC_RELAXED), (int)getpid());
	if (fclose(f) == 0)
		rename(tmp, ol_state);
}

static void die(const char *what)
{
	fprintf(stderr, "lockengine: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long futex(uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The waiter's side: the classic futex mutex (Drepper, "Futexes Are
 * Tricky", mutex3): sleep while the word is taken with waiters. */
static void lock_take(void)
{
	uint32_t c = 0;

	if (__atomic_compare_exchange_n(&lock_word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	while (__atomic_exchange_n(&lock_word, 2, __ATOMIC_ACQUIRE) != 0)
		futex(&lock_word, FUTEX_WAIT_PRIVATE, 2);
}

static void lock_give(void)
{
	if (__atomic_exchange_n(&lock_word, 0, __ATOMIC_RELEASE) == 2)
		futex(&lock_word, FUTEX_WAKE_PRIVATE, 1);
}

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* The siblings: on request, take the lock and keep it among themselves for
 * stall_ns, in bursts of hold_ns; each hand-over wakes one waiter to
 * compete again (oo_eplock_lock), and the next sibling has the lock before
 * the woken waiter runs. */
static void *sibling_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sibling");
	prctl(PR_SET_TIMERSLACK, 1000ul);       /* its bursts are short */
	for (;;) {
		uint64_t end;

		while (!__atomic_load_n(&storm, __ATOMIC_ACQUIRE))
			futex(&storm, FUTEX_WAIT_PRIVATE, 0);
		lock_take();
		end = nsft_now_ns() + stall_ns;
		__atomic_store_n(&storm, 2, __ATOMIC_RELEASE);     /* taken */
		futex(&storm, FUTEX_WAKE_PRIVATE, 1);
		uint64_t pub = 0;

		while (nsft_now_ns() < end) {
			nap(hold_ns);
			if (nsft_now_ns() - pub >= 50000000ull) {
				ol_publish();
				pub = nsft_now_ns();
			}
			/* the burst ends: the lock passes on (the word stays
			 * taken) and a waiter is woken to compete for it */
			if (__atomic_load_n(&lock_word, __ATOMIC_RELAXED) == 2 &&
			    futex(&lock_word, FUTEX_WAKE_PRIVATE, 1) > 0)
				__atomic_fetch_add(&storm_wakes, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&storm, 0, __ATOMIC_RELEASE);
		lock_give();
	}
	return NULL;
}

/* Worker 0's send under the stall: publish the reply as held, ask the
 * siblings for the lock, wait for it, send. */
static void stalled_send(struct sess *s, const char *buf, size_t n)
{
	uint64_t t0, t1, w0;
	pid_t tid = gettid_();

	t0 = nsft_now_ns();     /* the send begins: it asks for the lock */
	nsft_set_held(s->rec, n, 0, 0);
	__atomic_fetch_add(&pool_empty, 1, __ATOMIC_RELAXED);
	ol_publish();
	__atomic_store_n(&storm, 1, __ATOMIC_RELEASE);
	futex(&storm, FUTEX_WAKE_PRIVATE, 1);
	while (__atomic_load_n(&storm, __ATOMIC_ACQUIRE) == 1)
		futex(&storm, FUTEX_WAIT_PRIVATE, 1);
	w0 = storm_wakes;
	printf("send-start mono_ns=%" PRIu64 " tid=%d\n", t0, (int)tid);
	fflush(stdout);
	lock_take();
	t1 = nsft_now_ns();
	__atomic_fetch_add(&lock_contends, 1, __ATOMIC_RELAXED);
	lock_give();
	ol_publish();
	if (send(s->fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n)
		nsft_on_send(s->rec, n, t1);
	nsft_set_held(s->rec, 0, 0, 0);
	printf("send-end mono_ns=%" PRIu64 " tid=%d ms=%.3f wakes=%" PRIu64 "\n", t1, (int)tid,
	       (double)(t1 - t0) / 1e6, storm_wakes - w0);
	fflush(stdout);
}

static void serve(struct worker *w, struct sess *s)
{
	static char bufs[MAX_WORKERS][BUF];
	char *buf = bufs[w->idx];
	ssize_t n = recv(s->fd, buf, BUF, MSG_DONTWAIT);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			epoll_ctl(w->ep, EPOLL_CTL_DEL, s->fd, NULL);
			close(s->fd);
			nsft_remove(&table, s->rec);
			s->fd = -1;
		}
		return;
	}
	nsft_on_recv(s->rec, (uint64_t)n, nsft_now_ns());
	if (w->idx == 0 && armed) {
		armed = 0;
		stalled_send(s, buf, (size_t)n);
		return;
	}
	/* a blocking send of a small echo: the socket buffer has room */
	if (send(s->fd, buf, (size_t)n, MSG_NOSIGNAL) == n)
		nsft_on_send(s->rec, (uint64_t)n, nsft_now_ns());
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[32];
	uint64_t last = nsft_now_ns();
	char name[16];

	snprintf(name, sizeof(name), "worker%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	while (!quit) {
		int spin = spin_ns && (unsigned)w->idx < nspin && nsft_now_ns() - last < spin_ns;
		int n = epoll_wait(w->ep, ev, 32, spin ? 0 : 100);

		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		if (n > 0)
			last = nsft_now_ns();
		for (int i = 0; i < n; i++)
			serve(w, ev[i].data.ptr);
	}
	return NULL;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		armed = 1;
	else
		quit = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: lockengine --listen ADDR:PORT --table-dir DIR [--workers N] "
		"[--spin-us N] [--spin-workers N] [--stall-ms N] [--hold-us N] [--name NAME] "
		"[--onload-state FILE]\n");
	exit(2);
}

static uint64_t num(const char *s, uint64_t max, const char *what)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || e == s || *e || v > max) {
		fprintf(stderr, "lockengine: %s: '%s' is not a number up to %" PRIu64 "\n", what, s,
			max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", 1, NULL, 'l' }, { "table-dir", 1, NULL, 't' },
		{ "workers", 1, NULL, 'w' }, { "spin-us", 1, NULL, 's' },
		{ "stall-ms", 1, NULL, 'd' }, { "hold-us", 1, NULL, 'h' },
		{ "name", 1, NULL, 'n' }, { "spin-workers", 1, NULL, 'S' },
		{ "onload-state", 1, NULL, 'o' }, { NULL, 0, NULL, 0 },
	};
	static struct sess sessions[MAX_SESS];
	const char *listen_at = NULL, *dir = NULL, *name = "lockengine";
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sigaction act = { .sa_handler = on_signal };
	unsigned nsess = 0;
	pthread_t sib;
	char host[64], *colon;
	int c, lfd, one = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_at = optarg; break;
		case 't': dir = optarg; break;
		case 'w': nworkers = (unsigned)num(optarg, MAX_WORKERS, "--workers"); break;
		case 's': spin_ns = num(optarg, 10000000, "--spin-us") * 1000; break;
		case 'd': stall_ns = num(optarg, 60000, "--stall-ms") * 1000000; break;
		case 'h': hold_ns = num(optarg, 100000, "--hold-us") * 1000; break;
		case 'n': name = optarg; break;
		case 'o': ol_state = optarg; break;
		case 'S': nspin = (unsigned)num(optarg, MAX_WORKERS, "--spin-workers"); break;
		default: usage();
		}
	}
	if (!listen_at || !dir || !nworkers || !hold_ns)
		usage();
	snprintf(host, sizeof(host), "%s", listen_at);
	colon = strrchr(host, ':');
	if (!colon)
		usage();
	*colon = 0;
	sa.sin_port = htons((uint16_t)num(colon + 1, 65535, "--listen port"));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "lockengine: --listen: '%s' is not an IPv4 address\n", host);
		return 2;
	}
	sigset_t sigs, old;

	sigaction(SIGUSR1, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	/* the signals go to the main thread (it is in accept()) */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	if (nsft_create(&table, dir, name, MAX_SESS) < 0)
		die("flow table");
	ol_publish();
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 64) < 0)
		die("listen");
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i].idx = (int)i;
		workers[i].ep = epoll_create1(0);
		if (workers[i].ep < 0 || pthread_create(&workers[i].th, NULL, worker_main, &workers[i]))
			die("worker");
	}
	if (pthread_create(&sib, NULL, sibling_main, NULL))
		die("sibling");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (!quit) {
		struct sockaddr_storage peer, local;
		socklen_t pl = sizeof(peer), ll = sizeof(local);
		int fd = accept(lfd, (struct sockaddr *)&peer, &pl);
		struct sess *s;
		struct epoll_event ev = { .events = EPOLLIN };

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		if (nsess == MAX_SESS) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		getsockname(fd, (struct sockaddr *)&local, &ll);
		s = &sessions[nsess];
		s->fd = fd;
		s->rec = nsft_add(&table, ((uint64_t)getpid() << 32) | (nsess + 1), IPPROTO_TCP,
				  (struct sockaddr *)&local, (struct sockaddr *)&peer);
		if (!s->rec) {
			close(fd);
			continue;
		}
		ev.data.ptr = s;
		if (epoll_ctl(workers[nsess % nworkers].ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			die("epoll_ctl");
		nsess++;
	}
	nsft_close(&table, 1);
	return 0;
}
