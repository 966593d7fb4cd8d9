/* fetest: see fetest.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetest.h"
#include "lib/log.h"

struct flow_obs fetest_obs[FETEST_MAXOBS];
int fetest_nobs;

void fetest_collect(const struct flow_obs *o, void *arg)
{
	(void)arg;
	if (fetest_nobs < FETEST_MAXOBS)
		fetest_obs[fetest_nobs] = *o;
	fetest_nobs++;
}

int fetest_poll_all(struct flow_engine *fe)
{
	int n;

	fetest_nobs = 0;
	n = flow_engine_poll(fe, fetest_collect, NULL);
	assert_int_equal(n, fetest_nobs);
	return n;
}

const struct flow_obs *fetest_find_session(uint64_t id)
{
	int i;

	for (i = 0; i < fetest_nobs && i < FETEST_MAXOBS; i++)
		if (fetest_obs[i].session == id)
			return &fetest_obs[i];
	return NULL;
}

void fetest_list_cb(const char *path, const char *engine, int pid, unsigned records,
		    const char *problem, const char *pid_note, void *arg)
{
	struct listing *l = arg;

	if (problem)
		l->problems++;
	if (l->path && strcmp(path, l->path) == 0) {
		l->found = 1;
		l->records = records;
		l->pid = pid;
		snprintf(l->engine, sizeof(l->engine), "%s", engine);
		snprintf(l->problem, sizeof(l->problem), "%s", problem ? problem : "");
		snprintf(l->pid_note, sizeof(l->pid_note), "%s", pid_note ? pid_note : "");
	}
}

struct listing fetest_listing_of(struct flow_engine *fe, const char *path)
{
	struct listing l;

	memset(&l, 0, sizeof(l));
	l.path = path;
	flow_engine_tables(fe, fetest_list_cb, &l);
	return l;
}

/* Count lines of the captured log that contain both strings. */
int fetest_log_count(const struct fx *f, const char *a, const char *b)
{
	char line[4096];
	FILE *fp;
	int n = 0;

	fflush(stderr);
	fp = fopen(f->logpath, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, a) && (!b || strstr(line, b)))
			n++;
	fclose(fp);
	return n;
}

static int fetest_rm_cb(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(p);
}

int fetest_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int fd;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_flow_engine.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->logpath, sizeof(f->logpath), "%s.log", f->dir);
	fflush(stderr);
	f->saved_stderr = dup(2);
	fd = open(f->logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || f->saved_stderr < 0)
		return -1;
	dup2(fd, 2);
	close(fd);
	log_init("test", 0);
	*state = f;
	return 0;
}

int fetest_teardown(void **state)
{
	struct fx *f = *state;

	fflush(stderr);
	dup2(f->saved_stderr, 2);
	close(f->saved_stderr);
	nftw(f->dir, fetest_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	unlink(f->logpath);
	free(f);
	return 0;
}

struct flow_engine *fetest_open(const struct fx *f)
{
	char err[256];
	struct flow_engine *fe = flow_engine_open(f->dir, err, sizeof(err));

	if (!fe)
		fail_msg("flow_engine_open: %s", err);
	return fe;
}

void fetest_sa4(struct sockaddr_in *s, const char *ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &s->sin_addr), 1);
}

void fetest_sa6(struct sockaddr_in6 *s, const char *ip, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, ip, &s->sin6_addr), 1);
}

struct nsft_record *fetest_make_one(const struct fx *f, struct nsft_table *t,
				    const char *engine, uint32_t cap)
{
	/* storage-sized: nsft_add may read a sockaddr_in6 worth */
	struct sockaddr_storage l, r;
	struct nsft_record *rec;

	assert_int_equal(nsft_create(t, f->dir, engine, cap), 0);
	fetest_sa4((struct sockaddr_in *)&l, "10.0.0.1", 5000);
	fetest_sa4((struct sockaddr_in *)&r, "10.0.0.2", 6000);
	rec = nsft_add(t, 7, IPPROTO_UDP, (struct sockaddr *)&l, (struct sockaddr *)&r);
	assert_non_null(rec);
	nsft_on_send(rec, 100, 1000);
	return rec;
}
