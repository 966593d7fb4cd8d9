/* bgwrite: a directory's files written by a thread, in order. See bgwrite.h. */
#include "lib/bgwrite.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/util.h"

#define BGW_NAME_MAX 200
/* What may wait for the disk: a state directory on a disk that stalls (the
 * producer-stall-io case) while clients begin and end runs must not grow
 * the daemon without bound. Beyond either, a file is dropped and said. */
#define BGW_MAX_JOBS 1024
#define BGW_MAX_BYTES (32u << 20)
/* How long bgw_free waits for what is queued: a disk that does not answer
 * must not hold the daemon's stop (systemd's stop timeout would kill it,
 * and a watchdog restart would wait the same). */
#define BGW_STOP_WAIT_MS 5000

struct wjob {
	struct wjob *next;
	char name[BGW_NAME_MAX];
	char *data;                     /* NULL: unlink name */
	size_t len;
	int sum;                        /* also name.sha256 */
};

struct bgwrite {
	pthread_t th;
	int th_ok, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wjob *head, *tail;
	unsigned qjobs, max_jobs;       /* queued now, and the bound */
	size_t qbytes, max_bytes;
	unsigned long dropped;
	int paused;                     /* bgw_pause (tests) */
	unsigned stop_wait_ms;
	int exited;                     /* the writer has left its loop */
	int orphan;                     /* bgw_free gave up: the writer frees */
	int dirfd;
	char dir[PATH_MAX];
};

static int write_sum(int dfd, const char *name, const char *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	char line[64 + BGW_NAME_MAX + 8], sname[BGW_NAME_MAX + 8];
	int k;

	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) {
		errno = EIO;
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		snprintf(line + 2 * i, 3, "%02x", md[i]);
	k = snprintf(line + 64, sizeof(line) - 64, "  %s\n", name);
	snprintf(sname, sizeof(sname), "%s.sha256", name);
	return fsu_replace_at(dfd, sname, line, (size_t)(64 + k), 0640);
}

/* Tests: a disk that does not answer, for every writer (bgw_test_stick). */
static pthread_mutex_t stick_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stick_cv = PTHREAD_COND_INITIALIZER;
static int stuck;

static void do_job(struct bgwrite *w, const struct wjob *j)
{
	pthread_mutex_lock(&stick_mu);
	while (stuck)
		pthread_cond_wait(&stick_cv, &stick_mu);
	pthread_mutex_unlock(&stick_mu);
	if (w->dirfd < 0)
		return;
	if (!j->data) {
		if (unlinkat(w->dirfd, j->name, 0) < 0 && errno != ENOENT)
			log_warnx("%s/%s: cannot remove: %s", w->dir, j->name, strerror(errno));
	} else if (fsu_replace_at(w->dirfd, j->name, j->data, j->len, 0640) < 0 ||
		   (j->sum && write_sum(w->dirfd, j->name, j->data, j->len) < 0)) {
		log_warnx("%s/%s: %s", w->dir, j->name, strerror(errno));
	}
}

static void destroy(struct bgwrite *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w);
}

static void *writer(void *arg)
{
	struct bgwrite *w = arg;
	int orphan;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct wjob *j = w->head;

		if (!j || (w->paused && !w->stop)) {
			if (!j && w->stop)
				break;
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		w->qjobs--;
		w->qbytes -= j->len;
		pthread_mutex_unlock(&w->mu);
		do_job(w, j);
		free(j->data);
		free(j);
		pthread_mutex_lock(&w->mu);
	}
	w->exited = 1;
	orphan = w->orphan;
	pthread_mutex_unlock(&w->mu);
	if (orphan) {
		/* bgw_free gave up on the disk; it answered at last */
		log_info("%s: the files queued at the stop are written", w->dir);
		destroy(w);
	}
	return NULL;
}

struct bgwrite *bgw_new(int dirfd, const char *dir)
{
	struct bgwrite *w = calloc(1, sizeof(*w));

