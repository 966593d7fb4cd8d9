/* Unit tests for the rules language (rules/): syntax errors with their
 * positions, reloads, overrides by later files and dirs, the daemon's
 * loader, the three-valued evaluation, hostile rule text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "rules/rules.h"
#include "rules_helpers.h"

/* ---- the language ---- */

static void test_rules_load__several_errors__each_with_position(void **state)
{
	const char *names[] = { "/x/bad.rules" };
	const char *texts[] = {
		"signal a mlx5 = rx_packets_phy\n"                 /* 1 ok */
		"rule r1 {\n"                                      /* 2 */
		"    verdict v1\n"                                 /* 3 */
		"    require window.a > 0 and\n"                   /* 4: missing operand */
		"    require nosuch > 1\n"                         /* 5: unknown name */
		"    require window.a >< 2\n"                      /* 6: bad operator use */
		"    explain \"{window.a\"\n"                      /* 7: unclosed brace */
		"    bogus 1\n"                                    /* 8: unknown statement */
		"}\n"
		"rule r2 {\n"                                      /* 10: no verdict */
		"    require window.zzz > 0\n"                     /* 11: unknown signal */
		"}\n"
	};
	struct msgs ms = { 0 };
	struct rules *r = (struct rules *)0x1;   /* untouched on error */
	int n;

	(void)state;
	n = rules_load_texts(names, texts, 1, &r, collect_msg, &ms);
	assert_true(n >= 6);
	assert_int_equal(ms.n, n);
	assert_ptr_equal(r, (struct rules *)0x1);
	for (int i = 0; i < ms.n; i++)
		print_message("%s\n", ms.m[i]);
	assert_non_null(strstr(ms.m[0], "/x/bad.rules:4:29: expected a value, got end of line"));
	{
		int seen5 = 0, seen6 = 0, seen7 = 0, seen8 = 0, seen10 = 0, seen11 = 0;

		for (int i = 0; i < ms.n; i++) {
			seen5 |= !!strstr(ms.m[i], "bad.rules:5:13: unknown name 'nosuch'");
			seen6 |= !!strstr(ms.m[i], "bad.rules:6:");
			seen7 |= !!strstr(ms.m[i], "bad.rules:7:") && !!strstr(ms.m[i], "without '}'");
			seen8 |= !!strstr(ms.m[i], "bad.rules:8:5: unknown statement 'bogus'");
			seen10 |= !!strstr(ms.m[i], "bad.rules:10:1: rule r2 has no verdict");
			seen11 |= !!strstr(ms.m[i], "bad.rules:11:13: unknown signal 'zzz'");
		}
		assert_true(seen5 && seen6 && seen7 && seen8 && seen10 && seen11);
	}
}

/* ruled_out: a rule's own words in "What it is not", rendered like
 * explain when a term is false; not when the rule could not be decided. */
static void test_rules_classify__ruled_out__text_when_false_only(void **state)
{
	const char *names[] = { "t.rules" };
	const char *texts[] = {
		"rule a {\n verdict va\n let n = 3\n require n > 5\n"
		" ruled_out \"not a: n is {n}, x is {ping.sent}\"\n}\n"
		"rule b {\n verdict vb\n require ping.ok\n ruled_out \"not b\"\n}\n"
	};
	const char *bad[] = { "rule a {\n verdict va\n ruled_out \"x\"\n ruled_out \"y\"\n}\n"
			      "rule b {\n verdict vb\n ruled_out \"{nosuch}\"\n}\n" };
	struct json_object *facts = json_object_new_object(), *res, *nots;
	struct msgs ms = { 0 };
	struct rules *r = NULL;

	(void)state;
	assert_int_equal(rules_load_texts(names, texts, 1, &r, print_msg, NULL), 0);
	res = rules_classify(r, facts);
	nots = json_object_object_get(res, "not");
	assert_int_equal(json_object_array_length(nots), 2);
	/* a: decided false, its words; an unknown value in words, with why */
	assert_string_equal(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(nots, 0), "text")), "not a: n is 3, x is unknown (pings missing)");
	/* b: ping.ok unknown, not decided: no words of its own */
	assert_null(json_object_object_get(json_object_array_get_idx(nots, 1), "text"));
	json_object_put(res);
	json_object_put(facts);
	rules_free(r);
	r = NULL;
	assert_int_equal(rules_load_texts(names, bad, 1, &r, collect_msg, &ms), 2);
	assert_non_null(strstr(ms.m[0], "t.rules:4:2: rule a: second ruled_out"));
	assert_non_null(strstr(ms.m[1], "t.rules:8:"));
	assert_non_null(strstr(ms.m[1], "nosuch"));
}

