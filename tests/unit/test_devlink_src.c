/* Unit tests for the devlink health counter source
 * (collectors/counters/src_devlink.c) on the recorded fixture sets
 * (tests/fixtures/devlink/, dlhfix.h) and copies of them with files
 * swapped. */
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

/* ================================================================ source */

static void src_devlink_health__cx6dx_fixture__all_reporters_and_vnic(void **state)
{
	static const char *const diag[] = { "vnic", "rx", "fw", "fw_fatal", NULL };
	const struct dlh_state *st;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	int i;

	(void)state;
	dlf_open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", diag);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_string_equal(s.err, "");             /* fw_fatal EOPNOTSUPP: fine */
	st = src_devlink_health_state(&s);
	assert_int_equal(st->n, 5);
	assert_string_equal(st->handles, "pci/0000:08:00.0 auxiliary/mlx5_core.eth.0/65535");
	assert_string_equal(st->rep[0].name, "fw");
	assert_string_equal(st->rep[4].name, "vnic");
	assert_int_equal(st->diag_rc[1], -EOPNOTSUPP);          /* fw_fatal */
	assert_int_equal(st->diag_rc[3], 1);                    /* tx: not asked */
	i = dlf_lay_find(lay, "devlink/vnic/nic_receive_steering_discard");
	assert_true(i >= 0);
	assert_int_equal(vals[i], 1843);
	assert_int_equal(lay->width[i], CNT_W64);
	i = dlf_lay_find(lay, "devlink/rx/error_count");
	assert_true(i >= 0);
	assert_int_equal(vals[i], 2);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/recover_count")], 2);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/state")], 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/grace_period_ms")], 500);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/auto_recover")], 1);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/dump_time_ns")], 1764576000123456789ull);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/tx/dump_time_ns")], 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/fw_fatal/grace_period_ms")], 1200000);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/fw/Syndrome")], 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/RQs/7/channel_ix")], 7);
	assert_true(dlf_lay_find(lay, "devlink/vnic/grace_period_ms") < 0);   /* no recover op */
	assert_true(dlf_lay_find(lay, "devlink/fw/grace_period_ms") < 0);
	/* PF1's reporters were in the dump too: not this port's */
	/* fw 5, fw_fatal 7, rx 7, tx 7, vnic 3; diagnose fw 1, rx, vnic 10 */
	assert_int_equal(lay->n, (5 + 7 + 7 + 7 + 3) + 1 + (5 + 8 * 24) + 10);
	s.ops->close(&s);
}

static void src_devlink_health__k515_without_vnic__rx_on_pci_port(void **state)
{
	const struct dlh_state *st;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	dlf_open_fixture(&s, FIXDIR "/cx6dx-k5.15-novnic", "enp8s0f1np1", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->n, 4);
	assert_string_equal(st->handles, "pci/0000:08:00.1 pci/0000:08:00.1/131071");
	assert_true(dlf_lay_find(lay, "devlink/vnic/state") < 0);
	assert_true(dlf_lay_find(lay, "devlink/vnic/nic_receive_steering_discard") < 0);
	assert_true(dlf_lay_find(lay, "devlink/rx/error_count") >= 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/error_count")], 0);
	/* the recording is PF0's diagnose; the port filter does not apply to
	 * diagnose, so it still parses */
	assert_true(dlf_lay_find(lay, "devlink/rx/RQs/0/rqn") >= 0);
	s.ops->close(&s);
}

/* Each diagnose at its own rate: vnic (one firmware command) at every
 * query, rx (three per channel) seldom; a full refresh asks for both. */
static void src_devlink_health__diagnose_intervals__rx_carried_vnic_fresh(void **state)
{
	static const char *const diag[] = { "vnic", "rx", NULL };
	static const uint64_t every[] = { 0, 3600000000000ull };
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0", .netns_fd = -1,
			       .sysfs_root = "" };
	struct dlh_opts o = { .diagnose = diag, .diagnose_every_ns = every,
			      .interval_ns = 1, .min_refresh_ns = 1 };
	const struct dlh_state *st;
	struct clayout *l;
	const uint64_t *v;
	uint64_t rx0 = 0, vnic0 = 0;
	struct src s;
	char dir[64], path[128];
	int k;

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++) {
		if (!strcmp(st->rep[i].name, "rx"))
			rx0 = st->diag_real_ns[i];
		if (!strcmp(st->rep[i].name, "vnic"))
			vnic0 = st->diag_real_ns[i];
	}
	assert_true(rx0 && vnic0);
	snprintf(path, sizeof(path), "%s/diagnose-vnic.nlhex", dir);
	{
		struct buf b = { 0 };
		struct card c = dlm_cx6dx;
		char e[128];

		c.steer = 1900;
		dlf_mk_vnic(&b, &c);
		assert_int_equal(nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
		dlm_bfree(&b);
	}
	usleep(2000);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	k = dlf_lay_find(l, "devlink/vnic/nic_receive_steering_discard");
	assert_true(k >= 0);
	assert_int_equal(v[k], 1900);           /* vnic asked again */
	assert_true(dlf_lay_find(l, "devlink/rx/RQs/0/HW_state") >= 0);  /* rx carried */
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++) {
		if (!strcmp(st->rep[i].name, "rx"))
			assert_true(st->diag_real_ns[i] == rx0);
		if (!strcmp(st->rep[i].name, "vnic"))
			assert_true(st->diag_real_ns[i] > vnic0);
	}
	/* a full refresh (the investigation's end) asks rx too */
	src_devlink_health_refresh(&s, NULL);
	usleep(2000);
	assert_int_equal(s.ops->read(&s, &l, &v), 0);
	st = src_devlink_health_state(&s);
	for (unsigned i = 0; i < st->n; i++)
		if (!strcmp(st->rep[i].name, "rx"))
			assert_true(st->diag_real_ns[i] > rx0);
	s.ops->close(&s);
	dlf_rm_set(dir);
}

