/* flowstorm: a flow table of many sessions that all stall at the same
 * moment, for the storm and authority system tests.
 *
 *   flowstorm --dir DIR --sessions N --local ADDR --remote ADDR --port P
 *             [--name NAME] [--engine-name TEXT] [--healthy-ms MS]
 *             [--stall-ms MS] [--release-ms MS] [--period-ms MS]
 *
 * Publishes N TCP sessions (local ADDR:P.., remote ADDR:1024..; 50,000 per
 * local port) in DIR/NAME.PID.flows, keeps them answering (every sent
 * message answered) for --healthy-ms, then sends one request on every
 * session that is never answered (--stall-ms), then answers them all
 * again (--release-ms) and exits, removing the table. --engine-name writes
 * TEXT into the header's engine field as is, past nsft_create()'s checks:
 * the daemon must treat it as hostile text. Prints "stalled" and
 * "released" on stdout at those moments.
 *
 * Like an engine whose records the daemon believes, it holds a kernel TCP
 * socket listening on each local port it publishes (bound to the wildcard,
 * SO_REUSEPORT so that runs side by side share it): nicstalld acts only on
 * records whose owner holds a socket on their local end (claimv.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nicstall/flowtab.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void usage(void)
{
	fprintf(stderr, "usage: flowstorm --dir DIR --sessions N --local ADDR --remote ADDR "
		"--port P [--name NAME] [--engine-name TEXT] [--healthy-ms MS] [--stall-ms MS] "
		"[--release-ms MS] [--period-ms MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", 1, 0, 'd' }, { "sessions", 1, 0, 's' }, { "local", 1, 0, 'l' },
		{ "remote", 1, 0, 'r' }, { "port", 1, 0, 'p' }, { "name", 1, 0, 'n' },
		{ "engine-name", 1, 0, 'e' }, { "healthy-ms", 1, 0, 'H' },
		{ "stall-ms", 1, 0, 'S' }, { "release-ms", 1, 0, 'R' },
		{ "period-ms", 1, 0, 'P' }, { 0, 0, 0, 0 }
	};
	const char *dir = NULL, *local = NULL, *remote = NULL, *name = "flowstorm", *ename = NULL;
	unsigned n = 0, port = 0, healthy = 1000, stall = 5000, release = 1000, period = 50;
	struct sockaddr_storage ls = { 0 }, rs = { 0 };
	struct sockaddr_in *la = (struct sockaddr_in *)&ls, *ra = (struct sockaddr_in *)&rs;
	struct nsft_record **rec;
	struct nsft_table t;
	uint64_t end;
	int o, rc;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dir = optarg; break;
		case 's': n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'l': local = optarg; break;
		case 'r': remote = optarg; break;
		case 'p': port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': name = optarg; break;
		case 'e': ename = optarg; break;
		case 'H': healthy = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'S': stall = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'R': release = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'P': period = (unsigned)strtoul(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (!dir || !local || !remote || !n || n > NSFT_MAX_CAPACITY || !port || !period ||
	    port + n / 50000 > 65535 || inet_pton(AF_INET, local, &la->sin_addr) != 1 ||
	    inet_pton(AF_INET, remote, &ra->sin_addr) != 1)
		usage();
	rc = nsft_create(&t, dir, name, n);
	if (rc < 0) {
		fprintf(stderr, "flowstorm: %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	rec = calloc(n, sizeof(*rec));
	if (!rec)
		return 1;
	for (unsigned p = port; p <= port + (n - 1) / 50000; p++) {
		struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p) };
		int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&any, sizeof(any)) < 0 || listen(fd, 1) < 0) {
			fprintf(stderr, "flowstorm: reserving TCP port %u: %s\n", p, strerror(errno));
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		la->sin_family = ra->sin_family = AF_INET;
		la->sin_port = htons((uint16_t)(port + i / 50000));
		ra->sin_port = htons((uint16_t)(1024 + i % 50000));
		/* nsft_add() looks for a free slot first: quadratic for a fresh
		 * table of 100k; the records are filled in order here, and the
		 * count published once */
		rec[i] = &t.rec[i];
		nsft_begin(rec[i]);
		rec[i]->session_id = ((uint64_t)getpid() << 32) | (i + 1);
		rec[i]->proto = IPPROTO_TCP;
		rec[i]->family = (uint8_t)nsft_addr_(rec[i]->local_addr, &rec[i]->local_port,
						     (struct sockaddr *)&ls);
		nsft_addr_(rec[i]->remote_addr, &rec[i]->remote_port, (struct sockaddr *)&rs);
		rec[i]->open_ns = nsft_now_ns();
		rec[i]->state = NSFT_ST_OPEN;
		nsft_end(rec[i]);
	}
	__atomic_store_n(&t.hdr->count, n, __ATOMIC_RELEASE);
	__atomic_store_n(&t.hdr->generation, 1, __ATOMIC_RELEASE);
	if (ename) {
		memset(t.hdr->engine, 0, NSFT_ENGINE_LEN);
		memcpy(t.hdr->engine, ename, strlen(ename) < NSFT_ENGINE_LEN - 1 ?
		       strlen(ename) : NSFT_ENGINE_LEN - 1);
	}
	/* healthy: every request answered */
	for (end = nsft_now_ns() + (uint64_t)healthy * 1000000u; nsft_now_ns() < end;) {
		uint64_t now = nsft_now_ns();

		for (unsigned i = 0; i < n; i++) {
			nsft_on_send(rec[i], 64, now);
			nsft_on_recv(rec[i], 64, now);
		}
		sleep_ms(period);
	}
	/* one unanswered request each, all at once */
	{
		uint64_t now = nsft_now_ns();

		for (unsigned i = 0; i < n; i++)
			nsft_on_send(rec[i], 64, now);
	}
	printf("stalled\n");
	fflush(stdout);
	sleep_ms(stall);
	for (end = nsft_now_ns() + (uint64_t)release * 1000000u; nsft_now_ns() < end;) {
		uint64_t now = nsft_now_ns();

		for (unsigned i = 0; i < n; i++) {
			nsft_on_recv(rec[i], 64, now);
			nsft_on_send(rec[i], 64, now);
			nsft_on_recv(rec[i], 64, now);
		}
		sleep_ms(period);
	}
	printf("released\n");
	fflush(stdout);
	nsft_close(&t, 1);
	free(rec);
	return 0;
}
