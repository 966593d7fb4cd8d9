/* json: json-c helpers (see json.h). */
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_object *jx_get(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !key || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

struct json_object *jx_obj(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);

	return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

struct json_object *jx_arr(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

const char *jx_str(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *jx_text(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);

	if (!v || json_object_is_type(v, json_type_null))
		return "";
	return json_object_get_string(v);
}

int jx_num(struct json_object *v, double *out)
{
	double x;

	if (!v)
		return 0;
	switch (json_object_get_type(v)) {
	case json_type_int:
		/* json-c returns INT64_MAX for a u64 above it */
		if (json_object_get_int64(v) == INT64_MAX)
			x = (double)json_object_get_uint64(v);
		else
			x = (double)json_object_get_int64(v);
		break;
	case json_type_double:
		x = json_object_get_double(v);
		break;
	default:
		return 0;
	}
	if (!isfinite(x))
		return 0;
	*out = x;
	return 1;
}

double jx_double(struct json_object *o, const char *key, double fallback)
{
	double d;

	return jx_num(jx_get(o, key), &d) ? d : fallback;
}

uint64_t jx_u64(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);
	double d;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		if (json_object_get_int64(v) < 0)
			return 0;
		return json_object_get_uint64(v);
	}
	if (jx_num(v, &d) && d >= 0 && d < 18446744073709551616.0)
		return (uint64_t)d;
	return 0;
}

int jx_bool(struct json_object *o, const char *key)
{
	struct json_object *v = jx_get(o, key);
	double d;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v);
	return jx_num(v, &d) && d != 0;
}

size_t jx_len(struct json_object *arr)
{
	return arr && json_object_is_type(arr, json_type_array) ?
	       json_object_array_length(arr) : 0;
}

void jx_add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v ? v : ""));
}

void jx_add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void jx_add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void jx_add_double(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

void jx_add_bool(struct json_object *o, const char *key, int v)
{
	json_object_object_add(o, key, json_object_new_boolean(!!v));
}

void jx_add_ms(struct json_object *o, const char *key, uint64_t ns)
{
	json_object_object_add(o, key, json_object_new_double((double)(ns / 1000) / 1000.0));
}

void jx_copy(struct json_object *dst, const char *key, struct json_object *src,
	     const char *srckey)
{
	struct json_object *v = jx_get(src, srckey);

	if (v)
		json_object_object_add(dst, key, json_object_get(v));
}

int jx_put(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int jx_push(struct json_object *arr, struct json_object *v)
{
	if (!v || json_object_array_add(arr, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

struct json_object *jx_array_at(struct json_object *o, const char *key)
{
	struct json_object *a = jx_arr(o, key);

	if (!a) {
		a = json_object_new_array();
		json_object_object_add(o, key, a);
	}
	return a;
}

/* v written as fmt prints it with prec (clamped to lo..hi): the value is
 * what the text says, and the text is what is written. */
static struct json_object *new_printed(double v, const char *fmt, int prec, int lo, int hi)
{
	char buf[64];

	if (!isfinite(v))
		return json_object_new_double(v);
	prec = prec < lo ? lo : prec > hi ? hi : prec;
	snprintf(buf, sizeof(buf), fmt, prec, v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

struct json_object *jx_new_fixed(double v, int decimals)
{
	return new_printed(v, "%.*f", decimals, 0, 9);
}

struct json_object *jx_new_sig(double v, int digits)
{
	/* %g may write "1e+06": a JSON number too */
	return new_printed(v, "%.*g", digits, 1, 17);
}

size_t jx_conn_count(struct json_object *list, const char *key)
{
	size_t n = 0;

	for (size_t i = 0; i < jx_len(list); i++) {
		char a[200], b[200];
		size_t j;

		util_conn_key(jx_str(json_object_array_get_idx(list, i), key), a, sizeof(a));
		for (j = 0; j < i; j++) {
			util_conn_key(jx_str(json_object_array_get_idx(list, j), key), b, sizeof(b));
			if (!strcmp(a, b))
				break;
		}
		n += j == i;
	}
	return n;
}
