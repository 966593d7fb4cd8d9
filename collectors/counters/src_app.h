/* src_app: the application's own metrics as a counter source ("app"): the
 * Prometheus endpoints a [port] or a [producer NAME] names (app_metrics =
 * http://127.0.0.1:PORT/metrics), scraped with libcurl's multi interface
 * on the daemon's event loop (curl_multi_socket_action, its sockets and
 * timer on lib/loop.h; never a blocking call) and parsed by promtext_parse.c.
 *
 * Each read() starts a scrape of every endpoint that has none in flight
 * and whose last one started at least min_gap ago (so the fast window of
 * a stall scrapes as often as that, the base rate at the sample interval),
 * and gives the series of the last completed scrapes:
 *
 *   app.NAME.SERIES     NAME the endpoint's (the port's or the producer's
 *                       name), SERIES the metric with its labels as the
 *                       page wrote them (prom_series_key), e.g.
 *                       app.flare.flare_engram_disk_wait_nanoseconds_total
 *                       app.flare.http_requests_total{code="200"}
 *
 * A value is kept rounded to an unsigned integer (times `app_metrics_scale`
 * when one is set: 1000 keeps a seconds counter in milliseconds); a
 * negative, NaN or infinite value leaves that series out of that scrape.
 * An endpoint whose last scrape failed (down, slower than its timeout,
 * larger than its size cap, not HTTP 200, malformed text) has no series
 * until one succeeds, and says why (s->err, the log, src_app_json()); the
 * read fails only when every endpoint's last scrape failed. Only http and
 * https, no redirect followed, no proxy, no compressed body. The URL is
 * fetched in the daemon's own network namespace. */
#ifndef NICSTALL_SRC_APP_H
#define NICSTALL_SRC_APP_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

#define APP_MAX_URL 512
#define APP_MAX_KEEP 16

struct app_conf {
	char url[APP_MAX_URL];       /* "" none */
	uint64_t timeout_ns;         /* the whole scrape, connect included */
	uint64_t max_bytes;          /* the largest page taken */
	unsigned max_series;         /* the most series kept of one page */
	uint64_t min_gap_ns;         /* between two scrapes' starts */
	double scale;                /* 0: 1 */
	char keep[APP_MAX_KEEP][128]; /* fnmatch patterns of metric names; none = all */
	unsigned nkeep;
};

#define APP_TIMEOUT_NS 2000000000ull
#define APP_MAX_BYTES (4u << 20)
#define APP_MAX_SERIES 10000u
/* A series set may change APP_MAX_LAYOUTS times in APP_CHURN_NS (the
 * recorder's span), and twice more for each endpoint (their first pages);
 * beyond, the source keeps its names (src_app.c). */
#define APP_MAX_LAYOUTS 8u
#define APP_LAYOUT_RING 64u
#define APP_CHURN_NS 60000000000ull
#define APP_MIN_GAP_NS 100000000ull

/* Defaults for a conf with url set and the rest 0 (conf.c's finish). */
void app_conf_defaults(struct app_conf *c);
/* After the section: app_metrics_* keys need app_metrics. 0 or -1 with
 * err. */
int app_conf_finish(const struct app_conf *c, char *err, size_t errlen);
/* One app_metrics* key of a [port] or [producer] section: 1 handled, 0 not
 * an app_metrics key, -1 with err. */
int app_conf_key(struct app_conf *c, const char *key, const char *val,
		 char *err, size_t errlen);

#define APP_MAX_ENDPOINTS 17        /* the port's and HOST_MAX_PRODUCERS */

struct app_endpoint {
	char name[32];
	struct app_conf conf;
};

struct loop;

struct src_app_ctx {
	struct loop *loop;
	const char *port_name;       /* for log lines */
	const struct app_endpoint *ep;
	unsigned nep;
};

extern const struct src_ops src_app_ops;

/* Open s as the app source (s->ops set); 0 or -errno with s->err. */
int src_app_open(struct src *s, const struct src_app_ctx *ctx);
/* [{name, url, scale, state ("ok", "error", "waiting"), error, scrapes, errors,
 * in_flight, last_ok_age_s, last_duration_ms, bytes, series, left_out,
 * cpu_us (the last good scrape's parse), text (with_text: the last good
 * page, made printable, at most text_max bytes; text_truncated)}]. */
struct json_object *src_app_json(struct src *s, int with_text, size_t text_max);

/* Scrapes completed (well or not) by every endpoint so far (bench). */
uint64_t src_app_scrapes(struct src *s);

/* The parse of one page into the source's series (bench, tests): the
 * series kept and left out, -EINVAL / -E2BIG with err. */
struct app_page;
struct app_page *app_page_new(void);
void app_page_free(struct app_page *pg);
int app_page_parse(struct app_page *pg, const char *name, const struct app_conf *c,
		   const char *text, size_t len, char *err, size_t errlen);
unsigned app_page_count(const struct app_page *pg);
const char *app_page_name(const struct app_page *pg, unsigned i);
uint64_t app_page_value(const struct app_page *pg, unsigned i);

#endif
