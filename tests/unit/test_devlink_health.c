/* Unit tests for collectors/counters/devlink_health.c: requests, reply framing,
 * the recorded fixtures (tests/fixtures/devlink/, written by this binary:
 * `test_devlink_health --write-fixtures DIR`, and a test checks that the
 * committed ones are still exactly what it builds), events and this
 * kernel's devlink. The replies are built byte for byte the way the kernel
 * builds them (dlhmodel.h); the messages and fmsg parsers are tested in
 * test_devlink_parse.c, the counter source in test_devlink_src.c. */
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
#include "lib/nlhex.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "dlhfix.h"

/* ================================================================ requests */

static void dlh_build_diagnose__port_reporter__handle_port_and_name(void **state)
{
	uint8_t buf[512];
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct genlmsghdr *g = (const void *)(buf + NLMSG_HDRLEN);
	struct dlh_handle h = { "auxiliary", "mlx5_core.eth.0", 1, 65535 };
	const struct nlattr *a;
	int seen = 0;
	size_t n;

	(void)state;
	n = dlh_build_diagnose(buf, sizeof(buf), FAMILY, 77, &h, "rx");
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_len, n);
	assert_int_equal(nlh->nlmsg_type, FAMILY);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(nlh->nlmsg_seq, 77);
	assert_int_equal(g->cmd, DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE);
	assert_int_equal(g->version, DEVLINK_GENL_VERSION);
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case DEVLINK_ATTR_BUS_NAME:
			assert_string_equal(mnl_attr_get_str(a), "auxiliary");
			seen |= 1;
			break;
		case DEVLINK_ATTR_DEV_NAME:
			assert_string_equal(mnl_attr_get_str(a), "mlx5_core.eth.0");
			seen |= 2;
			break;
		case DEVLINK_ATTR_PORT_INDEX:
			assert_int_equal(mnl_attr_get_u32(a), 65535);
			seen |= 4;
			break;
		case DEVLINK_ATTR_HEALTH_REPORTER_NAME:
			assert_string_equal(mnl_attr_get_str(a), "rx");
			seen |= 8;
			break;
		default:
			fail();
		}
	}
	assert_int_equal(seen, 15);
}

static void dlh_build_reporter_dump__port_handle__instance_only_dump(void **state)
{
	uint8_t buf[512];
	const struct nlmsghdr *nlh = (const void *)buf;
	struct dlh_handle h = { "pci", "0000:08:00.0", 1, 65535 };
	const struct nlattr *a;
	size_t n;

	(void)state;
	n = dlh_build_reporter_dump(buf, sizeof(buf), FAMILY, 5, &h);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP);
	mnl_attr_for_each(a, nlh, GENL_HDRLEN)
		assert_int_not_equal(mnl_attr_get_type(a), DEVLINK_ATTR_PORT_INDEX);
	n = dlh_build_dump_get(buf, sizeof(buf), FAMILY, 5, &h, "rx");
	assert_true(n > 0);
	assert_true(nlh->nlmsg_flags & NLM_F_DUMP);
	n = dlh_build_getfamily(buf, sizeof(buf), 9);
	assert_true(n > 0);
	assert_int_equal(nlh->nlmsg_type, GENL_ID_CTRL);
}

static void dlh_build__bad_arguments__zero(void **state)
{
	uint8_t buf[512];
	struct dlh_handle h = { "pci", "0000:08:00.0", 0, 0 };
	struct dlh_handle slash = { "pci", "0000:08/00.0", 0, 0 };
	char longname[100];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, NULL), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, "a/b"), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &h, longname), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), FAMILY, 1, &slash, "rx"), 0);
	assert_int_equal(dlh_build_diagnose(buf, 64, FAMILY, 1, &h, "rx"), 0);
	assert_int_equal(dlh_build_diagnose(buf, sizeof(buf), 0, 1, &h, "rx"), 0);
	assert_int_equal(dlh_build_reporter_dump(buf, sizeof(buf), FAMILY, 1, NULL), 0);
}