static void test_rules_load__bad_reload__keeps_running_rules(void **state)
{
	const char *names[] = { "t.rules" };
	const char *good[] = { "rule a {\n verdict x\n require 1 > 0\n}\n" };
	const char *bad[] = { "rule a {\n verdict x\n require 1 >\n}\n" };
	struct rules *r = NULL, *keep;

	(void)state;
	assert_int_equal(rules_load_texts(names, good, 1, &r, print_msg, NULL), 0);
	keep = r;
	assert_int_equal(rules_load_texts(names, bad, 1, &r, NULL, NULL), 1);
	assert_ptr_equal(r, keep);
	assert_int_equal(rules_count(r), 1);
	rules_free(r);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_rules_load__later_dir__replaces_same_name(void **state)
{
	char d1[] = "/tmp/rules-test-XXXXXX", d2[] = "/tmp/rules-test-XXXXXX", p[300];
	const char *dirs[3];
	struct rules *r = NULL;
	struct json_object *f, *res;

	(void)state;
	assert_non_null(mkdtemp(d1));
	assert_non_null(mkdtemp(d2));
	snprintf(p, sizeof(p), "%s/10-a.rules", d1);
	write_file(p, "rule first {\n verdict from-d1\n require 1 == 2\n}\n");
	snprintf(p, sizeof(p), "%s/20-b.rules", d1);
	write_file(p, "rule second {\n verdict kept\n require 1 == 1\n}\n");
	snprintf(p, sizeof(p), "%s/10-a.rules", d2);
	write_file(p, "rule first {\n verdict from-d2\n require true\n"
		   " explain \"override {1 + 1}\"\n}\n");
	snprintf(p, sizeof(p), "%s/notarule.txt", d2);
	write_file(p, "garbage {{{\n");
	dirs[0] = d1;
	dirs[1] = d2;
	dirs[2] = "/nonexistent/rules.d";    /* a missing dir is skipped */
	assert_int_equal(rules_load(dirs, 3, &r, print_msg, NULL), 0);
	assert_int_equal(rules_count(r), 2);
	f = json_object_new_object();
	res = rules_classify(r, f);
	assert_string_equal(sget(res, "verdict"), "from-d2");
	assert_string_equal(sget(res, "explanation"), "override 2");
	assert_true(json_object_get_boolean(oget(not_entry(res, "second"), "matched")));
	json_object_put(res);
	json_object_put(f);
	rules_free(r);
	snprintf(p, sizeof(p), "%s/10-a.rules", d1); unlink(p);
	snprintf(p, sizeof(p), "%s/20-b.rules", d1); unlink(p);
	snprintf(p, sizeof(p), "%s/10-a.rules", d2); unlink(p);
	snprintf(p, sizeof(p), "%s/notarule.txt", d2); unlink(p);
	rmdir(d1);
	rmdir(d2);
}

static const char *one_rule(const char *require)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "signal s mlx5 = a + b\n"
		 "signal s generic = netdev/x\n"
		 "signal t mlx5 = sum(q*_drops)\n"
		 "signal w mlx5 = which(q*_drops)\n"
		 "signal z mlx5 = which(z*_drops)\n"
		 "rule r {\n verdict yes\n require %s\n}\n", require);
	return buf;
}

/* Value of the only rule's first term: 1 true, 0 false, -1 unknown. */
static int term_value(const char *require, const char *facts_txt)
{
	const char *names[] = { "t.rules" };
	const char *texts[] = { one_rule(require) };
	struct rules *r = NULL;
	struct json_object *f, *res, *v;
	int out;

	if (rules_load_texts(names, texts, 1, &r, print_msg, NULL))
		fail_msg("rule '%s' did not load", require);
	f = json_tokener_parse(facts_txt);
	res = rules_classify(r, f);
	if (!strcmp(sget(res, "verdict"), "yes")) {
		out = 1;
	} else {
		v = oget(not_entry(res, "r"), "value");
		out = v ? json_object_get_boolean(v) : -1;
	}
	json_object_put(res);
	json_object_put(f);
	rules_free(r);
	return out;
}

