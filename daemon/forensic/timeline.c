/* timeline: a record's steps. See timeline.h. */
#include "daemon/forensic/timeline.h"

#include <json-c/json.h>

#include "lib/json.h"

double steps_rel_ms(uint64_t origin, uint64_t t)
{
	return t >= origin ? (double)(t - origin) / 1e6 : -(double)(origin - t) / 1e6;
}

int steps_begin(struct json_object *steps, uint64_t origin, uint64_t now, const char *name,
		const char *port)
{
	struct json_object *s = json_object_new_object();

	jx_add_str(s, "step", name);
	if (port)
		jx_add_str(s, "port", port);
	jx_add_u64(s, "start_mono_ns", now);
	json_object_object_add(s, "start_ms", jx_new_fixed(steps_rel_ms(origin, now), 3));
	jx_add_str(s, "outcome", "running");
	json_object_array_add(steps, s);
	return (int)json_object_array_length(steps) - 1;
}

void steps_end(struct json_object *steps, uint64_t origin, uint64_t now, int idx,
	       const char *outcome, const char *note)
{
	struct json_object *s = idx >= 0 ? json_object_array_get_idx(steps, (size_t)idx) : NULL;

	if (!s)
		return;
	jx_add_u64(s, "end_mono_ns", now);
	json_object_object_add(s, "end_ms", jx_new_fixed(steps_rel_ms(origin, now), 3));
	jx_add_str(s, "outcome", outcome);
	if (note && *note)
		jx_add_str(s, "note", note);
}
