/* libFuzzer target: a bundle on disk as nicstallctl reads it (anyone may
 * hand one over): the manifest, the summary (with and without rules),
 * verify, list, and the report: the model (series, story), the HTML page
 * with its SVG and the text timeline, in both character sets, and what
 * `show` prints of summary.txt. What reaches a terminal or a page is
 * checked, not only that nothing crashes: the timeline and the page must
 * pass the terminal filter unchanged (util_utf8_clean: valid UTF-8, no
 * control character but tab and newline), else the target aborts.
 * Input: files packed as "==> NAME\nCONTENT" parts (fz_unpack) that become
 * STATE/bundles/B/. Seeds: tests/fixtures/bundles packed that way and the
 * small bundles of tests/fuzz/seeds/bundle; tokens: tests/fuzz/bundle.dict.
 * Kept crash inputs: tests/fuzz/crashes/bundle (a window.json whose sources
 * wrap a counter's sum to 0: issue 34). */
#include "tests/fuzz/fuzz.h"

#include <json-c/json.h>

#include "bundle/bundle.h"
#include "bundle/report.h"
#include "lib/util.h"
#include "rules/rules.h"

static struct rules *shipped;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	shipped = fz_shipped_rules("fuzz_bundle");
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

/* Text the filter would change reached an output: abort naming it. */
static void filtered(const char *what, const char *s, size_t len)
{
	char *c = util_utf8_clean(s, len);

	if (!c)
		abort();
	if (strlen(c) != len || memcmp(c, s, len)) {
		size_t i = 0;

		while (i < len && c[i] == s[i])
			i++;
		fprintf(stderr, "fuzz_bundle: %s holds a control character or invalid UTF-8 at "
			"byte %zu: \"%.*s\"\n", what, i, (int)(len - i < 40 ? len - i : 40), s + i);
		abort();
	}
	free(c);
}

static void listed(const char *path, struct json_object *man, uint64_t bytes, void *arg)
{
	(void)man;
	(void)bytes;
	(void)arg;
	if (!path)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char state[128], path[192], err[512];
	struct json_object *man = NULL;
	struct report *rep;
	size_t n;
	char *s;

	fz_fresh("state", state, sizeof(state));
	snprintf(path, sizeof(path), "%s/bundles", state);
	if (mkdir(path, 0700) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/bundles/20261201T093030Z-fz-p-manual", state);
	if (mkdir(path, 0700) < 0)
		abort();
	fz_unpack(data, size, path);
	if (bundle_load_manifest(path, &man, err, sizeof(err)) == 0) {
		s = bundle_summary(man);
		free(s);
		s = bundle_summary_rules(man, shipped);
		free(s);
		json_object_put(man);
	}
	man = NULL;
	bundle_verify(path, &man, err, sizeof(err));
	json_object_put(man);
	bundle_list(state, listed, NULL);
	rep = report_load_dir(path, err, sizeof(err));
	if (rep) {
		struct report_opts o = { .rules = shipped, .link_prefix = "../b/",
					 .bundle_name = "b", .verify_note = "fuzz" };

		char *h, *t = NULL;
		size_t hlen = 0, tlen = 0;
		FILE *f;

		h = report_html_string(rep, &o, &hlen);
		if (h)
			filtered("the report page", h, hlen);
		free(h);
		for (int utf8 = 0; utf8 < 2; utf8++) {
			f = open_memstream(&t, &tlen);
			if (!f)
				abort();
			report_timeline(rep, &o, utf8, f);
			fclose(f);
			filtered("the text timeline", t, tlen);
			free(t);
			t = NULL;
		}
		report_free(rep);
	}
	/* show: summary.txt through the terminal filter */
	s = bundle_read_file(path, "summary.txt", 1u << 20, &n, err, sizeof(err));
	if (s) {
		char *t = NULL;
		size_t tlen = 0;
		FILE *f = open_memstream(&t, &tlen);

		if (!f)
			abort();
		util_term_put(f, s, n, SIZE_MAX, 1);
		fclose(f);
		filtered("show's summary.txt", t, tlen);
		free(t);
		free(s);
	}
	return 0;
}
