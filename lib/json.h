/* json: the one set of json-c helpers every module uses.
 *
 * Getters take anything: a NULL object, a value that is not a JSON object,
 * a missing key or a value of the wrong type give the fallback, never a
 * crash, so hostile or incomplete documents (bundles, facts, replies) can
 * be read without checks at every step. Numbers: an integer above
 * INT64_MAX (json-c keeps u64 apart) is read exactly as u64; NaN and
 * infinities are not numbers. */
#ifndef NICSTALL_JSON_H
#define NICSTALL_JSON_H

#include <stdint.h>

#include <json-c/json.h>

/* o[key], or NULL. */
struct json_object *jx_get(struct json_object *o, const char *key);
/* o[key] when it is an object / an array, else NULL. */
struct json_object *jx_obj(struct json_object *o, const char *key);
struct json_object *jx_arr(struct json_object *o, const char *key);
/* o[key] when it is a string, else NULL. */
const char *jx_str(struct json_object *o, const char *key);
/* o[key] as text for people: a string as is, a number or boolean as JSON
 * writes it, "" when missing or null. */
const char *jx_text(struct json_object *o, const char *key);
/* A finite number (int or double) in *out: 1, else 0 and *out untouched. */
int jx_num(struct json_object *v, double *out);
/* o[key] as a number, or fallback. */
double jx_double(struct json_object *o, const char *key, double fallback);
/* o[key] as u64: a non-negative integer (or a non-negative finite double,
 * truncated); 0 otherwise. */
uint64_t jx_u64(struct json_object *o, const char *key);
/* o[key] as a boolean: true only for true or a non-zero number. */
int jx_bool(struct json_object *o, const char *key);
/* Number of elements of an array (0 for anything else). */
size_t jx_len(struct json_object *arr);

/* Setters (o must be an object; NULL strings are written as ""). */
void jx_add_str(struct json_object *o, const char *key, const char *v);
void jx_add_u64(struct json_object *o, const char *key, uint64_t v);
void jx_add_int(struct json_object *o, const char *key, int64_t v);
void jx_add_double(struct json_object *o, const char *key, double v);
void jx_add_bool(struct json_object *o, const char *key, int v);
/* ns as milliseconds with microsecond resolution (3 decimals). */
void jx_add_ms(struct json_object *o, const char *key, uint64_t ns);
/* A new reference to o[key] under key in dst (nothing when missing). */
void jx_copy(struct json_object *dst, const char *key, struct json_object *src,
	     const char *srckey);
/* Checked setters, for output where a lost field must be noticed: v
 * under key in o / appended to arr. A NULL v (a json_object_new_* that
 * failed) or a failed add releases v and returns -ENOMEM; else 0. */
int jx_put(struct json_object *o, const char *key, struct json_object *v);
int jx_push(struct json_object *arr, struct json_object *v);
/* o[key] as an array, created when missing. */
struct json_object *jx_array_at(struct json_object *o, const char *key);

/* A double rounded to `decimals` places for output, so 332.89222799999999
 * is written 332.892 (json-c prints doubles with 17 digits). */
struct json_object *jx_new_fixed(double v, int decimals);
/* A double rounded to digits significant digits, written as rounded
 * ("4.365", not 4.3649637230843492): a figure a person may read. */
struct json_object *jx_new_sig(double v, int digits);
/* The connections among the flows of list, whose tuple is o[key]: both
 * directions of one are one (util_conn_key). Quadratic: for the bounded
 * lists of a record (an incident lists at most 64 flows). */
size_t jx_conn_count(struct json_object *list, const char *key);

#endif
