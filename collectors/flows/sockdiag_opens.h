/* sockdiag_opens: has a namespace opened a TCP connection since we last
 * looked? The sum of its Tcp ActiveOpens and PassiveOpens (/proc/net/snmp
 * of that namespace).
 *
 * flow_sockdiag dumps to find new sockets, and a dump walks every bucket of
 * the established hash (tcp_diag_dump(), net/ipv4/tcp_diag.c), which the
 * host's namespaces share: its cost grows with the host's memory, not with
 * the watched sockets. No TCP socket that a dump would show is made
 * without moving one of these two per-namespace counters: tcp_connect()
 * (net/ipv4/tcp_output.c) counts TCP_MIB_ACTIVEOPENS after
 * inet_hash_connect() put the socket in the hash, and
 * tcp_create_openreq_child() (net/ipv4/tcp_minisocks.c) counts
 * TCP_MIB_PASSIVEOPENS for every accepted child (Fast Open's included,
 * through tcp_fastopen_create_child()), IPv4 and IPv6 alike
 * (sock_net(sk)->mib.tcp_statistics). The child is put in the hash after
 * that count (inet_ehash_nolisten() in tcp_v4_syn_recv_sock()), so a dump
 * made just after the count may miss it: the caller dumps once more after
 * a change. Only a socket restored in TCP_REPAIR mode skips tcp_connect()
 * (tcp_v4_connect() and tcp_v6_connect() hash it and return): it moves no
 * open, but it moves the namespace's TCP sockets in use, the "inuse" of
 * /proc/net/sockstat and sockstat6 (sock_prot_inuse_get(net, &tcp_prot)
 * and &tcpv6_prot in sockstat_seq_show() and sockstat6_seq_show()), which
 * inet_ehash_nolisten() and __inet_check_established() count for every
 * socket put in the established hash and inet_unhash() uncounts. So the
 * caller reads those too: a change in any of the three dumps. A restore
 * and a close between two looks leave them as they were: the caller still
 * dumps now and then (SD_REDISCOVER_NS).
 *
 * The file is opened once, inside the namespace (the seq_file keeps the
 * namespace it was opened in: proc_net's single_open_net()), and read
 * again from offset 0 at each look: one system call, no path walk. */
#ifndef NICSTALL_SOCKDIAG_OPENS_H
#define NICSTALL_SOCKDIAG_OPENS_H

#include <stddef.h>
#include <stdint.h>

/* Open /proc/net/snmp of namespace nsfd (-1: the calling thread's). An
 * O_RDONLY|O_CLOEXEC fd, or -errno. */
int sd_opens_open(int nsfd);

/* ActiveOpens + PassiveOpens now, read through fd. 0, or -errno (-EBADMSG:
 * the file is not what the kernel writes). */
int sd_opens_read(int fd, uint64_t *opens);

/* The same from the text of /proc/net/snmp in buf[0..len): the "Tcp:" line
 * of names and the "Tcp:" line of values after it. 0, or -EBADMSG. For
 * tests and fuzzers. */
int sd_opens_parse(const char *buf, size_t len, uint64_t *opens);

/* The namespace's TCP sockets in use, IPv4 (sockstat, "TCP: inuse N")
 * or IPv6 (sockstat6, "TCP6: inuse N"; absent without IPv6): open inside
 * namespace nsfd (-1: the calling thread's), read through fd, or parse
 * from buf[0..len). 0 or -errno as above. */
int sd_inuse_open(int nsfd, int v6);
int sd_inuse_read(int fd, int v6, uint64_t *inuse);
int sd_inuse_parse(const char *buf, size_t len, int v6, uint64_t *inuse);

#endif
