/* Unit tests: the detector (daemon/detect/liveness.c) following the verdicts of
 * the sources that judge liveness themselves (Onload, VMA/XLIO, RDMA QPs),
 * fed through those sources' own observation functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>

#include "collectors/flows/flow_live.h"
#include "collectors/flows/rdmaqp_parse.h"
#include "collectors/flows/vma_parse.h"
#include "collectors/flows/flowsel.h"
#include "coretest.h"
#include "daemon/detect/liveness.h"

#define THR (200 * MS)
#define POLL (50 * MS)

static struct flow_rdmaqp_qp qp(uint32_t lqpn, uint32_t sq, uint32_t rq, uint8_t state)
{
	struct flow_rdmaqp_qp q = { .dev_index = 2, .port = 1, .lqpn = lqpn, .rqpn = 0x22,
				    .sq_psn = sq, .rq_psn = rq, .pid = 77, .type = FLOW_QPT_RC,
				    .state = state };

	strcpy(q.dev_name, "mlx5_0");
	q.have = FLOW_RDMAQP_HAVE_PORT | FLOW_RDMAQP_HAVE_RQPN | FLOW_RDMAQP_HAVE_RQ_PSN |
		 FLOW_RDMAQP_HAVE_SQ_PSN | FLOW_RDMAQP_HAVE_PID;
	return q;
}

/* A request/response QP whose responses stop: waiting from the last PSN
 * movement, stalled once that is older than the threshold. */
static void flow_update__qp_psns_stop_with_request_out__stalled_from_last_move(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q = qp(0x11, 100, 50, FLOW_QPS_RTS);
	struct flow_obs o;
	struct sflow *f;
	uint64_t now = 10 * SEC;

	(void)state;
	flow_rdmaqp_obs(&q, &t, now, &o);
	f = livetab_get(ft, &o, "p", now, 1);
	assert_non_null(f);
	assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_NONE);
	/* request and response: both PSNs move */
	q.sq_psn = 101;
	q.rq_psn = 51;
	now += POLL;
	assert_int_equal(flow_live_of(&o), FLOW_LIVE_IDLE);
	flow_rdmaqp_obs(&q, &t, now, &o);
	assert_int_equal(flow_live_of(&o), FLOW_LIVE_PROGRESS);
	assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_IDLE);
	/* the next request leaves, no response */
	uint64_t sent = now + POLL;

	q.sq_psn = 102;
	flow_rdmaqp_obs(&q, &t, sent, &o);
	flow_update(f, &o, sent, THR, POLL);
	now = sent + POLL;
	flow_rdmaqp_obs(&q, &t, now, &o);
	assert_int_equal(flow_live_of(&o), FLOW_LIVE_WAITING);
	assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_WAITING);
	assert_int_equal(f->wait_since_ns, sent);
	now = sent + THR + POLL;
	flow_rdmaqp_obs(&q, &t, now, &o);
	assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_STALLED);
	assert_int_equal(f->stalled_at_ns, sent);
	/* the response comes: released */
	q.rq_psn = 52;
	now += POLL;
	flow_rdmaqp_obs(&q, &t, now, &o);
	assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_RELEASED);
	livetab_free(ft);
}

/* A QP in ERR has failed: it stalls although nothing was outstanding. */
static void flow_update__qp_in_err__stalled(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q = qp(0x12, 7, 7, FLOW_QPS_RTS);
	struct flow_obs o;
	struct sflow *f;
	uint64_t now = 1 * SEC;
	int ev = FLOW_EV_NONE;

	(void)state;
	flow_rdmaqp_obs(&q, &t, now, &o);
	f = livetab_get(ft, &o, "p", now, 1);
	flow_update(f, &o, now, THR, POLL);
	q.state = FLOW_QPS_ERR;
	for (int i = 1; i <= 6 && ev == FLOW_EV_NONE; i++) {
		now += POLL;
		flow_rdmaqp_obs(&q, &t, now, &o);
		assert_int_equal(flow_live_of(&o), FLOW_LIVE_FAILED);
		ev = flow_update(f, &o, now, THR, POLL);
	}
	assert_int_equal(ev, FLOW_EV_STALLED);
	livetab_free(ft);
}

