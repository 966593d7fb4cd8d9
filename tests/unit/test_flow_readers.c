/* Unit tests: the flow-source drivers of the readers of unmodified engines
 * (collectors/flows/src_{rdmaqp,onload}.c) behind flow_src_ops, on crafted
 * inputs: RDMA netlink replies through the recorded-reply path, Onload tool
 * output through a fake runner (the libvma/libxlio driver:
 * test_flow_src_vma.c).
 *
 * Also a writer of crafted QP dumps for the system tests:
 *   test_flow_readers --write-qp DIR [--dev NAME] [--index N] QP...
 * QP is LQPN:TYPE:STATE:SQ_PSN:RQ_PSN[:PORT[:RQPN]] (numbers, TYPE 2 RC,
 * STATE 3 RTS, 6 ERR): DIR/dev-get.nlhex and DIR/res-qp-get.nlhex are
 * written atomically (a running daemon reads the old or the new). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "collectors/counters/devlink_health.h"
#include "collectors/flows/flow_live.h"
#include "collectors/flows/onload_parse.h"
#include "collectors/flows/rdmaqp_parse.h"
#include "collectors/flows/vma_parse.h"
#include "collectors/flows/flowsrc.h"
#include "lib/nlhex.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/util.h"

#include "coretest.h"
#include "nstest.h"
#include "qpmsg.h"
#include "readtest.h"

/* ================================================================ QP dumps */

/* NLMSG_DONE (an int 0) after the len bytes at buf: the new length. */
static size_t put_done(uint8_t *buf, size_t len)
{
	struct nlmsghdr *done = mnl_nlmsg_put_header(buf + len);

	done->nlmsg_type = NLMSG_DONE;
	mnl_nlmsg_put_extra_header(done, sizeof(int));
	return len + done->nlmsg_len;
}

/* The device lookup reply (nldev.c fill_nldev_handle), then NLMSG_DONE. */
static size_t craft_dev(uint8_t *buf, uint32_t index, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	return put_done(buf, MNL_ALIGN(nlh->nlmsg_len));
}

/* A RES_QP_GET dump as nldev.c res_get_common_dumpit() and
 * fill_res_qp_entry() send it, one QP entry each, then NLMSG_DONE. */
static size_t craft_qps(uint8_t *buf, uint32_t index, const char *name, const struct cqp *q,
			unsigned n)
{
	return put_done(buf, MNL_ALIGN(qpmsg_put(buf, 0, index, name, q, n)));
}

/* Write DIR/NAME through a temporary file and rename (atomic). */
static int put_nlhex(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char tmp[PATH_MAX], path[PATH_MAX], e[256];

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(tmp);
	if (nlhex_write(tmp, "crafted by tests/unit/test_flow_readers.c", buf, len, e,
			    sizeof(e)) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "%s: %s\n", path, e);
		return -1;
	}
	return 0;
}

static uint8_t qbuf[65536] __attribute__((aligned(8)));

static int write_qps(const char *dir, uint32_t index, const char *dev, const struct cqp *q,
		     unsigned n)
{
	size_t len = craft_dev(qbuf, index, dev);

	if (put_nlhex(dir, "dev-get.nlhex", qbuf, len) < 0)
		return -1;
	len = craft_qps(qbuf, index, dev, q, n);
	return put_nlhex(dir, "res-qp-get.nlhex", qbuf, len);
}

static int write_qp_main(int argc, char **argv)
{
	struct cqp q[64];
	const char *dev = "mlx5_0";
	uint32_t index = 1;
	unsigned n = 0;

	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
			dev = argv[++i];
		} else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
			index = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (n < 64) {
			unsigned v[7] = { 0, 2, 3, 0, 0, 1, 0x500 };
			char *p = argv[i];

			for (int k = 0; k < 7 && *p; k++) {
				v[k] = (unsigned)strtoul(p, &p, 0);
				if (*p == ':')
					p++;
				else if (*p) {
					fprintf(stderr, "--write-qp: bad QP '%s'\n", argv[i]);
					return 2;
				}
			}
			q[n++] = (struct cqp){ .lqpn = v[0], .type = (uint8_t)v[1],
					       .state = (uint8_t)v[2], .sq_psn = v[3], .rq_psn = v[4],
					       .port = v[5], .rqpn = v[6], .pid = 4242 };
		}
	}
	return write_qps(argv[2], index, dev, q, n) < 0 ? 1 : 0;
}

