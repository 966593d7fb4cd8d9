/* Unit tests for the devlink health message parsers (GET, PORT, DEV
 * messages: collectors/counters/devlink_health.c) and the fmsg token run of
 * DIAGNOSE and DUMP_GET replies (collectors/counters/devlink_fmsg.c), on replies
 * built the way the kernel builds them (dlhmodel.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "collectors/counters/counters.h"
#include "collectors/counters/devlink_health.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "dlhfix.h"

/* ================================================================ messages */

static void dlh_parse_reporter__cx6dx_dump__five_reporters_per_pf(void **state)
{
	struct buf b = { 0 };
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	char e[128];
	unsigned n = 0;
	size_t off;

	(void)state;
	dlf_mk_health(&b, &dlm_cx6dx);
	dlf_parse_reply(&b, 1, &r);
	assert_int_equal(r.nmsg, 10);
	dlh_reply_for_each(&r, nlh, off) {
		struct dlh_reporter rep;

		assert_int_equal(dlh_parse_reporter(nlh, r.len - off, FAMILY, &rep, e, sizeof(e)), 0);
		if (n == 1) {
			assert_string_equal(rep.name, "fw_fatal");
			assert_string_equal(rep.h.bus, "pci");
			assert_false(rep.h.has_port);
			assert_int_equal(rep.have, DLH_HAVE_RECOVER | DLH_HAVE_DUMP);
			assert_int_equal(rep.grace_period_ms, 1200000);
			assert_int_equal(rep.auto_recover, 1);
		}
		if (n == 2) {
			assert_string_equal(rep.name, "vnic");
			assert_int_equal(rep.have, 0);
		}
		if (n == 4) {
			assert_string_equal(rep.name, "rx");
			assert_string_equal(rep.h.dev, "mlx5_core.eth.0");
			assert_int_equal(rep.h.port, 65535);
			assert_int_equal(rep.error_count, 2);
			assert_int_equal(rep.recover_count, 2);
			assert_true(rep.have & DLH_HAVE_DUMP_TS);
			assert_int_equal(rep.dump_ts_ns, 1764576000123456789ull);
		}
		n++;
	}
	assert_int_equal(n, 10);
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

static void dlh_parse_reporter__pads_and_burst__parsed(void **state)
{
	struct buf b = { 0 };
	struct krep k = { "rx", 1, 1, 1, 500, 7, 6, 1, 1 };
	struct dlh_reporter rep;
	char e[128];

	(void)state;
	dlm_reporter_msg(&b, "pci", "0000:08:00.0", 65535, &k, 1, 1);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), 0);
	assert_int_equal(rep.state, 1);
	assert_int_equal(rep.error_count, 7);
	assert_int_equal(rep.recover_count, 6);
	assert_true(rep.have & DLH_HAVE_BURST);
	assert_int_equal(rep.grace_period_ms, 500);
	dlm_bfree(&b);
}

static void dlh_parse_reporter__hostile_messages__ebadmsg(void **state)
{
	struct buf b = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *n;
	struct dlh_reporter rep;
	char e[128] = "";
	struct krep k = { "rx", 0, 0, 0, 0, 0, 0, 0, 0 };

	(void)state;
	/* no counts */
	nlh = dlm_genl_begin(&b, FAMILY, 0, 1, DEVLINK_CMD_HEALTH_REPORTER_GET);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, "x");
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_HEALTH_REPORTER);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_HEALTH_REPORTER_NAME, "rx");
	mnl_attr_nest_end(nlh, n);
	dlm_msg_end(&b, nlh);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	assert_non_null(strstr(e, "missing"));
	dlm_bfree(&b);
	/* a name that would escape the counter path */
	k.name = "../x";
	dlm_reporter_msg(&b, "pci", "0000:08:00.0", 0, &k, 0, 0);
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	/* shorter than it says, and a u64 of 4 bytes */
	assert_int_equal(dlh_parse_reporter(b.p, b.len - 4, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	dlm_bfree(&b);
	k.name = "rx";
	dlm_reporter_msg(&b, "pci", "0000:08:00.0", 0, &k, 0, 0);
	for (size_t off = NLMSG_HDRLEN + GENL_HDRLEN; off + 4 <= b.len; off += 4) {
		struct nlattr *a = (void *)(b.p + off);

		if (a->nla_type == DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT && a->nla_len == 12) {
			a->nla_len = 8;
			break;
		}
	}
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY, &rep, e, sizeof(e)), -EBADMSG);
	/* wrong family, wrong command */
	assert_int_equal(dlh_parse_reporter(b.p, b.len, FAMILY + 1, &rep, e, sizeof(e)), -EBADMSG);
	dlm_bfree(&b);
}

