/* devlink_health: devlink health reporters (state, error and recover
 * counts, grace period, auto-recover, stored dump) and their diagnose
 * output, over generic netlink (family "devlink"), as named u64 counters and
 * as JSON for snapshots and bundles. Issue #16.
 *
 * Where the data is (kernel net/devlink/health.c):
 *  - DEVLINK_CMD_HEALTH_REPORTER_GET, a dump (devlink_nl_health_reporter_
 *    get_dumpit): one message per reporter, filled by devlink_nl_health_
 *    reporter_fill: BUS_NAME, DEV_NAME, [PORT_INDEX for a port reporter],
 *    nest HEALTH_REPORTER { NAME, STATE u8 (0 healthy, 1 error), ERR_COUNT
 *    u64, RECOVER_COUNT u64, [GRACEFUL_PERIOD u64 ms, BURST_PERIOD u64 ms,
 *    AUTO_RECOVER u8: when the reporter can recover], [DUMP_TS u64 ms,
 *    DUMP_TS_NS u64 CLOCK_REALTIME ns: when a dump is stored], [AUTO_DUMP
 *    u8: when the reporter can dump] }. The kernel does not export
 *    last_recovery_ts.
 *  - DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, a do (devlink_nl_health_reporter_
 *    diagnose_doit): the reporter's fmsg, sent by devlink_fmsg_snd as one or
 *    more NLM_F_MULTI messages, then NLMSG_DONE, then (NLM_F_ACK) the ack.
 *    Each part carries one DEVLINK_ATTR_FMSG nest holding a flat run of
 *    tokens (devlink_fmsg_prepare_skb): OBJ_NEST_START, PAIR_NEST_START,
 *    ARR_NEST_START, NEST_END (flags), OBJ_NAME (string), and a value as
 *    OBJ_VALUE_TYPE (u8, NLA_* / DEVLINK_VAR_ATTR_TYPE_* numbering) followed
 *    by OBJ_VALUE_DATA. The run continues across parts; a part may end
 *    anywhere between two tokens.
 *  - DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET, a dump (devlink_nl_health_
 *    reporter_dump_get_dumpit): the stored dump's fmsg in the same format.
 *    It TAKES a new dump when none is stored, so it is only sent for a
 *    reporter whose GET reply carries DUMP_TS_NS.
 *
 * mlx5 (ConnectX-4 and later) registers "fw", "fw_fatal" and "vnic" on the
 * PCI devlink instance and "tx", "rx" on the netdev's devlink port (on the
 * PCI instance in older kernels, on the auxiliary instance
 * auxiliary/mlx5_core.eth.N in newer ones). "vnic" diagnose
 * (mlx5_reporter_vnic_diagnose_counters) is one object "vNIC env counters"
 * with total_error_queues, send_queue_priority_update_flow, comp_eq_overrun,
 * async_eq_overrun, cq_overrun, invalid_command, quota_exceeded_command,
 * nic_receive_steering_discard, generated_pkt_steering_fail,
 * handled_pkt_steering_fail, icm_consumption (each only where the firmware
 * has the capability). "rx" diagnose (mlx5e_rx_reporter_diagnose) is
 * "Common config" {RQ {...}} and the array "RQs" of one object per channel
 * {channel ix, rqn, HW state, SW state, WQE counter, posted WQEs, cc,
 * CQ {cqn, HW status, ci, size}, EQ {eqn, irqn, vecidx, ci, size},
 * [ICOSQ {...}]}.
 *
 * Counter names (all u64, each reporter's block in reporter-name order):
 *   devlink/R/state            0 healthy, 1 error
 *   devlink/R/error_count      errors the driver reported
 *   devlink/R/recover_count    recoveries that succeeded
 *   devlink/R/grace_period_ms  \
 *   devlink/R/burst_period_ms   > only for a reporter that can recover
 *   devlink/R/auto_recover     /  (burst_period_ms: newer kernels, 2025)
 *   devlink/R/auto_dump        \  only for a reporter that can dump:
 *   devlink/R/dump_time_ns     /  CLOCK_REALTIME of the stored dump, 0: none
 *   devlink/R/PATH             numeric and bool leaves of R's diagnose
 * PATH joins the fmsg names with '/', array items by index from 0
 * (devlink/rx/RQs/3/HW_state); every character of a name outside
 * [A-Za-z0-9_.] becomes '_' ("HW state" -> HW_state). The "vnic" wrapper
 * object "vNIC env counters" is left out of its paths, so the steering
 * figure is devlink/vnic/nic_receive_steering_discard. Bools count 0/1.
 * A name that repeats gets "~2", "~3". String leaves are kept as text (in
 * the JSON), binary leaves are counted and skipped.
 *
 * Every reply is hostile input: framing is checked with unsigned arithmetic
 * before any libmnl call (mnl_nlmsg_ok casts the length to int), every
 * attribute goes through nl_attr_cb with a policy table, the fmsg grammar is
 * enforced (depth, names, value lengths, nothing after the root closes), and
 * sizes are bounded (DLH_* below). */
