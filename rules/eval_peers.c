/* eval_peers: the peer daemons' facts (rules/facts.h FK_PEERS) for the
 * evaluator: peer.FIELD and peer.P.SIGNAL of the peer item a quantifier
 * is at, or of the peer peer.NAME.X names. A peer that did not answer has
 * no numbers: its periods are unknown ("peer rank3 did not answer"),
 * never zero. */
#include "rules/rules_int.h"

#include <string.h>

#include "lib/json.h"
#include "rules/facts.h"

/* The peer object n speaks of, its name in *name; NULL with why. */
static struct json_object *peer_of(struct ectx *c, const struct node *n, const char **name,
				   const char **why)
{
	struct json_object *p;

	if (n->peer) {
		p = jx_get(jx_get(c->facts, FK_PEERS), n->peer);
		*name = n->peer;
		if (!p) {
			*why = rl_afmt(c->ar, "no peer %s in the facts", n->peer);
			return NULL;
		}
	} else {
		if (c->dom != D_PEER) {
			*why = "peer.* outside a quantifier";
			return NULL;
		}
		p = c->item;
		*name = c->iname ? c->iname : "?";
	}
	if (!json_object_is_type(p, json_type_object)) {
		*why = rl_afmt(c->ar, "peer %s is not an object", *name);
		return NULL;
	}
	return p;
}

struct val rl_peer_field(struct ectx *c, const struct node *n)
{
	const char *name, *why = "no peer";
	struct json_object *p = peer_of(c, n, &name, &why), *v;
	double d;

	if (!p)
		return v_unk(why);
	if (!strcmp(n->str, "name"))
		return v_str(name);
	v = jx_get(p, n->str);
	if (!v)
		return v_unk(rl_afmt(c->ar, FK_PEERS ".%s.%s missing", name, n->str));
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		return v_bool(json_object_get_boolean(v));
	case json_type_string:
		return v_str(json_object_get_string(v));
	case json_type_int:
	case json_type_double:
		if (jx_num(v, &d))
			return v_num(d);
		/* FALLTHROUGH */
	default:
		return v_unk(rl_afmt(c->ar, FK_PEERS ".%s.%s has the wrong type", name, n->str));
	}
}

/* A signal over one port's period: from its counters with the rules'
 * signal of the port's profile, else the value the peer reckoned. */
static struct val port_sig(struct ectx *c, struct json_object *per, const char *profile,
			   const char *sig)
{
	struct json_object *counters = jx_obj(per, FK_COUNTERS);
	struct val v = counters ? rl_sig_value(c->r, profile, sig, counters, c->depth, c->ar) :
			 v_unk("no counters");
	double d;

	if (v.t == V_UNK && jx_num(jx_get(jx_obj(per, FK_PE_SIGNALS), sig), &d))
		return v_num(d);
	return v;
}

/* peer.P.SIGNAL: the sum over the peer's ports (each port's own profile),
 * unknown when no port has it; peer.P.span_s: the longest of them. */
struct val rl_peer_period(struct ectx *c, const struct node *n)
{
	const char *name, *why = "no peer", *per = rl_per_name[n->per];
	struct json_object *p = peer_of(c, n, &name, &why), *ports;
	const char *first_why = NULL;
	double sum = 0, span = -1, d;
	unsigned known = 0, k = 0;

	if (!p)
		return v_unk(why);
	if (!jx_bool(p, FK_PE_ANSWERED))
		return v_unk(rl_afmt(c->ar, "peer %s did not answer", name));
	ports = jx_obj(p, FK_PE_PORTS);
	if (!ports || !json_object_object_length(ports))
		return v_unk(rl_afmt(c->ar, "peer %s reported no port", name));
	json_object_object_foreach(ports, pname, po) {
		struct json_object *pj = jx_obj(po, per);
		const char *profile = jx_str(po, FK_P_PROFILE);
		struct val v;

		if (k++ >= MAX_ITEMS)
			break;
		if (!pj) {
			if (!first_why)
				first_why = rl_afmt(c->ar, "peer %s port %s: %s missing", name, pname, per);
			continue;
		}
		if (n->span) {
			if (jx_num(jx_get(pj, FK_SPAN_S), &d) && d >= 0 && d > span)
				span = d;
			continue;
		}
		v = port_sig(c, pj, profile ? profile : "generic", n->str);
		if (v.t != V_NUM) {
			if (!first_why)
				first_why = rl_afmt(c->ar, "peer %s port %s: %s.%s: %s", name, pname, per,
						    n->str, v.t == V_UNK ? v.why : "not a number");
			continue;
		}
		sum += v.n;
		known++;
	}
	if (n->span)
		return span >= 0 ? v_num(span) :
		       v_unk(first_why ? first_why : rl_afmt(c->ar, "peer %s: no %s span", name, per));
	if (!known)
		return v_unk(first_why ? first_why : rl_afmt(c->ar, "peer %s: no %s.%s", name, per,
							     n->str));
	return v_num(sum);
}
