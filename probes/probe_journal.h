/* probe_journal: kernel and driver journal lines around a stall (sd-journal).
 * Synchronous but bounded: at most PROBE_JOURNAL_SCAN_MAX entries scanned,
 * max_entries returned, about max_bytes of text. */
#ifndef NICSTALL_PROBE_JOURNAL_H
#define NICSTALL_PROBE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define PROBE_JOURNAL_SCAN_MAX 100000
#define PROBE_JOURNAL_MSG_MAX 2048      /* bytes of one MESSAGE kept */

/* Entries with from_realtime_us <= __REALTIME_TIMESTAMP <= to_realtime_us.
 * journal_dir NULL: the local system journal; else the journal files in that
 * directory. match_identifiers (NULL-terminated; NULL = { "kernel" }): each
 * item is "kernel" (_TRANSPORT=kernel), a FIELD=value match used as is, or a
 * syslog identifier (SYSLOG_IDENTIFIER=item); items are ORed.
 *
 * *out (new object) is
 *   {"available": true, "source", "from_realtime_us", "to_realtime_us",
 *    "matches": [...], "entries": [{"realtime_us", "monotonic_us",
 *    "boot_id", "priority", "identifier", "transport", "message",
 *    "message_truncated"?}...], "count", "scanned", "truncated",
 *    "truncated_by": "max_entries"|"max_bytes"|"scan_limit"}
 * or, when there is no journal to read, {"available": false, "reason"}.
 * Returns 0 (also for available=false), or -1 with err for invalid
 * arguments and allocation failure. */
int probe_journal_excerpt(const char *journal_dir, uint64_t from_realtime_us,
			  uint64_t to_realtime_us, const char *const *match_identifiers,
			  size_t max_entries, size_t max_bytes, struct json_object **out,
			  char *err, size_t errlen);

#endif
