/* Unit tests for collectors/counters/host_parse.c and src_host.c: the PSI, diskstats, stat,
 * schedstat and io parsers on recorded text (real, truncated, malformed,
 * huge), and the source on a recorded /proc and /sys tree built here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collectors/counters/host_int.h"
#include "collectors/counters/src_host.h"
#include "daemon/hostconf.h"
#include "rules/facts.h"
#include "rules/rules.h"

/* recorded on a 6.18 kernel (vda, loop0) and a 4.15 one (11 fields) */
static const char psi_io[] =
	"some avg10=0.02 avg60=0.13 avg300=0.26 total=9526342\n"
	"full avg10=0.00 avg60=0.02 avg300=0.07 total=6543492\n";
static const char psi_cpu_old[] =            /* before 5.13: no full line */
	"some avg10=10.27 avg60=23.88 avg300=27.00 total=209323402\n";
static const char diskstats[] =
	"   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	" 253       0 vda 51234 120 4100066 30911 88213 5021 2214066 120331 2 91230 160250 "
	"10 0 80 3 4411 9120\n"
	" 253       1 vda1 51000 120 4090000 30800 88000 5000 2210000 120000 0 91000 160000 "
	"10 0 80 3 0 0\n"
	" 259       0 nvme0n1 2320000 0 18560000 9100000 1000 0 8000 500 31 9900000 17010000 "
	"0 0 0 0 0 0\n";
static const char diskstats_415[] =
	"   8       0 sda 1 2 3 4 5 6 7 8 0 10 11\n";
static const char self_stat[] =
	"3587 (cat) R 3584 3584 31334 0 -1 4194304 124 0 0 0 7 3 0 0 20 0 1 0 161750 "
	"3133440 409 18446744073709551615 94796537999360 94796538019241 140735025310144 "
	"0 0 0 0 0 0 0 0 0 17 0 0 0 250 0 0 94796538035248\n";
static const char self_io[] =
	"rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 409600\n"
	"write_bytes: 0\ncancelled_write_bytes: 0\n";

static void psi__real_io__some_and_full(void **st)
{
	uint64_t s, f;
	int hf;
	char e[160];

	(void)st;
	assert_int_equal(host_parse_psi(psi_io, strlen(psi_io), &s, &f, &hf, e, sizeof(e)), 0);
	assert_int_equal(s, 9526342);
	assert_int_equal(f, 6543492);
	assert_true(hf);
	assert_int_equal(host_parse_psi(psi_cpu_old, strlen(psi_cpu_old), &s, &f, &hf, e,
					sizeof(e)), 0);
	assert_false(hf);
}

static void psi__malformed_truncated__einval_named(void **st)
{
	static const char *const bad[] = {
		"", "full avg10=0 total=1\n", "some avg10=0.00 total=\n",
		"some avg10=0.00 total=12x\n", "some total=1\nsome total=2\n",
		"bogus total=1\n", "some avg10=0.00 avg60=0.0",  /* truncated: no total */
	};
	uint64_t s, f;
	int hf;
	char e[160];

	(void)st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e[0] = 0;
		assert_int_equal(host_parse_psi(bad[i], strlen(bad[i]), &s, &f, &hf, e, sizeof(e)),
				 -EINVAL);
		assert_true(e[0] != 0);
	}
}

struct seen {
	unsigned n;
	char names[8][64];
	unsigned fields[8];
	uint64_t reads[8], inflight[8];
};

static int dcb(const struct host_dstat *d, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		strcpy(s->names[s->n], d->name);
		s->fields[s->n] = d->n;
		s->reads[s->n] = d->v[0];
		s->inflight[s->n] = d->v[8];
	}
	s->n++;
	return 0;
}

static void diskstats__17_and_11_fields__in_order(void **st)
{
	struct seen s = { 0 };
	char e[160];

	(void)st;
	assert_int_equal(host_parse_diskstats(diskstats, strlen(diskstats), dcb, &s, e, sizeof(e)), 4);
	assert_string_equal(s.names[1], "vda");
	assert_int_equal(s.fields[1], 17);
	assert_int_equal(s.reads[3], 2320000);
	assert_int_equal(s.inflight[3], 31);
	memset(&s, 0, sizeof(s));
	assert_int_equal(host_parse_diskstats(diskstats_415, strlen(diskstats_415), dcb, &s, e,
					      sizeof(e)), 1);
	assert_int_equal(s.fields[0], 11);
	assert_true(strcmp(host_dstat_names[10], "queue_ms") == 0);
	assert_true(strcmp(host_dstat_names[15], "flushes") == 0);
}

