/* nicstallctl: talk to nicstalld over its control socket. */
#include "bundle/bundle.h"
#include "bundle/report.h"
#include "lib/ctlproto.h"
#include "lib/json.h"
#include "rules/rules.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET CTL_DEFAULT_RUN_DIR "/" CTL_SOCKET_NAME
#define MAX_REPLY (256u << 20)

static const char *sock_path = DEFAULT_SOCKET;
static const char *state_dir;
static int json_out;

static void usage(FILE *f)
{
	fprintf(f,
"usage: nicstallctl [-s SOCKET] [-j] COMMAND [ARGS]\n"
"commands:\n"
"  status                       ports, sources, sample rate, recorder, memory\n"
"  counters PORT [--changed] [--window SECONDS]\n"
"                               current values, or deltas over a window\n"
"  snapshot [PORT...]           every counter of every source now (JSON)\n"
"  flows [PORT] [--stalled]     live flow table: source, tuple, state, held bytes\n"
"  incident show [ID]           an investigation record (default: the newest)\n"
"  incident list                recent investigations\n"
"  investigate PORT             run the forensic sequence now (root)\n"
"  recover PORT                 receive-filter reprogram now (root)\n"
"  reload                       re-read the configuration (root)\n"
"  snapshot --bundle [PORT...]  write a manual bundle of every counter now (root)\n"
"  bundles                      list the bundles with verdict and size\n"
"  show BUNDLE                  print a bundle's summary and timeline\n"
"  report BUNDLE [-o FILE]      write the bundle's HTML report (- for stdout)\n"
"  verify BUNDLE                check a bundle's checksums and manifest\n"
"  classify BUNDLE [--rules DIR]  re-run the rules on a recorded bundle\n"
"options:\n"
"  -s, --socket PATH            control socket (default " DEFAULT_SOCKET ")\n"
"  -j, --json                   JSON output\n"
"  -S, --state-dir DIR          where bundles are (default: the daemon's, else\n"
"                               /var/lib/nicstalld)\n");
}

static struct json_object *request(struct json_object *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 30 };
	const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct json_object *reply;
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "nicstallctl: socket path %s is too long\n", sock_path);
		exit(2);
	}
	util_strlcpy(sa.sun_path, sock_path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "nicstallctl: cannot connect to %s: %s (is nicstalld running?)\n",
			sock_path, strerror(errno));
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
		fprintf(stderr, "nicstallctl: %s: send: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	for (;;) {
		ssize_t r;

		if (len + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 131072;
			if (cap > MAX_REPLY) {
				fprintf(stderr, "nicstallctl: reply larger than %u bytes\n", MAX_REPLY);
				exit(1);
			}
			buf = realloc(buf, cap);
			if (!buf) {
				fprintf(stderr, "nicstallctl: out of memory\n");
				exit(1);
			}
		}
		r = recv(fd, buf + len, cap - len - 1, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "nicstallctl: %s: %s\n", sock_path,
				errno == EAGAIN ? "no reply within 30 s" : strerror(errno));
			exit(1);
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf || !len) {
		fprintf(stderr, "nicstallctl: %s: empty reply\n", sock_path);
		exit(1);
	}
	buf[len] = 0;
	reply = json_tokener_parse(buf);
	free(buf);
	if (!reply || !json_object_is_type(reply, json_type_object)) {
		fprintf(stderr, "nicstallctl: malformed reply from %s\n", sock_path);
		exit(1);
	}
	return reply;
}

static int check_reply(struct json_object *reply)
{
	struct json_object *ok = jx_get(reply, "ok");

	if (!ok || !json_object_get_boolean(ok)) {
		fprintf(stderr, "nicstallctl: %s\n", jx_text(reply, "error")[0] ?
			jx_text(reply, "error") : "request failed");
		return 1;
	}
	return 0;
}

