/* Unit tests for collectors/flows/onload_parse.c on the fixtures in
 * tests/fixtures/onload/ (Onload 9.0.2 formats, see the README there). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/flows/onload_parse.h"
#include "lib/util.h"

#include "nstest.h"

#define FX "tests/fixtures/onload/"
#define MS 1000000ull

static char *slurp(const char *name, size_t *len)
{
	char *t = util_read_file(name, FLOW_ONLOAD_MAX_TEXT, len);

	if (!t)
		print_error("cannot read %s\n", name);
	assert_non_null(t);
	return t;
}

static struct flow_onload_dump d0, d1;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(nstest_chdir_repo(FX "README.md"), 0);
	assert_int_equal(flow_onload_dump_init(&d0), 0);
	assert_int_equal(flow_onload_dump_init(&d1), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	flow_onload_dump_free(&d0);
	flow_onload_dump_free(&d1);
	return 0;
}

static void load_json(const char *name, struct flow_onload_dump *d)
{
	char err[256] = "";
	size_t len;
	char *t = slurp(name, &len);

	if (flow_onload_parse_json(t, len, d, err, sizeof(err)) != 0)
		print_error("%s: %s\n", name, err);
	free(t);
}

static void load_lots(const char *name, struct flow_onload_dump *d)
{
	char err[256] = "";
	size_t len;
	char *t = slurp(name, &len);

	assert_int_equal(flow_onload_parse_lots(t, len, d, err, sizeof(err)), 0);
	free(t);
}

static const struct flow_onload_sock *sock(const struct flow_onload_dump *d, int stack, int id)
{
	for (unsigned i = 0; i < d->nsocks; i++)
		if (d->socks[i].stack_id == stack && d->socks[i].sock_id == id)
			return &d->socks[i];
	print_error("no socket %d:%d\n", stack, id);
	fail();
	return NULL;
}

/* ---- orm_json ---- */

static void flow_onload_parse_json__sockets_fixture__fields_decoded(void **state)
{
	const struct flow_onload_sock *s;

	(void)state;
	load_json(FX "orm_json-sockets-t0.json", &d0);
	assert_string_equal(d0.version, "9.0.2");
	assert_int_equal(d0.nstacks, 2);
	assert_int_equal(d0.nsocks, 4);
	s = sock(&d0, 2, 5);
	assert_int_equal(s->proto, IPPROTO_TCP);
	assert_int_equal(s->ostate, 0x3331);
	assert_int_equal(s->lstate, 1);                 /* ESTABLISHED */
	assert_int_equal(ntohs(s->lport), 11111);
	assert_int_equal(ntohs(s->rport), 40002);
	assert_int_equal(s->laddr.s6_addr[15], 2);
	assert_int_equal(s->raddr.s6_addr[15], 1);
	assert_int_equal(s->snd_nxt, 0xfffffff0u);
	assert_int_equal(s->snd_una, 0xffffffb0u);
	assert_int_equal(s->pid, 3933257);
	assert_int_equal(s->total_retrans, 2);
	assert_int_equal(s->retrans_pkts, 1);
	assert_true(s->have & FLOW_ONLOAD_HAVE_SEQ);
	assert_true(s->have & FLOW_ONLOAD_HAVE_TIMES);
	s = sock(&d0, 2, 6);
	assert_int_equal(s->rcv_added - s->rcv_delivered, 64);
	assert_int_equal(s->recvq_pkts, 1);
	s = sock(&d0, 3, 4);
	assert_int_equal(s->proto, IPPROTO_UDP);
	assert_int_equal(ntohs(s->lport), 5000);
}

static void flow_onload_parse_json__stack_state__name_pid_and_clock(void **state)
{
	const struct flow_onload_stack *st;

	(void)state;
	load_json(FX "orm_json-stack.json", &d0);
	st = flow_onload_stack(&d0, 2);
	assert_non_null(st);
	assert_string_equal(st->name, "srv");
	assert_int_equal(st->pid, 3933257);
	assert_true(st->have_time);
	assert_int_equal(st->khz, 3000000);
	assert_int_equal(st->frc2tick, 21);
}

