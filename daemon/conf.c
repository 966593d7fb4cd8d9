/* conf: INI parser for nicstalld.conf. */
#include "daemon/conf.h"
#include "collectors/flowsel.h"
#include "lib/ctlproto.h"
#include "daemon/hostconf.h"
#include "lib/ipfilter.h"
#include "lib/log.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PORTS 256
#define MAX_LINE 4096

struct parser {
	const char *path;
	unsigned line;
	int nerr;
	conf_report_fn report;
	void *arg;
	struct conf *c;
	struct port_conf *port;     /* current [port] section or NULL */
	struct peer_conf *peer;     /* current [peer] section or NULL */
	int in_daemon;
	int in_host;                /* [host] */
	struct host_producer *prod; /* current [producer] section or NULL */
	int bad_section;            /* keys of a rejected section are skipped */
};

__attribute__((format(printf, 2, 3)))
static void perr(struct parser *p, const char *fmt, ...)
{
	char msg[1024];
	char full[1400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line)
		snprintf(full, sizeof(full), "%s:%u: %s", p->path, p->line, msg);
	else            /* a default's trouble: no line says it */
		snprintf(full, sizeof(full), "%s: %s", p->path, msg);
	p->nerr++;
	if (p->report)
		p->report(full, p->arg);
}

/* An address the unit's IP filter refuses (lib/ipfilter.h): loaded, and
 * said, since every datagram to it will fail with EPERM. */
static void warn_ipfilter(struct parser *p, const char *key, const char *addr)
{
	struct conf *c = p->c;

	if (ipfilter_unit_allows(addr) != 0 || c->nwarn >= CONF_MAX_WARN)
		return;
	snprintf(c->warn[c->nwarn++], sizeof(c->warn[0]), "%s:%u: %s: %.64s is outside the "
		 "unit's IPAddressAllow= (" IPFILTER_UNIT_ALLOW "): under nicstalld.service "
		 "traffic to it is refused (EPERM); add IPAddressAllow=%.64s in a drop-in",
		 p->path, p->line, key, addr, addr);
}

const char *conf_profile_name(enum profile p)
{
	switch (p) {
	case PROFILE_MLX5: return "mlx5";
	case PROFILE_SFC: return "sfc";
	case PROFILE_GENERIC: return "generic";
	default: return "auto";
	}
}

enum profile conf_profile_for_driver(const char *driver)
{
	if (!driver)
		return PROFILE_GENERIC;
	if (!strncmp(driver, "mlx5", 4))
		return PROFILE_MLX5;
	if (!strcmp(driver, "sfc") || !strncmp(driver, "sfc_", 4) ||
	    !strcmp(driver, "sfc-ef100") || !strcmp(driver, "xilinx_efct"))
		return PROFILE_SFC;
	return PROFILE_GENERIC;
}

static int set_str(struct parser *p, char *dst, size_t size, const char *key,
		   const char *val)
{
	if (strlen(val) >= size) {
		perr(p, "%s: value is longer than %zu characters", key, size - 1);
		return -1;
	}
	util_strlcpy(dst, val, size);
	return 0;
}

static int set_path(struct parser *p, char *dst, size_t size, const char *key,
		    const char *val, int allow_empty)
{
	if (!*val && allow_empty) {
		*dst = 0;
		return 0;
	}
	if (val[0] != '/') {
		perr(p, "%s: '%s' is not an absolute path", key, val);
		return -1;
	}
	return set_str(p, dst, size, key, val);
}

