/* src_host: pressure, block devices and the producers' delays (see
 * src_host.h). */
#include "collectors/src_host.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#define BUF_MAX (256 * 1024)            /* /proc/diskstats, cgroup.procs */
#define SMALL 4096                      /* one process's file, a PSI file */
#define RESCAN_NS 5000000000ull         /* producers' processes, disk set */
#define NAME_LEN 112
#define KNOWN_MAX 1024                  /* diskstats names judged */
#define SCAN_MAX 32768                  /* processes whose comm a rescan reads */

const char *const host_dstat_names[HOST_DSTAT_N] = {
	"reads", "reads_merged", "read_sectors", "read_ms",
	"writes", "writes_merged", "write_sectors", "write_ms",
	"in_flight", "io_ms", "queue_ms",
	"discards", "discards_merged", "discard_sectors", "discard_ms",
	"flushes", "flush_ms",
};

enum { PF_CPU, PF_RUNQ, PF_BLKIO, PF_RB, PF_WB, PF_SYSCR, PF_SYSCW, NPF };
static const char *const pf_names[NPF] = {
	"cpu_ns", "run_delay_ns", "blkio_delay_ns", "read_bytes", "write_bytes",
	"syscr", "syscw",
};
static const char *const psi_res[3] = { "cpu", "memory", "io" };

struct hdisk {                  /* one diskstats name, judged */
	char name[64];
	int keep;
	char transport[16], model[64], firmware[64], vendor[32], serial_sha256[17];
	int rotational;             /* -1 unknown */
	long nr_requests;           /* -1 unknown */
};

struct hproc {
	int pid;
	int prod;                   /* producer index, -1: a flow owner */
	int seen;                   /* found by this rescan (producers) */
	uint64_t start;             /* starttime of the first reading */
	char comm[16];
	uint64_t v[NPF];
	uint64_t base[NPF];         /* the first reading (a producer's sums
				     * count from when it was found) */
	int have;                   /* v holds a reading */
	char dev[HOST_PROC_DEVS][32]; /* the disks of the files it holds open */
	unsigned ndev;
	struct {                    /* its cgroups' I/O limits (proc_io_limits) */
		char dev[32];
		uint64_t v[HOST_LIM_KINDS];   /* riops, rbps, wiops, wbps; 0 none */
		char cg[HOST_LIM_KINDS][256]; /* the group that sets each */
		int cg_trunc[HOST_LIM_KINDS];
	} lim[HOST_PROC_LIMITS];
	unsigned nlim;
};

struct host {
	struct host_opts o;
	char proc[PATH_MAX], sys[PATH_MAX];
	long tck;
	int owners[HOST_MAX_PIDS];
	unsigned nowners;
	int gone[HOST_MAX_PIDS];    /* owners dropped (exited) still named by flows */
	unsigned ngone;
	int owners_dirty;
	struct hproc procs[HOST_MAX_PIDS];
	unsigned nprocs;
	uint64_t retired[HOST_MAX_PRODUCERS][NPF];  /* exited processes' part */
	unsigned nlive[HOST_MAX_PRODUCERS];
	uint64_t next_scan_ns;
	struct hdisk *known;
	unsigned nknown;
	int disks_warned;
	/* this read's counters */
	char (*nm)[NAME_LEN];
	uint64_t *vals;
	unsigned n, cap;
	struct clayout *lay;
	char *buf;
	char small[SMALL];
	char psi_note[256], delay_note[256], proc_note[256], disk_note[256];
	char cg2[PATH_MAX], cg1_blkio[PATH_MAX];   /* the mounts, "" none */
	int delay_off;              /* kernel.task_delayacct = 0: blkio reads 0 */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- parsers ---- */

/* The lines of a text, one at a time, empty ones skipped. */
struct lines {
	const char *p, *end;
	unsigned no;                /* the line's number, from 1 */
};

/* The next non-empty line into l (without its newline): 1, 0 at the end,
 * or -EINVAL with err naming a line longer than l. */
static int next_line(struct lines *L, char *l, size_t lsz, char *err, size_t errlen)
{
	while (L->p < L->end) {
		const char *nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
		size_t n = nl ? (size_t)(nl - L->p) : (size_t)(L->end - L->p);

		L->no++;
		if (n >= lsz) {
			util_errf(err, errlen, "line %u: too long", L->no);
			return -EINVAL;
		}
		memcpy(l, L->p, n);
		l[n] = 0;
		L->p += n + 1;
		if (n)
			return 1;
	}
	return 0;
}

static int parse_u64(const char *s, char **end, uint64_t *v)
{
	unsigned long long x;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, end, 10);
	if (errno)
		return -1;
	*v = x;
	return 0;
}

