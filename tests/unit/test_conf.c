/* Unit tests: configuration parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/counters/curl_dl.h"
#include "daemon/conf.h"
#include "lib/log.h"

struct msgs {
	char m[16][512];
	int n;
};

static void collect(const char *msg, void *arg)
{
	struct msgs *ms = arg;

	if (ms->n < 16)
		snprintf(ms->m[ms->n++], sizeof(ms->m[0]), "%s", msg);
}

static char path[64];

static int load(const char *text, struct conf **c, struct msgs *ms)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/nicstall-conf-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	memset(ms, 0, sizeof(*ms));
	int n = conf_load(path, c, collect, ms);

	unlink(path);
	return n;
}

/* text of len bytes, NUL bytes included */
static int load_bytes(const char *text, size_t len, struct conf **c, struct msgs *ms)
{
	int fd, n;

	strcpy(path, "/tmp/nicstall-conf-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	memset(ms, 0, sizeof(*ms));
	n = conf_load(path, c, collect, ms);
	unlink(path);
	return n;
}

static void conf_load__children__unprivileged_by_default(void **state)
{
	struct group *gr = getgrnam("nicstall");
	struct conf *c = NULL;
	struct msgs ms;

	(void)state;
	/* the hook: nicstall-hook (nicstalld.sysusers) by default, with the
	 * bundles' group where it exists; probes: nobody with its own group;
	 * neither keeps a capability */
	struct passwd *hook = getpwnam("nicstall-hook");
	/* getpwnam's and getgrnam's answers are static: the loader's own
	 * look-ups (nobody, nogroup) overwrite them (a host where the package
	 * made nicstall-hook read 65534 here) */
	uid_t hook_uid = hook ? hook->pw_uid : 65534;
	gid_t grp_gid = gr ? gr->gr_gid : hook ? hook->pw_gid : 65534;
	int n = load("[daemon]\nbundle_hook = /bin/true\n[port a]\ninterface = eth0\n"
		     "probe = ip -s link\n", &c, &ms);

	if (!hook) {
		/* not created here: an error naming the hook's line and the fix */
		assert_int_equal(n, 1);
		assert_non_null(strstr(ms.m[0], ":2: bundle_hook: no user 'nicstall-hook' on this "
				       "host (hook_user's default: run systemd-sysusers"));
		assert_int_equal(load("[daemon]\nbundle_hook = /bin/true\nhook_user = nobody\n"
				      "[port a]\ninterface = eth0\nprobe = ip -s link\n", &c, &ms), 0);
	} else
		assert_int_equal(n, 0);
	assert_int_equal(c->hook_cred.priv, PROBE_EXEC_UNPRIV);
	assert_int_equal(c->hook_cred.uid, hook_uid);
	assert_int_equal(c->hook_cred.gid, grp_gid);
	assert_int_equal(c->probe_cred.priv, PROBE_EXEC_UNPRIV);
	assert_int_equal(c->probe_cred.uid, 65534);
	assert_int_equal(c->probe_cred.gid, 65534);
	conf_free(c);
	/* named ones, numbers too; probe_user = root is the opt-in */
	assert_int_equal(load("[daemon]\nbundle_hook = /bin/true\nhook_user = 4000\n"
			      "hook_group = 4001\nprobe_user = root\n[port a]\ninterface = eth0\n"
			      "probe = ip -s link\n", &c, &ms), 0);
	assert_int_equal(c->hook_cred.uid, 4000);
	assert_int_equal(c->hook_cred.gid, 4001);
	assert_int_equal(c->probe_cred.priv, PROBE_EXEC_DAEMON);
	conf_free(c);
	/* child_memory_max: every child's RLIMIT_DATA, probes without a hook */
	assert_int_equal(load("[daemon]\nchild_memory_max = 64M\n[port a]\ninterface = eth0\n"
			      "probe = ip -s link\n", &c, &ms), 0);
	assert_true(c->probe_cred.data_max == 64ull << 20);
	conf_free(c);
	assert_int_equal(load("[daemon]\nchild_memory_max = 1M\n", &c, &ms), 1);
	assert_non_null(strstr(ms.m[0], ":2: child_memory_max: "));
}

static void conf_load__children__root_or_unknown_refused_with_line(void **state)
{
	struct conf *c = NULL;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("[daemon]\nbundle_hook = /bin/true\nhook_user = root\n"
			      "hook_group = no-such-group-x\nprobe_user = 0\n"
			      "[port a]\ninterface = eth0\nprobe = ip -s link\n", &c, &ms), 3);
	assert_null(c);
	assert_non_null(strstr(ms.m[0], ":3: hook_user: 'root' is uid 0: the hook runs unprivileged"));
	assert_non_null(strstr(ms.m[1], ":4: hook_group: no group 'no-such-group-x'"));
	assert_non_null(strstr(ms.m[2], ":5: probe_user: '0' is uid 0: write probe_user = root"));
	assert_int_equal(load("[daemon]\nhook_user = no-such-user-x\n", &c, &ms), 1);
	assert_non_null(strstr(ms.m[0], ":2: hook_user: no user 'no-such-user-x' on this host"));
	/* without a hook nor hook_user, the default user is never looked up */
	assert_int_equal(load("[daemon]\ninterval = 1s\n", &c, &ms), 0);
	conf_free(c);
}

