/* nicstalld: catch NIC receive-path stalls in the act.
 *
 * main: the daemon's one context (the configuration, the loop and every
 * module's handle), brought up in dependency order and taken down in
 * reverse; reload; signals. */
#include "bundle/bundle.h"
#include "daemon/cmd.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/ctl.h"
#include "daemon/dirs.h"
#include "daemon/forensic/forensic.h"
#include "daemon/peers/peers.h"
#include "daemon/metrics.h"
#include "daemon/ports.h"
#include "daemon/runs.h"
#include "daemon/sampler.h"
#include "daemon/service.h"
#include "daemon/detect/srcrun.h"
#include "daemon/detect/stall.h"
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "probes/reprogram.h"
#include "rules/rules.h"

#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct daemon {
	char conf_path[PATH_MAX];
	char sysfs_root[PATH_MAX];      /* effective: --sysfs-root or config */
	int sysfs_override;             /* --sysfs-root given */
	char socket_override[PATH_MAX]; /* --socket given */
	char sock_path[PATH_MAX + 32];  /* the control socket in use */
	struct conf *conf;
	struct rules *rules;
	struct loop *loop;
	struct ports *ports;
	struct sampler *sampler;
	struct stall *stall;
	struct forensics *forensics;
	struct peers *peers;
	struct ctl *ctl;
	struct service *svc;
	struct metrics *metrics;
	struct runs *runs;
	int debug;                      /* -d: debug log and the debug commands */
	struct cmd_env cmd;
	uint64_t start_mono_ns, start_real_ns;
	unsigned reloads, reload_failures;
	char last_reload_error[512];
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: nicstalld [-c FILE] [--check-config] [--sysfs-root DIR]\n"
"                 [--socket PATH] [-d] [-V]\n"
"  -c, --config FILE   configuration (default %s)\n"
"      --check-config  report every configuration error and exit\n"
"      --sysfs-root DIR  read sysfs (RDMA counters) under DIR instead of /\n"
"      --socket PATH   control socket (default RUN_DIR/" CTL_SOCKET_NAME ")\n"
"  -d, --debug         log debug messages (and accept debug-block)\n"
"  -h, --help          this help\n"
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

static int load_rules(const struct conf *c, struct rules **out,
		      void (*report)(const char *msg, void *arg), void *arg)
{
	return rules_load_dirs(c->rules_dir, c->rules_local_dir, out, report, arg);
}

static void reload_failed(struct daemon *d, const char *why, char *err, size_t errlen)
{
	d->reload_failures++;
	util_strlcpy(d->last_reload_error, why, sizeof(d->last_reload_error));
	util_strlcpy(err, why, errlen);
	count_reload(0);
	log_event(LOG_EV_RELOAD_FAILED, LOG_ERR,
		  LOG_FIELDS({ LF_CONFIG, d->conf_path }, { LF_ERROR, why }),
		  "reload: %s: %s; keeping the running configuration", d->conf_path, why);
	service_reloaded(d->svc, why);
}

static void conf_warnings(const struct conf *c)
{
	for (unsigned i = 0; i < c->nwarn; i++)
		log_warnx("%s", c->warn[i]);
}

/* Out of the view of Onload's tools (daemon/detect/srcrun.h): what the daemon
 * writes or serves, which uid 0 without capabilities could otherwise
 * write, plant, delete or connect to. */
static void tools_configure(const struct daemon *d, const struct conf *c)
{
	char mdir[PATH_MAX] = "";
	const char *hide[] = { d->sock_path, c->state_dir, c->run_dir, c->flows_dir,
			       c->journal_dir, mdir, NULL };
	char *slash;

	_Static_assert(sizeof(hide) / sizeof(hide[0]) - 1 <= SRCRUN_HIDE_MAX, "hide");
	util_strlcpy(mdir, c->metrics_file, sizeof(mdir));
	if ((slash = strrchr(mdir, '/')) && slash != mdir)
		*slash = '\0';
	else
		mdir[0] = '\0';
	srcrun_configure(hide, c->child_memory_max);
}

/* A reload applies the configuration and its rules together, or nothing:
 * either one with an error keeps everything that runs. */
