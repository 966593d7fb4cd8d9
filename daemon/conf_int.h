/* conf_int.h: the configuration parser's state, shared by conf.c (the
 * file, its sections, the defaults and what they resolve to) and
 * conf_keys.c (the keys of [daemon] and [port] and their values), private
 * to them: conf.c calls conf_keys.c, never the reverse. */
#ifndef NICSTALL_CONF_INT_H
#define NICSTALL_CONF_INT_H

#include "daemon/conf.h"

struct parser {
	const char *path;
	unsigned line;
	int nerr;
	conf_report_fn report;
	void *arg;
	struct conf *c;
	struct port_conf *port;     /* current [port] section or NULL */
	struct peer_conf *peer;     /* current [peer] section or NULL */
	int in_daemon;
	int in_host;                /* [host] */
	struct host_producer *prod; /* current [producer] section or NULL */
	int bad_section;            /* keys of a rejected section are skipped */
};

/* An error in the file: path:line: message, to the report callback. */
void conf_perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning for an address filter's value that matches nothing. */
void conf_warn_ipfilter(struct parser *p, const char *key, const char *addr);
/* One key = value of [daemon], and of the current [port]. */
void conf_daemon_key(struct parser *p, const char *key, const char *val);
void conf_port_key(struct parser *p, const char *key, const char *val);

#endif
