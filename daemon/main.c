/* nicstalld: catch NIC receive-path stalls in the act. */
#include "daemon/cmd.h"
#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/daemon.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "daemon/port.h"
#include "daemon/stall.h"
#include "daemon/forensic.h"
#include "rules/rules.h"
#include "bundle/bundle.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
"usage: nicstalld [-c FILE] [--check-config] [--sysfs-root DIR]\n"
"                 [--socket PATH] [-d] [-V]\n"
"  -c, --config FILE   configuration (default %s)\n"
"      --check-config  report every configuration error and exit\n"
"      --sysfs-root DIR  read sysfs (RDMA counters) under DIR instead of /\n"
"      --socket PATH   control socket (default RUN_DIR/" CTL_SOCKET_NAME ")\n"
"  -d, --debug         log debug messages\n"
"  -V, --version       print the version and exit\n", CONF_DEFAULT_PATH);
}

static void report_stderr(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

struct errbuf {
	char *buf;
	size_t len;
	unsigned n;
};

static void report_log(const char *msg, void *arg)
{
	struct errbuf *eb = arg;

	log_errx("%s", msg);
	if (eb && eb->n++ == 0)
		util_strlcpy(eb->buf, msg, eb->len);
}

unsigned daemon_rec_capacity(const struct conf *c)
{
	uint64_t n = c->horizon_ns / c->interval_ns + 1;

	return n > 1000000 ? 1000000 : (unsigned)n;
}

/* Does dir hold at least one *.rules file? */
static int has_rules(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		found = n > 6 && !strcmp(e->d_name + n - 6, ".rules");
	}
	closedir(d);
	return found;
}

int daemon_load_rules(const struct conf *c, struct rules **out,
		      void (*report)(const char *msg, void *arg), void *arg)
{
	const char *dirs[2] = { c->rules_dir, c->rules_local_dir };

	/* No rule file at all (not installed) is not an error in a file:
	 * classification then says "unknown" and the bundles still hold
	 * every piece of evidence. */
	if (!has_rules(c->rules_dir) && !has_rules(c->rules_local_dir)) {
		log_warnx("no rule files in %s or %s: every verdict will be unknown",
			  c->rules_dir, c->rules_local_dir);
		*out = NULL;
		return 0;
	}
	return rules_load(dirs, 2, out, report, arg);
}

struct port *daemon_port(const struct daemon *d, const char *name)
{
	for (unsigned i = 0; i < d->nports; i++)
		if (!strcmp(d->ports[i]->conf.name, name))
			return d->ports[i];
	return NULL;
}

static void sample_cb(struct loop_timer *t, void *arg)
{
	struct daemon *d = arg;
	uint64_t mono = loop_mono_ns(), real = loop_real_ns();

	(void)t;
	for (unsigned i = 0; i < d->nports; i++) {
		struct port *p = d->ports[i];
		uint64_t t0 = loop_mono_ns();

		port_sample(p, mono, real, 1);
		p->sample_cost_ns = loop_mono_ns() - t0;
	}
}

static int same_port_conf(const struct port_conf *a, const struct port_conf *b)
{
	struct port_conf x = *a, y = *b;

	x.line = y.line = 0;
	return !memcmp(&x, &y, sizeof(x));
}

/* Make d's ports match c: keep unchanged ones (and their history). A port
 * that cannot be created (out of memory) is left out with an error. */
static void apply_ports(struct daemon *d, const struct conf *c, int keep_history)
{
	struct port **np = calloc(c->nports ? c->nports : 1, sizeof(*np));
	unsigned cap = daemon_rec_capacity(c), n = 0;

	if (!np) {
		log_errx("out of memory applying the port list: keeping the old one");
		return;
	}
	for (unsigned i = 0; i < c->nports; i++) {
		struct port *p = NULL;

		for (unsigned j = 0; keep_history && !p && j < d->nports; j++)
			if (d->ports[j] && same_port_conf(&d->ports[j]->conf, &c->ports[i])) {
				p = d->ports[j];
				d->ports[j] = NULL;
			}
		if (!p)
			p = port_new(&c->ports[i], d->sysfs_root, cap, d->loop);
		if (!p)
			log_errx("port %s: out of memory, not watched", c->ports[i].name);
		else
			np[n++] = p;
	}
	for (unsigned j = 0; j < d->nports; j++)
		if (d->ports[j]) {
			log_info("port %s: removed by reload", d->ports[j]->conf.name);
			port_free(d->ports[j]);
		}
	free(d->ports);
	d->ports = np;
	d->nports = n;
}