static void dlh_parse_port_and_dev__cx6dx__netdev_and_nesting(void **state)
{
	struct buf b = { 0 };
	const struct nlmsghdr *nlh;
	struct dlh_reply r;
	struct dlh_port p;
	struct dlh_dev d;
	char e[128];
	size_t off;

	(void)state;
	dlf_mk_port(&b, &dlm_cx6dx);
	dlf_parse_reply(&b, 1, &r);
	nlh = (const void *)r.buf;
	assert_int_equal(dlh_parse_port(nlh, r.len, FAMILY, &p, e, sizeof(e)), 0);
	assert_string_equal(p.netdev, "enp8s0f0np0");
	assert_string_equal(p.h.bus, "auxiliary");
	assert_int_equal(p.h.port, 65535);
	assert_int_equal(p.ifindex, 4);
	dlh_reply_free(&r);
	dlm_bfree(&b);

	dlf_mk_dev(&b, &dlm_cx6dx);
	dlf_parse_reply(&b, 1, &r);
	off = 0;
	nlh = (const void *)r.buf;
	assert_int_equal(dlh_parse_dev(nlh, r.len - off, FAMILY, &d, e, sizeof(e)), 0);
	assert_string_equal(d.h.dev, "0000:08:00.0");
	assert_int_equal(d.nnested, 1);
	assert_string_equal(d.nested[0].bus, "auxiliary");
	assert_string_equal(d.nested[0].dev, "mlx5_core.eth.0");
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

/* ================================================================ fmsg */

static void dlh_parse_fmsg__vnic__steering_discard_counter(void **state)
{
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	dlf_mk_vnic(&b, &dlm_cx6dx);
	assert_int_equal(dlf_fmsg_of(&b, "vnic", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(d.n, 10);
	assert_int_equal(dlf_diag_val(&d, "devlink/vnic/nic_receive_steering_discard"), 1843);
	assert_int_equal(dlf_diag_val(&d, "devlink/vnic/total_error_queues"), 0);
	assert_int_equal(dlf_diag_val(&d, "devlink/vnic/handled_pkt_steering_fail"), 0);
	assert_int_equal(d.width[7], CNT_W64);      /* u64 in the fmsg */
	assert_int_equal(d.width[0], CNT_W32);
	dlh_diag_free(&d);
	dlm_bfree(&b);
}

static void dlh_parse_fmsg__rx_three_parts__per_queue_paths(void **state)
{
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	dlf_mk_rx(&b, &dlm_cx6dx);
	assert_int_equal(dlf_fmsg_of(&b, "rx", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/Common_config/RQ/stride_size"), 2048);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/Common_config/RQ/CQ/size"), 1024);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/RQs/0/channel_ix"), 0);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/RQs/7/channel_ix"), 7);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/RQs/3/HW_state"), 1);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/RQs/3/CQ/ci"), 29784);
	assert_int_equal(dlf_diag_val(&d, "devlink/rx/RQs/7/ICOSQ/CQ/cc"), 98);
	assert_false(dlf_diag_has(&d, "devlink/rx/RQs/8/channel_ix"));
	assert_int_equal(d.ntext, 1);
	assert_string_equal(d.tnames[0], "devlink/rx/Common_config/RQ/ts_format");
	assert_string_equal(d.texts[0], "FRC");
	assert_int_equal(d.n, 5 + 8 * 24);
	dlh_diag_free(&d);
	dlm_bfree(&b);
}

/* Any part size the kernel could use, down to parts of one token, with
 * and without 64-bit pads: the same counters. Small sizes leave the value
 * type dangling at the end of a part (devlink_fmsg_prepare_skb). */