static void diskstats__malformed__einval_names_line(void **st)
{
	static const char *const bad[] = {
		"   8 0 sda 1 2 3\n",                          /* truncated */
		"   8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12\n",      /* 12 numbers */
		"   8 0 sda 1 2 3 4 5 6 7 8 9 10 x1\n",
		"x y z\n",
		"   8 0 sda\x01 1 2 3 4 5 6 7 8 9 10 11\n",
		"   8 0 ../../etc 1 2 3 4 5 6 7 8 9 10 11\n",
		"   8 0 .. 1 2 3 4 5 6 7 8 9 10 11\n",
	};
	struct seen s = { 0 };
	char e[160];

	(void)st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e[0] = 0;
		assert_int_equal(host_parse_diskstats(bad[i], strlen(bad[i]), dcb, &s, e, sizeof(e)),
				 -EINVAL);
		assert_non_null(strstr(e, "line 1"));
	}
	/* a device name of 200 characters is refused, not cut */
	{
		char l[400];

		snprintf(l, sizeof(l), "8 0 %0200d 1 2 3 4 5 6 7 8 9 10 11\n", 7);
		assert_int_equal(host_parse_diskstats(l, strlen(l), dcb, &s, e, sizeof(e)), -EINVAL);
	}
}

static void stat__real__utime_stime_blkio(void **st)
{
	struct host_pstat p;
	char e[160];
	static const char odd[] = "77 (a) b) (c) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 1 "
				  "1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 42\n";

	(void)st;
	assert_int_equal(host_parse_stat(self_stat, strlen(self_stat), &p, e, sizeof(e)), 0);
	assert_string_equal(p.comm, "cat");
	assert_int_equal(p.utime, 7);
	assert_int_equal(p.stime, 3);
	assert_int_equal(p.blkio_ticks, 250);
	/* a comm with spaces and parentheses ends at the last ')' */
	assert_int_equal(host_parse_stat(odd, strlen(odd), &p, e, sizeof(e)), 0);
	assert_string_equal(p.comm, "a) b) (c");
	assert_int_equal(p.utime, 5);
	assert_int_equal(p.blkio_ticks, 42);
}

static void stat_schedstat_io__malformed__einval(void **st)
{
	struct host_pstat p;
	struct host_pio io;
	uint64_t r, w;
	char e[160];

	(void)st;
	assert_int_equal(host_parse_stat("1 (x) R 1 2 3", 13, &p, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, "not 42"));
	assert_int_equal(host_parse_stat("1 x R", 5, &p, e, sizeof(e)), -EINVAL);
	assert_int_equal(host_parse_stat("1 (0123456789abcdefg) R", 23, &p, e, sizeof(e)), -EINVAL);
	assert_int_equal(host_parse_schedstat("0 596825 1\n", 11, &r, &w, e, sizeof(e)), 0);
	assert_int_equal(w, 596825);
	assert_int_equal(host_parse_schedstat("0 596825\n", 9, &r, &w, e, sizeof(e)), -EINVAL);
	assert_int_equal(host_parse_io(self_io, strlen(self_io), &io, e, sizeof(e)), 0);
	assert_int_equal(io.read_bytes, 409600);
	assert_int_equal(io.syscr, 10);
	assert_int_equal(host_parse_io("rchar: 1\n", 9, &io, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, "read_bytes"));
}