static void src_devlink_health__read_twice__cached_until_refresh(void **state)
{
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	uint64_t q, total, last;
	struct src s;
	char dir[64], path[128];

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	/* floors of an hour, not the defaults (1 s, 100 ms): a loaded CI
	 * machine can take longer than 100 ms between two reads here */
	{
		struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
				       .netns_fd = -1, .sysfs_root = "" };
		struct dlh_opts o = { .fixture_dir = dir, .interval_ns = 3600000000000ull,
				      .min_refresh_ns = 3600000000000ull };

		memset(&s, 0, sizeof(s));
		s.ops = &src_devlink_health_ops;
		assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	}
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	/* the reply changes; the source does not ask again within its interval */
	snprintf(path, sizeof(path), "%s/diagnose-vnic.nlhex", dir);
	{
		struct buf b = { 0 };
		struct card c = dlm_cx6dx;
		char e[128];

		c.steer = 1900;
		dlf_mk_vnic(&b, &c);
		assert_int_equal(nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
		dlm_bfree(&b);
	}
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);
	assert_ptr_equal(v1, v2);
	src_devlink_health_cost(&s, &q, &total, &last);
	assert_int_equal(q, 1);
	/* a refresh right away is held back by min_refresh */
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	src_devlink_health_cost(&s, &q, NULL, NULL);
	assert_int_equal(q, 1);
	s.ops->close(&s);

	/* with a short floor, the refresh queries: same names, same layout */
	{
		struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
				       .netns_fd = -1, .sysfs_root = "" };
		struct dlh_opts o = { .fixture_dir = dir, .min_refresh_ns = 1 };
		int i;

		memset(&s, 0, sizeof(s));
		s.ops = &src_devlink_health_ops;
		assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
		assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
		i = dlf_lay_find(l1, "devlink/vnic/nic_receive_steering_discard");
		assert_int_equal(v1[i], 1900);
		src_devlink_health_refresh(&s, NULL);
		assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
		assert_ptr_equal(l1, l2);
		src_devlink_health_cost(&s, &q, NULL, NULL);
		assert_int_equal(q, 2);
		s.ops->close(&s);
	}
	dlf_rm_set(dir);
}