/* ================================================================ rdmaqp */

#define SESS(lqpn) ((1ull << 32) | (lqpn))

static void flow_src_rdmaqp__crafted_dumps__healthy_waiting_failed_and_evidence(void **state)
{
	char *dir = coretest_tmpdir();
	struct flow_src_ctx ctx = { .port_name = "p", .netns_fd = -1, .rdma_dev = "mlx5_0",
				    .rdma_port = 1, .interval_ns = 1 };
	struct flow_src s = { 0 };
	struct cqp q[5] = {
		/* A healthy ping-pong about to wrap its 24-bit PSNs */
		{ .port = 1, .lqpn = 0x11, .rqpn = 0x21, .sq_psn = 0xfffffe, .rq_psn = 0xfffffe, .type = 2, .state = 3 },
		/* B: requests go out, responses stop coming */
		{ .port = 1, .lqpn = 0x12, .rqpn = 0x22, .sq_psn = 100, .rq_psn = 50, .type = 2, .state = 3 },
		/* C: in ERR */
		{ .port = 1, .lqpn = 0x13, .rqpn = 0x23, .sq_psn = 7, .rq_psn = 7, .type = 2, .state = 3 },
		/* D: the other RDMA port; E: no port yet */
		{ .port = 2, .lqpn = 0x14, .rqpn = 0x24, .sq_psn = 1, .rq_psn = 1, .type = 2, .state = 3 },
		{ .port = 0, .lqpn = 0x15, .sq_psn = 0, .type = 2, .state = 1 },
	};
	struct json_object *out = json_object_new_object(), *st = json_object_new_object();
	struct flow_src_ref ref = { .src = FLOW_SRC_RDMAQP, .session = SESS(0x12) };
	struct nstest_obs g;
	const struct flow_obs *o;
	uint64_t dumped, last_poll = 0;

	(void)state;
	ctx.replies_dir = dir;
	/* without a reply file for the device: refused, naming it */
	assert_int_not_equal(flow_src_rdmaqp_ops.open(&s, &ctx), 0);
	assert_non_null(strstr(s.err, "dev-get.nlhex"));
	assert_int_equal(write_qps(dir, 1, "mlx5_1", q, 5), 0);
	assert_int_equal(flow_src_rdmaqp_ops.open(&s, &ctx), -ENODEV);
	assert_non_null(strstr(s.err, "mlx5_0"));
	assert_int_equal(write_qps(dir, 1, "mlx5_0", q, 5), 0);
	assert_int_equal(flow_src_rdmaqp_ops.open(&s, &ctx), 0);
	g.n = 0;
	assert_int_equal(flow_src_rdmaqp_ops.poll(&s, nstest_collect, &g), 3);  /* D, E left out */
	assert_null(by_session(&g, SESS(0x14)));
	assert_null(by_session(&g, SESS(0x15)));
	for (int round = 1; round <= 4; round++) {
		q[0].sq_psn = (q[0].sq_psn + 1) & 0xffffff;     /* A wraps through 0 */
		q[0].rq_psn = (q[0].rq_psn + 1) & 0xffffff;
		if (round == 1) {
			q[1].sq_psn++;                      /* a request and its response */
			q[1].rq_psn++;
		} else if (round == 2) {
			q[1].sq_psn++;                      /* a request, no response */
		}
		if (round == 2)
			q[2].state = FLOW_QPS_ERR;
		assert_int_equal(write_qps(dir, 1, "mlx5_0", q, 5), 0);
		usleep(1000);
		g.n = 0;
		last_poll = loop_mono_ns();
		assert_int_equal(flow_src_rdmaqp_ops.poll(&s, nstest_collect, &g), 3);
	}
	o = by_session(&g, SESS(0x11));
	assert_non_null(o);
	assert_int_equal(flow_live_of(o), FLOW_LIVE_PROGRESS);
	assert_int_equal(o->tx_msgs, 4);        /* 0xfffffe -> 0x000002: 4, not 16M */
	o = by_session(&g, SESS(0x12));
	assert_int_equal(flow_live_of(o), FLOW_LIVE_WAITING);
	assert_true(o->live_since_ns > 0);
	/* dated by its dump (flow_obs.data_ns) */
	dumped = o->data_ns;
	assert_true(dumped >= last_poll && dumped <= loop_mono_ns());  /* the last dump's */
	o = by_session(&g, SESS(0x13));
	assert_int_equal(flow_live_of(o), FLOW_LIVE_FAILED);
	/* evidence: the involved QP's entry, and the QP that is not in RTS */
	assert_int_equal(flow_src_rdmaqp_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done,
						      NULL), 0);
	assert_int_equal(jx_len(jx_arr(out, "involved")), 1);
	assert_int_equal(jx_u64(json_object_array_get_idx(jx_arr(out, "involved"), 0), "lqpn"),
			 0x12);
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(out, "involved"), 0),
				   "verdict"), "waiting");
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(out, "not_rts"), 0), "state"),
			    "ERR");
	flow_src_rdmaqp_ops.status(&s, st);
	assert_int_equal(jx_u64(st, "qps"), 3);
	assert_int_equal(jx_u64(st, "device_index"), 1);
	/* a garbage reply: the poll fails with the file named, the flows stay */
	{
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s/res-qp-get.nlhex", dir);
		f = fopen(path, "w");
		fputs("ffffffff 0000\n", f);
		fclose(f);
		usleep(1000);
		g.n = 0;
		assert_true(flow_src_rdmaqp_ops.poll(&s, nstest_collect, &g) < 0);
		assert_non_null(strstr(s.err, "res-qp-get.nlhex"));
		assert_int_equal(g.n, 3);
		/* emitted again, still of the last dump that worked */
		assert_int_equal(by_session(&g, SESS(0x12))->data_ns, dumped);
	}
	flow_src_rdmaqp_ops.close(&s);
	json_object_put(out);
	json_object_put(st);
	coretest_rmdir(dir);
}

