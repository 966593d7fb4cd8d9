/* tree: the parsed form of the rules (rules_int.h), the tables of the
 * language's names, and freeing. */
#include "rules/rules_int.h"

#include <stdlib.h>
#include <string.h>

#include "rules/facts.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *const rl_per_name[P_N] = { FK_PER_STALL, FK_PER_WINDOW, FK_PER_BASELINE, FK_PER_HELD };
const char *const rl_dom_name[] = { "", "thread", "flow", "ping", "capture", "port", "peer", "onload", "rank", "" };

const struct rl_fact_name rl_facts_tab[] = {
	{ "port", F_PORT }, { "profile", F_PROFILE }, { "driver", F_DRIVER },
	{ "firmware", F_FIRMWARE }, { "psid", F_PSID }, { "link_up", F_LINK_UP },
	{ "held", F_HELD }, { "held.unsent", F_HELD_UNSENT },
	{ "held.unread", F_HELD_UNREAD }, { "held.staged", F_HELD_STAGED },
	{ "flows.stalled", F_FLOWS_STALLED }, { "flows.progressing", F_FLOWS_PROGRESSING },
	{ "flows.retrans", F_FLOWS_RETRANS },
	{ "ping.ok", F_PING_OK }, { "ping.count", F_PING_COUNT },
	{ "capture.count", F_CAPTURE_COUNT },
	{ "release.released", F_RELEASED }, { "release.action", F_RELEASE_ACTION },
	{ "release.after_ms", F_RELEASE_AFTER_MS },
	{ "ping_mtu.ok", F_PM_OK }, { "ping_mtu.from", F_PM_FROM }, { "ping_mtu.to", F_PM_TO },
	{ "ping_mtu.size", F_PM_SIZE }, { "ping_mtu.small_size", F_PM_SMALL },
	{ "ping_mtu.sent", F_PM_SENT }, { "ping_mtu.received", F_PM_RECEIVED },
	{ "ping_mtu.error", F_PM_ERROR },
};
const size_t rl_nfacts = N_OF(rl_facts_tab);