/* ---- the source on a recorded tree ---- */

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], *q;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (q = path + strlen(root) + 1; (q = strchr(q, '/')); q++) {
		*q = 0;
		mkdir(path, 0755);
		*q = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int unlink_rel(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return unlink(path);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int tree_setup(void **st)
{
	(void)st;
	strcpy(root, "/tmp/test_src_host.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put("proc/pressure/io", psi_io);
	put("proc/pressure/cpu", psi_cpu_old);
	put("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
	put("proc/diskstats", diskstats);
	put("proc/sys/kernel/task_delayacct", "1\n");
	put("proc/4242/stat", self_stat);
	put("proc/4242/io", self_io);
	put("proc/4242/task/4242/schedstat", "100 1000 3\n");
	put("proc/4242/task/4242/stat", self_stat);
	put("proc/4242/task/4243/schedstat", "100 2500 3\n");
	put("proc/4242/task/4243/stat", self_stat);
	put("proc/4242/comm", "cat\n");
	/* whole disks in /sys/block; vda1 is a partition; loop0 detached */
	put("sys/block/vda/serial", "BHYVE-1234\n");
	put("sys/block/vda/queue/rotational", "0\n");
	put("sys/block/vda/queue/nr_requests", "256\n");
	put("sys/block/loop0/size", "0\n");
	put("sys/block/nvme0n1/device/model", "XG7000-2TB 2242                         \n");
	put("sys/block/nvme0n1/device/firmware_rev", "GT0d9d63\n");
	put("sys/block/nvme0n1/device/serial", "SN13683-SECRET\n");
	put("sys/block/nvme0n1/queue/nr_requests", "1023\n");
	return 0;
}

static int tree_teardown(void **st)
{
	(void)st;
	return nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static struct src *open_tree(struct host_opts *o)
{
	static struct src s;
	char sysroot[128];
	struct src_host_ctx c = { o, sysroot };

	snprintf(o->proc_root, sizeof(o->proc_root), "%s/proc", root);
	snprintf(sysroot, sizeof(sysroot), "%s", root);
	memset(&s, 0, sizeof(s));
	assert_int_equal(src_host_open(&s, &c), 0);
	return &s;
}

static uint64_t val(struct clayout *l, const uint64_t *v, const char *name)
{
	int i = clayout_find(l, name);

	if (i < 0)
		fail_msg("no counter %s", name);
	return v[i];
}

static void source__tree__psi_whole_disks_owner_threads(void **st)
{
	struct host_opts o = { 0 };
	struct src *s = open_tree(&o);
	struct clayout *l;
	const uint64_t *v;
	struct json_object *j, *devs;
	const char *txt;
	int pid = 4242;
	long tck = sysconf(_SC_CLK_TCK);

	(void)st;
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "host.psi.io.full_us"), 6543492);
	assert_int_equal(val(l, v, "host.psi.cpu.some_us"), 209323402);
	assert_int_equal(clayout_find(l, "host.psi.cpu.full_us"), -1);
	assert_non_null(strstr(s->err, "no \"full\""));
	assert_int_equal(val(l, v, "host.disk.vda.reads"), 51234);
	assert_int_equal(val(l, v, "host.disk.vda.flush_ms"), 9120);
	assert_int_equal(val(l, v, "host.disk.nvme0n1.in_flight"), 31);
	assert_int_equal(clayout_find(l, "host.disk.vda1.reads"), -1);     /* partition */
	assert_int_equal(clayout_find(l, "host.disk.loop0.reads"), -1);    /* detached */
	/* threads summed: run-queue delay and block I/O delay */
	assert_int_equal(val(l, v, "owner.4242.run_delay_ns"), 3500);
	assert_int_equal(val(l, v, "owner.4242.blkio_delay_ns"), 2 * 250 * (1000000000 / tck));
	assert_int_equal(val(l, v, "owner.4242.cpu_ns"), 10 * (1000000000 / tck));
	assert_int_equal(val(l, v, "owner.4242.read_bytes"), 409600);

	j = src_host_json(s);
	txt = json_object_to_json_string(j);
	assert_null(strstr(txt, "SN13683"));            /* never the raw serial */
	assert_string_equal(json_object_get_string(json_object_object_get(j, "delayacct")), "on");
	devs = json_object_object_get(j, "devices");
	assert_int_equal(json_object_array_length(devs), 2);
	{
		struct json_object *nv = json_object_array_get_idx(devs, 1);

		assert_string_equal(json_object_get_string(json_object_object_get(nv, "model")),
				    "XG7000-2TB 2242");
		assert_string_equal(json_object_get_string(json_object_object_get(nv, "firmware")),
				    "GT0d9d63");
		assert_string_equal(json_object_get_string(json_object_object_get(nv, "transport")),
				    "nvme");
		assert_int_equal(strlen(json_object_get_string(json_object_object_get(nv,
							"serial_sha256"))), 16);
	}
	json_object_put(j);

	/* the pid is taken by another process (another start time): not the
	 * one watched, dropped */
	{
		char other[sizeof(self_stat) + 8];
		char *q;

		strcpy(other, self_stat);
		q = strstr(other, " 161750 ");
		assert_non_null(q);
		memcpy(q, " 161751 ", 8);
		put("proc/4242/stat", other);
		assert_int_equal(s->ops->read(s, &l, &v), 0);
		assert_int_equal(clayout_find(l, "owner.4242.cpu_ns"), -1);
		put("proc/4242/stat", self_stat);
		src_host_watch(s, &pid, 0);
		src_host_watch(s, &pid, 1);
		assert_int_equal(s->ops->read(s, &l, &v), 0);
		assert_true(clayout_find(l, "owner.4242.cpu_ns") >= 0);
	}
	/* the owner exits: dropped, its counters leave the layout */
	put("proc/4242/stat", "4242 (cat) Z 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 1 1 1 1 1 1 "
	    "0 0 0 0 0 0 0 0 0 0 0 0 0 250 0 0\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(clayout_find(l, "owner.4242.cpu_ns"), -1);
	/* its flows still name it: not taken again (nor logged again) */
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(clayout_find(l, "owner.4242.cpu_ns"), -1);
	put("proc/4242/stat", self_stat);
	s->ops->close(s);

	/* delay accounting off: said, the delays read 0 (the threads' stat
	 * files not read), never turned on */
	put("proc/sys/kernel/task_delayacct", "0\n");
	s = open_tree(&o);
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "owner.4242.blkio_delay_ns"), 0);
	assert_int_equal(val(l, v, "owner.4242.run_delay_ns"), 3500);
	j = src_host_json(s);
	assert_non_null(strstr(json_object_to_json_string(j), "kernel.task_delayacct = 0"));
	json_object_put(j);
	s->ops->close(s);
	put("proc/sys/kernel/task_delayacct", "1\n");
}

/* A device of src_host_json's "devices" by name, NULL when not there. */
static struct json_object *device(struct json_object *j, const char *name)
{
	struct json_object *devs = json_object_object_get(j, "devices");

	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);

		if (!strcmp(json_object_get_string(json_object_object_get(d, "name")), name))
			return d;
	}
	return NULL;
}