#ifndef NICSTALL_DEVLINK_HEALTH_H
#define NICSTALL_DEVLINK_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/counters/counters.h"

struct json_object;

#define DLH_NAME_MAX     64u           /* bus, device, reporter names */
#define DLH_MAX_REPORTERS 16u          /* per port (mlx5 has 5) */
#define DLH_MAX_VALUES   4096u         /* numeric leaves kept per diagnose */
#define DLH_MAX_TEXTS    256u          /* string leaves kept per diagnose */
#define DLH_TEXT_MAX     256u          /* bytes of one string leaf kept */
#define DLH_PATH_MAX     256u          /* a counter name, with the NUL */
#define DLH_FMSG_DEPTH   16u           /* nesting of an fmsg */
#define DLH_REPLY_MAX    (4u << 20)    /* bytes of one reply (all parts) */

/* A devlink object: an instance (bus/dev), or one of its ports. */
struct dlh_handle {
	char bus[DLH_NAME_MAX];        /* "pci", "auxiliary"; "" unset */
	char dev[DLH_NAME_MAX];        /* "0000:08:00.0", "mlx5_core.eth.0" */
	int has_port;
	uint32_t port;                 /* DEVLINK_ATTR_PORT_INDEX */
};
/* "pci/0000:08:00.0" or "auxiliary/mlx5_core.eth.0/65535". */
const char *dlh_handle_str(const struct dlh_handle *h, char *buf, size_t len);

/* ---- requests (generic netlink, libmnl) ----
 * Each writes one message into buf and returns its length, or 0 when buf
 * is too small or an argument is invalid. family is the id from
 * CTRL_CMD_GETFAMILY. Every request asks for the ack (NLM_F_ACK). */
size_t dlh_build_getfamily(void *buf, size_t len, uint32_t seq);
/* DEVLINK_CMD_PORT_GET dump; h NULL: every instance. */
size_t dlh_build_port_dump(void *buf, size_t len, uint16_t family,
			   uint32_t seq, const struct dlh_handle *h);
/* DEVLINK_CMD_GET dump (instances and their nested instances). */
size_t dlh_build_dev_dump(void *buf, size_t len, uint16_t family, uint32_t seq);
/* DEVLINK_CMD_HEALTH_REPORTER_GET dump of instance h (and its ports).
 * Older kernels (before 6.7) ignore the handle and dump every instance:
 * replies are filtered by handle when parsed. */
size_t dlh_build_reporter_dump(void *buf, size_t len, uint16_t family,
			       uint32_t seq, const struct dlh_handle *h);
/* DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE of reporter name on h (with
 * PORT_INDEX when h->has_port). */
size_t dlh_build_diagnose(void *buf, size_t len, uint16_t family, uint32_t seq,
			  const struct dlh_handle *h, const char *name);
/* DEVLINK_CMD_HEALTH_REPORTER_DUMP_GET (a dump request). */
size_t dlh_build_dump_get(void *buf, size_t len, uint16_t family, uint32_t seq,
			  const struct dlh_handle *h, const char *name);

