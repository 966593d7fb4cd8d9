/* run_cmds: nicstallctl run: benchmark runs (begin, end, show, list) and
 * a command bracketed by a run (run [NAME] -- COMMAND ARGS). */
#include "client/client.h"
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct json_object *run_req(const char *op, const char *name)
{
	struct json_object *req = json_object_new_object();

	jx_add_str(req, "cmd", "run");
	jx_add_str(req, "op", op);
	if (name)
		jx_add_str(req, "name", name);
	return req;
}

/* --label K=V (each once): into req "labels"; EXIT_OK or a usage error. */
static int add_labels(const struct cli *c, struct json_object *req)
{
	struct json_object *l = json_object_new_object();

	for (int i = 0; i < c->nlabels; i++) {
		const char *eq = strchr(c->labels[i], '=');
		char key[128];

		if (!eq || eq == c->labels[i] || (size_t)(eq - c->labels[i]) >= sizeof(key)) {
			json_object_put(l);
			return cli_usage_error("--label: '%s' is not KEY=VALUE", c->labels[i]);
		}
		memcpy(key, c->labels[i], (size_t)(eq - c->labels[i]));
		key[eq - c->labels[i]] = 0;
		if (jx_get(l, key)) {
			json_object_put(l);
			return cli_usage_error("--label: %s given twice", key);
		}
		jx_add_str(l, key, eq + 1);
	}
	json_object_object_add(req, "labels", l);
	return EXIT_OK;
}

static void print_cert(struct json_object *c)
{
	struct json_object *ports = jx_get(c, "ports");

	printf("%s\n", jx_text(c, "word"));
	printf("reason: %s\n", jx_text(c, "reason"));
	printf("run: %s  certificate %s  run_policy %s%s\n", jx_text(c, "run"),
	       jx_text(c, "certificate"), jx_text(c, "run_policy"),
	       !strcmp(jx_text(c, "state"), "pending") ? "  (pending: bundles to come)" : "");
	printf("start: %s  end: %s  (%s s)\n", jx_text(jx_get(c, "start"), "utc"),
	       jx_text(jx_get(c, "end"), "utc"), jx_text(c, "duration_s"));
	if (jx_obj(c, "labels") && json_object_object_length(jx_obj(c, "labels"))) {
		struct json_object *lb = jx_obj(c, "labels");

		printf("labels:");
		json_object_object_foreach(lb, k, v)
			printf(" %s=%s", k, json_object_get_string(v));
		printf("\n");
	}
	if (ports && json_object_is_type(ports, json_type_object)) {
		json_object_object_foreach(ports, pn, pv) {
			struct json_object *sg = jx_get(pv, "signals"), *cn = jx_get(pv, "counters");

			printf("port %s (%s):", pn, jx_text(pv, "profile"));
			if (sg && json_object_is_type(sg, json_type_object)) {
				json_object_object_foreach(sg, sk, sv)
					printf(" %s %s", sk, json_object_get_string(sv));
			}
			printf("\n");
			if (cn && json_object_is_type(cn, json_type_object)) {
				json_object_object_foreach(cn, ck, cv)
					printf("  %s +%s\n", ck, json_object_get_string(cv));
			}
		}
	}
	printf("flows: at most %s watched, longest wait %s ms\n",
	       jx_text(jx_get(c, "flows"), "watched_max"),
	       jx_text(jx_get(c, "flows"), "longest_wait_ms"));
	for (size_t i = 0; i < jx_len(jx_get(c, "incidents")); i++) {
		struct json_object *e = json_object_array_get_idx(jx_get(c, "incidents"), i);

		printf("incident %s on %s at %s: %s, bundle %s\n", jx_text(e, "incident"),
		       jx_text(e, "port"), jx_text(jx_get(e, "opened"), "utc"),
		       jx_text(e, "verdict"), cli_dash(jx_str(e, "bundle")));
	}
	for (size_t i = 0; i < jx_len(jx_get(c, "interventions")); i++) {
		struct json_object *e = json_object_array_get_idx(jx_get(c, "interventions"), i);

		printf("intervention %s %s at %s (+%s s)%s: %s\n", jx_text(e, "kind"),
		       cli_dash(jx_str(e, "port")), jx_text(jx_get(e, "at"), "utc"),
		       jx_text(e, "at_s"), jx_bool(e, "changed_system") ? ", changed the system" : "",
		       jx_text(e, "note"));
	}
	printf("daemon cpu: %s s\n", jx_text(c, "daemon_cpu_s"));
}

static void print_begun(struct json_object *o)
{
	if (jx_str(o, "closed_incomplete"))
		printf("closed %s as incomplete (never ended)\n", jx_text(o, "closed_incomplete"));
	printf("run %s begun at %s (run_policy %s)\n", jx_text(o, "run"),
	       jx_text(jx_get(o, "start"), "utc"), jx_text(o, "run_policy"));
}