static void print_json(struct json_object *o)
{
	json_object_object_del(o, "ok");
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED));
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static void print_incidents(struct json_object *incs)
{
	size_t n = incs ? json_object_array_length(incs) : 0;

	if (!n)
		return;
	printf("\n%-5s %-10s %-10s %10s %6s %8s  %s\n", "ID", "PORT", "STATE", "DURATION",
	       "FLOWS", "SIBLINGS", "FIRST FLOW");
	for (size_t i = 0; i < n; i++) {
		struct json_object *inc = json_object_array_get_idx(incs, i);
		struct json_object *fl = jx_get(inc, "flows");
		struct json_object *f0 = fl && json_object_array_length(fl) ?
					 json_object_array_get_idx(fl, 0) : NULL;

		printf("%-5s %-10s %-10s %8.0fms %6zu %8s  %s\n", jx_text(inc, "id"),
		       jx_text(inc, "port"), jx_text(inc, "state"),
		       json_object_get_double(jx_get(inc, "duration_ms")),
		       fl ? json_object_array_length(fl) : 0, jx_text(inc, "siblings_progressing"),
		       f0 ? jx_text(f0, "tuple") : "-");
	}
}

static void print_flows(struct json_object *o)
{
	struct json_object *fl = jx_get(o, "flows");
	size_t n = fl ? json_object_array_length(fl) : 0;

	printf("%-10s %-6s %-48s %-8s %10s %10s %10s %8s %8s %8s\n", "PORT", "SOURCE", "TUPLE",
	       "STATE", "AGE_MS", "TX", "RX", "UNSENT", "UNREAD", "STAGED");
	for (size_t i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(fl, i);
		struct json_object *h = jx_get(f, "held");

		printf("%-10s %-6s %-48s %-8s %10.0f %10s %10s %8s %8s %8s\n", jx_text(f, "port"),
		       jx_text(f, "source"), jx_text(f, "tuple"), jx_text(f, "state"),
		       json_object_get_double(jx_get(f, "progress_age_ms")), jx_text(f, "tx_msgs"),
		       jx_text(f, "rx_msgs"), jx_text(h, "unsent"), jx_text(h, "unread"), jx_text(h, "staged"));
	}
	if (!n)
		printf("(no flows)\n");
}

/* What watching costs: each flow source's share of one core (its polls'
 * CPU time over the last 10 s, the kernel's work included), and the
 * daemon's own total. */
static void print_cost(struct json_object *o)
{
	struct json_object *cost = jx_get(jx_get(o, "flow_sources"), "cost");
	struct json_object *cpu = jx_get(o, "cpu");

	if (jx_len(cost)) {
		printf("\n%-12s %-8s %-12s %6s %10s %12s\n", "FLOWS", "SOURCE", "STATE",
		       "FLOWS", "CPU", "US/POLL");
		for (size_t i = 0; i < jx_len(cost); i++) {
			struct json_object *c = json_object_array_get_idx(cost, i);

			printf("%-12s %-8s %-12s %6s %9.4f%% %12s\n", or_dash(jx_text(c, "port")),
			       jx_text(c, "source"), jx_text(c, "state"), or_dash(jx_text(c, "flows")),
			       json_object_get_double(jx_get(c, "cpu_pct")), jx_text(c, "per_call_us"));
			if (jx_text(c, "error")[0])
				printf("  (%s)\n", jx_text(c, "error"));
		}
	}
	if (cpu)
		printf("\ndaemon: %.3f%% of one core since start (%.2f s of CPU), rss %.1f MiB\n",
		       json_object_get_double(jx_get(cpu, "pct_since_start")),
		       json_object_get_double(jx_get(cpu, "total_s")),
		       (double)jx_u64(cpu, "rss_kib") / 1024.0);
}

