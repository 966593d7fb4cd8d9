/* hostconf: [host] and [producer NAME] (see hostconf.h). */
#include "daemon/hostconf.h"
#include "lib/util.h"

#include <string.h>

static int word_ok(const char *w, size_t max)
{
	size_t n = strlen(w);

	if (!n || n > max)
		return 0;
	for (const char *q = w; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return 0;
	return 1;
}

int hostconf_key(struct host_opts *o, const char *key, const char *val,
		 char *err, size_t errlen)
{
	if (!strcmp(key, "resources")) {
		int on;
		char e[128];

		if (util_parse_bool(val, &on, e, sizeof(e)) < 0) {
			util_errf(err, errlen, "resources: %s", e);
			return -1;
		}
		o->off = !on;
	} else if (!strcmp(key, "proc_root")) {
		if (val[0] && val[0] != '/') {
			util_errf(err, errlen, "proc_root: '%s' is not an absolute path", val);
			return -1;
		}
		if (strlen(val) >= sizeof(o->proc_root)) {
			util_errf(err, errlen, "proc_root: longer than %zu characters",
				  sizeof(o->proc_root) - 1);
			return -1;
		}
		util_strlcpy(o->proc_root, val, sizeof(o->proc_root));
	} else if (!strcmp(key, "disks")) {
		int n = util_split_list(key, val, o->disks[0], sizeof(o->disks[0]),
					HOST_MAX_PATTERNS, err, errlen);

		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++)
			if (!word_ok(o->disks[i], 63) || strchr(o->disks[i], '/')) {
				util_errf(err, errlen, "disks: '%s' is not a device name pattern "
					  "(1-63 characters, no '/')", o->disks[i]);
				return -1;
			}
		o->ndisks = (unsigned)n;
	} else {
		util_errf(err, errlen, "unknown key '%s' in [host] (resources, disks, proc_root)",
			  key);
		return -1;
	}
	return 0;
}

int hostconf_producer_new(struct host_opts *o, const char *name, unsigned line,
			  struct host_producer **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!util_valid_name(name, sizeof(o->prod[0].name) - 1)) {
		util_errf(err, errlen, "producer name '%s' must be 1-31 characters of "
			  "[A-Za-z0-9_.-]", name);
		return -1;
	}
	for (unsigned i = 0; i < o->nprod; i++)
		if (!strcmp(o->prod[i].name, name)) {
			util_errf(err, errlen, "producer '%s' is already defined at line %u",
				  name, o->prod[i].line);
			return -1;
		}
	if (o->nprod >= HOST_MAX_PRODUCERS) {
		util_errf(err, errlen, "too many producers (at most %d)", HOST_MAX_PRODUCERS);
		return -1;
	}
	*out = &o->prod[o->nprod++];
	memset(*out, 0, sizeof(**out));
	util_strlcpy((*out)->name, name, sizeof((*out)->name));
	(*out)->line = line;
	return 0;
}

int hostconf_producer_key(struct host_producer *p, const char *key, const char *val,
			  char *err, size_t errlen)
{
	int a = app_conf_key(&p->app, key, val, err, errlen);

	if (a)
		return a < 0 ? -1 : 0;
	if (!strcmp(key, "comm")) {
		/* TASK_COMM_LEN is 16 with the NUL: a longer name never matches */
		if (!*val || strlen(val) > 15 || strchr(val, '/') || strchr(val, '\n')) {
			util_errf(err, errlen, "comm: '%s' is not a process name (1-15 "
				  "characters, as /proc/PID/comm shows it)", val);
			return -1;
		}
		util_strlcpy(p->comm, val, sizeof(p->comm));
	} else if (!strcmp(key, "cgroup")) {
		if (val[0] != '/' || strstr(val, "/../") || strlen(val) >= sizeof(p->cgroup)) {
			util_errf(err, errlen, "cgroup: '%s' is not an absolute cgroup directory "
				  "(e.g. /sys/fs/cgroup/blkio/job)", val);
			return -1;
		}
		util_strlcpy(p->cgroup, val, sizeof(p->cgroup));
	} else {
		util_errf(err, errlen, "unknown key '%s' in [producer %s] (comm, cgroup, "
			  "app_metrics and its app_metrics_* keys)", key,
			  p->name);
		return -1;
	}
	return 0;
}

int hostconf_producer_finish(const struct host_producer *p, char *err, size_t errlen)
{
	char e[160];

	if (!p->comm[0] == !p->cgroup[0]) {
		util_errf(err, errlen, "producer '%s': give one of comm = NAME or cgroup = PATH",
			  p->name);
		return -1;
	}
	if (app_conf_finish(&p->app, e, sizeof(e)) < 0) {
		util_errf(err, errlen, "producer '%s': %s", p->name, e);
		return -1;
	}
	return 0;
}
