/* Unit tests: benchmark runs. The certificate's word and reason from what
 * happened (pure), the checks of names and labels, the control requests'
 * validation and bounds, the policy the daemon's interventions follow, and
 * the certificate files (first line, sha256sum line, incomplete at the
 * next begin, at the stop and at the next start). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cmd.h"
#include "daemon/conf.h"
#include "daemon/metrics.h"
#include "daemon/ports.h"
#include "daemon/runs.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

/* ---- the word (pure) ---- */

static void run_verdict__nothing__clean(void **state)
{
	struct run_facts f = { 0 };
	char r[256];

	(void)state;
	assert_int_equal(run_verdict(&f, r, sizeof(r)), RUN_CLEAN);
	assert_string_equal(r, "no incident, no counter that matters moved, no intervention");
}

static void run_verdict__incident_or_counter__anomalous_first_named(void **state)
{
	struct run_facts f = { 0 };
	char r[256];

	(void)state;
	f.moved = 3;
	f.first_moved = "port srv: rx_discards_phy +4";
	assert_int_equal(run_verdict(&f, r, sizeof(r)), RUN_ANOMALOUS);
	assert_string_equal(r, "a counter that matters moved: port srv: rx_discards_phy +4 "
			    "(and 2 more counters)");
	/* an incident is the reason before a counter */
	f.incidents = 1;
	f.first_incident = "incident 7 opened on port srv (verdict port-drop, bundle B)";
	assert_int_equal(run_verdict(&f, r, sizeof(r)), RUN_ANOMALOUS);
	assert_string_equal(r, "incident 7 opened on port srv (verdict port-drop, bundle B)");
}

static void run_verdict__intervention__tainted_over_anomalous(void **state)
{
	struct run_facts f = { 0 };
	char r[256];

	(void)state;
	f.incidents = 2;
	f.first_incident = "incident 1";
	f.taints = 1;
	f.first_taint = "promisc-capture of port srv at T (+1.2 s)";
	assert_int_equal(run_verdict(&f, r, sizeof(r)), RUN_TAINTED);
	assert_string_equal(r, "the daemon changed the system: promisc-capture of port srv at T (+1.2 s)");
	f.taints = 2;
	run_verdict(&f, r, sizeof(r));
	assert_non_null(strstr(r, "(and 1 more interventions)"));
}

static void run_verdict__not_ended__incomplete_over_all(void **state)
{
	struct run_facts f = { 0 };
	char r[256];

	(void)state;
	f.taints = 1;
	f.first_taint = "x";
	f.incomplete = "never ended: the daemon stopped during the run";
	assert_int_equal(run_verdict(&f, r, sizeof(r)), RUN_INCOMPLETE);
	assert_string_equal(r, "never ended: the daemon stopped during the run");
	assert_string_equal(run_word_name(RUN_INCOMPLETE), "incomplete");
	assert_int_equal(run_word_parse("tainted"), RUN_TAINTED);
	assert_int_equal(run_word_parse("dirty"), -1);
}

/* ---- names and labels ---- */

static void run_name_check__good_and_bad__clear_errors(void **state)
{
	char e[256], long300[301];

	(void)state;
	assert_int_equal(run_name_check("r1", e, sizeof(e)), 0);
	assert_int_equal(run_name_check("mono-32.cold_node", e, sizeof(e)), 0);
	assert_int_equal(run_name_check("a/b", e, sizeof(e)), -1);
	assert_non_null(strstr(e, "has a '/'"));
	memset(long300, 'x', 300);
	long300[300] = 0;
	assert_int_equal(run_name_check(long300, e, sizeof(e)), -1);
	assert_string_equal(e, "run name: 300 characters, at most 64");
	assert_int_equal(run_name_check("", e, sizeof(e)), -1);
	assert_string_equal(e, "run name: empty");
	assert_int_equal(run_name_check(".hidden", e, sizeof(e)), -1);
	assert_non_null(strstr(e, "must start with a letter or digit"));
	assert_int_equal(run_name_check("..", e, sizeof(e)), -1);
	assert_int_equal(run_name_check("run\x1b[2J", e, sizeof(e)), -1);
	assert_string_equal(e, "run name: character 4 (byte 0x1b) is not one of [A-Za-z0-9_.-]");
	assert_int_equal(run_name_check("a@b", e, sizeof(e)), -1);
}

