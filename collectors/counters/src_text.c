/* src_text: counter source reading a recorded `ethtool -S` file. */
#include "collectors/counters/src_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/counters/ethtool_text_parse.h"
#include "lib/fsutil.h"
#include "lib/log.h"

struct text_priv {
	char *path;
	char *buf;             /* file bytes, reused across reads */
	size_t buf_cap;
	struct etxt tx;        /* parsed names and values, reused */
	struct clayout *lay;   /* current layout, one reference held */
};

static int text_open(struct src *s, const struct src_ctx *ctx)
{
	struct text_priv *p;

	s->err[0] = '\0';
	if (!ctx || !ctx->text_file || !ctx->text_file[0]) {
		snprintf(s->err, sizeof(s->err),
			 "port %s: text source without a text file",
			 ctx && ctx->port_name ? ctx->port_name : "?");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(ctx->text_file))) {
		free(p);
		snprintf(s->err, sizeof(s->err), "%s: %s", ctx->text_file,
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	s->priv = p;
	return 0;
}

/* Read the whole file into p->buf; *len bytes. Fills s->err on failure.
 * Through the one safe path (fsutil.h): O_NONBLOCK|O_NOFOLLOW, so a FIFO
 * never blocks the loop and a symbolic link is not followed, regular files
 * only, at most ETXT_MAX_BYTES. */
static int slurp(struct src *s, struct text_priv *p, size_t *len)
{
	char *b;
	int e = 0;

	b = fsu_read_file(p->path, ETXT_MAX_BYTES, len, &e);
	if (!b) {
		switch (e) {
		case EFBIG:
			snprintf(s->err, sizeof(s->err), "%s: more than the %u bytes allowed",
				 p->path, ETXT_MAX_BYTES);
			return -E2BIG;
		case EINVAL:
		case ELOOP:
			snprintf(s->err, sizeof(s->err), "%s: %s, not read", p->path,
				 fsu_strerror(e));
			return -e;
		default:
			snprintf(s->err, sizeof(s->err), "%s: %s", p->path, strerror(e));
			return -e;
		}
	}
	free(p->buf);
	p->buf = b;
	p->buf_cap = *len + 1;
	return 0;
}

static int same_names(const struct clayout *l, const struct etxt *tx)
{
	if (!l || l->n != tx->n)
		return 0;
	for (unsigned i = 0; i < tx->n; i++)
		if (strcmp(l->names[i], tx->names[i]))
			return 0;
	return 1;
}

static int text_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct text_priv *p = s->priv;
	char msg[192];
	size_t len = 0;
	int rc;

	if (!p) {
		snprintf(s->err, sizeof(s->err), "text source not open");
		return -EINVAL;
	}
	rc = slurp(s, p, &len);
	if (rc)
		return rc;
	rc = etxt_parse(p->buf, len, &p->tx, msg, sizeof(msg));
	if (rc) {
		int k = p->tx.err_line ?
			snprintf(NULL, 0, "line %u: ", p->tx.err_line) : 0;

		if (k > 0 && (size_t)k < strlen(msg))
			snprintf(s->err, sizeof(s->err), "%s:%u: %s", p->path,
				 p->tx.err_line, msg + k);
		else
			snprintf(s->err, sizeof(s->err), "%s: %s", p->path, msg);
		return rc;
	}
	/* same: the names of the parse before, from which p->lay was made */
	if (!(p->tx.same && p->lay) && !same_names(p->lay, &p->tx)) {
		struct clayout *nl = clayout_new(p->tx.n,
				(const char *const *)p->tx.names, NULL);

		if (!nl) {
			snprintf(s->err, sizeof(s->err), "%s: %s", p->path,
				 strerror(ENOMEM));
			p->tx.n = 0;    /* p->lay is not of these names: full parse next */
			return -ENOMEM;
		}
		clayout_unref(p->lay);
		p->lay = nl;
		if (p->tx.ndup)
			log_warnx("%s: %u duplicate counter names ignored, the first at line %u",
				  p->path, p->tx.ndup, p->tx.dup_line);
	}
	*lay = p->lay;
	*vals = p->tx.vals;
	return 0;
}

static void text_close(struct src *s)
{
	struct text_priv *p = s->priv;

	if (!p)
		return;
	clayout_unref(p->lay);
	etxt_free(&p->tx);
	free(p->buf);
	free(p->path);
	free(p);
	s->priv = NULL;
}

const struct src_ops src_text_ops = {
	.name = "text",
	.open = text_open,
	.read = text_read,
	.close = text_close,
};
