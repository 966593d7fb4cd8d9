/* forensic: the investigation run when an incident opens (or on demand),
 * asynchronously in the event loop while sampling goes on:
 *   1. snapshot every counter of the involved ports, link flags,
 *      neighbours, flows (before anything touches a port)
 *   2. fast observation window, kernel pings each way, engine threads
 *      (twice), external probes
 *   3. capture without a mode change, then a promiscuous capture
 *   4. receive-filter reprogram when policy allows and flows still stall
 *   5. watch for the release; journal excerpt
 * Every step's start, end, outcome and output is recorded. */
#ifndef NICSTALL_FORENSIC_H
#define NICSTALL_FORENSIC_H

#include <stddef.h>
#include <stdint.h>

struct daemon;
struct incident;
struct json_object;
struct forensics;

struct forensics *forensic_new(struct daemon *d);
void forensic_free(struct forensics *f);
/* Incident hook (stall_set_hook). */
#include "daemon/stall.h"
void forensic_on_incident(struct incident *inc, enum incident_event event, void *arg);
/* nicstallctl investigate PORT: run the sequence now. 0 or -1 with err. */
int forensic_investigate(struct forensics *f, const char *port, uint64_t *id,
			 char *err, size_t errlen);
/* nicstallctl recover PORT: one reprogram now. Returns a JSON record. */
struct json_object *forensic_recover(struct forensics *f, const char *port);
/* nicstallctl snapshot --bundle: every counter of the ports now, written
 * as a bundle with verdict "manual". 0 and the path, or -1 with err. */
int forensic_manual_bundle(struct forensics *f, const char *const *ports, size_t nports,
			   char *path, size_t pathlen, char *err, size_t errlen);
/* nicstallctl incident show [ID]: the record (NULL when unknown). */
struct json_object *forensic_record(struct forensics *f, uint64_t id);
struct json_object *forensic_list(struct forensics *f);

#endif
