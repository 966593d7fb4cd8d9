/* sockread: the BPF socket reader's loader (userspace API).
 *
 * Reads, for up to SR_MAX watched TCP sockets of one namespace, the fields
 * sock_diag's tcp_info gives, with one BPF program run per SR_CHUNK sockets
 * (BPF_PROG_TEST_RUN inside the namespace) and no message per socket. Needs
 * a kernel with BTF, bpf_skc_lookup_tcp() and bpf_skc_to_tcp_sock() (5.9);
 * sockread_open() says why not otherwise, and the caller asks sock_diag. */
#ifndef NICSTALL_SOCKREAD_API_H
#define NICSTALL_SOCKREAD_API_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/flows/sockread.h"

struct sockread;

/* A reader for namespace nsfd (-1: ours; dup'ed). NULL + err. Every reader
 * of the process runs one program, loaded by the first open and unloaded
 * by the last close (a load parses the kernel's BTF: tens of ms of CPU). */
struct sockread *sockread_open(int nsfd, char *err, size_t errlen);
void sockread_close(struct sockread *r);

/* This reader's key table (SR_MAX entries): fill [0, n) before
 * sockread_run. */
struct sr_key *sockread_keys(struct sockread *r);

/* Read sockets [0, n) now (n <= SR_MAX). 0, or -errno with err filled.
 * mono_ns: CLOCK_MONOTONIC of the read. */
int sockread_run(struct sockread *r, unsigned n, uint64_t *mono_ns, char *err, size_t errlen);
/* What this reader's last run read of socket i (another reader's run does
 * not change it). */
const struct sr_val *sockread_val(const struct sockread *r, unsigned i);
/* The kernel's ID of the program the reader runs (0: unknown). */
uint32_t sockread_prog_id(const struct sockread *r);

/* Milliseconds between jiffies value then and the run's (as tcp_get_info()'s
 * jiffies_to_msecs(now - then)); -1 while the kernel's HZ is not known yet
 * (measured over the first second when the configuration does not say). */
int64_t sockread_ago_ms(const struct sockread *r, uint32_t now_jiffies, uint32_t then);
/* A span of jiffies in microseconds (jiffies_to_usecs()); 0 while HZ is
 * not known. */
uint32_t sockread_jiffies_us(const struct sockread *r, uint32_t j);

#endif
