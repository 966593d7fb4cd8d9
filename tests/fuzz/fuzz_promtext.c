/* libFuzzer target: the Prometheus text exposition parser
 * (collectors/counters/promtext_parse.h) and the app source's page (src_app.h) on one
 * input. An accepted page must keep the parser's promises: names of the
 * format's characters within PROM_MAX_NAME, at most PROM_MAX_LABELS labels
 * each of a valid name and a value of valid UTF-8 without NUL, a series
 * name that fits its buffer and a family the sample's name starts with; a
 * refused one must say why, with its line; the page never keeps more
 * series than its bound.
 * Seeds: tests/fuzz/seeds/promtext (the format's documented example, a
 * node_exporter-like page, the system test's pages). */
#include "tests/fuzz/fuzz.h"

#include "collectors/counters/promtext_parse.h"
#include "collectors/counters/src_app.h"
#include "lib/util.h"

FZ_QUIET_INITIALIZE()

static int name_ok(const char *s, int colon)
{
	size_t n = strlen(s);

	if (!n || n >= PROM_MAX_NAME)
		return 0;
	for (const char *q = s; *q; q++) {
		int c = (unsigned char)*q;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		      (colon && c == ':') || (q > s && c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

static int sample_cb(const struct prom_sample *s, void *arg)
{
	char key[PROM_MAX_NAME * (PROM_MAX_LABELS + 1) + PROM_MAX_LVAL * 2 * PROM_MAX_LABELS + 64];

	(void)arg;
	if (!name_ok(s->name, 1) || strncmp(s->name, s->family, strlen(s->family)) ||
	    s->nlabels > PROM_MAX_LABELS || s->line == 0)
		abort();
	for (unsigned i = 0; i < s->nlabels; i++) {
		const char *v = s->labels[i].value;
		size_t len = strlen(v), n;

		if (!name_ok(s->labels[i].name, 0) || len >= PROM_MAX_LVAL)
			abort();
		for (size_t o = 0; o < len; o += n) {
			int k = util_utf8_char(v + o, len - o, &n);

			if (k == UTIL_CH_INVALID || k == UTIL_CH_SHORT || !n)
				abort();
		}
	}
	if (prom_series_key(s, key, sizeof(key)) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy of exactly size bytes, no NUL after it */
	char *buf = malloc(size ? size : 1), err[256];
	struct app_conf c = { .max_series = 50 };
	struct app_page *pg;
	int rc;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	err[0] = 0;
	rc = prom_parse(buf, size, sample_cb, NULL, err, sizeof(err));
	if (rc < 0 && strncmp(err, "line ", 5))
		abort();
	app_conf_defaults(&c);
	pg = app_page_new();
	if (!pg)
		abort();
	err[0] = 0;
	rc = app_page_parse(pg, "fz", &c, buf, size, err, sizeof(err));
	if (rc < 0 ? (!err[0] || app_page_count(pg)) : (unsigned)rc != app_page_count(pg) ||
	    app_page_count(pg) > 50)
		abort();
	for (unsigned i = 0; i < app_page_count(pg); i++)
		if (strncmp(app_page_name(pg, i), "app.fz.", 7))
			abort();
	app_page_free(pg);
	free(buf);
	return 0;
}
