/* onloadfacts: the Onload stacks' facts (onload[]) from an investigation
 * record's engine evidence (onloadfacts.h). */
#include "daemon/forensic/onloadfacts.h"
#include "daemon/record.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One value of a dump's "counters" (or "opts"): 1 and *v when it is
 * there as a count. */
static int dump_val(struct json_object *dump, const char *part, const char *name, uint64_t *v)
{
	struct json_object *j = jx_get(jx_obj(dump, part), name);

	if (!j || !json_object_is_type(j, json_type_int) || json_object_get_int64(j) < 0)
		return 0;
	*v = json_object_get_uint64(j);
	return 1;
}

static struct json_object *stack_by_id(struct json_object *arr, uint64_t id)
{
	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		if (jx_get(x, "id") && jx_u64(x, "id") == id)
			return x;
	}
	return NULL;
}

/* name of the dumps d[0] before, d[1] during, d[2] after into e: NAME
 * (during), NAME_before, NAME_after, and with rise NAME_rise, the rise
 * from the first dump that has it to the last (none when it fell: the
 * counters were reset). nonb_pool is a boolean. */
static void onload_value(struct json_object *e, struct json_object *const *d, const char *name,
			 int rise)
{
	static const char *const sfx[3] = { "_before", "", "_after" };
	uint64_t first = 0, last = 0, v;
	int have = 0;
	char key[96];

	for (int k = 0; k < 3; k++) {
		if (!d[k] || !dump_val(d[k], "counters", name, &v))
			continue;
		snprintf(key, sizeof(key), "%s%s", name, sfx[k]);
		if (!strcmp(name, "nonb_pool"))
			jx_add_bool(e, key, v != 0);
		else
			jx_add_u64(e, key, v);
		if (!have++)
			first = v;
		last = v;
	}
	if (rise && have >= 2 && last >= first) {
		snprintf(key, sizeof(key), "%s_rise", name);
		jx_add_u64(e, key, last - first);
	}
}

/* An option (fixed when the stack was made): from the dump during, else
 * after, else before. */
static void onload_opt(struct json_object *e, struct json_object *const *d, const char *fact,
		       const char *ef)
{
	uint64_t v;

	for (int k = 1; k < 4; k++)
		if (d[k % 3] && dump_val(d[k % 3], "opts", ef, &v)) {
			jx_add_u64(e, fact, v);
			return;
		}
}

/* The fact item of one stack from its dumps d[0] before, d[1] during,
 * d[2] after (NULL or without counters: not taken). */
static struct json_object *onload_item(uint64_t id, struct json_object *const *d)
{
	struct json_object *e = json_object_new_object(), *named = d[1] ? d[1] : d[2];
	uint64_t t0 = UINT64_MAX, t1 = 0, v, fmin = UINT64_MAX;
	int n = 0;

	jx_add_u64(e, FK_O_STACK, id);
	if (jx_str(named, "name"))
		jx_add_str(e, FK_O_NAME, jx_str(named, "name"));
	if (jx_get(named, "pid"))
		jx_add_u64(e, FK_O_PID, jx_u64(named, "pid"));
	for (int k = 0; k < 3; k++) {
		if (!d[k])
			continue;
		n++;
		if (jx_u64(d[k], "start_mono_ns") && jx_u64(d[k], "start_mono_ns") < t0)
			t0 = jx_u64(d[k], "start_mono_ns");
		if (jx_u64(d[k], "end_mono_ns") > t1)
			t1 = jx_u64(d[k], "end_mono_ns");
		if (dump_val(d[k], "counters", "pkt_bufs_free", &v) && v < fmin)
			fmin = v;
	}
	jx_add_int(e, FK_O_DUMPS, n);
	if (n >= 2 && t0 < t1)
		json_object_object_add(e, FK_O_SPAN_MS, jx_new_sig((double)(t1 - t0) / 1e6, 4));
	if (d[0] && jx_get(d[0], "age_ms"))
		jx_copy(e, FK_O_BEFORE_AGE_MS, d[0], "age_ms");
	if (fmin != UINT64_MAX)
		jx_add_u64(e, FK_O_FREE_MIN, fmin);
#define OL_CNT(name) onload_value(e, d, name, 1);
#define OL_LVL(name) onload_value(e, d, name, 0);
#define OL_OPT(fact, ef) onload_opt(e, d, fact, ef);
	FK_ONLOAD_COUNTERS(OL_CNT)
	FK_ONLOAD_LEVELS(OL_LVL)
	FK_ONLOAD_OPTS(OL_OPT)
#undef OL_CNT
#undef OL_LVL
#undef OL_OPT
	return e;
}

/* onload[]: each Onload stack of the engines' evidence, its dumps before
 * (the periodic one handed over at the stall), during (at the stall) and
 * after (the end of the investigation), matched by stack id. A dump that
 * failed or did not parse is not taken; a value no dump printed is
 * absent, never 0. At most ONLOAD_FACTS_MAX stacks. */
#define ONLOAD_FACTS_MAX 8
struct json_object *onload_facts(struct json_object *rec)
{
	struct json_object *eng = jx_obj(rec, IR_ENGINES), *out = json_object_new_array();
	struct json_object *at = jx_arr(jx_obj(jx_obj(eng, "at_stall"), "onload"), "stacks");
	struct json_object *af = jx_arr(jx_obj(jx_obj(eng, "after"), "onload"), "stacks");
	struct json_object *lists[2] = { at, af };

	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < jx_len(lists[l]) &&
		     json_object_array_length(out) < ONLOAD_FACTS_MAX; i++) {
			struct json_object *x = json_object_array_get_idx(lists[l], i), *d[3];
			uint64_t id = jx_u64(x, "id");

			if (!jx_get(x, "id") || (l && stack_by_id(at, id)))
				continue;
			d[1] = l ? NULL : x;
			d[0] = l ? NULL : jx_obj(x, "before");
			d[2] = l ? x : stack_by_id(af, id);
			for (int k = 0; k < 3; k++)
				if (d[k] && !jx_obj(d[k], "counters"))
					d[k] = NULL;
			json_object_array_add(out, onload_item(id, d));
		}
	return out;
}
