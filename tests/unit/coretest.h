/* coretest: helpers for the unit tests of the daemon's core modules
 * (detector, incidents, facts, forensic phases, ports registry). */
#ifndef NICSTALL_CORETEST_H
#define NICSTALL_CORETEST_H

#include <stdint.h>

#include "collectors/flows/flows.h"

struct conf;
struct loop;

/* A configuration parsed from text by the real parser (fails the test on
 * an error); free with conf_free. */
struct conf *coretest_conf(const char *text);
/* A temporary directory (removed by coretest_rmdir) or file path. */
char *coretest_tmpdir(void);
void coretest_rmdir(char *dir);
/* Write text to dir/name; returns the path (static buffer per call site). */
void coretest_write(const char *dir, const char *name, const char *text);
/* An engine-table observation of session sess on 10.0.0.1:port ->
 * 10.0.0.2:11111 with tx requests sent and rx replies received. */
struct flow_obs coretest_engine_obs(uint16_t sport, uint64_t sess, uint64_t tx, uint64_t rx,
				    int pid);
/* Run loop l for ms milliseconds (a one-shot timer stops it): what its
 * fds and timers have queued is handled. */
void coretest_run_for(struct loop *l, unsigned ms);
#define MS 1000000ull
#define SEC 1000000000ull

#endif
