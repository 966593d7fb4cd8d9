/* metrics: Prometheus textfile of the daemon's counters, from the calls
 * of the code that acts and the flight recorders (metrics_int.h: the
 * ports' totals are metrics_ports.c's, the text metrics_render.c's). */
#include "daemon/runs.h"
#include "daemon/metrics.h"
#include "daemon/metrics_int.h"
#include "daemon/conf.h"
#include "daemon/counts.h"
#include "daemon/forensic/facts.h"
#include "daemon/peers/peers.h"
#include "daemon/port.h"
#include "daemon/ports.h"
#include "daemon/recorder.h"
#include "daemon/detect/stall.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- what happened: told by the code that acts (counts.h) ---- */

static void on_incident_opened(void *arg, const char *port, unsigned flows)
{
	struct mport *p = metrics_port(arg, port);

	if (p) {
		p->opened++;
		p->incident_since_fold = 1;
		p->last_incident_real_ns = loop_real_ns();
		p->flow_stalls += flows;
	}
}

static void on_flow_stalled(void *arg, const char *port)
{
	struct mport *p = metrics_port(arg, port);

	if (p)
		p->flow_stalls++;
}

static void on_incident_suppressed(void *arg, const char *port)
{
	struct mport *p = metrics_port(arg, port);

	if (p) {
		p->suppressed++;
		p->flow_stalls++;
	}
}

static void on_flow_released(void *arg, const char *port, int closed)
{
	struct mport *p = metrics_port(arg, port);

	if (p && closed)
		p->closed++;
	else if (p)
		p->released++;
}

static void on_reprogram(void *arg, const char *port, enum count_recov outcome)
{
	struct mport *p = metrics_port(arg, port);

	if (!p)
		return;
	if (outcome == COUNT_RECOV_PERFORMED)
		p->recov_performed++;
	else if (outcome == COUNT_RECOV_FAILED)
		p->recov_failed++;
	else
		p->recov_refused++;
}

static void on_bundle(void *arg, const char *port, int ok, uint64_t incident,
		      const char *verdict, const char *action)
{
	struct metrics *m = arg;
	struct mport *p;

	if (ok)
		m->bundles_written++;
	else
		m->bundles_failed++;
	p = metrics_port(m, port);
	/* an investigation of an incident (a manual bundle has none) */
	if (p && incident) {
		metrics_tally_add(&p->verdicts, verdict);
		metrics_tally_add(&p->releases, action);
		m->incidents++;
		util_strlcpy(m->last_verdict, verdict ? verdict : "unknown",
			     sizeof(m->last_verdict));
		util_strlcpy(m->last_verdict_port, p->name, sizeof(m->last_verdict_port));
	}
}

static void on_hook_result(void *arg, const char *outcome)
{
	struct metrics *m = arg;

	metrics_tally_add(&m->hooks, outcome);
}

static void on_hook_dropped(void *arg)
{
	struct metrics *m = arg;

	m->hook_dropped++;
}

static void on_reload(void *arg, int ok)
{
	struct metrics *m = arg;

	if (ok)
		m->reload_ok++;
	else
		m->reload_failed++;
}

static const struct counts_ops metrics_counts = {
	.incident_opened = on_incident_opened,
	.flow_stalled = on_flow_stalled,
	.incident_suppressed = on_incident_suppressed,
	.flow_released = on_flow_released,
	.reprogram = on_reprogram,
	.bundle = on_bundle,
	.hook_result = on_hook_result,
	.hook_dropped = on_hook_dropped,
	.reload = on_reload,
};

/* ---- the file ---- */

