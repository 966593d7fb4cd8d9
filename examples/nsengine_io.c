/* nsengine's plumbing (examples/nsengine.c is the engine): its metrics
 * thread (--metrics-fd), its addresses and its command line's words. Like
 * the engine, it needs only libc.
 *
 * Its own metrics: --metrics-fd FD is a listening TCP socket it inherits
 * (as systemd's socket activation passes one; the socket may live in
 * another network namespace than the engine's sessions): a thread of its
 * own answers every HTTP GET on it with the Prometheus text format, so a
 * scrape is answered while the engine's loop is blocked on its disk, as an
 * inference server's metrics thread is. The counters, over all sessions:
 *   nsengine_round_trips_total              requests answered
 *   nsengine_reads_total, nsengine_read_bytes_total   --read-file reads
 *   nsengine_read_wait_nanoseconds_total    time spent in those reads
 *   nsengine_compute_nanoseconds_total      --spin-us CPU time spent
 */
#include "nsengine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* --metrics-fd: written by the engine's loop, read by the metrics thread */
struct nsengine_mx mx;

void mx_add(uint64_t *v, uint64_t d)
{
	__atomic_fetch_add(v, d, __ATOMIC_RELAXED);
}

/* The metrics thread: one connection at a time, a bounded request read
 * (1 s, 4 KiB), the page, close. */
void *metrics_thread(void *arg)
{
	static const struct { const char *name, *help; size_t off; } m[] = {
		{ "nsengine_round_trips_total", "Requests answered, all sessions.",
		  offsetof(__typeof__(mx), round_trips) },
		{ "nsengine_reads_total", "Reads of --read-file.", offsetof(__typeof__(mx), reads) },
		{ "nsengine_read_bytes_total", "Bytes read from --read-file.",
		  offsetof(__typeof__(mx), read_bytes) },
		{ "nsengine_read_wait_nanoseconds_total", "Time spent in reads of --read-file.",
		  offsetof(__typeof__(mx), read_wait_ns) },
		{ "nsengine_compute_nanoseconds_total", "CPU time spent in --spin-us compute.",
		  offsetof(__typeof__(mx), compute_ns) },
	};
	int lfd = (int)(intptr_t)arg;

	for (;;) {
		struct timeval tv = { 1, 0 };
		char req[4096], body[2048], head[160];
		size_t bl = 0, rl = 0;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), hl;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("nsengine: metrics accept");
			return NULL;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		/* the request up to its blank line, or what fits */
		while (rl < sizeof(req) - 1) {
			ssize_t n = read(fd, req + rl, sizeof(req) - 1 - rl);

			if (n <= 0)
				break;
			rl += (size_t)n;
			req[rl] = 0;
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			bl += (size_t)snprintf(body + bl, sizeof(body) - bl,
					       "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n",
					       m[i].name, m[i].help, m[i].name, m[i].name,
					       __atomic_load_n((uint64_t *)((char *)&mx + m[i].off),
							       __ATOMIC_RELAXED));
		hl = snprintf(head, sizeof(head),
			      "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
			      "Content-Length: %zu\r\nConnection: close\r\n\r\n", bl);
		/* MSG_NOSIGNAL: a scraper that hung up is no reason to die */
		if (rl >= 4 && !memcmp(req, "GET ", 4) &&
		    send(fd, head, (size_t)hl, MSG_NOSIGNAL) == hl)
			(void)!send(fd, body, bl, MSG_NOSIGNAL);
		close(fd);
	}
}

int parse_addr(const char *s, int udp, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256], *port;
	struct addrinfo hints, *ai;
	int rc;

	if (strlen(s) >= sizeof(host))
		return -1;
	if (s[0] == '[') {
		snprintf(host, sizeof(host), "%s", s + 1);
		port = strchr(host, ']');
		if (!port || port[1] != ':')
			return -1;
		*port = '\0';
		port += 2;
	} else {
		snprintf(host, sizeof(host), "%s", s);
		port = strrchr(host, ':');
		if (!port)
			return -1;
		*port++ = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = udp ? SOCK_DGRAM : SOCK_STREAM;
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "nsengine: address %s: %s\n", s, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

const char *fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		port = ntohs(a->sin_port);
		snprintf(buf, len, "%s:%u", ip, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		port = ntohs(a->sin6_port);
		snprintf(buf, len, "[%s]:%u", ip, port);
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

int rule(const char *arg, unsigned *sess, uint64_t *n)
{
	char *end;
	unsigned long s = strtoul(arg, &end, 10);

	if (*end != ':')
		return -1;
	*n = strtoull(end + 1, &end, 10);
	*sess = (unsigned)s;
	return *end ? -1 : 0;
}

void usage(void)
{
	fprintf(stderr,
		"usage: nsengine server --listen ADDR:PORT [--proto tcp|udp] [--table-dir DIR] [--await]\n"
		"                       [--name NAME] [--capacity N]\n"
		"       nsengine client --connect ADDR:PORT --sessions N [--proto tcp|udp]\n"
		"                       [--size BYTES] [--interval-us N] [--count N] [--duration S]\n"
		"                       [--table-dir DIR] [--name NAME]\n"
		"                       [--stop-after SESSION:N] [--mute-after SESSION:N]\n"
		"                       [--read-file PATH --read-kib N] [--spin-us N]\n"
		"                       [--step-file PATH --step-rank I --step-ranks N [--step-slack K]]\n"
		"                       [--metrics-fd FD] [--latency]\n");
	exit(2);
}