static void dlh_parse_fmsg__any_part_size_or_pads__same_counters(void **state)
{
	struct buf ref = { 0 };
	struct dlh_diag dr;
	char e[160];

	(void)state;
	dlf_mk_rx(&ref, &dlm_cx6dx);
	assert_int_equal(dlf_fmsg_of(&ref, "rx", &dr, NULL, e, sizeof(e)), 0);
	for (size_t part = 60; part <= 4096; part += part < 200 ? 1 : 97) {
		for (int pad = 0; pad < 2; pad++) {
			struct buf b = { 0 };
			struct dlh_diag d;

			dlm_fmsg_reply(&b, dlm_rx_fmsg, &dlm_cx6dx, part, pad);
			if (dlf_fmsg_of(&b, "rx", &d, NULL, e, sizeof(e)) != 0)
				print_error("part %zu pad %d: %s\n", part, pad, e);
			assert_int_equal(d.n, dr.n);
			for (unsigned i = 0; i < d.n; i++) {
				assert_string_equal(d.names[i], dr.names[i]);
				assert_int_equal(d.vals[i], dr.vals[i]);
			}
			dlh_diag_free(&d);
			dlm_bfree(&b);
		}
	}
	dlh_diag_free(&dr);
	dlm_bfree(&ref);
}

/* Every prefix of a reply and every single-byte corruption: an error or a
 * result, never a crash or an out-of-bounds read (run under ASan). */
static void dlh_parse_fmsg__every_cut_and_flip__no_crash(void **state)
{
	struct buf b = { 0 };
	char e[160];
	unsigned ok = 0;

	(void)state;
	dlf_mk_vnic(&b, &dlm_cx6dx);
	for (size_t cut = 0; cut < b.len; cut++) {
		struct buf c = { 0 };
		struct dlh_diag d;

		memcpy(dlm_bput(&c, cut), b.p, cut);
		if (dlf_fmsg_of(&c, "vnic", &d, NULL, e, sizeof(e)) == 0) {
			ok++;           /* only possible with the ack cut off */
			dlh_diag_free(&d);
		}
		dlm_bfree(&c);
	}
	assert_int_equal(ok, 0);
	for (size_t i = 0; i < b.len; i++) {
		for (unsigned v = 0; v < 4; v++) {
			static const uint8_t vals[] = { 0x00, 0xff, 0x80, 0x01 };
			struct buf c = { 0 };
			struct json_object *t = NULL;
			struct dlh_diag d;

			memcpy(dlm_bput(&c, b.len), b.p, b.len);
			c.p[i] = (uint8_t)(c.p[i] ^ vals[v] ^ (v == 0 ? 0x55 : 0));
			if (dlf_fmsg_of(&c, "vnic", &d, &t, e, sizeof(e)) == 0) {
				dlh_diag_free(&d);
				json_object_put(t);
			}
			dlm_bfree(&c);
		}
	}
	dlm_bfree(&b);
}

static void fmsg_raw(struct buf *b, const uint16_t *tok, unsigned n)
{
	struct nlmsghdr *nlh = dlm_genl_begin(b, FAMILY, NLM_F_MULTI, 1005,
					  DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE);
	struct nlattr *nest = dlm_nest_noflag(nlh, DEVLINK_ATTR_FMSG);

	for (unsigned i = 0; i < n; i++) {
		uint16_t t = tok[i];

		if (t == DEVLINK_ATTR_FMSG_OBJ_NAME)
			mnl_attr_put_strz(nlh, t, "n");
		else if (t == DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE)
			mnl_attr_put_u8(nlh, t, 3);
		else if (t == DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA)
			mnl_attr_put_u32(nlh, t, 5);
		else if (t == 1000)                  /* a u8 value with 4 bytes */
			mnl_attr_put_u32(nlh, DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, 5);
		else
			mnl_attr_put(nlh, t, 0, NULL);
	}
	mnl_attr_nest_end(nlh, nest);
	dlm_msg_end(b, nlh);
	dlm_put_done(b, 1005, 0);
	dlm_put_ack(b, 1005, 0, NULL);
}