static void run_label_check__kv__key_and_value_checked(void **state)
{
	char e[256], big[400];
	size_t k;

	(void)state;
	assert_int_equal(run_label_check("node=warm", &k, e, sizeof(e)), 0);
	assert_int_equal(k, 4);
	assert_int_equal(run_label_check("empty=", &k, e, sizeof(e)), 0);
	assert_int_equal(run_label_check("novalue", &k, e, sizeof(e)), -1);
	assert_non_null(strstr(e, "not KEY=VALUE"));
	assert_int_equal(run_label_check("=v", &k, e, sizeof(e)), -1);
	assert_int_equal(run_label_check("a b=v", &k, e, sizeof(e)), -1);
	assert_int_equal(run_label_check("k=\x07", &k, e, sizeof(e)), -1);
	assert_non_null(strstr(e, "not printable ASCII"));
	snprintf(big, sizeof(big), "k=%0300d", 1);
	assert_int_equal(run_label_check(big, &k, e, sizeof(e)), -1);
	assert_non_null(strstr(e, "at most 256"));
}

/* ---- the registry ---- */

struct fx {
	struct loop *l;
	struct ports *ps;
	struct conf c;
	struct runs *r;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	snprintf(x->c.state_dir, sizeof(x->c.state_dir), "/tmp/nicstall-runs.XXXXXX");
	assert_non_null(mkdtemp(x->c.state_dir));
	x->l = loop_new();
	x->ps = ports_new(x->l, "");
	x->r = runs_new(x->l, x->ps, NULL, &x->c);
	assert_non_null(x->r);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	char cmd[PATH_MAX + 16];

	runs_free(x->r);
	ports_free(x->ps);
	loop_free(x->l);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->c.state_dir);
	assert_int_equal(system(cmd), 0);
	free(x);
	return 0;
}

static int ok_of(struct json_object *o)
{
	int ok = jx_bool(o, "ok");

	json_object_put(o);
	return ok;
}

static const char *word_of(struct fx *x, const char *name, char *buf, size_t len)
{
	struct json_object *o = runs_show(x->r, name);

	util_strlcpy(buf, jx_text(jx_get(o, "certificate"), "word"), len);
	json_object_put(o);
	return buf;
}

static void runs_begin__bounds__per_uid_and_total(void **state)
{
	struct fx *x = *state;
	struct json_object *o;
	char name[32];

	for (int i = 0; i < RUNS_MAX_PER_UID; i++) {
		snprintf(name, sizeof(name), "u1000-%d", i);
		assert_true(ok_of(runs_begin(x->r, name, NULL, 1000)));
	}
	o = runs_begin(x->r, "one-more", NULL, 1000);
	assert_false(jx_bool(o, "ok"));
	assert_non_null(strstr(jx_text(o, "error"), "uid 1000 has 8 runs open, at most 8"));
	json_object_put(o);
	/* 10,000 tries: still refused, nothing more held */
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "flood%d", i);
		assert_false(ok_of(runs_begin(x->r, name, NULL, 1000)));
	}
	assert_int_equal(runs_open_count(x->r), RUNS_MAX_PER_UID);
	for (int u = 1001; runs_open_count(x->r) < RUNS_MAX_OPEN; u++) {
		snprintf(name, sizeof(name), "u%d", u);
		assert_true(ok_of(runs_begin(x->r, name, NULL, (uid_t)u)));
	}
	o = runs_begin(x->r, "root-too", NULL, 0);
	assert_false(jx_bool(o, "ok"));
	assert_non_null(strstr(jx_text(o, "error"), "32 runs are open, at most 32"));
	json_object_put(o);
}

