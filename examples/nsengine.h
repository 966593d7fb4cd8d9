/* nsengine: what the engine (nsengine.c) and its plumbing (nsengine_io.c)
 * share. */
#ifndef NSENGINE_H
#define NSENGINE_H

#include <stdint.h>
#include <sys/socket.h>

/* --metrics-fd: written by the engine's loop (mx_add), read by the
 * metrics thread */
struct nsengine_mx {
	uint64_t round_trips, reads, read_bytes, read_wait_ns, compute_ns;
};
extern struct nsengine_mx mx;
void mx_add(uint64_t *v, uint64_t d);
/* The metrics thread: arg is the listening socket (intptr_t). */
void *metrics_thread(void *arg);

/* ADDR:PORT or [ADDR6]:PORT, numeric: 0, or -1 (said on stderr). */
int parse_addr(const char *s, int udp, struct sockaddr_storage *ss, socklen_t *len);
const char *fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t len);

/* SESSION:N (--stop-after, --mute-after): 0, or -1. */
int rule(const char *arg, unsigned *sess, uint64_t *n);
/* The usage on stderr; exits 2. */
void usage(void) __attribute__((noreturn));

#endif