static void dlh_parse_fmsg__grammar_violations__ebadmsg(void **state)
{
	enum {
		O = DEVLINK_ATTR_FMSG_OBJ_NEST_START, P = DEVLINK_ATTR_FMSG_PAIR_NEST_START,
		A = DEVLINK_ATTR_FMSG_ARR_NEST_START, E = DEVLINK_ATTR_FMSG_NEST_END,
		N = DEVLINK_ATTR_FMSG_OBJ_NAME, T = DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE,
		D = DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA,
	};
	static const struct {
		uint16_t tok[24];
		unsigned n;
		const char *what;
	} bad[] = {
		{ { P, N, T, D, E }, 5, "starts with attribute" },
		{ { O, T, D, E }, 4, "out of place" },                 /* value in an object */
		{ { O, N, E }, 3, "out of place" },                    /* name outside a pair */
		{ { O, P, T, D, E, E }, 6, "out of place" },           /* pair without name */
		{ { O, P, N, D, E, E }, 6, "without a type" },
		{ { O, P, N, T, E, E }, 6, "type without data" },
		{ { O, E, O, E }, 4, "after the end" },
		{ { O, P, N, T, D, E }, 6, "truncated" },              /* root never closed */
		{ { O, E, E }, 3, "after the end" },
		{ { O, A, E, E }, 4, "out of place" },                 /* array in an object */
		{ { O, P, N, O, E, O, E, E, E }, 9, "out of place" },  /* two objects, one pair */
	};
	char e[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct buf b = { 0 };
		struct dlh_diag d;

		fmsg_raw(&b, bad[i].tok, bad[i].n);
		e[0] = '\0';
		assert_int_equal(dlf_fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		if (!strstr(e, bad[i].what))
			print_error("case %zu: \"%s\"\n", i, e);
		assert_non_null(strstr(e, bad[i].what));
		dlm_bfree(&b);
	}
	/* deeper than DLH_FMSG_DEPTH */
	{
		uint16_t tok[80];
		unsigned n = 0;
		struct buf b = { 0 };
		struct dlh_diag d;

		tok[n++] = O;
		for (int i = 0; i < 20; i++)
			tok[n++] = P, tok[n++] = N, tok[n++] = O;
		fmsg_raw(&b, tok, n);
		assert_int_equal(dlf_fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		assert_non_null(strstr(e, "deeper"));
		dlm_bfree(&b);
	}
	/* a u32-typed value of the wrong size */
	{
		static const uint16_t tok[] = { O, P, N, T, 1000, E, E };
		struct buf b = { 0 };
		struct dlh_diag d;
		struct nlmsghdr *nlh;

		fmsg_raw(&b, tok, 7);
		/* make the type u8: the 4-byte payload no longer matches */
		for (size_t off = NLMSG_HDRLEN + GENL_HDRLEN + 4; off + 5 <= b.len; off += 4) {
			struct nlattr *a = (void *)(b.p + off);

			if (a->nla_type == T && a->nla_len == 5) {
				b.p[off + 4] = 1;
				break;
			}
		}
		nlh = (void *)b.p;
		(void)nlh;
		assert_int_equal(dlf_fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), -EBADMSG);
		assert_non_null(strstr(e, "bytes for type 1"));
		dlm_bfree(&b);
	}
}

static void dlh_parse_fmsg__pads_unknown_tokens_and_types__skipped(void **state)
{
	struct kf k;
	struct buf b = { 0 };
	struct dlh_diag d;
	uint8_t odd[3] = { 1, 2, 3 };
	char e[160];

	(void)state;
	dlm_kinit(&k);
	dlm_obj_start(&k);
	dlm_u32_pair(&k, "a", 1);
	dlm_kadd(&k, 200);                              /* a token of a newer kernel */
	dlm_pair_start(&k, "weird");
	dlm_put_value(&k, 99, odd, 3);                  /* a value type we do not know */
	dlm_nest_end(&k);
	dlm_u64_pair(&k, "b", 2);
	dlm_bool_pair(&k, "on", 1);
	dlm_arr_pair_start(&k, "list");
	dlm_put_value(&k, 3, &(uint32_t){ 10 }, 4);
	dlm_put_value(&k, 3, &(uint32_t){ 11 }, 4);
	dlm_arr_pair_end(&k);
	dlm_nest_end(&k);
	dlm_kf_send(&k, &b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 1, 0);
	dlm_kfree(&k);
	/* kf_send skips unknown attrs as flags: token 200 is a flag here */
	assert_int_equal(dlf_fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/a"), 1);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/b"), 2);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/on"), 1);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/list/0"), 10);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/list/1"), 11);
	assert_false(dlf_diag_has(&d, "devlink/x/weird"));
	assert_int_equal(d.unknown, 2);
	dlh_diag_free(&d);
	dlm_bfree(&b);
}