static void print_status(struct json_object *o)
{
	struct json_object *ports = jx_get(o, "ports");
	size_t n = ports ? json_object_array_length(ports) : 0;

	printf("nicstalld %s on %s, pid %s, up %.1f s\n", jx_text(o, "version"),
	       jx_text(o, "host"), jx_text(o, "pid"),
	       json_object_get_double(jx_get(o, "uptime_s")));
	printf("config %s, sampling every %.0f ms, horizon %.0f s, recorders %" PRIu64 " KiB\n",
	       jx_text(o, "config"), json_object_get_double(jx_get(o, "interval_ms")),
	       json_object_get_double(jx_get(o, "horizon_s")),
	       json_object_get_uint64(jx_get(o, "recorder_bytes")) / 1024);
	if (jx_text(o, "last_reload_error")[0])
		printf("last reload failed: %s\n", jx_text(o, "last_reload_error"));
	printf("\n%-12s %-12s %-12s %-5s %-8s %-10s %-14s %8s %s\n", "PORT", "INTERFACE",
	       "NETNS", "STATE", "PROFILE", "DRIVER", "FIRMWARE", "SAMPLES", "RECORDER");
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(ports, i);
		struct json_object *rec = jx_get(p, "recorder"), *srcs = jx_get(p, "sources");
		char recs[96];

		snprintf(recs, sizeof(recs), "%s/%s samples, %.1f s, %" PRIu64 " KiB",
			 jx_text(rec, "samples"), jx_text(rec, "capacity"),
			 json_object_get_double(jx_get(rec, "span_s")),
			 json_object_get_uint64(jx_get(rec, "bytes")) / 1024);
		printf("%-12s %-12s %-12s %-5s %-8s %-10s %-14s %8s %s\n", jx_text(p, "name"),
		       or_dash(jx_text(p, "interface")), or_dash(jx_text(p, "netns")),
		       jx_text(p, "state"), jx_text(p, "profile"), or_dash(jx_text(p, "driver")),
		       or_dash(jx_text(p, "firmware")), jx_text(p, "samples"), recs);
		if (jx_text(p, "reason")[0])
			printf("  down: %s\n", jx_text(p, "reason"));
		if (jx_text(p, "psid")[0] || jx_text(p, "rdma_device")[0])
			printf("  psid %s, rdma %s%s%s\n", or_dash(jx_text(p, "psid")),
			       or_dash(jx_text(p, "rdma_device")),
			       jx_text(p, "rdma_port")[0] ? " port " : "", jx_text(p, "rdma_port"));
		for (size_t j = 0; srcs && j < json_object_array_length(srcs); j++) {
			struct json_object *s = json_object_array_get_idx(srcs, j);

			printf("  source %-8s %-11s %5s counters", jx_text(s, "name"),
			       jx_text(s, "state"), jx_text(s, "counters"));
			if (jx_get(s, "cpu_pct"))
				printf("  cpu %.4f%% (%s us/read)",
				       json_object_get_double(jx_get(s, "cpu_pct")),
				       jx_text(s, "per_call_us"));
			if (jx_text(s, "error")[0])
				printf("  (%s)", jx_text(s, "error"));
			printf("\n");
		}
		if (jx_get(rec, "cpu_pct"))
			printf("  recorder          cpu %.4f%% (%s us/sample)\n",
			       json_object_get_double(jx_get(rec, "cpu_pct")),
			       jx_text(rec, "per_call_us"));
	}
	print_cost(o);
	print_incidents(jx_get(o, "incidents"));
}

static void print_record(struct json_object *o)
{
	struct json_object *r = jx_get(o, "record"), *steps = jx_get(r, "steps");
	struct json_object *rel = jx_get(r, "release");

	printf("investigation %s (incident %s, trigger %s) on port %s: %s\n", jx_text(r, "id"),
	       jx_text(r, "incident_id"), jx_text(r, "trigger"), jx_text(r, "port"), jx_text(r, "state"));
	printf("%10s %10s  %-16s %-8s %-10s %s\n", "START_MS", "END_MS", "STEP", "PORT",
	       "OUTCOME", "NOTE");
	for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
		struct json_object *s = json_object_array_get_idx(steps, i);

		printf("%10.1f %10.1f  %-16s %-8s %-10s %s\n",
		       json_object_get_double(jx_get(s, "start_ms")),
		       json_object_get_double(jx_get(s, "end_ms")), jx_text(s, "step"),
		       or_dash(jx_text(s, "port")), jx_text(s, "outcome"), jx_text(s, "note"));
	}
	if (rel)
		printf("released: %s, action %s%s%s%s\n", jx_text(rel, "released"), jx_text(rel, "action"),
		       jx_get(rel, "after_ms") ? ", after " : "", jx_text(rel, "after_ms"),
		       jx_get(rel, "after_ms") ? " ms" : "");
}

