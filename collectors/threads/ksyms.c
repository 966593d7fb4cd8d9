/* ksyms: the kernel's symbol table and a stack's addresses as text (see
 * ksyms.h). */
#include "collectors/threads/ksyms.h"
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KSYMS_MAX (64u << 20)   /* /proc/kallsyms: 5 MB, 120k lines here */

/* A table's memory, mapped apart from the heap: the table grows by
 * doubling to some MB once at start, when the heap's large blocks come
 * from brk (glibc raises its mmap threshold to the largest block freed:
 * the kernel's BTF, 5.4 MB, parsed by every BPF load), where each copy
 * of a realloc left a hole the process kept. mremap grows it in place or
 * moves its pages, and a shrink or a free gives the pages back. */
struct mbuf {
	char *p;
	size_t cap;             /* bytes mapped */
};

struct ksyms {
	char who[32];                   /* the log lines' prefix */
	char kallsyms[256], modules[256];
	int state;                      /* 0 not tried, 1 read, -1 unreadable */
	char err[320];
	/* the table, read once and kept (120k symbols, 5 MB: tens of ms to
	 * read and parse, not to be paid at every incident in the event loop);
	 * read again only when /proc/modules changes (a module loaded or
	 * unloaded moves symbols) or the path does */
	struct ksym *v;                 /* in syms, n of them */
	struct mbuf syms, names;        /* the array; names and modules */
	size_t names_len;
	size_t n;
	char *mods;                     /* /proc/modules when it was read */
	uint64_t loads;                 /* how many times it was read */
};

struct ksym {
	uint64_t addr;
	uint32_t name, mod;             /* offsets in the names' pool (under
					 * KSYMS_MAX); mod KSYM_NO_MOD: none */
};
#define KSYM_NO_MOD UINT32_MAX

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static size_t mbuf_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/* Room for need bytes: 0, or -1 without memory (b unchanged). */
static int mbuf_reserve(struct mbuf *b, size_t need)
{
	size_t c = b->cap ? b->cap : 1u << 20;
	void *np;

	if (need <= b->cap)
		return 0;
	while (c < need)
		c *= 2;
	c = mbuf_round(c);
	np = b->p ? mremap(b->p, b->cap, c, MREMAP_MAYMOVE) :
		    mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (np == MAP_FAILED)
		return -1;
	b->p = np;
	b->cap = c;
	return 0;
}

/* To len bytes' pages (a shrink stays where it is). */
static void mbuf_fit(struct mbuf *b, size_t len)
{
	size_t c = mbuf_round(len ? len : 1);

	if (b->p && c < b->cap && mremap(b->p, b->cap, c, 0) != MAP_FAILED)
		b->cap = c;
}

static void mbuf_free(struct mbuf *b)
{
	if (b->p)
		munmap(b->p, b->cap);
	b->p = NULL;
	b->cap = 0;
}

/* str and its NUL at len in b: the offset, or (size_t)-1 without memory. */
static size_t pool_add(struct mbuf *b, size_t *len, const char *str)
{
	size_t n = strlen(str) + 1, off = *len;

	if (mbuf_reserve(b, *len + n) < 0)
		return (size_t)-1;
	memcpy(b->p + off, str, n);
	*len += n;
	return off;
}

/* The text symbols, sorted (into *syms), their names and modules in one
 * pool (*names, *names_len bytes). The file is read a line at a time and
 * only what a frame needs is kept: here 121k symbols, 3.1 MB of names and
 * 1.9 MB of array (16 bytes a symbol: pool offsets, not pointers), where
 * the whole text (5.4 MB) was kept beside an array grown by doubling in
 * the heap. 0, or -1 with k->err. */
