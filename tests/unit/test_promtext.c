/* Unit tests for collectors/counters/promtext_parse.c (the Prometheus text exposition
 * format) and the app source's page and options (collectors/counters/src_app.c):
 * the format's own example page (Prometheus docs/instrumenting/
 * exposition_formats.md), every kind of malformed line named with its line
 * number, the bounds, series names with their escapes, keep patterns,
 * scale, left-out values and the app_metrics keys. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/counters/promtext_parse.h"
#include "collectors/counters/src_app.h"

/* The example of the format's documentation ("Text format example"). */
static const char doc_page[] =
	"# HELP http_requests_total The total number of HTTP requests.\n"
	"# TYPE http_requests_total counter\n"
	"http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
	"http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
	"\n"
	"# Escaping in label values:\n"
	"msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
	"file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
	"\n"
	"# Minimalistic line:\n"
	"metric_without_timestamp_and_labels 12.47\n"
	"\n"
	"# A weird metric from before the epoch:\n"
	"something_weird{problem=\"division by zero\"} +Inf -3982045\n"
	"\n"
	"# A histogram, which has a pretty complex representation in the text format:\n"
	"# HELP http_request_duration_seconds A histogram of the request duration.\n"
	"# TYPE http_request_duration_seconds histogram\n"
	"http_request_duration_seconds_bucket{le=\"0.05\"} 24054\n"
	"http_request_duration_seconds_bucket{le=\"0.1\"} 33444\n"
	"http_request_duration_seconds_bucket{le=\"0.2\"} 100392\n"
	"http_request_duration_seconds_bucket{le=\"0.5\"} 129389\n"
	"http_request_duration_seconds_bucket{le=\"1\"} 133988\n"
	"http_request_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
	"http_request_duration_seconds_sum 53423\n"
	"http_request_duration_seconds_count 144320\n"
	"\n"
	"# Finally a summary, which has a complex representation, too:\n"
	"# HELP rpc_duration_seconds A summary of the RPC duration in seconds.\n"
	"# TYPE rpc_duration_seconds summary\n"
	"rpc_duration_seconds{quantile=\"0.01\"} 3102\n"
	"rpc_duration_seconds{quantile=\"0.05\"} 3272\n"
	"rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
	"rpc_duration_seconds{quantile=\"0.9\"} 9001\n"
	"rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
	"rpc_duration_seconds_sum 1.7560473e+07\n"
	"rpc_duration_seconds_count 2693\n";

struct got {
	unsigned n;
	char key[32][2048];
	enum prom_type type[32];
	char family[32][64];
	double value[32];
	int has_ts[32];
	int64_t ts[32];
};

static int collect(const struct prom_sample *s, void *arg)
{
	struct got *g = arg;

	if (g->n >= 32)
		return -E2BIG;
	assert_true(prom_series_key(s, g->key[g->n], sizeof(g->key[0])) > 0);
	g->type[g->n] = s->type;
	snprintf(g->family[g->n], sizeof(g->family[0]), "%s", s->family);
	g->value[g->n] = s->value;
	g->has_ts[g->n] = s->has_ts;
	g->ts[g->n] = s->ts_ms;
	g->n++;
	return 0;
}

