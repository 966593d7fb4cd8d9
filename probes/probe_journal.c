/* probe_journal: journal excerpt around a stall, via sd-journal. */
#include "probes/probe_journal.h"

#include "lib/json.h"
#include "lib/util.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <systemd/sd-journal.h>

#define DEFAULT_MAX_ENTRIES 1000
#define DEFAULT_MAX_BYTES (256u * 1024)
#define IDENT_MAX 128
#define ENTRY_OVERHEAD 96       /* JSON keys and numbers of one entry */

/* Copy s (len bytes) replacing invalid UTF-8 and NULs by '?'. */

static void jadd(int *fail, struct json_object *o, const char *k, struct json_object *v)
{
	if (jx_put(o, k, v) < 0)
		*fail = 1;
}

static void jpush(int *fail, struct json_object *a, struct json_object *v)
{
	if (jx_push(a, v) < 0)
		*fail = 1;
}

/* Value of field name of the current entry, at most max bytes, cleaned.
 * NULL when absent. *cut set when it was longer than max. */
static char *get_field(sd_journal *j, const char *name, size_t max, int *cut)
{
	const void *data;
	size_t len, nl = strlen(name);

	if (cut)
		*cut = 0;
	if (sd_journal_get_data(j, name, &data, &len) < 0 || len <= nl ||
	    memcmp(data, name, nl) != 0 || ((const char *)data)[nl] != '=')
		return NULL;
	len -= nl + 1;
	if (len > max) {
		len = max;
		if (cut)
			*cut = 1;
	}
	return util_utf8_clean((const char *)data + nl + 1, len);
}

