/* report html: the page (see report.h): one self-contained document, no
 * script, font or request (the Content-Security-Policy says so too), a
 * stylesheet that prints (no navigation, links written out, nothing cut
 * across pages) and never needs colour to be read. The sections are
 * report_sections.c's, the charts report_svg.c's, the escaping and the
 * numbers every output shares report_fmt.c's. */
#include "bundle/bundle.h"
#include "bundle/report.h"
#include "bundle/report_int.h"
#include "lib/json.h"
#include "lib/util.h"
#include "rules/facts.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

/* ---- the page ---- */

static const char css[] =
"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
"color:#1b1b1b;background:#fff;margin:0 auto;max-width:1000px;padding:0 16px 40px}\n"
"h1{font-size:1.6em;margin:.8em 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .4em;"
"border-bottom:1px solid #bbb}h3{font-size:1.05em;margin:1.2em 0 .3em}\n"
".verdict{font-weight:700}.meta{color:#444;margin:.2em 0}.is{font-size:1.08em;"
"border-left:4px solid #1f5fa8;padding:.3em .7em;background:#f3f6fa}\n"
"table{border-collapse:collapse;margin:.4em 0;font-size:.92em}th,td{border:1px solid #bbb;"
"padding:3px 6px;text-align:left;vertical-align:top}th{background:#eee}\n"
"td.n{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:"
"'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}"
"td.w{overflow-wrap:normal;white-space:nowrap}\n"
"figure{margin:.6em 0}figcaption{font-size:.9em;color:#333}svg{max-width:100%;height:auto}\n"
"svg text{font:11px 'DejaVu Sans',sans-serif;fill:#222}svg .ax{stroke:#666;stroke-width:1}"
"svg .grid{stroke:#ddd;stroke-width:1}\n"
"svg .port{stroke:#1f5fa8;stroke-width:2;fill:none}svg .vport{stroke:#c2491d;stroke-width:2;"
"fill:none;stroke-dasharray:6 3}\n"
"svg .d3{stroke:#6a3d9a;stroke-width:1.5;fill:none;stroke-dasharray:2 2}svg .d4{stroke:#2e7d32;"
"stroke-width:1.5;fill:none;stroke-dasharray:8 2 2 2}svg .d5{stroke:#b00020;stroke-width:1.5;"
"fill:none;stroke-dasharray:10 4}\n"
"svg .gapl{stroke:#444;stroke-width:1.5;fill:none}svg .healthy{stroke:#2e7d32;stroke-width:1.5;"
"stroke-dasharray:5 4}svg .lane{fill:#f4f4f4}\n"
"svg .act{fill:#7a7a7a;stroke:#222;stroke-width:.5}svg .act.mine{fill:#222}"
"svg .rel{stroke:#2e7d32;stroke-width:2}svg .relm{fill:#2e7d32}svg .run{fill:#1565c0}\n"
"svg .wait{stroke:#8a1c1c;stroke-width:1}svg .spark{stroke:#1f5fa8;"
"stroke-width:1;fill:none}\n"
".note{color:#5a3b00;background:#fff6e0;padding:.3em .6em;border:1px solid #e0c070}\n"
".legend span{margin-right:1.2em;white-space:nowrap}.sw{display:inline-block;width:28px;"
"height:0;vertical-align:middle;margin-right:4px;border-top:2px solid #1f5fa8}\n"
".sw.v{border-top:2px dashed #c2491d}.sw.h{border-top:2px dashed #2e7d32}.sw.s{height:10px;"
"border:1px solid #8a1c1c;background:repeating-linear-gradient(45deg,#f2c4c4 0 3px,#fff 3px 6px)}\n"
"nav ul{columns:2;margin:.3em 0}.names{font-size:.85em;color:#333}\n"
"@media print{body{max-width:none;font-size:11pt;padding:0}nav{display:none}"
"h2{break-after:avoid}figure,table,tr{break-inside:avoid}a{color:#000}"
"a[href]::after{content:\" (\" attr(href) \")\";font-size:.85em}"
".is{background:none}details{display:block}}\n";

