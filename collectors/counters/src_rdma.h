/* src_rdma: RDMA port counters.
 *
 * src_rdma_ops ("rdma", declared in counters.h) reads sysfs:
 *   <sysfs_root>/sys/class/infiniband/<rdma_dev>/ports/<rdma_port>/
 *       hw_counters/<name>   -> counter "hw_counters/<name>"
 *       counters/<name>      -> counter "counters/<name>"
 * (sysfs_root "" is the real /sys). open() opens every file once (sorted,
 * hw_counters first) and keeps the fds; read() preads each at offset 0.
 * Every counter is CNT_W32 (mlx5 q counters and PMA counters wrap at 2^32;
 * cnt_delta widens a value that no longer fits). A file that cannot be read
 * or parsed at open() is left out of the layout (e.g. "N/A" PMA counters).
 *
 * Read errors, the choice made here:
 *  - some files fail (EIO, garbage, too long): read() still returns 0; each
 *    failing counter keeps its previous value (delta 0, never a spike) and
 *    s->err names the first failing file, its error, and how many failed
 *    (s->err is "" after a clean read). Each file's failure and recovery is
 *    logged once (log_warnx / log_info).
 *  - every file fails: -errno of the first failure, s->err as above.
 *  - ENODEV/ENOENT, or the port directory was removed: the device went away
 *    (driver reload, hot unplug). The source rescans; when the port is back
 *    the read succeeds with a new layout if the counter set changed,
 *    otherwise it returns -ENODEV ("device gone") and rescans on every later
 *    read.
 */
#ifndef NICSTALL_SRC_RDMA_H
#define NICSTALL_SRC_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

#define SRC_RDMA_MAXC    1024u   /* counters per directory */

#endif
