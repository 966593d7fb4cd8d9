/* libFuzzer target: the host source's parsers (collectors/counters/src_host.h) on
 * one input each: /proc/pressure/RES, /proc/diskstats, /proc/PID/stat,
 * /proc/PID/schedstat, /proc/PID/io, a cgroup's cpu.stat and its I/O
 * limits (io.max, a v1 blkio.throttle file). An accepted
 * input must keep each parser's promises (a "some" total, 11, 15 or 17
 * fields of a printable device name, a comm of at most 15 bytes, a limit
 * of a kind blk-throttle has); a refused one must say why.
 * Seeds: tests/fuzz/seeds/host (recorded from a 6.18 kernel). */
#include "tests/fuzz/fuzz.h"

#include <ctype.h>

#include "collectors/counters/src_host.h"

FZ_QUIET_INITIALIZE()

static void lcb(unsigned maj, unsigned min, const char *kind, uint64_t v, void *arg)
{
	(void)maj;
	(void)min;
	(void)v;
	if (strcmp(kind, "rbps") && strcmp(kind, "wbps") && strcmp(kind, "riops") &&
	    strcmp(kind, "wiops"))
		abort();
	++*(int *)arg;
}

static int dcb(const struct host_dstat *d, void *arg)
{
	(void)arg;
	if ((d->n != 11 && d->n != 15 && d->n != 17) || !d->name[0] ||
	    strlen(d->name) > 63)
		abort();
	for (const char *q = d->name; *q; q++)
		if (!isgraph((unsigned char)*q))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy of exactly size bytes, no NUL after it */
	char *buf = malloc(size ? size : 1), err[256];
	uint64_t a, b;
	int hf, rc;
	struct host_pstat st;
	struct host_pio io;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	err[0] = 0;
	rc = host_parse_psi(buf, size, &a, &b, &hf, err, sizeof(err));
	if (rc < 0 ? !err[0] : (!hf && b))
		abort();
	err[0] = 0;
	rc = host_parse_diskstats(buf, size, dcb, NULL, err, sizeof(err));
	if (rc < 0 && !err[0])
		abort();
	err[0] = 0;
	rc = host_parse_stat(buf, size, &st, err, sizeof(err));
	if (rc < 0 ? !err[0] : (strlen(st.comm) > 15 || !isalpha((unsigned char)st.state)))
		abort();
	err[0] = 0;
	if (host_parse_schedstat(buf, size, &a, &b, err, sizeof(err)) < 0 && !err[0])
		abort();
	err[0] = 0;
	if (host_parse_io(buf, size, &io, err, sizeof(err)) < 0 && !err[0])
		abort();
	err[0] = 0;
	rc = host_parse_kv(buf, size, "throttled_usec", &a, err, sizeof(err));
	if (rc == -EINVAL && !err[0])
		abort();
	for (int k = 0; k < 2; k++) {
		int n = 0;

		err[0] = 0;
		rc = host_parse_iolimit(buf, size, k ? "riops" : NULL, lcb, &n, err, sizeof(err));
		if (rc < 0 ? !err[0] : rc != n)
			abort();
	}
	free(buf);
	return 0;
}
