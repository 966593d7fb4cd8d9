/* signal_use: which signals a profile has and which counters they read,
 * so a peer daemon can send the counters that matter and the values it
 * reckoned (daemon/forensic/peersnap.c), not all of a card's hundreds. */
#include "rules/rules_int.h"

#include <fnmatch.h>
#include <string.h>

#include "lib/json.h"


/* Is name the first signal of that name in r (each name once)? */
static int first_of_name(const struct rules *r, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(r->sigs[k]->name, r->sigs[i]->name))
			return 0;
	return 1;
}

void rules_signals_each(const struct rules *r, const char *profile,
			void (*cb)(const char *name, void *arg), void *arg)
{
	for (size_t i = 0; r && i < r->nsigs; i++)
		if (first_of_name(r, i) && rl_sig_find(r, profile, r->sigs[i]->name))
			cb(r->sigs[i]->name, arg);
}

struct reads {
	const struct rules *r;
	const char *profile;
	struct json_object *counters;
	void (*cb)(const char *counter, struct json_object *value, void *arg);
	void *arg;
};

static void walk(struct reads *rd, const struct node *n, int depth)
{
	struct json_object *v;

	if (!n || depth > MAX_EDEPTH)
		return;
	switch (n->k) {
	case N_COUNTER:
		if ((v = jx_get(rd->counters, n->str)))
			rd->cb(n->str, v, rd->arg);
		return;
	case N_SUMGLOB:
		if (json_object_is_type(rd->counters, json_type_object)) {
			json_object_object_foreach(rd->counters, k, cv) {
				if (!fnmatch(n->str, k, 0))
					rd->cb(k, cv, rd->arg);
			}
		}
		return;
	case N_SIGREF: {
		const struct signal *sg = rl_sig_find(rd->r, rd->profile, n->str);

		walk(rd, sg ? sg->e : NULL, depth + 1);
		return;
	}
	default:
		walk(rd, n->a, depth + 1);
		walk(rd, n->b, depth + 1);
	}
}

void rules_signal_reads(const struct rules *r, const char *profile, struct json_object *counters,
			void (*cb)(const char *counter, struct json_object *value, void *arg),
			void *arg)
{
	struct reads rd = { r, profile, counters, cb, arg };

	for (size_t i = 0; r && i < r->nsigs; i++) {
		const struct signal *s;

		if (!first_of_name(r, i) || !(s = rl_sig_find(r, profile, r->sigs[i]->name)))
			continue;
		walk(&rd, s->e, 0);
	}
}
