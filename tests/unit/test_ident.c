/* Unit tests for collectors/counters/ident.c: recorded `ethtool -i` text, devlink
 * info replies, and live queries on a veth pair in a private namespace. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>

#include "collectors/counters/ident.h"
#include "guardbuf.h"
#include "nstest.h"
#include "lib/log.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define ISSUE8 "tests/fixtures/real/ethtool-i_mlx5-cx4lx-ethq-issue8.txt"
#define OFED50 "tests/fixtures/real/ethtool-i_mlx5-cx4lx-ofed5.0_notes.txt"
#define TTAR "tests/fixtures/real/sysfs-infiniband-hw_counters_mlx5_0_procfs-fixture.ttar.txt"

static int have_netns;   /* group setup made a namespace with t0/t1 */
static char tmpdir[64];

static int group_setup(void **state)
{
	char cmd[256];

	(void)state;
	nstest_chdir_repo(ISSUE8);
	strcpy(tmpdir, "/tmp/test_ident.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(cmd, sizeof(cmd), "sh tests/tools/ttar-unpack '%s' '%s'", TTAR, tmpdir);
	if (system(cmd) != 0)
		return -1;
	/* Our own namespace: the veth pair never touches the host. */
	if (unshare(CLONE_NEWNET) == 0 &&
	    system("ip link add t0 type veth peer name t1 2>/dev/null") == 0)
		have_netns = 1;
	return 0;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int group_teardown(void **state)
{
	(void)state;
	nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* ---- recorded text ---- */

static void ident_load_file__issue8_two_blocks__last_block_split_fw(void **state)
{
	struct ident id;
	char err[256] = "";
	int rc;

	(void)state;
	memset(&id, 0x55, sizeof(id));
	rc = ident_load_file(ISSUE8, &id, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_string_equal(id.driver, "mlx5_core");
	assert_string_equal(id.version, "5.0-0");
	assert_string_equal(id.fw_version, "14.23.1020");
	assert_string_equal(id.psid, "MT_2420110034");
	assert_string_equal(id.bus_info, "0000:af:00.0");
	assert_string_equal(id.board_id, "");
	assert_string_equal(id.fw_running, "");
	assert_string_equal(id.source, "text");
}

static void ident_load_file__ofed_four_ports__last_port_wins(void **state)
{
	struct ident id;
	char err[256] = "";

	(void)state;
	assert_int_equal(ident_load_file(OFED50, &id, err, sizeof(err)), 0);
	assert_string_equal(id.driver, "mlx5_core");
	assert_string_equal(id.version, "5.0-2.1.8");
	assert_string_equal(id.fw_version, "14.32.1010");
	assert_string_equal(id.psid, "MT_2420110034");
	assert_string_equal(id.bus_info, "0000:30:00.1");
}

static void ident_parse_text__psid_in_parens__split(void **state)
{
	static const char t[] = "driver: mlx5_core\nfirmware-version: 14.17.1010 (MT_2420110034)\n";
	struct ident id;
	char err[256] = "";

	(void)state;
	assert_int_equal(ident_parse_text(t, strlen(t), &id, err, sizeof(err)), 0);
	assert_string_equal(id.driver, "mlx5_core");
	assert_string_equal(id.fw_version, "14.17.1010");
	assert_string_equal(id.psid, "MT_2420110034");
	assert_string_equal(id.version, "");
	assert_string_equal(id.bus_info, "");
}

static void ident_parse_text__first_issue8_block__no_psid(void **state)
{
	static const char t[] =
		"leinen@zhdk0192:~$ sudo ethtool -i p3p1\r\n"
		"driver: mlx5_core\r\n"
		"version: 3.0-1 (January 2015)\r\n"
		"firmware-version: 14.23.1020\r\n"
		"expansion-rom-version:\r\n"
		"bus-info: 0000:af:00.0";          /* no final newline */
	struct ident id;
	char err[256] = "";

	(void)state;
	assert_int_equal(ident_parse_text(t, strlen(t), &id, err, sizeof(err)), 0);
	assert_string_equal(id.version, "3.0-1 (January 2015)");
	assert_string_equal(id.fw_version, "14.23.1020");
	assert_string_equal(id.psid, "");
	assert_string_equal(id.bus_info, "0000:af:00.0");
}

static void ident_parse_text__fw_parens_with_blanks__not_psid(void **state)
{
	static const char t[] = "driver: bnxt_en\nfirmware-version: 218.0.219.13 (pkg 218.0.222.0)\n"
				"firmware-version-x: ignored\n";
	struct ident id;
	char err[256] = "";

	(void)state;
	assert_int_equal(ident_parse_text(t, strlen(t), &id, err, sizeof(err)), 0);
	assert_string_equal(id.fw_version, "218.0.219.13 (pkg 218.0.222.0)");
	assert_string_equal(id.psid, "");
}

static void ident_parse_text__garbage_line__line_number(void **state)
{
	static const char t[] = "driver: mlx5_core\nthis is not ethtool output\nversion: 1\nmore junk\n";
	struct ident id;
	char err[256] = "";

	(void)state;
	memset(&id, 0, sizeof(id));
	strcpy(id.driver, "keep");
	assert_int_equal(ident_parse_text(t, strlen(t), &id, err, sizeof(err)), -EINVAL);
	assert_true(!strncmp(err, "line 2: ", 8));
	assert_non_null(strstr(err, "this is not ethtool output"));
	assert_non_null(strstr(err, "1 more"));
	assert_string_equal(id.driver, "keep");      /* untouched on error */
}

static void ident_parse_text__hostile_input__errors(void **state)
{
	char big[300], err[256];
	struct ident id;
	static const char nul[] = "driver: a\0b\n";

	(void)state;
	assert_int_equal(ident_parse_text("", 0, &id, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "driver"));
	assert_int_equal(ident_parse_text("# only a comment\n", 17, &id, err, sizeof(err)),
			 -EINVAL);
	snprintf(big, sizeof(big), "driver: %0200d\n", 7);
	assert_int_equal(ident_parse_text(big, strlen(big), &id, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
	assert_int_equal(ident_parse_text(nul, sizeof(nul) - 1, &id, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
	assert_int_equal(ident_parse_text(NULL, 10, &id, err, sizeof(err)), -EINVAL);
}

static void ident_load_file__missing_and_oversized__named_errors(void **state)
{
	char err[256] = "", path[128];
	struct ident id;
	FILE *fp;

	(void)state;
	assert_int_equal(ident_load_file("/nonexistent/ethtool-i.txt", &id, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/ethtool-i.txt"));
	snprintf(path, sizeof(path), "%s/big.txt", tmpdir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("driver: x\n", fp);
	for (int i = 0; i < 8000; i++)
		fputs("# padding\n", fp);
	fclose(fp);
	assert_int_equal(ident_load_file(path, &id, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "big.txt"));
	assert_int_equal(ident_load_file(tmpdir, &id, err, sizeof(err)), -EINVAL);
}

static void on_alarm(int sig)
{
	(void)sig;      /* interrupts a blocking open() with EINTR */
}

/* A FIFO as info_file: the landed code blocked in open() until a writer
 * came (here: an alarm interrupts it after 2 s); a symbolic link was
 * followed, so root read whatever it pointed at. */
static void ident_load_file__fifo_and_symlink__refused_without_blocking(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	char err[256] = "", fifo[128], link[128], real[128];
	struct ident id;
	FILE *fp;
	int rc;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/info.fifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);    /* no SA_RESTART */
	alarm(2);
	rc = ident_load_file(fifo, &id, err, sizeof(err));
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err, "info.fifo: not a regular file"));
	snprintf(real, sizeof(real), "%s/real.txt", tmpdir);
	fp = fopen(real, "w");
	assert_non_null(fp);
	fputs("driver: mlx5_core\n", fp);
	fclose(fp);
	snprintf(link, sizeof(link), "%s/info.link", tmpdir);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(ident_load_file(link, &id, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "info.link: a symbolic link"));
	assert_int_equal(ident_load_file(real, &id, err, sizeof(err)), 0);
}

static void ident_to_json__fields__only_non_empty(void **state)
{
	struct json_object *o = json_object_new_object(), *v;
	struct ident id;

	(void)state;
	memset(&id, 0, sizeof(id));
	strcpy(id.driver, "mlx5_core");
	strcpy(id.psid, "MT_2420110034");
	strcpy(id.source, "text");
	assert_int_equal(ident_to_json(&id, o), 0);
	assert_int_equal(json_object_object_length(o), 3);
	assert_true(json_object_object_get_ex(o, "psid", &v));
	assert_string_equal(json_object_get_string(v), "MT_2420110034");
	assert_false(json_object_object_get_ex(o, "fw_version", NULL));
	assert_int_equal(ident_to_json(&id, NULL), -EINVAL);
	json_object_put(o);
}

/* ---- devlink info reply ---- */

static size_t craft_info(char *buf, int with_fw_version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *n;

	g->cmd = DEVLINK_CMD_INFO_GET;
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_BUS_NAME, "pci");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_DEV_NAME, "0000:af:00.0");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_DRIVER_NAME, "mlx5_core");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_SERIAL_NUMBER, "MT1234X00000");
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_FIXED);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw.psid");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "MT_2420110034");
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_RUNNING);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "14.23.1020");
	mnl_attr_nest_end(nlh, n);
	if (with_fw_version) {
		n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_RUNNING);
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw.version");
		mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "14.32.1010");
		mnl_attr_nest_end(nlh, n);
	}
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_STORED);
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_NAME, "fw.version");
	mnl_attr_put_strz(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, "99.99.9999");
	mnl_attr_nest_end(nlh, n);
	return nlh->nlmsg_len;
}

