/* Unit tests: a port's counter sources are the rows of a table
 * (daemon/port_srcs.c, port_src_kinds[]). A toy source added as a row
 * opens with the port, is read at each sample, shows in the counters and
 * the status (with what its row adds), and goes when the port goes; its
 * loss is the interface's only when its row says so: adding a counter
 * source is its src_ops and one row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/counters/counters.h"
#include "coretest.h"
#include "daemon/conf.h"
#include "daemon/port.h"
#include "daemon/port_int.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/rtnl.h"
#include "nstest.h"

#include <sys/socket.h>
#include <unistd.h>

/* ---- the toy source: two counters that count its reads ---- */

struct toy {
	struct clayout *lay;
	uint64_t v[2];
};
static unsigned toy_opens, toy_closes;
/* the next reads fail with this (-errno): the toy's, the toy of the
 * interface's */
static int toy_fail, toyif_fail;

static int toy_open(struct src *s, const struct src_ctx *ctx)
{
	static const char *const names[] = { "toy_frames", "toy_drops" };
	struct toy *t = calloc(1, sizeof(*t));

	(void)ctx;
	if (!t || !(t->lay = clayout_new(2, names, NULL))) {
		free(t);
		return -ENOMEM;
	}
	s->priv = t;
	toy_opens++;
	return 0;
}

static const struct src_ops toyif_ops;

static int toy_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	struct toy *t = s->priv;
	int fail = s->ops == &toyif_ops ? toyif_fail : toy_fail;

	if (fail) {
		snprintf(s->err, sizeof(s->err), "%s: %s", s->ops->name, strerror(-fail));
		return fail;
	}
	t->v[0] += 10;
	t->v[1] += 1;
	*lay = t->lay;
	*vals = t->v;
	return 0;
}

static void toy_close(struct src *s)
{
	struct toy *t = s->priv;

	clayout_unref(t->lay);
	free(t);
	s->priv = NULL;
	toy_closes++;
}

static const struct src_ops toy_ops = { "toy", toy_open, toy_read, toy_close };
static const struct src_ops toyif_ops = { "toyif", toy_open, toy_read, toy_close };

/* its row: open, what it adds to the status, its loss not the port's */
static void toy_row_open(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	int rc;

	(void)p;
	ps->s.ops = &toy_ops;
	rc = ps->s.ops->open(&ps->s, ctx);
	ps->open = rc == 0;
	if (rc < 0)
		snprintf(ps->why, sizeof(ps->why), "%s", strerror(-rc));
}

static void toyif_row_open(struct port *p, struct port_src *ps, const struct src_ctx *ctx)
{
	(void)p;
	ps->s.ops = &toyif_ops;
	ps->open = ps->s.ops->open(&ps->s, ctx) == 0;
}

static void toy_row_json(const struct port *p, const struct port_src *ps, struct json_object *o)
{
	(void)p;
	jx_add_u64(o, "toy_seen", ((const struct toy *)ps->s.priv)->v[1]);
}

static void port_srcs__toy_row__opened_read_shown_and_closed(void **st)
{
	char *dir = coretest_tmpdir(), text[512];
	struct loop *l = loop_new();
	struct conf *c;
	struct port *p;
	struct json_object *j, *t, *srcs, *toy = NULL;
	/* the shipped driver row (recorded text), then the toy */
	struct port_src_kind kinds[2];

	(void)st;
	kinds[0] = port_src_kinds[SLOT_DRV];
	kinds[1] = (struct port_src_kind){ "toy", toy_row_open, toy_row_json, NULL, 0 };
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_packets_phy: 10\n");
	snprintf(text, sizeof(text), "[port a]\nstats_file = %s/a.txt\n", dir);
	c = coretest_conf(text);
	p = port_new_with(&c->ports[0], "", 16, l, kinds, 2);
	assert_non_null(p);
	assert_int_equal(port_state(p), PORT_UP);
	assert_int_equal(toy_opens, 1);
	assert_int_equal(port_nsrc(p), 2);
	assert_string_equal(port_src_name(p, 1), "toy");
	port_sample(p, 1 * SEC, 1 * SEC, 1);
	port_sample(p, 2 * SEC, 2 * SEC, 1);
	/* its counters beside the driver's, as read */
	j = port_counters_json(p, 1);
	assert_true(json_object_object_get_ex(j, "toy", &t));
	assert_int_equal(json_object_get_uint64(json_object_object_get(t, "toy_frames")), 20);
	assert_int_equal(json_object_get_uint64(json_object_object_get(t, "toy_drops")), 2);
	assert_true(json_object_object_get_ex(j, "text", NULL));
	json_object_put(j);
	/* in the status, with what its row adds */
	j = port_status_json(p, 2 * SEC);
	srcs = jx_arr(j, "sources");
	for (size_t i = 0; i < jx_len(srcs); i++)
		if (!strcmp(jx_text(json_object_array_get_idx(srcs, i), "name"), "toy"))
			toy = json_object_array_get_idx(srcs, i);
	assert_non_null(toy);
	assert_string_equal(jx_text(toy, "state"), "ok");
	assert_int_equal(jx_u64(toy, "counters"), 2);
	assert_int_equal(jx_u64(toy, "reads"), 2);
	assert_int_equal(jx_u64(toy, "toy_seen"), 2);
	json_object_put(j);
	port_free(p);
	assert_int_equal(toy_closes, 1);
	conf_free(c);
	loop_free(l);
	coretest_rmdir(dir);
}

/* Port a on eth-a, a veth of namespace nsfd (made here, up, its peer
 * eth-b), with the recorded driver text and the rows kinds: up. */