static int ksyms_load(struct ksyms *k, struct mbuf *syms, struct mbuf *names,
		      size_t *names_len, size_t *n)
{
	size_t plen = 0, i = 0, read = 0, last_mod = (size_t)-1, lcap = 0;
	struct ksym *v;
	char *line = NULL, *p;
	ssize_t got;
	int nonzero = 0;
	FILE *f = fopen(k->kallsyms, "re");

	if (!f) {
		snprintf(k->err, sizeof(k->err), "%s: %s", k->kallsyms, strerror(errno));
		return -1;
	}
	while ((got = getline(&line, &lcap, f)) > 0) {
		char *type, *name, *mod;
		size_t no, mo = KSYM_NO_MOD;

		read += (size_t)got;
		if (read > KSYMS_MAX) {
			snprintf(k->err, sizeof(k->err), "%s: longer than %u MiB", k->kallsyms,
				 KSYMS_MAX >> 20);
			goto fail;
		}
		if (line[got - 1] == '\n')
			line[got - 1] = 0;
		p = strchr(line, ' ');
		if (!p)
			continue;
		*p = 0;
		type = p + 1;
		if (!type[0] || type[1] != ' ')
			continue;
		if (type[0] != 't' && type[0] != 'T' && type[0] != 'w' && type[0] != 'W')
			continue;
		name = type + 2;
		mod = strchr(name, '\t');
		if (mod) {
			*mod++ = 0;
			if (*mod == '[')
				mod++;
			p = strchr(mod, ']');
			if (p)
				*p = 0;
		}
		if (mbuf_reserve(syms, (i + 1) * sizeof(*v)) < 0)
			goto nomem;
		no = pool_add(names, &plen, name);
		if (no == (size_t)-1)
			goto nomem;
		if (mod) {
			/* a module's symbols come together: its name once */
			if (last_mod != (size_t)-1 && !strcmp(names->p + last_mod, mod)) {
				mo = last_mod;
			} else {
				mo = pool_add(names, &plen, mod);
				if (mo == (size_t)-1)
					goto nomem;
				last_mod = mo;
			}
		}
		v = (struct ksym *)syms->p;
		v[i].addr = strtoull(line, NULL, 16);
		v[i].name = (uint32_t)no;
		v[i].mod = (uint32_t)mo;
		nonzero |= v[i].addr != 0;
		i++;
	}
	if (ferror(f)) {
		snprintf(k->err, sizeof(k->err), "%s: %s", k->kallsyms, strerror(errno));
		goto fail;
	}
	if (!nonzero) {
		snprintf(k->err, sizeof(k->err),
			 "%s: every address is zero (kptr_restrict, or no CAP_SYSLOG)", k->kallsyms);
		goto fail;
	}
	/* both to their size (in place) */
	mbuf_fit(names, plen);
	mbuf_fit(syms, i * sizeof(*v));
	v = (struct ksym *)syms->p;
	free(line);
	fclose(f);
	qsort(v, i, sizeof(*v), ksym_cmp);
	*n = i;
	*names_len = plen;
	return 0;
nomem:
	snprintf(k->err, sizeof(k->err), "%s: out of memory", k->kallsyms);
fail:
	free(line);
	fclose(f);
	mbuf_free(syms);
	mbuf_free(names);
	return -1;
}

