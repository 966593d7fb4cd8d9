/* Unit tests: sockdiag_bc (the selectors as an INET_DIAG_REQ_BYTECODE
 * program), against a model of what the kernel does with it. That the
 * kernel takes it and filters is tested in test_flow_sockdiag.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/inet_diag.h>

#include "collectors/flows/flow_sockdiag.h"

/* A model of what the kernel does with INET_DIAG_REQ_BYTECODE, after
 * inet_diag_bc_audit(), valid_cc() and inet_diag_bc_run() in
 * net/ipv4/inet_diag.c (6.x): the audit refuses what the kernel refuses,
 * the run answers what the kernel answers for one socket. */
struct kentry {
	int family;
	uint32_t saddr[4], daddr[4];    /* network order; AF_INET: [0] only */
	unsigned sport, dport;          /* host order */
};

static int k_valid_cc(const unsigned char *bc, int len, int cc)
{
	while (len >= 0) {
		const struct inet_diag_bc_op *op = (const void *)bc;

		if (cc > len)
			return 0;
		if (cc == len)
			return 1;
		if (op->yes < 4 || op->yes & 3)
			return 0;
		len -= op->yes;
		bc += op->yes;
	}
	return 0;
}

static int k_audit(const unsigned char *bytecode, int bytecode_len)
{
	const unsigned char *bc = bytecode;
	int len = bytecode_len;

	if (len < (int)sizeof(struct inet_diag_bc_op))
		return -EINVAL;
	while (len > 0) {
		int min_len = sizeof(struct inet_diag_bc_op);
		const struct inet_diag_bc_op *op = (const void *)bc;

		switch (op->code) {
		case INET_DIAG_BC_S_COND:
		case INET_DIAG_BC_D_COND: {
			const struct inet_diag_hostcond *c = (const void *)(op + 1);
			int alen;

			min_len += sizeof(*c);
			if (len < min_len)
				return -EINVAL;
			alen = c->family == AF_UNSPEC ? 0 : c->family == AF_INET ? 4 :
			       c->family == AF_INET6 ? 16 : -1;
			if (alen < 0)
				return -EINVAL;
			min_len += alen;
			if (len < min_len || c->prefix_len > 8 * alen)
				return -EINVAL;
			break;
		}
		case INET_DIAG_BC_S_GE: case INET_DIAG_BC_S_LE:
		case INET_DIAG_BC_D_GE: case INET_DIAG_BC_D_LE:
			min_len += sizeof(struct inet_diag_bc_op);
			if (len < min_len)
				return -EINVAL;
			break;
		case INET_DIAG_BC_JMP:
		case INET_DIAG_BC_NOP:
			break;
		default:
			return -EINVAL;   /* nothing else is ours to emit */
		}
		if (op->code != INET_DIAG_BC_NOP) {
			if (op->no < min_len || op->no > len + 4 || op->no & 3)
				return -EINVAL;
			if (op->no < len && !k_valid_cc(bytecode, bytecode_len, len - op->no))
				return -EINVAL;
		}
		if (op->yes < min_len || op->yes > len + 4 || op->yes & 3)
			return -EINVAL;
		bc += op->yes;
		len -= op->yes;
	}
	return len == 0 ? 0 : -EINVAL;
}

static int k_bits(const uint32_t *a1, const uint32_t *a2, int bits)
{
	int words = bits >> 5;

	bits &= 0x1f;
	if (words && memcmp(a1, a2, (size_t)words << 2))
		return 0;
	if (bits) {
		uint32_t mask = htonl(0xffffffffu << (32 - bits));

		if ((a1[words] ^ a2[words]) & mask)
			return 0;
	}
	return 1;
}

static int k_run(const unsigned char *bc, int len, const struct kentry *e)
{
	while (len > 0) {
		const struct inet_diag_bc_op *op = (const void *)bc;
		int yes = 1;

		switch (op->code) {
		case INET_DIAG_BC_JMP: yes = 0; break;
		case INET_DIAG_BC_S_GE: yes = e->sport >= op[1].no; break;
		case INET_DIAG_BC_S_LE: yes = e->sport <= op[1].no; break;
		case INET_DIAG_BC_D_GE: yes = e->dport >= op[1].no; break;
		case INET_DIAG_BC_D_LE: yes = e->dport <= op[1].no; break;
		case INET_DIAG_BC_S_COND:
		case INET_DIAG_BC_D_COND: {
			const struct inet_diag_hostcond *c = (const void *)(op + 1);
			const uint32_t *addr = op->code == INET_DIAG_BC_S_COND ? e->saddr : e->daddr;
			uint32_t caddr[4] = { 0 };

			memcpy(caddr, c->addr, c->family == AF_INET ? 4 : c->family == AF_INET6 ? 16 : 0);
			if (c->port != -1 && c->port != (int)(op->code == INET_DIAG_BC_S_COND ?
							    e->sport : e->dport)) {
				yes = 0;
				break;
			}
			if (c->family != AF_UNSPEC && c->family != e->family) {
				if (e->family == AF_INET6 && c->family == AF_INET && addr[0] == 0 &&
				    addr[1] == 0 && addr[2] == htonl(0xffff) &&
				    k_bits(addr + 3, caddr, c->prefix_len))
					break;
				yes = 0;
				break;
			}
			if (c->prefix_len == 0)
				break;
			if (!k_bits(addr, caddr, c->prefix_len))
				yes = 0;
			break;
		}
		}
		if (yes) {
			len -= op->yes;
			bc += op->yes;
		} else {
			len -= op->no;
			bc += op->no;
		}
	}
	return len == 0;
}

