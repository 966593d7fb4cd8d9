/* ethtool_text: parse recorded `ethtool -S` text into names and u64 values.
 *
 * Format: "   name: value" lines, any indentation, value unsigned decimal u64.
 * The name is everything before the last ':' that is followed by blank or
 * end of line (so "[0]: rx_bytes: 5" names "[0]: rx_bytes").
 *  - blank lines and lines whose first non-blank is '#' are skipped anywhere;
 *  - before the first counter line, any line that is not one ("NIC
 *    statistics:", "-----", free text) is a header and is skipped. A counter
 *    line there is one whose value part starts with a digit, '-' or '+';
 *  - after the first counter line, every other line must be a valid counter
 *    line, else "line N: ..." error (truncated "rx_pack", missing value...);
 *  - a bad value anywhere (overflow, negative, trailing garbage) is an error
 *    "line N: counter 'x': ...";
 *  - a name seen again keeps the first value; later ones are dropped and
 *    counted in ndup (ethtool prints duplicates for a few buggy drivers);
 *  - no counter at all is an error "no counters".
 * Bounds: input ETXT_MAX_BYTES, line ETXT_MAX_LINE (comment lines exempt),
 * name ETXT_MAX_NAME, ETXT_MAX_COUNTERS counters. Linear time. */
#ifndef NICSTALL_ETHTOOL_TEXT_H
#define NICSTALL_ETHTOOL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define ETXT_MAX_BYTES    (8u << 20)
#define ETXT_MAX_LINE     4096u
#define ETXT_MAX_NAME     255u
#define ETXT_MAX_COUNTERS 65536u

struct etxt {
	unsigned n;          /* counters, in file order, duplicates dropped */
	char **names;        /* n NUL-terminated names (owned) */
	uint64_t *vals;      /* n values */
	unsigned ndup;       /* later duplicates dropped */
	unsigned dup_line;   /* line of the first dropped duplicate, or 0 */
	unsigned err_line;   /* on error: N of "line N: ...", 0 if none */
	int same;            /* the names are those of the parse before, in
			      * its order (only the values were read) */
	/* private: memory reused across parses */
	uint16_t *lens;      /* names' lengths */
	char *pool;
	size_t pool_cap;
	unsigned cap;
	uint32_t *hash;
	unsigned hash_cap;
};

/* Parse len bytes of buf into out. out must be zeroed before its first use;
 * passing it again reuses its memory, and input that names the counters of
 * the last successful parse in the same order, each with a plain decimal
 * value, has only its values read (out->same = 1); anything else gets the
 * full parse, with the same result as into a fresh struct. Returns 0, or
 * -EINVAL (bad input),
 * -E2BIG (a bound exceeded) or -ENOMEM with err filled ("line N: ..." when
 * out->err_line is N > 0) and out->n = 0. */
int etxt_parse(const char *buf, size_t len, struct etxt *out,
	       char *err, size_t errlen);
void etxt_free(struct etxt *e);

#endif