/* ================================================================ framing */

static void dlh_reply_feed__diagnose_parts_done_ack__complete_at_ack(void **state)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[128];
	size_t cut;

	(void)state;
	dlf_mk_rx(&b, &dlm_cx6dx);
	dlf_parse_reply(&b, 0, &r);
	assert_int_equal(r.nmsg, 3);                 /* three NLM_F_MULTI parts */
	assert_true(r.done);
	dlh_reply_free(&r);
	/* the same bytes in two recv()s, cut after the NLMSG_DONE: not done
	 * until the ack */
	cut = b.len - NLMSG_ALIGN(sizeof(struct nlmsghdr) + sizeof(struct nlmsgerr));
	dlh_reply_init(&r, 0);
	assert_int_equal(dlf_feed_exact(&r, b.p, cut, 1005, e, sizeof(e)), 0);
	assert_true(r.done);
	assert_int_equal(dlf_feed_exact(&r, b.p + cut, b.len - cut, 1005, e, sizeof(e)), 1);
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

/* Feed b (an exact-size copy) as one reply; expect rc want and, when msg
 * is given, that text in the error. */
static void expect_feed(void (*make)(struct buf *), int dump, uint32_t seq, int want,
			const char *msg)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[160] = "";
	int rc;

	make(&b);
	dlh_reply_init(&r, dump);
	rc = dlf_feed_exact(&r, b.p, b.len, seq, e, sizeof(e));
	if (rc != want || (msg && !strstr(e, msg)))
		print_error("feed: %d \"%s\", expected %d \"%s\"\n", rc, e, want, msg ? msg : "");
	assert_int_equal(rc, want);
	assert_true(!msg || strstr(e, msg));
	if (rc < 0)
		assert_int_equal(r.nmsg, 0);
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

static void mk_three_bytes(struct buf *b)
{
	memcpy(dlm_bput(b, 3), "\x14\x00\x00", 3);
}

static void mk_trampled(struct buf *b)
{
	dlm_put_ack(b, 9, -EINVAL, "Dump trampled, please retry");
}

static void mk_fw_fatal_err(struct buf *b)
{
	dlf_mk_fw_fatal(b, &dlm_cx6dx);
}

static void mk_done_int_min(struct buf *b)
{
	struct nlmsghdr *nlh = dlm_msg_begin(b, NLMSG_DONE, NLM_F_MULTI, 9);
	int *v = mnl_nlmsg_put_extra_header(nlh, sizeof(int));

	*v = -2147483647 - 1;
	dlm_msg_end(b, nlh);
}

static void dlh_reply_feed__nlmsg_len_0x80000001__ebadmsg(void **state)
{
	(void)state;
	expect_feed(dlf_mk_hugelen, 0, 0, -EBADMSG, "nlmsg_len 2147483649 with 96 bytes left");
}

static void dlh_reply_feed__short_zero_and_garbage__ebadmsg(void **state)
{
	(void)state;
	expect_feed(dlf_mk_zerolen, 0, 0, -EBADMSG, "nlmsg_len 0");
	expect_feed(mk_three_bytes, 0, 0, -EBADMSG, "less than a netlink header");
	expect_feed(dlf_mk_garbage, 0, 0, -EBADMSG, NULL);
	expect_feed(dlf_mk_truncated, 0, 0, -EBADMSG, "nlmsg_len 592 with 150 bytes left");
}

static void dlh_reply_feed__kernel_error_with_extack__errno_and_text(void **state)
{
	(void)state;
	expect_feed(mk_trampled, 1, 9, -EINVAL, "Invalid argument: Dump trampled, please retry");
	expect_feed(mk_fw_fatal_err, 0, 0, -EOPNOTSUPP, "Operation not supported");
	expect_feed(mk_done_int_min, 1, 9, -EPROTO, NULL);
}

