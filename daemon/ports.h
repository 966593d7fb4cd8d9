/* ports: the registry of watched ports, made to match the configuration
 * (at start and at each reload: unchanged ports keep their history) and
 * looked up by name. Modules that work on ports get this handle. */
#ifndef NICSTALL_PORTS_H
#define NICSTALL_PORTS_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct loop;
struct port;
struct ports;

/* sysfs_root is borrowed (the daemon's effective root; "" the real one). */
struct ports *ports_new(struct loop *l, const char *sysfs_root);
void ports_free(struct ports *ps);
/* Recorder capacity (samples) for the configuration. */
unsigned ports_rec_capacity(const struct conf *c);
/* Make the registry match c. A port whose configuration is unchanged keeps
 * its recorder when keep_history (the recorder size did not change);
 * others are created (down until their interface answers) or removed. A
 * port that cannot be created (out of memory) is left out with an error. */
void ports_apply(struct ports *ps, const struct conf *c, int keep_history);

unsigned ports_count(const struct ports *ps);
struct port *ports_at(const struct ports *ps, unsigned i);
struct port *ports_find(const struct ports *ps, const char *name);
/* "a, b, c" (for "no port 'x' (configured: ...)"); "none" when empty. */
const char *ports_names(const struct ports *ps, char *buf, size_t len);
/* Memory held by every recorder. */
uint64_t ports_rec_bytes(const struct ports *ps);
/* Sample every port now (the sampler's tick). */
void ports_sample(struct ports *ps, uint64_t mono_ns, uint64_t real_ns);

#endif
