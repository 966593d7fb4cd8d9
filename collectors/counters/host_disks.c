/* host_disks: the host source's block devices: /proc/diskstats, each
 * disk's identity from sysfs (model, firmware, transport, the serial
 * hashed), the disks of the files a process holds open and its cgroups'
 * I/O limits on them (host_int.h). */
#include "collectors/counters/host_int.h"
#include "lib/log.h"
#include "lib/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

const char *const host_dstat_names[HOST_DSTAT_N] = {
	"reads", "reads_merged", "read_sectors", "read_ms",
	"writes", "writes_merged", "write_sectors", "write_ms",
	"in_flight", "io_ms", "queue_ms",
	"discards", "discards_merged", "discard_sectors", "discard_ms",
	"flushes", "flush_ms",
};

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	for (char *q = s; *q; q++)
		if (!isprint((unsigned char)*q))
			*q = '?';
}

static void sysattr(struct host *h, const char *dev, const char *attr, char *out, size_t len)
{
	ssize_t n = host_read_rel(h, h->sys, out, len, "block/%s/%s", dev, attr);

	if (n < 0)
		out[0] = 0;
	else
		trim(out);
}

/* The serial is an identifier of the machine: only a digest leaves, the
 * first 64 bits of its SHA-256 in hex. */
static void serial_digest(const char *serial, char out[17])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	out[0] = 0;
	if (!serial[0] || EVP_Digest(serial, strlen(serial), md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen < 8)
		return;
	for (unsigned i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void identify(struct host *h, struct hdisk *d)
{
	char buf[128], serial[128];
	const char *nm = d->name;

	sysattr(h, nm, "device/model", d->model, sizeof(d->model));
	sysattr(h, nm, "device/vendor", d->vendor, sizeof(d->vendor));
	sysattr(h, nm, "device/firmware_rev", d->firmware, sizeof(d->firmware));
	if (!d->firmware[0])
		sysattr(h, nm, "device/rev", d->firmware, sizeof(d->firmware));
	sysattr(h, nm, "device/serial", serial, sizeof(serial));
	if (!serial[0])
		sysattr(h, nm, "serial", serial, sizeof(serial));   /* virtio_blk */
	serial_digest(serial, d->serial_sha256);
	sysattr(h, nm, "queue/rotational", buf, sizeof(buf));
	d->rotational = buf[0] ? atoi(buf) != 0 : -1;
	sysattr(h, nm, "queue/nr_requests", buf, sizeof(buf));
	d->nr_requests = buf[0] ? atol(buf) : -1;
	if (!strncmp(nm, "nvme", 4))
		util_strlcpy(d->transport, "nvme", sizeof(d->transport));
	else if (!strncmp(nm, "vd", 2))
		util_strlcpy(d->transport, "virtio", sizeof(d->transport));
	else if (!strncmp(nm, "sd", 2))
		util_strlcpy(d->transport, !strncmp(d->vendor, "ATA", 3) ? "sata" : "scsi",
			     sizeof(d->transport));
	else if (!strncmp(nm, "loop", 4))
		util_strlcpy(d->transport, "loop", sizeof(d->transport));
	else if (!strncmp(nm, "dm-", 3))
		util_strlcpy(d->transport, "dm", sizeof(d->transport));
	else if (!strncmp(nm, "md", 2))
		util_strlcpy(d->transport, "md", sizeof(d->transport));
	else
		util_strlcpy(d->transport, "other", sizeof(d->transport));
}

/* Is this diskstats name watched? Configured patterns, else the whole
 * disks (in /sys/block: a partition is not) but RAM disks and loop
 * devices with nothing attached (size 0). */
static int judge_disk(struct host *h, const char *name)
{
	char path[PATH_MAX + 128], buf[64];

	if (h->o.ndisks) {
		for (unsigned i = 0; i < h->o.ndisks; i++)
			if (!fnmatch(h->o.disks[i], name, 0))
				return 1;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/block/%s", h->sys, name);
	if (access(path, F_OK) < 0)
		return 0;
	if (!strncmp(name, "ram", 3))
		return 0;
	if (!strncmp(name, "loop", 4)) {
		sysattr(h, name, "size", buf, sizeof(buf));
		return buf[0] && strcmp(buf, "0");
	}
	return 1;
}

/* The disk's sequence number, /sys/block/NAME/diskseq (Linux 5.15): a new
 * one for every disk made (inc_diskseq() in __alloc_disk_node()) and at a
 * media change (disk_force_media_change()), so another disk under a name
 * has another. 0 when there is none (an older kernel, a partition). */
static uint64_t diskseq_of(struct host *h, const char *name)
{
	char buf[32], *end;
	unsigned long long v;

	sysattr(h, name, "diskseq", buf, sizeof(buf));
	if (!buf[0])
		return 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	return errno || *end ? 0 : (uint64_t)v;
}

/* Judge name anew into d (and identify it if kept). */
static void judge_anew(struct host *h, struct hdisk *d, const char *name, uint64_t seq)
{
	memset(d, 0, sizeof(*d));
	util_strlcpy(d->name, name, sizeof(d->name));
	d->seq = seq;
	d->scan = h->disk_scan;
	d->keep = judge_disk(h, name);
	if (d->keep)
		identify(h, d);
}

/* A known name at a rescan: the same disk (its diskseq unchanged) keeps
 * what identify() read, its queue depth (writable: nr_requests) read
 * again; another disk, a loop device (an attach or detach moves its
 * diskseq only where disk_force_media_change() calls inc_diskseq(), not
 * on every kernel that has diskseq) or any disk on a kernel without
 * diskseq is judged and identified anew. Identifying is some ten sysfs
 * reads a disk, and on virtio_blk the serial's read is a request to the
 * device (serial_show() -> virtblk_get_id()): not every 5 s for each disk. */
static void recheck(struct host *h, struct hdisk *d)
{
	int loop = !strncmp(d->name, "loop", 4);
	uint64_t seq = loop ? 0 : diskseq_of(h, d->name);
	char buf[64];

	if (!seq || seq != d->seq) {
		char name[sizeof(d->name)];

		util_strlcpy(name, d->name, sizeof(name));
		judge_anew(h, d, name, seq);
		return;
	}
	d->scan = h->disk_scan;
	if (!d->keep)
		return;
	sysattr(h, d->name, "queue/nr_requests", buf, sizeof(buf));
	d->nr_requests = buf[0] ? atol(buf) : -1;
}

static struct hdisk *known_disk(struct host *h, const char *name, int rescan)
{
	struct hdisk *d;

	for (unsigned i = 0; i < h->nknown; i++)
		if (!strcmp(h->known[i].name, name)) {
			d = &h->known[i];
			if (rescan && d->scan != h->disk_scan)
				recheck(h, d);
			return d;
		}
	if (h->nknown >= KNOWN_MAX)
		return NULL;
	d = &h->known[h->nknown++];
	judge_anew(h, d, name, strncmp(name, "loop", 4) ? diskseq_of(h, name) : 0);
	return d;
}

/* After a rescan's pass: the names diskstats no longer lists go. */
static void forget_gone(struct host *h)
{
	unsigned w = 0;

	for (unsigned i = 0; i < h->nknown; i++)
		if (h->known[i].scan == h->disk_scan)
			h->known[w++] = h->known[i];
	h->nknown = w;
}

struct dctx {
	struct host *h;
	unsigned kept;
	int rescan;
};

static int disk_cb(const struct host_dstat *ds, void *arg)
{
	struct dctx *c = arg;
	struct host *h = c->h;
	struct hdisk *d = known_disk(h, ds->name, c->rescan);

	if (!d || !d->keep)
		return 0;
	if (c->kept >= HOST_MAX_DISKS) {
		if (!h->disks_warned)
			log_warnx("host: more than %d block devices watched; %s and those after "
				  "it are not read (narrow them with [host] disks =)",
				  HOST_MAX_DISKS, ds->name);
		h->disks_warned = 1;
		util_errf(h->disk_note, sizeof(h->disk_note), "more than %d block devices: "
			  "%s and those after it not read", HOST_MAX_DISKS, ds->name);
		return -1;
	}
	c->kept++;
	for (unsigned i = 0; i < ds->n; i++)
		host_add(h, ds->v[i], "host.disk.%s.%s", ds->name, host_dstat_names[i]);
	return 0;
}

void host_read_disks(struct host *h, int rescan)
{
	struct dctx c = { h, 0, rescan };
	char e[200];
	ssize_t n;

	h->disk_note[0] = 0;
	n = host_read_rel(h, h->proc, h->buf, BUF_MAX, "diskstats");
	if (n < 0) {
		util_errf(h->disk_note, sizeof(h->disk_note), "%s/diskstats: %s", h->proc,
			  strerror(errno));
		return;
	}
	if (n >= BUF_MAX - 1) {
		/* the line cut at the end is not read */
		while (n > 0 && h->buf[n - 1] != '\n')
			n--;
		util_errf(h->disk_note, sizeof(h->disk_note), "%s/diskstats is larger than %d "
			  "KiB: the devices after that are not read", h->proc, BUF_MAX / 1024);
	}
	if (host_parse_diskstats(h->buf, (size_t)n, disk_cb, &c, e, sizeof(e)) < 0)
		util_errf(h->disk_note, sizeof(h->disk_note), "%s/diskstats: %s", h->proc, e);
	else if (rescan && c.kept < HOST_MAX_DISKS)
		forget_gone(h);         /* every name was seen: the others are gone */
}

/* The whole disk of device MAJ:MIN (a partition's parent), when it is a
 * disk the source reads: /sys/dev/block/MAJ:MIN links to its sysfs
 * directory (.../nvme0n1/nvme0n1p2). */
static const char *disk_of_devt(struct host *h, const char *majmin, char *out, size_t len)
{
	char path[PATH_MAX + 128], link[PATH_MAX];
	ssize_t n;
	char *base, *parent;
	struct hdisk *d;

	snprintf(path, sizeof(path), "%s/dev/block/%s", h->sys, majmin);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return NULL;
	link[n] = 0;
	base = strrchr(link, '/');
	if (!base)
		return NULL;
	*base++ = 0;
	parent = strrchr(link, '/');
	parent = parent ? parent + 1 : link;
	for (int k = 0; k < 2; k++) {
		const char *name = k ? parent : base;

		for (unsigned i = 0; i < h->nknown; i++) {
			d = &h->known[i];
			if (d->keep && !strcmp(d->name, name)) {
				util_strlcpy(out, name, len);
				return out;
			}
		}
	}
	return NULL;
}

static void proc_add_dev(struct hproc *p, const char *name)
{
	for (unsigned i = 0; i < p->ndev; i++)
		if (!strcmp(p->dev[i], name))
			return;
	if (p->ndev < HOST_PROC_DEVS)
		util_strlcpy(p->dev[p->ndev++], name, sizeof(p->dev[0]));
}

/* The disks a process reads from: the block devices it holds open
 * (/proc/PID/fd links to /dev/NAME; readlink reads no file system) and
 * the devices of the file systems of its other open files (fdinfo's
 * mnt_id, in /proc/PID/mountinfo: proc_fdinfo_show(), show_mountinfo(),
 * fs/proc). Proc reads only, never the files themselves: a hung mount
 * cannot block the loop. At most HOST_FD_SCAN descriptors. */
void host_proc_devices(struct host *h, struct hproc *p)
{
	char path[PATH_MAX + 320], link[PATH_MAX], name[32], majmin[32];
	unsigned mnt[HOST_FD_SCAN], nmnt = 0, seen = 0;
	struct dirent *e;
	DIR *dir;
	ssize_t n;

	p->ndev = 0;
	snprintf(path, sizeof(path), "%s/%d/fd", h->proc, p->pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && seen < HOST_FD_SCAN) {
		if (e->d_name[0] == '.')
			continue;
		seen++;
		snprintf(path, sizeof(path), "%s/%d/fd/%s", h->proc, p->pid, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0 || link[0] != '/')
			continue;       /* socket:[..], pipe:[..], anon_inode:... */
		link[n] = 0;
		if (!strncmp(link, "/dev/", 5)) {
			for (unsigned i = 0; i < h->nknown; i++)
				if (h->known[i].keep && !strcmp(h->known[i].name, link + 5))
					proc_add_dev(p, link + 5);
			continue;
		}
		/* a file: its file system's mount */
		if (host_read_rel(h, h->proc, h->small, sizeof(h->small), "%d/fdinfo/%s", p->pid,
			     e->d_name) > 0) {
			const char *m = strstr(h->small, "\nmnt_id:");
			unsigned id, dup = 0;

			if (!m || sscanf(m + 8, "%u", &id) != 1)
				continue;
			for (unsigned i = 0; i < nmnt; i++)
				dup |= mnt[i] == id;
			if (!dup)
				mnt[nmnt++] = id;
		}
	}
	closedir(dir);
	if (!nmnt || host_read_rel(h, h->proc, h->buf, BUF_MAX, "%d/mountinfo", p->pid) <= 0)
		return;
	for (char *l = h->buf; l && *l;) {
		char *nl = strchr(l, '\n');
		unsigned id, parent;

		if (nl)
			*nl = 0;
		if (sscanf(l, "%u %u %31s", &id, &parent, majmin) == 3)
			for (unsigned i = 0; i < nmnt; i++)
				if (mnt[i] == id && disk_of_devt(h, majmin, name, sizeof(name)))
					proc_add_dev(p, name);
		l = nl ? nl + 1 : NULL;
	}
}

/* The cgroup mounts the I/O limits are read under: the first cgroup2 and
 * the v1 hierarchy with the blkio controller (show_mountinfo(): "ID
 * PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPER"). A
 * mount point with a space (octal-escaped) is left out. */
void host_find_cgroup_mounts(struct host *h)
{
	if (host_read_rel(h, h->proc, h->buf, BUF_MAX, "self/mountinfo") <= 0)
		return;
	for (char *l = h->buf; l && *l;) {
		char *nl = strchr(l, '\n'), *dash, mp[PATH_MAX], fs[32], super[256];

		if (nl)
			*nl = 0;
		dash = strstr(l, " - ");
		if (dash && sscanf(l, "%*u %*u %*s %*s %4095s", mp) == 1 && !strchr(mp, '\\') &&
		    sscanf(dash + 3, "%31s %*s %255s", fs, super) == 2) {
			if (!strcmp(fs, "cgroup2") && !h->cg2[0])
				util_strlcpy(h->cg2, mp, sizeof(h->cg2));
			else if (!strcmp(fs, "cgroup") && !h->cg1_blkio[0]) {
				char *save = NULL;

				for (char *t = strtok_r(super, ",", &save); t; t = strtok_r(NULL, ",", &save))
					if (!strcmp(t, "blkio"))
						util_strlcpy(h->cg1_blkio, mp, sizeof(h->cg1_blkio));
			}
		}
		l = nl ? nl + 1 : NULL;
	}
}

struct limctx {
	struct host *h;
	struct hproc *p;
	const char *cgroup;
};

/* io.max's words for blk-throttle's four limits, in the order named */
const char *const host_lim_kinds[HOST_LIM_KINDS] = { "riops", "rbps", "wiops", "wbps" };

static void lim_cb(unsigned maj, unsigned min, const char *kind, uint64_t v, void *arg)
{
	struct limctx *c = arg;
	struct hproc *p = c->p;
	char mm[32], name[32];
	const char *dev;
	unsigned i, k;

	for (k = 0; k < HOST_LIM_KINDS && strcmp(host_lim_kinds[k], kind); k++)
		;
	if (k == HOST_LIM_KINDS)
		return;
	snprintf(mm, sizeof(mm), "%u:%u", maj, min);
	dev = disk_of_devt(c->h, mm, name, sizeof(name));
	if (!dev)
		dev = mm;
	for (i = 0; i < p->nlim; i++)
		if (!strcmp(p->lim[i].dev, dev))
			break;
	if (i == p->nlim) {
		if (p->nlim == HOST_PROC_LIMITS)
			return;
		p->nlim++;
		memset(&p->lim[i], 0, sizeof(p->lim[i]));
		util_strlcpy(p->lim[i].dev, dev, sizeof(p->lim[i].dev));
	}
	/* a bio passes every level: the smallest limit up the tree binds */
	if (!p->lim[i].v[k] || v < p->lim[i].v[k]) {
		p->lim[i].v[k] = v;
		p->lim[i].cg_trunc[k] = strlen(c->cgroup) >= sizeof(p->lim[i].cg[k]);
		util_strlcpy(p->lim[i].cg[k], c->cgroup, sizeof(p->lim[i].cg[k]));
	}
}

/* The I/O limits on the process's block I/O: blk-throttle's, of its own
 * cgroup and every ancestor's (a group's bio is throttled at each level:
 * throtl_bio_submit() climbs tg->parent), from /proc/PID/cgroup ("0::PATH"
 * for v2, "N:blkio[,..]:PATH" for v1). A cgroup throttle holds a read
 * before the device sees it: the disk's await stays low while the process
 * waits (seed 004's emulation), so the limit names the cause. Reads of
 * cgroupfs only, bounded: at most 16 levels; at each src_host_json(), so
 * the evidence has the limits of its moment. Of each kind the smallest
 * limit up the tree binds (a bio passes every level), with the group that
 * sets it. */
void host_proc_io_limits(struct host *h, struct hproc *p)
{
	static const struct { const char *file, *kind; } v1[] = {
		{ "blkio.throttle.read_iops_device", "riops" },
		{ "blkio.throttle.write_iops_device", "wiops" },
		{ "blkio.throttle.read_bps_device", "rbps" },
		{ "blkio.throttle.write_bps_device", "wbps" },
	};
	char cg[SMALL];
	ssize_t n;

	p->nlim = 0;
	if ((!h->cg2[0] && !h->cg1_blkio[0]) ||
	    (n = host_read_rel(h, h->proc, cg, sizeof(cg), "%d/cgroup", p->pid)) <= 0)
		return;
	for (char *l = cg, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		char *c1, *c2, path[PATH_MAX], e[160];
		const char *root;
		int is2, depth = 0;

		nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (!(c1 = strchr(l, ':')) || !(c2 = strchr(c1 + 1, ':')) || c2[1] != '/')
			continue;
		*c2 = 0;
		is2 = c1[1] == 0;
		if (!is2) {
			char ctl[128], *save = NULL;
			int blk = 0;

			util_strlcpy(ctl, c1 + 1, sizeof(ctl));
			for (char *t = strtok_r(ctl, ",", &save); t; t = strtok_r(NULL, ",", &save))
				blk |= !strcmp(t, "blkio");
			if (!blk)
				continue;
		}
		root = is2 ? h->cg2 : h->cg1_blkio;
		if (!root[0] || strstr(c2 + 1, "/.."))
			continue;
		util_strlcpy(path, c2 + 1, sizeof(path));
		for (;;) {
			struct limctx lc = { h, p, path };

			for (size_t k = 0; k < (is2 ? 1 : sizeof(v1) / sizeof(v1[0])); k++) {
				n = host_read_rel(h, root, h->small, sizeof(h->small), "%s/%s", path,
					     is2 ? "io.max" : v1[k].file);
				if (n > 0 && host_parse_iolimit(h->small, (size_t)n, is2 ? NULL : v1[k].kind,
							      lim_cb, &lc, e, sizeof(e)) < 0)
					util_errf(h->proc_note, sizeof(h->proc_note),
						  "pid %d: %s%s/%s: %s", p->pid, root, path,
						  is2 ? "io.max" : v1[k].file, e);
			}
			{
				char *slash = strrchr(path, '/');

				if (!slash || slash == path || ++depth == 16)
					break;  /* the root group sets no limit */
				*slash = 0;
			}
		}
	}
}