int host_parse_psi(const char *text, size_t len, uint64_t *some_us, uint64_t *full_us,
		   int *has_full, char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	int has_some = 0, rc;
	char l[256];

	*some_us = *full_us = 0;
	*has_full = 0;
	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		const unsigned line = L.no;
		const char *t;
		char *e;
		uint64_t v;
		int full;

		if (!strncmp(l, "some ", 5))
			full = 0;
		else if (!strncmp(l, "full ", 5))
			full = 1;
		else {
			util_errf(err, errlen, "line %u: neither \"some\" nor \"full\"", line);
			return -EINVAL;
		}
		t = strstr(l, " total=");
		if (!t || parse_u64(t + 7, &e, &v) < 0 || (*e && *e != ' ')) {
			util_errf(err, errlen, "line %u: no total=MICROSECONDS", line);
			return -EINVAL;
		}
		if ((full ? *has_full : has_some)) {
			util_errf(err, errlen, "line %u: a second \"%s\" line", line,
				  full ? "full" : "some");
			return -EINVAL;
		}
		if (full) {
			*full_us = v;
			*has_full = 1;
		} else {
			*some_us = v;
			has_some = 1;
		}
	}
	if (rc < 0)
		return rc;
	if (!has_some) {
		util_errf(err, errlen, "no \"some\" line");
		return -EINVAL;
	}
	return 0;
}

int host_parse_diskstats(const char *text, size_t len, host_dstat_fn cb, void *arg,
			 char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	int rc, given = 0;
	char l[512];

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		const unsigned line = L.no;
		struct host_dstat d;
		char *s = l, *e;
		int c = 0;

		memset(&d, 0, sizeof(d));
		if (sscanf(s, "%u %u %63s%n", &d.major, &d.minor, d.name, &c) != 3 || !c) {
			util_errf(err, errlen, "line %u: not \"MAJOR MINOR NAME\"", line);
			return -EINVAL;
		}
		/* the kernel writes '!' for a '/' in a name (cciss!c0d0): a name
		 * is a file name under /sys/block, never a path */
		for (const char *q = d.name; *q; q++)
			if (!isgraph((unsigned char)*q) || *q == '/') {
				util_errf(err, errlen, "line %u: device name has a control byte "
					  "or a '/'", line);
				return -EINVAL;
			}
		if (!strcmp(d.name, ".") || !strcmp(d.name, "..")) {
			util_errf(err, errlen, "line %u: device name '%s'", line, d.name);
			return -EINVAL;
		}
		s += c;
		if (*s && *s != ' ' && *s != '\t') {
			util_errf(err, errlen, "line %u: device name longer than 63", line);
			return -EINVAL;
		}
		while (d.n < HOST_DSTAT_N && parse_u64(s, &e, &d.v[d.n]) == 0) {
			d.n++;
			s = e;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		/* diskstats_show(): 11 fields, 15 with discards (4.18), 17 with
		 * flushes (5.5); more are newer fields, not read */
		if ((d.n != 11 && d.n != 15 && d.n != 17) || (*s && d.n != HOST_DSTAT_N)) {
			util_errf(err, errlen, "line %u (%s): %u numbers, not 11, 15 or 17%s",
				  line, d.name, d.n, *s && d.n < HOST_DSTAT_N ? " (a word in them)" : "");
			return -EINVAL;
		}
		given++;
		if (cb && cb(&d, arg) < 0)
			break;
	}
	return rc < 0 ? rc : given;
}

int host_parse_stat(const char *text, size_t len, struct host_pstat *out,
		    char *err, size_t errlen)
{
	const char *open, *close = NULL;
	char *e;
	unsigned field;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	open = memchr(text, '(', len);
	for (const char *q = text + len; q > text; q--)
		if (q[-1] == ')') {
			close = q - 1;
			break;
		}
	if (!open || !close || close < open || (size_t)(close - open - 1) >= sizeof(out->comm)) {
		util_errf(err, errlen, "no \"(comm)\" of at most 15 characters");
		return -EINVAL;
	}
	memcpy(out->comm, open + 1, (size_t)(close - open - 1));
	out->comm[close - open - 1] = 0;
	/* field 3 is the state; fields are counted from 1 (proc(5)) */
	{
		const char *s = close + 1, *end = text + len;
		char num[32];

		while (s < end && *s == ' ')
			s++;
		if (s >= end || !isalpha((unsigned char)*s)) {
			util_errf(err, errlen, "no state after the comm");
			return -EINVAL;
		}
		out->state = *s++;
		for (field = 4; field <= 42; field++) {
			size_t k = 0;

			while (s < end && *s == ' ')
				s++;
			while (s < end && *s != ' ' && *s != '\n' && k < sizeof(num) - 1)
				num[k++] = *s++;
			num[k] = 0;
			if (!k) {
				util_errf(err, errlen, "%u fields, not 42", field - 1);
				return -EINVAL;
			}
			if (field != 14 && field != 15 && field != 22 && field != 42)
				continue;
			if (parse_u64(num, &e, &v) < 0 || *e) {
				util_errf(err, errlen, "field %u: '%s' is not a number", field, num);
				return -EINVAL;
			}
			if (field == 14)
				out->utime = v;
			else if (field == 15)
				out->stime = v;
			else if (field == 22)
				out->starttime = v;
			else
				out->blkio_ticks = v;
		}
	}
	return 0;
}