static void print_counters(struct json_object *o)
{
	struct json_object *srcs = jx_get(o, "sources");
	int deltas = !strcmp(jx_text(o, "mode"), "deltas");
	size_t w = 8;

	json_object_object_foreach(srcs, sn, sv) {
		(void)sn;
		json_object_object_foreach(sv, cn, cv) {
			(void)cv;
			if (strlen(cn) > w)
				w = strlen(cn);
		}
	}
	if (deltas)
		printf("port %s: deltas over %.3f s\n", jx_text(o, "port"),
		       json_object_get_double(jx_get(o, "span_s")));
	else
		printf("port %s: values\n", jx_text(o, "port"));
	json_object_object_foreach(srcs, sname, sval) {
		printf("[%s]\n", sname);
		json_object_object_foreach(sval, cname, cval) {
			if (deltas) {
				printf("  %-*s +%-19" PRIu64 " %20" PRIu64 "%s%s\n", (int)w, cname,
				       json_object_get_uint64(jx_get(cval, "delta")),
				       json_object_get_uint64(jx_get(cval, "value")),
				       jx_get(cval, "wrapped") ? "  (wrapped)" : "",
				       jx_get(cval, "reset") ? "  (reset)" : "");
			} else
				printf("  %-*s %20" PRIu64 "\n", (int)w, cname,
				       json_object_get_uint64(cval));
		}
	}
}

/* ---- offline bundle tools: they read files, the daemon need not run ---- */

static void state_dir_resolve(char *buf, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (state_dir) {
		util_strlcpy(buf, state_dir, len);
		return;
	}
	util_strlcpy(buf, "/var/lib/nicstalld", len);
	/* ask a running daemon for its state_dir */
	util_strlcpy(sa.sun_path, sock_path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		struct json_object *req = json_object_new_object(), *rep;

		close(fd);
		json_object_object_add(req, "cmd", json_object_new_string("status"));
		rep = request(req);
		json_object_put(req);
		if (jx_text(rep, "state_dir")[0])
			util_strlcpy(buf, jx_text(rep, "state_dir"), len);
		json_object_put(rep);
	} else if (fd >= 0)
		close(fd);
}

/* A bundle argument: a path, or a name under STATE_DIR/bundles. */
static void bundle_path(const char *arg, char *buf, size_t len)
{
	char sd[2048];

	if (strchr(arg, '/') || !access(arg, F_OK)) {
		util_strlcpy(buf, arg, len);
		return;
	}
	state_dir_resolve(sd, sizeof(sd));
	snprintf(buf, len, "%s/bundles/%s", sd, arg);
}

static void list_cb(const char *path, struct json_object *man, uint64_t bytes, void *arg)
{
	struct json_object *arr = arg, *o = json_object_new_object(), *v;
	const char *name = strrchr(path, '/');

	json_object_object_add(o, "name", json_object_new_string(name ? name + 1 : path));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "bytes", json_object_new_uint64(bytes));
	v = man ? jx_get(jx_get(man, "verdict"), "verdict") : NULL;
	json_object_object_add(o, "verdict", json_object_new_string(v ? json_object_get_string(v) :
								      "(unreadable manifest)"));
	json_object_array_add(arr, o);
}

static int cmd_bundles(void)
{
	struct json_object *arr = json_object_new_array();
	char sd[4096];
	int rc;

	state_dir_resolve(sd, sizeof(sd));
	rc = bundle_list(sd, list_cb, arr);
	if (rc < 0) {
		fprintf(stderr, "nicstallctl: bundles in %s/bundles: %s\n", sd, strerror(-rc));
		json_object_put(arr);
		return 1;
	}
	if (json_out)
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY));
	else {
		printf("%-64s %-16s %10s\n", "BUNDLE", "VERDICT", "SIZE");
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *b = json_object_array_get_idx(arr, i);

			printf("%-64s %-16s %9.1fK\n", jx_text(b, "name"), jx_text(b, "verdict"),
			       (double)json_object_get_uint64(jx_get(b, "bytes")) / 1024.0);
		}
		if (!json_object_array_length(arr))
			printf("(no bundles in %s/bundles)\n", sd);
	}
	json_object_put(arr);
	return 0;
}

