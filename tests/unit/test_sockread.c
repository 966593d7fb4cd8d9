/* Unit tests: sockread, the BPF socket reader's loader. Every reader of the
 * process runs one program (a load parses the kernel's BTF), yet each keeps
 * its own keys and values, and each run finds sockets of its own reader's
 * namespace only. Runs as root in a private network namespace (unshare in
 * group setup); the host's namespace is the "other" one. */
#include "sockdiag_test.h"

#include <bpf/bpf.h>

#include "collectors/flows/sockread_api.h"

static const struct sr_val *run1(struct sockread *r)
{
	char err[256] = "";
	uint64_t now = 0;

	if (sockread_run(r, 1, &now, err, sizeof(err)) < 0)
		fail_msg("sockread_run: %s", err);
	assert_true(now > 0);
	return sockread_val(r, 0);
}

static void sockread_open__two_namespaces__one_program_loaded(void **state)
{
	struct sockread *a, *b;
	char err[256] = "";
	uint32_t id;

	(void)state;
	a = sockread_open(-1, err, sizeof(err));
	if (!a)
		fail_msg("sockread_open: %s", err);
	b = sockread_open(host_ns, err, sizeof(err));
	if (!b)
		fail_msg("sockread_open (host namespace): %s", err);
	id = sockread_prog_id(a);
	assert_true(id > 0);
	/* a load per reader would give the second its own program */
	assert_int_equal(sockread_prog_id(b), id);
	sockread_close(a);
	sockread_close(b);
}

static void sockread_run__interleaved_namespaces__each_keeps_its_own(void **state)
{
	struct sockread *ours, *other;
	const struct sr_val *v;
	char err[256] = "";
	struct conn k;

	(void)state;
	conn_open(&k, AF_INET);
	assert_int_equal(write(k.s, "abc", 3), 3);   /* 3 bytes unread at the client */
	nstest_msleep(10);
	ours = sockread_open(-1, err, sizeof(err));
	other = sockread_open(host_ns, err, sizeof(err));
	assert_non_null(ours);
	assert_non_null(other);
	key_for(&sockread_keys(ours)[0], k.c, k.cport, k.lport);
	key_for(&sockread_keys(other)[0], k.c, k.cport, k.lport);

	v = run1(ours);
	assert_int_equal(v->found, 1);
	assert_int_equal(v->full, 1);
	assert_int_equal(v->rcv_nxt - v->copied_seq, 3);
	/* the same tuple in the host's namespace: not ours, not found */
	assert_int_equal(run1(other)->found, 0);
	/* and that run did not change what ours read */
	v = sockread_val(ours, 0);
	assert_int_equal(v->found, 1);
	assert_int_equal(v->rcv_nxt - v->copied_seq, 3);
	/* the keys are the reader's own too: changing the other's leaves ours */
	sockread_keys(other)[0].cookie ^= 1;
	assert_int_equal(run1(ours)->found, 1);
	sockread_close(other);
	sockread_close(ours);
	conn_close(&k);
}

static void sockread_close__last_reader__unloads_and_next_open_loads(void **state)
{
	struct sockread *a, *b;
	char err[256] = "";
	uint32_t id;
	struct conn k;
	int fd;

	(void)state;
	conn_open(&k, AF_INET);
	a = sockread_open(-1, err, sizeof(err));
	b = sockread_open(-1, err, sizeof(err));
	assert_non_null(a);
	assert_non_null(b);
	id = sockread_prog_id(a);
	/* one close leaves the other reader running */
	sockread_close(a);
	key_for(&sockread_keys(b)[0], k.c, k.cport, k.lport);
	assert_int_equal(run1(b)->found, 1);
	fd = bpf_prog_get_fd_by_id(id);
	assert_true(fd >= 0);
	close(fd);
	/* the last close unloads it: the kernel no longer knows the ID */
	sockread_close(b);
	assert_true(bpf_prog_get_fd_by_id(id) < 0);
	assert_int_equal(errno, ENOENT);
	a = sockread_open(-1, err, sizeof(err));
	assert_non_null(a);
	assert_true(sockread_prog_id(a) != id);
	key_for(&sockread_keys(a)[0], k.c, k.cport, k.lport);
	assert_int_equal(run1(a)->found, 1);
	sockread_close(a);
	conn_close(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sockread_open__two_namespaces__one_program_loaded),
		cmocka_unit_test(sockread_run__interleaved_namespaces__each_keeps_its_own),
		cmocka_unit_test(sockread_close__last_reader__unloads_and_next_open_loads),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
