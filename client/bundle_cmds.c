/* bundle_cmds: the offline bundle tools; they read files, the daemon need
 * not run. Bundles are readable by root and group nicstall. */
#include "bundle/bundle.h"
#include "bundle/report.h"
#include "client/client.h"
#include "lib/ctlproto.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/rules.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* After a message that says access was refused: who may read bundles. */
static const char *access_hint(const char *msg)
{
	return strstr(msg, strerror(EACCES)) ? " (bundles are readable by root and members of "
					       "group '" CTL_GROUP "')" : "";
}

/* A bundle argument: a path when it holds a '/', else a name in
 * STATE_DIR/bundles only, never a look-alike in the working directory
 * (bundle_locate). EXIT_OK, or EXIT_FAIL with the message printed. */
static int bundle_path(struct cli *c, const char *arg, char *buf, size_t len)
{
	char sd[2048] = "", err[512];

	if (!strchr(arg, '/'))
		cli_state_dir(c, sd, sizeof(sd));
	if (bundle_locate(sd, arg, buf, len, err, sizeof(err)) < 0)
		return cli_error("%s", err);
	return EXIT_OK;
}

static int one_bundle(struct cli *c)
{
	if (c->nargs != 1)
		return cli_usage_error("%s: expected one BUNDLE%s%s%s", c->cmd,
				       c->nargs > 1 ? " (not '" : "", c->nargs > 1 ? c->args[1] : "",
				       c->nargs > 1 ? "')" : "");
	return EXIT_OK;
}

/* The one BUNDLE argument, resolved into buf (bundle_path). */
static int bundle_arg(struct cli *c, char *buf, size_t len)
{
	int rc = one_bundle(c);

	return rc ? rc : bundle_path(c, c->args[0], buf, len);
}

/* ---- bundles ---- */

/* What the listing gathers: the bundles, and with --incident only those
 * of HOST:ID and the peer bundles their manifests announce. */
struct listing {
	struct json_object *arr, *announced;
	const char *host;               /* NULL: every bundle */
	uint64_t id;
};

static void list_cb(const char *path, struct json_object *man, uint64_t bytes, void *arg)
{
	struct listing *ls = arg;
	struct json_object *o, *v;
	const char *name = strrchr(path, '/');

	if (ls->host && !bundle_of_incident(man, ls->host, ls->id))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(name ? name + 1 : path));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "bytes", json_object_new_uint64(bytes));
	v = man ? jx_get(jx_get(man, "verdict"), "verdict") : NULL;
	json_object_object_add(o, "verdict", json_object_new_string(v ? json_object_get_string(v) :
								      "(unreadable manifest)"));
	json_object_array_add(ls->arr, o);
	if (ls->host) {
		struct json_object *an = bundle_incident_announced(man);

		for (size_t i = 0; i < jx_len(an); i++)
			json_object_array_add(ls->announced,
					      json_object_get(json_object_array_get_idx(an, i)));
		json_object_put(an);
	}
}

/* Drop the announced peer bundles that are here too (a peer's bundle
 * copied beside the origin's): each is shown once. */
static void drop_local(struct listing *ls)
{
	struct json_object *keep = json_object_new_array(), *here = json_object_new_object();

	/* the names here as a set: manifests (hostile) announce any number */
	for (size_t j = 0; j < jx_len(ls->arr); j++)
		json_object_object_add(here, jx_text(json_object_array_get_idx(ls->arr, j), "name"),
				       NULL);
	for (size_t i = 0; i < jx_len(ls->announced); i++) {
		struct json_object *a = json_object_array_get_idx(ls->announced, i);

		if (!json_object_object_get_ex(here, jx_text(a, "bundle"), NULL))
			json_object_array_add(keep, json_object_get(a));
	}
	json_object_put(here);
	json_object_put(ls->announced);
	ls->announced = keep;
}