const struct rl_field_name rl_fields_tab[] = {
	{ D_THREAD, FK_T_PID, 0 }, { D_THREAD, FK_T_TID, 0 }, { D_THREAD, FK_T_COMM, 0 },
	{ D_THREAD, FK_T_STATE, 0 }, { D_THREAD, FK_T_WCHAN, 0 }, { D_THREAD, FK_T_STACK, 0 },
	{ D_THREAD, FK_T_SYSCALL, 0 }, { D_THREAD, FK_T_VCSW_RATE, 0 },
	{ D_THREAD, FK_T_NVCSW_RATE, 0 }, { D_THREAD, FK_T_ROLE, 0 },
	{ D_THREAD, FK_T_WAIT_MS, 0 }, { D_THREAD, FK_T_OFF_CPU_PCT, 0 },
	{ D_THREAD, FK_T_OFF_CPU_MS, 0 }, { D_THREAD, FK_T_PREEMPTED_MS, 0 },
	{ D_THREAD, FK_T_VCSW, 0 }, { D_THREAD, FK_T_IVCSW, 0 }, { D_THREAD, FK_T_VCSW_PER_S, 0 },
	{ D_THREAD, FK_T_SLEEP_US, 0 }, { D_THREAD, FK_T_SLEEP_FUNC, 0 },
	{ D_THREAD, FK_T_STACK_AT_SLEEP, 0 }, { D_THREAD, FK_T_SLEEP_NOW_MS, 0 },
	{ D_THREAD, FK_T_WATCH, 0 }, { D_THREAD, FK_T_CALLED, 0 },
	{ D_THREAD, FK_T_IN_SYSCALL, 0 }, { D_THREAD, FK_T_IN_SYSCALL_MS, 0 },
	{ D_FLOW, FK_FL_TUPLE, 0 }, { D_FLOW, FK_FL_SRC, 0 }, { D_FLOW, FK_FL_WAITED_MS, 0 },
	{ D_FLOW, FK_H_UNSENT, 0 }, { D_FLOW, FK_H_UNREAD, 0 }, { D_FLOW, FK_H_STAGED, 0 },
	{ D_FLOW, FK_FL_PEER, 0 },
	{ D_PING, FK_PG_FROM, 0 }, { D_PING, FK_PG_TO, 0 }, { D_PING, FK_PG_SENT, 1 },
	{ D_PING, FK_PG_RECEIVED, 1 },
	{ D_CAPTURE, FK_C_PORT, 0 }, { D_CAPTURE, FK_C_PROMISC, 0 },
	{ D_CAPTURE, FK_C_FRAMES, 1 }, { D_CAPTURE, FK_C_TRANSITION, 0 },
	{ D_PORT, "name", 0 }, { D_PORT, FK_P_PROFILE, 0 }, { D_PORT, FK_P_DRIVER, 0 },
	{ D_PORT, FK_P_FIRMWARE, 0 }, { D_PORT, FK_P_PSID, 0 }, { D_PORT, FK_P_LINK_UP, 0 },
	{ D_PORT, FK_P_MTU, 0 }, { D_PORT, FK_P_PFC_PREVENTION, 0 }, { D_PORT, FK_P_OVERSIZE_SIZES, 0 }, { D_PORT, FK_P_LINK_EVENTS, 0 },
	{ D_PEER, "name", 0 }, { D_PEER, FK_PE_HOST, 0 }, { D_PEER, FK_PE_NOTIFIED, 0 },
	{ D_PEER, FK_PE_ANSWERED, 0 }, { D_PEER, FK_PE_RTT_MS, 0 }, { D_PEER, FK_PE_BUNDLE, 0 },
	{ D_PEER, FK_PE_ERROR, 0 }, { D_PEER, FK_PE_FLOWS_TOTAL, 0 },
	{ D_PEER, FK_PE_FLOWS_STALLED, 0 }, { D_PEER, FK_PE_FLOWS_WAITING, 0 },
	{ D_PEER, FK_PE_OTHER_END, 0 },
#define OL_CNT(n) { D_ONLOAD, n, 0 }, { D_ONLOAD, n "_before", 0 }, { D_ONLOAD, n "_after", 0 }, \
	{ D_ONLOAD, n "_rise", 0 },
#define OL_LVL(n) { D_ONLOAD, n, 0 }, { D_ONLOAD, n "_before", 0 }, { D_ONLOAD, n "_after", 0 },
#define OL_OPT(n, ef) { D_ONLOAD, n, 0 },
	{ D_ONLOAD, FK_O_STACK, 0 }, { D_ONLOAD, FK_O_NAME, 0 }, { D_ONLOAD, FK_O_PID, 0 },
	{ D_ONLOAD, FK_O_DUMPS, 0 }, { D_ONLOAD, FK_O_SPAN_MS, 0 },
	{ D_ONLOAD, FK_O_BEFORE_AGE_MS, 0 }, { D_ONLOAD, FK_O_FREE_MIN, 0 },
	FK_ONLOAD_COUNTERS(OL_CNT) FK_ONLOAD_LEVELS(OL_LVL) FK_ONLOAD_OPTS(OL_OPT)
#define RK_FIELD(n) { D_RANK, n, 0 },
	{ D_RANK, FK_RK_NAME, 0 }, { D_RANK, FK_RK_SELF, 0 }, { D_RANK, FK_RK_ANSWERED, 0 },
	FK_HOST_NUMS(RK_FIELD) FK_HOST_STRS(RK_FIELD)
#undef RK_FIELD
#undef OL_CNT
#undef OL_LVL
#undef OL_OPT
};
const size_t rl_nfields = N_OF(rl_fields_tab);

