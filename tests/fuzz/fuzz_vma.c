/* libFuzzer target: flow_vma_parse() over arbitrary statistics-file images.
 * The input is split in two "reads" that differ where the fuzzer wants
 * (first byte: engine; then the image; the second copy is the image with
 * a few bytes flipped as the next input bytes say). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows/vma_parse.h"

static struct flow_vma_snap snap;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum flow_vma_engine e;
	unsigned char *a, *b;
	char err[256];
	size_t len;

	if (size < 2)
		return 0;
	e = (data[0] & 1) ? FLOW_VMA_XLIO : FLOW_VMA_VMA;
	len = size - 1;
	/* images are mostly zeros: let short inputs stand for real sizes */
	if (len < 64 && (data[0] & 2))
		len = (data[0] & 4) ? 12416 + 344 * (data[1] & 3) : 41720 + 464 * (data[1] & 3);
	a = calloc(1, len);
	b = calloc(1, len);
	if (!a || !b)
		abort();
	memcpy(a, data + 1, size - 1 < len ? size - 1 : len);
	if (data[0] & 2) {      /* plant a known version so the blocks get parsed */
		if (e == FLOW_VMA_VMA && len >= 12416) {
			memcpy(a + 8, flow_vma_layouts[0].md5, 32);
			memcpy(a + 12064, &(uint64_t){ (len - 12416) / 344 }, 8);
		} else if (e == FLOW_VMA_XLIO && len >= 41720) {
			memcpy(a + 41224, flow_vma_layouts[1].md5, 32);
			memcpy(a + 41216, &(uint64_t){ (len - 41720) / 464 }, 8);
		}
	}
	memcpy(b, a, len);
	if (size > 8 && (data[0] & 8))
		b[(data[2] | data[3] << 8 | (size_t)data[4] << 16) % len] ^= data[5] | 1;
	flow_vma_parse(e, a, b, len, &snap, err, sizeof(err));
	for (unsigned i = 0; i < snap.n; i++) {
		struct flow_vma_track t = { 0 };
		struct flow_obs o;

		flow_vma_obs(&snap.s[i], "vma", 1, &t, 1, &o);
		flow_vma_obs(&snap.s[i], "vma", 1, &t, 2, &o);
	}
	free(a);
	free(b);
	return 0;
}