static void daemon_key(struct parser *p, const char *key, const char *val)
{
	struct conf *c = p->c;
	char e[256];

	if (!strcmp(key, "interval")) {
		if (util_parse_duration(val, &c->interval_ns, 10000000ull,
					60000000000ull, e, sizeof(e)) < 0)
			perr(p, "interval: %s", e);
	} else if (!strcmp(key, "horizon")) {
		if (util_parse_duration(val, &c->horizon_ns, 1000000000ull,
					3600000000000ull, e, sizeof(e)) < 0)
			perr(p, "horizon: %s", e);
	} else if (!strcmp(key, "state_dir")) {
		set_path(p, c->state_dir, sizeof(c->state_dir), key, val, 0);
	} else if (!strcmp(key, "run_dir")) {
		set_path(p, c->run_dir, sizeof(c->run_dir), key, val, 0);
	} else if (!strcmp(key, "sysfs_root")) {
		set_path(p, c->sysfs_root, sizeof(c->sysfs_root), key, val, 1);
	} else if (!strcmp(key, "flow_interval")) {
		if (util_parse_duration(val, &c->flow_interval_ns, 5000000ull,
					10000000000ull, e, sizeof(e)) < 0)
			perr(p, "flow_interval: %s", e);
	} else if (!strcmp(key, "stall_threshold")) {
		if (util_parse_duration(val, &c->stall_ns, 10000000ull,
					600000000000ull, e, sizeof(e)) < 0)
			perr(p, "stall_threshold: %s", e);
	} else if (!strcmp(key, "flows_dir")) {
		set_path(p, c->flows_dir, sizeof(c->flows_dir), key, val, 0);
	} else if (!strcmp(key, "incident_cooldown")) {
		if (util_parse_duration(val, &c->cooldown_ns, 0, 86400000000000ull,
					e, sizeof(e)) < 0)
			perr(p, "incident_cooldown: %s", e);
	} else if (!strcmp(key, "incident_window")) {
		if (util_parse_duration(val, &c->group_ns, 0, 600000000000ull, e, sizeof(e)) < 0)
			perr(p, "incident_window: %s", e);
	} else if (!strcmp(key, "incident_timeout")) {
		if (util_parse_duration(val, &c->incident_max_ns, 1000000000ull,
					3600000000000ull, e, sizeof(e)) < 0)
			perr(p, "incident_timeout: %s", e);
	} else if (!strcmp(key, "incidents_per_hour")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 1, 3600, e, sizeof(e)) < 0)
			perr(p, "incidents_per_hour: %s", e);
		else
			c->incidents_per_hour = (unsigned)v;
	} else if (!strcmp(key, "observe_window")) {
		if (util_parse_duration(val, &c->observe_ns, 10000000ull, 10000000000ull, e, sizeof(e)) < 0)
			perr(p, "observe_window: %s", e);
	} else if (!strcmp(key, "observe_interval")) {
		if (util_parse_duration(val, &c->observe_every_ns, 1000000ull, 1000000000ull, e, sizeof(e)) < 0)
			perr(p, "observe_interval: %s", e);
	} else if (!strcmp(key, "capture_time")) {
		if (util_parse_duration(val, &c->capture_ns, 10000000ull, 60000000000ull, e, sizeof(e)) < 0)
			perr(p, "capture_time: %s", e);
	} else if (!strcmp(key, "probe_timeout")) {
		if (util_parse_duration(val, &c->probe_timeout_ns, 100000000ull, 300000000000ull, e, sizeof(e)) < 0)
			perr(p, "probe_timeout: %s", e);
	} else if (!strcmp(key, "run_policy")) {
		if (!strcmp(val, "observe"))
			c->run_policy = RUN_POLICY_OBSERVE;
		else if (!strcmp(val, "recover"))
			c->run_policy = RUN_POLICY_RECOVER;
		else
			perr(p, "run_policy: '%s' is not one of observe, recover", val);
	} else if (!strcmp(key, "reprogram_interval")) {
		if (util_parse_duration(val, &c->reprogram_every_ns, 0, 86400000000000ull, e, sizeof(e)) < 0)
			perr(p, "reprogram_interval: %s", e);
	} else if (!strcmp(key, "reprogram_hold")) {
		if (util_parse_duration(val, &c->reprogram_hold_ns, 10000000ull, 5000000000ull, e, sizeof(e)) < 0)
			perr(p, "reprogram_hold: %s", e);
	} else if (!strcmp(key, "release_wait_max")) {
		if (util_parse_duration(val, &c->release_wait_max_ns, 100000000ull, 120000000000ull, e, sizeof(e)) < 0)
			perr(p, "release_wait_max: %s", e);
	} else if (!strcmp(key, "release_wait")) {
		if (util_parse_duration(val, &c->release_wait_ns, 10000000ull, 60000000000ull, e, sizeof(e)) < 0)
			perr(p, "release_wait: %s", e);
	} else if (!strcmp(key, "ping_count")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 0, 64, e, sizeof(e)) < 0)
			perr(p, "ping_count: %s", e);
		else
			c->ping_count = (unsigned)v;
	} else if (!strcmp(key, "ping_mtu")) {
		if (util_parse_bool(val, &c->ping_mtu, e, sizeof(e)) < 0)
			perr(p, "ping_mtu: %s", e);
	} else if (!strcmp(key, "capture_snaplen")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 64, 65535, e, sizeof(e)) < 0)
			perr(p, "capture_snaplen: %s", e);
		else
			c->snaplen = (unsigned)v;
	} else if (!strcmp(key, "bundle_max_count")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 1, 100000, e, sizeof(e)) < 0)
			perr(p, "bundle_max_count: %s", e);
		else
			c->bundle_max_count = (unsigned)v;
	} else if (!strcmp(key, "bundle_max_bytes")) {
		if (util_parse_size(val, &c->bundle_max_bytes, 1u << 20, 1ull << 40, e, sizeof(e)) < 0)
			perr(p, "bundle_max_bytes: %s", e);
	} else if (!strcmp(key, "bundle_hook")) {
		if (set_str(p, c->bundle_hook, sizeof(c->bundle_hook), key, val) == 0)
			c->bundle_hook_line = p->line;
	} else if (!strcmp(key, "child_memory_max")) {
		if (util_parse_size(val, &c->child_memory_max, 16u << 20, 64ull << 30, e,
				    sizeof(e)) < 0)
			perr(p, "child_memory_max: %s", e);
	} else if (!strcmp(key, "hook_user")) {
		if (set_str(p, c->hook_user, sizeof(c->hook_user), key, val) == 0)
			c->hook_user_line = p->line;
	} else if (!strcmp(key, "hook_group")) {
		if (set_str(p, c->hook_group, sizeof(c->hook_group), key, val) == 0)
			c->hook_group_line = p->line;
	} else if (!strcmp(key, "probe_user")) {
		if (set_str(p, c->probe_user, sizeof(c->probe_user), key, val) == 0)
			c->probe_user_line = p->line;
	} else if (!strcmp(key, "hook_timeout")) {
		if (util_parse_duration(val, &c->hook_timeout_ns, 100000000ull, 3600000000000ull, e, sizeof(e)) < 0)
			perr(p, "hook_timeout: %s", e);
	} else if (!strcmp(key, "rules_dir")) {
		set_path(p, c->rules_dir, sizeof(c->rules_dir), key, val, 0);
	} else if (!strcmp(key, "rules_local_dir")) {
		set_path(p, c->rules_local_dir, sizeof(c->rules_local_dir), key, val, 0);
	} else if (!strcmp(key, "journal_dir")) {
		set_path(p, c->journal_dir, sizeof(c->journal_dir), key, val, 1);
	} else if (!strcmp(key, "metrics_file")) {
		set_path(p, c->metrics_file, sizeof(c->metrics_file), key, val, 1);
	} else if (!strcmp(key, "metrics_interval")) {
		if (util_parse_duration(val, &c->metrics_interval_ns, 1000000000ull, 300000000000ull,
					e, sizeof(e)) < 0)
			perr(p, "metrics_interval: %s", e);
	} else if (!strcmp(key, "onload_tools")) {
		set_path(p, c->onload_tools, sizeof(c->onload_tools) - 32, key, val, 1);
	} else if (!strcmp(key, "onload_interval")) {
		if (util_parse_duration(val, &c->onload_ns, 100000000ull, 60000000000ull, e, sizeof(e)) < 0)
			perr(p, "onload_interval: %s", e);
	} else if (!strcmp(key, "vma_stats_dir")) {
		set_path(p, c->vma_dir, sizeof(c->vma_dir) - 32, key, val, 0);
	} else if (!strcmp(key, "xlio_stats_dir")) {
		set_path(p, c->xlio_dir, sizeof(c->xlio_dir) - 32, key, val, 0);
	} else if (!strcmp(key, "vma_interval")) {
		if (util_parse_duration(val, &c->vma_ns, 10000000ull, 5000000000ull, e, sizeof(e)) < 0)
			perr(p, "vma_interval: %s", e);
	} else if (!strcmp(key, "thread_watch")) {
		if (!strcmp(val, "auto"))
			c->thread_watch = CONF_TW_AUTO;
		else if (!strcmp(val, "on"))
			c->thread_watch = CONF_TW_ON;
		else if (!strcmp(val, "off"))
			c->thread_watch = CONF_TW_OFF;
		else
			perr(p, "thread_watch: '%s' is not one of auto, on, off", val);
	} else if (!strcmp(key, "thread_watch_syscalls")) {
		if (util_parse_bool(val, &c->thread_syscalls, e, sizeof(e)) < 0)
			perr(p, "thread_watch_syscalls: %s", e);
	} else if (!strcmp(key, "thread_sleep_share")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 10, 100, e, sizeof(e)) < 0)
			perr(p, "thread_sleep_share: %s", e);
		else
			c->thread_share_pct = (unsigned)v;
	} else if (!strcmp(key, "log_level")) {
		static const char *lv[] = { "err", "warning", "notice", "info", "debug" };
		static const int pri[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };
		size_t i;

		for (i = 0; i < 5; i++)
			if (!strcmp(val, lv[i]))
				break;
		if (i == 5)
			perr(p, "log_level: '%s' is not one of err, warning, notice, info, debug", val);
		else
			c->log_level = pri[i];
	} else {
		int r = peerconf_daemon_key(c, key, val, e, sizeof(e));

		if (r < 0)
			perr(p, "%s", e);
		else if (r > 0)
			perr(p, "unknown key '%s' in [daemon]", key);
	}
}