int cmd_bundles(struct cli *c)
{
	struct listing ls = { 0 };
	char sd[4096], bd[4200], host[256], err[512];
	struct stat st;
	int rc, none = 0;

	if (c->nargs)
		return cli_usage_error("bundles: unexpected argument '%s'", c->args[0]);
	if (c->incident) {
		if (bundle_incident_parse(c->incident, host, sizeof(host), &ls.id, err,
					  sizeof(err)) < 0)
			return cli_usage_error("bundles: --incident: %s", err);
		ls.host = host;
	}
	cli_state_dir(c, sd, sizeof(sd));
	/* a state directory that is not there is an error; one where no
	 * bundle was written yet has none */
	if (stat(sd, &st) < 0)
		return cli_error("state directory %s: %s%s", sd, strerror(errno),
				 access_hint(strerror(errno)));
	if (!S_ISDIR(st.st_mode))
		return cli_error("state directory %s: not a directory", sd);
	snprintf(bd, sizeof(bd), "%s/bundles", sd);
	if (stat(bd, &st) < 0 && errno == ENOENT) {
		none = 1;
	} else {
		/* say why it cannot be read before the listing tries */
		DIR *d = opendir(bd);

		if (!d)
			return cli_error("bundles in %s: %s%s", bd, strerror(errno),
					 access_hint(strerror(errno)));
		closedir(d);
	}
	ls.arr = json_object_new_array();
	ls.announced = json_object_new_array();
	rc = none ? 0 : bundle_list(sd, list_cb, &ls);
	if (rc < 0) {
		json_object_put(ls.arr);
		json_object_put(ls.announced);
		return cli_error("bundles in %s: cannot be listed", bd);
	}
	drop_local(&ls);
	if (c->json && ls.host) {
		struct json_object *o = json_object_new_object();

		jx_add_str(o, "incident", c->incident);
		json_object_object_add(o, "bundles", json_object_get(ls.arr));
		json_object_object_add(o, "peer_bundles", json_object_get(ls.announced));
		cli_print_json(o);
		json_object_put(o);
	} else if (c->json) {
		cli_print_json(ls.arr);
	} else {
		printf("%-64s %-16s %10s\n", "BUNDLE", "VERDICT", "SIZE");
		for (size_t i = 0; i < json_object_array_length(ls.arr); i++) {
			struct json_object *b = json_object_array_get_idx(ls.arr, i);

			printf("%-64s %-16s %9.1fK\n", jx_text(b, "name"), jx_text(b, "verdict"),
			       (double)json_object_get_uint64(jx_get(b, "bytes")) / 1024.0);
		}
		if (!json_object_array_length(ls.arr))
			printf(ls.host ? "(no bundle of incident %s in %s)\n" : "(no bundles in %s%s)\n",
			       ls.host ? c->incident : bd, ls.host ? bd : "");
		for (size_t i = 0; i < jx_len(ls.announced); i++) {
			struct json_object *a = json_object_array_get_idx(ls.announced, i);

			printf("%-64s %-16s %10s\n", jx_text(a, "bundle"), "peer-snapshot", "-");
			printf("  on peer %s%s%s (announced in the origin's manifest)\n",
			       jx_text(a, "peer"), jx_text(a, "host")[0] ? ", host " : "",
			       jx_text(a, "host"));
		}
	}
	json_object_put(ls.arr);
	json_object_put(ls.announced);
	return EXIT_OK;
}

/* ---- show, report ---- */

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

int cmd_show(struct cli *c)
{
	char path[4096], err[512];
	struct json_object *man;
	struct report *rep;
	struct rules *ru;
	char *txt;
	size_t n;
	int rc = bundle_arg(c, path, sizeof(path));

	if (rc)
		return rc;
	if (bundle_load_manifest(path, &man, err, sizeof(err)) < 0)
		return cli_error("%s%s", err, access_hint(err));
	if (c->json) {
		cli_print_json(man);
		json_object_put(man);
		return EXIT_OK;
	}
	json_object_put(man);
	/* a bundle may be hostile: no symbolic link, no FIFO, bounded */
	txt = bundle_read_file(path, "summary.txt", 1u << 20, &n, err, sizeof(err));
	if (!txt)
		return cli_error("%s", err);
	util_term_put(stdout, txt, n, SIZE_MAX, 1);     /* a bundle must not drive the terminal */
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
	return EXIT_OK;
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

int cmd_report(struct cli *c)
{
	char path[4096], err[512], verr[512], note[600], prefix[PATH_MAX + 8], dir[PATH_MAX];
	char tmp[PATH_MAX + 32];
	const char *outpath = c->output, *name;
	struct report_opts o = { 0 };
	struct json_object *vm = NULL;
	struct report *rep;
	struct rules *ru;
	int rc = one_bundle(c), verified, to_stdout = !outpath || !strcmp(outpath, "-");
	FILE *f;

	if (rc)
		return rc;
	if (c->json && to_stdout)
		return cli_usage_error("report -j: the HTML goes to a file (-o FILE), the JSON to "
				       "standard output");
	if (!outpath && isatty(STDOUT_FILENO))
		return cli_usage_error("report: standard output is a terminal; write to a file with "
				       "-o FILE (-o - forces standard output)");
	if (bundle_path(c, c->args[0], path, sizeof(path)) != EXIT_OK)
		return EXIT_FAIL;
	rep = report_load_dir(path, err, sizeof(err));
	if (!rep)
		return cli_error("report: %s%s", err, access_hint(err));
	verified = bundle_verify(path, &vm, verr, sizeof(verr)) == 0;
	if (!verified)
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
			rc = cli_error("report: %s: %s", tmp, strerror(errno));
		} else {
			rc = report_html(rep, &o, f) < 0;
			rc |= fclose(f) != 0;
			if (!rc && rename(tmp, outpath) < 0)
				rc = 1;
			if (rc) {
				cli_error("report: %s: %s", outpath, strerror(errno));
				unlink(tmp);
			} else if (c->json) {
				struct json_object *j = json_object_new_object();

				jx_add_str(j, "report", outpath);
				jx_add_str(j, "bundle", path);
				jx_add_bool(j, "verified", verified);
				jx_add_str(j, "verify_note", note);
				cli_print_json(j);
				json_object_put(j);
			} else {
				printf("report: %s\n", outpath);
			}
		}
	}
	rules_free(ru);
	report_free(rep);
	return rc ? EXIT_FAIL : EXIT_OK;
}

