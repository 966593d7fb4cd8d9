/* src_app: application metrics over libcurl's multi interface on the
 * daemon's loop (see src_app.h); an endpoint's options are app_conf.c's. */
#include "collectors/counters/src_app.h"
#include "collectors/counters/curl_dl.h"
#include "collectors/counters/promtext_parse.h"
#include "lib/cost.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libcurl's functions (curl_dl.h): set by the first source opened, and
 * kept (the library is never unloaded) */
static const struct curl_dl *cu;

/* ---- one page's series ---- */

struct app_page {
	char **names;
	uint64_t *vals;
	unsigned n, cap, left_out;
	/* parse state */
	char prefix[48];                /* "app.NAME." */
	size_t prefix_len;
	const struct app_conf *c;
	char *err;
	size_t errlen;
};

struct app_page *app_page_new(void)
{
	return calloc(1, sizeof(struct app_page));
}

static void page_clear(struct app_page *pg)
{
	for (unsigned i = 0; i < pg->n; i++)
		free(pg->names[i]);
	pg->n = 0;
	pg->left_out = 0;
}

void app_page_free(struct app_page *pg)
{
	if (!pg)
		return;
	page_clear(pg);
	free(pg->names);
	free(pg->vals);
	free(pg);
}

unsigned app_page_count(const struct app_page *pg) { return pg->n; }
const char *app_page_name(const struct app_page *pg, unsigned i) { return pg->names[i]; }
uint64_t app_page_value(const struct app_page *pg, unsigned i) { return pg->vals[i]; }

static int page_sample(const struct prom_sample *s, void *arg)
{
	struct app_page *pg = arg;
	char key[4096];
	int kl, pl;
	double v;

	if (pg->c->nkeep) {
		unsigned k;

		for (k = 0; k < pg->c->nkeep; k++)
			if (!fnmatch(pg->c->keep[k], s->name, 0) ||
			    !fnmatch(pg->c->keep[k], s->family, 0))
				break;
		if (k == pg->c->nkeep)
			return 0;
	}
	v = s->value * pg->c->scale;
	if (!(v >= 0) || v >= 18446744073709551616.0) {
		pg->left_out++;         /* negative, NaN, infinite or too large */
		return 0;
	}
	if (pg->n >= pg->c->max_series) {
		util_errf(pg->err, pg->errlen, "line %u: more than %u series "
			  "(app_metrics_max_series)", s->line, pg->c->max_series);
		return -E2BIG;
	}
	pl = (int)pg->prefix_len;
	memcpy(key, pg->prefix, pg->prefix_len);
	kl = prom_series_key(s, key + pl, sizeof(key) - (size_t)pl);
	if (kl < 0) {
		util_errf(pg->err, pg->errlen, "line %u: %s: a series name longer than %zu bytes",
			  s->line, s->name, sizeof(key) - 1);
		return -EINVAL;
	}
	if (pg->n == pg->cap) {
		unsigned nc = pg->cap ? pg->cap * 2 : 64;
		char **nn = realloc(pg->names, nc * sizeof(*nn));
		uint64_t *nv;

		if (!nn)
			return -ENOMEM;
		pg->names = nn;
		nv = realloc(pg->vals, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		pg->vals = nv;
		pg->cap = nc;
	}
	pg->names[pg->n] = strndup(key, (size_t)(pl + kl));
	if (!pg->names[pg->n])
		return -ENOMEM;
	pg->vals[pg->n++] = (uint64_t)(v + 0.5);   /* v < 2^64: a double's ulp is 2048 there */
	return 0;
}

int app_page_parse(struct app_page *pg, const char *name, const struct app_conf *c,
		   const char *text, size_t len, char *err, size_t errlen)
{
	int rc;

	page_clear(pg);
	pg->prefix_len = (size_t)snprintf(pg->prefix, sizeof(pg->prefix), "app.%.31s.", name);
	pg->c = c;
	pg->err = err;
	pg->errlen = errlen;
	rc = prom_parse(text, len, page_sample, pg, err, errlen);
	if (rc == -ENOMEM)
		util_errf(err, errlen, "out of memory");
	if (rc < 0)
		page_clear(pg);
	return rc < 0 ? rc : (int)pg->n;
}

/* ---- the scrapers ---- */

enum { EP_WAITING, EP_OK, EP_ERROR };

struct ep {
	struct app_endpoint cf;
	struct app_priv *ap;
	CURL *easy;
	struct curl_slist *hdrs;
	char curl_err[CURL_ERROR_SIZE];
	char *buf;                    /* the page being received */
	size_t len, cap;
	int over, in_flight, state;
	uint64_t start_ns, last_start_ns, last_ok_ns, last_dur_ns, parse_cpu_ns;
	uint64_t scrapes, errors;
	struct app_page *page;        /* the last good page's series */
	char *text;                   /* and its text */
	size_t text_len;
	char err[320];
};

struct app_priv {
	struct loop *loop;
	char port[64];
	CURLM *m;
	struct loop_timer *timer;
	struct ep ep[APP_MAX_ENDPOINTS];
	unsigned nep;
	int dirty;
	struct clayout *lay;
	uint64_t *vals;
	/* the times of the last changes of the series set, a ring: more
	 * than the budget within APP_CHURN_NS and the layout is kept */
	uint64_t changed_ns[APP_LAYOUT_RING];
	unsigned nchanged;
	int frozen;
	unsigned long frozen_pages;     /* pages read onto the kept layout */
};

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct ep *e = arg;
	size_t n = size * nmemb;

	if (e->len + n > e->cf.conf.max_bytes) {
		e->over = 1;
		return 0;               /* CURLE_WRITE_ERROR: the transfer ends */
	}
	if (e->len + n + 1 > e->cap) {
		size_t nc = e->cap ? e->cap : 65536;
		char *nb;

		while (nc < e->len + n + 1)
			nc *= 2;
		if (nc > e->cf.conf.max_bytes + 1)
			nc = e->cf.conf.max_bytes + 1;
		nb = realloc(e->buf, nc);
		if (!nb)
			return 0;
		e->buf = nb;
		e->cap = nc;
	}
	memcpy(e->buf + e->len, data, n);
	e->len += n;
	return n;
}