int host_parse_schedstat(const char *text, size_t len, uint64_t *run_ns,
			 uint64_t *wait_ns, char *err, size_t errlen)
{
	char l[128], *e;
	uint64_t slices;

	if (len >= sizeof(l)) {
		util_errf(err, errlen, "longer than %zu bytes", sizeof(l) - 1);
		return -EINVAL;
	}
	memcpy(l, text, len);
	l[len] = 0;
	if (parse_u64(l, &e, run_ns) < 0 || parse_u64(e, &e, wait_ns) < 0 ||
	    parse_u64(e, &e, &slices) < 0 || (*e && *e != '\n')) {
		util_errf(err, errlen, "not \"RUN_NS WAIT_NS SLICES\"");
		return -EINVAL;
	}
	return 0;
}

int host_parse_io(const char *text, size_t len, struct host_pio *out,
		  char *err, size_t errlen)
{
	static const char *const keys[4] = { "read_bytes", "write_bytes", "syscr", "syscw" };
	uint64_t *dst[4] = { &out->read_bytes, &out->write_bytes, &out->syscr, &out->syscw };
	struct lines L = { text, text + len, 0 };
	unsigned seen = 0;
	char l[128];
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		char *colon, *e;
		uint64_t v;

		colon = strchr(l, ':');
		if (!colon || parse_u64(colon + 1, &e, &v) < 0 || *e) {
			util_errf(err, errlen, "line %u: not \"KEY: NUMBER\"", L.no);
			return -EINVAL;
		}
		*colon = 0;
		for (unsigned k = 0; k < 4; k++)
			if (!strcmp(l, keys[k])) {
				*dst[k] = v;
				seen |= 1u << k;
			}
	}
	if (rc < 0)
		return rc;
	for (unsigned k = 0; k < 4; k++)
		if (!(seen & (1u << k))) {
			util_errf(err, errlen, "no %s", keys[k]);
			return -EINVAL;
		}
	return 0;
}

int host_parse_kv(const char *text, size_t len, const char *key, uint64_t *v,
		  char *err, size_t errlen)
{
	struct lines L = { text, text + len, 0 };
	size_t kl = strlen(key);
	char l[256];
	int rc;

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		char *e;

		if (strncmp(l, key, kl) || l[kl] != ' ')
			continue;
		if (parse_u64(l + kl + 1, &e, v) < 0 || (*e && *e != ' ')) {
			util_errf(err, errlen, "line %u: %s is not a number", L.no, key);
			return -EINVAL;
		}
		return 0;
	}
	return rc < 0 ? rc : -ENOENT;
}

int host_parse_iolimit(const char *text, size_t len, const char *kind, host_iolim_fn cb,
		       void *arg, char *err, size_t errlen)
{
	static const char *const keys[] = { "rbps", "wbps", "riops", "wiops" };
	struct lines L = { text, text + len, 0 };
	char l[256];
	int rc, n = 0;

	while ((rc = next_line(&L, l, sizeof(l), err, errlen)) > 0) {
		unsigned maj, min;
		int off = 0;
		char *t, *save = NULL;

		if (sscanf(l, "%u:%u%n", &maj, &min, &off) != 2 || (l[off] != ' ' && l[off])) {
			util_errf(err, errlen, "line %u: no MAJ:MIN", L.no);
			return -EINVAL;
		}
		for (t = strtok_r(l + off, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			const char *k = kind, *val = t;
			char *eq = kind ? NULL : strchr(t, '='), *e;
			uint64_t v;
			size_t i;

			if (!kind) {
				if (!eq) {
					util_errf(err, errlen, "line %u: '%.32s' is not KEY=VALUE",
						  L.no, t);
					return -EINVAL;
				}
				*eq = 0;
				k = t;
				val = eq + 1;
				for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
					if (!strcmp(k, keys[i]))
						break;
				if (i == sizeof(keys) / sizeof(keys[0]))
					continue;       /* a key a later kernel adds */
			}
			if (!strcmp(val, "max"))
				continue;
			if (parse_u64(val, &e, &v) < 0 || *e) {
				util_errf(err, errlen, "line %u: %s is not a number", L.no, k);
				return -EINVAL;
			}
			cb(maj, min, k, v, arg);
			n++;
		}
	}
	return rc < 0 ? rc : n;
}

/* ---- reading ---- */

static ssize_t read_rel(struct host *h, const char *root, char *buf, size_t size,
			const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static ssize_t read_rel(struct host *h, const char *root, char *buf, size_t size,
			const char *fmt, ...)
{
	char path[PATH_MAX + 128], rel[PATH_MAX];
	va_list ap;

	(void)h;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return util_read_buf(path, buf, size);
}

static void add(struct host *h, uint64_t v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add(struct host *h, uint64_t v, const char *fmt, ...)
{
	va_list ap;

	if (h->n == h->cap) {
		unsigned nc = h->cap ? h->cap * 2 : 256;
		void *a = realloc(h->nm, nc * sizeof(*h->nm));
		void *b;

		if (!a)
			return;
		h->nm = a;
		b = realloc(h->vals, nc * sizeof(*h->vals));
		if (!b)
			return;
		h->vals = b;
		h->cap = nc;
	}
	va_start(ap, fmt);
	vsnprintf(h->nm[h->n], NAME_LEN, fmt, ap);
	va_end(ap);
	h->vals[h->n++] = v;
}

static void read_psi(struct host *h)
{
	char e[160];
	int missing = 0;

	h->psi_note[0] = 0;
	for (unsigned r = 0; r < 3; r++) {
		uint64_t some, full;
		int has_full;
		ssize_t n = read_rel(h, h->proc, h->small, sizeof(h->small), "pressure/%s",
				     psi_res[r]);

		if (n < 0) {
			/* psi_show() answers -EOPNOTSUPP when booted psi=0 */
			if (errno == ENOENT || errno == EOPNOTSUPP)
				missing++;
			else
				util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s: %s",
					  h->proc, psi_res[r], strerror(errno));
			continue;
		}
		if (host_parse_psi(h->small, (size_t)n, &some, &full, &has_full, e, sizeof(e)) < 0) {
			util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s: %s", h->proc,
				  psi_res[r], e);
			continue;
		}
		add(h, some, "host.psi.%s.some_us", psi_res[r]);
		if (has_full)
			add(h, full, "host.psi.%s.full_us", psi_res[r]);
		else if (!h->psi_note[0])
			util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure/%s has no \"full\" "
				  "line (kernels before 5.13 print only \"some\" for cpu)",
				  h->proc, psi_res[r]);
	}
	if (missing == 3)
		util_errf(h->psi_note, sizeof(h->psi_note), "no %s/pressure: a kernel without "
			  "pressure stall information (CONFIG_PSI) or booted with psi=0", h->proc);
	else if (missing)
		util_errf(h->psi_note, sizeof(h->psi_note), "%s/pressure: %d of 3 files missing",
			  h->proc, missing);
}

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
	ssize_t n = read_rel(h, h->sys, out, len, "block/%s/%s", dev, attr);

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

