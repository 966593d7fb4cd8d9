/* Unit tests: flow_engine's reads of a table, system call by system
 * call: the retry of one record that changed while the three passes read
 * it, and the reads a poll makes. The writer is made to act between the
 * reader's system calls: this test is linked with -Wl,--wrap=pread
 * (Makefile), and __wrap_pread plays the engine at the exact read it
 * names, and counts the reads. What a reader
 * must never do is emit a torn record: a copy whose seq was even and equal
 * before the copy but moved after it. The kernel allows that copy: pread
 * of a file another process maps shared copies from the page cache
 * (filemap_read -> copy_folio_to_iter) with no lock against that process's
 * stores, so a field copied late can hold a value stored after the seq
 * was copied; the wrapper does the same to the buffer the read returns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "collectors/flows/flow_engine.h"
#include "fetest.h"

ssize_t __real_pread(int fd, void *buf, size_t len, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t off);

/* The record under test, its offset in the file and the writer's step. */
static struct nsft_record *victim;
static off_t victim_off = -1;
static int step;
static unsigned preads;         /* every read the engine made */

/* Only a read of the victim alone (a retry; the passes read the chunk). */
ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = __real_pread(fd, buf, len, off);

	preads++;
	if (victim_off < 0 || off != victim_off || len != sizeof(*victim) || n != (ssize_t)len)
		return n;
	switch (step++) {
	case 0:
		/* the update that was under way when the passes read ends
		 * after this copy: the copy is of the old, odd record */
		victim->tx_msgs = 2;
		nsft_end(victim);
		break;
	case 1:
		/* the next update begins while this copy is taken: the copy
		 * got the even seq of tx 2 but already the new tx 3 */
		nsft_begin(victim);
		victim->tx_msgs = 3;
		memcpy((char *)buf + offsetof(struct nsft_record, tx_msgs), &victim->tx_msgs,
		       sizeof(victim->tx_msgs));
		break;
	default:
		break;
	}
	return n;
}

static void flow_engine_poll__write_during_retry__torn_copy_never_emitted(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;
	const struct flow_obs *o;

	fetest_make_one(f, &t, "retry", 4);     /* session 7, stable */
	victim = nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL);
	assert_non_null(victim);
	victim_off = (off_t)((char *)victim - (char *)t.hdr);
	fe = fetest_open(f);
	nsft_begin(victim);     /* the passes see it odd: retried alone */
	victim->tx_msgs = 1;
	step = 0;
	assert_int_equal(fetest_poll_all(fe), 1);
	assert_true(step >= 2);                 /* both writer steps happened */
	/* a reader that trusts the copy's own seq without the one after it
	 * emits session 8 with tx 3 under the seq of tx 2 */
	assert_null(fetest_find_session(8));
	assert_non_null(fetest_find_session(7));
	/* the update ends: the next poll reads it whole */
	victim_off = -1;
	nsft_end(victim);
	assert_int_equal(fetest_poll_all(fe), 2);
	o = fetest_find_session(8);
	assert_non_null(o);
	assert_int_equal(o->tx_msgs, 3);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* The reads of one poll of a steady table of 3 sessions. */
static unsigned poll_reads(struct flow_engine *fe, int expect)
{
	preads = 0;
	assert_int_equal(fetest_poll_all(fe), expect);
	return preads;
}

/* A table's first poll reads every record three times, the header with
 * the first pass (not four reads: header, then three passes), and emits
 * them all. After that a poll whose records did not move (their seq as
 * in their last stable copy) reads the table once, header with the first
 * pass, and emits none of its idle sessions (the detector keeps them);
 * new records are read whole (passes B and C for the chunk) and emitted;
 * when the count shrinks the first pass's extra records are left unread. */
