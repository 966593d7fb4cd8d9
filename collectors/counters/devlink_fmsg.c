/* devlink_fmsg: the fmsg of DIAGNOSE and DUMP_GET replies as counters and
 * JSON (see devlink_health.h). */
#include "collectors/counters/devlink_int.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/nl.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ================================================================ fmsg */

void dlh_diag_free(struct dlh_diag *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->n; i++)
		free(d->names[i]);
	for (unsigned i = 0; i < d->ntext; i++) {
		free(d->tnames[i]);
		free(d->texts[i]);
	}
	free(d->names);
	free(d->vals);
	free(d->width);
	free(d->tnames);
	free(d->texts);
	memset(d, 0, sizeof(*d));
}

enum { LV_OBJ = 1, LV_PAIR, LV_ARR };

struct level {
	uint8_t kind;
	uint8_t named;                /* PAIR: its name came */
	uint8_t valued;               /* PAIR: it has its value */
	size_t pathlen;               /* path length before this level */
	uint32_t next;                /* ARR: index of the next item */
	struct json_object *j;        /* OBJ/ARR container (borrowed) */
	char *jname;                  /* PAIR: name for JSON (owned) */
};

#define HSLOTS 8192u              /* > 2 * DLH_MAX_VALUES, power of 2 */

struct fm {
	struct level st[DLH_FMSG_DEPTH];
	unsigned depth;
	int started, finished;
	int have_type;
	uint8_t type;
	char path[DLH_PATH_MAX];
	size_t pathlen;
	const char *rep;              /* reporter name */
	struct dlh_diag *d;
	unsigned cap, tcap;
	uint32_t *hash;               /* d->names index + 1, 0 empty */
	struct json_object *root;     /* tree, or NULL when not wanted */
	int want_tree;
	int part_start;               /* no token of this part seen yet */
	size_t msg_off;               /* of the message being parsed */
};

/* mlx5's vnic diagnose wraps everything in one object; its name is left
 * out so that the counters read devlink/vnic/<counter>. */
static int collapsed(const struct fm *f, const char *name)
{
	return f->depth == 2 && !strcmp(f->rep, "vnic") &&
	       !strcmp(name, "vNIC env counters");
}

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int name_taken(struct fm *f, const char *name)
{
	for (uint32_t i = fnv(name) & (HSLOTS - 1);; i = (i + 1) & (HSLOTS - 1)) {
		if (!f->hash[i])
			return 0;
		if (!strcmp(f->d->names[f->hash[i] - 1], name))
			return 1;
	}
}

static void name_add(struct fm *f, const char *name, unsigned idx)
{
	uint32_t i = fnv(name) & (HSLOTS - 1);

	while (f->hash[i])
		i = (i + 1) & (HSLOTS - 1);
	f->hash[i] = idx + 1;
}

