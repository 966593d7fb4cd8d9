/* reprogram: a promiscuity crossing of zero each way, held for the
 * driver's deferred work. */
#include "probes/reprogram.h"
#include "lib/fsutil.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/netns.h"
#include "lib/rtnl.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char state_dir[PATH_MAX] = "/run/nicstalld/reprogram";

struct reprogram {
	struct loop *loop;
	struct loop_timer *t;
	int nsfd;                       /* our dup, -1 own namespace */
	int ifindex;
	char ifname[IFNAMSIZ];
	char bus[64];
	unsigned first_flag;            /* the flag the first half sets */
	int phase;                      /* 0 before, 1 held, 2 done */
	int done_called;
	char marker[PATH_MAX];
	struct kmsg *kmsg;
	reprogram_done_fn done;
	void *arg;
	struct reprogram_result res;
};

void reprogram_set_state_dir(const char *dir)
{
	util_strlcpy(state_dir, dir ? dir : "", sizeof(state_dir));
}

int reprogram_plan(int flag, unsigned count)
{
	if (!flag && count == 0)
		return 1;       /* nobody holds it: set, hold, clear */
	if (flag && count == 1)
		return -1;      /* the flag alone holds it: clear, hold, set */
	return 0;               /* others hold it above zero either way */
}

/* ---- markers ---- */

static void marker_write(struct reprogram *r, const char *ns_name)
{
	char body[PATH_MAX + 128], name[64], err[PATH_MAX + 200];
	struct stat st;
	int dfd, n;

	r->marker[0] = 0;
	if (!state_dir[0])
		return;
	if (r->nsfd >= 0 && fstat(r->nsfd, &st) < 0)
		return;
	/* root's directory (run_dir/reprogram, nobody else may write it or
	 * above), the marker replaced through an O_EXCL temporary name */
	dfd = fsu_private_dir(state_dir, 0700, err, sizeof(err));
	if (dfd < 0) {
		log_warnx("reprogram: marker directory: %s", err);
		return;
	}
	snprintf(name, sizeof(name), "%lu-%d", r->nsfd >= 0 ? (unsigned long)st.st_ino : 0ul,
		 r->ifindex);
	n = snprintf(body, sizeof(body),
		     "netns=%s\nifname=%s\nifindex=%d\nflag=%d\npid=%d\nstart=%llu\n",
		     ns_name ? ns_name : "", r->ifname, r->ifindex, r->res.flag_before,
		     (int)getpid(), util_proc_start(getpid()));
	if (fsu_replace_at(dfd, name, body, (size_t)n, 0600) < 0)
		log_warn("reprogram: marker %s/%s", state_dir, name);
	else
		util_errf(r->marker, sizeof(r->marker), "%s/%s", state_dir, name);
	close(dfd);
}

static void marker_remove(struct reprogram *r)
{
	if (r->marker[0])
		unlink(r->marker);
	r->marker[0] = 0;
}

/* The marker name beneath dfd (path for messages): put the flag back as it
 * says, then remove it. Returns 1 when a flag was put back. */