/* ---- replies: framing ----
 * A reply is every message the kernel sends for one request, as recv(2)
 * returns them back to back. dlh_reply_feed takes one chunk (one recv, or a
 * whole recorded file), checks each header with unsigned arithmetic
 * (nlmsg_len >= 16, <= the bytes left: 0x80000001 is refused), skips
 * messages of another sequence or port (seq/portid 0: no check), handles
 * NLMSG_NOOP, NLMSG_OVERRUN, NLMSG_DONE (with its error) and NLMSG_ERROR
 * (error and extended ack text), and appends each data message of family
 * to r->buf. A dump ends at NLMSG_DONE, a do at the ack (a do's multi-part
 * reply has a NLMSG_DONE before its ack). Returns 1 when the reply is
 * complete, 0 when more is expected, or -errno: a kernel error (err:
 * "strerror[: extack]"), -EBADMSG for broken framing, -E2BIG over
 * DLH_REPLY_MAX. */
struct dlh_reply {
	uint8_t *buf;            /* data messages, each NLMSG_ALIGNed */
	size_t len, cap;
	unsigned nmsg;           /* data messages kept */
	unsigned skipped;        /* messages of other requests */
	int dump;                /* the request was a dump */
	int done;                /* NLMSG_DONE seen */
};
void dlh_reply_init(struct dlh_reply *r, int dump);
void dlh_reply_free(struct dlh_reply *r);
int dlh_reply_feed(struct dlh_reply *r, const void *chunk, size_t len,
		   uint32_t seq, uint32_t portid, uint16_t family,
		   char *err, size_t errlen);
/* Walk the data messages of a complete reply (each already framed). */
#define dlh_reply_for_each(r, nlh, off) \
	for ((off) = 0; (off) + 16 <= (r)->len && \
	     ((nlh) = (const struct nlmsghdr *)((r)->buf + (off)), 1); \
	     (off) += ((nlh)->nlmsg_len + 3u) & ~3u)

/* ---- replies: messages ----
 * Each takes one message (header included, len bytes: the bytes that are
 * there, never trusted from nlmsg_len), checks its length, type (family;
 * 0: any) and genl command, and returns 0 or -EINVAL/-EBADMSG with err. */
/* CTRL_CMD_GETFAMILY reply: the family id and, when config_group is not
 * NULL, the id of its "config" multicast group (0: none). */
int dlh_parse_family(const void *msg, size_t len, uint16_t *family,
		     uint32_t *config_group, char *err, size_t errlen);

struct dlh_port {
	struct dlh_handle h;             /* has_port = 1 */
	char netdev[16];                 /* "" when absent (IB port, other ns) */
	uint32_t ifindex;                /* 0 when absent */
};
int dlh_parse_port(const void *msg, size_t len, uint16_t family,
		   struct dlh_port *out, char *err, size_t errlen);

/* DEVLINK_CMD_GET: the instance and the instances nested in it
 * (DEVLINK_ATTR_NESTED_DEVLINK, kernels from 6.7). */
#define DLH_MAX_NESTED 8u
struct dlh_dev {
	struct dlh_handle h;
	unsigned nnested;
	struct dlh_handle nested[DLH_MAX_NESTED];
};
int dlh_parse_dev(const void *msg, size_t len, uint16_t family,
		  struct dlh_dev *out, char *err, size_t errlen);

#define DLH_HAVE_RECOVER  1u     /* grace_period_ms, auto_recover */
#define DLH_HAVE_BURST    2u     /* burst_period_ms */
#define DLH_HAVE_DUMP     4u     /* auto_dump (the reporter can dump) */
#define DLH_HAVE_DUMP_TS  8u     /* a dump is stored: dump_ts_ms/_ns */
struct dlh_reporter {
	char name[DLH_NAME_MAX];
	struct dlh_handle h;             /* has_port for a port reporter */
	uint8_t state;                   /* 0 healthy, 1 error (as sent) */
	uint64_t error_count, recover_count;
	unsigned have;                   /* DLH_HAVE_* */
	uint64_t grace_period_ms, burst_period_ms;
	uint8_t auto_recover, auto_dump;
	uint64_t dump_ts_ms;             /* jiffies_to_msecs of the dump */
	uint64_t dump_ts_ns;             /* CLOCK_REALTIME ns, 0: older kernel */
};
/* DEVLINK_CMD_HEALTH_REPORTER_GET reply or a DEVLINK_CMD_HEALTH_REPORTER_
 * RECOVER notification (devlink_recover_notify). NAME, STATE, ERR_COUNT
 * and RECOVER_COUNT are mandatory; a reporter name must be a safe name
 * (util_valid_name). */