const struct rl_fn_name rl_fns_tab[] = {
	{ "any", FN_ANY, 1, 1, 1 }, { "all", FN_ALL, 1, 1, 1 },
	{ "count", FN_COUNT, 1, 1, 1 }, { "first", FN_FIRST, 2, 2, 1 },
	{ "sumof", FN_SUMOF, 1, 1, 1 }, { "maxof", FN_MAXOF, 1, 1, 1 },
	{ "minof", FN_MINOF, 1, 1, 1 },
	{ "rate", FN_RATE, 1, 1, 0 }, { "baseline_rate", FN_BRATE, 1, 1, 0 },
	{ "known", FN_KNOWN, 1, 1, 0 }, { "default", FN_DEFAULT, 2, 2, 0 },
	{ "abs", FN_ABS, 1, 1, 0 }, { "round", FN_ROUND, 1, 1, 0 }, { "min", FN_MIN, 2, 2, 0 }, { "max", FN_MAX, 2, 2, 0 },
	{ "join", FN_JOIN, 2, 2, 1 }, { "if", FN_IF, 3, 3, 0 },
};
const size_t rl_nfns = N_OF(rl_fns_tab);

int rl_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	while (nc < need)
		nc *= 2;
	p = realloc(*arr, nc * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = nc;
	return 0;
}

void rl_node_free(struct node *n)
{
	if (!n)
		return;
	rl_node_free(n->a);
	rl_node_free(n->b);
	for (unsigned i = 0; i < n->nargs; i++)
		rl_node_free(n->args[i]);
	free(n->args);
	free(n->str);
	free(n->peer);
	free(n->text);
	free(n);
}

void rl_tmpl_free(struct tmpl *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		free(t->p[i].lit);
		rl_node_free(t->p[i].e);
	}
	free(t->p);
	t->p = NULL;
	t->n = 0;
}

void rl_rule_free(struct rule *ru)
{
	if (!ru)
		return;
	for (unsigned i = 0; i < ru->nlet; i++) {
		free(ru->letname[i]);
		rl_node_free(ru->letexpr[i]);
	}
	free(ru->letname);
	free(ru->letexpr);
	for (unsigned i = 0; i < ru->nterm; i++)
		rl_node_free(ru->terms[i]);
	free(ru->terms);
	rl_tmpl_free(&ru->explain);
	rl_tmpl_free(&ru->action);
	rl_tmpl_free(&ru->ruled_out);
	free(ru->name);
	free(ru->verdict);
	free(ru);
}

void rl_signal_free(struct signal *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->profile);
	rl_node_free(s->e);
	free(s);
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrules; i++)
		rl_rule_free(r->rules[i]);
	free(r->rules);
	for (size_t i = 0; i < r->nsigs; i++)
		rl_signal_free(r->sigs[i]);
	free(r->sigs);
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	for (size_t i = 0; i < r->nuses; i++)
		free(r->uses[i].name);
	free(r->uses);
	free(r);
}

int rl_peer_reserved(const char *name)
{
	for (int p = 0; p < P_N; p++)
		if (!strcmp(name, rl_per_name[p]))
			return 1;
	for (size_t i = 0; i < rl_nfields; i++)
		if (rl_fields_tab[i].d == D_PEER && !strcmp(name, rl_fields_tab[i].name))
			return 1;
	return !strcmp(name, FK_SPAN_S) || !strcmp(name, FK_PE_PORTS) || !strcmp(name, "flows");
}

int rules_peer_name_ok(const char *name)
{
	return !rl_peer_reserved(name);
}

size_t rules_count(const struct rules *r)
{
	return r ? r->nrules : 0;
}

const char *rl_keep_string(struct rules *r, const char *s)
{
	char *c = strdup(s);
	char **f;

	if (!c)
		return NULL;
	f = realloc(r->files, (r->nfiles + 1) * sizeof(*f));
	if (!f) {
		free(c);
		return NULL;
	}
	r->files = f;
	r->files[r->nfiles++] = c;
	return c;
}

int rl_signal_known(const struct rules *r, const char *name)
{
	for (size_t i = 0; i < r->nsigs; i++)
		if (!strcmp(r->sigs[i]->name, name))
			return 1;
	return 0;
}
