/* Unit tests: figures of the bundle summary (issue #10 item 6): counts as
 * integers, durations with a fixed precision, values that are not numbers
 * never printed as figures, and the port/vport gap with its healthy share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bundle/bundle.h"
#include "rules/rules.h"

#define FACTDIR "tests/fixtures/facts"

static void print_msg(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

static struct json_object *parse(const char *txt)
{
	struct json_object *m = json_tokener_parse(txt);

	assert_non_null(m);
	return m;
}

static void bundle_summary__figures__counts_integral_durations_fixed(void **state)
{
	struct json_object *m = parse(
		"{ \"verdict\": { \"verdict\": \"port-drop\", \"rule\": \"port-drop\","
		"    \"terms\": [ { \"expr\": \"maxof(gap) >= 2\", \"value\": true,"
		"                   \"values\": { \"maxof(gap)\": 4.35303098 } } ] },"
		"  \"facts\": { \"ports\": { \"srv\": { \"stall\": { \"span_s\": 0.40512,"
		"        \"counters\": { \"rx_packets_phy\": 1234567.0, \"rx_vport_unicast_packets\": -3 } } } },"
		"     \"flows\": { \"stalled\": 1.0, \"progressing\": 0, \"list\": [ { \"tuple\": \"t\","
		"        \"waited_ms\": 332.89222799999999 } ] },"
		"     \"threads\": [ { \"tid\": 5, \"comm\": \"x\", \"vcsw_rate\": 12.3456789 },"
		"                  { \"tid\": 6, \"comm\": \"y\", \"vcsw_rate\": 1230.4 } ] },"
		"  \"release\": { \"released\": true, \"action\": \"reprogram\", \"after_ms\": 349.00000000000006 } }");
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "waited 332.9 ms"));
	assert_non_null(strstr(s, "349.0 ms after the action"));
	/* the period named for what it is, and the stall's own start */
	assert_non_null(strstr(s, "Counters from the last sample before the incident to the first "
			       "snapshot (0.41 s; the first stalled flow had waited 332.9 ms at the "
			       "snapshot)"));
	assert_non_null(strstr(s, "rx_packets_phy +1234567"));
	assert_non_null(strstr(s, "rx_vport_unicast_packets -3"));
	assert_non_null(strstr(s, "Flows: 1 connection stalled, 0 other connection(s) of the ports "
			       "progressing."));
	assert_null(strstr(s, "maxof(gap)"));  /* expressions: classify --explain */
	assert_non_null(strstr(s, "voluntary switches/s 12.35\n"));  /* 4 significant digits */
	/* a figure of 4 digits or more keeps its zeros (it read "123") */
	assert_non_null(strstr(s, "voluntary switches/s 1230\n"));
	assert_null(strstr(s, "332.89222"));
	assert_null(strstr(s, "e+06"));
	assert_null(strstr(s, "+-"));
	free(s);
	json_object_put(m);
}

static void bundle_summary__nan_and_infinity__never_figures(void **state)
{
	/* json-c reads NaN and Infinity: a hostile manifest can hold them */
	struct json_object *m = parse(
		"{ \"facts\": { \"ports\": { \"srv\": { \"stall\": { \"span_s\": Infinity,"
		"        \"counters\": { \"a\": NaN, \"b\": 0, \"c\": 2 } } } },"
		"     \"flows\": { \"stalled\": 1, \"progressing\": 0, \"list\": [ { \"waited_ms\": NaN } ] } },"
		"  \"release\": { \"released\": true, \"action\": \"reprogram\", \"after_ms\": NaN },"
		"  \"steps\": [ { \"step\": \"snapshot\", \"start_ms\": NaN, \"end_ms\": -Infinity,"
		"               \"outcome\": \"ok\" } ] }");
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(s);
	assert_null(strstr(s, "nan"));
	assert_null(strstr(s, "inf"));
	assert_non_null(strstr(s, "to the first snapshot: c +2; 1 counters did not move."));
	assert_non_null(strstr(s, "waited for a time not recorded"));
	assert_non_null(strstr(s, "Released by reprogram, time not recorded."));
	assert_non_null(strstr(s, "-  (start unknown) .. (end unknown)  snapshot: ok"));
	assert_null(strstr(s, "?"));           /* never a placeholder */
	free(s);
	json_object_put(m);
}

