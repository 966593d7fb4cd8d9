/* fetest: fixtures shared by the flow_engine unit tests: a mkdtemp table
 * directory with stderr (the log) captured, observations collected by
 * poll, the listing of one table, small address helpers. */
#ifndef NICSTALL_FETEST_H
#define NICSTALL_FETEST_H

#include <netinet/in.h>
#include <stdint.h>

#include <nicstall/flowtab.h>

#include "collectors/flows/flow_engine.h"

struct fx {
	char dir[64];
	char logpath[96];
	int saved_stderr;
};

#define FETEST_MAXOBS 4096
extern struct flow_obs fetest_obs[FETEST_MAXOBS];
extern int fetest_nobs;

/* flow_emit_fn into fetest_obs (arg unused). */
void fetest_collect(const struct flow_obs *o, void *arg);
/* One poll into fetest_obs; asserts its result is the number emitted. */
int fetest_poll_all(struct flow_engine *fe);
const struct flow_obs *fetest_find_session(uint64_t id);

/* What the listing says of one path. */
struct listing {
	const char *path;
	char problem[256];
	int found, problems;
	unsigned records;
	int pid;
	char engine[32];
	char pid_note[160];
};
struct listing fetest_listing_of(struct flow_engine *fe, const char *path);
/* flow_engine_table_fn filling a struct listing (arg). */
void fetest_list_cb(const char *path, const char *engine, int pid, unsigned records,
		    const char *problem, const char *pid_note, void *arg);

/* Lines of the captured log that contain a (and b, when not NULL). */
int fetest_log_count(const struct fx *f, const char *a, const char *b);

/* cmocka setup/teardown: *state is a struct fx. */
int fetest_setup(void **state);
int fetest_teardown(void **state);
struct flow_engine *fetest_open(const struct fx *f);

void fetest_sa4(struct sockaddr_in *s, const char *ip, uint16_t port);
void fetest_sa6(struct sockaddr_in6 *s, const char *ip, uint16_t port);
/* A table with one IPv4 session, id 7, one send of 100 bytes. */
struct nsft_record *fetest_make_one(const struct fx *f, struct nsft_table *t,
				    const char *engine, uint32_t cap);

#endif
