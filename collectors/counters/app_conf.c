/* app_conf: an app_metrics endpoint's options (src_app.h): the URL (http
 * or https, as libcurl's own URL parser reads it), the bounds of a
 * scrape, the metrics kept, checked as the configuration is read. */
#include "collectors/counters/src_app.h"
#include "collectors/counters/curl_dl.h"
#include "lib/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_conf_defaults(struct app_conf *c)
{
	if (!c->timeout_ns)
		c->timeout_ns = APP_TIMEOUT_NS;
	if (!c->max_bytes)
		c->max_bytes = APP_MAX_BYTES;
	if (!c->max_series)
		c->max_series = APP_MAX_SERIES;
	if (!c->min_gap_ns)
		c->min_gap_ns = APP_MIN_GAP_NS;
	if (c->scale == 0)
		c->scale = 1;
}

/* An http or https URL with a host, as libcurl's own URL parser reads it. */
static int url_check(const char *val, char *err, size_t errlen)
{
	const struct curl_dl *cu;
	CURLU *u;
	char *scheme = NULL, *host = NULL, why[512];
	int rc = -1;

	if (strlen(val) >= APP_MAX_URL) {
		util_errf(err, errlen, "app_metrics: a URL longer than %d characters", APP_MAX_URL - 1);
		return -1;
	}
	for (const char *q = val; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f) {
			util_errf(err, errlen, "app_metrics: '%s' has a blank or a control character",
				  val);
			return -1;
		}
	if (!(cu = curl_dl(why, sizeof(why)))) {
		util_errf(err, errlen, "app_metrics: %s", why);
		return -1;
	}
	u = cu->url();
	if (!u) {
		util_errf(err, errlen, "app_metrics: out of memory");
		return -1;
	}
	if (cu->url_set(u, CURLUPART_URL, val, 0) != CURLUE_OK ||
	    cu->url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    cu->url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		util_errf(err, errlen, "app_metrics: '%s' is not a URL (e.g. "
			  "http://127.0.0.1:9100/metrics)", val);
	else if (strcmp(scheme, "http") && strcmp(scheme, "https"))
		util_errf(err, errlen, "app_metrics: '%s': only http and https are fetched", val);
	else
		rc = 0;
	cu->free_str(scheme);
	cu->free_str(host);
	cu->url_cleanup(u);
	return rc;
}

int app_conf_finish(const struct app_conf *c, char *err, size_t errlen)
{
	if (!c->url[0] && (c->timeout_ns || c->max_bytes || c->max_series || c->min_gap_ns ||
			   c->scale != 0 || c->nkeep)) {
		util_errf(err, errlen, "app_metrics_* keys without app_metrics = URL");
		return -1;
	}
	return 0;
}

int app_conf_key(struct app_conf *c, const char *key, const char *val,
		 char *err, size_t errlen)
{
	char e[160];

	if (strncmp(key, "app_metrics", 11))
		return 0;
	if (!strcmp(key, "app_metrics")) {
		if (url_check(val, err, errlen) < 0)
			return -1;
		util_strlcpy(c->url, val, sizeof(c->url));
	} else if (!strcmp(key, "app_metrics_timeout")) {
		if (util_parse_duration(val, &c->timeout_ns, 10000000ull, 60000000000ull,
					e, sizeof(e)) < 0)
			goto bad;
	} else if (!strcmp(key, "app_metrics_min_gap")) {
		if (util_parse_duration(val, &c->min_gap_ns, 10000000ull, 3600000000000ull,
					e, sizeof(e)) < 0)
			goto bad;
	} else if (!strcmp(key, "app_metrics_max_bytes")) {
		if (util_parse_size(val, &c->max_bytes, 1024, 64ull << 20, e, sizeof(e)) < 0)
			goto bad;
	} else if (!strcmp(key, "app_metrics_max_series")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 1, 100000, e, sizeof(e)) < 0)
			goto bad;
		c->max_series = (unsigned)v;
	} else if (!strcmp(key, "app_metrics_scale")) {
		char *end;
		double v = strtod(val, &end);

		if (end == val || *end || !isfinite(v) || v <= 0 || v > 1e9) {
			util_errf(err, errlen, "app_metrics_scale: '%s' is not a number in (0, 1e9]",
				  val);
			return -1;
		}
		c->scale = v;
	} else if (!strcmp(key, "app_metrics_keep")) {
		int n = util_split_list(key, val, c->keep[0], sizeof(c->keep[0]), APP_MAX_KEEP,
					err, errlen);

		if (n < 0)
			return -1;
		c->nkeep = (unsigned)n;
	} else {
		util_errf(err, errlen, "unknown key '%s' (app_metrics, app_metrics_timeout, "
			  "app_metrics_max_bytes, app_metrics_max_series, app_metrics_min_gap, "
			  "app_metrics_scale, app_metrics_keep)", key);
		return -1;
	}
	return 1;
bad:
	util_errf(err, errlen, "%s: %s", key, e);
	return -1;
}
