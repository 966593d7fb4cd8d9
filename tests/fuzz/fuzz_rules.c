/* libFuzzer target: rules and classification.
 * Input: RULES "\n%%\n" FACTS. RULES is loaded as one rules file
 * (rules_load_texts) and, when it loads, classifies FACTS; the shipped
 * rules classify FACTS too (hostile facts: any JSON, or none), and the
 * signals are evaluated over its counters. Seeds: the shipped rules, the facts
 * fixtures (tests/fixtures/facts). */
#include "tests/fuzz/fuzz.h"

#include <json-c/json.h>

#include "lib/json.h"
#include "rules/rules.h"

static struct rules *shipped;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_quiet();
	shipped = fz_shipped_rules("fuzz_rules");
	return 0;
}

static void classify(const struct rules *r, struct json_object *facts)
{
	struct json_object *v = rules_classify(r, facts), *ports, *counters = NULL;
	const char *sig[] = { "port_frames", "vport_frames", "buffer_drops", "steer_misses", "steer_discards" };
	double x;

	if (!v || !jx_str(v, RK_VERDICT))
		abort();                /* a verdict, whatever the facts */
	json_object_to_json_string(v);
	json_object_put(v);
	ports = jx_obj(facts, "ports");
	if (ports) {
		json_object_object_foreach(ports, name, p) {
			(void)name;
			counters = jx_obj(jx_obj(p, "stall"), "counters");
			break;
		}
	}
	for (size_t i = 0; counters && i < sizeof(sig) / sizeof(sig[0]); i++)
		rules_signal(r, "mlx5", sig[i], counters, &x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sep = memmem(data, size, "\n%%\n", 4);
	size_t rlen = sep ? (size_t)(sep - (const char *)data) : size;
	char *text = strndup((const char *)data, rlen);
	struct json_object *facts = NULL;
	struct rules *r = NULL;

	if (!text)
		abort();
	if (sep) {
		struct json_tokener *tok = json_tokener_new_ex(64);

		facts = json_tokener_parse_ex(tok, sep + 4, (int)(size - rlen - 4));
		json_tokener_free(tok);
	}
	if (!facts)
		facts = json_object_new_object();
	if (rlen) {
		const char *names[1] = { "fuzz.rules" }, *texts[1] = { text };

		if (rules_load_texts(names, texts, 1, &r, fz_silent, NULL) == 0) {
			if (!r)
				abort();
			classify(r, facts);
			rules_free(r);
		}
	}
	classify(shipped, facts);
	classify(NULL, facts);
	json_object_put(facts);
	free(text);
	return 0;
}