static struct hdisk *known_disk(struct host *h, const char *name)
{
	struct hdisk *d;

	for (unsigned i = 0; i < h->nknown; i++)
		if (!strcmp(h->known[i].name, name))
			return &h->known[i];
	if (h->nknown >= KNOWN_MAX)
		return NULL;
	d = &h->known[h->nknown++];
	memset(d, 0, sizeof(*d));
	util_strlcpy(d->name, name, sizeof(d->name));
	d->keep = judge_disk(h, name);
	if (d->keep)
		identify(h, d);
	return d;
}

struct dctx {
	struct host *h;
	unsigned kept;
};

static int disk_cb(const struct host_dstat *ds, void *arg)
{
	struct dctx *c = arg;
	struct host *h = c->h;
	struct hdisk *d = known_disk(h, ds->name);

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
		add(h, ds->v[i], "host.disk.%s.%s", ds->name, host_dstat_names[i]);
	return 0;
}

static void read_disks(struct host *h)
{
	struct dctx c = { h, 0 };
	char e[200];
	ssize_t n;

	h->disk_note[0] = 0;
	n = read_rel(h, h->proc, h->buf, BUF_MAX, "diskstats");
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
}

/* One process: the totals over its threads. 0, -ESRCH when it is gone,
 * or -errno with h->proc_note said. */
static int read_proc(struct host *h, struct hproc *p)
{
	struct host_pstat st;
	struct host_pio io;
	uint64_t v[NPF] = { 0 };
	char e[160], tdir[PATH_MAX + 32];
	ssize_t n;
	DIR *d;
	struct dirent *de;
	unsigned nt = 0;

	n = read_rel(h, h->proc, h->small, sizeof(h->small), "%d/stat", p->pid);
	if (n < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	if (host_parse_stat(h->small, (size_t)n, &st, e, sizeof(e)) < 0) {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s/%d/stat: %s", h->proc, p->pid, e);
		return -EINVAL;
	}
	/* a zombie has used what it will; a pid reused by another process
	 * is not the one watched */
	if (st.state == 'Z' || st.state == 'X' || (p->have && st.starttime != p->start))
		return -ESRCH;
	p->start = st.starttime;
	util_strlcpy(p->comm, st.comm, sizeof(p->comm));
	v[PF_CPU] = (st.utime + st.stime) * (1000000000ull / (uint64_t)h->tck);
	n = read_rel(h, h->proc, h->small, sizeof(h->small), "%d/io", p->pid);
	if (n >= 0 && host_parse_io(h->small, (size_t)n, &io, e, sizeof(e)) == 0) {
		v[PF_RB] = io.read_bytes;
		v[PF_WB] = io.write_bytes;
		v[PF_SYSCR] = io.syscr;
		v[PF_SYSCW] = io.syscw;
	} else {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s/%d/io: %s", h->proc, p->pid,
			  n < 0 ? strerror(errno) : e);
	}
	snprintf(tdir, sizeof(tdir), "%s/%d/task", h->proc, p->pid);
	d = opendir(tdir);
	if (!d) {
		util_errf(h->proc_note, sizeof(h->proc_note), "%s: %s", tdir, strerror(errno));
	} else {
		while ((de = readdir(d))) {
			uint64_t run, wait;
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (*end || tid <= 0)
				continue;
			if (++nt > HOST_MAX_THREADS) {
				util_errf(h->proc_note, sizeof(h->proc_note), "process %d has more than "
					  "%d threads: the rest not read", p->pid, HOST_MAX_THREADS);
				break;
			}
			n = read_rel(h, h->proc, h->small, sizeof(h->small), "%d/task/%ld/schedstat",
				     p->pid, tid);
			if (n >= 0 && host_parse_schedstat(h->small, (size_t)n, &run, &wait, e,
							   sizeof(e)) == 0)
				v[PF_RUNQ] += wait;
			/* with delay accounting off the field is 0: not read */
			n = h->delay_off ? -1 : read_rel(h, h->proc, h->small, sizeof(h->small),
							 "%d/task/%ld/stat", p->pid, tid);
			if (n >= 0 && host_parse_stat(h->small, (size_t)n, &st, e, sizeof(e)) == 0)
				v[PF_BLKIO] += st.blkio_ticks * (1000000000ull / (uint64_t)h->tck);
		}
		closedir(d);
	}
	/* A live process's counters never go back. Its per-thread sums do
	 * when a thread's file could not be read this time, or a thread
	 * exited and took its part with it: the last figure is kept (the sum
	 * pauses until the other threads make up the part), for a window's
	 * delta reads a fall as a counter reset and would count the whole
	 * total again (cnt_delta). */
	for (unsigned k = 0; p->have && k < NPF; k++)
		if (v[k] < p->v[k])
			v[k] = p->v[k];
	if (!p->have)
		memcpy(p->base, v, sizeof(v));
	memcpy(p->v, v, sizeof(v));
	p->have = 1;
	return 0;
}