static void time_text(const struct report *r, char *buf, size_t len)
{
	double ns;
	time_t sec;
	struct tm tm;

	if (jx_num(jx_get(r->man, "opened_real_ns"), &ns) && ns > 0 && ns < 1e20) {
		sec = (time_t)(ns / 1e9);
		if (gmtime_r(&sec, &tm) && strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
			return;
	}
	snprintf(buf, len, "time not recorded");
}

static const char *verdict_of(const struct report *r)
{
	struct json_object *v = jx_get(r->man, "verdict");

	if (jx_str(v, "verdict"))
		return jx_str(v, "verdict");
	if (v && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "no verdict";
}

static void header(struct ctx *c)
{
	FILE *f = c->f;
	const struct report *r = c->r;
	struct json_object *cls = jx_obj(r->man, "verdict");
	const char *port = jx_str(r->man, "port");
	char when[64];

	time_text(r, when, sizeof(when));
	fputs("<header><h1><span class=\"verdict\" id=\"verdict\">", f);
	rp_esc(f, verdict_of(r));
	fputs("</span> on port <span id=\"port\">", f);
	rp_esc(f, port ? port : "(not recorded)");
	fprintf(f, "</span></h1>\n<p class=\"meta\"><time id=\"time\">%s</time>", when);
	if (jx_str(r->man, "host")) {
		fputs(" &middot; host ", f);
		rp_esc(f, jx_str(r->man, "host"));
	}
	if (jx_u64(r->man, "incident_id"))
		fprintf(f, " &middot; incident %" PRIu64, jx_u64(r->man, "incident_id"));
	if (jx_str(r->man, "trigger")) {
		fputs(" &middot; trigger ", f);
		rp_esc(f, jx_str(r->man, "trigger"));
	}
	if (c->o->bundle_name) {
		fputs(" &middot; bundle <code>", f);
		rp_esc(f, c->o->bundle_name);
		fputs("</code>", f);
	}
	fputs("</p>\n<p class=\"is\" id=\"what-it-is\"><strong>What it is:</strong> ", f);
	if (!cls)
		fputs("No classification in this bundle: the verdict is missing.", f);
	else
		rp_esc_n(f, jx_str(cls, "explanation") ? jx_str(cls, "explanation") :
		      "(the rule gave no explanation)", 1000);
	fputs("</p>\n", f);
	if (jx_str(cls, "action")) {
		fputs("<p><strong>Recommended action:</strong> ", f);
		rp_esc_n(f, jx_str(cls, "action"), 1000);
		fputs("</p>\n", f);
	}
	fputs("<p id=\"release\">", f);
	if (c->s.released) {
		fputs("<strong>Released</strong> by ", f);
		rp_esc(f, c->s.release_action ? c->s.release_action : "an unnamed action");
		if (jx_str(jx_obj(r->man, "release"), "port")) {
			fputs(" on ", f);
			rp_esc_n(f, jx_str(jx_obj(r->man, "release"), "port"), 64);
		}
		if (c->s.has_release_t)
			fprintf(f, " at %+.1f ms", c->s.release_t);
		else
			fputs(", time not recorded", f);
		if (c->s.has_after)
			fprintf(f, ", %.1f ms after the action", c->s.after_ms);
		if (bundle_release_why(r->man)) {
			fputs(" (", f);
			rp_esc(f, bundle_release_why(r->man));
			fputc(')', f);
		}
		fputc('.', f);
	} else if (jx_obj(r->man, "release") || jx_obj(jx_obj(r->man, "facts"), FK_RELEASE)) {
		fputs("<strong>Not released</strong> by any action of the investigation.", f);
	} else {
		fputs("Release: not recorded.", f);
	}
	fputs("</p>\n", f);
	if (c->o->verify_note && *c->o->verify_note) {
		fputs("<p class=\"meta\">Verification: ", f);
		rp_esc(f, c->o->verify_note);
		fputs("</p>\n", f);
	}
	if (r->manifest_note[0]) {
		fputs("<p class=\"note\">", f);
		rp_esc(f, r->manifest_note);
		fputs("</p>\n", f);
	}
	if (r->nnotes) {
		fputs("<p class=\"note\">Not in this bundle or unreadable, so not drawn: ", f);
		for (size_t i = 0; i < r->nnotes; i++) {
			if (i)
				fputs("; ", f);
			rp_esc(f, r->notes[i]);
		}
		fputs(".</p>\n", f);
	}
	fputs("</header>\n", f);
}

static void nav(FILE *f)
{
	fputs("<nav aria-label=\"contents\"><ul><li><a href=\"#timeline\">Timeline</a></li>"
	      "<li><a href=\"#gap\">The gap</a></li><li><a href=\"#flows\">Flows</a></li>"
	      "<li><a href=\"#threads\">Threads</a></li><li><a href=\"#not\">What it is not</a></li>"
	      "<li><a href=\"#counters\">Counters</a></li><li><a href=\"#evidence\">Evidence</a>"
	      "</li></ul></nav>\n", f);
}

int report_html(const struct report *r, const struct report_opts *o, FILE *f)
{
	struct ctx *c;
	char when[64];

	if (!r || !f)
		return -1;
	c = rp_ctx_new(r, o, f);
	if (!c)
		return -1;
	time_text(r, when, sizeof(when));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"nicstalld " NICSTALL_VERSION "\">\n<title>", f);
	rp_esc(f, verdict_of(r));
	fputs(" on port ", f);
	rp_esc(f, jx_str(r->man, "port") ? jx_str(r->man, "port") : "(not recorded)");
	fprintf(f, ", %s &ndash; nicstalld report</title>\n<style>\n%s</style></head>\n<body>\n", when, css);
	header(c);
	nav(f);
	fputs("<main>\n", f);
	rp_sections(c);
	fputs("</main>\n<footer><p class=\"meta\">Written by nicstalld " NICSTALL_VERSION
	      " from the bundle's files (nicstall-bundle(5)); regenerate with <code>nicstallctl "
	      "report</code>.</p></footer>\n</body></html>\n", f);
	rp_ctx_free(c);
	return ferror(f) ? -1 : 0;
}

char *report_html_string(const struct report *r, const struct report_opts *o, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int rc;

	if (!f)
		return NULL;
	rc = report_html(r, o, f);
	if (fclose(f) != 0 || rc < 0) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}
