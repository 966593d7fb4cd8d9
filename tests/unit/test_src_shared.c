/* src_shared: ports that name the same source share one; within a sweep
 * (a tick) it is read once, outside one every read is its own; its pids
 * are every sharer's; the last sharer closes it. A fake source counts its
 * reads and keeps what it was given. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collectors/counters/counters.h"
#include "collectors/counters/src_shared.h"

struct fake {
	int opens, reads, closes, fail_open, fail_read;
	int pids[64];
	unsigned npids;
	uint64_t v;
	struct clayout *lay;
};

static struct fake F;

static int f_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	(void)s;
	F.reads++;
	if (F.fail_read) {
		snprintf(s->err, sizeof(s->err), "fake: unreadable");
		return -EIO;
	}
	F.v = (uint64_t)F.reads * 10;
	*lay = F.lay;
	*vals = &F.v;
	return 0;
}

static void f_close(struct src *s)
{
	(void)s;
	F.closes++;
}

static const struct src_ops f_ops = { "fake", NULL, f_read, f_close };

static int f_open(struct src *inner, void *arg)
{
	(void)arg;
	F.opens++;
	if (F.fail_open) {
		snprintf(inner->err, sizeof(inner->err), "fake: no such thing");
		return -ENOENT;
	}
	inner->ops = &f_ops;
	return 0;
}

static void f_watch(struct src *inner, const int *pids, unsigned n)
{
	(void)inner;
	F.npids = n;
	memcpy(F.pids, pids, n * sizeof(int));
}

static int setup(void **st)
{
	const char *names[] = { "fake.x" };

	(void)st;
	memset(&F, 0, sizeof(F));
	F.lay = clayout_new(1, names, NULL);
	return F.lay ? 0 : -1;
}

static int teardown(void **st)
{
	(void)st;
	clayout_unref(F.lay);
	return 0;
}

static void share__same_key__one_open_one_read_a_tick(void **st)
{
	struct src a = { 0 }, b = { 0 }, c = { 0 };
	struct clayout *l;
	const uint64_t *v;

	(void)st;
	assert_int_equal(src_shared_open(&a, "k1", 2, f_open, NULL), 0);
	assert_int_equal(src_shared_open(&b, "k1", 2, f_open, NULL), 0);
	assert_int_equal(F.opens, 1);
	assert_string_equal(a.ops->name, "fake");
	assert_int_equal(src_shared_refs(&a), 2);
	/* a key that differs in its last byte is another source */
	assert_int_equal(src_shared_open(&c, "k2", 2, f_open, NULL), 0);
	assert_int_equal(F.opens, 2);
	/* one sweep: one read, the same values for both */
	src_shared_tick(1000);
	assert_int_equal(a.ops->read(&a, &l, &v), 0);
	assert_int_equal(*v, 10);
	assert_int_equal(b.ops->read(&b, &l, &v), 0);
	assert_int_equal(*v, 10);
	assert_int_equal(F.reads, 1);
	/* the next sweep reads again */
	src_shared_tick(2000);
	assert_int_equal(b.ops->read(&b, &l, &v), 0);
	assert_int_equal(a.ops->read(&a, &l, &v), 0);
	assert_int_equal(F.reads, 2);
	/* outside a sweep (a fast window) every read is the source's */
	src_shared_tick(0);
	a.ops->read(&a, &l, &v);
	a.ops->read(&a, &l, &v);
	assert_int_equal(F.reads, 4);
	/* the last sharer closes it */
	a.ops->close(&a);
	assert_int_equal(F.closes, 0);
	assert_int_equal(src_shared_refs(&b), 1);
	b.ops->close(&b);
	assert_int_equal(F.closes, 1);
	c.ops->close(&c);
	assert_int_equal(F.closes, 2);
	/* closed: a new opener opens it again */
	assert_int_equal(src_shared_open(&a, "k1", 2, f_open, NULL), 0);
	assert_int_equal(F.opens, 3);
	a.ops->close(&a);
}

/* A failed read is every sharer's in that sweep, with its error; a
 * failed open is the opener's, and leaves nothing shared behind. */
static void share__failures__every_sharer_told(void **st)
{
	struct src a = { 0 }, b = { 0 };
	struct clayout *l;
	const uint64_t *v;

	(void)st;
	F.fail_open = 1;
	assert_int_equal(src_shared_open(&a, "k", 1, f_open, NULL), -ENOENT);
	assert_string_equal(a.err, "fake: no such thing");
	F.fail_open = 0;
	assert_int_equal(src_shared_open(&a, "k", 1, f_open, NULL), 0);
	assert_int_equal(F.opens, 2);
	assert_int_equal(src_shared_open(&b, "k", 1, f_open, NULL), 0);
	F.fail_read = 1;
	src_shared_tick(5);
	assert_int_equal(a.ops->read(&a, &l, &v), -EIO);
	assert_int_equal(b.ops->read(&b, &l, &v), -EIO);
	assert_string_equal(b.err, "fake: unreadable");
	assert_int_equal(F.reads, 1);
	src_shared_tick(0);
	a.ops->close(&a);
	b.ops->close(&b);
}

