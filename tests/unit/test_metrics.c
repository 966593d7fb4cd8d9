/* Unit tests: the Prometheus textfile (daemon/metrics.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/metrics.h"
#include "daemon/peers/peers.h"
#include "lib/json.h"
#include "daemon/ports.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "rules/rules.h"

struct fx {
	char *dir;
	struct loop *l;
	struct ports *ps;
	struct conf *c;
	struct rules *r;
	struct metrics *m;
	uint64_t t;
};

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

/* An mlx5 port reading recorded text: phy frames, vport frames, buffer drops. */
static void stats(struct fx *f, unsigned long phy, unsigned long vport, unsigned long oob)
{
	char text[256];

	snprintf(text, sizeof(text), "NIC statistics:\n     rx_packets_phy: %lu\n"
		 "     rx_vport_unicast_packets: %lu\n     rx_out_of_buffer: %lu\n", phy, vport, oob);
	coretest_write(f->dir, "s.txt.new", text);
	{
		char a[512], b[512];

		snprintf(a, sizeof(a), "%s/s.txt.new", f->dir);
		snprintf(b, sizeof(b), "%s/s.txt", f->dir);
		assert_int_equal(rename(a, b), 0);
	}
	f->t += SEC;
	if (f->ps)
		ports_sample(f->ps, f->t, f->t);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char text[1024];

	log_set_level(LOG_ERR);
	f->dir = coretest_tmpdir();
	stats(f, 0, 0, 0);
	snprintf(text, sizeof(text), "[daemon]\nhorizon = 60s\nmetrics_file = %s/nicstalld.prom\n"
		 "[port \"srv\"]\nstats_file = %s/s.txt\nprofile = mlx5\n", f->dir, f->dir);
	f->c = coretest_conf(text);
	f->l = loop_new();
	f->ps = ports_new(f->l, "");
	ports_apply(f->ps, f->c, 0);
	assert_int_equal(rules_load_dirs("rules", "/nonexistent", &f->r, quiet, NULL), 0);
	assert_non_null(f->r);
	f->m = metrics_new(f->l, f->ps, NULL, f->c);
	metrics_set_rules(f->m, f->r);
	log_set_level(LOG_ERR);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	metrics_free(f->m);
	ports_free(f->ps);
	rules_free(f->r);
	conf_free(f->c);
	loop_free(f->l);
	coretest_rmdir(f->dir);
	free(f);
	return 0;
}

/* The value of the series whose line starts with series (name and labels). */
static double value(const char *text, const char *series)
{
	const char *p = text;
	size_t n = strlen(series);

	for (; (p = strstr(p, series)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	fail_msg("no series %s in:\n%s", series, text);
	return -1;
}

static int has(const char *text, const char *series)
{
	const char *p = strstr(text, series);

	return p && (p == text || p[-1] == '\n');
}

static void metrics_render__gap_and_drops__running_totals_from_the_signals(void **state)
{
	struct fx *f = *state;
	char *t;

	stats(f, 1000, 1000, 0);
	stats(f, 2000, 1990, 5);        /* 10 frames lost between port and vport */
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 10);
	assert_int_equal(value(t, "nicstalld_port_drops_total{port=\"srv\",kind=\"buffer\"}"), 5);
	assert_int_equal(value(t, "nicstalld_port_up{port=\"srv\"}"), 1);
	assert_int_equal(value(t, "nicstalld_port_samples_total{port=\"srv\"}"), 2);
	assert_true(has(t, "# TYPE nicstalld_port_frames_gap_total counter\n"));
	/* no steering counter in this dump: no series rather than a made-up 0 */
	assert_false(has(t, "nicstalld_port_drops_total{port=\"srv\",kind=\"steering-miss\"}"));
	free(t);
	/* the next write adds only what came since */
	stats(f, 3000, 2970, 5);        /* 20 more */
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 30);
	free(t);
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 30);
	free(t);
}

static void metrics_render__read_skew__counter_never_decreases(void **state)
{
	struct fx *f = *state;
	char *t;

	stats(f, 1000, 1000, 0);
	stats(f, 1100, 1095, 0);        /* +5 */
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 5);
	free(t);
	stats(f, 1200, 1197, 0);        /* the vport read caught up: -2 */
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 5);
	free(t);
	stats(f, 1300, 1297, 0);
	stats(f, 1400, 1390, 0);        /* +7: the running sum is 10 */
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_frames_gap_total{port=\"srv\"}"), 10);
	free(t);
}