static void print_list(struct json_object *o)
{
	printf("run_policy %s\n", jx_text(o, "run_policy"));
	for (size_t i = 0; i < jx_len(jx_get(o, "open")); i++) {
		struct json_object *e = json_object_array_get_idx(jx_get(o, "open"), i);

		printf("open       %-24s since %s, %s incident(s), %s intervention(s)\n",
		       jx_text(e, "run"), jx_text(jx_get(e, "start"), "utc"),
		       jx_text(e, "incidents"), jx_text(e, "interventions"));
	}
	for (size_t i = 0; i < jx_len(jx_get(o, "ended")); i++) {
		struct json_object *e = json_object_array_get_idx(jx_get(o, "ended"), i);

		printf("%-10s %-24s %s%s%s\n", jx_str(e, "word") ? jx_text(e, "word") : "pending",
		       jx_text(e, "run"), jx_text(e, "certificate"),
		       jx_str(e, "reason") ? ": " : "", jx_str(e, "reason") ? jx_text(e, "reason") : "");
	}
}

static int request(struct cli *c, struct json_object *req, void (*text)(struct json_object *),
		   const char *cert_key)
{
	struct json_object *reply = cli_request(c, req);
	int rc;

	json_object_put(req);
	rc = cli_check_reply(reply);
	if (rc == EXIT_OK) {
		if (c->json)
			cli_print_json(cert_key ? jx_get(reply, cert_key) : reply);
		else if (cert_key)
			print_cert(jx_get(reply, cert_key));
		else
			text(reply);
	}
	json_object_put(reply);
	return rc;
}

/* run [NAME] -- COMMAND ARGS: begin, the command with this process's
 * standard streams, end with its status; its exit status passed through
 * (128+N for a signal). The certificate's first line and reason go to
 * stderr, stdout stays the command's. */
static int bracket(struct cli *c, const char *name)
{
	struct json_object *req = run_req("begin", NULL), *reply, *st;
	char dflt[80], *base;
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int status = 0, rc, out;
	pid_t pid;

	if (!name) {
		base = strrchr(c->argv_after[0], '/');
		snprintf(dflt, sizeof(dflt), "%.40s-%d", base ? base + 1 : c->argv_after[0],
			 (int)getpid());
		for (char *p = dflt; *p; p++)
			if (!strchr("_.-", *p) && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
						    (*p >= '0' && *p <= '9')))
				*p = '_';
		name = dflt;
	}
	jx_add_str(req, "name", name);
	if (add_labels(c, req) != EXIT_OK) {
		json_object_put(req);
		return EXIT_USAGE;
	}
	reply = cli_request(c, req);
	json_object_put(req);
	if (cli_check_reply(reply) != EXIT_OK) {
		json_object_put(reply);
		return cli_error("run %s: not begun, %s not run", name, c->argv_after[0]);
	}
	json_object_put(reply);
	fflush(NULL);
	/* like system(3): the terminal's ^C is the command's */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execvp(c->argv_after[0], c->argv_after);
		fprintf(stderr, "nicstallctl: run: %s: %s\n", c->argv_after[0], strerror(errno));
		_exit(127);
	}
	st = json_object_new_object();
	if (pid < 0) {
		jx_add_str(st, "error", strerror(errno));
		out = 127;
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status)) {
			jx_add_int(st, "signal", WTERMSIG(status));
			out = 128 + WTERMSIG(status);
		} else {
			jx_add_int(st, "exit", WEXITSTATUS(status));
			out = WEXITSTATUS(status);
		}
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	jx_add_str(st, "command", c->argv_after[0]);
	req = run_req("end", name);
	json_object_object_add(req, "status", st);
	reply = cli_request(c, req);
	json_object_put(req);
	rc = cli_check_reply(reply);
	if (rc == EXIT_OK) {
		struct json_object *cert = jx_get(reply, "certificate");

		if (c->json)
			cli_print_json(cert);
		else
			fprintf(stderr, "nicstallctl: run %s: %s: %s\n", name, jx_text(cert, "word"),
				jx_text(cert, "reason"));
	}
	json_object_put(reply);
	return out;
}

int cmd_run(struct cli *c)
{
	const char *op = c->nargs ? c->args[0] : NULL;
	struct json_object *req;

	if (c->argv_after) {
		if (c->nargs > 1)
			return cli_usage_error("run: expected at most one NAME before --");
		return bracket(c, c->nargs ? c->args[0] : NULL);
	}
	if (!op)
		return cli_usage_error("run: expected begin, end, show, list or -- COMMAND");
	if (c->nlabels && strcmp(op, "begin"))
		return cli_usage_error("run %s: --label applies to begin (and -- COMMAND)", op);
	if (!strcmp(op, "list")) {
		if (c->nargs != 1)
			return cli_usage_error("run list: unexpected argument '%s'", c->args[1]);
		return request(c, run_req("list", NULL), print_list, NULL);
	}
	if (strcmp(op, "begin") && strcmp(op, "end") && strcmp(op, "show"))
		return cli_usage_error("run: unknown '%s' (begin, end, show, list, -- COMMAND)", op);
	if (c->nargs != 2)
		return cli_usage_error("run %s: expected one NAME", op);
	req = run_req(op, c->args[1]);
	if (!strcmp(op, "begin")) {
		if (add_labels(c, req) != EXIT_OK) {
			json_object_put(req);
			return EXIT_USAGE;
		}
		return request(c, req, print_begun, NULL);
	}
	return request(c, req, NULL, "certificate");
}
