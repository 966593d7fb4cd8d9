/* Unit tests: the flow sources are the rows of a table
 * (daemon/detect/flowsrcs.c, struct flowsrcs_row). A toy source added as a
 * row opens when a port's `track` names its word, with the poll interval
 * its row gives; its observations reach the detector at each poll; it
 * shows in `status` (under "readers" when its row says it reads an
 * unmodified engine, in the costs in any case) and gives its view of an
 * incident's flows as evidence; it closes when no port tracks it; a
 * source that cannot open says why. Adding a flow source is its
 * flow_src_ops and one row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/flows/flowsrc.h"
#include "coretest.h"
#include "nstest.h"
#include "daemon/conf.h"
#include "daemon/detect/flowsrcs.h"
#include "daemon/ports.h"
#include "lib/json.h"
#include "lib/loop.h"

/* ---- the toy: a host source of VMA-kind flows, two sessions ---- */

static unsigned toy_opens, toy_closes, toy_polls, toy_evidence;
static uint64_t toy_interval;           /* what its open was given */
static int toy_fail;                    /* its open fails with this (-errno) */

static int toy_open(struct flow_src *s, const struct flow_src_ctx *ctx)
{
	if (toy_fail) {
		snprintf(s->err, sizeof(s->err), "toy: no toy here");
		return toy_fail;
	}
	toy_interval = ctx->interval_ns;
	toy_opens++;
	return 0;
}

static struct flow_src_sched toy_sched;  /* what its last poll was given */

static int toy_poll(struct flow_src *s, flow_emit_fn emit, void *arg)
{
	toy_sched = s->sched;
	/* a source with nothing of its own: a refresh from now */
	s->sched.next_ns = flow_src_idle_next(s);
	toy_polls++;
	for (uint64_t i = 1; i <= 2; i++) {
		struct flow_obs o = coretest_engine_obs(41000 + i, i, 10 * toy_polls, 10 * toy_polls, 0);

		o.src = FLOW_SRC_VMA;
		emit(&o, arg);
	}
	return 2;
}

static void toy_status(const struct flow_src *s, struct json_object *out)
{
	(void)s;
	jx_add_int(out, "toy_polls", toy_polls);
}

static int toy_evid(struct flow_src *s, const struct flow_src_ref *refs, unsigned n,
		    const char *when, struct json_object *out, flow_src_evid_done_fn done,
		    void *arg)
{
	(void)s;
	(void)done;
	(void)arg;
	toy_evidence++;
	jx_add_str(out, "when", when);
	jx_add_int(out, "flows", n);
	jx_add_int(out, "first_session", (int64_t)refs[0].session);
	return 0;
}

static void toy_close(struct flow_src *s)
{
	(void)s;
	toy_closes++;
}

static const struct flow_src_ops toy_ops = {
	.name = "toy", .kind = FLOW_SRC_VMA, .host = 1,
	.open = toy_open, .poll = toy_poll, .status = toy_status,
	.evidence = toy_evid, .close = toy_close,
};

static uint64_t toy_row_interval(const struct conf *c, const struct port_conf *pc)
{
	(void)pc;
	return c->vma_ns + 7;   /* not any default: the row's own */
}

/* as a port's row: given the port's configuration only */
static uint64_t toy_port_interval(const struct conf *c, const struct port_conf *pc)
{
	(void)c;
	(void)pc;
	return 300000000ull;
}

static const struct flowsrcs_row toy_port_rows[] = {
	{ &toy_ops, TRACK_VMA, "toy flows", 0, toy_port_interval },
};

static const struct flowsrcs_row toy_rows[] = {
	{ &toy_ops, TRACK_VMA, "toy flows", FSR_READER, toy_row_interval },
};

struct seen {
	unsigned n;
	uint64_t session[8];
	char port[8][16];
};

static void collect(const struct flow_obs *o, const char *port, void *arg)
{
	struct seen *x = arg;

	if (x->n < 8) {
		x->session[x->n] = o->session;
		snprintf(x->port[x->n], sizeof(x->port[0]), "%s", port);
		x->n++;
	}
}

