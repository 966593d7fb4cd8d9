/* summary_peers: the summary's "Peers" section. In the originating host's
 * bundle (manifest "peers"): who was notified, who answered, after how
 * long, their bundle names, and for a peer not heard from, why: unknown,
 * never clean. In a peer-snapshot bundle (manifest "peer"): the incident
 * of which host it belongs to, and when its notice was sent and came. The
 * manifest may be hostile: entries are bounded, names cut. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#define MAX_PEERS 64

static void origin_lines(FILE *f, struct json_object *pe)
{
	uint64_t sent = jx_u64(pe, MK_PE_SENT_REAL_NS), recv = jx_u64(pe, MK_PE_RECEIVED_REAL_NS);

	fprintf(f, "- A snapshot for incident %.64s:%" PRIu64 " (notice from peer %.32s)",
		jx_text(pe, MK_PE_ORIGIN_HOST), jx_u64(pe, MK_PE_INCIDENT_ID),
		jx_text(pe, MK_PE_ORIGIN_PEER));
	if (sent && recv >= sent)
		fprintf(f, ", taken %.1f ms after the notice was sent", (double)(recv - sent) / 1e6);
	fputs(".\n", f);
	fprintf(f, "- The origin's bundle of the incident is on host %.64s; "
		"its rules decide, with this bundle's counters.\n", jx_text(pe, MK_PE_ORIGIN_HOST));
}

void bi_sum_peers(FILE *f, struct json_object *m)
{
	struct json_object *ps = jx_obj(m, MK_PEERS), *pe = jx_obj(m, MK_PEER);
	unsigned n = 0, answered = 0, shown = 0;

	if (!ps && !pe)
		return;
	fputs("\n## Peers\n\n", f);
	if (pe)
		origin_lines(f, pe);
	if (!ps)
		return;
	json_object_object_foreach(ps, name0, v0) {
		(void)name0;
		n++;
		answered += jx_bool(v0, MK_PS_ANSWERED);
	}
	fprintf(f, "Notified %u, answered %u, not heard from %u.\n\n", n, answered, n - answered);
	json_object_object_foreach(ps, name, v) {
		if (shown++ >= MAX_PEERS) {
			fprintf(f, "- and %u more\n", n - MAX_PEERS);
			break;
		}
		fprintf(f, "- %.32s (%.64s port %" PRIu64 ", host %.64s): ", name,
			jx_text(v, MK_PS_ADDRESS), jx_u64(v, "port"),
			jx_str(v, MK_PS_HOST) ? jx_text(v, MK_PS_HOST) : "?");
		if (!jx_bool(v, MK_PS_NOTIFIED)) {
			fprintf(f, "not notified (%.200s): unknown, not clean\n",
				jx_str(v, MK_PS_ERROR) ? jx_text(v, MK_PS_ERROR) : "no reason recorded");
			continue;
		}
		if (!jx_bool(v, MK_PS_ANSWERED)) {
			fprintf(f, "notified, not heard from%s%.200s%s: unknown, not clean\n",
				jx_str(v, MK_PS_ERROR) ? " (" : "",
				jx_str(v, MK_PS_ERROR) ? jx_text(v, MK_PS_ERROR) : "",
				jx_str(v, MK_PS_ERROR) ? ")" : "");
			continue;
		}
		fprintf(f, "answered after %.1f ms (round trip %.1f ms), bundle %.200s\n",
			jx_double(v, MK_PS_AFTER_MS, 0), jx_double(v, MK_PS_RTT_MS, 0),
			jx_str(v, MK_PS_BUNDLE) ? jx_text(v, MK_PS_BUNDLE) : "not written");
	}
}
