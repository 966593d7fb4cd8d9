/* src_shared: one counter source shared by the ports that name it, read
 * once per base-rate tick (src_shared.h). */
#include "collectors/counters/src_shared.h"
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sharer {
	struct src *s;
	int pids[SHARED_MAX_PIDS];
	unsigned npids;
	/* its own view (keep): the layout it was made from, its layout, the
	 * index of each of its counters in the source's, its values */
	struct clayout *from, *lay;
	unsigned *idx;
	uint64_t *vals;
	int stale;                  /* its pids changed since the view was made */
};

struct share {
	struct share *next;
	void *key;
	size_t keylen;
	struct src inner;
	struct src_ops ops;          /* the sharers': the source's name */
	struct sharer who[SHARED_MAX_SHARERS];
	unsigned refs;
	src_keep_fn keep;
	unsigned capped;             /* watches whose union was cut */
	/* the reading of tick `at` */
	uint64_t at;
	int rc;
	struct clayout *lay;
	const uint64_t *vals;
	char err[sizeof(((struct src *)0)->err)];
};

static struct share *shares;
static uint64_t cur_tick;

void src_shared_tick(uint64_t tick)
{
	cur_tick = tick;
}

static void view_free(struct sharer *w)
{
	clayout_unref(w->from);
	clayout_unref(w->lay);
	free(w->idx);
	free(w->vals);
	w->from = w->lay = NULL;
	w->idx = NULL;
	w->vals = NULL;
}

/* w's own view of the source's reading: made again when the source's
 * layout or w's pids changed, its values copied at every read. */
static int view(struct share *sh, struct sharer *w, struct clayout **lay,
		const uint64_t **vals)
{
	if (w->from != sh->lay || w->stale) {
		const char **names = malloc((sh->lay->n ? sh->lay->n : 1) * sizeof(*names));
		uint8_t *width = malloc(sh->lay->n ? sh->lay->n : 1);
		unsigned n = 0;

		view_free(w);
		w->idx = malloc((sh->lay->n ? sh->lay->n : 1) * sizeof(*w->idx));
		w->vals = malloc((sh->lay->n ? sh->lay->n : 1) * sizeof(*w->vals));
		if (!names || !width || !w->idx || !w->vals) {
			free(names);
			free(width);
			view_free(w);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < sh->lay->n; i++)
			if (!sh->keep || sh->keep(sh->lay->names[i], w->pids, w->npids)) {
				names[n] = sh->lay->names[i];
				width[n] = sh->lay->width[i];
				w->idx[n++] = i;
			}
		w->lay = clayout_new(n, names, width);
		free(names);
		free(width);
		if (!w->lay) {
			view_free(w);
			return -ENOMEM;
		}
		w->from = clayout_ref(sh->lay);
		w->stale = 0;
	}
	for (unsigned i = 0; i < w->lay->n; i++)
		w->vals[i] = sh->vals[w->idx[i]];
	*lay = w->lay;
	*vals = w->vals;
	return 0;
}

static struct sharer *sharer_of(struct share *sh, struct src *s)
{
	for (unsigned i = 0; i < sh->refs; i++)
		if (sh->who[i].s == s)
			return &sh->who[i];
	return NULL;
}

static int sh_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct share *sh = s->priv;
	struct sharer *w;

	if (!cur_tick || sh->at != cur_tick) {
		sh->rc = sh->inner.ops->read(&sh->inner, &sh->lay, &sh->vals);
		util_strlcpy(sh->err, sh->inner.err, sizeof(sh->err));
		/* a reading outside a tick is no tick's */
		sh->at = cur_tick;
	}
	util_strlcpy(s->err, sh->err, sizeof(s->err));
	if (sh->rc < 0)
		return sh->rc;
	/* each sharer its own copy of the values: the source's buffer lasts
	 * only until its next read, which another port may make (a fast
	 * window) while this one still holds them */
	if ((w = sharer_of(sh, s))) {
		int rc = view(sh, w, lay, vals);

		if (rc < 0)
			util_errf(s->err, sizeof(s->err), "%s", strerror(-rc));
		return rc;
	}
	util_errf(s->err, sizeof(s->err), "not a sharer of its source");
	return -EINVAL;
}