static void reset(void)
{
	toy_opens = toy_closes = toy_polls = toy_evidence = 0;
	toy_interval = 0;
	toy_fail = 0;
}

static const char *tracked =
	"[daemon]\nvma_interval = 300ms\n[port a]\nstats_file = /nonexistent/a\ntrack = vma\n";
static const char *untracked =
	"[daemon]\nvma_interval = 300ms\n[port a]\nstats_file = /nonexistent/a\ntrack = sock\n";

static struct json_object *status_of(struct flowsrcs *fs)
{
	struct json_object *o = json_object_new_object();

	flowsrcs_status(fs, o);
	return o;
}

/* A host source's flows may be any port's, and it asks for its polls by
 * the threshold it is given (a refresh from now: the engine tables'
 * ask): it is given the least threshold of any port, not the daemon's.
 * With the daemon's 1 s and a port's 200 ms, the poll comes 150 ms on,
 * not 950 ms. Fails flowsrcs polling its host sources with the daemon's
 * threshold (the detector's own refresh, by the least threshold, hid it
 * until the detector trusted its sources' asks). */
static void test_host_source_asks_by_the_least_threshold(void **state)
{
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c = coretest_conf("[daemon]\nstall_threshold = 1s\nflow_interval = 50ms\n"
				       "[port a]\nstats_file = /nonexistent/a\ntrack = vma\n"
				       "stall_threshold = 200ms\n"
				       "[port b]\nstats_file = /nonexistent/b\ntrack = vma\n");
	struct flowsrcs *fs;
	struct seen seen = { 0 };

	(void)state;
	reset();
	assert_non_null(c);
	fs = flowsrcs_new_with(l, ps, NULL, 0, toy_rows, 1);
	assert_non_null(fs);
	flowsrcs_configure(fs, c);
	flowsrcs_poll(fs, 1000000000ull, collect, &seen);
	assert_int_equal(toy_polls, 1);
	assert_int_equal(toy_sched.stall_ns, 200000000ull);
	assert_int_equal(toy_sched.refresh_ns, 150000000ull);
	assert_int_equal(flowsrcs_next_ns(fs), 1150000000ull);
	flowsrcs_free(fs);
	ports_free(ps);
	conf_free(c);
	loop_free(l);
}