/* What a process used since it was found (a thread that exited takes its
 * part of the total with it: never below 0). */
static uint64_t since(const struct hproc *p, unsigned k)
{
	return p->v[k] > p->base[k] ? p->v[k] - p->base[k] : 0;
}

static int has_proc(const struct host *h, int pid, int prod)
{
	for (unsigned i = 0; i < h->nprocs; i++)
		if (h->procs[i].pid == pid && h->procs[i].prod == prod)
			return 1;
	return 0;
}

static void track(struct host *h, int pid, int prod)
{
	struct hproc *p;

	if (pid <= 0)
		return;
	for (unsigned i = 0; i < h->nprocs; i++)
		if (h->procs[i].pid == pid && h->procs[i].prod == prod) {
			h->procs[i].seen = 1;
			return;
		}
	if (h->nprocs >= HOST_MAX_PIDS) {
		util_errf(h->proc_note, sizeof(h->proc_note), "more than %d processes: pid %d "
			  "not read", HOST_MAX_PIDS, pid);
		return;
	}
	p = &h->procs[h->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->prod = prod;
	p->seen = 1;
}

/* The producers' processes: by comm (every /proc/PID/comm) or by cgroup
 * (its cgroup.procs), every RESCAN_NS. */
static void scan_producers(struct host *h)
{
	unsigned scanned = 0;
	DIR *d = NULL;
	struct dirent *de;

	for (unsigned k = 0; k < h->o.nprod; k++) {
		const struct host_producer *pr = &h->o.prod[k];
		char path[PATH_MAX + 32];
		ssize_t n;

		if (!pr->cgroup[0])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", pr->cgroup);
		n = util_read_buf(path, h->buf, BUF_MAX);
		if (n < 0) {
			util_errf(h->proc_note, sizeof(h->proc_note), "producer %s: %s: %s",
				  pr->name, path, strerror(errno));
			continue;
		}
		for (char *s = h->buf, *e; *s; s = e) {
			long pid = strtol(s, &e, 10);

			if (e == s)
				break;
			track(h, (int)pid, (int)k);
		}
	}
	for (unsigned k = 0; k < h->o.nprod; k++)
		if (h->o.prod[k].comm[0] && !d)
			d = opendir(h->proc);
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (*end || pid <= 0)
			continue;
		if (++scanned > SCAN_MAX) {
			util_errf(h->proc_note, sizeof(h->proc_note), "more than %d processes: "
				  "the producers' names looked for in the first %d", SCAN_MAX,
				  SCAN_MAX);
			break;
		}
		n = read_rel(h, h->proc, h->small, sizeof(h->small), "%ld/comm", pid);
		if (n <= 0)
			continue;
		if (h->small[n - 1] == '\n')
			h->small[n - 1] = 0;
		for (unsigned k = 0; k < h->o.nprod; k++)
			if (h->o.prod[k].comm[0] && !strcmp(h->o.prod[k].comm, h->small))
				track(h, (int)pid, (int)k);
	}
	if (d)
		closedir(d);
}

/* A producer named by its cgroup: the group's own pressure (cgroup v2
 * RES.pressure, psi_show() of the group's psi) and its CPU throttling
 * (cpu.stat: v2 throttled_usec, a v1 cpu controller's throttled_time in
 * ns). What the directory does not have (a v1 blkio one has neither) is
 * left out without a word; a malformed file is said. */