static void parse__doc_example__every_line(void **state)
{
	static struct got g;
	char err[256] = "";

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(prom_parse(doc_page, strlen(doc_page), collect, &g, err, sizeof(err)), 20);
	assert_string_equal(g.key[0], "http_requests_total{method=\"post\",code=\"200\"}");
	assert_int_equal(g.type[0], PROM_COUNTER);
	assert_true(g.value[0] == 1027 && g.has_ts[0] && g.ts[0] == 1395066363000);
	assert_true(g.value[1] == 3);
	/* the escapes read, then written back the same */
	assert_string_equal(g.key[2], "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\","
			    "error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"}");
	assert_int_equal(g.type[2], PROM_UNTYPED);
	assert_true(g.value[2] == 1.458255915e9 && !g.has_ts[2]);
	assert_true(g.value[3] == 12.47);
	assert_true(isinf(g.value[4]) && g.value[4] > 0 && g.ts[4] == -3982045);
	/* the histogram's lines are its family's, +Inf bucket included */
	for (unsigned i = 5; i <= 12; i++) {
		assert_int_equal(g.type[i], PROM_HISTOGRAM);
		assert_string_equal(g.family[i], "http_request_duration_seconds");
	}
	assert_string_equal(g.key[10], "http_request_duration_seconds_bucket{le=\"+Inf\"}");
	assert_true(g.value[12] == 144320);
	for (unsigned i = 13; i <= 19; i++)
		assert_int_equal(g.type[i], PROM_SUMMARY);
	assert_true(g.value[18] == 1.7560473e+07);
	assert_string_equal(g.key[19], "rpc_duration_seconds_count");
	assert_int_equal(g.type[19], PROM_SUMMARY);
}

static void parse__values_and_blanks__as_go_reads_them(void **state)
{
	static struct got g;
	const char t[] = "  a 1\n\tb{x=\"1\" , y = \"2\",} NaN\nc -Inf\nd inf\ne 1e3 \n"
			 "f{} 7\n# TYPE g GAUGE\ng 0.5\n";
	char err[256] = "";

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(prom_parse(t, strlen(t), collect, &g, err, sizeof(err)), 7);
	assert_string_equal(g.key[1], "b{x=\"1\",y=\"2\"}");
	assert_true(isnan(g.value[1]));
	assert_true(isinf(g.value[2]) && g.value[2] < 0);
	assert_true(isinf(g.value[3]) && g.value[3] > 0);
	assert_true(g.value[4] == 1000);
	assert_string_equal(g.key[5], "f");
	assert_int_equal(g.type[6], PROM_GAUGE);
	assert_int_equal(prom_parse("", 0, collect, &g, err, sizeof(err)), 0);
}

struct bad {
	const char *text;
	const char *err;
};