static void quiet_rules(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

/* Signal definitions for reports: the installed rules when they load,
 * else NULL (the report's built-in copy of the shipped signals). */
static struct rules *report_rules_load(void)
{
	const char *dirs[2] = { RULES_SHIPPED_DIR, RULES_LOCAL_DIR };
	struct rules *r = NULL;

	if (rules_load(dirs, 2, &r, quiet_rules, NULL))
		return NULL;
	return r;
}

static int cmd_show(const char *arg)
{
	char path[4096], err[512];
	struct json_object *man;
	struct report *rep;
	struct rules *ru;
	char *txt;
	size_t n;

	bundle_path(arg, path, sizeof(path));
	if (bundle_load_manifest(path, &man, err, sizeof(err)) < 0) {
		fprintf(stderr, "nicstallctl: %s\n", err);
		return 1;
	}
	if (json_out) {
		printf("%s\n", json_object_to_json_string_ext(man, JSON_C_TO_STRING_PRETTY));
		json_object_put(man);
		return 0;
	}
	json_object_put(man);
	/* a bundle may be hostile: no symbolic link, no FIFO, bounded */
	txt = bundle_read_file(path, "summary.txt", 1u << 20, &n, err, sizeof(err));
	if (!txt) {
		fprintf(stderr, "nicstallctl: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < n; i++)  /* a bundle must not drive the terminal */
		if ((unsigned char)txt[i] < 0x20 && txt[i] != '\n' && txt[i] != '\t')
			txt[i] = '?';
	fwrite(txt, 1, n, stdout);
	free(txt);
	rep = report_load_dir(path, err, sizeof(err));
	if (rep) {
		struct report_opts o = { 0 };
		const char *cs;

		setlocale(LC_CTYPE, "");
		cs = nl_langinfo(CODESET);
		ru = report_rules_load();
		o.rules = ru;
		fputs("\n", stdout);
		report_timeline(rep, &o, cs && !strcmp(cs, "UTF-8"), stdout);
		rules_free(ru);
		report_free(rep);
	}
	printf("\nbundle: %s\n", path);
	return 0;
}

/* The path from directory from to to (both made absolute), with a trailing
 * '/': the evidence links of a report written outside its bundle. */
static void rel_path(const char *from, const char *to, char *out, size_t len)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t common = 0, off = 0;

	if (!realpath(from, a) || !realpath(to, b)) {
		util_strlcpy(out, to, len);
		if (strlen(out) + 2 < len)
			strcat(out, "/");
		return;
	}
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i + 1] == '\0' ? (b[i + 1] == '/' || b[i + 1] == '\0') : a[i + 1] == '/' &&
		    (b[i + 1] == '/' || b[i + 1] == '\0'))
			common = i + 1;
	if (!strcmp(a, "/"))
		common = 0;
	out[0] = '\0';
	for (const char *p = a + common; *p; p++)
		if (*p == '/' && off + 4 < len)
			off += (size_t)snprintf(out + off, len - off, "../");
	snprintf(out + off, len - off, "%s%s", b[common] == '/' ? b + common + 1 : b + common,
		 b[common] ? "/" : "");
}