static struct port *port_on_veth(const char *dir, int nsfd, struct loop *l,
				 const struct port_src_kind *kinds, unsigned n, struct conf **c)
{
	char text[512];
	struct port *p;

	assert_true(nsfd >= 0);
	assert_int_equal(nstest_sh("nsenter --net=/proc/%d/fd/%d sh -c 'ip link add eth-a type veth "
				   "peer name eth-b && ip link set eth-a up && ip link set eth-b up'",
				   (int)getpid(), nsfd), 0);
	coretest_write(dir, "a.txt", "NIC statistics:\n     rx_packets_phy: 10\n");
	snprintf(text, sizeof(text), "[port a]\nstats_file = %s/a.txt\ninterface = eth-a\n"
		 "netns = /proc/%d/fd/%d\n", dir, (int)getpid(), nsfd);
	*c = coretest_conf(text);
	p = port_new_with(&(*c)->ports[0], "", 16, l, kinds, n);
	assert_non_null(p);
	assert_int_equal(port_state(p), PORT_UP);
	return p;
}

/* ENODEV from a row's read: the interface's loss only for a row that says
 * so (of_ifname); another's is its own error. On a veth of a namespace of
 * the test's own. */
static void port_srcs__enodev__the_interface_gone_only_for_its_rows(void **st)
{
	char *dir = coretest_tmpdir();
	struct loop *l = loop_new();
	int nsfd = nstest_make_netns();
	struct conf *c;
	struct port *p;
	struct json_object *j, *t;
	struct port_src_kind kinds[3];

	(void)st;
	kinds[0] = port_src_kinds[SLOT_DRV];
	kinds[1] = (struct port_src_kind){ "toy", toy_row_open, NULL, NULL, 0 };
	kinds[2] = (struct port_src_kind){ "toyif", toyif_row_open, NULL, NULL, 1 };
	p = port_on_veth(dir, nsfd, l, kinds, 3, &c);
	port_sample(p, 1 * SEC, 1 * SEC, 1);
	/* the toy's device is gone: its error, the port stays up */
	toy_fail = -ENODEV;
	port_sample(p, 2 * SEC, 2 * SEC, 1);
	assert_int_equal(port_state(p), PORT_UP);
	j = port_counters_json(p, 1);
	assert_true(json_object_object_get_ex(j, "toy", &t));
	assert_non_null(json_object_object_get(t, "error"));
	json_object_put(j);
	toy_fail = 0;
	/* the interface's own row: the port goes down, and says why */
	toyif_fail = -ENODEV;
	port_sample(p, 3 * SEC, 3 * SEC, 1);
	assert_int_equal(port_state(p), PORT_DOWN);
	assert_non_null(strstr(port_reason(p), "eth-a"));
	toyif_fail = 0;
	port_free(p);
	conf_free(c);
	loop_free(l);
	close(nsfd);
	coretest_rmdir(dir);
}

/* The port's interface removed and made again under its name while the
 * link monitor's events were lost (its buffer overrun by 30 new links
 * first): the resync finds the name, but on another link; the port takes
 * the new link's ifindex (and reads its addresses anew), where it kept
 * the dead one's, whose address events never come. */
static void port_monitor__relinked_during_overrun__the_new_ifindex(void **st)
{
	char *dir = coretest_tmpdir();
	struct loop *l = loop_new();
	int nsfd = nstest_make_netns(), small = 1, old;
	unsigned long gen;
	struct conf *c;
	struct port *p;
	struct port_src_kind kinds[1];

	(void)st;
	kinds[0] = port_src_kinds[SLOT_DRV];
	p = port_on_veth(dir, nsfd, l, kinds, 1, &c);
	old = port_ifindex(p);
	gen = port_addr_gen(p);
	assert_non_null(p->mon);
	assert_int_equal(setsockopt(nl_mon_fd(p->mon), SOL_SOCKET, SO_RCVBUF, &small,
				    sizeof(small)), 0);
	assert_int_equal(nstest_sh("nsenter --net=/proc/%d/fd/%d sh -c 'for i in $(seq 1 30); do "
				   "echo \"link add r$i type veth peer name s$i\"; done | ip -batch - && "
				   "ip link del eth-a && ip link add eth-a type veth peer name eth-b && "
				   "ip link set eth-a up && ip link set eth-b up'",
				   (int)getpid(), nsfd), 0);
	coretest_run_for(l, 300);
	assert_int_equal(port_state(p), PORT_UP);
	assert_int_not_equal(port_ifindex(p), old);
	assert_true(port_addr_gen(p) != gen);
	port_free(p);
	conf_free(c);
	loop_free(l);
	close(nsfd);
	coretest_rmdir(dir);
}

/* The shipped table: every slot has a row that opens, and only the
 * interface's own sources take the port down when their device goes. */
static void port_srcs__shipped_table__every_slot_a_row(void **st)
{
	(void)st;
	for (unsigned i = 0; i < NSLOTS; i++) {
		assert_non_null(port_src_kinds[i].slot);
		assert_non_null(port_src_kinds[i].open);
	}
	assert_true(port_src_kinds[SLOT_DRV].of_ifname);
	assert_true(port_src_kinds[SLOT_NETDEV].of_ifname);
	assert_true(port_src_kinds[SLOT_KERNEL].of_ifname);
	assert_false(port_src_kinds[SLOT_RDMA].of_ifname);
	assert_false(port_src_kinds[SLOT_DEVLINK].of_ifname);
	assert_false(port_src_kinds[SLOT_HOST].of_ifname);
	assert_false(port_src_kinds[SLOT_APP].of_ifname);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(port_srcs__toy_row__opened_read_shown_and_closed),
		cmocka_unit_test(port_srcs__enodev__the_interface_gone_only_for_its_rows),
		cmocka_unit_test(port_srcs__shipped_table__every_slot_a_row),
		cmocka_unit_test(port_monitor__relinked_during_overrun__the_new_ifindex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
