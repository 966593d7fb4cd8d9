/* capfilter: an incident's flows as a pcap filter.
 *
 * Each conversation is matched by direction: from A:P to B:Q, or from B:Q
 * to A:P. "host A and port P and host B and port Q" would also match the
 * mirrored conversation A:Q <-> B:P, which is another socket's, and a
 * local user who holds port Q on A (and so can have a claim about "A:Q ->
 * B:P" verified) would get another user's session captured promiscuously
 * (issue 34, finding 2's review). */
#include "daemon/forensic/capfilter.h"
#include "lib/json.h"

#include <stdio.h>
#include <string.h>

/* "[addr]" or "addr" into out, without the brackets */
static int host_of(const char *s, size_t n, char *out, size_t outlen)
{
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (!n || n >= outlen || memchr(s, '[', n) || memchr(s, ']', n) || memchr(s, ' ', n))
		return -1;
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

/* "A:P" (or "[A]:P") into host and port; -1 when it is no such thing */
static int endpoint(const char *s, char *host, size_t hostlen, unsigned *port)
{
	const char *c = strrchr(s, ':');
	unsigned p;
	char tail;

	if (!c || sscanf(c + 1, "%u%c", &p, &tail) != 1 || p > 65535)
		return -1;
	*port = p;
	return host_of(s, (size_t)(c - s), host, hostlen);
}

unsigned capfilter_build(struct json_object *flows, char *buf, size_t len)
{
	static const char tail[] = "icmp or icmp6";
	size_t off = 0;
	unsigned n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < jx_len(flows); i++) {
		const char *t = jx_str(json_object_array_get_idx(flows, i), "tuple");
		char proto[8], a[80], b[80], ha[64], hb[64];
		unsigned pa, pb;
		int w;

		if (!t || sscanf(t, "%7s %79s -> %79s", proto, a, b) != 3 ||
		    (strcmp(proto, "tcp") && strcmp(proto, "udp")) ||
		    endpoint(a, ha, sizeof(ha), &pa) < 0 || endpoint(b, hb, sizeof(hb), &pb) < 0)
			continue;
		w = snprintf(buf + off, len - off,
			     "(%s and ((src host %s and src port %u and dst host %s and dst port %u) or "
			     "(src host %s and src port %u and dst host %s and dst port %u))) or ",
			     proto, ha, pa, hb, pb, hb, pb, ha, pa);
		if (w < 0 || (size_t)w + sizeof(tail) >= len - off) {
			buf[off] = 0;   /* no room: this flow and the rest left out */
			break;
		}
		off += (size_t)w;
		n++;
	}
	snprintf(buf + off, len - off, "%s", tail);
	return n;
}