static int add_value(struct fm *f, const char *path, uint64_t v, uint8_t width)
{
	struct dlh_diag *d = f->d;
	char alt[DLH_PATH_MAX + 8];
	const char *name = path;
	char *copy;

	if (!d)
		return 0;
	if (d->n >= DLH_MAX_VALUES) {
		d->dropped++;
		return 0;
	}
	for (unsigned k = 2; name_taken(f, name); k++) {
		if (k > 99 || (size_t)snprintf(alt, sizeof(alt), "%s~%u", path, k) >= DLH_PATH_MAX) {
			d->dropped++;
			return 0;
		}
		name = alt;
	}
	if (d->n == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 64;
		char **nn = realloc(d->names, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		d->names = nn;
		uint64_t *nv = realloc(d->vals, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		d->vals = nv;
		uint8_t *nw = realloc(d->width, cap);

		if (!nw)
			return -ENOMEM;
		d->width = nw;
		f->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	d->names[d->n] = copy;
	d->vals[d->n] = v;
	d->width[d->n] = width;
	name_add(f, copy, d->n);
	d->n++;
	return 0;
}

static int add_text(struct fm *f, const char *path, const char *s, size_t n)
{
	struct dlh_diag *d = f->d;
	char *tn, *tv;

	if (!d)
		return 0;
	if (d->ntext >= DLH_MAX_TEXTS) {
		d->dropped++;
		return 0;
	}
	if (d->ntext == f->tcap) {
		unsigned cap = f->tcap ? f->tcap * 2 : 16;
		char **a = realloc(d->tnames, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		d->tnames = a;
		a = realloc(d->texts, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		d->texts = a;
		f->tcap = cap;
	}
	tn = strdup(path);
	tv = util_utf8_clean(s, n < DLH_TEXT_MAX ? n : DLH_TEXT_MAX - 1);
	if (!tn || !tv) {
		free(tn);
		free(tv);
		return -ENOMEM;
	}
	d->tnames[d->ntext] = tn;
	d->texts[d->ntext] = tv;
	d->ntext++;
	return 0;
}

/* Append "/component" (sanitized) to the path. */
static int path_push(struct fm *f, const char *comp, size_t n, char *err,
		     size_t errlen)
{
	if (f->pathlen + 1 + (n ? n : 1) >= sizeof(f->path)) {
		snprintf(err, errlen, "offset %zu: fmsg path longer than %u bytes",
			 f->msg_off, DLH_PATH_MAX - 1);
		return -EBADMSG;
	}
	f->path[f->pathlen++] = '/';
	if (!n)
		f->path[f->pathlen++] = '_';
	for (size_t i = 0; i < n; i++) {
		char c = comp[i];

		f->path[f->pathlen++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					 (c >= '0' && c <= '9') || c == '_' || c == '.') ? c : '_';
	}
	f->path[f->pathlen] = '\0';
	return 0;
}

static int path_index(struct fm *f, uint32_t idx, char *err, size_t errlen)
{
	char num[16];
	int n = snprintf(num, sizeof(num), "%u", idx);

	return path_push(f, num, (size_t)n, err, errlen);
}

static void path_cut(struct fm *f, size_t len)
{
	f->pathlen = len;
	f->path[len] = '\0';
}

/* Attach a new JSON value where the current level wants it. Takes v. */
static int json_place(struct fm *f, struct json_object *v)
{
	struct level *top = &f->st[f->depth - 1];
	int rc;

	if (!v)
		return -ENOMEM;
	if (top->kind == LV_ARR) {
		rc = json_object_array_add(top->j, v);
	} else {
		/* a PAIR: its value goes into the object above it */
		struct level *obj = &f->st[f->depth - 2];

		rc = json_object_object_add(obj->j, top->jname ? top->jname : "", v);
	}
	if (rc < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *json_hex(const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t m = n < JSON_BINARY_MAX ? n : JSON_BINARY_MAX;
	char *s = malloc(m * 2 + 32);
	struct json_object *j;
	size_t o = 0;

	if (!s)
		return NULL;
	for (size_t i = 0; i < m; i++) {
		s[o++] = hx[p[i] >> 4];
		s[o++] = hx[p[i] & 15];
	}
	if (m < n)
		o += (size_t)snprintf(s + o, 32, "...(%zu bytes)", n);
	j = json_object_new_string_len(s, (int)o);
	free(s);
	return j;
}

/* A value (OBJ_VALUE_TYPE already seen) under a PAIR or in an ARR. */
static int fm_value(struct fm *f, const struct nlattr *a, char *err,
		    size_t errlen)
{
	struct level *top = &f->st[f->depth - 1];
	const uint8_t *p = mnl_attr_get_payload(a);
	uint16_t n = mnl_attr_get_payload_len(a);
	size_t save = f->pathlen;
	struct json_object *j = NULL;
	uint64_t v = 0;
	int rc = 0, numeric = 0, width = CNT_W32, is_bool = 0;

	if (top->kind == LV_PAIR) {
		if (top->valued) {            /* a second value in one pair */
			if (f->d)
				f->d->unknown++;
			return 0;
		}
		top->valued = 1;
	} else if ((rc = path_index(f, top->next++, err, errlen)) < 0) {
		return rc;
	}
	switch (f->type) {
	case VT_U8:
	case VT_U16:
	case VT_U32:
	case VT_U64: {
		static const uint16_t sz[] = { 0, 1, 2, 4, 8 };
		uint16_t v16;
		uint32_t v32;

		if (n != sz[f->type]) {
			snprintf(err, errlen, "offset %zu: %s: value of %u bytes for type %u",
				 f->msg_off, f->path, n, f->type);
			rc = -EBADMSG;
			goto out;
		}
		if (n == 1) {
			v = p[0];
		} else if (n == 2) {
			memcpy(&v16, p, 2);
			v = v16;
		} else if (n == 4) {
			memcpy(&v32, p, 4);
			v = v32;
		} else {
			memcpy(&v, p, 8);
		}
		numeric = 1;
		width = n == 8 ? CNT_W64 : CNT_W32;
		break;
	}
	case VT_FLAG:
		if (n > 1) {
			snprintf(err, errlen, "offset %zu: %s: flag of %u bytes", f->msg_off,
				 f->path, n);
			rc = -EBADMSG;
			goto out;
		}
		v = n ? !!p[0] : 1;
		numeric = is_bool = 1;
		break;
	case VT_NUL_STRING:
		if (!n || p[n - 1] != '\0') {
			snprintf(err, errlen, "offset %zu: %s: string not NUL-terminated",
				 f->msg_off, f->path);
			rc = -EBADMSG;
			goto out;
		}
		/* fallthrough */
	case VT_STRING: {
		size_t sl = strnlen((const char *)p, n);

		rc = add_text(f, f->path, (const char *)p, sl);
		if (!rc && f->want_tree) {
			char *c = util_utf8_clean((const char *)p, sl);

			j = c ? json_object_new_string(c) : NULL;
			free(c);
			rc = json_place(f, j);
		}
		goto out;
	}
	case VT_BINARY:
		if (f->d)
			f->d->binary++;
		if (f->want_tree)
			rc = json_place(f, json_hex(p, n));
		goto out;
	default:
		if (f->d)
			f->d->unknown++;
		if (f->want_tree)
			rc = json_place(f, json_object_new_string("(value of unknown type)"));
		goto out;
	}
	if (numeric) {
		rc = add_value(f, f->path, v, (uint8_t)width);
		if (!rc && f->want_tree)
			rc = json_place(f, is_bool ? json_object_new_boolean((json_bool)v) :
					json_object_new_uint64(v));
	}
out:
	path_cut(f, save);
	return rc;
}

static int fm_push(struct fm *f, uint8_t kind, char *err, size_t errlen)
{
	struct level *l;
	int rc;

	if (f->depth >= DLH_FMSG_DEPTH) {
		snprintf(err, errlen, "offset %zu: fmsg nested deeper than %u", f->msg_off,
			 DLH_FMSG_DEPTH);
		return -EBADMSG;
	}
	l = &f->st[f->depth];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->pathlen = f->pathlen;
	if (kind == LV_PAIR) {
		f->depth++;
		return 0;
	}
	/* an object or array: a pair's value, an array item, or the root */
	if (f->depth && f->st[f->depth - 1].kind == LV_ARR &&
	    (rc = path_index(f, f->st[f->depth - 1].next++, err, errlen)) < 0)
		return rc;
	if (f->depth && f->st[f->depth - 1].kind == LV_PAIR)
		f->st[f->depth - 1].valued = 1;
	if (f->want_tree) {
		struct json_object *j = kind == LV_OBJ ? json_object_new_object() :
				       json_object_new_array();

		if (!j)
			return -ENOMEM;
		if (!f->depth) {
			f->root = j;
		} else if ((rc = json_place(f, j)) < 0) {
			return rc;
		}
		l->j = j;
	}
	f->depth++;
	return 0;
}

static int fm_token(struct fm *f, const struct nlattr *a, char *err,
		    size_t errlen)
{
	uint16_t t = mnl_attr_get_type(a);
	struct level *top = f->depth ? &f->st[f->depth - 1] : NULL;
	int rc;

	if (t == DEVLINK_ATTR_PAD)
		return 0;
	if (f->finished) {
		snprintf(err, errlen, "offset %zu: fmsg attribute %u after the end", f->msg_off, t);
		return -EBADMSG;
	}
	if (!f->started && t != DEVLINK_ATTR_FMSG_OBJ_NEST_START) {
		snprintf(err, errlen, "offset %zu: fmsg starts with attribute %u, not an object",
			 f->msg_off, t);
		return -EBADMSG;
	}
	/* devlink_fmsg_prepare_skb puts OBJ_VALUE_TYPE and then the data; when
	 * the data no longer fits, the type stays at the end of the part and
	 * the next part starts with the same item again, type first. */
	if (f->have_type && t != DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA &&
	    !(f->part_start && t == DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE)) {
		snprintf(err, errlen, "offset %zu: fmsg value type without data", f->msg_off);
		return -EBADMSG;
	}
	f->part_start = 0;
	switch (t) {
	case DEVLINK_ATTR_FMSG_OBJ_NEST_START:
		if (f->started && !((top->kind == LV_PAIR && top->named && !top->valued) ||
				    top->kind == LV_ARR))
			goto misplaced;
		f->started = 1;
		return fm_push(f, LV_OBJ, err, errlen);
	case DEVLINK_ATTR_FMSG_PAIR_NEST_START:
		if (top->kind != LV_OBJ)
			goto misplaced;
		return fm_push(f, LV_PAIR, err, errlen);
	case DEVLINK_ATTR_FMSG_ARR_NEST_START:
		if (!((top->kind == LV_PAIR && top->named && !top->valued) ||
		      top->kind == LV_ARR))
			goto misplaced;
		return fm_push(f, LV_ARR, err, errlen);
	case DEVLINK_ATTR_FMSG_NEST_END:
		if (top->kind == LV_PAIR && !top->named)
			goto misplaced;
		free(top->jname);
		top->jname = NULL;
		path_cut(f, top->pathlen);
		f->depth--;
		if (!f->depth)
			f->finished = 1;
		return 0;
	case DEVLINK_ATTR_FMSG_OBJ_NAME: {
		const char *s;
		size_t n;

		if (top->kind != LV_PAIR || top->named)
			goto misplaced;
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0) {
			snprintf(err, errlen, "offset %zu: fmsg name not a string", f->msg_off);
			return -EBADMSG;
		}
		s = mnl_attr_get_str(a);
		n = strlen(s);
		top->named = 1;
		if (f->want_tree && !(top->jname = util_utf8_clean(s, n)))
			return -ENOMEM;
		if (collapsed(f, s))
			return 0;
		return path_push(f, s, n, err, errlen);
	}
	case DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE:
		if (!((top->kind == LV_PAIR && top->named) || top->kind == LV_ARR))
			goto misplaced;
		if (mnl_attr_validate(a, MNL_TYPE_U8) < 0 || mnl_attr_get_payload_len(a) != 1) {
			snprintf(err, errlen, "offset %zu: fmsg value type not a u8", f->msg_off);
			return -EBADMSG;
		}
		f->type = mnl_attr_get_u8(a);
		f->have_type = 1;
		return 0;
	case DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA:
		if (!f->have_type) {
			snprintf(err, errlen, "offset %zu: fmsg value without a type", f->msg_off);
			return -EBADMSG;
		}
		f->have_type = 0;
		rc = fm_value(f, a, err, errlen);
		return rc;
	default:
		if (f->d)
			f->d->unknown++;      /* a newer kernel's token: skip it */
		return 0;
	}
misplaced:
	snprintf(err, errlen, "offset %zu: fmsg attribute %u out of place (depth %u)",
		 f->msg_off, t, f->depth);
	return -EBADMSG;
}

static void fm_cleanup(struct fm *f)
{
	for (unsigned i = 0; i < DLH_FMSG_DEPTH; i++) {
		free(f->st[i].jname);
		f->st[i].jname = NULL;
	}
	free(f->hash);
	f->hash = NULL;
}

int dlh_parse_fmsg(const struct dlh_reply *r, uint16_t family, uint8_t cmd,
		   const char *rep, struct dlh_diag *d,
		   struct json_object **tree, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh;
	struct fm f;
	char scratch[8];
	size_t off;
	int rc = 0;

	ERRBUF(err, errlen, scratch);
	if (tree)
		*tree = NULL;
	if (d)
		memset(d, 0, sizeof(*d));
	if (!r || !rep || !dlh_i_good_token(rep)) {
		snprintf(err, errlen, "%s", strerror(EINVAL));
		return -EINVAL;
	}
	memset(&f, 0, sizeof(f));
	f.rep = rep;
	f.d = d;
	f.want_tree = tree != NULL;
	f.pathlen = (size_t)snprintf(f.path, sizeof(f.path), "devlink/%s", rep);
	if (d && !(f.hash = calloc(HSLOTS, sizeof(*f.hash)))) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	dlh_reply_for_each(r, nlh, off) {
		const struct nlattr *tb[DLH_ATTR_MAX + 1] = { 0 };
		const struct nlattr *a;

		f.msg_off = off;
		if (!dlh_i_msg_check(nlh, r->len - off, family, cmd, "fmsg reply", err, errlen)) {
			rc = -EBADMSG;
			goto fail;
		}
		if ((rc = dlh_i_parse_top(nlh, tb, "fmsg reply", err, errlen)) < 0)
			goto fail;
		if (!tb[DEVLINK_ATTR_FMSG]) {
			snprintf(err, errlen, "offset %zu: reply part without DEVLINK_ATTR_FMSG", off);
			rc = -EBADMSG;
			goto fail;
		}
		f.part_start = 1;
		mnl_attr_for_each_nested(a, tb[DEVLINK_ATTR_FMSG]) {
			if ((rc = fm_token(&f, a, err, errlen)) < 0)
				goto fail;
		}
	}
	if (!f.finished) {
		snprintf(err, errlen, "fmsg %s (%u messages, %zu bytes)",
			 f.started ? "ends inside a nest: truncated reply" : "is empty",
			 r->nmsg, r->len);
		rc = -EBADMSG;
		goto fail;
	}
	fm_cleanup(&f);
	if (tree)
		*tree = f.root;
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	fm_cleanup(&f);
	json_object_put(f.root);
	if (d)
		dlh_diag_free(d);
	return rc;
}