static void runs_end__unknown_or_other_uid__refused(void **state)
{
	struct fx *x = *state;
	struct json_object *o;

	o = runs_end(x->r, "nosuch", 1000, NULL);
	assert_string_equal(jx_text(o, "error"), "run end: no open run 'nosuch' (open: none)");
	json_object_put(o);
	assert_true(ok_of(runs_begin(x->r, "mine", NULL, 1000)));
	o = runs_end(x->r, "mine", 1001, NULL);
	assert_string_equal(jx_text(o, "error"), "run end: run 'mine' belongs to uid 1000");
	json_object_put(o);
	o = runs_end(x->r, "a/b", 1000, NULL);
	assert_non_null(strstr(jx_text(o, "error"), "has a '/'"));
	json_object_put(o);
	{
		/* the client's status: only exit, signal and a printable command */
		struct json_object *st = json_tokener_parse(
			"{\"exit\": 3, \"signal\": 9999, \"command\": \"b\\u001b[2J\", \"junk\": [1]}");

		o = runs_end(x->r, "mine", 0, st);              /* root may */
		assert_true(jx_bool(o, "ok"));
		assert_string_equal(json_object_to_json_string_ext(
			jx_get(jx_get(o, "certificate"), "command_status"), JSON_C_TO_STRING_PLAIN),
			"{\"exit\":3}");
		json_object_put(o);
		json_object_put(st);
	}
}

static void runs_begin__labels__checked(void **state)
{
	struct fx *x = *state;
	struct json_object *l = json_object_new_object(), *o;

	jx_add_str(l, "node", "warm");
	assert_true(ok_of(runs_begin(x->r, "lab", l, 1000)));
	jx_add_str(l, "bad key", "v");
	o = runs_begin(x->r, "lab2", l, 1000);
	assert_non_null(strstr(jx_text(o, "error"), "label key 'bad key'"));
	json_object_put(o);
	json_object_put(l);
	l = json_object_new_object();
	json_object_object_add(l, "n", json_object_new_int(3));
	o = runs_begin(x->r, "lab3", l, 1000);
	assert_non_null(strstr(jx_text(o, "error"), "label 'n': a string"));
	json_object_put(o);
	json_object_put(l);
	l = json_object_new_array();
	o = runs_begin(x->r, "lab4", l, 1000);
	assert_non_null(strstr(jx_text(o, "error"), "must be an object"));
	json_object_put(o);
	json_object_put(l);
}

static void runs_allow__policy__observe_refuses_recover_taints(void **state)
{
	struct fx *x = *state;
	char why[160], w[32];

	assert_int_equal(runs_allow(x->r, 0, why, sizeof(why)), 1);      /* no run */
	assert_true(ok_of(runs_begin(x->r, "bench", NULL, 0)));
	assert_int_equal(runs_allow(x->r, 0, why, sizeof(why)), 0);
	assert_string_equal(why, "run bench is open and run_policy = observe");
	assert_int_equal(runs_allow(x->r, 1, why, sizeof(why)), 1);      /* root asked */
	/* a capture without a mode change is noted, changes nothing */
	runs_intervention(x->r, "capture", "srv", loop_mono_ns(), 0, "plain");
	assert_true(ok_of(runs_end(x->r, "bench", 0, NULL)));
	assert_string_equal(word_of(x, "bench", w, sizeof(w)), "clean");
	x->c.run_policy = RUN_POLICY_RECOVER;
	assert_true(ok_of(runs_begin(x->r, "bench", NULL, 0)));
	assert_int_equal(runs_allow(x->r, 0, why, sizeof(why)), 1);
	runs_intervention(x->r, "promisc-capture", "srv", loop_mono_ns(), 1, "promiscuous transition");
	assert_true(ok_of(runs_end(x->r, "bench", 0, NULL)));
	assert_string_equal(word_of(x, "bench", w, sizeof(w)), "tainted");
}