static void dlh_parse_fmsg__repeated_and_odd_names__suffixed_sanitized(void **state)
{
	struct kf k;
	struct buf b = { 0 };
	struct dlh_diag d;
	char e[160];

	(void)state;
	dlm_kinit(&k);
	dlm_obj_start(&k);
	dlm_u32_pair(&k, "cc", 1);
	dlm_u32_pair(&k, "cc", 2);
	dlm_u32_pair(&k, "a/b c\xc3\xa9", 3);
	dlm_u32_pair(&k, "", 4);
	dlm_nest_end(&k);
	dlm_kf_send(&k, &b, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, 1005, GOODSIZE, 0, 0);
	dlm_kfree(&k);
	assert_int_equal(dlf_fmsg_of(&b, "x", &d, NULL, e, sizeof(e)), 0);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/cc"), 1);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/cc~2"), 2);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/a_b_c__"), 3);
	assert_int_equal(dlf_diag_val(&d, "devlink/x/_"), 4);
	dlh_diag_free(&d);
	dlm_bfree(&b);
}

static void dlh_parse_fmsg__tree__shaped_like_devlink_json(void **state)
{
	struct buf b = { 0 };
	struct json_object *t = NULL, *v, *rqs, *rq;
	struct dlh_reply r;
	char e[160];

	(void)state;
	dlf_mk_vnic(&b, &dlm_cx6dx);
	assert_int_equal(dlf_fmsg_of(&b, "vnic", NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "vNIC env counters", &v));
	assert_true(json_object_object_get_ex(v, "nic_receive_steering_discard", &v));
	assert_int_equal(json_object_get_uint64(v), 1843);
	json_object_put(t);
	dlm_bfree(&b);

	dlf_mk_rx(&b, &dlm_cx6dx);
	assert_int_equal(dlf_fmsg_of(&b, "rx", NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "RQs", &rqs));
	assert_int_equal(json_object_array_length(rqs), 8);
	rq = json_object_array_get_idx(rqs, 5);
	assert_true(json_object_object_get_ex(rq, "channel ix", &v));
	assert_int_equal(json_object_get_int(v), 5);
	assert_true(json_object_object_get_ex(rq, "EQ", &v));
	assert_true(json_object_object_get_ex(v, "irqn", &v));
	assert_int_equal(json_object_get_int(v), 81);
	json_object_put(t);
	dlm_bfree(&b);

	dlf_mk_rx_dump(&b, &dlm_cx6dx);
	dlh_reply_init(&r, 1);
	assert_int_equal(dlf_feed_exact(&r, b.p, b.len, 0, e, sizeof(e)), 1);
	assert_int_equal(dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, "rx",
				       NULL, &t, e, sizeof(e)), 0);
	assert_true(json_object_object_get_ex(t, "RX Slice", &v));
	assert_true(json_object_object_get_ex(v, "data", &v));
	v = json_object_array_get_idx(v, 0);
	assert_int_equal(strncmp(json_object_get_string(v), "01080f16", 8), 0);
	json_object_put(t);
	/* a dump is not a diagnose */
	assert_int_equal(dlh_parse_fmsg(&r, FAMILY, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, "rx",
				       NULL, &t, e, sizeof(e)), -EBADMSG);
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dlh_parse_reporter__cx6dx_dump__five_reporters_per_pf),
		cmocka_unit_test(dlh_parse_reporter__pads_and_burst__parsed),
		cmocka_unit_test(dlh_parse_reporter__hostile_messages__ebadmsg),
		cmocka_unit_test(dlh_parse_port_and_dev__cx6dx__netdev_and_nesting),
		cmocka_unit_test(dlh_parse_fmsg__vnic__steering_discard_counter),
		cmocka_unit_test(dlh_parse_fmsg__rx_three_parts__per_queue_paths),
		cmocka_unit_test(dlh_parse_fmsg__any_part_size_or_pads__same_counters),
		cmocka_unit_test(dlh_parse_fmsg__every_cut_and_flip__no_crash),
		cmocka_unit_test(dlh_parse_fmsg__grammar_violations__ebadmsg),
		cmocka_unit_test(dlh_parse_fmsg__pads_unknown_tokens_and_types__skipped),
		cmocka_unit_test(dlh_parse_fmsg__repeated_and_odd_names__suffixed_sanitized),
		cmocka_unit_test(dlh_parse_fmsg__tree__shaped_like_devlink_json),
	};

	log_set_level(LOG_ERR);
	dlf_to_repo_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