static int restore_one(int dfd, const char *name, const char *path)
{
	char ns[PATH_MAX] = "", ifname[IFNAMSIZ] = "", err[256];
	int ifindex = 0, flag = -1, nsfd = -1, rc = 0, pid = 0, e;
	unsigned long long start = 0;
	struct nl_link l;
	size_t len;
	char *txt = fsu_read_at(dfd, name, PATH_MAX + 256, &len, &e), *line, *save = NULL;

	if (!txt) {
		if (e != ENOENT) {
			log_warnx("reprogram: %s: %s; removed", path, fsu_strerror(e));
			unlinkat(dfd, name, 0);
		}
		return 0;
	}
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "netns=", 6))
			util_strlcpy(ns, line + 6, sizeof(ns));
		else if (!strncmp(line, "ifname=", 7))
			util_strlcpy(ifname, line + 7, sizeof(ifname));
		else if (!strncmp(line, "ifindex=", 8))
			ifindex = atoi(line + 8);
		else if (!strncmp(line, "flag=", 5))
			flag = atoi(line + 5);
		else if (!strncmp(line, "pid=", 4))
			pid = atoi(line + 4);
		else if (!strncmp(line, "start=", 6))
			start = strtoull(line + 6, NULL, 10);
	}
	free(txt);
	/* a daemon that is still running is in the middle of its own hold;
	 * a live pid that started at another time is a reused pid */
	if (pid > 0 && pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM) &&
	    (!start || util_proc_start(pid) == start))
		return 0;
	if (ifindex <= 0 || (flag != 0 && flag != 1)) {
		log_warnx("reprogram: %s: not a marker; removed", path);
		unlinkat(dfd, name, 0);
		return 0;
	}
	if (ns[0] && (nsfd = netns_open(ns)) < 0) {
		log_info("reprogram: %s: namespace %s is gone; nothing to restore", path, ns);
		unlinkat(dfd, name, 0);
		return 0;
	}
	if (nl_link_get(nsfd, NULL, ifindex, &l, err, sizeof(err)) == 0 &&
	    !strcmp(l.ifname, ifname)) {
		if (!!(l.flags & IFF_PROMISC) != flag &&
		    nl_link_set_flags(nsfd, ifindex, flag ? IFF_PROMISC : 0, IFF_PROMISC,
				      err, sizeof(err)) == 0) {
			log_warnx("reprogram: %s%s%s: promiscuous flag put back %s (a reprogram "
				  "was cut short)", ifname, ns[0] ? " in netns " : "", ns,
				  flag ? "on" : "off");
			rc = 1;
		}
	}
	if (nsfd >= 0)
		close(nsfd);
	unlinkat(dfd, name, 0);
	return rc;
}

int reprogram_restore_stale(void)
{
	char err[PATH_MAX + 200];
	struct dirent *e;
	int n = 0, dfd;
	DIR *d;

	if (!state_dir[0] || access(state_dir, F_OK) < 0)
		return 0;
	/* markers steer root's netlink calls: only from root's own directory */
	dfd = fsu_private_dir(state_dir, 0700, err, sizeof(err));
	if (dfd < 0) {
		log_warnx("reprogram: markers not read: %s", err);
		return 0;
	}
	d = fsu_opendir_fd(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX + 256];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", state_dir, e->d_name);
		/* fsu_replace_at's temporaries (".NAME.tmp") a crash left */
		if (e->d_name[0] == '.') {
			if (strstr(e->d_name, ".tmp"))
				unlinkat(dfd, e->d_name, 0);
			continue;
		}
		n += restore_one(dfd, e->d_name, path);
	}
	closedir(d);
	close(dfd);
	return n;
}

/* ---- the sequence ---- */

static void read_kmsg(struct reprogram *r)
{
	if (r->kmsg)
		kmsg_read_promisc(r->kmsg, r->ifname, r->bus[0] ? r->bus : NULL, r->res.kline,
				  REPROGRAM_KLINES, &r->res.nkline);
}

/* Set the flag to f; the count afterwards in *count. 0 or -1 with error. */
static int set_flag(struct reprogram *r, unsigned f, unsigned *count)
{
	struct nl_link l;
	char err[256];

	if (nl_link_set_flags(r->nsfd, r->ifindex, f, IFF_PROMISC, err, sizeof(err)) < 0) {
		util_errf(r->res.error, sizeof(r->res.error), "kernel refused: %s", err);
		return -1;
	}
	if (nl_link_get(r->nsfd, NULL, r->ifindex, &l, err, sizeof(err)) < 0) {
		util_errf(r->res.error, sizeof(r->res.error), "%s", err);
		return -1;
	}
	*count = l.promiscuity;
	return 0;
}

static void finish(struct reprogram *r)
{
	r->phase = 2;
	r->res.end_ns = loop_mono_ns();
	read_kmsg(r);
	if (r->res.performed) {
		int on = 0, off = 0;

		for (size_t i = 0; i < r->res.nkline; i++)
			r->res.kline[i].entered ? on++ : off++;
		r->res.confirmed = on && off;
	}
	kmsg_close(r->kmsg);
	r->kmsg = NULL;
	marker_remove(r);
	loop_timer_set(r->t, 0, 0);
	if (!r->done_called) {
		r->done_called = 1;
		r->done(r, r->arg);
	}
}