static void parse__malformed__refused_with_line_and_why(void **state)
{
	static char longline[PROM_MAX_LINE + 16], manylabels[4096], longname[400];
	const struct bad cases[] = {
		{ "a 1\nx{a=\"1} 3\n", "line 2: label a: its value has no closing '\"'" },
		{ "x{a=\"\\t\"} 1\n", "line 1: label a: an invalid escape in its value" },
		{ "x{a=\"1\",a=\"2\"} 1\n", "line 1: x: label a given twice" },
		{ "x{__name__=\"y\"} 1\n", "line 1: x: the label name __name__ is reserved" },
		{ "x{a=1} 1\n", "line 1: x: expected '\"' to start label a's value" },
		{ "x{a=\"1\" b=\"2\"} 1\n", "line 1: x: expected ',' or '}' after label a" },
		{ "x{1a=\"1\"} 1\n", "line 1: expected a label name" },
		{ "x 1x\n", "line 1: x: the value '1x' is not a number" },
		{ "x 0x10\n", "line 1: x: the value '0x10' is not a number" },
		{ "x 1 12.5\n", "line 1: x: the timestamp '12.5' is not an integer" },
		{ "x 1 99999999999999999999\n", "line 1: x: the timestamp" },
		{ "x 1 2 3\n", "line 1: x: more after the timestamp" },
		{ "x\n", "line 1: x: no value" },
		{ "x-y 1\n", "line 1: x: the name is followed by a character" },
		{ "{\"x.y\"} 1\n", "line 1: expected a metric name" },
		{ "\"x.y\" 1\n", "line 1: a quoted metric name" },
		{ "# TYPE x counter\n# TYPE x gauge\n", "line 2: a second TYPE line for x" },
		{ "x 1\n# TYPE x counter\n", "line 2: a second TYPE line for x, or a TYPE after" },
		{ "# TYPE x meter\n", "line 1: TYPE x: unknown type 'meter'" },
		{ "# TYPE x counter extra\n", "line 1: TYPE x: more than a type" },
		{ "# HELP x a\n# HELP x b\n", "line 2: a second HELP line for x" },
		{ "# HELP x a \\t b\n", "line 1: HELP x: an invalid escape" },
		{ "# HELP\n", "line 1: HELP without a metric name" },
		{ "x 1", "line 1: the last line does not end with a newline" },
		{ "x 1\ny 2", "line 2: the last line does not end with a newline" },
		{ "x{a=\"\xff\"} 1\n", "line 1: label a: its value is not UTF-8" },
		{ "x{a=\"\x01\"} 1\n", "line 1: label a: a control character in its value" },
		/* C1 CSI (U+009B) and a bidi override (U+202E): people read it */
		{ "x{a=\"\xc2\x9b\"} 1\n", "line 1: label a: a control character in its value" },
		{ "x{a=\"\xe2\x80\xae\"} 1\n", "line 1: label a: a control character in its value" },
		{ "x 1\r\n", "line 1: x: the value '1\r' is not a number" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		if (prom_parse(cases[i].text, strlen(cases[i].text), NULL, NULL, err,
			       sizeof(err)) != -EINVAL || !strstr(err, cases[i].err))
			fail_msg("case %zu '%s': got '%s', want '%s'", i, cases[i].text, err,
				 cases[i].err);
	}
	/* a NUL inside the text */
	err[0] = 0;
	assert_int_equal(prom_parse("x 1\ny\0 2\n", 9, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 2: a NUL byte");
	/* the bounds: a line, the labels, a name, a label value */
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = 0;
	assert_int_equal(prom_parse(longline, strlen(longline), NULL, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "line 1: longer than 65535 bytes"));
	{
		size_t o = (size_t)snprintf(manylabels, sizeof(manylabels), "x{");

		for (int i = 0; i <= PROM_MAX_LABELS; i++)
			o += (size_t)snprintf(manylabels + o, sizeof(manylabels) - o, "l%d=\"v\",", i);
		snprintf(manylabels + o, sizeof(manylabels) - o, "} 1\n");
	}
	assert_int_equal(prom_parse(manylabels, strlen(manylabels), NULL, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "x: more than 32 labels"));
	memset(longname, 'n', sizeof(longname));
	memcpy(longname + sizeof(longname) - 4, " 1\n", 4);
	assert_int_equal(prom_parse(longname, strlen(longname), NULL, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "a metric name longer than 255 characters"));
	{
		char *t = malloc(PROM_MAX_LVAL + 32);
		size_t o = (size_t)sprintf(t, "x{a=\"");

		memset(t + o, 'v', PROM_MAX_LVAL);
		strcpy(t + o + PROM_MAX_LVAL, "\"} 1\n");
		assert_int_equal(prom_parse(t, strlen(t), NULL, NULL, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "label a: a value longer than 1023 bytes"));
		free(t);
	}
}

static void series_key__too_small__enametoolong(void **state)
{
	struct prom_label l = { "a", "x\"y" };
	struct prom_sample s = { .name = "m", .nlabels = 1, .labels = &l };
	char b[16];

	(void)state;
	assert_int_equal(prom_series_key(&s, b, sizeof(b)), 11);
	assert_string_equal(b, "m{a=\"x\\\"y\"}");
	assert_int_equal(prom_series_key(&s, b, 11), -ENAMETOOLONG);
}

static void page__keep_scale_left_out_and_bounds(void **state)
{
	struct app_conf c = { 0 };
	struct app_page *pg = app_page_new();
	const char t[] = "# TYPE w_seconds_total counter\nw_seconds_total 1.2345\n"
			 "other 5\nneg -1\nnan NaN\nbig 1e30\n";
	char err[256];

	(void)state;
	assert_non_null(pg);
	app_conf_defaults(&c);
	assert_int_equal(app_page_parse(pg, "flare", &c, t, strlen(t), err, sizeof(err)), 2);
	assert_string_equal(app_page_name(pg, 0), "app.flare.w_seconds_total");
	assert_int_equal(app_page_value(pg, 0), 1);
	assert_string_equal(app_page_name(pg, 1), "app.flare.other");
	/* a scale keeps a seconds counter in milliseconds; keep chooses */
	c.scale = 1000;
	strcpy(c.keep[0], "w_*");
	c.nkeep = 1;
	assert_int_equal(app_page_parse(pg, "flare", &c, t, strlen(t), err, sizeof(err)), 1);
	assert_int_equal(app_page_value(pg, 0), 1235);
	/* the series bound */
	c.nkeep = 0;
	c.scale = 1;
	c.max_series = 1;
	assert_int_equal(app_page_parse(pg, "flare", &c, t, strlen(t), err, sizeof(err)), -E2BIG);
	assert_string_equal(err, "line 3: more than 1 series (app_metrics_max_series)");
	assert_int_equal(app_page_count(pg), 0);
	/* a malformed page keeps nothing */
	c.max_series = 100;
	assert_int_equal(app_page_parse(pg, "flare", &c, "a 1\nb\n", 6, err, sizeof(err)), -EINVAL);
	assert_int_equal(app_page_count(pg), 0);
	app_page_free(pg);
}

static void conf__urls_and_keys(void **state)
{
	struct app_conf c = { 0 };
	char e[256];

	(void)state;
	assert_int_equal(app_conf_key(&c, "interface", "x", e, sizeof(e)), 0);
	assert_int_equal(app_conf_key(&c, "app_metrics", "http://127.0.0.1:9100/metrics", e,
				      sizeof(e)), 1);
	assert_string_equal(c.url, "http://127.0.0.1:9100/metrics");
	assert_int_equal(app_conf_key(&c, "app_metrics", "https://[::1]:9100/m", e, sizeof(e)), 1);
	assert_int_equal(app_conf_key(&c, "app_metrics", "ftp://h/m", e, sizeof(e)), -1);
	assert_string_equal(e, "app_metrics: 'ftp://h/m': only http and https are fetched");
	assert_int_equal(app_conf_key(&c, "app_metrics", "file:///etc/passwd", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics", "http://a b/", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics", "http://", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics_timeout", "500ms", e, sizeof(e)), 1);
	assert_int_equal(c.timeout_ns, 500000000ull);
	assert_int_equal(app_conf_key(&c, "app_metrics_timeout", "5min", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics_max_bytes", "1M", e, sizeof(e)), 1);
	assert_int_equal(c.max_bytes, 1u << 20);
	assert_int_equal(app_conf_key(&c, "app_metrics_max_bytes", "1G", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics_scale", "-1", e, sizeof(e)), -1);
	assert_int_equal(app_conf_key(&c, "app_metrics_keep", "flare_* rpc_*", e, sizeof(e)), 1);
	assert_int_equal(c.nkeep, 2);
	assert_int_equal(app_conf_key(&c, "app_metrics_bogus", "1", e, sizeof(e)), -1);
	assert_non_null(strstr(e, "unknown key 'app_metrics_bogus'"));
	assert_int_equal(app_conf_key(&c, "app_metrics_keep", " , ", e, sizeof(e)), -1);
	assert_string_equal(e, "app_metrics_keep: nothing given");
	assert_int_equal(app_conf_finish(&c, e, sizeof(e)), 0);
	c.url[0] = 0;
	assert_int_equal(app_conf_finish(&c, e, sizeof(e)), -1);
	assert_string_equal(e, "app_metrics_* keys without app_metrics = URL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse__doc_example__every_line),
		cmocka_unit_test(parse__values_and_blanks__as_go_reads_them),
		cmocka_unit_test(parse__malformed__refused_with_line_and_why),
		cmocka_unit_test(series_key__too_small__enametoolong),
		cmocka_unit_test(page__keep_scale_left_out_and_bounds),
		cmocka_unit_test(conf__urls_and_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
