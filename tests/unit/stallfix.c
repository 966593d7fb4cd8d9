/* stallfix: see stallfix.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>

#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/detect/incident.h"
#include "daemon/ports.h"
#include "lib/loop.h"
#include "stallfix.h"

static void hook(struct incident *inc, enum incident_event ev, void *arg)
{
	struct stallfix *x = arg;

	x->nopen += ev == INCIDENT_OPEN;
	x->njoin += ev == INCIDENT_JOIN;
	x->nend += ev == INCIDENT_END;
	if (x->nev < 16) {
		x->ev[x->nev].ev = ev;
		x->ev[x->nev].id = incident_id(inc);
		x->nev++;
	}
}

int stallfix_setup(void **state)
{
	struct stallfix *x = calloc(1, sizeof(*x));
	char err[256];

	assert_non_null(x);
	assert_non_null(*state);
	x->l = loop_new();
	x->ps = ports_new(x->l, "");
	x->c = coretest_conf(*state);
	x->s = stall_new(x->l, x->ps, x->c, err, sizeof(err));
	assert_non_null(x->s);
	stall_set_hook(x->s, hook, x);
	*state = x;
	return 0;
}

int stallfix_teardown(void **state)
{
	struct stallfix *x = *state;

	stall_free(x->s);
	ports_free(x->ps);
	conf_free(x->c);
	loop_free(x->l);
	free(x);
	return 0;
}
