/* libFuzzer target: flow_rdmaqp_parse_batch() over arbitrary netlink
 * receive buffers (several messages, hostile lengths). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows/rdmaqp_parse.h"

static struct flow_rdmaqp_qp qps[256];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned n = 0, skipped = 0;
	char err[256];
	void *buf;

	/* a private, aligned copy: the parser gets exactly size bytes */
	buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	flow_rdmaqp_parse_batch(buf, size, 0, qps, 256, &n, &skipped, err, sizeof(err));
	for (unsigned i = 0; i < n; i++) {
		struct flow_rdmaqp_track t = { 0 };
		struct flow_obs o;

		flow_rdmaqp_obs(&qps[i], &t, 1, &o);
	}
	free(buf);
	return 0;
}
