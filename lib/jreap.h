/* jreap: JSON documents dropped a part per turn of the event loop.
 *
 * Dropping a document of some ten thousand values (an investigation's
 * record: its snapshots, window and facts) in one json_object_put held the
 * loop 2.4-10 ms on the bench's machine, and the incident that pushed it
 * out of the kept records waited that long for its first snapshot. Handed
 * here, a document is taken apart a value at a time (the first member with
 * no members of its own, down the first path) by a timer of its own, for
 * JREAP_SLICE_NS a turn (the clock read every 32 values), so no turn holds
 * the loop much longer, whatever the document's shape.
 *
 * The document is taken over, and neither it nor any part of it may be
 * held by anything else: it is emptied in place, so a holder of a
 * reference to it or to a part would see that part emptied. */
#ifndef NICSTALL_JREAP_H
#define NICSTALL_JREAP_H

#include <stdint.h>

struct jreap;
struct loop;
struct json_object;

/* Members removed in a turn, for at most this long (then the next turn) */
#define JREAP_SLICE_NS 250000ull
/* Documents that may wait; one more is dropped at once, whole */
#define JREAP_MAX 32

/* name: the timer's wakeups' name (loop_timer_name); NULL: none. NULL
 * when out of memory. */
struct jreap *jreap_new(struct loop *l, const char *name);
/* o taken over (NULL: nothing). r NULL, or JREAP_MAX waiting: dropped at
 * once. */
void jreap_put(struct jreap *r, struct json_object *o);
/* Documents not yet wholly dropped. */
unsigned jreap_pending(const struct jreap *r);
/* What waits is dropped at once; then the timer. */
void jreap_free(struct jreap *r);

#endif
