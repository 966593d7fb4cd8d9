/* bundler: what goes into an investigation's evidence bundle
 * (nicstall-bundle(5)): the manifest (trigger, host, kernel, versions, the
 * ports' identity, verdict, facts, release, steps) and the files (record,
 * facts, window, recorder windows, flows, threads, pings, links and
 * neighbours, journal, probe outputs, captures, summary), written through
 * bundle_write; then retention and the completion hook. */
#ifndef NICSTALL_BUNDLER_H
#define NICSTALL_BUNDLER_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct loop;
struct port;
struct bundler;
struct json_object;
struct rules;

#define BUNDLER_MAX_PORTS 8
#define BUNDLER_MAX_PCAPS 4
/* Bundles that may wait for bundle_hook while it runs for an earlier one;
 * one more is refused with a "hook-dropped" event, never silently. */
#define BUNDLER_HOOK_QUEUE 32
#define BUNDLER_HOOK_QUEUE_TEXT "32"
/* a hook still running when the daemon stops: SIGTERM, then this long to
 * end before SIGKILL */
#define BUNDLER_HOOK_STOP_MS 1000
#define BUNDLER_HOOK_STOP_TEXT "1 s"

struct bundler_inv {
	struct json_object *rec;        /* the investigation record */
	uint64_t id, incident_id;
	uint64_t open_ns, open_real_ns;
	const char *port_names[BUNDLER_MAX_PORTS];
	struct port *ports[BUNDLER_MAX_PORTS];  /* NULL when gone meanwhile */
	unsigned nports;
	const char *pcaps[BUNDLER_MAX_PCAPS];   /* capture files moved in */
	unsigned npcap;
	const struct rules *rules;      /* for the summary's gap line (or NULL) */
};

struct bundler *bundler_new(struct loop *l, const struct conf *c);
void bundler_free(struct bundler *b);
void bundler_configure(struct bundler *b, const struct conf *c);
/* Write the bundle of inv. 0 with its path (the record gets "bundle"), or
 * -1 with err (the record gets "bundle_error"); logged either way. */
int bundler_write(struct bundler *b, const struct bundler_inv *inv, char *path, size_t pathlen,
		  char *err, size_t errlen);

#endif