static const struct ksym *ksym_find(const struct ksym *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

/* A symbol's name and module (NULL: the kernel's own) in k's pool. */
static const char *ksym_name(const struct ksyms *k, const struct ksym *s)
{
	return k->names.p + s->name;
}

static const char *ksym_mod(const struct ksyms *k, const struct ksym *s)
{
	return s->mod == KSYM_NO_MOD ? NULL : k->names.p + s->mod;
}

/* One frame into buf at *off; k NULL or unread: the address. */
static void ksym_frame(char *buf, size_t len, size_t *off, uint64_t a, const struct ksyms *k)
{
	const struct ksym *s = k && k->v ? ksym_find(k->v, k->n, a) : NULL;
	int w;

	if (*off >= len)
		return;
	if (s && ksym_name(k, s)[0]) {
		uint64_t size = s + 1 < k->v + k->n ? (s + 1)->addr - s->addr : 0;
		const char *mod = ksym_mod(k, s);

		w = snprintf(buf + *off, len - *off, "%s+0x%" PRIx64 "/0x%" PRIx64 "%s%s%s\n",
			     ksym_name(k, s), a - s->addr, size, mod ? " [" : "", mod ? mod : "",
			     mod ? "]" : "");
	} else {
		w = snprintf(buf + *off, len - *off, "0x%016" PRIx64 "\n", a);
	}
	*off += w > 0 ? (size_t)w : 0;
	if (*off >= len)
		*off = len - 1;
}

static int ksym_switch_frame(const struct ksyms *k, uint64_t a)
{
	const struct ksym *s = ksym_find(k->v, k->n, a);
	const char *name, *mod;

	if (!s)
		return 0;
	name = ksym_name(k, s);
	mod = ksym_mod(k, s);
	return !strncmp(name, "bpf_", 4) || !strcmp(name, "__schedule") ||
	       !strncmp(name, "__traceiter_", 12) || (mod && !strcmp(mod, "bpf"));
}

/* The kernel's modules now: each one's name and load address, one a line
 * (/proc/modules: "name size refcount deps state address [taint]", whose
 * use count and users move without any symbol moving: Onload's with every
 * process that opens /dev/onload); NULL when unreadable (then the table is
 * kept as it is). */
static char *ksyms_modules(const struct ksyms *k)
{
	size_t len = 0, o = 0;
	char *text = util_read_file(k->modules, 4u << 20, &len), *save = NULL, *line, *key;

	if (!text)
		return NULL;
	/* a line of fewer than 6 fields gains " -": at most twice the text */
	key = malloc(2 * len + 16);
	if (!key) {
		free(text);
		return NULL;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *fs = NULL, *f[6] = { 0 };
		unsigned nf = 0;

		for (char *t = strtok_r(line, " \t", &fs); t && nf < 6; t = strtok_r(NULL, " \t", &fs))
			f[nf++] = t;
		if (!nf)
			continue;
		o += (size_t)snprintf(key + o, 2 * len + 16 - o, "%s %s\n", f[0],
				      nf == 6 ? f[5] : "-");
	}
	key[o] = '\0';
	free(text);
	return key;
}

/* The symbol table, read when it was not yet, or when the modules
 * changed since; unreadable: addresses only, one log line per change of
 * state, and ksyms_status says why. */
int ksyms_refresh(struct ksyms *k)
{
	char *mods = ksyms_modules(k);
	struct mbuf syms = { 0 }, names = { 0 };
	size_t n = 0, nlen = 0;
	int rc;

	if (k->state != 0 && (!mods || (k->mods && !strcmp(mods, k->mods)))) {
		free(mods);
		return k->v ? 0 : -1;   /* read before, modules unchanged */
	}
	if (k->state != 0 && mods)
		log_info("%s: kernel modules changed: kernel symbols read again", k->who);
	rc = ksyms_load(k, &syms, &names, &nlen, &n);
	mbuf_free(&k->syms);
	mbuf_free(&k->names);
	free(k->mods);
	k->syms = syms;
	k->names = names;
	k->v = rc ? NULL : (struct ksym *)syms.p;
	k->n = rc ? 0 : n;
	k->names_len = rc ? 0 : nlen;
	k->mods = mods;
	k->loads++;
	if (rc) {
		if (k->state != -1)
			log_warnx("%s: kernel symbols unreadable (%s): stacks are kept as "
				  "addresses", k->who, k->err);
		k->state = -1;
		return -1;
	}
	k->state = 1;
	k->err[0] = 0;
	return 0;
}

int ksyms_format(const struct ksyms *k, const uint64_t *ips, unsigned depth, char *buf,
		 size_t len)
{
	int frames = 0, table = k && k->v;
	size_t off = 0;

	if (!len)
		return -1;
	buf[0] = 0;
	for (unsigned i = 0; i < depth && ips[i]; i++) {
		/* the frames of the switch itself (the program, the
		 * tracepoint's runner, __schedule) say nothing of the sleep */
		if (!frames && table && ksym_switch_frame(k, ips[i]))
			continue;
		ksym_frame(buf, len, &off, ips[i], k);
		frames++;
	}
	if (off && buf[off - 1] == '\n')
		buf[off - 1] = 0;
	return frames;
}

struct ksyms *ksyms_new(const char *who)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	util_strlcpy(k->who, who, sizeof(k->who));
	util_strlcpy(k->kallsyms, "/proc/kallsyms", sizeof(k->kallsyms));
	util_strlcpy(k->modules, "/proc/modules", sizeof(k->modules));
	return k;
}

static void ksyms_drop(struct ksyms *k)
{
	mbuf_free(&k->syms);
	mbuf_free(&k->names);
	free(k->mods);
	k->v = NULL;
	k->mods = NULL;
	k->names_len = 0;
	k->n = 0;
	k->state = 0;
}

void ksyms_set_paths(struct ksyms *k, const char *kallsyms, const char *modules)
{
	util_strlcpy(k->kallsyms, kallsyms, sizeof(k->kallsyms));
	util_strlcpy(k->modules, modules, sizeof(k->modules));
	ksyms_drop(k);
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	ksyms_drop(k);
	free(k);
}

const char *ksyms_status(const struct ksyms *k)
{
	return k->state < 0 ? k->err : k->state ? "readable" : "not read yet";
}

uint64_t ksyms_reads(const struct ksyms *k)
{
	return k->loads;
}

size_t ksyms_bytes(const struct ksyms *k)
{
	return k && k->v ? k->n * sizeof(*k->v) + k->names_len : 0;
}