static void second_half(struct reprogram *r)
{
	unsigned orig = r->res.flag_before ? IFF_PROMISC : 0;

	r->res.second_ns = loop_mono_ns();
	if (set_flag(r, orig, &r->res.count_after) == 0) {
		r->res.restored = 1;
		/* both crossings happened when the count went 0 -> 1 -> 0 (or
		 * 1 -> 0 -> 1); another holder coming meanwhile breaks it */
		r->res.performed = r->first_flag ?
			(r->res.count_before == 0 && r->res.count_held == 1 && r->res.count_after == 0) :
			(r->res.count_before == 1 && r->res.count_held == 0 && r->res.count_after == 1);
		if (!r->res.performed && !r->res.error[0])
			util_errf(r->res.error, sizeof(r->res.error),
				  "promiscuity went %u -> %u -> %u: another holder came or went "
				  "during the hold", r->res.count_before, r->res.count_held,
				  r->res.count_after);
	} else {
		/* try once more to put the flag back */
		char e[256];

		r->res.restored = nl_link_set_flags(r->nsfd, r->ifindex, orig, IFF_PROMISC,
						    e, sizeof(e)) == 0;
	}
	finish(r);
}

static void tick(struct loop_timer *t, void *arg)
{
	struct reprogram *r = arg;

	(void)t;
	if (r->phase == 1) {
		read_kmsg(r);
		second_half(r);
	} else if (r->phase == 0)
		finish(r);      /* refused: done from the loop */
}

