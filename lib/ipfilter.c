/* ipfilter: the unit's IP address filter as the daemon sees it. */
#include "lib/ipfilter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* IPFILTER_UNIT_ALLOW with systemd's names spelled out
 * (src/shared/in-addr-prefix-util.c in_addr_prefixes_from_string_and_family
 * and src/core/ip-address-access.c): family, prefix, length. */
static const struct { int af; const char *net; unsigned len; } allow[] = {
	{ AF_INET, "127.0.0.0", 8 }, { AF_INET6, "::1", 128 },         /* localhost */
	{ AF_INET, "169.254.0.0", 16 }, { AF_INET6, "fe80::", 64 },     /* link-local */
	{ AF_INET, "224.0.0.0", 4 }, { AF_INET6, "ff00::", 8 },         /* multicast */
	{ AF_INET, "10.0.0.0", 8 }, { AF_INET, "172.16.0.0", 12 },
	{ AF_INET, "192.168.0.0", 16 }, { AF_INET, "100.64.0.0", 10 },
	{ AF_INET6, "fc00::", 7 },
};

static int prefix_match(const uint8_t *a, const uint8_t *net, unsigned len)
{
	unsigned full = len / 8, rest = len % 8;

	if (memcmp(a, net, full))
		return 0;
	return !rest || ((a[full] ^ net[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

int ipfilter_unit_allows(const char *addr)
{
	uint8_t a[16], net[16];
	int af;

	if (inet_pton(AF_INET, addr, a) == 1)
		af = AF_INET;
	else if (inet_pton(AF_INET6, addr, a) == 1) {
		static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

		af = AF_INET6;
		/* ::ffff:a.b.c.d leaves as IPv4, and is filtered as such */
		if (!memcmp(a, mapped, sizeof(mapped))) {
			memmove(a, a + 12, 4);
			af = AF_INET;
		}
	} else
		return -1;
	for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
		if (allow[i].af == af && inet_pton(af, allow[i].net, net) == 1 &&
		    prefix_match(a, net, allow[i].len))
			return 1;
	return 0;
}

const char *ipfilter_errstr(int err, const char *addr, char *buf, size_t len)
{
	if (err != EPERM)
		snprintf(buf, len, "%s", strerror(err));
	else if (addr && ipfilter_unit_allows(addr) == 0)
		snprintf(buf, len, "%s: refused by the unit's IP address filter (IPAddressDeny=): "
			 "add IPAddressAllow=%s in a drop-in", strerror(err), addr);
	else
		snprintf(buf, len, "%s (the unit's IP address filter allows %s: a firewall rule "
			 "or an LSM refused it)", strerror(err), addr ? addr : "this address");
	return buf;
}