static void src_devlink_health__hostile_vnic_reply__named_error_others_kept(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	char dir[64], cmd[512];
	const struct dlh_state *st;

	(void)state;
	for (size_t h = 0; h < sizeof(dlf_hostile) / sizeof(dlf_hostile[0]); h++) {
		dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
		snprintf(cmd, sizeof(cmd), "cp %s/hostile/%s %s/diagnose-vnic.nlhex", FIXDIR,
			 dlf_hostile[h].name, dir);
		assert_int_equal(system(cmd), 0);
		dlf_open_fixture(&s, dir, "enp8s0f0np0", NULL);
		assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
		assert_non_null(strstr(s.err, "diagnose vnic"));
		st = src_devlink_health_state(&s);
		assert_true(st->diag_rc[4] < 0);
		assert_true(dlf_lay_find(lay, "devlink/vnic/nic_receive_steering_discard") < 0);
		assert_true(dlf_lay_find(lay, "devlink/vnic/error_count") >= 0);
		assert_true(dlf_lay_find(lay, "devlink/rx/RQs/0/rqn") >= 0);
		s.ops->close(&s);
		dlf_rm_set(dir);
	}
	/* a hostile reporter list: the read fails with the reason */
	for (size_t h = 0; h < sizeof(dlf_hostile) / sizeof(dlf_hostile[0]); h++) {
		dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
		snprintf(cmd, sizeof(cmd), "cp %s/hostile/%s %s/health-get.nlhex", FIXDIR,
			 dlf_hostile[h].name, dir);
		assert_int_equal(system(cmd), 0);
		dlf_open_fixture(&s, dir, "enp8s0f0np0", NULL);
		assert_true(s.ops->read(&s, &lay, &vals) < 0);
		assert_non_null(strstr(s.err, "devlink health show"));
		s.ops->close(&s);
		dlf_rm_set(dir);
	}
}

/* The first snapshot asks vnic only: rx keeps its values, with their
 * older time, and the layout does not change. */
static void src_devlink_health__narrowed_refresh__others_carried(void **state)
{
	static const char *const only_vnic[] = { "vnic", NULL };
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	struct json_object *o, *reps, *rx;
	const struct dlh_state *st;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o2 = { .fixture_dir = FIXDIR "/cx6dx-k6.8", .min_refresh_ns = 1 };
	char e[128];
	uint64_t first;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o2), 0);
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	first = src_devlink_health_state(&s)->diag_real_ns[2];
	assert_true(first > 0);
	src_devlink_health_refresh(&s, only_vnic);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->diag_rc[2], 1);                   /* rx: not asked */
	assert_int_equal(st->diag_real_ns[2], first);          /* ... carried */
	assert_true(st->diag_real_ns[4] >= first);             /* vnic: new */
	assert_int_equal(v2[dlf_lay_find(l2, "devlink/rx/RQs/7/channel_ix")], 7);
	assert_string_equal(s.err, "");
	o = json_object_new_object();
	assert_int_equal(dlh_state_to_json(st, o), 0);
	reps = json_object_object_get(o, "reporters");
	rx = json_object_array_get_idx(reps, 2);
	assert_true(json_object_object_get_ex(rx, "diagnose", NULL));
	assert_int_equal(json_object_get_uint64(json_object_object_get(rx, "diagnose_time_ns")),
			 first);
	json_object_put(o);
	/* the next refresh is the full list again */
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_int_equal(src_devlink_health_state(&s)->diag_rc[2], 0);
	/* recorded replies have no events to monitor */
	assert_null(src_devlink_health_mon_open(&s, e, sizeof(e)));
	assert_string_equal(src_devlink_health_target(&s)->port.dev, "mlx5_core.eth.0");
	s.ops->close(&s);
}

/* The writer the system tests use: another netdev name, new figures. */
static void write_set__netdev_and_figures__source_reads_them(void **state)
{
	char dir[] = "/tmp/test_dlh_set.XXXXXX";
	char *argv[] = { "t", "--write-set", dir, "--netdev", "veth-srv", "--steer", "1900",
			 "--rx-errors", "1", NULL };
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(dlf_write_set(9, argv), 0);
	dlm_netdev0 = "enp8s0f0np0";
	dlf_open_fixture(&s, dir, "veth-srv", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/vnic/nic_receive_steering_discard")], 1900);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/error_count")], 1);
	s.ops->close(&s);
	dlf_rm_set(dir);
}