static void flow_onload_parse_json__flat_and_hostile__handled(void **state)
{
	static const char flat[] =
		"{\"onload_version\":\"9.0.2\",\"stacks\":[{\"id\":7,\"index\":\"fe\",\"name\":\"fe\","
		"\"pretty_name\":\"fe\",\"stack\":{\"tcp_listen\":{},\"tcp\":{\"1\":{\"tcp_state\":"
		"{\"s\":{\"b\":{\"state\":13105},\"laddr\":\"fd00::2\",\"cp\":{\"lport\":80},"
		"\"pkt\":{\"dport\":5555}},\"snd_nxt\":10,\"snd_una\":10,\"rcv_added\":3,"
		"\"rcv_delivered\":3}}},\"udp\":{},\"pipe\":{}},\"stats\":{\"lock_wakes\":5,"
		"\"k_polls\":\"18446744073709551615\"}}]}";
	const char *bad[] = { "", "[1,2]", "{\"json\":", "{\"other\":1}", "nul\x01l" };
	char err[256];
	uint64_t v;

	(void)state;
	assert_int_equal(flow_onload_parse_json(flat, sizeof(flat) - 1, &d0, err, sizeof(err)), 0);
	assert_int_equal(d0.nsocks, 1);
	assert_string_equal(d0.stacks[0].name, "fe");
	assert_int_equal(d0.socks[0].laddr.s6_addr[0], 0xfd);
	assert_true(flow_onload_counter(&d0.stacks[0], "lock_wakes", &v));
	assert_int_equal(v, 5);
	assert_true(flow_onload_counter(&d0.stacks[0], "k_polls", &v));
	assert_true(v == UINT64_MAX);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(flow_onload_parse_json(bad[i], strlen(bad[i]), &d0, err, sizeof(err)),
				 -EINVAL);
	/* nesting deeper than the tokener allows */
	{
		char deep[400];

		memset(deep, '[', sizeof(deep));
		assert_int_equal(flow_onload_parse_json(deep, sizeof(deep), &d0, err, sizeof(err)),
				 -EINVAL);
	}
}

static void flow_onload_obs__json_two_runs__stalled_waiting_held_healthy(void **state)
{
	struct flow_onload_track t[4];
	struct flow_obs o;
	enum flow_live v[4];
	static const int ids[4] = { 3, 5, 6, 4 };

	(void)state;
	memset(t, 0, sizeof(t));
	load_json(FX "orm_json-sockets-t0.json", &d0);
	load_json(FX "orm_json-sockets-t1.json", &d1);
	for (int i = 0; i < 4; i++)
		flow_onload_obs(sock(&d0, i < 3 ? 2 : 3, ids[i]), NULL, &t[i], 0, &o);
	for (int i = 0; i < 4; i++) {
		v[i] = flow_onload_obs(sock(&d1, i < 3 ? 2 : 3, ids[i]), NULL, &t[i], 300 * MS, &o);
		if (i == 1) {
			assert_int_equal(o.inflight, 64);
			assert_int_equal(o.retrans, 3);
			assert_int_equal(o.src, FLOW_SRC_ONLOAD);
			assert_int_equal(o.pid, 3933257);
			assert_int_equal(o.session, (2ull << 32) | 5);
		}
		if (i == 2)
			assert_int_equal(o.unread, 64);
		if (i == 0)
			assert_int_equal(o.tx_bytes, 3392);
	}
	assert_int_equal(v[0], FLOW_LIVE_PROGRESS);     /* healthy */
	assert_int_equal(v[1], FLOW_LIVE_WAITING);      /* snd_nxt past snd_una, still */
	assert_int_equal(v[2], FLOW_LIVE_HELD);         /* 64 bytes ready, not read */
	assert_int_equal(v[3], FLOW_LIVE_PROGRESS);     /* UDP: delivered moved */
	/* the same again 300 ms later: stalled past a 200 ms threshold */
	flow_onload_obs(sock(&d1, 2, 5), NULL, &t[1], 600 * MS, &o);
	assert_true(flow_live_stalled(&t[1].live, 600 * MS, 200 * MS));
	flow_onload_obs(sock(&d1, 2, 6), NULL, &t[2], 600 * MS, &o);
	assert_true(flow_live_stalled(&t[2].live, 600 * MS, 200 * MS));
	assert_false(flow_live_stalled(&t[0].live, 600 * MS, 200 * MS));
}