static void flow_engine_poll__reads__header_with_the_first_pass(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;

	fetest_make_one(f, &t, "reads", 8);     /* session 7 */
	assert_non_null(nsft_add(&t, 8, IPPROTO_UDP, NULL, NULL));
	assert_non_null(nsft_add(&t, 9, IPPROTO_UDP, NULL, NULL));
	fe = fetest_open(f);
	victim_off = -1;
	poll_reads(fe, 3);                      /* first: owner checks too */
	/* session 7 waits (a send unanswered): emitted from its copy */
	assert_int_equal(poll_reads(fe, 1), 1);
	assert_int_equal(poll_reads(fe, 1), 1);
	/* grows: 3 -> 5 */
	assert_non_null(nsft_add(&t, 10, IPPROTO_UDP, NULL, NULL));
	assert_non_null(nsft_add(&t, 11, IPPROTO_UDP, NULL, NULL));
	assert_int_equal(poll_reads(fe, 3), 4);
	assert_non_null(fetest_find_session(11));
	assert_int_equal(poll_reads(fe, 1), 1);
	/* shrinks (the library never lowers the count; a writer may): the
	 * last two are out of use */
	__atomic_store_n(&t.hdr->count, 3, __ATOMIC_RELEASE);
	assert_int_equal(poll_reads(fe, 1), 1);
	assert_null(fetest_find_session(10));
	assert_null(fetest_find_session(11));
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* A table of more than one chunk (256 records of 256 bytes each): the
 * header goes with the first chunk's first pass only, the records read
 * with it clamped to a chunk whatever the count was. */
static void flow_engine_poll__reads__two_chunks(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct flow_engine *fe;

	fetest_make_one(f, &t, "big", 600);     /* session 7 */
	for (unsigned i = 0; i < 299; i++)
		assert_non_null(nsft_add(&t, 100 + i, IPPROTO_UDP, NULL, NULL));
	fe = fetest_open(f);
	victim_off = -1;
	poll_reads(fe, 300);
	assert_int_equal(poll_reads(fe, 1), 2);         /* first passes only */
	for (unsigned i = 0; i < 100; i++)
		assert_non_null(nsft_add(&t, 1000 + i, IPPROTO_UDP, NULL, NULL));
	assert_int_equal(poll_reads(fe, 101), 4);       /* 1, then 3 */
	assert_non_null(fetest_find_session(1099));
	/* shrunk below half: the copies go (they are only ever of records
	 * in use), and the 10 left are read afresh */
	__atomic_store_n(&t.hdr->count, 10, __ATOMIC_RELEASE);
	assert_int_equal(poll_reads(fe, 10), 3);
	assert_null(fetest_find_session(1099));
	assert_int_equal(poll_reads(fe, 1), 1);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

/* Of 300 idle sessions one moves, one waits: the one that moved is read
 * alone (its seq from the first pass, the record, its seq again: two
 * reads) and emitted, the waiting one is emitted from its copy at every
 * poll (the detector times its wait), the idle rest not at all; a second
 * on, every record is read and emitted afresh, so a writer that skips
 * the seq protocol is seen within FE_ALL_EVERY_NS. A reader that re-reads
 * and emits every record at every poll makes 6 reads and 300 emits; one
 * that skips unchanged records without emitting waits loses the wait. */
static void flow_engine_poll__reads__only_what_moved(void **state)
{
	struct fx *f = *state;
	struct nsft_table t;
	struct nsft_record *r[300];
	struct flow_engine *fe;
	const struct flow_obs *o;

	r[0] = fetest_make_one(f, &t, "moved", 600);    /* session 7 */
	for (unsigned i = 1; i < 300; i++)
		assert_non_null(r[i] = nsft_add(&t, 100 + i, IPPROTO_UDP, NULL, NULL));
	nsft_begin(r[5]);
	r[5]->tx_msgs = 1;      /* a request out, unanswered */
	nsft_end(r[5]);
	fe = fetest_open(f);
	victim_off = -1;
	poll_reads(fe, 300);
	/* the waits (session 105's, and session 7's send), from their copies */
	assert_int_equal(poll_reads(fe, 2), 2);
	assert_non_null(fetest_find_session(105));
	nsft_begin(r[280]);
	r[280]->rx_msgs = 4;
	r[280]->tx_msgs = 4;
	nsft_end(r[280]);
	assert_int_equal(poll_reads(fe, 3), 4);         /* 2 first passes, 2 for r[280] */
	o = fetest_find_session(380);
	assert_non_null(o);
	assert_int_equal(o->rx_msgs, 4);
	/* written behind the seq's back: not seen until every record is
	 * read again */
	r[100]->rx_msgs = 9;
	assert_int_equal(poll_reads(fe, 2), 2);
	usleep(1100 * 1000);
	assert_int_equal(poll_reads(fe, 300), 6);
	o = fetest_find_session(200);
	assert_non_null(o);
	assert_int_equal(o->rx_msgs, 9);
	flow_engine_close(fe);
	nsft_close(&t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			flow_engine_poll__write_during_retry__torn_copy_never_emitted,
			fetest_setup, fetest_teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__reads__header_with_the_first_pass,
						fetest_setup, fetest_teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__reads__two_chunks,
						fetest_setup, fetest_teardown),
		cmocka_unit_test_setup_teardown(flow_engine_poll__reads__only_what_moved,
						fetest_setup, fetest_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
