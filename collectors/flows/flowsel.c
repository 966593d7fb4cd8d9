/* flowsel: flow selectors and the flow key as text. See flowsel.h (the
 * grammar is there). */
#include "collectors/flows/flowsel.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

void flow_addr_v4mapped(struct in6_addr *a, const void *v4)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], v4, 4);
}

static int sel_addr_match(const struct flow_sel *s, const struct in6_addr *a)
{
	unsigned plen = s->prefix > 128 ? 128 : s->prefix;
	unsigned full = plen / 8, rest = plen % 8;

	if (s->family == AF_INET) {
		if (!IN6_IS_ADDR_V4MAPPED(a))
			return 0;
		if (plen < 96)
			plen = 96, full = 12, rest = 0;
	}
	if (memcmp(a->s6_addr, s->addr.s6_addr, full))
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff00u >> rest);

		if ((a->s6_addr[full] ^ s->addr.s6_addr[full]) & mask)
			return 0;
	}
	return 1;
}

static int sel_port_in(const struct flow_sel *s, uint16_t nport)
{
	uint16_t p = ntohs(nport), hi = s->port_hi < s->port_lo ? s->port_lo : s->port_hi;

	return p >= s->port_lo && p <= hi;
}

int flow_sel_match(const struct flow_sel *sel, unsigned nsel, const struct flow_key *k)
{
	unsigned i;

	if (!nsel)
		return 1;
	if (!sel || !k)
		return 0;
	for (i = 0; i < nsel; i++) {
		const struct flow_sel *s = &sel[i];

		if (s->proto && s->proto != k->proto)
			continue;
		if (s->family && !sel_addr_match(s, &k->saddr) && !sel_addr_match(s, &k->daddr))
			continue;
		if ((s->port_lo || s->port_hi) && !sel_port_in(s, k->sport) &&
		    !sel_port_in(s, k->dport))
			continue;
		return 1;
	}
	return 0;
}

static int sel_parse_u(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || *end || *out > max)
		return -1;
	return 0;
}

static int sel_parse_ports(const char *tok, struct flow_sel *s)
{
	char buf[32], *dash;
	unsigned long lo, hi;

	if (strlen(tok) >= sizeof(buf))
		return -1;
	strcpy(buf, tok);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (sel_parse_u(buf, 65535, &lo) < 0 || lo == 0)
		return -1;
	hi = lo;
	if (dash && (sel_parse_u(dash, 65535, &hi) < 0 || hi < lo))
		return -1;
	s->port_lo = (uint16_t)lo;
	s->port_hi = (uint16_t)hi;
	return 0;
}

static int sel_parse_addr(const char *tok, struct flow_sel *s)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned long plen;
	struct in_addr a4;
	unsigned i;

	if (strlen(tok) >= sizeof(buf))
		return -1;
	strcpy(buf, tok);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		if (slash && sel_parse_u(slash, 32, &plen) < 0)
			return -1;
		s->family = AF_INET;
		flow_addr_v4mapped(&s->addr, &a4);
		s->prefix = (uint8_t)(96 + (slash ? plen : 32));
	} else if (inet_pton(AF_INET6, buf, &s->addr) == 1) {
		if (slash && sel_parse_u(slash, 128, &plen) < 0)
			return -1;
		s->family = AF_INET6;
		s->prefix = (uint8_t)(slash ? plen : 128);
	} else
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned bit = i * 8;

		if (bit >= s->prefix)
			s->addr.s6_addr[i] = 0;
		else if (bit + 8 > s->prefix)
			s->addr.s6_addr[i] &= (uint8_t)(0xff00u >> (s->prefix - bit));
	}
	return 0;
}

int flow_sel_parse(const char *text, struct flow_sel *out, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	int have_proto = 0, have_addr = 0, have_port = 0, n = 0;
	struct flow_sel s;

	if (!text || !out) {
		util_errf(err, errlen, "flow selector: missing text");
		return -EINVAL;
	}
	if (strlen(text) >= sizeof(buf)) {
		util_errf(err, errlen, "flow selector '%.32s...': longer than %zu characters",
			  text, sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, text);
	memset(&s, 0, sizeof(s));
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		n++;
		if (!strcmp(tok, "tcp") || !strcmp(tok, "udp") || !strcmp(tok, "any")) {
			if (have_proto++) {
				util_errf(err, errlen, "flow selector '%s': second protocol '%s'", text, tok);
				return -EINVAL;
			}
			s.proto = tok[0] == 't' ? IPPROTO_TCP : tok[0] == 'u' ? IPPROTO_UDP : 0;
		} else if (!strcmp(tok, "port")) {
			char *p = strtok_r(NULL, " \t", &save);

			if (have_port++) {
				util_errf(err, errlen, "flow selector '%s': second 'port'", text);
				return -EINVAL;
			}
			if (!p) {
				util_errf(err, errlen, "flow selector '%s': 'port' needs a port or range", text);
				return -EINVAL;
			}
			if (sel_parse_ports(p, &s) < 0) {
				util_errf(err, errlen, "flow selector '%s': bad port or range '%s' (1-65535, lo-hi)",
					  text, p);
				return -EINVAL;
			}
		} else if (isxdigit((unsigned char)tok[0]) || tok[0] == ':') {
			if (have_addr++) {
				util_errf(err, errlen, "flow selector '%s': second address '%s'", text, tok);
				return -EINVAL;
			}
			if (sel_parse_addr(tok, &s) < 0) {
				util_errf(err, errlen, "flow selector '%s': bad address or prefix '%s'", text, tok);
				return -EINVAL;
			}
		} else {
			util_errf(err, errlen, "flow selector '%s': unknown word '%s' (tcp, udp, any, ADDR[/PREFIX], port N[-M])",
				  text, tok);
			return -EINVAL;
		}
	}
	if (!n) {
		util_errf(err, errlen, "flow selector is empty (use 'any' for every flow)");
		return -EINVAL;
	}
	*out = s;
	return 0;
}

static void key_fmt_addr(const struct in6_addr *a, char *buf, size_t len)
{
	char t[INET6_ADDRSTRLEN];

	if (IN6_IS_ADDR_V4MAPPED(a)) {
		inet_ntop(AF_INET, &a->s6_addr[12], t, sizeof(t));
		snprintf(buf, len, "%s", t);
	} else {
		inet_ntop(AF_INET6, a, t, sizeof(t));
		snprintf(buf, len, "[%s]", t);
	}
}

int flow_key_format(const struct flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN + 2], d[INET6_ADDRSTRLEN + 2], p[16];

	if (!k || (!buf && len))
		return -1;
	if (k->proto == FLOW_PROTO_QP)
		return snprintf(buf, len, "qp %u/0x%x -> 0x%x", k->saddr.s6_addr32[0],
				k->saddr.s6_addr32[1], k->daddr.s6_addr32[1]);
	if (k->proto == IPPROTO_TCP)
		snprintf(p, sizeof(p), "tcp");
	else if (k->proto == IPPROTO_UDP)
		snprintf(p, sizeof(p), "udp");
	else
		snprintf(p, sizeof(p), "proto %u", k->proto);
	key_fmt_addr(&k->saddr, s, sizeof(s));
	key_fmt_addr(&k->daddr, d, sizeof(d));
	return snprintf(buf, len, "%s %s:%u -> %s:%u", p, s, ntohs(k->sport), d, ntohs(k->dport));
}