static int cmd_report(const char *arg, const char *outpath)
{
	char path[4096], err[512], verr[512], note[600], prefix[PATH_MAX + 8], dir[PATH_MAX];
	char tmp[PATH_MAX + 32];
	struct report_opts o = { 0 };
	struct json_object *vm = NULL;
	struct report *rep;
	struct rules *ru;
	const char *name;
	FILE *f;
	int rc, to_stdout = !outpath || !strcmp(outpath, "-");

	if (!outpath && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "nicstallctl: report: standard output is a terminal; write to a "
			"file with -o FILE (-o - forces standard output)\n");
		return 2;
	}
	bundle_path(arg, path, sizeof(path));
	rep = report_load_dir(path, err, sizeof(err));
	if (!rep) {
		fprintf(stderr, "nicstallctl: report: %s\n", err);
		return 1;
	}
	if (bundle_verify(path, &vm, verr, sizeof(verr)) < 0)
		snprintf(note, sizeof(note), "FAILED: %s", verr);
	else
		snprintf(note, sizeof(note), "checksums verified (nicstallctl verify)%s%s",
			 verr[0] ? "; " : "", verr);
	json_object_put(vm);
	name = strrchr(path, '/');
	name = name && name[1] ? name + 1 : path;
	if (to_stdout) {
		util_strlcpy(dir, ".", sizeof(dir));
	} else {
		const char *slash = strrchr(outpath, '/');

		if (slash)
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash == outpath ? 1 : slash - outpath),
				 outpath);
		else
			util_strlcpy(dir, ".", sizeof(dir));
	}
	rel_path(dir, path, prefix, sizeof(prefix));
	if (!strcmp(prefix, "/") || !strcmp(prefix, "./"))
		prefix[0] = '\0';
	ru = report_rules_load();
	o.rules = ru;
	o.link_prefix = prefix;
	o.bundle_name = name;
	o.verify_note = note;
	if (to_stdout) {
		rc = report_html(rep, &o, stdout) < 0 || fflush(stdout) != 0;
	} else {
		/* beside the target, then renamed: never half a report, and a
		 * symbolic link at the target is replaced, not followed */
		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", outpath, (int)getpid());
		f = fopen(tmp, "wx");
		if (!f) {
			fprintf(stderr, "nicstallctl: report: %s: %s\n", tmp, strerror(errno));
			rc = 1;
		} else {
			rc = report_html(rep, &o, f) < 0;
			rc |= fclose(f) != 0;
			if (!rc && rename(tmp, outpath) < 0)
				rc = 1;
			if (rc) {
				fprintf(stderr, "nicstallctl: report: %s: %s\n", outpath, strerror(errno));
				unlink(tmp);
			} else {
				printf("report: %s\n", outpath);
			}
		}
	}
	rules_free(ru);
	report_free(rep);
	return rc;
}

static int cmd_verify(const char *arg)
{
	char path[4096], err[512];
	struct json_object *man = NULL;

	bundle_path(arg, path, sizeof(path));
	if (bundle_verify(path, &man, err, sizeof(err)) < 0) {
		fprintf(stderr, "nicstallctl: verify %s: %s\n", path, err);
		return 1;
	}
	printf("%s: OK (%zu files, schema %s)%s%s\n", path,
	       jx_get(man, "files") ? json_object_array_length(jx_get(man, "files")) : 0,
	       jx_text(man, "schema"), err[0] ? ": " : "", err);
	json_object_put(man);
	return 0;
}