static void sh_close(struct src *s)
{
	struct share *sh = s->priv, **pp;
	unsigned i;

	if (!sh)
		return;
	for (i = 0; i < sh->refs; i++)
		if (sh->who[i].s == s)
			break;
	if (i < sh->refs) {
		view_free(&sh->who[i]);
		memmove(&sh->who[i], &sh->who[i + 1], (sh->refs - i - 1) * sizeof(sh->who[0]));
		sh->refs--;
	}
	/* closed: its ops name the source still (a port's closed slot is
	 * named), and are no share's */
	s->priv = NULL;
	s->ops = sh->inner.ops;
	if (sh->refs)
		return;
	for (pp = &shares; *pp && *pp != sh; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = sh->next;
	if (sh->inner.ops && sh->inner.ops->close)
		sh->inner.ops->close(&sh->inner);
	free(sh->key);
	free(sh);
}

int src_shared_open(struct src *s, const void *key, size_t keylen, src_open_fn open_fn,
		    void *arg)
{
	struct share *sh;
	int rc;

	s->err[0] = 0;
	for (sh = shares; sh && (sh->keylen != keylen || memcmp(sh->key, key, keylen));
	     sh = sh->next)
		;
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		if (!sh || !(sh->key = malloc(keylen ? keylen : 1))) {
			free(sh);
			util_errf(s->err, sizeof(s->err), "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		memcpy(sh->key, key, keylen);
		sh->keylen = keylen;
		rc = open_fn(&sh->inner, arg);
		if (rc < 0) {
			util_strlcpy(s->err, sh->inner.err, sizeof(s->err));
			free(sh->key);
			free(sh);
			return rc;
		}
		sh->ops = (struct src_ops){ sh->inner.ops->name, NULL, sh_read, sh_close };
		sh->next = shares;
		shares = sh;
	}
	if (sh->refs == SHARED_MAX_SHARERS) {
		util_errf(s->err, sizeof(s->err), "more than %u ports share it", SHARED_MAX_SHARERS);
		return -EMFILE;
	}
	sh->who[sh->refs++] = (struct sharer){ .s = s };
	s->ops = &sh->ops;
	s->priv = sh;
	return 0;
}

struct src *src_shared_inner(struct src *s)
{
	return s && s->ops && s->ops->read == sh_read && s->priv ?
	       &((struct share *)s->priv)->inner : NULL;
}

void src_shared_keep(struct src *s, src_keep_fn keep)
{
	if (src_shared_inner(s)) {
		struct share *sh = s->priv;

		sh->keep = keep;
		for (unsigned i = 0; i < sh->refs; i++)
			sh->who[i].stale = 1;
	}
}

unsigned src_shared_refs(struct src *s)
{
	return src_shared_inner(s) ? ((struct share *)s->priv)->refs : 0;
}

void src_shared_watch(struct src *s, const int *pids, unsigned n, src_watch_fn watch)
{
	struct share *sh;
	int all[SHARED_MAX_PIDS];
	unsigned na = 0;

	if (!src_shared_inner(s))
		return;
	sh = s->priv;
	for (unsigned i = 0; i < sh->refs; i++)
		if (sh->who[i].s == s) {
			unsigned k = n < SHARED_MAX_PIDS ? n : SHARED_MAX_PIDS;

			sh->who[i].stale |= k != sh->who[i].npids ||
					    memcmp(sh->who[i].pids, pids, k * sizeof(int));
			sh->who[i].npids = k;
			memcpy(sh->who[i].pids, pids, k * sizeof(int));
		}
	for (unsigned i = 0; i < sh->refs; i++)
		for (unsigned k = 0; k < sh->who[i].npids; k++) {
			unsigned j;

			for (j = 0; j < na && all[j] != sh->who[i].pids[k]; j++)
				;
			if (j < na)
				continue;
			if (na == SHARED_MAX_PIDS) {
				if (!sh->capped++)
					log_warnx("source %s: the ports' flows have more than %u "
						  "owners: pid %d and later ones are not read",
						  sh->inner.ops->name, SHARED_MAX_PIDS,
						  (int)sh->who[i].pids[k]);
				continue;
			}
			all[na++] = sh->who[i].pids[k];
		}
	watch(&sh->inner, all, na);
}