/* devlink_diagnose = NAME[:DURATION] ... | none */
static void devlink_diagnose(struct parser *p, struct port_conf *pc, const char *val)
{
	char buf[512], *tok, *save = NULL, e[256];

	pc->ndiag = 0;
	pc->devlink_diag_set = 1;
	if (strlen(val) >= sizeof(buf)) {
		perr(p, "devlink_diagnose: longer than %zu characters", sizeof(buf) - 1);
		return;
	}
	util_strlcpy(buf, val, sizeof(buf));
	for (tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t every = 0;

		if (!strcmp(tok, "none"))
			continue;
		if (colon) {
			*colon = '\0';
			if (util_parse_duration(colon + 1, &every, 100000000ull, 3600000000000ull, e,
						sizeof(e)) < 0) {
				perr(p, "devlink_diagnose: %s: %s", tok, e);
				continue;
			}
		}
		if (!util_valid_name(tok, 63) || strchr(tok, '/')) {
			perr(p, "devlink_diagnose: '%s' is not a reporter name", tok);
			continue;
		}
		if (pc->ndiag >= CONF_MAX_DIAG) {
			perr(p, "devlink_diagnose: at most %d reporters", CONF_MAX_DIAG);
			return;
		}
		util_strlcpy(pc->devlink_diag[pc->ndiag], tok, sizeof(pc->devlink_diag[0]));
		pc->devlink_every[pc->ndiag++] = every;
	}
}

