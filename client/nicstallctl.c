/* nicstallctl: talk to nicstalld over its control socket, and read its
 * bundles. Options may come before or after the command (as with ip(8));
 * "--" ends them. Text by default, JSON with -j, for every command. */
#include "client/client.h"
#include "lib/ctlproto.h"
#include "lib/log.h"
#include "lib/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SOCKET CTL_DEFAULT_RUN_DIR "/" CTL_SOCKET_NAME

static const struct command {
	const char *name;
	int (*fn)(struct cli *);
	unsigned opts;                  /* OPT_* it takes */
} commands[] = {
	{ "status", cmd_status, 0 },
	{ "counters", cmd_counters, OPT_CHANGED | OPT_WINDOW },
	{ "snapshot", cmd_snapshot, OPT_BUNDLE },
	{ "flows", cmd_flows, OPT_STALLED | OPT_LIMIT },
	{ "incident", cmd_incident, 0 },
	{ "investigate", cmd_investigate, 0 },
	{ "recover", cmd_recover, 0 },
	{ "reload", cmd_reload, 0 },
	{ "peers", cmd_peers, 0 },
	{ "run", cmd_run, OPT_LABEL },
	{ "bundles", cmd_bundles, OPT_INCIDENT },
	{ "show", cmd_show, 0 },
	{ "report", cmd_report, OPT_OUTPUT },
	{ "verify", cmd_verify, 0 },
	{ "classify", cmd_classify, OPT_RULES | OPT_EXPLAIN },
};

static const struct {
	unsigned bit;
	const char *name;
} opt_names[] = {
	{ OPT_CHANGED, "--changed" }, { OPT_WINDOW, "--window" }, { OPT_STALLED, "--stalled" },
	{ OPT_BUNDLE, "--bundle" }, { OPT_RULES, "--rules" }, { OPT_OUTPUT, "-o/--output" },
	{ OPT_LIMIT, "--limit" },
	{ OPT_INCIDENT, "--incident" },
	{ OPT_LABEL, "--label" },
	{ OPT_EXPLAIN, "--explain" },
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: nicstallctl [OPTIONS] COMMAND [ARGS] [OPTIONS]\n"
"commands (root may use all; group " CTL_GROUP " the read-only ones):\n"
"  status                       ports, sources, sample rate, recorder, memory\n"
"  counters PORT [--changed] [--window SECONDS]\n"
"                               current values, or deltas over a window\n"
"  snapshot [PORT...]           every counter of every source now\n"
"  flows [PORT] [--stalled] [--limit N]\n"
"                               live flow table: source, tuple, state, held bytes\n"
"  incident show [ID]           an investigation record (default: the newest)\n"
"  incident list                recent investigations\n"
"  investigate PORT             run the forensic sequence now (root)\n"
"  recover PORT                 receive-filter reprogram now (root)\n"
"  reload                       re-read the configuration, wait for the result (root)\n"
"  snapshot --bundle [PORT...]  write a manual bundle of every counter now (root)\n"
"  peers                        the peer daemons: address, key state, last contact,\n"
"                               round trip, notices answered, datagrams refused\n"
"  run begin NAME [--label K=V]...  begin a benchmark run (group " CTL_GROUP " too)\n"
"  run end NAME                 end it: its certificate (clean, anomalous, tainted)\n"
"  run [NAME] [--label K=V]... -- COMMAND [ARGS]\n"
"                               a run around COMMAND; exits with its status\n"
"  run show NAME                the newest certificate of run NAME\n"
"  run list                     open runs, recent certificates\n"
"  bundles [--incident HOST:ID] list the bundles with verdict and size (of one\n"
"                               incident: the origin's and the peers' snapshots)\n"
"  show BUNDLE                  print a bundle's summary and timeline\n"
"  report BUNDLE [-o FILE]      write the bundle's HTML report (- for stdout)\n"
"  verify BUNDLE                check a bundle's checksums and manifest\n"
"  classify BUNDLE [--rules DIR] [--explain]\n"
"                               re-run the rules on a recorded bundle; --explain:\n"
"                               every term and the values it read\n"
"options:\n"
"  -s, --socket PATH            control socket (default " DEFAULT_SOCKET ",\n"
"                               or $NICSTALL_SOCKET)\n"
"  -S, --state-dir DIR          where bundles are (default: the daemon's, else\n"
"                               /var/lib/nicstalld)\n"
"  -j, --json                   JSON output\n"
"  -h, --help                   this help\n"
"  -V, --version                print the version\n"
"exit status: 0 done, 1 failed or refused, 2 usage error\n");
}

