/* Unit tests: the port registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "lib/json.h"
#include "lib/loop.h"


static void ports_apply__unchanged_port__keeps_its_history(void **state)
{
	char *dir = coretest_tmpdir(), text[1024], buf[128];
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c1, *c2;
	struct port *a, *b;

	(void)state;
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_packets: 1\n");
	coretest_write(dir, "b.txt", "NIC statistics:\n     rx_packets: 2\n");
	snprintf(text, sizeof(text), "[daemon]\nhorizon = 10s\n[port a]\nstats_file = %s/a.txt\n"
		 "[port b]\nstats_file = %s/b.txt\n", dir, dir);
	c1 = coretest_conf(text);
	ports_apply(ps, c1, 0);
	assert_int_equal(ports_count(ps), 2);
	assert_string_equal(ports_names(ps, buf, sizeof(buf)), "a, b");
	a = ports_find(ps, "a");
	b = ports_find(ps, "b");
	assert_non_null(a);
	assert_int_equal(port_state(a), PORT_UP);
	ports_sample(ps, 1 * SEC, 1 * SEC);
	ports_sample(ps, 2 * SEC, 2 * SEC);
	assert_int_equal(rec_count(port_recorder(a)), 2);
	assert_int_equal(rec_capacity(port_recorder(a)), ports_rec_capacity(c1));

	/* b changes (a threshold), c is new, a is as it was */
	snprintf(text, sizeof(text), "[daemon]\nhorizon = 10s\n[port a]\nstats_file = %s/a.txt\n"
		 "[port b]\nstats_file = %s/b.txt\nstall_threshold = 1s\n"
		 "[port c]\nstats_file = %s/b.txt\n", dir, dir, dir);
	c2 = coretest_conf(text);
	ports_apply(ps, c2, 1);
	assert_int_equal(ports_count(ps), 3);
	assert_ptr_equal(ports_find(ps, "a"), a);
	assert_int_equal(rec_count(port_recorder(a)), 2);
	assert_true(port_serial(ports_find(ps, "b")) > port_serial(a));
	assert_int_equal(rec_count(port_recorder(ports_find(ps, "b"))), 0);
	assert_null(ports_find(ps, "x"));
	(void)b;

	/* a recorder size change starts every recorder afresh */
	ports_apply(ps, c1, 0);
	assert_int_equal(ports_count(ps), 2);
	assert_int_equal(rec_count(port_recorder(ports_find(ps, "a"))), 0);
	ports_free(ps);
	conf_free(c1);
	conf_free(c2);
	loop_free(l);
	coretest_rmdir(dir);
}

static void ports_names__none__says_none(void **state)
{
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	char buf[32];

	(void)state;
	assert_string_equal(ports_names(ps, buf, sizeof(buf)), "none");
	assert_null(ports_at(ps, 0));
	assert_int_equal(ports_rec_bytes(ps), 0);
	ports_free(ps);
	loop_free(l);
}

static void port_counters_json__text_source__every_counter(void **state)
{
	char *dir = coretest_tmpdir(), text[512];
	struct loop *l = loop_new();
	struct ports *ps = ports_new(l, "");
	struct conf *c;
	struct json_object *j, *t;

	(void)state;
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_packets_phy: 10\n     rx_vport_unicast_packets: 7\n");
	snprintf(text, sizeof(text), "[port a]\nstats_file = %s/a.txt\n", dir);
	c = coretest_conf(text);
	ports_apply(ps, c, 0);
	port_sample(ports_find(ps, "a"), 1 * SEC, 1 * SEC, 0);
	j = port_counters_json(ports_find(ps, "a"), 1);
	assert_true(json_object_object_get_ex(j, "text", &t));
	assert_int_equal(json_object_get_uint64(json_object_object_get(t, "rx_packets_phy")), 10);
	assert_int_equal(json_object_object_length(t), 2);
	json_object_put(j);
	/* the file turns to garbage: an error entry, or nothing without errors */
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_pack\n");
	port_sample(ports_find(ps, "a"), 2 * SEC, 2 * SEC, 0);
	j = port_counters_json(ports_find(ps, "a"), 1);
	assert_true(json_object_object_get_ex(j, "text", &t));
	assert_non_null(json_object_object_get(t, "error"));
	json_object_put(j);
	j = port_counters_json(ports_find(ps, "a"), 0);
	assert_false(json_object_object_get_ex(j, "text", NULL));
	json_object_put(j);
	ports_free(ps);
	conf_free(c);
	loop_free(l);
	coretest_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ports_apply__unchanged_port__keeps_its_history),
		cmocka_unit_test(ports_names__none__says_none),
		cmocka_unit_test(port_counters_json__text_source__every_counter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