static void report_rules(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

static int cmd_classify(const char *arg, const char *rules_dir)
{
	char path[4096], err[512];
	struct json_object *man, *res, *rec;
	struct rules *r = NULL;
	const char *dirs[2] = { RULES_SHIPPED_DIR, RULES_LOCAL_DIR };
	int same;

	bundle_path(arg, path, sizeof(path));
	if (bundle_load_manifest(path, &man, err, sizeof(err)) < 0) {
		fprintf(stderr, "nicstallctl: %s\n", err);
		return 1;
	}
	if (!jx_get(man, "facts")) {
		fprintf(stderr, "nicstallctl: %s: the manifest holds no facts to classify\n", path);
		json_object_put(man);
		return 1;
	}
	if (rules_dir)
		dirs[0] = rules_dir;
	if (rules_load(dirs, rules_dir ? 1 : 2, &r, report_rules, NULL)) {
		fprintf(stderr, "nicstallctl: classify: invalid rules\n");
		json_object_put(man);
		return 1;
	}
	res = rules_classify(r, jx_get(man, "facts"));
	rec = jx_get(man, "verdict");
	same = rec && !strcmp(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN),
			      json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	if (json_out) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "classification", json_object_get(res));
		json_object_object_add(o, "recorded", json_object_get(rec));
		json_object_object_add(o, "identical", json_object_new_boolean(same));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
		json_object_put(o);
	} else {
		printf("verdict: %s (rule %s)\n%s\n", jx_text(res, "verdict"), or_dash(jx_text(res, "rule")),
		       jx_text(res, "explanation"));
		if (same)
			printf("identical to the recorded classification\n");
		else
			printf("differs from the recorded classification (recorded verdict: %s)\n",
			       rec ? jx_text(rec, "verdict") : "none");
	}
	json_object_put(res);
	json_object_put(man);
	rules_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct json_object *req = json_object_new_object(), *reply;
	const char *cmd;
	int i = 1, rc;

	if (getenv("NICSTALL_SOCKET"))
		sock_path = getenv("NICSTALL_SOCKET");
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			json_out = 1;
		else if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "--socket")) && i + 1 < argc)
			sock_path = argv[++i];
		else if ((!strcmp(argv[i], "-S") || !strcmp(argv[i], "--state-dir")) && i + 1 < argc)
			state_dir = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			json_object_put(req);
			return 0;
		} else {
			fprintf(stderr, "nicstallctl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			goto usage;
		}
	}
	if (i >= argc) {
		usage(stderr);
		goto usage;
	}
	cmd = argv[i++];
	if (!strcmp(cmd, "bundles")) {
		json_object_put(req);
		req = NULL;
		if (i < argc) {
			fprintf(stderr, "nicstallctl: bundles: unexpected argument '%s'\n", argv[i]);
			goto usage;
		}
		return cmd_bundles();
	}
	if (!strcmp(cmd, "show") || !strcmp(cmd, "verify")) {
		json_object_put(req);
		req = NULL;
		if (i + 1 != argc) {
			fprintf(stderr, "nicstallctl: %s: expected one BUNDLE\n", cmd);
			goto usage;
		}
		return !strcmp(cmd, "show") ? cmd_show(argv[i]) : cmd_verify(argv[i]);
	}
	if (!strcmp(cmd, "report")) {
		const char *b = NULL, *out = NULL;

		json_object_put(req);
		req = NULL;
		for (; i < argc; i++) {
			if (!strcmp(argv[i], "-o") && i + 1 < argc)
				out = argv[++i];
			else if ((argv[i][0] == '-' && argv[i][1]) || b) {
				fprintf(stderr, "nicstallctl: report: unexpected argument '%s'\n", argv[i]);
				goto usage;
			} else
				b = argv[i];
		}
		if (!b) {
			fprintf(stderr, "nicstallctl: report: missing BUNDLE\n");
			goto usage;
		}
		return cmd_report(b, out);
	}
	if (!strcmp(cmd, "classify")) {
		const char *b = NULL, *rd = NULL;

		json_object_put(req);
		req = NULL;
		for (; i < argc; i++) {
			if (!strcmp(argv[i], "--rules") && i + 1 < argc)
				rd = argv[++i];
			else if (argv[i][0] == '-' || b) {
				fprintf(stderr, "nicstallctl: classify: unexpected argument '%s'\n", argv[i]);
				goto usage;
			} else
				b = argv[i];
		}
		if (!b) {
			fprintf(stderr, "nicstallctl: classify: missing BUNDLE\n");
			goto usage;
		}
		return cmd_classify(b, rd);
	}
	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	if (!strcmp(cmd, "status") || !strcmp(cmd, "reload")) {
		if (i < argc) {
			fprintf(stderr, "nicstallctl: %s: unexpected argument '%s'\n", cmd, argv[i]);
			goto usage;
		}
	} else if (!strcmp(cmd, "counters")) {
		const char *port = NULL;

		for (; i < argc; i++) {
			if (!strcmp(argv[i], "--changed"))
				json_object_object_add(req, "changed", json_object_new_boolean(1));
			else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
				char *end;
				double w = strtod(argv[++i], &end);

				if (*end || end == argv[i] || !(w > 0) || w > 86400) {
					fprintf(stderr, "nicstallctl: --window: '%s' is not a number of seconds in (0, 86400]\n",
						argv[i]);
					goto usage;
				}
				json_object_object_add(req, "window", json_object_new_double(w));
			} else if (argv[i][0] == '-') {
				fprintf(stderr, "nicstallctl: counters: unknown option '%s'\n", argv[i]);
				goto usage;
			} else if (!port)
				port = argv[i];
			else {
				fprintf(stderr, "nicstallctl: counters: one port at a time ('%s')\n", argv[i]);
				goto usage;
			}
		}
		if (!port) {
			fprintf(stderr, "nicstallctl: counters: missing PORT\n");
			goto usage;
		}
		json_object_object_add(req, "port", json_object_new_string(port));
	} else if (!strcmp(cmd, "flows")) {
		for (; i < argc; i++) {
			if (!strcmp(argv[i], "--stalled"))
				json_object_object_add(req, "stalled", json_object_new_boolean(1));
			else if (argv[i][0] == '-') {
				fprintf(stderr, "nicstallctl: flows: unknown option '%s'\n", argv[i]);
				goto usage;
			} else if (!jx_get(req, "port"))
				json_object_object_add(req, "port", json_object_new_string(argv[i]));
			else {
				fprintf(stderr, "nicstallctl: flows: one port at a time ('%s')\n", argv[i]);
				goto usage;
			}
		}
	} else if (!strcmp(cmd, "incident")) {
		if (i < argc && !strcmp(argv[i], "list")) {
			json_object_object_add(req, "list", json_object_new_boolean(1));
			json_out = 1;
			i++;
		} else if (i < argc && !strcmp(argv[i], "show")) {
			i++;
			if (i < argc) {
				char *end;
				long long id = strtoll(argv[i], &end, 10);

				if (*end || id <= 0) {
					fprintf(stderr, "nicstallctl: incident show: '%s' is not an id\n", argv[i]);
					goto usage;
				}
				json_object_object_add(req, "id", json_object_new_int64(id));
				i++;
			}
		} else {
			fprintf(stderr, "nicstallctl: incident: expected 'show [ID]' or 'list'\n");
			goto usage;
		}
		if (i < argc) {
			fprintf(stderr, "nicstallctl: incident: unexpected argument '%s'\n", argv[i]);
			goto usage;
		}
	} else if (!strcmp(cmd, "investigate") || !strcmp(cmd, "recover")) {
		if (i + 1 != argc) {
			fprintf(stderr, "nicstallctl: %s: expected one PORT\n", cmd);
			goto usage;
		}
		json_object_object_add(req, "port", json_object_new_string(argv[i]));
	} else if (!strcmp(cmd, "snapshot")) {
		struct json_object *ports = json_object_new_array();

		for (; i < argc; i++) {
			if (!strcmp(argv[i], "--bundle")) {
				json_object_object_add(req, "bundle", json_object_new_boolean(1));
				continue;
			}
			if (argv[i][0] == '-') {
				fprintf(stderr, "nicstallctl: snapshot: unknown option '%s'\n", argv[i]);
				goto usage;
			}
			json_object_array_add(ports, json_object_new_string(argv[i]));
		}
		if (json_object_array_length(ports))
			json_object_object_add(req, "ports", ports);
		else
			json_object_put(ports);
		if (!jx_get(req, "bundle"))
			json_out = 1;
	} else {
		fprintf(stderr, "nicstallctl: unknown command '%s'\n", cmd);
		usage(stderr);
		goto usage;
	}
	reply = request(req);
	json_object_put(req);
	rc = check_reply(reply);
	if (!rc) {
		if (json_out)
			print_json(reply);
		else if (!strcmp(cmd, "status"))
			print_status(reply);
		else if (!strcmp(cmd, "counters"))
			print_counters(reply);
		else if (!strcmp(cmd, "flows"))
			print_flows(reply);
		else if (!strcmp(cmd, "incident"))
			print_record(reply);
		else if (!strcmp(cmd, "investigate"))
			printf("investigation %s started\n", jx_text(reply, "id"));
		else if (!strcmp(cmd, "recover")) {
			if (jx_bool(reply, "performed")) {
				printf("port %s: reprogrammed (%s)%s\n", jx_text(reply, "port"),
				       jx_text(reply, "sequence"),
				       jx_bool(jx_get(reply, "kernel_log"), "confirmed") ?
				       ", confirmed by the kernel log" : "");
			} else {
				fprintf(stderr, "nicstallctl: port %s: no reprogram: %s\n",
					jx_text(reply, "port"), jx_str(reply, "refused") ?
					jx_text(reply, "refused") : jx_text(reply, "error"));
				rc = 1;
			}
		}
		else if (!strcmp(cmd, "reload"))
			printf("configuration reloaded\n");
		else if (!strcmp(cmd, "snapshot"))
			printf("bundle %s\n", jx_text(reply, "bundle"));
	}
	json_object_put(reply);
	return rc;
usage:
	json_object_put(req);
	return 2;
}
