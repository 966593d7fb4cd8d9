/* flow_onload_text: the onload_stackdump text parsers (`netstat` and
 * `--nolock lots`) and the scrub that keeps process environments out of
 * the evidence. See onload_parse.h for the formats and the Onload source
 * files they follow. */
#include "collectors/flows/onload_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/flows/onload_parse_int.h"
#include "lib/util.h"

/* Next line of text[*off..len) into line (cut at cap-1); 0 at the end. */
static int next_line(const char *text, size_t len, size_t *off, char *line, size_t cap)
{
	size_t s = *off, e, n;

	if (s >= len)
		return 0;
	for (e = s; e < len && text[e] != '\n'; e++)
		;
	n = e - s < cap - 1 ? e - s : cap - 1;
	memcpy(line, text + s, n);
	line[n] = '\0';
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	*off = e < len ? e + 1 : len;
	return 1;
}

/* "10.0.0.1:80" / "[fd00::1]:80" into address and port (network order). */
static int parse_ipport(const char *s, struct in6_addr *a, uint16_t *port)
{
	char buf[80];
	const char *colon = strrchr(s, ':');
	size_t n;
	long p;
	char *end;

	if (!colon || (size_t)(colon - s) >= sizeof(buf))
		return -1;
	n = (size_t)(colon - s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	p = strtol(colon + 1, &end, 10);
	if (*end || p < 0 || p > 65535 || ol_parse_addr(buf, a) < 0)
		return -1;
	*port = htons((uint16_t)p);
	return 0;
}

/* tcp_misc.c ci_tcp_state_num_str() names. */
static int lstate_of_name(const char *s, uint8_t *proto)
{
	static const char *const n[] = { "CLOSED", "LISTEN", "SYN-SENT", "ESTABLISHED",
					 "CLOSE-WAIT", "LAST-ACK", "FIN-WAIT1", "FIN-WAIT2",
					 "CLOSING", "TIME-WAIT" };

	for (unsigned i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (!strcmp(s, n[i]))
			return ol_lstate_of_num(i);
	if (!strcmp(s, "UDP"))
		*proto = IPPROTO_UDP;
	return 0;
}

int flow_onload_parse_netstat(const char *text, size_t len, int stack_id,
			      struct flow_onload_dump *d, char *err, size_t errlen)
{
	char line[512];
	size_t off = 0;
	unsigned bad = 0;

	flow_onload_dump_reset(d);
	if (len > FLOW_ONLOAD_MAX_TEXT)
		return util_errf(err, errlen, "netstat output too large"), -E2BIG;
	ol_stack_get(d, stack_id, 1);
	while (next_line(text, len, &off, line, sizeof(line))) {
		char type[8], l[80], r[80], st[24];
		unsigned rq, tq;
		struct flow_onload_sock *k;
		uint8_t proto = IPPROTO_TCP;

		if (sscanf(line, "%7s %u %u %79s %79s %23s", type, &rq, &tq, l, r, st) != 6)
			continue;
		if (strcmp(type, "TCP") && strcmp(type, "UDP"))
			continue;
		k = ol_sock_new(d, stack_id, -1);
		if (!k)
			break;
		if (parse_ipport(l, &k->laddr, &k->lport) < 0 ||
		    parse_ipport(r, &k->raddr, &k->rport) < 0) {
			d->nsocks--;
			bad++;
			continue;
		}
		k->lstate = lstate_of_name(st, &proto);
		k->proto = strcmp(type, "UDP") ? proto : IPPROTO_UDP;
		k->recvq_pkts = rq;
		k->sendq_pkts = tq;
		k->have = FLOW_ONLOAD_HAVE_QPKTS;
	}
	if (bad && !d->nsocks) {
		util_errf(err, errlen, "netstat output: %u socket lines with bad addresses", bad);
		return -EINVAL;
	}
	return 0;
}

/* A decimal count at p: digits only (no sign, no blank), at most
 * UINT64_MAX. 1 with *v and *n (the characters read), 0 otherwise: a
 * negative level (Onload prints the pkt_bufs levels with %d), a number
 * over 64 bits or no digits is no value, never a wrapped or clamped one. */
static int dec_u64(const char *p, uint64_t *v, int *n)
{
	uint64_t x = 0;
	int i = 0;

	for (; p[i] >= '0' && p[i] <= '9'; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	if (!i)
		return 0;
	*v = x;
	*n = i;
	return 1;
}

/* "k=v k=v" pairs of a line into counters prefix_k (decimal values; a
 * value that is not a count leaves its counter absent). */
static void kv_counters(struct flow_onload_dump *d, struct flow_onload_stack *st,
			const char *prefix, const char *p)
{
	while (*p) {
		char key[32], name[FLOW_ONLOAD_NAME];
		uint64_t v;
		int n = 0, m = 0;

		while (*p == ' ')
			p++;
		if (sscanf(p, "%31[a-z_]=%n", key, &n) == 1 && n > 0 && dec_u64(p + n, &v, &m) &&
		    (p[n + m] == ' ' || p[n + m] == '\0')) {
			snprintf(name, sizeof(name), "%s%s", prefix, key);
			ol_counter_set(st, name, v, d);
			p += n + m;
		} else {
			while (*p && *p != ' ')
				p++;
		}
	}
}

/* One line of the options: netif_debug.c ci_netif_config_opts_dump()
 * prints each with LOG_PRINT("%30s: " type##_fmt, env, value), or, when
 * it is not the default, "%30s: <fmt> (default: <fmt>)"; ci_uint* as %u,
 * ci_int* as %d (a negative value is no value here), strings quoted (not
 * read). Those of flow_onload_opt_names are kept. */
static void opt_line(struct flow_onload_stack *st, const char *line)
{
	char name[FLOW_ONLOAD_NAME];
	uint64_t v, dv;
	int n = 0, m = 0, k = 0;

	while (*line == ' ')
		line++;
	if (sscanf(line, "%47[A-Z0-9_]: %n", name, &n) != 1 || !n || !dec_u64(line + n, &v, &m))
		return;
	line += n + m;
	if (*line && !(!strncmp(line, " (default: ", 11) && dec_u64(line + 11, &dv, &k) &&
		       !strcmp(line + 11 + k, ")")))
		return;
	for (unsigned i = 0; i < FLOW_ONLOAD_MAX_OPTS; i++) {
		if (strcmp(name, flow_onload_opt_names[i]))
			continue;
		for (unsigned j = 0; j < st->nopts; j++)
			if (!strcmp(st->opts[j].name, name)) {
				st->opts[j].value = v;
				return;
			}
		if (st->nopts < FLOW_ONLOAD_MAX_OPTS) {
			util_strlcpy(st->opts[st->nopts].name, name, sizeof(st->opts[0].name));
			st->opts[st->nopts++].value = v;
		}
		return;
	}
}

int flow_onload_parse_lots(const char *text, size_t len, struct flow_onload_dump *d,
			   char *err, size_t errlen)
{
	struct flow_onload_stack *st = NULL;
	struct flow_onload_sock *k = NULL;
	char line[1024];
	size_t off = 0;
	int counters_on = 0, in_env = 0, in_opts = 0;

	flow_onload_dump_reset(d);
	if (len > FLOW_ONLOAD_MAX_TEXT)
		return util_errf(err, errlen, "stackdump output too large"), -E2BIG;
	/* every line Onload prints ends with a newline (ci_log): text that
	 * ends inside a line was cut (the output cap, a killed tool), and its
	 * last line may be a number cut short: not read */
	if (len && text[len - 1] != '\n') {
		while (len && text[len - 1] != '\n')
			len--;
		d->cut = 1;
	}
	while (next_line(text, len, &off, line, sizeof(line))) {
		char name[FLOW_ONLOAD_NAME], l[80], r[80], state[24];
		uint64_t v;
		int id, sid, n = 0, m = 0;
		const char *p;

		/* a stack: "ci_netif_dump_to_logger: stack=2 name=srv" */
		if ((p = strstr(line, ": stack=")) && line[0] != ' ' &&
		    sscanf(p, ": stack=%d%n", &id, &n) == 1) {
			st = ol_stack_get(d, id, 1);
			k = NULL;
			counters_on = in_env = in_opts = 0;
			p += n;
			if (st && !strncmp(p, " name=", 6))
				ol_clean_copy(st->name, sizeof(st->name), p + 6);
			continue;
		}
		if (!st)
			continue;
		/* an environment printed (the poll runs --nopids, so none
		 * should be): its values are raw, nothing after the first one
		 * can be told from them (env_start), so nothing after is read */
		if (in_env && (!strncmp(line, "cmdline: ", 9) || !strncmp(line, "env: ", 5)))
			break;
		if (in_env && strncmp(line, "====", 4))
			continue;       /* the --nopids note and separators */
		if (!strncmp(line, "----", 4)) {
			k = NULL;
			in_env = strstr(line, "process env") != NULL;
			in_opts = strstr(line, "config opts") != NULL;
			counters_on = !in_env && strstr(line, "stats") != NULL &&
				      !strstr(line, "vi stats");
			continue;
		}
		if (!strncmp(line, "====", 4)) {
			k = NULL;
			counters_on = in_env = in_opts = 0;
			continue;
		}
		/* libstack.c stack_lots(): "--- config opts ---", then
		 * ci_netif_config_opts_dump() (stack_opts() of `opts` heads
		 * it "ci_netif_config_opts_dump: N" instead) */
		if (!strncmp(line, "ci_netif_config_opts_dump: ", 27)) {
			in_opts = 1;
			counters_on = 0;
			continue;
		}
		if (in_opts) {
			opt_line(st, line);
			continue;
		}
		/* a socket: "TCP 2:3 lcl=10.9.0.2:11111 rmt=10.9.0.1:40000 ESTABLISHED" */
		if ((!strncmp(line, "TCP ", 4) || !strncmp(line, "UDP ", 4)) &&
		    sscanf(line + 4, "%d:%d lcl=%79s rmt=%79s %23s", &id, &sid, l, r, state) == 5) {
			uint8_t proto = line[0] == 'U' ? IPPROTO_UDP : IPPROTO_TCP;

			k = ol_sock_new(d, id, sid);
			counters_on = 0;
			if (!k)
				continue;
			k->proto = proto;
			if (parse_ipport(l, &k->laddr, &k->lport) < 0 ||
			    parse_ipport(r, &k->raddr, &k->rport) < 0) {
				d->nsocks--;
				k = NULL;
				continue;
			}
			k->lstate = proto == IPPROTO_TCP ? lstate_of_name(state, &proto) : 0;
			continue;
		}
		if (k && line[0] == ' ') {
			unsigned a, b, c, e, q1, q2, usr, byt, sb, sp, inf, cur, tot;
			unsigned long long tp;
			int x, y, z;

			if (sscanf(line, "  snd: up=%x una-nxt-max=%x-%x-%x enq=%x", &a, &b, &c, &e,
				   &q1) == 5) {
				k->snd_una = b;
				k->snd_nxt = c;
				k->snd_max = e;
				k->have |= FLOW_ONLOAD_HAVE_SEQ;
			} else if (sscanf(line, "  snd: send=%u(%u) send+pre=%u inflight=%u(%u)", &sb,
					  &sp, &q1, &inf, &q2) == 5) {
				k->sendq_bytes = sb;
				k->sendq_pkts = sp;
				k->retrans_pkts = q2;
				k->have |= FLOW_ONLOAD_HAVE_SENDQ_B | FLOW_ONLOAD_HAVE_QPKTS;
			} else if (sscanf(line, "  rcv: bytes=%u tot_pkts=%llx rob_pkts=%u q_pkts=%u+%u usr=%u",
					  &byt, &tp, &a, &q1, &q2, &usr) == 6) {
				/* bytes = rcv_added - isn; usr = added - delivered */
				k->rcv_added = byt;
				k->rcv_delivered = byt - usr;
				k->recvq_pkts = q1 + q2;
				k->have |= FLOW_ONLOAD_HAVE_RCV;
			} else if (sscanf(line, "  curr_retrans=%u total_retrans=%u", &cur, &tot) == 2) {
				k->total_retrans = tot;
			} else if (sscanf(line, "  rx_errno=%x tx_errno=%x so_error=%d", &x, &y, &z) == 3) {
				k->so_error = z;
			} else if (sscanf(line, "  uid=%d pid=%d", &x, &y) == 2) {
				k->pid = y;
			}
			continue;
		}
		if (line[0] == ' ') {
			/* stack-level lines of ci_netif_dump / dump_extra */
			if ((p = strstr(line, " pid=")) && !st->pid && strstr(line, " uid=") &&
			    sscanf(p, " pid=%d", &id) == 1)
				st->pid = id;
			else if (!strncmp(line, "  pkt_bufs: ", 12))
				kv_counters(d, st, "pkt_bufs_", line + 12);
			else if (!strncmp(line, "  tx_may_alloc=", 15))
				kv_counters(d, st, "", line + 2);
			else if (!strncmp(line, "  time: ", 8) && strstr(line, "STUCK"))
				ol_counter_set(st, "time_stuck", 1, d);
			continue;
		}
		/* "name: value" counters of the stats sections: stats_dump.h
		 * ci_dump_stats() prints each "%s: %u" (32-bit) or "%s: %llu" */
		if (counters_on && sscanf(line, "%47[a-z0-9_]: %n", name, &n) == 1 && n > 0 &&
		    dec_u64(line + n, &v, &m) && line[n + m] == '\0')
			ol_counter_set(st, name, v, d);
	}
	if (!d->nstacks) {
		util_errf(err, errlen, "no stack found in onload_stackdump output");
		return -EINVAL;
	}
	return 0;
}

/* Where the process environments begin in lots text: the offset of the
 * line that opens them, or len when there is none.
 *
 * Onload prints them last: src/tools/ip/libstack.c stack_lots() ends each
 * stack with ci_log("--------------------- process env ---...") and
 * process_dump(ni), which prints per mapped pid its threads, then
 * libstack_pid_env_print(): "cmdline: " (print_cmdline, the raw argv) and
 * "env: %s\n" for each EF_*, LD_PRELOAD* and TP_LOG* variable, the value
 * raw: a newline in it starts a line of the process's choosing. Nothing
 * ends the section that a value cannot print too (the next stack's "===="
 * line, ci_netif_dump_to_logger's ": stack=" line), so the section runs to
 * the end of the text: one stack per run (the daemon's evidence runs
 * `onload_stackdump --nopids <id> lots`) loses nothing else. The header is
 * matched loosely (a line starting with '-' that names "process env"), and
 * a line starting "cmdline: " or "env: " (printed nowhere else in lots, and
 * by libstack_env_print for `env`) opens it as well when the header is
 * missing: a forged opening only cuts more. */
static size_t env_start(const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t s = off, e, n;

		for (e = s; e < len && text[e] != '\n'; e++)
			;
		n = e - s;
		off = e < len ? e + 1 : len;
		if ((n && text[s] == '-' && memmem(text + s, n, "process env", 11)) ||
		    (n >= 9 && !memcmp(text + s, "cmdline: ", 9)) || (n >= 5 && !memcmp(text + s, "env: ", 5)))
			return s;
	}
	return len;
}

char *flow_onload_scrub(const char *text, size_t len, size_t *outlen)
{
	static const char note[] = "--------------------- process env (removed by nicstalld, "
				   "with all that follows) ---\n";
	size_t keep = env_start(text, len), o = 0;
	char *out = malloc(keep + sizeof(note));

	if (!out)
		return NULL;
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)text[i];

		out[o++] = (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?';
	}
	if (keep < len) {
		memcpy(out + o, note, sizeof(note) - 1);
		o += sizeof(note) - 1;
	}
	out[o] = '\0';
	if (outlen)
		*outlen = o;
	return out;
}