int dlh_parse_reporter(const void *msg, size_t len, uint16_t family,
		       struct dlh_reporter *out, char *err, size_t errlen);

/* ---- fmsg ---- */

/* What one diagnose (or dump) gave, flattened. names are full counter
 * names ("devlink/vnic/nic_receive_steering_discard"). */
struct dlh_diag {
	unsigned n;
	char **names;
	uint64_t *vals;
	uint8_t *width;              /* CNT_W64 for u64, CNT_W32 for the rest */
	unsigned ntext;
	char **tnames, **texts;
	unsigned dropped;            /* leaves over DLH_MAX_VALUES/TEXTS */
	unsigned binary;             /* binary leaves skipped */
	unsigned unknown;            /* unknown tokens or value types skipped */
};
void dlh_diag_free(struct dlh_diag *d);

/* Parse the fmsg of a complete DIAGNOSE or DUMP_GET reply (r, cmd
 * DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE or _DUMP_GET) of reporter rep into
 * d (may be NULL) and, when tree is not NULL, into a new JSON object
 * shaped like `devlink -j health diagnose` (binary as hex, at most 4096
 * bytes each). 0 or -EBADMSG/-ENOMEM with err ("offset N: ..."). */
int dlh_parse_fmsg(const struct dlh_reply *r, uint16_t family, uint8_t cmd,
		   const char *rep, struct dlh_diag *d,
		   struct json_object **tree, char *err, size_t errlen);

/* ---- talking to the kernel, or to recorded replies ----
 * A dlh_io answers requests with complete replies. The socket kind is a
 * NETLINK_GENERIC socket made in a network namespace; the fixture kind
 * reads recorded replies from a directory instead (the injected reply
 * path for system tests and for replaying a real card):
 *   family.nlhex        reply to CTRL_CMD_GETFAMILY "devlink"
 *   dev-get.nlhex       reply to DEVLINK_CMD_GET (dump)
 *   port-get.nlhex      reply to DEVLINK_CMD_PORT_GET (dump)
 *   health-get.nlhex    reply to DEVLINK_CMD_HEALTH_REPORTER_GET (dump)
 *   diagnose-R.nlhex    reply to DIAGNOSE of reporter R
 *   dump-R.nlhex        reply to DUMP_GET of reporter R
 * Format: tests/fixtures/devlink/README.md (hex text of the bytes recv(2)
 * returned, '#' comments). A missing file answers like a kernel without
 * that part: family -ENOENT, health-get/diagnose/dump -EOPNOTSUPP, dev-get
 * and port-get an empty dump. Sequence and port ids are not checked.
 * record_dir (socket kind, may be NULL) writes every reply received into
 * files of the same names, to record a real card. */
enum dlh_req {
	DLH_REQ_FAMILY, DLH_REQ_DEV, DLH_REQ_PORT, DLH_REQ_HEALTH,
	DLH_REQ_DIAGNOSE, DLH_REQ_DUMP,
};
struct dlh_io;
struct dlh_io *dlh_io_socket(int nsfd, const char *record_dir, char *err,
			     size_t errlen);
struct dlh_io *dlh_io_fixture(const char *dir, char *err, size_t errlen);
void dlh_io_close(struct dlh_io *io);
/* The devlink family id, resolved at the first request (0 before). */
uint16_t dlh_io_family(const struct dlh_io *io);
/* One request, a complete reply in r (dlh_reply_free it in any case).
 * h: the target (DEV, PORT: NULL for all), name: the reporter (DIAGNOSE,
 * DUMP). 0 or -errno with err naming the request. */
int dlh_io_request(struct dlh_io *io, enum dlh_req kind,
		   const struct dlh_handle *h, const char *name,
		   struct dlh_reply *r, char *err, size_t errlen);

/* Recorded-reply files are lib/nlhex.h's (at most NLHEX_MAX bytes decoded,
 * the same as DLH_REPLY_MAX). */