static void read_cgroup(struct host *h, const struct host_producer *pr)
{
	uint64_t some, full, v;
	char e[160];
	int has_full;
	ssize_t n;

	for (unsigned r = 0; r < 3; r++) {
		n = read_rel(h, pr->cgroup, h->small, sizeof(h->small), "%s.pressure", psi_res[r]);
		if (n < 0)
			continue;
		if (host_parse_psi(h->small, (size_t)n, &some, &full, &has_full, e, sizeof(e)) < 0) {
			util_errf(h->proc_note, sizeof(h->proc_note), "producer %s: %s/%s.pressure: %s",
				  pr->name, pr->cgroup, psi_res[r], e);
			continue;
		}
		add(h, some, "producer.%s.psi.%s.some_us", pr->name, psi_res[r]);
		if (has_full)
			add(h, full, "producer.%s.psi.%s.full_us", pr->name, psi_res[r]);
	}
	n = read_rel(h, pr->cgroup, h->small, sizeof(h->small), "cpu.stat");
	if (n < 0)
		return;
	if (host_parse_kv(h->small, (size_t)n, "nr_throttled", &v, e, sizeof(e)) == 0)
		add(h, v, "producer.%s.nr_throttled", pr->name);
	if (host_parse_kv(h->small, (size_t)n, "throttled_usec", &v, e, sizeof(e)) == 0)
		add(h, v * 1000, "producer.%s.throttled_ns", pr->name);
	else if (host_parse_kv(h->small, (size_t)n, "throttled_time", &v, e, sizeof(e)) == 0)
		add(h, v, "producer.%s.throttled_ns", pr->name);
}

static void read_procs(struct host *h, int rescan)
{
	uint64_t sum[HOST_MAX_PRODUCERS][NPF];

	h->proc_note[0] = 0;
	if (h->owners_dirty) {
		/* owners no longer named are dropped, new ones taken */
		unsigned w = 0;

		for (unsigned i = 0; i < h->nprocs; i++) {
			int keep = h->procs[i].prod >= 0;

			for (unsigned j = 0; !keep && j < h->nowners; j++)
				keep = h->owners[j] == h->procs[i].pid;
			if (keep)
				h->procs[w++] = h->procs[i];
		}
		h->nprocs = w;
		for (unsigned j = 0; j < h->nowners; j++)
			track(h, h->owners[j], -1);
		h->owners_dirty = 0;
	}
	if (h->o.nprod && rescan) {
		for (unsigned i = 0; i < h->nprocs; i++)
			h->procs[i].seen = 0;
		scan_producers(h);
	}
	memcpy(sum, h->retired, sizeof(sum));
	memset(h->nlive, 0, sizeof(h->nlive));
	for (unsigned i = 0; i < h->nprocs;) {
		struct hproc *p = &h->procs[i];
		/* a producer's process that left its cgroup or changed its
		 * name is no longer the producer's: dropped as if it exited */
		int rc = read_proc(h, p);
		/* an exited process leaves its cgroup too (cgroup_exit): one
		 * the rescan missed is "left" only while it still lives */
		int left = rc != -ESRCH && p->prod >= 0 && rescan && !p->seen;

		if (left)
			rc = -ESRCH;

		if (rc == -ESRCH && !p->have) {
			/* gone (or a zombie) before its first reading: nothing
			 * to keep, nothing to say */
			*p = h->procs[--h->nprocs];
			continue;
		}
		if (rc == -ESRCH) {
			if (p->prod >= 0) {
				/* what it used stays in the producer's sums */
				for (unsigned k = 0; p->have && k < NPF; k++)
					h->retired[p->prod][k] += since(p, k);
				for (unsigned k = 0; p->have && k < NPF; k++)
					sum[p->prod][k] += since(p, k);
				log_info("host: producer %s: process %d (%s) %s; dropped",
					 h->o.prod[p->prod].name, p->pid, p->comm,
					 left ? "is no longer one of its processes" : "exited");
			} else {
				log_info("host: process %d (%s), owner of watched flows, exited "
					 "(or its pid went to another process); dropped", p->pid,
					 p->comm[0] ? p->comm : "?");
				/* its flows may name it a while yet: not taken again */
				if (h->ngone < HOST_MAX_PIDS)
					h->gone[h->ngone++] = p->pid;
			}
			*p = h->procs[--h->nprocs];
			continue;
		}
		if (rc == 0 && p->prod < 0) {
			for (unsigned k = 0; k < NPF; k++)
				add(h, p->v[k], "owner.%d.%s", p->pid, pf_names[k]);
		} else if (p->prod >= 0 && p->have) {
			/* a read that failed this time (the error is in the
			 * note) leaves the last figures in the sum: a producer's
			 * counter that fell would read as a reset */
			for (unsigned k = 0; k < NPF; k++)
				sum[p->prod][k] += since(p, k);
			h->nlive[p->prod]++;
		}
		i++;
	}
	for (unsigned k = 0; k < h->o.nprod; k++) {
		for (unsigned f = 0; f < NPF; f++)
			add(h, sum[k][f], "producer.%s.%s", h->o.prod[k].name, pf_names[f]);
		add(h, h->nlive[k], "producer.%s.processes", h->o.prod[k].name);
		if (h->o.prod[k].cgroup[0])
			read_cgroup(h, &h->o.prod[k]);
	}
}

static int same_layout(const struct host *h)
{
	if (!h->lay || h->lay->n != h->n)
		return 0;
	for (unsigned i = 0; i < h->n; i++)
		if (strcmp(h->lay->names[i], h->nm[i]))
			return 0;
	return 1;
}

/* delayacct_blkio_ticks() reads 0 unless delay accounting is on
 * (kernel.task_delayacct since 5.14, off by default; before it, on unless
 * booted with nodelayacct). Looked at again at every rescan: turned on
 * later, it is read from then on. Said once per daemon when off. */