/* ================================================================ onload */

struct fakejob {
	char argv[6][128];
	int argc;
	flow_src_run_fn done;
	void *arg;
	int live;
};
static struct fakejob jobs[16];
static unsigned njobs, ncancel;

static void *fake_start(void *ctx, const char *const *argv, int nsfd, uint64_t timeout_ns,
			size_t max_output, flow_src_run_fn done, void *arg, char *err,
			size_t errlen)
{
	struct fakejob *j = &jobs[njobs % 16];

	(void)ctx;
	(void)err;
	(void)errlen;
	assert_int_equal(nsfd, -1);
	assert_true(timeout_ns > 0 && timeout_ns <= 5000000000ull);
	assert_true(max_output > 0 && max_output <= FLOW_ONLOAD_MAX_TEXT);
	memset(j, 0, sizeof(*j));
	for (j->argc = 0; argv[j->argc] && j->argc < 6; j->argc++)
		snprintf(j->argv[j->argc], sizeof(j->argv[0]), "%s", argv[j->argc]);
	j->done = done;
	j->arg = arg;
	j->live = 1;
	njobs++;
	return j;
}

static void fake_cancel(void *ctx, void *job)
{
	(void)ctx;
	((struct fakejob *)job)->live = 0;
	ncancel++;
}

static const struct flow_src_runner fake_run = { fake_start, fake_cancel, NULL };

static char *slurp(const char *name, size_t *len)
{
	char path[PATH_MAX], *t;

	snprintf(path, sizeof(path), "tests/fixtures/onload/%s", name);
	t = util_read_file(path, FLOW_ONLOAD_MAX_TEXT, len);
	assert_non_null(t);
	return t;
}

static void finish(struct fakejob *j, const char *out, size_t len, int ok, int not_found)
{
	struct flow_src_run_result r = { .ok = ok, .not_found = not_found, .out = out, .len = len,
					 .error = ok ? "" : not_found ? "command not found" : "exit 1",
					 .cost_ns = 1000000 };

	assert_true(j->live);
	j->live = 0;
	j->done(&r, j->arg);
}

