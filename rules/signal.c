/* signal: the value of a signal (a per-profile sum over counters) in one
 * period's counters; a counter that is not there counts 0, and a signal
 * none of whose counters is there is unknown. */
#include "rules/rules_int.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

const struct signal *rl_sig_find(const struct rules *r, const char *profile, const char *name)
{
	const struct signal *g = NULL;

	for (size_t i = 0; i < r->nsigs; i++) {
		if (strcmp(r->sigs[i]->name, name))
			continue;
		if (profile && !strcmp(r->sigs[i]->profile, profile))
			return r->sigs[i];
		if (!strcmp(r->sigs[i]->profile, "generic"))
			g = r->sigs[i];
	}
	return g;
}

struct sx {
	const struct rules *r;
	const char *profile;
	struct json_object *counters;
	unsigned nleaf, nmiss;
	int depth;
	struct arena *ar;
};

static struct val sx_eval(struct sx *s, const struct node *n)
{
	struct json_object *j;
	double d;

	if (!n)
		return v_unk("no expression");
	switch (n->k) {
	case N_NUM:
		return v_num(n->num);
	case N_COUNTER:
		s->nleaf++;
		if (jx_num((j = jx_get(s->counters, n->str)), &d))
			return v_num(d);
		s->nmiss++;
		return v_num(0);
	case N_SUMGLOB: {
		double sum = 0;
		int found = 0;

		s->nleaf++;
		if (s->counters && json_object_is_type(s->counters, json_type_object)) {
			json_object_object_foreach(s->counters, k, v) {
				if (!fnmatch(n->str, k, 0) && jx_num(v, &d)) {
					sum += d;
					found = 1;
				}
			}
		}
		if (!found)
			s->nmiss++;
		return v_num(sum);
	}
	case N_WHICHGLOB: {
		/* the number in the name of the matching counter that moved
		 * most (rx3_recover: 3); ties go to the lower number */
		double best = 0, idx = 0;
		int found = 0, moved = 0;

		s->nleaf++;
		if (s->counters && json_object_is_type(s->counters, json_type_object)) {
			json_object_object_foreach(s->counters, k, v) {
				const char *dg = k;
				double num;

				if (fnmatch(n->str, k, 0) || !jx_num(v, &d))
					continue;
				found = 1;
				while (*dg && !isdigit((unsigned char)*dg))
					dg++;
				if (!*dg || d <= 0)
					continue;
				num = strtod(dg, NULL);
				if (!moved || d > best || (d == best && num < idx)) {
					best = d;
					idx = num;
					moved = 1;
				}
			}
		}
		if (!found) {
			s->nmiss++;
			return v_num(0);
		}
		return moved ? v_num(idx) : v_unk(rl_afmt(s->ar, "no counter of %s moved", n->str));
	}
	case N_SIGREF:
		return rl_sig_value(s->r, s->profile, n->str, s->counters, s->depth + 1, s->ar);
	case N_UN:
		if (n->op == O_NEG) {
			struct val a = sx_eval(s, n->a);

			return a.t == V_NUM ? v_num(-a.n) : a;
		}
		return v_unk("bad operator in a signal");
	case N_BIN:
		return rl_arith(n->op, sx_eval(s, n->a), sx_eval(s, n->b));
	default:
		return v_unk("bad node in a signal");
	}
}

struct val rl_sig_value(const struct rules *r, const char *profile, const char *name,
			struct json_object *counters, int depth, struct arena *ar)
{
	const struct signal *sg = rl_sig_find(r, profile, name);
	struct sx s = { .r = r, .profile = profile, .counters = counters, .depth = depth, .ar = ar };
	struct val v;

	if (!sg)
		return v_unk(rl_afmt(ar, "no signal %s for profile %s", name, profile ? profile : "?"));
	if (depth > MAX_EDEPTH)
		return v_unk(rl_afmt(ar, "signal %s refers to itself", name));
	if (!counters || !json_object_is_type(counters, json_type_object))
		return v_unk("counters missing");
	v = sx_eval(&s, sg->e);
	if (v.t == V_UNK)
		return v;
	if (s.nleaf && s.nmiss == s.nleaf)
		return v_unk(rl_afmt(ar, "none of the counters of %s (profile %s) is there",
				     name, sg->profile));
	return v;
}