/* Each sharer's pids; the source gets their union, each pid once, and a
 * sharer that closes takes its pids with it at the next watch. */
static void share__watch__union_of_sharers(void **st)
{
	struct src a = { 0 }, b = { 0 };
	int pa[] = { 10, 11 }, pb[] = { 11, 12, 13 };

	(void)st;
	assert_int_equal(src_shared_open(&a, "w", 1, f_open, NULL), 0);
	assert_int_equal(src_shared_open(&b, "w", 1, f_open, NULL), 0);
	src_shared_watch(&a, pa, 2, f_watch);
	assert_int_equal(F.npids, 2);
	src_shared_watch(&b, pb, 3, f_watch);
	assert_int_equal(F.npids, 4);
	assert_true(F.pids[0] == 10 && F.pids[1] == 11 && F.pids[2] == 12 && F.pids[3] == 13);
	a.ops->close(&a);
	assert_string_equal(a.ops->name, "fake");   /* a closed slot is still named */
	src_shared_watch(&b, pb, 1, f_watch);
	assert_int_equal(F.npids, 1);
	assert_int_equal(F.pids[0], 11);
	b.ops->close(&b);
	/* not a share: nothing is called */
	F.npids = 99;
	src_shared_watch(&a, pa, 2, f_watch);
	assert_int_equal(F.npids, 99);
	assert_null(src_shared_inner(&a));
}

static int keep_owner(const char *name, const int *pids, unsigned n)
{
	int pid;

	if (sscanf(name, "owner.%d.", &pid) != 1)
		return 1;
	for (unsigned i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

static int o_read(struct src *s, struct clayout **lay, const uint64_t **vals)
{
	static uint64_t v[3];

	(void)s;
	F.reads++;
	v[0] = 100 + (uint64_t)F.reads;
	v[1] = 200 + (uint64_t)F.reads;
	v[2] = 300 + (uint64_t)F.reads;
	*lay = F.lay;
	*vals = v;
	return 0;
}

static const struct src_ops o_ops = { "host", NULL, o_read, f_close };

static int o_open(struct src *inner, void *arg)
{
	(void)arg;
	inner->ops = &o_ops;
	return 0;
}

/* With a keep function each sharer sees the counters every sharer has and
 * its own owners' only, with the reading's values; a sharer whose pids
 * change sees its new owners from the next read. */
static void share__keep__each_sharer_its_own_owners(void **st)
{
	const char *names[] = { "owner.1.cpu_ns", "host.psi.io.some_us", "owner.2.cpu_ns" };
	struct src a = { 0 }, b = { 0 };
	struct clayout *l;
	const uint64_t *v;
	int p1 = 1, p2 = 2;

	(void)st;
	clayout_unref(F.lay);
	F.lay = clayout_new(3, names, NULL);
	assert_int_equal(src_shared_open(&a, "o", 1, o_open, NULL), 0);
	assert_int_equal(src_shared_open(&b, "o", 1, o_open, NULL), 0);
	src_shared_keep(&a, keep_owner);
	src_shared_watch(&a, &p1, 1, f_watch);
	src_shared_watch(&b, &p2, 1, f_watch);
	src_shared_tick(7);
	assert_int_equal(a.ops->read(&a, &l, &v), 0);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->names[0], "owner.1.cpu_ns");
	assert_string_equal(l->names[1], "host.psi.io.some_us");
	assert_true(v[0] == 101 && v[1] == 201);
	assert_int_equal(b.ops->read(&b, &l, &v), 0);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->names[0], "host.psi.io.some_us");
	assert_string_equal(l->names[1], "owner.2.cpu_ns");
	assert_true(v[0] == 201 && v[1] == 301);
	assert_int_equal(F.reads, 1);
	/* b now owns both */
	{
		int both[] = { 1, 2 };

		src_shared_watch(&b, both, 2, f_watch);
	}
	src_shared_tick(8);
	assert_int_equal(b.ops->read(&b, &l, &v), 0);
	assert_int_equal(l->n, 3);
	assert_int_equal(v[0], 102);
	src_shared_tick(0);
	a.ops->close(&a);
	b.ops->close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(share__same_key__one_open_one_read_a_tick, setup,
						teardown),
		cmocka_unit_test_setup_teardown(share__failures__every_sharer_told, setup, teardown),
		cmocka_unit_test_setup_teardown(share__watch__union_of_sharers, setup, teardown),
		cmocka_unit_test_setup_teardown(share__keep__each_sharer_its_own_owners, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