#define OSESS(stack, sock) (((uint64_t)(stack) << 32) | (sock))

static void flow_src_onload__tools__json_polls_fallback_and_scrubbed_stackdump(void **state)
{
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1, .run = &fake_run,
				    .tools_dir = "/opt/onload/bin" };
	struct flow_src s = { 0 };
	struct json_object *out = json_object_new_object(), *st;
	struct flow_src_ref ref = { .src = FLOW_SRC_ONLOAD, .session = OSESS(2, 5) };
	size_t l0, l1, ll;
	char *t0 = slurp("orm_json-sockets-t0.json", &l0), *t1 = slurp("orm_json-sockets-t1.json", &l1);
	char *lots = slurp("stackdump-lots-0044-during.txt", &ll), *two = NULL;
	struct nstest_obs g;
	struct fakejob *running;
	unsigned first;
	uint64_t ta, tb;

	(void)state;
	njobs = ncancel = 0;
	assert_int_equal(flow_src_onload_ops.open(&s, &ctx), 0);
	/* the first poll starts orm_json, without a shell */
	g.n = 0;
	assert_int_equal(flow_src_onload_ops.poll(&s, nstest_collect, &g), 0);
	assert_int_equal(njobs, 1);
	assert_string_equal(jobs[0].argv[0], "/opt/onload/bin/orm_json");
	assert_string_equal(jobs[0].argv[1], "stack");
	assert_string_equal(jobs[0].argv[2], "stats");
	/* one at a time: no second run while the first one runs */
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	assert_int_equal(njobs, 1);
	finish(&jobs[0], t0, l0, 1, 0);
	usleep(1000);
	g.n = 0;
	ta = loop_mono_ns();
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	tb = loop_mono_ns();
	first = g.n;
	assert_true(first >= 3);
	assert_int_equal(njobs, 2);
	finish(&jobs[1], t1, l1, 1, 0);
	usleep(1000);
	g.n = 0;
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 3))), FLOW_LIVE_PROGRESS);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 5))), FLOW_LIVE_WAITING);
	/* dated by the run it came from (its start), not by this poll */
	assert_true(by_session(&g, OSESS(2, 5))->data_ns >= ta &&
		    by_session(&g, OSESS(2, 5))->data_ns <= tb);
	assert_int_equal(flow_live_of(by_session(&g, OSESS(2, 6))), FLOW_LIVE_HELD);
	assert_int_equal(by_session(&g, OSESS(2, 6))->unread, 64);
	assert_int_equal(by_session(&g, OSESS(2, 5))->inflight, 64);
	running = &jobs[(njobs - 1) % 16];      /* that poll started the next run */
	assert_string_equal(running->argv[0], "/opt/onload/bin/orm_json");
	/* evidence: the involved stack's stackdump, --nolock --nopids, scrubbed */
	{
		unsigned before = njobs;
		struct json_object *stack;
		const char *text;

		evid_calls = 0;
		usleep(2000);   /* past the fake poll's 1 ms run */
		assert_int_equal(flow_src_onload_ops.evidence(&s, &ref, 1, "at_stall", out, evid_done,
							      out), 1);
		assert_int_equal(njobs, before + 1);
		struct fakejob *j = &jobs[before % 16];

		assert_string_equal(j->argv[0], "/opt/onload/bin/onload_stackdump");
		assert_string_equal(j->argv[1], "--nolock");
		assert_string_equal(j->argv[2], "--nopids");
		assert_string_equal(j->argv[3], "2");
		assert_string_equal(j->argv[4], "lots");
		assert_int_equal(jx_len(jx_arr(out, "sockets")), 1);
		finish(j, lots, ll, 1, 0);
		assert_int_equal(evid_calls, 1);
		stack = json_object_array_get_idx(jx_arr(out, "stacks"), 0);
		text = jx_str(stack, "lots");
		assert_non_null(text);
		assert_null(strstr(text, "SECRET"));
		assert_non_null(strstr(text, "removed by nicstalld"));
		assert_int_equal(jx_u64(jx_obj(stack, "counters"), "lock_wakes"), 12438);
		assert_int_equal(jx_u64(jx_obj(stack, "counters"), "tcp_send_nonb_pool_empty"), 39);
		/* the record's method: this dump is "during", with its run's
		 * times; the last periodic poll is "before", with its age */
		assert_string_equal(jx_str(stack, "dump"), "during");
		assert_true(jx_u64(stack, "start_mono_ns") > 0);
		assert_int_equal(jx_u64(stack, "end_mono_ns") - jx_u64(stack, "start_mono_ns"), 1000000);
		assert_true(jx_u64(stack, "start_real_ns") > 0);
		assert_non_null(jx_str(stack, "start_utc"));
		assert_int_equal(jx_u64(jx_obj(stack, "opts"), "EF_BUZZ_USEC"), 100);
		{
			struct json_object *b = jx_obj(stack, "before");

			assert_non_null(b);
			assert_string_equal(jx_str(b, "dump"), "before");
			assert_non_null(strstr(jx_str(b, "from"), "orm_json"));
			assert_true(jx_u64(b, "start_mono_ns") > 0);
			assert_true(jx_u64(b, "end_mono_ns") == jx_u64(b, "start_mono_ns") + 1000000);
			assert_true(jx_u64(b, "end_mono_ns") <= jx_u64(stack, "start_mono_ns"));
			assert_non_null(jx_get(b, "age_ms"));
			assert_non_null(jx_obj(b, "counters"));
			assert_null(jx_get(b, "lots"));
			assert_non_null(jx_str(b, "no_text"));
		}
	}
	/* a cancelled evidence run never calls back */
	{
		unsigned c = ncancel;

		assert_int_equal(flow_src_onload_ops.evidence(&s, &ref, 1, "after", out, evid_done,
							      &s), 1);
		flow_src_onload_ops.evidence_cancel(&s, &s);
		assert_int_equal(ncancel, c + 1);
	}
	/* orm_json missing: onload_stackdump --nolock --nopids lots instead
	 * (no process environment printed: issue 34 finding 8) */
	{
		struct fakejob *j = running;

		finish(j, "", 0, 0, 1);
		j = &jobs[(njobs - 1) % 16];
		assert_string_equal(j->argv[0], "/opt/onload/bin/onload_stackdump");
		assert_string_equal(j->argv[1], "--nolock");
		assert_string_equal(j->argv[2], "--nopids");
		assert_string_equal(j->argv[3], "lots");
		assert_int_equal(j->argc, 4);
		/* two stacks in the poll's text: stack 3 after stack 2 */
		two = malloc(2 * ll + 1);
		assert_non_null(two);
		memcpy(two, lots, ll);
		memcpy(two + ll, lots, ll);
		two[2 * ll] = '\0';
		for (char *q = two + ll; (q = strstr(q, "stack=2")); )
			q[6] = '3';
		finish(j, two, 2 * ll, 1, 0);
	}
	/* in stackdump mode the "before" is that poll's text of the stack,
	 * scrubbed, with its values and options */
	{
		struct json_object *o2 = json_object_new_object(), *b;
		unsigned before = njobs;

		assert_int_equal(flow_src_onload_ops.evidence(&s, &ref, 1, "at_stall", o2, evid_done,
							      o2), 1);
		b = jx_obj(json_object_array_get_idx(jx_arr(o2, "stacks"), 0), "before");
		assert_non_null(b);
		assert_non_null(strstr(jx_str(b, "from"), "onload_stackdump"));
		assert_non_null(jx_str(b, "lots"));
		assert_non_null(strstr(jx_str(b, "lots"), "ci_netif_dump_to_logger: stack=2 name=srv"));
		assert_null(strstr(jx_str(b, "lots"), "stack=3"));
		assert_non_null(strstr(jx_str(b, "lots"), "lock_wakes: 12438"));
		assert_null(strstr(jx_str(b, "lots"), "SECRET"));
		assert_int_equal(jx_u64(jx_obj(b, "counters"), "lock_wakes"), 12438);
		assert_int_equal(jx_u64(jx_obj(b, "counters"), "pkt_bufs_free"), 392);
		assert_true(jx_bool(jx_obj(b, "counters"), "nonb_pool") ||
			    jx_u64(jx_obj(b, "counters"), "nonb_pool") == 1);
		assert_int_equal(jx_u64(jx_obj(b, "opts"), "EF_SPIN_USEC"), 100000);
		finish(&jobs[before % 16], lots, ll, 1, 0);
		json_object_put(o2);
	}
	st = json_object_new_object();
	flow_src_onload_ops.status(&s, st);
	assert_string_equal(jx_str(st, "tool"), "/opt/onload/bin/onload_stackdump");
	json_object_put(st);
	/* neither tool: said so, nothing runs until the next look */
	usleep(1000);
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	finish(&jobs[(njobs - 1) % 16], "", 0, 0, 1);
	assert_non_null(strstr(s.err, "not installed"));
	{
		unsigned n = njobs;

		usleep(1000);
		flow_src_onload_ops.poll(&s, nstest_collect, &g);
		assert_int_equal(njobs, n);
	}
	flow_src_onload_ops.close(&s);
	json_object_put(out);
	free(t0);
	free(t1);
	free(lots);
	free(two);
}