static void dlh_reply_feed__other_sequence__skipped(void **state)
{
	struct buf b = { 0 };
	struct dlh_reply r;
	char e[128];
	size_t mid;

	(void)state;
	dlf_mk_vnic(&b, &dlm_cx6dx);                  /* a late reply of request 1005 */
	mid = b.len;
	dlf_mk_fw(&b, &dlm_cx6dx);
	for (size_t off = mid; off < b.len;) { /* the reply of request 1006 */
		struct nlmsghdr *nlh = (void *)(b.p + off);

		nlh->nlmsg_seq = 1006;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	dlh_reply_init(&r, 0);
	assert_int_equal(dlf_feed_exact(&r, b.p, b.len, 1006, e, sizeof(e)), 1);
	assert_int_equal(r.skipped, 3);        /* its part, NLMSG_DONE, ack */
	assert_int_equal(r.nmsg, 1);
	dlh_reply_free(&r);
	dlm_bfree(&b);
}

/* ================================================================ files */

static void fixtures__committed__exactly_what_the_model_builds(void **state)
{
	char path[PATH_MAX], e[256];

	(void)state;
	for (size_t s = 0; s < sizeof(dlf_sets) / sizeof(dlf_sets[0]); s++) {
		for (const struct fixfile *f = dlf_sets[s].files; f->name; f++) {
			struct buf b = { 0 };
			uint8_t *got;
			size_t len;

			f->make(&b, dlf_sets[s].card);
			snprintf(path, sizeof(path), "%s/%s/%s", FIXDIR, dlf_sets[s].dir, f->name);
			if (nlhex_load(path, &got, &len, e, sizeof(e)) < 0)
				print_error("%s\n", e);
			assert_int_equal(len, b.len);
			assert_memory_equal(got, b.p, len);
			free(got);
			dlm_bfree(&b);
		}
	}
	for (size_t i = 0; i < sizeof(dlf_hostile) / sizeof(dlf_hostile[0]); i++) {
		struct buf b = { 0 };
		uint8_t *got;
		size_t len;

		dlf_hostile[i].make(&b);
		snprintf(path, sizeof(path), "%s/hostile/%s", FIXDIR, dlf_hostile[i].name);
		assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), 0);
		assert_int_equal(len, b.len);
		assert_memory_equal(got, b.p, len);
		free(got);
		dlm_bfree(&b);
	}
}

static void dlh_nlhex__roundtrip_and_bad_text__line_numbers(void **state)
{
	char dir[] = "/tmp/test_dlh_hex.XXXXXX", path[128], lnk[128], e[256];
	static const uint8_t bytes[] = { 0x14, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	uint8_t *got;
	size_t len;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.nlhex", dir);
	assert_int_equal(nlhex_write(path, "two\nlines", bytes, sizeof(bytes), e, sizeof(e)), 0);
	assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), 0);
	assert_int_equal(len, sizeof(bytes));
	assert_memory_equal(got, bytes, len);
	free(got);
	fp = fopen(path, "w");
	fputs("# ok\n14000000\n# still ok\n00zz\n", fp);
	fclose(fp);
	assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, ":4: not a hex digit: 'z'"));
	fp = fopen(path, "w");
	fputs("140", fp);
	fclose(fp);
	assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, "odd number"));
	/* a symbolic link as the file is refused (not followed), a FIFO
	 * answers at once (nothing blocks) */
	snprintf(lnk, sizeof(lnk), "%s/l.nlhex", dir);
	assert_int_equal(symlink(path, lnk), 0);
	assert_int_equal(nlhex_load(lnk, &got, &len, e, sizeof(e)), -ELOOP);
	assert_non_null(strstr(e, "l.nlhex: a symbolic link"));
	unlink(lnk);
	assert_int_equal(mkfifo(lnk, 0600), 0);
	assert_int_equal(nlhex_load(lnk, &got, &len, e, sizeof(e)), -EINVAL);
	assert_non_null(strstr(e, "l.nlhex: not a regular file"));
	unlink(lnk);
	/* a symbolic link planted as the writer's temporary is not written
	 * through: its target keeps what it held */
	snprintf(lnk, sizeof(lnk), "%s/victim", dir);
	fp = fopen(lnk, "w");
	fputs("kept\n", fp);
	fclose(fp);
	{
		char tmp[160], got_txt[16] = "";

		/* the writer's temporary (fsu_replace_at's .NAME.tmp) */
		snprintf(tmp, sizeof(tmp), "%s/.a.nlhex.tmp", dir);
		assert_int_equal(symlink(lnk, tmp), 0);
		assert_int_equal(nlhex_write(path, NULL, bytes, sizeof(bytes), e, sizeof(e)), 0);
		fp = fopen(lnk, "r");
		assert_non_null(fgets(got_txt, sizeof(got_txt), fp));
		fclose(fp);
		assert_string_equal(got_txt, "kept\n");
		assert_int_equal(access(tmp, F_OK), -1);
		assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), 0);
		assert_memory_equal(got, bytes, sizeof(bytes));
		free(got);
	}
	unlink(lnk);
	unlink(path);
	assert_int_equal(nlhex_load(path, &got, &len, e, sizeof(e)), -ENOENT);
	assert_int_equal(nlhex_load(dir, &got, &len, e, sizeof(e)), -EINVAL);
	rmdir(dir);
}

