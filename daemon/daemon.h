/* daemon: the one context passed to every command handler. */
#ifndef NICSTALL_DAEMON_H
#define NICSTALL_DAEMON_H

#include <limits.h>
#include <stdint.h>

struct conf;
struct loop;
struct loop_timer;
struct port;
struct ctl;
struct stall;
struct forensics;
struct rules;

struct daemon {
	char conf_path[PATH_MAX];
	char sysfs_root[PATH_MAX];      /* effective: --sysfs-root or config */
	int sysfs_override;             /* --sysfs-root given */
	char socket_override[PATH_MAX]; /* --socket given */
	struct conf *conf;
	struct loop *loop;
	struct loop_timer *sampler;
	struct port **ports;
	unsigned nports;
	struct ctl *ctl;
	struct stall *stall;
	struct forensics *forensics;
	struct rules *rules;
	uint64_t start_mono_ns, start_real_ns;
	unsigned reloads, reload_failures;
	char last_reload_error[512];
};

/* Load the configuration file again; keep the running one when invalid.
 * Returns 0 or -1 with err set. */
int daemon_reload(struct daemon *d, char *err, size_t errlen);
/* Recorder capacity (samples) for the configuration. */
unsigned daemon_rec_capacity(const struct conf *c);
/* Load the rule files named by c; errors go to report. */
int daemon_load_rules(const struct conf *c, struct rules **out,
		      void (*report)(const char *msg, void *arg), void *arg);
struct port *daemon_port(const struct daemon *d, const char *name);

#endif
