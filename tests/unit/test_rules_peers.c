/* Unit tests: the peers in the rules. The language's peer. domain
 * (quantifiers over the peers, peer.NAME.X, join(), if()), a peer that
 * did not answer being unknown rather than clean, the peers' own numbers
 * in what a rule was ruled out by, and the shipped producer-stall and
 * fabric-fault verdicts on seed 004's four ranks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rules/facts.h"
#include "rules/rules.h"
#include "rules_helpers.h"

static struct rules *shipped(void)
{
	const char *dirs[] = { RULEDIR };
	struct rules *r = NULL;

	assert_int_equal(rules_load(dirs, 1, &r, print_msg, NULL), 0);
	return r;
}

static struct rules *text_rules(const char *text, struct msgs *ms)
{
	const char *names[] = { "00-signals.rules", "90-test.rules" };
	const char *texts[] = { "signal rdma_work generic = hw_counters/rx_write_requests\n"
				"signal fabric_errors generic = hw_counters/req_cqe_error\n", text };
	struct rules *r = NULL;

	if (rules_load_texts(names, texts, 2, &r, collect_msg, ms))
		return NULL;
	return r;
}

/* A peer that answered: one port whose window and stall counted work and
 * errors as given. */
static struct json_object *peer_answered(const char *host, long work, long errors)
{
	struct json_object *p = json_object_new_object(), *ports = json_object_new_object();
	struct json_object *port = json_object_new_object();
	const char *per[] = { "stall", "window", "baseline" };

	json_object_object_add(p, FK_PE_HOST, json_object_new_string(host));
	json_object_object_add(p, FK_PE_NOTIFIED, json_object_new_boolean(1));
	json_object_object_add(p, FK_PE_ANSWERED, json_object_new_boolean(1));
	json_object_object_add(p, FK_PE_RTT_MS, json_object_new_double(2.5));
	json_object_object_add(port, FK_P_PROFILE, json_object_new_string("mlx5"));
	for (int i = 0; i < 3; i++) {
		struct json_object *o = json_object_new_object(), *c = json_object_new_object();

		json_object_object_add(o, FK_SPAN_S, json_object_new_double(i == 2 ? 60 : 0.04));
		json_object_object_add(c, "hw_counters/rx_write_requests",
				       json_object_new_int64(i == 2 ? 5000000 : work));
		json_object_object_add(c, "hw_counters/rx_read_requests", json_object_new_int64(0));
		json_object_object_add(c, "hw_counters/req_cqe_error",
				       json_object_new_int64(i == 0 ? errors : 0));
		json_object_object_add(c, "hw_counters/local_ack_timeout_err", json_object_new_int64(0));
		json_object_object_add(o, FK_COUNTERS, c);
		json_object_object_add(port, per[i], o);
	}
	json_object_object_add(ports, "p0", port);
	json_object_object_add(p, FK_PE_PORTS, ports);
	return p;
}

static struct json_object *peer_silent(void)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, FK_PE_NOTIFIED, json_object_new_boolean(1));
	json_object_object_add(p, FK_PE_ANSWERED, json_object_new_boolean(0));
	json_object_object_add(p, FK_PE_ERROR, json_object_new_string("not heard from within peer_wait"));
	return p;
}

/* seed 004's facts on rank2 (tests/fixtures/facts/producer-stall.json)
 * with its three peers */
static struct json_object *four_ranks(struct json_object *r0, struct json_object *r1,
				      struct json_object *r3)
{
	struct json_object *f = json_object_from_file("tests/fixtures/facts/producer-stall.json");
	struct json_object *peers = json_object_new_object();

	assert_non_null(f);
	json_object_object_add(peers, "rank0", r0);
	json_object_object_add(peers, "rank1", r1);
	json_object_object_add(peers, "rank3", r3);
	json_object_object_add(f, FK_PEERS, peers);
	return f;
}

static struct json_object *classify(struct json_object *facts)
{
	struct rules *r = shipped();
	struct json_object *res = rules_classify(r, facts);

	rules_free(r);
	json_object_put(facts);
	assert_non_null(res);
	return res;
}

static void shipped__four_ranks_frozen__producer_stall_names_every_peer(void **state)
{
	struct json_object *res = classify(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)));
	const char *ex = sget(res, "explanation");

	(void)state;
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	assert_non_null(strstr(ex, "nor the peers that answered (rank0, rank1, rank3: their RDMA work "
			       "frozen too) and no fabric error at any end"));
	assert_null(strstr(ex, "Not heard from"));
	json_object_put(res);
}