static void ident_parse_devlink_info__mlx5_reply__psid_and_running(void **state)
{
	char buf[1024];
	struct ident id;
	size_t len;

	(void)state;
	memset(&id, 0, sizeof(id));
	len = craft_info(buf, 1);
	assert_int_equal(ident_parse_devlink_info(buf, len, &id), 0);
	assert_string_equal(id.psid, "MT_2420110034");
	assert_string_equal(id.fw_running, "14.32.1010");   /* fw.version over fw */
	assert_string_equal(id.driver, "mlx5_core");

	memset(&id, 0, sizeof(id));
	strcpy(id.driver, "from_ethtool");
	len = craft_info(buf, 0);
	assert_int_equal(ident_parse_devlink_info(buf, len, &id), 0);
	assert_string_equal(id.fw_running, "14.23.1020");   /* "fw" alone */
	assert_string_equal(id.driver, "from_ethtool");

	assert_int_equal(ident_parse_devlink_info(buf, len - 4, &id), -EINVAL);
	assert_int_equal(ident_parse_devlink_info(buf, 10, &id), -EINVAL);
}

static void ident_parse_devlink_info__bad_nest__einval(void **state)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *n;
	struct ident id;

	(void)state;
	(void)g;
	n = mnl_attr_nest_start(nlh, DEVLINK_ATTR_INFO_VERSION_FIXED);
	/* value not NUL-terminated */
	mnl_attr_put(nlh, DEVLINK_ATTR_INFO_VERSION_VALUE, 3, "abc");
	mnl_attr_nest_end(nlh, n);
	memset(&id, 0, sizeof(id));
	assert_int_equal(ident_parse_devlink_info(buf, nlh->nlmsg_len, &id), -EINVAL);
	assert_string_equal(id.psid, "");
}

