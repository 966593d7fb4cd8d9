/* libFuzzer target: control requests through cmd_dispatch on a daemon
 * context with recorded ports (stats_file from the real fixtures, sampled
 * a few times), flows (two stalled, one alive: an incident) and the
 * shipped rules, as a root, a member and a refused peer send them.
 * Input: one byte of access, then the request line (JSON or not, as
 * ctl.c gets it). Seeds: tests/fuzz/seeds/ctl. */
#include "tests/fuzz/fuzz.h"

#include <json-c/json.h>

#include "collectors/flows/flowsel.h"
#include "daemon/cmd.h"
#include "daemon/conf.h"
#include "daemon/forensic/forensic.h"
#include "daemon/ports.h"
#include "daemon/detect/stall.h"
#include "lib/loop.h"
#include "rules/rules.h"

static struct loop *l;
static struct conf *c;
static struct ports *ps;
static struct stall *st;
static struct forensics *fo;
static struct rules *ru;
static struct cmd_env env;

static void report(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "fuzz_ctl: %s\n", msg);
}

static void status_cb(struct json_object *o, void *arg)
{
	(void)arg;
	json_object_object_add(o, "version", json_object_new_string("fuzz"));
}

static int reload_cb(void *arg, char *err, size_t errlen)
{
	(void)arg;
	snprintf(err, errlen, "reload is not part of the fuzz target");
	return -1;
}

static void flow(unsigned i, uint64_t now, int answered)
{
	struct flow_obs o = { .src = FLOW_SRC_ENGINE };

	o.key.proto = 6;
	flow_addr_v4mapped(&o.key.saddr, "\x0a\x00\x00\x01");
	flow_addr_v4mapped(&o.key.daddr, "\x0a\x00\x00\x02");
	o.key.sport = 11111;
	o.key.dport = (uint16_t)(40000 + i);
	o.session = i + 1;
	o.tx_msgs = 10 + (answered ? now / 1000000 : 0);
	o.rx_msgs = answered ? o.tx_msgs : 9;
	o.last_tx_ns = now - 1000000;
	o.last_rx_ns = answered ? now : now - 900000000ull;
	o.pid = 1;
	snprintf(o.engine, sizeof(o.engine), "fz");
	stall_observe(st, &o, "p", now);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[256], err[512];
	uint64_t now;
	FILE *f;

	(void)argc;
	(void)argv;
	fz_quiet();
	snprintf(path, sizeof(path), "%s/n.conf", fz_dir());
	f = fopen(path, "w");
	if (!f)
		abort();
	fprintf(f, "[daemon]\nstate_dir = %s/state\nflows_dir = %s/flows\nrun_dir = %s/run\n"
		"incident_cooldown = 0s\n"
		"[port p]\nstats_file = %s/tests/fixtures/real/ethtool-S_mlx5-cx4lx-k4.15-ethq_1.txt\n"
		"info_file = %s/tests/fixtures/real/ethtool-i_mlx5-cx4lx-ethq-issue8.txt\n"
		"flows = tcp port 11111\npeer = q\n"
		"[port q]\nstats_file = %s/tests/fixtures/real/ethtool-S_sfc-ethq_1.txt\n",
		fz_dir(), fz_dir(), fz_dir(), NICSTALL_DATADIR, NICSTALL_DATADIR, NICSTALL_DATADIR);
	fclose(f);
	if (conf_load(path, &c, report, NULL))
		abort();
	ru = fz_shipped_rules("fuzz_ctl");
	l = loop_new();
	ps = ports_new(l, "");
	if (!l || !ps)
		abort();
	ports_apply(ps, c, 0);
	st = stall_new(l, ps, c, err, sizeof(err));
	fo = st ? forensic_new(l, ps, st, c, NULL) : NULL;
	if (!fo) {
		fprintf(stderr, "fuzz_ctl: %s\n", err);
		abort();
	}
	forensic_set_rules(fo, ru);
	now = loop_mono_ns();
	for (int k = 0; k < 5; k++)
		ports_sample(ps, now - (uint64_t)(5 - k) * 100000000ull,
			     loop_real_ns() - (uint64_t)(5 - k) * 100000000ull);
	for (int k = 0; k < 3; k++) {
		uint64_t t = now + (uint64_t)k * 300000000ull;

		for (unsigned i = 0; i < 3; i++)
			flow(i, t, i == 2);
		stall_poll_end(st, t);
	}
	env = (struct cmd_env){ ps, st, fo, status_cb, reload_cb, NULL };
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ctl_access acc[3] = { CTL_ROOT, CTL_READ, CTL_DENIED };
	struct json_tokener *tok;
	struct json_object *req, *reply;

	if (size < 1 || size > 65536)
		return 0;
	tok = json_tokener_new();
	req = json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1));
	if (req && json_object_is_type(req, json_type_object)) {
		reply = cmd_dispatch(req, acc[data[0] % 3], &env);
		if (reply) {
			if (!json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN))
				abort();
			json_object_put(reply);
		}
	}
	json_object_put(req);
	json_tokener_free(tok);
	return 0;
}