int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	struct errbuf eb = { err, errlen, 0 };
	struct conf *c;
	int keep;

	sd_notify(0, "RELOADING=1\nSTATUS=reloading configuration");
	log_info("reloading %s", d->conf_path);
	d->last_reload_error[0] = 0;
	if (conf_load(d->conf_path, &c, report_log, &eb)) {
		d->reload_failures++;
		snprintf(d->last_reload_error, sizeof(d->last_reload_error),
			 "%u error(s), first: %s", eb.n, err);
		snprintf(err, errlen, "%s", d->last_reload_error);
		log_errx("reload: %s: keeping the running configuration", d->conf_path);
		sd_notify(0, "READY=1\nSTATUS=reload failed, running the previous configuration");
		return -1;
	}
	if (strcmp(c->run_dir, d->conf->run_dir))
		log_warnx("reload: run_dir change to %s takes effect at restart", c->run_dir);
	keep = daemon_rec_capacity(c) == daemon_rec_capacity(d->conf);
	if (!keep)
		log_info("reload: recorder size changed: recorders start afresh");
	if (!d->sysfs_override)
		util_strlcpy(d->sysfs_root, c->sysfs_root, sizeof(d->sysfs_root));
	apply_ports(d, c, keep);
	{
		struct rules *nr = NULL;
		struct errbuf reb = { err, errlen, 0 };

		if (daemon_load_rules(c, &nr, report_log, &reb) == 0) {
			rules_free(d->rules);
			d->rules = nr;
		} else {
			snprintf(d->last_reload_error, sizeof(d->last_reload_error),
				 "rules: %u error(s), first: %s; keeping the running rules", reb.n, err);
			log_errx("reload: rules: keeping the running rules");
		}
	}
	if (c->interval_ns != d->conf->interval_ns)
		loop_timer_set(d->sampler, c->interval_ns, c->interval_ns);

	log_set_level(c->log_level > log_get_level() && log_get_level() == LOG_DEBUG ?
		      LOG_DEBUG : c->log_level);
	conf_free(d->conf);
	d->conf = c;
	stall_configure(d->stall);
	d->reloads++;
	sd_notify(0, "READY=1\nSTATUS=running");
	log_info("reloaded %s: %u port(s)", d->conf_path, c->nports);
	return 0;
}

static void on_stop(int signo, void *arg)
{
	struct daemon *d = arg;

	log_info("signal %d: stopping", signo);
	loop_stop(d->loop);
}

