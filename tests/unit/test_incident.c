/* Unit tests: incident records and their limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "coretest.h"
#include "daemon/detect/incident.h"
#include "daemon/detect/liveness.h"
#include "lib/json.h"

static struct sflow flow(uint16_t sport, uint64_t sess)
{
	struct sflow f;

	memset(&f, 0, sizeof(f));
	f.obs = coretest_engine_obs(sport, sess, 1, 0, 0);
	strcpy(f.port, "a");
	f.state = FLOW_STALLED;
	f.stalled_at_ns = 5 * SEC;
	return f;
}

static void incidents_admit__within_cooldown__refused_and_counted(void **state)
{
	struct incidents *is = incidents_new();
	struct incident_refusal r;

	(void)state;
	assert_int_equal(incidents_admit(is, "a", 10 * SEC, 10 * SEC, 30, &r), 0);
	assert_non_null(incidents_open(is, "a", "a", 10 * SEC, 10 * SEC, 1));
	assert_int_equal(incidents_admit(is, "a", 15 * SEC, 10 * SEC, 30, &r), 1);
	assert_string_equal(r.why, "cooldown");
	assert_int_equal(r.suppressed, 1);
	assert_int_equal(r.log, 1);
	/* a second refusal within a second is counted but not logged again */
	assert_int_equal(incidents_admit(is, "a", 15 * SEC + 100 * MS, 10 * SEC, 30, &r), 1);
	assert_int_equal(r.suppressed, 2);
	assert_int_equal(r.log, 0);
	/* another group is not held back */
	assert_int_equal(incidents_admit(is, "b", 15 * SEC, 10 * SEC, 30, &r), 0);
	/* the next incident of the group says how many were suppressed */
	assert_int_equal(incidents_admit(is, "a", 21 * SEC, 10 * SEC, 30, &r), 0);
	struct incident *inc = incidents_open(is, "a", "a", 21 * SEC, 21 * SEC, 2);
	struct json_object *j = incident_json(inc, 21 * SEC);

	assert_int_equal(jx_u64(j, "suppressed_before"), 2);
	json_object_put(j);
	incidents_free(is);
}

static void incidents_admit__hourly_limit__refused_until_an_hour_passed(void **state)
{
	struct incidents *is = incidents_new();
	struct incident_refusal r;
	uint64_t t = 100 * SEC;

	(void)state;
	for (int i = 0; i < 3; i++, t += 20 * SEC) {
		assert_int_equal(incidents_admit(is, "g", t, 10 * SEC, 3, &r), 0);
		incidents_open(is, "a", "g", t, t, t);
	}
	assert_int_equal(incidents_admit(is, "g", t, 10 * SEC, 3, &r), 1);
	assert_string_equal(r.why, "hourly limit");
	assert_int_equal(r.in_hour, 3);
	/* all three still within the hour; then the first is older */
	assert_int_equal(incidents_admit(is, "g", 100 * SEC + 3599 * SEC, 10 * SEC, 3, &r), 1);
	assert_int_equal(incidents_admit(is, "g", 100 * SEC + 3601 * SEC, 10 * SEC, 3, &r), 0);
	incidents_free(is);
}