/* A release before any action, and one after an action on a port that lost
 * nothing: neither reads as "Released by self ... after the action", and
 * neither names a port whose receive filter held the flows. */
static void bundle_summary__self_release__no_action_credited(void **state)
{
	struct json_object *m = parse(
		"{ \"release\": { \"released\": true, \"action\": \"self\", \"after_ms\": 360.4,"
		"    \"at_ms\": 360.4, \"order\": \"the flows moved again at +360.4 ms, before any "
		"action (none ran)\" } }");
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "- Released by itself, no action credited: the flows moved again at "
			       "+360.4 ms, before any action (none ran).\n"));
	assert_non_null(strstr(s, "- The verdict is the evidence's, not the release's.\n"));
	assert_null(strstr(s, "after the action"));
	assert_null(strstr(s, "held the flows"));
	free(s);
	json_object_put(m);
	m = parse("{ \"release\": { \"released\": true, \"action\": \"self\", \"after_ms\": 909.3,"
		  "    \"not_credited\": \"not credited to reprogram on cli (at +1200.0 ms): port cli "
		  "lost no frame of the flows, so its receive filter held none of them\" } }");
	s = bundle_summary(m);
	assert_non_null(strstr(s, "- The release is not credited to reprogram on cli (at +1200.0 ms)"));
	assert_null(strstr(s, "The receive-filter state of port cli held the flows"));
	free(s);
	json_object_put(m);
}

/* The port-drop fixture with a stall of 5 + 1 frames lost before the vport
 * over 1.6 s and a baseline that loses 1 frame a second. */
static struct json_object *gap_manifest(void)
{
	struct json_object *facts = json_object_from_file(FACTDIR "/port-drop.json"), *m;
	struct json_object *srv, *c;

	assert_non_null(facts);
	srv = json_object_object_get(json_object_object_get(facts, "ports"), "srv");
	c = json_object_object_get(json_object_object_get(srv, "stall"), "counters");
	json_object_object_add(c, "rx_packets_phy", json_object_new_int(5));
	c = json_object_object_get(json_object_object_get(srv, "window"), "counters");
	json_object_object_add(c, "rx_packets_phy", json_object_new_int(7));
	c = json_object_object_get(json_object_object_get(srv, "baseline"), "counters");
	json_object_object_add(c, "rx_vport_multicast_packets", json_object_new_int(58));
	m = json_object_new_object();
	json_object_object_add(m, "facts", facts);
	return m;
}

static void bundle_summary_rules__port_drop__gap_counted_and_healthy_share(void **state)
{
	const char *dirs[] = { "rules" };
	struct json_object *m = gap_manifest();
	struct rules *r = NULL;
	char *s;

	(void)state;
	assert_int_equal(rules_load(dirs, 1, &r, print_msg, NULL), 0);
	s = bundle_summary_rules(m, r);
	assert_non_null(s);
	/* whole frames: the healthy share of 1.6 s at 1 a second is 2 */
	assert_non_null(strstr(s, "  Gap: 6 frames counted at the port and not at the vport in "
			       "1.6 s, 2 of them at the healthy rate (1 a second, learned over the "
			       "60 s before the stall).\n"));
	/* the client port lost nothing: no gap is evidence */
	assert_non_null(strstr(s, "  Gap: none: the port and the vport counted the same frames.\n"));
	free(s);
	/* no baseline: said so */
	json_object_object_del(json_object_object_get(json_object_object_get(
		json_object_object_get(m, "facts"), "ports"), "srv"), "baseline");
	s = bundle_summary_rules(m, r);
	assert_non_null(strstr(s, "Gap: 6 frames counted at the port and not at the vport in "
			       "1.6 s; no healthy rate was learned."));
	free(s);
	/* without rules, no gap line (the profile's signals are unknown) */
	s = bundle_summary(m);
	assert_null(strstr(s, "Gap:"));
	free(s);
	rules_free(r);
	json_object_put(m);
}