static const char *F1 =
	"{\"port\":\"p\",\"ports\":{\"p\":{\"profile\":\"mlx5\",\"link_up\":true,"
	"\"stall\":{\"span_s\":2,\"counters\":{\"a\":10,\"q0_drops\":1,\"q7_drops\":2,"
	"\"q3_drops\":2,\"z1_drops\":0}},"
	"\"baseline\":{\"span_s\":10,\"counters\":{\"a\":5,\"b\":5}}},"
	"\"q\":{\"profile\":\"sfc\"}},"
	"\"threads\":[{\"state\":\"S\",\"wchan\":\"futex_wait_queue\",\"vcsw_rate\":10},"
	"{\"state\":\"R\"}],\"pings\":[]}";

static void test_rules_eval__three_valued_logic__as_documented(void **state)
{
	(void)state;
	assert_int_equal(term_value("stall.s == 10", F1), 1);          /* b missing counts 0 */
	assert_int_equal(term_value("stall.t == 5", F1), 1);           /* sum(glob) */
	/* which(glob): the number of the counter that moved most, the lower
	 * on a tie; unknown when none moved (z1 0) or none is there */
	assert_int_equal(term_value("stall.w == 3", F1), 1);
	assert_int_equal(term_value("stall.z == 1", F1), -1);
	assert_int_equal(term_value("known(baseline.w)", F1), 0);
	assert_int_equal(term_value("window.s > 0", F1), -1);          /* no window */
	assert_int_equal(term_value("window.s > 0 or link_up", F1), 1);
	assert_int_equal(term_value("window.s > 0 and not link_up", F1), 0);
	assert_int_equal(term_value("not (window.s > 0)", F1), -1);
	assert_int_equal(term_value("rate(stall.s) == 5", F1), 1);
	assert_int_equal(term_value("baseline_rate(s) == 1", F1), 1);
	assert_int_equal(term_value("baseline_rate(s - s) == 0", F1), 1);
	assert_int_equal(term_value("ping.ok", F1), -1);               /* no pings recorded */
	assert_int_equal(term_value("known(ping.ok) == false", F1), 1);
	assert_int_equal(term_value("default(held, 7) == 7", F1), 1);
	assert_int_equal(term_value("any(thread.wchan ~ \"futex\")", F1), 1);
	assert_int_equal(term_value("all(thread.wchan ~ \"futex\")", F1), -1); /* second has none */
	assert_int_equal(term_value("count(thread.state ~ \"[SD]\") == 1", F1), 1);
	assert_int_equal(term_value("first(thread.vcsw_rate, thread.state == \"S\") == 10", F1), 1);
	assert_int_equal(term_value("any(port.profile == \"sfc\")", F1), 1);
	assert_int_equal(term_value("any(port.stall.s > 5)", F1), 1);
	assert_int_equal(term_value("stall.s / 0 > 1", F1), -1);       /* division by zero */
	assert_int_equal(term_value("port == \"p\" and profile == \"mlx5\"", F1), 1);
	assert_int_equal(term_value("\"oo_eplock_lock\" ~ \"lock\"", F1), 1);
	assert_int_equal(term_value("\"R\" !~ \"[SD]\"", F1), 1);
	assert_int_equal(term_value("1 + 2 * 3 == 7 and -2 < 0", F1), 1);
}