static void flow_onload_obs__stack_clock__last_send_time_from_ticks(void **state)
{
	const struct flow_onload_stack *st;
	struct flow_onload_track t = { 0 };
	struct flow_obs o;

	(void)state;
	load_json(FX "orm_json-stack.json", &d0);
	st = flow_onload_stack(&d0, 2);
	/* t_last_sent 990, now 1030 ticks; a tick is 2^21 cycles at 3 GHz:
	 * 40 ticks = 27.96 ms */
	flow_onload_obs(sock(&d0, 2, 5), st, &t, 10000 * MS, &o);
	assert_true(o.last_tx_ns < 10000 * MS - 27 * MS && o.last_tx_ns > 10000 * MS - 29 * MS);
	assert_string_equal(o.engine, "onload:srv");
}

/* The next retransmission from the RTO timer of `orm_json stack`: socket
 * 5 has 64 bytes unacknowledged and its timer at tick 1561, now is 1030:
 * 531 ticks (2^21 cycles at 3 GHz each) = 371.2 ms ahead, rto 571 ticks =
 * 399.2 ms. Socket 3 has nothing outstanding: its cleared timer's old
 * expiry (1286) says nothing. A timer far in the past (cleared long ago),
 * or output without the timer (`orm_json sockets`), gives no retry time. */
static void flow_onload_obs__armed_rto_timer__retry_due_and_rto(void **state)
{
	const struct flow_onload_stack *st;
	struct flow_onload_track t = { 0 };
	struct flow_onload_sock k;
	struct flow_obs o;

	(void)state;
	load_json(FX "orm_json-stack.json", &d0);
	st = flow_onload_stack(&d0, 2);
	assert_true(sock(&d0, 2, 5)->have & FLOW_ONLOAD_HAVE_RTO);
	flow_onload_obs(sock(&d0, 2, 5), st, &t, 10000 * MS, &o);
	assert_int_equal(o.inflight, 64);
	assert_true(o.retry_due_ns > 10000 * MS + 371 * MS && o.retry_due_ns < 10000 * MS + 372 * MS);
	assert_true(o.rto_ns > 399 * MS && o.rto_ns < 400 * MS);
	memset(&t, 0, sizeof(t));
	flow_onload_obs(sock(&d0, 2, 3), st, &t, 10000 * MS, &o);
	assert_int_equal(o.inflight, 0);
	assert_int_equal(o.retry_due_ns, 0);
	assert_int_equal(o.rto_ns, 0);
	/* overdue by less than one rto: due now (the stack's next timer poll) */
	k = *sock(&d0, 2, 5);
	k.rto_time = 1030 - 100;
	memset(&t, 0, sizeof(t));
	flow_onload_obs(&k, st, &t, 10000 * MS, &o);
	assert_int_equal(o.retry_due_ns, 10000 * MS);
	/* far in the past: a stale expiry, unknown */
	k.rto_time = 1030 - 5000;
	memset(&t, 0, sizeof(t));
	flow_onload_obs(&k, st, &t, 10000 * MS, &o);
	assert_int_equal(o.retry_due_ns, 0);
	assert_int_equal(o.rto_ns, 0);
	/* `orm_json sockets` prints rto_tid without its time */
	load_json(FX "orm_json-sockets-t0.json", &d0);
	assert_false(sock(&d0, 2, 5)->have & FLOW_ONLOAD_HAVE_RTO);
	memset(&t, 0, sizeof(t));
	flow_onload_obs(sock(&d0, 2, 5), flow_onload_stack(&d0, 2), &t, 10000 * MS, &o);
	assert_int_equal(o.retry_due_ns, 0);
}

/* ---- stackdump ---- */