/* The window saw the work that released the stalled flow (a starved
 * producer is slow, not stopped: its one late message), its part inside
 * the stall (held) none: producer-stall still; with no held part, the
 * window's work rules it out. */
static void shipped__release_work_in_window__judged_on_its_held_part(void **state)
{
	struct json_object *f = four_ranks(peer_answered("dgx1", 0, 0), peer_answered("dgx2", 0, 0),
					   peer_answered("dgx4", 0, 0));
	struct json_object *port = json_object_object_get(json_object_object_get(f, "ports"), "rank2"), *res;
	struct json_object *held = json_tokener_parse(json_object_to_json_string(json_object_object_get(port, "window")));

	(void)state;
	json_object_object_add(json_object_object_get(json_object_object_get(port, "window"), "counters"), "hw_counters/rx_write_requests",
			       json_object_new_int64(3));
	json_object_object_add(held, "span_s", json_object_new_double(0.12));
	json_object_object_add(port, "held", held);
	res = classify(json_object_get(f));
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	json_object_put(res);
	/* a held part shorter than a tenth of a second says too little */
	json_object_object_add(held, "span_s", json_object_new_double(0.05));
	res = classify(json_object_get(f));
	assert_string_not_equal(sget(res, "verdict"), "producer-stall");
	json_object_put(res);
	json_object_object_del(port, "held");
	res = classify(f);
	assert_string_not_equal(sget(res, "verdict"), "producer-stall");
	assert_non_null(strstr(sget(not_entry(res, "producer-stall"), "text"), "RDMA work kept arriving"));
	json_object_put(res);
}

static void shipped__one_peer_silent__producer_stall_says_which(void **state)
{
	struct json_object *res = classify(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_silent()));
	const char *ex = sget(res, "explanation");

	(void)state;
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	assert_non_null(strstr(ex, "(rank0, rank1: their RDMA work frozen too)"));
	assert_non_null(strstr(ex, "Not heard from (unknown, not clean): rank3"));
	json_object_put(res);
}

/* ranks[] as the daemon builds it (daemon/forensic/facts.c): rank2 (this host)
 * and its three peers, each with the figures given as "key=value ..." */
static struct json_object *rank(const char *name, int self, const char *figs)
{
	struct json_object *r = json_object_new_object();
	char buf[512], *save = NULL;

	json_object_object_add(r, FK_RK_NAME, json_object_new_string(name));
	json_object_object_add(r, FK_RK_SELF, json_object_new_boolean(self));
	json_object_object_add(r, FK_RK_ANSWERED, json_object_new_boolean(figs != NULL));
	if (!figs)
		return r;
	snprintf(buf, sizeof(buf), "%s", figs);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '='), *end;
		double d;

		assert_non_null(eq);
		*eq = 0;
		d = strtod(eq + 1, &end);
		json_object_object_add(r, t, *end ? json_object_new_string(eq + 1) :
				       json_object_new_double(d));
	}
	return r;
}

#define CLEAN "span_s=10 io_full_pct=0.4 io_some_pct=0.8 producer=sender producer_blkio_s=0 " \
	"producer_blkio_pct=0 producer_run_delay_s=0.01 producer_run_delay_pct=0.1 mem_full_pct=0"

static struct json_object *with_ranks(struct json_object *f, const char *r0, const char *r1,
				      const char *r2, const char *r3)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(a, rank("rank2", 1, r2));
	json_object_array_add(a, rank("rank0", 0, r0));
	json_object_array_add(a, rank("rank1", 0, r1));
	json_object_array_add(a, rank("rank3", 0, r3));
	json_object_object_add(f, FK_RANKS, a);
	return f;
}