static void bundle_summary__peers__answered_silent_and_origin(void **state)
{
	struct json_object *m = parse(
		"{ \"verdict\": { \"verdict\": \"producer-stall\" },"
		"  \"peers\": { \"rank1\": { \"address\": \"10.0.1.2\", \"port\": 7499, \"host\": \"r1\","
		"                 \"notified\": true, \"answered\": true, \"rtt_ms\": 12.3456, \"after_ms\": 14.04,"
		"                 \"bundle\": \"B1\" },"
		"               \"rank3\": { \"address\": \"10.0.1.4\", \"port\": 7499, \"notified\": true,"
		"                 \"answered\": false, \"error\": \"no answer within 1000 ms\" },"
		"               \"rank4\": { \"address\": \"10.0.1.5\", \"port\": 7499, \"notified\": false,"
		"                 \"error\": \"send: Network is unreachable\" },"
		"               \"bad\": 7 } }");
	struct json_object *p = parse(
		"{ \"verdict\": { \"verdict\": \"peer-snapshot\" },"
		"  \"peer\": { \"origin_host\": \"rank0\", \"origin_peer\": \"rank0\", \"incident_id\": 9,"
		"             \"notice_sent_real_ns\": 1000000000, \"received_real_ns\": 1002500000 } }");
	char *s = bundle_summary(m), *t = bundle_summary(p);

	(void)state;
	assert_non_null(s);
	assert_non_null(t);
	assert_non_null(strstr(s, "\n## Peers\n\nNotified 4, answered 1, not heard from 3.\n"));
	assert_non_null(strstr(s, "- rank1 (10.0.1.2 port 7499, host r1): answered after 14.0 ms "
			       "(round trip 12.3 ms), bundle B1\n"));
	assert_non_null(strstr(s, "- rank3 (10.0.1.4 port 7499, host ?): notified, not heard from "
			       "(no answer within 1000 ms): unknown, not clean\n"));
	assert_non_null(strstr(s, "- rank4 (10.0.1.5 port 7499, host ?): not notified "
			       "(send: Network is unreachable): unknown, not clean\n"));
	assert_non_null(strstr(t, "- A snapshot for incident rank0:9 (notice from peer rank0), "
			       "taken 2.5 ms after the notice was sent.\n"));
	free(s);
	free(t);
	json_object_put(m);
	json_object_put(p);
}