static void check_delayacct(struct host *h)
{
	static int said;
	char buf[32];
	ssize_t n = read_rel(h, h->proc, buf, sizeof(buf), "sys/kernel/task_delayacct");

	h->delay_off = n > 0 && buf[0] == '0';
	h->delay_note[0] = 0;
	if (h->delay_off)
		util_errf(h->delay_note, sizeof(h->delay_note), "delay accounting is off "
			  "(kernel.task_delayacct = 0): block I/O delays read 0; "
			  "`sysctl kernel.task_delayacct=1` or boot with delayacct turns it on");
	else if (n < 0)
		util_errf(h->delay_note, sizeof(h->delay_note), "no kernel.task_delayacct "
			  "(a kernel before 5.14: delay accounting on unless booted nodelayacct)");
	if (h->delay_off && !said)
		log_warnx("host: %s", h->delay_note);
	said |= h->delay_off;
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
static void proc_devices(struct host *h, struct hproc *p)
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
		if (read_rel(h, h->proc, h->small, sizeof(h->small), "%d/fdinfo/%s", p->pid,
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
	if (!nmnt || read_rel(h, h->proc, h->buf, BUF_MAX, "%d/mountinfo", p->pid) <= 0)
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
static void find_cgroup_mounts(struct host *h)
{
	if (read_rel(h, h->proc, h->buf, BUF_MAX, "self/mountinfo") <= 0)
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
static const char *const lim_kinds[HOST_LIM_KINDS] = { "riops", "rbps", "wiops", "wbps" };

static void lim_cb(unsigned maj, unsigned min, const char *kind, uint64_t v, void *arg)
{
	struct limctx *c = arg;
	struct hproc *p = c->p;
	char mm[32], name[32];
	const char *dev;
	unsigned i, k;

	for (k = 0; k < HOST_LIM_KINDS && strcmp(lim_kinds[k], kind); k++)
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
static void proc_io_limits(struct host *h, struct hproc *p)
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
	    (n = read_rel(h, h->proc, cg, sizeof(cg), "%d/cgroup", p->pid)) <= 0)
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
				n = read_rel(h, root, h->small, sizeof(h->small), "%s/%s", path,
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

static int host_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct host *h = s->priv;
	uint64_t now = mono_ns();
	int rescan = now >= h->next_scan_ns;

	s->err[0] = 0;
	h->n = 0;
	if (rescan) {
		h->nknown = 0;          /* devices judged again: attached, removed */
		h->next_scan_ns = now + RESCAN_NS;
		check_delayacct(h);
	}
	read_psi(h);
	read_disks(h);
	read_procs(h, rescan);
	for (unsigned i = 0; rescan && i < h->nprocs; i++)
		proc_devices(h, &h->procs[i]);
	if (!same_layout(h)) {
		const char **names = malloc((h->n ? h->n : 1) * sizeof(*names));
		struct clayout *l;

		if (!names) {
			util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		for (unsigned i = 0; i < h->n; i++)
			names[i] = h->nm[i];
		l = clayout_new(h->n, names, NULL);
		free(names);
		if (!l) {
			util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		clayout_unref(h->lay);
		h->lay = l;
	}
	/* a source may succeed partially: its notes say what is missing */
	util_errf(s->err, sizeof(s->err), "%s%s%s%s%s", h->psi_note,
		  h->psi_note[0] && h->disk_note[0] ? "; " : "", h->disk_note,
		  (h->psi_note[0] || h->disk_note[0]) && h->proc_note[0] ? "; " : "", h->proc_note);
	*lay = h->lay;
	*vals = h->vals;
	return 0;
}

int src_host_open(struct src *s, const struct src_host_ctx *ctx)
{
	struct host *h;

	s->err[0] = 0;
	h = calloc(1, sizeof(*h));
	if (h)
		h->buf = malloc(BUF_MAX);
	if (h)
		h->known = calloc(KNOWN_MAX, sizeof(*h->known));
	if (!h || !h->buf || !h->known) {
		if (h) {
			free(h->buf);
			free(h->known);
		}
		free(h);
		util_errf(s->err, sizeof(s->err), "host: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	h->o = *ctx->opts;
	util_strlcpy(h->proc, h->o.proc_root[0] ? h->o.proc_root : "/proc", sizeof(h->proc));
	snprintf(h->sys, sizeof(h->sys), "%s/sys", ctx->sysfs_root ? ctx->sysfs_root : "");
	h->tck = sysconf(_SC_CLK_TCK);
	if (h->tck <= 0 || h->tck > 1000000000)
		h->tck = 100;
	check_delayacct(h);
	find_cgroup_mounts(h);
	s->ops = &src_host_ops;
	s->priv = h;
	return 0;
}

static int host_open(struct src *s, const struct src_ctx *ctx)
{
	static const struct host_opts none;
	struct src_host_ctx hc = { &none, ctx ? ctx->sysfs_root : "" };

	return src_host_open(s, &hc);
}

void src_host_watch(struct src *s, const int *pids, unsigned n)
{
	struct host *h = s ? s->priv : NULL;
	unsigned m = 0;

	if (!h)
		return;
	unsigned g = 0;

	/* a pid dropped as exited is forgotten once no flow names it */
	for (unsigned k = 0; k < h->ngone; k++)
		for (unsigned i = 0; i < n; i++)
			if (pids[i] == h->gone[k]) {
				h->gone[g++] = h->gone[k];
				break;
			}
	h->ngone = g;
	for (unsigned i = 0; i < n && m < HOST_MAX_PIDS; i++) {
		int dup = pids[i] <= 0;

		for (unsigned j = 0; j < m && !dup; j++)
			dup = h->owners[j] == pids[i];
		for (unsigned k = 0; k < h->ngone && !dup; k++)
			dup = h->gone[k] == pids[i];
		if (!dup)
			h->owners[m++] = pids[i];
	}
	h->owners_dirty |= m != h->nowners;
	for (unsigned i = 0; i < m && !h->owners_dirty; i++)
		h->owners_dirty = !has_proc(h, h->owners[i], -1);
	h->nowners = m;
}

int src_host_keep(const char *name, const int *pids, unsigned n)
{
	char *end;
	long pid;

	if (strncmp(name, "owner.", 6))
		return 1;
	pid = strtol(name + 6, &end, 10);
	if (*end != '.')
		return 1;
	for (unsigned i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

struct json_object *src_host_json(struct src *s)
{
	struct host *h = s ? s->priv : NULL;
	struct json_object *o = json_object_new_object(), *a, *notes;

	if (!h)
		return o;
	a = json_object_new_array();
	for (unsigned i = 0; i < h->nknown; i++) {
		const struct hdisk *d = &h->known[i];
		struct json_object *e;

		if (!d->keep)
			continue;
		e = json_object_new_object();
		jx_add_str(e, "name", d->name);
		jx_add_str(e, "transport", d->transport);
		jx_add_str(e, "model", d->model);
		jx_add_str(e, "firmware", d->firmware);
		if (d->vendor[0])
			jx_add_str(e, "vendor", d->vendor);
		if (d->serial_sha256[0])
			jx_add_str(e, "serial_sha256", d->serial_sha256);
		if (d->rotational >= 0)
			jx_add_bool(e, "rotational", d->rotational);
		if (d->nr_requests >= 0)
			jx_add_int(e, "nr_requests", d->nr_requests);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "devices", a);
	a = json_object_new_array();
	for (unsigned i = 0; i < h->nprocs; i++) {
		struct hproc *p = &h->procs[i];
		struct json_object *e = json_object_new_object();

		/* read now, not at the rescan: a limit set a second ago (the
		 * stall it caused is why the evidence is taken) is named */
		proc_io_limits(h, p);

		jx_add_int(e, "pid", p->pid);
		jx_add_str(e, "comm", p->comm);
		jx_add_str(e, "role", p->prod < 0 ? "owner" : "producer");
		if (p->prod >= 0)
			jx_add_str(e, "producer", h->o.prod[p->prod].name);
		if (p->ndev) {
			struct json_object *dv = json_object_new_array();

			for (unsigned k = 0; k < p->ndev; k++)
				json_object_array_add(dv, json_object_new_string(p->dev[k]));
			json_object_object_add(e, "devices", dv);
		}
		if (p->nlim) {
			struct json_object *lv = json_object_new_array();

			for (unsigned k = 0; k < p->nlim; k++) {
				struct json_object *x = json_object_new_object();
				char lim[160] = "";
				size_t l = 0;
				int first = -1;

				for (int q = 0; q < HOST_LIM_KINDS; q++) {
					if (!p->lim[k].v[q])
						continue;
					if (first < 0)
						first = q;
					l += (size_t)snprintf(lim + l, sizeof(lim) - l, "%s%s=%llu",
							      l ? " " : "", lim_kinds[q],
							      (unsigned long long)p->lim[k].v[q]);
				}
				jx_add_str(x, "device", p->lim[k].dev);
				jx_add_str(x, "limit", lim);
				/* the group of the first kind named (reads first) */
				if (first >= 0 && !p->lim[k].cg_trunc[first])
					jx_add_str(x, "cgroup", p->lim[k].cg[first]);
				json_object_array_add(lv, x);
			}
			json_object_object_add(e, "io_limits", lv);
		}
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "processes", a);
	jx_add_str(o, "delayacct", h->delay_note[0] ? h->delay_note : "on");
	notes = json_object_new_array();
	if (h->psi_note[0])
		json_object_array_add(notes, json_object_new_string(h->psi_note));
	if (h->disk_note[0])
		json_object_array_add(notes, json_object_new_string(h->disk_note));
	if (h->proc_note[0])
		json_object_array_add(notes, json_object_new_string(h->proc_note));
	json_object_object_add(o, "notes", notes);
	return o;
}

static void host_close(struct src *s)
{
	struct host *h = s->priv;

	if (!h)
		return;
	clayout_unref(h->lay);
	free(h->nm);
	free(h->vals);
	free(h->buf);
	free(h->known);
	free(h);
	s->priv = NULL;
}

const struct src_ops src_host_ops = {
	.name = "host",
	.open = host_open,
	.read = host_read,
	.close = host_close,
};