/* Long-only options. */
enum { O_CHANGED = 256, O_WINDOW, O_STALLED, O_BUNDLE, O_RULES, O_LIMIT, O_INCIDENT, O_LABEL,
       O_EXPLAIN };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "output", required_argument, NULL, 'o' },
		{ "changed", no_argument, NULL, O_CHANGED },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "stalled", no_argument, NULL, O_STALLED },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "bundle", no_argument, NULL, O_BUNDLE },
		{ "rules", required_argument, NULL, O_RULES },
		{ "incident", required_argument, NULL, O_INCIDENT },
		{ "label", required_argument, NULL, O_LABEL },
		{ "explain", no_argument, NULL, O_EXPLAIN },
		{ NULL, 0, NULL, 0 },
	};
	struct cli c = { .sock_path = DEFAULT_SOCKET };
	const struct command *cmd = NULL;
	int ch, nafter = 0;

	/* everything printed goes through the one terminal filter: bundles,
	 * the daemon's tables (engine, process and peer names) and errors
	 * that quote them are written by others (util_term_std) */
	if (util_term_std() < 0) {
		fputs("nicstallctl: out of memory\n", stderr);
		return EXIT_FAIL;
	}
	/* what the libraries log goes to the user as plain lines */
	log_init("nicstallctl", 0);
	if (getenv("NICSTALL_SOCKET") && *getenv("NICSTALL_SOCKET"))
		c.sock_path = getenv("NICSTALL_SOCKET");
	/* "--" ends the options; what follows is run's COMMAND ARGS (getopt
	 * permutes argv: the pointers are kept here first) */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nafter = argc - i - 1;
			if (nafter)
				c.argv_after = argv + i + 1;
			break;
		}
	if (c.argv_after) {
		char **copy = calloc((size_t)nafter + 1, sizeof(char *));

		if (!copy)
			return cli_error("out of memory");
		memcpy(copy, c.argv_after, (size_t)nafter * sizeof(char *));
		c.argv_after = copy;
	}
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":s:S:jhVo:", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			c.sock_path = optarg;
			break;
		case 'S':
			c.state_dir = optarg;
			break;
		case 'j':
			c.json = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("nicstallctl %s\n", NICSTALL_VERSION);
			return EXIT_OK;
		case 'o':
			c.opts |= OPT_OUTPUT;
			c.output = optarg;
			break;
		case O_CHANGED:
			c.opts |= OPT_CHANGED;
			break;
		case O_WINDOW: {
			char *end;

			c.window = strtod(optarg, &end);
			if (*end || end == optarg || !(c.window > 0) || c.window > 86400)
				return cli_usage_error("--window: '%s' is not a number of seconds in "
						       "(0, 86400]", optarg);
			c.opts |= OPT_WINDOW;
			break;
		}
		case O_STALLED:
			c.opts |= OPT_STALLED;
			break;
		case O_LIMIT: {
			char *end;

			c.limit = strtoll(optarg, &end, 10);
			if (*end || end == optarg || c.limit < 1 || c.limit > 100000)
				return cli_usage_error("--limit: '%s' is not a number from 1 to 100000",
						       optarg);
			c.opts |= OPT_LIMIT;
			break;
		}
		case O_BUNDLE:
			c.opts |= OPT_BUNDLE;
			break;
		case O_EXPLAIN:
			c.opts |= OPT_EXPLAIN;
			break;
		case O_RULES:
			c.opts |= OPT_RULES;
			c.rules_dir = optarg;
			break;
		case O_INCIDENT:
			c.opts |= OPT_INCIDENT;
			c.incident = optarg;
			break;
		case O_LABEL:
			if (c.nlabels == CLI_MAX_LABELS)
				return cli_usage_error("--label: more than %d", CLI_MAX_LABELS);
			c.opts |= OPT_LABEL;
			c.labels[c.nlabels++] = optarg;
			break;
		case ':':
			if (!strncmp(argv[optind - 1], "--", 2))
				return cli_usage_error("option '%s' needs an argument", argv[optind - 1]);
			return cli_usage_error("option '-%c' needs an argument", optopt);
		default:
			if (!strncmp(argv[optind - 1], "--", 2))
				return cli_usage_error("unknown option '%s'", argv[optind - 1]);
			return cli_usage_error("unknown option '-%c'", optopt);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	c.cmd = argv[optind];
	if (strcmp(c.cmd, "run")) {
		/* for the others "--" only ends the options */
		free(c.argv_after);
		c.argv_after = NULL;
		nafter = 0;
	}
	c.args = argv + optind + 1;
	c.nargs = argc - optind - 1 - nafter;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, c.cmd))
			cmd = &commands[i];
	if (!cmd)
		return cli_usage_error("unknown command '%s'", c.cmd);
	for (size_t i = 0; i < sizeof(opt_names) / sizeof(opt_names[0]); i++)
		if ((c.opts & opt_names[i].bit) && !(cmd->opts & opt_names[i].bit))
			return cli_usage_error("%s: option %s does not apply", c.cmd, opt_names[i].name);
	ch = cmd->fn(&c);
	free(c.argv_after);
	return ch;
}
