/* libFuzzer target: engine flow tables (nicstall/flowtab.h) as the daemon
 * reads them: open, poll, truncate, rewrite the header, poll again, list.
 *
 * Input: CTL (8 bytes) then IMAGE. CTL[0] bit 0: IMAGE is the whole file as
 * is; else a header is made from CTL (version 1, sizes, capacity and count
 * up to 64, the owner pid this process or another) and IMAGE gives the
 * records. CTL[1..2]: where the file is cut after the first poll (0: not
 * cut); CTL[3..4]: an offset in the header rewritten with CTL[5..7] before
 * the last poll. The table stays open here while it is read, as an engine
 * holds it (the owner pid check). */
#include "tests/fuzz/fuzz.h"

#include <stddef.h>

#include "collectors/flows/flow_engine.h"
#include "nicstall/flowtab.h"

static unsigned emitted;

static void emit(const struct flow_obs *o, void *arg)
{
	(void)arg;
	emitted += o->tx_msgs != 0xdeadbeefdeadbeefull;
}

static void table(const char *path, const char *engine, int pid, unsigned records,
		  const char *problem, const char *pid_note, void *arg)
{
	(void)arg;
	(void)pid;
	(void)records;
	if (!path || !engine || (problem && !*problem) || (pid_note && !*pid_note))
		abort();
}

static struct flow_engine *fe;
static char dir[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	fz_quiet();
	fz_fresh("flows", dir, sizeof(dir));
	/* one reader for the whole run, as the daemon has: each input is a
	 * table that appears in its directory and goes again */
	fe = flow_engine_open(dir, err, sizeof(err));
	if (!fe)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[256];
	unsigned char *img;
	size_t len;
	int fd;

	if (size < 8)
		return 0;
	snprintf(path, sizeof(path), "%s/fz.%d.flows", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	if (data[0] & 1) {
		img = malloc(size - 8 + 1);
		len = size - 8;
		memcpy(img, data + 8, len);
	} else {
		struct nsft_header h;
		uint32_t cap = 1 + (data[1] & 63), count = data[2] & 127;
		uint32_t rs = (data[0] & 2) ? 256 + 64 * (data[3] & 3) : 256;
		uint32_t hs = (data[0] & 4) ? 128 + 64 * (data[4] & 3) : 128;

		len = hs + (size_t)cap * rs;
		img = calloc(1, len);
		memset(&h, 0, sizeof(h));
		memcpy(h.magic, NSFT_MAGIC, 8);
		h.version = (data[0] & 8) ? data[5] : NSFT_VERSION;
		h.header_size = hs;
		h.record_size = rs;
		h.capacity = (data[0] & 16) ? cap + data[6] : cap;
		h.count = count;
		h.owner_pid = (data[0] & 32) ? 1 : (uint32_t)getpid();
		memcpy(h.engine, (data[0] & 64) ? "../../etc/x\033[2J" : "fz", (data[0] & 64) ? 16 : 3);
		memcpy(img, &h, sizeof(h));
		memcpy(img + hs, data + 8, size - 8 < len - hs ? size - 8 : len - hs);
	}
	if (!img || fsu_write_all(fd, img, len) < 0)
		abort();
	flow_engine_handle(fe);
	flow_engine_poll(fe, emit, NULL);
	if (data[1] | data[2])
		if (ftruncate(fd, (off_t)(((size_t)data[1] << 8 | data[2]) % (len + 1))) < 0)
			abort();
	flow_engine_handle(fe);
	flow_engine_poll(fe, emit, NULL);
	if (pwrite(fd, data + 5, 3, (off_t)(((size_t)data[3] << 8 | data[4]) % 128)) != 3)
		abort();
	flow_engine_handle(fe);
	flow_engine_poll(fe, emit, NULL);
	flow_engine_tables(fe, table, NULL);
	close(fd);
	unlink(path);
	flow_engine_handle(fe);
	free(img);
	return 0;
}