static const char *dev_str(struct src *s, const char *name, const char *key, char *out, size_t len)
{
	struct json_object *j = src_host_json(s), *d = device(j, name);

	snprintf(out, len, "%s", d ? json_object_get_string(json_object_object_get(d, key)) : "(gone)");
	json_object_put(j);
	return out;
}

static void rescan_read(struct src *s)
{
	struct clayout *l;
	const uint64_t *v;

	((struct host *)s->priv)->next_scan_ns = 0;
	assert_int_equal(s->ops->read(s, &l, &v), 0);
}

/* A rescan (every 5 s) looks at each disk again without identifying it
 * anew while it is the same disk: its diskseq unchanged, its model, serial
 * and the rest are as read (on virtio_blk the serial's read is a request
 * to the device), its queue depth read again. Another diskseq under the
 * name is another disk: identified. A kernel without diskseq: identified
 * at every rescan, as before. A name gone from diskstats is forgotten. */
static void source__rescan__same_disk_not_identified_again(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	char b[128];
	struct json_object *j;

	(void)st;
	put("sys/block/nvme0n1/diskseq", "7\n");
	s = open_tree(&o);
	rescan_read(s);
	assert_string_equal(dev_str(s, "nvme0n1", "model", b, sizeof(b)), "XG7000-2TB 2242");
	put("sys/block/nvme0n1/device/model", "OTHER\n");
	put("sys/block/nvme0n1/queue/nr_requests", "64\n");
	put("sys/block/vda/queue/rotational", "1\n");
	rescan_read(s);
	/* the same nvme0n1: not identified again, its depth read again */
	assert_string_equal(dev_str(s, "nvme0n1", "model", b, sizeof(b)), "XG7000-2TB 2242");
	assert_string_equal(dev_str(s, "nvme0n1", "nr_requests", b, sizeof(b)), "64");
	/* vda has no diskseq here: identified at each rescan */
	assert_string_equal(dev_str(s, "vda", "rotational", b, sizeof(b)), "true");
	/* another disk under the name */
	put("sys/block/nvme0n1/diskseq", "9\n");
	rescan_read(s);
	assert_string_equal(dev_str(s, "nvme0n1", "model", b, sizeof(b)), "OTHER");
	/* gone from diskstats: forgotten at the rescan */
	put("proc/diskstats", " 253       0 vda 51234 120 4100066 30911 88213 5021 2214066 120331 "
	    "2 91230 160250 10 0 80 3 4411 9120\n");
	rescan_read(s);
	assert_string_equal(dev_str(s, "nvme0n1", "model", b, sizeof(b)), "(gone)");
	j = src_host_json(s);
	assert_int_equal(json_object_array_length(json_object_object_get(j, "devices")), 1);
	json_object_put(j);
	s->ops->close(s);
	put("proc/diskstats", diskstats);
	put("sys/block/nvme0n1/device/model", "XG7000-2TB 2242                         \n");
	put("sys/block/nvme0n1/queue/nr_requests", "1023\n");
	put("sys/block/vda/queue/rotational", "0\n");
	assert_int_equal(unlink_rel("sys/block/nvme0n1/diskseq"), 0);
}

/* The disks a process reads from: a block device it holds open, and the
 * device of the file system of a file it holds (fdinfo's mnt_id in its
 * mountinfo; a partition names its disk); sockets and pipes are not
 * files. */
