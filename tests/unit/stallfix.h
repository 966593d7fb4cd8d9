/* stallfix: a stall detector on a configuration given as text, with no
 * port open (track = none), recording the incident events its hook hears:
 * the fixture of test_stall.c and test_stall_plan.c. */
#ifndef NICSTALL_STALLFIX_H
#define NICSTALL_STALLFIX_H

#include <stdint.h>

#include "daemon/detect/stall.h"

struct loop;
struct ports;
struct conf;

struct stallfix {
	struct loop *l;
	struct ports *ps;
	struct conf *c;
	struct stall *s;
	struct { enum incident_event ev; uint64_t id; } ev[16];
	unsigned nev, nopen, njoin, nend;
};

/* *state: the configuration's text on entry (cmocka's prestate), the
 * fixture on return. */
int stallfix_setup(void **state);
int stallfix_teardown(void **state);

#endif