/* Two errors that differ only in their numbers ("after 0 ms", "after
 * 1 ms") are the same error: said once. */
static int same_error(const char *a, const char *b)
{
	for (;;) {
		int da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';

		if (da && db) {
			while (*a >= '0' && *a <= '9')
				a++;
			while (*b >= '0' && *b <= '9')
				b++;
			continue;
		}
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++, b++;
	}
}

static void ep_result(struct ep *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ep_result(struct ep *e, const char *fmt, ...)
{
	struct app_priv *ap = e->ap;
	char m[sizeof(e->err)];

	if (!fmt) {
		if (e->state == EP_ERROR)
			log_info("port %s: app metrics %s (%s): scraped again", ap->port,
				 e->cf.name, e->cf.conf.url);
		e->state = EP_OK;
		e->err[0] = 0;
		return;
	}
	va_list ap_;

	va_start(ap_, fmt);
	vsnprintf(m, sizeof(m), fmt, ap_);
	va_end(ap_);
	{
		/* the message quotes the page: what reaches the log, status
		 * and the bundle is valid UTF-8 with no control */
		char *c = util_utf8_clean(m, strlen(m));

		if (c) {
			util_strlcpy(m, c, sizeof(m));
			free(c);
		}
	}
	e->errors++;
	if (e->state != EP_ERROR || !same_error(m, e->err))
		log_warnx("port %s: app metrics %s (%s): %s", ap->port, e->cf.name,
			  e->cf.conf.url, m);
	e->state = EP_ERROR;
	util_strlcpy(e->err, m, sizeof(e->err));
	/* a failed endpoint has no series until it answers again */
	if (e->page && app_page_count(e->page)) {
		page_clear(e->page);
		ap->dirty = 1;
	}
}

static void ep_done(struct ep *e, CURLcode res)
{
	const struct app_conf *c = &e->cf.conf;
	char tb[64], err[256];
	long code = 0;

	e->in_flight = 0;
	e->scrapes++;
	e->last_dur_ns = loop_mono_ns() - e->start_ns;
	cu->multi_remove_handle(e->ap->m, e->easy);
	if (e->over || res == CURLE_FILESIZE_EXCEEDED) {
		ep_result(e, "the page is larger than %llu bytes (app_metrics_max_bytes)",
			  (unsigned long long)c->max_bytes);
		return;
	}
	if (res == CURLE_OPERATION_TIMEDOUT) {
		ep_result(e, "no whole answer within %s (app_metrics_timeout)",
			  util_fmt_duration(c->timeout_ns, tb, sizeof(tb)));
		return;
	}
	if (res != CURLE_OK) {
		ep_result(e, "%s%s%s", cu->easy_strerror(res), e->curl_err[0] ? ": " : "",
			  e->curl_err);
		return;
	}
	cu->easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		ep_result(e, "HTTP status %ld%s", code, code >= 300 && code < 400 ?
			  " (redirects are not followed)" : "");
		return;
	}
	{
		uint64_t c0 = cost_cpu_ns();
		int rc;

		if (!e->page && !(e->page = app_page_new())) {
			ep_result(e, "out of memory");
			return;
		}
		err[0] = 0;
		rc = app_page_parse(e->page, e->cf.name, c, e->buf ? e->buf : "", e->len,
				    err, sizeof(err));
		e->parse_cpu_ns = cost_cpu_ns() - c0;
		e->ap->dirty = 1;
		if (rc < 0) {
			ep_result(e, "malformed page: %s", err);
			return;
		}
	}
	/* keep the good page's text; the next scrape writes in the old one */
	free(e->text);
	e->text = e->buf;
	e->text_len = e->len;
	e->buf = NULL;
	e->cap = 0;
	e->len = 0;
	e->last_ok_ns = loop_mono_ns();
	ep_result(e, NULL);
}