/* ================================================================ events */

struct evs {
	struct dlh_reporter r[8];
	unsigned n;
};

static void ev_cb(const struct dlh_reporter *r, void *arg)
{
	struct evs *e = arg;

	if (e->n < 8)
		e->r[e->n++] = *r;
}

/* devlink_recover_notify: devlink_nl_health_reporter_fill with cmd
 * HEALTH_REPORTER_RECOVER, portid 0, seq 0, flags 0. */
static void recover_event(struct buf *b, const char *bus, const char *dev, uint32_t port,
			  const struct krep *k, uint8_t state)
{
	size_t at = b->len;
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	dlm_reporter_msg(b, bus, dev, port, k, state, 0);
	nlh = (void *)(b->p + at);
	g = (void *)(b->p + at + NLMSG_HDRLEN);
	nlh->nlmsg_flags = 0;
	nlh->nlmsg_seq = 0;
	nlh->nlmsg_pid = 0;
	g->cmd = DEVLINK_CMD_HEALTH_REPORTER_RECOVER;
}

static void dlh_mon_parse__recover_notifications__events_for_the_port(void **state)
{
	struct krep rx = { "rx", 1, 1, 1, 500, 3, 2, 0, 0 };
	struct krep vnic = { "vnic", 0, 0, 0, 0, 0, 0, 0, 0 };
	struct dlh_target t = { { "pci", "0000:08:00.0", 0, 0 },
				{ "auxiliary", "mlx5_core.eth.0", 1, 65535 } };
	struct buf b = { 0 };
	struct evs ev = { .n = 0 };
	struct nlmsghdr *nlh;
	char e[160] = "";

	(void)state;
	recover_event(&b, "auxiliary", "mlx5_core.eth.0", 65535, &rx, 1);   /* error */
	nlh = dlm_genl_begin(&b, FAMILY, 0, 0, DEVLINK_CMD_PORT_NEW);         /* not health */
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	dlm_msg_end(&b, nlh);
	recover_event(&b, "auxiliary", "mlx5_core.eth.1", 131071, &rx, 0);  /* PF1 */
	recover_event(&b, "pci", "0000:08:00.0", 0, &vnic, 0);
	assert_int_equal(dlh_mon_parse(b.p, b.len, FAMILY, ev_cb, &ev, e, sizeof(e)), 3);
	assert_int_equal(ev.n, 3);
	assert_string_equal(ev.r[0].name, "rx");
	assert_int_equal(ev.r[0].state, 1);
	assert_int_equal(ev.r[0].error_count, 3);
	assert_true(dlh_target_has(&t, &ev.r[0].h));
	assert_false(dlh_target_has(&t, &ev.r[1].h));      /* another port's */
	assert_true(dlh_target_has(&t, &ev.r[2].h));
	dlm_bfree(&b);
	/* broken framing: an error, no event */
	dlf_mk_hugelen(&b);
	ev.n = 0;
	assert_int_equal(dlh_mon_parse(b.p, b.len, FAMILY, ev_cb, &ev, e, sizeof(e)), -EBADMSG);
	assert_int_equal(ev.n, 0);
	dlm_bfree(&b);
}

