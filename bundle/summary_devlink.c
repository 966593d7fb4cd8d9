/* summary_devlink: the summary's "Devlink health" section (manifest
 * "devlink", with the facts' devlink/ counter deltas): per port the
 * reporters that moved over the stall and the investigation, the vnic
 * figures that moved, the health events seen and the dumps copied, or
 * "no devlink health" with the reason. The manifest may be hostile: lists
 * are bounded, names cut. */
#include "bundle/bundle.h"
#include "bundle/bundle_int.h"
#include "lib/json.h"
#include "rules/facts.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#define MAX_REPORTERS 16

static struct json_object *reporter(struct json_object *side, const char *name)
{
	struct json_object *arr = jx_arr(side, "reporters");

	for (size_t i = 0; i < jx_len(arr) && i < MAX_REPORTERS; i++) {
		struct json_object *r = json_object_array_get_idx(arr, i);

		if (!strcmp(jx_text(r, "name"), name))
			return r;
	}
	return NULL;
}

/* A counter's delta over the stall period and the observation window of
 * the port's facts (0 when absent), into *d; 1 when either period has it. */
static int period_delta(struct json_object *fp, const char *name, double *d)
{
	static const char *const per[] = { FK_PER_STALL, FK_PER_WINDOW };
	int have = 0;

	*d = 0;
	for (size_t i = 0; i < 2; i++) {
		double x;

		if (jx_num(jx_get(jx_obj(jx_obj(fp, per[i]), FK_COUNTERS), name), &x)) {
			*d += x;
			have = 1;
		}
	}
	return have;
}

/* "rx: error_count +2, recover_count +2, state healthy"; 0 when it did not
 * move. The stall delta runs to the first snapshot, then at_stall -> after. */
static int reporter_moved(FILE *f, struct json_object *fp, struct json_object *a,
			  struct json_object *b, const char *name, int first)
{
	static const char *const fields[] = { "error_count", "recover_count" };
	double d[2] = { 0, 0 };
	int moved = 0;

	for (size_t i = 0; i < 2; i++) {
		char cn[128];
		double x;

		snprintf(cn, sizeof(cn), "devlink/%.64s/%s", name, fields[i]);
		if (period_delta(fp, cn, &x))
			d[i] += x;
		if (a && b)
			d[i] += (double)jx_u64(b, fields[i]) - (double)jx_u64(a, fields[i]);
		moved |= d[i] != 0;
	}
	if (a && b && strcmp(jx_text(a, "state"), jx_text(b, "state")))
		moved = 1;
	if (!moved)
		return 0;
	fprintf(f, "%s%.64s: error_count %+.0f, recover_count %+.0f, state %.16s", first ? "" : "; ",
		name, d[0], d[1], jx_text(b ? b : a, "state"));
	if (a && b && strcmp(jx_text(a, "state"), jx_text(b, "state")))
		fprintf(f, " (at the stall %.16s)", jx_text(a, "state"));
	return 1;
}

static void sum_port(FILE *f, const char *port, struct json_object *d, struct json_object *fp)
{
	struct json_object *at = jx_obj(d, "at_stall"), *af = jx_obj(d, "after");
	struct json_object *side = at ? at : af, *reps = jx_arr(side, "reporters");
	struct json_object *evs = jx_arr(d, "events"), *dumps = jx_obj(d, "dumps");
	struct json_object *cnt = jx_obj(jx_obj(fp, FK_PER_STALL), FK_COUNTERS);
	int any = 0, n = 0;

	fprintf(f, "- Port %.64s", port);
	if (!side || jx_str(side, "note")) {
		fprintf(f, ": no devlink health (%.200s).\n",
			side && jx_str(side, "reason") ? jx_str(side, "reason") : "not recorded");
		return;
	}
	fprintf(f, " (%.160s): ", jx_text(side, "handles"));
	for (size_t i = 0; i < jx_len(reps) && i < MAX_REPORTERS; i++) {
		const char *name = jx_text(json_object_array_get_idx(reps, i), "name");

		any |= reporter_moved(f, fp, reporter(at, name), reporter(af, name), name, !any);
	}
	if (!any) {
		fputs("no reporter moved (", f);
		for (size_t i = 0; i < jx_len(reps) && i < MAX_REPORTERS; i++) {
			struct json_object *r = json_object_array_get_idx(reps, i);

			fprintf(f, "%s%.64s %.16s", i ? ", " : "", jx_text(r, "name"),
				jx_text(r, "state"));
		}
		fputc(')', f);
	}
	fputs(".\n", f);
	/* the vnic figures that moved over the stall and the window */
	if (cnt) {
		json_object_object_foreach(cnt, k, v) {
			double x;

			(void)v;
			if (strncmp(k, "devlink/vnic/", 13) || !period_delta(fp, k, &x) || x == 0)
				continue;
			if (n++ < 12)
				fprintf(f, "%s%.64s %+.0f", n == 1 ? "  vnic " : ", ", k + 13, x);
		}
		if (n > 12)
			fprintf(f, ", and %d more", n - 12);
		fputs(n ? " (over the stall and the observation window).\n" :
		      "  vnic: no figure moved over the stall and the observation window.\n", f);
	}
	for (size_t i = 0; i < jx_len(evs) && i < 8; i++) {
		struct json_object *e = json_object_array_get_idx(evs, i);
		double t;

		fprintf(f, "  Event: %.64s %.16s (errors ", jx_text(e, "reporter"), jx_text(e, "state"));
		bi_put_val(f, jx_get(e, "error_count"));
		fputs(", recovered ", f);
		bi_put_val(f, jx_get(e, "recover_count"));
		fputc(')', f);
		if (jx_num(jx_get(e, "t_ms"), &t))
			fprintf(f, " at %+.1f ms", t);
		fputs(".\n", f);
	}
	if (jx_len(evs) > 8)
		fprintf(f, "  and %zu more events (devlink/%.64s.json)\n", jx_len(evs) - 8, port);
	if (dumps) {
		int k = 0;

		json_object_object_foreach(dumps, rep, v) {
			if (k++ == 8)
				break;
			if (jx_str(v, "file"))
				fprintf(f, "  Dump of %.64s newer than the stall: %.160s%s.\n", rep,
					jx_str(v, "file"), jx_bool(v, "retaken") ?
					" (the kernel took it again between two requests)" : "");
			else
				fprintf(f, "  Dump of %.64s not copied: %.200s.\n", rep,
					jx_text(v, "skipped"));
		}
	}
}

void bi_sum_devlink(FILE *f, struct json_object *m)
{
	struct json_object *dl = jx_obj(m, MK_DEVLINK), *ports = jx_obj(m, MK_PORTS);
	struct json_object *fports = jx_obj(jx_obj(m, MK_FACTS), FK_PORTS);
	int n = 0;

	fputs("\n## Devlink health\n\n", f);
	if (dl) {
		json_object_object_foreach(dl, port, d) {
			if (n++ < 16)
				sum_port(f, port, d, jx_obj(fports, port));
		}
	}
	if (ports) {
		json_object_object_foreach(ports, port, v) {
			(void)v;
			if (jx_get(dl, port) || n++ >= 16)
				continue;
			fprintf(f, "- Port %.64s: no devlink health recorded.\n", port);
		}
	}
	if (!n)
		fputs("Not recorded.\n", f);
}
