/* src_shared: one counter source read once for every port that names the
 * same one. The host's resources ([host], the producers) and a set of
 * application endpoints are the host's, not a port's: with a share per
 * port they would be read (and scraped) once per port each sample.
 *
 * A share is keyed by bytes that hold everything its open depends on
 * (the options, the sysfs root), compared whole. The first port to open a key opens the
 * source; the others share it (counted); the last to close closes it.
 * Within one base-rate tick (src_shared_tick(), set by the sampler around
 * its sweep of every port) a share is read once and each port gets that
 * reading; outside a tick (an investigation's fast window, one port) every
 * read is the source's own. A sharer's s->ops names the source ("host",
 * "app"). Each sharer may give its own set of pids (src_shared_watch); the
 * source is given their union, and with a keep function (src_shared_keep)
 * each sharer's reading holds only the counters that are its own (the
 * host source's owner.PID.* of its own flows' owners) beside those of
 * every sharer. Single-threaded, like the loop. */
#ifndef NICSTALL_SRC_SHARED_H
#define NICSTALL_SRC_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

#define SHARED_MAX_SHARERS 64
#define SHARED_MAX_PIDS 64

typedef int (*src_open_fn)(struct src *inner, void *arg);
typedef void (*src_watch_fn)(struct src *inner, const int *pids, unsigned n);
/* Is counter name a sharer's with pids? (1 for one that is every
 * sharer's.) */
typedef int (*src_keep_fn)(const char *name, const int *pids, unsigned n);

/* Open s as a share of key: the first opener opens the share's source
 * with open_fn(inner, arg); a failed open leaves no share (the next opener
 * tries again) and its error in s->err. 0 or -errno. Each sharer's read
 * gives it its own copy of the values. */
int src_shared_open(struct src *s, const void *key, size_t keylen, src_open_fn open_fn,
		    void *arg);
/* The base-rate tick being swept (0: none). */
void src_shared_tick(uint64_t tick);
/* The source itself (its own JSON and calls), NULL when s is no share. */
struct src *src_shared_inner(struct src *s);
/* How many ports share s's source. */
unsigned src_shared_refs(struct src *s);
/* This sharer's pids (at most SHARED_MAX_PIDS kept); watch gets the
 * union of every sharer's (at most SHARED_MAX_PIDS: beyond, said once in
 * the log). */
void src_shared_watch(struct src *s, const int *pids, unsigned n, src_watch_fn watch);
/* From the next read on, each sharer's reading keeps only what keep says
 * is its own (by its own pids). */
void src_shared_keep(struct src *s, src_keep_fn keep);

#endif
