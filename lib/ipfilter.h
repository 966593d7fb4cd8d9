/* ipfilter: the unit's IP address filter as the daemon sees it.
 *
 * systemd/nicstalld.service sets IPAddressDeny=any and allows the list
 * below (IPADDR_ALLOW_UNIT, its one copy in C; test_ipfilter checks that
 * the unit file says the same). Traffic to anything else from the daemon
 * and its children fails with EPERM (the cgroup's BPF filter), which
 * strerror renders as a bare "Operation not permitted": ipfilter_errstr
 * says what refused it and what to add, and ipfilter_unit_allows lets the
 * configuration warn at load about an address the unit would refuse. */
#ifndef NICSTALL_IPFILTER_H
#define NICSTALL_IPFILTER_H

#include <stddef.h>

/* IPAddressAllow= of systemd/nicstalld.service, word for word */
#define IPFILTER_UNIT_ALLOW "localhost link-local multicast 10.0.0.0/8 172.16.0.0/12 " \
	"192.168.0.0/16 100.64.0.0/10 fc00::/7"

/* Whether the numeric address text (IPv4 or IPv6) is inside
 * IPFILTER_UNIT_ALLOW: 1 yes, 0 no, -1 not an address. systemd's names:
 * localhost 127.0.0.0/8 ::1/128, link-local 169.254.0.0/16 fe80::/64,
 * multicast 224.0.0.0/4 ff00::/8 (src/core/ip-address-access.c). */
int ipfilter_unit_allows(const char *addr);

/* The text for errno err of a send or connect to addr: for EPERM, that the
 * unit's filter refused it and how to allow it (or a firewall, for an
 * address the unit allows), else strerror(err). Returns buf. */
const char *ipfilter_errstr(int err, const char *addr, char *buf, size_t len);

#endif
