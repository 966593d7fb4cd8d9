/* peermsg: peer notice and summary payloads, built to fit and read back
 * as hostile input. */
#include "daemon/peers/peermsg.h"
#include "daemon/hostfacts.h"
#include "lib/json.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 8
#define MAX_STR 200

/* ---- building ---- */

static char *text_of(struct json_object *o, size_t max)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = s ? strlen(s) : 0;

	return s && n <= max ? strndup(s, n) : NULL;
}

char *peermsg_notice(const char *origin, uint64_t incident, uint64_t sent_real_ns,
		     uint64_t stall_real_ns, struct json_object *ports, struct json_object *flows,
		     size_t max)
{
	struct json_object *o = json_object_new_object(), *pa = json_object_new_array();
	struct json_object *fa = json_object_new_array();
	char *text = NULL;

	jx_add_str(o, "origin", origin);
	jx_add_u64(o, "incident", incident);
	jx_add_u64(o, "sent_real_ns", sent_real_ns);
	jx_add_u64(o, "stall_real_ns", stall_real_ns);
	for (size_t i = 0; i < jx_len(ports) && i < PEERMSG_MAX_PORTS; i++)
		json_object_array_add(pa, json_object_get(json_object_array_get_idx(ports, i)));
	for (size_t i = 0; i < jx_len(flows) && i < PEERMSG_MAX_NFLOWS; i++)
		json_object_array_add(fa, json_object_get(json_object_array_get_idx(flows, i)));
	json_object_object_add(o, "ports", pa);
	json_object_object_add(o, "flows", fa);
	while (!(text = text_of(o, max)) && json_object_array_length(fa))
		json_object_array_del_idx(fa, json_object_array_length(fa) - 1, 1);
	json_object_put(o);
	return text;
}

char *peermsg_summary(struct json_object *summary, size_t max)
{
	static const char *const order[] = { "baseline", "stall", "window" };
	struct json_object *ports = jx_obj(summary, "ports"), *list;
	char *text = text_of(summary, max);

	for (int k = 0; !text && ports && k < 3; k++) {
		json_object_object_foreach(ports, name, po) {
			(void)name;
			json_object_object_del(jx_obj(po, order[k]), "counters");
		}
		jx_add_bool(summary, "trimmed", 1);
		text = text_of(summary, max);
	}
	list = jx_arr(jx_obj(summary, "flows"), "list");
	while (!text && jx_len(list)) {
		json_object_array_del_idx(list, json_object_array_length(list) - 1, 1);
		jx_add_bool(summary, "trimmed", 1);
		text = text_of(summary, max);
	}
	return text;
}

int peermsg_same_conn(const char *a, const char *b)
{
	char pa[8], x1[80], y1[80], pb[8], x2[80], y2[80];

	if (!a || !b || sscanf(a, "%7s %79s -> %79s", pa, x1, y1) != 3 ||
	    sscanf(b, "%7s %79s -> %79s", pb, x2, y2) != 3 || strcmp(pa, pb))
		return 0;
	return (!strcmp(x1, x2) && !strcmp(y1, y2)) || (!strcmp(x1, y2) && !strcmp(y1, x2));
}

/* ---- reading (hostile) ---- */