/* A child never gets gid 0 from a user's primary group: probe_user whose
 * group is root's is refused with its line (the hook's group is nicstall,
 * or refused the same way where that group is missing). */
static void conf_load__user_with_gid0__refused_with_line(void **state)
{
	char cmd[160], text[256];
	struct conf *c = NULL;
	struct msgs ms;
	const char *name = "nstest-gid0";
	int n;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(cmd, sizeof(cmd), "userdel %s >/dev/null 2>&1; useradd -r -M -N -g 0 "
		 "-s /usr/sbin/nologin %s", name, name);
	assert_int_equal(system(cmd), 0);
	snprintf(text, sizeof(text), "[daemon]\nprobe_user = %s\n[port a]\ninterface = eth0\n"
		 "probe = ip -s link\n", name);
	n = load(text, &c, &ms);
	snprintf(cmd, sizeof(cmd), "userdel %s", name);
	assert_int_equal(system(cmd), 0);     /* before any assertion can fail */
	assert_int_equal(n, 1);
	assert_null(c);
	assert_non_null(strstr(ms.m[0], ":2: probe_user: 'nstest-gid0' has gid 0 as its group"));
}

static void conf_load__text_after_nul__error_with_line(void **state)
{
	static const char text[] = "[daemon]\ninterval = 1s\0horizon = 5s\n"
				   "[port a]\ninterface = eth0\n";
	struct conf *c = (struct conf *)1;
	struct msgs ms;
	char want[128];

	(void)state;
	assert_int_equal(load_bytes(text, sizeof(text) - 1, &c, &ms), 1);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
	assert_non_null(strstr(ms.m[0], want));
	/* a NUL at the very end of the file, with no newline after it */
	assert_int_equal(load_bytes("[daemon]\ninterval = 1s\0", 24, &c, &ms), 1);
	assert_non_null(strstr(ms.m[0], ":2: NUL byte in line"));
}

static void conf_load__long_line__error_and_next_line_read(void **state)
{
	char *text = malloc(6000);
	struct conf *c = (struct conf *)1;
	struct msgs ms;
	size_t n;

	(void)state;
	n = (size_t)sprintf(text, "[daemon]\nstate_dir = /");
	memset(text + n, 'a', 4200);
	n += 4200;
	n += (size_t)sprintf(text + n, "\ncolour = blue\n");
	assert_int_equal(load_bytes(text, n, &c, &ms), 2);
	assert_non_null(strstr(ms.m[0], ":2: line longer than 4096 characters"));
	assert_non_null(strstr(ms.m[1], ":3: unknown key 'colour'"));
	free(text);
}