static int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	struct errbuf eb = { err, errlen, 0 };
	struct rules *nr = NULL;
	struct conf *c;
	char why[600];
	int keep;

	service_reloading(d->svc);
	log_info("reloading %s", d->conf_path);
	if (conf_load(d->conf_path, &c, report_log, &eb)) {
		snprintf(why, sizeof(why), "%u error(s), first: %s", eb.n, err);
		reload_failed(d, why, err, errlen);
		return -1;
	}
	if (strcmp(c->state_dir, d->conf->state_dir) && dirs_check(c, err, errlen) < 0) {
		util_strlcpy(why, err, sizeof(why));
		conf_free(c);
		reload_failed(d, why, err, errlen);
		return -1;
	}
	eb.n = 0;
	if (load_rules(c, &nr, report_log, &eb)) {
		snprintf(why, sizeof(why), "rules: %u error(s), first: %s", eb.n, err);
		conf_free(c);
		reload_failed(d, why, err, errlen);
		return -1;
	}
	d->last_reload_error[0] = 0;
	if (strcmp(c->run_dir, d->conf->run_dir))
		log_warnx("reload: run_dir change to %s takes effect at restart", c->run_dir);
	keep = ports_rec_capacity(c) == ports_rec_capacity(d->conf);
	if (!keep)
		log_info("reload: recorder size changed: recorders start afresh");
	if (!d->sysfs_override)
		util_strlcpy(d->sysfs_root, c->sysfs_root, sizeof(d->sysfs_root));
	ports_apply(d->ports, c, keep);
	forensic_set_rules(d->forensics, nr);
	metrics_set_rules(d->metrics, nr);
	runs_set_rules(d->runs, nr);
	rules_free(d->rules);
	d->rules = nr;
	sampler_set_interval(d->sampler, c->interval_ns);

	log_set_level(c->log_level > log_get_level() && log_get_level() == LOG_DEBUG ?
		      LOG_DEBUG : c->log_level);
	stall_configure(d->stall, c);
	forensic_configure(d->forensics, c);
	runs_configure(d->runs, c);
	{
		char perr[512];

		if (peers_configure(d->peers, c, perr, sizeof(perr)) < 0) {
			util_errf(d->last_reload_error, sizeof(d->last_reload_error), "peers: %s", perr);
			log_errx("reload: peers: %s", perr);
		}
	}
	{
		char gerr[256];         /* a group made since start takes effect now */

		if (ctl_set_group(d->ctl, CTL_GROUP, gerr, sizeof(gerr)) < 0)
			log_warnx("reload: %s", gerr);
	}
	metrics_configure(d->metrics, c);
	tools_configure(d, c);
	conf_warnings(c);
	conf_free(d->conf);
	d->conf = c;
	d->reloads++;
	count_reload(1);
	log_event(LOG_EV_RELOAD_OK, LOG_INFO, LOG_FIELDS({ LF_CONFIG, d->conf_path }),
		  "reloaded %s: %u port(s)", d->conf_path, c->nports);
	service_reloaded(d->svc, NULL);
	return 0;
}

static int reload_cb(void *arg, char *err, size_t errlen)
{
	return daemon_reload(arg, err, errlen);
}

static void woken_cb(const char *name, uint64_t n, void *arg)
{
	jx_add_u64(arg, name, n);
}

/* The daemon's own CPU time and resident memory (what each source costs is
 * in the ports' and flow sources' parts), its wakeups and what woke it. */
static void status_cpu(struct json_object *o, const struct daemon *d)
{
	struct json_object *c = json_object_new_object(), *by;
	double up = (double)(loop_mono_ns() - d->start_mono_ns) / 1e9, total;
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0) {
		json_object_put(c);
		return;
	}
	total = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	json_object_object_add(c, "total_s", jx_new_fixed(total, 3));
	json_object_object_add(c, "pct_since_start", jx_new_fixed(up > 0 ? 100.0 * total / up : 0, 4));
	jx_add_u64(c, "rss_kib", cost_rss_kib());
	jx_add_u64(c, "wakeups", loop_wakeups(d->loop));
	json_object_object_add(c, "wakeups_per_s",
			       jx_new_fixed(up > 0 ? (double)loop_wakeups(d->loop) / up : 0, 1));
	by = json_object_new_object();
	loop_woken_by(d->loop, woken_cb, by);
	json_object_object_add(c, "woken_by", by);
	json_object_object_add(o, "cpu", c);
}