static void port_key(struct parser *p, const char *key, const char *val)
{
	struct port_conf *pc = p->port;
	char e[256];
	uint64_t v;
	int a;

	if ((a = app_conf_key(&pc->app, key, val, e, sizeof(e))) != 0) {
		if (a < 0)
			perr(p, "%s", e);
	} else if (!strcmp(key, "interface")) {
		if (!*val || strlen(val) >= sizeof(pc->ifname) || strchr(val, '/') ||
		    strchr(val, ' '))
			perr(p, "interface: '%s' is not a valid interface name", val);
		else
			util_strlcpy(pc->ifname, val, sizeof(pc->ifname));
	} else if (!strcmp(key, "netns")) {
		if (val[0] != '/' && !util_valid_name(val, 255))
			perr(p, "netns: '%s' is neither a namespace name nor an absolute path", val);
		else
			set_str(p, pc->netns, sizeof(pc->netns), key, val);
	} else if (!strcmp(key, "profile")) {
		if (!strcmp(val, "auto"))
			pc->profile = PROFILE_AUTO;
		else if (!strcmp(val, "mlx5"))
			pc->profile = PROFILE_MLX5;
		else if (!strcmp(val, "sfc"))
			pc->profile = PROFILE_SFC;
		else if (!strcmp(val, "generic"))
			pc->profile = PROFILE_GENERIC;
		else
			perr(p, "profile: '%s' is not one of mlx5, sfc, generic, auto", val);
	} else if (!strcmp(key, "rdma_device")) {
		if (!strcmp(val, "auto"))
			pc->rdma_dev[0] = 0;
		else if (!util_valid_name(val, sizeof(pc->rdma_dev) - 1))
			perr(p, "rdma_device: '%s' is not a device name", val);
		else
			util_strlcpy(pc->rdma_dev, val, sizeof(pc->rdma_dev));
	} else if (!strcmp(key, "rdma_port")) {
		if (util_parse_u64(val, &v, 1, 255, e, sizeof(e)) < 0)
			perr(p, "rdma_port: %s", e);
		else
			pc->rdma_port = (unsigned)v;
	} else if (!strcmp(key, "flows")) {
		if (pc->nsel >= CONF_MAX_SEL)
			perr(p, "flows: at most %d selectors per port", CONF_MAX_SEL);
		else if (flow_sel_parse(val, &pc->sel[pc->nsel], e, sizeof(e)) < 0)
			perr(p, "flows: %s", e);
		else
			pc->nsel++;
	} else if (!strcmp(key, "track")) {
		char buf[128], *tok, *save = NULL;

		pc->track = 0;
		util_strlcpy(buf, val, sizeof(buf));
		for (tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
			if (!strcmp(tok, "engine"))
				pc->track |= TRACK_ENGINE;
			else if (!strcmp(tok, "sock"))
				pc->track |= TRACK_SOCK;
			else if (!strcmp(tok, "bpf"))
				pc->track |= TRACK_BPF;
			else if (!strcmp(tok, "onload"))
				pc->track |= TRACK_ONLOAD;
			else if (!strcmp(tok, "vma") || !strcmp(tok, "xlio"))
				pc->track |= TRACK_VMA;
			else if (!strcmp(tok, "rdmaqp"))
				pc->track |= TRACK_RDMAQP;
			else if (strcmp(tok, "none"))
				perr(p, "track: '%s' is not one of engine, sock, bpf, onload, vma, "
				     "xlio, rdmaqp, none", tok);
		}
		pc->track |= 0x80u;     /* explicitly set (may be none) */
	} else if (!strcmp(key, "stall_threshold")) {
		if (util_parse_duration(val, &pc->stall_ns, 10000000ull,
					600000000000ull, e, sizeof(e)) < 0)
			perr(p, "stall_threshold: %s", e);
	} else if (!strcmp(key, "peer")) {
		if (!util_valid_name(val, sizeof(pc->peer) - 1))
			perr(p, "peer: '%s' is not a port name", val);
		else
			util_strlcpy(pc->peer, val, sizeof(pc->peer));
	} else if (!strcmp(key, "peer_address")) {
		struct in6_addr a;

		if (inet_pton(AF_INET, val, &a) != 1 && inet_pton(AF_INET6, val, &a) != 1)
			perr(p, "peer_address: '%s' is not an IPv4 or IPv6 address", val);
		else {
			util_strlcpy(pc->peer_address, val, sizeof(pc->peer_address));
			warn_ipfilter(p, "peer_address", val);
		}
	} else if (!strcmp(key, "recover")) {
		if (!strcmp(val, "none"))
			pc->recover = 0;
		else if (!strcmp(val, "reprogram"))
			pc->recover = 1;
		else
			perr(p, "recover: '%s' is not one of none, reprogram", val);
	} else if (!strcmp(key, "tracker_hooks")) {
		if (!strcmp(val, "on-wait"))
			pc->tracker_hooks_always = 0;
		else if (!strcmp(val, "always"))
			pc->tracker_hooks_always = 1;
		else
			perr(p, "tracker_hooks: '%s' is not one of on-wait, always", val);
	} else if (!strcmp(key, "tracker_attach")) {
		if (!strcmp(val, "auto"))
			pc->tracker_attach = CONF_ATTACH_AUTO;
		else if (!strcmp(val, "tcx"))
			pc->tracker_attach = CONF_ATTACH_TCX;
		else if (!strcmp(val, "clsact"))
			pc->tracker_attach = CONF_ATTACH_CLSACT;
		else
			perr(p, "tracker_attach: '%s' is not one of auto, tcx, clsact", val);
	} else if (!strcmp(key, "promisc_capture")) {
		if (util_parse_bool(val, &pc->promisc_capture, e, sizeof(e)) < 0)
			perr(p, "promisc_capture: %s", e);
		pc->promisc_capture |= 2;       /* explicitly set */
	} else if (!strcmp(key, "reprogram_without_loss")) {
		if (util_parse_bool(val, &pc->reprogram_without_loss, e, sizeof(e)) < 0)
			perr(p, "reprogram_without_loss: %s", e);
	} else if (!strcmp(key, "probe")) {
		if (pc->nprobe >= 4)
			perr(p, "probe: at most 4 probes per port");
		else if (!*val)
			perr(p, "probe: empty command");
		else if (set_str(p, pc->probe[pc->nprobe], sizeof(pc->probe[0]), key, val) == 0)
			pc->nprobe++;
	} else if (!strcmp(key, "devlink")) {
		if (!strcmp(val, "auto"))
			pc->devlink = CONF_DEVLINK_AUTO;
		else if (!strcmp(val, "on"))
			pc->devlink = CONF_DEVLINK_ON;
		else if (!strcmp(val, "off"))
			pc->devlink = CONF_DEVLINK_OFF;
		else
			perr(p, "devlink: '%s' is not one of auto, on, off", val);
	} else if (!strcmp(key, "devlink_interval")) {
		if (util_parse_duration(val, &pc->devlink_ns, 100000000ull, 600000000000ull, e,
					sizeof(e)) < 0)
			perr(p, "devlink_interval: %s", e);
	} else if (!strcmp(key, "devlink_diagnose")) {
		devlink_diagnose(p, pc, val);
	} else if (!strcmp(key, "devlink_replies")) {
		set_path(p, pc->devlink_replies, sizeof(pc->devlink_replies) - 32, key, val, 0);
	} else if (!strcmp(key, "devlink_record")) {
		set_path(p, pc->devlink_record, sizeof(pc->devlink_record) - 32, key, val, 0);
	} else if (!strcmp(key, "rdmaqp_interval")) {
		if (util_parse_duration(val, &pc->rdmaqp_ns, 100000000ull, 60000000000ull, e,
					sizeof(e)) < 0)
			perr(p, "rdmaqp_interval: %s", e);
	} else if (!strcmp(key, "rdmaqp_replies")) {
		set_path(p, pc->rdmaqp_replies, sizeof(pc->rdmaqp_replies) - 32, key, val, 0);
	} else if (!strcmp(key, "stats_file")) {
		set_path(p, pc->stats_file, sizeof(pc->stats_file), key, val, 0);
	} else if (!strcmp(key, "info_file")) {
		set_path(p, pc->info_file, sizeof(pc->info_file), key, val, 0);
	} else
		perr(p, "unknown key '%s' in [port %s]", key, pc->name);
}