static void runs_incident__bundle_later__certificate_waits_names_it(void **state)
{
	struct fx *x = *state;
	struct json_object *o, *rec = json_object_new_object();
	char w[32];
	uint64_t opened;

	assert_true(ok_of(runs_begin(x->r, "r4", NULL, 0)));
	runs_incident(x->r, 3, 9, "srv");
	opened = loop_mono_ns();
	o = runs_end(x->r, "r4", 0, NULL);
	assert_string_equal(jx_text(jx_get(o, "certificate"), "state"), "pending");
	json_object_put(o);
	/* the bundle names the run: it was open when the incident opened */
	runs_annotate(x->r, rec, opened);
	assert_string_equal(jx_text(jx_get(rec, "run"), "name"), "r4");
	json_object_put(rec);
	runs_bundle(x->r, 9, "port-drop", "/s/bundles/20261203T000000Z-h-srv-port-drop");
	o = runs_show(x->r, "r4");
	assert_string_equal(jx_text(jx_get(o, "certificate"), "state"), "written");
	assert_string_equal(jx_text(jx_get(o, "certificate"), "reason"),
			    "incident 3 opened on port srv (verdict port-drop, bundle "
			    "20261203T000000Z-h-srv-port-drop)");
	json_object_put(o);
	assert_string_equal(word_of(x, "r4", w, sizeof(w)), "anomalous");
	assert_int_equal(runs_certificates(x->r, RUN_ANOMALOUS), 1);
}

/* The files: begin twice closes the first incomplete; the daemon's stop
 * closes the open one incomplete; an .open file found at start is closed
 * incomplete. Each certificate: one word, then JSON; its sha256 line. */
static int count_word(const char *dir, const char *prefix, const char *word)
{
	char path[PATH_MAX + 300], line[64];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		FILE *f;

		if (strncmp(de->d_name, prefix, strlen(prefix)) || l < 5 ||
		    strcmp(de->d_name + l - 5, ".cert"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f) && !strncmp(line, word, strlen(word)) &&
		    !strcmp(line + strlen(word), "\n"))
			n++;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "cd %s && sha256sum -c --quiet %s.sha256 >/dev/null",
			 dir, de->d_name);
		assert_int_equal(system(path), 0);
	}
	if (d)
		closedir(d);
	return n;
}

static void runs_files__never_ended__incomplete_never_lost(void **state)
{
	struct fx *x = *state;
	struct json_object *o;
	char dir[PATH_MAX + 8], w[32];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/runs", x->c.state_dir);
	assert_true(ok_of(runs_begin(x->r, "twice", NULL, 1000)));
	o = runs_begin(x->r, "twice", NULL, 1000);
	assert_non_null(jx_str(o, "closed_incomplete"));
	json_object_put(o);
	assert_true(ok_of(runs_end(x->r, "twice", 1000, NULL)));
	assert_true(ok_of(runs_begin(x->r, "atstop", NULL, 1000)));
	/* a killed daemon's run */
	snprintf(dir + strlen(dir), 64, "/killed@20260101T000000.000Z.open");
	f = fopen(dir, "w");
	assert_non_null(f);
	fputs("{\"run\": \"killed\", \"pid\": 4242, \"uid\": 1000}\n", f);
	fclose(f);
	runs_free(x->r);        /* waits for the writer */
	snprintf(dir, sizeof(dir), "%s/runs", x->c.state_dir);
	assert_int_equal(count_word(dir, "twice@", "incomplete"), 1);
	assert_int_equal(count_word(dir, "twice@", "clean"), 1);
	assert_int_equal(count_word(dir, "atstop@", "incomplete"), 1);
	x->r = runs_new(x->l, x->ps, NULL, &x->c);
	assert_string_equal(word_of(x, "killed", w, sizeof(w)), "incomplete");
	o = runs_show(x->r, "killed");
	assert_non_null(strstr(jx_text(jx_get(o, "certificate"), "reason"),
			       "the daemon (pid 4242) stopped during the run"));
	json_object_put(o);
	runs_free(x->r);
	x->r = runs_new(x->l, x->ps, NULL, &x->c);
	assert_int_equal(count_word(dir, "killed@", "incomplete"), 1);
	assert_int_equal(access(dir, F_OK), 0);
	strcat(dir, "/killed@20260101T000000.000Z.open");
	assert_int_equal(access(dir, F_OK), -1);        /* closed once */
}

