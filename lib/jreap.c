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

/* One member of o removed: 1, or 0 when o has none left (a value that is
 * neither object nor array has no members). Objects from the head of
 * json-c's entry list (lh_table_delete_entry: the key freed, the value
 * put), arrays from their end (no element moved). */
static int drop_member(struct json_object *o)
{
	if (json_object_is_type(o, json_type_object)) {
		struct lh_table *h = json_object_get_object(o);

		if (!h || !h->head)
			return 0;
		lh_table_delete_entry(h, h->head);
		return 1;
	}
	if (json_object_is_type(o, json_type_array)) {
		size_t n = json_object_array_length(o);

		if (!n)
			return 0;
		json_object_array_del_idx(o, n - 1, 1);
		return 1;
	}
	return 0;
}

static void jreap_turn(struct loop_timer *t, void *arg)
{
	struct jreap *r = arg;
	uint64_t until = loop_mono_ns() + JREAP_SLICE_NS;

	while (r->n) {
		if (!drop_member(r->q[0])) {
			json_object_put(r->q[0]);
			memmove(r->q, r->q + 1, --r->n * sizeof(r->q[0]));
		}
		if (loop_mono_ns() >= until)
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
