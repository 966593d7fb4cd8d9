/* runcert: a run's first word and reason; names and labels checked. */
#include "daemon/runcert.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>

static const char *const words[RUN_WORDS] = { "clean", "anomalous", "tainted", "incomplete" };

const char *run_word_name(enum run_word w)
{
	return (unsigned)w < RUN_WORDS ? words[w] : "?";
}

int run_word_parse(const char *s)
{
	for (int i = 0; i < RUN_WORDS; i++)
		if (s && !strcmp(s, words[i]))
			return i;
	return -1;
}

static void first_and_more(char *reason, size_t len, const char *lead, const char *first,
			   unsigned n, const char *what)
{
	if (n > 1)
		snprintf(reason, len, "%s%s (and %u more %s)", lead, first ? first : "?", n - 1, what);
	else
		snprintf(reason, len, "%s%s", lead, first ? first : "?");
}

enum run_word run_verdict(const struct run_facts *f, char *reason, size_t len)
{
	if (f->incomplete) {
		snprintf(reason, len, "%s", f->incomplete);
		return RUN_INCOMPLETE;
	}
	if (f->taints) {
		first_and_more(reason, len, "the daemon changed the system: ", f->first_taint,
			       f->taints, "interventions");
		return RUN_TAINTED;
	}
	if (f->incidents) {
		first_and_more(reason, len, "", f->first_incident, f->incidents, "incidents");
		return RUN_ANOMALOUS;
	}
	if (f->moved) {
		first_and_more(reason, len, "a counter that matters moved: ", f->first_moved,
			       f->moved, "counters");
		return RUN_ANOMALOUS;
	}
	snprintf(reason, len, "no incident, no counter that matters moved, no intervention");
	return RUN_CLEAN;
}

int run_name_check(const char *name, char *err, size_t errlen)
{
	size_t n = name ? strlen(name) : 0;

	if (!n) {
		util_errf(err, errlen, "run name: empty");
		return -1;
	}
	if (n > RUN_NAME_MAX) {
		util_errf(err, errlen, "run name: %zu characters, at most %d", n, RUN_NAME_MAX);
		return -1;
	}
	if (strchr(name, '/')) {
		util_errf(err, errlen, "run name '%.64s': has a '/' (names are [A-Za-z0-9_.-])",
			  name);
		return -1;
	}
	if (!util_valid_name(name, RUN_NAME_MAX) ||
	    !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
	      (name[0] >= '0' && name[0] <= '9'))) {
		size_t bad = 0;

		while (bad < n && (strchr("_.-", name[bad]) ||
				   (name[bad] >= 'a' && name[bad] <= 'z') ||
				   (name[bad] >= 'A' && name[bad] <= 'Z') ||
				   (name[bad] >= '0' && name[bad] <= '9')))
			bad++;
		if (bad < n)
			util_errf(err, errlen, "run name: character %zu (byte 0x%02x) is not one of "
				  "[A-Za-z0-9_.-]", bad + 1, (unsigned char)name[bad]);
		else
			util_errf(err, errlen, "run name '%s': must start with a letter or digit",
				  name);
		return -1;
	}
	return 0;
}

int run_label_check(const char *kv, size_t *keylen, char *err, size_t errlen)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;
	char key[RUN_LABEL_KEY_MAX + 1];
	size_t k, vl;

	if (!eq) {
		util_errf(err, errlen, "label '%.64s': not KEY=VALUE", kv ? kv : "");
		return -1;
	}
	k = (size_t)(eq - kv);
	if (!k || k > RUN_LABEL_KEY_MAX) {
		util_errf(err, errlen, "label key: %zu characters, 1 to %d", k, RUN_LABEL_KEY_MAX);
		return -1;
	}
	memcpy(key, kv, k);
	key[k] = 0;
	if (!util_valid_name(key, RUN_LABEL_KEY_MAX)) {
		util_errf(err, errlen, "label key '%.64s': not [A-Za-z0-9_.-]", key);
		return -1;
	}
	vl = strlen(eq + 1);
	if (vl > RUN_LABEL_VALUE_MAX) {
		util_errf(err, errlen, "label %s: value of %zu characters, at most %d", key, vl,
			  RUN_LABEL_VALUE_MAX);
		return -1;
	}
	for (size_t i = 0; i < vl; i++)
		if ((unsigned char)eq[1 + i] < 0x20 || (unsigned char)eq[1 + i] > 0x7e) {
			util_errf(err, errlen, "label %s: value character %zu (byte 0x%02x) is not "
				  "printable ASCII", key, i + 1, (unsigned char)eq[1 + i]);
			return -1;
		}
	*keylen = k;
	return 0;
}
