/* sockdiag_bc: the port's selectors as an INET_DIAG_REQ_BYTECODE program,
 * so the kernel fills in and sends only the sockets they may watch. See
 * flow_sockdiag.h (sockdiag_bytecode). */
#include "collectors/flows/flow_sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <netinet/in.h>
#include <string.h>

/* Semantics (inet_diag_bc_run(), net/ipv4/inet_diag.c): ops run from the
 * start; each jumps by op->yes bytes when its condition holds and op->no
 * when not; the socket passes when the run ends exactly at the end, and
 * is dropped when it jumps past it. inet_diag_bc_audit() wants every
 * op->no target to lie on the chain of op->yes steps from the start, so
 * every op here steps by its own length on yes (falls through), and the
 * program is laid out as
 *
 *   block(sel 0) block(sel 1) ... ; a block is AND of conditions, then
 *   JMP -> end (accept); a failing condition jumps to the next block (or
 *   past the end after the last one). A condition is "either end":
 *   alternative A (local end) then JMP -> next condition, alternative B
 *   (remote end); an op of A that fails jumps to B, an op of B that fails
 *   to the next block.
 *
 * Conditions: an address/prefix (INET_DIAG_BC_S_COND / D_COND with an
 * inet_diag_hostcond; an AF_INET one matches v4-mapped AF_INET6 sockets
 * too, the kernel checks that) and a port range (S_GE + S_LE / D_GE + D_LE;
 * entry->sport is inet_num, entry->dport ntohs(inet_dport), host order both,
 * as our selectors). A selector that cannot match TCP is left out. Where
 * the kernel cannot say what userspace means, the condition is dropped and
 * the filter lets more through (an IPv6 prefix that covers ::ffff:0:0/96:
 * our keys hold IPv4 as v4-mapped, the kernel's AF_INET6 condition does not
 * match an AF_INET socket). */

struct bc_w {
	unsigned char *b;
	size_t cap, len;
	int overflow;
};

/* Append one op (with its payload); returns its offset. */
static size_t bc_op(struct bc_w *w, unsigned code, const void *payload, size_t plen)
{
	struct inet_diag_bc_op op = { .code = (unsigned char)code };
	size_t at = w->len, oplen = sizeof(op) + plen;

	if (w->len + oplen > w->cap || oplen > 255) {
		w->overflow = 1;
		return at;
	}
	op.yes = (unsigned char)oplen;
	memcpy(w->b + at, &op, sizeof(op));
	if (plen)
		memcpy(w->b + at + sizeof(op), payload, plen);
	w->len += oplen;
	return at;
}

/* Set the op at `at` to jump to target (an absolute offset) when it fails. */
static void bc_no(struct bc_w *w, size_t at, size_t target)
{
	struct inet_diag_bc_op op;

	if (w->overflow || target < at || target - at > 0xffff) {
		w->overflow = 1;
		return;
	}
	memcpy(&op, w->b + at, sizeof(op));
	op.no = (unsigned short)(target - at);
	memcpy(w->b + at, &op, sizeof(op));
}

static size_t bc_port(struct bc_w *w, unsigned code, unsigned port)
{
	struct inet_diag_bc_op arg = { .no = (unsigned short)port };

	return bc_op(w, code, &arg, sizeof(arg));
}

static size_t bc_host(struct bc_w *w, unsigned code, const struct flow_sel *s)
{
	unsigned char p[sizeof(struct inet_diag_hostcond) + 16];
	struct inet_diag_hostcond hc = { .port = -1 };
	size_t alen;

	if (s->family == AF_INET) {
		hc.family = AF_INET;
		hc.prefix_len = (unsigned char)(s->prefix > 96 ? (s->prefix > 128 ? 32 : s->prefix - 96) : 0);
		alen = 4;
		memcpy(p + sizeof(hc), &s->addr.s6_addr[12], 4);
	} else {
		hc.family = AF_INET6;
		hc.prefix_len = (unsigned char)(s->prefix > 128 ? 128 : s->prefix);
		alen = 16;
		memcpy(p + sizeof(hc), s->addr.s6_addr, 16);
	}
	memcpy(p, &hc, sizeof(hc));
	return bc_op(w, code, p, sizeof(hc) + alen);
}

/* An IPv6 selector the kernel's AF_INET6 condition would under-match. */
static int sel_covers_v4mapped(const struct flow_sel *s)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	unsigned bits = s->prefix > 96 ? 96 : s->prefix, full = bits / 8, rest = bits % 8;

	if (memcmp(s->addr.s6_addr, mapped, full))
		return 0;
	return !rest || !((s->addr.s6_addr[full] ^ mapped[full]) & (0xff00u >> rest));
}

int sockdiag_bytecode(const struct flow_sel *sel, unsigned nsel, void *buf, size_t len)
{
	struct bc_w w = { .b = buf, .cap = len };
	size_t pend[SD_MAX_SEL * 8], blk_jmp[SD_MAX_SEL];
	unsigned npend = 0, nblk = 0, usable = 0;

	if (!nsel)
		return 0;
	if (!sel || nsel > SD_MAX_SEL || !buf)
		return -EINVAL;
	for (unsigned i = 0; i < nsel; i++) {
		const struct flow_sel *s = &sel[i];
		int addr = s->family && !(s->family == AF_INET6 && sel_covers_v4mapped(s));
		int port = s->port_lo || s->port_hi;
		unsigned hi = s->port_hi < s->port_lo ? s->port_lo : s->port_hi;
		size_t a[4];

		if (s->proto && s->proto != IPPROTO_TCP)
			continue;       /* cannot match a TCP socket */
		usable++;
		if (!addr && !port)
			return 0;       /* matches every TCP socket: no filter */
		/* the previous block's failures land here */
		for (unsigned k = 0; k < npend; k++)
			bc_no(&w, pend[k], w.len);
		npend = 0;
		if (addr) {
			size_t j;

			a[0] = bc_host(&w, INET_DIAG_BC_S_COND, s);
			j = bc_op(&w, INET_DIAG_BC_JMP, NULL, 0);
			bc_no(&w, a[0], w.len);
			a[1] = bc_host(&w, INET_DIAG_BC_D_COND, s);
			pend[npend++] = a[1];
			bc_no(&w, j, w.len);
		}
		if (port) {
			size_t j;

			a[0] = bc_port(&w, INET_DIAG_BC_S_GE, s->port_lo);
			a[1] = bc_port(&w, INET_DIAG_BC_S_LE, hi);
			j = bc_op(&w, INET_DIAG_BC_JMP, NULL, 0);
			bc_no(&w, a[0], w.len);
			bc_no(&w, a[1], w.len);
			a[2] = bc_port(&w, INET_DIAG_BC_D_GE, s->port_lo);
			a[3] = bc_port(&w, INET_DIAG_BC_D_LE, hi);
			pend[npend++] = a[2];
			pend[npend++] = a[3];
			bc_no(&w, j, w.len);
		}
		blk_jmp[nblk++] = bc_op(&w, INET_DIAG_BC_JMP, NULL, 0);
	}
	if (!usable)
		return -ENOENT;
	/* the last block's failures: past the end (the socket is dropped) */
	for (unsigned k = 0; k < npend; k++)
		bc_no(&w, pend[k], w.len + 4);
	for (unsigned k = 0; k < nblk; k++)
		bc_no(&w, blk_jmp[k], w.len);
	if (w.overflow)
		return -ENOSPC;
	return (int)w.len;
}