/* ---- verify, classify ---- */

int cmd_verify(struct cli *c)
{
	char path[4096], err[512];
	struct json_object *man = NULL;
	size_t nfiles;
	int rc = bundle_arg(c, path, sizeof(path));

	if (rc)
		return rc;
	if (bundle_verify(path, &man, err, sizeof(err)) < 0) {
		json_object_put(man);
		return cli_error("verify %s: %s%s", path, err, access_hint(err));
	}
	nfiles = jx_len(jx_get(man, "files"));
	if (c->json) {
		struct json_object *j = json_object_new_object();

		jx_add_str(j, "bundle", path);
		jx_add_bool(j, "verified", 1);
		jx_add_u64(j, "files", nfiles);
		json_object_object_add(j, "schema", json_object_get(jx_get(man, "schema")));
		if (err[0])
			jx_add_str(j, "note", err);
		cli_print_json(j);
		json_object_put(j);
	} else {
		printf("%s: OK (%zu files, schema %s)%s%s\n", path, nfiles, jx_text(man, "schema"),
		       err[0] ? ": " : "", err);
	}
	json_object_put(man);
	return EXIT_OK;
}

static void report_rules(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

int cmd_classify(struct cli *c)
{
	char path[4096], err[512];
	struct json_object *man, *res, *rec;
	struct rules *r = NULL;
	const char *dirs[2] = { RULES_SHIPPED_DIR, RULES_LOCAL_DIR };
	int same, rc = bundle_arg(c, path, sizeof(path));

	if (rc)
		return rc;
	if (bundle_load_manifest(path, &man, err, sizeof(err)) < 0)
		return cli_error("%s%s", err, access_hint(err));
	if (!jx_get(man, "facts")) {
		json_object_put(man);
		return cli_error("%s: the manifest holds no facts to classify", path);
	}
	if (c->rules_dir)
		dirs[0] = c->rules_dir;
	if (rules_load(dirs, c->rules_dir ? 1 : 2, &r, report_rules, NULL)) {
		json_object_put(man);
		return cli_error("classify: invalid rules");
	}
	res = rules_classify(r, jx_get(man, "facts"));
	rec = jx_get(man, "verdict");
	same = rec && !strcmp(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN),
			      json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	if (c->json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "classification", json_object_get(res));
		json_object_object_add(o, "recorded", json_object_get(rec));
		json_object_object_add(o, "identical", json_object_new_boolean(same));
		cli_print_json(o);
		json_object_put(o);
	} else {
		printf("verdict: %s (rule %s)\n%s\n", jx_text(res, "verdict"),
		       cli_dash(jx_text(res, "rule")), jx_text(res, "explanation"));
		if (c->opts & OPT_EXPLAIN) {
			/* the terms as expressions: the summary gives sentences */
			char *t = bundle_explain_text(res);

			if (t)
				fputs(t, stdout);
			free(t);
		}
		if (same)
			printf("identical to the recorded classification\n");
		else
			printf("differs from the recorded classification (recorded verdict: %s)\n",
			       rec ? jx_text(rec, "verdict") : "none");
	}
	json_object_put(res);
	json_object_put(man);
	rules_free(r);
	return EXIT_OK;
}