static void test_rules_load__hostile_text__no_crash(void **state)
{
	static const char *const texts[] = {
		"", "rule", "rule {", "rule a {", "}", "rule a {\n verdict\n}",
		"signal", "signal x", "signal x mlx5 =", "signal x mlx5 = sum(",
		"signal x mlx5 = sum(a*\n", "signal x mlx5 = which(", "signal x mlx5 = which()\n",
		"rule a {\n verdict v\n require which(a*) > 0\n}", "rule a {\n verdict v\n require ((((((((((((((((((((((((((((((("
		"(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1\n}",
		"rule a {\n verdict v\n explain \"{\"\n}", "rule a {\n verdict v\n explain \"}{}{\"\n}",
		"rule a {\n verdict v\n require \"unterminated\n}", "\x01\x02\xff",
		"rule a {\n verdict v\n require 1e99999 > 0\n}",
		"rule a {\n verdict v\n require any(1)\n}",
		"rule a {\n verdict v\n require thread.wchan ~ \"x\"\n}",
		"rule a {\n verdict v\n require any(thread.pid == 1 and flow.src == \"x\")\n}",
		"rule a {\n verdict v\n require rate(1)\n}",
		"rule a {\n verdict v\n let x = 1\n let x = 2\n}",
		"rule a {\n verdict v\n}\nrule a {\n verdict w\n}",
		"signal x mlx5 = a\nsignal x mlx5 = b\nrule a {\n verdict v\n}",
		"signal x mlx5 = a > b\nrule a {\n verdict v\n}",
	};
	const char *names[] = { "h.rules" };

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct rules *r = NULL;
		struct msgs ms = { 0 };
		const char *t[] = { texts[i] };

		assert_true(rules_load_texts(names, t, 1, &r, collect_msg, &ms) > 0);
		assert_null(r);
		assert_true(ms.n > 0);
		/* a file without rules is an error of the whole set, not of a line */
		if (!strstr(ms.m[0], texts[i][0] ? "h.rules:" : "no rules loaded"))
			fail_msg("text %zu: %s", i, ms.m[0]);
	}
}

/* ---- the daemon's loader: shipped dir, then local dir ---- */

/* Remove a flat directory made by a test. */
static void rm_dir(const char *dir)
{
	char p[600];
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	write_file(p, text);
}

static void test_rules_load_dirs__no_rule_file__no_rules_no_error(void **state)
{
	char d1[] = "/tmp/rules-test-XXXXXX";
	struct rules *r = (struct rules *)0x1;
	struct msgs ms = { 0 };

	(void)state;
	assert_non_null(mkdtemp(d1));
	put(d1, "notarule.txt", "garbage {{{\n");
	/* not installed: a warning, no rules, every verdict unknown */
	assert_int_equal(rules_load_dirs(d1, "/nonexistent/rules.d", &r, collect_msg, &ms), 0);
	assert_null(r);
	assert_int_equal(ms.n, 0);
	assert_int_equal(rules_count(r), 0);
	{
		struct json_object *f = json_object_new_object(), *res = rules_classify(r, f);

		assert_string_equal(sget(res, RK_VERDICT), RULES_VERDICT_UNKNOWN);
		json_object_put(res);
		json_object_put(f);
	}
	rm_dir(d1);
}

static void test_rules_load_dirs__local_file__replaces_shipped(void **state)
{
	char sd[] = "/tmp/rules-test-XXXXXX", ld[] = "/tmp/rules-test-XXXXXX";
	struct rules *r = NULL;
	struct json_object *f, *res;

	(void)state;
	assert_non_null(mkdtemp(sd));
	assert_non_null(mkdtemp(ld));
	put(sd, "10-a.rules", "rule first {\n verdict shipped\n require true\n}\n");
	put(sd, "20-b.rules", "rule second {\n verdict kept\n require 1 == 1\n}\n");
	put(ld, "10-a.rules", "rule first {\n verdict local\n require true\n}\n");
	assert_int_equal(rules_load_dirs(sd, ld, &r, print_msg, NULL), 0);
	assert_non_null(r);
	assert_int_equal(rules_count(r), 2);
	f = json_object_new_object();
	res = rules_classify(r, f);
	assert_string_equal(sget(res, RK_VERDICT), "local");
	json_object_put(res);
	json_object_put(f);
	rules_free(r);
	/* only the local dir holds rules: they are loaded */
	r = NULL;
	assert_int_equal(rules_load_dirs("/nonexistent/rules", ld, &r, print_msg, NULL), 0);
	assert_int_equal(rules_count(r), 1);
	rules_free(r);
	rm_dir(sd);
	rm_dir(ld);
}

