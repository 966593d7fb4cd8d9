/* bench_app: what a scrape of an application's metrics costs the daemon:
 * one endpoint serving NSERIES series (a counter family with two labels,
 * as a busy engine's page might be) from a child process on 127.0.0.1, read
 * by the app source (collectors/counters/src_app.c) on the daemon's event loop:
 * libcurl's multi interface, the parse (promtext_parse.c), the series' names and
 * the layout. Timed on the thread's CPU clock over ROUNDS scrapes, each
 * started when the last one ended; then the parse of the same page alone.
 *
 *   bench_app [ROUNDS [NSERIES]]     default 300 scrapes of 2000 series */
#include "collectors/counters/src_app.h"
#include "lib/cost.h"
#include "lib/log.h"
#include "lib/loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static char *page;
static size_t page_len;

/* The child: one request per connection, the page, close. */
static void serve(int ls)
{
	char hdr[256], req[4096];

	for (;;) {
		int c = accept(ls, NULL, NULL);
		size_t got = 0;
		int n;

		if (c < 0)
			continue;
		while (got < sizeof(req) - 1 && (n = (int)read(c, req + got, sizeof(req) - 1 - got)) > 0) {
			got += (size_t)n;
			req[got] = 0;
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
			     "version=0.0.4\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			     page_len);
		if (write(c, hdr, (size_t)n) == n)
			(void)!write(c, page, page_len);
		close(c);
	}
}

struct run {
	struct loop *l;
	struct src s;
	unsigned rounds, done;
	uint64_t seen;
	int failed;
};

static void tick(struct loop_timer *t, void *arg)
{
	struct run *r = arg;
	struct clayout *lay;
	const uint64_t *vals;
	uint64_t n = src_app_scrapes(&r->s);

	(void)t;
	if (n == r->seen && r->done)
		return;                 /* the scrape is still on its way */
	if (r->done && r->s.ops->read(&r->s, &lay, &vals) < 0) {
		fprintf(stderr, "bench_app: %s\n", r->s.err);
		r->failed = 1;
		loop_stop(r->l);
		return;
	}
	r->seen = n;
	if (r->done++ >= r->rounds) {
		loop_stop(r->l);
		return;
	}
	src_app_ops.read(&r->s, &lay, &vals);   /* starts the next scrape */
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 300;
	unsigned nseries = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct app_endpoint ep = { .name = "bench" };
	struct run r = { .rounds = rounds };
	struct loop_timer *t;
	struct app_page *pg;
	uint64_t c0, c1, w0, w1;
	size_t cap = (size_t)nseries * 64 + 64, o = 0;
	char err[256];
	int ls;
	pid_t child;

	log_set_level(LOG_ERR);
	page = malloc(cap);
	o += (size_t)snprintf(page + o, cap - o, "# TYPE bench_ops_total counter\n");
	for (unsigned i = 0; i < nseries; i++)
		o += (size_t)snprintf(page + o, cap - o,
				      "bench_ops_total{shard=\"%u\",op=\"read\"} %u\n", i, i * 7);
	page_len = o;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 64) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) < 0) {
		perror("bench_app: listen");
		return 1;
	}
	child = fork();
	if (child == 0) {
		serve(ls);
		_exit(0);
	}
	close(ls);
	snprintf(ep.conf.url, sizeof(ep.conf.url), "http://127.0.0.1:%u/metrics",
		 ntohs(sa.sin_port));
	ep.conf.min_gap_ns = 1;
	ep.conf.max_series = nseries + 1;
	r.l = loop_new();
	{
		struct src_app_ctx ctx = { r.l, "bench", &ep, 1 };

		if (src_app_open(&r.s, &ctx) < 0) {
			fprintf(stderr, "bench_app: %s\n", r.s.err);
			kill(child, SIGKILL);
			return 1;
		}
	}
	t = loop_timer_new(r.l, tick, &r);
	loop_timer_set(t, 1000000, 200000);
	c0 = cost_cpu_ns();
	w0 = loop_mono_ns();
	loop_run(r.l);
	c1 = cost_cpu_ns();
	w1 = loop_mono_ns();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (r.failed || src_app_scrapes(&r.s) < rounds)
		return 1;
	printf("page: %u series, %zu bytes\n", nseries, page_len);
	printf("one scrape (libcurl on the loop, parse, layout): %.1f us CPU\n",
	       (double)(c1 - c0) / 1e3 / rounds);
	printf("one scrape, wall: %.1f us\n", (double)(w1 - w0) / 1e3 / rounds);
	pg = app_page_new();
	c0 = cost_cpu_ns();
	for (unsigned i = 0; i < rounds; i++)
		if (app_page_parse(pg, "bench", &ep.conf, page, page_len, err, sizeof(err)) !=
		    (int)nseries) {
			fprintf(stderr, "bench_app: %s\n", err);
			return 1;
		}
	c1 = cost_cpu_ns();
	printf("of which the parse alone: %.1f us CPU\n", (double)(c1 - c0) / 1e3 / rounds);
	app_page_free(pg);
	src_app_ops.close(&r.s);
	loop_timer_free(t);
	loop_free(r.l);
	free(page);
	return 0;
}