static void bundle_summary__engines__sockets_and_qps_at_stall_and_after(void **state)
{
	struct json_object *m = parse(
		"{ \"engines\": { \"at_stall\": {"
		"    \"vma\": { \"sockets\": [ { \"local\": \"10.9.0.1:5\", \"remote\": \"10.9.0.2:6\","
		"        \"pid\": 7, \"fd\": 8, \"n_rx_packets\": 10, \"n_tx_sent_pkt_count\": 11,"
		"        \"n_rx_ready_byte_count\": 12, \"n_tx_ready_byte_count\": 13,"
		"        \"verdict\": \"waiting\" } ] },"
		"    \"onload\": { \"stacks\": [ { \"id\": 2, \"name\": \"srv\", \"pid\": 9,"
		"        \"counters\": { \"lock_wakes\": 12438, \"pkt_bufs_free\": 392 },"
		"        \"bundle_file\": \"engines/onload-stack2-at_stall.txt\","
		"        \"before\": { \"age_ms\": 835.5, \"counters\": { \"lock_wakes\": 0 },"
		"          \"bundle_file\": \"engines/onload-stack2-before.txt\" } } ] },"
		"    \"rdmaqp\": { \"srv\": { \"involved\": [ { \"device\": \"mlx5_0\", \"lqpn\": 18,"
		"        \"rqpn\": 34, \"type\": \"RC\", \"state\": \"RTS\", \"sq_psn\": 109,"
		"        \"rq_psn\": 58 } ] } } },"
		"  \"after\": {"
		"    \"onload\": { \"stacks\": [ { \"id\": 2, \"name\": \"srv\","
		"        \"counters\": { \"lock_wakes\": 28900, \"pkt_bufs_free\": 379 },"
		"        \"bundle_file\": \"engines/onload-stack2-after.txt\" } ] },"
		"    \"vma\": { \"sockets\": [ { \"local\": \"10.9.0.1:5\", \"remote\": \"10.9.0.2:6\","
		"        \"pid\": 7, \"fd\": 8, \"n_rx_packets\": 20, \"n_tx_sent_pkt_count\": 21,"
		"        \"n_rx_ready_byte_count\": 0, \"n_tx_ready_byte_count\": 0,"
		"        \"verdict\": \"moving\" },"
		"      { \"local\": \"10.9.0.1:9\", \"remote\": \"10.9.0.2:6\", \"pid\": 7, \"fd\": 9,"
		"        \"n_rx_packets\": 1, \"n_tx_sent_pkt_count\": 2, \"n_rx_ready_byte_count\": 3,"
		"        \"n_tx_ready_byte_count\": 4, \"verdict\": \"new\" } ] } } } }");
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "- VMA/XLIO socket 10.9.0.1:5 -> 10.9.0.2:6 (pid 7, fd 8): at the stall "
			       "rx 10, tx 11, ready to read 12 bytes, to send 13 bytes (waiting); after "
			       "rx 20, tx 21, ready to read 0 bytes, to send 0 bytes (moving).\n"));
	assert_non_null(strstr(s, "- VMA/XLIO socket 10.9.0.1:9 -> 10.9.0.2:6 (pid 7, fd 9): after "
			       "rx 1, tx 2, ready to read 3 bytes, to send 4 bytes (new).\n"));
	/* the record's before, during and after, the before's age, the files */
	assert_non_null(strstr(s, "- Onload stack 2 (srv, pid 9): lock_wakes 0 -> 12438 -> 28900, "
			       "pkt_bufs_free unknown -> 392 -> 379 (before -> at the stall -> after); "
			       "before taken 835.5 ms before the stall's dump; "
			       "engines/onload-stack2-before.txt, engines/onload-stack2-at_stall.txt, "
			       "engines/onload-stack2-after.txt.\n"));
	assert_non_null(strstr(s, "- RDMA QP on port srv: mlx5_0 qp 18 -> 34 (RC) at the stall "
			       "RTS, sq_psn 109, rq_psn 58.\n"));
	free(s);
	json_object_put(m);
}

/* Seed 000's "not neighbour state": the ports' entries at the stall, said
 * as what they are; one the kernel could not resolve is said so. */
static void bundle_summary__neighbours__in_what_it_is_not(void **state)
{
	struct json_object *m = parse(
		"{ \"ports\": { \"srv\": { \"neighbours\": [ { \"addr\": \"10.0.0.1\","
		"    \"state\": \"REACHABLE\" } ] } } }");
	char *s = bundle_summary(m);

	(void)state;
	assert_non_null(strstr(s, "- **Not neighbour state:** the ports' neighbour entries at the "
			       "stall: 10.0.0.1 REACHABLE on srv.\n"));
	free(s);
	json_object_put(m);
	m = parse("{ \"ports\": { \"srv\": { \"neighbours\": [ { \"addr\": \"10.0.0.1\","
		  "    \"state\": \"FAILED\" } ] } } }");
	s = bundle_summary(m);
	assert_null(strstr(s, "Not neighbour state"));
	assert_non_null(strstr(s, "- **Neighbour state:** an entry the kernel could not resolve at "
			       "the stall: 10.0.0.1 FAILED on srv.\n"));
	free(s);
	json_object_put(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundle_summary__figures__counts_integral_durations_fixed),
		cmocka_unit_test(bundle_summary__peers__answered_silent_and_origin),
		cmocka_unit_test(bundle_summary__engines__sockets_and_qps_at_stall_and_after),
		cmocka_unit_test(bundle_summary__nan_and_infinity__never_figures),
		cmocka_unit_test(bundle_summary_rules__port_drop__gap_counted_and_healthy_share),
		cmocka_unit_test(bundle_summary__neighbours__in_what_it_is_not),
		cmocka_unit_test(bundle_summary__self_release__no_action_credited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