static void shipped__one_rank_disk_starved__named_with_its_device(void **state)
{
	/* seed 004: dgx4 (here rank3) I/O-starved, the others waiting */
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), CLEAN, CLEAN, CLEAN,
		"span_s=10 io_full_pct=63 io_some_pct=71 disk=nvme0n1 disk_model=XG7000-2TB "
		"disk_firmware=GT0d9d63 disk_transport=nvme disk_reads_s=24100 disk_await_ms=13 "
		"disk_util_pct=99 producer=engram producer_blkio_s=9.8 producer_blkio_pct=98 "
		"producer_run_delay_s=0.2 producer_run_delay_pct=2"));
	const char *ex = sget(res, "explanation");

	(void)state;
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	assert_string_equal(sget(res, "rule"), "producer-stall-io");
	assert_non_null(strstr(ex, "rank rank3: its producer engram waited on block I/O 9.8 s of "
			       "10 s (98%); I/O pressure full 63% (some 71%) over the stall; nvme0n1 "
			       "(XG7000-2TB, firmware GT0d9d63, nvme) 24100 reads/s at 13 ms await, "
			       "99% busy; ranks rank2, rank0, rank1: their producers' block I/O delay "
			       "at most 0%, waiting on rank3's writes. Not the fabric: fabric errors 0"));
	assert_non_null(strstr(ex, "Not the local NIC: 0 frames lost before the vport"));
	assert_non_null(strstr(sget(res, "action"), "the producer on rank3 is starved of disk: "
			       "measure nvme0n1's random-read ceiling (4 KiB O_DIRECT)"));
	json_object_put(res);
}

/* Two ranks starved of disk: the first of ranks[] (the most starved:
 * hostfacts_order) is named, both listed most first, neither as waiting. */
static void shipped__two_ranks_disk_starved__most_first_other_also(void **state)
{
	struct json_object *f = four_ranks(peer_answered("dgx1", 0, 0), peer_answered("dgx2", 0, 0),
					   peer_answered("dgx4", 0, 0));
	struct json_object *a = json_object_new_array(), *res;
	const char *ex;

	json_object_array_add(a, rank("rank3", 0, "span_s=10 producer=engram producer_blkio_s=9.8 "
				      "producer_blkio_pct=98 disk=nvme0n1"));
	json_object_array_add(a, rank("rank1", 0, "span_s=10 producer=engram producer_blkio_s=4.1 "
				      "producer_blkio_pct=41 disk=nvme0n1"));
	json_object_array_add(a, rank("rank2", 1, CLEAN));
	json_object_array_add(a, rank("rank0", 0, CLEAN));
	json_object_object_add(f, FK_RANKS, a);
	res = classify(f);
	ex = sget(res, "explanation");
	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall-io");
	assert_non_null(strstr(ex, "rank rank3: its producer engram waited on block I/O 9.8 s"));
	assert_non_null(strstr(ex, "; ranks starved of disk (its producer's block I/O delay 30% "
			       "or more of the stall), most first: rank3, rank1; ranks rank2, rank0: "
			       "their producers' block I/O delay at most 0%, waiting on rank3's "
			       "writes"));
	json_object_put(res);
}

/* The producer's reads held by its cgroup's I/O limit (the disk answers
 * at once, the producer waits): the limit is named, and the action is to
 * raise it, not to measure the disk. */
static void shipped__disk_starved_by_cgroup_limit__limit_named(void **state)
{
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), CLEAN, CLEAN, CLEAN,
		"span_s=10 io_full_pct=63 disk=loop3 disk_transport=loop disk_reads_s=2 "
		"disk_await_ms=0 producer=sender producer_blkio_s=9.8 producer_blkio_pct=98 "
		"producer_io_limit=riops=2 producer_io_limit_cgroup=/jobs/b3"));
	const char *ex = sget(res, "explanation"), *ac = sget(res, "action");

	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall-io");
	assert_non_null(strstr(ex, "2 reads/s at 0 ms await, 0% busy; its cgroup limits its I/O "
			       "to that disk: riops=2 (/jobs/b3), so its reads wait before the "
			       "device; ranks rank2, rank0, rank1"));
	assert_string_equal(ac, "the producer on rank3 is starved of disk by its cgroup's I/O "
			    "limit (riops=2): raise or lift it (io.max, blkio.throttle.*) against "
			    "the reads/s the job demands, then see whether the disk itself keeps up");
	json_object_put(res);
}

/* A rank is named by its producer's largest wait: one throttled by its
 * CPU quota 95% of the stall that also read a little (35% block I/O) is
 * no disk-starved rank, beside one at 90% block I/O; alone, it is the CPU
 * rule's. */
static void shipped__rank_by_its_largest_wait__not_by_any_over_30(void **state)
{
	static const char *cpuish = "span_s=10 producer=sender producer_blkio_s=3.5 "
		"producer_blkio_pct=35 producer_run_delay_s=9.5 producer_run_delay_pct=95 "
		"producer_throttled_s=9.4 producer_throttled_pct=94";
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), cpuish, CLEAN, CLEAN,
		"span_s=10 producer=sender producer_blkio_s=9 producer_blkio_pct=90 disk=nvme0n1"));

	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall-io");
	assert_non_null(strstr(sget(res, "explanation"), "rank rank3: its producer sender waited "
			       "on block I/O 9 s"));
	assert_null(strstr(sget(res, "explanation"), "most first: rank0"));
	json_object_put(res);
	res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), cpuish, CLEAN, CLEAN,
		CLEAN));
	assert_string_equal(sget(res, "rule"), "producer-stall-cpu");
	assert_non_null(strstr(sget(res, "explanation"), "rank rank0: its producer sender waited "
			       "for a CPU 9.5 s"));
	json_object_put(res);
}