/* The daemon-wide part of `nicstallctl status`. */
static void status_cb(struct json_object *o, void *arg)
{
	struct daemon *d = arg;
	char host[256] = "";

	if (d->conf->host_name[0])
		util_strlcpy(host, d->conf->host_name, sizeof(host));
	else
		gethostname(host, sizeof(host) - 1);
	jx_add_str(o, "version", NICSTALL_VERSION);
	jx_add_str(o, "host", host);
	jx_add_int(o, "pid", getpid());
	jx_add_double(o, "uptime_s", (double)(loop_mono_ns() - d->start_mono_ns) / 1e9);
	jx_add_str(o, "config", d->conf_path);
	json_object_object_add(o, "interval_ms", jx_new_fixed((double)d->conf->interval_ns / 1e6, 3));
	jx_add_double(o, "horizon_s", (double)d->conf->horizon_ns / 1e9);
	jx_add_str(o, "state_dir", d->conf->state_dir);
	jx_add_str(o, "sysfs_root", d->sysfs_root);
	jx_add_u64(o, "reloads", d->reloads);
	jx_add_u64(o, "rules", d->rules ? rules_count(d->rules) : 0);
	if (d->last_reload_error[0])
		jx_add_str(o, "last_reload_error", d->last_reload_error);
	/* each peer's last contact, round trip, key state and refusals (the
	 * client's "peers" command is the ops branch's: it reads this) */
	if (d->peers && peers_count(d->peers))
		json_object_object_add(o, "peers", peers_status_json(d->peers));
	status_cpu(o, d);
	jx_add_u64(o, "watchdog_usec", service_watchdog_usec(d->svc));
	if (d->conf->metrics_file[0])
		jx_add_str(o, "metrics_file", d->conf->metrics_file);
}

static void svc_status(char *buf, size_t len, void *arg)
{
	struct daemon *d = arg;

	metrics_summary(d->metrics, buf, len);
}

/* The control commands, and "debug-block" for tests of the watchdog: it
 * blocks the event loop for "ms" milliseconds (at most 60 s), only for
 * root and only when the daemon runs with --debug. */
static struct json_object *dispatch(struct json_object *req, enum ctl_access access, void *arg)
{
	struct daemon *d = (struct daemon *)((struct cmd_env *)arg)->arg;
	struct json_object *jc, *jm;
	int64_t ms;

	if (!json_object_object_get_ex(req, "cmd", &jc) ||
	    strcmp(json_object_get_string(jc), "debug-block"))
		return cmd_dispatch(req, access, arg);
	if (!d->debug)
		return ctl_error("debug-block: the daemon does not run with --debug");
	if (access != CTL_ROOT)
		return ctl_error("debug-block: permission denied (root only)");
	ms = json_object_object_get_ex(req, "ms", &jm) ? json_object_get_int64(jm) : 0;
	if (ms <= 0 || ms > 60000)
		return ctl_error("debug-block: \"ms\" must be 1..60000");
	log_warnx("debug-block: blocking the event loop for %" PRId64 " ms", ms);
	usleep((useconds_t)ms * 1000u);
	jc = json_object_new_object();
	json_object_object_add(jc, "ok", json_object_new_boolean(1));
	return jc;
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
	log_open("nicstalld");
	if (check) {
		struct conf *c;
		int n = conf_load(d.conf_path, &c, report_stderr, NULL);

		if (n) {
			fprintf(stderr, "%s: %d error%s\n", d.conf_path, n, n == 1 ? "" : "s");
			return 1;
		}
		{
			struct rules *r = NULL;

			n = load_rules(c, &r, report_stderr, NULL);
			rules_free(r);
			if (n) {
				fprintf(stderr, "rules: %d error%s\n", n, n == 1 ? "" : "s");
				conf_free(c);
				return 1;
			}
		}
		for (unsigned i = 0; i < c->nwarn; i++)
			fprintf(stderr, "warning: %s\n", c->warn[i]);
		conf_free(c);
		printf("configuration OK\n");
		return 0;
	}