static void metrics_render__healthy_rate__learned_from_the_gap(void **state)
{
	struct fx *f = *state;
	char *t;

	t = metrics_render(f->m);
	assert_false(has(t, "nicstalld_port_frames_gap_healthy_per_second{"));
	free(t);
	stats(f, 1000, 1000, 0);
	stats(f, 1100, 1098, 0);        /* 2 frames in 1 s */
	t = metrics_render(f->m);
	assert_float_equal(value(t, "nicstalld_port_frames_gap_healthy_per_second{port=\"srv\"}"),
			   2.0, 1e-9);  /* 2 frames over the 1 s window */
	free(t);
	/* an incident opened: that window is not healthy, the rate stays */
	count_incident_opened("srv", 2);
	stats(f, 2100, 1100, 0);
	t = metrics_render(f->m);
	assert_float_equal(value(t, "nicstalld_port_frames_gap_healthy_per_second{port=\"srv\"}"),
			   2.0, 1e-9);
	assert_int_equal(value(t, "nicstalld_port_flow_stalls_total{port=\"srv\"}"), 2);
	assert_true(value(t, "nicstalld_port_last_incident_timestamp_seconds{port=\"srv\"}") > 1e9);
	free(t);
}

static void metrics_render__events__counted_by_label(void **state)
{
	struct fx *f = *state;
	char *t;

	count_bundle("srv", 1, 1, "port-drop", "reprogram");
	count_bundle("srv", 0, 2, "port-drop", "none");
	/* a manual bundle is no incident */
	count_bundle("srv", 1, 0, "manual", NULL);
	count_reprogram("srv", COUNT_RECOV_PERFORMED);
	count_reprogram("srv", COUNT_RECOV_REFUSED);
	count_reprogram("srv", COUNT_RECOV_REFUSED);
	count_reprogram("srv", COUNT_RECOV_FAILED);
	count_incident_suppressed("srv");
	count_hook_result("timeout");
	count_hook_dropped();
	count_reload(0);
	/* a port nobody configured makes no series */
	count_reprogram("gone", COUNT_RECOV_PERFORMED);
	/* and the journal's events are not read back: the same words logged
	 * count nothing (a renamed field cannot break a metric) */
	log_event(LOG_EV_BUNDLE_WRITTEN, LOG_INFO,
		  LOG_FIELDS({ LF_PORT, "srv" }, { LF_INCIDENT, "9" }, { LF_VERDICT, "port-drop" },
			     { LF_ACTION, "reprogram" }), "x");
	log_event(LOG_EV_REPROGRAM_PERFORMED, LOG_INFO, LOG_FIELDS({ LF_PORT, "srv" }), "x");
	log_event(LOG_EV_RELOAD_FAILED, LOG_INFO, NULL, "x");
	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_port_incidents_total{port=\"srv\",verdict=\"port-drop\"}"), 2);
	assert_false(has(t, "nicstalld_port_incidents_total{port=\"srv\",verdict=\"manual\"}"));
	assert_int_equal(value(t, "nicstalld_port_incident_releases_total{port=\"srv\",action=\"reprogram\"}"), 1);
	assert_int_equal(value(t, "nicstalld_port_incident_releases_total{port=\"srv\",action=\"none\"}"), 1);
	assert_int_equal(value(t, "nicstalld_port_recoveries_total{port=\"srv\",action=\"reprogram\","
			      "outcome=\"performed\"}"), 1);
	assert_int_equal(value(t, "nicstalld_port_recoveries_total{port=\"srv\",action=\"reprogram\","
			      "outcome=\"refused\"}"), 2);
	assert_int_equal(value(t, "nicstalld_port_recoveries_total{port=\"srv\",action=\"reprogram\","
			      "outcome=\"failed\"}"), 1);
	assert_int_equal(value(t, "nicstalld_port_incidents_suppressed_total{port=\"srv\"}"), 1);
	assert_int_equal(value(t, "nicstalld_bundles_total{outcome=\"written\"}"), 2);
	assert_int_equal(value(t, "nicstalld_bundles_total{outcome=\"failed\"}"), 1);
	assert_int_equal(value(t, "nicstalld_bundle_hook_runs_total{outcome=\"timeout\"}"), 1);
	assert_int_equal(value(t, "nicstalld_bundle_hook_dropped_total"), 1);
	assert_int_equal(value(t, "nicstalld_reloads_total{outcome=\"failed\"}"), 1);
	assert_null(strstr(t, "\"gone\""));
	free(t);
	{
		char s[256];

		metrics_summary(f->m, s, sizeof(s));
		assert_string_equal(s, "1/1 port(s) up, 0 flow(s) watched, 0 stalled; 2 incident(s), "
				    "last port-drop on srv");
	}
}

static void metrics_render__many_verdicts__bounded_series(void **state)
{
	struct fx *f = *state;
	char *t, v[32];
	unsigned n = 0;

	for (int i = 0; i < 100; i++) {
		snprintf(v, sizeof(v), "local-%d", i);
		count_bundle("srv", 1, 1, v, NULL);
	}
	t = metrics_render(f->m);
	for (const char *p = t; (p = strstr(p, "\nnicstalld_port_incidents_total{")); p++)
		n++;
	assert_true(n <= 32);
	assert_int_equal(value(t, "nicstalld_port_incidents_total{port=\"srv\",verdict=\"other\"}"),
			 100 - 31);
	free(t);
}