static void shipped__cpu_starved_rank__run_queue_not_io(void **state)
{
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), CLEAN,
		"span_s=10 io_full_pct=0.4 producer=sender producer_blkio_s=0 producer_blkio_pct=0 "
		"producer_run_delay_s=8.1 producer_run_delay_pct=81 producer_throttled_s=7.9 "
		"producer_throttled_pct=79 producer_cpu_pct=2 cpu_some_pct=40", CLEAN, CLEAN));
	const char *ex = sget(res, "explanation");

	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall-cpu");
	assert_non_null(strstr(ex, "rank rank1: its producer sender waited for a CPU 8.1 s of 10 s "
			       "(81% on the run queue, its threads together), throttled by its "
			       "CPU quota 7.9 s"));
	assert_non_null(strstr(ex, "not I/O: its block I/O delay 0 s; ranks rank2, rank0, rank3"));
	json_object_put(res);
}

/* A rank starved of CPU while a peer's work still moved: not a producer
 * stall, and "what it is not" says so, not that no rank waited for a CPU
 * (the rule's own terms other than the starved rank's failed). */
static void shipped__cpu_starved_but_work_moved__ruled_out_says_why(void **state)
{
	static const char *cpu = "span_s=10 producer=sender producer_run_delay_s=13.2 "
		"producer_run_delay_pct=132 producer_throttled_s=9 producer_throttled_pct=90";
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 1200, 0), peer_answered("dgx4", 0, 0)), CLEAN, CLEAN, cpu,
		CLEAN));
	struct json_object *e;

	(void)state;
	assert_string_not_equal(sget(res, "verdict"), "producer-stall");
	e = not_entry(res, "producer-stall-cpu");
	assert_string_equal(sget(e, "text"), "rank rank2's producer waited for a CPU 132% of the "
			    "stall, but a producer stall's other conditions do not hold "
			    "(producer-stall says which)");
	e = not_entry(res, "producer-stall-io");
	assert_non_null(strstr(sget(e, "text"), "no rank's producer waited on block I/O for 30% of "
			       "the stall: "));
	json_object_put(res);
	/* with nothing starved the words stay */
	res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), CLEAN, CLEAN, CLEAN,
		CLEAN));
	assert_non_null(strstr(sget(not_entry(res, "producer-stall-cpu"), "text"),
			       "no rank's producer waited on the run queue or its CPU quota for "
			       "30% of the stall: "));
	json_object_put(res);
}

static void shipped__memory_pressure_rank__reclaim(void **state)
{
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 0)), CLEAN, CLEAN,
		"span_s=10 mem_full_pct=35 mem_some_pct=60 producer=sender producer_blkio_pct=3 "
		"producer_run_delay_pct=1", CLEAN));

	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall-memory");
	assert_non_null(strstr(sget(res, "explanation"), "rank rank2: memory pressure full 35% "
			       "(some 60%)"));
	json_object_put(res);
}

static void shipped__ranks_clean_or_silent__plain_producer_stall(void **state)
{
	/* no rank's producer waited on anything; a silent rank decides nothing */
	struct json_object *res = classify(with_ranks(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_silent()), CLEAN, CLEAN, CLEAN, NULL));

	(void)state;
	assert_string_equal(sget(res, "rule"), "producer-stall");
	json_object_put(res);
}

static void shipped__peer_still_working__not_producer_stall(void **state)
{
	/* the peer's writes moved in its window: the stall is not the fleet's */
	struct json_object *res = classify(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 1200, 0), peer_answered("dgx4", 0, 0)));
	struct json_object *e, *per;

	(void)state;
	assert_string_not_equal(sget(res, "verdict"), "producer-stall");
	e = not_entry(res, "producer-stall");
	assert_string_equal(sget(e, "failed"),
			    "all(not peer.answered or (peer_work == 0 and peer_errors == 0))");
	/* what ruled it out names each peer's number */
	per = oget(oget(e, "values"), "peer_work");
	assert_non_null(per);
	assert_int_equal(json_object_get_int(oget(per, "rank1")), 1200);
	assert_int_equal(json_object_get_int(oget(per, "rank0")), 0);
	json_object_put(res);
}