static void incident_flow_done__every_flow_released__ends_released(void **state)
{
	struct incidents *is = incidents_new();
	struct incident *inc = incidents_open(is, "a", "a", 5 * SEC, 5 * SEC, 1);
	struct sflow f1 = flow(40001, 1), f2 = flow(40002, 2);
	int any = -1;

	(void)state;
	incident_add_flow(inc, &f1);
	incident_add_flow(inc, &f2);
	incident_add_flow(inc, &f1);    /* listed once */
	assert_int_equal(incident_nflows(inc), 2);
	assert_int_equal(incident_stalled_until(inc, NULL), 0);
	assert_int_equal(incident_flow_done(inc, &f1, 0, 6 * SEC, 5 * SEC, &any), 0);
	/* the stall is whole until f1 was last seen stalled, and stays so
	 * when f1 stalls again and moves later */
	assert_int_equal(incident_stalled_until(inc, NULL), 5 * SEC);
	incident_add_flow(inc, &f1);
	assert_int_equal(incident_stalled_until(inc, NULL), 5 * SEC);
	assert_int_equal(incident_flow_done(inc, &f1, 0, 6 * SEC + 500, 6 * SEC + 400, &any), 0);
	assert_int_equal(incident_stalled_until(inc, NULL), 5 * SEC);
	assert_int_equal(incident_flow_done(inc, &f2, 1, 7 * SEC, 6 * SEC, &any), 1);
	assert_int_equal(incident_stalled_until(inc, NULL), 5 * SEC);       /* closing: no work */
	assert_int_equal(any, 1);       /* one moved again, one only closed */
	incident_end(inc, 7 * SEC, any, 60 * SEC);
	assert_true(incident_released(inc));
	struct json_object *j = incident_json(inc, 8 * SEC);

	assert_string_equal(jx_str(j, "state"), "released");
	assert_int_equal(jx_len(jx_arr(j, "flows")), 2);
	assert_string_equal(jx_str(json_object_array_get_idx(jx_arr(j, "flows"), 1), "state"),
			    "closed");
	assert_true(jx_double(j, "duration_ms", 0) == 2000.0);
	json_object_put(j);
	incidents_free(is);
}

static void incident_flow_done__only_closed__ends_unreleased(void **state)
{
	struct incidents *is = incidents_new();
	struct incident *inc = incidents_open(is, "a", "a", 5 * SEC, 5 * SEC, 1);
	struct sflow f1 = flow(40001, 1);
	int any = -1;

	(void)state;
	incident_add_flow(inc, &f1);
	assert_int_equal(incident_flow_done(inc, &f1, 1, 6 * SEC, 5 * SEC, &any), 1);
	assert_int_equal(any, 0);
	assert_int_equal(incident_stalled_until(inc, NULL), 0);       /* none moved */
	incident_end(inc, 6 * SEC, any, 60 * SEC);
	assert_true(incident_ended(inc));
	assert_false(incident_released(inc));
	incidents_free(is);
}

static void incident_add_flow__beyond_limit__counted_not_listed(void **state)
{
	struct incidents *is = incidents_new();
	struct incident *inc = incidents_open(is, "a", "a", 5 * SEC, 5 * SEC, 1);

	(void)state;
	for (unsigned i = 0; i < INCIDENT_MAX_FLOWS + 5; i++) {
		struct sflow f = flow((uint16_t)(40000 + i), i);

		incident_add_flow(inc, &f);
	}
	assert_int_equal(incident_nflows(inc), INCIDENT_MAX_FLOWS);
	struct json_object *j = incident_json(inc, 5 * SEC);

	assert_int_equal(jx_u64(j, "flows_not_listed"), 5);
	json_object_put(j);
	incidents_free(is);
}

static void incidents_get__ring_of_kept__old_ids_gone(void **state)
{
	struct incidents *is = incidents_new();
	unsigned n = 0;

	(void)state;
	for (unsigned i = 0; i < INCIDENT_KEEP + 3; i++)
		incidents_open(is, "a", "a", i * SEC, i * SEC, i);
	assert_null(incidents_get(is, 3));
	assert_non_null(incidents_get(is, 4));
	assert_int_equal(incident_id(incidents_get(is, 0)), INCIDENT_KEEP + 3);
	assert_null(incidents_get(is, INCIDENT_KEEP + 4));
	for (struct incident *i = incidents_next(is, NULL); i; i = incidents_next(is, i))
		n++;
	assert_int_equal(n, INCIDENT_KEEP);
	/* the newest open one of a group */
	assert_int_equal(incident_id(incidents_open_of(is, "a")), INCIDENT_KEEP + 3);
	assert_null(incidents_open_of(is, "b"));
	incidents_free(is);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(incidents_admit__within_cooldown__refused_and_counted),
		cmocka_unit_test(incidents_admit__hourly_limit__refused_until_an_hour_passed),
		cmocka_unit_test(incident_flow_done__every_flow_released__ends_released),
		cmocka_unit_test(incident_flow_done__only_closed__ends_unreleased),
		cmocka_unit_test(incident_add_flow__beyond_limit__counted_not_listed),
		cmocka_unit_test(incidents_get__ring_of_kept__old_ids_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