static void flow_onload_parse_netstat__fixture__sockets_and_queues(void **state)
{
	char err[256] = "";
	size_t len;
	char *t = slurp(FX "stackdump-netstat.txt", &len);

	(void)state;
	assert_int_equal(flow_onload_parse_netstat(t, len, 2, &d0, err, sizeof(err)), 0);
	assert_int_equal(d0.nsocks, 6);
	assert_int_equal(d0.socks[0].lstate, 10);       /* LISTEN */
	assert_int_equal(d0.socks[2].sendq_pkts, 1);
	assert_int_equal(d0.socks[3].recvq_pkts, 1);
	assert_int_equal(d0.socks[4].proto, IPPROTO_UDP);
	assert_int_equal(ntohs(d0.socks[5].lport), 7000);
	assert_int_equal(d0.socks[5].raddr.s6_addr[15], 1);
	assert_int_equal(d0.socks[5].raddr.s6_addr[0], 0xfd);
	free(t);
}

static void flow_onload_parse_lots__seed001__stack_counters(void **state)
{
	const struct flow_onload_stack *b, *du;
	uint64_t v0, v1;

	(void)state;
	load_lots(FX "stackdump-lots-0042-before.txt", &d0);
	load_lots(FX "stackdump-lots-0044-during.txt", &d1);
	b = flow_onload_stack(&d0, 2);
	du = flow_onload_stack(&d1, 2);
	assert_non_null(b);
	assert_non_null(du);
	assert_string_equal(du->name, "srv");
	assert_int_equal(du->pid, 3933257);
	assert_true(flow_onload_counter(b, "tcp_send_nonb_pool_empty", &v0));
	assert_true(flow_onload_counter(du, "tcp_send_nonb_pool_empty", &v1));
	assert_int_equal(v0, 27);
	assert_int_equal(v1, 39);
	assert_true(flow_onload_counter(du, "tcp_send_ni_lock_contends", &v1));
	assert_int_equal(v1, 38);
	assert_true(flow_onload_counter(b, "lock_wakes", &v0));
	assert_true(flow_onload_counter(du, "lock_wakes", &v1));
	assert_int_equal(v1 - v0, 12438);
	assert_true(flow_onload_counter(du, "pkt_bufs_free", &v1));
	assert_int_equal(v1, 392);
	assert_true(flow_onload_counter(du, "nonb_pool", &v1));
	assert_int_equal(v1, 1);
	/* config options and environments are not counters */
	assert_false(flow_onload_counter(du, "ci_netif_config_opts_dump", &v1));
	assert_false(flow_onload_counter(du, "EF_POLL_USEC", &v1));
	assert_int_equal(d1.nsocks, 3);
}

static void flow_onload_obs__lots_before_during__waiting_and_held(void **state)
{
	struct flow_onload_track t[3];
	struct flow_obs o;
	enum flow_live v;

	(void)state;
	memset(t, 0, sizeof(t));
	load_lots(FX "stackdump-lots-0042-before.txt", &d0);
	load_lots(FX "stackdump-lots-0044-during.txt", &d1);
	for (int i = 0; i < 3; i++)
		flow_onload_obs(&d0.socks[i], flow_onload_stack(&d0, 2), &t[i], 0, &o);
	/* socket 5: a send left (snd_nxt +64), no ack: waiting from now */
	v = flow_onload_obs(sock(&d1, 2, 5), flow_onload_stack(&d1, 2), &t[1], 200 * MS, &o);
	assert_int_equal(v, FLOW_LIVE_WAITING);
	assert_int_equal(o.inflight, 64);
	v = flow_onload_obs(sock(&d1, 2, 5), flow_onload_stack(&d1, 2), &t[1], 400 * MS, &o);
	assert_int_equal(v, FLOW_LIVE_WAITING);
	assert_int_equal(t[1].live.bad_since_ns, 200 * MS);     /* since the send */
	assert_false(flow_live_stalled(&t[1].live, 399 * MS, 200 * MS));
	assert_true(flow_live_stalled(&t[1].live, 400 * MS, 200 * MS));
	/* socket 6: 64 bytes the application never reads */
	v = flow_onload_obs(sock(&d1, 2, 6), NULL, &t[2], 200 * MS, &o);
	assert_int_equal(v, FLOW_LIVE_HELD);
	assert_int_equal(o.unread, 64);
	assert_string_equal(o.engine, "onload:?");
	/* socket 3 keeps an even balance: idle, not waiting */
	v = flow_onload_obs(sock(&d1, 2, 3), NULL, &t[0], 200 * MS, &o);
	assert_true(v == FLOW_LIVE_IDLE || v == FLOW_LIVE_PROGRESS);
}