static void metrics_write__file__atomic_and_world_readable(void **state)
{
	struct fx *f = *state;
	char path[512], tmp[512], err[256], buf[64];
	struct stat st;
	mode_t old = umask(077);
	FILE *fp;

	snprintf(path, sizeof(path), "%s/nicstalld.prom", f->dir);
	snprintf(tmp, sizeof(tmp), "%s/.nicstalld.prom.tmp", f->dir);
	coretest_write(f->dir, ".nicstalld.prom.tmp", "a leftover of a crash");
	assert_int_equal(metrics_write(f->m, err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);     /* the collector's user reads it */
	assert_int_equal(access(tmp, F_OK), -1);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_string_equal(buf, "# HELP nicstalld_build_info The running nicstalld's version.\n");
	fclose(fp);
	/* a directory that is gone: an error naming it */
	coretest_rmdir(strdup(f->dir));
	assert_int_equal(metrics_write(f->m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, f->dir));
	mkdir(f->dir, 0700);
}

/* A real peers module on loopback: a peer that never answers (nothing
 * listens at its port) and datagrams from its address that are garbage or
 * signed with another key. */
static void metrics_render__peers__unanswered_and_refused_by_reason(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in to = { .sin_family = AF_INET }, from = { .sin_family = AF_INET };
	unsigned lport = 20000 + (unsigned)(getpid() % 20000), pport = lport + 1;
	char text[1024], err[256];
	struct conf *c;
	struct peers *ps;
	char *t;
	int fd;

	coretest_write(f->dir, "fleet.keys", "1 SHA256 HEX:00112233445566778899aabbccddeeff"
		       "00112233445566778899aabbccddeeff\n");
	snprintf(text, sizeof(text), "%s/fleet.keys", f->dir);
	assert_int_equal(chmod(text, 0600), 0);
	snprintf(text, sizeof(text), "[daemon]\nhost_name = rank0\npeer_listen = 127.0.0.1:%u\n"
		 "peer_wait = 30ms\n[port \"srv\"]\nstats_file = %s/s.txt\nprofile = mlx5\n"
		 "[peer rank1]\naddress = 127.0.0.1\nport = %u\nkey_file = %s/fleet.keys\n",
		 lport, f->dir, pport, f->dir);
	c = coretest_conf(text);
	assert_non_null(c);
	ps = peers_new(f->l, c, err, sizeof(err));
	assert_non_null(ps);

	/* no peers set: the families are there, without series */
	t = metrics_render(f->m);
	assert_non_null(strstr(t, "# TYPE nicstalld_peer_notices_unanswered_total counter\n"));
	assert_non_null(strstr(t, "# TYPE nicstalld_peer_refused_total counter\n"));
	assert_null(strstr(t, "nicstalld_peer_refused_total{"));
	free(t);
	metrics_set_peers(f->m, ps);

	/* from the peer's address (its port: the socket binds it) */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	from.sin_addr.s_addr = to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	from.sin_port = htons((uint16_t)pport);
	to.sin_port = htons((uint16_t)lport);
	assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sendto(fd, "garbage!", 8, 0, (struct sockaddr *)&to, sizeof(to)), 8);
	/* two incidents of ours: the peer (this socket) never answers */
	json_object_put(peers_notify(ps, 1, loop_real_ns(), NULL, NULL));
	json_object_put(peers_notify(ps, 2, loop_real_ns(), NULL, NULL));
	coretest_run_for(f->l, 100);
	/* the investigation stops waiting before the deadline: unanswered too */
	json_object_put(peers_notify(ps, 3, loop_real_ns(), NULL, NULL));
	peers_forget(ps, 3);
	close(fd);

	t = metrics_render(f->m);
	assert_int_equal(value(t, "nicstalld_peer_notices_unanswered_total{peer=\"rank1\"}"), 3);
	assert_int_equal(value(t, "nicstalld_peer_refused_total{peer=\"rank1\",reason=\"garbage\"}"), 3);
	assert_int_equal(value(t, "nicstalld_peer_refused_total{peer=\"rank1\",reason=\"bad_signature\"}"), 0);
	/* unanswered is its own family, not a reason */
	assert_null(strstr(t, "reason=\"unanswered\""));
	free(t);
	metrics_set_peers(f->m, NULL);
	peers_free(ps);
	conf_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(metrics_render__gap_and_drops__running_totals_from_the_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_render__read_skew__counter_never_decreases, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_render__healthy_rate__learned_from_the_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_render__events__counted_by_label, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_render__many_verdicts__bounded_series, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_write__file__atomic_and_world_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_render__peers__unanswered_and_refused_by_reason, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
