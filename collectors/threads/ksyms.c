/* ksyms: the kernel's symbol table and a stack's addresses as text (see
 * ksyms.h). */
#include "collectors/threads/ksyms.h"
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KSYMS_MAX (64u << 20)   /* /proc/kallsyms: 5 MB, 120k lines here */

struct ksyms {
	char who[32];                   /* the log lines' prefix */
	char kallsyms[256], modules[256];
	int state;                      /* 0 not tried, 1 read, -1 unreadable */
	char err[320];
	/* the table, read once and kept (5 MB of text, 120k symbols: tens of
	 * ms to parse, not to be paid at every incident in the event loop);
	 * read again only when /proc/modules changes (a module loaded or
	 * unloaded moves symbols) or the path does */
	struct ksym *v;
	char *text;
	size_t n;
	char *mods;                     /* /proc/modules when it was read */
	uint64_t loads;                 /* how many times it was read */
};

struct ksym {
	uint64_t addr;
	const char *name, *mod;         /* in the file's text */
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The whole table, sorted (freed by the caller: *text and the array).
 * Read on demand at an incident only: 5 MB, 120k lines here. */
static struct ksym *ksyms_load(struct ksyms *k, char **text, size_t *n)
{
	size_t len = 0, cap = 0, i = 0;
	struct ksym *v = NULL;
	char *p, *line, *save = NULL;
	int nonzero = 0;

	*text = util_read_file(k->kallsyms, KSYMS_MAX, &len);
	if (!*text) {
		snprintf(k->err, sizeof(k->err), "%s: %s", k->kallsyms,
			 strerror(errno));
		return NULL;
	}
	for (line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *type, *name, *mod;

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
		if (i == cap) {
			struct ksym *nv = realloc(v, (cap = cap ? cap * 2 : 65536) * sizeof(*v));

			if (!nv) {
				free(v);
				snprintf(k->err, sizeof(k->err), "%s: out of memory",
					 k->kallsyms);
				return NULL;
			}
			v = nv;
		}
		v[i].addr = strtoull(line, NULL, 16);
		v[i].name = name;
		v[i].mod = mod;
		nonzero |= v[i].addr != 0;
		i++;
	}
	if (!nonzero) {
		free(v);
		snprintf(k->err, sizeof(k->err),
			 "%s: every address is zero (kptr_restrict, or no CAP_SYSLOG)", k->kallsyms);
		return NULL;
	}
	qsort(v, i, sizeof(*v), ksym_cmp);
	*n = i;
	return v;
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

/* One frame into buf at *off. */
static void ksym_frame(char *buf, size_t len, size_t *off, uint64_t a, const struct ksym *v,
		     size_t n)
{
	const struct ksym *s = v ? ksym_find(v, n, a) : NULL;
	int w;

	if (*off >= len)
		return;
	if (s && s->name[0]) {
		uint64_t size = s + 1 < v + n ? (s + 1)->addr - s->addr : 0;

		w = snprintf(buf + *off, len - *off, "%s+0x%" PRIx64 "/0x%" PRIx64 "%s%s%s\n",
			     s->name, a - s->addr, size, s->mod ? " [" : "", s->mod ? s->mod : "",
			     s->mod ? "]" : "");
	} else {
		w = snprintf(buf + *off, len - *off, "0x%016" PRIx64 "\n", a);
	}
	*off += w > 0 ? (size_t)w : 0;
	if (*off >= len)
		*off = len - 1;
}

static int ksym_switch_frame(const struct ksym *v, size_t n, uint64_t a)
{
	const struct ksym *s = ksym_find(v, n, a);

	return s && (!strncmp(s->name, "bpf_", 4) || !strcmp(s->name, "__schedule") ||
		     !strncmp(s->name, "__traceiter_", 12) || (s->mod && !strcmp(s->mod, "bpf")));
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
	char *mods = ksyms_modules(k), *text = NULL;
	struct ksym *v;
	size_t n = 0;

	if (k->state != 0 && (!mods || (k->mods && !strcmp(mods, k->mods)))) {
		free(mods);
		return k->v ? 0 : -1;   /* read before, modules unchanged */
	}
	if (k->state != 0 && mods)
		log_info("%s: kernel modules changed: kernel symbols read again", k->who);
	v = ksyms_load(k, &text, &n);
	free(k->v);
	free(k->text);
	free(k->mods);
	k->v = v;
	k->text = v ? text : NULL;
	k->n = v ? n : 0;
	k->mods = mods;
	k->loads++;
	if (!v) {
		free(text);
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
	const struct ksym *v = k ? k->v : NULL;
	size_t n = k ? k->n : 0, off = 0;
	int frames = 0;

	if (!len)
		return -1;
	buf[0] = 0;
	for (unsigned i = 0; i < depth && ips[i]; i++) {
		/* the frames of the switch itself (the program, the
		 * tracepoint's runner, __schedule) say nothing of the sleep */
		if (!frames && v && ksym_switch_frame(v, n, ips[i]))
			continue;
		ksym_frame(buf, len, &off, ips[i], v, n);
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
	free(k->v);
	free(k->text);
	free(k->mods);
	k->v = NULL;
	k->text = k->mods = NULL;
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
