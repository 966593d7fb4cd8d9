/* conf_keys: the keys of nicstalld.conf's [daemon] and [port] sections,
 * their values checked and set, and the parser's error report (conf_int.h;
 * nicstalld.conf(5)). */
#include "daemon/conf.h"
#include "daemon/peers/peerconf.h"
#include "daemon/conf_int.h"
#include "collectors/flows/flowsel.h"
#include "daemon/hostconf.h"
#include "lib/ipfilter.h"
#include "lib/log.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

__attribute__((format(printf, 2, 3)))
void conf_perr(struct parser *p, const char *fmt, ...)
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
void conf_warn_ipfilter(struct parser *p, const char *key, const char *addr)
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

uint64_t conf_least_stall_ns(const struct conf *c)
{
	uint64_t least = c->stall_ns;

	for (unsigned i = 0; i < c->nports; i++)
		if (c->ports[i].stall_ns && c->ports[i].stall_ns < least)
			least = c->ports[i].stall_ns;
	return least;
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
		conf_perr(p, "%s: value is longer than %zu characters", key, size - 1);
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
		conf_perr(p, "%s: '%s' is not an absolute path", key, val);
		return -1;
	}
	return set_str(p, dst, size, key, val);
}

void conf_daemon_key(struct parser *p, const char *key, const char *val)
{
	struct conf *c = p->c;
	char e[256];

	if (!strcmp(key, "interval")) {
		if (util_parse_duration(val, &c->interval_ns, 10000000ull,
					60000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "interval: %s", e);
	} else if (!strcmp(key, "horizon")) {
		if (util_parse_duration(val, &c->horizon_ns, 1000000000ull,
					3600000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "horizon: %s", e);
	} else if (!strcmp(key, "state_dir")) {
		set_path(p, c->state_dir, sizeof(c->state_dir), key, val, 0);
	} else if (!strcmp(key, "run_dir")) {
		set_path(p, c->run_dir, sizeof(c->run_dir), key, val, 0);
	} else if (!strcmp(key, "sysfs_root")) {
		set_path(p, c->sysfs_root, sizeof(c->sysfs_root), key, val, 1);
	} else if (!strcmp(key, "flow_interval")) {
		if (util_parse_duration(val, &c->flow_interval_ns, 5000000ull,
					10000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "flow_interval: %s", e);
	} else if (!strcmp(key, "stall_threshold")) {
		if (util_parse_duration(val, &c->stall_ns, 10000000ull,
					600000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "stall_threshold: %s", e);
	} else if (!strcmp(key, "flows_dir")) {
		set_path(p, c->flows_dir, sizeof(c->flows_dir), key, val, 0);
	} else if (!strcmp(key, "incident_cooldown")) {
		if (util_parse_duration(val, &c->cooldown_ns, 0, 86400000000000ull,
					e, sizeof(e)) < 0)
			conf_perr(p, "incident_cooldown: %s", e);
	} else if (!strcmp(key, "incident_window")) {
		if (util_parse_duration(val, &c->group_ns, 0, 600000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "incident_window: %s", e);
	} else if (!strcmp(key, "incident_timeout")) {
		if (util_parse_duration(val, &c->incident_max_ns, 1000000000ull,
					3600000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "incident_timeout: %s", e);
	} else if (!strcmp(key, "incidents_per_hour")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 1, 3600, e, sizeof(e)) < 0)
			conf_perr(p, "incidents_per_hour: %s", e);
		else
			c->incidents_per_hour = (unsigned)v;
	} else if (!strcmp(key, "observe_window")) {
		if (util_parse_duration(val, &c->observe_ns, 10000000ull, 10000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "observe_window: %s", e);
	} else if (!strcmp(key, "observe_interval")) {
		if (util_parse_duration(val, &c->observe_every_ns, 1000000ull, 1000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "observe_interval: %s", e);
	} else if (!strcmp(key, "capture_time")) {
		if (util_parse_duration(val, &c->capture_ns, 10000000ull, 60000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "capture_time: %s", e);
	} else if (!strcmp(key, "probe_timeout")) {
		if (util_parse_duration(val, &c->probe_timeout_ns, 100000000ull, 300000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "probe_timeout: %s", e);
	} else if (!strcmp(key, "run_policy")) {
		if (!strcmp(val, "observe"))
			c->run_policy = RUN_POLICY_OBSERVE;
		else if (!strcmp(val, "recover"))
			c->run_policy = RUN_POLICY_RECOVER;
		else
			conf_perr(p, "run_policy: '%s' is not one of observe, recover", val);
	} else if (!strcmp(key, "reprogram_interval")) {
		if (util_parse_duration(val, &c->reprogram_every_ns, 0, 86400000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "reprogram_interval: %s", e);
	} else if (!strcmp(key, "reprogram_hold")) {
		if (util_parse_duration(val, &c->reprogram_hold_ns, 10000000ull, 5000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "reprogram_hold: %s", e);
	} else if (!strcmp(key, "release_wait_max")) {
		if (util_parse_duration(val, &c->release_wait_max_ns, 100000000ull, 120000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "release_wait_max: %s", e);
	} else if (!strcmp(key, "release_wait")) {
		if (util_parse_duration(val, &c->release_wait_ns, 10000000ull, 60000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "release_wait: %s", e);
	} else if (!strcmp(key, "ping_count")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 0, 64, e, sizeof(e)) < 0)
			conf_perr(p, "ping_count: %s", e);
		else
			c->ping_count = (unsigned)v;
	} else if (!strcmp(key, "ping_mtu")) {
		if (util_parse_bool(val, &c->ping_mtu, e, sizeof(e)) < 0)
			conf_perr(p, "ping_mtu: %s", e);
	} else if (!strcmp(key, "capture_snaplen")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 64, 65535, e, sizeof(e)) < 0)
			conf_perr(p, "capture_snaplen: %s", e);
		else
			c->snaplen = (unsigned)v;
	} else if (!strcmp(key, "bundle_max_count")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 1, 100000, e, sizeof(e)) < 0)
			conf_perr(p, "bundle_max_count: %s", e);
		else
			c->bundle_max_count = (unsigned)v;
	} else if (!strcmp(key, "bundle_max_bytes")) {
		if (util_parse_size(val, &c->bundle_max_bytes, 1u << 20, 1ull << 40, e, sizeof(e)) < 0)
			conf_perr(p, "bundle_max_bytes: %s", e);
	} else if (!strcmp(key, "bundle_hook")) {
		if (set_str(p, c->bundle_hook, sizeof(c->bundle_hook), key, val) == 0)
			c->bundle_hook_line = p->line;
	} else if (!strcmp(key, "child_memory_max")) {
		if (util_parse_size(val, &c->child_memory_max, 16u << 20, 64ull << 30, e,
				    sizeof(e)) < 0)
			conf_perr(p, "child_memory_max: %s", e);
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
			conf_perr(p, "hook_timeout: %s", e);
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
			conf_perr(p, "metrics_interval: %s", e);
	} else if (!strcmp(key, "onload_tools")) {
		set_path(p, c->onload_tools, sizeof(c->onload_tools) - 32, key, val, 1);
	} else if (!strcmp(key, "onload_interval")) {
		if (util_parse_duration(val, &c->onload_ns, 100000000ull, 60000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "onload_interval: %s", e);
	} else if (!strcmp(key, "vma_stats_dir")) {
		set_path(p, c->vma_dir, sizeof(c->vma_dir) - 32, key, val, 0);
	} else if (!strcmp(key, "xlio_stats_dir")) {
		set_path(p, c->xlio_dir, sizeof(c->xlio_dir) - 32, key, val, 0);
	} else if (!strcmp(key, "vma_interval")) {
		if (util_parse_duration(val, &c->vma_ns, 10000000ull, 5000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "vma_interval: %s", e);
	} else if (!strcmp(key, "thread_watch")) {
		if (!strcmp(val, "auto"))
			c->thread_watch = CONF_TW_AUTO;
		else if (!strcmp(val, "on"))
			c->thread_watch = CONF_TW_ON;
		else if (!strcmp(val, "off"))
			c->thread_watch = CONF_TW_OFF;
		else
			conf_perr(p, "thread_watch: '%s' is not one of auto, on, off", val);
	} else if (!strcmp(key, "thread_watch_syscalls")) {
		if (util_parse_bool(val, &c->thread_syscalls, e, sizeof(e)) < 0)
			conf_perr(p, "thread_watch_syscalls: %s", e);
	} else if (!strcmp(key, "thread_sleep_share")) {
		uint64_t v;

		if (util_parse_u64(val, &v, 10, 100, e, sizeof(e)) < 0)
			conf_perr(p, "thread_sleep_share: %s", e);
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
			conf_perr(p, "log_level: '%s' is not one of err, warning, notice, info, debug", val);
		else
			c->log_level = pri[i];
	} else {
		int r = peerconf_daemon_key(c, key, val, e, sizeof(e));

		if (r < 0)
			conf_perr(p, "%s", e);
		else if (r > 0)
			conf_perr(p, "unknown key '%s' in [daemon]", key);
	}
}

/* devlink_diagnose = NAME[:DURATION] ... | none */
static void devlink_diagnose(struct parser *p, struct port_conf *pc, const char *val)
{
	char buf[512], *tok, *save = NULL, e[256];

	pc->ndiag = 0;
	pc->devlink_diag_set = 1;
	if (strlen(val) >= sizeof(buf)) {
		conf_perr(p, "devlink_diagnose: longer than %zu characters", sizeof(buf) - 1);
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
				conf_perr(p, "devlink_diagnose: %s: %s", tok, e);
				continue;
			}
		}
		if (!util_valid_name(tok, 63) || strchr(tok, '/')) {
			conf_perr(p, "devlink_diagnose: '%s' is not a reporter name", tok);
			continue;
		}
		if (pc->ndiag >= CONF_MAX_DIAG) {
			conf_perr(p, "devlink_diagnose: at most %d reporters", CONF_MAX_DIAG);
			return;
		}
		util_strlcpy(pc->devlink_diag[pc->ndiag], tok, sizeof(pc->devlink_diag[0]));
		pc->devlink_every[pc->ndiag++] = every;
	}
}

void conf_port_key(struct parser *p, const char *key, const char *val)
{
	struct port_conf *pc = p->port;
	char e[256];
	uint64_t v;
	int a;

	if ((a = app_conf_key(&pc->app, key, val, e, sizeof(e))) != 0) {
		if (a < 0)
			conf_perr(p, "%s", e);
	} else if (!strcmp(key, "interface")) {
		if (!*val || strlen(val) >= sizeof(pc->ifname) || strchr(val, '/') ||
		    strchr(val, ' '))
			conf_perr(p, "interface: '%s' is not a valid interface name", val);
		else
			util_strlcpy(pc->ifname, val, sizeof(pc->ifname));
	} else if (!strcmp(key, "netns")) {
		if (val[0] != '/' && !util_valid_name(val, 255))
			conf_perr(p, "netns: '%s' is neither a namespace name nor an absolute path", val);
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
			conf_perr(p, "profile: '%s' is not one of mlx5, sfc, generic, auto", val);
	} else if (!strcmp(key, "rdma_device")) {
		if (!strcmp(val, "auto"))
			pc->rdma_dev[0] = 0;
		else if (!util_valid_name(val, sizeof(pc->rdma_dev) - 1))
			conf_perr(p, "rdma_device: '%s' is not a device name", val);
		else
			util_strlcpy(pc->rdma_dev, val, sizeof(pc->rdma_dev));
	} else if (!strcmp(key, "rdma_port")) {
		if (util_parse_u64(val, &v, 1, 255, e, sizeof(e)) < 0)
			conf_perr(p, "rdma_port: %s", e);
		else
			pc->rdma_port = (unsigned)v;
	} else if (!strcmp(key, "flows")) {
		if (pc->nsel >= CONF_MAX_SEL)
			conf_perr(p, "flows: at most %d selectors per port", CONF_MAX_SEL);
		else if (flow_sel_parse(val, &pc->sel[pc->nsel], e, sizeof(e)) < 0)
			conf_perr(p, "flows: %s", e);
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
				conf_perr(p, "track: '%s' is not one of engine, sock, bpf, onload, vma, "
				     "xlio, rdmaqp, none", tok);
		}
		pc->track |= 0x80u;     /* explicitly set (may be none) */
	} else if (!strcmp(key, "stall_threshold")) {
		if (util_parse_duration(val, &pc->stall_ns, 10000000ull,
					600000000000ull, e, sizeof(e)) < 0)
			conf_perr(p, "stall_threshold: %s", e);
	} else if (!strcmp(key, "peer")) {
		if (!util_valid_name(val, sizeof(pc->peer) - 1))
			conf_perr(p, "peer: '%s' is not a port name", val);
		else
			util_strlcpy(pc->peer, val, sizeof(pc->peer));
	} else if (!strcmp(key, "peer_address")) {
		struct in6_addr a;

		if (inet_pton(AF_INET, val, &a) != 1 && inet_pton(AF_INET6, val, &a) != 1)
			conf_perr(p, "peer_address: '%s' is not an IPv4 or IPv6 address", val);
		else {
			util_strlcpy(pc->peer_address, val, sizeof(pc->peer_address));
			conf_warn_ipfilter(p, "peer_address", val);
		}
	} else if (!strcmp(key, "recover")) {
		if (!strcmp(val, "none"))
			pc->recover = 0;
		else if (!strcmp(val, "reprogram"))
			pc->recover = 1;
		else
			conf_perr(p, "recover: '%s' is not one of none, reprogram", val);
	} else if (!strcmp(key, "tracker_hooks")) {
		if (!strcmp(val, "on-wait"))
			pc->tracker_hooks_always = 0;
		else if (!strcmp(val, "always"))
			pc->tracker_hooks_always = 1;
		else
			conf_perr(p, "tracker_hooks: '%s' is not one of on-wait, always", val);
	} else if (!strcmp(key, "sock_liveness")) {
		if (!strcmp(val, "auto"))
			pc->sock_liveness = CONF_SOCK_AUTO;
		else if (!strcmp(val, "events"))
			pc->sock_liveness = CONF_SOCK_EVENTS;
		else if (!strcmp(val, "paced"))
			pc->sock_liveness = CONF_SOCK_PACED;
		else
			conf_perr(p, "sock_liveness: '%s' is not one of auto, events, paced", val);
	} else if (!strcmp(key, "tracker_attach")) {
		if (!strcmp(val, "auto"))
			pc->tracker_attach = CONF_ATTACH_AUTO;
		else if (!strcmp(val, "tcx"))
			pc->tracker_attach = CONF_ATTACH_TCX;
		else if (!strcmp(val, "clsact"))
			pc->tracker_attach = CONF_ATTACH_CLSACT;
		else
			conf_perr(p, "tracker_attach: '%s' is not one of auto, tcx, clsact", val);
	} else if (!strcmp(key, "promisc_capture")) {
		if (util_parse_bool(val, &pc->promisc_capture, e, sizeof(e)) < 0)
			conf_perr(p, "promisc_capture: %s", e);
		pc->promisc_capture |= 2;       /* explicitly set */
	} else if (!strcmp(key, "reprogram_without_loss")) {
		if (util_parse_bool(val, &pc->reprogram_without_loss, e, sizeof(e)) < 0)
			conf_perr(p, "reprogram_without_loss: %s", e);
	} else if (!strcmp(key, "probe")) {
		if (pc->nprobe >= 4)
			conf_perr(p, "probe: at most 4 probes per port");
		else if (!*val)
			conf_perr(p, "probe: empty command");
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
			conf_perr(p, "devlink: '%s' is not one of auto, on, off", val);
	} else if (!strcmp(key, "devlink_interval")) {
		if (util_parse_duration(val, &pc->devlink_ns, 100000000ull, 600000000000ull, e,
					sizeof(e)) < 0)
			conf_perr(p, "devlink_interval: %s", e);
	} else if (!strcmp(key, "devlink_diagnose")) {
		devlink_diagnose(p, pc, val);
	} else if (!strcmp(key, "devlink_replies")) {
		set_path(p, pc->devlink_replies, sizeof(pc->devlink_replies) - 32, key, val, 0);
	} else if (!strcmp(key, "devlink_record")) {
		set_path(p, pc->devlink_record, sizeof(pc->devlink_record) - 32, key, val, 0);
	} else if (!strcmp(key, "rdmaqp_interval")) {
		if (util_parse_duration(val, &pc->rdmaqp_ns, 100000000ull, 60000000000ull, e,
					sizeof(e)) < 0)
			conf_perr(p, "rdmaqp_interval: %s", e);
	} else if (!strcmp(key, "rdmaqp_replies")) {
		set_path(p, pc->rdmaqp_replies, sizeof(pc->rdmaqp_replies) - 32, key, val, 0);
	} else if (!strcmp(key, "stats_file")) {
		set_path(p, pc->stats_file, sizeof(pc->stats_file), key, val, 0);
	} else if (!strcmp(key, "info_file")) {
		set_path(p, pc->info_file, sizeof(pc->info_file), key, val, 0);
	} else
		conf_perr(p, "unknown key '%s' in [port %s]", key, pc->name);
}
