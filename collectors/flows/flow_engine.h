/* flow_engine: the daemon side of engine flow tables (nicstall/flowtab.h).
 *
 * Watches a directory (default /run/nicstalld/flows) with inotify, keeps one
 * read-only fd per table and, on each poll, copies every table into private
 * buffers with pread() (never a shared mapping of a file that can be
 * truncated), checks each record's seqlock and emits one struct flow_obs per
 * stable open session. Tables are hostile input: every problem (bad header,
 * truncation, dead owner, limits) is logged once per table and condition and
 * shown in the listing; a bad table is ignored until its file changes.
 *
 * One thread; flow_engine_handle() and flow_engine_poll() never block.
 * Also behind flow_src_engine_ops (flowsrc.h, host scope). The set of
 * tables is src_engine.c, one table's reader flow_engine_read.c. */
#ifndef NICSTALL_FLOW_ENGINE_H
#define NICSTALL_FLOW_ENGINE_H

#include <stddef.h>

#include "collectors/flows/flows.h"

#define FLOW_ENGINE_MAX_TABLES 1024              /* tables read (open fds) */
#define FLOW_ENGINE_MAX_ENTRIES 16384            /* tables tracked at all */
#define FLOW_ENGINE_MAX_TABLE_BYTES ((64u << 20) + 4096u) /* per table file: the
							       * most records and header */
#define FLOW_ENGINE_MAX_POLL_BYTES (256u << 20)  /* records read per poll */
#define FLOW_ENGINE_MAX_OWNER_POLL_BYTES (64u << 20) /* per owner uid per poll */

struct flow_engine;

/* Watch dir (NULL: NSFT_DEFAULT_DIR; created 0755 if missing) and pick up
 * the tables already there. NULL with err filled on failure. */
struct flow_engine *flow_engine_open(const char *dir, char *err, size_t errlen);

/* An epoll fd, readable when the directory changes or a table's owner
 * exits: add it to the daemon's epoll set (EPOLLIN) and call
 * flow_engine_handle() when it is readable. */
int flow_engine_fd(const struct flow_engine *fe);

/* Take its events: owners that exited (their tables are dropped by the
 * next poll), then the directory's (add new tables, reopen replaced ones,
 * forget deleted ones). */
void flow_engine_handle(struct flow_engine *fe);

/* Read every table; call emit once per stable, open record (src
 * FLOW_SRC_ENGINE). Returns the number of records emitted. An owner's
 * death is known from flow_engine_handle(), not asked here (unless its
 * pidfd could not be had: kill(pid, 0) then), so a poll that runs in the
 * same loop turn as the death, before the handler, reads its table once
 * more (its last records; the table is dropped at the next poll). */
int flow_engine_poll(struct flow_engine *fe, flow_emit_fn emit, void *arg);

/* 1 when there is nothing to read: no table but dead owners' ones, and
 * the directory watched (a table that appears is an event of the fd, not
 * a poll's find). */
int flow_engine_idle(const struct flow_engine *fe);

/* For status: one call per tracked table; problem is NULL when the table is
 * fine. records = records emitted by the last poll. pid is 0 and pid_note
 * says why when the header's owner pid is not believed: the process does
 * not run as the file's owner, or neither maps nor holds the table open
 * (its flows then carry no pid). Returns the count. */
typedef void (*flow_engine_table_fn)(const char *path, const char *engine, int pid,
				     unsigned records, const char *problem,
				     const char *pid_note, void *arg);
size_t flow_engine_tables(const struct flow_engine *fe, flow_engine_table_fn cb,
			  void *arg);

void flow_engine_close(struct flow_engine *fe);

#endif