static void shipped__errors_on_one_peer__fabric_fault_names_it(void **state)
{
	struct json_object *res = classify(four_ranks(peer_answered("dgx1", 0, 0),
		peer_answered("dgx2", 0, 0), peer_answered("dgx4", 0, 7)));
	struct json_object *e, *per;

	(void)state;
	assert_string_equal(sget(res, "verdict"), "fabric-fault");
	assert_string_equal(sget(res, "rule"), "fabric-fault-peer");
	assert_non_null(strstr(sget(res, "explanation"), "peer rank3 (host dgx4): 7 fabric errors"));
	/* the local rule was ruled out by this host's numbers */
	e = not_entry(res, "fabric-fault");
	assert_false(json_object_get_boolean(oget(e, "value")));
	e = not_entry(res, "producer-stall");
	per = oget(oget(e, "values"), "peer_errors");
	assert_int_equal(json_object_get_int(oget(per, "rank3")), 7);
	/* and "What it is not" says it in words, with the peer's number */
	assert_non_null(strstr(sget(e, "text"), "; peer rank3 counted 7 fabric errors"));
	json_object_put(res);
}

static void shipped__silent_peer__never_counted_clean(void **state)
{
	/* all silent: producer-stall still from this host, each named; no
	 * fabric-fault-peer from peers with no numbers */
	struct json_object *res = classify(four_ranks(peer_silent(), peer_silent(), peer_silent()));

	(void)state;
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	assert_non_null(strstr(sget(res, "explanation"),
			       "Not heard from (unknown, not clean): rank0, rank1, rank3"));
	assert_false(json_object_get_boolean(oget(not_entry(res, "fabric-fault-peer"), "value")));
	json_object_put(res);
}

static void shipped__no_peers_configured__old_facts_unchanged(void **state)
{
	struct json_object *f = json_object_from_file("tests/fixtures/facts/producer-stall.json");
	struct json_object *res = classify(f);

	(void)state;
	assert_string_equal(sget(res, "verdict"), "producer-stall");
	assert_null(strstr(sget(res, "explanation"), "peers"));
	assert_null(strstr(sget(res, "explanation"), "heard"));
	json_object_put(res);
}

static struct json_object *lang_facts(void)
{
	struct json_object *f = json_object_new_object(), *peers = json_object_new_object();

	json_object_object_add(f, FK_SCHEMA, json_object_new_int(1));
	json_object_object_add(peers, "rank1", peer_answered("h1", 5, 0));
	json_object_object_add(peers, "rank2", peer_silent());
	json_object_object_add(f, FK_PEERS, peers);
	return f;
}

static void lang__peer_quantifiers_named_join_if__values(void **state)
{
	struct msgs ms = { 0 };
	struct rules *r = text_rules(
		"rule t {\n verdict t\n"
		" require count(peer.answered) == 1 and count(peer.notified) == 2\n"
		" require peer.rank1.window.rdma_work == 5 and peer.rank1.host == \"h1\"\n"
		" require not known(peer.rank2.window.rdma_work)\n"
		" require sumof(default(peer.window.rdma_work, 0)) == 5\n"
		" explain \"{join(peer.name, peer.answered)}|{join(peer.name, not peer.answered)}|"
		"{if(count(peer.answered) > 5, \\\"many\\\", \\\"few\\\")}|{peer.rank1.window.span_s}\"\n}\n",
		&ms);
	struct json_object *f = lang_facts(), *res;

	(void)state;
	assert_non_null(r);
	res = rules_classify(r, f);
	assert_string_equal(sget(res, "verdict"), "t");
	assert_string_equal(sget(res, "explanation"), "rank1|rank2|few|0.04");
	json_object_put(res);
	json_object_put(f);
	rules_free(r);
}

static void lang__silent_peer_period__unknown_with_why(void **state)
{
	struct msgs ms = { 0 };
	struct rules *r = text_rules("rule t {\n verdict t\n require peer.rank2.stall.rdma_work == 0\n}\n", &ms);
	struct json_object *f = lang_facts(), *res, *e;

	(void)state;
	assert_non_null(r);
	res = rules_classify(r, f);
	assert_string_equal(sget(res, "verdict"), "unknown");
	e = not_entry(res, "t");
	assert_non_null(strstr(json_object_to_json_string(oget(e, "unknown")),
			       "peer rank2 did not answer"));
	json_object_put(res);
	json_object_put(f);
	rules_free(r);
}