static void section(struct parser *p, char *hdr)
{
	struct conf *c = p->c;
	char *name;

	p->port = NULL;
	p->peer = NULL;
	p->in_daemon = 0;
	p->in_host = 0;
	p->prod = NULL;
	p->bad_section = 1;         /* until the header proves valid */
	hdr = util_strip(hdr);
	if (!strcmp(hdr, "daemon") || !strcmp(hdr, "host")) {
		p->in_daemon = hdr[0] == 'd';
		p->in_host = hdr[0] == 'h';
		p->bad_section = 0;
		return;
	}
	if (!strncmp(hdr, "producer", 8) && (hdr[8] == ' ' || hdr[8] == '\t')) {
		char e[256];

		if (hostconf_producer_new(&c->host, util_strip(hdr + 8), p->line, &p->prod,
					  e, sizeof(e)) < 0)
			perr(p, "%s", e);
		p->bad_section = !p->prod;
		return;
	}
	if (!strncmp(hdr, "peer", 4) && (hdr[4] == ' ' || hdr[4] == '\t')) {
		char e[256];

		p->peer = peerconf_new(c, util_strip(hdr + 4), p->line, e, sizeof(e));
		if (!p->peer)
			perr(p, "%s", e);
		p->bad_section = !p->peer;
		return;
	}
	if (strncmp(hdr, "port", 4) || (hdr[4] != ' ' && hdr[4] != '\t')) {
		perr(p, "unknown section [%s] (expected [daemon], [port NAME], [peer NAME], "
		     "[host] or [producer NAME])", hdr);
		return;
	}
	name = util_strip(hdr + 4);
	if (name[0] == '"') {
		size_t n = strlen(name);

		if (n < 2 || name[n - 1] != '"') {
			perr(p, "port name %s: unbalanced quote", name);
			return;
		}
		name[n - 1] = 0;
		name++;
	}
	if (!util_valid_name(name, sizeof(p->port->name) - 1)) {
		perr(p, "port name '%s' must be 1-31 characters of [A-Za-z0-9_.-]", name);
		return;
	}
	for (unsigned i = 0; i < c->nports; i++)
		if (!strcmp(c->ports[i].name, name)) {
			perr(p, "port '%s' is already defined at line %u", name,
			     c->ports[i].line);
			return;
		}
	if (c->nports >= MAX_PORTS) {
		perr(p, "too many ports (at most %d)", MAX_PORTS);
		return;
	}
	struct port_conf *np = realloc(c->ports, (c->nports + 1) * sizeof(*np));

	if (!np) {
		perr(p, "out of memory");
		return;
	}
	c->ports = np;
	p->port = &c->ports[c->nports++];
	memset(p->port, 0, sizeof(*p->port));
	util_strlcpy(p->port->name, name, sizeof(p->port->name));
	p->port->line = p->line;
	p->bad_section = 0;
}