static void conf_load__valid_file__ports_and_defaults(void **state)
{
	struct conf *c;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("# comment\n[daemon]\ninterval = 250ms\n"
			      "state_dir = /tmp/state\n\n"
			      "[port srv]\ninterface = veth0  # trailing comment\n"
			      "netns = bench-srv\nprofile = mlx5\nrdma_device = mlx5_0\n"
			      "rdma_port = 1\n[port cli]\ninterface = eth1\n", &c, &ms), 0);
	assert_non_null(c);
	assert_int_equal(c->interval_ns, 250000000ull);
	assert_int_equal(c->horizon_ns, 120000000000ull);
	assert_string_equal(c->state_dir, "/tmp/state");
	assert_int_equal(c->nports, 2);
	assert_string_equal(c->ports[0].name, "srv");
	assert_string_equal(c->ports[0].ifname, "veth0");
	assert_string_equal(c->ports[0].netns, "bench-srv");
	assert_int_equal(c->ports[0].profile, PROFILE_MLX5);
	assert_string_equal(c->ports[0].rdma_dev, "mlx5_0");
	assert_int_equal(c->ports[0].rdma_port, 1);
	assert_int_equal(c->ports[1].profile, PROFILE_AUTO);
	assert_int_equal(c->ports[1].line, 12);
	conf_free(c);
}

static void conf_load__three_errors__all_reported_with_line(void **state)
{
	struct conf *c = (struct conf *)1;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("[daemon]\n"
			      "interval = 5ms\n"              /* line 2: out of range */
			      "[port a]\n"
			      "interface = eth0\n"
			      "colour = blue\n"               /* line 5: unknown key */
			      "profile = mellanox\n",         /* line 6: bad value */
			      &c, &ms), 3);
	assert_null(c);
	assert_int_equal(ms.n, 3);
	char want[128];

	snprintf(want, sizeof(want), "%s:2: interval:", path);
	assert_non_null(strstr(ms.m[0], want));
	assert_non_null(strstr(ms.m[0], "out of range"));
	snprintf(want, sizeof(want), "%s:5: unknown key 'colour'", path);
	assert_non_null(strstr(ms.m[1], want));
	snprintf(want, sizeof(want), "%s:6: profile: 'mellanox'", path);
	assert_non_null(strstr(ms.m[2], want));
}

static void conf_load__structural_errors__named(void **state)
{
	struct conf *c;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("orphan = 1\n[bogus]\n[port a]\ninterface = x\n"
			      "[port a]\ninterface = y\n[port b]\nnetns = ../etc\n"
			      "[port c]\ninterface = eth0\nrdma_port = 900\n"
			      "[port d]\ninterface = eth0\n", &c, &ms), 7);
	assert_non_null(strstr(ms.m[0], ":1: key 'orphan' outside"));
	assert_non_null(strstr(ms.m[1], ":2: unknown section [bogus]"));
	assert_non_null(strstr(ms.m[2], ":5: port 'a' is already defined at line 3"));
	assert_non_null(strstr(ms.m[3], ":8: netns: '../etc'"));
	assert_non_null(strstr(ms.m[4], ":11: rdma_port: 900 is out of range 1..255"));
	assert_non_null(strstr(ms.m[5], ":7: port 'b' has no interface"));
	assert_non_null(strstr(ms.m[6], ":12: port 'd' watches eth0, already watched by port 'c'"));
}

/* tracker_attach: auto by default, tcx or clsact by name; anything else
 * named with its file and line. */
static void conf_load__tracker_attach__values_and_bad_value(void **state)
{
	struct conf *c;
	struct msgs ms;
	char want[128];

	(void)state;
	assert_int_equal(load("[port a]\ninterface = eth0\n"
			      "[port b]\ninterface = eth1\ntracker_attach = tcx\n"
			      "[port c]\ninterface = eth2\ntracker_attach = clsact\n"
			      "[port d]\ninterface = eth3\ntracker_attach = auto\n", &c, &ms), 0);
	assert_int_equal(c->ports[0].tracker_attach, CONF_ATTACH_AUTO);
	assert_int_equal(c->ports[1].tracker_attach, CONF_ATTACH_TCX);
	assert_int_equal(c->ports[2].tracker_attach, CONF_ATTACH_CLSACT);
	assert_int_equal(c->ports[3].tracker_attach, CONF_ATTACH_AUTO);
	conf_free(c);
	c = (struct conf *)1;
	assert_int_equal(load("[port a]\ninterface = eth0\ntracker_attach = xdp\n", &c, &ms), 1);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:3: tracker_attach: 'xdp' is not one of auto, tcx, clsact",
		 path);
	assert_non_null(strstr(ms.m[0], want));
}