static void flow_onload_scrub__process_env__removed(void **state)
{
	size_t len, olen;
	char *t = slurp(FX "stackdump-lots-0044-during.txt", &len), *s;

	(void)state;
	assert_non_null(strstr(t, "SECRET_TOKEN"));
	s = flow_onload_scrub(t, len, &olen);
	assert_non_null(s);
	assert_null(strstr(s, "SECRET_TOKEN"));
	assert_null(strstr(s, "cmdline:"));
	assert_non_null(strstr(s, "process env (removed by nicstalld"));
	assert_non_null(strstr(s, "lock_wakes: 12438"));
	assert_int_equal(strlen(s), olen);
	free(s);
	/* control bytes never reach a bundle */
	s = flow_onload_scrub("a\x1b[2Jb\n", 7, &olen);
	assert_string_equal(s, "a?[2Jb\n");
	free(s);
	free(t);
}

/* issue 34 finding 8: an environment value holds newlines, and in them a
 * forged "====" line, a forged ": stack=" line, a forged section header
 * and forged counters; two processes follow. Not one byte of any value may
 * reach the evidence (the landed scrub resumed at the forged lines). */
static void flow_onload_scrub__env_value_with_forged_lines__nothing_kept(void **state)
{
	static const char *const secrets[] = {
		"SECRET-A1", "SECRET-A2", "SECRET-A3", "SECRET-A4", "SECRET-B1", "SECRET-C1",
	};
	char *t = NULL, *s;
	size_t len = 0, olen;
	FILE *f = open_memstream(&t, &len);

	(void)state;
	assert_non_null(f);
	fputs("============================================================\n"
	      "ci_netif_dump_to_logger: stack=2 name=srv\n"
	      "  mlx5 9.0.2 uid=1000 pid=4242 ns_flags=0\n"
	      "--------------------- stats ------------------------------\n"
	      "lock_wakes: 12438\n"
	      "--------------------- stack time ---------------------------\n"
	      "  time constant: 1 ms\n"
	      "--------------------- process env --------------------------\n"
	      "--------------------------------------------\n"
	      "PID: 4242 Thread: 4242 Cpus_allowed: ff voluntary_ctxt_switches: 1 "
	      "nonvoluntary_ctxt_switches: 0 priority: 0 realtime: 0\n"
	      "cmdline: ./srv --token SECRET-A1\n"
	      "env: EF_NAME=x SECRET-A2\n"
	      "============================================================\n"
	      "ci_netif_dump_to_logger: stack=3 name=SECRET-A3\n"
	      "--------------------- stats ------------------------------\n"
	      "lock_wakes: 99 SECRET-A4\n"
	      "env: LD_PRELOAD=libonload.so\n"
	      "--------------------------------------------\n"
	      "PID: 4343 Thread: 4343 Cpus_allowed: ff\n"
	      "cmdline: ./cli SECRET-B1\n"
	      "env: TP_LOG=SECRET-C1\n"
	      "--------------------------------------------\n", f);
	fclose(f);
	s = flow_onload_scrub(t, len, &olen);
	assert_non_null(s);
	assert_int_equal(strlen(s), olen);
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (strstr(s, secrets[i]))
			fail_msg("%s reached the evidence:\n%s", secrets[i], s);
	assert_null(strstr(s, "env: "));
	assert_null(strstr(s, "cmdline"));
	assert_null(strstr(s, "LD_PRELOAD"));
	assert_null(strstr(s, "stack=3"));
	/* what Onload printed before the section stays */
	assert_non_null(strstr(s, "ci_netif_dump_to_logger: stack=2 name=srv\n"));
	assert_non_null(strstr(s, "lock_wakes: 12438\n"));
	assert_non_null(strstr(s, "time constant: 1 ms\n"));
	assert_non_null(strstr(s, "process env (removed by nicstalld"));
	free(s);
	/* without the header (another Onload's layout): "env: " and
	 * "cmdline: " lines open the section all the same */
	s = flow_onload_scrub("lock_wakes: 1\ncmdline: x SECRET-A1\nenv: EF_A=SECRET-A2\n", 55, &olen);
	assert_null(strstr(s, "SECRET"));
	assert_non_null(strstr(s, "lock_wakes: 1\n"));
	free(s);
	free(t);
}