/* Fuzz crash (issue #12, item 9): nlmsg_len 0x80000001 passes
 * mnl_nlmsg_ok() (it compares as int), and the attribute walk that follows
 * read past the buffer. The reply sits at the end of a page followed by an
 * unmapped one, so any read past it faults. */
static void ident_parse_devlink_info__nlmsg_len_over_int_max__einval_no_read_past(void **state)
{
	static const uint32_t lens[] = { 0x80000001u, 0x80000004u, 0x8000000fu, 0xffffffffu };
	char buf[1024];
	struct ident id;
	size_t len;

	(void)state;
	len = craft_info(buf, 1);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct nlmsghdr *nlh;
		void *g;

		((struct nlmsghdr *)buf)->nlmsg_len = lens[i];
		g = guardbuf_new(buf, len);
		assert_non_null(g);
		nlh = g;
		assert_int_equal(nlh->nlmsg_len, lens[i]);
		memset(&id, 0, sizeof(id));
		assert_int_equal(ident_parse_devlink_info(g, len, &id), -EINVAL);
		assert_string_equal(id.psid, "");
		guardbuf_free(g, len);
	}
}

/* ---- live ---- */

static void ident_query__veth_in_private_netns__driver_veth(void **state)
{
	struct ident id;
	char err[256] = "", root[128];
	int nsfd, rc;

	(void)state;
	if (!have_netns)
		skip();
	rc = ident_query(-1, "t0", "", NULL, &id, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_string_equal(id.driver, "veth");
	assert_string_equal(id.bus_info, "");
	assert_string_equal(id.psid, "");
	assert_string_equal(id.source, "ethtool");
	/* the PFC storm prevention tunable asked, and why it has none (a
	 * veth has no ethtool tunables: EOPNOTSUPP) */
	assert_string_equal(id.pfc_prevention, "not supported by the driver");

	/* Through a namespace fd, with the fixture's RDMA device for the IB
	 * identity. */
	nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0);
	snprintf(root, sizeof(root), "%s/fixtures", tmpdir);
	assert_int_equal(ident_query(nsfd, "t1", root, "mlx5_0", &id, err, sizeof(err)), 0);
	assert_string_equal(id.driver, "veth");
	assert_string_equal(id.ib_fw_ver, "14.28.2006");
	assert_string_equal(id.board_id, "SM_2001000001034");
	assert_string_equal(id.source, "ethtool+sysfs");
	/* unknown RDMA device, hostile name: parts just stay empty */
	assert_int_equal(ident_query(nsfd, "t1", root, "../mlx5_0", &id, err, sizeof(err)), 0);
	assert_string_equal(id.ib_fw_ver, "");
	close(nsfd);
}