/* sock_liveness: auto by default, auto, events and paced by name;
 * anything else named with its file and line. */
static void conf_load__sock_liveness__values_and_bad_value(void **state)
{
	struct conf *c;
	struct msgs ms;
	char want[128];

	(void)state;
	assert_int_equal(load("[port a]\ninterface = eth0\n"
			      "[port b]\ninterface = eth1\nsock_liveness = paced\n"
			      "[port c]\ninterface = eth2\nsock_liveness = events\n"
			      "[port d]\ninterface = eth3\nsock_liveness = auto\n", &c, &ms), 0);
	assert_int_equal(c->ports[0].sock_liveness, CONF_SOCK_AUTO);
	assert_int_equal(c->ports[1].sock_liveness, CONF_SOCK_PACED);
	assert_int_equal(c->ports[2].sock_liveness, CONF_SOCK_EVENTS);
	assert_int_equal(c->ports[3].sock_liveness, CONF_SOCK_AUTO);
	conf_free(c);
	c = (struct conf *)1;
	assert_int_equal(load("[port a]\ninterface = eth0\nsock_liveness = poll\n", &c, &ms), 1);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:3: sock_liveness: 'poll' is not one of auto, events, paced",
		 path);
	assert_non_null(strstr(ms.m[0], want));
}

/* [host] and [producer NAME]: the values taken, every bad one named with
 * its line; a producer names its processes one way. */
static void conf_load__host_and_producers__values_and_errors(void **state)
{
	struct conf *c;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("[port a]\ninterface = eth0\n[host]\nresources = on\n"
			      "disks = nvme* loop3\n[producer flare]\ncomm = flare\n"
			      "[producer job]\ncgroup = /sys/fs/cgroup/blkio/job\n", &c, &ms), 0);
	assert_int_equal(c->host.off, 0);
	assert_int_equal(c->host.ndisks, 2);
	assert_string_equal(c->host.disks[1], "loop3");
	assert_int_equal(c->host.nprod, 2);
	assert_string_equal(c->host.prod[0].comm, "flare");
	assert_string_equal(c->host.prod[1].cgroup, "/sys/fs/cgroup/blkio/job");
	conf_free(c);
	assert_int_equal(load("[port a]\ninterface = eth0\n[host]\nresources = sometimes\n"
			      "disks = a/b\nspeed = 3\n[producer x y]\ncomm = z\n"
			      "[producer p]\n[producer q]\ncomm = q\ncgroup = /sys/fs/cgroup/q\n"
			      "[producer r]\ncomm = abcdefghijklmnopq\n", &c, &ms), 8);
	assert_non_null(strstr(ms.m[0], ":4: resources: "));
	assert_non_null(strstr(ms.m[1], ":5: disks: 'a/b'"));
	assert_non_null(strstr(ms.m[2], ":6: unknown key 'speed' in [host]"));
	assert_non_null(strstr(ms.m[3], ":7: producer name 'x y'"));
	assert_non_null(strstr(ms.m[4], ":14: comm: 'abcdefghijklmnopq'"));
	assert_non_null(strstr(ms.m[5], ":9: producer 'p': give one of"));
	assert_non_null(strstr(ms.m[6], ":10: producer 'q': give one of"));
	assert_non_null(strstr(ms.m[7], ":13: producer 'r': give one of"));
}

/* libcurl is loaded by the first app_metrics URL read, not before (a
 * configuration without one leaves it out of the process); one that
 * cannot be loaded is the URL's error, at its line, and later URLs try
 * again. First in the list: nothing has loaded it yet. */
static int libcurl_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int mapped = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		mapped |= strstr(line, "/libcurl") != NULL;
	fclose(f);
	return mapped;
}