/* Seed 001: the sender's Onload sockets look idle while its thread waits
 * for the stack lock; the stalled flows come from another source (an
 * engine table, the thread watch). A process's stacks are evidence of its
 * flows whatever their source: stack 2 (pid 3933257 in the dump) for a
 * ref of that pid, none for another. */
static void flow_src_onload__evidence__stacks_of_the_stalled_flows_process(void **state)
{
	struct flow_src_ctx ctx = { .netns_fd = -1, .interval_ns = 1, .run = &fake_run,
				    .tools_dir = "/opt/onload/bin" };
	struct flow_src s = { 0 };
	struct json_object *out = json_object_new_object(), *other = json_object_new_object();
	struct flow_src_ref mine = { .src = FLOW_SRC_ENGINE, .pid = 3933257 };
	struct flow_src_ref stranger = { .src = FLOW_SRC_ENGINE, .pid = 4242 };
	struct nstest_obs g = { 0 };
	size_t ll;
	char *lots = slurp("stackdump-lots-0044-during.txt", &ll);
	unsigned before;
	struct fakejob *j;

	(void)state;
	njobs = ncancel = 0;
	assert_int_equal(flow_src_onload_ops.open(&s, &ctx), 0);
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	finish(&jobs[0], "", 0, 0, 1);          /* no orm_json: lots */
	j = &jobs[(njobs - 1) % 16];
	assert_string_equal(j->argv[3], "lots");
	finish(j, lots, ll, 1, 0);
	usleep(2000);
	flow_src_onload_ops.poll(&s, nstest_collect, &g);
	before = njobs;
	assert_int_equal(flow_src_onload_ops.evidence(&s, &stranger, 1, "at_stall", other, evid_done,
						      other), 0);
	assert_int_equal(jx_len(jx_arr(other, "stacks")), 0);
	assert_int_equal(njobs, before);
	evid_calls = 0;
	assert_int_equal(flow_src_onload_ops.evidence(&s, &mine, 1, "at_stall", out, evid_done, out),
			 1);
	j = &jobs[before % 16];
	assert_string_equal(j->argv[0], "/opt/onload/bin/onload_stackdump");
	assert_string_equal(j->argv[3], "2");
	assert_int_equal(jx_len(jx_arr(out, "sockets")), 0);
	finish(j, lots, ll, 1, 0);
	assert_int_equal(evid_calls, 1);
	assert_int_equal(jx_u64(json_object_array_get_idx(jx_arr(out, "stacks"), 0), "id"), 2);
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(out, "stacks"), 0), "dump"),
			    "during");
	flow_src_onload_ops.close(&s);
	json_object_put(out);
	json_object_put(other);
	free(lots);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_src_rdmaqp__crafted_dumps__healthy_waiting_failed_and_evidence),
		cmocka_unit_test(flow_src_onload__tools__json_polls_fallback_and_scrubbed_stackdump),
		cmocka_unit_test(flow_src_onload__evidence__stacks_of_the_stalled_flows_process),
	};

	if (argc >= 3 && !strcmp(argv[1], "--write-qp"))
		return write_qp_main(argc, argv);
	nstest_chdir_repo("tests/fixtures/onload/README.md");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