static int valid_ident(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > IDENT_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

static struct json_object *unavailable(const char *reason)
{
	struct json_object *o = json_object_new_object();
	int fail = 0;

	if (!o)
		return NULL;
	jadd(&fail, o, "available", json_object_new_boolean(0));
	jadd(&fail, o, "reason", json_object_new_string(reason));
	if (fail) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int add_matches(sd_journal *j, const char *const *ids, struct json_object *arr,
		       int *fail, char *err, size_t errlen)
{
	static const char *const kernel_only[] = { "kernel", NULL };
	char m[IDENT_MAX + 32];

	if (!ids || !ids[0])
		ids = kernel_only;
	for (size_t i = 0; ids[i]; i++) {
		int r;

		if (!strcmp(ids[i], "kernel"))
			snprintf(m, sizeof(m), "_TRANSPORT=kernel");
		else if (strchr(ids[i], '='))
			snprintf(m, sizeof(m), "%s", ids[i]);
		else
			snprintf(m, sizeof(m), "SYSLOG_IDENTIFIER=%s", ids[i]);
		if (i > 0 && (r = sd_journal_add_disjunction(j)) < 0) {
			snprintf(err, errlen, "journal match %s: %s", m, strerror(-r));
			return -1;
		}
		r = sd_journal_add_match(j, m, 0);
		if (r < 0) {
			snprintf(err, errlen, "journal match '%s': %s", m, strerror(-r));
			return -1;
		}
		jpush(fail, arr, json_object_new_string(m));
	}
	return 0;
}

int probe_journal_excerpt(const char *journal_dir, uint64_t from_realtime_us,
			  uint64_t to_realtime_us, const char *const *match_identifiers,
			  size_t max_entries, size_t max_bytes, struct json_object **out,
			  char *err, size_t errlen)
{
	const char *src = journal_dir ? journal_dir : "system journal";
	char reason[512];
	sd_journal *j = NULL;
	struct json_object *o = NULL, *entries = NULL, *matches = NULL;
	uint64_t usage = 0;
	size_t count = 0, scanned = 0, bytes = 0;
	const char *truncated_by = NULL;
	int r, fail = 0;

	if (!out) {
		snprintf(err, errlen, "journal excerpt: no output");
		return -1;
	}
	*out = NULL;
	if (from_realtime_us > to_realtime_us) {
		snprintf(err, errlen, "journal excerpt: window %llu..%llu us is reversed",
			 (unsigned long long)from_realtime_us,
			 (unsigned long long)to_realtime_us);
		return -1;
	}
	for (size_t i = 0; match_identifiers && match_identifiers[i]; i++)
		if (!valid_ident(match_identifiers[i])) {
			snprintf(err, errlen, "journal excerpt: invalid match '%.64s'",
				 match_identifiers[i]);
			return -1;
		}
	if (!max_entries)
		max_entries = DEFAULT_MAX_ENTRIES;
	if (!max_bytes)
		max_bytes = DEFAULT_MAX_BYTES;

	if (journal_dir) {
		struct stat st;

		if (stat(journal_dir, &st) < 0) {
			snprintf(reason, sizeof(reason), "journal directory %.400s: %s",
				 journal_dir, strerror(errno));
			goto unavail;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(reason, sizeof(reason), "journal directory %.400s: not a directory",
				 journal_dir);
			goto unavail;
		}
		r = sd_journal_open_directory(&j, journal_dir, 0);
	} else
		r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
	if (r < 0) {
		snprintf(reason, sizeof(reason), "opening %.400s: %s", src, strerror(-r));
		goto unavail;
	}
	if ((r = sd_journal_get_usage(j, &usage)) < 0 || usage == 0) {
		if (journal_dir)
			snprintf(reason, sizeof(reason), "no journal files in %.400s", journal_dir);
		else
			snprintf(reason, sizeof(reason),
				 "no journal files in the system journal (is systemd-journald running?)");
		goto unavail;
	}
	sd_journal_set_data_threshold(j, PROBE_JOURNAL_MSG_MAX + 16);

	o = json_object_new_object();
	entries = json_object_new_array();
	matches = json_object_new_array();
	if (!o || !entries || !matches)
		goto nomem;
	if (add_matches(j, match_identifiers, matches, &fail, err, errlen) < 0) {
		json_object_put(matches);
		json_object_put(entries);
		json_object_put(o);
		sd_journal_close(j);
		return -1;
	}

	r = sd_journal_seek_realtime_usec(j, from_realtime_us);
	while (r >= 0) {
		uint64_t rt, mono;
		sd_id128_t boot;
		struct json_object *e;
		char *msg, *ident, *transport, *prio;
		int cut = 0;
		size_t need;

		r = sd_journal_next(j);
		if (r <= 0)
			break;
		if (++scanned > PROBE_JOURNAL_SCAN_MAX) {
			truncated_by = "scan_limit";
			break;
		}
		if (sd_journal_get_realtime_usec(j, &rt) < 0 || rt < from_realtime_us)
			continue;
		if (rt > to_realtime_us)
			break;
		if (count >= max_entries) {
			truncated_by = "max_entries";
			break;
		}
		msg = get_field(j, "MESSAGE", PROBE_JOURNAL_MSG_MAX, &cut);
		ident = get_field(j, "SYSLOG_IDENTIFIER", IDENT_MAX, NULL);
		if (!ident)
			ident = get_field(j, "_COMM", IDENT_MAX, NULL);
		transport = get_field(j, "_TRANSPORT", 32, NULL);
		prio = get_field(j, "PRIORITY", 8, NULL);
		need = ENTRY_OVERHEAD + (msg ? strlen(msg) : 0) + (ident ? strlen(ident) : 0);
		if (bytes + need > max_bytes) {
			truncated_by = "max_bytes";
			free(msg);
			free(ident);
			free(transport);
			free(prio);
			break;
		}
		e = json_object_new_object();
		if (e) {
			jadd(&fail, e, "realtime_us", json_object_new_int64((int64_t)rt));
			if (sd_journal_get_monotonic_usec(j, &mono, &boot) >= 0) {
				char b[SD_ID128_STRING_MAX];

				jadd(&fail, e, "monotonic_us", json_object_new_int64((int64_t)mono));
				jadd(&fail, e, "boot_id",
				     json_object_new_string(sd_id128_to_string(boot, b)));
			}
			if (prio && prio[0] >= '0' && prio[0] <= '7' && !prio[1])
				jadd(&fail, e, "priority", json_object_new_int(prio[0] - '0'));
			if (!ident && transport && !strcmp(transport, "kernel"))
				jadd(&fail, e, "identifier", json_object_new_string("kernel"));
			else if (ident)
				jadd(&fail, e, "identifier", json_object_new_string(ident));
			if (transport)
				jadd(&fail, e, "transport", json_object_new_string(transport));
			jadd(&fail, e, "message", json_object_new_string(msg ? msg : ""));
			if (cut)
				jadd(&fail, e, "message_truncated", json_object_new_boolean(1));
		}
		jpush(&fail, entries, e);
		free(msg);
		free(ident);
		free(transport);
		free(prio);
		count++;
		bytes += need;
		if (fail)
			break;
	}
	if (r < 0)
		jadd(&fail, o, "error", json_object_new_string(strerror(-r)));
	sd_journal_close(j);
	j = NULL;

	jadd(&fail, o, "available", json_object_new_boolean(1));
	jadd(&fail, o, "source", json_object_new_string(src));
	jadd(&fail, o, "from_realtime_us", json_object_new_int64((int64_t)from_realtime_us));
	jadd(&fail, o, "to_realtime_us", json_object_new_int64((int64_t)to_realtime_us));
	jadd(&fail, o, "matches", matches);
	jadd(&fail, o, "entries", entries);
	jadd(&fail, o, "count", json_object_new_int64((int64_t)count));
	jadd(&fail, o, "scanned", json_object_new_int64((int64_t)scanned));
	jadd(&fail, o, "bytes", json_object_new_int64((int64_t)bytes));
	jadd(&fail, o, "truncated", json_object_new_boolean(truncated_by != NULL));
	if (truncated_by)
		jadd(&fail, o, "truncated_by", json_object_new_string(truncated_by));
	if (fail) {
		json_object_put(o);
		snprintf(err, errlen, "journal excerpt from %s: out of memory", src);
		return -1;
	}
	*out = o;
	return 0;

unavail:
	if (j)
		sd_journal_close(j);
	*out = unavailable(reason);
	if (!*out) {
		snprintf(err, errlen, "journal excerpt from %s: out of memory", src);
		return -1;
	}
	return 0;
nomem:
	json_object_put(matches);
	json_object_put(entries);
	json_object_put(o);
	sd_journal_close(j);
	snprintf(err, errlen, "journal excerpt from %s: out of memory", src);
	return -1;
}