static void conf_load__app_metrics__libcurl_loaded_when_named(void **state)
{
	static const char *const none[] = { "libnicstall-no-such-curl.so.4", "libc.so.6", NULL };
	static const char *const second[] = { "libc.so.6", "libcurl.so.4", NULL };
	struct conf *c;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("[port a]\ninterface = eth0\n", &c, &ms), 0);
	conf_free(c);
	assert_false(curl_dl_loaded());
	assert_false(libcurl_mapped());
	curl_dl_test_names(none);
	assert_int_equal(load("[port a]\ninterface = eth0\napp_metrics = http://127.0.0.1:9/m\n",
			      &c, &ms), 1);
	/* every name's reason: one that is not there, one without libcurl's
	 * functions (dlclosed, the next tried) */
	assert_non_null(strstr(ms.m[0], ":3: app_metrics: libcurl could not be loaded "
			       "(libnicstall-no-such-curl.so.4: cannot open shared object file"));
	assert_non_null(strstr(ms.m[0], "; libc.so.6: no curl_global_init): install libcurl4"));
	assert_false(curl_dl_loaded());
	assert_false(libcurl_mapped());
	curl_dl_test_names(second);
	assert_int_equal(load("[port a]\ninterface = eth0\napp_metrics = http://127.0.0.1:9/m\n",
			      &c, &ms), 0);
	conf_free(c);
	assert_true(curl_dl_loaded());
	assert_true(libcurl_mapped());
	curl_dl_test_names(NULL);
}

/* app_metrics in [port] and [producer]: the values taken, every bad one
 * named with its line; app_metrics_* keys need app_metrics. */
static void conf_load__app_metrics__values_and_errors(void **state)
{
	struct conf *c;
	struct msgs ms;

	(void)state;
	assert_int_equal(load("[port a]\ninterface = eth0\napp_metrics = http://127.0.0.1:9/m\n"
			      "app_metrics_timeout = 300ms\n[producer flare]\ncomm = flare\n"
			      "app_metrics = https://flare:8443/metrics\napp_metrics_keep = flare_*\n",
			      &c, &ms), 0);
	assert_string_equal(c->ports[0].app.url, "http://127.0.0.1:9/m");
	assert_int_equal(c->ports[0].app.timeout_ns, 300000000ull);
	assert_string_equal(c->host.prod[0].app.url, "https://flare:8443/metrics");
	assert_string_equal(c->host.prod[0].app.keep[0], "flare_*");
	conf_free(c);
	assert_int_equal(load("[port a]\ninterface = eth0\napp_metrics = ftp://h/m\n"
			      "app_metrics_timeout = 2h\n[port b]\ninterface = eth1\n"
			      "app_metrics_max_bytes = 1M\n[producer p]\ncomm = p\n"
			      "app_metrics = gopher://x\napp_metrics_nope = 1\napp_metrics_scale = 5\n",
			      &c, &ms), 6);
	assert_non_null(strstr(ms.m[0], ":3: app_metrics: 'ftp://h/m': only http and https"));
	assert_non_null(strstr(ms.m[1], ":4: app_metrics_timeout: "));
	assert_non_null(strstr(ms.m[2], ":10: app_metrics: 'gopher://x'"));
	assert_non_null(strstr(ms.m[3], ":11: unknown key 'app_metrics_nope'"));
	assert_non_null(strstr(ms.m[4], ":5: port 'b': app_metrics_* keys without app_metrics"));
	assert_non_null(strstr(ms.m[5], ":8: producer 'p': app_metrics_* keys without"));
}