struct reprogram *reprogram_start(struct loop *l, int nsfd, const char *ns_name,
				  const char *ifname, const char *bus, uint64_t hold_ns,
				  reprogram_done_fn done, void *arg, char *err, size_t errlen)
{
	struct reprogram *r = calloc(1, sizeof(*r));
	struct nl_link link;
	char e[256];
	int plan;

	if (!r || !ifname || strlen(ifname) >= IFNAMSIZ) {
		free(r);
		util_errf(err, errlen, "reprogram: %s", r ? "bad interface name" : "out of memory");
		return NULL;
	}
	r->loop = l;
	r->done = done;
	r->arg = arg;
	r->nsfd = -1;
	r->res.hold_ns = hold_ns;
	util_strlcpy(r->ifname, ifname, sizeof(r->ifname));
	util_strlcpy(r->bus, bus ? bus : "", sizeof(r->bus));
	if (nl_link_get(nsfd, ifname, 0, &link, e, sizeof(e)) < 0) {
		util_errf(err, errlen, "%s", e);
		free(r);
		return NULL;
	}
	if (!(link.flags & IFF_UP) || !(link.flags & IFF_RUNNING)) {
		util_errf(err, errlen, "link %s is down", ifname);
		free(r);
		return NULL;
	}
	if (!link.have_promiscuity) {
		util_errf(err, errlen, "%s: the kernel does not report IFLA_PROMISCUITY", ifname);
		free(r);
		return NULL;
	}
	if (nsfd >= 0 && (r->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		util_errf(err, errlen, "reprogram: dup: %s", strerror(errno));
		free(r);
		return NULL;
	}
	r->t = loop_timer_new(l, tick, r);
	if (!r->t) {
		util_errf(err, errlen, "reprogram: timer: %s", strerror(errno));
		reprogram_free(r);
		return NULL;
	}
	loop_timer_name(r->t, "probe");
	r->ifindex = link.ifindex;
	r->res.flag_before = !!(link.flags & IFF_PROMISC);
	r->res.count_before = link.promiscuity;
	r->res.start_ns = loop_mono_ns();
	plan = reprogram_plan(r->res.flag_before, link.promiscuity);
	if (plan == 0) {
		char who[400];
		unsigned others;

		if (pholders_find(r->nsfd, r->ifindex, &r->res.holders, e, sizeof(e)) < 0)
			log_debug("reprogram: %s: %s", ifname, e);
		others = link.promiscuity - (unsigned)r->res.flag_before;
		others = others > r->res.holders.n ? others - r->res.holders.n : 0;
		r->res.other_holders = others;
		pholders_text(&r->res.holders, who, sizeof(who));
		util_errf(r->res.refused, sizeof(r->res.refused),
			  "no crossing of zero is possible: promiscuity %u with the flag %s; "
			  "held by %s%s%s", link.promiscuity, r->res.flag_before ? "on" : "off",
			  who[0] ? who : "", who[0] && others ? " and " : "",
			  others ? "a kernel user (bridge, bond, macvlan...)" :
			  who[0] ? "" : "holders that could not be named");
		loop_timer_set(r->t, 1, 0);     /* done from the loop */
		return r;
	}
	r->kmsg = kmsg_open(r->res.kmsg_error, sizeof(r->res.kmsg_error));
	r->res.kmsg_readable = r->kmsg != NULL;
	r->first_flag = plan > 0 ? IFF_PROMISC : 0;
	snprintf(r->res.sequence, sizeof(r->res.sequence), "promisc %s, hold %llu ms, promisc %s",
		 plan > 0 ? "on" : "off", (unsigned long long)(hold_ns / 1000000),
		 plan > 0 ? "off" : "on");
	marker_write(r, ns_name);
	r->res.first_ns = loop_mono_ns();
	if (set_flag(r, r->first_flag, &r->res.count_held) < 0) {
		char e2[256];

		nl_link_set_flags(r->nsfd, r->ifindex, r->res.flag_before ? IFF_PROMISC : 0,
				  IFF_PROMISC, e2, sizeof(e2));
		r->res.restored = 1;
		loop_timer_set(r->t, 1, 0);
		return r;
	}
	r->phase = 1;
	loop_timer_set(r->t, hold_ns ? hold_ns : 1, 0);
	return r;
}

const struct reprogram_result *reprogram_result(const struct reprogram *r)
{
	return &r->res;
}

void reprogram_free(struct reprogram *r)
{
	if (!r)
		return;
	if (r->phase == 1) {
		char e[256];

		/* cut short: the flag goes back now */
		nl_link_set_flags(r->nsfd, r->ifindex, r->res.flag_before ? IFF_PROMISC : 0,
				  IFF_PROMISC, e, sizeof(e));
	}
	marker_remove(r);
	kmsg_close(r->kmsg);
	loop_timer_free(r->t);
	if (r->nsfd >= 0)
		close(r->nsfd);
	free(r);
}

int reprogram_to_json(const struct reprogram *r, struct json_object *o)
{
	const struct reprogram_result *x = &r->res;
	struct json_object *p = json_object_new_object(), *k = json_object_new_object();
	struct json_object *lines = json_object_new_array();

	jx_add_bool(o, "performed", x->performed);
	if (x->sequence[0])
		jx_add_str(o, "sequence", x->sequence);
	jx_add_bool(o, "was_promisc", x->flag_before);
	jx_add_u64(p, "before", x->count_before);
	if (x->first_ns)
		jx_add_u64(p, "held", x->count_held);
	if (x->second_ns)
		jx_add_u64(p, "after", x->count_after);
	json_object_object_add(o, "promiscuity", p);
	json_object_object_add(o, "hold_ms", jx_new_fixed((double)x->hold_ns / 1e6, 1));
	jx_add_u64(o, "start_mono_ns", x->start_ns);
	if (x->first_ns)
		jx_add_u64(o, "first_mono_ns", x->first_ns);
	if (x->second_ns)
		jx_add_u64(o, "second_mono_ns", x->second_ns);
	jx_add_u64(o, "end_mono_ns", x->end_ns);
	jx_add_bool(o, "restored", x->restored || !x->first_ns);
	if (x->first_ns) {
		jx_add_bool(k, "readable", x->kmsg_readable);
		if (!x->kmsg_readable)
			jx_add_str(k, "error", x->kmsg_error);
		for (size_t i = 0; i < x->nkline; i++)
			json_object_array_add(lines, json_object_new_string(x->kline[i].text));
		json_object_object_add(k, "lines", lines);
		jx_add_bool(k, "confirmed", x->confirmed);
		json_object_object_add(o, "kernel_log", k);
	} else {
		json_object_put(k);
		json_object_put(lines);
	}
	if (x->refused[0]) {
		jx_add_str(o, "refused", x->refused);
		json_object_object_add(o, "holders", pholders_json(&x->holders));
		if (x->other_holders)
			jx_add_u64(o, "other_holders", x->other_holders);
	}
	if (x->error[0])
		jx_add_str(o, "error", x->error);
	return 0;
}