static void ident_query__missing_interface__enodev(void **state)
{
	struct ident id;
	char err[256] = "";

	(void)state;
	if (!have_netns)
		skip();
	assert_int_equal(ident_query(-1, "nosuch0", "", NULL, &id, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "nosuch0"));
	assert_non_null(strstr(err, "own netns"));
	assert_int_equal(ident_query(-1, "averyveryverylongname0", "", NULL, &id, err,
				     sizeof(err)), -EINVAL);
	assert_int_equal(ident_query(-1, "", "", NULL, &id, err, sizeof(err)), -EINVAL);
}

static void ident_query__loopback__no_error(void **state)
{
	struct ident id;
	char err[256] = "";

	(void)state;
	if (!have_netns)
		skip();
	/* lo has no driver info on most kernels: empty fields, not an error */
	assert_int_equal(ident_query(-1, "lo", "", NULL, &id, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ident_load_file__issue8_two_blocks__last_block_split_fw),
		cmocka_unit_test(ident_load_file__ofed_four_ports__last_port_wins),
		cmocka_unit_test(ident_parse_text__psid_in_parens__split),
		cmocka_unit_test(ident_parse_text__first_issue8_block__no_psid),
		cmocka_unit_test(ident_parse_text__fw_parens_with_blanks__not_psid),
		cmocka_unit_test(ident_parse_text__garbage_line__line_number),
		cmocka_unit_test(ident_parse_text__hostile_input__errors),
		cmocka_unit_test(ident_load_file__missing_and_oversized__named_errors),
		cmocka_unit_test(ident_load_file__fifo_and_symlink__refused_without_blocking),
		cmocka_unit_test(ident_to_json__fields__only_non_empty),
		cmocka_unit_test(ident_parse_devlink_info__mlx5_reply__psid_and_running),
		cmocka_unit_test(ident_parse_devlink_info__bad_nest__einval),
		cmocka_unit_test(ident_parse_devlink_info__nlmsg_len_over_int_max__einval_no_read_past),
		cmocka_unit_test(ident_query__veth_in_private_netns__driver_veth),
		cmocka_unit_test(ident_query__missing_interface__enodev),
		cmocka_unit_test(ident_query__loopback__no_error),
	};

	log_set_level(LOG_ERR);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