static void check_done(struct app_priv *ap)
{
	CURLMsg *msg;
	int left;

	while ((msg = cu->multi_info_read(ap->m, &left)))
		if (msg->msg == CURLMSG_DONE) {
			struct ep *e = NULL;

			cu->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&e);
			if (e)
				ep_done(e, msg->data.result);
		}
}

static void fd_cb(int fd, uint32_t events, void *arg)
{
	struct app_priv *ap = arg;
	int flags = 0, running;

	if (events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	cu->multi_socket_action(ap->m, fd, flags, &running);
	check_done(ap);
}

static void timer_cb(struct loop_timer *t, void *arg)
{
	struct app_priv *ap = arg;
	int running;

	(void)t;
	cu->multi_socket_action(ap->m, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(ap);
}

/* CURLMOPT_SOCKETFUNCTION: libcurl's sockets on the loop. */
static int sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *sockp)
{
	struct app_priv *ap = userp;
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		loop_del_fd(ap->loop, s);
		return 0;
	}
	if (!sockp) {
		if (loop_add_fd(ap->loop, s, ev, fd_cb, ap) < 0) {
			log_warn("port %s: app metrics: watching a socket", ap->port);
			return -1;      /* libcurl fails the transfer */
		}
		loop_fd_name(ap->loop, s, "app metrics");
		cu->multi_assign(ap->m, s, ap);
		return 0;
	}
	return loop_mod_fd(ap->loop, s, ev) < 0 ? -1 : 0;
}

/* CURLMOPT_TIMERFUNCTION: libcurl's one timeout as the loop's timer (0 ms
 * runs from the loop, not from inside libcurl). */
static int tmo_cb(CURLM *m, long ms, void *userp)
{
	struct app_priv *ap = userp;

	(void)m;
	if (ms < 0)
		return loop_timer_set(ap->timer, 0, 0) < 0 ? -1 : 0;
	return loop_timer_set(ap->timer, ms ? (uint64_t)ms * 1000000ull : 1000, 0) < 0 ? -1 : 0;
}