static void source__process_disks__from_fds_and_mounts(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	struct json_object *j, *p;
	char path[512];
	int pid = 4242;

	(void)st;
	snprintf(path, sizeof(path), "%s/proc/4242/fd", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/4242/fd/3", root);
	assert_int_equal(symlink("/dev/nvme0n1", path), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/fd/4", root);
	assert_int_equal(symlink("/data/engram/rows.bin", path), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/fd/5", root);
	assert_int_equal(symlink("socket:[12345]", path), 0);
	put("proc/4242/fdinfo/4", "pos:\t0\nflags:\t0100002\nmnt_id:\t31\nino:\t77\n");
	put("proc/4242/mountinfo", "22 1 253:0 / / rw - ext4 /dev/root rw\n"
	    "31 22 254:1 / /data rw,relatime shared:1 - ext4 /dev/vda1 rw\n");
	snprintf(path, sizeof(path), "%s/sys/dev", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/dev/block", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/dev/block/254:1", root);
	assert_int_equal(symlink("../../devices/pci0000:00/virtio1/block/vda/vda1", path), 0);
	s = open_tree(&o);
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	j = src_host_json(s);
	p = json_object_array_get_idx(json_object_object_get(j, "processes"), 0);
	assert_non_null(p);
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(p, "devices"),
							   JSON_C_TO_STRING_PLAIN),
			    "[\"nvme0n1\",\"vda\"]");
	json_object_put(j);
	s->ops->close(s);
}

static void source__producer_exits__sum_kept(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	uint64_t before;

	(void)st;
	strcpy(o.prod[0].name, "engram");
	strcpy(o.prod[0].comm, "cat");
	o.nprod = 1;
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.engram.processes"), 1);
	/* counted from when it was found: no history in a window */
	assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), 0);
	put("proc/4242/task/4243/schedstat", "100 3500 3\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	before = val(l, v, "producer.engram.run_delay_ns");
	assert_int_equal(before, 1000);
	put("proc/4242/task/4243/schedstat", "100 2500 3\n");
	{
		char a[256], b[256];

		snprintf(a, sizeof(a), "%s/proc/4242", root);
		snprintf(b, sizeof(b), "%s/proc/gone4242", root);
		assert_int_equal(rename(a, b), 0);
		assert_int_equal(s->ops->read(s, &l, &v), 0);
		assert_int_equal(val(l, v, "producer.engram.processes"), 0);
		/* what it used stays: a window never sees the sum go down */
		assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), before);
		assert_int_equal(rename(b, a), 0);
	}
	s->ops->close(s);
}

/* A producer's counters never fall while its process lives: a read that
 * fails once, a thread file that cannot be parsed, a thread that exits.
 * A fall reads as a counter reset in a window (cnt_delta) and counts the
 * whole total again: seen in CI as a block I/O delay of 323% of the window. */
