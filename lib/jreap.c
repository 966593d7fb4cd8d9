/* jreap: JSON documents dropped a part per loop turn. See jreap.h. */
#include "lib/jreap.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "lib/loop.h"

struct jreap {
	struct loop_timer *t;
	struct json_object *q[JREAP_MAX];  /* oldest first */
	unsigned n;
};

/* Members of a container (0: none, or no container). */
static size_t nmembers(struct json_object *o)
{
	if (json_object_is_type(o, json_type_object))
		return (size_t)json_object_object_length(o);
	if (json_object_is_type(o, json_type_array))
		return json_object_array_length(o);
	return 0;
}

/* One value of the document dropped: 1, or 0 when the document has no
 * member left. Down the first path (an object's first entry, an array's
 * last element: none moves) to the first member that has no members of
 * its own, which is removed from its container (lh_table_delete_entry:
 * its key freed, its value put): a step frees one value whatever the
 * document's shape, not a whole member. */
static int drop_one(struct json_object *doc)
{
	struct json_object *o = doc;

	if (!nmembers(doc))
		return 0;
	for (;;) {
		struct lh_table *h = NULL;
		struct lh_entry *e = NULL;
		struct json_object *m;
		size_t last = 0;

		if (json_object_is_type(o, json_type_object)) {
			h = json_object_get_object(o);
			e = lh_table_head(h);
			m = (struct json_object *)lh_entry_v(e);
		} else {
			last = json_object_array_length(o) - 1;
			m = json_object_array_get_idx(o, last);
		}
		if (nmembers(m)) {
			o = m;
			continue;
		}
		if (h)
			lh_table_delete_entry(h, e);
		else
			json_object_array_del_idx(o, last, 1);
		return 1;
	}
}

static void jreap_turn(struct loop_timer *t, void *arg)
{
	struct jreap *r = arg;
	uint64_t until = loop_mono_ns() + JREAP_SLICE_NS;
	unsigned n = 0;

	while (r->n) {
		if (!drop_one(r->q[0])) {
			json_object_put(r->q[0]);
			memmove(r->q, r->q + 1, --r->n * sizeof(r->q[0]));
		}
		/* the clock every 32 values: a value is some tens of ns */
		if (!(++n & 31) && loop_mono_ns() >= until)
			break;
	}
	if (r->n)
		loop_timer_set(t, 1, 0);
}

struct jreap *jreap_new(struct loop *l, const char *name)
{
	struct jreap *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->t = loop_timer_new(l, jreap_turn, r);
	if (!r->t) {
		free(r);
		return NULL;
	}
	if (name)
		loop_timer_name(r->t, name);
	return r;
}

void jreap_put(struct jreap *r, struct json_object *o)
{
	if (!o)
		return;
	if (!r || r->n == JREAP_MAX || loop_timer_set(r->t, 1, 0) < 0) {
		json_object_put(o);
		return;
	}
	r->q[r->n++] = o;
}

unsigned jreap_pending(const struct jreap *r)
{
	return r ? r->n : 0;
}

void jreap_free(struct jreap *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++)
		json_object_put(r->q[i]);
	loop_timer_free(r->t);
	free(r);
}