static struct json_object *parse(const char *text, size_t len, const char **why)
{
	struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH);
	struct json_object *o;

	if (!tok) {
		*why = "out of memory";
		return NULL;
	}
	if (memchr(text, 0, len)) {
		*why = "a NUL byte in the payload";
		json_tokener_free(tok);
		return NULL;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		*why = "the payload is not one JSON document";
		json_object_put(o);
		o = NULL;
	} else if (!json_object_is_type(o, json_type_object)) {
		*why = "the payload is not a JSON object";
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* A string of at most max bytes, clean UTF-8 without control characters. */
static int good_str(struct json_object *v, size_t max)
{
	const char *s;
	size_t n;
	char *c;
	int ok;

	if (!json_object_is_type(v, json_type_string))
		return 0;
	s = json_object_get_string(v);
	n = strlen(s);
	if (n > max || n != (size_t)json_object_get_string_len(v))
		return 0;
	c = util_utf8_clean(s, n);
	ok = c && !strcmp(c, s) && !strpbrk(s, "\n\t");
	free(c);
	return ok;
}

static int good_u64(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
}

static int good_num(struct json_object *v)
{
	double d;

	return (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
	       jx_num(v, &d) && isfinite(d);
}

/* o[key] copied into out when check holds for it (missing: nothing). -1:
 * present and bad. */
static int copy_if(struct json_object *out, struct json_object *o, const char *key,
		   int (*check)(struct json_object *))
{
	struct json_object *v = jx_get(o, key);

	if (!v)
		return 0;
	if (!check(v))
		return -1;
	json_object_object_add(out, key, json_object_get(v));
	return 0;
}

static int is_name(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       util_valid_name(json_object_get_string(v), 63);
}

static int is_bundle(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       util_valid_name(json_object_get_string(v), 200);
}

static int is_text(struct json_object *v)
{
	return good_str(v, MAX_STR);
}

static int is_bool(struct json_object *v)
{
	return json_object_is_type(v, json_type_boolean);
}

/* The common head of both: origin (a host name) and incident (> 0). */
static int read_head(struct json_object *in, struct json_object *out, const char **why)
{
	if (!is_name(jx_get(in, "origin"))) {
		*why = "origin is missing or not a host name";
		return -1;
	}
	if (!good_u64(jx_get(in, "incident")) || !jx_u64(in, "incident")) {
		*why = "incident is missing or not a positive integer";
		return -1;
	}
	jx_copy(out, "origin", in, "origin");
	jx_copy(out, "incident", in, "incident");
	return 0;
}

static int notice_body(struct json_object *in, struct json_object *out, const char **why)
{
	struct json_object *ports, *flows;

	if (copy_if(out, in, "sent_real_ns", good_u64) < 0 ||
	    copy_if(out, in, "stall_real_ns", good_u64) < 0) {
		*why = "a time is not an integer count of nanoseconds";
		return -1;
	}
	ports = json_object_new_array();
	json_object_object_add(out, "ports", ports);
	for (size_t i = 0; i < jx_len(jx_arr(in, "ports")); i++) {
		struct json_object *v = json_object_array_get_idx(jx_arr(in, "ports"), i);

		if (i >= PEERMSG_MAX_PORTS || !is_name(v)) {
			*why = "ports: more than 8, or one is not a name";
			return -1;
		}
		json_object_array_add(ports, json_object_get(v));
	}
	flows = json_object_new_array();
	json_object_object_add(out, "flows", flows);
	for (size_t i = 0; i < jx_len(jx_arr(in, "flows")); i++) {
		struct json_object *v = json_object_array_get_idx(jx_arr(in, "flows"), i);

		if (i >= PEERMSG_MAX_NFLOWS || !good_str(v, 160)) {
			*why = "flows: more than 16, or one is not a flow tuple";
			return -1;
		}
		json_object_array_add(flows, json_object_get(v));
	}
	return 0;
}

/* {NAME: number} with names of at most 160 bytes; at most max entries. */
static struct json_object *numbers(struct json_object *in, size_t max, const char **why)
{
	struct json_object *out;
	size_t n = 0;

	if (!in)
		return NULL;
	if (!json_object_is_type(in, json_type_object)) {
		*why = "a counter list is not an object";
		return NULL;
	}
	out = json_object_new_object();
	json_object_object_foreach(in, k, v) {
		if (++n > max || strlen(k) > 160 || !good_num(v)) {
			*why = "a counter list holds too many entries or a value that is not a number";
			json_object_put(out);
			return NULL;
		}
		json_object_object_add(out, k, json_object_get(v));
	}
	return out;
}

static int read_port(struct json_object *in, struct json_object *out, const char **why)
{
	static const char *const per[] = { "stall", "window", "baseline" };

	if (!json_object_is_type(in, json_type_object)) {
		*why = "a port is not an object";
		return -1;
	}
	if (copy_if(out, in, "profile", is_name) < 0) {
		*why = "a port's profile is not a name";
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		struct json_object *pi = jx_get(in, per[i]), *po, *c;
		const char *w = NULL;

		if (!pi)
			continue;
		if (!json_object_is_type(pi, json_type_object) || !good_num(jx_get(pi, "span_s"))) {
			*why = "a period is not an object with a span";
			return -1;
		}
		po = json_object_new_object();
		json_object_object_add(out, per[i], po);
		jx_copy(po, "span_s", pi, "span_s");
		c = numbers(jx_get(pi, "counters"), PEERMSG_MAX_COUNTERS, &w);
		if (w) {
			*why = w;
			return -1;
		}
		if (c)
			json_object_object_add(po, "counters", c);
		c = numbers(jx_get(pi, "signals"), 64, &w);
		if (w) {
			*why = w;
			return -1;
		}
		if (c)
			json_object_object_add(po, "signals", c);
	}
	return 0;
}

static int read_flows(struct json_object *in, struct json_object *out, const char **why)
{
	static const char *const counts[] = { "total", "stalled", "waiting", "idle" };
	static const char *const nums[] = { "waiting_ms", "tx_msgs", "rx_msgs", "held" };
	struct json_object *list = jx_get(in, "list"), *ol;

	if (!json_object_is_type(in, json_type_object)) {
		*why = "flows is not an object";
		return -1;
	}
	for (int i = 0; i < 4; i++)
		if (copy_if(out, in, counts[i], good_u64) < 0) {
			*why = "a flow count is not a count";
			return -1;
		}
	if (!list)
		return 0;
	if (!json_object_is_type(list, json_type_array) || jx_len(list) > PEERMSG_MAX_FLOWS) {
		*why = "flows.list is not an array of at most 32";
		return -1;
	}
	ol = json_object_new_array();
	json_object_object_add(out, "list", ol);
	for (size_t i = 0; i < jx_len(list); i++) {
		struct json_object *f = json_object_array_get_idx(list, i);
		struct json_object *o = json_object_new_object();

		json_object_array_add(ol, o);
		if (!json_object_is_type(f, json_type_object) || copy_if(o, f, "tuple", is_text) < 0 ||
		    copy_if(o, f, "state", is_name) < 0 || copy_if(o, f, "source", is_name) < 0) {
			*why = "a flow of flows.list is malformed";
			return -1;
		}
		for (int k = 0; k < 4; k++)
			if (copy_if(o, f, nums[k], good_num) < 0) {
				*why = "a flow's figure is not a number";
				return -1;
			}
	}
	return 0;
}

static int summary_body(struct json_object *in, struct json_object *out, const char **why)
{
	struct json_object *ports, *v;

	v = jx_get(in, "notice_nonce");
	if (!good_str(v, 64) || strlen(json_object_get_string(v)) != 32) {
		*why = "notice_nonce is missing or not 32 hex digits";
		return -1;
	}
	jx_copy(out, "notice_nonce", in, "notice_nonce");
	if (copy_if(out, in, "host", is_name) < 0 || copy_if(out, in, "bundle", is_bundle) < 0 ||
	    copy_if(out, in, "bundle_error", is_text) < 0 ||
	    copy_if(out, in, "received_real_ns", good_u64) < 0 ||
	    copy_if(out, in, "answered_real_ns", good_u64) < 0 ||
	    copy_if(out, in, "window_ms", good_num) < 0 || copy_if(out, in, "trimmed", is_bool) < 0) {
		*why = "host, bundle, a time or the window is malformed";
		return -1;
	}
	if ((v = jx_get(in, "incidents_open"))) {
		struct json_object *a = json_object_new_array();

		json_object_object_add(out, "incidents_open", a);
		if (!json_object_is_type(v, json_type_array) || jx_len(v) > 8) {
			*why = "incidents_open is not a short list";
			return -1;
		}
		for (size_t i = 0; i < jx_len(v); i++) {
			struct json_object *x = json_object_array_get_idx(v, i);

			if (!good_u64(x)) {
				*why = "incidents_open holds a value that is not an id";
				return -1;
			}
			json_object_array_add(a, json_object_get(x));
		}
	}
	ports = json_object_new_object();
	json_object_object_add(out, "ports", ports);
	if ((v = jx_get(in, "ports"))) {
		size_t n = 0;

		if (!json_object_is_type(v, json_type_object)) {
			*why = "ports is not an object";
			return -1;
		}
		json_object_object_foreach(v, name, po) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(ports, name, o);
			if (++n > PEERMSG_MAX_PORTS || !util_valid_name(name, 31)) {
				*why = "ports: more than 8, or a name that is not a port name";
				return -1;
			}
			if (read_port(po, o, why) < 0)
				return -1;
		}
	}
	if ((v = jx_get(in, "flows"))) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(out, "flows", o);
		if (read_flows(v, o, why) < 0)
			return -1;
	}
	/* the host's figures over the stall (hostfacts.c): what names the
	 * rank whose producer stopped */
	if ((v = jx_get(in, "resources"))) {
		struct json_object *o = hostfacts_read(v, why);

		if (!o)
			return -1;
		json_object_object_add(out, "resources", o);
	}
	return 0;
}

/* One message: the JSON object, its common head, then its own body. */
static struct json_object *read_msg(const char *text, size_t len, const char **why,
				    int (*body)(struct json_object *, struct json_object *,
						const char **))
{
	struct json_object *in = parse(text, len, why), *out;

	if (!in)
		return NULL;
	out = json_object_new_object();
	if (read_head(in, out, why) < 0 || body(in, out, why) < 0) {
		json_object_put(out);
		out = NULL;
	}
	json_object_put(in);
	return out;
}

struct json_object *peermsg_read_notice(const char *text, size_t len, const char **why)
{
	return read_msg(text, len, why, notice_body);
}

struct json_object *peermsg_read_summary(const char *text, size_t len, const char **why)
{
	return read_msg(text, len, why, summary_body);
}