/* The parser (the poll's text) reads nothing after a printed environment:
 * a value's newlines could forge a stack, its name and its counters. */
static void flow_onload_parse_lots__env_value_forges_stack__not_read(void **state)
{
	static const char txt[] =
		"============================================================\n"
		"ci_netif_dump_to_logger: stack=2 name=srv\n"
		"--------------------- stats ------------------------------\n"
		"lock_wakes: 12\n"
		"--------------------- process env --------------------------\n"
		"--------------------------------------------\n"
		"cmdline: ./srv\n"
		"env: EF_NAME=x\n"
		"============================================================\n"
		"ci_netif_dump_to_logger: stack=7 name=SECRET\n"
		"--------------------- stats ------------------------------\n"
		"lock_wakes: 99\n";
	char err[256] = "";
	uint64_t v = 0;

	(void)state;
	assert_int_equal(flow_onload_parse_lots(txt, sizeof(txt) - 1, &d0, err, sizeof(err)), 0);
	assert_non_null(flow_onload_stack(&d0, 2));
	assert_int_equal(flow_onload_counter(flow_onload_stack(&d0, 2), "lock_wakes", &v), 1);
	assert_int_equal(v, 12);
	assert_null(flow_onload_stack(&d0, 7));
}

static void flow_onload_parse_lots__garbage__no_stack(void **state)
{
	char err[256] = "";
	static const char junk[] = "TCP 2:3 lcl=x rmt=y ESTABLISHED\nlock_wakes: 5\n";

	(void)state;
	assert_int_equal(flow_onload_parse_lots(junk, sizeof(junk) - 1, &d0, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no stack"));
}

/* The record's counters and the stack's options, each line as Onload
 * prints it: stats_dump.h ci_dump_stats() "%s: %u"; netif_debug.c
 * ci_netif_dump_pkt_summary() "  pkt_bufs: max=%d alloc=%d free=%d
 * async=%d%s"; ci_netif_dump_extra_to_logger() "  tx_may_alloc=%d can=%d
 * nonb_pool=%d is_spinner=%d,%d"; ci_netif_config_opts_dump() "%30s: %u"
 * or "%30s: %u (default: %u)". */
static void flow_onload_parse_lots__onload_format__record_counters_and_options(void **state)
{
	const struct flow_onload_stack *st;
	static const struct { const char *name; uint64_t v; } want[] = {
		{ "lock_wakes", 12438 }, { "tcp_send_ni_lock_contends", 38 },
		{ "tcp_send_nonb_pool_empty", 39 }, { "pkt_bufs_free", 392 },
		{ "pkt_bufs_alloc", 1024 }, { "pkt_bufs_max", 32768 }, { "nonb_pool", 1 },
		{ "pkt_wait_spin", 0 }, { "reap_buf_limited", 0 }, { "refill_rx_limited", 0 },
		{ "refill_buf_limited", 0 }, { "defer_work_limited", 0 },
	};
	uint64_t v;

	(void)state;
	load_lots(FX "stackdump-lots-0044-during.txt", &d1);
	st = flow_onload_stack(&d1, 2);
	assert_non_null(st);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (flow_onload_counter(st, want[i].name, &v) != 1)
			fail_msg("%s absent", want[i].name);
		assert_int_equal(v, want[i].v);
	}
	assert_int_equal(flow_onload_opt(st, "EF_BUZZ_USEC", &v), 1);
	assert_int_equal(v, 100);
	assert_int_equal(flow_onload_opt(st, "EF_SPIN_USEC", &v), 1);
	assert_int_equal(v, 100000);
	assert_int_equal(flow_onload_opt(st, "EF_MAX_PACKETS", &v), 1);
	assert_int_equal(v, 32768);
	/* Onload 9 prints no EF_POLL_USEC among the stack's options */
	assert_int_equal(flow_onload_opt(st, "EF_POLL_USEC", &v), 0);
	assert_int_equal(d1.cut, 0);
}

/* An older Onload without some counters, and the `opts` command's header:
 * what is not printed is absent, never 0; a value that is not a count
 * (a string option, a negative level) is no value. */
static void flow_onload_parse_lots__older_dump__missing_counters_absent(void **state)
{
	static const char txt[] =
		"============================================================\n"
		"ci_netif_dump_to_logger: stack=4 name=old\n"
		"  pkt_bufs: max=16384 alloc=512 free=-3 async=0 LOW\n"
		"  tx_may_alloc=1 can=1 is_spinner=0,0\n"
		"-------------------- ci_netif_stats: 4 ---------------------\n"
		"lock_wakes: 7\n"
		"tcp_send_ni_lock_contends: 3\n"
		"ci_netif_config_opts_dump: 4\n"
		"                  EF_SPIN_USEC: 0\n"
		"                  EF_BUZZ_USEC: 50 (default: 0)\n"
		"        EF_CLUSTER_NAME_STRING: \"x\"\n";
	const struct flow_onload_stack *st;
	char err[256] = "";
	uint64_t v;

	(void)state;
	assert_int_equal(flow_onload_parse_lots(txt, sizeof(txt) - 1, &d0, err, sizeof(err)), 0);
	st = flow_onload_stack(&d0, 4);
	assert_non_null(st);
	assert_int_equal(flow_onload_counter(st, "lock_wakes", &v), 1);
	assert_int_equal(v, 7);
	assert_int_equal(flow_onload_counter(st, "tcp_send_nonb_pool_empty", &v), 0);
	assert_int_equal(flow_onload_counter(st, "refill_buf_limited", &v), 0);
	assert_int_equal(flow_onload_counter(st, "nonb_pool", &v), 0);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_free", &v), 0);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_alloc", &v), 1);
	assert_int_equal(v, 512);
	assert_int_equal(flow_onload_opt(st, "EF_SPIN_USEC", &v), 1);
	assert_int_equal(v, 0);
	assert_int_equal(flow_onload_opt(st, "EF_BUZZ_USEC", &v), 1);
	assert_int_equal(v, 50);
}

