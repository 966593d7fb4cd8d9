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

/* "name a -> b" for each counter of a (b from after, "?" when missing). */
static void put_pairs(FILE *f, struct json_object *a, struct json_object *b)
{
	int n = 0;

	if (!a || !json_object_is_type(a, json_type_object))
		return;
	json_object_object_foreach(a, k, v) {
		if (n == 12)
			break;
		fprintf(f, "%s%.64s ", n++ ? ", " : "", k);
		put_val(f, v);
		fputs(" -> ", f);
		put_val(f, jx_get(b, k));
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
		put_pairs(f, jx_obj(a, "counters"), jx_obj(b, "counters"));
		if (!a)
			put_pairs(f, jx_obj(b, "counters"), NULL);
		fputs(a && b ? " (at the stall -> after)" : a ? " (at the stall; after: not recorded)" :
		      " (after; at the stall: not recorded)", f);
	} else {
		fputs("no stackdump counters", f);
		if (jx_str(s, "error"))
			fprintf(f, " (%.200s)", jx_str(s, "error"));
	}
	if (a && jx_str(a, "bundle_file"))
		fprintf(f, "; %.100s", jx_str(a, "bundle_file"));
	if (b && jx_str(b, "bundle_file"))
		fprintf(f, "%s%.100s", a && jx_str(a, "bundle_file") ? ", " : "; ",
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