static void on_hup(int signo, void *arg)
{
	struct daemon *d = arg;
	char err[512];

	(void)signo;
	daemon_reload(d, err, sizeof(err));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "socket", required_argument, NULL, 's' },
		{ "debug", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon d = { 0 };
	int check = 0, debug = 0, ch, rc = 0;
	char sock[PATH_MAX + 32], err[512];

	util_strlcpy(d.conf_path, CONF_DEFAULT_PATH, sizeof(d.conf_path));
	while ((ch = getopt_long(argc, argv, "c:dVh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			util_strlcpy(d.conf_path, optarg, sizeof(d.conf_path));
			break;
		case 'C':
			check = 1;
			break;
		case 'S':
			if (optarg[0] != '/') {
				fprintf(stderr, "nicstalld: --sysfs-root: '%s' is not an absolute path\n",
					optarg);
				return 2;
			}
			util_strlcpy(d.sysfs_root, optarg, sizeof(d.sysfs_root));
			d.sysfs_override = 1;
			break;
		case 's':
			if (strlen(optarg) >= 108) {
				fprintf(stderr, "nicstalld: --socket: path longer than 107 bytes\n");
				return 2;
			}
			util_strlcpy(d.socket_override, optarg, sizeof(d.socket_override));
			break;
		case 'd':
			debug = 1;
			break;
		case 'V':
			printf("nicstalld %s\n", NICSTALL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nicstalld: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (check) {
		struct conf *c;
		int n = conf_load(d.conf_path, &c, report_stderr, NULL);

		if (n) {
			fprintf(stderr, "%s: %d error%s\n", d.conf_path, n, n == 1 ? "" : "s");
			return 1;
		}
		{
			struct rules *r = NULL;

			n = daemon_load_rules(c, &r, report_stderr, NULL);
			rules_free(r);
			if (n) {
				fprintf(stderr, "rules: %d error%s\n", n, n == 1 ? "" : "s");
				conf_free(c);
				return 1;
			}
		}
		conf_free(c);
		printf("configuration OK\n");
		return 0;
	}

	log_init("nicstalld", getenv("JOURNAL_STREAM") != NULL || !isatty(2));
	if (conf_load(d.conf_path, &d.conf, report_log, NULL)) {
		log_errx("%s: invalid configuration, not starting", d.conf_path);
		return 1;
	}
	log_set_level(debug ? LOG_DEBUG : d.conf->log_level);
	if (daemon_load_rules(d.conf, &d.rules, report_log, NULL)) {
		log_errx("invalid rules, not starting");
		return 1;
	}
	{
		int n = bundle_cleanup(d.conf->state_dir, err, sizeof(err));

		if (n > 0)
			log_warnx("%s: removed %d unfinished bundle(s) left by a crash",
				  d.conf->state_dir, n);
		else if (n < 0)
			log_warnx("%s: %s", d.conf->state_dir, err);
	}
	if (!d.sysfs_override)
		util_strlcpy(d.sysfs_root, d.conf->sysfs_root, sizeof(d.sysfs_root));
	signal(SIGPIPE, SIG_IGN);
	{
		/* one fd per engine flow table and per owner pidfd */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	d.loop = loop_new();
	if (!d.loop) {
		log_err("event loop");
		return 1;
	}
	d.start_mono_ns = loop_mono_ns();
	d.start_real_ns = loop_real_ns();
	if (loop_add_signal(d.loop, SIGTERM, on_stop, &d) < 0 ||
	    loop_add_signal(d.loop, SIGINT, on_stop, &d) < 0 ||
	    loop_add_signal(d.loop, SIGHUP, on_hup, &d) < 0) {
		log_err("signalfd");
		return 1;
	}
	if (d.socket_override[0])
		util_strlcpy(sock, d.socket_override, sizeof(sock));
	else {
		if (mkdir(d.conf->run_dir, 0755) < 0 && errno != EEXIST) {
			log_err("run_dir %s", d.conf->run_dir);
			return 1;
		}
		snprintf(sock, sizeof(sock), "%s/%s", d.conf->run_dir, CTL_SOCKET_NAME);
	}
	d.ctl = ctl_open(d.loop, sock, cmd_dispatch, &d, err, sizeof(err));
	if (!d.ctl) {
		log_errx("%s", err);
		return 1;
	}
	apply_ports(&d, d.conf, 0);
	d.sampler = loop_timer_new(d.loop, sample_cb, &d);
	if (!d.sampler || loop_timer_set(d.sampler, 1000000, d.conf->interval_ns) < 0) {
		log_err("sampling timer");
		return 1;
	}
	d.stall = stall_new(&d, err, sizeof(err));
	if (!d.stall) {
		log_errx("flow liveness: %s", err);
		return 1;
	}
	d.forensics = forensic_new(&d);
	if (!d.forensics) {
		log_errx("out of memory");
		return 1;
	}
	stall_set_hook(d.stall, forensic_on_incident, d.forensics);
	log_info("nicstalld %s: %u port(s), sampling every %.3f s, recorder %u samples, control %s",
		 NICSTALL_VERSION, d.nports, (double)d.conf->interval_ns / 1e9,
		 daemon_rec_capacity(d.conf), sock);
	sd_notify(0, "READY=1\nSTATUS=running");
	rc = loop_run(d.loop);
	sd_notify(0, "STOPPING=1");
	stall_free(d.stall);
	forensic_free(d.forensics);
	for (unsigned i = 0; i < d.nports; i++)
		port_free(d.ports[i]);
	free(d.ports);
	loop_timer_free(d.sampler);
	ctl_close(d.ctl);
	conf_free(d.conf);
	rules_free(d.rules);
	loop_free(d.loop);
	log_info("stopped");
	return rc < 0 ? 1 : 0;
}