/* Output cut inside a line (the cap, a killed tool): "lock_wakes: 12438"
 * cut to "lock_wakes: 124" is not read; the lines before it are. */
static void flow_onload_parse_lots__truncated__cut_line_not_read(void **state)
{
	size_t len;
	char *t = slurp(FX "stackdump-lots-0044-during.txt", &len), err[256] = "";
	const char *cut = strstr(t, "lock_wakes: 12438");
	const struct flow_onload_stack *st;
	uint64_t v;

	(void)state;
	assert_non_null(cut);
	assert_int_equal(flow_onload_parse_lots(t, (size_t)(cut - t) + strlen("lock_wakes: 124"),
						&d0, err, sizeof(err)), 0);
	assert_int_equal(d0.cut, 1);
	st = flow_onload_stack(&d0, 2);
	assert_non_null(st);
	assert_int_equal(flow_onload_counter(st, "lock_wakes", &v), 0);
	assert_int_equal(flow_onload_counter(st, "unlock_slow_pkt_waiter", &v), 1);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_free", &v), 1);
	assert_int_equal(v, 392);
	assert_int_equal(flow_onload_opt(st, "EF_BUZZ_USEC", &v), 0);
	free(t);
}

/* Numbers a hostile or broken tool could print: over 64 bits, signed,
 * with trailing junk or exponent: absent, never wrapped or clamped. */