static unsigned rnd_state = 12345;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static const char *const addrs4[] = { "10.0.0.1", "10.0.0.2", "10.0.1.7", "192.168.5.5" };
static const char *const addrs6[] = { "fd00::1", "fd00::2", "fd01::9", "::ffff:10.0.0.1" };

static void rnd_entry(struct kentry *e, struct flow_key *k)
{
	int v6 = rnd(3) == 0, mapped = !v6 && rnd(4) == 0;
	struct in6_addr a[2];

	memset(e, 0, sizeof(*e));
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 2; i++) {
		if (v6) {
			inet_pton(AF_INET6, addrs6[rnd(3)], &a[i]);
		} else {
			struct in_addr v4;

			inet_pton(AF_INET, addrs4[rnd(4)], &v4);
			flow_addr_v4mapped(&a[i], &v4);
		}
	}
	e->sport = rnd(3) ? 11111 + rnd(12) : 30000 + rnd(3000);
	e->dport = rnd(3) ? 11111 + rnd(12) : 40000 + rnd(3000);
	k->proto = IPPROTO_TCP;
	k->saddr = a[0];
	k->daddr = a[1];
	k->sport = htons((uint16_t)e->sport);
	k->dport = htons((uint16_t)e->dport);
	if (v6 || mapped) {     /* an AF_INET6 socket (a dual-stack one when mapped) */
		e->family = AF_INET6;
		memcpy(e->saddr, &a[0], 16);
		memcpy(e->daddr, &a[1], 16);
	} else {
		e->family = AF_INET;
		memcpy(e->saddr, &a[0].s6_addr[12], 4);
		memcpy(e->daddr, &a[1].s6_addr[12], 4);
	}
}

static void sockdiag_bytecode__kernel_model__audited_and_admits_every_match(void **state)
{
	static const char *const words[] = {
		"tcp port 11111", "port 11111-11115", "tcp 10.0.0.0/24", "10.0.0.2 port 11113",
		"tcp fd00::/64 port 11112-11120", "fd00::2", "udp port 11111", "10.0.1.7/32",
		"tcp ::/0 port 11114", "::ffff:10.0.0.0/120", "tcp 192.168.0.0/16 port 11120",
	};
	unsigned char bc[1024] __attribute__((aligned(4)));
	unsigned refused = 0, passed = 0;
	char err[128];

	(void)state;
	for (int round = 0; round < 400; round++) {
		struct flow_sel sel[SD_MAX_SEL];
		unsigned nsel = 1 + rnd(round < 200 ? 2 : SD_MAX_SEL);
		int len, exact = 1;

		for (unsigned i = 0; i < nsel; i++) {
			unsigned w = rnd(sizeof(words) / sizeof(words[0]));

			assert_int_equal(flow_sel_parse(words[w], &sel[i], err, sizeof(err)), 0);
			/* an IPv6 prefix over ::ffff:0:0/96: the kernel cannot say it,
			 * the filter lets more through */
			if (w == 8 || w == 9)
				exact = 0;
		}
		len = sockdiag_bytecode(sel, nsel, bc, sizeof(bc));
		if (len == -ENOENT) {   /* only UDP selectors */
			for (unsigned i = 0; i < nsel; i++)
				assert_int_equal(sel[i].proto, IPPROTO_UDP);
			continue;
		}
		if (len == 0)   /* a selector admits every TCP socket: no filter */
			continue;
		assert_true(len > 0);
		assert_int_equal(k_audit(bc, len), 0);
		for (int t = 0; t < 200; t++) {
			struct kentry e;
			struct flow_key k;
			int want, got;

			rnd_entry(&e, &k);
			want = flow_sel_match(sel, nsel, &k);
			got = k_run(bc, len, &e);
			if (want && !got)
				fail_msg("round %d: the filter drops a socket the selectors watch", round);
			if (exact && got && !want)
				fail_msg("round %d: the filter lets through a socket no selector watches",
					 round);
			if (!got)
				refused++;
			else
				passed++;
		}
	}
	assert_true(refused > 1000);
	assert_true(passed > 1000);
}

static void sockdiag_bytecode__no_filter_or_nothing_or_too_small(void **state)
{
	unsigned char bc[16] __attribute__((aligned(4)));
	struct flow_sel sel[2];
	char err[128];

	(void)state;
	assert_int_equal(sockdiag_bytecode(NULL, 0, bc, sizeof(bc)), 0);
	assert_int_equal(flow_sel_parse("udp port 53", &sel[0], err, sizeof(err)), 0);
	assert_int_equal(sockdiag_bytecode(sel, 1, bc, sizeof(bc)), -ENOENT);
	assert_int_equal(flow_sel_parse("tcp", &sel[1], err, sizeof(err)), 0);
	assert_int_equal(sockdiag_bytecode(sel, 2, bc, sizeof(bc)), 0);     /* every TCP socket */
	assert_int_equal(flow_sel_parse("tcp fd00::/64 port 80", &sel[1], err, sizeof(err)), 0);
	assert_int_equal(sockdiag_bytecode(sel, 2, bc, sizeof(bc)), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sockdiag_bytecode__kernel_model__audited_and_admits_every_match),
		cmocka_unit_test(sockdiag_bytecode__no_filter_or_nothing_or_too_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