static void src_devlink_health__diagnose_fails_later__previous_values_kept(void **state)
{
	struct clayout *l1, *l2;
	const uint64_t *v1, *v2;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { .min_refresh_ns = 1 };
	char dir[64], cmd[512];
	int i;

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &l1, &v1), 0);
	snprintf(cmd, sizeof(cmd), "cp %s/hostile/truncated.nlhex %s/diagnose-vnic.nlhex",
		 FIXDIR, dir);
	assert_int_equal(system(cmd), 0);
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &l2, &v2), 0);
	assert_ptr_equal(l1, l2);                 /* same names */
	i = dlf_lay_find(l2, "devlink/vnic/nic_receive_steering_discard");
	assert_int_equal(v2[i], 1843);
	assert_non_null(strstr(s.err, "diagnose vnic"));
	s.ops->close(&s);
	dlf_rm_set(dir);
}

static void src_devlink_health__no_devlink_or_no_port__enoent_enodev(void **state)
{
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { 0 };
	struct src s;
	char dir[64], path[128];

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	/* an interface that is not a devlink port, no PCI address either */
	ctx.ifname = "veth0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENODEV);
	assert_non_null(strstr(s.err, "no devlink port for veth0"));
	/* ... with a PCI address that exists: device reporters only */
	o.bus_info = "0000:08:00.1";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	{
		struct clayout *lay;
		const uint64_t *vals;

		s.ops = &src_devlink_health_ops;
		assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
		assert_int_equal(src_devlink_health_state(&s)->n, 3);
		assert_true(dlf_lay_find(lay, "devlink/rx/state") < 0);
		s.ops->close(&s);
	}
	/* ... and one that does not */
	o.bus_info = "0000:09:00.0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENODEV);
	/* a kernel without devlink */
	snprintf(path, sizeof(path), "%s/family.nlhex", dir);
	unlink(path);
	ctx.ifname = "enp8s0f0np0";
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), -ENOENT);
	dlf_rm_set(dir);
}

static void src_devlink_health__kernel_without_health__empty_layout(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct json_object *o;
	struct src s;
	char dir[64], path[128];

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/health-get.nlhex", dir);
	unlink(path);                             /* answers EOPNOTSUPP */
	dlf_open_fixture(&s, dir, "enp8s0f0np0", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(lay->n, 0);
	o = json_object_new_object();
	assert_int_equal(dlh_state_to_json(src_devlink_health_state(&s), o), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "note")),
			    "no devlink health");
	json_object_put(o);
	s.ops->close(&s);
	dlf_rm_set(dir);
}

static void dlh_state_to_json__cx6dx__reporters_with_diagnose(void **state)
{
	struct json_object *o = json_object_new_object(), *reps, *r, *v;
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;

	(void)state;
	dlf_open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	assert_int_equal(dlh_state_to_json(src_devlink_health_state(&s), o), 0);
	assert_true(json_object_object_get_ex(o, "reporters", &reps));
	assert_int_equal(json_object_array_length(reps), 5);
	r = json_object_array_get_idx(reps, 2);     /* fw, fw_fatal, rx */
	assert_string_equal(json_object_get_string(json_object_object_get(r, "name")), "rx");
	assert_string_equal(json_object_get_string(json_object_object_get(r, "handle")),
			    "auxiliary/mlx5_core.eth.0/65535");
	assert_string_equal(json_object_get_string(json_object_object_get(r, "state")), "healthy");
	assert_int_equal(json_object_get_int(json_object_object_get(r, "error_count")), 2);
	assert_true(json_object_get_boolean(json_object_object_get(r, "auto_recover")));
	assert_true(json_object_object_get_ex(r, "diagnose", &v));
	assert_true(json_object_object_get_ex(v, "RQs", &v));
	assert_int_equal(json_object_array_length(v), 8);
	r = json_object_array_get_idx(reps, 4);     /* vnic */
	assert_true(json_object_object_get_ex(r, "diagnose", &v));
	assert_true(json_object_object_get_ex(v, "vNIC env counters", &v));
	assert_int_equal(json_object_get_int(json_object_object_get(v,
			 "nic_receive_steering_discard")), 1843);
	assert_false(json_object_object_get_ex(r, "grace_period_ms", NULL));
	json_object_put(o);
	s.ops->close(&s);
}

