/* conf: INI parser for nicstalld.conf: the file, its sections, the
 * defaults and what they resolve to (users, groups); the keys of [daemon]
 * and [port] are conf_keys.c's (conf_int.h). */
#include "daemon/conf.h"
#include "daemon/peers/peerconf.h"
#include "daemon/conf_int.h"
#include "lib/ctlproto.h"
#include "daemon/hostconf.h"
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PORTS 256
#define MAX_LINE 4096

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
			conf_perr(p, "%s", e);
		p->bad_section = !p->prod;
		return;
	}
	if (!strncmp(hdr, "peer", 4) && (hdr[4] == ' ' || hdr[4] == '\t')) {
		char e[256];

		p->peer = peerconf_new(c, util_strip(hdr + 4), p->line, e, sizeof(e));
		if (!p->peer)
			conf_perr(p, "%s", e);
		p->bad_section = !p->peer;
		return;
	}
	if (strncmp(hdr, "port", 4) || (hdr[4] != ' ' && hdr[4] != '\t')) {
		conf_perr(p, "unknown section [%s] (expected [daemon], [port NAME], [peer NAME], "
		     "[host] or [producer NAME])", hdr);
		return;
	}
	name = util_strip(hdr + 4);
	if (name[0] == '"') {
		size_t n = strlen(name);

		if (n < 2 || name[n - 1] != '"') {
			conf_perr(p, "port name %s: unbalanced quote", name);
			return;
		}
		name[n - 1] = 0;
		name++;
	}
	if (!util_valid_name(name, sizeof(p->port->name) - 1)) {
		conf_perr(p, "port name '%s' must be 1-31 characters of [A-Za-z0-9_.-]", name);
		return;
	}
	for (unsigned i = 0; i < c->nports; i++)
		if (!strcmp(c->ports[i].name, name)) {
			conf_perr(p, "port '%s' is already defined at line %u", name,
			     c->ports[i].line);
			return;
		}
	if (c->nports >= MAX_PORTS) {
		conf_perr(p, "too many ports (at most %d)", MAX_PORTS);
		return;
	}
	struct port_conf *np = realloc(c->ports, (c->nports + 1) * sizeof(*np));

	if (!np) {
		conf_perr(p, "out of memory");
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
		conf_perr(p, "%s: no user '%s' on this host%s", c->hook_user[0] ? "hook_user" :
		     "bundle_hook", hu, c->hook_user[0] ? "" : " (hook_user's default: run "
		     "systemd-sysusers to create it from nicstalld.sysusers, or set hook_user = NAME)");
	else if (uid == 0)
		conf_perr(p, "hook_user: '%s' is uid 0: the hook runs unprivileged (name a user "
		     "that can read the bundles through hook_group)", hu);
	else {
		c->hook_cred.uid = uid;
		c->hook_cred.gid = gid;
	}
	p->line = c->hook_group_line;
	if (c->hook_group[0]) {
		if (lookup_group(c->hook_group, &gid) < 0)
			conf_perr(p, "hook_group: no group '%s' on this host", c->hook_group);
		else if (gid == 0)
			conf_perr(p, "hook_group: '%s' is gid 0: the hook runs unprivileged (the bundles' "
			     "group is " CTL_GROUP ")", c->hook_group);
		else
			c->hook_cred.gid = gid;
	} else if (lookup_group(CTL_GROUP, &gid) == 0)
		c->hook_cred.gid = gid;
	else if (c->hook_cred.uid && c->hook_cred.gid == 0)
		/* no group nicstall: the user's own, which must not be root's */
		conf_perr(p, "hook_user: '%s' has gid 0 as its group and there is no group "
		     CTL_GROUP ": set hook_group = NAME (not gid 0)", hu);
probes:
	if (!nprobe && !c->probe_user[0])
		return;
	p->line = c->probe_user_line;
	if (!strcmp(pu, "root")) {
		c->probe_cred.priv = PROBE_EXEC_DAEMON;
	} else if (lookup_user(pu, &uid, &gid) < 0) {
		conf_perr(p, "probe_user: no user '%s' on this host%s", pu,
		     c->probe_user[0] ? "" : " (the default; set probe_user = NAME)");
	} else if (uid == 0) {
		conf_perr(p, "probe_user: '%s' is uid 0: write probe_user = root to run the probes "
		     "with the daemon's privileges", pu);
	} else if (gid == 0) {
		conf_perr(p, "probe_user: '%s' has gid 0 as its group: probes run unprivileged "
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
		conf_perr(&p, "out of memory");
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
			conf_perr(&p, "line longer than %d characters", MAX_LINE);
			continue;
		}
		/* fgets() and strlen() would stop at a NUL and drop what follows
		 * it unseen: every byte read is counted, and a NUL is an error */
		if (memchr(line, 0, (size_t)n) != NULL) {
			conf_perr(&p, "NUL byte in line");
			continue;
		}
		s = util_strip(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || *util_strip(e + 1)) {
				conf_perr(&p, "malformed section header '%s'", s);
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
			conf_perr(&p, "expected 'key = value', got '%s'", s);
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
			conf_perr(&p, "missing key before '='");
			continue;
		}
		if (p.in_daemon)
			conf_daemon_key(&p, key, val);
		else if (p.in_host || p.prod) {
			char e[512];

			if ((p.prod ? hostconf_producer_key(p.prod, key, val, e, sizeof(e)) :
			     hostconf_key(&p.c->host, key, val, e, sizeof(e))) < 0)
				conf_perr(&p, "%s", e);
		}
		else if (p.port)
			conf_port_key(&p, key, val);
		else if (p.peer) {
			char e[512];

			if (peerconf_key(p.peer, key, val, e, sizeof(e)) < 0)
				conf_perr(&p, "%s", e);
			else if (!strcmp(key, "address"))
				conf_warn_ipfilter(&p, "address", val);
		} else if (!p.bad_section)
			conf_perr(&p, "key '%s' outside a [daemon], [port NAME] or [peer NAME] section", key);
	}
	if (ferror(f)) {
		conf_perr(&p, "read error: %s", strerror(errno));
	}
	fclose(f);
	for (unsigned i = 0; i < p.c->nports; i++) {
		struct port_conf *pc = &p.c->ports[i];

		p.line = pc->line;
		if (!pc->ifname[0] && !pc->stats_file[0])
			conf_perr(&p, "port '%s' has no interface (set interface = NAME)", pc->name);
		{
			char e[160];

			if (app_conf_finish(&pc->app, e, sizeof(e)) < 0)
				conf_perr(&p, "port '%s': %s", pc->name, e);
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
			conf_perr(&p, "port '%s': devlink_replies and devlink_record exclude each other",
			     pc->name);
		if (pc->peer[0]) {
			unsigned j;

			for (j = 0; j < p.c->nports; j++)
				if (!strcmp(p.c->ports[j].name, pc->peer))
					break;
			if (j == p.c->nports || j == i)
				conf_perr(&p, "port '%s': peer '%s' is not another configured port",
				     pc->name, pc->peer);
		}
		for (unsigned j = 0; j < i; j++)
			if (pc->ifname[0] && !strcmp(pc->ifname, p.c->ports[j].ifname) &&
			    !strcmp(pc->netns, p.c->ports[j].netns))
				conf_perr(&p, "port '%s' watches %s%s%s, already watched by port '%s'",
				     pc->name, pc->ifname, pc->netns[0] ? " in netns " : "",
				     pc->netns, p.c->ports[j].name);
	}
	resolve_children(&p);
	for (unsigned i = 0; i < p.c->host.nprod; i++) {
		char e[256];

		p.line = p.c->host.prod[i].line;
		if (hostconf_producer_finish(&p.c->host.prod[i], e, sizeof(e)) < 0)
			conf_perr(&p, "%s", e);
	}
	for (unsigned i = 0; i < p.c->npeers; i++) {
		char e[PATH_MAX + 256];

		p.line = p.c->peers[i].line;
		if (peerconf_finish(p.c, &p.c->peers[i], e, sizeof(e)) < 0)
			conf_perr(&p, "%s", e);
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