static void defaults(struct conf *c, const char *path)
{
	util_strlcpy(c->path, path, sizeof(c->path));
	c->interval_ns = 1000000000ull;
	c->horizon_ns = 120000000000ull;
	util_strlcpy(c->state_dir, "/var/lib/nicstalld", sizeof(c->state_dir));
	util_strlcpy(c->run_dir, "/run/nicstalld", sizeof(c->run_dir));
	c->log_level = LOG_INFO;
	c->flow_interval_ns = 50000000ull;
	c->stall_ns = 200000000ull;
	util_strlcpy(c->flows_dir, "/run/nicstalld/flows", sizeof(c->flows_dir));
	c->cooldown_ns = 10000000000ull;
	c->group_ns = 5000000000ull;
	c->incidents_per_hour = 30;
	c->incident_max_ns = 60000000000ull;
	c->observe_ns = 400000000ull;
	c->observe_every_ns = 10000000ull;
	c->ping_count = 5;
	c->ping_mtu = 1;
	c->capture_ns = 300000000ull;
	c->snaplen = 128;
	c->probe_timeout_ns = 5000000000ull;
	c->reprogram_every_ns = 10000000000ull;
	c->release_wait_ns = 1000000000ull;
	/* The driver's deferred rx-mode work (mlx5e_set_rx_mode_work) is queued
	 * with no delay of its own, on an ordered per-netdev workqueue that also
	 * runs the driver's stats works (firmware commands): usually well under
	 * a millisecond, tens of ms when that queue is busy. Nothing reports
	 * that it ran, so the hold is the only guarantee: 100 ms is many
	 * firmware round trips, and short beside the stall it ends. */
	c->reprogram_hold_ns = 100000000ull;
	/* A lost TCP segment is resent after the RTO with exponential backoff
	 * (tcp_retransmit_timer: 200 ms, 400, 800, 1.6 s, 3.2 s, 6.4 s): 10 s
	 * covers the first five retransmissions of a stall. */
	c->release_wait_max_ns = 10000000000ull;
	c->bundle_max_count = 50;
	c->bundle_max_bytes = 1ull << 30;
	c->hook_timeout_ns = 30000000000ull;
	c->child_memory_max = PROBE_EXEC_DATA_DEFAULT;
	c->metrics_interval_ns = 5000000000ull;
	c->onload_ns = 1000000000ull;
	util_strlcpy(c->vma_dir, "/tmp", sizeof(c->vma_dir));
	util_strlcpy(c->xlio_dir, "/tmp/xlio", sizeof(c->xlio_dir));
	c->vma_ns = 100000000ull;
	c->thread_watch = CONF_TW_AUTO;
	c->thread_share_pct = 50;
	util_strlcpy(c->rules_dir, NICSTALL_DATADIR "/rules", sizeof(c->rules_dir));
	util_strlcpy(c->rules_local_dir, NICSTALL_SYSCONFDIR "/nicstalld/rules.d",
		     sizeof(c->rules_local_dir));
	peerconf_defaults(c);
}

/* One line of f into buf (cap bytes, NUL-terminated, the newline kept):
 * returns the bytes read of it (NUL bytes included), or -1 at the end of the
 * file. A line of more than MAX_LINE characters sets *toolong and is read to
 * its end. */
static ssize_t read_line(FILE *f, char *buf, size_t cap, int *toolong)
{
	size_t n = 0, body = 0;
	int ch = EOF;

	*toolong = 0;
	while ((ch = getc(f)) != EOF) {
		if (n < cap - 1)
			buf[n] = (char)ch;
		n++;
		if (ch == '\n')
			break;
		body++;
	}
	if (!n)
		return -1;
	if (body > MAX_LINE)
		*toolong = 1;
	if (n > cap - 1)
		n = cap - 1;
	buf[n] = '\0';
	return (ssize_t)n;
}