/* ---- the health state of one port ---- */
struct dlh_state {
	unsigned n;
	struct dlh_reporter rep[DLH_MAX_REPORTERS];   /* sorted by name */
	struct dlh_diag diag[DLH_MAX_REPORTERS];      /* rep[i]'s diagnose */
	int diag_rc[DLH_MAX_REPORTERS];   /* 0 done, 1 not asked, -errno */
	char diag_err[DLH_MAX_REPORTERS][160];
	struct dlh_reply raw[DLH_MAX_REPORTERS];      /* diagnose reply kept */
	uint64_t diag_real_ns[DLH_MAX_REPORTERS];     /* when diag[i] was read:
						       * older than real_ns when
						       * carried over */
	uint64_t recover_seen_ns[DLH_MAX_REPORTERS];  /* realtime when the
						       * current recover_count
						       * was first seen, 0 */
	uint64_t real_ns, mono_ns;                    /* when it was read */
	uint64_t cost_ns;                             /* time the read took */
	unsigned requests;                            /* netlink requests */
	uint16_t family;
	char handles[160];           /* "pci/0000:08:00.0 auxiliary/.../65535" */
};
void dlh_state_free(struct dlh_state *st);

/* Where a port's reporters are. dev: the PCI (device) instance, port: the
 * netdev's devlink port; either may be unset (bus ""). */
struct dlh_target {
	struct dlh_handle dev, port;
};
/* Find the target of interface ifname (ifindex 0: any) on io: the devlink
 * port whose netdev it is (DEVLINK_CMD_PORT_GET), its instance when that
 * is a PCI one, else the instance that nests it (DEVLINK_CMD_GET), else
 * pci/<bus_info> when bus_info is a PCI address (may be NULL). 0, or
 * -ENODEV when nothing is found, or -errno. */
int dlh_find_target(struct dlh_io *io, const char *ifname, uint32_t ifindex,
		    const char *bus_info, struct dlh_target *t, char *err,
		    size_t errlen);
/* Read every reporter of t and diagnose those named in diagnose (NULL-
 * terminated; NULL: none). A reporter that is not there is simply absent;
 * a diagnose that fails keeps its error in diag_rc/diag_err. prev (may be
 * NULL) carries recover_seen_ns over. Returns 0 (some reporters, or none:
 * st->n == 0) or -errno when the reporters cannot be read at all. */
int dlh_read_state(struct dlh_io *io, const struct dlh_target *t,
		   const char *const *diagnose, const struct dlh_state *prev,
		   struct dlh_state *st, char *err, size_t errlen);
/* A new layout of st's counter names (the block per reporter listed
 * above, widths included) with their values in *vals (malloc'd, lay->n).
 * NULL on ENOMEM. */
struct clayout *dlh_state_layout(const struct dlh_state *st, uint64_t **vals);
/* {"time_ns", "handles", "reporters": [ {"name", "handle", "state":
 * "healthy"|"error"|N, "error_count", "recover_count", ["grace_period_ms",
 * "burst_period_ms", "auto_recover"], ["auto_dump"], ["dump_time_ns",
 * "dump_ts_ms"], ["recover_seen_ns"], ["diagnose": tree, "diagnose_time_ns"]
 * ["diagnose_error": text] } ] } added to obj. No reporters: "reporters": [] and "note":
 * "no devlink health". 0 or -ENOMEM/-EINVAL. */
int dlh_state_to_json(const struct dlh_state *st, struct json_object *obj);

/* Is h (a reporter's handle) one of t's: t's device instance, t's port
 * instance (device-level reporters), or exactly t's port? */
int dlh_target_has(const struct dlh_target *t, const struct dlh_handle *h);

/* ---- health events ----
 * devlink_recover_notify multicasts DEVLINK_CMD_HEALTH_REPORTER_RECOVER
 * (the reporter's GET fields) on the "config" group whenever a driver
 * reports an error (devlink_health_report), a recovery succeeds or the
 * state changes. A monitor is a non-blocking socket in a namespace joined
 * to that group, for the event loop. dispatch() drains it and calls cb per
 * event (filter with dlh_target_has); it returns the number of events, or
 * -ENOBUFS when some were lost (re-read the state then), or -errno. */
struct dlh_mon;
struct dlh_mon *dlh_mon_open(int nsfd, char *err, size_t errlen);
int dlh_mon_fd(const struct dlh_mon *m);
int dlh_mon_dispatch(struct dlh_mon *m,
		     void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		     char *err, size_t errlen);