static void test_rules_load_dirs__bad_file__errors_rules_untouched(void **state)
{
	char sd[] = "/tmp/rules-test-XXXXXX";
	struct rules *r = (struct rules *)0x1;
	struct msgs ms = { 0 };
	char want[64];

	(void)state;
	assert_non_null(mkdtemp(sd));
	put(sd, "10-a.rules", "rule first {\n verdict v\n require 1 >\n}\n");
	assert_int_equal(rules_load_dirs(sd, "/nonexistent/rules.d", &r, collect_msg, &ms), 1);
	assert_ptr_equal(r, (struct rules *)0x1);
	assert_int_equal(ms.n, 1);
	snprintf(want, sizeof(want), "%s/10-a.rules:3:", sd);
	assert_non_null(strstr(ms.m[0], want));
	rm_dir(sd);
}

static void test_rules_load_dirs__shipped_dir__same_as_rules_load(void **state)
{
	const char *dirs[] = { RULEDIR };
	struct rules *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(rules_load(dirs, 1, &a, print_msg, NULL), 0);
	assert_int_equal(rules_load_dirs(RULEDIR, "/nonexistent/rules.d", &b, print_msg, NULL), 0);
	assert_true(rules_count(a) > 0);
	assert_int_equal(rules_count(a), rules_count(b));
	rules_free(a);
	rules_free(b);
}

/* round() gives people whole frames; a term's value that is not whole is
 * recorded with four significant digits (not 0.66666666666666663). */
static void test_rules_classify__round_and_recorded_values(void **state)
{
	const char *names[] = { "t.rules" };
	const char *texts[] = {
		"rule a {\n verdict va\n let x = 2 / 3\n require x > 1\n"
		" ruled_out \"x is {x}, about {round(x)} frame; {round(2.5)}, {round(-1.4)}\"\n}\n"
	};
	struct json_object *facts = json_object_new_object(), *res, *e;
	struct rules *r = NULL;

	(void)state;
	assert_int_equal(rules_load_texts(names, texts, 1, &r, print_msg, NULL), 0);
	res = rules_classify(r, facts);
	e = json_object_array_get_idx(json_object_object_get(res, "not"), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(e, "text")),
			    "x is 0.67, about 1 frame; 3, -1");
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(
		json_object_object_get(e, "values"), "x"), JSON_C_TO_STRING_PLAIN), "0.6667");
	json_object_put(res);
	json_object_put(facts);
	rules_free(r);
}

/* Every thread fact the daemon writes (FK_T_* in rules/facts.h) is a name
 * a rule may use: a fact added to the facts and not to the parser's table
 * (rules/tree.c) would be documented and refused ("unknown name"). */
static void test_rules_lang__every_thread_fact__a_rule_may_name_it(void **state)
{
	FILE *f = fopen("rules/facts.h", "r");
	char line[256], name[64], rule[256];
	unsigned n = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *names[] = { "t.rules" };
		const char *texts[1];
		struct rules *r = NULL;

		if (sscanf(line, "#define FK_T_%*[A-Z0-9_] \"%63[a-z0-9_]\"", name) != 1)
			continue;
		snprintf(rule, sizeof(rule), "rule a {\n verdict v\n require any(known(thread.%s))\n}",
			 name);
		texts[0] = rule;
		if (rules_load_texts(names, texts, 1, &r, print_msg, NULL))
			fail_msg("thread.%s: a fact rules cannot name", name);
		rules_free(r);
		n++;
	}
	fclose(f);
	assert_true(n >= 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_load__several_errors__each_with_position),
		cmocka_unit_test(test_rules_load__bad_reload__keeps_running_rules),
		cmocka_unit_test(test_rules_classify__ruled_out__text_when_false_only),
		cmocka_unit_test(test_rules_classify__round_and_recorded_values),
		cmocka_unit_test(test_rules_load__later_dir__replaces_same_name),
		cmocka_unit_test(test_rules_eval__three_valued_logic__as_documented),
		cmocka_unit_test(test_rules_load__hostile_text__no_crash),
		cmocka_unit_test(test_rules_load_dirs__no_rule_file__no_rules_no_error),
		cmocka_unit_test(test_rules_load_dirs__local_file__replaces_shipped),
		cmocka_unit_test(test_rules_load_dirs__bad_file__errors_rules_untouched),
		cmocka_unit_test(test_rules_load_dirs__shipped_dir__same_as_rules_load),
		cmocka_unit_test(test_rules_lang__every_thread_fact__a_rule_may_name_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