/* A user or group: a name, or a number (no lookup). 0, or -1 when unknown. */
static int lookup_user(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;
	uint64_t v;
	char e[64];

	if (util_parse_u64(name, &v, 0, 0xfffffffeu, e, sizeof(e)) == 0) {
		*uid = (uid_t)v;
		pw = getpwuid(*uid);
		*gid = pw ? pw->pw_gid : (gid_t)v;
		return 0;
	}
	if (!(pw = getpwnam(name)))
		return -1;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int lookup_group(const char *name, gid_t *gid)
{
	struct group *gr;
	uint64_t v;
	char e[64];

	if (util_parse_u64(name, &v, 0, 0xfffffffeu, e, sizeof(e)) == 0) {
		*gid = (gid_t)v;
		return 0;
	}
	if (!(gr = getgrnam(name)))
		return -1;
	*gid = gr->gr_gid;
	return 0;
}

/* Who the children run as (probes/probe_exec.h struct probe_exec_cred).
 * The bundle hook: hook_user (default HOOK_USER_DEFAULT, the unit's own
 * system user from nicstalld.sysusers: nobody is shared with other
 * services, which could then signal or trace the hook), never uid 0, with
 * the group hook_group (default nicstall, the bundles' group, so it reads
 * the bundle; where that group does not exist, the user's own group), never
 * gid 0, no capabilities. Configured probes: probe_user (default nobody:
 * a probe reads what any user may, and holds no secret) with its own group,
 * never gid 0, and no capabilities; probe_user = root is the explicit
 * choice of the daemon's own uid and capabilities. Names are looked up
 * here, at load, never when a child starts (a slow user database must not
 * stall the loop). Only what is used is looked up: no hook, no hook_user
 * needed. */
static void resolve_children(struct parser *p)
{
	struct conf *c = p->c;
	const char *hu = c->hook_user[0] ? c->hook_user : HOOK_USER_DEFAULT;
	const char *pu = c->probe_user[0] ? c->probe_user : "nobody";
	unsigned nprobe = 0;
	uid_t uid;
	gid_t gid;

	for (unsigned i = 0; i < c->nports; i++)
		nprobe += c->ports[i].nprobe;
	c->hook_cred.data_max = c->child_memory_max;
	c->probe_cred.data_max = c->child_memory_max;
	if (!c->bundle_hook[0] && !c->hook_user[0] && !c->hook_group[0])
		goto probes;
	p->line = c->hook_user[0] ? c->hook_user_line : c->bundle_hook_line;
	c->hook_cred.priv = PROBE_EXEC_UNPRIV;
	if (lookup_user(hu, &uid, &gid) < 0)
		perr(p, "%s: no user '%s' on this host%s", c->hook_user[0] ? "hook_user" :
		     "bundle_hook", hu, c->hook_user[0] ? "" : " (hook_user's default: run "
		     "systemd-sysusers to create it from nicstalld.sysusers, or set hook_user = NAME)");
	else if (uid == 0)
		perr(p, "hook_user: '%s' is uid 0: the hook runs unprivileged (name a user "
		     "that can read the bundles through hook_group)", hu);
	else {
		c->hook_cred.uid = uid;
		c->hook_cred.gid = gid;
	}
	p->line = c->hook_group_line;
	if (c->hook_group[0]) {
		if (lookup_group(c->hook_group, &gid) < 0)
			perr(p, "hook_group: no group '%s' on this host", c->hook_group);
		else if (gid == 0)
			perr(p, "hook_group: '%s' is gid 0: the hook runs unprivileged (the bundles' "
			     "group is " CTL_GROUP ")", c->hook_group);
		else
			c->hook_cred.gid = gid;
	} else if (lookup_group(CTL_GROUP, &gid) == 0)
		c->hook_cred.gid = gid;
	else if (c->hook_cred.uid && c->hook_cred.gid == 0)
		/* no group nicstall: the user's own, which must not be root's */
		perr(p, "hook_user: '%s' has gid 0 as its group and there is no group "
		     CTL_GROUP ": set hook_group = NAME (not gid 0)", hu);
probes:
	if (!nprobe && !c->probe_user[0])
		return;
	p->line = c->probe_user_line;
	if (!strcmp(pu, "root")) {
		c->probe_cred.priv = PROBE_EXEC_DAEMON;
	} else if (lookup_user(pu, &uid, &gid) < 0) {
		perr(p, "probe_user: no user '%s' on this host%s", pu,
		     c->probe_user[0] ? "" : " (the default; set probe_user = NAME)");
	} else if (uid == 0) {
		perr(p, "probe_user: '%s' is uid 0: write probe_user = root to run the probes "
		     "with the daemon's privileges", pu);
	} else if (gid == 0) {
		perr(p, "probe_user: '%s' has gid 0 as its group: probes run unprivileged "
		     "(name a user whose group is not root's, or probe_user = root)", pu);
	} else {
		c->probe_cred = (struct probe_exec_cred){ .priv = PROBE_EXEC_UNPRIV, .uid = uid,
							  .gid = gid, .data_max = c->child_memory_max };
	}
	p->line = 0;
}

int conf_load(const char *path, struct conf **out, conf_report_fn report, void *arg)
{
	struct parser p = { .path = path, .report = report, .arg = arg };
	char line[MAX_LINE + 2];
	FILE *f;

	*out = NULL;
	p.c = calloc(1, sizeof(*p.c));
	if (!p.c) {
		perr(&p, "out of memory");
		return p.nerr;
	}
	defaults(p.c, path);
	f = fopen(path, "re");
	if (!f) {
		char msg[PATH_MAX + 128];

		snprintf(msg, sizeof(msg), "%s: cannot open: %s", path, strerror(errno));
		if (report)
			report(msg, arg);
		conf_free(p.c);
		return 1;
	}
	for (;;) {
		char *s, *eq, *key, *val;
		int toolong;
		ssize_t n = read_line(f, line, sizeof(line), &toolong);

		if (n < 0)
			break;
		p.line++;
		if (toolong) {
			perr(&p, "line longer than %d characters", MAX_LINE);
			continue;
		}
		/* fgets() and strlen() would stop at a NUL and drop what follows
		 * it unseen: every byte read is counted, and a NUL is an error */
		if (memchr(line, 0, (size_t)n) != NULL) {
			perr(&p, "NUL byte in line");
			continue;
		}
		s = util_strip(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || *util_strip(e + 1)) {
				perr(&p, "malformed section header '%s'", s);
				p.port = NULL;
				p.peer = NULL;
				p.in_daemon = 0;
				p.in_host = 0;
				p.prod = NULL;
				p.bad_section = 1;
				continue;
			}
			*e = 0;
			section(&p, s + 1);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			perr(&p, "expected 'key = value', got '%s'", s);
			continue;
		}
		*eq = 0;
		key = util_strip(s);
		val = util_strip(eq + 1);
		/* trailing comments: " # ..." */
		for (char *h = val; (h = strchr(h, '#')); h++)
			if (h > val && (h[-1] == ' ' || h[-1] == '\t')) {
				*h = 0;
				val = util_strip(val);
				break;
			}
		if (!*key) {
			perr(&p, "missing key before '='");
			continue;
		}
		if (p.in_daemon)
			daemon_key(&p, key, val);
		else if (p.in_host || p.prod) {
			char e[512];

			if ((p.prod ? hostconf_producer_key(p.prod, key, val, e, sizeof(e)) :
			     hostconf_key(&p.c->host, key, val, e, sizeof(e))) < 0)
				perr(&p, "%s", e);
		}
		else if (p.port)
			port_key(&p, key, val);
		else if (p.peer) {
			char e[512];

			if (peerconf_key(p.peer, key, val, e, sizeof(e)) < 0)
				perr(&p, "%s", e);
			else if (!strcmp(key, "address"))
				warn_ipfilter(&p, "address", val);
		} else if (!p.bad_section)
			perr(&p, "key '%s' outside a [daemon], [port NAME] or [peer NAME] section", key);
	}
	if (ferror(f)) {
		perr(&p, "read error: %s", strerror(errno));
	}
	fclose(f);
	for (unsigned i = 0; i < p.c->nports; i++) {
		struct port_conf *pc = &p.c->ports[i];

		p.line = pc->line;
		if (!pc->ifname[0] && !pc->stats_file[0])
			perr(&p, "port '%s' has no interface (set interface = NAME)", pc->name);
		{
			char e[160];

			if (app_conf_finish(&pc->app, e, sizeof(e)) < 0)
				perr(&p, "port '%s': %s", pc->name, e);
		}
		pc->promisc_capture = (pc->promisc_capture & 2) ? (pc->promisc_capture & 1) : 1;
		/* the tc tracker costs every frame of the port something: by
		 * default it goes only where flows = lines say what to count */
		if (!(pc->track & 0x80u))
			pc->track = TRACK_ENGINE | TRACK_SOCK | (pc->nsel ? TRACK_BPF : 0);
		pc->track &= ~0x80u;
		if (!pc->devlink_diag_set) {    /* vnic with every read, rx every 10 s */
			util_strlcpy(pc->devlink_diag[0], "vnic", sizeof(pc->devlink_diag[0]));
			util_strlcpy(pc->devlink_diag[1], "rx", sizeof(pc->devlink_diag[1]));
			pc->devlink_every[0] = 0;
			pc->devlink_every[1] = 10000000000ull;
			pc->ndiag = 2;
		}
		if (pc->devlink_replies[0] && pc->devlink_record[0])
			perr(&p, "port '%s': devlink_replies and devlink_record exclude each other",
			     pc->name);
		if (pc->peer[0]) {
			unsigned j;

			for (j = 0; j < p.c->nports; j++)
				if (!strcmp(p.c->ports[j].name, pc->peer))
					break;
			if (j == p.c->nports || j == i)
				perr(&p, "port '%s': peer '%s' is not another configured port",
				     pc->name, pc->peer);
		}
		for (unsigned j = 0; j < i; j++)
			if (pc->ifname[0] && !strcmp(pc->ifname, p.c->ports[j].ifname) &&
			    !strcmp(pc->netns, p.c->ports[j].netns))
				perr(&p, "port '%s' watches %s%s%s, already watched by port '%s'",
				     pc->name, pc->ifname, pc->netns[0] ? " in netns " : "",
				     pc->netns, p.c->ports[j].name);
	}
	resolve_children(&p);
	for (unsigned i = 0; i < p.c->host.nprod; i++) {
		char e[256];

		p.line = p.c->host.prod[i].line;
		if (hostconf_producer_finish(&p.c->host.prod[i], e, sizeof(e)) < 0)
			perr(&p, "%s", e);
	}
	for (unsigned i = 0; i < p.c->npeers; i++) {
		char e[PATH_MAX + 256];

		p.line = p.c->peers[i].line;
		if (peerconf_finish(p.c, &p.c->peers[i], e, sizeof(e)) < 0)
			perr(&p, "%s", e);
	}
	if (p.nerr) {
		conf_free(p.c);
		return p.nerr;
	}
	*out = p.c;
	return 0;
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	peerconf_free(c);
	free(c->ports);
	free(c);
}