static int ep_setup(struct ep *e)
{
	const struct app_conf *c = &e->cf.conf;
	CURL *h = cu->easy_init();
	long to = (long)(c->timeout_ns / 1000000ull);
	unsigned vn;
	CURLcode rc;

	if (!h)
		return -ENOMEM;
	e->easy = h;
	e->hdrs = cu->slist_append(NULL, "Accept: text/plain;version=0.0.4");
	if (!e->hdrs)
		return -ENOMEM;
	/* what the loaded libcurl has, not what the build's header had (a
	 * package built on a newer system than it runs on) */
	vn = cu->version_info(CURLVERSION_NOW)->version_num;
#if LIBCURL_VERSION_NUM >= 0x075500
	rc = vn >= 0x075500 ? cu->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") :
	     cu->easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#else
	rc = cu->easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* a transfer ended (its timeout, a reload) in the middle of a name
	 * lookup: the threaded resolver's thread is left to finish on its
	 * own, not joined on the loop (Curl_resolver_kill waits for
	 * getaddrinfo otherwise: a resolver that does not answer held the
	 * loop for its timeouts times its attempts); libcurl 7.87 and later */
#if LIBCURL_VERSION_NUM >= 0x075700
	if (rc == CURLE_OK && vn >= 0x075700)
		rc = cu->easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
#endif
	if (rc != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_URL, c->url) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_PROXY, "") != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, to) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_bytes) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_WRITEDATA, e) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_PRIVATE, e) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_ERRORBUFFER, e->curl_err) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_HTTPHEADER, e->hdrs) != CURLE_OK ||
	    cu->easy_setopt(h, CURLOPT_USERAGENT, "nicstalld/" NICSTALL_VERSION) != CURLE_OK)
		return -EINVAL;
	return 0;
}

static void ep_start(struct app_priv *ap, struct ep *e, uint64_t now)
{
	CURLMcode mc;

	e->len = 0;
	e->over = 0;
	e->curl_err[0] = 0;
	e->start_ns = e->last_start_ns = now;
	mc = cu->multi_add_handle(ap->m, e->easy);
	if (mc != CURLM_OK) {
		ep_result(e, "%s", cu->multi_strerror(mc));
		return;
	}
	e->in_flight = 1;
}

static void app_close(struct src *s)
{
	struct app_priv *ap = s->priv;

	if (!ap)
		return;
	for (unsigned i = 0; i < ap->nep; i++) {
		struct ep *e = &ap->ep[i];

		if (e->in_flight)
			cu->multi_remove_handle(ap->m, e->easy);
		if (e->easy)
			cu->easy_cleanup(e->easy);
		cu->slist_free_all(e->hdrs);
		free(e->buf);
		free(e->text);
		app_page_free(e->page);
	}
	if (ap->m)
		cu->multi_cleanup(ap->m);
	if (ap->timer)
		loop_timer_free(ap->timer);
	clayout_unref(ap->lay);
	free(ap->vals);
	free(ap);
	s->priv = NULL;
}

int src_app_open(struct src *s, const struct src_app_ctx *ctx)
{
	struct app_priv *ap;
	int rc = -ENOMEM;

	s->ops = &src_app_ops;
	if (!ctx->nep || ctx->nep > APP_MAX_ENDPOINTS) {
		util_errf(s->err, sizeof(s->err), "no app_metrics endpoint");
		return -ENOENT;
	}
	if (!cu && !(cu = curl_dl(s->err, sizeof(s->err))))
		return -ENOENT;
	if (cu->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		util_errf(s->err, sizeof(s->err), "libcurl could not start");
		return -EIO;
	}
	ap = calloc(1, sizeof(*ap));
	if (!ap)
		goto oom;
	s->priv = ap;
	ap->loop = ctx->loop;
	util_strlcpy(ap->port, ctx->port_name ? ctx->port_name : "?", sizeof(ap->port));
	ap->m = cu->multi_init();
	ap->timer = loop_timer_new(ctx->loop, timer_cb, ap);
	if (!ap->m || !ap->timer)
		goto oom;
	loop_timer_name(ap->timer, "app metrics");
	if (cu->multi_setopt(ap->m, CURLMOPT_SOCKETFUNCTION, sock_cb) != CURLM_OK ||
	    cu->multi_setopt(ap->m, CURLMOPT_SOCKETDATA, ap) != CURLM_OK ||
	    cu->multi_setopt(ap->m, CURLMOPT_TIMERFUNCTION, tmo_cb) != CURLM_OK ||
	    cu->multi_setopt(ap->m, CURLMOPT_TIMERDATA, ap) != CURLM_OK) {
		rc = -EINVAL;
		goto fail;
	}
	/* a libcurl without its threaded (or c-ares) resolver would look a
	 * host name up in the loop's thread */
	if (!(cu->version_info(CURLVERSION_NOW)->features & CURL_VERSION_ASYNCHDNS))
		log_warnx("port %s: app metrics: this libcurl resolves host names while the "
			  "daemon waits: give app_metrics an IP address", ap->port);
	for (unsigned i = 0; i < ctx->nep; i++) {
		struct ep *e = &ap->ep[ap->nep++];

		e->cf = ctx->ep[i];
		e->ap = ap;
		app_conf_defaults(&e->cf.conf);
		if ((rc = ep_setup(e)) < 0)
			goto fail;
	}
	return 0;
oom:
	rc = -ENOMEM;
fail:
	util_errf(s->err, sizeof(s->err), "app metrics: %s", rc == -ENOMEM ? "out of memory" :
		  "libcurl refused an option");
	app_close(s);
	return rc;
}

