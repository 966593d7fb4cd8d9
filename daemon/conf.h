/* conf: the INI configuration (nicstalld.conf(5)). Parsed into a fresh
 * struct; the caller swaps it in only when the whole file is valid. */
#ifndef NICSTALL_CONF_H
#define NICSTALL_CONF_H

#include <limits.h>
#include <stdint.h>

#include "collectors/flows/flows.h"
#include "collectors/counters/src_host.h"
#include "probes/probe_exec.h"

struct peer_conf;                    /* daemon/peers/peerconf.h */

#define CONF_MAX_SEL 8
#define CONF_MAX_DIAG 8              /* devlink_diagnose reporters */
#define TRACK_ENGINE 1u
#define TRACK_SOCK 2u
#define TRACK_BPF 4u
#define TRACK_ONLOAD 8u              /* Onload stacks (orm_json, onload_stackdump) */
#define TRACK_VMA 16u                /* libvma / libxlio statistics files */
#define TRACK_RDMAQP 32u             /* RDMA queue pairs of the port's device */

enum profile { PROFILE_AUTO = 0, PROFILE_MLX5, PROFILE_SFC, PROFILE_GENERIC };
enum { CONF_DEVLINK_AUTO = 0, CONF_DEVLINK_ON, CONF_DEVLINK_OFF };
/* tracker_attach: tcx links where the kernel has them, or one way only */
enum { CONF_ATTACH_AUTO = 0, CONF_ATTACH_TCX, CONF_ATTACH_CLSACT };
enum { CONF_SOCK_AUTO = 0, CONF_SOCK_PACED, CONF_SOCK_EVENTS };

struct port_conf {
	char name[32];
	struct app_conf app;         /* app_metrics = URL (collectors/counters/src_app.h) */
	char ifname[16];
	char netns[PATH_MAX];        /* "" = the daemon's namespace */
	enum profile profile;
	char rdma_dev[64];           /* "" = discover, "none" = never */
	unsigned rdma_port;          /* 0 = discover (1 when a device is set) */
	char stats_file[PATH_MAX];   /* recorded `ethtool -S` text */
	char info_file[PATH_MAX];    /* recorded `ethtool -i` text */
	struct flow_sel sel[CONF_MAX_SEL]; /* flows = SELECTOR (watched flows) */
	unsigned nsel;
	unsigned track;              /* TRACK_* flow sources */
	uint64_t stall_ns;           /* stall threshold; 0 = daemon default */
	char peer[32];               /* the other port of a back-to-back pair */
	char peer_address[64];       /* pinged from this port's namespace */
	int recover;                 /* 1: reprogram allowed */
	int promisc_capture;         /* 1: promiscuous capture allowed */
	int reprogram_without_loss;  /* 1: reprogram even where the evidence
				      * shows no frame of the flows lost */
	int tracker_hooks_always;    /* 1: tracker hooks on even where its flows
				      * are evidence only (TCP-only selectors) */
	int tracker_attach;          /* CONF_ATTACH_*: how the tracker hooks */
	int sock_liveness;           /* CONF_SOCK_*: auto (the default: the
				      * kernel-event watch where its hooks
				      * are the sockets' sockops callbacks,
				      * busy sockets handed back to a pace,
				      * else paced), paced (every socket
				      * read on its pace), events (either
				      * hooks, however busy) */
	char probe[4][512];          /* external probe command lines */
	unsigned nprobe;
	int devlink;                 /* CONF_DEVLINK_* */
	uint64_t devlink_ns;         /* reporters' read interval */
	char devlink_diag[CONF_MAX_DIAG][64]; /* devlink_diagnose names */
	uint64_t devlink_every[CONF_MAX_DIAG]; /* and their intervals (0: each read) */
	unsigned ndiag;
	int devlink_diag_set;        /* devlink_diagnose given (may be none) */
	char devlink_replies[PATH_MAX]; /* recorded devlink replies, "" kernel */
	char devlink_record[PATH_MAX];  /* record live replies here, "" no */
	uint64_t rdmaqp_ns;          /* RDMA QP dump interval */
	char rdmaqp_replies[PATH_MAX]; /* recorded RES_QP_GET replies, "" kernel */
	unsigned line;               /* where the [port] section starts */
};

/* thread_watch: auto (on where the kernel allows it), on (a warning when
 * it cannot be), off. */
enum conf_tw { CONF_TW_AUTO = 0, CONF_TW_ON, CONF_TW_OFF };