	if (!w) {
		if (dirfd >= 0)
			close(dirfd);
		return NULL;
	}
	w->dirfd = dirfd;
	w->max_jobs = BGW_MAX_JOBS;
	w->max_bytes = BGW_MAX_BYTES;
	w->stop_wait_ms = BGW_STOP_WAIT_MS;
	util_strlcpy(w->dir, dir, sizeof(w->dir));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->th_ok = pthread_create(&w->th, NULL, writer, w) == 0;
	if (!w->th_ok)
		log_warnx("%s: no writer thread; its files are written by the event loop", dir);
	return w;
}

void bgw_free(struct bgwrite *w)
{
	struct timespec dl;

	if (!w)
		return;
	if (w->th_ok) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += w->stop_wait_ms / 1000;
		dl.tv_nsec += (long)(w->stop_wait_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(w->th, NULL, &dl) != 0) {
			unsigned q;

			pthread_mutex_lock(&w->mu);
			if (!w->exited) {
				/* the disk does not answer: the writer carries
				 * on alone and frees all when it is done */
				q = w->qjobs;
				w->orphan = 1;
				pthread_mutex_unlock(&w->mu);
				pthread_detach(w->th);
				log_warnx("%s: the disk did not answer in %u ms: %u file(s) still "
					  "queued and one being written are left to the writer, "
					  "which may not finish before the process ends", w->dir,
					  w->stop_wait_ms, q);
				return;
			}
			pthread_mutex_unlock(&w->mu);
			pthread_join(w->th, NULL);
		}
	}
	destroy(w);
}

int bgw_dirfd(const struct bgwrite *w)
{
	return w ? w->dirfd : -1;
}

void bgw_put(struct bgwrite *w, const char *name, char *data, size_t len, int sum)
{
	struct wjob *j = calloc(1, sizeof(*j));

	if (!j || strlen(name) >= sizeof(j->name)) {
		log_warnx("%s/%s not written: %s", w->dir, name,
			  j ? "name too long" : "out of memory");
		free(data);
		free(j);
		return;
	}
	util_strlcpy(j->name, name, sizeof(j->name));
	j->data = data;
	j->len = len;
	j->sum = sum;
	if (!w->th_ok) {
		do_job(w, j);
		free(data);
		free(j);
		return;
	}
	pthread_mutex_lock(&w->mu);
	if (w->qjobs >= w->max_jobs || (data && w->qbytes + len > w->max_bytes)) {
		unsigned long d = ++w->dropped;
		unsigned qj = w->qjobs;
		size_t qb = w->qbytes;

		pthread_mutex_unlock(&w->mu);
		/* the first, then at each power of two */
		if (!(d & (d - 1)))
			log_warnx("%s/%s not written: %u files (%zu bytes) already wait for "
				  "the disk; %lu dropped so far", w->dir, name, qj, qb, d);
		free(data);
		free(j);
		return;
	}
	w->qjobs++;
	w->qbytes += len;
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

unsigned long bgw_dropped(struct bgwrite *w)
{
	unsigned long d;

	pthread_mutex_lock(&w->mu);
	d = w->dropped;
	pthread_mutex_unlock(&w->mu);
	return d;
}

void bgw_test_stick(int on)
{
	pthread_mutex_lock(&stick_mu);
	stuck = on;
	pthread_cond_broadcast(&stick_cv);
	pthread_mutex_unlock(&stick_mu);
}

void bgw_test_stop_wait(struct bgwrite *w, unsigned ms)
{
	w->stop_wait_ms = ms;
}

void bgw_test_hold(struct bgwrite *w, int hold, unsigned max_jobs, size_t max_bytes)
{
	pthread_mutex_lock(&w->mu);
	w->paused = hold;
	if (max_jobs)
		w->max_jobs = max_jobs;
	if (max_bytes)
		w->max_bytes = max_bytes;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void bgw_put_json(struct bgwrite *w, const char *name, struct json_object *o,
		  const char *first)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED);
	size_t fl = first ? strlen(first) + 1 : 0, n = strlen(s);
	char *buf = malloc(fl + n + 2);

	if (!buf) {
		log_warnx("%s/%s not written: out of memory", w->dir, name);
		return;
	}
	if (first) {
		memcpy(buf, first, fl - 1);
		buf[fl - 1] = '\n';
	}
	memcpy(buf + fl, s, n);
	buf[fl + n] = '\n';
	bgw_put(w, name, buf, fl + n + 1, first != NULL);
}
