/* libFuzzer target: a bundle on disk as nicstallctl reads it (anyone may
 * hand one over): the manifest, the summary (with and without rules),
 * verify, list, and the report (HTML and the text timeline).
 * Input: files packed as "==> NAME\nCONTENT" parts (fz_unpack) that become
 * STATE/bundles/B/. Seeds: tests/fixtures/bundles packed that way. */
#include "tests/fuzz/fuzz.h"

#include <json-c/json.h>

#include "bundle/bundle.h"
#include "bundle/report.h"
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

		report_html(rep, &o, devnull);
		report_timeline(rep, &o, data[0] & 1, devnull);
		report_free(rep);
	}
	return 0;
}
