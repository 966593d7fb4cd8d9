/* correlate: which bundles belong to one incident across hosts
 * (`nicstallctl bundles --incident HOST:ID`): the originating host's
 * bundle (manifest host and incident_id, no peer link) and every peer's
 * peer-snapshot bundle (manifest peer.origin_host and peer.incident_id);
 * the origin's manifest also announces the peers' bundle names. The
 * manifests may be hostile: every field is type-checked. */
#include "bundle/bundle.h"
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

int bundle_incident_parse(const char *spec, char *host, size_t hostlen, uint64_t *id, char *err,
			  size_t errlen)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;
	char *end;
	unsigned long long v;

	if (!colon || colon == spec || (size_t)(colon - spec) >= hostlen || !colon[1]) {
		util_errf(err, errlen, "incident '%s': write HOST:ID (rank0:12)", spec ? spec : "");
		return -1;
	}
	errno = 0;
	v = strtoull(colon + 1, &end, 10);
	if (errno || *end || colon[1] == '-' || v == 0) {
		util_errf(err, errlen, "incident '%s': ID '%s' is not a positive number", spec, colon + 1);
		return -1;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	*id = v;
	return 0;
}

int bundle_of_incident(struct json_object *m, const char *host, uint64_t id)
{
	struct json_object *pe = jx_obj(m, MK_PEER), *v;

	if (!m || !json_object_is_type(m, json_type_object))
		return 0;
	if (pe) {
		v = jx_get(pe, MK_PE_INCIDENT_ID);
		return jx_str(pe, MK_PE_ORIGIN_HOST) && !strcmp(jx_str(pe, MK_PE_ORIGIN_HOST), host) &&
		       v && json_object_is_type(v, json_type_int) && jx_u64(pe, MK_PE_INCIDENT_ID) == id;
	}
	v = jx_get(m, "incident_id");
	return jx_str(m, "host") && !strcmp(jx_str(m, "host"), host) && v &&
	       json_object_is_type(v, json_type_int) && jx_u64(m, "incident_id") == id;
}

struct json_object *bundle_incident_announced(struct json_object *m)
{
	struct json_object *out = json_object_new_array(), *ps = jx_obj(m, MK_PEERS);

	if (!ps || jx_obj(m, MK_PEER))
		return out;
	json_object_object_foreach(ps, name, v) {
		struct json_object *e;

		if (!json_object_is_type(v, json_type_object) || !jx_str(v, MK_PS_BUNDLE))
			continue;
		e = json_object_new_object();
		jx_add_str(e, "peer", name);
		if (jx_str(v, MK_PS_HOST))
			jx_add_str(e, "host", jx_str(v, MK_PS_HOST));
		jx_add_str(e, "bundle", jx_str(v, MK_PS_BUNDLE));
		json_object_array_add(out, e);
	}
	return out;
}