static void test_toy_row_lives_with_the_track_word(void **state)
{
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c = coretest_conf(tracked), *c2 = coretest_conf(untracked);
	struct flowsrcs *fs;
	struct seen seen = { 0 };
	struct json_object *st, *o, *cost;
	int found = 0;

	(void)state;
	reset();
	assert_non_null(c);
	assert_non_null(c2);
	fs = flowsrcs_new_with(l, ps, NULL, 0, toy_rows, 1);
	assert_non_null(fs);

	/* opened by the port's track word, with its row's interval */
	flowsrcs_configure(fs, c);
	assert_int_equal(toy_opens, 1);
	assert_int_equal(toy_interval, c->vma_ns + 7);
	assert_true(flowsrcs_host_open(fs, FLOW_SRC_VMA));

	/* its observations reach the detector at each poll (no port owns
	 * their address here: "-") */
	flowsrcs_poll(fs, 1000000000ull, collect, &seen);
	flowsrcs_poll(fs, 1100000000ull, collect, &seen);
	assert_int_equal(toy_polls, 2);
	assert_int_equal(seen.n, 4);
	assert_int_equal(seen.session[0], 1);
	assert_int_equal(seen.session[1], 2);
	assert_string_equal(seen.port[0], "-");

	/* status: under "readers" by its row's flag, and its cost */
	st = status_of(fs);
	o = jx_get(jx_get(st, "readers"), "toy");
	assert_non_null(o);
	assert_string_equal(jx_str(o, "state"), "open");
	assert_int_equal((int)jx_double(o, "toy_polls", -1), 2);
	cost = jx_get(st, "cost");
	assert_non_null(cost);
	for (size_t i = 0; i < json_object_array_length(cost); i++) {
		struct json_object *e = json_object_array_get_idx(cost, i);

		if (!strcmp(jx_str(e, "source"), "toy")) {
			found = 1;
			assert_int_equal((int)jx_double(e, "flows", -1), 2);
		}
	}
	assert_true(found);
	/* no row says it holds the engine tables: an empty list, not a crash */
	assert_int_equal(json_object_array_length(jx_get(st, "tables")), 0);
	json_object_put(st);

	/* evidence: its view of an incident's flows of its kind */
	{
		struct flow_src_ref refs[] = { { FLOW_SRC_VMA, 2, 0 } };
		struct json_object *out = json_object_new_object();

		assert_int_equal(flowsrcs_evidence(fs, refs, 1, NULL, 0, "at_stall", out, NULL, NULL), 0);
		assert_int_equal(toy_evidence, 1);
		o = jx_get(out, "toy");
		assert_non_null(o);
		assert_string_equal(jx_str(o, "when"), "at_stall");
		assert_int_equal((int)jx_double(o, "first_session", -1), 2);
		json_object_put(out);
	}

	/* its name says its kind and that it reads an engine (the
	 * investigation's engine views, evid_flows.c) */
	{
		int reader = -1;

		assert_int_equal(flowsrcs_kind_of(fs, "toy", &reader), FLOW_SRC_VMA);
		assert_int_equal(reader, 1);
		assert_int_equal(flowsrcs_kind_of(fs, "vma", &reader), 0);   /* no such row */
		assert_int_equal(reader, 0);
		assert_int_equal(flowsrcs_kind_of(fs, NULL, &reader), 0);
	}

	/* no port tracks it any more: closed */
	flowsrcs_configure(fs, c2);
	assert_int_equal(toy_closes, 1);
	assert_false(flowsrcs_host_open(fs, FLOW_SRC_VMA));
	seen.n = 0;
	flowsrcs_poll(fs, 1200000000ull, collect, &seen);
	assert_int_equal(seen.n, 0);

	flowsrcs_free(fs);
	assert_int_equal(toy_closes, 1);
	conf_free(c);
	conf_free(c2);
	ports_free(ps);
	loop_free(l);
}

/* A port's sources open when the configuration is applied, not at the
 * first poll: their BPF loads (each parses the kernel's BTF) then come
 * before the thread watch, opened after them by stall_configure, reads
 * the kernel's symbol table, and the daemon's peak memory is one of
 * them, not both (bench/README.md, 7 December, night). Fails the
 * flowsrcs that opens a port's sources at its first poll. */
static void test_port_row_opens_at_configure(void **state)
{
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	char text[512], *dir = coretest_tmpdir();
	struct flowsrcs *fs;
	struct conf *c;
	int nsfd = nstest_make_netns();

	(void)state;
	reset();
	assert_true(nsfd >= 0);
	assert_int_equal(nstest_sh("nsenter --net=/proc/%d/fd/%d sh -c 'ip link add rw-a type "
				   "veth peer name rw-b && ip link set rw-a up'", (int)getpid(), nsfd), 0);
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_packets: 1\n");
	snprintf(text, sizeof(text), "[daemon]\nvma_interval = 300ms\n[port a]\n"
		 "stats_file = %s/a.txt\ninterface = rw-a\nnetns = /proc/%d/fd/%d\ntrack = vma\n",
		 dir, (int)getpid(), nsfd);
	c = coretest_conf(text);
	assert_non_null(c);
	ports_apply(ps, c, 0);
	fs = flowsrcs_new_with(l, ps, toy_port_rows, 1, NULL, 0);
	assert_non_null(fs);
	flowsrcs_configure(fs, c);
	assert_int_equal(toy_opens, 1);         /* no poll yet */
	assert_int_equal(toy_polls, 0);
	flowsrcs_free(fs);
	assert_int_equal(toy_closes, 1);
	ports_free(ps);
	conf_free(c);
	loop_free(l);
	close(nsfd);
	coretest_rmdir(dir);
}

/* A source that cannot open: unavailable in `status`, with its reason;
 * nothing is polled. */