static void lang__peer_field_outside_quantifier__load_error(void **state)
{
	struct msgs ms = { 0 };

	(void)state;
	assert_null(text_rules("rule t {\n verdict t\n require peer.answered\n}\n", &ms));
	assert_non_null(strstr(ms.m[0], "'peer.answered' names a list item"));
	memset(&ms, 0, sizeof(ms));
	assert_null(text_rules("rule t {\n verdict t\n require rate(peer.stall.rdma_work) > 0\n}\n", &ms));
	assert_non_null(strstr(ms.m[0], "rate() takes"));
	memset(&ms, 0, sizeof(ms));
	assert_null(text_rules("rule t {\n verdict t\n require peer.rank1.nosuch == 1\n}\n", &ms));
	assert_non_null(strstr(ms.m[0], "unknown name 'peer.rank1.nosuch'"));
	memset(&ms, 0, sizeof(ms));
	assert_null(text_rules("rule t {\n verdict t\n require any(peer.answered and port.link_up)\n}\n", &ms));
	assert_non_null(strstr(ms.m[0], "mixes fields of different lists"));
}

static void lang__reserved_words__no_peer_name(void **state)
{
	(void)state;
	assert_false(rules_peer_name_ok("stall"));
	assert_false(rules_peer_name_ok("answered"));
	assert_false(rules_peer_name_ok("name"));
	assert_false(rules_peer_name_ok("ports"));
	assert_true(rules_peer_name_ok("rank0"));
}

static void lang__hostile_peers__unknown_never_crash(void **state)
{
	struct msgs ms = { 0 };
	struct rules *r = text_rules(
		"rule t {\n verdict t\n require all(peer.answered and peer.window.rdma_work == 0)\n"
		" explain \"{join(peer.name, peer.answered)}\"\n}\n", &ms);
	const char *bad[] = {
		"{\"schema\":1,\"peers\":[1,2]}",
		"{\"schema\":1,\"peers\":{\"x\":7}}",
		"{\"schema\":1,\"peers\":{\"x\":{\"answered\":true,\"ports\":{\"p\":{\"window\":"
		"{\"span_s\":\"a\",\"counters\":[]}}}}}}",
		"{\"schema\":1,\"peers\":{\"x\":{\"answered\":true,\"ports\":{\"p\":5}}}}",
		"{\"schema\":1,\"peers\":{\"x\":{\"answered\":\"yes\"}}}",
	};

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *f = json_tokener_parse(bad[i]), *res;

		assert_non_null(f);
		res = rules_classify(r, f);
		assert_non_null(res);
		assert_string_equal(sget(res, "verdict"), "unknown");
		json_object_put(res);
		json_object_put(f);
	}
	rules_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped__four_ranks_frozen__producer_stall_names_every_peer),
		cmocka_unit_test(shipped__release_work_in_window__judged_on_its_held_part),
		cmocka_unit_test(shipped__one_peer_silent__producer_stall_says_which),
		cmocka_unit_test(shipped__peer_still_working__not_producer_stall),
		cmocka_unit_test(shipped__one_rank_disk_starved__named_with_its_device),
		cmocka_unit_test(shipped__two_ranks_disk_starved__most_first_other_also),
		cmocka_unit_test(shipped__disk_starved_by_cgroup_limit__limit_named),
		cmocka_unit_test(shipped__rank_by_its_largest_wait__not_by_any_over_30),
		cmocka_unit_test(shipped__cpu_starved_rank__run_queue_not_io),
		cmocka_unit_test(shipped__cpu_starved_but_work_moved__ruled_out_says_why),
		cmocka_unit_test(shipped__memory_pressure_rank__reclaim),
		cmocka_unit_test(shipped__ranks_clean_or_silent__plain_producer_stall),
		cmocka_unit_test(shipped__errors_on_one_peer__fabric_fault_names_it),
		cmocka_unit_test(shipped__silent_peer__never_counted_clean),
		cmocka_unit_test(shipped__no_peers_configured__old_facts_unchanged),
		cmocka_unit_test(lang__peer_quantifiers_named_join_if__values),
		cmocka_unit_test(lang__silent_peer_period__unknown_with_why),
		cmocka_unit_test(lang__peer_field_outside_quantifier__load_error),
		cmocka_unit_test(lang__reserved_words__no_peer_name),
		cmocka_unit_test(lang__hostile_peers__unknown_never_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
