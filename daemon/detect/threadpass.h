/* threadpass: engine threads as a liveness input of the stall detector.
 *
 * The processes that own the flows the detector sees (flow_obs.pid, any
 * source) are watched in the kernel (collectors/threads/threadwatch_api.h). At the
 * end of each detector poll, each process with flows waiting since at
 * least a poll has its threads judged (collectors/threads/threadjudge.h) over the
 * least threshold of the ports of those flows; a thread asleep for most of
 * it (thread_sleep_share), or in one sleep longer than it, stalls those
 * waiting flows at once: within one poll of the threshold, however coarse
 * the flow source's own clock. A process whose flows do not wait is never
 * judged: an engine that sleeps in epoll_wait between requests is healthy. */
#ifndef NICSTALL_THREADPASS_H
#define NICSTALL_THREADPASS_H

#include <stdint.h>

struct conf;
struct sflow;
struct json_object;
struct tpass;

struct tpass *tpass_new(void);
void tpass_free(struct tpass *tp);
/* Follow the configuration: load or unload the watch (thread_watch). */
void tpass_configure(struct tpass *tp, const struct conf *c);
/* A flow as one poll left it (after flow_update), th its port's threshold. */
void tpass_observe(struct tpass *tp, struct sflow *f, uint64_t now, uint64_t th);
/* The end of a poll at now (before any flow is freed): judge, and call
 * stall_fn for each waiting flow whose process has a blocked thread. */
typedef void (*tpass_stall_fn)(struct sflow *f, void *arg);
void tpass_run(struct tpass *tp, uint64_t now, uint64_t poll_ns, tpass_stall_fn stall_fn,
	       void *arg);
/* Status: on or why not, processes and threads watched. */
void tpass_status(const struct tpass *tp, struct json_object *out);
/* The processes with a thread stall called now (their flows still wait),
 * at most max into pids; how many. */
unsigned tpass_called(const struct tpass *tp, int32_t *pids, unsigned max);
/* Evidence of pid's threads over [since_ns, now] (NULL: not watched). */
struct json_object *tpass_evidence(struct tpass *tp, int32_t pid, uint64_t since_ns);

#endif