/* The endpoints' series as one layout (a new one only when the names
 * changed: the recorder keeps a sample's layout by reference). */
static int rebuild(struct app_priv *ap, struct src *s)
{
	unsigned n = 0, k = 0;
	const char **names;
	uint64_t *vals;
	int same;

	for (unsigned i = 0; i < ap->nep; i++)
		n += ap->ep[i].page ? app_page_count(ap->ep[i].page) : 0;
	names = malloc((n + 1) * sizeof(*names));
	vals = malloc((n + 1) * sizeof(*vals));
	if (!names || !vals) {
		free(names);
		free(vals);
		util_errf(s->err, sizeof(s->err), "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ap->nep; i++)
		for (unsigned j = 0; ap->ep[i].page && j < app_page_count(ap->ep[i].page); j++) {
			names[k] = app_page_name(ap->ep[i].page, j);
			vals[k++] = app_page_value(ap->ep[i].page, j);
		}
	same = ap->lay && ap->lay->n == n;
	for (unsigned i = 0; same && i < n; i++)
		same = !strcmp(ap->lay->names[i], names[i]);
	if (!same) {
		uint64_t now = loop_mono_ns();
		/* APP_MAX_LAYOUTS changes, and two for each endpoint's first
		 * pages (they come up one by one) */
		unsigned budget = APP_MAX_LAYOUTS + 2 * ap->nep;
		uint64_t oldest;

		if (budget > APP_LAYOUT_RING)
			budget = APP_LAYOUT_RING;
		oldest = ap->nchanged >= budget ?
			 ap->changed_ns[(ap->nchanged - budget) % APP_LAYOUT_RING] : 0;
		struct clayout *l = clayout_new(n, names, NULL);

		if (!l) {
			free(names);
			free(vals);
			util_errf(s->err, sizeof(s->err), "out of memory");
			return -ENOMEM;
		}
		if (ap->lay && ap->nchanged >= budget && now - oldest < APP_CHURN_NS) {
			/* A page whose series change at every scrape (a hostile
			 * or broken endpoint: every label a request id) would
			 * have each recorder sample keep a layout of its own,
			 * up to APP_MAX_SERIES names each: the layout is kept,
			 * the page's values read onto it by name (a series it
			 * lacks keeps its last value; new series are left out) */
			int *map = clayout_map_new(l, ap->lay);
			uint64_t *kept = malloc((ap->lay->n + 1) * sizeof(*kept));

			clayout_unref(l);
			if (!map || !kept) {
				free(map);
				free(kept);
				free(names);
				free(vals);
				util_errf(s->err, sizeof(s->err), "out of memory");
				return -ENOMEM;
			}
			for (unsigned c = 0; c < ap->lay->n; c++)
				kept[c] = map[c] >= 0 ? vals[map[c]] : ap->vals[c];
			free(map);
			free(vals);
			vals = kept;
			if (!ap->frozen)
				log_warnx("port %s: app metrics: the series set changed %u times in "
					  "%.0f s: its names are kept as they are until it settles "
					  "(series new since are left out)", ap->port,
					  budget, (double)(now - oldest) / 1e9);
			ap->frozen = 1;
			ap->frozen_pages++;
		} else {
			if (ap->frozen)
				log_info("port %s: app metrics: the series set settled; its "
					 "changes are taken again", ap->port);
			ap->frozen = 0;
			ap->changed_ns[ap->nchanged++ % APP_LAYOUT_RING] = now;
			clayout_unref(ap->lay);
			ap->lay = l;
		}
	}
	free(names);
	free(ap->vals);
	ap->vals = vals;
	ap->dirty = 0;
	return 0;
}

static int app_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct app_priv *ap = s->priv;
	uint64_t now = loop_mono_ns();
	unsigned bad = 0;
	size_t o = 0;

	s->err[0] = 0;
	for (unsigned i = 0; i < ap->nep; i++) {
		struct ep *e = &ap->ep[i];

		if (!e->in_flight && (!e->last_start_ns ||
				      now - e->last_start_ns >= e->cf.conf.min_gap_ns))
			ep_start(ap, e, now);
		if (e->state == EP_ERROR) {
			bad++;
			if (o < sizeof(s->err))
				o += (size_t)snprintf(s->err + o, sizeof(s->err) - o, "%s%s: %s",
						      o ? "; " : "", e->cf.name, e->err);
		}
	}
	if (ap->dirty || !ap->lay) {
		int rc = rebuild(ap, s);

		if (rc < 0)
			return rc;
	}
	if (ap->frozen) {
		size_t l = strlen(s->err);

		snprintf(s->err + l, sizeof(s->err) - l, "%sthe series set changes at most every "
			 "scrape: its names kept, new series left out (%lu pages so far)",
			 l ? "; " : "", ap->frozen_pages);
	}
	if (bad == ap->nep)
		return -EIO;
	*lay = ap->lay;
	*vals = ap->vals;
	return 0;
}

uint64_t src_app_scrapes(struct src *s)
{
	struct app_priv *ap = s->priv;
	uint64_t n = 0;

	for (unsigned i = 0; ap && i < ap->nep; i++)
		n += ap->ep[i].scrapes;
	return n;
}

struct json_object *src_app_json(struct src *s, int with_text, size_t text_max)
{
	struct app_priv *ap = s->priv;
	struct json_object *a = json_object_new_array();
	uint64_t now = loop_mono_ns();

	for (unsigned i = 0; ap && i < ap->nep; i++) {
		const struct ep *e = &ap->ep[i];
		struct json_object *o = json_object_new_object();

		jx_add_str(o, "name", e->cf.name);
		jx_add_str(o, "url", e->cf.conf.url);
		json_object_object_add(o, "scale", jx_new_sig(e->cf.conf.scale > 0 ?
							       e->cf.conf.scale : 1, 9));
		jx_add_str(o, "state", e->state == EP_OK ? "ok" : e->state == EP_ERROR ? "error" :
			   "waiting");
		if (e->err[0])
			jx_add_str(o, "error", e->err);
		jx_add_u64(o, "scrapes", e->scrapes);
		jx_add_u64(o, "errors", e->errors);
		jx_add_bool(o, "in_flight", e->in_flight);
		if (e->last_ok_ns)
			json_object_object_add(o, "last_ok_age_s",
					       jx_new_fixed((double)(now - e->last_ok_ns) / 1e9, 3));
		json_object_object_add(o, "last_duration_ms",
				       jx_new_fixed((double)e->last_dur_ns / 1e6, 3));
		jx_add_u64(o, "bytes", e->text_len);
		jx_add_u64(o, "series", e->page ? app_page_count(e->page) : 0);
		jx_add_u64(o, "left_out", e->page ? e->page->left_out : 0);
		jx_add_bool(o, "series_set_kept", ap->frozen);
		json_object_object_add(o, "parse_cpu_us",
				       jx_new_fixed((double)e->parse_cpu_ns / 1e3, 1));
		if (with_text && e->text) {
			size_t n = e->text_len < text_max ? e->text_len : text_max;
			char *t = util_utf8_clean(e->text, n);

			if (t)
				jx_add_str(o, "text", t);
			free(t);
			jx_add_bool(o, "text_truncated", n < e->text_len);
		}
		json_object_array_add(a, o);
	}
	return a;
}

const struct src_ops src_app_ops = {
	.name = "app",
	.open = NULL,                   /* src_app_open: it needs the loop */
	.read = app_read,
	.close = app_close,
};