static void src_devlink_health_dump__stored_dump__json_only_when_newer(void **state)
{
	struct json_object *t = NULL, *v;
	struct src s;
	char e[200];
	int retaken = -1;

	(void)state;
	dlf_open_fixture(&s, FIXDIR "/cx6dx-k6.8", "enp8s0f0np0", NULL);
	assert_int_equal(src_devlink_health_dump(&s, "rx", 1764575000000000000ull, 1 << 20,
						 &t, &retaken, e, sizeof(e)), 0);
	assert_non_null(t);
	assert_int_equal(retaken, 0);
	assert_true(json_object_object_get_ex(t, "RQs", &v));
	json_object_put(t);
	/* older than the stall: not copied */
	assert_int_equal(src_devlink_health_dump(&s, "rx", 1764577000000000000ull, 1 << 20,
						 &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "older than the stall"));
	/* over the size bound */
	assert_int_equal(src_devlink_health_dump(&s, "rx", 0, 100, &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "over the 100 limit"));
	/* no stored dump: DUMP_GET is never sent (it would take one) */
	assert_int_equal(src_devlink_health_dump(&s, "tx", 0, 1 << 20, &t, NULL, e, sizeof(e)), 0);
	assert_null(t);
	assert_non_null(strstr(e, "no stored dump"));
	assert_int_equal(src_devlink_health_dump(&s, "nope", 0, 1 << 20, &t, NULL, e, sizeof(e)),
			 -ENOENT);
	s.ops->close(&s);
}

static void src_devlink_health__recover_count_moves__recover_seen_time(void **state)
{
	struct clayout *lay;
	const uint64_t *vals;
	struct src s;
	struct src_ctx ctx = { .port_name = "p0", .ifname = "enp8s0f0np0",
			       .netns_fd = -1, .sysfs_root = "" };
	struct dlh_opts o = { .min_refresh_ns = 1 };
	const struct dlh_state *st;
	char dir[64], path[128], e[128];
	struct buf b = { 0 };
	struct card c = dlm_cx6dx;

	(void)state;
	dlf_copy_set("cx6dx-k6.8", dir, sizeof(dir));
	o.fixture_dir = dir;
	memset(&s, 0, sizeof(s));
	s.ops = &src_devlink_health_ops;
	assert_int_equal(src_devlink_health_open(&s, &ctx, &o), 0);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_int_equal(st->recover_seen_ns[2], 0);   /* rx */
	c.rx_errors = 3;
	dlf_mk_health(&b, &c);
	snprintf(path, sizeof(path), "%s/health-get.nlhex", dir);
	assert_int_equal(nlhex_write(path, NULL, b.p, b.len, e, sizeof(e)), 0);
	dlm_bfree(&b);
	src_devlink_health_refresh(&s, NULL);
	assert_int_equal(s.ops->read(&s, &lay, &vals), 0);
	st = src_devlink_health_state(&s);
	assert_string_equal(st->rep[2].name, "rx");
	assert_int_equal(st->rep[2].recover_count, 3);
	assert_true(st->recover_seen_ns[2] > 0);
	assert_int_equal(vals[dlf_lay_find(lay, "devlink/rx/error_count")], 3);
	s.ops->close(&s);
	dlf_rm_set(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(src_devlink_health__cx6dx_fixture__all_reporters_and_vnic),
		cmocka_unit_test(src_devlink_health__k515_without_vnic__rx_on_pci_port),
		cmocka_unit_test(src_devlink_health__read_twice__cached_until_refresh),
		cmocka_unit_test(src_devlink_health__diagnose_intervals__rx_carried_vnic_fresh),
		cmocka_unit_test(src_devlink_health__hostile_vnic_reply__named_error_others_kept),
		cmocka_unit_test(src_devlink_health__narrowed_refresh__others_carried),
		cmocka_unit_test(write_set__netdev_and_figures__source_reads_them),
		cmocka_unit_test(src_devlink_health__diagnose_fails_later__previous_values_kept),
		cmocka_unit_test(src_devlink_health__no_devlink_or_no_port__enoent_enodev),
		cmocka_unit_test(src_devlink_health__kernel_without_health__empty_layout),
		cmocka_unit_test(dlh_state_to_json__cx6dx__reporters_with_diagnose),
		cmocka_unit_test(src_devlink_health_dump__stored_dump__json_only_when_newer),
		cmocka_unit_test(src_devlink_health__recover_count_moves__recover_seen_time),
	};

	log_set_level(LOG_ERR);
	dlf_to_repo_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
