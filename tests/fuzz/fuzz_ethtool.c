/* libFuzzer target: recorded `ethtool -S` text (etxt_parse, twice into the
 * same struct as the text source does on every read, the warm struct's
 * result checked against a fresh one's) and recorded
 * `ethtool -i` text (ident_parse_text, then to JSON). Seeds: the real
 * fixtures (tests/fixtures/real/ethtool-*). */
#include "tests/fuzz/fuzz.h"

#include <json-c/json.h>

#include "collectors/counters/ethtool_text_parse.h"
#include "collectors/counters/ident.h"

static struct etxt et;

FZ_QUIET_INITIALIZE()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct ident id;
	struct json_object *o;
	/* a private copy of exactly size bytes, no NUL after it */
	char *buf = malloc(size ? size : 1);

	if (!buf)
		abort();
	memcpy(buf, data, size);
	for (int pass = 0; pass < 2; pass++) {
		if (etxt_parse(buf, size, &et, err, sizeof(err)) == 0) {
			for (unsigned i = 0; i < et.n; i++)
				if (!et.names[i] || !et.names[i][0])
					abort();
		} else if (et.n) {
			abort();        /* an error leaves no counters */
		}
	}
	/* et is warm (the last input, then this one twice, the second time
	 * with only its values read): a fresh struct gets the same */
	{
		struct etxt fr = { 0 };
		char e2[512];
		int r1 = etxt_parse(buf, size, &et, err, sizeof(err));
		int r2 = etxt_parse(buf, size, &fr, e2, sizeof(e2));

		if (r1 != r2 || strcmp(err, e2) || et.n != fr.n || et.ndup != fr.ndup)
			abort();
		for (unsigned i = 0; i < et.n; i++)
			if (strcmp(et.names[i], fr.names[i]) || et.vals[i] != fr.vals[i])
				abort();
		etxt_free(&fr);
	}
	memset(&id, 0, sizeof(id));
	if (ident_parse_text(buf, size, &id, err, sizeof(err)) == 0) {
		o = json_object_new_object();
		ident_to_json(&id, o);
		json_object_to_json_string(o);
		json_object_put(o);
	}
	free(buf);
	return 0;
}