/* ---- the metrics ---- */

static void metrics__runs__info_by_name_certificates_by_word(void **state)
{
	struct fx *x = *state;
	struct metrics *m = metrics_new(x->l, x->ps, NULL, &x->c);
	char *t;

	assert_non_null(m);
	metrics_set_runs(m, x->r);
	assert_true(ok_of(runs_begin(x->r, "done", NULL, 0)));
	assert_true(ok_of(runs_end(x->r, "done", 0, NULL)));
	assert_true(ok_of(runs_begin(x->r, "bench-7", NULL, 0)));
	t = metrics_render(m);
	assert_non_null(t);
	assert_non_null(strstr(t, "\nnicstalld_run_info{run=\"bench-7\"} 1\n"));
	assert_null(strstr(t, "run=\"done\""));
	assert_non_null(strstr(t, "\nnicstalld_run_certificates_total{word=\"clean\"} 1\n"));
	assert_non_null(strstr(t, "\nnicstalld_run_certificates_total{word=\"tainted\"} 0\n"));
	free(t);
	metrics_free(m);
}

/* ---- the control request ---- */

static void cmd_run__malformed__clear_errors(void **state)
{
	struct fx *x = *state;
	struct cmd_env env = { .ports = x->ps, .runs = x->r };
	static const struct { const char *req, *err; } cases[] = {
		{ "{\"cmd\":\"run\"}", "run: missing \"op\" (begin, end, show, list)" },
		{ "{\"cmd\":\"run\",\"op\":\"stop\"}", "run: unknown op 'stop' (begin, end, show, list)" },
		{ "{\"cmd\":\"run\",\"op\":\"begin\"}", "run begin: missing \"name\"" },
		{ "{\"cmd\":\"run\",\"op\":\"end\",\"name\":7}", "run end: \"name\" must be a string" },
		{ "{\"cmd\":\"run\",\"op\":\"show\",\"name\":\"nope\"}", NULL },
		/* outside a connection there is no uid: never a run of nobody's */
		{ "{\"cmd\":\"run\",\"op\":\"begin\",\"name\":\"x\"}", "run begin: the client's uid is unknown" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *req = json_tokener_parse(cases[i].req);
		struct json_object *o = cmd_dispatch(req, CTL_READ, &env);

		assert_false(jx_bool(o, "ok"));
		if (cases[i].err)
			assert_string_equal(jx_text(o, "error"), cases[i].err);
		else
			assert_non_null(strstr(jx_text(o, "error"), "no certificate of run 'nope'"));
		json_object_put(o);
		json_object_put(req);
	}
	{
		struct json_object *req = json_tokener_parse("{\"cmd\":\"run\",\"op\":\"list\"}");
		struct json_object *o = cmd_dispatch(req, CTL_READ, &env);

		assert_true(jx_bool(o, "ok"));
		assert_string_equal(jx_text(o, "run_policy"), "observe");
		json_object_put(o);
		json_object_put(req);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_verdict__nothing__clean),
		cmocka_unit_test(run_verdict__incident_or_counter__anomalous_first_named),
		cmocka_unit_test(run_verdict__intervention__tainted_over_anomalous),
		cmocka_unit_test(run_verdict__not_ended__incomplete_over_all),
		cmocka_unit_test(run_name_check__good_and_bad__clear_errors),
		cmocka_unit_test(run_label_check__kv__key_and_value_checked),
		cmocka_unit_test_setup_teardown(runs_begin__bounds__per_uid_and_total, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_end__unknown_or_other_uid__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_begin__labels__checked, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_allow__policy__observe_refuses_recover_taints, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_incident__bundle_later__certificate_waits_names_it, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_files__never_ended__incomplete_never_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics__runs__info_by_name_certificates_by_word, setup, teardown),
		cmocka_unit_test_setup_teardown(cmd_run__malformed__clear_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