void dlh_mon_close(struct dlh_mon *m);
/* The parsing behind dispatch, for tests: the events in buf (messages as
 * one recv(2) returns them). Returns their number or -errno (framing). */
int dlh_mon_parse(const void *buf, size_t len, uint16_t family,
		  void (*cb)(const struct dlh_reporter *r, void *arg), void *arg,
		  char *err, size_t errlen);

/* ---- the counter source ---- */

/* src_devlink_health_ops ("devlink", see counters.h) reads the state at
 * most every interval and serves the last values in between, so it can sit
 * in the sampler with the other sources: each diagnose issues firmware
 * commands (vnic: QUERY_VNIC_ENV, the one ethtool -S issues for
 * rx_steer_missed_packets at every read; rx: QUERY_RQ, QUERY_CQ, QUERY_SQ
 * per channel), so each has its own interval: by default the reporters
 * (no firmware) and vnic at every query (1 s: a steering-discard delta then
 * spans what the other counters' does), rx every 10 s. open() tries the port's namespace, then the daemon's own (a
 * devlink instance stays in its namespace when the netdev is moved); it
 * fails with -ENOENT when the kernel has no devlink, -ENODEV when the
 * interface has no devlink port or PCI instance. read() never returns
 * -ENODEV (the sampler takes that for "interface gone"): a vanished
 * instance is -ENXIO. */
struct dlh_opts {
	const char *fixture_dir;      /* replies from files (NULL: kernel) */
	const char *record_dir;       /* record live replies here (NULL) */
	const char *bus_info;         /* PCI address from GDRVINFO, or NULL */
	const char *const *diagnose;  /* reporters to diagnose; NULL: the
				       * default {"vnic", "rx", NULL} */
	const uint64_t *diagnose_every_ns; /* diagnose[i] at most every this
				       * (0 or below interval_ns: at every
				       * query); NULL: all at every query.
				       * The default list: vnic each query,
				       * rx every 10 s */
	uint64_t interval_ns;         /* reporters' GET and the queries; 0: 1 s */
	uint64_t min_refresh_ns;      /* 0: 100 ms; floor for refreshes */
};
extern const struct src_ops src_devlink_health_ops;
int src_devlink_health_open(struct src *s, const struct src_ctx *ctx,
			    const struct dlh_opts *o);
/* The next read() queries the kernel (investigation start and end),
 * unless the last query is younger than min_refresh_ns. diagnose (NULL:
 * every configured diagnose, whatever its interval) narrows that one
 * query's diagnoses, e.g. {"vnic",
 * NULL} for the first snapshot, where every millisecond counts; reporters
 * left out keep their last values (diag_real_ns says how old). */
void src_devlink_health_refresh(struct src *s, const char *const *diagnose);
/* Where the port's reporters are (NULL before open). */
const struct dlh_target *src_devlink_health_target(const struct src *s);
/* A health-event monitor in the namespace where the source found the
 * port's devlink (the port's own, or the daemon's). The namespace fd the
 * source was opened with is borrowed: it must still be open. */
struct dlh_mon *src_devlink_health_mon_open(const struct src *s, char *err,
					    size_t errlen);
/* The state behind the last read (NULL before the first), for snapshots. */
const struct dlh_state *src_devlink_health_state(const struct src *s);
/* Queries so far and the time they took (cost accounting). */
void src_devlink_health_cost(const struct src *s, uint64_t *queries,
			     uint64_t *total_ns, uint64_t *last_ns);
/* The stored dump of reporter name as JSON into *out, only when the
 * reporter has one newer than newer_than_real_ns (CLOCK_REALTIME) and its
 * reply is at most max_bytes; *out NULL otherwise (with the reason in
 * err). Never takes a dump: DUMP_GET is sent only after HEALTH_REPORTER_GET
 * showed a stored one (a dump cleared in between would be retaken by the
 * kernel; *retaken is set when the timestamp moved). 0 or -errno. */
int src_devlink_health_dump(struct src *s, const char *name,
			    uint64_t newer_than_real_ns, size_t max_bytes,
			    struct json_object **out, int *retaken, char *err,
			    size_t errlen);

#endif
