/* ksyms: the kernel's symbol table (/proc/kallsyms), read once and kept,
 * read again only when /proc/modules changes (a module loaded or unloaded
 * moves symbols), and a kernel stack's addresses as text, one
 * "symbol+0xoff/0xsize [module]" line a frame. No BPF: the caller gives
 * the addresses (the thread watch's stack map). Not thread-safe; reads
 * files, so call it off the incidents' path where it can (at start). */
#ifndef NICSTALL_KSYMS_H
#define NICSTALL_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* who prefixes its log lines ("thread watch"). NULL: out of memory. */
struct ksyms *ksyms_new(const char *who);
void ksyms_free(struct ksyms *k);
/* Other files than /proc's (tests): the table is read again. */
void ksyms_set_paths(struct ksyms *k, const char *kallsyms, const char *modules);
/* Read the table if not yet or if the modules changed: 0 readable, -1
 * not (addresses only; ksyms_status says why, logged once a change). */
int ksyms_refresh(struct ksyms *k);
/* ips[0..depth), up to the first 0, into buf as lines; with a readable
 * table the switch's own frames at the top (BPF, the tracepoint's runner,
 * __schedule) are left out. k NULL or unreadable: addresses. The frames
 * written, -1 when len is 0. */
int ksyms_format(const struct ksyms *k, const uint64_t *ips, unsigned depth, char *buf,
		 size_t len);
/* "readable", "not read yet", or why not. */
const char *ksyms_status(const struct ksyms *k);
uint64_t ksyms_reads(const struct ksyms *k);
/* The bytes the table holds: its array and the names it keeps. */
size_t ksyms_bytes(const struct ksyms *k);

#endif