static void conf_load__thread_watch__values_and_bad_values(void **state)
{
	struct conf *c;
	struct msgs ms;
	char want[160];

	(void)state;
	assert_int_equal(load("[daemon]\nstall_threshold = 1s\n"
			      "[port a]\ninterface = eth0\n", &c, &ms), 0);
	assert_int_equal(c->thread_watch, CONF_TW_AUTO);
	assert_int_equal(c->thread_share_pct, 50);
	assert_int_equal(c->thread_syscalls, 0);
	conf_free(c);
	assert_int_equal(load("[daemon]\nthread_watch = off\nthread_sleep_share = 90\n"
			      "thread_watch_syscalls = yes\n"
			      "[port a]\ninterface = eth0\n", &c, &ms), 0);
	assert_int_equal(c->thread_watch, CONF_TW_OFF);
	assert_int_equal(c->thread_share_pct, 90);
	assert_int_equal(c->thread_syscalls, 1);
	conf_free(c);
	c = (struct conf *)1;
	assert_int_equal(load("[daemon]\nthread_watch_syscalls = sometimes\n"
			      "[port a]\ninterface = eth0\n", &c, &ms), 1);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:2: thread_watch_syscalls: 'sometimes' is not yes or no",
		 path);
	assert_non_null(strstr(ms.m[0], want));
	c = (struct conf *)1;
	assert_int_equal(load("[daemon]\nthread_watch = yes\nthread_sleep_share = 5\n"
			      "[port a]\ninterface = eth0\n", &c, &ms), 2);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:2: thread_watch: 'yes' is not one of auto, on, off",
		 path);
	assert_non_null(strstr(ms.m[0], want));
	snprintf(want, sizeof(want), "%s:3: thread_sleep_share:", path);
	assert_non_null(strstr(ms.m[1], want));
}

/* ping_mtu (issue 35): on by default, off by "no", a bad value named
 * with its line. */
static void conf_load__ping_mtu__default_off_and_bad_value(void **state)
{
	struct conf *c;
	struct msgs ms;
	char want[160];

	(void)state;
	assert_int_equal(load("[daemon]\n[port a]\ninterface = eth0\n", &c, &ms), 0);
	assert_int_equal(c->ping_mtu, 1);
	conf_free(c);
	assert_int_equal(load("[daemon]\nping_mtu = no\n[port a]\ninterface = eth0\n", &c, &ms), 0);
	assert_int_equal(c->ping_mtu, 0);
	conf_free(c);
	c = (struct conf *)1;
	assert_int_equal(load("[daemon]\nping_mtu = jumbo\n[port a]\ninterface = eth0\n", &c, &ms), 1);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:2: ping_mtu:", path);
	assert_non_null(strstr(ms.m[0], want));
}

static void conf_load__missing_file__named(void **state)
{
	struct conf *c;
	struct msgs ms = { 0 };

	(void)state;
	assert_int_equal(conf_load("/nonexistent/nicstalld.conf", &c, collect, &ms), 1);
	assert_non_null(strstr(ms.m[0], "/nonexistent/nicstalld.conf: cannot open: No such file"));
}

static void conf_profile_for_driver__names__profiles(void **state)
{
	(void)state;
	assert_int_equal(conf_profile_for_driver("mlx5_core"), PROFILE_MLX5);
	assert_int_equal(conf_profile_for_driver("sfc"), PROFILE_SFC);
	assert_int_equal(conf_profile_for_driver("veth"), PROFILE_GENERIC);
	assert_int_equal(conf_profile_for_driver(""), PROFILE_GENERIC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conf_load__app_metrics__libcurl_loaded_when_named),
		cmocka_unit_test(conf_load__valid_file__ports_and_defaults),
		cmocka_unit_test(conf_load__three_errors__all_reported_with_line),
		cmocka_unit_test(conf_load__structural_errors__named),
		cmocka_unit_test(conf_load__tracker_attach__values_and_bad_value),
		cmocka_unit_test(conf_load__sock_liveness__values_and_bad_value),
		cmocka_unit_test(conf_load__thread_watch__values_and_bad_values),
		cmocka_unit_test(conf_load__ping_mtu__default_off_and_bad_value),
		cmocka_unit_test(conf_load__missing_file__named),
		cmocka_unit_test(conf_load__children__unprivileged_by_default),
		cmocka_unit_test(conf_load__children__root_or_unknown_refused_with_line),
		cmocka_unit_test(conf_load__user_with_gid0__refused_with_line),
		cmocka_unit_test(conf_load__text_after_nul__error_with_line),
		cmocka_unit_test(conf_load__long_line__error_and_next_line_read),
		cmocka_unit_test(conf_profile_for_driver__names__profiles),
		cmocka_unit_test(conf_load__host_and_producers__values_and_errors),
		cmocka_unit_test(conf_load__app_metrics__values_and_errors),
	};

	log_set_level(LOG_EMERG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