static void dlh_parse_family__ctrl_reply__id_and_config_group(void **state)
{
	struct buf b = { 0 };
	uint16_t fam = 0;
	uint32_t grp = 0;
	char e[128];

	(void)state;
	dlm_family_reply(&b);
	assert_int_equal(dlh_parse_family(b.p, b.len, &fam, &grp, e, sizeof(e)), 0);
	assert_int_equal(fam, FAMILY);
	assert_int_equal(grp, 7);
	assert_int_equal(dlh_parse_family(b.p, 30, &fam, NULL, e, sizeof(e)), -EBADMSG);
	dlm_bfree(&b);
}

/* ================================================================ live */

/* This kernel may have no devlink (CONFIG_NET_DEVLINK=n): then the socket
 * says so with -ENOENT, the way the source reports "no devlink". */
static void dlh_io_socket__this_kernel__family_or_enoent(void **state)
{
	char e[256] = "";
	struct dlh_io *io;

	(void)state;
	io = dlh_io_socket(-1, NULL, e, sizeof(e));
	if (!io) {
		assert_int_equal(errno, ENOENT);
		assert_non_null(strstr(e, "no devlink"));
		return;
	}
	assert_true(dlh_io_family(io) >= NLMSG_MIN_TYPE);
	{
		struct dlh_handle h = { "pci", "0000:ff:1f.7", 0, 0 };
		struct dlh_reply r;

		assert_true(dlh_io_request(io, DLH_REQ_HEALTH, &h, NULL, &r, e, sizeof(e)) < 0);
		dlh_reply_free(&r);
	}
	dlh_io_close(io);
}

static void dlh_mon_open__this_kernel__fd_or_enoent(void **state)
{
	struct evs ev = { .n = 0 };
	char e[256] = "";
	struct dlh_mon *m;

	(void)state;
	m = dlh_mon_open(-1, e, sizeof(e));
	if (!m) {
		assert_int_equal(errno, ENOENT);
		return;
	}
	assert_true(dlh_mon_fd(m) >= 0);
	assert_true(dlh_mon_dispatch(m, ev_cb, &ev, e, sizeof(e)) >= 0);   /* nothing yet */
	dlh_mon_close(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dlh_build_diagnose__port_reporter__handle_port_and_name),
		cmocka_unit_test(dlh_build_reporter_dump__port_handle__instance_only_dump),
		cmocka_unit_test(dlh_build__bad_arguments__zero),
		cmocka_unit_test(dlh_reply_feed__diagnose_parts_done_ack__complete_at_ack),
		cmocka_unit_test(dlh_reply_feed__nlmsg_len_0x80000001__ebadmsg),
		cmocka_unit_test(dlh_reply_feed__short_zero_and_garbage__ebadmsg),
		cmocka_unit_test(dlh_reply_feed__kernel_error_with_extack__errno_and_text),
		cmocka_unit_test(dlh_reply_feed__other_sequence__skipped),
		cmocka_unit_test(fixtures__committed__exactly_what_the_model_builds),
		cmocka_unit_test(dlh_nlhex__roundtrip_and_bad_text__line_numbers),
		cmocka_unit_test(dlh_mon_parse__recover_notifications__events_for_the_port),
		cmocka_unit_test(dlh_parse_family__ctrl_reply__id_and_config_group),
		cmocka_unit_test(dlh_io_socket__this_kernel__family_or_enoent),
		cmocka_unit_test(dlh_mon_open__this_kernel__fd_or_enoent),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-fixtures"))
		return dlf_write_fixtures(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "--write-set"))
		return dlf_write_set(argc, argv);
	log_set_level(LOG_ERR);
	dlf_to_repo_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