static void test_toy_that_cannot_open(void **state)
{
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c = coretest_conf(tracked);
	struct flowsrcs *fs = flowsrcs_new_with(l, ps, NULL, 0, toy_rows, 1);
	struct seen seen = { 0 };
	struct json_object *st, *o;

	(void)state;
	reset();
	assert_non_null(fs);
	toy_fail = -ENOENT;
	flowsrcs_configure(fs, c);
	assert_int_equal(toy_opens, 0);
	flowsrcs_poll(fs, 1000000000ull, collect, &seen);
	assert_int_equal(toy_polls, 0);
	assert_int_equal(seen.n, 0);
	st = status_of(fs);
	o = jx_get(jx_get(st, "readers"), "toy");
	assert_non_null(o);
	assert_string_equal(jx_str(o, "state"), "unavailable");
	assert_string_equal(jx_str(o, "error"), "toy: no toy here");
	json_object_put(st);
	flowsrcs_free(fs);
	assert_int_equal(toy_closes, 0);
	conf_free(c);
	ports_free(ps);
	loop_free(l);
}

/* The same toy in a row without FSR_READER: polled and costed, but no
 * reader of an unmodified engine, so no "readers" entry and no evidence. */
static void test_toy_row_flags_decide(void **state)
{
	static const struct flowsrcs_row plain[] = {
		{ &toy_ops, TRACK_VMA, "toy flows", 0, NULL },
	};
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c = coretest_conf(tracked);
	struct flowsrcs *fs = flowsrcs_new_with(l, ps, NULL, 0, plain, 1);
	struct flow_src_ref refs[] = { { FLOW_SRC_VMA, 1, 0 } };
	struct json_object *st, *out = json_object_new_object();
	struct seen seen = { 0 };

	(void)state;
	reset();
	assert_non_null(fs);
	flowsrcs_configure(fs, c);
	assert_int_equal(toy_opens, 1);
	assert_int_equal(toy_interval, 0);      /* no interval of its own */
	flowsrcs_poll(fs, 1000000000ull, collect, &seen);
	assert_int_equal(seen.n, 2);
	st = status_of(fs);
	assert_null(jx_get(jx_get(st, "readers"), "toy"));
	json_object_put(st);
	assert_int_equal(flowsrcs_evidence(fs, refs, 1, NULL, 0, "after", out, NULL, NULL), 0);
	assert_int_equal(toy_evidence, 0);
	assert_null(jx_get(out, "toy"));
	{
		int reader = -1;

		/* by its row: the kind, and not a reader */
		assert_int_equal(flowsrcs_kind_of(fs, "toy", &reader), FLOW_SRC_VMA);
		assert_int_equal(reader, 0);
	}
	json_object_put(out);
	flowsrcs_free(fs);
	conf_free(c);
	ports_free(ps);
	loop_free(l);
}

/* The shipped rows: the readers of unmodified engines by name, the other
 * sources' kinds (what evid_flows.c hard-coded before). */
static void test_shipped_rows_by_name(void **state)
{
	static const struct { const char *name; enum flow_src_kind kind; int reader; } want[] = {
		{ "onload", FLOW_SRC_ONLOAD, 1 }, { "vma", FLOW_SRC_VMA, 1 },
		{ "rdmaqp", FLOW_SRC_RDMAQP, 1 }, { "engine", FLOW_SRC_ENGINE, 0 },
		{ "sock", FLOW_SRC_SOCK, 0 }, { "bpf", FLOW_SRC_BPF, 0 },
		{ "nothing", 0, 0 },
	};
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct flowsrcs *fs = flowsrcs_new(l, ps);

	(void)state;
	assert_non_null(fs);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int reader = -1;

		assert_int_equal(flowsrcs_kind_of(fs, want[i].name, &reader), want[i].kind);
		assert_int_equal(reader, want[i].reader);
	}
	flowsrcs_free(fs);
	ports_free(ps);
	loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toy_row_lives_with_the_track_word),
		cmocka_unit_test(test_host_source_asks_by_the_least_threshold),
		cmocka_unit_test(test_toy_that_cannot_open),
		cmocka_unit_test(test_port_row_opens_at_configure),
		cmocka_unit_test(test_toy_row_flags_decide),
		cmocka_unit_test(test_shipped_rows_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