/* Healthy ping-pong through the VMA reader: never waiting long enough. */
static void flow_update__vma_ping_pong__never_stalled(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_vma_track t = { 0 };
	struct flow_vma_sock s = { .fd = 5, .inode = 99, .socket_type = SOCK_DGRAM,
				   .family = AF_INET, .lport = htons(40000), .rport = htons(11111) };
	struct flow_obs o;
	struct sflow *f = NULL;
	uint64_t now = 1 * SEC;

	(void)state;
	for (int i = 0; i < 100; i++) {
		/* each poll: one more request sent, its reply received */
		s.tx_packets = s.rx_packets = (uint64_t)i;
		s.tx_bytes = s.rx_bytes = 64ull * (uint64_t)i;
		flow_vma_obs(&s, "vma", 1234, &t, now, &o);
		if (!f)
			f = livetab_get(ft, &o, "p", now, 1);
		assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_NONE);
		assert_int_not_equal(f->state, FLOW_STALLED);
		now += POLL;
	}
	assert_int_equal(f->stalls, 0);
	livetab_free(ft);
}

/* Data ready and never read (VMA): held, which the detector waits on, and
 * the unread bytes travel with the observation (engine-hold facts). */
static void flow_update__vma_unread_data__held_then_stalled(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_vma_track t = { 0 };
	struct flow_vma_sock s = { .fd = 5, .inode = 99, .socket_type = SOCK_DGRAM,
				   .family = AF_INET, .rx_packets = 10, .tx_packets = 10,
				   .rx_bytes = 640, .tx_bytes = 640 };
	struct flow_obs o;
	struct sflow *f;
	uint64_t now = 1 * SEC;
	int ev = FLOW_EV_NONE;

	(void)state;
	flow_vma_obs(&s, "vma", 1234, &t, now, &o);
	f = livetab_get(ft, &o, "p", now, 1);
	flow_update(f, &o, now, THR, POLL);
	s.rx_ready_pkt = 1;
	s.rx_ready_byte = 64;
	for (int i = 0; i < 8 && ev == FLOW_EV_NONE; i++) {
		now += POLL;
		flow_vma_obs(&s, "vma", 1234, &t, now, &o);
		ev = flow_update(f, &o, now, THR, POLL);
	}
	assert_int_equal(flow_live_of(&o), FLOW_LIVE_HELD);
	assert_int_equal(ev, FLOW_EV_STALLED);
	assert_int_equal(f->obs.unread, 64);
	livetab_free(ft);
}

/* An observation whose source gave no verdict (live 0) never waits. */
static void flow_update__live_source_without_verdict__idle(void **state)
{
	struct livetab *ft = livetab_new();
	struct flow_obs o = { .src = FLOW_SRC_VMA, .tx_msgs = 9, .rx_msgs = 1 };
	struct sflow *f = livetab_get(ft, &o, "p", 0, 1);

	(void)state;
	for (uint64_t now = 0; now < 2 * SEC; now += POLL)
		assert_int_equal(flow_update(f, &o, now, THR, POLL), FLOW_EV_NONE);
	assert_int_equal(f->state, FLOW_IDLE);
	livetab_free(ft);
}

static void flow_key_format__queue_pair__device_and_qp_numbers(void **state)
{
	struct flow_rdmaqp_track t = { 0 };
	struct flow_rdmaqp_qp q = qp(0x11, 1, 1, FLOW_QPS_RTS);
	struct flow_obs o;
	char buf[96];

	(void)state;
	flow_rdmaqp_obs(&q, &t, 1, &o);
	flow_key_format(&o.key, buf, sizeof(buf));
	assert_string_equal(buf, "qp 2/0x11 -> 0x22");
	assert_string_equal(flow_src_name(FLOW_SRC_RDMAQP), "rdmaqp");
	assert_string_equal(flow_src_name(FLOW_SRC_ONLOAD), "onload");
	assert_string_equal(flow_src_name(FLOW_SRC_VMA), "vma");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flow_update__qp_psns_stop_with_request_out__stalled_from_last_move),
		cmocka_unit_test(flow_update__qp_in_err__stalled),
		cmocka_unit_test(flow_update__vma_ping_pong__never_stalled),
		cmocka_unit_test(flow_update__vma_unread_data__held_then_stalled),
		cmocka_unit_test(flow_update__live_source_without_verdict__idle),
		cmocka_unit_test(flow_key_format__queue_pair__device_and_qp_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
