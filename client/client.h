/* client: what the parts of nicstallctl share: the options, the exit
 * statuses, the request to the daemon and the bundle commands.
 *
 *   nicstallctl.c  options (getopt_long, before or after the command),
 *                  the command table, usage
 *   request.c      one request over the control socket, the state
 *                  directory, JSON output
 *   daemon_cmds.c  status, counters, snapshot, flows, incident,
 *                  investigate, recover, reload, peers: requests and text
 *   run_cmds.c     run: benchmark runs, a command bracketed by one
 *   bundle_cmds.c  bundles, show, report, verify, classify: read the files,
 *                  the daemon need not run */
#ifndef NICSTALL_CLIENT_H
#define NICSTALL_CLIENT_H

#include <stdio.h>

struct json_object;

/* Exit statuses (nicstallctl(1) EXIT STATUS). */
#define EXIT_OK    0
#define EXIT_FAIL  1            /* the request failed, was refused, or I/O */
#define EXIT_USAGE 2            /* the command line is wrong */

/* Options that only some commands take (struct cli.opts bits). */
#define OPT_CHANGED 0x01u
#define OPT_WINDOW  0x02u
#define OPT_STALLED 0x04u
#define OPT_BUNDLE  0x08u
#define OPT_RULES   0x10u
#define OPT_OUTPUT  0x20u
#define OPT_LIMIT   0x40u
#define OPT_INCIDENT 0x80u
#define OPT_LABEL   0x100u
#define OPT_EXPLAIN 0x200u
#define CLI_MAX_LABELS 32               /* --label given (the daemon takes 16) */

struct cli {
	const char *sock_path;
	const char *state_dir;          /* -S, or NULL: ask the daemon */
	int json;
	unsigned opts;                  /* OPT_* given */
	double window;                  /* --window */
	long long limit;                /* --limit */
	const char *rules_dir;          /* --rules */
	const char *output;             /* -o */
	const char *incident;           /* --incident HOST:ID */
	const char *labels[CLI_MAX_LABELS];     /* --label K=V */
	int nlabels;
	char **argv_after;              /* after a "--": run's COMMAND ARGS, NULL-ended */
	const char *cmd;
	char **args;                    /* the command's arguments (before a "--") */
	int nargs;
};

/* A usage error: the message on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error: "nicstallctl: message" on stderr; returns EXIT_FAIL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The daemon's reply to req (an object; never returns on a transport
 * error: the message is printed and the process exits 1). */
struct json_object *cli_request(const struct cli *c, struct json_object *req);
/* EXIT_OK, or EXIT_FAIL with the reply's error on stderr. */
int cli_check_reply(struct json_object *reply);
/* Pretty JSON on stdout, without the reply's "ok" when it holds more. */
void cli_print_json(struct json_object *o);
/* The state directory: -S, else the running daemon's, else the default. */
void cli_state_dir(const struct cli *c, char *buf, size_t len);
/* "-" for NULL or "". */
const char *cli_dash(const char *s);

int cmd_status(struct cli *c);
int cmd_counters(struct cli *c);
int cmd_snapshot(struct cli *c);
int cmd_flows(struct cli *c);
int cmd_incident(struct cli *c);
int cmd_investigate(struct cli *c);
int cmd_recover(struct cli *c);
int cmd_reload(struct cli *c);
int cmd_peers(struct cli *c);
int cmd_run(struct cli *c);
int cmd_bundles(struct cli *c);
int cmd_show(struct cli *c);
int cmd_report(struct cli *c);
int cmd_verify(struct cli *c);
int cmd_classify(struct cli *c);

#endif