int metrics_write(struct metrics *m, char *err, size_t errlen)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *base, *slash;
	char *txt;
	int dfd, fd, rc = -1;

	if (!m->path[0]) {
		util_errf(err, errlen, "metrics_file is not set");
		return -1;
	}
	slash = strrchr(m->path, '/');
	base = slash + 1;
	snprintf(dir, sizeof(dir), "%.*s", slash == m->path ? 1 : (int)(slash - m->path), m->path);
	/* hidden and without ".prom": the textfile collector never reads it */
	if (!*base || snprintf(tmp, sizeof(tmp), ".%s.tmp", base) >= (int)sizeof(tmp)) {
		util_errf(err, errlen, "metrics_file %s: not a file name", m->path);
		return -1;
	}
	txt = metrics_render(m);
	if (!txt) {
		util_errf(err, errlen, "metrics: out of memory");
		return -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		util_errf(err, errlen, "metrics_file %s: directory %s: %s", m->path, dir,
			  strerror(errno));
		free(txt);
		return -1;
	}
	unlinkat(dfd, tmp, 0);          /* a leftover of a crash */
	fd = fsu_create_excl_at(dfd, tmp, 0644);
	if (fd < 0) {
		util_errf(err, errlen, "metrics_file %s/%s: %s", dir, tmp, strerror(errno));
		goto out;
	}
	/* readable by the collector's user whatever the daemon's umask */
	if (fchmod(fd, 0644) < 0 || fsu_write_all(fd, txt, strlen(txt)) < 0) {
		util_errf(err, errlen, "metrics_file %s/%s: %s", dir, tmp, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	if (close(fd) < 0 || renameat(dfd, tmp, dfd, base) < 0) {
		util_errf(err, errlen, "metrics_file %s: %s", m->path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	rc = 0;
out:
	close(dfd);
	free(txt);
	return rc;
}

static void tick(struct loop_timer *t, void *arg)
{
	struct metrics *m = arg;
	char err[300];

	(void)t;
	if (metrics_write(m, err, sizeof(err)) < 0) {
		/* said once, not every few seconds; again when it changes */
		if (strcmp(err, m->last_err))
			log_warnx("%s (retrying every %.0f s)", err, (double)m->interval_ns / 1e9);
		util_strlcpy(m->last_err, err, sizeof(m->last_err));
	} else if (m->last_err[0]) {
		log_info("metrics: writing %s again", m->path);
		m->last_err[0] = '\0';
	}
}

void metrics_configure(struct metrics *m, const struct conf *c)
{
	m->c = c;
	if (!strcmp(m->path, c->metrics_file) && m->interval_ns == c->metrics_interval_ns)
		return;
	if (m->path[0] && strcmp(m->path, c->metrics_file))
		unlink(m->path);        /* ours: no stale copy left for the collector */
	util_strlcpy(m->path, c->metrics_file, sizeof(m->path));
	m->interval_ns = c->metrics_interval_ns;
	m->last_err[0] = '\0';
	if (!m->path[0]) {
		loop_timer_set(m->timer, 0, 0);
		return;
	}
	loop_timer_set(m->timer, 1000000000ull < m->interval_ns ? 1000000000ull : m->interval_ns,
		       m->interval_ns);
	log_info("metrics: %s every %.0f s", m->path, (double)m->interval_ns / 1e9);
}

struct metrics *metrics_new(struct loop *l, struct ports *ps, struct stall *st,
			    const struct conf *c)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->loop = l;
	m->ports = ps;
	m->stall = st;
	m->start_real_ns = loop_real_ns();
	m->timer = loop_timer_new(l, tick, m);
	if (!m->timer) {
		free(m);
		return NULL;
	}
	loop_timer_name(m->timer, "metrics");
	metrics_configure(m, c);
	counts_set(&metrics_counts, m);
	return m;
}

void metrics_set_rules(struct metrics *m, const struct rules *r)
{
	m->rules = r;
}

void metrics_set_peers(struct metrics *m, const struct peers *p)
{
	m->peers = p;
}

void metrics_set_runs(struct metrics *m, const struct runs *r)
{
	m->runs = r;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	if (counts_is(m))
		counts_set(NULL, NULL);
	/* a stopped daemon exports nothing rather than numbers that look live */
	if (m->path[0])
		unlink(m->path);
	loop_timer_free(m->timer);
	free(m->mp);
	free(m);
}

void metrics_summary(struct metrics *m, char *buf, size_t len)
{
	unsigned up = 0, n = ports_count(m->ports), fl[3] = { 0, 0, 0 }, all = 0;

	for (unsigned i = 0; i < n; i++)
		up += port_state(ports_at(m->ports, i)) == PORT_UP;
	if (m->stall)
		stall_flow_counts(m->stall, NULL, fl);
	all = fl[0] + fl[1] + fl[2];
	snprintf(buf, len, "%u/%u port(s) up, %u flow(s) watched, %u stalled; %" PRIu64
		 " incident(s)%s%s%s%s", up, n, all, fl[2], m->incidents,
		 m->incidents ? ", last " : "", m->incidents ? m->last_verdict : "",
		 m->incidents ? " on " : "", m->incidents ? m->last_verdict_port : "");
}