struct conf {
	char path[PATH_MAX];
	uint64_t interval_ns;        /* base sampling interval */
	uint64_t horizon_ns;         /* flight recorder horizon */
	char state_dir[PATH_MAX];
	char run_dir[PATH_MAX];      /* control socket directory */
	char sysfs_root[PATH_MAX];   /* "" = the real /sys */
	int log_level;               /* LOG_ERR .. LOG_DEBUG */
	uint64_t flow_interval_ns;   /* flow liveness polling */
	uint64_t stall_ns;           /* default stall threshold */
	char flows_dir[PATH_MAX];    /* engine flow tables */
	uint64_t cooldown_ns;        /* between incidents of one port group */
	uint64_t group_ns;           /* stalls this soon after an incident join it */
	unsigned incidents_per_hour;
	uint64_t incident_max_ns;    /* an unreleased incident ends after this */
	uint64_t observe_ns;         /* fast observation window */
	uint64_t observe_every_ns;   /* its sampling interval */
	unsigned ping_count;
	int ping_mtu;                /* a don't-fragment echo at the port's MTU too */
	uint64_t capture_ns;         /* each capture's duration */
	unsigned snaplen;
	char journal_dir[PATH_MAX];  /* "" = the system journal */
	unsigned bundle_max_count;   /* retention: bundles kept */
	uint64_t bundle_max_bytes;   /* retention: bytes kept */
	char bundle_hook[1024];      /* run with the bundle path when complete */
	uint64_t hook_timeout_ns;
	/* Who children run as (nicstalld.conf(5) hook_user, hook_group,
	 * probe_user): the names as written ("" = the default) and what they
	 * resolved to at load. */
	/* warnings of a file that loaded (file:line: text), for the log */
#define CONF_MAX_WARN 8
	char warn[CONF_MAX_WARN][400];
	unsigned nwarn;
#define HOOK_USER_DEFAULT "nicstall-hook"     /* systemd/nicstalld.sysusers */
	char hook_user[64], hook_group[64], probe_user[64];
	unsigned hook_user_line, hook_group_line, probe_user_line, bundle_hook_line;
	/* every child's RLIMIT_DATA (and 4x that RLIMIT_AS for the hook and
	 * unprivileged probes): child_memory_max, default
	 * PROBE_EXEC_DATA_DEFAULT */
	uint64_t child_memory_max;
	struct probe_exec_cred hook_cred;   /* PROBE_EXEC_UNPRIV, always */
	struct probe_exec_cred probe_cred;  /* UNPRIV, or DAEMON for root */
	char rules_dir[PATH_MAX];    /* shipped rules */
	char rules_local_dir[PATH_MAX]; /* local overrides and additions */
	uint64_t probe_timeout_ns;
	uint64_t reprogram_every_ns; /* at most one reprogram per port per this */
	uint64_t reprogram_hold_ns;  /* how long a reprogram holds its state */
	uint64_t release_wait_ns;    /* release watch for flows that give no retry time */
	uint64_t release_wait_max_ns; /* the longest release watch after one action */
	char metrics_file[PATH_MAX]; /* Prometheus textfile; "" = none */
	uint64_t metrics_interval_ns; /* how often it is rewritten */
	char onload_tools[PATH_MAX]; /* orm_json, onload_stackdump; "" = PATH */
	uint64_t onload_ns;          /* Onload poll interval */
	char vma_dir[PATH_MAX];      /* vmastat.<pid> files */
	char xlio_dir[PATH_MAX];     /* xliostat.<pid> files */
	uint64_t vma_ns;             /* VMA/XLIO read and bump interval */
	int thread_watch;            /* enum conf_tw: engine threads (threadwatch) */
	int thread_syscalls;         /* thread_watch_syscalls: their system calls too */
	unsigned thread_share_pct;   /* asleep this much of a threshold: blocked */
	struct port_conf *ports;
	unsigned nports;
	/* peer daemons (daemon/peers/peerconf.h) */
	char host_name[64];          /* this host in notices and bundles ("": gethostname) */
	char peer_listen[64];        /* the address the peer socket binds */
	unsigned peer_listen_port;
	char peer_netns[PATH_MAX];   /* its namespace ("" = the daemon's) */
	uint64_t peer_wait_ns;       /* the longest wait for the peers' summaries */
	uint64_t peer_window_ns;     /* a receiver's window after a notice */
	uint64_t peer_skew_ns;       /* notices further off in time are refused */
	unsigned peer_snapshots_per_hour; /* notices acted on per hour, all peers */
	unsigned peer_bundle_max_count;   /* retention of peer snapshots, their own pool */
	uint64_t peer_bundle_max_bytes;
	struct peer_conf *peers;
	unsigned npeers;
	/* host resources: [host] and [producer NAME] (daemon/hostconf.h) */
	struct host_opts host;
	/* benchmark runs (runs.h): while one is open, the daemon makes no
	 * promiscuous transition and no reprogram (observe), or makes them and
	 * taints the run (recover) */
	int run_policy;              /* RUN_POLICY_* */
};
#define RUN_POLICY_OBSERVE 0
#define RUN_POLICY_RECOVER 1

#define CONF_DEFAULT_PATH NICSTALL_SYSCONFDIR "/nicstalld/nicstalld.conf"

typedef void (*conf_report_fn)(const char *msg, void *arg);

/* Parse path. Every error is reported as "file:line: message" through
 * report; returns the number of errors (0: *out is set). */
int conf_load(const char *path, struct conf **out, conf_report_fn report, void *arg);
void conf_free(struct conf *c);
const char *conf_profile_name(enum profile p);
/* Pick a profile from a driver name ("mlx5_core" -> mlx5, "sfc" -> sfc). */
enum profile conf_profile_for_driver(const char *driver);
/* The least stall threshold of any port (a port's own, else the
 * daemon's): what a source whose flows may be any port's is polled by. */
uint64_t conf_least_stall_ns(const struct conf *c);

#endif