static void source__producer_read_fails__sum_never_falls(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	uint64_t before;

	(void)st;
	strcpy(o.prod[0].name, "engram");
	strcpy(o.prod[0].comm, "cat");
	o.nprod = 1;
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	put("proc/4242/task/4243/schedstat", "100 3500 3\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	before = val(l, v, "producer.engram.run_delay_ns");
	assert_int_equal(before, 1000);
	/* the process's stat cannot be parsed this time */
	put("proc/4242/stat", "4242 (cat\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), before);
	assert_int_equal(val(l, v, "producer.engram.processes"), 1);
	put("proc/4242/stat", self_stat);
	/* a thread's schedstat cannot be parsed: its part is not lost */
	put("proc/4242/task/4243/schedstat", "garbage\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), before);
	/* read again: it goes on from where it was, not counted twice */
	put("proc/4242/task/4243/schedstat", "100 4000 3\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), 1500);
	/* a thread exits (its part leaves the sum): the figure holds */
	put("proc/4242/task/4243/schedstat", "100 200 3\n");
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.engram.run_delay_ns"), 1500);
	put("proc/4242/task/4243/schedstat", "100 2500 3\n");
	s->ops->close(s);
}

/* A producer named by its cgroup: its processes from cgroup.procs, the
 * group's own pressure (v2) and CPU throttling (v2 usec, v1 ns). */
static void source__cgroup_producer__pressure_and_throttling(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	char e[128];
	uint64_t x;

	(void)st;
	put("cg2/cgroup.procs", "4242\n");
	put("cg2/io.pressure", psi_io);
	put("cg2/cpu.stat", "usage_usec 10\nnr_periods 5\nnr_throttled 2\nthrottled_usec 7000\n");
	put("cg1/cgroup.procs", "4242\n");
	put("cg1/cpu.stat", "nr_periods 5\nnr_throttled 3\nthrottled_time 9000\n");
	strcpy(o.prod[0].name, "v2");
	snprintf(o.prod[0].cgroup, sizeof(o.prod[0].cgroup), "%s/cg2", root);
	strcpy(o.prod[1].name, "v1");
	snprintf(o.prod[1].cgroup, sizeof(o.prod[1].cgroup), "%s/cg1", root);
	o.nprod = 2;
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "producer.v2.processes"), 1);
	assert_int_equal(val(l, v, "producer.v2.psi.io.full_us"), 6543492);
	assert_int_equal(val(l, v, "producer.v2.throttled_ns"), 7000000);
	assert_int_equal(val(l, v, "producer.v2.nr_throttled"), 2);
	assert_int_equal(val(l, v, "producer.v1.throttled_ns"), 9000);
	assert_int_equal(clayout_find(l, "producer.v1.psi.io.some_us"), -1);
	s->ops->close(s);
	assert_int_equal(host_parse_kv("a 1\nthrottled_usec x\n", 21, "throttled_usec", &x, e,
				       sizeof(e)), -EINVAL);
	assert_int_equal(host_parse_kv("a 1\n", 4, "throttled_usec", &x, e, sizeof(e)), -ENOENT);
}

struct lims {
	char out[256];
};

static void lim_collect(unsigned maj, unsigned min, const char *kind, uint64_t v, void *arg)
{
	struct lims *L = arg;
	size_t n = strlen(L->out);

	snprintf(L->out + n, sizeof(L->out) - n, "%u:%u %s=%llu;", maj, min, kind,
		 (unsigned long long)v);
}

/* blk-throttle's files: v2 io.max (max is no limit, an unknown key is a
 * later kernel's), a v1 blkio.throttle file; malformed lines named. */
static void iolimit__iomax_and_v1__limits_set(void **st)
{
	struct lims L = { "" };
	char e[128];

	(void)st;
	assert_int_equal(host_parse_iolimit("7:3 rbps=max wbps=max riops=2 wiops=max\n"
					    "8:0 rbps=1048576 wbps=max riops=max wiops=100 x=1\n",
					    88, NULL, lim_collect, &L, e, sizeof(e)), 3);
	assert_string_equal(L.out, "7:3 riops=2;8:0 rbps=1048576;8:0 wiops=100;");
	L.out[0] = 0;
	assert_int_equal(host_parse_iolimit("7:3 2\n254:1 50\n", 15, "riops", lim_collect, &L, e,
					    sizeof(e)), 2);
	assert_string_equal(L.out, "7:3 riops=2;254:1 riops=50;");
	assert_int_equal(host_parse_iolimit("7:3 riops=x\n", 12, NULL, lim_collect, &L, e,
					    sizeof(e)), -EINVAL);
	assert_string_equal(e, "line 1: riops is not a number");
	assert_int_equal(host_parse_iolimit("7:3 1\nnope 2\n", 13, "rbps", lim_collect, &L, e,
					    sizeof(e)), -EINVAL);
	assert_string_equal(e, "line 2: no MAJ:MIN");
	assert_int_equal(host_parse_iolimit("7:3 riops\n", 10, NULL, lim_collect, &L, e,
					    sizeof(e)), -EINVAL);
}

/* A process's I/O limits from its cgroups (/proc/PID/cgroup, the mounts
 * of /proc/self/mountinfo): of each kind the smallest up the tree binds
 * (an ancestor's 2 over its own 50), an ancestor adds the kinds it alone
 * sets, v1 and v2 both; a device the source reads is named, another by
 * MAJ:MIN. */
static void source__process_io_limits__smallest_up_the_tree(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	struct json_object *j, *p;
	char path[512], mi[1024];
	int pid = 4242;

	(void)st;
	snprintf(mi, sizeof(mi), "22 1 253:0 / / rw - ext4 /dev/root rw\n"
		 "30 22 0:26 / %s/cgv2 rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
		 "35 22 0:31 / %s/cgv1cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
		 "36 22 0:32 / %s/cgv1 rw - cgroup cgroup rw,blkio\n", root, root, root);
	put("proc/self/mountinfo", mi);
	put("proc/4242/cgroup", "9:cpu,cpuacct:/jobs/c3\n5:blkio:/jobs/b3\n0::/jobs/r3\n");
	/* the parent's 2 binds, not the child's 50: a bio passes both */
	put("cgv1/jobs/b3/blkio.throttle.read_iops_device", "254:1 50\n");
	put("cgv1/jobs/blkio.throttle.read_iops_device", "254:1 2\n");
	put("cgv1/jobs/blkio.throttle.read_bps_device", "254:1 1048576\n");
	put("cgv1cpu/jobs/c3/blkio.throttle.read_iops_device", "254:1 1\n");
	put("cgv2/jobs/r3/io.max", "8:0 rbps=max wbps=max riops=max wiops=100\n");
	snprintf(path, sizeof(path), "%s/sys/dev/block", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/dev/block/254:1", root);
	if (symlink("../../devices/pci0000:00/virtio1/block/vda/vda1", path) < 0)
		assert_int_equal(errno, EEXIST);
	s = open_tree(&o);
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	j = src_host_json(s);
	p = json_object_array_get_idx(json_object_object_get(j, "processes"), 0);
	assert_non_null(p);
	assert_string_equal(json_object_to_json_string_ext(json_object_object_get(p, "io_limits"),
							   JSON_C_TO_STRING_PLAIN),
			    "[{\"device\":\"vda\",\"limit\":\"riops=2 rbps=1048576\","
			    "\"cgroup\":\"\\/jobs\"},{\"device\":\"8:0\",\"limit\":\"wiops=100\","
			    "\"cgroup\":\"\\/jobs\\/r3\"}]");
	json_object_put(j);
	s->ops->close(s);
}

static void source__missing_and_huge__says_why(void **st)
{
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	char path[256];
	FILE *f;

	(void)st;
	/* no PSI at all */
	snprintf(path, sizeof(path), "%s/proc/pressure", root);
	rename(path, "/tmp/test_src_host_psi_away");
	{
		char to[256];

		snprintf(to, sizeof(to), "%s/proc/pressure.away", root);
		rename("/tmp/test_src_host_psi_away", to);
	}
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_non_null(strstr(s->err, "CONFIG_PSI"));
	assert_int_equal(clayout_find(l, "host.psi.io.some_us"), -1);
	assert_true(clayout_find(l, "host.disk.vda.reads") >= 0);
	s->ops->close(s);
	{
		char from[256];

		snprintf(from, sizeof(from), "%s/proc/pressure.away", root);
		assert_int_equal(rename(from, path), 0);
	}
	/* a diskstats of 400 devices: at most HOST_MAX_DISKS read, said */
	o.ndisks = 1;
	strcpy(o.disks[0], "d*");
	snprintf(path, sizeof(path), "%s/proc/diskstats", root);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 400; i++)
		fprintf(f, "8 %d d%d 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", i, i);
	fclose(f);
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_true(clayout_find(l, "host.disk.d255.reads") >= 0);
	assert_int_equal(clayout_find(l, "host.disk.d256.reads"), -1);
	assert_non_null(strstr(s->err, "more than 256"));
	/* a malformed line: the devices before it are read, the error named */
	f = fopen(path, "w");
	fprintf(f, "8 0 d0 1 2 3 4 5 6 7 8 9 10 11\n8 1 d1 1 2\n");
	fclose(f);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_true(clayout_find(l, "host.disk.d0.reads") >= 0);
	assert_non_null(strstr(s->err, "line 2"));
	s->ops->close(s);
	/* a diskstats beyond the 256 KiB read: what fits is read, the line
	 * cut at the end is not, and that is said */
	strcpy(o.disks[0], "keep*");
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "8 0 keep0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n");
	for (int i = 0; i < 8000; i++)
		fprintf(f, "8 %d other%d 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", i, i);
	fclose(f);
	s = open_tree(&o);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	assert_int_equal(val(l, v, "host.disk.keep0.flush_ms"), 17);
	assert_non_null(strstr(s->err, "larger than 256 KiB"));
	assert_null(strstr(s->err, "numbers, not"));
	s->ops->close(s);
	put("proc/diskstats", diskstats);
}

static const char *sget(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

static void say(const char *msg, void *arg)
{
	(void)arg;
	print_message("rules: %s\n", msg);
}

/* The source's names are counter names a site's signals can read as they
 * stand (nicstall.rules(5)): dotted names and sum() over a disk pattern. */
static void rules__host_counter_names__signals_read_them(void **st)
{
	static const char *const names[] = { "90-host.rules" };
	static const char *const texts[] = {
		"signal io_full generic = host.psi.io.full_us\n"
		"signal disk_reads generic = sum(host.disk.*.reads)\n"
		"signal wait generic = producer.engram.blkio_delay_ns + owner.4242.run_delay_ns\n"
		"rule disk-bound {\n  verdict producer-stall\n"
		"  require maxof(port.stall.io_full) > 0.5 * 1e6 * stall.span_s\n"
		"  explain \"io full {maxof(port.stall.io_full)} us\"\n}\n",
	};
	struct host_opts o = { 0 };
	struct src *s;
	struct clayout *l;
	const uint64_t *v;
	struct rules *r = NULL;
	struct json_object *c = json_object_new_object();
	double x;
	int pid = 4242;

	(void)st;
	strcpy(o.prod[0].name, "engram");
	strcpy(o.prod[0].comm, "cat");
	o.nprod = 1;
	s = open_tree(&o);
	src_host_watch(s, &pid, 1);
	assert_int_equal(s->ops->read(s, &l, &v), 0);
	for (unsigned i = 0; i < l->n; i++)
		json_object_object_add(c, l->names[i], json_object_new_uint64(v[i]));
	assert_int_equal(rules_load_texts(names, texts, 1, &r, say, NULL), 0);
	assert_int_equal(rules_signal(r, "generic", "io_full", c, &x), 0);
	assert_true(x == 6543492);
	assert_int_equal(rules_signal(r, "generic", "disk_reads", c, &x), 0);
	assert_true(x == 51234 + 2320000);              /* vda and nvme0n1, not vda1 */
	assert_int_equal(rules_signal(r, "generic", "wait", c, &x), 0);
	assert_true(x == 3500);
	{
		/* the port's counters in the facts as facts_build() puts them */
		struct json_object *f = json_object_new_object(), *ps = json_object_new_object();
		struct json_object *po = json_object_new_object(), *per = json_object_new_object();
		struct json_object *res;

		json_object_object_add(f, FK_SCHEMA, json_object_new_int(FACTS_SCHEMA));
		json_object_object_add(f, FK_PORT, json_object_new_string("p"));
		json_object_object_add(po, FK_P_PROFILE, json_object_new_string("generic"));
		json_object_object_add(per, FK_SPAN_S, json_object_new_double(2.0));
		json_object_object_add(per, FK_COUNTERS, json_object_get(c));
		json_object_object_add(po, FK_PER_STALL, per);
		json_object_object_add(ps, "p", po);
		json_object_object_add(f, FK_PORTS, ps);
		res = rules_classify(r, f);
		assert_string_equal(sget(res, RK_VERDICT), "producer-stall");
		json_object_put(res);
		json_object_put(f);
	}
	rules_free(r);
	json_object_put(c);
	s->ops->close(s);
}

static void hostconf__bad_values__errors(void **st)
{
	struct host_opts o = { 0 };
	struct host_producer *p;
	char e[256];

	(void)st;
	assert_int_equal(hostconf_key(&o, "resources", "maybe", e, sizeof(e)), -1);
	assert_int_equal(hostconf_key(&o, "proc_root", "rel/path", e, sizeof(e)), -1);
	assert_int_equal(hostconf_key(&o, "disks", "nvme* ../x", e, sizeof(e)), -1);
	assert_int_equal(hostconf_key(&o, "disks", "", e, sizeof(e)), -1);
	assert_int_equal(hostconf_key(&o, "bogus", "1", e, sizeof(e)), -1);
	assert_non_null(strstr(e, "bogus"));
	assert_int_equal(hostconf_key(&o, "disks", "nvme* sd?", e, sizeof(e)), 0);
	assert_int_equal(o.ndisks, 2);
	assert_int_equal(hostconf_producer_new(&o, "bad name", 3, &p, e, sizeof(e)), -1);
	assert_int_equal(hostconf_producer_new(&o, "flare", 3, &p, e, sizeof(e)), 0);
	assert_int_equal(hostconf_producer_new(&o, "flare", 9, &p, e, sizeof(e)), -1);
	assert_non_null(strstr(e, "line 3"));
	assert_int_equal(hostconf_producer_new(&o, "flare2", 9, &p, e, sizeof(e)), 0);
	assert_int_equal(hostconf_producer_finish(p, e, sizeof(e)), -1);
	assert_int_equal(hostconf_producer_key(p, "comm", "a-name-longer-than-15", e, sizeof(e)), -1);
	assert_int_equal(hostconf_producer_key(p, "cgroup", "relative", e, sizeof(e)), -1);
	assert_int_equal(hostconf_producer_key(p, "comm", "flare", e, sizeof(e)), 0);
	assert_int_equal(hostconf_producer_finish(p, e, sizeof(e)), 0);
	assert_int_equal(hostconf_producer_key(p, "cgroup", "/sys/fs/cgroup/blkio/x", e,
					       sizeof(e)), 0);
	assert_int_equal(hostconf_producer_finish(p, e, sizeof(e)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psi__real_io__some_and_full),
		cmocka_unit_test(psi__malformed_truncated__einval_named),
		cmocka_unit_test(diskstats__17_and_11_fields__in_order),
		cmocka_unit_test(diskstats__malformed__einval_names_line),
		cmocka_unit_test(stat__real__utime_stime_blkio),
		cmocka_unit_test(stat_schedstat_io__malformed__einval),
		cmocka_unit_test(source__tree__psi_whole_disks_owner_threads),
		cmocka_unit_test(source__rescan__same_disk_not_identified_again),
		cmocka_unit_test(source__process_disks__from_fds_and_mounts),
		cmocka_unit_test(source__producer_exits__sum_kept),
		cmocka_unit_test(source__producer_read_fails__sum_never_falls),
		cmocka_unit_test(source__cgroup_producer__pressure_and_throttling),
		cmocka_unit_test(iolimit__iomax_and_v1__limits_set),
		cmocka_unit_test(source__process_io_limits__smallest_up_the_tree),
		cmocka_unit_test(source__missing_and_huge__says_why),
		cmocka_unit_test(rules__host_counter_names__signals_read_them),
		cmocka_unit_test(hostconf__bad_values__errors),
	};

	return cmocka_run_group_tests(tests, tree_setup, tree_teardown);
}
