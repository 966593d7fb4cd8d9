/* hostconf: the [host] and [producer NAME] sections of nicstalld.conf(5),
 * into struct host_opts (collectors/counters/src_host.h). Each call returns 0, or -1
 * with err saying what is wrong (conf.c adds file:line). */
#ifndef NICSTALL_HOSTCONF_H
#define NICSTALL_HOSTCONF_H

#include <stddef.h>

#include "collectors/counters/src_host.h"

int hostconf_key(struct host_opts *o, const char *key, const char *val,
		 char *err, size_t errlen);
/* A new [producer NAME] section; *out is its record. */
int hostconf_producer_new(struct host_opts *o, const char *name, unsigned line,
			  struct host_producer **out, char *err, size_t errlen);
int hostconf_producer_key(struct host_producer *p, const char *key, const char *val,
			  char *err, size_t errlen);
/* After the file: each producer names its processes one way. */
int hostconf_producer_finish(const struct host_producer *p, char *err, size_t errlen);

#endif