static void flow_onload_parse_lots__hostile_numbers__absent(void **state)
{
	static const char txt[] =
		"============================================================\n"
		"ci_netif_dump_to_logger: stack=2 name=srv\n"
		"  pkt_bufs: max=99999999999999999999999 alloc=18446744073709551615 free=+5 async=0\n"
		"  tx_may_alloc=1 can=1 nonb_pool=18446744073709551616 is_spinner=0,0\n"
		"-------------------- ci_netif_stats: 2 ---------------------\n"
		"lock_wakes: 99999999999999999999999\n"
		"tcp_send_ni_lock_contends: 18446744073709551615\n"
		"tcp_send_nonb_pool_empty: 18446744073709551616\n"
		"pkt_wait_spin: 12 junk\n"
		"reap_buf_limited: -1\n"
		"--------------------- config opts --------------------------\n"
		"                  EF_SPIN_USEC: 1e9\n"
		"                  EF_BUZZ_USEC: 4294967295 (default: 0)\n"
		"                EF_MAX_PACKETS: 7 (default: 32768) trailing\n";
	const struct flow_onload_stack *st;
	char err[256] = "";
	uint64_t v;

	(void)state;
	assert_int_equal(flow_onload_parse_lots(txt, sizeof(txt) - 1, &d0, err, sizeof(err)), 0);
	st = flow_onload_stack(&d0, 2);
	assert_non_null(st);
	assert_int_equal(flow_onload_counter(st, "lock_wakes", &v), 0);
	assert_int_equal(flow_onload_counter(st, "tcp_send_ni_lock_contends", &v), 1);
	assert_true(v == UINT64_MAX);
	assert_int_equal(flow_onload_counter(st, "tcp_send_nonb_pool_empty", &v), 0);
	assert_int_equal(flow_onload_counter(st, "pkt_wait_spin", &v), 0);
	assert_int_equal(flow_onload_counter(st, "reap_buf_limited", &v), 0);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_max", &v), 0);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_alloc", &v), 1);
	assert_true(v == UINT64_MAX);
	assert_int_equal(flow_onload_counter(st, "pkt_bufs_free", &v), 0);
	assert_int_equal(flow_onload_counter(st, "nonb_pool", &v), 0);
	assert_int_equal(flow_onload_opt(st, "EF_SPIN_USEC", &v), 0);
	assert_int_equal(flow_onload_opt(st, "EF_BUZZ_USEC", &v), 1);
	assert_int_equal(v, 4294967295u);
	assert_int_equal(flow_onload_opt(st, "EF_MAX_PACKETS", &v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_onload_parse_json__sockets_fixture__fields_decoded),
		cmocka_unit_test(flow_onload_parse_json__stack_state__name_pid_and_clock),
		cmocka_unit_test(flow_onload_parse_json__flat_and_hostile__handled),
		cmocka_unit_test(flow_onload_obs__json_two_runs__stalled_waiting_held_healthy),
		cmocka_unit_test(flow_onload_obs__stack_clock__last_send_time_from_ticks),
		cmocka_unit_test(flow_onload_obs__armed_rto_timer__retry_due_and_rto),
		cmocka_unit_test(flow_onload_parse_netstat__fixture__sockets_and_queues),
		cmocka_unit_test(flow_onload_parse_lots__seed001__stack_counters),
		cmocka_unit_test(flow_onload_obs__lots_before_during__waiting_and_held),
		cmocka_unit_test(flow_onload_scrub__process_env__removed),
		cmocka_unit_test(flow_onload_scrub__env_value_with_forged_lines__nothing_kept),
		cmocka_unit_test(flow_onload_parse_lots__env_value_forges_stack__not_read),
		cmocka_unit_test(flow_onload_parse_lots__garbage__no_stack),
		cmocka_unit_test(flow_onload_parse_lots__onload_format__record_counters_and_options),
		cmocka_unit_test(flow_onload_parse_lots__older_dump__missing_counters_absent),
		cmocka_unit_test(flow_onload_parse_lots__truncated__cut_line_not_read),
		cmocka_unit_test(flow_onload_parse_lots__hostile_numbers__absent),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