	d.debug = debug;
	if (conf_load(d.conf_path, &d.conf, report_log, NULL)) {
		log_errx("%s: invalid configuration, not starting", d.conf_path);
		return 1;
	}
	log_set_level(debug ? LOG_DEBUG : d.conf->log_level);
	if (load_rules(d.conf, &d.rules, report_log, NULL)) {
		log_errx("invalid rules, not starting");
		return 1;
	}
	if (dirs_check(d.conf, err, sizeof(err)) < 0) {
		log_errx("%s: refusing to start", err);
		return 1;
	}
	{
		int n = bundle_cleanup(d.conf->state_dir, err, sizeof(err));

		if (n > 0)
			log_warnx("%s: removed %d unfinished bundle(s) left by a crash",
				  d.conf->state_dir, n);
		else if (n < 0)
			log_warnx("%s: %s", d.conf->state_dir, err);
		n = dirs_clean_work(d.conf->state_dir);
		if (n > 0)
			log_info("%s/work: removed %d work file(s) a stopped daemon left", d.conf->state_dir, n);
	}
	if (!d.sysfs_override)
		util_strlcpy(d.sysfs_root, d.conf->sysfs_root, sizeof(d.sysfs_root));
	{
		/* a reprogram cut short by a crash left a port's flag changed */
		char dir[PATH_MAX + 16];
		int n;

		snprintf(dir, sizeof(dir), "%s/reprogram", d.conf->run_dir);
		reprogram_set_state_dir(dir);
		n = reprogram_restore_stale();
		if (n > 0)
			log_warnx("put back the promiscuous flag of %d port(s) a killed daemon left "
				  "in the middle of a reprogram", n);
	}
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
	/* up in dependency order: ports, sampler, detector, investigations,
	 * then the control socket that reaches them all */
	d.ports = ports_new(d.loop, d.sysfs_root);
	if (!d.ports) {
		log_errx("out of memory");
		return 1;
	}
	ports_apply(d.ports, d.conf, 0);
	d.sampler = sampler_new(d.loop, d.ports, d.conf->interval_ns);
	if (!d.sampler) {
		log_err("sampling timer");
		return 1;
	}
	d.stall = stall_new(d.loop, d.ports, d.conf, err, sizeof(err));
	if (!d.stall) {
		log_errx("flow liveness: %s", err);
		return 1;
	}
	/* the BPF loads are done (the flow sources', then the thread
	 * watch's): what libbpf parsed of the kernel's BTF for them, freed,
	 * goes back to the kernel, not kept in the heap for a daemon that
	 * never needs it again (malloc_trim(3)) */
	malloc_trim(0);
	d.forensics = forensic_new(d.loop, d.ports, d.stall, d.conf, NULL);
	if (!d.forensics) {
		log_errx("out of memory");
		return 1;
	}
	forensic_set_rules(d.forensics, d.rules);
	stall_set_hook(d.stall, forensic_on_incident, d.forensics);
	/* its idle polls keep the sweep's phase: one riding a control
	 * client's wakeup would move the next off the sweep, to a wakeup of
	 * its own */
	stall_set_ride(d.stall, SAMPLER_WAKE);
	d.peers = peers_new(d.loop, d.conf, err, sizeof(err));
	if (!d.peers) {
		log_errx("peers: %s", err);
		return 1;
	}
	peers_set_hooks(d.peers, forensic_on_peer_notice, forensic_on_peer_summary, d.forensics);
	forensic_set_peers(d.forensics, d.peers);
	d.metrics = metrics_new(d.loop, d.ports, d.stall, d.conf);
	d.svc = service_new(d.loop, svc_status, &d);
	if (!d.metrics || !d.svc) {
		log_errx("out of memory");
		return 1;
	}
	metrics_set_rules(d.metrics, d.rules);
	metrics_set_peers(d.metrics, d.peers);
	/* closes the runs a killed daemon left open (reads runs/ now) */
	d.runs = runs_new(d.loop, d.ports, d.stall, d.conf);
	if (!d.runs) {
		log_errx("out of memory");
		return 1;
	}
	runs_set_rules(d.runs, d.rules);
	forensic_set_runs(d.forensics, d.runs);
	metrics_set_runs(d.metrics, d.runs);
	d.cmd = (struct cmd_env){ d.ports, d.stall, d.forensics, status_cb, reload_cb, &d, d.peers,
				  d.runs };
	util_strlcpy(d.sock_path, sock, sizeof(d.sock_path));
	conf_warnings(d.conf);
	tools_configure(&d, d.conf);
	d.ctl = ctl_open(d.loop, sock, dispatch, &d.cmd, err, sizeof(err));
	if (!d.ctl) {
		log_errx("%s", err);
		return 1;
	}
	log_info("nicstalld %s: %u port(s), sampling every %.3f s, recorder %u samples, control %s",
		 NICSTALL_VERSION, ports_count(d.ports), (double)d.conf->interval_ns / 1e9,
		 ports_rec_capacity(d.conf), sock);
	service_ready(d.svc);
	rc = loop_run(d.loop);
	service_stopping(d.svc);
	/* down in reverse */
	ctl_close(d.ctl);
	service_free(d.svc);
	metrics_free(d.metrics);
	/* the runs still open end incomplete; their certificates are written */
	forensic_set_runs(d.forensics, NULL);
	runs_free(d.runs);
	forensic_free(d.forensics);
	peers_free(d.peers);
	stall_free(d.stall);
	sampler_free(d.sampler);
	ports_free(d.ports);
	rules_free(d.rules);
	conf_free(d.conf);
	loop_free(d.loop);
	log_info("stopped");
	return rc < 0 ? 1 : 0;
}
