/* summary_engines: the summary's lines of the readers of unmodified
 * bypass engines (manifest "engines": Onload stacks, VMA/XLIO sockets,
 * RDMA queue pairs), at the stall and after it. Part of summary.txt
 * (summary.c); the manifest may be hostile: every list is bounded. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"

#include <stdio.h>

#include <json-c/json.h>

#define put_val bi_put_val
#define put_line bi_put_line

/* The entry of array arr whose keys k (and k2 when not NULL) equal those
 * of e (NULL: none). */
static struct json_object *match_in(struct json_object *arr, const char *k, const char *k2,
				    struct json_object *e)
{
	for (size_t i = 0; i < jx_len(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		if (jx_get(x, k) && jx_u64(x, k) == jx_u64(e, k) &&
		    (!k2 || jx_u64(x, k2) == jx_u64(e, k2)))
			return x;
	}
	return NULL;
}

/* "name b -> d -> a" for each counter of the first of d, a that is an
 * object (the dumps before, during and after; a dump that is NULL is
 * left out, a counter missing from one present is "unknown"). */
static void put_series(FILE *f, struct json_object *const *dumps)
{
	struct json_object *keys = NULL;
	int n = 0;

	for (int k = 1; k < 3 && !keys; k++)
		if (dumps[k] && json_object_is_type(dumps[k], json_type_object))
			keys = dumps[k];
	if (!keys)
		return;
	json_object_object_foreach(keys, key, v) {
		int first = 1;

		(void)v;
		if (n == 12)
			break;
		fprintf(f, "%s%.64s ", n++ ? ", " : "", key);
		for (int k = 0; k < 3; k++) {
			if (!dumps[k])
				continue;
			if (!first)
				fputs(" -> ", f);
			put_val(f, jx_get(dumps[k], key));
			first = 0;
		}
	}
}

/* The items of at_stall[], then those of after[] not among them (a flow
 * that joined the incident later): cb(item at the stall or NULL, item
 * after or NULL). */
static void each_item(struct json_object *at, struct json_object *af, const char *key,
		      const char *key2, size_t max, void (*cb)(FILE *f, struct json_object *a, struct json_object *b,
					     const char *label),
		      FILE *f, const char *label)
{
	size_t n = 0;

	for (size_t i = 0; i < jx_len(at) && n < max; i++, n++) {
		struct json_object *a = json_object_array_get_idx(at, i);

		cb(f, a, match_in(af, key, key2, a), label);
	}
	for (size_t i = 0; i < jx_len(af) && n < max; i++) {
		struct json_object *b = json_object_array_get_idx(af, i);

		if (!match_in(at, key, key2, b)) {
			cb(f, NULL, b, label);
			n++;
		}
	}
}

static void one_stack(FILE *f, struct json_object *a, struct json_object *b, const char *label)
{
	struct json_object *s = a ? a : b;

	(void)label;
	put_line(f, s, (const char *const[]){ "- Onload stack ", "id", " (", "name", NULL });
	if (jx_get(s, "pid"))
		put_line(f, s, (const char *const[]){ ", pid ", "pid", NULL });
	fputs("): ", f);
	if (jx_obj(s, "counters")) {
		struct json_object *bf = jx_obj(jx_obj(a, "before"), "counters");
		struct json_object *d[3] = { bf, jx_obj(a, "counters"), jx_obj(b, "counters") };

		put_series(f, d);
		fprintf(f, " (%s%s%s)", bf ? "before -> " : "",
			a && b ? "at the stall -> after" : a ? "at the stall; after: not recorded" :
			"after; at the stall: not recorded", bf || !a ? "" : "; before: not recorded");
		if (bf && jx_get(jx_obj(a, "before"), "age_ms")) {
			fputs("; before taken ", f);
			put_val(f, jx_get(jx_obj(a, "before"), "age_ms"));
			fputs(" ms before the stall's dump", f);
		}
	} else {
		fputs("no stackdump counters", f);
		if (jx_str(s, "error"))
			fprintf(f, " (%.200s)", jx_str(s, "error"));
	}
	if (a && jx_str(jx_obj(a, "before"), "bundle_file"))
		fprintf(f, "; %.100s", jx_str(jx_obj(a, "before"), "bundle_file"));
	if (a && jx_str(a, "bundle_file"))
		fprintf(f, "%s%.100s", jx_str(jx_obj(a, "before"), "bundle_file") ? ", " : "; ",
			jx_str(a, "bundle_file"));
	if (b && jx_str(b, "bundle_file"))
		fprintf(f, "%s%.100s", a && (jx_str(a, "bundle_file") ||
					     jx_str(jx_obj(a, "before"), "bundle_file")) ? ", " : "; ",
			jx_str(b, "bundle_file"));
	fputs(".\n", f);
}

/* " at the stall" and "; after" (or " after" alone) with fields of each,
 * then the full stop. */
static void put_at_after(FILE *f, struct json_object *a, struct json_object *b,
			 const char *const *fields)
{
	if (a) {
		fputs(" at the stall", f);
		put_line(f, a, fields);
	}
	if (b) {
		fputs(a ? "; after" : " after", f);
		put_line(f, b, fields);
	}
	fputs(".\n", f);
}

static void one_socket(FILE *f, struct json_object *a, struct json_object *b, const char *label)
{
	static const char *const fields[] = { " rx ", "n_rx_packets", ", tx ", "n_tx_sent_pkt_count",
		", ready to read ", "n_rx_ready_byte_count", " bytes, to send ",
		"n_tx_ready_byte_count", " bytes (", "verdict", ")", NULL };

	(void)label;
	put_line(f, a ? a : b, (const char *const[]){ "- VMA/XLIO socket ", "local", " -> ",
		 "remote", " (pid ", "pid", ", fd ", "fd", "):", NULL });
	put_at_after(f, a, b, fields);
}

static void one_qp(FILE *f, struct json_object *a, struct json_object *b, const char *port)
{
	static const char *const fields[] = { " ", "state", ", sq_psn ", "sq_psn", ", rq_psn ",
		"rq_psn", NULL };

	fprintf(f, "- RDMA QP on port %.64s: ", port);
	put_line(f, a ? a : b, (const char *const[]){ "", "device", " qp ", "lqpn", " -> ", "rqpn",
		 " (", "type", ")", NULL });
	put_at_after(f, a, b, fields);
}

/* The readers of unmodified engines: Onload stacks (the seed 001 table:
 * pool empty, lock contends, lock wakes, free buffers at the stall and
 * after), VMA/XLIO sockets, RDMA queue pairs. */
void bi_sum_engines(FILE *f, struct json_object *m)
{
	struct json_object *eng = jx_obj(m, MK_ENGINES), *at, *af, *qp;

	if (!eng)
		return;
	at = jx_obj(eng, "at_stall");
	af = jx_obj(eng, "after");
	each_item(jx_arr(jx_obj(at, "onload"), "stacks"), jx_arr(jx_obj(af, "onload"), "stacks"),
		  "id", NULL, 8, one_stack, f, NULL);
	each_item(jx_arr(jx_obj(at, "vma"), "sockets"), jx_arr(jx_obj(af, "vma"), "sockets"),
		  "pid", "fd", 8, one_socket, f, NULL);
	qp = jx_obj(at, "rdmaqp") ? jx_obj(at, "rdmaqp") : jx_obj(af, "rdmaqp");
	if (qp) {
		json_object_object_foreach(qp, port, v) {
			(void)v;
			each_item(jx_arr(jx_obj(jx_obj(at, "rdmaqp"), port), "involved"),
				  jx_arr(jx_obj(jx_obj(af, "rdmaqp"), port), "involved"), "lqpn", NULL, 8,
				  one_qp, f, port);
		}
	}
}

