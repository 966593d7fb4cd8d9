/* rules_helpers: what the rules engine's unit tests (test_rules*.c) share:
 * collecting the load messages and reading the result object. */
#ifndef NICSTALL_TEST_RULES_HELPERS_H
#define NICSTALL_TEST_RULES_HELPERS_H

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "rules/rules.h"

#define RULEDIR  "rules"

struct msgs { char m[32][512]; int n; };

static inline void collect_msg(const char *msg, void *arg)
{
	struct msgs *ms = arg;

	if (ms && ms->n < 32)
		snprintf(ms->m[ms->n++], sizeof(ms->m[0]), "%s", msg);
}

static inline void print_msg(const char *msg, void *arg)
{
	(void)arg;
	print_message("rules: %s\n", msg);
}

static inline const char *sget(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static inline struct json_object *oget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* The "not" entry of a rule. */
static inline struct json_object *not_entry(struct json_object *res, const char *rule)
{
	struct json_object *nots = oget(res, "not");

	assert_non_null(nots);
	for (size_t i = 0; i < json_object_array_length(nots); i++) {
		struct json_object *e = json_object_array_get_idx(nots, i);

		if (sget(e, "rule") && !strcmp(sget(e, "rule"), rule))
			return e;
	}
	fail_msg("no 'not' entry for rule %s", rule);
	return NULL;
}

#endif
